/* input.c: any array-like -> (pointer, layout, dtype) for cr_reduce: the
 * protocols in the order they are tried, each read by its own file.
 *
 * Protocols, in the order they are tried:
 *   1. a numpy.ndarray: host memory, never a GPU protocol
 *      (numpy_input.c);
 *   2. __cuda_array_interface__ (CuPy, Numba, PyTorch CUDA tensors):
 *      device memory, read in place; a torch.Tensor itself first, from its
 *      attributes, as PyTorch's interface would give them; an interface
 *      that names no stream of an object that speaks DLPack too (JAX's)
 *      goes to 3, which waits for the producer's work
 *      (cuda_array_interface.c);
 *   3. __dlpack__ / __dlpack_device__ (JAX, PyTorch, ...): kDLCUDA read in
 *      place, kDLCPU through numpy.from_dlpack as host memory
 *      (dlpack.c);
 *   4. anything else through numpy.asarray, as host memory
 *      (numpy_input.c).
 * Every check of a malformed interface happens in them, before any CUDA
 * call.
 */
#include "extension.h"

/* obj.name, or NULL without an exception when obj has no such attribute. */
static PyObject *
optional_attribute(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
    }
    return value;
}

/* Whether `obj`, whose __cuda_array_interface__ is `interface`, is read
 * through DLPack instead: 1 where the interface names no stream (version
 * 2, JAX's) and `obj` also speaks DLPack, which orders the producer's
 * pending work before the consumer's stream.  JAX's version-2 interface
 * does not wait for that work: a mean right after jax.device_put read
 * zeros.  0 or 1; no exception. */
static int
waits_through_dlpack(PyObject *obj, PyObject *interface,
                     const crpy_names *names)
{
    return PyDict_Check(interface)
           && PyDict_GetItem(interface, names->stream) == NULL
           && PyObject_HasAttr(obj, names->dlpack)
           && PyObject_HasAttr(obj, names->dlpack_device);
}

/* `obj` through its __cuda_array_interface__, or through DLPack (where
 * it has no interface, or waits_through_dlpack), or else as anything
 * numpy.asarray takes.  0, or -1 with an exception. */
static int
acquire_protocols(PyObject *obj, int stream_given, uintptr_t stream,
                  crpy_input *input)
{
    int result;
    const crpy_names *names = input->names;
    PyObject *attribute = optional_attribute(obj,
                                             names->cuda_array_interface);
    if (attribute == NULL && PyErr_Occurred()) {
        return -1;      /* the property raised: e.g. a tensor needing grad */
    }
    if (attribute != NULL && !waits_through_dlpack(obj, attribute, names)) {
        result = crpy_acquire_cai(obj, attribute, input);
        Py_DECREF(attribute);
        return result;
    }
    Py_XDECREF(attribute);
    if ((attribute = optional_attribute(obj, names->dlpack_device))
        != NULL) {
        result = crpy_acquire_dlpack(obj, attribute, stream_given, stream,
                                     input);
        Py_DECREF(attribute);
        return result;
    }
    return PyErr_Occurred() ? -1 : crpy_acquire_host(obj, input);
}

/* --- the entry points ---------------------------------------------------- */

int
crpy_acquire_input(PyObject *obj, const crpy_names *names, int c_order,
                   int stream_given, uintptr_t stream, crpy_input *input)
{
    int result;

    memset(input, 0, sizeof(*input));
    input->names = names;
    input->c_order = c_order;
    if (PyArray_Check(obj)) {
        result = crpy_acquire_host(obj, input);
    }
    else if ((result = crpy_acquire_torch_tensor(obj, input)) != 0) {
        result = result < 0 ? -1 : 0;
    }
    else {
        result = acquire_protocols(obj, stream_given, stream, input);
    }
    if (result < 0) {
        crpy_release_input(input);
    }
    return result;
}

void
crpy_release_input(crpy_input *input)
{
    crpy_release_dlpack(input);
    Py_CLEAR(input->owner);
}
