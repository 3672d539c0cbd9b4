/* exact.cuh: the kernels of exact sums (issue 44; docs/exact.md): each
 * thread sums its elements into a window (exact/window.h), the windows
 * are flushed into the block's limbs in shared memory, the blocks' limbs
 * into the call's limbs in global memory, and one thread rounds the
 * call's limbs once (exact/kulisch.h), in a launch of its own that
 * leaves them zero for the next call.
 *
 * The limbs are carry-save: CR_KULISCH_LIMBS 64-bit integers whose value
 * is sum_k limb[k] 2^(32 k) in units of the exact accumulator's bit 0, so
 * that a flush is a few integer atomic adds and no carry runs between
 * them.  Integer addition is associative and commutative: the value, and
 * so the result's bits, are the same for every order of the atomics,
 * every grid, every chunking (the host ring adds chunk after chunk into
 * the same limbs), every GPU.
 *
 * Why no limb overflows.  A flush adds a 2- or 3-limb two's-complement
 * integer shifted by at % 32 as pieces: each but the top an unsigned
 * 32-bit digit, the top a signed one below 2^31 in magnitude.  A lane
 * flushed alone (a re-basing: at most one an element) adds pieces below
 * 2^32; a warp's flush (one a round, a round being at least 2^8 elements
 * a lane) sums its 32 lanes' pieces first, below 2^37.  A block reading E
 * elements thus adds below E 2^32 + (E / 2^13 + 2) 2^37 to a limb:
 * below 2^62 for E up to CR_EXACT_BLOCK_ELEMENTS, 2^28, which the grid
 * keeps to (exact_sum.cu).  Each block then normalizes its limbs
 * (digits -2^31 .. 2^31 - 1 under a top that takes the rest) and adds
 * them to the call's, which take at most 2^31 in magnitude a block: fine
 * for up to 2^31 blocks, over every launch (a host array's chunks are
 * far fewer than 2^31 over their grids). */
#ifndef CUDAREDUCE_KERNELS_EXACT_CUH
#define CUDAREDUCE_KERNELS_EXACT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "dependent_launch.cuh"
#include "exact/state.h"
#include "exact/window.h"
#include "tuning.h"

/* The most elements a block reads (see above). */
#define CR_EXACT_BLOCK_ELEMENTS ((int64_t)1 << 28)

/* An element type's window, and an element as the window takes it
 * (float16 and bfloat16 convert to float exactly). */
template <class T>
struct exact_traits {
    using window = cr_window32;
    static constexpr int limbs = 2;
    __device__ static float value(T x) { return (float)x; }
};

template <>
struct exact_traits<double> {
    using window = cr_window64;
    static constexpr int limbs = 3;
    __device__ static double value(double x) { return x; }
};

template <>
struct exact_traits<__half> {
    using window = cr_window32;
    static constexpr int limbs = 2;
    __device__ static float value(__half x) { return __half2float(x); }
};

template <>
struct exact_traits<__nv_bfloat16> {
    using window = cr_window32;
    static constexpr int limbs = 2;
    __device__ static float value(__nv_bfloat16 x)
    {
        return __bfloat162float(x);
    }
};

__device__ __forceinline__ int
window_add(cr_window32 *w, cr_specials *specials, float x,
           cr_window32 *evicted)
{
    return cr_window32_add_evicting(w, specials, x, evicted);
}

__device__ __forceinline__ int
window_add(cr_window64 *w, cr_specials *specials, double x,
           cr_window64 *evicted)
{
    return cr_window64_add_evicting(w, specials, x, evicted);
}

__device__ __forceinline__ int
window_limbs(const cr_window32 *w, uint32_t *value)
{
    return cr_window32_limbs(w, value);
}

__device__ __forceinline__ int
window_limbs(const cr_window64 *w, uint32_t *value)
{
    return cr_window64_limbs(w, value);
}

