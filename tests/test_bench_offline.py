"""cudareduce.bench without a GPU: the sizes parser, the measurement
policy's arithmetic, the command line's plumbing (with ``run`` replaced),
``run`` on a fake device, the Results class, the references beside a run,
the README figures script, and the no-GPU exit in a subprocess that hides
any device.  The results model, the plots and the reference tables have
files of their own (test_results_offline.py, test_plot_offline.py,
test_reference_offline.py)."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudareduce
import cudareduce.results as model
from bench_data import (LADDER, METHODS, PEERS, PNG_MAGIC, STEPS,  # noqa: F401
                        child_env, matplotlib, needs_matplotlib,
                        report_tables, sample)
from cudareduce import bench, reference


# ---------------------------------------------------------------------------
# Sizes


@pytest.mark.parametrize("text, n", [
    ("4194304", 4194304), ("4_194_304", 4194304), ("2^22", 1 << 22),
    ("2**22", 1 << 22), (" 2 ^ 10 ", 1024), ("1", 1), ("10^3", 1000)])
def test_parse_size(text, n):
    assert bench.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "0", "-5", "2^", "x", "1e6", "4M",
                                  "2^-1", "1_", "1.5"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        bench.parse_size(text)


def test_parse_sizes_range_is_every_power_of_two():
    assert bench.parse_sizes("2^10..2^28") == [1 << k for k in range(10, 29)]
    assert bench.parse_sizes("3..100") == [4, 8, 16, 32, 64]
    assert bench.parse_sizes("2^4..2^4") == [16]


def test_parse_sizes_list_sorted_unique():
    assert bench.parse_sizes("1000,4096,2^20") == [1000, 4096, 1 << 20]
    assert bench.parse_sizes("2^20, 1000 ,2^10..2^12,4096") == \
        [1000, 1024, 2048, 4096, 1 << 20]


@pytest.mark.parametrize("text", ["", "2^12..2^10", "5..7", "1,,2", "a..b",
                                  "2^10..", ","])
def test_parse_sizes_rejects(text):
    with pytest.raises(ValueError):
        bench.parse_sizes(text)


# ---------------------------------------------------------------------------
# Measurement policy


def test_rotation_buffers():
    l2 = 50 << 20
    assert bench.rotation_buffers(16 << 20, l2) == 13          # ceil(200/16)
    assert bench.rotation_buffers(4 * l2, l2) == 1
    assert bench.rotation_buffers(1 << 30, l2) == 1
    assert bench.rotation_buffers(4 * l2 - 1, l2) == 2
    assert bench.rotation_buffers(4096, l2) == bench.MAX_BUFFERS
    # at most a quarter of device memory in all
    assert bench.rotation_buffers(16 << 20, l2, total_bytes=128 << 20) == 2
    assert bench.rotation_buffers(16 << 20, l2, total_bytes=1 << 20) == 1
    assert bench.rotation_buffers(100, 0) == 1
    with pytest.raises(ValueError):
        bench.rotation_buffers(0, l2)


def test_choose_reps():
    assert bench.choose_reps(0.01) == bench.MAX_REPS            # 10 µs
    assert bench.choose_reps(1.0) == 200                        # 0.2 s / 1 ms
    assert bench.choose_reps(50.0) == bench.MIN_REPS
    assert bench.choose_reps(0.0) == bench.MAX_REPS
    assert bench.choose_reps(float("nan")) == bench.MAX_REPS
    assert bench.choose_reps(2.0, target_seconds=1.0, min_reps=1,
                             max_reps=10_000) == 500


def test_is_correct_is_exact():
    assert bench.is_correct(np.int64(10), 10)
    assert not bench.is_correct(np.int64(11), 10)
    assert bench.is_correct(np.float32(-3.0), -3) and bench.is_correct(7.0, 7)
    assert not bench.is_correct(np.float32(1.0000001), 1)
    assert not bench.is_correct(np.float32("nan"), 1)
    assert not bench.is_correct(np.float32("inf"), 1)
    assert not bench.is_correct(None, 1) and not bench.is_correct("x", 1)


@pytest.mark.parametrize("dtype", bench.DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 2 ** 20 + 3])
def test_random_array_is_nonzero_integers_of_an_exact_sum(dtype, n):
    rng = np.random.default_rng([n, len(dtype)])
    a = bench.random_array(rng, n, dtype)
    limit = bench.value_limit(n, dtype)
    assert a.dtype == np.dtype(dtype) and a.size == n
    assert np.all(a != 0) and np.all(np.abs(a) <= limit)
    assert np.array_equal(a, np.round(a))
    if n > 100:
        assert a.min() < 0 < a.max()
    reference = bench.reference_sum(a)
    assert reference == sum(int(v) for v in a)
    # The dtype's own sum, in either order, is exact; one element lost or
    # doubled is not.
    assert bench.is_correct(np.sum(a), reference)
    assert bench.is_correct(np.sum(a[::-1], dtype=a.dtype), reference)
    assert not bench.is_correct(np.sum(a[1:]), reference)
    assert not bench.is_correct(np.sum(a) + a[-1], reference)


def test_value_limit_keeps_float32_sums_exact():
    assert bench.value_limit(2 ** 17, "float32") == 1000
    assert bench.value_limit(2 ** 28, "float32") == 22
    assert bench.value_limit(2 ** 36, "float32") == 1
    assert bench.value_limit(2 ** 40, "float64") == 1000
    assert bench.value_limit(2 ** 40, "int32") == 1000
    # Hoeffding's margin t^2 / (2 n L^2) >= 1024 (t = 2^24) wherever the
    # limit is not clamped to 1000 or 1.
    for n in (2 ** 18, 10 ** 6, 2 ** 28, 2 ** 35):
        limit = bench.value_limit(n, "float32")
        assert (2 ** 24) ** 2 / (2 * n * limit * limit) >= 1024


def test_measure_method_sees_one_lost_element():
    # The check before timing is exact: a timer that drops the last element
    # of 2^20 + 3 float32 (the old bound, 2 eps log2(n) sum|x|, accepted
    # ~1,800 lost uniform [0, 1) elements at 2^28) is reported wrong.
    a = bench.random_array(np.random.default_rng(5), 2 ** 20 + 3, "float32")

    def drops_last(x, buffers, warmup, reps):
        return np.sum(x[:-1], dtype=np.float64), [0.001] * reps

    assert bench.measure_method(drops_last, a, bench.reference_sum(a), 3) \
        == (None, 0, False)


def test_measure_method_checks_before_timing():
    calls = []

    def timer(a, buffers, warmup, reps):
        calls.append((buffers, warmup, reps))
        return np.float32(a.sum() + 1), [0.01] * reps        # always wrong

    a = np.ones(100, np.float32)
    assert bench.measure_method(timer, a, 100, 7) == (None, 0, False)
    assert calls == [(1, bench.PILOT_WARMUP, bench.PILOT_REPS)]  # pilot only


def test_measure_method_times_with_rotation():
    calls = []

    def timer(a, buffers, warmup, reps):
        calls.append((buffers, warmup, reps))
        return np.float32(a.sum()), [0.004, 0.002, 0.003] * reps

    a = np.ones(100, np.float32)
    median_us, reps, correct = bench.measure_method(timer, a, 100, 7)
    assert correct and median_us == pytest.approx(3.0)
    assert reps == bench.choose_reps(0.003)
    assert calls[1] == (7, bench.WARMUP, reps)


# ---------------------------------------------------------------------------
# Command line


def test_cli_without_gpu_exits_1_with_the_cuda_error(tmp_path):
    env = child_env(CUDA_VISIBLE_DEVICES="")
    probe = subprocess.run(
        [sys.executable, "-c",
         "import cudareduce\n"
         "try:\n    cudareduce._cudareduce.device_info()\n"
         "except cudareduce.CudaError as e:\n    print(e)\n"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    message = probe.stdout.strip()
    assert message, "the hidden device should raise CudaError"
    proc = subprocess.run(
        [sys.executable, "-m", "cudareduce.bench", "--json",
         str(tmp_path / "x.json")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"cudareduce.bench: {message}"
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""
    assert not (tmp_path / "x.json").exists()


def test_cli_help(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cudareduce.bench", "--help"],
                          capture_output=True, text=True, env=child_env(),
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0
    for option in ("--n", "--dtype", "--threads", "--methods", "--sizes",
                   "--json", "--plot", "--no-peers"):
        assert option in proc.stdout


@pytest.mark.parametrize("argv", [
    ["--methods", "bogus"], ["--methods", ","], ["--threads", "100"],
    ["--threads", "2048"], ["--dtype", "float16"], ["--sizes", "2^12..2^10"],
    ["--n", "0"], ["--n", "2^10", "--sizes", "2^10..2^12"],
    ["--methods", "torch.sum", "--no-peers"]])
def test_cli_rejects_bad_arguments(argv, capsys, monkeypatch):
    monkeypatch.setattr(bench._cudareduce, "device_info", _no_device)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def _no_device():
    raise AssertionError("argument errors must be caught before the device")


class _FakeRun:
    def __init__(self, document=None, error=None):
        self.document, self.error, self.calls = document, error, []

    def __call__(self, methods, sizes, dtype, threads, peers, progress, seed):
        self.calls.append(dict(methods=methods, sizes=sizes, dtype=dtype,
                               threads=threads, peers=peers,
                               progress=progress, seed=seed))
        if self.error is not None:
            raise self.error
        return self.document


def _patch_run(monkeypatch, fake):
    def run(methods=None, sizes=bench.DEFAULT_N, dtype="float32",
            threads=256, peers=True, progress=True, *, seed=None):
        return fake(methods, sizes, dtype, threads, peers, progress, seed)
    monkeypatch.setattr(bench, "run", run)


@needs_matplotlib
def test_cli_defaults_and_outputs(sample, tmp_path, capsys, monkeypatch):
    fake = _FakeRun(sample)
    _patch_run(monkeypatch, fake)
    json_path, plot_path = tmp_path / "r.json", tmp_path / "r.png"
    assert bench.main(["--json", str(json_path), "--plot",
                       str(plot_path)]) == 0
    assert fake.calls == [dict(methods=None, sizes=[1 << 22], dtype="float32",
                               threads=256, peers=True, progress=True,
                               seed=None)]
    out, err = capsys.readouterr()
    assert out == bench.format_table(sample) + "\n"
    assert "1 result(s) WRONG: unroll_complete (n=65536)" in err
    assert json.loads(json_path.read_text(encoding="utf-8")) == sample
    for suffix in ("-speedup.png", "-bandwidth.png"):
        png = tmp_path / f"r{suffix}"
        assert png.read_bytes().startswith(PNG_MAGIC)


def test_cli_options_reach_run(sample, monkeypatch, capsys):
    fake = _FakeRun(sample)
    _patch_run(monkeypatch, fake)
    assert bench.main(["--sizes", "2^10..2^12,5000", "--dtype", "int64",
                       "--threads", "512", "--methods",
                       "sequential, multi_element,torch.sum", "--seed", "7"]) == 0
    assert fake.calls[0] == dict(
        methods=["sequential", "multi_element", "torch.sum"],
        sizes=[1024, 2048, 4096, 5000], dtype="int64", threads=512,
        peers=True, progress=True, seed=7)
    assert bench.main(["--n", "2^20", "--no-peers"]) == 0
    assert fake.calls[1]["sizes"] == [1 << 20]
    assert fake.calls[1]["peers"] is False


@pytest.mark.parametrize("error, text", [
    (cudareduce.CudaError("no usable CUDA device: cudaErrorNoDevice"),
     "cudareduce.bench: no usable CUDA device: cudaErrorNoDevice"),
    (MemoryError("cudaErrorMemoryAllocation"),
     "cudareduce.bench: out of memory: cudaErrorMemoryAllocation")])
def test_cli_failures_exit_1_without_traceback(error, text, monkeypatch,
                                                capsys):
    _patch_run(monkeypatch, _FakeRun(error=error))
    assert bench.main([]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == text


def test_cli_unwritable_json_exits_1(sample, tmp_path, monkeypatch, capsys):
    _patch_run(monkeypatch, _FakeRun(sample))
    assert bench.main(["--json", str(tmp_path / "no" / "such" / "r.json")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_plot_paths():
    assert bench._plot_paths("out.png") == ("out-speedup.png",
                                            "out-bandwidth.png")
    assert bench._plot_paths("dir/run") == ("dir/run-speedup.png",
                                            "dir/run-bandwidth.png")
    assert bench._plot_paths("a.svg") == ("a-speedup.svg", "a-bandwidth.svg")


def test_run_validates_before_touching_the_device(monkeypatch):
    monkeypatch.setattr(bench._cudareduce, "device_info", _no_device)
    for kwargs in (dict(dtype="float16"), dict(threads=96),
                   dict(threads=True), dict(sizes=[0]), dict(sizes=[]),
                   dict(methods=["nope"]), dict(peers=["numpy.sum"]),
                   dict(methods=["torch.sum"], peers=False)):
        with pytest.raises(ValueError):
            bench.run(**kwargs)


#: The fake device's time per method, in ms per MB (+ 1 ms): each step
#: faster than the one before, fast the fastest, cub between multi_element
#: and fast.
FAKE_MS = {"interleaved_divergent": 0.007, "interleaved_bank_conflict": 0.006,
           "sequential": 0.005, "first_add": 0.004, "unroll_warp": 0.003,
           "unroll_complete": 0.002, "multi_element": 0.001, "fast": 0.0008,
           "cub": 0.0009}


class _FakeDevice:
    """Stands in for the extension's device functions: sums with NumPy,
    reports times from a per-method table, and can be told to be wrong."""

    def __init__(self, wrong=()):
        self.wrong = set(wrong)
        self.reduce_calls = []
        self.copy_calls = []

    def device_info(self):
        return {"ordinal": 0, "name": "fake GPU", "sm_count": 4,
                "l2_bytes": 1 << 20, "total_bytes": 1 << 33}

    def time_copy(self, nbytes, reps):
        self.copy_calls.append((nbytes, reps))
        return [2 * nbytes / 500e9 * 1e3] * reps            # 500 GB/s

    def time_reduce(self, op, a, method, threads, buffers, warmup, reps):
        self.reduce_calls.append((method, a.size, threads, buffers, warmup,
                                  reps))
        acc = np.int64 if a.dtype.kind == "i" else a.dtype.type
        value = np.sum(a, dtype=acc)
        if method in self.wrong:
            value = value + acc(1)
        return value, [FAKE_MS[method] * (1 + a.nbytes / 1e6)] * reps


@pytest.fixture
def fake_device(monkeypatch):
    fake = _FakeDevice(wrong={"unroll_warp"})
    for name in ("device_info", "time_copy", "time_reduce"):
        monkeypatch.setattr(bench._cudareduce, name, getattr(fake, name))

    def peer(name, ordinal):
        if name == "cupy.sum":
            return None, "not importable (fake)"

        def timer(a, buffers, warmup, reps):
            return np.sum(a, dtype=np.float64), [0.002] * reps
        return timer, ""
    monkeypatch.setattr(bench, "load_peer", peer)
    return fake


def test_run_with_a_fake_device(fake_device, capsys):
    doc = bench.run(sizes=[1000, 1 << 16], peers=True, progress=True, seed=1)
    bench.validate_document(doc)
    assert doc["device"] == {"name": "fake GPU", "sm_count": 4,
                             "l2_bytes": 1 << 20,
                             "copy_gbps": pytest.approx(500.0)}
    assert fake_device.copy_calls == [(bench.COPY_BYTES, bench.COPY_REPS)]
    got = [(r["n"], r["method"], r["correct"]) for r in doc["results"]]
    # every method of ours (the 8 steps, then cub), then the peer
    assert got == [(n, m, m != "unroll_warp") for n in (1000, 1 << 16)
                   for m in STEPS + ["cub", "torch.sum"]]
    wrong = [r for r in doc["results"] if not r["correct"]]
    assert all(r["median_us"] is None and r["reps"] == 0 for r in wrong)
    # the wrong method ran its pilot only: never timed
    pilots = [c for c in fake_device.reduce_calls if c[0] == "unroll_warp"]
    assert [c[3:] for c in pilots] == [(1, bench.PILOT_WARMUP,
                                        bench.PILOT_REPS)] * 2
    # the others: pilot, then the rotation over ceil(4 MiB / nbytes) buffers
    timed = [c for c in fake_device.reduce_calls
             if c[0] == "sequential" and c[3:] != (1, bench.PILOT_WARMUP,
                                                  bench.PILOT_REPS)]
    assert [c[3] for c in timed] == [
        bench.rotation_buffers(4000, 1 << 20, 1 << 33),
        bench.rotation_buffers(1 << 18, 1 << 20, 1 << 33)]
    assert all(c[4] == bench.WARMUP for c in timed)
    first = doc["results"][0]
    assert first["median_us"] == pytest.approx(7.0 * (1 + 4000 / 1e6))
    assert first["reps"] == bench.choose_reps(first["median_us"] / 1e3)
    assert "WRONG" in bench.format_table(doc)
    err = capsys.readouterr().err
    assert "2/20" in err or "20/20" in err or "run" in err      # progress
    assert "cupy.sum" not in err            # unavailable peer: silently skipped


def test_run_times_fast_and_cub_and_tables_them(fake_device):
    """A run times fast and cub like the steps; its table chains fast onto
    multi_element and shows cub as the reference, after the steps and before
    the peers."""
    doc = bench.run(sizes=[1 << 12], peers=True, progress=False, seed=4)
    rows = list(doc["results"])
    assert {r["method"] for r in rows} == set(METHODS + ["torch.sum"])
    for method in ("fast", "cub"):
        calls = [c for c in fake_device.reduce_calls if c[0] == method]
        assert len(calls) == 2                  # the pilot, then the timing
        assert calls[1][3:5] == (bench.rotation_buffers(
            1 << 14, 1 << 20, 1 << 33), bench.WARMUP)
    t = {r["method"]: r["median_us"] for r in rows}
    factor = 1 + (1 << 14) / 1e6
    assert t["fast"] == pytest.approx(1e3 * FAKE_MS["fast"] * factor)
    assert t["cub"] == pytest.approx(1e3 * FAKE_MS["cub"] * factor)
    (table,) = report_tables(bench.format_table(doc))
    cells = {line.split()[0]: line.split()[1:] for line in table[2:]}
    assert list(cells) == STEPS + ["cub", "torch.sum"]
    assert cells["unroll_warp"][0] == "WRONG"
    assert cells["fast"][3:] == [
        f"{FAKE_MS['multi_element'] / FAKE_MS['fast']:.2f}×",
        f"{FAKE_MS['interleaved_divergent'] / FAKE_MS['fast']:.2f}×"]
    assert cells["cub"][3:] == [
        "reference",
        f"{FAKE_MS['interleaved_divergent'] / FAKE_MS['cub']:.2f}×"]
    assert cells["torch.sum"][3] == "peer"


def test_run_single_size_no_progress_and_named_peer(fake_device, capsys):
    doc = bench.run(methods=["multi_element", "cupy.sum", "torch.sum"],
                    sizes=1 << 10, progress=True)
    assert [r["method"] for r in doc["results"]] == ["multi_element",
                                                    "torch.sum"]
    err = capsys.readouterr().err
    assert err.strip() == ("cudareduce.bench: cupy.sum skipped: not "
                           "importable (fake)")


def test_run_int_dtype_checks_exactly(fake_device):
    doc = bench.run(sizes=[777], dtype="int32", peers=False, progress=False)
    assert [r["method"] for r in doc["results"]] == METHODS
    assert [r["correct"] for r in doc["results"]] == \
        [m != "unroll_warp" for m in METHODS]


def test_resolve_selection():
    assert bench._resolve(None, True) == (METHODS, list(bench.PEERS), False)
    assert bench._resolve(None, False) == (METHODS, [], False)
    assert bench._resolve(["cub", "fast", "torch.sum"], True) == \
        (["fast", "cub"], ["torch.sum"], True)
    assert bench._resolve(["multi_element", "sequential"], True) == \
        (["sequential", "multi_element"], list(bench.PEERS), False)
    assert bench._resolve(["cupy.sum"], True) == ([], ["cupy.sum"], True)
    assert bench._resolve(None, ["torch.sum"]) == (METHODS, ["torch.sum"],
                                                   True)


def test_progress_fallback_without_tqdm(fake_device, monkeypatch, capsys):
    # import fails (tqdm.auto too, even when an earlier test imported it)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    bench.run(methods=["sequential"], sizes=[1 << 10, 1 << 11], peers=False)
    err = capsys.readouterr().err
    assert "\r1/2 n=2^10 sequential" in err and "\r2/2 n=2^11 sequential" in err


# ---------------------------------------------------------------------------
# Results: the Python API's view of a document


H100_PATH = Path(__file__).resolve().parent.parent / "docs" / "figures" / \
    "ladder.json"


@pytest.fixture
def results(sample) -> bench.Results:
    return bench.Results(sample)


def test_results_is_the_validated_document(sample, results):
    assert isinstance(results, dict) and results == sample
    bench.validate_document(results)
    assert json.loads(json.dumps(results)) == sample
    assert results.device == sample["device"]
    assert results.sizes == [1 << k for k in (16, 18, 20, 22, 24)]
    # table order: the steps, cub, the peers
    assert results.methods == STEPS + ["cub", "torch.sum", "cupy.sum"]
    # a copy: changing the source leaves the Results alone
    sample["results"][0]["median_us"] = 1.0
    assert results["results"][0]["median_us"] != 1.0
    bad = copy.deepcopy(results)
    bad["device"]["sm_count"] = 0
    with pytest.raises(ValueError, match="device.sm_count"):
        bench.Results(bad)
    assert type(copy.deepcopy(results)) is bench.Results


def test_results_json_round_trip(results, tmp_path):
    path = tmp_path / "r.json"
    results.to_json(path)
    again = bench.Results.from_json(path)
    assert type(again) is bench.Results and again == results
    assert json.loads(path.read_text(encoding="utf-8")) == results
    # the same file as write_json / --json
    bench.write_json(results, tmp_path / "w.json")
    assert (tmp_path / "w.json").read_text(encoding="utf-8") == \
        path.read_text(encoding="utf-8")


def test_results_from_json_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: not JSON"):
        bench.Results.from_json(path)
    path.write_text('{"device": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: document: missing keys"):
        bench.Results.from_json(path)
    with pytest.raises(OSError):
        bench.Results.from_json(tmp_path / "missing.json")


def test_results_table_is_the_clis(results, sample, monkeypatch, capsys):
    assert results.table() == bench.format_table(sample)
    assert str(results) == results.table()
    _patch_run(monkeypatch, _FakeRun(results))
    assert bench.main([]) == 0
    assert capsys.readouterr().out == results.table() + "\n"


def test_results_repr_is_a_short_summary(results):
    text = repr(results)
    lines = text.splitlines()
    assert 2 <= len(lines) <= 5 and max(map(len, lines)) < 100
    assert text.startswith("<cudareduce.bench.Results: ") and text.endswith(">")
    assert results.device["name"] in lines[0]
    assert "float32, int32" in text and "256 threads" in text
    assert "n = 2^16, 2^18, 2^20, 2^22, 2^24 (5 sizes)" in text
    assert " methods: 8 steps (interleaved_divergent .. fast); references " \
        "cub, torch.sum, cupy.sum\n" in text
    assert "64 results, 1 WRONG: unroll_complete (n=2^16)" in text
    # the recorded H100 run: every method and both peers at 19 sizes
    h100 = bench.Results.from_json(H100_PATH)
    assert "n = 2^10..2^28 (19 sizes)" in repr(h100)
    assert " methods: 8 steps (interleaved_divergent .. fast); " \
        "references cub, torch.sum, cupy.sum\n" in repr(h100)
    assert "209 results, all correct" in repr(h100)
    one = h100.select(n=2**22, methods=["sequential", "cupy.sum"])
    assert "methods: sequential; references cupy.sum" in repr(one)
    assert "n = 2^22\n" in repr(one)
    # cub alone is a reference, not a step; a few steps are named
    two = results.select(n=2**22, methods=["cub", "fast", "multi_element"])
    assert " methods: multi_element, fast; references cub\n" in repr(two)
    cub = results.select(methods="cub")
    assert " methods: no steps; references cub\n" in repr(cub)


def test_results_pretty_printer_uses_the_summary(results):
    """IPython's text form is the summary, not the dict's contents."""
    class Printer:
        def __init__(self):
            self.texts = []

        def text(self, value):
            self.texts.append(value)

    printer = Printer()
    results._repr_pretty_(printer, False)
    assert printer.texts == [repr(results)]
    try:
        from IPython.lib.pretty import pretty
    except ImportError:       # no IPython here: the hook above is all it uses
        return
    assert pretty(results) == repr(results)


def _html_tables(html: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, headers, rows of cell texts) of each <table>."""
    import html as html_module
    import re

    def cells(tag, text):
        return [html_module.unescape(c) for c in
                re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", text, re.S)]

    tables = []
    for table in re.findall(r"<table.*?</table>", html, re.S):
        caption = cells("caption", table)[0]
        head = cells("th", table)
        body = [cells("td", row) for row in
                re.findall(r"<tr(?:\s[^>]*)?>(.*?)</tr>",
                           table.split("<tbody>", 1)[1], re.S)]
        tables.append((caption, head, body))
    return tables


def test_results_repr_html_has_the_table_columns(results, sample):
    html = results._repr_html_()
    tables = _html_tables(html)
    groups = bench.group_results(sample["results"])
    assert len(tables) == len(groups) == 6
    text_tables = report_tables(results.table())
    for (caption, head, body), ((dtype, n, threads), rows), text in zip(
            tables, groups.items(), text_tables):
        assert head == list(bench.TABLE_HEADERS)
        assert caption == f"{dtype}, n = {model.format_n(n)}, " \
                          f"{threads} threads per block"
        assert body == model.group_cells(
            rows, sample["device"]["copy_gbps"])
        # the same cells as the text table
        assert [line.split() for line in text[2:]] == body
    assert "WRONG" in html and "color:#b00020" in html
    # the reference rows: cub in every group, the peers in the 5 float32 ones
    assert html.count('style="font-style:italic"') == 6 + 2 * 5
    for _, _, body in tables:
        cub = [row for row in body if row[0] == "cub"]
        assert len(cub) == 1 and cub[0][4] == "reference"
    assert results.device["name"] in html


def test_results_repr_html_escapes(sample):
    doc = copy.deepcopy(sample)
    doc["device"]["name"] = "<script>alert('x')</script> & GPU"
    html = bench.Results(doc)._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; GPU" in html


def test_results_select(results):
    one = results.select(n=1 << 22, dtype="float32")
    assert type(one) is bench.Results
    assert {(r["n"], r["dtype"]) for r in one["results"]} == \
        {(1 << 22, "float32")}
    assert one.device == results.device
    assert len(report_tables(one.table())) == 1
    two = results.select(n=[1 << 16, 1 << 24], methods="sequential")
    assert [(r["n"], r["method"]) for r in two["results"]] == \
        [(1 << 16, "sequential"), (1 << 24, "sequential")]
    assert results.select(threads=256) == results
    with pytest.raises(ValueError, match="no results with n=123"):
        results.select(n=123)


def test_results_to_markdown(results):
    md = results.select(n=1 << 22).to_markdown().splitlines()
    assert md[0] == results.table().splitlines()[0]
    assert "**float32, n = 4,194,304 (2^22), 256 threads per block**" in md
    header = md.index("| " + " | ".join(bench.TABLE_HEADERS) + " |")
    assert md[header + 1] == "|:---|---:|---:|---:|---:|---:|"
    assert md[header + 2].startswith("| interleaved_divergent | ")
    groups = [i for i, line in enumerate(md) if line.startswith("**")]
    assert len(groups) == 2                      # float32 and int32 at 2^22


def test_results_to_pandas_needs_pandas(results, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"to_pandas\(\) needs pandas"):
        results.to_pandas()


def test_results_to_pandas(results, sample):
    try:
        import pandas as pd
    except ImportError:
        # no pandas here: the clear ImportError (never a skip: the GPU check
        # fails on skips, and pandas is optional)
        with pytest.raises(ImportError, match="pip install pandas"):
            results.to_pandas()
        return
    df = results.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(bench.RESULT_KEYS) + [
        "peer", "reference", "pct_of_copy", "step_speedup",
        "cumulative_speedup"]
    assert len(df) == len(sample["results"])
    assert df.attrs["device"] == sample["device"]
    rows = bench.group_results(sample["results"])[("float32", 1 << 22, 256)]
    part = df[(df.n == 1 << 22) & (df.dtype == "float32")]
    assert list(part.method) == [r["method"] for r in rows]
    for (_, row), (step, cum) in zip(part.iterrows(), bench.speedups(rows)):
        assert (pd.isna(row.step_speedup) if step is None
                else row.step_speedup == pytest.approx(step))
        assert row.cumulative_speedup == pytest.approx(cum)
        assert row.peer == (row.method in PEERS)
        assert row.reference == (row.method in PEERS + ["cub"])
    fast = part[part.method == "fast"].iloc[0]
    t = {r["method"]: r["median_us"] for r in rows}
    assert fast.step_speedup == pytest.approx(t["multi_element"] / t["fast"])
    assert pd.isna(part[part.method == "cub"].iloc[0].step_speedup)
    wrong = df[~df.correct]
    assert len(wrong) == 1 and wrong.median_us.isna().all()


@needs_matplotlib
def test_results_plots(results, tmp_path):
    fig = results.plot_step_speedups(reference="harris", path=tmp_path / "s.png")
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].containers) == 2              # this run + harris
    assert (tmp_path / "s.png").read_bytes().startswith(PNG_MAGIC)
    fig = results.plot_bandwidth(dtype="int32")
    assert isinstance(fig, matplotlib.figure.Figure)
    # shown inline by Jupyter without pyplot: the Figure draws itself
    png = fig._repr_png_()
    assert png.startswith(PNG_MAGIC) and len(png) > 10_000


