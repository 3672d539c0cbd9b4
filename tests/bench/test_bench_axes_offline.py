"""cudareduce.bench.axes and .axis_schema without a GPU: the floor's
arithmetic, the ``--axis`` document's check on a synthetic document and
its breakages, the report, the plot, the host-side check of a result, and
``run_axes`` on a fake CuPy (NumPy arrays, a clock for events).  (The
project's targets on the same documents: test_targets_axis_offline.py.)"""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from support.axis_data import (FAKE_CALL_MS, FAKE_EMPTY_MS, FAKE_READ,
                               FAST_PCT, OURS, REFUSAL, axis_document,
                               default_outcome,
                               fake_axis_device)  # noqa: F401 - a fixture
from support.bench_data import PNG_MAGIC, needs_matplotlib, plot
from cudareduce.bench import axes, axis_schema
from cudareduce.bench.axis_schema import (axis_peers, floor_us,
                                          make_axis_probe, read_gbps,
                                          validate_axis_document, write_gbps)
from cudareduce.bench.policy import MAX_REPS, MIN_REPS

SMALL = [axes.AxisCase((1000, 37), 1), axes.AxisCase((37, 1000), 0),
         axes.AxisCase((24, 300), 1, op="argmax")]


# ---------------------------------------------------------------------------
# The floor


def test_the_write_rate_comes_from_the_copy():
    # 1e6 bytes: the read probe 2 + 100 µs, the copy 2 + 100 + 125 µs,
    # an empty kernel 2 µs: reads at 10 GB/s, writes at 8 GB/s.
    assert read_gbps(10**6, 102.0, 2.0) == pytest.approx(10.0)
    assert write_gbps(10**6, 102.0, 227.0, 2.0) == pytest.approx(8.0)
    # reading 2e6 bytes and writing 5e5: 2 + 200 + 62.5 µs
    assert floor_us(2.0, 102.0, 227.0, 10**6, 2 * 10**6, 5 * 10**5) == \
        pytest.approx(264.5)
    # nothing written beyond the read's bytes' worth: the read probe's time
    assert floor_us(2.0, 102.0, 227.0, 10**6, 10**6, 0) == \
        pytest.approx(102.0)


@pytest.mark.parametrize("read_us, copy_us, read, write", [
    (2.0, 50.0, None, 1e6 / 48e3),  # the read no slower than an empty kernel
    (102.0, 90.0, 10.0, None),      # the copy no slower than the read
    (1.0, 1.5, None, None)])        # neither slower than an empty kernel
def test_a_rate_that_is_not_positive_is_null_and_adds_nothing(
        read_us, copy_us, read, write):
    def approx(x):
        return None if x is None else pytest.approx(x)
    assert read_gbps(10**6, read_us, 2.0) == approx(read)
    assert write_gbps(10**6, read_us, copy_us, 2.0) == approx(write)
    expected = 2.0 + max(read_us - 2.0, 0.0) * 2 \
        + max(max(copy_us - 2.0, 0.0) - max(read_us - 2.0, 0.0), 0.0) * 0.5
    assert floor_us(2.0, read_us, copy_us, 10**6, 2 * 10**6, 5 * 10**5) == \
        pytest.approx(expected)


def test_a_probe_row_carries_its_rates():
    probe = make_axis_probe(10**6, 102.0, 52.0, 227.0, 112.0,
                            {"empty_cold_us": 2.0, "empty_batch_us": 2.0})
    assert list(probe) == list(axis_schema.AXIS_PROBE_KEYS)
    assert probe["read_cold_gbps"] == pytest.approx(10.0)
    assert probe["read_batch_gbps"] == pytest.approx(20.0)
    assert probe["write_cold_gbps"] == pytest.approx(8.0)
    assert probe["write_batch_gbps"] == pytest.approx(1e6 / 60e3)


# ---------------------------------------------------------------------------
# The document


