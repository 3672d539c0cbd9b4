/* reduce.cu: the entry point, cr_reduce: checks a request, makes its
 * stream wait for the producer's, and routes it: host data to the host
 * path, device data (gathered first when strided, cast first where its
 * route says) to its reducer; the result to the host, or finished into a
 * device `out`. */
#include <cstring>

#include "check.cuh"
#include "dispatch.cuh"
#include "gather.cuh"
#include "host_path.cuh"
#include "host_ring.cuh"
#include "store.cuh"
#include "workspace.cuh"

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
        return cr_fail(error, CR_ERR_INVALID,
                       "the data pointer is not CUDA memory");
    }
    if (attributes.type != cudaMemoryTypeDevice
        && attributes.type != cudaMemoryTypeManaged) {
        return cr_fail(error, CR_ERR_INVALID,
                       "the data pointer %p is %s, not device memory",
                       data, attributes.type == cudaMemoryTypeHost
                                 ? "pinned host memory" : "host memory");
    }
    if (attributes.type == cudaMemoryTypeDevice
        && attributes.device != device) {
        return cr_fail(error, CR_ERR_INVALID,
                       "the data is on CUDA device %d, but the current "
                       "device is %d: make device %d current first",
                       attributes.device, device, attributes.device);
    }
done:
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
done:
    if (ready != NULL) {
        (void)cudaEventDestroy(ready);
    }
    return status;
}

extern "C" cr_status
cr_reduce(const cr_request *request, void *result, cr_error *error)
{
    cr_route route;
    cr_status status = cr_request_check(request, &route, error);
    cudaStream_t stream = (cudaStream_t)request->stream;
    const int gather = request->layout != NULL
        && !request->layout->contiguous;
    int stage = 0;
    const unsigned char *in = NULL;
    void *input_buffer = NULL;
    cr_reducer r = {};

    if (status == CR_OK && request->out != NULL) {
        status = check_device_pointer(request->out, error);
    }
    if (status != CR_OK) {
        return status;
    }
    stage = gather || route.staged != request->type;
    if (request->n == 0) {
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
        status = cr_reduce_host(request, &route, stream, result, error);
        if (status == CR_OK && request->out != NULL) {
            status = cr_store_result(request, NULL, result, stream, error);
        }
        if (status != CR_OK) {
            /* A failed call leaves no error for the next one to find. */
            (void)cudaGetLastError();
        }
        return status;
    }
    status = cr_reducer_open(&r, request, route.entry, request->out != NULL,
                             stream, error);
    if (status != CR_OK) {
        goto done;
    }
    if (stage) {
        CR_CHECK(cudaMallocAsync(&input_buffer,
                                 (size_t)request->n
                                     * cr_type_size(route.staged),
                                 stream));
        status = cr_gather(in, gather ? request->layout : NULL, request->n,
                           request->type, route.staged, &route.nan,
                           input_buffer, stream, error);
        if (status != CR_OK) {
            goto done;
        }
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
    if (status != CR_OK) {
        (void)cudaGetLastError();
    }
    return status;
}

extern "C" void
cr_release_resources(void)
{
    cr_workspaces.clear();
    cr_host_rings.clear();
}

