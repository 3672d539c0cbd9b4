"""The library behind :mod:`cudareduce`'s names: its functions, ``Pass``
and the defaults, over the compiled extension (whose ``CudaError`` the
package takes itself).

The package imports this module only where the extension is there (without
it, each of those names raises an ImportError that says so: see
``__init__.py``).  Every public name here is the package's: its
``__module__`` says ``cudareduce``, as NumPy's ``set_module`` does for
NumPy's, so that reprs, ``help()``, pickles and documentation name
``cudareduce``, not this module.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

import cudareduce._cudareduce as _cudareduce  # the compiled extension
from . import _device_results, _masked

try:
    from numpy.lib.array_utils import normalize_axis_tuple
except ImportError:     # NumPy 1
    from numpy.core.numeric import normalize_axis_tuple

#: What ``from ._library import *`` hands the package: a function of each
#: operator of the extension's rows (``sum`` ... ``nanargmax``, defined
#: below); the package imports its other names one by one.
__all__ = list(_cudareduce.OPERATORS)

DEFAULT_METHOD = "fast"
#: The ladder steps' threads per block when none is named (the fast
#: method's own depends on the input's size: ``plan(n, dtype=...)``).
DEFAULT_THREADS = _cudareduce.DEFAULT_THREADS


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


def plan(n: int, method: str = DEFAULT_METHOD, *, threads: int | None = None,
         dtype: DTypeLike = np.float32,
         sm_count: int | None = None) -> list[Pass]:
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
    threads : int, optional
        Threads per block, a power of two from 64 to 1024; None (the
        default) is the method's own for `n` elements of `dtype`: for
        ``fast`` 256 below 4 MiB, 512 below 16 MiB, 1024 from there; 256
        for the ladder's steps.
    dtype : dtype-like
        Input dtype: its size sets the fast method's vector width, its
        accumulator the shared memory per block.
    sm_count : int, optional
        Streaming multiprocessors of the GPU to plan for.

    Returns
    -------
    list of Pass
        One record per launch; the last has one block, except the fast
        method's single launch, whose last block to start reduces the
        others' partials.  Empty for ``n == 0``.
    """
    return [Pass(**record) for record in
            _cudareduce.plan(n, method, threads, dtype, sm_count)]


def block_sizes(op: str, dtype: DTypeLike, method: str = DEFAULT_METHOD,
                *, reduce_dtype: DTypeLike = None) -> tuple[int, ...]:
    """The threads per block that `method` takes for `op` on `dtype`.

    The ladder's steps that read the block size at run time, ``fast``
    and ``cub`` take every power of two from 64 to 1024.
    ``unroll_complete`` and ``multi_element`` have a kernel per block
    size, compiled in, for sum and mean, and min and max of the numeric
    real dtypes (the NaN forms of integers are the plain operators); for
    the other operators, and complex and bool min and max, whose kernels
    are compiled once, only the size a call that names none runs, 256.
    No GPU needed.

    Parameters
    ----------
    op : str
        An operator name, as the module function (``"sum"``,
        ``"argmin"``, ``"nanmean"``...).
    dtype : dtype-like
        The input's dtype.
    method : str
        A name from :func:`methods` (default ``"fast"``).
    reduce_dtype : dtype-like, optional
        The reduction's ``dtype=`` argument, where it has one: a sum into
        bool is a logical or, which is :func:`any`'s; a NaN-skipping sum
        or product of floats into another dtype casts first (each NaN
        becoming the identity) and then runs the plain operator's
        kernels.

    Returns
    -------
    tuple of int
        The `threads` values it takes, ascending.

    Raises
    ------
    TypeError
        A dtype the operator does not take.
    ValueError
        Unknown operator or method.
    """
    return _cudareduce.block_sizes(op, dtype, method, reduce_dtype)


