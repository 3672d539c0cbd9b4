"""Plots of a :mod:`cudareduce.bench` results document (matplotlib).

- :func:`plot_step_speedups`: what each step of the ladder buys on your GPU
  (from the cold GPU times), at one size or several side by side, beside
  the published tables of :mod:`cudareduce.bench.reference`.
- :func:`plot_bandwidth`: cold GB/s against n for each method and peer,
  under the read ceiling (a read-only kernel timed the same way at each
  size) measured in the same run; optionally the back-to-back figures too.
- :func:`plot_axes`: an ``--axis`` document's share of the floor, ours and
  each peer side by side, case by case.

Each takes the document (a dict, as :func:`cudareduce.bench.run` or
:func:`cudareduce.bench.run_axes` returns it, or the path of a JSON file
written by ``--json``), returns a
:class:`matplotlib.figure.Figure` (shown inline by notebooks) and, given
`path`, save it (PNG for a ``.png`` path).  They build the Figure directly,
without pyplot, so no GUI backend is needed or selected: saving works on a
headless machine, and a notebook's backend choice is left alone.  A Figure
built without pyplot is not one IPython knows how to draw until pyplot's
inline backend is loaded, so the Figures returned here render themselves
(``_repr_png_``): the last expression of a notebook cell shows the plot,
with or without ``%matplotlib inline``.

Example::

    from cudareduce import bench
    from cudareduce.bench import plot
    doc = bench.run(sizes=[2**k for k in range(10, 27)])
    plot.plot_step_speedups(doc, n=[2**22, 2**26], path="speedup.png")
    plot.plot_bandwidth(doc, path="bandwidth.png", batch=True)

Needs matplotlib: without it, importing this module raises an ImportError
that names the extra to install (``bench``).
"""
from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

try:
    from matplotlib.colors import to_hex
    from matplotlib.figure import Figure as _MplFigure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
except ImportError as exc:  # pragma: no cover - tested in a subprocess
    raise ImportError(
        f"cudareduce's plots need matplotlib ({exc}): install the bench "
        f"extra, python -m pip install -e \".[bench]\" from a checkout, or "
        f"python -m pip install matplotlib") from exc

from . import reference as _reference
from .axis_schema import (case_groups, case_label, column_of, is_ours,
                          validate_axis_document)
from .figures import (format_bytes, gbps, order_results, read_floor_us,
                      reduction_label, result_gbps, short_n, speedups)
from .names import is_peer, is_reference, ladder_methods, numpy_dtype, op_of
from .schema import validate_document

__all__ = ["PLOTTED_KEY", "plot_axes", "plot_bandwidth",
           "plot_step_speedups", "plotted",
           "select_group"]

PAPER_N = 1 << 22
"""The paper's size (4M elements): the default size of the speedup plot."""

#: This run's bars, one colour per size shown, darker to lighter.
_USER_COLORS = ("#1f77b4", "#6baed6", "#08306b", "#9ecae1")
_REFERENCE_COLORS = ("#ff7f0e", "#2ca02c", "#d4a017", "#8c564b", "#e377c2")
#: cub and the peers, by library (a peer's of every op): (colour, marker)
#: in both plots.
_REFERENCE_STYLES = {"cub": ("#9467bd", "s"), "torch": ("#000000", "^"),
                     "cupy": ("#7f7f7f", "D")}
_OTHER_REFERENCE = ("#000000", "v")
#: The reference lines of the speedup plot, one style per size shown.
_SIZE_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
_CEILING_COLOR = "#d62728"


