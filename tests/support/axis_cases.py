"""Reductions along axes (issue 43): the case catalogue, the layouts, the
data and NumPy's answers, shared by test_axis.py (offline),
test_axis_gpu.py and the Dask axis tests.

What is promised
    NumPy's semantics, exactly: result shape and dtype, keepdims, the
    errors, the empty and all-NaN rules, the result's kind (a NumPy input
    gives a ``numpy.ndarray``, a device input an array of its own
    library); a reduction over every axis (``axis=None`` or a tuple
    naming them all) is the whole-array reduction: a NumPy scalar, or
    with ``keepdims`` an array of shape ``(1,) * ndim``.

The catalogue (``catalogue()``)
    Geometries, a (shape, axis) each, chosen for the edges (``GEOMETRIES``:
    1 to 4 dimensions; reduced lengths 1, 2, 31-33, 255-257, 8191-8193 and
    3 * 8192 + 5; more than 65,535 results; up to 10^6 elements; tuples in
    and out of order, negative axes, NumPy integer axes), each given a few
    cases by a generator of fixed seed (``CATALOGUE_SEED``), so that the
    same ids are collected in every process of pytest-xdist: the operator
    and dtype in turn over every valid pair, the input kind, layout,
    method and keepdims rotating, and ``dtype=`` where the operator takes
    one.  The data are drawn per test from the session's seed.

The data (``case_values``)
    Every answer but a float sum or mean of real values is exact in any
    order, and compared exactly with NumPy's (NaN equal to NaN, -0.0 to
    0.0): integers (wrapping as NumPy's), bool, min/max/any/all and the
    index operators (values 1 to 4 and the dtype's extremes: ties
    everywhere, first occurrence wins), products (ones and a few powers
    of two, or small integers), and sums and means of the "exact" data
    flavour (non-zero small integers, +-1 in float16 and bfloat16: every
    element counts, and every partial sum is exact).  Float sums and means
    of the "real" flavour (normal values of non-zero mean) are compared
    with the float64 (complex128) sum within ``(L + 2) eps_acc sum|x| +
    eps_result |s|``, L the reduced length, eps_acc the accumulator's
    epsilon (float32 for float16 and bfloat16): the worst case of any
    order of L additions (Higham's gamma_L), so it holds for every
    kernel, and it is not vacuous: it is at most (L + 3) L eps of a
    row's mean |element|, under 1% up to 257 elements (test_axis.py
    checks it, and the checks themselves on NumPy's own answers).  Lost
    elements of long rows are found by the exact flavour.
    NaN: a few in the NaN forms' data and in every other min, max, argmin
    and argmax; a whole slice of NaN in half of the NaN forms' cases.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

OPS = ("sum", "prod", "mean", "min", "max", "any", "all", "nansum",
       "nanprod", "nanmin", "nanmax", "nanmean", "argmin", "argmax",
       "nanargmin", "nanargmax")
INDEX_OPS = ("argmin", "argmax", "nanargmin", "nanargmax")
DTYPE_OPS = ("sum", "prod", "mean", "nansum", "nanprod", "nanmean")
SUM_OPS = ("sum", "nansum", "mean", "nanmean")
PRODUCT_OPS = ("prod", "nanprod")
ORDER_OPS = ("min", "max", "nanmin", "nanmax") + INDEX_OPS

# The methods that must reduce along axes: fast (the default) and cub
# (CUB's segmented reduce).  The ladder's steps may reduce along axes or
# refuse with a ValueError naming 'fast'.
AXIS_METHODS = ("fast", "cub")

NUMPY_DTYPES = tuple(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128"))
DTYPE_NAMES = tuple(d.name for d in NUMPY_DTYPES) + ("bfloat16",)
# bfloat16 is ml_dtypes' (NumPy arrays) and PyTorch's: the operators its
# catalogue cases take (NumPy's own nan functions do not skip its NaN; the
# references here read it as float32).
BFLOAT16_OPS = ("sum", "mean", "max", "argmin", "nansum", "nanmax", "any")
# PyTorch tensors of these dtypes (its unsigned types past uint8 have
# too few operations to make test data with).
TORCH_DTYPES = tuple(n for n in DTYPE_NAMES
                     if n not in ("uint16", "uint32", "uint64"))

KINDS = ("numpy", "cupy", "torch", "dlpack")
# Layouts: (memory order of the axes, steps, starts, offset); see layout().
LAYOUTS = ("C", "F", "transposed", "strided", "negative", "offset",
           "permuted", "mixed")
# Neither PyTorch nor DLPack (whose tensors here are CuPy's) runs
# backwards.
BACKWARD_LAYOUTS = ("negative", "mixed")

EDGE_LENGTHS = (1, 2, 31, 32, 33, 255, 256, 257, 8191, 8192, 8193,
                3 * 8192 + 5)
MANY_RESULTS = 65_535
CATALOGUE_SEED = 43


def single_case(op: str, dtype: str, shape: tuple, axis, *,
                keepdims: bool = False, layout: str = "C",
                kind: str = "numpy", method: str | None = None,
                reduce_dtype: str | None = None, flavour: str = "exact",
                number: int = 0) -> "Case":
    """A case outside the catalogue.  Its `number` decides its data's NaN
    as a catalogue case's (``case_values``): a whole slice of NaN in the
    NaN forms' data where number % 4 < 2, a few NaN in min's, max's,
    argmin's, argmax's and any's where it is odd."""
    return Case(number, op, dtype, tuple(shape), axis, keepdims, layout,
                kind, method, reduce_dtype, flavour)


