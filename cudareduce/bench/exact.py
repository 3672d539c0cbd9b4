"""The ``--exact`` mode: what ``exact=True`` costs, beside the plain
``fast`` sum, our ``cub`` method and CUB's GPU-to-GPU deterministic reduce
(``cub::DeviceReduce::Reduce`` with ``determinism::gpu_to_gpu``, from the
harness benchmarks/cub_gpu_to_gpu.cu), each whole-array sum under its
floor (the read probe over its bytes, timed the same way in the same run).

:func:`run_exact` measures the ``--exact`` document (its keys and rules in
:mod:`~cudareduce.bench.exact_schema`); :func:`format_exact` is its report.

Every call is timed from Python on :class:`~cudareduce.bench.devices.
Devices`: ours into a device ``out=`` (the call returns without waiting
for the device), the harness on the same stream.  Each size is timed on
three kinds of data (:data:`EXACT_DATA`): normal values, the same spread
over 17 binades, and values spread over the dtype's exponent range, of
both signs, every bit of the significand in use: the exact kernels'
speed depends on the range their windows meet.  ``exact`` must give the
exact sum's bits, rounded once
(:mod:`~cudareduce.bench.exact_reference`); the others its value within
their rounding bound (2 sqrt(n) units of their accumulator's roundoff
per |element| summed, and one in the result's last place: a garbage
result is caught, a lost element is not; the ladder's bench checks the
plain sum exactly).
"""
from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from fractions import Fraction
from typing import Any

import numpy as np

import cudareduce
from .devices import Contender, Devices, unavailable
from .exact_reference import (FORMATS, array_sum, binade, limits,
                              round_exact, value_of)
from .exact_schema import (EXACT_KIND, EXACT_METHODS, EXACT_SCHEMA,
                           exact_groups, make_exact_result, speed_over,
                           validate_exact_document)
from .figures import outcome_notes, render, short_n
from .floor import measure_empty, measure_probe
from .ladder import device_info
from .names import numpy_dtype
from .policy import rotation_buffers
from .progress import Progress
from .schema import describe_device, now

__all__ = ["EXACT_DATA", "EXACT_DTYPES", "EXACT_SIZES", "EXACT_TAKES",
           "EXACT_TIMING_METHOD", "GpuToGpu", "exact_data", "format_exact",
           "run_exact"]

#: The sizes of ``--exact`` unless ``--sizes`` names others: from 2^20,
#: where issue 44's targets start.
EXACT_SIZES = tuple(1 << k for k in range(20, 29, 2))
#: The dtypes of ``--exact`` unless ``--dtype`` names others, and those it
#: takes (``exact=True``'s).
EXACT_DTYPES = ("float32", "float64")
EXACT_TAKES = ("float16", "bfloat16", "float32", "float64")
#: The data of ``--exact``, by kind: the significands (standard normal,
#: or uniform in [1, 2) of random sign) and, for each dtype, the range of
#: k of the power of two 2^k each is scaled by: ``normal`` as it comes
#: (the 2-byte floats scaled down so that 2^28 of them sum in range),
#: ``spread`` over 17 binades, ``wide`` over most of the dtype's exponents
#: (issue 44's adversarial 1e-300 .. 1e300 for float64; float16's
#: subnormals), none of whose sums overflows at 2^28 elements.
EXACT_DATA = {
    "normal": ("normal", {"float64": (0, 0), "float32": (0, 0),
                          "float16": (-6, -6), "bfloat16": (-6, -6)}),
    "spread": ("normal", {"float64": (-8, 8), "float32": (-8, 8),
                          "float16": (-10, -5), "bfloat16": (-10, -5)}),
    "wide": ("uniform", {"float64": (-1000, 990), "float32": (-120, 96),
                         "float16": (-24, -6), "bfloat16": (-120, 96)}),
}
#: How the figures are taken, for the document and the report.
EXACT_TIMING_METHOD = (
    "GPU time as nvbench takes it, from Python: CUDA events around the "
    "calls, queued on one non-blocking stream (CuPy's and PyTorch's current "
    "stream) behind a kernel that holds it until they are all queued; ours "
    "into a device out=, CUB's gpu_to_gpu through its harness on the same "
    "stream; cold = one call per sample after an L2 flush; back to back = "
    "several calls per sample, inputs rotated past L2; medians; floor = the "
    "read probe over the input's bytes, timed the same way")


