/* numpy_result.c: cr_reduce's value as NumPy's result.
 *
 * Boxing the value into a NumPy scalar of the result dtype
 * (crpy_box_result), and the floating-point warnings numpy.sum would give
 * for it, or for the host results of a reduction along axes, raised by
 * NumPy itself so that numpy.errstate applies (crpy_report_like_numpy,
 * crpy_report_rows_like_numpy). */
#include "extension.h"

#include <float.h>
#include <math.h>

/* The value at `value`, of dtype `from`, as a NumPy scalar of the
 * result dtype of `to` (crpy_result_descr; an unsafe cast, as numpy.sum's
 * dtype= does: integers keep their low bits). */
static PyObject *
scalar_as(const void *value, const crpy_dtype *from, const crpy_dtype *to)
{
    PyObject *scalar = NULL, *array = NULL, *cast = NULL;
    PyArray_Descr *to_descr = NULL;
    PyArray_Descr *descr = crpy_descr(from);
    if (descr == NULL) {
        return NULL;
    }
    scalar = PyArray_Scalar((void *)value, descr, NULL);
    if (scalar == NULL || (to_descr = crpy_result_descr(to)) == NULL) {
        goto done;
    }
    if (PyArray_EquivTypes(descr, to_descr)) {
        cast = Py_NewRef(scalar);
        goto done;
    }
    if ((array = PyArray_FromScalar(scalar, NULL)) == NULL) {
        goto done;
    }
    /* CastToType steals the dtype's reference. */
    cast = PyArray_CastToType((PyArrayObject *)array, to_descr, 0);
    to_descr = NULL;
    if (cast != NULL) {
        cast = PyArray_Return((PyArrayObject *)cast);
    }
done:
    Py_XDECREF(array);
    Py_XDECREF(to_descr);
    Py_XDECREF(scalar);
    Py_DECREF(descr);
    return cast;
}

/* Whether the finite float `magnitude` (>= 0) becomes inf in the float
 * dtype `type` as NumPy casts it: float16 and float32 rounded once to
 * nearest even (65520 and 0x1.ffffffp127, halfway past each one's
 * largest finite value, round up to inf), bfloat16 through float32, as
 * ml_dtypes casts (0x1.ffp127 is its halfway). */
static int
rounds_to_inf(double magnitude, cr_type type)
{
    const double float32_overflow = 0x1.ffffffp127;
    switch (type) {
    case CR_TYPE_FLOAT16:
        return magnitude >= 65520.0;
    case CR_TYPE_FLOAT32:
        return magnitude >= float32_overflow;
    case CR_TYPE_BFLOAT16:
        return magnitude >= float32_overflow
               || (float)magnitude >= 0x1.ffp127f;
    default:
        return 0;
    }
}

/* The accumulator's value at `bytes` as a NumPy scalar of `dtype`, the
 * dtype the reduction is into.  A float accumulator wider than that dtype
 * (float16's and bfloat16's float32 sums, every float product's float64)
 * whose value is past the dtype's range becomes inf directly, since
 * NumPy's cast would warn "overflow encountered in cast" where numpy.sum
 * and numpy.prod say "in reduce" (crpy_report_like_numpy). */
static PyObject *
box_value(const unsigned char *bytes, cr_type acc, const crpy_dtype *dtype)
{
    if ((acc == CR_TYPE_FLOAT32 || acc == CR_TYPE_FLOAT64)
        && dtype->kind == 'f' && dtype->type != acc) {
        float single;
        double wide;
        if (acc == CR_TYPE_FLOAT32) {
            memcpy(&single, bytes, sizeof(single));
            wide = single;
        }
        else {
            memcpy(&wide, bytes, sizeof(wide));
        }
        if (isfinite(wide) && rounds_to_inf(fabs(wide), dtype->type)) {
            const double inf = wide < 0 ? -INFINITY : INFINITY;
            return scalar_as(&inf,
                             crpy_dtype_of_type(CR_TYPE_FLOAT64), dtype);
        }
    }
    return scalar_as(bytes, crpy_dtype_of_type(acc), dtype);
}

/* Whether the value at `bytes`, of the float or complex type `type`, is
 * NaN (a complex one where either part is). */
static int
value_is_nan(const unsigned char *bytes, cr_type type)
{
    float single[2];
    double wide[2];
    switch (type) {
    case CR_TYPE_FLOAT32:
    case CR_TYPE_COMPLEX64:
        memcpy(single, bytes, cr_type_size(type));
        return isnan(single[0])
               || (type == CR_TYPE_COMPLEX64 && isnan(single[1]));
    default:
        memcpy(wide, bytes, cr_type_size(type));
        return isnan(wide[0])
               || (type == CR_TYPE_COMPLEX128 && isnan(wide[1]));
    }
}

PyObject *
crpy_box_result(const crpy_result_value *value, const cr_request *request,
                const crpy_dtype *dtype)
{
    const unsigned char *bytes = (const unsigned char *)value;
    if (cr_op_gives_index(request->op) && cr_op_skips_nan(request->op)
        && value_is_nan(value->indexed.value, request->acc)) {
        PyErr_SetString(PyExc_ValueError, "All-NaN slice encountered");
        return NULL;
    }
    return box_value(bytes + cr_result_value_offset(request->acc,
                                                    request->op),
                     cr_result_value_type(request->acc, request->op),
                     dtype);
}

