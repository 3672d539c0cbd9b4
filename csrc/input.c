/* input.c: any array-like -> (pointer, layout, dtype) for cr_reduce.
 *
 * Protocols, in the order they are tried:
 *   1. a numpy.ndarray: host memory, never a GPU protocol;
 *   2. __cuda_array_interface__ (CuPy, Numba, PyTorch CUDA tensors):
 *      device memory, read in place; a torch.Tensor itself first, from its
 *      attributes, as PyTorch's interface would give them; an interface
 *      that names no stream of an object that speaks DLPack too (JAX's)
 *      goes to 3, which waits for the producer's work;
 *   3. __dlpack__ / __dlpack_device__ (JAX, PyTorch, ...): kDLCUDA read in
 *      place, kDLCPU through numpy.from_dlpack as host memory;
 *   4. anything else through numpy.asarray, as host memory.
 * Every check of a malformed interface happens here, before any CUDA call.
 */
#include "extension.h"


/* --- DLPack (https://dmlc.github.io/dlpack), the ABI-stable subset -------- */

enum {
    DL_CPU = 1,
    DL_CUDA = 2,
    DL_CUDA_MANAGED = 13,
};

/* dl_managed_tensor_versioned's flags: the data must not be written. */
#define DL_FLAG_READ_ONLY ((uint64_t)1 << 0)

enum {
    DL_INT = 0,
    DL_UINT = 1,
    DL_FLOAT = 2,
    DL_BFLOAT = 4,
    DL_COMPLEX = 5,
    DL_BOOL = 6,
};

typedef struct {
    int32_t device_type;
    int32_t device_id;
} dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} dl_data_type;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_data_type dtype;
    int64_t *shape;
    int64_t *strides;       /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed_tensor {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor *self);
} dl_managed_tensor;

typedef struct dl_managed_tensor_versioned {
    struct {
        uint32_t major;
        uint32_t minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor_versioned *self);
    uint64_t flags;
    dl_tensor dl_tensor;
} dl_managed_tensor_versioned;

/* --- helpers --------------------------------------------------------------- */

/* obj.name, or NULL without an exception when obj has no such attribute. */
static PyObject *
optional_attribute(PyObject *obj, const char *name)
{
    PyObject *value = PyObject_GetAttrString(obj, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
    }
    return value;
}

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

/* The layout of a device array, its size, and the alignment every kernel
 * load relies on (a misaligned load faults and poisons the context). */
