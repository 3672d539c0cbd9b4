"""cudareduce.bench.counters without a GPU: ncu's CSV parsed from two
recorded H100 profiles (tests/bench/data/ncu-h100-float32-2p22.csv and -2p26.csv:
float32, 256 threads, every method in ladder order, recorded without
--log-file, so the profiled program's prints and ncu's ==PROF== lines stand
around the CSV), the table and its what-changed lines, the claims, the ncu
command, and collect() against fake ncu executables."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

import cudareduce
from cudareduce.bench import counters

DATA = Path(__file__).parent / "data"
#: The recordings' methods, in their order: the spec, not read from the code.
LADDER = ["interleaved_divergent", "interleaved_bank_conflict", "sequential",
          "first_add", "unroll_warp", "unroll_complete", "multi_element"]
METHODS = LADDER + ["fast", "cub"]

INST = "smsp__inst_executed.sum"
LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
GRID = "launch__grid_size"
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
RATIO = "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"
TIME = "gpu__time_duration.sum"


def recorded_text(k: int) -> str:
    return (DATA / f"ncu-h100-float32-2p{k}.csv").read_text(encoding="utf-8")


def document(k: int, text: str | None = None) -> dict:
    rows = counters.parse_ncu_csv(recorded_text(k) if text is None else text,
                                  METHODS)
    return {"ncu_version": "2025.3.1.0", "n": 1 << k, "dtype": "float32",
            "threads": 256, "metrics": [m.name for m in counters.METRICS],
            "rows": rows}


def first(doc: dict, key: str) -> dict[str, object]:
    return {r["method"]: r[key] for r in doc["rows"] if r["pass"] == 0}


def passes(doc: dict, method: str, key: str) -> list:
    return [r[key] for r in doc["rows"] if r["method"] == method]


def csv_records(text: str) -> tuple[list[str], list[list[str]]]:
    """(the lines before the CSV, its records) of a recording."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"'))
    return lines[:start], list(csv.reader(
        line for line in lines[start:] if line.startswith('"')))


