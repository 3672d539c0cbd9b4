"""cudareduce.plan: the kernel launches of a reduction, checked without a GPU.

A plan is checked two ways:

- against the specification's formulas for every pass (the chain of passes,
  blocks per method, the most elements one thread loads, shared memory);
- against a replay of the kernels' index arithmetic
  (cuda/kernels/ladder.cuh): for passes small enough, every thread's loads
  are enumerated, and every element must be loaded exactly once and the
  busiest thread must load exactly ``items_per_thread`` elements.

A checker that cannot fail would be worthless, so
``test_checker_rejects_broken_plans`` feeds it plans with one field off.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudareduce
from support.api_contract import (ACCUMULATOR, DEFAULT_THREADS,
                                  ELEMENTS_PER_THREAD, FAST_UNROLL,
                                  GRID_STRIDE_METHODS, LADDER, MAX_ELEMENTS,
                                  MAX_PASSES, METHODS, RESIDENT_THREADS_PER_SM,
                                  SUPPORTED_DTYPES, VALID_THREADS,
                                  default_threads)

PLAN_SIZES = (0, 1, 2, 63, 64, 65, 1000, 2 ** 20 + 3, 2 ** 31 + 7, 2 ** 40,
              2 ** 62)
SM_COUNTS = (1, 108, 132)

# Passes with at most this many input elements are replayed thread by thread.
REPLAY_LIMIT = 2 ** 17


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def expected_blocks(n_in: int, method: str, threads: int, sm_count,
                    first: bool) -> int:
    """Blocks of a pass by the specification."""
    per_block = ELEMENTS_PER_THREAD[method] * threads
    blocks = ceil_div(n_in, per_block)
    if method in GRID_STRIDE_METHODS:
        cap = sm_count * (RESIDENT_THREADS_PER_SM // threads) if first else 1
        blocks = min(blocks, cap)
    return blocks


def expected_items_per_thread(n_in: int, blocks: int, threads: int,
                              method: str) -> int:
    """Most elements one thread loads.  Thread 0 of block 0 loads element
    j * threads (j < elements per thread) of each sweep of the grid while it
    is inside n_in; a single-sweep method makes one sweep only."""
    per_thread = ELEMENTS_PER_THREAD[method]
    if method not in GRID_STRIDE_METHODS:
        return min(per_thread, ceil_div(n_in, threads))
    grid = blocks * per_thread * threads
    return sum(ceil_div(n_in - j * threads, grid)
               for j in range(per_thread) if j * threads < n_in)


def replay_loads(n_in: int, blocks: int, threads: int, method: str):
    """Replays the kernels' loads of one pass.

    Thread ``tid`` of block ``b`` starts at ``i = b * E * threads + tid``
    (E elements per thread) and loads ``i + j * threads`` for ``j < E``,
    each only if inside ``n_in``; a grid-stride method repeats this at
    ``i += blocks * E * threads`` while ``i < n_in``.  Returns (loads of
    each thread, times each element is loaded).
    """
    per_thread = ELEMENTS_PER_THREAD[method]
    grid = blocks * per_thread * threads
    first = (np.arange(blocks, dtype=np.int64)[:, None] * per_thread * threads
             + np.arange(threads, dtype=np.int64)).ravel()
    sweeps = ceil_div(n_in, grid) if method in GRID_STRIDE_METHODS else 1
    starts = first + grid * np.arange(sweeps, dtype=np.int64)[:, None]
    running = starts < n_in if method in GRID_STRIDE_METHODS else True
    loads_per_thread = np.zeros(first.size, np.int64)
    loaded = []
    for j in range(per_thread):
        index = starts + j * threads
        inside = (index < n_in) & running
        loads_per_thread += inside.sum(axis=0)
        loaded.append(index[inside])
    times_loaded = np.bincount(np.concatenate(loaded), minlength=n_in)
    return loads_per_thread, times_loaded


def check_plan(passes, n, method, threads, sm_count, dtype=np.float32):
    """Asserts that `passes` is the plan the specification and the kernels
    require for reducing n elements of `dtype`."""
    where = (f"plan({n}, {method!r}, threads={threads}, sm_count={sm_count})"
             f" = {passes}")
    assert isinstance(passes, list), where
    assert all(type(p) is cudareduce.Pass for p in passes), where
    if n == 0:
        assert passes == [], where
        return
    assert 1 <= len(passes) <= MAX_PASSES, where
    assert passes[0].n_in == n, where
    for before, after in zip(passes, passes[1:]):
        assert after.n_in == before.blocks > 1, where
    assert passes[-1].blocks == 1, where
    if method in GRID_STRIDE_METHODS:
        assert len(passes) <= 2, where

    accumulator = ACCUMULATOR[np.dtype(dtype).newbyteorder("=")]
    shared_bytes = threads * accumulator.itemsize
    for index, p in enumerate(passes):
        at = f"pass {index} of {where}"
        assert all(type(v) is int for v in p), at
        assert p.threads == threads, at
        assert p.shared_bytes == shared_bytes, at
        assert p.blocks == expected_blocks(p.n_in, method, threads, sm_count,
                                           first=index == 0), at
        assert p.items_per_thread == expected_items_per_thread(
            p.n_in, p.blocks, threads, method), at
        assert p.blocks * p.threads * p.items_per_thread >= p.n_in, at
        if p.n_in <= REPLAY_LIMIT:
            loads, times_loaded = replay_loads(p.n_in, p.blocks, threads,
                                               method)
            assert np.all(times_loaded == 1), (
                f"elements loaded other than once, first at index "
                f"{np.flatnonzero(times_loaded != 1)[0]}: {at}")
            assert loads.max() == p.items_per_thread, at


def plan_cases():
    for method in LADDER:
        sm_counts = SM_COUNTS if method in GRID_STRIDE_METHODS else (None,)
        for threads in VALID_THREADS:
            for n in PLAN_SIZES:
                for sm in sm_counts:
                    sm_id = "" if sm is None else f"-sm{sm}"
                    yield pytest.param(n, method, threads, sm,
                                       id=f"{method}-t{threads}-n{n}{sm_id}")


@pytest.mark.parametrize("n, method, threads, sm_count", list(plan_cases()))
def test_plan(n, method, threads, sm_count):
    passes = cudareduce.plan(n, method, threads=threads, dtype="float32",
                             sm_count=sm_count)
    check_plan(passes, n, method, threads, sm_count)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 40_000), method=st.sampled_from(LADDER),
       threads=st.sampled_from(VALID_THREADS), sm_count=st.integers(1, 200))
def test_random_small_plans_load_every_element_once(n, method, threads,
                                                    sm_count):
    passes = cudareduce.plan(n, method, threads=threads, sm_count=sm_count)
    check_plan(passes, n, method, threads, sm_count)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, MAX_ELEMENTS), method=st.sampled_from(LADDER),
       threads=st.sampled_from(VALID_THREADS), sm_count=st.integers(1, 10_000))
def test_random_large_plans(n, method, threads, sm_count):
    passes = cudareduce.plan(n, method, threads=threads, sm_count=sm_count)
    check_plan(passes, n, method, threads, sm_count)


def broken(passes, index, **change):
    passes = list(passes)
    passes[index] = passes[index]._replace(**change)
    return passes


# Each mutation of a correct plan (of 10^6 float32 elements, 256 threads,
# 108 SMs) that check_plan must reject.
MUTATIONS = {
    "blocks-1": lambda ps: broken(ps, 0, blocks=ps[0].blocks - 1),
    "blocks+1": lambda ps: broken(ps, 0, blocks=ps[0].blocks + 1),
    "items_per_thread-1": lambda ps: broken(
        ps, 0, items_per_thread=ps[0].items_per_thread - 1),
    "items_per_thread+1": lambda ps: broken(
        ps, 0, items_per_thread=ps[0].items_per_thread + 1),
    "last-items_per_thread+1": lambda ps: broken(
        ps, -1, items_per_thread=ps[-1].items_per_thread + 1),
    "n_in+1": lambda ps: broken(ps, -1, n_in=ps[-1].n_in + 1),
    "threads*2": lambda ps: broken(ps, 0, threads=ps[0].threads * 2),
    "shared_bytes/2": lambda ps: broken(
        ps, 0, shared_bytes=ps[0].shared_bytes // 2),
    "last-pass-dropped": lambda ps: ps[:-1],
    "pass-repeated": lambda ps: ps + ps[-1:],
}


@pytest.mark.parametrize("method", LADDER)
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_checker_rejects_broken_plans(method, mutation):
    n, threads, sm_count = 10 ** 6, 256, 108
    passes = cudareduce.plan(n, method, threads=threads, sm_count=sm_count)
    check_plan(passes, n, method, threads, sm_count)
    with pytest.raises(AssertionError):
        check_plan(MUTATIONS[mutation](passes), n, method, threads, sm_count)


def test_replay_catches_a_grid_too_small():
    # One block of 64 threads covers 64 elements in a single sweep: with 65,
    # a single-sweep method would miss one, which the replay must see.
    _, times_loaded = replay_loads(65, 1, 64, "sequential")
    assert times_loaded[64] == 0 and np.all(times_loaded[:64] == 1)


# --- the fast method: one launch --------------------------------------------

def fast_vector(dtype) -> int:
    """Elements in one 16-byte load of `dtype`."""
    return 16 // np.dtype(dtype).itemsize


def replay_fast_loads(n: int, blocks: int, threads: int, vec: int,
                      head: int):
    """Replays reduce_fast's loads (cuda/kernels/fast.cuh) for data whose
    first 16-byte boundary is `head` elements in.

    Global thread ``g`` of ``T = blocks * threads`` loads element ``g`` of
    the head (``g < head``), element ``g`` of the tail after the last whole
    vector, and every vector ``g, g + T, g + 2T, ...`` of ``vec`` elements
    between.  Returns (loads of each thread, times each element is loaded).
    """
    head = min(head, n)
    total = blocks * threads
    nvec = (n - head) // vec
    tail = head + nvec * vec
    g = np.arange(total, dtype=np.int64)
    loads = (g < head).astype(np.int64) + (g < n - tail)
    loaded = [g[g < head], tail + g[g < n - tail]]
    vectors = np.arange(nvec, dtype=np.int64)
    loads += vec * np.bincount(vectors % total, minlength=total)
    loaded.append((head + vectors[:, None] * vec
                   + np.arange(vec, dtype=np.int64)).ravel())
    return loads, np.bincount(np.concatenate(loaded), minlength=n)


def check_fast_plan(passes, n, threads, sm_count, dtype=np.float32):
    """Asserts that `passes` is the fast method's plan: one pass over a grid
    of at most RESIDENT_THREADS_PER_SM threads per SM, each thread loading
    FAST_UNROLL vectors per sweep; ``items_per_thread`` is the busiest
    thread's loads for 16-byte-aligned data (a misaligned start adds at
    most one head element)."""
    where = f"plan({n}, 'fast', threads={threads}, sm_count={sm_count}) = " \
        f"{passes}"
    if n == 0:
        assert passes == [], where
        return
    vec = fast_vector(dtype)
    assert len(passes) == 1, where
    (p,) = passes
    assert all(type(v) is int for v in p), where
    assert (p.n_in, p.threads, p.shared_bytes) == (n, threads, 0), where
    assert p.blocks == min(ceil_div(n, threads * vec * FAST_UNROLL),
                           sm_count * (RESIDENT_THREADS_PER_SM // threads)), \
        where
    nvec = n // vec
    assert p.items_per_thread == (
        vec * ceil_div(nvec, p.blocks * threads) + (n % vec > 0)), where
    if n <= REPLAY_LIMIT:
        for head in range(vec):
            loads, times_loaded = replay_fast_loads(n, p.blocks, threads,
                                                    vec, head)
            assert np.all(times_loaded == 1), f"head {head}: {where}"
            assert loads.max() <= p.items_per_thread + 2 * (head > 0), where
            if head == 0:
                assert loads.max() == p.items_per_thread, where


FAST_DTYPES = ("bool", "int8", "float16", "float32", "int64")


@pytest.mark.parametrize("dtype", FAST_DTYPES)
@pytest.mark.parametrize("threads", VALID_THREADS)
@pytest.mark.parametrize("n", PLAN_SIZES + (15, 16, 17, 4095, 4097))
@pytest.mark.parametrize("sm_count", SM_COUNTS)
def test_fast_plan(n, threads, sm_count, dtype):
    passes = cudareduce.plan(n, "fast", threads=threads, dtype=dtype,
                             sm_count=sm_count)
    check_fast_plan(passes, n, threads, sm_count, dtype)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 100_000), threads=st.sampled_from(VALID_THREADS),
       sm_count=st.integers(1, 200), dtype=st.sampled_from(FAST_DTYPES))
def test_random_fast_plans_load_every_element_once(n, threads, sm_count,
                                                   dtype):
    passes = cudareduce.plan(n, "fast", threads=threads, dtype=dtype,
                             sm_count=sm_count)
    check_fast_plan(passes, n, threads, sm_count, dtype)


@pytest.mark.parametrize("mutation", ["blocks-1", "blocks+1",
                                      "items_per_thread-1",
                                      "items_per_thread+1", "threads*2",
                                      "pass-repeated"])
def test_fast_checker_rejects_broken_plans(mutation):
    n, threads, sm_count = 10 ** 5 + 3, 64, 2
    passes = cudareduce.plan(n, "fast", threads=threads, sm_count=sm_count)
    check_fast_plan(passes, n, threads, sm_count)
    with pytest.raises(AssertionError):
        check_fast_plan(MUTATIONS[mutation](passes), n, threads, sm_count)


def test_fast_replay_catches_a_missed_vector():
    # 2 threads, 3 vectors of 4: thread 0 loads vectors 0 and 2.
    loads, times_loaded = replay_fast_loads(12, 1, 2, 4, 0)
    assert list(loads) == [8, 4] and np.all(times_loaded == 1)
    # A head of 3, 2 vectors, a tail of 2 over 4 threads.
    loads, times_loaded = replay_fast_loads(13, 1, 4, 4, 3)
    assert list(loads) == [6, 6, 1, 0] and np.all(times_loaded == 1)
    # With 2 threads, head element 2 is never loaded: the replay sees it.
    _, times_loaded = replay_fast_loads(13, 1, 2, 4, 3)
    assert times_loaded[2] == 0


def test_cub_has_no_plan():
    with pytest.raises(ValueError, match="cub plans its own launches"):
        cudareduce.plan(1000, "cub", sm_count=132)


# --- dtype, sm_count and defaults -------------------------------------------

@pytest.mark.parametrize("dtype", [
    "float32", "float64", "int32", "int64", np.float32, np.int32,
    np.dtype("int64"), ">f4", "<i4", "f8"], ids=str)
@pytest.mark.parametrize("method", LADDER)
def test_shared_memory_is_one_accumulator_per_thread(dtype, method):
    threads = 128
    passes = cudareduce.plan(10 ** 7, method, threads=threads, dtype=dtype,
                             sm_count=108)
    check_plan(passes, 10 ** 7, method, threads, 108, dtype)
    accumulator = ACCUMULATOR[np.dtype(dtype).newbyteorder("=")]
    assert {p.shared_bytes for p in passes} == {
        threads * accumulator.itemsize}


def test_bfloat16_is_ml_dtypes_and_accumulates_in_float32():
    """ml_dtypes' bfloat16 (NumPy kind 'V') is found by its scalar type;
    another two-byte void dtype is not bfloat16."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16),
                  "bfloat16"):
        passes = cudareduce.plan(10 ** 7, "sequential", threads=128,
                                 dtype=dtype, sm_count=108)
        assert {p.shared_bytes for p in passes} == {128 * 4}
    for dtype in ("V2", np.dtype([("a", np.int16)])):
        with pytest.raises(TypeError, match="does not support dtype"):
            cudareduce.plan(1000, "sequential", dtype=dtype)


