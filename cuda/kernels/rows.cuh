/* rows.cuh: reductions along axes: many rows, a result each (cr_rows):
 * their one order, the pieces every kernel along axes shares, and the row
 * kernel; the others in rows_staged.cuh, rows_columns.cuh and
 * rows_short.cuh.
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
 * with reduce_staged (rows_staged.cuh), a block a chunk, through shared
 * memory.
 * reduce_columns (rows_columns.cuh): the rows' first elements are
 * adjacent and their elements are not (the leading axis of a C-contiguous
 * array): a block's threads in x take adjacent rows (coalesced loads), in
 * y the G lanes of the order, a few a thread, combined by the same tree in
 * registers and shared memory.
 * reduce_short_rows (rows_short.cuh): a row of at most CR_SHORT_ROW
 * elements (each lane of the order holds one) a thread, in any layout,
 * its elements in registers and the same tree computed there; a thread
 * loads several rows before combining any, as one element a lane would
 * leave the memory system idle.  reduce_short_row_gangs: the same for
 * rows of at most CR_SHORT_ROW / 2 side by side, a few adjacent ones a
 * thread, each element of them in one load of 8 or 16 bytes.  An index
 * operator's index is the element's in its row, chunk * the pass's chunk +
 * its place.
 */
#ifndef CUDAREDUCE_ROWS_CUH
#define CUDAREDUCE_ROWS_CUH

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

#endif /* CUDAREDUCE_ROWS_CUH */
