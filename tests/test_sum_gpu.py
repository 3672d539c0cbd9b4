"""cudareduce.sum on the GPU against NumPy, on fresh random data.

Every test here is marked ``gpu`` (skipped, with the reason, without a
device).  The grid of the main tests is every method x dtype x threads
{64, 256, 1024} x the sizes below; each (kind of data, dtype, size) is
generated once per session from the session seed and shared by the cases
that use it (see ``SampleCache``).

- Integers are compared exactly with NumPy's int64 sum (int64 wraps alike),
  on data wide enough that int32 accumulation would overflow.
- Floats are checked twice: real values against the statistical error of
  the method's plan (``test_float_sum_within_error_bound``), and non-zero
  integer values whose sum is exact in the dtype, compared exactly: every
  element counts at least 1, so one lost or doubled element, at any block,
  vector, chunk or tail boundary or anywhere else, fails there for certain.
"""
from __future__ import annotations

import collections
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import pytest

import cudareduce
from support.api_contract import (FAST_UNROLL, FLOAT_DTYPES, GRID_DTYPES,
                                  INT_DTYPES, METHODS, numpy_sum_dtype)

pytestmark = pytest.mark.gpu

THREADS = (64, 256, 1024)
SIZES = (0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1000,
         4097, 65535, 2 ** 20 + 3, 2 ** 22, 1024 * 65535)


def grid(dtypes):
    """Cases in (dtype, size) order, so that each sample is generated once
    and the cache can drop it when its cases are done."""
    return [pytest.param(method, dtype, threads, n,
                         id=f"{method}-{dtype}-t{threads}-n{n}")
            for dtype in dtypes for n in SIZES
            for method in METHODS for threads in THREADS]


# --- test data ---------------------------------------------------------------

class Sample(NamedTuple):
    array: np.ndarray     # read-only
    reference: object     # exact sum (int), or it rounded once (float)
    abs_sum: float = 0.0      # sum of |x| (small_integer_floats)
    square_sum: float = 0.0   # sum of x^2 (uniform_floats)


def uniform_floats(rng, n, dtype) -> Sample:
    """Values k / 2^m in [-1, 1), k a random integer of |k| <= 2^m and
    m + 1 = the dtype's significand bits, so exact in the dtype.  The sum of
    the k is computed exactly in int64 (for float64, k = high * 2^26 + low,
    summed by parts), so the exact sum of the values is known; the reference
    is it rounded once to float64."""
    m = np.finfo(dtype).nmant
    if m < 31:
        k = rng.integers(-2 ** m, 2 ** m, size=n, dtype=np.int32)
        exact_k = int(np.sum(k, dtype=np.int64))
        x = k.astype(dtype)
    else:
        high = rng.integers(-2 ** (m - 26), 2 ** (m - 26), size=n,
                            dtype=np.int32)
        low = rng.integers(0, 2 ** 26, size=n, dtype=np.int32)
        exact_k = ((int(np.sum(high, dtype=np.int64)) << 26)
                   + int(np.sum(low, dtype=np.int64)))
        x = high.astype(dtype)
        x *= 2.0 ** 26
        x += low                # = k, exactly
    x *= 2.0 ** -m
    wide = x.astype(np.float64)
    return Sample(x, exact_k / 2 ** m, square_sum=float(np.dot(wide, wide)))


def small_integer_floats(rng, n, dtype) -> Sample:
    """Non-zero integers in [-16, -1] u [1, 16], signs at random, whose sum
    is exact in `dtype`: every element, at a block, vector, chunk or tail
    boundary or not, changes the sum by 1 to 16, so one lost or doubled
    element fails an exact comparison deterministically (and one read in
    another's place, with probability 31/32).

    While 16 n <= limit = 2^(significand bits), every partial sum, in any
    order, is an integer of magnitude <= sum(|x|) <= limit: exact.  Beyond
    (float32 past 2^20 elements), a partial sum of k <= n of these values
    reaches limit with probability at most 2 exp(-limit^2 / (2 k 16^2))
    (Hoeffding; the plan's order does not depend on the values): for
    float32 and n <= 2^30, at most 2 exp(-512) for each of the plan's < 2n
    partial sums, exact but for a chance far below a hardware fault's."""
    assert n <= 2 ** 30, "test data: the exactness argument needs n <= 2^30"
    magnitude = rng.integers(1, 16, size=n, endpoint=True)
    x = np.where(rng.random(n) < 0.5, -magnitude, magnitude)
    return Sample(x.astype(dtype), int(np.sum(x)),
                  abs_sum=float(np.sum(magnitude)))


