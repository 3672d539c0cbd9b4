"""docs/make_figures.py without a GPU: the README's figures and table
redrawn from a recorded run (the synthetic sweep of bench_data, written to a
file), a clean failure when measuring, and the committed figures as a fresh
draw of the committed record (docs/figures/ladder.json)."""
from __future__ import annotations

import importlib.util
import json

import numpy as np

from support.bench_data import (PNG_MAGIC, RECORDING_PATH,  # noqa: F401
                                matplotlib, needs_matplotlib, plot, sweep)
from cudareduce.bench.results import Results

if matplotlib is not None:
    import matplotlib.image
    from PIL import Image           # matplotlib's own dependency


def _load_script():
    script = RECORDING_PATH.parent.parent / "make_figures.py"
    spec = importlib.util.spec_from_file_location("make_figures", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_matplotlib
def test_make_figures_from_recorded_results(tmp_path, capsys, device_error,
                                            sweep):
    module = _load_script()
    recorded = tmp_path / "recorded.json"
    sweep["timing"]["default_n"] = 1 << 26
    sweep.to_json(recorded)
    out = tmp_path / "out"
    assert module.main(["--from", str(recorded), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["ladder-bandwidth.png", "ladder-speedup.png",
                     "ladder-table.md", "ladder.json"]
    for name in names[:2]:
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
    assert Results.from_json(out / "ladder.json") == sweep
    table = (out / "ladder-table.md").read_text(encoding="utf-8")
    # the date is the document's own
    assert f"Measured on **{sweep.device['name']}** on 2000-01-01" in table
    assert "(2^22), 256 threads per block**" in table
    assert "(2^26), 256 threads per block**" in table
    assert "(2^28)" not in table
    assert sweep.select(n=[1 << 22, 1 << 26]).to_markdown() in table
    if device_error is not None:
        # Without a GPU, measuring fails cleanly, naming the CUDA error.  (On
        # the GPU machine a live sweep is test_bench_gpu's CLI tests' work:
        # this one would take 35 s there.)
        capsys.readouterr()
        assert module.main(["--out", str(tmp_path / "live")]) == 1
        assert device_error.split(":")[0] in capsys.readouterr().err


@needs_matplotlib
def test_make_figures_shows_2_22_and_the_default_size(tmp_path, sweep,
                                                      monkeypatch):
    """The speedup plot sets 2^22 and the run's default size side by side,
    the bandwidth plot adds the back-to-back lines."""
    module = _load_script()
    sweep["timing"]["default_n"] = 1 << 26
    calls = []
    monkeypatch.setattr(Results, "plot_step_speedups",
                        lambda self, **kw: calls.append(("speedup", kw)))
    monkeypatch.setattr(Results, "plot_bandwidth",
                        lambda self, **kw: calls.append(("bandwidth", kw)))
    module.write_figures(sweep, tmp_path)
    assert calls == [
        ("speedup", {"path": tmp_path / "ladder-speedup.png",
                     "n": [1 << 22, 1 << 26]}),
        ("bandwidth", {"path": tmp_path / "ladder-bandwidth.png",
                       "batch": True})]
    # A default size not measured: the largest instead.
    assert module.shown_sizes([1 << 10, 1 << 20], 1 << 26) == [1 << 20]
    assert module.shown_sizes([1 << 22], 1 << 26) == [1 << 22]
    assert module.shown_sizes([1 << 22, 1 << 24, 1 << 28], 1 << 24) == [
        1 << 22, 1 << 24]


# ---------------------------------------------------------------------------
# The committed figures


FIGURES = RECORDING_PATH.parent


def _png(path) -> tuple[dict, str, np.ndarray]:
    """What a PNG written by the plots shows (plot.PLOTTED_KEY), the
    matplotlib that drew it, and its pixels."""
    with Image.open(path) as image:
        text = dict(image.text)
    assert plot.PLOTTED_KEY in text, (
        f"{path.name} holds no {plot.PLOTTED_KEY}: redraw it with python "
        f"docs/make_figures.py --from docs/figures/ladder.json")
    return (json.loads(text[plot.PLOTTED_KEY]), text.get("Software", ""),
            matplotlib.image.imread(path))


@needs_matplotlib
def test_committed_figures_are_what_make_figures_draws(tmp_path):
    """docs/figures/ladder-speedup.png, ladder-bandwidth.png and
    ladder-table.md are what ``python docs/make_figures.py --from
    docs/figures/ladder.json`` draws now from the committed record: the
    table to the byte, each PNG the same plotted data as a fresh draw
    (titles, labels, ticks, every bar and line and its colour: what the
    PNG holds under plot.PLOTTED_KEY) and, where the same matplotlib drew
    both (its version is in the PNG), the same pixels.  After a change to
    the plots or the record, redraw them with that command."""
    module = _load_script()
    assert module.main(["--from", str(RECORDING_PATH),
                        "--out", str(tmp_path)]) == 0
    name = "ladder-table.md"
    assert (tmp_path / name).read_text(encoding="utf-8") == \
        (FIGURES / name).read_text(encoding="utf-8"), \
        f"{name} is not what make_figures.py writes"
    for name in ("ladder-speedup.png", "ladder-bandwidth.png"):
        committed, drawn_by, pixels = _png(FIGURES / name)
        fresh, fresh_drawn_by, fresh_pixels = _png(tmp_path / name)
        assert committed == fresh, f"{name} is not what make_figures.py draws"
        if drawn_by == fresh_drawn_by:
            assert np.array_equal(pixels, fresh_pixels), \
                f"{name}: other pixels than make_figures.py draws"