def write_csv(before: list[str], records: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n") \
        .writerows(records)
    return "\n".join(before + [out.getvalue()])


def replace_cell(text: str, kernel_start: str, column: str, old: str,
                 new: str) -> str:
    """`text` with the cell `old` in `column` of the first CSV row whose
    kernel name starts with `kernel_start` made `new` (the units row for
    an empty `kernel_start`)."""
    before, records = csv_records(text)
    header = records[0]
    record = next(r for r in records[1:]
                  if r[header.index("Kernel Name")].startswith(kernel_start))
    assert record[header.index(column)] == old
    record[header.index(column)] = new
    return write_csv(before, records)


# ---------------------------------------------------------------------------
# The metric list


def test_metrics_are_the_verified_names_in_order():
    assert [m.name for m in counters.METRICS] == [
        "gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
        "smsp__inst_executed.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
        "smsp__sass_average_branch_targets_threads_uniform.pct",
        "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    labels = [m.label for m in counters.METRICS]
    assert len(set(labels)) == len(labels)
    assert all(m.meaning for m in counters.METRICS)
    assert "locks the clocks" in counters.METRICS[0].meaning
    # every step after the first has its counters, cub none
    assert list(counters.STEP_COUNTERS) == METHODS[1:-1]
    names = {m.name for m in counters.METRICS}
    assert all(set(keys) <= names for keys in counters.STEP_COUNTERS.values())


# ---------------------------------------------------------------------------
# Parsing the recordings


def test_first_passes_at_2p22():
    doc = document(22)
    inst = first(doc, INST)
    assert [inst[m] for m in LADDER] == [
        32_948_224, 17_219_584, 14_073_856, 7_757_824, 4_374_528, 3_284_992,
        1_700_384]
    assert inst["fast"] == 1_230_364
    ld = first(doc, LD)
    assert [ld[m] for m in LADDER[:3]] == [22_827, 1_178_917, 8_478]
    grid = first(doc, GRID)
    assert [grid[m] for m in LADDER] == [16_384] * 3 + [8_192] * 3 + [1_056]
    assert grid["fast"] == 1_024
    assert first(doc, "launch__block_size") == dict.fromkeys(METHODS, 256)
    assert first(doc, "gpu__time_duration.sum")["interleaved_divergent"] \
        == 53_280
    # fractions stay floats, counts are ints
    ratio = first(doc, RATIO)
    assert ratio["interleaved_divergent"] == pytest.approx(24.18)
    assert first(doc, DRAM)["multi_element"] == pytest.approx(53.17)
    assert all(type(r[INST]) is int for r in doc["rows"])


def test_passes_by_order_and_kernel_name():
    doc22, doc26 = document(22), document(26)
    assert len(doc22["rows"]) == 23 and len(doc26["rows"]) == 26
    assert passes(doc22, "interleaved_divergent", GRID) == [16_384, 64, 1]
    assert passes(doc22, "interleaved_divergent", "pass") == [0, 1, 2]
    assert passes(doc26, "interleaved_divergent", GRID) == [262_144, 1_024,
                                                            4, 1]
    assert passes(doc26, "interleaved_divergent", "pass") == [0, 1, 2, 3]
    assert passes(doc26, "first_add", GRID) == [131_072, 256, 1]
    assert passes(doc22, "multi_element", GRID) == [1_056, 1]
    assert passes(doc22, "fast", "pass") == [0]
    assert passes(doc26, "fast", GRID) == [1_056]
    kernels = passes(doc22, "cub", "kernel")
    assert [re.match(r"void (cub::\w+)<", k).group(1) for k in kernels] == [
        "cub::DeviceReduceKernel", "cub::DeviceReduceSingleTileKernel"]
    assert passes(doc22, "cub", GRID) == [1_024, 1]
    for method in LADDER + ["fast"]:
        assert all(k.startswith(f"void reduce_{method}<")
                   for k in passes(doc22, method, "kernel"))
    # the rows: method, pass, kernel, then every metric
    assert list(doc22["rows"][0]) == ["method", "pass", "kernel"] + [
        m.name for m in counters.METRICS]
    assert [r["method"] for r in doc22["rows"] if r["pass"] == 0] == METHODS


def only_columns(text: str, keep: list[str]) -> str:
    """The recording's CSV with only the columns `keep`, in that order, plus
    an unknown one, and ncu's lines before, between and after it."""
    _, records = csv_records(text)
    header = records[0]
    kept = [[r[header.index(c)] for c in keep] + ["x"] for r in records]
    between = [line for record in write_csv([], kept).splitlines()
               for line in (record, "==PROF== a line of ncu's")]
    return "\n".join(["==PROF== Connected to process 1", "program output",
                      *between, "fast 2097616.0"])


def test_parser_takes_any_column_order_and_stray_lines():
    keep = ["Kernel Name"] + [m.name for m in reversed(counters.METRICS)] \
        + ["ID"]
    text = only_columns(recorded_text(22), keep)
    assert document(22, text)["rows"] == document(22)["rows"]


def test_na_and_empty_cells_are_none():
    text = replace_cell(recorded_text(22), "void reduce_fast", INST,
                        "1,230,364", "n/a")
    text = replace_cell(text, "void reduce_sequential", RATIO, "20.57", "")
    doc = document(22, text)
    assert first(doc, INST)["fast"] is None
    assert first(doc, RATIO)["sequential"] is None
    assert dict(counters.what_changed(doc))["fast"].startswith(
        "instructions 1.7 M -> n/a;")
    assert "n/a" in counters.format_counters(doc)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('"Kernel Name"', '"Kernel"'), "no CSV header"),
    (lambda t: t.replace('"launch__grid_size"', '"launch__grid"'),
     "columns missing"),
    (lambda t: re.sub(r'(?m)^"","","",.*\n', "", t), "no units row"),
    (lambda t: replace_cell(t, "", TIME, "ns", "us"), "--print-units base"),
    (lambda t: replace_cell(t, "void reduce_fast", INST, "1,230,364",
                            "1.2M"), "not a number"),
    (lambda t: t.replace('"(1024, 1, 1)"', '"(1024", "1, 1)"', 1), "cells"),
])
def test_a_csv_that_does_not_fit(change, message):
    text = change(recorded_text(22))
    with pytest.raises(ValueError, match=re.escape(message)):
        counters.parse_ncu_csv(text, METHODS)


def test_kernels_must_match_the_methods_in_order():
    text = recorded_text(22)
    with pytest.raises(ValueError, match="none of the methods"):
        counters.parse_ncu_csv(text, METHODS[:-1])          # cub's kernels
    with pytest.raises(ValueError, match="in that order"):
        counters.parse_ncu_csv(text, METHODS[1::-1] + METHODS[2:])
    with pytest.raises(ValueError, match="in that order"):
        counters.parse_ncu_csv(text, METHODS + ["nothing"])
    # a method's kernels split by another's
    lines = text.splitlines()
    fast = next(i for i, line in enumerate(lines)
                if '"void reduce_fast' in line)
    lines.insert(fast - 1, lines.pop(fast))
    with pytest.raises(ValueError, match="multi_element are not together"):
        counters.parse_ncu_csv("\n".join(lines), METHODS)


