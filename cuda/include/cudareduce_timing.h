/* cudareduce_timing.h: the bench's timers (timing.cu, stream_hold.cu).
 *
 * GPU time is taken as NVIDIA's nvbench takes it: the stream is held by a
 * kernel that spins until the host has queued the timed work behind it, so
 * that the events bracket the GPU's work and not the host's launch
 * latency; for cold figures the L2 cache is flushed (overwritten) before
 * each sample. */
#ifndef CUDAREDUCE_TIMING_H
#define CUDAREDUCE_TIMING_H

#include "cudareduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A stream holder: a kernel that spins on a flag in mapped pinned memory,
 * and a buffer of twice the L2 cache's size to flush it with. */
typedef struct cr_stream_hold cr_stream_hold;

/* Makes a holder for `stream` (a cudaStream_t handle; 0 the legacy
 * default stream) on the current device. */
cr_status cr_stream_hold_create(uintptr_t stream, cr_stream_hold **hold,
                                cr_error *error);

/* Queues, on the holder's stream: with flush_l2 a write over the flush
 * buffer (so the next work finds none of its data in L2), then the kernel
 * that holds the stream until cr_stream_hold_release. */
cr_status cr_stream_hold_hold(cr_stream_hold *hold, int flush_l2,
                              cr_error *error);

/* Lets the holding kernel go and waits for the stream.  Fails if the
 * kernel gave up waiting (after CR_HOLD_TIMEOUT_NS): the work queued
 * behind it was then not queued in time (a full launch queue), and the
 * figures of that sample are not GPU time alone. */
cr_status cr_stream_hold_release(cr_stream_hold *hold, cr_error *error);

/* Releases a held stream if need be and frees the holder (NULL: no-op). */
void cr_stream_hold_destroy(cr_stream_hold *hold);

/* How a reduction or probe is timed. */
typedef enum {
    /* Each run between two events, as a single call is launched: the
     * host's launch latency included, nothing flushed. */
    CR_TIMING_LAUNCH = 0,
    /* Each run behind a holding kernel, L2 flushed first: GPU time of one
     * cold run, with an event after every pass. */
    CR_TIMING_COLD,
    /* `batch` runs queued back to back behind a holding kernel, rotating
     * among the buffers: a sample is their mean GPU time. */
    CR_TIMING_BATCH,
    CR_TIMING_MODE_COUNT
} cr_timing_mode;

typedef struct {
    cr_timing_mode mode;
    int buffers;        /* device copies of the input, rotated among */
    int warmup;         /* untimed samples first */
    int reps;           /* samples */
    int batch;          /* runs per sample (CR_TIMING_BATCH; else 1) */
} cr_timing;

/* Times the reduction of `request`, whose data must be a contiguous host
 * array: it is copied to `timing->buffers` device buffers once, and run r
 * reduces buffer r % buffers.  times_ms[s] is sample s's time per run.
 * In CR_TIMING_COLD, pass_ms (if not NULL; reps x CR_MAX_PASSES floats)
 * gets each pass's time, and *passes their count: the plan's passes for
 * the ladder and fast, 0 for cub, whose launches are its own.  The last
 * run's result is written to `result`, for checking. */
cr_status cr_time_reduce(const cr_request *request, const cr_timing *timing,
                         float *times_ms, float *pass_ms, int *passes,
                         void *result, cr_error *error);

/* What a probe measures. */
typedef enum {
    CR_PROBE_EMPTY = 0,     /* an empty kernel: the fixed cost of a launch */
    CR_PROBE_READ,          /* a read-only streaming kernel over `bytes`:
                             * the read ceiling */
    CR_PROBE_HOST_COPY,     /* a copy of `bytes` from pinned host memory */
    CR_PROBE_LAUNCH_POLL,   /* host wall time of launching a one-thread
                             * kernel that writes a word to mapped host
                             * memory, and polling for it: the least a call
                             * whose result reaches the host can take
                             * (mode "launch" only; no bytes) */
    CR_PROBE_COUNT
} cr_probe;

/* Times a probe the way cr_time_reduce times a reduction
 * (timing->buffers copies of the `bytes` read, rotated among). */
cr_status cr_time_probe(cr_probe probe, int64_t bytes,
                        const cr_timing *timing, float *times_ms,
                        cr_error *error);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_TIMING_H */
