"""The ``--axis`` document: its keys, the floor's arithmetic, its check,
and the figures its report, its plot and the project's targets read, with
no GPU code and no compiled extension.

A document (``"kind": "axis"``, schema 1) is::

    {"kind": "axis", "schema": 1,
     "cudareduce_version": str, "date": str,   # as a ladder document's
     "device": {...},                          # as a ladder document's
     "software": {"numpy": str, "cupy": str | null, "torch": str | null,
                  "cupy_accelerators": {"reduction": [str, ...],
                                        "routine": [str, ...]} | null},
     "timing": {"method": str},
     "floor": {"empty_cold_us": float, "empty_batch_us": float},
     "probes": [{"bytes": int,
                 "read_cold_us": float, "read_batch_us": float,
                 "copy_cold_us": float, "copy_batch_us": float,
                 "read_cold_gbps": float | null, ...}, ...],
     "results": [{"method": str, "op": str, "dtype": str,
                  "shape": [int, ...], "axis": int,
                  "read_bytes": int, "write_bytes": int,
                  "cold_us": float | null, "batch_us": float | null,
                  "batch": int, "reps": int, "gbps": float | null,
                  "floor_cold_us": float, "floor_batch_us": float,
                  "pct_floor": float | null,
                  "correct": bool | null, "unavailable": str | null},
                 ...]}

One result per (method, op, dtype, shape, axis).  ``read_bytes`` R is the
input's bytes, ``write_bytes`` W the result's (its elements times the
itemsize of NumPy's result dtype); ``gbps`` is (R + W) over the
back-to-back time; ``pct_floor`` is 100 x ``floor_batch_us`` /
``batch_us``.  A method that refused the reduction (``cub`` and the
ladder's steps refuse axes today; a peer that takes no such dtype) is
``unavailable``, with its error's message, and untimed (``correct``
null); a WRONG one (``correct`` false) keeps no figures either.

The floor of a result, timed each way (cold, back to back) from probes of
the same run at R bytes (:func:`floor_us`)::

    floor = empty + R / read_rate + W / write_rate

where ``empty`` is an empty kernel, ``read_rate`` the read probe's bytes
over its time less an empty kernel's, and ``write_rate`` comes from a
device-to-device copy of the same bytes: the copy reads and writes them,
so its time less an empty kernel's is B / read_rate + B / write_rate.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .names import (DTYPES, OPS, REFERENCE_METHOD, ladder_methods,
                    numpy_dtype, peers_of)
from .schema import (COUNT, OPTIONAL_POSITIVE, POSITIVE, Rules, check_kind,
                     check_part, check_results, check_verdict, checked_probes,
                     is_int, is_kind, is_text)

__all__ = [
    "AXIS_DOCUMENT_KEYS", "AXIS_FLOOR_KEYS", "AXIS_KIND", "AXIS_PROBE_KEYS",
    "AXIS_RESULT_KEYS", "AXIS_SCHEMA", "CUB_ON", "SOFTWARE_KEYS",
    "axis_peers", "best_peer", "case_groups", "case_label", "column_of",
    "floor_us", "is_axis_document", "is_ours", "make_axis_probe",
    "make_axis_result", "probe_floor_us", "read_gbps", "shape_label",
    "validate_axis_document", "write_gbps",
]

#: What tells an ``--axis`` document from the bench's others.
AXIS_KIND = "axis"
#: The version of its shape that this module reads and writes.
AXIS_SCHEMA = 1
#: Keys of the document and of its parts, exactly.
AXIS_DOCUMENT_KEYS = ("kind", "schema", "cudareduce_version", "date",
                      "device", "software", "timing", "floor", "probes",
                      "results")
SOFTWARE_KEYS = ("numpy", "cupy", "torch", "cupy_accelerators")
AXIS_FLOOR_KEYS = ("empty_cold_us", "empty_batch_us")
AXIS_PROBE_KEYS = ("bytes", "read_cold_us", "read_batch_us", "copy_cold_us",
                   "copy_batch_us", "read_cold_gbps", "read_batch_gbps",
                   "write_cold_gbps", "write_batch_gbps")
#: The rates of a probe, derived from its times.
_RATE_KEYS = ("read_cold_gbps", "read_batch_gbps", "write_cold_gbps",
              "write_batch_gbps")
AXIS_RESULT_KEYS = ("method", "op", "dtype", "shape", "axis", "read_bytes",
                    "write_bytes", "cold_us", "batch_us", "batch", "reps",
                    "gbps", "floor_cold_us", "floor_batch_us", "pct_floor",
                    "correct", "unavailable")
#: The suffix of a CuPy peer timed with CUB on (CuPy's reduction and
#: routine accelerators ``["cub"]``: its segmented reduce where the
#: reduced axes are contiguous): ``"cupy.sum[cub]"``.
CUB_ON = "[cub]"
#: Derived figures agree with their formula to this share (JSON keeps
#: floats exactly; the slack is for documents written by hand).
_SLACK = 1e-6
_WAYS = ("cold", "batch")


# ---------------------------------------------------------------------------
# The floor's arithmetic


def _transfer_us(probe_us: float, empty_us: float) -> float:
    """A probe's time less an empty kernel's: the time its bytes take."""
    return max(probe_us - empty_us, 0.0)


def read_gbps(nbytes: int, read_us: float, empty_us: float) -> float | None:
    """The read rate, GB/s: `nbytes` over the read probe's time less an
    empty kernel's; None where that is not positive."""
    us = _transfer_us(read_us, empty_us)
    return nbytes / (us * 1e3) if us > 0 else None


