"""The plan of a reduction along axes (cuda/rows_plan.c), without a GPU.

tests/support/c/rows_check.c checks which kernel reads each layout, the
refusals, the passes and their launches, and replays the kernels' loops
(cuda/kernels/rows.cuh) over a plan's launch: every chunk of every row is
reduced exactly once.  The kernels' results are the GPU tests' to check.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from support.c_build import c_compiler

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "tests" / "support" / "c" / "rows_check.c",
           ROOT / "cuda" / "rows_plan.c", ROOT / "cuda" / "fail.c"]
# setup.py's include directories: the public headers, then cuda/.
INCLUDES = [f"-I{ROOT / 'cuda' / 'include'}", f"-I{ROOT / 'cuda'}"]


def test_rows_plan(tmp_path):
    program = tmp_path / "rows_check"
    built = subprocess.run(
        [c_compiler(), "-std=gnu11", "-O2", "-Wall", "-Werror", *INCLUDES,
         *map(str, SOURCES), "-o", str(program)],
        capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(program)], capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip() == "ok"
