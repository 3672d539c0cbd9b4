"""cudareduce._masked against numpy.ma, without a GPU: NumPy stands in for
the extension's reduction of the filled data, so what is checked is the
masking itself (fill values, all-masked, counts, mean's dtype and divide,
the warnings) on numpy.ma's own answers.

The index operators (argmin, argmax, nanargmin, nanargmax) are checked the
same way, against ``MaskedArray.argmin``/``argmax`` and NumPy's
``nanargmin``/``nanargmax`` of the masked array: masked elements take
numpy.ma's fill values, the answer is an index (never numpy.ma.masked),
and an input whose unmasked elements are all NaN is NumPy's "All-NaN slice
encountered" for the NaN forms."""
from __future__ import annotations

import warnings

import numpy as np
import numpy.ma as ma
import pytest

from cudareduce import _masked
from support.outcomes import outcome
from test_inputs_offline import numpy_outcome, same_value

ARG_OPS = ("argmin", "argmax", "nanargmin", "nanargmax")


def numpy_run(op: str, data: np.ndarray, dtype):
    """The extension's part, done by NumPy: a plain array's reduction."""
    assert type(data) is np.ndarray, "the extension gets no masked array"
    if op in ("min", "max") or op in ARG_OPS:
        assert dtype is None
        return getattr(np, op)(data)
    if op in ("nanmin", "nanmax"):
        # The all-NaN probe of the index operators: NaN, not a warning.
        assert dtype is None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(np, op)(data)
    return getattr(np, op)(data, dtype=dtype)


def cases():
    rng = np.random.default_rng(0)
    values = rng.integers(-100, 100, size=50)
    mask = rng.random(50) < 0.3
    for dtype in (np.float64, np.float32, np.float16, np.int8, np.uint16,
                  np.bool_):
        yield f"{np.dtype(dtype)}", ma.masked_array(values.astype(dtype),
                                                    mask=mask)
        yield f"{np.dtype(dtype)} nomask", ma.masked_array(
            values.astype(dtype))
    yield "all masked", ma.masked_array([1., 2.], mask=[1, 1])
    yield "mask of all False", ma.masked_array([1., 2.], mask=[0, 0])
    yield "masked NaN", ma.masked_array([1., np.nan], mask=[0, 1])
    yield "unmasked NaN", ma.masked_array([1., np.nan], mask=[1, 0])
    yield "2-D", ma.masked_array([[9, 2], [3, -9]], mask=[[1, 0], [0, 1]])
    yield "empty nomask", ma.masked_array([], dtype=np.float64)
    yield "empty mask", ma.masked_array([], mask=[], dtype=np.float64)


CALLS = [("sum", None), ("mean", None), ("min", None), ("max", None),
         ("sum", np.float32), ("sum", np.int8), ("sum", bool),
         ("mean", np.int64), ("mean", np.float16)]
CASES = list(cases())


@pytest.mark.parametrize("op, dtype", CALLS, ids=lambda c: str(c))
@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[name for name, _ in CASES])
def test_reduces_as_numpy_ma(case, op, dtype):
    _, a = CASES[case]
    kwargs = {} if dtype is None else {"dtype": dtype}
    want = numpy_outcome(lambda: getattr(a, op)(**kwargs))
    got = numpy_outcome(lambda: _masked.reduce(op, a, dtype, numpy_run))
    if isinstance(want, type):
        assert got is want
    elif want[0] is ma.masked:
        assert got[0] is ma.masked, got
    else:
        assert got[1] is want[1] and same_value(got[0], want[0]), (got, want)
        assert got[2] == want[2], (got, want)


def test_extension_refuses_the_raw_data_of_a_masked_array():
    import cudareduce
    with pytest.raises(TypeError, match="honour its mask"):
        cudareduce._cudareduce.reduce(
            "sum", ma.masked_array([1., 2.], mask=[0, 1]), "fast", 256)


# --- argmin, argmax, nanargmin, nanargmax ------------------------------------

