/* reduce.cu: the C entry points of the CUDA layer (cr_reduce,
 * cr_time_reduce, cr_time_copy, cr_device_query) and the one dispatch
 * table, from (element type, accumulator, operator) to the typed passes.
 * Everything here works on bytes; only run_passes is typed.
 */
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>

#include "check.cuh"
#include "cudareduce.h"
#include "gather.cuh"
#include "host_ring.cuh"
#include "passes.cuh"
#include "workspace.cuh"

/* What is true when the runtime reports an insufficient driver: either
 * there is no driver at all (cudaDriverGetVersion gives 0; the runtime
 * still says "insufficient") or it is older than this build's runtime. */
static void
describe_driver(cudaError_t code, const char *call, cr_error *error)
{
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        snprintf(error->message, sizeof(error->message),
                 "%s: no NVIDIA driver found (libcuda.so could not be "
                 "loaded): install an NVIDIA driver that supports CUDA "
                 "%d.%d (in %s)", cudaGetErrorName(code),
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, call);
    }
    else {
        snprintf(error->message, sizeof(error->message),
                 "%s: the NVIDIA driver supports CUDA up to %d.%d, but this "
                 "build of cudareduce needs CUDA %d.%d: update the driver "
                 "(in %s)", cudaGetErrorName(code), driver / 1000,
                 driver % 1000 / 10, CUDART_VERSION / 1000,
                 CUDART_VERSION % 1000 / 10, call);
    }
}

