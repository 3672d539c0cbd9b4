/* module.c: cudareduce._cudareduce, the Python face of the CUDA layer.
 *
 * Turns Python arguments into a cr_request (method and dtype by table
 * lookup), calls cuda/ with the GIL released, and turns cr_status codes into
 * Python exceptions.  No kernel code and no CUDA header here.
 */
#define CUDAREDUCE_MODULE_C     /* the file that imports NumPy's API */
#include "extension.h"

#include <float.h>
#include <math.h>

typedef struct {
    PyObject *cuda_error;   /* cudareduce.CudaError */
} module_state;

static inline module_state *
get_module_state(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

static int
parse_method(PyObject *name, cr_method *method)
{
    if (!PyUnicode_Check(name)) {
        /* cudareduce.sum(a, 0): NumPy's second argument is the axis. */
        PyErr_Format(PyExc_TypeError,
                     "method must be a str (a name from "
                     "cudareduce.methods()), not %.100s: the second "
                     "argument of cudareduce's functions is the method, not "
                     "NumPy's axis; cudareduce reduces the whole array "
                     "(axis= takes None or every axis, by keyword)",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    for (int m = 0; m < CR_METHOD_COUNT; m++) {
        if (PyUnicode_CompareWithASCIIString(name, cr_method_name(m)) == 0) {
            *method = (cr_method)m;
            return 0;
        }
    }
    PyObject *valid = PyUnicode_FromString("");
    for (int m = 0; valid != NULL && m < CR_METHOD_COUNT; m++) {
        PyObject *joined = PyUnicode_FromFormat(
            "%U%s%s", valid, m ? ", " : "", cr_method_name(m));
        Py_SETREF(valid, joined);
    }
    if (valid != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "unknown method %R; valid methods: %U", name, valid);
        Py_DECREF(valid);
    }
    return -1;
}

/* threads: None (0: the method's own default for the input's size,
 * cr_plan_launch), or an int (not a bool, not a float), a power of two
 * in range. */
static int
parse_threads(PyObject *value, int *threads)
{
    if (value == Py_None) {
        *threads = 0;
        return 0;
    }
    if (!PyLong_Check(value) || PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "threads must be None or an int, not "
                     "%.100s", Py_TYPE(value)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long t = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (t == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow || t < CR_MIN_THREADS || t > CR_MAX_THREADS
        || (t & (t - 1)) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "threads must be a power of two from %d to %d, got %R",
                     CR_MIN_THREADS, CR_MAX_THREADS, value);
        return -1;
    }
    *threads = (int)t;
    return 0;
}

/* Large enough for any result of cr_reduce. */
typedef union {
    uint64_t u;
    int64_t i;
    float f;
    double d;
    npy_bool b;
    cr_indexed_result indexed;
    cr_counted_result counted;
} result_value;

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

/* The accumulator's value at `bytes` as a NumPy scalar of `dtype`, the
 * dtype the reduction is into.  A float32 accumulator of a float16
 * reduction rounds as NumPy's float16 loop rounds its float32 sum; past
 * float16's range it becomes inf directly, since NumPy's cast would warn
 * "overflow encountered in cast" where numpy.sum says "in reduce"
 * (report_like_numpy). */
static PyObject *
box_value(const unsigned char *bytes, cr_type acc, const crpy_dtype *dtype)
{
    /* The smallest float whose float16 rounding is inf (65504 is the
     * largest float16, and 65520 rounds to even, up). */
    const float float16_overflow = 65520.0f;
    float single;
    memcpy(&single, bytes, sizeof(single));
    if (acc == CR_TYPE_FLOAT32 && dtype->type == CR_TYPE_FLOAT16
        && isfinite(single) && fabsf(single) >= float16_overflow) {
        npy_half inf = single < 0 ? 0xfc00 : 0x7c00;
        return scalar_as(&inf, dtype, dtype);
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

/* cr_reduce's result for `request` as a NumPy scalar of `dtype`: the
 * accumulator's value, or an index operator's index.  Where a
 * NaN-skipping one found every element NaN (the value beside the index,
 * a float or complex accumulator, is NaN), numpy.nanargmin's ValueError
 * instead. */
static PyObject *
box_result(const result_value *value, const cr_request *request,
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

/* axis=: None, or an int or a tuple of ints naming every axis of an
 * ndim-dimensional array once: the whole array, the one reduction
 * cudareduce does.  Out-of-range axes raise NumPy's AxisError, repeated
 * ones its ValueError. */
static int
check_axis(PyObject *axis, int ndim)
{
    uint64_t seen = 0;
    int count = 0;
    if (axis == Py_None) {
        return 0;
    }
    PyObject *items = PyTuple_Check(axis) ? Py_NewRef(axis)
                                          : PyTuple_Pack(1, axis);
    if (items == NULL) {
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(items); k++) {
        PyObject *item = PyTuple_GET_ITEM(items, k);
        if (PyBool_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "axis must be None, an int or a "
                         "tuple of ints, not %.100s", Py_TYPE(item)->tp_name);
            goto error;
        }
        Py_ssize_t a = PyNumber_AsSsize_t(item, NULL);
        if (a == -1 && PyErr_Occurred()) {
            goto error;
        }
        if (a < -ndim || a >= ndim) {
            PyObject *numpy = PyImport_ImportModule("numpy.exceptions");
            PyObject *axis_error = numpy ? PyObject_GetAttrString(
                                               numpy, "AxisError") : NULL;
            PyObject *exc = axis_error ? PyObject_CallFunction(
                                             axis_error, "ni", a, ndim)
                                       : NULL;
            if (exc != NULL) {
                PyErr_SetObject(axis_error, exc);
                Py_DECREF(exc);
            }
            Py_XDECREF(axis_error);
            Py_XDECREF(numpy);
            goto error;
        }
        a = a < 0 ? a + ndim : a;
        if (seen & ((uint64_t)1 << a)) {
            PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
            goto error;
        }
        seen |= (uint64_t)1 << a;
        count++;
    }
    Py_DECREF(items);
    if (count != ndim) {
        PyErr_Format(PyExc_ValueError, "cudareduce reduces over every axis: "
                     "axis=%R leaves %d of the array's %d axes; pass "
                     "axis=None", axis, ndim - count, ndim);
        return -1;
    }
    return 0;

error:
    Py_DECREF(items);
    return -1;
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
        result_value value = {0};
        cr_error failure;
        cr_status status;
        cr_reduction_for(request->type, request->type, ops[k], &extreme.cast,
                         &extreme.acc, &extreme.op);
        Py_BEGIN_ALLOW_THREADS
        status = cr_reduce(&extreme, &value, &failure);
        Py_END_ALLOW_THREADS
        if (status != CR_OK) {
            crpy_raise_cr_error(status, &failure);
            return -1;
        }
        *out[k] = extreme.acc == CR_TYPE_FLOAT32 ? (double)value.f : value.d;
    }
    return 0;
}

/* The floats the convert of an integer cast takes without raising NumPy's
 * invalid flag (numpy_cast in cuda/operators.cuh) lie strictly between
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

/* The floating-point warnings numpy.sum gives for this reduction (also the
 * sum inside numpy.mean, and numpy.prod's): "overflow encountered in
 * reduce" when a float result is infinite (or NaN, by inf - inf) from
 * finite elements, "invalid value encountered in reduce" when it is NaN
 * from elements without one (NaN elements of a NaN-skipping operator do
 * not count),
 * or when float elements cast into an integer dtype are NaN, infinite or
 * out of the convert's range.  The elements are looked at (two more
 * reductions) only in those rare cases. */
static int
report_like_numpy(const cr_request *request, const crpy_dtype *input,
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
    if (elements_nan) {
        return 0;
    }
    if (!elements_inf && report_fp_error(1) < 0) {
        return -1;
    }
    return isnan(result) ? report_fp_error(0) : 0;
}

/* One call's reduction, as reduce and time_reduce open it: the operator,
 * the input (held until close_reduction_call), NumPy's dtypes, and the
 * request for cuda/. */
typedef struct {
    const crpy_operator *op;
    crpy_input input;
    const crpy_dtype *reduced, *result;
    cr_request request;
} reduction_call;

/* The operator `*op` becomes for elements of `input` (crpy_operator_for),
 * NumPy's reduced and result dtypes (with `requested`, a dtype= argument
 * or NULL), and the request's element type, cast, accumulator and kernel
 * operator: what reduce runs and block_sizes answers for.  0, or -1 with
 * a TypeError. */
static int
resolve_reduction(const crpy_operator **op, const crpy_dtype *input,
                  PyArray_Descr *requested, const crpy_dtype **reduced,
                  const crpy_dtype **result, cr_request *request)
{
    *op = crpy_operator_for(*op, input);
    if (crpy_result_dtypes(*op, input, requested, reduced, result) < 0) {
        return -1;
    }
    request->type = input->type;
    cr_reduction_for(request->type, (*reduced)->type, (*op)->kernel_op,
                     &request->cast, &request->acc, &request->op);
    return 0;
}

/* Parses the operator, method and threads, acquires the input (DLPack
 * producers asked to order their work before `stream` if `stream_given`),
 * checks `axis` against it and finds NumPy's dtypes (with `requested`, a
 * dtype= argument or NULL); fills the request but for its streams.  0, or
 * -1 with an exception; close the call either way. */
static int
open_reduction_call(PyObject *op_name, PyObject *obj, PyObject *method_name,
                    PyObject *threads_obj, PyObject *axis,
                    PyArray_Descr *requested, int stream_given,
                    uintptr_t stream, reduction_call *call)
{
    cr_request *request = &call->request;
    if ((call->op = crpy_operator_named(op_name)) == NULL
        || parse_method(method_name, &request->method) < 0
        || parse_threads(threads_obj, &request->threads) < 0
        || crpy_acquire_input(obj, cr_op_gives_index(call->op->kernel_op),
                              stream_given, stream, &call->input) < 0
        || check_axis(axis, call->input.ndim) < 0) {
        return -1;
    }
    if (resolve_reduction(&call->op, call->input.dtype, requested,
                          &call->reduced, &call->result, request) < 0) {
        return -1;
    }
    request->data = call->input.data;
    request->layout = &call->input.layout;
    request->n = call->input.layout.n;
    request->location = call->input.location;
    return 0;
}

/* The operator's result from the reduction's value, boxed as a scalar of
 * the reduced dtype (NULL: an exception is set), and cr_reduce's `value`:
 * the operator's finishing step (mean's divide, by the count of the
 * elements summed), or the value itself. */
static PyObject *
finish_reduction_call(const reduction_call *call, const result_value *value,
                      PyObject *reduction)
{
    if (reduction == NULL || call->op->finish == NULL) {
        return Py_XNewRef(reduction);
    }
    return call->op->finish(reduction,
                            cr_op_counts(call->request.op)
                                ? value->counted.count : call->request.n,
                            call->result);
}

static void
close_reduction_call(reduction_call *call)
{
    crpy_release_input(&call->input);
}

/* The result dtype's one element of a NumPy `out`: 0, or -1 with a
 * TypeError or ValueError. */
static int
check_numpy_out(PyArrayObject *out, const crpy_dtype *result)
{
    const crpy_dtype *dtype = NULL;
    if (PyArray_SIZE(out) != 1) {
        PyErr_Format(PyExc_ValueError, "out must have exactly one element, "
                     "not %zd", (Py_ssize_t)PyArray_SIZE(out));
        return -1;
    }
    if (!PyArray_ISWRITEABLE(out)) {
        PyErr_SetString(PyExc_ValueError, "out is read-only");
        return -1;
    }
    if (!PyArray_ISNOTSWAPPED(out)
        || (dtype = crpy_lookup_dtype(PyArray_DESCR(out))) == NULL
        || dtype->type != result->type) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "out must have the result's dtype "
                     "%s, not %S", result->name,
                     (PyObject *)PyArray_DESCR(out));
        return -1;
    }
    return 0;
}

/* A device `out` (CUDA array interface or DLPack), acquired into *out for
 * the request: one writable element of the result's dtype.  0, or -1 with
 * an exception; release *out either way. */
static int
acquire_device_out(PyObject *obj, int stream_given, uintptr_t stream,
                   reduction_call *call, crpy_input *out)
{
    if (crpy_acquire_input(obj, 0, stream_given, stream, out) < 0) {
        return -1;
    }
    if (out->location != CR_DEVICE) {
        PyErr_SetString(PyExc_TypeError, "out must be a NumPy array or a "
                        "device array (CUDA array interface or DLPack)");
        return -1;
    }
    if (out->layout.n != 1) {
        PyErr_Format(PyExc_ValueError, "out must have exactly one element, "
                     "not %lld", (long long)out->layout.n);
        return -1;
    }
    if (out->read_only) {
        PyErr_SetString(PyExc_ValueError, "out is read-only");
        return -1;
    }
    if (out->dtype->type != call->result->type) {
        PyErr_Format(PyExc_TypeError, "out must have the result's dtype "
                     "%s, not %s", call->result->name, out->dtype->name);
        return -1;
    }
    call->request.out = (void *)cr_layout_start(out->data, &out->layout);
    call->request.reduced = call->reduced->type;
    call->request.result = call->result->type;
    call->request.divide_by_n = call->op->divides_by_count;
    return 0;
}

PyDoc_STRVAR(reduce_doc,
"reduce(op, a, method, threads, dtype=None, stream=None, axis=None,\n"
"       out=None)\n--\n\n"
"Reduce all elements of the array-like `a` with operator `op` (one of\n"
"OPERATORS: 'sum', 'prod', 'mean', 'min', 'max', 'any', 'all',\n"
"'nansum', 'nanprod', 'nanmin', 'nanmax', 'nanmean', 'argmin', 'argmax',\n"
"'nanargmin', 'nanargmax') on the GPU; returns a NumPy scalar of\n"
"NumPy's result dtype (or `dtype`; an index operator's intp index, in\n"
"the C order of `a`), with NumPy's floating-point warnings.\n"
"Device arrays (__cuda_array_interface__, DLPack) are read in place.\n"
"`axis` may only name every axis (None: the whole array).  With `out`\n"
"(one element of the result dtype) the result is written there and\n"
"`out` returned: a device `out` without waiting and without warnings.\n"
"`threads` None is the method's default for the input's size.");

/* NumPy's ComplexWarning where a dtype= casts complex elements to a real
 * type (not bool: that cast discards nothing), after numpy.mean's warning
 * of an empty input, as NumPy's order is; at the caller of the cudareduce
 * function.  0, or -1 with the exception a warnings filter made of it. */
static int
warn_complex_to_real(const reduction_call *call, PyArray_Descr *requested)
{
    if (requested == NULL || call->input.dtype->kind != 'c'
        || call->reduced->kind == 'c' || call->reduced->kind == 'b') {
        return 0;
    }
    PyObject *module = PyImport_ImportModule("numpy.exceptions");
    PyObject *category = module == NULL ? NULL : PyObject_GetAttrString(
                                                     module, "ComplexWarning");
    int result = category == NULL
        ? -1
        : PyErr_WarnEx(category, "Casting complex values to real discards "
                       "the imaginary part", 2);
    Py_XDECREF(category);
    Py_XDECREF(module);
    return result;
}

static PyObject *
cudareduce_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "dtype",
                               "stream", "axis", "out", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *dtype_obj = Py_None, *stream_obj = Py_None, *axis = Py_None;
    PyObject *out = Py_None;
    PyArray_Descr *requested = NULL;
    PyObject *reduction = NULL, *result = NULL;
    reduction_call call = {0};
    crpy_input device_out = {0};
    int stream_given = 0;
    uintptr_t stream = 0;
    cr_error failure;
    cr_status status;
    result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO|OOOO:reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &dtype_obj,
                                     &stream_obj, &axis, &out)
        || crpy_parse_stream(stream_obj, &stream_given, &stream) < 0) {
        return NULL;
    }
    if (dtype_obj != Py_None
        && !PyArray_DescrConverter2(dtype_obj, &requested)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dtype must be a NumPy dtype, not "
                     "%R", dtype_obj);
        return NULL;
    }
    if (open_reduction_call(op_name, obj, method_name, threads_obj, axis,
                            requested, stream_given, stream, &call) < 0) {
        goto done;
    }
    if (call.request.n == 0 && call.op->empty_error != NULL) {
        PyErr_SetString(PyExc_ValueError, call.op->empty_error);
        goto done;
    }
    /* Level 2: the warning points at the caller of cudareduce.mean. */
    if (call.request.n == 0 && call.op->empty_warning != NULL
        && PyErr_WarnEx(PyExc_RuntimeWarning, call.op->empty_warning,
                        2) < 0) {
        goto done;
    }
    if (warn_complex_to_real(&call, requested) < 0) {
        goto done;
    }
    if (out != Py_None && PyArray_Check(out)
        && check_numpy_out((PyArrayObject *)out, call.result) < 0) {
        goto done;
    }
    if (out != Py_None && !PyArray_Check(out)
        && acquire_device_out(out, stream_given, stream, &call,
                              &device_out) < 0) {
        goto done;
    }
    if (crpy_choose_streams(&call.input, stream_given, stream,
                            &call.request) < 0) {
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_reduce(&call.request, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    if (call.request.out != NULL) {
        result = Py_NewRef(out);
        goto done;
    }
    /* What the producer asked to wait for is done: the checks below run
     * on the same stream, after it. */
    call.request.wait = 0;
    reduction = box_result(&value, &call.request, call.reduced);
    if (reduction != NULL
        && (call.op->selects_element
            || report_like_numpy(&call.request, call.input.dtype,
                                 call.reduced, reduction) == 0)) {
        result = finish_reduction_call(&call, &value, reduction);
    }
    if (result != NULL && out != Py_None
        && PyArray_SETITEM((PyArrayObject *)out,
                           PyArray_DATA((PyArrayObject *)out), result) < 0) {
        Py_CLEAR(result);
    }
    if (result != NULL && out != Py_None) {
        Py_SETREF(result, Py_NewRef(out));
    }

done:
    Py_XDECREF(reduction);
    crpy_release_input(&device_out);
    close_reduction_call(&call);
    Py_XDECREF(requested);
    return result;
}

/* A list of floats from a C array of timings. */
static PyObject *
times_to_list(const float *times_ms, int count)
{
    PyObject *list = PyList_New(count);
    for (int r = 0; list != NULL && r < count; r++) {
        PyObject *item = PyFloat_FromDouble(times_ms[r]);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, r, item);
    }
    return list;
}

