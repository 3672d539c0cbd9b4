/* host_path.cu: reductions of host arrays, streamed through the pinned
 * ring of host_ring.cuh, the copy of a host array's bytes through it (for
 * a reduction along axes), and the test hook that fails a reduction
 * mid-stream. */
#include <atomic>

#include "check.cuh"
#include "cudareduce_testing.h"
#include "exact_sum.cuh"
#include "gather.cuh"
#include "host/host_path.cuh"
#include "memory/host_ring.cuh"
#include "memory/pool.cuh"

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
 * reduced on `stream` into partials[k] (cast first, into a buffer of
 * its own, where the route says), so that staging chunk k + 1 overlaps
 * the copy and the reduction of chunk k.  The partials are then combined
 * by one small kernel (cr_fold_partials), which also makes an index they
 * hold count from the array's start.  An exact sum's chunks add into its
 * one state instead (exact_sum.cuh), rounded once after the last and
 * delivered to the host or into a device out. */
cr_status
cr_reduce_host(const cr_request *request, const cr_route *route,
               cudaStream_t stream, void *result, cr_error *error)
{
    cr_status status = CR_OK;
    const size_t item = cr_type_size(request->type);
    const size_t acc_size = cr_result_size(request->acc, request->op);
    cr_host_ring *ring = NULL;
    cr_reducer chunk_reducer = {}, tail_reducer = {};
    unsigned char *partials = NULL;
    void *cast_buffer = NULL;
    const int casts = route->staged != request->type;
    cr_exact_sum exact = {};
    /* cr_reduce refuses host data on a stream that is capturing. */
    const int capturing = 0;
    cr_request part = *request;
    int64_t chunk, chunks, tail;
    int own_tail;

    status = cr_host_rings.acquire(&ring, error);
    if (status != CR_OK) {
        return status;
    }
    chunk = (int64_t)(ring->chunk_bytes / item);
    chunks = (request->n + chunk - 1) / chunk;
    tail = request->n - (chunks - 1) * chunk;
    /* A last chunk shorter than the others has a plan of its own. */
    own_tail = chunks > 1 && tail != chunk;
    part.layout = NULL;
    part.location = CR_DEVICE;
    part.n = chunks > 1 ? chunk : tail;
    if (request->exact) {
        /* Every chunk adds into the one exact sum. */
        status = cr_exact_open(&exact, stream, capturing, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    else {
        status = cr_reducer_open(&chunk_reducer, &part, route->entry, 0,
                                 stream, capturing, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    if (chunks > 1 && !request->exact) {
        if (own_tail) {
            part.n = tail;
            status = cr_reducer_open(&tail_reducer, &part, route->entry,
                                     0, stream, capturing, error);
            if (status != CR_OK) {
                goto done;
            }
        }
        /* A slot per chunk, and one for their combine. */
        CR_POOL_MALLOC((void **)&partials,
                       (size_t)(chunks + 1) * acc_size, stream, capturing);
    }
    if (casts) {
        /* Chunk k is cast and reduced on `stream` before chunk k + 1 is
         * cast: one buffer serves them all. */
        CR_POOL_MALLOC(&cast_buffer,
                       (size_t)(chunks > 1 ? chunk : tail)
                           * cr_type_size(route->staged),
                       stream, capturing);
    }
    for (int64_t k = 0; k < chunks; k++) {
        const int slot = (int)(k % ring->count);
        const int64_t count = k == chunks - 1 ? tail : chunk;
        unsigned char *buffer = ring->device_buffers
            + (size_t)slot * ring->chunk_bytes;
        cr_reducer *r = k == chunks - 1 && own_tail ? &tail_reducer
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
        if (casts) {
            status = cr_gather(buffer, NULL, count, request->type,
                               route->staged, &route->nan, cast_buffer,
                               stream, error);
            if (status != CR_OK) {
                goto done;
            }
        }
        status = request->exact
            ? cr_exact_add(&exact, request, casts ? cast_buffer : buffer,
                           count, route->staged, k == chunks - 1, stream,
                           error)
            : cr_reducer_launch(r, casts ? cast_buffer : buffer, count,
                                chunks > 1 ? partials + k * acc_size
                                           : NULL,
                                NULL, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaEventRecord(ring->reduced[slot], stream));
        if (take_injected_fault(k)) {
            status = cr_record_cuda_error(cudaErrorMemoryAllocation,
                                          "a fault injected for a test",
                                          error);
            goto done;
        }
    }
    if (request->exact) {
        /* To the host, or into a device out. */
        status = cr_exact_finish(&exact, request, stream, result, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    else if (chunks > 1) {
        unsigned char *combined = partials + chunks * acc_size;
        status = cr_fold_partials(route->entry, partials, chunks, chunk,
                                  combined, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaMemcpyAsync(result, combined, acc_size,
                                 cudaMemcpyDeviceToHost, stream));
        CR_CHECK(cudaStreamSynchronize(stream));
    }
    else {
        status = cr_reducer_fetch(&chunk_reducer, result, stream, error);
    }

done:
    if (status != CR_OK) {
        /* Nothing queued may still use what is freed below. */
        (void)cudaStreamSynchronize(ring->copy_stream);
        (void)cudaStreamSynchronize(stream);
        (void)cudaGetLastError();
    }
    if (partials != NULL) {
        (void)cudaFreeAsync(partials, stream);
    }
    if (cast_buffer != NULL) {
        (void)cudaFreeAsync(cast_buffer, stream);
    }
    cr_reducer_close(&chunk_reducer, stream, status == CR_OK);
    cr_reducer_close(&tail_reducer, stream, status == CR_OK);
    cr_exact_close(&exact, stream, status == CR_OK);
    cr_host_rings.release(ring, status == CR_OK);
    return status;
}


cr_status
cr_copy_host_to_device(const void *src, size_t bytes, void *dst,
                       cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    cr_host_ring *ring = NULL;
    size_t first = 0;
    int slot = 0;

    status = cr_host_rings.acquire(&ring, error);
    if (status != CR_OK) {
        return status;
    }
    for (int64_t k = 0; first < bytes; k++) {
        const size_t count = bytes - first < ring->chunk_bytes
                             ? bytes - first : ring->chunk_bytes;
        slot = (int)(k % ring->count);
        /* The slot's last chunk was copied out before it is staged anew
         * (an event never recorded is complete). */
        CR_CHECK(cudaEventSynchronize(ring->copied[slot]));
        cr_stager_copy(ring->stager, static_cast<const unsigned char *>(src),
                       NULL, 1, (int64_t)first, (int64_t)count,
                       ring->staging[slot]);
        CR_CHECK(cudaMemcpyAsync(static_cast<unsigned char *>(dst) + first,
                                 ring->staging[slot], count,
                                 cudaMemcpyHostToDevice, ring->copy_stream));
        CR_CHECK(cudaEventRecord(ring->copied[slot], ring->copy_stream));
        first += count;
    }
    if (bytes > 0) {
        CR_CHECK(cudaStreamWaitEvent(stream, ring->copied[slot], 0));
    }

done:
    /* No copy may still read a staging buffer when the ring is let go. */
    const cudaError_t drained = cudaStreamSynchronize(ring->copy_stream);
    if (drained != cudaSuccess && status == CR_OK) {
        status = cr_record_cuda_error(drained, "cudaStreamSynchronize(the "
                                      "ring's copy stream)", error);
    }
    cr_host_rings.release(ring, status == CR_OK);
    return status;
}
