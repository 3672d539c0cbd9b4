/* kulisch.h: an exact accumulator of float64 values (issue 44's exact
 * sums) and its one correctly rounded conversion to float64, float32,
 * float16 and bfloat16.  Header-only plain C99; also C++17 and CUDA,
 * where every function is __host__ __device__ (CR_HD).
 *
 * The accumulator (a Kulisch accumulator) is a two's-complement integer
 * whose bit 0 weighs 2^-1074, the least double subnormal: every finite
 * double is an integer there, 53 bits wide at most.  68 limbs of 32 bits,
 * 2176 bits (272 bytes), weigh 2^-1074 .. 2^1100 with the sign at 2^1101:
 * a double is below 2^1024, so any sum of up to 2^77 of them is held
 * exactly (issue 44 asks for 2^62), whatever their order or grouping.
 *
 * Limbs of 32 bits, not 64: a limb plus an addend plus a carry is one
 * int64_t sum whose high half is the next carry (or borrow), with no
 * compares; the GPU's integer units are 32 bits wide, so a 64-bit limb
 * would cost two adds anyway.  The bytes are the same (68 x 4 = 34 x 8).
 *
 * Speed: adding a double touches the 3 limbs its significand spans, and
 * its carry or borrow runs on only until it dies (to the top when the
 * sum changes sign); merging walks all 68 limbs, and so does rounding.
 * This is the flush target of the GPU design (window.h: a per-thread
 * fixed-point window flushed into it now and then by
 * cr_kulisch_add_limbs), not a per-element path.
 *
 * NaN and infinities never enter it: cr_specials notes them, and
 * cr_exact_result gives NumPy's result from both.  -0.0 adds nothing,
 * and an exactly zero sum is +0.0, which is what NumPy's sum gives (its
 * reduction starts from +0.0: np.sum([-0.0, -0.0]) is +0.0 in NumPy 2.4;
 * tests/test_kulisch.py checks that NumPy still does).  A nonzero sum
 * that rounds to zero keeps its sign, as IEEE rounding does.  Float16 and
 * bfloat16 inputs are added as floats (both convert to float exactly);
 * a complex sum is two accumulators, one a part. */
#ifndef CUDAREDUCE_EXACT_KULISCH_H
#define CUDAREDUCE_EXACT_KULISCH_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CR_HD __host__ __device__
#else
#define CR_HD
#endif

#define CR_KULISCH_LIMBS 68
/* Bit 0 of the accumulator weighs 2^-CR_KULISCH_SCALE. */
#define CR_KULISCH_SCALE 1074

/* A sum of 2^62 doubles is below 2^(1024 + 62): its bits and a sign. */
typedef char cr_kulisch_fits[32 * CR_KULISCH_LIMBS
                             >= CR_KULISCH_SCALE + 1024 + 62 + 1 ? 1 : -1];

typedef struct {
    uint32_t limb[CR_KULISCH_LIMBS];    /* least significant first */
} cr_kulisch;

/* The values an accumulator leaves out: whether each was seen. */
typedef struct {
    unsigned char nan, pos_inf, neg_inf;
} cr_specials;

/* The result formats, rounded to by their bits (float16 and bfloat16
 * have no C type). */
typedef enum {
    CR_EXACT_FLOAT64,
    CR_EXACT_FLOAT32,
    CR_EXACT_FLOAT16,
    CR_EXACT_BFLOAT16
} cr_exact_format;

/* A format's significand bits, its leading one included. */
CR_HD static inline int
cr_exact_precision(cr_exact_format format)
{
    return format == CR_EXACT_FLOAT64   ? 53
           : format == CR_EXACT_FLOAT32 ? 24
           : format == CR_EXACT_FLOAT16 ? 11
                                        : 8;
}

CR_HD static inline int
cr_exact_exponent_bits(cr_exact_format format)
{
    return format == CR_EXACT_FLOAT64 ? 11
           : format == CR_EXACT_FLOAT16 ? 5 : 8;
}

/* The bits of +infinity in `format`. */
CR_HD static inline uint64_t
cr_exact_infinity(cr_exact_format format)
{
    const int w = cr_exact_exponent_bits(format);
    return (uint64_t)((1 << w) - 1) << (cr_exact_precision(format) - 1);
}

CR_HD static inline void
cr_kulisch_clear(cr_kulisch *acc)
{
    for (int i = 0; i < CR_KULISCH_LIMBS; i++) {
        acc->limb[i] = 0;
    }
}

