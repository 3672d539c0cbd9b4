"""Masked arrays reduced as ``numpy.ma`` reduces them: masked elements do
not count.

The extension refuses a ``numpy.ma.MaskedArray``, so that its raw data is
never reduced by mistake; :func:`reduce` reduces its filled data instead,
by ``numpy.ma``'s own rules (``MaskedArray.sum``, ``prod``, ``mean``,
``min``, ``max``, ``any``, ``all``, ``argmin``, ``argmax``, and NumPy's
NaN-skipping functions on a masked array): masked elements become the
operator's identity, a reduction whose every element is masked is
``numpy.ma.masked`` (but for the index operators, which MaskedArray fills
and reduces whatever the mask), and a mean divides by the count of
unmasked elements.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import numpy.ma as ma

from ._cudareduce import OPERATOR_FACTS

__all__ = ["MaskedArray", "reduce"]

MaskedArray = ma.MaskedArray

Reducer = Callable[[str, np.ndarray, Any], Any]


#: numpy.ma's fill value of the operators without an identity, by their
#: kernel operator without NaN: the extreme that no element passes
#: (MaskedArray.min and argmin fill with ``minimum_fill_value``).
_EXTREME_FILLS: dict[str, Callable[[ma.MaskedArray], Any]] = {
    "MIN": ma.minimum_fill_value, "ARGMIN": ma.minimum_fill_value,
    "MAX": ma.maximum_fill_value, "ARGMAX": ma.maximum_fill_value,
}


def _fill(op: str, a: ma.MaskedArray) -> Any:
    """What a masked element of `a` becomes for `op`, by numpy.ma's rules:
    NaN in a float or complex array where the operator skips NaN and has
    no identity (nanmin, nanmax: an unmasked all-NaN input stays one) or
    counts (nanmean counts only the numbers: NaN leaves it out); else the
    identity of a sum or product (0 for any, 1 for all); else numpy.ma's
    fill value of its extreme (min, max, the index operators, whatever
    NaN: numpy.nanargmin and nanargmax run MaskedArray's)."""
    facts = OPERATOR_FACTS[op]
    if not facts.gives_index:
        if facts.skips_nan and a.dtype.kind in "fc" \
                and (facts.identity is None or facts.counts):
            return np.nan
        if facts.identity is not None:
            return facts.identity
    return _EXTREME_FILLS[OPERATOR_FACTS[facts.without_nan].kernel_op](a)


def reduce(op: str, a: ma.MaskedArray, dtype: Any, run: Reducer) -> Any:
    """`op` (any of cudareduce's operators) of the unmasked elements of
    `a`.

    Parameters
    ----------
    op : str
        The operator.
    a : numpy.ma.MaskedArray
        The array.
    dtype : dtype-like or None
        The ``dtype=`` argument of the operators that take one.
    run : callable
        ``run(op, data, dtype)`` reduces a plain ndarray on the GPU.

    Returns
    -------
    numpy scalar or numpy.ma.masked
        What ``getattr(a, op)(dtype=dtype)`` returns (``numpy.<op>(a)`` for
        the NaN forms, which MaskedArray has no method of).
    """
    facts = OPERATOR_FACTS[op]
    # A mean, but nanmean of floats and complex types (which counts the
    # numbers, a masked element filled with NaN).
    if facts.divides_by_count and not (facts.counts
                                       and a.dtype.kind in "fc"):
        return _mean(a, dtype, run)
    mask = ma.getmask(a)
    every_element_masked = mask is not ma.nomask and bool(mask.all())
    if facts.gives_index and facts.skips_nan and a.dtype.kind in "fc" \
            and a.size > 0 and not every_element_masked and _all_nan(a, run):
        # numpy.nanargmin's check, on the unmasked elements only: the
        # filled array would hold the fill value beside the NaNs.
        raise ValueError("All-NaN slice encountered")
    with warnings.catch_warnings():
        if every_element_masked and facts.counts:
            # numpy.nanmean fails there (it divides into the read-only
            # result of the masked sum); masked below, as the other
            # operators', without the warning of a slice of no number,
            # after the call that raises where NumPy would first (a dtype=
            # it refuses).
            warnings.simplefilter("ignore", RuntimeWarning)
        result = run(op, a.filled(_fill(op, a)), dtype)
    if facts.gives_index:
        # MaskedArray.argmin fills and reduces, whatever the mask (a fully
        # masked array gives 0, not numpy.ma.masked).
        return result
    return ma.masked if every_element_masked else result


def _all_nan(a: ma.MaskedArray, run: Reducer) -> bool:
    """Whether every unmasked element of `a` is NaN (nanmax of the data,
    masked elements NaN, is NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return bool(np.isnan(run("nanmax", a.filled(np.nan), None)))


def _mean(a: ma.MaskedArray, dtype: Any, run: Reducer) -> Any:
    """``MaskedArray.mean``: the unmasked sum (in float64 for integers,
    float32 for float16 and bfloat16, as cudareduce.mean sums them)
    times 1.0 over the unmasked count; without a mask, ``ndarray.mean`` of
    the masked array."""
    float16_result = False
    if dtype is None:
        if issubclass(a.dtype.type, (np.integer, np.bool_)):
            dtype = np.dtype(np.float64)
        elif a.dtype == np.float16 or a.dtype.name == "bfloat16":
            dtype = np.dtype(np.float32)
            float16_result = True
    if ma.getmask(a) is ma.nomask:
        return _unmasked_mean(a, dtype, float16_result, run)
    total = reduce("sum", a, dtype, run)
    count = a.count()
    if count == 0:
        return ma.masked
    if float16_result:
        return a.dtype.type(total * 1. / count)
    return total * 1. / count


def _unmasked_mean(a: ma.MaskedArray, dtype: Any, float16_result: bool,
                   run: Reducer) -> Any:
    """NumPy's ``_methods._mean`` as it runs on a masked array: the sum is
    a 0-d masked array, divided in place by the intp count
    (``casting="unsafe"``), so the quotient and its warnings are the array
    divide's, and numpy.ma masks a quotient that is not finite."""
    count = np.intp(a.size)
    if count == 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=6)
    total = ma.array(run("sum", a.filled(), dtype))
    np.true_divide(total, count, out=total, casting="unsafe")
    return a.dtype.type(total) if float16_result else total[()]