def test_run_returns_results_and_progress_false_is_silent(fake_device, capsys):
    results = bench.run(sizes=[1000, 2000], peers=False, progress=False,
                        seed=2)
    assert type(results) is bench.Results
    assert results.sizes == [1000, 2000]
    assert capsys.readouterr().err == ""


def test_progress_is_tqdm_auto():
    """tqdm.auto: the notebook widget inside Jupyter, text elsewhere."""
    try:
        import tqdm.auto as tqdm_auto
    except ImportError:
        tqdm_auto = None
    bar = bench._Progress(3, enabled=True)
    try:
        if tqdm_auto is None:
            assert bar.bar is None          # the plain counter
        else:
            assert isinstance(bar.bar, tqdm_auto.tqdm)
    finally:
        bar.close()
    assert bench._Progress(3, enabled=False).bar is None


def test_cli_with_the_real_run(fake_device, capsys, tmp_path):
    json_path = tmp_path / "r.json"
    assert bench.main(["--sizes", "2^10,2^11", "--no-peers", "--seed", "3",
                       "--json", str(json_path)]) == 0
    out, _ = capsys.readouterr()
    results = bench.Results.from_json(json_path)
    assert out == results.table() + "\n"
    assert results.sizes == [1024, 2048]


def test_device_info(monkeypatch):
    info = {"ordinal": 0, "name": "g", "sm_count": 2, "l2_bytes": 1,
            "total_bytes": 2}
    monkeypatch.setattr(bench._cudareduce, "device_info", lambda: info)
    got = bench.device_info()
    assert got == info and got is not info


