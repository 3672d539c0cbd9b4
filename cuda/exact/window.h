/* window.h: the per-thread fixed-point window of issue 44's exact sums,
 * for float32 elements (float16 and bfloat16 too: they convert to float
 * exactly; a complex sum is a window a part) and for float64 elements.
 * Header-only plain C99; also C++17 and CUDA, every function
 * __host__ __device__ (CR_HD).  See docs/exact.md.
 *
 * Adding an element to the exact accumulator (kulisch.h) costs a few of
 * its limbs and a carry that runs on; a thread adds its elements to a
 * window instead: a small two's-complement integer whose bit 0 weighs
 * 2^(base - 150) for float32, 2^(base - 1075) for float64, where `base`
 * is a biased exponent.  It takes the elements of the 32 biased exponents
 * base .. base + 31 (its span), with no rounding, and is flushed into the
 * exact accumulator now and then: after 2^8 (float32) or 2^11 (float64)
 * additions, before one that falls outside the span, and at the end.
 *
 * Why no bit is ever lost.  A normal element of biased exponent e is
 * m * 2^(e - 150) (float32) or m * 2^(e - 1075) (float64), 0 < m < 2^p,
 * p = 24 or 53.  Inside the span, d = e - base is 0 .. 31 and the element
 * is m * 2^d window units: an integer (its last bit is at or above the
 * window's bit 0) of at most (2^p - 1) 2^31 in magnitude.  The common
 * path negates m first where the element is negative (m < 2^p fits its
 * word, 32 or 64 bits, signed) and shifts it left by d, to 64 bits for
 * float32, 96 for float64: nothing falls off.  The float32 window is one
 * 64-bit word: n additions sum to at most n (2^24 - 1) 2^31 in
 * magnitude, 2^63 - 2^39 for n = 2^8, which fits.  The float64 window is
 * two 64-bit words, carry-save: an element's shifted value, split at bit
 * 32, adds its low 32 bits (0 .. 2^32 - 1) to `low` and the rest, the
 * value floored to a multiple of 2^32 (-2^52 .. 2^52 - 1 of them), to
 * `high`, with no carry between the words; 2^11 additions keep `high`
 * within -2^63 .. 2^63 - 2^11 and `low` below 2^43: each fits, and the
 * window's value, low + high 2^32, is below 2^95 in magnitude.  One
 * addition more of the largest would not fit either window: the bounds
 * are tight.  The count of additions since the last flush is kept, and
 * one at the bound flushes before it adds.  A flush adds the window's
 * integer at its bit of the exact accumulator (base + 924 for float32,
 * base - 1 for float64) with cr_kulisch_add_limbs, exactly, and zeroes
 * it; the base moves only when the window is empty, so no bit of it is
 * ever shifted.  Every finite nonzero element is added, in the window;
 * zeros add nothing.  The base stays within 1 .. emax - 31 (emax = 254
 * or 2046, the largest finite biased exponent), so the span never holds
 * exponent 0 (zeros, subnormals: no leading one) nor the all-ones one
 * (inf, NaN): the common path, which ORs in the leading one and never
 * looks for specials, takes only finite normal elements.
 *
 * The common path: its exponent in the span and the count below its
 * bound.  nvcc (sm_90) makes it 15 integer instructions for float32: the
 * exponent 2 (a shift and a mask), d 1, the two tests and the branch 3,
 * the significand with its leading one and its sign 4, the 64-bit shift
 * 2, the 64-bit add 2, the count 1; and 20 for float64: the same with
 * the significand 6, the shift 3 and the adds 4 (docs/exact.md says how
 * it was counted).  Issue 44's budget at 3 TB/s is about 22 and 43.
 *
 * The rare path, any other element: NaN and infinities to cr_specials,
 * as kulisch.h does; zeros leave at once (no flush, no re-basing); a
 * window at its count's bound is flushed and keeps its base; an element
 * outside the span flushes the window and re-bases it around the element
 * (a subnormal is an element of exponent 1 with no leading one).  Re-basing
 * rather than adding such an element straight into the exact accumulator:
 * both cost about one accumulator addition, but only re-basing mends a
 * window that its first element put in the wrong place (a huge first
 * element, then small ones: every later one would miss), and typical data
 * (values within a few orders of magnitude) re-bases a few times a
 * thread and then never.  Where it goes: an element above the span (or the
 * first) is put 8 exponents below the new span's top, room to grow, the
 * rest of the span below it; one below the span is put at the bottom,
 * so that the span reaches up towards the data it left, which it keeps
 * if that is within 31 exponents.  Data spread far wider than 32
 * exponents (1e-300 .. 1e300) re-bases nearly every element: each costs
 * one flush, about what adding the element to the accumulator costs. */