static int
plan_device_layout(crpy_input *input, int ndim, const int64_t *shape,
                   const int64_t *strides, const char *source)
{
    const char *refused = crpy_plan_layout(
        ndim, shape, strides, (size_t)input->dtype->itemsize,
        input->c_order, &input->layout);
    if (refused != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: %s", source, refused);
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

/* --- 1 and 4: host arrays ------------------------------------------------ */

/* The layout of a host array as it is (aligned, so its strides are
 * multiples of the item size); 0, or -1 with ValueError. */
static int
plan_host_layout(PyArrayObject *array, crpy_input *input)
{
    int64_t shape[NPY_MAXDIMS];
    int64_t strides[NPY_MAXDIMS];
    const int ndim = PyArray_NDIM(array);
    for (int d = 0; d < ndim; d++) {
        shape[d] = (int64_t)PyArray_DIM(array, d);
        strides[d] = (int64_t)PyArray_STRIDE(array, d);
    }
    const char *refused = crpy_plan_layout(
        ndim, shape, strides, (size_t)PyArray_ITEMSIZE(array),
        input->c_order, &input->layout);
    if (refused != NULL) {
        PyErr_Format(PyExc_ValueError, "array: %s", refused);
        return -1;
    }
    return 0;
}

/* Whether obj is a numpy.ma.MaskedArray, whose data under the mask must
 * not count (cudareduce's Python functions reduce its filled data).  Only
 * ndarray subclasses are looked at, so plain arrays cost no import. */
static int
is_masked_array(PyObject *obj)
{
    if (!PyArray_Check(obj) || PyArray_CheckExact(obj)) {
        return 0;
    }
    PyObject *ma = PyImport_ImportModule("numpy.ma");
    PyObject *masked_type = ma ? PyObject_GetAttrString(ma, "MaskedArray")
                               : NULL;
    Py_XDECREF(ma);
    if (masked_type == NULL) {
        return -1;
    }
    int found = PyObject_IsInstance(obj, masked_type);
    Py_DECREF(masked_type);
    return found;
}

static int
acquire_host(PyObject *obj, crpy_input *input)
{
    int masked = is_masked_array(obj);
    if (masked != 0) {
        if (masked > 0) {
            PyErr_SetString(PyExc_TypeError, "a numpy.ma.MaskedArray reaches "
                            "the extension only through cudareduce.sum, "
                            "mean, min and max, which honour its mask");
        }
        return -1;
    }
    PyArrayObject *given = (PyArrayObject *)PyArray_FromAny(
        obj, NULL, 0, 0, 0, NULL);
    if (given == NULL) {
        return -1;
    }
    input->dtype = crpy_lookup_dtype(PyArray_DESCR(given));
    if (input->dtype == NULL) {
        goto error;
    }
    if (PyArray_SIZE(given) > CR_MAX_ELEMENTS) {
        /* A broadcast view can be that big; a copy of it cannot. */
        PyErr_Format(PyExc_ValueError, "the array has %zd elements; "
                     "cudareduce reduces at most 2^62",
                     (Py_ssize_t)PyArray_SIZE(given));
        goto error;
    }
    /* Native byte order and aligned: read in place, whatever the strides
     * (the host ring gathers strided data chunk by chunk, so a view is
     * never copied whole first); else a converted copy. */
    PyArray_Descr *native = crpy_descr(input->dtype);
    /* FromAny steals the dtype's reference. */
    input->owner = native == NULL
        ? NULL : PyArray_FromAny((PyObject *)given, native, 0, 0,
                                 NPY_ARRAY_ALIGNED, NULL);
    if (input->owner == NULL
        || plan_host_layout((PyArrayObject *)input->owner, input) < 0) {
        goto error;
    }
    Py_DECREF(given);
    input->ndim = PyArray_NDIM((PyArrayObject *)input->owner);
    input->location = CR_HOST;
    input->data = PyArray_DATA((PyArrayObject *)input->owner);
    return 0;

error:
    Py_CLEAR(input->owner);
    Py_DECREF(given);
    return -1;
}

/* --- 2: __cuda_array_interface__ ------------------------------------------ */

#define CAI "__cuda_array_interface__"

/* d[key], required; KeyError-free: a missing key is a ValueError. */
static PyObject *
required_key(PyObject *dict, const char *key)
{
    PyObject *value = PyDict_GetItemString(dict, key);    /* borrowed */
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, CAI " has no '%s' key", key);
    }
    return value;
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

static int
acquire_cai(PyObject *obj, PyObject *interface, crpy_input *input)
{
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
    int64_t version;
    PyObject *value;
    int ndim;

    if (!PyDict_Check(interface)) {
        PyErr_Format(PyExc_TypeError, CAI " must be a dict, not %.100s",
                     Py_TYPE(interface)->tp_name);
        return -1;
    }
    if ((value = required_key(interface, "version")) == NULL
        || int64_item(value, CAI " version", &version) < 0) {
        return -1;
    }
    if (version < 0 || version > 3) {
        PyErr_Format(PyExc_ValueError, CAI " version %lld is not supported "
                     "(cudareduce reads versions 0 to 3)", (long long)version);
        return -1;
    }
    if ((value = required_key(interface, "typestr")) == NULL
        || parse_cai_dtype(value, input) < 0) {
        return -1;
    }
    if ((value = required_key(interface, "shape")) == NULL
        || (ndim = int64_tuple(value, CAI " shape", shape)) < 0) {
        return -1;
    }
    if ((value = required_key(interface, "data")) == NULL
        || parse_cai_data(value, input) < 0) {
        return -1;
    }
    value = PyDict_GetItemString(interface, "mask");
    if (value != NULL && value != Py_None) {
        PyErr_SetString(PyExc_ValueError, CAI " mask: masked arrays are "
                        "not supported");
        return -1;
    }
    if (parse_cai_stream(PyDict_GetItemString(interface, "stream"),
                         input) < 0) {
        return -1;
    }
    value = PyDict_GetItemString(interface, "strides");
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
    input->ndim = ndim;
    if (plan_device_layout(input, ndim, shape, value ? strides : NULL,
                           CAI) < 0) {
        return -1;
    }
    input->owner = Py_NewRef(obj);
    return 0;
}

/* --- 2, first: a torch.Tensor read directly ------------------------------ */

/* Whether `type` is torch.Tensor.  0 or 1. */
static int
is_torch_tensor_type(PyTypeObject *type)
{
    if (strcmp(type->tp_name, "Tensor") != 0) {
        return 0;
    }
    PyObject *module = PyObject_GetAttrString((PyObject *)type, "__module__");
    int torch = module != NULL && PyUnicode_Check(module)
                && PyUnicode_CompareWithASCIIString(module, "torch") == 0;
    Py_XDECREF(module);
    PyErr_Clear();
    return torch;
}

/* Whether `obj` is a torch.Tensor itself (a subclass may override
 * __torch_function__, and takes the interface's path).  0 or 1. */
static int
is_torch_tensor(PyObject *obj)
{
    return is_torch_tensor_type(Py_TYPE(obj));
}

/* Whether `obj` is a torch.Tensor or an instance of a subclass.  0 or 1. */
static int
is_torch_instance(PyObject *obj)
{
    PyObject *mro = Py_TYPE(obj)->tp_mro;
    for (Py_ssize_t k = 0; mro != NULL && k < PyTuple_GET_SIZE(mro); k++) {
        if (is_torch_tensor_type((PyTypeObject *)PyTuple_GET_ITEM(mro, k))) {
            return 1;
        }
    }
    return 0;
}

/* The truth of obj.name, or of obj.name() with `call`: 0 or 1, or -1 with
 * an exception. */
static int
truth_of(PyObject *obj, const char *name, int call)
{
    PyObject *value = call ? PyObject_CallMethod(obj, name, NULL)
                           : PyObject_GetAttrString(obj, name);
    int truth = value != NULL ? PyObject_IsTrue(value) : -1;
    Py_XDECREF(value);
    return truth;
}

/* The truth of obj.name(), 0 where obj has no such method (PyTorch
 * before the conjugate and negative bits), or -1 with an exception. */
static int
optional_truth_of(PyObject *obj, const char *name)
{
    PyObject *method = PyObject_GetAttrString(obj, name);
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
str_of(PyObject *obj, const char *name, const char *expected, int prefix,
       PyObject **text, const char **rest)
{
    PyObject *value = PyObject_GetAttrString(obj, name);
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
    PyObject *value = PyObject_CallMethod(tensor, "get_device", NULL);
    long device = value == NULL ? -1 : PyLong_AsLong(value);
    Py_XDECREF(value);
    if (device < 0 || device > INT_MAX) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "torch.Tensor.get_device() "
                         "gave %ld for a CUDA tensor", device);
        }
        return -1;
    }
    const int found = crpy_torch_stream((int)device, &input->producer_stream);
    input->has_producer_stream = input->torch_stream = found == 1;
    return found < 0 ? -1 : 0;
}

