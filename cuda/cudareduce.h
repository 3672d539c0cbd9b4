/* cudareduce.h: the C-callable API of the CUDA layer.
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

/* Methods, in ladder order (Harris, "Optimizing Parallel Reduction in CUDA",
 * kernels 1-7).  The order is the public order of cudareduce.methods(). */
typedef enum {
    CR_METHOD_INTERLEAVED_DIVERGENT = 0,
    CR_METHOD_INTERLEAVED_BANK_CONFLICT,
    CR_METHOD_SEQUENTIAL,
    CR_METHOD_FIRST_ADD,
    CR_METHOD_UNROLL_WARP,
    CR_METHOD_UNROLL_COMPLETE,
    CR_METHOD_MULTI_ELEMENT,
    CR_METHOD_COUNT
} cr_method;

/* Element types.  The accumulator of a reduction is one of these too. */
typedef enum {
    CR_TYPE_INT32 = 0,
    CR_TYPE_INT64,
    CR_TYPE_FLOAT32,
    CR_TYPE_FLOAT64,
    CR_TYPE_COUNT
} cr_type;

typedef enum {
    CR_OP_SUM = 0,
    CR_OP_COUNT
} cr_op;

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
/* Whether the plan of this method depends on the device's SM count. */
int cr_method_needs_sm_count(cr_method method);
/* Elements each thread loads before the tree, per sweep of the grid: a
 * block covers threads * this many consecutive elements (steps 1-6). */
int cr_method_elements_per_thread(cr_method method);

/* Size in bytes of an element type; 0 for an invalid one. */
size_t cr_type_size(cr_type type);
/* The accumulator (and result) type of reducing `type` with `op`, by
 * NumPy's rules: int32 sums accumulate in int64, floats in their own type. */
cr_type cr_accumulator_type(cr_type type, cr_op op);

/* Plans the passes of reducing n elements whose accumulator is acc_size
 * bytes.  sm_count is used only where cr_method_needs_sm_count() says so
 * (pass 0 otherwise).  Plain C: no CUDA call. */
cr_status cr_plan_launch(int64_t n, cr_method method, int threads,
                         size_t acc_size, int sm_count, cr_plan *plan,
                         cr_error *error);

/* Facts about the current device. */
typedef struct {
    int ordinal;
    char name[256];
    int sm_count;
    int64_t l2_bytes;
    int64_t total_bytes;
} cr_device_info;

cr_status cr_device_query(cr_device_info *info, cr_error *error);

/* One reduction of host memory: copy n elements at `data` to the device,
 * reduce them there with `method`, and write the single result (of the
 * accumulator type, cr_type_size() bytes) to `result`.  For n == 0 the
 * result is the operator's identity and the GPU is not touched.  Blocks the
 * calling thread until the result is on the host; call it with the GIL
 * released.  Frees every device allocation on every path. */
typedef struct {
    const void *data;
    int64_t n;
    cr_type type;
    cr_op op;
    cr_method method;
    int threads;
} cr_request;

cr_status cr_reduce_host(const cr_request *request, void *result,
                         cr_error *error);

/* Kernel timing for the bench, on device-resident data: the host array of
 * `request` is copied to `buffers` device buffers once; after `warmup`
 * untimed runs, each of `reps` runs reduces the next buffer in turn, its
 * passes bracketed by CUDA events; times_ms[r] is run r's time.  The result
 * of the last run is written to `result`, for checking. */
typedef struct {
    cr_request request;
    int buffers;
    int warmup;
    int reps;
} cr_timing_request;

cr_status cr_time_reduce(const cr_timing_request *timing, float *times_ms,
                         void *result, cr_error *error);

/* Times `reps` device-to-device copies of `bytes` bytes (after one warm-up
 * copy), each bracketed by CUDA events. */
cr_status cr_time_copy(int64_t bytes, int reps, float *times_ms,
                       cr_error *error);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_H */
