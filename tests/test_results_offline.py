"""cudareduce.results, the bench's results model, without a GPU: the
speedup arithmetic, the ordering, the tables and the JSON document's
schema, on the recorded sample (tests/data/bench_sample.json: hand-made
numbers of a fictional device, not a measurement)."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import cudareduce
import cudareduce.results as model
from cudareduce import reference
from bench_data import (LADDER, METHODS, PEERS, STEPS,  # noqa: F401
                        TABLE_ORDER, report_tables, row, sample)


# ---------------------------------------------------------------------------
# The recorded sample itself


def test_sample_is_valid_and_labelled_as_not_measured(sample):
    model.validate_document(sample)
    assert "not measured" in sample["device"]["name"]
    groups = model.group_results(sample["results"])
    assert list(groups) == [("float32", 1 << k, 256) for k in (16, 18, 20, 22, 24)] \
        + [("int32", 1 << 22, 256)]
    # every group has every step and the cub reference, in a run's order
    # (the float32 groups the peers too); one deliberate WRONG row
    for (dtype, n, _), rows in groups.items():
        expected = TABLE_ORDER if dtype == "float32" else STEPS + ["cub"]
        assert [r["method"] for r in rows] == expected
        in_file = [r["method"] for r in sample["results"]
                   if (r["dtype"], r["n"]) == (dtype, n)]
        assert in_file == expected
        t = {r["method"]: r["median_us"] for r in rows}
        # plausible: fast a bit faster than multi_element, cub a bit slower
        # than fast
        assert t["fast"] < t["multi_element"] < 1.2 * t["fast"]
        assert t["fast"] < t["cub"] < 1.1 * t["fast"]
        for r in rows:
            if r["correct"]:
                assert r["gbps"] == pytest.approx(
                    n * np.dtype(dtype).itemsize / (r["median_us"] * 1e3),
                    rel=1e-4)
    wrong = [(r["method"], r["n"]) for r in sample["results"]
             if not r["correct"]]
    assert wrong == [("unroll_complete", 1 << 16)]


def test_methods_are_the_steps_then_cub():
    """The extension's methods: the seven steps of the paper, ``fast`` (step
    8 of the bench's chain) and ``cub`` (its reference, no step)."""
    assert len(METHODS) == 9 and METHODS[-2:] == ["fast", "cub"]
    assert LADDER == METHODS[:7] == list(reference.LADDER)
    assert model.ladder_methods() == STEPS == LADDER + ["fast"]
    assert model.REFERENCE_METHOD == "cub"
    assert cudareduce.DEFAULT_METHOD == "fast"


# ---------------------------------------------------------------------------
# Results and speedups


def test_make_result_gbps_is_bytes_read_per_second():
    r = row("sequential", 10.0)
    assert r["gbps"] == pytest.approx((1 << 22) * 4 / 10e-6 / 1e9)
    assert r["correct"] is True and r["reps"] == 100
    r = row("sequential", 10.0, dtype="float64")
    assert r["gbps"] == pytest.approx((1 << 22) * 8 / 10e-6 / 1e9)
    assert list(r) == list(model.RESULT_KEYS)


def test_make_result_wrong_is_not_timed():
    r = model.make_result("sequential", "float32", 1024, 256, 5.0, 100, False)
    assert r["median_us"] is None and r["gbps"] is None
    assert r["reps"] == 0 and r["correct"] is False


def test_speedups_arithmetic():
    rows = [row("interleaved_divergent", 100.0),
            row("interleaved_bank_conflict", 50.0),
            row("sequential", None, correct=False),
            row("first_add", 25.0),
            row("unroll_warp", 20.0),
            row("torch.sum", 10.0),
            row("cupy.sum", None, correct=False)]
    got = model.speedups(rows)
    expected = [(None, 1.0), (2.0, 2.0), (None, None), (2.0, 4.0),
                (1.25, 5.0), (None, 10.0), (None, None)]
    for (s, c), (es, ec) in zip(got, expected):
        assert s == (None if es is None else pytest.approx(es))
        assert c == (None if ec is None else pytest.approx(ec))


def test_speedups_first_wrong_uses_first_correct():
    rows = [row("interleaved_divergent", None, correct=False),
            row("interleaved_bank_conflict", 40.0),
            row("sequential", 10.0)]
    assert model.speedups(rows) == [(None, None), (None, 1.0), (4.0, 4.0)]


def test_speedups_peers_only():
    assert model.speedups([row("torch.sum", 10.0)]) == [(None, None)]


def test_speedups_references_only():
    assert model.speedups([row("cub", 10.0), row("torch.sum", 5.0)]) == \
        [(None, None), (None, None)]


