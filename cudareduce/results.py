"""The bench's results model: its JSON document, the speedups and the
tables, with no GPU code, so that :mod:`cudareduce.plot` and
:mod:`cudareduce.reference` read results without the bench's timers.

A document is ``{"device": {...}, "cudareduce_version": str, "results":
[...]}``, one result per (method, dtype, n, threads): see
:func:`validate_document` for every key and :func:`make_result` for how
``gbps`` follows from ``median_us``.  :mod:`cudareduce.bench` measures
documents and re-exports these names.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import cudareduce

__all__ = [
    "DEVICE_KEYS", "DOCUMENT_KEYS", "DTYPES", "PEERS", "REFERENCE_METHOD",
    "RESULT_KEYS", "TABLE_HEADERS", "describe_sizes", "device_line",
    "format_group", "format_n", "format_table", "group_cells",
    "group_results", "group_title", "is_int", "is_peer", "is_reference",
    "ladder_methods", "make_document", "make_result", "order_results",
    "render", "short_n", "speedups", "validate_document", "write_json",
]

DTYPES = ("float32", "float64", "int32", "int64")
PEERS = ("torch.sum", "cupy.sum")
#: Our method that runs ``cub::DeviceReduce``: a reference, like the peers.
REFERENCE_METHOD = "cub"

#: Keys of the JSON document, exactly (see the module docstring).
DOCUMENT_KEYS = ("device", "cudareduce_version", "results")
DEVICE_KEYS = ("name", "sm_count", "l2_bytes", "copy_gbps")
RESULT_KEYS = ("method", "dtype", "n", "threads", "median_us", "gbps", "reps",
               "correct")

def format_n(n: int) -> str:
    """``4,194,304 (2^22)`` for powers of two, else ``1,000``."""
    if n > 0 and n & (n - 1) == 0:
        return f"{n:,} (2^{n.bit_length() - 1})"
    return f"{n:,}"


# ---------------------------------------------------------------------------
# Documents


def make_result(method: str, dtype: str, n: int, threads: int,
                median_us: float | None, reps: int, correct: bool) -> dict:
    """One entry of ``results``: `gbps` follows from `median_us` as bytes read
    (``n * itemsize``) per second, in GB/s.  A wrong result carries no time."""
    if not correct or median_us is None:
        median_us, gbps, reps = None, None, 0
    else:
        nbytes = n * np.dtype(dtype).itemsize
        gbps = nbytes / (median_us * 1e3)
    return {"method": method, "dtype": str(dtype), "n": int(n),
            "threads": int(threads),
            "median_us": None if median_us is None else float(median_us),
            "gbps": None if gbps is None else float(gbps),
            "reps": int(reps), "correct": bool(correct)}


def make_document(device: Mapping[str, Any], copy_gbps: float,
                  results: Sequence[Mapping[str, Any]],
                  version: str | None = None) -> dict:
    """The JSON document from ``device_info()``'s dict (extra keys ignored),
    the copy bandwidth, and result entries."""
    return {
        "device": {"name": str(device["name"]),
                   "sm_count": int(device["sm_count"]),
                   "l2_bytes": int(device["l2_bytes"]),
                   "copy_gbps": float(copy_gbps)},
        "cudareduce_version": cudareduce.__version__ if version is None
        else str(version),
        "results": [dict(r) for r in results],
    }


def is_int(x: Any) -> bool:
    """An int that is not a bool (JSON's integers)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x))


def _exact_keys(obj: Any, keys: Sequence[str], where: str) -> None:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where}: expected an object, got "
                         f"{type(obj).__name__}")
    missing = [k for k in keys if k not in obj]
    extra = [k for k in obj if k not in keys]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    if extra:
        raise ValueError(f"{where}: unexpected keys {extra}")


def validate_document(doc: Any) -> None:
    """Check that `doc` has exactly the shape of the bench's JSON document.

    Raises
    ------
    ValueError
        Naming the first violation by its path, e.g.
        ``results[3].median_us: ...``.
    """
    _exact_keys(doc, DOCUMENT_KEYS, "document")
    device = doc["device"]
    _exact_keys(device, DEVICE_KEYS, "device")
    if not isinstance(device["name"], str) or not device["name"]:
        raise ValueError("device.name: expected a non-empty string")
    if not is_int(device["sm_count"]) or device["sm_count"] < 1:
        raise ValueError("device.sm_count: expected an integer >= 1")
    if not is_int(device["l2_bytes"]) or device["l2_bytes"] < 0:
        raise ValueError("device.l2_bytes: expected an integer >= 0")
    if not _is_number(device["copy_gbps"]) or device["copy_gbps"] <= 0:
        raise ValueError("device.copy_gbps: expected a number > 0")
    if not isinstance(doc["cudareduce_version"], str) \
            or not doc["cudareduce_version"]:
        raise ValueError("cudareduce_version: expected a non-empty string")
    results = doc["results"]
    if not isinstance(results, list):
        raise ValueError("results: expected a list")
    seen = set()
    for i, r in enumerate(results):
        where = f"results[{i}]"
        _exact_keys(r, RESULT_KEYS, where)
        if not isinstance(r["method"], str) or not r["method"]:
            raise ValueError(f"{where}.method: expected a non-empty string")
        if r["dtype"] not in DTYPES:
            raise ValueError(f"{where}.dtype: expected one of {DTYPES}, got "
                             f"{r['dtype']!r}")
        if not is_int(r["n"]) or r["n"] < 1:
            raise ValueError(f"{where}.n: expected an integer >= 1")
        if not is_int(r["threads"]) or r["threads"] < 1:
            raise ValueError(f"{where}.threads: expected an integer >= 1")
        if not is_int(r["reps"]) or r["reps"] < 0:
            raise ValueError(f"{where}.reps: expected an integer >= 0")
        if not isinstance(r["correct"], bool):
            raise ValueError(f"{where}.correct: expected true or false")
        for key in ("median_us", "gbps"):
            value = r[key]
            if r["correct"]:
                if not _is_number(value) or value <= 0:
                    raise ValueError(f"{where}.{key}: a correct result needs "
                                     f"a number > 0, got {value!r}")
            elif value is not None:
                raise ValueError(f"{where}.{key}: a wrong result is not "
                                 f"timed and must be null, got {value!r}")
        if r["correct"] and r["reps"] < 1:
            raise ValueError(f"{where}.reps: a correct result needs reps >= 1")
        key = (r["method"], r["dtype"], r["n"], r["threads"])
        if key in seen:
            raise ValueError(f"{where}: duplicate entry for {key}")
        seen.add(key)


