"""DLPack capsules built by hand with ctypes, for tests of malformed or
unsupported DLPack tensors that no real producer makes: any device type,
dtype code, bit width, lane count, shape and strides.

A :class:`Producer` exposes ``__dlpack__`` / ``__dlpack_device__``; each
``__dlpack__`` call returns a fresh capsule (named ``"dltensor"``, or
``"dltensor_versioned"`` with ``versioned=True``) over one ``DLTensor``
that the producer keeps alive, as do the deleter's ctypes callback and the
shape and strides arrays.  ``deleted`` counts the calls of the deleter: a
consumer that takes a capsule (renames it ``used_dltensor``) must call it
exactly once, error or not.  The capsules have no destructor, so one that
is never consumed leaks nothing but the producer's own objects.

Used from a subprocess (test_bad_inputs.py), because a wrong structure
layout here would make the consumer read garbage, and a crash must fail
one test, not the run.

:class:`DLPackOnly` hands a real array (NumPy, CuPy, PyTorch, JAX) over by
DLPack alone, for the tests and .ci/sanitize_driver.py.
"""
from __future__ import annotations

import ctypes

KDL_CPU, KDL_CUDA, KDL_VULKAN, KDL_CUDA_MANAGED = 1, 2, 7, 13
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_COMPLEX, KDL_BOOL = (
    0, 1, 2, 4, 5, 6)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLManagedTensorVersioned(ctypes.Structure):
    pass


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DELETER_VERSIONED = ctypes.CFUNCTYPE(
    None, ctypes.POINTER(DLManagedTensorVersioned))

DLManagedTensor._fields_ = [("dl_tensor", DLTensor),
                            ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion),
                                     ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", DELETER_VERSIONED),
                                     ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

# The names must outlive every capsule: module constants do.
_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Producer:
    """A DLPack producer of one hand-made tensor.

    device      what ``__dlpack_device__`` says, (type, id);
    tensor_device  the device in the tensor itself (default: `device`);
    code, bits, lanes  the DLDataType;
    shape, strides  (strides in elements, None for C-contiguous);
    data        the data pointer (an int; 0 for NULL);
    ndim        overrides len(shape) (to lie about it);
    versioned   a DLManagedTensorVersioned capsule (DLPack 1.x);
    deleter     False: a NULL deleter (allowed by DLPack), so that no
                Python code runs when the consumer releases the tensor.
    """

    def __init__(self, device=(KDL_CUDA, 0), *, code=KDL_FLOAT, bits=32,
                 lanes=1, shape=(4,), strides=None, data=0x3C3C_0000_0000,
                 byte_offset=0, tensor_device=None, ndim=None,
                 versioned=False, deleter=True):
        self.device = tuple(device)
        self.deleted = 0
        self.calls = 0
        self.versioned = versioned
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = (None if strides is None else
                         (ctypes.c_int64 * max(len(strides), 1))(*strides))
        tensor_device = tuple(tensor_device or device)
        if versioned:
            self._managed = DLManagedTensorVersioned()
            self._managed.version = DLPackVersion(1, 0)
            self._deleter = DELETER_VERSIONED(self._delete)
        else:
            self._managed = DLManagedTensor()
            self._deleter = DELETER(self._delete)
        if deleter:
            self._managed.deleter = self._deleter
        tensor = self._managed.dl_tensor
        tensor.data = data or None
        tensor.device = DLDevice(*tensor_device)
        tensor.ndim = len(shape) if ndim is None else ndim
        tensor.dtype = DLDataType(code, bits, lanes)
        tensor.shape = ctypes.cast(self._shape,
                                   ctypes.POINTER(ctypes.c_int64))
        tensor.strides = (None if self._strides is None else ctypes.cast(
            self._strides, ctypes.POINTER(ctypes.c_int64)))
        tensor.byte_offset = byte_offset

    def _delete(self, _managed):
        self.deleted += 1

    def __dlpack__(self, *args, **kwargs):
        self.calls += 1
        return _capsule_new(ctypes.addressof(self._managed),
                            _NAME_VERSIONED if self.versioned else _NAME,
                            None)

    def __dlpack_device__(self):
        return self.device


class DLPackOnly:
    """Exposes only ``__dlpack__`` and ``__dlpack_device__`` of `array` (a
    NumPy, PyTorch or JAX array), so that no other protocol can be used;
    `device` replaces the array's own ``__dlpack_device__`` answer."""

    __slots__ = ("array", "device")

    def __init__(self, array, device=None):
        self.array = array
        self.device = device

    def __dlpack__(self, *args, **kwargs):
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        if self.device is not None:
            return self.device
        return self.array.__dlpack_device__()

    def __repr__(self):
        return f"DLPackOnly({type(self.array).__name__}, {self.device})"
