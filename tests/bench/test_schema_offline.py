"""cudareduce.bench.schema, the bench's results model, without a GPU: the
document's schema (2) and every rule of its validator, the derived figures
(GB/s, "% read", passes), the speedup arithmetic, the ordering and the
tables, on hand-built documents with known numbers and on the synthetic
sample (tests/bench/data/bench_sample.json: formulas, not a measurement)."""
from __future__ import annotations

import copy
import datetime
import json
import re

import ml_dtypes
import numpy as np
import pytest

import cudareduce
from cudareduce.bench import figures, names, schema
from support.bench_data import (LADDER, METHODS, OP_PEERS, PEERS,  # noqa: F401
                                STEPS, SYNTHETIC_DEVICE, SYNTHETIC_TIMING,
                                TABLE_ORDER, report_tables, row, sample,
                                synthetic_document)
from cudareduce import _cudareduce
from cudareduce.bench import reference

# ---------------------------------------------------------------------------
# A document with known numbers

#: float32 n = 2^20 and float64 n = 2^19 both read 4 MiB; the probe at
#: 8 MiB is a decoy that no "% read" of those rows may use.
FOUR_MIB, EIGHT_MIB = 4 << 20, 8 << 20
KNOWN_PROBES = [{"bytes": EIGHT_MIB, "read_cold_us": 100.0,
                 "read_batch_us": 50.0},
                {"bytes": FOUR_MIB, "read_cold_us": 4.0,
                 "read_batch_us": 2.0}]
KNOWN_FLOOR = {"empty_cold_us": 2.5, "empty_batch_us": 1.25,
               "read_bytes": 1 << 30, "read_cold_gbps": 3000.0,
               "read_batch_gbps": 3100.0}
KNOWN_DATE = "2026-11-24T12:34:56Z"


def known_document(rows, **device) -> dict:
    """`rows` under the synthetic device (changed by `device`), the known
    floor and probes, version 0.1.0 and KNOWN_DATE."""
    return schema.make_document({**SYNTHETIC_DEVICE, **device}, KNOWN_FLOOR,
                               KNOWN_PROBES, rows, timing=SYNTHETIC_TIMING,
                               version="0.1.0", date=KNOWN_DATE)


def known_rows() -> list[dict]:
    """One float32 group at 2^20 (4 MiB), a float64 row at 2^19 (4 MiB too)
    and an int32 row at 2^21 (8 MiB)."""
    n = 1 << 20
    return [
        row("interleaved_divergent", 40.0, n=n, batch_us=30.0, call_us=50.0,
            pass_us=[38.0, 1.0]),
        row("sequential", 10.0, n=n, batch_us=8.0, call_us=20.0,
            pass_us=[7.5, 1.25, 0.25]),
        row("fast", 5.0, n=n, batch_us=4.0, call_us=12.5, pass_us=[4.5]),
        row("cub", 8.0, n=n, batch_us=6.4, call_us=None),
        row("torch.sum", 16.0, n=n, batch_us=None, call_us=None),
        row("cupy.sum", None, correct=False, n=n),
        row("sequential", 12345.0, n=1 << 19, dtype="float64",
            batch_us=1000.0, call_us=None, pass_us=[12000.0, 300.0]),
        row("sequential", 20.0, n=1 << 21, dtype="int32", batch_us=10.0,
            call_us=None, pass_us=[19.0]),
    ]


def cells_by_method(text: str, table: int) -> dict[str, list[str]]:
    """The cells of the `table`-th table of a report, by method (the cells
    hold no spaces)."""
    lines = report_tables(text)[table]
    return {line.split()[0]: line.split()[1:] for line in lines[2:]}


# ---------------------------------------------------------------------------
# The synthetic sample itself


def test_sample_file_is_the_generators_output(sample):
    """tests/bench/data/bench_sample.json is what ``python tests/support/bench_data.py``
    writes: the formulas, labelled as not measured; written before results
    named their op, its results name none (sums), and stand for the
    documents of that bench."""
    made = json.loads(json.dumps(synthetic_document()))
    for r in made["results"] + sample["results"]:
        assert r.pop("op", "sum") == "sum"
    assert sample == made
    schema.validate_document(sample)
    assert "not measured" in sample["device"]["name"]
    assert sample["date"] == "2000-01-01T00:00:00Z"
    groups = figures.group_results(sample["results"])
    assert list(groups) == [("float32", 1 << k, 256)
                            for k in (16, 18, 20, 22, 24)] \
        + [("int32", 1 << 22, 256)]
    for (dtype, n, _), rows in groups.items():
        expected = TABLE_ORDER if dtype == "float32" else STEPS + ["cub"]
        assert [r["method"] for r in rows] == expected
    wrong = [(r["method"], r["n"]) for r in sample["results"]
             if not r["correct"]]
    assert wrong == [("unroll_complete", 1 << 16)]
    # a probe at every result's bytes, and only there
    assert [p["bytes"] for p in sample["probes"]] == sorted(
        {schema.result_bytes(r) for r in sample["results"]})


def test_methods_are_the_steps_then_cub():
    """The extension's methods: the seven steps of the paper, ``fast`` (step
    8 of the bench's chain) and ``cub`` (its reference, no step)."""
    assert len(METHODS) == 9 and METHODS[-2:] == ["fast", "cub"]
    assert LADDER == METHODS[:7] == list(reference.LADDER)
    assert names.ladder_methods() == STEPS == LADDER + ["fast"]
    assert names.REFERENCE_METHOD == "cub"
    assert cudareduce.DEFAULT_METHOD == "fast"


# ---------------------------------------------------------------------------
# make_result and make_document


def test_make_result_keeps_the_three_timings_and_the_passes():
    r = schema.make_result("sequential", np.dtype("float32").name, 1 << 20,
                          256, cold_us=10, batch_us=8.5, call_us=None,
                          pass_us=(7, 2.5), reps=np.int64(50), correct=True)
    assert list(r) == list(schema.RESULT_KEYS)
    assert r == {"method": "sequential", "op": "sum", "dtype": "float32",
                 "n": 1 << 20, "threads": 256, "cold_us": 10.0,
                 "batch_us": 8.5, "call_us": None, "pass_us": [7.0, 2.5],
                 "reps": 50, "correct": True}
    assert type(r["cold_us"]) is float and type(r["reps"]) is int
    assert all(type(t) is float for t in r["pass_us"])
    r = schema.make_result("cub", "uint16", 10, 256, cold_us=1, batch_us=1,
                          call_us=None, pass_us=(), reps=3, correct=True,
                          op="nanmax")
    assert (r["op"], r["dtype"]) == ("nanmax", "uint16")


