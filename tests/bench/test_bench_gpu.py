"""cudareduce.bench on a real GPU: run() and the command line end to end.

Marked ``gpu``: skipped, with the reason, where no CUDA device is usable.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudareduce
from cudareduce import _cudareduce, bench
from cudareduce.bench import host
from cudareduce.bench.figures import TABLE_HEADERS
from cudareduce.bench.names import OPS, is_peer, peers_of
from cudareduce.bench.policy import MAX_REPS, MIN_REPS
from cudareduce.bench.timers import load_peer

pytestmark = pytest.mark.gpu

LADDER = list(cudareduce.methods())
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _env() -> dict:
    env = dict(os.environ)
    root = str(Path(cudareduce.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _available_peers(op: str = "sum", dtype: str = "float32") -> list[str]:
    ordinal = _cudareduce.device_info()["ordinal"]
    return [p for p in peers_of(op)
            if load_peer(p, ordinal, dtype)[0] is not None]


def _passes(method, n, dtype, threads):
    """The passes a cold sample of `method` times one by one: the plan's
    (fast: 1), none for cub and the peers."""
    if method == "cub" or is_peer(method):
        return 0
    return len(cudareduce.plan(n, method, threads=threads, dtype=dtype))


def _check(doc, sizes, dtype, methods, threads=256, op="sum"):
    bench.validate_document(doc)
    info = _cudareduce.device_info()
    assert doc["schema"] == 2
    assert doc["device"]["name"] == info["name"]
    assert doc["device"]["sm_count"] == info["sm_count"]
    assert doc["device"]["l2_bytes"] == info["l2_bytes"]
    assert doc["device"]["cccl"].count(".") == 2
    floor = doc["floor"]
    assert 0 < floor["empty_batch_us"] < floor["empty_cold_us"] < 100
    assert floor["read_cold_gbps"] > 100 and floor["read_batch_gbps"] > 100
    assert doc["cudareduce_version"] == cudareduce.__version__
    got = [(r["n"], r["method"]) for r in doc["results"]]
    assert got == [(n, m) for n in sizes for m in methods]
    itemsize = np.dtype(dtype).itemsize
    assert sorted(p["bytes"] for p in doc["probes"]) == sorted(
        {n * itemsize for n in sizes})
    for r in doc["results"]:
        assert r["correct"], r
        assert r["dtype"] == dtype and r["threads"] == threads
        assert r["op"] == op
        assert MIN_REPS <= r["reps"] <= MAX_REPS
        # The GPU machine has CuPy: every method has its call time.
        assert r["cold_us"] > 0 and r["batch_us"] > 0 and r["call_us"] > 0
        assert len(r["pass_us"]) == _passes(r["method"], r["n"], dtype,
                                            threads), r
        assert sum(r["pass_us"]) <= r["cold_us"] * 1.05 + 1


def test_run_small_all_methods_correct():
    doc = bench.run(sizes=[1 << 12], peers=False, progress=False)
    _check(doc, [1 << 12], "float32", LADDER)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
def test_run_other_dtypes(dtype):
    sizes = [1000, 12345]
    doc = bench.run(sizes=sizes, dtype=dtype, threads=128, peers=False,
                    progress=False)
    _check(doc, sizes, dtype, LADDER, threads=128)


def test_every_peer_is_there_on_the_gpu_machine():
    # The peer tests below take the peers that load: an empty list would
    # let them pass without timing any.
    assert _available_peers() == list(peers_of("sum"))
    for op in OPS:
        assert _available_peers(op) == list(peers_of(op)), op


#: The ops the bench runs below, one of each kind of data (a product's,
#: any's, a NaN-skipping op's on floats, the mean's divide, an arg op's
#: ties, a NaN-skipping arg op's on floats: cupy.nanargmax is timed behind
#: the stream-holding kernel, which a wait for the device inside the call
#: would stall), each on a dtype of its own: each run measures its own
#: floor, which is what a run costs, and the GPU suite has a time budget.
#: The data of every op are checked against NumPy offline
#: (test_bench_data_offline.py).
OP_DTYPES = {"prod": "int8", "any": "bool", "nanmin": "float32",
             "mean": "float16", "argmin": "int32", "nanargmax": "float64"}


@pytest.mark.parametrize("op", OP_DTYPES)
def test_run_each_op_checks_it_exactly(op):
    """An op on its data, at a size of several blocks and an odd tail:
    ours and the op's peers that take the dtype, all correct (the exact
    check ran before each timing), each result naming its op."""
    dtype, sizes = OP_DTYPES[op], [100_003]
    peers = _available_peers(op, dtype)
    doc = bench.run(["sequential", "fast", "cub"], sizes=sizes, dtype=dtype,
                    progress=False, seed=11, op=op)
    _check(doc, sizes, dtype, ["sequential", "fast", "cub"] + peers, op=op)
    title = dtype if op == "sum" else f"{dtype} {op}"
    assert f"\n{title}, n = 100,003, 256 threads per block\n" in doc.table()


def test_run_host_small_whole_and_along_axes():
    """``--host`` at small sizes: the whole calls and, where n makes rows
    of 1024, ours and NumPy's along each axis, every one correct (the
    exact checks ran), the report's along-axis tables and the targets'
    rows on them."""
    sizes = [1000, 1 << 12, 1 << 18]
    doc = bench.run_host(sizes, progress=False, seed=3)
    whole = [host.CUDAREDUCE_CALL, host.NUMPY_CALL] + [
        call for call in (host.TORCH_CALL, host.CUPY_CALL)
        if any(r["call"] == call for r in doc["results"])]
    along = [call for axis in host.HOST_AXES
             for call in (host.CUDAREDUCE_AXIS_CALLS[axis],
                          host.NUMPY_AXIS_CALLS[axis])]
    assert [(r["dtype"], r["n"], r["call"]) for r in doc["results"]] == [
        (dtype, n, call) for dtype in host.HOST_DTYPES for n in sizes
        for call in whole + (along if n != 1000 else [])]
    assert all(r["correct"] and r["median_ms"] > 0 for r in doc["results"])
    assert all(s.speed is not None for s in host.axis_speeds(doc))
    text = bench.format_host(doc)
    for dtype in host.HOST_DTYPES:
        assert f"{dtype} along axis k of a as (n // 1024, 1024) (median " \
               f"wall ms)" in text
    assert "WRONG" not in text


def test_run_with_peers():
    peers = _available_peers()
    doc = bench.run(sizes=1 << 16, peers=True, progress=False)
    _check(doc, [1 << 16], "float32", LADDER + peers)


def test_run_selected_methods_and_named_peer():
    peers = _available_peers()
    methods = ["multi_element", "sequential"] + peers[:1]
    doc = bench.run(methods=methods, sizes=[1 << 14], progress=False, seed=3)
    _check(doc, [1 << 14], "float32", ["sequential", "multi_element"] + peers[:1])


def test_run_default_size_is_chosen_by_the_rule():
    doc = bench.run(peers=False, progress=False)
    (n,) = {r["n"] for r in doc["results"]}
    _check(doc, [n], "float32", LADDER)
    rule = doc["timing"]["default_n_rule"]
    assert rule.startswith(f"default n = 2^{n.bit_length() - 1}:"), rule
    # The rule's own figures: the read probe at the chosen size takes at
    # least 25 empty kernels (cold), and at half the size it did not.
    probe = {p["bytes"]: p for p in doc["probes"]}[4 * n]
    assert probe["read_cold_us"] >= 25 * doc["floor"]["empty_cold_us"] * 0.8
    times = {r["method"]: r["cold_us"] for r in doc["results"]}
    assert times["multi_element"] < times["interleaved_divergent"]
    table = bench.format_table(doc)
    assert f"n = {n:,}" in table and "WRONG" not in table


def test_cli_paper_size_prints_the_table(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cudareduce.bench",
                           "--n", "2^22"],
                          capture_output=True, text=True, env=_env(),
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert _cudareduce.device_info()["name"] in proc.stdout.splitlines()[0]
    assert "float32, n = 4,194,304 (2^22), 256 threads per block" in proc.stdout
    for header in TABLE_HEADERS:
        assert header in proc.stdout
    assert "WRONG" not in proc.stdout
    for method in LADDER:
        assert f"\n{method} " in proc.stdout


def test_cli_counters_show_each_steps_idea(tmp_path):
    """--counters under ncu on the GPU machine (root: counters permitted):
    the claims hold, and every method's kernels were profiled."""
    json_path = tmp_path / "counters.json"
    proc = subprocess.run(
        [sys.executable, "-m", "cudareduce.bench", "--counters", "--json",
         str(json_path)], capture_output=True, text=True, env=_env(),
        cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    from cudareduce.bench import counters
    assert [ok for _, ok in counters.check_ideas(doc)] == [True] * 3
    assert {r["method"] for r in doc["rows"]} == set(LADDER)
    first = {r["method"]: r for r in doc["rows"] if r["pass"] == 0}
    assert first["first_add"]["launch__grid_size"] * 2 == \
        first["sequential"]["launch__grid_size"]
    assert "what changed:" in proc.stdout


@pytest.mark.parametrize("op, dtype", [("argmin", "complex128"),
                                       ("nanmean", "bfloat16")])
def test_cli_counters_of_another_op_and_dtype(tmp_path, op, dtype):
    """--counters --op --dtype under ncu: every method's kernels profiled
    reducing that op's data of that dtype (an index beside a complex value;
    a count beside a float sum of 2-byte elements), the document and the
    table saying which."""
    json_path = tmp_path / "counters.json"
    proc = subprocess.run(
        [sys.executable, "-m", "cudareduce.bench", "--counters", "--op", op,
         "--dtype", dtype, "--n", "2^20", "--json", str(json_path)],
        capture_output=True, text=True, env=_env(), cwd=tmp_path,
        timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert (doc["op"], doc["dtype"], doc["n"]) == (op, dtype, 1 << 20)
    assert {r["method"] for r in doc["rows"]} == set(LADDER)
    assert f"{dtype} {op}, n = 1,048,576 (2^20)" in proc.stdout


def test_time_reduce_modes_and_passes():
    a = np.arange(1, 1 << 20, dtype=np.float32) % 7
    expected = float(np.sum(a, dtype=np.float64))
    for mode, batch in (("launch", 1), ("cold", 1), ("batch", 4)):
        value, times, passes = _cudareduce.time_reduce(
            "sum", a, "first_add", 256, 2, 1, 3, mode, batch)
        assert float(value) == expected and len(times) == 3
        assert all(t > 0 for t in times)
        if mode == "cold":
            plan = cudareduce.plan(a.size, "first_add", threads=256,
                                   dtype="float32")
            assert [len(p) for p in passes] == [len(plan)] * 3
        else:
            assert passes is None
    value, times, passes = _cudareduce.time_reduce(
        "sum", a, "cub", 256, 1, 0, 2, "cold")
    assert passes == [[], []]
    with pytest.raises(ValueError, match="mode"):
        _cudareduce.time_reduce("sum", a, "fast", 256, 1, 0, 1, "warm")
    with pytest.raises(ValueError, match="batch"):
        _cudareduce.time_reduce("sum", a, "fast", 256, 1, 0, 1, "cold", 2)


def test_probes_and_the_stream_holder():
    for mode in ("launch", "cold", "batch"):
        assert len(_cudareduce.time_probe("empty", 0, 1, 1, 5, mode)) == 5
        assert min(_cudareduce.time_probe("read", 1 << 20, 4, 1, 5,
                                          mode)) > 0
    with pytest.raises(ValueError, match="probe"):
        _cudareduce.time_probe("read", 0, 1, 0, 1, "cold")
    floor = _cudareduce.time_probe("launch_poll", 0, 1, 2, 20, "launch")
    assert len(floor) == 20 and min(floor) > 0
    with pytest.raises(ValueError, match="launch_poll"):
        _cudareduce.time_probe("launch_poll", 0, 1, 0, 1, "cold")
    with pytest.raises(ValueError, match="launch_poll"):
        _cudareduce.time_probe("launch_poll", 8, 1, 0, 1, "launch")
    holder = _cudareduce.stream_hold(0)
    with pytest.raises(ValueError, match="not held"):
        _cudareduce.release_stream(holder)
    _cudareduce.hold_stream(holder, True)
    with pytest.raises(ValueError, match="held already"):
        _cudareduce.hold_stream(holder, False)
    _cudareduce.release_stream(holder)
    # A holder dropped while it holds lets the stream go (no hang).
    _cudareduce.hold_stream(holder, False)
    del holder
    assert float(cudareduce.sum(np.ones(10, np.float32))) == 10.0


def test_cli_sweep_writes_json_and_plots(tmp_path):
    json_path, plot_path = tmp_path / "sweep.json", tmp_path / "sweep.png"
    proc = subprocess.run(
        [sys.executable, "-m", "cudareduce.bench", "--sizes", "2^10..2^12",
         "--json", str(json_path), "--plot", str(plot_path)],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    peers = _available_peers()
    _check(doc, [1024, 2048, 4096], "float32", LADDER + peers)
    assert proc.stdout.count("threads per block") == 3
    for name in ("sweep-speedup.png", "sweep-bandwidth.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@pytest.mark.whole_gpu
def test_pytest_benchmarks_run_and_check_every_method(tmp_path):
    """benchmarks/test_methods.py, as a user runs it (pytest-benchmark), at
    one size that is not a power of two: every method and peer is checked
    exactly before it is timed, so a wrong one fails this run; nothing may
    be skipped."""
    pytest.importorskip("pytest_benchmark")
    suite = Path(__file__).resolve().parents[2] / "benchmarks"
    env = {**_env(), "CUDAREDUCE_BENCH_SIZES": "1000003"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite / "test_methods.py"),
         "-p", "no:cacheprovider", "-q", "-rs", "--benchmark-only",
         "--benchmark-disable-gc", "--benchmark-columns=median"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    expected = len(LADDER) + len(peers_of("sum"))
    assert f"{expected} passed" in proc.stdout, tail
    assert "skipped" not in proc.stdout, tail