def write_json(document: Mapping[str, Any], path: str | os.PathLike) -> None:
    """Validate `document` and write it to `path` as indented JSON."""
    validate_document(document)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2, allow_nan=False)
        f.write("\n")


# ---------------------------------------------------------------------------
# Speedups and the table


def is_peer(method: str) -> bool:
    """Whether `method` is a peer library's sum rather than ours."""
    return method in PEERS


def is_reference(method: str) -> bool:
    """Whether `method` is a reference to compare with (``cub``, or a peer)
    rather than a step: references get no step speedup."""
    return method == REFERENCE_METHOD or is_peer(method)


def ladder_methods() -> list[str]:
    """The steps, in order: the seven of the ladder, then ``fast``."""
    return [m for m in cudareduce.methods() if m != REFERENCE_METHOD]


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
    """Results by (dtype, n, threads), groups in order of first appearance,
    each ordered by :func:`order_results`."""
    groups: dict[tuple[str, int, int], list[Mapping]] = {}
    for r in results:
        groups.setdefault((r["dtype"], r["n"], r["threads"]), []).append(r)
    return {k: order_results(v) for k, v in groups.items()}


def speedups(rows: Sequence[Mapping[str, Any]]
             ) -> list[tuple[float | None, float | None]]:
    """(step, cumulative) speedup of each row of one group, in row order.

    Rows are in table order (see :func:`order_results`).  Among the step
    rows that are correct and timed, step = previous one's ``median_us`` /
    this one's (None for the first), cumulative = first one's / this one's.
    References (``cub``, peers) get step None and a cumulative speedup over
    the same first step row.  Wrong rows get (None, None); so does everything
    when no step row is timed.
    """
    first: float | None = None
    previous: float | None = None
    out: list[tuple[float | None, float | None]] = []
    for r in rows:
        t = r.get("median_us")
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


def _fmt_time(us: float) -> str:
    return f"{us:,.1f}" if us < 1000 else f"{us:,.0f}"


def _fmt_speedup(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}×"


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


TABLE_HEADERS = ("method", "time (µs)", "GB/s", "% of copy", "step speedup",
                 "cumulative speedup")


def group_cells(rows: Sequence[Mapping[str, Any]], copy_gbps: float
                 ) -> list[list[str]]:
    """The table cells of one group (the columns of :data:`TABLE_HEADERS`),
    shared by the text table and :meth:`Results._repr_html_`."""
    body = []
    for r, (step, cumulative) in zip(rows, speedups(rows)):
        if not r["correct"]:
            body.append([r["method"], "WRONG", "-", "-", "-", "-"])
            continue
        gbps = r["gbps"]
        body.append([
            r["method"], _fmt_time(r["median_us"]), f"{gbps:,.1f}",
            f"{100.0 * gbps / copy_gbps:.1f}%",
            _reference_cell(r["method"]) if is_reference(r["method"])
            else _fmt_speedup(step),
            _fmt_speedup(cumulative)])
    return body


def _reference_cell(method: str) -> str:
    """The step-speedup cell of a reference row."""
    return "peer" if is_peer(method) else "reference"


def format_group(rows: Sequence[Mapping[str, Any]], copy_gbps: float) -> str:
    """The table of one (dtype, n, threads) group, rows in table order."""
    return "\n".join(render(TABLE_HEADERS, group_cells(rows, copy_gbps)))


def device_line(document: Mapping[str, Any]) -> str:
    """The report's first line: version, GPU, SMs, L2, copy bandwidth."""
    dev = document["device"]
    return (f"cudareduce {document['cudareduce_version']} on {dev['name']} "
            f"({dev['sm_count']} SMs, L2 {dev['l2_bytes'] / 2**20:g} MiB); "
            f"device-to-device copy {dev['copy_gbps']:,.1f} GB/s "
            f"(read+write)")


def group_title(dtype: str, n: int, threads: int) -> str:
    """The title of one (dtype, n, threads) table."""
    return f"{dtype}, n = {format_n(n)}, {threads} threads per block"


def format_table(document: Mapping[str, Any]) -> str:
    """The report: a device line, then one table per (dtype, n, threads).

    Columns: method, time (µs), GB/s, % of copy, step speedup, cumulative
    speedup (see :func:`speedups`).  A wrong method shows ``WRONG`` and no
    figures; a peer shows ``peer`` as its step speedup, ``cub``
    ``reference``.
    """
    lines = [device_line(document)]
    copy_gbps = document["device"]["copy_gbps"]
    for (dtype, n, threads), rows in group_results(
            document["results"]).items():
        lines += ["", group_title(dtype, n, threads),
                  format_group(rows, copy_gbps)]
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
