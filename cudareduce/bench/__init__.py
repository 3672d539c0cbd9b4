"""``python -m cudareduce.bench``: what each step of the ladder buys here,
and why.

Times every method of :func:`cudareduce.methods` (and, when importable, the
peers: ``torch.sum`` and ``cupy.sum`` for sums, PyTorch's and CuPy's
function of another op, :func:`peers_of`) reducing with one op of
:data:`OPS` (``--op``, default ``sum``) three ways, beside an empty kernel
and a read-only streaming kernel timed the same way in the same run, and
prints one table per (op, dtype, n, threads)::

    python -m cudareduce.bench              # float32 sum, this GPU's default n
    python -m cudareduce.bench --n 2^22     # Harris's size
    python -m cudareduce.bench --sizes 2^10..2^28 --json r.json --plot r.png
    python -m cudareduce.bench --op prod --dtype int32   # any op, any dtype
    python -m cudareduce.bench --counters   # each step's hardware counters

The same from Python (the command line is a thin layer over it)::

    from cudareduce import bench
    results = bench.run(sizes=[2**k for k in range(10, 29)])   # a Results
    products = bench.run(sizes=2**26, dtype="int32", op="prod")
    results.select(n=2**22)      # in Jupyter: an HTML table; print() it else
    results.plot_step_speedups(); results.plot_bandwidth()
    results.to_json("r.json"); bench.Results.from_json("r.json")
    from cudareduce.bench import counters
    counters.collect()           # ncu's counters of every method's kernels

How a figure is measured
------------------------
- Fresh random data for every size of every run (``--seed`` to repeat a
  run), made for the op (:func:`random_array`) so that its answer is exact
  in every order and accumulator: for sums non-zero integers, of either
  sign, of magnitude up to 1000 -- for float32 fewer as n grows
  (:func:`value_limit`); for products ones with a dozen factors of -1, 2
  and 0.5 (floats) or 2, 3, -1; for min and max integers with each end of
  their range once; for their places (argmin, ..., nanargmax) the same
  but for one end twice or thrice (the first of equal extremes decides),
  and for argmin and argmax on floats half the time one NaN, which then
  decides; for any and all zeros or non-zeros with a few of the other; a
  few NaNs for the NaN-skipping ops on floats.  complex64 and complex128
  alike, part by part: 1j and -1j among the factors, each end of min's
  and max's real range held by two elements that the imaginary part
  tells apart, non-zeros zero in one part, NaN in either part.  The
  data's values do not change a kernel's time (no denormals, no
  data-dependent branches).
- Each method's result is checked against NumPy's answer computed exactly
  (:func:`reference_result`) *before* it is timed (a short pilot run), and
  after every timing: it must equal it, NaN as NaN.  Every element of a
  sum counts at least 1, so a method that loses or doubles a single element
  anywhere is reported as WRONG and not timed (``correct: false``, its
  timings null); the deciding elements of the other ops' data are at
  random places, sometimes the last.
- GPU time is taken as NVIDIA's nvbench takes it (its
  ``blocking_kernel.cuh`` and ``l2flush.cuh``): a kernel holds the stream
  until the timed work is queued behind it, so that the CUDA events around
  the work time the GPU and not the host's launch latency (6.3 µs for an
  empty kernel timed plainly on an H100, 3.2 µs cold and 1.9 µs back to
  back behind the holder).  **Cold**: before each sample the L2 cache is
  overwritten, then one run, with an event after each of its passes (the
  per-pass times).  **Back to back**: each sample queues several runs
  (:func:`~cudareduce.bench.policy.choose_batch`), the figure is per run.
  **Call**: the wall time of the Python call a user makes on a device array
  (CuPy's, else PyTorch's), the result on the host.  Our loops run in C
  (``_cudareduce.time_reduce``); the peers run from Python behind the same
  holding kernel (``_cudareduce.stream_hold``).  Medians of reps chosen from
  the pilot so that each timing takes about ``TARGET_SECONDS``, clamped to
  [``MIN_REPS``, ``MAX_REPS``], after ``WARMUP`` untimed samples.
- When the input is smaller than 4x the L2 cache, the runs rotate among
  ``ceil(4 * L2 / nbytes)`` copies of it (at most ``MAX_BUFFERS``, and at most
  a quarter of device memory in total), so that back-to-back figures measure
  memory, not cache.
- The default size is chosen per GPU
  (:func:`~cudareduce.bench.floor.default_n`): the smallest power of two
  whose read probe takes at least 25 empty kernels, so that the kernels,
  not the launches, decide; the rule and its figures are printed and
  stored (``timing.default_n_rule``).

Units
-----
- A timing's GB/s is bytes *read* (``n * itemsize`` of the input) per
  second, in 1e9 bytes/s, whatever the op and its result (an arg op's
  int64 index).
- "% read" is the read probe's time over the method's at the same size,
  timed the same way: how close the method comes to only reading its input.
- Step speedup: the previous method's cold time over this one's (ladder
  order, then ``fast``, among the methods timed and correct); cumulative:
  the first timed, correct method's over this one's.  The references --
  ``cub`` (``cub::DeviceReduce`` inside this library) and the peers -- get a
  cumulative speedup (over the same first method) and no step speedup.

The JSON document (``--json``)
------------------------------
Schema 2, checked by :func:`validate_document` (see
:mod:`cudareduce.results`): the device and its software (clocks, driver,
CUDA runtime, CCCL), the date, the timing method and the default-size rule,
the floor (empty kernel, read ceiling), the read probe at each size, and one
result per (method, op, dtype, n, threads) with ``op`` (a result without
one, of a document written before, is a sum: :func:`op_of`), ``cold_us``,
``batch_us``, ``call_us``, ``pass_us`` (the cold time of each pass; empty
for ``cub`` and the peers, whose launches are their own), ``reps`` and
``correct``.  Peers appear as methods named for their library's function
of the op (:func:`peers_of`): ``"torch.sum"`` and ``"cupy.sum"`` for sums,
``"torch.amin"`` and ``"cupy.min"`` for min, ``"cupy.nanprod"`` alone for
nanprod, ``"torch.argmin"`` and ``"cupy.argmin"`` for argmin, ...; a peer
whose function refuses the dtype (tried on one element first: PyTorch's
mean refuses integers, its argmin bool) is left out.
Their ``threads`` is the run's setting (they choose their own launches).

The ``--peers`` document (``--peers --json``)
---------------------------------------------
What :func:`compare` returns::

    {"results": <the JSON document above: fast, cub and the peers of the
                 op, each of its dtypes at each of COMPARE_SIZES; for
                 another op than sum, or dtypes without BASELINE_DTYPE,
                 fast's sum of BASELINE_DTYPE at the largest size last>,
     "latency_us": {call: float, ...},
     "dtypes": [str, ...]}       # COMPARE_DTYPES unless --dtype said

``latency_us`` holds, for sums (empty for another op), the median wall
time, in µs, of each end-to-end call of :func:`measure_latency` on
``LATENCY_N`` float32 elements that ran: ``"torch.sum(x).item()"``,
``"float(cudareduce.sum(x)), torch x"``, ``"float(cupy.sum(x))"``,
``"float(cudareduce.sum(x)), cupy x"`` (a library that does not import, or
sees no GPU, is left out).  :func:`comparison_op` is the op compared,
:func:`comparison_dtypes` its dtypes (a document without ``"dtypes"``,
from before they were recorded, compared :data:`COMPARE_DTYPES`).

The ``--host`` document (``--host --json``)
-------------------------------------------
Sums only.  What :func:`run_host` returns::

    {"device": {...},            # as the JSON document's, above
     "date": str,
     "pinned_gbps": float,
     "results": [{"call": str, "dtype": str, "n": int, "median_ms": float,
                  "gbps": float, "correct": bool}, ...]}

One result per (dtype, n, call); the calls are ``"cudareduce.sum(a)"``,
``"numpy.sum(a)"``, ``"torch.from_numpy(a).cuda().sum().item()"`` and
``"cupy.asarray(a).sum().item()"`` (the last two where they import and see
a GPU).  ``median_ms`` is the median wall time of the whole call (the copy
to the GPU included, the result back on the host), ``gbps`` array bytes
over it, ``pinned_gbps`` the pinned host-to-device copy of the same run.

The package
-----------
One job per module: :mod:`~cudareduce.bench.sizes` (element counts),
:mod:`~cudareduce.bench.data` (the input data and its exact check),
:mod:`~cudareduce.bench.policy` (warm-up, reps, batches, rotation),
:mod:`~cudareduce.bench.timers` (ours, the peers', the probes, the wall
clock), :mod:`~cudareduce.bench.floor` (the probes of a run and the
default-size rule), :mod:`~cudareduce.bench.progress` (the progress bar),
the modes :mod:`~cudareduce.bench.ladder` (the default),
:mod:`~cudareduce.bench.counters` (``--counters``),
:mod:`~cudareduce.bench.peers` and :mod:`~cudareduce.bench.host`, and
:mod:`~cudareduce.bench.cli` (the command line).  The results it
measures are :class:`Results` (:mod:`cudareduce.document`) over the
results model (:mod:`cudareduce.results`), re-exported here.
"""
from __future__ import annotations

