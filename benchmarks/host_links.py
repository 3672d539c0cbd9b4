"""The physical limits of reducing a host array on several GPUs at once
(issue 45): what the host-to-device links carry together, and what the
host can feed them; with ``--reduce``, what ``cudareduce.sum(x,
devices=...)`` reaches under them in the same run.

On the GPU machine (a kind with several GPUs), from the repository root::

    python benchmarks/host_links.py                     # every GPU, 2 GiB each
    python benchmarks/host_links.py --gib 1 --gpus 2 --json links.json
    python benchmarks/host_links.py --gib 16 --reduce --json several.json

Rows, each the median of ``--repeats`` timed runs after one untimed one,
as GB/s of all the bytes moved:

1. ``pinned H2D``: on the first 1, 2, 4, ... GPUs at once (every count up
   to ``--gpus``), each copying ``--gib`` GiB from a pinned host buffer of
   its own into its own memory, one CUDA stream and one host thread a GPU;
   the run's time is from the threads' common start to the last copy's
   end.
2. ``pageable H2D``: the same from ordinary (pageable) host memory, which
   the driver stages through pinned buffers of its own.
3. ``registered H2D``: the same from pageable memory pinned in place by
   ``cudaHostRegister`` (the caller's pages, not copied), and
   ``register``: what registering and unregistering that memory costs, as
   GB/s of the bytes registered.
4. ``host memcpy``: ``numpy.copyto`` of ``--gib`` times the GPUs' count
   GiB between two pageable arrays, by 1, 2, 4, ... host threads (up to
   ``--threads``), each copying its share: the staging copy a pageable
   array takes on the way to pinned buffers.

The floor of a host array reduced on k GPUs is the smaller of what the
links take together (pinned H2D on k GPUs) and what the host can feed
them: the fastest staging copy, or registration in place where it is the
faster of the two (its H2D rate, with the cost of registering one GPU's
buffer, as measured one at a time, spread over that buffer's bytes).
``report`` prints it for each k, and its ratio to one GPU's.

5. ``cudareduce.sum`` (``--reduce``): one call of ``cudareduce.sum(x,
   devices=[0 .. k))`` on the first 1, 2, 4, ... GPUs, ``x`` a pageable
   float32 NumPy array of ``--gib`` times the GPUs' count GiB (the same
   array for every k), its result checked; ``report`` then prints its
   GB/s, its share of the floor on as many GPUs, and its speed-up over
   one GPU's call.
6. ``cudareduce.sum, locked`` (``--reduce``): the same calls once ``x``'s
   pages are registered in place (``cudaHostRegister``, portable; the
   registration outside the timing, as for memory its owner keeps
   pinned): the library then copies the chunks from the array itself,
   not through the staging copy, so their floor is the links' alone.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["LOCKED", "ONE_CALL", "SUMS", "doubling_counts", "floors",
           "host_copy_seconds", "main", "parse_args", "reduce_rows",
           "report"]

GIB = 1 << 30


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="host_links.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=2.0,
                        help="GiB each GPU copies (2)")
    parser.add_argument("--gpus", type=int, default=None,
                        help="the most GPUs at once (default: every "
                             "visible one)")
    parser.add_argument("--threads", type=int, default=None,
                        help="the most host threads of the memcpy rows "
                             "(default: the CPUs this process may use)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs per figure, after one untimed")
    parser.add_argument("--reduce", action="store_true",
                        help="also time cudareduce.sum(x, devices=...) "
                             "on 1, 2, 4, ... GPUs")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.gib <= 0 or args.repeats < 1 \
            or min(n for n in (args.gpus, args.threads, 1)
                   if n is not None) < 1:
        parser.error("--gib, --gpus, --threads and --repeats must be "
                     "positive")
    return args


def doubling_counts(most: int) -> list[int]:
    """1, 2, 4, ... up to `most`, and `most` itself."""
    counts = [1]
    while counts[-1] * 2 <= most:
        counts.append(counts[-1] * 2)
    if counts[-1] != most:
        counts.append(most)
    return counts


def _at_once(work: Sequence[Callable[[], None]]) -> float:
    """Seconds from the common start of `work`'s calls, each in a thread
    of its own, to the end of the last."""
    start = threading.Barrier(len(work) + 1)
    threads = [threading.Thread(target=lambda w=w: (start.wait(), w()))
               for w in work]
    for thread in threads:
        thread.start()
    start.wait()
    begin = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - begin


def _median(run: Callable[[], float], repeats: int) -> float:
    """The median of `repeats` results of `run()` after one untimed."""
    run()
    return statistics.median(run() for _ in range(repeats))


def host_copy_seconds(source: np.ndarray, target: np.ndarray, threads: int,
                      repeats: int) -> float:
    """Median seconds of copying `source` into `target` (1-D, the same
    size) by `threads` threads, each its contiguous share."""
    bounds = np.linspace(0, source.size, threads + 1).astype(np.int64)
    shares = [(target[a:b], source[a:b])
              for a, b in zip(bounds[:-1], bounds[1:])]
    return _median(lambda: _at_once(
        [lambda t=t, s=s: np.copyto(t, s) for t, s in shares]), repeats)


def _device_rows(cupy, gpus: int, nbytes: int, repeats: int) -> list[dict]:
    """The H2D rows and the registration's cost, on 1, 2, 4, ... GPUs."""
    runtime = cupy.cuda.runtime
    setup = []
    for ordinal in range(gpus):
        with cupy.cuda.Device(ordinal):
            pinned = cupy.cuda.alloc_pinned_memory(nbytes)
            pageable = np.ones(nbytes, np.uint8)
            setup.append({"device": cupy.empty(nbytes, np.uint8),
                          "stream": cupy.cuda.Stream(non_blocking=True),
                          "pinned": pinned, "pageable": pageable})

    def copies(count: int, source: str) -> list[Callable[[], None]]:
        def copy(ordinal: int) -> None:
            s = setup[ordinal]
            with cupy.cuda.Device(ordinal):
                pointer = s["pinned"].ptr if source == "pinned" \
                    else s["pageable"].ctypes.data
                runtime.memcpyAsync(s["device"].data.ptr, pointer, nbytes,
                                    runtime.memcpyHostToDevice,
                                    s["stream"].ptr)
                s["stream"].synchronize()
        return [lambda k=k: copy(k) for k in range(count)]

    rows = []
    for count in doubling_counts(gpus):
        for source, name in (("pinned", "pinned H2D"),
                             ("pageable", "pageable H2D")):
            seconds = _median(lambda: _at_once(copies(count, source)),
                              repeats)
            rows.append({"row": name, "gpus": count,
                         "nbytes": count * nbytes, "seconds": seconds})
    register, unregister = [], []
    try:
        for s in setup:
            begin = time.perf_counter()
            runtime.hostRegister(s["pageable"].ctypes.data, nbytes, 0)
            register.append(time.perf_counter() - begin)
            s["registered"] = True
        for count in doubling_counts(gpus):
            seconds = _median(lambda: _at_once(copies(count, "pageable")),
                              repeats)
            rows.append({"row": "registered H2D", "gpus": count,
                         "nbytes": count * nbytes, "seconds": seconds})
    finally:
        # Every buffer registered, a failed registration's earlier ones
        # too.
        for s in setup:
            if s.pop("registered", False):
                begin = time.perf_counter()
                runtime.hostUnregister(s["pageable"].ctypes.data)
                unregister.append(time.perf_counter() - begin)
    rows.append({"row": "register", "gpus": 1, "nbytes": nbytes,
                 "seconds": statistics.median(
                     r + u for r, u in zip(register, unregister))})
    return rows