/* A CUDA torch.Tensor as its __cuda_array_interface__ would give it, and
 * ready on PyTorch's current stream of its device, which that interface
 * (torch/_tensor.py: version 2) does not name; strides only when it is not
 * contiguous; pointer 0 when empty), without building that dict, which
 * PyTorch builds in Python, the slower way.  1 when
 * read; 0 when `obj` takes the interface's path, which raises what
 * PyTorch raises (not a plain torch.Tensor, not on a CUDA device,
 * requiring grad, not strided, a dtype the kernels do not take); -1 with
 * an exception. */
static int
acquire_torch_tensor(PyObject *obj, crpy_input *input)
{
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
    PyObject *text = NULL, *value = NULL, *resolved = NULL;
    const char *dtype_name = NULL;
    int ndim = 0, contiguous = 0, empty = 0, found, conj, neg;

    if (!is_torch_tensor(obj)) {
        return 0;
    }
    if ((found = truth_of(obj, "is_cuda", 0)) != 1) {
        return found;
    }
    if ((found = truth_of(obj, "requires_grad", 0)) != 0) {
        return found < 0 ? -1 : 0;
    }
    /* x.conj() and x.conj().imag are lazy views: a bit says to conjugate
     * or negate the values, which their memory holds as they were before.
     * Such a tensor is resolved (copied) first, as torch.sum reads it. */
    if ((conj = optional_truth_of(obj, "is_conj")) < 0
        || (neg = optional_truth_of(obj, "is_neg")) < 0) {
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
    if ((found = str_of(obj, "layout", "torch.strided", 0, &text,
                        &dtype_name)) != 1) {
        goto done;
    }
    Py_CLEAR(text);
    if ((found = str_of(obj, "dtype", "torch.", 1, &text,
                        &dtype_name)) != 1) {
        goto done;
    }
    if ((input->dtype = crpy_dtype_named(dtype_name)) == NULL) {
        found = 0;
        goto done;
    }
    found = -1;
    if ((value = PyObject_GetAttrString(obj, "shape")) == NULL
        || (ndim = int64_tuple(value, "torch.Tensor shape", shape)) < 0
        || (contiguous = truth_of(obj, "is_contiguous", 1)) < 0) {
        goto done;
    }
    Py_CLEAR(value);
    if (!contiguous) {
        int count = -1;
        if ((value = PyObject_CallMethod(obj, "stride", NULL)) == NULL
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
        if ((value = PyObject_CallMethod(obj, "data_ptr", NULL)) == NULL) {
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
    input->ndim = ndim;
    if (plan_device_layout(input, ndim, shape, contiguous ? NULL : strides,
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

/* --- 3: DLPack -------------------------------------------------------------- */

/* DLPack's type code of a dtype: by its kind, bfloat16's its own. */
static int
dlpack_code(const crpy_dtype *dtype)
{
    if (dtype->type == CR_TYPE_BFLOAT16) {
        return DL_BFLOAT;
    }
    switch (dtype->kind) {
    case 'b':
        return DL_BOOL;
    case 'i':
        return DL_INT;
    case 'u':
        return DL_UINT;
    case 'c':
        return DL_COMPLEX;
    default:
        return DL_FLOAT;
    }
}

static const crpy_dtype *
dlpack_dtype(dl_data_type dtype)
{
    for (int t = 0; dtype.lanes == 1 && t < CR_TYPE_COUNT; t++) {
        const crpy_dtype *row = crpy_dtype_of_type((cr_type)t);
        if (dlpack_code(row) == dtype.code
            && 8 * row->itemsize == dtype.bits) {
            return row;
        }
    }
    PyErr_Format(PyExc_TypeError, "cudareduce does not support the DLPack "
                 "dtype (code %d, %d bits, %d lanes)", dtype.code,
                 dtype.bits, dtype.lanes);
    return NULL;
}

/* obj.__dlpack__(stream=...): the consumer's stream, so that the producer
 * orders its pending work before ours.  A producer that takes no stream
 * argument is called without one. */
static PyObject *
call_dlpack(PyObject *obj, uintptr_t consumer_stream)
{
    PyObject *stream = PyLong_FromUnsignedLongLong(consumer_stream);
    PyObject *method = NULL, *args = NULL, *kwargs = NULL, *capsule = NULL;
    if (stream == NULL
        || (method = PyObject_GetAttrString(obj, "__dlpack__")) == NULL
        || (args = PyTuple_New(0)) == NULL
        || (kwargs = Py_BuildValue("{s:O}", "stream", stream)) == NULL) {
        goto done;
    }
    capsule = PyObject_Call(method, args, kwargs);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        capsule = PyObject_CallNoArgs(method);
    }
done:
    Py_XDECREF(stream);
    Py_XDECREF(method);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return capsule;
}

/* call_dlpack with CUDA device `device` current, and the caller's
 * current device current again after it: a producer exports a tensor of
 * its device, whose streams the consumer stream is one of, and PyTorch's
 * refuses to with another device current ("Can't export tensors on a
 * different CUDA device index": test_devices_gpu.py), as CuPy's
 * from_dlpack never has it.  Without a usable device there is none to
 * make current: the producer is asked all the same, its capsule checked,
 * and the reduction raises the no-device error. */
static PyObject *
call_dlpack_on(PyObject *obj, int device, uintptr_t consumer)
{
    cr_error failure;
    int previous, unused;
    cr_status status = cr_device_exchange(device, &previous, &failure);
    if (status == CR_ERR_NO_DEVICE) {
        return call_dlpack(obj, consumer);
    }
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    PyObject *capsule = call_dlpack(obj, consumer);
    status = cr_device_exchange(previous, &unused, &failure);
    if (status != CR_OK) {
        Py_XDECREF(capsule);    /* unused: its deleter frees the tensor */
        if (!PyErr_Occurred()) {
            crpy_raise_cr_error(status, &failure);
        }
        return NULL;
    }
    return capsule;
}

/* Without a caller's stream, the data is ready on the consumer stream the
 * producer was given (crpy_dlpack_stream; for a subclass of torch.Tensor,
 * PyTorch's current stream, which its __dlpack__ waits for no further),
 * and the reduction runs there, as on a producer's stream. */
static int
acquire_dlpack_device(PyObject *obj, int device, int stream_given,
                      uintptr_t stream, crpy_input *input)
{
    int64_t strides[CR_MAX_DIMS];
    dl_tensor *tensor;
    uintptr_t consumer = crpy_dlpack_stream(stream_given, stream);
    int torch = !stream_given && is_torch_instance(obj);
    if (torch && (torch = crpy_torch_stream(device, &consumer)) < 0) {
        return -1;
    }
    PyObject *capsule = call_dlpack_on(obj, device, consumer);
    if (capsule == NULL) {
        return -1;
    }
    if (!stream_given) {
        input->has_producer_stream = 1;
        input->producer_stream = consumer;
        input->torch_stream = torch;
    }
    /* Take ownership: rename the capsule so that its destructor leaves the
     * tensor to us, and hand it back through the deleter when done. */
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        dl_managed_tensor *managed = PyCapsule_GetPointer(capsule,
                                                          "dltensor");
        tensor = &managed->dl_tensor;
        input->dl_managed = managed;
        input->dl_versioned = 0;
        (void)PyCapsule_SetName(capsule, "used_dltensor");
    }
    else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_tensor_versioned *managed = PyCapsule_GetPointer(
            capsule, "dltensor_versioned");
        tensor = &managed->dl_tensor;
        input->dl_managed = managed;
        input->dl_versioned = 1;
        input->read_only = (managed->flags & DL_FLAG_READ_ONLY) != 0;
        (void)PyCapsule_SetName(capsule, "used_dltensor_versioned");
    }
    else {
        PyErr_SetString(PyExc_ValueError, "__dlpack__ did not return an "
                        "unused DLPack capsule (named 'dltensor')");
        Py_DECREF(capsule);
        return -1;
    }
    input->owner = capsule;
    input->location = CR_DEVICE;
    if (tensor->device.device_type != DL_CUDA
        && tensor->device.device_type != DL_CUDA_MANAGED) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor is on device "
                     "type %d, not CUDA as __dlpack_device__ said",
                     tensor->device.device_type);
        return -1;
    }
    if (tensor->ndim < 0 || tensor->ndim > CR_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "DLPack tensor of %d dimensions; at "
                     "most %d", tensor->ndim, CR_MAX_DIMS);
        return -1;
    }
    if ((input->dtype = dlpack_dtype(tensor->dtype)) == NULL) {
        return -1;
    }
    if (tensor->strides != NULL) {
        for (int d = 0; d < tensor->ndim; d++) {
            /* A dimension of size 0 or 1 is never stepped along: its
             * stride is meaningless (CuPy exports any value there). */
            int64_t s = tensor->shape[d] > 1 ? tensor->strides[d] : 0;
            if (s > INT64_MAX / 8 || s < INT64_MIN / 8) {
                PyErr_SetString(PyExc_ValueError, "DLPack strides overflow");
                return -1;
            }
            strides[d] = s * input->dtype->itemsize;
        }
    }
    input->data = (const char *)tensor->data + tensor->byte_offset;
    input->ndim = tensor->ndim;
    return plan_device_layout(input, tensor->ndim, tensor->shape,
                              tensor->strides ? strides : NULL, "DLPack");
}

static int
acquire_dlpack(PyObject *obj, PyObject *device_fn, int stream_given,
               uintptr_t stream, crpy_input *input)
{
    long long device_type = -1, device_id = -1;
    PyObject *device = PyObject_CallNoArgs(device_fn);
    if (device == NULL) {
        return -1;
    }
    int parsed = PyArg_ParseTuple(device, "LL", &device_type, &device_id);
    Py_DECREF(device);
    if (!parsed) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "__dlpack_device__() must return "
                        "a tuple (device_type: int, device_id: int)");
        return -1;
    }
    if (device_type == DL_CPU) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        PyObject *array = numpy ? PyObject_CallMethod(numpy, "from_dlpack",
                                                      "O", obj) : NULL;
        Py_XDECREF(numpy);
        if (array == NULL) {
            return -1;
        }
        int result = acquire_host(array, input);
        Py_DECREF(array);
        return result;
    }
    if (device_type == DL_CUDA || device_type == DL_CUDA_MANAGED) {
        if (device_id < 0 || device_id > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "__dlpack_device__() names CUDA "
                         "device %lld", device_id);
            return -1;
        }
        return acquire_dlpack_device(obj, (int)device_id, stream_given,
                                     stream, input);
    }
    PyErr_Format(PyExc_TypeError, "cudareduce reads DLPack tensors on CUDA "
                 "(2) or CPU (1) devices, not device type %lld", device_type);
    return -1;
}

