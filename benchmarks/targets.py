"""The project's acceptance targets, checked on a document of the bench.

On the GPU machine, from the repository root::

    python -m cudareduce.bench --json ladder.json
    python benchmarks/targets.py ladder.json
    python -m cudareduce.bench --counters --json counters.json
    python benchmarks/targets.py counters.json
    python -m cudareduce.bench --peers --json peers.json
    python benchmarks/targets.py peers.json
    python -m cudareduce.bench --host --json host.json
    python benchmarks/targets.py host.json
    python -m cudareduce.bench --axis --json axis.json
    python benchmarks/targets.py axis.json
    python -m cudareduce.bench --exact --gpu-to-gpu cub_gpu_to_gpu.so \
        --json exact.json
    python benchmarks/targets.py exact.json

prints each target with the figure it is checked on and whether it is met.
Exit status 0 when every target is met; 1 when one is missed or has no
figure (not measured, or WRONG: it cannot be said to be met); 2 when the
file cannot be read or is not a ladder, ``--counters``, ``--peers``,
``--host``, ``--axis`` or ``--exact`` document (their shapes:
:mod:`cudareduce.bench` and :func:`cudareduce.bench.counters.collect`).

The targets are the project's, not the library's: the bench reports what it
measured and the plain ratios; this script holds them to the goals.  GPU
figures are cold GPU times (the L2 cache flushed before each sample, the
launch latency hidden behind a kernel that holds the stream: see
:mod:`cudareduce.bench`).

The ladder (``--json``; at the run's default size where it was measured,
else at the document's largest n, for each dtype and
threads there):

- step 7 (``multi_element``) at least 6.0x as fast as step 1
  (``interleaved_divergent``), cold: the ladder's cumulative speedup.

``--counters`` (ncu's counters of one reduction; where the document lacks
a claim's methods, the claim has no figure):

- each claim of :data:`cudareduce.bench.counters.IDEAS` borne out, as
  :func:`cudareduce.bench.counters.check_ideas` judges it (bank conflicts,
  instructions, grid).

``--peers`` (GPU times back to back, as the floor's empty kernel is timed,
and wall times, of one run on one GPU), for each dtype of the comparison
(:func:`cudareduce.bench.peers.comparison_dtypes`:
:data:`~cudareduce.bench.peers.COMPARE_DTYPES` unless ``--dtype`` named
others):

- ``fast`` / ``cub`` speed: >= 1.50x at 2^20, >= 1.30x at 2^22, >= 1.05x
  at 2^24 and >= 1.00x at every larger size (:data:`FAST_OVER_CUB`), for
  the dtypes of ``COMPARE_DTYPES``; >= 1.00x at every size for the others
  (bfloat16 and complex: issue "dtypes and operators" asks that much);
- for the dtypes of ``COMPARE_DTYPES``, the floor's time (empty kernel +
  bytes / read ceiling) over ``fast``'s: >= 95% from 2^24 on
  (:data:`FLOOR_SHARE`, :data:`FLOOR_FROM`; below, the floor leaves out
  the DRAM latency and the combination across blocks);
- ``fast`` int32 / ``fast`` float32 GB/s, cold, at 2^28: >= 0.95x, and so
  for each other dtype of 4 bytes or more outside ``COMPARE_DTYPES``
  (complex; a comparison without float32 times its sum besides);
- ``float(cudareduce.sum(x))`` of 1024 float32 elements, from a CuPy array
  and from a PyTorch tensor: <= 0.50x the time of ``torch.sum(x).item()``,
  and <= 1.50x the launch-plus-poll floor measured in the same run.

``--peers --op OP`` of another op than sum (:func:`op_targets`):

- ``fast``'s GB/s, cold, at 2^28, for each dtype of 4 bytes or more: >=
  0.95x its own float32 sum's of the same run (:data:`OP_OVER_SUM`;
  ``--peers --op`` times that sum too), every op alike: GB/s count the
  input read, whatever the result (an arg op's int64 index);
- where CUB offers the op (:data:`CUB_OPS`: ``DeviceReduce``'s Min, Max,
  ArgMin and ArgMax, and its Reduce with a product), ``fast`` / ``cub``
  speed, back to back: >= 1.00x at every size.  (Our ``cub`` method keeps
  NumPy's NaN rules, which CUB's own Min, Max, ArgMin and ArgMax do not:
  it runs ``DeviceReduce::Reduce`` with an operator of its own, over
  (index, value) pairs for the arg ops.  The NaN-skipping ops are not
  CUB's and are held to their sum alone.)

The ladder's and the counters' targets are stated on sums: a ladder
document without sums, or a ``--counters`` document of another op, cannot
be checked (exit status 2, saying so); a ladder document's other ops are
passed over.

``--host`` (whole calls on the largest float32 array, 1 GiB by default):

- ``cudareduce.sum(a)`` >= 4x as fast as ``numpy.sum(a)`` and as
  ``torch.from_numpy(a).cuda().sum().item()``;
- its GB/s >= 0.70x the pinned host-to-device copy's;

and, where the document times along axes (issue 43; one written before
it did is held to the two above alone), for each of its dtypes, each axis
k of ``a`` as (n // 1024, 1024) and each of its sizes from 1 MiB
(:data:`HOST_AXIS_FROM`) that makes rows of 1024, and 1 GiB
(:data:`HOST_AXIS_BIG`) whether measured or not:

- ``cudareduce.sum(a, axis=k)`` at least as fast as ``numpy.sum(a,
  axis=k)`` (:data:`HOST_AXIS_SPEED`), and >= 4x as fast at 1 GiB
  (:data:`HOST_AXIS_BIG_SPEED`).

``--axis`` (issue 43: reductions along an axis, GPU times back to back,
one run; the floor is the document's, per case: empty kernel + bytes read
/ read rate + bytes written / write rate, timed in the same run):

- ``fast`` at >= 90% of its floor (floor / ``fast`` time >= 0.90x) for
  (2^24, 4) axis 1, (4, 2^24) axis 1, (2^12, 2^12) axes 1 and 0, (2^24, 4)
  axis 0 and (4, 2^24) axis 0, and >= 80% for (2^16, 2^10) and (2^10,
  2^16) axes 1 and 0 and the argmax of (32, 2^17) axis 1
  (:data:`AXIS_FLOOR_SHARES`), for every dtype of the document (a case it
  lacks has no figure);
- float32: on every case ``fast`` >= 1.00x the speed of the fastest peer
  there (``torch.<fn>(x, dim=)``, ``cupy.<fn>(x, axis=)``, the latter with
  CUB on too: both count as CuPy's; ``torch.argmax`` and ``cupy.argmax`` on
  the argmax case), and >= 1.50x each peer (``torch``, ``cupy``,
  ``cupy[cub]``, whatever its function) on that peer's worst case, where
  its share of the floor is least (a peer timed nowhere has no figure).

``--exact`` (issue 44: whole-array sums, GPU times back to back, one
run), for float32 and float64 (:data:`EXACT_DTYPES`; one the document
lacks has no figure), on its normal data (:data:`EXACT_TARGET_DATA`; the
issue states the speed on data of a wider range, which the document
times too, and does not target it):

- ``exact=True`` at >= 0.90x the plain ``fast`` sum's speed at every size
  of the document from 2^24 (:data:`EXACT_OVER_FAST`,
  :data:`EXACT_FAST_FROM`; no size there: no figure);
- ``exact=True`` >= 1.20x the speed of CUB's gpu_to_gpu deterministic
  reduce at every size from 2^20 (:data:`EXACT_OVER_GPU_TO_GPU`,
  :data:`EXACT_GPU_TO_GPU_FROM`; not run: no figure).
"""
from __future__ import annotations