_INPUTS_DOC = """a : array_like
        A NumPy array of any layout (streamed to the device in chunks
        through pinned buffers, each reduced as the next is copied), a
        device array exposing ``__cuda_array_interface__`` (CuPy, Numba,
        PyTorch CUDA tensors) or DLPack (JAX, PyTorch), read in place on
        its own device, whichever device is current (non-contiguous views
        are gathered on that device first), or anything ``numpy.asarray``
        accepts (reduced on the current device).  dtypes: bool, int8-int64,
        uint8-uint64, float16, float32, float64, complex64, complex128
        and bfloat16 (ml_dtypes' NumPy dtype, JAX's; PyTorch's and JAX's
        tensors through DLPack or a PyTorch tensor itself).  bfloat16 is
        summed in float32, as float16, and rounded once: NumPy adds it in
        bfloat16, rounding at every step (``numpy.sum`` of 1000 ones is
        256, here 1000).  A bfloat16 result is an ``ml_dtypes.bfloat16``
        scalar, or float32 where ml_dtypes is not installed.  complex64
        and complex128 are summed in their own type; min, max, argmin and
        argmax order them as NumPy does (real part, then imaginary part;
        the first NaN, in either part, wins).  A ``numpy.ma`` masked array
        is reduced as ``numpy.ma`` reduces it: masked elements do not
        count, and if every element is masked the result is
        ``numpy.ma.masked`` (the index operators, as
        ``MaskedArray.argmin``, never give it).
    method : str
        A name from :func:`methods` (default ``"fast"``).
    threads : int, optional
        Threads per block, a power of two from 64 to 1024; None (the
        default) is the method's own for the input's size: for ``fast``
        256 below 4 MiB, 512 below 16 MiB, 1024 from there (the fastest on
        an H100), 256 for the ladder's steps (compared at one block size);
        ``cub`` sizes its own blocks.  ``unroll_complete`` and
        ``multi_element`` compile a kernel per block size: they take every
        size for sum and mean, and min and max of the numeric real dtypes;
        for the other operators, and complex and bool min and max, only
        their default 256 (:func:`block_sizes`; ValueError for
        another)."""

_STREAM_DOC = """stream : int or stream object, optional
        The CUDA stream to run on: a ``cudaStream_t`` handle as an int (0 is
        the legacy default stream), a ``cupy.cuda.Stream``, a
        ``torch.cuda.Stream`` or any object with ``__cuda_stream__``.  It
        first waits for the stream the array is ready on (the one its
        ``__cuda_array_interface__`` names; a ``torch.Tensor``'s, PyTorch's
        current stream).  By default the reduction runs on PyTorch's
        current stream inside ``torch.cuda.stream`` or ``torch.cuda.graph``,
        else on the array's own stream (CuPy's current one inside ``with
        stream:`` for data that names none, else the per-thread default
        stream).  A stream of the array's device.
    axis : None, int or tuple of ints, optional
        The axes to reduce, as NumPy's (None: every axis; the index
        operators take None or one int; NumPy's ``AxisError`` for an axis
        out of range, ``ValueError`` for a repeated one).  Over every
        axis the result is a NumPy scalar; along some axes an array: a
        NumPy array for host data, else an array of the input's own
        library on its device (a ``cupy.ndarray`` for CuPy, a
        ``torch.Tensor`` for PyTorch, a Numba device array for Numba, a
        ``jax.Array`` for JAX, a CuPy array (PyTorch's where CuPy is
        missing) for any other producer), returned without waiting for
        the GPU.  Each result's bits depend only on its elements in
        memory order, their count, the dtype, the operator and the method
        (not on how many results there are, or where): see
        ``docs/usage.md``.
    keepdims : bool, optional
        Keep each reduced axis with extent 1, as NumPy's.
    out : array, optional
        An array of the result's shape and dtype, writable, that receives
        the result, which the function then returns; over every axis any
        one element (0-d, ``(1,)``, ``(1, 1)``...).  A device array (CUDA
        array interface or DLPack, on the data's device) receives it on the
        call's stream,
        and the call returns without waiting for the GPU, so that GPU work
        chains without a host synchronisation; such a call can be captured
        into a CUDA graph (``torch.cuda.graph``, CuPy's stream capture), by
        every method.  One that cannot (a result to the host, host data)
        raises CudaError before it queues anything.  No
        floating-point warnings then, since the host never sees the value.
        A NumPy `out` is written after the call has waited, warnings
        included.  Not for a ``numpy.ma`` masked array (TypeError)."""