def test_make_result_wrong_is_not_timed():
    r = schema.make_result("sequential", "float32", 1024, 256, cold_us=5.0,
                          batch_us=4.0, call_us=9.0, pass_us=[4.0], reps=100,
                          correct=False)
    assert [r[k] for k in schema.TIME_KEYS] == [None, None, None]
    assert r["pass_us"] == [] and r["reps"] == 0 and r["correct"] is False


def test_make_document_converts_device_info():
    info = {**SYNTHETIC_DEVICE, "compute_capability": 89,
            "sm_clock_khz": 2_520_500, "memory_clock_khz": 10_501_000,
            "memory_bus_bits": 192, "driver_version": 12080,
            "runtime_version": 13010, "cccl_version": 3_001_012,
            "driver": "580.159.04", "ordinal": 3, "unused": "ignored"}
    doc = schema.make_document(info, KNOWN_FLOOR, KNOWN_PROBES, [],
                              timing=SYNTHETIC_TIMING)
    assert list(doc) == list(schema.DOCUMENT_KEYS)
    assert doc["schema"] == schema.SCHEMA == 2
    assert list(doc["device"]) == list(schema.DEVICE_KEYS)
    assert doc["device"] == {
        "name": info["name"], "compute_capability": 89, "sm_count": 132,
        "l2_bytes": 50 << 20, "total_bytes": 80 << 30, "sm_clock_mhz": 2520,
        "memory_clock_mhz": 10501, "memory_bus_bits": 192,
        "driver": "580.159.04", "driver_cuda": "12.8",
        "cuda_runtime": "13.1", "cccl": "3.1.12"}
    assert doc["cudareduce_version"] == cudareduce.__version__
    # probes sorted by bytes; floor and timing exactly their keys
    assert [p["bytes"] for p in doc["probes"]] == [FOUR_MIB, EIGHT_MIB]
    assert list(doc["floor"]) == list(schema.FLOOR_KEYS)
    assert doc["floor"] == KNOWN_FLOOR
    assert type(doc["floor"]["read_bytes"]) is int
    assert list(doc["timing"]) == list(schema.TIMING_KEYS)
    schema.validate_document(doc)
    schema.validate_document(json.loads(json.dumps(doc)))


def test_make_document_date_defaults_to_now_in_utc():
    before = datetime.datetime.now(datetime.timezone.utc).replace(
        microsecond=0)
    doc = schema.make_document(SYNTHETIC_DEVICE, KNOWN_FLOOR, [], [],
                              timing=SYNTHETIC_TIMING)
    after = datetime.datetime.now(datetime.timezone.utc)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"])
    stamp = datetime.datetime.strptime(doc["date"], "%Y-%m-%dT%H:%M:%SZ") \
        .replace(tzinfo=datetime.timezone.utc)
    assert before <= stamp <= after
    assert schema.make_document(SYNTHETIC_DEVICE, KNOWN_FLOOR, [], [],
                               timing=SYNTHETIC_TIMING, date=KNOWN_DATE,
                               version="9.9")["date"] == KNOWN_DATE


def test_make_document_without_nvidia_smi():
    info = {k: v for k, v in SYNTHETIC_DEVICE.items() if k != "driver"}
    doc = schema.make_document(info, KNOWN_FLOOR, [], [],
                              timing=SYNTHETIC_TIMING)
    assert doc["device"]["driver"] is None
    schema.validate_document(doc)
    assert "driver unknown (CUDA 13.0)" in figures.device_line(doc)


# ---------------------------------------------------------------------------
# Figures derived from a result


def test_result_gbps_is_bytes_read_per_second_for_each_timing():
    r = row("sequential", 10.0, n=1 << 20, batch_us=8.0, call_us=None)
    assert schema.result_bytes(r) == FOUR_MIB
    assert figures.result_gbps(r, "cold_us") == pytest.approx(
        FOUR_MIB / 10e-6 / 1e9)
    assert figures.result_gbps(r, "batch_us") == pytest.approx(
        FOUR_MIB / 8e-6 / 1e9)
    assert figures.result_gbps(r, "call_us") is None
    r64 = row("sequential", 10.0, n=1 << 20, dtype="float64")
    assert figures.result_gbps(r64, "cold_us") == pytest.approx(
        EIGHT_MIB / 10e-6 / 1e9)
    assert figures.gbps(1000, 1.0) == pytest.approx(1.0)
    assert figures.gbps(1000, None) is None
    with pytest.raises(ValueError, match="cold_us"):
        figures.result_gbps(r, "median_us")
    wrong = row("sequential", None, correct=False)
    assert [figures.result_gbps(wrong, k) for k in schema.TIME_KEYS] == \
        [None, None, None]


@pytest.mark.parametrize("op", ["argmin", "nanargmax"])
def test_an_arg_ops_bytes_are_its_inputs(op):
    """An arg op gives an int64 index, whatever its input: its GB/s count
    the input read, as every op's do."""
    for dtype, nbytes in (("float16", 2 << 20), ("float32", FOUR_MIB),
                          ("int8", 1 << 20)):
        r = row("fast", 10.0, n=1 << 20, dtype=dtype, op=op)
        assert schema.result_bytes(r) == nbytes
        assert figures.result_gbps(r, "cold_us") == pytest.approx(
            nbytes / 10e-6 / 1e9)


