"""cudareduce.dask without a GPU: the graph (chunk partials, Dask's tree of
combines, the last step) over NumPy chunks, with the one call of
cudareduce (``reduce_array``) replaced by NumPy's own reduction into
``out``.  What is checked is the CPU half: every operator's partials and
combines give NumPy's answer on the whole array, for every chunking
(uneven, empty chunks, one chunk) and ``split_every``, with NaNs in some
chunks, argmin's global C-order indices and ties across chunks.  The GPU
half (tests/test_dask_gpu.py) runs the same graphs on CuPy chunks."""
from __future__ import annotations

import functools
import warnings

import ml_dtypes
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

OPS = tuple(op for op in cd.__all__ if op != "reduce_array")
CHUNKINGS = {
    "one chunk": (37, 23),
    "uneven": ((10, 20, 7), (5, 13, 5)),
    "empty chunks": ((0, 30, 0, 7), (23,)),
    "empty columns": (5, (3, 0, 20)),
}


def numpy_into(op, a, out, method, threads, dtype=None, device=False):
    """NumPy's `op` of `a` written into `out`, as reduce_array does: for
    nanargmin and nanargmax of an all-NaN array, NumPy's ValueError as
    into a NumPy `out`, or with `device` -1, as into a device one."""
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if device and op in ("nanargmin", "nanargmax") and np.isnan(a).all():
        out[...] = -1
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out[...] = getattr(np, op)(a, **kwargs)
    return out


@pytest.fixture(autouse=True)
def numpy_reductions(monkeypatch):
    calls = []

    def reduce_array(op, a, out, method, threads, dtype=None):
        calls.append((op, method, threads))
        return numpy_into(op, a, out, method, threads, dtype)
    monkeypatch.setattr(cd, "reduce_array", reduce_array)
    return calls