# ---------------------------------------------------------------------------
# What changed, the table, the claims


def test_what_changed_lines_at_2p22():
    assert counters.what_changed(document(22)) == [
        ("interleaved_bank_conflict", "instructions 32.9 M -> 17.2 M"),
        ("sequential", "ld conflicts 1.18 M -> 8.48 K"),
        ("first_add", "grid 16,384 -> 8,192; instructions 14.1 M -> 7.76 M"),
        ("unroll_warp",
         "instructions 7.76 M -> 4.37 M; barrier stall 12.6% -> 9.4%"),
        ("unroll_complete", "instructions 4.37 M -> 3.28 M"),
        ("multi_element", "grid 8,192 -> 1,056; DRAM 45.1% -> 53.2%"),
        ("fast", "instructions 1.7 M -> 1.23 M; DRAM 53.2% -> 47.2%"),
    ]


def test_what_changed_lines_at_2p26_and_on_a_subset():
    lines = dict(counters.what_changed(document(26)))
    assert list(lines) == METHODS[1:-1]
    assert lines["sequential"] == "ld conflicts 18.9 M -> 161 K"
    assert lines["multi_element"] == \
        "grid 131,072 -> 1,056; DRAM 61.1% -> 88.5%"
    # steps are compared with the step before them in the document
    doc = document(22)
    doc["rows"] = [r for r in doc["rows"]
                   if r["method"] in ("sequential", "fast", "cub")]
    assert counters.what_changed(doc) == [
        ("fast", "instructions 14.1 M -> 1.23 M; DRAM 19.0% -> 47.2%")]


def test_format_counters_at_2p22():
    doc = document(22)
    text = counters.format_counters(doc)
    lines = text.splitlines()
    assert lines[0] == ("Hardware counters (ncu 2025.3.1.0): float32, "
                        "n = 4,194,304 (2^22), 256 threads per block")
    header = next(i for i, line in enumerate(lines)
                  if line.startswith("method "))
    assert lines[header].split()[:5] == ["method", "pass", "time", "grid",
                                         "block"]
    changes = dict(counters.what_changed(doc))
    for method in METHODS:
        at = next(i for i, line in enumerate(lines)
                  if line.split()[:2] == [method, "0"])
        end = at + (0 if method == "fast" else 1)     # fast: one pass
        if method in changes:
            assert lines[end + 1] == f"    what changed: {changes[method]}"
        else:
            assert "what changed" not in lines[end + 1]
    assert text.count("what changed:") == 7
    # interleaved_divergent: pass 0 in full, passes 1-2 summed where sums
    # mean something (time, blocks, instructions), "-" where they differ
    row0 = lines[header + 2].split()
    assert row0[:4] == ["interleaved_divergent", "0", "53.3", "µs"]
    later = lines[header + 3].split()
    assert later[:6] == ["1-2", "8.1", "µs", "65", "256", "131"]
    assert later[-3:] == ["-", "-", "-"]
    # multi_element's one later pass is shown in full
    me = next(i for i, line in enumerate(lines)
              if line.startswith("multi_element"))
    assert lines[me + 1].split()[:2] == ["1", "4.2"]
    for metric in counters.METRICS:
        assert f"{metric.label}: {metric.meaning} ({metric.name})" in lines


@pytest.mark.parametrize("k", [22, 26])
def test_check_ideas_hold_on_the_recordings(k):
    ideas = counters.check_ideas(document(k))
    assert len(ideas) == 3 and all(ok for _, ok in ideas), ideas
    assert ideas[0][0].startswith("interleaved_bank_conflict: ld conflicts")


def test_check_ideas_fail_on_a_doctored_profile():
    text = recorded_text(22)
    # step 3's load conflicts only 40x below step 2's
    text = replace_cell(text, "void reduce_sequential", LD, "8,478",
                        "29,473")
    # step 2 executing nearly as much as step 1
    text = replace_cell(text, "void reduce_interleaved_bank_conflict", INST,
                        "17,219,584", "30,000,000")
    # first_add's grid not halved
    text = replace_cell(text, "void reduce_first_add", GRID, "8,192",
                        "8,193")
    ideas = counters.check_ideas(document(22, text))
    assert [ok for _, ok in ideas] == [False, False, False]
    assert ideas[2][0] == ("first_add: grid 8,193 is exactly 0.5x "
                           "sequential's 16,384")
    # a counter ncu did not give bears nothing out; absent methods no claim
    text = replace_cell(recorded_text(22), "void reduce_sequential", LD,
                        "8,478", "n/a")
    doc = document(22, text)
    assert [ok for _, ok in counters.check_ideas(doc)] == [False, True, True]
    doc["rows"] = [r for r in doc["rows"] if r["method"] != "first_add"]
    assert len(counters.check_ideas(doc)) == 2