def test_read_floor_and_percent_use_the_probe_at_the_same_bytes():
    doc = known_document(known_rows())
    assert figures.read_floor_us(doc, 1 << 20, "float32", "cold") == 4.0
    assert figures.read_floor_us(doc, 1 << 19, "float64", "batch") == 2.0
    assert figures.read_floor_us(doc, 1 << 21, "int32", "cold") == 100.0
    with pytest.raises(ValueError, match="no read probe at 4096 bytes"):
        figures.read_floor_us(doc, 1024, "float32", "cold")
    with pytest.raises(ValueError, match="key must be one of"):
        figures.read_floor_us(doc, 1 << 20, "float32", "call")
    sequential, fast, torch = (doc["results"][i] for i in (1, 2, 4))
    assert figures.read_percent(doc, sequential, "cold") == \
        pytest.approx(40.0)                                  # 4 / 10
    assert figures.read_percent(doc, sequential, "batch") == \
        pytest.approx(25.0)                                  # 2 / 8
    assert figures.read_percent(doc, fast, "cold") == pytest.approx(80.0)
    assert figures.read_percent(doc, torch, "batch") is None   # not timed
    float64 = doc["results"][6]
    assert figures.read_percent(doc, float64, "cold") == \
        pytest.approx(100 * 4.0 / 12345.0)
    int32 = doc["results"][7]
    assert figures.read_percent(doc, int32, "batch") == pytest.approx(500.0)


def test_pass_split():
    assert figures.pass_split(row("sequential", 10.0, pass_us=[7.5, 1.25,
                                                             0.25])) == \
        (7.5, 1.5)
    assert figures.pass_split(row("fast", 5.0, pass_us=[4.5])) == (4.5, None)
    assert figures.pass_split(row("cub", 5.0)) == (None, None)
    assert figures.pass_split(row("cub", None, correct=False)) == (None, None)


# ---------------------------------------------------------------------------
# Speedups


def test_speedups_arithmetic():
    rows = [row("interleaved_divergent", 100.0),
            row("interleaved_bank_conflict", 50.0),
            row("sequential", None, correct=False),
            row("first_add", 25.0),
            row("unroll_warp", 20.0),
            row("torch.sum", 10.0),
            row("cupy.sum", None, correct=False)]
    got = figures.speedups(rows)
    expected = [(None, 1.0), (2.0, 2.0), (None, None), (2.0, 4.0),
                (1.25, 5.0), (None, 10.0), (None, None)]
    for (s, c), (es, ec) in zip(got, expected):
        assert s == (None if es is None else pytest.approx(es))
        assert c == (None if ec is None else pytest.approx(ec))


def test_speedups_come_from_the_cold_times():
    """Back-to-back and call times that order the steps the other way round
    change nothing."""
    rows = [row("interleaved_divergent", 30.0, batch_us=1.0, call_us=1.0),
            row("sequential", 10.0, batch_us=20.0, call_us=50.0),
            row("cub", 5.0, batch_us=40.0, call_us=90.0)]
    assert figures.speedups(rows) == [
        (None, 1.0), (pytest.approx(3.0), pytest.approx(3.0)),
        (None, pytest.approx(6.0))]


def test_speedups_first_wrong_uses_first_correct():
    rows = [row("interleaved_divergent", None, correct=False),
            row("interleaved_bank_conflict", 40.0),
            row("sequential", 10.0)]
    assert figures.speedups(rows) == [(None, None), (None, 1.0), (4.0, 4.0)]


def test_speedups_peers_only():
    assert figures.speedups([row("torch.sum", 10.0)]) == [(None, None)]


def test_speedups_references_only():
    assert figures.speedups([row("cub", 10.0), row("torch.sum", 5.0)]) == \
        [(None, None), (None, None)]


def test_speedups_fast_is_step_8_cub_a_reference():
    rows = figures.order_results([
        row("cupy.sum", 20.0), row("cub", 5.0), row("multi_element", 10.0),
        row("torch.sum", 16.0), row("fast", 8.0),
        row("interleaved_divergent", 40.0)])
    assert [r["method"] for r in rows] == [
        "interleaved_divergent", "multi_element", "fast", "cub", "cupy.sum",
        "torch.sum"]
    expected = [(None, 1.0), (4.0, 4.0), (1.25, 5.0), (None, 8.0),
                (None, 2.0), (None, 2.5)]
    got = figures.speedups(rows)
    assert len(got) == len(expected)
    for (s, c), (es, ec) in zip(got, expected):
        assert s == (None if es is None else pytest.approx(es))
        assert c == pytest.approx(ec)


def test_speedups_reference_does_not_break_the_chain():
    """A reference row between two steps is skipped by the chain: the step
    after it is over the step before it, never over cub."""
    rows = [row("multi_element", 10.0), row("cub", 2.0), row("fast", 8.0)]
    assert figures.speedups(rows) == [(None, 1.0), (None, 5.0),
                                    (pytest.approx(1.25), pytest.approx(1.25))]
    # a WRONG cub: no figures, the rest unchanged
    rows[1] = row("cub", None, correct=False)
    assert figures.speedups(rows) == [(None, 1.0), (None, None),
                                    (pytest.approx(1.25), pytest.approx(1.25))]


def test_order_results_ladder_then_peers():
    rows = [row("cupy.sum", 1.0), row("multi_element", 1.0),
            row("torch.sum", 1.0), row("interleaved_divergent", 1.0)]
    assert [r["method"] for r in figures.order_results(rows)] == \
        ["interleaved_divergent", "multi_element", "cupy.sum", "torch.sum"]


def test_order_results_steps_then_cub_then_peers():
    rows = [row(m, 1.0) for m in reversed(TABLE_ORDER)]
    assert [r["method"] for r in figures.order_results(rows)] == \
        STEPS + ["cub"] + PEERS[::-1]      # peers keep their given order
    rows = [row("torch.sum", 1.0), row("cub", 1.0), row("fast", 1.0)]
    assert [r["method"] for r in figures.order_results(rows)] == \
        ["fast", "cub", "torch.sum"]


def test_speedups_of_sample_match_cold_times(sample):
    rows = figures.group_results(sample["results"])[("float32", 1 << 22, 256)]
    steps = figures.speedups(rows)
    t = {r["method"]: r["cold_us"] for r in rows}
    assert [r["method"] for r in rows] == TABLE_ORDER
    for r, (step, cum) in zip(rows, steps):
        assert cum == pytest.approx(t[STEPS[0]] / t[r["method"]])
        if r["method"] in STEPS[1:]:
            prev = STEPS[STEPS.index(r["method"]) - 1]
            assert step == pytest.approx(t[prev] / t[r["method"]])
        else:
            assert step is None


# ---------------------------------------------------------------------------
# The table


def test_table_headers():
    assert figures.TABLE_HEADERS == (
        "method", "cold µs", "GB/s", "% read", "b2b µs", "GB/s", "% read",
        "call µs", "1st pass µs", "rest µs", "step speedup",
        "cumulative speedup")


