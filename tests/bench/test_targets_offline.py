"""benchmarks/targets.py, the project's acceptance targets, on hand-made
``--peers`` and ``--host`` documents, synthetic ladder documents and the
``--counters`` document of a recorded profile."""
from __future__ import annotations

import json

import pytest

from support.bench_data import (COMPARISON_CUB_SPEED, COMPARISON_FLOOR_SHARE,
                                HOST_AXIS_SPEED, comparison, counters_document, document,
                                host_document, row, synthetic_document,
                                synthetic_result)
from support.targets_script import by_what, targets
from cudareduce.bench import counters, host, peers
from cudareduce.bench.names import ladder_methods


LATENCY = "float(cudareduce.sum(x)) / torch.sum(x).item()"


SPEED = "fast / cub speed, back to back"
FLOOR = "floor / fast time, back to back"
BIG = 1 << 28
#: The fast / cub bound at each size, as the module docstring states it.
BOUNDS = {1 << 20: ">= 1.50x", 1 << 22: ">= 1.30x", 1 << 24: ">= 1.05x",
          1 << 26: ">= 1.00x", 1 << 28: ">= 1.00x"}


def _at(dtype, n):
    return f"{dtype} n = 2^{n.bit_length() - 1}"


def _fast_us(dtype, n):
    """comparison()'s fast, back to back, at (dtype, n)."""
    return peers.time_of(comparison()["results"], "fast", dtype, n,
                         "batch_us")


def test_peers_targets_are_on_back_to_back_times_for_each_dtype():
    rows = by_what(targets.peers_targets(comparison()))
    # fast / cub at every size, the floor's share from 2^24, per dtype;
    # then the int32 and latency targets
    floor = f"float(cudareduce.sum(x)) / {peers.LAUNCH_POLL_FLOOR}"
    assert list(rows) == [
        what for dtype in peers.COMPARE_DTYPES for n in peers.COMPARE_SIZES
        for what in ([f"{SPEED}, {_at(dtype, n)}"]
                     + [f"{FLOOR}, {_at(dtype, n)}"] * (n >= 1 << 24))] + [
        "fast int32 / fast float32 GB/s, cold, n = 2^28",
        f"{LATENCY}, cupy x, n = 1024", f"{floor}, cupy x, n = 1024",
        f"{LATENCY}, torch x, n = 1024", f"{floor}, torch x, n = 1024"]
    # comparison()'s cold times differ by method (cold, fast / cub is 0.96x
    # at 2^28): these are back to back
    for dtype in peers.COMPARE_DTYPES:
        for n in peers.COMPARE_SIZES:
            assert rows[f"{SPEED}, {_at(dtype, n)}"] == pytest.approx(
                (COMPARISON_CUB_SPEED[n], BOUNDS[n], True))
            if n >= 1 << 24:
                assert rows[f"{FLOOR}, {_at(dtype, n)}"] == pytest.approx(
                    (COMPARISON_FLOOR_SHARE, ">= 0.95x", True))
    assert rows["fast int32 / fast float32 GB/s, cold, n = 2^28"] == \
        pytest.approx((1.0, ">= 0.95x", True))
    assert rows[f"{LATENCY}, cupy x, n = 1024"] == pytest.approx(
        (9 / 23, "<= 0.50x", True))
    assert rows[f"{LATENCY}, torch x, n = 1024"] == pytest.approx(
        (10 / 23, "<= 0.50x", True))
    assert rows[f"{floor}, cupy x, n = 1024"] == pytest.approx(
        (9 / 7, "<= 1.50x", True))
    assert rows[f"{floor}, torch x, n = 1024"] == pytest.approx(
        (10 / 7, "<= 1.50x", True))


COMPLEX = ("complex64", "complex128")


def _cold_gbps_ratio(made, dtype, op="sum"):
    results = made["results"]
    return (peers.gbps_of(results, "fast", dtype, BIG, "cold_us", op=op)
            / peers.gbps_of(results, "fast", "float32", BIG, "cold_us"))


