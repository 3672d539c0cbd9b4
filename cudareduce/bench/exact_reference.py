"""Exact sums of doubles and their correct rounding, in Python integers and
fractions: the reference that the ``--exact`` bench checks ``exact=True``
against, and tests/test_kulisch.py the exact accumulator
(cuda/exact/kulisch.h).

A result is a format's bits (an int; bfloat16 has no NumPy dtype) and
whether it overflowed: the exact value beyond the format's largest finite
one after rounding.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["FORMATS", "TINIEST", "array_sum", "binade", "exact_sum",
           "expected", "infinity_bits", "limits", "nan_bits", "round_exact",
           "value_of"]

#: Each format's significand bits (its leading one included) and exponent
#: bits.
FORMATS = {"float64": (53, 11), "float32": (24, 8), "float16": (11, 5),
           "bfloat16": (8, 8)}

#: Every finite double is an integer multiple of this.
TINIEST = Fraction(1, 2 ** 1074)


def exact_sum(values) -> Fraction:
    """The exact sum of finite doubles (in integers: each times
    2^1074)."""
    total = 0
    for x in values:
        numerator, denominator = float(x).as_integer_ratio()
        total += numerator * (2 ** 1074 // denominator)
    return Fraction(total, 2 ** 1074)


#: array_sum's pieces of a significand: three of 18 bits (54 >= 53), so
#: that a float64 sum of up to 2^35 pieces stays an exact integer (< 2^53).
_PIECE_BITS, _PIECES = 18, 3
#: array_sum takes this many elements at a time (bounds its memory).
_CHUNK = 1 << 24
#: The least unit of a piece is 2^-_UNIT_BITS: frexp's least exponent
#: (-1073, of the least subnormal) less the significand's 53 bits.
_UNIT_BITS = 1073 + 53


def array_sum(x) -> Fraction:
    """exact_sum of a NumPy array of finite floats (any float dtype that
    converts to float64 exactly), fast enough for a billion: each value's
    53-bit significand (frexp), cut into three 18-bit pieces, each piece
    summed by exponent (``numpy.bincount``, whose float64 sums of pieces
    stay exact integers up to 2^35 values)."""
    flat = np.asarray(x).ravel()
    if flat.size >= 1 << 35:
        raise ValueError("array_sum: at most 2^35 - 1 values")
    total = 0                           # times 2^_UNIT_BITS
    for start in range(0, flat.size, _CHUNK):
        m, e = np.frexp(flat[start:start + _CHUNK].astype(np.float64))
        significand = (m * 2.0 ** 53).astype(np.int64)
        sign = np.sign(significand).astype(np.float64)
        magnitude = np.abs(significand)
        least = int(e.min())
        for k in range(_PIECES):
            piece = (magnitude >> (_PIECE_BITS * k)) & ((1 << _PIECE_BITS) - 1)
            counts = np.bincount(e - least, weights=sign * piece)
            for offset in np.flatnonzero(counts):
                # the piece's unit: 2^(exponent - 53 + 18 k)
                shift = least + int(offset) - 53 + _PIECE_BITS * k \
                    + _UNIT_BITS
                total += int(counts[offset]) << shift
    return Fraction(total, 2 ** _UNIT_BITS)


def binade(q: Fraction) -> int:
    """e where 2^e <= |q| < 2^(e + 1), for q nonzero."""
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > q else e


def limits(fmt: str) -> tuple[Fraction, Fraction, Fraction]:
    """The least subnormal, the least normal and the largest finite value
    of `fmt`."""
    p, w = FORMATS[fmt]
    bias = 2 ** (w - 1) - 1
    least_normal = Fraction(2) ** (1 - bias)
    return (least_normal / 2 ** (p - 1), least_normal,
            (2 - Fraction(1, 2 ** (p - 1))) * Fraction(2) ** bias)


def round_exact(q: Fraction, fmt: str) -> tuple[int, bool]:
    """q rounded to the nearest value of `fmt`, ties to the even
    significand: (its bits, whether it overflowed to infinity).  Zero is
    +0.0; a nonzero q that rounds to zero keeps its sign."""
    p, w = FORMATS[fmt]
    bias = 2 ** (w - 1) - 1
    sign = (1 << (p - 1 + w)) if q < 0 else 0
    magnitude = abs(q)
    if magnitude == 0:
        return 0, False
    # The result's last place: 2^last.
    last = max(binade(magnitude), 1 - bias) - (p - 1)
    significand, remainder = divmod(magnitude, Fraction(2) ** last)
    half = Fraction(2) ** (last - 1)
    if remainder > half or (remainder == half and significand % 2):
        significand += 1
    if significand == 2 ** p:
        significand //= 2
        last += 1
    if significand < 2 ** (p - 1):
        field, fraction = 0, significand
    else:
        field, fraction = last + p - 1 + bias, significand - 2 ** (p - 1)
    if field >= 2 ** w - 1:
        return sign | ((2 ** w - 1) << (p - 1)), True
    return sign | (field << (p - 1)) | fraction, False


def value_of(bits: int, fmt: str) -> Fraction:
    """The exact value of the finite `fmt` value with these bits."""
    p, w = FORMATS[fmt]
    bias = 2 ** (w - 1) - 1
    field = (bits >> (p - 1)) & (2 ** w - 1)
    fraction = bits & (2 ** (p - 1) - 1)
    significand = fraction + (2 ** (p - 1) if field else 0)
    value = significand * Fraction(2) ** (max(field, 1) - bias - (p - 1))
    return -value if bits >> (p - 1 + w) & 1 else value


def nan_bits(fmt: str) -> int:
    """The quiet NaN with no sign or payload, as kulisch.h gives it."""
    p, w = FORMATS[fmt]
    return ((2 ** w - 1) << (p - 1)) | (1 << (p - 2))


def infinity_bits(fmt: str, negative: bool = False) -> int:
    p, w = FORMATS[fmt]
    return ((2 ** w - 1) << (p - 1)) | (int(negative) << (p - 1 + w))


def expected(values, fmt: str) -> tuple[int, bool]:
    """The exact sum of `values` in `fmt` with NumPy's special values: NaN
    where there is a NaN or both infinities, the infinity there is, else
    the finite values' exact sum rounded once."""
    nan = any(math.isnan(x) for x in values)
    plus = any(x == math.inf for x in values)
    minus = any(x == -math.inf for x in values)
    if nan or (plus and minus):
        return nan_bits(fmt), False
    if plus or minus:
        return infinity_bits(fmt, minus), False
    return round_exact(exact_sum(values), fmt)
