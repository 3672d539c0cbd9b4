"""pytest-benchmark timings of every method of the ladder, and the peers.

Run (on a machine with a CUDA GPU; without one every benchmark is skipped,
with the reason)::

    python -m pytest benchmarks --benchmark-only

Every ladder method of :func:`cudareduce.methods` is timed at a few sizes
(float32, 256 threads; default n = 2^16, 2^20, 2^24, or set
``CUDAREDUCE_BENCH_SIZES``, e.g. ``CUDAREDUCE_BENCH_SIZES="2^22,2^26"``),
together with ``torch.sum`` and ``cupy.sum`` when they import and see the
GPU.  Benchmarks are grouped by size (``--benchmark-group-by=group``, the
default): one table per n, so the methods of one size compare directly.
Each result is checked against the exact sum before it is timed (the data
are non-zero integers, :func:`cudareduce.bench.random_array`, so one lost
element fails); a wrong method fails instead of being timed.

Save and compare runs::

    python -m pytest benchmarks --benchmark-only --benchmark-save=baseline
    # ... change something, rebuild ...
    python -m pytest benchmarks --benchmark-only --benchmark-compare=0001 \\
        --benchmark-compare-fail=median:10%
    pytest-benchmark compare 0001 0002 --group-by=group --columns=median,iqr

(``--benchmark-save`` writes ``.benchmarks/<machine>/0001_baseline.json``;
``--benchmark-autosave`` numbers runs without a name; ``--benchmark-compare``
with no value compares with the latest saved run; ``--benchmark-json PATH``
exports one run.)

What the timed call includes
----------------------------
pytest-benchmark times a Python call with a wall clock, so the call must
contain the GPU work *and wait for it*.  Each call is therefore a complete,
synchronized reduction:

- **Device-resident mode** (when ``cudareduce.sum`` accepts a CUDA array,
  e.g. a CuPy array through ``__cuda_array_interface__``): the call is
  ``cudareduce.sum(device_array, method)``: every kernel pass plus the copy
  of the one result back to the host, which is what waits for the GPU.  The
  peers are timed the same way: ``torch.sum(t).item()``, ``cupy.sum(x).item()``.
- **Fallback** (neither CuPy nor PyTorch holds a device array): the call is
  ``_cudareduce.time_reduce("sum", a, method, 256, 1, 0, REPS, "launch")``:
  one host-to-device copy of the input, then ``REPS`` (20) synchronized
  reductions.  Its wall time is dominated by the copy, so compare methods by
  ``extra_info`` below, not by the wall-clock columns.

``extra_info["timed_call"]`` names the mode.  Whatever the mode,
``extra_info`` also carries the kernel-only figures of
``python -m cudareduce.bench`` (GPU time behind a stream-holding kernel,
cold: L2 flushed, one run a sample; warm-up, median): ``median_kernel_us``
and ``gbps_kernel`` (bytes read / time), and the back-to-back figure
``batch_kernel_us``; ``gbps_wall`` is bytes read / the benchmark's median call
(device-resident mode and peers only); plus ``n``, ``dtype``, ``threads``,
``bytes``.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import cudareduce
from cudareduce import _cudareduce, bench
from cudareduce.bench.data import is_correct, random_array, reference_result
from cudareduce.bench.ladder import measure_method
from cudareduce.bench.names import peers_of
from cudareduce.bench.policy import rotation_buffers
from cudareduce.bench.sizes import parse_sizes
from cudareduce.bench.timers import load_peer, method_timer

try:
    DEVICE = _cudareduce.device_info()
except cudareduce.CudaError as error:
    pytest.skip(f"needs a CUDA GPU: {error}", allow_module_level=True)

pytestmark = [pytest.mark.gpu,
              pytest.mark.benchmark(warmup=True, warmup_iterations=10,
                                    min_rounds=10, max_time=0.5)]

DTYPE = "float32"
THREADS = 256
REPS = 20
SIZES = parse_sizes(os.environ.get("CUDAREDUCE_BENCH_SIZES")
                          or "2^16,2^20,2^24")
METHODS = list(cudareduce.methods())


def _size_id(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _group(n: int) -> str:
    return f"n={_size_id(n)} ({n:,} {DTYPE})"


class _Input:
    """One size's random host array, its reference sum and device copies."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.n = n
        self.host = random_array(rng, n, DTYPE)
        self.reference = reference_result(self.host)
        self.nbytes = self.host.nbytes
        self.buffers = rotation_buffers(self.nbytes, DEVICE["l2_bytes"],
                                              DEVICE["total_bytes"])
        self._device: dict[str, object] = {}

    def device(self, library: str):
        """The array on the GPU as a `library` ("cupy"/"torch") array."""
        if library not in self._device:
            if library == "cupy":
                import cupy
                self._device[library] = cupy.asarray(self.host)
            else:
                import torch
                self._device[library] = torch.from_numpy(self.host).to(
                    torch.device("cuda", DEVICE["ordinal"]))
        return self._device[library]

    def check(self, value, what: str) -> None:
        if not is_correct(value, self.reference):
            pytest.fail(f"{what} is WRONG at n={self.n}: got {value!r}, "
                        f"expected the exact sum {self.reference}; not "
                        f"timed")


