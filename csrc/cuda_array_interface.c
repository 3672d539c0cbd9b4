/* cuda_array_interface.c: device arrays as the CUDA array interface
 * describes them (a pointer, a shape, strides in bytes), read in place:
 * the __cuda_array_interface__ dict (CuPy, Numba, PyTorch), and a
 * torch.Tensor itself from its attributes, as its interface would give
 * them; and the layout check of every device input (DLPack's too). */
#include "extension.h"

#define CAI "__cuda_array_interface__"

/* --- ints, and a device array's layout ----------------------------------- */

/* A Python int as int64_t; TypeError if not an int. */
static int
int64_item(PyObject *item, const char *what, int64_t *value)
{
    if (!PyLong_Check(item) || PyBool_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must be ints, not %.100s", what,
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "%s entry %R does not fit in 64 "
                     "bits", what, item);
        return -1;
    }
    *value = (int64_t)v;
    return 0;
}

/* A tuple of ints into values[CR_MAX_DIMS]; returns its length or -1. */
static int
int64_tuple(PyObject *tuple, const char *what, int64_t *values)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of ints, not "
                     "%.100s", what, Py_TYPE(tuple)->tp_name);
        return -1;
    }
    Py_ssize_t ndim = PyTuple_GET_SIZE(tuple);
    if (ndim > CR_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s has %zd dimensions; at most %d",
                     what, ndim, CR_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t d = 0; d < ndim; d++) {
        if (int64_item(PyTuple_GET_ITEM(tuple, d), what, &values[d]) < 0) {
            return -1;
        }
    }
    return (int)ndim;
}

int
crpy_plan_device_layout(crpy_input *input, int ndim, const int64_t *shape,
                        const int64_t *strides, const char *source)
{
    if (crpy_input_layout(input, ndim, shape, strides,
                          input->dtype->itemsize, source) < 0) {
        return -1;
    }
    if (input->layout.n > 0) {
        if (input->data == NULL) {
            PyErr_Format(PyExc_ValueError, "%s: null data pointer for %lld "
                         "elements", source, (long long)input->layout.n);
            return -1;
        }
        if ((uintptr_t)input->data % (uintptr_t)input->dtype->itemsize) {
            PyErr_Format(PyExc_ValueError, "%s: data pointer %p is not "
                         "aligned to the %d-byte item size", source,
                         input->data, input->dtype->itemsize);
            return -1;
        }
    }
    return 0;
}

/* --- __cuda_array_interface__ -------------------------------------------- */

/* d[key], required; KeyError-free: a missing key is a ValueError. */
static PyObject *
required_key(PyObject *dict, PyObject *key)
{
    PyObject *value = PyDict_GetItem(dict, key);    /* borrowed */
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, CAI " has no '%U' key", key);
    }
    return value;
}

/* The row of a typestr as NumPy's dtype.str writes it, which is what
 * producers send ("<f4", "|b1"): a byte order NumPy reads as native (any
 * for one byte), a kind and the item size without leading zeros; NULL for
 * any other spelling, which NumPy then reads.  A row found here is the
 * one NumPy's reading gives (tests/test_inputs_offline.py compares them),
 * without its cost: PyArray_DescrConverter and the row's lookup took 520
 * instructions of every CuPy array's call (callgrind). */
static const crpy_dtype *
canonical_typestr(PyObject *typestr)
{
    Py_ssize_t length = 0;
    const char *s = PyUnicode_AsUTF8AndSize(typestr, &length);
    Py_ssize_t itemsize = 0;
    if (s == NULL) {
        PyErr_Clear();      /* NumPy's reading says what is wrong */
        return NULL;
    }
    if (length < 3 || length > 4 || s[2] == '0'
        || (s[0] != '<' && s[0] != '>' && s[0] != '|' && s[0] != '=')) {
        return NULL;
    }
    for (Py_ssize_t k = 2; k < length; k++) {
        if (s[k] < '0' || s[k] > '9') {
            return NULL;
        }
        itemsize = 10 * itemsize + (s[k] - '0');
    }
    if (itemsize > 1 && s[0] == NPY_OPPBYTE) {
        return NULL;        /* refused by NumPy's reading, below */
    }
    return crpy_dtype_of_kind(s[1], itemsize);
}

