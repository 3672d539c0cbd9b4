"""The timers: how one method's GPU time and call time are taken, for ours
(``_cudareduce.time_reduce``, whose loops run in C) and for the peers
(PyTorch's and CuPy's function of the op, ``torch.sum``, ``cupy.sum``, ...,
timed from Python with the same stream holder: :func:`time_queued`, which
the ``--axis`` mode's calls share), and the probes that bound them (an
empty kernel, a read-only streaming kernel).

GPU time is taken as NVIDIA's nvbench takes it: a kernel holds the stream
until the timed work is queued behind it, so that the CUDA events around the
work bracket the GPU's time and not the host's launch latency; ``"cold"``
samples flush the L2 cache first and time one run each, ``"batch"`` samples
queue several runs back to back, rotating among copies of the input that
together outgrow L2.  (nvbench's own Python binding, ``cuda-bench``, times a
callable the same way but cannot put an event between the passes of one of
our calls, which the per-pass times need; the C timers can, and run the
peers' work with the very same holding kernel.)
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol

import numpy as np

import cudareduce
from cudareduce import _cudareduce
from .names import DEFAULT_OP, is_peer

__all__ = ["DeviceArrays", "GpuTimes", "MethodTimer", "StreamClock",
           "device_arrays", "load_peer", "median_wall_time", "method_timer",
           "probe_us", "time_queued", "wall_times"]

#: (value of the last run, time per run of each sample in ms, the per-pass
#: ms of each sample: cold samples of a method that splits into passes,
#: else None).
GpuTimes = tuple[Any, list[float], "list[list[float]] | None"]


class MethodTimer(Protocol):
    """What the bench times of one method (ours or a peer's)."""

    name: str

    def gpu(self, a: np.ndarray, buffers: int, warmup: int, reps: int,
            mode: str, batch: int = 1) -> GpuTimes:
        """Time the reduction of the host array `a`, copied to `buffers`
        device buffers: `reps` samples after `warmup`, in `mode` ``"cold"``
        or ``"batch"`` (`batch` runs a sample)."""

    def call(self, x: Any) -> Callable[[], Any]:
        """The call a user makes on the device array `x` (CuPy or PyTorch,
        as :func:`device_arrays` gives), returning a Python number."""


class _OurMethod:
    """One of our methods reducing with an op: its GPU time from the C
    timers, its call the library's function of the op."""

    def __init__(self, name: str, threads: int | None, op: str) -> None:
        self.name, self.threads, self.op = name, threads, op

    def gpu(self, a: np.ndarray, buffers: int, warmup: int, reps: int,
            mode: str, batch: int = 1) -> GpuTimes:
        return _cudareduce.time_reduce(self.op, a, self.name, self.threads,
                                       buffers, warmup, reps, mode, batch)

    def call(self, x: Any) -> Callable[[], Any]:
        name, threads = self.name, self.threads
        reduce = getattr(cudareduce, self.op)
        return lambda: reduce(x, method=name, threads=threads).item()


def method_timer(name: str, threads: int | None, op: str = DEFAULT_OP
                 ) -> MethodTimer:
    """The :class:`MethodTimer` of our method `name` reducing with `op`
    (one of :data:`~cudareduce.bench.names.OPS`), at `threads` per block (None:
    the method's default for each input's size)."""
    return _OurMethod(name, threads, op)


@contextmanager
def _held(holder: Any, flush_l2: bool) -> Iterator[None]:
    """The holder's stream held (after an L2 flush with `flush_l2`) while
    the body queues its work, and let go after it, also when it raises: a
    stream left held would stall the GPU until the holding kernel gives
    up."""
    _cudareduce.hold_stream(holder, flush_l2)
    try:
        yield
    finally:
        _cudareduce.release_stream(holder)


def _check_mode(mode: str, batch: int) -> None:
    """The C timers' rules: a cold sample is one run after a flush."""
    if mode not in ("cold", "batch") or batch < 1 \
            or (batch > 1 and mode != "batch"):
        raise ValueError(f"mode 'cold' or 'batch', batch >= 1 (> 1 only "
                         f"in 'batch' mode), got {mode!r}, {batch}")


class StreamClock(NamedTuple):
    """What times work queued from Python on one stream: the stream, our
    holder of it (``_cudareduce.stream_hold``), two events of the
    stream's library and the ms between two recorded events."""

    stream: Any
    holder: Any
    start: Any
    end: Any
    elapsed: Callable[[Any, Any], float]


def time_queued(queue: Callable[[int], Any], clock: StreamClock,
                warmup: int, reps: int, mode: str, batch: int = 1
                ) -> tuple[Any, list[float]]:
    """(the last run's output, the time per run of each sample in ms) of
    the work `queue` queues, timed as the C timers time a reduction:
    `reps` samples after `warmup`, in `mode` ``"cold"`` (the L2 cache
    flushed, one run a sample) or ``"batch"`` (`batch` runs a sample).

    ``queue(run)`` queues run number `run` (0, 1, ...: rotate among
    copies of the input with it) on ``clock.stream`` and returns its
    output, without waiting for the device: it runs while the stream is
    held, and a wait there would last until the holding kernel gives up
    (``_cudareduce.release_stream`` then raises).  Queue each kind of work
    once unheld first: a kernel's first launch loads its module, which
    waits for the device.
    """
    _check_mode(mode, batch)
    times = []
    out = None
    run = 0
    for r in range(-warmup, reps):
        with _held(clock.holder, mode == "cold"):
            clock.start.record(clock.stream)
            for _ in range(batch):
                out = queue(run)
                run += 1
            clock.end.record(clock.stream)
        clock.end.synchronize()
        if r >= 0:
            times.append(clock.elapsed(clock.start, clock.end) / batch)
    return out, times


class _Peer:
    """A peer library's reduction, its function `function` (``"sum"``,
    ``"amin"``, ...), timed with our stream holder on its current stream.
    Subclasses say which library, how to copy to the device, record events
    and read them."""

    library = ""

    def __init__(self, function: str) -> None:
        self.name = f"{self.library}.{function}"
        self.function = function

    def _module(self) -> Any:
        """The library's module."""
        raise NotImplementedError

    def _rows(self, a: np.ndarray, buffers: int) -> Any:
        raise NotImplementedError

    def _reduce(self, x: Any) -> Any:
        return getattr(self._module(), self.function)(x)

    def _adopt(self, x: Any) -> Any:
        """The device array `x` (CuPy's or PyTorch's) as this library's,
        without a copy (through the CUDA array interface)."""
        raise NotImplementedError

    def _events(self) -> tuple[Any, Any, Any, Callable[[Any, Any], float]]:
        """(stream, start event, end event, elapsed ms between them)."""
        raise NotImplementedError

    def _free(self) -> None:
        raise NotImplementedError

    def check_dtype(self, dtype: str) -> None:
        """Raise where the function refuses `dtype` (PyTorch's mean takes
        no integers; its unsigned integers wider than uint8 have few
        kernels, if any): tried on one element on the device."""
        try:
            self._reduce(self._rows(np.ones(1, dtype), 1)[0]).item()
        finally:
            self._free()

    def _rotating(self, rows: Any, buffers: int) -> Callable[[int], Any]:
        """The queue of :func:`time_queued`: run r reduces row r % buffers."""
        return lambda run: self._reduce(rows[run % buffers])

    def gpu(self, a: np.ndarray, buffers: int, warmup: int, reps: int,
            mode: str, batch: int = 1) -> GpuTimes:
        _check_mode(mode, batch)
        try:
            rows = self._rows(a, buffers)
            stream, start, end, elapsed = self._events()
            clock = StreamClock(stream, _cudareduce.stream_hold(stream),
                                start, end, elapsed)
            # Unheld first: a kernel's first launch loads its module, which
            # waits for the device (and so for a holding kernel).
            self._reduce(rows[0])
            out, times = time_queued(self._rotating(rows, buffers), clock,
                                     warmup, reps, mode, batch)
            value = out.item()
            del rows, out
            return value, times, None
        finally:
            self._free()

    def call(self, x: Any) -> Callable[[], Any]:
        mine = self._adopt(x)
        return lambda: self._reduce(mine).item()


class _TorchPeer(_Peer):
    library = "torch"

    def __init__(self, function: str, ordinal: int) -> None:
        super().__init__(function)
        import torch  # noqa: PLC0415  (optional dependency)
        if not torch.cuda.is_available():
            raise RuntimeError("torch has no CUDA device")
        self.torch = torch
        self.device = torch.device("cuda", ordinal)

    def _module(self) -> Any:
        return self.torch

    def _rows(self, a: np.ndarray, buffers: int) -> Any:
        src = _torch_tensor(self.torch, a, self.device)
        return src.expand(buffers, a.size).contiguous()

    def _adopt(self, x: Any) -> Any:
        return self.torch.as_tensor(x, device=self.device)

    def _events(self) -> tuple[Any, Any, Any, Callable[[Any, Any], float]]:
        cuda = self.torch.cuda
        return (cuda.current_stream(self.device),
                cuda.Event(enable_timing=True), cuda.Event(enable_timing=True),
                lambda start, end: start.elapsed_time(end))

    def _free(self) -> None:
        self.torch.cuda.empty_cache()


class _CupyPeer(_Peer):
    library = "cupy"

    def __init__(self, function: str, ordinal: int) -> None:
        super().__init__(function)
        import cupy  # noqa: PLC0415  (optional dependency)
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("cupy sees no CUDA device")
        self.cupy = cupy
        self.ordinal = ordinal

    def _module(self) -> Any:
        return self.cupy

    def check_dtype(self, dtype: str) -> None:
        # CuPy has no bfloat16: a PyTorch bfloat16 tensor (the call
        # timings' input, device_arrays) reaches it as void ("|V2").
        if dtype == "bfloat16":
            raise TypeError("CuPy has no bfloat16")
        super().check_dtype(dtype)

    def _rows(self, a: np.ndarray, buffers: int) -> Any:
        rows = self.cupy.empty((buffers, a.size), dtype=a.dtype)
        rows[...] = self.cupy.asarray(a)
        return rows

    def _adopt(self, x: Any) -> Any:
        return self.cupy.asarray(x)

    def _events(self) -> tuple[Any, Any, Any, Callable[[Any, Any], float]]:
        cuda = self.cupy.cuda
        return (cuda.get_current_stream(), cuda.Event(), cuda.Event(),
                cuda.get_elapsed_time)

    def _free(self) -> None:
        self.cupy.get_default_memory_pool().free_all_blocks()


_PEER_CLASSES = {peer.library: peer for peer in (_TorchPeer, _CupyPeer)}


def load_peer(name: str, ordinal: int, dtype: str
              ) -> tuple[MethodTimer | None, str]:
    """The :class:`MethodTimer` of the peer `name` (``"torch.sum"``,
    ``"cupy.min"``, ...: :func:`~cudareduce.bench.names.peers_of`) on device
    `ordinal`, for data of `dtype`: (timer, "") or (None, why it is
    unavailable: not importable, no CUDA there, no such function for
    `dtype`, ...).  The peers' current device must be `ordinal`."""
    if not is_peer(name):
        raise ValueError(f"not a peer: {name!r}")
    library, function = name.split(".")
    try:
        timer = _PEER_CLASSES[library](function, ordinal)
    except ImportError as e:
        return None, f"not importable ({e})"
    except Exception as e:  # noqa: BLE001 - any CUDA init failure of the peer
        return None, f"{type(e).__name__}: {e}"
    try:
        timer.check_dtype(dtype)
    except Exception as e:  # noqa: BLE001 - whatever the library raises
        return None, f"takes no {dtype} ({type(e).__name__}: {e})"
    return timer, ""


def _torch_tensor(torch: Any, a: np.ndarray, device: Any) -> Any:
    """The host array `a` copied to PyTorch's `device`; ml_dtypes'
    bfloat16 through its bits (``torch.from_numpy`` takes no ml_dtypes
    array)."""
    a = np.ascontiguousarray(a)
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.uint16)).to(device).view(
            torch.bfloat16)
    return torch.from_numpy(a).to(device)


