"""prod, any, all and the NaN-skipping operators (nanmean's included)
against NumPy, on the GPU.

Every operator x method, over every dtype, sizes at every edge (0, 1, warp
and block boundaries +-1, the fast method's vector head and tail,
multi-pass sizes, one host-ring chunk and more) and every input kind in
rotation (NumPy host arrays contiguous, reversed and Fortran-ordered;
CuPy arrays contiguous, strided, transposed and negatively strided;
DLPack alone).  The data make every answer exact, so that every result is
compared with NumPy's on the same data exactly, type included:

- sums: integer values in [-4, 4] (bool: 0/1), exact in every
  accumulator, float16 included (rounded once at the end, as NumPy does);
- products: exact_data.product_values, ones with a dozen factors of 2, -1
  and 0.5 (integers: 2, 3, -1; bool: a False half the time) at random
  places: a power of two, exact;
- min and max: random values; any and all: mostly false (any) or mostly
  true (all), with a few of the other at random places;
- the NaN forms: the same, with NaN at random places (floats), and an
  all-NaN input of each size.

Then NumPy's rules one by one: empty inputs, NaN in any and all, warnings
("All-NaN slice encountered", overflow and invalid value in a product or
a NaN-skipping sum), dtype= (casts, bool, float16, all methods with cub),
integer products that wrap, masked arrays, and a size over 2^31.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cudareduce
from support.api_contract import METHODS, SUPPORTED_DTYPES
from support.dlpack_capsules import DLPackOnly
from support.exact_data import product_values
from test_inputs_offline import numpy_outcome

pytestmark = pytest.mark.gpu

OPERATORS = ("prod", "any", "all", "nansum", "nanprod", "nanmin", "nanmax",
             "nanmean")

# Warp and block edges, the fast method's 16-byte vectors (up to 16
# elements) of its head and tail, several passes of every ladder step,
# and more than one 16 MiB chunk of the host ring for 8-byte elements.
SIZES = (1, 2, 15, 17, 31, 33, 63, 65, 255, 257, 1023, 1025, 4097, 65_537,
         300_001, (1 << 21) + 7)
KINDS = ("numpy", "numpy-reversed", "numpy-fortran", "cupy", "cupy-strided",
         "cupy-transposed", "cupy-reversed", "dlpack")


def values(rng, op: str, dtype: np.dtype, n: int) -> np.ndarray:
    """Data of `op` whose NumPy answer is exact (see the module's doc)."""
    kind = dtype.kind
    if op in ("prod", "nanprod"):
        a = product_values(rng, n, dtype)
    elif op in ("any", "all"):
        a = np.zeros(n, dtype) if op == "any" else np.ones(n, dtype)
        where = rng.integers(0, n, size=rng.integers(0, 3))
        a[where] = not a[0] if kind == "b" else (1 if op == "any" else 0)
    elif op in ("nanmin", "nanmax"):
        a = (rng.random(n) < 0.5 if kind == "b"
             else rng.integers(0 if kind == "u" else -100, 101, n))
        a = a.astype(dtype)
    else:
        a = (rng.random(n) < 0.5 if kind == "b"
             else rng.integers(0 if kind == "u" else -4, 5, n)).astype(dtype)
    if kind == "f" and op.startswith("nan"):
        a[rng.random(n) < 0.05] = np.nan
    return a


def as_kind(cupy, kind: str, host: np.ndarray):
    """(input of `kind` holding `host`'s elements, its NumPy twin): the
    same elements in the same order, whatever the layout."""
    n = host.size
    if kind == "numpy":
        return host, host
    if kind == "numpy-reversed":
        view = host[::-1].copy()[::-1]
        return view, view
    if kind in ("numpy-fortran", "cupy-transposed"):
        rows = 3 if n % 3 == 0 else 1
        grid = host.reshape(rows, n // rows)
        if kind == "numpy-fortran":
            return np.asfortranarray(grid), grid
        return cupy.asarray(grid.T.copy()).T, grid
    if kind == "cupy":
        return cupy.asarray(host), host
    if kind == "cupy-strided":
        return cupy.asarray(np.repeat(host, 2))[::2], host
    if kind == "cupy-reversed":
        return cupy.asarray(host[::-1].copy())[::-1], host
    if kind == "dlpack":
        return DLPackOnly(cupy.asarray(host)), host
    raise ValueError(kind)


def same(got, want) -> bool:
    """Same type and value; NaN equal to NaN."""
    if type(got) is not type(want):
        return False
    if np.dtype(type(want)).kind == "f" and np.isnan(want):
        return bool(np.isnan(got))
    return bool(got == want)


def quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return call()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPERATORS)
def test_operator_matches_numpy(cupy, rng, seed_note, op, method):
    wrong = []
    for d, dtype in enumerate(SUPPORTED_DTYPES):
        for s, n in enumerate(SIZES):
            kind = KINDS[(d + s) % len(KINDS)]
            host = values(rng, op, dtype, n)
            if kind in ("numpy-fortran", "cupy-transposed"):
                host = host[:n - n % 3] if n > 3 else host
            data, twin = as_kind(cupy, kind, host)
            want = quiet(lambda: getattr(np, op)(twin))
            got = quiet(lambda: getattr(cudareduce, op)(data, method))
            if not same(got, want):
                wrong.append(f"{dtype} n={n} {kind}: got {got!r}, NumPy "
                             f"{want!r}")
    assert not wrong, f"{op} ({method}): {wrong[:5]} {seed_note}"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", ["nanmin", "nanmax", "nansum", "nanprod",
                                "nanmean"])
