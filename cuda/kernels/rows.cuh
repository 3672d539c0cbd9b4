/* rows.cuh: reductions along axes: many rows, a result each (cr_rows).
 *
 * One order, kept by every kernel here, makes a row's result depend only
 * on its elements in order, its length, the types and the operator: not
 * on how many rows there are, where the row lies, or which kernel read
 * it (batch invariance, and determinism).
 *
 *   A row longer than CR_ROW_CHUNK is cut into chunks of CR_ROW_CHUNK
 *   elements, the last shorter; each chunk's partial is the reduction of
 *   its elements below, and the row's sequence of partials is reduced
 *   the same way, in another pass (rows_plan.c), until one is left.
 *
 *   A chunk of m elements: lane j of 32 folds elements j, j + 32, j + 64,
 *   ... left to right, starting from its first one; then the lanes are
 *   combined by the tree  for o in 16, 8, 4, 2, 1: v[i] = op(v[i],
 *   v[i + o]) for i < o,  where a lane that holds no element (j >= m)
 *   takes no part: op(v[i], v[i + o]) is skipped, not taken with the
 *   identity, whose sum would make -0.0 into 0.0 and a NaN's payload
 *   the GPU's.  So a group of G lanes, the power of two at or above m,
 *   with offsets G/2 .. 1, gives the same bits as the 32: short rows
 *   share a warp (32 / G rows in one).
 *
 * reduce_rows: a warp, or a group of G lanes, per chunk, its lanes
 * reading the chunk's elements at any stride (adjacent ones: coalesced);
 * later passes read the partials with it.  reduce_columns: the rows'
 * first elements are adjacent and their elements are not (the leading
 * axis of a C-contiguous array): a block's threads in x take adjacent
 * rows (coalesced loads), in y the G lanes of the order, combined in
 * shared memory by the same tree.  reduce_short_rows: a row of at most
 * CR_SHORT_ROW elements (each lane of the order holds one) a thread, in
 * any layout, its elements in registers and the same tree computed
 * there; a thread loads several rows before combining any, as one
 * element a lane would leave the memory system idle.  An index
 * operator's index is the element's in its row, chunk * CR_ROW_CHUNK +
 * its place.
 */
#ifndef CUDAREDUCE_ROWS_CUH
#define CUDAREDUCE_ROWS_CUH

#include <cstdint>

#include "kernels/casts.cuh"
#include "kernels/fast.cuh"
#include "rows_plan.h"
#include "tuning.h"

/* Loads in flight a lane: CR_ROWS_UNROLL; 2 where an element and the
 * accumulator take 32 bytes or more (complex128's count or index beside
 * it), which spilled 4 bytes at 4 (ptxas, sm_90). */
template <class T, class Acc>
inline constexpr int rows_unroll =
    sizeof(T) + sizeof(Acc) >= 32 ? 2 : CR_ROWS_UNROLL;

/* The rows a thread of reduce_short_rows<..., ROW> loads before
 * combining: as many as keep its elements in 32 registers, at most 32 /
 * ROW; one of 16-byte elements (complex128's any and all spilled 8 bytes
 * at two, ptxas, sm_90). */
template <class T, int ROW>
inline constexpr int short_rows_at_once =
    sizeof(T) >= 16 || 128 / (ROW * (int)sizeof(T)) < 1 ? 1
    : 128 / (ROW * (int)sizeof(T)) > 32 / ROW
        ? 32 / ROW
        : 128 / (ROW * (int)sizeof(T));

/* The byte offsets of row r's first element (*in) and of its result
 * (*out); the outermost dimension needs no division. */
__device__ __forceinline__ void
row_offsets(const cr_rows_geometry &g, int64_t r, int64_t *in,
            int64_t *out)
{
    int64_t i = 0, o = 0;
    for (int d = g.ndim - 1; d > 0; d--) {
        const int64_t outer = r / g.shape[d];
        const int64_t index = r - outer * g.shape[d];
        i += index * g.in_strides[d];
        o += index * g.out_strides[d];
        r = outer;
    }
    if (g.ndim > 0) {
        i += r * g.in_strides[0];
        o += r * g.out_strides[0];
    }
    *in = i;
    *out = o;
}

template <class T>
__device__ __forceinline__ T load_element(const unsigned char *p)
{
    return *reinterpret_cast<const T *>(p);
}

/* One lane's fold: the elements lane, lane + step, ... of the m at
 * `chunk` (`stride` bytes apart; lane < m <= CR_ROW_CHUNK), the first of
 * index `first` in its row, left to right from the lane's first.  The
 * loads of a turn, the last shorter turn's too, are all in flight before
 * its combines, which keep that order. */
