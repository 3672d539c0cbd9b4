"""The default mode, ``python -m cudareduce.bench``: each method of the
ladder (and ``cub``, and the peers) reducing with one op, checked exactly,
then timed three ways at each size (cold GPU time, back-to-back GPU time,
call time), with the passes of multi-pass methods timed one by one, beside
the floor probes of the same run: a :class:`~cudareduce.bench.results.Results`."""
from __future__ import annotations

import math
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

import cudareduce
from cudareduce import _cudareduce
from .results import Results
from .names import (DEFAULT_OP, DTYPES, OPS, REFERENCE_METHOD, numpy_dtype,
                    peers_of)
from .schema import is_int, make_document, make_result

from .data import is_correct, random_array, reference_result
from .floor import default_n, measure_floor, measure_probe
from .policy import (CALL_OVERHEAD_MS, PILOT_REPS, PILOT_WARMUP, WARMUP,
                     choose_batch, choose_reps, rotation_buffers)
from .progress import Progress
from .timers import (MethodTimer, device_arrays, load_peer, method_timer,
                     wall_times)

__all__ = ["DEFAULT_DTYPE", "DEFAULT_THREADS", "Timings", "TIMING_METHOD",
           "check_threads", "device_info", "measure_method",
           "recorded_threads", "run"]

DEFAULT_DTYPE = "float32"
DEFAULT_THREADS = cudareduce.DEFAULT_THREADS

#: How the figures are taken, for the document and the report.
TIMING_METHOD = (
    "GPU time as nvbench takes it: CUDA events around the work, queued "
    "behind a kernel that holds the stream until it is all queued (no "
    "launch latency); cold = one run per sample after an L2 flush, with an "
    "event after each pass; back to back = several runs per sample, inputs "
    "rotated past L2; call = wall time of the Python call on a device "
    "array ({arrays}), result on the host; medians")

#: A method's figures at one size (ms), or None where it was WRONG.
Timings = dict[str, Any]


def _median_passes(pass_lists: list[list[float]] | None) -> list[float]:
    """The median time of each pass over the samples (ms); [] when the
    method's passes are not timed one by one."""
    if not pass_lists or not pass_lists[0]:
        return []
    return [statistics.median(sample[p] for sample in pass_lists)
            for p in range(len(pass_lists[0]))]


def measure_method(timer: MethodTimer, a: np.ndarray, reference: Any,
                   buffers: int,
                   device_input: Any | None = None) -> Timings | None:
    """Check, then time one method on `a` three ways; None if a result was
    WRONG.

    A pilot (one buffer, ``PILOT_WARMUP`` + ``PILOT_REPS`` cold runs) checks
    the result against `reference` (the data's
    :func:`~cudareduce.bench.data.reference_result`) and estimates the time
    of a run; then :func:`~cudareduce.bench.policy.choose_reps` cold
    samples with their passes, as many back-to-back samples of
    :func:`~cudareduce.bench.policy.choose_batch` runs, rotating among
    `buffers` copies after ``WARMUP`` untimed samples, and (with
    `device_input`, the same data on the device) as many calls; every
    timing's last result is checked again.  Returns ``{"cold_us",
    "batch_us", "call_us" (None without a device input), "pass_us",
    "reps"}``.
    """
    value, pilot, _ = timer.gpu(a, 1, PILOT_WARMUP, PILOT_REPS, "cold")
    if not is_correct(value, reference):
        return None
    estimate = statistics.median(pilot)
    reps = choose_reps(estimate)
    value, cold, passes = timer.gpu(a, buffers, WARMUP, reps, "cold")
    if not is_correct(value, reference):
        return None
    batch = choose_batch(estimate)
    value, back_to_back, _ = timer.gpu(a, buffers, WARMUP,
                                       choose_reps(estimate * batch),
                                       "batch", batch)
    if not is_correct(value, reference):
        return None
    call_us = None
    if device_input is not None:
        call = timer.call(device_input)
        wall_times(call, WARMUP)
        times, value = wall_times(
            call, choose_reps(estimate + CALL_OVERHEAD_MS))
        if not is_correct(value, reference):
            return None
        call_us = statistics.median(times) * 1e6
    return {"cold_us": statistics.median(cold) * 1e3,
            "batch_us": statistics.median(back_to_back) * 1e3,
            "call_us": call_us,
            "pass_us": [t * 1e3 for t in _median_passes(passes)],
            "reps": reps}


