"""cudareduce.bench.data: the bench's random data of each op, whose every
answer is exact, and the exact check of a computed result."""
from __future__ import annotations

import numpy as np
import pytest

from cudareduce.bench import names
from cudareduce.bench import data

#: Sizes of the data checks: one element, a few, and past 2^20 by an odd
#: number.
SIZES = (1, 7, 1000, 2 ** 20 + 3)
SUMS = ("sum", "nansum", "mean")
PRODUCTS = ("prod", "nanprod")
EXTREMES = ("min", "max", "nanmin", "nanmax")
#: The arg ops: an index of the input, not a value of it.
ARGS = ("argmin", "argmax", "nanargmin", "nanargmax")
#: The real floats, the complex, and both: the dtypes that hold NaN.
FLOATS = tuple(d for d in names.DTYPES if names.dtype_kind(d) == "f")
COMPLEX = ("complex64", "complex128")
INEXACT = FLOATS + COMPLEX


def _parts(a: np.ndarray) -> tuple[np.ndarray, ...]:
    """The real arrays of `a`: its real and imaginary parts where complex,
    else `a` itself."""
    return (a.real, a.imag) if a.dtype.kind == "c" else (a,)


def _real(x):
    """The real part of a complex `x`, else `x`: the extremes' data put
    their range's ends in the real part."""
    return x.real if np.iscomplexobj(x) else x


def _numbers(a: np.ndarray) -> np.ndarray:
    """The elements of `a` that are not NaN (complex: in neither part)."""
    return a[~np.isnan(a)] if a.dtype.kind in "fc" \
        or a.dtype.name == "bfloat16" else a


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
    """The data's largest magnitude of min's, max's and the arg ops' data
    (complex: of their real parts): 1000, or less where the dtype holds
    less (bfloat16: every integer up to 256)."""
    if dtype == "bfloat16":
        return 256
    return 1000 if names.dtype_kind(dtype) in "fc" \
        else min(1000, np.iinfo(dtype).max)


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


@pytest.mark.parametrize("dtype", names.DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 2 ** 20 + 3])
def test_a_sums_data_is_nonzero_integers_of_an_exact_sum(dtype, n):
    """Complex: each part such integers, summed apart."""
    rng = np.random.default_rng([n, len(dtype)])
    a = data.random_array(rng, n, dtype)
    limit = data.value_limit(n, dtype)
    assert a.dtype == names.numpy_dtype(dtype) and a.size == n
    sums = []
    for part in _parts(a):
        wide = part.astype(np.float64)
        assert np.all(wide != 0) and np.all(np.abs(wide) <= limit)
        assert np.array_equal(wide, np.round(wide))
        if n > 100 and names.dtype_kind(dtype) in "ifc":
            assert wide.min() < 0 < wide.max()
        sums.append(sum(int(v) for v in wide))
    exact = complex(*sums) if names.dtype_kind(dtype) == "c" else sums[0]
    reference = data.reference_result(a)
    rounded = reference.dtype.type
    assert reference == rounded(exact)
    assert reference.dtype == np.sum(a).dtype
    # NumPy's sum, in either order, is exact; one element lost or doubled
    # is not, but for bfloat16 past 256, where the sums round to the same
    # (the bench checks bfloat16's sums only as finely as it holds them);
    # complex: nor one part of an element.
    assert data.is_correct(_numpy(np.sum, a), reference)
    assert data.is_correct(_numpy(np.sum, a[::-1]), reference)
    first, last = a[0].item(), a[-1].item()
    changes = [exact - first, exact + last]
    if names.dtype_kind(dtype) == "c":
        changes += [exact - first.real, exact + 1j * last.imag]
    for changed in changes:
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
    # complex: its parts' float's, each part summed apart
    for n in (1, 2 ** 17, 2 ** 28, 2 ** 36, 2 ** 40):
        assert data.value_limit(n, "complex64") == \
            data.value_limit(n, "float32")
        assert data.value_limit(n, "complex128") == \
            data.value_limit(n, "float64")


def _data(op: str, dtype: str, n: int, seed: int = 0) -> np.ndarray:
    return data.random_array(np.random.default_rng([seed, n, len(dtype)]),
                             n, dtype, op)


