"""The bench's input data, made for each op so that its answer is exact in
every accumulator and every order of the reduction, and the exact check of
a computed result against NumPy's answer on the same data.

- Sums (``sum``, ``nansum``, ``mean``, ``nanmean``): random non-zero
  integers of small magnitude (:func:`value_limit`), of either sign where
  the dtype has one (bool: all True; complex: the real and the imaginary
  part each such an integer, within its float's limit), so that every
  partial sum is exact and a lost or doubled element changes the sum.
- Products (``prod``, ``nanprod``): ones but for :data:`FACTOR_COUNT`
  factors of :data:`FACTORS` at random places: powers of two (and -1) for
  floats, and 1j and -1j besides for complex, so that every partial
  product is exact (a power of two times 1, -1, 1j or -1j); bool: all
  True, or one False half the time.
- Extremes (``min``, ``max``, ``nanmin``, ``nanmax``): random integers
  strictly inside a range, and each end of it once at a random place, so
  that one element decides each answer.  Complex, ordered by real part,
  then imaginary part: real parts strictly inside, imaginary parts
  anywhere in the range; each end of the range is the real part of two
  elements (:func:`_rivals`), of which the one with the lesser imaginary
  part is the minimum at the low end, the greater the maximum at the high
  end: the imaginary part decides between them.
- Their places (``argmin``, ``argmax``, ``nanargmin``, ``nanargmax``): the
  same random integers, one end of the range at one random place and the
  other at 2 to :data:`TIE_COUNT` (ties: the first is the answer), either
  way round at random; bool: one value, the ends at their places; complex:
  each end an element of :func:`_rivals` (the lone one once, the tied one
  2 to :data:`TIE_COUNT` times), each with its rival once besides.
  ``argmin`` and ``argmax`` on floats and complex: half the time one NaN
  besides (complex: in the real or the imaginary part, at random), which
  then decides (NumPy's NaN comes before any number).
- ``any``: zeros with up to :data:`FEW` non-zero elements; ``all``:
  non-zero elements (a sum's) with up to :data:`FEW` zeros; none of them
  at times, so that each answer comes out both ways.  Complex: a third of
  the non-zero elements have a zero real part, a third a zero imaginary
  part (an element is non-zero where either part is).
- The NaN-skipping ops on floats and complex: :data:`NAN_COUNT` NaN
  elements at random places besides (at most half the elements, none
  where an answer is decided; complex: NaN in the real or the imaginary
  part, at random, the other part kept).

The deciding elements are sometimes the last (:func:`_places`): a method
that drops the tail is caught.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cudareduce import _cudareduce
from .names import DEFAULT_OP, dtype_kind, numpy_dtype

__all__ = ["FACTORS", "FACTOR_COUNT", "FEW", "MAX_MAGNITUDE", "NAN_COUNT",
           "TIE_COUNT", "is_correct", "random_array", "reference_result",
           "value_limit"]

#: The largest magnitude of the data, where the dtype holds it.
MAX_MAGNITUDE = 1000
#: How many elements of a product's data are factors other than 1 ...
FACTOR_COUNT = 12
#: ... drawn from these, by dtype kind: exact products in every order
#: (float16's included: at most 2^12 in magnitude, at least 2^-12;
#: complex: a power of two times 1, -1, 1j or -1j, one part zero, so that
#: NumPy's product formula, (ac - bd) + (ad + bc)j, adds a zero to an
#: exact product in each part).
FACTORS = {"f": (-1.0, 2.0, 0.5), "i": (2, 3, -1), "u": (2, 3),
           "c": (-1.0, 2.0, 0.5, 1j, -1j)}
#: At most this many elements of any's data are non-zero, of all's zero.
FEW = 3
#: How many NaNs the data of a NaN-skipping op holds, on floats and
#: complex.
NAN_COUNT = 8
#: One end of an arg op's data is at one place, the other at 2 to this
#: many places (ties: the first is the answer).
TIE_COUNT = 3


def _has_nan(dtype: str) -> bool:
    """Whether `dtype` holds NaN: its data meet NaNs (floats, complex)."""
    return dtype_kind(dtype) in "fc"


def _part(dtype: str) -> str:
    """The float of a complex `dtype`'s real and imaginary parts: float32
    for complex64, float64 for complex128."""
    return np.finfo(numpy_dtype(dtype)).dtype.name


def _largest(dtype: str) -> int:
    """:data:`MAX_MAGNITUDE`, or where smaller the dtype's largest value
    (int8: 127, uint8: 255, bool: 1) or, for floats, the largest integer
    below which it holds every integer (bfloat16: 256); complex: its
    parts' float's."""
    kind = dtype_kind(dtype)
    if kind == "b":
        return 1
    if kind == "c":
        return _largest(_part(dtype))
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
    bfloat16 likewise, from n = 2^5 on.  Complex: its parts' float's
    (float32's for complex64), as each part is summed apart.
    """
    if dtype_kind(dtype) == "c":
        return value_limit(n, _part(dtype))
    if dtype_kind(dtype) != "f":
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
    of either sign for signed integers and floats; complex: such a real
    part and such an imaginary part, both non-zero, so that a part lost
    or doubled changes the sum."""
    if dtype_kind(dtype) == "c":
        a = np.empty(n, numpy_dtype(dtype))
        a.real = _terms(rng, n, _part(dtype))
        a.imag = _terms(rng, n, _part(dtype))
        return a
    magnitude = rng.integers(1, value_limit(n, dtype), size=n,
                             dtype=np.int32, endpoint=True)
    if dtype_kind(dtype) in "if":
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
    kind = dtype_kind(dtype)
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
    return (0 if dtype_kind(dtype) in "bu" else -high), high


def _inside_complex(rng: np.random.Generator, n: int, dtype: str
                    ) -> np.ndarray:
    """Complex extremes' data but for the ends: `n` random integer real
    parts strictly inside [low, high] (:func:`_ends`), and imaginary parts
    anywhere in it, so that a method that orders by the imaginary part
    first (or by magnitude) picks another element."""
    low, high = _ends(dtype)
    a = np.empty(n, numpy_dtype(dtype))
    a.real = rng.integers(low + 1, high - 1, size=n, dtype=np.int32,
                          endpoint=True)
    a.imag = rng.integers(low, high, size=n, dtype=np.int32, endpoint=True)
    return a


def _rivals(rng: np.random.Generator, dtype: str) -> np.ndarray:
    """The ends of complex extremes' data, each with a rival of the same
    real part: [low + s*1j, high + t*1j, low + t*1j, high + s*1j] for
    random integers low < s < t < high (:func:`_ends`).  By NumPy's order
    (real part, then imaginary part) the first is the least of the data
    and the second the greatest; their rivals come next after them, so
    that a method that orders by the real part alone can take a rival."""
    low, high = _ends(dtype)
    s, t = np.sort(rng.choice(high - low - 1, size=2, replace=False)
                   + low + 1)
    return np.array([complex(low, s), complex(high, t), complex(low, t),
                     complex(high, s)], numpy_dtype(dtype))


def _extremes(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """Min's and max's data: random integers strictly inside [low, high]
    (:func:`_ends`), and low and high once each at random places (bool,
    with nothing strictly inside: random bools).  Complex:
    :func:`_inside_complex`, and the ends with their rivals
    (:func:`_rivals`) once each at random places."""
    if dtype_kind(dtype) == "c":
        a = _inside_complex(rng, n, dtype)
        ends = _places(rng, n, 4)
        a[ends] = _rivals(rng, dtype)[:ends.size]
        return a, ends
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
    places.  Complex: :func:`_inside_complex`, the ends those of
    :func:`_rivals`, and after the tied places each end's rival once (the
    lone end's first)."""
    if dtype_kind(dtype) == "c":
        return _complex_ties(rng, n, dtype)
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


