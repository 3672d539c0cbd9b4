/* dtype_rules.c: the dtypes the kernels take (the rows of
 * cuda/include/types.def), NumPy's rules for the dtypes of a reduction,
 * and NumPy's cast rule: what the kernels do for it. */
#include "extension.h"

/* ml_dtypes registers bfloat16 with NumPy at its import: no typenum is
 * known before (crpy_descr). */
#define NPY_BFLOAT16 NPY_NOTYPE

/* cuda/include/types.def's rows, with NumPy's typenum of each. */
#define DTYPE_ROW(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax, \
                  PROD_ACC, ProdAcc)                                      \
    {#name, kind, (bits) / 8, NPY_##NAME, CR_TYPE_##NAME},
static const crpy_dtype dtype_table[CR_TYPE_COUNT] = {CR_TYPES(DTYPE_ROW)};
#undef DTYPE_ROW

/* "bool, int8, ..., float64" for the TypeError of an unsupported dtype. */
#define NAME_ITEM(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax, \
                  PROD_ACC, ProdAcc)                                      \
    ", " #name
static const char supported_names[] = CR_TYPES(NAME_ITEM);
#undef NAME_ITEM

/* ml_dtypes.bfloat16, the scalar type of ml_dtypes' bfloat16 dtype: 1
 * with a new reference in *type, 0 where ml_dtypes is not importable (or
 * has no bfloat16), -1 with another exception. */
