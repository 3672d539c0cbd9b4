/* exact_states.c: exact sums in parts (issue 44), for cudareduce.dask's
 * chunks: exact_state, the unrounded state of a part's exact sum (a
 * chunk reduced as reduce() would with exact=True, its rounding left
 * out); exact_add_states, states added into one; exact_round_state, a
 * state rounded once as the exact sum of every part's elements, with
 * NumPy's warnings.  Added in any order and grouping, the states round
 * to the bits of one exact=True call over the whole array (cuda/'s
 * cr_exact_state_size).  A state is a NumPy uint8 array, opaque. */
#include "extension.h"

/* A new zero state: the state of no element. */
static PyObject *
zero_state(void)
{
    npy_intp size = (npy_intp)cr_exact_state_size();
    return PyArray_ZEROS(1, &size, NPY_UINT8, 0);
}

/* `obj` as a state: a C-contiguous uint8 array of the state's size.  A
 * borrowed pointer to its bytes, or NULL with TypeError. */
static const void *
state_bytes(PyObject *obj)
{
    if (!PyArray_Check(obj)
        || PyArray_TYPE((PyArrayObject *)obj) != NPY_UINT8
        || PyArray_NDIM((PyArrayObject *)obj) != 1
        || PyArray_DIM((PyArrayObject *)obj, 0)
               != (npy_intp)cr_exact_state_size()
        || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj)) {
        PyErr_Format(PyExc_TypeError, "an exact sum's state is a "
                     "contiguous uint8 array of %zu bytes (exact_state's), "
                     "not %R", cr_exact_state_size(), obj);
        return NULL;
    }
    return PyArray_DATA((PyArrayObject *)obj);
}

PyObject *
crpy_exact_state(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "dtype",
                               "stream", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj = Py_None;
    PyObject *dtype_obj = Py_None, *stream_obj = Py_None;
    PyObject *state = NULL, *result = NULL;
    PyArray_Descr *requested = NULL;
    crpy_reduction_call call = {0};
    int stream_given = 0;
    uintptr_t stream = 0;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOO:exact_state",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &dtype_obj, &stream_obj)
        || crpy_parse_stream(stream_obj, &stream_given, &stream) < 0) {
        return NULL;
    }
    if (crpy_parse_dtype(dtype_obj, &requested) < 0) {
        return NULL;
    }
    if (crpy_open_reduction_call(&crpy_get_state(module)->names, op_name,
                                 obj, method_name, threads_obj, Py_None,
                                 requested, stream_given, stream,
                                 &call) < 0) {
        goto done;
    }
    if (call.reduced->kind != 'f') {
        /* An integer or bool sum is exact already; complex ones are not
         * built yet. */
        PyErr_Format(PyExc_ValueError, "an exact sum's state is of a "
                     "float sum, not of %s", call.reduced->name);
        goto done;
    }
    if ((state = zero_state()) == NULL) {
        goto done;
    }
    /* cuda/ checks the op and method, and gives an empty array's zero
     * state itself. */
    crpy_mark_exact(&call);
    call.request.exact_state = 1;
    if (crpy_choose_streams(&call.input, stream_given, stream,
                            &call.request) < 0
        || crpy_run(&call.request,
                    PyArray_DATA((PyArrayObject *)state)) < 0) {
        goto done;
    }
    result = Py_NewRef(state);

done:
    Py_XDECREF(state);
    crpy_close_reduction_call(&call);
    Py_XDECREF(requested);
    return result;
}

PyObject *
crpy_exact_add_states(PyObject *module, PyObject *states)
{
    PyObject *sum = NULL, *iterator = NULL, *item = NULL;
    if ((iterator = PyObject_GetIter(states)) == NULL
        || (sum = zero_state()) == NULL) {
        goto fail;
    }
    while ((item = PyIter_Next(iterator)) != NULL) {
        const void *bytes = state_bytes(item);
        if (bytes == NULL) {
            goto fail;
        }
        cr_exact_add_states(PyArray_DATA((PyArrayObject *)sum), bytes);
        Py_CLEAR(item);
    }
    if (PyErr_Occurred()) {
        goto fail;
    }
    Py_DECREF(iterator);
    return sum;

fail:
    Py_XDECREF(item);
    Py_XDECREF(iterator);
    Py_XDECREF(sum);
    return NULL;
}

PyObject *
crpy_exact_round_state(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "state", "dtype", "n", "reduce_dtype",
                               NULL};
    PyObject *op_name, *state_obj, *reduction = NULL, *result = NULL;
    PyArray_Descr *descr = NULL, *requested = NULL;
    long long n;
    const crpy_operator *op;
    const crpy_dtype *dtype, *reduced, *rounded;
    const void *state;
    cr_request request = {0};
    crpy_result_value value = {0};
    cr_error failure;
    cr_status status;
    int elements_nan, elements_inf;
    double rounded_value;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs,
                                     "OOO&L|O&:exact_round_state", keywords,
                                     &op_name, &state_obj,
                                     PyArray_DescrConverter, &descr, &n,
                                     PyArray_DescrConverter2, &requested)) {
        goto done;
    }
    if ((state = state_bytes(state_obj)) == NULL
        || (op = crpy_operator_named(op_name)) == NULL
        || (dtype = crpy_lookup_dtype(descr)) == NULL
        || crpy_resolve_reduction(&op, dtype, requested, &reduced, &rounded,
                                  &request) < 0) {
        goto done;
    }
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "an exact sum's state is "
                        "rounded for n >= 1 elements (an empty array's "
                        "sum is its identity)");
        goto done;
    }
    request.n = n;
    request.exact = 1;
    request.reduced = reduced->type;
    request.result = rounded->type;
    request.divide_by_n = op->divides_by_count;
    status = cr_exact_round_state(&request, state, &value, &failure);
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    /* As reduce() boxes an exact sum: the result itself, rounded once. */
    request.acc = rounded->type;
    if ((reduction = crpy_box_result(&value, &request, rounded)) == NULL) {
        goto done;
    }
    if (cr_op_counts(request.op) && value.counted.count == 0) {
        /* nanmean's of no number: its NaN with NumPy's warning. */
        result = op->finish(reduction, 0, rounded);
        goto done;
    }
    cr_exact_state_specials(state, &elements_nan, &elements_inf);
    if (((rounded_value = PyFloat_AsDouble(reduction)) != -1.0
         || !PyErr_Occurred())
        && crpy_report_float_like_numpy(rounded_value, elements_nan,
                                        elements_inf) == 0) {
        result = Py_NewRef(reduction);
    }

done:
    Py_XDECREF(reduction);
    Py_XDECREF(descr);
    Py_XDECREF(requested);
    return result;
}
