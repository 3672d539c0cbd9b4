/* rows_staged.cuh: a later pass's few long rows of partials, a block a
 * chunk through shared memory, in rows.cuh's order. */
#ifndef CUDAREDUCE_ROWS_STAGED_CUH
#define CUDAREDUCE_ROWS_STAGED_CUH

#include <algorithm>

#include "kernels/rows.cuh"

/* The partials of a chunk the staged kernel holds in shared memory at
 * once: CR_ROWS_STAGED_BYTES of them, a whole number of its threads' and
 * of the order's 32 lanes, at most CR_ROW_CHUNK. */
template <class Acc>
inline constexpr int staged_slab = std::min(
    CR_ROWS_STAGED_BYTES / (int)sizeof(Acc) / CR_ROWS_THREADS
        * CR_ROWS_THREADS,
    CR_ROW_CHUNK);
static_assert(CR_ROWS_THREADS % 32 == 0, "a slab is whole lanes' turns");

/* A later pass's few long rows of partials (rows_plan.c's
 * CR_ROWS_KERNEL_STAGED): a block a chunk (chunk c of row r being
 * segment r * chunks + c), whose threads load a slab of its partials into
 * shared memory at once, a load each, and whose first warp folds them
 * there as reduce_rows' lanes would (lane j the partials j, j + 32, ...
 * left to right), then combines its lanes by the order's tree: the same
 * bits, in one trip to memory a slab where the row kernel's lanes take
 * a chunk's partials CR_ROWS_UNROLL at a time.  Out as reduce_rows'.
 * Bound to two blocks an SM: with no bound, ptxas spilled 12 bytes of
 * float64's sum at 80 registers (sm_90, nvcc 13.0). */
template <class Acc, class Op, class Store>
__global__ void __launch_bounds__(CR_ROWS_THREADS, 2)
reduce_staged(const unsigned char *in, cr_rows_geometry geometry,
              int64_t rows, int64_t length, int64_t stride, int chunk_length,
              int64_t chunks, unsigned char *out, int64_t chunk_bytes,
              cr_rows_finish finish)
{
    constexpr int SLAB = staged_slab<Acc>;
    constexpr int EACH = SLAB / CR_ROWS_THREADS;
    using Fold = lane_fold<Acc, Acc>;
    __shared__ Acc slab[SLAB];
    let_dependents_launch();
    wait_for_prerequisite();    /* the pass before wrote the partials */
    const Op op;
    const int lane = threadIdx.x % 32;
    const int64_t segments = rows * chunks;

    /* The bound is the block's: every thread reaches each barrier. */
    for (int64_t segment = blockIdx.x; segment < segments;
         segment += gridDim.x) {
        const int64_t row = chunks == 1 ? segment : segment / chunks;
        const int64_t chunk = segment - row * chunks;
        const int64_t first = chunk * chunk_length;
        const int m = (int)(length - first < chunk_length ? length - first
                                                           : chunk_length);
        int64_t in_offset, out_offset;
        row_offsets(geometry, row, &in_offset, &out_offset);
        const unsigned char *partials = in + in_offset + first * stride;
        Acc v = Op::identity();
        for (int base = 0; base < m; base += SLAB) {
            const int count = m - base < SLAB ? m - base : SLAB;
            Acc items[EACH];
#pragma unroll
            for (int i = 0; i < EACH; i++) {
                const int k = i * CR_ROWS_THREADS + (int)threadIdx.x;
                if (k < count) {
                    items[i] = load_element<Acc>(partials
                                                 + (base + k) * stride);
                }
            }
            __syncthreads();    /* the slab before is folded */
#pragma unroll
            for (int i = 0; i < EACH; i++) {
                const int k = i * CR_ROWS_THREADS + (int)threadIdx.x;
                if (k < count) {
                    slab[k] = items[i];
                }
            }
            __syncthreads();
            if (threadIdx.x < 32) {
                int k = lane;
                if (base == 0 && k < count) {
                    v = Fold::start(slab[k], k, first);
                    k += 32;
                }
#pragma unroll 8
                for (; k < count; k += 32) {
                    v = Fold::add(op, v, slab[k], base + k, first);
                }
            }
        }
        if (threadIdx.x < 32) {
            v = group_tree<Acc, Op>(Fold::finish(v, first), lane,
                                    m < 32 ? m : 32, 32);
            if (lane == 0) {
                *reinterpret_cast<typename Store::type *>(
                    out + out_offset + chunk * chunk_bytes) =
                    Store::finished(settled<Op>(v), finish);
            }
        }
    }
}

#endif /* CUDAREDUCE_ROWS_STAGED_CUH */
