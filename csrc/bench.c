/* bench.c: the bench's bindings, and the tests' fault hook.
 *
 * time_reduce and time_probe (cuda/'s timers), the stream holders that
 * time other libraries' work alike (stream_hold, hold_stream,
 * release_stream), and _inject_host_fault.  Not part of the reductions'
 * API: cudareduce.bench and the tests call them. */
#include "extension.h"

#include <string.h>

/* Timing k of a C array of them, as a float. */
static PyObject *
time_item(const void *times_ms, int k)
{
    return PyFloat_FromDouble(((const float *)times_ms)[k]);
}

/* A list of floats from a C array of timings. */
static PyObject *
times_to_list(const float *times_ms, int count)
{
    return crpy_sequence(count, 1, time_item, times_ms);
}

/* The timing modes by name, in cr_timing_mode order. */
static const char *const timing_mode_names[CR_TIMING_MODE_COUNT] = {
    "launch", "cold", "batch"};

/* mode, buffers, warmup, reps, batch: a cr_timing, checked. */
static int
parse_timing(const char *mode, int buffers, int warmup, int reps, int batch,
             cr_timing *timing)
{
    int m = 0;
    while (m < CR_TIMING_MODE_COUNT && strcmp(mode, timing_mode_names[m])) {
        m++;
    }
    if (m == CR_TIMING_MODE_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown timing mode '%s': 'launch', "
                     "'cold' or 'batch'", mode);
        return -1;
    }
    if (buffers < 1 || warmup < 0 || reps < 1 || batch < 1
        || (batch > 1 && m != CR_TIMING_BATCH)) {
        PyErr_SetString(PyExc_ValueError, "buffers >= 1, warmup >= 0, "
                        "reps >= 1, batch >= 1 (> 1 only in 'batch' mode)");
        return -1;
    }
    *timing = (cr_timing){(cr_timing_mode)m, buffers, warmup, reps, batch};
    return 0;
}

PyObject *
crpy_time_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "buffers",
                               "warmup", "reps", "mode", "batch", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *scalar = NULL, *times = NULL, *pass_lists = NULL;
    PyObject *result = NULL;
    const char *mode;
    int buffers, warmup, reps, batch = 1, passes = 0;
    float *times_ms = NULL, *pass_ms = NULL;
    cr_timing timing;
    crpy_reduction_call call = {0};
    cr_error failure;
    cr_status status;
    crpy_result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOiiis|i:time_reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &buffers, &warmup, &reps,
                                     &mode, &batch)
        || parse_timing(mode, buffers, warmup, reps, batch, &timing) < 0) {
        return NULL;
    }
    if (crpy_open_reduction_call(&crpy_get_state(module)->names, op_name,
                                 obj, method_name, threads_obj,
                                 Py_None, NULL, 0, 0, &call) < 0) {
        goto done;
    }
    if (call.input.location != CR_HOST || !call.input.layout.contiguous) {
        PyErr_SetString(PyExc_ValueError, "time_reduce takes a contiguous "
                        "host array");
        goto done;
    }
    times_ms = PyMem_Calloc((size_t)reps, sizeof(float));
    pass_ms = PyMem_Calloc((size_t)reps * CR_MAX_PASSES, sizeof(float));
    if (times_ms == NULL || pass_ms == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_reduce(&call.request, &timing, times_ms, pass_ms,
                            &passes, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    scalar = crpy_box_result(&value, &call.request, call.reduced);
    Py_XSETREF(scalar, crpy_finish_reduction_call(&call, &value, scalar));
    times = times_to_list(times_ms, reps);
    if (timing.mode != CR_TIMING_COLD) {
        pass_lists = Py_NewRef(Py_None);
    }
    else if ((pass_lists = PyList_New(reps)) != NULL) {
        for (int r = 0; r < reps; r++) {
            PyObject *row = times_to_list(pass_ms + r * CR_MAX_PASSES,
                                          passes);
            if (row == NULL) {
                Py_CLEAR(pass_lists);
                break;
            }
            PyList_SET_ITEM(pass_lists, r, row);
        }
    }
    if (scalar != NULL && times != NULL && pass_lists != NULL) {
        result = PyTuple_Pack(3, scalar, times, pass_lists);
    }

done:
    Py_XDECREF(scalar);
    Py_XDECREF(times);
    Py_XDECREF(pass_lists);
    PyMem_Free(times_ms);
    PyMem_Free(pass_ms);
    crpy_close_reduction_call(&call);
    return result;
}

/* The probes by name, in cr_probe order. */
static const char *const probe_names[CR_PROBE_COUNT] = {
    "empty", "read", "host_copy", "launch_poll"};

PyObject *
crpy_time_probe(PyObject *module, PyObject *args)
{
    const char *name, *mode;
    long long nbytes;
    int buffers, warmup, reps, batch = 1, probe = 0;
    float *times_ms;
    PyObject *result = NULL;
    cr_timing timing;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTuple(args, "sLiiis|i:time_probe", &name, &nbytes,
                          &buffers, &warmup, &reps, &mode, &batch)
        || parse_timing(mode, buffers, warmup, reps, batch, &timing) < 0) {
        return NULL;
    }
    while (probe < CR_PROBE_COUNT && strcmp(name, probe_names[probe])) {
        probe++;
    }
    if (probe == CR_PROBE_COUNT || nbytes < 0
        || (nbytes == 0) != (probe == CR_PROBE_EMPTY
                             || probe == CR_PROBE_LAUNCH_POLL)) {
        PyErr_Format(PyExc_ValueError, "probe must be 'empty' or "
                     "'launch_poll' (nbytes 0), 'read' or 'host_copy' "
                     "(nbytes >= 1), got '%s', %lld", name, nbytes);
        return NULL;
    }
    times_ms = PyMem_Calloc((size_t)reps, sizeof(float));
    if (times_ms == NULL) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_probe((cr_probe)probe, nbytes, &timing, times_ms,
                           &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
    }
    else {
        result = times_to_list(times_ms, reps);
    }
    PyMem_Free(times_ms);
    return result;
}