import argparse
import json
import operator
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from cudareduce.bench.axis_schema import (best_peer, case_groups,
                                          case_label, column_of, is_ours,
                                          is_axis_document, shape_label,
                                          validate_axis_document)
from cudareduce.bench.counters import DOCUMENT_KEYS as COUNTERS_KEYS
from cudareduce.bench.exact_schema import (exact_groups, is_exact_document,
                                           speed_over,
                                           validate_exact_document)
from cudareduce.bench.counters import IDEAS, check_ideas
from cudareduce.bench.host import (HOST_AXES, NUMPY_AXIS_CALLS, NUMPY_CALL,
                                   TORCH_CALL, axis_speed, has_axis_calls,
                                   host_ratios, times_axes)
from cudareduce.bench.peers import (BASELINE_DTYPE, COMPARE_DTYPES,
                                    COMPARE_SIZES, LATENCY_N,
                                    LAUNCH_POLL_FLOOR, OURS_ON_CUPY,
                                    OURS_ON_TORCH, TORCH_ITEM,
                                    comparison_dtypes, comparison_op,
                                    comparison_ratios, gbps_of, ratio)
from cudareduce.bench.figures import render, short_n, table_groups
from cudareduce.bench.names import (DEFAULT_OP, REFERENCE_METHOD, numpy_dtype,
                                    op_of)