def test_speedups_fast_is_step_8_cub_a_reference():
    rows = model.order_results([
        row("cupy.sum", 20.0), row("cub", 5.0), row("multi_element", 10.0),
        row("torch.sum", 16.0), row("fast", 8.0),
        row("interleaved_divergent", 40.0)])
    assert [r["method"] for r in rows] == [
        "interleaved_divergent", "multi_element", "fast", "cub", "cupy.sum",
        "torch.sum"]
    expected = [(None, 1.0), (4.0, 4.0), (1.25, 5.0), (None, 8.0),
                (None, 2.0), (None, 2.5)]
    got = model.speedups(rows)
    assert len(got) == len(expected)
    for (s, c), (es, ec) in zip(got, expected):
        assert s == (None if es is None else pytest.approx(es))
        assert c == pytest.approx(ec)


def test_speedups_reference_does_not_break_the_chain():
    """A reference row between two steps is skipped by the chain: the step
    after it is over the step before it, never over cub."""
    rows = [row("multi_element", 10.0), row("cub", 2.0), row("fast", 8.0)]
    assert model.speedups(rows) == [(None, 1.0), (None, 5.0),
                                    (pytest.approx(1.25), pytest.approx(1.25))]
    # a WRONG cub: no figures, the rest unchanged
    rows[1] = row("cub", None, correct=False)
    assert model.speedups(rows) == [(None, 1.0), (None, None),
                                    (pytest.approx(1.25), pytest.approx(1.25))]


def test_order_results_ladder_then_peers():
    rows = [row("cupy.sum", 1.0), row("multi_element", 1.0),
            row("torch.sum", 1.0), row("interleaved_divergent", 1.0)]
    assert [r["method"] for r in model.order_results(rows)] == \
        ["interleaved_divergent", "multi_element", "cupy.sum", "torch.sum"]


def test_order_results_steps_then_cub_then_peers():
    rows = [row(m, 1.0) for m in reversed(TABLE_ORDER)]
    assert [r["method"] for r in model.order_results(rows)] == \
        STEPS + ["cub"] + PEERS[::-1]      # peers keep their given order
    rows = [row("torch.sum", 1.0), row("cub", 1.0), row("fast", 1.0)]
    assert [r["method"] for r in model.order_results(rows)] == \
        ["fast", "cub", "torch.sum"]


def test_speedups_of_sample_match_times(sample):
    rows = model.group_results(sample["results"])[("float32", 1 << 22, 256)]
    steps = model.speedups(rows)
    t = {r["method"]: r["median_us"] for r in rows}
    assert [r["method"] for r in rows] == TABLE_ORDER
    for r, (step, cum) in zip(rows, steps):
        assert cum == pytest.approx(t[STEPS[0]] / t[r["method"]])
        if r["method"] in STEPS[1:]:
            prev = STEPS[STEPS.index(r["method"]) - 1]
            assert step == pytest.approx(t[prev] / t[r["method"]])
        else:
            assert step is None
    fast_step = steps[STEPS.index("fast")][0]
    assert fast_step == pytest.approx(t["multi_element"] / t["fast"])
    assert fast_step > 1.0


# ---------------------------------------------------------------------------
# The table


def test_format_table_layout(sample):
    text = model.format_table(sample)
    first = text.splitlines()[0]
    assert sample["device"]["name"] in first
    assert "2,600.0 GB/s (read+write)" in first
    assert "132 SMs" in first and "L2 50 MiB" in first
    assert text.count("threads per block") == 6
    assert "float32, n = 4,194,304 (2^22), 256 threads per block" in text
    assert "int32, n = 4,194,304 (2^22), 256 threads per block" in text
    tables = report_tables(text)
    assert len(tables) == 6
    for table in tables:
        header = table[0]
        positions = [header.index(h) for h in model.TABLE_HEADERS]
        assert positions == sorted(positions)
        assert set(table[1].replace(" ", "")) == {"-"}
    # float32: 8 steps, cub and 2 peers; int32: no peers
    assert [len(t) - 2 for t in tables] == [11, 11, 11, 11, 11, 9]


def test_format_table_rows(sample):
    tables = report_tables(model.format_table(sample))
    rows_2_22 = {line.split()[0]: line.split()[1:] for line in tables[3][2:]}
    assert list(rows_2_22) == TABLE_ORDER
    r = {x["method"]: x for x in sample["results"]
         if x["n"] == 1 << 22 and x["dtype"] == "float32"}
    first = rows_2_22["interleaved_divergent"]
    assert first[0] == f"{r['interleaved_divergent']['median_us']:,.1f}"
    assert first[3:] == ["-", "1.00×"]
    last = rows_2_22["multi_element"]
    assert last[1] == f"{r['multi_element']['gbps']:,.1f}"
    assert last[2] == f"{100 * r['multi_element']['gbps'] / 2600.0:.1f}%"
    step = (r["unroll_complete"]["median_us"] / r["multi_element"]["median_us"])
    cum = (r["interleaved_divergent"]["median_us"]
           / r["multi_element"]["median_us"])
    assert last[3:] == [f"{step:.2f}×", f"{cum:.2f}×"]
    assert rows_2_22["torch.sum"][3] == "peer"
    assert rows_2_22["cupy.sum"][3] == "peer"
    assert rows_2_22["torch.sum"][4].endswith("×")


