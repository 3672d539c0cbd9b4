"""Dask arrays of CuPy chunks (or, with ``--chunks-of numpy``, of NumPy
chunks): ``cudareduce.dask.sum`` against Dask's own ``x.sum()`` on the
same chunks and against one ``cudareduce.sum`` of the same data held as
one array (on one GPU, or in host memory).

On the GPU machine, from the repository root::

    python benchmarks/dask_sum.py                      # 8 GiB float32
    python benchmarks/dask_sum.py --gib 1 --chunks-mib 32,128 --json d.json
    python benchmarks/dask_sum.py --gib 16 --chunks-mib 128,512 \
        --schedulers cuda-cluster --workers 1,2          # two GPUs
    python benchmarks/dask_sum.py --chunks-of numpy --gib 16 \
        --chunks-mib 512 --schedulers cuda-cluster --workers 1,2

For each chunk size and scheduler, the median wall time of ``compute()``
(the GPU synchronised after it: a CuPy result is not waited for) over
``--repeats`` runs after one warm-up, as GB/s of the array's bytes.  Where
the time goes: the GPU's share is estimated as the array's bytes at the
single array's bandwidth (the reductions' own work); the rest of the wall
time is the scheduler's and the tasks' (graph, scheduling, Python, the
per-chunk calls), also given per task of the graph.

Schedulers: ``threads`` (Dask's threaded scheduler, in this process, on
GPU 0) and, where ``dask_cuda`` and ``distributed`` import,
``cuda-cluster``: a ``LocalCUDACluster`` of one worker per GPU, on the
first 1, 2, ... GPUs as ``--workers`` says (one by default, ``all`` for
every visible GPU); the chunks are made and kept on the workers.  The
data are uniform in [0, 1), made by Dask's random module on CuPy
(``persist``-ed before timing); NumPy chunks by Dask's NumPy generator
(contiguous: ``da.ones``' chunks are broadcast views of one element,
which a host reduction copies first), each reduced by its worker through
its GPU's pinned ring (issue 45: a host array on several GPUs, whose
floor ``benchmarks/host_links.py`` measures; the targets below are the
CuPy chunks' and are not judged for NumPy's).

Targets (issue "Beyond one GPU", one GPU): ``cudareduce.dask.sum`` at
least 2x Dask's own sum at 128 MiB chunks on each scheduler, and at least
half the single array's bandwidth at 512 MiB chunks on the threaded one.
Where the run has clusters of one and of two workers (issue "Run on
several GPUs"): at 512 MiB chunks, ``cudareduce.dask.sum`` on two at
least 1.8x as fast as on one.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence

from cudareduce.bench.timers import median_wall_time

__all__ = ["chunk_elements", "main", "parse_args", "report", "targets"]

MIB = 1 << 20


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="dask_sum.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=8.0,
                        help="the array's size in GiB of float32 (8)")
    parser.add_argument("--chunks-mib", default="32,128,512",
                        help="chunk sizes in MiB, comma-separated")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs per figure, after one warm-up")
    parser.add_argument("--schedulers", default="threads,cuda-cluster",
                        help="threads and/or cuda-cluster (skipped, and "
                             "said, where dask_cuda does not import)")
    parser.add_argument("--workers", default="1",
                        help="cuda-cluster's workers (one a GPU, the first "
                             "ones), comma-separated counts, or all (1: "
                             "the one-GPU targets' setting)")
    parser.add_argument("--chunks-of", choices=("cupy", "numpy"),
                        default="cupy",
                        help="the chunks' library: CuPy (device) or NumPy "
                             "(host) arrays (cupy)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the rows as JSON")
    args = parser.parse_args(argv)
    args.chunks_mib = [int(c) for c in args.chunks_mib.split(",")]
    args.schedulers = args.schedulers.split(",")
    args.workers = None if args.workers == "all" else [
        int(w) for w in args.workers.split(",")]
    if args.repeats < 1 or args.gib <= 0 or min(args.chunks_mib) < 1 \
            or min(args.workers or [1]) < 1:
        parser.error("--repeats, --gib, --chunks-mib and --workers must be "
                     "positive")
    unknown = set(args.schedulers) - {"threads", "cuda-cluster"}
    if unknown:
        parser.error(f"unknown scheduler(s): {', '.join(sorted(unknown))}")
    return args


def chunk_elements(chunk_mib: int, itemsize: int = 4) -> int:
    """Elements of a chunk of `chunk_mib` MiB."""
    return chunk_mib * MIB // itemsize


def report(rows: list[dict], single_gbps: float,
           chunks_of: str = "cupy") -> str:
    """The table of `rows` (scheduler, workers, chunk_mib, method, seconds,
    tasks, nbytes), with the estimated split of each wall time (the GPU's
    share: the bytes at one GPU's bandwidth, shared by the workers; for
    NumPy chunks at the single host array's, through one GPU's ring)."""
    header = (f"{'scheduler':<13}{'GPUs':>5}{'chunk MiB':>10}  "
              f"{'method':<16}{'ms':>9}{'GB/s':>9}{'tasks':>7}{'GPU ms':>9}"
              f"{'rest ms':>9}{'us/task':>9}")
    lines = [f"single array (cudareduce.sum of a {chunks_of} array): "
             f"{single_gbps:,.1f} GB/s", header]
    for row in rows:
        gpu = row["nbytes"] / (single_gbps * 1e9 * row["workers"])
        rest = max(row["seconds"] - gpu, 0.0)
        lines.append(
            f"{row['scheduler']:<13}{row['workers']:>5}"
            f"{row['chunk_mib']:>10}  "
            f"{row['method']:<16}{row['seconds'] * 1e3:>9.2f}"
            f"{row['nbytes'] / row['seconds'] / 1e9:>9.1f}"
            f"{row['tasks']:>7}{gpu * 1e3:>9.2f}{rest * 1e3:>9.2f}"
            f"{rest / row['tasks'] * 1e6:>9.1f}")
    return "\n".join(lines)


def targets(rows: list[dict], single_gbps: float) -> list[tuple[str, bool]]:
    """The issue's targets on `rows`, each with whether it is met; a target
    without its figures is not met."""
    def seconds(scheduler, chunk_mib, method, workers=1):
        for row in rows:
            if (row["scheduler"], row["workers"], row["chunk_mib"],
                    row["method"]) == (scheduler, workers, chunk_mib,
                                       method):
                return row["seconds"]
        return None

    verdicts = []
    for scheduler in ("threads", "cuda-cluster"):
        ours = seconds(scheduler, 128, "cudareduce.dask")
        theirs = seconds(scheduler, 128, "dask x.sum()")
        ratio = theirs / ours if ours and theirs else None
        figure = "no figure" if ratio is None else f"{ratio:.2f}x"
        text = (f"{scheduler}, 128 MiB chunks: cudareduce.dask.sum >= 2x "
                f"Dask's own sum: {figure}")
        verdicts.append((text, ratio is not None and ratio >= 2.0))
    ours = seconds("threads", 512, "cudareduce.dask")
    share = (rows[0]["nbytes"] / ours / 1e9 / single_gbps) if ours else None
    figure = "no figure" if share is None else f"{share:.0%}"
    text = (f"threads, 512 MiB chunks: >= 50% of the single array's "
            f"bandwidth: {figure}")
    verdicts.append((text, share is not None and share >= 0.5))
    if any(row["scheduler"] == "cuda-cluster" and row["workers"] > 1
           for row in rows):
        one, two = (seconds("cuda-cluster", 512, "cudareduce.dask", workers)
                    for workers in (1, 2))
        scaling = one / two if one and two else None
        figure = "no figure" if scaling is None else f"{scaling:.2f}x"
        text = (f"cuda-cluster, 512 MiB chunks: cudareduce.dask.sum on 2 "
                f"GPUs >= 1.8x on 1: {figure}")
        verdicts.append((text, scaling is not None and scaling >= 1.8))
    return verdicts


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import cupy  # noqa: PLC0415  (the GPU libraries: only when run)
    import dask  # noqa: PLC0415
    import dask.array as da  # noqa: PLC0415

    import cudareduce  # noqa: PLC0415
    import cudareduce.dask  # noqa: PLC0415
    from cudareduce.bench.progress import Progress  # noqa: PLC0415

    n = int(args.gib * (1 << 30)) // 4
    nbytes = n * 4
    sync = cupy.cuda.runtime.deviceSynchronize
    on_host = args.chunks_of == "numpy"
    if on_host:
        import numpy  # noqa: PLC0415
        numpy_chunks = da.random.default_rng(0)
        whole = numpy.random.default_rng(0).random(n, dtype=numpy.float32)

        def made(chunks):
            return numpy_chunks.random(n, chunks=chunks,
                                       dtype=numpy.float32)
    else:
        state = da.random.RandomState(RandomState=cupy.random.RandomState)
        whole = state.random_sample(n, chunks=n, dtype="float32").compute()

        def made(chunks):
            return state.random_sample(n, chunks=chunks, dtype="float32")
    sync()
    single, _ = median_wall_time(functools.partial(cudareduce.sum, whole),
                                 sync, args.repeats)
    del whole
    single_gbps = nbytes / single / 1e9
    print(f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"{n:,} float32 ({nbytes / (1 << 30):g} GiB) in "
          f"{args.chunks_of} chunks", flush=True)

    gpus = cupy.cuda.runtime.getDeviceCount()
    runs = [(scheduler, workers) for scheduler in args.schedulers
            for workers in ((args.workers or [gpus])
                            if scheduler == "cuda-cluster" else [1])]
    rows = []
    bar = Progress(len(runs) * len(args.chunks_mib), True)
    for scheduler, workers in runs:
        client = cluster = None
        if scheduler == "cuda-cluster":
            try:
                from dask_cuda import LocalCUDACluster  # noqa: PLC0415
                from distributed import Client  # noqa: PLC0415
            except ImportError as error:
                print(f"cuda-cluster: not run ({error})", flush=True)
                continue
            if workers > gpus:
                print(f"cuda-cluster of {workers} workers: not run ({gpus} "
                      f"GPUs)", flush=True)
                continue
            cluster = LocalCUDACluster(
                CUDA_VISIBLE_DEVICES=list(range(workers)),
                dashboard_address=None)
            client = Client(cluster)
        config = {"scheduler": "threads"} if client is None else {}
        with dask.config.set(config):
            for chunk_mib in args.chunks_mib:
                x = made(chunk_elements(chunk_mib)).persist()
                dask.compute(x.sum())      # the chunks made, and warm
                for method, lazy in (
                        ("dask x.sum()", x.sum()),
                        ("cudareduce.dask", cudareduce.dask.sum(x))):
                    seconds, _ = median_wall_time(
                        lambda lazy=lazy: lazy.compute(), sync,
                        args.repeats)
                    rows.append({
                        "scheduler": scheduler, "workers": workers,
                        "chunk_mib": chunk_mib,
                        "method": method, "seconds": seconds,
                        # the graph's keys less the persisted blocks'
                        "tasks": len(dict(lazy.__dask_graph__()))
                                 - x.npartitions,
                        "nbytes": nbytes})
                del x
                bar.step(f"{scheduler} ({workers} GPUs) {chunk_mib} MiB")
        if client is not None:
            client.close()
            cluster.close()
    bar.close()
    print(report(rows, single_gbps, args.chunks_of))
    verdicts = [] if on_host else targets(rows, single_gbps)
    for text, met in verdicts:
        print(f"{'met' if met else 'MISSED'}: {text}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump({"single_gbps": single_gbps,
                       "chunks_of": args.chunks_of, "rows": rows}, file,
                      indent=1)
    return 0 if all(met for _, met in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
