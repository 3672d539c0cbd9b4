"""devices= (issue 45): a NumPy array reduced by several GPUs at once,
each streaming a share of its chunks through its own ring, the chunks'
results folded in the array's order: the same bits as one GPU.

Every test walks the device lists this machine has (as
test_devices_gpu.py walks its device pairs: loops, not parameters, so
that no test exists on one machine and is skipped on another): on one GPU
``[0]``, ``0`` and ``"all"``; on several also each GPU alone, every pair
in both orders, and all of them forwards and backwards.  Each list gives
devices=None's bits, NumPy's answer (integers exactly, floats within a
sum's bound, indices exactly), and leaves the caller's device current.

The arrays span several chunks of the default ring (16 MiB,
cuda/memory/host_ring.cuh), so that with two GPUs or more each holds some,
and the shorter last chunk has its own plan.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import cudareduce
from support.host_checks import PAGE, page_aligned, registered

pytestmark = pytest.mark.gpu

CHUNK_BYTES = 16 << 20
# Four full chunks of float32 and a short one.
N = 4 * CHUNK_BYTES // 4 + 12_345


@pytest.fixture(autouse=True)
def keep_current_device(cupy):
    current = cupy.cuda.runtime.getDevice()
    yield
    assert cupy.cuda.runtime.getDevice() == current
    cupy.cuda.runtime.setDevice(current)


def device_lists(cupy) -> list:
    """The devices= values this machine can take."""
    count = cupy.cuda.runtime.getDeviceCount()
    every = list(range(count))
    lists = ["all", 0, every, every[::-1]]
    lists += [[d] for d in every[1:]]
    lists += [list(pair) for pair in itertools.permutations(every, 2)]
    return lists


def bits(value) -> bytes:
    return np.asarray(value).tobytes()


@pytest.mark.parametrize("op, dtype", [
    ("sum", np.float32), ("sum", np.int64), ("mean", np.float64),
    ("nansum", np.float32), ("prod", np.float64), ("min", np.float32),
    ("max", np.int8), ("argmax", np.float32), ("nanargmin", np.float64),
    ("any", np.bool_), ("all", np.bool_)])
def test_every_list_gives_one_gpus_bits(cupy, rng, op, dtype):
    n = N * 4 // np.dtype(dtype).itemsize
    if dtype == np.bool_:
        x = rng.random(n) < (0.999999 if op == "all" else 1e-6)
    elif np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
        if op == "prod":
            x = (1 + x / 1000).astype(dtype)
        if op.startswith("nan"):
            x[rng.integers(0, n, 1000)] = np.nan
    else:
        x = rng.integers(-100, 100, n).astype(dtype)
    one = getattr(cudareduce, op)(x)
    if np.dtype(dtype).kind == "f" and op in ("sum", "nansum", "mean"):
        wide = x.astype(np.float64)
        want = getattr(np, op)(wide)
        # A float sum's error, far below this bound on normal data.
        scale = np.nansum(np.abs(wide)) / (n if op == "mean" else 1)
        assert abs(float(one) - want) <= 1e-5 * scale, (one, want)
    elif op == "prod":
        assert np.isclose(one, np.prod(x), rtol=1e-9)
    else:
        assert one == getattr(np, op)(x)
    for devices in device_lists(cupy):
        got = getattr(cudareduce, op)(x, devices=devices)
        assert got.dtype == one.dtype, devices
        assert bits(got) == bits(one), (devices, got, one)


def test_the_extreme_in_any_share_and_ties_across_shares(cupy):
    """argmin's first occurrence wherever the shares cut: the minimum
    in the last chunk, then again in the first (the first wins)."""
    x = np.zeros(N, np.float32)
    x[N - 3] = -1
    for devices in device_lists(cupy):
        assert cudareduce.argmin(x, devices=devices) == N - 3, devices
    x[5] = -1
    for devices in device_lists(cupy):
        assert cudareduce.argmin(x, devices=devices) == 5, devices


def test_layouts_and_casts(cupy, rng):
    """A strided, reversed view and a dtype= cast, each chunk gathered
    and cast on its own device."""
    base = rng.integers(-50, 50, (N // 1000 + 7, 2000)).astype(np.int16)
    view = base[::-1, ::2]
    want = int(view.sum(dtype=np.int64))
    for devices in device_lists(cupy):
        assert cudareduce.sum(view, devices=devices) == want, devices
        assert cudareduce.sum(view, dtype=np.float64, devices=devices) \
            == float(view.sum(dtype=np.float64)), devices


@pytest.mark.parametrize("op", ["sum", "mean", "nanmean"])
def test_exact_sums_are_the_same_bits(cupy, rng, op):
    """exact=True: each device's chunks in its own state, summed and
    rounded once on the host: math.fsum's bits, as on one GPU."""
    x = rng.standard_normal(N // 2) * np.exp2(rng.integers(-30, 30, N // 2))
    x[7] = 1e300
    x[N // 2 - 9] = -1e300
    if op == "nanmean":
        x[3] = np.nan
    one = getattr(cudareduce, op)(x, exact=True)
    if op == "sum":
        assert float(one) == math.fsum(x)
    for devices in device_lists(cupy):
        got = getattr(cudareduce, op)(x, exact=True, devices=devices)
        assert bits(got) == bits(one), (devices, got, one)


def test_a_device_out(cupy, rng):
    """The result into a device array of the caller's device."""
    x = rng.standard_normal(N).astype(np.float32)
    want = cudareduce.sum(x)
    for devices in device_lists(cupy):
        out = cupy.zeros((), np.float32)
        assert cudareduce.sum(x, devices=devices, out=out) is out
        assert bits(out.get()) == bits(want), devices
        out = cupy.zeros((), np.float32)
        cudareduce.sum(x, exact=True, devices=devices, out=out)
        assert bits(out.get()) == bits(cudareduce.sum(x, exact=True))


def test_small_and_empty_arrays(cupy, rng):
    """One chunk or none: the lists give one GPU's answer too."""
    for n in (0, 1, 1000):
        x = rng.standard_normal(n)
        for devices in device_lists(cupy):
            assert bits(cudareduce.sum(x, devices=devices)) \
                == bits(cudareduce.sum(x)), (n, devices)
        if n:
            assert cudareduce.argmax(x, devices="all") == x.argmax()


def test_a_device_that_does_not_exist(cupy):
    count = cupy.cuda.runtime.getDeviceCount()
    x = np.ones(N, np.float32)
    for devices in ([count], [0, count]):
        with pytest.raises(ValueError, match=f"CUDA device {count} does "
                                             f"not exist: this machine "
                                             f"has {count}"):
            cudareduce.sum(x, devices=devices)
    assert cudareduce.sum(x, devices="all") == N


def test_a_device_array_is_refused(cupy):
    with pytest.raises(ValueError, match="reduces a host array"):
        cudareduce.sum(cupy.ones(10), devices=[0])


@pytest.mark.parametrize("chunk", [0, 3, 4])
def test_a_fault_on_one_device_leaves_every_device_usable(cupy, rng,
                                                          chunk):
    """A fault injected at chunk `chunk` (held by the first, a middle or
    the last device of the list): MemoryError naming it, then every
    device's calls right, exact sums included (their states left
    zero)."""
    x = rng.standard_normal(N).astype(np.float32)
    inject = cudareduce._cudareduce._inject_host_fault
    for devices in device_lists(cupy):
        for exact in (False, True):
            inject(chunk)
            try:
                with pytest.raises(MemoryError, match="injected"):
                    cudareduce.sum(x, exact=exact, devices=devices)
            finally:
                inject(-1)
            assert bits(cudareduce.sum(x, exact=exact, devices=devices)) \
                == bits(cudareduce.sum(x, exact=exact)), (devices, exact)


def test_locked_pages_give_one_gpus_bits(cupy, rng):
    """An array in pinned memory (copied by each device from where it is,
    not staged): every list gives one GPU's bits, and a fault on one
    device still leaves every device's calls right."""
    memory = cupy.cuda.alloc_pinned_memory(N * 4)
    x = np.frombuffer(memory, np.float32, N)
    x[...] = rng.standard_normal(N)
    pageable = x.copy()
    want = cudareduce.sum(pageable)
    inject = cudareduce._cudareduce._inject_host_fault
    for devices in device_lists(cupy):
        assert bits(cudareduce.sum(x, devices=devices)) == bits(want), \
            devices
        assert bits(cudareduce.sum(x, exact=True, devices=devices)) \
            == bits(cudareduce.sum(pageable, exact=True)), devices
        inject(3)
        try:
            with pytest.raises(MemoryError, match="injected"):
                cudareduce.sum(x, devices=devices)
        finally:
            inject(-1)
        assert bits(cudareduce.sum(x, devices=devices)) == bits(want), \
            devices


def test_an_array_locked_at_its_ends_only(cupy, rng):
    """Pageable memory registered at its first and last pages only: each
    device's share copies in place until the driver refuses a chunk that
    spans the unlocked middle, then stages it and the rest; every list
    gives one GPU's bits."""
    n = N // 1024 * 1024            # whole pages, a short last chunk too
    x = page_aligned(n * 4).view(np.float32)
    x[...] = rng.standard_normal(n)
    want = cudareduce.sum(x.copy())
    with registered(cupy.cuda.runtime, x,
                    [(0, PAGE), (x.nbytes - PAGE, PAGE)]):
        for devices in device_lists(cupy):
            assert bits(cudareduce.sum(x, devices=devices)) == bits(want), \
                devices
