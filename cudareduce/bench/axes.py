"""The ``--axis`` mode: reductions along one axis of device arrays, ours
beside PyTorch's, CuPy's and CuPy's with CUB on, each under its floor (an
empty kernel, the read probe and a device-to-device copy, timed the same
way in the same run).

:func:`run_axes` measures the ``--axis`` document (described in
:mod:`cudareduce.bench`, its keys and rules in
:mod:`~cudareduce.bench.axis_schema`); :func:`format_axes` is its report.

Every call is timed from Python on :class:`~cudareduce.bench.devices.
Devices` (a reduction along axes returns a device array, without waiting
for the device).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, NamedTuple

import numpy as np

import cudareduce
from cudareduce import _cudareduce
from .axis_schema import (AXIS_KIND, AXIS_SCHEMA, CUB_ON, axis_peers,
                          best_peer, case_groups, case_label, column_of,
                          make_axis_probe, make_axis_result, probe_floor_us,
                          validate_axis_document)
from .figures import outcome_notes, render
from .names import (DEFAULT_OP, DTYPES, FAST_METHOD, OPS, REFERENCE_METHOD,
                    dtype_kind, numpy_dtype)
from .schema import describe_device, now

from .data import random_array
from .devices import Contender, Devices, unavailable
from .floor import measure_empty, measure_probe
from .ladder import device_info
from .policy import rotation_buffers
from .progress import Progress

__all__ = ["AXIS_CASES", "AXIS_DTYPES", "AXIS_TIMING_METHOD", "AxisCase",
           "format_axes", "matches", "reference_along", "result_dtype",
           "run_axes", "tolerance"]


class AxisCase(NamedTuple):
    """One case of the ``--axis`` table: a `shape` reduced along `axis` by
    `op` (None: the run's op)."""

    shape: tuple[int, ...]
    axis: int
    op: str | None = None


#: The cases of issue 43: skinny and square, each way, and an argmax
#: whose rows are long and few.
AXIS_CASES = (
    AxisCase((1 << 24, 4), 1), AxisCase((4, 1 << 24), 1),
    AxisCase((1 << 12, 1 << 12), 1), AxisCase((1 << 12, 1 << 12), 0),
    AxisCase((1 << 24, 4), 0), AxisCase((4, 1 << 24), 0),
    AxisCase((1 << 16, 1 << 10), 1), AxisCase((1 << 16, 1 << 10), 0),
    AxisCase((1 << 10, 1 << 16), 1), AxisCase((1 << 10, 1 << 16), 0),
    AxisCase((32, 1 << 17), 1, op="argmax"),
)
#: The dtypes of ``--axis`` unless ``--dtype`` names others.
AXIS_DTYPES = ("float32",)
#: How the figures are taken, for the document and the report.
AXIS_TIMING_METHOD = (
    "GPU time as nvbench takes it, from Python: CUDA events around the "
    "calls, queued on one non-blocking stream (CuPy's and PyTorch's current "
    "stream) behind a kernel that holds it until they are all queued; cold "
    "= one call per sample after an L2 flush; back to back = several calls "
    "per sample, inputs rotated past L2; medians; floor = empty kernel + "
    "R / read rate + W / write rate, from a read probe and a "
    "device-to-device copy of R bytes timed the same way")


# ---------------------------------------------------------------------------
# The reference and the check


def reference_along(a: np.ndarray, op: str, axis: int) -> np.ndarray:
    """NumPy's `op` of the host array `a` along `axis`: sums, products and
    means of floats (complex) in float64 (complex128), bfloat16 as its
    float32 values (exact), the rest as NumPy computes them."""
    facts = _cudareduce.OPERATOR_FACTS[op]
    kind = dtype_kind(a.dtype.name)
    data = a if a.dtype.kind == kind else a.astype(np.float32)
    function = getattr(np, op)
    if facts.takes_dtype and kind in "fc":
        wide = np.complex128 if kind == "c" else np.float64
        return np.asarray(function(data, axis=axis, dtype=wide))
    return np.asarray(function(data, axis=axis))


def result_dtype(op: str, dtype: str) -> np.dtype:
    """The dtype of NumPy's `op` of `dtype` along an axis: what a
    reduction writes (an index op's int64, an integer sum's int64, ...)."""
    return getattr(np, op)(np.ones((1, 2), numpy_dtype(dtype)), axis=1).dtype


def tolerance(op: str, dtype: str) -> float:
    """The relative tolerance of a result of `op` on `dtype` against
    :func:`reference_along`: 0 (exact) where it selects an element or an
    index or is an integer or bool; else 4 ulps of its result dtype (the
    data's sums are exact in every order, so that only the last rounding,
    and a mean's divide, may differ)."""
    facts = _cudareduce.OPERATOR_FACTS[op]
    result = result_dtype(op, dtype)
    if facts.selects_element or facts.gives_index or result.kind in "biu":
        return 0.0
    if result.kind in "fc":
        return 4 * float(np.finfo(result).eps)
    import ml_dtypes  # noqa: PLC0415 - bfloat16's NumPy kind is "V"
    return 4 * float(ml_dtypes.finfo(result).eps)


def matches(got: np.ndarray, reference: np.ndarray, rtol: float) -> bool:
    """Whether `got` is `reference`: the same shape, and every element
    equal (NaN as NaN) where `rtol` is 0, else within `rtol` of it."""
    got = np.asarray(got)
    if got.shape != reference.shape:
        return False
    kinds = got.dtype.kind + reference.dtype.kind
    if rtol == 0:
        return bool(np.array_equal(got, reference,
                                   equal_nan=any(k in "fc" for k in kinds)))
    wide = np.complex128 if "c" in kinds else np.float64
    return bool(np.allclose(got.astype(wide), reference.astype(wide),
                            rtol=rtol, atol=0, equal_nan=True))


# ---------------------------------------------------------------------------
# The contenders


def _contenders(devices: Devices, op: str, axis: int, library: str,
            rows: list, dtype: str, names: Sequence[str]) -> list[Contender]:
    """The contenders `names` (:func:`_names`: ours, ``fast``, ``cub``,
    the ladder's steps, then peers of `op` along `axis`,
    :func:`~cudareduce.bench.axis_schema.axis_peers`), on the copies
    `rows` of `library`."""
    reduce = getattr(cudareduce, op)
    # A method that does not reduce along axes (yet) says so with a
    # ValueError; a dtype it does not take, with a TypeError.
    return [Contender(name, lambda x, m=name: reduce(x, axis=axis,
                                                     method=m),
                      rows, None, (ValueError, TypeError), nullcontext)
            if name in _our_methods()
            else _peer(devices, name, axis, library, rows, dtype)
            for name in names]

def _peer(devices: Devices, name: str, axis: int, library: str, rows: list,
      dtype: str) -> Contender:
    """A peer's contender, or why it cannot run: PyTorch's
    ``torch.<fn>(x, dim=axis)``, CuPy's ``cupy.<fn>(x, axis=axis)``
    (with CUB on for ``cupy.<fn>[cub]``)."""
    peer, _, function = name.partition(".")
    function = function.removesuffix(CUB_ON)
    if peer == "torch":
        if devices.torch is None:
            return unavailable(name, devices.torch_why)
        try:
            inputs = rows if library == "torch" else [
                devices.torch.as_tensor(x, device=devices.device)
                for x in rows]
        except Exception as e:  # noqa: BLE001 - whatever torch raises
            return unavailable(name, f"takes no {dtype} "
                                      f"({type(e).__name__}: {e})")
        torch_reduce = getattr(devices.torch, function)
        return Contender(name, lambda x: torch_reduce(x, dim=axis),
                          inputs, None, (Exception,), nullcontext)
    if library != "cupy":
        return unavailable(name, f"CuPy has no {dtype}")
    setting = devices.cub_on if name.endswith(CUB_ON) else nullcontext
    cupy_reduce = getattr(devices.cupy, function)
    return Contender(name, lambda x: cupy_reduce(x, axis=axis), rows,
                      None, (Exception,), setting)



# ---------------------------------------------------------------------------
# The run


def _cases(shapes: Iterable[Sequence[Any]] | None) -> list[AxisCase]:
    """`shapes` as :class:`AxisCase`\\ s, checked; :data:`AXIS_CASES`
    for None."""
    if shapes is None:
        return list(AXIS_CASES)
    cases = []
    for item in shapes:
        case = AxisCase(tuple(int(k) for k in item[0]), *item[1:])
        if not case.shape or min(case.shape) < 1 \
                or not 0 <= case.axis < len(case.shape) \
                or case.op not in (None, *OPS):
            raise ValueError(f"shapes: expected (shape, axis[, op]) with "
                             f"extents >= 1, the axis among them and an "
                             f"op of {OPS}, got {item!r}")
        cases.append(case)
    if not cases:
        raise ValueError("shapes: no case given")
    return cases


def _measure_case(devices: Devices, case: AxisCase, op: str, dtype: str,
                  names: Sequence[str], rng: np.random.Generator,
                  info: Mapping[str, Any], floor: Mapping[str, float],
                  probes: dict[int, dict], bar: Progress) -> list[dict]:
    """The results of one case of one dtype, each of the contenders
    `names`; the probe at its input's bytes measured first where it is
    not yet."""
    a = random_array(rng, math.prod(case.shape), dtype, op).reshape(
        case.shape)
    reference = reference_along(a, op, case.axis)
    rtol = tolerance(op, dtype)
    read_bytes = a.nbytes
    write_bytes = reference.size * result_dtype(op, dtype).itemsize
    buffers = rotation_buffers(read_bytes, info["l2_bytes"],
                               info["total_bytes"])
    if read_bytes not in probes:
        read = measure_probe(read_bytes, info)
        probes[read_bytes] = make_axis_probe(
            read_bytes, read["read_cold_us"], read["read_batch_us"],
            *devices.copy_us(read_bytes, buffers), floor)
    floors = {f"floor_{way}_us": probe_floor_us(
                  floor, probes[read_bytes], way, read_bytes, write_bytes)
              for way in ("cold", "batch")}
    try:
        library, rows = devices.copies(a, buffers)
        contenders = _contenders(devices, op, case.axis, library, rows,
                                  dtype, names)
    except LookupError as e:            # no library holds the dtype
        rows, contenders = [], [unavailable(name, str(e))
                                for name in names]
    results = []
    for contender in contenders:
        figures = devices.measure(
            contender, lambda got: matches(got, reference, rtol))
        results.append(make_axis_result(
            contender.name, op, dtype, case.shape, case.axis,
            read_bytes=read_bytes, write_bytes=write_bytes, **floors,
            **figures))
        bar.step(f"{dtype} {case_label(results[-1])} {contender.name}")
    del rows, contenders
    devices.free()
    return results


def _our_methods() -> list[str]:
    """Our methods in the order the document lists them: ``fast``,
    ``cub``, then the ladder's steps."""
    return [FAST_METHOD, REFERENCE_METHOD,
            *(m for m in cudareduce.methods()
              if m not in (FAST_METHOD, REFERENCE_METHOD))]


def _names(op: str, methods: Sequence[str] | None = None,
           peers: bool = True) -> list[str]:
    """The contenders' names of a case of `op`, ours first, as
    :func:`_contenders` orders them: those of `methods` (ours and peers'
    names), or all of ours; the peers `methods` names, or, where it names
    none (of any op's), all of `op`'s unless `peers` is False."""
    theirs = axis_peers(op)
    if methods is None:
        return [*_our_methods(), *(theirs if peers else ())]
    named = any(name not in _our_methods() for name in methods)
    return [*(m for m in _our_methods() if m in methods),
            *(p for p in theirs if p in methods
              or (peers and not named))]


def _check_methods(ops: Iterable[str], methods: Sequence[str] | None,
                   peers: bool) -> None:
    """Raise ValueError unless each of `methods` is ours or a peer of one
    of `ops` (the cases' ops), and `peers` is not False where it names
    a peer."""
    if methods is None:
        return
    valid = [*_our_methods(), *(p for op in dict.fromkeys(ops)
                                for p in axis_peers(op))]
    if not methods:
        raise ValueError("methods: empty list")
    unknown = [m for m in methods if m not in valid]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}; valid methods: "
                         + ", ".join(valid))
    if not peers and any(m not in _our_methods() for m in methods):
        raise ValueError("peers named in methods, but peers=False")


