"""What both of :mod:`cudareduce.dask`'s graphs (the whole array's, and
along axes: :mod:`cudareduce._dask_axes`) do to a chunk or to partials:
cudareduce's one call (:func:`reduce_array`), the array's library and
device, NaN, and NumPy's last steps (mean's divide, the value as Dask's
own reductions give it).  The names are cudareduce.dask's, from before
its two graphs had a module each.
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

import cudareduce
from cudareduce import _cudareduce

__all__ = ["reduce_array", "_FACTS", "_finish_mean", "_holds_nan", "_is_nan",
           "_module", "_on_current_device", "_on_device_of", "_result"]

#: Each operator's facts (dtype=, NaN, identity, index, count), from the
#: extension's rows: cudareduce.dask's graphs reduce by them, not by names.
_FACTS = _cudareduce.OPERATOR_FACTS


def reduce_array(op: str, a: Any, out: Any, method: str,
                 threads: int | None, dtype: Any = None,
                 axis: int | tuple | None = None) -> Any:
    """cudareduce's `op` of the whole array `a` into `out` (a one-element
    array of the result's dtype, of `a`'s kind), on the current device;
    returns `out`.  With `axis` (a tuple, or an index operator's int):
    `op` along those axes with ``keepdims=True``, as a new array of `a`'s
    kind (`out` None), returned without waiting for the GPU."""
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if axis is not None:
        kwargs.update(axis=axis, keepdims=True)
    return getattr(cudareduce, op)(a, method, threads=threads, out=out,
                                   **kwargs)


def _module(a: Any) -> Any:
    """NumPy, or CuPy for a CuPy array."""
    if type(a).__module__.startswith("cupy"):
        import cupy  # noqa: PLC0415  (CuPy chunks: CuPy is there)
        return cupy
    return np


@contextlib.contextmanager
def _on_device_of(a: Any) -> Iterator[None]:
    """A CuPy array's device made current (where CuPy allocates a
    partial's ``out`` and runs its own kernels on the partials; cudareduce
    itself reduces on the array's device), and restored after."""
    device = getattr(a, "device", None)
    if type(a).__module__.startswith("cupy") and device is not None:
        with device:
            yield
    else:
        yield


def _on_current_device(xp: Any, a: Any) -> Any:
    """`a` as an array of `xp`; a CuPy partial of another GPU (chunks on
    several GPUs, one process) copied to the current one (CuPy's
    ``ndarray.copy`` copies there), so that the combine's kernels read no
    other GPU's memory."""
    if xp is not np and a.device.id != xp.cuda.Device().id:
        return a.copy()
    return xp.asarray(a)


def _finish_mean(total: Any, count: Any, dtype: np.dtype,
                 skips_nan: bool) -> Any:
    """NumPy's last step of mean, ``ret.dtype.type(ret / rcount)``: the
    quotient in the true divide's type of the sum's dtype and an intp, cast
    to the result's; where no element counts, NumPy's warning (nanmean's
    NaN without the divide's).  Along axes (`total` and `count` arrays of
    the keepdims shape, or `count` an int), elementwise, as NumPy's divide
    of its sum by its counts; the warnings only for a host result (a
    device one is not waited for)."""
    xp = _module(total)
    whole = total.ndim == 0
    with _on_device_of(total):
        quotient_dtype = np.true_divide(np.ones(1, total.dtype),
                                        np.intp(1)).dtype
        if whole:
            empty = int(count) == 0
        else:
            empty = xp is np and bool((np.asarray(count) == 0).any())
        if empty:
            warnings.warn("Mean of empty slice", RuntimeWarning,
                          stacklevel=4)
        with np.errstate(**({"invalid": "ignore", "divide": "ignore"}
                            if skips_nan else {})):
            if xp is np and whole:
                # NumPy's scalar divide, its warnings included.
                quotient = np.asarray(
                    total[()].astype(quotient_dtype) / np.intp(count))
            else:
                quotient = total.astype(quotient_dtype) / xp.asarray(
                    count).astype(quotient_dtype)
        return _result(quotient.astype(dtype))


def _result(value: Any) -> Any:
    """The last step's 0-d array as Dask's own reductions give it: a NumPy
    scalar, or the 0-d CuPy array itself (CuPy has no scalars)."""
    return value[()] if _module(value) is np else value


def _holds_nan(dtype: np.dtype) -> bool:
    """Whether elements of `dtype` can be NaN: floats, complex types and
    ml_dtypes' bfloat16 (NumPy's kind 'V')."""
    return dtype.kind in "fc" or dtype.name == "bfloat16"


def _is_nan(xp: Any, values: Any) -> Any:
    """Which values are NaN (a complex one where either part is); none of
    an integer or bool array."""
    if _holds_nan(values.dtype):
        return xp.isnan(values)
    return xp.zeros(values.shape, bool)

