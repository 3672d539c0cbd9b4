/* host_path.cu: reductions of host arrays, streamed through the pinned
 * ring of host_ring.cuh, the copy of a host array's bytes through it (for
 * a reduction along axes), and the test hook that fails a reduction
 * mid-stream. */
#include <atomic>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

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

/* The first byte of a contiguous array whose two ends are page-locked
 * (memory from cudaHostAlloc, or registered in place with
 * cudaHostRegister: a pinned tensor's, cupyx.empty_pinned's), else NULL:
 * then the link copies its chunks from where they are, and the staging
 * copy, which limits a pageable array on several GPUs, is left out.
 * Where a range between the ends is not locked, the driver refuses the
 * copy of a chunk that spans it, and share_stream stages that chunk and
 * the rest. */
static const unsigned char *
locked_start(const cr_request *request)
{
    if (request->n == 0
        || (request->layout != NULL && !request->layout->contiguous)) {
        return NULL;
    }
    const unsigned char *start = static_cast<const unsigned char *>(
        cr_layout_start(request->data, request->layout));
    const unsigned char *ends[2] = {
        start, start + request->n * cr_type_size(request->type) - 1};
    for (const unsigned char *end : ends) {
        cudaPointerAttributes attributes;
        if (cudaPointerGetAttributes(&attributes, end) != cudaSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
        if (attributes.type != cudaMemoryTypeHost) {
            return NULL;
        }
    }
    return start;
}

/* A host array's chunking: chunks of `chunk` elements (the rings'),
 * the last one `tail` (a plan of its own where shorter: own_tail); where
 * its pages are locked (locked_start), the array's first byte, from which
 * the chunks are copied without staging, else NULL. */
typedef struct {
    int64_t chunk, chunks, tail;
    int own_tail;
    const unsigned char *locked;
} host_chunking;

static host_chunking
chunking_of(const cr_request *request, size_t chunk_bytes)
{
    host_chunking c;
    c.chunk = (int64_t)(chunk_bytes / cr_type_size(request->type));
    c.chunks = (request->n + c.chunk - 1) / c.chunk;
    c.tail = request->n - (c.chunks - 1) * c.chunk;
    c.own_tail = c.chunks > 1 && c.tail != c.chunk;
    c.locked = locked_start(request);
    return c;
}

/* One device's share of a host array, chunks [first, end), and what
 * reduces them there: its ring, its stream, the reducers of a chunk and
 * of a shorter last one, or its exact sum; the chunks' results in
 * `partials` (device memory, one a chunk from `first` on, and a slot for
 * their combine where the share folds them itself), or, where there is
 * one chunk on one device, in the reducer; a buffer for a chunk cast on
 * the device.  Zero-initialised, it closes as a no-op. */
typedef struct {
    cr_host_ring *ring;
    cudaStream_t stream;
    int64_t first, end;
    cr_reducer chunk_reducer, tail_reducer;
    cr_exact_sum exact;
    unsigned char *partials;
    void *cast_buffer;
} host_share;

static cr_status
share_open(host_share *share, const cr_request *request,
           const cr_route *route, const host_chunking *c, int partials,
           int fold, cr_error *error)
{
    cr_status status = CR_OK;
    const size_t acc_size = cr_result_size(request->acc, request->op);
    /* cr_reduce refuses host data on a stream that is capturing. */
    const int capturing = 0;
    cr_request part = *request;
    part.layout = NULL;
    part.location = CR_DEVICE;
    part.devices = NULL;
    part.device_count = 0;
    part.n = c->chunks > 1 ? c->chunk : c->tail;
    if (request->exact) {
        /* Every chunk adds into the one exact sum. */
        status = cr_exact_open(&share->exact, share->stream, capturing,
                               error);
    }
    else if (share->first < share->end) {
        status = cr_reducer_open(&share->chunk_reducer, &part, route->entry,
                                 0, share->stream, capturing, error);
    }
    if (status == CR_OK && !request->exact && c->own_tail
        && share->end == c->chunks) {
        part.n = c->tail;
        status = cr_reducer_open(&share->tail_reducer, &part, route->entry,
                                 0, share->stream, capturing, error);
    }
    if (status != CR_OK) {
        goto done;
    }
    if (partials && !request->exact && share->end - share->first + fold) {
        CR_POOL_MALLOC((void **)&share->partials,
                       (size_t)(share->end - share->first + fold)
                           * acc_size,
                       share->stream, capturing);
    }
    if (route->staged != request->type) {
        /* Chunk k is cast and reduced on the share's stream before chunk
         * k + 1 is cast: one buffer serves them all. */
        CR_POOL_MALLOC(&share->cast_buffer,
                       (size_t)(c->chunks > 1 ? c->chunk : c->tail)
                           * cr_type_size(route->staged),
                       share->stream, capturing);
    }
done:
    return status;
}

/* Streams the share's chunks through its ring: chunk k is staged into
 * slot k % count by the staging threads (copied from the array itself
 * where its pages are locked), copied on the ring's copy stream and
 * reduced on the share's stream into its partials (cast first, where the
 * route says), so that staging chunk k + 1 overlaps the copy and the
 * reduction of chunk k; an exact sum's chunks add into its state, the
 * array's last rounding it where `rounds` (one device's whole array).
 * Stops before a chunk once *stop is set (another share failed: its
 * error is the call's), and sets it where this one fails. */
static cr_status
share_stream(host_share *share, const cr_request *request,
             const cr_route *route, const host_chunking *c, int rounds,
             std::atomic<int> *stop, cr_error *error)
{
    cr_status status = CR_OK;
    cr_host_ring *ring = share->ring;
    const size_t item = cr_type_size(request->type);
    const size_t acc_size = cr_result_size(request->acc, request->op);
    const int casts = route->staged != request->type;
    const unsigned char *locked = c->locked;
    for (int64_t k = share->first; k < share->end; k++) {
        const int64_t done_before = k - share->first;
        const int slot = (int)(done_before % ring->count);
        const int64_t count = k == c->chunks - 1 ? c->tail : c->chunk;
        unsigned char *buffer = ring->device_buffers
            + (size_t)slot * ring->chunk_bytes;
        cr_reducer *r = k == c->chunks - 1 && c->own_tail
                        ? &share->tail_reducer : &share->chunk_reducer;
        if (stop->load(std::memory_order_relaxed)) {
            /* Another share failed: its error is the call's. */
            break;
        }
        if (done_before >= ring->count) {
            /* The slot's staging buffer was copied out, and its device
             * buffer reduced, before they are reused. */
            if (locked == NULL) {
                CR_CHECK(cudaEventSynchronize(ring->copied[slot]));
            }
            CR_CHECK(cudaStreamWaitEvent(ring->copy_stream,
                                         ring->reduced[slot], 0));
        }
        if (locked != NULL) {
            const cudaError_t copy = cudaMemcpyAsync(
                buffer, locked + k * c->chunk * item, (size_t)count * item,
                cudaMemcpyHostToDevice, ring->copy_stream);
            if (copy == cudaErrorInvalidValue) {
                /* The driver refuses a range that is not all locked (an
                 * array registered at its ends only, say): this chunk
                 * and the rest are staged; no staging buffer is in use
                 * yet. */
                (void)cudaGetLastError();
                locked = NULL;
            }
            else {
                CR_CHECK(copy);
            }
        }
        if (locked == NULL) {
            cr_stager_copy(ring->stager, request->data, request->layout,
                           item, k * c->chunk, count, ring->staging[slot]);
            CR_CHECK(cudaMemcpyAsync(buffer, ring->staging[slot],
                                     (size_t)count * item,
                                     cudaMemcpyHostToDevice,
                                     ring->copy_stream));
        }
        CR_CHECK(cudaEventRecord(ring->copied[slot], ring->copy_stream));
        CR_CHECK(cudaStreamWaitEvent(share->stream, ring->copied[slot], 0));
        if (casts) {
            status = cr_gather(buffer, NULL, count, request->type,
                               route->staged, &route->nan,
                               share->cast_buffer, share->stream, error);
            if (status != CR_OK) {
                goto done;
            }
        }
        status = request->exact
            ? cr_exact_add(&share->exact, request,
                           casts ? share->cast_buffer : buffer, count,
                           route->staged, rounds && k == c->chunks - 1,
                           share->stream, error)
            : cr_reducer_launch(r, casts ? share->cast_buffer : buffer,
                                count,
                                share->partials != NULL
                                    ? share->partials
                                          + done_before * acc_size
                                    : NULL,
                                NULL, share->stream, error);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaEventRecord(ring->reduced[slot], share->stream));
        if (take_injected_fault(k)) {
            status = cr_record_cuda_error(cudaErrorMemoryAllocation,
                                          "a fault injected for a test",
                                          error);
            goto done;
        }
    }
done:
    if (status != CR_OK) {
        stop->store(1, std::memory_order_relaxed);
    }
    return status;
}

