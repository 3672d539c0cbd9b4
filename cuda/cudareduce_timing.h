/* cudareduce_timing.h: the bench's timers (timing.cu). */
#ifndef CUDAREDUCE_TIMING_H
#define CUDAREDUCE_TIMING_H

#include "cudareduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel timing for the bench, on device-resident data: the contiguous
 * host array of `request` is copied to `buffers` device buffers once;
 * after `warmup` untimed runs, each of `reps` runs reduces the next buffer
 * in turn, its passes bracketed by CUDA events; times_ms[r] is run r's
 * time.  The result of the last run is written to `result`, for
 * checking. */
typedef struct {
    cr_request request;
    int buffers;
    int warmup;
    int reps;
} cr_timing_request;

cr_status cr_time_reduce(const cr_timing_request *timing, float *times_ms,
                         void *result, cr_error *error);

/* Times `reps` copies of `bytes` bytes (after one warm-up copy), each
 * bracketed by CUDA events: device to device, or with from_host from
 * pinned host memory to the device. */
cr_status cr_time_copy(int64_t bytes, int from_host, int reps,
                       float *times_ms, cr_error *error);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_TIMING_H */