_RAISES_DOC = """Raises
    ------
    TypeError
        Unsupported dtype or `dtype`, or an argument of the wrong type
        (such as an axis passed where the method goes).
    ValueError
        Unknown method, `threads` out of range or not among
        :func:`block_sizes`, a repeated `axis`, an `out` of another
        shape than the result's, a malformed array interface, a pointer
        that is not device memory, an `out` on another device than the
        data's, or a `stream` of another device.
    CudaError
        No CUDA device or driver, a CUDA call failed, or a call that needs
        the host on a stream that is capturing a CUDA graph.
    MemoryError
        Not enough GPU memory."""


_DEVICES_DOC = """devices : None, "all", int or sequence of ints, optional
        The GPUs that reduce a NumPy (host) array over every axis at once,
        each streaming a share of its chunks through its own pinned ring
        (``"all"``: every GPU of the process).  The chunks' results are
        combined in the array's order: the same bits as one GPU, for any
        list (GPUs of one model).  None: the current device alone.  Any
        other input, or an `axis`, with `devices` is a ValueError; a
        device that does not exist is one too.  See docs/dask.md
        ("Several GPUs")."""

_EXACT_DOC = """exact : bool, optional
        The exact sum of the elements (each cast to `dtype` first, where
        given), rounded once, to nearest even, into the result dtype: for
        float64 ``math.fsum``'s answer, for the others the nearest value
        to the true sum.  Its bits depend on nothing but the elements: not
        their order, the method's blocks, a host array's chunks, nor the
        GPU.  NaN and infinities as NumPy gives them; a sum beyond the
        result dtype's range is an infinity with NumPy's overflow warning
        (a sum that overflows only on the way, as NumPy's order can, does
        not).  For now: float16, bfloat16, float32 and float64 sums of the
        whole array by the method ``fast`` (a ValueError otherwise); a sum
        of integers or bool is exact already, and is unchanged.  See
        docs/exact.md."""


def _reduce(op: str, a: ArrayLike, method: str, threads: int,
            dtype: DTypeLike, stream: Any, axis: Any, keepdims: Any,
            out: Any, exact: bool = False, devices: Any = None) -> Any:
    """The extension's reduction of `a`; a masked array's unmasked
    elements (the extension refuses its raw data)."""
    if isinstance(a, _masked.MaskedArray):
        if out is not None:
            raise TypeError("out= is not supported for a numpy.ma masked "
                            "array, whose result may be numpy.ma.masked")
        if keepdims or (axis is not None and sorted(normalize_axis_tuple(
                axis, a.ndim)) != list(range(a.ndim))):
            raise TypeError("a numpy.ma masked array is reduced over every "
                            "axis only (axis=None, no keepdims)")
        return _masked.reduce(
            op, a, dtype, lambda op, data, dtype: _cudareduce.reduce(
                op, data, method, threads, dtype, stream, exact=exact,
                devices=devices))
    result = _cudareduce.reduce(op, a, method, threads, dtype, stream, axis,
                                out, keepdims, _device_results.empty, exact,
                                devices)
    return result if out is not None else _device_results.result(a, result)


def _documented(doc: str) -> Any:
    def attach(function: Any) -> Any:
        function.__doc__ = doc.format(inputs=_INPUTS_DOC, stream=_STREAM_DOC,
                                      raises=_RAISES_DOC, exact=_EXACT_DOC,
                                      devices=_DEVICES_DOC)
        return function
    return attach


