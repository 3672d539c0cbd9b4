"""The ``--axis`` mode: reductions along one axis of device arrays, ours
beside PyTorch's, CuPy's and CuPy's with CUB on, each under its floor (an
empty kernel, the read probe and a device-to-device copy, timed the same
way in the same run).

:func:`run_axes` measures the ``--axis`` document (described in
:mod:`cudareduce.bench`, its keys and rules in
:mod:`~cudareduce.bench.axis_schema`); :func:`format_axes` is its report.

Every call is timed from Python as the peers are (:func:`~cudareduce.bench.
timers.time_queued`), behind our stream holder on one non-blocking CuPy
stream that is CuPy's current stream and PyTorch's while it runs: our
call (on the current stream of its input's library), PyTorch's and
CuPy's all queue behind the holder, and none of them waits for the device
(a reduction along axes returns a device array).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, NamedTuple

import numpy as np

import cudareduce
from cudareduce import _cudareduce
from .axis_schema import (AXIS_KIND, AXIS_SCHEMA, CUB_ON, axis_peers,
                          best_peer, case_groups, case_label, column_of,
                          make_axis_probe, make_axis_result, probe_floor_us,
                          validate_axis_document)
from .figures import render
from .names import (DEFAULT_OP, DTYPES, FAST_METHOD, OPS, REFERENCE_METHOD,
                    dtype_kind, numpy_dtype)
from .schema import describe_device, now

from .data import random_array
from .floor import PROBE_REPS, measure_empty, measure_probe
from .ladder import device_info
from .policy import (PILOT_REPS, PILOT_WARMUP, WARMUP, choose_batch,
                     choose_reps, rotation_buffers)
from .progress import Progress
from .timers import StreamClock, device_arrays, time_queued

__all__ = ["AXIS_CASES", "AXIS_DTYPES", "AXIS_TIMING_METHOD", "AxisCase",
           "format_axes", "matches", "reference_along", "result_dtype",
           "run_axes", "tolerance"]


class AxisCase(NamedTuple):
    """One case of the ``--axis`` table: a `shape` reduced along `axis` by
    `op` (None: the run's op)."""

    shape: tuple[int, ...]
    axis: int
    op: str | None = None


#: The cases of issue 43: skinny and square, each way, and an argmax
#: whose rows are long and few.
AXIS_CASES = (
    AxisCase((1 << 24, 4), 1), AxisCase((4, 1 << 24), 1),
    AxisCase((1 << 12, 1 << 12), 1), AxisCase((1 << 12, 1 << 12), 0),
    AxisCase((1 << 24, 4), 0), AxisCase((4, 1 << 24), 0),
    AxisCase((1 << 16, 1 << 10), 1), AxisCase((1 << 16, 1 << 10), 0),
    AxisCase((1 << 10, 1 << 16), 1), AxisCase((1 << 10, 1 << 16), 0),
    AxisCase((32, 1 << 17), 1, op="argmax"),
)
#: The dtypes of ``--axis`` unless ``--dtype`` names others.
AXIS_DTYPES = ("float32",)
#: How the figures are taken, for the document and the report.
AXIS_TIMING_METHOD = (
    "GPU time as nvbench takes it, from Python: CUDA events around the "
    "calls, queued on one non-blocking stream (CuPy's and PyTorch's current "
    "stream) behind a kernel that holds it until they are all queued; cold "
    "= one call per sample after an L2 flush; back to back = several calls "
    "per sample, inputs rotated past L2; medians; floor = empty kernel + "
    "R / read rate + W / write rate, from a read probe and a "
    "device-to-device copy of R bytes timed the same way")
#: Device copies of an input start this many bytes apart, so that every
#: copy is aligned as the first (a method's vector loads, and so its
#: kernels, may depend on it).
_ALIGNMENT = 256


# ---------------------------------------------------------------------------
# The reference and the check


def reference_along(a: np.ndarray, op: str, axis: int) -> np.ndarray:
    """NumPy's `op` of the host array `a` along `axis`: sums, products and
    means of floats (complex) in float64 (complex128), bfloat16 as its
    float32 values (exact), the rest as NumPy computes them."""
    facts = _cudareduce.OPERATOR_FACTS[op]
    kind = dtype_kind(a.dtype.name)
    data = a if a.dtype.kind == kind else a.astype(np.float32)
    function = getattr(np, op)
    if facts.takes_dtype and kind in "fc":
        wide = np.complex128 if kind == "c" else np.float64
        return np.asarray(function(data, axis=axis, dtype=wide))
    return np.asarray(function(data, axis=axis))


def result_dtype(op: str, dtype: str) -> np.dtype:
    """The dtype of NumPy's `op` of `dtype` along an axis: what a
    reduction writes (an index op's int64, an integer sum's int64, ...)."""
    return getattr(np, op)(np.ones((1, 2), numpy_dtype(dtype)), axis=1).dtype


def tolerance(op: str, dtype: str) -> float:
    """The relative tolerance of a result of `op` on `dtype` against
    :func:`reference_along`: 0 (exact) where it selects an element or an
    index or is an integer or bool; else 4 ulps of its result dtype (the
    data's sums are exact in every order, so that only the last rounding,
    and a mean's divide, may differ)."""
    facts = _cudareduce.OPERATOR_FACTS[op]
    result = result_dtype(op, dtype)
    if facts.selects_element or facts.gives_index or result.kind in "biu":
        return 0.0
    if result.kind in "fc":
        return 4 * float(np.finfo(result).eps)
    import ml_dtypes  # noqa: PLC0415 - bfloat16's NumPy kind is "V"
    return 4 * float(ml_dtypes.finfo(result).eps)


def matches(got: np.ndarray, reference: np.ndarray, rtol: float) -> bool:
    """Whether `got` is `reference`: the same shape, and every element
    equal (NaN as NaN) where `rtol` is 0, else within `rtol` of it."""
    got = np.asarray(got)
    if got.shape != reference.shape:
        return False
    kinds = got.dtype.kind + reference.dtype.kind
    if rtol == 0:
        return bool(np.array_equal(got, reference,
                                   equal_nan=any(k in "fc" for k in kinds)))
    wide = np.complex128 if "c" in kinds else np.float64
    return bool(np.allclose(got.astype(wide), reference.astype(wide),
                            rtol=rtol, atol=0, equal_nan=True))


# ---------------------------------------------------------------------------
# The devices


class _Contender(NamedTuple):
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


def _unavailable(name: str, why: str) -> _Contender:
    return _Contender(name, lambda x: x, (), why, (), nullcontext)


class _Devices:
    """CuPy (needed: the stream, the events, the copies) and PyTorch (where
    it imports and sees the GPU) on device `ordinal`, with the one
    non-blocking stream every timed call queues on and its clock."""

    def __init__(self, ordinal: int) -> None:
        try:
            import cupy  # noqa: PLC0415 - optional dependency
        except ImportError as e:
            raise ImportError(f"the --axis mode needs CuPy (its stream, "
                              f"events and copies): {e}") from e
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

    def contenders(self, op: str, axis: int, library: str, rows: list,
                   dtype: str) -> list[_Contender]:
        """Ours (``fast``, ``cub``, the ladder's steps) and the peers of
        `op` along `axis` (:func:`~cudareduce.bench.axis_schema.axis_peers`),
        on the copies `rows` of `library`."""
        reduce = getattr(cudareduce, op)
        # A method that does not reduce along axes (yet) says so with a
        # ValueError; a dtype it does not take, with a TypeError.
        found = [_Contender(m, lambda x, m=m: reduce(x, axis=axis, method=m),
                            rows, None, (ValueError, TypeError), nullcontext)
                 for m in _our_methods()]
        for name in axis_peers(op):
            found.append(self._peer(name, axis, library, rows, dtype))
        return found

    def _peer(self, name: str, axis: int, library: str, rows: list,
              dtype: str) -> _Contender:
        """A peer's contender, or why it cannot run: PyTorch's
        ``torch.<fn>(x, dim=axis)``, CuPy's ``cupy.<fn>(x, axis=axis)``
        (with CUB on for ``cupy.<fn>[cub]``)."""
        peer, _, function = name.partition(".")
        function = function.removesuffix(CUB_ON)
        if peer == "torch":
            if self.torch is None:
                return _unavailable(name, self.torch_why)
            try:
                inputs = rows if library == "torch" else [
                    self.torch.as_tensor(x, device=self.device)
                    for x in rows]
            except Exception as e:  # noqa: BLE001 - whatever torch raises
                return _unavailable(name, f"takes no {dtype} "
                                          f"({type(e).__name__}: {e})")
            torch_reduce = getattr(self.torch, function)
            return _Contender(name, lambda x: torch_reduce(x, dim=axis),
                              inputs, None, (Exception,), nullcontext)
        if library != "cupy":
            return _unavailable(name, f"CuPy has no {dtype}")
        setting = self.cub_on if name.endswith(CUB_ON) else nullcontext
        cupy_reduce = getattr(self.cupy, function)
        return _Contender(name, lambda x: cupy_reduce(x, axis=axis), rows,
                          None, (Exception,), setting)

    def host(self, x: Any) -> np.ndarray:
        """A device result on the host (bfloat16 as float32, exactly)."""
        if type(x).__module__.partition(".")[0] == "cupy":
            return x.get()
        if x.dtype == self.torch.bfloat16:
            x = x.float()
        return x.cpu().numpy()

    def measure(self, contender: _Contender,
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


# ---------------------------------------------------------------------------
# The run


def _cases(shapes: Iterable[Sequence[Any]] | None) -> list[AxisCase]:
    """`shapes` as :class:`AxisCase`\\ s, checked; :data:`AXIS_CASES`
    for None."""
    if shapes is None:
        return list(AXIS_CASES)
    cases = []
    for item in shapes:
        case = AxisCase(tuple(int(k) for k in item[0]), *item[1:])
        if not case.shape or min(case.shape) < 1 \
                or not 0 <= case.axis < len(case.shape) \
                or case.op not in (None, *OPS):
            raise ValueError(f"shapes: expected (shape, axis[, op]) with "
                             f"extents >= 1, the axis among them and an "
                             f"op of {OPS}, got {item!r}")
        cases.append(case)
    if not cases:
        raise ValueError("shapes: no case given")
    return cases


def _measure_case(devices: _Devices, case: AxisCase, op: str, dtype: str,
                  rng: np.random.Generator, info: Mapping[str, Any],
                  floor: Mapping[str, float], probes: dict[int, dict],
                  bar: Progress) -> list[dict]:
    """The results of one case of one dtype, every contender's; the probe
    at its input's bytes measured first where it is not yet."""
    a = random_array(rng, math.prod(case.shape), dtype, op).reshape(
        case.shape)
    reference = reference_along(a, op, case.axis)
    rtol = tolerance(op, dtype)
    read_bytes = a.nbytes
    write_bytes = reference.size * result_dtype(op, dtype).itemsize
    buffers = rotation_buffers(read_bytes, info["l2_bytes"],
                               info["total_bytes"])
    if read_bytes not in probes:
        read = measure_probe(read_bytes, info)
        probes[read_bytes] = make_axis_probe(
            read_bytes, read["read_cold_us"], read["read_batch_us"],
            *devices.copy_us(read_bytes, buffers), floor)
    floors = {f"floor_{way}_us": probe_floor_us(
                  floor, probes[read_bytes], way, read_bytes, write_bytes)
              for way in ("cold", "batch")}
    try:
        library, rows = devices.copies(a, buffers)
        contenders = devices.contenders(op, case.axis, library, rows, dtype)
    except LookupError as e:            # no library holds the dtype
        rows, contenders = [], [_unavailable(name, str(e))
                                for name in _names(op)]
    results = []
    for contender in contenders:
        figures = devices.measure(
            contender, lambda got: matches(got, reference, rtol))
        results.append(make_axis_result(
            contender.name, op, dtype, case.shape, case.axis,
            read_bytes=read_bytes, write_bytes=write_bytes, **floors,
            **figures))
        bar.step(f"{dtype} {case_label(results[-1])} {contender.name}")
    del rows, contenders
    devices.free()
    return results


def _our_methods() -> list[str]:
    """Our methods in the order the document lists them: ``fast``,
    ``cub``, then the ladder's steps."""
    return [FAST_METHOD, REFERENCE_METHOD,
            *(m for m in cudareduce.methods()
              if m not in (FAST_METHOD, REFERENCE_METHOD))]


def _names(op: str) -> list[str]:
    """The contenders' names of `op`, ours first, as
    :meth:`_Devices.contenders` orders them."""
    return [*_our_methods(), *axis_peers(op)]


def run_axes(op: str = DEFAULT_OP, dtypes: Iterable[str] = AXIS_DTYPES,
             shapes: Iterable[Sequence[Any]] | None = None,
             progress: bool = True, *, seed: int | None = None) -> dict:
    """What ``--axis`` measures: each case reduced along its axis by ours
    and the peers, each checked, then timed cold and back to back under
    its floor.

    Parameters
    ----------
    op : str
        The op of the cases that name none (default ``"sum"``); the argmax
        case of :data:`AXIS_CASES` stays argmax.
    dtypes : iterable of str
        The element types, each of :data:`~cudareduce.bench.names.DTYPES`
        (default float32).
    shapes : iterable of (shape, axis[, op]), optional
        The cases (default :data:`AXIS_CASES`).
    progress : bool
        Show a progress bar over the cases' contenders.
    seed : int, optional
        Seed of the random data (default: fresh entropy every run).

    Returns
    -------
    dict
        The ``--axis`` document
        (:func:`~cudareduce.bench.axis_schema.validate_axis_document`):
        for every (dtype, case) our methods (``fast``, ``cub``, the
        ladder's steps: those that refuse to reduce along an axis are
        unavailable, with their error) and the peers, PyTorch's
        ``torch.<fn>(x, dim=axis)``, CuPy's ``cupy.<fn>(x, axis=axis)``
        with its default accelerators and with CUB on
        (``cupy.<fn>[cub]``); inputs in CuPy (PyTorch for bfloat16).

    Raises
    ------
    ImportError
        CuPy does not import.
    cudareduce.CudaError
        No usable CUDA device, or a CUDA call failed.
    ValueError
        Unknown op or dtype, a dtype named twice, or a malformed case.
    MemoryError
        Not enough GPU memory for an input.
    """
    if op not in OPS:
        raise ValueError(f"unsupported op {op!r}; supported: "
                         + ", ".join(OPS))
    dtypes = list(dtypes)
    if not dtypes or len(set(dtypes)) < len(dtypes) \
            or any(d not in DTYPES for d in dtypes):
        raise ValueError(f"dtypes: expected distinct dtypes of {DTYPES}, "
                         f"got {dtypes!r}")
    cases = _cases(shapes)
    info = device_info()
    devices = _Devices(info["ordinal"])
    floor = measure_empty()
    probes: dict[int, dict] = {}
    rng = np.random.default_rng(seed)
    results: list[dict] = []
    bar = Progress(sum(len(_names(case.op or op)) for case in cases)
                   * len(dtypes), progress)
    try:
        for dtype in dtypes:
            for case in cases:
                results += _measure_case(devices, case, case.op or op, dtype,
                                         rng, info, floor, probes, bar)
    finally:
        bar.close()
    document = {"kind": AXIS_KIND, "schema": AXIS_SCHEMA,
                "cudareduce_version": cudareduce.__version__, "date": now(),
                "device": describe_device(info),
                "software": devices.software(),
                "timing": {"method": AXIS_TIMING_METHOD},
                "floor": floor,
                "probes": [probes[b] for b in sorted(probes)],
                "results": results}
    validate_axis_document(document)
    return document


# ---------------------------------------------------------------------------
# The report


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["unavailable"] is not None:
        return "n/a"
    return "WRONG" if not r["correct"] else f"{r['batch_us']:,.1f}"


def format_axes(document: Mapping[str, Any]) -> str:
    """The ``--axis`` report: per dtype, a row per case with its floor,
    each method's and peer's back-to-back µs (peers by library: the
    argmax row's ``torch`` is ``torch.argmax``), ``fast``'s % of the floor
    and its speed over the fastest peer's; then what was unavailable, and
    why, and what was WRONG."""
    software = document["software"]
    lines = [f"Along an axis on {document['device']['name']}: GPU time back "
             f"to back, µs per call (inputs rotated past L2); floor = empty "
             f"kernel + R / read rate + W / write rate (a read probe and a "
             f"device-to-device copy, timed the same way in the same run)"]
    accelerators = software["cupy_accelerators"]
    if accelerators is not None:
        default = {way: ", ".join(names) or "none"
                   for way, names in accelerators.items()}
        lines.append(f"CuPy {software['cupy']}'s accelerators by default "
                     f"(cupy): reduction {default['reduction']}, routine "
                     f"{default['routine']}; cupy[cub]: both cub")
    groups = case_groups(document["results"])
    for dtype in dict.fromkeys(case[0] for case in groups):
        cases = {case: group for case, group in groups.items()
                 if case[0] == dtype}
        rows = [r for group in cases.values() for r in group.values()]
        columns = list(dict.fromkeys(column_of(r["method"]) for r in rows
                                     if r["unavailable"] is None))
        cells = []
        for group in cases.values():
            by_column = {column_of(m): r for m, r in group.items()}
            first = next(iter(group.values()))
            fast = group.get(FAST_METHOD)
            best = best_peer(group)
            speed = best["batch_us"] / fast["batch_us"] \
                if fast is not None and fast["batch_us"] and best else None
            cells.append(
                [case_label(first), f"{first['floor_batch_us']:,.1f}",
                 *(_cell(by_column.get(c)) for c in columns),
                 "-" if fast is None or fast["pct_floor"] is None
                 else f"{fast['pct_floor']:.0f}%",
                 "-" if speed is None else f"{speed:.2f}×"])
        lines += ["", dtype]
        lines += render(["case", "floor µs", *columns, "fast % of floor",
                         "fast / fastest peer"], cells)
        lines += _notes(rows)
    return "\n".join(lines)


def _notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What was unavailable (each method's reasons, once each) and what
    was WRONG."""
    why: dict[str, dict[str, None]] = {}
    for r in rows:
        if r["unavailable"] is not None:
            why.setdefault(r["method"], {})[r["unavailable"]] = None
    lines = [f"  not available: {method}: {'; '.join(reasons)}"
             for method, reasons in why.items()]
    lines += [f"  WRONG: {r['method']} on {case_label(r)}" for r in rows
              if r["correct"] is False]
    return lines