/* An empty window at `base` (window.h's). */
__device__ __forceinline__ void
window_empty(cr_window32 *w, int32_t base)
{
    cr_window32_empty(w, base);
}

__device__ __forceinline__ void
window_empty(cr_window64 *w, int32_t base)
{
    cr_window64_empty(w, base);
}

/* What the window of an element type X keeps of its elements: the word
 * that holds an element's sign and exponent field (a float32's only
 * word, a float64's high one) and the field's first bit in it; the
 * largest finite exponent; the additions between flushes. */
__device__ __forceinline__ uint32_t
top_word(float x)
{
    return __float_as_uint(x);
}

__device__ __forceinline__ uint32_t
top_word(double x)
{
    return (uint32_t)__double2hiint(x);
}

template <class X>
inline constexpr int field_at = sizeof(X) == sizeof(float) ? 23 : 20;
template <class X>
inline constexpr int32_t exponent_max =
    sizeof(X) == sizeof(float) ? CR_WINDOW32_EMAX : CR_WINDOW64_EMAX;
template <class W>
inline constexpr int window_adds =
    sizeof(W) == sizeof(cr_window32) ? CR_WINDOW32_ADDS : CR_WINDOW64_ADDS;

/* An element's biased exponent field. */
template <class X>
__device__ __forceinline__ int32_t
exponent_of(X x)
{
    return (int32_t)(top_word(x) >> field_at<X> & (exponent_max<X> + 1));
}

/* An element of the span into the window by the float units (window.h's
 * cr_window32_units, cr_window64_units: the integer put's values, by an
 * exponent add and converts), its count left to the caller. */
__device__ __forceinline__ void
put_units(cr_window32 &w, float x)
{
    w.sum += (uint64_t)cr_window32_units(&w, x);
}

__device__ __forceinline__ void
put_units(cr_window64 &w, double x)
{
    uint64_t low;
    int64_t high;
    cr_window64_units(&w, x, &low, &high);
    w.low += low;
    w.high += (uint64_t)high;
}

/* The common path of a whole vector: where every element lies in the
 * window's span (no NaN, infinity, zero or subnormal does) and the count
 * has room for all, each is put in by the float units and true is
 * returned; else nothing is, and the caller adds them one by one
 * (window.h's rare path among them).  One test for the vector, not one
 * an element: |x|'s top word less base's exponent field, unsigned, below
 * 32 exponents' worth for every element, so their OR is too. */
template <int VEC, class W, class X>
__device__ __forceinline__ bool
put_common(W &w, const X (&x)[VEC])
{
    const uint32_t floor_bits = (uint32_t)w.base << field_at<X>;
    uint32_t offsets = 0;
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        offsets |= (top_word(x[j]) & 0x7fffffffu) - floor_bits;
    }
    if (offsets >= (uint32_t)CR_WINDOW_SPAN << field_at<X>
        || w.count > (uint32_t)(window_adds<W> - VEC)) {
        return false;
    }
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        put_units(w, x[j]);
    }
    w.count += VEC;
    return true;
}

/* A vector of elements of `traits`' type through put_common, as the
 * window takes them. */
template <class traits, int VEC, class W, class T>
__device__ __forceinline__ bool
put_vector(W &w, const T (&v)[VEC])
{
    decltype(traits::value(v[0])) x[VEC];
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        x[j] = traits::value(v[j]);
    }
    return put_common(w, x);
}

/* Puts the warp's empty windows on one base, at the start of each round
 * (they are empty then: the flush emptied them): the highest base a lane
 * has, or for a lane no element has placed, the base its next vector's
 * largest exponent would take (`next`, NULL where the lane has none).
 * On one base, a flush adds its lanes' pieces together and one lane adds
 * them, 3 or 4 atomics; where each lane's first element set its own
 * base, every flush was 32 lanes each adding its own to the same shared
 * limbs (docs/recorded/exact-2026-11-27-h200.txt).  A lane whose
 * elements lie below the span re-bases down, as it would anyway.  All of
 * the warp's lanes call it. */
