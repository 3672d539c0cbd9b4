/* module.c: cudareduce._cudareduce, the Python face of the CUDA layer.
 *
 * Turns Python arguments into a cr_request (method and dtype by table
 * lookup), calls cuda/ with the GIL released, and turns cr_status codes into
 * Python exceptions.  No kernel code and no CUDA header here.
 */
#define CUDAREDUCE_MODULE_C     /* the file that imports NumPy's API */
#include "extension.h"

typedef struct {
    PyObject *cuda_error;   /* cudareduce.CudaError */
} module_state;

static inline module_state *
get_module_state(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

static int
parse_method(PyObject *name, cr_method *method)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "method must be a str, not %.100s",
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

static int
parse_op(PyObject *name, crpy_op *op)
{
    for (int o = 0; o < CRPY_OP_COUNT; o++) {
        if (PyUnicode_Check(name)
            && PyUnicode_CompareWithASCIIString(name, crpy_op_name(o)) == 0) {
            *op = (crpy_op)o;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown operator %R", name);
    return -1;
}

/* threads: an int (not a bool, not a float), a power of two in range. */
static int
parse_threads(PyObject *value, int *threads)
{
    if (!PyLong_Check(value) || PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "threads must be an int, not %.100s",
                     Py_TYPE(value)->tp_name);
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

/* Raises the Python exception for a failed cuda/ call. */
static void
raise_cr_error(module_state *state, cr_status status, const cr_error *failure)
{
    switch (status) {
    case CR_ERR_INVALID:
        PyErr_SetString(PyExc_ValueError, failure->message);
        break;
    case CR_ERR_NO_MEMORY:
        PyErr_Format(PyExc_MemoryError, "out of GPU memory: %s",
                     failure->message);
        break;
    case CR_ERR_NO_DEVICE:
        PyErr_Format(state->cuda_error, "no usable CUDA device: %s",
                     failure->message);
        break;
    default:
        PyErr_SetString(state->cuda_error, failure->message);
        break;
    }
}

/* stream=: None, a cudaStream_t as an int (0: the legacy default stream),
 * or a stream object of CuPy (.ptr), PyTorch (.cuda_stream) or any with
 * the __cuda_stream__ protocol ((version, handle)). */
static int
parse_stream(PyObject *obj, int *given, uintptr_t *handle)
{
    PyObject *value = NULL;
    *given = 0;
    if (obj == Py_None) {
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        value = Py_NewRef(obj);
    }
    else if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
        PyObject *pair = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
        if (pair == NULL) {
            return -1;
        }
        if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
            value = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
        }
        Py_DECREF(pair);
    }
    else if (PyObject_HasAttrString(obj, "cuda_stream")) {
        value = PyObject_GetAttrString(obj, "cuda_stream");
    }
    else if (PyObject_HasAttrString(obj, "ptr")) {
        value = PyObject_GetAttrString(obj, "ptr");
    }
    if (value == NULL || !PyLong_Check(value)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "stream must be None, an int "
                         "handle or a CUDA stream object (CuPy, PyTorch, "
                         "__cuda_stream__), not %.100s", Py_TYPE(obj)->tp_name);
        }
        Py_XDECREF(value);
        return -1;
    }
    unsigned long long h = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "stream handle must be an int "
                        ">= 0");
        return -1;
    }
    *given = 1;
    *handle = (uintptr_t)h;
    return 0;
}

/* Large enough for any accumulator. */
typedef union {
    uint64_t u;
    int64_t i;
    float f;
    double d;
} result_value;

/* The value at `value`, of NumPy type `from`, as a NumPy scalar of type
 * `to` (an unsafe cast, as numpy.sum's dtype= does: integers keep their
 * low bits). */
static PyObject *
scalar_as(const void *value, int from, int to)
{
    PyArray_Descr *descr = PyArray_DescrFromType(from);
    if (descr == NULL) {
        return NULL;
    }
    PyObject *scalar = PyArray_Scalar((void *)value, descr, NULL);
    Py_DECREF(descr);
    if (scalar == NULL || from == to) {
        return scalar;
    }
    PyObject *array = PyArray_FromScalar(scalar, NULL);
    Py_DECREF(scalar);
    if (array == NULL || (descr = PyArray_DescrFromType(to)) == NULL) {
        Py_XDECREF(array);
        return NULL;
    }
    PyObject *cast = PyArray_CastToType((PyArrayObject *)array, descr, 0);
    Py_DECREF(array);
    return cast == NULL ? NULL : PyArray_Return((PyArrayObject *)cast);
}

