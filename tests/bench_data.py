"""What the bench's offline tests share: the recorded sample document
(tests/data/bench_sample.json: hand-made numbers of a fictional "sample
device (hand-made, not measured)", not a measurement), the method lists
they expect, matplotlib when it is installed, and a child Python that
imports the same cudareduce."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cudareduce
from cudareduce import results as model

try:
    import matplotlib.figure

    from cudareduce import plot
except ImportError:          # the plots need matplotlib; the rest does not
    matplotlib = plot = None

needs_matplotlib = pytest.mark.skipif(
    plot is None, reason="matplotlib is not installed (pip install matplotlib)")

SAMPLE_PATH = Path(__file__).parent / "data" / "bench_sample.json"
#: Every method of ours, in the extension's order: the seven ladder steps,
#: then ``fast`` and ``cub``.
METHODS = list(cudareduce.methods())
#: The steps of the step-speedup chain: every method but ``cub`` (the bench's
#: reference), i.e. the ladder and then ``fast`` as step 8.
STEPS = [m for m in METHODS if m != "cub"]
#: The seven published steps (what the reference tables measured).
LADDER = STEPS[:7]
#: The other libraries' sums, in the bench's order.
PEERS = ["torch.sum", "cupy.sum"]
#: Every row of a full sample group, in table order: steps, cub, peers.
TABLE_ORDER = STEPS + ["cub"] + PEERS
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def sample() -> dict:
    with open(SAMPLE_PATH, encoding="utf-8") as f:
        return json.load(f)


def row(method, median_us, correct=True, n=1 << 22, dtype="float32",
        threads=256, reps=100):
    """One result entry, as the bench makes it."""
    return model.make_result(method, dtype, n, threads,
                             median_us if correct else None, reps, correct)


def child_env(**extra) -> dict:
    """The environment of a child Python that imports the same cudareduce."""
    env = dict(os.environ)
    root = str(Path(cudareduce.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(extra)
    return env


def run_python(code: str, *args: str, **env) -> subprocess.CompletedProcess:
    """`code` in a child Python (child_env); it must exit 0."""
    proc = subprocess.run([sys.executable, "-c", code, *args],
                          capture_output=True, text=True, env=child_env(**env),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def report_tables(text: str) -> list[list[str]]:
    """The tables of a format_table report: lists of lines, each from its
    header row."""
    blocks = text.split("\n\n")[1:]
    return [b.splitlines()[1:] for b in blocks]
