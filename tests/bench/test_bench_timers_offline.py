"""cudareduce.bench.timers without a GPU: our methods' timer over a fake
``time_reduce``; the peers' timers over fake PyTorch and CuPy modules and a
fake stream holder, every step they ask of the "GPU" logged in order; the
device arrays of the call timings; the probes; the wall clock."""
from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from cudareduce.bench import names
from support.bench_data import (FAKE_READ, fake_device,  # noqa: F401
                                fake_device_arrays)
from cudareduce import _cudareduce
from cudareduce.bench import timers

#: ms that a fake library's sum of each row of a rotation takes: the rows
#: differ, so that the times tell which rows a sample summed.
ROW_MS = (0.5, 0.25, 2.0, 1.0)
#: The input of the peers' timings: its float64 sum is 36.
A = np.arange(1, 9, dtype=np.float32)


class FakeArray:
    """A fake library's device array: a NumPy array, its library, and its
    index in the rotation's rows (None where it is not one of them)."""

    def __init__(self, library: FakeLibrary, data: Any,
                 row: int | None = None) -> None:
        self.library, self.data, self.row = library, np.asarray(data), row

    def __getitem__(self, index: int) -> FakeArray:
        return FakeArray(self.library, self.data[index], row=index)

    def __setitem__(self, index: Any, value: FakeArray) -> None:
        self.data[index] = value.data

    def item(self) -> Any:
        return self.data.item()

    def to(self, device: tuple) -> FakeArray:
        """PyTorch's copy to `device`."""
        self.library.log.append(("to", device))
        return FakeArray(self.library, self.data.copy())

    def expand(self, rows: int, n: int) -> FakeArray:
        return FakeArray(self.library, np.broadcast_to(self.data, (rows, n)))

    def contiguous(self) -> FakeArray:
        return FakeArray(self.library, np.ascontiguousarray(self.data))

    def view(self, dtype: Any) -> FakeArray:
        """PyTorch's reinterpretation of the bits as `dtype` (the fake
        torch's ``bfloat16`` is ml_dtypes')."""
        self.library.log.append(("view", dtype))
        return FakeArray(self.library, self.data.view(dtype))


class FakeEvent:
    """A CUDA event: records its library's clock; logs each step."""

    def __init__(self, library: FakeLibrary, name: str) -> None:
        self.library, self.name, self.at = library, name, None

    def record(self, stream: Any) -> None:
        assert stream is self.library.stream
        self.at = self.library.clock
        self.library.log.append(("record", self.name))

    def synchronize(self) -> None:
        self.library.log.append(("synchronize", self.name))

    def elapsed_time(self, end: FakeEvent) -> float:
        """PyTorch's ms from this event to `end`."""
        return end.at - self.at