@_documented("""Sum of all elements of `a`, computed on the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        The dtype to sum in and return, any supported one, as
        ``numpy.sum(a, dtype=...)``: each element is cast to it first
        (unsafely: floats into integers truncate), integers then wrap in
        it, float16 and bfloat16 sums run in float32 and round at the
        end (elements cast into them are rounded to them first), and
        ``dtype=bool`` is the logical or of the elements.  A dtype that
        casts each element, or sums in another accumulator than NumPy's
        default, first converts the elements on the device (as NumPy's
        buffered cast does), into a buffer of the new dtype (host arrays
        chunk by chunk), and then runs the method on them.
    {stream}
    {devices}
    {exact}

    Returns
    -------
    numpy scalar or array
        `out`, when given; else a scalar of ``numpy.sum``'s result dtype: bool
        and signed integers sum to int64, unsigned ones to uint64 (exact,
        wrapping like NumPy's), float16 and bfloat16 to themselves
        (accumulated in float32),
        float32 and float64 in their own type.  An empty array sums to 0.
        NumPy's floating-point warnings ("overflow encountered in reduce",
        "invalid value encountered in reduce"), under ``numpy.errstate``.

    {raises}
    """)
def sum(a: ArrayLike, method: str = DEFAULT_METHOD, *,  # noqa: A001
        threads: int | None = None, dtype: DTypeLike = None,
        stream: Any = None, axis: Any = None, keepdims: Any = False,
        out: Any = None, exact: bool = False,
        devices: Any = None) -> Any:
    return _reduce("sum", a, method, threads, dtype, stream, axis,
                   keepdims, out, exact, devices)


@_documented("""Sum of all elements of `a`, NaNs counted as zero, computed
    on the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        As ``numpy.nansum(a, dtype=...)``, and as for :func:`sum`: each
        element is cast to it first, integers wrap in it, float16 runs in
        float32, and into bool the reduction is a logical or.
    {stream}
    {devices}
    exact : bool, optional
        As :func:`sum`'s, of the non-NaN elements.

    Returns
    -------
    numpy scalar or array
        `out`, when given; else a scalar of ``numpy.nansum``'s result
        dtype, as :func:`sum`'s.  An empty or all-NaN array gives 0.
        Integers and bool: as :func:`sum`.

    {raises}
    """)
def nansum(a: ArrayLike, method: str = DEFAULT_METHOD, *,
           threads: int | None = None, dtype: DTypeLike = None,
           stream: Any = None, axis: Any = None, keepdims: Any = False,
           out: Any = None, exact: bool = False,
        devices: Any = None) -> Any:
    return _reduce("nansum", a, method, threads, dtype, stream, axis,
                   keepdims, out, exact, devices)


@_documented("""Arithmetic mean of all elements of `a`, computed on the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        As ``numpy.mean(a, dtype=...)``: the elements are summed as
        :func:`sum` does with that dtype, and the sum over the count is
        cast to it (an integer mean truncates; ``dtype=float16`` rounds
        the sum to float16 before dividing).
    {stream}
    {devices}
    exact : bool, optional
        The exact sum over the count, rounded once into the result dtype
        (not the sum rounded, then divided): as :func:`sum`'s `exact`.

    Returns
    -------
    numpy scalar or array
        `out`, when given; else a scalar of ``numpy.mean``'s result dtype:
        float64 for integers and bool, else the input's (float16 summed in
        float32), with NumPy's divide: the sum over an intp count in NumPy's
        scalar arithmetic, then cast to the result dtype.  An empty array gives
        NaN and NumPy's warnings.

    {raises}
    """)
def mean(a: ArrayLike, method: str = DEFAULT_METHOD, *,
         threads: int | None = None, dtype: DTypeLike = None,
         stream: Any = None, axis: Any = None, keepdims: Any = False,
         out: Any = None, exact: bool = False,
        devices: Any = None) -> Any:
    return _reduce("mean", a, method, threads, dtype, stream, axis,
                   keepdims, out, exact, devices)


