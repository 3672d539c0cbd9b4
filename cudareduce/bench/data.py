"""The bench's input data: random non-zero integers, of magnitudes small
enough that every order of additions sums them exactly, and the exact check
of a computed sum against them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["is_correct", "random_array", "reference_sum", "value_limit"]


def value_limit(n: int, dtype: str) -> int:
    """The largest magnitude of :func:`random_array`'s `n` values: 1000 (127
    for int8), or for floats fewer where needed for exact sums in every
    order.

    A partial sum of k <= n independent values of random sign and magnitude
    <= L exceeds t in magnitude with probability <= 2 exp(-t^2 / (2 k L^2))
    (Hoeffding).  With t = 2^(significand bits), the largest integer below
    which every integer is a float of the dtype, and L = t / sqrt(2^11 n),
    that is <= 2 exp(-1024) for each of the < 2n partial sums of any plan:
    every sum is exact.  float32: L = 1000 up to n = 2^17, 22 at 2^28, 1
    from 2^36 on (the margin exp(-1024) then holds up to 2^37 elements,
    512 GiB of float32); float64: 1000 always; float16: 1 from 2^11 on,
    where the margin holds only while |sum| < 2^11, so a float16 result is
    checked against the exact sum rounded once (:func:`reference_sum`).
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return min(1000, int(np.iinfo(dt).max))
    t = 2 ** (np.finfo(dt).nmant + 1)
    return max(1, min(1000, math.isqrt(t * t // (2 ** 11 * max(n, 1)))))


def random_array(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """`n` random non-zero integers of either sign and magnitude up to
    :func:`value_limit`, as `dtype`."""
    magnitude = rng.integers(1, value_limit(n, dtype), size=n,
                             dtype=np.int32, endpoint=True)
    negative = rng.integers(0, 2, size=n, dtype=np.int8).astype(bool)
    np.negative(magnitude, out=magnitude, where=negative)
    return magnitude.astype(dtype, copy=False)


def reference_sum(a: np.ndarray) -> float:
    """The exact sum of :func:`random_array`'s `a` (int64 holds it): an
    int for integer dtypes, and for floats a float, rounded once to `a`'s
    dtype: what a sum through an exact wider
    accumulator gives, as every method and peer sums float16 (through
    float32, whose partial sums of values of magnitude 1 stay exact below
    2^24).  For float32 and float64 the rounding changes nothing
    (:func:`value_limit`)."""
    exact = int(np.sum(a, dtype=np.int64))
    return float(a.dtype.type(exact)) if a.dtype.kind == "f" else exact


def is_correct(value: Any, reference: float) -> bool:
    """Whether a computed sum `value` equals :func:`reference_sum` of
    :func:`random_array`'s data."""
    try:
        got = float(value) if isinstance(value, (float, np.floating)) \
            else int(value)
        return math.isfinite(got) and got == reference
    except (TypeError, ValueError, OverflowError):
        return False
