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
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        cudareduce.sum(tensor, out=graph_out, exact=True)  # warm-up
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cudareduce.sum(tensor, out=graph_out, exact=True)
    graph_out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert bits_of(graph_out.cpu().numpy(), "float32") == expected
