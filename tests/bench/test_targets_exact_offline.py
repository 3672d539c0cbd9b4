"""benchmarks/targets.py on synthetic ``--exact`` documents: exact=True
against the plain fast sum from 2^24 and against CUB's gpu_to_gpu from
2^20, met and missed, a missing figure counted as missed, and the exit
status."""
from __future__ import annotations

import json

import pytest

from support.exact_bench_data import RATES, exact_document, method_us
from support.targets_script import by_what, targets

FAST = "exact / fast speed, back to back"
G2G = "exact / CUB gpu_to_gpu speed, back to back"


def _normal(labels):
    """Each label with the data the targets hold: 'float32 2^24' ->
    'float32 normal data 2^24'."""
    return [label.replace(" 2^", " normal data 2^").replace(
        " from", " normal data from") for label in labels]


def test_the_targets_on_the_synthetic_document():
    rows = targets.targets(exact_document())
    got = by_what(rows)
    # normal data alone: exact is three times slower on the wide data
    assert list(got) == _normal([
        f"{FAST}, float32 2^24", f"{FAST}, float32 2^28",
        f"{G2G}, float32 2^20", f"{G2G}, float32 2^24",
        f"{G2G}, float32 2^28",
        f"{FAST}, float64 2^24", f"{FAST}, float64 2^28",
        f"{G2G}, float64 2^20", f"{G2G}, float64 2^24",
        f"{G2G}, float64 2^28"])
    nbytes = 4 << 24
    assert got[f"{FAST}, float32 normal data 2^24"] == pytest.approx(
        (method_us("fast", nbytes) / method_us("exact", nbytes),
         ">= 0.90x", True))
    g2g = method_us("cub_gpu_to_gpu", 8 << 20) / method_us("exact", 8 << 20)
    assert got[f"{G2G}, float64 normal data 2^20"] == pytest.approx(
        (g2g, ">= 1.20x", g2g >= 1.2))
    assert all(row.met for row in rows), targets.format_targets(rows)


def test_a_slow_exact_misses(monkeypatch):
    monkeypatch.setitem(RATES, "exact", (4.0, 2.0e6))   # 2/3 of fast
    got = by_what(targets.targets(exact_document()))
    assert got[f"{FAST}, float32 normal data 2^28"][2] is False
    assert got[f"{G2G}, float32 normal data 2^28"][2] is False  # as g2g


def test_missing_figures_are_not_met():
    def outcome(method, dtype, kind, n):
        if method == "cub_gpu_to_gpu":
            return {"unavailable": "no harness given"}
        return None
    rows = targets.targets(exact_document(sizes=(1 << 20,),
                                          dtypes=("float32",),
                                          outcome=outcome))
    got = by_what(rows)
    assert got[f"{FAST}, float32 normal data from 2^24: not measured"] == (
        None, ">= 0.90x", None)
    assert got[f"{G2G}, float32 normal data 2^20"] == (None, ">= 1.20x",
                                                        None)
    assert got[f"{FAST}, float64 normal data from 2^24: not measured"][
        2] is None
    assert not any(row.met for row in rows)


def test_the_script_exits_by_the_verdict(tmp_path, capsys):
    path = tmp_path / "exact.json"
    path.write_text(json.dumps(exact_document()))
    assert targets.main([str(path)]) == 0
    assert f"{FAST}, float64 normal data 2^28" in capsys.readouterr().out
    broken = exact_document()
    broken["results"][0]["bytes"] = 3
    path.write_text(json.dumps(broken))
    assert targets.main([str(path)]) == 2
    assert "is not n x itemsize" in capsys.readouterr().err
