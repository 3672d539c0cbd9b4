/* facts.c: what the module says about its reductions, reducing nothing.
 *
 * plan (the launch passes), block_sizes, reduction_dtypes, methods and
 * device_info: answers from cuda/'s tables and the device, parsed as
 * reduce() parses its arguments (reduce.c); OPERATOR_FACTS: each
 * operator's row (operators.c) and its kernel operator's (CR_OPS), for
 * the Python modules that reduce by them (dask.py, _masked.py, the
 * bench's data). */
#include "extension.h"

PyObject *
crpy_plan(PyObject *module, PyObject *args, PyObject *kwargs)
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
    if (crpy_parse_method(method_name, &method) < 0
        || crpy_parse_threads(threads_obj, &threads) < 0
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

/* Item k of a C array of ints, as an int. */
static PyObject *
int_item(const void *values, int k)
{
    return PyLong_FromLong(((const int *)values)[k]);
}

PyObject *
crpy_block_sizes(PyObject *module, PyObject *args, PyObject *kwargs)
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
        || crpy_parse_method(method_name, &request.method) < 0
        || (dtype = crpy_lookup_dtype(descr)) == NULL) {
        goto done;
    }
    if (crpy_resolve_reduction(&op, dtype, requested, &reduced, &result,
                               &request) < 0) {
        goto done;
    }
    status = cr_request_block_sizes(&request, threads, &count, &failure);
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        goto done;
    }
    sizes = crpy_sequence(count, 0, int_item, threads);

done:
    Py_XDECREF(descr);
    Py_XDECREF(requested);
    return sizes;
}

PyObject *
crpy_reduction_dtypes(PyObject *module, PyObject *args, PyObject *kwargs)
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
        || crpy_resolve_reduction(&op, dtype, requested, &reduced,
                                  &result, &request) < 0) {
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

PyObject *
crpy_methods(PyObject *module, PyObject *Py_UNUSED(ignored))
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

PyObject *
crpy_device_info(PyObject *module, PyObject *Py_UNUSED(ignored))
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

/* CR_OPS' names, by cr_op: a kernel operator as OPERATOR_FACTS names it. */
#define KERNEL_OP_NAME(NAME, ACCUMULATOR, WITHOUT_NAN, IDENTITY, RESULT)   \
    #NAME,
static const char *const kernel_op_names[CR_OP_COUNT] = {
    CR_OPS(KERNEL_OP_NAME)
};
#undef KERNEL_OP_NAME

static PyStructSequence_Field operator_facts_fields[] = {
    {"kernel_op", "the kernel operator, as CR_OPS names it ('SUM', "
                  "'NANMIN', 'ARGMIN', ...)"},
    {"without_nan", "the operator that reduces elements which cannot be "
                    "NaN (integers, bool) as this one does: nansum's "
                    "'sum', nanmean's 'mean'; itself where it skips none"},
    {"takes_dtype", "whether it takes dtype="},
    {"skips_nan", "whether its kernel operator skips NaN elements"},
    {"identity", "its kernel operator's empty reduction, 0 or 1 (what a "
                 "NaN-skipping sum or product puts for a NaN); None where "
                 "an empty reduction has no result"},
    {"empty_error", "NumPy's ValueError of an empty input, None where it "
                    "has a result"},
    {"gives_index", "whether the result is an element's C-order index"},
    {"counts", "whether the kernels count the elements they reduce "
               "(nanmean's numbers)"},
    {"divides_by_count", "whether the result is the reduction over a "
                         "count (a mean)"},
    {"selects_element", "whether the result is one of the elements or its "
                        "index (no floating-point warning can arise)"},
    {NULL, NULL}
};

static PyStructSequence_Desc operator_facts_desc = {
    .name = "cudareduce.OperatorFacts",
    .doc = "An operator's facts, as the extension's rows hold them.",
    .fields = operator_facts_fields,
    .n_in_sequence = sizeof(operator_facts_fields)
                     / sizeof(operator_facts_fields[0]) - 1,
};

/* The facts of `op`, an instance of `type`; NULL with an exception. */
static PyObject *
operator_facts_of(PyTypeObject *type, const crpy_operator *op)
{
    const cr_op kernel = op->kernel_op;
    int identity;
    PyObject *facts = PyStructSequence_New(type);
    PyObject *items[] = {
        PyUnicode_FromString(kernel_op_names[kernel]),
        PyUnicode_FromString(crpy_operator_without_nan(op)->name),
        PyBool_FromLong(op->takes_dtype),
        PyBool_FromLong(cr_op_skips_nan(kernel)),
        cr_op_identity(kernel, &identity) ? PyLong_FromLong(identity)
                                          : Py_NewRef(Py_None),
        op->empty_error != NULL ? PyUnicode_FromString(op->empty_error)
                                : Py_NewRef(Py_None),
        PyBool_FromLong(cr_op_gives_index(kernel)),
        PyBool_FromLong(cr_op_counts(kernel)),
        PyBool_FromLong(op->divides_by_count),
        PyBool_FromLong(op->selects_element),
    };
    const Py_ssize_t count = sizeof(items) / sizeof(items[0]);
    int failed = facts == NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        failed |= items[k] == NULL;
        if (facts != NULL) {
            PyStructSequence_SetItem(facts, k, items[k]);   /* steals */
        }
        else {
            Py_XDECREF(items[k]);
        }
    }
    if (failed) {
        Py_XDECREF(facts);
        return NULL;
    }
    return facts;
}

PyObject *
crpy_operator_facts(void)
{
    PyObject *facts = PyDict_New();
    PyObject *view = NULL;
    PyTypeObject *type = PyStructSequence_NewType(&operator_facts_desc);
    for (Py_ssize_t o = 0; facts != NULL && type != NULL
                           && o < crpy_operator_count(); o++) {
        const crpy_operator *op = crpy_operator_at(o);
        PyObject *item = operator_facts_of(type, op);
        if (item == NULL
            || PyDict_SetItemString(facts, op->name, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    if (facts != NULL && type != NULL) {
        view = PyDictProxy_New(facts);
    }

done:
    Py_XDECREF((PyObject *)type);
    Py_XDECREF(facts);
    return view;
}
