"""cudareduce.bench.plot without a GPU: both figures drawn from the synthetic
sample (tests/bench/data/bench_sample.json: formulas, not a measurement) and from
JSON files, checked against the document's own figures."""
from __future__ import annotations

import pytest

from support.bench_data import (PEERS, PNG_MAGIC, SAMPLE_PATH,  # noqa: F401
                                STEPS, matplotlib, needs_matplotlib, plot,
                                run_python, sample)
from cudareduce.bench import reference


# ---------------------------------------------------------------------------
# The step-speedup plot


def _bars(ax) -> dict[str, int]:
    return {c.get_label(): len(c.patches) for c in ax.containers}


def _by_step(container) -> dict[int, float]:
    return {round(p.get_x() + p.get_width() / 2): p.get_height()
            for p in container.patches}


def _cold(sample, n=1 << 22, dtype="float32") -> dict[str, float]:
    return {r["method"]: r["cold_us"] for r in sample["results"]
            if (r["n"], r["dtype"]) == (n, dtype) and r["correct"]}


@needs_matplotlib
def test_plot_step_speedups_from_sample(sample, tmp_path):
    path = tmp_path / "speedup.png"
    fig = plot.plot_step_speedups(sample, path=path)
    assert isinstance(fig, matplotlib.figure.Figure)
    top, bottom = fig.axes
    name = sample["device"]["name"]
    user = f"{name} (this run, n = 2^22)"
    refs = reference.REFERENCES
    # this run: the 8 steps (fast included, cub not: it is no step)
    assert _bars(top) == {user: 8, refs["harris"].label: 7}
    assert _bars(bottom) == {user: 7, refs["harris"].label: 6}
    reference_lines = [line.get_label() for line in top.get_lines()]
    assert len(reference_lines) == 3
    assert reference_lines[0].startswith("cub (reference, this run): ")
    assert reference_lines[1].startswith("torch.sum (peer, this run): ")
    assert reference_lines[2].startswith("cupy.sum (peer, this run): ")
    assert name in fig.get_suptitle()
    assert "cold GPU time" in top.get_title()
    assert "×" in top.get_ylabel() and "cumulative" in top.get_ylabel()
    assert "×" in bottom.get_ylabel() and "step" in bottom.get_ylabel()
    assert top.get_yscale() == "log"
    labels = [t.get_text() for t in bottom.get_xticklabels()]
    assert labels == [f"{i + 1}. {m}" for i, m in enumerate(STEPS)]
    assert labels[-1] == "8. fast"
    # the user's cumulative bars are the speedups of the cold times
    t = _cold(sample)
    heights = [p.get_height() for p in top.containers[0].patches]
    assert heights == pytest.approx(
        [t["interleaved_divergent"] / t[m] for m in STEPS])
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@needs_matplotlib
def test_plot_step_speedups_labels_sources_by_name(sample):
    """The published tables are labelled by their sources' names, hardware
    and size, never by where the project keeps them."""
    fig = plot.plot_step_speedups(sample)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[1:2] == ["Harris 2007 (G80, 2^22 ints)"]
    assert not any("seed" in label.lower() for label in legend)


