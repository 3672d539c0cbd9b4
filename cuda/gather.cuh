/* gather.cuh: the device-side gather of a strided array, and the cast
 * pass (gather.cu). */
#ifndef CUDAREDUCE_GATHER_CUH
#define CUDAREDUCE_GATHER_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"

/* Queues on `stream` the copy of the n elements of type `from` laid out
 * as `layout` (NULL: contiguous), the first at `start` (cr_layout_start),
 * into the contiguous device buffer `out` as type `to`: NumPy's cast
 * where the types differ, and with `nan_to` set each NaN replaced by
 * *nan_to first. */
cr_status cr_gather(const void *start, const cr_layout *layout, int64_t n,
                    cr_type from, cr_type to, const int *nan_to, void *out,
                    cudaStream_t stream, cr_error *error);

#endif /* CUDAREDUCE_GATHER_CUH */
