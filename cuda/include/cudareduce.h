/* cudareduce.h: the C-callable API of the CUDA layer, as the product uses
 * it (the bench's timers: cudareduce_timing.h; test hooks:
 * cudareduce_testing.h).
 *
 * Plain C, no Python and no CUDA header: csrc/ includes it, cuda/ implements
 * it.  Launch planning (cr_plan_launch) is pure arithmetic and runs without a
 * GPU; everything else talks to the CUDA runtime and reports failures as a
 * status code plus a message, never by aborting.
 */
#ifndef CUDAREDUCE_H
#define CUDAREDUCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Methods, one per row of methods.def: the ladder, then fast and CUB. */
#include "methods.def"

#define CR_METHOD_ENUMERATOR(NAME, name, BLOCK, elements, grid_stride,    \
                             single_pass, description)                    \
    CR_METHOD_##NAME,
typedef enum {
    CR_METHODS(CR_METHOD_ENUMERATOR)
    CR_METHOD_COUNT
} cr_method;

/* The ladder's steps come first: this many. */
#define CR_LADDER_STEP(...) +1
enum { CR_LADDER_COUNT = 0 CR_LADDER_METHODS(CR_LADDER_STEP) };
#undef CR_LADDER_STEP
#undef CR_METHOD_ENUMERATOR

/* Element types (NumPy's numeric dtypes), one per row of types.def.  The
 * accumulator of a reduction is one of these too. */
#include "types.def"

#define CR_TYPE_ENUMERATOR(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, \
                           MinmaxAcc, PROD_ACC, ProdAcc)                  \
    CR_TYPE_##NAME,
typedef enum {
    CR_TYPES(CR_TYPE_ENUMERATOR)
    CR_TYPE_COUNT
} cr_type;
#undef CR_TYPE_ENUMERATOR

/* The kernels' operators, one row each:
 *
 *   X(NAME, ACCUMULATOR, WITHOUT_NAN, IDENTITY, RESULT)
 *
 * NAME: the cr_op, CR_OP_ left out.  ACCUMULATOR: the types.def column
 * that gives its accumulator from the result type (for an INDEX operator,
 * the value's beside the index, from the element type).  WITHOUT_NAN: the
 * operator on elements that cannot be NaN (integers, bool, and elements
 * whose NaNs a cast pass has replaced by the identity).  IDENTITY: 0 or 1,
 * the result of an empty reduction and what a NaN-skipping sum or product
 * puts in place of a NaN; NONE where an empty reduction has no result.
 * RESULT: VALUE, the accumulator's value; INDEX, the C-order index of an
 * element (argmin and argmax: the first of the extreme;
 * cr_indexed_result); COUNT, a sum beside the count of the elements in it
 * (numpy.nanmean's, of the non-NaN ones; cr_counted_result).  A mean is a
 * sum divided by the count afterwards; into bool a sum is a logical or and
 * a product a logical and (any and all), as min and max of bool are. */
#define CR_OPS(X)                                                          \
    X(SUM, SUM_ACC, SUM, 0, VALUE)                                         \
    X(PROD, PROD_ACC, PROD, 1, VALUE)                                      \
    X(MIN, MINMAX_ACC, MIN, NONE, VALUE)                                   \
    X(MAX, MINMAX_ACC, MAX, NONE, VALUE)                                   \
    X(NANSUM, SUM_ACC, SUM, 0, VALUE)                                      \
    X(NANPROD, PROD_ACC, PROD, 1, VALUE)                                   \
    X(NANMIN, MINMAX_ACC, MIN, NONE, VALUE)                                \
    X(NANMAX, MINMAX_ACC, MAX, NONE, VALUE)                                \
    X(ARGMIN, MINMAX_ACC, ARGMIN, NONE, INDEX)                             \
    X(ARGMAX, MINMAX_ACC, ARGMAX, NONE, INDEX)                             \
    X(NANARGMIN, MINMAX_ACC, ARGMIN, NONE, INDEX)                          \
    X(NANARGMAX, MINMAX_ACC, ARGMAX, NONE, INDEX)                          \
    X(NANMEAN, SUM_ACC, SUM, 0, COUNT)

#define CR_OP_ENUMERATOR(NAME, ACCUMULATOR, WITHOUT_NAN, IDENTITY, RESULT) \
    CR_OP_##NAME,
