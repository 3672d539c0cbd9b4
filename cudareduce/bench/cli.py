"""The command line, ``python -m cudareduce.bench``: its arguments, which
of the six modes they choose (the ladder, ``--counters``, ``--peers``,
``--host``, ``--axis``, ``--exact``), the reduction they time (``--op``),
and the report and files each writes."""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cudareduce
from .results import Results
from .figures import describe_sizes, short_n
from .names import DEFAULT_OP, DTYPES, OPS

from .axes import AXIS_CASES, AXIS_DTYPES, format_axes, run_axes
from .exact import (EXACT_DATA, EXACT_DTYPES, EXACT_SIZES, EXACT_TAKES,
                    format_exact, run_exact)
from .host import (HOST_DTYPES, HOST_ROW, HOST_SIZES, format_host,
                   run_host)
from .ladder import DEFAULT_DTYPE, DEFAULT_THREADS, check_threads, run
from .peers import (BASELINE_DTYPE, COMPARE_DTYPES, COMPARE_SIZES, LATENCY_N,
                    compare, format_comparison)
from .sizes import argument_type, parse_size, parse_sizes

__all__ = ["main"]

PROG = "cudareduce.bench"


def _plot_paths(path: str) -> tuple[str, str]:
    """``out.png`` -> (``out-speedup.png``, ``out-bandwidth.png``); a path
    without a suffix gets ``.png``."""
    root, ext = os.path.splitext(path)
    ext = ext or ".png"
    return f"{root}-speedup{ext}", f"{root}-bandwidth{ext}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m cudareduce.bench",
        description=("Time every step of the reduction ladder (and cub, and "
                     "the peers: PyTorch's and CuPy's function of the op, "
                     "torch.sum / cupy.sum for sums) on this GPU three "
                     "ways (cold GPU time, back-to-back GPU time, call "
                     "time), with per-pass times, beside an empty kernel "
                     "and a read-only streaming kernel timed the same way; "
                     "or show each step's hardware counters (--counters)."),
        epilog=("Sizes: 4194304, 2^22 or 2**22; --sizes takes a comma list "
                "whose items may be ranges A..B (every power of two from A "
                "to B), e.g. --sizes 2^10..2^28.  --plot out.png writes "
                "out-speedup.png and out-bandwidth.png."))
    size = p.add_mutually_exclusive_group()
    size.add_argument("--n", type=argument_type(parse_size), default=None,
                      metavar="N", help="number of elements (default: "
                      "chosen per GPU, the rule printed; 2^22 is Harris's)")
    size.add_argument("--sizes", type=argument_type(parse_sizes), default=None,
                      metavar="SIZES", help="a sweep, e.g. 2^10..2^28")
    p.add_argument("--op", default=DEFAULT_OP, choices=OPS,
                   help=f"the reduction, as cudareduce and NumPy name it "
                        f"(default {DEFAULT_OP}); each is checked exactly "
                        f"on data made for it")
    p.add_argument("--dtype", default=None, metavar="DTYPE",
                   help=f"element type, one of {{{','.join(DTYPES)}}} "
                        f"(default {DEFAULT_DTYPE}); with --peers, the "
                        f"comparison's, comma-separated (default "
                        f"{','.join(COMPARE_DTYPES)}); with --axis and "
                        f"--exact, comma-separated too")
    p.add_argument("--threads", type=int, default=None,
                   help="threads per block, a power of two from 64 to 1024 "
                        f"(default {DEFAULT_THREADS}; with --peers, each "
                        "method's own default for each size, as a caller "
                        "gets it)")
    p.add_argument("--methods", default=None, metavar="LIST",
                   help="comma-separated methods (default: all); the op's "
                        "peer names (torch.sum, cupy.sum for sum; "
                        "torch.amin, cupy.min for min; ...) select those "
                        "peers")
    p.add_argument("--no-peers", action="store_true",
                   help="do not time the peers")
    p.add_argument("--host", action="store_true",
                   help=f"time whole sums of NumPy arrays instead (the copy "
                        f"to the GPU included) beside numpy.sum, torch and "
                        f"cupy, and sums along each axis of the array as "
                        f"(n // {HOST_ROW}, {HOST_ROW}) beside numpy.sum's, "
                        f"{' and '.join(HOST_DTYPES)} at "
                        f"{describe_sizes(HOST_SIZES)}, under the pinned "
                        f"copy bandwidth")
    p.add_argument("--peers", action="store_true",
                   help=f"compare fast with cub and the op's peers instead: "
                        f"each dtype (--dtype) at "
                        f"{describe_sizes(COMPARE_SIZES)}, with fast's "
                        f"ratios; for sums the end-to-end latency of a "
                        f"{LATENCY_N}-element sum, for another op (or "
                        f"without {BASELINE_DTYPE}) fast's "
                        f"{BASELINE_DTYPE} sum at "
                        f"{short_n(COMPARE_SIZES[-1])} besides")
    p.add_argument("--axis", action="store_true",
                   help=f"time reductions along an axis instead: fast, cub, "
                        f"the ladder's steps, torch.<fn>(x, dim=), "
                        f"cupy.<fn>(x, axis=) and the same with CuPy's CUB "
                        f"on, on {len(AXIS_CASES)} (shape, axis) cases, "
                        f"each under its floor (empty kernel + bytes read "
                        f"/ read rate + bytes written / write rate, timed "
                        f"in the same run); --op for the cases but the "
                        f"argmax one, --dtype a comma list (default "
                        f"{','.join(AXIS_DTYPES)}), --methods and "
                        f"--no-peers choose the contenders (default: "
                        f"all); --plot draws the shares of the floor")
    p.add_argument("--exact", action="store_true",
                   help=f"time exact=True instead, beside the plain fast "
                        f"sum, cub and CUB's gpu_to_gpu deterministic "
                        f"reduce (with --gpu-to-gpu), each under its floor "
                        f"(the read probe), at --sizes (default "
                        f"{describe_sizes(EXACT_SIZES)}) and --dtype, a "
                        f"comma list (default {','.join(EXACT_DTYPES)})")
    p.add_argument("--exact-data", default=None, metavar="KINDS",
                   help=f"with --exact: the kinds of data, a comma list of "
                        f"{','.join(EXACT_DATA)} (default all)")
    p.add_argument("--gpu-to-gpu", default=None, metavar="LIB",
                   help="with --exact: the harness "
                        "benchmarks/cub_gpu_to_gpu.cu built as a shared "
                        "library (its header says how)")
    p.add_argument("--counters", action="store_true",
                   help="show each method's hardware counters instead, from "
                        "Nsight Compute (ncu): what each step changes "
                        "(default n 2^22)")
    p.add_argument("--json", default=None, metavar="PATH",
                   help="write the results document to PATH (with --peers "
                        "the comparison, with --host the host document, "
                        "with --counters the counters, with --axis and "
                        "--exact their documents)")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="write both plots, named after PATH (with --axis "
                        "its one plot, at PATH)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the random data (default: fresh)")
    return p


