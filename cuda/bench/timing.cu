/* timing.cu: the bench's timers (cudareduce_timing.h): a reduction and
 * the probes that bound it (an empty kernel, a read-only streaming kernel,
 * a copy from pinned host memory), each sampled the same way. */
#include <chrono>
#include <cstring>

#include "check.cuh"
#include "cudareduce_timing.h"
#include "dispatch.cuh"
#include "memory/pool.cuh"
#include "tuning.h"

/* Events of one sample: its start, one after each timed pass, its end. */
enum { SAMPLE_EVENTS = CR_MAX_PASSES + 2 };

/* What one sample is made of: a bracket of events, and inside it the work
 * (held, flushed, batched as timing->mode says). */
typedef struct {
    const cr_timing *timing;
    cudaStream_t stream;
    cr_stream_hold *hold;
    cudaEvent_t events[SAMPLE_EVENTS];
} sampler;

static cr_status
sampler_open(sampler *s, const cr_timing *timing, cudaStream_t stream,
             cr_error *error)
{
    cr_status status = CR_OK;
    memset(s, 0, sizeof(*s));
    s->timing = timing;
    s->stream = stream;
    if ((int)timing->mode < 0 || timing->mode >= CR_TIMING_MODE_COUNT
        || timing->buffers < 1 || timing->warmup < 0 || timing->reps < 1
        || timing->batch < 1
        || (timing->batch > 1 && timing->mode != CR_TIMING_BATCH)) {
        return cr_fail(error, CR_ERR_INVALID,
                       "timing needs a mode, buffers >= 1, warmup >= 0, "
                       "reps >= 1 and batch >= 1 (> 1 only for batch)");
    }
    for (int e = 0; e < SAMPLE_EVENTS; e++) {
        CR_CHECK(cudaEventCreate(&s->events[e]));
    }
    if (timing->mode != CR_TIMING_LAUNCH) {
        status = cr_stream_hold_create((uintptr_t)stream, &s->hold, error);
    }
done:
    return status;
}

static void
sampler_close(sampler *s)
{
    cr_stream_hold_destroy(s->hold);
    for (int e = 0; e < SAMPLE_EVENTS; e++) {
        if (s->events[e] != NULL) {
            (void)cudaEventDestroy(s->events[e]);
        }
    }
}

/* Runs warmup + reps samples of `launch(run, pass_ends)`, which queues run
 * number `run` (counting from 0 across samples, for the rotation) and
 * records pass_ends[p] after pass p when pass_ends is not NULL (cold
 * samples of `passes` > 0 passes).  times_ms[r]: sample r's time per run;
 * pass_ms[r * CR_MAX_PASSES + p] (if not NULL): its pass p's.
 *
 * Where samples are held, one run goes first with the stream not held: the
 * first launch of a kernel loads its module (CUDA's lazy loading), which
 * waits for the device, so behind the holding kernel it would wait for
 * ever (seen on the H100: the holder's timeout on the first ladder
 * sample).  Launch mode has no holder, and so exactly warmup + reps
 * samples (the profiler counts on it). */
template <class Launch>
static cr_status
sample(sampler *s, int passes, Launch launch, float *times_ms,
       float *pass_ms, cr_error *error)
{
    cr_status status = CR_OK;
    const cr_timing *timing = s->timing;
    const int timed_passes =
        timing->mode == CR_TIMING_COLD && pass_ms != NULL ? passes : 0;
    const cudaEvent_t end = s->events[SAMPLE_EVENTS - 1];
    int64_t run = 0;
    if (s->hold != NULL) {
        status = launch(run++, NULL);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaStreamSynchronize(s->stream));
    }
    for (int r = -timing->warmup; r < timing->reps; r++) {
        if (s->hold != NULL) {
            status = cr_stream_hold_hold(
                s->hold, timing->mode == CR_TIMING_COLD, error);
            if (status != CR_OK) {
                goto done;
            }
        }
        CR_CHECK(cudaEventRecord(s->events[0], s->stream));
        for (int k = 0; k < timing->batch; k++, run++) {
            status = launch(run, timed_passes ? s->events + 1 : NULL);
            if (status != CR_OK) {
                goto done;
            }
        }
        CR_CHECK(cudaEventRecord(end, s->stream));
        if (s->hold != NULL) {
            status = cr_stream_hold_release(s->hold, error);
            if (status != CR_OK) {
                goto done;
            }
        }
        CR_CHECK(cudaEventSynchronize(end));
        if (r < 0) {
            continue;
        }
        CR_CHECK(cudaEventElapsedTime(&times_ms[r], s->events[0], end));
        times_ms[r] /= (float)timing->batch;
        for (int p = 0; p < timed_passes; p++) {
            CR_CHECK(cudaEventElapsedTime(&pass_ms[r * CR_MAX_PASSES + p],
                                          s->events[p], s->events[p + 1]));
        }
    }
