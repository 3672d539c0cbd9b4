"""Exact sums (issue 44, ``exact=True``) on the GPU.

Every result is held bit for bit to the exact sum of the elements rounded
once (``cudareduce.bench.exact_reference``: Python integers and fractions, and
``math.fsum`` for float64), never to a tolerance:

- float64 equals ``math.fsum``; float32, float16 and bfloat16 the
  nearest value to the exact sum (ties to even), at sizes that hit the
  kernel's edges (0, 1, its 16-byte vectors and their leftovers, a warp,
  a block, a round of the window, several blocks, the host ring's
  chunks), on NumPy and CuPy inputs, misaligned and strided views too;
- adversarial data: [1e308, 1, -1e308], values over 1e-300 .. 1e300,
  subnormals, sums exactly zero (+0.0), NaN and infinities as NumPy,
  overflow to infinity with NumPy's warning, and an overflow on the way
  that the exact sum does not make;
- the same bits for every order of the elements (permutations), layout,
  input kind (NumPy through the host ring, CuPy, CuPy under ``with
  stream:``, PyTorch on its current stream), and threads= given;
- dtype= (elements cast first), nansum (NaNs skipped), mean (the exact
  sum over n, rounded once), nanmean (over the count of the numbers; none:
  NaN with NumPy's warning), out= (NumPy, CuPy, a CUDA graph).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cudareduce
from cudareduce.bench.exact_reference import (array_sum, infinity_bits,
                                              nan_bits, round_exact)

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

pytestmark = pytest.mark.gpu

FORMAT = {np.dtype(np.float64): "float64", np.dtype(np.float32): "float32",
          np.dtype(np.float16): "float16", BF16: "bfloat16"}
UINT = {"float64": np.uint64, "float32": np.uint32, "float16": np.uint16,
        "bfloat16": np.uint16}
# One element; the 16-byte vectors (2, 4 or 8 elements) and a leftover;
# a warp; a block of 256 threads' vectors; a round of the float32
# window (256 additions a lane) over a block; many blocks; the host
# ring's chunks (2^23 + 5 float32 is 32 MiB).
SIZES = (1, 2, 3, 5, 9, 31, 33, 255, 257, 1023, 1025, 4096 + 3,
         256 * 256 * 4 + 7, 2 ** 20 + 3)
BIG = 2 ** 23 + 5


def bits_of(value, fmt: str) -> int:
    """The bits of a scalar or one-element array of format `fmt`."""
    return int(np.asarray(value).reshape(()).view(UINT[fmt]))


def want(x: np.ndarray, fmt: str, divide: bool = False) -> int:
    """The exact sum (or mean) of the finite array x rounded once to
    `fmt`."""
    total = array_sum(x)
    return round_exact(total / x.size if divide else total, fmt)[0]


def random_data(rng, n: int, dtype) -> np.ndarray:
    """Normal values of mixed magnitude and sign, in `dtype` (for float16
    and bfloat16 small enough that a million of them sum in range)."""
    top = 9 if np.dtype(dtype).itemsize > 2 else 1
    x = rng.standard_normal(n) * np.exp2(rng.integers(-8, top, n))
    return x.astype(np.float32).astype(dtype) if dtype == BF16 \
        else x.astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16],
                         ids=lambda d: np.dtype(d).name)
def test_random_data_is_exact(rng, cupy, n, dtype):
    x = random_data(rng, n, dtype)
    fmt = FORMAT[np.dtype(dtype)]
    expected = want(x, fmt)
    host = cudareduce.sum(x, exact=True)
    assert host.dtype == x.dtype
    assert bits_of(host, fmt) == expected, (n, host)
    if dtype != BF16:
        device = cudareduce.sum(cupy.asarray(x), exact=True)
        assert bits_of(device, fmt) == expected
    if dtype == np.float64:
        assert float(host) == math.fsum(x)


def test_sizes_over_the_host_ring(rng, cupy):
    """A host array of several ring chunks, the same one on the device,
    and the device one reversed: one result, the exact one."""
    x = random_data(rng, BIG, np.float32)
    expected = want(x, "float32")
    device = cupy.asarray(x)
    for result in (cudareduce.sum(x, exact=True),
                   cudareduce.sum(device, exact=True),
                   cudareduce.sum(device[::-1], exact=True)):
        assert bits_of(result, "float32") == expected


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_order_does_not_matter(rng, cupy, dtype):
    """Permutations, a misaligned start, strided and transposed views:
    the bits of the exact sum of the same elements."""
    x = random_data(rng, 3 * 5 * 7 * 11 * 13, dtype)
    fmt = FORMAT[np.dtype(dtype)]
    expected = want(x, fmt)
    results = [cudareduce.sum(rng.permutation(x), exact=True)
               for _ in range(3)]
    device = cupy.asarray(x)
    results.append(cudareduce.sum(device, exact=True, threads=1024))
    cube = device.reshape(15, 77, 13)
    results += [cudareduce.sum(cube.transpose(2, 0, 1), exact=True),
                cudareduce.sum(cupy.asfortranarray(cube), exact=True),
                cudareduce.sum(cube[:, ::-1, :], exact=True)]
    padded = cupy.concatenate([cupy.zeros(1, dtype), device])
    results.append(cudareduce.sum(padded[1:], exact=True))
    assert all(bits_of(r, fmt) == expected for r in results)
    # A strided view is its elements: the same sum as their copy.
    every_third = device[1::3]
    assert bits_of(cudareduce.sum(every_third, exact=True), fmt) \
        == want(x[1::3], fmt)


def test_cupy_with_stream(rng, cupy):
    """CuPy's ``with stream:``, no stream= given: the call is queued on
    that stream, behind the copy made there, into a device out."""
    x = random_data(rng, 2 ** 20 + 3, np.float32)
    with cupy.cuda.Stream(non_blocking=True) as stream:
        device = cupy.asarray(x)
        out = cupy.zeros((), cupy.float32)
        cudareduce.sum(device, out=out, exact=True)
        stream.synchronize()
    assert bits_of(out.get(), "float32") == want(x, "float32")


def test_torch_on_its_current_stream(rng, torch):
    x = random_data(rng, 2 ** 20 + 3, np.float64)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensor = torch.from_numpy(x).cuda()
        result = cudareduce.sum(tensor, exact=True)
    assert float(result) == math.fsum(x)


@pytest.mark.parametrize("values, expected", [
    ([1e308, 1.0, -1e308], 1.0),
    ([1e308, 1e308, 1e308, -1e308, -1e308], 1e308),
    ([1.0, 1e100, 1.0, -1e100], 2.0),
    ([2.0 ** -1074, 2.0 ** -1074, -2.0 ** -1074], 2.0 ** -1074),
    ([0.1] * 10, math.fsum([0.1] * 10)),
])
def test_float64_cancellation(cupy, values, expected):
    for order in (values, values[::-1]):
        for x in (np.array(order), cupy.asarray(order)):
            assert float(cudareduce.sum(x, exact=True)) == expected


def test_wide_dynamic_range(rng, cupy):
    """1e-300 .. 1e300 with random signs, and subnormals beside large
    values: nearly every element re-bases its window."""
    n = 100_003
    x = np.exp(rng.uniform(-690, 690, n)) * rng.choice([-1.0, 1.0], n)
    x[::97] = rng.standard_normal(x[::97].size) * 2.0 ** -1060
    assert float(cudareduce.sum(cupy.asarray(x), exact=True)) \
        == math.fsum(x)
    y = (rng.standard_normal(n) * np.exp2(rng.integers(-149, 128, n))) \
        .astype(np.float32)
    y = y[np.isfinite(y)]
    assert bits_of(cudareduce.sum(cupy.asarray(y), exact=True),
                   "float32") == want(y, "float32")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_zeros_and_cancelled_sums_are_positive_zero(cupy, dtype):
    for values in ([-0.0], [-0.0] * 1000, [1.0, -1.0] * 500,
                   [3.0, -0.0, -3.0]):
        x = np.array(values, dtype)
        result = cudareduce.sum(cupy.asarray(x), exact=True)
        assert float(result) == 0.0 and not np.signbit(result)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_and_infinities_as_numpy(cupy, dtype):
    fmt = FORMAT[np.dtype(dtype)]
    cases = [([1.0, np.nan, 2.0], nan_bits(fmt)),
             ([1.0, np.inf, -1e30], infinity_bits(fmt)),
             ([np.inf, 5.0, -np.inf], nan_bits(fmt)),
             ([-np.inf] * 3 + [1e30], infinity_bits(fmt, True))]
    for values, expected in cases:
        x = np.array(values * 1000, dtype)
        with np.errstate(invalid="ignore"):
            got = cudareduce.sum(cupy.asarray(x), exact=True)
            assert np.isnan(got) == np.isnan(np.sum(x))
        if not np.isnan(got):
            assert bits_of(got, fmt) == expected


def test_overflow_warns_as_numpy(cupy):
    x = np.full(1000, np.finfo(np.float32).max / 100, np.float32)
    with pytest.warns(RuntimeWarning, match="overflow encountered"):
        assert cudareduce.sum(x, exact=True) == np.inf
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        cudareduce.sum(cupy.asarray(x), exact=True)
    # Beyond the range on the way only (NumPy's pairwise order): finite.
    y = np.array([1e308] * 3 + [-1e308] * 3 + [1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(cudareduce.sum(cupy.asarray(y), exact=True)) == 1.0


def test_dtype_casts_each_element_first(rng, cupy):
    x = rng.standard_normal(100_003)
    as_float32 = x.astype(np.float32)
    got = cudareduce.sum(cupy.asarray(x), dtype=np.float32, exact=True)
    assert got.dtype == np.float32
    assert bits_of(got, "float32") == want(as_float32, "float32")
    wide = cudareduce.sum(cupy.asarray(as_float32), dtype=np.float64,
                          exact=True)
    assert float(wide) == math.fsum(as_float32.astype(np.float64))
    ints = rng.integers(-2 ** 60, 2 ** 60, 10_001)
    assert float(cudareduce.sum(ints, dtype=np.float64, exact=True)) \
        == math.fsum(ints.astype(np.float64))


def test_integer_sums_are_unchanged(rng, cupy):
    ints = rng.integers(-2 ** 62, 2 ** 62, 10_001)
    assert cudareduce.sum(cupy.asarray(ints), exact=True) == np.sum(ints)


def test_nansum_skips_nan(rng, cupy):
    x = random_data(rng, 65_537, np.float64)
    x[rng.integers(0, x.size, 300)] = np.nan
    finite = x[~np.isnan(x)]
    assert float(cudareduce.nansum(cupy.asarray(x), exact=True)) \
        == math.fsum(finite)
    all_nan = np.full(100, np.nan, np.float32)
    result = cudareduce.nansum(all_nan, exact=True)
    assert result == 0 and not np.signbit(result)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_mean_is_rounded_once(rng, cupy, dtype):
    fmt = FORMAT[np.dtype(dtype)]
    for n in (1, 3, 1000, 65_537):
        x = random_data(rng, n, dtype)
        got = cudareduce.mean(cupy.asarray(x), exact=True)
        assert got.dtype == np.dtype(dtype)
        assert bits_of(got, fmt) == want(x, fmt, divide=True), n
    # A tie of the quotient (3 / 2 of the least float64 subnormal) goes
    # to even, and 5 / 2 too.
    tiny = 2.0 ** -1074
    assert float(cudareduce.mean(np.array([3 * tiny, 0.0]), exact=True)) \
        == 2 * tiny
    assert float(cudareduce.mean(np.array([5 * tiny, 0.0]), exact=True)) \
        == 2 * tiny


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nanmean_of_the_numbers(rng, cupy, dtype):
    fmt = FORMAT[np.dtype(dtype)]
    x = random_data(rng, 65_537, dtype)
    x[rng.integers(0, x.size, 1000)] = np.nan
    finite = x[~np.isnan(x)]
    for data in (x, cupy.asarray(x)):
        got = cudareduce.nanmean(data, exact=True)
        assert got.dtype == np.dtype(dtype)
        assert bits_of(got, fmt) == want(finite, fmt, divide=True)
    out = cupy.zeros((), dtype)
    cudareduce.nanmean(cupy.asarray(x), exact=True, out=out)
    assert bits_of(out.get(), fmt) == want(finite, fmt, divide=True)
    all_nan = np.full(33, np.nan, dtype)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(cudareduce.nanmean(all_nan, exact=True))


def test_empty_is_numpys(cupy):
    empty = cupy.zeros(0, cupy.float32)
    assert cudareduce.sum(empty, exact=True) == 0
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(cudareduce.mean(np.zeros(0), exact=True))


def captured_sum(torch, tensor, out):
    """A CUDA graph of ``cudareduce.sum(tensor, out=out, exact=True)``,
    warmed up on a side stream first, as PyTorch asks."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        cudareduce.sum(tensor, out=out, exact=True)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cudareduce.sum(tensor, out=out, exact=True)
    return graph


