/* host_ring.cuh: what a host array's reduction streams through, kept
 * between calls.
 *
 * A ring of `count` pinned staging buffers and as many device buffers of
 * `chunk_bytes` each, a copy stream, and per slot an event for "copied to
 * the device" and one for "reduced"; plus the staging threads.  Device
 * memory for a host call is the ring, whatever n.  Sizes come from the
 * environment when a ring is created:
 *   CUDAREDUCE_HOST_CHUNK_MB   chunk size in MiB (default 16)
 *   CUDAREDUCE_HOST_BUFFERS    ring slots, 2 to 16 (default 4)
 *   CUDAREDUCE_HOST_THREADS    staging threads, 1 to 64 (default: the
 *                              CPUs this process may use, at most 12)
 * so a ring holds 4 x 16 MiB pinned and 4 x 16 MiB of device memory by
 * default (1 GiB float32 on an H100 host, three runs each: 8-32 MiB
 * chunks, 3-6 slots, 8-16 threads; 16 MiB x 4 x 12 reached 53 GB/s, 97 %
 * of a pinned copy).  A call checks a ring out for itself
 * (concurrent calls get their own); rings are kept per device and freed at
 * module teardown. */
#ifndef CUDAREDUCE_HOST_RING_CUH
#define CUDAREDUCE_HOST_RING_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "host/host_stage.h"
#include "memory/kept_list.cuh"

#define CR_RING_MAX_SLOTS 16

typedef struct cr_host_ring {
    struct cr_host_ring *next;
    int device;
    size_t chunk_bytes;
    int count;
    void *staging[CR_RING_MAX_SLOTS];           /* pinned */
    unsigned char *device_buffers;              /* count * chunk_bytes */
    cudaStream_t copy_stream;
    cudaEvent_t copied[CR_RING_MAX_SLOTS];
    cudaEvent_t reduced[CR_RING_MAX_SLOTS];
    cr_stager *stager;
} cr_host_ring;

/* The kept rings (kept_list.cuh): acquire one of the current device (a
 * kept one, else a new one), release it (destroyed, its streams drained
 * first, if its last use failed), clear() at module teardown.  Filling one
 * makes its buffers, streams, events and stager. */
CR_DECLARE_KEPT_LIST(cr_host_ring, cr_host_ring, cr_host_rings)

#endif /* CUDAREDUCE_HOST_RING_CUH */
