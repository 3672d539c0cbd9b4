/* gather.cuh: the device-side gather of a strided array, and the cast
 * pass (gather.cu). */
#ifndef CUDAREDUCE_GATHER_CUH
#define CUDAREDUCE_GATHER_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"

/* What a cast pass does with an element that is NaN (a complex one where
 * either part is): with `replace`, puts `value` in its place (the
 * identity of a NaN-skipping sum or product, whose row is the plain
 * one's); with `keep`, makes it NaN in the cast's type, which its real
 * part alone might not be (nanmean counting complex elements cast to a
 * real dtype). */
typedef struct {
    int replace;
    int value;
    int keep;
} cr_nan_rule;

/* Queues on `stream` the copy of the n elements of type `from` laid out
 * as `layout` (NULL: contiguous), the first at `start` (cr_layout_start),
 * into the contiguous device buffer `out` as type `to`: NumPy's cast
 * where the types differ, each NaN as `nan` says (NULL: as the cast makes
 * it). */
cr_status cr_gather(const void *start, const cr_layout *layout, int64_t n,
                    cr_type from, cr_type to, const cr_nan_rule *nan,
                    void *out, cudaStream_t stream, cr_error *error);

#endif /* CUDAREDUCE_GATHER_CUH */