@pytest.mark.parametrize("op", names.OPS)
@pytest.mark.parametrize("dtype", names.DTYPES)
def test_the_reference_is_numpys_answer_of_its_dtype(op, dtype):
    """Each op's reference on its data: NumPy's own answer, of NumPy's
    result dtype, and the same in the reverse order (an arg op's: the same
    element, the first of its value in the reverse order's last)."""
    for n in SIZES:
        a = _data(op, dtype, n)
        assert a.dtype == names.numpy_dtype(dtype) and a.size == n
        reference = data.reference_result(a, op)
        numpy_answer = _numpy(getattr(np, op), a)
        assert reference.dtype == numpy_answer.dtype
        assert data.is_correct(numpy_answer, reference), (n, reference)
        if op in ARGS:
            assert reference.dtype == np.int64
            picked = a[reference]
            nan_picked = names.dtype_kind(dtype) in "fc" and np.isnan(picked)
            same = np.isnan(a) if nan_picked else a == picked
            assert reference == np.flatnonzero(same)[0]
            continue
        assert data.is_correct(_numpy(getattr(np, op), a[::-1]), reference)
        # a NaN-skipping op's answer is never NaN: half the data at least
        # are numbers
        assert not np.isnan(reference)


@pytest.mark.parametrize("op", names.OPS)
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8",
                                   "complex128"])
def test_a_wrong_value_is_caught(op, dtype):
    a = _data(op, dtype, 1000)
    reference = data.reference_result(a, op)
    # (as a Python number: uint8's max, 255, has no uint8 successor)
    wrong = not reference if reference.dtype == np.bool_ \
        else reference.item() + 1
    assert data.is_correct(reference, reference)
    assert not data.is_correct(wrong, reference)
    if reference.dtype.kind == "c":
        # complex: a wrong imaginary part alone is caught
        assert not data.is_correct(reference.item() + 1j, reference)


@pytest.mark.parametrize("dtype", [d for d in names.DTYPES if d != "bool"])
def test_a_products_data_is_ones_and_a_dozen_factors(dtype):
    kind = names.dtype_kind(dtype)
    for n in SIZES:
        for op in PRODUCTS:
            a = _data(op, dtype, n)
            numbers = _numbers(a)
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


def test_the_nan_ops_data_has_nans_on_floats_and_complex():
    for dtype in INEXACT:
        for op in ("nansum", "nanprod", "nanmin", "nanmax", "nanargmin",
                   "nanargmax"):
            a = _data(op, dtype, 1000)
            assert 1 <= np.isnan(a).sum() <= data.NAN_COUNT
            assert np.isnan(_data(op, dtype, 4)).sum() <= 2
            assert not np.isnan(_data(op, dtype, 1)).any()
    for op in ("sum", "prod", "min", "mean", "any"):
        assert not np.isnan(_data(op, "float32", 1000)).any()
        assert not np.isnan(_data(op, "complex64", 1000)).any()


@pytest.mark.parametrize("dtype", [d for d in names.DTYPES if d != "bool"])
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
        numbers = _numbers(a)
        low, high = numbers.min(), numbers.max()
        assert _real(high) == _top(dtype)
        signed = names.dtype_kind(dtype) in "ifc"
        assert _real(low) == (-_real(high) if signed else 0)
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


@pytest.mark.parametrize("dtype", INEXACT)
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


@pytest.mark.parametrize("dtype", INEXACT)
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


@pytest.mark.parametrize("dtype", [d for d in names.DTYPES if d != "bool"])
def test_each_extreme_is_one_element(dtype):
    """min and max are each decided by one element: lose it and the answer
    changes."""
    signed = names.dtype_kind(dtype) in "ifc"
    for op in EXTREMES:
        a = _data(op, dtype, 1000)
        numbers = _numbers(a)
        low, high = numbers.min(), numbers.max()
        assert (np.sum(numbers == low), np.sum(numbers == high)) == (1, 1)
        assert _real(high) == _top(dtype)
        assert _real(low) == (-_real(high) if signed else 0)
        reference = data.reference_result(a, op)
        assert reference == (low if op.endswith("min") else high)


@pytest.mark.parametrize("dtype", names.DTYPES)
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


# ---------------------------------------------------------------------------
# complex64 and complex128


def _lexicographic_key(a: np.ndarray) -> np.ndarray:
    """The order of `a`'s elements by NumPy's complex order, real part
    first (its lexsort takes the last key first)."""
    return np.lexsort((a.imag, a.real))


