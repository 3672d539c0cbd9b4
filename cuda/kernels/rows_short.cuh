/* rows_short.cuh: rows of at most CR_SHORT_ROW elements, a thread a row
 * or a gang of adjacent rows a thread, in rows.cuh's order. */
#ifndef CUDAREDUCE_ROWS_SHORT_CUH
#define CUDAREDUCE_ROWS_SHORT_CUH

#include "kernels/rows.cuh"

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

#endif /* CUDAREDUCE_ROWS_SHORT_CUH */
