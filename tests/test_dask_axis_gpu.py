"""cudareduce.dask along axes (issue 43) on the GPU: Dask arrays of CuPy
chunks (and of NumPy chunks, through the host path), every operator
along rows, columns and both, against NumPy's answer on the same data,
on Dask's threaded scheduler, for uneven and empty chunks and
``split_every``, with fast and cub.  The result has Dask's own shape,
dtype and chunks, and computes to a CuPy array for CuPy chunks.  The data
are test_dask_offline's (small integers: every answer exact in any order,
a mean within 4 eps of its dtype, see test_dask_axis_offline.agrees);
test_dask_axis_offline.py checks the graphs without a GPU."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from support.axis_cases import AXIS_METHODS, device_index_answer
from test_dask_axis_offline import (INDEX_OPS, agrees, axis_for,
                                   check_dtype_argument)
from test_dask_gpu import CHUNKINGS, SHAPE
from test_dask_offline import data, numpy_answer

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

pytestmark = pytest.mark.gpu

OPS = tuple(op for op in cd.__all__ if op != "reduce_array")
DTYPES = (np.float64, np.float32, np.int32, np.complex64)


def quietly(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return call()


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 1), None], ids=repr)
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
def test_cupy_chunks_along_axes(cupy, rng, seed_note, chunks, axis):
    wrong = []
    for k, op in enumerate(OPS):
        dtype = DTYPES[k % len(DTYPES)]
        host = data(rng, dtype, SHAPE, units=op.endswith("prod"))
        x = da.from_array(cupy.asarray(host), chunks=chunks, asarray=False)
        method = AXIS_METHODS[k % len(AXIS_METHODS)]
        kwargs = {"axis": axis_for(op, axis), "keepdims": k % 3 == 0}
        split_every = (None, 3)[k % 2]
        result = getattr(cd, op)(x, method, split_every=split_every,
                                 **kwargs)
        own = getattr(da, op)(x, split_every=split_every, **kwargs)
        got = quietly(lambda: result.compute(scheduler="threads"))
        want = quietly(lambda: getattr(np, op)(host, **kwargs))
        if not isinstance(got, cupy.ndarray):
            wrong.append(f"{op} ({method}, {kwargs}): a "
                         f"{type(got).__name__}")
        elif result.chunks != own.chunks or result.dtype != want.dtype:
            wrong.append(f"{op} ({method}, {kwargs}): chunks "
                         f"{result.chunks}, Dask's {own.chunks}; dtype "
                         f"{result.dtype}, NumPy's {want.dtype}")
        elif not agrees(op, got.get(), want):
            wrong.append(f"{op} ({method}, {kwargs}): got {got!r}, NumPy "
                         f"{want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


@pytest.mark.parametrize("axis", [0, 1])
def test_numpy_chunks_along_axes(rng, seed_note, axis):
    wrong = []
    for op in OPS:
        host = data(rng, np.float64, SHAPE, units=op.endswith("prod"))
        x = da.from_array(host, chunks=(1000, 20))
        got = quietly(lambda: getattr(cd, op)(x, axis=axis).compute(
            scheduler="threads"))
        want = quietly(lambda: getattr(np, op)(host, axis=axis))
        if type(got) is not np.ndarray or not agrees(op, got, want):
            wrong.append(f"{op}: got {got!r}, NumPy {want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


def test_dtype_argument_along_axes(cupy, rng):
    check_dtype_argument(rng, SHAPE, lambda a: da.from_array(
        cupy.asarray(a), chunks=(700, 20), asarray=False))


def test_a_row_all_nan_in_one_chunk_only(cupy):
    """Row 1 is NaN in its first chunk only: the index of its number.
    Row 2 is NaN throughout: NumPy's (and Dask's) ValueError, or -1 there,
    as cudareduce answers a device input's all-NaN slice."""
    host = np.arange(24, dtype=np.float64).reshape(4, 6)
    host[1, :4] = np.nan
    x = da.from_array(cupy.asarray(host), chunks=(2, 4), asarray=False)
    for op in ("nanargmin", "nanargmax", "nanmin", "nanmax", "nanmean"):
        got = quietly(lambda: getattr(cd, op)(x, axis=1).compute())
        assert agrees(op, got.get(), numpy_answer(op, host, axis=1)), op
    host[2, :] = np.nan
    x = da.from_array(cupy.asarray(host), chunks=(2, 4), asarray=False)
    for op in ("nanargmin", "nanargmax"):
        try:
            got = getattr(cd, op)(x, axis=1).compute().get()
        except ValueError as error:
            assert "All" in str(error) and "NaN slice" in str(error), error
            continue
        want = device_index_answer(op, host, 1, False)
        assert (got == want).all() and want[2] == -1, (op, got, want)


def test_index_operators_refuse_a_tuple(cupy):
    x = da.from_array(cupy.ones((4, 6)), chunks=(2, 4), asarray=False)
    for op in INDEX_OPS:
        with pytest.raises(TypeError):
            getattr(cd, op)(x, axis=(0,))