def test_the_synthetic_document_is_valid_and_complete():
    doc = axis_document()
    validate_axis_document(doc)
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    results = doc["results"]
    peers = list(axis_peers("sum"))
    assert peers == ["torch.sum", "cupy.sum", "cupy.sum[cub]"]
    assert axis_peers("argmax") == ("torch.argmax", "cupy.argmax",
                                    "cupy.argmax[cub]")
    assert len(results) == len(axes.AXIS_CASES) * (len(OURS) + 3)
    for r in results:
        assert list(r) == list(axis_schema.AXIS_RESULT_KEYS)
        size = math.prod(r["shape"])
        assert r["read_bytes"] == 4 * size
        if r["method"] == "fast":
            assert r["pct_floor"] == pytest.approx(FAST_PCT)
            assert r["gbps"] == pytest.approx(
                (r["read_bytes"] + r["write_bytes"]) / (r["batch_us"] * 1e3))
        elif r["method"] in OURS:
            assert r["unavailable"] == REFUSAL.format(r["method"])
            assert r["correct"] is None and r["batch_us"] is None
    argmax = [r for r in results if r["op"] == "argmax"]
    assert {r["method"] for r in argmax} == {*OURS, *axis_peers("argmax")}
    # an index is 8 bytes, a float32 sum 4
    assert all(r["write_bytes"] == 32 * 8 for r in argmax)
    assert doc["probes"] == sorted(doc["probes"], key=lambda p: p["bytes"])


def _first(doc, method="fast", op="sum"):
    return next(r for r in doc["results"]
                if r["method"] == method and r["op"] == op)


def _set(key, value, method="fast"):
    def change(doc):
        _first(doc, method)[key] = value
    return change


def _drop_probe(doc):
    del doc["probes"][0]


def _swap_probes(doc):
    doc["probes"][0], doc["probes"][1] = doc["probes"][1], doc["probes"][0]


def _twice(doc):
    doc["results"].append(copy.deepcopy(doc["results"][0]))


def _untimed_but_correct(doc):
    _first(doc, "cub").update(unavailable=None, correct=True)


def _rate(doc):
    doc["probes"][0]["write_batch_gbps"] *= 1.01


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(kind="ladder"), "kind: expected 'axis'"),
    (lambda d: d.update(schema=2), "schema: expected 1"),
    (lambda d: d.update(extra=1), "document: unexpected keys ['extra']"),
    (lambda d: d.pop("software"), "document: missing keys ['software']"),
    (lambda d: d["software"].update(cupy_accelerators={"reduction": []}),
     "software.cupy_accelerators"),
    (lambda d: d["floor"].update(empty_batch_us=0), "floor.empty_batch_us"),
    (_drop_probe, "no probe at its"),
    (_swap_probes, "probes are sorted by bytes"),
    (_rate, "probes[0].write_batch_gbps: "),
    (_set("pct_floor", 99.0), ".pct_floor: 99.0 is not 100 x"),
    (_set("gbps", 1.0), ".gbps: 1.0 is not (read_bytes"),
    (_set("floor_batch_us", 1.0), ".floor_batch_us: 1.0 is not the floor"),
    (_set("read_bytes", 4), ".read_bytes: 4 is not the input's bytes"),
    (_set("axis", 2), ".axis: 2 is out of range for shape"),
    (_set("method", "torch.argmax"), "is neither ours nor a peer of sum"),
    (_set("method", "cupy.sum[cub]", "cub"), "duplicate entry"),
    (_set("correct", False), ".cold_us: an untimed or WRONG result"),
    (_set("correct", None), ".correct: null only for an unavailable"),
    (_set("unavailable", "gone"), ".correct: an unavailable result"),
    (_untimed_but_correct, ".cold_us: a correct result needs"),
    (_set("reps", 0), "a correct result has batch and reps >= 1"),
    (_set("batch", 3, "cub"), "an untimed or WRONG result has batch"),
    (_set("dtype", "float128"), ".dtype: expected one of"),
    (_twice, "duplicate entry")])
def test_a_broken_document_is_refused_by_its_path(change, message):
    doc = axis_document()
    change(doc)
    with pytest.raises(ValueError) as info:
        validate_axis_document(doc)
    assert message in str(info.value)


def test_a_wrong_result_keeps_no_figures():
    r = axis_schema.make_axis_result(
        "fast", "sum", "float32", (4, 8), 1, read_bytes=128, write_bytes=16,
        floor_cold_us=3.0, floor_batch_us=2.0, cold_us=5.0, batch_us=4.0,
        batch=2, reps=30, correct=False)
    assert (r["cold_us"], r["batch_us"], r["gbps"], r["pct_floor"],
            r["batch"], r["reps"], r["correct"], r["unavailable"]) == \
        (None, None, None, None, 0, 0, False, None)
    r = axis_schema.make_axis_result(
        "cub", "sum", "float32", (4, 8), 1, read_bytes=128, write_bytes=16,
        floor_cold_us=3.0, floor_batch_us=2.0, correct=True,
        unavailable="ValueError: no")
    assert r["correct"] is None and r["unavailable"] == "ValueError: no"