def write_gbps(nbytes: int, read_us: float, copy_us: float,
               empty_us: float) -> float | None:
    """The write rate, GB/s: a copy of `nbytes` reads and writes them, so
    its time less an empty kernel's, less the read probe's time of the
    same bytes (less an empty kernel's), is the write's; None where that
    is not positive."""
    us = _transfer_us(copy_us, empty_us) - _transfer_us(read_us, empty_us)
    return nbytes / (us * 1e3) if us > 0 else None


def floor_us(empty_us: float, read_us: float, copy_us: float,
             probe_bytes: int, read_bytes: int, write_bytes: int) -> float:
    """The floor of a reduction that reads `read_bytes` and writes
    `write_bytes`, in µs: ``empty + R / read_rate + W / write_rate``, the
    rates from the read probe (`read_us`) and the device-to-device copy
    (`copy_us`) over `probe_bytes`, each less an empty kernel (`empty_us`),
    all timed the same way (:func:`read_gbps`, :func:`write_gbps`; a rate
    that is not positive adds nothing)."""
    read = _transfer_us(read_us, empty_us)
    write = max(_transfer_us(copy_us, empty_us) - read, 0.0)
    return empty_us + (read * read_bytes + write * write_bytes) / probe_bytes


def make_axis_probe(nbytes: int, read_cold_us: float, read_batch_us: float,
                    copy_cold_us: float, copy_batch_us: float,
                    floor: Mapping[str, float]) -> dict:
    """A probe row (:data:`AXIS_PROBE_KEYS`): the read probe and the copy
    over `nbytes`, both ways, with the rates they give beside the empty
    kernel of `floor`."""
    probe = {"bytes": int(nbytes),
             "read_cold_us": float(read_cold_us),
             "read_batch_us": float(read_batch_us),
             "copy_cold_us": float(copy_cold_us),
             "copy_batch_us": float(copy_batch_us)}
    rates = {}
    for way in _WAYS:
        empty, read = floor[f"empty_{way}_us"], probe[f"read_{way}_us"]
        rates[f"read_{way}_gbps"] = read_gbps(nbytes, read, empty)
        rates[f"write_{way}_gbps"] = write_gbps(
            nbytes, read, probe[f"copy_{way}_us"], empty)
    return {**probe, **{key: rates[key] for key in _RATE_KEYS}}