def test_the_targets_of_other_dtypes_named():
    """A comparison of dtypes outside COMPARE_DTYPES (--peers --dtype
    complex64,complex128): fast / cub >= 1.00 at every size, no floor
    rows (stated for COMPARE_DTYPES), each dtype's sum against float32's
    timed besides; no int32 row without int32."""
    made = comparison(dtypes=COMPLEX, cub_us={("complex64", 1 << 20): 1.0})
    rows = by_what(targets.peers_targets(made))
    assert [what for what in rows if not what.startswith(LATENCY)
            and "launch + poll" not in what] == [
        f"{SPEED}, {_at(dtype, n)}" for dtype in COMPLEX
        for n in peers.COMPARE_SIZES] + [
        f"fast {dtype} / fast float32 GB/s, cold, n = 2^28"
        for dtype in COMPLEX]
    assert rows[f"{SPEED}, complex128 n = 2^20"] == pytest.approx(
        (COMPARISON_CUB_SPEED[1 << 20], ">= 1.00x", True))
    # cub's 1 µs beats fast: missed, against 1.00x, not 1.50x
    value, bound, met = rows[f"{SPEED}, complex64 n = 2^20"]
    assert (bound, met) == (">= 1.00x", False) and value < 1.0
    for dtype in COMPLEX:
        assert rows[f"fast {dtype} / fast float32 GB/s, cold, n = 2^28"] \
            == pytest.approx((_cold_gbps_ratio(made, dtype), ">= 0.95x",
                              True))
    fast = peers.time_of(made["results"], "fast", "complex128", BIG,
                         "batch_us")
    slow = comparison(dtypes=COMPLEX,
                      fast_us={("complex128", BIG): 2 * fast})
    assert by_what(targets.peers_targets(slow))[
        "fast complex128 / fast float32 GB/s, cold, n = 2^28"][2] is False
    # another op of them: its GB/s against the float32 sum, fast / cub
    made = comparison(op="max", dtypes=COMPLEX)
    rows = by_what(targets.peers_targets(made))
    assert list(rows) == [
        f"fast {dtype} max / fast float32 sum GB/s, cold, n = 2^28"
        for dtype in COMPLEX] + [
        f"fast / cub speed, back to back, {dtype} max n = "
        f"2^{n.bit_length() - 1}"
        for dtype in COMPLEX for n in peers.COMPARE_SIZES]


@pytest.mark.parametrize("dtype, n, bound", [
    ("float16", 1 << 20, 1.5), ("int8", 1 << 22, 1.3),
    ("float64", 1 << 24, 1.05), ("int32", 1 << 26, 1.0),
    ("float32", 1 << 28, 1.0)])
def test_fast_over_cub_bound_by_size(dtype, n, bound):
    fast, what = _fast_us(dtype, n), f"{SPEED}, {_at(dtype, n)}"
    for speed, met in ((bound - 0.01, False), (bound + 0.01, True)):
        rows = by_what(targets.peers_targets(
            comparison(cub_us={(dtype, n): fast * speed})))
        assert rows[what] == pytest.approx((speed, f">= {bound:.2f}x", met))


@pytest.mark.parametrize("share, met", [(0.94, False), (0.96, True)])
def test_the_floor_target_is_from_2_24(share, met):
    # the floor of int8 at 2^24, back to back: 2 µs + 16 MiB at 3,200 GB/s
    rows = by_what(targets.peers_targets(comparison(fast_us={
        ("int8", 1 << 24): 7.24288 / share,
        ("int8", 1 << 22): 3.31072 / share})))
    assert rows[f"{FLOOR}, int8 n = 2^24"] == pytest.approx(
        (share, ">= 0.95x", met))
    # none below 2^24
    assert f"{FLOOR}, int8 n = 2^22" not in rows
    assert [what for what in rows if what.startswith(FLOOR)] == [
        f"{FLOOR}, {_at(dtype, n)}" for dtype in peers.COMPARE_DTYPES
        for n in (1 << 24, 1 << 26, 1 << 28)]