from cudareduce.bench.schema import is_int, validate_document

__all__ = ["AXIS_FLOOR_SHARES", "AXIS_OVER_PEERS", "AXIS_OVER_WORST",
           "AXIS_PEERS", "AXIS_PEER_DTYPE", "CUB_OPS", "EXACT_DTYPES",
           "EXACT_FAST_FROM", "EXACT_GPU_TO_GPU_FROM", "EXACT_OVER_FAST",
           "EXACT_OVER_GPU_TO_GPU", "EXACT_TARGET_DATA", "FAST_OVER_CUB",
           "FIRST_STEP", "FLOOR_FROM", "FLOOR_SHARE", "HOST_AXIS_BIG",
           "HOST_AXIS_BIG_SPEED", "HOST_AXIS_FROM", "HOST_AXIS_SPEED",
           "LADDER_SPEEDUP", "OP_OVER_SUM", "SEVENTH_STEP", "Claim",
           "Target", "axis_targets", "counters_targets", "exact_targets",
           "format_targets",
           "host_axis_targets", "host_targets", "ladder_targets", "main",
           "op_targets", "peers_targets", "targets"]

#: The ladder's first and seventh steps, and how many times faster the
#: seventh must be (cold, at the default size, else the largest n).
FIRST_STEP, SEVENTH_STEP = "interleaved_divergent", "multi_element"
LADDER_SPEEDUP = 6.0
#: The GPU timing the ladder's and the int32 target are stated on.
_COLD = "cold_us"
#: The GPU timing of the --peers fast-path targets: back to back, as the
#: floor's empty kernel (1.7 us on the H100, against 3.0 cold).
_BATCH = "batch_us"
#: ``fast`` / ``cub`` speed, by n; every larger n: 1.00.
FAST_OVER_CUB = {1 << 20: 1.5, 1 << 22: 1.3, 1 << 24: 1.05}
#: The floor's share of ``fast``'s time, at every n from FLOOR_FROM.
FLOOR_SHARE, FLOOR_FROM = 0.95, 1 << 24
#: Another op's ``fast`` GB/s over ``fast``'s float32 sum GB/s (cold, at the
#: largest size), for dtypes of at least _WIDE_ITEMSIZE bytes.
OP_OVER_SUM, _WIDE_ITEMSIZE = 0.95, 4
#: The ops besides sum that CUB offers (``cub::DeviceReduce``'s Min, Max,
#: ArgMin and ArgMax, its Reduce with a product): ``fast`` must match
#: ``cub`` there, as on sums.  Not nanmin, nanmax, nanargmin, nanargmax:
#: CUB offers a caller no NaN-skipping reduction to match (our ``cub`` of
#: them, as of every op, is its Reduce with our operator).
CUB_OPS = ("prod", "min", "max", "argmin", "argmax")

