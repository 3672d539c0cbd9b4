/* reduce.c: reduce(), the module's reduction.
 *
 * Opens the call (call.c), reads keepdims, and reduces either along some
 * axes (reduce_axes.c) or the whole array: NumPy's empty-input rules, the
 * out= of the one result, cuda/ called with the GIL released, the value
 * boxed as NumPy's scalar with NumPy's warnings (an array of ones' shape
 * with keepdims). */
#include "extension.h"

/* A NumPy out= of the whole array's result: one element of the result
 * dtype, writable, in native byte order.  0, or -1 with a ValueError or
 * TypeError. */
static int
check_numpy_out(PyArrayObject *out, const crpy_dtype *result)
{
    const crpy_dtype *dtype = NULL;
    if (PyArray_SIZE(out) != 1) {
        PyErr_Format(PyExc_ValueError, "out must have exactly one element, "
                     "not %zd", (Py_ssize_t)PyArray_SIZE(out));
        return -1;
    }
    if (!PyArray_ISWRITEABLE(out)) {
        PyErr_SetString(PyExc_ValueError, "out is read-only");
        return -1;
    }
    if (!PyArray_ISNOTSWAPPED(out)
        || (dtype = crpy_lookup_dtype(PyArray_DESCR(out))) == NULL
        || dtype->type != result->type) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "out must have the result's dtype "
                     "%s, not %S", result->name,
                     (PyObject *)PyArray_DESCR(out));
        return -1;
    }
    return 0;
}

/* A device `out` of the whole array's one result: 0, or -1 with an
 * exception; release *out either way. */
static int
acquire_one_device_out(PyObject *obj, crpy_reduction_call *call,
                       crpy_input *out)
{
    if (crpy_acquire_device_out(obj, call, 0, out) < 0) {
        return -1;
    }
    if (out->layout.n != 1) {
        PyErr_Format(PyExc_ValueError, "out must have exactly one element, "
                     "not %lld", (long long)out->layout.n);
        return -1;
    }
    return 0;
}

/* NumPy's ComplexWarning where a dtype= casts complex elements to a real
 * type (not bool: that cast discards nothing), after numpy.mean's warning
 * of an empty input, as NumPy's order is; at the caller of the cudareduce
 * function.  0, or -1 with the exception a warnings filter made of it. */
static int
warn_complex_to_real(const crpy_reduction_call *call,
                     PyArray_Descr *requested)
{
    if (requested == NULL || call->input.dtype->kind != 'c'
        || call->reduced->kind == 'c' || call->reduced->kind == 'b') {
        return 0;
    }
    PyObject *module = PyImport_ImportModule("numpy.exceptions");
    PyObject *category = module == NULL ? NULL : PyObject_GetAttrString(
                                                     module, "ComplexWarning");
    int result = category == NULL
        ? -1
        : PyErr_WarnEx(category, "Casting complex values to real discards "
                       "the imaginary part", 2);
    Py_XDECREF(category);
    Py_XDECREF(module);
    return result;
}

/* keepdims=, as NumPy reads it: any object's truth for an index operator
 * (numpy.argmin's), else an integer (a ufunc's reduce: TypeError for
 * None, a str or a float).  0, or -1 with that TypeError. */
static int
parse_keepdims(PyObject *value, int index_op, int *keepdims)
{
    if (index_op || PyBool_Check(value)) {
        const int truth = PyObject_IsTrue(value);
        *keepdims = truth > 0;
        return truth < 0 ? -1 : 0;
    }
    if (!PyIndex_Check(value)) {
        PyErr_Format(PyExc_TypeError, "keepdims must be an integer, not "
                     "%.100s", Py_TYPE(value)->tp_name);
        return -1;
    }
    const Py_ssize_t k = PyNumber_AsSsize_t(value, NULL);
    if (k == -1 && PyErr_Occurred()) {
        return -1;
    }
    *keepdims = k != 0;
    return 0;
}

/* A NumPy scalar result as the array of `ndim` dimensions of extent 1
 * that keepdims asks for (a new reference), or NULL with an exception. */
static PyObject *
with_kept_dims(PyObject *scalar, int ndim)
{
    npy_intp ones[CR_MAX_DIMS];
    PyArray_Dims dims = {ones, ndim};
    for (int d = 0; d < ndim; d++) {
        ones[d] = 1;
    }
    PyObject *array = PyArray_FromAny(scalar, NULL, 0, 0, 0, NULL);
    PyObject *shaped = array == NULL ? NULL : PyArray_Newshape(
        (PyArrayObject *)array, &dims, NPY_CORDER);
    Py_XDECREF(array);
    return shaped;
}

/* exact=True (issue 44), where the sum is of floats (or complex:
 * cuda/ says those are not built yet); a sum into integers or bool is
 * exact already, and an empty one has nothing to round (its identity,
 * or the mean's NaN, goes the usual way). */
static void
mark_exact(crpy_reduction_call *call, int exact)
{
    if (exact && call->request.n > 0
        && (call->reduced->kind == 'f' || call->reduced->kind == 'c')) {
        crpy_mark_exact(call);
    }
}

