"""cudareduce._masked against numpy.ma, without a GPU: NumPy stands in for
the extension's reduction of the filled data, so what is checked is the
masking itself (fill values, all-masked, counts, mean's dtype and divide,
the warnings) on numpy.ma's own answers."""
from __future__ import annotations

import numpy as np
import numpy.ma as ma
import pytest

from cudareduce import _masked
from test_inputs_offline import numpy_outcome, same_value


def numpy_run(op: str, data: np.ndarray, dtype):
    """The extension's part, done by NumPy: a plain array's reduction."""
    assert type(data) is np.ndarray, "the extension gets no masked array"
    if op in ("min", "max"):
        assert dtype is None
        return getattr(np, op)(data)
    return getattr(np, op)(data, dtype=dtype)


def cases():
    rng = np.random.default_rng(0)
    values = rng.integers(-100, 100, size=50)
    mask = rng.random(50) < 0.3
    for dtype in (np.float64, np.float32, np.float16, np.int8, np.uint16,
                  np.bool_):
        yield f"{np.dtype(dtype)}", ma.masked_array(values.astype(dtype),
                                                    mask=mask)
        yield f"{np.dtype(dtype)} nomask", ma.masked_array(
            values.astype(dtype))
    yield "all masked", ma.masked_array([1., 2.], mask=[1, 1])
    yield "mask of all False", ma.masked_array([1., 2.], mask=[0, 0])
    yield "masked NaN", ma.masked_array([1., np.nan], mask=[0, 1])
    yield "unmasked NaN", ma.masked_array([1., np.nan], mask=[1, 0])
    yield "2-D", ma.masked_array([[9, 2], [3, -9]], mask=[[1, 0], [0, 1]])
    yield "empty nomask", ma.masked_array([], dtype=np.float64)
    yield "empty mask", ma.masked_array([], mask=[], dtype=np.float64)


CALLS = [("sum", None), ("mean", None), ("min", None), ("max", None),
         ("sum", np.float32), ("sum", np.int8), ("sum", bool),
         ("mean", np.int64), ("mean", np.float16)]
CASES = list(cases())


@pytest.mark.parametrize("op, dtype", CALLS, ids=lambda c: str(c))
@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[name for name, _ in CASES])
def test_reduces_as_numpy_ma(case, op, dtype):
    _, a = CASES[case]
    kwargs = {} if dtype is None else {"dtype": dtype}
    want = numpy_outcome(lambda: getattr(a, op)(**kwargs))
    got = numpy_outcome(lambda: _masked.reduce(op, a, dtype, numpy_run))
    if isinstance(want, type):
        assert got is want
    elif want[0] is ma.masked:
        assert got[0] is ma.masked, got
    else:
        assert got[1] is want[1] and same_value(got[0], want[0]), (got, want)
        assert got[2] == want[2], (got, want)


def test_extension_refuses_the_raw_data_of_a_masked_array():
    import cudareduce
    with pytest.raises(TypeError, match="honour its mask"):
        cudareduce._cudareduce.reduce(
            "sum", ma.masked_array([1., 2.], mask=[0, 1]), "fast", 256)
