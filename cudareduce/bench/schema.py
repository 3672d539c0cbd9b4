"""The bench's JSON document: its keys, its rules, their check and the
file, with no GPU code and no compiled extension, so that
:mod:`~cudareduce.bench.figures`, :mod:`~cudareduce.bench.plot` and
:mod:`~cudareduce.bench.reference` read results without the bench's
timers.

A document (schema 2) is::

    {"schema": 2,
     "cudareduce_version": str,
     "date": str,              # ISO 8601 UTC, "2026-11-24T12:34:56Z"
     "device": {"name": str, "compute_capability": int, "sm_count": int,
                "l2_bytes": int, "total_bytes": int,
                "sm_clock_mhz": int, "memory_clock_mhz": int,   # peak
                "memory_bus_bits": int,
                "driver": str | null,   # nvidia-smi's "580.159.04"
                "driver_cuda": str, "cuda_runtime": str,   # "13.0"
                "cccl": str},           # "3.0.1"
     "timing": {"method": str, "default_n": int, "default_n_rule": str},
     "floor": {"empty_cold_us": float, "empty_batch_us": float,
               "read_bytes": int, "read_cold_gbps": float,
               "read_batch_gbps": float},
     "probes": [{"bytes": int, "read_cold_us": float,
                 "read_batch_us": float}, ...],
     "results": [{"method": str, "op": str, "dtype": str, "n": int,
                  "threads": int, "cold_us": float | null,
                  "batch_us": float | null, "call_us": float | null,
                  "pass_us": [float, ...], "reps": int, "correct": bool},
                 ...]}

one result per (method, op, dtype, n, threads), timed three ways: ``cold_us``
(L2 flushed before each sample, the launch latency hidden behind a kernel
that holds the stream: the figure the speedups come from), ``batch_us``
(back to back, per call) and ``call_us`` (the Python call, result on the
host; null where it could not be measured).  ``op`` is the reduction
timed, one of :data:`OPS` (the extension's operators, by NumPy's names:
``"sum"``, ..., ``"argmin"``, ...); a result without one, written before
the bench timed other reductions, is a sum (:func:`op_of`).  A peer's
method is its library's function of the op (:func:`peers_of`:
``"torch.sum"``, ``"cupy.min"``, ...).  ``pass_us`` holds the cold
time of each pass of a multi-pass method (pass 0 reads the input).  The
probes are a read-only streaming kernel timed the same two GPU ways at each
result's byte count; the floor holds an empty kernel and the read probe at a
large size.  :func:`validate_document` checks every key and rule.
The names it checks against (dtypes, ops, methods, peers) are
:mod:`~cudareduce.bench.names`'; the figures derived from a result and the
tables are :mod:`~cudareduce.bench.figures`'; :mod:`cudareduce.bench`
measures documents, and :class:`cudareduce.bench.results.Results` is a
document with the tables and the plots as methods.
"""
from __future__ import annotations

import datetime
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .names import (DEFAULT_OP, DTYPES, FAST_METHOD, OPS,
                    is_peer, is_reference, ladder_methods, numpy_dtype,
                    op_of, peers_of)

__all__ = [
    "COUNT", "DEVICE_KEYS", "DOCUMENT_KEYS", "FLOOR_KEYS",
    "OPTIONAL_POSITIVE", "POSITIVE", "PROBE_KEYS", "RESULT_KEYS", "SCHEMA",
    "TIME_KEYS", "TIMING_KEYS", "VERDICT_FIGURES", "Rules",
    "check_device", "check_kind", "check_part", "check_provenance",
    "check_results", "check_verdict", "checked_probes", "describe_device",
    "is_date", "is_int", "is_kind", "is_text", "listed",
    "make_document", "make_result", "now", "result_bytes",
    "validate_document", "write_json",
]

#: The version of the document's shape that this module reads and writes.
SCHEMA = 2
#: Keys of the JSON document and of its parts, exactly (see the module
#: docstring).
DOCUMENT_KEYS = ("schema", "cudareduce_version", "date", "device", "timing",
                 "floor", "probes", "results")
DEVICE_KEYS = ("name", "compute_capability", "sm_count", "l2_bytes",
               "total_bytes", "sm_clock_mhz", "memory_clock_mhz",
               "memory_bus_bits", "driver", "driver_cuda", "cuda_runtime",
               "cccl")
