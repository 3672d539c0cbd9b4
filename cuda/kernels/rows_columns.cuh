/* rows_columns.cuh: pass 0 where adjacent rows' elements are adjacent
 * (the leading axis of a C-contiguous array), in rows.cuh's order. */
#ifndef CUDAREDUCE_ROWS_COLUMNS_CUH
#define CUDAREDUCE_ROWS_COLUMNS_CUH

#include "kernels/rows.cuh"

/* The chunks of pass 0 where adjacent rows' elements are adjacent: a
 * block of blockDim.x adjacent rows by blockDim.y threads a row: ACROSS
 * (CR_COLUMN_THREADS), or where ACROSS is 32 the order's `group` of lanes
 * (16 or 32 as the row is longer than CR_SHORT_ROW), thread y folding the
 * lanes y, y + blockDim.y, ... one after another; the tree's offsets of
 * blockDim.y and more combine a thread's own lanes, the others go through
 * shared memory.  Tile t of rows t * blockDim.x on, chunk c of each, is
 * block item t * chunks + c.  Out as reduce_rows'.  Each launch shape
 * has its own bound: under the wide one's (1,024 threads) the narrow one
 * took 48 registers, not 60, and (2^10, 2^16) along axis 0 ran 10%
 * slower. */
template <class T, class Acc, class Op, class Store, int ACROSS>
__global__ void __launch_bounds__(ACROSS == 32 ? 1024 : CR_ROWS_THREADS,
                                  ACROSS == 32 ? 1 : CR_ROWS_BLOCKS_PER_SM / 2)
reduce_columns(const unsigned char *in, cr_rows_geometry geometry,
               int64_t rows, int64_t length, int64_t stride,
               int chunk_length, int64_t chunks, int group,
               unsigned char *out, int64_t chunk_bytes,
               cr_rows_finish finish)
{
    constexpr int FEWEST = CR_COLUMN_THREADS;
    /* The wide shape's 1,024 threads get 64 registers: 16 loads spilled
     * 4 to 184 bytes of the index operators there (ptxas, sm_90). */
    constexpr int UNROLL = ACROSS == 32 && rows_unroll<T, Acc> > 8
                           ? 8 : rows_unroll<T, Acc>;
    __shared__ Acc lanes[ACROSS == 32 ? 1024 : CR_ROWS_THREADS];
    let_dependents_launch();
    const Op op;
    const int width = blockDim.x;
    const int across = ACROSS == 32 ? (int)blockDim.y : ACROSS;
    const int x = threadIdx.x;
    const int y = threadIdx.y;
    const int64_t items = (rows + width - 1) / width * chunks;
    const int elements = any_order<Acc, Op> ? chunk_length : CR_ROW_CHUNK;

    /* The bound is the block's: every thread reaches each barrier. */
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = chunks == 1 ? item : item / chunks;
        const int64_t chunk = item - tile * chunks;
        const int64_t row = tile * width + x;
        const int64_t first = chunk * elements;
        const int m = (int)(length - first < elements ? length - first
                                                      : elements);
        const bool here = row < rows;
        int present = m < group ? m : group;
        int64_t in_offset = 0, out_offset = 0;
        Acc *own = &lanes[y * width + x];
        if (here) {
            row_offsets(geometry, row, &in_offset, &out_offset);
        }
        /* A thread's lanes: one in the wide shape. */
        constexpr int MOST = ACROSS == 32 ? 1 : 32 / FEWEST;
        Acc v[MOST];
#pragma unroll
        for (int j = 0; j < MOST; j++) {
            const int lane = y + j * across;
            v[j] = Op::identity();
            if (here && lane < group && lane < m) {
                v[j] = fold_lane<T, Acc, Op, UNROLL>(
                    in + in_offset + first * stride, stride, first, lane,
                    group, m);
            }
        }
        /* Offsets a thread holds both sides of: FEWEST and more, in the
         * narrow shape (in the wide one across is the group: none). */
        static_assert(ACROSS == FEWEST || ACROSS == 32, "two shapes");
        if constexpr (ACROSS == FEWEST) {
#pragma unroll
            for (int offset = 16; offset >= FEWEST; offset >>= 1) {
                if (offset < group) {
#pragma unroll
                    for (int j = 0; j < offset / FEWEST; j++) {
                        if (y + j * FEWEST + offset < present) {
                            v[j] = op(v[j], v[j + offset / FEWEST]);
                        }
                    }
                    present = present < offset ? present : offset;
                }
            }
        }
        __syncthreads();    /* the last item's result is read */
        *own = v[0];
        __syncthreads();
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            if (offset < across && offset < group) {
                if (y + offset < present) {
                    *own = op(*own, own[offset * width]);
                }
                present = present < offset ? present : offset;
                __syncthreads();
            }
        }
        if (here && y == 0) {
            *reinterpret_cast<typename Store::type *>(
                out + out_offset + chunk * chunk_bytes) =
                Store::finished(settled<Op>(*own), finish);
        }
    }
}

#endif /* CUDAREDUCE_ROWS_COLUMNS_CUH */