/* The timing modes by name, in cr_timing_mode order. */
static const char *const timing_mode_names[CR_TIMING_MODE_COUNT] = {
    "launch", "cold", "batch"};

/* mode, buffers, warmup, reps, batch: a cr_timing, checked. */
static int
parse_timing(const char *mode, int buffers, int warmup, int reps, int batch,
             cr_timing *timing)
{
    int m = 0;
    while (m < CR_TIMING_MODE_COUNT && strcmp(mode, timing_mode_names[m])) {
        m++;
    }
    if (m == CR_TIMING_MODE_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown timing mode '%s': 'launch', "
                     "'cold' or 'batch'", mode);
        return -1;
    }
    if (buffers < 1 || warmup < 0 || reps < 1 || batch < 1
        || (batch > 1 && m != CR_TIMING_BATCH)) {
        PyErr_SetString(PyExc_ValueError, "buffers >= 1, warmup >= 0, "
                        "reps >= 1, batch >= 1 (> 1 only in 'batch' mode)");
        return -1;
    }
    *timing = (cr_timing){(cr_timing_mode)m, buffers, warmup, reps, batch};
    return 0;
}

PyDoc_STRVAR(time_reduce_doc,
"time_reduce(op, a, method, threads, buffers, warmup, reps, mode, batch=1)\n"
"--\n\n"
"Copy the contiguous host array `a` to `buffers` device buffers, then time\n"
"`reps` samples (after `warmup` untimed ones) of its reduction, rotating\n"
"among the buffers.  mode 'launch': each run between two CUDA events, the\n"
"host's launch latency included; 'cold': each run behind a kernel that\n"
"holds the stream until it is queued, L2 flushed first, an event after\n"
"every pass; 'batch': `batch` runs back to back behind that kernel, a\n"
"sample their mean.  Returns (result of the last run as a NumPy scalar,\n"
"times in ms, per-pass times in ms: a list per sample in 'cold' mode,\n"
"else None; empty lists for cub, whose launches are its own).");

