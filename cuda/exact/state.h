/* state.h: an exact sum's state in device memory (issue 44): the call's
 * carry-save limbs, the specials seen and the NaNs skipped, which
 * kernels/exact.cuh's kernels add into and round from, and
 * memory/exact_states.cuh keeps between calls.  Its own header so that
 * the kept states take its size without the kernels. */
#ifndef CUDAREDUCE_EXACT_STATE_H
#define CUDAREDUCE_EXACT_STATE_H

#include <stdint.h>

#include "exact/kulisch.h"

/* The call's state in global memory: zero before its first launch, and
 * left zero by its rounding (kernels/exact.cuh's exact_round_kernel). */
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

#endif /* CUDAREDUCE_EXACT_STATE_H */
