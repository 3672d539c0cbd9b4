"""cudareduce.bench.ladder without a GPU: the check-then-time of one method
(its three timings, its per-pass medians, WRONG at every stage) on a timer
of planted figures, and ``run`` (the default mode) on a fake device."""
from __future__ import annotations

import itertools
import os
import stat
from typing import Any

import numpy as np
import pytest

from cudareduce.bench import figures, names, schema
from support.bench_data import (FAKE_DRIVER, FAKE_EMPTY_MS,  # noqa: F401
                                FAKE_MS, METHODS, STEPS, fake_device,
                                fake_device_arrays, no_device, report_tables)
from cudareduce import _cudareduce
from cudareduce.bench import data, floor, ladder, policy
from cudareduce.bench.results import Results

#: The planted timer's input and its exact sum.
A = np.arange(1, 101, dtype=np.float32)
REFERENCE = 5050


class Planted:
    """A MethodTimer of planted figures: per stage (``"pilot"``, ``"cold"``,
    ``"batch"``) the ms of its runs, cycled over the reps; the per-pass ms
    of its cold samples, cycled; a result off by one at the stage named
    `wrong_at` (``"call"`` too).  ``gpu_calls`` records ``(buffers, warmup,
    reps, mode, batch)``, ``call_inputs`` each array given to
    :meth:`call`, ``calls_made`` how often a call ran."""

    name = "planted"

    def __init__(self, pilot: list[float], cold: list[float],
                 batch: list[float], passes: list[list[float]] | None = None,
                 wrong_at: str | None = None) -> None:
        self.times = {"pilot": pilot, "cold": cold, "batch": batch}
        self.passes, self.wrong_at = passes, wrong_at
        self.gpu_calls: list[tuple] = []
        self.call_inputs: list[Any] = []
        self.calls_made = 0

    def gpu(self, a, buffers, warmup, reps, mode, batch=1):
        stage = "pilot" if not self.gpu_calls else mode
        self.gpu_calls.append((buffers, warmup, reps, mode, batch))
        times = list(itertools.islice(itertools.cycle(self.times[stage]),
                                      reps))
        passes = None
        if mode == "cold" and self.passes is not None:
            passes = list(itertools.islice(itertools.cycle(self.passes),
                                           reps))
        value = np.float32(REFERENCE + (stage == self.wrong_at))
        return value, times, passes

    def call(self, x):
        self.call_inputs.append(x)

        def call():
            self.calls_made += 1
            return REFERENCE + (self.wrong_at == "call")
        return call


#: The planted figures, each with a median far from its mean: the pilot's
#: median 0.2 ms (its mean, 0.267 ms, would choose other reps), the cold
#: samples' 0.2 ms, the passes' 0.16 and 0.02 ms, the back-to-back runs'
#: 0.15 ms.
PILOT, COLD, BATCH = [0.1, 0.5, 0.2], [0.1, 0.2, 0.9], [0.15, 0.1, 0.6]
PASSES = [[0.1, 0.02], [0.16, 0.09], [0.5, 0.01]]
#: Wall seconds of the planted calls: their median 200 µs.
WALL = [1e-4, 2e-4, 9e-4]


@pytest.fixture
def wall(monkeypatch) -> list[int]:
    """ladder's wall_times with the planted WALL seconds: it makes the
    calls and returns the last one's value; the reps of each use are
    recorded in the list returned."""
    reps_seen: list[int] = []

    def wall_times(call, reps):
        reps_seen.append(reps)
        values = [call() for _ in range(reps)]
        return list(itertools.islice(itertools.cycle(WALL), reps)), \
            values[-1]
    monkeypatch.setattr(ladder, "wall_times", wall_times)
    return reps_seen