def probe_floor_us(floor: Mapping[str, float], probe: Mapping[str, Any],
                   way: str, read_bytes: int, write_bytes: int) -> float:
    """:func:`floor_us` from a document's `floor` and a `probe` row
    (:func:`make_axis_probe`), timed `way` (``"cold"`` or ``"batch"``)."""
    return floor_us(floor[f"empty_{way}_us"], probe[f"read_{way}_us"],
                    probe[f"copy_{way}_us"], probe["bytes"], read_bytes,
                    write_bytes)


# ---------------------------------------------------------------------------
# Results


def axis_peers(op: str) -> tuple[str, ...]:
    """The peers of `op` along axes, as results name them: its peers
    (:func:`~cudareduce.bench.names.peers_of`), and each of CuPy's again
    with CUB on (:data:`CUB_ON`): ``("torch.sum", "cupy.sum",
    "cupy.sum[cub]")`` for sum."""
    peers = peers_of(op)
    return (*peers, *(p + CUB_ON for p in peers if p.startswith("cupy.")))


def is_ours(method: str) -> bool:
    """Whether `method` is one of our methods (a ladder step, ``fast``,
    ``cub``) rather than a peer's function."""
    return method in (*ladder_methods(), REFERENCE_METHOD)


def column_of(method: str) -> str:
    """The column of `method` in the report and the plot: ours by name, a
    peer by its library, whatever its function (``"torch"``, ``"cupy"``,
    ``"cupy[cub]"``), so that the argmax row shares the sums' columns."""
    if is_ours(method):
        return method
    library, _, function = method.partition(".")
    return library + (CUB_ON if function.endswith(CUB_ON) else "")


def make_axis_result(method: str, op: str, dtype: str,
                     shape: Sequence[int], axis: int, *, read_bytes: int,
                     write_bytes: int, floor_cold_us: float,
                     floor_batch_us: float, cold_us: float | None = None,
                     batch_us: float | None = None, batch: int = 0,
                     reps: int = 0, correct: bool | None = None,
                     unavailable: str | None = None) -> dict:
    """One entry of ``results`` (:data:`AXIS_RESULT_KEYS`), its ``gbps``
    and ``pct_floor`` derived from the back-to-back time.

    An unavailable result (its reason given) is untimed, its ``correct``
    null; a WRONG one keeps no figures either: their times are None and
    ``batch`` and ``reps`` 0, whatever was given.
    """
    timed = unavailable is None and correct is True
    if not timed:
        cold_us = batch_us = None
        batch = reps = 0
    if unavailable is not None:
        correct = None
    return {
        "method": str(method), "op": str(op), "dtype": str(dtype),
        "shape": [int(k) for k in shape], "axis": int(axis),
        "read_bytes": int(read_bytes), "write_bytes": int(write_bytes),
        "cold_us": None if cold_us is None else float(cold_us),
        "batch_us": None if batch_us is None else float(batch_us),
        "batch": int(batch), "reps": int(reps),
        "gbps": None if batch_us is None
        else (read_bytes + write_bytes) / (batch_us * 1e3),
        "floor_cold_us": float(floor_cold_us),
        "floor_batch_us": float(floor_batch_us),
        "pct_floor": None if batch_us is None
        else 100.0 * floor_batch_us / batch_us,
        "correct": correct,
        "unavailable": None if unavailable is None else str(unavailable),
    }


def _extent(k: int) -> str:
    """An extent as the table writes it: ``2^24`` from 1024 up for powers
    of two, else the number."""
    return f"2^{k.bit_length() - 1}" if k >= 1024 and k & (k - 1) == 0 \
        else str(k)


def shape_label(shape: Sequence[int], axis: int) -> str:
    """A shape and an axis in words: ``"(2^24, 4) axis 1"``."""
    extents = ", ".join(_extent(k) for k in shape)
    return f"({extents}{',' if len(shape) == 1 else ''}) axis {axis}"


def case_label(r: Mapping[str, Any]) -> str:
    """A result's case in words: ``"sum (2^24, 4) axis 1"``."""
    return f"{r['op']} {shape_label(r['shape'], r['axis'])}"


#: A case: (dtype, op, shape, axis).
Case = tuple[str, str, tuple[int, ...], int]


