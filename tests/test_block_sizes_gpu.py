"""Every threads= value with every method, operator and dtype on the GPU:
where cudareduce.block_sizes lists it the reduction runs and matches
NumPy exactly, where it does not the call is a ValueError naming the sizes
it takes (no launch, no crash), and the method's default runs either way.
The rule itself is checked without a GPU (test_block_sizes_offline.py).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import cudareduce
from support.api_contract import METHODS, VALID_THREADS
from support.exact_data import numpy_answer, same, values_for

pytestmark = pytest.mark.gpu

DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
    np.float64, np.complex64, np.complex128))
# Several blocks at every size, and two passes of the ladder at 64.
N = 70_001


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", cudareduce._cudareduce.OPERATORS)
def test_each_block_size_runs_or_is_refused(cupy, rng, seed_note, op, dtype):
    host = values_for(op, rng, N, dtype)
    device = cupy.asarray(host)
    want = numpy_answer(op, host)
    wrong = []
    for method in METHODS:
        taken = cudareduce.block_sizes(op, dtype, method)
        for threads in (None, *VALID_THREADS):
            call = functools.partial(getattr(cudareduce, op), device,
                                     method, threads=threads)
            if threads is None or threads in taken:
                got = call()
                if not same(op, got, want):
                    wrong.append(f"{method} t{threads}: got {got!r}")
                continue
            with pytest.raises(ValueError, match=(
                    rf"^{method} runs this operator on this dtype with "
                    rf"{', '.join(map(str, taken))} threads per block, not "
                    rf"{threads} ")):
                call()
    assert not wrong, f"{op} {dtype}, NumPy {want!r}: {wrong} {seed_note}"
