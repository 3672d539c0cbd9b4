/* streams.c: a call's streams, decided in one place.
 *
 * The caller's stream= (crpy_parse_stream), the stream a DLPack producer
 * is asked to order its work before (crpy_dlpack_stream), the current
 * streams of PyTorch (crpy_torch_stream) and CuPy, and the stream the
 * reduction runs on, with the producer's stream it waits for
 * (crpy_choose_streams).  The producers' own stream values are read where
 * their protocols are parsed (input.c's readers). */
#include "extension.h"

/* --- stream= and DLPack's consumer stream --------------------------- */

int
crpy_parse_stream(PyObject *obj, int *given, uintptr_t *handle)
{
    PyObject *value = NULL;
    *given = 0;
    if (obj == Py_None) {
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        value = Py_NewRef(obj);
    }
    else if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
        PyObject *pair = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
        if (pair == NULL) {
            return -1;
        }
        if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
            value = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
        }
        Py_DECREF(pair);
    }
    else if (PyObject_HasAttrString(obj, "cuda_stream")) {
        value = PyObject_GetAttrString(obj, "cuda_stream");
    }
    else if (PyObject_HasAttrString(obj, "ptr")) {
        value = PyObject_GetAttrString(obj, "ptr");
    }
    if (value == NULL || !PyLong_Check(value)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "stream must be None, an int "
                         "handle or a CUDA stream object (CuPy, PyTorch, "
                         "__cuda_stream__), not %.100s", Py_TYPE(obj)->tp_name);
        }
        Py_XDECREF(value);
        return -1;
    }
    unsigned long long h = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "stream handle must be an int "
                        ">= 0");
        return -1;
    }
    *given = 1;
    *handle = (uintptr_t)h;
    return 0;
}

uintptr_t
crpy_dlpack_stream(int given, uintptr_t stream)
{
    /* DLPack disallows 0; its 1 is the legacy default stream. */
    if (!given || stream == 0) {
        return CRPY_LEGACY_STREAM;
    }
    return stream;
}

/* --- The current streams of PyTorch and CuPy --------------------------- */

/* torch._C's _cuda_getCurrentRawStream(device) and _cuda_getDevice():
 * the handle torch.cuda.current_stream(device).cuda_stream gives, and
 * torch.cuda.current_device(), without building a torch.cuda.Stream in
 * Python.  Looked up once PyTorch is imported and held for the process,
 * as PyTorch's own module is; where a PyTorch lacks them, its public
 * torch.cuda functions serve instead. */
static PyObject *torch_raw_stream, *torch_device;
static int torch_looked_up;
/* PyTorch has set up CUDA: once it has, it stays so for the process, and
 * torch.cuda.is_initialized() (a Python call, most of a CuPy array's cost
 * of asking PyTorch for its stream) need not be asked again. */
static int torch_initialized;

/* A module if it is imported (a new reference), else NULL with no
 * exception: nothing is imported here. */
static PyObject *
imported(PyObject *name)
{
    return Py_XNewRef(PyDict_GetItem(PyImport_GetModuleDict(), name));
}

/* Looks up torch._C's functions once PyTorch is imported: 1 then, else
 * 0. */
static int
look_up_torch(const crpy_names *names)
{
    PyObject *c;
    if (torch_looked_up || (c = imported(names->torch_c)) == NULL) {
        return torch_looked_up;
    }
    torch_raw_stream = PyObject_GetAttrString(c, "_cuda_getCurrentRawStream");
    torch_device = torch_raw_stream == NULL
        ? NULL : PyObject_GetAttrString(c, "_cuda_getDevice");
    Py_DECREF(c);
    if (torch_device == NULL) {
        /* An older or newer PyTorch: the public functions, below. */
        PyErr_Clear();
        Py_CLEAR(torch_raw_stream);
    }
    torch_looked_up = 1;
    return 1;
}

/* An int that PyTorch or CuPy returned (a new reference, released; NULL:
 * their call failed): a stream handle (0: their default stream, the
 * legacy one) or a device number.  0, or -1 with an exception. */