def _resolve(methods: Iterable[str] | None, peers: bool | Iterable[str],
             op: str = DEFAULT_OP) -> tuple[list[str], list[str], bool]:
    """(our methods, peer names, whether the peers were named), the peers
    those of `op`."""
    ladder = list(cudareduce.methods())
    op_peers = peers_of(op)
    if methods is None:
        chosen_ladder, named_peers = ladder, []
    else:
        names = [m.strip() for m in ([methods] if isinstance(methods, str)
                                     else methods)]
        unknown = [m for m in names if m not in ladder and m not in op_peers]
        if unknown:
            raise ValueError(
                f"unknown method {unknown[0]!r}; valid methods of {op}: "
                + ", ".join(ladder + list(op_peers)))
        chosen_ladder = [m for m in ladder if m in names]
        named_peers = [p for p in op_peers if p in names]
    if named_peers:
        if peers is False:
            raise ValueError("peers named in methods, but peers=False")
        return chosen_ladder, named_peers, True
    if peers is True:
        return chosen_ladder, list(op_peers), False
    if peers is False or peers is None:
        return chosen_ladder, [], False
    names = list(peers)
    unknown = [p for p in names if p not in op_peers]
    if unknown:
        raise ValueError(f"unknown peer {unknown[0]!r}; peers of {op}: "
                         + (", ".join(op_peers) or "none"))
    return chosen_ladder, [p for p in op_peers if p in names], True


def check_threads(threads: int | None) -> None:
    """Raise ValueError unless `threads` is None (each method's default)
    or a power of two from 64 to 1024 (an int, not a bool)."""
    if threads is None:
        return
    if not is_int(threads) or not 64 <= threads <= 1024 \
            or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two from 64 to 1024, "
                         f"got {threads!r}")


def check_block_size(methods: Iterable[str], op: str, dtype: str,
                     threads: int | None) -> None:
    """Raise ValueError, before anything is timed, where one of `methods`
    does not take `threads` for `op` on `dtype` (None: each method's
    default, always taken; :func:`cudareduce.block_sizes`)."""
    for method in methods if threads is not None else ():
        taken = cudareduce.block_sizes(op, numpy_dtype(dtype), method)
        if threads not in taken:
            raise ValueError(f"{method} runs {op} on {dtype} with "
                             f"{', '.join(map(str, taken))} threads per "
                             f"block only, not {threads} "
                             f"(cudareduce.block_sizes)")


def recorded_threads(name: str, n: int, dtype: str, threads: int | None,
                     sm_count: int) -> int:
    """The threads per block a result of `name` at `n` records: `threads`,
    or where it is None the block size the library picks for `name` (a
    ladder step, fast) and, for cub and the peers, which size their own
    blocks, fast's (they are listed beside it)."""
    if threads is not None:
        return threads
    method = name if name in cudareduce.methods() and name != \
        REFERENCE_METHOD else "fast"
    return cudareduce.plan(n, method, dtype=dtype,
                           sm_count=sm_count)[0].threads


