"""The devices of the modes timed from Python (``--axis``, ``--exact``):
CuPy's stream, events and copies, PyTorch's view of the same stream, and
the measure of one contender on them.

Every call is timed as the peers are (:func:`~cudareduce.bench.timers.
time_queued`), behind our stream holder on one non-blocking CuPy stream
that is CuPy's current stream and PyTorch's while it runs: our calls (on
the current stream of their input's library), PyTorch's and CuPy's all
queue behind the holder, and none of them waits for the device.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, NamedTuple

import numpy as np

from cudareduce import _cudareduce
from .floor import PROBE_REPS
from .policy import (PILOT_REPS, PILOT_WARMUP, WARMUP, choose_batch,
                     choose_reps)
from .timers import StreamClock, device_arrays, time_queued

__all__ = ["Contender", "Devices", "unavailable"]

#: Device copies of an input start this many bytes apart, so that every
#: copy is aligned as the first (a method's vector loads, and so its
#: kernels, may depend on it).
_ALIGNMENT = 256


class Contender(NamedTuple):
    """One method or peer of a case: its name, the reduction of one device
    input, the inputs (the case's copies, adopted by the peer's library),
    why it cannot run (or None), the errors that mean it refuses, and the
    setting it runs under (CuPy's accelerators)."""

    name: str
    reduce: Callable[[Any], Any]
    inputs: Sequence[Any]
    why: str | None
    refusals: tuple[type[BaseException], ...]
    setting: Callable[[], AbstractContextManager]


def unavailable(name: str, why: str) -> Contender:
    """A contender that cannot run, and why."""
    return Contender(name, lambda x: x, (), why, (), nullcontext)


class Devices:
    """CuPy (needed: the stream, the events, the copies) and PyTorch (where
    it imports and sees the GPU) on device `ordinal`, with the one
    non-blocking stream every timed call queues on and its clock; `mode`
    names the bench's mode in the error where CuPy does not import."""

    def __init__(self, ordinal: int, mode: str) -> None:
        try:
            import cupy  # noqa: PLC0415 - optional dependency
        except ImportError as e:
            raise ImportError(f"{mode} needs CuPy (its stream, events and "
                              f"copies): {e}") from e
        self.cupy = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.clock = StreamClock(self.stream,
                                 _cudareduce.stream_hold(self.stream),
                                 cupy.cuda.Event(), cupy.cuda.Event(),
                                 cupy.cuda.get_elapsed_time)
        self.torch, self.torch_why = None, ""
        try:
            import torch  # noqa: PLC0415 - optional dependency
        except ImportError as e:
            self.torch_why = f"not importable ({e})"
        else:
            if torch.cuda.is_available():
                self.torch = torch
                self.device = torch.device("cuda", ordinal)
                self.torch_stream = torch.cuda.ExternalStream(
                    self.stream.ptr, device=self.device)
            else:
                self.torch_why = "torch has no CUDA device"

    @contextmanager
    def current(self) -> Iterator[None]:
        """The stream current in CuPy and PyTorch."""
        with self.stream:
            if self.torch is None:
                yield
            else:
                with self.torch.cuda.stream(self.torch_stream):
                    yield

    @contextmanager
    def cub_on(self) -> Iterator[None]:
        """CuPy's reduction and routine accelerators ``["cub"]``, the
        previous ones back after."""
        core = self.cupy._core
        saved = (list(core.get_reduction_accelerators()),
                 list(core.get_routine_accelerators()))
        core.set_reduction_accelerators(["cub"])
        core.set_routine_accelerators(["cub"])
        try:
            yield
        finally:
            core.set_reduction_accelerators(saved[0])
            core.set_routine_accelerators(saved[1])

    def software(self) -> dict:
        """The document's ``software``."""
        return {"numpy": np.__version__, "cupy": self.cupy.__version__,
                "torch": None if self.torch is None
                else self.torch.__version__,
                "cupy_accelerators": self._accelerators()}

    def _accelerators(self) -> dict | None:
        """CuPy's accelerators by default, by name; None where this CuPy
        does not say."""
        try:
            core = self.cupy._core
            codes = vars(core._accelerator)
            names = {value: key.removeprefix("ACCELERATOR_").lower()
                     for key, value in codes.items()
                     if key.startswith("ACCELERATOR_")}
            return {way: [names.get(code, str(code)) for code in getter()]
                    for way, getter in (
                        ("reduction", core.get_reduction_accelerators),
                        ("routine", core.get_routine_accelerators))}
        except AttributeError:
            return None

    def free(self) -> None:
        """The libraries' cached memory back to the device."""
        self.cupy.get_default_memory_pool().free_all_blocks()
        if self.torch is not None:
            self.torch.cuda.empty_cache()

    def copies(self, a: np.ndarray, buffers: int) -> tuple[str, list]:
        """(the library, `buffers` device copies of the host array `a`, in
        CuPy, or PyTorch for bfloat16), each aligned as the first.

        Raises
        ------
        LookupError
            Neither library holds `a`'s dtype here.
        """
        made = device_arrays(a.dtype.name)
        if made is None:
            raise LookupError(f"neither CuPy nor PyTorch holds "
                              f"{a.dtype.name} on the device here")
        library, to_device = made
        step = max(1, _ALIGNMENT // a.itemsize)
        stride = -(-a.size // step) * step
        with self.current():
            source = to_device(a.reshape(-1))
            if library == "cupy":
                flat = self.cupy.empty((buffers, stride), source.dtype)
            else:
                flat = self.torch.empty((buffers, stride), dtype=source.dtype,
                                        device=source.device)
            flat[:, :a.size] = source
            rows = [flat[i, :a.size].reshape(a.shape) for i in range(buffers)]
        # The copies were made on other streams than the calls'.
        self.cupy.cuda.runtime.deviceSynchronize()
        return library, rows

    def _copying(self, nbytes: int, buffers: int) -> Callable[[int], None]:
        """The queue of a device-to-device copy of `nbytes`
        (``cudaMemcpyAsync``): run r copies the r % `buffers`-th of as many
        pairs of buffers, held by the queue."""
        stride = -(-nbytes // _ALIGNMENT) * _ALIGNMENT
        src = self.cupy.empty(buffers * stride, self.cupy.uint8)
        dst = self.cupy.empty_like(src)

        def queue(run: int) -> None:
            at = run % buffers * stride
            (dst.data + at).copy_from_device_async(src.data + at, nbytes,
                                                   self.stream)
        return queue

    def copy_us(self, nbytes: int, buffers: int) -> tuple[float, float]:
        """(cold, back-to-back) median µs of a device-to-device copy of
        `nbytes`, rotating among `buffers` pairs of buffers."""
        queue = self._copying(nbytes, buffers)
        with self.current():
            queue(0)                    # unheld first
            self.stream.synchronize()
            _, cold = time_queued(queue, self.clock, WARMUP, PROBE_REPS,
                                  "cold")
            cold_us = statistics.median(cold) * 1e3
            _, back_to_back = time_queued(
                queue, self.clock, WARMUP, PROBE_REPS, "batch",
                choose_batch(cold_us * 1e-3))
        del queue                       # and with it the buffers
        self.free()
        return cold_us, statistics.median(back_to_back) * 1e3

    def host(self, x: Any) -> np.ndarray:
        """A device result on the host (bfloat16 as float32, exactly)."""
        if type(x).__module__.partition(".")[0] == "cupy":
            return x.get()
        if x.dtype == self.torch.bfloat16:
            x = x.float()
        return x.cpu().numpy()

    def measure(self, contender: Contender,
                check: Callable[[np.ndarray], bool]) -> dict:
        """The figures of one contender, as :func:`~cudareduce.bench.
        axis_schema.make_axis_result` takes them: checked on its first,
        unheld, call (where it refuses, unavailable with the error), then
        timed cold and back to back (choose_reps, choose_batch from a
        pilot), the last output of each checked again."""
        if contender.why is not None:
            return {"unavailable": contender.why}
        inputs = contender.inputs
        buffers = len(inputs)

        def queue(run: int) -> Any:
            return contender.reduce(inputs[run % buffers])
        with contender.setting(), self.current():
            try:
                out = contender.reduce(inputs[0])
            except contender.refusals as e:
                return {"unavailable": f"{type(e).__name__}: {e}"}
            if not check(self.host(out)):
                return {"correct": False}
            # Unheld, each copy once: every kernel loaded before a hold.
            for x in inputs[1:]:
                contender.reduce(x)
            self.stream.synchronize()
            _, pilot = time_queued(queue, self.clock, PILOT_WARMUP,
                                   PILOT_REPS, "cold")
            estimate = statistics.median(pilot)
            reps = choose_reps(estimate)
            out, cold = time_queued(queue, self.clock, WARMUP, reps, "cold")
            if not check(self.host(out)):
                return {"correct": False}
            batch = choose_batch(estimate)
            out, back_to_back = time_queued(
                queue, self.clock, WARMUP, choose_reps(estimate * batch),
                "batch", batch)
            if not check(self.host(out)):
                return {"correct": False}
        return {"cold_us": statistics.median(cold) * 1e3,
                "batch_us": statistics.median(back_to_back) * 1e3,
                "batch": batch, "reps": reps, "correct": True}
