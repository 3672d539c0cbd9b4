"""cudareduce.bench.axes on a real GPU: ``run_axes`` on small cases, every
contender that ran checked against NumPy, the document valid, and the
command line's ``--axis`` end to end.

Marked ``gpu``: skipped, with the reason, where no CUDA device is usable.
The GPU machine has CuPy and PyTorch: the peers are there.
"""
from __future__ import annotations

import json

import pytest

import cudareduce
from cudareduce import _cudareduce
from cudareduce.bench import axes, cli
from cudareduce.bench.axis_schema import (axis_peers, case_groups,
                                          column_of, is_ours,
                                          validate_axis_document)

pytestmark = pytest.mark.gpu

#: Small cases of each kind: rows long and short, each axis, an odd
#: extent, an argmax.
SMALL = [((4097, 33), 1), ((33, 4097), 0), ((256, 256), 1), ((256, 256), 0),
         ((64, 3001), 1, "argmax")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _check(doc, dtypes, cases, op="sum"):
    """The document of `cases` in `dtypes`: valid, every contender there,
    fast correct and timed everywhere, our other methods correct or
    refusing to reduce along an axis, every figure sensible."""
    validate_axis_document(doc)
    assert doc["device"]["name"] == _cudareduce.device_info()["name"]
    assert doc["cudareduce_version"] == cudareduce.__version__
    assert doc["software"]["cupy"] and doc["software"]["torch"]
    floor = doc["floor"]
    assert 0 < floor["empty_batch_us"] <= floor["empty_cold_us"] < 100
    groups = case_groups(doc["results"])
    assert list(groups) == [
        (dtype, (case[2:] or (op,))[0], tuple(case[0]), case[1])
        for dtype in dtypes for case in cases]
    for (dtype, case_op, shape, axis), group in groups.items():
        assert set(group) == {*cudareduce.methods(), *axis_peers(case_op)}
        fast = group["fast"]
        assert fast["correct"] is True, fast
        assert fast["batch_us"] > 0 and fast["cold_us"] > 0
        # Near the floor, not past it by much: at these small sizes the
        # probes' launches weigh, so only a unit slip (x1000) is caught.
        assert 0 < fast["pct_floor"] < 300, fast
        for method, r in group.items():
            if is_ours(method):
                assert r["correct"] is True or "along an axis" in (
                    r["unavailable"] or ""), r
    # The probes run beside the shared phase's other workers, so one figure
    # may come out several times too slow (a read probe's 10.1 us against
    # its copy's 4.8 us, on an H200): only a unit slip is caught here.
    for p in doc["probes"]:
        assert p["read_cold_us"] > floor["empty_cold_us"] * 0.5
        assert 0.1 < p["copy_cold_us"] / p["read_cold_us"] < 10, p


def test_run_axes_on_small_cases_checks_every_contender():
    doc = axes.run_axes(shapes=SMALL, progress=False, seed=17)
    _check(doc, ["float32"], SMALL)
    for (_, op, _, _), group in case_groups(doc["results"]).items():
        for method, r in group.items():
            if is_ours(method):
                continue
            # PyTorch and CuPy (both ways) run every float32 case; their
            # sums of exact data are NumPy's
            assert r["unavailable"] is None, r
            if op == "sum":
                assert r["correct"] is True, r
    text = axes.format_axes(doc)
    assert "WRONG: fast" not in text
    for label in ("sum (4097, 33) axis 1", "argmax (64, 3001) axis 1"):
        assert label in text


def test_run_axes_of_other_dtypes():
    cases = [((513, 65), 1), ((65, 513), 0)]
    dtypes = ["int8", "float16", "bfloat16", "complex64"]
    doc = axes.run_axes(dtypes=dtypes, shapes=cases, progress=False, seed=5)
    _check(doc, dtypes, cases)
    for r in doc["results"]:
        if r["dtype"] == "bfloat16" and column_of(r["method"]) != "torch" \
                and not is_ours(r["method"]):
            assert r["unavailable"] == "CuPy has no bfloat16", r


def test_run_axes_of_another_op():
    cases = [((1000, 37), 1), ((37, 1000), 0)]
    doc = axes.run_axes("max", shapes=cases, progress=False, seed=9)
    _check(doc, ["float32"], cases, op="max")


def test_cli_axis_writes_the_document_and_the_plot(tmp_path, capsys,
                                                   monkeypatch):
    pytest.importorskip("matplotlib")
    cases = [axes.AxisCase((2048, 48), 1), axes.AxisCase((48, 2048), 0),
             axes.AxisCase((32, 4096), 1, op="argmax")]
    monkeypatch.setattr(axes, "AXIS_CASES", tuple(cases))
    path, png = tmp_path / "axis.json", tmp_path / "axis.png"
    assert cli.main(["--axis", "--json", str(path), "--plot", str(png),
                     "--seed", "3"]) == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    _check(doc, ["float32"], [(c.shape, c.axis) + ((c.op,) if c.op else ())
                              for c in cases])
    assert png.read_bytes().startswith(PNG_MAGIC)
    out, err = capsys.readouterr()
    assert out.startswith(f"Along an axis on {doc['device']['name']}")
    assert "WRONG" not in err
