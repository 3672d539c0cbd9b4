/* host_path.cuh: reductions of host arrays (host_path.cu). */
#ifndef CUDAREDUCE_HOST_PATH_CUH
#define CUDAREDUCE_HOST_PATH_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "dispatch.cuh"

/* The host data of `request` (checked, served by `route`), contiguous or
 * strided, staged chunk by chunk through the ring (each chunk cast on the
 * device where the route says) and reduced on `stream`; the result to
 * `result`. */
cr_status cr_reduce_host(const cr_request *request, const cr_route *route,
                         cudaStream_t stream, void *result, cr_error *error);

#endif /* CUDAREDUCE_HOST_PATH_CUH */