/* The result of `op` as a NumPy scalar of `result`'s dtype: the
 * accumulator's value, or for a mean that value over n (NaN, with
 * NumPy's warning, for n == 0). */
static PyObject *
box_result(crpy_op op, const crpy_dtype *result, cr_type acc,
           const result_value *value, int64_t n)
{
    if (op != CRPY_MEAN) {
        return scalar_as(value, crpy_dtype_of_type(acc)->typenum,
                         result->typenum);
    }
    /* Level 2: the warning points at the caller of cudareduce.mean. */
    if (n == 0 && PyErr_WarnEx(PyExc_RuntimeWarning, "Mean of empty slice.",
                               2) < 0) {
        return NULL;
    }
    if (acc == CR_TYPE_FLOAT32) {
        /* numpy.mean divides a float32 sum in float32. */
        float quotient = value->f / (float)n;
        return scalar_as(&quotient, NPY_FLOAT32, result->typenum);
    }
    double sum = acc == CR_TYPE_FLOAT64 ? value->d
                 : acc == CR_TYPE_UINT64 ? (double)value->u
                 : (double)value->i;
    double quotient = sum / (double)n;
    return scalar_as(&quotient, NPY_FLOAT64, result->typenum);
}

/* The per-thread default stream, the interface's value 2: it orders
 * itself after the legacy default stream, where producers that report no
 * stream (Numba) queue their work. */
#define PER_THREAD_STREAM 2

PyDoc_STRVAR(reduce_doc,
"reduce(op, a, method, threads, dtype=None, stream=None)\n--\n\n"
"Reduce all elements of the array-like `a` with operator `op` ('sum',\n"
"'mean', 'min', 'max') on the GPU; returns a NumPy scalar of NumPy's\n"
"result dtype (or `dtype`).  Device arrays (__cuda_array_interface__,\n"
"DLPack) are read in place.");

static PyObject *
cudareduce_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "dtype",
                               "stream", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *dtype_obj = Py_None, *stream_obj = Py_None;
    PyArray_Descr *requested = NULL;
    PyObject *result = NULL;
    const crpy_dtype *result_dtype;
    crpy_input input = {0};
    crpy_op op;
    int stream_given = 0;
    uintptr_t stream = PER_THREAD_STREAM;
    cr_request request = {0};
    cr_error failure;
    cr_status status;
    result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO|OO:reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &dtype_obj,
                                     &stream_obj)) {
        return NULL;
    }
    if (parse_op(op_name, &op) < 0
        || parse_method(method_name, &request.method) < 0
        || parse_threads(threads_obj, &request.threads) < 0
        || parse_stream(stream_obj, &stream_given, &stream) < 0) {
        return NULL;
    }
    if (dtype_obj != Py_None
        && !PyArray_DescrConverter2(dtype_obj, &requested)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dtype must be a NumPy dtype, not "
                     "%R", dtype_obj);
        return NULL;
    }
    if (crpy_acquire_input(obj, stream_given, stream, &input) < 0) {
        goto error;
    }
    result_dtype = crpy_result_dtype(op, input.dtype, requested);
    if (result_dtype == NULL) {
        goto error;
    }
    /* Run on the caller's stream, after the producer's work; else on the
     * producer's stream itself. */
    if (input.has_producer_stream) {
        if (stream_given) {
            request.wait = input.producer_stream != stream;
            request.wait_stream = input.producer_stream;
        }
        else {
            stream = input.producer_stream;
        }
    }
    request.data = input.data;
    request.layout = &input.layout;
    request.n = input.n;
    request.type = input.dtype->type;
    request.op = crpy_kernel_op(op);
    request.acc = cr_accumulator_type(result_dtype->type, request.op);
    request.location = input.location;
    request.stream = stream;
    Py_BEGIN_ALLOW_THREADS
    status = cr_reduce(&request, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        raise_cr_error(get_module_state(module), status, &failure);
        goto error;
    }
    result = box_result(op, result_dtype, request.acc, &value, request.n);

