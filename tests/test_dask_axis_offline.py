"""cudareduce.dask along axes (issue 43) without a GPU: ``axis=`` and
``keepdims=`` as Dask's own reductions take them (``dask.array.sum(x,
axis=...)``), over NumPy chunks.

cudareduce's operators are replaced by NumPy's own reductions, as
cudareduce answers a NumPy input (a NumPy ``out`` of a whole-array
reduction of any one-element shape; NumPy's errors and warnings), so
that what is checked is the graph: every operator's answer along every
axis (ints, negative ones, tuples, None) is NumPy's on the whole array,
for every chunking (one chunk, uneven, empty chunks) and ``split_every``,
with NaN in some chunks, ties across chunks (the index operators' first
one wins), a slice that is all NaN in one chunk only, and one that is all
NaN throughout; the result's shape, dtype and chunks are those of Dask's
own reduction; the errors are Dask's (an AxisError, or a TypeError for a
float axis, or for a tuple given to an index operator), when the graph
is built; a repeated axis NumPy's ValueError (Dask's own raises it when
computed).  The data are test_dask_offline's (small integers:
every answer exact in any order).

The stand-in replaces ``cudareduce.<op>`` (which ``reduce_array`` calls),
whatever arguments the graph passes it: this module assumes only that
cudareduce.dask reaches cudareduce through its operators.
tests/test_dask_axis_gpu.py runs the same graphs on CuPy chunks.
"""
from __future__ import annotations

import numpy as np
import pytest
from numpy.exceptions import AxisError

import cudareduce
from support.axis_cases import normalized_axes
from test_dask_offline import CHUNKINGS, data, numpy_answer, ours, same

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

OPS = tuple(op for op in cd.__all__ if op != "reduce_array")
INDEX_OPS = ("argmin", "argmax", "nanargmin", "nanargmax")
AXES = [0, 1, -1, -2, (0, 1), (1,), (-1, 0), None]
SPLITS = [None, 2, 3, {0: 2, 1: 3}]


def numpy_operator(op: str, calls: list):
    """cudareduce.<op> of a NumPy array, by NumPy: into `out` where one
    is given (a whole-array reduction's out: one element of any shape)."""
    def reduction(a, method="fast", *, threads=None, dtype=None,
                  stream=None, axis=None, keepdims=False, out=None):
        calls.append((op, method, threads))
        a = np.asarray(a)
        kwargs = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if out is None:
            return getattr(np, op)(a, **kwargs)
        whole = len(normalized_axes(axis, a.ndim)) == a.ndim
        if whole:
            out[...] = getattr(np, op)(a, **kwargs)
            return out
        return getattr(np, op)(a, out=out, **kwargs)
    reduction.__name__ = op
    return reduction


@pytest.fixture(autouse=True)
def numpy_operators(monkeypatch):
    """cudareduce's operators replaced by NumPy's; the calls they get."""
    calls = []
    for op in OPS:
        monkeypatch.setattr(cudareduce, op, numpy_operator(op, calls))
    return calls


def axis_for(op: str, axis):
    """An index operator's axis: a tuple's first (every axis: None)."""
    if op in INDEX_OPS and isinstance(axis, tuple):
        return None if len(axis) == 2 else axis[0]
    return axis


def assert_like_dasks(op, x, kwargs, got, source, want_kwargs=None):
    """`got` (cudareduce.dask's lazy result) has the shape, dtype and
    chunks of Dask's own reduction, and computes to NumPy's answer on
    `source` (the host values; with `want_kwargs`, NumPy's arguments)."""
    own = getattr(da, op)(x, **kwargs)
    assert isinstance(got, da.Array), (op, kwargs, type(got))
    if want_kwargs is None:
        want_kwargs = {k: v for k, v in kwargs.items() if k != "split_every"}
    want = numpy_answer(op, source, **want_kwargs)
    assert got.shape == np.shape(want) == own.shape, (
        op, kwargs, got.shape, own.shape)
    assert got.dtype == np.asarray(want).dtype, (op, kwargs, got.dtype)
    assert got.chunks == own.chunks, (op, kwargs, got.chunks, own.chunks)
    value = ours(op, x, **kwargs)
    assert agrees(op, value, want), (op, kwargs, value, want)