typedef enum {
    CR_OPS(CR_OP_ENUMERATOR)
    CR_OP_COUNT
} cr_op;
#undef CR_OP_ENUMERATOR

typedef enum {
    CR_OK = 0,
    CR_ERR_INVALID,      /* bad argument: caller's mistake (ValueError) */
    CR_ERR_NO_MEMORY,    /* cudaErrorMemoryAllocation (MemoryError) */
    CR_ERR_NO_DEVICE,    /* no GPU or no usable driver (CudaError) */
    CR_ERR_CUDA          /* any other CUDA runtime error (CudaError) */
} cr_status;

/* Where a failure is described.  Filled only when a call fails. */
typedef struct {
    int cuda_code;          /* cudaError_t value, 0 when not a CUDA error */
    char message[256];
} cr_error;

/* Threads per block: powers of two in this range. */
#define CR_MIN_THREADS 64
#define CR_MAX_THREADS 1024
#define CR_DEFAULT_THREADS 256
/* How many powers of two that range holds. */
#define CR_BLOCK_SIZE_COUNT 5
typedef char cr_block_size_count_matches
    [CR_MIN_THREADS << (CR_BLOCK_SIZE_COUNT - 1) == CR_MAX_THREADS ? 1 : -1];

/* Element counts above this are refused (block arithmetic stays in 63 bits). */
#define CR_MAX_ELEMENTS ((int64_t)1 << 62)

/* Every pass divides the element count by at least CR_MIN_THREADS, so a
 * 63-bit count needs at most 11 passes. */
#define CR_MAX_PASSES 12

/* One kernel launch of a multi-pass reduction: reduce n_in elements to
 * `blocks` partial results (one per block).  The last pass has one block. */
typedef struct {
    int64_t n_in;
    int64_t blocks;
    int threads;
    int64_t items_per_thread;   /* most elements one thread loads itself */
    size_t shared_bytes;        /* dynamic shared memory per block */
} cr_pass;

typedef struct {
    int count;                  /* 0 when n == 0: nothing to launch */
    cr_pass pass[CR_MAX_PASSES];
} cr_plan;

/* Static facts about a method (cudareduce.methods()). */
const char *cr_method_name(cr_method method);
const char *cr_method_description(cr_method method);
/* The threads per block of `method` for n elements of item_size bytes
 * when the caller names none (threads 0): CR_DEFAULT_THREADS for the
 * ladder, whose steps are compared at one block size, and cub (which
 * sizes its own blocks); for fast, by the bytes (tuning.h). */
int cr_method_default_threads(cr_method method, int64_t n,
                              size_t item_size);
/* How a row of kernel instances (instances.def) is compiled: a kernel
 * that takes the block size as a template parameter at every power of two
 * from CR_MIN_THREADS to CR_MAX_THREADS, or one instance of each kernel,
 * which for such a kernel of the ladder is at CR_DEFAULT_THREADS only (the
 * fast kernel's one instance reads its block size at run time).  Kernels
 * that read blockDim, and CUB, take any threads either way. */
typedef enum {
    CR_EVERY_BLOCK_SIZE,
    CR_ONE_INSTANCE
} cr_instances;
/* Whether `method` runs a row compiled as `instances` at `threads` per
 * block (one of the valid powers of two). */
int cr_method_takes_threads(cr_method method, int threads,
                            cr_instances instances);
/* Whether the plan of this method depends on the device's SM count (its
 * grid is sized from it, and its threads stride across the input). */
int cr_method_needs_sm_count(cr_method method);
/* Whether one launch of this method reduces any n (fast: its last block
 * reduces the partials). */
int cr_method_single_pass(cr_method method);
/* Elements each thread loads before the tree, per sweep of the grid, for
 * elements of item_size bytes: a block covers threads * this many
 * elements (steps 1-6: consecutive ones). */
int cr_method_elements_per_thread(cr_method method, size_t item_size);

/* Size in bytes of an element type; 0 for an invalid one. */
size_t cr_type_size(cr_type type);
/* The accumulator of reducing into `result` with `op`: types.def's
 * SUM_ACC, MINMAX_ACC or PROD_ACC of `result`, as the op's row says (a
 * sum or a product of integers wraps in 64 bits as NumPy's does, the
 * result being its low bits; into bool it is a logical or or and; a
 * float's product is float64's). */
