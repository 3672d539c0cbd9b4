"""The C compiler for the tests that build C helpers (tests/support/c/)."""
from __future__ import annotations

import os
import shutil
import sysconfig

import pytest


def c_compiler() -> str:
    """The C compiler Python's own extensions are built with, else cc."""
    configured = (sysconfig.get_config_var("CC") or "cc").split()[0]
    for name in (os.environ.get("CC"), configured, "cc", "gcc"):
        if name and shutil.which(name):
            return name
    pytest.fail("no C compiler found (the extension's build needs one too)")
