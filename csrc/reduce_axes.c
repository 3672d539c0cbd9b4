/* reduce_axes.c: reduce() along some of the axes.
 *
 * The result's shape (NumPy's, keepdims included), its array (a NumPy
 * array for host data; for device data one of the input's own library,
 * from the allocator the package passes, or the caller's out), the empty
 * cases (no result; no element in each result), the request's rows
 * (axes.c), and NumPy's warnings and errors that a host result shows. */
#include "extension.h"

/* The result of reducing `reduced` axes of the input. */
typedef struct {
    int ndim;
    npy_intp shape[CR_MAX_DIMS];
    int axis_of[CR_MAX_DIMS];   /* the result's axis of a kept input axis,
                                 * indexed by input axis (-1: reduced and
                                 * not kept) */
    int64_t count;              /* results */
    int64_t length;             /* elements reduced into each */
} result_shape;

static void
shape_result(const crpy_input *input, uint64_t reduced, int keepdims,
             result_shape *shape)
{
    shape->ndim = 0;
    shape->count = 1;
    shape->length = 1;
    for (int d = 0; d < input->ndim; d++) {
        const int is_reduced = (reduced >> d) & 1;
        shape->axis_of[d] = is_reduced && !keepdims ? -1 : shape->ndim;
        if (is_reduced) {
            shape->length *= input->shape[d];
        }
        else {
            shape->count *= input->shape[d];
        }
        if (!is_reduced || keepdims) {
            shape->shape[shape->ndim++] = is_reduced ? 1 : input->shape[d];
        }
    }
}

/* Extent k of a shape, as an int. */
static PyObject *
extent_item(const void *shape, int k)
{
    return PyLong_FromSsize_t(((const npy_intp *)shape)[k]);
}

/* The shape as a tuple, for messages and the allocator. */
static PyObject *
shape_tuple(int ndim, const npy_intp *shape)
{
    return crpy_sequence(ndim, 0, extent_item, shape);
}

/* 0 if an out= of `ndim` dimensions `extents` has the result's shape,
 * else -1 with NumPy's ValueError. */
static int
check_out_shape(int ndim, const int64_t *extents, const result_shape *shape)
{
    int same = ndim == shape->ndim;
    for (int d = 0; same && d < ndim; d++) {
        same = extents[d] == shape->shape[d];
    }
    if (same) {
        return 0;
    }
    PyObject *want = shape_tuple(shape->ndim, shape->shape);
    npy_intp got_extents[CR_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        got_extents[d] = (npy_intp)extents[d];
    }
    PyObject *got = shape_tuple(ndim, got_extents);
    if (want != NULL && got != NULL) {
        PyErr_Format(PyExc_ValueError, "out has shape %R where the "
                     "result's is %R", got, want);
    }
    Py_XDECREF(want);
    Py_XDECREF(got);
    return -1;
}

/* An out= along axes of a dtype (`descr`) NumPy casts the result into:
 * any for a value (NumPy's unsafe cast), one that casts safely to intp
 * for an index (numpy.argmin's rule), an inexact one for nanmean of an
 * inexact input.  0, or -1 with NumPy's TypeError. */
static int
check_out_cast(const crpy_reduction_call *call, PyArray_Descr *descr)
{
    const cr_op op = call->request.op;
    if (cr_op_gives_index(op)) {
        PyArray_Descr *intp = PyArray_DescrFromType(NPY_INTP);
        const int safe = PyArray_CanCastTypeTo(descr, intp,
                                               NPY_SAFE_CASTING);
        if (!safe) {
            PyErr_Format(PyExc_TypeError, "Cannot cast array data from %R "
                         "to %R according to the rule 'safe'",
                         (PyObject *)descr, (PyObject *)intp);
        }
        Py_DECREF(intp);
        return safe ? 0 : -1;
    }
    if (cr_op_counts(op) && !(PyTypeNum_ISFLOAT(descr->type_num)
                                || PyTypeNum_ISCOMPLEX(descr->type_num))) {
        PyErr_SetString(PyExc_TypeError,
                        "If a is inexact, then out must be inexact");
        return -1;
    }
    return 0;
}

/* A NumPy result array of the call's result dtype, C-contiguous. */
static PyArrayObject *
new_numpy_result(const crpy_reduction_call *call, const result_shape *shape)
{
    PyArray_Descr *descr = crpy_result_descr(call->result);
    if (descr == NULL) {
        return NULL;
    }
    /* PyArray_Empty steals the dtype's reference. */
    return (PyArrayObject *)PyArray_Empty(shape->ndim,
                                          (npy_intp *)shape->shape, descr, 0);
}