def test_format_table_fast_is_step_8(sample):
    """fast is the step after multi_element: its step speedup is over
    multi_element, its cumulative over step 1."""
    tables = report_tables(model.format_table(sample))
    r = {x["method"]: x for x in sample["results"]
         if x["n"] == 1 << 22 and x["dtype"] == "float32"}
    rows_2_22 = {line.split()[0]: line.split()[1:] for line in tables[3][2:]}
    fast = rows_2_22["fast"]
    assert fast[0] == f"{r['fast']['median_us']:,.1f}"
    assert fast[1] == f"{r['fast']['gbps']:,.1f}"
    step = r["multi_element"]["median_us"] / r["fast"]["median_us"]
    cum = r["interleaved_divergent"]["median_us"] / r["fast"]["median_us"]
    assert fast[3:] == [f"{step:.2f}×", f"{cum:.2f}×"]
    # ... and not over cub, which is faster than multi_element here
    assert f"{r['cub']['median_us'] / r['fast']['median_us']:.2f}×" != fast[3]
    # the int32 table too
    rows_int = {line.split()[0]: line.split()[1:] for line in tables[5][2:]}
    t = {x["method"]: x["median_us"] for x in sample["results"]
         if x["dtype"] == "int32"}
    assert rows_int["fast"][3] == f"{t['multi_element'] / t['fast']:.2f}×"


def test_format_table_cub_is_the_reference(sample):
    """cub shows "reference" where a step shows its step speedup, a
    cumulative speedup over step 1, and sits after the steps and before the
    peers."""
    tables = report_tables(model.format_table(sample))
    r = {x["method"]: x for x in sample["results"]
         if x["n"] == 1 << 22 and x["dtype"] == "float32"}
    lines = tables[3][2:]
    names = [line.split()[0] for line in lines]
    assert names.index("cub") == len(STEPS)
    assert names[names.index("cub") + 1:] == PEERS
    cub = lines[names.index("cub")].split()[1:]
    cum = r["interleaved_divergent"]["median_us"] / r["cub"]["median_us"]
    assert cub == [f"{r['cub']['median_us']:,.1f}", f"{r['cub']['gbps']:,.1f}",
                   f"{100 * r['cub']['gbps'] / 2600.0:.1f}%", "reference",
                   f"{cum:.2f}×"]
    # every group: one cub row, "reference"; the peers' cell stays "peer"
    for table in tables:
        cells = {line.split()[0]: line.split()[1:] for line in table[2:]}
        assert cells["cub"][3] == "reference"
        assert [m for m, c in cells.items() if c[3] == "reference"] == ["cub"]
        assert all(cells[p][3] == "peer" for p in PEERS if p in cells)


def test_format_table_wrong_row(sample):
    tables = report_tables(model.format_table(sample))
    rows_2_16 = {line.split()[0]: line.split()[1:] for line in tables[0][2:]}
    assert rows_2_16["unroll_complete"] == ["WRONG", "-", "-", "-", "-"]
    r = {x["method"]: x["median_us"] for x in sample["results"]
         if x["n"] == 1 << 16}
    # the step after a WRONG row is over the last correct one
    assert rows_2_16["multi_element"][3] == \
        f"{r['unroll_warp'] / r['multi_element']:.2f}×"
    assert rows_2_16["fast"][3] == f"{r['multi_element'] / r['fast']:.2f}×"


def test_format_table_column_alignment():
    doc = model.make_document(
        {"name": "gpu", "sm_count": 1, "l2_bytes": 1 << 20}, 100.0,
        [row("interleaved_divergent", 12345.0), row("sequential", 1.5),
         row("torch.sum", 3.0)])
    lines = model.format_table(doc).splitlines()
    body = lines[3:]
    assert "12,345" in body[2] and "1.5" in body[3]
    # numbers right-aligned: the time column ends at the same position
    time_end = len(lines[3].split("time (µs)")[0]) + len("time (µs)")
    for line in body[2:]:
        cell = line.split()[1]
        assert line.index(cell) + len(cell) == time_end


# ---------------------------------------------------------------------------
# The JSON document