def _complex_ties(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """:func:`_ties`'s data of a complex `dtype`."""
    a = _inside_complex(rng, n, dtype)
    # Rows (end, its rival): the low end's, the high end's.
    ends = _rivals(rng, dtype).reshape(2, 2).T
    (lone, lone_rival), (tied, tied_rival) = ends[rng.permutation(2)]
    ties = int(rng.integers(2, TIE_COUNT, endpoint=True))
    places = _places(rng, n, 1 + ties + 2)
    # A tied end would decide only by its first place, never the last.
    places = np.concatenate([places[places == n - 1],
                             places[places != n - 1]])
    a[places[:1]] = lone
    a[places[1:1 + ties]] = tied
    rivals = places[1 + ties:]
    a[rivals] = np.array([lone_rival, tied_rival], a.dtype)[:rivals.size]
    return a, places


def _put_nans(rng: np.random.Generator, a: np.ndarray,
              places: np.ndarray) -> None:
    """NaN at `places` of `a`; complex: in the real or the imaginary part
    at random, the other part kept (NumPy's element is NaN either way),
    so that a method that looks at one part only is caught."""
    if a.dtype.kind != "c":
        a[places] = np.nan
        return
    in_real = rng.integers(0, 2, size=places.size).astype(bool)
    a.real[places[in_real]] = np.nan
    a.imag[places[~in_real]] = np.nan


def _one_nan(rng: np.random.Generator, a: np.ndarray, n: int,
             dtype: str) -> None:
    """Argmin's and argmax's NaN: on floats and complex, half the time one
    NaN at a random place of `a` (:func:`_put_nans`), which then decides
    (NumPy's NaN comes before any number).

    One NaN, not several: of two NaNs, CuPy's argmin and argmax keep the
    left operand of their combine (cupy_cub.cu's ArgMin and ArgMax,
    _routines_statistics.pyx's my_argmin_float), which need not be the
    first in the array: they would come out WRONG at random, their times
    lost.  Ours are held to the first of several NaNs by the operators'
    GPU tests.
    """
    if _has_nan(dtype) and rng.integers(2):
        _put_nans(rng, a, _places(rng, n, 1))


def _few(rng: np.random.Generator, n: int) -> np.ndarray:
    """Up to :data:`FEW` random places, none at times (:func:`_places`)."""
    return _places(rng, n, int(rng.integers(FEW + 1)))


def _nonzeros(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """`n` non-zero values: :func:`_terms`'s, but for complex a third with
    the real part zero and a third with the imaginary part zero, so that a
    method that tests one part only is caught."""
    a = _terms(rng, n, dtype)
    if dtype_kind(dtype) == "c":
        zero = rng.integers(0, 3, size=n)
        a.real[zero == 0] = 0
        a.imag[zero == 1] = 0
    return a


def _mostly_zeros(rng: np.random.Generator, n: int, dtype: str) -> _Data:
    """Any's data: zeros, but for up to :data:`FEW` of :func:`_nonzeros`'s
    values."""
    a = np.zeros(n, numpy_dtype(dtype))
    places = _few(rng, n)
    a[places] = _nonzeros(rng, places.size, dtype)
    return a, places


def _mostly_nonzero(rng: np.random.Generator, n: int, dtype: str
                    ) -> _Data:
    """All's data: :func:`_nonzeros`'s values, but for up to :data:`FEW`
    zeros."""
    a = _nonzeros(rng, n, dtype)
    places = _few(rng, n)
    a[places] = 0
    return a, places


#: The data of each op, by its facts (the extension's rows): its kernel
#: operator without NaN (the NaN-skipping ops take their plain form's
#: data) and whether it selects an element, which a sum or a product does
#: only into bool, as a logical or and and (any, all).  An op of an
#: existing kernel operator needs no entry of its own.
_DATA: dict[tuple[str, bool],
            Callable[[np.random.Generator, int, str], _Data]] = {
    ("SUM", False): _sum_data, ("PROD", False): _factors,
    ("SUM", True): _mostly_zeros, ("PROD", True): _mostly_nonzero,
    ("MIN", True): _extremes, ("MAX", True): _extremes,
    ("ARGMIN", True): _ties, ("ARGMAX", True): _ties,
}


def random_array(rng: np.random.Generator, n: int, dtype: str,
                 op: str = DEFAULT_OP) -> np.ndarray:
    """`n` random elements of `dtype` whose reduction by `op` is exact in
    every order and accumulator (see the module docstring); with up to
    :data:`NAN_COUNT` NaNs at random places for a NaN-skipping op on
    floats and complex (at most half the elements, none of those that
    decide the answer), and for an index op that skips none, half the time
    one NaN that decides (:func:`_one_nan`).  The data are chosen by the
    op's facts (:data:`_DATA`), not by its name."""
    facts = _cudareduce.OPERATOR_FACTS[op]
    kernel_op = _cudareduce.OPERATOR_FACTS[facts.without_nan].kernel_op
    a, deciding = _DATA[kernel_op, facts.selects_element](rng, n, dtype)
    if facts.skips_nan and _has_nan(dtype):
        nans = _places(rng, n, min(NAN_COUNT, n // 2))
        _put_nans(rng, a, np.setdiff1d(nans, deciding))
    elif facts.gives_index:
        _one_nan(rng, a, n, dtype)
    return a


#: The accumulator in which the reference of a sum or a product (an op
#: that takes dtype= and divides by no count) is computed exactly, by dtype
#: kind, whatever accumulator NumPy's own loop uses.
_EXACT_ACCUMULATOR = {"b": np.int64, "i": np.int64, "u": np.uint64,
                      "f": np.float64, "c": np.complex128}


def reference_result(a: np.ndarray, op: str = DEFAULT_OP) -> Any:
    """NumPy's answer of `op` on :func:`random_array`'s `a`, computed
    exactly: a NumPy scalar of NumPy's result dtype.

    Sums and products are computed in an exact accumulator (int64, uint64,
    float64, complex128) and rounded once to NumPy's result dtype: what an
    exact wider accumulator gives, as every method and peer sums float16
    (through float32, whose partial sums of values of magnitude 1 stay
    exact below 2^24); for the other dtypes the rounding changes nothing
    (:func:`value_limit`).  The mean is NumPy's: its accumulator (float32
    for float16 and float32, else float64) sums the data exactly, and its
    divide is the one to match (complex: NumPy's complex divide, of the
    sum in the input's type); nanmean's is NumPy's divide of the exact
    sum, rounded once to the input's float or complex dtype, by the count
    of numbers (complex: of the elements with no NaN part).
    Extremes, any and all select an element,
    the arg ops its index (an int64): NumPy's answer is exact.  bfloat16's
    answers are those of its values as float32 (exact), rounded once to
    bfloat16: ml_dtypes' bfloat16 is no ``numpy.inexact``, so that NumPy's
    NaN-skipping functions would not skip its NaNs (``numpy.nanargmax``
    would give a NaN's index).
    """
    function = getattr(np, op)
    facts = _cudareduce.OPERATOR_FACTS[op]
    kind = dtype_kind(a.dtype.name)
    data = a if a.dtype.kind == kind else a.astype(np.float32)
    if facts.counts and kind in "fc":
        # numpy.nanmean's divide, of the exact sum rounded once.
        count = np.intp(np.count_nonzero(~np.isnan(data)))
        total = a.dtype.type(np.nansum(data, dtype=_EXACT_ACCUMULATOR[kind]))
        return a.dtype.type(total / count)
    if not facts.takes_dtype or facts.divides_by_count:
        result = function(data)
        return a.dtype.type(result) \
            if data is not a and isinstance(result, np.floating) else result
    exact = function(data, dtype=_EXACT_ACCUMULATOR[kind])
    return function(np.ones(1, a.dtype)).dtype.type(exact)


def is_correct(value: Any, reference: Any) -> bool:
    """Whether a computed `value` equals `reference`
    (:func:`reference_result` of :func:`random_array`'s data) by value, NaN
    equal to NaN; a value that is not a number is not correct.  Where
    either is complex, both parts must be equal, NaN equal to NaN part by
    part."""
    # As Python numbers: NumPy would compare a Python float with a float16
    # reference in float16, and 2049.0 with 2048 would pass.
    expected = reference.item() if isinstance(reference, np.generic) \
        else reference
    if isinstance(expected, complex) \
            or isinstance(value, (complex, np.complexfloating)):
        return _is_complex_correct(value, expected)
    try:
        got = int(value) if isinstance(value, (int, np.integer, np.bool_)) \
            else float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return got == expected or (math.isnan(got) and math.isnan(expected))


def _is_complex_correct(value: Any, expected: Any) -> bool:
    """:func:`is_correct` where `value` or the Python number `expected` is
    complex: each part equal, NaN equal to NaN."""
    if isinstance(value, (str, bytes)):
        return False        # complex() would parse "1+2j"
    try:
        got, want = complex(value), complex(expected)
    except (TypeError, ValueError, OverflowError):
        return False
    return all(g == w or (math.isnan(g) and math.isnan(w))
               for g, w in ((got.real, want.real), (got.imag, want.imag)))