/* The byte strides of an out, by input axis (reduced axes: 0). */
static void
out_strides_by_axis(const crpy_input *input, const result_shape *shape,
                    const int64_t *result_strides, int64_t *strides)
{
    for (int d = 0; d < input->ndim; d++) {
        strides[d] = shape->axis_of[d] < 0
                     ? 0 : result_strides[shape->axis_of[d]];
    }
}

/* Whether numpy.<test>(array).any(), for the host checks below: 1, 0, or
 * -1 with an exception. */
static int
any_where(PyObject *array, const char *test, PyObject *argument)
{
    PyObject *numpy = PyImport_ImportModule("numpy");
    PyObject *flags = numpy == NULL ? NULL
                      : argument == NULL
                          ? PyObject_CallMethod(numpy, test, "O", array)
                          : PyObject_CallMethod(numpy, test, "OO", array,
                                                argument);
    PyObject *any = flags == NULL ? NULL
                    : PyObject_CallMethod(flags, "any", NULL);
    const int truth = any == NULL ? -1 : PyObject_IsTrue(any);
    Py_XDECREF(any);
    Py_XDECREF(flags);
    Py_XDECREF(numpy);
    return truth;
}

/* What NumPy says of a host result that the device finished: a
 * NaN-skipping index operator's all-NaN row (the device's -1) is its
 * ValueError, a NaN-skipping min's or max's NaN row (all NaN) and
 * nanmean's row of nothing but NaN (where a row's NaN result may also
 * come from inf - inf: one more reduction tells) its RuntimeWarning
 * (level 3: at the caller of the cudareduce function); nansum and
 * nanprod say nothing of such rows. */
static int
report_host_result(const crpy_reduction_call *call, PyObject *result)
{
    const cr_op op = call->request.op;
    if (!cr_op_skips_nan(op)) {
        return 0;
    }
    if (cr_op_gives_index(op)) {
        PyObject *minus_one = PyLong_FromLong(-1);
        const int all_nan = minus_one == NULL ? -1
                            : any_where(result, "equal", minus_one);
        Py_XDECREF(minus_one);
        if (all_nan > 0) {
            PyErr_SetString(PyExc_ValueError, "All-NaN slice encountered");
        }
        return all_nan == 0 ? 0 : -1;
    }
    if ((call->result->kind != 'f' && call->result->kind != 'c')
        || !(call->op->selects_element || cr_op_counts(op))) {
        return 0;
    }
    int empty = any_where(result, "isnan", NULL);
    if (empty > 0 && cr_op_counts(op)) {
        empty = crpy_rows_all_nan(&call->request, call->input.dtype);
    }
    if (empty <= 0) {
        return empty;
    }
    return PyErr_WarnEx(PyExc_RuntimeWarning,
                        cr_op_counts(op) ? "Mean of empty slice"
                                         : "All-NaN slice encountered", 3);
}

int
crpy_reduces_every_axis(const crpy_reduction_call *call)
{
    const int ndim = call->input.ndim;
    return call->reduced_axes
           == (ndim == 64 ? UINT64_MAX : ((uint64_t)1 << ndim) - 1);
}

PyObject *
crpy_allocate_result(crpy_reduction_call *call, PyObject *allocate,
                     PyObject *obj, int ndim, const npy_intp *shape)
{
    int device;
    cr_error failure;
    cr_status status = cr_request_device(&call->request, &device, &failure);
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    /* The result is made there: the call's device, data and out's. */
    call->request.device = device;
    call->request.device_known = 1;
    if (allocate == Py_None) {
        PyErr_SetString(PyExc_TypeError, "a device array's result along "
                        "axes needs out= or an allocator");
        return NULL;
    }
    PyObject *extents = shape_tuple(ndim, shape);
    PyObject *array = extents == NULL ? NULL : PyObject_CallFunction(
        allocate, "OOsi", obj, extents, call->result->name, device);
    Py_XDECREF(extents);
    return array;
}

/* The results of rows of no element, as NumPy gives them: the empty
 * reduction's value in an array of the result's shape, finished as an
 * array (so with NumPy's warnings of an array: "invalid value
 * encountered in divide"); a new reference (an array, or a scalar that
 * every result takes), or NULL. */
