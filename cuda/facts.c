/* facts.c: the static facts of the methods, types and operators, read
 * from their lists (methods.def, types.def, CR_OPS), and the layout of a
 * reduction's result.
 *
 * Plain C with no CUDA call, compiled by the C compiler into the extension,
 * so that cudareduce.methods(), plan() and their tests run on machines
 * without a GPU.
 */
#include "cudareduce.h"
#include "tuning.h"

#include <stddef.h>
#include <stdint.h>

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
enum { SUM_ACC_COLUMN, MINMAX_ACC_COLUMN, PROD_ACC_COLUMN, ACC_COLUMNS };

/* By cr_type, from types.def: size, NumPy kind, and the accumulators of a
 * sum into the type, of its min and max and of a product into it, by
 * column. */
#define TYPE_FACTS(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax, \
                   PROD_ACC, ProdAcc)                                    \
    {(bits) / 8, kind,                                                    \
     {CR_TYPE_##SUM_ACC, CR_TYPE_##MINMAX_ACC, CR_TYPE_##PROD_ACC}},
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
cr_method_single_pass(cr_method method)
{
    return method_is_valid(method) && method_table[method].single_pass;
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
