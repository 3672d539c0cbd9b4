/* ladder.cuh: the seven reduction kernels of Mark Harris, "Optimizing
 * Parallel Reduction in CUDA", in ladder order.
 *
 * Each kernel reduces a run of n elements of type T to one partial result
 * per block, of the accumulator type Acc, combined with Op.  Each is the one
 * before it plus one idea, named in the comment above it.  Differences from
 * the paper, kept the same on every step so that neighbours still differ by
 * one idea: indices are 64-bit (n > 2^31 works), reads past n are replaced by
 * the operator's identity (any n, no out-of-bounds loads), elements are
 * converted to Acc before the first combine (small integer sums in 64 bits,
 * as NumPy; argmin's value beside its index), and the warp-synchronous
 * steps are correct on Volta and newer.
 */
#ifndef CUDAREDUCE_LADDER_CUH
#define CUDAREDUCE_LADDER_CUH

#include <cstdint>

#include "kernels/casts.cuh"

/* One byte array viewed as the accumulator type: `extern __shared__ Acc
 * s[]` would declare the same symbol with different types per instance. */
template <class Acc>
__device__ Acc *shared_partials()
{
    extern __shared__ __align__(16) unsigned char cr_shared_bytes[];
    return reinterpret_cast<Acc *>(cr_shared_bytes);
}

/* in[i] as an accumulator, or the identity past the end. */
template <class T, class Op, class Acc = decltype(Op::identity())>
__device__ Acc load_or_identity(const T *in, int64_t i, int64_t n)
{
    return i < n ? to_accumulator<Acc>(in[i], i) : Op::identity();
}

/* Step 1, interleaved_divergent: one element per thread into shared memory,
 * then at stride s the threads with tid % (2*s) == 0 add their neighbour.
 * Active threads are scattered over every warp: divergent, and % is slow. */
