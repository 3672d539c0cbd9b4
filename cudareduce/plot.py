"""Plots of a :mod:`cudareduce.bench` results document (matplotlib).

- :func:`plot_step_speedups`: what each step of the ladder buys on your GPU,
  bars side by side with the published tables of :mod:`cudareduce.reference`.
- :func:`plot_bandwidth`: GB/s against n for each method and peer, under
  the device-copy ceiling measured in the same run.

Both take the document (a dict, as :func:`cudareduce.bench.run` returns it,
or the path of a JSON file written by ``--json``), return a
:class:`matplotlib.figure.Figure` (shown inline by notebooks) and, given
`path`, save it (PNG for a ``.png`` path).  They build the Figure directly,
without pyplot, so no GUI backend is needed or selected: saving works on a
headless machine, and a notebook's backend choice is left alone.  A Figure
built without pyplot is not one IPython knows how to draw until pyplot's
inline backend is loaded, so the Figures returned here render themselves
(``_repr_png_``): the last expression of a notebook cell shows the plot,
with or without ``%matplotlib inline``.

Example::

    import cudareduce.bench, cudareduce.plot
    doc = cudareduce.bench.run(sizes=[2**k for k in range(10, 27)])
    cudareduce.plot.plot_step_speedups(doc, path="speedup.png")
    cudareduce.plot.plot_bandwidth(doc, path="bandwidth.png")
"""
from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure as _MplFigure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from . import reference as _reference
from .results import (is_peer, is_reference, ladder_methods, order_results,
                      speedups, validate_document)

__all__ = ["plot_bandwidth", "plot_step_speedups", "select_group"]

PAPER_N = 1 << 22
"""The paper's size (4M elements): the default group of the speedup plot."""