done:
    return status;
}

extern "C" cr_status
cr_time_reduce(const cr_request *request, const cr_timing *timing,
               float *times_ms, float *pass_ms, int *passes, void *result,
               cr_error *error)
{
    cr_route route;
    cr_status status = cr_request_check(request, &route, error);
    const size_t bytes = (size_t)request->n * cr_type_size(request->type);
    cudaStream_t stream = cudaStreamPerThread;
    const int capturing = 0;        /* the timers capture no graph */
    unsigned char *inputs = NULL;
    sampler s = {};
    cr_reducer r = {};

    if (status != CR_OK) {
        return status;
    }
    if (request->rows != NULL) {
        return cr_fail(error, CR_ERR_INVALID,
                       "timing runs reductions of the whole array");
    }
    if (request->n == 0 || request->location != CR_HOST
        || (request->layout != NULL && !request->layout->contiguous)) {
        return cr_fail(error, CR_ERR_INVALID,
                       "timing needs a contiguous host array of n > 0");
    }
    if (route.staged != request->type) {
        return cr_fail(error, CR_ERR_INVALID,
                       "timing runs one row's kernels, with no cast pass");
    }
    status = sampler_open(&s, timing, stream, error);
    if (status == CR_OK) {
        /* The result stays on the device, as a caller's with out= does:
         * the fast kernel writes no mapped host memory between runs. */
        status = cr_reducer_open(&r, request, route.entry, 1, stream,
                                 capturing, error);
    }
    if (status != CR_OK) {
        goto done;
    }
    *passes = cr_reducer_passes(&r);
    CR_POOL_MALLOC((void **)&inputs, bytes * timing->buffers, stream,
                   capturing);
    for (int b = 0; b < timing->buffers; b++) {
        CR_CHECK(cudaMemcpyAsync(inputs + (size_t)b * bytes,
                                 cr_layout_start(request->data,
                                                 request->layout),
                                 bytes, cudaMemcpyHostToDevice, stream));
    }
    status = sample(
        &s, *passes,
        [&](int64_t run, const cudaEvent_t *pass_ends) {
            return cr_reducer_launch(
                &r, inputs + (size_t)(run % timing->buffers) * bytes,
                request->n, NULL, pass_ends, stream, error);
        },
        times_ms, pass_ms, error);
    if (status == CR_OK) {
        status = cr_reducer_fetch(&r, result, stream, error);
    }

done:
    if (inputs != NULL) {
        (void)cudaFreeAsync(inputs, stream);
    }
    cr_reducer_close(&r, stream, status == CR_OK);
    sampler_close(&s);
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

__global__ void
probe_empty()
{
}

/* Reads every 16-byte word once, streaming past L1; the xor is stored only
 * where it cannot be (the data are written as zeros), so the loads stay
 * and the writes cost nothing. */
__global__ void __launch_bounds__(CR_PROBE_THREADS)
probe_read(const int4 *in, int64_t words, int *sink)
{
    int acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)CR_PROBE_THREADS + threadIdx.x;
         i < words; i += (int64_t)gridDim.x * CR_PROBE_THREADS) {
        const int4 v = __ldcs(in + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 1) {
        *sink = acc;
    }
}

__global__ void
probe_signal(volatile unsigned long long *word, unsigned int sequence)
{
    *word = (unsigned long long)sequence << 32;
}

/* CR_PROBE_LAUNCH_POLL: wall time, on the host, from the launch until the
 * kernel's flagged word is seen in mapped memory, as a fast call's result
 * is. */
