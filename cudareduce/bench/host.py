"""The ``--host`` mode: whole calls on NumPy arrays (the copy to the GPU
included, the result back on the host) for cudareduce, ``numpy.sum`` and the
peers, and ours and ``numpy.sum``'s along each axis of the same array as
rows of :data:`HOST_ROW`, under the pinned host-to-device copy bandwidth of
the same run.

:func:`run_host` measures the ``--host`` document (described in
:mod:`cudareduce.bench`); :func:`format_host` is its report.
"""
from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

import cudareduce
from .figures import render, short_n
from .names import DEFAULT_OP
from .schema import describe_device, now

from .axes import reference_along, result_dtype
from .data import is_correct, random_array, reference_result
from .ladder import device_info
from .progress import Progress
from .timers import probe_us, wall_times

__all__ = [
    "AXIS_CALLS", "CUDAREDUCE_AXIS_CALLS", "CUDAREDUCE_CALL", "CUPY_CALL",
    "HOST_AXES", "HOST_COPY_BYTES", "HOST_DTYPES", "HOST_MAX_REPS",
    "HOST_MIN_REPS", "HOST_ROW", "HOST_SIZES", "HOST_TARGET_SECONDS",
    "NUMPY_AXIS_CALLS", "NUMPY_CALL", "TORCH_CALL", "AxisSpeed",
    "HostRatios", "axis_correct", "axis_speed", "axis_speeds", "format_host",
    "has_axis_calls", "host_ratios", "run_host", "times_axes",
]

#: Sizes and dtypes of ``--host``.
HOST_SIZES = tuple(1 << k for k in range(20, 29, 2))
HOST_DTYPES = ("float32", "int32")
#: Wall time each figure of ``--host`` aims at, and its reps' bounds.
HOST_TARGET_SECONDS = 0.3
HOST_MIN_REPS, HOST_MAX_REPS = 3, 50
#: Bytes of the pinned host-to-device copy that sets the ceiling.
HOST_COPY_BYTES = 256 << 20
#: The calls ``--host`` times, as its document names them.
CUDAREDUCE_CALL = "cudareduce.sum(a)"
NUMPY_CALL = "numpy.sum(a)"
TORCH_CALL = "torch.from_numpy(a).cuda().sum().item()"
CUPY_CALL = "cupy.asarray(a).sum().item()"
#: Along axes, ``a`` is the array as (n // HOST_ROW, HOST_ROW), C-contiguous:
#: axis 1 reduces its rows (contiguous), axis 0 its columns.
HOST_ROW = 1024
HOST_AXES = (1, 0)
#: The along-axis calls ``--host`` times, by axis, as its document names
#: them: ours and NumPy's (issue 43 holds ours to NumPy's).
CUDAREDUCE_AXIS_CALLS = {axis: f"cudareduce.sum(a, axis={axis})"
                         for axis in HOST_AXES}
NUMPY_AXIS_CALLS = {axis: f"numpy.sum(a, axis={axis})" for axis in HOST_AXES}
AXIS_CALLS = frozenset(CUDAREDUCE_AXIS_CALLS.values()) \
    | frozenset(NUMPY_AXIS_CALLS.values())


def _wall_median_ms(call: Callable[[], Any]) -> tuple[float, Any]:
    """(median wall ms of `call()`, its last value): one warm-up call, a
    pilot, then enough reps for about ``HOST_TARGET_SECONDS``."""
    call()
    (pilot,), _ = wall_times(call, 1)
    reps = int(min(HOST_MAX_REPS, max(HOST_MIN_REPS,
                                      HOST_TARGET_SECONDS / max(pilot, 1e-9))))
    times, value = wall_times(call, reps)
    return statistics.median(times) * 1e3, value