def test_format_table_head():
    doc = known_document(known_rows())
    head = figures.format_table(doc).split("\n\n")[0].splitlines()
    assert head[0] == (
        "cudareduce 0.1.0 on synthetic device (test fixture, not measured) "
        "(compute 9.0, 132 SMs, L2 50 MiB, SM 1,980 MHz, memory 2,619 MHz "
        "× 5,120 bits); driver 580.159.04 (CUDA 13.0), CUDA runtime 13.0, "
        "CCCL 3.0.1")
    assert head[1] == (
        "floor: empty kernel 2.50 µs cold, 1.25 µs back to back; read "
        "ceiling 3,000.0 GB/s cold, 3,100.0 GB/s back to back at 1 GiB; "
        f"measured {KNOWN_DATE}")
    assert head[2] == f"timing: {SYNTHETIC_TIMING['method']}"
    assert head[3] == f"default n: {SYNTHETIC_TIMING['default_n_rule']}"
    assert len(head) == 4
    assert figures.report_head(doc) == head
    # a long timing sentence wraps, indented, with no blank line; the
    # head's paragraphs keep it whole
    doc["timing"]["method"] = "word " * 59 + "end."
    head = figures.device_line(doc).splitlines()
    assert len(head) > 4 and max(map(len, head[2:])) <= 100
    assert head[3].startswith("  word")
    assert " ".join(line.strip() for line in head[2:-1]) == \
        figures.report_head(doc)[2] == "timing: " + "word " * 59 + "end."
    # compute capability 10.0 and 12.0 read as such
    assert "(compute 10.0," in figures.device_line(
        known_document([], compute_capability=100))


def test_format_table_cells_from_known_numbers():
    doc = known_document(known_rows())
    text = figures.format_table(doc)
    assert [len(t) - 2 for t in report_tables(text)] == [6, 1, 1]
    cells = cells_by_method(text, 0)
    assert list(cells) == ["interleaved_divergent", "sequential", "fast",
                           "cub", "torch.sum", "cupy.sum"]
    # 4 MiB in 10 µs cold (the probe 4 µs there), 8 µs back to back (the
    # probe 2 µs); passes 7.5, then 1.25 + 0.25
    assert cells["sequential"] == [
        "10.0", "419.4", "40.0%", "8.0", "524.3", "25.0%", "20.0", "7.5",
        "1.5", "4.00×", "4.00×"]
    assert cells["interleaved_divergent"] == [
        "40.0", "104.9", "10.0%", "30.0", "139.8", "6.7%", "50.0", "38.0",
        "1.0", "-", "1.00×"]
    # one pass: no rest; step over sequential, cumulative over step 1
    assert cells["fast"] == [
        "5.0", "838.9", "80.0%", "4.0", "1,048.6", "50.0%", "12.5", "4.5",
        "-", "2.00×", "8.00×"]
    # cub: no passes of ours, no call time
    assert cells["cub"] == [
        "8.0", "524.3", "50.0%", "6.4", "655.4", "31.2%", "-", "-", "-",
        "reference", "5.00×"]
    # a peer without back-to-back and call times
    assert cells["torch.sum"] == [
        "16.0", "262.1", "25.0%", "-", "-", "-", "-", "-", "-", "peer",
        "2.50×"]
    assert cells["cupy.sum"] == ["WRONG"] + ["-"] * 10
    # float64 at 2^19 reads the same 4 MiB: the same probe; µs >= 1000
    # without decimals
    (float64,) = cells_by_method(text, 1).values()
    assert float64 == ["12,345", "0.3", "0.0%", "1,000", "4.2",
                       "0.2%", "-", "12,000", "300.0", "-", "1.00×"]
    # int32 at 2^21 reads 8 MiB: the decoy probe (100 µs cold, 50 back to
    # back) is its own
    (int32,) = cells_by_method(text, 2).values()
    assert int32[:6] == ["20.0", "419.4", "500.0%", "10.0", "838.9",
                         "500.0%"]


def test_format_table_layout(sample):
    text = figures.format_table(sample)
    assert text.count("threads per block") == 6
    assert "\nfloat32, n = 4,194,304 (2^22), 256 threads per block\n" in text
    assert "\nint32, n = 4,194,304 (2^22), 256 threads per block\n" in text
    tables = report_tables(text)
    assert len(tables) == 6
    for table in tables:
        header = table[0]
        assert re.split(r"\s{2,}", header) == list(figures.TABLE_HEADERS)
        assert set(table[1].replace(" ", "")) == {"-"}
    # float32: 8 steps, cub and 2 peers; int32: no peers
    assert [len(t) - 2 for t in tables] == [11, 11, 11, 11, 11, 9]


def test_format_table_sample_rows(sample):
    """Each cell of the sample's 2^22 table from the document's figures."""
    text = figures.format_table(sample)
    cells = cells_by_method(text, 3)
    rows = {r["method"]: r for r in sample["results"]
            if (r["dtype"], r["n"]) == ("float32", 1 << 22)}
    probe = next(p for p in sample["probes"] if p["bytes"] == 16 << 20)
    first = rows["interleaved_divergent"]["cold_us"]
    previous = None
    for method in TABLE_ORDER:
        r = rows[method]
        passes = r["pass_us"]
        expected = [
            f"{r['cold_us']:,.1f}", f"{(16 << 20) / r['cold_us'] / 1e3:,.1f}",
            f"{100 * probe['read_cold_us'] / r['cold_us']:.1f}%",
            f"{r['batch_us']:,.1f}",
            f"{(16 << 20) / r['batch_us'] / 1e3:,.1f}",
            f"{100 * probe['read_batch_us'] / r['batch_us']:.1f}%",
            "-" if r["call_us"] is None else f"{r['call_us']:,.1f}",
            f"{passes[0]:,.1f}" if passes else "-",
            f"{sum(passes[1:]):,.1f}" if len(passes) > 1 else "-"]
        if method in STEPS:
            expected.append("-" if previous is None
                            else f"{previous / r['cold_us']:.2f}×")
            previous = r["cold_us"]
        else:
            expected.append("peer" if method in PEERS else "reference")
        expected.append(f"{first / r['cold_us']:.2f}×")
        assert cells[method] == expected, method