def test_measure_method_takes_three_timings_and_the_passes(wall):
    timer = Planted(PILOT, COLD, BATCH, PASSES)
    x = object()                                   # the device input
    got = ladder.measure_method(timer, A, REFERENCE, 7, x)
    estimate = 0.2                                 # the pilot's median
    reps = policy.choose_reps(estimate)
    batch = policy.choose_batch(estimate)
    call_reps = policy.choose_reps(estimate + policy.CALL_OVERHEAD_MS)
    assert (reps, batch) == (1000, 5)
    assert timer.gpu_calls == [
        (1, policy.PILOT_WARMUP, policy.PILOT_REPS, "cold", 1),
        (7, policy.WARMUP, reps, "cold", 1),
        (7, policy.WARMUP, policy.choose_reps(estimate * batch), "batch",
         batch)]
    assert timer.call_inputs == [x]
    assert wall == [policy.WARMUP, call_reps]
    assert timer.calls_made == policy.WARMUP + call_reps
    assert got == {"cold_us": pytest.approx(200.0),
                   "batch_us": pytest.approx(150.0),
                   "call_us": pytest.approx(200.0),
                   "pass_us": pytest.approx([160.0, 20.0]),
                   "reps": reps}
    assert list(got) == ["cold_us", "batch_us", "call_us", "pass_us", "reps"]


def test_measure_method_without_a_device_input_has_no_call_time(wall):
    timer = Planted(PILOT, COLD, BATCH)
    got = ladder.measure_method(timer, A, REFERENCE, 2)
    assert got["call_us"] is None and got["pass_us"] == []
    assert got["cold_us"] == pytest.approx(200.0)
    assert timer.call_inputs == [] and wall == []


def test_measure_method_without_passes_of_a_run_has_none():
    # cub: time_reduce gives an empty list per cold sample
    timer = Planted(PILOT, COLD, BATCH, passes=[[]])
    assert ladder.measure_method(timer, A, REFERENCE, 2)["pass_us"] == []


@pytest.mark.parametrize("stage, gpu_calls, calls_made", [
    ("pilot", 1, 0), ("cold", 2, 0), ("batch", 3, 0),
    ("call", 3, policy.WARMUP + policy.choose_reps(
        0.2 + policy.CALL_OVERHEAD_MS))])
def test_measure_method_stops_at_a_wrong_result(stage, gpu_calls,
                                                calls_made, wall):
    timer = Planted(PILOT, COLD, BATCH, PASSES, wrong_at=stage)
    assert ladder.measure_method(timer, A, REFERENCE, 7, object()) is None
    assert len(timer.gpu_calls) == gpu_calls      # nothing timed after it
    assert timer.calls_made == calls_made


def test_measure_method_sees_one_lost_element():
    # The check is exact: a timer that drops the last element of 2^20 + 3
    # float32 is reported wrong.
    a = data.random_array(np.random.default_rng(5), 2 ** 20 + 3, "float32")

    class DropsLast(Planted):
        def gpu(self, a, buffers, warmup, reps, mode, batch=1):
            self.gpu_calls.append((buffers, warmup, reps, mode, batch))
            return np.sum(a[:-1], dtype=np.float64), [0.001] * reps, None

    timer = DropsLast(PILOT, COLD, BATCH)
    assert ladder.measure_method(timer, a, data.reference_result(a),
                                 3) is None
    assert len(timer.gpu_calls) == 1


# ---------------------------------------------------------------------------
# run() on the fake device


def test_run_validates_before_touching_the_device(monkeypatch):
    monkeypatch.setattr(_cudareduce, "device_info", no_device)
    for kwargs in (dict(dtype="float8"), dict(threads=96),
                   dict(threads=True), dict(sizes=[0]), dict(sizes=[]),
                   dict(sizes=[1000, 2000, 1000]), dict(methods=["nope"]),
                   dict(peers=["numpy.sum"]),
                   dict(methods=["torch.sum"], peers=False),
                   dict(op="median"), dict(op="sum "),
                   dict(methods=["torch.sum"], op="prod"),
                   dict(peers=["torch.nanmin"], op="nanmin")):
        with pytest.raises(ValueError):
            ladder.run(**kwargs)


class _Bar:
    """A progress bar, recorded: its total, whether it shows, the labels of
    its steps, whether it was closed."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled
        self.labels: list[str] = []
        self.closed = False

    def step(self, label: str) -> None:
        self.labels.append(label)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def bars(monkeypatch) -> list[_Bar]:
    """ladder's Progress replaced by :class:`_Bar`: the bars made."""
    made: list[_Bar] = []

    def progress(total: int, enabled: bool) -> _Bar:
        made.append(_Bar(total, enabled))
        return made[-1]
    monkeypatch.setattr(ladder, "Progress", progress)
    return made