def error_class(raised) -> type:
    """The class an error is compared by, of a (type, message) pair:
    NumPy's AxisError, else TypeError or ValueError (NumPy raises
    subclasses of them, such as its UFuncTypeError), else its own type."""
    kind = raised[0]
    for base in (np.exceptions.AxisError, TypeError, ValueError):
        if issubclass(kind, base):
            return base
    return kind


def dtype_of(name) -> np.dtype:
    """The NumPy dtype of `name`; bfloat16 is ml_dtypes'."""
    if str(name) == "bfloat16":
        import ml_dtypes  # noqa: PLC0415 - only where bfloat16 is used
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def element_kind(dtype) -> str:
    """NumPy's kind letter, with bfloat16 (kind 'V') a float."""
    dtype = np.dtype(dtype)
    return "f" if dtype.name == "bfloat16" else dtype.kind


def normalized_axes(axis, ndim: int) -> tuple[int, ...]:
    """The axes `axis` names, as NumPy reads a valid one (None: all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axes))


# --- layouts -----------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """Where a logical array's elements lie: a buffer of `offset` elements
    more than needed, holding the axes in memory `order` (outermost
    first), each axis taken every `steps[i]`-th element (backwards where
    negative) after skipping `starts[i]`."""

    order: tuple[int, ...]
    steps: tuple[int, ...]
    starts: tuple[int, ...]
    offset: int

    @property
    def backwards(self) -> bool:
        return any(step < 0 for step in self.steps)

    def padded(self, shape) -> list[int]:
        """The buffer's extent of each logical axis."""
        return [start + n * abs(step)
                for n, step, start in zip(shape, self.steps, self.starts)]

    def slices(self, shape) -> tuple[slice, ...]:
        """The view's index into the padded logical array."""
        return tuple(slice(0, 0) if n == 0
                     else slice(start, None, step) if step > 0
                     else slice(extent - 1 - start, None, step)
                     for n, step, start, extent in zip(
                         shape, self.steps, self.starts,
                         self.padded(shape)))

    def memory_shape(self, shape) -> list[int]:
        padded = self.padded(shape)
        return [padded[a] for a in self.order]

    def to_logical(self) -> tuple[int, ...]:
        """The transpose of the memory-ordered buffer to logical axes."""
        return tuple(int(a) for a in np.argsort(self.order))


