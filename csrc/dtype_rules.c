/* dtype_rules.c: the dtypes the kernels take, and NumPy's rules for the
 * result dtype of each operator, by table. */
#include "extension.h"

/* Rows in cr_type order: numpy.sum's result dtype, numpy.mean's, and the
 * dtype numpy.mean sums in (float64 for integers and bool, float32 for
 * float16). */
static const crpy_dtype dtype_table[CR_TYPE_COUNT] = {
    {"bool", 'b', 1, NPY_BOOL, CR_TYPE_BOOL, NPY_INT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"int8", 'i', 1, NPY_INT8, CR_TYPE_INT8, NPY_INT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"int16", 'i', 2, NPY_INT16, CR_TYPE_INT16, NPY_INT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"int32", 'i', 4, NPY_INT32, CR_TYPE_INT32, NPY_INT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"int64", 'i', 8, NPY_INT64, CR_TYPE_INT64, NPY_INT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"uint8", 'u', 1, NPY_UINT8, CR_TYPE_UINT8, NPY_UINT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"uint16", 'u', 2, NPY_UINT16, CR_TYPE_UINT16, NPY_UINT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"uint32", 'u', 4, NPY_UINT32, CR_TYPE_UINT32, NPY_UINT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"uint64", 'u', 8, NPY_UINT64, CR_TYPE_UINT64, NPY_UINT64, NPY_FLOAT64,
     NPY_FLOAT64},
    {"float16", 'f', 2, NPY_FLOAT16, CR_TYPE_FLOAT16, NPY_FLOAT16,
     NPY_FLOAT16, NPY_FLOAT32},
    {"float32", 'f', 4, NPY_FLOAT32, CR_TYPE_FLOAT32, NPY_FLOAT32,
     NPY_FLOAT32, NPY_FLOAT32},
    {"float64", 'f', 8, NPY_FLOAT64, CR_TYPE_FLOAT64, NPY_FLOAT64,
     NPY_FLOAT64, NPY_FLOAT64},
};

#define SUPPORTED_NAMES "bool, int8, int16, int32, int64, uint8, uint16, " \
                        "uint32, uint64, float16, float32, float64"

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
                 "cudareduce does not support dtype %S; supported dtypes: "
                 SUPPORTED_NAMES, (PyObject *)descr);
    return NULL;
}

const crpy_dtype *
crpy_dtype_of_type(cr_type type)
{
    return &dtype_table[type];
}

static const crpy_dtype *
dtype_of_typenum(int typenum)
{
    for (int t = 0; t < CR_TYPE_COUNT; t++) {
        if (dtype_table[t].typenum == typenum) {
            return &dtype_table[t];
        }
    }
    return NULL;
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
        *reduced = *result = given ? given
                                   : dtype_of_typenum(input->sum_typenum);
        break;
    case CRPY_MEAN:
        *reduced = given ? given : dtype_of_typenum(input->mean_sum_typenum);
        *result = given ? given : dtype_of_typenum(input->mean_typenum);
        break;
    default:
        *reduced = *result = input;
        break;
    }
    return 0;
}
