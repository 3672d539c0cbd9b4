/* host_stage.c: the staging copy of host_stage.h, on a pthread pool.
 *
 * The caller publishes a job cut into pieces and copies pieces itself;
 * idle workers claim the others one at a time from an atomic counter, so
 * the copy never waits for a worker that is slow to wake or has lost its
 * CPU (on a virtual machine a vCPU can vanish for milliseconds): it waits
 * only for pieces already claimed.  Workers wait for a job by spinning for
 * a while before they block: a host call hands out a job every few hundred
 * microseconds, and waking a blocked thread costs tens of microseconds on
 * a virtual machine (on an H100 host, 1 GiB through 16 MiB chunks: 33-49
 * GB/s with blocking waits, 52-54 GB/s spinning).
 */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */

#include "host/host_stage.h"

#include "fail.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The bytes of one piece: small enough that the threads stay balanced
 * and a stalled one holds up little, large enough that claiming one is
 * nothing beside copying it.  On the H100 host, 1 GiB float32 in five
 * interleaved rounds: fixed equal parts per thread 38-52 GB/s (median
 * 43), pieces of 128 KiB 45-49 (46), 256 KiB 43-49; in a shorter run
 * 640 KiB and 1 MiB were slower (36-41). */
#define PIECE_BYTES (128 << 10)
/* The claim word: generation << 32 | pieces << 16 | next piece.  One
 * compare-and-swap both checks that a job is still current and claims its
 * next piece; a stale word could pass only after 2^32 more jobs. */
#define PIECE_BITS 16
#define MAX_PIECES ((1 << PIECE_BITS) - 1)
#define PIECE_MASK ((uint64_t)MAX_PIECES)
/* How long a waiter spins before it blocks: longer than the gap between
 * two chunks of one call, short enough not to matter between calls. */
#define SPIN_NS 2000000
/* Spinning yields the CPU this often, so that a spinning thread never
 * keeps a runnable one (another call's staging, say) off its CPU. */
#define SPINS_PER_YIELD 64
/* The default thread count's ceiling: more threads than this did not copy
 * faster on the H100 host (16 CPUs). */
#define DEFAULT_THREADS 12

typedef struct {
    const char *base;
    const cr_layout *layout;
    size_t item;
    int64_t first;
    int64_t count;
    char *dst;
    int64_t piece_items;
} stage_job;

struct cr_stager {
    pthread_mutex_t lock;       /* for blocked waiters only */
    pthread_cond_t start;
    pthread_cond_t done;
    /* Written by the caller before `claim` names a new generation, and
     * read by a thread only after it has claimed a piece of it: the job
     * is not finished, so not rewritten, until that piece is copied. */
    stage_job job;
    _Atomic uint64_t claim;     /* see PIECE_BITS */
    atomic_int finished;        /* pieces of the current job copied */
    atomic_int quit;
    int workers;
    pthread_t *threads;
};

typedef struct {
    struct timespec start;
    unsigned rounds;
} spin_state;

static void
spin_begin(spin_state *spin)
{
    clock_gettime(CLOCK_MONOTONIC, &spin->start);
    spin->rounds = 0;
}

/* One round of a spin-wait; false once the wait should block instead. */
static int
spin_again(spin_state *spin)
{
    if (++spin->rounds % SPINS_PER_YIELD != 0) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
        return 1;
    }
    sched_yield();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - spin->start.tv_sec) * 1000000000L
           + (now.tv_nsec - spin->start.tv_nsec) < SPIN_NS;
}

/* Elements [first, first + count) of a strided layout whose lowest
 * element is at `base` to dst: the multi-index of `first`, then an
 * odometer over the dimensions. */
static void
copy_strided(const char *base, const cr_layout *layout, size_t item,
             int64_t first, int64_t count, char *dst)
{
    const int ndim = layout->ndim;
    const int64_t *shape = layout->shape;
    const int64_t *strides = layout->strides;
    const int last = ndim - 1;
    int64_t index[CR_MAX_DIMS];
    int64_t rest = first;
    const char *src = base;
    for (int d = last; d >= 0; d--) {
        index[d] = rest % shape[d];
        rest /= shape[d];
        src += index[d] * strides[d];
    }
    while (count > 0) {
        /* A run along the last dimension. */
        int64_t run = shape[last] - index[last];
        if (run > count) {
            run = count;
        }
        const int64_t step = strides[last];
        if (step == (int64_t)item) {
            memcpy(dst, src, (size_t)run * item);
        }
        else {
            for (int64_t i = 0; i < run; i++) {
                memcpy(dst + i * item, src + i * step, item);
            }
        }
        dst += run * item;
        count -= run;
        src += run * step;
        index[last] += run;
        for (int d = last; d > 0 && index[d] == shape[d]; d--) {
            src -= shape[d] * strides[d];
            index[d] = 0;
            index[d - 1]++;
            src += strides[d - 1];
        }
    }
}

/* Elements [begin, end) of the job to their place in dst. */
static void
copy_range(const stage_job *job, int64_t begin, int64_t end)
{
    char *dst = job->dst + begin * (int64_t)job->item;
    const char *start = cr_layout_start(job->base, job->layout);
    if (job->layout == NULL || job->layout->contiguous) {
        memcpy(dst, start + (job->first + begin) * job->item,
               (size_t)(end - begin) * job->item);
    }
    else {
        copy_strided(start, job->layout, job->item, job->first + begin,
                     end - begin, dst);
    }
}

/* Claims and copies pieces of the current job until none is left
 * unclaimed; returns that job's generation. */