def case_groups(results: Sequence[Mapping[str, Any]]
                ) -> dict[Case, dict[str, Mapping[str, Any]]]:
    """The results by case, (dtype, op, shape, axis), each {method:
    result}, cases and methods in the document's order."""
    groups: dict[Case, dict[str, Mapping[str, Any]]] = {}
    for r in results:
        case = (r["dtype"], r["op"], tuple(r["shape"]), r["axis"])
        groups.setdefault(case, {})[r["method"]] = r
    return groups


def best_peer(group: Mapping[str, Mapping[str, Any]]
              ) -> Mapping[str, Any] | None:
    """The fastest correct peer of a case, back to back (both CuPy
    variants count as CuPy's), or None where no peer was timed."""
    timed = [r for method, r in group.items()
             if not is_ours(method) and r["batch_us"] is not None]
    return min(timed, key=lambda r: r["batch_us"], default=None)


# ---------------------------------------------------------------------------
# The check


def is_axis_document(doc: Any) -> bool:
    """Whether `doc` says it is an ``--axis`` document (its ``kind``)."""
    return is_kind(doc, AXIS_KIND)


def _names(x: Any) -> bool:
    return isinstance(x, list) and all(map(is_text, x))


_SOFTWARE_RULES: Rules = {
    "numpy": (is_text, "a non-empty string"),
    "cupy": (lambda x: x is None or is_text(x), "null or a non-empty string"),
    "torch": (lambda x: x is None or is_text(x), "null or a non-empty string"),
    "cupy_accelerators": (
        lambda x: x is None or (isinstance(x, Mapping)
                                and set(x) == {"reduction", "routine"}
                                and all(map(_names, x.values()))),
        'null or {"reduction": [str], "routine": [str]}'),
}
_FLOOR_RULES: Rules = {key: POSITIVE for key in AXIS_FLOOR_KEYS}
_PROBE_RULES: Rules = {
    "bytes": (lambda x: is_int(x) and x >= 1, "an integer >= 1"),
    "read_cold_us": POSITIVE, "read_batch_us": POSITIVE,
    "copy_cold_us": POSITIVE, "copy_batch_us": POSITIVE,
    # null where the probe's time is not above an empty kernel's
    "read_cold_gbps": OPTIONAL_POSITIVE, "read_batch_gbps": OPTIONAL_POSITIVE,
    "write_cold_gbps": OPTIONAL_POSITIVE,
    "write_batch_gbps": OPTIONAL_POSITIVE,
}
_RESULT_RULES: Rules = {
    "method": (is_text, "a non-empty string"),
    "op": (lambda x: x in OPS, f"one of {OPS}"),
    "dtype": (lambda x: x in DTYPES, f"one of {DTYPES}"),
    "shape": (lambda x: isinstance(x, list) and bool(x)
              and all(is_int(k) and k >= 1 for k in x),
              "a non-empty list of integers >= 1"),
    "axis": (lambda x: is_int(x) and x >= 0, "an integer >= 0"),
    "read_bytes": (lambda x: is_int(x) and x >= 1, "an integer >= 1"),
    "write_bytes": (lambda x: is_int(x) and x >= 1, "an integer >= 1"),
    "cold_us": OPTIONAL_POSITIVE, "batch_us": OPTIONAL_POSITIVE,
    "batch": COUNT, "reps": COUNT, "gbps": OPTIONAL_POSITIVE,
    "floor_cold_us": POSITIVE, "floor_batch_us": POSITIVE,
    "pct_floor": OPTIONAL_POSITIVE,
    "correct": (lambda x: x is None or isinstance(x, bool),
                "null, true or false"),
    "unavailable": (lambda x: x is None or is_text(x),
                    "null or a non-empty string"),
}


def _agrees(value: float, formula: float) -> bool:
    return math.isclose(value, formula, rel_tol=_SLACK)


