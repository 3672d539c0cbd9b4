/* module.c: cudareduce._cudareduce, the Python face of the CUDA layer.
 *
 * The module: its state (CudaError, the names a call looks up by:
 * extension.h's crpy_state), its method table with the functions' docs
 * (the functions are in reduce.c, facts.c and bench.c), and
 * exec/traverse/clear/free.  No kernel code and no CUDA header here.
 */
#define CUDAREDUCE_MODULE_C     /* the file that imports NumPy's API */
#include "extension.h"


PyDoc_STRVAR(reduce_doc,
"reduce(op, a, method, threads, dtype=None, stream=None, axis=None,\n"
"       out=None, keepdims=False, allocate=None)\n--\n\n"
"Reduce the array-like `a` with operator `op` (one of OPERATORS) on the\n"
"GPU along `axis` (None: every axis), as numpy.<op>(a, axis=axis,\n"
"keepdims=keepdims) does.  Over every axis: a NumPy scalar of NumPy's\n"
"result dtype (or `dtype`; an index operator's intp index, in the C\n"
"order of `a`), with NumPy's floating-point warnings.  Along some axes:\n"
"a NumPy array for host data; for device data the array\n"
"allocate(a, shape, dtype_name, device) returns, filled.\n"
"Device arrays (__cuda_array_interface__, DLPack) are read in place.\n"
"With `out` (of the result's shape and dtype; over every axis any one\n"
"element) the result is written there and `out` returned: a device\n"
"`out` without waiting and without warnings.\n"
"`threads` None is the method's default for the input's size.");

PyDoc_STRVAR(plan_doc,
"plan(n, method, threads, dtype, sm_count)\n--\n\n"
"The launch passes of reducing n elements of `dtype`: a list of dicts\n"
"(n_in, blocks, threads, items_per_thread, shared_bytes).  threads None\n"
"is the method's default for n and dtype; sm_count None asks the\n"
"current device, and only for methods whose grid depends on it.");

PyDoc_STRVAR(block_sizes_doc,
"block_sizes(op, dtype, method, reduce_dtype=None)\n--\n\n"
"The threads per block that `method` takes for operator `op` on elements\n"
"of `dtype` (with `reduce_dtype` the reduction's dtype= argument),\n"
"ascending (a call naming none runs the method's default).");

PyDoc_STRVAR(reduction_dtypes_doc,
"reduction_dtypes(op, dtype, reduce_dtype=None)\n--\n\n"
"The dtypes of operator `op` over elements of `dtype` (with\n"
"`reduce_dtype` the reduction's dtype= argument): (reduced, result,\n"
"accumulator).  reduced: NumPy's dtype of the reduction before its\n"
"finishing step (numpy.mean's sum, numpy.nanmean's); result: the\n"
"result's; accumulator: the one the kernels accumulate in (float32 for a\n"
"sum of float16, 64 bits for one of integers, which wrap alike), so that\n"
"partial reductions in it, reduced again and cast to `reduced`, give\n"
"what one reduction gives.  bfloat16 is float32 without ml_dtypes.");

PyDoc_STRVAR(time_reduce_doc,
"time_reduce(op, a, method, threads, buffers, warmup, reps, mode, batch=1)\n"
"--\n\n"
"Copy the contiguous host array `a` to `buffers` device buffers, then time\n"
"`reps` samples (after `warmup` untimed ones) of its reduction, rotating\n"
"among the buffers.  mode 'launch': each run between two CUDA events, the\n"
"host's launch latency included; 'cold': each run behind a kernel that\n"
"holds the stream until it is queued, L2 flushed first, an event after\n"
"every pass; 'batch': `batch` runs back to back behind that kernel, a\n"
"sample their mean.  Returns (result of the last run as a NumPy scalar,\n"
"times in ms, per-pass times in ms: a list per sample in 'cold' mode,\n"
"else None; empty lists for cub, whose launches are its own).");

PyDoc_STRVAR(time_probe_doc,
"time_probe(probe, nbytes, buffers, warmup, reps, mode, batch=1)\n--\n\n"
"Times a probe as time_reduce times a reduction: 'empty' (an empty\n"
"kernel; nbytes 0), 'read' (a read-only streaming kernel over nbytes: the\n"
"read ceiling), 'host_copy' (a copy of nbytes from pinned host memory) or\n"
"'launch_poll' (host wall time of a launch whose kernel writes a word to\n"
"mapped host memory, polled for: mode 'launch', nbytes 0).\n"
"Returns the times in ms.");

