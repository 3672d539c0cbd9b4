/* gather.cuh: the device-side gather of a strided array (gather.cu). */
#ifndef CUDAREDUCE_GATHER_CUH
#define CUDAREDUCE_GATHER_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"

/* Queues on `stream` the copy of the layout->n elements of `itemsize`
 * bytes (1, 2, 4 or 8) described by `layout`, its lowest element at
 * `start` (cr_layout_start), into the contiguous device buffer `out`. */
cr_status cr_gather(const void *start, const cr_layout *layout,
                    size_t itemsize, void *out, cudaStream_t stream,
                    cr_error *error);

#endif /* CUDAREDUCE_GATHER_CUH */