static PyObject *
empty_results(crpy_reduction_call *call, const result_shape *shape)
{
    crpy_result_value value = {0};
    cr_request empty = call->request;
    PyObject *reduction = NULL, *array = NULL, *finished = NULL;
    empty.rows = NULL;
    empty.n = 0;
    empty.out = NULL;
    empty.out_on_host = 0;
    if (crpy_run(&empty, &value) < 0
        || (reduction = crpy_box_result(&value, &empty,
                                        call->reduced)) == NULL) {
        return NULL;
    }
    PyArray_Descr *descr = PyArray_DescrFromScalar(reduction);
    /* PyArray_Empty steals the dtype's reference. */
    array = descr == NULL ? NULL : PyArray_Empty(
        shape->ndim, (npy_intp *)shape->shape, descr, 0);
    if (array != NULL
        && PyArray_FillWithScalar((PyArrayObject *)array, reduction) == 0) {
        finished = crpy_finish_reduction_call(call, &value, array);
    }
    Py_XDECREF(array);
    Py_DECREF(reduction);
    return finished;
}

/* The input as rows: *rows and the request's data (and its layout where
 * the reduced axes are not one run: device data are then gathered kept
 * axes first, as the layout says, host data copied so by NumPy into
 * *copy).  0, or -1 with an exception. */
static int
plan_input_rows(crpy_reduction_call *call, const int64_t *out_strides,
                cr_rows *rows, cr_layout *gather, PyObject **copy)
{
    const crpy_input *input = &call->input;
    cr_request *request = &call->request;
    const int ndim = input->ndim;
    const int64_t item = input->dtype->itemsize;
    const int keep_direction = cr_op_gives_index(request->op);
    int64_t offset;
    int one_run = crpy_plan_rows(ndim, input->shape, input->strides,
                                 out_strides, item, call->reduced_axes,
                                 keep_direction, rows, &offset) == 0;
    request->layout = NULL;
    if (one_run && (input->location == CR_DEVICE
                    || PyArray_IS_C_CONTIGUOUS(
                           (PyArrayObject *)input->owner))) {
        request->data = (const char *)input->data + offset;
        return 0;
    }
    /* Kept axes first, in order, then the reduced ones, C-contiguous. */
    npy_intp order[CR_MAX_DIMS];
    int64_t shape[CR_MAX_DIMS], strides[CR_MAX_DIMS], outs[CR_MAX_DIMS];
    int64_t given[CR_MAX_DIMS], step = item;
    int k = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int d = 0; d < ndim; d++) {
            if ((int)((call->reduced_axes >> d) & 1) == pass) {
                order[k] = d;
                shape[k] = input->shape[d];
                given[k] = input->strides[d];
                outs[k++] = out_strides[d];
            }
        }
    }
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = step;
        step *= shape[d];
    }
    const int kept_count = ndim - __builtin_popcountll(call->reduced_axes);
    const uint64_t reduced = (ndim == 64 ? UINT64_MAX
                              : ((uint64_t)1 << ndim) - 1)
                             & ~(((uint64_t)1 << kept_count) - 1);
    crpy_plan_rows(ndim, shape, strides, outs, item, reduced, keep_direction,
                   rows, &offset);
    if (input->location == CR_DEVICE) {
        const char *refused = crpy_plan_layout(ndim, shape, given,
                                               (size_t)item, 1, gather);
        if (refused != NULL) {
            PyErr_Format(PyExc_ValueError, "array: %s", refused);
            return -1;
        }
        request->layout = gather;
        request->data = input->data;
        return 0;
    }
    PyArray_Dims dims = {order, ndim};
    PyObject *transposed = PyArray_Transpose((PyArrayObject *)input->owner,
                                             &dims);
    *copy = transposed == NULL ? NULL : PyArray_NewCopy(
        (PyArrayObject *)transposed, NPY_CORDER);
    Py_XDECREF(transposed);
    if (*copy == NULL) {
        return -1;
    }
    request->data = PyArray_DATA((PyArrayObject *)*copy);
    return 0;
}