def test_all_nan_inputs(cupy, op, method):
    # Every element NaN, at every size: nanmin/nanmax give NaN with NumPy's
    # warning, nansum 0 and nanprod 1, without one, nanmean NaN with
    # "Mean of empty slice".
    for dtype in (np.float16, np.float32, np.float64):
        for n in SIZES:
            host = np.full(n, np.nan, dtype)
            for data in (host, cupy.asarray(host)):
                want = numpy_outcome(lambda: getattr(np, op)(host))
                got = numpy_outcome(
                    lambda: getattr(cudareduce, op)(data, method))
                assert got[1] is want[1] and same(got[0], want[0]), (
                    op, dtype, n, got, want)
                assert got[2] == want[2], (op, dtype, n, got, want)


@pytest.mark.parametrize("op", OPERATORS)
def test_empty_inputs(cupy, op):
    for dtype in SUPPORTED_DTYPES:
        host = np.zeros((2, 0), dtype)
        for data in (host, cupy.asarray(host)):
            want = numpy_outcome(lambda: getattr(np, op)(host))
            for method in METHODS:
                got = numpy_outcome(
                    lambda: getattr(cudareduce, op)(data, method))
                if isinstance(want, type):
                    assert got is want, (op, dtype, method, got)
                    continue
                assert not isinstance(got, type), (op, dtype, method, got)
                assert same(got[0], want[0]) and got[2] == want[2], (
                    op, dtype, method, got, want)


def test_empty_nanmin_names_numpys_ufunc():
    for op, ufunc in (("nanmin", "fmin"), ("nanmax", "fmax")):
        with pytest.raises(ValueError, match=f"operation {ufunc} which has "
                                             "no identity"):
            getattr(cudareduce, op)(np.zeros(0, np.float32))


