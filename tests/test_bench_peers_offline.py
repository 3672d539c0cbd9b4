"""cudareduce.bench.peers without a GPU: the ``--peers`` report and its
plain ratios, cold and back to back, on a hand-made comparison, and
``compare`` on the fake device.  (The project's targets on the same
figures: test_targets_offline.py.)"""
from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import cudareduce
import cudareduce.results as model
from bench_data import (COMPARISON_BATCH_GAIN, comparison,  # noqa: F401
                        fake_device)
from cudareduce.bench import peers
from cudareduce.document import Results

COLD = "cold"
B2B = "back to back"


def _what(other: str, timing: str, k: int) -> str:
    return f"fast / {other} GB/s, {timing}, float32 n = 2^{k}"


def test_ratios_are_fast_over_cub_and_each_peer_cold_and_back_to_back():
    ratios = dict(peers.comparison_ratios(comparison()))
    assert list(ratios) == [_what(other, timing, k)
                            for timing in (COLD, B2B)
                            for other in ("cub", "torch.sum", "cupy.sum")
                            for k in (20, 22, 28)]
    assert ratios[_what("cub", COLD, 20)] == pytest.approx(3.0)
    assert ratios[_what("cub", COLD, 22)] == pytest.approx(1.6)
    assert ratios[_what("cub", COLD, 28)] == pytest.approx(3000 / 2900)
    assert ratios[_what("torch.sum", COLD, 28)] == pytest.approx(3000 / 2610)
    # back to back: each method's own gain over its cold rate
    gain = COMPARISON_BATCH_GAIN
    assert ratios[_what("cub", B2B, 20)] == pytest.approx(
        3.0 * gain["fast"] / gain["cub"])
    assert ratios[_what("torch.sum", B2B, 28)] == pytest.approx(
        3000 / 2610 * gain["fast"] / gain["torch.sum"])
    # cupy.sum was not timed: no ratio
    assert ratios[_what("cupy.sum", COLD, 28)] is None
    assert ratios[_what("cupy.sum", B2B, 28)] is None


def test_a_wrong_row_gives_no_ratio():
    ratios = dict(peers.comparison_ratios(comparison(wrong_cub_at=1 << 22)))
    assert ratios[_what("cub", COLD, 22)] is None
    assert ratios[_what("cub", B2B, 22)] is None
    assert ratios[_what("cub", COLD, 20)] is not None


def test_ratio_and_gbps_of():
    results = comparison()["results"]
    assert peers.gbps_of(results, "fast", "int32", 1 << 28) == \
        pytest.approx(2950.0)
    assert peers.gbps_of(results, "fast", "int32", 1 << 28, "cold_us") == \
        pytest.approx(2950.0)
    assert peers.gbps_of(results, "fast", "int32", 1 << 28, "batch_us") == \
        pytest.approx(2950.0 * COMPARISON_BATCH_GAIN["fast"])
    assert peers.gbps_of(results, "fast", "int32", 1 << 28, "call_us") is None
    assert peers.gbps_of(results, "fast", "int32", 1 << 20) is None
    assert peers.gbps_of(results, "cupy.sum", "float32", 1 << 20) is None
    with pytest.raises(ValueError):
        peers.gbps_of(results, "fast", "int32", 1 << 28, "median_us")
    assert peers.ratio(3.0, 2.0) == 1.5
    assert peers.ratio(None, 2.0) is None and peers.ratio(3.0, None) is None
    assert peers.ratio(3.0, 0.0) is None


def test_format_comparison():
    made = comparison(fast_big=2800.0)
    text = peers.format_comparison(made)
    assert text.startswith(model.format_table(made["results"]) + "\n\n")
    assert "End to end, 1024 float32 elements" in text
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    assert lines[_what("cub", COLD, 28)].split()[-1] == f"{2800 / 2900:.2f}×"
    gain = COMPARISON_BATCH_GAIN["fast"] / COMPARISON_BATCH_GAIN["cub"]
    assert lines[_what("cub", B2B, 28)].split()[-1] == \
        f"{2800 / 2900 * gain:.2f}×"
    assert lines[_what("cupy.sum", COLD, 28)].split()[-1] == "-"
    assert lines["torch.sum(x).item()"].split()[-1] == "23.0"
    # the measured ratios, no targets: those are the project's
    # (benchmarks/targets.py)
    assert "Ratios (same run, same GPU)" in text
    assert lines["ratio"].split() == ["ratio", "value"]
    for word in ("target", ">=", "<=", "yes", "NO"):
        assert word not in text


