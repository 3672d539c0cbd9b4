"""Figures and tables of the bench's documents: each result's GB/s, "% read"
and passes, the speedups, the grouping into tables, their cells and text,
and sizes in words.  No GPU code and no compiled extension (see
:mod:`~cudareduce.bench.schema` for the document itself).
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .axis_schema import best_peer, case_groups, case_label
from .exact_schema import exact_groups, speed_over
from .names import (DEFAULT_OP, FAST_METHOD, REFERENCE_METHOD, is_peer,
                    is_reference, ladder_methods, numpy_dtype, op_of)
from .schema import TIME_KEYS, result_bytes

__all__ = [
    "TABLE_HEADERS", "axis_markdown", "describe_sizes", "device_line",
    "exact_markdown", "format_bytes",
    "format_group", "format_n", "format_table", "gbps", "group_cells",
    "group_results", "group_title", "order_results", "outcome_notes",
    "pass_split",
    "read_floor_us", "read_percent", "reduction_label", "render",
    "report_head", "result_gbps", "short_n", "speedups", "table_groups",
]

#: The two ways the probes are timed, as :func:`read_floor_us` names them,
#: and the result timing each matches.
_PROBE_TIMINGS = {"cold": "cold_us", "batch": "batch_us"}


def format_n(n: int) -> str:
    """``4,194,304 (2^22)`` for powers of two, else ``1,000``."""
    if n > 0 and n & (n - 1) == 0:
        return f"{n:,} (2^{n.bit_length() - 1})"
    return f"{n:,}"


def format_bytes(nbytes: int) -> str:
    """``1 GiB``, ``256 MiB``, ``4 KiB``, ``1.5 MiB``; ``100 B`` below
    1 KiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.4g} {unit}"
    return f"{nbytes} B"


# ---------------------------------------------------------------------------
# Figures derived from a result


def gbps(nbytes: int, us: float | None) -> float | None:
    """`nbytes` read in `us` µs, in GB/s (1e9 bytes/s); None without a
    time."""
    return None if us is None else nbytes / (us * 1e3)


def result_gbps(r: Mapping[str, Any], key: str) -> float | None:
    """The GB/s (bytes read per second, 1e9 B/s) of one of a result's
    timings, `key` one of :data:`TIME_KEYS`; None where it has none."""
    if key not in TIME_KEYS:
        raise ValueError(f"key must be one of {TIME_KEYS}, got {key!r}")
    return gbps(result_bytes(r), r[key])


def read_floor_us(document: Mapping[str, Any], n: int, dtype: str,
                  key: str) -> float:
    """The read probe's time (µs) over the bytes of `n` elements of `dtype`,
    timed as `key` says: ``"cold"`` or ``"batch"``.

    Raises
    ------
    ValueError
        A bad `key`, or no probe at that size.
    """
    if key not in _PROBE_TIMINGS:
        raise ValueError(f"key must be one of {tuple(_PROBE_TIMINGS)}, got "
                         f"{key!r}")
    nbytes = n * numpy_dtype(dtype).itemsize
    for p in document["probes"]:
        if p["bytes"] == nbytes:
            return p[f"read_{key}_us"]
    raise ValueError(f"no read probe at {nbytes} bytes")


def read_percent(document: Mapping[str, Any], r: Mapping[str, Any],
                 key: str) -> float | None:
    """"% read" of a result timed as `key` (``"cold"`` or ``"batch"``): the
    read probe's time at the same bytes over the method's, as a percent --
    how close the method comes to only reading its input once; None where
    the result has no such time."""
    floor = read_floor_us(document, r["n"], r["dtype"], key)
    us = r[_PROBE_TIMINGS[key]]
    return None if us is None else 100.0 * floor / us