# (numpy call, cudareduce call): NumPy's rules, each case alone, answered
# by NumPy on the same data with its warnings.
RULES = [
    ("any of NaN is True", np.array([0.0, np.nan]), "any", {}),
    ("all of NaN is True", np.array([np.nan, 1.0], np.float32), "all", {}),
    ("all of -0.0 is False", np.array([1.0, -0.0]), "all", {}),
    ("any of bool bytes", np.array([0, 0, 7], np.uint8).view(bool), "any",
     {}),
    ("prod overflows", np.full(10, 1e200), "prod", {}),
    ("prod of float32 overflows", np.full(10, 1e30, np.float32), "prod",
     {}),
    ("prod of float16 overflows", np.full(10, 100, np.float16), "prod", {}),
    ("prod of 0 and inf is invalid", np.array([0.0, np.inf]), "prod", {}),
    ("prod with a NaN element", np.array([2.0, np.nan]), "prod", {}),
    ("nansum of inf and -inf is invalid",
     np.array([np.nan, np.inf, -np.inf]), "nansum", {}),
    ("nansum overflows", np.array([1e308, 1e308, np.nan]), "nansum", {}),
    ("nanprod overflows", np.array([1e200, np.nan, 1e200]), "nanprod", {}),
    ("nanmin of inf", np.array([np.nan, np.inf]), "nanmin", {}),
    ("nanmax of -inf and NaN", np.array([-np.inf, np.nan], np.float16),
     "nanmax", {}),
    ("nanmin of integers is min", np.array([3, -2, 7], np.int16), "nanmin",
     {}),
    ("nansum of uint8 is a uint64 sum", np.array([200, 100], np.uint8),
     "nansum", {}),
    ("nanprod of bool is an int64 product", np.array([True, True]),
     "nanprod", {}),
    ("prod into int8 wraps", np.array([100, 3], np.int64), "prod",
     {"dtype": np.int8}),
    ("prod of floats into int32 truncates", np.array([2.9, -3.9]), "prod",
     {"dtype": np.int32}),
    ("prod into bool is a logical and", np.array([2.0, 0.5]), "prod",
     {"dtype": bool}),
    ("prod into bool of a zero", np.array([2, 0], np.int32), "prod",
     {"dtype": bool}),
    ("prod into float16 rounds each element", np.array([1.0004, 3.0]),
     "prod", {"dtype": np.float16}),
    ("prod of int32 into float64", np.array([3, 5, -7], np.int32), "prod",
     {"dtype": np.float64}),
    ("nansum into bool skips NaN first",
     np.array([np.nan, 0.0], np.float32), "nansum", {"dtype": bool}),
    ("nansum into bool of a non-zero",
     np.array([np.nan, 0.5]), "nansum", {"dtype": bool}),
    ("nansum into int8 skips NaN before the cast",
     np.array([np.nan, 2.7, 3.9]), "nansum", {"dtype": np.int8}),
    ("nansum of float32 into float64",
     np.array([np.nan, 1e-8, 1.0], np.float32), "nansum",
     {"dtype": np.float64}),
    ("nansum into float16", np.array([np.nan, 2049.0, 2049.0]), "nansum",
     {"dtype": np.float16}),
    ("nanprod into uint64 skips NaN", np.array([np.nan, 3.0, 5.0]),
     "nanprod", {"dtype": np.uint64}),
    ("nanprod of float16 into float32",
     np.array([np.nan, 0.1, 3.0], np.float16), "nanprod",
     {"dtype": np.float32}),
    ("nanmean of float16 sums in float16",
     np.array([6e4, 6e4, np.nan], np.float16), "nanmean", {}),
    ("nanmean of inf and -inf is invalid",
     np.array([np.nan, np.inf, -np.inf]), "nanmean", {}),
    ("nanmean of inf", np.array([np.nan, np.inf, 1.0], np.float32),
     "nanmean", {}),
    ("nanmean into float16 rounds each element",
     np.array([np.nan, 1.0004, 3.0]), "nanmean", {"dtype": np.float16}),
    ("nanmean of float32 into float64",
     np.array([np.nan, 1e-8, 1.0], np.float32), "nanmean",
     {"dtype": np.float64}),
    ("nanmean of float16 into float32 keeps NaN out",
     np.array([np.nan, 0.1, 3.0], np.float16), "nanmean",
     {"dtype": np.float32}),
    ("nanmean of integers is mean", np.array([1, 2, 4], np.int8),
     "nanmean", {}),
    ("nanmean of integers into int16 truncates",
     np.array([1, 2, 4], np.int8), "nanmean", {"dtype": np.int16}),
    ("nanmean of bool", np.array([True, False, True]), "nanmean", {}),
]


@pytest.mark.parametrize("dtype", [np.int32, bool, np.uint8])
def test_nanmean_of_floats_takes_a_float_dtype(cupy, dtype):
    """numpy.nanmean's TypeError for an integer dtype= of a float input."""
    host = np.array([1.5, np.nan])
    with pytest.raises(TypeError, match="dtype must be inexact") as numpy:
        np.nanmean(host, dtype=dtype)
    for data in (host, cupy.asarray(host)):
        with pytest.raises(TypeError, match=str(numpy.value)):
            cudareduce.nanmean(data, dtype=dtype)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", range(len(RULES)),
                         ids=[r[0] for r in RULES])
def test_numpy_rule(cupy, method, case):
    name, host, op, kwargs = RULES[case]
    for data in (host, cupy.asarray(host)):
        want = numpy_outcome(lambda: getattr(np, op)(host, **kwargs))
        got = numpy_outcome(
            lambda: getattr(cudareduce, op)(data, method, **kwargs))
        assert not isinstance(got, type) and got[1] is want[1], (
            name, got, want)
        assert same(got[0], want[0]) or (
            np.dtype(want[1]).kind == "f"
            and np.isclose(float(got[0]), float(want[0]), rtol=1e-6)), (
                name, type(data), got, want)
        assert got[2] == want[2], (name, type(data), got, want)


@pytest.mark.parametrize("method", METHODS)
def test_integer_products_wrap_as_numpys(cupy, rng, method):
    # 3^k for k up to 40 wraps int64 and uint64; NumPy wraps them too.
    for dtype in (np.int8, np.int32, np.int64, np.uint16, np.uint64):
        for n in (40, 4097, 300_001):
            host = np.ones(n, dtype)
            host[rng.integers(0, n, size=40)] = 3
            host[rng.integers(0, n)] = 7
            for data in (host, cupy.asarray(host)):
                got = cudareduce.prod(data, method)
                want = np.prod(host)
                assert same(got, want), (dtype, n, got, want)


