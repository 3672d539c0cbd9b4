"""Excusing only a fault inside the CUDA driver: tests/support/c/fault_origin.c,
built as a preload library for a test's child process (see its header)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.c_build import c_compiler

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().parent / "c" / "fault_origin.c"
# The child's exit status when the fault was in libcuda.so.
FAULT_IN_DRIVER = 86


def build(directory: Path) -> Path:
    """The preload library, built in `directory`."""
    library = directory / "fault_origin.so"
    built = subprocess.run(
        [c_compiler(), "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
         str(SOURCE), "-o", str(library), "-ldl"],
        capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return library


def environment(library: Path) -> dict:
    """os.environ with the library preloaded."""
    return {**os.environ, "LD_PRELOAD": str(library)}