PyDoc_STRVAR(stream_hold_doc,
"stream_hold(stream)\n--\n\n"
"A holder for the CUDA stream `stream` (a cudaStream_t as an int, or a\n"
"CuPy/PyTorch stream) on the current device, for timing other libraries'\n"
"work the way time_reduce times ours: hold_stream(holder, flush_l2),\n"
"queue the work and its events, release_stream(holder).  Run the work\n"
"once unheld first: a kernel's first launch loads its module, which\n"
"waits for the device, so behind the holding kernel it would time out.");

PyDoc_STRVAR(hold_stream_doc,
"hold_stream(holder, flush_l2)\n--\n\n"
"Queues on the holder's stream (with flush_l2, after a write over twice\n"
"the L2 cache) a kernel that holds it until release_stream(holder).");

PyDoc_STRVAR(release_stream_doc,
"release_stream(holder)\n--\n\n"
"Lets the holding kernel go and waits for the stream; CudaError if the\n"
"kernel gave up waiting (the work was not queued in time).");

PyDoc_STRVAR(methods_doc,
"methods()\n--\n\n"
"(name, description) of every method, in ladder order.");

PyDoc_STRVAR(device_info_doc,
"device_info()\n--\n\n"
"The current CUDA device: dict of ordinal, name, compute_capability\n"
"(10 * major + minor), sm_count, l2_bytes, total_bytes, sm_clock_khz and\n"
"memory_clock_khz (peak), memory_bus_bits, driver_version and\n"
"runtime_version (1000 * major + 10 * minor), cccl_version (CCCL_VERSION\n"
"of the CUB compiled in).  Raises CudaError when there is none.");

PyDoc_STRVAR(inject_host_fault_doc,
"_inject_host_fault(chunk)\n--\n\n"
"For tests: the next host-array reduction that reaches chunk `chunk`\n"
"(from 0) fails there, with its copy and reduction in flight, as if GPU\n"
"memory had run out (MemoryError); a negative chunk cancels.");

PyDoc_STRVAR(exact_state_doc,
"exact_state(op, a, method, threads=None, dtype=None, stream=None)\n--\n\n"
"The state of reduce(op, a, method, ..., exact=True) before its rounding,\n"
"over every axis (op sum, nansum, mean or nanmean of floats): a uint8\n"
"array, opaque, of the elements' exact sum, the specials among them and\n"
"the NaNs skipped; an empty array's is zero.  The states of the parts\n"
"of one array (Dask's chunks) add by exact_add_states, in any order and\n"
"grouping, and round by exact_round_state to the bits of one exact call.");

PyDoc_STRVAR(exact_add_states_doc,
"exact_add_states(states)\n--\n\n"
"The state (exact_state's) of the elements of every state in the\n"
"iterable `states`: their exact sum.");

PyDoc_STRVAR(exact_round_state_doc,
"exact_round_state(op, state, dtype, n, reduce_dtype=None)\n--\n\n"
"What reduce(op, a, ..., exact=True, dtype=reduce_dtype) gives for an\n"
"array `a` of `n` >= 1 elements of `dtype` whose state (exact_add_states\n"
"of its parts' exact_state) is `state`: a NumPy scalar, rounded once,\n"
"with NumPy's warnings.");

static PyMethodDef cudareduce_functions[] = {
    {"reduce", (PyCFunction)(void (*)(void))crpy_reduce,
     METH_FASTCALL | METH_KEYWORDS, reduce_doc},
    {"plan", (PyCFunction)(void (*)(void))crpy_plan,
     METH_VARARGS | METH_KEYWORDS, plan_doc},
    {"block_sizes", (PyCFunction)(void (*)(void))crpy_block_sizes,
     METH_VARARGS | METH_KEYWORDS, block_sizes_doc},
    {"reduction_dtypes",
     (PyCFunction)(void (*)(void))crpy_reduction_dtypes,
     METH_VARARGS | METH_KEYWORDS, reduction_dtypes_doc},
    {"time_reduce", (PyCFunction)(void (*)(void))crpy_time_reduce,
     METH_VARARGS | METH_KEYWORDS, time_reduce_doc},
    {"time_probe", crpy_time_probe, METH_VARARGS, time_probe_doc},
    {"stream_hold", crpy_stream_hold, METH_O, stream_hold_doc},
    {"hold_stream", crpy_hold_stream, METH_VARARGS, hold_stream_doc},
    {"release_stream", crpy_release_stream, METH_O,
     release_stream_doc},
    {"exact_state", (PyCFunction)(void (*)(void))crpy_exact_state,
     METH_VARARGS | METH_KEYWORDS, exact_state_doc},
    {"exact_add_states", crpy_exact_add_states, METH_O,
     exact_add_states_doc},
    {"exact_round_state", (PyCFunction)(void (*)(void))crpy_exact_round_state,
     METH_VARARGS | METH_KEYWORDS, exact_round_state_doc},
    {"methods", crpy_methods, METH_NOARGS, methods_doc},
    {"device_info", crpy_device_info, METH_NOARGS, device_info_doc},
    {"_inject_host_fault", crpy_inject_host_fault, METH_O,
     inject_host_fault_doc},
    {NULL, NULL, 0, NULL}
};

