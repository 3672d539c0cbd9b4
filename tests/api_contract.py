"""What cudareduce promises, written down once for the tests.

These are the specification's values, deliberately not read back from the
library: a change to the library that breaks one of them must fail a test.
"""
from __future__ import annotations

import numpy as np

# The ladder (Harris, "Optimizing Parallel Reduction in CUDA", kernels 1-7),
# in the order of cudareduce.methods().
METHODS = (
    "interleaved_divergent",
    "interleaved_bank_conflict",
    "sequential",
    "first_add",
    "unroll_warp",
    "unroll_complete",
    "multi_element",
)
DEFAULT_METHOD = "multi_element"

# Elements a thread loads per sweep of the grid, `threads` apart: steps 1-3
# load one, steps 4-7 add two during the load.
ELEMENTS_PER_THREAD = {
    "interleaved_divergent": 1,
    "interleaved_bank_conflict": 1,
    "sequential": 1,
    "first_add": 2,
    "unroll_warp": 2,
    "unroll_complete": 2,
    "multi_element": 2,
}

# Methods whose first pass is a grid-stride loop over a grid sized from the
# SM count (RESIDENT_THREADS_PER_SM threads per SM); their later passes use
# one block.  The others cover their input in a single sweep.
GRID_STRIDE_METHODS = frozenset({"multi_element"})
RESIDENT_THREADS_PER_SM = 2048

VALID_THREADS = (64, 128, 256, 512, 1024)
DEFAULT_THREADS = 256

# Supported input dtype -> accumulator (= result) dtype: NumPy's rule for
# sum on 64-bit Linux.
ACCUMULATOR = {
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
    np.dtype(np.int32): np.dtype(np.int64),
    np.dtype(np.int64): np.dtype(np.int64),
}
SUPPORTED_DTYPES = tuple(ACCUMULATOR)
FLOAT_DTYPES = tuple(d for d in SUPPORTED_DTYPES if d.kind == "f")
INT_DTYPES = tuple(d for d in SUPPORTED_DTYPES if d.kind == "i")

# plan() refuses larger n; a plan has at most this many passes.
MAX_ELEMENTS = 2 ** 62
MAX_PASSES = 12


def numpy_sum_dtype(dtype) -> np.dtype:
    """The dtype of ``numpy.sum`` over an array of `dtype`."""
    return np.sum(np.zeros(1, dtype)).dtype