# ---------------------------------------------------------------------------
# The ncu command


def test_ncu_command():
    chosen = ["sequential", "first_add", "cub"]
    cmd = counters.ncu_command(chosen, 1 << 20, "float64", 128,
                               ncu="/opt/ncu", log_file="/tmp/x.csv",
                               python="/usr/bin/python3")
    assert cmd[0] == "/opt/ncu"

    def after(option):
        return cmd[cmd.index(option) + 1]
    assert cmd[1:4] == ["--csv", "--page", "raw"]
    assert after("--log-file") == "/tmp/x.csv"
    assert after("--print-units") == "base"
    assert after("--kernel-name-base") == "demangled"
    assert after("--metrics").split(",") == [m.name for m in counters.METRICS]
    target = cmd[cmd.index("/usr/bin/python3"):]
    assert target == ["/usr/bin/python3", "-m", "cudareduce.bench.counters",
                      "--profile-target", "--n", "1048576", "--dtype",
                      "float64", "--threads", "128", "--methods",
                      "sequential,first_add,cub"]
    # the filter takes the chosen methods' kernels, by their demangled
    # names, and no other (ncu searches the name, like re.search)
    kernel_filter = after("--kernel-name")
    assert kernel_filter.startswith("regex:")
    pattern = re.compile(kernel_filter[len("regex:"):])
    for row in document(22)["rows"]:
        assert bool(pattern.search(row["kernel"])) == \
            (row["method"] in chosen), row["kernel"]
    for other in ("void cr_hold_stream(volatile int *)",
                  "void gather_strided<unsigned int>(const unsigned char *)"):
        assert not pattern.search(other)
    # all methods by default, in ladder order; unknown ones refused
    default = counters.ncu_command()
    assert default[-1] == ",".join(cudareduce.methods())
    assert default[default.index("--n") + 1] == str(1 << 22)
    assert sys.executable in default
    for bad in (["sequential", "nope"], [], ["fast", "fast"]):
        with pytest.raises(ValueError, match="distinct names"):
            counters.ncu_command(bad)
    for n, dtype, threads in ((0, "float32", 256), (10, "float8", 256),
                              (10, "float32", 0)):
        with pytest.raises(ValueError, match="must be >= 1"):
            counters.ncu_command(None, n, dtype, threads)
        with pytest.raises(ValueError, match="must be >= 1"):
            counters.collect(None, n, dtype, threads, ncu="/nonexistent")


# ---------------------------------------------------------------------------
# collect() against fake ncu executables


def fake_ncu(directory: Path, body: str) -> Path:
    """An executable ``ncu`` in `directory` running the shell `body`; it
    answers ``--version`` like ncu 2025.3.1 and finds its --log-file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "ncu"
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then\n'
        "  echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
        "  echo 'Version 2025.3.1.0 (build 36398880) (public-release)'\n"
        "  exit 0\n"
        "fi\n"
        f'printf "%s\\n" "$@" > "{directory}/args"\n'
        'while [ $# -gt 0 ]; do [ "$1" = --log-file ] && log=$2; shift; done\n'
        + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    """Put a fake ncu first on PATH: call with its shell body.  The GPU the
    counters name is the recording's."""
    monkeypatch.setattr(counters, "device_info", lambda: {
        "name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"})

    def install(body: str) -> Path:
        path = fake_ncu(tmp_path / "bin", body)
        monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}"
                                   f"{os.environ.get('PATH', '')}")
        return path
    return install


