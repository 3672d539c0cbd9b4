"""Which threads= each method takes for each operator and dtype, without a
GPU: cudareduce.block_sizes against the contract's rule, the refusal of
any other size (on empty inputs, whose identity needs no device), and the
default block sizes always among those taken.

unroll_complete and multi_element compile a kernel per block size for sum
and mean, and min and max of the numeric real dtypes; only the default
size's for the other operators, whose kernels are compiled once (a choice
of the build: issue 22).  fast takes every size everywhere: compiled
once, it reads its block size at run time.  The GPU side is
tests/test_block_sizes_gpu.py.
"""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest

import cudareduce
from support.api_contract import (DEFAULT_SIZE_ONLY, METHODS, SUPPORTED_DTYPES,
                                  VALID_THREADS, block_sizes, default_threads)

OPERATORS = cudareduce._cudareduce.OPERATORS
DTYPES = SUPPORTED_DTYPES + (np.dtype(np.complex64), np.dtype(np.complex128),
                             np.dtype(ml_dtypes.bfloat16))
# The operators whose empty reduction is their identity (the others raise,
# or warn and give NaN, on an empty input: no refusal to tell apart).
WITH_IDENTITY = ("sum", "prod", "any", "all", "nansum", "nanprod")
# Sizes where fast's default is each of its block sizes, in bytes.
FAST_DEFAULT_BYTES = (1, 4 << 20, 16 << 20, 1 << 32)


def dtype_id(dtype) -> str:
    return np.dtype(dtype).name


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPERATORS)
def test_block_sizes_follow_the_rule(op, dtype):
    for method in METHODS:
        assert cudareduce.block_sizes(op, dtype, method) \
            == block_sizes(op, dtype, method), (op, dtype, method)


def test_the_rule_restricts_each_per_size_method_somewhere():
    """The rule is not every size everywhere (a test of the test)."""
    for method, sizes in DEFAULT_SIZE_ONLY.items():
        assert cudareduce.block_sizes("argmin", np.float32, method) == sizes
        assert cudareduce.block_sizes("sum", np.float32, method) \
            == VALID_THREADS
    assert cudareduce.block_sizes("max", np.bool_, "multi_element") \
        == (256,)
    assert cudareduce.block_sizes("max", np.complex64, "unroll_complete") \
        == (256,)
    assert cudareduce.block_sizes("max", np.int8, "unroll_complete") \
        == VALID_THREADS


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", WITH_IDENTITY)
def test_other_sizes_are_refused_before_any_device(op, dtype):
    empty = np.zeros(0, dtype)
    want = getattr(np, op)(np.zeros(0, np.float32 if dtype.name == "bfloat16"
                                    else dtype))
    for method in METHODS:
        taken = cudareduce.block_sizes(op, dtype, method)
        for threads in VALID_THREADS:
            call = functools.partial(getattr(cudareduce, op), empty,
                                     method, threads=threads)
            if threads in taken:
                assert call() == want, (op, dtype, method, threads)
                continue
            with pytest.raises(ValueError, match=(
                    rf"{method} runs this operator on this dtype with "
                    rf"{', '.join(map(str, taken))} threads per block, not "
                    rf"{threads} .*cudareduce.block_sizes")):
                call()


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_the_default_block_size_is_always_taken(dtype):
    for op in OPERATORS:
        for method in METHODS:
            taken = cudareduce.block_sizes(op, dtype, method)
            for nbytes in FAST_DEFAULT_BYTES:
                n = max(1, nbytes // dtype.itemsize)
                assert default_threads(method, n, dtype.itemsize) in taken, \
                    (op, dtype, method, n)
                if method == "cub":
                    continue
                (first, *_) = cudareduce.plan(n, method, dtype=dtype,
                                              sm_count=132)
                assert first.threads in taken, (op, dtype, method, n)


@pytest.mark.parametrize("args, error, match", [
    (("median", np.float32, "fast"), ValueError, "unknown operator 'median'"),
    (("sum", np.float32, "fastest"), ValueError, "unknown method 'fastest'"),
    (("sum", np.dtype("U3"), "fast"), TypeError, "does not support dtype <U3"),
    (("sum", object, "fast"), TypeError, "does not support dtype object"),
])
def test_block_sizes_refuses_what_the_operators_refuse(args, error, match):
    with pytest.raises(error, match=match):
        cudareduce.block_sizes(*args)


def test_block_sizes_defaults_to_the_fast_method():
    assert cudareduce.block_sizes("prod", np.int32) \
        == cudareduce.block_sizes("prod", np.int32, "fast") == VALID_THREADS
    assert cudareduce.block_sizes("prod", np.int32, "unroll_complete") \
        == (256,)


@pytest.mark.parametrize("reduce_dtype", [np.bool_, np.int8, np.float16,
                                          np.float64, np.complex64],
                         ids=dtype_id)
@pytest.mark.parametrize("op", ("sum", "prod", "mean"))
def test_block_sizes_with_a_dtype_argument(op, reduce_dtype):
    """A sum into bool is any's logical or: its sizes, not the sum's."""
    for dtype in (np.dtype(np.int16), np.dtype(np.float32)):
        for method in DEFAULT_SIZE_ONLY:
            want = block_sizes(op, dtype, method, reduce_dtype)
            assert cudareduce.block_sizes(op, dtype, method,
                                          reduce_dtype=reduce_dtype) == want
            refused = [t for t in VALID_THREADS if t not in want]
            if op in ("sum", "prod") and refused:
                with pytest.raises(ValueError, match="block_sizes"):
                    getattr(cudareduce, op)(np.zeros(0, dtype), method,
                                            threads=refused[0],
                                            dtype=reduce_dtype)
    assert cudareduce.block_sizes("sum", np.int8, "multi_element",
                                  reduce_dtype=np.bool_) == (256,)


def test_a_nan_sum_cast_by_its_dtype_argument_is_a_sum():
    """nansum and nanprod of floats into another dtype run the cast pass,
    which makes each NaN the identity, then the plain operator's kernels:
    every size (into the input's own dtype, the NaN-skipping kernels)."""
    for op in ("nansum", "nanprod"):
        for method in DEFAULT_SIZE_ONLY:
            own = cudareduce.block_sizes(op, np.float32, method,
                                         reduce_dtype=np.float32)
            assert own == cudareduce.block_sizes(op, np.float32, method) \
                == DEFAULT_SIZE_ONLY[method]
            cast = cudareduce.block_sizes(op, np.float32, method,
                                          reduce_dtype=np.float64)
            plain = op.removeprefix("nan")
            assert cast == cudareduce.block_sizes(plain, np.float64, method)