/* devices= (issue 45): None (the call's device: *count 0), "all", a
 * device id or a sequence of them, into devices[0 .. *count) (room for
 * CR_MAX_DEVICES; cr_devices_check says what more a list must be).  0,
 * or -1 with an exception. */
static int
parse_devices(PyObject *obj, int *devices, int *count)
{
    PyObject *items = NULL;
    int parsed = -1;
    *count = 0;
    if (obj == Py_None) {
        return 0;
    }
    if (PyUnicode_Check(obj)
        && PyUnicode_CompareWithASCIIString(obj, "all") == 0) {
        cr_error failure;
        cr_status status = cr_device_count(count, &failure);
        if (status != CR_OK) {
            crpy_raise_cr_error(status, &failure);
            return -1;
        }
        *count = *count < CR_MAX_DEVICES ? *count : CR_MAX_DEVICES;
        for (int i = 0; i < *count; i++) {
            devices[i] = i;
        }
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        items = PyTuple_Pack(1, obj);
    }
    else if (!PyUnicode_Check(obj) && !PyBytes_Check(obj)) {
        items = PySequence_Fast(obj, "");
    }
    if (items == NULL) {
        PyErr_Format(PyExc_TypeError, "devices must be None, 'all', a "
                     "device id or a sequence of them, not %R", obj);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(items) > CR_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "devices= lists 1 to %d devices, "
                     "not %zd", CR_MAX_DEVICES,
                     PySequence_Fast_GET_SIZE(items));
        goto done;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        long id;
        if (!PyLong_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "devices must list device ids "
                         "(int), not %R", item);
            goto done;
        }
        id = PyLong_AsLong(item);
        if (id == -1 && PyErr_Occurred()) {
            goto done;
        }
        /* Beyond int, any id names no device (the check says so). */
        devices[i] = id < INT_MIN ? INT_MIN : id > INT_MAX ? INT_MAX
                                                           : (int)id;
    }
    *count = (int)PySequence_Fast_GET_SIZE(items);
    parsed = 0;
done:
    Py_DECREF(items);
    return parsed;
}

/* reduce()'s arguments into *slots[0..9] (op ... allocate; those not
 * given keep their defaults), *exact and *devices.  Positional ones alone, as the
 * library passes them, are taken as they are: the tuple and the format
 * that PyArg_ParseTupleAndKeywords reads were most of a call's parse.
 * Keywords, or a count out of range, go through it, which words every
 * mistake as CPython does; the objects it gives are args' own, which the
 * caller holds.  0, or -1 with an exception. */
static int
parse_reduce_arguments(PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, PyObject **slots[10], int *exact,
                       PyObject **devices)
{
    static char *keywords[] = {"op", "a", "method", "threads", "dtype",
                               "stream", "axis", "out", "keepdims",
                               "allocate", "exact", "devices", NULL};
    PyObject *tuple = NULL, *dict = NULL;
    int parsed = 0;

    if (kwnames == NULL && nargs >= 4 && nargs <= 12) {
        for (Py_ssize_t k = 0; k < nargs && k < 10; k++) {
            *slots[k] = args[k];
        }
        *exact = nargs >= 11 ? PyObject_IsTrue(args[10]) : 0;
        if (nargs == 12) {
            *devices = args[11];
        }
        return *exact < 0 ? -1 : 0;
    }
    if ((tuple = PyTuple_New(nargs)) == NULL
        || (kwnames != NULL && (dict = PyDict_New()) == NULL)) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < nargs; k++) {
        PyTuple_SET_ITEM(tuple, k, Py_NewRef(args[k]));
    }
    for (Py_ssize_t k = 0; dict != NULL && k < PyTuple_GET_SIZE(kwnames);
         k++) {
        if (PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, k),
                           args[nargs + k]) < 0) {
            goto done;
        }
    }
    parsed = PyArg_ParseTupleAndKeywords(
        tuple, dict, "OOOO|OOOOOOpO:reduce", keywords, slots[0], slots[1],
        slots[2], slots[3], slots[4], slots[5], slots[6], slots[7],
        slots[8], slots[9], exact, devices);
done:
    Py_XDECREF(dict);
    Py_XDECREF(tuple);
    return parsed ? 0 : -1;
}

