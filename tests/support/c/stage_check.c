/* stage_check.c: the staging copy of cuda/host/host_stage.c, without a GPU.
 *
 * Copies parts of a host array through cr_stager_copy with several pool
 * sizes, contiguous and strided (2-D and 3-D views, starting mid-row, in
 * the layouts the extension plans for them: csrc/layout.c), and compares
 * every element with where it came from.  Pauses between some
 * jobs let the workers stop spinning and block, so the wake-up path runs
 * too.  Built by tests/test_host_stage.py, also under ThreadSanitizer.
 * Prints "ok" and exits 0, or names the first wrong element and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../csrc/layout.h"
#include "cudareduce.h"
#include "host/host_stage.h"

/* 4 MiB of int32: 32 pieces of 128 KiB. */
#define N ((int64_t)1 << 20)
#define JOBS 60

/* The view of `data` (its first element in C order) copied from element
 * `first` on, its layout kept in C order if `c_order`, against every
 * element's own address. */
static int
check_strided(cr_stager *stager, const int32_t *data, int32_t *dst, int ndim,
              const int64_t *shape, const int64_t *strides, int64_t first,
              int c_order)
{
    cr_layout layout;
    int64_t size = 1;
    for (int d = 0; d < ndim; d++) {
        size *= shape[d];
    }
    const char *refused = crpy_plan_layout(ndim, shape, strides,
                                           sizeof(int32_t), c_order, &layout);
    if (refused != NULL) {
        printf("layout refused: %s\n", refused);
        return 1;
    }
    memset(dst, 0xff, (size_t)(size - first) * sizeof(int32_t));
    cr_stager_copy(stager, data, &layout, sizeof(int32_t), first,
                   size - first, dst);
    for (int64_t i = first; i < size; i++) {
        /* The C-order multi-index of element i, then its address. */
        int64_t rest = i, at = 0;
        for (int d = ndim - 1; d >= 0; d--) {
            at += rest % shape[d] * strides[d];
            rest /= shape[d];
        }
        if (dst[i - first] != data[at / (int64_t)sizeof(int32_t)]) {
            printf("%d-D view, element %lld wrong\n", ndim, (long long)i);
            return 1;
        }
    }
    return 0;
}

static int
check_pool(int threads, unsigned seed)
{
    cr_error error;
    cr_stager *stager = NULL;
    int32_t *src = malloc(N * sizeof(int32_t));
    int32_t *dst = malloc(N * sizeof(int32_t));
    int failed = 1;
    if (src == NULL || dst == NULL
        || cr_stager_create(threads, &stager, &error) != CR_OK) {
        printf("setup failed\n");
        goto done;
    }
    for (int64_t i = 0; i < N; i++) {
        src[i] = (int32_t)(i * 2654435761u);
    }
    srand(seed);
    for (int job = 0; job < JOBS; job++) {
        /* Counts from 0 up, around piece multiples, and near the whole. */
        int64_t first = rand() % 4096;
        int64_t count = job % 3 == 0 ? (int64_t)(rand() % 33) * 32768
                                           + rand() % 3 - 1
                                     : rand() % (N - first);
        if (count < 0) {
            count = 0;
        }
        memset(dst, 0xff, (size_t)count * sizeof(int32_t));
        cr_stager_copy(stager, src, NULL, sizeof(int32_t), first, count, dst);
        if (memcmp(dst, src + first, (size_t)count * sizeof(int32_t)) != 0) {
            printf("threads %d: contiguous job %d (first %lld, count %lld) "
                   "wrong\n", threads, job, (long long)first,
                   (long long)count);
            goto done;
        }
        if (job % 20 == 0) {
            /* Every third element of 300 rows of 3000, and a 3-D view;
             * the first reversed both ways and transposed, in C order
             * (an index operator's), from its last element's address. */
            const int64_t shape2[2] = {300, 1000};
            const int64_t strides2[2] = {3000 * 4, 3 * 4};
            const int64_t shape3[3] = {3, 97, 999};
            const int64_t strides3[3] = {3000 * 4 * 100, 3000 * 4, 3 * 4};
            const int64_t reversed_shape[2] = {1000, 300};
            const int64_t reversed_strides[2] = {-3 * 4, -3000 * 4};
            if (check_strided(stager, src, dst, 2, shape2, strides2, 0, 0)
                || check_strided(stager, src, dst, 3, shape3, strides3,
                                 1234, 0)
                || check_strided(stager, src + 299 * 3000 + 999 * 3, dst, 2,
                                 reversed_shape, reversed_strides, 77, 1)) {
                printf("threads %d, job %d\n", threads, job);
                goto done;
            }
        }
        if (job % 15 == 14) {
            /* Longer than the workers spin: they block, and must wake. */
            struct timespec pause = {0, 5000000};
            nanosleep(&pause, NULL);
        }
    }
    failed = 0;
done:
    if (stager != NULL) {
        cr_stager_destroy(stager);
    }
    free(src);
    free(dst);
    return failed;
}

int
main(void)
{
    static const int pools[] = {1, 2, 5, 13};
    for (size_t p = 0; p < sizeof(pools) / sizeof(pools[0]); p++) {
        if (check_pool(pools[p], (unsigned)p + 1)) {
            return 1;
        }
    }
    printf("ok\n");
    return 0;
}
