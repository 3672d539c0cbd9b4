"""Reliability on the GPU (issue 8): no sticky state after errors, out of
memory as an exception, many Python threads at once, the GIL released
during a reduction, and property tests against NumPy on CuPy arrays.

Every test needs a device (and CuPy: skipped without it, which
``.ci/gpu-check`` reports as a failure).  Whatever could take the
interpreter down with it (exhausting device memory, a destroyed stream
handle) runs in a subprocess, so that a crash fails one test, not the run.
Data are integer-valued, so that every sum is exact in every accumulator
and a result can be compared with NumPy's for equality.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudareduce
from cudareduce import _cudareduce
from support.api_contract import block_sizes
from support import fault_origin
from support.dlpack_capsules import DLPackOnly
from support.exact_data import integer_values, numpy_answer, same

pytestmark = pytest.mark.gpu

METHODS = tuple(cudareduce.methods())
OPS = ("sum", "mean", "min", "max")
THREADS = (64, 128, 256, 512, 1024)
DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.float16, np.float32, np.float64))
# A pointer that is no allocation of this process: never dereferenced, and
# away from the 0x7f... range where CUDA and the host heap map theirs.
FAKE_POINTER = 0x3C3C_0000_0000


class CAI:
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


def run_script(code: str, timeout: float = 300,
               env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env=env)


def script_report(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, (
        f"exit {done.returncode} (negative: killed by that signal)\n"
        f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}")
    lines = [line for line in done.stdout.splitlines()
             if line.startswith("REPORT ")]
    assert lines, done.stdout + done.stderr
    return json.loads(lines[-1][len("REPORT "):])


# --- no sticky state ----------------------------------------------------------

def test_errors_leave_no_sticky_state(cupy, rng, seed_note):
    """Each error, then a valid call of the next method: every valid call
    gives NumPy's answer, so no error leaves anything behind (a poisoned
    context, a checked-out workspace, a half-armed counter)."""
    host = integer_values(rng, 100_003, np.int32)
    device = cupy.asarray(host)
    host_f4 = np.ones(1000, np.float32)
    pinned = cupy.cuda.alloc_pinned_memory(4096)
    d4 = device.data.ptr

    def interface(pointer, shape=(5,), typestr="<i4", **extra):
        return CAI({"shape": shape, "typestr": typestr,
                    "data": (pointer, False), "version": 3, **extra})

    # A capsule a consumer has already taken (NumPy renames it).
    used = np.arange(3.0).__dlpack__()
    np.from_dlpack(type("Once", (), {
        "__dlpack__": lambda self, **k: used,
        "__dlpack_device__": lambda self: (1, 0)})())

    errors = [
        ("unknown method", lambda: cudareduce.sum(device, "nope"),
         ValueError),
        ("host pointer", lambda: cudareduce.sum(
            interface(host_f4.ctypes.data, typestr="<f4")), ValueError),
        ("pinned pointer", lambda: cudareduce.sum(
            interface(pinned.ptr, typestr="<f4")), ValueError),
        ("unmapped pointer", lambda: cudareduce.max(
            interface(FAKE_POINTER)), ValueError),
        ("misaligned device pointer", lambda: cudareduce.sum(
            interface(d4 + 2)), ValueError),
        ("backwards strides whose extent overflows", lambda: cudareduce.sum(
             interface(d4, strides=(-2 ** 62,))), ValueError),
        ("dtype refused", lambda: cudareduce.sum(device,
                                                 dtype=np.clongdouble),
         TypeError),
        ("min of empty", lambda: cudareduce.min(device[:0]), ValueError),
        ("misaligned complex128 device array", lambda: cudareduce.sum(
            interface(d4 + 8, typestr="<c16")), ValueError),
        ("used DLPack capsule", lambda: cudareduce.sum(type("Used", (), {
            "__dlpack__": lambda self, **k: used,
            "__dlpack_device__": lambda self: (2, 0)})()), ValueError),
        ("bad threads", lambda: cudareduce.sum(device, threads=96),
         ValueError),
    ]
    strided = host[::-3]
    valid = [
        (lambda m: cudareduce.sum(device, m), np.sum(host)),
        (lambda m: cudareduce.max(device[::-3], m), np.max(strided)),
        (lambda m: cudareduce.sum(host, m), np.sum(host)),
        (lambda m: cudareduce.min(DLPackOnly(device[7:]), m),
         np.min(host[7:])),
        (lambda m: cudareduce.sum(host[::2], m), np.sum(host[::2])),
    ]
    step = 0
    for _ in range(3):
        for name, call, error in errors:
            with pytest.raises(error):
                call()
            method = METHODS[step % len(METHODS)]
            run, want = valid[step % len(valid)]
            got = run(method)
            assert got == want and type(got) is type(want), (
                f"after {name!r}: {method} gave {got!r}, NumPy {want!r} "
                f"{seed_note}")
            step += 1


def test_destroyed_stream_handle_is_not_a_crash(tmp_path):
    """A stream handle that no longer names a stream: CUDA cannot always
    tell (using one is undefined behaviour in CUDA itself), so the library
    cannot check it either.  What is required: a Python-level outcome (an
    error, or a right answer), and a library that works afterwards.  If the
    process dies of a fault inside the CUDA driver (libcuda.so, told by
    tests/support/c/fault_origin.c), that is recorded as an expected failure (on
    .ci/xfail-allowlist); a fault anywhere else fails."""
    done = run_script(env=fault_origin.environment(
        fault_origin.build(tmp_path)), code="""
        import gc, json
        import cupy, numpy as np, cudareduce
        x = cupy.asarray(np.arange(100_000, dtype=np.int64))
        want = int(np.arange(100_000).sum())
        stream = cupy.cuda.Stream(non_blocking=True)
        handle = stream.ptr
        del stream
        gc.collect()
        report = {}
        try:
            got = cudareduce.sum(x, stream=handle)
            report["outcome"] = "result"
            report["right"] = int(got) == want
        except (cudareduce.CudaError, ValueError) as error:
            report["outcome"] = type(error).__name__
            report["message"] = str(error)
        report["after"] = [int(cudareduce.sum(x, m)) == want
                           for m in cudareduce.methods()]
        print("REPORT " + json.dumps(report))
        """)
    if done.returncode == fault_origin.FAULT_IN_DRIVER:
        pytest.xfail(f"the CUDA driver dereferenced the destroyed stream "
                     f"handle: undefined behaviour in CUDA, which no library "
                     f"can check\n{done.stderr[-2000:]}")
    report = script_report(done)
    assert report.get("right", True), report
    assert all(report["after"]), report


# --- out of device memory -----------------------------------------------------

OOM_SCRIPT = """
import json
import cupy, numpy as np, cudareduce

