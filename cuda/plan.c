/* plan.c: launch planning, the passes of a reduction (cr_plan_launch).
 *
 * Plain C with no CUDA call, compiled by the C compiler into the extension,
 * so that cudareduce.plan() and its tests run on machines without a GPU;
 * the methods' facts it plans by are facts.c's.
 */
#include "cudareduce.h"
#include "fail.h"
#include "tuning.h"

#include <stdint.h>
#include <string.h>

static int64_t
ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

cr_status
cr_plan_launch(int64_t n, cr_method method, int threads, size_t item_size,
               size_t acc_size, int sm_count, cr_plan *plan,
               cr_error *error)
{
    if (cr_method_name(method) == NULL) {
        return cr_fail(error, CR_ERR_INVALID, "invalid method");
    }
    if (method == CR_METHOD_CUB) {
        return cr_fail(error, CR_ERR_INVALID, "cub plans its own launches");
    }
    const int per_thread = cr_method_elements_per_thread(method, item_size);
    if (per_thread == 0) {
        return cr_fail(error, CR_ERR_INVALID, "invalid item size");
    }
    if (n < 0 || n > CR_MAX_ELEMENTS) {
        return cr_fail(error, CR_ERR_INVALID, "n must be from 0 to 2^62");
    }
    if (threads == 0) {
        threads = cr_method_default_threads(method, n, item_size);
    }
    if (threads < CR_MIN_THREADS || threads > CR_MAX_THREADS
        || (threads & (threads - 1)) != 0) {
        return cr_fail(error, CR_ERR_INVALID,
                       "threads must be a power of two from 64 to 1024");
    }
    const int grid_stride = cr_method_needs_sm_count(method);
    const int single_pass = cr_method_single_pass(method);
    /* An empty input launches nothing, so it needs no device facts. */
    if (grid_stride && n > 0 && sm_count <= 0) {
        return cr_fail(error, CR_ERR_INVALID, "sm_count must be > 0");
    }

    memset(plan, 0, sizeof(*plan));
    int64_t n_in = n;
    while (n_in > 0) {
        /* Each pass divides n_in by at least 64, so this cannot happen
         * for n < 2^63; the check keeps the array access provably safe. */
        if (plan->count == CR_MAX_PASSES) {
            return cr_fail(error, CR_ERR_INVALID, "too many passes");
        }
        /* Later passes read accumulators, not elements. */
        const int elements = plan->count == 0
            ? per_thread
            : cr_method_elements_per_thread(method, acc_size);
        const int64_t per_block = (int64_t)threads * elements;
        int64_t blocks = ceil_div(n_in, per_block);
        if (grid_stride) {
            /* Brent: enough blocks to fill the GPU once, then every thread
             * loops; the few partials left take a single block. */
            int64_t cap = plan->count == 0
                ? (int64_t)sm_count * (CR_THREADS_PER_SM / threads) : 1;
            if (blocks > cap) {
                blocks = cap;
            }
        }
        cr_pass *pass = &plan->pass[plan->count++];
        pass->n_in = n_in;
        pass->blocks = blocks;
        pass->threads = threads;
        if (single_pass) {
            /* For 16-byte-aligned data: vectors of per_thread /
             * CR_FAST_UNROLL elements, every grid-th one to a thread, and
             * one element of the tail (a misaligned start adds at most one
             * of the head and one of the tail).  Shared memory: one slot
             * per warp, static. */
            const int64_t vec = per_thread / CR_FAST_UNROLL;
            pass->items_per_thread =
                vec * ceil_div(n_in / vec, blocks * threads)
                + (n_in % vec != 0);
            pass->shared_bytes = 0;
        }
        else {
            /* Thread 0 of block 0 loads the most: element j * threads of
             * each sweep of the grid, for the j of this method, while
             * inside n. */
            pass->items_per_thread = 0;
            for (int j = 0; j < elements; j++) {
                int64_t first = (int64_t)j * threads;
                if (first < n_in) {
                    pass->items_per_thread +=
                        ceil_div(n_in - first, blocks * per_block);
                }
            }
            pass->shared_bytes = (size_t)threads * acc_size;
        }
        /* The fast method's last block reduces the partials itself. */
        n_in = blocks == 1 || single_pass ? 0 : blocks;
    }
    return CR_OK;
}
