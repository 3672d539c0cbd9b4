"""NumPy parity on NumPy's and CuPy's own cases, on the GPU.

Each case is answered by NumPy on the same data, and cudareduce must give
the same: the same value (integers and bools exactly; floats within their
rounding), the same scalar type, and the same floating-point warnings in
the same order, for every method and every kind of input.

- Bool arrays whose bytes are not 0 and 1: NumPy counts every non-zero byte
  as True (its ``test_multiarray.py::TestBool::test_sum`` sums 0xff bytes).
- ``dtype=`` as NumPy casts: each element is cast to the dtype first
  (unsafely: floats truncate into integers, with x86-64's answer for values
  out of range, and "invalid value encountered in reduce"), ``dtype=bool``
  is a logical or, ``mean(dtype=...)`` divides the sum taken in that dtype
  (CuPy's ``test_mean_all_int64_dtype``), a float16 sum that overflows
  warns "overflow encountered in reduce", under ``numpy.errstate``.
- ``numpy.ma`` masked arrays: masked elements do not count, as
  ``MaskedArray.sum``/``mean``/``min``/``max``.
- The other NumPy subclasses and odd host arrays: matrix, memmap, a
  recarray's field, read-only and big-endian arrays.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cudareduce
from support.api_contract import METHODS
from test_inputs_gpu import (CONVERTERS, check_reduction,  # noqa: F401
                             jax, jax_with_gpu, numba_cuda)
from test_inputs_offline import numpy_outcome, same_value

pytestmark = pytest.mark.gpu

def as_input(request, protocol: str, host: np.ndarray):
    """`host` (any layout) as an input of `protocol`; a "-strided" protocol
    gets every other element of a buffer twice as long, on its side."""
    if protocol.endswith("-strided"):
        doubled = np.repeat(host, 2)
        return as_input(request, protocol[:-len("-strided")], doubled)[::2]
    return CONVERTERS[protocol](request, np.ascontiguousarray(host))


PROTOCOLS = ["numpy", "numpy-strided", "cupy", "cupy-strided", "torch-cai",
             "torch-dlpack", "numba"] + (
    ["jax-dlpack"] if jax_with_gpu() is not None else [])


# --- bool bytes that are not 0 and 1 ----------------------------------------

def odd_bool_bytes(rng, n: int) -> np.ndarray:
    """A bool array of n bytes: about a third 0, the rest 1..255."""
    raw = rng.integers(1, 256, size=n, dtype=np.uint8)
    raw[rng.random(n) < 0.35] = 0
    return raw.view(np.bool_)


def test_numpys_own_case_sums_0xff_bytes_to_their_count():
    # NumPy's TestBool::test_sum, as the issue quotes it.
    a = np.frombuffer(b"\xff" * 200, dtype=bool)
    assert np.sum(a) == 200
    for method in METHODS:
        got = cudareduce.sum(a, method)
        assert type(got) is np.int64 and got == 200, (method, got)


BOOL_CALLS = {
    "sum": lambda a, m: cudareduce.sum(a, m),
    "mean": lambda a, m: cudareduce.mean(a, m),
    "min": lambda a, m: cudareduce.min(a, m),
    "max": lambda a, m: cudareduce.max(a, m),
    "sum-into-bool": lambda a, m: cudareduce.sum(a, m, dtype=bool),
    "sum-into-int8": lambda a, m: cudareduce.sum(a, m, dtype=np.int8),
    "sum-into-float16": lambda a, m: cudareduce.sum(a, m, dtype=np.float16),
}
NUMPY_BOOL_CALLS = {
    "sum": np.sum, "mean": np.mean, "min": np.min, "max": np.max,
    "sum-into-bool": lambda a: np.sum(a, dtype=bool),
    "sum-into-int8": lambda a: np.sum(a, dtype=np.int8),
    "sum-into-float16": lambda a: np.sum(a, dtype=np.float16),
}


@pytest.mark.parametrize("call", list(BOOL_CALLS))
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("method", METHODS)
def test_bool_bytes_count_as_numpy_counts_them(request, rng, seed_note,
                                               protocol, method, call):
    # 1000 straddles the block and vector edges of every method.
    host = odd_bool_bytes(rng, 1000 + 17)
    # min and max need both values: a single False and a single True.
    host[500] = False
    host[501] = True
    data = as_input(request, protocol, host)
    want = NUMPY_BOOL_CALLS[call](host)
    got = BOOL_CALLS[call](data, method)
    assert type(got) is type(want) and got == want, (
        f"{call} of {protocol} bool bytes ({method}): got {got!r}, NumPy "
        f"{want!r} {seed_note}")


@pytest.mark.parametrize("method", METHODS)
def test_all_true_bytes_of_every_value(method):
    # Every non-zero byte value once: the max and min are True, the sum
    # their count, whatever bit is set.
    host = np.arange(1, 256, dtype=np.uint8).view(np.bool_)
    assert cudareduce.sum(host, method) == 255
    assert cudareduce.min(host, method) == np.True_
    assert cudareduce.max(np.zeros(255, np.bool_), method) == np.False_


# --- dtype= as NumPy casts --------------------------------------------------

def close_or_same(got, want) -> bool:
    """Integers and bools exactly; floats to a few units of their last
    place (the order of a float sum is the method's, not NumPy's pairwise
    one); NaN and inf exactly."""
    kind = np.dtype(type(want)).kind
    if kind != "f" or not np.isfinite(want):
        return same_value(got, want)
    eps = float(np.finfo(type(want)).eps)
    return abs(float(got) - float(want)) <= 8 * eps * abs(float(want))


def parity(call_numpy, call_ours, note=""):
    """Ours gives NumPy's value, type and warnings (in order)."""
    want = numpy_outcome(call_numpy)
    got = numpy_outcome(call_ours)
    if isinstance(want, type):
        assert got is want, (got, want, note)
        return
    assert not isinstance(got, type), (got, want, note)
    if want[0] is np.ma.masked:
        assert got[0] is np.ma.masked, (got, want, note)
        return
    assert got[1] is want[1], (got, want, note)
    assert close_or_same(got[0], want[0]), (got, want, note)
    assert got[2] == want[2], (got, want, note)