error:
    crpy_release_input(&input);
    Py_XDECREF(requested);
    return result;
}

/* A list of floats from a C array of timings. */
static PyObject *
times_to_list(const float *times_ms, int count)
{
    PyObject *list = PyList_New(count);
    for (int r = 0; list != NULL && r < count; r++) {
        PyObject *item = PyFloat_FromDouble(times_ms[r]);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, r, item);
    }
    return list;
}

PyDoc_STRVAR(time_reduce_doc,
"time_reduce(op, a, method, threads, buffers, warmup, reps)\n--\n\n"
"Copy the array-like `a` to `buffers` device buffers, then time `reps`\n"
"reductions (after `warmup` untimed ones), rotating among the buffers,\n"
"with CUDA events around each run's kernels.  Returns (result of the last\n"
"run as a NumPy scalar, list of the times in milliseconds).");

static PyObject *
cudareduce_time_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "buffers",
                               "warmup", "reps", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *scalar = NULL, *times = NULL, *result = NULL;
    const crpy_dtype *result_dtype;
    crpy_input input = {0};
    crpy_op op;
    float *times_ms = NULL;
    cr_timing_request timing = {0};
    cr_request *request = &timing.request;
    cr_error failure;
    cr_status status;
    result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOiii:time_reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &timing.buffers,
                                     &timing.warmup, &timing.reps)) {
        return NULL;
    }
    if (timing.reps < 1) {
        PyErr_SetString(PyExc_ValueError, "reps must be >= 1");
        return NULL;
    }
    if (parse_op(op_name, &op) < 0
        || parse_method(method_name, &request->method) < 0
        || parse_threads(threads_obj, &request->threads) < 0
        || crpy_acquire_input(obj, 0, 0, &input) < 0) {
        return NULL;
    }
    if (input.location != CR_HOST || !input.layout.contiguous) {
        PyErr_SetString(PyExc_ValueError, "time_reduce takes a contiguous "
                        "host array");
        goto error;
    }
    if ((result_dtype = crpy_result_dtype(op, input.dtype, NULL)) == NULL) {
        goto error;
    }
    request->data = (const char *)input.data + input.layout.offset;
    request->n = input.n;
    request->type = input.dtype->type;
    request->op = crpy_kernel_op(op);
    request->acc = cr_accumulator_type(result_dtype->type, request->op);
    request->location = CR_HOST;
    times_ms = PyMem_Calloc((size_t)timing.reps, sizeof(float));
    if (times_ms == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_reduce(&timing, times_ms, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        raise_cr_error(get_module_state(module), status, &failure);
        goto error;
    }
    scalar = box_result(op, result_dtype, request->acc, &value, request->n);
    times = times_to_list(times_ms, timing.reps);
    if (scalar != NULL && times != NULL) {
        result = PyTuple_Pack(2, scalar, times);
    }

error:
    Py_XDECREF(scalar);
    Py_XDECREF(times);
    PyMem_Free(times_ms);
    crpy_release_input(&input);
    return result;
}

PyDoc_STRVAR(time_copy_doc,
"time_copy(nbytes, reps, from_host=False)\n--\n\n"
"Times `reps` device-to-device copies of `nbytes` bytes (from_host: copies\n"
"from pinned host memory to the device) with CUDA events; returns the\n"
"times in milliseconds.");

static PyObject *
cudareduce_time_copy(PyObject *module, PyObject *args)
{
    long long nbytes;
    int reps;
    int from_host = 0;
    float *times_ms;
    PyObject *result = NULL;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTuple(args, "Li|p:time_copy", &nbytes, &reps,
                          &from_host)) {
        return NULL;
    }
    if (reps < 1 || nbytes < 1) {
        PyErr_SetString(PyExc_ValueError, "nbytes and reps must be >= 1");
        return NULL;
    }
    times_ms = PyMem_Calloc((size_t)reps, sizeof(float));
    if (times_ms == NULL) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_copy(nbytes, from_host, reps, times_ms, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        raise_cr_error(get_module_state(module), status, &failure);
    }
    else {
        result = times_to_list(times_ms, reps);
    }
    PyMem_Free(times_ms);
    return result;
}

