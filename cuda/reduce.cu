/* reduce.cu: dispatch of the ladder kernels and the C entry points that
 * drive them (cr_reduce_host, cr_device_query).
 *
 * Two tables, one lookup each: by element type and operator to a typed
 * driver, and, inside it, by method and block size to a kernel.
 */
#include <climits>
#include <cstdio>
#include <cstring>

#include "check.cuh"
#include "cudareduce.h"
#include "ladder.cuh"
#include "operators.cuh"

cr_status
cr_record_cuda_error(cudaError_t code, const char *call, cr_error *error)
{
    error->cuda_code = (int)code;
    snprintf(error->message, sizeof(error->message), "%s: %s (in %s)",
             cudaGetErrorName(code), cudaGetErrorString(code), call);
    switch (code) {
    case cudaErrorMemoryAllocation:
        return CR_ERR_NO_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return CR_ERR_NO_DEVICE;
    default:
        return CR_ERR_CUDA;
    }
}

template <class T, class Acc>
using kernel_fn = void (*)(const T *, Acc *, int64_t);

#define CR_BLOCK_SIZES 5    /* 64, 128, 256, 512, 1024 */

static int
block_size_index(int threads)
{
    int index = 0;
    while ((CR_MIN_THREADS << index) < threads) {
        index++;
    }
    return index;
}

/* [method][block size] -> kernel.  Steps 1-5 read blockDim at run time, so
 * one instance serves every block size; 6 and 7 take it as a template. */
template <class T, class Acc, class Op>
struct kernel_table {
#define CR_SAME_KERNEL(k) {k<T, Acc, Op>, k<T, Acc, Op>, k<T, Acc, Op>, \
                           k<T, Acc, Op>, k<T, Acc, Op>}
#define CR_BLOCK_KERNEL(k) {k<64, T, Acc, Op>, k<128, T, Acc, Op>,      \
                            k<256, T, Acc, Op>, k<512, T, Acc, Op>,     \
                            k<1024, T, Acc, Op>}
    static constexpr kernel_fn<T, Acc> kernels[CR_METHOD_COUNT]
                                              [CR_BLOCK_SIZES] = {
        CR_SAME_KERNEL(reduce_interleaved_divergent),
        CR_SAME_KERNEL(reduce_interleaved_bank_conflict),
        CR_SAME_KERNEL(reduce_sequential),
        CR_SAME_KERNEL(reduce_first_add),
        CR_SAME_KERNEL(reduce_unroll_warp),
        CR_BLOCK_KERNEL(reduce_unroll_complete),
        CR_BLOCK_KERNEL(reduce_multi_element),
    };
#undef CR_SAME_KERNEL
#undef CR_BLOCK_KERNEL
};

/* Launches one pass.  A grid is at most 2^31 - 1 blocks wide; a wider pass
 * (only steps 1-6 on > 2^37 elements) is cut into launches, each seeing
 * its slice of the input and of the output. */
template <class T, class Acc, class Op>
static cr_status
launch_pass(cr_method method, const cr_pass *pass, const T *in, Acc *out,
            cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    kernel_fn<T, Acc> kernel = kernel_table<T, Acc, Op>::kernels
        [method][block_size_index(pass->threads)];
    const int64_t per_block =
        (int64_t)pass->threads * cr_method_elements_per_thread(method);
    for (int64_t first = 0; first < pass->blocks; first += INT_MAX) {
        int64_t grid = pass->blocks - first;
        if (grid > INT_MAX) {
            grid = INT_MAX;
        }
        const int64_t offset = first * per_block;
        kernel<<<(unsigned int)grid, pass->threads, pass->shared_bytes,
                 stream>>>(in + offset, out + first, pass->n_in - offset);
        CR_CHECK(cudaGetLastError());
    }
    return CR_OK;
error:
    return status;
}

/* The plan of a request on the current device. */
static cr_status
plan_request(const cr_request *request, size_t acc_size, cr_plan *plan,
             cr_error *error)
{
    cr_status status = CR_OK;
    int count = 0;
    int device = 0;
    int sm_count = 0;
    CR_CHECK(cudaGetDeviceCount(&count));
    CR_CHECK(cudaGetDevice(&device));
    CR_CHECK(cudaDeviceGetAttribute(&sm_count,
                                    cudaDevAttrMultiProcessorCount, device));
    return cr_plan_launch(request->n, request->method, request->threads,
                          acc_size, sm_count, plan, error);
error:
    return status;
}

/* Partial results of every pass: pass 0 writes the first `blocks` slots,
 * later passes ping-pong between them and the slots after. */
template <class Acc>
static size_t
workspace_bytes(const cr_plan *plan)
{
    int64_t slots = plan->pass[0].blocks
        + (plan->count > 1 ? plan->pass[1].blocks : 0);
    return (size_t)slots * sizeof(Acc);
}

/* Launches every pass of the plan on `stream`: pass 0 reads T, later passes
 * re-reduce the Acc partials.  *final points at the one result. */