class GpuToGpu:
    """The harness (benchmarks/cub_gpu_to_gpu.cu built as a shared
    library) loaded from `path`: ``sum(x, out, stream)`` of float32 and
    float64 CuPy arrays.

    Raises
    ------
    OSError
        `path` is not a shared library with the harness's functions.
    """

    _DTYPES = {"float32": 0, "float64": 1}

    def __init__(self, path: str) -> None:
        library = ctypes.CDLL(path)
        self._sum = library.cub_gpu_to_gpu_sum
        self._sum.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_longlong, ctypes.c_int,
                              ctypes.c_void_p]
        self._sum.restype = ctypes.c_int
        self._name = library.cub_gpu_to_gpu_error_name
        self._name.argtypes = [ctypes.c_int]
        self._name.restype = ctypes.c_char_p
        version = library.cub_gpu_to_gpu_cccl_version()
        #: CCCL's version of the harness, "3.2.1".
        self.cccl = (f"{version // 1000000}.{version // 1000 % 1000}."
                     f"{version % 1000}")

    def takes(self, dtype: str) -> bool:
        """Whether CUB's gpu_to_gpu sums `dtype` (float32, float64)."""
        return dtype in self._DTYPES

    def sum(self, x: Any, out: Any, stream: Any) -> Any:
        """Queue the sum of the contiguous CuPy array `x` into the CuPy
        scalar `out` on the CuPy `stream`; `out`.

        Raises
        ------
        cudareduce.CudaError
            The harness's call failed (its CUDA error's name).
        """
        error = self._sum(x.data.ptr, out.data.ptr, x.size,
                          self._DTYPES[x.dtype.name], stream.ptr)
        if error:
            raise cudareduce.CudaError(
                f"CUB gpu_to_gpu: {self._name(error).decode()}")
        return out


def exact_data(rng: np.random.Generator, n: int, dtype: str,
               kind: str = "normal") -> np.ndarray:
    """n values of `dtype`, of the `kind` of :data:`EXACT_DATA`: normal or
    uniform significands of random sign, times 2^k for k uniform in the
    kind's range for the dtype."""
    base, (low, high) = EXACT_DATA[kind][0], EXACT_DATA[kind][1][dtype]
    x = rng.standard_normal(n) if base == "normal" \
        else rng.uniform(1.0, 2.0, n) * rng.choice([-1.0, 1.0], n)
    x = x * np.exp2(rng.integers(low, high + 1, n))
    if dtype == "bfloat16":
        x = x.astype(np.float32)
    return x.astype(numpy_dtype(dtype))


class _Reference:
    """What the results of one input are checked against: its exact sum
    rounded once (the value ``exact`` gives) and the rounding bound of a
    plain sum: 2 sqrt(n) roundoffs of its accumulator per |element|
    summed, and a unit in the last place of the result (a plain sum's
    last rounding may go the other way from the exact sum's)."""

    def __init__(self, a: np.ndarray, dtype: str) -> None:
        total = array_sum(a)
        bits, overflowed = round_exact(total, dtype)
        if overflowed:
            raise ValueError(f"the exact sum of the {dtype} data is beyond "
                             f"its range")
        self.exact = value_of(bits, dtype)
        self.total = total
        accumulator = 2.0 ** -53 if dtype == "float64" else 2.0 ** -24
        magnitude = float(np.sum(np.abs(a), dtype=np.float64))
        least = limits(dtype)[0]
        last_place = least if total == 0 else max(
            least, Fraction(2) ** (binade(total) - (FORMATS[dtype][0] - 1)))
        self.bound = Fraction(accumulator * magnitude * 2 * math.sqrt(a.size)
                              ) + last_place

    def is_exact(self, got: np.ndarray) -> bool:
        """Whether `got` is the exact sum rounded once."""
        value = float(np.asarray(got, np.float64))
        return math.isfinite(value) and Fraction(value) == self.exact

    def is_close(self, got: np.ndarray) -> bool:
        """Whether `got` is within a plain sum's bound of the exact sum."""
        value = float(np.asarray(got, np.float64))
        return math.isfinite(value) \
            and abs(Fraction(value) - self.total) <= self.bound