cr_type cr_accumulator_type(cr_type result, cr_op op);

/* The facts of CR_OPS' row of `op`.  cr_op_identity: 0 where an empty
 * reduction has no result, else 1 with the identity in *identity.
 * cr_op_skips_nan: 1 for an operator that skips NaN elements (its
 * WITHOUT_NAN is another operator).  cr_op_gives_index, cr_op_counts: its
 * RESULT is INDEX, COUNT. */
cr_op cr_op_without_nan(cr_op op);
int cr_op_skips_nan(cr_op op);
int cr_op_identity(cr_op op, int *identity);
int cr_op_gives_index(cr_op op);
int cr_op_counts(cr_op op);

/* The result of an INDEX operator (CR_OPS), and of complex min and max:
 * the element's C-order index, and its value as the accumulator type
 * `acc` at the start of `value`.  Of numpy.nanargmin and nanargmax (whose
 * NaNs count as +inf and -inf, as NumPy replaces them), the value is NaN
 * only where every element is.  The kernels' result is as long as its
 * value needs (cr_result_size): 16 bytes, 24 for complex128. */
typedef struct {
    int64_t index;
    unsigned char value[16];
} cr_indexed_result;

/* The result of a COUNT operator (numpy.nanmean): the count of the
 * non-NaN elements, and their sum as the accumulator type `acc` at the
 * start of `sum` (16 bytes, or 24 for complex128, likewise). */
typedef struct {
    int64_t count;
    unsigned char sum[16];
} cr_counted_result;

/* Whether a reduction with accumulator `acc` and operator `op` keeps an
 * index beside its value (cr_indexed_result): the INDEX operators, and
 * the min and max of complex types, which are the element argmin and
 * argmax find (the first of several NaNs is NumPy's). */
int cr_result_is_indexed(cr_type acc, cr_op op);
/* The bytes of that reduction's result: the accumulator's, or a
 * cr_indexed_result's or cr_counted_result's as long as its value
 * needs. */
size_t cr_result_size(cr_type acc, cr_op op);
/* Where the value that the result stands for starts in those bytes: 0,
 * or the offset of the value (complex min and max) or of the sum (a COUNT
 * operator's); and its type: `acc`, or int64 (an INDEX operator's
 * index). */
size_t cr_result_value_offset(cr_type acc, cr_op op);
cr_type cr_result_value_type(cr_type acc, cr_op op);

/* Plans the passes of reducing n elements of item_size bytes whose
 * accumulator is acc_size bytes, `threads` per block (0: the method's
 * default for n and item_size).  sm_count is used only where
 * cr_method_needs_sm_count() says so (pass 0 otherwise).  The fast method
 * plans one pass, whatever n; CUB plans its own launches, so it has no
 * plan here (CR_ERR_INVALID).  Plain C: no CUDA call. */
cr_status cr_plan_launch(int64_t n, cr_method method, int threads,
                         size_t item_size, size_t acc_size, int sm_count,
                         cr_plan *plan, cr_error *error);

/* A strided array, as the __cuda_array_interface__ or DLPack gives it:
 * shape and strides in bytes (strides may be negative or 0), checked and
 * simplified by the caller (csrc/layout.c, plain C).  Where the
 * elements a reduction reads do not depend on their order, the layout is
 * simplified to an equivalent one: size-1 dimensions dropped, negative
 * strides flipped (moving the base), dimensions sorted by decreasing
 * stride and merged where they are contiguous.  Where the order counts
 * (an index operator's C-order index), only size-1 dimensions are dropped
 * and dimensions merged that are one run in C order: the offset stays 0,
 * the first element in C order at the given pointer.  contiguous then
 * says whether n elements from data + offset, in that order, are exactly
 * the array. */
#define CR_MAX_DIMS 64

typedef struct {
    int64_t n;              /* number of elements */
    int ndim;               /* after simplification, 0 for a scalar */
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];   /* bytes; simplified: >= 0,
                                     * decreasing */
    int64_t offset;         /* bytes from the given pointer to the lowest
                             * address of an element */
    int contiguous;
} cr_layout;

/* The lowest address of an element of the array at `data` (the pointer
 * the layout was planned for; layout NULL: n contiguous elements there). */