def layout(name: str, ndim: int) -> Layout:
    """The layout `name` of an array of `ndim` axes: C; F (Fortran);
    transposed (the axes rotated: x.T for two); strided (steps 2 and 3
    from 1 and 0: ``a[1::2, ::3]``); negative (steps -1, 2, -3, 1);
    offset (C order, 3 elements into the buffer: misaligned for every
    vector width); permuted (another order of the axes); mixed (Fortran
    order, steps -2, 3, -1, 2 from 1, an offset of 1)."""
    axes = tuple(range(ndim))
    ones, zeros = (1,) * ndim, (0,) * ndim
    cycle = lambda values: tuple(itertools.islice(  # noqa: E731
        itertools.cycle(values), ndim))
    if name == "C":
        return Layout(axes, ones, zeros, 0)
    if name == "F":
        return Layout(axes[::-1], ones, zeros, 0)
    if name == "transposed":
        return Layout(axes[1:] + axes[:1], ones, zeros, 0)
    if name == "strided":
        return Layout(axes, cycle((2, 3)), cycle((1, 0)), 0)
    if name == "negative":
        return Layout(axes, cycle((-1, 2, -3, 1)), zeros, 0)
    if name == "offset":
        return Layout(axes, ones, zeros, 3)
    if name == "permuted":
        order = {3: (1, 0, 2), 4: (2, 0, 3, 1)}.get(ndim, axes[::-1])
        return Layout(order, ones, zeros, 0)
    if name == "mixed":
        return Layout(axes[::-1], cycle((-2, 3, -1, 2)), cycle((1, 0)), 1)
    raise ValueError(name)


def laid_out(xp, host: np.ndarray, plan: Layout):
    """A view of a fresh `xp` buffer (NumPy or CuPy) laid out as `plan`,
    holding `host`'s values in its logical order."""
    buffer = xp.zeros(plan.offset + math.prod(plan.padded(host.shape)),
                      host.dtype)
    memory = buffer[plan.offset:].reshape(plan.memory_shape(host.shape))
    view = memory.transpose(plan.to_logical())[plan.slices(host.shape)]
    view[...] = xp.asarray(host)
    return view


# --- the catalogue -----------------------------------------------------------

@dataclass(frozen=True)
class Case:
    number: int
    op: str
    dtype: str
    shape: tuple[int, ...]
    axis: Any
    keepdims: bool
    layout: str
    kind: str
    method: str | None          # None: the default
    reduce_dtype: str | None    # dtype=
    flavour: str                # "exact" or "real": float sums and means

    @property
    def id(self) -> str:
        shape = "x".join(map(str, self.shape))
        axis = ("None" if self.axis is None else
                ",".join(map(str, self.axis)) + ","
                if isinstance(self.axis, tuple) else str(int(self.axis)))
        parts = [f"{self.number:03d}", self.op, self.dtype, self.kind,
                 self.layout, shape, f"axis{axis}"]
        if self.keepdims:
            parts.append("keepdims")
        if self.method is not None:
            parts.append(self.method)
        if self.reduce_dtype is not None:
            parts.append(f"to-{self.reduce_dtype}")
        if self.flavour == "real":
            parts.append("real")
        return "-".join(parts)

    @property
    def axes(self) -> tuple[int, ...]:
        return normalized_axes(self.axis, len(self.shape))

    @property
    def whole(self) -> bool:
        """Every axis reduced: the whole-array reduction."""
        return len(self.axes) == len(self.shape)

    @property
    def length(self) -> int:
        """Elements reduced into each result."""
        return math.prod(self.shape[a] for a in self.axes)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def kwargs(self) -> dict:
        """axis=, keepdims= and dtype= as the call takes them."""
        kwargs = {"axis": self.axis, "keepdims": self.keepdims}
        if self.reduce_dtype is not None:
            kwargs["dtype"] = dtype_of(self.reduce_dtype)
        return kwargs

    def args(self) -> tuple:
        """The positional method, if one is named."""
        return () if self.method is None else (self.method,)