#: The row of the library's call on a pageable array, and on the same
#: array registered in place.
ONE_CALL = "cudareduce.sum"
LOCKED = "cudareduce.sum, locked"
SUMS = {ONE_CALL: "floor_gbps", LOCKED: "links_gbps"}
"""The rows of the library's calls, each with the floor (of
:func:`floors`) that bounds it: a pageable array's is the smaller of the
links and the staging copy; a locked one's, copied in place, the
links'."""


def reduce_rows(cudareduce, x: np.ndarray, gpus: int, repeats: int,
                name: str = ONE_CALL) -> list[dict]:
    """The rows `name` (of :data:`SUMS`): `x` summed on the first 1, 2,
    4, ... of `gpus` GPUs, each count's result the same bits as one
    GPU's."""
    rows = []
    want = None
    for count in doubling_counts(gpus):
        devices = list(range(count))
        got = []

        def run(devices=devices, got=got) -> float:
            begin = time.perf_counter()
            got.append(cudareduce.sum(x, devices=devices))
            return time.perf_counter() - begin

        seconds = _median(run, repeats)
        if want is None:
            want = got[0]
        if any(np.asarray(g).tobytes() != np.asarray(want).tobytes()
               for g in got):
            raise AssertionError(f"devices={devices}: {got} against one "
                                 f"GPU's {want}")
        rows.append({"row": name, "gpus": count, "nbytes": x.nbytes,
                     "seconds": seconds})
    return rows