/* Adds amount * 2^(32 i), |amount| < 2^62: its low 32 bits into limb i,
 * the rest (a borrow where negative) into the limbs above until nothing
 * is left.  What would carry out of the top limb falls off, as two's
 * complement wants.  (The shift of a negative int64_t is arithmetic in
 * every compiler this builds with, and in C++20: it floors.) */
CR_HD static inline void
cr_kulisch_add_at(cr_kulisch *acc, int i, int64_t amount)
{
    for (; amount != 0 && i < CR_KULISCH_LIMBS; i++) {
        const int64_t t = (int64_t)acc->limb[i] + amount;
        acc->limb[i] = (uint32_t)t;
        amount = t >> 32;
    }
}

/* Adds a finite double exactly: x is significand * 2^(at - 1074), its
 * significand's bit 0 the accumulator's bit `at`. */
CR_HD static inline void
cr_kulisch_add_double(cr_kulisch *acc, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const int biased = (int)(bits >> 52) & 0x7ff;
    const uint64_t significand = (bits & ((UINT64_C(1) << 52) - 1))
                                 | (uint64_t)(biased != 0) << 52;
    const int at = biased ? biased - 1 : 0, shift = at % 32;
    /* Its low 32 bits shifted (limbs at / 32 and one above), then the
     * high part of that and the high 21 bits shifted (below 2^53). */
    const uint64_t low = (significand & 0xffffffffu) << shift;
    const int64_t first = (int64_t)(low & 0xffffffffu);
    const int64_t rest = (int64_t)((low >> 32) + ((significand >> 32)
                                                  << shift));
    const int negative = (int)(bits >> 63);
    cr_kulisch_add_at(acc, at / 32, negative ? -first : first);
    cr_kulisch_add_at(acc, at / 32 + 1, negative ? -rest : rest);
}

/* Adds value * 2^at, value the two's-complement integer of the n 32-bit
 * limbs value[0 .. n) (least significant first, the sign bit 31 of the
 * last): the flush of a fixed-point window (window.h).  Shifted by
 * at % 32, value is n + 1 limbs (a signed 32 n-bit integer times 2^31 at
 * most fits), added from limb at / 32 with their carry; above them the
 * shifted value's sign extension (all ones, or none) and the last carry
 * together add carry - 1, or carry: one limb's amount, whose carry or
 * borrow add_at runs on.  What lies above the top limb falls off, as two's
 * complement wants. */
CR_HD static inline void
cr_kulisch_add_limbs(cr_kulisch *acc, int at, const uint32_t *value, int n)
{
    const int i = at / 32, shift = at % 32;
    const uint32_t sign = (uint32_t)((int32_t)value[n - 1] >> 31);
    uint32_t below = 0;
    uint64_t carry = 0;

    for (int j = 0; j <= n && i + j < CR_KULISCH_LIMBS; j++) {
        const uint32_t word = j < n ? value[j] : sign;
        const uint32_t shifted = shift ? word << shift
                                         | below >> (32 - shift)
                                       : word;
        const uint64_t t = (uint64_t)acc->limb[i + j] + shifted + carry;
        acc->limb[i + j] = (uint32_t)t;
        carry = t >> 32;
        below = word;
    }
    cr_kulisch_add_at(acc, i + n + 1, (int64_t)carry - (int64_t)(sign & 1));
}

/* Adds a finite float exactly (a float converts to double exactly). */
CR_HD static inline void
cr_kulisch_add_float(cr_kulisch *acc, float x)
{
    cr_kulisch_add_double(acc, (double)x);
}

