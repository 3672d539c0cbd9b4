/* errors.c: cuda/'s failures as Python exceptions.
 *
 * The module's CudaError is set here once, by the module's exec
 * (crpy_set_cuda_error), so that the files raising it need no module
 * object: the module state owns the reference, and its clear hands the
 * pointer back (crpy_forget_cuda_error). */
#include "extension.h"

/* Borrowed from the module state, which owns it (traverse and clear). */
static PyObject *cuda_error = NULL;

void
crpy_set_cuda_error(PyObject *type)
{
    cuda_error = type;
}

void
crpy_forget_cuda_error(PyObject *type)
{
    /* Only its own: another module object's exec may have set a newer
     * one, which stays. */
    if (cuda_error == type) {
        cuda_error = NULL;
    }
}

PyObject *
crpy_cuda_error(void)
{
    /* Past the module's clear no CudaError is left: its base stands in. */
    return cuda_error != NULL ? cuda_error : PyExc_RuntimeError;
}

void
crpy_raise_cr_error(cr_status status, const cr_error *failure)
{
    switch (status) {
    case CR_ERR_INVALID:
        PyErr_SetString(PyExc_ValueError, failure->message);
        break;
    case CR_ERR_NO_MEMORY:
        PyErr_Format(PyExc_MemoryError, "out of GPU memory: %s",
                     failure->message);
        break;
    case CR_ERR_NO_DEVICE:
        PyErr_Format(crpy_cuda_error(), "no usable CUDA device: %s",
                     failure->message);
        break;
    default:
        PyErr_SetString(crpy_cuda_error(), failure->message);
        break;
    }
}

int
crpy_run(const cr_request *request, void *result)
{
    cr_error failure;
    cr_status status;
    Py_BEGIN_ALLOW_THREADS
    status = cr_reduce(request, result, &failure);
    Py_END_ALLOW_THREADS
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return -1;
    }
    return 0;
}