@pytest.fixture(scope="module", params=SIZES, ids=_size_id)
def data(request) -> _Input:
    """One size's input; module-scoped and parametrized, so pytest runs all
    of one size's benchmarks before building the next size's buffers."""
    return _Input(request.param, np.random.default_rng())


def _holder() -> str | None:
    """"cupy" or "torch", the first that imports (device-resident mode),
    else None (fallback mode).  Only a missing library is passed over: any
    other error, and a wrong sum of the probe, fails the benchmark."""
    for library in ("cupy", "torch"):
        try:
            module = __import__(library)
        except ImportError:
            continue
        if library == "cupy":
            probe = module.ones(8, dtype=DTYPE)
        else:
            probe = module.ones(8, dtype=module.float32,
                                device=module.device("cuda",
                                                     DEVICE["ordinal"]))
        got = cudareduce.sum(probe)
        if got != 8:
            pytest.fail(f"cudareduce.sum of eight {library} ones gave "
                        f"{got!r}")
        return library
    return None


@pytest.fixture(scope="module")
def holder():
    return _holder()


def _record(benchmark, data: _Input, timings: dict, mode: str,
            wall: bool) -> None:
    kernel_us = timings["cold_us"]
    info = {"n": data.n, "dtype": DTYPE, "threads": THREADS,
            "bytes": data.nbytes, "timed_call": mode,
            "median_kernel_us": kernel_us,
            "batch_kernel_us": timings["batch_us"],
            "gbps_kernel": data.nbytes / (kernel_us * 1e3)}
    stats = getattr(benchmark, "stats", None)
    if wall and stats is not None:
        info["gbps_wall"] = data.nbytes / (stats.stats.median * 1e9)
    benchmark.extra_info.update(info)


@pytest.mark.parametrize("method", METHODS)
def test_method(benchmark, data: _Input, holder, method: str) -> None:
    n = data.n
    benchmark.group = _group(n)
    timings = measure_method(method_timer(method, THREADS),
                                   data.host, data.reference, data.buffers)
    if timings is None:
        pytest.fail(f"{method} is WRONG at n={n}; not timed")

    if holder is not None:
        x = data.device(holder)
        data.check(cudareduce.sum(x, method, threads=THREADS), method)
        mode = (f"device-resident: cudareduce.sum({holder} array) incl. the "
                f"result's copy back")
        benchmark(cudareduce.sum, x, method, threads=THREADS)
    else:
        mode = (f"fallback: time_reduce = 1 host-to-device copy + {REPS} "
                f"synchronized reductions per call")
        benchmark(_cudareduce.time_reduce, "sum", data.host, method, THREADS,
                  1, 0, REPS, "launch")
    _record(benchmark, data, timings, mode, wall=holder is not None)


@pytest.mark.parametrize("peer", peers_of("sum"))
def test_peer(benchmark, data: _Input, peer: str) -> None:
    timer, why = load_peer(peer, DEVICE["ordinal"], DTYPE)
    if timer is None:
        pytest.skip(f"{peer} unavailable: {why}")
    n = data.n
    benchmark.group = _group(n)
    timings = measure_method(timer, data.host, data.reference,
                                   data.buffers)
    if timings is None:
        pytest.fail(f"{peer} is WRONG at n={n}; not timed")
    if peer == "torch.sum":
        import torch
        x = data.device("torch")

        def call():
            return torch.sum(x).item()
    else:
        import cupy
        x = data.device("cupy")

        def call():
            return cupy.sum(x).item()
    data.check(call(), peer)
    benchmark(call)
    _record(benchmark, data, timings,
            f"device-resident: {peer}(device array).item()", wall=True)

