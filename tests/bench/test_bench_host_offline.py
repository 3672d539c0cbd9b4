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
                                HOST_AXIS_SPEED, SYNTHETIC_DEVICE,
                                fake_device_arrays, host_document)
from cudareduce.bench import axes, data, schema
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
    # along axes where n makes rows of 1024: not at 1000
    assert [(r["dtype"], r["n"], r["call"]) for r in results] == [
        (dtype, n, call) for dtype in host.HOST_DTYPES
        for n, calls in ((1000, WHOLE), (1 << 12, WHOLE + ALONG))
        for call in calls]
    # ours along each axis of the array as (4, 1024), axis 1 first, each
    # a warm-up, a pilot and the reps, per dtype
    along = fake_device_arrays.axis_calls
    assert set(along) == {("sum", (4, 1024), 1), ("sum", (4, 1024), 0)}
    runs = [axis for i, (_, _, axis) in enumerate(along)
            if i == 0 or along[i - 1][2] != axis]
    assert runs == [1, 0] * len(host.HOST_DTYPES)
    assert len(along) >= len(runs) * (2 + host.HOST_MIN_REPS)
    for r in results:
        assert r["correct"] is True and r["median_ms"] > 0
        nbytes = r["n"] * np.dtype(r["dtype"]).itemsize
        assert r["gbps"] == pytest.approx(nbytes / (r["median_ms"] * 1e6))
    # ours is cudareduce.sum with the default method: a warm-up, a pilot,
    # then at least HOST_MIN_REPS timed calls per figure
    calls = fake_device_arrays.sum_calls
    assert set(calls) == {(cudareduce.DEFAULT_METHOD,
                           cudareduce.DEFAULT_THREADS)}
    assert len(calls) >= (4 + 2 * 2) * (2 + host.HOST_MIN_REPS)
    assert host.format_host(document).startswith("Host arrays on fake GPU")


#: The whole calls of a run without the peers, and the along-axis ones.
WHOLE = (host.CUDAREDUCE_CALL, host.NUMPY_CALL)
ALONG = (host.CUDAREDUCE_AXIS_CALLS[1], host.NUMPY_AXIS_CALLS[1],
         host.CUDAREDUCE_AXIS_CALLS[0], host.NUMPY_AXIS_CALLS[0])


def test_the_axis_calls_are_named_as_the_whole_ones():
    assert ALONG == ("cudareduce.sum(a, axis=1)", "numpy.sum(a, axis=1)",
                     "cudareduce.sum(a, axis=0)", "numpy.sum(a, axis=0)")
    assert host.AXIS_CALLS == set(ALONG)
    assert [host.times_axes(n) for n in (1000, 1024, 1 << 20, 3000,
                                         3 * 1024)] == \
        [False, True, True, False, True]


def test_run_host_checks_each_call_exactly(fake_device_arrays, no_peers):
    fake_device_arrays.wrong.add(cudareduce.DEFAULT_METHOD)
    document = host.run_host([1000, 2048], ["int32"], progress=False)
    assert [(r["n"], r["call"], r["correct"])
            for r in document["results"]] == [
        (1000, host.CUDAREDUCE_CALL, False), (1000, host.NUMPY_CALL, True),
        (2048, host.CUDAREDUCE_CALL, False), (2048, host.NUMPY_CALL, True)] \
        + [(2048, call, call.startswith("numpy")) for call in ALONG]


