"""What the bench's offline tests share.

- A synthetic schema-2 document (:func:`synthetic_document`): every figure
  comes from a formula with round parameters (:data:`SYNTHETIC_GBPS` and
  the fixed costs below) for a "synthetic device (test fixture, not
  measured)"; nothing in it was timed.  ``tests/bench/data/bench_sample.json`` is
  its default output, written by ``python tests/support/bench_data.py`` (a test
  checks that the two agree), and the ``sample`` / ``results`` fixtures
  read it.
- Small builders: :func:`row` (one result), :func:`probe_row`,
  :func:`document` (a valid document around given rows).
- The method lists the tests expect, matplotlib when it is installed, a
  child Python that imports the same cudareduce.
- A fake device for ``bench.run`` (:class:`FakeDevice`, :class:`FakePeer`,
  the ``fake_device`` and ``fake_device_arrays`` fixtures), with the
  extension's signatures: ``device_info()``, ``time_reduce(op, a, method,
  threads, buffers, warmup, reps, mode, batch=1)`` and ``time_probe(probe,
  nbytes, buffers, warmup, reps, mode, batch=1)``.
- Hand-made ``--peers`` and ``--host`` documents, and a ``--counters``
  one from a recorded profile (:func:`counters_document`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cudareduce
from cudareduce import _cudareduce
from cudareduce.bench import figures, names, schema
from cudareduce.bench import counters, data, host, ladder, peers
from cudareduce.bench.results import Results

try:
    import matplotlib.figure

    from cudareduce.bench import plot
except ImportError:          # the plots need matplotlib; the rest does not
    matplotlib = plot = None

needs_matplotlib = pytest.mark.skipif(
    plot is None, reason="matplotlib is not installed (pip install matplotlib)")

#: The bench tests' data folder.
DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
SAMPLE_PATH = DATA / "bench_sample.json"
#: ncu's CSV of every method, float32, n = 2^22, 256 threads, on an H100
#: (tests/bench/test_counters_offline.py reads it and its 2^26 sibling).
NCU_RECORDING = DATA / "ncu-h100-float32-2p22.csv"
#: The committed recording the README's figures and the notebook show by
#: default: a GPU run (``python docs/make_figures.py``) of the current
#: schema, which the committed figures are redrawn from without a GPU
#: (``--from``; test_make_figures_offline checks that they are).
RECORDING_PATH = Path(__file__).resolve().parents[2] / "docs" / \
    "figures" / "ladder.json"
#: Every method of ours, in the extension's order: the seven ladder steps,
#: then ``fast`` and ``cub``.
METHODS = list(cudareduce.methods())
#: The steps of the step-speedup chain: every method but ``cub`` (the bench's
#: reference), i.e. the ladder and then ``fast`` as step 8.
STEPS = [m for m in METHODS if m != "cub"]
#: The seven published steps (what the reference tables measured).
LADDER = STEPS[:7]
#: The other libraries' sums, in the bench's order.
PEERS = ["torch.sum", "cupy.sum"]
#: Each op's peers, as the bench names them (torch has no nanprod, nanmin,
#: nanmax, nanargmin, nanargmax; CuPy's nanmin and nanmax wait for the
#: device inside the call, its nanargmin and nanargmax do not).
OP_PEERS = {"sum": ["torch.sum", "cupy.sum"],
            "prod": ["torch.prod", "cupy.prod"],
            "mean": ["torch.mean", "cupy.mean"],
            "min": ["torch.amin", "cupy.min"],
            "max": ["torch.amax", "cupy.max"],
            "any": ["torch.any", "cupy.any"],
            "all": ["torch.all", "cupy.all"],
            "nansum": ["torch.nansum", "cupy.nansum"],
            "nanprod": ["cupy.nanprod"], "nanmin": [], "nanmax": [],
            "nanmean": ["torch.nanmean"],
            "argmin": ["torch.argmin", "cupy.argmin"],
            "argmax": ["torch.argmax", "cupy.argmax"],
            "nanargmin": ["cupy.nanargmin"],
            "nanargmax": ["cupy.nanargmax"]}
#: Every row of a full sample group, in table order: steps, cub, peers.
TABLE_ORDER = STEPS + ["cub"] + PEERS
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------
# The synthetic document


#: The synthetic device, as the extension's ``device_info()`` reports one
#: (clocks in kHz, versions as integers), with nvidia-smi's driver string.
SYNTHETIC_DEVICE = {
    "ordinal": 0, "name": "synthetic device (test fixture, not measured)",
    "compute_capability": 90, "sm_count": 132, "l2_bytes": 50 << 20,
    "total_bytes": 80 << 30, "sm_clock_khz": 1_980_000,
    "memory_clock_khz": 2_619_000, "memory_bus_bits": 5120,
    "driver_version": 13000, "runtime_version": 13000,
    "cccl_version": 3_000_001, "driver": "580.159.04"}
SYNTHETIC_DATE = "2000-01-01T00:00:00Z"
SYNTHETIC_VERSION = "0.1.0"
SYNTHETIC_TIMING = {
    "method": "synthetic: every figure is a formula of the test fixture, "
              "nothing was timed",
    "default_n": 1 << 22,
    "default_n_rule": "default n = 2^22: fixed by the test fixture"}
#: Each method's streaming rate in the formulas, GB/s: each step faster
#: than the one before, fast the fastest, cub just behind it.
SYNTHETIC_GBPS = {
    "interleaved_divergent": 250.0, "interleaved_bank_conflict": 400.0,
    "sequential": 550.0, "first_add": 900.0, "unroll_warp": 1100.0,
    "unroll_complete": 1200.0, "multi_element": 1700.0, "fast": 2000.0,
    "cub": 1900.0, "torch.sum": 1200.0, "cupy.sum": 1000.0}
#: A method's fixed cost per call, µs: cold, back to back, and what a
#: Python call adds.
FIXED_COLD_US, FIXED_BATCH_US, CALL_EXTRA_US = 4.0, 2.0, 10.0
#: The read probe's fixed cost (µs) and rate (GB/s), cold and back to back;
#: the empty kernel is its fixed cost.
READ_FIXED_COLD_US, READ_FIXED_BATCH_US = 2.5, 1.0
READ_COLD_GBPS, READ_BATCH_GBPS = 3000.0, 3100.0
#: The floor's large size.
READ_BYTES = 1 << 30
#: Each later pass of a multi-pass plan (partials only) takes this long,
#: and the passes together this much less than the whole cold run.
LATER_PASS_US, PASS_GAP_US = 1.5, 0.5
#: The sample's groups: float32 at these sizes with every method and both
#: peers, int32 at 2^22 without the peers; one WRONG row.
SAMPLE_FLOAT32 = tuple(1 << k for k in (16, 18, 20, 22, 24))
SAMPLE_INT32 = (1 << 22,)
SAMPLE_WRONG = (("unroll_complete", "float32", 1 << 16),)


def _us(nbytes: int, fixed_us: float, rate_gbps: float) -> float:
    """`fixed_us` plus `nbytes` at `rate_gbps`, to the nanosecond."""
    return round(fixed_us + nbytes / (rate_gbps * 1e3), 3)


def synthetic_passes(method: str, dtype: str, n: int, threads: int,
                     cold_us: float) -> list[float]:
    """The per-pass times of the formulas: ``[]`` for cub and the peers,
    else one per pass of ``cudareduce.plan`` on the synthetic device, the
    later ones :data:`LATER_PASS_US` each, the first the rest of the cold
    time less :data:`PASS_GAP_US`."""
    if names.is_reference(method):
        return []
    count = len(cudareduce.plan(n, method, threads=threads, dtype=dtype,
                                sm_count=SYNTHETIC_DEVICE["sm_count"]))
    later = [LATER_PASS_US] * (count - 1)
    return [round(cold_us - sum(later) - PASS_GAP_US, 3)] + later


def synthetic_result(method: str, dtype: str, n: int, threads: int = 256,
                     correct: bool = True) -> dict:
    """One result of the formulas; cupy.sum has no call time (as when its
    call could not be held on the device)."""
    nbytes = n * np.dtype(dtype).itemsize
    cold = _us(nbytes, FIXED_COLD_US, SYNTHETIC_GBPS[method])
    return schema.make_result(
        method, dtype, n, threads, cold_us=cold,
        batch_us=_us(nbytes, FIXED_BATCH_US, SYNTHETIC_GBPS[method] * 1.1),
        call_us=None if method == "cupy.sum"
        else round(cold + CALL_EXTRA_US, 3),
        pass_us=synthetic_passes(method, dtype, n, threads, cold),
        reps=1000 if nbytes < 1 << 24 else 200, correct=correct)


def probe_row(nbytes: int) -> dict:
    """The read probe of the formulas at `nbytes`."""
    return {"bytes": nbytes,
            "read_cold_us": _us(nbytes, READ_FIXED_COLD_US, READ_COLD_GBPS),
            "read_batch_us": _us(nbytes, READ_FIXED_BATCH_US,
                                 READ_BATCH_GBPS)}


def synthetic_floor() -> dict:
    """The floor of the formulas: the empty kernel is the read probe's
    fixed cost, the ceiling its rate at :data:`READ_BYTES`."""
    big = probe_row(READ_BYTES)
    return {"empty_cold_us": READ_FIXED_COLD_US,
            "empty_batch_us": READ_FIXED_BATCH_US, "read_bytes": READ_BYTES,
            "read_cold_gbps": figures.gbps(READ_BYTES, big["read_cold_us"]),
            "read_batch_gbps": figures.gbps(READ_BYTES, big["read_batch_us"])}


def document(rows: Iterable[dict], **kwargs: Any) -> dict:
    """A valid document around `rows`: the synthetic device, floor and
    timing, and the probes of the formulas at every row's byte count
    (`kwargs` go to ``make_document``: ``version``, ``date``)."""
    rows = list(rows)
    sizes = sorted({schema.result_bytes(r) for r in rows})
    kwargs = {"version": SYNTHETIC_VERSION, "date": SYNTHETIC_DATE, **kwargs}
    return schema.make_document(SYNTHETIC_DEVICE, synthetic_floor(),
                               [probe_row(b) for b in sizes], rows,
                               timing=SYNTHETIC_TIMING, **kwargs)


def synthetic_document(float32_sizes: Sequence[int] = SAMPLE_FLOAT32,
                       int32_sizes: Sequence[int] = SAMPLE_INT32,
                       wrong: Iterable[tuple[str, str, int]] = SAMPLE_WRONG
                       ) -> dict:
    """A whole run of the formulas: at each float32 size every method and
    both peers, at each int32 size every method, in a run's order; the
    (method, dtype, n) of `wrong` WRONG."""
    wrong = set(wrong)
    rows = [synthetic_result(m, dtype, n, correct=(m, dtype, n) not in wrong)
            for dtype, sizes, methods in (("float32", float32_sizes,
                                           TABLE_ORDER),
                                          ("int32", int32_sizes, METHODS))
            for n in sizes for m in methods]
    return document(rows)


def row(method: str, cold_us: float | None, correct: bool = True,
        n: int = 1 << 22, dtype: str = "float32", threads: int = 256,
        reps: int = 100, **timings: Any) -> dict:
    """One result entry, as the bench makes it, from its cold time: by
    default back to back at 0.8x and the call 10 µs more, one pass of 0.9x
    for ours, none for cub and the peers; `timings` (``batch_us``,
    ``call_us``, ``pass_us``) override those."""
    timed = correct and cold_us is not None
    figures = {"batch_us": 0.8 * cold_us if timed else None,
               "call_us": cold_us + 10.0 if timed else None,
               "pass_us": [] if not timed or names.is_reference(method)
               else [0.9 * cold_us], **timings}
    return schema.make_result(method, dtype, n, threads, cold_us=cold_us,
                             reps=reps, correct=correct, **figures)


def write_sample(path: str | os.PathLike = SAMPLE_PATH) -> None:
    """Write the default synthetic document to `path`."""
    schema.write_json(synthetic_document(), path)


@pytest.fixture
def sample() -> dict:
    """The synthetic sample, as read from tests/bench/data/bench_sample.json."""
    with open(SAMPLE_PATH, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def results(sample) -> Results:
    """The sample as a Results."""
    return Results(sample)


@pytest.fixture
def sweep() -> Results:
    """A synthetic float32 sweep like the README's: 2^10..2^28, every method
    and both peers, all correct (209 results)."""
    return Results(synthetic_document(
        float32_sizes=[1 << k for k in range(10, 29)], int32_sizes=(),
        wrong=()))


def no_device():
    """A device query that must not be reached: it fails the test."""
    raise AssertionError("argument errors must be caught before the device")


def child_env(**extra) -> dict:
    """The environment of a child Python that imports the same cudareduce."""
    env = dict(os.environ)
    root = str(Path(cudareduce.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(extra)
    return env


def run_python(code: str, *args: str, **env) -> subprocess.CompletedProcess:
    """`code` in a child Python (child_env); it must exit 0."""
    proc = subprocess.run([sys.executable, "-c", code, *args],
                          capture_output=True, text=True, env=child_env(**env),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def report_tables(text: str) -> list[list[str]]:
    """The tables of a format_table report: lists of lines, each from its
    header row."""
    blocks = text.split("\n\n")[1:]
    return [b.splitlines()[1:] for b in blocks]


# ---------------------------------------------------------------------------
# A fake device for bench.run


#: The fake device's cold time per method, in ms per MB (+ 1 ms): each step
#: faster than the one before, fast the fastest, cub between multi_element
#: and fast.
FAKE_MS = {"interleaved_divergent": 0.007, "interleaved_bank_conflict": 0.006,
           "sequential": 0.005, "first_add": 0.004, "unroll_warp": 0.003,
           "unroll_complete": 0.002, "multi_element": 0.001, "fast": 0.0008,
           "cub": 0.0009}
#: A back-to-back run takes this share of a cold one; a plainly launched
#: one FAKE_LAUNCH_MS more.
FAKE_BATCH_SHARE = 0.8
FAKE_LAUNCH_MS = 0.004
#: The first pass's share of a cold run; the later passes share
#: FAKE_REST_SHARE equally.
FAKE_FIRST_SHARE, FAKE_REST_SHARE = 0.9, 0.05
#: The fake probes: an empty kernel (ms, by mode), the read kernel's fixed
#: ms and GB/s by mode (faster than every method timed the same way: fast
#: streams 1,250 GB/s cold after 0.8 µs), and the pinned host copy's GB/s.
FAKE_EMPTY_MS = {"launch": 0.004, "cold": 0.0005, "batch": 0.0003}
FAKE_READ = {"launch": (0.004, 1200.0), "cold": (0.0005, 1500.0),
             "batch": (0.0003, 1600.0)}
FAKE_HOST_COPY_GBPS = 25.0


class FakeDevice:
    """Stands in for the extension's device functions: reduces with NumPy,
    reports times from formulas, and can be told to be wrong.

    ``reduce_calls`` records ``(method, n, threads, buffers, warmup, reps,
    mode, batch)`` of each ``time_reduce``, ``ops`` its op,
    ``probe_calls`` ``(probe, nbytes, buffers, warmup, reps, mode, batch)``
    of each ``time_probe``, ``sum_calls`` ``(method, threads)`` of each
    call of :meth:`reducer`'s ``"sum"``, ``op_calls`` ``(op, method,
    threads)`` of each of its calls, ``axis_calls`` ``(op, shape, axis)``
    of each along an axis; ``peers`` holds the :class:`FakePeer`
    timers the fixtures' ``load_peer`` made, ``peer_dtypes`` the dtype
    each was loaded for.
    """

    def __init__(self, wrong: Iterable[str] = ()) -> None:
        self.wrong = set(wrong)
        self.reduce_calls: list[tuple] = []
        self.ops: list[str] = []
        self.probe_calls: list[tuple] = []
        self.op_calls: list[tuple] = []
        self.axis_calls: list[tuple] = []
        self.peers: list[FakePeer] = []
        self.peer_dtypes: list[str] = []

    @property
    def sum_calls(self) -> list[tuple]:
        return [(method, threads) for op, method, threads in self.op_calls
                if op == "sum"]

    def device_info(self) -> dict:
        """The extension's keys, with a small GPU's figures."""
        return {"ordinal": 0, "name": "fake GPU", "compute_capability": 80,
                "sm_count": 4, "l2_bytes": 1 << 20, "total_bytes": 1 << 33,
                "sm_clock_khz": 1_410_000, "memory_clock_khz": 1_215_000,
                "memory_bus_bits": 5120, "driver_version": 13000,
                "runtime_version": 13000, "cccl_version": 3_000_001}

    def _value(self, a: np.ndarray, method: str, op: str,
               axis: int | None = None) -> Any:
        """NumPy's own answer of `op` (not the bench's reference) along
        `axis`, off by one for a wrong method."""
        value = getattr(np, op)(a, axis=axis)
        return value + 1 if method in self.wrong else value

    def cold_ms(self, method: str, a: np.ndarray) -> float:
        """The fake cold time of one run of `method` on `a`, ms."""
        return FAKE_MS[method] * (1 + a.nbytes / 1e6)

    def time_reduce(self, op: str, a: np.ndarray, method: str, threads: int,
                    buffers: int, warmup: int, reps: int, mode: str,
                    batch: int = 1) -> tuple[Any, list[float], Any]:
        """(NumPy's answer, off by one for a wrong method; ms per run;
        per-pass ms in ``"cold"`` mode: ``cudareduce.plan``'s passes on this
        device, [] per sample for cub; else None)."""
        assert op in names.OPS and mode in ("launch", "cold", "batch")
        assert batch == 1 or mode == "batch"
        self.reduce_calls.append((method, a.size, threads, buffers, warmup,
                                  reps, mode, batch))
        self.ops.append(op)
        t = self.cold_ms(method, a)
        per_run = {"launch": t + FAKE_LAUNCH_MS, "cold": t,
                   "batch": t * FAKE_BATCH_SHARE}[mode]
        passes = None
        if mode == "cold":
            passes = [] if method == "cub" else self.passes_ms(
                method, a, threads)
        return self._value(a, method, op), [per_run] * reps, \
            None if passes is None else [list(passes) for _ in range(reps)]

    def passes_ms(self, method: str, a: np.ndarray, threads: int
                  ) -> list[float]:
        """The fake per-pass ms of one cold run of our `method`."""
        count = len(cudareduce.plan(a.size, method, threads=threads,
                                    dtype=a.dtype,
                                    sm_count=self.device_info()["sm_count"]))
        t = self.cold_ms(method, a)
        if count == 1:
            return [t * FAKE_FIRST_SHARE]
        return [t * FAKE_FIRST_SHARE] + \
            [t * FAKE_REST_SHARE / (count - 1)] * (count - 1)

    def time_probe(self, probe: str, nbytes: int, buffers: int, warmup: int,
                   reps: int, mode: str, batch: int = 1) -> list[float]:
        """ms per run of the probe: the empty kernel's fixed time, the read
        kernel's fixed time plus `nbytes` at its rate, the host copy at
        :data:`FAKE_HOST_COPY_GBPS`."""
        assert probe in ("empty", "read", "host_copy")
        assert (nbytes == 0) == (probe == "empty")
        assert batch == 1 or mode == "batch"
        self.probe_calls.append((probe, nbytes, buffers, warmup, reps, mode,
                                 batch))
        if probe == "empty":
            t = FAKE_EMPTY_MS[mode]
        elif probe == "read":
            fixed, rate = FAKE_READ[mode]
            t = fixed + nbytes / (rate * 1e9) * 1e3
        else:
            t = nbytes / (FAKE_HOST_COPY_GBPS * 1e9) * 1e3
        return [t] * reps

    def reducer(self, op: str) -> Any:
        """``cudareduce.<op>`` of a host-held "device array", by NumPy;
        along `axis` where given."""
        def reduce(a: Any, method: str = cudareduce.DEFAULT_METHOD, *,
                   threads: int = cudareduce.DEFAULT_THREADS,
                   axis: int | None = None) -> Any:
            self.op_calls.append((op, method, threads))
            if axis is not None:
                self.axis_calls.append((op, np.shape(a), axis))
            return self._value(np.asarray(a), method, op, axis)
        return reduce


def op_of_peer(name: str) -> str:
    """The op whose peer `name` is (``"torch.amin"``: ``"min"``)."""
    return next(op for op, names in OP_PEERS.items() if name in names)


class FakePeer:
    """A peer's timer (``bench.timers.MethodTimer``): NumPy's answer of its
    op in a float64 accumulator where it has one, ``ms`` per run in every
    mode, no passes; its ``call`` reduces the "device array" with NumPy.
    ``calls`` records ``(n, buffers, warmup, reps, mode, batch)`` of each
    :meth:`gpu`, ``call_inputs`` the array of each :meth:`call`."""

    def __init__(self, name: str, ms: float = 0.002) -> None:
        self.name, self.ms = name, ms
        self.op = op_of_peer(name)
        self.calls: list[tuple] = []
        self.call_inputs: list[Any] = []

    def _value(self, a: np.ndarray) -> Any:
        return data.reference_result(a, self.op)

    def gpu(self, a: np.ndarray, buffers: int, warmup: int, reps: int,
            mode: str, batch: int = 1) -> tuple[Any, list[float], None]:
        self.calls.append((a.size, buffers, warmup, reps, mode, batch))
        return self._value(a), [self.ms] * reps, None

    def call(self, x: Any) -> Any:
        self.call_inputs.append(x)
        return lambda: self._value(np.asarray(x)).item()


#: The driver's version nvidia-smi reports on the fake device.
FAKE_DRIVER = "580.0.1"


def _patch_device(monkeypatch, fake: FakeDevice, arrays: Any) -> None:
    for name in ("device_info", "time_reduce", "time_probe"):
        monkeypatch.setattr(_cudareduce, name, getattr(fake, name))

    def peer(name, ordinal, dtype):
        assert ordinal == fake.device_info()["ordinal"]
        if name.startswith("cupy."):
            return None, "not importable (fake)"
        if dtype in ("uint16", "uint32", "uint64"):
            return None, f"takes no {dtype} (fake)"
        fake.peers.append(FakePeer(name))
        fake.peer_dtypes.append(dtype)
        return fake.peers[-1], ""
    # run() looks these up in the module that defines run.
    monkeypatch.setattr(ladder, "load_peer", peer)
    monkeypatch.setattr(ladder, "device_arrays", lambda dtype: arrays)
    monkeypatch.setattr(ladder, "_driver", lambda: FAKE_DRIVER)


@pytest.fixture
def fake_device(monkeypatch) -> FakeDevice:
    """The extension's ``device_info``, ``time_reduce`` and ``time_probe``
    replaced by a FakeDevice that gets unroll_warp wrong; the peers:
    torch's a :class:`FakePeer` (unavailable for uint16, uint32, uint64),
    cupy's unavailable; no device arrays (as without CuPy and PyTorch: no
    call times); nvidia-smi's driver :data:`FAKE_DRIVER`."""
    fake = FakeDevice(wrong={"unroll_warp"})
    _patch_device(monkeypatch, fake, None)
    return fake


