/* axes.cuh: a reduction along axes (axes.cu). */
#ifndef CUDAREDUCE_AXES_CUH
#define CUDAREDUCE_AXES_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "dispatch.cuh"

/* Queues on `stream` the reduction of request->rows (checked, served by
 * `route`, its stream already ordered after the producer's; `capturing`:
 * whether that stream is capturing, for its allocations) into
 * request->out, and for an out on the host waits for it.  Frees what it
 * takes on every path. */
cr_status cr_reduce_rows(const cr_request *request, const cr_route *route,
                         cudaStream_t stream, int capturing,
                         cr_error *error);

#endif /* CUDAREDUCE_AXES_CUH */
