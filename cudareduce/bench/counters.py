"""Hardware counters per ladder step, from NVIDIA Nsight Compute's CLI
(``ncu``): *why* each step is faster, beside the bench's *how much*.

:func:`collect` runs this module as the profiled program under ``ncu``
(:func:`ncu_command`), which reduces one host array (the bench's data of
the op) with each chosen method once (``time_reduce`` in ``"launch"``
mode), and reads the counters of
:data:`METRICS` for every kernel those reductions launch
(:func:`parse_ncu_csv`).  :func:`format_counters` prints them, one method's
first pass (the one that reads the input) in full and its later passes
summed, with under each step the counters that show its idea
(:func:`what_changed`, keyed by :data:`STEP_COUNTERS`);
:func:`check_ideas` states the claims the project checks on the GPU::

    python -m cudareduce.bench.counters --n 2^22 --methods sequential,first_add

Reading performance counters needs permission: without it, or
without ``ncu``, :func:`collect` raises :class:`CountersUnavailable`, which
the bench catches to go on without counters.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

import cudareduce
from .figures import format_n, group_title, render
from .names import DEFAULT_OP, DTYPES, OPS, REFERENCE_METHOD, op_of
from .schema import now

from .data import random_array
from .ladder import check_block_size, device_info
from .sizes import PAPER_N, argument_type, parse_size

__all__ = ["DEFAULT_N", "DOCUMENT_KEYS", "IDEAS", "METRICS", "STEP_COUNTERS",
           "CountersUnavailable", "Idea", "Metric", "check_ideas", "collect",
           "find_ncu", "format_counters", "main", "ncu_command",
           "parse_ncu_csv", "what_changed"]

#: The size profiled when none is given: Harris's 2^22.
DEFAULT_N = PAPER_N

#: The keys of a counters document (:func:`collect`); one written before
#: the bench profiled other reductions than sums has no "op"
#: (:func:`~cudareduce.bench.names.op_of`).
DOCUMENT_KEYS = ("ncu_version", "gpu", "driver", "date", "op", "n", "dtype",
                 "threads", "metrics", "rows")

#: This module's name for ``python -m``: the profiled program is this module.
_MODULE = "cudareduce.bench.counters"


class Metric(NamedTuple):
    """One counter shown: how ncu names it, how the table labels it, its
    unit (which also sets its format) and what it reveals."""

    name: str
    label: str
    unit: str
    """``ns``, ``blocks``, ``threads``, ``inst``, ``conflicts``,
    ``threads/inst`` or ``%``."""
    meaning: str


#: The counters, in the table's column order.
METRICS: tuple[Metric, ...] = (
    Metric("gpu__time_duration.sum", "time", "ns",
           "kernel time under ncu, which locks the clocks at base and replays "
           "the kernel once per counter pass: compare steps with each other, "
           "not with the bench's times"),
    Metric("launch__grid_size", "grid", "blocks", "blocks launched"),
    Metric("launch__block_size", "block", "threads", "threads per block"),
    Metric("smsp__inst_executed.sum", "instructions", "inst",
           "warp instructions executed: the work a step's idea removes "
           "(idle and divergent warps, index arithmetic, loop and barrier "
           "overhead)"),
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "ld conflicts", "conflicts",
           "shared-memory bank conflicts of loads: threads of a warp reading "
           "one bank at different addresses, served one after another"),
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "st conflicts", "conflicts",
           "shared-memory bank conflicts of stores"),
    Metric("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
           "threads/inst", "threads/inst",
           "threads doing an executed warp instruction, predicated-on ones "
           "only (at most 32): fewer is divergence"),
    Metric("smsp__sass_average_branch_targets_threads_uniform.pct",
           "uniform br", "%",
           "branches whose threads all took the same target: below 100% is "
           "divergence"),
    Metric("smsp__warp_issue_stalled_barrier_per_warp_active.pct",
           "barrier stall", "%",
           "share of warp cycles stalled at a __syncthreads() barrier"),
    Metric("sm__warps_active.avg.pct_of_peak_sustained_active",
           "occupancy", "%",
           "achieved occupancy: active warps per SM, % of the most it holds"),
    Metric("dram__throughput.avg.pct_of_peak_sustained_elapsed",
           "DRAM", "%",
           "DRAM throughput, % of peak: near 100% the kernel is memory "
           "bound"),
)

_BY_NAME = {m.name: m for m in METRICS}

#: How ncu writes each unit in the CSV's units row under
#: ``--print-units base`` (no SI prefix); other units print as "".
_NCU_UNITS = {"ns": ("ns", "nsecond"), "inst": ("inst",), "%": ("%",)}

#: Units whose values of several passes add up; other later-pass cells show
#: the value only where every pass has the same.
_ADDITIVE = ("ns", "blocks", "inst", "conflicts")

_INSTRUCTIONS = "smsp__inst_executed.sum"
_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
_GRID = "launch__grid_size"
_BARRIER = "smsp__warp_issue_stalled_barrier_per_warp_active.pct"
_DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"

#: The counters that show each step's idea, compared with the step before
#: it.  ``cub`` is the reference, the first step has nothing before it.
STEP_COUNTERS: dict[str, tuple[str, ...]] = {
    "interleaved_bank_conflict": (_INSTRUCTIONS,),
    "sequential": (_LD_CONFLICTS,),
    "first_add": (_GRID, _INSTRUCTIONS),
    "unroll_warp": (_INSTRUCTIONS, _BARRIER),
    "unroll_complete": (_INSTRUCTIONS,),
    "multi_element": (_GRID, _DRAM),
    "fast": (_INSTRUCTIONS, _DRAM),
}


class Idea(NamedTuple):
    """A claim on first passes: `method`'s `metric` is at least (or, if
    `exact`, exactly) `factor` times `other`'s."""

    method: str
    other: str
    metric: str
    factor: float
    exact: bool


