"""Checks of host arrays through the ring, run by test_host_gpu.py in a fresh
interpreter: ``python -m support.host_checks CASE SEED``, tests/ on the
path.  Prints ``ok`` on success; any failure raises (non-zero exit)."""
from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time

import numpy as np

import cudareduce
from support.exact_data import integer_values, numpy_answer, same

DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.float16, np.float32, np.float64))
OPS = ("sum", "mean", "min", "max")
METHODS = tuple(cudareduce.methods())
CHUNK_BYTES = 1 << 20       # CUDAREDUCE_HOST_CHUNK_MB=1
PAGE = 4096


def page_aligned(nbytes: int) -> np.ndarray:
    """`nbytes` zeroed bytes of pageable memory from a page boundary (the
    array keeps its allocation alive: its base)."""
    raw = np.zeros(nbytes + PAGE, np.uint8)
    start = -raw.ctypes.data % PAGE
    return raw[start:start + nbytes]


@contextlib.contextmanager
def registered(runtime, a: np.ndarray, ranges):
    """The byte ranges (offset, size) of `a` registered in place by CuPy's
    `runtime` (1: cudaHostRegisterPortable, locked for every device's
    copies) while inside, unregistered after."""
    for offset, size in ranges:
        runtime.hostRegister(a.ctypes.data + offset, size, 1)
    try:
        yield
    finally:
        for offset, _ in ranges:
            runtime.hostUnregister(a.ctypes.data + offset)


def check(op, a, methods, what):
    want = numpy_answer(op, a)
    for method in methods:
        got = getattr(cudareduce, op)(a, method)
        assert same(op, got, want), (what, method, got, want)


def boundaries(rng):
    for dtype in DTYPES:
        chunk = CHUNK_BYTES // dtype.itemsize
        for n in (1, chunk - 1, chunk, chunk + 1, 3 * chunk + 7):
            a = integer_values(rng, n, dtype)
            for op in OPS:
                check(op, a, METHODS, f"{op} {dtype} n={n}")


def layouts(rng):
    chunk = CHUNK_BYTES // 4
    base = integer_values(rng, 6 * chunk + 11, np.int32)
    square = base[:2048 * 768].reshape(2048, 768)
    views = {
        "step 3": base[::3], "reversed": base[::-1], "offset": base[5:],
        "transpose": square.T, "fortran": np.asfortranarray(square),
        "column block": square[:, 100:700:7],
        "negative 2-d": square[::-2, ::-3],
        "broadcast": np.broadcast_to(base[:1000], (1500, 1000)),
        "3-d": base[:60 * 70 * 80].reshape(60, 70, 80).transpose(2, 0, 1)
        [::2],
    }
    for name, view in views.items():
        assert view.base is not None or name == "fortran"
        for op in OPS:
            check(op, view, ("fast", "sequential", "cub"), f"{op} {name}")
    for dtype in DTYPES:
        strided = integer_values(rng, 3 * chunk, dtype)[::2]
        for op in OPS:
            check(op, strided, ("fast",), f"{op} strided {dtype}")