# The float-to-integer casts NumPy makes per element, in range and not,
# each alone (n = 1), so the sum is the cast itself.
CAST_VALUES = [300.5, -3.5, 70000.0, 3e9, 5e9, 1e19, 1e20, np.inf, -np.inf,
               np.nan]
INTEGER_TARGETS = [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                   np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("source", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("target", INTEGER_TARGETS)
def test_float_into_integer_casts_as_numpy(method, source, target):
    for value in CAST_VALUES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the cast to `source`
            host = np.array([value], source)
        parity(lambda: np.sum(host, dtype=target),
               lambda: cudareduce.sum(host, method, dtype=target),
               note=f"{value} as {np.dtype(source)} into "
                    f"{np.dtype(target)}")


# (name, host array, operator, dtype=): each answered by NumPy's
# numpy.<operator>(a, dtype=...) and cudareduce.<operator>(a, method,
# dtype=...) on the same data.
CASES = [
    ("issue: sum of floats into int64 truncates",
     np.array([1.7, 2.9, -1.5]), "sum", np.int64),
    ("issue: mean of floats into int64",
     np.array([1.7, 2.9, -1.5, -7.25]), "mean", np.int64),
    ("dtype=bool is a logical or",
     np.array([0.0, -0.0, 0.0, 2.0]), "sum", bool),
    ("dtype=bool of zeros (and -0.0) is False",
     np.array([0.0, -0.0, 0.0]), "sum", bool),
    ("dtype=bool of NaN is True",
     np.array([0.0, np.nan]), "sum", bool),
    ("mean into bool",
     np.array([0, 0, 3], np.int32), "mean", bool),
    ("float16 sum that overflows warns",
     np.full(100, 1000, np.float16), "sum", None),
    ("mean into float16 rounds the sum first: inf",
     np.full(100, 1000, np.float16), "mean", np.float16),
    ("float16 mean sums in float32: no overflow",
     np.full(100, 1000, np.float16), "mean", None),
    ("integers into float16 overflow per element: inf - inf",
     np.array([100000, -100000], np.int64), "sum", np.float16),
    ("float32 into float16 overflow per element",
     np.array([70000.0, -70000.0], np.float32), "sum", np.float16),
    ("integers into float16 round per element",
     np.array([2049, 2049, 2049], np.int32), "sum", np.float16),
    ("float32 overflow",
     np.full(10, 3e38, np.float32), "sum", None),
    ("float64 overflow",
     np.full(10, 1e308), "sum", None),
    ("an inf element is not an overflow",
     np.array([np.inf, 1.0], np.float32), "sum", None),
    ("inf - inf from elements is invalid, not an overflow",
     np.array([np.inf, -np.inf]), "sum", None),
    ("a NaN element warns nothing",
     np.array([np.nan, 1.0]), "sum", None),
    ("NaN into int64",
     np.array([np.nan, 1.0]), "sum", np.int64),
    ("mean overflowing its float32 sum",
     np.full(10, 3e38, np.float32), "mean", None),
    ("mean of float32 divides in float64, as NumPy 2",
     np.full(10, 1.1, np.float32), "mean", None),
    ("mean of int8 into int8 truncates",
     np.array([1, 2, 4], np.int8), "mean", np.int8),
    ("uint64 into int8 keeps the low bits",
     np.array([2 ** 64 - 1, 2], np.uint64), "sum", np.int8),
    ("bool into float16",
     np.array([True, False, True]), "sum", np.float16),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[c[0] for c in CASES])
def test_numpy_case(request, protocol, method, case):
    name, host, op, dtype = CASES[case]
    data = as_input(request, protocol, host)
    parity(lambda: getattr(np, op)(host, dtype=dtype),
           lambda: getattr(cudareduce, op)(data, method, dtype=dtype),
           note=f"{name} ({protocol}, {method})")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.uint16,
                                   np.float16, np.float32, np.float64])