@pytest.fixture
def fake_device_arrays(monkeypatch) -> FakeDevice:
    """:func:`fake_device`, and device arrays that are NumPy's own
    (``("numpy", numpy.asarray)``), reduced by ``cudareduce.sum`` and every
    other op's function replaced with :meth:`FakeDevice.reducer`'s: the
    call times are timed (wall clock)."""
    fake = FakeDevice(wrong={"unroll_warp"})
    _patch_device(monkeypatch, fake, ("numpy", np.asarray))
    for op in names.OPS:
        monkeypatch.setattr(cudareduce, op, fake.reducer(op))
    return fake


# ---------------------------------------------------------------------------
# Hand-made --peers and --host documents


#: comparison()'s floor (the document's): round figures, so that
#: ``peers.floor_us`` can be checked by hand.
COMPARISON_FLOOR = {"empty_cold_us": 3.0, "empty_batch_us": 2.0,
                    "read_bytes": 1 << 30, "read_cold_gbps": 2500.0,
                    "read_batch_gbps": 3200.0}
#: The floor's share of fast's back-to-back time in :func:`comparison`,
#: at every dtype and size (the target: >= 0.95 from 2^24).
COMPARISON_FLOOR_SHARE = 0.98
#: fast's speed over cub's back to back (cub's time over fast's) in
#: :func:`comparison`, by n: each above its target (1.5, 1.3, 1.05, 1.0).
COMPARISON_CUB_SPEED = {1 << 20: 2.0, 1 << 22: 1.6, 1 << 24: 1.2,
                        1 << 26: 1.1, 1 << 28: 1.05}