#: The claims :func:`check_ideas` checks.
IDEAS: tuple[Idea, ...] = (
    Idea("interleaved_bank_conflict", "sequential", _LD_CONFLICTS, 50, False),
    Idea("interleaved_divergent", "interleaved_bank_conflict", _INSTRUCTIONS,
         1.5, False),
    Idea("first_add", "sequential", _GRID, 0.5, True),
)


class CountersUnavailable(RuntimeError):
    """ncu is missing, may not read the counters, or failed: the message
    says which and what to do."""


# ---------------------------------------------------------------------------
# The ncu command and the profiled program


def _check_methods(methods: Iterable[str] | None) -> list[str]:
    """The chosen methods (all, in ladder order, for None), checked: they
    also become a regular expression and a command-line argument."""
    known = list(cudareduce.methods())
    if methods is None:
        return known
    chosen = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in chosen if m not in known]
    if unknown or not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"methods must be distinct names of "
                         f"cudareduce.methods() {known}, got {chosen}")
    return chosen


def _check_reduction(n: int, dtype: str, threads: int, op: str) -> None:
    if n < 1 or threads < 1 or dtype not in DTYPES or op not in OPS:
        raise ValueError(f"n and threads must be >= 1, dtype one of "
                         f"{DTYPES} and op one of {OPS}, got {n}, {threads}, "
                         f"{dtype!r}, {op!r}")


def _kernel_filter(methods: Sequence[str]) -> str:
    """The regular expression that selects the methods' kernels by their
    demangled names (``void reduce_sequential<float, ...>(...)``, ``void
    cub::DeviceReduceKernel<...>(...)``) and no other kernel."""
    patterns = [f"reduce_{re.escape(m)}<" for m in methods
                if m != REFERENCE_METHOD]
    if REFERENCE_METHOD in methods:
        # CUB's versioned namespace may stand between cub:: and the name.
        patterns.append("cub::.*DeviceReduce")
    return "|".join(patterns)


