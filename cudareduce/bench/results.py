"""The bench's document as a Python object: :class:`Results`, a results
document (a ``dict``) with its tables, HTML, JSON, pandas and plots.

No GPU code: it reads documents that :func:`cudareduce.bench.run` measured
or a ``--json`` file holds.  It stands above :mod:`cudareduce.bench.plot` (its
plot methods draw through it), which stands above the results model
(:mod:`cudareduce.bench.schema`), so the model's functions live there and this
class here; :mod:`cudareduce.bench` re-exports it as ``bench.Results``.
"""
from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .figures import (TABLE_HEADERS, describe_sizes, format_table, group_cells,
                      group_title, order_results, pass_split, read_percent,
                      report_head, result_gbps, short_n, speedups,
                      table_groups)
from .names import is_peer, is_reference, op_of
from .schema import (RESULT_KEYS, TIME_KEYS, result_bytes, validate_document,
                     write_json)

__all__ = ["PANDAS_COLUMNS", "Results"]

#: The columns :meth:`Results.to_pandas` derives, after the document's own.
PANDAS_COLUMNS = ("peer", "reference", "bytes", "cold_gbps", "cold_pct_read",
                  "batch_gbps", "batch_pct_read", "call_gbps",
                  "first_pass_us", "rest_passes_us", "step_speedup",
                  "cumulative_speedup")


