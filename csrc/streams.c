/* streams.c: a call's streams, decided in one place.
 *
 * The caller's stream= (crpy_parse_stream), the stream a DLPack producer
 * is asked to order its work before (crpy_dlpack_stream), and the stream
 * the reduction runs on, with the producer's stream it waits for
 * (crpy_choose_streams).  The producers' own stream values are read where
 * their protocols are parsed (input.c). */
#include "extension.h"

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

void
crpy_choose_streams(const crpy_input *input, int given, uintptr_t stream,
                    cr_request *request)
{
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
}