template <class traits, int VEC, class W, class T>
__device__ __forceinline__ void
warp_base(W &w, const T *next)
{
    using X = decltype(traits::value(next[0]));
    int32_t want = w.base;
    if (w.base < 1 && next != nullptr) {
        int32_t e = 0;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            const int32_t f = exponent_of(traits::value(next[j]));
            e = f <= exponent_max<X> && f > e ? f : e;
        }
        if (e > 0) {
            want = -CR_WINDOW_SPAN;
            (void)cr_window_must_flush(e, &want, 0, exponent_max<X>);
        }
    }
    const int32_t base = __reduce_max_sync(0xffffffffu, want);
    if (w.count == 0 && base >= 1) {
        w.base = base;
    }
}

/* A window's integer, shifted by at % 32, as pieces for the limbs from
 * at / 32 on: piece[0 .. N) the unsigned 32-bit digits, piece[N] the
 * signed rest (cr_kulisch_add_limbs' words). */
template <int N>
__device__ __forceinline__ int
window_pieces(const uint32_t (&value)[N], int at, long long (&piece)[N + 1])
{
    const int shift = at % 32;
    uint32_t below = 0;
    for (int j = 0; j < N; j++) {
        piece[j] = shift ? (uint32_t)(value[j] << shift
                                      | below >> (32 - shift))
                         : value[j];
        below = value[j];
    }
    piece[N] = (int32_t)value[N - 1] >> (shift ? 32 - shift : 31);
    return at / 32;
}

template <int N>
__device__ __forceinline__ void
limbs_add(unsigned long long *limbs, int at,
          const long long (&piece)[N + 1])
{
    for (int j = 0; j <= N; j++) {
        if (piece[j] != 0) {
            atomicAdd(&limbs[at + j], (unsigned long long)piece[j]);
        }
    }
}

/* The window's additions into the block's limbs (a window of none adds
 * nothing). */
template <class W, int N>
__device__ __forceinline__ void
flush_alone(const W &w, unsigned long long *limbs)
{
    if (w.count) {
        uint32_t value[N];
        long long piece[N + 1];
        const int at = window_pieces<N>(value, window_limbs(&w, value),
                                        piece);
        limbs_add<N>(limbs, at, piece);
    }
}

/* Every lane's window into the block's limbs, and emptied (each keeps its
 * base).  Where every lane holding additions has one base (the common
 * case: a warp's data share their exponents), the lanes' pieces are
 * summed first and one lane adds them; else each lane adds its own.  All
 * of the warp's lanes call it. */
template <class W, int N>
__device__ __forceinline__ void
flush_warp(W &w, unsigned long long *limbs)
{
    const unsigned holding = __ballot_sync(0xffffffffu, w.count != 0);
    if (holding == 0) {
        return;
    }
    const int leader = __ffs(holding) - 1;
    const int base = __shfl_sync(0xffffffffu, w.base, leader);
    if (__all_sync(0xffffffffu, w.count == 0 || w.base == base)) {
        /* An empty window's integer is 0, wherever it lies. */
        uint32_t value[N];
        long long piece[N + 1];
        const int at = window_pieces<N>(
            value, __shfl_sync(0xffffffffu, window_limbs(&w, value), leader),
            piece);
        for (int j = 0; j <= N; j++) {
            for (int offset = 16; offset > 0; offset /= 2) {
                piece[j] += __shfl_xor_sync(0xffffffffu, piece[j], offset);
            }
        }
        if ((int)(threadIdx.x % 32) == leader) {
            limbs_add<N>(limbs, at, piece);
        }
    }
    else {
        flush_alone<W, N>(w, limbs);
    }
    window_empty(&w, w.base);
}

