/* extension.h: what the C files of cudareduce._cudareduce share.
 *
 * dtype_rules.c: NumPy dtypes <-> cr_type, and NumPy's result dtypes.
 * operators.c: the Python-level operators as rows (sum, prod, mean, min,
 *              max, any, all, argmin, argmax and the NaN-skipping ones).
 * errors.c: cuda/'s failures as Python exceptions (CudaError).
 * input.c: any array-like -> a pointer, a layout and a dtype: the
 *          protocols in the order they are tried, each read by one of:
 * cuda_array_interface.c: __cuda_array_interface__, a torch.Tensor read as
 *          its interface would give it, and every device input's layout
 *          check;
 * dlpack.c: __dlpack__ / __dlpack_device__;
 * numpy_input.c: host arrays, as NumPy reads them.
 * streams.c: the streams a call runs on and waits for.
 * numpy_result.c: cr_reduce's value as NumPy's scalar, with NumPy's
 *                 floating-point warnings.
 * reduce.c: reduce(): keepdims, and the whole array's reduction.
 * reduce_axes.c: reduce() along some axes: the result array and out=.
 * call.c: one reduction call: its arguments, input, dtypes and out=.
 * axes.c: axis= read as NumPy does, and the rows of reducing along axes.
 * facts.c: plan, block_sizes, reduction_dtypes, methods, device_info,
 *          OPERATOR_FACTS.
 * bench.c: the bench's timers and stream holders, the tests' fault hook.
 * module.c: the module: its state, method table, exec, traverse, clear.
 * layout.c: a strided layout checked and simplified (plain C: layout.h).
 * input_layout.c: an input's shape and strides recorded, its layout
 *                 planned (every reader's).
 * sequences.c: Python lists and tuples of C arrays.
 *
 * Calls go one way, down these layers (none calls back up): module.c;
 * facts.c and bench.c; reduce.c; reduce_axes.c; call.c; axes.c, input.c
 * and numpy_result.c; dlpack.c; cuda_array_interface.c and
 * numpy_input.c; input_layout.c, operators.c and streams.c;
 * dtype_rules.c, errors.c, sequences.c and layout.c.
 */
#ifndef CUDAREDUCE_EXTENSION_H
#define CUDAREDUCE_EXTENSION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
/* One NumPy API table for every file; module.c imports it. */
#define PY_ARRAY_UNIQUE_SYMBOL cudareduce_ARRAY_API
#ifndef CUDAREDUCE_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "cudareduce.h"
#include "cudareduce_testing.h"
#include "cudareduce_timing.h"
#include "layout.h"

/* --- the module's state (module.c fills it) --------------------------- */

/* The strings a call looks its input up by: attribute names, dict keys
 * and module names (field, text).  Made from C strings on every call,
 * they were two fifths of a CuPy array's call in C (callgrind). */
#define CRPY_NAMES(X)                                                     \
    X(cuda_array_interface, "__cuda_array_interface__")                   \
    X(dlpack, "__dlpack__")                                               \
    X(dlpack_device, "__dlpack_device__")                                 \
    X(version, "version")                                                 \
    X(typestr, "typestr")                                                 \
    X(shape, "shape")                                                     \
    X(data, "data")                                                       \
    X(mask, "mask")                                                       \
    X(stream, "stream")                                                   \
    X(strides, "strides")                                                 \
    X(module, "__module__")                                               \
    X(is_cuda, "is_cuda")                                                 \
    X(requires_grad, "requires_grad")                                     \
    X(is_conj, "is_conj")                                                 \
    X(is_neg, "is_neg")                                                   \
    X(layout, "layout")                                                   \
    X(dtype, "dtype")                                                     \
    X(is_contiguous, "is_contiguous")                                     \
    X(stride, "stride")                                                   \
    X(data_ptr, "data_ptr")                                               \
    X(get_device, "get_device")                                           \
    X(torch_c, "torch._C")                                                \
    X(torch_cuda, "torch.cuda")                                           \
    X(cupy_cuda, "cupy.cuda")

/* Those strings, interned. */
#define CRPY_NAME_FIELD(field, text) PyObject *field;
typedef struct {
    CRPY_NAMES(CRPY_NAME_FIELD)
} crpy_names;
#undef CRPY_NAME_FIELD

/* The module's state, as CPython's Modules/_bisectmodule.c keeps one. */
typedef struct {
    PyObject *cuda_error;   /* cudareduce.CudaError */
    crpy_names names;
} crpy_state;

