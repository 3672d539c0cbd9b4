/* workspace.cuh: the fast method's scratch, kept between calls. */
#ifndef CUDAREDUCE_WORKSPACE_CUH
#define CUDAREDUCE_WORKSPACE_CUH

#include "cudareduce.h"
#include "kernels/flagged_words.cuh"
#include "memory/kept_list.cuh"
#include "tuning.h"

/* One call's scratch on one device: the blocks' slots and the ticket
 * counter (all zero whenever the workspace is not checked out) and, in
 * pinned, mapped host memory, the flagged words (flagged_words.cuh) that
 * the kernel writes the result to, so that no copy is queued after it,
 * each flagged with `sequence`, the number of its launch, which the host
 * polls. */
typedef struct cr_workspace {
    struct cr_workspace *next;
    int device;
    void *slots;                /* device */
    unsigned int *tickets;      /* device, after the slots */
    unsigned long long *result_host;    /* pinned: the result's words */
    unsigned long long *result_device;  /* the same, as the kernel sees it */
    unsigned int sequence;      /* of the last launch */
} cr_workspace;

/* The kept workspaces (kept_list.cuh): a call checks one of the current
 * device out (acquire: a kept one, else a new one), for itself, so calls
 * on several threads get their own, and back in (release); one whose last
 * use failed (its slots and tickets may be left set) is destroyed instead;
 * clear() at module teardown.  Filling one allocates its buffers. */
CR_DECLARE_KEPT_LIST(cr_workspace, cr_workspace, cr_workspaces)

#endif /* CUDAREDUCE_WORKSPACE_CUH */
