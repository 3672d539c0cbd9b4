"""cudareduce.bench.peers without a GPU: the ``--peers`` report, its
plain ratios and the floor, cold and back to back, at every dtype and size
of a hand-made comparison, and ``compare`` on the fake device.  (The
project's targets on the same figures: test_targets_offline.py.)"""
from __future__ import annotations

import contextlib
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import cudareduce
from cudareduce.bench import figures, names, schema
from support.bench_data import (COMPARISON_CUB_SPEED,  # noqa: F401
                                COMPARISON_FLOOR_SHARE, comparison,
                                fake_device)
from cudareduce.bench import peers
from cudareduce.bench.results import Results

BATCH, COLD = "batch_us", "cold_us"
#: comparison() with fast 10 µs and cub 24 µs back to back at float64 2^22
#: (cold: 12 and 26.4, torch.sum 28.8 and 30.24), cub WRONG at int8 2^28.
SET = ("float64", 1 << 22)
WRONG = ("int8", 1 << 28)


def _made() -> dict:
    return comparison(fast_us={SET: 10.0}, cub_us={SET: 24.0},
                      wrong_cub_at=WRONG)


def _ratios(made: dict, timing: str) -> dict:
    """comparison_ratios as {(dtype, n): ratios}."""
    return {(dtype, n): ratios for dtype, n, ratios
            in peers.comparison_ratios(made, timing)}


def test_floor_us_is_the_empty_kernel_plus_the_bytes_at_the_read_ceiling():
    """comparison()'s floor: empty kernel 3 µs cold, 2 back to back; read
    ceiling 2,500 GB/s cold, 3,200 back to back."""
    results = comparison()["results"]
    assert peers.floor_us(results, "float32", 1 << 20, BATCH) == \
        pytest.approx(2.0 + 2**22 / 3.2e6)          # 3.31072
    assert peers.floor_us(results, "float16", 1 << 24, BATCH) == \
        pytest.approx(12.48576)
    assert peers.floor_us(results, "int8", 1 << 28, COLD) == \
        pytest.approx(3.0 + 2**28 / 2.5e6)          # 110.374
    assert peers.floor_us(results, "float64", 1 << 22, COLD) == \
        pytest.approx(16.4217728)
    with pytest.raises(KeyError):
        peers.floor_us(results, "float32", 1 << 20, "call_us")


def test_time_of_is_none_where_missing_or_wrong():
    results = _made()["results"]
    assert peers.time_of(results, "fast", *SET, BATCH) == pytest.approx(10.0)
    assert peers.time_of(results, "fast", *SET, COLD) == pytest.approx(12.0)
    assert peers.time_of(results, "torch.sum", *SET, COLD) == \
        pytest.approx(30.24)
    assert peers.time_of(results, "cub", *WRONG, BATCH) is None
    assert peers.time_of(results, "fast", *WRONG, BATCH) is not None
    assert peers.time_of(results, "cupy.sum", *SET, BATCH) is None
    assert peers.time_of(results, "fast", "int64", 1 << 22, BATCH) is None
    assert peers.time_of(results, "fast", "float64", 1 << 21, BATCH) is None


def test_ratios_at_every_dtype_and_size_cold_and_back_to_back():
    made = _made()
    for timing in (COLD, BATCH):
        got = peers.comparison_ratios(made, timing)
        assert [(dtype, n) for dtype, n, _ in got] == [
            (dtype, n) for dtype in peers.COMPARE_DTYPES
            for n in peers.COMPARE_SIZES]
        assert all(list(r) == ["cub", "torch.sum", "cupy.sum", "floor"]
                   for _, _, r in got)
    batch, cold = _ratios(made, BATCH), _ratios(made, COLD)
    # their time over fast's; the floor's time over fast's
    assert batch[SET] == pytest.approx({"cub": 2.4, "torch.sum": 2.88,
                                        "cupy.sum": None,
                                        "floor": 12.48576 / 10})
    assert cold[SET] == pytest.approx({"cub": 2.2, "torch.sum": 2.52,
                                       "cupy.sum": None,
                                       "floor": 16.4217728 / 12})
    # elsewhere comparison()'s defaults, whatever the element size
    for (dtype, n), ratios in batch.items():
        if (dtype, n) not in (SET, WRONG):
            assert ratios == pytest.approx({
                "cub": COMPARISON_CUB_SPEED[n],
                "torch.sum": 1.2 * COMPARISON_CUB_SPEED[n],
                "cupy.sum": None, "floor": COMPARISON_FLOOR_SHARE})
    # cold: each method's own cold time
    assert cold["int32", 1 << 28]["cub"] == pytest.approx(
        1.05 * 1.1 / 1.2)