static inline crpy_state *
crpy_get_state(PyObject *module)
{
    return (crpy_state *)PyModule_GetState(module);
}

/* --- dtype_rules.c ------------------------------------------------------ */

/* A dtype the kernels take (a row of cuda/include/types.def). */
typedef struct {
    const char *name;
    char kind;
    int itemsize;
    int typenum;        /* native NumPy type number; NPY_NOTYPE for
                         * bfloat16, whose ml_dtypes gives it one at run
                         * time: crpy_descr */
    cr_type type;
} crpy_dtype;

/* The row of a dtype, matched by kind and size (so every alias and byte
 * order lands on one row), bfloat16 by its scalar type, ml_dtypes';
 * NULL with TypeError naming it if unsupported. */
const crpy_dtype *crpy_lookup_dtype(PyArray_Descr *descr);
/* The row of NumPy's `kind` ('f') and `itemsize` (never bfloat16's,
 * whose NumPy kind is 'V'); NULL, with no exception, if none. */
const crpy_dtype *crpy_dtype_of_kind(char kind, Py_ssize_t itemsize);
const crpy_dtype *crpy_dtype_of_type(cr_type type);
/* The NumPy dtype of a row (a new reference); for bfloat16 ml_dtypes',
 * NULL with its ImportError where ml_dtypes is not importable. */
PyArray_Descr *crpy_descr(const crpy_dtype *dtype);
/* The NumPy dtype of a result of `dtype` (a new reference): crpy_descr,
 * except that a bfloat16 result is float32 where ml_dtypes is not
 * importable (a bfloat16 tensor from PyTorch or JAX needs no ml_dtypes). */
PyArray_Descr *crpy_result_descr(const crpy_dtype *dtype);
/* The row of a NumPy dtype name ("float32"); NULL, with no exception, if
 * none. */
const crpy_dtype *crpy_dtype_named(const char *name);

/* NumPy's result rules, by the input's kind (dtype_rules.c): numpy.sum's
 * dtype (also numpy.prod's), numpy.mean's, the dtype numpy.mean sums in,
 * the input's own (min and max), bool (any and all), and intp (argmin
 * and argmax). */
const crpy_dtype *crpy_numpy_sum_dtype(const crpy_dtype *input);
const crpy_dtype *crpy_numpy_mean_dtype(const crpy_dtype *input);
const crpy_dtype *crpy_numpy_mean_sum_dtype(const crpy_dtype *input);
const crpy_dtype *crpy_same_dtype(const crpy_dtype *input);
const crpy_dtype *crpy_bool_dtype(const crpy_dtype *input);
const crpy_dtype *crpy_index_dtype(const crpy_dtype *input);

/* NumPy's cast rule: what the kernels do for NumPy's reduction of the
 * request's elements (its type) into `result` with `op`
 * (numpy.sum(a, dtype=result) for a sum): each element is cast to
 * request->cast (its type itself: no cast) and combined with request->op
 * in request->acc, which this fills.  The cast is NumPy's per-element
 * cast to the result dtype where it differs from converting to the
 * accumulator: into float16 or bfloat16 (rounding) and from floats into
 * integers (truncating; int32, int64 or uint64, the convert NumPy's cast
 * goes through).  Elements that cannot be NaN take the operator
 * WITHOUT_NAN (CR_OPS); into bool, min and max are the product and the
 * sum.  An INDEX operator reads the elements as they are, beside their
 * index, in the accumulator of its column for their type (`result` is
 * the index's type). */
void crpy_reduction_for(cr_type result, cr_op op, cr_request *request);

/* --- operators.c -------------------------------------------------------- */

/* A Python-level operator, one row of operators.c's table: what the
 * kernels do, NumPy's rules for its dtypes and for an empty input, and
 * the step that finishes the kernels' value into the result (mean's
 * divide). */