class FakeLibrary:
    """What the fake PyTorch and CuPy share: the log, one stream, a clock
    that each sum of row r advances by ``ROW_MS[r]``, events that read it
    (the first of each pair made is the start), and the sum."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log
        self.stream = f"{name}'s stream"
        self.clock = 0.0
        self.made_events = 0

    def _event(self) -> FakeEvent:
        self.made_events += 1
        return FakeEvent(self, "start" if self.made_events % 2 else "end")

    def sum(self, x: FakeArray) -> FakeArray:
        assert x.library is self
        self.log.append(("sum", x.row))
        if x.row is not None:
            self.clock += ROW_MS[x.row]
        return FakeArray(self, np.sum(x.data, dtype=np.float64))

    def _adopt(self, x: FakeArray) -> FakeArray:
        """The other library's array as this one's, without a copy."""
        assert x.library is not self
        self.log.append(("adopt", x))
        return FakeArray(self, x.data)


class FakeTorch(FakeLibrary):
    """The parts of ``torch`` that the bench uses."""

    def __init__(self, log: list, available: bool = True) -> None:
        super().__init__("torch", log)
        self.bfloat16 = np.dtype(ml_dtypes.bfloat16)

        def event(enable_timing: bool = False) -> FakeEvent:
            assert enable_timing
            return self._event()

        def current_stream(device: tuple) -> str:
            assert device == ("cuda", 0)
            return self.stream

        self.cuda = SimpleNamespace(
            is_available=lambda: available, current_device=lambda: 0,
            current_stream=current_stream, Event=event,
            empty_cache=lambda: log.append(("free",)))

    @staticmethod
    def device(kind: str, ordinal: int) -> tuple:
        return kind, ordinal

    def from_numpy(self, a: np.ndarray) -> FakeArray:
        return FakeArray(self, a)

    def as_tensor(self, x: FakeArray, device: tuple) -> FakeArray:
        assert device == ("cuda", 0)
        return self._adopt(x)


class FakeCupy(FakeLibrary):
    """The parts of ``cupy`` that the bench uses; `devices` is what
    ``getDeviceCount`` returns, or the exception it raises."""

    def __init__(self, log: list, devices: int | Exception = 1) -> None:
        super().__init__("cupy", log)

        def count() -> int:
            if isinstance(devices, Exception):
                raise devices
            return devices

        def event(disable_timing: bool = False) -> FakeEvent:
            assert not disable_timing
            return self._event()

        self.cuda = SimpleNamespace(
            runtime=SimpleNamespace(getDeviceCount=count),
            get_current_stream=lambda: self.stream, Event=event,
            get_elapsed_time=lambda start, end: end.at - start.at)

    def empty(self, shape: tuple, dtype: Any) -> FakeArray:
        return FakeArray(self, np.empty(shape, dtype))

    def asarray(self, x: Any) -> FakeArray:
        if isinstance(x, FakeArray):
            return self._adopt(x)
        return FakeArray(self, np.array(x))

    def get_default_memory_pool(self) -> SimpleNamespace:
        return SimpleNamespace(
            free_all_blocks=lambda: self.log.append(("free",)))


LIBRARIES = {"torch.sum": ("torch", FakeTorch), "cupy.sum": ("cupy", FakeCupy)}
FAKES = dict(LIBRARIES.values())


@pytest.fixture
def log(monkeypatch) -> list:
    """The log the fakes write, with the extension's stream holder replaced
    by one that logs ``("stream_hold", stream)``, ``("hold", flush_l2)``
    and ``("release",)``."""
    log: list = []
    holders: list = []

    def stream_hold(stream):
        log.append(("stream_hold", stream))
        holders.append(object())
        return holders[-1]

    def hold_stream(holder, flush_l2):
        assert holder is holders[-1]
        log.append(("hold", flush_l2))

    def release_stream(holder):
        assert holder is holders[-1]
        log.append(("release",))

    monkeypatch.setattr(_cudareduce, "stream_hold", stream_hold)
    monkeypatch.setattr(_cudareduce, "hold_stream", hold_stream)
    monkeypatch.setattr(_cudareduce, "release_stream", release_stream)
    return log


@pytest.fixture(params=list(LIBRARIES))
def peer(request, log, monkeypatch) -> tuple[Any, FakeLibrary]:
    """(load_peer's timer of each peer, its fake library), the log of its
    trial on one float32 element cleared."""
    module, make = LIBRARIES[request.param]
    library = make(log)
    monkeypatch.setitem(sys.modules, module, library)
    timer, why = timers.load_peer(request.param, 0, "float32")
    assert why == "" and timer.name == request.param
    log.clear()
    library.clock = 0.0
    return timer, library


def _sample(row_list: list[int], flush: bool) -> list[tuple]:
    """The log of one sample that sums the rows `row_list`."""
    return [("hold", flush), ("record", "start"),
            *(("sum", r) for r in row_list),
            ("record", "end"), ("release",), ("synchronize", "end")]


def test_a_peers_cold_samples_flush_and_hold_one_run_each(peer, log):
    timer, library = peer
    value, times, passes = timer.gpu(A, 3, 2, 3, "cold")
    start = log.index(("stream_hold", library.stream))
    # Unheld once first, then 2 untimed and 3 timed samples rotating among
    # the 3 rows, each held around its run, flushed; freed last.
    assert log[start:] == [("stream_hold", library.stream), ("sum", 0)] \
        + _sample([0], True) + _sample([1], True) + _sample([2], True) \
        + _sample([0], True) + _sample([1], True) + [("free",)]
    assert times == [ROW_MS[2], ROW_MS[0], ROW_MS[1]]
    assert value == 36.0 and passes is None


def test_a_peers_batch_samples_hold_several_runs_without_a_flush(peer, log):
    timer, library = peer
    value, times, passes = timer.gpu(A, 3, 1, 2, "batch", batch=2)
    start = log.index(("stream_hold", library.stream))
    assert log[start:] == [("stream_hold", library.stream), ("sum", 0)] \
        + _sample([0, 1], False) + _sample([2, 0], False) \
        + _sample([1, 2], False) + [("free",)]
    assert times == [(ROW_MS[2] + ROW_MS[0]) / 2,
                     (ROW_MS[1] + ROW_MS[2]) / 2]
    assert value == 36.0 and passes is None


def test_the_torch_peer_copies_the_input_to_its_device(log, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", FakeTorch(log))
    timer, _ = timers.load_peer("torch.sum", 0, "float32")
    log.clear()
    timer.gpu(A, 2, 0, 1, "cold")
    assert log.index(("to", ("cuda", 0))) < log.index(
        ("stream_hold", "torch's stream"))


@pytest.mark.parametrize("mode, batch", [("launch", 1), ("cold", 2),
                                         ("batch", 0), ("Cold", 1)])
def test_a_peer_refuses_what_the_c_timers_refuse(peer, log, mode, batch):
    timer, _ = peer
    with pytest.raises(ValueError, match="mode 'cold' or 'batch'"):
        timer.gpu(A, 2, 1, 3, mode, batch)
    assert log == []


def test_a_failing_peer_frees_its_memory(peer, log):
    timer, library = peer

    def broken(x):
        raise RuntimeError("CUDA error: an illegal memory access")
    library.sum = broken
    with pytest.raises(RuntimeError, match="illegal memory access"):
        timer.gpu(A, 2, 1, 2, "cold")
    assert log[-1] == ("free",)


def test_a_peer_failing_while_held_lets_the_stream_go(peer, log):
    """A sum that raises inside a held sample: the stream is released
    before the error leaves (a held stream would stall the GPU until the
    holding kernel gives up), then the memory is freed."""
    timer, library = peer
    works = library.sum

    def fails_when_held(x):
        if ("hold", True) in log:
            raise RuntimeError("CUDA error: an illegal memory access")
        return works(x)
    library.sum = fails_when_held
    with pytest.raises(RuntimeError, match="illegal memory access"):
        timer.gpu(A, 2, 1, 2, "cold")
    assert log[-4:] == [("hold", True), ("record", "start"), ("release",),
                        ("free",)]


def test_a_peers_call_adopts_the_other_librarys_array(peer, log):
    timer, library = peer
    other = FakeCupy(log) if isinstance(library, FakeTorch) \
        else FakeTorch(log)
    x = FakeArray(other, A)
    call = timer.call(x)
    assert log == [("adopt", x)]             # once, when the call is made
    assert call() == 36.0 and call() == 36.0
    assert type(call()) is float             # a Python number
    assert log[1:] == [("sum", None)] * 3
    # the very memory of x, no copy
    adopted = [r for r in log if r[0] == "adopt"]
    assert len(adopted) == 1 and adopted[0][1] is x


@pytest.mark.parametrize("name, module, library, why", [
    ("torch.sum", "torch", None, "not importable ("),
    ("cupy.sum", "cupy", None, "not importable ("),
    ("torch.sum", "torch", lambda log: FakeTorch(log, available=False),
     "RuntimeError: torch has no CUDA device"),
    ("cupy.sum", "cupy", lambda log: FakeCupy(log, devices=0),
     "RuntimeError: cupy sees no CUDA device"),
    ("cupy.sum", "cupy", lambda log: FakeCupy(
        log, devices=OSError("cudaErrorNoDevice")),
     "OSError: cudaErrorNoDevice")])
def test_an_unavailable_peer_says_why(name, module, library, why,
                                      monkeypatch):
    monkeypatch.setitem(sys.modules, module,
                        None if library is None else library([]))
    timer, reason = timers.load_peer(name, 0, "float32")
    assert timer is None and reason.startswith(why)


def test_a_peer_is_tried_on_one_element_of_the_dtype(log, monkeypatch):
    """load_peer tries the peer's function on one element of the dtype on
    its device, and frees it; a dtype it refuses (PyTorch before 2.3 has no
    uint32 tensors, later ones no uint32 sums on CUDA) leaves the peer out,
    saying why."""
    torch = FakeTorch(log)
    works = torch.from_numpy

    def from_numpy(a):
        if a.dtype == np.uint32:
            raise TypeError("can't convert np.ndarray of type numpy.uint32")
        return works(a)
    torch.from_numpy = from_numpy
    monkeypatch.setitem(sys.modules, "torch", torch)
    timer, why = timers.load_peer("torch.sum", 0, "int8")
    assert why == "" and timer.name == "torch.sum"
    assert log == [("to", ("cuda", 0)), ("sum", 0), ("free",)]
    log.clear()
    timer, why = timers.load_peer("torch.sum", 0, "uint32")
    assert timer is None
    assert why == ("takes no uint32 (TypeError: can't convert np.ndarray "
                   "of type numpy.uint32)")
    assert log == [("free",)]
    with pytest.raises(ValueError, match="not a peer: 'torch.min'"):
        timers.load_peer("torch.min", 0, "float32")


def test_cupy_takes_no_bfloat16(log, monkeypatch):
    """CuPy has no bfloat16: the call timings' PyTorch bfloat16 tensor
    would reach it as void, so the peer is left out, saying why, before
    any trial on the device."""
    module, make = LIBRARIES["cupy.sum"]
    monkeypatch.setitem(sys.modules, module, make(log))
    timer, why = timers.load_peer("cupy.sum", 0, "bfloat16")
    assert timer is None
    assert why == "takes no bfloat16 (TypeError: CuPy has no bfloat16)"
    assert ("sum", 0) not in log


@pytest.mark.parametrize("op", names.OPS)
def test_each_ops_peers_time_their_librarys_function(op, log, monkeypatch):
    """A peer of each op is its library's function of it (torch.amin for
    min, cupy.nanprod for nanprod, ...), timed and called the same way."""
    for name in names.peers_of(op):
        module, function = name.split(".")
        library = FAKES[module](log)

        def reduce(x, library=library, function=function):
            library.log.append((function, x.row))
            return FakeArray(library, getattr(np, op)(x.data))
        setattr(library, function, reduce)
        monkeypatch.setitem(sys.modules, module, library)
        timer, why = timers.load_peer(name, 0, "float32")
        assert why == "" and timer.name == name
        value, times, _ = timer.gpu(A, 2, 0, 3, "batch", 2)
        assert value == getattr(np, op)(A) and len(times) == 3
        assert [e for e in log if e[0] == function] == [
            (function, r) for r in (0, 0, 0, 1, 0, 1, 0, 1)]
        log.clear()


def test_device_arrays_are_cupys_else_torchs(monkeypatch):
    log: list = []
    cupy, torch = FakeCupy(log), FakeTorch(log)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "torch", torch)
    name, make = timers.device_arrays()
    assert name == "cupy"
    x = make(A)
    assert x.library is cupy and np.array_equal(x.data, A)
    monkeypatch.setitem(sys.modules, "cupy", FakeCupy(log, devices=0))
    name, make = timers.device_arrays()
    assert name == "torch"
    x = make(A)
    assert x.library is torch and np.array_equal(x.data, A)
    assert log[-1] == ("to", ("cuda", 0))
    monkeypatch.setitem(sys.modules, "torch", FakeTorch(log, available=False))
    assert timers.device_arrays() is None
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setitem(sys.modules, "torch", None)
    assert timers.device_arrays() is None


def test_bfloat16_device_arrays_are_torchs_from_the_bits(monkeypatch):
    """CuPy has no bfloat16: its device arrays are PyTorch's, copied as
    uint16 bits and viewed as torch.bfloat16; so are the torch peer's."""
    log: list = []
    cupy, torch = FakeCupy(log), FakeTorch(log)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert timers.device_arrays("float32")[0] == "cupy"
    a = np.array([1.5, -2.0, 3.0, np.nan], ml_dtypes.bfloat16)
    name, make = timers.device_arrays("bfloat16")
    x = make(a)
    assert name == "torch" and x.library is torch
    assert x.data.dtype == a.dtype
    assert np.array_equal(x.data.view(np.uint16), a.view(np.uint16))
    assert log[-2:] == [("to", ("cuda", 0)), ("view", torch.bfloat16)]
    monkeypatch.setitem(sys.modules, "torch", None)
    assert timers.device_arrays("bfloat16") is None


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_reaches_the_peers_as_it_is(dtype, log, monkeypatch):
    """complex64 and complex128 need no conversion: CuPy holds them (the
    call timings' arrays are CuPy's), both peers' rows hold the very
    values and give a Python complex; a function that orders no complex
    numbers (PyTorch's amin) refuses them on the one element tried, and
    that peer is left out, saying why."""
    a = np.array([1 + 2j, -3 + 0.5j, 2 - 1j, 0.25j], dtype)
    cupy, torch = FakeCupy(log), FakeTorch(log)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "torch", torch)
    name, make = timers.device_arrays(dtype)
    assert name == "cupy" and np.array_equal(make(a).data, a)
    for library in (cupy, torch):
        def reduce(x, library=library):
            assert x.data.dtype == np.dtype(dtype)
            library.log.append(("sum", x.row))
            return FakeArray(library, np.sum(x.data))
        library.sum = reduce
        timer, why = timers.load_peer(f"{library.name}.sum", 0, dtype)
        assert why == ""
        value, times, _ = timer.gpu(a, 2, 0, 2, "cold")
        assert type(value) is complex and value == np.sum(a)
        assert len(times) == 2

    def amin(x):
        if x.data.dtype.kind == "c":
            raise RuntimeError("amin(): complex inputs are not supported")
        return FakeArray(torch, np.amin(x.data))
    torch.amin = amin
    timer, why = timers.load_peer("torch.amin", 0, dtype)
    assert timer is None
    assert why == (f"takes no {dtype} (RuntimeError: amin(): complex "
                   f"inputs are not supported)")
    assert timers.load_peer("torch.amin", 0, "float32")[1] == ""