def test_format_table_wrong_row(sample):
    text = figures.format_table(sample)
    cells = cells_by_method(text, 0)
    assert cells["unroll_complete"] == ["WRONG"] + ["-"] * 10
    t = {r["method"]: r["cold_us"] for r in sample["results"]
         if (r["dtype"], r["n"]) == ("float32", 1 << 16)}
    # the step after a WRONG row is over the last correct one
    assert cells["multi_element"][9] == \
        f"{t['unroll_warp'] / t['multi_element']:.2f}×"
    assert cells["fast"][9] == f"{t['multi_element'] / t['fast']:.2f}×"


def test_format_table_column_alignment():
    doc = known_document(known_rows())
    text = figures.format_table(doc)
    table = report_tables(text)[0]
    header = table[0]
    # numbers right-aligned: each "cold µs" cell ends where its header does
    end = header.index("cold µs") + len("cold µs")
    for line in table[2:]:
        cell = line.split()[1]
        assert line.index(cell, len(line.split()[0])) + len(cell) == end
    # format_group is one table of it
    group = figures.group_results(doc["results"])[("float32", 1 << 20, 256)]
    assert figures.format_group(group, doc) == "\n".join(table)


# ---------------------------------------------------------------------------
# The validator: one planted violation per rule, named by its path


def _at(doc, method, dtype="float32", n=1 << 22) -> int:
    """The index of a result of the sample."""
    return next(i for i, r in enumerate(doc["results"])
                if (r["method"], r["dtype"], r["n"]) == (method, dtype, n))


def _set(*path_and_value):
    *path, value = path_and_value

    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(*path):
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


def _result(method, key, value, dtype="float32", n=1 << 22):
    """Set `key` of one sample result; the path names its index."""
    def mutate(doc):
        i = _at(doc, method, dtype, n)
        doc["results"][i][key] = value
        return i
    return mutate


def _wrong(key, value):
    """The sample's WRONG row (unroll_complete at 2^16) given a figure."""
    return _result("unroll_complete", key, value, n=1 << 16)