typedef struct crpy_operator {
    const char *name;
    cr_op kernel_op;
    int takes_dtype;            /* accepts dtype= (numpy.sum, numpy.mean) */
    /* An empty input: NumPy's ValueError (NULL: the empty reduction has a
     * value), and the RuntimeWarning it gives (NULL: none). */
    const char *empty_error;
    const char *empty_warning;
    /* The dtype the elements are reduced into, and the result's. */
    const crpy_dtype *(*reduced_dtype)(const crpy_dtype *input);
    const crpy_dtype *(*result_dtype)(const crpy_dtype *input);
    /* The result from the reduction's value (a NumPy scalar of the reduced
     * dtype) and the element count (nanmean's: of the non-NaN elements);
     * NULL: the value is the result. */
    PyObject *(*finish)(PyObject *reduction, int64_t n,
                        const crpy_dtype *result);
    /* finish divides by the count (cuda/ does the same for a device out). */
    int divides_by_count;
    /* numpy.nanmean: a float input takes only a float dtype= (NumPy's
     * TypeError), and any other is reduced by `others_as`, numpy.mean. */
    int float_dtype_for_floats;
    const char *others_as;
    /* The result is one of the elements or its index (min, max, any, all,
     * argmin, argmax and their NaN forms): no floating-point warning can
     * arise. */
    int selects_element;
} crpy_operator;

/* The operator named `name` (a str); NULL with ValueError if none. */
const crpy_operator *crpy_operator_named(PyObject *name);
/* The operator that reduces `input` for `op`: its others_as where it
 * names one and the input is not a float, else `op`. */
const crpy_operator *crpy_operator_for(const crpy_operator *op,
                                       const crpy_dtype *input);
/* The operator that reduces elements which cannot be NaN (integers,
 * bool) as `op` does: `op` where its kernel operator skips no NaN; else
 * its others_as, else the row of its kernel operator's form without NaN
 * with its dtype rules (nansum's sum, nanargmin's argmin). */
const crpy_operator *crpy_operator_without_nan(const crpy_operator *op);
/* The sum's row (the plan reports a sum's). */
const crpy_operator *crpy_sum_operator(void);
/* The operators, in the table's order: how many, the row at `index` and
 * the name of each (OPERATORS). */
Py_ssize_t crpy_operator_count(void);
const crpy_operator *crpy_operator_at(Py_ssize_t index);
const char *crpy_operator_name(Py_ssize_t index);

/* The dtypes of `op` over `input`, NumPy's, with `requested` (a dtype=
 * argument, NULL if none): *reduced, the dtype the elements are reduced
 * into (numpy.sum(a, dtype=...), the sum inside numpy.mean; the input's
 * for min and max), and *result, the returned scalar's.  A requested dtype
 * is cast to unsafely, as NumPy does.  0, or -1 with TypeError when
 * `requested` is unsupported or `op` takes none. */
int crpy_result_dtypes(const crpy_operator *op, const crpy_dtype *input,
                       PyArray_Descr *requested, const crpy_dtype **reduced,
                       const crpy_dtype **result);

/* --- errors.c ----------------------------------------------------------- */

/* The module's CudaError, set by its exec (the module state owns the
 * reference) and forgotten by its clear (only if still `type`). */
void crpy_set_cuda_error(PyObject *type);
void crpy_forget_cuda_error(PyObject *type);
/* CudaError (a borrowed reference; RuntimeError, its base, where no
 * module holds one). */
PyObject *crpy_cuda_error(void);

/* Raises the Python exception for a failed cuda/ call: ValueError for
 * CR_ERR_INVALID, MemoryError, else CudaError. */
void crpy_raise_cr_error(cr_status status, const cr_error *failure);
/* cr_reduce(request, result) with the GIL released: 0, or -1 with its
 * failure raised (crpy_raise_cr_error). */
int crpy_run(const cr_request *request, void *result);

/* --- sequences.c -------------------------------------------------------- */

/* A list (as_list) or tuple of `count` items, item k made by item(items,
 * k) (a new reference, or NULL with an exception): a new reference, or
 * NULL with the exception. */
PyObject *crpy_sequence(int count, int as_list,
                        PyObject *(*item)(const void *items, int k),
                        const void *items);

/* --- input.c ------------------------------------------------------------ */

/* An input ready for cr_reduce: where its elements are, their layout and
 * dtype, and what keeps them alive until crpy_release_input. */