static cr_status
time_launch_poll(const cr_timing *timing, cudaStream_t stream,
                 float *times_ms, cr_error *error)
{
    cr_status status = CR_OK;
    unsigned long long *word = NULL, *device_word = NULL;
    unsigned long long read = 0;
    unsigned int sequence = 0;
    CR_CHECK(cudaHostAlloc((void **)&word, sizeof(*word),
                           cudaHostAllocMapped));
    *word = 0;
    CR_CHECK(cudaHostGetDevicePointer((void **)&device_word, word, 0));
    for (int r = -timing->warmup; r < timing->reps; r++) {
        const auto start = std::chrono::steady_clock::now();
        probe_signal<<<1, 1, 0, stream>>>(device_word, ++sequence);
        CR_CHECK(cudaGetLastError());
        status = cr_wait_for_words(word, 1, sequence, &read, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        const std::chrono::duration<float, std::milli> elapsed =
            std::chrono::steady_clock::now() - start;
        if (r >= 0) {
            times_ms[r] = elapsed.count();
        }
    }
    CR_CHECK(cudaStreamSynchronize(stream));
done:
    if (word != NULL) {
        (void)cudaFreeHost(word);
    }
    return status;
}

extern "C" cr_status
cr_time_probe(cr_probe probe, int64_t bytes, const cr_timing *timing,
              float *times_ms, cr_error *error)
{
    cr_status status = CR_OK;
    cudaStream_t stream = cudaStreamPerThread;
    const int capturing = 0;        /* the timers capture no graph */
    /* The read probe's buffers, then its sink; the copy's destination. */
    const size_t words = (size_t)(bytes + 15) / 16;
    const size_t span = 16 * words;
    unsigned char *device = NULL;
    void *pinned = NULL;
    int grid = 0, device_id = 0, sm_count = 0;
    sampler s = {};

    const int moves_bytes = probe == CR_PROBE_READ
                            || probe == CR_PROBE_HOST_COPY;
    if ((int)probe < 0 || probe >= CR_PROBE_COUNT
        || (moves_bytes && bytes < 1)) {
        return cr_fail(error, CR_ERR_INVALID,
                       "a probe needs a kind, and bytes >= 1 to move");
    }
    if (probe == CR_PROBE_LAUNCH_POLL) {
        if (timing->mode != CR_TIMING_LAUNCH || timing->batch != 1
            || timing->reps < 1 || timing->warmup < 0) {
            return cr_fail(error, CR_ERR_INVALID, "the launch_poll probe "
                           "is timed in mode 'launch', batch 1");
        }
        status = time_launch_poll(timing, stream, times_ms, error);
        if (status != CR_OK) {
            (void)cudaGetLastError();
        }
        return status;
    }
    status = sampler_open(&s, timing, stream, error);
    if (status != CR_OK) {
        goto done;
    }
    CR_CHECK(cudaGetDevice(&device_id));
    CR_CHECK(cudaDeviceGetAttribute(&sm_count,
                                    cudaDevAttrMultiProcessorCount,
                                    device_id));
    grid = sm_count * (CR_THREADS_PER_SM / CR_PROBE_THREADS);
    if (probe != CR_PROBE_EMPTY) {
        CR_POOL_MALLOC((void **)&device,
                       span * timing->buffers + sizeof(int),
                       stream, capturing);
        CR_CHECK(cudaMemsetAsync(device, 0, span * timing->buffers,
                                 stream));
    }
    if (probe == CR_PROBE_HOST_COPY) {
        CR_CHECK(cudaHostAlloc(&pinned, span, cudaHostAllocDefault));
        memset(pinned, 0, span);
    }
    status = sample(
        &s, 0,
        [&](int64_t run, const cudaEvent_t *) {
            unsigned char *buffer =
                device + (size_t)(run % timing->buffers) * span;
            cudaError_t code;
            switch (probe) {
            case CR_PROBE_EMPTY:
                probe_empty<<<1, 1, 0, stream>>>();
                code = cudaGetLastError();
                break;
            case CR_PROBE_READ:
                probe_read<<<grid, CR_PROBE_THREADS, 0, stream>>>(
                    reinterpret_cast<const int4 *>(buffer), (int64_t)words,
                    reinterpret_cast<int *>(device
                                            + span * timing->buffers));
                code = cudaGetLastError();
                break;
            default:
                code = cudaMemcpyAsync(buffer, pinned, (size_t)bytes,
                                       cudaMemcpyHostToDevice, stream);
                break;
            }
            return code == cudaSuccess
                ? CR_OK
                : cr_record_cuda_error(code, "a probe's launch or copy",
                                       error);
        },
        times_ms, NULL, error);

done:
    sampler_close(&s);
    if (device != NULL) {
        (void)cudaFreeAsync(device, stream);
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
