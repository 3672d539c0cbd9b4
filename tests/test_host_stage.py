"""The staging copy of host arrays (cuda/host/host_stage.c), without a GPU.

The staging threads hand pieces of each chunk around through atomics; a
mistake there copies a piece twice, skips one, or reads a job while the
caller rewrites it, which the GPU tests would see only now and then.  So
tests/support/c/stage_check.c drives cr_stager_copy directly, checking every
element, once built plainly and once under ThreadSanitizer, which fails
the run on any data race.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support.c_build import c_compiler

ROOT = Path(__file__).resolve().parent.parent
# csrc/layout.c plans the strided views' layouts, as the extension does.
SOURCES = [ROOT / "tests" / "support" / "c" / "stage_check.c",
           ROOT / "cuda" / "host" / "host_stage.c",
           ROOT / "csrc" / "layout.c", ROOT / "cuda" / "fail.c"]
# setup.py's include directories: the public headers, then cuda/, whose
# subfolders' headers are named from there ("host/host_stage.h").
INCLUDES = [f"-I{ROOT / 'cuda' / 'include'}", f"-I{ROOT / 'cuda'}"]
BUILDS = {
    "plain": ["-O2"],
    "thread-sanitizer": ["-O1", "-g", "-fsanitize=thread"],
}


@pytest.mark.parametrize("build", BUILDS)
def test_staging_copies_every_element_once(build, tmp_path):
    program = tmp_path / f"stage_check_{build.replace('-', '_')}"
    compile_command = [c_compiler(), "-std=gnu11", "-Wall", "-Werror",
                       *BUILDS[build], *INCLUDES,
                       *map(str, SOURCES), "-o", str(program), "-lpthread"]
    built = subprocess.run(compile_command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    # halt_on_error: the first race fails the run (TSAN's exit code 66).
    env = {**os.environ, "TSAN_OPTIONS": "halt_on_error=1"}
    ran = subprocess.run([str(program)], capture_output=True, text=True,
                         env=env, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip() == "ok"
    assert "WARNING: ThreadSanitizer" not in ran.stderr