def test_compare_on_the_fake_device(fake_device, monkeypatch):
    """fast, cub and the peers that load, float32 at each size and int32 at
    the largest, in one valid document, with the latencies."""
    sizes = (1 << 10, 1 << 12)
    monkeypatch.setattr(peers, "COMPARE_SIZES", sizes)
    asked = []

    def measure_latency(ordinal):
        asked.append(ordinal)
        return {peers.TORCH_ITEM: 20.0}
    monkeypatch.setattr(peers, "measure_latency", measure_latency)
    got = peers.compare(threads=128, progress=False, seed=3)
    assert list(got) == ["results", "latency_us"]
    assert type(got["results"]) is Results
    model.validate_document(got["results"])
    assert [(r["method"], r["dtype"], r["n"], r["threads"])
            for r in got["results"]["results"]] == [
        (m, dtype, n, 128) for dtype, ns in (("float32", sizes),
                                             ("int32", sizes[-1:]))
        for n in ns for m in ("fast", "cub", "torch.sum")]
    assert got["latency_us"] == {peers.TORCH_ITEM: 20.0} and asked == [0]
    # no peers: fast and cub only
    got = peers.compare(peers=False, progress=False)
    assert {r["method"] for r in got["results"]["results"]} == {"fast",
                                                                "cub"}


@pytest.fixture
def fixed_floor(monkeypatch):
    """The launch-plus-poll probe, which needs a GPU, at 7 µs."""
    monkeypatch.setattr(peers, "launch_poll_floor_us", lambda: 7.0)


def test_measure_latency_without_torch_and_cupy(monkeypatch, fixed_floor):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert peers.measure_latency(0) == {peers.LAUNCH_POLL_FLOOR: 7.0}


def test_launch_poll_floor_is_the_median_probe_in_us(monkeypatch):
    calls = []

    def time_probe(*args):
        calls.append(args)
        return [0.009, 0.007, 0.008]
    monkeypatch.setattr(peers._cudareduce, "time_probe", time_probe)
    assert peers.launch_poll_floor_us() == pytest.approx(8.0)
    assert calls == [("launch_poll", 0, 1, peers.LATENCY_WARMUP,
                      peers.LATENCY_REPS, "launch")]


def test_measure_latency_times_each_call_on_each_library(monkeypatch,
                                                         capsys,
                                                         fixed_floor):
    """Fake PyTorch and CuPy arrays of 1024 halves and quarters, our sum
    twice theirs, and a wall clock that takes a call's value for its µs:
    each figure is the call it names, on the device asked for."""
    log = []

    @contextlib.contextmanager
    def on(library, ordinal):
        log.append(("device", library, ordinal))
        yield

    def rand(n, device):
        log.append(("rand", n, device))
        return np.full(n, 0.5, np.float32)

    torch = SimpleNamespace(
        cuda=SimpleNamespace(is_available=lambda: True,
                             device=lambda o: on("torch", o)),
        rand=rand, sum=np.sum)
    cupy = SimpleNamespace(
        float32=np.float32, sum=np.sum,
        cuda=SimpleNamespace(Device=lambda o: on("cupy", o)),
        random=SimpleNamespace(
            random=lambda n, dtype: np.full(n, 0.25, dtype)))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(cudareduce, "sum", lambda x: 2 * np.sum(x))
    reps = []

    def wall_times(call, n):
        reps.append(n)
        value = call()
        return [value * 1e-6] * n, value
    monkeypatch.setattr(peers, "wall_times", wall_times)
    assert peers.measure_latency(1) == {
        peers.LAUNCH_POLL_FLOOR: 7.0,
        peers.TORCH_ITEM: pytest.approx(512.0),
        peers.OURS_ON_TORCH: pytest.approx(1024.0),
        peers.CUPY_FLOAT: pytest.approx(256.0),
        peers.OURS_ON_CUPY: pytest.approx(512.0)}
    assert list(peers.measure_latency(1)) == [
        peers.LAUNCH_POLL_FLOOR, peers.TORCH_ITEM, peers.OURS_ON_TORCH, peers.CUPY_FLOAT,
        peers.OURS_ON_CUPY]
    assert reps[:8] == [peers.LATENCY_WARMUP, peers.LATENCY_REPS] * 4
    assert log[:3] == [("device", "torch", 1), ("rand", 1024, "cuda:1"),
                       ("device", "cupy", 1)]

    def no_device(ordinal):
        raise RuntimeError("cudaErrorNoDevice")
    cupy.cuda.Device = no_device
    assert list(peers.measure_latency(1)) == [
        peers.LAUNCH_POLL_FLOOR, peers.TORCH_ITEM, peers.OURS_ON_TORCH]
    assert capsys.readouterr().err == (
        "cudareduce.bench: cupy latency skipped: cudaErrorNoDevice\n")
