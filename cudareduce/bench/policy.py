"""The measurement policy: warm-up, reps, runs per back-to-back sample, and
the rotation among copies of an input that keeps a small one out of the L2
cache, as constants and pure arithmetic (no GPU code)."""
from __future__ import annotations

import math

__all__ = [
    "BATCH_TARGET_MS", "CALL_OVERHEAD_MS", "MAX_BATCH", "MAX_BUFFERS",
    "MAX_REPS", "MIN_REPS", "PILOT_REPS", "PILOT_WARMUP", "TARGET_SECONDS",
    "WARMUP", "choose_batch", "choose_reps", "rotation_buffers",
]

#: Untimed runs before the timed ones.
WARMUP = 3
#: The pilot that checks a method and estimates its time: untimed runs, then
#: timed ones.
PILOT_WARMUP = 1
PILOT_REPS = 3
#: The timed runs take about TARGET_SECONDS of GPU time, within these bounds.
MIN_REPS = 20
MAX_REPS = 1000
TARGET_SECONDS = 0.2
#: At most this many copies of an input to rotate among.
MAX_BUFFERS = 1024
#: A back-to-back sample queues runs for about this long behind the holding
#: kernel, at most MAX_BATCH of them (a ladder run is up to 4 launches: 128
#: queued launches stay far below the launch queue's depth).
BATCH_TARGET_MS = 1.0
MAX_BATCH = 32
#: What a Python call costs beyond its GPU time, for choosing its reps
#: (about 10 µs measured on an H100 with a CuPy array).
CALL_OVERHEAD_MS = 0.01


def rotation_buffers(nbytes: int, l2_bytes: int,
                     total_bytes: int | None = None,
                     max_buffers: int = MAX_BUFFERS) -> int:
    """How many copies of an input of `nbytes` the timed runs rotate among.

    ``ceil(4 * l2_bytes / nbytes)`` when the input is smaller than 4x L2,
    else 1; at most `max_buffers`, and the copies together at most a quarter
    of `total_bytes` (when given).  Always >= 1.
    """
    if nbytes <= 0:
        raise ValueError("nbytes must be > 0")
    if nbytes >= 4 * l2_bytes:
        return 1
    buffers = min(-(-4 * l2_bytes // nbytes), max_buffers)
    if total_bytes:
        buffers = min(buffers, (total_bytes // 4) // nbytes)
    return max(1, buffers)


def choose_reps(estimate_ms: float, target_seconds: float = TARGET_SECONDS,
                min_reps: int = MIN_REPS, max_reps: int = MAX_REPS) -> int:
    """Timed reps for a run whose pilot took `estimate_ms` per rep: enough
    for `target_seconds` of GPU time, clamped to [min_reps, max_reps]."""
    if not estimate_ms > 0 or not math.isfinite(estimate_ms):
        return max_reps
    wanted = math.ceil(target_seconds * 1e3 / estimate_ms)
    return int(min(max_reps, max(min_reps, wanted)))


def choose_batch(estimate_ms: float, target_ms: float = BATCH_TARGET_MS,
                 max_batch: int = MAX_BATCH) -> int:
    """Runs per back-to-back sample for a run of `estimate_ms`: enough to
    fill `target_ms`, from 1 to `max_batch`."""
    if not estimate_ms > 0 or not math.isfinite(estimate_ms):
        return 1
    return int(min(max_batch, max(1, math.ceil(target_ms / estimate_ms))))