PyDoc_STRVAR(plan_doc,
"plan(n, method, threads, dtype, sm_count)\n--\n\n"
"The launch passes of reducing n elements of `dtype`: a list of dicts\n"
"(n_in, blocks, threads, items_per_thread, shared_bytes).  sm_count None\n"
"asks the current device, and only for methods whose grid depends on it.");

static PyObject *
cudareduce_plan(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"n", "method", "threads", "dtype", "sm_count",
                               NULL};
    module_state *state = get_module_state(module);
    long long n;
    PyObject *method_name, *threads_obj, *sm_count_obj;
    PyArray_Descr *descr = NULL;
    PyObject *passes = NULL;
    const crpy_dtype *dtype;
    cr_method method;
    int threads;
    int sm_count = 0;
    cr_plan plan;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LOOO&O:plan", keywords,
                                     &n, &method_name, &threads_obj,
                                     PyArray_DescrConverter, &descr,
                                     &sm_count_obj)) {
        return NULL;
    }
    if (parse_method(method_name, &method) < 0
        || parse_threads(threads_obj, &threads) < 0
        || (dtype = crpy_lookup_dtype(descr)) == NULL) {
        goto error;
    }
    /* Before any device query: a bad n is the caller's error, GPU or not. */
    if (n < 0 || n > CR_MAX_ELEMENTS) {
        PyErr_Format(PyExc_ValueError, "n must be from 0 to 2^62, got %lld",
                     n);
        goto error;
    }
    if (sm_count_obj != Py_None) {
        if (!PyLong_Check(sm_count_obj) || PyBool_Check(sm_count_obj)) {
            PyErr_SetString(PyExc_TypeError, "sm_count must be an int or None");
            goto error;
        }
        long value = PyLong_AsLong(sm_count_obj);
        if (value == -1 && PyErr_Occurred()) {
            goto error;
        }
        if (value <= 0 || value > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "sm_count must be > 0, got %R",
                         sm_count_obj);
            goto error;
        }
        sm_count = (int)value;
    }
    else if (cr_method_needs_sm_count(method) && n > 0) {
        cr_device_info info;
        Py_BEGIN_ALLOW_THREADS
        status = cr_device_query(&info, &failure);
        Py_END_ALLOW_THREADS
        if (status != CR_OK) {
            raise_cr_error(state, status, &failure);
            goto error;
        }
        sm_count = info.sm_count;
    }
    const crpy_dtype *sum_dtype = crpy_result_dtype(CRPY_SUM, dtype, NULL);
    cr_type acc = cr_accumulator_type(sum_dtype->type, CR_OP_SUM);
    status = cr_plan_launch(n, method, threads, cr_type_size(dtype->type),
                            cr_type_size(acc), sm_count, &plan, &failure);
    if (status != CR_OK) {
        raise_cr_error(state, status, &failure);
        goto error;
    }
    passes = PyList_New(plan.count);
    for (int p = 0; passes != NULL && p < plan.count; p++) {
        const cr_pass *pass = &plan.pass[p];
        PyObject *record = Py_BuildValue(
            "{s:L,s:L,s:i,s:L,s:n}", "n_in", (long long)pass->n_in,
            "blocks", (long long)pass->blocks, "threads", pass->threads,
            "items_per_thread", (long long)pass->items_per_thread,
            "shared_bytes", (Py_ssize_t)pass->shared_bytes);
        if (record == NULL) {
            Py_CLEAR(passes);
            break;
        }
        PyList_SET_ITEM(passes, p, record);
    }

error:
    Py_XDECREF(descr);
    return passes;
}

PyDoc_STRVAR(methods_doc,
"methods()\n--\n\n"
"(name, description) of every method, in ladder order.");

static PyObject *
cudareduce_methods(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(CR_METHOD_COUNT);
    for (int m = 0; list != NULL && m < CR_METHOD_COUNT; m++) {
        PyObject *item = Py_BuildValue("(ss)", cr_method_name(m),
                                       cr_method_description(m));
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, m, item);
    }
    return list;
}

