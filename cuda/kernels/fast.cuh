/* fast.cuh: the fast path, past the ladder, for current GPUs.
 *
 * One launch for any n.  Each thread streams 16-byte vector loads, UNROLL
 * of them in flight, into as many independent accumulators, or one where
 * the accumulator is wide (fast_chains); a sum of int8 or uint8 adds a
 * turn's loads four bytes at a time into one 32-bit lane, widened to its
 * accumulator once (byte_sums.cuh).  The head before the first 16-byte
 * boundary and the tail after the last full vector are read element by
 * element.  Warps reduce with shuffles, blocks through 32
 * shared slots.  A grid of one block writes the result directly.  In a
 * larger grid each block stores its partial as flagged words
 * (flagged_words.cuh) with no fence, and the block that started last (a
 * ticket taken as it starts) waits for every flag, combines the partials
 * in block order, clears the flags and the ticket for the next launch, and
 * writes the result.  That is one trip through L2 after the last block's
 * store, where a fence and an arrival counter at each block's end take
 * three.  A result for the host goes
 * to mapped memory as flagged words too, flagged with the launch's
 * `sequence`, which the host polls instead of synchronizing the stream;
 * a one-block grid then needs no fence at all (launch to result seen on
 * the host, 1,024 float32: 7.82 against 8.74 us with a value, a system
 * fence and a separate flag word).
 */
#ifndef CUDAREDUCE_FAST_CUH
#define CUDAREDUCE_FAST_CUH

#include <cstdint>
#include <cstring>

#include "cudareduce.h"
#include "kernels/byte_sums.cuh"
#include "kernels/casts.cuh"
#include "kernels/flagged_words.cuh"
#include "kernels/results.cuh"
#include "tuning.h"

/* v of the lane `offset` above, in groups of `width` lanes (a power of
 * two; a lane past its group's end gets its own v back).  Types narrower
 * than int travel through the int shuffle and come back exactly; a
 * struct (argmin's value and index) goes 32 bits at a time.  Every lane
 * of the warp takes part. */
template <class Acc>
__device__ __forceinline__ Acc shuffle_down(Acc v, int offset,
                                            int width = 32)
{
    if constexpr (cuda::std::is_arithmetic_v<Acc>) {
        return static_cast<Acc>(
            __shfl_down_sync(0xffffffffu, v, offset, width));
    }
    else {
        constexpr int WORDS = (sizeof(Acc) + 3) / 4;
        unsigned int words[WORDS] = {};
        memcpy(words, &v, sizeof(Acc));
#pragma unroll
        for (int w = 0; w < WORDS; w++) {
            words[w] = __shfl_down_sync(0xffffffffu, words[w], offset,
                                        width);
        }
        memcpy(&v, words, sizeof(Acc));
        return v;
    }
}

/* A warp's values combined; lane 0 holds the result. */
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_reduce(Acc v)
{
    const Op op;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = op(v, shuffle_down(v, offset));
    }
    return v;
}

/* The block size of a kernel whose template says BLOCK: BLOCK itself, or
 * for BLOCK 0 (a kernel that serves every size with one instance) the
 * size it was launched with, at most CR_MAX_THREADS. */
template <int BLOCK>
__device__ __forceinline__ unsigned int block_size()
{
    return BLOCK != 0 ? BLOCK : blockDim.x;
}

/* The most threads a block of such a kernel has: its launch bound. */
template <int BLOCK>
inline constexpr int most_threads = BLOCK != 0 ? BLOCK : CR_MAX_THREADS;

/* A block's values combined; thread 0 holds the result.  The thread's
 * index is read afresh (a volatile read the compiler cannot reuse): the
 * warp number of reduce_fast's first call, kept for its second, was the
 * one value that spilled (4 bytes) in complex128 argmin and nanmean at
 * 32 registers (ptxas, sm_90). */
template <int BLOCK, class Acc, class Op>
__device__ __forceinline__ Acc block_reduce(Acc v)
{
    __shared__ Acc warp_partials[most_threads<BLOCK> / 32];
    unsigned int thread;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(thread));
    const unsigned int lane = thread % 32;
    const unsigned int warp = thread / 32;
    v = warp_reduce<Acc, Op>(v);
    if (lane == 0) {
        warp_partials[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < block_size<BLOCK>() / 32 ? warp_partials[lane]
                                             : Op::identity();
        v = warp_reduce<Acc, Op>(v);
    }
    return v;
}