@_documented("""Arithmetic mean of the non-NaN elements of `a`, computed on
    the GPU.

    Parameters
    ----------
    {inputs}
    dtype : dtype-like, optional
        As ``numpy.nanmean(a, dtype=...)``: a float dtype for a float `a`
        (NumPy's TypeError otherwise), into which each element is cast
        (NaNs stay NaN and are left out) and summed; integers and bool
        take any dtype, as :func:`mean`.
    {stream}
    {devices}
    exact : bool, optional
        The exact sum of the non-NaN elements over their count, rounded
        once into the result dtype: as :func:`sum`'s `exact`.

    Returns
    -------
    numpy scalar or array
        `out`, when given; else ``numpy.nanmean``'s answer: of floats, the
        sum of the non-NaN elements in the input's dtype (float16 summed
        in float32, rounded to float16, as :func:`sum` does) over their
        count, with NumPy's divide; where no element is a number (every
        one NaN, or none), NaN with NumPy's RuntimeWarning "Mean of empty
        slice" (with a device `out`, NaN and no warning).  Of integers
        and bool, :func:`mean`.  One pass over the data: the kernels carry
        the sum and the count together.

    {raises}
    """)
def nanmean(a: ArrayLike, method: str = DEFAULT_METHOD, *,
            threads: int | None = None, dtype: DTypeLike = None,
            stream: Any = None, axis: Any = None, keepdims: Any = False,
            out: Any = None, exact: bool = False,
        devices: Any = None) -> Any:
    return _reduce("nanmean", a, method, threads, dtype, stream, axis,
                   keepdims, out, exact, devices)


def _with_dtype(op: str, summary: str, returns: str) -> Any:
    """cudareduce.prod or nanprod: sum's signature (but exact=), for
    `op`."""
    def reduction(a: ArrayLike, method: str = DEFAULT_METHOD, *,
                  threads: int | None = None, dtype: DTypeLike = None,
                  stream: Any = None, axis: Any = None, keepdims: Any = False,
                  out: Any = None, devices: Any = None) -> Any:
        return _reduce(op, a, method, threads, dtype, stream, axis, keepdims,
                       out, devices=devices)

    reduction.__name__ = reduction.__qualname__ = op
    return _documented(f"""{summary}, computed on the GPU.

    Parameters
    ----------
    {{inputs}}
    dtype : dtype-like, optional
        As ``numpy.{op}(a, dtype=...)``, and as for :func:`sum`: each
        element is cast to it first, integers wrap in it, floats multiply
        in float64, and into bool the reduction is a logical {"and" if
        "prod" in op else "or"}.
    {{stream}}
    {{devices}}

    Returns
    -------
    numpy scalar or array
        `out`, when given; else a scalar of ``numpy.{op}``'s result dtype,
        as :func:`sum`'s: int64 for bool and signed integers, uint64 for
        unsigned ones (exact, wrapping like NumPy's), floats their own
        (multiplied in float64 and rounded once to it: more accurate than
        NumPy's float32 and float16 products).  {returns}

    {{raises}}
    """)(reduction)


prod = _with_dtype(
    "prod", "Product of all elements of `a`",
    "An empty array gives 1.  NumPy's floating-point warnings, as for "
    ":func:`sum`.")
nanprod = _with_dtype(
    "nanprod", "Product of all elements of `a`, NaNs counted as one",
    "An empty or all-NaN array gives 1.  Integers and bool: as "
    ":func:`prod`.")


def _without_dtype(op: str, summary: str, returns: str,
                   also_raises: str = "") -> Any:
    """cudareduce.min, max, any, all, argmin, argmax or their NaN forms:
    an operator that takes no dtype=, documented."""
    def reduction(a: ArrayLike, method: str = DEFAULT_METHOD, *,
                  threads: int | None = None, stream: Any = None,
                  axis: Any = None, keepdims: Any = False,
                  out: Any = None, devices: Any = None) -> Any:
        return _reduce(op, a, method, threads, None, stream, axis, keepdims,
                       out, devices=devices)

    reduction.__name__ = reduction.__qualname__ = op
    return _documented(f"""{summary}, computed on the GPU.

    Parameters
    ----------
    {{inputs}}
    {{stream}}
    {{devices}}

    Returns
    -------
    {returns}

    {{raises}}{also_raises}
    """)(reduction)


