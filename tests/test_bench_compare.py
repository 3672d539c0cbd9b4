"""``python -m cudareduce.bench --peers``: the ratio table of the fast path,
checked without a GPU on a hand-made comparison."""
from __future__ import annotations

import pytest

from cudareduce import bench

F32_SIZES = bench.COMPARE_SIZES
BIG = F32_SIZES[-1]


def _row(method, dtype, n, gbps, correct=True):
    return {"method": method, "dtype": dtype, "n": n, "threads": 256,
            "median_us": None if not correct else n * 4 / gbps / 1e3,
            "gbps": gbps if correct else None, "reps": 100 if correct else 0,
            "correct": correct}


def comparison(fast_big=3000.0, cub_big=2900.0, int_big=2950.0,
               ours_cupy=9.0, ours_torch=10.0, torch_item=23.0,
               wrong_cub_at=None):
    rows = []
    for n, fast, cub in zip(F32_SIZES, (900.0, 1600.0, fast_big),
                            (300.0, 1000.0, cub_big)):
        rows += [_row("fast", "float32", n, fast),
                 _row("cub", "float32", n, cub, correct=n != wrong_cub_at),
                 _row("torch.sum", "float32", n, cub * 0.9)]
    rows += [_row("fast", "int32", BIG, int_big),
             _row("cub", "int32", BIG, int_big * 0.9)]
    document = {"device": {"name": "fake GPU", "sm_count": 132,
                           "l2_bytes": 50 << 20, "copy_gbps": 3000.0},
                "cudareduce_version": "0.1.0", "results": rows}
    return {"results": bench.Results(document),
            "latency_us": {"torch.sum(x).item()": torch_item,
                           "float(cudareduce.sum(x)), torch x": ours_torch,
                           "float(cudareduce.sum(x)), cupy x": ours_cupy}}


def by_what(c):
    return {what: (ratio, target, met)
            for what, ratio, target, met in bench.comparison_ratios(c)}


def test_ratios_and_targets():
    ratios = by_what(comparison())
    assert ratios["fast / cub GB/s, float32 n = 2^28"] == pytest.approx(
        (3000 / 2900, ">= 1.00x", True))
    assert ratios["fast / cub GB/s, float32 n = 2^20"] == pytest.approx(
        (3.0, ">= 1.50x", True))
    assert ratios["fast / cub GB/s, float32 n = 2^22"] == pytest.approx(
        (1.6, ">= 1.50x", True))
    assert ratios["fast int32 / fast float32 GB/s, n = 2^28"] == \
        pytest.approx((2950 / 3000, ">= 0.95x", True))
    assert ratios["float(cudareduce.sum(x)) / torch.sum(x).item(), cupy x, "
                  "n = 1024"] == pytest.approx((9 / 23, "<= 0.50x", True))
    assert ratios["float(cudareduce.sum(x)) / torch.sum(x).item(), torch "
                  "x, n = 1024"] == pytest.approx((10 / 23, "<= 0.50x", True))
    # Peers without a target: a ratio, no verdict; cupy.sum was not timed.
    assert ratios["fast / torch.sum GB/s, float32 n = 2^28"] == \
        pytest.approx((3000 / 2610, "-", None))
    assert ratios["fast / cupy.sum GB/s, float32 n = 2^28"] == \
        (None, "-", None)


@pytest.mark.parametrize("change, what", [
    ({"fast_big": 2800.0}, "fast / cub GB/s, float32 n = 2^28"),
    ({"int_big": 2800.0}, "fast int32 / fast float32 GB/s, n = 2^28"),
    ({"ours_cupy": 12.0},
     "float(cudareduce.sum(x)) / torch.sum(x).item(), cupy x, n = 1024"),
])
def test_a_missed_target_is_marked(change, what):
    ratio, _, met = by_what(comparison(**change))[what]
    assert ratio is not None and met is False


def test_a_wrong_row_gives_no_ratio():
    ratios = by_what(comparison(wrong_cub_at=1 << 22))
    assert ratios["fast / cub GB/s, float32 n = 2^22"] == (None, ">= 1.50x",
                                                          None)


def test_format_comparison():
    text = bench.format_comparison(comparison(fast_big=2800.0))
    assert "fake GPU" in text
    assert "End to end, 1024 float32 elements" in text
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    assert lines["fast / cub GB/s, float32 n = 2^28"].split()[-4:] == \
        [f"{2800 / 2900:.2f}×", ">=", "1.00x", "NO"]
    assert lines["fast / cub GB/s, float32 n = 2^20"].split()[-1] == "yes"
    assert lines["torch.sum(x).item()"].split()[-1] == "23.0"


def test_peers_refuses_other_selections(capsys):
    with pytest.raises(SystemExit) as info:
        bench.main(["--peers", "--n", "1000"])
    assert info.value.code == 2
    assert "--peers chooses its own" in capsys.readouterr().err