def _expected(fake, method: str, n: int, dtype: str = "float32",
              threads: int = 256) -> dict:
    """The figures run() must make of the fake device's `method` at n."""
    a = np.empty(n, dtype)
    cold = fake.cold_ms(method, a)
    passes = [] if method == "cub" else fake.passes_ms(method, a, threads)
    return {"cold_us": pytest.approx(cold * 1e3),
            "batch_us": pytest.approx(cold * 0.8 * 1e3),
            "pass_us": pytest.approx([p * 1e3 for p in passes]),
            "reps": policy.choose_reps(cold)}


def test_run_with_a_fake_device(fake_device, bars):
    doc = ladder.run(sizes=[1000, 1 << 16], peers=True, progress=True, seed=1)
    schema.validate_document(doc)
    info = {**fake_device.device_info(), "driver": FAKE_DRIVER}
    assert doc["device"] == schema.make_document(
        info, doc["floor"], [], [], timing=doc["timing"])["device"]
    assert doc["device"]["driver"] == FAKE_DRIVER
    # the floor, timed in the run
    assert doc["floor"]["empty_cold_us"] == pytest.approx(
        FAKE_EMPTY_MS["cold"] * 1e3)
    assert doc["floor"]["empty_batch_us"] == pytest.approx(
        FAKE_EMPTY_MS["batch"] * 1e3)
    assert doc["floor"]["read_bytes"] == floor.READ_CEILING_BYTES
    # one read probe per size, timed once each way
    for nbytes in (4000, 1 << 18):
        timed = [c[5] for c in fake_device.probe_calls
                 if c[:2] == ("read", nbytes) and c[4] == floor.PROBE_REPS]
        assert timed == ["cold", "batch"]
    assert doc["probes"] == [floor.measure_probe(b, info)
                             for b in (4000, 1 << 18)]
    got = [(r["n"], r["method"], r["correct"]) for r in doc["results"]]
    # every method of ours (the 8 steps, then cub), then the peer
    assert got == [(n, m, m != "unroll_warp") for n in (1000, 1 << 16)
                   for m in STEPS + ["cub", "torch.sum"]]
    for r in doc["results"]:
        if r["method"] == "unroll_warp":
            assert r == schema.make_result(
                "unroll_warp", "float32", r["n"], 256, cold_us=None,
                batch_us=None, call_us=None, pass_us=[], reps=0,
                correct=False)
        elif r["method"] != "torch.sum":
            assert {k: r[k] for k in ("cold_us", "batch_us", "pass_us",
                                      "reps")} == _expected(
                fake_device, r["method"], r["n"])
            assert r["call_us"] is None          # no device arrays
    # the wrong method ran its pilot only: never timed
    pilots = [c for c in fake_device.reduce_calls if c[0] == "unroll_warp"]
    assert [c[3:] for c in pilots] == [
        (1, policy.PILOT_WARMUP, policy.PILOT_REPS, "cold", 1)] * 2
    # the others: the pilot, then cold and back to back over the rotation
    for n in (1000, 1 << 16):
        calls = [c[3:] for c in fake_device.reduce_calls
                 if c[:2] == ("sequential", n)]
        estimate = fake_device.cold_ms("sequential", np.empty(n, "f4"))
        buffers = policy.rotation_buffers(4 * n, 1 << 20, 1 << 33)
        batch = policy.choose_batch(estimate)
        assert calls == [
            (1, policy.PILOT_WARMUP, policy.PILOT_REPS, "cold", 1),
            (buffers, policy.WARMUP, policy.choose_reps(estimate), "cold", 1),
            (buffers, policy.WARMUP, policy.choose_reps(estimate * batch),
             "batch", batch)]
    # the peer: timed the same way, its figures its own
    (torch,) = fake_device.peers
    batch = policy.choose_batch(torch.ms)
    buffers = policy.rotation_buffers(4000, 1 << 20, 1 << 33)
    assert torch.calls[:3] == [
        (1000, 1, policy.PILOT_WARMUP, policy.PILOT_REPS, "cold", 1),
        (1000, buffers, policy.WARMUP, policy.choose_reps(torch.ms), "cold",
         1),
        (1000, buffers, policy.WARMUP, policy.choose_reps(torch.ms * batch),
         "batch", batch)]
    assert len(torch.calls) == 6                 # and the same at 2^16
    peer_rows = [r for r in doc["results"] if r["method"] == "torch.sum"]
    assert all(r["cold_us"] == pytest.approx(1e3 * torch.ms)
               and r["pass_us"] == [] for r in peer_rows)
    assert "WRONG" in figures.format_table(doc)
    # the progress bar: one step per (size, method) timed
    (bar,) = bars
    assert (bar.total, bar.enabled, bar.closed) == (20, True, True)
    assert bar.labels == [
        f"n={n} {m}" for n in ("1000", "2^16")
        for m in STEPS + ["cub", "torch.sum"]]
    assert doc["timing"]["method"] == ladder.TIMING_METHOD.format(
        arrays="none: no CuPy or PyTorch, so no call time")


