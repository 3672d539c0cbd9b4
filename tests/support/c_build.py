"""The compilers of the tests that build C helpers (tests/support/c/) and
the CUDA harnesses of benchmarks/."""
from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest


def c_compiler() -> str:
    """The C compiler Python's own extensions are built with, else cc."""
    configured = (sysconfig.get_config_var("CC") or "cc").split()[0]
    for name in (os.environ.get("CC"), configured, "cc", "gcc"):
        if name and shutil.which(name):
            return name
    pytest.fail("no C compiler found (the extension's build needs one too)")


def nvcc() -> str:
    """The toolkit's nvcc, found as setup.py finds it."""
    home = os.environ.get("CUDA_HOME")
    found = (str(Path(home) / "bin" / "nvcc") if home
             else shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    assert Path(found).exists(), f"no nvcc at {found} (CI has the toolkit)"
    return found