rt = cupy.cuda.runtime
report = {"phases": []}

# Load the kernels (int32 and int64 sums, the gather) and make the fast
# method's workspace on device data first, so that what runs out below is
# the memory a call asks for, not the module loading.  The host ring is NOT
# made yet: a host call has to allocate it (3 x 32 MiB by default).
x_host = np.arange(1 << 26, dtype=np.int32) % 1000         # 256 MiB
x = cupy.asarray(x_host)
host = (np.arange(1 << 24, dtype=np.int64) % 1000)          # 128 MiB
warm = cupy.asarray(host[:100_000])
for method in cudareduce.methods():
    cudareduce.sum(x[:100_000], method)
    cudareduce.sum(x[:100_000:2], method)
    cudareduce.sum(warm, method)
del warm
want = {"host": int(host.sum()), "gather": int(x_host[::2].sum()),
        "device": int(x_host.sum())}
cupy.cuda.Device().synchronize()
cupy.get_default_memory_pool().free_all_blocks()

def hog(margin):
    # Raw cudaMalloc outside CuPy's pool, largest blocks first, until
    # less than `margin` is left.
    blocks, size = [], 1 << 40
    while True:
        free = rt.memGetInfo()[0]
        size = min(size, free - margin)
        if size < (1 << 20):
            return blocks
        try:
            blocks.append(rt.malloc(size))
        except rt.CUDARuntimeError:
            size //= 2

def attempt(name, call):
    try:
        got = int(call())
        report["phases"].append([name, "result", got == want[name]])
    except (MemoryError, cudareduce.CudaError) as error:
        report["phases"].append([name, type(error).__name__, str(error)])

blocks = hog(margin=8 << 20)
report["free_while_hogged"] = rt.memGetInfo()[0]
attempt("host", lambda: cudareduce.sum(host))            # the ring
attempt("gather", lambda: cudareduce.sum(x[::2]))        # 128 MiB gather
attempt("host", lambda: cudareduce.sum(host, "cub"))
for block in blocks:
    rt.free(block)
