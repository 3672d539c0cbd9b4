/* exact_states.cu: the kept states of exact sums (exact_states.cuh). */
#include <cstdlib>

#include "exact/state.h"
#include "memory/exact_states.cuh"

void
cr_exact_kept_destroy(cr_exact_kept *kept)
{
    if (kept->scratch != NULL) {
        (void)cudaFree(kept->scratch);
    }
    if (kept->released != NULL) {
        (void)cudaEventDestroy(kept->released);
    }
    free(kept);
}

cr_status
cr_exact_kept_fill(cr_exact_kept *kept, cr_error *error)
{
    cr_status status = CR_OK;
    CR_CHECK(cudaMalloc(&kept->scratch, CR_EXACT_SCRATCH_BYTES));
    CR_CHECK(cudaMemset(kept->scratch, 0, sizeof(cr_exact_state)));
    /* The memset runs on the legacy stream; a caller's non-blocking
     * stream would not wait for it. */
    CR_CHECK(cudaStreamSynchronize(0));
    CR_CHECK(cudaEventCreateWithFlags(&kept->released,
                                      cudaEventDisableTiming));
done:
    return status;
}

decltype(cr_exact_states) cr_exact_states;
