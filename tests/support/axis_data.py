"""What the ``--axis`` offline tests share.

- A synthetic ``--axis`` document (:func:`axis_document`): the probes and
  every time come from formulas with round parameters (the rates below,
  each contender's share of its floor), for the synthetic device of
  :mod:`support.bench_data`; nothing in it was timed.  By default every
  target of ``benchmarks/targets.py`` is met: ``fast`` at
  :data:`FAST_PCT` of its floor everywhere, the peers below it, each at
  its worst on one case (:data:`PEER_WORST`).
- A fake CuPy on NumPy (:class:`FakeCupy`, the ``fake_axis_device``
  fixture) for :func:`cudareduce.bench.axes.run_axes` without a GPU: its
  arrays are NumPy arrays that say they are CuPy's, its events read a
  clock that each call advances by :data:`FAKE_CALL_MS`, and ``cudareduce``'s
  functions of the ops are NumPy's, refusing every method but ``fast``
  along an axis as the library does.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import cudareduce
from cudareduce.bench import axes, floor, names
from cudareduce.bench.axis_schema import (AXIS_KIND, AXIS_SCHEMA, axis_peers,
                                          column_of, make_axis_probe,
                                          make_axis_result, probe_floor_us)
from support.bench_data import (SYNTHETIC_DATE, SYNTHETIC_DEVICE,
                                SYNTHETIC_VERSION)
from cudareduce.bench.schema import describe_device

#: The synthetic empty kernel, µs, and the read and write rates, GB/s,
#: cold and back to back.
AXIS_FLOOR = {"empty_cold_us": 3.0, "empty_batch_us": 2.0}
READ_GBPS = {"cold": 2800.0, "batch": 3000.0}
WRITE_GBPS = {"cold": 2400.0, "batch": 2500.0}
#: Each contender's share of its floor, % (back to back; cold the same).
FAST_PCT = 95.0
PEER_PCT = {"torch": 85.0, "cupy": 90.0, "cupy[cub]": 92.0}
#: Each peer's worst case, (shape, axis), and its share of the floor there.
PEER_WORST = {"torch": (((1 << 24, 4), 1), 50.0),
              "cupy": (((4, 1 << 24), 0), 60.0),
              "cupy[cub]": (((1 << 10, 1 << 16), 0), 55.0)}
#: Our methods in the document's order, and why those but fast are not
#: timed (the library's refusal).
OURS = ["fast", "cub", *names.LADDER]
REFUSAL = "ValueError: method {!r} does not reduce along an axis yet; " \
    "'fast' does"

#: A share of the floor, None for WRONG, or why the contender did not run.
Outcome = float | None | str


def axis_probe(nbytes: int) -> dict:
    """The probe row at `nbytes`: the read probe an empty kernel plus the
    bytes at :data:`READ_GBPS`, the copy that plus the bytes at
    :data:`WRITE_GBPS`."""
    times = {}
    for way in ("cold", "batch"):
        read_us = nbytes / (READ_GBPS[way] * 1e3)
        write_us = nbytes / (WRITE_GBPS[way] * 1e3)
        empty = AXIS_FLOOR[f"empty_{way}_us"]
        times[way] = (empty + read_us, empty + read_us + write_us)
    return make_axis_probe(nbytes, times["cold"][0], times["batch"][0],
                           times["cold"][1], times["batch"][1], AXIS_FLOOR)


def default_outcome(method: str, dtype: str, shape: tuple[int, ...],
                    axis: int) -> Outcome:
    """The default document's: fast at :data:`FAST_PCT`, our other
    methods refusing, each peer at :data:`PEER_PCT` but on its worst
    case."""
    if method == "fast":
        return FAST_PCT
    if method in OURS:
        return REFUSAL.format(method)
    column = column_of(method)
    (worst, pct) = PEER_WORST[column]
    return pct if worst == (shape, axis) else PEER_PCT[column]


def axis_document(outcome: Callable[[str, str, tuple[int, ...], int],
                                    Outcome] = default_outcome,
                  cases: Iterable[axes.AxisCase] = axes.AXIS_CASES,
                  dtypes: Sequence[str] = ("float32",),
                  op: str = "sum") -> dict:
    """A valid ``--axis`` document of `cases` in each of `dtypes` (the
    cases' op, else `op`), each contender's figures from
    ``outcome(method, dtype, shape, axis)``."""
    results, probes = [], {}
    for dtype in dtypes:
        itemsize = names.numpy_dtype(dtype).itemsize
        for case in cases:
            case_op = case.op or op
            size = math.prod(case.shape)
            read_bytes = size * itemsize
            write_bytes = size // case.shape[case.axis] \
                * axes.result_dtype(case_op, dtype).itemsize
            probes.setdefault(read_bytes, axis_probe(read_bytes))
            floors = {f"floor_{way}_us": probe_floor_us(
                AXIS_FLOOR, probes[read_bytes], way, read_bytes, write_bytes)
                for way in ("cold", "batch")}
            for method in (*OURS, *axis_peers(case_op)):
                got = outcome(method, dtype, case.shape, case.axis)
                if isinstance(got, str):
                    figures = {"unavailable": got}
                elif got is None:
                    figures = {"correct": False}
                else:
                    figures = {"cold_us": floors["floor_cold_us"] * 100 / got,
                               "batch_us": floors["floor_batch_us"] * 100
                               / got, "batch": 8, "reps": 100,
                               "correct": True}
                results.append(make_axis_result(
                    method, case_op, dtype, case.shape, case.axis,
                    read_bytes=read_bytes, write_bytes=write_bytes,
                    **floors, **figures))
    return {"kind": AXIS_KIND, "schema": AXIS_SCHEMA,
            "cudareduce_version": SYNTHETIC_VERSION, "date": SYNTHETIC_DATE,
            "device": describe_device(SYNTHETIC_DEVICE),
            "software": {"numpy": "2.0.0", "cupy": "13.6.0",
                         "torch": "2.9.0",
                         "cupy_accelerators": {"reduction": ["cub"],
                                               "routine": ["cub"]}},
            "timing": {"method": "synthetic: every figure is a formula of "
                                 "the test fixture, nothing was timed"},
            "floor": dict(AXIS_FLOOR),
            "probes": [probes[b] for b in sorted(probes)],
            "results": results}


# ---------------------------------------------------------------------------
# A fake CuPy for run_axes

#: The fake GPU time of one call, ms: fast, CuPy's own kernels, CuPy with
#: CUB, a device-to-device copy.
FAKE_CALL_MS = {"fast": 0.5, "cupy": 0.65, "cupy[cub]": 0.55, "copy": 1.0}
#: The fake probes, ms: an empty kernel, and the read probe's fixed cost
#: and rate (GB/s).
FAKE_EMPTY_MS = {"cold": 0.003, "batch": 0.002}
FAKE_READ = (0.003, 2000.0)


class FakeCupyArray(np.ndarray):
    """A NumPy array that says it is CuPy's; its views keep their
    :class:`FakeCupy`."""

    def __array_finalize__(self, obj: Any) -> None:
        self.cupy = getattr(obj, "cupy", None)

    def get(self) -> np.ndarray:
        return np.asarray(self).copy()

    @property
    def data(self) -> "FakePointer":
        return FakePointer(self, 0)


FakeCupyArray.__module__ = "cupy"


class FakePointer:
    """``ndarray.data``: a buffer and an offset; a copy between two
    advances the clock."""

    def __init__(self, array: FakeCupyArray, offset: int) -> None:
        self.array, self.offset = array, offset

    def __add__(self, offset: int) -> "FakePointer":
        return FakePointer(self.array, self.offset + offset)

    def copy_from_device_async(self, src: "FakePointer", nbytes: int,
                               stream: Any) -> None:
        assert stream is self.array.cupy.stream
        assert self.offset + nbytes <= self.array.nbytes
        self.array.cupy.log.append(("copy", nbytes))
        self.array.cupy.clock += FAKE_CALL_MS["copy"]


class FakeStream:
    """A non-blocking CuPy stream: current inside ``with``."""

    def __init__(self, cupy: "FakeCupy", non_blocking: bool) -> None:
        assert non_blocking
        self.cupy, self.ptr = cupy, 0xC0FFEE

    def __enter__(self) -> "FakeStream":
        self.cupy.current.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cupy.current.pop()

    def synchronize(self) -> None:
        self.cupy.log.append(("synchronize",))


class FakeEvent:
    def __init__(self, cupy: "FakeCupy") -> None:
        self.cupy, self.at = cupy, 0.0

    def record(self, stream: FakeStream) -> None:
        assert stream is self.cupy.stream
        self.at = self.cupy.clock

    def synchronize(self) -> None:
        pass


class FakeCupy:
    """The parts of ``cupy`` that ``--axis`` uses, on NumPy: arrays,
    ``cupy.sum`` and ``cupy.argmax`` along an axis (CuPy's own kernels
    or, with the accelerators ``[1]``, CUB's, each at its fake time),
    the stream, events on a clock, copies, the accelerators, the pool."""

    __version__ = "13.6.0"
    uint8 = np.uint8

    def __init__(self) -> None:
        self.log: list[tuple] = []
        self.clock = 0.0
        self.current: list[FakeStream] = []
        self.stream: FakeStream | None = None
        accelerators = {"reduction": [], "routine": []}
        self.accelerators = accelerators
        self._core = SimpleNamespace(
            _accelerator=SimpleNamespace(ACCELERATOR_CUB=1,
                                         ACCELERATOR_CUTENSOR=2),
            get_reduction_accelerators=lambda: accelerators["reduction"],
            get_routine_accelerators=lambda: accelerators["routine"],
            set_reduction_accelerators=lambda a: accelerators.update(
                reduction=[1 if x == "cub" else x for x in a]),
            set_routine_accelerators=lambda a: accelerators.update(
                routine=[1 if x == "cub" else x for x in a]))

        def new_stream(non_blocking: bool = False) -> FakeStream:
            self.stream = FakeStream(self, non_blocking)
            return self.stream
        self.cuda = SimpleNamespace(
            Stream=new_stream, Event=lambda: FakeEvent(self),
            get_elapsed_time=lambda start, end: end.at - start.at,
            runtime=SimpleNamespace(
                getDeviceCount=lambda: 1,
                deviceSynchronize=lambda: self.log.append(("device sync",))))

    def _array(self, a: Any) -> FakeCupyArray:
        array = np.array(a).view(FakeCupyArray)
        array.cupy = self
        return array

    def empty(self, shape: Any, dtype: Any) -> FakeCupyArray:
        return self._array(np.zeros(shape, dtype))

    def empty_like(self, a: FakeCupyArray) -> FakeCupyArray:
        return self._array(np.zeros_like(a))

    def asarray(self, a: Any) -> FakeCupyArray:
        return self._array(a)

    def get_default_memory_pool(self) -> SimpleNamespace:
        return SimpleNamespace(
            free_all_blocks=lambda: self.log.append(("free",)))

    def _reduce(self, op: str, x: FakeCupyArray, axis: int) -> Any:
        assert self.current == [self.stream], "not on the one stream"
        cub = self.accelerators["routine"] == [1]
        self.log.append((f"cupy.{op}", "cub" if cub else "own"))
        self.clock += FAKE_CALL_MS["cupy[cub]" if cub else "cupy"]
        return self._array(getattr(np, op)(np.asarray(x), axis=axis))

    def sum(self, x: FakeCupyArray, axis: int) -> Any:
        return self._reduce("sum", x, axis)

    def argmax(self, x: FakeCupyArray, axis: int) -> Any:
        return self._reduce("argmax", x, axis)


def fake_reducer(cupy: FakeCupy, op: str) -> Callable[..., Any]:
    """``cudareduce.<op>`` on the fake device: NumPy's along the axis for
    ``fast`` (float sums in float64, rounded once, as the library sums
    exactly), the library's refusal for the other methods."""
    def reduce(x: Any, *, axis: int, method: str = "fast") -> Any:
        if method != "fast":
            raise ValueError(f"method {method!r} does not reduce along an "
                             f"axis yet; 'fast' does")
        assert cupy.current == [cupy.stream], "not on the one stream"
        cupy.log.append((f"cudareduce.{op}", method))
        cupy.clock += FAKE_CALL_MS["fast"]
        data = np.asarray(x)
        if op == "sum" and data.dtype.kind == "f":
            return cupy._array(np.sum(data, axis=axis, dtype=np.float64)
                               .astype(data.dtype))
        return cupy._array(getattr(np, op)(data, axis=axis))
    return reduce


def fake_probe_us(probe: str, nbytes: int, buffers: int, reps: int,
                  mode: str, batch: int = 1, warmup: int = 3) -> float:
    """``timers.probe_us`` on the fake device, µs."""
    if probe == "empty":
        return FAKE_EMPTY_MS[mode] * 1e3
    fixed, rate = FAKE_READ
    return fixed * 1e3 + nbytes / (rate * 1e3)


@pytest.fixture
def fake_axis_device(monkeypatch) -> FakeCupy:
    """``run_axes`` on a :class:`FakeCupy`: CuPy imports as it, PyTorch
    does not; the stream holder, the device's description and the probes
    are fakes; ``cudareduce.sum`` and ``cudareduce.argmax`` are
    :func:`fake_reducer`'s."""
    cupy = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "torch", None)
    holds = []
    monkeypatch.setattr(axes._cudareduce, "stream_hold",
                        lambda stream: holds.append(stream) or "holder")
    monkeypatch.setattr(axes._cudareduce, "hold_stream",
                        lambda holder, flush: cupy.log.append(
                            ("hold", flush)))
    monkeypatch.setattr(axes._cudareduce, "release_stream",
                        lambda holder: cupy.log.append(("release",)))
    monkeypatch.setattr(axes, "device_info", lambda: dict(SYNTHETIC_DEVICE))
    monkeypatch.setattr(floor, "probe_us", fake_probe_us)
    for op in ("sum", "argmax"):
        monkeypatch.setattr(cudareduce, op, fake_reducer(cupy, op))
    cupy.holds = holds
    return cupy