def test_run_times_calls_on_device_arrays(fake_device_arrays):
    doc = ladder.run(methods=["sequential", "cub", "torch.sum"],
                     sizes=[1000], progress=False, seed=6)
    schema.validate_document(doc)
    assert all(r["call_us"] > 0 for r in doc["results"])
    assert "numpy's" in doc["timing"]["method"]
    a = np.empty(1000, np.float32)
    expected = []
    for method in ("sequential", "cub"):
        estimate = fake_device_arrays.cold_ms(method, a)
        expected += [(method, 256)] * (policy.WARMUP + policy.choose_reps(
            estimate + policy.CALL_OVERHEAD_MS))
    assert fake_device_arrays.sum_calls == expected
    # the peer's call gets the same device array
    (torch,) = fake_device_arrays.peers
    (x,) = torch.call_inputs
    assert isinstance(x, np.ndarray) and x.size == 1000


def test_the_default_size_is_the_rules(fake_device, monkeypatch):
    asked = []

    def default_n(itemsize, empty_cold_us, device):
        asked.append((itemsize, empty_cold_us, device))
        return 1 << 12, "default n = 2^12: planted"
    monkeypatch.setattr(ladder, "default_n", default_n)
    doc = ladder.run(methods=["sequential", "cub"], dtype="float64",
                     peers=False, progress=False)
    schema.validate_document(doc)
    assert [(r["method"], r["n"]) for r in doc["results"]] == [
        ("sequential", 1 << 12), ("cub", 1 << 12)]
    assert doc["timing"]["default_n_rule"] == "default n = 2^12: planted"
    assert doc["timing"]["default_n"] == 1 << 12
    assert [p["bytes"] for p in doc["probes"]] == [8 << 12]
    info = {**fake_device.device_info(), "driver": FAKE_DRIVER}
    assert asked == [(8, doc["floor"]["empty_cold_us"], info)]
    # sizes given: measured at those, the rule still stated
    doc = ladder.run(methods=["fast"], sizes=[1000], peers=False,
                     progress=False)
    assert [r["n"] for r in doc["results"]] == [1000]
    assert doc["timing"]["default_n_rule"] == "default n = 2^12: planted"
    assert doc["timing"]["default_n"] == 1 << 12


def test_the_default_size_on_the_fake_device(fake_device):
    # The fake's empty kernel takes 0.5 µs cold, its read 0.5 µs plus
    # 1,500 GB/s: 25 empty kernels (12.5 µs) read 32 MiB (22.9 µs) but not
    # 16 MiB (11.7 µs): 2^23 float32.
    doc = ladder.run(methods=["fast"], peers=False, progress=False)
    schema.validate_document(doc)
    assert [r["n"] for r in doc["results"]] == [1 << 23]
    rule = doc["timing"]["default_n_rule"]
    assert rule.startswith("default n = 2^23: ")
    assert "22.9 µs cold over 32 MiB" in rule and "0.50 µs" in rule


def test_run_times_fast_and_cub_and_tables_them(fake_device):
    """A run times fast and cub like the steps; its table chains fast onto
    multi_element and shows cub as the reference, after the steps and before
    the peers."""
    doc = ladder.run(sizes=[1 << 12], peers=True, progress=False, seed=4)
    rows = list(doc["results"])
    assert {r["method"] for r in rows} == set(METHODS + ["torch.sum"])
    t = {r["method"]: r["cold_us"] for r in rows}
    factor = 1 + (1 << 14) / 1e6
    assert t["fast"] == pytest.approx(1e3 * FAKE_MS["fast"] * factor)
    assert t["cub"] == pytest.approx(1e3 * FAKE_MS["cub"] * factor)
    (table,) = report_tables(figures.format_table(doc))
    cells = {line.split()[0]: line.split()[1:] for line in table[2:]}
    assert list(cells) == STEPS + ["cub", "torch.sum"]
    assert cells["unroll_warp"][0] == "WRONG"
    # cold µs, GB/s, % read, b2b µs, GB/s, % read, call µs, 1st pass µs,
    # rest µs, step, cumulative
    assert cells["fast"][9:] == [
        f"{FAKE_MS['multi_element'] / FAKE_MS['fast']:.2f}×",
        f"{FAKE_MS['interleaved_divergent'] / FAKE_MS['fast']:.2f}×"]
    assert cells["fast"][6] == "-"               # no call time
    assert cells["cub"][9:] == [
        "reference",
        f"{FAKE_MS['interleaved_divergent'] / FAKE_MS['cub']:.2f}×"]
    assert cells["cub"][7:9] == ["-", "-"]       # no passes of its own
    assert cells["torch.sum"][9] == "peer"


