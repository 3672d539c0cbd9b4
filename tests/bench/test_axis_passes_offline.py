"""benchmarks/axis_passes.cu, the axis passes' timing harness, builds
against this tree's cuda/ as its header says, linked with the tree's own
sum and argmax units (it runs on a GPU only): a change to run_rows, the plan or the
units that it no longer follows fails here, not in the device call that
was to bisect with it."""
from __future__ import annotations

import subprocess
from pathlib import Path

from support.c_build import nvcc

REPO = Path(__file__).resolve().parents[2]


def test_axis_passes_builds_against_this_tree(tmp_path):
    cuda = REPO / "cuda"
    flags = ["-O3", "-std=c++17", "--expt-relaxed-constexpr", "-lineinfo",
             "-gencode=arch=compute_90,code=sm_90", f"-I{cuda}",
             f"-I{cuda / 'include'}"]
    numbers = (1, 2, 10)     # instances.def: the sums' units, argmax's
    units = [tmp_path / f"unit{k}.o" for k in numbers]
    for k, unit in zip(numbers, units):
        built = subprocess.run(
            [nvcc(), *flags, f"-DCR_UNIT={k}", "-c",
             str(cuda / "instances" / "instances.cu"), "-o", str(unit)],
            capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stderr[-4000:]
    linked = subprocess.run(
        [nvcc(), *flags, "-o", str(tmp_path / "axis_passes"),
         str(REPO / "benchmarks" / "axis_passes.cu"), *map(str, units),
         *(str(cuda / name) for name in ("rows_plan.c", "facts.c",
                                         "fail.c",
                                         "bench/stream_hold.cu"))],
        capture_output=True, text=True, timeout=900)
    assert linked.returncode == 0, linked.stderr[-4000:]
    # Its arguments are checked before any CUDA call, so here too: a case
    # that is not among its shapes, and a short case, end it with a usage
    # error, not a run of every case.
    harness = str(tmp_path / "axis_passes")
    for args, said in ((["t", "int8", "4096", "4096", "2"], "no case is"),
                       (["t", "int8", "4096"], "usage:")):
        ran = subprocess.run([harness, *args], capture_output=True,
                             text=True, timeout=60)
        assert ran.returncode == 2 and said in ran.stderr, (ran.returncode,
                                                            ran.stderr)