def _extremum(op: str, adjective: str, noun: str, nan_rule: str) -> Any:
    """cudareduce.min, max, nanmin or nanmax."""
    return _without_dtype(
        op, f"{adjective} element of `a`",
        f"""numpy scalar or array
        `out`, when given; else a scalar of `a`'s dtype.  {nan_rule}""",
        f"""
        Also ValueError for an empty array, which has no {noun}.""")


min = _extremum("min", "Smallest", "minimum",  # noqa: A001
                "NaN if any element is NaN, as ``numpy.min``.")
max = _extremum("max", "Largest", "maximum",  # noqa: A001
                "NaN if any element is NaN, as ``numpy.max``.")
nanmin = _extremum("nanmin", "Smallest non-NaN", "minimum",
                   "NaN, with NumPy's RuntimeWarning \"All-NaN slice "
                   "encountered\", if every element is NaN, as "
                   "``numpy.nanmin``.")
nanmax = _extremum("nanmax", "Largest non-NaN", "maximum",
                   "NaN, with NumPy's RuntimeWarning \"All-NaN slice "
                   "encountered\", if every element is NaN, as "
                   "``numpy.nanmax``.")


def _truth(op: str, summary: str, empty: str) -> Any:
    """cudareduce.any or all."""
    return _without_dtype(
        op, f"Whether {summary} of `a` is true (non-zero)",
        f"""numpy.bool or array
        `out`, when given; else ``numpy.{op}``'s answer: NaN counts as
        true, and an empty array gives {empty}.""")


any = _truth("any", "any element", "False")  # noqa: A001
all = _truth("all", "every element", "True")  # noqa: A001


def _index_of(op: str, extreme: str, nan_rule: str) -> Any:
    """cudareduce.argmin, argmax, nanargmin or nanargmax."""
    return _without_dtype(
        op, f"Index of the first {extreme} element of `a`",
        f"""numpy.intp or array
        `out` (one element of int64), when given; else ``numpy.{op}``'s
        answer: the index in the C-order flattened array (NumPy's index,
        whatever the layout: a transposed, strided or reversed view counts
        in its own C order, not in memory order), of the first element
        that is the {extreme}.  {nan_rule}""",
        f"""
        Also ValueError for an empty array ("attempt to get {op[-6:]} of an
        empty sequence", as NumPy).""")


argmin = _index_of("argmin", "smallest",
                   "A NaN counts as the smallest: the first NaN's index.")
argmax = _index_of("argmax", "largest",
                   "A NaN counts as the largest: the first NaN's index.")
nanargmin = _index_of(
    "nanargmin", "smallest non-NaN",
    "NaNs count as +inf, as NumPy replaces them (``[nan, inf]`` gives 0); "
    "if every element is NaN, NumPy's ValueError \"All-NaN slice "
    "encountered\", or with a device `out` -1 stored there (CuPy's "
    "answer: the host never sees the value).  Integers and bool: as "
    ":func:`argmin`.")
nanargmax = _index_of(
    "nanargmax", "largest non-NaN",
    "NaNs count as -inf, as NumPy replaces them (``[nan, -inf]`` gives "
    "0); if every element is NaN, NumPy's ValueError \"All-NaN slice "
    "encountered\", or with a device `out` -1 stored there (CuPy's "
    "answer: the host never sees the value).  Integers and bool: as "
    ":func:`argmax`.")


# The package's names: see the docstring.
for _value in [v for k, v in globals().items() if not k.startswith("_")]:
    if getattr(_value, "__module__", None) == __name__:
        _value.__module__ = "cudareduce"
del _value