class Figure(_MplFigure):
    """The plots' Figure: a :class:`matplotlib.figure.Figure` that Jupyter
    shows as PNG even where pyplot (and with it the inline backend's
    formatters) was never imported."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        return buffer.getvalue()


def _kind(method: str) -> str:
    """How a reference is labelled: ``peer`` or ``reference`` (cub)."""
    return "peer" if is_peer(method) else "reference"


def _reference_style(method: str) -> tuple[str, str]:
    """(colour, marker) of a reference: cub's, or its peer library's
    (``torch`` of ``torch.amin``)."""
    return _REFERENCE_STYLES.get(method.split(".")[0], _OTHER_REFERENCE)


def _load(results: Mapping[str, Any] | str | os.PathLike,
          validate: Callable[[Any], None] = validate_document
          ) -> Mapping[str, Any]:
    """A document (or the one in a JSON file), checked by `validate`."""
    if isinstance(results, (str, os.PathLike)):
        with open(results, encoding="utf-8") as f:
            results = json.load(f)
    validate(results)
    return results


def _pow2_label(n: float) -> str:
    k = math.log2(n) if n > 0 else 0
    if abs(k - round(k)) < 1e-9:
        return f"$2^{{{int(round(k))}}}$"
    return f"{n:,.0f}"


def select_group(document: Mapping[str, Any], *, op: str | None = None,
                 dtype: str | None = None, threads: int | None = None,
                 n: int | None = None
                 ) -> tuple[str, str, int, int | None,
                            list[Mapping[str, Any]]]:
    """The results a plot shows: (op, dtype, threads, n, rows).

    `op`, `dtype` and `threads` default to those of the document's first
    result (of that op, of that dtype); `n` (when not None) picks one size,
    and the rows are then that size's.  With ``n=None`` all sizes of that
    (op, dtype, threads) are returned and n in the tuple is None.

    Raises
    ------
    ValueError
        No result matches.
    """
    results = document["results"]
    if not results:
        raise ValueError("the document holds no results")
    op = op_of(results[0]) if op is None else op
    of_op = [r for r in results if op_of(r) == op]
    if not of_op:
        raise ValueError(f"no results for op {op!r}")
    dtype = of_op[0]["dtype"] if dtype is None else dtype
    same = [r for r in of_op if r["dtype"] == dtype]
    if not same:
        raise ValueError(f"no {op} results for dtype {dtype!r}")
    threads = same[0]["threads"] if threads is None else threads
    rows = [r for r in same if r["threads"] == threads]
    what = reduction_label(dtype, op)
    if not rows:
        raise ValueError(f"no {what} results with threads={threads}")
    if n is not None:
        rows = [r for r in rows if r["n"] == n]
        if not rows:
            raise ValueError(f"no {what} results with threads={threads} "
                             f"and n={n}")
    return op, dtype, threads, n, rows


def _speedup_sizes(rows: Sequence[Mapping[str, Any]],
                   n: int | Sequence[int] | None) -> list[int]:
    """The sizes of the speedup plot: `n` (one or several, in the order
    given, each once), or the paper's 2^22 when measured, else the largest
    n."""
    if n is None:
        sizes = {r["n"] for r in rows}
        return [PAPER_N if PAPER_N in sizes else max(sizes)]
    if isinstance(n, (int, np.integer)):
        return [int(n)]
    chosen = list(dict.fromkeys(int(k) for k in n))
    if not chosen:
        raise ValueError("n: no size given")
    return chosen


PLOTTED_KEY = "cudareduce:plotted"
"""The text chunk of a PNG written here that holds :func:`plotted` of its
figure, as JSON: what the picture shows, readable without its pixels."""


def _number(v: Any) -> float | str:
    """A plotted number, rounded to 8 significant digits (a last-bit
    difference between machines is not a different figure)."""
    v = float(v)
    return float(f"{v:.8g}") if math.isfinite(v) else str(v)


def _numbers(values: Any) -> list[float | str]:
    return [_number(v) for v in np.asarray(values, dtype=float).ravel()]


def plotted(fig: _MplFigure) -> dict[str, Any]:
    """What `fig` shows, as plain data (JSON-ready): its title, and for each
    axes its title, axis labels, scales, limits and ticks (positions and
    labels), its texts (the bars' labels), each bar series (label, colour,
    x and height of every bar), each line (label, colour, style, points)
    and the legend's entries; numbers to 8 significant digits.

    Two figures with equal ``plotted`` show the same data the same way;
    :func:`plot_step_speedups` and :func:`plot_bandwidth` write it into the
    PNGs they save (under :data:`PLOTTED_KEY`), so that a saved picture can
    be checked against a fresh draw without comparing pixels.
    """
    def axes(ax: Any) -> dict[str, Any]:
        legend = ax.get_legend()
        return {
            "title": ax.get_title(),
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
            "xlim": _numbers(ax.get_xlim()), "ylim": _numbers(ax.get_ylim()),
            "xticks": _numbers(ax.get_xticks()),
            "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
            "yticks": _numbers(ax.get_yticks()),
            "yticklabels": [t.get_text() for t in ax.get_yticklabels()],
            "texts": [t.get_text() for t in ax.texts],
            "bars": [{"label": c.get_label(),
                      "color": to_hex(c.patches[0].get_facecolor())
                      if c.patches else None,
                      "x": _numbers([b.get_x() for b in c.patches]),
                      "height": _numbers([b.get_height()
                                          for b in c.patches])}
                     for c in ax.containers],
            "lines": [{"label": line.get_label(),
                       "color": to_hex(line.get_color()),
                       "linestyle": str(line.get_linestyle()),
                       "marker": str(line.get_marker()),
                       "x": _numbers(line.get_xdata()),
                       "y": _numbers(line.get_ydata())}
                      for line in ax.get_lines()],
            "legend": [t.get_text() for t in legend.get_texts()]
            if legend is not None else [],
        }

    return {"title": fig.get_suptitle(),
            "axes": [axes(ax) for ax in fig.axes]}


def _save(fig: Figure, path: str | os.PathLike | None) -> None:
    """Save `fig` at `path` (150 dpi, tight); a PNG carries
    :func:`plotted` of it under :data:`PLOTTED_KEY`."""
    if path is None:
        return
    metadata = None
    if os.fspath(path).lower().endswith(".png"):
        metadata = {PLOTTED_KEY: json.dumps(plotted(fig), sort_keys=True,
                                            separators=(",", ":"))}
    fig.savefig(path, dpi=150, bbox_inches="tight", metadata=metadata)


#: One bar series: (label, colour, {method: cumulative}, {method: step}).
_Series = tuple[str, str, dict[str, float], dict[str, float]]


def _run_series(rows: Sequence[Mapping[str, Any]], label: str, color: str
                ) -> tuple[_Series, list[tuple[str, float]]]:
    """The bar series of this run at one size (its steps), and its
    references' (method, cumulative speedup)."""
    ladder = ladder_methods()
    per_method = {r["method"]: s for r, s in zip(rows, speedups(rows))}
    timed = [r["method"] for r in rows
             if r["correct"] and not is_reference(r["method"])]
    if timed and timed[0] != ladder[0]:
        label += f", relative to {timed[0]}"
    series = (label, color,
              {m: c for m, (s, c) in per_method.items()
               if c is not None and not is_reference(m)},
              {m: s for m, (s, c) in per_method.items()
               if s is not None and not is_reference(m)})
    references = [(m, c) for m, (_, c) in per_method.items()
                  if is_reference(m) and c is not None]
    return series, references


