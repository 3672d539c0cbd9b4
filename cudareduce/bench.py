"""``python -m cudareduce.bench``: what each step of the ladder buys here.

Times every method of :func:`cudareduce.methods` (and, when importable, the
peers ``torch.sum`` and ``cupy.sum``) on device-resident data, beside the
device-to-device copy bandwidth measured in the same run, and prints one table
per (dtype, n, threads)::

    python -m cudareduce.bench          # float32, n = 2^22, 256 threads
    python -m cudareduce.bench --sizes 2^10..2^28 --json r.json --plot r.png

The same from Python (the command line is a thin layer over it)::

    from cudareduce import bench
    results = bench.run(sizes=[2**k for k in range(10, 29)])   # a Results
    results.select(n=2**22)      # in Jupyter: an HTML table; print() it else
    results.plot_step_speedups(); results.plot_bandwidth()
    results.to_json("r.json"); bench.Results.from_json("r.json")

How a figure is measured
------------------------
- Fresh random data for every size of every run (``--seed`` to repeat a
  run): non-zero integers, of either sign, of magnitude up to 1000 -- for
  float32 fewer as n grows (:func:`value_limit`), so that every sum is exact
  in every order of additions.  The data's values do not change a kernel's
  time (no denormals, no data-dependent branches).
- Each method's result is checked against NumPy *before* it is timed (a short
  pilot run), and again after: it must equal the exact sum.  Every element
  counts at least 1, so a method that loses or doubles a single element
  anywhere is reported as WRONG and not timed (``correct: false``,
  ``median_us``/``gbps`` null).  (A float tolerance would not see that: the
  previous bound of this check, 2 eps log2(n) sum|x|, let ~1,800 elements of
  uniform [0, 1) data go missing at 2^28.)
- Timing uses CUDA events around each run's kernels only (never host copies),
  after ``WARMUP`` untimed runs; reps are chosen from the pilot so that the
  timed runs take about ``TARGET_SECONDS`` of GPU time, clamped to
  [``MIN_REPS``, ``MAX_REPS``]; the figure is the median.
- When the input is smaller than 4x the L2 cache, the runs rotate among
  ``ceil(4 * L2 / nbytes)`` copies of it (at most ``MAX_BUFFERS``, and at most
  a quarter of device memory in total), so that the figure measures memory,
  not cache.  Below ``4 * L2 / MAX_BUFFERS`` bytes the copies cannot cover
  4x L2: such tiny inputs are bound by launch latency anyway.
- The peers get the same data, the same rotation, warm-up and reps rule, with
  their own CUDA events (``torch.cuda.Event``, ``cupy.cuda.Event``).

Units
-----
- A reduction's ``gbps`` is bytes *read* (``n * itemsize`` of the input) per
  second, in 1e9 bytes/s.
- ``copy_gbps`` is a device-to-device ``cudaMemcpy`` of ``COPY_BYTES`` (at
  least 4x L2), counting bytes read *plus* bytes written: ``2 * nbytes / t``.
  That is what the memory system sustains, so "% of copy" says how close a
  reduction (which only reads) comes to the device's practical bandwidth.
- Step speedup: the previous method's median over this one's (ladder order,
  then ``fast``, among the methods timed and correct); cumulative: the first
  timed, correct method's median over this one's.  The references -- ``cub``
  (``cub::DeviceReduce`` inside this library) and the peers -- get a
  cumulative speedup (over the same first method) and no step speedup.

The JSON document (``--json``)
------------------------------
::

    {"device": {"name": str, "sm_count": int, "l2_bytes": int,
                "copy_gbps": float},
     "cudareduce_version": str,
     "results": [{"method": str, "dtype": str, "n": int, "threads": int,
                  "median_us": float | null, "gbps": float | null,
                  "reps": int, "correct": bool}, ...]}

Peers appear as methods ``"torch.sum"`` and ``"cupy.sum"``; their
``threads`` is the run's setting (they choose their own launches).  A WRONG
row has ``reps`` 0.  :func:`validate_document` checks this shape.
"""
from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import cudareduce
from cudareduce import _cudareduce

# The results model, re-exported: bench.format_table and the rest are the
# names users and the notebook know.
from .results import (
    DTYPES, PEERS, REFERENCE_METHOD, RESULT_KEYS, TABLE_HEADERS,
    describe_sizes, device_line, format_group, format_table, group_cells,
    group_results, group_title, is_int, is_peer, is_reference,
    make_document, make_result, order_results, render, short_n, speedups,
    validate_document, write_json)

__all__ = [
    "COPY_BYTES", "DEFAULT_N", "DTYPES", "MAX_BUFFERS", "MAX_REPS", "MIN_REPS",
    "PEERS", "REFERENCE_METHOD", "TARGET_SECONDS", "WARMUP", "Results",
    "compare",
    "comparison_ratios", "format_comparison", "measure_latency",
    "run_host", "format_host",
    "choose_reps", "device_info", "format_group", "format_table",
    "group_results", "is_correct", "is_peer", "is_reference",
    "ladder_timer", "load_peer",
    "main", "make_document", "make_result", "measure_copy", "measure_method",
    "order_results", "parse_size", "parse_sizes", "random_array",
    "reference_sum", "rotation_buffers", "run", "speedups", "value_limit",
    "validate_document", "write_json",
]

DEFAULT_N = 1 << 22
DEFAULT_DTYPE = "float32"
DEFAULT_THREADS = cudareduce.DEFAULT_THREADS

WARMUP = 3
PILOT_WARMUP = 1
PILOT_REPS = 3
MIN_REPS = 20
MAX_REPS = 1000
TARGET_SECONDS = 0.2
MAX_BUFFERS = 1024
COPY_BYTES = 256 << 20
COPY_REPS = 20

TimeFn = Callable[[np.ndarray, int, int, int], "tuple[Any, list[float]]"]
"""(array, buffers, warmup, reps) -> (result of the last run, times in ms)."""


# ---------------------------------------------------------------------------
# Sizes


_POWER = re.compile(r"^\s*(\d+)\s*(?:\^|\*\*)\s*(\d+)\s*$")