def agrees(op: str, got, want) -> bool:
    """test_dask_offline's same(); a mean within 4 eps of the dtype (its
    divide may round either way: NumPy's own along axes divides the sum
    in the dtype, Dask's in another order)."""
    if op not in ("mean", "nanmean") or np.asarray(want).dtype.kind not in \
            "fc" or np.asarray(got).dtype != np.asarray(want).dtype:
        return same(got, want)
    eps = np.finfo(np.asarray(want).dtype).eps
    return np.shape(got) == np.shape(want) and bool(np.allclose(
        got, want, rtol=4 * eps, atol=0, equal_nan=True))


@pytest.mark.parametrize("axis", AXES, ids=repr)
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
def test_every_operator_along_axes_is_numpys(rng, chunks, axis):
    for k, dtype in enumerate((np.float64, np.int32, np.bool_,
                               np.complex64)):
        host = data(rng, dtype)
        units = data(rng, dtype, units=True)
        for j, op in enumerate(OPS):
            source = units if op.endswith("prod") else host
            x = da.from_array(source, chunks=chunks)
            kwargs = {"axis": axis_for(op, axis),
                      "keepdims": (j + k) % 3 == 0,
                      "split_every": SPLITS[(j + k) % len(SPLITS)]}
            got = getattr(cd, op)(x, **kwargs)
            assert_like_dasks(op, x, kwargs, got, source)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (2, 0), (1, 2),
                                  (0, 1, 2)], ids=repr)
def test_three_dimensions(rng, axis):
    shape, chunks = (6, 7, 8), (2, 3, 5)
    host = rng.integers(-5, 6, shape).astype(np.float32)
    units = rng.choice([1.0, -1.0, 0.0], shape).astype(np.float32)
    host[1, 2, 3] = units[1, 2, 3] = np.nan
    for j, op in enumerate(OPS):
        if op in INDEX_OPS and isinstance(axis, tuple):
            continue
        source = units if op.endswith("prod") else host
        x = da.from_array(source, chunks=chunks)
        kwargs = {"axis": axis, "keepdims": j % 2 == 1,
                  "split_every": SPLITS[j % len(SPLITS)]}
        assert_like_dasks(op, x, kwargs, getattr(cd, op)(x, **kwargs),
                          source)


def test_index_operators_take_the_first_tie_across_chunks():
    """Each row's minimum in several chunks (and each column's): the
    lowest index wins, whatever the order of the combines; a NaN wins
    argmin and is skipped by nanargmin."""
    host = np.ones((6, 9))
    host[0, [1, 4, 7]] = 0          # row 0: chunks 0, 1 and 2
    host[1, [8, 5]] = 0             # row 1: chunks 2 and 1
    host[2, 6] = 0                  # row 2: chunk 2 only
    host[[4, 2], 0] = -1            # column 0: rows 2 and 4
    host[3, 7] = np.nan             # row 3: a NaN in chunk 2
    host[5, [2, 3]] = np.nan        # row 5: NaN at 2 and 3
    x = da.from_array(host, chunks=(2, 3))
    for op in INDEX_OPS:
        for axis in (1, 0, -1):
            for split_every in (None, 2):
                got = ours(op, x, axis=axis, split_every=split_every)
                want = numpy_answer(op, host, axis=axis)
                assert same(got, want), (op, axis, split_every, got, want)


def test_a_slice_all_nan_in_one_chunk_only():
    """Row 1 is NaN in its first chunk, a number later: nanargmin and
    nanmin find the number (a chunk's own all-NaN answer is not the
    row's).  Row 2 is all NaN: nanargmin raises (Dask's and NumPy's
    ValueError), nanmin and nanmean give NaN, nansum 0."""
    host = np.arange(24, dtype=np.float64).reshape(4, 6)
    host[1, :4] = np.nan
    host[2, :] = np.nan
    x = da.from_array(host, chunks=(2, 4))
    for op in ("nanmin", "nanmax", "nanmean", "nansum", "nanprod"):
        got = ours(op, x, axis=1)
        assert same(got, numpy_answer(op, host, axis=1)), (op, got)
    for op in ("nanargmin", "nanargmax"):
        with pytest.raises(ValueError, match="All.NaN slice encountered"):
            ours(op, x, axis=1)
        some = np.delete(host, 2, axis=0)
        got = ours(op, da.from_array(some, chunks=(2, 4)), axis=1)
        assert same(got, numpy_answer(op, some, axis=1)), (op, got)
        # Along columns, no column is all NaN.
        assert same(ours(op, x, axis=0), numpy_answer(op, host, axis=0))