@pytest.mark.parametrize("change, what", [
    ({"cub_us": {("int8", 1 << 20): 3.0}}, f"{SPEED}, int8 n = 2^20"),
    ({"fast_us": {("float64", 1 << 26): 300.0}},
     f"{FLOOR}, float64 n = 2^26"),
    ({"fast_us": {("int32", BIG): 400.0}},
     "fast int32 / fast float32 GB/s, cold, n = 2^28"),
    ({"ours_cupy": 12.0}, f"{LATENCY}, cupy x, n = 1024"),
    ({"launch_poll": 5.0}, "float(cudareduce.sum(x)) / "
     "launch + poll floor (C, one-thread kernel), torch x, n = 1024"),
])
def test_a_missed_target_is_marked(change, what):
    value, _, met = by_what(targets.peers_targets(comparison(**change)))[what]
    assert value is not None and met is False


def test_a_wrong_row_gives_no_figure():
    rows = by_what(targets.peers_targets(
        comparison(wrong_cub_at=("float16", 1 << 26))))
    assert rows[f"{SPEED}, float16 n = 2^26"] == (None, ">= 1.00x", None)
    # fast's figure stands: the floor's share has one
    assert rows[f"{FLOOR}, float16 n = 2^26"][2] is True
    assert rows[f"{SPEED}, float16 n = 2^24"][2] is True
    assert rows[f"{SPEED}, float32 n = 2^26"][2] is True


def test_host_targets():
    rows = by_what(targets.host_targets(host_document()))
    at = "float32 n = 2^28"
    # cupy has no target
    assert list(rows) == [f"cudareduce / {host.NUMPY_CALL} (speed), {at}",
                          f"cudareduce / {host.TORCH_CALL} (speed), {at}",
                          f"cudareduce / pinned copy (GB/s), {at}"]
    assert list(rows.values()) == [
        pytest.approx((7.5, ">= 4.00x", True)),
        pytest.approx((7.0, ">= 4.00x", True)),
        pytest.approx(((1 << 30) / 0.02 / 1e9 / 55, ">= 0.70x", True))]
    missed = by_what(targets.host_targets(host_document(ours_ms=40.0,
                                                        pinned_gbps=100.0)))
    assert [met for _, _, met in missed.values()] == [False, False, False]


def test_host_targets_without_our_figure():
    rows = targets.host_targets(host_document(ours_correct=False))
    assert [(t.value, t.met) for t in rows] == [(None, None)] * 3


def _axis_what(dtype, n, axis):
    mib = "4" if n == 1 << 20 else "1,024"
    return (f"cudareduce / numpy.sum(a, axis={axis}) (speed), {dtype} "
            f"n = {'2^20' if n == 1 << 20 else '2^28'} ({mib} MiB)")


def test_host_targets_along_axes():
    # a document of before the axis calls: the whole calls' targets alone
    assert len(targets.host_targets(host_document())) == 3
    rows = by_what(targets.host_targets(host_document(axis_speeds={
        ("float32", 1 << 20, 0): 1.2, ("int32", 1 << 28, 1): 4.5})))
    # after the whole calls' three: dtype, axis, size
    assert list(rows)[3:] == [_axis_what(dtype, n, axis)
                              for dtype in ("float32", "int32")
                              for axis in (1, 0)
                              for n in (1 << 20, 1 << 28)]
    assert rows[_axis_what("float32", 1 << 20, 1)] == \
        pytest.approx((HOST_AXIS_SPEED, ">= 1.00x", True))
    assert rows[_axis_what("float32", 1 << 20, 0)] == \
        pytest.approx((1.2, ">= 1.00x", True))
    assert rows[_axis_what("float32", 1 << 28, 0)] == \
        pytest.approx((HOST_AXIS_SPEED, ">= 4.00x", True))
    assert rows[_axis_what("int32", 1 << 28, 1)] == \
        pytest.approx((4.5, ">= 4.00x", True))
    # slower than numpy from 1 MiB, or under 4x at 1 GiB: missed
    missed = by_what(targets.host_targets(host_document(axis_speeds={
        ("float32", 1 << 20, 0): 0.9, ("int32", 1 << 28, 1): 3.9})))
    assert [what for what, (_, _, met) in missed.items() if not met] == [
        _axis_what("float32", 1 << 20, 0), _axis_what("int32", 1 << 28, 1)]