def parse_size(text: str) -> int:
    """One element count: ``"4194304"``, ``"4_194_304"``, ``"2^22"`` or
    ``"2**22"``.

    Raises
    ------
    ValueError
        Not one of those forms, or not >= 1.
    """
    s = str(text).strip()
    match = _POWER.match(s)
    if match:
        value = int(match.group(1)) ** int(match.group(2))
    elif re.fullmatch(r"\d[\d_]*", s) and not s.endswith("_"):
        value = int(s)
    else:
        raise ValueError(f"not an element count: {text!r} (use e.g. 4194304, "
                         f"2^22 or 2**22)")
    if value < 1:
        raise ValueError(f"element count must be >= 1, got {text!r}")
    return value


def parse_sizes(text: str) -> list[int]:
    """The sizes of a sweep, sorted, without duplicates.

    A comma-separated list of items; an item is one size (see
    :func:`parse_size`) or a range ``A..B``: every power of two from A to B
    inclusive, e.g. ``"2^10..2^28"`` (19 sizes) or ``"1000,4096,2^20"``.

    Raises
    ------
    ValueError
        An item that does not parse, a range with A > B or without a power of
        two in it, or an empty list.
    """
    sizes: set[int] = set()
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            raise ValueError(f"empty item in size list {text!r}")
        if ".." in item:
            lo_text, _, hi_text = item.partition("..")
            lo, hi = parse_size(lo_text), parse_size(hi_text)
            if lo > hi:
                raise ValueError(f"range {item!r} runs backwards")
            p = 1 << (lo - 1).bit_length()       # smallest power of 2 >= lo
            found = False
            while p <= hi:
                sizes.add(p)
                found = True
                p <<= 1
            if not found:
                raise ValueError(f"range {item!r} holds no power of two")
        else:
            sizes.add(parse_size(item))
    return sorted(sizes)


# ---------------------------------------------------------------------------
# Measurement policy (pure arithmetic)


