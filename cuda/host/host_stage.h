/* host_stage.h: copying part of a host array into a staging buffer with
 * several threads.  One thread's memcpy moves about 10 GB/s; the link
 * carries several times that from pinned memory, so the copy into the
 * pinned ring is split among a small pool of threads.  Plain C. */
#ifndef CUDAREDUCE_HOST_STAGE_H
#define CUDAREDUCE_HOST_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cudareduce.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cr_stager cr_stager;

/* A pool of `threads` - 1 workers (the caller is the last); threads >= 1. */
cr_status cr_stager_create(int threads, cr_stager **stager, cr_error *error);
void cr_stager_destroy(cr_stager *stager);

/* The thread count used unless the environment says otherwise: the CPUs
 * this process may run on, at most 12. */
int cr_stager_default_threads(void);

/* Copies elements [first, first + count) of a host array to dst, densely.
 * The array is `layout` (its offset and strides in bytes from base), or
 * with layout NULL n contiguous items at base.  Elements are numbered in
 * the C order of the (simplified) layout; a reduction does not care which
 * order, only that the chunks of one call partition the array.  Returns
 * when the copy is done; one caller at a time per stager. */
void cr_stager_copy(cr_stager *stager, const void *base,
                    const cr_layout *layout, size_t item, int64_t first,
                    int64_t count, void *dst);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_HOST_STAGE_H */