#: torch's peer's time over cub's in :func:`comparison`.
COMPARISON_TORCH_OVER_CUB = 1.2
#: Each method's back-to-back GB/s over its cold GB/s (its cold time over
#: its back-to-back one) in :func:`comparison`, torch's peer of every op
#: under "torch": not one factor, so that the cold ratios differ from the
#: back-to-back ones.
COMPARISON_BATCH_GAIN = {"fast": 1.2, "cub": 1.1, "torch": 1.05}


def _fast_batch_us(dtype: str, n: int) -> float:
    """comparison()'s default back-to-back time of fast: the floor's
    (empty kernel + bytes / read ceiling) over COMPARISON_FLOOR_SHARE."""
    floor = COMPARISON_FLOOR
    nbytes = n * names.numpy_dtype(dtype).itemsize
    return (floor["empty_batch_us"] + nbytes
            / (floor["read_batch_gbps"] * 1e3)) / COMPARISON_FLOOR_SHARE


def _peer_row(method: str, dtype: str, n: int, batch_us: float,
              correct: bool = True, op: str = "sum") -> dict:
    """A row of back-to-back time `batch_us`, cold
    :data:`COMPARISON_BATCH_GAIN` times that, no call time."""
    cold = batch_us * COMPARISON_BATCH_GAIN[method.split(".")[0]]
    return row(method, cold if correct else None, correct=correct, n=n,
               dtype=dtype, batch_us=batch_us if correct else None,
               call_us=None, op=op)