# (shape, axis): every edge of the issue at least once.  The index
# operators take an int: a case of theirs on a tuple reduces its first
# axis (every axis, for a tuple that names them all).
GEOMETRIES = [
    # 1-D: the whole array.
    ((1,), 0), ((2,), -1), ((33,), (0,)), ((257,), None), ((8193,), 0),
    ((3 * 8192 + 5,), -1), ((10 ** 6 + 3,), 0),
    # 2-D rows (the last axis).
    ((1, 1), 1), ((7, 1), -1), ((70_001, 1), 1), ((3, 2), 1),
    ((33, 31), 1), ((17, 32), -1), ((9, 33), 1), ((65_537, 3), -1),
    ((257, 255), 1), ((100, 256), -1), ((64, 257), np.intp(1)),
    ((5, 8191), 1), ((4, 8192), -1), ((3, 8193), 1),
    ((7, 3 * 8192 + 5), -1), ((40, 3 * 8192 + 5), 1), ((2, 500_001), 1),
    ((70_000, 16), 1),
    # 2-D columns (the first axis).
    ((1, 5), 0), ((2, 40), 0), ((31, 100), -2), ((32, 33), 0),
    ((33, 7), 0), ((255, 64), 0), ((256, 3), -2), ((257, 129), 0),
    ((8191, 3), 0), ((8192, 5), np.int64(-2)), ((8193, 2), 0),
    ((3 * 8192 + 5, 7), 0), ((3, 70_000), 0), ((16, 65_537), 0),
    ((500_001, 2), 0),
    # 2-D: every axis.
    ((33, 65), (0, 1)), ((8193, 3), (-1, 0)), ((5, 7), None),
    ((257, 33), (1, 0)),
    # 3-D.
    ((2, 3, 4), 0), ((3, 4, 5), 1), ((4, 5, 6), 2), ((4, 5, 6), (0, 2)),
    ((7, 8193, 2), 1), ((2, 5, 8192), (1, 2)), ((65_537, 2, 2), (1, 2)),
    ((4, 33, 31), (0, 2)), ((257, 3, 5), -2), ((3, 4, 5), (2, 0)),
    ((6, 1, 7), 1), ((5, 6, 7), (0, 1)), ((3, 2, 3 * 8192 + 5), -1),
    ((8193, 3, 4), 0), ((9, 10, 11), (0, 1, 2)), ((2, 3, 4), (-3, -1)),
    # 4-D.
    ((2, 3, 4, 5), (1, 3)), ((3, 2, 255, 2), (0, 2)),
    ((2, 2, 2, 8193), (-1, 0)), ((5, 1, 7, 3), 1), ((1, 1, 1, 1),
                                                     (0, 1, 2, 3)),
    ((4, 3, 2, 6), (3, 0, 1)), ((2, 65_537, 1, 2), (0, 2, 3)),
    ((3, 4, 5, 6), 2), ((3, 4, 5, 6), -4), ((6, 5, 4, 3), (1, 2)),
    ((2, 3, 33, 31), (2, 3)),
]

# dtype= targets by the input's kind: the usual widening, a wrapping
# narrower integer, a cast of floats into integers and into bool.
_REDUCE_DTYPES = {
    "b": ("int32", "float32", "bool"),
    "i": ("int8", "float64", "int32"),
    "u": ("uint64", "float32", "int16"),
    "f": ("float64", "float32", "int32"),
    "c": ("complex128", "complex64"),
}


def _cases_for(size: int) -> int:
    """Cases a geometry gets: fewer as it grows, to keep the suite's time."""
    return 6 if size <= 20_000 else 4 if size <= 200_000 else 2


def _reduce_dtype(rng, op: str, dtype: str) -> str | None:
    """A dtype= for about a third of the operators that take one."""
    kind = element_kind(dtype_of(dtype))
    if op not in DTYPE_OPS or dtype == "bfloat16" or rng.random() > 0.35:
        return None
    targets = _REDUCE_DTYPES[kind]
    if op == "nanmean" and kind in "fc":
        # numpy.nanmean of floats takes only an inexact dtype=.
        targets = tuple(t for t in targets if np.dtype(t).kind in "fc")
    if op in PRODUCT_OPS:
        targets = tuple(t for t in targets if t != "int8")
    return str(rng.choice(targets))