/* Normalizes the block's limbs into balanced digits, -2^31 .. 2^31 - 1
 * under a top that takes the rest, and adds the nonzero ones to the
 * call's.  Balanced, not 0 .. 2^32 - 1: a negative sum in digits of one
 * sign is all ones up to the top, some 60 limbs whose atomics every
 * block would send to the same addresses; balanced, a block's sum is its
 * few digits of either sign.  Called by the block's first warp. */
__device__ __forceinline__ void
limbs_to_call(unsigned long long *limbs, cr_exact_state *state)
{
    if (threadIdx.x == 0) {
        long long carry = 0;
        /* Unrolled whole, its 68 loads took 108 registers a thread. */
#pragma unroll 4
        for (int k = 0; k < CR_KULISCH_LIMBS; k++) {
            const long long t = (long long)limbs[k] + carry;
            const long long digit = k < CR_KULISCH_LIMBS - 1
                ? (long long)(int32_t)(uint32_t)t : t;
            limbs[k] = (unsigned long long)digit;
            carry = (t - digit) >> 32;
        }
    }
    __syncwarp();
    for (int k = (int)threadIdx.x; k < CR_KULISCH_LIMBS; k += 32) {
        if (limbs[k] != 0) {
            atomicAdd(&state->limb[k], limbs[k]);
        }
    }
}

/* Adds the n elements at `in` (of T; NaNs skipped where SKIP_NAN, and
 * counted) to the call's state.  A thread reads 16 bytes at a time of the
 * part of `in` that starts at a 16-byte boundary, grid-strided, in rounds
 * that each add fewer elements to its window than its bound, then the
 * warp flushes; the elements before and after that part, one each, by the
 * first threads of the grid. */
