"""The package without its compiled extension: a source checkout that was
not built, or the source folder that Python imports when started from the
repository root after a non-editable install.

``import cudareduce`` works; each of the library's names (``cudareduce.sum``,
``CudaError``, ``methods``, ``from cudareduce import sum``, the commands)
raises the ImportError that says where the extension is missing and what
to do; the bench's document model reads, checks and plots a recorded
document (issue 42); an extension that is there but fails to load keeps
its own error.  Each check runs in a fresh Python on a copy of the
package's Python files.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import numpy as np
import pytest

import cudareduce

SOURCE = Path(cudareduce.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[1]
#: A committed results document: the README's figures are drawn from it.
DOCUMENT = ROOT / "docs" / "figures" / "ladder.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def copy_package(folder: Path) -> Path:
    """cudareduce's Python files, its subpackages' included, copied into
    `folder`/cudareduce, without the compiled extension; `folder`."""
    for module in SOURCE.rglob("*.py"):
        copy = folder / "cudareduce" / module.relative_to(SOURCE)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(module.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def unbuilt(tmp_path_factory) -> Path:
    return copy_package(tmp_path_factory.mktemp("unbuilt"))


def run_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -S *args`` in `folder`, whose cudareduce comes first.

    -S: no site hooks, so that an editable install's finder cannot step in;
    NumPy's own folder (matplotlib's too) is named instead.
    """
    numpy_parent = str(Path(np.__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-S", *args], cwd=folder, capture_output=True,
        text=True, timeout=120,
        env=dict(os.environ, MPLBACKEND="Agg",
                 PYTHONPATH=os.pathsep.join([str(folder), numpy_parent])))


def message(folder: Path) -> str:
    """The ImportError's message, up to its advice."""
    return (f"cudareduce's compiled extension is not in {folder / 'cudareduce'}"
            f": that is the source folder")


def json_of(done: subprocess.CompletedProcess) -> dict:
    """What a child printed last, as JSON; it must have exited 0."""
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


PROBE = """
import json, sys
import cudareduce
seen = {"file": cudareduce.__file__, "version": cudareduce.__version__,
        "all": cudareduce.__all__, "dir": dir(cudareduce)}
for name in ("sum", "nanargmax", "CudaError", "methods", "plan",
             "block_sizes", "Pass", "DEFAULT_METHOD", "_cudareduce",
             "_reduce", "__wrapped__"):
    try:
        getattr(cudareduce, name)
        seen[name] = "found"
    except Exception as error:
        seen[name] = [type(error).__name__, str(error),
                      getattr(error, "name", None)]
for statement in ("from cudareduce import sum", "from cudareduce import *",
                  "import cudareduce.dask", "from cudareduce import bench",
                  "from cudareduce.bench import run"):
    try:
        exec(statement, {})
        seen[statement] = "done"
    except Exception as error:
        seen[statement] = [type(error).__name__, str(error)]
seen["modules"] = sorted(m for m in sys.modules if m.startswith("cudareduce"))
print(json.dumps(seen))
"""


def test_import_works_and_each_name_says_what_is_missing(unbuilt):
    seen = json_of(run_in(unbuilt, "-c", PROBE))
    assert seen["file"] == str(unbuilt / "cudareduce" / "__init__.py")
    assert seen["version"] == cudareduce.__version__
    # Without the extension its operators are not known: the other names.
    assert seen["all"] == [n for n in cudareduce.__all__
                           if n not in cudareduce._cudareduce.OPERATORS]
    assert seen["dir"] == sorted(seen["all"])
    for name in ("sum", "nanargmax", "CudaError", "methods", "plan",
                 "block_sizes", "Pass", "DEFAULT_METHOD", "_cudareduce"):
        kind, text, module = seen[name]
        assert kind == "ImportError" and text.startswith(message(unbuilt)), \
            (name, seen[name])
        assert "Run from another directory" in text
        assert module == "cudareduce._cudareduce"
    for name in ("_reduce", "__wrapped__"):     # private, probed by tools
        assert seen[name][0] == "AttributeError", seen[name]
    for statement in ("from cudareduce import sum", "from cudareduce import *",
                      "import cudareduce.dask",
                      "from cudareduce.bench import run"):
        kind, text = seen[statement]
        assert kind == "ImportError" and text.startswith(message(unbuilt)), \
            (statement, seen[statement])
    assert seen["from cudareduce import bench"] == "done"
    assert "cudareduce._cudareduce" not in seen["modules"]


@pytest.mark.parametrize("command", [["cudareduce"],
                                     ["cudareduce.bench", "--n", "1024"]])
def test_the_commands_say_what_is_missing(unbuilt, command):
    done = run_in(unbuilt, "-m", *command)
    assert done.returncode != 0
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"ImportError: {message(unbuilt)}"), done.stderr
    assert "circular import" not in done.stderr