static PyObject *
cudareduce_time_reduce(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "a", "method", "threads", "buffers",
                               "warmup", "reps", "mode", "batch", NULL};
    PyObject *op_name, *obj, *method_name, *threads_obj;
    PyObject *scalar = NULL, *times = NULL, *pass_lists = NULL;
    PyObject *result = NULL;
    const char *mode;
    int buffers, warmup, reps, batch = 1, passes = 0;
    float *times_ms = NULL, *pass_ms = NULL;
    cr_timing timing;
    reduction_call call = {0};
    cr_error failure;
    cr_status status;
    result_value value = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOiiis|i:time_reduce",
                                     keywords, &op_name, &obj, &method_name,
                                     &threads_obj, &buffers, &warmup, &reps,
                                     &mode, &batch)
        || parse_timing(mode, buffers, warmup, reps, batch, &timing) < 0) {
        return NULL;
    }
    if (open_reduction_call(op_name, obj, method_name, threads_obj, Py_None,
                            NULL, 0, 0, &call) < 0) {
        goto done;
    }
    if (call.input.location != CR_HOST || !call.input.layout.contiguous) {
        PyErr_SetString(PyExc_ValueError, "time_reduce takes a contiguous "
                        "host array");
        goto done;
    }
    times_ms = PyMem_Calloc((size_t)reps, sizeof(float));
    pass_ms = PyMem_Calloc((size_t)reps * CR_MAX_PASSES, sizeof(float));
    if (times_ms == NULL || pass_ms == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_reduce(&call.request, &timing, times_ms, pass_ms,
                            &passes, &value, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    scalar = box_result(&value, &call.request, call.reduced);
    Py_XSETREF(scalar, finish_reduction_call(&call, &value, scalar));
    times = times_to_list(times_ms, reps);
    if (timing.mode != CR_TIMING_COLD) {
        pass_lists = Py_NewRef(Py_None);
    }
    else if ((pass_lists = PyList_New(reps)) != NULL) {
        for (int r = 0; r < reps; r++) {
            PyObject *row = times_to_list(pass_ms + r * CR_MAX_PASSES,
                                          passes);
            if (row == NULL) {
                Py_CLEAR(pass_lists);
                break;
            }
            PyList_SET_ITEM(pass_lists, r, row);
        }
    }
    if (scalar != NULL && times != NULL && pass_lists != NULL) {
        result = PyTuple_Pack(3, scalar, times, pass_lists);
    }

done:
    Py_XDECREF(scalar);
    Py_XDECREF(times);
    Py_XDECREF(pass_lists);
    PyMem_Free(times_ms);
    PyMem_Free(pass_ms);
    close_reduction_call(&call);
    return result;
}

/* The probes by name, in cr_probe order. */
static const char *const probe_names[CR_PROBE_COUNT] = {
    "empty", "read", "host_copy", "launch_poll"};

PyDoc_STRVAR(time_probe_doc,
"time_probe(probe, nbytes, buffers, warmup, reps, mode, batch=1)\n--\n\n"
"Times a probe as time_reduce times a reduction: 'empty' (an empty\n"
"kernel; nbytes 0), 'read' (a read-only streaming kernel over nbytes: the\n"
"read ceiling), 'host_copy' (a copy of nbytes from pinned host memory) or\n"
"'launch_poll' (host wall time of a launch whose kernel writes a word to\n"
"mapped host memory, polled for: mode 'launch', nbytes 0).\n"
"Returns the times in ms.");

static PyObject *
cudareduce_time_probe(PyObject *module, PyObject *args)
{
    const char *name, *mode;
    long long nbytes;
    int buffers, warmup, reps, batch = 1, probe = 0;
    float *times_ms;
    PyObject *result = NULL;
    cr_timing timing;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTuple(args, "sLiiis|i:time_probe", &name, &nbytes,
                          &buffers, &warmup, &reps, &mode, &batch)
        || parse_timing(mode, buffers, warmup, reps, batch, &timing) < 0) {
        return NULL;
    }
    while (probe < CR_PROBE_COUNT && strcmp(name, probe_names[probe])) {
        probe++;
    }
    if (probe == CR_PROBE_COUNT || nbytes < 0
        || (nbytes == 0) != (probe == CR_PROBE_EMPTY
                             || probe == CR_PROBE_LAUNCH_POLL)) {
        PyErr_Format(PyExc_ValueError, "probe must be 'empty' or "
                     "'launch_poll' (nbytes 0), 'read' or 'host_copy' "
                     "(nbytes >= 1), got '%s', %lld", name, nbytes);
        return NULL;
    }
    times_ms = PyMem_Calloc((size_t)reps, sizeof(float));
    if (times_ms == NULL) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_time_probe((cr_probe)probe, nbytes, &timing, times_ms,
                           &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
    }
    else {
        result = times_to_list(times_ms, reps);
    }
    PyMem_Free(times_ms);
    return result;
}