def _contenders(devices: Devices, library: str, rows: list, dtype: str,
                harness: GpuToGpu | None, why_no_harness: str
                ) -> list[Contender]:
    """Ours (plain, exact, cub) into a device out of `library`, and CUB's
    gpu_to_gpu where the harness is loaded and takes `dtype`, in
    :data:`~cudareduce.bench.exact_schema.EXACT_METHODS`' order."""
    if library == "cupy":
        out = devices.cupy.empty((), rows[0].dtype)
    else:
        out = devices.torch.empty((), dtype=rows[0].dtype,
                                  device=rows[0].device)
    refusals = (ValueError, TypeError)

    def ours(**kwargs: Any) -> Callable[[Any], Any]:
        return lambda x: cudareduce.sum(x, out=out, **kwargs)
    found = [Contender("fast", ours(), rows, None, refusals, nullcontext),
             Contender("exact", ours(exact=True), rows, None, refusals,
                       nullcontext),
             Contender("cub", ours(method="cub"), rows, None, refusals,
                       nullcontext)]
    if harness is None:
        found.append(unavailable("cub_gpu_to_gpu", why_no_harness))
    elif not harness.takes(dtype) or library != "cupy":
        found.append(unavailable("cub_gpu_to_gpu",
                                 f"CUB's gpu_to_gpu sums float32 and "
                                 f"float64 only, not {dtype}"))
    else:
        found.append(Contender(
            "cub_gpu_to_gpu",
            lambda x: harness.sum(x, out, devices.stream), rows, None,
            (cudareduce.CudaError,), nullcontext))
    return found


# ---------------------------------------------------------------------------
# The run


def _measure_size(devices: Devices, n: int, dtype: str, kind: str,
                  rng: np.random.Generator, info: Mapping[str, Any],
                  harness: GpuToGpu | None, why_no_harness: str,
                  probes: dict[int, dict], bar: Progress) -> list[dict]:
    """The results of one size of one dtype and kind of data, every
    contender's; the probe at its bytes measured first where it is not
    yet."""
    a = exact_data(rng, n, dtype, kind)
    reference = _Reference(a, dtype)
    buffers = rotation_buffers(a.nbytes, info["l2_bytes"],
                               info["total_bytes"])
    if a.nbytes not in probes:
        probes[a.nbytes] = measure_probe(a.nbytes, info)
    probe = probes[a.nbytes]
    try:
        library, rows = devices.copies(a, buffers)
        contenders = _contenders(devices, library, rows, dtype, harness,
                                 why_no_harness)
    except LookupError as e:            # no library holds the dtype
        rows, contenders = [], [unavailable(m, str(e))
                                for m in EXACT_METHODS]
    results = []
    for contender in contenders:
        check = reference.is_exact if contender.name == "exact" \
            else reference.is_close
        figures = devices.measure(contender, check)
        results.append(make_exact_result(
            contender.name, dtype, kind, n,
            floor_cold_us=probe["read_cold_us"],
            floor_batch_us=probe["read_batch_us"], **figures))
        bar.step(f"{dtype} {kind} {short_n(n)} {contender.name}")
    del rows, contenders
    devices.free()
    return results


