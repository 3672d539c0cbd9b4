/* pool.cu: the memory pool of each device (pool.cuh). */
#include <mutex>

#include "check.cuh"
#include "device.cuh"
#include "memory/pool.cuh"

static std::mutex pools_lock;
static cudaMemPool_t pools[CR_MAX_DEVICES];

/* The current device's pool, made on its first use. */
static cr_status
current_pool(cudaMemPool_t *pool, cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    cudaMemPoolProps props = {};
    cudaMemPool_t made = NULL;
    unsigned long long kept = CR_POOL_KEPT_BYTES;   /* cuuint64_t */
    CR_CHECK(cudaGetDevice(&device));
    if (device >= CR_MAX_DEVICES) {
        return cr_fail(error, CR_ERR_INVALID, "CUDA device %d: cudareduce "
                       "keeps memory pools for %d devices", device,
                       CR_MAX_DEVICES);
    }
    {
        std::lock_guard<std::mutex> guard(pools_lock);
        if (pools[device] == NULL) {
            props.allocType = cudaMemAllocationTypePinned;
            props.location.type = cudaMemLocationTypeDevice;
            props.location.id = device;
            CR_CHECK(cudaMemPoolCreate(&made, &props));
            CR_CHECK(cudaMemPoolSetAttribute(
                made, cudaMemPoolAttrReleaseThreshold, &kept));
            pools[device] = made;
            made = NULL;
        }
        *pool = pools[device];
    }
done:
    if (made != NULL) {
        (void)cudaMemPoolDestroy(made);
    }
    return status;
}

cr_status
cr_pool_malloc(void **pointer, size_t bytes, cudaStream_t stream,
               int capturing, cr_error *error)
{
    cr_status status = CR_OK;
    cudaMemPool_t pool = NULL;
    /* Under a capture the allocation is the graph's, whichever pool it
     * names; and a pool cannot be made then (cudaMemPoolCreate ends a
     * capture), so the device's default pool serves. */
    if (capturing) {
        CR_CHECK(cudaMallocAsync(pointer, bytes, stream));
        goto done;
    }
    status = current_pool(&pool, error);
    if (status != CR_OK) {
        goto done;
    }
    CR_CHECK(cudaMallocFromPoolAsync(pointer, bytes, pool, stream));
done:
    return status;
}

void
cr_pools_clear(void)
{
    std::lock_guard<std::mutex> guard(pools_lock);
    for (int device = 0; device < CR_MAX_DEVICES; device++) {
        if (pools[device] != NULL) {
            (void)cudaMemPoolDestroy(pools[device]);
            pools[device] = NULL;
        }
    }
}
