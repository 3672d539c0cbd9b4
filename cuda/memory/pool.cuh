/* pool.cuh: the memory pool, one per device, that every stream-ordered
 * allocation comes from (a call's scratch, gather and cast buffers, the
 * host path's partials; the timers' inputs).
 *
 * A device's default pool gives its memory back to the driver at each
 * synchronisation (its release threshold is 0), and the next call maps it
 * again: a sum of 2^20 float32 into a device out took 0.161 ms against
 * 0.024 ms with the default pool's threshold at 1 GiB, and cub's with the
 * result to the host 0.175 against 0.032 ms (H100:
 * docs/recorded/out-cost-2026-11-26-h100.txt).  A pool of our own keeps
 * CR_POOL_KEPT_BYTES between calls, and leaves the default pool as the
 * process (CuPy's async allocator, other libraries) set it. */
#ifndef CUDAREDUCE_POOL_CUH
#define CUDAREDUCE_POOL_CUH

#include "cudareduce.h"

/* What a pool keeps at a synchronisation: the scratch of every call (a
 * few hundred KiB at most) many times over; a gather or cast buffer
 * larger than this goes back to the driver, as it always did. */
#define CR_POOL_KEPT_BYTES ((size_t)64 << 20)

/* cudaMallocAsync from the current device's pool (made on the device's
 * first use), in `stream` order; where `stream` is capturing into a CUDA
 * graph (`capturing`: the caller's answer, cr_reduce's, which asks once a
 * call), a graph's allocation.  Free with cudaFreeAsync. */
cr_status cr_pool_malloc(void **pointer, size_t bytes, cudaStream_t stream,
                         int capturing, cr_error *error);

/* cr_pool_malloc as CR_CHECK checks a CUDA call: on failure, `status` set
 * and `goto done` (`error` is the function's). */
#define CR_POOL_MALLOC(pointer, bytes, stream, capturing)               \
    do {                                                                \
        status = cr_pool_malloc((void **)(pointer), (bytes), (stream),  \
                                (capturing), error);                    \
        if (status != CR_OK) {                                          \
            goto done;                                                  \
        }                                                               \
    } while (0)

/* Destroys every device's pool (module teardown, when no call runs). */
void cr_pools_clear(void);

#endif /* CUDAREDUCE_POOL_CUH */
