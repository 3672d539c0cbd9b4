/* axes.c: from axis= to the rows the kernels reduce.
 *
 * crpy_parse_axis reads axis= as NumPy does (its errors included) into
 * the set of reduced axes; crpy_plan_rows, plain C, turns an array's
 * shape and strides and that set into a cr_rows: the kept axes, merged
 * where they are one run in both the input and the out, give the rows in
 * the result's C order; the reduced axes, flipped to positive strides,
 * sorted and merged (but an index operator's one axis, whose direction
 * is its index), give each row's length and stride. */
#include "extension.h"

/* NumPy's AxisError for `axis` of an ndim-dimensional array. */
static void
raise_axis_error(Py_ssize_t axis, int ndim)
{
    PyObject *numpy = PyImport_ImportModule("numpy.exceptions");
    PyObject *axis_error = numpy == NULL ? NULL
                           : PyObject_GetAttrString(numpy, "AxisError");
    PyObject *exc = axis_error == NULL ? NULL
                    : PyObject_CallFunction(axis_error, "ni", axis, ndim);
    if (exc != NULL) {
        PyErr_SetObject(axis_error, exc);
        Py_DECREF(exc);
    }
    Py_XDECREF(axis_error);
    Py_XDECREF(numpy);
}

/* One axis of an ndim-dimensional array, as an index in 0 .. ndim - 1:
 * 0, or -1 with NumPy's TypeError or AxisError. */
static int
parse_one_axis(PyObject *item, int ndim, int *axis)
{
    /* NumPy's errors: TypeError for a bool, PyNumber_AsSsize_t's
     * ("'float' object cannot be interpreted as an integer") for a
     * non-integer, OverflowError for an int past C's. */
    if (PyBool_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return -1;
    }
    Py_ssize_t a = PyNumber_AsSsize_t(item, PyExc_OverflowError);
    if (a == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (a < -ndim || a >= ndim) {
        raise_axis_error(a, ndim);
        return -1;
    }
    *axis = (int)(a < 0 ? a + ndim : a);
    return 0;
}

int
crpy_parse_axis(PyObject *axis, int ndim, int single, uint64_t *reduced)
{
    const uint64_t every = ndim == 64 ? UINT64_MAX
                                      : ((uint64_t)1 << ndim) - 1;
    int axes[CR_MAX_DIMS];
    int a;
    if (axis == Py_None) {
        *reduced = every;
        return 0;
    }
    if (single == CRPY_ONE_AXIS || !PyTuple_Check(axis)) {
        if (parse_one_axis(axis, ndim, &a) < 0) {
            return -1;
        }
        *reduced = (uint64_t)1 << a;
        return 0;
    }
    /* As numpy.lib.array_utils.normalize_axis_tuple: every axis in range
     * first, then none repeated. */
    const Py_ssize_t count = PyTuple_GET_SIZE(axis);
    if (count > ndim) {
        /* More axes than dimensions: one repeats, or one is out of
         * range; NumPy finds which in that order of checks. */
        for (Py_ssize_t k = 0; k < count; k++) {
            if (parse_one_axis(PyTuple_GET_ITEM(axis, k), ndim, &a) < 0) {
                return -1;
            }
        }
        PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        if (parse_one_axis(PyTuple_GET_ITEM(axis, k), ndim, &axes[k]) < 0) {
            return -1;
        }
    }
    *reduced = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (*reduced & ((uint64_t)1 << axes[k])) {
            PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
            return -1;
        }
        *reduced |= (uint64_t)1 << axes[k];
    }
    if (single == CRPY_ONE_AXIS_CHECKED) {
        /* numpy.nanargmin checks the tuple, then argmin refuses it. */
        PyErr_SetString(PyExc_TypeError,
                        "'tuple' object cannot be interpreted as an integer");
        return -1;
    }
    return 0;
}

/* Whether axis d is reduced. */
static int
is_reduced(uint64_t reduced, int d)
{
    return (reduced >> d) & 1;
}

int
crpy_plan_rows(int ndim, const int64_t *shape, const int64_t *strides,
               const int64_t *out_strides, int64_t itemsize,
               uint64_t reduced, int keep_direction, cr_rows *rows,
               int64_t *offset)
{
    int64_t reduced_shape[CR_MAX_DIMS], reduced_strides[CR_MAX_DIMS];
    int count = 0;

    memset(rows, 0, sizeof(*rows));
    *offset = 0;
    rows->rows = 1;
    rows->length = 1;
    rows->stride = itemsize;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) {
            continue;           /* one index: no row, no element apart */
        }
        if (!is_reduced(reduced, d)) {
            /* In the index's order; cuda/ merges the kept axes where
             * each pass reads and writes them as one run. */
            const int k = rows->kept_ndim++;
            rows->kept_shape[k] = shape[d];
            rows->kept_strides[k] = strides[d];
            rows->out_strides[k] = out_strides[d];
            rows->rows *= shape[d];
            continue;
        }
        int64_t stride = strides[d];
        if (stride < 0 && !keep_direction) {
            *offset += (shape[d] - 1) * stride;
            stride = -stride;
        }
        /* Insertion sort by decreasing stride, unless the order is the
         * index's (a single axis then: nothing to sort). */
        int k = count++;
        while (!keep_direction && k > 0 && reduced_strides[k - 1] < stride) {
            reduced_strides[k] = reduced_strides[k - 1];
            reduced_shape[k] = reduced_shape[k - 1];
            k--;
        }
        reduced_strides[k] = stride;
        reduced_shape[k] = shape[d];
        rows->length *= shape[d];
    }
    /* The reduced axes merged where they are one run. */
    int merged = 0;
    for (int k = 0; k < count; k++) {
        if (merged > 0 && reduced_strides[merged - 1]
                              == reduced_strides[k] * reduced_shape[k]) {
            reduced_shape[merged - 1] *= reduced_shape[k];
            reduced_strides[merged - 1] = reduced_strides[k];
        }
        else {
            reduced_shape[merged] = reduced_shape[k];
            reduced_strides[merged] = reduced_strides[k];
            merged++;
        }
    }
    if (merged == 1) {
        rows->stride = reduced_strides[0];
    }
    return merged > 1;
}
