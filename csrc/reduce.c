/* reduce.c: the reduce() call, its arguments and out=.
 *
 * Parses the operator, method, threads and axis, acquires the input,
 * resolves NumPy's dtypes into a cr_request (crpy_open_reduction_call,
 * also time_reduce's), checks a NumPy or device out=, and calls cuda/ with
 * the GIL released. */
#include "extension.h"

int
crpy_parse_method(PyObject *name, cr_method *method)
{
    if (!PyUnicode_Check(name)) {
        /* cudareduce.sum(a, 0): NumPy's second argument is the axis. */
        PyErr_Format(PyExc_TypeError,
                     "method must be a str (a name from "
                     "cudareduce.methods()), not %.100s: the second "
                     "argument of cudareduce's functions is the method, not "
                     "NumPy's axis; cudareduce reduces the whole array "
                     "(axis= takes None or every axis, by keyword)",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    for (int m = 0; m < CR_METHOD_COUNT; m++) {
        if (PyUnicode_CompareWithASCIIString(name, cr_method_name(m)) == 0) {
            *method = (cr_method)m;
            return 0;
        }
    }
    PyObject *valid = PyUnicode_FromString("");
    for (int m = 0; valid != NULL && m < CR_METHOD_COUNT; m++) {
        PyObject *joined = PyUnicode_FromFormat(
            "%U%s%s", valid, m ? ", " : "", cr_method_name(m));
        Py_SETREF(valid, joined);
    }
    if (valid != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "unknown method %R; valid methods: %U", name, valid);
        Py_DECREF(valid);
    }
    return -1;
}

int
crpy_parse_threads(PyObject *value, int *threads)
{
    if (value == Py_None) {
        *threads = 0;
        return 0;
    }
    if (!PyLong_Check(value) || PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "threads must be None or an int, not "
                     "%.100s", Py_TYPE(value)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long t = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (t == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow || t < CR_MIN_THREADS || t > CR_MAX_THREADS
        || (t & (t - 1)) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "threads must be a power of two from %d to %d, got %R",
                     CR_MIN_THREADS, CR_MAX_THREADS, value);
        return -1;
    }
    *threads = (int)t;
    return 0;
}

/* axis=: None, or an int or a tuple of ints naming every axis of an
 * ndim-dimensional array once: the whole array, the one reduction
 * cudareduce does.  Out-of-range axes raise NumPy's AxisError, repeated
 * ones its ValueError. */
static int
check_axis(PyObject *axis, int ndim)
{
    uint64_t seen = 0;
    int count = 0;
    if (axis == Py_None) {
        return 0;
    }
    PyObject *items = PyTuple_Check(axis) ? Py_NewRef(axis)
                                          : PyTuple_Pack(1, axis);
    if (items == NULL) {
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(items); k++) {
        PyObject *item = PyTuple_GET_ITEM(items, k);
        if (PyBool_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "axis must be None, an int or a "
                         "tuple of ints, not %.100s", Py_TYPE(item)->tp_name);
            goto error;
        }
        Py_ssize_t a = PyNumber_AsSsize_t(item, NULL);
        if (a == -1 && PyErr_Occurred()) {
            goto error;
        }
        if (a < -ndim || a >= ndim) {
            PyObject *numpy = PyImport_ImportModule("numpy.exceptions");
            PyObject *axis_error = numpy ? PyObject_GetAttrString(
                                               numpy, "AxisError") : NULL;
            PyObject *exc = axis_error ? PyObject_CallFunction(
                                             axis_error, "ni", a, ndim)
                                       : NULL;
            if (exc != NULL) {
                PyErr_SetObject(axis_error, exc);
                Py_DECREF(exc);
            }
            Py_XDECREF(axis_error);
            Py_XDECREF(numpy);
            goto error;
        }
        a = a < 0 ? a + ndim : a;
        if (seen & ((uint64_t)1 << a)) {
            PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
            goto error;
        }
        seen |= (uint64_t)1 << a;
        count++;
    }
    Py_DECREF(items);
    if (count != ndim) {
        PyErr_Format(PyExc_ValueError, "cudareduce reduces over every axis: "
                     "axis=%R leaves %d of the array's %d axes; pass "
                     "axis=None", axis, ndim - count, ndim);
        return -1;
    }
    return 0;

error:
    Py_DECREF(items);
    return -1;
}

int
crpy_resolve_reduction(const crpy_operator **op, const crpy_dtype *input,
                       PyArray_Descr *requested, const crpy_dtype **reduced,
                       const crpy_dtype **result, cr_request *request)
{
    *op = crpy_operator_for(*op, input);
    if (crpy_result_dtypes(*op, input, requested, reduced, result) < 0) {
        return -1;
    }
    request->type = input->type;
    crpy_reduction_for((*reduced)->type, (*op)->kernel_op, request);
    return 0;
}