@pytest.mark.parametrize(
    "method", [m for m in LADDER if m not in GRID_STRIDE_METHODS])
@pytest.mark.parametrize("n", [1, 1000, 2 ** 40])
def test_single_sweep_plans_need_no_device_and_ignore_sm_count(method, n):
    plans = [cudareduce.plan(n, method, sm_count=sm) for sm in
             (None, *SM_COUNTS)]
    assert all(p == plans[0] for p in plans)


@pytest.mark.parametrize("method", LADDER + ("fast",))
def test_plan_of_nothing_is_empty_without_asking_a_device(method):
    assert cudareduce.plan(0, method) == []


def test_plan_defaults():
    # threads None is the method's own default.
    assert cudareduce.plan(10 ** 6, sm_count=132) == cudareduce.plan(
        10 ** 6, "fast", threads=default_threads("fast", 10 ** 6, 4),
        dtype="float32", sm_count=132)
    for method in LADDER:
        assert cudareduce.plan(10 ** 6, method, sm_count=132) == (
            cudareduce.plan(10 ** 6, method, threads=DEFAULT_THREADS,
                            sm_count=132)), method


def test_grid_stride_grid_grows_with_sm_count_up_to_the_work():
    n = 2 ** 30
    blocks = [cudareduce.plan(n, "multi_element", sm_count=sm)[0].blocks
              for sm in (1, 2, 108, 132)]
    assert blocks == [8, 16, 864, 1056]
    assert cudareduce.plan(1000, "multi_element", sm_count=132)[0].blocks == 2