def comparison(fast_us: dict[tuple[str, int], float] | None = None,
               cub_us: dict[tuple[str, int], float] | None = None,
               wrong_cub_at: tuple[str, int] | None = None,
               ours_cupy=9.0, ours_torch=10.0, torch_item=23.0,
               launch_poll=7.0, op: str = "sum",
               baseline_us: float | None = None,
               dtypes: tuple[str, ...] = peers.COMPARE_DTYPES) -> dict:
    """A --peers document of `op`: fast, cub and torch's peer of the op
    (no cupy's) at every dtype of `dtypes` (``peers.COMPARE_DTYPES``) and
    size of ``peers.COMPARE_SIZES``, in a run's order, on the floor
    :data:`COMPARISON_FLOOR`.

    Back to back, fast takes the floor's time (empty kernel + bytes / read
    ceiling) over :data:`COMPARISON_FLOOR_SHARE`, cub that default times
    :data:`COMPARISON_CUB_SPEED` ``[n]``; `fast_us` and `cub_us` map
    ``(dtype, n)`` to other back-to-back µs.  torch's peer takes cub's
    time times :data:`COMPARISON_TORCH_OVER_CUB`.  Cold times are
    :data:`COMPARISON_BATCH_GAIN` times the back-to-back ones; no call
    times.  cub is WRONG at `wrong_cub_at`, ``(dtype, n)``.  For sums the
    latencies in µs, the launch-plus-poll floor's among them; for another
    op none; for another op, or `dtypes` without float32, last fast's
    float32 sum at the largest size, back to back `baseline_us` (default:
    fast's default time there).
    """
    torch = [p for p in names.peers_of(op) if p.startswith("torch.")]
    rows = []
    for dtype in dtypes:
        for n in peers.COMPARE_SIZES:
            fast = _fast_batch_us(dtype, n)
            batch = {"fast": (fast_us or {}).get((dtype, n), fast),
                     "cub": (cub_us or {}).get(
                         (dtype, n), fast * COMPARISON_CUB_SPEED[n])}
            batch.update({p: batch["cub"] * COMPARISON_TORCH_OVER_CUB
                          for p in torch})
            rows += [_peer_row(method, dtype, n, us, op=op,
                               correct=(method, dtype, n)
                               != ("cub", *(wrong_cub_at or ())))
                     for method, us in batch.items()]
    latency = {peers.LAUNCH_POLL_FLOOR: launch_poll,
               peers.TORCH_ITEM: torch_item,
               peers.OURS_ON_TORCH: ours_torch,
               peers.OURS_ON_CUPY: ours_cupy}
    if op != names.DEFAULT_OP or peers.BASELINE_DTYPE not in dtypes:
        big = peers.COMPARE_SIZES[-1]
        rows.append(_peer_row(
            "fast", peers.BASELINE_DTYPE, big,
            baseline_us or _fast_batch_us(peers.BASELINE_DTYPE, big)))
    if op != names.DEFAULT_OP:
        latency = {}
    made = document(rows)
    made["floor"] = dict(COMPARISON_FLOOR)
    return {"results": Results(made), "latency_us": latency,
            "dtypes": list(dtypes)}