static inline const void *
cr_layout_start(const void *data, const cr_layout *layout)
{
    return (const char *)data + (layout != NULL ? layout->offset : 0);
}

/* Facts about the current device, and the software that drives it (what
 * a measurement needs to be compared with another honestly). */
typedef struct {
    int ordinal;
    char name[256];
    int compute_capability;     /* 10 * major + minor */
    int sm_count;
    int64_t l2_bytes;
    int64_t total_bytes;
    int sm_clock_khz;           /* peak */
    int memory_clock_khz;       /* peak */
    int memory_bus_bits;
    int driver_version;         /* the CUDA version the driver supports,
                                 * 1000 * major + 10 * minor */
    int runtime_version;        /* the CUDA runtime linked in, likewise */
    int cccl_version;           /* CCCL's (CUB's), as CCCL_VERSION:
                                 * 1000000 * major + 1000 * minor + patch */
} cr_device_info;

cr_status cr_device_query(cr_device_info *info, cr_error *error);

/* Makes `device` current and writes the device that was current to
 * *previous (the caller makes it current again with another call).  A
 * device the machine does not have is CR_ERR_INVALID. */
cr_status cr_device_exchange(int device, int *previous, cr_error *error);

/* An exact sum (`exact`, issue 44): the sum of the elements as NumPy's
 * loop adds them (each cast to `reduced`), with no rounding, rounded once
 * to nearest even to
 * `result`, which is what lands in the caller's result (its bytes) or is
 * stored into `out` as it is; with `divide_by_n` it is the mean, the
 * exact sum over the count of the elements (less the NaNs a NANSUM
 * skips) rounded once.  NaN and infinities as NumPy's sum gives them; an
 * exact sum beyond `result`'s range is an infinity.  Its bits depend only
 * on the elements, not on their order, the grid, the chunks or the GPU.
 * For sum and nansum (op SUM, NANSUM) of the whole array by the fast
 * method, `reduced` and `result` each float16, bfloat16, float32 or
 * float64: else CR_ERR_INVALID (exact_sum.cuh).  With `exact_state`,
 * the sum's state instead, unrounded, to the host (cr_exact_state_size,
 * after cr_reduce).
 *
 * One reduction, writing the single result (of the accumulator type
 * `acc`, or a cr_indexed_result: cr_result_size(acc, op) bytes) to
 * `result`.
 *
 * Host data (CR_HOST), contiguous or strided, streams through a ring of
 * pinned and device buffers (host_ring.cuh), chunk by chunk, each chunk
 * reduced while the next is staged and copied (a contiguous array in
 * page-locked memory is copied from where it is, not staged).  Device data (CR_DEVICE),
 * on any device, is read in place when its layout is contiguous, else
 * gathered into a contiguous buffer first.  Where no kernel instance reads
 * the elements into the accumulator as NumPy's cast asks (a dtype= that
 * casts each element, or an accumulator other than NumPy's default), a
 * cast pass converts them first, on the device, into a buffer of the
 * cast's type (host data chunk by chunk), as NumPy's own buffered cast
 * does.
 *
 * The call runs on its device data's device, else its device out's, else
 * (host data into a host result) the current one: that device is made
 * current for the call, with its own kept workspaces and rings, and the
 * caller's current device is current again after it, whatever the
 * outcome.  The work runs on `stream` (a cudaStream_t handle of that
 * device: 0 the legacy default stream, 1 and 2 as in the CUDA array
 * interface); when `wait` is set, it first waits, through an event, for
 * the work queued so far on `wait_stream` (the producer's, of that device
 * too), and with `join` and a device `out`, `wait_stream` then waits for
 * the call's work likewise (so that a stream the caller did not name
 * leaves the producer's work ordered).  For n == 0 the result is the
 * operator's identity (CR_OPS), and a reduction without one is
 * CR_ERR_INVALID; without an `out` the GPU is not touched.  Blocks the calling thread until the result is on the
 * host; call it with the GIL released.  Frees every allocation on every
 * path.
 *
 * With `out` set (device memory, on the data's device where the data are
 * on one), the result goes there instead, finished as NumPy finishes it:
 * the accumulator's value cast to `reduced` (NumPy's unsafe cast), with
 * `divide_by_n` divided by n in double (numpy.mean's `ret / rcount`), and
 * cast to `result`; an INDEX operator's index so, or -1 where every
 * element was NaN for a NaN-skipping one (NumPy raises there, which a
 * device out cannot; -1 is CuPy's answer).  The store is ordered on
 * `stream` and, for device data, cr_reduce returns without waiting for
 * it; the call's scratch is then stream-ordered memory, so that it can be
 * captured into a CUDA graph.  On a stream that is capturing, a call that
 * needs the host (no `out`, or host data) is refused with CR_ERR_CUDA
 * (cudaErrorStreamCaptureUnsupported) before anything is queued, so that
 * the capture goes on; a `wait_stream` that is not capturing is not
 * waited for (its work so far is no part of the graph).
 *
 * With `rows` set (a reduction along axes: cr_rows below), there is one
 * result a row and `out` is required: device memory, or with
 * `out_on_host` host memory for `rows` results; `data` points at row 0's
 * element 0 and `n` is rows * length.  `layout` is NULL, or for device
 * data the order of the elements in rows (kept dimensions first, C
 * order, as a c_order layout keeps it; its pointer `data`): they are then
 * gathered into contiguous rows first, and the rows' strides are not
 * read.  Rows of no element (length 0) take the operator's identity,
 * finished, into a device out.  Each result is
 * finished as a device out's is above, a mean divided by its row's
 * length (a COUNT operator's by its count), an INDEX operator's index
 * counted in its row (0 .. length - 1).  The bits of a row's result
 * depend only on its elements in order, its length, the types, the
 * operator and the method: not on the other rows, nor on where the row
 * lies (kernels/rows.cuh's one order).  The method fast takes rows (its
 * kernels size their own blocks: `threads` is checked, not used); the
 * others are CR_ERR_INVALID for now.  Device data are read in place,
 * or where a cast pass is needed cast first into a contiguous buffer;
 * host data (C-contiguous) are copied whole to device memory first.  An
 * out on the host is waited for; a device out is not. */