template <class T, class Acc, class Op, int UNROLL>
__device__ __forceinline__ Acc fold_lane(const unsigned char *chunk,
                                         int64_t stride, int64_t first,
                                         int lane, int step, int m)
{
    const Op op;
    const int64_t jump = stride * step;
    const unsigned char *p = chunk + lane * stride;
    Acc v = to_accumulator<Acc>(load_element<T>(p), first + lane);
    int k = lane + step;
    p += jump;
    for (; k + (UNROLL - 1) * step < m; k += UNROLL * step) {
        T items[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            items[u] = load_element<T>(p);
            p += jump;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            v = op(v, to_accumulator<Acc>(items[u], first + k + u * step));
        }
    }
    if (k < m) {
        T items[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL - 1; u++) {
            /* past the lane's last: its first of the turn again, unused */
            items[u] = load_element<T>(k + u * step < m ? p + u * jump : p);
        }
#pragma unroll
        for (int u = 0; u < UNROLL - 1; u++) {
            if (k + u * step < m) {
                v = op(v, to_accumulator<Acc>(items[u],
                                              first + k + u * step));
            }
        }
    }
    return v;
}

/* The lanes of a group of `group` (a power of two up to 32) combined by
 * the order's tree: lane 0 holds the result.  `present`: how many of its
 * first lanes hold a value (the others take no part); `lane`: the
 * lane's place in its group.  Every lane of the warp calls it. */
template <class Acc, class Op>
__device__ __forceinline__ Acc group_tree(Acc v, int lane, int present,
                                          int group)
{
    const Op op;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        if (offset < group) {
            const Acc other = shuffle_down(v, offset, group);
            if (lane + offset < present) {
                v = op(v, other);
            }
            present = present < offset ? present : offset;
        }
    }
    return v;
}

/* The chunks of a pass, a group of `group` lanes each (32 / group to a
 * warp), chunk c of row r being segment r * chunks + c.  Its partial
 * goes to out + the row's out offset + c * chunk_bytes: a partials
 * buffer's place, or for chunks 1 the row's result. */
template <class T, class Acc, class Op>
__global__ void __launch_bounds__(CR_ROWS_THREADS)
reduce_rows(const unsigned char *in, cr_rows_geometry geometry,
            int64_t rows, int64_t length, int64_t stride, int64_t chunks,
            int group, unsigned char *out, int64_t chunk_bytes)
{
    const int warp_lane = threadIdx.x % 32;
    const int lane = warp_lane % group;
    const int per_warp = 32 / group;
    const int64_t segments = rows * chunks;
    const int64_t warp =
        ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;

    /* The bound is the warp's: every lane reaches each shuffle. */
    for (int64_t base = warp * per_warp; base < segments;
         base += warps * per_warp) {
        const int64_t segment = base + warp_lane / group;
        const int64_t row = chunks == 1 ? segment : segment / chunks;
        const int64_t chunk = segment - row * chunks;
        const int64_t first = chunk * CR_ROW_CHUNK;
        int64_t m = 0, in_offset = 0, out_offset = 0;
        Acc v = Op::identity();
        if (segment < segments) {
            m = length - first < CR_ROW_CHUNK ? length - first
                                              : CR_ROW_CHUNK;
            row_offsets(geometry, row, &in_offset, &out_offset);
        }
        if (lane < m) {
            v = fold_lane<T, Acc, Op, rows_unroll<T, Acc>>(
                in + in_offset + first * stride, stride, first, lane, group,
                (int)m);
        }
        v = group_tree<Acc, Op>(v, lane, m < group ? (int)m : group, group);
        if (segment < segments && lane == 0) {
            *reinterpret_cast<Acc *>(out + out_offset + chunk * chunk_bytes)
                = v;
        }
    }
}

/* The chunks of pass 0 where adjacent rows' elements are adjacent: a
 * block of blockDim.x adjacent rows by blockDim.y lanes (`group` of the
 * order), tile t of rows t * blockDim.x on, chunk c of each, block item
 * t * chunks + c.  Out as reduce_rows'. */