/* The VEC elements of one 16-byte load, the first of index `first`,
 * combined.  argmin's (an indexed accumulator) go through a tree of
 * Op::later, their indices counted in the vector, `first` added to the
 * winner's: no index is compared, and the small ones fold into the code.
 * On the H100 at 2^28, 1,024 threads, a chain of full combines took 50
 * registers a thread for int32, one block an SM, and ran at 0.96x cub's
 * speed; the tree takes 32 with the launch bound of reduce_fast, and runs
 * at 1.07x (docs/recorded/index-ops-2026-11-24-h100.txt).  A sum of
 * int8 or uint8 adds four bytes an instruction (byte_sums.cuh). */
template <class T, class Acc, class Op>
__device__ __forceinline__ Acc combine_vector(const uint4 &bits,
                                              int64_t first)
{
    constexpr int VEC = 16 / sizeof(T);
    const Op op;
    T items[VEC];
    memcpy(items, &bits, 16);
    if constexpr (is_indexed<Acc>::value) {
        indexed<decltype(Acc::value), int> part[VEC];
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            part[k] = {k, to_accumulator<decltype(Acc::value)>(items[k])};
        }
#pragma unroll
        for (int width = 1; width < VEC; width *= 2) {
#pragma unroll
            for (int k = 0; k + width < VEC; k += 2 * width) {
                part[k] = op.later(part[k], part[k + width]);
            }
        }
        return Acc{first + part[0].index, part[0].value};
    }
    else if constexpr (sums_bytes<T, Acc, Op>) {
        return sum_bytes<T, Acc, 1>(&bits);
    }
    else {
        Acc v = to_accumulator<Acc>(items[0], first);
#pragma unroll
        for (int k = 1; k < VEC; k++) {
            v = op(v, to_accumulator<Acc>(items[k], first + k));
        }
        return v;
    }
}

/* The result: into `result`, or with `words` set (mapped host memory)
 * into its flagged words, flagged `sequence`, which the host polls. */
template <class Acc>
__device__ __forceinline__ void
publish(Acc value, Acc *result, unsigned long long *words,
        unsigned int sequence)
{
    if (words != NULL) {
        cr_store_flagged(value, words, sequence);
    }
    else {
        *result = value;
    }
}

/* The partial in `slot`, once every word of it is flagged; the slot is
 * then cleared. */
template <class Acc>
__device__ __forceinline__ Acc
collect_slot(unsigned long long *slot)
{
    constexpr int COUNT = CR_FLAGGED_WORDS(sizeof(Acc));
    volatile unsigned long long *words = slot;
    unsigned long long read[COUNT];
    bool flagged;
    do {    /* all words loaded before any is tested: one trip a turn */
        flagged = true;
#pragma unroll
        for (int w = 0; w < COUNT; w++) {
            read[w] = words[w];
        }
#pragma unroll
        for (int w = 0; w < COUNT; w++) {
            flagged &= (read[w] >> 32) != 0;
        }
    } while (!flagged);
#pragma unroll
    for (int w = 0; w < COUNT; w++) {
        words[w] = 0;
    }
    Acc value;
    cr_unpack_flagged(read, COUNT, &value, sizeof(Acc));
    return value;
}

/* BLOCK: the block size, or 0 for one instance that runs at every size
 * (the rows of instances.def compiled once), bound as at 1,024 threads.
 * Elements of 4 bytes or more get the same registers at every size either
 * way; narrower ones 40 to 63 (no spill, ptxas for sm_90) where a
 * 256-thread instance may take 255: argmin of bool at 2^28 with 256
 * threads named ran 145.7 against 136.9 us, at its default 1,024 136.4
 * against 133.3 (H100: docs/recorded/build-2026-11-25-2core.txt, which
 * also has the other operators, within noise).
 * Elements of 4 bytes or more: at most the registers that let
 * CR_THREADS_PER_SM threads run (32 a thread), which argmin's value and
 * index would pass otherwise (int32, 1,024 threads: 38 registers, one
 * block an SM; the sums take 24 to 32 anyway); narrower ones' vectors of
 * 8 or 16 elements would spill there (96 to 170 bytes, ptxas). */
template <class T>
inline constexpr bool fast_full_occupancy = sizeof(T) >= 4;

/* Independent accumulators a thread keeps: one per load in flight, but
 * one only for an accumulator over 16 bytes (complex128's value beside
 * an index or a count), which fits the 32 registers of the bound no
 * other way.  With two, the NaN-skipping index operators spilled 72 bytes
 * there and ran at 0.66x the float32 sum's GB/s (complex128 nanmin at
 * 2^28: 2,183 us against cub's 1,400); without the bound they took 36
 * to 47 registers, one block an SM, and min ran 1% slower than with it,
 * 0.99x cub (1,385 -> 1,403 us; H100:
 * docs/recorded/complex-2026-11-26-h100.txt).  With one, every such
 * operator takes 32 registers and spills nothing (ptxas, sm_90), and runs
 * at the floor's speed: complex128 min at 2^28, back to back, 1,383 us
 * against cub's 1,393; nanmin 1.03x the float32 sum's GB/s (same
 * record). */
