/* store.cuh: a reduction's result finished on the device (store.cu). */
#ifndef CUDAREDUCE_STORE_CUH
#define CUDAREDUCE_STORE_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "rows_plan.h"

/* Whether request->out takes the accumulator's value as it is: no cast, no
 * divide. */
int cr_store_is_copy(const cr_request *request);

/* Queues, on `stream`, the store of the accumulator's value (of type
 * request->acc; an index operator's index) into request->out, finished as
 * cr_request says: cast to request->reduced, divided by request->n (a
 * COUNT operator's count) if request->divide_by_n, cast to
 * request->result.  The value is in device
 * memory at `device_value`, or with that NULL on the host at
 * `host_value`. */
cr_status cr_store_result(const cr_request *request, const void *device_value,
                          const void *host_value, cudaStream_t stream,
                          cr_error *error);

/* Queues, on `stream`, the store of a reduction along axes' results
 * (request->rows), each finished as cr_store_result finishes one, a mean
 * divided by its row's length: row r's accumulator is at values + its in
 * offset, its result goes to out + its out offset (`geometry`, of
 * request->rows->rows rows). */
cr_status cr_store_results(const cr_request *request, const void *values,
                           const cr_rows_geometry *geometry, void *out,
                           cudaStream_t stream, cr_error *error);

#endif /* CUDAREDUCE_STORE_CUH */