from cudareduce.document import Results
from cudareduce.results import (DEFAULT_OP, DTYPES, OPS, PEER_FUNCTIONS,
                                REFERENCE_METHOD, RESULT_KEYS, TABLE_HEADERS,
                                format_group, format_table, group_results,
                                is_peer, is_reference, make_document,
                                make_result, op_of, order_results, peers_of,
                                speedups, table_groups, validate_document,
                                write_json)

from .cli import main
from .data import is_correct, random_array, reference_result, value_limit
from .floor import default_n, measure_floor, measure_probe
from .host import (HOST_DTYPES, HOST_SIZES, HostRatios, format_host,
                   host_ratios, run_host)
from .ladder import (DEFAULT_DTYPE, DEFAULT_THREADS, device_info,
                     measure_method, run)
from .peers import (BASELINE_DTYPE, COMPARE_DTYPES, COMPARE_SIZES,
                    LATENCY_N, compare, comparison_dtypes, comparison_op,
                    comparison_ratios, floor_us, format_comparison,
                    measure_latency)
from .policy import (MAX_BUFFERS, MAX_REPS, MIN_REPS, PILOT_REPS,
                     PILOT_WARMUP, TARGET_SECONDS, WARMUP, choose_batch,
                     choose_reps, rotation_buffers)