@pytest.mark.parametrize("op", OPS)
def test_axis_errors_are_dasks(op):
    x = da.from_array(np.arange(24.0).reshape(4, 6), chunks=(2, 4))
    for axis in (2, -3, (0, 2)):
        if op in INDEX_OPS and isinstance(axis, tuple):
            continue
        with pytest.raises(AxisError):
            getattr(da, op)(x, axis=axis)
        with pytest.raises(AxisError):
            getattr(cd, op)(x, axis=axis)
    for axis in (1.0, (0.0,)):
        with pytest.raises(TypeError):
            getattr(cd, op)(x, axis=axis)
    if op in INDEX_OPS:
        for axis in ((0,), (0, 1), ()):
            with pytest.raises(TypeError):
                getattr(da, op)(x, axis=axis)
            with pytest.raises(TypeError):
                getattr(cd, op)(x, axis=axis)


@pytest.mark.parametrize("op", [op for op in OPS if op not in INDEX_OPS])
def test_a_repeated_axis_is_numpys_value_error(op):
    # Dask's own builds the graph and its chunks raise NumPy's error when
    # computed; here it may come when the graph is built, too.
    x = da.from_array(np.arange(24.0).reshape(4, 6), chunks=(2, 4))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        ours(op, x, axis=(0, 0))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        ours(op, x, axis=(1, -1), keepdims=True)


def check_dtype_argument(rng, shape, to_dask) -> None:
    """sum, prod, mean and their NaN forms of int8 data along each axis
    with dtype= (wrapping int8 sums, float32, complex128): NumPy's.
    `to_dask` makes the Dask array of a host array."""
    for op in ("sum", "prod", "mean", "nansum", "nanprod", "nanmean"):
        source = data(rng, np.int8, shape, units=op.endswith("prod"))
        x = to_dask(source)
        for dtype in (np.int8, np.float32, np.complex128):
            for axis in (0, 1):
                got = ours(op, x, axis=axis, dtype=dtype)
                got = got.get() if hasattr(got, "get") else got
                want = numpy_answer(op, source, axis=axis, dtype=dtype)
                assert agrees(op, got, want), (op, dtype, axis, got, want)


def test_dtype_argument_along_an_axis(rng):
    check_dtype_argument(rng, (37, 23),
                         lambda a: da.from_array(a, chunks=(10, 7)))
    with pytest.raises(TypeError):
        cd.max(da.from_array(data(rng, np.int8)), axis=0, dtype=np.int8)


def test_every_call_has_the_method_and_threads(numpy_operators):
    x = da.from_array(np.arange(100.0).reshape(10, 10), chunks=3)
    for op in ("sum", "argmax", "mean", "nanmin"):
        numpy_operators.clear()
        getattr(cd, op)(x, "sequential", threads=128, axis=1).compute(
            scheduler="threads")
        assert numpy_operators and {c[1:] for c in numpy_operators} == {
            ("sequential", 128)}, (op, numpy_operators)


def test_axis_none_is_the_whole_array_as_before():
    """axis=None (and a tuple of every axis) is the whole-array
    reduction: a 0-d Dask array, or with keepdims one of shape (1, 1)."""
    host = np.arange(35.0).reshape(5, 7)
    x = da.from_array(host, chunks=(2, 3))
    for op in OPS:
        for axis in (None,) if op in INDEX_OPS else (None, (0, 1), (1, 0)):
            got = getattr(cd, op)(x, axis=axis)
            value = ours(op, x, axis=axis)
            assert got.shape == () and same(value, numpy_answer(op, host))
            # A NumPy scalar, as Dask's own (and cudareduce.dask's before).
            assert isinstance(value, np.generic), (op, type(value))
            kept = getattr(cd, op)(x, axis=axis, keepdims=True)
            assert kept.shape == (1, 1), (op, kept.shape)
            assert same(ours(op, x, axis=axis, keepdims=True),
                        numpy_answer(op, host, axis=axis, keepdims=True))
