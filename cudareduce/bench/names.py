"""What the bench times, by name: its dtypes, its ops, our methods and the
peers' functions, and which of them are references.

No GPU code and no compiled extension: the document model
(:mod:`~cudareduce.bench.schema`, :mod:`~cudareduce.bench.figures`,
:mod:`~cudareduce.bench.results`, :mod:`~cudareduce.bench.plot`) reads
documents with these names alone.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_OP", "DTYPES", "FAST_METHOD", "LADDER", "OPS", "PEER_FUNCTIONS",
    "REFERENCE_METHOD", "dtype_kind", "is_peer", "is_reference",
    "ladder_methods", "numpy_dtype", "op_of", "peers_of",
]

#: The element types the bench times: every dtype the library reduces.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "float16", "float32", "float64", "complex64",
          "complex128", "bfloat16")
#: The dtypes of :data:`DTYPES` that NumPy has from ml_dtypes (JAX's).
_ML_DTYPES = ("bfloat16",)
#: The reductions the bench times: every operator of the extension, in its
#: order, as the library's functions (and NumPy's) name them.  Written out
#: here so that documents are read, checked and plotted without the
#: compiled extension; tests/bench/test_schema_offline.py checks it against
#: the extension's ``OPERATORS``.
OPS: tuple[str, ...] = (
    "sum", "prod", "mean", "min", "max", "any", "all", "nansum", "nanprod",
    "nanmin", "nanmax", "nanmean", "argmin", "argmax", "nanargmin",
    "nanargmax")
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
#: first try gave up after 10 s on the H100), and so does its
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
FAST_METHOD = "fast"
#: The ladder's steps, in order (step 1 first), as :func:`cudareduce.methods`
#: lists them: its first ``LADDER_STEPS``, then ``fast`` and ``cub``.
#: Written out for the same reason as :data:`OPS`, and checked the same way.
LADDER: tuple[str, ...] = (
    "interleaved_divergent", "interleaved_bank_conflict", "sequential",
    "first_add", "unroll_warp", "unroll_complete", "multi_element")


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
    return [*LADDER, FAST_METHOD]
