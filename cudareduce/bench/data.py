"""The bench's input data, made for each op so that its answer is exact in
every accumulator and every order of the reduction, and the exact check of
a computed result against NumPy's answer on the same data.

- Sums (``sum``, ``nansum``, ``mean``, ``nanmean``): random non-zero
  integers of small magnitude (:func:`value_limit`), of either sign where
  the dtype has one (bool: all True), so that every partial sum is exact
  and a lost or doubled element changes the sum.
- Products (``prod``, ``nanprod``): ones but for :data:`FACTOR_COUNT`
  factors of :data:`FACTORS` at random places: powers of two (and -1) for
  floats, so that every partial product is exact; bool: all True, or one
  False half the time.
- Extremes (``min``, ``max``, ``nanmin``, ``nanmax``): random integers
  strictly inside a range, and each end of it once at a random place, so
  that one element decides each answer.
- Their places (``argmin``, ``argmax``, ``nanargmin``, ``nanargmax``): the
  same random integers, one end of the range at one random place and the
  other at 2 to :data:`TIE_COUNT` (ties: the first is the answer), either
  way round at random; bool: one value, the ends at their places.
  ``argmin`` and ``argmax`` on floats: half the time one NaN besides,
  which then decides (NumPy's NaN comes before any number).
- ``any``: zeros with up to :data:`FEW` non-zero elements; ``all``:
  non-zero elements (a sum's) with up to :data:`FEW` zeros; none of them
  at times, so that each answer comes out both ways.
- The NaN-skipping ops on floats: :data:`NAN_COUNT` NaNs at random places
  besides (at most half the elements, none where an answer is decided).

The deciding elements are sometimes the last (:func:`_places`): a method
that drops the tail is caught.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cudareduce.results import DEFAULT_OP, is_float_dtype, numpy_dtype

__all__ = ["FACTORS", "FACTOR_COUNT", "FEW", "MAX_MAGNITUDE", "NAN_COUNT",
           "TIE_COUNT", "is_correct", "random_array", "reference_result",
           "value_limit"]

#: The largest magnitude of the data, where the dtype holds it.
MAX_MAGNITUDE = 1000
#: How many elements of a product's data are factors other than 1 ...
FACTOR_COUNT = 12
#: ... drawn from these, by dtype kind: exact products in every order
#: (float16's included: at most 2^12 in magnitude, at least 2^-12).
FACTORS = {"f": (-1.0, 2.0, 0.5), "i": (2, 3, -1), "u": (2, 3)}
#: At most this many elements of any's data are non-zero, of all's zero.
FEW = 3
#: How many NaNs the data of a NaN-skipping op holds, on floats.
NAN_COUNT = 8
#: One end of an arg op's data is at one place, the other at 2 to this
#: many places (ties: the first is the answer).
TIE_COUNT = 3


def _kind(dtype: str) -> str:
    """NumPy's kind of `dtype`: ``"b"``, ``"i"``, ``"u"``, or ``"f"`` for
    every float (ml_dtypes' bfloat16, whose kind is ``"V"``, included)."""
    return "f" if is_float_dtype(dtype) else np.dtype(dtype).kind


def _largest(dtype: str) -> int:
    """:data:`MAX_MAGNITUDE`, or where smaller the dtype's largest value
    (int8: 127, uint8: 255, bool: 1) or, for floats, the largest integer
    below which it holds every integer (bfloat16: 256)."""
    kind = _kind(dtype)
    if kind == "b":
        return 1
    if kind == "f":
        return min(MAX_MAGNITUDE, 2 ** _significand_bits(dtype))
    return min(MAX_MAGNITUDE, int(np.iinfo(dtype).max))


def _significand_bits(dtype: str) -> int:
    """The bits of the float `dtype`'s significand, the implicit one
    included: 11 for float16, 8 for bfloat16, 24 for float32, 53 for
    float64."""
    dt = numpy_dtype(dtype)
    if dt.kind == "f":
        return np.finfo(dt).nmant + 1
    import ml_dtypes  # noqa: PLC0415  (numpy_dtype imported it)
    return ml_dtypes.finfo(dt).nmant + 1


def value_limit(n: int, dtype: str) -> int:
    """The largest magnitude of a sum's `n` values: 1000 (127 for int8, 255
    for uint8, 1 for bool), or for floats fewer where needed for exact sums
    in every order.

    A partial sum of k <= n independent values of random sign and magnitude
    <= L exceeds t in magnitude with probability <= 2 exp(-t^2 / (2 k L^2))
    (Hoeffding).  With t = 2^(significand bits), the largest integer below
    which every integer is a float of the dtype, and L = t / sqrt(2^11 n),
    that is <= 2 exp(-1024) for each of the < 2n partial sums of any plan:
    every sum is exact.  float32: L = 1000 up to n = 2^17, 22 at 2^28, 1
    from 2^36 on (the margin exp(-1024) then holds up to 2^37 elements,
    512 GiB of float32); float64: 1000 always; float16: 1 from 2^11 on,
    where the margin holds only while |sum| < 2^11, so a float16 sum is
    checked against the exact sum rounded once (:func:`reference_result`);
    bfloat16 likewise, from n = 2^5 on.
    """
    if _kind(dtype) != "f":
        return _largest(dtype)
    t = 2 ** _significand_bits(dtype)
    return max(1, min(MAX_MAGNITUDE,
                      math.isqrt(t * t // (2 ** 11 * max(n, 1)))))


def _places(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    """`count` distinct random indices of `n` elements (at most `n`), the
    last element among them half the time."""
    places = rng.choice(n, size=min(count, n), replace=False)
    if places.size and n - 1 not in places and rng.integers(2):
        places[rng.integers(places.size)] = n - 1
    return places


#: The data of an op (see the module docstring) and the places of the
#: elements that decide its answer: (array, places).
_Data = tuple[np.ndarray, np.ndarray]
_NO_PLACES = np.empty(0, np.int64)


def _terms(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """`n` random non-zero integers of magnitude up to :func:`value_limit`,
    of either sign for signed integers and floats."""
    magnitude = rng.integers(1, value_limit(n, dtype), size=n,
                             dtype=np.int32, endpoint=True)
    if _kind(dtype) in "if":
        negative = rng.integers(0, 2, size=n, dtype=np.int8).astype(bool)
        np.negative(magnitude, out=magnitude, where=negative)
    return magnitude.astype(numpy_dtype(dtype), copy=False)


def _sum_data(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """A sum's data: :func:`_terms`, every one of which counts."""
    return _terms(rng, n, dtype), _NO_PLACES


def _factors(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """A product's data: ones, but for :data:`FACTOR_COUNT` factors of
    :data:`FACTORS` at random places; bool: all True, or one False half
    the time."""
    a = np.ones(n, numpy_dtype(dtype))
    kind = _kind(dtype)
    if kind == "b":
        places = _places(rng, n, int(rng.integers(2)))
        a[places] = False
    else:
        places = _places(rng, n, FACTOR_COUNT)
        a[places] = rng.choice(np.array(FACTORS[kind], a.dtype),
                               size=places.size)
    return a, places


def _ends(dtype: str) -> tuple[int, int]:
    """(low, high) of the extremes' data: -1000..1000, or 0.. for unsigned
    integers and bool, as the dtype holds them (:func:`_largest`)."""
    high = _largest(dtype)
    return (0 if _kind(dtype) in "bu" else -high), high


def _extremes(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """Min's and max's data: random integers strictly inside [low, high]
    (:func:`_ends`), and low and high once each at random places (bool,
    with nothing strictly inside: random bools)."""
    low, high = _ends(dtype)
    inside = (low + 1, high - 1) if high - low > 1 else (low, high)
    a = rng.integers(*inside, size=n, dtype=np.int32,
                     endpoint=True).astype(numpy_dtype(dtype))
    ends = _places(rng, n, 2)
    a[ends] = np.array([low, high], a.dtype)[:ends.size]
    return a, ends


def _ties(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """The arg ops' data: random integers strictly inside [low, high]
    (:func:`_ends`), one end (either, at random) at one random place and
    the other at 2 to :data:`TIE_COUNT`, so that the first of equal
    extremes is the answer; the lone end is the last element's where the
    last is among the places (half the time, :func:`_places`).  Bool, with
    nothing strictly inside: one value at random, and the ends at their
    places."""
    low, high = _ends(dtype)
    dt = numpy_dtype(dtype)
    if high - low > 1:
        a = rng.integers(low + 1, high - 1, size=n, dtype=np.int32,
                         endpoint=True).astype(dt)
    else:
        a = np.full(n, rng.integers(2), dt)
    lone, tied = rng.permutation(np.array([low, high], dt))
    places = _places(rng, n, 1 + int(rng.integers(2, TIE_COUNT,
                                                  endpoint=True)))
    # A tied end would decide only by its first place, never the last.
    places = np.concatenate([places[places == n - 1],
                             places[places != n - 1]])
    a[places[:1]] = lone
    a[places[1:]] = tied
    return a, places


def _ties_or_nan(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """Argmin's and argmax's data: :func:`_ties`, and on floats half the
    time one NaN at a random place, which then decides (NumPy's NaN comes
    before any number).

    One NaN, not several: of two NaNs, CuPy's argmin and argmax keep the
    left operand of their combine (cupy_cub.cu's ArgMin and ArgMax,
    _routines_statistics.pyx's my_argmin_float), which need not be the
    first in the array: they would come out WRONG at random, their times
    lost.  Ours are held to the first of several NaNs by the operators'
    GPU tests.
    """
    a, places = _ties(rng, n, dtype)
    if _kind(dtype) == "f" and rng.integers(2):
        places = _places(rng, n, 1)
        a[places] = np.nan
    return a, places


def _few(rng: np.random.Generator, n: int) -> np.ndarray:
    """Up to :data:`FEW` random places, none at times (:func:`_places`)."""
    return _places(rng, n, int(rng.integers(FEW + 1)))


def _mostly_zeros(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """Any's data: zeros, but for up to :data:`FEW` of :func:`_terms`'s
    non-zero values."""
    a = np.zeros(n, numpy_dtype(dtype))
    places = _few(rng, n)
    a[places] = _terms(rng, places.size, dtype)
    return a, places


def _mostly_nonzero(rng: np.random.Generator, n: int, dtype: str
                    ) -> _Data:
    """All's data: :func:`_terms`'s non-zero values, but for up to
    :data:`FEW` zeros."""
    a = _terms(rng, n, dtype)
    places = _few(rng, n)
    a[places] = 0
    return a, places


#: The data of each op.
_DATA: dict[str, Callable[[np.random.Generator, int, str], _Data]] = {
    "sum": _sum_data, "nansum": _sum_data, "mean": _sum_data,
    "nanmean": _sum_data,
    "prod": _factors, "nanprod": _factors,
    "min": _extremes, "max": _extremes, "nanmin": _extremes,
    "nanmax": _extremes,
    "any": _mostly_zeros, "all": _mostly_nonzero,
    "argmin": _ties_or_nan, "argmax": _ties_or_nan, "nanargmin": _ties,
    "nanargmax": _ties,
}


def random_array(rng: np.random.Generator, n: int, dtype: str,
                 op: str = DEFAULT_OP) -> np.ndarray:
    """`n` random elements of `dtype` whose reduction by `op` is exact in
    every order and accumulator (see the module docstring); with up to
    :data:`NAN_COUNT` NaNs at random places for a NaN-skipping op on
    floats (at most half the elements, none of those that decide the
    answer)."""
    a, deciding = _DATA[op](rng, n, dtype)
    if op.startswith("nan") and _kind(dtype) == "f":
        nans = _places(rng, n, min(NAN_COUNT, n // 2))
        a[np.setdiff1d(nans, deciding)] = np.nan
    return a


#: The ops whose reference is computed in an exact accumulator, by dtype
#: kind, whatever accumulator NumPy's own loop uses.
_ACCUMULATING = ("sum", "prod", "nansum", "nanprod")
_EXACT_ACCUMULATOR = {"b": np.int64, "i": np.int64, "u": np.uint64,
                      "f": np.float64}


def reference_result(a: np.ndarray, op: str = DEFAULT_OP) -> Any:
    """NumPy's answer of `op` on :func:`random_array`'s `a`, computed
    exactly: a NumPy scalar of NumPy's result dtype.

    Sums and products are computed in an exact accumulator (int64, uint64,
    float64) and rounded once to NumPy's result dtype: what an exact wider
    accumulator gives, as every method and peer sums float16 (through
    float32, whose partial sums of values of magnitude 1 stay exact below
    2^24); for the other dtypes the rounding changes nothing
    (:func:`value_limit`).  The mean is NumPy's: its accumulator (float32
    for float16 and float32, else float64) sums the data exactly, and its
    divide is the one to match; nanmean's is NumPy's divide of the exact
    sum, rounded once to the input's float dtype, by the count of numbers.
    Extremes, any and all select an element,
    the arg ops its index (an int64): NumPy's answer is exact.  bfloat16's
    answers are those of its values as float32 (exact), rounded once to
    bfloat16: ml_dtypes' bfloat16 is no ``numpy.inexact``, so that NumPy's
    NaN-skipping functions would not skip its NaNs (``numpy.nanargmax``
    would give a NaN's index).
    """
    function = getattr(np, op)
    kind = _kind(a.dtype.name)
    data = a if a.dtype.kind == kind else a.astype(np.float32)
    if op == "nanmean" and kind == "f":
        # numpy.nanmean's divide, of the exact sum rounded once.
        count = np.intp(np.count_nonzero(~np.isnan(data)))
        total = a.dtype.type(np.nansum(data, dtype=np.float64))
        return a.dtype.type(total / count)
    if op not in _ACCUMULATING:
        result = function(data)
        return a.dtype.type(result) \
            if data is not a and isinstance(result, np.floating) else result
    exact = function(data, dtype=_EXACT_ACCUMULATOR[kind])
    return function(np.ones(1, a.dtype)).dtype.type(exact)


def is_correct(value: Any, reference: Any) -> bool:
    """Whether a computed `value` equals `reference`
    (:func:`reference_result` of :func:`random_array`'s data) by value, NaN
    equal to NaN; a value that is not a number is not correct."""
    # As Python numbers: NumPy would compare a Python float with a float16
    # reference in float16, and 2049.0 with 2048 would pass.
    expected = reference.item() if isinstance(reference, np.generic) \
        else reference
    try:
        got = int(value) if isinstance(value, (int, np.integer, np.bool_)) \
            else float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return got == expected or (math.isnan(got) and math.isnan(expected))
