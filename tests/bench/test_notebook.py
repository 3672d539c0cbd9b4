"""The example notebook ``benchmarks/step_speedups.ipynb`` runs, cell by cell.

- Everywhere (CI has no GPU): executed headless with nbclient in recorded
  mode (``CUDAREDUCE_NOTEBOOK_RECORDED`` pointing at a synthetic recording
  that bench_data writes, so that the checks lean on no figure of the
  committed ``docs/figures/ladder.json``, the notebook's default), failing
  on any cell error, and its outputs checked: the recorded device, the HTML
  table, both plots.
- On a GPU machine (marked ``gpu``): executed for real, with no recorded
  results -- the live NumPy sums, the CuPy sums when CuPy imports, and a real
  ``bench.run`` sweep.  Without nbclient there, its code cells run in order
  as a script instead (so the test never skips on a GPU machine).
  ``CUDAREDUCE_NOTEBOOK_SAVE=path.ipynb`` keeps the executed notebook.

The kernel is this interpreter, through a temporary kernel spec (see
``benchmarks/run_notebook.py``), so a fresh virtual environment with the
``test`` extra needs no ``ipykernel install``.
"""
from __future__ import annotations

import base64
import copy
import importlib.util
import io
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import cudareduce
from support.bench_data import sweep  # noqa: F401
from cudareduce import bench
from cudareduce.bench.figures import TABLE_HEADERS
from cudareduce.bench.names import REFERENCE_METHOD
from cudareduce.bench import names, schema

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "benchmarks" / "step_speedups.ipynb"
#: The notebook's default recording, which its paragraphs quote.
RECORDED = ROOT / "docs" / "figures" / "ladder.json"
RECORDED_GPU = "NVIDIA H100 80GB HBM3"
MAX_CODE_LINES = 15          # the notebook's code cells stay short


