"""cudareduce: the parallel-reduction ladder on the GPU, behind a NumPy-like API.

Each step of Mark Harris's "Optimizing Parallel Reduction in CUDA" is a
method of :func:`sum`, selectable by name (see :func:`methods`).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _cudareduce
from ._cudareduce import CudaError

__version__ = "0.1.0"

__all__ = ["CudaError", "Pass", "__version__", "methods", "plan", "sum"]

DEFAULT_METHOD = "multi_element"
DEFAULT_THREADS = 256


class Pass(NamedTuple):
    """One kernel launch of a reduction: ``n_in`` elements to ``blocks``
    partial results."""

    n_in: int
    blocks: int
    threads: int
    items_per_thread: int
    """Most elements one thread loads itself, before the shared-memory tree."""
    shared_bytes: int
    """Dynamic shared memory per block."""


def methods() -> dict[str, str]:
    """The reduction methods in ladder order.

    Returns
    -------
    dict
        ``{name: one-line description}``, from the first step of the ladder
        (``interleaved_divergent``) to the last (``multi_element``).
    """
    return dict(_cudareduce.methods())


def plan(n: int, method: str = DEFAULT_METHOD, *, threads: int = DEFAULT_THREADS,
         dtype: DTypeLike = np.float32, sm_count: int | None = None) -> list[Pass]:
    """The kernel launches that reducing `n` elements takes.

    Plain arithmetic, no GPU needed, except that ``multi_element`` sizes its
    grid from the SM count: give `sm_count`, or leave it None to ask the
    current device.

    Parameters
    ----------
    n : int
        Number of elements, >= 0.
    method : str
        A name from :func:`methods`.
    threads : int
        Threads per block, a power of two from 64 to 1024.
    dtype : dtype-like
        Input dtype; its accumulator sets the shared memory per block.
    sm_count : int, optional
        Streaming multiprocessors of the GPU to plan for.

    Returns
    -------
    list of Pass
        One record per launch; the last has one block.  Empty for ``n == 0``.
    """
    return [Pass(**record) for record in
            _cudareduce.plan(n, method, threads, dtype, sm_count)]


def sum(a: ArrayLike, method: str = DEFAULT_METHOD, *,  # noqa: A001
        threads: int = DEFAULT_THREADS) -> Any:
    """Sum of all elements of `a`, computed on the GPU.

    Parameters
    ----------
    a : array_like
        A NumPy array of any shape and memory layout, or anything
        ``numpy.asarray`` accepts.  It is copied to the device, reduced there,
        and only the result comes back.
    method : str
        A name from :func:`methods` (default ``"multi_element"``).
    threads : int
        Threads per block, a power of two from 64 to 1024 (default 256).

    Returns
    -------
    numpy scalar
        Of NumPy's result dtype, as ``numpy.sum(a)``: float32 and float64
        accumulate in their own type, int32 and int64 in int64.  An empty
        array sums to 0 without touching the GPU.

    Raises
    ------
    TypeError
        Unsupported dtype, or `threads` not an int.
    ValueError
        Unknown method, or `threads` out of range.
    CudaError
        No CUDA device or driver, or a CUDA call failed.
    MemoryError
        Not enough GPU memory for the input.
    """
    return _cudareduce.reduce("sum", a, method, threads)
