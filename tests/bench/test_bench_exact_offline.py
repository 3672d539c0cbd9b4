"""cudareduce.bench.exact, .exact_schema and .exact_reference without a
GPU: the exact reference against Python's integers, the ``--exact``
document's check on a synthetic document and its breakages, the report,
``run_exact`` on a fake CuPy (its checks catching a wrong answer), and the
command line.  (The project's targets on the same documents:
test_targets_exact_offline.py.)"""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from support.axis_data import fake_axis_device  # noqa: F401 - a fixture
from support.exact_bench_data import (FAKE_MS, exact_document,
                                      fake_exact_device,  # noqa: F401
                                      fake_sum, method_us)
from cudareduce import bench
from cudareduce.bench import cli, exact
from cudareduce.bench.exact_reference import (array_sum, exact_sum,
                                              round_exact)
from cudareduce.bench.exact_schema import (EXACT_DATA_KINDS, EXACT_METHODS,
                                           exact_groups,
                                           speed_over,
                                           validate_exact_document)

SMALL = (1000, 4096)


# ---------------------------------------------------------------------------
# The reference


@pytest.mark.parametrize("dtype, low, high", [
    (np.float64, -1000, 1000), (np.float64, -8, 9), (np.float32, -140, 120),
    (np.float16, -20, 12)])
def test_array_sum_is_the_integers_sum(dtype, low, high):
    rng = np.random.default_rng(44)
    x = (rng.standard_normal(30011)
         * np.exp2(rng.integers(low, high, 30011))).astype(dtype)
    x = x[np.isfinite(x)]
    assert array_sum(x) == exact_sum(x.tolist())
    if dtype == np.float64:
        assert float(array_sum(x)) == math.fsum(x)


def test_array_sum_of_extremes_and_chunks(monkeypatch):
    x = np.array([1e308, 1.0, -1e308, 5e-324, -0.0, -1.5e-323,
                  2.2250738585072014e-308, -2.0 ** -1022 * 1.75])
    assert array_sum(x) == exact_sum(x.tolist())
    assert array_sum(np.zeros(0)) == 0
    # several chunks, the exponents of each its own
    monkeypatch.setattr("cudareduce.bench.exact_reference._CHUNK", 7)
    y = np.concatenate([x, np.float64([3.0, 2.0 ** 600, -2.0 ** 600])])
    assert array_sum(y) == exact_sum(y.tolist())


@pytest.mark.parametrize("kind", list(exact.EXACT_DATA))
@pytest.mark.parametrize("dtype", exact.EXACT_TAKES)
def test_data_of_both_signs_in_its_range_sums_in_range(kind, dtype):
    rng = np.random.default_rng(1)
    x = exact.exact_data(rng, 1 << 16, dtype, kind)
    assert x.dtype.name == dtype
    x = x.astype(np.float64)
    assert np.isfinite(x).all() and (x > 0).any() and (x < 0).any()
    if dtype in ("float32", "float64"):
        assert len(np.unique(np.abs(x))) > 60000    # every significand bit
    _, exponents = np.frexp(x[x != 0])
    low, high = exact.EXACT_DATA[kind][1][dtype]
    # the normal significands reach a few binades beyond the scale's
    assert exponents.max() - exponents.min() >= high - low
    # the sum of 2^28 of them, of random signs, within 16 standard
    # deviations of 0, is in range
    top = float(np.max(np.abs(x)))
    spread = top * math.sqrt(float(np.mean((x / top) ** 2)) * (1 << 28))
    assert math.isfinite(spread)
    _, overflowed = round_exact(array_sum(np.float64([16 * spread])), dtype)
    assert not overflowed


def test_the_schema_names_the_kinds_of_data():
    assert tuple(exact.EXACT_DATA) == EXACT_DATA_KINDS


# ---------------------------------------------------------------------------
# The document


def test_the_synthetic_document_is_valid():
    doc = exact_document()
    validate_exact_document(doc)
    validate_exact_document(json.loads(json.dumps(doc)))
    group = exact_groups(doc["results"])[("float32", "normal", 1 << 28)]
    assert set(group) == set(EXACT_METHODS)
    nbytes = 4 << 28
    assert speed_over(group, "exact", "fast") == pytest.approx(
        method_us("fast", nbytes) / method_us("exact", nbytes))
    assert group["exact"]["gbps"] == pytest.approx(
        nbytes / (method_us("exact", nbytes) * 1e3))


