"""The order in which a reduction along axes combines a row's elements
(cuda/kernels/rows.cuh's header comment), as a NumPy model: a sum's bits
computed here in the accumulator's dtype are the GPU's, whichever kernel
read the row (the row, column, short-row or staged kernel).

A row longer than CR_ROW_CHUNK is cut into chunks; each chunk of m
elements is folded by G lanes (32, or the power of two at or above a
shorter m), lane j folding elements j, j + G, ... left to right; the
lanes are combined by the tree ``for o in 16, 8, 4, 2, 1: v[i] = v[i] +
v[i + o] for i < o`` where a lane that holds nothing takes no part; a
chunk's sum that is zero is +0.0; a row's chunk partials are reduced the
same way, until one is left.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["ROW_CHUNK", "STAGED_LENGTH", "ordered_sums"]

_TUNING = (Path(__file__).resolve().parents[2] / "cuda"
           / "tuning.h").read_text()


def _tuning(name: str) -> int:
    """tuning.h's #define of `name`, a number."""
    return int(re.search(rf"^#define {name} (\d+)$", _TUNING, re.M).group(1))


#: Elements of a chunk (tuning.h's CR_ROW_CHUNK).
ROW_CHUNK = _tuning("CR_ROW_CHUNK")
#: Partials a row of a later pass has beyond which the staged kernel may
#: read it (tuning.h's CR_ROWS_STAGED_LENGTH: a turn of each of a chunk's
#: 32 lanes' CR_ROWS_UNROLL loads).
STAGED_LENGTH = 32 * _tuning("CR_ROWS_UNROLL")


def _group(m: int) -> int:
    group = 1
    while group < 32 and group < m:
        group *= 2
    return group


def _chunk_sums(chunks: np.ndarray) -> np.ndarray:
    """The order's sum of each row of `chunks` (rows, m), m <= ROW_CHUNK,
    in its dtype."""
    m = chunks.shape[1]
    group = _group(m)
    lanes = chunks[:, :group].copy()
    for start in range(group, m, group):
        part = chunks[:, start:start + group]
        lanes[:, :part.shape[1]] += part
    present = min(m, group)
    offset = 16
    while offset > 0:
        if offset < group:
            for i in range(offset):
                if i + offset < present:
                    lanes[:, i] += lanes[:, i + offset]
            present = min(present, offset)
        offset //= 2
    # A zero sum is +0.0 (the kernels' settled(): NumPy's sums of -0.0).
    return np.where(lanes[:, 0] == 0, np.zeros((), lanes.dtype), lanes[:, 0])


def ordered_sums(rows: np.ndarray, accumulator) -> np.ndarray:
    """The sum of each row of the 2-D `rows` (a row of length >= 1 each)
    in the order, in `accumulator`'s dtype (float32 for float16 and
    float32 elements, float64 for float64)."""
    values = np.asarray(rows).astype(accumulator)
    while True:
        length = values.shape[1]
        partials = [_chunk_sums(values[:, c:c + ROW_CHUNK])
                    for c in range(0, length, ROW_CHUNK)]
        values = np.stack(partials, axis=1)
        if len(partials) == 1:
            return values[:, 0]
