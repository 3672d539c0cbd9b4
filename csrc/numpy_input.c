/* numpy_input.c: host arrays, as NumPy reads them: a numpy.ndarray, or
 * anything numpy.asarray takes (input.c's first and last protocols), and
 * a CPU DLPack tensor through numpy.from_dlpack (dlpack.c's). */
#include "extension.h"

/* module.name, the module imported first (a new reference); NULL with an
 * exception. */
static PyObject *
module_attribute(const char *module, const char *name)
{
    PyObject *imported = PyImport_ImportModule(module);
    PyObject *value = imported == NULL
        ? NULL : PyObject_GetAttrString(imported, name);
    Py_XDECREF(imported);
    return value;
}

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
    return crpy_input_layout(input, ndim, shape, strides,
                             (int)PyArray_ITEMSIZE(array), "array");
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
    PyObject *masked_type = module_attribute("numpy.ma", "MaskedArray");
    if (masked_type == NULL) {
        return -1;
    }
    int found = PyObject_IsInstance(obj, masked_type);
    Py_DECREF(masked_type);
    return found;
}

int
crpy_acquire_host(PyObject *obj, crpy_input *input)
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
    input->location = CR_HOST;
    input->data = PyArray_DATA((PyArrayObject *)input->owner);
    return 0;

error:
    Py_CLEAR(input->owner);
    Py_DECREF(given);
    return -1;
}

int
crpy_acquire_host_dlpack(PyObject *obj, crpy_input *input)
{
    PyObject *from_dlpack = module_attribute("numpy", "from_dlpack");
    PyObject *array = from_dlpack == NULL
        ? NULL : PyObject_CallOneArg(from_dlpack, obj);
    Py_XDECREF(from_dlpack);
    if (array == NULL) {
        return -1;
    }
    int result = crpy_acquire_host(array, input);
    Py_DECREF(array);
    return result;
}