def _fits(kind: str, dtype: str, layout_name: str) -> bool:
    """Whether a `kind` input can be made of `dtype` in `layout_name`."""
    if kind in ("torch", "dlpack") and layout_name in BACKWARD_LAYOUTS:
        return False
    if dtype == "bfloat16":
        return kind in ("numpy", "torch")
    return kind != "torch" or dtype in TORCH_DTYPES


def catalogue() -> list[Case]:
    """The catalogue: the same cases, in the same order, on every call."""
    rng = np.random.default_rng(CATALOGUE_SEED)
    pairs = [(op, d) for d in DTYPE_NAMES for op in OPS
             if d != "bfloat16" or op in BFLOAT16_OPS]
    order = rng.permutation(len(pairs))
    pairs = [pairs[k] for k in order]
    methods = (None, "cub", "fast")
    cases, turn = [], 0
    for shape, axis in GEOMETRIES:
        for _ in range(_cases_for(math.prod(shape))):
            op, dtype = pairs[turn % len(pairs)]
            layout_name = LAYOUTS[(turn * 3 + turn // 8) % len(LAYOUTS)]
            start = turn % len(KINDS)
            kind = next(k for k in KINDS[start:] + KINDS[:start]
                        if _fits(k, dtype, layout_name))
            case_axis = axis
            if op in INDEX_OPS and isinstance(axis, tuple):
                case_axis = (None if len(axis) == len(shape) else axis[0])
            cases.append(Case(
                number=len(cases), op=op, dtype=dtype, shape=shape,
                axis=case_axis, keepdims=bool(rng.random() < 0.4),
                layout=layout_name, kind=kind,
                method=methods[turn % len(methods)],
                reduce_dtype=_reduce_dtype(rng, op, dtype),
                flavour="real" if turn % 2 and op in SUM_OPS
                and dtype[0] in "fc" else "exact"))
            turn += 1
    return cases


# --- data --------------------------------------------------------------------

def _sprinkled(rng, n: int, per_slice: float, length: int) -> np.ndarray:
    """A mask of about `per_slice` elements in each reduced slice."""
    return rng.random(n) < min(0.5, per_slice / max(length, 1))


def _wide_integers(rng, n: int, dtype: np.dtype) -> np.ndarray:
    """Integers over the type's range (signed ones of up to 32 bits leaning
    positive), so that sums overflow the input type and 64-bit sums
    wrap, as NumPy's do."""
    info = np.iinfo(dtype)
    low = info.min // 4 if dtype.kind == "i" and dtype.itemsize <= 4 \
        else info.min
    return rng.integers(low, info.max, size=n, dtype=dtype, endpoint=True)


def _real_values(rng, n: int, dtype: np.dtype, length: int) -> np.ndarray:
    """Normal values of mean 1/4 of their scale (float16's scaled so that
    no sum of `length` overflows)."""
    scale = min(8.0, 32768.0 / length) if dtype == np.float16 else 1000.0
    return (rng.standard_normal(n) + 0.25) * scale


def _numbers(rng, n: int, op: str, dtype: np.dtype, length: int,
             flavour: str) -> np.ndarray:
    """The values of `op`'s data before NaN, as float64 (complex128 for
    complex dtypes) or of `dtype` itself for integers and bool."""
    kind = element_kind(dtype)
    half = dtype.name in ("float16", "bfloat16")
    if op in PRODUCT_OPS:
        if kind == "b":
            return ~_sprinkled(rng, n, 2, length)
        factors = {"f": [2, 0.5, -1], "c": [2, 0.5, -1, 1j, -1j],
                   "u": [2, 3], "i": [2, 3, -1]}[kind]
        x = np.ones(n, complex if kind == "c" else float)
        where = _sprinkled(rng, n, 3 if half else 6, length)
        x[where] = rng.choice(factors, int(where.sum()))
        return x
    if op in ("any", "all"):
        x = np.full(n, op == "all", float)
        x[_sprinkled(rng, n, 1, length)] = op == "any"
        return x.astype(bool) if kind == "b" else x
    if op in ORDER_OPS:
        if kind == "b":
            return rng.random(n) < 0.5
        x = rng.integers(1, 5, n).astype(float)
        if kind == "c":
            x = x + 1j * rng.integers(1, 3, n)
        if kind in "iu":
            info = np.iinfo(dtype)
            x = x.astype(dtype)
            low, high = info.min, info.max
        else:
            low, high = -np.inf, np.inf
        x[_sprinkled(rng, n, 1, length)] = low
        x[_sprinkled(rng, n, 1, length)] = high
        return x
    # sum, mean and their NaN forms
    if kind == "b":
        return rng.random(n) < 0.6
    if kind in "iu":
        if op in ("sum", "nansum"):
            return _wide_integers(rng, n, dtype)
        low = 0 if kind == "u" else -100
        return rng.integers(low, 101, n).astype(dtype)
    if flavour == "real" and not dtype.name == "bfloat16":
        x = _real_values(rng, n, dtype, length)
        if kind == "c":
            x = x + 1j * _real_values(rng, n, dtype, length)
        return x
    magnitude = 1 if half else 4
    x = rng.integers(1, magnitude, n, endpoint=True) * rng.choice([-1, 1], n)
    if kind == "c":
        x = x + 1j * rng.integers(-magnitude, magnitude, n, endpoint=True)
    return x.astype(float) if kind == "f" else x


def case_values(rng, case: Case) -> np.ndarray:
    """The case's data: a C-contiguous array of its shape and dtype."""
    dtype = dtype_of(case.dtype)
    kind = element_kind(dtype)
    n, length = case.size, case.length
    x = _numbers(rng, n, case.op, dtype, length, case.flavour)
    nans = kind in "fc" and (case.op.startswith("nan")
                             or case.op in ("min", "max", "argmin", "argmax",
                                            "any")
                             and case.number % 2 == 1)
    if nans:
        x = x.astype(complex if kind == "c" else float)
        where = _sprinkled(rng, n, 1, length)
        if kind == "c":
            parts = rng.integers(0, 2, int(where.sum()))
            x[where] = np.where(parts == 0, complex(np.nan, 1),
                                complex(2, np.nan))
        else:
            x[where] = np.nan
    x = x.reshape(case.shape)
    if nans and case.op.startswith("nan"):
        if case.whole:
            # A whole-array reduction's result goes to the host, which
            # answers an all-NaN array as NumPy: left to other tests.
            if np.isnan(x).all():
                x.reshape(-1)[0] = 1
        elif case.number % 4 < 2:
            # One whole slice of NaN: at a random index of the kept axes.
            index = tuple(slice(None) if a in case.axes
                          else int(rng.integers(0, case.shape[a]))
                          for a in range(x.ndim))
            x[index] = np.nan
    if dtype.name == "bfloat16":
        return np.ascontiguousarray(x.astype(np.float32).astype(dtype))
    return np.ascontiguousarray(x.astype(dtype))


# --- NumPy's answers ---------------------------------------------------------

@dataclass
class Expected:
    """What a call must give: NumPy's exception, or a result of `dtype` and
    `shape` (a NumPy scalar where `scalar`) equal to `value`, or, where
    `reference` is set, within `bound` of it (NaN where it is NaN), with
    `warnings` (their (category, message) in order)."""

    raised: tuple | None = None
    value: np.ndarray | None = None
    dtype: np.dtype | None = None
    shape: tuple = ()
    scalar: bool = False
    reference: np.ndarray | None = None
    bound: np.ndarray | None = None
    warnings: tuple = ()
    # Warnings the call may give instead of `warnings`: NumPy's, where
    # the issue leaves open whether a device input gives them (an empty
    # reduced axis's mean: the count is known on the host).
    or_warnings: tuple | None = None


def result_dtype(op: str, dtype: np.dtype, reduce_dtype=None) -> np.dtype:
    """NumPy's result dtype of `op` over `dtype`; of bfloat16, bfloat16
    (an index int64, any and all bool), as cudareduce sums it."""
    if dtype.name == "bfloat16":
        if op in INDEX_OPS:
            return np.dtype(np.int64)
        return np.dtype(bool) if op in ("any", "all") else dtype
    kwargs = {} if reduce_dtype is None else {"dtype": reduce_dtype}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, op)(np.ones(1, dtype), **kwargs)).dtype