typedef struct {
    PyObject *owner;            /* ndarray, interface object or capsule */
    void *dl_managed;           /* DLPack tensor to hand back, or NULL */
    int dl_versioned;
    cr_location location;
    const void *data;           /* the pointer the layout is planned for */
    int ndim;                   /* as given, before crpy_plan_layout */
    int64_t shape[CR_MAX_DIMS]; /* as given; strides in bytes, those of
                                 * C order where the producer gave none */
    int64_t strides[CR_MAX_DIMS];
    int c_order;                /* the layout keeps the elements' C order */
    cr_layout layout;           /* of every input: its n, its offset */
    const crpy_dtype *dtype;
    int has_producer_stream;    /* the stream the data is ready on */
    uintptr_t producer_stream;
    int torch_stream;           /* that is PyTorch's current stream on the
                                 * data's device (a torch.Tensor's) */
    int read_only;              /* the producer says so (CAI, DLPack 1.0) */
    const crpy_names *names;    /* the module's, which it is read by */
} crpy_input;

/* Fills `input` from any array-like, looked up by the module's `names`,
 * its layout in the elements' C order if `c_order` is set
 * (crpy_plan_layout).  `stream` (if `stream_given`)
 * is the caller's stream, which DLPack producers are asked to order their
 * work before; the stream the data is ready on otherwise is the input's
 * producer stream.  A DLPack producer is called with its data's device
 * current (a failure to make it so raises CudaError or ValueError).
 * Returns 0, or -1 with an exception set and nothing held. */
int crpy_acquire_input(PyObject *obj, const crpy_names *names, int c_order,
                       int stream_given, uintptr_t stream,
                       crpy_input *input);

/* Releases what crpy_acquire_input holds.  Needs the GIL. */
void crpy_release_input(crpy_input *input);

/* The protocols' readers, below, each fill `input` (zeroed, its c_order
 * and names set) from `obj` as their protocol gives it: 0, or -1 with an
 * exception set (crpy_release_input releases what they hold either way). */

/* --- cuda_array_interface.c --------------------------------------------- */

/* A __cuda_array_interface__ dict, `interface`, of `obj`. */
int crpy_acquire_cai(PyObject *obj, PyObject *interface, crpy_input *input);
/* A CUDA torch.Tensor as its __cuda_array_interface__ would give it
 * (strides only when it is not contiguous; pointer 0 when empty), and
 * ready on PyTorch's current stream of its device, which that interface
 * (torch/_tensor.py: version 2) does not name, without building that
 * dict, which PyTorch builds in Python, the slower way.  1 when read; 0
 * when `obj` takes the interface's path, which raises what PyTorch raises
 * (not a plain torch.Tensor, not on a CUDA device, requiring grad, not
 * strided, a dtype the kernels do not take); -1 with an exception. */
int crpy_acquire_torch_tensor(PyObject *obj, crpy_input *input);
/* Whether `obj` is a torch.Tensor or an instance of a subclass: 0 or 1. */
int crpy_is_torch_instance(PyObject *obj, const crpy_names *names);
/* The layout of a device array (input->data, ->dtype and ->c_order set),
 * its size, and the alignment every kernel load relies on (a misaligned
 * load faults and poisons the context); a ValueError names `source`. */
int crpy_plan_device_layout(crpy_input *input, int ndim,
                            const int64_t *shape, const int64_t *strides,
                            const char *source);

/* --- dlpack.c ----------------------------------------------------------- */

/* A DLPack producer, whose __dlpack_device__ is `device_fn`: a CUDA
 * tensor read in place, its producer asked to order its work before
 * `stream` if `stream_given`, else before the legacy default stream
 * (PyTorch's current one for a subclass of torch.Tensor), which the input
 * then names as its producer's; a CPU one through
 * crpy_acquire_host_dlpack. */
int crpy_acquire_dlpack(PyObject *obj, PyObject *device_fn, int stream_given,
                        uintptr_t stream, crpy_input *input);
/* Hands a DLPack tensor that `input` holds back to its producer's
 * deleter, the caller's exception (if any) kept aside meanwhile. */
void crpy_release_dlpack(crpy_input *input);

/* --- numpy_input.c ------------------------------------------------------ */

/* A host array: a numpy.ndarray or anything numpy.asarray takes (not a
 * numpy.ma.MaskedArray), read in place where it is aligned and in native
 * byte order, whatever its strides, else a converted copy. */
int crpy_acquire_host(PyObject *obj, crpy_input *input);
/* A CPU DLPack tensor, through numpy.from_dlpack, as a host array. */
int crpy_acquire_host_dlpack(PyObject *obj, crpy_input *input);

/* --- input_layout.c ----------------------------------------------------- */

/* Records `ndim`, `shape` and `strides` (bytes; NULL: C-contiguous) in
 * `input`, and its layout planned by crpy_plan_layout in input->c_order
 * for its item size; 0, or -1 with a ValueError naming `source`. */