def test_run_single_size_no_progress_and_named_peer(fake_device, capsys,
                                                   bars):
    doc = ladder.run(methods=["multi_element", "cupy.sum", "torch.sum"],
                     sizes=1 << 10, progress=True)
    assert [r["method"] for r in doc["results"]] == ["multi_element",
                                                     "torch.sum"]
    assert [(b.total, b.enabled) for b in bars] == [(2, False)]
    err = capsys.readouterr().err
    assert err.strip() == ("cudareduce.bench: cupy.sum skipped: not "
                           "importable (fake)")


def test_run_int_dtype_checks_exactly(fake_device):
    doc = ladder.run(sizes=[777], dtype="int32", peers=False, progress=False)
    assert [r["method"] for r in doc["results"]] == METHODS
    assert [r["correct"] for r in doc["results"]] == \
        [m != "unroll_warp" for m in METHODS]


def test_resolve_selection():
    peers = list(names.peers_of("sum"))
    assert ladder._resolve(None, True) == (METHODS, peers, False)
    assert ladder._resolve(None, False) == (METHODS, [], False)
    assert ladder._resolve(["cub", "fast", "torch.sum"], True) == \
        (["fast", "cub"], ["torch.sum"], True)
    assert ladder._resolve(["multi_element", "sequential"], True) == \
        (["sequential", "multi_element"], peers, False)
    assert ladder._resolve(["cupy.sum"], True) == ([], ["cupy.sum"], True)
    assert ladder._resolve(None, ["torch.sum"]) == (METHODS, ["torch.sum"],
                                                    True)


def test_resolve_selection_of_another_op():
    """The peers are the op's: named by its functions, torch's left out
    where it has none."""
    assert ladder._resolve(None, True, "min") == (
        METHODS, ["torch.amin", "cupy.min"], False)
    assert ladder._resolve(["fast", "cupy.nanprod"], True, "nanprod") == (
        ["fast"], ["cupy.nanprod"], True)
    assert ladder._resolve(None, True, "nanmax") == (METHODS, [], False)
    with pytest.raises(ValueError, match=r"unknown method 'torch\.sum'; "
                       r"valid methods of prod: .*torch\.prod, cupy\.prod"):
        ladder._resolve(["fast", "torch.sum"], True, "prod")
    with pytest.raises(ValueError, match=r"unknown peer 'torch\.nanmin'; "
                       r"peers of nanmin: none$"):
        ladder._resolve(None, ["torch.nanmin"], "nanmin")


@pytest.mark.parametrize("op", names.OPS)
def test_run_times_the_op_on_its_data(fake_device, op):
    """Every op: time_reduce of the op on the op's data, checked exactly
    (the wrong method still caught), the op's peer, each result naming its
    op, one table titled with it."""
    doc = ladder.run(["sequential", "unroll_warp", "fast"], sizes=[1000],
                     dtype="int16", progress=False, seed=3, op=op)
    schema.validate_document(doc)
    assert set(fake_device.ops) == {op}
    torch = [p for p in names.peers_of(op) if p.startswith("torch.")]
    assert [(r["method"], r["op"], r["correct"]) for r in doc["results"]] \
        == [("sequential", op, True), ("unroll_warp", op, False),
            ("fast", op, True)] + [(p, op, True) for p in torch]
    assert [p.name for p in fake_device.peers] == torch
    assert fake_device.peer_dtypes == ["int16"] * len(torch)
    (table,) = doc.table().split("\n\n")[1:]
    label = "int16" if op == "sum" else f"int16 {op}"
    assert table.startswith(f"{label}, n = 1,000, 256 threads per block\n")