def threads(rng, elements=2 * (CHUNK_BYTES // 8)):
    """8 Python threads, each with its own array (and so its own ring)."""
    arrays = [integer_values(rng, elements + 1000 * k, np.int64)
              for k in range(8)]
    views = [a if k % 2 else a[::-1] for k, a in enumerate(arrays)]
    sums = [int(np.sum(a)) for a in arrays]
    failures = []
    barrier = threading.Barrier(8)

    def work(k):
        barrier.wait()
        for rep in range(20):
            method = METHODS[(k + rep) % len(METHODS)]
            got = int(cudareduce.sum(views[k], method))
            if got != sums[k]:
                failures.append((k, rep, method, got, sums[k]))

    pool = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not failures, failures[:5]


def threads_default(rng):
    """As threads, with the default ring: chunks split among the staging
    threads of 8 rings at once (5 chunks and a tail each)."""
    threads(rng, elements=5 * (16 << 20) // 8 + 12345)


def idle(rng):
    """Staging threads spin between the chunks of a call, then sleep: once
    a call is over, the process uses (almost) no CPU."""
    a = integer_values(rng, 3 * (16 << 20) // 4 + 5, np.int32)
    assert int(cudareduce.sum(a)) == int(np.sum(a))
    time.sleep(0.2)                 # spins end 2 ms after the call
    cpu = time.process_time()
    time.sleep(1.0)
    used = time.process_time() - cpu
    assert used < 0.1, f"{used:.3f} s of CPU in 1 s of idle time"


def locked(rng):
    """Arrays whose pages are locked are copied from where they are, not
    staged (cuda/host/host_path.cu, locked_start): memory from
    cudaHostAlloc (CuPy's pinned memory, a pinned tensor) and pageable
    memory registered in place; each gives the bits of a pageable copy of
    the same data, across chunk edges, in the ring's every slot many times
    over, for every method.  A view of locked memory whose elements are
    not contiguous is staged; so is an array only partly registered, and
    one registered at its two ends only from the first chunk whose copy
    the driver refuses (cudaErrorInvalidValue: the range is not all
    locked)."""
    import cupy
    import torch
    runtime = cupy.cuda.runtime

    def pinned(n, dtype):
        # The array keeps its pinned memory alive (its base).
        memory = cupy.cuda.alloc_pinned_memory(max(n, 1) * dtype.itemsize)
        return np.frombuffer(memory, dtype, n)

    def same_bits(a, what, ops=OPS, methods=METHODS):
        pageable = a.copy(order="K")
        for op in ops:
            want = numpy_answer(op, pageable)
            for method in methods:
                got = getattr(cudareduce, op)(a, method)
                assert same(op, got, want), (what, op, method, got, want)
                assert np.asarray(got).tobytes() == np.asarray(
                    getattr(cudareduce, op)(pageable, method)).tobytes(), \
                    (what, op, method)

    for dtype in DTYPES:
        chunk = CHUNK_BYTES // dtype.itemsize
        for n in (1, chunk - 1, chunk, chunk + 1, 7 * chunk + 7):
            a = pinned(n, dtype)
            a[...] = integer_values(rng, n, dtype)
            same_bits(a, f"pinned {dtype} n={n}")
    chunk = CHUNK_BYTES // 4
    base = pinned(6 * chunk + 11, np.dtype(np.int32))
    base[...] = integer_values(rng, base.size, np.int32)
    for name, view in {"offset": base[5:], "reversed": base[::-1],
                       "step 2": base[::2],
                       "2-d": base[:2048 * 768].reshape(2048, 768).T}.items():
        same_bits(view, f"pinned {name}", ("sum", "max"), ("fast",))
        assert int(cudareduce.argmax(view)) == int(np.argmax(view)), name
    floats = torch.from_numpy(
        integer_values(rng, 5 * chunk + 3, np.float32)).pin_memory()
    same_bits(floats.numpy(), "a pinned tensor", ("sum",), ("fast",))
    exact = cudareduce.sum(floats.numpy(), exact=True)
    assert exact.tobytes() == cudareduce.sum(
        floats.numpy().copy(), exact=True).tobytes()
    assert float(exact) == float(np.float32(math.fsum(
        floats.numpy().astype(np.float64))))

    a = page_aligned(8 * chunk * 4).view(np.int32)
    a[...] = integer_values(rng, a.size, np.int32)
    for ranges, what in (([(0, a.nbytes)], "registered in place"),
                         ([(0, a.nbytes // 2)], "half registered"),
                         ([(0, PAGE), (a.nbytes - PAGE, PAGE)],
                          "registered at its ends")):
        with registered(runtime, a, ranges):
            same_bits(a, what, ("sum", "min"), ("fast",))


def take_device_memory(cupy) -> list[int]:
    """Every byte of device memory that cudaMalloc will still give, in
    pieces from 1 GiB down to 64 KiB; free them with cupy's runtime.free."""
    hogs = []
    for size in (1 << 30, 1 << 26, 1 << 20, 1 << 16):
        while True:
            try:
                hogs.append(cupy.cuda.runtime.malloc(size))
            except cupy.cuda.runtime.CUDARuntimeError:
                break
    return hogs


def free_device_memory(cupy, hogs: list[int]) -> int:
    """Frees `hogs`; the device's free bytes after."""
    for ptr in hogs:
        cupy.cuda.runtime.free(ptr)
    cupy.cuda.runtime.deviceSynchronize()
    return cupy.cuda.runtime.memGetInfo()[0]


def failure(rng):
    """With the device memory taken before the first call, creating the
    ring fails: a clear exception, nothing left allocated, and once the
    memory is free the next call works.

    The baseline is read after taking all device memory once: the first
    time the device runs out, memory held elsewhere that can be given back
    is (in the GPU suite, after the bench's GPU tests ran in the pytest
    process, 126 MiB more was free after this check than before it, the
    same figures run after run; standalone the check passed), so only a
    second reading compares like with like."""
    import cupy
    a = integer_values(rng, 5 * (CHUNK_BYTES // 4) + 3, np.int32)
    want = int(np.sum(a))
    free_before = free_device_memory(cupy, take_device_memory(cupy))
    hogs = take_device_memory(cupy)
    try:
        for method in ("fast", "multi_element", "cub"):
            try:
                cudareduce.sum(a, method)
            except (MemoryError, cudareduce.CudaError) as error:
                print(f"{method}: {type(error).__name__}: {error}")
            else:
                raise AssertionError(f"{method}: no error without memory")
    finally:
        free_after = free_device_memory(cupy, hogs)
    assert abs(free_before - free_after) < 4 << 20, (free_before, free_after)
    for method in ("fast", "multi_element", "cub"):
        assert int(cudareduce.sum(a, method)) == want
        assert int(cudareduce.sum(a[::2], method)) == int(np.sum(a[::2]))


def mid_stream_failure(rng):
    """A fault injected after chunk k is queued (its copy and reduction in
    flight) raises MemoryError; the failed call frees its ring, pinned and
    device memory alike, and the calls after it are exact.  Run with the
    default ring (64 MiB pinned, 64 MiB on the device), which a successful
    call keeps: that it shows in both measures proves they can see it."""
    import cupy
    rt = cupy.cuda.runtime
    chunk = (16 << 20) // 4
    a = integer_values(rng, 6 * chunk + 12345, np.int32)  # 6 chunks, a tail
    views = {"contiguous": a, "strided": a[::3]}
    want = {name: int(np.sum(view)) for name, view in views.items()}
    cudareduce.sum(cupy.arange(1000, dtype=cupy.int32))  # context, kernels
    total = rt.memGetInfo()[1]

    def usage():
        """(device bytes in use, resident host bytes)."""
        rt.deviceSynchronize()
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return (total - rt.memGetInfo()[0],
                pages * os.sysconf("SC_PAGE_SIZE"))

    def fail_at(k, view):
        cudareduce._cudareduce._inject_host_fault(k)
        try:
            cudareduce.sum(view)
        except MemoryError as error:
            assert "injected" in str(error), error
        else:
            raise AssertionError(f"no error from the fault at chunk {k}")
        finally:
            cudareduce._cudareduce._inject_host_fault(-1)

    # One success and one failure first: what they set up once (lazily
    # loaded kernels, the runtime's own bookkeeping) is not a leak.
    assert int(cudareduce.sum(a)) == want["contiguous"]
    fail_at(0, a)
    base = usage()
    ring, slack = 48 << 20, 8 << 20

    def assert_nothing_left(what):
        after = usage()
        assert all(now <= was + slack for now, was in zip(after, base)), (
            f"{what} left memory behind", base, after)
        return after

    # Chunk 0, chunk 5 (after slots are reused), the tail, a gather.
    for k, name in ((0, "contiguous"), (5, "contiguous"), (6, "contiguous"),
                    (2, "strided")):
        assert int(cudareduce.sum(views[name])) == want[name]
        kept = usage()
        assert all(now >= was + ring for now, was in zip(kept, base)), (
            "the kept ring does not show", base, kept)
        fail_at(k, views[name])
        after = assert_nothing_left(f"fault at chunk {k} of the {name} array")
        print(f"chunk {k} {name}: in use (device, host) {base} -> "
              f"{kept} with the ring -> {after} after the fault")
    # Many failures: a leak of 1 MiB each would pass the slack above.
    for rep in range(16):
        assert int(cudareduce.sum(a)) == want["contiguous"]
        fail_at(rep % 7, a)
    assert_nothing_left("16 faults")
    for method in METHODS:
        for name, view in views.items():
            assert int(cudareduce.sum(view, method)) == want[name], (
                method, name)


def defaults(rng):
    for n in (1000, (1 << 20) // 4, (1 << 20) // 4 + 1, 20 * (1 << 20) + 3):
        a = integer_values(rng, n, np.float32)
        check("sum", a, ("fast", "cub"), f"default ring n={n}")
        check("max", a[::-1], ("multi_element",), f"default ring n={n}")


def larger_than_device(rng):
    """Most of the device memory taken first, then a host array larger than
    what is left: only the ring's chunks are on the device at a time."""
    import cupy
    free, total = cupy.cuda.runtime.memGetInfo()
    placeholder = cupy.cuda.runtime.malloc(free - (3 << 30))
    try:
        # 5 GiB > the 3 GiB left, and not a whole number of 16 MiB chunks
        # (a tail); a random pattern 43 elements longer than a chunk, so
        # every chunk's content differs (a stale ring slot, a chunk taken
        # twice or an offset that wraps at 2^32 changes the sum), and
        # values planted around 2^32.
        pattern = rng.integers(-3, 4, (1 << 24) + 43).astype(np.int8)
        a = np.resize(pattern, (5 << 30) + 12345)
        a[(1 << 32) - 1:(1 << 32) + 2] = (120, -120, 119)
        a[-1] = 127
        want = int(np.sum(a, dtype=np.int64))
        assert int(cudareduce.sum(a)) == want
        assert int(cudareduce.sum(a, "multi_element")) == want
    finally:
        cupy.cuda.runtime.free(placeholder)


if __name__ == "__main__":
    case, seed = sys.argv[1], int(sys.argv[2])
    globals()[case](np.random.default_rng([seed, len(case)]))
    print("ok")