static int
parse_cai_dtype(PyObject *typestr, crpy_input *input)
{
    PyArray_Descr *descr = NULL;
    if (!PyUnicode_Check(typestr)) {
        PyErr_Format(PyExc_TypeError, CAI " typestr must be a str, not "
                     "%.100s", Py_TYPE(typestr)->tp_name);
        return -1;
    }
    if ((input->dtype = canonical_typestr(typestr)) != NULL) {
        return 0;
    }
    if (!PyArray_DescrConverter(typestr, &descr)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, CAI " typestr %R is not a dtype",
                     typestr);
        return -1;
    }
    if (PyDataType_ELSIZE(descr) > 1 && !PyArray_ISNBO(descr->byteorder)) {
        PyErr_Format(PyExc_TypeError, CAI " typestr %R: non-native byte "
                     "order is not supported", typestr);
        Py_DECREF(descr);
        return -1;
    }
    input->dtype = crpy_lookup_dtype(descr);
    Py_DECREF(descr);
    return input->dtype == NULL ? -1 : 0;
}

static int
parse_cai_data(PyObject *data, crpy_input *input)
{
    if (!PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2
        || !PyLong_Check(PyTuple_GET_ITEM(data, 0))
        || !PyBool_Check(PyTuple_GET_ITEM(data, 1))) {
        PyErr_SetString(PyExc_TypeError, CAI " data must be a tuple "
                        "(pointer: int, read_only: bool)");
        return -1;
    }
    unsigned long long pointer =
        PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (pointer == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, CAI " data pointer %R is not a "
                     "pointer", PyTuple_GET_ITEM(data, 0));
        return -1;
    }
    input->data = (const void *)(uintptr_t)pointer;
    input->read_only = PyTuple_GET_ITEM(data, 1) == Py_True;
    return 0;
}

/* "stream": None (no synchronization needed), 1 (legacy default stream),
 * 2 (per-thread default stream) or a cudaStream_t; 0 is forbidden by the
 * interface as ambiguous. */
static int
parse_cai_stream(PyObject *stream, crpy_input *input)
{
    int64_t handle;
    if (stream == NULL || stream == Py_None) {
        return 0;
    }
    if (int64_item(stream, CAI " stream", &handle) < 0) {
        return -1;
    }
    if (handle <= 0) {
        PyErr_Format(PyExc_ValueError, CAI " stream must be None or a "
                     "positive int (0 is disallowed by the interface), "
                     "got %lld", (long long)handle);
        return -1;
    }
    input->has_producer_stream = 1;
    input->producer_stream = (uintptr_t)handle;
    return 0;
}

int
crpy_acquire_cai(PyObject *obj, PyObject *interface, crpy_input *input)
{
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
    int64_t version;
    PyObject *value;
    int ndim;
    const crpy_names *names = input->names;

    if (!PyDict_Check(interface)) {
        PyErr_Format(PyExc_TypeError, CAI " must be a dict, not %.100s",
                     Py_TYPE(interface)->tp_name);
        return -1;
    }
    if ((value = required_key(interface, names->version)) == NULL
        || int64_item(value, CAI " version", &version) < 0) {
        return -1;
    }
    if (version < 0 || version > 3) {
        PyErr_Format(PyExc_ValueError, CAI " version %lld is not supported "
                     "(cudareduce reads versions 0 to 3)", (long long)version);
        return -1;
    }
    if ((value = required_key(interface, names->typestr)) == NULL
        || parse_cai_dtype(value, input) < 0) {
        return -1;
    }
    if ((value = required_key(interface, names->shape)) == NULL
        || (ndim = int64_tuple(value, CAI " shape", shape)) < 0) {
        return -1;
    }
    if ((value = required_key(interface, names->data)) == NULL
        || parse_cai_data(value, input) < 0) {
        return -1;
    }
    value = PyDict_GetItem(interface, names->mask);
    if (value != NULL && value != Py_None) {
        PyErr_SetString(PyExc_ValueError, CAI " mask: masked arrays are "
                        "not supported");
        return -1;
    }
    if (parse_cai_stream(PyDict_GetItem(interface, names->stream),
                         input) < 0) {
        return -1;
    }
    value = PyDict_GetItem(interface, names->strides);
    if (value != NULL && value != Py_None) {
        int count = int64_tuple(value, CAI " strides", strides);
        if (count < 0) {
            return -1;
        }
        if (count != ndim) {
            PyErr_Format(PyExc_ValueError, CAI " strides has %d entries "
                         "for %d dimensions", count, ndim);
            return -1;
        }
    }
    else {
        value = NULL;
    }
    input->location = CR_DEVICE;
    if (crpy_plan_device_layout(input, ndim, shape, value ? strides : NULL,
                                CAI) < 0) {
        return -1;
    }
    input->owner = Py_NewRef(obj);
    return 0;
}