#ifndef CUDAREDUCE_EXACT_WINDOW_H
#define CUDAREDUCE_EXACT_WINDOW_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exact/kulisch.h"

/* The exponents a window takes: 2^d, d < 32, is a 32-bit power of two. */
#define CR_WINDOW_SPAN 32
/* Exponents left above an element the window is re-based up to. */
#define CR_WINDOW_ROOM 8
/* Additions between flushes, and the largest finite biased exponents. */
#define CR_WINDOW32_ADDS 256
#define CR_WINDOW64_ADDS 2048
#define CR_WINDOW32_EMAX 254
#define CR_WINDOW64_EMAX 2046
/* The exact accumulator's bit of a window's bit 0, less its base. */
#define CR_WINDOW32_AT (CR_KULISCH_SCALE - 150)
#define CR_WINDOW64_AT (CR_KULISCH_SCALE - 1075)

/* The bounds of the header comment, and that they are tight.  Float32:
 * the bound times the largest element, (2^24 - 1) 2^31, is at most
 * 2^63 - 1, that is the bound times 2^24 - 1 is below 2^32.  Float64:
 * the bound times 2^52 (the largest part an element adds to `high`) is
 * at most 2^63. */
typedef char cr_window32_fits[UINT32_MAX / CR_WINDOW32_ADDS >= (1 << 24) - 1
                              && UINT32_MAX / (CR_WINDOW32_ADDS + 1)
                                 < (1 << 24) - 1 ? 1 : -1];
typedef char cr_window64_fits[CR_WINDOW64_ADDS == 1 << (63 - 52) ? 1 : -1];

typedef struct {
    uint64_t sum;       /* two's complement */
    int32_t base;
    uint32_t count;     /* additions since the last flush */
} cr_window32;

/* The value is low + high 2^32 window units (carry-save: see above). */
typedef struct {
    uint64_t low;       /* unsigned */
    uint64_t high;      /* two's complement */
    int32_t base;
    uint32_t count;
} cr_window64;

/* An empty window at `base`: no addition in it. */
CR_HD static inline void
cr_window32_empty(cr_window32 *w, int32_t base)
{
    w->sum = 0;
    w->base = base;
    w->count = 0;
}

CR_HD static inline void
cr_window64_empty(cr_window64 *w, int32_t base)
{
    w->low = w->high = 0;
    w->base = base;
    w->count = 0;
}

/* A window no element is in: the first re-bases it, as one above. */
CR_HD static inline void
cr_window32_clear(cr_window32 *w)
{
    cr_window32_empty(w, -CR_WINDOW_SPAN);
}

CR_HD static inline void
cr_window64_clear(cr_window64 *w)
{
    cr_window64_empty(w, -CR_WINDOW_SPAN);
}

/* The rare path's decision for a finite nonzero element of exponent e
 * (1 .. emax; 1 for a subnormal): whether the window must be flushed
 * before it is added, at the count's bound (full) or because e is
 * outside the span; then *base becomes the new base (the caller flushes
 * at the old one first): e ends CR_WINDOW_ROOM exponents below the top
 * if it is above the old span, at the bottom if it is below, the base
 * within 1 .. emax - 31 either way, which keeps e inside. */
CR_HD static inline int
cr_window_must_flush(int32_t e, int32_t *base, int full, int32_t emax)
{
    if ((uint32_t)(e - *base) < CR_WINDOW_SPAN) {
        return full;
    }
    const int32_t at = e < *base
                       ? e : e - (CR_WINDOW_SPAN - 1 - CR_WINDOW_ROOM);
    const int32_t top = emax - (CR_WINDOW_SPAN - 1);
    *base = at < 1 ? 1 : at > top ? top : at;
    return 1;
}

/* Adds the element of significand m (0 < m < 2^24) at offset d (< 32),
 * negative where mask (its sign bit, spread) is all ones: m negated, as
 * 32 bits, then shifted as 64; the negated m is nonzero, so mask is its
 * sign extension. */
CR_HD static inline void
cr_window32_put(cr_window32 *w, uint32_t m, uint32_t d, uint32_t mask)
{
    const uint32_t signed_m = (m ^ mask) - mask;
    w->sum += ((uint64_t)mask << 32 | signed_m) << d;
    w->count++;
}

