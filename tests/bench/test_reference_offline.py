"""cudareduce.bench.reference, the published ladder tables, without a GPU, and
a bench run beside them (side_by_side)."""
from __future__ import annotations

import pytest

from cudareduce.bench import figures, names
from support.bench_data import LADDER, METHODS, results, sample  # noqa: F401
from cudareduce.bench import reference


# ---------------------------------------------------------------------------
# Reference tables


def test_reference_ladder_is_the_packages():
    """The published steps: the package's first seven methods, without the
    fast path and cub, which no published table has."""
    assert reference.LADDER == tuple(METHODS[:7]) == tuple(LADDER)
    assert "fast" not in reference.LADDER and "cub" not in reference.LADDER
    for table in reference.REFERENCES.values():
        assert not {"fast", "cub"} & set(table.times_us)
    with pytest.raises(ValueError, match="unknown ladder methods"):
        reference.ReferenceTable(
            key="k", label="l", title="t", author="", citation="c", url=None,
            device="d", environment="e", n=1, dtype=None, threads=None,
            times_us={"fast": 1.0})


def test_reference_harris_figures_agree():
    harris = reference.REFERENCES["harris"]
    assert list(harris.times_us) == LADDER
    assert harris.times_us["interleaved_divergent"] == pytest.approx(8054.0)
    assert harris.times_us["multi_element"] == pytest.approx(268.0)
    cumulative = harris.cumulative_speedups()
    assert cumulative["multi_element"] == pytest.approx(
        harris.published_cumulative, abs=0.02)
    for method, gbps in harris.published_gbps.items():
        computed = harris.n * 4 / (harris.times_us[method] * 1e3)
        assert computed == pytest.approx(gbps, rel=2e-3), method
    assert "reduction.pdf" in harris.url and "Mark Harris" in harris.citation


def test_reference_other_tables():
    s2 = reference.REFERENCES["shared_memory_reduction"]
    assert list(s2.times_us.values()) == [520, 353, 333, 186, 131, 123]
    assert list(s2.times_us) == LADDER[:6]
    assert s2.cumulative_speedups()["unroll_complete"] == pytest.approx(
        s2.published_cumulative, rel=1e-6)
    assert s2.step_speedups()["interleaved_bank_conflict"] == \
        pytest.approx(1.473088, rel=1e-6)
    assert "002_d2f30ed02251f9f1.txt" in s2.citation
    assert s2.device == "RTX 3060" and "11.8" in s2.environment
    s3 = reference.REFERENCES["report_lab7"]
    assert [round(t) for t in s3.times_us.values()] == \
        [4580, 3330, 3120, 3100, 2520]
    assert list(s3.times_us) == LADDER[:5]
    assert s3.n == 1024 * 65535 and s3.threads == 128
    assert "Gwiżdż" in s3.author and "Mucha" in s3.author
    assert "003_32552d01572ea838.txt" in s3.citation


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
    where the project keeps it."""
    assert list(reference.REFERENCES) == ["harris", "shared_memory_reduction",
                                          "report_lab7"]
    for table in reference.REFERENCES.values():
        assert "seed" not in table.key and "seed" not in table.label.lower()
        first_author = table.author.split(" & ")[0].split()[-1] \
            if table.author else ""
        assert (first_author or table.title) in table.label, table.label
        assert table.device in table.label or table.device == \
            "GPU not stated"
    assert reference.REFERENCES["harris"].label == \
        "Harris 2007 (G80, 2^22 ints)"
    assert reference.REFERENCES["shared_memory_reduction"].label == \
        '"Shared Memory Based Reduction" (RTX 3060, 2^22)'
    assert reference.REFERENCES["report_lab7"].label == \
        'Gwiżdż & Mucha, "Report Lab7" (1024×65535 floats)'


def test_reference_select():
    assert reference.select(None) == []
    assert [t.key for t in reference.select("all")] == list(reference.REFERENCES)
    assert [t.key for t in reference.select("harris")] == ["harris"]
    assert [t.key for t in reference.select(["report_lab7", "harris"])] == \
        ["report_lab7", "harris"]
    with pytest.raises(ValueError, match="valid keys"):
        reference.select(["nope"])


def test_reference_rejects_unknown_method():
    with pytest.raises(ValueError):
        reference.ReferenceTable(
            key="k", label="l", title="t", author="", citation="c", url=None,
            device="d", environment="e", n=1, dtype=None, threads=None,
            times_us={"warp_shuffle": 1.0})


# ---------------------------------------------------------------------------
# The references beside a run


def test_side_by_side(results):
    text = reference.side_by_side(results)
    lines = text.splitlines()
    assert lines[0].split() == ["step", "this", "run", "harris",
                                "shared_memory_reduction", "report_lab7"]
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
    assert body[5].split()[-1] == "-" and body[6].split()[-2:] == ["-", "-"]
    assert "n = 4,194,304 float32" in text and "reduction.pdf" in text
    assert "cold GPU time" in text
    assert "002_d2f30ed02251f9f1.txt" in text
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
