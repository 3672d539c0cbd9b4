/* dlpack.c: __dlpack__ and __dlpack_device__ (JAX, PyTorch, ...): a CUDA
 * tensor read in place, its producer asked to order its pending work
 * before the consumer's stream; a CPU one as a host array
 * (numpy_input.c); the tensor handed back to its producer's deleter on
 * release. */
#include "extension.h"

/* --- DLPack (https://dmlc.github.io/dlpack), the ABI-stable subset ------- */

enum {
    DL_CPU = 1,
    DL_CUDA = 2,
    DL_CUDA_MANAGED = 13,
};

/* dl_managed_tensor_versioned's flags: the data must not be written. */
#define DL_FLAG_READ_ONLY ((uint64_t)1 << 0)

enum {
    DL_INT = 0,
    DL_UINT = 1,
    DL_FLOAT = 2,
    DL_BFLOAT = 4,
    DL_COMPLEX = 5,
    DL_BOOL = 6,
};

typedef struct {
    int32_t device_type;
    int32_t device_id;
} dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} dl_data_type;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_data_type dtype;
    int64_t *shape;
    int64_t *strides;       /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed_tensor {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor *self);
} dl_managed_tensor;

typedef struct dl_managed_tensor_versioned {
    struct {
        uint32_t major;
        uint32_t minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor_versioned *self);
    uint64_t flags;
    dl_tensor dl_tensor;
} dl_managed_tensor_versioned;

/* --- reading a tensor ---------------------------------------------------- */

/* DLPack's type code of a dtype: by its kind, bfloat16's its own. */
static int
dlpack_code(const crpy_dtype *dtype)
{
    if (dtype->type == CR_TYPE_BFLOAT16) {
        return DL_BFLOAT;
    }
    switch (dtype->kind) {
    case 'b':
        return DL_BOOL;
    case 'i':
        return DL_INT;
    case 'u':
        return DL_UINT;
    case 'c':
        return DL_COMPLEX;
    default:
        return DL_FLOAT;
    }
}

static const crpy_dtype *
dlpack_dtype(dl_data_type dtype)
{
    for (int t = 0; dtype.lanes == 1 && t < CR_TYPE_COUNT; t++) {
        const crpy_dtype *row = crpy_dtype_of_type((cr_type)t);
        if (dlpack_code(row) == dtype.code
            && 8 * row->itemsize == dtype.bits) {
            return row;
        }
    }
    PyErr_Format(PyExc_TypeError, "cudareduce does not support the DLPack "
                 "dtype (code %d, %d bits, %d lanes)", dtype.code,
                 dtype.bits, dtype.lanes);
    return NULL;
}

/* obj.__dlpack__(stream=...): the consumer's stream, so that the producer
 * orders its pending work before ours.  A producer that takes no stream
 * argument is called without one. */
static PyObject *
call_dlpack(PyObject *obj, uintptr_t consumer_stream)
{
    PyObject *stream = PyLong_FromUnsignedLongLong(consumer_stream);
    PyObject *method = NULL, *args = NULL, *kwargs = NULL, *capsule = NULL;
    if (stream == NULL
        || (method = PyObject_GetAttrString(obj, "__dlpack__")) == NULL
        || (args = PyTuple_New(0)) == NULL
        || (kwargs = Py_BuildValue("{s:O}", "stream", stream)) == NULL) {
        goto done;
    }
    capsule = PyObject_Call(method, args, kwargs);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        capsule = PyObject_CallNoArgs(method);
    }
done:
    Py_XDECREF(stream);
    Py_XDECREF(method);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return capsule;
}

/* call_dlpack with CUDA device `device` current, and the caller's
 * current device current again after it: a producer exports a tensor of
 * its device, whose streams the consumer stream is one of, and PyTorch's
 * refuses to with another device current ("Can't export tensors on a
 * different CUDA device index": test_devices_gpu.py), as CuPy's
 * from_dlpack never has it.  Without a usable device there is none to
 * make current: the producer is asked all the same, its capsule checked,
 * and the reduction raises the no-device error. */
static PyObject *
call_dlpack_on(PyObject *obj, int device, uintptr_t consumer)
{
    cr_error failure;
    int previous, unused;
    cr_status status = cr_device_exchange(device, &previous, &failure);
    if (status == CR_ERR_NO_DEVICE) {
        return call_dlpack(obj, consumer);
    }
    if (status != CR_OK) {
        crpy_raise_cr_error(status, &failure);
        return NULL;
    }
    PyObject *capsule = call_dlpack(obj, consumer);
    status = cr_device_exchange(previous, &unused, &failure);
    if (status != CR_OK) {
        Py_XDECREF(capsule);    /* unused: its deleter frees the tensor */
        if (!PyErr_Occurred()) {
            crpy_raise_cr_error(status, &failure);
        }
        return NULL;
    }
    return capsule;
}

/* Without a caller's stream, the data is ready on the consumer stream the
 * producer was given (crpy_dlpack_stream; for a subclass of torch.Tensor,
 * PyTorch's current stream, which its __dlpack__ waits for no further),
 * and the reduction runs there, as on a producer's stream. */