def _check_probe(p: Mapping[str, Any], floor: Mapping[str, float],
                 where: str) -> None:
    """A probe's rates are those of its times (:func:`make_axis_probe`)."""
    made = make_axis_probe(p["bytes"], p["read_cold_us"], p["read_batch_us"],
                           p["copy_cold_us"], p["copy_batch_us"], floor)
    for key in _RATE_KEYS:
        if (p[key] is None) != (made[key] is None) or (
                p[key] is not None and not _agrees(p[key], made[key])):
            raise ValueError(f"{where}.{key}: {p[key]!r} is not the rate of "
                             f"the probe's times ({made[key]!r})")


def _check_figures(r: Mapping[str, Any], where: str) -> None:
    """The rules that tie a result's figures to its verdict."""
    check_verdict(r, where)
    if r["correct"] is not True or r["unavailable"] is not None:
        return
    gbps = (r["read_bytes"] + r["write_bytes"]) / (r["batch_us"] * 1e3)
    if not _agrees(r["gbps"], gbps):
        raise ValueError(f"{where}.gbps: {r['gbps']!r} is not (read_bytes "
                         f"+ write_bytes) / batch_us ({gbps!r})")
    pct = 100.0 * r["floor_batch_us"] / r["batch_us"]
    if not _agrees(r["pct_floor"], pct):
        raise ValueError(f"{where}.pct_floor: {r['pct_floor']!r} is not 100 "
                         f"x floor_batch_us / batch_us ({pct!r})")


def _check_result(r: Mapping[str, Any], floor: Mapping[str, float],
                  probes: Mapping[int, Mapping[str, Any]],
                  where: str) -> None:
    check_part(r, _RESULT_RULES, where)
    if not (is_ours(r["method"]) or r["method"] in axis_peers(r["op"])):
        raise ValueError(f"{where}.method: {r['method']!r} is neither ours "
                         f"nor a peer of {r['op']} ({axis_peers(r['op'])})")
    if r["axis"] >= len(r["shape"]):
        raise ValueError(f"{where}.axis: {r['axis']} is out of range for "
                         f"shape {r['shape']}")
    size = math.prod(r["shape"])
    if r["read_bytes"] != size * numpy_dtype(r["dtype"]).itemsize:
        raise ValueError(f"{where}.read_bytes: {r['read_bytes']} is not the "
                         f"input's bytes (shape x itemsize)")
    probe = probes.get(r["read_bytes"])
    if probe is None:
        raise ValueError(f"{where}: no probe at its {r['read_bytes']} bytes: "
                         f"probes must cover every input")
    for way in _WAYS:
        key = f"floor_{way}_us"
        made = probe_floor_us(floor, probe, way, r["read_bytes"],
                            r["write_bytes"])
        if not _agrees(r[key], made):
            raise ValueError(f"{where}.{key}: {r[key]!r} is not the floor "
                             f"of the probes ({made!r})")
    _check_figures(r, where)


def validate_axis_document(doc: Any) -> None:
    """Check that `doc` has exactly the shape of an ``--axis`` document
    (see the module docstring).

    Beyond each key's type: numbers finite and times > 0; a method ours or
    a peer of its op (:func:`axis_peers`); ``axis`` within the shape;
    ``read_bytes`` the input's; probes sorted by bytes, each size once,
    one at every input's bytes, their rates those of their times; each
    result's floors those of its probe (:func:`floor_us`); an unavailable
    result untimed with ``correct`` null, a WRONG one untimed, a correct
    one timed, its ``gbps`` and ``pct_floor`` those of its times; no
    (method, op, dtype, shape, axis) twice.

    Raises
    ------
    ValueError
        Naming the first violation by its path, e.g.
        ``results[3].pct_floor: ...``.
    """
    check_kind(doc, AXIS_DOCUMENT_KEYS, AXIS_KIND, AXIS_SCHEMA)
    check_part(doc["software"], _SOFTWARE_RULES, "software")
    check_part(doc["floor"], _FLOOR_RULES, "floor")
    probes = checked_probes(doc, _PROBE_RULES)
    for i, p in enumerate(probes.values()):
        _check_probe(p, doc["floor"], f"probes[{i}]")
    check_results(
        doc, lambda r, where: _check_result(r, doc["floor"], probes, where),
        lambda r: (r["method"], r["op"], r["dtype"], tuple(r["shape"]),
                   r["axis"]))