#: ``--host`` along axes (issue 43): ``numpy.sum(a, axis=k)``'s time over
#: ``cudareduce.sum(a, axis=k)``'s at every size of the document from
#: HOST_AXIS_FROM bytes, and at HOST_AXIS_BIG bytes (measured or not).
HOST_AXIS_FROM, HOST_AXIS_SPEED = 1 << 20, 1.0
HOST_AXIS_BIG, HOST_AXIS_BIG_SPEED = 1 << 30, 4.0

#: The ``--axis`` cases, (shape, axis), and the share of its floor
#: ``fast`` must reach on each, back to back (issue 43; the last is its
#: argmax case).
AXIS_FLOOR_SHARES = (
    ((1 << 24, 4), 1, 0.90), ((4, 1 << 24), 1, 0.90),
    ((1 << 12, 1 << 12), 1, 0.90), ((1 << 12, 1 << 12), 0, 0.90),
    ((1 << 24, 4), 0, 0.90), ((4, 1 << 24), 0, 0.90),
    ((1 << 16, 1 << 10), 1, 0.80), ((1 << 16, 1 << 10), 0, 0.80),
    ((1 << 10, 1 << 16), 1, 0.80), ((1 << 10, 1 << 16), 0, 0.80),
    ((32, 1 << 17), 1, 0.80))
#: The dtype the ``--axis`` peer targets are stated on, the peers (by
#: library: :func:`~cudareduce.bench.axis_schema.column_of`), and how much
#: faster ``fast`` must be than the fastest of them on every case and than
#: each on its worst case.
AXIS_PEER_DTYPE = "float32"
AXIS_PEERS = ("torch", "cupy", "cupy[cub]")
AXIS_OVER_PEERS, AXIS_OVER_WORST = 1.0, 1.5

#: ``--exact`` (issue 44): the dtypes held to it; ``exact=True``'s speed
#: over the plain ``fast`` sum's from EXACT_FAST_FROM elements, and over
#: CUB's gpu_to_gpu reduce's from EXACT_GPU_TO_GPU_FROM.
EXACT_DTYPES = ("float32", "float64")
EXACT_TARGET_DATA = "normal"
EXACT_OVER_FAST, EXACT_FAST_FROM = 0.90, 1 << 24
EXACT_OVER_GPU_TO_GPU, EXACT_GPU_TO_GPU_FROM = 1.20, 1 << 20

_HOLDS = {">=": operator.ge, "<=": operator.le}


class Target(NamedTuple):
    """One target: a ratio of the document and the bound it must keep."""

    #: What the ratio is, in words.
    what: str
    #: The ratio; None where a figure is missing or WRONG.
    value: float | None
    #: ``">="`` or ``"<="``.
    bound: str
    #: The bound's value.
    limit: float

    @property
    def met(self) -> bool | None:
        """Whether the ratio keeps the bound; None without a ratio."""
        if self.value is None:
            return None
        return _HOLDS[self.bound](self.value, self.limit)


class Claim(NamedTuple):
    """A claim on the hardware counters, in words with its figures, as
    :func:`cudareduce.bench.counters.check_ideas` states it."""

    #: The claim.
    what: str
    #: Whether the counters bear it out; None where the document lacks one
    #: of its methods.
    met: bool | None


#: Each row of the table: its value and bound (a claim states both in its
#: words) and whether it is met.
Row = Target | Claim
_MET = {True: "yes", False: "NO", None: "no figure"}


def _sums_only(op: str, what: str) -> None:
    """Raise ValueError, saying why, unless `op` is sum: `what` is stated
    on sums."""
    if op != DEFAULT_OP:
        raise ValueError(f"{what} stated on sums; this document is of "
                         f"{op} (another op's targets are on python -m "
                         f"cudareduce.bench --peers --op {op} --json)")


