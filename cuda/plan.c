/* plan.c: launch planning and static facts of the methods.
 *
 * Plain C with no CUDA call, compiled by the C compiler into the extension,
 * so that cudareduce.plan() and its tests run on machines without a GPU.
 */
#include "cudareduce.h"
#include "fail.h"
#include "tuning.h"

#include <stdint.h>
#include <string.h>

/* methods.def's BLOCK column. */
enum {
    ANY_BLOCK_SIZE,
    PER_BLOCK_SIZE,
    PER_OR_ANY_BLOCK_SIZE,
    OWN_BLOCK_SIZE
};

typedef struct {
    const char *name;
    const char *description;
    int block;                  /* how its kernels take the block size */
    int elements_per_thread;    /* loaded by each thread, before the tree;
                                 * 0: 16-byte vectors, CR_FAST_UNROLL deep */
    int grid_stride;            /* grid sized from the SM count */
    int single_pass;            /* one launch reduces any n */
} cr_method_info;

/* methods.def's rows: the index is the cr_method value. */
#define METHOD_INFO(NAME, name, BLOCK, elements, grid_stride, single_pass, \
                    description)                                          \
    {#name, description, BLOCK, elements, grid_stride, single_pass},
static const cr_method_info method_table[CR_METHOD_COUNT] = {
    CR_METHODS(METHOD_INFO)
};
#undef METHOD_INFO

/* types.def's accumulator columns, as CR_OPS names them. */
enum { SUM_ACC_COLUMN, MINMAX_ACC_COLUMN, ACC_COLUMNS };

/* By cr_type, from types.def: size, NumPy kind, and the accumulators of a
 * sum into the type and of its min and max, by column. */
#define TYPE_FACTS(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax) \
    {(bits) / 8, kind, {CR_TYPE_##SUM_ACC, CR_TYPE_##MINMAX_ACC}},
static const struct {
    size_t size;
    char kind;
    cr_type accumulators[ACC_COLUMNS];
} type_facts[CR_TYPE_COUNT] = {CR_TYPES(TYPE_FACTS)};
#undef TYPE_FACTS

static int
method_is_valid(cr_method method)
{
    return (int)method >= 0 && method < CR_METHOD_COUNT;
}

const char *
cr_method_name(cr_method method)
{
    return method_is_valid(method) ? method_table[method].name : NULL;
}

const char *
cr_method_description(cr_method method)
{
    return method_is_valid(method) ? method_table[method].description : NULL;
}

int
cr_method_default_threads(cr_method method, int64_t n, size_t item_size)
{
    if (method != CR_METHOD_FAST) {
        return CR_DEFAULT_THREADS;
    }
    const int64_t bytes = n * (int64_t)item_size;
    return bytes < CR_FAST_512_THREADS_BYTES ? 256
           : bytes < CR_FAST_1024_THREADS_BYTES ? 512 : 1024;
}

int
cr_method_takes_threads(cr_method method, int threads,
                        cr_instances instances)
{
    if (!method_is_valid(method) || threads < CR_MIN_THREADS
        || threads > CR_MAX_THREADS || (threads & (threads - 1)) != 0) {
        return 0;
    }
    return instances == CR_EVERY_BLOCK_SIZE
           || method_table[method].block != PER_BLOCK_SIZE
           || threads == CR_DEFAULT_THREADS;
}

int
cr_method_needs_sm_count(cr_method method)
{
    return method_is_valid(method) && method_table[method].grid_stride;
}

int
cr_method_elements_per_thread(cr_method method, size_t item_size)
{
    if (!method_is_valid(method) || method == CR_METHOD_CUB
        || item_size == 0 || item_size > CR_MAX_ACCUMULATOR_BYTES) {
        return 0;
    }
    int elements = method_table[method].elements_per_thread;
    if (elements == 0 && item_size > 16) {
        return 0;       /* the fast method reads 16-byte vectors */
    }
    return elements ? elements : (int)(16 / item_size) * CR_FAST_UNROLL;
}

size_t
cr_type_size(cr_type type)
{
    if ((int)type < 0 || type >= CR_TYPE_COUNT) {
        return 0;
    }
    return type_facts[type].size;
}

/* CR_OPS' rows: the index is the cr_op value.  NONE is no identity. */
#define NONE (-1)
enum { VALUE, INDEX, COUNT };
#define OP_FACTS(NAME, ACCUMULATOR, WITHOUT_NAN, IDENTITY, RESULT)         \
    {ACCUMULATOR##_COLUMN, CR_OP_##WITHOUT_NAN, IDENTITY, RESULT},
static const struct {
    int accumulator;            /* the column of type_facts */
    cr_op without_nan;
    int identity;
    int result;                 /* VALUE, INDEX or COUNT */
} op_facts[CR_OP_COUNT] = {CR_OPS(OP_FACTS)};
#undef OP_FACTS
#undef NONE

static int
op_is_valid(cr_op op)
{
    return (int)op >= 0 && op < CR_OP_COUNT;
}

cr_type
cr_accumulator_type(cr_type result, cr_op op)
{
    if ((int)result < 0 || result >= CR_TYPE_COUNT || !op_is_valid(op)) {
        return CR_TYPE_COUNT;
    }
    return type_facts[result].accumulators[op_facts[op].accumulator];
}

cr_op
cr_op_without_nan(cr_op op)
{
    return op_is_valid(op) ? op_facts[op].without_nan : CR_OP_COUNT;
}

int
cr_op_skips_nan(cr_op op)
{
    return op_is_valid(op) && op_facts[op].without_nan != op;
}

int
cr_op_identity(cr_op op, int *identity)
{
    if (!op_is_valid(op) || op_facts[op].identity < 0) {
        return 0;
    }
    *identity = op_facts[op].identity;
    return 1;
}

int
cr_op_gives_index(cr_op op)
{
    return op_is_valid(op) && op_facts[op].result == INDEX;
}

int
cr_op_counts(cr_op op)
{
    return op_is_valid(op) && op_facts[op].result == COUNT;
}

/* Both kernel results keep their value 8 bytes in, after the int64. */
_Static_assert(offsetof(cr_indexed_result, value) == sizeof(int64_t)
                   && offsetof(cr_counted_result, sum) == sizeof(int64_t),
               "a value beside an index or a count starts 8 bytes in");

int
cr_result_is_indexed(cr_type acc, cr_op op)
{
    if (cr_op_gives_index(op)) {
        return 1;
    }
    /* Complex min and max (and their NaN forms): the element argmin and
     * argmax find (instances.def). */
    return (int)acc >= 0 && acc < CR_TYPE_COUNT
           && type_facts[acc].kind == 'c' && op_is_valid(op)
           && op_facts[op].accumulator == MINMAX_ACC_COLUMN;
}

size_t
cr_result_size(cr_type acc, cr_op op)
{
    /* The value (or sum) beside the 8-byte index (or count), padded to
     * 8 bytes as the kernels' indexed<V> and counted<V> are. */
    const size_t beside = (cr_type_size(acc) + 7) / 8 * 8;
    return cr_result_is_indexed(acc, op) || cr_op_counts(op)
               ? sizeof(int64_t) + beside
               : cr_type_size(acc);
}

size_t
cr_result_value_offset(cr_type acc, cr_op op)
{
    return (cr_result_is_indexed(acc, op) && !cr_op_gives_index(op))
                   || cr_op_counts(op)
               ? offsetof(cr_indexed_result, value)
               : 0;
}

cr_type
cr_result_value_type(cr_type acc, cr_op op)
{
    return cr_op_gives_index(op) ? CR_TYPE_INT64 : acc;
}

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
    if (!method_is_valid(method)) {
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
    const cr_method_info *info = &method_table[method];
    /* An empty input launches nothing, so it needs no device facts. */
    if (info->grid_stride && n > 0 && sm_count <= 0) {
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
        if (info->grid_stride) {
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
        if (info->single_pass) {
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
        n_in = blocks == 1 || info->single_pass ? 0 : blocks;
    }
    return CR_OK;
}