static uint32_t
take_pieces(cr_stager *stager)
{
    uint64_t claim = atomic_load(&stager->claim);
    for (;;) {
        const uint64_t next = claim & PIECE_MASK;
        const uint64_t pieces = (claim >> PIECE_BITS) & PIECE_MASK;
        if (next >= pieces) {
            return (uint32_t)(claim >> 32);
        }
        if (!atomic_compare_exchange_weak(&stager->claim, &claim,
                                          claim + 1)) {
            continue;           /* `claim` now holds the current word */
        }
        const stage_job *job = &stager->job;
        const int64_t begin = (int64_t)next * job->piece_items;
        const int64_t end = begin + job->piece_items < job->count
                            ? begin + job->piece_items : job->count;
        copy_range(job, begin, end);
        if (atomic_fetch_add(&stager->finished, 1) + 1 == (int)pieces) {
            /* Under the lock, so that a caller about to block sees it. */
            pthread_mutex_lock(&stager->lock);
            pthread_cond_signal(&stager->done);
            pthread_mutex_unlock(&stager->lock);
        }
        claim = atomic_load(&stager->claim);
    }
}

static int
has_new_job(cr_stager *stager, uint32_t seen)
{
    return (uint32_t)(atomic_load(&stager->claim) >> 32) != seen
           || atomic_load(&stager->quit);
}

/* Waits until the claim word names a generation other than `seen`, or
 * quit. */
static void
wait_for_job(cr_stager *stager, uint32_t seen)
{
    spin_state spin;
    spin_begin(&spin);
    while (!has_new_job(stager, seen)) {
        if (!spin_again(&spin)) {
            pthread_mutex_lock(&stager->lock);
            while (!has_new_job(stager, seen)) {
                pthread_cond_wait(&stager->start, &stager->lock);
            }
            pthread_mutex_unlock(&stager->lock);
            return;
        }
    }
}

static void *
worker(void *arg)
{
    cr_stager *stager = arg;
    uint32_t seen = 0;
    for (;;) {
        wait_for_job(stager, seen);
        if (atomic_load(&stager->quit)) {
            break;
        }
        seen = take_pieces(stager);
    }
    return NULL;
}

static cr_status
stager_error(cr_error *error, const char *what)
{
    return cr_fail(error, CR_ERR_NO_MEMORY,
                   "cannot start the staging threads: %s", what);
}

cr_status
cr_stager_create(int threads, cr_stager **out, cr_error *error)
{
    cr_stager *stager = calloc(1, sizeof(*stager));
    if (stager == NULL) {
        return stager_error(error, "out of memory");
    }
    atomic_init(&stager->claim, 0);
    atomic_init(&stager->finished, 0);
    atomic_init(&stager->quit, 0);
    pthread_mutex_init(&stager->lock, NULL);
    pthread_cond_init(&stager->start, NULL);
    pthread_cond_init(&stager->done, NULL);
    stager->threads = calloc(threads > 1 ? (size_t)threads - 1 : 1,
                             sizeof(pthread_t));
    if (stager->threads == NULL) {
        cr_stager_destroy(stager);
        return stager_error(error, "out of memory");
    }
    for (int w = 1; w < threads; w++) {
        if (pthread_create(&stager->threads[w - 1], NULL, worker, stager)
            != 0) {
            cr_stager_destroy(stager);
            return stager_error(error, "pthread_create failed");
        }
        stager->workers++;
    }
    *out = stager;
    return CR_OK;
}

void
cr_stager_destroy(cr_stager *stager)
{
    pthread_mutex_lock(&stager->lock);
    atomic_store(&stager->quit, 1);
    pthread_cond_broadcast(&stager->start);
    pthread_mutex_unlock(&stager->lock);
    for (int w = 0; w < stager->workers; w++) {
        pthread_join(stager->threads[w], NULL);
    }
    pthread_cond_destroy(&stager->done);
    pthread_cond_destroy(&stager->start);
    pthread_mutex_destroy(&stager->lock);
    free(stager->threads);
    free(stager);
}

void
cr_stager_copy(cr_stager *stager, const void *base, const cr_layout *layout,
               size_t item, int64_t first, int64_t count, void *dst)
{
    int64_t piece_items = PIECE_BYTES / (int64_t)item;
    if (count > piece_items * MAX_PIECES) {
        piece_items = (count + MAX_PIECES - 1) / MAX_PIECES;
    }
    const int64_t pieces = (count + piece_items - 1) / piece_items;
    const stage_job job = {base, layout, item, first, count, (char *)dst,
                           piece_items};
    if (pieces <= 1 || stager->workers == 0) {
        copy_range(&job, 0, count);
        return;
    }
    pthread_mutex_lock(&stager->lock);
    stager->job = job;
    atomic_store(&stager->finished, 0);
    const uint64_t generation = (atomic_load(&stager->claim) >> 32) + 1;
    atomic_store(&stager->claim, generation << 32
                                 | (uint64_t)pieces << PIECE_BITS);
    pthread_cond_broadcast(&stager->start);
    pthread_mutex_unlock(&stager->lock);
    take_pieces(stager);
    /* Only pieces that other threads have claimed are left. */
    spin_state spin;
    spin_begin(&spin);
    while (atomic_load(&stager->finished) < pieces) {
        if (!spin_again(&spin)) {
            pthread_mutex_lock(&stager->lock);
            while (atomic_load(&stager->finished) < pieces) {
                pthread_cond_wait(&stager->done, &stager->lock);
            }
            pthread_mutex_unlock(&stager->lock);
            break;
        }
    }
}

int
cr_stager_default_threads(void)
{
    cpu_set_t cpus;
    int count = 1;
    if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
        count = CPU_COUNT(&cpus);
    }
    return count < DEFAULT_THREADS ? (count > 0 ? count : 1)
                                   : DEFAULT_THREADS;
}
