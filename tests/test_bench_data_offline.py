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
#: The arg ops: an index of the input, not a value of it.
ARGS = ("argmin", "argmax", "nanargmin", "nanargmax")
FLOATS = tuple(d for d in model.DTYPES if model.is_float_dtype(d))


def _kind(dtype: str) -> str:
    """NumPy's kind of `dtype`, "f" for ml_dtypes' bfloat16 too."""
    return "f" if model.is_float_dtype(dtype) else np.dtype(dtype).kind


def _numpy(function, a: np.ndarray, **kwargs):
    """NumPy's answer `function(a, **kwargs)`; for bfloat16, NumPy's on its
    values as float32 (exact), a float answer rounded once to bfloat16:
    ml_dtypes' own bfloat16 sums round every partial sum, and NumPy's
    NaN-skipping functions do not skip its NaNs (it is no np.inexact);
    nanmean as NumPy's float16 nanmean."""
    if a.dtype.name != "bfloat16":
        return function(a, **kwargs)
    wide = a.astype(np.float32)
    if function is np.nanmean:
        # NumPy's rule for float16, which cudareduce keeps for bfloat16:
        # the sum rounded to the dtype, then divided by the count.
        total = a.dtype.type(np.nansum(wide))
        return a.dtype.type(float(total) / np.count_nonzero(~np.isnan(wide)))
    answer = function(wide, **kwargs)
    return a.dtype.type(answer) if isinstance(answer, np.floating) \
        else answer


def _top(dtype: str) -> int:
    """The data's largest magnitude of min's, max's and the arg ops' data:
    1000, or less where the dtype holds less (bfloat16: every integer up
    to 256)."""
    if dtype == "bfloat16":
        return 256
    return 1000 if _kind(dtype) == "f" else min(1000, np.iinfo(dtype).max)


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
    assert a.dtype == model.numpy_dtype(dtype) and a.size == n
    wide = a.astype(np.float64)
    assert np.all(wide != 0) and np.all(np.abs(wide) <= limit)
    assert np.array_equal(wide, np.round(wide))
    if n > 100 and _kind(dtype) in "if":
        assert wide.min() < 0 < wide.max()
    reference = data.reference_result(a)
    exact = sum(int(v) for v in wide)
    rounded = reference.dtype.type
    assert reference == rounded(exact)
    assert reference.dtype == np.sum(a).dtype
    # NumPy's sum, in either order, is exact; one element lost or doubled
    # is not, but for bfloat16 past 256, where the sums round to the same
    # (the bench checks bfloat16's sums only as finely as it holds them).
    assert data.is_correct(_numpy(np.sum, a), reference)
    assert data.is_correct(_numpy(np.sum, a[::-1]), reference)
    for changed in (exact - int(wide[0]), exact + int(wide[-1])):
        if rounded(changed) == reference:
            assert dtype == "bfloat16" and abs(exact) > 256
            continue
        assert not data.is_correct(rounded(changed), reference)


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
    result dtype, and the same in the reverse order (an arg op's: the same
    element, the first of its value in the reverse order's last)."""
    for n in SIZES:
        a = _data(op, dtype, n)
        assert a.dtype == model.numpy_dtype(dtype) and a.size == n
        reference = data.reference_result(a, op)
        numpy_answer = _numpy(getattr(np, op), a)
        assert reference.dtype == numpy_answer.dtype
        assert data.is_correct(numpy_answer, reference), (n, reference)
        if op in ARGS:
            assert reference.dtype == np.int64
            picked = a[reference]
            same = np.isnan(a) if _kind(dtype) == "f" and np.isnan(picked) \
                else a == picked
            assert reference == np.flatnonzero(same)[0]
            continue
        assert data.is_correct(_numpy(getattr(np, op), a[::-1]), reference)
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
    kind = _kind(dtype)
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
    for dtype in FLOATS:
        for op in ("nansum", "nanprod", "nanmin", "nanmax", "nanargmin",
                   "nanargmax"):
            a = _data(op, dtype, 1000)
            assert 1 <= np.isnan(a).sum() <= data.NAN_COUNT
            assert np.isnan(_data(op, dtype, 4)).sum() <= 2
            assert not np.isnan(_data(op, dtype, 1)).any()
    for op in ("sum", "prod", "min", "mean", "any"):
        assert not np.isnan(_data(op, "float32", 1000)).any()


@pytest.mark.parametrize("dtype", [d for d in model.DTYPES if d != "bool"])
@pytest.mark.parametrize("op", ARGS)
def test_an_arg_ops_answer_is_the_first_of_ties(op, dtype):
    """The arg ops' data: min's and max's range, one end of it once and the
    other 2 to TIE_COUNT times, either way round over seeds; the answer
    (where no NaN decides) is the first place of its end, and a method
    that takes another of the ties is caught."""
    tied = {"low": 0, "high": 0}
    for seed in range(40):
        a = _data(op, dtype, 1000, seed)
        reference = data.reference_result(a, op)
        if op in ("argmin", "argmax") and np.isnan(a).any():
            continue        # the NaN decides, wherever it fell
        numbers = a[~np.isnan(a)] if _kind(dtype) == "f" else a
        low, high = numbers.min(), numbers.max()
        assert high == _top(dtype)
        assert low == (-high if _kind(dtype) in "if" else 0)
        counts = sorted([int(np.sum(numbers == low)),
                         int(np.sum(numbers == high))])
        assert counts[0] == 1 and 2 <= counts[1] <= data.TIE_COUNT
        tied["low"] += int(np.sum(numbers == low)) > 1
        tied["high"] += int(np.sum(numbers == high)) > 1
        end = low if op.endswith("min") else high
        places = np.flatnonzero(a == end)
        assert reference == places[0]
        if places.size > 1:
            assert not data.is_correct(places[-1], reference)
    assert tied["low"] > 3 and tied["high"] > 3, tied


def test_a_bool_arg_ops_data_is_one_value_and_the_ends():
    """bool: one value but for a few places of the other; each answer is
    0 at times and a later place at others."""
    answers = {op: set() for op in ARGS}
    for seed in range(40):
        for op in ARGS:
            a = _data(op, "bool", 1000, seed)
            assert min(np.sum(a), np.sum(~a)) <= data.TIE_COUNT
            answers[op].add(bool(data.reference_result(a, op) > 0))
    assert all(seen == {False, True} for seen in answers.values()), answers


@pytest.mark.parametrize("dtype", FLOATS)
def test_argmin_and_argmax_meet_one_nan_half_the_time(dtype):
    """On floats, argmin's and argmax's data hold one NaN about half the
    time, and then its place is the answer (NumPy's NaN comes first); no
    more than one, which CuPy might not take first."""
    for op in ("argmin", "argmax"):
        nans = []
        for seed in range(60):
            a = _data(op, dtype, 1000, seed)
            count = int(np.isnan(a).sum())
            assert count <= 1
            nans.append(count)
            if count:
                assert data.reference_result(a, op) == \
                    np.flatnonzero(np.isnan(a))[0]
        assert 0.25 < np.mean(nans) < 0.75, (op, np.mean(nans))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["nanargmin", "nanargmax"])