PyObject *
crpy_reduce(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
            PyObject *kwnames)
{
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *dtype_obj = Py_None, *stream_obj = Py_None, *axis = Py_None;
    PyObject *out = Py_None, *keepdims_obj = Py_False, *allocate = Py_None;
    PyObject *devices_obj = Py_None;
    int devices[CR_MAX_DEVICES];
    int device_count = 0;
    PyArray_Descr *requested = NULL;
    PyObject *reduction = NULL, *result = NULL, *allocated = NULL;
    crpy_reduction_call call = {0};
    crpy_input device_out = {0};
    int stream_given = 0, keepdims = 0, exact = 0;
    uintptr_t stream = 0;
    crpy_result_value value = {0};

    PyObject **slots[10] = {&op_name, &obj, &method_name, &threads_obj,
                            &dtype_obj, &stream_obj, &axis, &out,
                            &keepdims_obj, &allocate};

    if (parse_reduce_arguments(args, nargs, kwnames, slots, &exact,
                               &devices_obj) < 0
        || crpy_parse_stream(stream_obj, &stream_given, &stream) < 0) {
        return NULL;
    }
    if (crpy_parse_dtype(dtype_obj, &requested) < 0) {
        return NULL;
    }
    if (crpy_open_reduction_call(&crpy_get_state(module)->names, op_name,
                                 obj, method_name, threads_obj,
                                 axis, requested, stream_given, stream,
                                 &call) < 0
        || parse_keepdims(keepdims_obj,
                          cr_op_gives_index(call.op->kernel_op),
                          &keepdims) < 0) {
        goto done;
    }
    mark_exact(&call, exact);
    if (parse_devices(devices_obj, devices, &device_count) < 0) {
        goto done;
    }
    if (devices_obj != Py_None) {
        cr_error failure;
        cr_status status = cr_devices_check(
            devices, device_count, call.input.location == CR_HOST,
            crpy_reduces_every_axis(&call), &failure);
        if (status != CR_OK) {
            crpy_raise_cr_error(status, &failure);
            goto done;
        }
        call.request.devices = devices;
        call.request.device_count = device_count;
    }
    /* Along some axes; over every axis with keepdims an empty input too,
     * whose mean NumPy divides as an array ("invalid value encountered in
     * divide"). */
    if (!crpy_reduces_every_axis(&call)
        || (keepdims && call.request.n == 0 && out == Py_None
            && call.input.location == CR_HOST)) {
        if (warn_complex_to_real(&call, requested) == 0) {
            result = crpy_reduce_axes(&call, keepdims, out, allocate, obj);
        }
        goto done;
    }
    if (call.request.n == 0 && call.op->empty_error != NULL) {
        PyErr_SetString(PyExc_ValueError, call.op->empty_error);
        goto done;
    }
    /* Level 2: the warning points at the caller of cudareduce.mean. */
    if (call.request.n == 0 && call.op->empty_warning != NULL
        && PyErr_WarnEx(PyExc_RuntimeWarning, call.op->empty_warning,
                        2) < 0) {
        goto done;
    }
    if (warn_complex_to_real(&call, requested) < 0) {
        goto done;
    }
    if (keepdims && out == Py_None && call.input.location == CR_DEVICE) {
        /* The array keepdims asks for, of the input's library, as the
         * out of the one result. */
        npy_intp ones[CR_MAX_DIMS];
        for (int d = 0; d < call.input.ndim; d++) {
            ones[d] = 1;
        }
        if ((allocated = crpy_allocate_result(&call, allocate, obj,
                                              call.input.ndim,
                                              ones)) == NULL) {
            goto done;
        }
        out = allocated;
    }
    if (out != Py_None && PyArray_Check(out)
        && check_numpy_out((PyArrayObject *)out, call.result) < 0) {
        goto done;
    }
    if (out != Py_None && !PyArray_Check(out)
        && acquire_one_device_out(out, &call, &device_out) < 0) {
        goto done;
    }
    if (crpy_choose_streams(&call.input, stream_given, stream,
                            &call.request) < 0
        || crpy_run(&call.request, &value) < 0) {
        goto done;
    }
    if (call.request.out != NULL) {
        result = Py_NewRef(out);
        goto done;
    }
    /* What the producer asked to wait for is done: the checks below run
     * on the same stream, after it. */
    call.request.wait = 0;
    if (call.request.exact) {
        /* The result itself, rounded once (a mean divided already). */
        cr_request boxed = call.request;
        boxed.acc = call.result->type;
        reduction = crpy_box_result(&value, &boxed, call.result);
    }
    else {
        reduction = crpy_box_result(&value, &call.request, call.reduced);
    }
    if (reduction != NULL
        && (call.op->selects_element
            || crpy_report_like_numpy(&call.request, call.input.dtype,
                                      call.reduced, reduction) == 0)) {
        /* nanmean's of no number: its NaN with NumPy's warning. */
        result = call.request.exact
                 && !(cr_op_counts(call.request.op)
                      && value.counted.count == 0)
            ? Py_NewRef(reduction)
            : crpy_finish_reduction_call(&call, &value, reduction);
    }
    if (result != NULL && out != Py_None
        && PyArray_SETITEM((PyArrayObject *)out,
                           PyArray_DATA((PyArrayObject *)out), result) < 0) {
        Py_CLEAR(result);
    }
    if (result != NULL && out != Py_None) {
        Py_SETREF(result, Py_NewRef(out));
    }
    else if (result != NULL && keepdims) {
        Py_SETREF(result, with_kept_dims(result, call.input.ndim));
    }

done:
    Py_XDECREF(allocated);
    Py_XDECREF(reduction);
    crpy_release_input(&device_out);
    crpy_close_reduction_call(&call);
    Py_XDECREF(requested);
    return result;
}
