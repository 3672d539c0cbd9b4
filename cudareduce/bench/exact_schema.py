"""The ``--exact`` document: its keys, its check, and the ratios its report
and the project's targets read, with no GPU code and no compiled
extension.

A document (``"kind": "exact"``, schema 1) is::

    {"kind": "exact", "schema": 1,
     "cudareduce_version": str, "date": str,   # as a ladder document's
     "device": {...},                          # as a ladder document's
     "software": {"numpy": str, "cupy": str, "torch": str | null,
                  "gpu_to_gpu_cccl": str | null},
     "timing": {"method": str},
     "floor": {"empty_cold_us": float, "empty_batch_us": float},
     "probes": [{"bytes": int, "read_cold_us": float,
                 "read_batch_us": float}, ...],
     "results": [{"method": str, "dtype": str, "data": str, "n": int,
                  "bytes": int,
                  "cold_us": float | null, "batch_us": float | null,
                  "batch": int, "reps": int, "gbps": float | null,
                  "floor_cold_us": float, "floor_batch_us": float,
                  "pct_floor": float | null,
                  "correct": bool | null, "unavailable": str | null},
                 ...]}

One result per (method, dtype, data, n), a whole-array sum of n elements
of a kind of data (:data:`EXACT_DATA_KINDS`, made by
:func:`cudareduce.bench.exact.exact_data`): ``method`` is one of
:data:`EXACT_METHODS`.  ``bytes`` is the input's;
``gbps`` is bytes over the back-to-back time; the floor of a result is the
read probe over its bytes, each way (the one element written adds
nothing); ``pct_floor`` is 100 x ``floor_batch_us`` / ``batch_us``.  ``exact``
is correct when its bits are the exact sum's, rounded once; the others
when they are within their rounding bound of it.  ``gpu_to_gpu_cccl`` is
the CCCL version of the harness that ran ``cub_gpu_to_gpu``
(benchmarks/cub_gpu_to_gpu.cu), null where none was given; that method is
then unavailable, saying so.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .names import DTYPES, numpy_dtype
from .schema import (COUNT, OPTIONAL_POSITIVE, POSITIVE, Rules, check_kind,
                     check_part, check_results, check_verdict, checked_probes,
                     is_int, is_kind, is_text)

__all__ = ["EXACT_DATA_KINDS", "EXACT_DOCUMENT_KEYS", "EXACT_KIND",
           "EXACT_METHODS",
           "EXACT_RESULT_KEYS", "EXACT_SCHEMA", "exact_groups",
           "is_exact_document", "make_exact_result", "speed_over",
           "validate_exact_document"]

#: What tells an ``--exact`` document from the bench's others.
EXACT_KIND = "exact"
#: The version of its shape that this module reads and writes.
EXACT_SCHEMA = 1
#: The contenders: the plain ``fast`` sum, ``exact=True`` (method
#: ``fast``), our ``cub`` method (CUB's DeviceReduce::Sum of the toolkit)
#: and CUB's GPU-to-GPU deterministic reduce (the harness).
EXACT_METHODS = ("fast", "exact", "cub", "cub_gpu_to_gpu")
#: The kinds of data (cudareduce.bench.exact.EXACT_DATA's keys, written
#: out so that documents are read without a build).
EXACT_DATA_KINDS = ("normal", "spread", "wide")
#: Keys of the document and of its parts, exactly.
EXACT_DOCUMENT_KEYS = ("kind", "schema", "cudareduce_version", "date",
                       "device", "software", "timing", "floor", "probes",
                       "results")
EXACT_RESULT_KEYS = ("method", "dtype", "data", "n", "bytes", "cold_us",
                     "batch_us", "batch", "reps", "gbps", "floor_cold_us",
                     "floor_batch_us", "pct_floor", "correct", "unavailable")
#: Relative slack of a derived figure against its formula.
_SLACK = 1e-6
_WAYS = ("cold", "batch")


def make_exact_result(method: str, dtype: str, data: str, n: int, *,
                      floor_cold_us: float, floor_batch_us: float,
                      cold_us: float | None = None,
                      batch_us: float | None = None, batch: int = 0,
                      reps: int = 0, correct: bool | None = None,
                      unavailable: str | None = None) -> dict:
    """One entry of ``results`` (:data:`EXACT_RESULT_KEYS`), its ``bytes``,
    ``gbps`` and ``pct_floor`` derived.

    An unavailable result (its reason given) is untimed, its ``correct``
    null; a WRONG one keeps no figures either: their times are None and
    ``batch`` and ``reps`` 0, whatever was given.
    """
    if unavailable is not None or correct is not True:
        cold_us = batch_us = None
        batch = reps = 0
    if unavailable is not None:
        correct = None
    nbytes = int(n) * numpy_dtype(dtype).itemsize
    return {
        "method": str(method), "dtype": str(dtype), "data": str(data),
        "n": int(n),
        "bytes": nbytes,
        "cold_us": None if cold_us is None else float(cold_us),
        "batch_us": None if batch_us is None else float(batch_us),
        "batch": int(batch), "reps": int(reps),
        "gbps": None if batch_us is None else nbytes / (batch_us * 1e3),
        "floor_cold_us": float(floor_cold_us),
        "floor_batch_us": float(floor_batch_us),
        "pct_floor": None if batch_us is None
        else 100.0 * floor_batch_us / batch_us,
        "correct": correct,
        "unavailable": None if unavailable is None else str(unavailable),
    }


def exact_groups(results: list[Mapping[str, Any]]
                 ) -> dict[tuple[str, str, int], dict[str, Mapping[str, Any]]]:
    """The results by (dtype, data, n), in the document's order, each a
    dict by method."""
    groups: dict[tuple[str, str, int], dict[str, Mapping[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["dtype"], r["data"], r["n"]), {})[
            r["method"]] = r
    return groups


def speed_over(group: Mapping[str, Mapping[str, Any]], method: str,
               other: str) -> float | None:
    """How many times faster `method` is than `other` back to back in
    `group` (`other`'s time over `method`'s); None where either is
    missing or untimed."""
    a, b = group.get(method), group.get(other)
    if a is None or b is None or a["batch_us"] is None \
            or b["batch_us"] is None:
        return None
    return b["batch_us"] / a["batch_us"]


def is_exact_document(doc: Any) -> bool:
    """Whether `doc` says it is an ``--exact`` document (its ``kind``)."""
    return is_kind(doc, EXACT_KIND)


def _text_or_null(x: Any) -> bool:
    return x is None or is_text(x)


_AT_LEAST_ONE = (lambda x: is_int(x) and x >= 1, "an integer >= 1")
_SOFTWARE_RULES: Rules = {
    "numpy": (is_text, "a non-empty string"),
    "cupy": (is_text, "a non-empty string"),
    "torch": (_text_or_null, "null or a non-empty string"),
    "gpu_to_gpu_cccl": (_text_or_null, "null or a non-empty string"),
}
_FLOOR_RULES: Rules = {"empty_cold_us": POSITIVE,
                       "empty_batch_us": POSITIVE}
_PROBE_RULES: Rules = {"bytes": _AT_LEAST_ONE, "read_cold_us": POSITIVE,
                       "read_batch_us": POSITIVE}
_RESULT_RULES: Rules = {
    "method": (lambda x: x in EXACT_METHODS, f"one of {EXACT_METHODS}"),
    "dtype": (lambda x: x in DTYPES, f"one of {DTYPES}"),
    "data": (lambda x: x in EXACT_DATA_KINDS, f"one of {EXACT_DATA_KINDS}"),
    "n": _AT_LEAST_ONE, "bytes": _AT_LEAST_ONE,
    "cold_us": OPTIONAL_POSITIVE, "batch_us": OPTIONAL_POSITIVE,
    "batch": COUNT, "reps": COUNT, "gbps": OPTIONAL_POSITIVE,
    "floor_cold_us": POSITIVE, "floor_batch_us": POSITIVE,
    "pct_floor": OPTIONAL_POSITIVE,
    "correct": (lambda x: x is None or isinstance(x, bool),
                "null, true or false"),
    "unavailable": (_text_or_null, "null or a non-empty string"),
}


def _agrees(value: float, formula: float) -> bool:
    return math.isclose(value, formula, rel_tol=_SLACK)


def _check_result(r: Mapping[str, Any],
                  probes: Mapping[int, Mapping[str, Any]],
                  where: str) -> None:
    """A result's keys, its derived figures and its verdict's rules."""
    check_part(r, _RESULT_RULES, where)
    made = make_exact_result(
        r["method"], r["dtype"], r["data"], r["n"],
        floor_cold_us=r["floor_cold_us"],
        floor_batch_us=r["floor_batch_us"], cold_us=r["cold_us"],
        batch_us=r["batch_us"], batch=r["batch"], reps=r["reps"],
        correct=r["correct"], unavailable=r["unavailable"])
    if r["bytes"] != made["bytes"]:
        raise ValueError(f"{where}.bytes: {r['bytes']} is not n x itemsize "
                         f"({made['bytes']})")
    probe = probes.get(r["bytes"])
    if probe is None:
        raise ValueError(f"{where}: no probe at its {r['bytes']} bytes: "
                         f"probes must cover every input")
    for way in _WAYS:
        key = f"floor_{way}_us"
        if not _agrees(r[key], probe[f"read_{way}_us"]):
            raise ValueError(f"{where}.{key}: {r[key]!r} is not the read "
                             f"probe's {probe[f'read_{way}_us']!r}")
    check_verdict(r, where)
    for key in ("gbps", "pct_floor"):
        if (r[key] is None) != (made[key] is None) or (
                r[key] is not None and not _agrees(r[key], made[key])):
            raise ValueError(f"{where}.{key}: {r[key]!r} is not that of "
                             f"its times ({made[key]!r})")


def validate_exact_document(doc: Any) -> None:
    """Check that `doc` has exactly the shape of an ``--exact`` document
    (see the module docstring).

    Beyond each key's type: numbers finite and times > 0; probes sorted
    by bytes, each size once, one at every input's bytes; each result's
    bytes its n's, its floors its probe's read times; an unavailable
    result untimed with ``correct`` null, a WRONG one untimed, a correct
    one timed, its ``gbps`` and ``pct_floor`` those of its times; no
    (method, dtype, data, n) twice.

    Raises
    ------
    ValueError
        Naming the first violation by its path, e.g.
        ``results[3].pct_floor: ...``.
    """
    check_kind(doc, EXACT_DOCUMENT_KEYS, EXACT_KIND, EXACT_SCHEMA)
    check_part(doc["software"], _SOFTWARE_RULES, "software")
    check_part(doc["floor"], _FLOOR_RULES, "floor")
    probes = checked_probes(doc, _PROBE_RULES)
    check_results(doc, lambda r, where: _check_result(r, probes, where),
                  lambda r: (r["method"], r["dtype"], r["data"], r["n"]))
