"""Results that stay on the GPU (``out=``), graph capture, and run-to-run
determinism.

The reference of a device ``out`` is the same call without it: the same
kernels give the same accumulator, so the device's finishing step (the
cast to the reduced dtype, a mean's divide in double, the cast to the
result dtype) must give bitwise NumPy's host finish, which the other
suites check against NumPy itself.  Every method, operator and a spread of
dtypes and ``dtype=`` casts; ``out`` of any one-element shape, from CuPy,
PyTorch's CAI and DLPack; a NumPy ``out`` (with NumPy's warnings); bad
``out`` values; capture into CUDA graphs by PyTorch and by CuPy, replayed
on new data; and 1,000 calls on one input that agree bit for bit.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cudareduce
from support.dlpack_capsules import DLPackOnly

pytestmark = pytest.mark.gpu

METHODS = list(cudareduce.methods())

# (op, input dtype, dtype= or None): every finishing path of the device
# store: plain copies, float16's float32 accumulator, integer sums into
# int64/uint64, casts into narrower and other-kind dtypes, the logical or,
# and means (divide in double, then the cast).
CASES = [
    ("sum", "float32", None), ("sum", "float16", None),
    ("sum", "int8", None), ("sum", "uint16", None), ("sum", "float64", None),
    ("sum", "bool", None), ("sum", "int32", "int8"),
    ("sum", "float32", "int32"), ("sum", "int64", "float16"),
    ("sum", "uint8", "bool"), ("mean", "float32", None),
    ("mean", "float16", None), ("mean", "int16", None),
    ("mean", "int32", "int32"), ("mean", "float64", "float16"),
    ("min", "float16", None), ("min", "int8", None), ("max", "uint64", None),
    ("max", "bool", None), ("max", "float64", None),
    ("prod", "float64", None), ("prod", "int16", None),
    ("prod", "uint8", "uint8"), ("prod", "bool", None),
    ("prod", "float32", "bool"), ("any", "float32", None),
    ("any", "int64", None), ("all", "float16", None),
    ("all", "bool", None), ("nansum", "float32", None),
    ("nansum", "float16", "float64"), ("nansum", "int32", None),
    ("nanprod", "float64", None), ("nanmin", "float32", None),
    ("nanmax", "float16", None), ("nanmax", "uint32", None),
    ("nanmean", "float32", None), ("nanmean", "float16", None),
    ("nanmean", "float64", "float16"), ("nanmean", "int16", None),
]

# Operators whose data carry NaNs (one in 50 elements), so that the
# NaN-skipping finishes are the ones under test.
NAN_OPS = {"nansum", "nanprod", "nanmin", "nanmax", "nanmean", "any", "all"}


def random_data(rng, dtype: str, n: int, nans: bool = False) -> np.ndarray:
    if dtype == "bool":
        return rng.random(n) < 0.3
    kind = np.dtype(dtype).kind
    if kind == "f":
        data = rng.normal(3.0, 10.0, n).astype(dtype)
        if nans:
            data[rng.random(n) < 0.02] = np.nan
        return data
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n,
                        dtype=dtype, endpoint=True)


def reduce(op, a, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(cudareduce, op)(a, **kwargs)


def same_bits(got, want) -> bool:
    got = np.asarray(got).reshape(())
    want = np.asarray(want)
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("method, op, dtype, reduce_dtype", [
    (method, *case) for method in METHODS for case in CASES])
def test_device_out_is_the_host_result(cupy, rng, method, op, dtype,
                                       reduce_dtype):
    host = random_data(rng, dtype, 100_003, nans=op in NAN_OPS)
    x = cupy.asarray(host)
    kwargs = {"method": method}
    if reduce_dtype is not None:
        kwargs["dtype"] = reduce_dtype
    want = reduce(op, x, **kwargs)
    out = cupy.full((), 7, dtype=want.dtype)
    got = reduce(op, x, out=out, **kwargs)
    assert got is out
    assert same_bits(out.get(), want), (out.get(), want)


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (1, 1, 1)])
@pytest.mark.parametrize("n", [0, 1, 255, 257, 2 ** 20 + 3])
def test_out_shapes_and_sizes(cupy, rng, shape, n):
    host = rng.normal(size=n).astype(np.float32)
    out = cupy.zeros(shape, np.float32)
    cudareduce.sum(cupy.asarray(host), out=out)
    assert same_bits(out.get(), cudareduce.sum(cupy.asarray(host)))


def test_out_of_a_strided_view_and_a_view_out(cupy, rng):
    host = rng.normal(size=(300, 70)).astype(np.float64)
    x = cupy.asarray(host)[::-2, 3::5].T
    big = cupy.zeros(10, np.float64)
    cudareduce.sum(x, out=big[7:8])
    assert same_bits(big[7].get(), cudareduce.sum(x))
    assert not big[:7].any() and not big[8:].any()


def test_empty_input(cupy):
    empty = cupy.zeros(0, np.float32)
    out = cupy.full((), 5, np.float32)
    cudareduce.sum(empty, out=out)
    assert out.get() == 0
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        cudareduce.mean(empty, out=out)
    assert np.isnan(out.get())
    with pytest.raises(ValueError, match="zero-size array"):
        cudareduce.min(empty, out=out)


@pytest.mark.parametrize("op, want", [
    ("prod", np.float32(1)), ("nansum", np.float32(0)),
    ("nanprod", np.float32(1)), ("any", np.False_), ("all", np.True_)])
def test_empty_input_identities(cupy, op, want):
    """An empty input's out holds the operator's identity, as NumPy's."""
    assert same_bits(getattr(np, op)(np.zeros(0, np.float32)), want)
    out = cupy.full((), 5, want.dtype)
    getattr(cudareduce, op)(cupy.zeros(0, np.float32), out=out)
    assert same_bits(out.get(), want)