def wide_integers(rng, n, dtype) -> Sample:
    """int32 over its whole range (an int32 accumulator would overflow);
    int64 within +-2^40."""
    if dtype == np.int32:
        info = np.iinfo(np.int32)
        x = rng.integers(info.min, info.max, size=n, dtype=np.int32,
                         endpoint=True)
    else:
        x = rng.integers(-2 ** 40, 2 ** 40, size=n, dtype=np.int64)
    return Sample(x, int(np.sum(x, dtype=np.int64)))


GENERATORS = {
    "uniform_floats": uniform_floats,
    "small_integer_floats": small_integer_floats,
    "wide_integers": wide_integers,
}


class SampleCache:
    """Test data by (kind, dtype, n), made on first use from a generator
    seeded by (session seed, kind, dtype, n), so that any case replays alone
    with the same data.  Keeps the `keep` most recently used samples."""

    def __init__(self, session_seed: int, keep: int = 2):
        self.session_seed = session_seed
        self.keep = keep
        self.samples = collections.OrderedDict()

    def get(self, kind: str, dtype, n: int) -> Sample:
        dtype = np.dtype(dtype)
        key = (kind, dtype, n)
        if key in self.samples:
            self.samples.move_to_end(key)
            return self.samples[key]
        while len(self.samples) >= self.keep:
            self.samples.popitem(last=False)
        rng = np.random.default_rng([self.session_seed,
                                     list(GENERATORS).index(kind),
                                     dtype.num, n])
        sample = GENERATORS[kind](rng, n, dtype)
        sample.array.flags.writeable = False
        self.samples[key] = sample
        return sample


@pytest.fixture(scope="module")
def samples(session_seed):
    return SampleCache(session_seed)


def assert_numpy_scalar_of(result, dtype):
    assert isinstance(result, np.generic), type(result)
    assert result.dtype == numpy_sum_dtype(dtype), (
        f"result dtype {result.dtype}, numpy.sum gives "
        f"{numpy_sum_dtype(dtype)}")


# --- the grid ----------------------------------------------------------------