template <class T, class Acc, class Op>
__global__ void reduce_interleaved_divergent(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    const Op op;
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + tid;
    sdata[tid] = load_or_identity<T, Op>(in, i, n);
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] = op(sdata[tid], sdata[tid + s]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* Step 2, interleaved_bank_conflict: the same tree, but thread tid works at
 * index 2*s*tid, so the active threads are contiguous and whole warps retire
 * (no divergence).  The strided index now hits the same shared-memory bank
 * from many threads of a warp: bank conflicts. */
template <class T, class Acc, class Op>
__global__ void reduce_interleaved_bank_conflict(const T *in, Acc *out,
                                                 int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    const Op op;
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + tid;
    sdata[tid] = load_or_identity<T, Op>(in, i, n);
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] = op(sdata[index], sdata[index + s]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* Steps 3 to 5 share this tree: halve the stride from the top, so that
 * thread tid adds sdata[tid + s] (consecutive threads, consecutive banks),
 * down to `stop` (0: all the way). */
template <class Acc, class Op>
__device__ void reduce_sequential_tree(Acc *sdata, unsigned int tid,
                                       unsigned int stop)
{
    const Op op;
    for (unsigned int s = blockDim.x / 2; s > stop; s >>= 1) {
        if (tid < s) {
            sdata[tid] = op(sdata[tid], sdata[tid + s]);
        }
        __syncthreads();
    }
}

/* Step 3, sequential: sequential addressing, conflict-free.  Half the
 * threads are idle from the first step on. */
template <class T, class Acc, class Op>
__global__ void reduce_sequential(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + tid;
    sdata[tid] = load_or_identity<T, Op>(in, i, n);
    __syncthreads();

    reduce_sequential_tree<Acc, Op>(sdata, tid, 0);
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* Steps 4 to 7 load two elements a blockDim apart and add them at once. */
template <class T, class Op, class Acc = decltype(Op::identity())>
__device__ Acc load_pair(const T *in, int64_t i, int64_t n,
                         unsigned int block)
{
    const Op op;
    return op(load_or_identity<T, Op>(in, i, n),
              load_or_identity<T, Op>(in, i + block, n));
}

/* Step 4, first_add: each thread adds two elements during the global load,
 * so a block covers 2*blockDim elements and half as many blocks run. */
template <class T, class Acc, class Op>
__global__ void reduce_first_add(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * (blockDim.x * 2) + tid;
    sdata[tid] = load_pair<T, Op>(in, i, n, blockDim.x);
    __syncthreads();

    reduce_sequential_tree<Acc, Op>(sdata, tid, 0);
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* The last six steps of the tree, inside warp 0, without __syncthreads().
 * The paper relied on a warp running in lockstep (volatile, no barrier);
 * since Volta the threads of a warp are scheduled independently, and that
 * code races.  Here each step reads into a register, __syncwarp(), writes,
 * __syncwarp(): race-free, and still no block-wide barrier. */
template <class Acc, class Op>
__device__ void reduce_last_warp(Acc *sdata, unsigned int tid)
{
    const Op op;
    Acc v = sdata[tid];
#pragma unroll
    for (unsigned int offset = 32; offset > 0; offset >>= 1) {
        v = op(v, sdata[tid + offset]);
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
}

/* Step 5, unroll_warp: stop the loop at s = 32 and unroll the last warp,
 * which saves the barriers and loop overhead of its six steps. */
template <class T, class Acc, class Op>
__global__ void reduce_unroll_warp(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * (blockDim.x * 2) + tid;
    sdata[tid] = load_pair<T, Op>(in, i, n, blockDim.x);
    __syncthreads();

    reduce_sequential_tree<Acc, Op>(sdata, tid, 32);
    if (tid < 32) {
        reduce_last_warp<Acc, Op>(sdata, tid);
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* Steps 6 and 7: with the block size a compile-time constant, every step of
 * the tree above the last warp is unrolled and the dead ones vanish. */
template <unsigned int BLOCK, class Acc, class Op>
__device__ void reduce_unrolled_tree(Acc *sdata, unsigned int tid)
{
    const Op op;
    if (BLOCK >= 1024) {
        if (tid < 512) { sdata[tid] = op(sdata[tid], sdata[tid + 512]); }
        __syncthreads();
    }
    if (BLOCK >= 512) {
        if (tid < 256) { sdata[tid] = op(sdata[tid], sdata[tid + 256]); }
        __syncthreads();
    }
    if (BLOCK >= 256) {
        if (tid < 128) { sdata[tid] = op(sdata[tid], sdata[tid + 128]); }
        __syncthreads();
    }
    if (BLOCK >= 128) {
        if (tid < 64) { sdata[tid] = op(sdata[tid], sdata[tid + 64]); }
        __syncthreads();
    }
}

/* Step 6, unroll_complete: step 5 with the block size a template parameter
 * (BLOCK == blockDim.x), so the loop above the last warp is fully unrolled. */
template <unsigned int BLOCK, class T, class Acc, class Op>
__global__ void reduce_unroll_complete(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    unsigned int tid = threadIdx.x;
    int64_t i = (int64_t)blockIdx.x * (BLOCK * 2) + tid;
    sdata[tid] = load_pair<T, Op>(in, i, n, BLOCK);
    __syncthreads();

    reduce_unrolled_tree<BLOCK, Acc, Op>(sdata, tid);
    if (tid < 32) {
        reduce_last_warp<Acc, Op>(sdata, tid);
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

/* Step 7, multi_element: a grid sized to fill the GPU once, each thread
 * adding pairs in a grid-stride loop before the tree (Brent's theorem: the
 * tree's log n steps are paid once per thread, not once per pair). */
template <unsigned int BLOCK, class T, class Acc, class Op>
__global__ void reduce_multi_element(const T *in, Acc *out, int64_t n)
{
    Acc *sdata = shared_partials<Acc>();
    const Op op;
    unsigned int tid = threadIdx.x;
    const int64_t grid_size = (int64_t)BLOCK * 2 * gridDim.x;
    Acc v = Op::identity();
    for (int64_t i = (int64_t)blockIdx.x * (BLOCK * 2) + tid; i < n;
         i += grid_size) {
        v = op(v, load_pair<T, Op>(in, i, n, BLOCK));
    }
    sdata[tid] = v;
    __syncthreads();

    reduce_unrolled_tree<BLOCK, Acc, Op>(sdata, tid);
    if (tid < 32) {
        reduce_last_warp<Acc, Op>(sdata, tid);
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

#endif /* CUDAREDUCE_LADDER_CUH */
