"""Issue 45's table from one run: the GPUs of one host reducing a host
array, and device shards one a GPU, on 1, 2, 4, ... of them.

On the GPU machine (a kind with several GPUs), from the repository root::

    python benchmarks/several_gpus.py --out several      # 64 GiB, 64 GiB
    python benchmarks/several_gpus.py --host-gib 4 --shard-gib 1 \\
        --out several                                     # a smoke run
    python benchmarks/several_gpus.py --parts links --out several
    python benchmarks/several_gpus.py --table several/several-gpus.json

Each part runs a script of ``benchmarks/`` in a process of its own, so
that no part's CUDA contexts, memory pools or Dask workers outlive it,
and writes its JSON and its output into ``--out``:

``links``   ``host_links.py --reduce``: the floors of a host array on k
            GPUs (the links together, the host's staging copy,
            registration in place), and ``cudareduce.sum(x, devices=)`` of
            one pageable float32 array of ``--host-gib`` GiB, then of the
            same array registered in place (copied from its pages, not
            staged);
``dask``    ``dask_sum.py --chunks-of numpy``: the same bytes in NumPy
            chunks of 512 MiB made on a ``LocalCUDACluster`` of k workers,
            one a GPU, ``cudareduce.dask.sum`` against Dask's own;
``shards``  ``sharded_sum.py``, once for each k: a float32 shard of
            ``--shard-gib`` GiB on each of k GPUs (weak scaling), one
            ``cudareduce.sum`` a GPU in one process, and over NCCL.

A run of several parts (each call of the device tool is 10 minutes at
most: ``--parts`` splits the run, and each part's files are kept in
``--out``) ends with ``several-gpus.json``, gathering every part found in
``--out``, and the table; ``--table`` prints the table of such a document
again.  The table, one line for each count of GPUs:

- the host array's floor (the smaller of the links' rate and the host's
  best staging copy, host_links.py's ``floors``), the one call's GB/s and
  its share of that floor; the locked array's GB/s and its share of the
  links' rate (its floor: nothing is staged);
- ``cudareduce.dask.sum`` of the NumPy chunks, GB/s, and its share of the
  one call on as many GPUs;
- the device shards: all k shards' bytes over the time of one
  ``cudareduce.sum`` a GPU, as a multiple of one shard alone on one GPU
  (weak scaling: k is ideal), in one process and over NCCL.

Issue 45's targets, on the table: 90% of the floor on 1, 2 and 4 GPUs for
host arrays of 64 GiB and more; Dask at 85% of the one call; the shards
at 0.9 k.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Scripts of this folder, as this one is (benchmarks/ is no package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_links import LOCKED, ONE_CALL, doubling_counts  # noqa: E402
from sharded_sum import CR_COPY, CR_NCCL, ONE_GPU  # noqa: E402

__all__ = ["DOCUMENT", "PARTS", "commands", "gather", "main", "parse_args",
           "table", "verdicts"]

HERE = Path(__file__).resolve().parent
#: The parts, in the order they run.
PARTS = ("links", "dask", "shards")
#: The document a run gathers into ``--out``.
DOCUMENT = "several-gpus.json"
#: Dask's chunks, MiB (dask_sum.py's largest, its one-task-a-worker case).
DASK_CHUNK_MIB = 512


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="several_gpus.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host-gib", type=float, default=64.0,
                        help="the host array's GiB of float32 (64)")
    parser.add_argument("--shard-gib", type=float, default=64.0,
                        help="each GPU's shard, GiB of float32 (64)")
    parser.add_argument("--gpus", type=int, default=None,
                        help="the most GPUs (default: every visible one)")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated, of {', '.join(PARTS)} "
                             f"(all)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs per figure in each part (3)")
    parser.add_argument("--out", metavar="DIR",
                        help="where the parts' files and the document go")
    parser.add_argument("--table", metavar="JSON",
                        help="print the table of a gathered document and "
                             "exit")
    args = parser.parse_args(argv)
    if args.table is None:
        args.parts = args.parts.split(",")
        unknown = set(args.parts) - set(PARTS)
        if unknown:
            parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
        if args.out is None:
            parser.error("--out is needed to run parts")
        if min(args.host_gib, args.shard_gib) <= 0 or args.repeats < 1 \
                or (args.gpus is not None and args.gpus < 1):
            parser.error("--host-gib, --shard-gib, --gpus and --repeats "
                         "must be positive")
    return args


def commands(part: str, args: argparse.Namespace, gpus: int,
             out: Path) -> list[tuple[list[str], Path]]:
    """The processes of `part` on up to `gpus` GPUs: each command and the
    JSON it writes."""
    python = sys.executable
    repeats = ["--repeats", str(args.repeats)]
    if part == "links":
        json_path = out / "links.json"
        return [([python, str(HERE / "host_links.py"),
                  "--gib", repr(args.host_gib / gpus), "--gpus", str(gpus),
                  "--reduce", *repeats, "--json", str(json_path)],
                 json_path)]
    if part == "dask":
        json_path = out / "dask.json"
        return [([python, str(HERE / "dask_sum.py"), "--chunks-of", "numpy",
                  "--gib", repr(args.host_gib),
                  "--chunks-mib", str(DASK_CHUNK_MIB),
                  "--schedulers", "cuda-cluster",
                  "--workers", ",".join(map(str, doubling_counts(gpus))),
                  *repeats, "--json", str(json_path)], json_path)]
    return [([python, str(HERE / "sharded_sum.py"), "--gpus", str(k),
              "--gib", repr(args.shard_gib * k), *repeats,
              "--json", str(out / f"shards-{k}.json")],
             out / f"shards-{k}.json") for k in doubling_counts(gpus)]


def gather(out: Path, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The document of the parts' JSON files found in `out`, with the
    run's `facts` (the machine, the arguments)."""
    def read(name: str) -> Any:
        path = out / name
        return json.loads(path.read_text(encoding="utf-8")) \
            if path.is_file() else None

    shards = {path.stem.split("-")[1]: read(path.name)
              for path in sorted(out.glob("shards-*.json"))}
    return {**facts, "links": read("links.json"), "dask": read("dask.json"),
            "shards": shards}