del blocks
report["after"] = {
    "host": [int(cudareduce.sum(host, m)) == want["host"]
             for m in cudareduce.methods()],
    "gather": [int(cudareduce.sum(x[::2], m)) == want["gather"]
               for m in cudareduce.methods()],
    "device": [int(cudareduce.sum(x, m)) == want["device"]
               for m in cudareduce.methods()],
}
print("REPORT " + json.dumps(report))
"""


@pytest.mark.whole_gpu
def test_a_big_buffer_goes_back_to_the_driver(cupy):
    """cudareduce's memory pools keep 64 MiB between calls
    (cuda/memory/pool.cuh), not what a big call took: after the 1 GiB
    gather buffer of a strided view (every method) and a synchronisation,
    the device has as much free as before, less those 64 MiB (and the
    pool's 2 MiB grain)."""
    rt = cupy.cuda.runtime
    x = cupy.ones(1 << 29, cupy.float32)[::2]
    for method in cudareduce.methods():
        cudareduce.sum(x[:4096], method)        # the pool, the kernels
    rt.deviceSynchronize()
    before = rt.memGetInfo()[0]
    for method in cudareduce.methods():
        assert int(cudareduce.sum(x, method)) == 1 << 28, method
        rt.deviceSynchronize()
        taken = before - rt.memGetInfo()[0]
        assert taken <= (66 << 20), (method, taken >> 20)


@pytest.mark.whole_gpu
def test_out_of_memory_is_an_exception_and_recoverable():
    """Nearly all device memory taken: a call that needs more raises
    MemoryError (or CudaError), never aborts; once the memory is free the
    same calls give the right answers, with every method."""
    report = script_report(run_script(OOM_SCRIPT, timeout=600))
    outcomes = [phase[1] for phase in report["phases"]]
    assert set(outcomes) <= {"MemoryError", "CudaError", "result"}, report
    for name, outcome, detail in report["phases"]:
        if outcome == "result":
            assert detail is True, f"wrong result while memory was short: " \
                                   f"{report}"
    assert "MemoryError" in outcomes, (
        f"memory was not exhausted after all (free: "
        f"{report['free_while_hogged']} bytes): {report}")
    for kind, rights in report["after"].items():
        assert all(rights), (kind, report)


# --- many Python threads --------------------------------------------------------

def test_eight_threads_of_mixed_calls_are_exact(cupy, rng, seed_note):
    """8 Python threads x 500 calls: methods, operators, dtypes, sizes,
    device (contiguous, strided, DLPack) and host inputs, and streams (none,
    the thread's own CuPy stream as an object or a handle, the legacy
    default stream): every result is NumPy's."""
    cases = []
    for dtype in (np.int32, np.int64, np.uint8, np.int16, np.float32,
                  np.float64, np.bool_):
        for n in (1, 1000, 65_537, 1 << 20):
            host = integer_values(rng, n, dtype)
            device = cupy.asarray(host)
            cases.append(("device", device, host))
            cases.append(("host", host, host))
            if n > 1:
                cases.append(("strided", device[::-3], host[::-3]))
                cases.append(("dlpack", DLPackOnly(device[1:]), host[1:]))
    cupy.cuda.Device().synchronize()
    device = cupy.cuda.runtime.getDevice()
    expected = {(index, op): numpy_answer(op, host)
                for index, (_, _, host) in enumerate(cases) for op in OPS}
    threads_count, calls = 8, 500
    failures = []
    start = threading.Barrier(threads_count)

    def work(worker):
        local = np.random.default_rng([worker, int(rng.integers(1 << 30))])
        # A new thread starts with device 0 current: the data's device is
        # made current, so that its stream is one of that device.
        cupy.cuda.runtime.setDevice(device)
        stream = cupy.cuda.Stream(non_blocking=True)
        streams = [None, stream, stream.ptr, 0]
        start.wait()
        for call in range(calls):
            index = int(local.integers(len(cases)))
            kind, obj, _ = cases[index]
            op = OPS[int(local.integers(len(OPS)))]
            method = METHODS[int(local.integers(len(METHODS)))]
            taken = block_sizes(op, cases[index][2].dtype, method)
            threads = taken[int(local.integers(len(taken)))]
            chosen = streams[int(local.integers(len(streams)))]
            try:
                got = getattr(cudareduce, op)(obj, method, threads=threads,
                                              stream=chosen)
            except Exception as error:  # noqa: BLE001 - collected
                failures.append((worker, call, kind, op, method, threads,
                                 repr(error)))
                continue
            want = expected[(index, op)]
            if not same(op, got, want):
                failures.append((worker, call, kind, op, method, threads,
                                 f"got {got!r}, NumPy {want!r}"))
        stream.synchronize()

    workers = [threading.Thread(target=work, args=(w,))
               for w in range(threads_count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=600)
    assert not any(worker.is_alive() for worker in workers), "hung"
    assert not failures, f"{len(failures)} failures, first {failures[:5]} " \
                         f"{seed_note}"


@pytest.mark.parametrize("method", ["fast", "interleaved_divergent"])
@pytest.mark.parametrize("kind", ["device", "host"])
def test_a_reduction_waiting_for_the_gpu_releases_the_gil(cupy, kind,
                                                          method):
    """While this thread is inside a reduction whose stream a kernel holds
    (the bench's stream holder), another Python thread lets the stream go
    after 50 ms, which it can only do while the call has released the
    GIL.  A call that held it would keep the stream held until the holding
    kernel gave up (10 s), and release_stream would then raise; a stand-in
    that waits so (the driver's cuStreamSynchronize through ctypes.PyDLL)
    took 10.0 s and made it raise, where cudareduce.sum took 0.05 s (H100,
    2026-11-26).  Timing the other thread's progress instead, by its clock
    stamps inside each call, failed once under the GPU suite's 14 workers:
    the OS left that thread unscheduled for a whole call."""
    n = 1 << 24     # from the host: 4 chunks through the ring
    x = np.ones(n, dtype=np.float32)
    if kind == "device":
        x = cupy.asarray(x)
    stream = cupy.cuda.Stream(non_blocking=True)
    # Unheld first: a kernel's first launch loads its module, which waits
    # for the device (and so would wait for the holding kernel).
    assert cudareduce.sum(x, method, stream=stream) == n
    holder = _cudareduce.stream_hold(stream.ptr)
    released, errors = [], []

    def release():
        time.sleep(0.05)
        released.append(time.perf_counter())
        try:
            _cudareduce.release_stream(holder)
        except cudareduce.CudaError as error:
            errors.append(error)

    releaser = threading.Thread(target=release)
    _cudareduce.hold_stream(holder, False)
    releaser.start()
    try:
        called = time.perf_counter()
        got = cudareduce.sum(x, method, stream=stream)
        returned = time.perf_counter()
    finally:
        releaser.join(timeout=60)
    assert got == n
    assert not releaser.is_alive() and released, "the release never ran"
    assert not errors, f"the call held the GIL while it waited: {errors}"
    assert called < released[0] < returned, (
        "the call did not wait for its held stream: it proves nothing")


# --- properties against NumPy on CuPy arrays -------------------------------------

VIEWS_1D = ["all", "reverse", "offset", "step2", "back3"]
VIEWS_2D = ["all", "transpose", "columns", "flip-rows", "inner"]


def view(a, name):
    return {"all": lambda: a, "reverse": lambda: a[::-1],
            "offset": lambda: a[1:], "step2": lambda: a[::2],
            "back3": lambda: a[::-3], "transpose": lambda: a.T,
            "columns": lambda: a[:, ::2], "flip-rows": lambda: a[::-1, 1:],
            "inner": lambda: a[1:-1, 1:-1]}[name]()


# CuPy 14.2's DLPack export of a view with negative strides carries
# strides that are no element counts (the library refuses them: "DLPack
# strides overflow", seen on the H100 machine); such views go through the
# CUDA array interface only.
BACKWARDS_VIEWS = {"reverse", "back3", "flip-rows"}


@st.composite
def cupy_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    protocol = draw(st.sampled_from(["cai", "dlpack"]))
    allowed = (lambda names: names if protocol == "cai" else
               [v for v in names if v not in BACKWARDS_VIEWS])
    if draw(st.booleans()):
        shape = (draw(st.one_of(st.integers(0, 5000),
                                st.sampled_from([70_001, (1 << 20) + 3]))),)
        name = draw(st.sampled_from(allowed(VIEWS_1D)))
    else:
        shape = (draw(st.integers(0, 300)), draw(st.integers(0, 300)))
        name = draw(st.sampled_from(allowed(VIEWS_2D)))
    return (dtype, shape, name, draw(st.integers(0, 2 ** 32 - 1)), protocol)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture])