def arg_cases():
    """CASES, and the index operators' own: NaN masked and unmasked, every
    unmasked element NaN, masked elements that tie the fill value, the
    dtypes' extremes."""
    yield from CASES
    nan, inf = np.nan, np.inf
    yield "every unmasked NaN", ma.masked_array([1., nan, nan],
                                                mask=[1, 0, 0])
    yield "unmasked NaN and masked NaN", ma.masked_array(
        [nan, nan, 2.], mask=[0, 0, 1])
    yield "one unmasked NaN", ma.masked_array([nan, 3.], mask=[0, 1])
    yield "all NaN nomask", ma.masked_array([nan, nan, nan])
    yield "all NaN mask of all False", ma.masked_array([nan, nan],
                                                       mask=[0, 0])
    yield "all NaN all masked", ma.masked_array([nan, nan], mask=[1, 1])
    yield "NaN then inf", ma.masked_array([nan, inf, 0., -inf],
                                          mask=[0, 0, 1, 1])
    yield "NaN then -inf", ma.masked_array([nan, -inf, 0., inf],
                                           mask=[0, 0, 1, 1])
    yield "NaN under the mask first", ma.masked_array([nan, 2., 1., 2.],
                                                      mask=[1, 0, 0, 0])
    yield "NaN unmasked after the extreme", ma.masked_array(
        [5., -inf, nan, inf], mask=[1, 0, 0, 0])
    yield "masked element ties inf", ma.masked_array([0., inf, inf],
                                                     mask=[1, 0, 0])
    yield "masked element ties -inf", ma.masked_array([0., -inf],
                                                      mask=[1, 0])
    yield "float16 with NaN", ma.masked_array(
        np.array([3, nan, 1, 1, nan, 7], np.float16),
        mask=[0, 0, 1, 0, 0, 0])
    yield "float32 all masked but one NaN", ma.masked_array(
        np.array([1, 2, nan, 4], np.float32), mask=[1, 1, 0, 1])
    yield "int8 extremes", ma.masked_array(
        np.array([5, 127, -128, 127, -128], np.int8), mask=[1, 0, 1, 0, 0])
    yield "int8 masked ties the fill", ma.masked_array(
        np.array([0, 127, 127], np.int8), mask=[1, 0, 0])
    yield "uint64 extremes", ma.masked_array(
        np.array([7, 2 ** 64 - 1, 0, 2 ** 64 - 1, 0], np.uint64),
        mask=[0, 1, 1, 0, 0])
    yield "int64 all masked", ma.masked_array(np.array([3, -3], np.int64),
                                              mask=[1, 1])
    yield "bool with a masked False", ma.masked_array(
        [True, False, False, True], mask=[0, 1, 0, 0])
    yield "bool all True unmasked", ma.masked_array([False, True, True],
                                                    mask=[1, 0, 0])
    yield "bool all False unmasked", ma.masked_array([True, False],
                                                     mask=[1, 0])
    yield "bool all masked", ma.masked_array([True, False], mask=[1, 1])
    yield "2-D with NaN", ma.masked_array([[nan, 2.], [1., -inf]],
                                          mask=[[0, 0], [0, 1]])
    yield "2-D transposed", ma.masked_array(
        np.arange(12.).reshape(3, 4) % 5, mask=np.arange(12) % 4 == 0).T
    yield "reversed view", ma.masked_array(
        [4., 1., 1., 9., 9.], mask=[0, 0, 1, 0, 1])[::-1]


ARG_CASES = list(arg_cases())


def numpy_index(op: str, a: ma.MaskedArray):
    """NumPy's own answer: the method for argmin/argmax (np.argmin of a
    masked array is the method), np.nanargmin/np.nanargmax of the masked
    array for the NaN forms (MaskedArray has no such method)."""
    if op.startswith("nan"):
        return getattr(np, op)(a)
    return getattr(a, op)()


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("case", range(len(ARG_CASES)),
                         ids=[name for name, _ in ARG_CASES])
def test_index_operators_as_numpy_ma(case, op):
    _, a = ARG_CASES[case]
    want = outcome(lambda: numpy_index(op, a))
    assert want[0][0] is not type(ma.masked), "NumPy gave masked?"
    got = outcome(lambda: _masked.reduce(op, a, None, numpy_run))
    assert got == want, (op, a, got, want)


def test_index_operators_on_numpys_tricky_cases():
    # The rules the cases above rely on, as NumPy has them (numpy 2.x): a
    # fully masked array gives 0, a masked element can be the answer when
    # it ties the fill value, NaN under the mask does not count and every
    # unmasked NaN is an error for the NaN forms alone.
    nan, inf = np.nan, np.inf
    assert ma.masked_array([1., 2.], mask=[1, 1]).argmin() == 0
    assert ma.masked_array([0., inf], mask=[1, 0]).argmin() == 0
    assert ma.masked_array([1., nan, 0.5], mask=[0, 1, 0]).argmin() == 2
    assert ma.masked_array([1., nan, 0.5], mask=[0, 0, 0]).argmin() == 1
    every_nan = ma.masked_array([1., nan], mask=[1, 0])
    assert every_nan.argmax() == 1
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        np.nanargmax(every_nan)
    assert np.nanargmin(ma.masked_array([nan, nan], mask=[1, 1])) == 0