def test_our_timer_is_time_reduce(fake_device):
    a = np.arange(1000, dtype=np.float32)
    timer = timers.method_timer("sequential", 128)
    assert timer.name == "sequential"
    value, times, passes = timer.gpu(a, 3, 1, 5, "batch", 4)
    assert value == a.sum() and passes is None
    assert times == [fake_device.cold_ms("sequential", a) * 0.8] * 5
    value, times, passes = timer.gpu(a, 2, 0, 3, "cold")
    assert passes == [fake_device.passes_ms("sequential", a, 128)] * 3
    assert fake_device.reduce_calls == [
        ("sequential", 1000, 128, 3, 1, 5, "batch", 4),
        ("sequential", 1000, 128, 2, 0, 3, "cold", 1)]


def test_our_call_is_cudareduce_sum_to_a_python_number(fake_device_arrays):
    x = np.arange(10, dtype=np.int32)
    call = timers.method_timer("first_add", 512).call(x)
    assert fake_device_arrays.sum_calls == []
    value = call()
    assert value == 45 and type(value) is int
    assert fake_device_arrays.sum_calls == [("first_add", 512)]


@pytest.mark.parametrize("op", names.OPS)
def test_our_timer_and_call_reduce_with_the_op(op, fake_device_arrays):
    a = np.arange(1, 11, dtype=np.float64)
    timer = timers.method_timer("unroll_complete", 64, op)
    value, _, _ = timer.gpu(a, 1, 0, 2, "cold")
    assert value == getattr(np, op)(a) and fake_device_arrays.ops == [op]
    assert timer.call(a)() == getattr(np, op)(a).item()
    assert fake_device_arrays.op_calls == [(op, "unroll_complete", 64)]