@given(case=cupy_cases(), op=st.sampled_from(OPS),
       method=st.sampled_from(METHODS), threads=st.sampled_from(THREADS),
       on_stream=st.booleans())
def test_cupy_arrays_match_numpy(cupy, case, op, method, threads, on_stream):
    dtype, shape, name, seed, protocol = case
    rng = np.random.default_rng(seed)
    host = integer_values(rng, int(np.prod(shape)), dtype).reshape(shape)
    device = view(cupy.asarray(host), name)
    host = view(host, name)
    obj = DLPackOnly(device) if protocol == "dlpack" else device
    stream = cupy.cuda.Stream(non_blocking=True) if on_stream else None
    fn = getattr(cudareduce, op)
    where = (op, method, threads, dtype, shape, name, protocol, seed)
    if host.size == 0 and op in ("min", "max"):
        with pytest.raises(ValueError, match="zero-size array"):
            fn(obj, method, threads=threads, stream=stream)
        return
    if threads not in block_sizes(op, dtype, method):
        with pytest.raises(ValueError, match="cudareduce.block_sizes"):
            fn(obj, method, threads=threads, stream=stream)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = fn(obj, method, threads=threads, stream=stream)
    want = numpy_answer(op, host)
    assert same(op, got, want), (where, got, want)