def run(methods: Iterable[str] | None = None,
        sizes: int | Iterable[int] | None = None,
        dtype: str = DEFAULT_DTYPE, threads: int | None = DEFAULT_THREADS,
        peers: bool | Iterable[str] = True, progress: bool = True,
        *, seed: int | None = None, op: str = DEFAULT_OP) -> Results:
    """Measure the ladder on the current GPU: what ``python -m
    cudareduce.bench`` measures, from Python.

    Example (in a notebook the results show as a table)::

        from cudareduce import bench
        results = bench.run()              # float32, this GPU's default n
        paper = bench.run(sizes=2**22)     # Harris's size
        sweep = bench.run(sizes=[2**k for k in range(10, 29)])
        sweep.plot_bandwidth()
        products = bench.run(sizes=2**26, op="prod")

    Parameters
    ----------
    methods : iterable of str, optional
        Our methods to time (default: all: the ladder, ``fast``, ``cub``, in
        that order).  Peer names of the op (``"torch.sum"``, ``"cupy.sum"``
        for sum: :func:`~cudareduce.bench.names.peers_of`) may be listed too,
        and then only the peers listed are timed.
    sizes : int or iterable of int, optional
        Element count(s), each >= 1, no two the same.  Default: this GPU's
        default size, the smallest power of two at which the kernels, not
        the launches, decide the figures
        (:func:`~cudareduce.bench.floor.default_n`; the rule is in the
        document's ``timing.default_n_rule``, and is stated there when
        sizes are given too).
    dtype : str
        One of :data:`~cudareduce.bench.names.DTYPES` (default ``"float32"``).
    threads : int or None
        Threads per block of our kernels (default 256); None: each
        method's own default for the size (fast's grows with the input,
        :func:`cudareduce.plan` says which), recorded as
        :func:`recorded_threads` says.
    peers : bool or iterable of str
        True (default): every peer of the op that imports, sees a CUDA
        device and takes the dtype, silently skipping the others; False:
        none; or the names of the peers to time (a named peer that is
        unavailable is skipped with a note on stderr).
    progress : bool
        Show a progress bar when sweeping several sizes (``tqdm.auto``: the
        notebook widget inside Jupyter); False silences it.
    seed : int, optional
        Seed of the random data (default: fresh entropy every run).
    op : str
        The reduction timed, one of :data:`~cudareduce.bench.names.OPS`
        (default ``"sum"``), on data whose answer is exact
        (:func:`~cudareduce.bench.data.random_array`).

    Returns
    -------
    Results
        The document described in :mod:`cudareduce.bench` (a dict, valid
        for :func:`~cudareduce.bench.schema.validate_document`); ``results``
        grouped by size, our methods in order (the steps, then ``cub``),
        then peers.

    Raises
    ------
    cudareduce.CudaError
        No usable CUDA device, or a CUDA call failed.
    ValueError
        Unknown method, op, dtype or peer; bad threads or sizes.
    MemoryError
        Not enough GPU memory for an input.
    """
    if isinstance(dtype, np.dtype) or not isinstance(dtype, str):
        dtype = np.dtype(dtype).name
    if dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; supported: "
                         + ", ".join(DTYPES))
    if op not in OPS:
        raise ValueError(f"unsupported op {op!r}; supported: "
                         + ", ".join(OPS))
    check_threads(threads)
    if sizes is None:
        size_list = None        # the default: chosen on the GPU, below
    elif isinstance(sizes, (int, np.integer)) and not isinstance(sizes, bool):
        size_list = [int(sizes)]
    else:
        size_list = [int(n) for n in sizes]
    if size_list is not None and (not size_list
                                  or any(n < 1 for n in size_list)):
        raise ValueError(f"sizes must be >= 1, got {size_list!r}")
    if size_list is not None and len(set(size_list)) != len(size_list):
        # A document holds one result per (method, dtype, n, threads).
        raise ValueError(f"sizes must be distinct, got {size_list!r}")
    ladder, peer_names, named = _resolve(methods, peers, op)
    check_block_size(ladder, op, dtype, threads)

    info = device_info()
    timers: list[MethodTimer] = [method_timer(m, threads, op)
                                 for m in ladder]
    for name in peer_names:
        timer, why = load_peer(name, info["ordinal"], dtype)
        if timer is not None:
            timers.append(timer)
        elif named:
            print(f"cudareduce.bench: {name} skipped: {why}", file=sys.stderr)
    if not timers:
        raise ValueError("nothing to time: no methods selected")
    floor = measure_floor(info)
    itemsize = numpy_dtype(dtype).itemsize
    default, rule = default_n(itemsize, floor["empty_cold_us"], info)
    size_list = [default] if size_list is None else size_list
    arrays = device_arrays(dtype)

    rng = np.random.default_rng(seed)
    results, probes = [], []
    bar = Progress(len(size_list) * len(timers),
                   progress and len(size_list) > 1)
    try:
        for n in size_list:
            a = random_array(rng, n, dtype, op)
            reference = reference_result(a, op)
            buffers = rotation_buffers(n * itemsize, info["l2_bytes"],
                                       info["total_bytes"])
            probes.append(measure_probe(n * itemsize, info))
            x = None if arrays is None else arrays[1](a)
            for timer in timers:
                timings = measure_method(timer, a, reference, buffers, x)
                used = recorded_threads(timer.name, n, dtype, threads,
                                        info["sm_count"])
                results.append(
                    make_result(timer.name, dtype, n, used, **timings,
                                correct=True, op=op) if timings is not None
                    else make_result(timer.name, dtype, n, used,
                                     cold_us=None, batch_us=None,
                                     call_us=None, pass_us=[], reps=0,
                                     correct=False, op=op))
                bar.step(f"n=2^{math.log2(n):g} {timer.name}"
                         if n & (n - 1) == 0 else f"n={n} {timer.name}")
            del a, x
    finally:
        bar.close()
    timing = {"method": TIMING_METHOD.format(
                  arrays="none: no CuPy or PyTorch, so no call time"
                  if arrays is None else f"{arrays[0]}'s"),
              "default_n": default, "default_n_rule": rule}
    return Results(make_document(info, floor, probes, results,
                                 timing=timing))


def _driver() -> str | None:
    """The driver's version as nvidia-smi prints it ("580.159.04"), or
    None where nvidia-smi is missing or fails."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.split("\n")[0].strip() or None


def device_info() -> dict:
    """The current CUDA device as the bench sees it: the extension's
    ``device_info()`` (name, SMs, L2, memory, peak clocks, CUDA versions,
    CCCL's) and the driver's version (``"driver"``, from nvidia-smi, None
    without it).

    Raises
    ------
    cudareduce.CudaError
        No usable CUDA device.
    """
    return {**_cudareduce.device_info(), "driver": _driver()}
