/* rows.cuh: reductions along axes: many rows, a result each (cr_rows).
 *
 * One order, kept by every kernel here, makes a row's result depend only
 * on its elements in order, its length, the types and the operator: not
 * on how many rows there are, where the row lies, or which kernel read
 * it (batch invariance, and determinism).
 *
 *   A row longer than CR_ROW_CHUNK is cut into chunks of CR_ROW_CHUNK
 *   elements, the last shorter (an operator whose result is the same bits
 *   in any order, into shorter ones where a few rows would leave the GPU
 *   idle: rows_plan.c); each chunk's partial is the reduction of
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
 * An operator whose result is the same bits in any order (an integer's
 * or bool's: operators.cuh's any_order) into a wider accumulator keeps
 * the chunks but not the lanes' order: reduce_rows reads its chunks of
 * adjacent, aligned elements by 16-byte vectors (fold_vectors,
 * rows_by_vectors).
 *
 * reduce_rows: a warp, or a group of G lanes, per chunk, its lanes
 * reading the chunk's elements at any stride (adjacent ones: coalesced);
 * later passes read the partials with it, or where they are few and long
 * with reduce_staged, a block a chunk, through shared memory.
 * reduce_columns: the rows' first elements are adjacent and their
 * elements are not (the leading axis of a C-contiguous array): a block's
 * threads in x take adjacent rows (coalesced loads), in y the G lanes of
 * the order, a few a thread, combined by the same tree in registers and
 * shared memory.
 * reduce_short_rows: a row of at most CR_SHORT_ROW elements (each lane of
 * the order holds one) a thread, in any layout, its elements in
 * registers and the same tree computed there; a thread loads several
 * rows before combining any, as one element a lane would leave the
 * memory system idle.  reduce_short_row_gangs: the same for rows of at
 * most CR_SHORT_ROW / 2 side by side, a few adjacent ones a thread, each
 * element of them in one load of 8 or 16 bytes.  An index operator's
 * index is the element's in its row, chunk * the pass's chunk + its
 * place.
 */
#ifndef CUDAREDUCE_ROWS_CUH
#define CUDAREDUCE_ROWS_CUH

#include <algorithm>
#include <cstdint>

#include "dependent_launch.cuh"
#include "kernels/casts.cuh"
#include "kernels/fast.cuh"
#include "kernels/float_results.cuh"
#include "kernels/operators.cuh"
#include "rows_plan.h"
#include "tuning.h"

/* Loads in flight a lane: CR_ROWS_UNROLL, of at most 128 bytes (32
 * registers: complex128's any and all spilled 4 bytes at 16); 2 where an
 * element and the accumulator take more than 32 bytes (complex128's count
 * or index beside it), which spilled 4 bytes at 4 (ptxas, sm_90).  At 32
 * bytes (a later pass over argmin's 16-byte partials) 2 left the second
 * pass of argmax over (4, 2^24) 31.9 us of one block's lanes folding 128
 * partials each (docs/recorded/axis-kernels-2026-11-27-h200.txt). */
template <class T, class Acc>
inline constexpr int rows_unroll =
    sizeof(T) + sizeof(Acc) > 32 ? 2
    : CR_ROWS_UNROLL * sizeof(T) > 128 ? 128 / (int)sizeof(T)
                                       : CR_ROWS_UNROLL;

/* The rows a thread of reduce_short_rows<..., ROW> loads before
 * combining: as many as keep its elements in 16 registers, at most 16 /
 * ROW; one of 16-byte elements (complex128's any and all spilled 8 bytes
 * at two, ptxas, sm_90).  32 registers' worth took 92 to 104 registers a
 * thread, two blocks an SM, and ran (2^24, 4) along axis 1 at 96 us
 * against 80 (docs/recorded/axis-kernels-2026-11-27-h200.txt); 32 / ROW
 * rows of narrow integers spilled their 8-byte sums. */
template <class T, int ROW>
inline constexpr int short_rows_at_once =
    sizeof(T) >= 16 || 64 / (ROW * (int)sizeof(T)) < 1 ? 1
    : 64 / (ROW * (int)sizeof(T)) > 16 / ROW
        ? 16 / ROW
        : 64 / (ROW * (int)sizeof(T));

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