/* Whether `obj`, whose __cuda_array_interface__ is `interface`, is read
 * through DLPack instead: 1 where the interface names no stream (version
 * 2, JAX's) and `obj` also speaks DLPack, which orders the producer's
 * pending work before the consumer's stream.  JAX's version-2 interface
 * does not wait for that work: a mean right after jax.device_put read
 * zeros.  0 or 1; no exception. */
static int
waits_through_dlpack(PyObject *obj, PyObject *interface)
{
    return PyDict_Check(interface)
           && PyDict_GetItemString(interface, "stream") == NULL
           && PyObject_HasAttrString(obj, "__dlpack__")
           && PyObject_HasAttrString(obj, "__dlpack_device__");
}

/* `obj` through its __cuda_array_interface__, or through DLPack (where
 * it has no interface, or waits_through_dlpack), or else as anything
 * numpy.asarray takes.  0, or -1 with an exception. */
static int
acquire_protocols(PyObject *obj, int stream_given, uintptr_t stream,
                  crpy_input *input)
{
    int result;
    PyObject *attribute = optional_attribute(obj, CAI);
    if (attribute == NULL && PyErr_Occurred()) {
        return -1;      /* the property raised: e.g. a tensor needing grad */
    }
    if (attribute != NULL && !waits_through_dlpack(obj, attribute)) {
        result = acquire_cai(obj, attribute, input);
        Py_DECREF(attribute);
        return result;
    }
    Py_XDECREF(attribute);
    if ((attribute = optional_attribute(obj, "__dlpack_device__")) != NULL) {
        result = acquire_dlpack(obj, attribute, stream_given, stream, input);
        Py_DECREF(attribute);
        return result;
    }
    return PyErr_Occurred() ? -1 : acquire_host(obj, input);
}