/* Reports a floating-point error of a reduction as numpy.sum does,
 * `overflow` or else `invalid`: NumPy itself raises it, on a two-element
 * float64 reduction that sets the same flag, so that numpy.errstate
 * applies exactly as it does to NumPy's own reductions (ignore, warn,
 * raise, call, print, log; "overflow encountered in reduce").  0, or -1
 * with the exception numpy.errstate asked for. */
static int
report_fp_error(int overflow)
{
    double values[2] = {overflow ? DBL_MAX : INFINITY,
                        overflow ? DBL_MAX : -INFINITY};
    npy_intp size = 2;
    PyObject *numpy = NULL, *add = NULL, *array = NULL, *sum = NULL;
    if ((numpy = PyImport_ImportModule("numpy")) != NULL
        && (add = PyObject_GetAttrString(numpy, "add")) != NULL
        && (array = PyArray_SimpleNew(1, &size, NPY_FLOAT64)) != NULL) {
        memcpy(PyArray_DATA((PyArrayObject *)array), values, sizeof(values));
        sum = PyObject_CallMethod(add, "reduce", "O", array);
    }
    Py_XDECREF(numpy);
    Py_XDECREF(add);
    Py_XDECREF(array);
    if (sum == NULL) {
        return -1;
    }
    Py_DECREF(sum);
    return 0;
}

/* The smallest and largest element of the request's input as doubles
 * (NaN if any is NaN, or for an operator that skips NaN if all are): two
 * more reductions, run only to decide a warning. */
static int
reduce_extremes(const cr_request *request, double *low, double *high)
{
    double *out[2] = {low, high};
    const int skips_nan = cr_op_skips_nan(request->op);
    const cr_op ops[2] = {skips_nan ? CR_OP_NANMIN : CR_OP_MIN,
                          skips_nan ? CR_OP_NANMAX : CR_OP_MAX};
    for (int k = 0; k < 2; k++) {
        cr_request extreme = *request;
        crpy_result_value value = {0};
        extreme.exact = 0;
        crpy_reduction_for(request->type, ops[k], &extreme);
        if (crpy_run(&extreme, &value) < 0) {
            return -1;
        }
        *out[k] = extreme.acc == CR_TYPE_FLOAT32 ? (double)value.f : value.d;
    }
    return 0;
}

/* The floats the convert of an integer cast takes without raising NumPy's
 * invalid flag (numpy_cast in cuda/kernels/casts.cuh) lie strictly between
 * *below and *above: those whose truncation fits int32 or int64, or for
 * uint64 what NumPy's two-step convert takes.  Below -2^63 the next double
 * is -2^63 - 2048. */
static void
cast_range(cr_type cast, double *below, double *above)
{
    const double below_int64 = -9223372036854777856.0;
    switch (cast) {
    case CR_TYPE_INT32:
        *below = -2147483649.0;
        *above = 2147483648.0;
        break;
    case CR_TYPE_UINT64:
        *below = below_int64;
        *above = 18446744073709551616.0;
        break;
    default:
        *below = below_int64;
        *above = 9223372036854775808.0;
        break;
    }
}

int
crpy_report_like_numpy(const cr_request *request, const crpy_dtype *input,
                       const crpy_dtype *reduced, PyObject *reduction)
{
    const int into_integer = reduced->kind == 'i' || reduced->kind == 'u';
    double low = 0.0, high = 0.0, result = 0.0;
    int elements_nan = 0, elements_inf = 0;
    if (reduced->kind == 'f') {
        if ((result = PyFloat_AsDouble(reduction)) == -1.0
            && PyErr_Occurred()) {
            return -1;
        }
        if (isfinite(result)) {
            return 0;
        }
    }
    else if (!into_integer || input->kind != 'f' || request->n == 0) {
        return 0;       /* exact: integers, or a logical or */
    }
    if (input->kind == 'f') {
        if (reduce_extremes(request, &low, &high) < 0) {
            return -1;
        }
        elements_nan = isnan(low) || isnan(high);
        elements_inf = isinf(low) || isinf(high);
        if (elements_nan && cr_op_skips_nan(request->op)) {
            return 0;   /* every element NaN, each the identity */
        }
    }
    if (into_integer) {
        double below, above;
        cast_range(request->cast, &below, &above);
        return (elements_nan || low <= below || high >= above)
               ? report_fp_error(0) : 0;
    }
    return crpy_report_float_like_numpy(result, elements_nan, elements_inf);
}

int
crpy_report_float_like_numpy(double result, int elements_nan,
                             int elements_inf)
{
    if (isfinite(result) || elements_nan) {
        return 0;
    }
    if (!elements_inf && report_fp_error(1) < 0) {
        return -1;
    }
    return isnan(result) ? report_fp_error(0) : 0;
}


/* The reduction by `op` (one that selects an element: a min or max) of
 * each row of the request's rows, into a new host array of the input's
 * dtype, a row each; NULL with an exception. */