/* A zero sum as +0.0.  NumPy's sums start from +0.0, so that a row of
 * -0.0 sums to +0.0 (numpy.sum([-0.0]) is 0.0), and so does the fast
 * method's whole-array sum (from Op::identity()); a chunk here starts from
 * its first element, which keeps the sign, so each chunk's sum (a partial
 * or the row's result) is settled: a sum of zeros is +0.0 from the first
 * chunk on, as NumPy's, and any other sum is unchanged.  A select, not an
 * add of +0.0, which would give a NaN the GPU's payload.  A complex sum
 * each part; nanmean's its sum. */
template <class V>
__device__ __forceinline__ V unsigned_zero(V v)
{
    return v == V(0) ? V(0) : v;
}

template <class F>
__device__ __forceinline__ complex_value<F> unsigned_zero(complex_value<F> z)
{
    return {unsigned_zero(z.re), unsigned_zero(z.im)};
}

template <class Op, class Acc>
__device__ __forceinline__ Acc settled(Acc v)
{
    if constexpr (cuda::std::is_same_v<Op, SumOp<Acc>>) {
        return unsigned_zero(v);
    }
    else if constexpr (is_counted<Acc>::value) {
        v.sum = unsigned_zero(v.sum);
        return v;
    }
    else {
        return v;
    }
}

/* How a pass writes a chunk's partial or a row's result: its accumulator
 * (store_accumulator: partials, and results that need no finishing), or,
 * in the last pass of a float sum or mean into a device out of the
 * element's dtype, the result finished as the store pass would finish it
 * (store_finished, finish_float), so that no accumulator is written and
 * read again: the store pass after float16's 2^24 sums along axis 1 took
 * 74 us beside their kernel's 119
 * (docs/recorded/exact-round-axis-store-2026-11-27-h200.txt, item 4). */
template <class Acc>
struct store_accumulator {
    using type = Acc;
    __device__ static Acc finished(Acc v, const cr_rows_finish &)
    {
        return v;
    }
};

template <class Result>
struct store_finished {
    using type = Result;
    template <class Acc>
    __device__ static Result finished(Acc v, const cr_rows_finish &f)
    {
        return f.reduced_is_result
                   ? finish_float<Acc, Result, Result>(v, f.divide, f.n)
                   : finish_float<Acc, Acc, Result>(v, f.divide, f.n);
    }
};

/* argmin's and argmax's index, into an int64 out (NumPy's intp), which
 * the store pass would copy out of the accumulator: a third launch after
 * the two passes of argmax over (32, 2^17)
 * (docs/recorded/axis-kernels-2026-11-27-h200.txt, item 4). */
struct store_index {
    using type = int64_t;
    template <class Acc>
    __device__ static int64_t finished(Acc v, const cr_rows_finish &)
    {
        return v.index;
    }
};

/* What a lane folds its elements into: the accumulator, but for an index
 * operator's elements (not an earlier pass's partials, which carry their
 * indices) the value beside an int index in the chunk, combined by
 * Op::later: a lane meets its elements in index order, so that no index
 * is compared and none is 64 bits wide until the lane is done (the
 * index operators' fold was bound by its instructions, not by memory:
 * docs/recorded/axis-kernels-2026-11-27-h200.txt). */
template <class T, class Acc>
inline constexpr bool folds_by_later =
    is_indexed<Acc>::value && !cuda::std::is_same_v<T, Acc>;

template <class T, class Acc, bool = folds_by_later<T, Acc>>
struct lane_fold {
    using type = Acc;
    __device__ static Acc start(T item, int k, int64_t first)
    {
        return to_accumulator<Acc>(item, first + k);
    }
    template <class Op>
    __device__ static Acc add(const Op &op, Acc v, T item, int k,
                              int64_t first)
    {
        return op(v, to_accumulator<Acc>(item, first + k));
    }
    __device__ static Acc finish(Acc v, int64_t) { return v; }
};

template <class T, class Acc>
struct lane_fold<T, Acc, true> {
    using Value = decltype(Acc::value);
    using type = indexed<Value, int>;
    __device__ static type start(T item, int k, int64_t)
    {
        return {k, to_accumulator<Value>(item)};
    }
    template <class Op>
    __device__ static type add(const Op &op, type v, T item, int k, int64_t)
    {
        return op.later(v, type{k, to_accumulator<Value>(item)});
    }
    __device__ static Acc finish(type v, int64_t first)
    {
        return Acc{first + v.index, v.value};
    }
};