def test_a_wrong_or_missing_figure_gives_no_ratio():
    made = _made()
    for timing in (COLD, BATCH):
        ratios = _ratios(made, timing)
        assert ratios[WRONG]["cub"] is None
        assert ratios[WRONG]["torch.sum"] is not None
        assert ratios[WRONG]["floor"] is not None
        assert ratios["int8", 1 << 26]["cub"] is not None
        assert ratios["int32", 1 << 28]["cub"] is not None
    # without fast's figure, no ratio at all
    results = made["results"]["results"]
    results[:] = [r for r in results
                  if (r["method"], r["dtype"], r["n"])
                  != ("fast", "float16", 1 << 24)]
    assert _ratios(made, BATCH)["float16", 1 << 24] == {
        "cub": None, "torch.sum": None, "cupy.sum": None, "floor": None}
    assert _ratios(made, BATCH)["float16", 1 << 22]["floor"] is not None


def test_ratio_and_gbps_of():
    results = _made()["results"]
    assert peers.gbps_of(results, "fast", *SET) == pytest.approx(
        2**25 / 12e3)
    assert peers.gbps_of(results, "fast", *SET, "cold_us") == \
        pytest.approx(2**25 / 12e3)
    assert peers.gbps_of(results, "fast", *SET, "batch_us") == \
        pytest.approx(2**25 / 10e3)
    assert peers.gbps_of(results, "fast", *SET, "call_us") is None
    assert peers.gbps_of(results, "cub", *WRONG) is None
    assert peers.gbps_of(results, "fast", "float64", 1 << 21) is None
    assert peers.gbps_of(results, "cupy.sum", "float32", 1 << 20) is None
    with pytest.raises(ValueError):
        peers.gbps_of(results, "fast", "int32", 1 << 28, "median_us")
    assert peers.ratio(3.0, 2.0) == 1.5
    assert peers.ratio(None, 2.0) is None and peers.ratio(3.0, None) is None
    assert peers.ratio(3.0, 0.0) is None


#: The title of the report's comparison tables, but for their op.
WAY = ("fast against cub, the peers and the floor, GPU time {} (same run, "
       "same GPU; floor = empty kernel + bytes / read ceiling)")


def _tables(text: str, op: str = "sum",
            op_peers: tuple[str, ...] | list[str] = ("torch.sum",
                                                     "cupy.sum")) -> dict:
    """The report's two comparison tables: {title: {(dtype, n): cells}},
    after checking each one's headers: fast over cub and each of the op's
    peers."""
    tables = {}
    for block in text.split("\n\n")[-2:]:
        title, headers, _, *lines = block.splitlines()
        assert re.split(r"\s{2,}", headers) == [
            "dtype", "n", "fast µs", "cub µs", "floor µs", "fast / cub",
            *(f"fast / {p}" for p in op_peers), "floor / fast"]
        tables[title] = {tuple(line.split()[:2]): line.split()[2:]
                         for line in lines}
    return tables


def test_format_comparison():
    made = _made()
    text = peers.format_comparison(made)
    assert text.startswith(figures.format_table(made["results"]) + "\n\n")
    assert "End to end, 1024 float32 elements" in text
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    assert lines["torch.sum(x).item()"].split()[-1] == "23.0"
    tables = _tables(text)
    # sums go unnamed, as they always did
    assert list(tables) == [WAY.format("cold"), WAY.format("back to back")]
    cold, batch = tables.values()
    for table in (cold, batch):
        assert list(table) == [(dtype, figures.short_n(n))
                               for dtype in peers.COMPARE_DTYPES
                               for n in peers.COMPARE_SIZES]
    # fast, cub and floor µs; fast / cub, torch.sum, cupy.sum; floor / fast
    assert cold["float64", "2^22"] == ["12.00", "26.40", "16.42", "2.20×",
                                       "2.52×", "-", "137%"]
    assert batch["float64", "2^22"] == ["10.00", "24.00", "12.49", "2.40×",
                                        "2.88×", "-", "125%"]
    assert batch["float32", "2^20"] == ["3.38", "6.76", "3.31", "2.00×",
                                        "2.40×", "-", "98%"]
    for table in (cold, batch):
        assert table["int8", "2^28"][1] == "-"        # cub WRONG
        assert table["int8", "2^28"][3] == "-"
        assert table["int8", "2^28"][4] != "-"
    # the measured ratios, no targets: those are the project's
    # (benchmarks/targets.py)
    for word in ("target", ">=", "<=", "yes", "NO"):
        assert word not in text