#: The document model: what reading, checking and plotting a document
#: imports (no timer, no mode, no extension).
MODEL_MODULES = {
    "cudareduce", "cudareduce.bench", "cudareduce.bench.axis_schema",
    "cudareduce.bench.exact_schema", "cudareduce.bench.figures",
    "cudareduce.bench.names",
    "cudareduce.bench.plot", "cudareduce.bench.reference",
    "cudareduce.bench.results", "cudareduce.bench.schema"}

MODEL = """
import json, sys
from cudareduce.bench import Results, schema, validate_document
with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
schema.validate_document(document)
results = Results.from_json(sys.argv[1])
results.plot_step_speedups(path="speedup.png")
results.plot_bandwidth(path="bandwidth.png")
print(json.dumps({
    "device": results.device["name"], "table": results.table(),
    "modules": sorted(m for m in sys.modules if m.startswith("cudareduce"))}))
"""


def test_a_recorded_document_is_read_checked_and_plotted(tmp_path):
    pytest.importorskip("matplotlib")
    folder = copy_package(tmp_path)
    seen = json_of(run_in(folder, "-c", MODEL, str(DOCUMENT)))
    recorded = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    assert seen["device"] == recorded["device"]["name"]
    assert seen["device"] in seen["table"]
    for png in ("speedup.png", "bandwidth.png"):
        assert (folder / png).read_bytes().startswith(PNG_MAGIC), png
    # The document model alone: no timer, no mode, no extension.
    assert set(seen["modules"]) <= MODEL_MODULES, seen["modules"]


AXIS_MODEL = """
import json, sys
from cudareduce.bench import axis_schema, plot
with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
axis_schema.validate_axis_document(document)
plot.plot_axes(sys.argv[1], path="axis.png")
print(json.dumps({
    "modules": sorted(m for m in sys.modules if m.startswith("cudareduce"))}))
"""


def test_an_axis_document_is_read_checked_and_plotted(tmp_path):
    pytest.importorskip("matplotlib")
    from support.axis_data import axis_document
    folder = copy_package(tmp_path)
    path = tmp_path / "axis.json"
    path.write_text(json.dumps(axis_document()), encoding="utf-8")
    seen = json_of(run_in(folder, "-c", AXIS_MODEL, str(path)))
    assert (folder / "axis.png").read_bytes().startswith(PNG_MAGIC)
    assert set(seen["modules"]) <= MODEL_MODULES, seen["modules"]


def test_make_figures_draws_a_recorded_document(unbuilt, tmp_path):
    pytest.importorskip("matplotlib")
    done = run_in(unbuilt, str(ROOT / "docs" / "make_figures.py"),
                  "--from", str(DOCUMENT), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ladder-bandwidth.png", "ladder-speedup.png", "ladder-table.md",
        "ladder.json"]


def test_an_extension_that_fails_to_load_keeps_its_error(tmp_path):
    folder = copy_package(tmp_path)
    broken = folder / "cudareduce" / f"_cudareduce{EXTENSION_SUFFIXES[0]}"
    broken.write_bytes(b"not a shared object")
    done = run_in(folder, "-c", "import cudareduce")
    assert done.returncode != 0
    last = done.stderr.splitlines()[-1]
    assert last.startswith("ImportError: ") and "source folder" not in last, \
        done.stderr


def test_make_figures_says_why_a_document_is_refused(unbuilt, tmp_path):
    # Only its measuring path names CudaError, which is not there here.
    older = tmp_path / "older.json"
    older.write_text("{}", encoding="utf-8")
    done = run_in(unbuilt, str(ROOT / "docs" / "make_figures.py"),
                  "--from", str(older), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    said, *more = done.stderr.splitlines()
    assert said.startswith(f"make_figures: {older}: schema: missing") \
        and not more, done.stderr
