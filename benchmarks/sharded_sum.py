"""A float32 tensor sharded over the GPUs with PyTorch, one shard a GPU:
each shard reduced by ``cudareduce.sum`` on its own GPU and the partials
combined, against ``torch.sum`` and against ``torch.distributed``'s
``all_reduce`` of the partials over NCCL.

On the GPU machine, from the repository root::

    python benchmarks/sharded_sum.py                   # 16 GiB, every GPU
    python benchmarks/sharded_sum.py --gpus 2 --json sharded.json
    python benchmarks/sharded_sum.py --gib 1 --gpus 1 --repeats 5  # smoke

The data: ``--gib`` GiB of float32 in all, cut into one shard for each of
the first ``--gpus`` GPUs (every visible one by default), uniform in
[0, 1) from ``torch.rand`` on that GPU with a generator seeded
``--seed`` + k for shard k.

Each row is the median wall time of ``--repeats`` runs after
:data:`WARMUP` untimed ones, with the GPUs synchronised at the end of each
run (``torch.cuda.synchronize`` of every GPU used); GB/s are the row's
bytes over that time, and "x one GPU" the row's GB/s over the first
row's:

1. ``cudareduce, one GPU``: ``cudareduce.sum`` of shard 0 alone on GPU 0,
   the per-GPU baseline (its bytes: that shard's).
2. ``cudareduce + copy (one process)``: in this process,
   ``cudareduce.sum(shard_k, out=partial_k)`` for each GPU k (a device
   ``out`` does not wait for the GPU, so the GPUs work at once), the
   partials copied to GPU 0 and added there, then ``.item()``: the value on
   the host, what a user waits for.
3. ``torch.sum + copy (one process)``: the same with ``torch.sum``.
4. ``cudareduce + NCCL all_reduce``: one process a GPU
   (``torch.multiprocessing.spawn``, NCCL's process group rendezvousing
   through a file in a temporary folder); each run is ``dist.barrier()``
   (untimed), then, timed, ``cudareduce.sum(shard, out=partial)``,
   ``dist.all_reduce(partial)``, ``partial.item()``.  A run's time is its
   slowest rank's (every rank left the same barrier; the sum is had when
   the last rank has it), and the row's time the median of those.
5. ``torch.sum + NCCL all_reduce``: the same with ``torch.sum``.
6. ``NCCL all_reduce alone``: the all-reduce and ``.item()`` of each
   rank's partial, without the reduction: where the combine's time goes
   (no bytes read, so no GB/s).

Rows 4 to 6 need two GPUs or more; on one they are left out (the report
says so).  Each row's value is checked against a float64 reference of the
same data (``torch.sum(..., dtype=torch.float64)`` of each shard, the
shards' sums added), to a relative error of :data:`RTOL`; for the NCCL
rows every rank's value is checked (the row shows the worst).  A row that
is off is marked WRONG, and the exit status is then 1 (0 when every row is
right).  There are no speed targets: the issue names none.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

from cudareduce.bench.timers import median_wall_time, wall_times

__all__ = ["NCCL_ROWS", "RTOL", "document", "exit_status",
           "force_multicast_off", "is_correct", "main", "make_row",
           "nccl_rows", "nccl_text", "parse_args", "rank_seconds",
           "relative_error", "report", "shard_sizes", "timed_runs",
           "total_elements"]

GIB = 1 << 30
ITEMSIZE = 4                    # float32
RTOL = 1e-5
WARMUP = 3
#: Elements of one float64 partial of the reference: torch.sum with
#: dtype=float64 casts a float32 input whole first, so it goes in pieces.
REFERENCE_CHUNK = 1 << 28

ONE_GPU = "cudareduce, one GPU"
CR_COPY = "cudareduce + copy (one process)"
TORCH_COPY = "torch.sum + copy (one process)"
CR_NCCL = "cudareduce + NCCL all_reduce"
TORCH_NCCL = "torch.sum + NCCL all_reduce"
NCCL_ALONE = "NCCL all_reduce alone"
#: The rows measured by one process a GPU, in order.
NCCL_ROWS = (CR_NCCL, TORCH_NCCL, NCCL_ALONE)

#: The machine requires NVLink multicast (NVLS) off: NCCL's, PyTorch's
#: symmetric memory's and NVSHMEM's.
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0",
                 "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}

NAME_WIDTH = 33


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="sharded_sum.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=16.0,
                        help="the tensor's size in GiB of float32, all "
                             "shards together (16)")
    parser.add_argument("--gpus", type=int, default=None,
                        help="shards, one on each of the first GPUs "
                             "(default: every visible GPU)")
    parser.add_argument("--repeats", type=int, default=20,
                        help="timed runs per row, after the warm-up (20)")
    parser.add_argument("--seed", type=int, default=0,
                        help="shard k's generator is seeded seed + k (0)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.gib <= 0 or args.repeats < 1 \
            or (args.gpus is not None and args.gpus < 1):
        parser.error("--gib, --repeats and --gpus must be positive")
    if args.seed < 0:
        parser.error("--seed must not be negative")
    return args


def total_elements(gib: float) -> int:
    """Float32 elements of `gib` GiB."""
    return int(gib * GIB) // ITEMSIZE


def shard_sizes(n: int, shards: int) -> list[int]:
    """`n` elements cut into `shards` shards as even as can be, the first
    ones one element longer where `n` does not divide.

    Raises
    ------
    ValueError
        When a shard would be empty.
    """
    if shards < 1 or n < shards:
        raise ValueError(f"{n} elements do not make {shards} shards")
    size, longer = divmod(n, shards)
    return [size + (k < longer) for k in range(shards)]


def relative_error(value: float, reference: float) -> float:
    """|value - reference| / |reference|; infinite for a NaN (so that it
    is never within a tolerance) and for a miss of a zero reference."""
    if reference == 0:
        return 0.0 if value == 0 else math.inf
    error = abs(value - reference) / abs(reference)
    return math.inf if math.isnan(error) else error


def is_correct(value: float, reference: float, rtol: float = RTOL) -> bool:
    """Whether `value` is within a relative `rtol` of `reference`."""
    return relative_error(value, reference) <= rtol


def make_row(name: str, gpus: int, nbytes: int, seconds: float,
             value: float, reference: float) -> dict[str, Any]:
    """One row of the report and of the JSON document.

    Parameters
    ----------
    name : str
        The row's name (:data:`ONE_GPU`, ..., :data:`NCCL_ALONE`).
    gpus : int
        The GPUs it ran on.
    nbytes : int
        The bytes it reduced (0: none, as the all-reduce alone).
    seconds : float
        Its median wall time.
    value, reference : float
        Its result, and the float64 reference of the same data.

    Returns
    -------
    dict
        Those fields, and ``correct``: `value` within :data:`RTOL` of
        `reference`.
    """
    return {"name": name, "gpus": gpus, "nbytes": nbytes,
            "seconds": seconds, "value": value, "reference": reference,
            "correct": is_correct(value, reference)}


def timed_runs(run: Callable[[], Any], before: Callable[[], None],
               repeats: int, warmup: int = WARMUP
               ) -> tuple[list[float], Any]:
    """(wall time of each of `repeats` calls of `run` after `warmup`
    untimed ones, the last call's value); `before` is called, untimed,
    before every call (a rank's reset and barrier)."""
    times = []
    value = None
    for index in range(warmup + repeats):
        before()
        (seconds,), value = wall_times(run, 1)
        if index >= warmup:
            times.append(seconds)
    return times, value


def rank_seconds(per_rank: Sequence[Sequence[float]]) -> float:
    """The median over runs of each run's slowest rank: `per_rank` holds
    each rank's times, run by run."""
    return statistics.median(max(run) for run in zip(*per_rank))


def nccl_rows(results: Sequence[dict], nbytes: int, reference: float
              ) -> list[dict[str, Any]]:
    """The rows of :data:`NCCL_ROWS` from each rank's results, rank by
    rank: ``{row name: {"times": [...], "value": float}}``.  A row's value
    is the one of the rank farthest from `reference` (all ranks should
    hold the same sum); the all-reduce alone reads no bytes."""
    rows = []
    for name in NCCL_ROWS:
        ranks = [result[name] for result in results]
        value = max((rank["value"] for rank in ranks),
                    key=lambda v: relative_error(v, reference))
        rows.append(make_row(
            name, len(results), 0 if name == NCCL_ALONE else nbytes,
            rank_seconds([rank["times"] for rank in ranks]), value,
            reference))
    return rows


def nccl_text(version: Any) -> str:
    """NCCL's version as ``torch.cuda.nccl.version()`` gives it (a tuple
    in recent PyTorch, an int in old ones) as text."""
    if isinstance(version, (tuple, list)):
        return ".".join(str(part) for part in version)
    return str(version)


def report(rows: Sequence[dict], gpu_names: Sequence[str],
           torch_version: str, nccl_version: str) -> str:
    """The table of `rows` (see :func:`make_row`).

    Parameters
    ----------
    rows : sequence of dict
        The rows, in order; "x one GPU" is each row's GB/s over the
        :data:`ONE_GPU` row's ("-" without it, or for a row of no bytes).
    gpu_names : sequence of str
        The names of the GPUs used; with fewer than two, a last line says
        that the NCCL rows were not run.
    torch_version, nccl_version : str
        For the first line.

    Returns
    -------
    str
        The first line (GPUs, versions), the header, a line a row (WRONG
        at its end where it is off), and the note, if any.
    """
    def gbps(row: dict) -> float | None:
        if not row["nbytes"] or row["seconds"] <= 0:
            return None
        return row["nbytes"] / row["seconds"] / 1e9

    base = next((gbps(row) for row in rows if row["name"] == ONE_GPU),
                None)
    lines = [f"{', '.join(gpu_names)}; torch {torch_version}, "
             f"NCCL {nccl_version}",
             f"{'row':<{NAME_WIDTH}}{'GPUs':>5}{'GiB':>8}{'ms':>10}"
             f"{'GB/s':>10}{'x one GPU':>11}{'rel err':>10}"]
    for row in rows:
        speed = gbps(row)
        ratio = "-" if speed is None or not base else f"{speed / base:.2f}"
        error = relative_error(row["value"], row["reference"])
        lines.append(
            f"{row['name']:<{NAME_WIDTH}}{row['gpus']:>5}"
            f"{row['nbytes'] / GIB:>8.2f}{row['seconds'] * 1e3:>10.3f}"
            f"{'-' if speed is None else f'{speed:.1f}':>10}{ratio:>11}"
            f"{error:>10.1e}{'' if row['correct'] else '  WRONG'}")
    if len(gpu_names) < 2:
        lines.append(f"not run, as they need two GPUs or more: "
                     f"{', '.join(NCCL_ROWS)}")
    return "\n".join(lines)


def document(rows: Sequence[dict], gpu_names: Sequence[str],
             torch_version: str, nccl_version: str) -> dict[str, Any]:
    """The ``--json`` document: the GPUs' names, the versions, the rows."""
    return {"gpus": list(gpu_names), "torch": torch_version,
            "nccl": nccl_version, "rows": [dict(row) for row in rows]}


def exit_status(rows: Sequence[dict]) -> int:
    """0 when every row is correct, else 1."""
    return 0 if all(row["correct"] for row in rows) else 1


def force_multicast_off(environ: MutableMapping[str, str]) -> None:
    """Set :data:`MULTICAST_OFF` in `environ`, over any value there."""
    environ.update(MULTICAST_OFF)


def _shard(torch: Any, size: int, seed: int, device: Any) -> Any:
    """A shard of `size` float32 elements, uniform in [0, 1), on
    `device`, the same in every process for the same seed."""
    generator = torch.Generator(device=device).manual_seed(seed)
    return torch.rand(size, generator=generator, device=device,
                      dtype=torch.float32)


def _reference(torch: Any, shard: Any) -> float:
    """The shard's sum in float64, a piece at a time."""
    return math.fsum(torch.sum(piece, dtype=torch.float64).item()
                     for piece in shard.split(REFERENCE_CHUNK))


def _say(row: dict) -> None:
    print(f"{row['name']}: {row['seconds'] * 1e3:.3f} ms"
          f"{'' if row['correct'] else ' WRONG'}", flush=True)


def _one_process_rows(sizes: Sequence[int], seed: int, repeats: int
                      ) -> tuple[list[dict], float]:
    """Rows 1 to 3 and the whole tensor's reference; the shards are freed
    on return (the NCCL ranks need the GPUs' memory)."""
    import torch  # noqa: PLC0415  (the GPU libraries: only when run)

    import cudareduce  # noqa: PLC0415

    devices = [torch.device("cuda", k) for k in range(len(sizes))]
    shards = [_shard(torch, size, seed + k, device)
              for k, (size, device) in enumerate(zip(sizes, devices))]
    references = [_reference(torch, shard) for shard in shards]
    reference = math.fsum(references)

    def sync() -> None:
        for device in devices:
            torch.cuda.synchronize(device)

    sync()
    seconds, value = median_wall_time(lambda: cudareduce.sum(shards[0]),
                                      sync, repeats, WARMUP)
    rows = [make_row(ONE_GPU, 1, sizes[0] * ITEMSIZE, seconds,
                     float(value), references[0])]
    _say(rows[-1])

    partials = [torch.zeros((), dtype=torch.float32, device=device)
                for device in devices]

    def combined(reduce_into: Callable[[Any, Any], Any]
                 ) -> Callable[[], float]:
        def run() -> float:
            # No host wait until .item(): the GPUs reduce at once.
            for shard, partial in zip(shards, partials):
                reduce_into(shard, partial)
            return torch.stack([
                partial.to(devices[0], non_blocking=True)
                for partial in partials]).sum().item()
        return run

    for name, reduce_into in (
            (CR_COPY, lambda shard, out: cudareduce.sum(shard, out=out)),
            (TORCH_COPY, lambda shard, out: torch.sum(shard, 0, out=out))):
        for partial in partials:
            partial.fill_(math.nan)   # no stale partial can pass the check
        seconds, value = median_wall_time(combined(reduce_into), sync,
                                          repeats, WARMUP)
        rows.append(make_row(name, len(sizes), sum(sizes) * ITEMSIZE,
                             seconds, value, reference))
        _say(rows[-1])
    return rows, reference


def _rank_main(rank: int, sizes: Sequence[int], store: str, seed: int,
               repeats: int, folder: str) -> None:
    """One rank of the NCCL rows, on GPU `rank`: its shard, its timings,
    written to ``rank<rank>.json`` in `folder` (see :func:`nccl_rows`)."""
    import torch  # noqa: PLC0415  (the GPU libraries: only when run)
    import torch.distributed as dist  # noqa: PLC0415

    import cudareduce  # noqa: PLC0415

    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method=f"file://{store}",
                            rank=rank, world_size=len(sizes))
    try:
        shard = _shard(torch, sizes[rank], seed + rank, device)
        partial = torch.full((), math.nan, dtype=torch.float32,
                             device=device)
        own = torch.zeros((), dtype=torch.float32, device=device)
        cudareduce.sum(shard, out=own)      # for the all-reduce alone

        def barrier() -> None:
            torch.cuda.synchronize(device)
            dist.barrier(device_ids=[rank])

        def reset() -> None:
            # all_reduce sums in place: each run starts from this rank's
            # own partial.
            partial.copy_(own)
            barrier()

        def reduced(reduce_into: Callable[[], Any] | None
                    ) -> Callable[[], float]:
            def run() -> float:
                if reduce_into is not None:
                    reduce_into()
                dist.all_reduce(partial)
                value = partial.item()
                torch.cuda.synchronize(device)
                return value
            return run

        results = {}
        for name, reduce_into, before in (
                (CR_NCCL, lambda: cudareduce.sum(shard, out=partial),
                 barrier),
                (TORCH_NCCL, lambda: torch.sum(shard, 0, out=partial),
                 barrier),
                (NCCL_ALONE, None, reset)):
            times, value = timed_runs(reduced(reduce_into), before,
                                      repeats)
            results[name] = {"times": times, "value": value}
        path = os.path.join(folder, f"rank{rank}.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(results, file)
    finally:
        dist.destroy_process_group()


def _nccl_rows(sizes: Sequence[int], seed: int, repeats: int,
               reference: float) -> list[dict]:
    """Rows 4 to 6: one process a GPU, spawned (CUDA is initialised
    here), their timings back through JSON files."""
    import torch.multiprocessing as torch_mp  # noqa: PLC0415

    print(f"NCCL rows: {len(sizes)} processes, one a GPU", flush=True)
    with tempfile.TemporaryDirectory(prefix="sharded_sum_") as folder:
        # A file store in a fresh folder: no TCP port to find free.
        store = os.path.join(folder, "store")
        torch_mp.spawn(_rank_main,
                       args=(list(sizes), store, seed, repeats, folder),
                       nprocs=len(sizes), join=True)
        results = []
        for rank in range(len(sizes)):
            path = os.path.join(folder, f"rank{rank}.json")
            with open(path, encoding="utf-8") as file:
                results.append(json.load(file))
    rows = nccl_rows(results, sum(sizes) * ITEMSIZE, reference)
    for row in rows:
        _say(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Before torch is imported and any process or communicator is made;
    # spawned ranks inherit os.environ.
    force_multicast_off(os.environ)
    import torch  # noqa: PLC0415  (the GPU libraries: only when run)
    import torch.cuda.nccl  # noqa: PLC0415

    visible = torch.cuda.device_count()
    gpus = visible if args.gpus is None else args.gpus
    if visible < 1 or gpus > visible:
        print(f"sharded_sum.py: {gpus or 'a'} GPU(s) asked for, {visible} "
              f"visible", file=sys.stderr)
        return 2
    sizes = shard_sizes(total_elements(args.gib), gpus)
    names = [torch.cuda.get_device_name(k) for k in range(gpus)]
    torch_version = str(torch.__version__)
    nccl_version = nccl_text(torch.cuda.nccl.version())
    print(f"{sum(sizes) * ITEMSIZE / GIB:g} GiB of float32 in {gpus} "
          f"shard(s) of {sizes[0] * ITEMSIZE / GIB:g} GiB; median of "
          f"{args.repeats} runs after {WARMUP}", flush=True)

    rows, reference = _one_process_rows(sizes, args.seed, args.repeats)
    torch.cuda.empty_cache()        # the ranks' shards need the memory
    if gpus >= 2:
        rows += _nccl_rows(sizes, args.seed, args.repeats, reference)
    print(report(rows, names, torch_version, nccl_version))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(document(rows, names, torch_version, nccl_version),
                      file, indent=1)
    return exit_status(rows)


if __name__ == "__main__":
    sys.exit(main())