int
crpy_open_reduction_call(PyObject *op_name, PyObject *obj,
                         PyObject *method_name, PyObject *threads_obj,
                         PyObject *axis, PyArray_Descr *requested,
                         int stream_given, uintptr_t stream,
                         crpy_reduction_call *call)
{
    cr_request *request = &call->request;
    if ((call->op = crpy_operator_named(op_name)) == NULL
        || crpy_parse_method(method_name, &request->method) < 0
        || crpy_parse_threads(threads_obj, &request->threads) < 0
        || crpy_acquire_input(obj, cr_op_gives_index(call->op->kernel_op),
                              stream_given, stream, &call->input) < 0
        || check_axis(axis, call->input.ndim) < 0) {
        return -1;
    }
    if (crpy_resolve_reduction(&call->op, call->input.dtype, requested,
                               &call->reduced, &call->result, request) < 0) {
        return -1;
    }
    request->data = call->input.data;
    request->layout = &call->input.layout;
    request->n = call->input.layout.n;
    request->location = call->input.location;
    return 0;
}

PyObject *
crpy_finish_reduction_call(const crpy_reduction_call *call,
                           const crpy_result_value *value,
                           PyObject *reduction)
{
    if (reduction == NULL || call->op->finish == NULL) {
        return Py_XNewRef(reduction);
    }
    return call->op->finish(reduction,
                            cr_op_counts(call->request.op)
                                ? value->counted.count : call->request.n,
                            call->result);
}

void
crpy_close_reduction_call(crpy_reduction_call *call)
{
    crpy_release_input(&call->input);
}

/* The result dtype's one element of a NumPy `out`: 0, or -1 with a
 * TypeError or ValueError. */
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

/* A device `out` (CUDA array interface or DLPack), acquired into *out for
 * the request: one writable element of the result's dtype.  0, or -1 with
 * an exception; release *out either way. */
static int
acquire_device_out(PyObject *obj, int stream_given, uintptr_t stream,
                   crpy_reduction_call *call, crpy_input *out)
{
    if (crpy_acquire_input(obj, 0, stream_given, stream, out) < 0) {
        return -1;
    }
    if (out->location != CR_DEVICE) {
        PyErr_SetString(PyExc_TypeError, "out must be a NumPy array or a "
                        "device array (CUDA array interface or DLPack)");
        return -1;
    }
    if (out->layout.n != 1) {
        PyErr_Format(PyExc_ValueError, "out must have exactly one element, "
                     "not %lld", (long long)out->layout.n);
        return -1;
    }
    if (out->read_only) {
        PyErr_SetString(PyExc_ValueError, "out is read-only");
        return -1;
    }
    if (out->dtype->type != call->result->type) {
        PyErr_Format(PyExc_TypeError, "out must have the result's dtype "
                     "%s, not %s", call->result->name, out->dtype->name);
        return -1;
    }
    call->request.out = (void *)cr_layout_start(out->data, &out->layout);
    call->request.reduced = call->reduced->type;
    call->request.result = call->result->type;
    call->request.divide_by_n = call->op->divides_by_count;
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

PyObject *
crpy_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "dtype",
                               "stream", "axis", "out", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *dtype_obj = Py_None, *stream_obj = Py_None, *axis = Py_None;
    PyObject *out = Py_None;
    PyArray_Descr *requested = NULL;
    PyObject *reduction = NULL, *result = NULL;
    crpy_reduction_call call = {0};
    crpy_input device_out = {0};
    int stream_given = 0;
    uintptr_t stream = 0;
    cr_error failure;
    cr_status status;
    crpy_result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO|OOOO:reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &dtype_obj,
                                     &stream_obj, &axis, &out)
        || crpy_parse_stream(stream_obj, &stream_given, &stream) < 0) {
        return NULL;
    }
    if (dtype_obj != Py_None
        && !PyArray_DescrConverter2(dtype_obj, &requested)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dtype must be a NumPy dtype, not "
                     "%R", dtype_obj);
        return NULL;
    }
    if (crpy_open_reduction_call(op_name, obj, method_name, threads_obj,
                                 axis, requested, stream_given, stream,
                                 &call) < 0) {
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
    if (out != Py_None && PyArray_Check(out)
        && check_numpy_out((PyArrayObject *)out, call.result) < 0) {
        goto done;
    }
    if (out != Py_None && !PyArray_Check(out)
        && acquire_device_out(out, stream_given, stream, &call,
                              &device_out) < 0) {
        goto done;
    }
    if (crpy_choose_streams(&call.input, stream_given, stream,
                            &call.request) < 0) {
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_reduce(&call.request, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    if (call.request.out != NULL) {
        result = Py_NewRef(out);
        goto done;
    }
    /* What the producer asked to wait for is done: the checks below run
     * on the same stream, after it. */
    call.request.wait = 0;
    reduction = crpy_box_result(&value, &call.request, call.reduced);
    if (reduction != NULL
        && (call.op->selects_element
            || crpy_report_like_numpy(&call.request, call.input.dtype,
                                      call.reduced, reduction) == 0)) {
        result = crpy_finish_reduction_call(&call, &value, reduction);
    }
    if (result != NULL && out != Py_None
        && PyArray_SETITEM((PyArrayObject *)out,
                           PyArray_DATA((PyArrayObject *)out), result) < 0) {
        Py_CLEAR(result);
    }
    if (result != NULL && out != Py_None) {
        Py_SETREF(result, Py_NewRef(out));
    }

done:
    Py_XDECREF(reduction);
    crpy_release_input(&device_out);
    crpy_close_reduction_call(&call);
    Py_XDECREF(requested);
    return result;
}