@needs_matplotlib
def test_plot_step_speedups_two_sizes_side_by_side(sample):
    """n=[2^22, 2^24]: one bar series per size, in that order, each the
    speedups of its own cold times; the references' lines per size, styled
    by size; the published tables once."""
    fig = plot.plot_step_speedups(sample, n=[1 << 22, 1 << 24],
                                  reference="harris")
    top, bottom = fig.axes
    name = sample["device"]["name"]
    assert list(_bars(top)) == [f"{name} (this run, n = 2^22)",
                                f"{name} (this run, n = 2^24)",
                                reference.REFERENCES["harris"].label]
    for container, n in zip(top.containers[:2], (1 << 22, 1 << 24)):
        t = _cold(sample, n)
        assert list(_by_step(container).values()) == pytest.approx(
            [t["interleaved_divergent"] / t[m] for m in STEPS])
    for container, n in zip(bottom.containers[:2], (1 << 22, 1 << 24)):
        t = _cold(sample, n)
        assert list(_by_step(container).values()) == pytest.approx(
            [t[a] / t[b] for a, b in zip(STEPS, STEPS[1:])])
    # side by side: the three bars of a step next to each other
    xs = [[p.get_x() for p in c.patches][0] for c in top.containers]
    assert xs == sorted(xs)
    lines = {line.get_label().split(":")[0]: line for line in top.get_lines()}
    assert list(lines) == [f"{m} ({kind}, this run, n = 2^{k})"
                           for k in (22, 24)
                           for m, kind in (("cub", "reference"),
                                           ("torch.sum", "peer"),
                                           ("cupy.sum", "peer"))]
    for k, n in ((22, 1 << 22), (24, 1 << 24)):
        t = _cold(sample, n)
        cub = lines[f"cub (reference, this run, n = 2^{k})"]
        assert list(cub.get_ydata()) == pytest.approx(
            [t["interleaved_divergent"] / t["cub"]] * 2)
    styles = {line.get_label(): line.get_linestyle()
              for line in top.get_lines()}
    assert len({s for label, s in styles.items() if "2^22" in label}) == 1
    assert {s for label, s in styles.items() if "2^22" in label} != \
        {s for label, s in styles.items() if "2^24" in label}
    # the same method keeps its colour at both sizes
    colors = {label.split(" ")[0]: set() for label in styles}
    for line in top.get_lines():
        colors[line.get_label().split(" ")[0]].add(str(line.get_color()))
    assert all(len(c) == 1 for c in colors.values())
    # one size given as a list is one size; a size not measured is an error
    single = plot.plot_step_speedups(sample, n=[1 << 24], reference=None)
    assert list(_bars(single.axes[0])) == [f"{name} (this run, n = 2^24)"]
    with pytest.raises(ValueError, match="n=123"):
        plot.plot_step_speedups(sample, n=[1 << 22, 123])
    with pytest.raises(ValueError, match="no size"):
        plot.plot_step_speedups(sample, n=[])


@needs_matplotlib
def test_plot_step_speedups_fast_bar_and_cub_line(sample):
    """fast is the 8th bar of this run (at x = 7, past the published steps):
    cumulative over step 1 above, its step over multi_element below; cub is
    a horizontal line at its cumulative speedup, labelled as the
    reference."""
    fig = plot.plot_step_speedups(sample, reference="harris")
    top, bottom = fig.axes
    t = _cold(sample)
    user_top, harris_top = top.containers
    user_bottom, harris_bottom = bottom.containers
    top_bars, bottom_bars = _by_step(user_top), _by_step(user_bottom)
    assert sorted(top_bars) == list(range(8))
    assert top_bars[7] == pytest.approx(t["interleaved_divergent"] / t["fast"])
    assert bottom_bars[7] == pytest.approx(t["multi_element"] / t["fast"])
    assert bottom_bars[6] == pytest.approx(t["unroll_complete"]
                                           / t["multi_element"])
    # Harris has no step 8
    assert 7 not in _by_step(harris_top) and 7 not in _by_step(harris_bottom)
    # the bar labels of this run include fast's
    labels = [text.get_text() for text in top.texts]
    assert f"{t['interleaved_divergent'] / t['fast']:.1f}×" in labels
    # no bar at cub's height: cub is a line, not a step
    cub_cum = t["interleaved_divergent"] / t["cub"]
    assert all(h != pytest.approx(cub_cum) for h in top_bars.values())
    lines = {line.get_label().split(" (")[0]: line for line in top.get_lines()}
    assert list(lines) == ["cub", "torch.sum", "cupy.sum"]
    cub = lines["cub"]
    assert cub.get_label() == f"cub (reference, this run): {cub_cum:.1f}×"
    assert list(cub.get_ydata()) == pytest.approx([cub_cum, cub_cum])
    assert cub.get_linestyle() != "-"
    # told apart from the peers' lines
    assert len({str(line.get_color()) for line in lines.values()}) == 3
    # in the legend
    legend = [text.get_text() for text in top.get_legend().get_texts()]
    assert cub.get_label() in legend
    # the y range reaches the fastest step: fast
    assert top.get_ylim()[1] >= top_bars[7]