def test_the_nan_skipping_arg_ops_data_tell_the_nan_rules_apart(op, dtype):
    """nanargmin's and nanargmax's NaNs are never where the answer is, so
    a method that lets NaN win (argmin's rule) gives another index; their
    data are never all NaN (NumPy would raise)."""
    for seed in range(20):
        a = _data(op, dtype, 1000, seed)
        reference = data.reference_result(a, op)
        assert not np.isnan(a[reference])
        nan_rule = _numpy(getattr(np, op[3:]), a)  # np.argmin, np.argmax
        assert np.isnan(a[nan_rule])
        assert not data.is_correct(nan_rule, reference)
    for n in (1, 2, 3):
        assert not np.isnan(_data(op, dtype, n)).all()


@pytest.mark.parametrize("dtype", [d for d in model.DTYPES if d != "bool"])
def test_each_extreme_is_one_element(dtype):
    """min and max are each decided by one element: lose it and the answer
    changes."""
    signed = _kind(dtype) in "if"
    for op in EXTREMES:
        a = _data(op, dtype, 1000)
        numbers = a[~np.isnan(a)] if _kind(dtype) == "f" else a
        low, high = numbers.min(), numbers.max()
        assert (np.sum(numbers == low), np.sum(numbers == high)) == (1, 1)
        assert high == _top(dtype)
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
    # an arg op: the lone end's place is the last, about a quarter of the
    # time for each op (the lone end is its end half the time)
    for op in ARGS:
        share = np.mean([data.reference_result(_data(op, "int32", 1000,
                                                      seed), op) == 999
                         for seed in range(200)])
        assert 0.1 < share < 0.4, (op, share)


def test_the_sums_data_is_as_before_for_a_seed():
    """--seed repeats a run: the sum's data of a seed are what they were
    before the bench timed other ops (magnitudes, then signs)."""
    rng = np.random.default_rng(5)
    magnitude = rng.integers(1, 1000, size=10, dtype=np.int32, endpoint=True)
    negative = rng.integers(0, 2, size=10, dtype=np.int8).astype(bool)
    expected = np.where(negative, -magnitude, magnitude).astype(np.float32)
    got = data.random_array(np.random.default_rng(5), 10, "float32")
    assert np.array_equal(got, expected)
