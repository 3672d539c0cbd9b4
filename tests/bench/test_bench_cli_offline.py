"""cudareduce.bench.cli without a GPU: the command line's plumbing with the
modes replaced by fakes (``run``, ``compare``, ``run_host`` as the command
line looks them up, in cudareduce.bench.cli; ``counters.collect`` in its
module, giving a recorded profile), with the real ``run`` on a fake device,
and the no-GPU exit in a subprocess that hides any device."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import cudareduce
from cudareduce.bench import figures, names, schema
from support.bench_data import (PNG_MAGIC, child_env, comparison,  # noqa: F401
                                counters_document, fake_device, host_document,
                                needs_matplotlib, no_device, results, sample)
from cudareduce import _cudareduce
from support.axis_data import axis_document, default_outcome
from cudareduce.bench import axes, cli, counters, host, peers
from cudareduce.bench.sizes import PAPER_N
from cudareduce.bench.results import Results


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
    for option in ("--n", "--dtype", "--op", "--threads", "--methods",
                   "--sizes", "--json", "--plot", "--no-peers", "--axis"):
        assert option in proc.stdout
    # every op and every dtype offered
    choices = "".join(proc.stdout.split())
    assert "{" + ",".join(names.OPS) + "}" in choices
    assert "{" + ",".join(names.DTYPES) + "}" in choices


@pytest.mark.parametrize("argv", [
    ["--methods", "bogus"], ["--methods", ","], ["--threads", "100"],
    ["--threads", "2048"], ["--dtype", "complex256"], ["--sizes", "2^12..2^10"],
    ["--n", "0"], ["--n", "2^10", "--sizes", "2^10..2^12"],
    ["--n", "1e6"], ["--methods", "torch.sum", "--no-peers"],
    ["--op", "median"], ["--op", "Sum"], ["--dtype", "float8"],
    ["--op", "prod", "--methods", "torch.sum"],
    ["--op", "nanmin", "--methods", "fast,torch.nanmin"]])
def test_cli_rejects_bad_arguments(argv, capsys, monkeypatch):
    monkeypatch.setattr(_cudareduce, "device_info", no_device)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


class _FakeRun:
    def __init__(self, document=None, error=None):
        self.document, self.error, self.calls = document, error, []

    def __call__(self, methods, sizes, dtype, threads, peers, progress, seed,
                 op):
        self.calls.append(dict(methods=methods, sizes=sizes, dtype=dtype,
                               threads=threads, peers=peers,
                               progress=progress, seed=seed, op=op))
        if self.error is not None:
            raise self.error
        return self.document


def _patch_run(monkeypatch, fake):
    def run(methods=None, sizes=None, dtype="float32",
            threads=256, peers=True, progress=True, *, seed=None, op="sum"):
        return fake(methods, sizes, dtype, threads, peers, progress, seed,
                    op)
    monkeypatch.setattr(cli, "run", run)


@needs_matplotlib
def test_cli_defaults_and_outputs(sample, tmp_path, capsys, monkeypatch):
    fake = _FakeRun(sample)
    _patch_run(monkeypatch, fake)
    json_path, plot_path = tmp_path / "r.json", tmp_path / "r.png"
    assert cli.main(["--json", str(json_path), "--plot",
                     str(plot_path)]) == 0
    # no size given: run() chooses this GPU's default
    assert fake.calls == [dict(methods=None, sizes=None, dtype="float32",
                               threads=256, peers=True, progress=True,
                               seed=None, op="sum")]
    out, err = capsys.readouterr()
    assert out == figures.format_table(sample) + "\n"
    assert "1 result(s) WRONG: unroll_complete (n=65536)" in err
    assert json.loads(json_path.read_text(encoding="utf-8")) == sample
    for suffix in ("-speedup.png", "-bandwidth.png"):
        png = tmp_path / f"r{suffix}"
        assert png.read_bytes().startswith(PNG_MAGIC)


def test_cli_options_reach_run(sample, monkeypatch, capsys):
    fake = _FakeRun(sample)
    _patch_run(monkeypatch, fake)
    assert cli.main(["--sizes", "2^10..2^12,5000", "--dtype", "int64",
                     "--threads", "512", "--methods",
                     "sequential, multi_element,torch.sum", "--seed",
                     "7"]) == 0
    assert fake.calls[0] == dict(
        methods=["sequential", "multi_element", "torch.sum"],
        sizes=[1024, 2048, 4096, 5000], dtype="int64", threads=512,
        peers=True, progress=True, seed=7, op="sum")
    assert cli.main(["--n", "2^20", "--no-peers"]) == 0
    assert fake.calls[1]["peers"] is False
    assert cli.main(["--n", "2^22"]) == 0
    assert cli.main(["--n", "1_000"]) == 0
    # --n is one size, as a list
    assert [c["sizes"] for c in fake.calls] == [
        [1024, 2048, 4096, 5000], [1 << 20], [4194304], [1000]]


@pytest.mark.parametrize("op", names.OPS)
@pytest.mark.parametrize("dtype", ["bool", "uint16", "float16"])
def test_cli_op_and_dtype_reach_run(op, dtype, sample, monkeypatch, capsys):
    fake = _FakeRun(sample)
    _patch_run(monkeypatch, fake)
    assert cli.main(["--op", op, "--dtype", dtype, "--n", "2^10"]) == 0
    assert (fake.calls[0]["op"], fake.calls[0]["dtype"]) == (op, dtype)


@pytest.mark.parametrize("error, text", [
    (cudareduce.CudaError("no usable CUDA device: cudaErrorNoDevice"),
     "cudareduce.bench: no usable CUDA device: cudaErrorNoDevice"),
    (MemoryError("cudaErrorMemoryAllocation"),
     "cudareduce.bench: out of memory: cudaErrorMemoryAllocation")])
def test_cli_failures_exit_1_without_traceback(error, text, monkeypatch,
                                               capsys):
    _patch_run(monkeypatch, _FakeRun(error=error))
    assert cli.main([]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == text


def test_cli_unwritable_json_exits_1(sample, tmp_path, monkeypatch, capsys):
    _patch_run(monkeypatch, _FakeRun(sample))
    assert cli.main(["--json", str(tmp_path / "no" / "such" / "r.json")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_plot_paths():
    assert cli._plot_paths("out.png") == ("out-speedup.png",
                                          "out-bandwidth.png")
    assert cli._plot_paths("dir/run") == ("dir/run-speedup.png",
                                          "dir/run-bandwidth.png")
    assert cli._plot_paths("a.svg") == ("a-speedup.svg", "a-bandwidth.svg")


def test_results_table_is_the_clis(results, sample, monkeypatch, capsys):
    assert results.table() == figures.format_table(sample)
    assert str(results) == results.table()
    _patch_run(monkeypatch, _FakeRun(results))
    assert cli.main([]) == 0
    assert capsys.readouterr().out == results.table() + "\n"


def test_cli_with_the_real_run(fake_device, capsys, tmp_path):
    json_path = tmp_path / "r.json"
    assert cli.main(["--sizes", "2^10,2^11", "--no-peers", "--seed", "3",
                     "--json", str(json_path)]) == 0
    out, err = capsys.readouterr()
    results = Results.from_json(json_path)
    assert out == results.table() + "\n"
    assert results.sizes == [1024, 2048]
    assert "2 result(s) WRONG: unroll_warp (n=1024), unroll_warp (n=2048)" \
        in err
    assert f"wrote {json_path}" in err


def test_cli_with_the_real_run_of_another_op(fake_device, capsys,
                                             tmp_path):
    json_path = tmp_path / "r.json"
    assert cli.main(["--sizes", "2^10", "--op", "prod", "--dtype", "uint8",
                     "--methods", "fast,cub,torch.prod", "--seed", "3",
                     "--json", str(json_path)]) == 0
    out, _ = capsys.readouterr()
    results = Results.from_json(json_path)
    assert out == results.table() + "\n"
    assert [(r["method"], r["op"], r["dtype"], r["correct"])
            for r in results["results"]] == [
        ("fast", "prod", "uint8", True), ("cub", "prod", "uint8", True),
        ("torch.prod", "prod", "uint8", True)]
    assert "\nuint8 prod, n = 1,024 (2^10), 256 threads per block\n" in out


# ---------------------------------------------------------------------------
# --peers and --host


def test_peers_refuses_other_selections(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--peers", "--n", "1000"])
    assert info.value.code == 2
    assert "--peers chooses its own" in capsys.readouterr().err


def test_peers_prints_the_comparison_and_writes_all_of_it(tmp_path, capsys,
                                                          monkeypatch):
    """--peers --json writes the whole comparison, the results document and
    the latencies, for benchmarks/targets.py to read."""
    made = comparison()
    calls = []

    def compare(threads, progress, seed, op, dtypes):
        calls.append((threads, progress, seed, op, dtypes))
        return made
    monkeypatch.setattr(cli, "compare", compare)
    path = tmp_path / "peers.json"
    assert cli.main(["--peers", "--threads", "512", "--seed", "4",
                     "--json", str(path)]) == 0
    assert calls == [(512, True, 4, "sum", list(peers.COMPARE_DTYPES))]
    out, err = capsys.readouterr()
    assert out == peers.format_comparison(made) + "\n"
    assert f"wrote {path}" in err
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written == made
    schema.validate_document(written["results"])


def test_threads_default_is_the_methods_own_with_peers_only(monkeypatch,
                                                           results):
    """Without --threads, --peers times each method at the block size a
    caller gets (None); the ladder mode keeps one size for every step."""
    seen = {}

    def compare(threads, progress, seed, op, dtypes):
        seen["compare"] = threads
        return comparison()

    def run(methods, sizes, dtype, threads, **kwargs):
        seen["run"] = threads
        return results
    monkeypatch.setattr(cli, "compare", compare)
    monkeypatch.setattr(cli, "run", run)
    assert cli.main(["--peers"]) == 0
    assert cli.main([]) == 0
    assert seen == {"compare": None, "run": cudareduce.DEFAULT_THREADS}


def test_peers_of_another_op(tmp_path, capsys, monkeypatch):
    """--peers --op prod: compare of prod; its report names the op, its
    document holds the products and the float32 sum baseline."""
    made = comparison(op="prod")
    calls = []

    def compare(threads, progress, seed, op, dtypes):
        calls.append((op, dtypes))
        return made
    monkeypatch.setattr(cli, "compare", compare)
    path = tmp_path / "prod.json"
    assert cli.main(["--peers", "--op", "prod", "--json", str(path)]) == 0
    assert calls == [("prod", list(peers.COMPARE_DTYPES))]
    out = capsys.readouterr().out
    assert out == peers.format_comparison(made) + "\n"
    assert "\nprod: fast against cub, the peers and the floor, GPU time " \
        "cold" in out
    assert "fast / torch.prod" in out and "End to end" not in out
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written == made
    assert {r["op"] for r in written["results"]["results"]} == {"prod",
                                                                "sum"}


def test_peers_compare_the_dtypes_named(capsys, monkeypatch):
    """--peers --dtype takes a comma list (the comparison's dtypes, in
    that order); an unknown or repeated one is refused before any run, as
    is a list without --peers."""
    calls = []

    def compare(threads, progress, seed, op, dtypes):
        calls.append((op, dtypes))
        return comparison(op=op, dtypes=tuple(dtypes))
    monkeypatch.setattr(cli, "compare", compare)
    assert cli.main(["--peers", "--op", "max", "--dtype",
                     "complex128, complex64"]) == 0
    assert calls == [("max", ["complex128", "complex64"])]
    assert "complex128  2^20" in capsys.readouterr().out.replace("×", "x")
    for argv, message in (
            (["--peers", "--dtype", "complex64,float8"],
             "unknown dtype 'float8'"),
            (["--peers", "--dtype", "int8,int8"], "names a dtype twice"),
            (["--peers", "--dtype", ""], "unknown dtype ''"),
            (["--dtype", "int8,int32"],
             "unknown dtype 'int8,int32' (choose from bool, int8"),
            (["--host", "--dtype", "float32"],
             "--host combines with --sizes, --json and --seed only")):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2
        assert message in capsys.readouterr().err, argv
    assert len(calls) == 1


def test_host_prints_the_report_and_writes_the_document(tmp_path, capsys,
                                                        monkeypatch):
    document = host_document()
    calls = []

    def run_host(sizes, *, seed):
        calls.append((sizes, seed))
        return document
    monkeypatch.setattr(cli, "run_host", run_host)
    path = tmp_path / "host.json"
    assert cli.main(["--host", "--json", str(path)]) == 0
    assert cli.main(["--host", "--sizes", "2^20,2^22", "--seed", "5"]) == 0
    assert calls == [(host.HOST_SIZES, None), ([1 << 20, 1 << 22], 5)]
    out, _ = capsys.readouterr()
    assert out == 2 * (host.format_host(document) + "\n")
    assert json.loads(path.read_text(encoding="utf-8")) == document


def test_host_unwritable_json_exits_1(tmp_path, capsys, monkeypatch):
    document = host_document()
    monkeypatch.setattr(cli, "run_host", lambda sizes, *, seed: document)
    assert cli.main(["--host", "--json",
                     str(tmp_path / "no" / "host.json")]) == 1
    out, err = capsys.readouterr()
    assert out == host.format_host(document) + "\n"
    assert err.startswith("cudareduce.bench: ") and "host.json" in err


@pytest.mark.parametrize("argv", [["--host", "--peers"],
                                  ["--host", "--methods", "fast"],
                                  ["--host", "--plot", "x.png"],
                                  ["--host", "--no-peers"],
                                  ["--host", "--n", "2^20"],
                                  ["--host", "--dtype", "int64"],
                                  ["--host", "--threads", "512"]])
def test_host_refuses_other_options(argv, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_host", no_device)
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert "--host combines with" in capsys.readouterr().err


def test_host_times_sums_only(capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_host", no_device)
    with pytest.raises(SystemExit) as info:
        cli.main(["--host", "--op", "max"])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "error: --host times sums only (beside numpy.sum): --op max is for "
        "the other modes\n")
    document = host_document()
    monkeypatch.setattr(cli, "run_host", lambda sizes, *, seed: document)
    assert cli.main(["--host", "--op", "sum"]) == 0


@pytest.mark.parametrize("argv, mode", [([], "run"), (["--peers"], "compare"),
                                        (["--host"], "run_host"),
                                        (["--axis"], "run_axes")])
@pytest.mark.parametrize("error, status, said", [
    (MemoryError("cudaErrorMemoryAllocation"), 1,
     "out of memory: cudaErrorMemoryAllocation"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (cudareduce.CudaError("no usable CUDA device: planted"), 1,
     "no usable CUDA device: planted")])
def test_every_mode_fails_the_same_way(argv, mode, error, status, said,
                                       capsys, monkeypatch):
    def fails(*args, **kwargs):
        raise error
    monkeypatch.setattr(cli, mode, fails)
    assert cli.main(argv) == status
    err = capsys.readouterr().err
    assert err == f"{cli.PROG}: {said}\n" and "Traceback" not in err


# ---------------------------------------------------------------------------
# --axis


class _FakeRunAxes:
    """run_axes, recorded: returns `document`."""

    def __init__(self, document):
        self.document, self.calls = document, []

    def __call__(self, op, dtypes, *, progress, seed, methods, peers):
        self.calls.append((op, dtypes, progress, seed, methods, peers))
        return self.document


def test_axis_prints_the_report_and_writes_the_document(tmp_path, capsys,
                                                        monkeypatch):
    document = axis_document()
    fake = _FakeRunAxes(document)
    monkeypatch.setattr(cli, "run_axes", fake)
    path = tmp_path / "axis.json"
    assert cli.main(["--axis", "--json", str(path)]) == 0
    assert cli.main(["--axis", "--op", "prod", "--dtype", "float16, int8",
                     "--seed", "4"]) == 0
    assert cli.main(["--axis", "--methods", "fast, cub", "--no-peers"]) == 0
    assert fake.calls == [("sum", ["float32"], True, None, None, True),
                          ("prod", ["float16", "int8"], True, 4, None, True),
                          ("sum", ["float32"], True, None, ["fast", "cub"],
                           False)]
    out, _ = capsys.readouterr()
    assert out == 3 * (axes.format_axes(document) + "\n")
    assert json.loads(path.read_text(encoding="utf-8")) == document


@needs_matplotlib
def test_axis_plot_is_written_at_its_path(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_axes", _FakeRunAxes(axis_document()))
    png = tmp_path / "axis.png"
    assert cli.main(["--axis", "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert capsys.readouterr().err.endswith(f"wrote {png}\n")


def test_axis_says_what_was_wrong_and_exits_0(capsys, monkeypatch):
    document = axis_document(lambda m, d, s, a: None if m == "fast"
                             and s[0] == 32 else
                             default_outcome(m, d, s, a))
    monkeypatch.setattr(cli, "run_axes", _FakeRunAxes(document))
    assert cli.main(["--axis"]) == 0
    assert capsys.readouterr().err == (
        "cudareduce.bench: 1 result(s) WRONG: fast (float32 argmax "
        "(32, 131072) axis 1)\n")


def test_axis_without_cupy_exits_1(capsys, monkeypatch):
    def no_cupy(*args, **kwargs):
        raise ImportError("the --axis mode needs CuPy (its stream, events "
                          "and copies): planted")
    monkeypatch.setattr(cli, "run_axes", no_cupy)
    assert cli.main(["--axis"]) == 1
    assert capsys.readouterr().err == (
        "cudareduce.bench: the --axis mode needs CuPy (its stream, events "
        "and copies): planted\n")


@pytest.mark.parametrize("argv", [["--axis", "--peers"],
                                  ["--axis", "--host"],
                                  ["--axis", "--counters"],
                                  ["--axis", "--n", "2^20"],
                                  ["--axis", "--sizes", "2^10..2^12"],
                                  ["--axis", "--threads", "512"]])
def test_axis_refuses_other_options(argv, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_axes", no_device)
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert "--axis combines with --op, --dtype, --methods, --no-peers, " \
        "--json, --plot and --seed only" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["--methods", "fast,bogus"], "unknown method 'bogus'"),
    (["--methods", "torch.sum", "--no-peers"],
     "peers named in methods, but peers=False")])
def test_axis_refuses_methods_of_no_case(argv, said, capsys):
    """The real run_axes refuses them before it looks for a device."""
    with pytest.raises(SystemExit) as info:
        cli.main(["--axis", *argv])
    assert info.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("dtype, said", [("float8", "unknown dtype 'float8'"),
                                         ("int8,int8", "names a dtype twice")])
def test_axis_refuses_bad_dtypes(dtype, said, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_axes", no_device)
    with pytest.raises(SystemExit) as info:
        cli.main(["--axis", "--dtype", dtype])
    assert info.value.code == 2
    assert said in capsys.readouterr().err


def test_a_dtype_list_needs_peers_or_axis(capsys, monkeypatch):
    monkeypatch.setattr(_cudareduce, "device_info", no_device)
    with pytest.raises(SystemExit):
        cli.main(["--dtype", "int8,int16"])
    assert "a list only with --peers, --axis or --exact" in \
        capsys.readouterr().err


# ---------------------------------------------------------------------------
# --counters


class _FakeCollect:
    """counters.collect, recorded: returns `document` or raises `error`."""

    def __init__(self, document=None, error=None):
        self.document, self.error, self.calls = document, error, []

    def __call__(self, methods, n, dtype, threads, *, op):
        self.calls.append((methods, n, dtype, threads, op))
        if self.error is not None:
            raise self.error
        return self.document


def _claims(document) -> str:
    return "\n".join(["Claims"] + [
        f"  {'yes' if ok else 'NO '}  {claim}"
        for claim, ok in counters.check_ideas(document)])


def test_counters_prints_the_table_and_the_claims(tmp_path, capsys,
                                                  monkeypatch):
    document = counters_document()
    collect = _FakeCollect(document)
    monkeypatch.setattr(counters, "collect", collect)
    assert cli.main(["--counters"]) == 0
    # the default: every method, Harris's size
    assert collect.calls == [(None, PAPER_N, "float32", 256, "sum")]
    out, err = capsys.readouterr()
    assert out == counters.format_counters(document) + "\n\n" \
        + _claims(document) + "\n"
    assert out.count("\n  yes  ") == len(counters.IDEAS) and err == ""
    path = tmp_path / "counters.json"
    assert cli.main(["--counters", "--n", "2^20", "--dtype", "int32",
                     "--threads", "128", "--methods", "sequential,first_add",
                     "--op", "nanmax", "--json", str(path)]) == 0
    assert collect.calls[1] == (["sequential", "first_add"], 1 << 20,
                                "int32", 128, "nanmax")
    assert json.loads(path.read_text(encoding="utf-8")) == document


def test_counters_says_which_claims_fail(capsys, monkeypatch):
    document = counters_document()
    grid = "launch__grid_size"
    first_add = next(r for r in document["rows"]
                     if (r["method"], r["pass"]) == ("first_add", 0))
    first_add[grid] += 1                 # no longer half of sequential's
    monkeypatch.setattr(counters, "collect", _FakeCollect(document))
    assert cli.main(["--counters"]) == 0   # the bench reports, targets judge
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "  NO   " in line]
    assert line.startswith("  NO   first_add: grid 8,193 is exactly 0.5x")


@pytest.mark.parametrize("error, status, text", [
    (counters.CountersUnavailable("ncu was not found"), 1,
     "cudareduce.bench: counters unavailable: ncu was not found"),
    (ValueError("methods must be distinct names"), 2,
     "cudareduce.bench: methods must be distinct names")])
def test_counters_failures(error, status, text, capsys, monkeypatch):
    monkeypatch.setattr(counters, "collect", _FakeCollect(error=error))
    assert cli.main(["--counters", "--methods", "fast"]) == status
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == text


def test_counters_unwritable_json_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(counters, "collect",
                        _FakeCollect(counters_document()))
    assert cli.main(["--counters", "--json",
                     str(tmp_path / "no" / "such.json")]) == 1
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--peers"], ["--host"],
                                   ["--sizes", "2^10..2^12"],
                                   ["--plot", "x.png"], ["--no-peers"],
                                   ["--seed", "1"]])
def test_counters_refuses_other_modes_and_options(extra, capsys,
                                                  monkeypatch):
    monkeypatch.setattr(counters, "collect", no_device)
    with pytest.raises(SystemExit) as info:
        cli.main(["--counters", *extra])
    assert info.value.code == 2
    assert "--counters combines with --n, --dtype, --op, --threads, " \
        "--methods and --json only" in capsys.readouterr().err