def test_out_and_cuda_graphs(rng, cupy, torch):
    x = random_data(rng, 100_003, np.float32)
    expected = want(x, "float32")
    out = cupy.zeros((), cupy.float32)
    assert cudareduce.sum(cupy.asarray(x), out=out, exact=True) is out
    assert bits_of(out.get(), "float32") == expected
    host_out = np.zeros(1, np.float32)
    cudareduce.sum(x, out=host_out, exact=True)
    assert bits_of(host_out, "float32") == expected
    tensor = torch.from_numpy(x).cuda()
    graph_out = torch.zeros((), dtype=torch.float32, device="cuda")
    graph = captured_sum(torch, tensor, graph_out)
    graph_out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert bits_of(graph_out.cpu().numpy(), "float32") == expected


# The state a call adds into is kept between calls, and each call's
# rounding kernel leaves it zero for the next (exact_sum.cu,
# memory/exact_states.cuh): no call may see any of another's sum, NaNs,
# infinities or count, whether it follows on the same stream unwaited,
# runs on another stream at once, follows a call that failed half way,
# or is a CUDA graph's replay.

# Sizes one after another: many blocks, then a few elements (what a
# state left dirty would show most), one vector, one block.
BACK_TO_BACK = (2 ** 20 + 3, 1, 2, 2 ** 20 + 3, 5, 4096 + 3, 1, 257)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_back_to_back_on_one_stream(rng, cupy, dtype):
    """Calls queued one after another into device outs, none waited for,
    each of its own data: each exact."""
    fmt = FORMAT[np.dtype(dtype)]
    xs = [random_data(rng, n, dtype) for n in BACK_TO_BACK * 3]
    with cupy.cuda.Stream(non_blocking=True) as stream:
        devices = [cupy.asarray(x) for x in xs]
        outs = [cupy.zeros((), dtype) for _ in xs]
        for device, out in zip(devices, outs):
            cudareduce.sum(device, out=out, exact=True)
        stream.synchronize()
    for x, out in zip(xs, outs):
        assert bits_of(out.get(), fmt) == want(x, fmt), x.size


