/* module.c: cudareduce._cudareduce, the Python face of the CUDA layer.
 *
 * Turns Python arguments into a cr_request (method and dtype by table
 * lookup), calls cuda/ with the GIL released, and turns cr_status codes into
 * Python exceptions.  No kernel code and no CUDA header here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include "cudareduce.h"

typedef struct {
    PyObject *cuda_error;   /* cudareduce.CudaError */
} module_state;

static inline module_state *
get_module_state(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

/* NumPy dtypes the kernels take, matched by kind and size so that every
 * alias (int64, longlong, ...) and byte order of a type lands on one row. */
typedef struct {
    char kind;
    int itemsize;
    int typenum;        /* native NumPy type the data is brought to */
    cr_type type;
} dtype_entry;

static const dtype_entry dtype_table[] = {
    {'i', 4, NPY_INT32, CR_TYPE_INT32},
    {'i', 8, NPY_INT64, CR_TYPE_INT64},
    {'f', 4, NPY_FLOAT32, CR_TYPE_FLOAT32},
    {'f', 8, NPY_FLOAT64, CR_TYPE_FLOAT64},
};

#define DTYPE_COUNT (sizeof(dtype_table) / sizeof(dtype_table[0]))

static const char *const op_names[CR_OP_COUNT] = {"sum"};

static const dtype_entry *
lookup_dtype(PyArray_Descr *descr)
{
    for (size_t i = 0; i < DTYPE_COUNT; i++) {
        if (descr->kind == dtype_table[i].kind
            && PyDataType_ELSIZE(descr) == dtype_table[i].itemsize) {
            return &dtype_table[i];
        }
    }
    PyErr_Format(PyExc_TypeError,
                 "cudareduce does not support dtype %R; supported dtypes: "
                 "float32, float64, int32, int64", (PyObject *)descr);
    return NULL;
}

/* The NumPy type number of a cr_type (accumulators and results). */
static int
typenum_of(cr_type type)
{
    for (size_t i = 0; i < DTYPE_COUNT; i++) {
        if (dtype_table[i].type == type) {
            return dtype_table[i].typenum;
        }
    }
    return NPY_NOTYPE;
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
parse_op(PyObject *name, cr_op *op)
{
    for (int o = 0; o < CR_OP_COUNT; o++) {
        if (PyUnicode_Check(name)
            && PyUnicode_CompareWithASCIIString(name, op_names[o]) == 0) {
            *op = (cr_op)o;
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

/* The array to reduce: any array-like, brought to a C-contiguous, aligned,
 * native-byte-order array of a supported dtype (a copy only if needed). */
static PyArrayObject *
acquire_input(PyObject *obj, const dtype_entry **entry)
{
    PyArrayObject *array = NULL;
    PyArrayObject *given = (PyArrayObject *)PyArray_FromAny(
        obj, NULL, 0, 0, 0, NULL);
    if (given == NULL) {
        return NULL;
    }
    *entry = lookup_dtype(PyArray_DESCR(given));
    if (*entry != NULL) {
        array = (PyArrayObject *)PyArray_FROM_OTF(
            (PyObject *)given, (*entry)->typenum, NPY_ARRAY_IN_ARRAY);
    }
    Py_DECREF(given);
    return array;
}

/* Large enough for any accumulator. */
typedef union {
    int64_t i;
    double d;
} result_value;

/* Fills `request` from the Python arguments; returns the array that owns
 * request->data (a new reference), or NULL with an exception set. */
static PyArrayObject *
build_request(PyObject *op_name, PyObject *obj, PyObject *method_name,
              PyObject *threads_obj, cr_request *request)
{
    const dtype_entry *entry = NULL;
    PyArrayObject *array;

    if (parse_op(op_name, &request->op) < 0
        || parse_method(method_name, &request->method) < 0
        || parse_threads(threads_obj, &request->threads) < 0) {
        return NULL;
    }
    array = acquire_input(obj, &entry);
    if (array == NULL) {
        return NULL;
    }
    request->data = PyArray_DATA(array);
    request->n = (int64_t)PyArray_SIZE(array);
    request->type = entry->type;
    return array;
}

/* The result as a NumPy scalar of the request's result dtype. */
static PyObject *
box_result(const cr_request *request, result_value *value)
{
    PyArray_Descr *descr = PyArray_DescrFromType(
        typenum_of(cr_accumulator_type(request->type, request->op)));
    if (descr == NULL) {
        return NULL;
    }
    PyObject *scalar = PyArray_Scalar(value, descr, NULL);
    Py_DECREF(descr);
    return scalar;
}

PyDoc_STRVAR(reduce_doc,
"reduce(op, a, method, threads)\n--\n\n"
"Reduce all elements of the array-like `a` with operator `op` on the GPU;\n"
"returns a NumPy scalar of NumPy's result dtype.");

static PyObject *
cudareduce_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyArrayObject *array;
    PyObject *result = NULL;
    cr_request request;
    cr_error failure;
    cr_status status;
    result_value value;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO:reduce", keywords,
                                     &op_name, &obj, &method_name,
                                     &threads_obj)) {
        return NULL;
    }
    array = build_request(op_name, obj, method_name, threads_obj, &request);
    if (array == NULL) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_reduce_host(&request, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        raise_cr_error(get_module_state(module), status, &failure);
    }
    else {
        result = box_result(&request, &value);
    }
    Py_DECREF(array);
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
    PyArrayObject *array = NULL;
    PyObject *scalar = NULL, *times = NULL, *result = NULL;
    float *times_ms = NULL;
    cr_timing_request timing;
    cr_error failure;
    cr_status status;
    result_value value;

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
    array = build_request(op_name, obj, method_name, threads_obj,
                          &timing.request);
    if (array == NULL) {
        goto error;
    }
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
    scalar = box_result(&timing.request, &value);
    times = times_to_list(times_ms, timing.reps);
    if (scalar != NULL && times != NULL) {
        result = PyTuple_Pack(2, scalar, times);
    }

error:
    Py_XDECREF(scalar);
    Py_XDECREF(times);
    PyMem_Free(times_ms);
    Py_XDECREF(array);
    return result;
}

PyDoc_STRVAR(time_copy_doc,
"time_copy(nbytes, reps)\n--\n\n"
"Times `reps` device-to-device copies of `nbytes` bytes with CUDA events;\n"
"returns the times in milliseconds.");

static PyObject *
cudareduce_time_copy(PyObject *module, PyObject *args)
{
    long long nbytes;
    int reps;
    float *times_ms;
    PyObject *result = NULL;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTuple(args, "Li:time_copy", &nbytes, &reps)) {
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
    status = cr_time_copy(nbytes, reps, times_ms, &failure);
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
    const dtype_entry *entry;
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
        || (entry = lookup_dtype(descr)) == NULL) {
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
    cr_type acc = cr_accumulator_type(entry->type, CR_OP_SUM);
    status = cr_plan_launch(n, method, threads, cr_type_size(acc),
                            sm_count, &plan, &failure);
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