def run_exact(dtypes: Iterable[str] = EXACT_DTYPES,
              sizes: Iterable[int] = EXACT_SIZES,
              gpu_to_gpu: str | None = None, progress: bool = True, *,
              data: Iterable[str] = tuple(EXACT_DATA),
              seed: int | None = None) -> dict:
    """What ``--exact`` measures: at each size of each dtype, the plain
    ``fast`` sum, ``exact=True``, ``cub`` and CUB's gpu_to_gpu reduce,
    each checked, then timed cold and back to back under its floor.

    Parameters
    ----------
    dtypes : iterable of str
        float16, bfloat16, float32 or float64 (default float32 and
        float64).
    sizes : iterable of int
        Element counts (default :data:`EXACT_SIZES`).
    gpu_to_gpu : str, optional
        The path of the harness, benchmarks/cub_gpu_to_gpu.cu built as a
        shared library (its header says how); without it that column is
        unavailable, saying so.
    progress : bool
        Show a progress bar over the contenders.
    data : iterable of str
        The kinds of data, of :data:`EXACT_DATA` (default all).
    seed : int, optional
        Seed of the random data (default: fresh entropy every run).

    Returns
    -------
    dict
        The ``--exact`` document
        (:func:`~cudareduce.bench.exact_schema.validate_exact_document`);
        inputs in CuPy (PyTorch for bfloat16).

    Raises
    ------
    ImportError
        CuPy does not import.
    OSError
        `gpu_to_gpu` is not the harness.
    cudareduce.CudaError
        No usable CUDA device, or a CUDA call failed.
    ValueError
        A dtype ``exact=True`` does not take, or named twice; a size < 1;
        an unknown kind of data.
    MemoryError
        Not enough GPU memory for an input.
    """
    dtypes, sizes = list(dtypes), [int(n) for n in sizes]
    if not dtypes or len(set(dtypes)) < len(dtypes) \
            or any(d not in EXACT_TAKES for d in dtypes):
        raise ValueError(f"dtypes: expected distinct dtypes of "
                         f"{EXACT_TAKES}, got {dtypes!r}")
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes: expected counts >= 1, got {sizes!r}")
    kinds = list(data)
    if not kinds or len(set(kinds)) < len(kinds) \
            or any(k not in EXACT_DATA for k in kinds):
        raise ValueError(f"data: expected distinct kinds of "
                         f"{tuple(EXACT_DATA)}, got {kinds!r}")
    harness = None if gpu_to_gpu is None else GpuToGpu(gpu_to_gpu)
    why_no_harness = ("no harness given (build benchmarks/cub_gpu_to_gpu.cu "
                      "as its header says, then --gpu-to-gpu PATH)")
    info = device_info()
    devices = Devices(info["ordinal"], "the --exact mode")
    floor = measure_empty()
    probes: dict[int, dict] = {}
    rng = np.random.default_rng(seed)
    results: list[dict] = []
    bar = Progress(len(EXACT_METHODS) * len(sizes) * len(dtypes)
                   * len(kinds), progress)
    try:
        for dtype in dtypes:
            for kind in kinds:
                for n in sizes:
                    results += _measure_size(devices, n, dtype, kind, rng,
                                             info, harness, why_no_harness,
                                             probes, bar)
    finally:
        bar.close()
    software = devices.software()
    document = {"kind": EXACT_KIND, "schema": EXACT_SCHEMA,
                "cudareduce_version": cudareduce.__version__, "date": now(),
                "device": describe_device(info),
                "software": {"numpy": software["numpy"],
                             "cupy": software["cupy"],
                             "torch": software["torch"],
                             "gpu_to_gpu_cccl": None if harness is None
                             else harness.cccl},
                "timing": {"method": EXACT_TIMING_METHOD},
                "floor": floor,
                "probes": [probes[b] for b in sorted(probes)],
                "results": results}
    validate_exact_document(document)
    return document


# ---------------------------------------------------------------------------
# The report

#: The report's column of each method.
_COLUMNS = {"fast": "fast", "exact": "exact=True", "cub": "cub",
            "cub_gpu_to_gpu": "CUB gpu_to_gpu"}


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["unavailable"] is not None:
        return "n/a"
    return "WRONG" if not r["correct"] else f"{r['batch_us']:,.1f}"


def _ratio(x: float | None, percent: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.0f}%" if percent else f"{x:.2f}×"


def format_exact(document: Mapping[str, Any]) -> str:
    """The ``--exact`` report: per dtype and kind of data, a row per size
    with its floor,
    each method's back-to-back µs, exact's share of fast's speed and of
    the floor, and its speed over CUB's gpu_to_gpu; then what was
    unavailable, and why, and what was WRONG."""
    cccl = document["software"]["gpu_to_gpu_cccl"]
    lines = [f"Exact sums on {document['device']['name']}: GPU time back to "
             f"back, µs per call (inputs rotated past L2); floor = the read "
             f"probe over the input's bytes, timed the same way in the same "
             f"run; CUB gpu_to_gpu from CCCL {cccl or '(not run)'}"]
    groups = exact_groups(document["results"])
    for dtype, kind in dict.fromkeys(key[:2] for key in groups):
        cells = []
        for (d, k, n), group in groups.items():
            if (d, k) != (dtype, kind):
                continue
            first = next(iter(group.values()))
            exact = group.get("exact")
            cells.append(
                [short_n(n), f"{first['floor_batch_us']:,.1f}",
                 *(_cell(group.get(m)) for m in EXACT_METHODS),
                 _ratio(speed_over(group, "exact", "fast"), percent=True),
                 "-" if exact is None or exact["pct_floor"] is None
                 else f"{exact['pct_floor']:.0f}%",
                 _ratio(speed_over(group, "exact", "cub_gpu_to_gpu"))])
        lines += ["", f"{dtype}, {kind} data"]
        lines += render(["n", "floor µs", *_COLUMNS.values(),
                         "exact / fast speed", "exact % of floor",
                         "exact / gpu_to_gpu"], cells)
    lines += outcome_notes(document["results"], _COLUMNS.get,
                           lambda r: f"{r['dtype']} {r['data']} "
                                     f"{short_n(r['n'])}")
    return "\n".join(lines)

