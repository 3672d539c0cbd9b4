"""The bench's results model: its JSON document, the speedups and the
tables, with no GPU code, so that :mod:`cudareduce.plot` and
:mod:`cudareduce.reference` read results without the bench's timers.

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
:mod:`cudareduce.bench` measures documents and re-exports these names;
:class:`cudareduce.document.Results` is a document with these tables, and
the plots, as methods.
"""
from __future__ import annotations

import datetime
import json
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import cudareduce
from cudareduce import _cudareduce

__all__ = [
    "DEFAULT_OP", "DEVICE_KEYS", "DOCUMENT_KEYS", "DTYPES", "FLOOR_KEYS",
    "OPS", "PEER_FUNCTIONS", "PROBE_KEYS", "REFERENCE_METHOD", "RESULT_KEYS",
    "SCHEMA", "TABLE_HEADERS", "TIME_KEYS", "TIMING_KEYS", "describe_device",
    "describe_sizes", "device_line", "dtype_kind", "format_bytes",
    "format_group", "format_n", "format_table", "gbps", "group_cells",
    "group_results", "group_title", "is_int", "is_peer", "is_reference",
    "ladder_methods", "make_document", "make_result", "now",
    "numpy_dtype", "op_of", "order_results", "pass_split", "peers_of",
    "read_floor_us", "read_percent", "reduction_label", "render",
    "report_head", "result_bytes", "result_gbps", "short_n", "speedups",
    "table_groups", "validate_document", "write_json",
]

#: The element types the bench times: every dtype the library reduces.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "float16", "float32", "float64", "complex64",
          "complex128", "bfloat16")