@pytest.mark.parametrize("op", ["nanmin", "nanmax"])
def test_all_nan_input(cupy, op):
    """NaN, as NumPy's; a device out is not read back, so no warning."""
    out = cupy.zeros((), np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(cudareduce, op)(cupy.full(1000, np.nan), out=out)
    assert np.isnan(out.get())
    with pytest.raises(ValueError, match="zero-size array"):
        getattr(cudareduce, op)(cupy.zeros(0, np.float64), out=out)


@pytest.mark.parametrize("n", [0, 1000])
def test_nanmean_of_no_number(cupy, n):
    """NaN, counted on the device (no element, or all NaN), no warning."""
    out = cupy.zeros((), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cudareduce.nanmean(cupy.full(n, np.nan, np.float32), out=out)
    assert np.isnan(out.get())


def test_host_input_device_out(cupy, rng):
    host = rng.integers(-50, 50, 12_345, dtype=np.int16)
    out = cupy.zeros((), np.float64)
    cudareduce.mean(host, out=out)
    assert same_bits(out.get(), np.mean(host))


def test_numpy_out_waits_and_warns(rng):
    host = np.full(1000, 6e4, np.float16)
    out = np.zeros((1,), np.float16)
    with pytest.warns(RuntimeWarning, match="overflow encountered in reduce"):
        got = cudareduce.sum(host, out=out)
    assert got is out and np.isinf(out[0])
    data = rng.normal(size=999).astype(np.float32)
    out = np.zeros((), np.float32)
    cudareduce.sum(data, out=out)
    assert same_bits(out, cudareduce.sum(data))


def test_torch_out_by_cai_and_by_dlpack(torch, rng):
    host = rng.normal(size=4099).astype(np.float32)
    x = torch.from_numpy(host).cuda()
    want = cudareduce.sum(x)
    for make in (lambda o: o, DLPackOnly):
        out = torch.zeros((), dtype=torch.float32, device="cuda")
        cudareduce.sum(x, out=make(out))
        assert same_bits(out.cpu().numpy(), want)


def test_out_orders_later_work_on_the_stream(cupy, rng):
    """No host wait: the next CuPy kernel on the stream reads the result."""
    host = rng.integers(0, 100, 2 ** 22, dtype=np.int64)
    x = cupy.asarray(host)
    out = cupy.zeros((), np.int64)
    total = cupy.zeros((), np.int64)
    for _ in range(5):
        cudareduce.sum(x, out=out)
        total += out
    assert int(total.get()) == 5 * int(host.sum())


class ReadOnlyCAI:
    def __init__(self, array):
        interface = dict(array.__cuda_array_interface__)
        interface["data"] = (interface["data"][0], True)
        self.__cuda_array_interface__ = interface


@pytest.mark.parametrize("bad, error, match", [
    (lambda cp: cp.zeros((), np.float64), TypeError, "result's dtype"),
    (lambda cp: cp.zeros(2, np.float32), ValueError, "exactly one element"),
    (lambda cp: cp.zeros((1, 0), np.float32), ValueError,
     "exactly one element"),
    (lambda cp: ReadOnlyCAI(cp.zeros((), np.float32)), ValueError,
     "read-only"),
    (lambda cp: [0.0], TypeError, "NumPy array or a device array"),
    (lambda cp: np.zeros((), np.float64), TypeError, "result's dtype"),
    (lambda cp: np.zeros(3, np.float32), ValueError, "exactly one element"),
    (lambda cp: np.zeros((), np.float32).view(np.float32)[()],
     TypeError, "NumPy array or a device array"),
])
def test_bad_out(cupy, bad, error, match):
    x = cupy.ones(10, np.float32)
    with pytest.raises(error, match=match):
        cudareduce.sum(x, out=bad(cupy))


def test_read_only_numpy_out():
    out = np.zeros((), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cudareduce.sum(np.ones(3, np.float32), out=out)


def test_masked_input_refuses_out():
    with pytest.raises(TypeError, match="masked"):
        cudareduce.sum(np.ma.masked_array([1.0, 2.0], mask=[0, 1]),
                       out=np.zeros((), np.float64))


@pytest.mark.parametrize("method", METHODS)
def test_cupy_graph_capture(cupy, rng, method):
    n = 2 ** 20 + 5
    x = cupy.asarray(rng.normal(size=n).astype(np.float32))
    out = cupy.zeros((), np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        cudareduce.sum(x, method=method, out=out)
        graph = stream.end_capture()
    for _ in range(3):
        fresh = rng.normal(size=n).astype(np.float32)
        x.set(fresh, stream=stream)
        graph.launch(stream)
        stream.synchronize()
        assert same_bits(out.get(), cudareduce.sum(cupy.asarray(fresh),
                                                   method=method))


def test_torch_graph_capture(torch, rng):
    n = 3 * 2 ** 18 + 1
    x = torch.zeros(n, dtype=torch.float32, device="cuda")
    mean = torch.zeros((), dtype=torch.float32, device="cuda")
    top = torch.zeros((), dtype=torch.float32, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):     # warm-up on a side stream, as torch asks
        cudareduce.mean(x, out=mean, stream=side)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        stream = torch.cuda.current_stream()
        cudareduce.mean(x, out=mean, stream=stream)
        cudareduce.max(x, out=top, stream=stream)
    for _ in range(3):
        fresh = rng.normal(size=n).astype(np.float32)
        x.copy_(torch.from_numpy(fresh))
        graph.replay()
        torch.cuda.synchronize()
        assert same_bits(mean.cpu().numpy(),
                         cudareduce.mean(torch.from_numpy(fresh).cuda()))
        assert top.item() == fresh.max()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_fast_is_deterministic(cupy, rng, dtype):
    """Fixed grid, fixed order of combination: the same bits every call."""
    x = cupy.asarray(rng.normal(size=2 ** 22 + 3).astype(dtype))
    first = cudareduce.sum(x)
    for _ in range(1000):
        assert same_bits(cudareduce.sum(x), first)
