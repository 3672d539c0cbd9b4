"""benchmarks/dask_sum.py without a GPU: its arguments, chunk sizes, the
table's split of the wall time and the targets' verdicts on made-up rows
(the timing itself needs the GPU: run on the GPU machine, its output in
docs/recorded/)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "dask_sum.py"
_spec = importlib.util.spec_from_file_location("dask_sum", SCRIPT)
dask_sum = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dask_sum)

NBYTES = 8 << 30
SINGLE_GBPS = 3000.0


def row(scheduler, chunk_mib, method, seconds, tasks=10, workers=1):
    return {"scheduler": scheduler, "workers": workers,
            "chunk_mib": chunk_mib, "method": method, "seconds": seconds,
            "tasks": tasks, "nbytes": NBYTES}


def test_defaults_are_the_issues_sweep():
    args = dask_sum.parse_args([])
    assert (args.gib, args.chunks_mib, args.schedulers, args.workers,
            args.chunks_of) == (8.0, [32, 128, 512],
                                ["threads", "cuda-cluster"], [1], "cupy")


def test_chunks_are_cupy_or_numpy_arrays():
    assert dask_sum.parse_args(["--chunks-of", "numpy"]).chunks_of == "numpy"
    with pytest.raises(SystemExit) as info:
        dask_sum.parse_args(["--chunks-of", "torch"])
    assert info.value.code == 2
    # The table says which single array its split of the time is from.
    for kind in ("cupy", "numpy"):
        first = dask_sum.report([], SINGLE_GBPS, kind).splitlines()[0]
        assert first == (f"single array (cudareduce.sum of a {kind} "
                         f"array): 3,000.0 GB/s")


def test_workers_are_counts_or_all():
    assert dask_sum.parse_args(["--workers", "1,2"]).workers == [1, 2]
    assert dask_sum.parse_args(["--workers", "all"]).workers is None


@pytest.mark.parametrize("argv", [["--repeats", "0"], ["--gib", "-1"],
                                  ["--chunks-mib", "0,128"],
                                  ["--workers", "0,2"],
                                  ["--schedulers", "threads,processes"]])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit) as info:
        dask_sum.parse_args(argv)
    assert info.value.code == 2


def test_chunk_elements():
    assert dask_sum.chunk_elements(128) == 32 << 20
    assert dask_sum.chunk_elements(1, itemsize=8) == 1 << 17


def test_report_splits_the_wall_time():
    # 8 GiB at 3,000 GB/s: 2.86 ms of GPU; the rest over 11 tasks.
    text = dask_sum.report([row("threads", 128, "cudareduce.dask",
                                0.00286 + 0.0011, tasks=11)], SINGLE_GBPS)
    line = text.splitlines()[-1].split()
    assert line[:4] == ["threads", "1", "128", "cudareduce.dask"]
    ms, gbps, tasks, gpu_ms, rest_ms, us_per_task = map(float, line[4:])
    assert (ms, tasks) == (3.96, 11)
    assert gbps == pytest.approx(NBYTES / 0.00396 / 1e9, abs=0.05)
    exact_gpu_ms = NBYTES / 3e12 * 1e3
    assert gpu_ms == pytest.approx(exact_gpu_ms, abs=0.005)
    assert rest_ms == pytest.approx(3.96 - exact_gpu_ms, abs=0.005)
    assert us_per_task == pytest.approx((3.96 - exact_gpu_ms) * 1e3 / 11,
                                        abs=0.05)


def test_targets_met_and_missed():
    t = NBYTES / (SINGLE_GBPS * 1e9)
    met = [row(s, 128, m, sec) for s in ("threads", "cuda-cluster")
           for m, sec in (("dask x.sum()", 0.04), ("cudareduce.dask", 0.01))]
    met.append(row("threads", 512, "cudareduce.dask", 1.9 * t))
    assert [ok for _, ok in dask_sum.targets(met, SINGLE_GBPS)] == [
        True, True, True]
    missed = [row("threads", 128, "dask x.sum()", 0.04),
              row("threads", 128, "cudareduce.dask", 0.021),
              row("threads", 512, "cudareduce.dask", 2.1 * t)]
    verdicts = dask_sum.targets(missed, SINGLE_GBPS)
    assert [ok for _, ok in verdicts] == [False, False, False]
    assert "1.90x" in verdicts[0][0] and "no figure" in verdicts[1][0]
    assert "48%" in verdicts[2][0]


def test_report_shares_the_gpus_time_between_the_workers():
    # Two workers: each reads half the bytes at one GPU's bandwidth.
    text = dask_sum.report([row("cuda-cluster", 512, "cudareduce.dask",
                                0.002, tasks=3, workers=2)], SINGLE_GBPS)
    line = text.splitlines()[-1].split()
    assert line[:2] == ["cuda-cluster", "2"]
    assert float(line[7]) == pytest.approx(NBYTES / 6e12 * 1e3, abs=0.005)


def test_scaling_target_where_the_run_has_two_workers():
    t = 0.01
    one_gpu = [row("cuda-cluster", 512, "cudareduce.dask", t)]
    # A run on one GPU has no scaling verdict.
    assert len(dask_sum.targets(one_gpu, SINGLE_GBPS)) == 3
    for two_seconds, figure, met in ((t / 1.85, "1.85x", True),
                                     (t / 1.7, "1.70x", False)):
        verdicts = dask_sum.targets(one_gpu + [row(
            "cuda-cluster", 512, "cudareduce.dask", two_seconds,
            workers=2)], SINGLE_GBPS)
        text, ok = verdicts[-1]
        assert "2 GPUs >= 1.8x on 1" in text and figure in text
        assert ok is met
    only_two = [row("cuda-cluster", 512, "cudareduce.dask", t, workers=2)]
    assert dask_sum.targets(only_two, SINGLE_GBPS)[-1] == (
        "cuda-cluster, 512 MiB chunks: cudareduce.dask.sum on 2 GPUs >= "
        "1.8x on 1: no figure", False)


