/* workspace.cuh: the fast method's scratch, kept between calls. */
#ifndef CUDAREDUCE_WORKSPACE_CUH
#define CUDAREDUCE_WORKSPACE_CUH

#include "cudareduce.h"

/* One call's scratch on one device: block partials, the arrival counter
 * (zero whenever the workspace is not checked out) and a pinned, mapped
 * host slot that the kernel writes the result to, so that no copy is
 * queued after it. */
typedef struct cr_workspace {
    struct cr_workspace *next;
    int device;
    void *partials;             /* device */
    unsigned int *counter;      /* device, after the partials */
    void *result_host;          /* pinned */
    void *result_device;        /* the same slot, as the kernel sees it */
} cr_workspace;

/* Checks out a workspace of the current device (a cached one, else a new
 * one), for one call at a time: calls on several threads get their own. */
cr_status cr_workspace_acquire(cr_workspace **workspace, cr_error *error);

/* Checks it back in; one whose last use failed (its counter may be left
 * non-zero) is freed instead. */
void cr_workspace_release(cr_workspace *workspace, int healthy);

/* Frees every kept workspace (module teardown). */
void cr_workspace_release_all(void);

#endif /* CUDAREDUCE_WORKSPACE_CUH */
