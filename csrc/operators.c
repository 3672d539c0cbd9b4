/* operators.c: the Python-level operators, one row each: the kernels'
 * operator, NumPy's dtype and empty-input rules, and the step that
 * finishes the kernels' value into the result.  Adding an operator is a
 * row here (and its kernel operator in cuda/ if it needs a new one). */
#include "extension.h"

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
    PyArray_Descr *type = PyArray_DescrFromType(result->typenum);
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

static const crpy_operator operators[] = {
    {.name = "sum", .kernel_op = CR_OP_SUM, .takes_dtype = 1,
     .reduced_dtype = crpy_numpy_sum_dtype,
     .result_dtype = crpy_numpy_sum_dtype},
    {.name = "mean", .kernel_op = CR_OP_SUM, .takes_dtype = 1,
     .empty_warning = "Mean of empty slice",
     .reduced_dtype = crpy_numpy_mean_sum_dtype,
     .result_dtype = crpy_numpy_mean_dtype, .finish = finish_mean,
     .divides_by_count = 1},
    {.name = "min", .kernel_op = CR_OP_MIN, .empty_error_ufunc = "minimum",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype},
    {.name = "max", .kernel_op = CR_OP_MAX, .empty_error_ufunc = "maximum",
     .reduced_dtype = crpy_same_dtype, .result_dtype = crpy_same_dtype},
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

const crpy_operator *
crpy_sum_operator(void)
{
    return &operators[0];
}