/* --- a torch.Tensor read directly ---------------------------------------- */

/* Whether `type` is torch.Tensor.  0 or 1. */
static int
is_torch_tensor_type(PyTypeObject *type, const crpy_names *names)
{
    if (strcmp(type->tp_name, "Tensor") != 0) {
        return 0;
    }
    PyObject *module = PyObject_GetAttr((PyObject *)type, names->module);
    int torch = module != NULL && PyUnicode_Check(module)
                && PyUnicode_CompareWithASCIIString(module, "torch") == 0;
    Py_XDECREF(module);
    PyErr_Clear();
    return torch;
}

/* Whether `obj` is a torch.Tensor itself (a subclass may override
 * __torch_function__, and takes the interface's path).  0 or 1. */
static int
is_torch_tensor(PyObject *obj, const crpy_names *names)
{
    return is_torch_tensor_type(Py_TYPE(obj), names);
}

int
crpy_is_torch_instance(PyObject *obj, const crpy_names *names)
{
    PyObject *mro = Py_TYPE(obj)->tp_mro;
    for (Py_ssize_t k = 0; mro != NULL && k < PyTuple_GET_SIZE(mro); k++) {
        if (is_torch_tensor_type((PyTypeObject *)PyTuple_GET_ITEM(mro, k),
                                 names)) {
            return 1;
        }
    }
    return 0;
}

/* The truth of obj.name, or of obj.name() with `call`: 0 or 1, or -1 with
 * an exception. */
static int
truth_of(PyObject *obj, PyObject *name, int call)
{
    PyObject *value = call ? PyObject_CallMethodNoArgs(obj, name)
                           : PyObject_GetAttr(obj, name);
    int truth = value != NULL ? PyObject_IsTrue(value) : -1;
    Py_XDECREF(value);
    return truth;
}

/* The truth of obj.name(), 0 where obj has no such method (PyTorch
 * before the conjugate and negative bits), or -1 with an exception. */
static int
optional_truth_of(PyObject *obj, PyObject *name)
{
    PyObject *method = PyObject_GetAttr(obj, name);
    if (method == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    PyObject *value = PyObject_CallNoArgs(method);
    int truth = value != NULL ? PyObject_IsTrue(value) : -1;
    Py_XDECREF(value);
    Py_DECREF(method);
    return truth;
}

/* str(obj.name) equals `expected` ("torch.strided"), or with `prefix` set
 * starts with it and *rest is what follows: 0 or 1, or -1 with an
 * exception.  `text` keeps *rest alive (release it). */
static int
str_of(PyObject *obj, PyObject *name, const char *expected, int prefix,
       PyObject **text, const char **rest)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    *text = value != NULL ? PyObject_Str(value) : NULL;
    Py_XDECREF(value);
    const char *s = *text != NULL ? PyUnicode_AsUTF8(*text) : NULL;
    if (s == NULL) {
        return -1;
    }
    size_t length = strlen(expected);
    if (prefix) {
        *rest = s + length;
        return strncmp(s, expected, length) == 0;
    }
    return strcmp(s, expected) == 0;
}

/* The stream a CUDA torch.Tensor is ready on: PyTorch's current stream
 * of its device, where PyTorch's own operations would read it (none where
 * PyTorch is not imported: an object that only looks like a tensor).  0,
 * or -1 with an exception. */