template <class Acc>
inline constexpr int fast_chains = sizeof(Acc) > 16 ? 1 : CR_FAST_UNROLL;

template <int BLOCK, class T, class Acc, class Op>
__global__ void __launch_bounds__(
    most_threads<BLOCK>,
    fast_full_occupancy<T> ? CR_THREADS_PER_SM / most_threads<BLOCK> : 1)
reduce_fast(const T *in, int64_t n, unsigned long long *slots,
            unsigned int *tickets, Acc *result, unsigned long long *words,
            unsigned int sequence)
{
    constexpr int CHAINS = fast_chains<Acc>;
    constexpr int VEC = 16 / sizeof(T);
    constexpr int WORDS = CR_FLAGGED_WORDS(sizeof(Acc));
    const Op op;
    const unsigned int block = block_size<BLOCK>();
    const int64_t threads = (int64_t)gridDim.x * block;
    const int64_t g = (int64_t)blockIdx.x * block + threadIdx.x;

    /* Taken as the block starts, read after its loads: the atomic's trip
     * hides behind them. */
    unsigned int ticket = 0;
    if (gridDim.x > 1 && threadIdx.x == 0) {
        ticket = atomicAdd(tickets, 1u);
    }

    /* Elements before the first 16-byte boundary (data is item-aligned). */
    int64_t head = (int64_t)((16 - (uintptr_t)in % 16) % 16) / sizeof(T);
    if (head > n) {
        head = n;
    }
    const uint4 *vectors = reinterpret_cast<const uint4 *>(in + head);
    const int64_t nvec = (n - head) / VEC;
    const int64_t tail = head + nvec * VEC;

    Acc acc[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; c++) {
        acc[c] = Op::identity();
    }
    if (g < head) {
        acc[0] = to_accumulator<Acc>(in[g], g);
    }
    if (g < n - tail) {
        acc[CHAINS - 1] = op(acc[CHAINS - 1],
                             to_accumulator<Acc>(in[tail + g], tail + g));
    }
    int64_t i = g;
    for (; i + (CR_FAST_UNROLL - 1) * threads < nvec;
         i += CR_FAST_UNROLL * threads) {
        uint4 bits[CR_FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < CR_FAST_UNROLL; u++) {
            bits[u] = __ldg(vectors + i + u * threads);
        }
        if constexpr (sums_bytes<T, Acc, Op>) {
            /* The turn's bytes in one lane, widened once. */
            acc[0] = op(acc[0], sum_bytes<T, Acc, CR_FAST_UNROLL>(bits));
        }
        else {
#pragma unroll
            for (int u = 0; u < CR_FAST_UNROLL; u++) {
                acc[u % CHAINS] = op(
                    acc[u % CHAINS],
                    combine_vector<T, Acc, Op>(
                        bits[u], head + (i + u * threads) * VEC));
            }
        }
    }
    for (; i < nvec; i += threads) {
        acc[0] = op(acc[0], combine_vector<T, Acc, Op>(__ldg(vectors + i),
                                                       head + i * VEC));
    }
#pragma unroll
    for (int c = 1; c < CHAINS; c++) {
        acc[0] = op(acc[0], acc[c]);
    }

    __shared__ Acc own_partial;
    __shared__ bool collects;
    Acc block_value = block_reduce<BLOCK, Acc, Op>(acc[0]);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) {
            publish(block_value, result, words, sequence);
        }
        return;
    }
    if (threadIdx.x == 0) {
        collects = ticket == gridDim.x - 1;
        own_partial = block_value;
        if (!collects) {
            cr_store_flagged(block_value, slots + (size_t)blockIdx.x * WORDS,
                             1u);
        }
    }
    __syncthreads();
    if (!collects) {
        return;
    }
    /* Every other block has started, so waiting for its slot cannot
     * deadlock; the partials are combined in block order, wherever this
     * block's own lands, so the result does not depend on which block
     * started last. */
    Acc v = Op::identity();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += block) {
        v = op(v, b == blockIdx.x
                      ? own_partial
                      : collect_slot<Acc>(slots + (size_t)b * WORDS));
    }
    v = block_reduce<BLOCK, Acc, Op>(v);
    if (threadIdx.x == 0) {
        *tickets = 0;       /* re-armed for the next launch */
        if (words != NULL) {
            /* The host lets the workspace go once it sees the result: the
             * cleared slots and ticket first (the barrier in block_reduce
             * orders the other threads' clears before this fence). */
            __threadfence_system();
        }
        publish(v, result, words, sequence);
    }
}

#endif /* CUDAREDUCE_FAST_CUH */