def longest_addition_chain(method, n, threads, dtype) -> int:
    """An upper bound on the additions on any element's path to the result,
    plus one.

    Ladder: per pass of the plan, the thread's serial loads (at most
    items_per_thread) and the log2(threads) levels of the block's tree.
    fast: its one pass the same (plus a misaligned head and tail element,
    and the FAST_UNROLL accumulators combined), then the last block's loop
    over the partials and its tree.  cub plans its own launches: its chain
    is bounded by 2 sqrt(n) + 64, which holds while it runs at least
    sqrt(n) / 2 threads (it fills the GPU).
    """
    if method == "cub":
        return 2 * int(np.sqrt(n)) + 64
    passes = cudareduce.plan(n, method, threads=threads, dtype=dtype)
    chain = 1 + sum(p.items_per_thread + p.threads.bit_length() - 1
                    for p in passes)
    if method == "fast" and passes:
        (p,) = passes
        chain += 2 + FAST_UNROLL + -(-p.blocks // p.threads) \
            + p.threads.bit_length() - 1
    return chain


# Standard deviations of the rounding-error model that a float sum may be
# off by.  The model overestimates (it counts every addition as inexact and
# every element as on the longest path): in a CPU simulation of 200 grid-
# stride-then-tree sums of such data (n up to 3e5, chains 1..1024) the
# largest error was 2.2 of its sigma.
ERROR_SIGMAS = 8


@pytest.mark.parametrize("method, dtype, threads, n", grid(FLOAT_DTYPES))
def test_float_sum_within_error_bound(samples, seed_note, method, dtype,
                                      threads, n):
    """|got - s| <= ERROR_SIGMAS sigma + eps |s|, s the exact sum.

    Each addition of a tree summation rounds its result s_k by a relative
    error within +-u = eps/2, whose variance is at most u^2 s_k^2 / 3 when
    uniform (Higham and Mary, "A new approach to probabilistic rounding
    error analysis", 2019, model errors as independent).  For independent
    zero-mean values E[s_k^2] is the sum of x_i^2 over the elements below
    addition k, and each element lies below at most D additions, D the
    plan's longest chain; so sigma^2 <= u^2 D sum(x^2) / 3.  The eps |s|
    term covers the reference's one rounding to float64.  This bound is
    ~sqrt(D n) times tighter than the worst case D eps sum|x|: at
    1024 x 65535 float32 it lets no more than a few elements of |x| > 0.3
    go missing, where the worst case accepted any sum at all for cub; the
    exact test below sees a single one.  The plan is the one the library
    runs: sm_count=None asks this device.
    """
    sample = samples.get("uniform_floats", dtype, n)
    got = cudareduce.sum(sample.array, method, threads=threads)
    assert_numpy_scalar_of(got, dtype)
    depth = longest_addition_chain(method, n, threads, dtype)
    eps = float(np.finfo(dtype).eps)
    sigma = eps / 2 * np.sqrt(depth * sample.square_sum / 3)
    bound = ERROR_SIGMAS * sigma + eps * abs(sample.reference)
    error = abs(float(got) - sample.reference)
    assert error <= bound, (
        f"|{got!r} - {sample.reference!r}| = {error:.3g} > bound {bound:.3g}"
        f" = {ERROR_SIGMAS} sigma {sigma:.3g} (depth {depth}, sum x^2 "
        f"{sample.square_sum:.6g}) + eps |s| {seed_note}")


@pytest.mark.parametrize("method, dtype, threads, n", grid(FLOAT_DTYPES))
def test_integer_valued_float_sum_is_exact(samples, seed_note, method, dtype,
                                           threads, n):
    sample = samples.get("small_integer_floats", dtype, n)
    got = cudareduce.sum(sample.array, method, threads=threads)
    assert_numpy_scalar_of(got, dtype)
    assert got == sample.reference, (
        f"got {got!r}, exact sum {sample.reference} (values integers, "
        f"sum|x| = {sample.abs_sum:.0f}) {seed_note}")


@pytest.mark.parametrize("method, dtype, threads, n", grid(INT_DTYPES))
def test_integer_sum_is_exact(samples, seed_note, method, dtype, threads, n):
    sample = samples.get("wide_integers", dtype, n)
    got = cudareduce.sum(sample.array, method, threads=threads)
    assert_numpy_scalar_of(got, dtype)
    assert int(got) == sample.reference, (
        f"got {got!r}, numpy {sample.reference} {seed_note}")


# --- integer accumulation ----------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [2, 1000, 2 ** 20 + 3])
@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "negative"])
def test_int32_sum_accumulates_in_int64(rng, seed_note, method, n, sign):
    # Every value within 2^20 of int32's extreme: any two overflow int32.
    x = (sign * rng.integers(2 ** 31 - 2 ** 20, 2 ** 31 - 1, size=n,
                             endpoint=True)).astype(np.int32)
    expected = int(np.sum(x, dtype=np.int64))
    assert abs(expected) > 2 ** 31
    got = cudareduce.sum(x, method)
    assert got.dtype == np.int64 and int(got) == expected, seed_note


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [3, 1000, 4097])
def test_int64_sum_wraps_like_numpy(rng, seed_note, method, n):
    # Three or more of these exceed 2^63: the sum wraps for certain.
    x = rng.integers(2 ** 62, 2 ** 63 - 1, size=n, dtype=np.int64)
    expected = np.sum(x)        # wraps modulo 2^64
    assert int(expected) != sum(int(v) for v in x)
    got = cudareduce.sum(x, method)
    assert got.dtype == np.int64 and got == expected, seed_note