/* A stream holder as a capsule; its destructor lets a held stream go, so
 * that a dropped holder never leaves the GPU spinning. */
static const char stream_hold_capsule[] = "cudareduce.stream_hold";

static void
stream_hold_capsule_free(PyObject *capsule)
{
    cr_stream_hold *hold = PyCapsule_GetPointer(capsule, stream_hold_capsule);
    Py_BEGIN_ALLOW_THREADS
    cr_stream_hold_destroy(hold);
    Py_END_ALLOW_THREADS
}

PyDoc_STRVAR(stream_hold_doc,
"stream_hold(stream)\n--\n\n"
"A holder for the CUDA stream `stream` (a cudaStream_t as an int, or a\n"
"CuPy/PyTorch stream) on the current device, for timing other libraries'\n"
"work the way time_reduce times ours: hold_stream(holder, flush_l2),\n"
"queue the work and its events, release_stream(holder).  Run the work\n"
"once unheld first: a kernel's first launch loads its module, which\n"
"waits for the device, so behind the holding kernel it would time out.");

static PyObject *
cudareduce_stream_hold(PyObject *module, PyObject *stream_obj)
{
    int given = 0;
    uintptr_t stream = 0;
    cr_stream_hold *hold = NULL;
    cr_error failure;
    cr_status status;
    PyObject *capsule;

    if (crpy_parse_stream(stream_obj, &given, &stream) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = cr_stream_hold_create(stream, &hold, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    capsule = PyCapsule_New(hold, stream_hold_capsule,
                            stream_hold_capsule_free);
    if (capsule == NULL) {
        cr_stream_hold_destroy(hold);
    }
    return capsule;
}

/* hold_stream and release_stream: one step of a holder. */
static PyObject *
stream_hold_step(PyObject *module, PyObject *capsule, int hold_it,
                 int flush_l2)
{
    cr_stream_hold *hold = PyCapsule_GetPointer(capsule, stream_hold_capsule);
    cr_error failure;
    cr_status status;
    if (hold == NULL) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = hold_it ? cr_stream_hold_hold(hold, flush_l2, &failure)
                     : cr_stream_hold_release(hold, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(hold_stream_doc,
"hold_stream(holder, flush_l2)\n--\n\n"
"Queues on the holder's stream (with flush_l2, after a write over twice\n"
"the L2 cache) a kernel that holds it until release_stream(holder).");

static PyObject *
cudareduce_hold_stream(PyObject *module, PyObject *args)
{
    PyObject *capsule;
    int flush_l2;
    if (!PyArg_ParseTuple(args, "Op:hold_stream", &capsule, &flush_l2)) {
        return NULL;
    }
    return stream_hold_step(module, capsule, 1, flush_l2);
}

PyDoc_STRVAR(release_stream_doc,
"release_stream(holder)\n--\n\n"
"Lets the holding kernel go and waits for the stream; CudaError if the\n"
"kernel gave up waiting (the work was not queued in time).");

static PyObject *
cudareduce_release_stream(PyObject *module, PyObject *capsule)
{
    return stream_hold_step(module, capsule, 0, 0);
}

PyDoc_STRVAR(plan_doc,
"plan(n, method, threads, dtype, sm_count)\n--\n\n"
"The launch passes of reducing n elements of `dtype`: a list of dicts\n"
"(n_in, blocks, threads, items_per_thread, shared_bytes).  threads None\n"
"is the method's default for n and dtype; sm_count None asks the\n"
"current device, and only for methods whose grid depends on it.");

static PyObject *
cudareduce_plan(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"n", "method", "threads", "dtype", "sm_count",
                               NULL};
    long long n;
    PyObject *method_name, *threads_obj, *sm_count_obj;
    PyArray_Descr *descr = NULL;
    PyObject *passes = NULL;
    const crpy_dtype *dtype;
    cr_method method;
    int threads;
    int sm_count = 0;
    cr_plan plan;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LOOO&O:plan", keywords,
                                     &n, &method_name, &threads_obj,
                                     PyArray_DescrConverter, &descr,
                                     &sm_count_obj)) {
        return NULL;
    }
    if (parse_method(method_name, &method) < 0
        || parse_threads(threads_obj, &threads) < 0
        || (dtype = crpy_lookup_dtype(descr)) == NULL) {
        goto done;
    }
    /* Before any device query: a bad n is the caller's error, GPU or not. */
    if (n < 0 || n > CR_MAX_ELEMENTS) {
        PyErr_Format(PyExc_ValueError, "n must be from 0 to 2^62, got %lld",
                     n);
        goto done;
    }
    if (sm_count_obj != Py_None) {
        if (!PyLong_Check(sm_count_obj) || PyBool_Check(sm_count_obj)) {
            PyErr_SetString(PyExc_TypeError,
                            "sm_count must be an int or None");
            goto done;
        }
        long value = PyLong_AsLong(sm_count_obj);
        if (value == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (value <= 0 || value > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "sm_count must be > 0, got %R",
                         sm_count_obj);
            goto done;
        }
        sm_count = (int)value;
    }
    else if (cr_method_needs_sm_count(method) && n > 0) {
        cr_device_info info;
        Py_BEGIN_ALLOW_THREADS
        status = cr_device_query(&info, &failure);
        Py_END_ALLOW_THREADS
        if (status != CR_OK) {
            PyErr_Format(crpy_cuda_error(), "the plan of method '%s' sizes "
                         "its grid from the GPU's SM count, and the current "
                         "device could not be asked (%s): pass sm_count= to "
                         "plan without a GPU", cr_method_name(method),
                         failure.message);
            goto done;
        }
        sm_count = info.sm_count;
    }
    const crpy_dtype *sum_dtype, *unused;
    if (crpy_result_dtypes(crpy_sum_operator(), dtype, NULL, &sum_dtype,
                           &unused) < 0) {
        goto done;
    }
    cr_type acc = cr_accumulator_type(sum_dtype->type, CR_OP_SUM);
    status = cr_plan_launch(n, method, threads, cr_type_size(dtype->type),
                            cr_type_size(acc), sm_count, &plan, &failure);
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    passes = PyList_New(plan.count);
    for (int p = 0; passes != NULL && p < plan.count; p++) {
        const cr_pass *pass = &plan.pass[p];
        PyObject *record = Py_BuildValue(
            "{s:L,s:L,s:i,s:L,s:n}", "n_in", (long long)pass->n_in,
            "blocks", (long long)pass->blocks, "threads", pass->threads,
            "items_per_thread", (long long)pass->items_per_thread,
            "shared_bytes", (Py_ssize_t)pass->shared_bytes);
        if (record == NULL) {
            Py_CLEAR(passes);
            break;
        }
        PyList_SET_ITEM(passes, p, record);
    }

done:
    Py_XDECREF(descr);
    return passes;
}

PyDoc_STRVAR(block_sizes_doc,
"block_sizes(op, dtype, method, reduce_dtype=None)\n--\n\n"
"The threads per block that `method` takes for operator `op` on elements\n"
"of `dtype` (with `reduce_dtype` the reduction's dtype= argument),\n"
"ascending (a call naming none runs the method's default).");

static PyObject *
cudareduce_block_sizes(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"op", "dtype", "method", "reduce_dtype",
                               NULL};
    PyObject *op_name, *method_name;
    PyArray_Descr *descr = NULL, *requested = NULL;
    PyObject *sizes = NULL;
    const crpy_operator *op;
    const crpy_dtype *dtype, *reduced, *result;
    cr_request request = {0};
    int threads[CR_BLOCK_SIZE_COUNT];
    int count = 0;
    cr_error failure;
    cr_status status;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO&O|O&:block_sizes",
                                     keywords, &op_name,
                                     PyArray_DescrConverter, &descr,
                                     &method_name, PyArray_DescrConverter2,
                                     &requested)) {
        Py_XDECREF(descr);
        return NULL;
    }
    if ((op = crpy_operator_named(op_name)) == NULL
        || parse_method(method_name, &request.method) < 0
        || (dtype = crpy_lookup_dtype(descr)) == NULL) {
        goto done;
    }
    if (resolve_reduction(&op, dtype, requested, &reduced, &result,
                          &request) < 0) {
        goto done;
    }
    status = cr_request_block_sizes(&request, threads, &count, &failure);
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    sizes = PyTuple_New(count);
    for (int k = 0; sizes != NULL && k < count; k++) {
        PyObject *size = PyLong_FromLong(threads[k]);
        if (size == NULL) {
            Py_CLEAR(sizes);
            break;
        }
        PyTuple_SET_ITEM(sizes, k, size);
    }

