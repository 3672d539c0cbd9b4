"""benchmarks/sharded_sum.py without a GPU: its arguments, the shards'
sizes, the correctness check, the rows built from timings (the NCCL
ranks' too), the table and the JSON document, on made-up figures (the
timing itself needs the GPUs: run on the GPU machine)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = (Path(__file__).resolve().parents[2] / "benchmarks"
          / "sharded_sum.py")
_spec = importlib.util.spec_from_file_location("sharded_sum", SCRIPT)
sharded_sum = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sharded_sum)

GIB = 1 << 30
REFERENCE = 2.0e9
NAMES = ["NVIDIA H100 80GB HBM3"] * 2


def row(name, seconds, nbytes=16 * GIB, gpus=2, value=REFERENCE):
    return sharded_sum.make_row(name, gpus, nbytes, seconds, value,
                                REFERENCE)


def table_row(text, name):
    """(the numbers' column texts, whether marked WRONG) of `name`'s
    line of the table."""
    width = sharded_sum.NAME_WIDTH
    (line,) = [line for line in text.splitlines()
               if line[:width].strip() == name]
    fields = line[width:].split()
    wrong = fields[-1] == "WRONG"
    return (fields[:-1] if wrong else fields), wrong


def test_defaults():
    args = sharded_sum.parse_args([])
    assert (args.gib, args.gpus, args.repeats, args.seed, args.json) == (
        16.0, None, 20, 0, None)
    args = sharded_sum.parse_args(["--gpus", "1", "--gib", "0.5",
                                   "--repeats", "3", "--json", "s.json"])
    assert (args.gib, args.gpus, args.repeats, args.json) == (
        0.5, 1, 3, "s.json")


@pytest.mark.parametrize("argv", [["--gib", "0"], ["--gib", "-1"],
                                  ["--repeats", "0"], ["--gpus", "0"],
                                  ["--gpus", "-2"], ["--seed", "-1"],
                                  ["--gpus", "two"]])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit) as info:
        sharded_sum.parse_args(argv)
    assert info.value.code == 2


def test_shards():
    assert sharded_sum.total_elements(16) == 4 << 30
    assert sharded_sum.shard_sizes(4 << 30, 2) == [2 << 30, 2 << 30]
    assert sharded_sum.shard_sizes(10, 3) == [4, 3, 3]
    assert sharded_sum.shard_sizes(7, 1) == [7]
    with pytest.raises(ValueError):
        sharded_sum.shard_sizes(2, 3)


@pytest.mark.parametrize("error, correct", [
    (0.0, True), (0.99e-5, True), (-0.99e-5, True),
    (1.01e-5, False), (-1.01e-5, False)])
def test_correct_within_the_relative_tolerance(error, correct):
    value = REFERENCE * (1 + error)
    assert sharded_sum.is_correct(value, REFERENCE) is correct
    assert sharded_sum.make_row("r", 2, 8, 1.0, value,
                                REFERENCE)["correct"] is correct
    assert sharded_sum.relative_error(value, REFERENCE) == pytest.approx(
        abs(error), abs=1e-12)


def test_nan_and_zero_reference():
    assert not sharded_sum.is_correct(float("nan"), REFERENCE)
    assert sharded_sum.is_correct(0.0, 0.0)
    assert not sharded_sum.is_correct(1e-30, 0.0)


def test_report_columns_and_ratio():
    # One shard of 8 GiB in 4 ms, the whole 16 GiB in 4.4 ms.
    rows = [row(sharded_sum.ONE_GPU, 0.004, nbytes=8 * GIB, gpus=1,
                value=REFERENCE / 2),
            row(sharded_sum.CR_COPY, 0.0044)]
    rows[0]["reference"] = REFERENCE / 2
    rows[0]["correct"] = True
    text = sharded_sum.report(rows, NAMES, "2.9.0", "2.27.3")
    lines = text.splitlines()
    assert lines[0] == ("NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3; "
                        "torch 2.9.0, NCCL 2.27.3")
    assert lines[1].split() == ["row", "GPUs", "GiB", "ms", "GB/s", "x",
                                "one", "GPU", "rel", "err"]
    one, wrong = table_row(text, sharded_sum.ONE_GPU)
    assert not wrong
    assert one[:4] == ["1", "8.00", "4.000", f"{8 * GIB / 0.004e9:.1f}"]
    assert one[4] == "1.00"
    both, wrong = table_row(text, sharded_sum.CR_COPY)
    assert not wrong and both[:3] == ["2", "16.00", "4.400"]
    assert float(both[4]) == pytest.approx(2 / 1.1, abs=0.005)
    assert float(both[5]) == 0.0
    assert "not run" not in text


def test_report_marks_wrong_rows_and_their_error():
    rows = [row(sharded_sum.ONE_GPU, 0.004, nbytes=8 * GIB, gpus=1),
            row(sharded_sum.TORCH_COPY, 0.005,
                value=REFERENCE * (1 + 3e-5))]
    text = sharded_sum.report(rows, NAMES, "2.9.0", "2.27.3")
    fields, wrong = table_row(text, sharded_sum.TORCH_COPY)
    assert wrong and float(fields[-1]) == pytest.approx(3e-5, rel=0.05)
    assert not table_row(text, sharded_sum.ONE_GPU)[1]
    assert sharded_sum.exit_status(rows) == 1
    assert sharded_sum.exit_status(rows[:1]) == 0


def test_report_without_the_baseline_or_bytes_has_no_ratio():
    rows = [row(sharded_sum.CR_NCCL, 0.005),
            row(sharded_sum.NCCL_ALONE, 0.0001, nbytes=0)]
    text = sharded_sum.report(rows, NAMES, "2.9.0", "2.27.3")
    fields, _ = table_row(text, sharded_sum.CR_NCCL)
    assert fields[4] == "-" and fields[3] != "-"
    fields, _ = table_row(text, sharded_sum.NCCL_ALONE)
    assert fields[1:5] == ["0.00", "0.100", "-", "-"]


def test_report_says_when_the_nccl_rows_were_not_run():
    rows = [row(sharded_sum.ONE_GPU, 0.008, gpus=1)]
    one = sharded_sum.report(rows, NAMES[:1], "2.9.0", "2.27.3")
    assert one.splitlines()[-1] == (
        "not run, as they need two GPUs or more: "
        "cudareduce + NCCL all_reduce, torch.sum + NCCL all_reduce, "
        "NCCL all_reduce alone")
    two = sharded_sum.report(rows, NAMES, "2.9.0", "2.27.3")
    assert "not run" not in two


def test_rank_seconds_is_the_median_of_each_runs_slowest_rank():
    # Runs' slowest ranks: 3, 5, 4 -> 4 (rank 0's own median would be 2).
    assert sharded_sum.rank_seconds([[1, 5, 2], [3, 4, 4]]) == 4
    assert sharded_sum.rank_seconds([[1, 2, 3]]) == 2


def test_nccl_rows_from_the_ranks_results():
    good = {"times": [0.004, 0.005, 0.006], "value": REFERENCE}
    off = {"times": [0.004, 0.007, 0.006], "value": REFERENCE * 1.001}
    results = [
        {sharded_sum.CR_NCCL: good, sharded_sum.TORCH_NCCL: good,
         sharded_sum.NCCL_ALONE: good},
        {sharded_sum.CR_NCCL: good, sharded_sum.TORCH_NCCL: off,
         sharded_sum.NCCL_ALONE: good}]
    rows = sharded_sum.nccl_rows(results, 16 * GIB, REFERENCE)
    assert [r["name"] for r in rows] == list(sharded_sum.NCCL_ROWS)
    assert [r["gpus"] for r in rows] == [2, 2, 2]
    assert [r["nbytes"] for r in rows] == [16 * GIB, 16 * GIB, 0]
    assert [r["correct"] for r in rows] == [True, False, True]
    # The off rank's value, and its slower run in the median.
    assert rows[1]["value"] == REFERENCE * 1.001
    assert rows[1]["seconds"] == 0.006 and rows[0]["seconds"] == 0.005


def test_document_shape():
    rows = [row(sharded_sum.ONE_GPU, 0.004, nbytes=8 * GIB, gpus=1)]
    doc = sharded_sum.document(rows, NAMES, "2.9.0", "2.27.3")
    assert json.loads(json.dumps(doc)) == doc
    assert set(doc) == {"gpus", "torch", "nccl", "rows"}
    assert (doc["gpus"], doc["torch"], doc["nccl"]) == (
        NAMES, "2.9.0", "2.27.3")
    assert set(doc["rows"][0]) == {"name", "gpus", "nbytes", "seconds",
                                   "value", "reference", "correct"}


def test_nccl_text():
    assert sharded_sum.nccl_text((2, 27, 3)) == "2.27.3"
    assert sharded_sum.nccl_text(2708) == "2708"


def test_multicast_forced_off():
    environ = {"NCCL_NVLS_ENABLE": "1", "PATH": "/bin"}
    sharded_sum.force_multicast_off(environ)
    assert environ == {"NCCL_NVLS_ENABLE": "0", "PATH": "/bin",
                       "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                       "NVSHMEM_DISABLE_NVLS": "1"}


def test_timed_runs_calls_before_untimed_and_skips_the_warm_up():
    calls = []

    def run():
        calls.append("run")
        return len(calls)

    times, value = sharded_sum.timed_runs(
        run, lambda: calls.append("before"), 2, warmup=3)
    assert calls == ["before", "run"] * 5
    assert len(times) == 2 and value == 10