def test_case_labels_and_columns():
    r = {"op": "argmax", "shape": [32, 1 << 17], "axis": 1}
    assert axis_schema.case_label(r) == "argmax (32, 2^17) axis 1"
    assert axis_schema.shape_label([1024, 1000], 0) == "(2^10, 1000) axis 0"
    assert axis_schema.shape_label([5], 0) == "(5,) axis 0"
    assert [axis_schema.column_of(m) for m in (
        "fast", "cub", "sequential", "torch.amin", "cupy.argmax",
        "cupy.argmax[cub]")] == ["fast", "cub", "sequential", "torch",
                                 "cupy", "cupy[cub]"]


# ---------------------------------------------------------------------------
# The report and the plot


def test_the_report_has_a_row_per_case_and_a_column_per_timed_method():
    doc = axis_document()
    lines = axes.format_axes(doc).splitlines()
    assert lines[0].startswith("Along an axis on synthetic device")
    assert "reduction cub, routine cub" in lines[1]
    header = lines[lines.index("float32") + 1].split()
    assert header[:7] == ["case", "floor", "µs", "fast", "torch", "cupy",
                          "cupy[cub]"]
    rows = [line for line in lines if line.startswith(("sum (", "argmax ("))]
    assert len(rows) == len(axes.AXIS_CASES)
    assert rows[0].split()[-2:] == ["95%", f"{95 / 92:.2f}×"]
    # torch's worst case: (2^24, 4) axis 1, at 50% of its floor
    fast, torch = (float(cell.replace(",", ""))
                   for cell in rows[0].split()[6:8])
    assert torch / fast == pytest.approx(95 / 50, rel=1e-3)
    notes = [line for line in lines if line.startswith("  not available")]
    assert notes == [f"  not available: {m}: {REFUSAL.format(m)}"
                     for m in OURS[1:]]


def test_the_report_says_wrong_and_unavailable_cells():
    def outcome(method, dtype, shape, axis):
        if method == "cupy.sum[cub]" and shape == (4, 1 << 24):
            return "TypeError: planted"
        if method == "torch.sum" and axis == 0:
            return None
        return default_outcome(method, dtype, shape, axis)
    text = axes.format_axes(axis_document(outcome))
    row = next(line for line in text.splitlines()
               if line.startswith("sum (4, 2^24) axis 0"))
    # case (5 words), floor, fast, torch, cupy, cupy[cub], %, speed
    cells = row.split()
    assert (cells[7], cells[9]) == ("WRONG", "n/a") and len(cells) == 12
    assert "  not available: cupy.sum[cub]: TypeError: planted" in text
    assert "  WRONG: torch.sum on sum (2^12, 2^12) axis 0" in text


@needs_matplotlib
def test_plot_axes_draws_the_shares_of_the_floor(tmp_path):
    doc = axis_document(dtypes=("float32", "float16"))
    path = tmp_path / "axis.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    png = tmp_path / "axis.png"
    fig = plot.plot_axes(path, path=png)
    assert png.read_bytes().startswith(PNG_MAGIC)
    first, second = fig.axes
    assert first.get_title() == "float32" and second.get_title() == "float16"
    bars = {c.get_label(): [b.get_width() for b in c.patches]
            for c in first.containers}
    assert list(bars) == ["fast", "torch", "cupy", "cupy[cub]"]
    assert bars["fast"] == pytest.approx([FAST_PCT] * len(axes.AXIS_CASES))
    assert bars["torch"][0] == pytest.approx(50.0)
    assert [t.get_text() for t in first.get_yticklabels()][-1] == \
        "argmax (32, 2^17) axis 1"
    assert "synthetic device" in fig.get_suptitle()


@needs_matplotlib
def test_plot_axes_refuses_a_document_with_nothing_timed():
    doc = axis_document(lambda m, d, s, a: "ValueError: none")
    with pytest.raises(ValueError, match="no timed result"):
        plot.plot_axes(doc)


# ---------------------------------------------------------------------------
# The check of a result on the host