cr_status
cr_record_cuda_error(cudaError_t code, const char *call, cr_error *error)
{
    error->cuda_code = (int)code;
    if (code == cudaErrorInsufficientDriver) {
        describe_driver(code, call, error);
    }
    else {
        snprintf(error->message, sizeof(error->message), "%s: %s (in %s)",
                 cudaGetErrorName(code), cudaGetErrorString(code), call);
    }
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

static cr_status
invalid(cr_error *error, const char *message)
{
    error->cuda_code = 0;
    snprintf(error->message, sizeof(error->message), "%s", message);
    return CR_ERR_INVALID;
}

typedef struct {
    cr_type type;
    cr_type cast;
    cr_type acc;
    cr_op op;
    cr_passes_fn run_passes;
    cr_fast_fn run_fast;
    cr_cub_fn run_cub;          /* NULL: not instantiated (instances.def) */
} dispatch_entry;

#define CR_CUB_ENTRY_WITH_CUB(T, Acc, Op) run_cub<T, Acc, Op>
#define CR_CUB_ENTRY_NO_CUB(T, Acc, Op) NULL
#define CR_INSTANCE(TYPE, CAST, ACC, OP, T, Acc, Op, CUB)                 \
    {CR_TYPE_##TYPE, CR_TYPE_##CAST, CR_TYPE_##ACC, CR_OP_##OP,           \
     run_passes<T, Acc, Op>, run_fast<T, Acc, Op>,                        \
     CR_CUB_ENTRY_##CUB(T, Acc, Op)},

static const dispatch_entry dispatch_table[] = {
#include "instances.def"
};

#undef CR_INSTANCE

#define DISPATCH_COUNT (sizeof(dispatch_table) / sizeof(dispatch_table[0]))

static const dispatch_entry *
lookup_entry(const cr_request *request, cr_error *error)
{
    /* Signed and unsigned integer sums share one wrapping accumulator. */
    const cr_type acc = request->op == CR_OP_SUM
                        && request->acc == CR_TYPE_INT64
                        ? CR_TYPE_UINT64 : request->acc;
    for (size_t i = 0; i < DISPATCH_COUNT; i++) {
        const dispatch_entry *entry = &dispatch_table[i];
        if (entry->type == request->type && entry->cast == request->cast
            && entry->acc == acc && entry->op == request->op) {
            if (request->method == CR_METHOD_CUB && entry->run_cub == NULL) {
                (void)invalid(error, "method 'cub' runs NumPy's default "
                                     "accumulator only: leave out dtype=");
                return NULL;
            }
            return entry;
        }
    }
    (void)invalid(error, "no kernel for this element type, cast, "
                         "accumulator and operator");
    return NULL;
}

/* The plan of a request on the current device. */
static cr_status
plan_request(const cr_request *request, cr_plan *plan, cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    int sm_count = 0;
    CR_CHECK(cudaGetDevice(&device));
    CR_CHECK(cudaDeviceGetAttribute(&sm_count,
                                    cudaDevAttrMultiProcessorCount, device));
    return cr_plan_launch(request->n, request->method, request->threads,
                          cr_type_size(request->type),
                          cr_type_size(request->acc), sm_count, plan, error);
error:
    return status;
}

/* Device data must be memory the current device can read as its own: a
 * host pointer (or another GPU's) would fault in the kernel, and a fault
 * poisons the whole CUDA context, so it is refused up front. */
static cr_status
check_device_pointer(const void *data, cr_error *error)
{
    cr_status status = CR_OK;
    cudaPointerAttributes attributes;
    int device = 0;
    CR_CHECK(cudaGetDevice(&device));
    if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
        (void)cudaGetLastError();
        return invalid(error, "the data pointer is not CUDA memory");
    }
    if (attributes.type != cudaMemoryTypeDevice
        && attributes.type != cudaMemoryTypeManaged) {
        snprintf(error->message, sizeof(error->message),
                 "the data pointer %p is %s, not device memory", data,
                 attributes.type == cudaMemoryTypeHost
                     ? "pinned host memory" : "host memory");
        error->cuda_code = 0;
        return CR_ERR_INVALID;
    }
    if (attributes.type == cudaMemoryTypeDevice
        && attributes.device != device) {
        snprintf(error->message, sizeof(error->message),
                 "the data is on CUDA device %d, but the current device is "
                 "%d: make device %d current first", attributes.device,
                 device, attributes.device);
        error->cuda_code = 0;
        return CR_ERR_INVALID;
    }
    return CR_OK;
error:
    return status;
}

/* Makes `stream` wait for the work queued so far on `producer`. */
static cr_status
wait_for_producer(cudaStream_t stream, cudaStream_t producer,
                  cr_error *error)
{
    cr_status status = CR_OK;
    cudaEvent_t ready = NULL;
    CR_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CR_CHECK(cudaEventRecord(ready, producer));
    CR_CHECK(cudaStreamWaitEvent(stream, ready, 0));
error:
    if (ready != NULL) {
        (void)cudaEventDestroy(ready);
    }
    return status;
}

static cr_status
validate_request(const cr_request *request, cr_error *error)
{
    if ((int)request->type < 0 || request->type >= CR_TYPE_COUNT
        || (int)request->op < 0 || request->op >= CR_OP_COUNT) {
        return invalid(error, "invalid element type or operator");
    }
    if (request->n < 0 || request->n > CR_MAX_ELEMENTS) {
        return invalid(error, "n must be from 0 to 2^62");
    }
    if (request->layout != NULL && request->layout->n != request->n) {
        return invalid(error, "the layout does not match n");
    }
    if (request->n > 0 && request->data == NULL) {
        return invalid(error, "a null data pointer with non-zero size");
    }
    return CR_OK;
}

/* What one reduction needs besides its input: set up once, then launched
 * any number of times (the bench launches it many), its result fetched,
 * and closed. */
typedef struct {
    const dispatch_entry *entry;
    cr_method method;
    size_t acc_size;
    cr_plan plan;               /* the ladder's and the fast method's */
    void *scratch;              /* ladder: partials; cub: temp + result */
    size_t cub_temp_bytes;
    void *device_result;        /* where the result lands (not fast) */
    cr_workspace *fast;         /* the fast method's */
} reducer;

/* Round up to a multiple of 16 bytes. */
static size_t
aligned16(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

static cr_status
reducer_open(reducer *r, const cr_request *request, cudaStream_t stream,
             cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    memset(r, 0, sizeof(*r));
    r->method = request->method;
    r->acc_size = cr_type_size(request->acc);
    if ((r->entry = lookup_entry(request, error)) == NULL) {
        return CR_ERR_INVALID;
    }
    switch (r->method) {
    case CR_METHOD_CUB:
        /* CUB's size query fails on a missing device with an error that
         * does not say so: ask for the device first. */
        CR_CHECK(cudaGetDevice(&device));
        status = r->entry->run_cub(NULL, request->n, NULL, &r->cub_temp_bytes,
                                   NULL, stream, error);
        if (status != CR_OK) {
            return status;
        }
        CR_CHECK(cudaMallocAsync(&r->scratch,
                                 aligned16(r->cub_temp_bytes) + r->acc_size,
                                 stream));
        r->device_result = static_cast<char *>(r->scratch)
            + aligned16(r->cub_temp_bytes);
        return CR_OK;
    case CR_METHOD_FAST:
        status = plan_request(request, &r->plan, error);
        return status == CR_OK ? cr_workspace_acquire(&r->fast, error)
                               : status;
    default:
        status = plan_request(request, &r->plan, error);
        if (status != CR_OK) {
            return status;
        }
        CR_CHECK(cudaMallocAsync(&r->scratch,
                                 workspace_bytes(&r->plan, r->acc_size),
                                 stream));
        return CR_OK;
    }
error:
    return status;
}

/* Queues the kernels that reduce the n elements at `in` (n as planned).
 * The result lands in device memory at `out`, or with out NULL where
 * reducer_fetch reads it. */
static cr_status
reducer_launch(reducer *r, const void *in, int64_t n, void *out,
               cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    switch (r->method) {
    case CR_METHOD_CUB:
        return r->entry->run_cub(in, n, r->scratch, &r->cub_temp_bytes,
                                 out != NULL ? out : r->device_result,
                                 stream, error);
    case CR_METHOD_FAST:
        return r->entry->run_fast(&r->plan.pass[0], in, r->fast->partials,
                                  r->fast->counter,
                                  out != NULL ? out : r->fast->result_device,
                                  stream, error);
    default:
        status = r->entry->run_passes(r->method, &r->plan, in, r->scratch,
                                      stream, &r->device_result, error);
        if (status == CR_OK && out != NULL) {
            CR_CHECK(cudaMemcpyAsync(out, r->device_result, r->acc_size,
                                     cudaMemcpyDeviceToDevice, stream));
        }
        return status;
    }
error:
    return status;
}

/* Waits for the launches and copies the result to `result`.  The fast
 * kernel has already written it to pinned host memory. */
static cr_status
reducer_fetch(reducer *r, void *result, cudaStream_t stream,
              cr_error *error)
{
    cr_status status = CR_OK;
    if (r->method != CR_METHOD_FAST) {
        CR_CHECK(cudaMemcpyAsync(result, r->device_result, r->acc_size,
                                 cudaMemcpyDeviceToHost, stream));
    }
    CR_CHECK(cudaStreamSynchronize(stream));
    if (r->method == CR_METHOD_FAST) {
        memcpy(result, r->fast->result_host, r->acc_size);
    }
    return CR_OK;
error:
    return status;
}

static void
reducer_close(reducer *r, cudaStream_t stream, int healthy)
{
    if (r->scratch != NULL) {
        (void)cudaFreeAsync(r->scratch, stream);
    }
    if (r->fast != NULL) {
        cr_workspace_release(r->fast, healthy);
    }
}

/* The chunk at which the next host reduction fails (cr_inject_host_fault),
 * or -1. */
static std::atomic<int64_t> injected_fault_chunk{-1};

extern "C" void
cr_inject_host_fault(int64_t chunk)
{
    injected_fault_chunk.store(chunk < 0 ? -1 : chunk);
}

/* Whether this call takes the injected fault at chunk k (only one does). */
static bool
take_injected_fault(int64_t k)
{
    int64_t expected = k;
    return injected_fault_chunk.load(std::memory_order_relaxed) == k
           && injected_fault_chunk.compare_exchange_strong(expected, -1);
}

/* Host data through a ring (host_ring.cuh): chunk k is staged into slot
 * k % count by the staging threads, copied on the ring's copy stream and
 * reduced on `stream` into partials[k], so that staging chunk k + 1
 * overlaps the copy and the reduction of chunk k.  The partials are then
 * reduced by the same method, in the accumulator type. */
static cr_status
reduce_host(const cr_request *request, cudaStream_t stream, void *result,
            cr_error *error)
{
    cr_status status = CR_OK;
    const size_t item = cr_type_size(request->type);
    const size_t acc_size = cr_type_size(request->acc);
    cr_host_ring *ring = NULL;
    reducer chunk_reducer, tail_reducer, combine_reducer;
    int chunk_open = 0, tail_open = 0, combine_open = 0;
    unsigned char *partials = NULL;
    cr_request part = *request;
    int64_t chunk, chunks, tail;

    status = cr_host_ring_acquire(&ring, error);
    if (status != CR_OK) {
        return status;
    }
    chunk = (int64_t)(ring->chunk_bytes / item);
    chunks = (request->n + chunk - 1) / chunk;
    tail = request->n - (chunks - 1) * chunk;
    part.layout = NULL;
    part.location = CR_DEVICE;
    part.n = chunks > 1 ? chunk : tail;
    status = reducer_open(&chunk_reducer, &part, stream, error);
    chunk_open = 1;
    if (status != CR_OK) {
        goto error;
    }
    if (chunks > 1) {
        if (tail != chunk) {
            part.n = tail;
            status = reducer_open(&tail_reducer, &part, stream, error);
            tail_open = 1;
            if (status != CR_OK) {
                goto error;
            }
        }
        /* The partials are accumulators already: no cast. */
        part.type = part.cast = request->acc;
        part.n = chunks;
        status = reducer_open(&combine_reducer, &part, stream, error);
        combine_open = 1;
        if (status != CR_OK) {
            goto error;
        }
        CR_CHECK(cudaMallocAsync((void **)&partials, (size_t)chunks * acc_size,
                                 stream));
    }
    for (int64_t k = 0; k < chunks; k++) {
        const int slot = (int)(k % ring->count);
        const int64_t count = k == chunks - 1 ? tail : chunk;
        unsigned char *buffer = ring->device_buffers
            + (size_t)slot * ring->chunk_bytes;
        reducer *r = k == chunks - 1 && tail_open ? &tail_reducer
                                                  : &chunk_reducer;
        if (k >= ring->count) {
            /* The slot's staging buffer was copied out, and its device
             * buffer reduced, before they are reused. */
            CR_CHECK(cudaEventSynchronize(ring->copied[slot]));
            CR_CHECK(cudaStreamWaitEvent(ring->copy_stream,
                                         ring->reduced[slot], 0));
        }
        cr_stager_copy(ring->stager, request->data, request->layout, item,
                       k * chunk, count, ring->staging[slot]);
        CR_CHECK(cudaMemcpyAsync(buffer, ring->staging[slot],
                                 (size_t)count * item,
                                 cudaMemcpyHostToDevice, ring->copy_stream));
        CR_CHECK(cudaEventRecord(ring->copied[slot], ring->copy_stream));
        CR_CHECK(cudaStreamWaitEvent(stream, ring->copied[slot], 0));
        status = reducer_launch(r, buffer, count,
                                chunks > 1 ? partials + k * acc_size : NULL,
                                stream, error);
        if (status != CR_OK) {
            goto error;
        }
        CR_CHECK(cudaEventRecord(ring->reduced[slot], stream));
        if (take_injected_fault(k)) {
            status = cr_record_cuda_error(cudaErrorMemoryAllocation,
                                          "a fault injected for a test",
                                          error);
            goto error;
        }
    }
    if (chunks > 1) {
        status = reducer_launch(&combine_reducer, partials, chunks, NULL,
                                stream, error);
        if (status == CR_OK) {
            status = reducer_fetch(&combine_reducer, result, stream, error);
        }
    }
    else {
        status = reducer_fetch(&chunk_reducer, result, stream, error);
    }

error:
    if (status != CR_OK) {
        /* Nothing queued may still use what is freed below. */
        (void)cudaStreamSynchronize(ring->copy_stream);
        (void)cudaStreamSynchronize(stream);
        (void)cudaGetLastError();
    }
    if (partials != NULL) {
        (void)cudaFreeAsync(partials, stream);
    }
    if (chunk_open) {
        reducer_close(&chunk_reducer, stream, status == CR_OK);
    }
    if (tail_open) {
        reducer_close(&tail_reducer, stream, status == CR_OK);
    }
    if (combine_open) {
        reducer_close(&combine_reducer, stream, status == CR_OK);
    }
    cr_host_ring_release(ring, status == CR_OK);
    return status;
}

extern "C" cr_status
cr_reduce(const cr_request *request, void *result, cr_error *error)
{
    cr_status status = validate_request(request, error);
    cudaStream_t stream = (cudaStream_t)request->stream;
    const size_t item = cr_type_size(request->type);
    const int gather = request->layout != NULL
        && !request->layout->contiguous;
    const unsigned char *in = NULL;
    void *input_buffer = NULL;
    int opened = 0;
    reducer r;

    if (status != CR_OK) {
        return status;
    }
    if (lookup_entry(request, error) == NULL) {
        return CR_ERR_INVALID;
    }
    if (request->n == 0) {
        /* 0 is the identity of a sum, and false (0) of a logical or. */
        if (request->op != CR_OP_SUM && !(request->op == CR_OP_MAX
                                          && request->acc == CR_TYPE_BOOL)) {
            return invalid(error, "an empty array has no minimum or "
                                  "maximum");
        }
        memset(result, 0, cr_type_size(request->acc));
        return CR_OK;
    }
    in = static_cast<const unsigned char *>(request->data);
    if (request->layout != NULL) {
        in += request->layout->offset;
    }
    if (request->location == CR_DEVICE) {
        status = check_device_pointer(in, error);
        if (status != CR_OK) {
            return status;
        }
    }
    if (request->wait) {
        status = wait_for_producer(stream, (cudaStream_t)request->wait_stream,
                                   error);
        if (status != CR_OK) {
            return status;
        }
    }
    if (request->location == CR_HOST) {
        /* Measured on an H100: through the ring even 4 KiB take less time
         * than one copy from pageable memory. */
        status = reduce_host(request, stream, result, error);
        if (status != CR_OK) {
            /* A failed call leaves no error for the next one to find. */
            (void)cudaGetLastError();
        }
        return status;
    }
    status = reducer_open(&r, request, stream, error);
    opened = 1;
    if (status != CR_OK) {
        goto error;
    }
    if (gather) {
        CR_CHECK(cudaMallocAsync(&input_buffer, (size_t)request->n * item,
                                 stream));
        /* The gather reads from the layout's own base (data). */
        status = cr_gather(request->data, request->layout, item,
                           input_buffer, stream, error);
        if (status != CR_OK) {
            goto error;
        }
    }
    status = reducer_launch(&r, gather ? input_buffer : in, request->n,
                            NULL, stream, error);
    if (status != CR_OK) {
        goto error;
    }
    status = reducer_fetch(&r, result, stream, error);

error:
    /* The first error is the one reported; freeing after it is best
     * effort (after a sticky error the context refuses everything). */
    if (input_buffer != NULL) {
        (void)cudaFreeAsync(input_buffer, stream);
    }
    if (opened) {
        reducer_close(&r, stream, status == CR_OK);
    }
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

/* Time the launches alone on device-resident copies of the host array: the
 * array is copied to `buffers` device buffers once, and rep r reduces buffer
 * r % buffers, so that inputs larger in total than the L2 cache measure
 * memory, not cache.  Events bracket each rep's launches. */
extern "C" cr_status
cr_time_reduce(const cr_timing_request *timing, float *times_ms,
               void *result, cr_error *error)
{
    const cr_request *request = &timing->request;
    cr_status status = validate_request(request, error);
    const size_t bytes = (size_t)request->n * cr_type_size(request->type);
    cudaStream_t stream = cudaStreamPerThread;
    unsigned char *inputs = NULL;
    cudaEvent_t events[2] = {NULL, NULL};
    int opened = 0;
    reducer r;

    if (status != CR_OK) {
        return status;
    }
    if (request->n == 0 || request->location != CR_HOST
        || request->layout != NULL || timing->buffers < 1
        || timing->reps < 1 || timing->warmup < 0) {
        return invalid(error, "timing needs a contiguous host array of "
                              "n > 0, buffers >= 1, reps >= 1, "
                              "warmup >= 0");
    }
    status = reducer_open(&r, request, stream, error);
    opened = 1;
    if (status != CR_OK) {
        goto error;
    }
    CR_CHECK(cudaMallocAsync((void **)&inputs, bytes * timing->buffers,
                             stream));
    for (int b = 0; b < timing->buffers; b++) {
        CR_CHECK(cudaMemcpyAsync(inputs + (size_t)b * bytes, request->data,
                                 bytes, cudaMemcpyHostToDevice, stream));
    }
    CR_CHECK(cudaEventCreate(&events[0]));
    CR_CHECK(cudaEventCreate(&events[1]));
    for (int rep = -timing->warmup; rep < timing->reps; rep++) {
        const unsigned char *in = inputs
            + (size_t)((rep + timing->warmup) % timing->buffers) * bytes;
        CR_CHECK(cudaEventRecord(events[0], stream));
        status = reducer_launch(&r, in, request->n, NULL, stream, error);
        if (status != CR_OK) {
            goto error;
        }
        CR_CHECK(cudaEventRecord(events[1], stream));
        CR_CHECK(cudaEventSynchronize(events[1]));
        if (rep >= 0) {
            CR_CHECK(cudaEventElapsedTime(&times_ms[rep], events[0],
                                          events[1]));
        }
    }
    status = reducer_fetch(&r, result, stream, error);

error:
    for (int e = 0; e < 2; e++) {
        if (events[e] != NULL) {
            (void)cudaEventDestroy(events[e]);
        }
    }
    if (inputs != NULL) {
        (void)cudaFreeAsync(inputs, stream);
    }
    if (opened) {
        reducer_close(&r, stream, status == CR_OK);
    }
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

extern "C" void
cr_release_resources(void)
{
    cr_workspace_release_all();
    cr_host_ring_release_all();
}

extern "C" cr_status
cr_time_copy(int64_t bytes, int from_host, int reps, float *times_ms,
             cr_error *error)
{
    cr_status status = CR_OK;
    cudaStream_t stream = cudaStreamPerThread;
    unsigned char *buffer = NULL;
    unsigned char *pinned = NULL;
    const unsigned char *source = NULL;
    /* Device to device: the source is the buffer's first half. */
    const size_t device_bytes = (from_host ? 1 : 2) * (size_t)bytes;
    cudaEvent_t events[2] = {NULL, NULL};

    if (bytes <= 0 || reps < 1) {
        error->cuda_code = 0;
        snprintf(error->message, sizeof(error->message),
                 "copy timing needs bytes > 0 and reps >= 1");
        return CR_ERR_INVALID;
    }
    CR_CHECK(cudaMallocAsync((void **)&buffer, device_bytes, stream));
    CR_CHECK(cudaMemsetAsync(buffer, 1, device_bytes, stream));
    source = buffer;
    if (from_host) {
        CR_CHECK(cudaHostAlloc((void **)&pinned, (size_t)bytes,
                               cudaHostAllocDefault));
        memset(pinned, 1, (size_t)bytes);
        source = pinned;
    }
    CR_CHECK(cudaEventCreate(&events[0]));
    CR_CHECK(cudaEventCreate(&events[1]));
    /* One warm-up copy, then reps timed ones. */
    for (int r = -1; r < reps; r++) {
        CR_CHECK(cudaEventRecord(events[0], stream));
        CR_CHECK(cudaMemcpyAsync(buffer + device_bytes - bytes, source,
                                 (size_t)bytes,
                                 from_host ? cudaMemcpyHostToDevice
                                           : cudaMemcpyDeviceToDevice,
                                 stream));
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
    if (pinned != NULL) {
        (void)cudaStreamSynchronize(stream);
        (void)cudaFreeHost(pinned);
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