static int
acquire_tensor_stream(PyObject *tensor, crpy_input *input)
{
    PyObject *value = PyObject_CallMethodNoArgs(tensor,
                                                input->names->get_device);
    long device = value == NULL ? -1 : PyLong_AsLong(value);
    Py_XDECREF(value);
    if (device < 0 || device > INT_MAX) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "torch.Tensor.get_device() "
                         "gave %ld for a CUDA tensor", device);
        }
        return -1;
    }
    const int found = crpy_torch_stream(input->names, (int)device,
                                        &input->producer_stream);
    input->has_producer_stream = input->torch_stream = found == 1;
    return found < 0 ? -1 : 0;
}

int
crpy_acquire_torch_tensor(PyObject *obj, crpy_input *input)
{
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
    PyObject *text = NULL, *value = NULL, *resolved = NULL;
    const char *dtype_name = NULL;
    const crpy_names *names = input->names;
    int ndim = 0, contiguous = 0, empty = 0, found, conj, neg;

    if (!is_torch_tensor(obj, names)) {
        return 0;
    }
    if ((found = truth_of(obj, names->is_cuda, 0)) != 1) {
        return found;
    }
    if ((found = truth_of(obj, names->requires_grad, 0)) != 0) {
        return found < 0 ? -1 : 0;
    }
    /* x.conj() and x.conj().imag are lazy views: a bit says to conjugate
     * or negate the values, which their memory holds as they were before.
     * Such a tensor is resolved (copied) first, as torch.sum reads it. */
    if ((conj = optional_truth_of(obj, names->is_conj)) < 0
        || (neg = optional_truth_of(obj, names->is_neg)) < 0) {
        return -1;
    }
    if (conj || neg) {
        PyObject *unconj = PyObject_CallMethod(obj, "resolve_conj", NULL);
        resolved = unconj == NULL ? NULL : PyObject_CallMethod(
                                               unconj, "resolve_neg", NULL);
        Py_XDECREF(unconj);
        if (resolved == NULL) {
            return -1;
        }
        obj = resolved;
    }
    if ((found = str_of(obj, names->layout, "torch.strided", 0, &text,
                        &dtype_name)) != 1) {
        goto done;
    }
    Py_CLEAR(text);
    if ((found = str_of(obj, names->dtype, "torch.", 1, &text,
                        &dtype_name)) != 1) {
        goto done;
    }
    if ((input->dtype = crpy_dtype_named(dtype_name)) == NULL) {
        found = 0;
        goto done;
    }
    found = -1;
    if ((value = PyObject_GetAttr(obj, names->shape)) == NULL
        || (ndim = int64_tuple(value, "torch.Tensor shape", shape)) < 0
        || (contiguous = truth_of(obj, names->is_contiguous, 1)) < 0) {
        goto done;
    }
    Py_CLEAR(value);
    if (!contiguous) {
        int count = -1;
        if ((value = PyObject_CallMethodNoArgs(obj, names->stride)) == NULL
            || (count = int64_tuple(value, "torch.Tensor strides",
                                    strides)) < 0) {
            goto done;
        }
        Py_CLEAR(value);
        if (count != ndim) {
            PyErr_SetString(PyExc_ValueError, "torch.Tensor: stride() "
                            "does not match its shape");
            goto done;
        }
        for (int d = 0; d < ndim; d++) {
            strides[d] *= input->dtype->itemsize;
        }
    }
    for (int d = 0; d < ndim; d++) {
        empty |= shape[d] == 0;
    }
    if (!empty) {
        if ((value = PyObject_CallMethodNoArgs(obj, names->data_ptr))
            == NULL) {
            goto done;
        }
        input->data = (const void *)(uintptr_t)PyLong_AsUnsignedLongLong(
            value);
        if (PyErr_Occurred()) {
            goto done;
        }
        Py_CLEAR(value);
    }
    input->location = CR_DEVICE;
    if (crpy_plan_device_layout(input, ndim, shape,
                                contiguous ? NULL : strides,
                                "torch.Tensor") < 0
        || acquire_tensor_stream(obj, input) < 0) {
        goto done;
    }
    input->owner = Py_NewRef(obj);
    found = 1;
done:
    Py_XDECREF(value);
    Py_XDECREF(text);
    Py_XDECREF(resolved);
    if (found != 1) {
        input->dtype = NULL;
    }
    return found;
}