def test_make_document_shape():
    doc = model.make_document(
        {"ordinal": 0, "name": "gpu", "sm_count": 2, "l2_bytes": 1024,
         "total_bytes": 1 << 30}, 123.4, [row("sequential", 2.0)])
    assert list(doc) == list(model.DOCUMENT_KEYS)
    assert list(doc["device"]) == list(model.DEVICE_KEYS)
    assert doc["cudareduce_version"] == cudareduce.__version__
    model.validate_document(doc)
    model.validate_document(json.loads(json.dumps(doc)))


def _mutations():
    def setter(path, value):
        def mutate(doc):
            target = doc
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        return mutate

    def deleter(path):
        def mutate(doc):
            target = doc
            for key in path[:-1]:
                target = target[key]
            del target[path[-1]]
        return mutate

    return {
        "not a dict": lambda doc: doc.clear() or doc.update({"x": 1}),
        "missing device": deleter(["device"]),
        "missing results": deleter(["results"]),
        "extra top key": setter(["extra"], 1),
        "missing copy_gbps": deleter(["device", "copy_gbps"]),
        "extra device key": setter(["device", "ordinal"], 0),
        "empty name": setter(["device", "name"], ""),
        "sm_count str": setter(["device", "sm_count"], "132"),
        "sm_count bool": setter(["device", "sm_count"], True),
        "sm_count float": setter(["device", "sm_count"], 132.0),
        "negative l2": setter(["device", "l2_bytes"], -1),
        "zero copy": setter(["device", "copy_gbps"], 0.0),
        "nan copy": setter(["device", "copy_gbps"], float("nan")),
        "version int": setter(["cudareduce_version"], 1),
        "results dict": setter(["results"], {}),
        "result not dict": setter(["results", 0], [1]),
        "result missing gbps": deleter(["results", 0, "gbps"]),
        "result extra key": setter(["results", 0, "buffers"], 4),
        "bad dtype": setter(["results", 0, "dtype"], "float16"),
        "n zero": setter(["results", 0, "n"], 0),
        "n float": setter(["results", 0, "n"], 1024.0),
        "threads str": setter(["results", 0, "threads"], "256"),
        "reps negative": setter(["results", 0, "reps"], -1),
        "reps zero when correct": setter(["results", 0, "reps"], 0),
        "correct int": setter(["results", 0, "correct"], 1),
        "correct without time": setter(["results", 0, "median_us"], None),
        "correct without gbps": setter(["results", 0, "gbps"], None),
        "negative time": setter(["results", 0, "median_us"], -1.0),
        "time str": setter(["results", 0, "median_us"], "10"),
        "inf gbps": setter(["results", 0, "gbps"], float("inf")),
        "wrong with time": lambda doc: doc["results"][0].update(
            correct=False),
        "empty method": setter(["results", 0, "method"], ""),
        "duplicate": lambda doc: doc["results"].append(
            dict(doc["results"][0])),
    }


@pytest.mark.parametrize("name, mutate", list(_mutations().items()),
                         ids=list(_mutations()))
def test_validate_document_rejects(sample, name, mutate):
    doc = copy.deepcopy(sample)
    mutate(doc)
    with pytest.raises(ValueError):
        model.validate_document(doc)


def test_validate_document_rejects_non_mapping():
    for bad in (None, [], "x", 3):
        with pytest.raises(ValueError):
            model.validate_document(bad)


def test_validate_document_accepts_wrong_rows_and_empty_results(sample):
    doc = copy.deepcopy(sample)
    doc["results"][0].update(correct=False, median_us=None, gbps=None, reps=0)
    model.validate_document(doc)
    doc["results"] = []
    model.validate_document(doc)


def test_validate_document_error_names_the_path(sample):
    doc = copy.deepcopy(sample)
    doc["results"][3]["median_us"] = "fast"
    with pytest.raises(ValueError, match=r"results\[3\]\.median_us"):
        model.validate_document(doc)


def test_write_json_round_trip(sample, tmp_path):
    path = tmp_path / "out.json"
    model.write_json(sample, path)
    assert json.loads(path.read_text(encoding="utf-8")) == sample
    bad = copy.deepcopy(sample)
    bad["device"]["copy_gbps"] = float("nan")
    with pytest.raises(ValueError):
        model.write_json(bad, tmp_path / "bad.json")




def test_is_peer():
    assert model.is_peer("torch.sum") and model.is_peer("cupy.sum")
    assert not any(model.is_peer(m) for m in METHODS)


def test_is_reference():
    """cub and the peers are references (no step speedup); the steps, fast
    included, are not; only the peers are peers."""
    assert model.is_reference("cub") and not model.is_peer("cub")
    assert all(model.is_reference(p) for p in PEERS)
    assert not any(model.is_reference(m) for m in STEPS)
    assert [m for m in METHODS if model.is_reference(m)] == ["cub"]
    assert not model.is_reference("numpy.sum")