def _host_calls(ordinal: int) -> dict[str, Callable[[np.ndarray], Any]]:
    """The calls ``--host`` times, by name: ours, NumPy's, and the peers'
    (when they import and see a GPU), each returning a Python number."""
    calls: dict[str, Callable[[np.ndarray], Any]] = {
        CUDAREDUCE_CALL: lambda a: cudareduce.sum(a).item(),
        NUMPY_CALL: lambda a: np.sum(a).item(),
    }
    try:
        import torch  # noqa: PLC0415 - optional dependency
        if torch.cuda.is_available():
            device = torch.device("cuda", ordinal)
            calls[TORCH_CALL] = (
                lambda a: torch.from_numpy(a).to(device).sum().item())
    except ImportError:
        pass
    try:
        import cupy  # noqa: PLC0415 - optional dependency
        if cupy.cuda.runtime.getDeviceCount() > 0:
            calls[CUPY_CALL] = lambda a: cupy.asarray(a).sum().item()
    except Exception:  # noqa: BLE001 - not importable, or no device
        pass
    return calls


def _time_calls(calls: Mapping[str, Callable[[np.ndarray], Any]],
                a: np.ndarray, bar: Progress) -> list[dict]:
    """The ``--host`` results of each of `calls` on the host array `a`,
    each checked exactly; a step of `bar` each."""
    reference = reference_result(a)
    rows = []
    for name, call in calls.items():
        median_ms, value = _wall_median_ms(lambda: call(a))
        rows.append({"call": name, "dtype": a.dtype.name, "n": a.size,
                     "median_ms": median_ms,
                     "gbps": a.nbytes / (median_ms * 1e-3) / 1e9,
                     "correct": is_correct(value, reference)})
        bar.step(f"{a.dtype.name} n={short_n(a.size)} {name}")
    return rows


def times_axes(n: int) -> bool:
    """Whether ``--host`` times the along-axis calls at `n` elements: where
    they make whole rows of :data:`HOST_ROW`."""
    return n >= HOST_ROW and n % HOST_ROW == 0


def axis_correct(got: Any, reference: np.ndarray, dtype: str) -> bool:
    """Whether `got`, a sum along an axis of :func:`random_array`'s data of
    `dtype`, is right: NumPy's result shape and dtype, and each element
    within 0.5 of `reference`, the exact sums (:func:`~cudareduce.bench.
    axes.reference_along`).  The data are non-zero integers whose partial
    sums are exact in every order, float32's too (:func:`~cudareduce.bench.
    data.value_limit`): a right result is exact, and one element lost or
    doubled moves it by 1 or more, however large the sum."""
    got = np.asarray(got)
    return got.shape == reference.shape \
        and got.dtype == result_dtype(DEFAULT_OP, dtype) \
        and bool(np.all(np.abs(got.astype(np.float64)
                               - reference.astype(np.float64)) < 0.5))


def _time_axis_calls(a: np.ndarray, bar: Progress) -> list[dict]:
    """The ``--host`` results of ours and NumPy's along each of
    :data:`HOST_AXES` of the host array `a` as (n // HOST_ROW, HOST_ROW),
    each checked by :func:`axis_correct`; a step of `bar` each."""
    rows2d = a.reshape(-1, HOST_ROW)
    results = []
    for axis in HOST_AXES:
        reference = reference_along(rows2d, DEFAULT_OP, axis)
        for name, reduce in ((CUDAREDUCE_AXIS_CALLS[axis], cudareduce.sum),
                             (NUMPY_AXIS_CALLS[axis], np.sum)):
            median_ms, value = _wall_median_ms(
                functools.partial(reduce, rows2d, axis=axis))
            results.append({"call": name, "dtype": a.dtype.name,
                            "n": a.size, "median_ms": median_ms,
                            "gbps": a.nbytes / (median_ms * 1e-3) / 1e9,
                            "correct": axis_correct(value, reference,
                                                    a.dtype.name)})
            bar.step(f"{a.dtype.name} n={short_n(a.size)} {name}")
    return results


def _time_size(calls: Mapping[str, Callable[[np.ndarray], Any]],
               a: np.ndarray, bar: Progress) -> list[dict]:
    """The ``--host`` results on the host array `a`: the whole calls, then
    the along-axis ones where :func:`times_axes`."""
    results = _time_calls(calls, a, bar)
    if times_axes(a.size):
        results += _time_axis_calls(a, bar)
    return results


