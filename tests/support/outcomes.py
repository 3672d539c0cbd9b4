"""What a call gives, in a form compared with ==: the index operators'
tests (test_arg_operators_gpu.py, test_masked_offline.py) hold
cudareduce's outcome to NumPy's so, exceptions and warnings included;
the axis tests (test_axis*.py) take the parts apart with ``captured``."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import numpy.ma as ma

__all__ = ["captured", "outcome"]


def captured(call: Callable[[], Any]):
    """(the value, or None where it raised; (the exception's type, its
    message), or None; the warnings' (category, message) in order)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, raised = call(), None
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            value, raised = None, (type(exc), str(exc))
    return value, raised, tuple((w.category, str(w.message)) for w in caught)


def outcome(call: Callable[[], Any]):
    """(the result's type, its value: an int for a NumPy integer,
    numpy.ma.masked as itself, else its repr), or (the exception's type,
    its message); and the warnings' (category, message) in order."""
    value, raised, caught = captured(call)
    if raised is not None:
        return raised, caught
    if value is ma.masked:
        shown = value
    elif isinstance(value, np.integer):
        shown = int(value)
    else:
        shown = repr(value)
    return (type(value), shown), caught
