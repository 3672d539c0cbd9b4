"""benchmarks/targets.py on synthetic ``--axis`` documents: the floor's
shares, fast against the fastest peer on every case and against each peer
on its worst, met and missed, a missing figure counted as missed, and the
exit status."""
from __future__ import annotations

import json

import pytest

from support.axis_data import (FAST_PCT, PEER_PCT, PEER_WORST, axis_document,
                               default_outcome)
from support.targets_script import by_what, targets
from cudareduce.bench import axes
from cudareduce.bench.axis_schema import shape_label

FLOOR = "floor / fast time, back to back"


def _with(change):
    """The default outcome, but `change(method, dtype, shape, axis)` where
    it does not return ``...``."""
    def outcome(method, dtype, shape, axis):
        got = change(method, dtype, shape, axis)
        return default_outcome(method, dtype, shape, axis) \
            if got is Ellipsis else got
    return outcome


def test_the_issues_targets_are_met_on_the_default_document():
    rows = targets.targets(axis_document())
    assert all(row.met for row in rows), targets.format_targets(rows)
    got = by_what(rows)
    # the floor's shares, in the issue's order: 90% for the first six
    # cases, 80% for the rest
    floors = [what for what in got if what.startswith(FLOOR)]
    assert floors == [
        f"{FLOOR}, float32 sum (2^24, 4) axis 1",
        f"{FLOOR}, float32 sum (4, 2^24) axis 1",
        f"{FLOOR}, float32 sum (2^12, 2^12) axis 1",
        f"{FLOOR}, float32 sum (2^12, 2^12) axis 0",
        f"{FLOOR}, float32 sum (2^24, 4) axis 0",
        f"{FLOOR}, float32 sum (4, 2^24) axis 0",
        f"{FLOOR}, float32 sum (2^16, 2^10) axis 1",
        f"{FLOOR}, float32 sum (2^16, 2^10) axis 0",
        f"{FLOOR}, float32 sum (2^10, 2^16) axis 1",
        f"{FLOOR}, float32 sum (2^10, 2^16) axis 0",
        f"{FLOOR}, float32 argmax (32, 2^17) axis 1"]
    assert [got[what][1] for what in floors] == \
        [">= 0.90x"] * 6 + [">= 0.80x"] * 5
    assert all(got[what][0] == pytest.approx(FAST_PCT / 100)
               for what in floors)
    # fast against the fastest peer on every case: cupy with CUB there
    speed = "fast / fastest peer (cupy.sum[cub]) speed, back to back"
    assert got[f"{speed}, float32 sum (2^24, 4) axis 1"] == pytest.approx(
        (FAST_PCT / PEER_PCT["cupy[cub]"], ">= 1.00x", True))
    # on cupy[cub]'s worst case, cupy's own kernels are the fastest
    assert got["fast / fastest peer (cupy.sum) speed, back to back, "
               "float32 sum (2^10, 2^16) axis 0"] == pytest.approx(
        (FAST_PCT / PEER_PCT["cupy"], ">= 1.00x", True))
    assert got["fast / fastest peer (cupy.argmax[cub]) speed, back to "
               "back, float32 argmax (32, 2^17) axis 1"][2]
    # each peer on its worst case
    for peer, method in (("torch", "torch.sum"), ("cupy", "cupy.sum"),
                         ("cupy[cub]", "cupy.sum[cub]")):
        (shape, axis), pct = PEER_WORST[peer]
        label = f"sum {shape_label(shape, axis)}"
        what = (f"fast / {method} speed on {peer}'s worst case ({pct:.0f}% "
                f"of its floor), back to back, float32 {label}")
        assert got[what] == pytest.approx((FAST_PCT / pct, ">= 1.50x",
                                           True)), what
    assert len(rows) == 11 + 11 + 3