int crpy_input_layout(crpy_input *input, int ndim, const int64_t *shape,
                      const int64_t *strides, int itemsize,
                      const char *source);

/* --- streams.c ---------------------------------------------------------- */

/* Stream values as the CUDA array interface and DLPack number them (a
 * cudaStream_t otherwise; 0 is the legacy default stream's handle). */
#define CRPY_LEGACY_STREAM 1
#define CRPY_PER_THREAD_STREAM 2

/* stream=: None (*given 0), a cudaStream_t as an int (0: the legacy
 * default stream), or a stream object of CuPy (.ptr), PyTorch
 * (.cuda_stream) or any with the __cuda_stream__ protocol ((version,
 * handle)).  Returns 0, or -1 with TypeError/ValueError set. */
int crpy_parse_stream(PyObject *obj, int *given, uintptr_t *handle);

/* The stream a DLPack producer is asked to order its work before: the
 * caller's, else the legacy default stream, which every producer accepts
 * (PyTorch refuses the per-thread one). */
uintptr_t crpy_dlpack_stream(int given, uintptr_t stream);

/* PyTorch's current stream on CUDA device `device`, as
 * torch.cuda.current_stream(device).cuda_stream gives it, its default
 * stream as CRPY_LEGACY_STREAM: 1 with it, 0 where PyTorch is not
 * imported (looked up by the module's `names`), -1 with an exception. */
int crpy_torch_stream(const crpy_names *names, int device,
                      uintptr_t *handle);

/* request->stream, ->wait and ->wait_stream for `input`, whose request
 * is filled but for them (its data and out set): the caller's stream (if
 * given) after the producer's; without one, the user's current stream
 * (PyTorch's inside torch.cuda.stream(s) or a torch.cuda.graph capture;
 * CuPy's inside `with stream:` for data that names no stream) after the
 * producer's and before its later work (request->join), else the
 * producer's own.  Where the user's current stream is asked for, so is
 * the call's device (is that stream one of it?), and the answer is kept
 * in the request (request->device, device_known) for cr_reduce.  0, or
 * -1 with an exception. */
int crpy_choose_streams(const crpy_input *input, int given,
                        uintptr_t stream, cr_request *request);

/* --- numpy_result.c ----------------------------------------------------- */

/* Large enough for any result of cr_reduce. */
typedef union {
    uint64_t u;
    int64_t i;
    float f;
    double d;
    npy_bool b;
    cr_indexed_result indexed;
    cr_counted_result counted;
} crpy_result_value;

/* cr_reduce's result for `request` as a NumPy scalar of `dtype`: the
 * accumulator's value, or an index operator's index.  Where a
 * NaN-skipping one found every element NaN (the value beside the index,
 * a float or complex accumulator, is NaN), numpy.nanargmin's ValueError
 * instead. */
PyObject *crpy_box_result(const crpy_result_value *value,
                          const cr_request *request,
                          const crpy_dtype *dtype);

/* The floating-point warnings numpy.sum gives for this reduction (also the
 * sum inside numpy.mean, and numpy.prod's): "overflow encountered in
 * reduce" when a float result is infinite (or NaN, by inf - inf) from
 * finite elements, "invalid value encountered in reduce" when it is NaN
 * from elements without one (NaN elements of a NaN-skipping operator do
 * not count),
 * or when float elements cast into an integer dtype are NaN, infinite or
 * out of the convert's range.  The elements are looked at (two more
 * reductions) only in those rare cases.  `reduction` is the boxed value
 * (crpy_box_result).  0, or -1 with the exception numpy.errstate asked
 * for. */
int crpy_report_like_numpy(const cr_request *request,
                           const crpy_dtype *input,
                           const crpy_dtype *reduced, PyObject *reduction);
/* The same for a float result whose elements are known to have held a
 * NaN (`elements_nan`: one that was added, not skipped) and an infinity
 * (`elements_inf`): an exact sum's state says so (exact_states.c). */
int crpy_report_float_like_numpy(double result, int elements_nan,
                                 int elements_inf);
/* The same for the host `results` of a reduction along axes (the
 * request's rows; a C-contiguous array of the result dtype, a row each):
 * each warning once, as NumPy's flags are the whole call's, from
 * whichever rows set it, judged as crpy_report_like_numpy judges one
 * result; the rows' elements are looked at (two more reductions along
 * the same axes) only where a float result is not finite, or float
 * elements go into an integer dtype.  0, or -1 with an exception. */