def ladder_targets(document: Mapping[str, Any]) -> list[Target]:
    """The target of a ladder document: the cumulative speedup from
    :data:`FIRST_STEP` to :data:`SEVENTH_STEP`, cold, at the run's default
    size (where the kernels, not the launches, decide) where it was
    measured, else at the document's largest n; one per (dtype, threads)
    of the sums measured there.

    Raises
    ------
    ValueError
        The document has results, but no sums.
    """
    results = document["results"]
    what = (f"{FIRST_STEP} / {SEVENTH_STEP} cold time (speedup of steps 1 "
            f"to 7)")
    if not results:
        return [Target(f"{what}, no results", None, ">=", LADDER_SPEEDUP)]
    sums = [r for r in results if op_of(r) == DEFAULT_OP]
    if not sums:
        _sums_only(op_of(results[0]), "the ladder's target is")
    sizes = {r["n"] for r in sums}
    default = document["timing"]["default_n"]
    shown = default if default in sizes else max(sizes)
    rows = []
    for (_, dtype, n, threads), group in table_groups(sums).items():
        if n == shown:
            cold = {r["method"]: r[_COLD] for r in group}
            rows.append(Target(
                f"{what}, {dtype} n = {short_n(n)}, {threads} threads",
                ratio(cold.get(FIRST_STEP), cold.get(SEVENTH_STEP)),
                ">=", LADDER_SPEEDUP))
    return rows


def _check_counters(document: Mapping[str, Any]) -> None:
    """Raise ValueError unless the rows of a ``--counters`` document hold
    what :func:`~cudareduce.bench.counters.check_ideas` reads: each a
    method, its pass and the claims' counters (numbers, or None for n/a)."""
    needed = {idea.metric for idea in IDEAS}
    rows = document["rows"]
    if not isinstance(rows, list):
        raise ValueError(f"rows: expected a list, got {type(rows).__name__}")
    for i, r in enumerate(rows):
        if not (isinstance(r, Mapping) and isinstance(r.get("method"), str)
                and is_int(r.get("pass")) and needed <= set(r)
                and all(r[m] is None or (isinstance(r[m], (int, float))
                                         and not isinstance(r[m], bool))
                        for m in needed)):
            raise ValueError(f"rows[{i}]: expected a method, its pass and "
                             f"the counters {sorted(needed)}, got {r!r}")


def counters_targets(document: Mapping[str, Any]) -> list[Claim]:
    """The claims of a ``--counters`` document: each of
    :data:`~cudareduce.bench.counters.IDEAS` as
    :func:`~cudareduce.bench.counters.check_ideas` judges it, then those
    whose methods the document lacks, without a figure."""
    profiled = {r["method"] for r in document["rows"]}
    rows = [Claim(what, ok) for what, ok in check_ideas(document)]
    rows += [Claim(f"{idea.method} against {idea.other} ({idea.metric}): "
                   f"not profiled", None)
             for idea in IDEAS if not {idea.method, idea.other} <= profiled]
    return rows


def op_targets(comparison: Mapping[str, Any], op: str) -> list[Target]:
    """The targets of a ``--peers --op`` document of `op`, not sum, in the
    order of the module docstring."""
    results = comparison["results"]
    big = COMPARE_SIZES[-1]
    baseline = gbps_of(results, "fast", BASELINE_DTYPE, big, _COLD)
    rows = [Target(f"fast {dtype} {op} / fast {BASELINE_DTYPE} sum GB/s, "
                   f"cold, n = {short_n(big)}",
                   ratio(gbps_of(results, "fast", dtype, big, _COLD, op=op),
                         baseline), ">=", OP_OVER_SUM)
            for dtype in comparison_dtypes(comparison)
            if numpy_dtype(dtype).itemsize >= _WIDE_ITEMSIZE]
    if op in CUB_OPS:
        rows += [Target(f"fast / cub speed, back to back, {dtype} {op} "
                        f"n = {short_n(n)}", ratios[REFERENCE_METHOD], ">=",
                        1.0)
                 for dtype, n, ratios in comparison_ratios(comparison,
                                                           _BATCH)]
    return rows