def run_host(sizes: Iterable[int] = HOST_SIZES,
             dtypes: Iterable[str] = HOST_DTYPES, progress: bool = True,
             *, seed: int | None = None) -> dict:
    """What ``--host`` measures: the wall time of a whole call on a NumPy
    array (the copy to the GPU included, the result back on the host) for
    cudareduce, ``numpy.sum`` and the peers; of ``cudareduce.sum`` and
    ``numpy.sum`` along each of :data:`HOST_AXES` of the same array as
    (n // HOST_ROW, HOST_ROW) (where :func:`times_axes`); and the pinned
    host-to-device copy bandwidth of the same run as the ceiling.

    Returns
    -------
    dict
        ``{"device": {...}, "date": str, "pinned_gbps": float, "results":
        [{"call", "dtype", "n", "median_ms", "gbps", "correct"}]}``:
        the device and its software as a ladder document has them, the
        date; ``gbps`` is array bytes / median wall time.
    """
    info = device_info()
    copy_us = probe_us("host_copy", HOST_COPY_BYTES, 1, 10, "cold")
    pinned_gbps = HOST_COPY_BYTES / (copy_us * 1e3)
    calls = _host_calls(info["ordinal"])
    sizes, dtypes = list(sizes), list(dtypes)
    rng = np.random.default_rng(seed)
    results = []
    steps = sum(len(calls) + (len(AXIS_CALLS) if times_axes(n) else 0)
                for n in sizes)
    bar = Progress(steps * len(dtypes), progress)
    try:
        for dtype in dtypes:
            for n in sizes:
                # One array at a time: freed before the next is made.
                results += _time_size(calls, random_array(rng, n, dtype),
                                      bar)
    finally:
        bar.close()
    return {"device": describe_device(info), "date": now(),
            "pinned_gbps": pinned_gbps, "results": results}


class HostRatios(NamedTuple):
    """How ``cudareduce.sum(a)`` compares with the other calls and the
    pinned copy at one size of a ``--host`` document (float32)."""

    #: The size compared: the document's largest.
    n: int
    #: Each other whole call measured correct there: its median time over
    #: ours (how many times faster ours is).
    speed: dict[str, float]
    #: Our GB/s over the pinned host-to-device copy's.
    pinned: float


def host_ratios(document: Mapping[str, Any]) -> HostRatios | None:
    """The :class:`HostRatios` of a ``--host`` document at its largest n,
    float32 (1 GiB by default), of the whole calls; None where
    ``cudareduce.sum(a)`` was not measured there or is WRONG."""
    results = [r for r in document["results"] if r["call"] not in AXIS_CALLS]
    big = [r for r in results if r["dtype"] == "float32"
           and r["n"] == max(r2["n"] for r2 in results)]
    ours = next((r for r in big if r["call"] == CUDAREDUCE_CALL), None)
    if ours is None or not ours["correct"]:
        return None
    speed = {r["call"]: r["median_ms"] / ours["median_ms"] for r in big
             if r is not ours and r["correct"]}
    return HostRatios(ours["n"], speed,
                      ours["gbps"] / document["pinned_gbps"])


class AxisSpeed(NamedTuple):
    """``cudareduce.sum(a, axis=k)`` beside ``numpy.sum(a, axis=k)`` at one
    dtype and size of a ``--host`` document."""

    dtype: str
    n: int
    axis: int
    #: Our result and NumPy's (``{"call", "median_ms", ...}``); None where
    #: not measured.
    ours: Mapping[str, Any] | None
    numpy: Mapping[str, Any] | None

    @property
    def speed(self) -> float | None:
        """NumPy's median time over ours (how many times faster ours is);
        None unless both were measured correct."""
        if self.ours is None or self.numpy is None \
                or not (self.ours["correct"] and self.numpy["correct"]):
            return None
        return self.numpy["median_ms"] / self.ours["median_ms"]


def has_axis_calls(document: Mapping[str, Any]) -> bool:
    """Whether a ``--host`` document times along axes (one written before
    it did has whole calls only)."""
    return any(r["call"] in AXIS_CALLS for r in document["results"])


