"""cudareduce.plot without a GPU: both figures drawn from the recorded
sample (tests/data/bench_sample.json) and from JSON files."""
from __future__ import annotations

import pytest

import cudareduce.results as model
from bench_data import (PEERS, PNG_MAGIC, SAMPLE_PATH, STEPS,  # noqa: F401
                        matplotlib, needs_matplotlib, plot, run_python,
                        sample)
from cudareduce import reference


# ---------------------------------------------------------------------------
# Plots


def _bars(ax) -> dict[str, int]:
    return {c.get_label(): len(c.patches) for c in ax.containers}


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
    assert _bars(top) == {user: 8,
                          refs["harris"].label: 7,
                          refs["seed_002_rtx3060"].label: 6,
                          refs["seed_003_lab7"].label: 5}
    assert _bars(bottom) == {user: 7,
                             refs["harris"].label: 6,
                             refs["seed_002_rtx3060"].label: 5,
                             refs["seed_003_lab7"].label: 4}
    reference_lines = [line.get_label() for line in top.get_lines()]
    assert len(reference_lines) == 3
    assert reference_lines[0].startswith("cub (reference, this run): ")
    assert reference_lines[1].startswith("torch.sum (peer, this run): ")
    assert reference_lines[2].startswith("cupy.sum (peer, this run): ")
    assert name in fig.get_suptitle()
    assert "×" in top.get_ylabel() and "cumulative" in top.get_ylabel()
    assert "×" in bottom.get_ylabel() and "step" in bottom.get_ylabel()
    assert top.get_yscale() == "log"
    labels = [t.get_text() for t in bottom.get_xticklabels()]
    assert labels == [f"{i + 1}. {m}" for i, m in enumerate(STEPS)]
    assert labels[-1] == "8. fast"
    # the user's cumulative bars are the document's speedups
    rows = model.group_results(sample["results"])[("float32", 1 << 22, 256)]
    expected = [c for r, (_, c) in zip(rows, model.speedups(rows))
                if r["method"] in STEPS]
    heights = [p.get_height() for p in top.containers[0].patches]
    assert heights == pytest.approx(expected)
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@needs_matplotlib
def test_plot_step_speedups_fast_bar_and_cub_line(sample):
    """fast is the 8th bar of this run (at x = 7, past the published steps):
    cumulative over step 1 above, its step over multi_element below; cub is
    a horizontal line at its cumulative speedup, labelled as the
    reference."""
    fig = plot.plot_step_speedups(sample, reference="harris")
    top, bottom = fig.axes
    t = {r["method"]: r["median_us"] for r in sample["results"]
         if r["n"] == 1 << 22 and r["dtype"] == "float32"}
    user_top, harris_top = top.containers
    user_bottom, harris_bottom = bottom.containers

    def by_step(container):
        return {round(p.get_x() + p.get_width() / 2): p.get_height()
                for p in container.patches}

    top_bars, bottom_bars = by_step(user_top), by_step(user_bottom)
    assert sorted(top_bars) == list(range(8))
    assert top_bars[7] == pytest.approx(t["interleaved_divergent"] / t["fast"])
    assert bottom_bars[7] == pytest.approx(t["multi_element"] / t["fast"])
    assert bottom_bars[6] == pytest.approx(t["unroll_complete"]
                                           / t["multi_element"])
    # Harris has no step 8
    assert 7 not in by_step(harris_top) and 7 not in by_step(harris_bottom)
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
    """A run from before fast and cub (the recorded H100 run has neither):
    no step-8 bar and no reference line, the axis still has all 8 steps."""
    sample["results"] = [r for r in sample["results"]
                         if r["method"] not in ("fast", "cub")]
    fig = plot.plot_step_speedups(sample, reference=None)
    top, bottom = fig.axes
    (user,) = top.containers
    xs = [round(p.get_x() + p.get_width() / 2) for p in user.patches]
    assert xs == list(range(7))
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


@needs_matplotlib
def test_plot_bandwidth_from_sample(sample, tmp_path):
    path = tmp_path / "bandwidth.png"
    fig = plot.plot_bandwidth(sample, path=path)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    methods = [f"{i + 1}. {m}" for i, m in enumerate(STEPS)]
    assert methods[-1] == "8. fast"
    references = ["cub (reference)", "torch.sum (peer)", "cupy.sum (peer)"]
    copy_label = "device copy (read+write): 2,600 GB/s"
    assert list(lines) == methods + references + [copy_label]
    for label in methods + references:
        expected = 4 if label == "6. unroll_complete" else 5   # one WRONG
        assert len(lines[label].get_xdata()) == expected, label
    for label in references:
        assert lines[label].get_linestyle() != "-"
    for label in methods:
        assert lines[label].get_linestyle() == "-"
    for method, label in (("fast", "8. fast"), ("cub", "cub (reference)")):
        rows = [r for r in sample["results"]
                if r["method"] == method and r["dtype"] == "float32"]
        assert list(lines[label].get_xdata()) == [r["n"] for r in rows]
        assert list(lines[label].get_ydata()) == \
            pytest.approx([r["gbps"] for r in rows])
    # cub's line is told apart from the peers', fast's from the references'
    colors = {label: str(lines[label].get_color())
              for label in methods + references}
    assert len(set(colors[label] for label in references)) == 3
    assert colors["8. fast"] not in {colors[label] for label in references}
    assert colors["8. fast"] != colors["7. multi_element"]
    # the y range reaches fast's 2^24 figure, above the copy line
    assert ax.get_ylim()[1] >= max(lines["8. fast"].get_ydata()) > 2600.0
    assert lines["1. interleaved_divergent"].get_linestyle() == "-"
    assert list(lines[copy_label].get_ydata()) == [2600.0, 2600.0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == methods + references + [copy_label]
    me = [r for r in sample["results"]
          if r["method"] == "multi_element" and r["dtype"] == "float32"]
    assert list(lines["7. multi_element"].get_xdata()) == [r["n"] for r in me]
    assert list(lines["7. multi_element"].get_ydata()) == \
        pytest.approx([r["gbps"] for r in me])
    assert ax.get_xscale() == "log"
    assert "n (elements" in ax.get_xlabel()
    assert "GB/s" in ax.get_ylabel()
    assert sample["device"]["name"] in ax.get_title()
    assert "float32" in ax.get_title()
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@needs_matplotlib
def test_plot_bandwidth_other_group_and_json_path(tmp_path):
    fig = plot.plot_bandwidth(str(SAMPLE_PATH), dtype="int32")
    (ax,) = fig.axes
    # 8 steps, cub, the copy line; no peers were timed on int32
    labels = [line.get_label() for line in ax.get_lines()]
    assert len(labels) == 8 + 1 + 1
    assert labels[7:9] == ["8. fast", "cub (reference)"]
    assert "int32" in ax.get_title()
    with pytest.raises(ValueError):
        plot.plot_bandwidth(str(SAMPLE_PATH), dtype="float64")


@needs_matplotlib
def test_plots_reject_invalid_documents(sample):
    sample["device"]["copy_gbps"] = -1
    with pytest.raises(ValueError):
        plot.plot_bandwidth(sample)
    with pytest.raises(ValueError):
        plot.plot_step_speedups(sample)


@needs_matplotlib
def test_plot_module_does_not_select_a_backend():
    run_python("import sys, cudareduce.plot, cudareduce.bench; "
            "assert 'matplotlib.pyplot' not in sys.modules")
