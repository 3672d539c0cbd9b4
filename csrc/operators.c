/* operators.c: the Python-level operators, one row each: the kernels'
 * operator, NumPy's dtype and empty-input rules, and the step that
 * finishes the kernels' value into the result.  Adding an operator is a
 * row here (and its kernel operator in cuda/ if it needs a new one);
 * Python reads its facts from the row (OPERATOR_FACTS, facts.c), and
 * docs/ARCHITECTURE.md names the few other places. */
#include "extension.h"

#include <math.h>
#include <string.h>

/* numpy.mean's last step: the sum divided by the count, with NumPy's own
 * scalar arithmetic (so its rounding and its divide warnings), then made a
 * scalar of the result dtype: `ret.dtype.type(ret / rcount)` in NumPy's
 * _methods._mean, rcount an intp. */
static PyObject *
finish_mean(PyObject *sum, int64_t n, const crpy_dtype *result)
{
    npy_intp count = (npy_intp)n;
    PyObject *quotient = NULL, *mean = NULL;
    PyArray_Descr *intp = PyArray_DescrFromType(NPY_INTP);
    PyArray_Descr *type = crpy_result_descr(result);
    PyObject *rcount = intp ? PyArray_Scalar(&count, intp, NULL) : NULL;
    if (rcount != NULL && type != NULL
        && (quotient = PyNumber_TrueDivide(sum, rcount)) != NULL) {
        mean = PyObject_CallOneArg((PyObject *)type->typeobj, quotient);
    }
    Py_XDECREF(quotient);
    Py_XDECREF(rcount);
    Py_XDECREF(type);
    Py_XDECREF(intp);
    return mean;
}

/* numpy.nanmean of floats and complex types: the sum of the non-NaN
 * elements over their count as numpy.mean divides; none (every element
 * NaN, or none at all): NaN (nan+nanj for a complex one, 0/0 in complex
 * arithmetic) with NumPy's warning only, since numpy.nanmean divides
 * under errstate(invalid="ignore"). */
static PyObject *
finish_nanmean(PyObject *sum, int64_t count, const crpy_dtype *result)
{
    if (count > 0) {
        return finish_mean(sum, count, result);
    }
    if (PyErr_WarnEx(PyExc_RuntimeWarning, "Mean of empty slice", 2) < 0) {
        return NULL;
    }
    PyArray_Descr *type = crpy_result_descr(result);
    PyObject *value = type == NULL ? NULL
                      : result->kind == 'c'
                          ? PyComplex_FromDoubles(Py_NAN, Py_NAN)
                          : PyFloat_FromDouble(Py_NAN);
    PyObject *nan = value == NULL ? NULL : PyObject_CallOneArg(
        (PyObject *)type->typeobj, value);
    Py_XDECREF(value);
    Py_XDECREF(type);
    return nan;
}

/* numpy.nanmin and nanmax: NaN where every element is NaN (a complex
 * value, where either part is: x != x), with NumPy's warning (level 2: at
 * the caller of the cudareduce function). */
static PyObject *
finish_nan_extremum(PyObject *value, int64_t n, const crpy_dtype *result)
{
    /* Not PyObject_RichCompareBool, which takes an object equal to
     * itself. */
    PyObject *unequal = PyObject_RichCompare(value, value, Py_NE);
    const int nan = unequal == NULL ? -1 : PyObject_IsTrue(unequal);
    Py_XDECREF(unequal);
    if (nan < 0 || (nan && PyErr_WarnEx(PyExc_RuntimeWarning,
                                        "All-NaN slice encountered",
                                        2) < 0)) {
        return NULL;
    }
    return Py_NewRef(value);
}

/* NumPy's rules per operator: numpy.sum and numpy.prod (and their NaN
 * forms) take dtype= and promote small integers; min and max keep the
 * type and have no identity (NumPy's error names the ufunc); any and all
 * give bool; argmin and argmax (and their NaN forms, whose all-NaN input
 * module.c refuses as NumPy does) give an intp index. */