def axis_speed(document: Mapping[str, Any], dtype: str, n: int,
               axis: int) -> AxisSpeed:
    """The :class:`AxisSpeed` of a ``--host`` document at `dtype`, `n` and
    `axis` (its results None where it has none)."""
    found = {r["call"]: r for r in document["results"]
             if r["dtype"] == dtype and r["n"] == n}
    return AxisSpeed(dtype, n, axis, found.get(CUDAREDUCE_AXIS_CALLS[axis]),
                     found.get(NUMPY_AXIS_CALLS[axis]))


def axis_speeds(document: Mapping[str, Any]) -> list[AxisSpeed]:
    """The :class:`AxisSpeed` of every dtype, n (ascending) and axis of
    :data:`HOST_AXES` where a ``--host`` document has an along-axis call;
    dtypes in the document's order."""
    measured = [r for r in document["results"] if r["call"] in AXIS_CALLS]
    return [axis_speed(document, dtype, n, axis)
            for dtype in dict.fromkeys(r["dtype"] for r in measured)
            for n in sorted({r["n"] for r in measured if r["dtype"] == dtype})
            for axis in HOST_AXES]


def _ms_cell(r: Mapping[str, Any] | None) -> str:
    """A median wall time, ms; ``-`` where not measured, WRONG."""
    if r is None:
        return "-"
    return f"{r['median_ms']:,.2f}" if r["correct"] else "WRONG"


def format_host(document: Mapping[str, Any]) -> str:
    """The ``--host`` report: per dtype, effective GB/s of each whole call
    by n, then the ratios of :func:`host_ratios`, then per dtype the
    along-axis times and speeds of :func:`axis_speeds`."""
    dev = document["device"]
    pinned = document["pinned_gbps"]
    lines = [f"Host arrays on {dev['name']}: effective GB/s = array bytes / "
             f"wall time of the whole call (result on the host); pinned "
             f"host-to-device copy {pinned:,.1f} GB/s"]
    results = [r for r in document["results"] if r["call"] not in AXIS_CALLS]
    calls = list(dict.fromkeys(r["call"] for r in results))
    for dtype in dict.fromkeys(r["dtype"] for r in results):
        rows = [r for r in results if r["dtype"] == dtype]
        cells = []
        for n in sorted({r["n"] for r in rows}):
            by_call = {r["call"]: r for r in rows if r["n"] == n}
            mib = n * np.dtype(dtype).itemsize / 2**20
            cells.append([short_n(n), f"{mib:,.0f}"] + [
                "-" if c not in by_call else
                (f"{by_call[c]['gbps']:,.1f}" if by_call[c]["correct"]
                 else "WRONG") for c in calls])
        lines += ["", f"{dtype} (GB/s)"]
        lines += render(["n", "MiB"] + calls, cells)
    ratios = host_ratios(document)
    if ratios is not None:
        lines += ["", f"Ratios, float32 n = {short_n(ratios.n)} "
                      f"({ratios.n * 4 / 2**30:g} GiB)"]
        cells = [[f"cudareduce / {call} (speed)", f"{value:.2f}×"]
                 for call, value in ratios.speed.items()]
        cells.append(["cudareduce / pinned copy (GB/s)",
                      f"{ratios.pinned:.2f}×"])
        lines += render(("ratio", "value"), cells)
    speeds = axis_speeds(document)
    for dtype in dict.fromkeys(s.dtype for s in speeds):
        lines += ["", f"{dtype} along axis k of a as (n // {HOST_ROW}, "
                      f"{HOST_ROW}) (median wall ms)"]
        cells = [[short_n(s.n),
                  f"{s.n * np.dtype(dtype).itemsize / 2**20:,.0f}",
                  str(s.axis), _ms_cell(s.ours), _ms_cell(s.numpy),
                  "-" if s.speed is None else f"{s.speed:.2f}×"]
                 for s in speeds if s.dtype == dtype]
        lines += render(["n", "MiB", "axis", "cudareduce ms", "numpy ms",
                         "cudareduce / numpy (speed)"], cells)
    return "\n".join(lines)