_USER_COLOR = "#1f77b4"
_REFERENCE_COLORS = ("#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
_PEER_STYLES = {"torch.sum": ("#000000", "--"), "cupy.sum": ("#7f7f7f", "-."),
                "cub": ("#9467bd", (0, (5, 1, 1, 1, 1, 1)))}
_COPY_COLOR = "#d62728"


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


def _load(results: Mapping[str, Any] | str | os.PathLike) -> Mapping[str, Any]:
    if isinstance(results, (str, os.PathLike)):
        with open(results, encoding="utf-8") as f:
            results = json.load(f)
    validate_document(results)
    return results


def _pow2_label(n: float) -> str:
    k = math.log2(n) if n > 0 else 0
    if abs(k - round(k)) < 1e-9:
        return f"$2^{{{int(round(k))}}}$"
    return f"{n:,.0f}"


def select_group(document: Mapping[str, Any], *, dtype: str | None = None,
                 threads: int | None = None, n: int | None = None
                 ) -> tuple[str, int, int | None, list[Mapping[str, Any]]]:
    """The results a plot shows: (dtype, threads, n, rows).

    `dtype` and `threads` default to those of the document's first result;
    `n` (when not None) picks one size, and the rows are then that size's.
    With ``n=None`` all sizes of that (dtype, threads) are returned and n in
    the tuple is None.

    Raises
    ------
    ValueError
        No result matches.
    """
    results = document["results"]
    if not results:
        raise ValueError("the document holds no results")
    dtype = results[0]["dtype"] if dtype is None else dtype
    same = [r for r in results if r["dtype"] == dtype]
    if not same:
        raise ValueError(f"no results for dtype {dtype!r}")
    threads = same[0]["threads"] if threads is None else threads
    rows = [r for r in same if r["threads"] == threads]
    if not rows:
        raise ValueError(f"no {dtype} results with threads={threads}")
    if n is not None:
        rows = [r for r in rows if r["n"] == n]
        if not rows:
            raise ValueError(f"no {dtype} results with threads={threads} "
                             f"and n={n}")
    return dtype, threads, n, rows


def _short_n(n: int) -> str:
    """``2^22`` for powers of two, else ``1,000``."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"


def _speedup_n(rows: Sequence[Mapping[str, Any]]) -> int:
    """The paper's 2^22 when measured, else the largest n."""
    sizes = {r["n"] for r in rows}
    return PAPER_N if PAPER_N in sizes else max(sizes)


def _save(fig: Figure, path: str | os.PathLike | None) -> None:
    if path is not None:
        fig.savefig(path, dpi=150, bbox_inches="tight")


def plot_step_speedups(results: Mapping[str, Any] | str | os.PathLike,
                       reference: str | Sequence[str] | None = "all",
                       path: str | os.PathLike | None = None, *,
                       n: int | None = None, dtype: str | None = None,
                       threads: int | None = None) -> Figure:
    """Cumulative and step speedup of each ladder step, beside the references.

    Two panels sharing the x axis (ladder steps 1-7 with their method names):
    above, the cumulative speedup (over the first method; log scale), below,
    the step speedup (over the previous method).  In each, one bar series
    for this run's GPU and one per reference table; steps a series did not
    measure (or found WRONG) have no bar.  Peers appear above as dashed
    horizontal lines at their cumulative speedup.

    Parameters
    ----------
    results : dict or path
        A bench results document, or the path of its JSON file.
    reference : "all", None, str or sequence of str
        Reference tables to show (keys of
        :data:`cudareduce.reference.REFERENCES`); default all.
    path : path, optional
        Where to save the figure (format from the suffix, e.g. ``.png``).
    n : int, optional
        The size to show.  Default: 2^22 (the paper's 4M elements) when the
        document has it, else the largest n measured.
    dtype, threads : optional
        The group to show; default that of the first result.

    Returns
    -------
    matplotlib.figure.Figure
    """
    doc = _load(results)
    dtype, threads, _, rows = select_group(doc, dtype=dtype, threads=threads)
    n = _speedup_n(rows) if n is None else n
    _, _, _, rows = select_group(doc, dtype=dtype, threads=threads, n=n)
    rows = order_results(rows)
    ladder = ladder_methods()
    tables = _reference.select(reference)
    device = doc["device"]["name"]

    per_method = {r["method"]: s for r, s in zip(rows, speedups(rows))}
    timed = [r["method"] for r in rows
             if r["correct"] and not is_reference(r["method"])]
    user_label = f"{device} (this run, n = {_short_n(n)})"
    if timed and timed[0] != ladder[0]:
        user_label += f", relative to {timed[0]}"

    # (label, color, {method: cumulative}, {method: step})
    series = [(user_label, _USER_COLOR,
               {m: c for m, (s, c) in per_method.items()
                if c is not None and not is_reference(m)},
               {m: s for m, (s, c) in per_method.items()
                if s is not None and not is_reference(m)})]
    for i, table in enumerate(tables):
        color = _REFERENCE_COLORS[i % len(_REFERENCE_COLORS)]
        series.append((table.label, color, table.cumulative_speedups(),
                       table.step_speedups()))

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
            if k == 0:
                panel.bar_label(bars, labels=[f"{h:.1f}×" for h in heights],
                                fontsize=8, padding=2)

    for r in rows:
        if is_reference(r["method"]):
            cumulative = per_method[r["method"]][1]
            if cumulative is not None:
                color, style = _PEER_STYLES.get(r["method"], ("#000000", "--"))
                top.axhline(cumulative, color=color, linestyle=style,
                            linewidth=1.2,
                            label=f"{r['method']} ({_kind(r['method'])}, "
                                  f"this run): "
                                  f"{cumulative:.1f}×")

    top.set_yscale("log")
    highest = max([v for s in series for v in s[2].values()] + [1.0]
                  + [c for m, (_, c) in per_method.items()
                     if is_reference(m) and c is not None])
    top.set_ylim(top=highest * 1.6)
    formatter = FuncFormatter(lambda v, _: f"{v:g}×")
    top.yaxis.set_major_formatter(formatter)
    top.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}×" if f"{v:g}"[0] in "25" else ""))
    top.set_ylabel("cumulative speedup over step 1 (×, log scale)")
    top.set_title(f"{dtype}, {threads} threads per block; references at "
                  f"their own sizes and hardware", fontsize=10)
    top.grid(axis="y", which="both", alpha=0.3)
    handles, labels = top.get_legend_handles_labels()
    bars_first = sorted(range(len(handles)),
                        key=lambda i: not labels[i] in [s[0] for s in series])
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
                   dtype: str | None = None, threads: int | None = None
                   ) -> Figure:
    """Bandwidth (GB/s, bytes read / time) against n, one line per method.

    Steps are solid lines coloured by step, ``cub`` and peers dashed; WRONG
    results are left out.  A horizontal line marks the device-to-device copy
    bandwidth of the same run (which counts bytes read + written: the
    practical ceiling of a memory-bound kernel).  x is log2.

    Parameters
    ----------
    results : dict or path
        A bench results document, or the path of its JSON file.
    path : path, optional
        Where to save the figure (format from the suffix, e.g. ``.png``).
    dtype, threads : optional
        The group to show; default that of the first result.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib  # noqa: PLC0415

    doc = _load(results)
    dtype, threads, _, rows = select_group(doc, dtype=dtype, threads=threads)
    ladder = ladder_methods()
    device = doc["device"]["name"]
    copy_gbps = doc["device"]["copy_gbps"]

    by_method: dict[str, list[tuple[int, float]]] = {}
    for r in order_results(rows):
        if r["correct"]:
            by_method.setdefault(r["method"], []).append((r["n"], r["gbps"]))
    cmap = matplotlib.colormaps["viridis"]

    fig = Figure(figsize=(11, 6.5), layout="constrained")
    ax = fig.subplots()
    top = copy_gbps
    for method, points in by_method.items():
        points.sort()
        ns, gbps = zip(*points)
        top = max(top, *gbps)
        if is_reference(method):
            color, style = _PEER_STYLES.get(method, ("#000000", "--"))
            label = f"{method} ({_kind(method)})"
        else:
            step = ladder.index(method) if method in ladder else len(ladder)
            color = cmap(step / max(1, len(ladder) - 1) * 0.9)
            style = "-"
            label = f"{step + 1}. {method}" if method in ladder else method
        ax.plot(ns, gbps, linestyle=style, marker="o", markersize=4,
                color=color, linewidth=1.6, label=label)
    ax.axhline(copy_gbps, color=_COPY_COLOR, linestyle=":", linewidth=1.8,
               label=f"device copy (read+write): {copy_gbps:,.0f} GB/s")

    ax.set_xscale("log", base=2)
    sizes = sorted({r["n"] for r in rows})
    if len(sizes) <= 24:
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _pow2_label(v)))
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    ax.set_ylim(0, top * 1.08)
    ax.set_xlabel("n (elements, log₂ scale)")
    ax.set_ylabel("bandwidth (GB/s, bytes read / time)")
    ax.set_title(f"Reduction bandwidth on {device}\n{dtype}, {threads} "
                 f"threads per block", fontsize=12)
    ax.grid(which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
              borderaxespad=0.0)
    _save(fig, path)
    return fig