/* Frees what share_open made, once nothing queued uses it (after a
 * failure both streams are drained first). */
static void
share_close(host_share *share, int healthy)
{
    if (!healthy) {
        (void)cudaStreamSynchronize(share->ring->copy_stream);
        (void)cudaStreamSynchronize(share->stream);
        (void)cudaGetLastError();
    }
    if (share->partials != NULL) {
        (void)cudaFreeAsync(share->partials, share->stream);
    }
    if (share->cast_buffer != NULL) {
        (void)cudaFreeAsync(share->cast_buffer, share->stream);
    }
    cr_reducer_close(&share->chunk_reducer, share->stream, healthy);
    cr_reducer_close(&share->tail_reducer, share->stream, healthy);
    cr_exact_close(&share->exact, share->stream, healthy);
}

/* Host data through one ring (share_stream) on the call's device and
 * stream.  The chunks' partials are then combined by one small kernel
 * (cr_fold_partials), which also makes an index they hold count from the
 * array's start.  An exact sum's chunks add into its one state instead
 * (exact_sum.cuh), rounded once after the last and delivered to the host
 * or into a device out. */
static cr_status
reduce_on_one_device(const cr_request *request, const cr_route *route,
                     cudaStream_t stream, void *result, cr_error *error)
{
    cr_status status = CR_OK;
    const size_t acc_size = cr_result_size(request->acc, request->op);
    std::atomic<int> stop{0};
    host_share share = {};
    host_chunking c;

    status = cr_host_rings.acquire(&share.ring, error);
    if (status != CR_OK) {
        return status;
    }
    c = chunking_of(request, share.ring->chunk_bytes);
    share.stream = stream;
    share.end = c.chunks;
    status = share_open(&share, request, route, &c, c.chunks > 1, 1, error);
    if (status == CR_OK) {
        status = share_stream(&share, request, route, &c,
                              !request->exact_state, &stop, error);
    }
    if (status != CR_OK) {
        goto done;
    }
    if (request->exact_state) {
        status = cr_exact_take(&share.exact, stream,
                               static_cast<cr_exact_state *>(result), error);
    }
    else if (request->exact) {
        /* To the host, or into a device out. */
        status = cr_exact_finish(&share.exact, request, stream, result,
                                 error);
    }
    else if (c.chunks > 1) {
        unsigned char *combined = share.partials + c.chunks * acc_size;
        status = cr_fold_partials(route->entry, share.partials, c.chunks,
                                  c.chunk, combined, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        CR_CHECK(cudaMemcpyAsync(result, combined, acc_size,
                                 cudaMemcpyDeviceToHost, stream));
        CR_CHECK(cudaStreamSynchronize(stream));
    }
    else {
        status = cr_reducer_fetch(&share.chunk_reducer, result, stream,
                                  error);
    }

done:
    share_close(&share, status == CR_OK);
    cr_host_rings.release(share.ring, status == CR_OK);
    return status;
}

/* One device's part of reduce_on_devices, in a thread of its own: its
 * share opened, streamed and its results handed to the host, the chunks'
 * partials into `partials` (host memory, the array's, at the share's
 * first chunk) or its exact state into `taken`. */
static cr_status
reduce_share(int device, host_share *share, const cr_request *request,
             const cr_route *route, const host_chunking *c,
             unsigned char *partials, cr_exact_state *taken,
             std::atomic<int> *stop, cr_error *error)
{
    cr_status status = CR_OK;
    const size_t acc_size = cr_result_size(request->acc, request->op);
    CR_CHECK(cudaSetDevice(device));
    CR_CHECK(cudaStreamCreateWithFlags(&share->stream,
                                       cudaStreamNonBlocking));
    status = share_open(share, request, route, c, 1, 0, error);
    if (status == CR_OK) {
        status = share_stream(share, request, route, c, 0, stop, error);
    }
    if (status != CR_OK) {
        goto done;
    }
    if (request->exact) {
        /* Also where another share failed: the state left zero. */
        status = cr_exact_take(&share->exact, share->stream, taken, error);
    }
    else if (share->end > share->first
             && !stop->load(std::memory_order_relaxed)) {
        CR_CHECK(cudaMemcpyAsync(
            partials + share->first * acc_size, share->partials,
            (size_t)(share->end - share->first) * acc_size,
            cudaMemcpyDeviceToHost, share->stream));
        CR_CHECK(cudaStreamSynchronize(share->stream));
    }
done:
    if (status != CR_OK) {
        stop->store(1, std::memory_order_relaxed);
    }
    if (share->stream != NULL) {
        share_close(share, status == CR_OK);
        (void)cudaStreamSynchronize(share->stream);
        (void)cudaStreamDestroy(share->stream);
    }
    return status;
}

/* Host data on several devices at once (request->devices), each
 * streaming a share of its chunks through its own ring on a thread of its
 * own: device i takes chunks [i C / D, (i + 1) C / D) of the C chunks, in
 * the order listed.  Every chunk is reduced as on one device, and the
 * partials of all of them, in the host's memory, are folded in chunk
 * order on the call's device and stream: the same bits as one device,
 * for any list (where the devices plan a chunk alike: GPUs of one model,
 * rings of one chunk size, which the chunking takes as the least).  An
 * exact sum's devices each add their chunks into a state of their own,
 * summed and rounded once on the host.  The first failure in the list's
 * order is the one reported; the other shares stop at their next chunk,
 * and their devices stay usable. */
static cr_status
reduce_on_devices(const cr_request *request, const cr_route *route,
                  cudaStream_t stream, void *result, cr_error *error)
{
    cr_status status = CR_OK;
    const int count = request->device_count;
    const size_t acc_size = cr_result_size(request->acc, request->op);
    std::vector<host_share> shares(count);
    std::vector<cr_status> statuses(count, CR_OK);
    std::vector<cr_error> errors(count);
    std::vector<cr_exact_state> taken(count);
    std::vector<unsigned char> partials;
    std::vector<std::thread> threads;
    std::atomic<int> stop{0};
    unsigned char *folded = NULL;
    size_t chunk_bytes = 0;
    host_chunking c;
    int current = 0, devices = 0;

    CR_CHECK(cudaGetDevice(&current));
    CR_CHECK(cudaGetDeviceCount(&devices));
    for (int i = 0; i < count; i++) {
        if (request->devices[i] >= devices) {
            status = cr_fail(error, CR_ERR_INVALID, "CUDA device %d does "
                             "not exist: this machine has %d",
                             request->devices[i], devices);
            goto done;
        }
    }
    /* Each device's ring, checked out on it. */
    for (int i = 0; i < count && status == CR_OK; i++) {
        CR_CHECK(cudaSetDevice(request->devices[i]));
        status = cr_host_rings.acquire(&shares[i].ring, error);
        if (status == CR_OK && (chunk_bytes == 0
                                || shares[i].ring->chunk_bytes
                                       < chunk_bytes)) {
            chunk_bytes = shares[i].ring->chunk_bytes;
        }
    }
    CR_CHECK(cudaSetDevice(current));
    if (status != CR_OK) {
        goto done;
    }
    c = chunking_of(request, chunk_bytes);
    for (int i = 0; i < count; i++) {
        shares[i].first = c.chunks * i / count;
        shares[i].end = c.chunks * (i + 1) / count;
    }
    try {
        if (!request->exact) {
            partials.resize((size_t)c.chunks * acc_size);
        }
    }
    catch (const std::bad_alloc &) {
        status = cr_fail(error, CR_ERR_NO_MEMORY, "no host memory for the "
                         "results of %lld chunks", (long long)c.chunks);
        goto done;
    }
    try {
        for (int i = 0; i < count; i++) {
            threads.emplace_back([&, i] {
                statuses[i] = reduce_share(request->devices[i], &shares[i],
                                           request, route, &c,
                                           partials.data(), &taken[i],
                                           &stop, &errors[i]);
            });
        }
    }
    catch (const std::system_error &) {
        /* The shares started stop at their next chunk. */
        stop.store(1);
        status = cr_fail(error, CR_ERR_NO_MEMORY, "could not start a "
                         "thread for each of %d devices", count);
    }
    for (std::thread &thread : threads) {
        thread.join();
    }
    for (int i = 0; i < count && status == CR_OK; i++) {
        /* The first share in the list that failed (those that stopped
         * for it did not). */
        if (statuses[i] != CR_OK) {
            status = statuses[i];
            *error = errors[i];
        }
    }
    if (status != CR_OK) {
        goto done;
    }
    if (request->exact) {
        status = cr_exact_finish_taken(request, taken.data(), count, stream,
                                       result, error);
        goto done;
    }
    /* The chunks' partials, folded in order on the call's device. */
    CR_POOL_MALLOC((void **)&folded, (size_t)(c.chunks + 1) * acc_size,
                   stream, 0);
    CR_CHECK(cudaMemcpyAsync(folded, partials.data(),
                             (size_t)c.chunks * acc_size,
                             cudaMemcpyHostToDevice, stream));
    status = cr_fold_partials(route->entry, folded, c.chunks, c.chunk,
                              folded + c.chunks * acc_size, stream, error);
    if (status != CR_OK) {
        goto done;
    }
    CR_CHECK(cudaMemcpyAsync(result, folded + c.chunks * acc_size, acc_size,
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaStreamSynchronize(stream));

done:
    if (folded != NULL) {
        (void)cudaFreeAsync(folded, stream);
        (void)cudaStreamSynchronize(stream);
    }
    for (int i = 0; i < count; i++) {
        if (shares[i].ring != NULL) {
            (void)cudaSetDevice(request->devices[i]);
            cr_host_rings.release(shares[i].ring, statuses[i] == CR_OK);
        }
    }
    (void)cudaSetDevice(current);
    return status;
}

cr_status
cr_reduce_host(const cr_request *request, const cr_route *route,
               cudaStream_t stream, void *result, cr_error *error)
{
    return request->devices != NULL
        ? reduce_on_devices(request, route, stream, result, error)
        : reduce_on_one_device(request, route, stream, result, error);
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