/* The same for float64 (0 < m < 2^53): m negated as 64 bits, then
 * shifted as 96 (three 32-bit pieces: the low one into `low`, the two
 * above, the shifted value floored to a multiple of 2^32, into `high`). */
CR_HD static inline void
cr_window64_put(cr_window64 *w, uint64_t m, uint32_t d, uint32_t mask)
{
    const uint64_t mask64 = (uint64_t)mask << 32 | mask;
    const uint64_t signed_m = (m ^ mask64) - mask64;
    const uint32_t middle = (uint32_t)((signed_m << d) >> 32);
    const uint32_t top = (uint32_t)(((uint64_t)mask << 32
                                     | signed_m >> 32) << d >> 32);
    w->low += (uint32_t)signed_m << d;
    w->high += (uint64_t)top << 32 | middle;
    w->count++;
}

/* The common path by the float units, the kernels' form of put
 * (kernels/exact.cuh), for an element x of the span (finite, normal,
 * base <= e <= base + 31): the same integer, m 2^(e - base) window units
 * with x's sign.  Adding (150 - base) to a float32's exponent field (e +
 * 150 - base: 150 .. 181, a normal float, the sign untouched) makes the
 * float of that integer, below 2^55, which converts to 64 bits exactly:
 * an add and a convert where the shifts take 8 integer instructions. */
CR_HD static inline int64_t
cr_window32_units(const cr_window32 *w, float x)
{
    uint32_t bits;
    float scaled;
    memcpy(&bits, &x, sizeof(bits));
    bits += (uint32_t)(150 - w->base) << 23;
    memcpy(&scaled, &bits, sizeof(scaled));
    return (int64_t)scaled;
}

/* Float64's: V = m 2^(e - base) window units, below 2^84, in the
 * window's two words, *high = floor(V / 2^32) and *low the rest (0 ..
 * 2^32 - 1), as cr_window64_put splits it.  Adding (1043 - base) to the
 * exponent field (e + 1043 - base: 1043 .. 1074) makes the double t = V
 * / 2^32; floor(t) is the high part (below 2^52: exact as an integer),
 * and (t - floor(t)) 2^32 the low part (exact: t has at most 32 bits
 * below its point, and the rest is a fraction times a power of two). */
CR_HD static inline void
cr_window64_units(const cr_window64 *w, double x, uint64_t *low,
                  int64_t *high)
{
    uint64_t bits;
    double t;
    memcpy(&bits, &x, sizeof(bits));
    bits += (uint64_t)(1043 - w->base) << 52;
    memcpy(&t, &bits, sizeof(t));
    const double whole = floor(t);
    *high = (int64_t)whole;
    *low = (uint32_t)((t - whole) * 4294967296.0);
}

/* The window's integer as 32-bit limbs (least significant first, two's
 * complement, the sign bit 31 of the last), and the exact accumulator's
 * bit of its bit 0: what a flush adds (cr_kulisch_add_limbs here, the
 * GPU's carry-save limbs in kernels/exact.cuh). */
CR_HD static inline int
cr_window32_limbs(const cr_window32 *w, uint32_t value[2])
{
    value[0] = (uint32_t)w->sum;
    value[1] = (uint32_t)(w->sum >> 32);
    return w->base + CR_WINDOW32_AT;
}

CR_HD static inline int
cr_window64_limbs(const cr_window64 *w, uint32_t value[3])
{
    /* low + high 2^32, below 2^95 in magnitude: its floor over 2^32 is
     * high plus low's carries, which fits 64 bits signed. */
    const uint64_t above = w->high + (w->low >> 32);
    value[0] = (uint32_t)w->low;
    value[1] = (uint32_t)above;
    value[2] = (uint32_t)(above >> 32);
    return w->base + CR_WINDOW64_AT;
}

/* Adds the window into acc and zeroes it; the base stays. */
CR_HD static inline void
cr_window32_flush(cr_window32 *w, cr_kulisch *acc)
{
    if (w->count) {
        uint32_t value[2];
        const int at = cr_window32_limbs(w, value);
        cr_kulisch_add_limbs(acc, at, value, 2);
        cr_window32_empty(w, w->base);
    }
}

CR_HD static inline void
cr_window64_flush(cr_window64 *w, cr_kulisch *acc)
{
    if (w->count) {
        uint32_t value[3];
        const int at = cr_window64_limbs(w, value);
        cr_kulisch_add_limbs(acc, at, value, 3);
        cr_window64_empty(w, w->base);
    }
}