TIMING_KEYS = ("method", "default_n", "default_n_rule")
FLOOR_KEYS = ("empty_cold_us", "empty_batch_us", "read_bytes",
              "read_cold_gbps", "read_batch_gbps")
PROBE_KEYS = ("bytes", "read_cold_us", "read_batch_us")
RESULT_KEYS = ("method", "op", "dtype", "n", "threads", "cold_us",
               "batch_us", "call_us", "pass_us", "reps", "correct")
#: The result keys a document may leave out: a document written before the
#: bench timed other reductions than sums names no op (:func:`op_of`).
_OPTIONAL_RESULT_KEYS = ("op",)
#: A result's three timings, each µs or null.
TIME_KEYS = ("cold_us", "batch_us", "call_us")
#: The per-pass times may exceed the cold time by this share plus
#: _PASS_SLACK_US: an event after each pass adds its own small cost.
_PASS_SLACK = 0.05
_PASS_SLACK_US = 1.0
_DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


# ---------------------------------------------------------------------------
# Documents


def _float_or_none(x: float | None) -> float | None:
    return None if x is None else float(x)


def make_result(method: str, dtype: str, n: int, threads: int, *,
                cold_us: float | None, batch_us: float | None,
                call_us: float | None, pass_us: Sequence[float], reps: int,
                correct: bool, op: str = DEFAULT_OP) -> dict:
    """One entry of ``results``: `method` reducing `n` elements of `dtype`
    with `op` (one of :data:`OPS`).

    A wrong result carries no figures: its timings are None, `pass_us` is
    empty and `reps` 0, whatever was given.
    """
    if not correct:
        cold_us = batch_us = call_us = None
        pass_us, reps = [], 0
    return {"method": method, "op": str(op), "dtype": str(dtype),
            "n": int(n), "threads": int(threads),
            "cold_us": _float_or_none(cold_us),
            "batch_us": _float_or_none(batch_us),
            "call_us": _float_or_none(call_us),
            "pass_us": [float(t) for t in pass_us], "reps": int(reps),
            "correct": bool(correct)}


def _cuda_version(encoded: int) -> str:
    """CUDA's ``1000 * major + 10 * minor`` as ``"13.0"``."""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def _cccl_version(encoded: int) -> str:
    """``CCCL_VERSION`` (``1000000 * major + 1000 * minor + patch``) as
    ``"3.0.1"``."""
    return (f"{encoded // 1_000_000}.{encoded // 1000 % 1000}."
            f"{encoded % 1000}")


def _version() -> str:
    import cudareduce  # noqa: PLC0415 - the package above, loaded first
    return cudareduce.__version__


