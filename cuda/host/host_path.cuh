/* host_path.cuh: reductions of host arrays (host_path.cu). */
#ifndef CUDAREDUCE_HOST_PATH_CUH
#define CUDAREDUCE_HOST_PATH_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "dispatch.cuh"

/* The host data of `request` (checked, served by `route`), contiguous or
 * strided, staged chunk by chunk through the ring (each chunk cast on the
 * device where the route says) and reduced on `stream`; the result to
 * `result`, or for an exact sum (request->exact) to `result` or into
 * request->out, as cr_reduce delivers one. */
cr_status cr_reduce_host(const cr_request *request, const cr_route *route,
                         cudaStream_t stream, void *result, cr_error *error);

/* Copies `bytes` of host memory at `src` (pageable) to device memory at
 * `dst` through the ring, so that a host array reduced along axes moves
 * at the ring's rate, not a pageable copy's: chunk k staged into slot
 * k % count by the staging threads while the copy stream moves the chunks
 * before it; `stream` then waits for the last copy.  Returns once every
 * copy has been done (the ring is clean for its next user). */
cr_status cr_copy_host_to_device(const void *src, size_t bytes, void *dst,
                                 cudaStream_t stream, cr_error *error);

#endif /* CUDAREDUCE_HOST_PATH_CUH */
