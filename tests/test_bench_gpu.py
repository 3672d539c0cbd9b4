"""cudareduce.bench on a real GPU: run() and the command line end to end.

Marked ``gpu``: skipped, with the reason, where no CUDA device is usable.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cudareduce
from cudareduce import _cudareduce, bench

pytestmark = pytest.mark.gpu

LADDER = list(cudareduce.methods())
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _env() -> dict:
    env = dict(os.environ)
    root = str(Path(cudareduce.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _available_peers() -> list[str]:
    ordinal = _cudareduce.device_info()["ordinal"]
    return [p for p in bench.PEERS if bench.load_peer(p, ordinal)[0] is not None]


def _check(doc, sizes, dtype, methods, threads=256):
    bench.validate_document(doc)
    info = _cudareduce.device_info()
    assert doc["device"]["name"] == info["name"]
    assert doc["device"]["sm_count"] == info["sm_count"]
    assert doc["device"]["l2_bytes"] == info["l2_bytes"]
    assert doc["device"]["copy_gbps"] > 1.0
    assert doc["cudareduce_version"] == cudareduce.__version__
    got = [(r["n"], r["method"]) for r in doc["results"]]
    assert got == [(n, m) for n in sizes for m in methods]
    for r in doc["results"]:
        assert r["correct"], r
        assert r["dtype"] == dtype and r["threads"] == threads
        assert bench.MIN_REPS <= r["reps"] <= bench.MAX_REPS
        assert r["median_us"] > 0 and r["gbps"] > 0


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
    assert _available_peers() == list(bench.PEERS)


def test_run_with_peers():
    peers = _available_peers()
    doc = bench.run(sizes=1 << 16, peers=True, progress=False)
    _check(doc, [1 << 16], "float32", LADDER + peers)


def test_run_selected_methods_and_named_peer():
    peers = _available_peers()
    methods = ["multi_element", "sequential"] + peers[:1]
    doc = bench.run(methods=methods, sizes=[1 << 14], progress=False, seed=3)
    _check(doc, [1 << 14], "float32", ["sequential", "multi_element"] + peers[:1])


def test_run_default_size_ladder_pays_off():
    doc = bench.run(peers=False, progress=False)
    _check(doc, [1 << 22], "float32", LADDER)
    times = {r["method"]: r["median_us"] for r in doc["results"]}
    # the last step of the ladder is faster than the first at the paper's size
    assert times["multi_element"] < times["interleaved_divergent"]
    table = bench.format_table(doc)
    assert "n = 4,194,304 (2^22)" in table and "WRONG" not in table


def test_cli_default_prints_the_table(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cudareduce.bench"],
                          capture_output=True, text=True, env=_env(),
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert _cudareduce.device_info()["name"] in lines[0]
    assert "float32, n = 4,194,304 (2^22), 256 threads per block" in proc.stdout
    for header in bench.TABLE_HEADERS:
        assert header in proc.stdout
    rows = [line.split()[0] for line in lines[5:] if line.strip()]
    assert rows[:len(LADDER)] == LADDER
    assert "WRONG" not in proc.stdout


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


def test_pytest_benchmarks_run_and_check_every_method(tmp_path):
    """benchmarks/test_methods.py, as a user runs it (pytest-benchmark), at
    one size that is not a power of two: every method and peer is checked
    exactly before it is timed, so a wrong one fails this run; nothing may
    be skipped."""
    pytest.importorskip("pytest_benchmark")
    suite = Path(__file__).resolve().parent.parent / "benchmarks"
    env = {**_env(), "CUDAREDUCE_BENCH_SIZES": "1000003"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite / "test_methods.py"),
         "-p", "no:cacheprovider", "-q", "-rs", "--benchmark-only",
         "--benchmark-disable-gc", "--benchmark-columns=median"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    expected = len(LADDER) + len(bench.PEERS)
    assert f"{expected} passed" in proc.stdout, tail
    assert "skipped" not in proc.stdout, tail