PyDoc_STRVAR(device_info_doc,
"device_info()\n--\n\n"
"The current CUDA device: dict of ordinal, name, sm_count, l2_bytes,\n"
"total_bytes.  Raises CudaError when there is none.");

static PyObject *
cudareduce_device_info(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    cr_device_info info;
    cr_error failure;
    cr_status status;

    Py_BEGIN_ALLOW_THREADS
    status = cr_device_query(&info, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        raise_cr_error(get_module_state(module), status, &failure);
        return NULL;
    }
    return Py_BuildValue("{s:i,s:s,s:i,s:L,s:L}", "ordinal", info.ordinal,
                         "name", info.name, "sm_count", info.sm_count,
                         "l2_bytes", (long long)info.l2_bytes,
                         "total_bytes", (long long)info.total_bytes);
}

PyDoc_STRVAR(inject_host_fault_doc,
"_inject_host_fault(chunk)\n--\n\n"
"For tests: the next host-array reduction that reaches chunk `chunk`\n"
"(from 0) fails there, with its copy and reduction in flight, as if GPU\n"
"memory had run out (MemoryError); a negative chunk cancels.");

static PyObject *
cudareduce_inject_host_fault(PyObject *module, PyObject *arg)
{
    long long chunk = PyLong_AsLongLong(arg);
    if (chunk == -1 && PyErr_Occurred()) {
        return NULL;
    }
    cr_inject_host_fault(chunk);
    Py_RETURN_NONE;
}

static PyMethodDef cudareduce_functions[] = {
    {"reduce", (PyCFunction)(void (*)(void))cudareduce_reduce,
     METH_VARARGS | METH_KEYWORDS, reduce_doc},
    {"plan", (PyCFunction)(void (*)(void))cudareduce_plan,
     METH_VARARGS | METH_KEYWORDS, plan_doc},
    {"time_reduce", (PyCFunction)(void (*)(void))cudareduce_time_reduce,
     METH_VARARGS | METH_KEYWORDS, time_reduce_doc},
    {"time_copy", cudareduce_time_copy, METH_VARARGS, time_copy_doc},
    {"methods", cudareduce_methods, METH_NOARGS, methods_doc},
    {"device_info", cudareduce_device_info, METH_NOARGS, device_info_doc},
    {"_inject_host_fault", cudareduce_inject_host_fault, METH_O,
     inject_host_fault_doc},
    {NULL, NULL, 0, NULL}
};

PyDoc_STRVAR(cuda_error_doc,
"A CUDA runtime error: no device or driver, or a failed CUDA call.\n"
"The message names the CUDA error.");

static int
cudareduce_exec(PyObject *module)
{
    module_state *state = get_module_state(module);

    import_array1(-1);
    state->cuda_error = PyErr_NewExceptionWithDoc(
        "cudareduce.CudaError", cuda_error_doc, PyExc_RuntimeError, NULL);
    if (state->cuda_error == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "CudaError", state->cuda_error) < 0) {
        return -1;
    }
    return 0;
}

static int
cudareduce_traverse(PyObject *module, visitproc visit, void *arg)
{
    Py_VISIT(get_module_state(module)->cuda_error);
    return 0;
}

static int
cudareduce_clear(PyObject *module)
{
    Py_CLEAR(get_module_state(module)->cuda_error);
    return 0;
}

static void
cudareduce_free(void *module)
{
    (void)cudareduce_clear((PyObject *)module);
    cr_release_resources();
}

static PyModuleDef_Slot cudareduce_slots[] = {
    {Py_mod_exec, cudareduce_exec},
    {0, NULL}
};

static struct PyModuleDef cudareduce_module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "cudareduce._cudareduce",
    .m_doc = "C extension of cudareduce: GPU reductions through cuda/.",
    .m_size = sizeof(module_state),
    .m_methods = cudareduce_functions,
    .m_slots = cudareduce_slots,
    .m_traverse = cudareduce_traverse,
    .m_clear = cudareduce_clear,
    .m_free = cudareduce_free,
};

PyMODINIT_FUNC
PyInit__cudareduce(void)
{
    return PyModuleDef_Init(&cudareduce_module);
}
