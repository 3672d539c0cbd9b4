"""cudareduce.bench.data: the bench's random data of each op, whose every
answer is exact, and the exact check of a computed result."""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce.results as model
from cudareduce.bench import data

#: Sizes of the data checks: one element, a few, and past 2^20 by an odd
#: number.
SIZES = (1, 7, 1000, 2 ** 20 + 3)
SUMS = ("sum", "nansum", "mean")
PRODUCTS = ("prod", "nanprod")
EXTREMES = ("min", "max", "nanmin", "nanmax")


def test_is_correct_is_exact():
    assert data.is_correct(np.int64(10), 10)
    assert not data.is_correct(np.int64(11), 10)
    assert data.is_correct(np.float32(-3.0), -3) and data.is_correct(7.0, 7)
    assert not data.is_correct(np.float32(1.0000001), 1)
    assert not data.is_correct(np.float32("nan"), 1)
    assert not data.is_correct(np.float32("inf"), 1)
    assert not data.is_correct(None, 1) and not data.is_correct("x", 1)


def test_is_correct_by_value_nan_as_nan():
    """Values of any dtype against references of any other; NaN equals
    NaN and nothing else."""
    assert data.is_correct(np.float32("nan"), np.float16("nan"))
    assert data.is_correct(float("nan"), np.float64("nan"))
    assert not data.is_correct(1.0, np.float32("nan"))
    assert not data.is_correct(np.float32("inf"), np.float32("nan"))
    assert data.is_correct(np.True_, np.True_)
    assert data.is_correct(True, np.True_) and data.is_correct(1, np.True_)
    assert not data.is_correct(np.False_, np.True_)
    assert data.is_correct(np.uint8(255), np.uint64(255))
    assert data.is_correct(np.float16(0.5), np.float64(0.5))
    assert data.is_correct(np.float64(0.125), np.float16(0.125))


@pytest.mark.parametrize("dtype", model.DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 2 ** 20 + 3])
def test_a_sums_data_is_nonzero_integers_of_an_exact_sum(dtype, n):
    rng = np.random.default_rng([n, len(dtype)])
    a = data.random_array(rng, n, dtype)
    limit = data.value_limit(n, dtype)
    assert a.dtype == np.dtype(dtype) and a.size == n
    assert np.all(a != 0) and np.all(np.abs(a.astype(np.float64)) <= limit)
    assert np.array_equal(a, np.round(a))
    if n > 100 and a.dtype.kind in "if":
        assert a.min() < 0 < a.max()
    reference = data.reference_result(a)
    assert reference == sum(int(v) for v in a)
    assert reference.dtype == np.sum(a).dtype
    # NumPy's sum, in either order, is exact; one element lost or doubled
    # is not.
    assert data.is_correct(np.sum(a), reference)
    assert data.is_correct(np.sum(a[::-1], dtype=np.sum(a).dtype), reference)
    assert not data.is_correct(np.sum(a[1:]), reference)
    assert not data.is_correct(np.sum(a) + a[-1], reference)


def test_float16_reference_is_the_exact_sum_rounded_once():
    # 2049 ones: exact 2049, which float16 rounds to 2048 (ties to even).
    a = np.ones(2049, dtype=np.float16)
    assert data.reference_result(a) == 2048.0
    assert data.is_correct(np.float16(2048), data.reference_result(a))
    assert not data.is_correct(np.float32(2049), data.reference_result(a))
    assert not data.is_correct(2049.0, data.reference_result(a))
    assert data.reference_result(a).dtype == np.float16


def test_value_limit_keeps_float32_sums_exact():
    assert data.value_limit(2 ** 17, "float32") == 1000
    assert data.value_limit(2 ** 28, "float32") == 22
    assert data.value_limit(2 ** 36, "float32") == 1
    assert data.value_limit(2 ** 40, "float64") == 1000
    assert data.value_limit(2 ** 40, "int32") == 1000
    assert data.value_limit(2 ** 40, "int8") == 127
    assert data.value_limit(2 ** 40, "uint8") == 255
    assert data.value_limit(2 ** 40, "uint16") == 1000
    assert data.value_limit(2 ** 40, "bool") == 1
    # Hoeffding's margin t^2 / (2 n L^2) >= 1024 (t = 2^24) wherever the
    # limit is not clamped to 1000 or 1.
    for n in (2 ** 18, 10 ** 6, 2 ** 28, 2 ** 35):
        limit = data.value_limit(n, "float32")
        assert (2 ** 24) ** 2 / (2 * n * limit * limit) >= 1024


def _data(op: str, dtype: str, n: int, seed: int = 0) -> np.ndarray:
    return data.random_array(np.random.default_rng([seed, n, len(dtype)]),
                             n, dtype, op)


@pytest.mark.parametrize("op", model.OPS)
@pytest.mark.parametrize("dtype", model.DTYPES)
def test_the_reference_is_numpys_answer_of_its_dtype(op, dtype):
    """Each op's reference on its data: NumPy's own answer, of NumPy's
    result dtype, and the same in the reverse order."""
    for n in SIZES:
        a = _data(op, dtype, n)
        assert a.dtype == np.dtype(dtype) and a.size == n
        reference = data.reference_result(a, op)
        numpy_answer = getattr(np, op)(a)
        assert reference.dtype == numpy_answer.dtype
        assert data.is_correct(numpy_answer, reference), (n, reference)
        assert data.is_correct(getattr(np, op)(a[::-1]), reference)
        # a NaN-skipping op's answer is never NaN: half the data at least
        # are numbers
        assert not np.isnan(reference)