def pass_split(r: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(the first pass's µs, the later passes' summed) of a result; None
    where there is no such pass (``cub``, the peers, one-pass plans)."""
    passes = r["pass_us"]
    first = passes[0] if passes else None
    rest = sum(passes[1:]) if len(passes) > 1 else None
    return first, rest


# ---------------------------------------------------------------------------
# Speedups and the table


def order_results(results: Iterable[Mapping[str, Any]]) -> list[Mapping]:
    """Steps in ladder order, then other methods, ``cub`` and the peers, each
    in their given order (a stable sort)."""
    ladder = {m: i for i, m in enumerate(ladder_methods())}

    def key(r: Mapping) -> tuple[int, int]:
        m = r["method"]
        if is_peer(m):
            return (3, 0)
        if m == REFERENCE_METHOD:
            return (2, 0)
        return (0, ladder[m]) if m in ladder else (1, 0)

    return sorted(results, key=key)


def group_results(results: Iterable[Mapping[str, Any]]
                  ) -> dict[tuple[str, int, int], list[Mapping]]:
    """Results of one op by (dtype, n, threads), groups in order of first
    appearance, each ordered by :func:`order_results`.

    Raises
    ------
    ValueError
        The results are of several ops (:func:`table_groups` groups them
        by op too).
    """
    groups: dict[tuple[str, int, int], list[Mapping]] = {}
    ops: set[str] = set()
    for r in results:
        ops.add(op_of(r))
        groups.setdefault((r["dtype"], r["n"], r["threads"]), []).append(r)
    if len(ops) > 1:
        raise ValueError(f"results of several ops {sorted(ops)}: group "
                         f"them by op first (table_groups)")
    return {k: order_results(v) for k, v in groups.items()}


def table_groups(results: Iterable[Mapping[str, Any]]
                 ) -> dict[tuple[str, str, int, int], list[Mapping]]:
    """Results by (op, dtype, n, threads), one table each: each op's
    groups of :func:`group_results`, the ops in order of first
    appearance."""
    by_op: dict[str, list[Mapping]] = {}
    for r in results:
        by_op.setdefault(op_of(r), []).append(r)
    return {(op, *key): rows for op, op_results in by_op.items()
            for key, rows in group_results(op_results).items()}


def speedups(rows: Sequence[Mapping[str, Any]]
             ) -> list[tuple[float | None, float | None]]:
    """(step, cumulative) speedup of each row of one group, in row order,
    from the cold GPU times.

    Rows are in table order (see :func:`order_results`).  Among the step
    rows that are correct and timed, step = previous one's ``cold_us`` /
    this one's (None for the first), cumulative = first one's / this one's.
    References (``cub``, peers) get step None and a cumulative speedup over
    the same first step row.  Wrong rows get (None, None); so does everything
    when no step row is timed.
    """
    first: float | None = None
    previous: float | None = None
    out: list[tuple[float | None, float | None]] = []
    for r in rows:
        t = r.get("cold_us")
        if not r.get("correct") or t is None:
            out.append((None, None))
            continue
        if is_reference(r["method"]):
            out.append((None, None if first is None else first / t))
            continue
        step = None if previous is None else previous / t
        if first is None:
            first = t
        out.append((step, first / t))
        previous = t
    return out


_DASH = "-"


def _fmt_time(us: float | None) -> str:
    if us is None:
        return _DASH
    return f"{us:,.1f}" if us < 1000 else f"{us:,.0f}"


def _fmt_gbps(value: float | None) -> str:
    return _DASH if value is None else f"{value:,.1f}"


def _fmt_percent(value: float | None) -> str:
    return _DASH if value is None else f"{value:.1f}%"


def _fmt_speedup(x: float | None) -> str:
    return _DASH if x is None else f"{x:.2f}×"


def outcome_notes(rows: Sequence[Mapping[str, Any]],
                  name: Callable[[str], str],
                  where: Callable[[Mapping[str, Any]], str]) -> list[str]:
    """The lines under a report of results with ``unavailable`` and
    ``correct`` (``--axis``, ``--exact``): what was unavailable, each
    method (as `name` calls it) with its reasons once each, then what was
    WRONG, and on what (`where` of the result)."""
    why: dict[str, dict[str, None]] = {}
    for r in rows:
        if r["unavailable"] is not None:
            why.setdefault(r["method"], {})[r["unavailable"]] = None
    lines = [f"  not available: {name(method)}: {'; '.join(reasons)}"
             for method, reasons in why.items()]
    lines += [f"  WRONG: {name(r['method'])} on {where(r)}" for r in rows
              if r["correct"] is False]
    return lines


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]
           ) -> list[str]:
    """Aligned columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [cells[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + \
        [line(r) for r in rows]


TABLE_HEADERS = ("method", "cold µs", "GB/s", "% read", "b2b µs", "GB/s",
                 "% read", "call µs", "1st pass µs", "rest µs",
                 "step speedup", "cumulative speedup")


def group_cells(rows: Sequence[Mapping[str, Any]],
                document: Mapping[str, Any]) -> list[list[str]]:
    """The table cells of one group (the columns of :data:`TABLE_HEADERS`),
    shared by the text table, the Markdown and the HTML of
    :class:`~cudareduce.bench.results.Results`; `document` gives the read
    probe of the group's size ("% read")."""
    body = []
    for r, (step, cumulative) in zip(rows, speedups(rows)):
        if not r["correct"]:
            body.append([r["method"], "WRONG"]
                        + [_DASH] * (len(TABLE_HEADERS) - 2))
            continue
        cells = [r["method"]]
        for key, timing in _PROBE_TIMINGS.items():
            cells += [_fmt_time(r[timing]),
                      _fmt_gbps(result_gbps(r, timing)),
                      _fmt_percent(read_percent(document, r, key))]
        first, rest = pass_split(r)
        cells += [_fmt_time(r["call_us"]), _fmt_time(first), _fmt_time(rest),
                  _reference_cell(r["method"]) if is_reference(r["method"])
                  else _fmt_speedup(step),
                  _fmt_speedup(cumulative)]
        body.append(cells)
    return body


def _reference_cell(method: str) -> str:
    """The step-speedup cell of a reference row."""
    return "peer" if is_peer(method) else "reference"


def format_group(rows: Sequence[Mapping[str, Any]],
                 document: Mapping[str, Any]) -> str:
    """The table of one (op, dtype, n, threads) group of `document`, rows
    in table order."""
    return "\n".join(render(TABLE_HEADERS, group_cells(rows, document)))


def report_head(document: Mapping[str, Any]) -> list[str]:
    """The report's head as paragraphs: version, GPU, SMs, L2, clocks,
    driver, CUDA and CCCL; the floor (an empty kernel's cold and
    back-to-back µs, the read ceiling's GB/s both ways) and the date; the
    timing method; the default-size rule."""
    dev = document["device"]
    floor = document["floor"]
    cc = dev["compute_capability"]
    driver = dev["driver"] or "unknown"
    head = (f"cudareduce {document['cudareduce_version']} on {dev['name']} "
            f"(compute {cc // 10}.{cc % 10}, {dev['sm_count']} SMs, "
            f"L2 {format_bytes(dev['l2_bytes'])}, "
            f"SM {dev['sm_clock_mhz']:,} MHz, memory "
            f"{dev['memory_clock_mhz']:,} MHz × {dev['memory_bus_bits']:,} "
            f"bits); driver {driver} (CUDA {dev['driver_cuda']}), CUDA "
            f"runtime {dev['cuda_runtime']}, CCCL {dev['cccl']}")
    floor_line = (f"floor: empty kernel {floor['empty_cold_us']:,.2f} µs "
                  f"cold, {floor['empty_batch_us']:,.2f} µs back to back; "
                  f"read ceiling {floor['read_cold_gbps']:,.1f} GB/s cold, "
                  f"{floor['read_batch_gbps']:,.1f} GB/s back to back at "
                  f"{format_bytes(floor['read_bytes'])}; measured "
                  f"{document['date']}")
    timing = document["timing"]
    return [head, floor_line, f"timing: {timing['method']}",
            f"default n: {timing['default_n_rule']}"]


def device_line(document: Mapping[str, Any]) -> str:
    """The report's head (:func:`report_head`) as text lines without a
    blank one: the first two whole, the timing method and the
    default-size rule wrapped at 100 columns."""
    head, floor_line, *sentences = report_head(document)
    return "\n".join([head, floor_line, *(
        line for text in sentences
        for line in textwrap.wrap(text, width=100, subsequent_indent="  ",
                                  break_on_hyphens=False,
                                  break_long_words=False))])


def reduction_label(dtype: str, op: str) -> str:
    """How titles name a reduction: ``float32 prod``, and ``float32`` for a
    sum (the bench's default, unnamed as it always was)."""
    return dtype if op == DEFAULT_OP else f"{dtype} {op}"


def group_title(op: str, dtype: str, n: int, threads: int) -> str:
    """The title of one (op, dtype, n, threads) table: ``float32 prod, n =
    4,194,304 (2^22), 256 threads per block`` (:func:`reduction_label`)."""
    return (f"{reduction_label(dtype, op)}, n = {format_n(n)}, {threads} "
            f"threads per block")


def format_table(document: Mapping[str, Any]) -> str:
    """The report: the head (:func:`device_line`), then one table per
    (op, dtype, n, threads) (:func:`table_groups`).

    Columns (:data:`TABLE_HEADERS`): method; the cold GPU time, its GB/s
    and "% read" (the read probe's cold time at the same size over the
    method's); the same three back to back; the call time; the first
    pass's cold time and the later passes' sum (``-`` where there are none
    or the method's launches are not split); step and cumulative speedup
    from the cold times (see :func:`speedups`).  A wrong method shows
    ``WRONG`` and no figures; a peer shows ``peer`` as its step speedup,
    ``cub`` ``reference``; a timing not measured shows ``-``.
    """
    lines = [device_line(document)]
    for key, rows in table_groups(document["results"]).items():
        lines += ["", group_title(*key), format_group(rows, document)]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Sizes in words


def short_n(n: int) -> str:
    """``2^22`` for powers of two, else ``1,000``."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 \
        else f"{n:,}"


def describe_sizes(sizes: Sequence[int]) -> str:
    """``2^10..2^28 (19 sizes)``, ``2^22``, ``1,000, 4,096 (2 sizes)``."""
    if not sizes:
        return "no sizes"
    if len(sizes) == 1:
        return short_n(sizes[0])
    powers = all(n & (n - 1) == 0 for n in sizes)
    consecutive = powers and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    if consecutive or len(sizes) > 6:
        text = f"{short_n(sizes[0])}..{short_n(sizes[-1])}"
    else:
        text = ", ".join(short_n(n) for n in sizes)
    return f"{text} ({len(sizes)} sizes)"


def _axis_cell(r: Mapping[str, Any] | None) -> str:
    if r is None or r["unavailable"] is not None:
        return "-"
    return "WRONG" if not r["correct"] else f"{r['batch_us']:,.1f}"


def axis_markdown(document: Mapping[str, Any], dtype: str = "float32"
                  ) -> str:
    """An ``--axis`` document's cases of `dtype` as a Markdown table (the
    README's): each case's floor, ``fast``'s back-to-back µs and share of
    the floor, the fastest peer's µs and fast's speed over it, and
    ``cub`` (CUB's segmented reduce, ours)."""
    lines = ["| case | floor µs | fast µs | fast % of floor | fastest peer, "
             "µs | fast / it | cub µs |",
             "|---|---:|---:|---:|---|---:|---:|"]
    for case, group in case_groups(document["results"]).items():
        if case[0] != dtype:
            continue
        first = next(iter(group.values()))
        fast = group.get(FAST_METHOD)
        best = best_peer(group)
        timed = fast is not None and fast["batch_us"] is not None
        share = f"{fast['pct_floor']:.0f}%" if timed else "-"
        peer = "-" if best is None else f"{best['method']} {_axis_cell(best)}"
        speed = f"{best['batch_us'] / fast['batch_us']:.2f}×" \
            if timed and best is not None else "-"
        lines.append(f"| {case_label(first)} "
                     f"| {first['floor_batch_us']:,.1f} | {_axis_cell(fast)} "
                     f"| {share} | {peer} | {speed} "
                     f"| {_axis_cell(group.get(REFERENCE_METHOD))} |")
    return "\n".join(lines)


def exact_markdown(document: Mapping[str, Any], data: str = "normal",
                   sizes: Iterable[int] | None = None) -> str:
    """An ``--exact`` document's sums of `data` as a Markdown table (the
    README's): a row per dtype and size (of `sizes`, default all), with
    the floor, the plain
    ``fast`` sum's, ``exact=True``'s and CUB's gpu_to_gpu back-to-back
    µs, and exact's speed over fast's and over gpu_to_gpu's."""
    sizes = None if sizes is None else set(sizes)
    lines = ["| dtype, n | floor µs | fast µs | exact=True µs | CUB "
             "gpu_to_gpu µs | exact / fast | exact / gpu_to_gpu |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for (dtype, kind, n), group in exact_groups(document["results"]).items():
        if kind != data or (sizes is not None and n not in sizes):
            continue
        first = next(iter(group.values()))
        ratios = [speed_over(group, "exact", other)
                  for other in ("fast", "cub_gpu_to_gpu")]
        lines.append(
            f"| {dtype} {short_n(n)} | {first['floor_batch_us']:,.1f} "
            + "".join(f"| {_axis_cell(group.get(m))} "
                      for m in ("fast", "exact", "cub_gpu_to_gpu"))
            + "".join("| - " if x is None else f"| {x:.2f}× "
                      for x in ratios) + "|")
    return "\n".join(lines)