typedef enum {
    CR_HOST = 0,
    CR_DEVICE
} cr_location;

/* A reduction along axes (cr_request's `rows`): `rows` results, each the
 * reduction of `length` elements.  Row r (0 <= r < rows, in C order over
 * kept_shape) starts at data + sum_d idx_d(r) * kept_strides[d], and its
 * element k (0 <= k < length) is at that + k * stride: bytes, any
 * multiple of the item size, negative too (an INDEX operator's index k
 * counts along the axis as given).  Its result goes to out + sum_d
 * idx_d(r) * out_strides[d] (a device out; bytes, multiples of the
 * result's item size), or for an out on the host to out + r * the
 * result's item size (contiguous, in C order).  csrc/ plans the axes;
 * an empty kept shape (rows 0) is its own. */
typedef struct {
    int64_t rows;           /* >= 1: the product of kept_shape */
    int64_t length;         /* >= 0 (0: a device out only) */
    int64_t stride;         /* bytes between a row's consecutive elements */
    int kept_ndim;          /* 0 .. CR_MAX_DIMS; 0: a single row */
    int64_t kept_shape[CR_MAX_DIMS];
    int64_t kept_strides[CR_MAX_DIMS];  /* bytes, in the input */
    int64_t out_strides[CR_MAX_DIMS];   /* bytes, in a device out */
} cr_rows;

typedef struct {
    const void *data;
    const cr_layout *layout;    /* NULL: n contiguous elements at data */
    int64_t n;
    cr_type type;               /* the elements' */
    cr_type cast;               /* cast, acc and op: NumPy's cast rule
                                 * (the caller's: csrc/dtype_rules.c) */
    cr_type acc;
    cr_op op;
    cr_method method;
    int threads;                /* per block; 0: the method's default */
    cr_location location;
    uintptr_t stream;
    int wait;
    uintptr_t wait_stream;
    int join;                   /* with wait and out: wait_stream then
                                 * waits for the call's work */
    void *out;                  /* NULL: the accumulator's value to result */
    cr_type reduced;            /* with out: the steps that finish it */
    int divide_by_n;
    cr_type result;
    int device_known;           /* device is cr_request_device's answer for
                                 * this request (its data and out), which
                                 * the caller asked for already: cr_reduce
                                 * does not ask again */
    int device;
    const cr_rows *rows;        /* NULL: the whole array, one result */
    int out_on_host;            /* with rows: out is host memory */
    int exact;                  /* the exact sum, rounded once (below) */
    int exact_state;            /* with exact: its state to result, not
                                 * rounded (cr_exact_state_size) */
    const int *devices;         /* host data: the GPUs that reduce it, each
                                 * a share of its chunks (cr_reduce_host);
                                 * NULL: the call's device alone */
    int device_count;
} cr_request;