def test_run_reduces_the_ops_own_data(fake_device, monkeypatch):
    """The data of the run are random_array's of the op and dtype, the
    reference reference_result's of them."""
    made, references = [], []
    real_data, real_reference = ladder.random_array, ladder.reference_result

    def random_array(rng, n, dtype, op):
        made.append((n, dtype, op))
        return real_data(rng, n, dtype, op)

    def reference_result(a, op):
        references.append((a.dtype.name, op))
        return real_reference(a, op)
    monkeypatch.setattr(ladder, "random_array", random_array)
    monkeypatch.setattr(ladder, "reference_result", reference_result)
    ladder.run(["fast"], sizes=[100, 200], dtype="float16", peers=False,
               progress=False, op="nanmax")
    assert made == [(100, "float16", "nanmax"), (200, "float16", "nanmax")]
    assert references == [("float16", "nanmax")] * 2


@pytest.mark.parametrize("dtype", names.DTYPES)
def test_run_takes_every_dtype_leaving_out_a_peer_without_it(fake_device,
                                                             capsys, dtype):
    """A peer that takes no such dtype (the fake torch: uint16, uint32,
    uint64) is left out of the run, silently unless named."""
    doc = ladder.run(["fast"], sizes=[64], dtype=dtype, progress=False)
    takes = dtype not in ("uint16", "uint32", "uint64")
    assert [r["method"] for r in doc["results"]] == \
        ["fast"] + ["torch.sum"] * takes
    assert all(r["dtype"] == dtype and r["correct"]
               for r in doc["results"])
    assert capsys.readouterr().err == ""
    ladder.run(["fast", "torch.sum"], sizes=[64], dtype=dtype,
               progress=False)
    assert ("torch.sum skipped: takes no" in capsys.readouterr().err) \
        == (not takes)


def test_run_returns_results_and_progress_false_is_silent(fake_device, capsys):
    results = ladder.run(sizes=[1000, 2000], peers=False, progress=False,
                         seed=2)
    assert type(results) is Results
    assert results.sizes == [1000, 2000]
    assert capsys.readouterr().err == ""


def test_device_info_adds_the_driver(monkeypatch):
    info = {"ordinal": 0, "name": "g", "sm_count": 2, "l2_bytes": 1,
            "total_bytes": 2}
    monkeypatch.setattr(_cudareduce, "device_info", lambda: info)
    monkeypatch.setattr(ladder, "_driver", lambda: "580.1")
    got = ladder.device_info()
    assert got == {**info, "driver": "580.1"}
    assert info == {"ordinal": 0, "name": "g", "sm_count": 2, "l2_bytes": 1,
                    "total_bytes": 2}


def _nvidia_smi(tmp_path, monkeypatch, script: str | None) -> None:
    """PATH holds only `tmp_path`, with an nvidia-smi running `script`
    (none for None)."""
    if script is not None:
        smi = tmp_path / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
        smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(tmp_path))


@pytest.mark.skipif(os.name != "posix", reason="a shell-script nvidia-smi")
@pytest.mark.parametrize("script, driver", [
    (None, None),
    ('[ "$*" = "--query-gpu=driver_version --format=csv,noheader" ] && '
     'printf "580.159.04\\n580.159.04\\n"', "580.159.04"),
    ("exit 9", None), ("printf '\\n'", None)])
def test_the_driver_is_nvidia_smis(tmp_path, monkeypatch, script, driver):
    _nvidia_smi(tmp_path, monkeypatch, script)
    assert ladder._driver() == driver


@pytest.mark.parametrize("name, n, dtype, threads, want", [
    ("fast", 1 << 28, "float32", None, 1024),
    ("fast", 1 << 20, "float32", None, 512),     # 4 MiB
    ("fast", 1 << 20, "int8", None, 256),
    ("cub", 1 << 28, "float64", None, 1024),     # listed beside fast's
    ("torch.prod", 1 << 22, "float32", None, 1024),
    ("sequential", 1 << 28, "float32", None, 256),
    ("fast", 1 << 28, "float32", 128, 128),
])
def test_recorded_threads(name, n, dtype, threads, want):
    """A result records the block size its method ran at: the library's
    default for the size when none is named (cub and the peers: fast's)."""
    assert ladder.recorded_threads(name, n, dtype, threads, 132) == want