@pytest.mark.parametrize("op, dtype, rtol", [
    ("sum", "float32", 4 * 2.0 ** -23), ("sum", "float16", 4 * 2.0 ** -10),
    ("sum", "bfloat16", 4 * 2.0 ** -7), ("mean", "int32", 4 * 2.0 ** -52),
    ("sum", "int8", 0.0), ("argmax", "float32", 0.0),
    ("max", "float64", 0.0), ("any", "complex64", 0.0),
    ("sum", "complex64", 4 * 2.0 ** -23)])
def test_the_tolerance_is_exact_or_a_few_ulps_of_the_result(op, dtype, rtol):
    assert axes.tolerance(op, dtype) == rtol


def test_the_reference_is_numpys_along_the_axis_floats_in_float64():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = axes.reference_along(a, "sum", 1)
    assert got.dtype == np.float64 and got.tolist() == [6, 22, 38]
    assert axes.reference_along(a, "argmax", 0).tolist() == [2, 2, 2, 2]
    assert axes.result_dtype("sum", "int8") == np.int64
    assert axes.result_dtype("argmax", "float16") == np.int64


def test_matches():
    ref = np.array([1.0, np.nan, 3.0])
    assert axes.matches(np.array([1.0, np.nan, 3.0], np.float32), ref, 0.0)
    assert not axes.matches(np.array([1.0, 2.0, 3.0]), ref, 0.0)
    assert axes.matches(np.array([1.0, np.nan, 3.0000001]), ref, 1e-6)
    assert not axes.matches(np.array([1.0, np.nan, 3.001]), ref, 1e-6)
    assert not axes.matches(np.array([1.0, np.nan]), ref, 1e-6)
    assert axes.matches(np.array([2, 0]), np.array([2, 0], np.int64), 0.0)
    assert not axes.matches(np.array([2, 1]), np.array([2, 0]), 0.0)


# ---------------------------------------------------------------------------
# run_axes on a fake CuPy


def test_run_axes_on_the_fake_device(fake_axis_device):
    cupy = fake_axis_device
    doc = axes.run_axes(dtypes=["float32", "int32"], shapes=SMALL,
                        progress=False, seed=3)
    validate_axis_document(doc)
    assert doc["software"] == {
        "numpy": np.__version__, "cupy": "13.6.0", "torch": None,
        "cupy_accelerators": {"reduction": [], "routine": []}}
    assert doc["floor"] == {f"empty_{way}_us": FAKE_EMPTY_MS[way] * 1e3
                            for way in ("cold", "batch")}
    results = doc["results"]
    expected = [(dtype, case.op or "sum", list(case.shape), case.axis, m)
                for dtype in ("float32", "int32") for case in SMALL
                for m in (*OURS, *axis_peers(case.op or "sum"))]
    assert [(r["dtype"], r["op"], r["shape"], r["axis"], r["method"])
            for r in results] == expected
    for r in results:
        column = axis_schema.column_of(r["method"])
        if r["method"] in OURS[1:]:
            assert r["unavailable"] == REFUSAL.format(r["method"])
        elif column == "torch":
            assert r["unavailable"].startswith("not importable (")
        else:
            assert r["correct"] is True, r
            # every timed call behind the holder: the fake clock's time
            assert r["batch_us"] == pytest.approx(FAKE_CALL_MS[column] * 1e3)
            assert r["cold_us"] == pytest.approx(FAKE_CALL_MS[column] * 1e3)
            assert MIN_REPS <= r["reps"] <= MAX_REPS and r["batch"] >= 1
    # CUB's variant ran with CuPy's accelerators on, the other without,
    # and the setting is back as it was
    assert {entry for entry in cupy.log if entry[0].startswith("cupy.")} == {
        ("cupy.sum", "own"), ("cupy.sum", "cub"), ("cupy.argmax", "own"),
        ("cupy.argmax", "cub")}
    assert cupy.accelerators == {"reduction": [], "routine": []}
    # nothing waits for the device while the stream is held
    held = False
    for entry in cupy.log:
        if entry[0] in ("hold", "release"):
            assert held == (entry[0] == "release")
            held = entry[0] == "hold"
        elif held:
            assert entry[0].startswith(("cupy.", "cudareduce.", "copy")), \
                entry
    # one holder, on the one stream; the copy probe at each input's bytes
    assert cupy.holds == [cupy.stream]
    assert sorted(p["bytes"] for p in doc["probes"]) == sorted(
        {math.prod(c.shape) * size for c in SMALL for size in (4,)})
    fixed, rate = FAKE_READ
    for p in doc["probes"]:
        assert p["read_cold_us"] == pytest.approx(fixed * 1e3
                                                  + p["bytes"] / (rate * 1e3))
        assert p["copy_cold_us"] == pytest.approx(FAKE_CALL_MS["copy"] * 1e3)
    assert ("copy", doc["probes"][0]["bytes"]) in cupy.log
    text = axes.format_axes(doc)
    assert "fake" not in text and "float32" in text and "int32" in text


