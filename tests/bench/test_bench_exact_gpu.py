"""cudareduce.bench.exact on a real GPU: ``run_exact`` at small sizes of
every dtype exact=True takes and every kind of data, ours checked
(exact=True bit for bit), the document valid, and the command line's
``--exact`` end to end.  (CUB's
gpu_to_gpu needs the harness, built against CCCL >= 3.1, which the
toolkit here does not have: its column says so.)

Marked ``gpu``: skipped, with the reason, where no CUDA device is usable.
"""
from __future__ import annotations

import json

import pytest

import cudareduce
from cudareduce import _cudareduce
from cudareduce.bench import cli, exact
from cudareduce.bench.exact_schema import (EXACT_METHODS, exact_groups,
                                           validate_exact_document)

pytestmark = pytest.mark.gpu

#: A warp and one, a block's vectors and some, several blocks.
SMALL = (33, 4096 + 5, (1 << 20) + 3)


def test_run_exact_checks_and_times_ours():
    doc = exact.run_exact(exact.EXACT_TAKES, SMALL, progress=False)
    validate_exact_document(doc)
    assert doc["device"]["name"] == _cudareduce.device_info()["name"]
    assert doc["cudareduce_version"] == cudareduce.__version__
    groups = exact_groups(doc["results"])
    assert list(groups) == [(d, k, n) for d in exact.EXACT_TAKES
                            for k in exact.EXACT_DATA for n in SMALL]
    for group in groups.values():
        assert list(group) == list(EXACT_METHODS)
        for method in ("fast", "exact", "cub"):
            r = group[method]
            assert r["correct"] is True, r
            assert r["batch_us"] > 0 and r["cold_us"] > 0
        assert "no harness given" in group["cub_gpu_to_gpu"]["unavailable"]


def test_the_command_line_writes_the_document(tmp_path, capsys):
    path = tmp_path / "exact.json"
    assert cli.main(["--exact", "--sizes", "2^16", "--exact-data", "wide",
                     "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "float32, wide data" in out and "float64, wide data" in out
    doc = json.loads(path.read_text())
    validate_exact_document(doc)
    assert all(r["correct"] is not False for r in doc["results"])