@pytest.mark.parametrize("op", model.OPS)
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8"])
def test_a_wrong_value_is_caught(op, dtype):
    a = _data(op, dtype, 1000)
    reference = data.reference_result(a, op)
    # (as a Python number: uint8's max, 255, has no uint8 successor)
    wrong = not reference if reference.dtype == np.bool_ \
        else reference.item() + 1
    assert data.is_correct(reference, reference)
    assert not data.is_correct(wrong, reference)


@pytest.mark.parametrize("dtype", [d for d in model.DTYPES if d != "bool"])
def test_a_products_data_is_ones_and_a_dozen_factors(dtype):
    kind = np.dtype(dtype).kind
    for n in SIZES:
        for op in PRODUCTS:
            a = _data(op, dtype, n)
            numbers = a[~np.isnan(a)] if kind == "f" else a
            factors = numbers[numbers != 1]
            assert factors.size <= data.FACTOR_COUNT
            assert set(factors.tolist()) <= set(data.FACTORS[kind])
            if n > 100:
                assert factors.size >= data.FACTOR_COUNT - 2 * (op != "prod")
    # exact in float16's every order: a partial product is a power of two
    # of magnitude 2^-12 .. 2^12
    a = _data("prod", "float16", 2 ** 20 + 3)
    assert np.prod(a) == np.prod(a[::-1]) == data.reference_result(a, "prod")
    assert abs(float(np.prod(a))) in {2.0 ** k for k in range(-12, 13)}


def test_a_bool_products_data_is_all_true_or_one_false():
    falses = {int(np.sum(~_data("prod", "bool", 100, seed))) for seed in
              range(40)}
    assert falses == {0, 1}


def test_the_nan_ops_data_has_nans_on_floats():
    for dtype in ("float16", "float32", "float64"):
        for op in ("nansum", "nanprod", "nanmin", "nanmax"):
            a = _data(op, dtype, 1000)
            assert 1 <= np.isnan(a).sum() <= data.NAN_COUNT
            assert np.isnan(_data(op, dtype, 4)).sum() <= 2
            assert not np.isnan(_data(op, dtype, 1)).any()
    for op in ("sum", "prod", "min", "mean", "any"):
        assert not np.isnan(_data(op, "float32", 1000)).any()


@pytest.mark.parametrize("dtype", [d for d in model.DTYPES if d != "bool"])
def test_each_extreme_is_one_element(dtype):
    """min and max are each decided by one element: lose it and the answer
    changes."""
    signed = np.dtype(dtype).kind in "if"
    for op in EXTREMES:
        a = _data(op, dtype, 1000)
        numbers = a[~np.isnan(a)] if a.dtype.kind == "f" else a
        low, high = numbers.min(), numbers.max()
        assert (np.sum(numbers == low), np.sum(numbers == high)) == (1, 1)
        assert high == min(1000, np.iinfo(dtype).max
                           if a.dtype.kind != "f" else 1000)
        assert low == (-high if signed else 0)
        reference = data.reference_result(a, op)
        assert reference == (low if op.endswith("min") else high)


@pytest.mark.parametrize("dtype", model.DTYPES)
def test_any_and_all_are_decided_by_few_elements(dtype):
    """any: zeros with up to FEW non-zeros; all: non-zeros with up to FEW
    zeros; each answer comes out both ways over seeds."""
    answers = {"any": set(), "all": set()}
    for seed in range(30):
        a = _data("any", dtype, 1000, seed)
        assert np.count_nonzero(a) <= data.FEW
        b = _data("all", dtype, 1000, seed)
        assert b.size - np.count_nonzero(b) <= data.FEW
        answers["any"].add(bool(data.reference_result(a, "any")))
        answers["all"].add(bool(data.reference_result(b, "all")))
    assert answers == {"any": {False, True}, "all": {False, True}}


def test_the_deciding_element_is_sometimes_the_last():
    """Over seeds, the last element is among the deciding ones about half
    the time: a product's factor, an extreme, any's non-zero."""
    def last_decides(op: str, seed: int) -> bool:
        a = _data(op, "int32", 1000, seed)
        if op == "prod":
            return a[-1] != 1
        if op == "any":
            return a[-1] != 0
        return a[-1] in (a.min(), a.max())
    for op in ("prod", "min", "any"):
        share = np.mean([last_decides(op, seed) for seed in range(200)])
        assert 0.2 < share < 0.8, (op, share)


def test_the_sums_data_is_as_before_for_a_seed():
    """--seed repeats a run: the sum's data of a seed are what they were
    before the bench timed other ops (magnitudes, then signs)."""
    rng = np.random.default_rng(5)
    magnitude = rng.integers(1, 1000, size=10, dtype=np.int32, endpoint=True)
    negative = rng.integers(0, 2, size=10, dtype=np.int8).astype(bool)
    expected = np.where(negative, -magnitude, magnitude).astype(np.float32)
    got = data.random_array(np.random.default_rng(5), 10, "float32")
    assert np.array_equal(got, expected)
