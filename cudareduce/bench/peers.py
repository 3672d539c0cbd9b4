"""The ``--peers`` mode: ``fast`` beside ``cub``, the peers (``torch.sum``,
``cupy.sum`` for sums; PyTorch's and CuPy's function of another op) and
the floor (every dtype of the comparison, :data:`COMPARE_DTYPES` unless
the caller names others, at every size of :data:`COMPARE_SIZES`, one run
on one GPU), and for sums the end-to-end latency of a small sum to a
Python float.

:func:`compare` measures a comparison, ``{"results": <a bench document>,
"latency_us": {call: µs}}`` (the ``--peers --json`` file, described in
:mod:`cudareduce.bench`); :func:`format_comparison` is its report.
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cudareduce
from cudareduce import _cudareduce
from .results import Results
from .figures import format_table, render, result_gbps, short_n
from .names import DEFAULT_OP, REFERENCE_METHOD, numpy_dtype, op_of, peers_of

from .ladder import run
from .timers import wall_times

__all__ = [
    "BASELINE_DTYPE", "COMPARE_DTYPES", "COMPARE_SIZES", "CUPY_FLOAT",
    "LATENCY_N", "LATENCY_REPS", "LATENCY_WARMUP", "LAUNCH_POLL_FLOOR",
    "OURS_ON_CUPY", "OURS_ON_TORCH", "TIMINGS", "TORCH_ITEM",
    "compare", "comparison_dtypes", "comparison_op", "comparison_ratios",
    "comparison_rows",
    "floor_us", "format_comparison", "gbps_of", "measure_latency", "ratio",
    "time_of",
]

#: Sizes of the comparison: from 2^20 (where CUB needs two launches and
#: fixed costs weigh most) to 2^28 (bandwidth-bound), every other power.
COMPARE_SIZES = (1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28)
#: Element types of the comparison, in its order (int8 and int32 sum into
#: int64, float16 into float16 through a float32 accumulator).
COMPARE_DTYPES = ("float32", "float64", "float16", "int8", "int32")
#: A comparison of another op than sum, or of dtypes without this one,
#: also times ``fast``'s sum of this dtype at the largest size: the
#: bandwidth the op and the dtypes are held to.
BASELINE_DTYPE = "float32"
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


def compare(threads: int | None = None, peers: bool = True,
            progress: bool = True, *, seed: int | None = None,
            op: str = DEFAULT_OP,
            dtypes: Sequence[str] = COMPARE_DTYPES) -> dict:
    """What ``--peers`` measures: ``fast`` against ``cub`` and the peers,
    reducing with `op`.

    Times ``fast``, ``cub`` and (with `peers`) the peers of `op`
    (:func:`~cudareduce.bench.names.peers_of`) on each of `dtypes` (by
    default :data:`COMPARE_DTYPES`) at each size of
    :data:`COMPARE_SIZES`, as :func:`~cudareduce.bench.ladder.run` does;
    for another op than sum, or where `dtypes` lack
    :data:`BASELINE_DTYPE`, then ``fast``'s sum of that dtype at the
    largest size (the bandwidth the op and the dtypes are held to); for
    sums the end-to-end latency of :func:`measure_latency`.  `threads`
    None (the default) times each of our methods at the block size a
    caller gets by default (fast's grows with the input).  The document's
    floor is the first dtype's run's; its read probes are every run's, one
    per byte count.

    Returns
    -------
    dict
        ``{"results": Results, "latency_us": {call: µs}, "dtypes":
        [dtype, ...]}`` (no latencies for another op than sum); see
        :func:`format_comparison`.

    Raises
    ------
    ValueError
        `dtypes` is empty, or names a dtype twice (or one that `op` does
        not take: :func:`~cudareduce.bench.ladder.run`).
    """
    if not dtypes or len(set(dtypes)) < len(dtypes):
        raise ValueError(f"dtypes: expected distinct dtypes, got "
                         f"{list(dtypes)!r}")
    methods = ["fast", REFERENCE_METHOD]
    runs = [run(methods, COMPARE_SIZES, dtype, threads, peers=peers,
                progress=progress, seed=seed, op=op)
            for dtype in dtypes]
    if op != DEFAULT_OP or BASELINE_DTYPE not in dtypes:
        runs.append(run(["fast"], COMPARE_SIZES[-1:], BASELINE_DTYPE,
                        threads, peers=False, progress=progress, seed=seed))
    probes = {p["bytes"]: p for r in reversed(runs) for p in r["probes"]}
    results = Results({**runs[0],
                       "probes": [probes[b] for b in sorted(probes)],
                       "results": [x for r in runs for x in r["results"]]})
    latency = measure_latency(_cudareduce.device_info()["ordinal"]) \
        if op == DEFAULT_OP else {}
    return {"results": results, "latency_us": latency,
            "dtypes": list(dtypes)}


def comparison_dtypes(comparison: Mapping[str, Any]) -> tuple[str, ...]:
    """The dtypes a comparison compares, in its order: its ``"dtypes"``
    (:data:`COMPARE_DTYPES` for a document from before they were
    recorded).

    Raises
    ------
    ValueError
        ``"dtypes"`` is not a non-empty list of names.
    """
    dtypes = comparison.get("dtypes", COMPARE_DTYPES)
    if not (isinstance(dtypes, list | tuple) and dtypes
            and all(isinstance(d, str) for d in dtypes)):
        raise ValueError(f"dtypes: expected a list of dtype names, got "
                         f"{dtypes!r}")
    return tuple(dtypes)


def comparison_op(comparison: Mapping[str, Any]) -> str:
    """The op a comparison compares: its first result's (:func:`compare`
    puts the baseline sum last), ``"sum"`` without results."""
    results = comparison["results"]["results"]
    return op_of(results[0]) if results else DEFAULT_OP


def _row(results: Mapping[str, Any], method: str, dtype: str, n: int,
         op: str) -> Mapping[str, Any] | None:
    """The result of (`method`, `op`, `dtype`, `n`) in the bench document
    `results`; None where it was not measured."""
    for r in results["results"]:
        if (r["method"], op_of(r), r["dtype"], r["n"]) == (method, op,
                                                           dtype, n):
            return r
    return None


def gbps_of(results: Mapping[str, Any], method: str, dtype: str,
            n: int, timing: str = "cold_us", *,
            op: str = DEFAULT_OP) -> float | None:
    """The GB/s of (`method`, `op`, `dtype`, `n`) in the bench document
    `results`, by `timing` (``"cold_us"``, ``"batch_us"``, ``"call_us"``);
    None where it was not measured or is WRONG."""
    r = _row(results, method, dtype, n, op)
    return None if r is None else result_gbps(r, timing)


def time_of(results: Mapping[str, Any], method: str, dtype: str, n: int,
            timing: str, *, op: str = DEFAULT_OP) -> float | None:
    """The µs of (`method`, `op`, `dtype`, `n`) in the bench document
    `results`, by `timing` (``"cold_us"``, ``"batch_us"``, ``"call_us"``);
    None where it was not measured or is WRONG."""
    r = _row(results, method, dtype, n, op)
    return None if r is None or not r["correct"] else r[timing]


def floor_us(results: Mapping[str, Any], dtype: str, n: int,
             timing: str) -> float:
    """The floor of a reduction of `n` elements of `dtype`, in µs, timed as
    `timing` says (``"cold_us"`` or ``"batch_us"``): the document's empty
    kernel plus the bytes at its read ceiling.  Below about 2^24 elements it
    leaves out the DRAM latency and the combination across blocks that any
    reduction pays."""
    floor = results["floor"]
    way = {"cold_us": "cold", "batch_us": "batch"}[timing]
    nbytes = n * numpy_dtype(dtype).itemsize
    return floor[f"empty_{way}_us"] + nbytes / (floor[f"read_{way}_gbps"]
                                                * 1e3)


def ratio(num: float | None, den: float | None) -> float | None:
    """`num` / `den`, or None where either figure is missing (or zero)."""
    return None if not num or not den else num / den


#: The GPU timings the comparison shows, as the document and the report
#: name them.
TIMINGS = (("cold_us", "cold"), ("batch_us", "back to back"))


def comparison_ratios(comparison: Mapping[str, Any], timing: str
                      ) -> list[tuple[str, int, dict[str, float | None]]]:
    """(dtype, n, ratios) at each dtype and size of the comparison, of its
    op (:func:`comparison_op`), timed as `timing` says (``"cold_us"`` or
    ``"batch_us"``): ``fast``'s speed over ``cub``'s and each peer's of the
    op (their time over fast's), and ``"floor"``, the floor's time over
    fast's (:func:`floor_us`).  A ratio is None where a figure is missing
    or WRONG."""
    results = comparison["results"]
    op = comparison_op(comparison)
    rows = []
    for dtype in comparison_dtypes(comparison):
        for n in COMPARE_SIZES:
            fast = time_of(results, "fast", dtype, n, timing, op=op)
            ratios = {other: ratio(time_of(results, other, dtype, n, timing,
                                           op=op), fast)
                      for other in (REFERENCE_METHOD, *peers_of(op))}
            ratios["floor"] = ratio(floor_us(results, dtype, n, timing),
                                    fast)
            rows.append((dtype, n, ratios))
    return rows


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def comparison_rows(comparison: Mapping[str, Any], timing: str
                    ) -> list[list[str]]:
    """The rows of the comparison's table for `timing`: dtype, n, the µs of
    fast, cub and the floor, then fast's speed over cub's, the peers' and
    the floor's share of fast's time."""
    results = comparison["results"]
    op = comparison_op(comparison)
    return [[dtype, short_n(n),
             _us(time_of(results, "fast", dtype, n, timing, op=op)),
             _us(time_of(results, REFERENCE_METHOD, dtype, n, timing,
                         op=op)),
             _us(floor_us(results, dtype, n, timing)),
             *(_times(ratios[other])
               for other in (REFERENCE_METHOD, *peers_of(op))),
             "-" if ratios["floor"] is None
             else f"{100 * ratios['floor']:.0f}%"]
            for dtype, n, ratios in comparison_ratios(comparison, timing)]


def format_comparison(comparison: Mapping[str, Any]) -> str:
    """The ``--peers`` report: the results table, the end-to-end latencies
    (where measured) and, for each GPU timing, the comparison of
    :func:`comparison_rows`, titled with its op (but for sums)."""
    lines = [format_table(comparison["results"])]
    if comparison["latency_us"]:
        lines += ["", f"End to end, {LATENCY_N} float32 elements to a "
                      f"Python float (median of {LATENCY_REPS} calls, wall "
                      f"clock)"]
        lines += render(("call", "µs"),
                        [[call, f"{us:.1f}"]
                         for call, us in comparison["latency_us"].items()])
    op = comparison_op(comparison)
    headers = ("dtype", "n", "fast µs", "cub µs", "floor µs",
               "fast / cub", *(f"fast / {p}" for p in peers_of(op)),
               "floor / fast")
    # Sums go unnamed, as they always have (reduction_label).
    of_op = "" if op == DEFAULT_OP else f"{op}: "
    for timing, label in TIMINGS:
        lines += ["", (f"{of_op}fast against cub, the peers and the floor, "
                       f"GPU time {label} (same run, same GPU; floor = "
                       f"empty kernel + bytes / read ceiling)")]
        lines += render(headers, comparison_rows(comparison, timing))
    return "\n".join(lines)
