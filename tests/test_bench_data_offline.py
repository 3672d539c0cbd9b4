"""cudareduce.bench.data: the bench's random data, whose every sum is exact,
and the exact check of a computed sum."""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce.results as model
from cudareduce.bench import data


def test_is_correct_is_exact():
    assert data.is_correct(np.int64(10), 10)
    assert not data.is_correct(np.int64(11), 10)
    assert data.is_correct(np.float32(-3.0), -3) and data.is_correct(7.0, 7)
    assert not data.is_correct(np.float32(1.0000001), 1)
    assert not data.is_correct(np.float32("nan"), 1)
    assert not data.is_correct(np.float32("inf"), 1)
    assert not data.is_correct(None, 1) and not data.is_correct("x", 1)


@pytest.mark.parametrize("dtype", model.DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 2 ** 20 + 3])
def test_random_array_is_nonzero_integers_of_an_exact_sum(dtype, n):
    rng = np.random.default_rng([n, len(dtype)])
    a = data.random_array(rng, n, dtype)
    limit = data.value_limit(n, dtype)
    assert a.dtype == np.dtype(dtype) and a.size == n
    assert np.all(a != 0) and np.all(np.abs(a) <= limit)
    assert np.array_equal(a, np.round(a))
    if n > 100:
        assert a.min() < 0 < a.max()
    reference = data.reference_sum(a)
    assert reference == sum(int(v) for v in a)
    # NumPy's sum, in either order, is exact; one element lost or doubled
    # is not.
    assert data.is_correct(np.sum(a), reference)
    assert data.is_correct(np.sum(a[::-1], dtype=np.sum(a).dtype), reference)
    assert not data.is_correct(np.sum(a[1:]), reference)
    assert not data.is_correct(np.sum(a) + a[-1], reference)


def test_float16_reference_is_the_exact_sum_rounded_once():
    # 2049 ones: exact 2049, which float16 rounds to 2048 (ties to even).
    a = np.ones(2049, dtype=np.float16)
    assert data.reference_sum(a) == 2048.0
    assert data.is_correct(np.float16(2048), data.reference_sum(a))
    assert not data.is_correct(np.float32(2049), data.reference_sum(a))


def test_value_limit_keeps_float32_sums_exact():
    assert data.value_limit(2 ** 17, "float32") == 1000
    assert data.value_limit(2 ** 28, "float32") == 22
    assert data.value_limit(2 ** 36, "float32") == 1
    assert data.value_limit(2 ** 40, "float64") == 1000
    assert data.value_limit(2 ** 40, "int32") == 1000
    assert data.value_limit(2 ** 40, "int8") == 127
    # Hoeffding's margin t^2 / (2 n L^2) >= 1024 (t = 2^24) wherever the
    # limit is not clamped to 1000 or 1.
    for n in (2 ** 18, 10 ** 6, 2 ** 28, 2 ** 35):
        limit = data.value_limit(n, "float32")
        assert (2 ** 24) ** 2 / (2 * n * limit * limit) >= 1024