/* acc += other.  other may be acc itself (which doubles it). */
CR_HD static inline void
cr_kulisch_merge(cr_kulisch *acc, const cr_kulisch *other)
{
    uint64_t carry = 0;
    for (int i = 0; i < CR_KULISCH_LIMBS; i++) {
        const uint64_t t = (uint64_t)acc->limb[i] + other->limb[i] + carry;
        acc->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
}

CR_HD static inline int
cr_kulisch_is_zero(const cr_kulisch *acc)
{
    uint32_t any = 0;
    for (int i = 0; i < CR_KULISCH_LIMBS; i++) {
        any |= acc->limb[i];
    }
    return any == 0;
}

/* acc = -acc: every bit inverted, then one added. */
CR_HD static inline void
cr_kulisch_negate(cr_kulisch *acc)
{
    for (int i = 0; i < CR_KULISCH_LIMBS; i++) {
        acc->limb[i] = ~acc->limb[i];
    }
    cr_kulisch_add_at(acc, 0, 1);
}

/* Limb i, or 0 above the top. */
CR_HD static inline uint64_t
cr_kulisch_limb(const cr_kulisch *acc, int i)
{
    return i < CR_KULISCH_LIMBS ? acc->limb[i] : 0;
}

/* Whether any bit below bit `at` is set. */
CR_HD static inline int
cr_kulisch_any_below(const cr_kulisch *acc, int at)
{
    uint32_t any = acc->limb[at / 32] & (((uint32_t)1 << (at % 32)) - 1);
    for (int i = 0; i < at / 32; i++) {
        any |= acc->limb[i];
    }
    return any != 0;
}

/* The bits of `format` nearest m + f, m the magnitude in the
 * accumulator (not negative) and f a fraction of its bit 0 (0 <= f < 1:
 * `half` whether f >= 1/2, `sticky` whether f is neither 0 nor 1/2; a
 * sum has none, a mean the remainder of its division), with the sign of
 * `negative`, ties to even, rounded once from the exact value (rounding
 * to double first, then to float, rounds twice: wrong next to a float's
 * ties).  The leading one is found; the result's last place is
 * `precision` bits down from there, or the format's least subnormal where
 * that is higher; the guard bit below it and the sticky OR of all below
 * that decide.  Beyond the format's largest finite value after rounding:
 * infinity, *overflow 1 (else 0).  Zero is +0.0; a nonzero value that
 * rounds to zero keeps its sign. */
CR_HD static inline uint64_t
cr_kulisch_round_magnitude(const cr_kulisch *m, int negative, int half,
                           int sticky, cr_exact_format format,
                           int *overflow)
{
    const int p = cr_exact_precision(format);
    const int w = cr_exact_exponent_bits(format);
    const int bias = (1 << (w - 1)) - 1;
    const uint64_t sign = (uint64_t)negative << (p - 1 + w);
    int i = CR_KULISCH_LIMBS - 1;
    int e = -CR_KULISCH_SCALE - 1;

    *overflow = 0;
    while (i >= 0 && m->limb[i] == 0) {
        i--;
    }
    if (i < 0 && !half && !sticky) {
        return 0;
    }
    if (i >= 0) {
        int top = 32 * i + 31;
        while (!(m->limb[i] >> (top % 32) & 1)) {
            top--;
        }
        /* The value is in [2^e, 2^(e + 1)), e = top - 1074 <= 1101. */
        e = top - CR_KULISCH_SCALE;
    }
    /* The result's last place, as a bit of the accumulator: at least 0,
     * as no format here has a subnormal below 2^-1074.  (Below bit 0,
     * the value is below every format's least subnormal: e is taken
     * below them all.) */
    const int last = (e < 1 - bias ? 1 - bias : e) - (p - 1)
                     + CR_KULISCH_SCALE;
    const int shift = last % 32;
    /* The significand: bits last .. top (at most 53, from up to 3
     * limbs; above top all are 0). */
    const uint64_t pair = cr_kulisch_limb(m, last / 32)
                          | cr_kulisch_limb(m, last / 32 + 1) << 32;
    uint64_t significand = pair >> shift
        | (shift ? cr_kulisch_limb(m, last / 32 + 2) << (64 - shift) : 0);
    const int guard = last > 0
        ? (int)(m->limb[(last - 1) / 32] >> ((last - 1) % 32) & 1) : half;
    const int below = last > 0
        ? cr_kulisch_any_below(m, last - 1) || half || sticky : sticky;
    if (guard && ((significand & 1) || below)) {
        significand++;
    }
    /* The exponent field of a normal result is one below its biased
     * exponent, as the significand's leading one adds into it (and a
     * round up to the next power of two adds one more); a subnormal's
     * field is 0, and one rounded up to the least normal adds 1.  Beyond
     * the largest finite value, the field reaches infinity's or more (at
     * most 1101 + 1023 for float64: well inside 64 bits). */
    const uint64_t bits = ((uint64_t)(last - CR_KULISCH_SCALE + p - 1
                                      + bias - 1) << (p - 1))
                          + significand;
    if (bits >= cr_exact_infinity(format)) {
        *overflow = 1;
        return sign | cr_exact_infinity(format);
    }
    return sign | bits;
}

/* The bits of `format` nearest the accumulator's value (see
 * cr_kulisch_round_magnitude). */
CR_HD static inline uint64_t
cr_kulisch_round(const cr_kulisch *acc, cr_exact_format format,
                 int *overflow)
{
    const int negative = (int)(acc->limb[CR_KULISCH_LIMBS - 1] >> 31);
    cr_kulisch m = *acc;
    if (negative) {
        cr_kulisch_negate(&m);
    }
    return cr_kulisch_round_magnitude(&m, negative, 0, 0, format,
                                      overflow);
}

/* m = m / d, the remainder returned (m not negative, d > 0): long
 * division a limb at a time from the top, in 64 bits where d is below
 * 2^32 (the remainder and a limb then fit), else in 128. */
CR_HD static inline uint64_t
cr_kulisch_divide(cr_kulisch *m, uint64_t d)
{
    uint64_t remainder = 0;
    for (int i = CR_KULISCH_LIMBS - 1; i >= 0; i--) {
        if (d <= UINT32_MAX) {
            const uint64_t t = remainder << 32 | m->limb[i];
            m->limb[i] = (uint32_t)(t / d);
            remainder = t % d;
        }
        else {
            __extension__ typedef unsigned __int128 cr_u128;
            const cr_u128 t = (cr_u128)remainder << 32 | m->limb[i];
            m->limb[i] = (uint32_t)(t / d);
            remainder = (uint64_t)(t % d);
        }
    }
    return remainder;
}

/* The bits of `format` nearest the accumulator's value divided by
 * `count` (> 0), rounded once: the quotient's magnitude, and its
 * remainder as the fraction below bit 0. */
CR_HD static inline uint64_t
cr_kulisch_round_quotient(const cr_kulisch *acc, uint64_t count,
                          cr_exact_format format, int *overflow)
{
    const int negative = (int)(acc->limb[CR_KULISCH_LIMBS - 1] >> 31);
    cr_kulisch m = *acc;
    if (negative) {
        cr_kulisch_negate(&m);
    }
    const uint64_t r = cr_kulisch_divide(&m, count);
    /* f = r / count: at least 1/2 where r >= count - r. */
    const int half = r != 0 && r >= count - r;
    const int sticky = r != 0 && r != count - r;
    return cr_kulisch_round_magnitude(&m, negative, half, sticky, format,
                                      overflow);
}

CR_HD static inline void
cr_specials_clear(cr_specials *specials)
{
    specials->nan = specials->pos_inf = specials->neg_inf = 0;
}

/* Notes x if it is NaN or infinite and returns 0; returns 1 for a finite
 * x, which the caller adds to its accumulator. */
CR_HD static inline int
cr_specials_note(cr_specials *specials, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    if ((bits >> 52 & 0x7ff) != 0x7ff) {
        return 1;
    }
    if (bits << 12) {
        specials->nan = 1;
    }
    else if (bits >> 63) {
        specials->neg_inf = 1;
    }
    else {
        specials->pos_inf = 1;
    }
    return 0;
}

CR_HD static inline void
cr_specials_merge(cr_specials *specials, const cr_specials *other)
{
    specials->nan |= other->nan;
    specials->pos_inf |= other->pos_inf;
    specials->neg_inf |= other->neg_inf;
}

/* The sum in `format`, with NumPy's special values: NaN (the quiet one
 * with no sign or payload) where a NaN or both infinities were seen,
 * else the infinity seen, else the accumulator rounded (*overflow as
 * cr_kulisch_round's; 0 for the special values).  An infinity seen
 * wins over any finite sum, which is exact here (NumPy's order can
 * overflow its finite part to the other infinity first: NaN). */
CR_HD static inline uint64_t
cr_exact_result(const cr_kulisch *acc, const cr_specials *specials,
                cr_exact_format format, int *overflow)
{
    const int p = cr_exact_precision(format);
    const uint64_t infinity = cr_exact_infinity(format);

    *overflow = 0;
    if (specials->nan || (specials->pos_inf && specials->neg_inf)) {
        return infinity | (uint64_t)1 << (p - 2);
    }
    if (specials->pos_inf || specials->neg_inf) {
        return infinity | (uint64_t)specials->neg_inf
                          << (p - 1 + cr_exact_exponent_bits(format));
    }
    return cr_kulisch_round(acc, format, overflow);
}

/* The mean in `format`: cr_exact_result's specials (an infinity divided
 * by a count is that infinity), else the exact sum divided by `count`
 * (> 0), rounded once (cr_kulisch_round_quotient). */
CR_HD static inline uint64_t
cr_exact_mean_result(const cr_kulisch *acc, const cr_specials *specials,
                     uint64_t count, cr_exact_format format, int *overflow)
{
    if (specials->nan || specials->pos_inf || specials->neg_inf) {
        return cr_exact_result(acc, specials, format, overflow);
    }
    return cr_kulisch_round_quotient(acc, count, format, overflow);
}

#endif /* CUDAREDUCE_EXACT_KULISCH_H */