def test_compare_on_the_fake_device(fake_device, monkeypatch):
    """One run of fast, cub and the peers that load per dtype of
    COMPARE_DTYPES at COMPARE_SIZES, merged into one valid document: the
    first run's floor, each byte count's probe from the first run that has
    it; then the latencies."""
    sizes = (1 << 10, 1 << 12)
    monkeypatch.setattr(peers, "COMPARE_SIZES", sizes)
    real, calls, runs = peers.run, [], []

    def run(methods, sizes, dtype, threads, **kwargs):
        calls.append((methods, sizes, dtype, threads, kwargs))
        got = real(methods, sizes, dtype, threads, **kwargs)
        # each run's floor and probes its own, to tell them apart
        got["floor"]["empty_cold_us"] *= len(calls)
        for p in got["probes"]:
            p["read_batch_us"] *= len(calls)
        runs.append(got)
        return got
    monkeypatch.setattr(peers, "run", run)
    asked = []

    def measure_latency(ordinal):
        asked.append(ordinal)
        return {peers.TORCH_ITEM: 20.0}
    monkeypatch.setattr(peers, "measure_latency", measure_latency)
    got = peers.compare(threads=128, progress=False, seed=3)
    assert calls == [(["fast", "cub"], sizes, dtype, 128,
                      {"peers": True, "progress": False, "seed": 3,
                       "op": "sum"})
                     for dtype in peers.COMPARE_DTYPES]
    assert list(got) == ["results", "latency_us", "dtypes"]
    assert got["dtypes"] == list(peers.COMPARE_DTYPES)
    assert type(got["results"]) is Results
    schema.validate_document(got["results"])
    assert [(r["method"], r["dtype"], r["n"], r["threads"])
            for r in got["results"]["results"]] == [
        (m, dtype, n, 128) for dtype in peers.COMPARE_DTYPES
        for n in sizes for m in ("fast", "cub", "torch.sum")]
    assert got["results"]["floor"] == runs[0]["floor"] != runs[1]["floor"]
    nbytes = sorted({n * np.dtype(dtype).itemsize
                     for dtype in peers.COMPARE_DTYPES for n in sizes})
    assert [p["bytes"] for p in got["results"]["probes"]] == nbytes
    # 4,096 bytes: float32 2^10 (the first run), int8 2^12, int32 2^10
    first = {}
    for r in runs:
        for p in r["probes"]:
            first.setdefault(p["bytes"], p)
    assert got["results"]["probes"] == [first[b] for b in nbytes]
    assert [p for p in runs[3]["probes"] if p["bytes"] == 4096] != \
        [first[4096]]
    assert got["latency_us"] == {peers.TORCH_ITEM: 20.0} and asked == [0]
    # no peers: fast and cub only
    got = peers.compare(peers=False, progress=False)
    assert {r["method"] for r in got["results"]["results"]} == {"fast",
                                                                "cub"}


def test_compare_of_another_op_on_the_fake_device(fake_device,
                                                 monkeypatch):
    """--peers --op prod: fast, cub and torch.prod of the op at every
    dtype and size, then fast's float32 sum at the largest size; no
    latencies."""
    sizes = (1 << 10, 1 << 12)
    monkeypatch.setattr(peers, "COMPARE_SIZES", sizes)
    monkeypatch.setattr(peers, "measure_latency", no_latency)
    got = peers.compare(threads=512, progress=False, seed=3, op="prod")
    schema.validate_document(got["results"])
    assert [(r["method"], r["op"], r["dtype"], r["n"])
            for r in got["results"]["results"]] == [
        (m, "prod", dtype, n) for dtype in peers.COMPARE_DTYPES
        for n in sizes for m in ("fast", "cub", "torch.prod")] + [
        ("fast", "sum", peers.BASELINE_DTYPE, sizes[-1])]
    assert got["latency_us"] == {}
    assert peers.comparison_op(got) == "prod"
    # the baseline has its table in the results, no row in the comparison
    text = peers.format_comparison(got)
    assert "End to end" not in text
    assert "\nfloat32, n = 4,096 (2^12), 512 threads per block\n" in text
    for table in _tables(text, "prod", ["torch.prod", "cupy.prod"]).values():
        assert list(table) == [(dtype, figures.short_n(n))
                               for dtype in peers.COMPARE_DTYPES
                               for n in sizes]