PyObject *
crpy_reduce_axes(crpy_reduction_call *call, int keepdims, PyObject *out,
                 PyObject *allocate, PyObject *obj)
{
    const crpy_input *input = &call->input;
    cr_request *request = &call->request;
    result_shape shape;
    crpy_input device_out = {0};
    PyArrayObject *host_result = NULL;
    PyObject *target = NULL, *result = NULL, *copy = NULL, *empty = NULL;
    int64_t out_strides[CR_MAX_DIMS];
    cr_rows rows;
    cr_layout gather;
    crpy_result_value ignored;

    shape_result(input, call->reduced_axes, keepdims, &shape);
    if (shape.length == 0 && call->op->empty_error != NULL) {
        PyErr_SetString(PyExc_ValueError, call->op->empty_error);
        goto done;
    }
    if (out == Py_None && input->location == CR_DEVICE) {
        if ((target = crpy_allocate_result(call, allocate, obj, shape.ndim,
                                           shape.shape)) == NULL) {
            goto done;
        }
    }
    else if (out != Py_None) {
        target = Py_NewRef(out);
    }
    if (target != NULL && !PyArray_Check(target)) {
        /* A device array: filled where it is. */
        PyArray_Descr *descr = NULL;
        if (crpy_acquire_device_out(target, call, 1, &device_out) < 0
            || check_out_shape(device_out.ndim, device_out.shape,
                               &shape) < 0
            || (descr = crpy_descr(device_out.dtype)) == NULL) {
            goto done;
        }
        const int refused = check_out_cast(call, descr);
        Py_DECREF(descr);
        if (refused < 0) {
            goto done;
        }
        request->out = (void *)device_out.data;
        out_strides_by_axis(input, &shape, device_out.strides, out_strides);
    }
    else {
        /* A host result: a fresh C-contiguous array, copied into a NumPy
         * out= after (which may be strided, or of another byte order). */
        if (target != NULL) {
            PyArrayObject *given = (PyArrayObject *)target;
            int64_t extents[CR_MAX_DIMS];
            for (int d = 0; d < PyArray_NDIM(given); d++) {
                extents[d] = PyArray_DIM(given, d);
            }
            if (!PyArray_ISWRITEABLE(given)) {
                PyErr_SetString(PyExc_ValueError, "out is read-only");
                goto done;
            }
            if (check_out_shape(PyArray_NDIM(given), extents, &shape) < 0
                || check_out_cast(call, PyArray_DESCR(given)) < 0) {
                goto done;
            }
        }
        if ((host_result = new_numpy_result(call, &shape)) == NULL) {
            goto done;
        }
        int64_t strides[CR_MAX_DIMS];
        for (int d = 0; d < shape.ndim; d++) {
            strides[d] = PyArray_STRIDE(host_result, d);
        }
        request->out = PyArray_DATA(host_result);
        request->out_on_host = 1;
        out_strides_by_axis(input, &shape, strides, out_strides);
    }
    request->reduced = call->reduced->type;
    request->result = host_result != NULL ? call->result->type
                                          : device_out.dtype->type;
    request->divide_by_n = call->op->divides_by_count;
    /* Level 3: at the caller of the cudareduce function.  numpy.mean
     * warns of its count 0 even where no result is left. */
    if (shape.length == 0 && call->op->empty_warning != NULL
        && PyErr_WarnEx(PyExc_RuntimeWarning, call->op->empty_warning,
                        3) < 0) {
        goto done;
    }
    if (shape.count > 0 && shape.length == 0) {
        if ((empty = empty_results(call, &shape)) == NULL) {
            goto done;
        }
        if (host_result != NULL
            && (PyArray_Check(empty)
                ? PyArray_CopyInto(host_result, (PyArrayObject *)empty)
                : PyArray_FillWithScalar(host_result, empty)) < 0) {
            goto done;
        }
    }
    if (shape.count > 0 && (shape.length > 0 || host_result == NULL)) {
        if (plan_input_rows(call, out_strides, &rows, &gather, &copy) < 0) {
            goto done;
        }
        request->rows = &rows;
        request->n = shape.count * shape.length;
        if (crpy_choose_streams(input, call->stream_given, call->stream,
                                request) < 0
            || crpy_run(request, &ignored) < 0) {
            goto done;
        }
        /* NumPy's order: nanmean's sum warns before its count. */
        if (host_result != NULL
            && ((!call->op->selects_element
                 && crpy_report_rows_like_numpy(request, input->dtype,
                                                call->reduced,
                                                host_result) < 0)
                || report_host_result(call, (PyObject *)host_result) < 0)) {
            goto done;
        }
    }
    if (host_result == NULL) {
        result = Py_NewRef(target);
    }
    else if (target != NULL) {
        if (PyArray_CopyInto((PyArrayObject *)target, host_result) == 0) {
            result = Py_NewRef(target);
        }
    }
    else {
        result = Py_NewRef((PyObject *)host_result);
    }

done:
    crpy_release_input(&device_out);
    Py_XDECREF(empty);
    Py_XDECREF(copy);
    Py_XDECREF(host_result);
    Py_XDECREF(target);
    return result;
}
