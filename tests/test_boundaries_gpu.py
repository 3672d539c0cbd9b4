"""Boundaries that a lost, doubled or misplaced element crosses, on the GPU.

Each size and position here is derived from the method's own plan, so that
a wrong bound in any kernel moves a result for certain:

- Sizes at every edge of every (method, threads): one block's elements
  (B) +-1, two blocks, the second pass's first extra block (B times the
  elements one block of the second pass takes) +-1, the fast method's
  16-byte vector +-1, and for the grid-stride methods one and two sweeps of
  the whole grid +-1; each sum of integer values, exact, on device arrays.
- A unique extreme planted at each of those positions (and at the first
  and the last element): min and max must find it wherever it is, which a
  dropped block, vector, tail or chunk cannot (on data whose extremes repeat
  thousands of times it could).  Also on host arrays, at the ring's chunk
  edges.
- Device arrays past 2^31 and 2^32 elements (int8, 2 and 4 GiB), whose
  content depends on the position, with values planted just past 2^31 and
  2^32: every method reduces them in one launch sequence, with 64-bit
  indexing.
"""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce
from support.api_contract import (ELEMENTS_PER_THREAD, FAST_UNROLL,
                                  GRID_STRIDE_METHODS, LADDER, METHODS,
                                  VALID_THREADS)

pytestmark = pytest.mark.gpu

HOST_CHUNK_BYTES = 16 << 20     # the ring's default chunk


@pytest.fixture(scope="module")
def sm_count():
    return cudareduce._cudareduce.device_info()["sm_count"]