# --- argument errors --------------------------------------------------------

@pytest.mark.parametrize("n", [-1, -2 ** 40, MAX_ELEMENTS + 1])
@pytest.mark.parametrize("sm_count", [None, 132])
def test_n_out_of_range_is_a_value_error(n, sm_count):
    # Before any device query: a ValueError even where sm_count=None would
    # ask a device that is not there.
    with pytest.raises(ValueError, match="n "):
        cudareduce.plan(n, "multi_element", sm_count=sm_count)


@pytest.mark.parametrize("n", [2.0, "10", None], ids=repr)
def test_n_not_an_int_is_a_type_error(n):
    with pytest.raises(TypeError):
        cudareduce.plan(n, "sequential")


def test_unknown_method_is_a_value_error():
    with pytest.raises(ValueError, match="unknown method") as info:
        cudareduce.plan(10, "bogus", sm_count=132)
    assert all(name in str(info.value) for name in METHODS)


@pytest.mark.parametrize("threads", [0, 3, 32, 2048, -1, 100])
def test_threads_out_of_range_is_a_value_error(threads):
    with pytest.raises(ValueError, match="threads"):
        cudareduce.plan(10, "sequential", threads=threads)


@pytest.mark.parametrize("threads", [True, 256.0, "256"], ids=repr)
def test_threads_of_wrong_type_is_a_type_error(threads):
    with pytest.raises(TypeError, match="threads"):
        cudareduce.plan(10, "sequential", threads=threads)


@pytest.mark.parametrize("dtype", [np.clongdouble, object, "U3",
                                   "datetime64[s]"], ids=str)
def test_unsupported_dtype_is_a_type_error_naming_it(dtype):
    with pytest.raises(TypeError) as info:
        cudareduce.plan(10, "sequential", dtype=dtype)
    dtype = np.dtype(dtype)
    assert str(dtype) in str(info.value) or repr(dtype) in str(info.value)


@pytest.mark.parametrize("method", ["sequential", "multi_element"])
@pytest.mark.parametrize("sm_count", [0, -1, -132])
def test_sm_count_not_positive_is_a_value_error(method, sm_count):
    with pytest.raises(ValueError, match="sm_count"):
        cudareduce.plan(10, method, sm_count=sm_count)


@pytest.mark.parametrize("sm_count", [1.5, "132", True], ids=repr)
def test_sm_count_of_wrong_type_is_a_type_error(sm_count):
    with pytest.raises(TypeError, match="sm_count"):
        cudareduce.plan(10, "multi_element", sm_count=sm_count)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_supported_dtype_plans(dtype):
    check_plan(cudareduce.plan(12345, "first_add", dtype=dtype), 12345,
               "first_add", 256, None, dtype)