def peers_targets(comparison: Mapping[str, Any]) -> list[Target]:
    """The targets of a ``--peers`` document, in the order of the module
    docstring: a sum's, or another op's (:func:`op_targets`)."""
    op = comparison_op(comparison)
    if op != DEFAULT_OP:
        return op_targets(comparison, op)
    results, latency = comparison["results"], comparison["latency_us"]
    big = COMPARE_SIZES[-1]
    rows = []
    for dtype, n, ratios in comparison_ratios(comparison, _BATCH):
        where = f"back to back, {dtype} n = {short_n(n)}"
        compared = dtype in COMPARE_DTYPES
        rows.append(Target(f"fast / cub speed, {where}",
                           ratios[REFERENCE_METHOD], ">=",
                           FAST_OVER_CUB.get(n, 1.0) if compared else 1.0))
        if compared and n >= FLOOR_FROM:
            rows.append(Target(f"floor / fast time, {where}",
                               ratios["floor"], ">=", FLOOR_SHARE))
    rows += [Target(f"fast {dtype} / fast {BASELINE_DTYPE} GB/s, cold, "
                    f"n = {short_n(big)}",
                    ratio(gbps_of(results, "fast", dtype, big, _COLD),
                          gbps_of(results, "fast", BASELINE_DTYPE, big,
                                  _COLD)),
                    ">=", 0.95)
             for dtype in comparison_dtypes(comparison)
             if (dtype == "int32" or dtype not in COMPARE_DTYPES)
             and numpy_dtype(dtype).itemsize >= _WIDE_ITEMSIZE]
    for kind, call in (("cupy", OURS_ON_CUPY), ("torch", OURS_ON_TORCH)):
        rows.append(Target(f"float(cudareduce.sum(x)) / {TORCH_ITEM}, "
                           f"{kind} x, n = {LATENCY_N}",
                           ratio(latency.get(call), latency.get(TORCH_ITEM)),
                           "<=", 0.5))
        rows.append(Target(f"float(cudareduce.sum(x)) / {LAUNCH_POLL_FLOOR}"
                           f", {kind} x, n = {LATENCY_N}",
                           ratio(latency.get(call),
                                 latency.get(LAUNCH_POLL_FLOOR)),
                           "<=", 1.5))
    return rows


def host_targets(document: Mapping[str, Any]) -> list[Target]:
    """The targets of a ``--host`` document: the whole calls' at its
    largest n, float32, then where it times along axes
    :func:`host_axis_targets`."""
    found = host_ratios(document)
    speed = found.speed if found is not None else {}
    at = f", float32 n = {short_n(found.n)}" if found is not None else ""
    rows = [Target(f"cudareduce / {call} (speed){at}", speed.get(call),
                   ">=", 4.0) for call in (NUMPY_CALL, TORCH_CALL)]
    rows.append(Target(f"cudareduce / pinned copy (GB/s){at}",
                       found.pinned if found is not None else None,
                       ">=", 0.7))
    if has_axis_calls(document):
        rows += host_axis_targets(document)
    return rows


