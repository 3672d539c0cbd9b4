"""A reduction's result array on the device, in the input's own library.

A reduction along axes of a device array returns a device array: a
``cupy.ndarray`` for CuPy, a ``torch.Tensor`` for PyTorch, a Numba device
array for Numba, a ``jax.Array`` for JAX, and for any other producer a
CuPy array (PyTorch's tensor where CuPy is not installed).  The extension
calls :func:`empty` for the array it then fills, so the memory comes from
that library's own allocator (its pool, its statistics, its rules for
streams).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["empty", "result"]


def _cupy_empty(shape: tuple[int, ...], name: str, device: int) -> Any:
    import cupy
    dtype = name
    if name == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype)


def _torch_empty(shape: tuple[int, ...], name: str, device: int) -> Any:
    import torch
    return torch.empty(shape, dtype=getattr(torch, name),
                       device=torch.device("cuda", device))


def _numba_empty(shape: tuple[int, ...], name: str, device: int) -> Any:
    from numba import cuda
    with cuda.gpus[device]:
        return cuda.device_array(shape, name)


def _any_empty(shape: tuple[int, ...], name: str, device: int) -> Any:
    try:
        return _cupy_empty(shape, name, device)
    except ImportError:
        return _torch_empty(shape, name, device)


#: The allocator of each producer, by the top-level module of its type.
_ALLOCATORS: dict[str, Callable[[tuple[int, ...], str, int], Any]] = {
    "cupy": _cupy_empty, "torch": _torch_empty, "numba": _numba_empty,
}


def _library(a: Any) -> str:
    return type(a).__module__.partition(".")[0]


def empty(a: Any, shape: tuple[int, ...], name: str, device: int) -> Any:
    """An uninitialised array of `shape` and the dtype named `name`
    (``"float32"``, ``"bfloat16"``...) on CUDA device `device`, from the
    library of the input `a`."""
    return _ALLOCATORS.get(_library(a), _any_empty)(shape, name, device)


def _order_cupy_after_legacy(filled: Any) -> None:
    """CuPy's current stream (of `filled`'s device) waits for the work
    queued so far on the legacy default stream.  Another producer's data
    is read through DLPack on the legacy stream, and the reduction runs
    there (or inside ``torch.cuda.stream``, on PyTorch's stream, which the
    legacy one then waits for); its result is a CuPy array, which CuPy's
    next operations (and a DLPack consumer such as JAX, which waits for
    CuPy's current stream) would otherwise not see ordered after it inside
    ``with stream:``."""
    import cupy
    with cupy.cuda.Device(filled.device.id):
        current = cupy.cuda.get_current_stream()
        if current.ptr != cupy.cuda.Stream.null.ptr:
            current.wait_event(cupy.cuda.Stream.null.record())


def result(a: Any, filled: Any) -> Any:
    """What to return for input `a` once `filled` holds the result:
    `filled` itself (a NumPy scalar or array, or a device array from
    :func:`empty`), but a device array as a ``jax.Array`` for a JAX input
    (JAX's arrays are immutable, so the result moves into one through
    DLPack); a CuPy array made for another producer's input is ordered
    for CuPy's current stream first."""
    if isinstance(filled, (np.ndarray, np.generic)):
        return filled
    library = _library(a)
    if library not in _ALLOCATORS and _library(filled) == "cupy":
        _order_cupy_after_legacy(filled)
    if library in ("jax", "jaxlib"):
        import jax
        return jax.dlpack.from_dlpack(filled)
    return filled
