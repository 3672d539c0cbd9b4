"""benchmarks/exact_launches.cu, the timer of an exact sum's launches
across trees, builds against this tree's cuda/ as its header says (a
unit of this tree's kernels, launched as exact_sum.cu launches them, and
the timer over it; it runs on a GPU only): a change to the exact kernels
or their launch that it no longer follows fails here, not in the device
call that was to compare trees with it."""
from __future__ import annotations

import subprocess
from pathlib import Path

from support.c_build import nvcc

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "benchmarks" / "exact_launches.cu"


def test_exact_launches_builds_against_this_tree(tmp_path):
    cuda = REPO / "cuda"
    flags = ["-O3", "-std=c++17", "--expt-relaxed-constexpr", "-lineinfo",
             "-gencode=arch=compute_90,code=sm_90", f"-I{cuda}",
             f"-I{cuda / 'include'}"]
    # This tree's launches: the rounding the ordinary way (3) and as a
    # programmatic dependent (4).
    units = []
    for name, launches in (("plain", 3), ("dependent", 4)):
        units.append(tmp_path / f"{name}.o")
        built = subprocess.run(
            [nvcc(), *flags, f"-DTREE={name}", f"-DLAUNCHES={launches}",
             "-c", str(SOURCE), "-o", str(units[-1])],
            capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stderr[-4000:]
    linked = subprocess.run(
        [nvcc(), *flags, "-DTREES=X(plain)X(dependent)ADDS(plain)", "-o",
         str(tmp_path / "exact_launches"), str(SOURCE), *map(str, units),
         str(cuda / "bench" / "stream_hold.cu"), str(cuda / "fail.c")],
        capture_output=True, text=True, timeout=900)
    assert linked.returncode == 0, linked.stderr[-4000:]


def test_exact_launches_says_how_to_build_it(tmp_path):
    built = subprocess.run(
        [nvcc(), "-std=c++17", "-c", str(SOURCE), "-o",
         str(tmp_path / "none.o")],
        capture_output=True, text=True, timeout=300)
    assert built.returncode != 0
    assert "-DTREE=name -DLAUNCHES=k" in built.stderr, built.stderr[-2000:]