template <class T, bool SKIP_NAN>
__global__ void __launch_bounds__(CR_EXACT_THREADS, CR_EXACT_BLOCKS_PER_SM)
exact_sum_kernel(const T *__restrict__ in, int64_t n,
                 cr_exact_state *state)
{
    using traits = exact_traits<T>;
    using W = typename traits::window;
    constexpr int N = traits::limbs;
    constexpr int VEC = 16 / (int)sizeof(T);
    /* Loads a lane has in flight (2 of 8 float16 or bfloat16, whose
     * conversions took bfloat16's last registers at 4: 2 bytes spilled
     * under CR_EXACT_BLOCKS_PER_SM's bound), and vectors a round: its
     * additions stay within the window's bound. */
    constexpr int UNROLL = VEC > 4 ? 2 : 4;
    constexpr int ROUND = window_adds<W> / VEC;
    struct alignas(16) vector {
        T v[VEC];
    };
    __shared__ unsigned long long limbs[CR_KULISCH_LIMBS];
    __shared__ unsigned int block_specials;
    __shared__ unsigned long long block_nans;

    let_dependents_launch();    /* the rounding (exact_round_kernel) */
    for (int k = (int)threadIdx.x; k < CR_KULISCH_LIMBS; k += blockDim.x) {
        limbs[k] = 0;
    }
    if (threadIdx.x == 0) {
        block_specials = 0;
        block_nans = 0;
    }
    __syncthreads();

    W w, evicted;
    cr_specials specials;
    window_empty(&w, -CR_WINDOW_SPAN);
    cr_specials_clear(&specials);
    unsigned long long nans = 0;
    auto add = [&](T element) {
        const auto x = traits::value(element);
        if (SKIP_NAN && x != x) {
            nans++;
            return;
        }
        if (window_add(&w, &specials, x, &evicted)) {
            flush_alone<W, N>(evicted, limbs);
        }
    };

    const uintptr_t address = reinterpret_cast<uintptr_t>(in);
    const int64_t lead = (int64_t)((16 - address % 16) % 16 / sizeof(T));
    const int64_t head = lead < n ? lead : n;
    const int64_t vectors = (n - head) / VEC;
    const int64_t rest = n - head - vectors * VEC;
    const vector *body = reinterpret_cast<const vector *>(in + head);
    const int64_t thread = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t threads = (int64_t)gridDim.x * blockDim.x;

    if (thread < head) {
        add(in[thread]);
    }
    if (thread < rest) {
        add(in[head + vectors * VEC + thread]);
    }
    /* Rounds whose count the warp shares (a warp's lanes are adjacent,
     * so they run out of vectors together but for the last round), of
     * UNROLL loads in flight a lane.  A vector the common path does not
     * take is read again and added an element at a time, after the
     * others: the rare path's code once a step, not once an element. */
    for (int64_t i = thread; __any_sync(0xffffffffu, i < vectors);) {
        int r = 0;
        warp_base<traits, VEC>(w, i < vectors ? body[i].v : nullptr);
        /* Whole steps, no test a load; then what is left, a load at a
         * time (a lane's last round only). */
        for (; r + UNROLL <= ROUND && i + (UNROLL - 1) * threads < vectors;
             r += UNROLL, i += UNROLL * threads) {
            vector v[UNROLL];
            unsigned missed = 0;
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                v[u] = body[i + u * threads];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                if (!put_vector<traits, VEC>(w, v[u].v)) {
                    missed |= 1u << u;
                }
            }
#pragma unroll 1
            for (int u = 0; u < UNROLL; u++) {
                if (missed >> u & 1) {
                    const T *again = body[i + u * threads].v;
#pragma unroll 1
                    for (int j = 0; j < VEC; j++) {
                        add(again[j]);
                    }
                }
            }
        }
        for (; r < ROUND && i < vectors; r++, i += threads) {
            const vector v = body[i];
            if (!put_vector<traits, VEC>(w, v.v)) {
#pragma unroll 1
                for (int j = 0; j < VEC; j++) {
                    add(body[i].v[j]);
                }
            }
        }
        flush_warp<W, N>(w, limbs);
    }
    flush_warp<W, N>(w, limbs);

    const unsigned bits = (specials.nan ? CR_EXACT_NAN : 0u)
                          | (specials.pos_inf ? CR_EXACT_POS_INF : 0u)
                          | (specials.neg_inf ? CR_EXACT_NEG_INF : 0u);
    if (bits) {
        atomicOr(&block_specials, bits);
    }
    if (SKIP_NAN && nans) {
        atomicAdd(&block_nans, nans);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        limbs_to_call(limbs, state);
        if (threadIdx.x == 0 && block_specials) {
            atomicOr(&state->specials, block_specials);
        }
        if (SKIP_NAN && threadIdx.x == 0 && block_nans) {
            atomicAdd(&state->nans, block_nans);
        }
    }
}

/* cr_exact_round, after the launches that added the call's elements (as
 * the last one's programmatic dependent where the device has them:
 * dependent_launch.cuh), by a warp: its lanes copy the state into shared
 * memory, 68 limbs at once, and zero it for the next call
 * (memory/exact_states.cuh keeps it), then lane 0 rounds from there.  In
 * the adding kernel's last block instead (a ticket, the state read and
 * zeroed by atomicExch), the rounding's code made every call's adding
 * 1.4x slower at float64 2^28, though the adding loop's instructions and
 * their addresses were unchanged and no block ran it
 * (docs/recorded/exact-launch-2026-11-28-h200.txt). */
__global__ void __launch_bounds__(32)
exact_round_kernel(cr_exact_state *state, cr_exact_rounding rounding)
{
    __shared__ unsigned long long limbs[CR_KULISCH_LIMBS];
    wait_for_prerequisite();
    for (int k = (int)threadIdx.x; k < CR_KULISCH_LIMBS; k += 32) {
        limbs[k] = state->limb[k];
        state->limb[k] = 0;
    }
    __syncwarp();
    if (threadIdx.x == 0) {
        const unsigned int seen = state->specials;
        const unsigned long long nans = state->nans;
        state->specials = 0;
        state->nans = 0;
        cr_exact_round(limbs, seen, nans, rounding);
    }
}

#endif /* CUDAREDUCE_KERNELS_EXACT_CUH */