@needs_matplotlib
def test_plot_step_speedups_without_fast_and_cub(sample):
    """A run without fast and cub: no step-8 bar and no reference line, the
    axis still has all 8 steps."""
    sample["results"] = [r for r in sample["results"]
                         if r["method"] not in ("fast", "cub")]
    fig = plot.plot_step_speedups(sample, reference=None)
    top, bottom = fig.axes
    (user,) = top.containers
    assert list(_by_step(user)) == list(range(7))
    assert [line.get_label().split(" ")[0] for line in top.get_lines()] == \
        PEERS
    assert [t.get_text() for t in bottom.get_xticklabels()][-1] == "8. fast"


@needs_matplotlib
def test_plot_step_speedups_wrong_and_size_choice(sample):
    fig = plot.plot_step_speedups(sample, reference=None, n=1 << 16)
    top, bottom = fig.axes
    user = f"{sample['device']['name']} (this run, n = 2^16)"
    assert _bars(top) == {user: 7}          # unroll_complete WRONG: no bar
    assert _bars(bottom) == {user: 6}
    xs = [p.get_x() + p.get_width() / 2 for p in top.containers[0].patches]
    assert xs == pytest.approx([0, 1, 2, 3, 4, 6, 7])


@needs_matplotlib
def test_plot_step_speedups_defaults_to_largest_without_2_22(sample):
    sample["results"] = [r for r in sample["results"] if r["n"] != 1 << 22]
    fig = plot.plot_step_speedups(sample, reference="harris")
    labels = list(_bars(fig.axes[0]))
    assert labels[0].endswith("n = 2^24)") and len(labels) == 2


@needs_matplotlib
def test_plot_step_speedups_relative_to_first_timed(sample):
    sample["results"] = [r for r in sample["results"]
                         if r["method"] != "interleaved_divergent"]
    fig = plot.plot_step_speedups(sample, reference=None)
    (label,) = _bars(fig.axes[0])
    assert "relative to interleaved_bank_conflict" in label


# ---------------------------------------------------------------------------
# The bandwidth plot


CEILING = "read ceiling, cold (read-only kernel; 2,979 GB/s at 1 GiB)"
CEILING_B2B = ("read ceiling, back to back (read-only kernel; 3,091 GB/s at "
               "1 GiB)")


