"""cudareduce.dask on the GPU: Dask arrays of CuPy chunks (and of NumPy
chunks, through the host path), every operator against NumPy's answer on
the same data, on Dask's threaded scheduler, for uneven and empty chunks,
NaNs in some chunks and ``split_every``.  The data are
test_dask_offline's: small integers (of either part, for complex; units
for products), so that every answer is exact in any order and compared
exactly."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import cudareduce
from test_dask_offline import data, float16_sums, same

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

pytestmark = pytest.mark.gpu

OPS = tuple(op for op in cd.__all__ if op != "reduce_array")
SHAPE = (3101, 57)
CHUNKINGS = {
    "uneven": ((100, 3000, 1), (7, 50)),
    "empty chunks": ((0, 2000, 0, 1101), (57,)),
    "one chunk": (3101, 57),
}


def quietly(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return call()


@pytest.mark.parametrize("split_every", [None, 3])
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32,
                                   np.complex64], ids=str)
def test_cupy_chunks(cupy, rng, seed_note, dtype, chunks, split_every):
    wrong = []
    for k, op in enumerate(OPS):
        host = data(rng, dtype, SHAPE, units=op.endswith("prod"))
        x = da.from_array(cupy.asarray(host), chunks=chunks, asarray=False)
        methods = list(cudareduce.methods())
        method = methods[k % len(methods)]
        result = getattr(cd, op)(x, method, split_every=split_every)
        got = quietly(lambda: result.compute(scheduler="threads"))
        assert isinstance(got, cupy.ndarray) and got.shape == ()
        want = quietly(lambda: getattr(np, op)(host))
        if not same(got.get(), want):
            wrong.append(f"{op} ({method}): got {got!r}, NumPy {want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


@pytest.mark.parametrize("dtype", [np.float64, np.int16], ids=str)
def test_numpy_chunks(rng, seed_note, dtype):
    wrong = []
    for op in OPS:
        host = data(rng, dtype, SHAPE, units=op.endswith("prod"))
        x = da.from_array(host, chunks=(1000, 20))
        got = quietly(lambda: getattr(cd, op)(x).compute(scheduler="threads"))
        want = quietly(lambda: getattr(np, op)(host))
        if not same(got, want) or type(got) is not type(want):
            wrong.append(f"{op}: got {got!r}, NumPy {want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


def test_dtype_argument_and_errors(cupy, rng):
    host = rng.integers(-100, 100, (5000, 3)).astype(np.int8)
    # A product of few factors other than 1: exact in every order.
    factors = np.ones_like(host)
    factors[rng.integers(0, 5000, 10), 1] = -3
    for op, values in (("sum", host), ("mean", host), ("prod", factors)):
        x = da.from_array(cupy.asarray(values), chunks=(700, 2),
                          asarray=False)
        for dtype in (np.int8, np.float32, np.complex128):
            got = quietly(lambda: getattr(cd, op)(x, dtype=dtype).compute())
            want = quietly(lambda: getattr(np, op)(values, dtype=dtype))
            assert same(got.get(), want), (op, dtype, got, want)
    nans = da.from_array(cupy.full(100, np.nan), chunks=30, asarray=False)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        cd.nanargmin(nans).compute()
    empty = da.from_array(cupy.zeros(0), chunks=5, asarray=False)
    with pytest.raises(ValueError):
        cd.max(empty).compute()


def test_means_round_their_sums_as_one_call_does(cupy, rng, seed_note):
    """float16 means and nanmeans of CuPy chunks are NumPy's and one
    cudareduce call's (the sum rounded once); a bfloat16 mean of NumPy
    chunks is one cudareduce call's (NumPy's own sums in bfloat16)."""
    host = float16_sums(rng)
    finite = np.nan_to_num(host)
    for op, values in (("nanmean", host), ("mean", finite)):
        x = da.from_array(cupy.asarray(values), chunks=(10, 7),
                          asarray=False)
        got = quietly(lambda: getattr(cd, op)(x).compute()).get()
        want = quietly(lambda: getattr(np, op)(values))
        assert same(got, want), (op, got, want, seed_note)
        assert same(got, getattr(cudareduce, op)(values)), (op, seed_note)
    bf16 = rng.integers(0, 60, (37, 23)).astype(ml_dtypes.bfloat16)
    got = cd.mean(da.from_array(bf16, chunks=(10, 7))).compute()
    assert same(got, cudareduce.mean(bf16)), (got, seed_note)


def test_bfloat16_nan_operators_skip_nan(rng, seed_note):
    """bfloat16 NumPy chunks with NaNs, one chunk all NaN: every
    NaN-skipping operator is one cudareduce call's on the whole array
    (NumPy's own nan functions of ml_dtypes' bfloat16 do not skip NaN).
    Values of -1, 0 and 1, so that every partial sum and product is exact
    in bfloat16 and the two orders of adding agree."""
    host = rng.integers(-1, 2, (37, 23)).astype(ml_dtypes.bfloat16)
    host[3, 4] = host[25, 1] = np.nan
    host[30:, :] = np.nan          # the last row of chunks: all NaN
    x = da.from_array(host, chunks=(10, 7))
    wrong = []
    for op in (op for op in OPS if op.startswith("nan")):
        got = quietly(lambda: getattr(cd, op)(x).compute(scheduler="threads"))
        want = quietly(lambda: getattr(cudareduce, op)(host))
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype != want.dtype or not same(got.astype(np.float32),
                                               want.astype(np.float32)):
            wrong.append(f"{op}: got {got!r}, cudareduce {want!r}")
    assert not wrong, f"{wrong} {seed_note}"


def test_chunks_on_every_device(cupy, rng, seed_note):
    """A Dask array whose CuPy chunks lie on the machine's GPUs in turn
    (all on GPU 0 where it has one), on the threaded scheduler: each block
    is reduced on its own GPU and the partials of several GPUs are
    combined on one, for every operator, against NumPy."""
    count = cupy.cuda.runtime.getDeviceCount()
    wrong = []
    for op in OPS:
        host = data(rng, np.float64, SHAPE, units=op.endswith("prod"))
        pieces = []
        for k, start in enumerate(range(0, SHAPE[0], 700)):
            with cupy.cuda.Device(k % count):
                piece = cupy.asarray(host[start:start + 700])
            pieces.append(da.from_array(piece, chunks=(350, 57),
                                        asarray=False))
        x = da.concatenate(pieces)
        got = quietly(lambda: getattr(cd, op)(x, split_every=2).compute(
            scheduler="threads"))
        want = quietly(lambda: getattr(np, op)(host))
        if not same(cupy.asnumpy(got), want):
            wrong.append(f"{op}: got {got!r}, NumPy {want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note} ({count} GPUs)"