def _broken(change):
    doc = exact_document()
    change(doc)
    return doc


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(kind="axis"), "kind: expected 'exact'"),
    (lambda d: d.update(schema=2), "schema: expected 1"),
    (lambda d: d["software"].pop("gpu_to_gpu_cccl"), "software"),
    (lambda d: d["results"][0].update(method="cupy.sum"), "method"),
    (lambda d: d["results"][0].update(bytes=12), "is not n x itemsize"),
    (lambda d: d["results"][1].update(pct_floor=50.0), "pct_floor"),
    (lambda d: d["results"][1].update(gbps=1.0), "gbps"),
    (lambda d: d["results"][2].update(floor_batch_us=9.0), "read probe's"),
    (lambda d: d["results"][3].update(correct=None), "null only for an"),
    (lambda d: d["results"][3].update(correct=False), "no figures"),
    (lambda d: d["results"].append(copy.deepcopy(d["results"][0])),
     "duplicate entry"),
    (lambda d: d["probes"].pop(0), "no probe at its"),
    (lambda d: d["probes"].reverse(), "sorted by bytes"),
])
def test_breakages_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        validate_exact_document(_broken(change))


def test_an_unavailable_or_wrong_result_has_no_figures():
    def outcome(method, dtype, kind, n):
        if method == "cub_gpu_to_gpu":
            return {"unavailable": "no harness", "batch_us": 3.0}
        if method == "cub":
            return {"correct": False, "batch_us": 3.0, "batch": 4}
        return None
    doc = exact_document(outcome=outcome)
    validate_exact_document(doc)
    group = exact_groups(doc["results"])[("float64", "wide", 1 << 20)]
    assert group["cub_gpu_to_gpu"]["correct"] is None
    assert group["cub"]["batch_us"] is None and group["cub"]["batch"] == 0
    assert speed_over(group, "exact", "cub_gpu_to_gpu") is None
    report = exact.format_exact(doc)
    assert "not available: CUB gpu_to_gpu: no harness" in report
    assert "WRONG: cub on float64 wide 2^20" in report


def test_the_report_has_a_row_per_size_and_the_ratios():
    doc = exact_document()
    report = exact.format_exact(doc)
    assert "CUB gpu_to_gpu from CCCL 3.2.1" in report
    for dtype in ("float32", "float64"):
        for kind in ("normal", "wide"):
            assert f"\n{dtype}, {kind} data\n" in report
    nbytes = 8 << 28
    ratio = method_us("fast", nbytes) / method_us("exact", nbytes)
    row = [line for line in report.splitlines()
           if line.startswith("2^28")][-2]       # float64, normal data
    assert f"{100 * ratio:.0f}%" in row
    g2g = method_us("cub_gpu_to_gpu", nbytes) / method_us("exact", nbytes)
    assert f"{g2g:.2f}×" in row


# ---------------------------------------------------------------------------
# The run, on the fake device


def test_run_exact_times_each_method_on_the_one_stream(fake_exact_device):
    doc = exact.run_exact(["float32", "float64"], SMALL, "harness.so",
                          progress=False, seed=3)
    assert {r["data"] for r in doc["results"]} == set(exact.EXACT_DATA)
    validate_exact_document(doc)
    assert doc["software"]["gpu_to_gpu_cccl"] == "3.2.1"
    for r in doc["results"]:
        assert r["correct"] is True, r
        assert r["batch_us"] == pytest.approx(FAKE_MS[r["method"]] * 1e3)
    calls = {entry[1] for entry in fake_exact_device.log
             if entry[0] == "cudareduce.sum"}
    assert calls == {"fast", "exact", "cub"}
    assert any(entry[0] == "cub_gpu_to_gpu"
               for entry in fake_exact_device.log)
    assert ("hold", True) in fake_exact_device.log


def test_without_the_harness_gpu_to_gpu_says_how(fake_exact_device):
    doc = exact.run_exact(["float32"], [1000], progress=False,
                          data=["spread"], seed=3)
    group = exact_groups(doc["results"])[("float32", "spread", 1000)]
    assert "benchmarks/cub_gpu_to_gpu.cu" in group["cub_gpu_to_gpu"][
        "unavailable"]
    assert doc["software"]["gpu_to_gpu_cccl"] is None