def ncu_command(methods: Iterable[str] | None = None, n: int = DEFAULT_N,
                dtype: str = "float32", threads: int = 256, *,
                op: str = DEFAULT_OP, ncu: str = "ncu",
                log_file: str = "counters.csv",
                python: str = sys.executable) -> list[str]:
    """The command that profiles the kernels of `methods` reducing `n`
    elements of `dtype` with `op` and `threads` threads per block.

    ncu matches ``--kernel-name regex:`` anywhere in the name that
    ``--kernel-name-base`` sets; the demangled name is the one that carries
    the namespace of CUB's kernels.  ``--log-file`` keeps the CSV apart from
    the profiled program's output, ``--print-units base`` keeps values
    unscaled, ``--clock-control base`` (ncu's default, stated) keeps the
    clocks at base so that runs compare.

    Returns
    -------
    list of str
        The argument vector (``shlex.join`` it to show it).

    Raises
    ------
    ValueError
        Unknown or repeated methods, n or threads < 1, a dtype not in
        :data:`cudareduce.bench.names.DTYPES`, an op not in
        :data:`cudareduce.bench.names.OPS`.
    """
    chosen = _check_methods(methods)
    _check_reduction(n, dtype, threads, op)
    check_block_size(chosen, op, dtype, threads)
    # The profiled program's --op defaults to sum, as here.
    op_option = [] if op == DEFAULT_OP else ["--op", op]
    return [ncu, "--csv", "--page", "raw", "--print-units", "base",
            "--clock-control", "base", "--log-file", log_file,
            "--kernel-name-base", "demangled",
            "--kernel-name", f"regex:{_kernel_filter(chosen)}",
            "--metrics", ",".join(m.name for m in METRICS),
            python, "-m", _MODULE,
            "--profile-target", "--n", str(n), "--dtype", dtype,
            "--threads", str(threads), *op_option,
            "--methods", ",".join(chosen)]


def _profile_target(n: int, dtype: str, threads: int,
                    methods: Sequence[str], op: str) -> None:
    """Reduce one random array of `n` elements once with each method and
    `op`, in order: the launches ncu profiles."""
    from cudareduce import _cudareduce  # noqa: PLC0415  (the GPU side)
    # The values do not change the counters (no data-dependent branches,
    # no denormals): the bench's data of the op will do.
    a = random_array(np.random.default_rng(0), n, dtype, op)
    for method in methods:
        # "launch" mode: the method's kernels and nothing else on the GPU
        # (no stream-holding kernel, no L2 flush).
        result = _cudareduce.time_reduce(op, a, method, threads, 1, 0, 1,
                                         "launch")[0]
        print(method, result, flush=True)


# ---------------------------------------------------------------------------
# Finding and running ncu


def find_ncu() -> str | None:
    """The ``ncu`` executable: on PATH, else in ``$CUDA_HOME/bin``, else in
    ``/usr/local/cuda/bin`` (toolkits do not always put it on PATH)."""
    dirs = [os.environ.get("PATH", os.defpath)]
    if os.environ.get("CUDA_HOME"):
        dirs.append(os.path.join(os.environ["CUDA_HOME"], "bin"))
    dirs.append("/usr/local/cuda/bin")
    return shutil.which("ncu", path=os.pathsep.join(dirs))