int crpy_report_rows_like_numpy(const cr_request *request,
                                const crpy_dtype *input,
                                const crpy_dtype *reduced,
                                PyArrayObject *results);
/* Whether some row of the request's rows (a reduction along axes) holds
 * nothing but NaN: a nanmax along the same axes, one more reduction.  1,
 * 0, or -1 with an exception. */
int crpy_rows_all_nan(const cr_request *request, const crpy_dtype *input);

/* --- call.c ------------------------------------------------------------- */

/* method=, a name from cudareduce.methods(): *method.  0, or -1 with
 * TypeError (not a str: NumPy's axis where the method goes) or
 * ValueError naming the valid methods.  plan and block_sizes too. */
int crpy_parse_method(PyObject *name, cr_method *method);
/* threads: None (0: the method's own default for the input's size,
 * cr_plan_launch), or an int (not a bool, not a float), a power of two
 * in range. */
int crpy_parse_threads(PyObject *value, int *threads);

/* The operator `*op` becomes for elements of `input` (crpy_operator_for),
 * NumPy's reduced and result dtypes (with `requested`, a dtype= argument
 * or NULL), and the request's element type, cast, accumulator and kernel
 * operator: what reduce runs and block_sizes answers for.  0, or -1 with
 * a TypeError. */
int crpy_resolve_reduction(const crpy_operator **op, const crpy_dtype *input,
                           PyArray_Descr *requested,
                           const crpy_dtype **reduced,
                           const crpy_dtype **result, cr_request *request);

/* One call's reduction, as reduce and time_reduce open it: the operator,
 * the input (held until crpy_close_reduction_call), NumPy's dtypes, and
 * the request for cuda/. */
typedef struct {
    const crpy_operator *op;
    crpy_input input;
    uint64_t reduced_axes;      /* bit d: axis d is reduced */
    int stream_given;           /* the caller's stream= */
    uintptr_t stream;
    const crpy_dtype *reduced, *result;
    cr_request request;
} crpy_reduction_call;

/* Parses the operator, method and threads, acquires the input (by the
 * module's `names`; DLPack
 * producers asked to order their work before `stream` if `stream_given`),
 * reads `axis` for it (crpy_parse_axis) and finds NumPy's dtypes (with `requested`, a
 * dtype= argument or NULL); fills the request but for its streams.  0, or
 * -1 with an exception; close the call either way. */
int crpy_open_reduction_call(const crpy_names *names, PyObject *op_name,
                             PyObject *obj, PyObject *method_name,
                             PyObject *threads_obj,
                             PyObject *axis, PyArray_Descr *requested,
                             int stream_given, uintptr_t stream,
                             crpy_reduction_call *call);
/* The operator's result from the reduction's value, boxed as a scalar of
 * the reduced dtype (NULL: an exception is set), and cr_reduce's `value`:
 * the operator's finishing step (mean's divide, by the count of the
 * elements summed), or the value itself. */
PyObject *crpy_finish_reduction_call(const crpy_reduction_call *call,
                                     const crpy_result_value *value,
                                     PyObject *reduction);
/* A dtype= argument: *requested the dtype (a new reference), NULL for
 * None.  0, or -1 with NumPy's TypeError. */
int crpy_parse_dtype(PyObject *obj, PyArray_Descr **requested);
/* The call's request made an exact sum (issue 44): the exact sum of its
 * elements, rounded once into the result dtype (a mean's divided by its
 * count first); cuda/ checks that it can be one. */
void crpy_mark_exact(crpy_reduction_call *call);
/* Releases what crpy_open_reduction_call holds. */
void crpy_close_reduction_call(crpy_reduction_call *call);
/* A device out= (CUDA array interface or DLPack), writable, of the
 * call's result dtype (of any, cast into, with `any_dtype`), acquired into
 * *out (release it either way) and set as the request's out with its
 * finishing steps.  0, or -1 with an exception. */
int crpy_acquire_device_out(PyObject *obj, crpy_reduction_call *call,
                            int any_dtype, crpy_input *out);

/* --- axes.c ------------------------------------------------------------- */

/* How many axes an operator's axis= names: any (a tuple too), or one (the
 * index operators': numpy.argmin's TypeError for a tuple; numpy.nanargmin
 * of floats checks the tuple's axes first, in its all-NaN check). */