PyDoc_STRVAR(cuda_error_doc,
"A CUDA runtime error: no device or driver, or a failed CUDA call.\n"
"The message names the CUDA error.");

/* The name of the dtype of types.def's row `index`. */
static const char *
dtype_name(Py_ssize_t index)
{
    return crpy_dtype_of_type((cr_type)index)->name;
}

/* module.`attribute`: the tuple of name(0) .. name(count - 1).  0, or -1
 * with an exception. */
static int
add_names(PyObject *module, const char *attribute, Py_ssize_t count,
          const char *(*name)(Py_ssize_t))
{
    PyObject *names = PyTuple_New(count);
    for (Py_ssize_t k = 0; names != NULL && k < count; k++) {
        PyObject *item = PyUnicode_FromString(name(k));
        if (item == NULL) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, k, item);
    }
    const int added = names != NULL
        ? PyModule_AddObjectRef(module, attribute, names) : -1;
    Py_XDECREF(names);
    return added;
}

static int
cudareduce_exec(PyObject *module)
{
    crpy_state *state = crpy_get_state(module);

    import_array1(-1);
#define INTERN(field, text)                                             \
    if ((state->names.field = PyUnicode_InternFromString(text)) == NULL) { \
        return -1;                                                      \
    }
    CRPY_NAMES(INTERN)
#undef INTERN
    state->cuda_error = PyErr_NewExceptionWithDoc(
        "cudareduce.CudaError", cuda_error_doc, PyExc_RuntimeError, NULL);
    if (state->cuda_error == NULL) {
        return -1;
    }
    crpy_set_cuda_error(state->cuda_error);
    if (PyModule_AddObjectRef(module, "CudaError", state->cuda_error) < 0) {
        return -1;
    }
    /* The ladder steps' default threads per block. */
    if (PyModule_AddIntConstant(module, "DEFAULT_THREADS",
                                CR_DEFAULT_THREADS) < 0) {
        return -1;
    }
    /* methods() lists the ladder's steps first: this many. */
    if (PyModule_AddIntConstant(module, "LADDER_STEPS", CR_LADDER_COUNT) < 0) {
        return -1;
    }
    /* The operators reduce() takes and the dtypes the kernels read, by
     * name, in their tables' order: the one list Python reads them from. */
    if (add_names(module, "OPERATORS", crpy_operator_count(),
                  crpy_operator_name) < 0
        || add_names(module, "DTYPES", CR_TYPE_COUNT, dtype_name) < 0) {
        return -1;
    }
    /* Each operator's facts (facts.c), for the Python modules that reduce
     * by them rather than by its name. */
    PyObject *facts = crpy_operator_facts();
    const int added = facts != NULL
        ? PyModule_AddObjectRef(module, "OPERATOR_FACTS", facts) : -1;
    Py_XDECREF(facts);
    return added;
}

static int
cudareduce_traverse(PyObject *module, visitproc visit, void *arg)
{
    Py_VISIT(crpy_get_state(module)->cuda_error);
    return 0;
}

static int
cudareduce_clear(PyObject *module)
{
    crpy_state *state = crpy_get_state(module);
    crpy_forget_cuda_error(state->cuda_error);
    Py_CLEAR(state->cuda_error);
#define CLEAR(field, text) Py_CLEAR(state->names.field);
    CRPY_NAMES(CLEAR)
#undef CLEAR
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
    .m_size = sizeof(crpy_state),
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

