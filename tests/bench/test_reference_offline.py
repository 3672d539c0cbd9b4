"""cudareduce.bench.reference, the published ladder tables, without a GPU, and
a bench run beside them (side_by_side)."""
from __future__ import annotations

import pytest

from cudareduce.bench import figures, names
from support.bench_data import LADDER, METHODS, results, sample  # noqa: F401
from cudareduce.bench import reference


# ---------------------------------------------------------------------------
# Reference tables


#: A made-up table's fields but its times.
_TABLE = dict(key="k", label="l", title="t", author="a",
              citation="a, t, https://example.org/t.pdf",
              url="https://example.org/t.pdf", device="d", environment="e",
              n=1, dtype=None, threads=None)


def test_reference_ladder_is_the_packages():
    """The published steps: the package's first seven methods, without the
    fast path and cub, which no published table has."""
    assert reference.LADDER == tuple(METHODS[:7]) == tuple(LADDER)
    assert "fast" not in reference.LADDER and "cub" not in reference.LADDER
    for table in reference.REFERENCES.values():
        assert not {"fast", "cub"} & set(table.times_us)
    with pytest.raises(ValueError, match="unknown ladder methods"):
        reference.ReferenceTable(**_TABLE, times_us={"fast": 1.0})


def test_reference_harris_figures_agree():
    harris = reference.REFERENCES["harris"]
    assert list(harris.times_us) == LADDER
    assert harris.times_us["interleaved_divergent"] == pytest.approx(8054.0)
    assert harris.times_us["multi_element"] == pytest.approx(268.0)
    cumulative = harris.cumulative_speedups()
    assert cumulative["multi_element"] == pytest.approx(
        harris.published_cumulative, abs=0.02)
    # the slides' step speedups, kernel 2 to 7
    assert [round(s, 2) for s in harris.step_speedups().values()] == \
        [2.33, 2.01, 1.78, 1.8, 1.41, 1.42]
    for method, gbps in harris.published_gbps.items():
        computed = harris.n * 4 / (harris.times_us[method] * 1e3)
        assert computed == pytest.approx(gbps, rel=2e-3), method
    assert harris.url == ("https://developer.download.nvidia.com/assets/"
                          "cuda/files/reduction.pdf")
    for part in ("Mark Harris", "Optimizing Parallel Reduction in CUDA",
                 "2007", harris.url):
        assert part in harris.citation, part


def test_reference_tables_are_read_only():
    harris = reference.REFERENCES["harris"]
    with pytest.raises(TypeError):
        harris.times_us["sequential"] = 1.0
    with pytest.raises(AttributeError):
        harris.n = 5
    with pytest.raises(TypeError):
        reference.REFERENCES["x"] = harris


def test_reference_tables_are_named_by_their_sources():
    """Keys and labels name each source (its authors, else its title), never
    where the project keeps it; each cites its public address (a table
    whose source has none, as the project's seed files, is not kept)."""
    assert list(reference.REFERENCES) == ["harris"]
    for table in reference.REFERENCES.values():
        assert "seed" not in table.key and "seed" not in table.label.lower()
        first_author = table.author.split(" & ")[0].split()[-1] \
            if table.author else ""
        assert (first_author or table.title) in table.label, table.label
        assert table.device in table.label
        assert table.url.startswith("https://") and table.url in \
            table.citation
        assert "seed" not in table.citation.lower()
    assert reference.REFERENCES["harris"].label == \
        "Harris 2007 (G80, 2^22 ints)"


def test_reference_select():
    assert reference.select(None) == []
    assert [t.key for t in reference.select("all")] == list(reference.REFERENCES)
    assert [t.key for t in reference.select("harris")] == ["harris"]
    assert [t.key for t in reference.select(["harris", "harris"])] == \
        ["harris", "harris"]
    with pytest.raises(ValueError, match="valid keys"):
        reference.select(["nope"])


def test_reference_rejects_unknown_method():
    with pytest.raises(ValueError, match="unknown ladder methods"):
        reference.ReferenceTable(**_TABLE, times_us={"warp_shuffle": 1.0})


def test_reference_rejects_a_source_without_a_public_address():
    """A table is kept only with its source's public address, cited: a
    file of the project's, or no address at all, is refused."""
    reference.ReferenceTable(**_TABLE, times_us={"sequential": 1.0})
    for url, citation in ((None, "c"), ("", "c"),
                          ("002_d2f30ed02251f9f1.txt",
                           "002_d2f30ed02251f9f1.txt"),
                          ("https://example.org/t.pdf", "c, no address")):
        with pytest.raises(ValueError, match="public address"):
            reference.ReferenceTable(**{**_TABLE, "url": url,
                                        "citation": citation},
                                     times_us={"sequential": 1.0})


# ---------------------------------------------------------------------------
# The references beside a run


def test_side_by_side(results):
    text = reference.side_by_side(results)
    lines = text.splitlines()
    assert lines[0].split() == ["step", "this", "run", "harris"]
    # the seven published steps: fast and cub have no published figures
    body = lines[2:2 + len(LADDER)]
    assert [line.split()[1] for line in body] == LADDER
    assert lines[2 + len(LADDER)] == ""
    steps_table = text.split("\n\n")[0]
    assert "fast" not in steps_table and "cub" not in steps_table
    rows = figures.group_results(results["results"])[("float32", 1 << 22, 256)]
    # the run's column: cold times and their step speedups
    t = {r["method"]: r["cold_us"] for r in rows}
    assert f"{t['sequential']:,.1f} µs " \
           f"({t['interleaved_bank_conflict'] / t['sequential']:.2f}×)" \
        in body[2]
    assert "8,054 µs" in body[0] and "(2.33×)" in body[1]
    assert "268.0 µs (1.42×)" in body[6]
    assert "n = 4,194,304 float32" in text and "reduction.pdf" in text
    assert "cold GPU time" in text
    assert "seed" not in text
    # the wrong row of 2^16 has no time; references can be left out
    small = reference.side_by_side(results, n=1 << 16, reference=None)
    assert small.splitlines()[0].split() == ["step", "this", "run"]
    assert small.splitlines()[2 + LADDER.index("unroll_complete")] \
        .endswith(" -")
    with pytest.raises(ValueError, match="n=5"):
        reference.side_by_side(results, n=5)


def test_side_by_side_shows_the_runs_sums_only(sample):
    """The published tables time sums: another op's results beside them
    are left out, and a run of another op alone is refused."""
    sums = reference.side_by_side(sample)
    products = [{**r, "op": "prod"} for r in sample["results"]
                if not names.is_peer(r["method"])]
    mixed = {**sample, "results": sample["results"] + products}
    assert reference.side_by_side(mixed) == sums
    with pytest.raises(ValueError, match="published tables time sums"):
        reference.side_by_side({**sample, "results": products})
