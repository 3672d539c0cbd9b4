"""cudareduce: the parallel-reduction ladder on the GPU, behind a NumPy-like API.

Each step of Mark Harris's "Optimizing Parallel Reduction in CUDA" is a
method of :func:`sum`, :func:`mean`, :func:`min` and :func:`max`,
selectable by name (see :func:`methods`).

Inputs are tried in this order: a ``numpy.ndarray`` is host memory (it never
goes through a GPU protocol); then ``__cuda_array_interface__`` (CuPy,
Numba, PyTorch CUDA tensors); then DLPack (``__dlpack__`` and
``__dlpack_device__``: JAX, PyTorch; CPU tensors take the host path); then
anything ``numpy.asarray`` accepts.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _cudareduce
from ._cudareduce import CudaError

__version__ = "0.1.0"

__all__ = ["CudaError", "Pass", "__version__", "max", "mean", "methods", "min",
           "plan", "sum"]

DEFAULT_METHOD = "fast"
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
    """Dynamic shared memory per block (the fast method's is static)."""


def methods() -> dict[str, str]:
    """The reduction methods: the ladder in order, then the fast path and CUB.

    Returns
    -------
    dict
        ``{name: one-line description}``, from the first step of the ladder
        (``interleaved_divergent``) to the last (``multi_element``), then
        ``fast`` (the default: one launch, vector loads) and ``cub``
        (``cub::DeviceReduce``, the reference).
    """
    return dict(_cudareduce.methods())


def plan(n: int, method: str = DEFAULT_METHOD, *, threads: int = DEFAULT_THREADS,
         dtype: DTypeLike = np.float32, sm_count: int | None = None) -> list[Pass]:
    """The kernel launches that reducing `n` elements takes.

    Plain arithmetic, no GPU needed, except that ``multi_element`` and
    ``fast`` size their grid from the SM count: give `sm_count`, or leave it
    None to ask the current device.  ``cub`` plans its own launches, so it
    has no plan here (ValueError).

    Parameters
    ----------
    n : int
        Number of elements, >= 0.
    method : str
        A name from :func:`methods`.
    threads : int
        Threads per block, a power of two from 64 to 1024.
    dtype : dtype-like
        Input dtype: its size sets the fast method's vector width, its
        accumulator the shared memory per block.
    sm_count : int, optional
        Streaming multiprocessors of the GPU to plan for.

    Returns
    -------
    list of Pass
        One record per launch; the last has one block, except the fast
        method's single launch, whose last block to finish reduces the
        others' partials.  Empty for ``n == 0``.
    """
    return [Pass(**record) for record in
            _cudareduce.plan(n, method, threads, dtype, sm_count)]


_INPUTS_DOC = """a : array_like
        A NumPy array of any layout (streamed to the device in chunks
        through pinned buffers, each reduced as the next is copied), a
        device array exposing ``__cuda_array_interface__`` (CuPy, Numba,
        PyTorch CUDA tensors) or DLPack (JAX, PyTorch), read in place on
        the device (non-contiguous views are gathered on the device first),
        or anything ``numpy.asarray`` accepts.  dtypes: bool, int8-int64,
        uint8-uint64, float16, float32, float64.
    method : str
        A name from :func:`methods` (default ``"fast"``).
    threads : int
        Threads per block, a power of two from 64 to 1024 (default 256)."""

_STREAM_DOC = """stream : int or stream object, optional
        The CUDA stream to run on: a ``cudaStream_t`` handle as an int (0 is
        the legacy default stream), a ``cupy.cuda.Stream``, a
        ``torch.cuda.Stream`` or any object with ``__cuda_stream__``.  It
        first waits for the stream that the array's
        ``__cuda_array_interface__`` names.  By default the reduction runs on
        the array's own stream (or the per-thread default stream)."""

_RAISES_DOC = """Raises
    ------
    TypeError
        Unsupported dtype or `dtype`, or an argument of the wrong type.
    ValueError
        Unknown method, `threads` out of range, a malformed array
        interface, or device memory that is not the current device's.
    CudaError
        No CUDA device or driver, or a CUDA call failed.
    MemoryError
        Not enough GPU memory."""


def _documented(doc: str) -> Any:
    def attach(function: Any) -> Any:
        function.__doc__ = doc.format(inputs=_INPUTS_DOC, stream=_STREAM_DOC,
                                      raises=_RAISES_DOC)
        return function
    return attach


@_documented("""Sum of all elements of `a`, computed on the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        The accumulator and result dtype, as ``numpy.sum(a, dtype=...)``;
        it must hold `a`'s values under NumPy's ``same_kind`` casting.
    {stream}

    Returns
    -------
    numpy scalar
        Of ``numpy.sum``'s result dtype: bool and signed integers sum to
        int64, unsigned ones to uint64 (exact, wrapping like NumPy's),
        float16 to float16 (accumulated in float32), float32 and float64 in
        their own type.  An empty array sums to 0.

    {raises}
    """)
def sum(a: ArrayLike, method: str = DEFAULT_METHOD, *,  # noqa: A001
        threads: int = DEFAULT_THREADS, dtype: DTypeLike = None,
        stream: Any = None) -> Any:
    return _cudareduce.reduce("sum", a, method, threads, dtype, stream)


@_documented("""Arithmetic mean of all elements of `a`, computed on the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        The accumulator and result dtype, as ``numpy.mean(a, dtype=...)``.
    {stream}

    Returns
    -------
    numpy scalar
        Of ``numpy.mean``'s result dtype: float64 for integers and bool,
        else the input's (float16 accumulated in float32).  An empty array
        gives NaN and a ``RuntimeWarning``, as NumPy.

    {raises}
    """)
def mean(a: ArrayLike, method: str = DEFAULT_METHOD, *,
         threads: int = DEFAULT_THREADS, dtype: DTypeLike = None,
         stream: Any = None) -> Any:
    return _cudareduce.reduce("mean", a, method, threads, dtype, stream)


def _extremum(op: str, adjective: str, noun: str) -> Any:
    """cudareduce.min or cudareduce.max: the same function but for `op`."""
    def extremum(a: ArrayLike, method: str = DEFAULT_METHOD, *,
                 threads: int = DEFAULT_THREADS, stream: Any = None) -> Any:
        return _cudareduce.reduce(op, a, method, threads, None, stream)

    extremum.__name__ = extremum.__qualname__ = op
    return _documented(f"""{adjective} element of `a`, computed on the GPU.

    Parameters
    ----------
    {{inputs}}
    {{stream}}

    Returns
    -------
    numpy scalar
        Of `a`'s dtype.  NaN if any element is NaN, as ``numpy.{op}``.

    {{raises}}
        Also ValueError for an empty array, which has no {noun}.
    """)(extremum)


min = _extremum("min", "Smallest", "minimum")  # noqa: A001
max = _extremum("max", "Largest", "maximum")  # noqa: A001
