/* timing.cu: the bench's timers (cudareduce_timing.h): a reduction's
 * launches and a copy, bracketed by CUDA events. */
#include <cstring>

#include "check.cuh"
#include "cudareduce_timing.h"
#include "dispatch.cuh"

/* Time the launches alone on device-resident copies of the host array: the
 * array is copied to `buffers` device buffers once, and rep r reduces buffer
 * r % buffers, so that inputs larger in total than the L2 cache measure
 * memory, not cache.  Events bracket each rep's launches. */
extern "C" cr_status
cr_time_reduce(const cr_timing_request *timing, float *times_ms,
               void *result, cr_error *error)
{
    const cr_request *request = &timing->request;
    const cr_dispatch_entry *entry = NULL;
    cr_status status = cr_request_check(request, &entry, error);
    const size_t bytes = (size_t)request->n * cr_type_size(request->type);
    cudaStream_t stream = cudaStreamPerThread;
    unsigned char *inputs = NULL;
    cudaEvent_t events[2] = {NULL, NULL};
    cr_reducer r = {};

    if (status != CR_OK) {
        return status;
    }
    if (request->n == 0 || request->location != CR_HOST
        || request->layout != NULL || timing->buffers < 1
        || timing->reps < 1 || timing->warmup < 0) {
        return cr_fail(error, CR_ERR_INVALID,
                       "timing needs a contiguous host array of n > 0, "
                       "buffers >= 1, reps >= 1, warmup >= 0");
    }
    status = cr_reducer_open(&r, request, entry, stream, error);
    if (status != CR_OK) {
        goto done;
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
        status = cr_reducer_launch(&r, in, request->n, NULL, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaEventRecord(events[1], stream));
        CR_CHECK(cudaEventSynchronize(events[1]));
        if (rep >= 0) {
            CR_CHECK(cudaEventElapsedTime(&times_ms[rep], events[0],
                                          events[1]));
        }
    }
    status = cr_reducer_fetch(&r, result, stream, error);

done:
    for (int e = 0; e < 2; e++) {
        if (events[e] != NULL) {
            (void)cudaEventDestroy(events[e]);
        }
    }
    if (inputs != NULL) {
        (void)cudaFreeAsync(inputs, stream);
    }
    cr_reducer_close(&r, stream, status == CR_OK);
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
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
        return cr_fail(error, CR_ERR_INVALID,
                       "copy timing needs bytes > 0 and reps >= 1");
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

done:
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

