/* reduce.cu: the entry point, cr_reduce: checks a request, makes its
 * stream wait for the producer's, and routes it: a reduction along axes
 * to axes.cu, host data to the host path, device data (gathered first
 * when strided, cast first where its route says) to its reducer; the
 * result to the host, or finished into a device `out`. */
#include <cstring>

#include "axes.cuh"
#include "check.cuh"
#include "dispatch.cuh"
#include "exact_sum.cuh"
#include "gather.cuh"
#include "host/host_path.cuh"
#include "memory/exact_states.cuh"
#include "memory/host_ring.cuh"
#include "memory/pool.cuh"
#include "memory/workspace.cuh"
#include "store.cuh"

/* The device whose memory `pointer` is (-1 for managed memory, which
 * any device reads).  A host pointer would fault in the kernel, and a
 * fault poisons the whole CUDA context, so it is refused up front. */
static cr_status
pointer_device(const void *pointer, const char *what, int *device,
               cr_error *error)
{
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        (void)cudaGetLastError();
        return cr_fail(error, CR_ERR_INVALID,
                       "the %s pointer is not CUDA memory", what);
    }
    if (attributes.type != cudaMemoryTypeDevice
        && attributes.type != cudaMemoryTypeManaged) {
        return cr_fail(error, CR_ERR_INVALID,
                       "the %s pointer %p is %s, not device memory", what,
                       pointer, attributes.type == cudaMemoryTypeHost
                                    ? "pinned host memory" : "host memory");
    }
    *device = attributes.type == cudaMemoryTypeDevice ? attributes.device
                                                       : -1;
    return CR_OK;
}

/* The device a call runs on (*device) and the caller's (*current): its
 * device data's, else its device out's, else (host data into a host
 * result, managed memory) the current one; the request's own answer
 * where it keeps one (device_known).  The current device is asked
 * first: on a machine with no usable driver that is the CudaError that
 * says so, where cudaPointerGetAttributes would fail as for a host
 * pointer (tests/test_bad_inputs.py, run without a GPU). */
static cr_status
call_device(const cr_request *request, int *current, int *device,
            cr_error *error)
{
    cr_status status = CR_OK;
    int data_device = -1, out_device = -1;
    CR_CHECK(cudaGetDevice(current));
    if (request->device_known) {
        /* The pointers were asked about then, and passed. */
        *device = request->device;
        goto done;
    }
    if (request->location == CR_DEVICE && request->n > 0) {
        status = pointer_device(cr_layout_start(request->data,
                                                request->layout),
                                "data", &data_device, error);
    }
    if (status == CR_OK && request->out != NULL && !request->out_on_host) {
        status = pointer_device(request->out, "out", &out_device, error);
    }
    if (status == CR_OK && data_device >= 0 && out_device >= 0
        && data_device != out_device) {
        status = cr_fail(error, CR_ERR_INVALID,
                         "out is on CUDA device %d and the data on device "
                         "%d: they must be on the same device", out_device,
                         data_device);
    }
    *device = data_device >= 0 ? data_device
              : out_device >= 0 ? out_device : *current;
done:
    return status;
}

extern "C" cr_status
cr_request_device(const cr_request *request, int *device, cr_error *error)
{
    int current = 0;
    return call_device(request, &current, device, error);
}

/* `stream` must be a stream of `device` (the special handles 0, 1 and 2
 * are every device's): a launch on another device's stream fails with
 * CUDA's "invalid resource handle", which does not say why.  *capturing:
 * whether it is capturing into a CUDA graph (the special handles are not
 * asked: the legacy stream cannot be), the one answer the call's
 * allocations go by (cr_pool_malloc).  A capturing stream's device is
 * not asked: CUDA refuses cudaStreamGetDevice during a capture
 * (cudaErrorStreamCaptureUnsupported, which ends the capture). */
static cr_status
check_stream_device(uintptr_t stream, const char *what, int device,
                    int *capturing, cr_error *error)
{
    cr_status status = CR_OK;
    int stream_device = device;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (stream > 2) {
        CR_CHECK(cudaStreamIsCapturing((cudaStream_t)stream, &capture));
    }
    if (stream > 2 && capture == cudaStreamCaptureStatusNone) {
        CR_CHECK(cudaStreamGetDevice((cudaStream_t)stream, &stream_device));
    }
    if (stream_device != device) {
        return cr_fail(error, CR_ERR_INVALID,
                       "the %s is a stream of CUDA device %d, but the call "
                       "runs on device %d, where its data is", what,
                       stream_device, device);
    }
    *capturing = capture != cudaStreamCaptureStatusNone;
done:
    return status;
}