# (mutation, the message's start: a regex, {i} the result's index)
VIOLATIONS = {
    # the document
    "schema missing": (_delete("schema"), r"schema: missing"),
    "schema 1": (_set("schema", 1), r"schema: expected 2"),
    "schema str": (_set("schema", "2"), r"schema: expected 2"),
    "schema bool": (_set("schema", True), r"schema: expected 2"),
    "missing date": (_delete("date"), r"document: missing keys \['date'\]"),
    "extra top key": (_set("extra", 1), r"document: unexpected keys"),
    "version empty": (_set("cudareduce_version", ""), r"cudareduce_version"),
    "version int": (_set("cudareduce_version", 1), r"cudareduce_version"),
    "date not str": (_set("date", 20261124), r"date: expected ISO"),
    "date with a space": (_set("date", "2026-11-24 12:34:56Z"), r"date: "),
    "date not UTC": (_set("date", "2026-11-24T12:34:56+01:00"), r"date: "),
    "date fractional": (_set("date", "2026-11-24T12:34:56.5Z"), r"date: "),
    "date impossible": (_set("date", "2026-13-01T00:00:00Z"), r"date: "),
    # device
    "device not dict": (_set("device", []), r"device: expected an object"),
    "device missing driver": (_delete("device", "driver"),
                              r"device: missing keys \['driver'\]"),
    "device extra key": (_set("device", "ordinal", 0),
                         r"device: unexpected keys \['ordinal'\]"),
    "device old copy_gbps": (_set("device", "copy_gbps", 3000.0),
                             r"device: unexpected keys"),
    "empty name": (_set("device", "name", ""), r"device\.name: "),
    "padded name": (_set("device", "name", " gpu"), r"device\.name: "),
    "cc below 10": (_set("device", "compute_capability", 9),
                    r"device\.compute_capability: "),
    "cc float": (_set("device", "compute_capability", 90.0),
                 r"device\.compute_capability: "),
    "sm_count zero": (_set("device", "sm_count", 0), r"device\.sm_count: "),
    "sm_count str": (_set("device", "sm_count", "132"),
                     r"device\.sm_count: "),
    "sm_count bool": (_set("device", "sm_count", True),
                      r"device\.sm_count: "),
    "negative l2": (_set("device", "l2_bytes", -1), r"device\.l2_bytes: "),
    "zero memory": (_set("device", "total_bytes", 0),
                    r"device\.total_bytes: "),
    "zero sm clock": (_set("device", "sm_clock_mhz", 0),
                      r"device\.sm_clock_mhz: "),
    "float memory clock": (_set("device", "memory_clock_mhz", 2619.5),
                           r"device\.memory_clock_mhz: "),
    "zero bus": (_set("device", "memory_bus_bits", 0),
                 r"device\.memory_bus_bits: "),
    "driver empty": (_set("device", "driver", ""), r"device\.driver: "),
    "driver int": (_set("device", "driver", 580), r"device\.driver: "),
    "driver_cuda major only": (_set("device", "driver_cuda", "13"),
                               r"device\.driver_cuda: "),
    "driver_cuda float": (_set("device", "driver_cuda", 13.0),
                          r"device\.driver_cuda: "),
    "runtime with patch": (_set("device", "cuda_runtime", "13.0.1"),
                           r"device\.cuda_runtime: "),
    "cccl two parts": (_set("device", "cccl", "3.0"), r"device\.cccl: "),
    # timing
    "timing missing rule": (_delete("timing", "default_n_rule"),
                            r"timing: missing keys \['default_n_rule'\]"),
    "timing extra": (_set("timing", "reps", 3), r"timing: unexpected keys"),
    "timing method empty": (_set("timing", "method", ""),
                            r"timing\.method: "),
    "timing rule not str": (_set("timing", "default_n_rule", None),
                            r"timing\.default_n_rule: "),
    "timing default n zero": (_set("timing", "default_n", 0),
                              r"timing\.default_n: "),
    "timing default n bool": (_set("timing", "default_n", True),
                              r"timing\.default_n: "),
    # floor
    "floor not dict": (_set("floor", 3.0), r"floor: expected an object"),
    "floor missing": (_delete("floor", "read_bytes"),
                      r"floor: missing keys \['read_bytes'\]"),
    "floor extra": (_set("floor", "copy_gbps", 1.0),
                    r"floor: unexpected keys"),
    "empty cold zero": (_set("floor", "empty_cold_us", 0.0),
                        r"floor\.empty_cold_us: "),
    "empty batch nan": (_set("floor", "empty_batch_us", float("nan")),
                        r"floor\.empty_batch_us: "),
    "read bytes zero": (_set("floor", "read_bytes", 0),
                        r"floor\.read_bytes: "),
    "read bytes float": (_set("floor", "read_bytes", 1.0 * (1 << 30)),
                         r"floor\.read_bytes: "),
    "read cold inf": (_set("floor", "read_cold_gbps", float("inf")),
                      r"floor\.read_cold_gbps: "),
    "read batch negative": (_set("floor", "read_batch_gbps", -1.0),
                            r"floor\.read_batch_gbps: "),
    # probes
    "probes dict": (_set("probes", {}), r"probes: expected a list"),
    "probe not dict": (_set("probes", 0, [1]),
                       r"probes\[0\]: expected an object"),
    "probe missing": (_delete("probes", 0, "read_batch_us"),
                      r"probes\[0\]: missing keys"),
    "probe extra": (_set("probes", 0, "gbps", 1.0),
                    r"probes\[0\]: unexpected keys"),
    "probe bytes zero": (_set("probes", 0, "bytes", 0),
                         r"probes\[0\]\.bytes: "),
    "probe cold zero": (_set("probes", 0, "read_cold_us", 0),
                        r"probes\[0\]\.read_cold_us: "),
    "probe batch str": (_set("probes", 1, "read_batch_us", "1"),
                        r"probes\[1\]\.read_batch_us: "),
    "probes unsorted": (lambda doc: doc["probes"].reverse(),
                        r"probes\[1\]\.bytes: probes are sorted"),
    "probe twice": (lambda doc: doc["probes"].insert(1, doc["probes"][0]),
                    r"probes\[1\]\.bytes: probes are sorted by bytes, each "
                    r"size once"),
    "probe of a size missing": (
        lambda doc: doc["probes"].pop(3) and _at(doc, "interleaved_divergent"),
        r"results\[{i}\]: no read probe at its 16777216 bytes"),
    # results: each key
    "results dict": (_set("results", {}), r"results: expected a list"),
    "result not dict": (_set("results", 0, [1]),
                        r"results\[0\]: expected an object"),
    "result missing pass_us": (_delete("results", 0, "pass_us"),
                               r"results\[0\]: missing keys \['pass_us'\]"),
    "result old median_us": (_set("results", 0, "median_us", 1.0),
                             r"results\[0\]: unexpected keys"),
    "empty method": (_result("sequential", "method", ""),
                     r"results\[{i}\]\.method: "),
    "bad dtype": (_result("sequential", "dtype", "float8"),
                  r"results\[{i}\]\.dtype: "),
    "bad op": (_result("sequential", "op", "median"),
               r"results\[{i}\]\.op: expected one of \('sum', "),
    "op not a string": (_result("sequential", "op", None),
                        r"results\[{i}\]\.op: "),
    "peer of another op": (_result("torch.sum", "op", "prod"),
                           (r"results\[{i}\]\.method: torch\.sum is not a "
                            r"peer of prod, whose peers are "
                            r"\('torch\.prod', 'cupy\.prod'\)")),
    "peer of an op without it": (_result("torch.sum", "method",
                                         "torch.amin"),
                                 (r"results\[{i}\]\.method: torch\.amin "
                                  r"is not a peer of sum")),
    "n zero": (_result("sequential", "n", 0), r"results\[{i}\]\.n: "),
    "n float": (_result("sequential", "n", 1024.0), r"results\[{i}\]\.n: "),
    "threads str": (_result("sequential", "threads", "256"),
                    r"results\[{i}\]\.threads: "),
    "reps negative": (_result("sequential", "reps", -1),
                      r"results\[{i}\]\.reps: "),
    "correct int": (_result("sequential", "correct", 1),
                    r"results\[{i}\]\.correct: "),
    "cold negative": (_result("sequential", "cold_us", -1.0),
                      r"results\[{i}\]\.cold_us: "),
    "cold str": (_result("sequential", "cold_us", "10"),
                 r"results\[{i}\]\.cold_us: "),
    "batch inf": (_result("sequential", "batch_us", float("inf")),
                  r"results\[{i}\]\.batch_us: "),
    "call zero": (_result("sequential", "call_us", 0.0),
                  r"results\[{i}\]\.call_us: "),
    "pass_us not a list": (_result("sequential", "pass_us", 1.0),
                           r"results\[{i}\]\.pass_us: expected a list"),
    "pass zero": (_result("sequential", "pass_us", [10.0, 0.0]),
                  r"results\[{i}\]\.pass_us: expected a list"),
    "pass nan": (_result("sequential", "pass_us", [float("nan")]),
                 r"results\[{i}\]\.pass_us: expected a list"),
    "pass str": (_result("sequential", "pass_us", ["1"]),
                 r"results\[{i}\]\.pass_us: expected a list"),
    # results: a wrong row carries no figures
    "wrong with cold": (_wrong("cold_us", 5.0),
                        r"results\[{i}\]\.cold_us: a wrong result"),
    "wrong with batch": (_wrong("batch_us", 5.0),
                         r"results\[{i}\]\.batch_us: a wrong result"),
    "wrong with call": (_wrong("call_us", 5.0),
                        r"results\[{i}\]\.call_us: a wrong result"),
    "wrong with passes": (_wrong("pass_us", [1.0]),
                          r"results\[{i}\]\.pass_us: a wrong result"),
    "wrong with reps": (_wrong("reps", 10),
                        r"results\[{i}\]\.reps: a wrong result"),
    "timed row turned wrong": (_result("sequential", "correct", False),
                               r"results\[{i}\]\.cold_us: a wrong result"),
    # results: a correct row carries its figures
    "correct without reps": (_result("sequential", "reps", 0),
                             r"results\[{i}\]\.reps: a correct result"),
    "correct without cold": (_result("sequential", "cold_us", None),
                             r"results\[{i}\]\.cold_us: a correct result"),
    "peer without cold": (_result("torch.sum", "cold_us", None),
                          r"results\[{i}\]\.cold_us: a correct result"),
    "ours without batch": (_result("fast", "batch_us", None),
                           r"results\[{i}\]\.batch_us: a correct result"),
    "cub without batch": (_result("cub", "batch_us", None),
                          r"results\[{i}\]\.batch_us: a correct result"),
    # results: passes by method, and their sum
    "cub with passes": (_result("cub", "pass_us", [1.0]),
                        r"results\[{i}\]\.pass_us: cub launches its own"),
    "peer with passes": (_result("cupy.sum", "pass_us", [1.0]),
                         r"results\[{i}\]\.pass_us: cupy\.sum launches"),
    "fast in two passes": (_result("fast", "pass_us", [1.0, 1.0]),
                           r"results\[{i}\]\.pass_us: fast is one pass"),
    "fast without its pass": (_result("fast", "pass_us", []),
                              r"results\[{i}\]\.pass_us: fast is one pass"),
    "step without passes": (_result("sequential", "pass_us", []),
                            r"results\[{i}\]\.pass_us: a correct result of "
                            r"sequential needs its passes"),
    "passes longer than the run": (
        lambda doc: _result("sequential", "pass_us", [
            doc["results"][_at(doc, "sequential")]["cold_us"] * 1.05 + 1.01
        ])(doc),
        r"results\[{i}\]\.pass_us: the passes sum to"),
    # results: each (method, op, dtype, n, threads) once; no op is sum
    "duplicate": (lambda doc: doc["results"].append(
        dict(doc["results"][0])) or len(doc["results"]) - 1,
        (r"results\[{i}\]: duplicate entry for "
         r"\('interleaved_divergent', 'sum'")),
    "duplicate, one naming its op": (lambda doc: doc["results"].append(
        dict(doc["results"][0], op="sum")) or len(doc["results"]) - 1,
        (r"results\[{i}\]: duplicate entry for "
         r"\('interleaved_divergent', 'sum'")),
}