def rotation_buffers(nbytes: int, l2_bytes: int,
                     total_bytes: int | None = None,
                     max_buffers: int = MAX_BUFFERS) -> int:
    """How many copies of an input of `nbytes` the timed runs rotate among.

    ``ceil(4 * l2_bytes / nbytes)`` when the input is smaller than 4x L2,
    else 1; at most `max_buffers`, and the copies together at most a quarter
    of `total_bytes` (when given).  Always >= 1.
    """
    if nbytes <= 0:
        raise ValueError("nbytes must be > 0")
    if nbytes >= 4 * l2_bytes:
        return 1
    buffers = min(-(-4 * l2_bytes // nbytes), max_buffers)
    if total_bytes:
        buffers = min(buffers, (total_bytes // 4) // nbytes)
    return max(1, buffers)


def choose_reps(estimate_ms: float, target_seconds: float = TARGET_SECONDS,
                min_reps: int = MIN_REPS, max_reps: int = MAX_REPS) -> int:
    """Timed reps for a run whose pilot took `estimate_ms` per rep: enough
    for `target_seconds` of GPU time, clamped to [min_reps, max_reps]."""
    if not estimate_ms > 0 or not math.isfinite(estimate_ms):
        return max_reps
    wanted = math.ceil(target_seconds * 1e3 / estimate_ms)
    return int(min(max_reps, max(min_reps, wanted)))


def is_correct(value: Any, reference: int) -> bool:
    """Whether a computed sum `value` equals the exact sum `reference` of
    :func:`random_array`'s data (an integer, whatever the dtype)."""
    try:
        got = float(value) if isinstance(value, (float, np.floating)) \
            else int(value)
        return math.isfinite(got) and got == reference
    except (TypeError, ValueError, OverflowError):
        return False


# ---------------------------------------------------------------------------
# Results: the document, for Python and notebooks


class Results(dict):
    """What one bench run measured: the JSON document, with tools to show it.

    A ``Results`` *is* the document of the module docstring (a ``dict``,
    checked by :func:`validate_document` when built, so ``results["device"]``
    and ``json.dump(results, f)`` work as they do on the plain document), plus:

    - :meth:`table` -- the text table ``python -m cudareduce.bench`` prints
      (``print(results)`` prints it too); :meth:`to_markdown` the same as
      Markdown;
    - :meth:`to_json` / :meth:`from_json` -- write and read the JSON file
      (the same file as ``--json``);
    - :meth:`to_pandas` -- one DataFrame row per result, with the table's
      derived columns (needs pandas);
    - :meth:`plot_step_speedups`, :meth:`plot_bandwidth` -- the plots of
      :mod:`cudareduce.plot` (need matplotlib);
    - :meth:`select` -- a part of it (one size, some methods, ...).

    In Jupyter a ``Results`` shows as HTML tables with the same columns as the
    text table; ``repr()`` is a short summary (device, sizes, methods).

    Parameters
    ----------
    document : mapping
        A bench document, e.g. as read from a ``--json`` file.  It is copied.

    Raises
    ------
    ValueError
        `document` does not have the document's shape (see
        :func:`validate_document`).
    """

    def __init__(self, document: Mapping[str, Any]) -> None:
        validate_document(document)
        super().__init__(json.loads(json.dumps(document, allow_nan=False)))

    # -- reading and writing --------------------------------------------------

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> "Results":
        """Read a document written by :meth:`to_json` or ``--json``.

        Raises
        ------
        OSError
            The file cannot be read.
        ValueError
            It is not JSON, or not a bench document.
        """
        with open(path, encoding="utf-8") as f:
            try:
                document = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{os.fspath(path)}: not JSON: {e}") from None
        try:
            return cls(document)
        except ValueError as e:
            raise ValueError(f"{os.fspath(path)}: {e}") from None

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the document to `path` (indented JSON, the ``--json``
        format), after checking it again."""
        write_json(self, path)

    # -- looking inside -------------------------------------------------------

    @property
    def device(self) -> dict:
        """``{"name", "sm_count", "l2_bytes", "copy_gbps"}`` of the GPU."""
        return self["device"]

    @property
    def sizes(self) -> list[int]:
        """The element counts measured, sorted."""
        return sorted({r["n"] for r in self["results"]})

    @property
    def methods(self) -> list[str]:
        """The methods measured, in table order (steps, then references)."""
        seen: dict[str, None] = {}
        for r in order_results(self["results"]):
            seen.setdefault(r["method"], None)
        return list(seen)

    def select(self, *, n: int | Iterable[int] | None = None,
               dtype: str | None = None, threads: int | None = None,
               methods: str | Iterable[str] | None = None) -> "Results":
        """The results matching every criterion given, as a new ``Results``
        (same device); e.g. ``results.select(n=2**22)`` for one table.

        Raises
        ------
        ValueError
            Nothing matches.
        """
        def as_set(value: Any) -> set | None:
            if value is None:
                return None
            if isinstance(value, (str, int, np.integer)):
                return {value}
            return set(value)

        wanted = {"n": as_set(n), "dtype": as_set(dtype),
                  "threads": as_set(threads), "method": as_set(methods)}
        rows = [r for r in self["results"]
                if all(v is None or r[k] in v for k, v in wanted.items())]
        if not rows:
            asked = ", ".join(f"{k}={v!r}" for k, v in
                              (("n", n), ("dtype", dtype),
                               ("threads", threads), ("methods", methods))
                              if v is not None)
            raise ValueError(f"no results with {asked}; measured: "
                             f"{self._summary_line()}")
        return type(self)({**self, "results": rows})

    # -- showing ---------------------------------------------------------------

    def table(self) -> str:
        """The text table, exactly as ``python -m cudareduce.bench`` prints
        it (see :func:`format_table`)."""
        return format_table(self)

    def __str__(self) -> str:
        return self.table()

    def to_markdown(self) -> str:
        """The table as Markdown (for a README or a report): the device
        line, then per (dtype, n, threads) group a bold title and a pipe
        table with the columns and cells of :meth:`table`."""
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) \
                + " |"

        lines = [device_line(self)]
        copy_gbps = self["device"]["copy_gbps"]
        for (dtype, n, threads), rows in group_results(
                self["results"]).items():
            lines += ["", f"**{group_title(dtype, n, threads)}**", "",
                      line(TABLE_HEADERS),
                      "|" + "|".join([":---"] + ["---:"] *
                                     (len(TABLE_HEADERS) - 1)) + "|"]
            lines += [line(cells) for cells in group_cells(rows, copy_gbps)]
        return "\n".join(lines)

    def _summary_line(self) -> str:
        results = self["results"]
        dtypes = sorted({r["dtype"] for r in results})
        threads = sorted({r["threads"] for r in results})
        return (f"{', '.join(dtypes) or 'no dtype'}, "
                f"{', '.join(map(str, threads)) or '?'} threads, "
                f"n = {describe_sizes(self.sizes)}")

    def __repr__(self) -> str:
        results = self["results"]
        methods = self.methods
        ladder = [m for m in methods if not is_reference(m)]
        references = [m for m in methods if is_reference(m)]
        if len(ladder) > 3:
            steps = f"{len(ladder)} steps ({ladder[0]} .. {ladder[-1]})"
        else:
            steps = ", ".join(ladder) or "no steps"
        if references:
            steps += "; references " + ", ".join(references)
        wrong = [r for r in results if not r["correct"]]
        if wrong:
            shown = ", ".join(f"{r['method']} (n={short_n(r['n'])})"
                              for r in wrong[:3])
            verdict = f"{len(wrong)} WRONG: {shown}" + \
                (", ..." if len(wrong) > 3 else "")
        else:
            verdict = "all correct" if results else "empty"
        dev = self["device"]
        return (f"<cudareduce.bench.Results: {dev['name']}, "
                f"cudareduce {self['cudareduce_version']}\n"
                f" {self._summary_line()}\n"
                f" methods: {steps}\n"
                f" {len(results)} results, {verdict}; .table() for the table>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's text form: the summary, not the dict's contents.
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        """HTML tables with the columns of the text table (:data:`TABLE_HEADERS`),
        one per (dtype, n, threads) group, under the device line."""
        esc = html.escape
        copy_gbps = self["device"]["copy_gbps"]
        left = "text-align:left"
        right = "text-align:right"
        head = "".join(
            f'<th style="{left if i == 0 else right}">{esc(h)}</th>'
            for i, h in enumerate(TABLE_HEADERS))
        parts = ['<div class="cudareduce-results">',
                 f"<p><b>{esc(device_line(self))}</b></p>"]
        for (dtype, n, threads), rows in group_results(
                self["results"]).items():
            parts.append('<table class="cudareduce-table">')
            parts.append(f'<caption style="{left}">'
                         f"{esc(group_title(dtype, n, threads))}</caption>")
            parts.append(f"<thead><tr>{head}</tr></thead><tbody>")
            for r, cells in zip(rows, group_cells(rows, copy_gbps)):
                style = ""
                if not r["correct"]:
                    style = ' style="color:#b00020;font-weight:bold"'
                elif is_reference(r["method"]):
                    style = ' style="font-style:italic"'
                tds = "".join(
                    f'<td style="{left if i == 0 else right}">{esc(c)}</td>'
                    for i, c in enumerate(cells))
                parts.append(f"<tr{style}>{tds}</tr>")
            parts.append("</tbody></table>")
        parts.append("</div>")
        return "\n".join(parts)

    # -- other forms ------------------------------------------------------------

    def to_pandas(self) -> Any:
        """One row per result, in table order, as a ``pandas.DataFrame``.

        Columns: the document's (``method``, ``dtype``, ``n``, ``threads``,
        ``median_us``, ``gbps``, ``reps``, ``correct``), then ``peer``,
        ``reference`` (``cub`` or a peer),
        ``pct_of_copy``, ``step_speedup`` and ``cumulative_speedup`` (as in
        the table; NaN where the table shows ``-``).  ``df.attrs`` holds
        ``device`` and ``cudareduce_version``.

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        try:
            import pandas as pd  # noqa: PLC0415 - optional dependency
        except ImportError as e:
            raise ImportError(
                "Results.to_pandas() needs pandas, which is not installed "
                f"(pip install pandas): {e}") from e
        nan = float("nan")
        copy_gbps = self["device"]["copy_gbps"]
        records = []
        for rows in group_results(self["results"]).values():
            for r, (step, cumulative) in zip(rows, speedups(rows)):
                record = {k: r[k] for k in RESULT_KEYS}
                for k in ("median_us", "gbps"):
                    record[k] = nan if record[k] is None else record[k]
                record["peer"] = is_peer(r["method"])
                record["reference"] = is_reference(r["method"])
                record["pct_of_copy"] = (nan if r["gbps"] is None
                                         else 100.0 * r["gbps"] / copy_gbps)
                record["step_speedup"] = nan if step is None else step
                record["cumulative_speedup"] = (nan if cumulative is None
                                                else cumulative)
                records.append(record)
        columns = list(RESULT_KEYS) + ["peer", "reference", "pct_of_copy",
                                       "step_speedup", "cumulative_speedup"]
        df = pd.DataFrame.from_records(records, columns=columns)
        df.attrs["device"] = dict(self["device"])
        df.attrs["cudareduce_version"] = self["cudareduce_version"]
        return df

    def plot_step_speedups(self, **kwargs: Any) -> Any:
        """:func:`cudareduce.plot.plot_step_speedups` of these results
        (keywords: ``reference``, ``path``, ``n``, ``dtype``, ``threads``);
        returns the matplotlib Figure."""
        from cudareduce import plot  # noqa: PLC0415 - needs matplotlib
        return plot.plot_step_speedups(self, **kwargs)

    def plot_bandwidth(self, **kwargs: Any) -> Any:
        """:func:`cudareduce.plot.plot_bandwidth` of these results
        (keywords: ``path``, ``dtype``, ``threads``); returns the matplotlib
        Figure."""
        from cudareduce import plot  # noqa: PLC0415 - needs matplotlib
        return plot.plot_bandwidth(self, **kwargs)


# ---------------------------------------------------------------------------
# Timers: ours and the peers'


def ladder_timer(method: str, threads: int) -> TimeFn:
    """A :data:`TimeFn` for one ladder method, through
    ``_cudareduce.time_reduce`` (CUDA events around the kernels only)."""
    def time_fn(a: np.ndarray, buffers: int, warmup: int, reps: int):
        return _cudareduce.time_reduce("sum", a, method, threads, buffers,
                                       warmup, reps)
    return time_fn


class _TorchPeer:
    name = "torch.sum"

    def __init__(self, ordinal: int) -> None:
        import torch  # noqa: PLC0415  (optional dependency)
        if not torch.cuda.is_available():
            raise RuntimeError("torch has no CUDA device")
        self.torch = torch
        self.device = torch.device("cuda", ordinal)

    def __call__(self, a: np.ndarray, buffers: int, warmup: int, reps: int):
        torch = self.torch
        try:
            with torch.cuda.device(self.device):
                src = torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
                data = torch.empty((buffers, a.size), dtype=src.dtype,
                                   device=self.device)
                data.copy_(src.expand(buffers, a.size))
                del src
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                times = []
                out = None
                for r in range(-warmup, reps):
                    x = data[(r + warmup) % buffers]
                    start.record()
                    out = torch.sum(x)
                    end.record()
                    end.synchronize()
                    if r >= 0:
                        times.append(start.elapsed_time(end))
                value = out.item()
                del data, out
            return value, times
        finally:
            torch.cuda.empty_cache()


class _CupyPeer:
    name = "cupy.sum"

    def __init__(self, ordinal: int) -> None:
        import cupy  # noqa: PLC0415  (optional dependency)
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("cupy sees no CUDA device")
        self.cupy = cupy
        self.ordinal = ordinal

    def __call__(self, a: np.ndarray, buffers: int, warmup: int, reps: int):
        cupy = self.cupy
        try:
            with cupy.cuda.Device(self.ordinal):
                data = cupy.empty((buffers, a.size), dtype=a.dtype)
                data[...] = cupy.asarray(a)
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                times = []
                out = None
                for r in range(-warmup, reps):
                    x = data[(r + warmup) % buffers]
                    start.record()
                    out = cupy.sum(x)
                    end.record()
                    end.synchronize()
                    if r >= 0:
                        times.append(cupy.cuda.get_elapsed_time(start, end))
                value = out.item()
                del data, out
            return value, times
        finally:
            cupy.get_default_memory_pool().free_all_blocks()


_PEER_CLASSES = {"torch.sum": _TorchPeer, "cupy.sum": _CupyPeer}


def load_peer(name: str, ordinal: int) -> tuple[TimeFn | None, str]:
    """A :data:`TimeFn` for the peer `name` on device `ordinal`: (timer, "")
    or (None, why it is unavailable: not importable, no CUDA there, ...)."""
    try:
        return _PEER_CLASSES[name](ordinal), ""
    except ImportError as e:
        return None, f"not importable ({e})"
    except Exception as e:  # noqa: BLE001 - any CUDA init failure of the peer
        return None, f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------------------
# The measurement


def measure_copy(l2_bytes: int, total_bytes: int) -> float:
    """Device-to-device copy bandwidth, GB/s, counting bytes read + written.

    Copies ``max(COPY_BYTES, 4 * l2_bytes)`` bytes (at most an eighth of
    device memory, since source and destination are both allocated) after
    one warm-up, ``COPY_REPS`` times; ``2 * nbytes / median``.
    """
    nbytes = max(COPY_BYTES, 4 * l2_bytes)
    if total_bytes:
        nbytes = min(nbytes, total_bytes // 8)
    nbytes = max(nbytes, 1 << 20)
    times = _cudareduce.time_copy(nbytes, COPY_REPS)
    return 2 * nbytes / (statistics.median(times) * 1e-3) / 1e9


def value_limit(n: int, dtype: str) -> int:
    """The largest magnitude of :func:`random_array`'s `n` values: 1000, or
    for floats fewer where needed for exact sums in every order.

    A partial sum of k <= n independent values of random sign and magnitude
    <= L exceeds t in magnitude with probability <= 2 exp(-t^2 / (2 k L^2))
    (Hoeffding).  With t = 2^(significand bits), the largest integer below
    which every integer is a float of the dtype, and L = t / sqrt(2^11 n),
    that is <= 2 exp(-1024) for each of the < 2n partial sums of any plan:
    every sum is exact.  float32: L = 1000 up to n = 2^17, 22 at 2^28, 1
    from 2^36 on (the margin exp(-1024) then holds up to 2^37 elements,
    512 GiB of float32); float64: 1000 always.
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return 1000
    t = 2 ** (np.finfo(dt).nmant + 1)
    return max(1, min(1000, math.isqrt(t * t // (2 ** 11 * max(n, 1)))))


def random_array(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """`n` random non-zero integers of either sign and magnitude up to
    :func:`value_limit`, as `dtype`."""
    magnitude = rng.integers(1, value_limit(n, dtype), size=n,
                             dtype=np.int32, endpoint=True)
    negative = rng.integers(0, 2, size=n, dtype=np.int8).astype(bool)
    np.negative(magnitude, out=magnitude, where=negative)
    return magnitude.astype(dtype, copy=False)


def reference_sum(a: np.ndarray) -> int:
    """The exact sum of :func:`random_array`'s `a` (int64 holds it)."""
    return int(np.sum(a, dtype=np.int64))


def measure_method(time_fn: TimeFn, a: np.ndarray, reference: int,
                   buffers: int) -> tuple[float | None, int, bool]:
    """Check, then time one method on `a`: returns (median µs, reps, correct).

    A pilot (one buffer, ``PILOT_WARMUP`` + ``PILOT_REPS`` runs) checks the
    result against `reference` and estimates the time per run; if correct,
    :func:`choose_reps` runs rotate among `buffers` copies after ``WARMUP``
    untimed ones, and the last result is checked again.  Wrong: (None, 0,
    False).
    """
    value, pilot = time_fn(a, 1, PILOT_WARMUP, PILOT_REPS)
    if not is_correct(value, reference):
        return None, 0, False
    reps = choose_reps(statistics.median(pilot))
    value, times = time_fn(a, buffers, WARMUP, reps)
    if not is_correct(value, reference):
        return None, 0, False
    return statistics.median(times) * 1e3, reps, True


class _Progress:
    """A progress bar: ``tqdm.auto`` when tqdm is importable (a widget in
    Jupyter when ipywidgets is installed, else text on stderr), else a plain
    ``\\r`` counter on stderr."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.bar = None
        if enabled:
            try:
                with warnings.catch_warnings():
                    # tqdm.auto warns in a notebook without ipywidgets, and
                    # then falls back to its text bar: fine here.
                    warnings.simplefilter("ignore")
                    from tqdm.auto import tqdm  # noqa: PLC0415
            except ImportError:
                pass
            else:
                self.bar = tqdm(total=total, unit="run", file=sys.stderr,
                                leave=False, dynamic_ncols=True)

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(1)
        else:
            sys.stderr.write(f"\r{self.done}/{self.total} {label}"[:79]
                             .ljust(79))
            sys.stderr.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


def _resolve(methods: Iterable[str] | None, peers: bool | Iterable[str]
             ) -> tuple[list[str], list[str], bool]:
    """(our methods, peer names, whether the peers were named)."""
    ladder = list(cudareduce.methods())
    if methods is None:
        chosen_ladder, named_peers = ladder, []
    else:
        names = [m.strip() for m in ([methods] if isinstance(methods, str)
                                     else methods)]
        unknown = [m for m in names if m not in ladder and not is_peer(m)]
        if unknown:
            raise ValueError(
                f"unknown method {unknown[0]!r}; valid methods: "
                + ", ".join(ladder + list(PEERS)))
        chosen_ladder = [m for m in ladder if m in names]
        named_peers = [p for p in PEERS if p in names]
    if named_peers:
        if peers is False:
            raise ValueError("peers named in methods, but peers=False")
        return chosen_ladder, named_peers, True
    if peers is True:
        return chosen_ladder, list(PEERS), False
    if peers is False or peers is None:
        return chosen_ladder, [], False
    names = list(peers)
    unknown = [p for p in names if not is_peer(p)]
    if unknown:
        raise ValueError(f"unknown peer {unknown[0]!r}; peers: "
                         + ", ".join(PEERS))
    return chosen_ladder, [p for p in PEERS if p in names], True


def _check_threads(threads: int) -> None:
    if not is_int(threads) or not 64 <= threads <= 1024 \
            or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two from 64 to 1024, "
                         f"got {threads!r}")


def run(methods: Iterable[str] | None = None,
        sizes: int | Iterable[int] = DEFAULT_N,
        dtype: str = DEFAULT_DTYPE, threads: int = DEFAULT_THREADS,
        peers: bool | Iterable[str] = True, progress: bool = True,
        *, seed: int | None = None) -> Results:
    """Measure the ladder on the current GPU: what ``python -m
    cudareduce.bench`` measures, from Python.

    Example (in a notebook the results show as a table)::

        from cudareduce import bench
        results = bench.run()                          # float32, n = 2^22
        sweep = bench.run(sizes=[2**k for k in range(10, 29)])
        sweep.plot_bandwidth()

    Parameters
    ----------
    methods : iterable of str, optional
        Our methods to time (default: all: the ladder, ``fast``, ``cub``, in
        that order).  Peer names
        (``"torch.sum"``, ``"cupy.sum"``) may be listed too, and then only
        the peers listed are timed.
    sizes : int or iterable of int
        Element count(s), each >= 1 (default 2^22).
    dtype : str
        ``"float32"`` (default), ``"float64"``, ``"int32"`` or ``"int64"``.
    threads : int
        Threads per block of the ladder kernels (default 256).
    peers : bool or iterable of str
        True (default): every peer that imports and sees a CUDA device,
        silently skipping the others; False: none; or the names of the peers
        to time (a named peer that is unavailable is skipped with a note on
        stderr).
    progress : bool
        Show a progress bar when sweeping several sizes (``tqdm.auto``: the
        notebook widget inside Jupyter); False silences it.
    seed : int, optional
        Seed of the random data (default: fresh entropy every run).

    Returns
    -------
    Results
        The document described in the module docstring (a dict, valid for
        :func:`validate_document`); ``results`` grouped by size, our
        methods in order (the steps, then ``cub``), then peers.

    Raises
    ------
    cudareduce.CudaError
        No usable CUDA device, or a CUDA call failed.
    ValueError
        Unknown method, dtype or peer; bad threads or sizes.
    MemoryError
        Not enough GPU memory for an input.
    """
    if isinstance(dtype, np.dtype) or not isinstance(dtype, str):
        dtype = np.dtype(dtype).name
    if dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; supported: "
                         + ", ".join(DTYPES))
    _check_threads(threads)
    if isinstance(sizes, (int, np.integer)) and not isinstance(sizes, bool):
        size_list = [int(sizes)]
    else:
        size_list = [int(n) for n in sizes]
    if not size_list or any(n < 1 for n in size_list):
        raise ValueError(f"sizes must be >= 1, got {size_list!r}")
    ladder, peer_names, named = _resolve(methods, peers)

    info = _cudareduce.device_info()
    copy_gbps = measure_copy(info["l2_bytes"], info["total_bytes"])
    timers: list[tuple[str, TimeFn]] = [
        (m, ladder_timer(m, threads)) for m in ladder]
    for name in peer_names:
        timer, why = load_peer(name, info["ordinal"])
        if timer is not None:
            timers.append((name, timer))
        elif named:
            print(f"cudareduce.bench: {name} skipped: {why}", file=sys.stderr)
    if not timers:
        raise ValueError("nothing to time: no methods selected")

    rng = np.random.default_rng(seed)
    itemsize = np.dtype(dtype).itemsize
    results = []
    bar = _Progress(len(size_list) * len(timers),
                    progress and len(size_list) > 1)
    try:
        for n in size_list:
            a = random_array(rng, n, dtype)
            reference = reference_sum(a)
            buffers = rotation_buffers(n * itemsize, info["l2_bytes"],
                                       info["total_bytes"])
            for name, timer in timers:
                median_us, reps, correct = measure_method(
                    timer, a, reference, buffers)
                results.append(make_result(name, dtype, n, threads, median_us,
                                           reps, correct))
                bar.step(f"n=2^{math.log2(n):g} {name}" if n & (n - 1) == 0
                         else f"n={n} {name}")
            del a
    finally:
        bar.close()
    return Results(make_document(info, copy_gbps, results))


def device_info() -> dict:
    """The current CUDA device as the bench sees it: ``{"ordinal", "name",
    "sm_count", "l2_bytes", "total_bytes"}`` (memory in bytes).

    Raises
    ------
    cudareduce.CudaError
        No usable CUDA device.
    """
    return dict(_cudareduce.device_info())


# ---------------------------------------------------------------------------
# The comparison with CUB and the peers (``--peers``)

#: Sizes of the fast-versus-CUB ratios: 2^20 and 2^22 (where CUB needs two
#: launches) and 2^28 (bandwidth-bound).
COMPARE_SIZES = (1 << 20, 1 << 22, 1 << 28)
#: Elements of the end-to-end latency test (result on the host).
LATENCY_N = 1024
LATENCY_WARMUP = 200
LATENCY_REPS = 3000


def _wall_times(call: Callable[[], Any], reps: int
                ) -> tuple[list[float], Any]:
    """(wall seconds of each of `reps` calls, the last call's value)."""
    times = []
    value = None
    for _ in range(reps):
        start = time.perf_counter()
        value = call()
        times.append(time.perf_counter() - start)
    return times, value


def _latency_us(call: Callable[[], Any]) -> float:
    """Median wall time of `call()` in µs, after ``LATENCY_WARMUP`` calls:
    the whole call, launch to result on the host."""
    _wall_times(call, LATENCY_WARMUP)
    times, _ = _wall_times(call, LATENCY_REPS)
    return statistics.median(times) * 1e6


def measure_latency(ordinal: int) -> dict[str, float]:
    """End-to-end median µs of a 1024-element float32 device array summed to
    a Python float: ``float(cudareduce.sum(x))`` on a CuPy array and on a
    PyTorch tensor, ``torch.sum(x).item()`` and ``float(cupy.sum(x))``.
    Libraries that do not import (or see no GPU) are left out."""
    latency: dict[str, float] = {}
    try:
        import torch  # noqa: PLC0415 - optional dependency
        if torch.cuda.is_available():
            with torch.cuda.device(ordinal):
                x = torch.rand(LATENCY_N, device=f"cuda:{ordinal}")
                latency["torch.sum(x).item()"] = _latency_us(
                    lambda: torch.sum(x).item())
                latency["float(cudareduce.sum(x)), torch x"] = _latency_us(
                    lambda: float(cudareduce.sum(x)))
                del x
    except ImportError:
        pass
    try:
        import cupy  # noqa: PLC0415 - optional dependency
        with cupy.cuda.Device(ordinal):
            y = cupy.random.random(LATENCY_N, dtype=cupy.float32)
            latency["float(cupy.sum(x))"] = _latency_us(
                lambda: float(cupy.sum(y)))
            latency["float(cudareduce.sum(x)), cupy x"] = _latency_us(
                lambda: float(cudareduce.sum(y)))
            del y
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
    largest, as :func:`run` does, then the end-to-end latency of
    :func:`measure_latency`.

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


def _gbps(results: Mapping[str, Any], method: str, dtype: str,
          n: int) -> float | None:
    for r in results["results"]:
        if (r["method"], r["dtype"], r["n"]) == (method, dtype, n):
            return r["gbps"]
    return None


def comparison_ratios(comparison: Mapping[str, Any]
                      ) -> list[tuple[str, float | None, str, bool | None]]:
    """(what, ratio, target, met) for each target of the fast path; the
    ratio is None (and met None) where a figure is missing or WRONG."""
    results = comparison["results"]
    latency = comparison["latency_us"]
    rows: list[tuple[str, float | None, str, bool | None]] = []

    def add(what: str, num: float | None, den: float | None, target: str,
            ok: Callable[[float], bool]) -> None:
        ratio = None if not num or not den else num / den
        rows.append((what, ratio, target,
                     None if ratio is None else ok(ratio)))

    big = COMPARE_SIZES[-1]
    for n in COMPARE_SIZES:
        need = 1.0 if n == big else 1.5
        add(f"fast / cub GB/s, float32 n = {short_n(n)}",
            _gbps(results, "fast", "float32", n),
            _gbps(results, REFERENCE_METHOD, "float32", n),
            f">= {need:.2f}x", lambda r, need=need: r >= need)
    add(f"fast int32 / fast float32 GB/s, n = {short_n(big)}",
        _gbps(results, "fast", "int32", big),
        _gbps(results, "fast", "float32", big), ">= 0.95x",
        lambda r: r >= 0.95)
    torch_item = latency.get("torch.sum(x).item()")
    for kind in ("cupy", "torch"):
        add(f"float(cudareduce.sum(x)) / torch.sum(x).item(), {kind} x, "
            f"n = {LATENCY_N}",
            latency.get(f"float(cudareduce.sum(x)), {kind} x"), torch_item,
            "<= 0.50x", lambda r: r <= 0.5)
    for peer in PEERS:
        for n in COMPARE_SIZES:
            add(f"fast / {peer} GB/s, float32 n = {short_n(n)}",
                _gbps(results, "fast", "float32", n),
                _gbps(results, peer, "float32", n), "-", lambda r: True)
    return [row if row[2] != "-" else (row[0], row[1], "-", None)
            for row in rows]


def format_comparison(comparison: Mapping[str, Any]) -> str:
    """The ``--peers`` report: the results table, the end-to-end latencies
    and the ratio table with each target and whether it is met."""
    lines = [comparison["results"].table(), "",
             f"End to end, {LATENCY_N} float32 elements to a Python float "
             f"(median of {LATENCY_REPS} calls, wall clock)"]
    lines += render(("call", "µs"), [[k, f"{v:.1f}"] for k, v in
                                      comparison["latency_us"].items()])
    lines += ["", "Ratios (same run, same GPU)"]
    cells = [[what, "-" if ratio is None else f"{ratio:.2f}×", target,
              "-" if met is None else ("yes" if met else "NO")]
             for what, ratio, target, met in comparison_ratios(comparison)]
    lines += render(("ratio", "value", "target", "met"), cells)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Host arrays (``--host``): the whole call, NumPy array in, result out

#: Sizes and dtypes of ``--host``.
HOST_SIZES = tuple(1 << k for k in range(20, 29, 2))
HOST_DTYPES = ("float32", "int32")
#: Wall time each figure of ``--host`` aims at, and its reps' bounds.
HOST_TARGET_SECONDS = 0.3
HOST_MIN_REPS, HOST_MAX_REPS = 3, 50
#: Bytes of the pinned host-to-device copy that sets the ceiling.
HOST_COPY_BYTES = 256 << 20


def _wall_median_ms(call: Callable[[], Any]) -> tuple[float, Any]:
    """(median wall ms of `call()`, its last value): one warm-up call, a
    pilot, then enough reps for about ``HOST_TARGET_SECONDS``."""
    call()
    (pilot,), _ = _wall_times(call, 1)
    reps = int(min(HOST_MAX_REPS, max(HOST_MIN_REPS,
                                      HOST_TARGET_SECONDS / max(pilot, 1e-9))))
    times, value = _wall_times(call, reps)
    return statistics.median(times) * 1e3, value


def _host_calls(ordinal: int) -> dict[str, Callable[[np.ndarray], Any]]:
    """The calls ``--host`` times, by name: ours, NumPy's, and the peers'
    (when they import and see a GPU), each returning a Python number."""
    calls: dict[str, Callable[[np.ndarray], Any]] = {
        "cudareduce.sum(a)": lambda a: cudareduce.sum(a).item(),
        "numpy.sum(a)": lambda a: np.sum(a).item(),
    }
    try:
        import torch  # noqa: PLC0415 - optional dependency
        if torch.cuda.is_available():
            device = torch.device("cuda", ordinal)
            calls["torch.from_numpy(a).cuda().sum().item()"] = (
                lambda a: torch.from_numpy(a).to(device).sum().item())
    except ImportError:
        pass
    try:
        import cupy  # noqa: PLC0415 - optional dependency
        if cupy.cuda.runtime.getDeviceCount() > 0:
            calls["cupy.asarray(a).sum().item()"] = (
                lambda a: cupy.asarray(a).sum().item())
    except Exception:  # noqa: BLE001 - not importable, or no device
        pass
    return calls


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
        ``{"device": {...}, "pinned_gbps": float, "results": [{"call",
        "dtype", "n", "median_ms", "gbps", "correct"}]}``; ``gbps`` is
        array bytes / median wall time.
    """
    info = _cudareduce.device_info()
    copy_ms = statistics.median(_cudareduce.time_copy(HOST_COPY_BYTES, 10,
                                                      True))
    pinned_gbps = HOST_COPY_BYTES / (copy_ms * 1e-3) / 1e9
    calls = _host_calls(info["ordinal"])
    sizes, dtypes = list(sizes), list(dtypes)
    rng = np.random.default_rng(seed)
    results = []
    bar = _Progress(len(sizes) * len(dtypes) * len(calls), progress)
    try:
        for dtype in dtypes:
            for n in sizes:
                a = random_array(rng, n, dtype)
                reference = reference_sum(a)
                for name, call in calls.items():
                    median_ms, value = _wall_median_ms(lambda: call(a))
                    results.append({
                        "call": name, "dtype": dtype, "n": n,
                        "median_ms": median_ms,
                        "gbps": a.nbytes / (median_ms * 1e-3) / 1e9,
                        "correct": is_correct(value, reference)})
                    bar.step(f"{dtype} n={short_n(n)} {name}")
                del a
    finally:
        bar.close()
    return {"device": {k: info[k] for k in ("name", "sm_count")},
            "pinned_gbps": pinned_gbps, "results": results}


def format_host(document: Mapping[str, Any]) -> str:
    """The ``--host`` report: per dtype, effective GB/s of each call by n,
    then the targets of 2^28 float32 (1 GiB) as ratios."""
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
    big = [r for r in results if r["dtype"] == "float32"
           and r["n"] == max(r2["n"] for r2 in results)]
    ours = next((r for r in big if r["call"] == "cudareduce.sum(a)"), None)
    if ours is not None and ours["correct"]:
        lines += ["", f"Targets, float32 n = {short_n(ours['n'])} "
                      f"({ours['n'] * 4 / 2**30:g} GiB)"]
        cells = []
        for r in big:
            if r is not ours and r["correct"]:
                # The targets are against numpy.sum and torch.
                target = not r["call"].startswith("cupy")
                ratio = r["median_ms"] / ours["median_ms"]
                cells.append([f"cudareduce / {r['call']} (speed)",
                              f"{ratio:.2f}×", ">= 4x" if target else "-",
                              ("yes" if ratio >= 4 else "NO") if target
                              else "-"])
        share = ours["gbps"] / pinned
        cells.append(["cudareduce / pinned copy (GB/s)", f"{share:.2f}×",
                      ">= 0.70x", "yes" if share >= 0.7 else "NO"])
        lines += render(("ratio", "value", "target", "met"), cells)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Command line


def _plot_paths(path: str) -> tuple[str, str]:
    """``out.png`` -> (``out-speedup.png``, ``out-bandwidth.png``); a path
    without a suffix gets ``.png``."""
    root, ext = os.path.splitext(path)
    ext = ext or ".png"
    return f"{root}-speedup{ext}", f"{root}-bandwidth{ext}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m cudareduce.bench",
        description=("Time every step of the reduction ladder (and the peers "
                     "torch.sum / cupy.sum) on this GPU, beside its "
                     "device-to-device copy bandwidth."),
        epilog=("Sizes: 4194304, 2^22 or 2**22; --sizes takes a comma list "
                "whose items may be ranges A..B (every power of two from A "
                "to B), e.g. --sizes 2^10..2^28.  --plot out.png writes "
                "out-speedup.png and out-bandwidth.png."))
    size = p.add_mutually_exclusive_group()
    size.add_argument("--n", type=_arg(parse_size), default=None,
                      metavar="N", help="number of elements (default 2^22)")
    size.add_argument("--sizes", type=_arg(parse_sizes), default=None,
                      metavar="SIZES", help="a sweep, e.g. 2^10..2^28")
    p.add_argument("--dtype", default=DEFAULT_DTYPE, choices=DTYPES,
                   help="element type (default float32)")
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                   help="threads per block, a power of two from 64 to 1024 "
                        "(default 256)")
    p.add_argument("--methods", default=None, metavar="LIST",
                   help="comma-separated methods (default: all); peer names "
                        "torch.sum, cupy.sum select those peers")
    p.add_argument("--no-peers", action="store_true",
                   help="do not time torch.sum / cupy.sum")
    p.add_argument("--host", action="store_true",
                   help="time whole calls on NumPy arrays instead (the copy "
                        "to the GPU included) beside numpy.sum, torch and "
                        "cupy, 2^20..2^28 float32 and int32, under the "
                        "pinned copy bandwidth")
    p.add_argument("--peers", action="store_true",
                   help="compare fast with cub, torch.sum and cupy.sum "
                        "instead: GB/s ratios at 2^20, 2^22, 2^28, int32 "
                        "against float32, and the end-to-end latency of a "
                        "1024-element sum, each beside its target")
    p.add_argument("--json", default=None, metavar="PATH",
                   help="write the results document to PATH")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="write both plots, named after PATH")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the random data (default: fresh)")
    return p


def _arg(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` for argparse: ValueError -> ArgumentTypeError with its text."""
    def wrapped(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    wrapped.__name__ = parse.__name__
    return wrapped


def _print_table(text: str) -> None:
    """Print the table; on a console that cannot encode µ or ×, with ASCII
    stand-ins instead of a UnicodeEncodeError."""
    try:
        print(text, flush=True)
    except UnicodeEncodeError:
        print(text.replace("µs", "us").replace("×", "x"), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status.

    0 on success (WRONG methods are reported in the table, not as a failure),
    1 when CUDA fails (no device: the :class:`cudareduce.CudaError` message,
    no traceback), out of memory, or a file cannot be written; 2 for bad
    arguments.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _check_threads(args.threads)
    except ValueError as e:
        parser.error(str(e))
    methods = None
    if args.methods is not None:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        if not methods:
            parser.error("--methods: empty list")
    sizes = args.sizes if args.sizes is not None else \
        [args.n if args.n is not None else DEFAULT_N]

    prog = "cudareduce.bench"
    if args.host:
        if args.peers or args.methods or args.plot or args.no_peers:
            parser.error("--host combines with --sizes, --json and --seed "
                         "only")
        try:
            document = run_host(args.sizes or HOST_SIZES, seed=args.seed)
        except cudareduce.CudaError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 1
        _print_table(format_host(document))
        if args.json:
            try:
                with open(args.json, "w", encoding="utf-8") as f:
                    json.dump(document, f, indent=1)
            except OSError as e:
                print(f"{prog}: {e}", file=sys.stderr)
                return 1
        return 0
    if args.peers and (args.no_peers or args.methods or args.n or args.sizes
                       or args.plot or args.dtype != DEFAULT_DTYPE):
        parser.error("--peers chooses its own methods, sizes and dtypes: "
                     "combine it with --threads, --json and --seed only")
    try:
        if args.peers:
            comparison = compare(args.threads, progress=True, seed=args.seed)
            results = comparison["results"]
        else:
            results = run(methods, sizes, args.dtype, args.threads,
                          peers=not args.no_peers, progress=True,
                          seed=args.seed)
        if not isinstance(results, Results):
            results = Results(results)
    except ValueError as e:
        parser.error(str(e))
    except cudareduce.CudaError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except MemoryError as e:
        print(f"{prog}: out of memory: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130

    _print_table(format_comparison(comparison) if args.peers
                 else results.table())
    wrong = [r for r in results["results"] if not r["correct"]]
    if wrong:
        print(f"{prog}: {len(wrong)} result(s) WRONG: "
              + ", ".join(f"{r['method']} (n={r['n']})" for r in wrong),
              file=sys.stderr)
    try:
        if args.json:
            results.to_json(args.json)
            print(f"{prog}: wrote {args.json}", file=sys.stderr)
        if args.plot:
            speedup_path, bandwidth_path = _plot_paths(args.plot)
            results.plot_step_speedups(path=speedup_path)
            results.plot_bandwidth(path=bandwidth_path)
            print(f"{prog}: wrote {speedup_path} and {bandwidth_path}",
                  file=sys.stderr)
    except ImportError as e:
        print(f"{prog}: --plot needs matplotlib ({e})", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
