/* dispatch.cuh: from a request to its kernels (dispatch.cu).
 *
 * cr_request_check validates a request and finds its row of
 * instances.def, once per call, and whether a cast pass comes first.  A
 * reducer holds what one reduction needs besides its input: opened once,
 * launched any number of times (the bench launches it many), its result
 * fetched, and closed.  A zero-initialised
 * reducer closes as a no-op, so its owner needs no "opened" flag. */
#ifndef CUDAREDUCE_DISPATCH_CUH
#define CUDAREDUCE_DISPATCH_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "gather.cuh"
#include "memory/workspace.cuh"
#include "rows_plan.h"

/* One row of instances.def: the typed runners of an (element,
 * accumulator, operator). */
struct cr_dispatch_entry;

/* How a request is served: by `entry`, whose elements are of type
 * `staged`.  Where that is not the request's type, a cast pass
 * (cr_gather) first converts the elements into it as NumPy casts, their
 * NaNs as `nan` says. */
typedef struct {
    const cr_dispatch_entry *entry;
    cr_type staged;
    cr_nan_rule nan;
} cr_route;

typedef struct {
    const cr_dispatch_entry *entry;
    cr_method method;
    size_t acc_size;
    cr_plan plan;               /* the ladder's and the fast method's */
    void *scratch;              /* ladder: partials; cub: temp + result;
                                 * fast, for a device out: slots +
                                 * tickets + result */
    size_t cub_temp_bytes;
    void *device_result;        /* where the result lands, but for fast
                                 * into its workspace */
    unsigned int *tickets;      /* fast, for a device out */
    cr_workspace *fast;         /* fast, for a result fetched to the host */
} cr_reducer;

/* Refuses an invalid request (CR_ERR_INVALID); else *route says which
 * row serves it. */
cr_status cr_request_check(const cr_request *request, cr_route *route,
                           cr_error *error);

/* Writes the value of an empty reduction by the route's row (its
 * operator's identity, as the accumulator) to `result` and returns 1, or
 * returns 0 where it has none (min, max). */
int cr_route_empty_value(const cr_route *route, void *result);

/* Plans and allocates for `request` (checked), run by row `entry` on
 * request->n elements of the row's type.  With `device_result` the
 * result stays in device memory, at r->device_result or where
 * cr_reducer_launch is told, and no call waits for it: the fast method
 * then takes stream-ordered scratch of its own (which a CUDA graph can
 * capture) instead of a kept workspace and its mapped slot.  `capturing`:
 * whether `stream` is capturing, for that scratch (cr_pool_malloc). */
cr_status cr_reducer_open(cr_reducer *r, const cr_request *request,
                          const cr_dispatch_entry *entry, int device_result,
                          cudaStream_t stream, int capturing,
                          cr_error *error);

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

/* Polls the `count` flagged words (flagged_words.cuh) at `words`, in
 * mapped host memory, until a kernel on `stream` has flagged each with
 * `sequence`, for up to CR_POLL_SPIN_NS, then synchronizes the stream
 * (which reports a failed launch); the words as last read, whole, are in
 * `read`. */
cr_status cr_wait_for_words(const volatile unsigned long long *words,
                            int count, unsigned int sequence,
                            unsigned long long *read, cudaStream_t stream,
                            cr_error *error);

/* Waits for the launches and copies the result to `result`.  The fast
 * method's is polled in mapped memory for up to CR_POLL_SPIN_NS (a call
 * that takes longer then blocks in cudaStreamSynchronize). */
cr_status cr_reducer_fetch(cr_reducer *r, void *result, cudaStream_t stream,
                           cr_error *error);

/* Combines the `count` results of a host reduction's chunks by row
 * `entry`, partials[k] that of the elements from k * chunk on, into
 * `result` (device memory), on `stream` (runners.cuh's run_fold). */
cr_status cr_fold_partials(const cr_dispatch_entry *entry,
                           const void *partials, int64_t count,
                           int64_t chunk, void *result, cudaStream_t stream,
                           cr_error *error);

/* What row `entry`'s last pass along axes can write into a device out
 * besides its accumulator (runners.cuh's rows_finishing). */
cr_rows_finishing cr_rows_finishes(const cr_dispatch_entry *entry);

/* Whether row `entry`'s results are the same bits in any order of
 * combining (kernels/operators.cuh's any_order), so that its rows' chunks
 * may follow the shape (cr_rows_plan_passes). */
int cr_rows_any_order(const cr_dispatch_entry *entry);

/* Queues pass p of a reduction along axes by row `entry`
 * (runners.cuh's run_rows), `finish` NULL but for a last pass that
 * finishes its results. */
cr_status cr_rows_run_pass(const cr_dispatch_entry *entry,
                           const cr_rows_plan *plan, int p, const void *in,
                           const cr_rows_geometry *geometry, int64_t rows,
                           int64_t stride, void *out, int64_t chunk_bytes,
                           const cr_rows_finish *finish, cudaStream_t stream,
                           cr_error *error);

/* Queues CUB's segmented reduce of `rows` contiguous rows of `length`
 * elements by row `entry` into results[r] (runners.cuh's run_cub_rows);
 * temp == NULL: sets *temp_bytes only. */
cr_status cr_rows_run_cub(const cr_dispatch_entry *entry, const void *in,
                          int64_t rows, int64_t length, void *temp,
                          size_t *temp_bytes, void *results,
                          cudaStream_t stream, cr_error *error);

/* Frees what cr_reducer_open took; `healthy`: no error left the fast
 * method's workspace in doubt. */
void cr_reducer_close(cr_reducer *r, cudaStream_t stream, int healthy);

#endif /* CUDAREDUCE_DISPATCH_CUH */