def _load_runner():
    spec = importlib.util.spec_from_file_location(
        "run_notebook", ROOT / "benchmarks" / "run_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = _load_runner()


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _have_nbclient() -> bool:
    return all(_have(m) for m in ("nbclient", "nbformat", "ipykernel"))


def _cells() -> list[dict]:
    with open(NOTEBOOK, encoding="utf-8") as f:
        return json.load(f)["cells"]


def _texts(nb) -> list[str]:
    """Per code cell, all its text outputs joined (streams, text/plain,
    text/html)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for o in cell.outputs:
            if o.output_type == "stream":
                parts.append(o.text)
            elif o.output_type in ("execute_result", "display_data"):
                parts += [o.data.get("text/plain", ""),
                          o.data.get("text/html", "")]
        out.append("\n".join(parts))
    return out


def _outputs_of(nb, mime: str) -> list[str]:
    return [o.data[mime] for cell in nb.cells if cell.cell_type == "code"
            for o in cell.outputs
            if o.output_type in ("execute_result", "display_data")
            and mime in o.data]


@pytest.fixture
def synthetic_recording(tmp_path, sweep) -> Path:
    """A recording for the notebook to replay: bench_data's synthetic sweep
    (2^10..2^28, every method and both peers; its default size planted at
    2^28), as a ``--json`` file."""
    path = tmp_path / "synthetic-ladder.json"
    sweep["timing"]["default_n"] = 1 << 28
    sweep.to_json(path)
    return path


def _check_all_ran(nb) -> None:
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), \
        "not every code cell ran"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors


# ---------------------------------------------------------------------------
# The notebook file itself


def test_notebook_is_valid_and_short():
    if _have("nbformat"):
        import nbformat
        nbformat.validate(nbformat.read(NOTEBOOK, as_version=4))
    cells = _cells()
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) >= 8
    for source in code:
        assert len(source.splitlines()) <= MAX_CODE_LINES, source
        # plain Python: the script-mode fallback runs the cells as they are
        assert not re.search(r"^\s*[%!]", source, re.M), source
        compile(source, str(NOTEBOOK), "exec")
    paragraphs = ["".join(c["source"]) for c in cells
                  if c["cell_type"] == "markdown"]
    markdown = "".join(paragraphs)
    # one paragraph per step of the bench's chain (the ladder, then fast),
    # and one for cub, the reference: every method of the library
    steps = names.ladder_methods()
    assert steps[-1] == "fast"
    for i, method in enumerate(steps, 1):
        assert f"**Step {i}, `{method}`" in markdown
    assert f"**Reference, `{REFERENCE_METHOD}`" in markdown
    assert set(cudareduce.methods()) == {*steps, REFERENCE_METHOD}
    # the introduction names fast and cub beside the ladder
    assert "`fast`" in paragraphs[0] and "`cub`" in paragraphs[0]
    # naming the GPU its figures come from; a method the recorded run did
    # not time gets no figures, and says so
    assert RECORDED_GPU in markdown
    recorded = {r["method"] for r in
                json.loads(RECORDED.read_text(encoding="utf-8"))["results"]}
    for method in [*steps, REFERENCE_METHOD]:
        heading = rf"\*\*(Step \d+|Reference), `{re.escape(method)}`"
        (paragraph,) = [" ".join(p.split()) for p in paragraphs
                        if re.match(heading, p)]
        if method not in recorded:
            assert "not in the recorded run" in paragraph, method
            assert not re.search(r"\d\s*(µs|GB/s)", paragraph), paragraph


def test_committed_recording_is_the_h100_sweep():
    """docs/figures/ladder.json, the notebook's default recording: an H100
    sweep of 2^10..2^28, all correct, a valid document of the current
    schema (the committed figures are redrawn from it)."""
    doc = json.loads(RECORDED.read_text(encoding="utf-8"))
    schema.validate_document(doc)
    assert doc["device"]["name"] == RECORDED_GPU
    assert sorted({r["n"] for r in doc["results"]}) == \
        [1 << k for k in range(10, 29)]
    assert all(r["correct"] for r in doc["results"])


# ---------------------------------------------------------------------------
# Executed


def test_notebook_runs_in_recorded_mode(device_error, synthetic_recording,
                                        sweep):
    """Every cell runs without a GPU, from recorded results (on a GPU
    machine too: the variable forces recorded mode)."""
    shown = runner._recorded_path(synthetic_recording, NOTEBOOK.parent)
    if not _have_nbclient():
        if device_error is None:
            # a GPU machine without nbclient: the cells as a script (never
            # a skip there); CI installs nbclient with the test extra
            printed = runner.run_as_script(NOTEBOOK,
                                           recorded=synthetic_recording)
            assert f"Recorded mode: replaying {shown}" in printed
            return
        pytest.fail("executing the notebook needs nbclient, nbformat and "
                    "ipykernel: pip install -e '.[test]'")
    nb = runner.execute(NOTEBOOK, recorded=synthetic_recording)
    _check_all_ran(nb)
    texts = _texts(nb)
    everything = "\n".join(texts)
    assert f"Recorded mode: replaying {shown}" in texts[0]
    assert sweep.device["name"] in everything
    assert "no live sums here" in everything
    assert "no CuPy sums here" in everything
    # the table cell: HTML with the CLI's columns, both sizes
    html = _outputs_of(nb, "text/html")
    assert len(html) == 1
    for header in TABLE_HEADERS:
        assert f">{header}</th>" in html[0]
    assert "4,194,304 (2^22)" in html[0] and "268,435,456 (2^28)" in html[0]
    # the two plots, as PNG
    assert len(_outputs_of(nb, "image/png")) == 2
    # the side-by-side table: this run and every reference
    assert "this run" in everything and "harris" in everything


#: How the stored outputs are refreshed (benchmarks/run_notebook.py).
REFRESH = ("python benchmarks/run_notebook.py --recorded "
           "docs/figures/ladder.json --inplace --keep-live")


def _png(encoded: str) -> tuple[str, np.ndarray]:
    """The matplotlib that drew a stored PNG output, and its pixels."""
    from PIL import Image   # noqa: PLC0415 - matplotlib's own dependency

    with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
        return (image.text.get("Software", ""),
                np.asarray(image.convert("RGBA")))


def _stored_prints_replay(printed: str) -> None:
    """What the cells that do not depend on the GPU printed when the
    notebook was stored is in `printed` (the cells run as a script)."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    replayed = 0
    for index, cell in enumerate(cells):
        if (cell["cell_type"] != "code"
                or runner.depends_on_the_gpu("".join(cell["source"]))):
            continue
        for output in cell["outputs"]:
            if output.get("name") == "stdout":
                replayed += 1
                assert "".join(output["text"]) in printed, \
                    f"cell {index}'s stored output is stale: {REFRESH}"
    assert replayed >= 1


def test_stored_outputs_replay_the_committed_recording(device_error):
    """The outputs stored in the notebook are what its cells show now,
    replaying the committed recording (docs/figures/ladder.json): every
    text to the character, every plot to the pixel where the same
    matplotlib drew both.  The cells that depend on the GPU (the probe and
    the live sums, run on the recording's GPU) are left out.  After a
    change to the bench's tables or plots: REFRESH.  On a GPU machine
    without nbclient, what the cells print, run as a script (never a skip
    there; CI installs nbclient with the test extra)."""
    if not _have_nbclient():
        if device_error is None:
            _stored_prints_replay(runner.run_as_script(NOTEBOOK,
                                                       recorded=RECORDED))
            return
        pytest.fail("executing the notebook needs nbclient, nbformat and "
                    "ipykernel: pip install -e '.[test]'")
    import nbformat   # noqa: PLC0415

    stored = nbformat.read(NOTEBOOK, as_version=4)
    fresh = runner.execute(NOTEBOOK, recorded=RECORDED)
    _check_all_ran(fresh)
    replayed = 0
    for index, (old, new) in enumerate(zip(stored.cells, fresh.cells)):
        if old.cell_type != "code" or runner.depends_on_the_gpu(old.source):
            continue
        replayed += 1
        stale = f"cell {index}'s stored output is stale: {REFRESH}"
        assert len(old.outputs) == len(new.outputs), stale
        for a, b in zip(copy.deepcopy(old.outputs),
                        copy.deepcopy(new.outputs)):
            png_a = a.get("data", {}).pop("image/png", None)
            png_b = b.get("data", {}).pop("image/png", None)
            assert a == b, stale
            assert (png_a is None) == (png_b is None), stale
            if png_a is not None:
                (drawn_by, pixels), (fresh_by, fresh_pixels) = \
                    _png(png_a), _png(png_b)
                if drawn_by == fresh_by:
                    assert np.array_equal(pixels, fresh_pixels), stale
    assert replayed >= 7


def test_notebook_cells_run_as_a_script_in_recorded_mode(
        synthetic_recording, sweep):
    """The fallback of the GPU test (no nbclient): the cells in order, in
    this process."""
    before = (os.getcwd(), os.environ.get(runner.RECORDED_ENV))
    printed = runner.run_as_script(NOTEBOOK, recorded=synthetic_recording)
    shown = runner._recorded_path(synthetic_recording, NOTEBOOK.parent)
    assert f"Recorded mode: replaying {shown}" in printed
    assert f"{sweep.device['name']}: 132 SMs, L2 50 MiB" in printed
    assert "n = 2^10..2^28 (19 sizes)" in printed
    assert (os.getcwd(), os.environ.get(runner.RECORDED_ENV)) == before


def test_notebook_live_cells_with_a_fake_device(monkeypatch, sweep):
    """The live branch of every cell, without a GPU: cudareduce.sum, the
    device query and bench.run replaced by fakes, CuPy hidden."""
    doc = copy.deepcopy(dict(sweep))
    doc["device"]["name"] = "fake GPU"
    calls = []

    def fake_sum(a, method=cudareduce.DEFAULT_METHOD, *, threads=256):
        calls.append(method)
        return np.sum(a)

    def fake_run(**kwargs):
        calls.append(kwargs)
        return bench.Results(doc)

    monkeypatch.setattr(cudareduce, "sum", fake_sum)
    monkeypatch.setattr(bench, "device_info", lambda: {
        "ordinal": 0, "name": "fake GPU", "sm_count": 132,
        "l2_bytes": 50 << 20, "total_bytes": 80 << 30})
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.delenv(runner.RECORDED_ENV, raising=False)
    printed = runner.run_as_script(NOTEBOOK, recorded=None)
    assert "Live: timing this GPU." in printed
    assert "fake GPU: 132 SMs, L2 50 MiB" in printed
    ladder = list(cudareduce.methods())
    assert calls[1:1 + len(ladder)] == ladder        # after the probe
    for method in ladder + ["numpy.sum"]:
        assert re.search(rf"^{re.escape(method)} +np\.float32\(.*relative "
                         rf"error \d\.\de-\d\d$", printed, re.M), printed
    assert "CuPy is not installed" in printed
    assert calls[-1] == {"sizes": [1 << k for k in range(10, 29)],
                         "dtype": "float32", "threads": 256}
    assert "fake GPU" in printed and "all correct" in printed


@pytest.mark.gpu
def test_notebook_runs_live_on_the_gpu():
    """On a GPU: the notebook times this GPU for real (no recorded results);
    the CuPy cell runs when CuPy is installed."""
    name = bench.device_info()["name"]
    if _have_nbclient():
        nb = runner.execute(NOTEBOOK, recorded=None)
        _check_all_ran(nb)
        save = os.environ.get("CUDAREDUCE_NOTEBOOK_SAVE")
        if save:
            import nbformat
            nbformat.write(nb, save)
        everything = "\n".join(_texts(nb))
        assert len(_outputs_of(nb, "image/png")) == 2
        assert len(_outputs_of(nb, "text/html")) == 1
    else:
        everything = runner.run_as_script(NOTEBOOK, recorded=None)
    assert "Live: timing this GPU." in everything
    assert "Recorded mode" not in everything
    assert name in everything
    for method in cudareduce.methods():
        assert f"\n{method} " in "\n" + everything
    assert "relative error" in everything
    if _have("cupy"):
        assert "CuPy is not installed" not in everything
        assert re.search(r"^cupy\.sum\s", everything, re.M), everything
    # the sweep ran here: 19 sizes, every method correct
    assert "n = 2^10..2^28 (19 sizes)" in everything
    assert "all correct" in everything