def test_each_call_its_own_specials_and_count(rng, cupy):
    """A NaN, an infinity, nanmean's skipped NaNs, then a call without
    them, queued back to back: each result its own call's."""
    finite = random_data(rng, 4099, np.float64)
    with_nan = finite.copy()
    with_nan[::7] = np.nan
    with_inf = finite.copy()
    with_inf[5] = np.inf
    numbers = with_nan[~np.isnan(with_nan)]

    def mean(x):
        return np.uint64(want(x, "float64", divide=True)).view(np.float64)

    calls = [(cudareduce.sum, with_nan, np.nan),
             (cudareduce.sum, finite, math.fsum(finite)),
             (cudareduce.sum, with_inf, np.inf),
             (cudareduce.mean, finite, mean(finite)),
             (cudareduce.nanmean, with_nan, mean(numbers)),
             (cudareduce.nanmean, finite, mean(finite)),
             (cudareduce.nansum, with_nan, math.fsum(numbers)),
             (cudareduce.sum, finite[:2], math.fsum(finite[:2]))]
    with cupy.cuda.Stream(non_blocking=True) as stream:
        outs = [cupy.zeros((), cupy.float64) for _ in calls]
        for (function, x, _), out in zip(calls, outs):
            function(cupy.asarray(x), out=out, exact=True)
        stream.synchronize()
    for (function, _, expected), out in zip(calls, outs):
        assert np.array_equal(out.get(), expected, equal_nan=True), \
            (function.__name__, out.get(), expected)