/* One lane's fold: the elements lane, lane + step, ... of the m at
 * `chunk` (`stride` bytes apart; lane < m <= the pass's chunk), the first of
 * index `first` in its row, left to right from the lane's first.  The
 * loads of a turn, the last shorter turn's too, are all in flight before
 * its combines, which keep that order. */
template <class T, class Acc, class Op, int UNROLL>
__device__ __forceinline__ Acc fold_lane(const unsigned char *chunk,
                                         int64_t stride, int64_t first,
                                         int lane, int step, int m)
{
    using Fold = lane_fold<T, Acc>;
    const Op op;
    const int64_t jump = stride * step;
    const unsigned char *p = chunk + lane * stride;
    typename Fold::type v =
        Fold::start(load_element<T>(p), lane, first);
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
            v = Fold::add(op, v, items[u], k + u * step, first);
        }
    }
    if (k < m) {
        T items[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL - 1; u++) {
            /* past the lane's last: its last again, unused; one address
             * stepped, not one a load (16 loads spilled in float min) */
            items[u] = load_element<T>(p);
            if (k + (u + 1) * step < m) {
                p += jump;
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL - 1; u++) {
            if (k + u * step < m) {
                v = Fold::add(op, v, items[u], k + u * step, first);
            }
        }
    }
    return Fold::finish(v, first);
}

/* Whether reduce_rows may read a chunk of T by 16-byte vectors into Acc
 * under Op (its instance of VECTORS): an operator whose result is the same
 * bits in any order (any_order), whose lanes need not each take
 * elements 32 apart, into an accumulator other than its elements' (an
 * integer's sum or product, any or all of a number; the gain:
 * CR_ROWS_VECTOR_UNROLL).  Not an index operator's: float32 argmax over
 * (32, 2^17) took 1.04x the time by vectors
 * (docs/recorded/axis-vectors-2026-11-28-h200.txt). */
template <class T, class Acc, class Op>
inline constexpr bool rows_by_vectors =
    any_order<Acc, Op> && sizeof(T) < 16 && !cuda::std::is_same_v<T, Acc>
    && !is_indexed<Acc>::value;

/* Vectors in flight a lane of fold_vectors.  At 4, ptxas spilled 48
 * bytes of the integer sums at rows_blocks_per_sm's 64 registers (sm_90);
 * at 3 none, and int8 sums along rows took 0.55-0.62x the time of 1-byte
 * loads, where 4 with 3 blocks an SM (no spill) took 0.72-0.82x
 * (docs/recorded/axis-vectors-2026-11-28-h200.txt). */
#define CR_ROWS_VECTOR_UNROLL 3

/* One lane's share of a chunk of m elements at `chunk` (16-byte aligned,
 * adjacent, the first of index `first` in its row) by 16-byte vectors:
 * vectors lane, lane + 32, ..., each combined as the fast kernel combines
 * one (combine_vector), and for lane 0 the m % VEC elements after the
 * last whole vector.  For operators of any order only
 * (rows_by_vectors): their results do not depend on which lane took an
 * element, or when. */