cr_status cr_reduce(const cr_request *request, void *result,
                    cr_error *error);

/* An exact sum's state, which a request with `exact_state` delivers to
 * its result (to the host, the whole array, no out): the exact sum of
 * the elements, unrounded, the specials among them (NaN, infinities) and
 * the NaNs skipped, as cr_exact_state_size() bytes, opaque.  A part of an
 * array (a Dask chunk) reduced so gives a state; the states of the parts
 * add exactly, in any order and grouping (cr_exact_add_states), and
 * their sum rounds (cr_exact_round_state) to the bits of one exact call
 * over every element.  A state of no element is zero bytes.  Host code,
 * no GPU. */
size_t cr_exact_state_size(void);

/* The state at `sum` becomes the sum of itself and `state`. */
void cr_exact_add_states(void *sum, const void *state);

/* Whether the elements of `state` held a NaN that was added (not one
 * that a NaN-skipping op skipped) and an infinity: 1 in *nan, *inf or
 * 0. */
void cr_exact_state_specials(const void *state, int *nan, int *inf);

/* `state` rounded as `request`'s exact sum is (its op, result, n: every
 * part's elements, and divide_by_n) into `result` on the host: its
 * value, or nanmean's count and value (cr_counted_result's layout).
 * CR_ERR_INVALID where the request could not be an exact sum's
 * (cr_exact_check's rules, but the method). */
cr_status cr_exact_round_state(const cr_request *request, const void *state,
                               void *result, cr_error *error);

/* Devices a process may have: the per-device state kept beyond (memory
 * pools) is a CR_ERR_INVALID, and the device's attributes are asked again
 * each time; the most a request's `devices` lists. */
#define CR_MAX_DEVICES 64

/* Whether `count` devices (request->devices) may reduce data that is on
 * the host (`host`) over every axis (`whole`): 1 to CR_MAX_DEVICES of
 * them, none negative, none twice; else CR_ERR_INVALID saying why.
 * Whether each exists is asked when the call runs. */
cr_status cr_devices_check(const int *devices, int count, int host,
                           int whole, cr_error *error);

/* The CUDA devices of this process (devices="all"). */
cr_status cr_device_count(int *count, cr_error *error);

/* The kernel that reads the elements of `rows` of item_size bytes in its
 * first pass: "short rows" (a thread a row of at most CR_SHORT_ROW
 * elements, tuning.h, in any layout), else "rows" (a warp, or a group of
 * lanes, a row: the elements of a row are adjacent or the rows are not)
 * or "columns" (adjacent rows' elements read side by side: the rows'
 * innermost kept dimension is contiguous and their elements are not, as
 * reducing the leading axis of a C-contiguous array).  After a cast pass
 * (cr_request_check's route), whose rows are contiguous, "columns"
 * becomes "rows".  NULL for an invalid `rows`.  Plain C: no CUDA call. */
const char *cr_rows_kernel_name(const cr_rows *rows, size_t item_size);

/* The device cr_reduce would run `request` on: its device data's, else
 * its device out's, else the current one (a caller that keeps the answer
 * in request->device, device_known set, spares cr_reduce the question). */
cr_status cr_request_device(const cr_request *request, int *device,
                            cr_error *error);

/* The threads per block that the request's method takes for its elements,
 * accumulator and operator (the request's threads, data and n are not
 * read): each valid power of two that cr_reduce would run, ascending, in
 * threads[0 .. *count - 1] (room for all of them).  Touches no device. */
cr_status cr_request_block_sizes(const cr_request *request, int *threads,
                                 int *count, cr_error *error);

/* Frees what the library keeps between calls (the fast method's
 * workspaces and their pinned result slots, the host rings).  For module
 * teardown. */
void cr_release_resources(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_H */