@pytest.mark.parametrize("name", list(VIOLATIONS))
def test_validate_document_names_each_violation(sample, name):
    mutate, message = VIOLATIONS[name]
    doc = copy.deepcopy(sample)
    i = mutate(doc)
    with pytest.raises(ValueError) as info:
        schema.validate_document(doc)
    assert re.match(message.replace("{i}", str(i)), str(info.value)), \
        str(info.value)


def test_validate_document_rejects_non_mapping():
    for bad in (None, [], "x", 3):
        with pytest.raises(ValueError, match="document: expected an object"):
            schema.validate_document(bad)


def test_validate_document_explains_an_old_document():
    old = {"device": {"name": "gpu", "sm_count": 1, "l2_bytes": 1,
                      "copy_gbps": 1.0},
           "cudareduce_version": "0.1.0", "results": []}
    with pytest.raises(ValueError, match=r"schema: missing: a document of an "
                                         r"older bench \(schema 1\)"):
        schema.validate_document(old)


def test_validate_document_accepts_what_the_rules_allow(sample):
    doc = copy.deepcopy(sample)
    results = doc["results"]
    # a wrong row of a timed method, made by make_result
    results[_at(doc, "sequential")] = row("sequential", None, correct=False)
    # a peer without back-to-back and call times, ours without a call time
    results[_at(doc, "torch.sum")].update(batch_us=None, call_us=None)
    results[_at(doc, "fast")]["call_us"] = None
    # passes summing to just under the allowance, cold * 1.05 + 1
    i = _at(doc, "first_add")
    cold = results[i]["cold_us"]
    results[i]["pass_us"] = [cold, 0.05 * cold + 0.999]
    # a method the model does not know: no rule on its passes
    results.append(row("numpy.sum", 5.0, n=1 << 16, pass_us=[]))
    # no driver string (no nvidia-smi); no L2
    doc["device"].update(driver=None, l2_bytes=0)
    # probes of sizes no result has (the floor's large size) are fine
    doc["probes"].append({"bytes": 1 << 40, "read_cold_us": 1.0,
                          "read_batch_us": 1.0})
    schema.validate_document(doc)
    doc["results"] = []
    doc["probes"] = []
    schema.validate_document(doc)


def test_validate_document_takes_each_op_and_results_without_one(sample):
    """A result's op is one of OPS, or left out (a sum, as the sample's);
    the same (method, dtype, n, threads) of two ops are two results; each
    op's peers are its own."""
    doc = copy.deepcopy(sample)
    assert all("op" not in r for r in doc["results"])
    schema.validate_document(doc)
    rows = [r for r in doc["results"] if r["n"] == 1 << 22
            and r["dtype"] == "float32"]
    for op in names.OPS[1:]:
        for r in rows:
            method = r["method"]
            if names.is_peer(method):
                # the op's peer of the same library, where it has one
                library = method.split(".")[0]
                same = [p for p in names.peers_of(op)
                        if p.startswith(f"{library}.")]
                if not same:
                    continue
                method = same[0]
            doc["results"].append(dict(r, op=op, method=method))
    schema.validate_document(doc)
    assert {names.op_of(r) for r in doc["results"]} == set(names.OPS)


