"""exact=True (issue 44) without a GPU: where it is taken, and the clear
errors where it is not built yet.  The request is refused before any
device is asked, so these run in CI as on the GPU machine; the sums
themselves are test_exact_gpu.py's, the accumulator test_kulisch.py's."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import cudareduce
from support.api_contract import LADDER

EXACT_OPS = ("sum", "nansum", "mean", "nanmean")


@pytest.mark.parametrize("op", EXACT_OPS)
def test_exact_is_a_keyword_defaulting_to_false(op):
    parameter = inspect.signature(getattr(cudareduce, op)).parameters["exact"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is False


@pytest.mark.parametrize("op", ["prod", "nanprod", "min", "argmax"])
def test_other_operators_take_no_exact(op):
    with pytest.raises(TypeError, match="exact"):
        getattr(cudareduce, op)(np.ones(3), exact=True)


@pytest.mark.parametrize("method", [*LADDER, "cub"])
def test_other_methods_are_refused_naming_fast(method):
    with pytest.raises(ValueError, match="'fast' only"):
        cudareduce.sum(np.ones(3, np.float32), method, exact=True)


def test_axes_are_refused():
    with pytest.raises(ValueError, match="whole array"):
        cudareduce.sum(np.ones((3, 4)), axis=0, exact=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sums_are_refused(dtype):
    with pytest.raises(ValueError, match="complex"):
        cudareduce.sum(np.ones(3, dtype), exact=True)