def _gbps(row: Mapping[str, Any] | None) -> float | None:
    if row is None or not row.get("seconds"):
        return None
    return row["nbytes"] / row["seconds"] / 1e9


def _row(rows: Sequence[Mapping[str, Any]], **match: Any
         ) -> Mapping[str, Any] | None:
    return next((r for r in rows
                 if all(r.get(k) == v for k, v in match.items())), None)


def figures(document: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """For each count of GPUs in the document: the figures of its line
    (GB/s and shares; None where a part did not run)."""
    links = document.get("links") or {}
    dask = document.get("dask") or {}
    shards = document.get("shards") or {}
    floors = {int(k): v for k, v in (links.get("floors") or {}).items()}
    found: dict[int, dict[str, Any]] = {}
    every = set(floors) | {int(k) for k in shards} | {
        r["workers"] for r in dask.get("rows", [])}
    for k in sorted(every):
        line: dict[str, Any] = {}
        floor = floors.get(k, {})
        line["floor_gbps"] = floor.get("floor_gbps")
        line["links_gbps"] = floor.get("links_gbps")
        rows = links.get("rows", [])
        line["call_gbps"] = _gbps(_row(rows, row=ONE_CALL, gpus=k))
        line["locked_gbps"] = _gbps(_row(rows, row=LOCKED, gpus=k))
        line["dask_gbps"] = _gbps(_row(
            dask.get("rows", []), scheduler="cuda-cluster", workers=k,
            chunk_mib=DASK_CHUNK_MIB, method="cudareduce.dask"))
        doc = shards.get(str(k)) or {}
        one = _gbps(_row(doc.get("rows", []), name=ONE_GPU))
        for key, name in (("shards_x", CR_COPY),
                          ("shards_nccl_x", CR_NCCL)):
            every_gpu = _gbps(_row(doc.get("rows", []), name=name,
                                   gpus=k))
            line[key] = every_gpu / one if one and every_gpu else None
        line["correct"] = all(r.get("correct", True)
                              for r in doc.get("rows", []))
        found[k] = line
    return found


def _share(value: float | None, of: float | None) -> float | None:
    return value / of if value and of else None


def table(document: Mapping[str, Any]) -> str:
    """The Markdown table of a gathered document, a line a count of
    GPUs."""
    def cell(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    lines = ["| GPUs | floor GB/s | one call GB/s | of floor "
             "| locked GB/s | of links | Dask GB/s | of one call "
             "| shards × one GPU | over NCCL |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, f in figures(document).items():
        lines.append(
            f"| {k} | {cell(f['floor_gbps'], '.1f')} "
            f"| {cell(f['call_gbps'], '.1f')} "
            f"| {cell(_share(f['call_gbps'], f['floor_gbps']), '.0%')} "
            f"| {cell(f['locked_gbps'], '.1f')} "
            f"| {cell(_share(f['locked_gbps'], f['links_gbps']), '.0%')} "
            f"| {cell(f['dask_gbps'], '.1f')} "
            f"| {cell(_share(f['dask_gbps'], f['call_gbps']), '.0%')} "
            f"| {cell(f['shards_x'], '.2f')} "
            f"| {cell(f['shards_nccl_x'], '.2f')} |")
    return "\n".join(lines)


def verdicts(document: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """Issue 45's targets on the document, each with whether it is met;
    one without its figures is not met."""
    found = []
    for k, f in figures(document).items():
        share = _share(f["call_gbps"], f["floor_gbps"])
        found.append((f"{k} GPU(s): one call >= 90% of the floor",
                      share is not None and share >= 0.9))
        locked = _share(f["locked_gbps"], f["links_gbps"])
        found.append((f"{k} GPU(s): locked pages >= 90% of the links",
                      locked is not None and locked >= 0.9))
        dask = _share(f["dask_gbps"], f["call_gbps"])
        found.append((f"{k} GPU(s): Dask >= 85% of the one call",
                      dask is not None and dask >= 0.85))
        found.append((f"{k} GPU(s): shards >= {0.9 * k:.1f}x one GPU",
                      f["shards_x"] is not None
                      and f["shards_x"] >= 0.9 * k))
        found.append((f"{k} GPU(s): every shard's sum right",
                      f["correct"]))
    return found


def _visible_gpus() -> list[str]:
    """The names of the GPUs this machine shows (nvidia-smi)."""
    done = subprocess.run(["nvidia-smi", "--query-gpu=name",
                           "--format=csv,noheader"], capture_output=True,
                          text=True, check=True)
    return [line.strip() for line in done.stdout.splitlines()
            if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.table is not None:
        document = json.loads(Path(args.table).read_text(encoding="utf-8"))
        print(table(document))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = _visible_gpus()
    gpus = min(args.gpus or len(names), len(names))
    status = 0
    for part in args.parts:
        for command, json_path in commands(part, args, gpus, out):
            print(f"== {' '.join(command)}", flush=True)
            begin = time.perf_counter()
            log = out / f"{json_path.stem}.log"
            with log.open("w", encoding="utf-8") as file:
                done = subprocess.run(command, stdout=file,
                                      stderr=subprocess.STDOUT)
            print(f"== exit {done.returncode} after "
                  f"{time.perf_counter() - begin:.0f} s (log: {log})",
                  flush=True)
            status = status or done.returncode
    facts = {"gpus": names[:gpus], "cpus": len(os.sched_getaffinity(0)),
             "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "host_gib": args.host_gib, "shard_gib": args.shard_gib,
             "repeats": args.repeats}
    document = gather(out, facts)
    (out / DOCUMENT).write_text(json.dumps(document, indent=1),
                                encoding="utf-8")
    print(table(document))
    for text, met in verdicts(document):
        print(f"{'met' if met else 'MISSED'}: {text}")
    return status


if __name__ == "__main__":
    sys.exit(main())