done:
    Py_XDECREF(descr);
    Py_XDECREF(requested);
    return sizes;
}

PyDoc_STRVAR(reduction_dtypes_doc,
"reduction_dtypes(op, dtype, reduce_dtype=None)\n--\n\n"
"The dtypes of operator `op` over elements of `dtype` (with\n"
"`reduce_dtype` the reduction's dtype= argument): (reduced, result,\n"
"accumulator).  reduced: NumPy's dtype of the reduction before its\n"
"finishing step (numpy.mean's sum, numpy.nanmean's); result: the\n"
"result's; accumulator: the one the kernels accumulate in (float32 for a\n"
"sum of float16, 64 bits for one of integers, which wrap alike), so that\n"
"partial reductions in it, reduced again and cast to `reduced`, give\n"
"what one reduction gives.  bfloat16 is float32 without ml_dtypes.");

static PyObject *
cudareduce_reduction_dtypes(PyObject *module, PyObject *args,
                            PyObject *kwargs)
{
    static char *keywords[] = {"op", "dtype", "reduce_dtype", NULL};
    PyObject *op_name;
    PyArray_Descr *descr = NULL, *requested = NULL;
    PyArray_Descr *reduced_descr = NULL, *result_descr = NULL;
    PyArray_Descr *acc_descr = NULL;
    PyObject *dtypes = NULL;
    const crpy_operator *op;
    const crpy_dtype *dtype, *reduced, *result;
    cr_request request = {0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO&|O&:reduction_dtypes",
                                     keywords, &op_name,
                                     PyArray_DescrConverter, &descr,
                                     PyArray_DescrConverter2, &requested)) {
        Py_XDECREF(descr);
        return NULL;
    }
    if ((op = crpy_operator_named(op_name)) == NULL
        || (dtype = crpy_lookup_dtype(descr)) == NULL
        || resolve_reduction(&op, dtype, requested, &reduced, &result,
                             &request) < 0) {
        goto done;
    }
    if ((reduced_descr = crpy_result_descr(reduced)) == NULL
        || (result_descr = crpy_result_descr(result)) == NULL
        || (acc_descr = crpy_result_descr(
                crpy_dtype_of_type(request.acc))) == NULL) {
        goto done;
    }
    dtypes = PyTuple_Pack(3, (PyObject *)reduced_descr,
                          (PyObject *)result_descr, (PyObject *)acc_descr);

