"""cudareduce.bench.results.Results without a GPU: the document as a Python
object, its tables (text, Markdown, HTML), JSON, pandas and plots, on the
synthetic sample and sweep of bench_data (formulas, not measurements)."""
from __future__ import annotations

import copy
import json
import sys

import pytest

from cudareduce.bench import figures, schema
from support.bench_data import (PEERS, PNG_MAGIC, STEPS,  # noqa: F401
                                matplotlib, needs_matplotlib, report_tables,
                                results, sample, sweep)
from cudareduce.bench.results import PANDAS_COLUMNS, Results


def test_results_is_the_validated_document(sample, results):
    assert isinstance(results, dict) and results == sample
    schema.validate_document(results)
    assert json.loads(json.dumps(results)) == sample
    assert results.device == sample["device"]
    assert results.sizes == [1 << k for k in (16, 18, 20, 22, 24)]
    # table order: the steps, cub, the peers
    assert results.methods == STEPS + ["cub", "torch.sum", "cupy.sum"]
    # a copy: changing the source leaves the Results alone
    sample["results"][0]["cold_us"] = 1.0
    sample["results"][0]["pass_us"].append(1.0)
    assert results["results"][0]["cold_us"] != 1.0
    assert len(results["results"][0]["pass_us"]) == 2
    bad = copy.deepcopy(results)
    bad["device"]["sm_count"] = 0
    with pytest.raises(ValueError, match="device.sm_count"):
        Results(bad)
    assert type(copy.deepcopy(results)) is Results


def test_results_json_round_trip(results, tmp_path):
    path = tmp_path / "r.json"
    results.to_json(path)
    again = Results.from_json(path)
    assert type(again) is Results and again == results
    assert json.loads(path.read_text(encoding="utf-8")) == results
    # the same file as write_json / --json
    schema.write_json(results, tmp_path / "w.json")
    assert (tmp_path / "w.json").read_text(encoding="utf-8") == \
        path.read_text(encoding="utf-8")