def plot_step_speedups(results: Mapping[str, Any] | str | os.PathLike,
                       reference: str | Sequence[str] | None = "all",
                       path: str | os.PathLike | None = None, *,
                       n: int | Sequence[int] | None = None,
                       op: str | None = None, dtype: str | None = None,
                       threads: int | None = None) -> Figure:
    """Cumulative and step speedup of each ladder step, from the cold GPU
    times, beside the published tables.

    Two panels sharing the x axis (ladder steps 1-7 with their method names,
    then ``fast``): above, the cumulative speedup (over the first method;
    log scale), below, the step speedup (over the previous method).  In
    each, one bar series per size of this run and one per reference table,
    labelled by its source; steps a series did not measure (or found WRONG)
    have no bar.  ``cub`` and the peers appear above as horizontal lines at
    their cumulative speedup, coloured by method, styled by size.  The
    published tables are of sums, whatever op the run reduced.

    Parameters
    ----------
    results : dict or path
        A bench results document, or the path of its JSON file.
    reference : "all", None, str or sequence of str
        Reference tables to show (keys of
        :data:`cudareduce.bench.reference.REFERENCES`); default all.
    path : path, optional
        Where to save the figure (format from the suffix, e.g. ``.png``).
    n : int or sequence of int, optional
        The size, or sizes side by side (e.g. ``[2**22, 2**26]``).
        Default: 2^22 (the paper's 4M elements) when the document has it,
        else the largest n measured.
    op, dtype, threads : optional
        The group to show; default that of the first result.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        The document is invalid, or holds no results for a size asked for.
    """
    doc = _load(results)
    op, dtype, threads, _, rows = select_group(doc, op=op, dtype=dtype,
                                               threads=threads)
    sizes = _speedup_sizes(rows, n)
    ladder = ladder_methods()
    device = doc["device"]["name"]

    series: list[_Series] = []
    lines: list[tuple[str, int, float]] = []
    for k, size in enumerate(sizes):
        group = order_results(select_group(doc, op=op, dtype=dtype,
                                           threads=threads, n=size)[4])
        run, references = _run_series(
            group, f"{device} (this run, n = {short_n(size)})",
            _USER_COLORS[k % len(_USER_COLORS)])
        series.append(run)
        lines += [(m, size, c) for m, c in references]
    for i, table in enumerate(_reference.select(reference)):
        series.append((table.label,
                       _REFERENCE_COLORS[i % len(_REFERENCE_COLORS)],
                       table.cumulative_speedups(), table.step_speedups()))

    fig = Figure(figsize=(11, 8.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True,
                               gridspec_kw={"height_ratios": [3, 2]})
    width = 0.8 / len(series)
    for panel, index in ((top, 2), (bottom, 3)):
        for k, s in enumerate(series):
            values = s[index]
            xs = [ladder.index(m) + (k - (len(series) - 1) / 2) * width
                  for m in ladder if m in values]
            heights = [values[m] for m in ladder if m in values]
            bars = panel.bar(xs, heights, width, label=s[0], color=s[1],
                             edgecolor="white", linewidth=0.5)
            if k < len(sizes):
                panel.bar_label(bars, labels=[f"{h:.1f}×" for h in heights],
                                fontsize=8 if len(sizes) == 1 else 6,
                                padding=2)

    for method, size, cumulative in lines:
        color = _reference_style(method)[0]
        where = f", n = {short_n(size)}" if len(sizes) > 1 else ""
        top.axhline(cumulative, color=color, linewidth=1.2,
                    linestyle=_SIZE_STYLES[sizes.index(size)
                                           % len(_SIZE_STYLES)],
                    label=f"{method} ({_kind(method)}, this run{where}): "
                          f"{cumulative:.1f}×")

    top.set_yscale("log")
    highest = max([v for s in series for v in s[2].values()] + [1.0]
                  + [c for _, _, c in lines])
    top.set_ylim(top=highest * 1.6)
    formatter = FuncFormatter(lambda v, _: f"{v:g}×")
    top.yaxis.set_major_formatter(formatter)
    top.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}×" if f"{v:g}"[0] in "25" else ""))
    top.set_ylabel("cumulative speedup over step 1 (×, log scale)")
    top.set_title(f"{reduction_label(dtype, op)}, {threads} threads per "
                  f"block, cold GPU time; published references (sums) at "
                  f"their own sizes and hardware", fontsize=10)
    top.grid(axis="y", which="both", alpha=0.3)
    handles, labels = top.get_legend_handles_labels()
    bar_labels = [s[0] for s in series]
    bars_first = sorted(range(len(handles)),
                        key=lambda i: labels[i] not in bar_labels)
    top.legend([handles[i] for i in bars_first],
               [labels[i] for i in bars_first], loc="upper left", fontsize=9)

    bottom.axhline(1.0, color="#555555", linewidth=0.8, linestyle=":")
    bottom.set_ylabel("step speedup over the previous step (×)")
    bottom.yaxis.set_major_formatter(formatter)
    bottom.grid(axis="y", alpha=0.3)
    bottom.set_xticks(range(len(ladder)))
    bottom.set_xticklabels([f"{i + 1}. {m}" for i, m in enumerate(ladder)],
                           rotation=20, ha="right", fontsize=9)
    bottom.set_xlabel("ladder step (method)")
    fig.suptitle(f"What each step of the reduction ladder buys on {device}",
                 fontsize=13)
    _save(fig, path)
    return fig