def test_gpu_to_gpu_takes_no_float16(fake_exact_device):
    doc = exact.run_exact(["float16"], [1000], "harness.so",
                          progress=False, data=["wide"], seed=3)
    group = exact_groups(doc["results"])[("float16", "wide", 1000)]
    assert "float32 and float64 only" in group["cub_gpu_to_gpu"][
        "unavailable"]
    assert group["exact"]["correct"] is True


@pytest.mark.parametrize("method", ["exact", "fast", "cub"])
def test_a_wrong_answer_is_caught(fake_exact_device, monkeypatch, method):
    # exact: the float32 sum of the data, not its exact sum rounded once
    # (off in the last bits); the others: off by the sum's magnitude.
    monkeypatch.setattr("cudareduce.sum",
                        fake_sum(fake_exact_device, wrong=method))
    doc = exact.run_exact(["float32"], [4096], progress=False,
                          data=["normal"], seed=3)
    validate_exact_document(doc)
    verdicts = {r["method"]: r["correct"] for r in doc["results"]}
    assert verdicts[method] is False
    assert all(v is True for m, v in verdicts.items()
               if m not in (method, "cub_gpu_to_gpu"))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="dtypes"):
        exact.run_exact(["int32"], [10], progress=False)
    with pytest.raises(ValueError, match="dtypes"):
        exact.run_exact(["float32", "float32"], [10], progress=False)
    with pytest.raises(ValueError, match="sizes"):
        exact.run_exact(["float32"], [0], progress=False)
    with pytest.raises(ValueError, match="data"):
        exact.run_exact(["float32"], [10], progress=False, data=["odd"])


def test_a_missing_harness_is_an_os_error(fake_axis_device):
    with pytest.raises(OSError):
        exact.GpuToGpu("/nonexistent/cub_gpu_to_gpu.so")


def test_the_package_exports_run_exact():
    assert bench.run_exact is exact.run_exact
    assert bench.format_exact is exact.format_exact


# ---------------------------------------------------------------------------
# The command line


@pytest.mark.parametrize("argv, message", [
    (["--gpu-to-gpu", "x.so"], "--gpu-to-gpu and --exact-data go with"),
    (["--exact-data", "wide"], "--gpu-to-gpu and --exact-data go with"),
    (["--exact", "--exact-data", "wide,odd"], "--exact-data: expected"),
    (["--exact", "--axis"], "--exact combines with"),
    (["--exact", "--op", "prod"], "--exact combines with"),
    (["--exact", "--n", "2^20"], "--exact combines with"),
    (["--exact", "--dtype", "int32"], "exact=True takes"),
])
def test_the_command_line_refuses(capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_the_command_line_runs_and_writes(fake_exact_device, tmp_path,
                                          capsys):
    path = tmp_path / "exact.json"
    assert cli.main(["--exact", "--sizes", "1000", "--dtype", "float64",
                     "--gpu-to-gpu", "h.so", "--seed", "1", "--exact-data",
                     "wide,normal", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Exact sums on" in out and "float64, wide data" in out
    assert out.index("wide data") < out.index("normal data")
    validate_exact_document(json.loads(path.read_text()))


def test_the_markdown_table_holds_the_normal_data_and_the_ratios():
    from cudareduce.bench.figures import exact_markdown

    def outcome(method, dtype, kind, n):
        if method == "cub_gpu_to_gpu" and dtype == "float64":
            return {"correct": False}
        return None
    doc = exact_document(outcome=outcome)
    table = exact_markdown(doc, sizes=(1 << 20, 1 << 28)).splitlines()
    assert [row.split(" | ")[0] for row in table[2:]] == [
        "| float32 2^20", "| float32 2^28", "| float64 2^20",
        "| float64 2^28"]
    nbytes = 4 << 28
    cells = table[3].strip("|").split("|")
    assert cells[3].strip() == f"{method_us('exact', nbytes):,.1f}"
    assert cells[5].strip() == (
        f"{method_us('fast', nbytes) / method_us('exact', nbytes):.2f}×")
    # a WRONG gpu_to_gpu has no time and no ratio
    assert table[5].strip("|").split("|")[4].strip() == "WRONG"
    assert table[5].rstrip("|").split("|")[-1].strip() == "-"
    # the wide data, on which exact is three times slower, is left out
    assert len(exact_markdown(doc).splitlines()) == 2 + 6
