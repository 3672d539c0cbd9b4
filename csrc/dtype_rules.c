/* dtype_rules.c: the dtypes the kernels take, and NumPy's rules for the
 * result dtype of each operator, by table. */
#include "extension.h"

/* cuda/types.def's rows, with NumPy's typenum of each. */
#define DTYPE_ROW(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax) \
    {#name, kind, (bits) / 8, NPY_##NAME, CR_TYPE_##NAME},
static const crpy_dtype dtype_table[CR_TYPE_COUNT] = {CR_TYPES(DTYPE_ROW)};
#undef DTYPE_ROW

/* "bool, int8, ..., float64" for the TypeError of an unsupported dtype. */
#define NAME_ITEM(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax) \
    ", " #name
static const char supported_names[] = CR_TYPES(NAME_ITEM);
#undef NAME_ITEM

static const struct {
    const char *name;
    cr_op kernel_op;
    int takes_dtype;        /* accepts dtype= (numpy.sum, numpy.mean) */
} op_table[CRPY_OP_COUNT] = {
    {"sum", CR_OP_SUM, 1},
    {"mean", CR_OP_SUM, 1},
    {"min", CR_OP_MIN, 0},
    {"max", CR_OP_MAX, 0},
};

const char *
crpy_op_name(crpy_op op)
{
    return op_table[op].name;
}

cr_op
crpy_kernel_op(crpy_op op)
{
    return op_table[op].kernel_op;
}

const crpy_dtype *
crpy_lookup_dtype(PyArray_Descr *descr)
{
    for (int t = 0; t < CR_TYPE_COUNT; t++) {
        if (descr->kind == dtype_table[t].kind
            && PyDataType_ELSIZE(descr) == dtype_table[t].itemsize
            && !PyDataType_HASFIELDS(descr)) {
            return &dtype_table[t];
        }
    }
    PyErr_Format(PyExc_TypeError,
                 "cudareduce does not support dtype %S; supported dtypes: %s",
                 (PyObject *)descr, supported_names + 2);
    return NULL;
}

const crpy_dtype *
crpy_dtype_of_type(cr_type type)
{
    return &dtype_table[type];
}

/* NumPy's result rules, by kind: numpy.sum of bool and signed integers
 * gives int64, of unsigned ones uint64; numpy.mean of those gives float64
 * and sums in float64.  Floats keep their type, except that numpy.mean of
 * float16 sums in float32. */
static const crpy_dtype *
numpy_sum_dtype(const crpy_dtype *input)
{
    switch (input->kind) {
    case 'f':
        return input;
    case 'u':
        return &dtype_table[CR_TYPE_UINT64];
    default:
        return &dtype_table[CR_TYPE_INT64];
    }
}

static const crpy_dtype *
numpy_mean_dtype(const crpy_dtype *input)
{
    return input->kind == 'f' ? input : &dtype_table[CR_TYPE_FLOAT64];
}

static const crpy_dtype *
numpy_mean_sum_dtype(const crpy_dtype *input)
{
    return input->type == CR_TYPE_FLOAT16 ? &dtype_table[CR_TYPE_FLOAT32]
                                          : numpy_mean_dtype(input);
}

int
crpy_result_dtypes(crpy_op op, const crpy_dtype *input,
                   PyArray_Descr *requested, const crpy_dtype **reduced,
                   const crpy_dtype **result)
{
    const crpy_dtype *given = NULL;
    if (requested != NULL) {
        if (!op_table[op].takes_dtype) {
            PyErr_Format(PyExc_TypeError, "cudareduce.%s takes no dtype",
                         op_table[op].name);
            return -1;
        }
        /* Any supported dtype, cast to unsafely, as numpy.sum and
         * numpy.mean do. */
        if ((given = crpy_lookup_dtype(requested)) == NULL) {
            return -1;
        }
    }
    switch (op) {
    case CRPY_SUM:
        *reduced = *result = given ? given : numpy_sum_dtype(input);
        break;
    case CRPY_MEAN:
        *reduced = given ? given : numpy_mean_sum_dtype(input);
        *result = given ? given : numpy_mean_dtype(input);
        break;
    default:
        *reduced = *result = input;
        break;
    }
    return 0;
}
