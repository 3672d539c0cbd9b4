"""The ``--peers`` mode: ``fast`` beside ``cub``, ``torch.sum`` and
``cupy.sum`` (GB/s of one run on one GPU), and the end-to-end latency of a
small sum to a Python float.

:func:`compare` measures a comparison, ``{"results": <a bench document>,
"latency_us": {call: µs}}`` (the ``--peers --json`` file, described in
:mod:`cudareduce.bench`); :func:`format_comparison` is its report.
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping
from typing import Any

import cudareduce
from cudareduce import _cudareduce
from cudareduce.document import Results
from cudareduce.results import (PEERS, REFERENCE_METHOD, format_table, render,
                                result_gbps, short_n)

from .ladder import DEFAULT_THREADS, run
from .timers import wall_times

__all__ = [
    "COMPARE_SIZES", "CUPY_FLOAT", "LATENCY_N", "LATENCY_REPS",
    "LATENCY_WARMUP", "LAUNCH_POLL_FLOOR", "OURS_ON_CUPY", "OURS_ON_TORCH",
    "TORCH_ITEM",
    "compare", "comparison_ratios", "format_comparison", "gbps_of",
    "measure_latency", "ratio",
]

#: Sizes of the fast-versus-CUB ratios: 2^20 and 2^22 (where CUB needs two
#: launches) and 2^28 (bandwidth-bound).
COMPARE_SIZES = (1 << 20, 1 << 22, 1 << 28)
#: Elements of the end-to-end latency test (result on the host).
LATENCY_N = 1024
LATENCY_WARMUP = 200
LATENCY_REPS = 3000
#: The calls :func:`measure_latency` times, as ``latency_us`` names them.
TORCH_ITEM = "torch.sum(x).item()"
OURS_ON_TORCH = "float(cudareduce.sum(x)), torch x"
CUPY_FLOAT = "float(cupy.sum(x))"
OURS_ON_CUPY = "float(cudareduce.sum(x)), cupy x"
#: The least a call whose result reaches the host takes, timed in C: the
#: launch of a one-thread kernel that writes a word to mapped host memory,
#: and the host's poll for it.
LAUNCH_POLL_FLOOR = "launch + poll floor (C, one-thread kernel)"


def launch_poll_floor_us() -> float:
    """Median µs of :data:`LAUNCH_POLL_FLOOR` (``LATENCY_REPS`` launches
    after ``LATENCY_WARMUP``) on the current device."""
    times = _cudareduce.time_probe("launch_poll", 0, 1, LATENCY_WARMUP,
                                   LATENCY_REPS, "launch")
    return statistics.median(times) * 1e3


def _latency_us(call: Callable[[], Any]) -> float:
    """Median wall time of `call()` in µs, after ``LATENCY_WARMUP`` calls:
    the whole call, launch to result on the host."""
    wall_times(call, LATENCY_WARMUP)
    times, _ = wall_times(call, LATENCY_REPS)
    return statistics.median(times) * 1e6


def _latency_pair(x: Any, theirs: Callable[[Any], Any]
                  ) -> tuple[float, float]:
    """(:func:`_latency_us` of ``theirs(x)``, of
    ``float(cudareduce.sum(x))``) on the device array `x`, which is freed
    on return."""
    return (_latency_us(lambda: theirs(x)),
            _latency_us(lambda: float(cudareduce.sum(x))))


def measure_latency(ordinal: int) -> dict[str, float]:
    """End-to-end median µs of a 1024-element float32 device array summed to
    a Python float: ``float(cudareduce.sum(x))`` on a CuPy array and on a
    PyTorch tensor, ``torch.sum(x).item()`` and ``float(cupy.sum(x))``,
    after :data:`LAUNCH_POLL_FLOOR`.  Libraries that do not import (or see
    no GPU) are left out."""
    latency: dict[str, float] = {LAUNCH_POLL_FLOOR: launch_poll_floor_us()}
    try:
        import torch  # noqa: PLC0415 - optional dependency
        if torch.cuda.is_available():
            with torch.cuda.device(ordinal):
                latency[TORCH_ITEM], latency[OURS_ON_TORCH] = _latency_pair(
                    torch.rand(LATENCY_N, device=f"cuda:{ordinal}"),
                    lambda x: torch.sum(x).item())
    except ImportError:
        pass
    try:
        import cupy  # noqa: PLC0415 - optional dependency
        with cupy.cuda.Device(ordinal):
            latency[CUPY_FLOAT], latency[OURS_ON_CUPY] = _latency_pair(
                cupy.random.random(LATENCY_N, dtype=cupy.float32),
                lambda y: float(cupy.sum(y)))
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001 - e.g. cupy sees no device
        print(f"cudareduce.bench: cupy latency skipped: {e}", file=sys.stderr)
    return latency


def compare(threads: int = DEFAULT_THREADS, peers: bool = True,
            progress: bool = True, *, seed: int | None = None) -> dict:
    """What ``--peers`` measures: ``fast`` against ``cub`` and the peers.

    Times ``fast``, ``cub`` and (with `peers`) ``torch.sum`` and
    ``cupy.sum`` on float32 at :data:`COMPARE_SIZES` and on int32 at the
    largest, as :func:`~cudareduce.bench.ladder.run` does, then the
    end-to-end latency of :func:`measure_latency`.

    Returns
    -------
    dict
        ``{"results": Results, "latency_us": {call: µs}}``; see
        :func:`format_comparison`.
    """
    methods = ["fast", REFERENCE_METHOD]
    floats = run(methods, COMPARE_SIZES, "float32", threads, peers=peers,
                 progress=progress, seed=seed)
    ints = run(methods, COMPARE_SIZES[-1:], "int32", threads, peers=peers,
               progress=progress, seed=seed)
    results = Results({**floats,
                       "results": floats["results"] + ints["results"]})
    latency = measure_latency(_cudareduce.device_info()["ordinal"])
    return {"results": results, "latency_us": latency}


def gbps_of(results: Mapping[str, Any], method: str, dtype: str,
            n: int, timing: str = "cold_us") -> float | None:
    """The GB/s of (`method`, `dtype`, `n`) in the bench document
    `results`, by `timing` (``"cold_us"``, ``"batch_us"``, ``"call_us"``);
    None where it was not measured or is WRONG."""
    for r in results["results"]:
        if (r["method"], r["dtype"], r["n"]) == (method, dtype, n):
            return result_gbps(r, timing)
    return None


def ratio(num: float | None, den: float | None) -> float | None:
    """`num` / `den`, or None where either figure is missing (or zero)."""
    return None if not num or not den else num / den


#: The timings the ratios compare, as the document and the report name them.
_TIMINGS = (("cold_us", "cold"), ("batch_us", "back to back"))


def comparison_ratios(comparison: Mapping[str, Any]
                      ) -> list[tuple[str, float | None]]:
    """(what, ratio) of ``fast``'s GB/s over ``cub``'s and each peer's,
    float32, at each of :data:`COMPARE_SIZES`, cold and back to back; the
    ratio is None where a figure is missing or WRONG."""
    results = comparison["results"]
    return [(f"fast / {other} GB/s, {label}, float32 n = {short_n(n)}",
             ratio(gbps_of(results, "fast", "float32", n, key),
                   gbps_of(results, other, "float32", n, key)))
            for key, label in _TIMINGS
            for other in (REFERENCE_METHOD, *PEERS) for n in COMPARE_SIZES]


def format_comparison(comparison: Mapping[str, Any]) -> str:
    """The ``--peers`` report: the results table, the end-to-end latencies
    and the ratios of :func:`comparison_ratios`."""
    lines = [format_table(comparison["results"]), "",
             f"End to end, {LATENCY_N} float32 elements to a Python float "
             f"(median of {LATENCY_REPS} calls, wall clock)"]
    lines += render(("call", "µs"),
                    [[call, f"{us:.1f}"]
                     for call, us in comparison["latency_us"].items()])
    lines += ["", "Ratios (same run, same GPU)"]
    lines += render(("ratio", "value"),
                    [[what, "-" if value is None else f"{value:.2f}×"]
                     for what, value in comparison_ratios(comparison)])
    return "\n".join(lines)