static PyObject *
reduce_rows_to_host(const cr_request *request, const crpy_dtype *input,
                    cr_op op)
{
    cr_request extreme = *request;
    crpy_result_value ignored = {0};
    npy_intp count = (npy_intp)request->rows->rows;
    PyArray_Descr *descr = crpy_descr(input);
    PyObject *values = descr == NULL ? NULL
        : PyArray_SimpleNewFromDescr(1, &count, descr);
    if (values == NULL) {
        return NULL;
    }
    crpy_reduction_for(request->type, op, &extreme);
    extreme.out = PyArray_DATA((PyArrayObject *)values);
    extreme.out_on_host = 1;
    extreme.reduced = input->type;
    extreme.result = input->type;
    extreme.divide_by_n = 0;
    if (crpy_run(&extreme, &ignored) < 0) {
        Py_CLEAR(values);
    }
    return values;
}

/* The smallest and largest element of each row of the request's rows, as
 * doubles, into low[r] and high[r] (NaN as reduce_extremes gives them):
 * two more reductions along the same axes. */
static int
reduce_row_extremes(const cr_request *request, const crpy_dtype *input,
                    double *low, double *high)
{
    double *out[2] = {low, high};
    const int skips_nan = cr_op_skips_nan(request->op);
    const cr_op ops[2] = {skips_nan ? CR_OP_NANMIN : CR_OP_MIN,
                          skips_nan ? CR_OP_NANMAX : CR_OP_MAX};
    for (int k = 0; k < 2; k++) {
        PyObject *values = reduce_rows_to_host(request, input, ops[k]);
        PyObject *wide = values == NULL ? NULL
            : PyArray_Cast((PyArrayObject *)values, NPY_DOUBLE);
        Py_XDECREF(values);
        if (wide == NULL) {
            return -1;
        }
        memcpy(out[k], PyArray_DATA((PyArrayObject *)wide),
               (size_t)request->rows->rows * sizeof(double));
        Py_DECREF(wide);
    }
    return 0;
}

int
crpy_rows_all_nan(const cr_request *request, const crpy_dtype *input)
{
    PyObject *values = reduce_rows_to_host(request, input, CR_OP_NANMAX);
    PyObject *numpy = NULL, *nan = NULL, *any = NULL;
    int truth = -1;
    if (values != NULL
        && (numpy = PyImport_ImportModule("numpy")) != NULL
        && (nan = PyObject_CallMethod(numpy, "isnan", "O", values)) != NULL
        && (any = PyObject_CallMethod(nan, "any", NULL)) != NULL) {
        truth = PyObject_IsTrue(any);
    }
    Py_XDECREF(any);
    Py_XDECREF(nan);
    Py_XDECREF(numpy);
    Py_XDECREF(values);
    return truth;
}

int
crpy_report_rows_like_numpy(const cr_request *request,
                            const crpy_dtype *input,
                            const crpy_dtype *reduced,
                            PyArrayObject *results)
{
    const int into_integer = reduced->kind == 'i' || reduced->kind == 'u';
    const int64_t rows = request->rows->rows;
    int overflow = 0, invalid = 0, status = -1;
    PyObject *wide = NULL;
    const double *value = NULL;
    double *low = NULL, *high = NULL, below = 0.0, above = 0.0;
    if (reduced->kind != 'f' && !(into_integer && input->kind == 'f')) {
        return 0;       /* exact: integers, a logical or, or complex */
    }
    if (reduced->kind == 'f') {
        if ((wide = PyArray_Cast(results, NPY_DOUBLE)) == NULL) {
            return -1;
        }
        value = (const double *)PyArray_DATA((PyArrayObject *)wide);
        int64_t r = 0;
        while (r < rows && isfinite(value[r])) {
            r++;
        }
        if (r == rows) {
            status = 0;
            goto done;
        }
    }
    if (input->kind == 'f') {
        low = PyMem_Malloc(2 * (size_t)rows * sizeof(double));
        if (low == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        high = low + rows;
        if (reduce_row_extremes(request, input, low, high) < 0) {
            goto done;
        }
    }
    cast_range(request->cast, &below, &above);
    /* NumPy's flags are the whole call's: each is reported once, from
     * whichever rows set it, as crpy_report_like_numpy decides a row. */
    for (int64_t r = 0; r < rows; r++) {
        const int elements_nan = low != NULL
                                 && (isnan(low[r]) || isnan(high[r]));
        const int elements_inf = low != NULL
                                 && (isinf(low[r]) || isinf(high[r]));
        if (elements_nan && cr_op_skips_nan(request->op)) {
            continue;   /* every element NaN, each the identity */
        }
        if (into_integer) {
            invalid |= elements_nan || low[r] <= below || high[r] >= above;
            continue;
        }
        if (elements_nan || isfinite(value[r])) {
            continue;
        }
        overflow |= !elements_inf;
        invalid |= isnan(value[r]);
    }
    status = (overflow && report_fp_error(1) < 0)
             || (invalid && report_fp_error(0) < 0) ? -1 : 0;

done:
    PyMem_Free(low);
    Py_XDECREF(wide);
    return status;
}