@pytest.mark.parametrize("change, what, value", [
    # fast at 85% where 90% is asked
    (lambda m, d, s, a: 85.0 if m == "fast" and s == (1 << 24, 4)
     and a == 1 else ..., f"{FLOOR}, float32 sum (2^24, 4) axis 1", 0.85),
    # at 79% where 80%
    (lambda m, d, s, a: 79.0 if m == "fast" and s[0] == 32 else ...,
     f"{FLOOR}, float32 argmax (32, 2^17) axis 1", 0.79),
    # torch faster than fast on one case
    (lambda m, d, s, a: 99.0 if m == "torch.sum" and s == (1 << 12, 1 << 12)
     and a == 0 else ..., "fast / fastest peer (torch.sum) speed, back to "
     "back, float32 sum (2^12, 2^12) axis 0", FAST_PCT / 99),
    # cupy's worst case not bad enough for a 1.5x lead
    (lambda m, d, s, a: 70.0 if m == "cupy.sum" and s == (4, 1 << 24)
     and a == 0 else ..., "fast / cupy.sum speed on cupy's worst case (70% "
     "of its floor), back to back, float32 sum (4, 2^24) axis 0",
     FAST_PCT / 70)])
def test_a_missed_target_is_marked(change, what, value):
    rows = by_what(targets.targets(axis_document(_with(change))))
    assert rows[what][0] == pytest.approx(value)
    assert rows[what][2] is False


def test_a_wrong_or_missing_figure_is_no_figure():
    # fast WRONG on one case: neither its floor nor its speed has a figure
    doc = axis_document(_with(lambda m, d, s, a: None if m == "fast"
                              and s == (1 << 16, 1 << 10) and a == 1
                              else ...))
    rows = by_what(targets.targets(doc))
    assert rows[f"{FLOOR}, float32 sum (2^16, 2^10) axis 1"] == \
        (None, ">= 0.80x", None)
    assert rows["fast / fastest peer (cupy.sum[cub]) speed, back to back, "
                "float32 sum (2^16, 2^10) axis 1"][0] is None
    # a case the document lacks: not measured
    cases = [c for c in axes.AXIS_CASES if c.shape != (4, 1 << 24)]
    rows = by_what(targets.targets(axis_document(cases=cases)))
    assert rows[f"{FLOOR}, float32 (4, 2^24) axis 1: not measured"] == \
        (None, ">= 0.90x", None)
    assert rows[f"{FLOOR}, float32 (4, 2^24) axis 0: not measured"] == \
        (None, ">= 0.90x", None)
    # no peer timed anywhere (no PyTorch): its worst case has no figure;
    # a case where no peer ran has no speed
    doc = axis_document(_with(lambda m, d, s, a: "not importable (planted)"
                              if m.startswith("torch.") or s[0] == 32
                              and m.startswith("cupy.") else ...))
    rows = by_what(targets.targets(doc))
    assert rows["fast / torch speed on torch's worst case, back to back, "
                "float32: torch not timed"] == (None, ">= 1.50x", None)
    assert rows["fast / fastest peer (none timed) speed, back to back, "
                "float32 argmax (32, 2^17) axis 1"] == (None, ">= 1.00x",
                                                         None)


def test_other_dtypes_are_held_to_the_floor_only():
    doc = axis_document(dtypes=("float16", "float32", "int8"))
    rows = targets.targets(doc)
    assert all(row.met for row in rows)
    whats = [row.what for row in rows]
    for dtype in ("float16", "int8"):
        mine = [w for w in whats if f" {dtype} " in w]
        assert len(mine) == len(targets.AXIS_FLOOR_SHARES)
        assert all(w.startswith(FLOOR) for w in mine)
    assert len(whats) == 3 * 11 + 11 + 3


def test_a_document_without_results_misses_everything():
    doc = axis_document(cases=[])
    rows = targets.targets(doc)
    assert len(rows) == 11 + 3 and not any(row.met for row in rows)


def _write(tmp_path, document):
    path = tmp_path / "axis.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("outcome, status", [
    (default_outcome, 0),
    (_with(lambda m, d, s, a: 50.0 if m == "fast" and s[0] == 32 else ...),
     1),
    (_with(lambda m, d, s, a: None if m == "fast" and s[0] == 32 else ...),
     1)])
def test_exit_status(outcome, status, tmp_path, capsys):
    assert targets.main([_write(tmp_path, axis_document(outcome))]) == status
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["target", "value", "bound", "met"]
    assert ("NO" in out or "no figure" in out) == (status == 1)


def test_a_broken_axis_document_exits_2(tmp_path, capsys):
    doc = axis_document()
    doc["results"][0]["pct_floor"] = 1.0
    assert targets.main([_write(tmp_path, doc)]) == 2
    err = capsys.readouterr().err
    assert "results[0].pct_floor: 1.0 is not 100 x" in err
