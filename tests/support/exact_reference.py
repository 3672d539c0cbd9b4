"""Exact sums of doubles and their correct rounding, in Python integers and
fractions: the reference tests/test_kulisch.py holds the exact
accumulator (cuda/exact/kulisch.h) to.

A result is a format's bits (an int; bfloat16 has no NumPy dtype) and
whether it overflowed: the exact value beyond the format's largest finite
one after rounding.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

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


def array_sum(x) -> Fraction:
    """exact_sum of a NumPy array of finite floats (any float dtype that
    converts to float64 exactly), fast enough for millions: each value's
    53-bit significand (frexp), split at bit 26 so that the sums of each
    half fit int64 (up to 2^37 values), summed by exponent."""
    m, e = np.frexp(np.asarray(x, np.float64).ravel())
    significand = (m * 2.0 ** 53).astype(np.int64)
    order = np.argsort(e, kind="stable")
    e, significand = e[order], significand[order]
    starts = np.flatnonzero(np.r_[True, e[1:] != e[:-1]]) if e.size else []
    high = np.add.reduceat(significand >> 26, starts) if e.size else []
    low = np.add.reduceat(significand & (2 ** 26 - 1), starts) \
        if e.size else []
    total = Fraction(0)
    for start, h, lo in zip(starts, high, low):
        total += (int(h) * 2 ** 26 + int(lo)) * Fraction(2) ** (
            int(e[start]) - 53)
    return total


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