/* A call on a stream that is capturing into a CUDA graph: refused, before
 * anything is queued (which would end the user's capture), where it
 * needs the host (a result to the host, host data through the pinned
 * ring); its wait for a producer's stream that is not in the capture is
 * dropped (*wait 0: the work queued there so far is no part of the graph,
 * and CUDA refuses the event across the capture's edge). */
static cr_status
check_capturable(const cr_request *request, int producer_capturing,
                 int *wait, cr_error *error)
{
    const cudaError_t refusal = cudaErrorStreamCaptureUnsupported;
    const int host_data = request->location == CR_HOST && request->n > 0;
    cr_status status = CR_OK;
    if (host_data || request->out == NULL || request->out_on_host) {
        status = cr_fail(error, CR_ERR_CUDA, "%s: a reduction %s cannot be "
                         "captured into a CUDA graph: %s",
                         cudaGetErrorName(refusal),
                         host_data ? "of host data (a NumPy array)"
                                   : "into a host result",
                         host_data ? "copy the data to the GPU first"
                                   : "pass out=, a device array");
        error->cuda_code = (int)refusal;
    }
    *wait = request->wait && producer_capturing;
    return status;
}

/* Makes stream `later` wait for the work queued so far on `earlier`. */
static cr_status
order_after(cudaStream_t later, cudaStream_t earlier, cr_error *error)
{
    cr_status status = CR_OK;
    cudaEvent_t ready = NULL;
    CR_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CR_CHECK(cudaEventRecord(ready, earlier));
    CR_CHECK(cudaStreamWaitEvent(later, ready, 0));
done:
    if (ready != NULL) {
        (void)cudaEventDestroy(ready);
    }
    return status;
}

/* cr_reduce on the current device, the call's (call_device); `route`
 * is the request's, checked; `capturing`: whether its stream is capturing
 * (check_stream_device), for the allocations on it. */