def floors(rows: list[dict]) -> dict[int, dict]:
    """For each count of GPUs of the pinned H2D rows: the links' rate,
    what the host feeds (the fastest memcpy, or registration in place
    where faster: its H2D rate on as many GPUs with the registration's
    cost spread over the bytes), and the floor, the smaller, in GB/s."""
    def gbps(row: dict) -> float:
        return row["nbytes"] / row["seconds"] / 1e9

    memcpy = max((gbps(r) for r in rows if r["row"] == "host memcpy"),
                 default=None)
    register = next((r for r in rows if r["row"] == "register"), None)
    found = {}
    for row in rows:
        if row["row"] != "pinned H2D":
            continue
        links = gbps(row)
        feeds = [memcpy] if memcpy is not None else []
        registered = next((r for r in rows if r["row"] == "registered H2D"
                           and r["gpus"] == row["gpus"]), None)
        if registered is not None and register is not None:
            per_byte = (registered["seconds"] / registered["nbytes"]
                        + register["seconds"] / register["nbytes"])
            feeds.append(1 / per_byte / 1e9)
        feed = max(feeds) if feeds else None
        found[row["gpus"]] = {
            "links_gbps": links, "host_gbps": feed,
            "floor_gbps": links if feed is None else min(links, feed)}
    return found


def report(rows: list[dict]) -> str:
    """The rows' table, then each count of GPUs' floor."""
    lines = [f"{'row':<16}{'GPUs':>5}{'threads':>8}{'GiB':>8}{'ms':>10}"
             f"{'GB/s':>9}"]
    for row in rows:
        lines.append(
            f"{row['row']:<16}{row['gpus']:>5}{row.get('threads', ''):>8}"
            f"{row['nbytes'] / GIB:>8.2f}{row['seconds'] * 1e3:>10.2f}"
            f"{row['nbytes'] / row['seconds'] / 1e9:>9.1f}")
    found = floors(rows)
    if found:
        one = found[min(found)]["floor_gbps"]
        lines.append("")
        lines.append(f"{'GPUs':>4}{'links GB/s':>12}{'host GB/s':>11}"
                     f"{'floor GB/s':>12}{'x one GPU':>11}")
        for count, f in sorted(found.items()):
            host = "-" if f["host_gbps"] is None else f"{f['host_gbps']:.1f}"
            lines.append(f"{count:>4}{f['links_gbps']:>12.1f}{host:>11}"
                         f"{f['floor_gbps']:>12.1f}"
                         f"{f['floor_gbps'] / one:>11.2f}")
    for name, bound in SUMS.items():
        sums = {r["gpus"]: r["nbytes"] / r["seconds"] / 1e9 for r in rows
                if r["row"] == name}
        if not sums:
            continue
        lines.append("")
        lines.append(f"{'GPUs':>4}{name + ' GB/s':>29}"
                     f"{'% of floor':>12}{'x one GPU':>11}")
        for count, gbps in sorted(sums.items()):
            floor = found.get(count, {}).get(bound)
            share = "-" if floor is None else f"{100 * gbps / floor:.0f}%"
            lines.append(f"{count:>4}{gbps:>29.1f}{share:>12}"
                         f"{gbps / sums[min(sums)]:>11.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import cupy  # noqa: PLC0415 - a GPU machine's module
    visible = cupy.cuda.runtime.getDeviceCount()
    gpus = min(args.gpus or visible, visible)
    nbytes = int(args.gib * GIB)
    rows = _device_rows(cupy, gpus, nbytes, args.repeats)
    most = args.threads or len(os.sched_getaffinity(0))
    source = np.ones(gpus * nbytes, np.uint8)
    target = np.zeros_like(source)
    for threads in doubling_counts(most):
        rows.append({"row": "host memcpy", "gpus": gpus, "threads": threads,
                     "nbytes": source.nbytes,
                     "seconds": host_copy_seconds(source, target, threads,
                                                  args.repeats)})
    if args.reduce:
        import cudareduce  # noqa: PLC0415 - built on the GPU machine
        del target
        x = source[:source.size // 4 * 4].view(np.float32)
        rows += reduce_rows(cudareduce, x, gpus, args.repeats)
        # 1: cudaHostRegisterPortable, locked for every GPU's copies.
        cupy.cuda.runtime.hostRegister(x.ctypes.data, x.nbytes, 1)
        try:
            rows += reduce_rows(cudareduce, x, gpus, args.repeats, LOCKED)
        finally:
            cupy.cuda.runtime.hostUnregister(x.ctypes.data)
    names = [cupy.cuda.runtime.getDeviceProperties(k)["name"].decode()
             for k in range(gpus)]
    print(f"{gpus} of {visible} GPUs: {', '.join(names)}; "
          f"{len(os.sched_getaffinity(0))} CPUs")
    print(report(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"gpus": names, "gib_per_gpu": args.gib,
                       "repeats": args.repeats, "rows": rows,
                       "floors": floors(rows)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
