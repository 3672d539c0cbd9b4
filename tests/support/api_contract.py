"""What cudareduce promises, written down once for the tests.

These are the specification's values, deliberately not read back from the
library: a change to the library that breaks one of them must fail a test.
"""
from __future__ import annotations

import numpy as np

# The ladder (Harris, "Optimizing Parallel Reduction in CUDA", kernels 1-7),
# in the order of cudareduce.methods().
LADDER = (
    "interleaved_divergent",
    "interleaved_bank_conflict",
    "sequential",
    "first_add",
    "unroll_warp",
    "unroll_complete",
    "multi_element",
)
# Past the ladder: the fast path (the default) and CUB, the reference.
METHODS = LADDER + ("fast", "cub")
DEFAULT_METHOD = "fast"

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

# The fast method: one launch; each thread loads 16-byte vectors,
# FAST_UNROLL of them per sweep of the grid, over a grid of at most
# RESIDENT_THREADS_PER_SM threads per SM.
FAST_UNROLL = 2

# Methods whose first pass is a grid-stride loop over a grid sized from the
# SM count (RESIDENT_THREADS_PER_SM threads per SM); their later passes use
# one block.  The others cover their input in a single sweep.
GRID_STRIDE_METHODS = frozenset({"multi_element"})
RESIDENT_THREADS_PER_SM = 2048

VALID_THREADS = (64, 128, 256, 512, 1024)
# threads=None (every function's default) is the method's own: 256 for the
# ladder's steps (and cub, which ignores it); fast's by the input's bytes.
DEFAULT_THREADS = 256


# The ladder steps whose kernel takes the block size as a template
# parameter, and the size they take where their kernels are compiled once:
# the default.  They take every size for sum and mean, and for min and
# max of the numeric real dtypes; not for the other operators, nor for
# complex min and max (argmin's kernels) or bool's (all's and any's).
# fast takes every size everywhere (compiled once, it reads its block
# size at run time).
DEFAULT_SIZE_ONLY = {"unroll_complete": (256,), "multi_element": (256,)}


def block_sizes(op: str, dtype, method: str,
                reduce_dtype=None) -> tuple[int, ...]:
    """The threads values `method` takes for `op` on `dtype`, with
    `reduce_dtype` its dtype= argument (the rule that cudareduce.block_sizes
    answers from its kernel table)."""
    kind = "f" if np.dtype(dtype).name == "bfloat16" else np.dtype(dtype).kind
    if kind not in "fc":
        op = op.removeprefix("nan")     # no NaN to skip: the plain operator
    into_bool = reduce_dtype is not None and np.dtype(reduce_dtype) == bool
    every = op in ("sum", "mean") and not into_bool \
        or op in ("min", "max") and kind in "iuf"
    if every or method not in DEFAULT_SIZE_ONLY:
        return VALID_THREADS
    return DEFAULT_SIZE_ONLY[method]


def default_threads(method: str, n: int, itemsize: int) -> int:
    """The threads per block of `method` on n elements of itemsize bytes
    when none is named."""
    if method != "fast":
        return DEFAULT_THREADS
    nbytes = n * itemsize
    return 256 if nbytes < 4 << 20 else 512 if nbytes < 16 << 20 else 1024

# Supported input dtype -> numpy.sum's result dtype on 64-bit Linux: bool
# and signed integers sum to int64, unsigned ones to uint64, floats keep
# their type.
SUM_RESULT = {
    **{np.dtype(d): np.dtype(np.int64)
       for d in (np.bool_, np.int8, np.int16, np.int32, np.int64)},
    **{np.dtype(d): np.dtype(np.uint64)
       for d in (np.uint8, np.uint16, np.uint32, np.uint64)},
    **{np.dtype(d): np.dtype(d) for d in (np.float16, np.float32, np.float64)},
}
# The accumulator of a sum (its size sets the shared memory per block): the
# result's type, except that float16 sums in float32.
ACCUMULATOR = {d: np.dtype(np.float32) if d == np.float16 else r
               for d, r in SUM_RESULT.items()}
SUPPORTED_DTYPES = tuple(SUM_RESULT)
# test_sum_gpu's full method x threads x size grid runs over these; the
# inputs tests cover every supported dtype at fewer sizes.
GRID_DTYPES = tuple(np.dtype(d) for d in
                    (np.float32, np.float64, np.int32, np.int64))
FLOAT_DTYPES = tuple(d for d in GRID_DTYPES if d.kind == "f")
INT_DTYPES = tuple(d for d in GRID_DTYPES if d.kind == "i")

# plan() refuses larger n; a plan has at most this many passes.
MAX_ELEMENTS = 2 ** 62
MAX_PASSES = 12


def numpy_sum_dtype(dtype) -> np.dtype:
    """The dtype of ``numpy.sum`` over an array of `dtype`."""
    return np.sum(np.zeros(1, dtype)).dtype
