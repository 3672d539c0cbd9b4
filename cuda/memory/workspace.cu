/* workspace.cu: a free list of fast-method workspaces, per device, behind a
 * mutex.  A workspace is checked out for one call (which waits for the
 * kernel's result words, written after the kernel's last use of the
 * workspace, before checking it back in), so concurrent calls never share
 * one, and a steady caller allocates nothing. */
#include <cstdlib>
#include <cstring>

#include "tuning.h"
#include "memory/workspace.cuh"

void
cr_workspace_destroy(cr_workspace *workspace)
{
    if (workspace->slots != NULL) {
        (void)cudaFree(workspace->slots);
    }
    if (workspace->result_host != NULL) {
        (void)cudaFreeHost(workspace->result_host);
    }
    free(workspace);
}

cr_status
cr_workspace_fill(cr_workspace *workspace, cr_error *error)
{
    cr_status status = CR_OK;
    int sm_count = 0;
    /* A slot per block of the largest grid plan.c gives fast. */
    size_t slot_bytes = 0;
    CR_CHECK(cudaDeviceGetAttribute(&sm_count,
                                    cudaDevAttrMultiProcessorCount,
                                    workspace->device));
    slot_bytes = (size_t)sm_count * CR_MAX_BLOCKS_PER_SM
                 * CR_FLAGGED_BYTES(CR_MAX_ACCUMULATOR_BYTES);
    CR_CHECK(cudaMalloc(&workspace->slots,
                        slot_bytes + sizeof(unsigned int)));
    workspace->tickets = reinterpret_cast<unsigned int *>(
        static_cast<char *>(workspace->slots) + slot_bytes);
    CR_CHECK(cudaMemset(workspace->slots, 0,
                        slot_bytes + sizeof(unsigned int)));
    /* The memset runs on the legacy stream; a caller's non-blocking
     * stream would not wait for it. */
    CR_CHECK(cudaStreamSynchronize(0));
    CR_CHECK(cudaHostAlloc((void **)&workspace->result_host,
                           CR_FLAGGED_BYTES(CR_MAX_ACCUMULATOR_BYTES),
                           cudaHostAllocMapped));
    memset(workspace->result_host, 0,
           CR_FLAGGED_BYTES(CR_MAX_ACCUMULATOR_BYTES));
    CR_CHECK(cudaHostGetDevicePointer((void **)&workspace->result_device,
                                      workspace->result_host, 0));
done:
    return status;
}

decltype(cr_workspaces) cr_workspaces;