enum {
    CRPY_ANY_AXES = 0,
    CRPY_ONE_AXIS,
    CRPY_ONE_AXIS_CHECKED
};

/* axis= of an ndim-dimensional array as NumPy reads it, into the set of
 * reduced axes (bit d: axis d): None every axis, an int or (as `single`
 * says) a tuple of ints, negative from the end.  0, or -1 with NumPy's
 * AxisError, TypeError, OverflowError or ValueError (a repeated axis). */
int crpy_parse_axis(PyObject *axis, int ndim, int single,
                    uint64_t *reduced);
/* The rows of reducing the `reduced` axes of an array (shape, strides in
 * bytes) into an out whose kept axes step by `out_strides` (bytes, by
 * input axis): *rows, and *offset, the bytes from the array's pointer to
 * row 0's element 0.  Kept axes merge where they are one run in both;
 * reduced ones are flipped to positive strides, sorted and merged, but
 * with `keep_direction` (an index operator's one axis).  Returns 0, or 1
 * where the reduced axes are not one run (rows->stride then means
 * nothing).  Plain C. */
int crpy_plan_rows(int ndim, const int64_t *shape, const int64_t *strides,
                   const int64_t *out_strides, int64_t itemsize,
                   uint64_t reduced, int keep_direction, cr_rows *rows,
                   int64_t *offset);

/* --- reduce_axes.c ------------------------------------------------------ */

/* Whether the call reduces every axis of its input (a whole-array
 * reduction: one result). */
int crpy_reduces_every_axis(const crpy_reduction_call *call);
/* An uninitialised device array of the call's result dtype and `shape`
 * on its device, of the input `obj`'s library: allocate(obj, shape,
 * dtype name, device) (cudareduce._device_results.empty); the device is
 * kept in the call's request (device_known), which the result's device
 * does not change.  A new reference, or NULL with an exception. */
PyObject *crpy_allocate_result(crpy_reduction_call *call,
                               PyObject *allocate, PyObject *obj, int ndim,
                               const npy_intp *shape);
/* reduce() along the call's axes (not every one): NumPy's result array
 * (keepdims: extent 1 for each reduced axis), a device array of the
 * input's library from `allocate` for device data, or `out` filled.  A
 * new reference, or NULL with an exception. */
PyObject *crpy_reduce_axes(crpy_reduction_call *call, int keepdims,
                           PyObject *out, PyObject *allocate, PyObject *obj);

/* --- reduce.c ----------------------------------------------------------- */

/* The module's functions, each file's under it, for module.c's method
 * table, which holds their docs: the module's Python face in one place. */
PyObject *crpy_reduce(PyObject *module, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames);

/* --- exact_states.c ----------------------------------------------------- */

PyObject *crpy_exact_state(PyObject *module, PyObject *args,
                           PyObject *kwargs);
PyObject *crpy_exact_add_states(PyObject *module, PyObject *states);
PyObject *crpy_exact_round_state(PyObject *module, PyObject *args,
                                 PyObject *kwargs);

/* --- facts.c ------------------------------------------------------------ */

PyObject *crpy_plan(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *crpy_block_sizes(PyObject *module, PyObject *args,
                           PyObject *kwargs);
PyObject *crpy_reduction_dtypes(PyObject *module, PyObject *args,
                                PyObject *kwargs);
PyObject *crpy_methods(PyObject *module, PyObject *ignored);
PyObject *crpy_device_info(PyObject *module, PyObject *ignored);
/* OPERATOR_FACTS: a read-only mapping of each operator's name to its
 * facts (a cudareduce.OperatorFacts), from its row and its kernel
 * operator's (CR_OPS); a new reference, or NULL with an exception. */
PyObject *crpy_operator_facts(void);

/* --- bench.c ------------------------------------------------------------ */

PyObject *crpy_time_reduce(PyObject *module, PyObject *args,
                           PyObject *kwargs);
PyObject *crpy_time_probe(PyObject *module, PyObject *args);
PyObject *crpy_stream_hold(PyObject *module, PyObject *stream_obj);
PyObject *crpy_hold_stream(PyObject *module, PyObject *args);
PyObject *crpy_release_stream(PyObject *module, PyObject *capsule);
PyObject *crpy_inject_host_fault(PyObject *module, PyObject *arg);

#endif /* CUDAREDUCE_EXTENSION_H */
