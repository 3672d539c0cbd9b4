"""cudareduce.reference, the published ladder tables, without a GPU."""
from __future__ import annotations

import pytest

from bench_data import LADDER, METHODS, sample  # noqa: F401
from cudareduce import reference


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


def test_reference_seed_tables():
    s2 = reference.REFERENCES["seed_002_rtx3060"]
    assert list(s2.times_us.values()) == [520, 353, 333, 186, 131, 123]
    assert list(s2.times_us) == LADDER[:6]
    assert s2.cumulative_speedups()["unroll_complete"] == pytest.approx(
        s2.published_cumulative, rel=1e-6)
    assert s2.step_speedups()["interleaved_bank_conflict"] == \
        pytest.approx(1.473088, rel=1e-6)
    assert "002_d2f30ed02251f9f1.txt" in s2.citation
    assert s2.device == "RTX 3060" and "11.8" in s2.environment
    s3 = reference.REFERENCES["seed_003_lab7"]
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


def test_reference_select():
    assert reference.select(None) == []
    assert [t.key for t in reference.select("all")] == list(reference.REFERENCES)
    assert [t.key for t in reference.select("harris")] == ["harris"]
    assert [t.key for t in reference.select(["seed_003_lab7", "harris"])] == \
        ["seed_003_lab7", "harris"]
    with pytest.raises(ValueError, match="valid keys"):
        reference.select(["nope"])


def test_reference_rejects_unknown_method():
    with pytest.raises(ValueError):
        reference.ReferenceTable(
            key="k", label="l", title="t", author="", citation="c", url=None,
            device="d", environment="e", n=1, dtype=None, threads=None,
            times_us={"warp_shuffle": 1.0})