def plot_bandwidth(results: Mapping[str, Any] | str | os.PathLike,
                   path: str | os.PathLike | None = None, *,
                   op: str | None = None, dtype: str | None = None,
                   threads: int | None = None, batch: bool = False) -> Figure:
    """Bandwidth (GB/s, bytes read / cold GPU time) against n, one line per
    method.

    Steps are coloured by step, ``cub`` and the peers by their own colours
    and markers; WRONG results are left out.  The read ceiling is the read
    probe of the same run at each size (a read-only streaming kernel timed
    the same way: the most a reduction, which reads each byte once, can
    reach there).  With `batch`, each method's back-to-back GB/s and the
    probe's are drawn too, dashed, in the same colours.  x is log2.

    Parameters
    ----------
    results : dict or path
        A bench results document, or the path of its JSON file.
    path : path, optional
        Where to save the figure (format from the suffix, e.g. ``.png``).
    op, dtype, threads : optional
        The group to show; default that of the first result.
    batch : bool
        Also draw the back-to-back figures (dashed).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib  # noqa: PLC0415

    doc = _load(results)
    op, dtype, threads, _, rows = select_group(doc, op=op, dtype=dtype,
                                               threads=threads)
    ladder = ladder_methods()
    device = doc["device"]["name"]
    floor = doc["floor"]
    itemsize = numpy_dtype(dtype).itemsize
    sizes = sorted({r["n"] for r in rows})
    cmap = matplotlib.colormaps["viridis"]

    fig = Figure(figsize=(11, 6.5), layout="constrained")
    ax = fig.subplots()
    legend: list[Any] = []
    plotted: list[float] = []

    def draw(xs: Sequence[int], ys: Sequence[float], dashed: bool,
             **style: Any) -> Any:
        plotted.extend(ys)
        (line,) = ax.plot(xs, ys, **{
            "linestyle": "--" if dashed else "-",
            "linewidth": 1.0 if dashed else 1.6,
            "alpha": 0.7 if dashed else 1.0, **style})
        return line

    by_method: dict[str, list[Mapping[str, Any]]] = {}
    for r in order_results(rows):
        if r["correct"]:
            by_method.setdefault(r["method"], []).append(r)
    for method, points in by_method.items():
        points = sorted(points, key=lambda r: r["n"])
        if is_reference(method):
            color, marker = _reference_style(method)
            label = f"{method} ({_kind(method)})"
        else:
            step = ladder.index(method) if method in ladder else len(ladder)
            color = cmap(step / max(1, len(ladder) - 1) * 0.9)
            marker = "o"
            label = f"{step + 1}. {method}" if method in ladder else method
        legend.append(draw([r["n"] for r in points],
                           [result_gbps(r, "cold_us") for r in points], False,
                           color=color, marker=marker, markersize=4,
                           label=label))
        timed = [r for r in points if r["batch_us"] is not None]
        if batch and timed:
            draw([r["n"] for r in timed],
                 [result_gbps(r, "batch_us") for r in timed], True,
                 color=color, marker=marker, markersize=3,
                 label=f"{label}, back to back")

    def ceiling(key: str) -> list[float]:
        return [gbps(n * itemsize, read_floor_us(doc, n, dtype, key))
                for n in sizes]

    legend.append(draw(
        sizes, ceiling("cold"), False, color=_CEILING_COLOR, linestyle=":",
        linewidth=2.2,
        label=f"read ceiling, cold (read-only kernel; "
              f"{floor['read_cold_gbps']:,.0f} GB/s at "
              f"{format_bytes(floor['read_bytes'])})"))
    if batch:
        legend.append(draw(
            sizes, ceiling("batch"), True, color=_CEILING_COLOR,
            label=f"read ceiling, back to back (read-only kernel; "
                  f"{floor['read_batch_gbps']:,.0f} GB/s at "
                  f"{format_bytes(floor['read_bytes'])})"))
        legend.append(Line2D([], [], color="#555555", linestyle="--",
                             linewidth=1.0,
                             label="dashed: back to back (same colour)"))

    ax.set_xscale("log", base=2)
    if len(sizes) <= 24:
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _pow2_label(v)))
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    ax.set_ylim(0, max(plotted) * 1.08)
    ax.set_xlabel("n (elements, log₂ scale)")
    ax.set_ylabel("bandwidth (GB/s, bytes read / time)")
    ax.set_title(f"Reduction bandwidth on {device}\n"
                 f"{reduction_label(dtype, op)}, {threads} threads per "
                 f"block, cold GPU time"
                 + (" and back to back" if batch else ""), fontsize=12)
    ax.grid(which="major", alpha=0.3)
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=9, borderaxespad=0.0)
    _save(fig, path)
    return fig


#: The colours of the ``--axis`` plot's columns that are not cub's or a
#: peer library's of :data:`_REFERENCE_STYLES` (the ladder's steps: by
#: step).
_AXIS_COLORS = {"fast": _USER_COLORS[0], "cupy[cub]": "#c7c7c7"}


def _axis_color(column: str) -> str:
    """The colour of an ``--axis`` plot's column (:func:`~cudareduce.bench.
    axis_schema.column_of`)."""
    import matplotlib  # noqa: PLC0415

    if column in _AXIS_COLORS:
        return _AXIS_COLORS[column]
    if column in _REFERENCE_STYLES or not is_ours(column):
        return _reference_style(column)[0]
    ladder = ladder_methods()
    return to_hex(matplotlib.colormaps["viridis"](
        ladder.index(column) / len(ladder) * 0.9))


def plot_axes(document: Mapping[str, Any] | str | os.PathLike,
              path: str | os.PathLike | None = None) -> Figure:
    """An ``--axis`` document's share of the floor, back to back: one
    panel per dtype, a group of horizontal bars per case (its op, shape
    and axis), one bar per method and peer timed correct there (``fast``
    and our other methods, then ``torch``, ``cupy`` and ``cupy[cub]``: a
    peer by its library, whatever its function), each labelled with its
    %, beside a line at 100% (the floor).

    Parameters
    ----------
    document : dict or path
        An ``--axis`` document, or the path of its JSON file.
    path : path, optional
        Where to save the figure (format from the suffix, e.g. ``.png``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        The document is invalid, or no result in it was timed.
    """
    document = _load(document, validate_axis_document)
    groups = case_groups(document["results"])
    timed = [r for group in groups.values() for r in group.values()
             if r["pct_floor"] is not None]
    if not timed:
        raise ValueError("the document holds no timed result to plot")
    dtypes = list(dict.fromkeys(r["dtype"] for r in timed))
    columns = sorted(dict.fromkeys(column_of(r["method"]) for r in timed),
                     key=lambda c: not is_ours(c))
    cases = {dtype: [group for case, group in groups.items()
                     if case[0] == dtype] for dtype in dtypes}
    bars = [len(cases[dtype]) * len(columns) for dtype in dtypes]
    fig = Figure(figsize=(11, 0.6 + sum(1.0 + 0.18 * k for k in bars)),
                 layout="constrained")
    panels = fig.subplots(len(dtypes), 1, squeeze=False,
                          gridspec_kw={"height_ratios": bars})[:, 0]
    height = 0.8 / len(columns)
    for panel, dtype in zip(panels, dtypes):
        rows = cases[dtype]
        for k, column in enumerate(columns):
            ys, widths = [], []
            for i, group in enumerate(rows):
                r = next((r for m, r in group.items()
                          if column_of(m) == column), None)
                if r is not None and r["pct_floor"] is not None:
                    ys.append(i + (k - (len(columns) - 1) / 2) * height)
                    widths.append(r["pct_floor"])
            bars = panel.barh(ys, widths, height, label=column,
                              color=_axis_color(column), edgecolor="white",
                              linewidth=0.5)
            panel.bar_label(bars, labels=[f"{w:.0f}%" for w in widths],
                            fontsize=7, padding=2)
        panel.axvline(100, color=_CEILING_COLOR, linestyle=":",
                      linewidth=1.5, label="floor (100%)")
        panel.set_yticks(range(len(rows)))
        panel.set_yticklabels([case_label(next(iter(g.values())))
                               for g in rows], fontsize=9)
        panel.invert_yaxis()            # the table's order, top down
        panel.set_xlim(0, max(110, max(r["pct_floor"] for r in timed)
                              * 1.15))
        panel.set_xlabel("% of the floor (floor / time, back to back)")
        panel.set_title(dtype, fontsize=10)
        panel.grid(axis="x", alpha=0.3)
        panel.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Reductions along an axis on {document['device']['name']}"
                 f": share of the floor (empty kernel + R / read rate + "
                 f"W / write rate)", fontsize=12)
    _save(fig, path)
    return fig