@needs_matplotlib
def test_plot_bandwidth_from_sample(sample, tmp_path):
    path = tmp_path / "bandwidth.png"
    fig = plot.plot_bandwidth(sample, path=path)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    methods = [f"{i + 1}. {m}" for i, m in enumerate(STEPS)]
    assert methods[-1] == "8. fast"
    references = ["cub (reference)", "torch.sum (peer)", "cupy.sum (peer)"]
    assert list(lines) == methods + references + [CEILING]
    for label in methods + references:
        expected = 4 if label == "6. unroll_complete" else 5   # one WRONG
        assert len(lines[label].get_xdata()) == expected, label
        assert lines[label].get_linestyle() == "-"
    # each method's cold GB/s: bytes read over its cold time
    for method, label in (("fast", "8. fast"), ("cub", "cub (reference)"),
                          ("multi_element", "7. multi_element"),
                          ("cupy.sum", "cupy.sum (peer)")):
        rows = [r for r in sample["results"]
                if r["method"] == method and r["dtype"] == "float32"]
        assert list(lines[label].get_xdata()) == [r["n"] for r in rows]
        assert list(lines[label].get_ydata()) == pytest.approx(
            [r["n"] * 4 / r["cold_us"] / 1e3 for r in rows])
    # the ceiling: the read probe's cold GB/s at each size's bytes
    ceiling = lines[CEILING]
    sizes = [1 << k for k in (16, 18, 20, 22, 24)]
    probes = {p["bytes"]: p for p in sample["probes"]}
    assert list(ceiling.get_xdata()) == sizes
    assert list(ceiling.get_ydata()) == pytest.approx(
        [4 * n / probes[4 * n]["read_cold_us"] / 1e3 for n in sizes])
    assert ceiling.get_linestyle() == ":"
    # references told apart by colour and marker; fast from the references
    colors = {label: str(lines[label].get_color())
              for label in methods + references}
    assert len(set(colors[label] for label in references)) == 3
    assert len({lines[label].get_marker() for label in references}) == 3
    assert colors["8. fast"] not in {colors[label] for label in references}
    assert colors["8. fast"] != colors["7. multi_element"]
    # the y range reaches the highest line
    assert ax.get_ylim()[1] >= max(max(line.get_ydata())
                                   for line in lines.values())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == methods + references + [CEILING]
    assert ax.get_xscale() == "log"
    assert "n (elements" in ax.get_xlabel()
    assert "GB/s" in ax.get_ylabel()
    assert sample["device"]["name"] in ax.get_title()
    assert "float32" in ax.get_title() and "cold" in ax.get_title()
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@needs_matplotlib
def test_plot_bandwidth_back_to_back_dashed(sample):
    """batch=True adds each method's back-to-back GB/s, dashed in its
    colour, and the probe's back-to-back ceiling; a peer without
    back-to-back figures gets no dashed line."""
    sample["results"] = [dict(r, batch_us=None) if r["method"] == "cupy.sum"
                         else r for r in sample["results"]]
    fig = plot.plot_bandwidth(sample, batch=True)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    b2b = {label: line for label, line in lines.items()
           if label.endswith(", back to back")}
    assert sorted(b2b) == sorted(
        [f"{i + 1}. {m}, back to back" for i, m in enumerate(STEPS)]
        + ["cub (reference), back to back",
           "torch.sum (peer), back to back"])
    for label, line in b2b.items():
        cold = lines[label[:-len(", back to back")]]
        assert line.get_linestyle() == "--"
        assert str(line.get_color()) == str(cold.get_color())
    rows = [r for r in sample["results"]
            if r["method"] == "sequential" and r["dtype"] == "float32"]
    assert list(b2b["3. sequential, back to back"].get_ydata()) == \
        pytest.approx([r["n"] * 4 / r["batch_us"] / 1e3 for r in rows])
    ceiling = lines[CEILING_B2B]
    probes = {p["bytes"]: p for p in sample["probes"]}
    assert list(ceiling.get_ydata()) == pytest.approx(
        [4 * r["n"] / probes[4 * r["n"]]["read_batch_us"] / 1e3
         for r in rows])
    assert ceiling.get_linestyle() == "--"
    # the legend: the cold lines, both ceilings and one key to the dashes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-3:] == [CEILING, CEILING_B2B,
                           "dashed: back to back (same colour)"]
    assert not any(label.endswith(", back to back") for label in legend)
    assert ax.get_ylim()[1] >= max(max(line.get_ydata())
                                   for line in lines.values())
    assert "back to back" in ax.get_title()


@needs_matplotlib
def test_plot_bandwidth_other_group_and_json_path(tmp_path):
    fig = plot.plot_bandwidth(str(SAMPLE_PATH), dtype="int32")
    (ax,) = fig.axes
    # 8 steps, cub, the ceiling; no peers were timed on int32
    labels = [line.get_label() for line in ax.get_lines()]
    assert len(labels) == 8 + 1 + 1
    assert labels[7:9] == ["8. fast", "cub (reference)"]
    assert labels[9].startswith("read ceiling, cold")
    assert "int32" in ax.get_title()
    with pytest.raises(ValueError):
        plot.plot_bandwidth(str(SAMPLE_PATH), dtype="float64")


@needs_matplotlib
def test_plots_reject_invalid_documents(sample):
    sample["floor"]["read_cold_gbps"] = -1
    with pytest.raises(ValueError, match="floor.read_cold_gbps"):
        plot.plot_bandwidth(sample)
    with pytest.raises(ValueError, match="floor.read_cold_gbps"):
        plot.plot_step_speedups(sample)


@needs_matplotlib
def test_plot_module_does_not_select_a_backend():
    run_python("import sys, cudareduce.bench.plot, cudareduce.bench; "
               "assert 'matplotlib.pyplot' not in sys.modules")


