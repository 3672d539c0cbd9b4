"""cudareduce.bench.policy: the measurement policy's arithmetic."""
from __future__ import annotations

import pytest

from cudareduce.bench import policy


def test_rotation_buffers():
    l2 = 50 << 20
    assert policy.rotation_buffers(16 << 20, l2) == 13          # ceil(200/16)
    assert policy.rotation_buffers(4 * l2, l2) == 1
    assert policy.rotation_buffers(1 << 30, l2) == 1
    assert policy.rotation_buffers(4 * l2 - 1, l2) == 2
    assert policy.rotation_buffers(4096, l2) == policy.MAX_BUFFERS
    # at most a quarter of device memory in all
    assert policy.rotation_buffers(16 << 20, l2, total_bytes=128 << 20) == 2
    assert policy.rotation_buffers(16 << 20, l2, total_bytes=1 << 20) == 1
    assert policy.rotation_buffers(100, 0) == 1
    with pytest.raises(ValueError):
        policy.rotation_buffers(0, l2)


def test_choose_reps():
    assert policy.choose_reps(0.01) == policy.MAX_REPS            # 10 µs
    assert policy.choose_reps(1.0) == 200                        # 0.2 s / 1 ms
    assert policy.choose_reps(50.0) == policy.MIN_REPS
    assert policy.choose_reps(0.0) == policy.MAX_REPS
    assert policy.choose_reps(float("nan")) == policy.MAX_REPS
    assert policy.choose_reps(2.0, target_seconds=1.0, min_reps=1,
                              max_reps=10_000) == 500


def test_choose_batch_fills_the_target_from_1_to_max_batch():
    assert policy.BATCH_TARGET_MS == 1.0 and policy.MAX_BATCH == 32
    assert policy.choose_batch(0.25) == 4                      # 1 ms / 0.25
    assert policy.choose_batch(0.3) == 4                       # rounded up
    assert policy.choose_batch(0.001) == policy.MAX_BATCH     # 1 µs: 1000
    assert policy.choose_batch(1.0) == 1
    assert policy.choose_batch(50.0) == 1
    for unknown in (0.0, -1.0, float("nan"), float("inf")):
        assert policy.choose_batch(unknown) == 1
    assert policy.choose_batch(0.1, target_ms=5.0, max_batch=100) == 50
    assert policy.choose_batch(0.1, target_ms=5.0, max_batch=20) == 20
    assert type(policy.choose_batch(0.3)) is int