def test_two_streams_at_once(rng, cupy):
    """Calls alternating between two streams, none waited for, each of its
    own data: each exact."""
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
    calls = []
    for k, n in enumerate(BACK_TO_BACK * 2):
        x = random_data(rng, n, np.float64)
        with streams[k % 2]:
            out = cupy.zeros((), cupy.float64)
            cudareduce.sum(cupy.asarray(x), out=out, exact=True)
        calls.append((x, out))
    for stream in streams:
        stream.synchronize()
    for x, out in calls:
        assert float(out.get()) == math.fsum(x), x.size


def test_threads_on_streams_of_their_own(rng, cupy):
    """Two threads, each calling on its own stream at once (the GIL is let
    go around the CUDA calls), to the host and into device outs."""
    import concurrent.futures

    xs = [[random_data(rng, n, np.float64) for n in BACK_TO_BACK * 2]
          for _ in range(2)]

    def run(own):
        results = []
        with cupy.cuda.Stream(non_blocking=True) as stream:
            for k, x in enumerate(own):
                device = cupy.asarray(x)
                if k % 2:
                    results.append(float(cudareduce.sum(device,
                                                        exact=True)))
                else:
                    out = cupy.zeros((), cupy.float64)
                    cudareduce.sum(device, out=out, exact=True)
                    results.append(out)
            stream.synchronize()
        return [float(r.get()) if not isinstance(r, float) else r
                for r in results]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(run, xs))
    for own, results in zip(xs, got):
        assert results == [math.fsum(x) for x in own]


