/* exact_sum.cuh: exact sums on the device (exact_sum.cu; issue 44,
 * docs/exact.md): the sum of every element added, exactly, into one
 * state of the call, then rounded once.  Opened once a call, added to
 * once for device data or once a chunk for host data, finished, closed.
 * A zero-initialised one closes as a no-op. */
#ifndef CUDAREDUCE_EXACT_SUM_CUH
#define CUDAREDUCE_EXACT_SUM_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"

typedef struct {
    void *scratch;      /* the state (kernels/exact.cuh), then the result */
    void *device_result;
} cr_exact_sum;

/* Whether `request` (checked otherwise) can be an exact sum, else
 * CR_ERR_INVALID saying why: sum, nansum, mean or nanmean (op SUM,
 * NANSUM or NANMEAN) of the whole array, by the fast method, of elements
 * that NumPy's loop adds as float16, bfloat16, float32 or float64
 * (`reduced`: each element is cast to it first), into one of those
 * (`result`). */
cr_status cr_exact_check(const cr_request *request, cr_error *error);

/* Takes stream-ordered scratch for the state and the result, zeroed. */
cr_status cr_exact_open(cr_exact_sum *s, cudaStream_t stream, int capturing,
                        cr_error *error);

/* Queues the addition of the n elements at `in` (device memory, of
 * `type`, one of the four above), NaNs skipped and counted with
 * skip_nan, else noted (as NaN's result). */
cr_status cr_exact_add(cr_exact_sum *s, const void *in, int64_t n,
                       cr_type type, int skip_nan, cudaStream_t stream,
                       cr_error *error);

/* Rounds the sum of `request`'s elements once into request->result (a
 * mean, request->divide_by_n, the sum over the count of the n elements
 * added less the NaNs skipped) and delivers it as cr_reduce does: to the
 * host at `result` (the value, or nanmean's count and value, as
 * cr_counted_result lays them out), waited for; or stored into
 * request->out as it is, on `stream`. */
cr_status cr_exact_finish(cr_exact_sum *s, const cr_request *request,
                          cudaStream_t stream, void *result,
                          cr_error *error);

/* Frees the scratch after the stream's work (best effort). */
void cr_exact_close(cr_exact_sum *s, cudaStream_t stream);

#endif /* CUDAREDUCE_EXACT_SUM_CUH */