/* --- the entry points -------------------------------------------------------- */

int
crpy_acquire_input(PyObject *obj, int c_order, int stream_given,
                   uintptr_t stream, crpy_input *input)
{
    int result;

    memset(input, 0, sizeof(*input));
    input->c_order = c_order;
    if (PyArray_Check(obj)) {
        result = acquire_host(obj, input);
    }
    else if ((result = acquire_torch_tensor(obj, input)) != 0) {
        result = result < 0 ? -1 : 0;
    }
    else {
        result = acquire_protocols(obj, stream_given, stream, input);
    }
    if (result < 0) {
        crpy_release_input(input);
    }
    return result;
}

void
crpy_release_input(crpy_input *input)
{
    if (input->dl_managed != NULL) {
        /* The producer's deleter may run Python code (a ctypes or cffi
         * callback), which must not start with an exception set: the
         * caller's error is kept aside meanwhile. */
        PyObject *pending_type, *pending_value, *pending_traceback;
        PyErr_Fetch(&pending_type, &pending_value, &pending_traceback);
        if (input->dl_versioned) {
            dl_managed_tensor_versioned *managed = input->dl_managed;
            if (managed->deleter != NULL) {
                managed->deleter(managed);
            }
        }
        else {
            dl_managed_tensor *managed = input->dl_managed;
            if (managed->deleter != NULL) {
                managed->deleter(managed);
            }
        }
        input->dl_managed = NULL;
        PyErr_Restore(pending_type, pending_value, pending_traceback);
    }
    Py_CLEAR(input->owner);
}