_NO_PERMISSION = (
    "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM: the "
    "user does not have permission to access NVIDIA GPU Performance "
    "Counters).  Run as root, or let every user profile: load the NVIDIA "
    "driver with NVreg_RestrictProfilingToAdminUsers=0 (a line 'options "
    "nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then "
    "reload the driver or reboot; in a container, the host's driver decides); "
    "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _ncu_version(ncu: str) -> str:
    """``2025.3.1.0`` from ``ncu --version``'s ``Version ...`` line (its
    whole output where it has none)."""
    out = subprocess.run([ncu, "--version"], capture_output=True, text=True,
                         check=False).stdout
    match = re.search(r"Version\s+(\S+)", out)
    return match.group(1) if match else out.strip()


def collect(methods: Iterable[str] | None = None, n: int = DEFAULT_N,
            dtype: str = "float32", threads: int = 256, *,
            op: str = DEFAULT_OP, ncu: str | None = None,
            timeout_s: float = 900) -> dict:
    """Profile `methods` (all for None) under ncu; the counters of every
    kernel they launch.

    Parameters
    ----------
    methods : iterable of str, optional
        Names of :func:`cudareduce.methods`, in the order to profile them.
    n, dtype, threads, op
        The reduction profiled.
    ncu : str, optional
        The ncu executable; :func:`find_ncu`'s by default.
    timeout_s : float
        How long the profile may take.

    Returns
    -------
    dict
        ``{"ncu_version", "gpu", "driver", "date", "op", "n", "dtype",
        "threads", "metrics": [ncu metric names], "rows": [...]}``: the GPU
        (its name, and the driver's version as nvidia-smi gives it) and the
        date say where the counters come from; rows as
        :func:`parse_ncu_csv` gives them.  JSON-able.

    Raises
    ------
    CountersUnavailable
        No ncu; no permission to read the counters (ERR_NVGPUCTRPERM); any
        other failure of the profile, with the end of ncu's output.
    ValueError
        Arguments :func:`ncu_command` refuses.
    """
    chosen = _check_methods(methods)
    _check_reduction(n, dtype, threads, op)
    check_block_size(chosen, op, dtype, threads)
    exe = ncu or find_ncu()
    if exe is None:
        raise CountersUnavailable(
            "Nsight Compute's ncu was not found on PATH, in $CUDA_HOME/bin or "
            "in /usr/local/cuda/bin: install Nsight Compute (the CUDA "
            "toolkit's nsight-compute package) or put ncu on PATH")
    with tempfile.TemporaryDirectory(prefix="cudareduce-ncu-") as tmp:
        log_file = os.path.join(tmp, "ncu.csv")
        command = ncu_command(chosen, n, dtype, threads, op=op, ncu=exe,
                              log_file=log_file)
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CountersUnavailable(
                f"ncu took more than {timeout_s:g} s") from exc
        except OSError as exc:
            raise CountersUnavailable(f"ncu did not start: {exc}") from exc
        log = ""
        if os.path.exists(log_file):
            with open(log_file, encoding="utf-8", errors="replace") as f:
                log = f.read()
    # ncu writes its own messages (==PROF==, ==ERROR==) to the log file,
    # the profiled program's go to stdout and stderr.
    messages = "\n".join([proc.stdout, proc.stderr] + [
        line for line in log.splitlines() if line.startswith("==")])
    if "ERR_NVGPUCTRPERM" in messages:
        raise CountersUnavailable(_NO_PERMISSION)
    if proc.returncode != 0:
        raise CountersUnavailable(
            f"ncu failed (exit status {proc.returncode}); the end of its "
            f"output:\n{_tail(messages)}")
    try:
        rows = parse_ncu_csv(log, chosen)
    except ValueError as exc:
        raise CountersUnavailable(
            f"ncu's CSV does not fit: {exc}; the end of its output:\n"
            f"{_tail(messages)}") from exc
    info = device_info()
    values = (_ncu_version(exe), info["name"], info["driver"], now(), op,
              int(n), str(dtype), int(threads),
              [m.name for m in METRICS], rows)
    return dict(zip(DOCUMENT_KEYS, values))


# ---------------------------------------------------------------------------
# Parsing ncu's CSV


_KERNEL_FUNCTION = re.compile(r"(?:void\s+)?([\w:]+)")


def _kernel_method(kernel: str, methods: Sequence[str]) -> str | None:
    """The method among `methods` whose kernel `kernel` is, by name:
    ``reduce_<method>``, or one of CUB's ``DeviceReduce...`` kernels."""
    match = _KERNEL_FUNCTION.match(kernel)
    function = match.group(1) if match else ""
    name = function.removeprefix("reduce_")
    if name != function and name in methods:
        return name
    if (REFERENCE_METHOD in methods and function.startswith("cub::")
            and function.rsplit("::", 1)[-1].startswith("DeviceReduce")):
        return REFERENCE_METHOD
    return None


def _number(text: str, where: str) -> int | float | None:
    """A CSV cell: ``1,178,917`` -> 1178917, ``24.18`` -> 24.18, ``n/a``
    (or nothing) -> None."""
    s = text.strip().replace(",", "")
    if s in ("", "n/a"):
        return None
    try:
        return int(s) if re.fullmatch(r"-?\d+", s) else float(s)
    except ValueError:
        raise ValueError(f"{where}: not a number: {text!r}") from None


def parse_ncu_csv(text: str, methods: Sequence[str]) -> list[dict]:
    """The rows of ncu's ``--csv --page raw`` output, one per kernel.

    Lines before the header (``"ID",...,"Kernel Name",...``) and lines that
    are not CSV records (``==PROF==``, the profiled program's prints) are
    passed over; the row after the header holds the units.  Each kernel
    belongs to a method by its name, and the methods' kernels must come in
    the order of `methods`, each method's together: pass 0 is its first
    kernel, the one that reads the input.

    Returns
    -------
    list of dict
        ``{"method", "pass", "kernel" (ncu's name), <metric name>: int,
        float or None (n/a), ...}`` for every metric of :data:`METRICS`.

    Raises
    ------
    ValueError
        A CSV that does not fit: no header, a metric missing or in another
        unit, a value that is not a number, a kernel of none of `methods`,
        or the methods' kernels not in that order.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith('"') and '"Kernel Name"' in line), None)
    if start is None:
        raise ValueError("no CSV header (a line with a \"Kernel Name\" "
                         "column) in ncu's output")
    header, *records = csv.reader(
        line for line in lines[start:] if line.startswith('"'))
    missing = [name for name in ("Kernel Name", *_BY_NAME)
               if name not in header]
    if missing:
        raise ValueError(f"columns missing from ncu's CSV: {missing}")
    if not records or records[0][header.index("Kernel Name")]:
        raise ValueError("no units row after the CSV header")
    units, *records = records
    for metric in METRICS:
        unit = units[header.index(metric.name)]
        accepted = _NCU_UNITS.get(metric.unit, ("",))
        if unit not in accepted:
            raise ValueError(f"{metric.name}: ncu's unit is {unit!r}, "
                             f"expected {' or '.join(map(repr, accepted))} "
                             f"(profile with --print-units base)")
    rows: list[dict] = []
    for i, record in enumerate(records):
        if len(record) != len(header):
            raise ValueError(f"CSV row {i}: {len(record)} cells, the header "
                             f"has {len(header)}")
        cells = dict(zip(header, record))
        kernel = cells["Kernel Name"]
        method = _kernel_method(kernel, methods)
        if method is None:
            raise ValueError(f"kernel {kernel!r} is a kernel of none of the "
                             f"methods {list(methods)}")
        if rows and rows[-1]["method"] == method:
            number = rows[-1]["pass"] + 1
        elif any(r["method"] == method for r in rows):
            raise ValueError(f"the kernels of {method} are not together: "
                             f"another method's kernel stands between them")
        else:
            number = 0
        row: dict[str, Any] = {"method": method, "pass": number,
                               "kernel": kernel}
        for name in _BY_NAME:
            row[name] = _number(cells[name], f"{kernel}, {name}")
        rows.append(row)
    found = [r["method"] for r in rows if r["pass"] == 0]
    if found != list(methods):
        raise ValueError(f"the CSV has kernels of {found}, expected kernels "
                         f"of {list(methods)} in that order")
    return rows


# ---------------------------------------------------------------------------
# Reading a document


def _first_passes(document: Mapping[str, Any]) -> dict[str, Mapping]:
    """method -> its pass-0 row, in the document's order."""
    return {r["method"]: r for r in document["rows"] if r["pass"] == 0}


def _short(value: float) -> str:
    """Three significant digits with K, M, G: ``32.9 M``, ``8.48 K``."""
    rounded = float(f"{value:.3g}")
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(rounded) >= scale:
            return f"{rounded / scale:g} {prefix}"
    return f"{rounded:,.0f}"


def _cell(metric: Metric, value: int | float | None) -> str:
    """One value as the table and the what-changed lines show it."""
    if value is None:
        return "n/a"
    if metric.unit == "ns":
        return f"{value / 1e3:,.1f} µs"
    if metric.unit in ("blocks", "threads"):
        return f"{value:,}"
    if metric.unit in ("inst", "conflicts"):
        return _short(value)
    if metric.unit == "%":
        return f"{value:.1f}%"
    return f"{value:.2f}"


def _summary_cell(metric: Metric, values: Sequence[int | float | None]
                  ) -> str:
    """Several passes' values in one cell: their sum where sums mean
    something, else the value they all have, else ``-``."""
    if None in values:
        return "n/a"
    if metric.unit in _ADDITIVE:
        return _cell(metric, sum(values))
    return _cell(metric, values[0]) if len(set(values)) == 1 else "-"


def what_changed(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(method, line) for each step after the first: its
    :data:`STEP_COUNTERS`, from the step before it to it, first passes
    (``"instructions 32.9 M -> 17.2 M"``)."""
    out = []
    previous: Mapping | None = None
    for method, row in _first_passes(document).items():
        if method == REFERENCE_METHOD:
            continue
        if previous is not None and method in STEP_COUNTERS:
            changes = []
            for name in STEP_COUNTERS[method]:
                metric = _BY_NAME[name]
                changes.append(f"{metric.label} "
                               f"{_cell(metric, previous[name])} -> "
                               f"{_cell(metric, row[name])}")
            out.append((method, "; ".join(changes)))
        previous = row
    return out


def check_ideas(document: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(claim, whether the counters bear it out) for each of :data:`IDEAS`
    whose two methods the document has, on their first passes.  A claim on
    a counter that ncu did not give (n/a) is not borne out."""
    firsts = _first_passes(document)
    out = []
    for idea in IDEAS:
        if idea.method not in firsts or idea.other not in firsts:
            continue
        metric = _BY_NAME[idea.metric]
        a = firsts[idea.method][idea.metric]
        b = firsts[idea.other][idea.metric]
        if a is None or b is None:
            ok = False
        else:
            ok = a == idea.factor * b if idea.exact else a >= idea.factor * b
        claim = (f"{idea.method}: {metric.label} {_cell(metric, a)} is "
                 f"{'exactly' if idea.exact else 'at least'} {idea.factor:g}x "
                 f"{idea.other}'s {_cell(metric, b)}")
        out.append((claim, ok))
    return out


def format_counters(document: Mapping[str, Any]) -> str:
    """The counters as a text table: per method its first pass in full and
    its later passes in one row (summed where sums mean something), under
    each step after the first the line of :func:`what_changed`, and a
    legend of the columns last."""
    headers = ["method", "pass", *(m.label for m in METRICS)]
    by_method: dict[str, list[Mapping]] = {}
    for r in document["rows"]:
        by_method.setdefault(r["method"], []).append(r)
    body: list[list[str]] = []
    ends: dict[int, str] = {}        # body row index -> its method's last
    for method, rows in by_method.items():
        body.append([method, "0", *(_cell(m, rows[0][m.name])
                                    for m in METRICS)])
        later = rows[1:]
        if later:
            passes = "1" if len(later) == 1 else f"1-{len(later)}"
            body.append(["", passes, *(
                _summary_cell(m, [r[m.name] for r in later])
                for m in METRICS)])
        ends[len(body) - 1] = method
    changes = dict(what_changed(document))
    table = render(headers, body)
    title = group_title(op_of(document), document["dtype"], document["n"],
                        document["threads"])
    lines = [f"Hardware counters (ncu {document['ncu_version']}): {title}",
             "pass 0 reads the input; the later passes are summed where a "
             "sum means something (-: not the same in every pass; n/a: not "
             "measured)",
             "", *table[:2]]
    for i, line in enumerate(table[2:]):
        lines.append(line)
        if ends.get(i) in changes:
            lines.append(f"    what changed: {changes[ends[i]]}")
    lines.append("")
    lines += [f"{m.label}: {m.meaning} ({m.name})" for m in METRICS]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The command line


def _method_list(text: str) -> list[str]:
    try:
        return _check_methods([m.strip() for m in text.split(",")])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m cudareduce.bench.counters",
        description="Hardware counters of each method's kernels, from "
                    "Nsight Compute (ncu).")
    parser.add_argument("--n", type=argument_type(parse_size),
                        default=DEFAULT_N,
                        help=f"elements (default {format_n(DEFAULT_N)})")
    parser.add_argument("--dtype", choices=DTYPES, default="float32")
    parser.add_argument("--op", choices=OPS, default=DEFAULT_OP)
    parser.add_argument("--threads", type=int, default=256,
                        help="threads per block (default 256)")
    parser.add_argument("--methods", type=_method_list, default=None,
                        help="comma-separated, in order (default: all)")
    parser.add_argument("--profile-target", action="store_true",
                        help="be the program ncu profiles: run each method "
                             "once and exit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the counters table (``--profile-target``: be the profiled
    program).  Returns the exit status: 1 where counters are unavailable."""
    args = _parse_args(argv)
    methods = _check_methods(args.methods)
    if args.profile_target:
        _profile_target(args.n, args.dtype, args.threads, methods, args.op)
        return 0
    try:
        document = collect(methods, args.n, args.dtype, args.threads,
                           op=args.op)
    except CountersUnavailable as exc:
        print(f"counters unavailable: {exc}", file=sys.stderr)
        return 1
    print(format_counters(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