def run_axes(op: str = DEFAULT_OP, dtypes: Iterable[str] = AXIS_DTYPES,
             shapes: Iterable[Sequence[Any]] | None = None,
             progress: bool = True, *, seed: int | None = None,
             methods: Sequence[str] | None = None,
             peers: bool = True) -> dict:
    """What ``--axis`` measures: each case reduced along its axis by ours
    and the peers, each checked, then timed cold and back to back under
    its floor.

    Parameters
    ----------
    op : str
        The op of the cases that name none (default ``"sum"``); the argmax
        case of :data:`AXIS_CASES` stays argmax.
    dtypes : iterable of str
        The element types, each of :data:`~cudareduce.bench.names.DTYPES`
        (default float32).
    shapes : iterable of (shape, axis[, op]), optional
        The cases (default :data:`AXIS_CASES`).
    progress : bool
        Show a progress bar over the cases' contenders.
    seed : int, optional
        Seed of the random data (default: fresh entropy every run).
    methods : sequence of str, optional
        The contenders to time, ours and peers by name (``"fast"``,
        ``"torch.sum"``, ``"cupy.sum[cub]"``, ...; default: every one of
        ours); where it names no peer, every peer of each case's op
        unless `peers` is False.  A document of some contenders only has
        no figure for the others' targets.
    peers : bool
        Time the peers (default True).

    Returns
    -------
    dict
        The ``--axis`` document
        (:func:`~cudareduce.bench.axis_schema.validate_axis_document`):
        for every (dtype, case) our methods (``fast``, ``cub``, the
        ladder's steps: those that refuse to reduce along an axis are
        unavailable, with their error) and the peers, PyTorch's
        ``torch.<fn>(x, dim=axis)``, CuPy's ``cupy.<fn>(x, axis=axis)``
        with its default accelerators and with CUB on
        (``cupy.<fn>[cub]``); inputs in CuPy (PyTorch for bfloat16).

    Raises
    ------
    ImportError
        CuPy does not import.
    cudareduce.CudaError
        No usable CUDA device, or a CUDA call failed.
    ValueError
        Unknown op, dtype or method, a dtype named twice, a malformed
        case, or peers named in `methods` with `peers` False.
    MemoryError
        Not enough GPU memory for an input.
    """
    if op not in OPS:
        raise ValueError(f"unsupported op {op!r}; supported: "
                         + ", ".join(OPS))
    dtypes = list(dtypes)
    if not dtypes or len(set(dtypes)) < len(dtypes) \
            or any(d not in DTYPES for d in dtypes):
        raise ValueError(f"dtypes: expected distinct dtypes of {DTYPES}, "
                         f"got {dtypes!r}")
    cases = _cases(shapes)
    methods = None if methods is None else list(methods)
    _check_methods([case.op or op for case in cases], methods, peers)
    info = device_info()
    devices = Devices(info["ordinal"], "the --axis mode")
    floor = measure_empty()
    probes: dict[int, dict] = {}
    rng = np.random.default_rng(seed)
    results: list[dict] = []
    names = {case: _names(case.op or op, methods, peers) for case in cases}
    bar = Progress(sum(map(len, names.values())) * len(dtypes), progress)
    try:
        for dtype in dtypes:
            for case in cases:
                results += _measure_case(devices, case, case.op or op, dtype,
                                         names[case], rng, info, floor,
                                         probes, bar)
    finally:
        bar.close()
    document = {"kind": AXIS_KIND, "schema": AXIS_SCHEMA,
                "cudareduce_version": cudareduce.__version__, "date": now(),
                "device": describe_device(info),
                "software": devices.software(),
                "timing": {"method": AXIS_TIMING_METHOD},
                "floor": floor,
                "probes": [probes[b] for b in sorted(probes)],
                "results": results}
    validate_axis_document(document)
    return document