@pytest.mark.parametrize("method", METHODS)
def test_float_products_are_rounded_once_from_float64(cupy, rng, method):
    """Issue 44: a float32 (float16) product multiplies in float64 and is
    rounded once, so 10^6 (10^4) factors near 1 land within an ulp of
    the float64 product, on the device, through the host ring and along
    rows (float32 partial products were 3-5e-4 off, NumPy's 1-5e-5)."""
    for dtype, n, spread in ((np.float32, 1_000_000, 1e-3),
                             (np.float16, 10_000, 1e-2)):
        host = (1 + rng.standard_normal(n) * spread).astype(dtype)
        want = np.prod(host.astype(np.float64))
        ulp = float(np.spacing(dtype(want)))
        for data in (host, cupy.asarray(host)):
            got = cudareduce.prod(data, method)
            assert got.dtype == dtype
            assert abs(float(got) - want) <= ulp, (dtype, type(data), got,
                                                  want, ulp)
        if method in ("fast", "cub"):
            rows = host.reshape(4, -1)
            want_rows = np.prod(rows.astype(np.float64), axis=1)
            got_rows = cudareduce.prod(cupy.asarray(rows), method,
                                       axis=1).get()
            assert np.all(np.abs(got_rows.astype(np.float64) - want_rows)
                          <= np.spacing(want_rows.astype(dtype)).astype(
                              np.float64)), (dtype, got_rows, want_rows)


@pytest.mark.parametrize("method", ["fast", "cub", "multi_element"])
def test_dtype_casts_of_a_large_host_array(rng, method):
    # More than one chunk of the host ring, each cast on the device first.
    # (Not into float16: NumPy rounds its float32 sum to float16 at the end
    # of each 8192-element buffer, cudareduce once at the end.)
    host = rng.integers(-3, 4, size=(1 << 22) + 3).astype(np.float64)
    host[rng.random(host.size) < 0.01] = np.nan
    for dtype in (np.int32, np.float32, np.uint64, bool):
        want = quiet(lambda: np.nansum(host, dtype=dtype))
        got = quiet(lambda: cudareduce.nansum(host, method, dtype=dtype))
        assert same(got, want), (dtype, got, want)


MASKED = [
    np.ma.array([1.0, np.nan, 3.0, 2.0], mask=[0, 0, 1, 0]),
    np.ma.array([np.nan, 5.0], mask=[1, 0]),
    np.ma.array([2, 3, 4], mask=[0, 1, 0], dtype=np.int16),
    np.ma.array([1.0, 2.0], mask=[1, 1]),
    np.ma.array([0.0, 1.0, 0.0], mask=[0, 1, 1]),
]


@pytest.mark.parametrize("method", ["fast", "cub"])
@pytest.mark.parametrize("op", OPERATORS)
def test_masked_arrays_reduce_as_numpy_ma(op, method):
    for a in MASKED:
        want = numpy_outcome(lambda: getattr(np, op)(a)
                             if op.startswith("nan") else getattr(a, op)())
        got = numpy_outcome(lambda: getattr(cudareduce, op)(a, method))
        if op == "nanmean" and a.mask.all():
            # numpy.nanmean fails there (ValueError: it divides into the
            # read-only masked sum); numpy.ma.masked, as the others'.
            assert want is ValueError and got[0] is np.ma.masked, (a, got)
            continue
        if want[0] is np.ma.masked:
            assert got[0] is np.ma.masked, (op, a, got)
            continue
        assert same(got[0], want[0]), (op, a, got, want)
        assert got[2] == want[2], (op, a, got, want)


@pytest.mark.parametrize("method", ["fast", "multi_element", "cub",
                                    "interleaved_divergent"])
def test_over_two_to_the_31_elements(cupy, method):
    # 2^31 + 5 bytes: the deciding element last, past every 32-bit index.
    n = (1 << 31) + 5
    a = cupy.ones(n, cupy.int8)
    assert cudareduce.all(a, method) == np.True_
    a[-1] = 0
    assert cudareduce.all(a, method) == np.False_
    assert cudareduce.any(a, method) == np.True_
    a[-1] = -1
    assert cudareduce.prod(a, method) == np.int64(-1)
    assert cudareduce.nanmin(a, method) == np.int8(-1)
    del a
    cupy.get_default_memory_pool().free_all_blocks()


@pytest.mark.parametrize("op", OPERATORS)
def test_torch_tensors(torch, rng, op):
    # PyTorch users' dtypes, read in place (the direct read and DLPack).
    for dtype in (np.bool_, np.int8, np.int32, np.int64, np.float16,
                  np.float32, np.float64):
        host = values(rng, op, np.dtype(dtype), 70_001)
        tensor = torch.from_numpy(host).cuda()
        want = quiet(lambda: getattr(np, op)(host))
        strided = torch.from_numpy(np.repeat(host, 2)).cuda()[::2]
        for data in (tensor, DLPackOnly(tensor), strided):
            got = quiet(lambda: getattr(cudareduce, op)(data))
            assert same(got, want), (dtype, type(data), got, want)