@needs_matplotlib
def test_saved_png_holds_what_it_plots(sample, tmp_path):
    """A PNG the plots save carries plot.plotted of its figure (what
    make_figures' committed figures are checked by): the figure's bars,
    lines and texts, so that a change to any of them shows; other formats
    save without it."""
    import json

    from PIL import Image

    path = tmp_path / "speedup.png"
    fig = plot.plot_step_speedups(sample, path=path)
    with Image.open(path) as image:
        saved = json.loads(image.text[plot.PLOTTED_KEY])
    assert saved == plot.plotted(fig)
    top = saved["axes"][0]
    assert saved["title"] == fig.get_suptitle()
    assert [b["label"] for b in top["bars"]] == list(_bars(fig.axes[0]))
    assert top["bars"][0]["height"] == pytest.approx(
        [p.get_height() for p in fig.axes[0].containers[0].patches])
    assert top["legend"][1] == "Harris 2007 (G80, 2^22 ints)"
    # one time of the size shown changed: another figure
    (shown,) = [r for r in sample["results"] if r["n"] == 1 << 22
                and r["dtype"] == "float32" and r["method"] == "first_add"]
    shown["cold_us"] *= 2
    assert plot.plotted(plot.plot_step_speedups(sample)) != saved
    plot.plot_bandwidth(sample, path=tmp_path / "bandwidth.svg")
    assert (tmp_path / "bandwidth.svg").read_bytes().startswith(b"<?xml")


# ---------------------------------------------------------------------------
# Without matplotlib


_WITHOUT_MATPLOTLIB = r'''
import contextlib, importlib.util, io, json, sys, tempfile
sys.modules["matplotlib"] = None          # as if it were not installed
from cudareduce.bench import cli
from cudareduce.bench.results import Results

sample, make_figures_py = sys.argv[1], sys.argv[2]
said = {}
try:
    import cudareduce.bench.plot
except ImportError as e:
    said["import"] = str(e)
try:
    Results.from_json(sample).plot_step_speedups()
except ImportError as e:
    said["Results.plot_step_speedups"] = str(e)
cli.run = lambda *args, **kwargs: Results.from_json(sample)
with tempfile.TemporaryDirectory() as tmp:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(["--plot", tmp + "/run.png"])
    said["python -m cudareduce.bench --plot"] = (rc, err.getvalue())
    spec = importlib.util.spec_from_file_location("make_figures", make_figures_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = module.main(["--from", sample, "--out", tmp])
    said["docs/make_figures.py"] = (rc, err.getvalue())
print(json.dumps(said))
'''


def test_without_matplotlib_the_plots_name_the_extra_to_install():
    """With matplotlib missing (None in sys.modules, in a child Python),
    importing the plots, a Results' plot, ``--plot`` and
    docs/make_figures.py each say which extra to install (``bench``,
    which holds matplotlib): an ImportError with the command, or a
    one-line message and exit status 1, never a bare ModuleNotFoundError
    traceback."""
    import json
    import re

    from support.bench_data import RECORDING_PATH

    pyproject = (RECORDING_PATH.parents[2] / "pyproject.toml").read_text(
        encoding="utf-8")
    (bench_extra,) = re.findall(r"^bench = \[(.*)\]$", pyproject, re.M)
    assert '"matplotlib"' in bench_extra
    make_figures = RECORDING_PATH.parent.parent / "make_figures.py"
    proc = run_python(_WITHOUT_MATPLOTLIB, str(SAMPLE_PATH),
                      str(make_figures))
    said = json.loads(proc.stdout)
    assert list(said) == ["import", "Results.plot_step_speedups",
                          "python -m cudareduce.bench --plot",
                          "docs/make_figures.py"]
    install = 'python -m pip install -e ".[bench]"'
    for where, message in said.items():
        if isinstance(message, list):
            rc, printed = message
            assert rc == 1, where
            assert "Traceback" not in printed, where
            message = printed.splitlines()[-1]      # its last line
        assert "need matplotlib" in message, (where, message)
        assert "install the bench extra" in message and install in message, \
            (where, message)