template <class T, class Op, class Acc = decltype(Op::identity())>
static cr_status
run_passes(cr_method method, const cr_plan *plan, const T *in,
           Acc *workspace, cudaStream_t stream, Acc **final, cr_error *error)
{
    Acc *buffers[2] = {workspace, workspace + plan->pass[0].blocks};
    cr_status status = launch_pass<T, Acc, Op>(method, &plan->pass[0], in,
                                               buffers[0], stream, error);
    for (int p = 1; status == CR_OK && p < plan->count; p++) {
        status = launch_pass<Acc, Acc, Op>(method, &plan->pass[p],
                                           buffers[(p - 1) % 2],
                                           buffers[p % 2], stream, error);
    }
    *final = buffers[(plan->count - 1) % 2];
    return status;
}

/* Copy the host array over, reduce, bring the one result back. */
template <class T, class Op>
static cr_status
reduce_host_typed(const cr_request *request, void *result, cr_error *error)
{
    using Acc = decltype(Op::identity());
    cr_status status = CR_OK;
    cudaStream_t stream = cudaStreamPerThread;
    T *device_in = NULL;
    Acc *workspace = NULL;
    Acc *final = NULL;
    cr_plan plan;

    if (request->n == 0) {
        const Acc identity = Op::identity();
        memcpy(result, &identity, sizeof(Acc));
        return CR_OK;
    }
    status = plan_request(request, sizeof(Acc), &plan, error);
    if (status != CR_OK) {
        return status;
    }
    CR_CHECK(cudaMallocAsync((void **)&device_in,
                             (size_t)request->n * sizeof(T), stream));
    CR_CHECK(cudaMallocAsync((void **)&workspace,
                             workspace_bytes<Acc>(&plan), stream));
    CR_CHECK(cudaMemcpyAsync(device_in, request->data,
                             (size_t)request->n * sizeof(T),
                             cudaMemcpyHostToDevice, stream));
    status = run_passes<T, Op>(request->method, &plan, device_in, workspace,
                               stream, &final, error);
    if (status != CR_OK) {
        goto error;
    }
    CR_CHECK(cudaMemcpyAsync(result, final, sizeof(Acc),
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaStreamSynchronize(stream));

error:
    /* The first error is the one reported; freeing after it is best
     * effort (after a sticky error the context refuses everything). */
    if (device_in != NULL) {
        (void)cudaFreeAsync(device_in, stream);
    }
    if (workspace != NULL) {
        (void)cudaFreeAsync(workspace, stream);
    }
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

/* Time the passes alone on device-resident copies of the host array: the
 * array is copied to `buffers` device buffers once, and rep r reduces buffer
 * r % buffers, so that inputs larger in total than the L2 cache measure
 * memory, not cache.  Events bracket each rep's launches. */
template <class T, class Op>
static cr_status
time_reduce_typed(const cr_timing_request *timing, float *times_ms,
                  void *result, cr_error *error)
{
    using Acc = decltype(Op::identity());
    const cr_request *request = &timing->request;
    const size_t bytes = (size_t)request->n * sizeof(T);
    cr_status status = CR_OK;
    cudaStream_t stream = cudaStreamPerThread;
    T *inputs = NULL;
    Acc *workspace = NULL;
    Acc *final = NULL;
    cudaEvent_t events[2] = {NULL, NULL};
    cr_plan plan;

    if (request->n == 0 || timing->buffers < 1 || timing->reps < 1
        || timing->warmup < 0) {
        error->cuda_code = 0;
        snprintf(error->message, sizeof(error->message),
                 "timing needs n > 0, buffers >= 1, reps >= 1, warmup >= 0");
        return CR_ERR_INVALID;
    }
    status = plan_request(request, sizeof(Acc), &plan, error);
    if (status != CR_OK) {
        return status;
    }
    CR_CHECK(cudaMallocAsync((void **)&inputs, bytes * timing->buffers,
                             stream));
    CR_CHECK(cudaMallocAsync((void **)&workspace,
                             workspace_bytes<Acc>(&plan), stream));
    for (int b = 0; b < timing->buffers; b++) {
        CR_CHECK(cudaMemcpyAsync(inputs + (size_t)b * request->n,
                                 request->data, bytes,
                                 cudaMemcpyHostToDevice, stream));
    }
    CR_CHECK(cudaEventCreate(&events[0]));
    CR_CHECK(cudaEventCreate(&events[1]));
    for (int r = -timing->warmup; r < timing->reps; r++) {
        const T *in = inputs + (size_t)((r + timing->warmup)
                                        % timing->buffers) * request->n;
        CR_CHECK(cudaEventRecord(events[0], stream));
        status = run_passes<T, Op>(request->method, &plan, in, workspace,
                                   stream, &final, error);
        if (status != CR_OK) {
            goto error;
        }
        CR_CHECK(cudaEventRecord(events[1], stream));
        CR_CHECK(cudaEventSynchronize(events[1]));
        if (r >= 0) {
            CR_CHECK(cudaEventElapsedTime(&times_ms[r], events[0],
                                          events[1]));
        }
    }
    CR_CHECK(cudaMemcpyAsync(result, final, sizeof(Acc),
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaStreamSynchronize(stream));

error:
    for (int e = 0; e < 2; e++) {
        if (events[e] != NULL) {
            (void)cudaEventDestroy(events[e]);
        }
    }
    if (inputs != NULL) {
        (void)cudaFreeAsync(inputs, stream);
    }
    if (workspace != NULL) {
        (void)cudaFreeAsync(workspace, stream);
    }
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

/* The typed drivers of one (element type, operator). */
typedef struct {
    cr_status (*reduce_host)(const cr_request *, void *, cr_error *);
    cr_status (*time_reduce)(const cr_timing_request *, float *, void *,
                             cr_error *);
} typed_drivers;

#define CR_DRIVERS(T, Op) {reduce_host_typed<T, Op>, time_reduce_typed<T, Op>}

/* [element type][operator] -> typed drivers, rows in cr_type order; the
 * accumulator is NumPy's (cr_accumulator_type says the same to csrc/). */
static const typed_drivers driver_table[CR_TYPE_COUNT][CR_OP_COUNT] = {
    {CR_DRIVERS(int32_t, SumOp<int64_t>)},
    {CR_DRIVERS(int64_t, SumOp<int64_t>)},
    {CR_DRIVERS(float, SumOp<float>)},
    {CR_DRIVERS(double, SumOp<double>)},
};
static_assert(CR_TYPE_INT32 == 0 && CR_TYPE_INT64 == 1
                  && CR_TYPE_FLOAT32 == 2 && CR_TYPE_FLOAT64 == 3,
              "driver_table rows follow cr_type");

static const typed_drivers *
lookup_drivers(const cr_request *request, cr_error *error)
{
    if ((int)request->type < 0 || request->type >= CR_TYPE_COUNT
        || (int)request->op < 0 || request->op >= CR_OP_COUNT) {
        error->cuda_code = 0;
        snprintf(error->message, sizeof(error->message),
                 "invalid element type or operator");
        return NULL;
    }
    return &driver_table[request->type][request->op];
}

extern "C" cr_status
cr_reduce_host(const cr_request *request, void *result, cr_error *error)
{
    const typed_drivers *drivers = lookup_drivers(request, error);
    return drivers ? drivers->reduce_host(request, result, error)
                   : CR_ERR_INVALID;
}

extern "C" cr_status
cr_time_reduce(const cr_timing_request *timing, float *times_ms,
               void *result, cr_error *error)
{
    const typed_drivers *drivers = lookup_drivers(&timing->request, error);
    return drivers ? drivers->time_reduce(timing, times_ms, result, error)
                   : CR_ERR_INVALID;
}

extern "C" cr_status
cr_time_copy(int64_t bytes, int reps, float *times_ms, cr_error *error)
{
    cr_status status = CR_OK;
    cudaStream_t stream = cudaStreamPerThread;
    unsigned char *buffer = NULL;
    cudaEvent_t events[2] = {NULL, NULL};

    if (bytes <= 0 || reps < 1) {
        error->cuda_code = 0;
        snprintf(error->message, sizeof(error->message),
                 "copy timing needs bytes > 0 and reps >= 1");
        return CR_ERR_INVALID;
    }
    CR_CHECK(cudaMallocAsync((void **)&buffer, 2 * (size_t)bytes, stream));
    CR_CHECK(cudaMemsetAsync(buffer, 1, 2 * (size_t)bytes, stream));
    CR_CHECK(cudaEventCreate(&events[0]));
    CR_CHECK(cudaEventCreate(&events[1]));
    /* One warm-up copy, then reps timed ones. */
    for (int r = -1; r < reps; r++) {
        CR_CHECK(cudaEventRecord(events[0], stream));
        CR_CHECK(cudaMemcpyAsync(buffer + bytes, buffer, (size_t)bytes,
                                 cudaMemcpyDeviceToDevice, stream));
        CR_CHECK(cudaEventRecord(events[1], stream));
        CR_CHECK(cudaEventSynchronize(events[1]));
        if (r >= 0) {
            CR_CHECK(cudaEventElapsedTime(&times_ms[r], events[0],
                                          events[1]));
        }
    }

error:
    for (int e = 0; e < 2; e++) {
        if (events[e] != NULL) {
            (void)cudaEventDestroy(events[e]);
        }
    }
    if (buffer != NULL) {
        (void)cudaFreeAsync(buffer, stream);
    }
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

extern "C" cr_status
cr_device_query(cr_device_info *info, cr_error *error)
{
    cr_status status = CR_OK;
    cudaDeviceProp prop;
    int count = 0;
    CR_CHECK(cudaGetDeviceCount(&count));
    CR_CHECK(cudaGetDevice(&info->ordinal));
    CR_CHECK(cudaGetDeviceProperties(&prop, info->ordinal));
    snprintf(info->name, sizeof(info->name), "%s", prop.name);
    info->sm_count = prop.multiProcessorCount;
    info->l2_bytes = prop.l2CacheSize;
    info->total_bytes = (int64_t)prop.totalGlobalMem;
    return CR_OK;
error:
    return status;
}