@pytest.mark.parametrize("chunk", [0, 1])
def test_a_call_failed_half_way_leaves_nothing(rng, cupy, chunk):
    """A host array's sum that fails after its chunks up to `chunk` were
    added (a fault injected for the test): the calls after it, of the
    host array and of a few device elements, are exact."""
    x = random_data(rng, BIG, np.float32)  # the host ring's 3 chunks
    inject = cudareduce._cudareduce._inject_host_fault
    inject(chunk)
    try:
        with pytest.raises(MemoryError, match="injected"):
            cudareduce.sum(x, exact=True)
    finally:
        inject(-1)
    assert bits_of(cudareduce.sum(x, exact=True), "float32") \
        == want(x, "float32")
    small = random_data(rng, 3, np.float32)
    assert bits_of(cudareduce.sum(cupy.asarray(small), exact=True),
                   "float32") == want(small, "float32")


def test_graph_replays_beside_direct_calls(rng, torch):
    """A captured exact sum replayed with new input each time, twice in a
    row, and direct calls on the same stream between: each exact."""
    x = random_data(rng, 100_003, np.float64)
    tensor = torch.from_numpy(x).cuda()
    graph_out = torch.zeros((), dtype=torch.float64, device="cuda")
    graph = captured_sum(torch, tensor, graph_out)
    for n in (1, 2, 4099):
        y = random_data(rng, x.size, np.float64)
        tensor.copy_(torch.from_numpy(y))
        graph.replay()
        graph.replay()
        direct = random_data(rng, n, np.float64)
        assert float(cudareduce.sum(torch.from_numpy(direct).cuda(),
                                    exact=True)) == math.fsum(direct)
        assert float(graph_out.cpu()) == math.fsum(y)