@pytest.mark.parametrize("method", METHODS)
def test_cupy_mean_all_int64_dtype(cupy, method, dtype):  # noqa: F811
    # CuPy's test_statistics.py::TestMeanVar::test_mean_all_int64_dtype:
    # testing.shaped_arange((2, 3, 4), dtype), mean with dtype=int64.
    host = (np.arange(24) + 1).reshape(2, 3, 4).astype(dtype)
    parity(lambda: np.mean(host, dtype=np.int64),
           lambda: cudareduce.mean(cupy.asarray(host), method,
                                   dtype=np.int64))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("target", INTEGER_TARGETS)
def test_large_float_sums_into_integers_are_exact(cupy, rng, method, target):
    # Random floats in the target's range, several blocks and passes.
    info = np.iinfo(target)
    n = 300_001
    low, high = max(info.min, -1000), min(info.max, 1000)
    host = rng.uniform(low, high, size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # integer sums wrap silently
        want = np.sum(host, dtype=target)
    got = cudareduce.sum(cupy.asarray(host), method, dtype=target)
    assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.parametrize("method", METHODS)
def test_sum_into_float16_rounds_each_element(cupy, rng, method):
    # 1 + 2^-11 rounds (to even) to 1 in float16: 2000 of them sum to 2000
    # when each element is rounded first, as NumPy does, and to 2001
    # otherwise.  Integers above 2048 round to even float16 values.
    ties = np.full(2000, 1 + 2.0 ** -11, np.float32)
    integers = rng.integers(2049, 4096, size=15).astype(np.int32)
    for host in (ties, integers):
        want = np.sum(host, dtype=np.float16)
        got = cudareduce.sum(cupy.asarray(host), method, dtype=np.float16)
        assert type(got) is np.float16 and got == want, (host, got, want)
    assert np.sum(ties, dtype=np.float16) == 2000


@pytest.mark.parametrize("setting, outcome", [
    ("ignore", None), ("warn", RuntimeWarning), ("raise", FloatingPointError)])
def test_overflow_follows_numpy_errstate(setting, outcome):
    host = np.full(100, 1000, np.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over=setting):
            if outcome is FloatingPointError:
                with pytest.raises(FloatingPointError, match="overflow"):
                    cudareduce.sum(host)
                return
            got = cudareduce.sum(host)
    assert np.isinf(got)
    messages = [str(w.message) for w in caught]
    assert messages == ([] if outcome is None
                        else ["overflow encountered in reduce"])


# --- numpy.ma ------------------------------------------------------------------

def masked_cases(rng):
    values = rng.integers(-100, 100, size=1000)
    mask = rng.random(1000) < 0.3
    yield "issue example", np.ma.masked_array([1., 2., 3., 4., 5.],
                                              mask=[0, 1, 0, 1, 0])
    for dtype in (np.float64, np.float32, np.float16, np.int32, np.uint8,
                  np.bool_):
        yield (f"{np.dtype(dtype)} random mask",
               np.ma.masked_array(values.astype(dtype), mask=mask))
    yield "all masked", np.ma.masked_array([1., 2.], mask=[1, 1])
    yield "no mask", np.ma.masked_array([1, 2, 4])
    yield "mask of all False", np.ma.masked_array([1., 2.], mask=[0, 0])
    yield "masked NaN", np.ma.masked_array([1., np.nan, 3.], mask=[0, 1, 0])
    yield "unmasked NaN", np.ma.masked_array([1., np.nan, 3.], mask=[1, 0, 0])
    yield "2-D, masked extremes", np.ma.masked_array(
        [[1000, 2, 3], [4, -1000, 6]], mask=[[1, 0, 0], [0, 1, 0]])
    yield "empty", np.ma.masked_array([], dtype=np.float64)


MASKED_CALLS = {
    "sum": (lambda a: a.sum(), lambda a, m: cudareduce.sum(a, m)),
    "mean": (lambda a: a.mean(), lambda a, m: cudareduce.mean(a, m)),
    "min": (lambda a: a.min(), lambda a, m: cudareduce.min(a, m)),
    "max": (lambda a: a.max(), lambda a, m: cudareduce.max(a, m)),
    "sum-dtype-float32": (lambda a: a.sum(dtype=np.float32),
                          lambda a, m: cudareduce.sum(a, m,
                                                      dtype=np.float32)),
    "mean-dtype-int64": (lambda a: a.mean(dtype=np.int64),
                         lambda a, m: cudareduce.mean(a, m, dtype=np.int64)),
}


@pytest.mark.parametrize("call", list(MASKED_CALLS))
@pytest.mark.parametrize("method", ["fast", "interleaved_divergent",
                                    "multi_element", "cub"])
def test_masked_arrays_reduce_as_numpy_ma(rng, method, call):
    numpy_call, our_call = MASKED_CALLS[call]
    for name, a in masked_cases(rng):
        if method == "cub" and "dtype" in call:
            continue
        parity(lambda: numpy_call(a), lambda: our_call(a, method),
               note=f"{call} of {name} ({method})")


# --- other subclasses and odd host arrays -----------------------------------

def odd_host_arrays(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        yield "matrix", np.matrix([[1, 2], [3, 4]], dtype=np.int32)
    memmap = np.memmap(tmp_path / "m.bin", dtype=np.float32, mode="w+",
                       shape=(1000,))
    memmap[:] = np.arange(1000, dtype=np.float32) - 300.5
    yield "memmap", memmap
    records = np.rec.fromarrays([np.arange(500, dtype=np.int16),
                                 np.linspace(-1, 1, 500)], names="x,y")
    yield "recarray field (strided)", records.y
    yield "recarray field by name", records["x"]
    read_only = np.arange(1000, dtype=np.int64)
    read_only.flags.writeable = False
    yield "read-only", read_only
    yield "big-endian float32", (np.arange(1000) - 0.5).astype(">f4")
    yield "big-endian int32", (np.arange(1000) - 700).astype(">i4")
    yield "big-endian float16", (np.arange(100) / 7).astype(">f2")


@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("method", METHODS)
def test_odd_host_arrays_reduce_as_numpy(tmp_path, method, op):
    for name, a in odd_host_arrays(tmp_path):
        want = getattr(np, op)(np.asarray(a))
        got = getattr(cudareduce, op)(a, method)
        note = f"{op} of {name} ({method})"
        assert type(got) is type(want), (got, want, note)
        if np.dtype(type(want)).kind in "biu":
            assert got == want, (got, want, note)
        else:
            assert np.isclose(got, want, rtol=1e-3), (got, want, note)