done:
    Py_XDECREF(acc_descr);
    Py_XDECREF(result_descr);
    Py_XDECREF(reduced_descr);
    Py_XDECREF(descr);
    Py_XDECREF(requested);
    return dtypes;
}

PyDoc_STRVAR(methods_doc,
"methods()\n--\n\n"
"(name, description) of every method, in ladder order.");

static PyObject *
cudareduce_methods(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(CR_METHOD_COUNT);
    for (int m = 0; list != NULL && m < CR_METHOD_COUNT; m++) {
        PyObject *item = Py_BuildValue("(ss)", cr_method_name(m),
                                       cr_method_description(m));
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, m, item);
    }
    return list;
}

PyDoc_STRVAR(device_info_doc,
"device_info()\n--\n\n"
"The current CUDA device: dict of ordinal, name, compute_capability\n"
"(10 * major + minor), sm_count, l2_bytes, total_bytes, sm_clock_khz and\n"
"memory_clock_khz (peak), memory_bus_bits, driver_version and\n"
"runtime_version (1000 * major + 10 * minor), cccl_version (CCCL_VERSION\n"
"of the CUB compiled in).  Raises CudaError when there is none.");

static PyObject *
cudareduce_device_info(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    cr_device_info info;
    cr_error failure;
    cr_status status;

    Py_BEGIN_ALLOW_THREADS
    status = cr_device_query(&info, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    return Py_BuildValue(
        "{s:i,s:s,s:i,s:i,s:L,s:L,s:i,s:i,s:i,s:i,s:i,s:i}",
        "ordinal", info.ordinal, "name", info.name,
        "compute_capability", info.compute_capability,
        "sm_count", info.sm_count, "l2_bytes", (long long)info.l2_bytes,
        "total_bytes", (long long)info.total_bytes,
        "sm_clock_khz", info.sm_clock_khz,
        "memory_clock_khz", info.memory_clock_khz,
        "memory_bus_bits", info.memory_bus_bits,
        "driver_version", info.driver_version,
        "runtime_version", info.runtime_version,
        "cccl_version", info.cccl_version);
}

PyDoc_STRVAR(inject_host_fault_doc,
"_inject_host_fault(chunk)\n--\n\n"
"For tests: the next host-array reduction that reaches chunk `chunk`\n"
"(from 0) fails there, with its copy and reduction in flight, as if GPU\n"
"memory had run out (MemoryError); a negative chunk cancels.");

static PyObject *
cudareduce_inject_host_fault(PyObject *module, PyObject *arg)
{
    long long chunk = PyLong_AsLongLong(arg);
    if (chunk == -1 && PyErr_Occurred()) {
        return NULL;
    }
    cr_inject_host_fault(chunk);
    Py_RETURN_NONE;
}

static PyMethodDef cudareduce_functions[] = {
    {"reduce", (PyCFunction)(void (*)(void))cudareduce_reduce,
     METH_VARARGS | METH_KEYWORDS, reduce_doc},
    {"plan", (PyCFunction)(void (*)(void))cudareduce_plan,
     METH_VARARGS | METH_KEYWORDS, plan_doc},
    {"block_sizes", (PyCFunction)(void (*)(void))cudareduce_block_sizes,
     METH_VARARGS | METH_KEYWORDS, block_sizes_doc},
    {"reduction_dtypes",
     (PyCFunction)(void (*)(void))cudareduce_reduction_dtypes,
     METH_VARARGS | METH_KEYWORDS, reduction_dtypes_doc},
    {"time_reduce", (PyCFunction)(void (*)(void))cudareduce_time_reduce,
     METH_VARARGS | METH_KEYWORDS, time_reduce_doc},
    {"time_probe", cudareduce_time_probe, METH_VARARGS, time_probe_doc},
    {"stream_hold", cudareduce_stream_hold, METH_O, stream_hold_doc},
    {"hold_stream", cudareduce_hold_stream, METH_VARARGS, hold_stream_doc},
    {"release_stream", cudareduce_release_stream, METH_O,
     release_stream_doc},
    {"methods", cudareduce_methods, METH_NOARGS, methods_doc},
    {"device_info", cudareduce_device_info, METH_NOARGS, device_info_doc},
    {"_inject_host_fault", cudareduce_inject_host_fault, METH_O,
     inject_host_fault_doc},
    {NULL, NULL, 0, NULL}
};

PyDoc_STRVAR(cuda_error_doc,
"A CUDA runtime error: no device or driver, or a failed CUDA call.\n"
"The message names the CUDA error.");

static int
cudareduce_exec(PyObject *module)
{
    module_state *state = get_module_state(module);

    import_array1(-1);
    state->cuda_error = PyErr_NewExceptionWithDoc(
        "cudareduce.CudaError", cuda_error_doc, PyExc_RuntimeError, NULL);
    if (state->cuda_error == NULL) {
        return -1;
    }
    crpy_set_cuda_error(state->cuda_error);
    if (PyModule_AddObjectRef(module, "CudaError", state->cuda_error) < 0) {
        return -1;
    }
    /* The ladder steps' default threads per block. */
    if (PyModule_AddIntConstant(module, "DEFAULT_THREADS",
                                CR_DEFAULT_THREADS) < 0) {
        return -1;
    }
    /* methods() lists the ladder's steps first: this many. */
    if (PyModule_AddIntConstant(module, "LADDER_STEPS", CR_LADDER_COUNT) < 0) {
        return -1;
    }
    /* The operators reduce() takes, by name, in the table's order. */
    PyObject *operators = crpy_operator_names();
    const int added = operators != NULL
        ? PyModule_AddObjectRef(module, "OPERATORS", operators) : -1;
    Py_XDECREF(operators);
    return added < 0 ? -1 : 0;
}

static int
cudareduce_traverse(PyObject *module, visitproc visit, void *arg)
{
    Py_VISIT(get_module_state(module)->cuda_error);
    return 0;
}

static int
cudareduce_clear(PyObject *module)
{
    module_state *state = get_module_state(module);
    crpy_forget_cuda_error(state->cuda_error);
    Py_CLEAR(state->cuda_error);
    return 0;
}

static void
cudareduce_free(void *module)
{
    (void)cudareduce_clear((PyObject *)module);
    cr_release_resources();
}

static PyModuleDef_Slot cudareduce_slots[] = {
    {Py_mod_exec, cudareduce_exec},
    {0, NULL}
};

static struct PyModuleDef cudareduce_module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "cudareduce._cudareduce",
    .m_doc = "C extension of cudareduce: GPU reductions through cuda/.",
    .m_size = sizeof(module_state),
    .m_methods = cudareduce_functions,
    .m_slots = cudareduce_slots,
    .m_traverse = cudareduce_traverse,
    .m_clear = cudareduce_clear,
    .m_free = cudareduce_free,
};

PyMODINIT_FUNC
PyInit__cudareduce(void)
{
    return PyModuleDef_Init(&cudareduce_module);
}