def now() -> str:
    """This moment in UTC, as documents date themselves
    (``"2026-11-24T12:34:56Z"``)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        _DATE_FORMAT)


def describe_device(device: Mapping[str, Any]) -> dict:
    """A document's ``device``: the extension's ``device_info()`` dict
    (clocks in kHz, CUDA and CCCL versions as integers; other keys
    ignored), with nvidia-smi's driver string under ``"driver"`` when
    known, in the units and strings of :data:`DEVICE_KEYS`."""
    driver = device.get("driver")
    return {
        "name": str(device["name"]),
        "compute_capability": int(device["compute_capability"]),
        "sm_count": int(device["sm_count"]),
        "l2_bytes": int(device["l2_bytes"]),
        "total_bytes": int(device["total_bytes"]),
        "sm_clock_mhz": round(device["sm_clock_khz"] / 1000),
        "memory_clock_mhz": round(device["memory_clock_khz"] / 1000),
        "memory_bus_bits": int(device["memory_bus_bits"]),
        "driver": None if driver is None else str(driver),
        "driver_cuda": _cuda_version(int(device["driver_version"])),
        "cuda_runtime": _cuda_version(int(device["runtime_version"])),
        "cccl": _cccl_version(int(device["cccl_version"])),
    }


def make_document(device: Mapping[str, Any], floor: Mapping[str, Any],
                  probes: Sequence[Mapping[str, Any]],
                  results: Sequence[Mapping[str, Any]], *,
                  timing: Mapping[str, Any], version: str | None = None,
                  date: str | None = None) -> dict:
    """The JSON document (see the module docstring).

    Parameters
    ----------
    device : mapping
        The extension's ``device_info()`` dict (clocks in kHz, CUDA and
        CCCL versions as integers), with nvidia-smi's driver string under
        ``"driver"`` when known; other keys are ignored.
    floor : mapping
        The keys of :data:`FLOOR_KEYS`.
    probes : sequence of mappings
        The read probe rows (:data:`PROBE_KEYS`), in any order: the
        document holds them sorted by bytes.
    results : sequence of mappings
        Entries made by :func:`make_result`.
    timing : mapping
        The keys of :data:`TIMING_KEYS`.
    version : str, optional
        Default: this cudareduce's version.
    date : str, optional
        ISO 8601 UTC (``"2026-11-24T12:34:56Z"``); default now.
    """
    return {
        "schema": SCHEMA,
        "cudareduce_version": _version() if version is None
        else str(version),
        "date": now() if date is None else str(date),
        "device": describe_device(device),
        "timing": {"method": str(timing["method"]),
                   "default_n": int(timing["default_n"]),
                   "default_n_rule": str(timing["default_n_rule"])},
        "floor": {k: int(floor[k]) if k == "read_bytes" else float(floor[k])
                  for k in FLOOR_KEYS},
        "probes": sorted(({"bytes": int(p["bytes"]),
                           "read_cold_us": float(p["read_cold_us"]),
                           "read_batch_us": float(p["read_batch_us"])}
                          for p in probes), key=lambda p: p["bytes"]),
        "results": [dict(r) for r in results],
    }


def is_int(x: Any) -> bool:
    """An int that is not a bool (JSON's integers)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x))


def _positive(x: Any) -> bool:
    return _is_number(x) and x > 0


def _int_from(low: int) -> Callable[[Any], bool]:
    return lambda x: is_int(x) and x >= low


def is_text(x: Any) -> bool:
    """A non-empty string without surrounding white space."""
    return isinstance(x, str) and bool(x) and x == x.strip()


def _matches(pattern: str) -> Callable[[Any], bool]:
    # ASCII: \d would take any script's digits.
    return lambda x: (isinstance(x, str)
                      and re.fullmatch(pattern, x, re.ASCII) is not None)


def is_date(x: Any) -> bool:
    """ISO 8601 UTC to the second, as :func:`make_document` writes it, and
    a real date and time."""
    if not _matches(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")(x):
        return False
    try:
        datetime.datetime.strptime(x, _DATE_FORMAT)
    except ValueError:
        return False
    return True


#: (check, what it expects) of each key of each part of a document (this
#: one's, and the ``--axis`` document's: :mod:`~cudareduce.bench.axis_schema`).
Rules = dict[str, tuple[Callable[[Any], bool], str]]
#: The rules the documents' parts share: a time or a rate, one that may be
#: null (untimed), a count.
POSITIVE = (_positive, "a finite number > 0")
OPTIONAL_POSITIVE = (lambda x: x is None or _positive(x),
                     "null or a finite number > 0")
COUNT = (_int_from(0), "an integer >= 0")
_POSITIVE, _TIME = POSITIVE, OPTIONAL_POSITIVE
_DEVICE_RULES: Rules = {
    "name": (is_text, "a non-empty string"),
    "compute_capability": (_int_from(10),
                           "an integer >= 10 (10 * major + minor)"),
    "sm_count": (_int_from(1), "an integer >= 1"),
    "l2_bytes": (_int_from(0), "an integer >= 0"),
    "total_bytes": (_int_from(1), "an integer >= 1"),
    "sm_clock_mhz": (_int_from(1), "an integer >= 1"),
    "memory_clock_mhz": (_int_from(1), "an integer >= 1"),
    "memory_bus_bits": (_int_from(1), "an integer >= 1"),
    "driver": (lambda x: x is None or is_text(x),
               "null or a non-empty string"),
    "driver_cuda": (_matches(r"\d+\.\d+"), 'a version "major.minor"'),
    "cuda_runtime": (_matches(r"\d+\.\d+"), 'a version "major.minor"'),
    "cccl": (_matches(r"\d+\.\d+\.\d+"), 'a version "major.minor.patch"'),
}
_TIMING_RULES: Rules = {
    "method": (is_text, "a non-empty string"),
    "default_n": (_int_from(1), "an integer >= 1"),
    "default_n_rule": (is_text, "a non-empty string"),
}
_FLOOR_RULES: Rules = {
    "empty_cold_us": _POSITIVE, "empty_batch_us": _POSITIVE,
    "read_bytes": (_int_from(1), "an integer >= 1"),
    "read_cold_gbps": _POSITIVE, "read_batch_gbps": _POSITIVE,
}
_PROBE_RULES: Rules = {
    "bytes": (_int_from(1), "an integer >= 1"),
    "read_cold_us": _POSITIVE, "read_batch_us": _POSITIVE,
}
_RESULT_RULES: Rules = {
    "method": (is_text, "a non-empty string"),
    "op": (lambda x: x in OPS, f"one of {OPS}"),
    "dtype": (lambda x: x in DTYPES, f"one of {DTYPES}"),
    "n": (_int_from(1), "an integer >= 1"),
    "threads": (_int_from(1), "an integer >= 1"),
    "cold_us": _TIME, "batch_us": _TIME, "call_us": _TIME,
    "pass_us": (lambda x: isinstance(x, list) and all(map(_positive, x)),
                "a list of finite numbers > 0"),
    "reps": (_int_from(0), "an integer >= 0"),
    "correct": (lambda x: isinstance(x, bool), "true or false"),
}


def _exact_keys(obj: Any, keys: Sequence[str], where: str,
                optional: Sequence[str] = ()) -> None:
    """`obj` is a mapping of exactly `keys`, less any of `optional`."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where}: expected an object, got "
                         f"{type(obj).__name__}")
    missing = [k for k in keys if k not in obj and k not in optional]
    extra = [k for k in obj if k not in keys]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    if extra:
        raise ValueError(f"{where}: unexpected keys {extra}")


def check_part(obj: Any, rules: Rules, where: str,
                optional: Sequence[str] = ()) -> None:
    """Exactly the keys of `rules` (less any of `optional`), each value
    there passing its check."""
    _exact_keys(obj, list(rules), where, optional)
    for key, (check, expected) in rules.items():
        if key in obj and not check(obj[key]):
            raise ValueError(f"{where}.{key}: expected {expected}, got "
                             f"{obj[key]!r}")


def check_device(device: Any, where: str = "device") -> None:
    """Raise ValueError, naming the first violation by its path, unless
    `device` is a document's ``device`` (:data:`DEVICE_KEYS`), as
    :func:`describe_device` writes it."""
    check_part(device, _DEVICE_RULES, where)


def check_provenance(doc: Mapping[str, Any]) -> None:
    """Checks what every bench document says of where it comes from: its
    ``cudareduce_version``, ``date`` and ``device``.

    Raises
    ------
    ValueError
        Naming the first violation by its path.
    """
    if not is_text(doc["cudareduce_version"]):
        raise ValueError("cudareduce_version: expected a non-empty string")
    if not is_date(doc["date"]):
        raise ValueError(f"date: expected ISO 8601 UTC like "
                         f"\"2026-11-24T12:34:56Z\", got {doc['date']!r}")
    check_device(doc["device"])


def listed(doc: Mapping[str, Any], key: str) -> list:
    """``doc[key]``, which must be a list.

    Raises
    ------
    ValueError
        It is not, saying what it is.
    """
    if not isinstance(doc[key], list):
        raise ValueError(f"{key}: expected a list, got "
                         f"{type(doc[key]).__name__}")
    return doc[key]


def is_kind(doc: Any, kind: str) -> bool:
    """Whether `doc` says it is a document of `kind` (``--axis``,
    ``--exact``)."""
    return isinstance(doc, Mapping) and doc.get("kind") == kind


def check_kind(doc: Any, keys: Sequence[str], kind: str,
               version: int) -> None:
    """The head of a document that names its kind (``--axis``,
    ``--exact``): exactly `keys`, its ``kind`` and ``schema`` (`version`),
    its provenance (:func:`check_provenance`) and its ``timing``.

    Raises
    ------
    ValueError
        Naming the first violation by its path.
    """
    check_part(doc, dict.fromkeys(keys, (lambda x: True, "anything")),
               "document")
    if doc["kind"] != kind:
        raise ValueError(f"kind: expected {kind!r}, got {doc['kind']!r}")
    if not is_int(doc["schema"]) or doc["schema"] != version:
        raise ValueError(f"schema: expected {version}, got "
                         f"{doc['schema']!r}")
    check_provenance(doc)
    check_part(doc["timing"], {"method": (is_text, "a non-empty string")},
               "timing")


#: The figures of a result timed from Python (``--axis``, ``--exact``),
#: null where it was not timed.
VERDICT_FIGURES = ("cold_us", "batch_us", "gbps", "pct_floor")


def check_verdict(r: Mapping[str, Any], where: str) -> None:
    """The rules that tie a result of the modes timed from Python
    (``--axis``, ``--exact``) to its verdict: an unavailable one is not
    run (``correct`` null), a WRONG or unavailable one has no
    VERDICT_FIGURES (null) and ``batch`` and ``reps`` 0, a correct one
    has them all, and ``batch`` and ``reps`` of at least 1.

    Raises
    ------
    ValueError
        Naming the first violation by its path.
    """
    if r["unavailable"] is not None or r["correct"] is not True:
        if r["unavailable"] is not None and r["correct"] is not None:
            raise ValueError(f"{where}.correct: an unavailable result is "
                             f"not run and must be null")
        if r["unavailable"] is None and r["correct"] is None:
            raise ValueError(f"{where}.correct: null only for an "
                             f"unavailable result")
        for key in VERDICT_FIGURES:
            if r[key] is not None:
                raise ValueError(f"{where}.{key}: an untimed or WRONG result "
                                 f"has no figures: must be null")
        if r["batch"] or r["reps"]:
            raise ValueError(f"{where}: an untimed or WRONG result has "
                             f"batch and reps 0")
        return
    for key in VERDICT_FIGURES:
        if r[key] is None:
            raise ValueError(f"{where}.{key}: a correct result needs a "
                             f"number > 0, got null")
    if r["batch"] < 1 or r["reps"] < 1:
        raise ValueError(f"{where}: a correct result has batch and reps "
                         f">= 1")


def check_results(doc: Mapping[str, Any],
                  check: Callable[[Mapping[str, Any], str], None],
                  key: Callable[[Mapping[str, Any]], tuple]) -> None:
    """Each of ``doc["results"]`` checked by ``check(result, where)``, and
    no two with the same `key`.

    Raises
    ------
    ValueError
        Naming the first violation by its path.
    """
    seen = set()
    for i, r in enumerate(listed(doc, "results")):
        where = f"results[{i}]"
        check(r, where)
        if key(r) in seen:
            raise ValueError(f"{where}: duplicate entry for {key(r)}")
        seen.add(key(r))


def checked_probes(doc: Mapping[str, Any], rules: Rules
                   ) -> dict[int, Mapping[str, Any]]:
    """``doc["probes"]`` by bytes, each checked by `rules` (a ``bytes``
    key among them), sorted by bytes, each size once.

    Raises
    ------
    ValueError
        Naming the first violation by its path.
    """
    probes: dict[int, Mapping[str, Any]] = {}
    previous = 0
    for i, p in enumerate(listed(doc, "probes")):
        where = f"probes[{i}]"
        check_part(p, rules, where)
        if p["bytes"] <= previous:
            raise ValueError(f"{where}.bytes: probes are sorted by bytes, "
                             f"each size once: {p['bytes']} after "
                             f"{previous}")
        previous = p["bytes"]
        probes[p["bytes"]] = p
    return probes


def _check_timed(r: Mapping[str, Any], where: str) -> None:
    """The rules that tie a result's figures to its verdict and method."""
    method = r["method"]
    if not r["correct"]:
        for key in TIME_KEYS:
            if r[key] is not None:
                raise ValueError(f"{where}.{key}: a wrong result is not "
                                 f"timed and must be null, got {r[key]!r}")
        if r["pass_us"]:
            raise ValueError(f"{where}.pass_us: a wrong result is not timed "
                             f"and must be [], got {r['pass_us']!r}")
        if r["reps"] != 0:
            raise ValueError(f"{where}.reps: a wrong result is not timed "
                             f"and must be 0, got {r['reps']!r}")
        return
    if r["reps"] < 1:
        raise ValueError(f"{where}.reps: a correct result needs reps >= 1")
    # The speedups come from the cold time; only a peer may lack the
    # back-to-back one (its loop runs in Python, not ours).
    needed = ("cold_us",) if is_peer(method) else ("cold_us", "batch_us")
    for key in needed:
        if r[key] is None:
            raise ValueError(f"{where}.{key}: a correct result of {method} "
                             f"needs a number > 0, got null")
    passes = r["pass_us"]
    if is_reference(method) and passes:
        raise ValueError(f"{where}.pass_us: {method} launches its own "
                         f"kernels and has no passes: must be [], got "
                         f"{passes!r}")
    if method == FAST_METHOD and len(passes) != 1:
        raise ValueError(f"{where}.pass_us: fast is one pass, got "
                         f"{len(passes)}")
    if method in ladder_methods() and not passes:
        raise ValueError(f"{where}.pass_us: a correct result of {method} "
                         f"needs its passes' times, got []")
    limit = r["cold_us"] * (1 + _PASS_SLACK) + _PASS_SLACK_US
    if sum(passes) > limit:
        raise ValueError(f"{where}.pass_us: the passes sum to "
                         f"{sum(passes):g} µs, more than the cold time "
                         f"{r['cold_us']:g} µs allows ({limit:g})")


def validate_document(doc: Any) -> None:
    """Check that `doc` has exactly the shape of the bench's JSON document,
    schema 2 (see the module docstring).

    Beyond each key's type: a result's ``op`` may be left out (a sum);
    numbers are finite and times > 0; a peer is one of its op's
    (:func:`peers_of`); a wrong result has all timings null, ``pass_us``
    empty and ``reps`` 0; a correct one has ``reps`` >= 1, a ``cold_us``,
    and a ``batch_us`` unless it is a peer's; ``pass_us`` is empty for
    ``cub`` and the peers, one pass for ``fast``, at least one for a ladder
    step, and sums to at most ``cold_us * 1.05 + 1``; no (method, op,
    dtype, n, threads) twice; probes sorted by bytes, each size once, with
    one at every result's ``n * itemsize``.

    Raises
    ------
    ValueError
        Naming the first violation by its path, e.g.
        ``results[3].cold_us: ...``.
    """
    if isinstance(doc, Mapping) and "schema" not in doc:
        # Say why before listing every missing key: the common case is a
        # file an older bench wrote.
        raise ValueError(f"schema: missing: a document of an older bench "
                         f"(schema 1) or not a bench document; this "
                         f"cudareduce reads schema {SCHEMA}")
    _exact_keys(doc, DOCUMENT_KEYS, "document")
    if not is_int(doc["schema"]) or doc["schema"] != SCHEMA:
        raise ValueError(f"schema: expected {SCHEMA}, got {doc['schema']!r} "
                         f"(a document of another bench version)")
    check_provenance(doc)
    check_part(doc["timing"], _TIMING_RULES, "timing")
    check_part(doc["floor"], _FLOOR_RULES, "floor")
    probed = set()
    previous = 0
    for i, p in enumerate(listed(doc, "probes")):
        check_part(p, _PROBE_RULES, f"probes[{i}]")
        if p["bytes"] <= previous:
            raise ValueError(f"probes[{i}].bytes: probes are sorted by "
                             f"bytes, each size once: {p['bytes']} after "
                             f"{previous}")
        previous = p["bytes"]
        probed.add(p["bytes"])
    seen = set()
    for i, r in enumerate(listed(doc, "results")):
        where = f"results[{i}]"
        check_part(r, _RESULT_RULES, where, _OPTIONAL_RESULT_KEYS)
        op = op_of(r)
        if is_peer(r["method"]) and r["method"] not in peers_of(op):
            raise ValueError(f"{where}.method: {r['method']} is not a peer "
                             f"of {op}, whose peers are {peers_of(op)}")
        _check_timed(r, where)
        nbytes = result_bytes(r)
        if nbytes not in probed:
            raise ValueError(f"{where}: no read probe at its {nbytes} bytes "
                             f"(n * itemsize): probes must cover every size")
        key = (r["method"], op, r["dtype"], r["n"], r["threads"])
        if key in seen:
            raise ValueError(f"{where}: duplicate entry for {key}")
        seen.add(key)


def write_json(document: Mapping[str, Any], path: str | os.PathLike) -> None:
    """Validate `document` and write it to `path` as indented JSON."""
    validate_document(document)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2, allow_nan=False)
        f.write("\n")


def result_bytes(r: Mapping[str, Any]) -> int:
    """The bytes a result's method reads: ``n * itemsize`` of its input,
    whatever the op gives (an arg op's int64 index, a mean's float)."""
    return r["n"] * numpy_dtype(r["dtype"]).itemsize
