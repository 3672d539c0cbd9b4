"""benchmarks/several_gpus.py without a GPU: its arguments, the parts'
commands, and the document, table and targets it makes of the parts'
JSON (made up here in the parts' own shapes; the figures need a machine
with several GPUs and go to docs/recorded/); its run on made-up GPUs with
each part's process faked."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
_spec = importlib.util.spec_from_file_location(
    "several_gpus", BENCHMARKS / "several_gpus.py")
several_gpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(several_gpus)

GIB = 1 << 30


def test_defaults_and_refusals():
    args = several_gpus.parse_args(["--out", "x"])
    assert (args.host_gib, args.shard_gib, args.parts, args.repeats) == (
        64.0, 64.0, ["links", "dask", "shards"], 3)
    for argv in (["--parts", "links"], ["--out", "x", "--parts", "nccl"],
                 ["--out", "x", "--host-gib", "0"],
                 ["--out", "x", "--gpus", "0"]):
        with pytest.raises(SystemExit):
            several_gpus.parse_args(argv)
    assert several_gpus.parse_args(["--table", "d.json"]).table == "d.json"


def test_the_parts_commands_on_four_gpus(tmp_path):
    args = several_gpus.parse_args(["--out", str(tmp_path),
                                    "--host-gib", "64", "--shard-gib", "8"])
    (links, json_path), = several_gpus.commands("links", args, 4, tmp_path)
    assert links[1].endswith("host_links.py") and json_path.name == \
        "links.json"
    # Each of 4 GPUs' share: one array of 64 GiB on every count.
    assert links[links.index("--gib") + 1] == "16.0"
    assert "--reduce" in links and links[links.index("--gpus") + 1] == "4"
    (dask, _), = several_gpus.commands("dask", args, 4, tmp_path)
    assert dask[dask.index("--workers") + 1] == "1,2,4"
    assert dask[dask.index("--gib") + 1] == "64.0"
    assert dask[dask.index("--chunks-of") + 1] == "numpy"
    shards = several_gpus.commands("shards", args, 4, tmp_path)
    assert [(c[c.index("--gpus") + 1], c[c.index("--gib") + 1], p.name)
            for c, p in shards] == [("1", "8.0", "shards-1.json"),
                                    ("2", "16.0", "shards-2.json"),
                                    ("4", "32.0", "shards-4.json")]


def _seconds(nbytes, gbps):
    return nbytes / (gbps * 1e9)


def _links(host_gib=64):
    nbytes = host_gib * GIB
    rows = [{"row": name, "gpus": k, "nbytes": nbytes,
             "seconds": _seconds(nbytes, gbps)}
            for name, k, gbps in (("cudareduce.sum", 1, 54.5),
                                  ("cudareduce.sum", 2, 90.0),
                                  ("cudareduce.sum, locked", 1, 54.4),
                                  ("cudareduce.sum, locked", 2, 108.0))]
    floors = {"1": {"links_gbps": 55.0, "host_gbps": 100.0,
                    "floor_gbps": 55.0},
              "2": {"links_gbps": 110.0, "host_gbps": 100.0,
                    "floor_gbps": 100.0}}
    return {"gpus": ["H", "H"], "rows": rows, "floors": floors}


def _dask(host_gib=64):
    nbytes = host_gib * GIB
    return {"single_gbps": 54.0, "chunks_of": "numpy", "rows": [
        {"scheduler": "cuda-cluster", "workers": k, "chunk_mib": 512,
         "method": method, "seconds": _seconds(nbytes, gbps), "tasks": 1,
         "nbytes": nbytes}
        for k, method, gbps in ((1, "dask x.sum()", 6.0),
                                (1, "cudareduce.dask", 50.0),
                                (2, "dask x.sum()", 10.0),
                                (2, "cudareduce.dask", 72.0))]}


def _shards(k, shard_gib=64, correct=True):
    one = shard_gib * GIB
    rows = [{"name": "cudareduce, one GPU", "gpus": 1, "nbytes": one,
             "seconds": _seconds(one, 4000.0), "correct": True},
            {"name": "cudareduce + copy (one process)", "gpus": k,
             "nbytes": k * one, "seconds": _seconds(k * one, 3900.0 * k),
             "correct": correct}]
    if k > 1:
        rows.append({"name": "cudareduce + NCCL all_reduce", "gpus": k,
                     "nbytes": k * one,
                     "seconds": _seconds(k * one, 3800.0 * k),
                     "correct": True})
    return {"gpus": ["H"] * k, "rows": rows}


def _write_parts(out, correct=True):
    (out / "links.json").write_text(json.dumps(_links()))
    (out / "dask.json").write_text(json.dumps(_dask()))
    for k in (1, 2):
        (out / f"shards-{k}.json").write_text(
            json.dumps(_shards(k, correct=correct)))


def test_the_table_of_the_gathered_parts(tmp_path):
    _write_parts(tmp_path)
    document = several_gpus.gather(tmp_path, {"gpus": ["H", "H"]})
    lines = several_gpus.table(document).splitlines()
    assert len(lines) == 4
    # 1 GPU: floor 55 (its link), the call 54.5 (99%), locked 54.4 of the
    # link's 55 (99%), Dask 50 of the call's 54.5 (92%), shards 0.97x,
    # no NCCL line.
    assert [c.strip() for c in lines[2].strip("|").split("|")] == [
        "1", "55.0", "54.5", "99%", "54.4", "99%", "50.0", "92%", "0.97",
        "-"]
    # 2 GPUs: floor 100 (the host), 90.0 (90%), locked 108 of 110 (98%),
    # Dask 72 of 90 (80%), shards 1.95x, over NCCL 1.90x.
    assert [c.strip() for c in lines[3].strip("|").split("|")] == [
        "2", "100.0", "90.0", "90%", "108.0", "98%", "72.0", "80%", "1.95",
        "1.90"]


def test_the_targets_and_a_missing_part(tmp_path):
    _write_parts(tmp_path)
    (tmp_path / "dask.json").unlink()
    verdicts = dict(several_gpus.verdicts(
        several_gpus.gather(tmp_path, {})))
    assert verdicts["1 GPU(s): one call >= 90% of the floor"]
    assert verdicts["2 GPU(s): one call >= 90% of the floor"]
    assert verdicts["2 GPU(s): locked pages >= 90% of the links"]
    assert verdicts["2 GPU(s): shards >= 1.8x one GPU"]
    # No Dask part: its targets are not met, and the cells say so.
    assert not verdicts["1 GPU(s): Dask >= 85% of the one call"]
    table = several_gpus.table(several_gpus.gather(tmp_path, {}))
    assert table.splitlines()[3].split("|")[7].strip() == "-"


def test_a_wrong_shard_sum_is_a_missed_target(tmp_path):
    _write_parts(tmp_path, correct=False)
    verdicts = dict(several_gpus.verdicts(
        several_gpus.gather(tmp_path, {})))
    assert not verdicts["2 GPU(s): every shard's sum right"]


def test_a_run_on_made_up_gpus_gathers_its_parts(tmp_path, monkeypatch,
                                                 capsys):
    """main() with nvidia-smi's answer and each part's process faked:
    each command writes the JSON it names (its part's made-up figures),
    the document gathers them, and a part's failure is the exit
    status."""
    monkeypatch.setattr(several_gpus, "_visible_gpus", lambda: ["H", "H"])
    ran = []

    def run(command, stdout, stderr):
        ran.append(command)
        target = Path(command[command.index("--json") + 1])
        script = Path(command[1]).name
        if script == "host_links.py":
            target.write_text(json.dumps(_links()))
        elif script == "dask_sum.py":
            target.write_text(json.dumps(_dask()))
        else:
            k = int(command[command.index("--gpus") + 1])
            target.write_text(json.dumps(_shards(k)))
        stdout.write("ok\n")
        return type("Done", (), {"returncode": 1 if "dask" in script
                                 else 0})()

    monkeypatch.setattr(several_gpus.subprocess, "run", run)
    status = several_gpus.main(["--out", str(tmp_path)])
    assert status == 1
    assert [Path(c[1]).name for c in ran] == [
        "host_links.py", "dask_sum.py", "sharded_sum.py", "sharded_sum.py"]
    assert all(c[0] == sys.executable for c in ran)
    document = json.loads((tmp_path / several_gpus.DOCUMENT).read_text())
    assert document["gpus"] == ["H", "H"] and document["host_gib"] == 64.0
    assert sorted(document["shards"]) == ["1", "2"]
    assert (tmp_path / "links.log").read_text() == "ok\n"
    printed = capsys.readouterr().out
    assert "| 2 | 100.0 | 90.0 | 90% |" in printed
    assert "met: 2 GPU(s): shards >= 1.8x one GPU" in printed
    assert several_gpus.main(["--table", str(tmp_path / "several-gpus.json")
                              ]) == 0
