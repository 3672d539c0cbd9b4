"""Host arrays through the pinned ring (issue 7), on the GPU.

The ring's sizes are read from the environment when the library creates it
(cuda/memory/host_ring.cuh), so each test runs its checks in a fresh
interpreter with a small ring (1 MiB chunks, 2 slots), so that chunk
boundaries fall at sizes a test can afford.  The checks live in
``support/host_checks.py``, run as the module ``support.host_checks`` with
this folder on the path, as the suite imports its helpers; a crash there
fails the test, not the run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

TESTS = Path(__file__).parent
RING_ENV = {"CUDAREDUCE_HOST_CHUNK_MB": "1", "CUDAREDUCE_HOST_BUFFERS": "2",
            "CUDAREDUCE_HOST_THREADS": "4"}


def run_checks(case: str, seed: int, env: dict | None = None,
               timeout: int = 600) -> str:
    environment = {**os.environ, **RING_ENV, **(env or {})}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS)] + [p for p in os.environ.get("PYTHONPATH", "").split(
            os.pathsep) if p])
    done = subprocess.run([sys.executable, "-m", "support.host_checks", case,
                           str(seed)], env=environment, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{case} (seed {seed}) exit {done.returncode}\n"
        f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}")
    return done.stdout


# "failure" takes all device memory and "mid_stream_failure" reads the
# device's use: each needs the GPU to itself.
WHOLE_GPU = pytest.mark.whole_gpu


@pytest.mark.parametrize("case", ["boundaries", "layouts", "threads",
                                  "locked",
                                  pytest.param("failure", marks=WHOLE_GPU)])
def test_host_ring(case, session_seed):
    out = run_checks(case, session_seed)
    assert "ok" in out.split()


@pytest.mark.parametrize("case", [
    "defaults", "threads_default", "idle",
    pytest.param("mid_stream_failure", marks=WHOLE_GPU)])
def test_default_ring(case, session_seed):
    # The documented defaults (cuda/memory/host_ring.cuh).
    out = run_checks(case, session_seed, env={k: "" for k in RING_ENV})
    assert "ok" in out.split()


@pytest.mark.big
@pytest.mark.whole_gpu
def test_array_larger_than_free_device_memory(session_seed):
    out = run_checks("larger_than_device", session_seed,
                     env={k: "" for k in RING_ENV}, timeout=900)
    assert "ok" in out.split()
