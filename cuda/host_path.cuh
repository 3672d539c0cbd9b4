/* host_path.cuh: reductions of host arrays (host_path.cu). */
#ifndef CUDAREDUCE_HOST_PATH_CUH
#define CUDAREDUCE_HOST_PATH_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "dispatch.cuh"

/* The host data of `request` (checked, of row `entry`), contiguous or
 * strided, staged chunk by chunk through the ring and reduced on
 * `stream`; the result to `result`. */
cr_status cr_reduce_host(const cr_request *request,
                         const cr_dispatch_entry *entry, cudaStream_t stream,
                         void *result, cr_error *error);

#endif /* CUDAREDUCE_HOST_PATH_CUH */