/* Any element the common path leaves (the header comment's rare path):
 * NaN and infinities noted, zeros left, the rest added.  Where the window
 * must be flushed first, it is evicted: its additions are copied to
 * *evicted, to be flushed by the caller wherever its sums go, and the
 * window, emptied and re-based, takes x; the return is then 1 (0 where
 * nothing was evicted: a window of no addition is only re-based). */
CR_HD static inline int
cr_window32_add_rare(cr_window32 *w, cr_specials *specials, float x,
                     cr_window32 *evicted)
{
    if (!cr_specials_note(specials, (double)x) || x == 0) {
        return 0;
    }
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const int32_t field = (int32_t)(bits >> 23 & 0xff);
    const int32_t e = field ? field : 1;
    int32_t base = w->base;
    int evict = 0;
    if (cr_window_must_flush(e, &base, w->count == CR_WINDOW32_ADDS,
                             CR_WINDOW32_EMAX)) {
        evict = w->count != 0;
        *evicted = *w;
        cr_window32_empty(w, base);
    }
    cr_window32_put(w, (bits & 0x7fffff) | (uint32_t)(field != 0) << 23,
                    (uint32_t)(e - base), (uint32_t)((int32_t)bits >> 31));
    return evict;
}

CR_HD static inline int
cr_window64_add_rare(cr_window64 *w, cr_specials *specials, double x,
                     cr_window64 *evicted)
{
    if (!cr_specials_note(specials, x) || x == 0) {
        return 0;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const int32_t field = (int32_t)(bits >> 52 & 0x7ff);
    const int32_t e = field ? field : 1;
    int32_t base = w->base;
    int evict = 0;
    if (cr_window_must_flush(e, &base, w->count == CR_WINDOW64_ADDS,
                             CR_WINDOW64_EMAX)) {
        evict = w->count != 0;
        *evicted = *w;
        cr_window64_empty(w, base);
    }
    cr_window64_put(w, (bits & ((UINT64_C(1) << 52) - 1))
                       | (uint64_t)(field != 0) << 52,
                    (uint32_t)(e - base), (uint32_t)((int64_t)bits >> 63));
    return evict;
}

/* Adds x: the common path inline, the rest through the rare path, which
 * may evict the window into *evicted (returns 1 then: see above).  The
 * specials are touched only there. */
CR_HD static inline int
cr_window32_add_evicting(cr_window32 *w, cr_specials *specials, float x,
                         cr_window32 *evicted)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const uint32_t d = (bits >> 23 & 0xff) - (uint32_t)w->base;
    if (d < CR_WINDOW_SPAN && w->count < CR_WINDOW32_ADDS) {
        cr_window32_put(w, (bits & 0x7fffff) | 0x800000, d,
                        (uint32_t)((int32_t)bits >> 31));
        return 0;
    }
    return cr_window32_add_rare(w, specials, x, evicted);
}

CR_HD static inline int
cr_window64_add_evicting(cr_window64 *w, cr_specials *specials, double x,
                         cr_window64 *evicted)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const uint32_t high = (uint32_t)(bits >> 32);
    const uint32_t d = (high >> 20 & 0x7ff) - (uint32_t)w->base;
    if (d < CR_WINDOW_SPAN && w->count < CR_WINDOW64_ADDS) {
        cr_window64_put(w, (bits & ((UINT64_C(1) << 52) - 1))
                           | UINT64_C(1) << 52,
                        d, (uint32_t)((int32_t)high >> 31));
        return 0;
    }
    return cr_window64_add_rare(w, specials, x, evicted);
}

/* Adds x, flushing what it evicts into acc: the window of a thread that
 * has an exact accumulator of its own (the tests' C program). */
CR_HD static inline void
cr_window32_add(cr_window32 *w, cr_kulisch *acc, cr_specials *specials,
                float x)
{
    cr_window32 evicted;
    cr_window32_clear(&evicted);
    if (cr_window32_add_evicting(w, specials, x, &evicted)) {
        cr_window32_flush(&evicted, acc);
    }
}

CR_HD static inline void
cr_window64_add(cr_window64 *w, cr_kulisch *acc, cr_specials *specials,
                double x)
{
    cr_window64 evicted;
    cr_window64_clear(&evicted);
    if (cr_window64_add_evicting(w, specials, x, &evicted)) {
        cr_window64_flush(&evicted, acc);
    }
}

#endif /* CUDAREDUCE_EXACT_WINDOW_H */
