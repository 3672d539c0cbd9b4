/* state.h: an exact sum's state (issue 44): the call's carry-save limbs,
 * the specials seen and the NaNs skipped, which kernels/exact.cuh's
 * kernels add into, memory/exact_states.cuh keeps between calls, and
 * cr_exact_round rounds, on the device (exact_round_kernel) or, for the
 * states of several devices summed, on the host (exact_sum.cu).  Plain
 * C, as kulisch.h: every function __host__ __device__ under CUDA. */
#ifndef CUDAREDUCE_EXACT_STATE_H
#define CUDAREDUCE_EXACT_STATE_H

#include <stdint.h>
#include <string.h>

#include "exact/kulisch.h"

/* The specials as bits of one word, OR-ed across the call. */
#define CR_EXACT_NAN 1u
#define CR_EXACT_POS_INF 2u
#define CR_EXACT_NEG_INF 4u

/* The call's state in global memory: zero before its first launch, and
 * left zero by its rounding (kernels/exact.cuh's exact_round_kernel) or
 * by its copy to the host (cr_exact_take). */
typedef struct {
    unsigned long long limb[CR_KULISCH_LIMBS];
    unsigned int specials;
    unsigned int padding;
    unsigned long long nans;        /* NaNs seen (nanmean's count) */
} cr_exact_state;

/* A call's scratch: its state, then its result for the host (nanmean's
 * count, then the value). */
#define CR_EXACT_STATE_BYTES ((sizeof(cr_exact_state) + 15) / 16 * 16)
#define CR_EXACT_SCRATCH_BYTES (CR_EXACT_STATE_BYTES + 2 * sizeof(int64_t))

/* How the call's sum is rounded, and where it goes: the exact sum of its
 * n elements rounded once to `format`, or with `divide` the sum over
 * their count (n less the NaNs skipped) rounded once (a count of 0 gives
 * NaN, as numpy.nanmean of nothing); its bits (2, 4 or 8 bytes) at
 * `value`, and the count, as an int64, at `count` where not NULL. */
typedef struct {
    cr_exact_format format;
    int divide;
    int64_t n;
    int64_t *count;
    unsigned char *value;
} cr_exact_rounding;

/* The call's limbs, normalized, as an exact accumulator. */
CR_HD static inline void
cr_exact_limbs_to_kulisch(const unsigned long long *limbs, cr_kulisch *acc)
{
    long long carry = 0;
    for (int k = 0; k < CR_KULISCH_LIMBS; k++) {
        const long long t = (long long)limbs[k] + carry;
        acc->limb[k] = (uint32_t)t;
        carry = t >> 32;
    }
}

/* The call's sum, from its limbs and the specials (CR_EXACT_* bits) and
 * NaNs seen, rounded as `rounding` says, and stored there.  One thread. */
CR_HD static inline void
cr_exact_round(const unsigned long long *limbs, unsigned int seen,
               unsigned long long nans, cr_exact_rounding rounding)
{
    cr_kulisch acc;
    cr_specials specials;
    int overflow = 0;
    uint64_t bits;
    const uint64_t count = (uint64_t)rounding.n - nans;
    cr_exact_limbs_to_kulisch(limbs, &acc);
    specials.nan = (seen & CR_EXACT_NAN) != 0;
    specials.pos_inf = (seen & CR_EXACT_POS_INF) != 0;
    specials.neg_inf = (seen & CR_EXACT_NEG_INF) != 0;
    if (rounding.divide) {
        specials.nan |= count == 0;
        bits = cr_exact_mean_result(&acc, &specials, count, rounding.format,
                                    &overflow);
    }
    else {
        bits = cr_exact_result(&acc, &specials, rounding.format, &overflow);
    }
    if (rounding.count != NULL) {
        *rounding.count = (int64_t)count;
    }
    if (rounding.format == CR_EXACT_FLOAT64) {
        memcpy(rounding.value, &bits, sizeof(uint64_t));
    }
    else if (rounding.format == CR_EXACT_FLOAT32) {
        const uint32_t narrow = (uint32_t)bits;
        memcpy(rounding.value, &narrow, sizeof(narrow));
    }
    else {
        const uint16_t narrow = (uint16_t)bits;
        memcpy(rounding.value, &narrow, sizeof(narrow));
    }
}

#endif /* CUDAREDUCE_EXACT_STATE_H */
