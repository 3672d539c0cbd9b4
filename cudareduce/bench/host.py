"""The ``--host`` mode: whole calls on NumPy arrays (the copy to the GPU
included, the result back on the host) for cudareduce, ``numpy.sum`` and the
peers, under the pinned host-to-device copy bandwidth of the same run.

:func:`run_host` measures the ``--host`` document (described in
:mod:`cudareduce.bench`); :func:`format_host` is its report.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

import cudareduce
from .figures import render, short_n
from .schema import describe_device, now

from .data import is_correct, random_array, reference_result
from .ladder import device_info
from .progress import Progress
from .timers import probe_us, wall_times

__all__ = [
    "CUDAREDUCE_CALL", "CUPY_CALL", "HOST_COPY_BYTES", "HOST_DTYPES",
    "HOST_MAX_REPS", "HOST_MIN_REPS", "HOST_SIZES", "HOST_TARGET_SECONDS",
    "NUMPY_CALL", "TORCH_CALL", "HostRatios", "format_host", "host_ratios",
    "run_host",
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


def run_host(sizes: Iterable[int] = HOST_SIZES,
             dtypes: Iterable[str] = HOST_DTYPES, progress: bool = True,
             *, seed: int | None = None) -> dict:
    """What ``--host`` measures: the wall time of a whole call on a NumPy
    array (the copy to the GPU included, the result back on the host) for
    cudareduce, ``numpy.sum`` and the peers, and the pinned host-to-device
    copy bandwidth of the same run as the ceiling.

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
    bar = Progress(len(sizes) * len(dtypes) * len(calls), progress)
    try:
        for dtype in dtypes:
            for n in sizes:
                # One array at a time: freed before the next is made.
                results += _time_calls(calls, random_array(rng, n, dtype),
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
    #: Each other call measured correct there: its median time over ours
    #: (how many times faster ours is).
    speed: dict[str, float]
    #: Our GB/s over the pinned host-to-device copy's.
    pinned: float


def host_ratios(document: Mapping[str, Any]) -> HostRatios | None:
    """The :class:`HostRatios` of a ``--host`` document at its largest n,
    float32 (1 GiB by default); None where ``cudareduce.sum(a)`` was not
    measured there or is WRONG."""
    results = document["results"]
    big = [r for r in results if r["dtype"] == "float32"
           and r["n"] == max(r2["n"] for r2 in results)]
    ours = next((r for r in big if r["call"] == CUDAREDUCE_CALL), None)
    if ours is None or not ours["correct"]:
        return None
    speed = {r["call"]: r["median_ms"] / ours["median_ms"] for r in big
             if r is not ours and r["correct"]}
    return HostRatios(ours["n"], speed,
                      ours["gbps"] / document["pinned_gbps"])


def format_host(document: Mapping[str, Any]) -> str:
    """The ``--host`` report: per dtype, effective GB/s of each call by n,
    then the ratios of :func:`host_ratios`."""
    dev = document["device"]
    pinned = document["pinned_gbps"]
    lines = [f"Host arrays on {dev['name']}: effective GB/s = array bytes / "
             f"wall time of the whole call (result on the host); pinned "
             f"host-to-device copy {pinned:,.1f} GB/s"]
    results = document["results"]
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
    return "\n".join(lines)
