"""Random data whose reductions are exact, and NumPy's answer for it: shared
by the GPU checks (host_checks.py, test_reliability_gpu.py,
test_parse_properties.py) and .ci/sanitize_driver.py."""
from __future__ import annotations

import warnings

import numpy as np


def integer_values(rng, n, dtype) -> np.ndarray:
    """Values whose sums are exact in every accumulator: 0/1 for bool,
    -1..1 for float16 (its float32 accumulation stays exact and is rounded
    once to the float16 result), small integers otherwise (complex: in
    each part)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype == np.float16:
        return rng.integers(-1, 2, n).astype(dtype)
    if dtype.kind == "c":
        return (rng.integers(-100, 101, n)
                + 1j * rng.integers(-100, 101, n)).astype(dtype)
    low = 0 if dtype.kind == "u" else -100
    return rng.integers(low, 101, n).astype(dtype)


def product_values(rng, n, dtype) -> np.ndarray:
    """Values whose products are exact in every accumulator and order:
    ones, with a dozen factors at random places (-1 and 2, and 0.5 for
    floats: powers of two, and 1j for complex; bool: a False in half the
    arrays)."""
    dtype = np.dtype(dtype)
    a = np.ones(n, dtype)
    if dtype.kind == "b":
        if rng.random() < 0.5:
            a[rng.integers(0, n)] = False
        return a
    factors = {"f": [-1, 2, 0.5], "c": [-1, 2, 0.5, 1j], "u": [2, 3]}.get(
        dtype.kind, [-1, 2, 3])
    where = rng.integers(0, n, size=min(n, 12))
    a[where] = rng.choice(factors, size=where.size)
    return a


def values_for(op, rng, n, dtype) -> np.ndarray:
    """Data whose `op` is exact: products' for a product, else sums'."""
    return (product_values if op in ("prod", "nanprod")
            else integer_values)(rng, n, dtype)


def numpy_answer(op, a):
    """NumPy's result for the host array `a` of integer values, computed
    exactly (float sums and products in float64, complex ones in
    complex128, rounded once to NumPy's dtype)."""
    exact = np.complex128 if a.dtype.kind == "c" else np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if op in ("sum", "prod", "nansum", "nanprod"):
            want = getattr(np, op)(a)
            if a.dtype.kind in "fc":
                want = getattr(np, op)(a.astype(exact)).astype(want.dtype)
            return want
        if op == "mean":
            return np.mean(a, dtype=exact).astype(np.mean(a).dtype)
        return getattr(np, op)(a)


def same(op, got, want) -> bool:
    """Whether `got` is `want`: same type, equal (a mean within rounding:
    its division happens in another order than NumPy's; NaN equal to
    NaN)."""
    if type(got) is not type(want):
        return False
    if op in ("mean", "nanmean"):
        rtol = 2e-3 if want.dtype == np.float16 else 1e-6
        number = complex if want.dtype.kind == "c" else float
        return bool(np.isclose(number(got), number(want), rtol=rtol, atol=0,
                               equal_nan=True))
    return bool(got == want)
