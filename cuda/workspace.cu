/* workspace.cu: a free list of fast-method workspaces, per device, behind a
 * mutex.  A workspace is checked out for one call (which synchronizes its
 * stream before checking it back in), so concurrent calls never share
 * one, and a steady caller allocates nothing. */
#include <cstdlib>

#include "check.cuh"
#include "kept_list.cuh"
#include "tuning.h"
#include "workspace.cuh"

static kept_list<cr_workspace> kept_workspaces;

static void
destroy(cr_workspace *workspace)
{
    if (workspace->partials != NULL) {
        (void)cudaFree(workspace->partials);
    }
    if (workspace->result_host != NULL) {
        (void)cudaFreeHost(workspace->result_host);
    }
    free(workspace);
}

static cr_status
create(int device, cr_workspace **out, cr_error *error)
{
    cr_status status = CR_OK;
    int sm_count = 0;
    cr_workspace *workspace =
        static_cast<cr_workspace *>(calloc(1, sizeof(cr_workspace)));
    if (workspace == NULL) {
        return cr_fail(error, CR_ERR_NO_MEMORY,
                       "out of host memory for a workspace");
    }
    workspace->device = device;
    CR_CHECK(cudaDeviceGetAttribute(&sm_count,
                                    cudaDevAttrMultiProcessorCount, device));
    {
        /* A partial per block of the largest grid plan.c gives fast. */
        const size_t partial_bytes = (size_t)sm_count * CR_MAX_BLOCKS_PER_SM
                                     * CR_MAX_ACCUMULATOR_BYTES;
        CR_CHECK(cudaMalloc(&workspace->partials,
                            partial_bytes + sizeof(unsigned int)));
        workspace->counter = reinterpret_cast<unsigned int *>(
            static_cast<char *>(workspace->partials) + partial_bytes);
        CR_CHECK(cudaMemset(workspace->counter, 0, sizeof(unsigned int)));
        /* The memset runs on the legacy stream; a caller's non-blocking
         * stream would not wait for it. */
        CR_CHECK(cudaStreamSynchronize(0));
    }
    CR_CHECK(cudaHostAlloc(&workspace->result_host, CR_MAX_ACCUMULATOR_BYTES,
                           cudaHostAllocMapped));
    CR_CHECK(cudaHostGetDevicePointer(&workspace->result_device,
                                      workspace->result_host, 0));
done:
    if (status == CR_OK) {
        *out = workspace;
    }
    else {
        destroy(workspace);
    }
    return status;
}

cr_status
cr_workspace_acquire(cr_workspace **workspace, cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    CR_CHECK(cudaGetDevice(&device));
    if ((*workspace = kept_workspaces.take(device)) != NULL) {
        return CR_OK;
    }
    status = create(device, workspace, error);
done:
    return status;
}

void
cr_workspace_release(cr_workspace *workspace, int healthy)
{
    if (!healthy) {
        destroy(workspace);
        return;
    }
    kept_workspaces.put(workspace);
}

void
cr_workspace_release_all(void)
{
    kept_workspaces.clear(destroy);
}
