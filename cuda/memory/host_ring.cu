/* host_ring.cu: the free list of host rings (see host_ring.cuh). */
#include <cstdlib>

#include "memory/host_ring.cuh"

/* An integer from the environment variable `name` within [low, high],
 * else `fallback`. */
static long
setting(const char *name, long fallback, long low, long high)
{
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') {
        return fallback;
    }
    char *end = NULL;
    long value = strtol(text, &end, 10);
    return (*end == '\0' && value >= low && value <= high) ? value
                                                           : fallback;
}

void
cr_host_ring_destroy(cr_host_ring *ring)
{
    if (ring->copy_stream != NULL) {
        (void)cudaStreamSynchronize(ring->copy_stream);
        (void)cudaStreamDestroy(ring->copy_stream);
    }
    for (int s = 0; s < CR_RING_MAX_SLOTS; s++) {
        if (ring->staging[s] != NULL) {
            (void)cudaFreeHost(ring->staging[s]);
        }
        if (ring->copied[s] != NULL) {
            (void)cudaEventDestroy(ring->copied[s]);
        }
        if (ring->reduced[s] != NULL) {
            (void)cudaEventDestroy(ring->reduced[s]);
        }
    }
    if (ring->device_buffers != NULL) {
        (void)cudaFree(ring->device_buffers);
    }
    if (ring->stager != NULL) {
        cr_stager_destroy(ring->stager);
    }
    free(ring);
}

cr_status
cr_host_ring_fill(cr_host_ring *ring, cr_error *error)
{
    cr_status status = CR_OK;
    ring->chunk_bytes =
        (size_t)setting("CUDAREDUCE_HOST_CHUNK_MB", 16, 1, 4096) << 20;
    ring->count = (int)setting("CUDAREDUCE_HOST_BUFFERS", 4, 2,
                               CR_RING_MAX_SLOTS);
    status = cr_stager_create(
        (int)setting("CUDAREDUCE_HOST_THREADS",
                     cr_stager_default_threads(), 1, 64),
        &ring->stager, error);
    if (status != CR_OK) {
        goto done;
    }
    CR_CHECK(cudaStreamCreateWithFlags(&ring->copy_stream,
                                       cudaStreamNonBlocking));
    CR_CHECK(cudaMalloc(&ring->device_buffers,
                        ring->chunk_bytes * ring->count));
    for (int s = 0; s < ring->count; s++) {
        CR_CHECK(cudaHostAlloc(&ring->staging[s], ring->chunk_bytes,
                               cudaHostAllocDefault));
        CR_CHECK(cudaEventCreateWithFlags(&ring->copied[s],
                                          cudaEventDisableTiming));
        CR_CHECK(cudaEventCreateWithFlags(&ring->reduced[s],
                                          cudaEventDisableTiming));
    }
done:
    return status;
}

decltype(cr_host_rings) cr_host_rings;