@pytest.mark.parametrize("op", ARG_OPS)
def test_index_operators_are_one_run_on_the_filled_data(op):
    # What the extension is asked: the filled array, no dtype=, and (for a
    # NaN form of a float array) the all-NaN probe; the answer is the run's.
    a = ma.masked_array([3., np.nan, -1., 7., -1.], mask=[0, 0, 1, 0, 0])
    calls = []

    def run(name, data, dtype):
        calls.append(name)
        return numpy_run(name, data, dtype)

    got = _masked.reduce(op, a, None, run)
    assert type(got) is np.int64 and got == numpy_index(op, a)
    assert calls[-1] == op and calls.count(op) == 1, calls
    assert set(calls) <= {op, "nanmin", "nanmax"}, calls


@pytest.mark.parametrize("op", ["nanargmin", "nanargmax"])
def test_all_nan_probe_leaves_no_warning(op):
    # The extension's nanmax of an all-NaN array warns, as NumPy's does;
    # numpy.nanargmin of the masked array raises without a warning.
    def warning_run(name, data, dtype):
        if name in ("nanmin", "nanmax"):
            return getattr(np, name)(data)      # warns on all NaN
        return numpy_run(name, data, dtype)

    a = ma.masked_array([1., np.nan, np.nan], mask=[1, 0, 0])
    want = outcome(lambda: getattr(np, op)(a))
    got = outcome(lambda: _masked.reduce(op, a, None, warning_run))
    assert got == want == ((ValueError, "All-NaN slice encountered"), ())


@pytest.mark.parametrize("name, a", [
    ("NaN unmasked", ma.masked_array([1., np.nan, 4., 10.],
                                     mask=[0, 0, 0, 1])),
    ("NaN under the mask", ma.masked_array([np.nan, 2., 4.],
                                           mask=[1, 0, 0])),
    ("float16", ma.masked_array(np.array([1., 2., np.nan, 7.], np.float16),
                                mask=[0, 1, 0, 0])),
    ("every number NaN", ma.masked_array([np.nan, 2.], mask=[0, 1])),
    ("no mask", ma.masked_array([1., np.nan, 2.5])),
    ("integers", ma.masked_array([1, 2, 7], mask=[0, 1, 0])),
])
def test_nanmean_as_numpys_of_the_masked_array(name, a):
    """numpy.nanmean of a masked array: the unmasked numbers' mean (an
    integer array's MaskedArray.mean), "Mean of empty slice" where none is
    left."""
    want = outcome(lambda: np.nanmean(a))
    got = outcome(lambda: _masked.reduce("nanmean", a, None, numpy_run))
    assert got == want, name


def test_nanmean_of_a_fully_masked_array_is_masked():
    # numpy.nanmean itself fails there (it divides into the read-only
    # result of the masked sum); masked, as every other operator's.
    a = ma.masked_array([1., np.nan], mask=[1, 1])
    assert _masked.reduce("nanmean", a, None, numpy_run) is ma.masked


#: What a masked element becomes, by operator (numpy.ma's rules): the
#: specification _masked's fills, derived from the operators' facts, are
#: held to.
FILLS = {
    "sum": lambda a: 0, "nansum": lambda a: 0, "any": lambda a: 0,
    "prod": lambda a: 1, "nanprod": lambda a: 1, "all": lambda a: 1,
    "min": ma.minimum_fill_value, "max": ma.maximum_fill_value,
    "nanmin": lambda a: (np.nan if a.dtype.kind in "fc"
                         else ma.minimum_fill_value(a)),
    "nanmax": lambda a: (np.nan if a.dtype.kind in "fc"
                         else ma.maximum_fill_value(a)),
    "nanmean": lambda a: np.nan,
    "argmin": ma.minimum_fill_value, "nanargmin": ma.minimum_fill_value,
    "argmax": ma.maximum_fill_value, "nanargmax": ma.maximum_fill_value,
}


@pytest.mark.parametrize(
    "op, dtype",
    [(op, dtype) for op in sorted(FILLS)
     for dtype in (np.float64, np.float16, np.complex64, np.int8, np.uint16,
                   np.bool_)
     # nanmean of integers and bool is their mean's
     if op != "nanmean" or np.dtype(dtype).kind in "fc"])
def test_masked_elements_take_numpy_mas_fill(op, dtype):
    a = ma.masked_array(np.array([1, 0, 1], dtype), mask=[0, 1, 0])
    filled = {}

    def recording_run(name, data, dtype):
        filled[name] = data
        return data[0]
    _masked.reduce(op, a, None, recording_run)
    want = np.array(FILLS[op](a), a.dtype)
    got = filled[op][1]
    assert got == want or (np.isnan(want) and np.isnan(got)), (got, want)