#: (the library's name, a maker of its device arrays from host arrays).
DeviceArrays = tuple[str, Callable[[np.ndarray], Any]]


def device_arrays(dtype: str = "float32") -> DeviceArrays | None:
    """How the call timings hold their input of `dtype` on the device:
    CuPy's arrays (but for bfloat16, which CuPy lacks), else PyTorch's
    tensors, or None when neither imports and sees a GPU."""
    try:
        import cupy  # noqa: PLC0415  (optional dependency)
        if dtype != "bfloat16" and cupy.cuda.runtime.getDeviceCount() > 0:
            return "cupy", cupy.asarray
    except Exception:  # noqa: BLE001 - not importable, or no device
        pass
    try:
        import torch  # noqa: PLC0415  (optional dependency)
        if torch.cuda.is_available():
            device = torch.device("cuda", torch.cuda.current_device())
            return "torch", lambda a: _torch_tensor(torch, a, device)
    except ImportError:
        pass
    return None


def probe_us(probe: str, nbytes: int, buffers: int, reps: int,
             mode: str, batch: int = 1, warmup: int = 3) -> float:
    """Median µs of a probe (``"empty"``, ``"read"``, ``"host_copy"``),
    timed as a reduction is (see ``_cudareduce.time_probe``)."""
    times = _cudareduce.time_probe(probe, nbytes, buffers, warmup, reps,
                                   mode, batch)
    return statistics.median(times) * 1e3


def wall_times(call: Callable[[], Any], reps: int
               ) -> tuple[list[float], Any]:
    """(wall seconds of each of `reps` calls, the last call's value)."""
    times = []
    value = None
    for _ in range(reps):
        start = time.perf_counter()
        value = call()
        times.append(time.perf_counter() - start)
    return times, value


def median_wall_time(run: Callable[[], Any], sync: Callable[[], None],
                     repeats: int, warmup: int = 1) -> tuple[float, Any]:
    """(median wall seconds of ``run(); sync()`` over `repeats` calls
    after `warmup` untimed ones, the last call's value of `run`): the
    benchmark scripts' timing of a whole call, the GPU waited for."""
    def call() -> Any:
        value = run()
        sync()
        return value
    wall_times(call, warmup)
    times, value = wall_times(call, repeats)
    return statistics.median(times), value
