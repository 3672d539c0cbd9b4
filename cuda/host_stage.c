/* host_stage.c: the staging copy of host_stage.h, on a pthread pool.
 *
 * The caller publishes a job (a generation number), takes part 0 itself,
 * and waits until every worker has done its part.  Workers and caller wait
 * by spinning for a while before they block: a host call hands out a job
 * every few hundred microseconds, and waking a blocked thread costs tens of
 * microseconds on a virtual machine (on an H100 host, 1 GiB through 16 MiB
 * chunks: 33-49 GB/s with blocking waits, 52-54 GB/s spinning).
 */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */

#include "host_stage.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Below this many bytes a part is not worth a thread's wake-up. */
#define MIN_PART_BYTES (1 << 20)
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
    int parts;
} stage_job;

struct cr_stager {
    pthread_mutex_t lock;       /* for blocked waiters only */
    pthread_cond_t start;
    pthread_cond_t done;
    stage_job job;              /* written before generation moves on */
    atomic_ulong generation;
    atomic_int pending;         /* workers still copying the job */
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

/* Elements [first, first + count) of a strided layout to dst: the
 * multi-index of `first`, then an odometer over the dimensions. */
static void
gather(const char *base, const cr_layout *layout, size_t item,
       int64_t first, int64_t count, char *dst)
{
    const int ndim = layout->ndim;
    const int64_t *shape = layout->shape;
    const int64_t *strides = layout->strides;
    const int last = ndim - 1;
    int64_t index[CR_MAX_DIMS];
    int64_t rest = first;
    const char *src = base + layout->offset;
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

/* Part `part` of the job's elements, split evenly. */
static void
copy_part(const stage_job *job, int part)
{
    const int64_t begin = job->count * part / job->parts;
    const int64_t end = job->count * (part + 1) / job->parts;
    if (end == begin) {
        return;
    }
    char *dst = job->dst + begin * (int64_t)job->item;
    if (job->layout == NULL || job->layout->contiguous) {
        const int64_t offset = job->layout == NULL ? 0 : job->layout->offset;
        memcpy(dst, job->base + offset + (job->first + begin) * job->item,
               (size_t)(end - begin) * job->item);
    }
    else {
        gather(job->base, job->layout, job->item, job->first + begin,
               end - begin, dst);
    }
}

typedef struct {
    cr_stager *stager;
    int part;
} worker_arg;

/* Waits until the generation is no longer `seen`, or quit. */
static void
wait_for_job(cr_stager *stager, unsigned long seen)
{
    spin_state spin;
    spin_begin(&spin);
    while (atomic_load(&stager->generation) == seen
           && !atomic_load(&stager->quit)) {
        if (!spin_again(&spin)) {
            pthread_mutex_lock(&stager->lock);
            while (atomic_load(&stager->generation) == seen
                   && !atomic_load(&stager->quit)) {
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
    cr_stager *stager = ((worker_arg *)arg)->stager;
    const int part = ((worker_arg *)arg)->part;
    unsigned long seen = 0;
    free(arg);
    for (;;) {
        wait_for_job(stager, seen);
        if (atomic_load(&stager->quit)) {
            break;
        }
        seen = atomic_load(&stager->generation);
        if (part < stager->job.parts) {
            copy_part(&stager->job, part);
        }
        if (atomic_fetch_sub(&stager->pending, 1) == 1) {
            /* Under the lock, so that a caller about to block sees it. */
            pthread_mutex_lock(&stager->lock);
            pthread_cond_signal(&stager->done);
            pthread_mutex_unlock(&stager->lock);
        }
    }
    return NULL;
}

static cr_status
stager_error(cr_error *error, const char *what)
{
    error->cuda_code = 0;
    snprintf(error->message, sizeof(error->message),
             "cannot start the staging threads: %s", what);
    return CR_ERR_NO_MEMORY;
}

cr_status
cr_stager_create(int threads, cr_stager **out, cr_error *error)
{
    cr_stager *stager = calloc(1, sizeof(*stager));
    if (stager == NULL) {
        return stager_error(error, "out of memory");
    }
    atomic_init(&stager->generation, 0);
    atomic_init(&stager->pending, 0);
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
        worker_arg *arg = malloc(sizeof(*arg));
        if (arg == NULL) {
            cr_stager_destroy(stager);
            return stager_error(error, "out of memory");
        }
        arg->stager = stager;
        arg->part = w;
        if (pthread_create(&stager->threads[w - 1], NULL, worker, arg)
            != 0) {
            free(arg);
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
    stage_job job = {base, layout, item, first, count, dst, 1};
    const int64_t parts = (count * (int64_t)item) / MIN_PART_BYTES;
    if (parts > 1) {
        job.parts = parts > stager->workers + 1 ? stager->workers + 1
                                                : (int)parts;
    }
    if (job.parts == 1) {
        copy_part(&job, 0);
        return;
    }
    pthread_mutex_lock(&stager->lock);
    stager->job = job;
    atomic_store(&stager->pending, stager->workers);
    atomic_fetch_add(&stager->generation, 1);
    pthread_cond_broadcast(&stager->start);
    pthread_mutex_unlock(&stager->lock);
    copy_part(&job, 0);
    spin_state spin;
    spin_begin(&spin);
    while (atomic_load(&stager->pending) > 0) {
        if (!spin_again(&spin)) {
            pthread_mutex_lock(&stager->lock);
            while (atomic_load(&stager->pending) > 0) {
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