def test_write_json_round_trip(sample, tmp_path):
    path = tmp_path / "out.json"
    schema.write_json(sample, path)
    assert json.loads(path.read_text(encoding="utf-8")) == sample
    bad = copy.deepcopy(sample)
    bad["floor"]["read_cold_gbps"] = float("nan")
    with pytest.raises(ValueError, match=r"floor\.read_cold_gbps"):
        schema.write_json(bad, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def test_is_peer():
    assert names.is_peer("torch.sum") and names.is_peer("cupy.sum")
    assert not any(names.is_peer(m) for m in METHODS)
    # every op's peers, and nothing else
    assert names.is_peer("torch.amin") and names.is_peer("cupy.nanprod")
    assert names.is_peer("torch.argmin") and names.is_peer("cupy.nanargmax")
    assert not names.is_peer("torch.nanprod")
    assert not names.is_peer("torch.nanargmin")
    assert not names.is_peer("cupy.nanmin")
    assert not names.is_peer("torch.min") and not names.is_peer("numpy.sum")


def test_peers_of_each_op():
    """torch's and cupy's function of each op, torch's where it has one:
    no nanprod, nanmin, nanmax, nanargmin, nanargmax; its whole-tensor min
    and max are amin and amax; cupy's but for nanmin, nanmax and nanmean
    (which wait for the device inside the call)."""
    assert names.peers_of() == names.peers_of("sum") == \
        ("torch.sum", "cupy.sum")
    assert {op: list(names.peers_of(op)) for op in names.OPS} == OP_PEERS
    assert list(names.PEER_FUNCTIONS) == ["torch", "cupy"]
    assert names.DEFAULT_OP == names.OPS[0] == "sum"


def test_the_ops_are_the_extensions_operators():
    """One fact in one place: the bench times every operator of the
    extension, in its order, each the library's function of that name
    (the call timings call it)."""
    assert names.OPS == _cudareduce.OPERATORS
    assert set(names.OPS) >= {"sum", "min", "argmin", "nanargmax"}
    assert all(callable(getattr(cudareduce, op)) for op in names.OPS)


def test_op_of_a_result_or_document():
    assert names.op_of({"op": "prod"}) == "prod"
    assert names.op_of(row("fast", 1.0)) == "sum"
    assert names.op_of({"method": "fast"}) == "sum"     # written before ops


def test_dtypes_are_the_librarys():
    """Every dtype the library reduces, each once, each a NumPy name
    (bfloat16 ml_dtypes'), the real floats and the complex told apart."""
    assert set(names.DTYPES) == {
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "float16", "float32", "float64", "complex64",
        "complex128", "bfloat16"}
    assert len(set(names.DTYPES)) == len(names.DTYPES)
    assert all(names.numpy_dtype(d).name == d for d in names.DTYPES)
    assert names.numpy_dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
    assert {d: names.dtype_kind(d) for d in names.DTYPES} == {
        "bool": "b", **dict.fromkeys(("int8", "int16", "int32", "int64"),
                                     "i"),
        **dict.fromkeys(("uint8", "uint16", "uint32", "uint64"), "u"),
        **dict.fromkeys(("float16", "float32", "float64", "bfloat16"), "f"),
        "complex64": "c", "complex128": "c"}
    assert schema.result_bytes({"n": 10, "dtype": "bfloat16"}) == 20
    assert schema.result_bytes({"n": 10, "dtype": "complex64"}) == 80
    assert schema.result_bytes({"n": 10, "dtype": "complex128"}) == 160


def test_tables_are_per_op():
    """A document of several ops: one table per (op, dtype, n, threads),
    the ops in order of first appearance, each titled with its op; its
    speedups within the op.  group_results takes one op's results."""
    n = 1 << 20                        # 4 MiB of float32, as of uint8 below
    sums = [row("interleaved_divergent", 40.0, n=n),
            row("sequential", 10.0, n=n), row("torch.sum", 8.0, n=n)]
    products = [dict(r, op="prod", method=r["method"].replace(
        "torch.sum", "torch.prod"), cold_us=2 * r["cold_us"])
        for r in sums]
    doc = known_document([row("sequential", 5.0, dtype="uint8", op="max"),
                          *sums, *products])
    schema.validate_document(doc)
    groups = figures.table_groups(doc["results"])
    assert list(groups) == [("max", "uint8", 1 << 22, 256),
                            ("sum", "float32", n, 256),
                            ("prod", "float32", n, 256)]
    assert [r["method"] for r in groups["prod", "float32", n, 256]] \
        == ["interleaved_divergent", "sequential", "torch.prod"]
    text = figures.format_table(doc)
    titles = [t.split("\n")[0] for t in text.split("\n\n")[1:]]
    # the sums unnamed, as the bench always showed them
    assert titles == [
        "uint8 max, n = 4,194,304 (2^22), 256 threads per block",
        "float32, n = 1,048,576 (2^20), 256 threads per block",
        "float32 prod, n = 1,048,576 (2^20), 256 threads per block"]
    assert figures.group_title("nanmin", "float16", 1000, 128) == \
        "float16 nanmin, n = 1,000, 128 threads per block"
    assert figures.reduction_label("int8", "sum") == "int8"
    assert figures.reduction_label("int8", "any") == "int8 any"
    # the product's speedups are its own: 80 / 20 = 4x, not over the sum's
    cells = cells_by_method(text, 2)
    assert cells["sequential"][-2:] == ["4.00×", "4.00×"]
    assert cells["torch.prod"][-2:] == ["peer", "5.00×"]
    assert figures.group_results(sums) == {("float32", n, 256): sums}
    with pytest.raises(ValueError, match=r"results of several ops "
                                         r"\['prod', 'sum'\]"):
        figures.group_results(sums + products)


def test_is_reference():
    """cub and the peers are references (no step speedup); the steps, fast
    included, are not; only the peers are peers."""
    assert names.is_reference("cub") and not names.is_peer("cub")
    assert all(names.is_reference(p) for p in PEERS)
    assert not any(names.is_reference(m) for m in STEPS)
    assert [m for m in METHODS if names.is_reference(m)] == ["cub"]
    assert not names.is_reference("numpy.sum")


def test_sizes_and_bytes_in_words():
    assert figures.format_n(1 << 22) == "4,194,304 (2^22)"
    assert figures.format_n(1000) == "1,000"
    assert figures.short_n(1 << 22) == "2^22" and figures.short_n(1000) == "1,000"
    assert figures.describe_sizes([1 << k for k in range(10, 29)]) == \
        "2^10..2^28 (19 sizes)"
    assert figures.format_bytes(1 << 30) == "1 GiB"
    assert figures.format_bytes(50 << 20) == "50 MiB"
    assert figures.format_bytes(3 << 19) == "1.5 MiB"
    assert figures.format_bytes(4096) == "4 KiB"
    assert figures.format_bytes(100) == "100 B"


def test_the_written_out_names_are_the_extensions():
    """names.OPS, names.DTYPES and names.LADDER are written out so that
    documents read without the compiled extension; they stay the
    extension's own."""
    # The bench's order is its tables' (bfloat16 last); the set is the
    # extension's.
    assert sorted(names.DTYPES) == sorted(_cudareduce.DTYPES)
    methods = [name for name, _ in _cudareduce.methods()]
    assert list(names.LADDER) == methods[:_cudareduce.LADDER_STEPS]
    assert names.ladder_methods() == [m for m in cudareduce.methods()
                                      if m != names.REFERENCE_METHOD]