static int
handle_of(PyObject *value, uintptr_t *number)
{
    if (value == NULL) {
        return -1;
    }
    unsigned long long n = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    if (n == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    *number = (uintptr_t)n;
    return 0;
}

int
crpy_torch_stream(const crpy_names *names, int device, uintptr_t *handle)
{
    PyObject *value;
    if (!look_up_torch(names)) {
        return 0;
    }
    if (torch_raw_stream != NULL) {
        PyObject *number = PyLong_FromLong(device);
        value = number == NULL ? NULL : PyObject_CallOneArg(torch_raw_stream,
                                                            number);
        Py_XDECREF(number);
    }
    else {
        PyObject *cuda = PyImport_ImportModule("torch.cuda");
        PyObject *stream = cuda == NULL ? NULL : PyObject_CallMethod(
                                                     cuda, "current_stream",
                                                     "i", device);
        value = stream == NULL ? NULL : PyObject_GetAttrString(
                                            stream, "cuda_stream");
        Py_XDECREF(stream);
        Py_XDECREF(cuda);
    }
    if (handle_of(value, handle) < 0) {
        return -1;
    }
    if (*handle == 0) {
        *handle = CRPY_LEGACY_STREAM;
    }
    return 1;
}

/* PyTorch's current stream inside torch.cuda.stream(s) or a
 * torch.cuda.graph capture: 1 with it and PyTorch's current device (its
 * stream's), 0 where it is PyTorch's default stream or PyTorch has not set
 * up CUDA (torch.cuda.is_initialized(): another stream needs that, and
 * nothing here makes PyTorch do it) or is not imported; -1 with an
 * exception. */
static int
torch_context(const crpy_names *names, int *device, uintptr_t *handle)
{
    uintptr_t number = 0;
    PyObject *cuda = imported(names->torch_cuda);
    if (cuda == NULL) {
        return 0;
    }
    int found = torch_initialized;
    if (!found) {
        PyObject *initialized = PyObject_CallMethod(cuda, "is_initialized",
                                                    NULL);
        found = initialized == NULL ? -1 : PyObject_IsTrue(initialized);
        Py_XDECREF(initialized);
        torch_initialized = found == 1;
    }
    if (found == 1 && !look_up_torch(names)) {
        found = 0;
    }
    if (found == 1) {
        PyObject *value = torch_device != NULL
            ? PyObject_CallNoArgs(torch_device)
            : PyObject_CallMethod(cuda, "current_device", NULL);
        found = handle_of(value, &number) < 0
                || crpy_torch_stream(names, (int)number, handle) < 0
            ? -1 : *handle != CRPY_LEGACY_STREAM;
        *device = (int)number;
    }
    Py_DECREF(cuda);
    return found;
}

/* CuPy's current stream inside `with stream:` (and its capture): 1 with
 * it and CuPy's current device, 0 where it is CuPy's default stream or
 * CuPy is not imported; -1 with an exception. */
static int
cupy_context(const crpy_names *names, int *device, uintptr_t *handle)
{
    uintptr_t number = 0;
    PyObject *cuda = imported(names->cupy_cuda);
    PyObject *current = NULL, *runtime = NULL;
    int found = 0;
    if (cuda == NULL) {
        return 0;
    }
    current = PyObject_CallMethod(cuda, "get_current_stream", NULL);
    /* 0: CuPy's default stream, the legacy one. */
    found = handle_of(current == NULL ? NULL : PyObject_GetAttrString(
                                                   current, "ptr"),
                      handle) < 0 ? -1 : *handle != 0;
    if (found == 1) {
        runtime = PyObject_GetAttrString(cuda, "runtime");
        found = handle_of(runtime == NULL ? NULL : PyObject_CallMethod(
                                                       runtime, "getDevice",
                                                       NULL),
                          &number) < 0 ? -1 : 1;
        *device = (int)number;
    }
    Py_XDECREF(runtime);
    Py_XDECREF(current);
    Py_DECREF(cuda);
    return found;
}

/* The user's current stream, where a call without stream= runs whatever
 * its data, as the library's own operations do: PyTorch's inside
 * torch.cuda.stream(s) or torch.cuda.graph; for data that names no stream
 * of its own (NumPy, a device array of interface version 2), CuPy's inside
 * `with stream:`.  1 and that stream where it is a stream of the call's
 * device, else 0; -1 with an exception.  The call's device, asked for
 * that, is kept in the request for cr_reduce. */
static int
context_stream(const crpy_input *input, cr_request *request,
               uintptr_t *stream)
{
    int context_device = 0, device = 0;
    cr_error failure;
    int found = torch_context(input->names, &context_device, stream);
    if (found == 0 && !input->has_producer_stream) {
        found = cupy_context(input->names, &context_device, stream);
    }
    if (found != 1) {
        return found;
    }
    /* A request without a usable device fails in cr_reduce, which says
     * why.  A device result's allocation asked already. */
    if (!request->device_known) {
        if (cr_request_device(request, &device, &failure) != CR_OK) {
            return 0;
        }
        request->device = device;
        request->device_known = 1;
    }
    return request->device == context_device;
}

int
crpy_choose_streams(const crpy_input *input, int given, uintptr_t stream,
                    cr_request *request)
{
    request->join = 0;
    if (!given && !input->torch_stream) {
        if ((given = context_stream(input, request, &stream)) < 0) {
            return -1;
        }
        /* The producer's stream did not choose this one: it waits for
         * the call's result in turn. */
        request->join = given;
    }
    request->wait = 0;
    if (given) {
        /* The caller's stream, after the producer's work. */
        request->stream = stream;
        if (input->has_producer_stream) {
            request->wait = input->producer_stream != stream;
            request->wait_stream = input->producer_stream;
        }
    }
    else {
        /* The producer's stream itself; with none reported (NumPy, Numba),
         * the per-thread default stream, which orders itself after the
         * legacy one where such producers queue their work. */
        request->stream = input->has_producer_stream
                          ? input->producer_stream : CRPY_PER_THREAD_STREAM;
    }
    return 0;
}