def test_host_axis_targets_without_a_figure():
    document = host_document(axis_speeds={})
    results = document["results"]
    # ours WRONG at float32 2^20 axis 1; numpy's axis 0 missing at int32
    # 2^28; int32 2^20 axis 1 missing both
    next(r for r in results if r["call"] == host.CUDAREDUCE_AXIS_CALLS[1]
         and r["dtype"] == "float32" and r["n"] == 1 << 20)["correct"] = False
    document["results"] = [r for r in results if not (
        r["dtype"] == "int32" and (
            (r["n"] == 1 << 28 and r["call"] == host.NUMPY_AXIS_CALLS[0])
            or (r["n"] == 1 << 20 and r["call"] in (
                host.CUDAREDUCE_AXIS_CALLS[1], host.NUMPY_AXIS_CALLS[1]))))]
    rows = by_what(targets.host_targets(document))
    assert [what for what, (value, _, met) in rows.items()
            if value is None and met is None] == [
        _axis_what("float32", 1 << 20, 1), _axis_what("int32", 1 << 20, 1),
        _axis_what("int32", 1 << 28, 0)]


def test_host_axis_targets_at_the_measured_sizes_and_1_gib():
    # sizes under 1 MiB and those that make no rows of 1024 have no
    # target; 1 GiB has one, measured or not
    document = host_document(axis_speeds={})
    document["results"] = [r for r in document["results"]
                           if r["n"] == 1 << 20 and r["dtype"] == "int32"]
    document["results"] += [{**r, "n": n} for r in document["results"]
                             for n in (1 << 18, (1 << 18) - 1, 1 << 24,
                                       (1 << 20) + 1)]
    rows = targets.host_axis_targets(document)
    assert [(t.what.split("int32 n = ")[1], t.limit, t.met)
            for t in rows] == [
        (size, limit, met) for _ in (1, 0)
        for size, limit, met in (("2^18 (1 MiB)", 1.0, True),
                                 ("2^20 (4 MiB)", 1.0, True),
                                 ("2^24 (64 MiB)", 1.0, True),
                                 ("2^28 (1,024 MiB)", 4.0, None))]


def test_format_targets():
    # float32 2^28: fast 400 µs, cub 380, the floor 337.54 (2 µs + 1 GiB
    # at 3,200 GB/s)
    rows = targets.peers_targets(comparison(
        fast_us={("float32", BIG): 400.0}, cub_us={("float32", BIG): 380.0},
        wrong_cub_at=("int8", 1 << 22)))
    lines = targets.format_targets(rows).splitlines()
    assert lines[0].split() == ["target", "value", "bound", "met"]
    cells = {line.split("  ")[0]: line.split() for line in lines[2:]}
    assert cells[f"{SPEED}, float32 n = 2^28"][-4:] == \
        ["0.95x", ">=", "1.00x", "NO"]
    assert cells[f"{FLOOR}, float32 n = 2^28"][-4:] == \
        ["0.84x", ">=", "0.95x", "NO"]
    assert cells[f"{SPEED}, int8 n = 2^22"][-5:] == \
        ["-", ">=", "1.30x", "no", "figure"]
    assert cells[f"{SPEED}, float32 n = 2^20"][-4:] == \
        ["2.00x", ">=", "1.50x", "yes"]
    assert cells[f"{FLOOR}, int8 n = 2^24"][-4:] == \
        ["0.98x", ">=", "0.95x", "yes"]


# ---------------------------------------------------------------------------
# The ladder


LADDER_WHAT = ("interleaved_divergent / multi_element cold time (speedup of "
               "steps 1 to 7)")


def test_the_ladder_targets_steps_1_and_7():
    steps = ladder_methods()
    assert (targets.FIRST_STEP, targets.SEVENTH_STEP) == (steps[0],
                                                          steps[6])
    assert targets.LADDER_SPEEDUP == 6.0


def test_the_ladder_target_on_the_synthetic_run():
    # float32 2^16..2^24 and int32 2^22; the default size, 2^22, measured
    # for both
    got = targets.ladder_targets(synthetic_document())
    expected = {}
    for dtype in ("float32", "int32"):
        first = synthetic_result("interleaved_divergent", dtype, 1 << 22)
        seventh = synthetic_result("multi_element", dtype, 1 << 22)
        speedup = first["cold_us"] / seventh["cold_us"]
        expected[f"{LADDER_WHAT}, {dtype} n = 2^22, 256 threads"] = \
            pytest.approx((speedup, ">= 6.00x", speedup >= 6.0))
    assert by_what(got) == expected


