"""cudareduce.bench.host without a GPU: ``run_host`` on the fake device
(the pinned copy from the host-copy probe, whole calls checked exactly),
and the ``--host`` report and its plain ratios on a hand-made document.
(The project's targets on the same figures: test_targets_offline.py.)"""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import cudareduce
from support.bench_data import (FAKE_DRIVER, FAKE_HOST_COPY_GBPS,  # noqa: F401
                                SYNTHETIC_DEVICE, fake_device_arrays,
                                host_document)
from cudareduce.bench import schema
from cudareduce.bench import host


@pytest.fixture
def no_peers(monkeypatch) -> None:
    """PyTorch and CuPy do not import: the calls are ours and NumPy's."""
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)


def test_run_host_on_the_fake_device(fake_device_arrays, no_peers):
    document = host.run_host([1000, 1 << 12], progress=False, seed=2)
    assert list(document) == ["device", "date", "pinned_gbps", "results"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", document["date"])
    assert all(list(r) == ["call", "dtype", "n", "median_ms", "gbps",
                           "correct"] for r in document["results"])
    # the pinned copy: the host-copy probe, once, over HOST_COPY_BYTES
    assert fake_device_arrays.probe_calls == [
        ("host_copy", host.HOST_COPY_BYTES, 1, 3, 10, "cold", 1)]
    assert document["pinned_gbps"] == pytest.approx(FAKE_HOST_COPY_GBPS)
    # the device and its software, as a ladder document has them
    assert document["device"] == schema.describe_device(
        {**fake_device_arrays.device_info(), "driver": FAKE_DRIVER})
    results = document["results"]
    assert [(r["dtype"], r["n"], r["call"]) for r in results] == [
        (dtype, n, call) for dtype in host.HOST_DTYPES
        for n in (1000, 1 << 12)
        for call in (host.CUDAREDUCE_CALL, host.NUMPY_CALL)]
    for r in results:
        assert r["correct"] is True and r["median_ms"] > 0
        nbytes = r["n"] * np.dtype(r["dtype"]).itemsize
        assert r["gbps"] == pytest.approx(nbytes / (r["median_ms"] * 1e6))
    # ours is cudareduce.sum with the default method: a warm-up, a pilot,
    # then at least HOST_MIN_REPS timed calls per figure
    calls = fake_device_arrays.sum_calls
    assert set(calls) == {(cudareduce.DEFAULT_METHOD,
                           cudareduce.DEFAULT_THREADS)}
    assert len(calls) >= 4 * (2 + host.HOST_MIN_REPS)
    assert host.format_host(document).startswith("Host arrays on fake GPU")


def test_run_host_checks_each_call_exactly(fake_device_arrays, no_peers):
    fake_device_arrays.wrong.add(cudareduce.DEFAULT_METHOD)
    document = host.run_host([1000], ["int32"], progress=False)
    assert [(r["call"], r["correct"]) for r in document["results"]] == [
        (host.CUDAREDUCE_CALL, False), (host.NUMPY_CALL, True)]


def test_host_ratios_at_the_largest_float32_n():
    ratios = host.host_ratios(host_document())
    assert ratios.n == 1 << 28
    assert ratios.speed == pytest.approx({host.NUMPY_CALL: 150 / 20,
                                         host.TORCH_CALL: 140 / 20,
                                         host.CUPY_CALL: 120 / 20})
    assert ratios.pinned == pytest.approx((1 << 30) / 0.02 / 1e9 / 55)


def test_host_ratios_without_our_figure():
    assert host.host_ratios(host_document(ours_correct=False)) is None


def test_format_host():
    share = (1 << 30) / 0.02 / 1e9 / 55
    text = host.format_host(host_document())
    lines = text.splitlines()
    assert lines[0].startswith(f"Host arrays on {SYNTHETIC_DEVICE['name']}: ")
    assert lines[0].endswith("pinned host-to-device copy 55.0 GB/s")
    assert "float32 (GB/s)" in lines and "int32 (GB/s)" in lines
    header = lines[lines.index("float32 (GB/s)") + 1].split()
    assert header == ["n", "MiB", host.CUDAREDUCE_CALL, host.NUMPY_CALL,
                      host.TORCH_CALL, host.CUPY_CALL]
    assert lines[lines.index("float32 (GB/s)") + 4].split()[:3] == \
        ["2^28", "1,024", f"{(1 << 30) / 0.02 / 1e9:,.1f}"]
    ratios = lines[lines.index("Ratios, float32 n = 2^28 (1 GiB)"):]
    cells = {line.rsplit(None, 1)[0]: line.split()[-1] for line in ratios[3:]}
    assert cells == {
        f"cudareduce / {host.NUMPY_CALL} (speed)": "7.50×",
        f"cudareduce / {host.TORCH_CALL} (speed)": "7.00×",
        f"cudareduce / {host.CUPY_CALL} (speed)": "6.00×",
        "cudareduce / pinned copy (GB/s)": f"{share:.2f}×"}
    # the measured ratios, no targets: those are the project's
    # (benchmarks/targets.py)
    for word in ("target", ">=", "met"):
        assert word not in text


def test_format_host_without_our_figure_has_no_ratios():
    text = host.format_host(host_document(ours_correct=False))
    assert "WRONG" in text and "Ratios" not in text
