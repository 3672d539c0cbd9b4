"""cudareduce.bench.floor without a GPU: the probe rows, the floor and the
default-size rule, from probe times planted in place of the GPU's."""
from __future__ import annotations

import pytest

from cudareduce.bench import floor

GiB = 1 << 30
DEVICE = {"l2_bytes": 50 << 20, "total_bytes": 80 * GiB}


def planted(read_gbps: float = 2800.0, fixed_us: float = 3.0,
            empty_us: float = 3.0):
    """probe_us as a GPU whose read takes fixed_us + bytes at read_gbps (the
    same both ways) and whose empty kernel takes empty_us; the calls are
    recorded."""
    calls = []

    def probe_us(probe, nbytes, buffers, reps, mode, batch=1, warmup=3):
        calls.append((probe, nbytes, buffers, reps, mode, batch))
        if probe == "empty":
            return empty_us if mode == "cold" else empty_us / 2
        return fixed_us + nbytes / (read_gbps * 1e3)
    return probe_us, calls


def test_the_rule_picks_the_first_size_whose_read_takes_25_empty_kernels(
        monkeypatch):
    probe_us, calls = planted()
    monkeypatch.setattr(floor, "probe_us", probe_us)
    # 25 x 3 us = 75 us: 3 + b / 2.8e3 >= 75 first at b = 2^28 (98.9 us);
    # 2^27 gives 50.9 us.
    n, rule = floor.default_n(4, 3.0, DEVICE)
    assert n == (1 << 28) // 4 == 1 << 26
    assert rule.startswith("default n = 2^26: ")
    assert "98.9 µs cold over 256 MiB" in rule and "3.00 µs" in rule
    assert "25 empty kernels" in rule and "--n 2^22" in rule
    read_sizes = [c[1] for c in calls if c[0] == "read" and c[4] == "cold"
                  and c[3] == floor.PROBE_REPS]
    assert read_sizes == [1 << k for k in range(20, 29)]


@pytest.mark.parametrize("itemsize, expected", [(1, 1 << 28), (2, 1 << 27),
                                                (8, 1 << 25)])
def test_the_rule_is_on_bytes(monkeypatch, itemsize, expected):
    monkeypatch.setattr(floor, "probe_us", planted()[0])
    assert floor.default_n(itemsize, 3.0, DEVICE)[0] == expected


def test_a_small_gpu_stops_at_an_eighth_of_its_memory(monkeypatch):
    # Nothing reaches 25 empty kernels below 1 GiB / 8 = 128 MiB: the
    # largest size tried is the default.
    monkeypatch.setattr(floor, "probe_us", planted(read_gbps=1e6)[0])
    n, _ = floor.default_n(4, 3.0, {**DEVICE, "total_bytes": GiB})
    assert n == (128 << 20) // 4


def test_floor_and_probe_rows(monkeypatch):
    probe_us, calls = planted()
    monkeypatch.setattr(floor, "probe_us", probe_us)
    got = floor.measure_floor(DEVICE)
    assert got["read_bytes"] == floor.READ_CEILING_BYTES
    assert got["empty_cold_us"] == 3.0 and got["empty_batch_us"] == 1.5
    expected = GiB / ((3.0 + GiB / 2.8e6) * 1e3)
    assert got["read_cold_gbps"] == pytest.approx(expected)
    assert got["read_batch_gbps"] == pytest.approx(expected)
    row = floor.measure_probe(1 << 20, DEVICE)
    assert row == {"bytes": 1 << 20, "read_cold_us": pytest.approx(3.3745, 1e-3),
                   "read_batch_us": pytest.approx(3.3745, 1e-3)}
    # Small inputs rotate among copies that outgrow L2, cold ones one run a
    # sample, back-to-back ones several.
    last = [c for c in calls if c[1] == 1 << 20 and c[3] == floor.PROBE_REPS]
    assert [(c[2], c[4], c[5] > 1) for c in last] == [
        (200, "cold", False), (200, "batch", True)]


def test_the_ceiling_fits_a_small_gpu(monkeypatch):
    monkeypatch.setattr(floor, "probe_us", planted()[0])
    got = floor.measure_floor({**DEVICE, "total_bytes": 4 * GiB})
    assert got["read_bytes"] == GiB // 2