def test_compare_of_the_dtypes_named_on_the_fake_device(fake_device,
                                                        monkeypatch):
    """dtypes=: those, in that order, then fast's float32 sum at the
    largest size, which they lack (the bandwidth they are held to); the
    comparison's rows are theirs alone.  No dtypes, or one twice, is a
    ValueError before any run."""
    sizes = (1 << 10, 1 << 12)
    monkeypatch.setattr(peers, "COMPARE_SIZES", sizes)
    monkeypatch.setattr(peers, "measure_latency", lambda ordinal: {})
    dtypes = ("complex128", "complex64")
    got = peers.compare(threads=256, progress=False, seed=1, dtypes=dtypes)
    schema.validate_document(got["results"])
    assert got["dtypes"] == list(dtypes)
    assert peers.comparison_dtypes(got) == dtypes
    assert [(r["method"], r["op"], r["dtype"], r["n"])
            for r in got["results"]["results"]
            if not r["method"].startswith(("torch.", "cupy."))] == [
        (m, "sum", dtype, n) for dtype in dtypes for n in sizes
        for m in ("fast", "cub")] + [
        ("fast", "sum", peers.BASELINE_DTYPE, sizes[-1])]
    assert [(dtype, n) for dtype, n, _ in
            peers.comparison_ratios(got, "batch_us")] == [
        (dtype, n) for dtype in dtypes for n in sizes]
    # with float32 among them, no baseline run besides
    got = peers.compare(threads=256, progress=False, peers=False,
                        dtypes=("float32", "complex64"))
    assert [(r["dtype"], r["n"]) for r in got["results"]["results"]
            if r["method"] == "fast"] == [
        (dtype, n) for dtype in ("float32", "complex64") for n in sizes]
    for bad in ((), ("int8", "int8")):
        with pytest.raises(ValueError, match="distinct dtypes"):
            peers.compare(progress=False, dtypes=bad)


def test_a_document_without_dtypes_compared_compare_dtypes():
    made = comparison()
    del made["dtypes"]
    assert peers.comparison_dtypes(made) == peers.COMPARE_DTYPES
    made["dtypes"] = "complex64"
    with pytest.raises(ValueError, match="expected a list of dtype names"):
        peers.comparison_dtypes(made)


def no_latency(ordinal):
    raise AssertionError("no latencies for another op than sum")


def test_the_op_of_a_comparison():
    assert peers.comparison_op(comparison()) == "sum"
    assert peers.comparison_op(comparison(op="nanmin")) == "nanmin"
    made = comparison()
    for r in made["results"]["results"]:
        del r["op"]                      # written before ops: sums
    assert peers.comparison_op(made) == "sum"
    made["results"]["results"] = []
    assert peers.comparison_op(made) == "sum"


@pytest.mark.parametrize("op", ["prod", "min", "nanprod", "any", "argmin",
                                "nanargmax"])
def test_the_comparison_of_another_op(op):
    """Its ratios over its own op's peers (cupy's alone where torch has
    none), its rows looked up by op (the float32 sum baseline of the same
    (fast, float32, 2^28) is another row), its tables titled with it."""
    made = comparison(op=op, fast_us={("float32", 1 << 28): 500.0},
                      baseline_us=400.0)
    op_peers = list(names.peers_of(op))
    for timing in (COLD, BATCH):
        for _, _, ratios in peers.comparison_ratios(made, timing):
            assert list(ratios) == ["cub", *op_peers, "floor"]
    results = made["results"]
    assert peers.time_of(results, "fast", "float32", 1 << 28, BATCH,
                         op=op) == pytest.approx(500.0)
    assert peers.time_of(results, "fast", "float32", 1 << 28,
                         BATCH) == pytest.approx(400.0)
    assert peers.time_of(results, "fast", "float64", 1 << 28,
                         BATCH) is None
    assert peers.gbps_of(results, "fast", "float32", 1 << 28,
                         op=op) == pytest.approx(2**30 / (500.0 * 1.2e3))
    text = peers.format_comparison(made)
    assert "End to end" not in text
    tables = _tables(text, op, op_peers)
    assert list(tables) == [f"{op}: " + WAY.format(way)
                            for way in ("cold", "back to back")]
    cold = tables[f"{op}: " + WAY.format("cold")]
    # fast (600 µs cold: its 500 back to back), cub, floor µs; fast over
    # cub, over each peer (cupy's not timed: "-"), the floor's share
    cub = peers.time_of(results, "cub", "float32", 1 << 28, COLD, op=op)
    assert cold["float32", "2^28"][:2] == ["600.00", f"{cub:,.2f}"]
    assert cold["float32", "2^28"][3] == f"{cub / 600:.2f}×"
    speeds = cold["float32", "2^28"][4:-1]
    assert len(speeds) == len(op_peers) and speeds[-1] == "-"
    assert all(s.endswith("×") for s in speeds[:-1])


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