template <class T, class Acc, class Op>
__device__ __forceinline__ Acc fold_vectors(const unsigned char *chunk,
                                            int64_t first, int lane, int m)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int UNROLL = CR_ROWS_VECTOR_UNROLL;
    const Op op;
    const uint4 *vectors = reinterpret_cast<const uint4 *>(chunk);
    const int count = m / VEC;
    Acc v = Op::identity();
    for (int k = lane; k < count; k += 32 * UNROLL) {
        uint4 bits[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (k + 32 * u < count) {
                bits[u] = __ldg(vectors + k + 32 * u);
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (k + 32 * u < count) {
                v = op(v, combine_vector<T, Acc, Op>(
                              bits[u], first + (int64_t)(k + 32 * u) * VEC));
            }
        }
    }
    if (lane == 0) {
        for (int e = count * VEC; e < m; e++) {
            v = op(v, to_accumulator<Acc>(
                          load_element<T>(chunk + e * (int64_t)sizeof(T)),
                          first + e));
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

/* The blocks an SM reduce_rows is bound to hold: CR_ROWS_BLOCKS_PER_SM,
 * half as many where an element and what its lane folds it into take
 * more than 16 bytes (an index operator's of 8-byte values spilled 24 to
 * 48 bytes at 64 registers, ptxas, sm_90). */
template <class T, class Acc>
inline constexpr int rows_blocks_per_sm =
    sizeof(T) + sizeof(typename lane_fold<T, Acc>::type) > 16
        ? CR_ROWS_BLOCKS_PER_SM / 2 : CR_ROWS_BLOCKS_PER_SM;

/* The chunks of a pass, a group of `group` lanes each (32 / group to a
 * warp), chunk c of row r being segment r * chunks + c.  Its partial
 * goes to out + the row's out offset + c * chunk_bytes: a partials
 * buffer's place, or for chunks 1 the row's result, as Store writes it. */
template <class T, class Acc, class Op, class Store, bool VECTORS = false>
__global__ void __launch_bounds__(CR_ROWS_THREADS, rows_blocks_per_sm<T, Acc>)
reduce_rows(const unsigned char *in, cr_rows_geometry geometry,
            int64_t rows, int64_t length, int64_t stride, int chunk_length,
            int64_t chunks, int group, unsigned char *out,
            int64_t chunk_bytes, cr_rows_finish finish)
{
    static_assert(!VECTORS || rows_by_vectors<T, Acc, Op>,
                  "vectors only where the order is free");
    /* A later pass is launched as the pass before's dependent
     * (dependent_launch.cuh): it reads that one's partials. */
    let_dependents_launch();
    wait_for_prerequisite();
    const int warp_lane = threadIdx.x % 32;
    const int lane = warp_lane % group;
    const int per_warp = 32 / group;
    const int64_t segments = rows * chunks;
    /* A chunk's elements: the plan's, which is CR_ROW_CHUNK but for an
     * operator of any order; the others' a constant: read at run time it
     * cost a float32 sum's rows of 2^10 6%
     * (docs/recorded/axis-finish-2026-11-28-h200.txt). */
    const int elements = any_order<Acc, Op> ? chunk_length : CR_ROW_CHUNK;
    const int64_t warp =
        ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;

    /* The bound is the warp's: every lane reaches each shuffle. */
    for (int64_t base = warp * per_warp; base < segments;
         base += warps * per_warp) {
        const int64_t segment = base + warp_lane / group;
        const int64_t row = chunks == 1 ? segment : segment / chunks;
        const int64_t chunk = segment - row * chunks;
        const int64_t first = chunk * elements;
        int64_t m = 0, in_offset = 0, out_offset = 0;
        Acc v = Op::identity();
        if (segment < segments) {
            m = length - first < elements ? length - first : elements;
            row_offsets(geometry, row, &in_offset, &out_offset);
        }
        int present = m < group ? (int)m : group;
        if constexpr (VECTORS) {
            /* the lanes that take a vector, or lane 0 the elements of a
             * chunk shorter than one */
            constexpr int VEC = 16 / (int)sizeof(T);
            present = m / VEC < 32 ? (int)(m / VEC) : 32;
            present = present > 0 || m == 0 ? present : 1;
            if (lane < present) {
                v = fold_vectors<T, Acc, Op>(in + in_offset + first * stride,
                                             first, lane, (int)m);
            }
        }
        else if (lane < m) {
            v = fold_lane<T, Acc, Op, rows_unroll<T, Acc>>(
                in + in_offset + first * stride, stride, first, lane, group,
                (int)m);
        }
        v = group_tree<Acc, Op>(v, lane, present, group);
        if (segment < segments && lane == 0) {
            *reinterpret_cast<typename Store::type *>(
                out + out_offset + chunk * chunk_bytes) =
                Store::finished(settled<Op>(v), finish);
        }
    }
}

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
    return settled<Op>(v[0]);
}

/* A row of `length` <= ROW elements `stride` bytes apart into items[0,
 * length): by words of Word where the elements are adjacent and the
 * row's bytes are whole aligned words (a warp's loads then take its rows'
 * bytes side by side, in as few loads as the words allow), else an
 * element at a time.  Returns whether it could. */
template <class Word, class T, int ROW>
__device__ __forceinline__ bool load_row_words(T (&items)[ROW],
                                               const unsigned char *row,
                                               int length, int64_t stride)
{
    constexpr int BYTES = ROW * (int)sizeof(T);
    /* A word of one element or less loads no more than the element. */
    if constexpr (BYTES % sizeof(Word) != 0 || sizeof(Word) <= sizeof(T)) {
        return false;
    }
    else {
        const int bytes = length * (int)sizeof(T);
        if (stride != (int64_t)sizeof(T) || bytes % sizeof(Word) != 0
            || reinterpret_cast<uintptr_t>(row) % sizeof(Word) != 0) {
            return false;
        }
        Word words[BYTES / sizeof(Word)];
#pragma unroll
        for (int w = 0; w < BYTES / (int)sizeof(Word); w++) {
            words[w] = w * (int)sizeof(Word) < bytes
                       ? reinterpret_cast<const Word *>(row)[w] : Word{};
        }
        memcpy(items, words, BYTES);
        return true;
    }
}

template <class T, int ROW>
__device__ __forceinline__ void load_short_row(T (&items)[ROW],
                                               const unsigned char *row,
                                               int length, int64_t stride)
{
    if (load_row_words<uint4>(items, row, length, stride)
        || load_row_words<uint2>(items, row, length, stride)
        || load_row_words<unsigned int>(items, row, length, stride)) {
        return;
    }
#pragma unroll
    for (int j = 0; j < ROW; j++) {
        if (j < length) {
            items[j] = load_element<T>(row + j * stride);
        }
    }
}

/* The word that holds element j of a gang's rows in reduce_short_row_gangs:
 * 16 bytes, but 8 of 1-byte elements (16 rows of them, each a register
 * once unpacked, spilled 22 to 48 bytes beside their 8-byte sums at 128
 * registers, ptxas, sm_90). */
template <class T>
using gang_word = cuda::std::conditional_t<sizeof(T) == 1, uint2, uint4>;

/* Adjacent short rows a thread of reduce_short_row_gangs takes at once
 * (their first elements side by side: the leading axis of a C-contiguous
 * array), a gang_word holding element j of each; 0 (no gangs) where
 * their elements would pass 16 registers (ROW of CR_SHORT_ROW), their
 * accumulators 16 (8 index accumulators of bytes or of 2-byte values
 * spilled 20 to 128 bytes, ptxas, sm_90), or one fills the word.
 * Elements of 1 and 2 bytes gang too: a thread a row of 2-byte elements
 * read (4, 2^24) along axis 0 at 26% of the DRAM's peak
 * (docs/recorded/axis-dtypes-2026-11-27-h200.txt, item 6); in gangs,
 * float16's ran 153 -> 49 us, int8's 136 -> 75
 * (docs/recorded/axis-finish-2026-11-28-h200.txt, item 1). */
template <class T, class Acc, int ROW>
inline constexpr int short_row_gang =
    sizeof(T) <= 8 && (int)sizeof(gang_word<T>) * ROW <= 64
            && (int)(sizeof(gang_word<T>) / sizeof(T) * sizeof(Acc)) <= 64
        ? (int)(sizeof(gang_word<T>) / sizeof(T)) : 0;

/* Rows of `length` <= ROW elements whose first elements lie side by side
 * (ndim 1, in_strides[0] the element's size) and whose elements'
 * `stride` and first address are multiples of 16: in gangs of GANG
 * (short_row_gang) adjacent rows, a gang a thread, element j of a whole
 * gang in one gang_word (of the rows past the last whole gang one
 * element at a time); each row combined by short_tree, a gang's results
 * stored in 16-byte words where they lie side by side.  A thread a row
 * read (4, 2^24) along axis 0 at 62% of the DRAM's peak in 110 us, four
 * rows' elements 64 MiB apart each in its own 4-byte load; gangs: 79 us
 * (docs/recorded/axis-kernels-2026-11-27-h200.txt). */
template <class T, class Acc, class Op, class Store, int ROW>
__global__ void __launch_bounds__(CR_ROWS_THREADS, CR_ROWS_BLOCKS_PER_SM / 2)
reduce_short_row_gangs(const unsigned char *in, cr_rows_geometry geometry,
                       int64_t rows, int length, int64_t stride,
                       unsigned char *out, cr_rows_finish finish)
{
    using Stored = typename Store::type;
    using Word = gang_word<T>;
    constexpr int GANG = short_row_gang<T, Acc, ROW>;
    static_assert(GANG > 1, "a gang's elements fill a word");
    constexpr int PACKED = GANG * (int)sizeof(Stored) % 16 == 0
                           ? GANG * (int)sizeof(Stored) / 16 : 0;
    let_dependents_launch();
    const int64_t gangs = rows / GANG;
    const int64_t threads = (int64_t)gridDim.x * blockDim.x;
    const int64_t thread = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    /* A gang's results side by side, stored in 16-byte words where they
     * fill them: 4-byte stores 16 bytes apart left (4, 2^24) along axis 0
     * at 98 us. */
    const bool packed = PACKED > 0
        && geometry.out_strides[0] == (int64_t)sizeof(Stored)
        && reinterpret_cast<uintptr_t>(out) % 16 == 0;
    for (int64_t g = thread; g < gangs; g += threads) {
        const unsigned char *first = in + g * (int64_t)sizeof(Word);
        T items[GANG][ROW];
#pragma unroll
        for (int j = 0; j < ROW; j++) {
            if (j < length) {
                T element[GANG];
                const Word word =
                    *reinterpret_cast<const Word *>(first + j * stride);
                memcpy(element, &word, sizeof(Word));
#pragma unroll
                for (int r = 0; r < GANG; r++) {
                    items[r][j] = element[r];
                }
            }
        }
        Stored results[GANG];
#pragma unroll
        for (int r = 0; r < GANG; r++) {
            results[r] = Store::finished(
                short_tree<T, Acc, Op, ROW>(items[r], length), finish);
        }
        if constexpr (PACKED > 0) {
            if (packed) {
                uint4 words[PACKED];
                memcpy(words, results, sizeof(results));
#pragma unroll
                for (int w = 0; w < PACKED; w++) {
                    reinterpret_cast<uint4 *>(out)[g * PACKED + w] = words[w];
                }
                continue;
            }
        }
#pragma unroll
        for (int r = 0; r < GANG; r++) {
            int64_t in_offset, out_offset;
            row_offsets(geometry, g * GANG + r, &in_offset, &out_offset);
            *reinterpret_cast<Stored *>(out + out_offset) = results[r];
        }
    }
    /* The rows past the last whole gang: one thread, an element a load
     * (a branch between the two loads inside the gangs' loop cost them
     * their overlap: 128 us against 79). */
    if (thread == 0) {
        for (int64_t row = gangs * GANG; row < rows; row++) {
            T items[ROW];
            int64_t in_offset, out_offset;
            row_offsets(geometry, row, &in_offset, &out_offset);
            load_short_row(items, in + in_offset, length, stride);
            *reinterpret_cast<Stored *>(out + out_offset) = Store::finished(
                short_tree<T, Acc, Op, ROW>(items, length), finish);
        }
    }
}

/* Rows of `length` <= ROW elements (ROW CR_SHORT_ROW, or half of it for
 * the shortest rows, whose thread then loads twice as many), a thread
 * each: the thread of rows base, base + threads, ...
 * (short_rows_at_once of them, so that adjacent threads read adjacent
 * rows) loads them all, then combines each by short_tree and writes its
 * result to out + the row's out offset. */
template <class T, class Acc, class Op, class Store, int ROW>
__global__ void __launch_bounds__(CR_ROWS_THREADS, CR_ROWS_BLOCKS_PER_SM / 2)
reduce_short_rows(const unsigned char *in, cr_rows_geometry geometry,
                  int64_t rows, int length, int64_t stride,
                  unsigned char *out, cr_rows_finish finish)
{
    constexpr int AT_ONCE = short_rows_at_once<T, ROW>;
    const int64_t threads = (int64_t)gridDim.x * blockDim.x;
    let_dependents_launch();
    wait_for_prerequisite();    /* a later pass's, as reduce_rows' */

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
                load_short_row(items[r], in + in_offset, length, stride);
            }
        }
#pragma unroll
        for (int r = 0; r < AT_ONCE; r++) {
            if (base + r * threads < rows) {
                *reinterpret_cast<typename Store::type *>(
                    out + out_offset[r]) = Store::finished(
                    short_tree<T, Acc, Op, ROW>(items[r], length), finish);
            }
        }
    }
}

#endif /* CUDAREDUCE_ROWS_CUH */