def _print_table(text: str) -> None:
    """Print the table; on a console that cannot encode µ or ×, with ASCII
    stand-ins instead of a UnicodeEncodeError."""
    try:
        print(text, flush=True)
    except UnicodeEncodeError:
        print(text.replace("µs", "us").replace("×", "x"), flush=True)


def _dump_json(document: Mapping[str, Any], path: str) -> None:
    """Write a ``--peers``, ``--host``, ``--counters`` or ``--axis``
    document to `path` as JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)


def _dtypes(parser: argparse.ArgumentParser, text: str | None,
            default: Sequence[str] | None) -> list[str]:
    """The dtypes `text` (``--dtype``) names: a comma list where the mode
    takes one (`default`, its dtypes without ``--dtype``: ``--peers``'
    :data:`COMPARE_DTYPES`, ``--axis``' :data:`AXIS_DTYPES`), else one
    (:data:`DEFAULT_DTYPE` without ``--dtype``).  A bad name is
    ``parser.error``."""
    listed = default is not None
    only = "" if listed else "; a list only with --peers, --axis or --exact"
    if text is None:
        return list(default) if listed else [DEFAULT_DTYPE]
    names = [name.strip() for name in text.split(",")] if listed \
        else [text]
    for name in names:
        if name not in DTYPES:
            parser.error(f"--dtype: unknown dtype {name!r} (choose from "
                         f"{', '.join(DTYPES)}{only})")
    if len(set(names)) < len(names):
        parser.error(f"--dtype: {text!r} names a dtype twice")
    return names


def _output_failed(e: ImportError | OSError) -> int:
    """Say why an output (``--plot``, ``--json``) could not be written: a
    missing plotting extra (the ImportError names it) or the file; its
    exit status."""
    where = "--plot: " if isinstance(e, ImportError) else ""
    print(f"{PROG}: {where}{e}", file=sys.stderr)
    return 1


def _report(text: str, document: Mapping[str, Any], path: str | None
            ) -> int:
    """Print the report `text`, then write `document` to `path` (where
    given) as JSON; the exit status: 1 where the file cannot be
    written."""
    _print_table(text)
    if path:
        try:
            _dump_json(document, path)
        except OSError as e:
            return _output_failed(e)
    return 0


#: How a mode may fail without a traceback: CUDA (no device: its message),
#: out of memory, Ctrl-C.
_FAILURES = (cudareduce.CudaError, MemoryError, KeyboardInterrupt)


def _failed(e: BaseException) -> int:
    """Say why a mode failed (one of :data:`_FAILURES`); its exit status."""
    if isinstance(e, KeyboardInterrupt):
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    prefix = "out of memory: " if isinstance(e, MemoryError) else ""
    print(f"{PROG}: {prefix}{e}", file=sys.stderr)
    return 1


def _counters(args: argparse.Namespace, methods: list[str] | None) -> int:
    """The ``--counters`` mode: the table, the claims checked, the JSON."""
    # Imported here: ncu runs ``python -m cudareduce.bench.counters``, which
    # warns when importing the package has already imported the module.
    from . import counters  # noqa: PLC0415
    try:
        document = counters.collect(
            methods, args.n or counters.DEFAULT_N, args.dtype,
            args.threads or DEFAULT_THREADS,
            op=args.op)
    except counters.CountersUnavailable as e:
        print(f"{PROG}: counters unavailable: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    lines = [counters.format_counters(document), "", "Claims"]
    lines += [f"  {'yes' if ok else 'NO '}  {claim}"
              for claim, ok in counters.check_ideas(document)]
    return _report("\n".join(lines), document, args.json)


def _say_wrong(document: Mapping[str, Any],
               where: Callable[[Mapping[str, Any]], str]) -> None:
    """On stderr, the results of `document` that were WRONG, each method
    with `where` it was."""
    wrong = [r for r in document["results"] if r["correct"] is False]
    if wrong:
        print(f"{PROG}: {len(wrong)} result(s) WRONG: " + ", ".join(
            f"{r['method']} ({where(r)})" for r in wrong), file=sys.stderr)


def _axis(args: argparse.Namespace, dtypes: list[str],
          methods: list[str] | None) -> int:
    """The ``--axis`` mode: the report, the JSON, the plot."""
    try:
        document = run_axes(args.op, dtypes, progress=True, seed=args.seed,
                            methods=methods, peers=not args.no_peers)
    except ImportError as e:            # no CuPy
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except _FAILURES as e:
        return _failed(e)
    status = _report(format_axes(document), document, args.json)
    _say_wrong(document, lambda r: f"{r['dtype']} {r['op']} "
               f"{tuple(r['shape'])} axis {r['axis']}")
    if args.plot:
        try:
            from .plot import plot_axes  # noqa: PLC0415 - needs matplotlib
            plot_axes(document, path=args.plot)
        except (ImportError, OSError) as e:
            return _output_failed(e)
        print(f"{PROG}: wrote {args.plot}", file=sys.stderr)
    return status


def _exact(args: argparse.Namespace, dtypes: list[str],
           kinds: list[str]) -> int:
    """The ``--exact`` mode: the report, the JSON."""
    try:
        document = run_exact(dtypes, args.sizes or EXACT_SIZES,
                             args.gpu_to_gpu, progress=True, data=kinds,
                             seed=args.seed)
    except (ImportError, OSError) as e:     # no CuPy; not the harness
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except _FAILURES as e:
        return _failed(e)
    status = _report(format_exact(document), document, args.json)
    _say_wrong(document,
               lambda r: f"{r['dtype']} {r['data']} data, n={r['n']}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status.

    0 on success (WRONG methods are reported in the table, not as a failure),
    1 when CUDA fails (no device: the :class:`cudareduce.CudaError` message,
    no traceback), out of memory, or a file cannot be written; 2 for bad
    arguments.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    dtype_given = args.dtype is not None
    dtypes = _dtypes(parser, args.dtype,
                     COMPARE_DTYPES if args.peers
                     else AXIS_DTYPES if args.axis
                     else EXACT_DTYPES if args.exact else None)
    args.dtype = dtypes[0]
    try:
        check_threads(args.threads)
    except ValueError as e:
        parser.error(str(e))
    methods = None
    if args.methods is not None:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        if not methods:
            parser.error("--methods: empty list")
    sizes = args.sizes if args.sizes is not None else \
        None if args.n is None else [args.n]

    if (args.gpu_to_gpu is not None or args.exact_data is not None) \
            and not args.exact:
        parser.error("--gpu-to-gpu and --exact-data go with --exact")
    if args.exact:
        if args.axis or args.peers or args.host or args.counters \
                or args.methods or args.no_peers or args.n or args.plot \
                or args.threads is not None or args.op != DEFAULT_OP:
            parser.error("--exact combines with --sizes, --dtype, "
                         "--exact-data, --gpu-to-gpu, --json and --seed "
                         "only")
        bad = [d for d in dtypes if d not in EXACT_TAKES]
        if bad:
            parser.error(f"--exact: exact=True takes "
                         f"{', '.join(EXACT_TAKES)}, not {', '.join(bad)}")
        kinds = list(EXACT_DATA) if args.exact_data is None else [
            k.strip() for k in args.exact_data.split(",")]
        if not kinds or len(set(kinds)) < len(kinds) \
                or any(k not in EXACT_DATA for k in kinds):
            parser.error(f"--exact-data: expected distinct kinds of "
                         f"{', '.join(EXACT_DATA)}, got {args.exact_data!r}")
        return _exact(args, dtypes, kinds)

    if args.axis:
        if args.peers or args.host or args.counters or args.n \
                or args.sizes or args.threads is not None:
            parser.error("--axis combines with --op, --dtype, --methods, "
                         "--no-peers, --json, --plot and --seed only")
        try:
            return _axis(args, dtypes, methods)
        except ValueError as e:         # a method of no case's op
            parser.error(str(e))

    if args.counters:
        if args.peers or args.host or args.sizes or args.plot \
                or args.no_peers or args.seed is not None:
            parser.error("--counters combines with --n, --dtype, --op, "
                         "--threads, --methods and --json only")
        return _counters(args, methods)

    if args.host:
        if args.op != DEFAULT_OP:
            parser.error(f"--host times sums only (beside numpy.sum): "
                         f"--op {args.op} is for the other modes")
        if args.peers or args.methods or args.plot or args.no_peers \
                or args.n or dtype_given \
                or args.threads is not None:
            parser.error("--host combines with --sizes, --json and --seed "
                         "only")
        try:
            document = run_host(args.sizes or HOST_SIZES, seed=args.seed)
        except _FAILURES as e:
            return _failed(e)
        return _report(format_host(document), document, args.json)
    if args.peers and (args.no_peers or args.methods or args.n or args.sizes
                       or args.plot):
        parser.error("--peers chooses its own methods and sizes: combine "
                     "it with --op, --dtype, --threads, --json and --seed "
                     "only")
    try:
        if args.peers:
            comparison = compare(args.threads, progress=True, seed=args.seed,
                                 op=args.op, dtypes=dtypes)
            results = comparison["results"]
        else:
            results = run(methods, sizes, args.dtype,
                          args.threads or DEFAULT_THREADS,
                          peers=not args.no_peers, progress=True,
                          seed=args.seed, op=args.op)
        if not isinstance(results, Results):
            results = Results(results)
    except ValueError as e:
        parser.error(str(e))
    except _FAILURES as e:
        return _failed(e)

    _print_table(format_comparison(comparison) if args.peers
                 else results.table())
    wrong = [r for r in results["results"] if not r["correct"]]
    if wrong:
        print(f"{PROG}: {len(wrong)} result(s) WRONG: "
              + ", ".join(f"{r['method']} (n={r['n']})" for r in wrong),
              file=sys.stderr)
    try:
        if args.json:
            if args.peers:
                _dump_json(comparison, args.json)
            else:
                results.to_json(args.json)
            print(f"{PROG}: wrote {args.json}", file=sys.stderr)
        if args.plot:
            speedup_path, bandwidth_path = _plot_paths(args.plot)
            results.plot_step_speedups(path=speedup_path)
            results.plot_bandwidth(path=bandwidth_path)
            print(f"{PROG}: wrote {speedup_path} and {bandwidth_path}",
                  file=sys.stderr)
    except (ImportError, OSError) as e:
        return _output_failed(e)
    return 0
