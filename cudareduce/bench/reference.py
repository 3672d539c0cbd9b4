"""Published timings of the reduction ladder, as data, with their sources.

So that :func:`cudareduce.bench.plot.plot_step_speedups` (a plot) and
:func:`side_by_side` (a text table) can set the user's GPU beside what others
measured, each table below carries the figures exactly as published (converted
to microseconds) and the citation they come from.

Every table maps this package's method names (the ladder steps of
:func:`cudareduce.methods`, in order) to a time; a step the source did not
measure is simply absent.  The tables were measured on other hardware, at
other sizes and with other code: compare the *shape* of the ladder (how much
each step buys), not the absolute times.

Tables, keyed and labelled by their sources' names
--------------------------------------------------
``harris``
    Mark Harris, "Optimizing Parallel Reduction in CUDA", NVIDIA.  G80,
    2^22 (4M) ints, kernels 1-7.
``shared_memory_reduction``
    "Shared Memory Based Reduction" (a Chinese-language write-up, author not
    named; kept as the project's file ``002_d2f30ed02251f9f1.txt``).  RTX
    3060, CUDA Toolkit 11.8, 2^22 elements, kernels 1-6.
``report_lab7``
    Kamil Gwiżdż & Bartłomiej Mucha, "Report Lab7" (kept as the project's
    file ``003_32552d01572ea838.txt``).  1024×65535 floats, 128 threads per
    block, kernels 1-5 (GPU not stated).
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
        Full citation: author, title, publisher or file, and where to find it.
    url : str or None
        Where the document is published, when it is.
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
    url: str | None
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


def _ms(values: list[float]) -> dict[str, float]:
    """Ladder-ordered {method: µs} from milliseconds, step 1 first."""
    return {m: round(v * 1000.0, 6) for m, v in zip(LADDER, values)}


HARRIS = ReferenceTable(
    key="harris",
    label="Harris 2007 (G80, 2^22 ints)",
    title="Optimizing Parallel Reduction in CUDA",
    author="Mark Harris",
    citation=("Mark Harris, \"Optimizing Parallel Reduction in CUDA\", "
              "NVIDIA Developer Technology (presentation distributed with the "
              "CUDA SDK reduction sample), "
              "https://developer.download.nvidia.com/assets/cuda/files/"
              "reduction.pdf"),
    url=("https://developer.download.nvidia.com/assets/cuda/files/"
         "reduction.pdf"),
    device="G80",
    environment="performance table for 4M (2^22) integer elements",
    n=1 << 22,
    dtype="int32",
    threads=None,
    times_us=_ms([8.054, 3.456, 1.722, 0.965, 0.536, 0.381, 0.268]),
    published_gbps=dict(zip(LADDER, [2.083, 4.854, 9.741, 17.377, 31.289,
                                     43.996, 62.671])),
    published_cumulative=30.04,
    note=("Kernels 1-7 of the paper are this package's steps 1-7 in order "
          "(kernel 5, 'unroll the last warp', relied on implicit warp "
          "synchronicity; ours uses __syncwarp())."),
)

SHARED_MEMORY_REDUCTION = ReferenceTable(
    key="shared_memory_reduction",
    label="\"Shared Memory Based Reduction\" (RTX 3060, 2^22)",
    title="Shared Memory Based Reduction",
    author="",
    citation=("\"Shared Memory Based Reduction\", a Chinese-language write-up "
              "of the seven steps of Harris's paper with an RTX 3060 results "
              "table (author not named in the text); project seed file "
              "002_d2f30ed02251f9f1.txt, section \"Experiment\"."),
    url=None,
    device="RTX 3060",
    environment=("\"RTX3060 + CUDA Toolkit 11.8 + 4M elements(2^22)\" "
                 "(the write-up's test environment); times in µs"),
    n=1 << 22,
    dtype=None,
    threads=None,
    times_us=dict(zip(LADDER, [520.0, 353.0, 333.0, 186.0, 131.0, 123.0])),
    published_cumulative=4.227642,
    note=("Rows 1-6 of its table (interleaved addressing, reduce divergence, "
          "sequential addressing, first add during global load, unroll last "
          "warp, completely unrolled) are our steps 1-6; row 7 (multiple "
          "elements per thread) has no time.  Element type not stated."),
)

REPORT_LAB7 = ReferenceTable(
    key="report_lab7",
    label="Gwiżdż & Mucha, \"Report Lab7\" (1024×65535 floats)",
    title="Report Lab7",
    author="Kamil Gwiżdż & Bartłomiej Mucha",
    citation=("Kamil Gwiżdż & Bartłomiej Mucha, \"Report Lab7\" (reduction "
              "lab report following Harris's paper); project seed file "
              "003_32552d01572ea838.txt."),
    url=None,
    device="GPU not stated",
    environment=("vector of 1024*65535 floats, 128 threads per block; "
                 "average kernel time measured with nvprof"),
    n=1024 * 65535,
    dtype="float32",
    threads=128,
    times_us=_ms([4.58, 3.33, 3.12, 3.10, 2.52]),
    note=("Its naive kernel and reductions 1-4 (non-divergent branch, "
          "sequential addressing, first add during load, unroll the last "
          "warp) are our steps 1-5."),
)

REFERENCES: Mapping[str, ReferenceTable] = MappingProxyType(
    {t.key: t for t in (HARRIS, SHARED_MEMORY_REDUCTION, REPORT_LAB7)})
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