def _steps(first_us, seventh_us, n=1 << 22, dtype="float32", threads=256):
    """Rows of steps 1 and 7 at n, back to back both 10 µs (so that only
    their cold times tell them apart); None: WRONG."""
    return [row(method, us, correct=us is not None, n=n, dtype=dtype,
                threads=threads, batch_us=10.0 if us is not None else None)
            for method, us in (("interleaved_divergent", first_us),
                               ("multi_element", seventh_us))]


@pytest.mark.parametrize("default_n, at, speedup, met", [
    # 10x at 2^20, the default, counts; 5x at 2^22, the largest, does not
    (1 << 20, "2^20", 10.0, True),
    # The default size not measured: 10x at 2^20 does not count, 5x at
    # 2^22, the largest, does
    (1 << 26, "2^22", 5.0, False),
])
def test_the_ladder_target_is_cold_at_the_default_size_else_the_largest(
        default_n, at, speedup, met):
    doc = document(_steps(100.0, 10.0, n=1 << 20) + _steps(50.0, 10.0))
    doc["timing"]["default_n"] = default_n
    assert by_what(targets.ladder_targets(doc)) == {
        f"{LADDER_WHAT}, float32 n = {at}, 256 threads": pytest.approx(
            (speedup, ">= 6.00x", met))}


def test_the_ladder_target_for_each_dtype_and_threads_there():
    doc = document(_steps(70.0, 10.0) + _steps(30.0, 10.0, dtype="int32")
                   + _steps(90.0, 10.0, threads=512)
                   + _steps(300.0, 10.0, n=1 << 10))
    assert by_what(targets.ladder_targets(doc)) == {
        f"{LADDER_WHAT}, float32 n = 2^22, 256 threads": pytest.approx(
            (7.0, ">= 6.00x", True)),
        f"{LADDER_WHAT}, int32 n = 2^22, 256 threads": pytest.approx(
            (3.0, ">= 6.00x", False)),
        f"{LADDER_WHAT}, float32 n = 2^22, 512 threads": pytest.approx(
            (9.0, ">= 6.00x", True))}


@pytest.mark.parametrize("rows", [
    _steps(None, 10.0), _steps(70.0, None), _steps(70.0, 10.0)[:1],
    _steps(70.0, 10.0)[1:]])
def test_a_wrong_or_missing_step_gives_no_figure(rows):
    (target,) = targets.ladder_targets(document(rows))
    assert target.value is None and target.met is None


def test_a_ladder_document_without_results_has_no_figure():
    (target,) = targets.ladder_targets(document([]))
    assert target.what == f"{LADDER_WHAT}, no results"
    assert target.met is None


# ---------------------------------------------------------------------------
# --counters


def test_the_counters_claims_are_check_ideas():
    doc = counters_document()
    got = targets.counters_targets(doc)
    assert got == [targets.Claim(claim, ok)
                   for claim, ok in counters.check_ideas(doc)]
    assert len(got) == len(counters.IDEAS) and all(c.met for c in got)


def _without(method):
    doc = counters_document()
    doc["rows"] = [r for r in doc["rows"] if r["method"] != method]
    return doc


def test_a_claim_whose_methods_were_not_profiled_has_no_figure():
    got = targets.counters_targets(_without("sequential"))
    # sequential is in the first claim and the third
    assert [c.met for c in got] == [True, None, None]
    assert got[0].what.startswith("interleaved_divergent: instructions")
    assert got[1].what == (
        "interleaved_bank_conflict against sequential "
        "(l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum): "
        "not profiled")
    assert got[2].what == ("first_add against sequential "
                           "(launch__grid_size): not profiled")


def _broken_grid():
    doc = counters_document()
    for r in doc["rows"]:
        if (r["method"], r["pass"]) == ("first_add", 0):
            r["launch__grid_size"] += 1
    return doc


