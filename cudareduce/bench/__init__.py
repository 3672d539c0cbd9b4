"""``python -m cudareduce.bench``: what each step of the ladder buys here,
and why.

Times every method of :func:`cudareduce.methods` (and, when importable, the
peers: ``torch.sum`` and ``cupy.sum`` for sums, PyTorch's and CuPy's
function of another op, :func:`~cudareduce.bench.names.peers_of`) reducing with one op of
:data:`~cudareduce.bench.names.OPS` (``--op``, default ``sum``) three ways, beside an empty kernel
and a read-only streaming kernel timed the same way in the same run, and
prints one table per (op, dtype, n, threads)::

    python -m cudareduce.bench              # float32 sum, this GPU's default n
    python -m cudareduce.bench --n 2^22     # Harris's size
    python -m cudareduce.bench --sizes 2^10..2^28 --json r.json --plot r.png
    python -m cudareduce.bench --op prod --dtype int32   # any op, any dtype
    python -m cudareduce.bench --counters   # each step's hardware counters
    python -m cudareduce.bench --axis       # along an axis, under the floor
    python -m cudareduce.bench --exact      # what exact=True costs

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
  run), made for the op (:func:`~cudareduce.bench.data.random_array`) so that its answer is exact
  in every order and accumulator: for sums non-zero integers, of either
  sign, of magnitude up to 1000 -- for float32 fewer as n grows
  (:func:`~cudareduce.bench.data.value_limit`); for products ones with a dozen factors of -1, 2
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
  (:func:`~cudareduce.bench.data.reference_result`) *before* it is timed (a short pilot run), and
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
:mod:`cudareduce.bench.schema`): the device and its software (clocks, driver,
CUDA runtime, CCCL), the date, the timing method and the default-size rule,
the floor (empty kernel, read ceiling), the read probe at each size, and one
result per (method, op, dtype, n, threads) with ``op`` (a result without
one, of a document written before, is a sum: :func:`~cudareduce.bench.names.op_of`), ``cold_us``,
``batch_us``, ``call_us``, ``pass_us`` (the cold time of each pass; empty
for ``cub`` and the peers, whose launches are their own), ``reps`` and
``correct``.  Peers appear as methods named for their library's function
of the op (:func:`~cudareduce.bench.names.peers_of`): ``"torch.sum"`` and ``"cupy.sum"`` for sums,
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
time, in µs, of each end-to-end call of :func:`~cudareduce.bench.peers.measure_latency` on
``LATENCY_N`` float32 elements that ran: ``"torch.sum(x).item()"``,
``"float(cudareduce.sum(x)), torch x"``, ``"float(cupy.sum(x))"``,
``"float(cudareduce.sum(x)), cupy x"`` (a library that does not import, or
sees no GPU, is left out).  :func:`~cudareduce.bench.peers.comparison_op` is the op compared,
:func:`~cudareduce.bench.peers.comparison_dtypes` its dtypes (a document without ``"dtypes"``,
from before they were recorded, compared :data:`~cudareduce.bench.peers.COMPARE_DTYPES`).

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
a GPU), then, where n is a multiple of 1024, along each axis of the same
array as (n // 1024, 1024), C-contiguous (axis 1 reduces its rows, axis 0
its columns): ``"cudareduce.sum(a, axis=1)"``, ``"numpy.sum(a,
axis=1)"``, ``"cudareduce.sum(a, axis=0)"`` and ``"numpy.sum(a,
axis=0)"``, each checked against the exact sums
(:func:`~cudareduce.bench.host.axis_correct`).  A document written before
the along-axis calls were timed has none, and reads as ever.
``median_ms`` is the median wall time of the whole call (the copy
to the GPU included, the result back on the host), ``gbps`` array bytes
over it, ``pinned_gbps`` the pinned host-to-device copy of the same run.

The ``--axis`` document (``--axis --json``)
-------------------------------------------
Reductions along one axis of device arrays (issue 43), checked by
:func:`~cudareduce.bench.axis_schema.validate_axis_document`, its keys
and the floor's arithmetic in :mod:`~cudareduce.bench.axis_schema`.  What
:func:`run_axes` returns::

    {"kind": "axis", "schema": 1, "cudareduce_version": str, "date": str,
     "device": {...},            # as the JSON document's, above
     "software": {"numpy", "cupy", "torch": str | null,
                  "cupy_accelerators": {"reduction", "routine"} | null},
     "timing": {"method": str},
     "floor": {"empty_cold_us": float, "empty_batch_us": float},
     "probes": [{"bytes", "read_cold_us", "read_batch_us", "copy_cold_us",
                 "copy_batch_us", "read_cold_gbps", ..., "write_batch_gbps"}],
     "results": [{"method", "op", "dtype", "shape", "axis", "read_bytes",
                  "write_bytes", "cold_us", "batch_us", "batch", "reps",
                  "gbps", "floor_cold_us", "floor_batch_us", "pct_floor",
                  "correct", "unavailable"}, ...]}

One result per (dtype, case, method) of
:data:`~cudareduce.bench.axes.AXIS_CASES` (float32 unless ``--dtype``
names others; ``--op`` the op of the cases but the argmax one): ours,
``fast``, ``cub`` and the ladder's steps, each as
``cudareduce.<op>(x, axis=axis, method=m)`` on a CuPy array (a PyTorch
tensor for bfloat16), and the peers: ``"torch.sum"`` (``torch.<fn>(x,
dim=axis)``), ``"cupy.sum"`` (``cupy.<fn>(x, axis=axis)``, CuPy's default
accelerators) and ``"cupy.sum[cub]"`` (the same with CuPy's reduction and
routine accelerators ``["cub"]``: CUB's segmented reduce where the reduced
axes are contiguous).  A method that refuses (``cub`` and the steps do
not reduce along axes yet) or a peer that takes no such dtype is
``unavailable``, with its error, and untimed; each other is checked
against NumPy on the host copy (exact for integers, indices and the
elements min and max select, else within 4 ulps of the result dtype of a
float64 reference) before and after its timings, and if WRONG keeps no
figures.  Every call is timed from Python behind the stream holder, on one
non-blocking stream current in CuPy and PyTorch
(:func:`~cudareduce.bench.timers.time_queued`): ``cold_us`` (L2 flushed,
one call a sample), ``batch_us`` (``batch`` calls a sample); ``gbps`` is
(R + W) / ``batch_us``, R the input's bytes (``read_bytes``), W the
result's (``write_bytes``, its elements times NumPy's result itemsize).
The floor, each way, from probes of the same run at R bytes
(:func:`~cudareduce.bench.axis_schema.floor_us`): the empty kernel, plus
R at the read probe's rate, plus W at the write rate a device-to-device
copy of R bytes gives (it reads and writes them); ``pct_floor`` is 100 x
``floor_batch_us`` / ``batch_us``.  :func:`format_axes` prints it a row
per case; :func:`~cudareduce.bench.plot.plot_axes` draws the shares of
the floor.

The ``--exact`` document (``--exact --json``)
---------------------------------------------
What ``exact=True`` costs (issue 44), checked by
:func:`~cudareduce.bench.exact_schema.validate_exact_document`, its keys
in :mod:`~cudareduce.bench.exact_schema`.  What :func:`run_exact`
returns::

    {"kind": "exact", "schema": 1, "cudareduce_version": str, "date": str,
     "device": {...},            # as the JSON document's, above
     "software": {"numpy", "cupy", "torch": str | null,
                  "gpu_to_gpu_cccl": str | null},
     "timing": {"method": str},
     "floor": {"empty_cold_us": float, "empty_batch_us": float},
     "probes": [{"bytes", "read_cold_us", "read_batch_us"}, ...],
     "results": [{"method", "dtype", "data", "n", "bytes", "cold_us",
                  "batch_us", "batch", "reps", "gbps", "floor_cold_us",
                  "floor_batch_us", "pct_floor", "correct",
                  "unavailable"}, ...]}

One result per (dtype, data, n, method) of whole-array sums: ``"fast"``
(``cudareduce.sum(x, out=o)``), ``"exact"`` (the same with
``exact=True``), ``"cub"`` (``method="cub"``) and ``"cub_gpu_to_gpu"``
(CUB's deterministic reduce through the harness
benchmarks/cub_gpu_to_gpu.cu, ``--gpu-to-gpu``; unavailable without it,
and for other dtypes than float32 and float64), on a CuPy array (a
PyTorch tensor for bfloat16) of each kind of data of
:data:`~cudareduce.bench.exact.EXACT_DATA` (``"normal"``, ``"spread"``,
``"wide"``: :func:`~cudareduce.bench.exact.exact_data`).  ``exact`` is checked
bit for bit against the exact sum rounded once
(:mod:`~cudareduce.bench.exact_reference`), the others against their
rounding bound of it, before and after their timings, timed as
``--axis`` times (``cold_us``, ``batch_us``); the floor each way is the
read probe over the input's bytes; ``gbps`` is the bytes over
``batch_us``, ``pct_floor`` 100 x ``floor_batch_us`` / ``batch_us``.
:func:`format_exact` prints it a row per size.

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
:mod:`~cudareduce.bench.peers`, :mod:`~cudareduce.bench.host`,
:mod:`~cudareduce.bench.axes` (``--axis``) and
:mod:`~cudareduce.bench.exact` (``--exact``), with
:mod:`~cudareduce.bench.devices` (the stream and copies of the modes
timed from Python) and :mod:`~cudareduce.bench.exact_reference` (exact
sums, correctly rounded), and
:mod:`~cudareduce.bench.cli` (the command line); and the document model,
which needs no GPU and no compiled extension: :mod:`~cudareduce.bench.names`
(dtypes, ops, methods, peers), :mod:`~cudareduce.bench.schema` (the JSON
document, its rules and their check),
:mod:`~cudareduce.bench.axis_schema` (the ``--axis`` document, its floor
and its check), :mod:`~cudareduce.bench.exact_schema` (the ``--exact``
document and its check), :mod:`~cudareduce.bench.figures`
(GB/s, speedups, the tables), :mod:`~cudareduce.bench.results`
(:class:`Results`, a document with its tables and plots as methods),
:mod:`~cudareduce.bench.plot` (the figures, with matplotlib) and
:mod:`~cudareduce.bench.reference` (published ladder timings).

This package's own names are the entry points (``__all__``); everything
else is imported from the module that defines it.  Each is imported on
first use, so that the document model is imported without the timers and
their compiled extension: ``from cudareduce.bench import Results`` works on
a checkout that was not built, ``bench.run`` there raises the package's
ImportError that says so.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # for type checkers and editors; imported on first use
    from .axes import format_axes, run_axes
    from .cli import main
    from .exact import format_exact, run_exact
    from .figures import format_table
    from .host import format_host, run_host
    from .ladder import device_info, run
    from .peers import compare, format_comparison
    from .results import Results
    from .schema import validate_document

#: Each entry point: the module that defines it.
_ENTRY_POINTS = {"Results": "results", "compare": "peers",
                 "device_info": "ladder", "format_axes": "axes",
                 "format_comparison": "peers", "format_exact": "exact",
                 "format_host": "host", "format_table": "figures",
                 "main": "cli", "run": "ladder", "run_axes": "axes",
                 "run_exact": "exact", "run_host": "host",
                 "validate_document": "schema"}

__all__ = sorted(_ENTRY_POINTS)


def __getattr__(name: str) -> object:
    """An entry point, from its module on first use (PEP 562)."""
    if name not in _ENTRY_POINTS:
        raise AttributeError(f"module {__name__!r} has no attribute "
                             f"{name!r}")
    module = importlib.import_module(f".{_ENTRY_POINTS[name]}", __name__)
    value = globals()[name] = getattr(module, name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