# ---------------------------------------------------------------------------
# The report


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["unavailable"] is not None:
        return "n/a"
    return "WRONG" if not r["correct"] else f"{r['batch_us']:,.1f}"


def format_axes(document: Mapping[str, Any]) -> str:
    """The ``--axis`` report: per dtype, a row per case with its floor,
    each method's and peer's back-to-back µs (peers by library: the
    argmax row's ``torch`` is ``torch.argmax``), ``fast``'s % of the floor
    and its speed over the fastest peer's; then what was unavailable, and
    why, and what was WRONG."""
    software = document["software"]
    lines = [f"Along an axis on {document['device']['name']}: GPU time back "
             f"to back, µs per call (inputs rotated past L2); floor = empty "
             f"kernel + R / read rate + W / write rate (a read probe and a "
             f"device-to-device copy, timed the same way in the same run)"]
    accelerators = software["cupy_accelerators"]
    if accelerators is not None:
        default = {way: ", ".join(names) or "none"
                   for way, names in accelerators.items()}
        lines.append(f"CuPy {software['cupy']}'s accelerators by default "
                     f"(cupy): reduction {default['reduction']}, routine "
                     f"{default['routine']}; cupy[cub]: both cub")
    groups = case_groups(document["results"])
    for dtype in dict.fromkeys(case[0] for case in groups):
        cases = {case: group for case, group in groups.items()
                 if case[0] == dtype}
        rows = [r for group in cases.values() for r in group.values()]
        columns = list(dict.fromkeys(column_of(r["method"]) for r in rows
                                     if r["unavailable"] is None))
        cells = []
        for group in cases.values():
            by_column = {column_of(m): r for m, r in group.items()}
            first = next(iter(group.values()))
            fast = group.get(FAST_METHOD)
            best = best_peer(group)
            speed = best["batch_us"] / fast["batch_us"] \
                if fast is not None and fast["batch_us"] and best else None
            cells.append(
                [case_label(first), f"{first['floor_batch_us']:,.1f}",
                 *(_cell(by_column.get(c)) for c in columns),
                 "-" if fast is None or fast["pct_floor"] is None
                 else f"{fast['pct_floor']:.0f}%",
                 "-" if speed is None else f"{speed:.2f}×"])
        lines += ["", dtype]
        lines += render(["case", "floor µs", *columns, "fast % of floor",
                         "fast / fastest peer"], cells)
        lines += outcome_notes(rows, str, case_label)
    return "\n".join(lines)