static int
bfloat16_scalar_type(PyObject **type)
{
    PyObject *module = PyImport_ImportModule("ml_dtypes");
    *type = module == NULL ? NULL
                           : PyObject_GetAttrString(module, "bfloat16");
    Py_XDECREF(module);
    if (*type != NULL) {
        return 1;
    }
    if (PyErr_ExceptionMatches(PyExc_ImportError)
        || PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

/* 1 if `descr` is ml_dtypes' bfloat16 (NumPy kind 'V', two bytes), 0 if
 * not, -1 with an exception. */
static int
is_bfloat16(PyArray_Descr *descr)
{
    PyObject *type = NULL;
    if (descr->kind != 'V' || PyDataType_ELSIZE(descr) != 2
        || PyDataType_HASFIELDS(descr)) {
        return 0;
    }
    int found = bfloat16_scalar_type(&type);
    if (found == 1) {
        found = (PyObject *)descr->typeobj == type;
        Py_DECREF(type);
    }
    return found;
}

PyArray_Descr *
crpy_descr(const crpy_dtype *dtype)
{
    if (dtype->type != CR_TYPE_BFLOAT16) {
        return PyArray_DescrFromType(dtype->typenum);
    }
    PyObject *type = NULL;
    int found = bfloat16_scalar_type(&type);
    if (found == 0) {
        PyErr_SetString(PyExc_ImportError, "a bfloat16 NumPy array needs "
                        "ml_dtypes (pip install ml_dtypes)");
    }
    if (found != 1) {
        return NULL;
    }
    PyArray_Descr *descr = PyArray_DescrFromTypeObject(type);
    Py_DECREF(type);
    return descr;
}

PyArray_Descr *
crpy_result_descr(const crpy_dtype *dtype)
{
    PyArray_Descr *descr = crpy_descr(dtype);
    if (descr == NULL && dtype->type == CR_TYPE_BFLOAT16
        && PyErr_ExceptionMatches(PyExc_ImportError)) {
        PyErr_Clear();
        return PyArray_DescrFromType(NPY_FLOAT32);
    }
    return descr;
}

const crpy_dtype *
crpy_dtype_of_kind(char kind, Py_ssize_t itemsize)
{
    for (int t = 0; t < CR_TYPE_COUNT; t++) {
        /* bfloat16's 'f' is what it is; NumPy's kind of it is 'V'. */
        if (t != CR_TYPE_BFLOAT16 && kind == dtype_table[t].kind
            && itemsize == dtype_table[t].itemsize) {
            return &dtype_table[t];
        }
    }
    return NULL;
}

const crpy_dtype *
crpy_lookup_dtype(PyArray_Descr *descr)
{
    const crpy_dtype *dtype = NULL;
    switch (is_bfloat16(descr)) {
    case 1:
        return &dtype_table[CR_TYPE_BFLOAT16];
    case -1:
        return NULL;
    }
    if (!PyDataType_HASFIELDS(descr)
        && (dtype = crpy_dtype_of_kind(descr->kind,
                                       PyDataType_ELSIZE(descr))) != NULL) {
        return dtype;
    }
    PyErr_Format(PyExc_TypeError,
                 "cudareduce does not support dtype %S; supported dtypes: %s",
                 (PyObject *)descr, supported_names + 2);
    return NULL;
}

const crpy_dtype *
crpy_dtype_named(const char *name)
{
    for (int t = 0; t < CR_TYPE_COUNT; t++) {
        if (strcmp(name, dtype_table[t].name) == 0) {
            return &dtype_table[t];
        }
    }
    return NULL;
}

const crpy_dtype *
crpy_dtype_of_type(cr_type type)
{
    return &dtype_table[type];
}

/* NumPy's inexact kinds: floats and complex types. */
static int
is_inexact(const crpy_dtype *dtype)
{
    return dtype->kind == 'f' || dtype->kind == 'c';
}

/* NumPy's result rules, by kind: numpy.sum of bool and signed integers
 * gives int64, of unsigned ones uint64; numpy.mean of those gives float64
 * and sums in float64.  Floats and complex types keep their type, except
 * that numpy.mean of float16 sums in float32 (and of bfloat16 too, as its
 * sum does here). */
const crpy_dtype *
crpy_numpy_sum_dtype(const crpy_dtype *input)
{
    switch (input->kind) {
    case 'f':
    case 'c':
        return input;
    case 'u':
        return &dtype_table[CR_TYPE_UINT64];
    default:
        return &dtype_table[CR_TYPE_INT64];
    }
}

const crpy_dtype *
crpy_numpy_mean_dtype(const crpy_dtype *input)
{
    return is_inexact(input) ? input : &dtype_table[CR_TYPE_FLOAT64];
}

const crpy_dtype *
crpy_numpy_mean_sum_dtype(const crpy_dtype *input)
{
    /* A float's sum accumulator: float16's and bfloat16's is float32. */
    return is_inexact(input)
        ? &dtype_table[cr_accumulator_type(input->type, CR_OP_SUM)]
        : crpy_numpy_mean_dtype(input);
}

const crpy_dtype *
crpy_same_dtype(const crpy_dtype *input)
{
    return input;
}

const crpy_dtype *
crpy_bool_dtype(const crpy_dtype *input)
{
    (void)input;
    return &dtype_table[CR_TYPE_BOOL];
}

/* numpy.intp, the index's: int64 on the 64-bit platforms CUDA runs on. */
_Static_assert(sizeof(npy_intp) == sizeof(int64_t), "intp is int64");

const crpy_dtype *
crpy_index_dtype(const crpy_dtype *input)
{
    (void)input;
    return &dtype_table[CR_TYPE_INT64];
}

int
crpy_result_dtypes(const crpy_operator *op, const crpy_dtype *input,
                   PyArray_Descr *requested, const crpy_dtype **reduced,
                   const crpy_dtype **result)
{
    const crpy_dtype *given = NULL;
    if (requested != NULL) {
        if (!op->takes_dtype) {
            PyErr_Format(PyExc_TypeError, "cudareduce.%s takes no dtype",
                         op->name);
            return -1;
        }
        /* Any supported dtype, cast to unsafely, as numpy.sum and
         * numpy.mean do: it is both the dtype reduced into and the
         * result's. */
        if ((given = crpy_lookup_dtype(requested)) == NULL) {
            return -1;
        }
        if (op->float_dtype_for_floats && is_inexact(input)
            && !is_inexact(given)) {
            PyErr_SetString(PyExc_TypeError,
                            "If a is inexact, then dtype must be inexact");
            return -1;
        }
    }
    *reduced = given ? given : op->reduced_dtype(input);
    *result = given ? given : op->result_dtype(input);
    return 0;
}

/* --- NumPy's cast rule: what the kernels do ------------------------------ */

/* The convert NumPy's cast of a float into an integer result goes
 * through, on x86-64 (numpy_cast in cuda/kernels/casts.cuh): 32-bit
 * signed for the types it holds, 64-bit signed for uint32 and int64, and
 * its own sequence for uint64. */
static cr_type
float_to_integer_cast(cr_type result)
{
    switch (result) {
    case CR_TYPE_UINT32:
    case CR_TYPE_INT64:
        return CR_TYPE_INT64;
    case CR_TYPE_UINT64:
        return CR_TYPE_UINT64;
    default:
        return CR_TYPE_INT32;
    }
}

void
crpy_reduction_for(cr_type result, cr_op op, cr_request *request)
{
    const cr_type type = request->type;
    const crpy_dtype *elements = &dtype_table[type];
    request->cast = type;
    request->acc = cr_accumulator_type(result, op);
    request->op = is_inexact(elements) ? op : cr_op_without_nan(op);
    if (cr_op_gives_index(op)) {
        /* The elements' own values beside their index, whatever the
         * index's type. */
        request->acc = cr_accumulator_type(type, op);
    }
    else if (result == CR_TYPE_BOOL) {
        /* x != 0 is NumPy's cast to bool; or and and are max and min. */
        if (request->op == CR_OP_MAX) {
            request->op = CR_OP_SUM;
        }
        else if (request->op == CR_OP_MIN) {
            request->op = CR_OP_PROD;
        }
    }
    else if (dtype_table[result].kind == 'f' && request->acc != result
             && type != result) {
        /* Into float16 or bfloat16 (which accumulate wider): each element
         * rounded to it first, as NumPy casts before it adds. */
        request->cast = result;
    }
    else if (is_inexact(elements) && !is_inexact(&dtype_table[result])) {
        /* A complex element's real part, as NumPy casts it. */
        request->cast = float_to_integer_cast(result);
    }
}