def test_results_from_json_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: not JSON"):
        Results.from_json(path)
    path.write_text('{"device": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: schema: missing"):
        Results.from_json(path)
    path.write_text('{"schema": 2, "device": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: document: missing keys"):
        Results.from_json(path)
    with pytest.raises(OSError):
        Results.from_json(tmp_path / "missing.json")


def test_results_repr_is_a_short_summary(results, sweep):
    text = repr(results)
    lines = text.splitlines()
    assert 2 <= len(lines) <= 5 and max(map(len, lines)) < 100
    assert text.startswith("<cudareduce.bench.Results: ") and text.endswith(">")
    assert lines[0] == (f"<cudareduce.bench.Results: {results.device['name']}"
                        f", cudareduce 0.1.0")
    assert lines[1].startswith(" 2000-01-01T00:00:00Z: float32, int32 sum, ")
    assert "float32, int32" in text and "256 threads" in text
    assert "n = 2^16, 2^18, 2^20, 2^22, 2^24 (5 sizes)" in text
    assert " methods: 8 steps (interleaved_divergent .. fast); references " \
        "cub, torch.sum, cupy.sum\n" in text
    assert "64 results, 1 WRONG: unroll_complete (n=2^16)" in text
    # a sweep like the README's: every method and both peers at 19 sizes
    assert "n = 2^10..2^28 (19 sizes)" in repr(sweep)
    assert " methods: 8 steps (interleaved_divergent .. fast); " \
        "references cub, torch.sum, cupy.sum\n" in repr(sweep)
    assert "209 results, all correct" in repr(sweep)
    one = sweep.select(n=2**22, methods=["sequential", "cupy.sum"])
    assert "methods: sequential; references cupy.sum" in repr(one)
    assert "n = 2^22\n" in repr(one)
    # cub alone is a reference, not a step; a few steps are named
    two = results.select(n=2**22, methods=["cub", "fast", "multi_element"])
    assert " methods: multi_element, fast; references cub\n" in repr(two)
    cub = results.select(methods="cub")
    assert " methods: no steps; references cub\n" in repr(cub)


def test_results_pretty_printer_uses_the_summary(results):
    """IPython's text form is the summary, not the dict's contents."""
    class Printer:
        def __init__(self):
            self.texts = []

        def text(self, value):
            self.texts.append(value)

    printer = Printer()
    results._repr_pretty_(printer, False)
    assert printer.texts == [repr(results)]
    try:
        from IPython.lib.pretty import pretty
    except ImportError:       # no IPython here: the hook above is all it uses
        return
    assert pretty(results) == repr(results)


def _html_tables(html: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, headers, rows of cell texts) of each <table>."""
    import html as html_module
    import re

    def cells(tag, text):
        return [html_module.unescape(c) for c in
                re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", text, re.S)]

    tables = []
    for table in re.findall(r"<table.*?</table>", html, re.S):
        caption = cells("caption", table)[0]
        head = cells("th", table)
        body = [cells("td", row) for row in
                re.findall(r"<tr(?:\s[^>]*)?>(.*?)</tr>",
                           table.split("<tbody>", 1)[1], re.S)]
        tables.append((caption, head, body))
    return tables


def test_results_repr_html_has_the_table_columns(results, sample):
    html = results._repr_html_()
    tables = _html_tables(html)
    groups = figures.table_groups(sample["results"])
    assert len(tables) == len(groups) == 6
    text_tables = report_tables(results.table())
    for (caption, head, body), ((op, dtype, n, threads), rows), text in zip(
            tables, groups.items(), text_tables):
        assert head == list(figures.TABLE_HEADERS)
        assert caption == figures.group_title(op, dtype, n, threads) == \
            f"{dtype}, n = {figures.format_n(n)}, {threads} threads per block"
        assert body == figures.group_cells(rows, sample)
        # the same cells as the text table
        assert [line.split() for line in text[2:]] == body
    assert "WRONG" in html and "color:#b00020" in html
    # the reference rows: cub in every group, the peers in the 5 float32 ones
    assert html.count('style="font-style:italic"') == 6 + 2 * 5
    step = figures.TABLE_HEADERS.index("step speedup")
    for _, _, body in tables:
        cub = [row for row in body if row[0] == "cub"]
        assert len(cub) == 1 and cub[0][step] == "reference"


def test_results_repr_html_head_is_the_tables(results):
    """The head of the text table, a paragraph a line, the first in bold."""
    import re
    html = results._repr_html_()
    paragraphs = re.findall(r"<p>(.*?)</p>", html, re.S)
    head = results.table().split("\n\n")[0].splitlines()
    assert paragraphs[0] == f"<b>{head[0]}</b>"
    assert paragraphs[1:] == head[1:]
    assert paragraphs[1].startswith("floor: empty kernel 2.50 µs cold")
    assert paragraphs[2].startswith("timing: synthetic")
    assert paragraphs[3].startswith("default n: ")


def test_results_repr_html_escapes(sample):
    doc = copy.deepcopy(sample)
    doc["device"]["name"] = "<script>alert('x')</script> & GPU"
    html = Results(doc)._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; GPU" in html


def test_results_select_keeps_the_rest_of_the_document(results):
    one = results.select(n=1 << 22, dtype="float32")
    assert type(one) is Results
    assert {(r["n"], r["dtype"]) for r in one["results"]} == \
        {(1 << 22, "float32")}
    for key in ("schema", "cudareduce_version", "date", "device", "timing",
                "floor", "probes"):
        assert one[key] == results[key], key
    assert len(report_tables(one.table())) == 1
    two = results.select(n=[1 << 16, 1 << 24], methods="sequential")
    assert [(r["n"], r["method"]) for r in two["results"]] == \
        [(1 << 16, "sequential"), (1 << 24, "sequential")]
    assert results.select(threads=256) == results
    with pytest.raises(ValueError, match="no results with n=123"):
        results.select(n=123)


def test_results_to_markdown(results):
    md = results.select(n=1 << 22).to_markdown().splitlines()
    head = results.table().split("\n\n")[0].splitlines()
    # the head, a paragraph a line
    assert md[:2 * len(head) - 1] == "\n\n".join(head).splitlines()
    assert "**float32, n = 4,194,304 (2^22), 256 threads per block**" in md
    header = md.index("| " + " | ".join(figures.TABLE_HEADERS) + " |")
    assert md[header + 1] == "|:---|" + "---:|" * 11
    assert md[header + 2].startswith("| interleaved_divergent | ")
    rows = figures.group_results(results["results"])[("float32", 1 << 22, 256)]
    cells = figures.group_cells(rows, results)
    assert md[header + 2:header + 2 + len(cells)] == \
        ["| " + " | ".join(c) + " |" for c in cells]
    groups = [i for i, line in enumerate(md) if line.startswith("**")]
    assert len(groups) == 2                      # float32 and int32 at 2^22


def test_results_to_markdown_joins_a_wrapped_head_line(results):
    results["timing"]["method"] = "word " * 40 + "end."
    md = results.to_markdown().split("\n\n")
    assert md[2] == "timing: " + "word " * 40 + "end."


def test_results_to_pandas_needs_pandas(results, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"to_pandas\(\) needs pandas"):
        results.to_pandas()


def test_results_to_pandas(results, sample):
    try:
        import pandas as pd
    except ImportError:
        # no pandas here: the clear ImportError (never a skip: the GPU check
        # fails on skips, and pandas is optional)
        with pytest.raises(ImportError, match="pip install pandas"):
            results.to_pandas()
        return
    df = results.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(schema.RESULT_KEYS) + list(PANDAS_COLUMNS)
    # the sample names no op: its results are sums
    assert set(df.op) == {"sum"}
    assert PANDAS_COLUMNS == (
        "peer", "reference", "bytes", "cold_gbps", "cold_pct_read",
        "batch_gbps", "batch_pct_read", "call_gbps", "first_pass_us",
        "rest_passes_us", "step_speedup", "cumulative_speedup")
    assert len(df) == len(sample["results"])
    for key in ("schema", "cudareduce_version", "date", "device", "timing",
                "floor", "probes"):
        assert df.attrs[key] == sample[key], key
    rows = figures.group_results(sample["results"])[("float32", 1 << 22, 256)]
    part = df[(df.n == 1 << 22) & (df.dtype == "float32")]
    assert list(part.method) == [r["method"] for r in rows]
    probe = next(p for p in sample["probes"] if p["bytes"] == 16 << 20)
    for (_, got), r, (step, cum) in zip(part.iterrows(), rows,
                                        figures.speedups(rows)):
        assert (pd.isna(got.step_speedup) if step is None
                else got.step_speedup == pytest.approx(step))
        assert got.cumulative_speedup == pytest.approx(cum)
        assert got.peer == (got.method in PEERS)
        assert got.reference == (got.method in PEERS + ["cub"])
        assert got.bytes == 16 << 20
        assert got.pass_us == r["pass_us"]
        for timing in ("cold", "batch"):
            us = r[f"{timing}_us"]
            assert got[f"{timing}_gbps"] == pytest.approx((16 << 20) / us
                                                          / 1e3)
            assert got[f"{timing}_pct_read"] == pytest.approx(
                100 * probe[f"read_{timing}_us"] / us)
        if r["call_us"] is None:
            assert pd.isna(got.call_us) and pd.isna(got.call_gbps)
        else:
            assert got.call_gbps == pytest.approx((16 << 20) / r["call_us"]
                                                  / 1e3)
        passes = r["pass_us"]
        assert (pd.isna(got.first_pass_us) if not passes
                else got.first_pass_us == passes[0])
        assert (pd.isna(got.rest_passes_us) if len(passes) < 2
                else got.rest_passes_us == pytest.approx(sum(passes[1:])))
    fast = part[part.method == "fast"].iloc[0]
    t = {r["method"]: r["cold_us"] for r in rows}
    assert fast.step_speedup == pytest.approx(t["multi_element"] / t["fast"])
    assert pd.isna(fast.rest_passes_us)
    assert pd.isna(part[part.method == "cub"].iloc[0].step_speedup)
    wrong = df[~df.correct]
    assert len(wrong) == 1
    assert wrong[["cold_us", "batch_us", "call_us", "cold_gbps",
                  "cold_pct_read", "batch_pct_read",
                  "first_pass_us"]].isna().all().all()


def _with_products(sample: dict) -> Results:
    """The sample's float32 2^22 results again, as products (torch.sum as
    torch.prod, cupy.sum as cupy.prod), at half the speed."""
    products = [dict(r, op="prod",
                     method=r["method"].replace(".sum", ".prod"),
                     cold_us=2 * r["cold_us"],
                     pass_us=[2 * t for t in r["pass_us"]])
                for r in sample["results"] if r["n"] == 1 << 22
                and r["dtype"] == "float32"]
    return Results({**sample, "results": sample["results"] + products})


def test_results_of_several_ops(sample, tmp_path):
    """A document of two ops: its ops, tables per op, select(op=...), a
    JSON round trip; an old document (the sample: no op) reads as sums."""
    both = _with_products(sample)
    assert both.ops == ["sum", "prod"]
    assert Results(sample).ops == ["sum"]
    assert "float32, int32 sum/prod, 256 threads" in repr(both)
    titles = [t.split("\n")[0] for t in both.table().split("\n\n")[1:]]
    assert titles[-1] == ("float32 prod, n = 4,194,304 (2^22), 256 threads "
                          "per block")
    assert len(titles) == 7
    products = both.select(op="prod")
    assert products.ops == ["prod"]
    assert products.methods[-2:] == ["torch.prod", "cupy.prod"]
    assert len(report_tables(products.table())) == 1
    assert both.select(op=["sum"])["results"] == sample["results"]
    with pytest.raises(ValueError, match="no results with op='max'"):
        both.select(op="max")
    both.to_json(tmp_path / "both.json")
    again = Results.from_json(tmp_path / "both.json")
    assert again == both and again.ops == ["sum", "prod"]
    md = both.to_markdown()
    assert "**float32 prod, n = 4,194,304 (2^22), 256 threads per block**" \
        in md
    assert "float32 prod, n = 4,194,304" in both._repr_html_()


def test_results_to_pandas_of_several_ops(sample):
    try:
        import pandas  # noqa: F401
    except ImportError:
        return               # test_results_to_pandas checks the ImportError
    df = _with_products(sample).to_pandas()
    prod = df[df.op == "prod"]
    assert len(prod) == 11 and set(prod.method) >= {"torch.prod", "fast"}
    # speedups within the op: the products' own first step
    assert prod.iloc[0].cumulative_speedup == pytest.approx(1.0)
    assert prod[prod.method == "torch.prod"].iloc[0].peer


@needs_matplotlib
def test_results_plots(results, tmp_path):
    fig = results.plot_step_speedups(reference="harris",
                                     path=tmp_path / "s.png",
                                     n=[1 << 20, 1 << 22])
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].containers) == 3       # this run twice + harris
    assert (tmp_path / "s.png").read_bytes().startswith(PNG_MAGIC)
    fig = results.plot_bandwidth(dtype="int32", batch=True)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert any(line.get_label().endswith(", back to back")
               for line in fig.axes[0].get_lines())
    # shown inline by Jupyter without pyplot: the Figure draws itself
    png = fig._repr_png_()
    assert png.startswith(PNG_MAGIC) and len(png) > 10_000