def test_format_claims_their_figures_in_their_words():
    rows = targets.counters_targets(_broken_grid())
    assert [c.met for c in rows] == [True, True, False]
    lines = targets.format_targets(rows).splitlines()
    assert lines[0].split() == ["target", "value", "bound", "met"]
    # the value and bound columns are blank: the claim states both
    assert [line.rsplit(None, 1) for line in lines[2:]] == [
        [claim.what, met] for claim, met in zip(rows, ["yes", "yes", "NO"])]
    assert lines[4].startswith(
        "first_add: grid 8,193 is exactly 0.5x sequential's 16,384 ")


def _write(tmp_path, document, name="doc.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def _without_axis_call(call: str) -> dict:
    """host_document() with the axis calls, but for `call` at int32
    2^28."""
    doc = host_document(axis_speeds={})
    doc["results"] = [r for r in doc["results"] if not (
        r["call"] == call and r["dtype"] == "int32" and r["n"] == 1 << 28)]
    return doc


def _default_at(doc: dict, n: int) -> dict:
    """`doc` with its default size planted at `n` (the synthetic run's is
    2^22, where its fixed costs keep step 7 under 6x step 1)."""
    doc["timing"]["default_n"] = n
    return doc


@pytest.mark.parametrize("document, status", [
    (comparison(), 0), (comparison(ours_torch=12.0), 1),
    (comparison(wrong_cub_at=("int32", 1 << 20)), 1),
    (comparison(fast_us={("float16", 1 << 24): 20.0}), 1),
    (comparison(dtypes=COMPLEX), 0), (comparison(op="prod"), 0),
    (host_document(), 0), (host_document(numpy_ms=60.0), 1),
    (host_document(ours_correct=False), 1),
    (host_document(axis_speeds={}), 0),
    (host_document(axis_speeds={("int32", 1 << 20, 0): 0.95}), 1),
    (host_document(axis_speeds={("float32", 1 << 28, 1): 3.5}), 1),
    (_without_axis_call(host.NUMPY_AXIS_CALLS[0]), 1),
    (_default_at(synthetic_document(), 1 << 24), 0),
    (_default_at(synthetic_document(
        wrong=[("multi_element", "float32", 1 << 24)]), 1 << 24), 1),
    (document(_steps(50.0, 10.0)), 1),
    (counters_document(), 0), (_broken_grid(), 1),
    (_without("first_add"), 1)])
def test_exit_status(document, status, tmp_path, capsys):
    assert targets.main([_write(tmp_path, document)]) == status
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["target", "value", "bound", "met"]
    assert ("NO" in out or "no figure" in out) == (status == 1)


def _counters_with(change):
    doc = counters_document()
    change(doc)
    return json.dumps(doc)


@pytest.mark.parametrize("content, why", [
    ("{not json", "Expecting property name"),
    (json.dumps({"results": []}), "schema: missing"),
    (json.dumps({"device": {}, "cudareduce_version": "0.1.0",
                 "results": []}), "schema: missing"),
    (json.dumps({"results": {"device": {}}, "latency_us": {}}),
     "schema: missing"),
    (json.dumps({**comparison(), "dtypes": "complex64"}),
     "dtypes: expected a list of dtype names, got 'complex64'"),
    (json.dumps({**comparison(), "dtypes": []}), "dtypes: expected a"),
    ("[]", "not a ladder, --counters, --peers, --host, --axis or --exact "
              "document"),
    (json.dumps({"rows": []}), "not a ladder"),
    (_counters_with(lambda d: d.update(rows={})),
     "rows: expected a list, got dict"),
    (_counters_with(lambda d: d["rows"][3].pop("launch__grid_size")),
     "rows[3]: expected a method, its pass and the counters"),
    (_counters_with(lambda d: d["rows"][0].update(
        {"smsp__inst_executed.sum": "32,948,224"})), "rows[0]: "),
    (_counters_with(lambda d: d["rows"][0].update({"pass": True})),
     "rows[0]: ")])
def test_not_a_document_exits_2(content, why, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert targets.main([str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"targets: {path}: ") and why in err
    assert out == ""
    assert targets.main([str(tmp_path / "missing.json")]) == 2
