"""Published timings of the reduction ladder, as data, with their sources.

So that :func:`cudareduce.bench.plot.plot_step_speedups` (a plot) and
:func:`side_by_side` (a text table) can set the user's GPU beside what others
measured, each table below carries the figures exactly as published (converted
to microseconds) and the citation they come from: its authors, title and
public address.  A table whose source has no public address is not kept.

Every table maps this package's method names (the ladder steps of
:func:`cudareduce.methods`, in order) to a time; a step the source did not
measure is simply absent.  The tables were measured on other hardware, at
other sizes and with other code: compare the *shape* of the ladder (how much
each step buys), not the absolute times.

Tables, keyed and labelled by their sources' names
--------------------------------------------------
``harris``
    Mark Harris, "Optimizing Parallel Reduction in CUDA", NVIDIA, 2007
    (https://developer.download.nvidia.com/assets/cuda/files/reduction.pdf).
    G80, 2^22 (4M) ints, kernels 1-7.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .names import LADDER
from .figures import order_results, render, speedups
from .names import is_reference, op_of
from .schema import validate_document

__all__ = ["LADDER", "REFERENCES", "ReferenceTable", "get", "select",
           "side_by_side"]



@dataclass(frozen=True)
class ReferenceTable:
    """One published table of ladder timings.

    Attributes
    ----------
    key : str
        Identifier in :data:`REFERENCES` (``"harris"``, ...).
    label : str
        Short legend label for plots: the source's name (its authors,
        else its title), hardware and size.
    title : str
        Title of the source document.
    author : str
        Its author(s), as the document names them; empty when it names none.
    citation : str
        Full citation: author, title, publisher, year and address.
    url : str
        The public address of the document (a table without one is
        refused: its figures could not be checked).
    device : str
        The GPU the figures were measured on, as the source states it.
    environment : str
        Everything else the source states about the measurement (toolkit,
        timing tool, ...).
    n : int
        Number of elements reduced.
    dtype : str or None
        Element type, when the source states it.
    threads : int or None
        Threads per block, when the source states it.
    times_us : Mapping[str, float]
        Ladder method name -> published time in microseconds, in ladder order;
        steps the source did not measure are absent.
    published_gbps : Mapping[str, float]
        Bandwidths the source itself printed (empty when it printed none).
    published_cumulative : float or None
        The source's own last cumulative speedup, when it printed one (our
        :meth:`cumulative_speedups` recomputes it from the times).
    note : str
        How the source's kernels map onto our ladder, and caveats.
    """

    key: str
    label: str
    title: str
    author: str
    citation: str
    url: str
    device: str
    environment: str
    n: int
    dtype: str | None
    threads: int | None
    times_us: Mapping[str, float]
    published_gbps: Mapping[str, float] = field(default_factory=dict)
    published_cumulative: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not (self.url or "").startswith("https://") \
                or self.url not in self.citation:
            raise ValueError(f"{self.key}: a published table needs its "
                             f"public address (https://...), cited")
        unknown = [m for m in self.times_us if m not in LADDER]
        if unknown:
            raise ValueError(f"{self.key}: unknown ladder methods {unknown}")
        ordered = {m: float(self.times_us[m]) for m in LADDER
                   if m in self.times_us}
        object.__setattr__(self, "times_us", MappingProxyType(ordered))
        object.__setattr__(self, "published_gbps",
                           MappingProxyType(dict(self.published_gbps)))

    @property
    def steps(self) -> dict[str, int]:
        """Method name -> ladder step number (1-based) of each timed method."""
        return {m: LADDER.index(m) + 1 for m in self.times_us}

    def cumulative_speedups(self) -> dict[str, float]:
        """Each timed method's speedup over the first timed method (step 1
        in every table here): ``time[first] / time[method]``."""
        times = list(self.times_us.items())
        if not times:
            return {}
        first = times[0][1]
        return {m: first / t for m, t in times}

    def step_speedups(self) -> dict[str, float]:
        """Each timed method's speedup over the timed method before it:
        ``time[previous] / time[method]``; the first method has none."""
        times = list(self.times_us.items())
        return {m: prev_t / t
                for (_, prev_t), (m, t) in zip(times, times[1:])}


#: Harris's performance table for 4M ints on the G80, a row per kernel: the
#: ladder step it is, its time (ms) and its bandwidth (GB/s), as printed.
_HARRIS_ROWS = (
    ("interleaved_divergent", 8.054, 2.083),
    ("interleaved_bank_conflict", 3.456, 4.854),
    ("sequential", 1.722, 9.741),
    ("first_add", 0.965, 17.377),
    ("unroll_warp", 0.536, 31.289),
    ("unroll_complete", 0.381, 43.996),
    ("multi_element", 0.268, 62.671),
)

_HARRIS_URL = ("https://developer.download.nvidia.com/assets/cuda/files/"
              "reduction.pdf")

HARRIS = ReferenceTable(
    key="harris",
    label="Harris 2007 (G80, 2^22 ints)",
    title="Optimizing Parallel Reduction in CUDA",
    author="Mark Harris",
    citation=("Mark Harris, \"Optimizing Parallel Reduction in CUDA\", "
              "NVIDIA Developer Technology, 2007 (the slides of the CUDA SDK "
              f"reduction sample), {_HARRIS_URL}"),
    url=_HARRIS_URL,
    device="G80",
    environment="performance table for 4M (2^22) integer elements",
    n=1 << 22,
    dtype="int32",
    threads=None,
    times_us={m: round(ms * 1000.0, 6) for m, ms, _ in _HARRIS_ROWS},
    published_gbps={m: gbps for m, _, gbps in _HARRIS_ROWS},
    published_cumulative=30.04,
    note=("Kernels 1-7 of the paper are this package's steps 1-7 in order "
          "(kernel 5, 'unroll the last warp', relied on implicit warp "
          "synchronicity; ours uses __syncwarp())."),
)

REFERENCES: Mapping[str, ReferenceTable] = MappingProxyType(
    {t.key: t for t in (HARRIS,)})
"""All reference tables by key, in the order plots show them."""


def get(key: str) -> ReferenceTable:
    """The reference table `key`; ValueError naming the valid keys if none."""
    try:
        return REFERENCES[key]
    except KeyError:
        raise ValueError(f"unknown reference table {key!r}; valid keys: "
                         + ", ".join(REFERENCES)) from None


def select(reference: str | list[str] | tuple[str, ...] | None
           ) -> list[ReferenceTable]:
    """Reference tables named by `reference`.

    Parameters
    ----------
    reference : None, "all", str or sequence of str
        None for none, ``"all"`` for every table of :data:`REFERENCES`, or
        one key or a sequence of keys.

    Returns
    -------
    list of ReferenceTable
    """
    if reference is None:
        return []
    if isinstance(reference, str):
        if reference == "all":
            return list(REFERENCES.values())
        return [get(reference)]
    return [get(k) for k in reference]


def _fmt_us(us: float) -> str:
    return f"{us:,.1f} µs" if us < 1000 else f"{us:,.0f} µs"


def side_by_side(results: Mapping, n: int | None = None,
                 reference: str | list[str] | tuple[str, ...] | None = "all",
                 *, dtype: str | None = None, threads: int | None = None
                 ) -> str:
    """A text table: each ladder step's time (the run's cold GPU time) and
    step speedup in a bench run, beside the published ones.  The published
    tables time sums, so the run's sums are shown (results of other ops,
    ``--op``, are left out).

    One row per step, one column per source (the run first), each cell
    ``time (step speedup)``; ``-`` where a source has no time for the step.
    A footer names each reference's hardware and size, and its citation.

    Parameters
    ----------
    results : mapping
        A bench results document (:class:`cudareduce.bench.Results` or the
        dict of a ``--json`` file).
    n : int, optional
        The run's size to show: default 2^22 (the paper's) when measured,
        else the largest.
    reference : "all", None, str or sequence of str
        Reference tables to show (keys of :data:`REFERENCES`).
    dtype, threads : optional
        The run's group to show; default that of its first result.

    Raises
    ------
    ValueError
        No result of the run matches (or the run holds no sums).
    """
    validate_document(results)
    rows = list(results["results"])
    if not rows:
        raise ValueError("the document holds no results")
    rows = [r for r in rows if op_of(r) == "sum"]
    if not rows:
        raise ValueError("the published tables time sums, and the document "
                         "holds none (it was run with another --op)")
    dtype = rows[0]["dtype"] if dtype is None else dtype
    rows = [r for r in rows if r["dtype"] == dtype]
    threads = rows[0]["threads"] if threads is None and rows else threads
    rows = [r for r in rows if r["threads"] == threads]
    if n is None and rows:
        sizes = {r["n"] for r in rows}
        n = (1 << 22) if (1 << 22) in sizes else max(sizes)
    rows = [r for r in rows if r["n"] == n]
    if not rows:
        raise ValueError(f"no results with dtype={dtype!r}, "
                         f"threads={threads!r}, n={n!r}")
    rows = order_results(rows)

    ours = {r["method"]: (r["cold_us"], step)
            for r, (step, _) in zip(rows, speedups(rows))
            if r["correct"] and not is_reference(r["method"])}
    tables = select(reference)
    sources = [("this run", ours)]
    for t in tables:
        steps = t.step_speedups()
        sources.append((t.key, {m: (us, steps.get(m))
                                for m, us in t.times_us.items()}))

    def cell(entry: tuple[float | None, float | None] | None) -> str:
        if entry is None or entry[0] is None:
            return "-"
        us, step = entry
        return _fmt_us(us) + ("" if step is None else f" ({step:.2f}×)")

    headers = ["step"] + [label for label, _ in sources]
    body = [[f"{i + 1}. {m}"] + [cell(times.get(m)) for _, times in sources]
            for i, m in enumerate(LADDER)]
    out = render(headers, body)
    notes = ["Each cell: time (step speedup over the step before).",
             f"this run: {results['device']['name']}, n = {n:,} {dtype}, "
             f"{threads} threads per block, cold GPU time (L2 flushed "
             f"before each run)."]
    for t in tables:
        size = f"{t.n:,} {t.dtype or 'elements (type not stated)'}"
        threads_note = f", {t.threads} threads per block" if t.threads else ""
        notes.append(f"{t.key}: {t.device}, {size}{threads_note}. "
                     f"{t.citation}")
    out.append("")
    out += [textwrap.fill(note, width=100, subsequent_indent="    ",
                          break_on_hyphens=False, break_long_words=False)
            for note in notes]
    return "\n".join(out)