def _all_nan_slices(host: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    return np.isnan(host).all(axis=axis, keepdims=keepdims)


def device_index_answer(op: str, host: np.ndarray, axis,
                        keepdims: bool) -> np.ndarray:
    """nanargmin/nanargmax of a device input along `axis` (an int): NumPy's
    index where a slice holds a number, -1 where it is all NaN (as CuPy:
    the host never sees the values)."""
    empty = _all_nan_slices(host, axis, True)
    filled = np.where(empty, 0, host)
    answer = getattr(np, op)(filled, axis=axis, keepdims=True)
    answer[empty] = -1
    return answer if keepdims else np.squeeze(answer, axis=axis)


def float_reference(op: str, host: np.ndarray, axes: tuple, keepdims: bool,
                    reduce_dtype, result: np.dtype):
    """(the float64/complex128 answer, the bound of the module docstring)
    of a sum, mean or product of floats; the bound 0 where every partial
    result is exact in the accumulator."""
    values = host if reduce_dtype is None else host.astype(reduce_dtype)
    complex_ = np.dtype(values.dtype).kind == "c" or result.kind == "c"
    wide = values.astype(np.float32 if values.dtype.name == "bfloat16"
                         else values.dtype).astype(
        np.complex128 if complex_ else np.float64)
    nan = np.isnan(wide) if op.startswith("nan") else np.zeros(wide.shape,
                                                               bool)
    identity = 1 if op in PRODUCT_OPS else 0
    wide = np.where(nan, identity, wide)
    counted = np.sum(~nan, axis=axes, keepdims=keepdims)
    accumulator = np.dtype(np.float32) if result.itemsize <= 2 or (
        result.name == "bfloat16") else result
    eps_acc = float(np.finfo(accumulator).eps)
    eps_result = (0.0078125 if result.name == "bfloat16"
                  else float(np.finfo(result).eps))
    exact_limit = 2.0 ** (np.finfo(accumulator).nmant + 1)
    length = math.prod(host.shape[a] for a in axes)
    integral = bool(np.all(wide == np.round(wide.real) + 1j * np.round(
        wide.imag) if complex_ else wide == np.round(wide)))
    if op in PRODUCT_OPS:
        reference = np.prod(wide, axis=axes, keepdims=keepdims)
        powers = np.all(np.isin(np.abs(wide), [0, 0.5, 1, 2]))
        exact = powers or (integral and bool(np.all(
            np.abs(reference) <= exact_limit)))
        bound = (np.zeros(reference.shape) if exact
                 else (length + 2) * eps_acc * np.abs(reference))
        return reference, bound
    total = np.sum(wide, axis=axes, keepdims=keepdims)
    magnitude = np.sum(np.abs(wide), axis=axes, keepdims=keepdims)
    exact = integral & (magnitude <= exact_limit)
    bound = np.where(exact, 0.0, (length + 2) * eps_acc * magnitude
                     + eps_result * np.abs(total))
    if op in ("sum", "nansum"):
        return total, bound
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = total / counted
        bound = bound / counted + 3 * eps_result * np.abs(reference) \
            + np.finfo(np.float64).tiny
    return reference, bound


def expect(case: Case, host: np.ndarray) -> Expected:
    """What cudareduce must give for `case` on the data `host` (see the
    module docstring), from NumPy's answer on the same values."""
    dtype = host.dtype
    bfloat16 = dtype.name == "bfloat16"
    twin = host.astype(np.float32) if bfloat16 else host
    kwargs = case.kwargs()
    device = case.kind != "numpy"
    value, raised, caught = _numpy_call(case.op, twin, kwargs)
    scalar = case.whole and not case.keepdims
    or_warnings = None
    if device and not scalar:
        # The result stays on the device: NumPy's warnings are not given,
        # and an all-NaN slice's index is -1.  The mean of an empty slice
        # may warn as NumPy's (its count is the shape's).
        if case.length == 0 and case.op in ("mean", "nanmean"):
            or_warnings = caught
        caught = ()
        if raised is not None and case.op in ("nanargmin", "nanargmax") \
                and raised[1] == "All-NaN slice encountered":
            value, raised = device_index_answer(
                case.op, twin, case.axis, case.keepdims), None
    if raised is not None:
        return Expected(raised=raised, warnings=caught)
    want = result_dtype(case.op, dtype, kwargs.get("dtype"))
    value = np.asarray(value)
    expected = Expected(value=value.astype(want), dtype=want,
                        shape=value.shape, scalar=scalar, warnings=caught,
                        or_warnings=or_warnings)
    if case.op in SUM_OPS + PRODUCT_OPS and element_kind(want) in "fc":
        expected.reference, expected.bound = float_reference(
            case.op, host, case.axes, case.keepdims, kwargs.get("dtype"),
            want)
    return expected


def _numpy_call(op: str, host: np.ndarray, kwargs: dict):
    """(value, raised, warnings) of NumPy's `op`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, raised = getattr(np, op)(host, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            value, raised = None, (type(exc), str(exc))
    return value, raised, tuple((w.category, str(w.message)) for w in caught)


def same_values(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal dtype, shape and values; NaN (in either part) equal to NaN,
    -0.0 to 0.0."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if element_kind(want.dtype) in "fc":
        nan = np.isnan(want)
        return bool(np.array_equal(np.isnan(got), nan)
                    and np.array_equal(got[~nan], want[~nan]))
    return bool(np.array_equal(got, want))


def mismatch(got_host: np.ndarray, expected: Expected) -> str | None:
    """Why the result's values `got_host` (a NumPy array) are not
    `expected`'s, or None."""
    got_host = np.asarray(got_host)
    if got_host.dtype != expected.dtype:
        return f"dtype {got_host.dtype}, NumPy's {expected.dtype}"
    if got_host.shape != expected.shape:
        return f"shape {got_host.shape}, NumPy's {expected.shape}"
    if expected.reference is None:
        if same_values(got_host, expected.value):
            return None
        wrong = np.flatnonzero(~_equal(got_host, expected.value))[:5]
        return (f"at flat indices {wrong.tolist()}: got "
                f"{got_host.reshape(-1)[wrong]!r}, want "
                f"{expected.value.reshape(-1)[wrong]!r}")
    wide = expected.reference.dtype
    got = got_host.astype(np.float32 if got_host.dtype.name == "bfloat16"
                          else got_host.dtype).astype(wide)
    reference, bound = expected.reference, expected.bound
    exact = bound == 0
    with np.errstate(over="ignore"):
        rounded = reference.astype(np.float32).astype(expected.dtype) \
            if expected.dtype.name == "bfloat16" else reference.astype(
                expected.dtype)
    rounded = rounded.astype(np.float32 if expected.dtype.name == "bfloat16"
                             else expected.dtype).astype(wide)
    nan = np.isnan(reference)
    with np.errstate(invalid="ignore"):
        within = np.where(exact, got == rounded,
                          np.abs(got - reference) <= bound)
    good = np.where(nan, np.isnan(got), within & ~np.isnan(got))
    if good.all():
        return None
    wrong = np.flatnonzero(~good)[:5]
    return (f"at flat indices {wrong.tolist()}: got "
            f"{got.reshape(-1)[wrong]!r}, reference "
            f"{reference.reshape(-1)[wrong]!r} within "
            f"{np.asarray(bound).reshape(-1)[wrong]!r}")


def _equal(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    if element_kind(want.dtype) in "fc":
        return (got == want) | (np.isnan(got) & np.isnan(want))
    return got == want


def runtime_warnings(caught: tuple) -> tuple:
    """The RuntimeWarnings of captured warnings (other libraries' own
    UserWarnings are not NumPy's rules)."""
    return tuple(w for w in caught if issubclass(w[0], RuntimeWarning))


def same_bits(got, want) -> bool:
    """The same dtype, shape and bytes (NaN payloads, signs of zero)."""
    got, want = np.asarray(got), np.asarray(want)
    return (got.dtype == want.dtype and got.shape == want.shape
            and np.ascontiguousarray(got).tobytes()
            == np.ascontiguousarray(want).tobytes())