def test_probe_us_is_the_median_in_us(fake_device, monkeypatch):
    fixed, rate = FAKE_READ["cold"]
    assert timers.probe_us("read", 1 << 20, 4, 30, "cold") == pytest.approx(
        (fixed + (1 << 20) / (rate * 1e9) * 1e3) * 1e3)
    assert timers.probe_us("empty", 0, 1, 5, "batch", 8, warmup=2) == \
        pytest.approx(0.3)
    assert fake_device.probe_calls == [
        ("read", 1 << 20, 4, 3, 30, "cold", 1),
        ("empty", 0, 1, 2, 5, "batch", 8)]
    monkeypatch.setattr(_cudareduce, "time_probe",
                        lambda *args: [1.0, 9.0, 2.0])
    assert timers.probe_us("host_copy", 64, 1, 3, "cold") == 2000.0


def test_wall_times():
    calls = []
    times, value = timers.wall_times(lambda: calls.append(1) or len(calls),
                                     5)
    assert len(times) == 5 and all(t >= 0 for t in times)
    assert value == 5 and calls == [1] * 5


def test_median_wall_time_warms_up_then_takes_the_median():
    """The benchmark scripts' timer (benchmarks/dask_sum.py and
    sharded_sum.py): `warmup` untimed calls, then `repeats` timed, each
    followed by `sync`; the last value of `run`."""
    calls = []
    seconds, _ = timers.median_wall_time(lambda: calls.append("run"),
                                         lambda: calls.append("sync"), 3)
    assert calls == ["run", "sync"] * 4 and 0 <= seconds < 1
    calls.clear()

    def run():
        calls.append("run")
        return len(calls)

    seconds, value = timers.median_wall_time(
        run, lambda: calls.append("sync"), 3, warmup=2)
    assert calls == ["run", "sync"] * 5 and 0 <= seconds < 1
    assert value == 9
