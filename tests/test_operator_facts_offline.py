"""``_cudareduce.OPERATOR_FACTS``, the operators' facts that the Python
modules reduce by (dask.py, _masked.py, the bench's data), checked against
what NumPy's functions of the same names do (and their names: ``nan`` for
the NaN-skipping forms) and against the extension's own dtype rules, so
that a new operator needs no edit here."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import cudareduce
from cudareduce import _cudareduce

FACTS = _cudareduce.OPERATOR_FACTS
OPS = _cudareduce.OPERATORS
#: The dtypes whose elements cannot be NaN.
NAN_FREE = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
            "uint32", "uint64")


def numpy_selects(op: str) -> bool:
    """Whether NumPy's `op` gives an element, its index or a truth value,
    and so no floating-point error, where a sum would overflow."""
    try:
        with np.errstate(all="raise"):
            getattr(np, op)(np.array([1e308, 1e308, 1e-308]))
    except FloatingPointError:
        return False
    return True


def numpy_divides(op: str) -> bool:
    """Whether NumPy's `op` divides by the count: a mean."""
    return bool(getattr(np, op)(np.array([1.0, 2.0])) == 1.5)


def test_one_row_per_operator_in_order():
    assert tuple(FACTS) == OPS
    assert len(set(OPS)) == len(OPS)
    for facts in FACTS.values():
        assert type(facts).__name__ == "OperatorFacts"
        assert facts.without_nan in FACTS
        assert facts.kernel_op == facts.kernel_op.upper()


def test_read_only():
    with pytest.raises(TypeError):
        FACTS["sum"] = FACTS["prod"]
    with pytest.raises(AttributeError):
        FACTS["sum"].takes_dtype = False


@pytest.mark.parametrize("op", OPS)
def test_facts_are_numpys(op):
    facts = FACTS[op]
    takes_dtype = "dtype" in inspect.signature(getattr(cudareduce, op))\
        .parameters
    assert facts.takes_dtype is takes_dtype
    assert facts.skips_nan is op.startswith("nan")
    assert facts.without_nan == (op[3:] if facts.skips_nan else op)
    assert facts.divides_by_count is numpy_divides(op)
    assert facts.counts is (facts.divides_by_count and facts.skips_nan)
    assert facts.selects_element is numpy_selects(op)
    result = _cudareduce.reduction_dtypes(op, np.float32)[1]
    assert facts.gives_index is (result == np.intp)
    empty = np.zeros(0, np.float64)
    if facts.divides_by_count:
        assert facts.empty_error is None
    elif facts.identity is not None:
        assert facts.empty_error is None
        assert getattr(np, op)(empty) == facts.identity
    else:
        assert facts.empty_error is not None
        with pytest.raises(ValueError) as error:
            getattr(np, op)(empty)
        assert str(error.value) == facts.empty_error


@pytest.mark.parametrize("op", OPS)
def test_without_nan_reduces_nan_free_elements_alike(op):
    # The operator Python puts in place of a NaN-skipping one where no
    # element can be NaN has the same dtypes, by the extension's rules.
    plain = FACTS[op].without_nan
    assert not FACTS[plain].skips_nan
    assert FACTS[plain].takes_dtype is FACTS[op].takes_dtype
    for dtype in NAN_FREE:
        assert _cudareduce.reduction_dtypes(op, dtype) == \
            _cudareduce.reduction_dtypes(plain, dtype), dtype
