"""_cudareduce.reduction_dtypes without a GPU: the (reduced, result,
accumulator) dtypes that cudareduce.dask builds its partials from, as
cudareduce's own call resolves them, against NumPy's (bfloat16, ml_dtypes'
and not NumPy's own, sums in float32 as the project's rule says)."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from cudareduce import _cudareduce
from support.api_contract import SUPPORTED_DTYPES

OPERATORS = _cudareduce.OPERATORS
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = SUPPORTED_DTYPES + (np.dtype(np.complex64),
                             np.dtype(np.complex128), BFLOAT16)
SUMS = ("sum", "prod", "mean", "nansum", "nanprod", "nanmean")


def dtype_id(dtype) -> str:
    return np.dtype(dtype).name


def numpy_result(op: str, dtype: np.dtype, requested=None) -> np.dtype:
    kwargs = {"dtype": requested} if requested is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, op)(np.ones(3, dtype), **kwargs)).dtype


def numpy_reduced(op: str, dtype: np.dtype) -> np.dtype:
    """What NumPy divides: numpy.mean's sum (float16 in float32, integers
    and bool in float64), numpy.nanmean's (numpy.sum's, of floats);
    bfloat16's mean sums in float32 here."""
    if op == "mean" or (op == "nanmean" and dtype.kind not in "fc"
                        and dtype != BFLOAT16):
        if dtype in (np.dtype(np.float16), BFLOAT16):
            return np.dtype(np.float32)
        return dtype if dtype.kind in "fc" else np.dtype(np.float64)
    return numpy_result(op, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPERATORS)
def test_result_and_reduced_dtypes_are_numpys(op, dtype):
    reduced, result, accumulator = _cudareduce.reduction_dtypes(op, dtype)
    assert result == numpy_result(op, dtype), (op, dtype)
    if op in ("mean", "nanmean"):
        assert reduced == numpy_reduced(op, dtype), (op, dtype)
    if op in SUMS:
        # Partials in the accumulator, cast to `reduced` at the end, lose
        # nothing a single reduction keeps.
        assert np.can_cast(reduced, accumulator), (op, dtype, accumulator)


@pytest.mark.parametrize("requested", [np.int8, np.float16, np.float64,
                                       np.complex64], ids=dtype_id)
@pytest.mark.parametrize("op", ("sum", "mean", "nanmean"))
def test_a_dtype_argument_is_the_reduced_and_result_dtype(op, requested):
    for dtype in (np.dtype(np.int16), np.dtype(np.float32)):
        if op == "nanmean" and np.dtype(requested).kind not in "fc":
            with pytest.raises(TypeError, match="must be inexact"):
                _cudareduce.reduction_dtypes(op, np.float32, requested)
            continue
        reduced, result, accumulator = _cudareduce.reduction_dtypes(
            op, dtype, requested)
        assert reduced == result == numpy_result(op, dtype, requested)
        assert np.can_cast(reduced, accumulator)


def test_float16_sums_accumulate_in_float32():
    for op in ("sum", "mean", "nanmean"):
        for dtype in (np.float16, BFLOAT16):
            assert _cudareduce.reduction_dtypes(op, dtype)[2] == np.float32


@pytest.mark.parametrize("op", ("prod", "nanprod"))
def test_float_products_accumulate_in_float64(op):
    """Issue 44: a float product multiplies in float64 and is rounded once
    to its result (complex and integer products keep theirs)."""
    for dtype in (np.float16, BFLOAT16, np.float32, np.float64):
        reduced, result, accumulator = _cudareduce.reduction_dtypes(op,
                                                                     dtype)
        assert (reduced, result, accumulator) == (
            np.dtype(dtype), np.dtype(dtype), np.dtype(np.float64)), dtype
    for requested in (np.float16, np.float32):
        assert _cudareduce.reduction_dtypes(op, np.int32, requested)[2] \
            == np.float64
    assert _cudareduce.reduction_dtypes(op, np.complex64)[2] \
        == np.complex64
    assert _cudareduce.reduction_dtypes(op, np.int8)[2] == np.int64


@pytest.mark.parametrize("args, error, match", [
    (("median", np.float32), ValueError, "unknown operator 'median'"),
    (("sum", object), TypeError, "does not support dtype object"),
    (("max", np.float32, np.float64), TypeError, "takes no dtype"),
])
def test_what_reduce_refuses_it_refuses(args, error, match):
    with pytest.raises(error, match=match):
        _cudareduce.reduction_dtypes(*args)