def host_axis_targets(document: Mapping[str, Any]) -> list[Target]:
    """The along-axis targets of a ``--host`` document: for each of its
    dtypes, each axis and each of its sizes from :data:`HOST_AXIS_FROM`
    bytes that makes rows (:func:`~cudareduce.bench.host.times_axes`),
    and :data:`HOST_AXIS_BIG` bytes, ``cudareduce.sum(a, axis=k)``'s speed
    over ``numpy.sum(a, axis=k)`` (no figure where either is missing or
    WRONG)."""
    results = document["results"]
    rows = []
    for dtype in dict.fromkeys(r["dtype"] for r in results):
        itemsize = numpy_dtype(dtype).itemsize
        sizes = {r["n"] for r in results if r["dtype"] == dtype
                 and r["n"] * itemsize >= HOST_AXIS_FROM
                 and times_axes(r["n"])}
        sizes.add(HOST_AXIS_BIG // itemsize)
        for axis in HOST_AXES:
            for n in sorted(sizes):
                big = n * itemsize == HOST_AXIS_BIG
                rows.append(Target(
                    f"cudareduce / {NUMPY_AXIS_CALLS[axis]} (speed), "
                    f"{dtype} n = {short_n(n)} "
                    f"({n * itemsize / 2**20:,.0f} MiB)",
                    axis_speed(document, dtype, n, axis).speed, ">=",
                    HOST_AXIS_BIG_SPEED if big else HOST_AXIS_SPEED))
    return rows


def _batch_ratio(slower: Mapping[str, Any] | None,
                 fast: Mapping[str, Any] | None) -> float | None:
    """`slower`'s back-to-back time over `fast`'s (how many times faster
    ``fast`` is); None where either is missing or untimed."""
    return ratio(None if slower is None else slower["batch_us"],
                 None if fast is None else fast["batch_us"])


def axis_targets(document: Mapping[str, Any]) -> list[Target]:
    """The targets of an ``--axis`` document, in the order of the module
    docstring, dtype by dtype."""
    groups = case_groups(document["results"])
    dtypes = list(dict.fromkeys(case[0] for case in groups)) \
        or [AXIS_PEER_DTYPE]
    rows = []
    for dtype in dtypes:
        cases = {case: group for case, group in groups.items()
                 if case[0] == dtype}
        for shape, axis, share in AXIS_FLOOR_SHARES:
            where = f"floor / fast time, back to back, {dtype}"
            found = [group for (_, _, s, a), group in cases.items()
                     if (s, a) == (shape, axis)]
            if not found:
                rows.append(Target(f"{where} {shape_label(shape, axis)}: "
                                   f"not measured", None, ">=", share))
            for group in found:
                fast = group.get("fast")
                pct = None if fast is None else fast["pct_floor"]
                rows.append(Target(
                    f"{where} {case_label(next(iter(group.values())))}",
                    None if pct is None else pct / 100, ">=", share))
        if dtype == AXIS_PEER_DTYPE:
            rows += _axis_peer_targets(list(cases.values()), dtype)
    return rows


def _axis_peer_targets(groups: list[Mapping[str, Mapping[str, Any]]],
                       dtype: str) -> list[Target]:
    """``fast`` against the fastest peer on every case of `groups`, then
    against each of :data:`AXIS_PEERS` on its worst case."""
    rows = []
    for group in groups:
        best = best_peer(group)
        label = case_label(next(iter(group.values())))
        fastest = "none timed" if best is None else best["method"]
        rows.append(Target(
            f"fast / fastest peer ({fastest}) speed, back to back, {dtype} "
            f"{label}", _batch_ratio(best, group.get("fast")), ">=",
            AXIS_OVER_PEERS))
    for peer in AXIS_PEERS:
        timed = [(r, group) for group in groups for method, r in group.items()
                 if not is_ours(method) and column_of(method) == peer
                 and r["pct_floor"] is not None]
        if not timed:
            rows.append(Target(f"fast / {peer} speed on {peer}'s worst case, "
                               f"back to back, {dtype}: {peer} not timed",
                               None, ">=", AXIS_OVER_WORST))
            continue
        worst, group = min(timed, key=lambda pair: pair[0]["pct_floor"])
        rows.append(Target(
            f"fast / {worst['method']} speed on {peer}'s worst case "
            f"({worst['pct_floor']:.0f}% of its floor), back to back, "
            f"{dtype} {case_label(worst)}",
            _batch_ratio(worst, group.get("fast")), ">=", AXIS_OVER_WORST))
    return rows


def exact_targets(document: Mapping[str, Any]) -> list[Target]:
    """The targets of an ``--exact`` document, in the order of the module
    docstring, dtype by dtype."""
    groups = exact_groups(document["results"])
    rows = []
    for dtype in EXACT_DTYPES:
        sizes = {n: group for (d, data, n), group in groups.items()
                 if (d, data) == (dtype, EXACT_TARGET_DATA)}
        for what, other, start, limit in (
                ("exact / fast", "fast", EXACT_FAST_FROM, EXACT_OVER_FAST),
                ("exact / CUB gpu_to_gpu", "cub_gpu_to_gpu",
                 EXACT_GPU_TO_GPU_FROM, EXACT_OVER_GPU_TO_GPU)):
            where = f"{what} speed, back to back, {dtype} " \
                f"{EXACT_TARGET_DATA} data"
            held = [n for n in sizes if n >= start]
            if not held:
                rows.append(Target(f"{where} from {short_n(start)}: not "
                                   f"measured", None, ">=", limit))
            rows += [Target(f"{where} {short_n(n)}",
                            speed_over(sizes[n], "exact", other), ">=",
                            limit) for n in held]
    return rows


def targets(document: Any) -> list[Row]:
    """The targets of a ``--peers``, ``--host``, ``--counters``,
    ``--axis``, ``--exact`` or ladder document, told apart by their keys
    (an ``--axis`` or ``--exact`` document by its ``kind``; each is
    checked by its validator, a ladder document by
    :func:`~cudareduce.bench.schema.validate_document`).

    Raises
    ------
    ValueError
        `document` is none of them, or a ladder or ``--counters`` document
        of another op than sum.
    """
    keys = set(document) if isinstance(document, Mapping) else set()
    if is_axis_document(document):
        validate_axis_document(document)
        return axis_targets(document)
    if is_exact_document(document):
        validate_exact_document(document)
        return exact_targets(document)
    if keys - {"dtypes"} == {"results", "latency_us"}:
        validate_document(document["results"])
        comparison_dtypes(document)     # a malformed "dtypes" raises
        return peers_targets(document)
    if keys == {"device", "date", "pinned_gbps", "results"}:
        return host_targets(document)
    # A --counters document written before the bench profiled other ops
    # names none.
    if keys | {"op"} == set(COUNTERS_KEYS):
        _check_counters(document)
        _sums_only(op_of(document), "the counters' claims are")
        return counters_targets(document)
    if "results" in keys:
        validate_document(document)
        return ladder_targets(document)
    raise ValueError("not a ladder, --counters, --peers, --host, --axis or "
                     "--exact document of cudareduce.bench")


def _cells(row: Row) -> list[str]:
    """A row's cells: what, value, bound, met (a claim's value and bound
    are in its words)."""
    if isinstance(row, Claim):
        return [row.what, "", "", _MET[row.met]]
    return [row.what, "-" if row.value is None else f"{row.value:.2f}x",
            f"{row.bound} {row.limit:.2f}x", _MET[row.met]]


def format_targets(rows: Sequence[Row]) -> str:
    """Each target as a table row: what, its value, the bound, met."""
    return "\n".join(render(("target", "value", "bound", "met"),
                            [_cells(row) for row in rows]))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (see the module
    docstring)."""
    parser = argparse.ArgumentParser(
        prog="python benchmarks/targets.py",
        description="Check the project's targets on a document written by "
                    "python -m cudareduce.bench --json (or --counters, "
                    "--peers, --host, --axis or --exact with --json).")
    parser.add_argument("document", metavar="JSON",
                        help="the ladder, --counters, --peers, --host, "
                             "--axis or --exact document")
    args = parser.parse_args(argv)
    try:
        with open(args.document, encoding="utf-8") as f:
            rows = targets(json.load(f))
    except (OSError, ValueError) as e:
        print(f"targets: {args.document}: {e}", file=sys.stderr)
        return 2
    print(format_targets(rows))
    return 0 if all(row.met for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
