/* call.c: one reduction call as reduce() and the bench's timers open it.
 *
 * Parses the operator, method, threads and axis, acquires the input,
 * resolves NumPy's dtypes into a cr_request, finishes the value into the
 * operator's result, and acquires a device out= (filled where it is). */
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
                     "NumPy's axis, which cudareduce takes by keyword "
                     "(axis=)",
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
crpy_open_reduction_call(const crpy_names *names, PyObject *op_name,
                         PyObject *obj, PyObject *method_name,
                         PyObject *threads_obj,
                         PyObject *axis, PyArray_Descr *requested,
                         int stream_given, uintptr_t stream,
                         crpy_reduction_call *call)
{
    cr_request *request = &call->request;
    if ((call->op = crpy_operator_named(op_name)) == NULL
        || crpy_parse_method(method_name, &request->method) < 0
        || crpy_parse_threads(threads_obj, &request->threads) < 0
        || crpy_acquire_input(obj, names,
                              cr_op_gives_index(call->op->kernel_op),
                              stream_given, stream, &call->input) < 0
        || crpy_parse_axis(axis, call->input.ndim,
                           !cr_op_gives_index(call->op->kernel_op)
                               ? CRPY_ANY_AXES
                               : cr_op_skips_nan(call->op->kernel_op)
                                     && (call->input.dtype->kind == 'f'
                                         || call->input.dtype->kind == 'c')
                                   ? CRPY_ONE_AXIS_CHECKED : CRPY_ONE_AXIS,
                           &call->reduced_axes) < 0) {
        return -1;
    }
    call->stream_given = stream_given;
    call->stream = stream;
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

int
crpy_parse_dtype(PyObject *obj, PyArray_Descr **requested)
{
    if (obj != Py_None && !PyArray_DescrConverter2(obj, requested)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dtype must be a NumPy dtype, not "
                     "%R", obj);
        return -1;
    }
    return 0;
}

void
crpy_mark_exact(crpy_reduction_call *call)
{
    call->request.exact = 1;
    call->request.reduced = call->reduced->type;
    call->request.result = call->result->type;
    call->request.divide_by_n = call->op->divides_by_count;
}

void
crpy_close_reduction_call(crpy_reduction_call *call)
{
    crpy_release_input(&call->input);
}

int
crpy_acquire_device_out(PyObject *obj, crpy_reduction_call *call,
                        int any_dtype, crpy_input *out)
{
    if (crpy_acquire_input(obj, call->input.names, 0, call->stream_given,
                           call->stream, out) < 0) {
        return -1;
    }
    if (out->location != CR_DEVICE) {
        PyErr_SetString(PyExc_TypeError, "out must be a NumPy array or a "
                        "device array (CUDA array interface or DLPack)");
        return -1;
    }
    if (out->read_only) {
        PyErr_SetString(PyExc_ValueError, "out is read-only");
        return -1;
    }
    if (!any_dtype && out->dtype->type != call->result->type) {
        PyErr_Format(PyExc_TypeError, "out must have the result's dtype "
                     "%s, not %s", call->result->name, out->dtype->name);
        return -1;
    }
    call->request.out = (void *)cr_layout_start(out->data, &out->layout);
    call->request.reduced = call->reduced->type;
    call->request.result = out->dtype->type;
    call->request.divide_by_n = call->op->divides_by_count;
    return 0;
}