static int
acquire_dlpack_device(PyObject *obj, int device, int stream_given,
                      uintptr_t stream, crpy_input *input)
{
    int64_t strides[CR_MAX_DIMS];
    dl_tensor *tensor;
    uintptr_t consumer = crpy_dlpack_stream(stream_given, stream);
    int torch = !stream_given && crpy_is_torch_instance(obj, input->names);
    if (torch && (torch = crpy_torch_stream(input->names, device,
                                            &consumer)) < 0) {
        return -1;
    }
    PyObject *capsule = call_dlpack_on(obj, device, consumer);
    if (capsule == NULL) {
        return -1;
    }
    if (!stream_given) {
        input->has_producer_stream = 1;
        input->producer_stream = consumer;
        input->torch_stream = torch;
    }
    /* Take ownership: rename the capsule so that its destructor leaves the
     * tensor to us, and hand it back through the deleter when done. */
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        dl_managed_tensor *managed = PyCapsule_GetPointer(capsule,
                                                          "dltensor");
        tensor = &managed->dl_tensor;
        input->dl_managed = managed;
        input->dl_versioned = 0;
        (void)PyCapsule_SetName(capsule, "used_dltensor");
    }
    else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_tensor_versioned *managed = PyCapsule_GetPointer(
            capsule, "dltensor_versioned");
        tensor = &managed->dl_tensor;
        input->dl_managed = managed;
        input->dl_versioned = 1;
        input->read_only = (managed->flags & DL_FLAG_READ_ONLY) != 0;
        (void)PyCapsule_SetName(capsule, "used_dltensor_versioned");
    }
    else {
        PyErr_SetString(PyExc_ValueError, "__dlpack__ did not return an "
                        "unused DLPack capsule (named 'dltensor')");
        Py_DECREF(capsule);
        return -1;
    }
    input->owner = capsule;
    input->location = CR_DEVICE;
    if (tensor->device.device_type != DL_CUDA
        && tensor->device.device_type != DL_CUDA_MANAGED) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor is on device "
                     "type %d, not CUDA as __dlpack_device__ said",
                     tensor->device.device_type);
        return -1;
    }
    if (tensor->ndim < 0 || tensor->ndim > CR_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "DLPack tensor of %d dimensions; at "
                     "most %d", tensor->ndim, CR_MAX_DIMS);
        return -1;
    }
    if ((input->dtype = dlpack_dtype(tensor->dtype)) == NULL) {
        return -1;
    }
    if (tensor->strides != NULL) {
        for (int d = 0; d < tensor->ndim; d++) {
            /* A dimension of size 0 or 1 is never stepped along: its
             * stride is meaningless (CuPy exports any value there). */
            int64_t s = tensor->shape[d] > 1 ? tensor->strides[d] : 0;
            if (s > INT64_MAX / 8 || s < INT64_MIN / 8) {
                PyErr_SetString(PyExc_ValueError, "DLPack strides overflow");
                return -1;
            }
            strides[d] = s * input->dtype->itemsize;
        }
    }
    input->data = (const char *)tensor->data + tensor->byte_offset;
    return crpy_plan_device_layout(input, tensor->ndim, tensor->shape,
                                   tensor->strides ? strides : NULL,
                                   "DLPack");
}

int
crpy_acquire_dlpack(PyObject *obj, PyObject *device_fn, int stream_given,
                    uintptr_t stream, crpy_input *input)
{
    long long device_type = -1, device_id = -1;
    PyObject *device = PyObject_CallNoArgs(device_fn);
    if (device == NULL) {
        return -1;
    }
    int parsed = PyArg_ParseTuple(device, "LL", &device_type, &device_id);
    Py_DECREF(device);
    if (!parsed) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "__dlpack_device__() must return "
                        "a tuple (device_type: int, device_id: int)");
        return -1;
    }
    if (device_type == DL_CPU) {
        return crpy_acquire_host_dlpack(obj, input);
    }
    if (device_type == DL_CUDA || device_type == DL_CUDA_MANAGED) {
        if (device_id < 0 || device_id > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "__dlpack_device__() names CUDA "
                         "device %lld", device_id);
            return -1;
        }
        return acquire_dlpack_device(obj, (int)device_id, stream_given,
                                     stream, input);
    }
    PyErr_Format(PyExc_TypeError, "cudareduce reads DLPack tensors on CUDA "
                 "(2) or CPU (1) devices, not device type %lld", device_type);
    return -1;
}

/* --- handing it back ----------------------------------------------------- */

void
crpy_release_dlpack(crpy_input *input)
{
    if (input->dl_managed == NULL) {
        return;
    }
    /* The producer's deleter may run Python code (a ctypes or cffi
     * callback), which must not start with an exception set: the caller's
     * error is kept aside meanwhile. */
    PyObject *pending_type, *pending_value, *pending_traceback;
    PyErr_Fetch(&pending_type, &pending_value, &pending_traceback);
    if (input->dl_versioned) {
        dl_managed_tensor_versioned *managed = input->dl_managed;
        if (managed->deleter != NULL) {
            managed->deleter(managed);
        }
    }
    else {
        dl_managed_tensor *managed = input->dl_managed;
        if (managed->deleter != NULL) {
            managed->deleter(managed);
        }
    }
    input->dl_managed = NULL;
    PyErr_Restore(pending_type, pending_value, pending_traceback);
}