def same(got, want) -> bool:
    """Equal values of the same dtype, NaN (in either part) as NaN."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind in "fc":
        return bool(np.all((got == want) | (np.isnan(got) & np.isnan(want))))
    return bool(np.all(got == want))


def numpy_answer(op, host, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, op)(host, **kwargs)


def ours(op, x, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(cd, op)(x, **kwargs).compute(scheduler="threads")


def data(rng, dtype, shape=(37, 23), units=False):
    """Small integers from -5 to 5 (ties everywhere; with `units`, 0, 1,
    -1, and for complex 1j and -1j, whose products do not overflow), NaNs
    in two chunks of a float or complex array, one in the imaginary
    part."""
    complex_dtype = np.dtype(dtype).kind == "c"
    if units:
        host = rng.choice([0, 1, -1, 1j, -1j] if complex_dtype
                          else [0, 1, -1], shape)
    else:
        host = rng.integers(-5, 6, shape)
        if complex_dtype:
            host = host + 1j * rng.integers(-5, 6, shape)
    host = host.astype(dtype)
    if host.dtype.kind in "fc":
        host[shape[0] // 12, 4] = np.nan
        host[shape[0] * 2 // 3, 1] = complex(1, np.nan) if complex_dtype \
            else np.nan
    return host


@pytest.mark.parametrize("split_every", [None, 2, 3])
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_,
                                   np.complex64], ids=str)
def test_every_operator_is_numpys(rng, dtype, chunks, split_every):
    host = data(rng, dtype)
    # Products of -1, 0 and 1 (a product of more would overflow, in an
    # order of its own).
    units = data(rng, dtype, units=True)
    x, x_units = (da.from_array(a, chunks=chunks) for a in (host, units))
    for op in OPS:
        product = op.endswith("prod")
        got = ours(op, x_units if product else x, split_every=split_every)
        want = numpy_answer(op, units if product else host)
        assert same(got, want), (op, got, want)


def test_dtype_argument(rng):
    host = data(rng, np.int8)
    x = da.from_array(host, chunks=(10, 7))
    for op in ("sum", "prod", "mean", "nansum"):
        for dtype in (np.int8, np.float32, np.complex128):
            assert same(ours(op, x, dtype=dtype),
                        numpy_answer(op, host, dtype=dtype)), (op, dtype)
    with pytest.raises(TypeError, match="takes no dtype"):
        cd.min(x, dtype=np.int8)


def test_argmin_takes_the_global_c_order_index_of_ties_across_chunks():
    """Block (0, 1) holds the tie of lowest C-order index, though block
    (1, 0) comes... after it and block (0, 0) before it: the combine
    compares global indices, not the order of the partials."""
    host = np.ones((6, 6))
    host[5, 0] = 0          # block (1, 0): index 30
    host[0, 4] = 0          # block (0, 1): index 4
    host[2, 1] = 0          # block (0, 0): index 13
    x = da.from_array(host, chunks=(3, 3))
    for split_every in (None, 2):
        assert ours("argmin", x, split_every=split_every) == 4
    host[1, 5] = np.nan     # a NaN wins argmin; nanargmin skips it
    x = da.from_array(host, chunks=(3, 3))
    assert ours("argmin", x) == np.argmin(host) == 11
    assert ours("nanargmin", x) == 4


def test_all_nan_and_empty():
    nans = da.from_array(np.full(10, np.nan), chunks=3)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        ours("nanargmax", nans)
    # An all-NaN chunk beside numbers: skipped, whether its nanargmin
    # raises (a NumPy out) or gives -1 (a device out).
    some = np.full(10, np.nan)
    some[7] = 2.0
    assert ours("nanargmin", da.from_array(some, chunks=3)) == 7
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cd, "reduce_array", functools.partial(numpy_into,
                                                            device=True))
        assert ours("nanargmin", da.from_array(some, chunks=3)) == 7
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            ours("nanargmax", nans)
    assert np.isnan(ours("nanmax", nans))
    assert ours("nansum", nans) == 0
    empty = da.from_array(np.zeros((0, 4)), chunks=2)
    assert same(ours("sum", empty), np.sum(np.zeros((0, 4))))
    with pytest.raises(ValueError):
        ours("argmin", empty)
    # NumPy's two warnings, in its order: the empty slice, then the 0/0.
    with warnings.catch_warnings(record=True) as ours_caught:
        warnings.simplefilter("always")
        value = cd.mean(empty).compute(scheduler="threads")
    with warnings.catch_warnings(record=True) as numpy_caught:
        warnings.simplefilter("always")
        want = np.mean(np.zeros((0, 4)))
    assert np.isnan(value) and np.isnan(want)
    assert [str(w.message) for w in ours_caught] == [
        str(w.message) for w in numpy_caught] == [
        "Mean of empty slice",
        "invalid value encountered in scalar divide"]


def test_every_call_has_the_method_and_threads(numpy_reductions):
    x = da.from_array(np.arange(100.0), chunks=30)
    ours("sum", x)
    ours("argmax", x)
    assert numpy_reductions and all(
        call[1:] == ("fast", None) for call in numpy_reductions)
    numpy_reductions.clear()
    cd.max(x, "sequential", threads=128).compute(scheduler="threads")
    assert {call[1:] for call in numpy_reductions} == {("sequential", 128)}


def test_the_graph_is_lazy_and_a_dask_array():
    x = da.from_array(np.arange(10), chunks=4)
    result = cd.sum(x)
    assert isinstance(result, da.Array) and result.shape == ()
    assert result.dtype == np.int64
    assert cd.sum.__doc__ and "split_every" in cd.sum.__doc__


def first_level_tasks(result) -> int:
    """The tasks of the first level (those that reduce blocks)."""
    graph = dict(result.__dask_graph__())
    return sum(1 for key in graph if isinstance(key, tuple)
               and str(key[0]).startswith("cudareduce-partials-"))


@pytest.mark.parametrize("split_every, tasks", [
    (None, 4), (2, 50), (3, 34), ({0: 5, 1: 2}, 10)])
def test_a_task_reduces_split_every_blocks(numpy_reductions, split_every,
                                           tasks):
    # 100 blocks in a 10 x 10 grid: 32 a task by default (4 tasks), else
    # split_every (a dict: its product over the axes).
    host = np.arange(400.0).reshape(20, 20)
    x = da.from_array(host, chunks=2)
    result = cd.sum(x, split_every=split_every)
    assert first_level_tasks(result) == tasks
    assert result.compute(scheduler="threads") == host.sum()
    # A call a block, a call a task's partials (no call for a one-block
    # task), and the tree's calls above.
    block_calls = [c for c in numpy_reductions if c[0] == "sum"]
    assert len(block_calls) > 100


def test_split_every_below_two_is_refused():
    x = da.from_array(np.arange(10.0), chunks=2)
    with pytest.raises(ValueError, match="split_every must be at least 2"):
        cd.sum(x, split_every=1)


@pytest.mark.parametrize("op", OPS)
def test_one_task_when_every_block_fits_in_it(rng, op):
    # 6 blocks, split_every None (32): one task gives the value, no tree.
    host = data(rng, np.float64, (12, 9))
    x = da.from_array(host, chunks=(4, 5))
    result = getattr(cd, op)(x)
    graph = dict(result.__dask_graph__())
    assert len(graph) - x.npartitions == 1 == first_level_tasks(result)
    assert result.shape == () and result.dtype == numpy_answer(
        op, host).dtype
    assert same(ours(op, x), numpy_answer(op, host))


@pytest.mark.parametrize("op", ["argmax", "nanargmin", "any", "all"])
def test_building_a_graph_of_complex_chunks_gives_no_warning(op):
    # The result's meta is made without casting complex to int or bool.
    x = da.from_array(np.arange(6) + 1j, chunks=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(cd, op)(x)


def float16_sums(rng, shape=(37, 23)):
    """Integers from 0 to 59 as float16, a NaN among them: sums of about
    25,000, exact in float32, that float16 rounds to a multiple of 16."""
    host = rng.integers(0, 60, shape).astype(np.float16)
    host[3, 4] = np.nan
    return host


def test_a_mean_rounds_its_sum_once_to_numpys_dtype_of_it():
    """numpy.nanmean of float16 divides a float16 sum, numpy.mean a
    float32 one: the partials sum in float32, the kernels' accumulator,
    and the total is rounded once (on this seed a float32 total gives
    30.58 for NumPy's 30.56)."""
    host = float16_sums(np.random.default_rng(0))
    finite = np.nan_to_num(host)
    x, x_finite = (da.from_array(a, chunks=CHUNKINGS["uneven"])
                   for a in (host, finite))
    assert same(ours("nanmean", x), numpy_answer("nanmean", host))
    assert same(ours("mean", x_finite), numpy_answer("mean", finite))


def test_a_bfloat16_mean_sums_in_float32():
    """As cudareduce.mean does (NumPy's own mean of ml_dtypes' bfloat16
    sums in bfloat16): the float32 sum over the count, as bfloat16."""
    host = np.random.default_rng(1).integers(0, 60, (37, 23)).astype(
        ml_dtypes.bfloat16)
    want = ml_dtypes.bfloat16(
        np.float64(host.astype(np.float64).sum()) / host.size)
    got = ours("mean", da.from_array(host, chunks=CHUNKINGS["uneven"]))
    assert same(got, want), (got, want)


def test_bfloat16_nan_operators_stay_nan_operators(numpy_reductions):
    """bfloat16 (NumPy's kind 'V') holds NaN: its NaN forms reach
    cudareduce as themselves, not as the plain operators that integers'
    are, and an all-NaN nanargmax raises NumPy's error.  (NumPy's own
    nansum of ml_dtypes' bfloat16 does not skip NaN, so the stand-in
    reduction here cannot tell the values apart.)"""
    host = np.arange(35, dtype=np.float32).reshape(5, 7).astype(
        ml_dtypes.bfloat16)
    host[1, 2] = np.nan
    ints = np.arange(35, dtype=np.int16).reshape(5, 7)
    for values, skips in ((host, True), (ints, False)):
        numpy_reductions.clear()
        ours("nansum", da.from_array(values, chunks=(2, 3)))
        # The chunks' nansum (their partials then sum as sums do).
        ops = {call[0] for call in numpy_reductions}
        assert ("nansum" in ops) == skips, (values.dtype, ops)
    nans = da.from_array(np.full(6, np.nan, ml_dtypes.bfloat16), chunks=4)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        ours("nanargmax", nans)
