"""The bench's other ops than sum, without a GPU, where the per-module
tests keep to sums: ``--counters --op`` (the profiled program, the ncu
command, the document and its table), the plots of another op, and
benchmarks/targets.py on documents of other ops."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import cudareduce
from cudareduce.bench import figures, names, schema
from support.bench_data import (NCU_RECORDING, comparison,  # noqa: F401
                                counters_document, needs_matplotlib, plot, row,
                                sample, synthetic_document)
from support.targets_script import by_what, targets
from cudareduce.bench import counters, peers

#: The bench tests' data.
DATA = Path(__file__).resolve().parent / "data"

BIG = peers.COMPARE_SIZES[-1]


# ---------------------------------------------------------------------------
# --counters --op


def test_the_ncu_command_names_another_op():
    """The profiled program reduces with the op; sum, its default, goes
    unsaid (the command as it always was)."""
    cmd = counters.ncu_command(["fast"], 1 << 20, "int8", 128, op="nanmax",
                               python="py")
    assert cmd[cmd.index("py"):] == [
        "py", "-m", "cudareduce.bench.counters", "--profile-target", "--n",
        "1048576", "--dtype", "int8", "--threads", "128", "--op", "nanmax",
        "--methods", "fast"]
    default = counters.ncu_command(["fast"], python="py")
    assert "--op" not in default
    with pytest.raises(ValueError, match="op one of"):
        counters.ncu_command(["fast"], op="median")


def test_the_profile_target_reduces_the_ops_data(monkeypatch, capsys):
    calls = []

    def time_reduce(op, a, method, *rest):
        calls.append((op, method, a.copy()))
        return np.float32(-1000), [0.01], None
    monkeypatch.setattr(cudareduce._cudareduce, "time_reduce", time_reduce)
    assert counters.main(["--profile-target", "--n", "2^10", "--dtype",
                          "float32", "--op", "nanmin", "--methods",
                          "sequential,cub"]) == 0
    assert [(op, method) for op, method, _ in calls] == [
        ("nanmin", "sequential"), ("nanmin", "cub")]
    a = calls[0][2]
    assert np.isnan(a).any() and np.nanmin(a) == -1000
    assert capsys.readouterr().out.splitlines() == ["sequential -1000.0",
                                                    "cub -1000.0"]


def test_the_profile_target_of_an_arg_op_prints_the_index(monkeypatch,
                                                         capsys):
    """--counters --op argmax: the profiled program reduces argmax's data
    (its high end tied or alone) and prints the index each method gives,
    an int64; the table is titled with the op."""
    calls = []

    def time_reduce(op, a, method, *rest):
        calls.append((op, method, a.copy()))
        return np.int64(np.argmax(a)), [0.01], None
    monkeypatch.setattr(cudareduce._cudareduce, "time_reduce", time_reduce)
    assert counters.main(["--profile-target", "--n", "2^10", "--dtype",
                          "int16", "--op", "argmax", "--methods",
                          "fast"]) == 0
    ((op, method, a),) = calls
    assert (op, method) == ("argmax", "fast") and a.max() == 1000
    assert capsys.readouterr().out == f"fast {np.argmax(a)}\n"
    doc = dict(counters_document(), op="argmax")
    assert counters.format_counters(doc).splitlines()[0].endswith(
        ": float32 argmax, n = 4,194,304 (2^22), 256 threads per block")


def test_collect_profiles_the_op_and_records_it(monkeypatch, tmp_path):
    """collect(op=...) runs ncu on the op's profiled program and says the
    op in its document; the table is titled with it."""
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        if command[1:] == ["--version"]:
            return subprocess.CompletedProcess(command, 0,
                                               "Version 2025.3.1.0\n", "")
        log = Path(command[command.index("--log-file") + 1])
        log.write_text(NCU_RECORDING.read_text(encoding="utf-8"),
                       encoding="utf-8")
        return subprocess.CompletedProcess(command, 0, "", "")
    monkeypatch.setattr(counters.subprocess, "run", run)
    monkeypatch.setattr(counters, "device_info", lambda: {
        "name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"})
    doc = counters.collect(n=1 << 22, op="prod", ncu="/opt/ncu")
    assert list(doc) == list(counters.DOCUMENT_KEYS)
    assert (doc["op"], doc["dtype"]) == ("prod", "float32")
    profiled = commands[0]
    assert profiled[profiled.index("--op") + 1] == "prod"
    assert counters.format_counters(doc).splitlines()[0] == (
        "Hardware counters (ncu 2025.3.1.0): float32 prod, n = 4,194,304 "
        "(2^22), 256 threads per block")


def test_a_counters_document_without_op_is_of_sums():
    doc = counters_document()
    assert doc["op"] == "sum"
    del doc["op"]                          # as docs/figures/counters.json
    assert counters.format_counters(doc) == \
        counters.format_counters(counters_document())
    assert counters.format_counters(doc).splitlines()[0].endswith(
        ": float32, n = 4,194,304 (2^22), 256 threads per block")


# ---------------------------------------------------------------------------
# The plots of another op


def _with_products(sample: dict) -> dict:
    """The sample with its float32 2^22 and 2^24 results again as
    products, after the sums (torch.sum as torch.prod, cupy.sum as
    cupy.prod), a little slower."""
    products = [dict(r, op="prod",
                     method=r["method"].replace(".sum", ".prod"),
                     cold_us=1.5 * r["cold_us"],
                     pass_us=[1.5 * t for t in r["pass_us"]])
                for r in sample["results"] if r["n"] in (1 << 22, 1 << 24)
                and r["dtype"] == "float32"]
    return {**sample, "results": sample["results"] + products}


@needs_matplotlib
def test_the_plots_of_another_op(sample):
    doc = _with_products(sample)
    op, dtype, threads, n, rows = plot.select_group(doc, op="prod")
    assert (op, dtype, threads, n, len(rows)) == ("prod", "float32", 256,
                                                  None, 22)
    assert plot.select_group(doc)[0] == "sum"          # the first result's
    fig = plot.plot_step_speedups(doc, op="prod", reference=None)
    top = fig.axes[0]
    assert top.get_title().startswith("float32 prod, 256 threads per block")
    lines = [line.get_label().split(" (")[0] for line in top.get_lines()]
    assert lines == ["cub", "torch.prod", "cupy.prod"]
    # the peers keep their library's colour and marker, whatever the op
    sums = plot.plot_bandwidth(doc)
    products = plot.plot_bandwidth(doc, op="prod")
    (ax,) = products.axes
    assert "\nfloat32 prod, 256 threads per block" in ax.get_title()
    assert "\nfloat32, 256 threads per block" in sums.axes[0].get_title()
    styles = {line.get_label(): (str(line.get_color()), line.get_marker())
              for figure in (sums, products)
              for line in figure.axes[0].get_lines()}
    assert styles["torch.prod (peer)"] == styles["torch.sum (peer)"]
    assert styles["cupy.prod (peer)"] == styles["cupy.sum (peer)"]
    assert styles["torch.prod (peer)"] != styles["cupy.prod (peer)"]
    # the products' bandwidth: their own figures
    prod_fast = [r for r in doc["results"] if r["method"] == "fast"
                 and names.op_of(r) == "prod"]
    line = next(line for line in ax.get_lines()
                if line.get_label() == "8. fast")
    assert list(line.get_ydata()) == pytest.approx(
        [figures.result_gbps(r, "cold_us") for r in prod_fast])
    with pytest.raises(ValueError, match="no results for op 'max'"):
        plot.plot_bandwidth(doc, op="max")
    with pytest.raises(ValueError, match="no float32 prod results with "
                                         "threads=256 and n=65536"):
        plot.plot_step_speedups(doc, op="prod", n=1 << 16)


# ---------------------------------------------------------------------------
# benchmarks/targets.py on other ops


def _bandwidth(op):
    return [f"fast {dtype} {op} / fast float32 sum GB/s, cold, n = 2^28"
            for dtype in ("float32", "float64", "int32")]


def _cub(op):
    return [f"fast / cub speed, back to back, {dtype} {op} "
            f"n = 2^{n.bit_length() - 1}"
            for dtype in peers.COMPARE_DTYPES for n in peers.COMPARE_SIZES]


@pytest.mark.parametrize("op", ["prod", "min", "max", "argmin", "argmax"])
def test_an_op_cub_offers_is_held_to_its_sum_and_to_cub(op):
    rows = by_what(targets.peers_targets(comparison(op=op)))
    assert list(rows) == _bandwidth(op) + _cub(op)
    for what in _bandwidth(op):
        _, bound, met = rows[what]
        assert bound == ">= 0.95x" and met
    # float32: the same time as the sum's; float64 and int32 a little
    # faster in GB/s (their fixed cost spread over more bytes, or as many)
    assert rows[_bandwidth(op)[0]][0] == pytest.approx(1.0)
    for what in _cub(op):
        assert rows[what][1:] == (">= 1.00x", True)


@pytest.mark.parametrize("op", ["any", "all", "mean", "nansum", "nanprod",
                                "nanmin", "nanmax", "nanargmin",
                                "nanargmax"])
def test_an_op_cub_does_not_offer_is_held_to_its_sum(op):
    rows = by_what(targets.peers_targets(comparison(op=op)))
    assert list(rows) == _bandwidth(op)
    assert all(met for _, _, met in rows.values())


def test_cub_ops_are_ops_and_none_skips_nans():
    """The ops held to cub are the bench's, argmin and argmax among them
    (CUB's ArgMin, ArgMax), and none of the NaN-skipping ones, which CUB
    does not offer."""
    assert set(targets.CUB_OPS) <= set(names.OPS)
    assert {"argmin", "argmax"} <= set(targets.CUB_OPS)
    assert not any(op.startswith("nan") for op in targets.CUB_OPS)


def test_the_ops_targets_missed_and_without_figures():
    slow = comparison(op="prod", fast_us={("int32", BIG): 2000.0})
    rows = by_what(targets.peers_targets(slow))
    value, _, met = rows[_bandwidth("prod")[2]]
    assert met is False and value < 0.95
    assert rows["fast / cub speed, back to back, int32 prod n = 2^28"][2] \
        is False
    # a faster sum baseline: the float32 product is now under 0.95x
    rows = by_what(targets.peers_targets(comparison(op="max",
                                                    baseline_us=300.0)))
    assert rows[_bandwidth("max")[0]][2] is False
    # no baseline: no figure
    made = comparison(op="min")
    results = made["results"]["results"]
    results[:] = [r for r in results if names.op_of(r) == "min"]
    rows = by_what(targets.peers_targets(made))
    assert all(rows[what] == (None, ">= 0.95x", None)
               for what in _bandwidth("min"))
    wrong = by_what(targets.peers_targets(comparison(
        op="prod", wrong_cub_at=("int8", 1 << 20))))
    assert wrong["fast / cub speed, back to back, int8 prod n = 2^20"] == \
        (None, ">= 1.00x", None)


def _write(tmp_path, document, name="doc.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("document, status", [
    (comparison(op="prod"), 0), (comparison(op="nanmax"), 0),
    (comparison(op="argmin"), 0), (comparison(op="nanargmin"), 0),
    (comparison(op="argmax", cub_us={("float32", 1 << 26): 1.0}), 1),
    (comparison(op="prod", cub_us={("float16", 1 << 24): 1.0}), 1)])
def test_exit_status_on_another_ops_peers(document, status, tmp_path,
                                          capsys):
    assert targets.main([_write(tmp_path, document)]) == status
    assert ("NO" in capsys.readouterr().out) == (status == 1)


def _products(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    for r in doc["results"]:
        r["op"] = "prod"
        r["method"] = r["method"].replace(".sum", ".prod")
    return doc


def test_a_ladder_document_of_another_op_says_it_cannot_be_checked(
        tmp_path, capsys):
    path = _write(tmp_path, _products(synthetic_document()))
    assert targets.main([path]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"targets: {path}: the ladder's target is stated on sums; "
                   f"this document is of prod (another op's targets are on "
                   f"python -m cudareduce.bench --peers --op prod --json)\n")


def test_a_ladder_document_of_several_ops_is_checked_on_its_sums():
    sums = synthetic_document()
    both = {**sums, "results": sums["results"]
            + _products(sums)["results"]}
    schema.validate_document(both)
    assert targets.ladder_targets(both) == targets.ladder_targets(sums)


def test_a_counters_document_of_another_op_says_it_cannot_be_checked(
        tmp_path, capsys):
    doc = counters_document()
    doc["op"] = "min"
    assert targets.main([_write(tmp_path, doc)]) == 2
    assert "the counters' claims are stated on sums; this document is of " \
        "min" in capsys.readouterr().err
    # one written before ops (no op) is of sums, and checked
    del doc["op"]
    assert targets.main([_write(tmp_path, doc)]) == 0


def test_the_recorded_documents_still_read(tmp_path):
    """The committed recordings, written before results named their op:
    a --peers document (a copy of docs/recorded/'s, which the sdist does not
    ship) and the counters read as sums."""
    root = Path(__file__).resolve().parents[2] / "docs"
    recorded = json.loads((DATA / "peers-2026-11-24-h100.json")
                          .read_text(encoding="utf-8"))
    assert all("op" not in r for r in recorded["results"]["results"])
    assert peers.comparison_op(recorded) == "sum"
    assert targets.targets(recorded)
    assert "fast / torch.sum" in peers.format_comparison(recorded)
    counted = json.loads((root / "figures" / "counters.json")
                         .read_text(encoding="utf-8"))
    assert "op" not in counted and targets.targets(counted)


def test_a_row_of_another_op_is_its_own():
    """The same (method, dtype, n) of two ops: two results, each found by
    its op."""
    doc = comparison(op="max")
    schema.validate_document(doc["results"])
    fast_max = peers.time_of(doc["results"], "fast", "float32", BIG,
                             "batch_us", op="max")
    fast_sum = peers.time_of(doc["results"], "fast", "float32", BIG,
                             "batch_us")
    assert fast_max is not None and fast_sum is not None
    assert peers.time_of(doc["results"], "cub", "float32", BIG,
                         "batch_us") is None
    assert row("fast", 1.0, op="max")["op"] == "max"


# ---------------------------------------------------------------------------
# block sizes a method does not take for an op


@pytest.mark.parametrize("method, op, dtype, threads", [
    ("unroll_complete", "argmin", "float32", 128),
    ("multi_element", "prod", "int8", 64),
    ("multi_element", "max", "complex64", 1024),
])
def test_a_block_size_the_method_lacks_is_refused_before_timing(
        monkeypatch, method, op, dtype, threads):
    """run and counters.collect refuse it up front, naming the sizes taken,
    without asking for a device or ncu."""
    from cudareduce.bench import ladder
    monkeypatch.setattr(ladder, "device_info", lambda: pytest.fail("timed"))
    monkeypatch.setattr(counters, "find_ncu", lambda: pytest.fail("ncu"))
    taken = ", ".join(map(str, cudareduce.block_sizes(op, dtype, method)))
    want = (rf"{method} runs {op} on {dtype} with {taken} threads per block "
            rf"only, not {threads}")
    with pytest.raises(ValueError, match=want):
        ladder.run([method], [1000], dtype, threads, peers=False, op=op)
    with pytest.raises(ValueError, match=want):
        counters.collect([method], 1000, dtype, threads, op=op)


def test_a_block_size_every_method_takes_passes_the_check():
    from cudareduce.bench.ladder import check_block_size
    check_block_size(cudareduce.methods(), "argmax", "float16", 256)
    check_block_size(cudareduce.methods(), "argmax", "float16", None)
    check_block_size(cudareduce.methods(), "sum", "float16", 64)
