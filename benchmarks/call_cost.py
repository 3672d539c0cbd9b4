"""What one small call costs from Python, by input kind: the bench's
end-to-end latency lines (``float(cudareduce.sum(x))`` on a 1,024-element
float32 CuPy array and PyTorch tensor, beside ``torch.sum(x).item()`` and
the launch + poll floor), the host side alone of a call into a device
``out`` (no wait for the GPU: argument parsing, the input's protocol, the
streams, the launch), and the two PyTorch queries a tensor's call makes
for its stream (``x.get_device()`` and
``torch._C._cuda_getCurrentRawStream``), timed from Python: more than
they cost from C.

Run it once per build under comparison, in one session on one GPU, and
compare the medians (issue 41's bound: a torch.Tensor's small call grows
by at most 0.5 µs)::

    python benchmarks/call_cost.py --json cost.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

import cudareduce
from cudareduce.bench import peers
from cudareduce.bench.timers import wall_times

N = 1024
WARMUP = 500
REPS = 5000


def median_us(call) -> float:
    """Median µs of `call()` over ``REPS`` calls after ``WARMUP``."""
    wall_times(call, WARMUP)
    times, _ = wall_times(call, REPS)
    return statistics.median(times) * 1e6


def out_call_us(x, out) -> float:
    """Median µs of ``cudareduce.sum(x, out=out)``: the host side of a call
    that queues its work and returns."""
    return median_us(lambda: cudareduce.sum(x, out=out))


def measure() -> dict[str, float]:
    import cupy  # noqa: PLC0415 - the GPU peers, optional for the package
    import torch  # noqa: PLC0415
    cost = peers.measure_latency(0)
    tensor = torch.rand(N, device="cuda")
    cost["cudareduce.sum(x, out=o), torch x"] = out_call_us(
        tensor, torch.zeros((), device="cuda"))
    raw_stream = torch._C._cuda_getCurrentRawStream
    cost["x.get_device() + its raw current stream, from Python"] = (
        median_us(lambda: raw_stream(tensor.get_device())))
    cost["an empty Python call (the loop's own cost)"] = median_us(
        lambda: None)
    array = cupy.random.random(N, dtype=cupy.float32)
    cost["cudareduce.sum(x, out=o), cupy x"] = out_call_us(
        array, cupy.zeros((), cupy.float32))
    torch.cuda.synchronize()
    return cost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the medians (µs) here")
    args = parser.parse_args(argv)
    cost = measure()
    for name, us in cost.items():
        print(f"{us:8.2f} µs  {name}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump({"cudareduce": cudareduce.__file__, "us": cost}, file,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