# --- inputs of any shape and layout ------------------------------------------

def integer_valued(rng, shape, dtype):
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def read_only(a):
    a.flags.writeable = False
    return a


LAYOUTS = {
    "2d": lambda rng, dt: integer_valued(rng, (123, 77), dt),
    "fortran": lambda rng, dt: np.asfortranarray(
        integer_valued(rng, (123, 77), dt)),
    "every-third": lambda rng, dt: integer_valued(rng, 10_000, dt)[::3],
    "transposed": lambda rng, dt: integer_valued(rng, (123, 77), dt).T,
    "3d-reversed-strided": lambda rng, dt: integer_valued(
        rng, (20, 30, 40), dt)[::-1, 1:, ::3],
    "big-endian": lambda rng, dt: integer_valued(rng, 5000, dt).astype(
        np.dtype(dt).newbyteorder(">")),
    "read-only": lambda rng, dt: read_only(integer_valued(rng, 5000, dt)),
    "0d": lambda rng, dt: np.array(rng.integers(-1000, 1000), dt),
    "list": lambda rng, dt: integer_valued(rng, 3000, dt).tolist(),
    "nested-list": lambda rng, dt: integer_valued(rng, (30, 17), dt).tolist(),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", GRID_DTYPES, ids=str)
@pytest.mark.parametrize("method", [None, *METHODS],
                         ids=["default", *METHODS])
def test_any_shape_and_layout_gives_numpys_sum(rng, seed_note, layout, dtype,
                                               method):
    a = LAYOUTS[layout](rng, dtype)
    before = np.array(a, copy=True)
    expected = np.sum(a)        # exact: integer values, small sums
    got = (cudareduce.sum(a) if method is None
           else cudareduce.sum(a, method))
    assert type(got) is type(expected) and got == expected, (
        f"got {got!r}, numpy {expected!r} {seed_note}")
    np.testing.assert_array_equal(np.asarray(a), before)


# --- the fast path on device data ----------------------------------------------

FAST_DTYPES = tuple(np.dtype(d) for d in
                    (np.int8, np.float16, np.int32, np.float32, np.float64))


# Every start a 16-byte vector can see: offsets 0 .. 16 / itemsize - 1
# (one more element is the same phase again).
MISALIGNED_CASES = [pytest.param(dtype, offset, id=f"{dtype}-{offset}")
                    for dtype in FAST_DTYPES
                    for offset in range(16 // dtype.itemsize)]


@pytest.mark.parametrize("n", [1, 15, 17, 4097, 2 ** 20 + 3])
@pytest.mark.parametrize("dtype, offset", MISALIGNED_CASES)
def test_fast_reads_misaligned_device_data(rng, seed_note, dtype, offset, n):
    """Device data that starts `offset` elements past a 16-byte boundary:
    the fast kernel's head, vectors and tail must cover it exactly once.
    Integer values keep every sum exact (float16: in its float32
    accumulator, rounded once to the float16 result, as expected is)."""
    cupy = pytest.importorskip("cupy")
    limit = 1 if dtype == np.float16 else 100
    host = rng.integers(-limit, limit, size=offset + n, endpoint=True)
    host = host.astype(dtype)
    device = cupy.asarray(host)[offset:]
    result_type = numpy_sum_dtype(dtype).type
    expected = result_type(np.sum(host[offset:].astype(np.float64)))
    got = cudareduce.sum(device, "fast", threads=64)
    assert got.dtype == numpy_sum_dtype(dtype)
    assert got == expected, (
        f"offset {offset}: got {got!r}, expected {expected!r} {seed_note}")


def test_fast_back_to_back_calls_rearm_the_counter(rng, seed_note):
    """Many calls in a row, of sizes whose grids differ, each exact: the
    last-block counter must be re-armed by every launch."""
    sizes = [1, 5000, 2 ** 20 + 3, 77, 2 ** 18]
    arrays = [rng.integers(-2 ** 30, 2 ** 30, size=n, dtype=np.int64)
              for n in sizes]
    expected = [int(np.sum(a)) for a in arrays]
    for _ in range(40):
        for threads in (64, 1024):
            got = [int(cudareduce.sum(a, "fast", threads=threads))
                   for a in arrays]
            assert got == expected, seed_note


# --- threads -----------------------------------------------------------------

def test_concurrent_sums_from_two_python_threads(rng, seed_note):
    arrays = [rng.integers(-2 ** 40, 2 ** 40, size=2 ** 22 + k,
                           dtype=np.int64) for k in (0, 1)]
    expected = [int(np.sum(a)) for a in arrays]
    start = threading.Barrier(2)

    def work(index):
        start.wait()
        return [int(cudareduce.sum(arrays[index], method))
                for method in METHODS for _ in range(3)]

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(work, range(2)))
    for index, got in enumerate(results):
        assert got == [expected[index]] * len(got), seed_note


# --- beyond 2^31 elements ----------------------------------------------------

HUGE_N = 2 ** 31 + 7
HUGE_HOST_BYTES = 24 * 2 ** 30


@pytest.fixture(scope="module")
def huge_int32(session_seed):
    """2^31 + 7 int32 (8 GiB) in [-4, 3], and their exact int64 sum.  The
    seven elements past 2^31 are large (10^6..10^7), so that an index that
    wraps at 2^31, or a tail left out, changes the sum for certain."""
    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if host < HUGE_HOST_BYTES:
        pytest.skip(f"needs {HUGE_HOST_BYTES / 2 ** 30:.0f} GiB of host "
                    f"memory, this machine has {host / 2 ** 30:.1f} GiB")
    rng = np.random.default_rng([session_seed, HUGE_N])
    x = np.empty(HUGE_N, np.int32)
    chunk = 2 ** 26
    for start in range(0, HUGE_N, chunk):
        bits = rng.integers(0, 2 ** 32, size=min(chunk, HUGE_N - start),
                            dtype=np.uint32).view(np.int32)
        np.right_shift(bits, 29, out=x[start:start + bits.size])
    x[2 ** 31:] = rng.integers(10 ** 6, 10 ** 7, size=HUGE_N - 2 ** 31)
    x.flags.writeable = False
    yield x, int(np.sum(x, dtype=np.int64))


@pytest.mark.big
@pytest.mark.parametrize("method, threads", [
    pytest.param(method, threads, id=f"{method}-t{threads}")
    for method, threads in [("interleaved_divergent", 64),
                            ("sequential", 256), ("first_add", 256),
                            ("multi_element", 256), ("fast", 256),
                            ("fast", 1024), ("cub", 256)]])
def test_sum_beyond_2_31_elements_is_exact(huge_int32, seed_note, method,
                                           threads):
    x, expected = huge_int32
    try:
        got = cudareduce.sum(x, method, threads=threads)
    except MemoryError as exc:
        pytest.skip(f"{x.nbytes / 2 ** 30:.1f} GiB do not fit on the "
                    f"device: {exc}")
    assert got.dtype == np.int64 and int(got) == expected, (
        f"got {got!r}, numpy {expected} {seed_note}")


# --- plan on the device ------------------------------------------------------

def test_plan_without_sm_count_asks_this_device():
    # Enough elements that multi_element's first pass is capped at
    # sm_count * (2048 // threads) blocks: the cap reveals the SM count,
    # which must be the device's as CuPy reads it (not the library's own
    # query compared with itself).
    cupy = pytest.importorskip("cupy")
    device = cupy.cuda.runtime.getDevice()
    sm_count = cupy.cuda.runtime.getDeviceProperties(device)[
        "multiProcessorCount"]
    n = 2 ** 40
    for threads in (64, 256, 1024):
        passes = cudareduce.plan(n, "multi_element", threads=threads)
        assert passes[0].blocks == sm_count * (2048 // threads), passes
        assert passes == cudareduce.plan(n, "multi_element", threads=threads,
                                         sm_count=sm_count)