from .sizes import PAPER_N, parse_size, parse_sizes
from .timers import MethodTimer, load_peer, method_timer

__all__ = [
    "BASELINE_DTYPE", "COMPARE_DTYPES", "COMPARE_SIZES", "DEFAULT_DTYPE",
    "DEFAULT_OP", "DEFAULT_THREADS", "DTYPES", "HOST_DTYPES", "HOST_SIZES",
    "LATENCY_N", "MAX_BUFFERS", "MAX_REPS", "MIN_REPS", "OPS", "PAPER_N",
    "PEER_FUNCTIONS", "PILOT_REPS", "PILOT_WARMUP", "REFERENCE_METHOD",
    "RESULT_KEYS", "TABLE_HEADERS", "TARGET_SECONDS", "WARMUP", "HostRatios",
    "MethodTimer", "Results", "choose_batch", "choose_reps", "compare",
    "comparison_dtypes", "comparison_op", "comparison_ratios", "default_n",
    "device_info",
    "floor_us", "format_comparison", "format_group", "format_host",
    "format_table", "group_results", "host_ratios", "is_correct", "is_peer",
    "is_reference", "load_peer", "main", "make_document", "make_result",
    "measure_floor", "measure_latency", "measure_method", "measure_probe",
    "method_timer", "op_of", "order_results", "parse_size", "parse_sizes",
    "peers_of", "random_array", "reference_result", "rotation_buffers",
    "run", "run_host", "speedups", "table_groups", "validate_document",
    "value_limit", "write_json",
]