static const crpy_operator operators[] = {
    {.name = "sum", .kernel_op = CR_OP_SUM, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype,
     .result_dtype = crpy_numpy_sum_dtype},
    {.name = "prod", .kernel_op = CR_OP_PROD, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype,
     .result_dtype = crpy_numpy_sum_dtype},
    {.name = "mean", .kernel_op = CR_OP_SUM, .takes_dtype = 1,
     .empty_warning = "Mean of empty slice",
     .reduced_dtype = crpy_numpy_mean_sum_dtype,
     .result_dtype = crpy_numpy_mean_dtype, .finish = finish_mean,
     .divides_by_count = 1},
    {.name = "min", .kernel_op = CR_OP_MIN, .empty_error = "zero-size array to reduction operation minimum "
                    "which has no identity",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype,
     .selects_element = 1},
    {.name = "max", .kernel_op = CR_OP_MAX, .empty_error = "zero-size array to reduction operation maximum "
                    "which has no identity",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype,
     .selects_element = 1},
    {.name = "any", .kernel_op = CR_OP_SUM,
     .reduced_dtype = crpy_bool_dtype, .result_dtype = crpy_bool_dtype,
     .selects_element = 1},
    {.name = "all", .kernel_op = CR_OP_PROD,
     .reduced_dtype = crpy_bool_dtype, .result_dtype = crpy_bool_dtype,
     .selects_element = 1},
    {.name = "nansum", .kernel_op = CR_OP_NANSUM, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype,
     .result_dtype = crpy_numpy_sum_dtype},
    {.name = "nanprod", .kernel_op = CR_OP_NANPROD, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype,
     .result_dtype = crpy_numpy_sum_dtype},
    {.name = "nanmin", .kernel_op = CR_OP_NANMIN, .empty_error = "zero-size array to reduction operation fmin "
                    "which has no identity",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype,
     .finish = finish_nan_extremum,
     .selects_element = 1},
    {.name = "nanmax", .kernel_op = CR_OP_NANMAX, .empty_error = "zero-size array to reduction operation fmax "
                    "which has no identity",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype,
     .finish = finish_nan_extremum,
     .selects_element = 1},
    {.name = "nanmean", .kernel_op = CR_OP_NANMEAN, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype, .result_dtype = crpy_same_dtype,
     .finish = finish_nanmean, .divides_by_count = 1,
     .float_dtype_for_floats = 1, .others_as = "mean"},
    {.name = "argmin", .kernel_op = CR_OP_ARGMIN,
     .empty_error = "attempt to get argmin of an empty sequence",
     .reduced_dtype = crpy_index_dtype, .result_dtype = crpy_index_dtype,
     .selects_element = 1},
    {.name = "argmax", .kernel_op = CR_OP_ARGMAX,
     .empty_error = "attempt to get argmax of an empty sequence",
     .reduced_dtype = crpy_index_dtype, .result_dtype = crpy_index_dtype,
     .selects_element = 1},
    {.name = "nanargmin", .kernel_op = CR_OP_NANARGMIN,
     .empty_error = "attempt to get argmin of an empty sequence",
     .reduced_dtype = crpy_index_dtype, .result_dtype = crpy_index_dtype,
     .selects_element = 1},
    {.name = "nanargmax", .kernel_op = CR_OP_NANARGMAX,
     .empty_error = "attempt to get argmax of an empty sequence",
     .reduced_dtype = crpy_index_dtype, .result_dtype = crpy_index_dtype,
     .selects_element = 1},
};

#define OPERATOR_COUNT (sizeof(operators) / sizeof(operators[0]))

const crpy_operator *
crpy_operator_named(PyObject *name)
{
    for (size_t o = 0; PyUnicode_Check(name) && o < OPERATOR_COUNT; o++) {
        if (PyUnicode_CompareWithASCIIString(name, operators[o].name) == 0) {
            return &operators[o];
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown operator %R", name);
    return NULL;
}

/* The row named `name`, NULL if none. */
static const crpy_operator *
row_named(const char *name)
{
    for (size_t o = 0; o < OPERATOR_COUNT; o++) {
        if (strcmp(operators[o].name, name) == 0) {
            return &operators[o];
        }
    }
    return NULL;
}

const crpy_operator *
crpy_operator_for(const crpy_operator *op, const crpy_dtype *input)
{
    const crpy_operator *other =
        op->others_as != NULL && input->kind != 'f' && input->kind != 'c'
            ? row_named(op->others_as) : NULL;
    return other != NULL ? other : op;
}

const crpy_operator *
crpy_operator_without_nan(const crpy_operator *op)
{
    if (!cr_op_skips_nan(op->kernel_op)) {
        return op;
    }
    if (op->others_as != NULL) {
        return row_named(op->others_as);
    }
    const cr_op plain = cr_op_without_nan(op->kernel_op);
    for (size_t o = 0; o < OPERATOR_COUNT; o++) {
        const crpy_operator *row = &operators[o];
        if (row->kernel_op == plain && row->reduced_dtype == op->reduced_dtype
            && row->result_dtype == op->result_dtype) {
            return row;
        }
    }
    return op;
}

const crpy_operator *
crpy_sum_operator(void)
{
    return &operators[0];
}

Py_ssize_t
crpy_operator_count(void)
{
    return (Py_ssize_t)OPERATOR_COUNT;
}

const crpy_operator *
crpy_operator_at(Py_ssize_t index)
{
    return &operators[index];
}

const char *
crpy_operator_name(Py_ssize_t index)
{
    return operators[index].name;
}