def per_block(method: str, threads: int, itemsize: int) -> int:
    """The consecutive elements one block covers in one sweep."""
    if method == "fast":
        return threads * (16 // itemsize) * FAST_UNROLL
    return threads * ELEMENTS_PER_THREAD.get(method, 2)


def edges(method: str, threads: int, dtype, sm_count: int) -> list[int]:
    """Element counts (and positions) at the edges of `method`'s plan."""
    itemsize = np.dtype(dtype).itemsize
    block = per_block(method, threads, itemsize)
    found = {1, block - 1, block, block + 1, 2 * block - 1, 2 * block + 1}
    if method == "fast":
        vector = 16 // itemsize
        found |= {vector - 1, vector, vector + 1}
    if method in GRID_STRIDE_METHODS or method == "fast":
        grid = cudareduce.plan(2 ** 40, method, threads=threads, dtype=dtype,
                               sm_count=sm_count)[0].blocks
        sweep = grid * block
        found |= {sweep - 1, sweep, sweep + 1, 2 * sweep + 1}
    elif method in LADDER:
        # The second pass gets a second block when the first has this many
        # blocks' worth of elements.
        second = block * per_block(method, threads, 8)
        found |= {second - 1, second, second + 1}
    else:   # cub plans its own tiles: powers of two and their neighbours
        found |= {2 ** k + d for k in range(8, 23, 2) for d in (-1, 0, 1)}
    return sorted(n for n in found if n >= 1)


CASES = [pytest.param(method, threads, dtype,
                      id=f"{method}-t{threads}-{np.dtype(dtype)}")
         for method in METHODS for threads in VALID_THREADS
         for dtype in (np.int8, np.float32)
         if method != "cub" or threads == 256]


def integer_values(rng, n: int, dtype) -> np.ndarray:
    """int8 over its range; float32 in {-1, 0, 1}, so that every partial sum
    of up to 2^24 elements is exact in any order."""
    if np.dtype(dtype) == np.int8:
        return rng.integers(-128, 128, size=n).astype(np.int8)
    assert n <= 2 ** 24
    return rng.integers(-1, 2, size=n).astype(np.float32)


@pytest.mark.parametrize("method, threads, dtype", CASES)
def test_sums_at_the_plans_edges_are_exact(cupy, rng, seed_note, sm_count,
                                           method, threads, dtype):
    sizes = edges(method, threads, dtype, sm_count)
    host = integer_values(rng, max(sizes), dtype)
    device = cupy.asarray(host)
    for n in sizes:
        want = int(np.sum(host[:n], dtype=np.int64))
        got = cudareduce.sum(device[:n], method, threads=threads)
        assert int(got) == want, (
            f"{method}, {threads} threads, n = {n}: got {got!r}, want "
            f"{want} {seed_note}")


@pytest.mark.parametrize("method, threads, dtype", CASES)
def test_a_unique_extreme_is_found_at_every_edge(cupy, rng, seed_note,
                                                 sm_count, method, threads,
                                                 dtype):
    positions = edges(method, threads, dtype, sm_count)
    n = positions[-1] + 3
    positions = [0, *positions, n - 1]
    # Values in [-100, 100]: the planted -128 / 127 is the one extreme.
    host = np.random.default_rng(rng.integers(2 ** 63)).integers(
        -100, 101, size=n).astype(dtype)
    device = cupy.asarray(host)
    for p in positions:
        for op, value in (("min", -128), ("max", 127)):
            device[p] = value
            got = getattr(cudareduce, op)(device, method, threads=threads)
            device[p] = host[p]
            assert got == value, (
                f"{op} with {value} planted at {p} of {n} ({method}, "
                f"{threads} threads): got {got!r} {seed_note}")


@pytest.mark.parametrize("method", METHODS)
def test_a_unique_extreme_is_found_at_every_chunk_edge_of_a_host_array(
        rng, seed_note, method):
    chunk = HOST_CHUNK_BYTES // 4
    n = 2 * chunk + 1001
    host = rng.integers(-100, 101, size=n).astype(np.float32)
    for p in (0, 1, 3, 4, chunk - 1, chunk, chunk + 1, 2 * chunk - 1,
              2 * chunk, 2 * chunk + 1, n - 2, n - 1):
        for op, value in (("min", -1000.0), ("max", 1000.0)):
            host[p], kept = value, host[p]
            got = getattr(cudareduce, op)(host, method)
            host[p] = kept
            assert got == value, (
                f"{op} with {value} planted at {p} of {n} (chunk {chunk}, "
                f"{method}): got {got!r} {seed_note}")


# --- beyond 2^31 and 2^32 elements on the device --------------------------------

PERIOD = 251        # prime: no block or chunk size is a multiple of it


def pattern_sum(n: int) -> int:
    """sum of (i % PERIOD) - 125 for i < n: whole periods sum to 0."""
    return sum(r - 125 for r in range(n % PERIOD))


@pytest.fixture(scope="module", params=[2 ** 31 + 17, 2 ** 32 + 17],
                ids=["2^31+17", "2^32+17"])
def huge_int8(request, cupy):
    """n int8 on the device, element i = (i % 251) - 125, with values
    planted just past 2^31 (and 2^32): the sum, and a unique min and max
    there.  Returns (array, sum, min, max)."""
    n = request.param
    fill = cupy.ElementwiseKernel(
        "", "int8 x", "x = (signed char)(i % 251 - 125)",
        "cudareduce_test_position_pattern")
    x = cupy.empty(n, cupy.int8)
    fill(x)
    want = pattern_sum(n)
    past = 2 ** 32 if n > 2 ** 32 else 2 ** 31
    plants = {past - 1: 100, past: -100, past + 1: 77,
              past + 9: -128, n - 2: 127}
    for index, value in plants.items():
        want += value - ((index % PERIOD) - 125)
        x[index] = value
    cupy.cuda.runtime.deviceSynchronize()
    yield x, want
    del x
    cupy.get_default_memory_pool().free_all_blocks()


@pytest.mark.big
@pytest.mark.parametrize("method", METHODS)
def test_device_arrays_past_2_31_and_2_32_elements(huge_int8, seed_note,
                                                   method):
    x, want = huge_int8
    for threads in ((256,) if method == "cub" else (64, 1024)):
        got = [cudareduce.sum(x, method, threads=threads),
               cudareduce.min(x, method, threads=threads),
               cudareduce.max(x, method, threads=threads)]
        assert [int(v) for v in got] == [want, -128, 127], (
            f"n = {x.size}, {method}, {threads} threads: sum, min, max "
            f"{got}, want {[want, -128, 127]} {seed_note}")
