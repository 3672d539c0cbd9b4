/* stream_hold.cu: the bench's stream holder (cudareduce_timing.h), after
 * nvbench's blocking_kernel.cuh and l2flush.cuh: a kernel that spins on a
 * flag in mapped pinned memory until the host, having queued the timed
 * work behind it, sets the flag; and a write over twice the L2 cache's
 * size that leaves none of the timed work's data there. */
#include <atomic>
#include <cstdlib>

#include "check.cuh"
#include "cudareduce_timing.h"
#include "tuning.h"

struct cr_stream_hold {
    cudaStream_t stream;
    int *flags;             /* pinned, mapped: [0] go, [1] timed out */
    int *device_flags;      /* the same, as the kernel sees them */
    void *flush;
    size_t flush_bytes;
    int held;
};

__global__ void
hold_stream(const volatile int *go, volatile int *timed_out,
            unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*go == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(64);
    }
}

/* The host's store of the flag, seen by the spinning kernel. */
static void
set_go(cr_stream_hold *hold, int go)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *(volatile int *)&hold->flags[0] = go;
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

extern "C" cr_status
cr_stream_hold_create(uintptr_t stream, cr_stream_hold **out,
                      cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0, l2_bytes = 0;
    cr_stream_hold *hold =
        static_cast<cr_stream_hold *>(calloc(1, sizeof(cr_stream_hold)));
    if (hold == NULL) {
        return cr_fail(error, CR_ERR_NO_MEMORY,
                       "out of host memory for a stream holder");
    }
    hold->stream = (cudaStream_t)stream;
    CR_CHECK(cudaGetDevice(&device));
    CR_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize,
                                    device));
    CR_CHECK(cudaHostAlloc((void **)&hold->flags, 2 * sizeof(int),
                           cudaHostAllocMapped));
    CR_CHECK(cudaHostGetDevicePointer((void **)&hold->device_flags,
                                      hold->flags, 0));
    hold->flush_bytes = 2 * (size_t)l2_bytes;
    CR_CHECK(cudaMalloc(&hold->flush, hold->flush_bytes));
done:
    if (status == CR_OK) {
        *out = hold;
    }
    else {
        cr_stream_hold_destroy(hold);
    }
    return status;
}

extern "C" cr_status
cr_stream_hold_hold(cr_stream_hold *hold, int flush_l2, cr_error *error)
{
    cr_status status = CR_OK;
    if (hold->held) {
        return cr_fail(error, CR_ERR_INVALID, "the stream is held already");
    }
    if (flush_l2) {
        CR_CHECK(cudaMemsetAsync(hold->flush, 0, hold->flush_bytes,
                                 hold->stream));
    }
    hold->flags[1] = 0;
    set_go(hold, 0);
    hold_stream<<<1, 1, 0, hold->stream>>>(hold->device_flags,
                                           hold->device_flags + 1,
                                           CR_HOLD_TIMEOUT_NS);
    CR_CHECK(cudaGetLastError());
    hold->held = 1;
done:
    return status;
}

extern "C" cr_status
cr_stream_hold_release(cr_stream_hold *hold, cr_error *error)
{
    cr_status status = CR_OK;
    if (!hold->held) {
        return cr_fail(error, CR_ERR_INVALID, "the stream is not held");
    }
    set_go(hold, 1);
    hold->held = 0;
    CR_CHECK(cudaStreamSynchronize(hold->stream));
    if (*(volatile int *)&hold->flags[1]) {
        status = cr_fail(error, CR_ERR_CUDA,
                         "the stream-holding kernel gave up after %llu s: "
                         "the timed work was not queued behind it in time "
                         "(a full launch queue?), so the sample is not GPU "
                         "time alone; time fewer runs per sample",
                         CR_HOLD_TIMEOUT_NS / 1000000000ULL);
    }
done:
    return status;
}

extern "C" void
cr_stream_hold_destroy(cr_stream_hold *hold)
{
    if (hold == NULL) {
        return;
    }
    if (hold->held) {
        /* Never leave the GPU spinning. */
        set_go(hold, 1);
        (void)cudaStreamSynchronize(hold->stream);
    }
    if (hold->flush != NULL) {
        (void)cudaFree(hold->flush);
    }
    if (hold->flags != NULL) {
        (void)cudaFreeHost(hold->flags);
    }
    free(hold);
}