static cr_status
reduce_here(const cr_request *request, cr_route route, int capturing,
            void *result, cr_error *error)
{
    cr_status status = CR_OK;
    cudaStream_t stream = (cudaStream_t)request->stream;
    const int gather = request->layout != NULL
        && !request->layout->contiguous;
    int stage = 0;
    const unsigned char *in = NULL;
    void *input_buffer = NULL;
    cr_reducer r = {};
    cr_exact_sum exact = {};

    stage = gather || route.staged != request->type;
    if (request->rows != NULL) {
        if (request->wait) {
            status = order_after(stream, (cudaStream_t)request->wait_stream,
                                 error);
        }
        if (status == CR_OK) {
            status = cr_reduce_rows(request, &route, stream, capturing,
                                    error);
        }
        if (status != CR_OK) {
            /* A failed call leaves no error for the next one to find. */
            (void)cudaGetLastError();
        }
        return status;
    }
    if (request->exact_state && capturing) {
        return cr_fail(error, CR_ERR_INVALID, "an exact sum's state goes "
                       "to the host: not while the stream is capturing");
    }
    if (request->n == 0) {
        if (request->exact_state) {
            /* No element: the zero state. */
            memset(result, 0, cr_exact_state_size());
            return CR_OK;
        }
        if (!cr_route_empty_value(&route, result)) {
            return cr_fail(error, CR_ERR_INVALID,
                           "an empty array has no result for this "
                           "operator");
        }
        /* The value travels as a kernel argument: nothing to wait for. */
        return request->out != NULL
            ? cr_store_result(request, NULL, result, stream, error) : CR_OK;
    }
    in = static_cast<const unsigned char *>(
        cr_layout_start(request->data, request->layout));
    if (request->wait) {
        status = order_after(stream, (cudaStream_t)request->wait_stream,
                             error);
        if (status != CR_OK) {
            return status;
        }
    }
    if (request->location == CR_HOST) {
        /* Measured on an H100: through the ring even 4 KiB take less time
         * than one copy from pageable memory.  (An exact sum's result is
         * delivered by the host path itself.) */
        status = cr_reduce_host(request, &route, stream, result, error);
        if (status == CR_OK && request->out != NULL && !request->exact) {
            status = cr_store_result(request, NULL, result, stream, error);
        }
        if (status != CR_OK) {
            /* A failed call leaves no error for the next one to find. */
            (void)cudaGetLastError();
        }
        return status;
    }
    status = request->exact
        ? cr_exact_open(&exact, stream, capturing, error)
        : cr_reducer_open(&r, request, route.entry, request->out != NULL,
                          stream, capturing, error);
    if (status != CR_OK) {
        goto done;
    }
    if (stage) {
        CR_POOL_MALLOC(&input_buffer,
                       (size_t)request->n
                           * cr_type_size(route.staged),
                       stream, capturing);
        status = cr_gather(in, gather ? request->layout : NULL, request->n,
                           request->type, route.staged, &route.nan,
                           input_buffer, stream, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    if (request->exact) {
        /* Rounded after its one addition, or its state taken as it is. */
        status = cr_exact_add(&exact, request, stage ? input_buffer : in,
                              request->n, route.staged,
                              !request->exact_state, stream, error);
        if (status == CR_OK) {
            status = request->exact_state
                ? cr_exact_take(&exact, stream,
                                static_cast<cr_exact_state *>(result), error)
                : cr_exact_finish(&exact, request, stream, result, error);
        }
        goto done;
    }
    if (request->out == NULL) {
        status = cr_reducer_launch(&r, stage ? input_buffer : in,
                                   request->n, NULL, NULL, stream, error);
        if (status == CR_OK) {
            status = cr_reducer_fetch(&r, result, stream, error);
        }
        goto done;
    }
    /* The result stays on the device: into out itself, or into the
     * reducer's slot and from there through the finishing store. */
    status = cr_reducer_launch(
        &r, stage ? input_buffer : in, request->n,
        cr_store_is_copy(request) ? request->out : NULL, NULL, stream,
        error);
    if (status == CR_OK && !cr_store_is_copy(request)) {
        status = cr_store_result(request, r.device_result, NULL, stream,
                                 error);
    }

done:
    /* The first error is the one reported; freeing after it is best
     * effort (after a sticky error the context refuses everything). */
    if (input_buffer != NULL) {
        (void)cudaFreeAsync(input_buffer, stream);
    }
    cr_reducer_close(&r, stream, status == CR_OK);
    cr_exact_close(&exact, stream, status == CR_OK);
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

extern "C" cr_status
cr_reduce(const cr_request *request, void *result, cr_error *error)
{
    cr_route route;
    cr_status status = cr_request_check(request, &route, error);
    cr_request call = *request;
    int current = 0, device = 0, capturing = 0, producer_capturing = 0;
    if (status != CR_OK || (request->n == 0 && request->out == NULL)) {
        /* An empty array's identity needs no device (nor asks for one). */
        return status == CR_OK
            ? reduce_here(request, route, 0, result, error) : status;
    }
    status = call_device(request, &current, &device, error);
    if (status == CR_OK && device != current) {
        CR_CHECK(cudaSetDevice(device));
    }
    if (status == CR_OK) {
        status = check_stream_device(request->stream, "stream", device,
                                     &capturing, error);
    }
    if (status == CR_OK && request->wait) {
        status = check_stream_device(request->wait_stream,
                                     "producer's stream", device,
                                     &producer_capturing, error);
    }
    if (status == CR_OK && capturing) {
        status = check_capturable(request, producer_capturing, &call.wait,
                                  error);
    }
    if (status == CR_OK) {
        status = reduce_here(&call, route, capturing, result, error);
    }
    if (status == CR_OK && call.wait && request->join
        && request->out != NULL) {
        status = order_after((cudaStream_t)request->wait_stream,
                             (cudaStream_t)request->stream, error);
    }
done:
    /* The caller's current device back, whatever the call's outcome. */
    if (device != current) {
        const cudaError_t restored = cudaSetDevice(current);
        if (restored != cudaSuccess && status == CR_OK) {
            status = cr_record_cuda_error(restored, "cudaSetDevice(current)",
                                          error);
        }
    }
    return status;
}

extern "C" void
cr_release_resources(void)
{
    cr_workspaces.clear();
    cr_host_rings.clear();
    cr_exact_states.clear();
    cr_pools_clear();
}

