"""What bounds a reduction on this GPU, measured in the same run as the
methods and timed the same way: an empty kernel (the fixed cost of a
launch) and a read-only streaming kernel (the read ceiling), at each size
and at a large one; and the rule that picks the default size from them."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .policy import choose_batch, rotation_buffers
from .timers import probe_us

__all__ = ["DEFAULT_RULE_RATIO", "PROBE_REPS", "READ_CEILING_BYTES",
           "default_n", "measure_empty", "measure_floor", "measure_probe"]

#: Samples of each probe figure (medians; a probe's spread is far smaller
#: than a method's).
PROBE_REPS = 30
#: The read ceiling is the read probe at this many bytes (at most an
#: eighth of device memory): 1 GiB, where the H100's read rate has
#: flattened (2,837 GB/s cold there, 2,689 at 256 MiB).
READ_CEILING_BYTES = 1 << 30
#: The default size is the smallest power of two whose read-probe time is
#: at least this many empty kernels: a launch's fixed cost is then under
#: 1/25 = 4 % of reading the data once.
DEFAULT_RULE_RATIO = 25
#: The sizes the rule considers, in bytes: 1 MiB to 4 GiB.
_RULE_BYTES = tuple(1 << k for k in range(20, 33))


def _read_us(nbytes: int, device: Mapping[str, Any], mode: str,
             batch: int = 1) -> float:
    buffers = rotation_buffers(nbytes, device["l2_bytes"],
                               device["total_bytes"])
    return probe_us("read", nbytes, buffers, PROBE_REPS, mode, batch)


def measure_probe(nbytes: int, device: Mapping[str, Any]) -> dict:
    """The read probe over `nbytes` bytes, cold and back to back: the probe
    row of a bench document (``bytes``, ``read_cold_us``,
    ``read_batch_us``).  The cold figure sizes the back-to-back batch."""
    cold_us = _read_us(nbytes, device, "cold")
    return {"bytes": int(nbytes), "read_cold_us": cold_us,
            "read_batch_us": _read_us(nbytes, device, "batch",
                                      choose_batch(cold_us * 1e-3))}


def measure_empty() -> dict:
    """An empty kernel's cold and back-to-back µs (``empty_cold_us``,
    ``empty_batch_us``): the fixed cost of a launch.  The cold figure
    sizes the back-to-back batch."""
    empty_cold_us = probe_us("empty", 0, 1, PROBE_REPS, "cold")
    return {"empty_cold_us": empty_cold_us,
            "empty_batch_us": probe_us("empty", 0, 1, PROBE_REPS, "batch",
                                       choose_batch(empty_cold_us * 1e-3))}


def measure_floor(device: Mapping[str, Any]) -> dict:
    """The floor of a bench document: an empty kernel's cold and
    back-to-back µs, and the read ceiling (GB/s, both ways) at
    :data:`READ_CEILING_BYTES` or an eighth of device memory."""
    nbytes = READ_CEILING_BYTES
    if device.get("total_bytes"):
        nbytes = min(nbytes, device["total_bytes"] // 8)
    probe = measure_probe(nbytes, device)
    return {
        **measure_empty(),
        "read_bytes": nbytes,
        "read_cold_gbps": nbytes / (probe["read_cold_us"] * 1e3),
        "read_batch_gbps": nbytes / (probe["read_batch_us"] * 1e3),
    }


def default_n(itemsize: int, empty_cold_us: float,
              device: Mapping[str, Any]) -> tuple[int, str]:
    """(the default element count, the rule that chose it, in words): the
    smallest power of two of bytes, from 1 MiB, whose read probe (cold)
    takes at least :data:`DEFAULT_RULE_RATIO` empty kernels (cold), so that
    the kernels decide the figures rather than the launches; the largest
    considered if none does."""
    limit = device.get("total_bytes") or 0
    nbytes, read_us = _RULE_BYTES[0], 0.0
    for size in _RULE_BYTES:
        if limit and size > limit // 8 and size > _RULE_BYTES[0]:
            break
        nbytes, read_us = size, _read_us(size, device, "cold")
        if read_us >= DEFAULT_RULE_RATIO * empty_cold_us:
            break
    n = nbytes // itemsize
    rule = (f"default n = 2^{n.bit_length() - 1}: the smallest power of two "
            f"whose read probe ({read_us:,.1f} µs cold over "
            f"{nbytes / 2**20:,.0f} MiB) takes at least "
            f"{DEFAULT_RULE_RATIO} empty kernels ({empty_cold_us:.2f} µs "
            f"each), so that a launch's fixed cost is under "
            f"{100 / DEFAULT_RULE_RATIO:.0f}% of the time; --n 2^22 for "
            f"Harris's size")
    return n, rule
