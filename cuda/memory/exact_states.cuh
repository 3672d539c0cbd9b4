/* exact_states.cuh: exact sums' states (kernels/exact.cuh), kept between
 * calls, so that a call neither allocates nor zeroes one: the rounding
 * kernel leaves the state zero for the next call (exact_sum.cu).
 *
 * A state is the next call's once this one's use of it is over on the
 * GPU, whatever stream either runs on: the call that checks one out makes
 * its stream wait for `released`, recorded after the last call's last
 * use.  A call looks first for the one its own stream last used, whose
 * wait is then stream order already, so that calls on several streams do
 * not wait for each other's kernels. */
#ifndef CUDAREDUCE_EXACT_STATES_CUH
#define CUDAREDUCE_EXACT_STATES_CUH

#include "cudareduce.h"
#include "memory/kept_list.cuh"

/* The kept states of a device past which a call on a stream that has
 * none takes another stream's (and waits for it) rather than a new one:
 * a bound for a process that makes streams without end. */
#define CR_EXACT_KEPT_STATES 16

/* One kept state: its scratch (the state zero once the work before
 * `released` is done), the event recorded after its last use, and that
 * use's stream. */
typedef struct cr_exact_kept {
    struct cr_exact_kept *next;
    int device;
    void *scratch;      /* CR_EXACT_SCRATCH_BYTES (exact/state.h) */
    cudaEvent_t released;
    cudaStream_t stream;
} cr_exact_kept;

/* The kept states (kept_list.cuh): one whose last use failed (its limbs
 * may hold part of a sum) is destroyed instead. */
CR_DECLARE_KEPT_LIST(cr_exact_kept, cr_exact_kept, cr_exact_states)

#endif /* CUDAREDUCE_EXACT_STATES_CUH */