#: The dtypes of :data:`DTYPES` that NumPy has from ml_dtypes (JAX's).
_ML_DTYPES = ("bfloat16",)
#: The reductions the bench times: every operator of the extension, in its
#: order, as the library's functions (and NumPy's) name them.
OPS: tuple[str, ...] = _cudareduce.OPERATORS
#: The bench's default op, the reduction it was written for.
DEFAULT_OP = "sum"
#: Each peer library's function of each op, where it has one that can be
#: timed.  PyTorch has no nanprod, nanmin, nanmax, nanargmin or nanargmax,
#: and names its whole-tensor min and max amin, amax; its argmin and
#: argmax of a whole tensor give the flat index by NumPy's rules (the
#: first of equal extremes; a NaN before any number, the first NaN), but
#: take no bool (nor unsigned integers wider than uint8): the bench skips
#: a dtype a peer refuses.  CuPy has NumPy's every one, but its nanmin and
#: nanmax wait for the device inside the call (to warn of an all-NaN
#: input), so they cannot be queued behind the stream-holding kernel (the
#: first try gave up after 10 s on the H100, 2026-11-24), and so does its
#: nanmean (``if _any(cnt == 0)``, to warn of an empty slice); its
#: nanargmin and nanargmax do not wait (an all-NaN input gives an index
#: out of range rather than NumPy's ValueError), so they are timed.
#: PyTorch's nanmean does not wait (it does not warn).  complex64 and
#: complex128 need nothing here: a function that orders no complex numbers
#: (PyTorch's amin, amax, argmin, argmax) refuses them when the bench
#: tries it on one element, and is skipped like any peer refusing a dtype.
PEER_FUNCTIONS: dict[str, dict[str, str]] = {
    "torch": {"sum": "sum", "prod": "prod", "mean": "mean", "min": "amin",
              "max": "amax", "any": "any", "all": "all",
              "nansum": "nansum", "nanmean": "nanmean", "argmin": "argmin",
              "argmax": "argmax"},
    "cupy": {op: op for op in OPS
             if op not in ("nanmin", "nanmax", "nanmean")},
}
#: Our method that runs ``cub::DeviceReduce``: a reference, like the peers.
REFERENCE_METHOD = "cub"
#: Our single-launch method: its plan is one pass.
_FAST_METHOD = "fast"

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
#: The two ways the probes are timed, as :func:`read_floor_us` names them,
#: and the result timing each matches.
_PROBE_TIMINGS = {"cold": "cold_us", "batch": "batch_us"}
#: The per-pass times may exceed the cold time by this share plus
#: _PASS_SLACK_US: an event after each pass adds its own small cost.
_PASS_SLACK = 0.05
_PASS_SLACK_US = 1.0
_DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


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
        "cudareduce_version": cudareduce.__version__ if version is None
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


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of :data:`DTYPES`'s `name`: bfloat16 is ml_dtypes'
    (ImportError where ml_dtypes is not installed)."""
    if name in _ML_DTYPES:
        import ml_dtypes  # noqa: PLC0415  (optional dependency)
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def dtype_kind(name: str) -> str:
    """NumPy's kind of :data:`DTYPES`'s `name`: ``"b"``, ``"i"``, ``"u"``,
    ``"c"`` (complex64, complex128), or ``"f"`` for every real float
    (ml_dtypes' bfloat16, whose NumPy kind is ``"V"``, included)."""
    return "f" if name in _ML_DTYPES else np.dtype(name).kind



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


def _text(x: Any) -> bool:
    """A non-empty string without surrounding white space."""
    return isinstance(x, str) and bool(x) and x == x.strip()


def _matches(pattern: str) -> Callable[[Any], bool]:
    # ASCII: \d would take any script's digits.
    return lambda x: (isinstance(x, str)
                      and re.fullmatch(pattern, x, re.ASCII) is not None)


def _is_date(x: Any) -> bool:
    """ISO 8601 UTC to the second, as :func:`make_document` writes it, and
    a real date and time."""
    if not _matches(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")(x):
        return False
    try:
        datetime.datetime.strptime(x, _DATE_FORMAT)
    except ValueError:
        return False
    return True


#: (check, what it expects) of each key of each part of the document.
_Rules = dict[str, tuple[Callable[[Any], bool], str]]
_POSITIVE = (_positive, "a finite number > 0")
_TIME = (lambda x: x is None or _positive(x), "null or a finite number > 0")
_DEVICE_RULES: _Rules = {
    "name": (_text, "a non-empty string"),
    "compute_capability": (_int_from(10),
                           "an integer >= 10 (10 * major + minor)"),
    "sm_count": (_int_from(1), "an integer >= 1"),
    "l2_bytes": (_int_from(0), "an integer >= 0"),
    "total_bytes": (_int_from(1), "an integer >= 1"),
    "sm_clock_mhz": (_int_from(1), "an integer >= 1"),
    "memory_clock_mhz": (_int_from(1), "an integer >= 1"),
    "memory_bus_bits": (_int_from(1), "an integer >= 1"),
    "driver": (lambda x: x is None or _text(x),
               "null or a non-empty string"),
    "driver_cuda": (_matches(r"\d+\.\d+"), 'a version "major.minor"'),
    "cuda_runtime": (_matches(r"\d+\.\d+"), 'a version "major.minor"'),
    "cccl": (_matches(r"\d+\.\d+\.\d+"), 'a version "major.minor.patch"'),
}
_TIMING_RULES: _Rules = {
    "method": (_text, "a non-empty string"),
    "default_n": (_int_from(1), "an integer >= 1"),
    "default_n_rule": (_text, "a non-empty string"),
}
_FLOOR_RULES: _Rules = {
    "empty_cold_us": _POSITIVE, "empty_batch_us": _POSITIVE,
    "read_bytes": (_int_from(1), "an integer >= 1"),
    "read_cold_gbps": _POSITIVE, "read_batch_gbps": _POSITIVE,
}
_PROBE_RULES: _Rules = {
    "bytes": (_int_from(1), "an integer >= 1"),
    "read_cold_us": _POSITIVE, "read_batch_us": _POSITIVE,
}
_RESULT_RULES: _Rules = {
    "method": (_text, "a non-empty string"),
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


def _check_part(obj: Any, rules: _Rules, where: str,
                optional: Sequence[str] = ()) -> None:
    """Exactly the keys of `rules` (less any of `optional`), each value
    there passing its check."""
    _exact_keys(obj, list(rules), where, optional)
    for key, (check, expected) in rules.items():
        if key in obj and not check(obj[key]):
            raise ValueError(f"{where}.{key}: expected {expected}, got "
                             f"{obj[key]!r}")


def _list_at(doc: Mapping[str, Any], key: str) -> list:
    if not isinstance(doc[key], list):
        raise ValueError(f"{key}: expected a list, got "
                         f"{type(doc[key]).__name__}")
    return doc[key]


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
    if method == _FAST_METHOD and len(passes) != 1:
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
    if not _text(doc["cudareduce_version"]):
        raise ValueError("cudareduce_version: expected a non-empty string")
    if not _is_date(doc["date"]):
        raise ValueError(f"date: expected ISO 8601 UTC like "
                         f"\"2026-11-24T12:34:56Z\", got {doc['date']!r}")
    _check_part(doc["device"], _DEVICE_RULES, "device")
    _check_part(doc["timing"], _TIMING_RULES, "timing")
    _check_part(doc["floor"], _FLOOR_RULES, "floor")
    probed = set()
    previous = 0
    for i, p in enumerate(_list_at(doc, "probes")):
        _check_part(p, _PROBE_RULES, f"probes[{i}]")
        if p["bytes"] <= previous:
            raise ValueError(f"probes[{i}].bytes: probes are sorted by "
                             f"bytes, each size once: {p['bytes']} after "
                             f"{previous}")
        previous = p["bytes"]
        probed.add(p["bytes"])
    seen = set()
    for i, r in enumerate(_list_at(doc, "results")):
        where = f"results[{i}]"
        _check_part(r, _RESULT_RULES, where, _OPTIONAL_RESULT_KEYS)
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


# ---------------------------------------------------------------------------
# Figures derived from a result


def result_bytes(r: Mapping[str, Any]) -> int:
    """The bytes a result's method reads: ``n * itemsize`` of its input,
    whatever the op gives (an arg op's int64 index, a mean's float)."""
    return r["n"] * numpy_dtype(r["dtype"]).itemsize


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


def op_of(record: Mapping[str, Any]) -> str:
    """The op of a result (or of a ``--counters`` document): its ``op``,
    or ``"sum"`` where it has none (written before the bench timed other
    reductions)."""
    return record.get("op", DEFAULT_OP)


def peers_of(op: str = DEFAULT_OP) -> tuple[str, ...]:
    """The peers of `op`, as results name them: each peer library's
    function of it (:data:`PEER_FUNCTIONS`), ``"torch.sum"``,
    ``"cupy.sum"`` for sum, ``"torch.amin"``, ``"cupy.min"`` for min,
    ``"cupy.nanprod"`` alone for nanprod."""
    return tuple(f"{library}.{functions[op]}"
                 for library, functions in PEER_FUNCTIONS.items()
                 if op in functions)


_ALL_PEERS = frozenset(peer for op in OPS for peer in peers_of(op))


def is_peer(method: str) -> bool:
    """Whether `method` is a peer library's reduction (of any op) rather
    than ours."""
    return method in _ALL_PEERS


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
    :class:`~cudareduce.document.Results`; `document` gives the read
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
