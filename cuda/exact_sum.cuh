/* exact_sum.cuh: exact sums on the device (exact_sum.cu; issue 44,
 * docs/exact.md): the sum of every element added, exactly, into one
 * state of the call, and rounded once by a launch of its own after the
 * last addition.
 * Opened once a call, added to once for device data or once a chunk for
 * host data, finished, closed.  A zero-initialised one closes as a
 * no-op. */
#ifndef CUDAREDUCE_EXACT_SUM_CUH
#define CUDAREDUCE_EXACT_SUM_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "exact/state.h"

typedef struct {
    struct cr_exact_kept *kept;     /* kept between calls, or NULL */
    void *scratch;          /* the state, then the result */
    void *device_result;
} cr_exact_sum;

/* Whether `request` (checked otherwise) can be an exact sum, else
 * CR_ERR_INVALID saying why: sum, nansum, mean or nanmean (op SUM,
 * NANSUM or NANMEAN) of the whole array, by the fast method, of elements
 * that NumPy's loop adds as float16, bfloat16, float32 or float64
 * (`reduced`: each element is cast to it first), into one of those
 * (`result`). */
cr_status cr_exact_check(const cr_request *request, cr_error *error);

/* Takes a zero state for the call: a kept one (memory/exact_states.cuh),
 * `stream` made to wait for its last use; or, where `stream` is
 * capturing, scratch of the graph's own, zeroed in it. */
cr_status cr_exact_open(cr_exact_sum *s, cudaStream_t stream, int capturing,
                        cr_error *error);

/* Queues the addition of the n elements at `in` (device memory, of
 * `type`, one of the four above) to `request`'s sum, NaNs skipped and
 * counted where its op skips them, else noted (as NaN's result).  With
 * `last` (the call's last addition), the sum is then rounded once into
 * request->result (a mean, request->divide_by_n, the sum over the count
 * of the n elements added less the NaNs skipped): stored into
 * request->out as it is, or into the scratch for cr_exact_finish; and
 * the state left zero. */
cr_status cr_exact_add(cr_exact_sum *s, const cr_request *request,
                       const void *in, int64_t n, cr_type type, int last,
                       cudaStream_t stream, cr_error *error);

/* Delivers the rounded sum as cr_reduce does: to the host at `result`
 * (the value, or nanmean's count and value, as cr_counted_result lays
 * them out), waited for; a device out has it already. */
cr_status cr_exact_finish(cr_exact_sum *s, const cr_request *request,
                          cudaStream_t stream, void *result,
                          cr_error *error);

/* The state's sums so far (added with `last` 0) copied to `held` on the
 * host, and the state zeroed for its next call, on `stream`, waited for:
 * a device's share of a host array reduced on several devices. */
cr_status cr_exact_take(cr_exact_sum *s, cudaStream_t stream,
                        cr_exact_state *held, cr_error *error);

/* Delivers the sum of the `count` states taken by cr_exact_take, each of
 * a share of `request`'s elements, as cr_exact_finish does: rounded once,
 * on the host; to `result`, or into request->out on `stream`, waited
 * for.  Their limbs add as the kernels' atomics do: the same value, and
 * bits, as one state that all the shares were added to.  With
 * request->exact_state, that state itself to `result`, unrounded. */
cr_status cr_exact_finish_taken(const cr_request *request,
                                const cr_exact_state *taken, int count,
                                cudaStream_t stream, void *result,
                                cr_error *error);

/* Gives the state back after the stream's work (best effort): a kept
 * one checked in, or where `healthy` is 0 (the call failed: its limbs
 * may hold part of a sum) destroyed; the capture's freed. */
void cr_exact_close(cr_exact_sum *s, cudaStream_t stream, int healthy);

#endif /* CUDAREDUCE_EXACT_SUM_CUH */