/* A stream holder as a capsule; its destructor lets a held stream go, so
 * that a dropped holder never leaves the GPU spinning. */
static const char stream_hold_capsule[] = "cudareduce.stream_hold";

static void
stream_hold_capsule_free(PyObject *capsule)
{
    cr_stream_hold *hold = PyCapsule_GetPointer(capsule, stream_hold_capsule);
    Py_BEGIN_ALLOW_THREADS
    cr_stream_hold_destroy(hold);
    Py_END_ALLOW_THREADS
}

PyObject *
crpy_stream_hold(PyObject *module, PyObject *stream_obj)
{
    int given = 0;
    uintptr_t stream = 0;
    cr_stream_hold *hold = NULL;
    cr_error failure;
    cr_status status;
    PyObject *capsule;

    if (crpy_parse_stream(stream_obj, &given, &stream) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_stream_hold_create(stream, &hold, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    capsule = PyCapsule_New(hold, stream_hold_capsule,
                            stream_hold_capsule_free);
    if (capsule == NULL) {
        cr_stream_hold_destroy(hold);
    }
    return capsule;
}

/* hold_stream and release_stream: one step of a holder. */
static PyObject *
stream_hold_step(PyObject *module, PyObject *capsule, int hold_it,
                 int flush_l2)
{
    cr_stream_hold *hold = PyCapsule_GetPointer(capsule, stream_hold_capsule);
    cr_error failure;
    cr_status status;
    if (hold == NULL) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = hold_it ? cr_stream_hold_hold(hold, flush_l2, &failure)
                     : cr_stream_hold_release(hold, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyObject *
crpy_hold_stream(PyObject *module, PyObject *args)
{
    PyObject *capsule;
    int flush_l2;
    if (!PyArg_ParseTuple(args, "Op:hold_stream", &capsule, &flush_l2)) {
        return NULL;
    }
    return stream_hold_step(module, capsule, 1, flush_l2);
}

PyObject *
crpy_release_stream(PyObject *module, PyObject *capsule)
{
    return stream_hold_step(module, capsule, 0, 0);
}

PyObject *
crpy_inject_host_fault(PyObject *module, PyObject *arg)
{
    long long chunk = PyLong_AsLongLong(arg);
    if (chunk == -1 && PyErr_Occurred()) {
        return NULL;
    }
    cr_inject_host_fault(chunk);
    Py_RETURN_NONE;
}