template <class T, class Acc, class Op>
__global__ void __launch_bounds__(1024)
reduce_columns(const unsigned char *in, cr_rows_geometry geometry,
               int64_t rows, int64_t length, int64_t stride, int64_t chunks,
               unsigned char *out, int64_t chunk_bytes)
{
    __shared__ Acc lanes[1024];
    const Op op;
    const int width = blockDim.x;
    const int group = blockDim.y;
    const int x = threadIdx.x;
    const int y = threadIdx.y;
    const int64_t items = (rows + width - 1) / width * chunks;

    /* The bound is the block's: every thread reaches each barrier. */
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = chunks == 1 ? item : item / chunks;
        const int64_t chunk = item - tile * chunks;
        const int64_t row = tile * width + x;
        const int64_t first = chunk * CR_ROW_CHUNK;
        const int64_t m = length - first < CR_ROW_CHUNK ? length - first
                                                        : CR_ROW_CHUNK;
        const bool here = row < rows;
        int present = m < group ? (int)m : group;
        int64_t in_offset = 0, out_offset = 0;
        Acc *own = &lanes[y * width + x];
        if (here) {
            row_offsets(geometry, row, &in_offset, &out_offset);
        }
        Acc v = Op::identity();
        if (here && y < m) {
            v = fold_lane<T, Acc, Op, rows_unroll<T, Acc>>(
                in + in_offset + first * stride, stride, first, y, group,
                (int)m);
        }
        __syncthreads();    /* the last item's result is read */
        *own = v;
        __syncthreads();
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            if (offset < group) {
                if (y + offset < present) {
                    *own = op(*own, own[offset * width]);
                }
                present = present < offset ? present : offset;
                __syncthreads();
            }
        }
        if (here && y == 0) {
            *reinterpret_cast<Acc *>(out + out_offset + chunk * chunk_bytes)
                = *own;
        }
    }
}

/* The order's tree over a chunk of m <= ROW elements (ROW a power of
 * two), lane j holding element j alone, computed in one thread's
 * registers: as group_tree combines the lanes of a group (an offset at
 * or above the group, the power of two at or above m, combines
 * nothing). */
template <class T, class Acc, class Op, int ROW>
__device__ __forceinline__ Acc short_tree(const T (&items)[ROW], int m)
{
    const Op op;
    Acc v[ROW];
#pragma unroll
    for (int j = 0; j < ROW; j++) {
        if (j < m) {
            v[j] = to_accumulator<Acc>(items[j], (int64_t)j);
        }
    }
    int present = m;
#pragma unroll
    for (int offset = ROW / 2; offset > 0; offset >>= 1) {
#pragma unroll
        for (int i = 0; i < offset; i++) {
            if (i + offset < present) {
                v[i] = op(v[i], v[i + offset]);
            }
        }
        present = present < offset ? present : offset;
    }
    return v[0];
}

/* Rows of `length` <= ROW elements (ROW CR_SHORT_ROW, or half of it for
 * the shortest rows, whose thread then loads twice as many), a thread
 * each: the thread of rows base, base + threads, ...
 * (short_rows_at_once of them, so that adjacent threads read adjacent
 * rows) loads them all, then combines each by short_tree and writes its
 * result to out + the row's out offset. */
template <class T, class Acc, class Op, int ROW>
__global__ void __launch_bounds__(CR_ROWS_THREADS)
reduce_short_rows(const unsigned char *in, cr_rows_geometry geometry,
                  int64_t rows, int length, int64_t stride,
                  unsigned char *out)
{
    constexpr int AT_ONCE = short_rows_at_once<T, ROW>;
    const int64_t threads = (int64_t)gridDim.x * blockDim.x;

    for (int64_t base = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         base < rows; base += AT_ONCE * threads) {
        T items[AT_ONCE][ROW];
        if constexpr (sizeof(T) >= 16) {
            /* Partly loaded, an index accumulator's spilled 4 bytes
             * (ptxas, sm_90); narrower ones spilled when set so. */
            for (int r = 0; r < AT_ONCE; r++) {
                for (int j = 0; j < ROW; j++) {
                    items[r][j] = T{};
                }
            }
        }
        int64_t out_offset[AT_ONCE];
#pragma unroll
        for (int r = 0; r < AT_ONCE; r++) {
            const int64_t row = base + r * threads;
            int64_t in_offset = 0;
            out_offset[r] = 0;
            if (row < rows) {
                row_offsets(geometry, row, &in_offset, &out_offset[r]);
#pragma unroll
                for (int j = 0; j < ROW; j++) {
                    if (j < length) {
                        items[r][j] = load_element<T>(in + in_offset
                                                      + j * stride);
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < AT_ONCE; r++) {
            if (base + r * threads < rows) {
                *reinterpret_cast<Acc *>(out + out_offset[r]) =
                    short_tree<T, Acc, Op, ROW>(items[r], length);
            }
        }
    }
}

#endif /* CUDAREDUCE_ROWS_CUH */