@pytest.mark.parametrize("dtype", host.HOST_DTYPES)
def test_the_axis_check_is_exact_on_the_data(dtype):
    # The data's sums along either axis are exact, float32's too: NumPy's
    # own sums pass; one element's worth off (the least, 1) fails, and so
    # do the other axis's sums, another dtype and a NaN.
    a = data.random_array(np.random.default_rng(7), 1 << 20, dtype)
    rows = a.reshape(-1, host.HOST_ROW)
    for axis in host.HOST_AXES:
        reference = axes.reference_along(rows, "sum", axis)
        got = np.sum(rows, axis=axis)
        assert host.axis_correct(got, reference, dtype)
        off = got.copy()
        off[np.argmax(np.abs(got))] += 1
        assert not host.axis_correct(off, reference, dtype)
        assert not host.axis_correct(np.sum(rows, axis=1 - axis), reference,
                                     dtype)
        assert not host.axis_correct(got.astype(np.float64), reference,
                                     dtype)
    if dtype == "float32":
        got[0] = np.nan
        assert not host.axis_correct(got, reference, dtype)


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


def test_host_ratios_leave_the_axis_calls_out():
    assert host.host_ratios(host_document(axis_speeds={})) == \
        host.host_ratios(host_document())


def test_axis_speeds():
    document = host_document(axis_speeds={("int32", 1 << 20, 0): 0.8})
    assert host.has_axis_calls(document)
    assert not host.has_axis_calls(host_document())
    speeds = host.axis_speeds(document)
    assert [(s.dtype, s.n, s.axis) for s in speeds] == [
        (dtype, n, axis) for dtype in ("float32", "int32")
        for n in (1 << 20, 1 << 28) for axis in (1, 0)]
    assert [s.speed for s in speeds] == pytest.approx(
        [HOST_AXIS_SPEED] * 5 + [0.8] + [HOST_AXIS_SPEED] * 2)
    assert speeds[0].ours["call"] == host.CUDAREDUCE_AXIS_CALLS[1]
    assert speeds[0].numpy["call"] == host.NUMPY_AXIS_CALLS[1]
    # none where a call is WRONG or missing
    document["results"] = [r for r in document["results"]
                           if not (r["dtype"] == "float32" and r["n"] == 1 << 20
                                   and r["call"] == host.NUMPY_AXIS_CALLS[0])]
    next(r for r in document["results"]
         if r["call"] == host.CUDAREDUCE_AXIS_CALLS[1]
         and r["n"] == 1 << 28)["correct"] = False
    found = host.axis_speed(document, "float32", 1 << 20, 0)
    assert found.numpy is None and found.speed is None
    assert host.axis_speed(document, "float32", 1 << 28, 1).speed is None
    assert host.axis_speed(document, "float32", 1 << 22, 1) == \
        host.AxisSpeed("float32", 1 << 22, 1, None, None)
    assert host.axis_speeds(host_document()) == []


def test_format_host_along_axes():
    document = host_document(axis_speeds={("float32", 1 << 20, 0): 0.8})
    next(r for r in document["results"]
         if r["call"] == host.NUMPY_AXIS_CALLS[0] and r["dtype"] == "int32"
         and r["n"] == 1 << 28)["correct"] = False
    lines = host.format_host(document).splitlines()
    # the whole calls' tables and ratios as before, the axis calls apart
    assert lines[:len(WHOLE_REPORT)] == WHOLE_REPORT
    title = "float32 along axis k of a as (n // 1024, 1024) (median wall ms)"
    at = lines.index(title)
    assert re.split(r"\s{2,}", lines[at + 1]) == [
        "n", "MiB", "axis", "cudareduce ms", "numpy ms",
        "cudareduce / numpy (speed)"]
    assert [line.split() for line in lines[at + 3:at + 7]] == [
        ["2^20", "4", "1", "0.16", "0.78", "5.00×"],
        ["2^20", "4", "0", "0.98", "0.78", "0.80×"],
        ["2^28", "1,024", "1", "40.00", "200.00", "5.00×"],
        ["2^28", "1,024", "0", "40.00", "200.00", "5.00×"]]
    at = lines.index(title.replace("float32", "int32"))
    assert lines[at + 6].split() == ["2^28", "1,024", "0", "40.00", "WRONG",
                                     "-"]
    assert len(lines) == at + 7


#: format_host() of host_document(), a document without the axis calls.
WHOLE_REPORT = host.format_host(host_document()).splitlines()
