/* dispatch.cuh: from a request to its kernels (dispatch.cu).
 *
 * cr_request_check validates a request and finds its row of
 * instances.def, once per call.  A reducer holds what one reduction needs
 * besides its input: opened once, launched any number of times (the bench
 * launches it many), its result fetched, and closed.  A zero-initialised
 * reducer closes as a no-op, so its owner needs no "opened" flag. */
#ifndef CUDAREDUCE_DISPATCH_CUH
#define CUDAREDUCE_DISPATCH_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "workspace.cuh"

/* One row of instances.def: the typed runners of an (element, cast,
 * accumulator, operator). */
struct cr_dispatch_entry;

typedef struct {
    const cr_dispatch_entry *entry;
    cr_method method;
    size_t acc_size;
    cr_plan plan;               /* the ladder's and the fast method's */
    void *scratch;              /* ladder: partials; cub: temp + result */
    size_t cub_temp_bytes;
    void *device_result;        /* where the result lands (not fast) */
    cr_workspace *fast;         /* the fast method's */
} cr_reducer;

/* Refuses an invalid request (CR_ERR_INVALID); else *entry is its row. */
cr_status cr_request_check(const cr_request *request,
                           const cr_dispatch_entry **entry,
                           cr_error *error);

/* Plans and allocates for `request` (checked, of row `entry`). */
cr_status cr_reducer_open(cr_reducer *r, const cr_request *request,
                          const cr_dispatch_entry *entry,
                          cudaStream_t stream, cr_error *error);

/* Queues the kernels that reduce the n elements at `in` (n as planned).
 * The result lands in device memory at `out`, or with out NULL where
 * cr_reducer_fetch reads it.  pass_ends (the bench's, else NULL): an
 * event recorded after each of cr_reducer_passes(r) passes. */
cr_status cr_reducer_launch(cr_reducer *r, const void *in, int64_t n,
                            void *out, const cudaEvent_t *pass_ends,
                            cudaStream_t stream, cr_error *error);

/* The passes cr_reducer_launch can time one by one: the plan's, or 0 for
 * CUB, whose launches are its own. */
int cr_reducer_passes(const cr_reducer *r);

/* Waits for the launches and copies the result to `result`. */
cr_status cr_reducer_fetch(cr_reducer *r, void *result, cudaStream_t stream,
                           cr_error *error);

/* Frees what cr_reducer_open took; `healthy`: no error left the fast
 * method's workspace in doubt. */
void cr_reducer_close(cr_reducer *r, cudaStream_t stream, int healthy);

#endif /* CUDAREDUCE_DISPATCH_CUH */