def test_run_axes_reports_a_wrong_method_untimed(fake_axis_device,
                                                 monkeypatch):
    import cudareduce
    right = cudareduce.sum

    def off_by_one(x, *, axis, method="fast"):
        return right(x, axis=axis, method=method) + 1
    monkeypatch.setattr(cudareduce, "sum", off_by_one)
    doc = axes.run_axes(shapes=SMALL[:1], progress=False, seed=1)
    fast = next(r for r in doc["results"] if r["method"] == "fast")
    assert fast["correct"] is False and fast["batch_us"] is None
    cupy = next(r for r in doc["results"] if r["method"] == "cupy.sum")
    assert cupy["correct"] is True
    assert "WRONG: fast on sum (1000, 37) axis 1" in axes.format_axes(doc)


def test_run_axes_refuses_bad_arguments(fake_axis_device):
    with pytest.raises(ValueError, match="unsupported op"):
        axes.run_axes("median", progress=False)
    with pytest.raises(ValueError, match="dtypes: expected distinct"):
        axes.run_axes(dtypes=["int8", "int8"], progress=False)
    with pytest.raises(ValueError, match="shapes: expected"):
        axes.run_axes(shapes=[((4, 8), 2)], progress=False)
    with pytest.raises(ValueError, match="shapes: no case"):
        axes.run_axes(shapes=[], progress=False)


@pytest.mark.parametrize("methods, peers, wanted", [
    (["fast"], False, lambda op: ["fast"]),
    (["fast", "cub"], True, lambda op: ["fast", "cub", *axis_peers(op)]),
    (["cub", "fast", "cupy.sum"], True,
     lambda op: ["fast", "cub"] + (["cupy.sum"] if op == "sum" else [])),
    (None, False, lambda op: list(OURS)),
    (["fast", "cupy.argmax[cub]"], True,
     lambda op: ["fast"] + (["cupy.argmax[cub]"] if op == "argmax"
                            else []))])
def test_run_axes_times_the_contenders_asked_for(fake_axis_device, methods,
                                                 peers, wanted):
    """`methods` chooses ours (in our order) and peers by name; naming
    no peer keeps every peer of each case's op unless `peers` is False;
    a peer named for one op times nothing in another op's case."""
    doc = axes.run_axes(shapes=SMALL, progress=False, seed=1,
                        methods=methods, peers=peers)
    validate_axis_document(doc)
    for case in SMALL:
        op = case.op or "sum"
        got = [r["method"] for r in doc["results"]
               if (r["op"], tuple(r["shape"]), r["axis"])
               == (op, case.shape, case.axis)]
        assert got == wanted(op), (case, got)


@pytest.mark.parametrize("methods, peers, message", [
    (["fast", "bogus"], True, "unknown method 'bogus'"),
    (["torch.median"], True, "unknown method 'torch.median'"),
    ([], True, "methods: empty list"),
    (["fast", "torch.sum"], False, "peers named in methods, but "
                                   "peers=False")])
def test_run_axes_refuses_methods_of_no_case(fake_axis_device, methods,
                                             peers, message):
    with pytest.raises(ValueError, match=message):
        axes.run_axes(shapes=SMALL, progress=False, methods=methods,
                      peers=peers)


def test_run_axes_needs_cupy(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr(axes, "device_info", lambda: {"ordinal": 0})
    with pytest.raises(ImportError, match="the --axis mode needs CuPy"):
        axes.run_axes(shapes=SMALL[:1], progress=False)


def test_a_dtype_no_library_holds_is_unavailable_everywhere(
        fake_axis_device):
    # bfloat16 lives in PyTorch, which does not import here
    doc = axes.run_axes(dtypes=["bfloat16"], shapes=SMALL[:1],
                        progress=False, seed=2)
    why = "neither CuPy nor PyTorch holds bfloat16 on the device here"
    assert [r["unavailable"] for r in doc["results"]] == \
        [why] * (len(OURS) + 3)
    assert len(doc["probes"]) == 1      # the floor is measured all the same