PERMISSION = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission "
              "to access NVIDIA GPU Performance Counters on the target device "
              "0. For instructions on enabling permissions and to get more "
              "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def test_collect_reads_the_log_file(on_path, tmp_path):
    recording = DATA / "ncu-h100-float32-2p22.csv"
    on_path(f'cp "{recording}" "$log"\necho "==PROF== Disconnected"\n')
    doc = counters.collect(n=1 << 22)
    assert list(doc) == list(counters.DOCUMENT_KEYS)
    assert doc["ncu_version"] == "2025.3.1.0"
    assert (doc["gpu"], doc["driver"]) == ("NVIDIA H100 80GB HBM3",
                                           "580.159.04")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"])
    assert (doc["n"], doc["dtype"], doc["threads"]) == (1 << 22, "float32",
                                                        256)
    assert doc["metrics"] == [m.name for m in counters.METRICS]
    assert doc["rows"] == document(22)["rows"]
    assert json.loads(json.dumps(doc)) == doc
    args = (tmp_path / "bin" / "args").read_text().splitlines()
    assert args[-2:] == ["--methods", ",".join(METHODS)]


def test_collect_without_ncu(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    assert counters.find_ncu() is None
    with pytest.raises(counters.CountersUnavailable,
                       match="ncu was not found on PATH"):
        counters.collect(["sequential"])


def test_find_ncu_looks_in_cuda_home(tmp_path, monkeypatch):
    path = fake_ncu(tmp_path / "cuda" / "bin", "")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert counters.find_ncu() == str(path)


@pytest.mark.parametrize("body", [
    f'echo "{PERMISSION}"\nexit 1\n',                    # on its stdout
    f'echo "{PERMISSION}" > "$log"\n',                   # in the log, exit 0
])
def test_collect_without_permission(on_path, body):
    on_path(body)
    with pytest.raises(counters.CountersUnavailable) as info:
        counters.collect(["sequential"])
    message = str(info.value)
    assert "ERR_NVGPUCTRPERM" in message
    assert "root" in message
    assert "NVreg_RestrictProfilingToAdminUsers=0" in message
    assert "https://developer.nvidia.com/ERR_NVGPUCTRPERM" in message


def test_collect_when_ncu_fails(on_path):
    on_path('echo "==PROF== Connected"\necho "==ERROR== bad thing" >&2\n'
            "exit 3\n")
    with pytest.raises(counters.CountersUnavailable,
                       match=r"(?s)exit status 3.*==ERROR== bad thing"):
        counters.collect(["sequential"])
    on_path('echo "==WARNING== No kernels were profiled." > "$log"\n')
    with pytest.raises(counters.CountersUnavailable,
                       match=r"(?s)does not fit: no CSV header.*No kernels"):
        counters.collect(["sequential"])
    with pytest.raises(counters.CountersUnavailable, match="did not start"):
        counters.collect(["sequential"], ncu="/nonexistent/ncu")


# ---------------------------------------------------------------------------
# The command line: the profiled program and the table


def test_profile_target_reduces_each_method_once(monkeypatch, capsys):
    calls = []

    def time_reduce(*args):
        calls.append(args)
        return 1.0, [0.01], None
    monkeypatch.setattr(cudareduce._cudareduce, "time_reduce", time_reduce)
    assert counters.main(["--profile-target", "--n", "2^10", "--dtype",
                          "int32", "--threads", "128", "--methods",
                          "sequential,cub"]) == 0
    assert [c[2] for c in calls] == ["sequential", "cub"]
    for op, a, _, threads, *rest in calls:
        assert op == "sum" and threads == 128
        assert rest == [1, 0, 1, "launch"]
        assert a.dtype == "int32" and a.shape == (1024,)
    assert capsys.readouterr().out.splitlines() == ["sequential 1.0",
                                                    "cub 1.0"]


def test_arguments():
    args = counters._parse_args(["--profile-target"])
    assert (args.n, args.dtype, args.threads, args.methods) == (
        1 << 22, "float32", 256, None)
    assert args.profile_target
    args = counters._parse_args(["--n", "1000", "--methods", "fast, cub"])
    assert (args.n, args.methods, args.profile_target) == (
        1000, ["fast", "cub"], False)
    for bad in (["--n", "0"], ["--n", "lots"], ["--methods", "fast,nope"],
                ["--methods", "fast,fast"], ["--dtype", "float8"]):
        with pytest.raises(SystemExit):
            counters._parse_args(bad)


def test_main_prints_the_table(on_path, monkeypatch, capsys):
    recording = DATA / "ncu-h100-float32-2p22.csv"
    on_path(f'cp "{recording}" "$log"\n')
    assert counters.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Hardware counters (ncu 2025.3.1.0): float32")
    assert "what changed: ld conflicts 1.18 M -> 8.48 K" in out
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    assert counters.main(["--methods", "fast"]) == 1
    assert capsys.readouterr().err.startswith("counters unavailable: ")