# ---------------------------------------------------------------------------
# The references beside a run; the README figures script


def test_side_by_side(results):
    text = reference.side_by_side(results)
    lines = text.splitlines()
    assert lines[0].split() == ["step", "this", "run", "harris",
                                "seed_002_rtx3060", "seed_003_lab7"]
    # the seven published steps: fast and cub have no published figures
    body = lines[2:2 + len(LADDER)]
    assert [line.split()[1] for line in body] == LADDER
    assert lines[2 + len(LADDER)] == ""
    steps_table = text.split("\n\n")[0]
    assert "fast" not in steps_table and "cub" not in steps_table
    rows = bench.group_results(results["results"])[("float32", 1 << 22, 256)]
    t = {r["method"]: r["median_us"] for r in rows}
    assert f"{t['sequential']:,.1f} µs " \
           f"({t['interleaved_bank_conflict'] / t['sequential']:.2f}×)" \
        in body[2]
    assert "8,054 µs" in body[0] and "(2.33×)" in body[1]
    assert body[5].split()[-1] == "-" and body[6].split()[-2:] == ["-", "-"]
    assert "n = 4,194,304 float32" in text and "reduction.pdf" in text
    assert "002_d2f30ed02251f9f1.txt" in text
    # the wrong row of 2^16 has no time; references can be left out
    small = reference.side_by_side(results, n=1 << 16, reference=None)
    assert small.splitlines()[0].split() == ["step", "this", "run"]
    assert small.splitlines()[2 + LADDER.index("unroll_complete")] \
        .endswith(" -")
    with pytest.raises(ValueError, match="n=5"):
        reference.side_by_side(results, n=5)


@needs_matplotlib
def test_make_figures_from_recorded_results(tmp_path, capsys, device_error):
    import importlib.util
    script = H100_PATH.parent.parent / "make_figures.py"
    spec = importlib.util.spec_from_file_location("make_figures", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--from", str(H100_PATH), "--out", str(tmp_path),
                        "--date", "2026-11-22"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ladder-bandwidth.png", "ladder-speedup.png",
                     "ladder-table.md", "ladder.json"]
    for name in names[:2]:
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)
    assert bench.Results.from_json(tmp_path / "ladder.json") == \
        bench.Results.from_json(H100_PATH)
    table = (tmp_path / "ladder-table.md").read_text(encoding="utf-8")
    assert "Measured on **NVIDIA H100 80GB HBM3** on 2026-11-22" in table
    assert "(2^22), 256 threads per block**" in table
    assert "(2^28), 256 threads per block**" in table
    if device_error is not None:
        # Without a GPU, measuring fails cleanly, naming the CUDA error.  (On
        # the GPU machine a live sweep is test_bench_gpu's CLI tests' work:
        # this one would take 35 s there.)
        capsys.readouterr()
        assert module.main(["--out", str(tmp_path / "live")]) == 1
        assert device_error.split(":")[0] in capsys.readouterr().err