class Results(dict):
    """What one bench run measured: the JSON document, with tools to show it.

    A ``Results`` *is* the JSON document of :mod:`cudareduce.bench` (a
    ``dict``, checked by :func:`~cudareduce.bench.schema.validate_document` when
    built, so ``results["device"]`` and ``json.dump(results, f)`` work as
    they do on the plain document), plus:

    - :meth:`table` -- the text table ``python -m cudareduce.bench`` prints
      (``print(results)`` prints it too); :meth:`to_markdown` the same as
      Markdown;
    - :meth:`to_json` / :meth:`from_json` -- write and read the JSON file
      (the same file as ``--json``);
    - :meth:`to_pandas` -- one DataFrame row per result, with the table's
      derived columns (needs pandas);
    - :meth:`plot_step_speedups`, :meth:`plot_bandwidth` -- the plots of
      :mod:`cudareduce.bench.plot` (need matplotlib);
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
        :func:`~cudareduce.bench.schema.validate_document`).
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
        """The GPU and its software: name, compute capability, SMs, L2 and
        memory bytes, peak clocks (MHz), memory bus bits, driver, CUDA
        versions, CCCL (see :mod:`cudareduce.bench.schema`)."""
        return self["device"]

    @property
    def sizes(self) -> list[int]:
        """The element counts measured, sorted."""
        return sorted({r["n"] for r in self["results"]})

    @property
    def ops(self) -> list[str]:
        """The reductions measured (:data:`~cudareduce.bench.names.OPS`), in
        order of first appearance."""
        return list(dict.fromkeys(op_of(r) for r in self["results"]))

    @property
    def methods(self) -> list[str]:
        """The methods measured, in table order (steps, then references)."""
        seen: dict[str, None] = {}
        for r in order_results(self["results"]):
            seen.setdefault(r["method"], None)
        return list(seen)

    def select(self, *, n: int | Iterable[int] | None = None,
               dtype: str | None = None, threads: int | None = None,
               methods: str | Iterable[str] | None = None,
               op: str | Iterable[str] | None = None) -> "Results":
        """The results matching every criterion given, as a new ``Results``
        (the same device, date, timing, floor and probes); e.g.
        ``results.select(n=2**22)`` for one table, ``op="prod"`` for the
        products.

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
        ops = as_set(op)
        rows = [r for r in self["results"]
                if all(v is None or r[k] in v for k, v in wanted.items())
                and (ops is None or op_of(r) in ops)]
        if not rows:
            asked = ", ".join(f"{k}={v!r}" for k, v in
                              (("n", n), ("dtype", dtype),
                               ("threads", threads), ("methods", methods),
                               ("op", op))
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
        """The table as Markdown (for a README or a report): the head of
        :meth:`table`, a paragraph a line, then per (op, dtype, n,
        threads) group a bold title and a pipe table with the columns and
        cells of :meth:`table`."""
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) \
                + " |"

        lines = "\n\n".join(report_head(self)).splitlines()
        for key, rows in table_groups(self["results"]).items():
            lines += ["", f"**{group_title(*key)}**", "",
                      line(TABLE_HEADERS),
                      "|" + "|".join([":---"] + ["---:"] *
                                     (len(TABLE_HEADERS) - 1)) + "|"]
            lines += [line(cells) for cells in group_cells(rows, self)]
        return "\n".join(lines)

    def _summary_line(self) -> str:
        results = self["results"]
        dtypes = sorted({r["dtype"] for r in results})
        threads = sorted({r["threads"] for r in results})
        return (f"{', '.join(dtypes) or 'no dtype'} "
                f"{'/'.join(self.ops) or 'no op'}, "
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
                f" {self['date']}: {self._summary_line()}\n"
                f" methods: {steps}\n"
                f" {len(results)} results, {verdict}; .table() for the table>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's text form: the summary, not the dict's contents.
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        """HTML tables with the columns of the text table (:data:`TABLE_HEADERS`),
        one per (op, dtype, n, threads) group, under the head of
        :meth:`table` (its first line in bold)."""
        esc = html.escape
        left = "text-align:left"
        right = "text-align:right"
        head = "".join(
            f'<th style="{left if i == 0 else right}">{esc(h)}</th>'
            for i, h in enumerate(TABLE_HEADERS))
        first, *rest = report_head(self)
        parts = ['<div class="cudareduce-results">',
                 f"<p><b>{esc(first)}</b></p>"]
        parts += [f"<p>{esc(paragraph)}</p>" for paragraph in rest]
        for key, rows in table_groups(self["results"]).items():
            parts.append('<table class="cudareduce-table">')
            parts.append(f'<caption style="{left}">'
                         f"{esc(group_title(*key))}</caption>")
            parts.append(f"<thead><tr>{head}</tr></thead><tbody>")
            for r, cells in zip(rows, group_cells(rows, self)):
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

        Columns: the document's (:data:`~cudareduce.bench.schema.RESULT_KEYS`:
        ``method``, ``op`` (``"sum"`` where a document names none),
        ``dtype``, ``n``, ``threads``, ``cold_us``, ``batch_us``,
        ``call_us``, ``pass_us`` (a list), ``reps``, ``correct``), then
        ``peer``, ``reference`` (``cub`` or a peer),
        ``bytes`` (read: ``n * itemsize``), ``cold_gbps``,
        ``cold_pct_read``, ``batch_gbps``, ``batch_pct_read``,
        ``call_gbps`` (a call has no probe timed its way, so no "% read"),
        ``first_pass_us``, ``rest_passes_us``, ``step_speedup`` and
        ``cumulative_speedup``, as in the table; NaN where the table shows
        ``-``.  ``df.attrs`` holds the rest of the document: ``schema``,
        ``cudareduce_version``, ``date``, ``device``, ``timing``, ``floor``
        and ``probes``.

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

        def number(x: float | None) -> float:
            return float("nan") if x is None else x

        records = []
        for rows in table_groups(self["results"]).values():
            for r, (step, cumulative) in zip(rows, speedups(rows)):
                record = {k: r[k] for k in RESULT_KEYS if k in r}
                record.update({k: number(r[k]) for k in TIME_KEYS},
                              op=op_of(r))
                first, rest = pass_split(r)
                record.update(
                    peer=is_peer(r["method"]),
                    reference=is_reference(r["method"]),
                    bytes=result_bytes(r),
                    cold_gbps=number(result_gbps(r, "cold_us")),
                    cold_pct_read=number(read_percent(self, r, "cold")),
                    batch_gbps=number(result_gbps(r, "batch_us")),
                    batch_pct_read=number(read_percent(self, r, "batch")),
                    call_gbps=number(result_gbps(r, "call_us")),
                    first_pass_us=number(first), rest_passes_us=number(rest),
                    step_speedup=number(step),
                    cumulative_speedup=number(cumulative))
                records.append(record)
        columns = list(RESULT_KEYS) + list(PANDAS_COLUMNS)
        df = pd.DataFrame.from_records(records, columns=columns)
        for key in ("schema", "cudareduce_version", "date", "device",
                    "timing", "floor", "probes"):
            df.attrs[key] = json.loads(json.dumps(self[key]))
        return df

    def plot_step_speedups(self, **kwargs: Any) -> Any:
        """:func:`cudareduce.bench.plot.plot_step_speedups` of these results
        (keywords: ``reference``, ``path``, ``n`` (one size or several, side
        by side), ``op``, ``dtype``, ``threads``); returns the matplotlib
        Figure."""
        from . import plot  # noqa: PLC0415 - needs matplotlib
        return plot.plot_step_speedups(self, **kwargs)

    def plot_bandwidth(self, **kwargs: Any) -> Any:
        """:func:`cudareduce.bench.plot.plot_bandwidth` of these results
        (keywords: ``path``, ``op``, ``dtype``, ``threads``, ``batch``);
        returns the matplotlib Figure."""
        from . import plot  # noqa: PLC0415 - needs matplotlib
        return plot.plot_bandwidth(self, **kwargs)