#: host_document()'s numpy.sum(a, axis=k) time at 2^28, ms (a 256th of it
#: at 2^20), and how many times faster ours is unless told otherwise.
HOST_AXIS_NUMPY_MS, HOST_AXIS_SPEED = 200.0, 5.0


def host_document(ours_ms=20.0, numpy_ms=150.0, torch_ms=140.0,
                  cupy_ms=120.0, pinned_gbps=55.0, ours_correct=True,
                  axis_speeds: Mapping[tuple[str, int, int], float] | None
                  = None) -> dict:
    """A --host document: the four calls on float32 and int32 at 2^20 and
    2^28, each taking the given ms at 2^28 (a 256th of it at 2^20);
    ours WRONG at float32 2^28 unless `ours_correct`.  With `axis_speeds`
    (``{}`` for the defaults), the along-axis calls besides, after each
    size's whole ones: numpy's :data:`HOST_AXIS_NUMPY_MS`, ours that over
    the speed `axis_speeds` gives ``(dtype, n, axis)``, else over
    :data:`HOST_AXIS_SPEED`; without, a document of before they were
    timed."""
    results = []
    for dtype in ("float32", "int32"):
        for n in (1 << 20, 1 << 28):
            calls = [(host.CUDAREDUCE_CALL, ours_ms),
                     (host.NUMPY_CALL, numpy_ms),
                     (host.TORCH_CALL, torch_ms), (host.CUPY_CALL, cupy_ms)]
            if axis_speeds is not None:
                for axis in host.HOST_AXES:
                    speed = axis_speeds.get((dtype, n, axis), HOST_AXIS_SPEED)
                    calls += [(host.CUDAREDUCE_AXIS_CALLS[axis],
                               HOST_AXIS_NUMPY_MS / speed),
                              (host.NUMPY_AXIS_CALLS[axis],
                               HOST_AXIS_NUMPY_MS)]
            for call, ms in calls:
                ms = ms if n == 1 << 28 else ms / 256
                correct = ours_correct or not (
                    call == host.CUDAREDUCE_CALL and dtype == "float32"
                    and n == 1 << 28)
                results.append({"call": call, "dtype": dtype, "n": n,
                                "median_ms": ms,
                                "gbps": n * 4 / (ms * 1e-3) / 1e9,
                                "correct": correct})
    return {"device": schema.describe_device(SYNTHETIC_DEVICE),
            "date": SYNTHETIC_DATE, "pinned_gbps": pinned_gbps,
            "results": results}


def counters_document() -> dict:
    """A ``--counters`` document, as ``counters.collect`` returns one, of
    :data:`NCU_RECORDING`: every method's kernels, each claim of
    ``counters.IDEAS`` borne out."""
    rows = counters.parse_ncu_csv(
        NCU_RECORDING.read_text(encoding="utf-8"), METHODS)
    return {"ncu_version": "2025.3.1.0", "gpu": "NVIDIA H100 80GB HBM3",
            "driver": "580.159.04", "date": "2026-11-23T12:00:00Z",
            "op": "sum", "n": 1 << 22, "dtype": "float32", "threads": 256,
            "metrics": [m.name for m in counters.METRICS], "rows": rows}


if __name__ == "__main__":
    # python tests/support/bench_data.py: rewrite the sample from the formulas.
    write_sample()
    print(f"wrote {SAMPLE_PATH}", file=sys.stderr)
