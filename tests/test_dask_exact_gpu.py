"""cudareduce.dask's exact=True on the GPU (issue 44): each chunk's exact
sum kept unrounded, the states added and rounded once, so that every
chunking and grouping gives the bits of one cudareduce exact=True call
over the whole array (and, for float64, math.fsum's), for CuPy and NumPy
chunks, with the one call's warnings; on Dask's threaded scheduler."""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

import cudareduce

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

pytestmark = pytest.mark.gpu

EXACT_OPS = ("sum", "nansum", "mean", "nanmean")
CHUNKINGS = {"uneven": (1, 999, 4096, 17), "one": -1,
             "with empty": ((0, 3000, 0, 2113),)}
DTYPES = (np.float64, np.float32, np.float16,
          np.dtype(ml_dtypes.bfloat16))


def bits(value) -> bytes:
    return np.asarray(value).tobytes()


def outcome(call):
    """(the value's bits and dtype, the warnings' texts) of `call`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    value = value.get() if hasattr(value, "get") else value
    return bits(value), np.asarray(value).dtype, sorted(
        str(w.message) for w in caught)


def spread(rng, dtype, n: int) -> np.ndarray:
    """Values over many binades, both signs, with NaNs: their float sums
    depend on the order, their exact sum does not."""
    values = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
    values[rng.integers(0, n, 5)] = np.nan
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
@pytest.mark.parametrize("split_every", [None, 2])
def test_every_chunking_gives_the_one_calls_bits(cupy, rng, seed_note, dtype,
                                                 chunks, split_every):
    host = spread(rng, dtype, 5113)
    wrong = []
    for op in EXACT_OPS:
        want = outcome(lambda: getattr(cudareduce, op)(host, exact=True))
        # CuPy has no bfloat16 (it holds ml_dtypes' as void, "|V2").
        kinds = [("numpy", host)] + ([] if host.dtype.name == "bfloat16"
                                     else [("cupy", cupy.asarray(host))])
        for kind, whole in kinds:
            x = da.from_array(whole, chunks=chunks, asarray=False)
            lazy = getattr(cd, op)(x, split_every=split_every, exact=True)
            got = outcome(lambda: lazy.compute(scheduler="threads"))
            if got != want:
                wrong.append(f"{op} of {kind} chunks: {got} != {want}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


def test_float64_is_math_fsums_in_any_chunking(cupy, rng, seed_note):
    # Cancellation across chunks: 1e308, 1 and -1e308 in three of them.
    host = rng.standard_normal(30_000) * 1e-3
    host[[5, 15_000, 29_999]] = [1e308, 1.0, -1e308]
    want = math.fsum(host)
    for chunks in ((10_000,), (7,), (29_999, 1)):
        x = da.from_array(cupy.asarray(host), chunks=chunks, asarray=False)
        got = cd.sum(x, exact=True).compute(scheduler="threads")
        assert float(got) == want, (chunks, float(got), want, seed_note)


def test_specials_and_warnings_are_the_one_calls(cupy):
    cases = {
        "overflow": np.array([3e38, 3e38, -1.0], np.float32),
        "inf - inf": np.array([np.inf, 1.0, -np.inf]),
        "inf": np.array([1.0, np.inf, 2.0]),
        "NaN": np.array([1.0, np.nan, 2.0]),
        "all NaN": np.full(3, np.nan),
        "subnormals": np.full(3, 5e-324),
    }
    wrong = []
    for name, host in cases.items():
        for op in EXACT_OPS:
            want = outcome(lambda: getattr(cudareduce, op)(host, exact=True))
            x = da.from_array(cupy.asarray(host), chunks=1, asarray=False)
            lazy = getattr(cd, op)(x, exact=True)
            got = outcome(lambda: lazy.compute(scheduler="threads"))
            if got != want:
                wrong.append(f"{name}, {op}: {got} != {want}")
    assert not wrong, wrong


def test_what_exact_refuses(cupy):
    x = da.from_array(cupy.ones((4, 6), np.float32), chunks=2,
                      asarray=False)
    with pytest.raises(ValueError, match="not along axes"):
        cd.sum(x, axis=0, exact=True)
    with pytest.raises(ValueError, match="'fast' only"):
        cd.sum(x, "sequential", exact=True).compute(scheduler="threads")
    with pytest.raises(TypeError):
        cd.prod(x, exact=True)
    # Integers are exact already, and an empty array has nothing to round:
    # both as without exact=.
    ints = da.from_array(cupy.arange(10, dtype=np.int32), chunks=3,
                         asarray=False)
    assert int(cd.sum(ints, exact=True).compute(scheduler="threads")) == 45
    empty = da.from_array(cupy.ones(0, np.float32), chunks=1, asarray=False)
    assert float(cd.sum(empty, exact=True).compute(scheduler="threads")) == 0