def test_is_correct_compares_complex_by_parts():
    """Both parts equal, NaN equal to NaN part by part; a complex value
    against a real reference, or the other way round, by value."""
    nan = float("nan")
    reference = np.complex64(3 - 2j)
    assert data.is_correct(np.complex64(3 - 2j), reference)
    assert data.is_correct(3 - 2j, reference)
    assert data.is_correct(np.complex128(3 - 2j), reference)
    assert not data.is_correct(3 + 2j, reference)
    assert not data.is_correct(4 - 2j, reference)
    assert not data.is_correct(3.0, reference)          # the part lost
    assert data.is_correct(3.0, np.complex128(3))
    assert data.is_correct(np.complex64(5), 5) and data.is_correct(5 + 0j, 5)
    assert not data.is_correct(5 + 1j, 5)
    # exactly: complex64's 0.1 is not complex128's
    assert not data.is_correct(np.complex64(0.1), np.complex128(0.1))
    for value in (complex(nan, 1), np.complex64(complex(nan, 1))):
        assert data.is_correct(value, np.complex64(complex(nan, 1)))
        assert not data.is_correct(value, np.complex64(complex(1, nan)))
        assert not data.is_correct(value, np.complex64(complex(nan, nan)))
        assert not data.is_correct(value, np.complex64(complex(nan, 2)))
    assert data.is_correct(complex(nan, nan), np.complex128(complex(nan, nan)))
    for junk in (None, "3-2j", b"3-2j", [3 - 2j]):
        assert not data.is_correct(junk, reference)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_sums_data_are_integers_in_both_parts(dtype):
    """Each part of a complex sum's data: non-zero integers within the
    part's float's limit (complex64: float32's, fewer as n grows)."""
    n = 2 ** 20 + 3
    a = _data("sum", dtype, n)
    limit = data.value_limit(n, dtype)
    assert limit == (1000 if dtype == "complex128" else 362)
    for part in (a.real, a.imag):
        assert np.all(part != 0) and np.abs(part).max() == limit
    # the reference: the exact sum of each part, as NumPy gives it in the
    # input's own type
    reference = data.reference_result(a)
    assert reference.dtype == np.dtype(dtype)
    assert reference.real == np.sum(a.real.astype(np.int64))
    assert reference.imag == np.sum(a.imag.astype(np.int64))
    assert data.is_correct(np.sum(a), reference)
    # mean: NumPy's complex divide of the exact sum
    mean = data.reference_result(a, "mean")
    assert mean.dtype == np.dtype(dtype)
    assert data.is_correct(np.mean(a), mean)
    assert data.is_correct(np.mean(a[::-1]), mean)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_products_are_exact_in_every_order(dtype):
    """A complex product's factors: -1, 2, 0.5, 1j, -1j; every partial
    product, in any order, is a power of two times 1, -1, 1j or -1j, so
    the running products in the dtype equal the exact ones."""
    seen = set()
    for seed in range(20):
        for op in PRODUCTS:
            a = _data(op, dtype, 1000, seed)
            numbers = _numbers(a)
            factors = numbers[numbers != 1]
            seen |= set(factors.tolist())
            reference = data.reference_result(a, op)
            assert reference.dtype == np.dtype(dtype)
            units = {1, -1, 1j, -1j}
            scale = abs(complex(reference))
            assert scale in {2.0 ** k for k in range(-12, 13)}
            assert complex(reference) / scale in units
            rng = np.random.default_rng(seed)
            for order in (factors, factors[::-1], rng.permutation(factors)):
                running = np.cumprod(order.astype(dtype))
                exact = np.cumprod(order.astype(np.complex128))
                assert np.array_equal(running, exact)
                assert data.is_correct(running[-1] if order.size else 1,
                                       reference)
            assert data.is_correct(_numpy(getattr(np, op), a), reference)
    # the units 1j and -1j among them, which turn a part into the other
    assert seen == set(data.FACTORS["c"]) == {-1, 2, 0.5, 1j, -1j}


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_extremes_are_decided_by_the_imaginary_part(dtype):
    """min's and max's complex data: each end of the range is the real
    part of two elements, the imaginary part picks the answer; a method
    that orders by the real part alone, by the imaginary part first, or
    by magnitude gives another element, and is caught (by real part
    alone: where the rival comes first, about half the seeds)."""
    top = _top(dtype)
    rival_first = magnitude_caught = 0
    for seed in range(40):
        for op in EXTREMES:
            a = _data(op, dtype, 1000, seed)
            numbers = _numbers(a)
            reference = data.reference_result(a, op)
            want_min = op.endswith("min")
            end = -top if want_min else top
            at_end = numbers[numbers.real == end]
            # each end twice, every other real part strictly inside
            assert at_end.size == 2 and np.sum(numbers.real == -end) == 2
            assert np.all(np.abs(numbers.real) <= top)
            assert reference.real == end
            # the answer is the end's least (min) or greatest (max)
            # imaginary part, and the other, its rival, is caught
            imag = at_end.imag.min() if want_min else at_end.imag.max()
            assert reference.imag == imag
            rival = at_end[at_end.imag != imag]
            assert rival.size == 1
            assert not data.is_correct(rival[0], reference)
            # wrong orders: real part alone (the first of the end's),
            # imaginary part first, magnitude
            real_only = at_end[0]
            rival_first += real_only != reference
            assert data.is_correct(real_only, reference) \
                == (real_only == reference)
            by_imag = numbers[np.argmin(numbers.imag) if want_min
                              else np.argmax(numbers.imag)]
            assert not data.is_correct(by_imag, reference)
            # (by magnitude: the greatest may be the maximum at times)
            by_magnitude = numbers[np.argmin(np.abs(numbers)) if want_min
                                   else np.argmax(np.abs(numbers))]
            magnitude_caught += not data.is_correct(by_magnitude, reference)
            # NumPy's lexicographic order agrees
            ordered = numbers[_lexicographic_key(numbers)]
            assert ordered[0 if want_min else -1] == reference
    cases = 40 * len(EXTREMES)
    assert 0.3 < rival_first / cases < 0.7, rival_first
    assert magnitude_caught > 0.8 * cases, magnitude_caught


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ARGS)
def test_complex_arg_ops_have_a_rival_for_each_end(op, dtype):
    """The arg ops' complex data: beside the lone end and the tied one,
    each end's rival (the same real part, the imaginary part on the
    wrong side); the answer is the first of the ties; a method that
    orders by the real part alone takes the rival where it comes first,
    and is caught."""
    top = _top(dtype)
    caught = 0
    for seed in range(40):
        a = _data(op, dtype, 1000, seed)
        if np.isnan(a).any() and op in ("argmin", "argmax"):
            continue        # the NaN decides (its own test)
        reference = data.reference_result(a, op)
        numbers = np.where(np.isnan(a), np.nan, a)  # (NaN: never an end)
        end = -top if op.endswith("min") else top
        at_end = np.flatnonzero(numbers.real == end)
        values = a[at_end]
        # the end: 1 to TIE_COUNT equal elements and one rival
        kinds = set(values.tolist())
        assert len(kinds) == 2
        best = min(kinds, key=lambda v: v.imag) if end < 0 \
            else max(kinds, key=lambda v: v.imag)
        ties = at_end[values == best]
        assert 1 <= ties.size <= data.TIE_COUNT
        assert reference == ties[0]
        real_only = at_end[0]       # the first element of the end's real
        assert data.is_correct(real_only, reference) \
            == (real_only == reference)
        caught += real_only != reference
    assert caught > 5, caught


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_nans_are_in_either_part(dtype):
    """A complex NaN element has NaN in its real part or in its imaginary
    part, each over seeds, the other part a number (NumPy's element is NaN
    either way); the NaN-skipping ops skip it whole, so a method that
    skips only the NaN part is caught."""
    where = {"real": 0, "imag": 0}
    for seed in range(20):
        for op in ("nansum", "nanprod", "nanmin", "nanmax", "nanmean",
                   "nanargmin", "nanargmax", "argmin", "argmax"):
            a = _data(op, dtype, 1000, seed)
            nans = a[np.isnan(a)]
            assert np.all(np.isnan(nans.real) != np.isnan(nans.imag))
            where["real"] += int(np.isnan(nans.real).sum())
            where["imag"] += int(np.isnan(nans.imag).sum())
        a = _data("nansum", dtype, 1000, seed)
        reference = data.reference_result(a, "nansum")
        assert data.is_correct(np.sum(_numbers(a)), reference)
        # the NaN parts zeroed but the other parts kept: another sum
        half_skipped = np.sum(np.where(np.isnan(a.real), 0, a.real)) \
            + 1j * np.sum(np.where(np.isnan(a.imag), 0, a.imag))
        assert not data.is_correct(half_skipped, reference)
    assert where["real"] > 50 and where["imag"] > 50, where


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_nanmean_is_numpys_divide_of_the_exact_sum(dtype):
    for seed in range(10):
        a = _data("nanmean", dtype, 1000, seed)
        reference = data.reference_result(a, "nanmean")
        assert reference.dtype == np.dtype(dtype)
        assert data.is_correct(np.nanmean(a), reference)
        count = np.count_nonzero(~np.isnan(a))
        assert count < a.size
        assert reference == np.dtype(dtype).type(
            np.sum(_numbers(a)) / np.intp(count))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_any_and_all_see_either_part(dtype):
    """The non-zero elements of any's and all's complex data: some with a
    zero real part, some with a zero imaginary part, some with neither;
    over seeds a method that tests one part only is caught."""
    zero_real = zero_imag = both = 0
    caught = {"real": 0, "imag": 0}
    for seed in range(30):
        for op in ("any", "all"):
            a = _data(op, dtype, 1000, seed)
            nonzero = a[a != 0]
            zero_real += int(np.sum(nonzero.real == 0))
            zero_imag += int(np.sum(nonzero.imag == 0))
            both += int(np.sum((nonzero.real != 0) & (nonzero.imag != 0)))
            assert not np.any((nonzero.real == 0) & (nonzero.imag == 0))
            reference = data.reference_result(a, op)
            function = getattr(np, op)
            caught["real"] += not data.is_correct(function(a.real),
                                                  reference)
            caught["imag"] += not data.is_correct(function(a.imag),
                                                  reference)
    assert min(zero_real, zero_imag, both) > 1000
    assert caught["real"] > 3 and caught["imag"] > 3, caught
