"""cudareduce.dask's exact=True without a GPU (issue 44): the graph, with
the extension's exact_state replaced by a stand-in of Python's exact
arithmetic (fractions), whose states add and round as the extension's
do (every chunking the same value: the one correctly rounded sum); and
the extension's own host functions on states, which need no GPU:
exact_add_states and exact_round_state."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from cudareduce import _cudareduce
from test_dask_offline import numpy_into

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

STATE_BYTES = _cudareduce.exact_add_states([]).size


class StandIn:
    """exact_state, exact_add_states and exact_round_state of Python's
    exact arithmetic: a state is (the exact sum of the numbers, their
    count, the NaNs seen); the calls are recorded."""

    def __init__(self):
        self.calls = []

    def exact_state(self, op, a, method, threads, dtype):
        self.calls.append(("state", op, a.size, method, dtype))
        values = np.asarray(a, np.float64).ravel()
        numbers = values[~np.isnan(values)]
        return (sum(map(Fraction, numbers.tolist()), Fraction(0)),
                numbers.size, values.size - numbers.size)

    def exact_add_states(self, states):
        states = list(states)
        self.calls.append(("add", len(states)))
        return tuple(sum(s[k] for s in states) for k in range(3))

    def exact_round_state(self, op, state, dtype, n, reduce_dtype):
        self.calls.append(("round", op, np.dtype(dtype), n, reduce_dtype))
        total, count, nans = state
        if nans and not op.startswith("nan"):
            return np.dtype(dtype).type(np.nan)
        if op.endswith("mean"):
            total /= count if op == "nanmean" else n
        return np.dtype(dtype).type(float(total))


@pytest.fixture
def stand_in(monkeypatch):
    fake = StandIn()
    for name in ("exact_state", "exact_add_states", "exact_round_state"):
        monkeypatch.setattr(_cudareduce, name, getattr(fake, name))
    return fake


@pytest.mark.parametrize("chunks", [(1,), (7,), (1000,), (0, 600, 400)],
                         ids=str)
@pytest.mark.parametrize("split_every", [None, 2])
def test_every_chunking_rounds_the_one_exact_sum(stand_in, rng, chunks,
                                                 split_every):
    host = rng.standard_normal(1000) * np.exp2(rng.integers(-40, 40, 1000))
    host[[3, 500, 999]] = [1e300, 1.0, -1e300]
    x = da.from_array(host, chunks=chunks)
    got = cd.sum(x, split_every=split_every, exact=True).compute(
        scheduler="threads")
    assert got == math.fsum(host) and isinstance(got, np.float64)
    states = [c for c in stand_in.calls if c[0] == "state"]
    assert len(states) == len(x.chunks[0])
    assert {c[1:] for c in states} - {("sum", 0, "fast", None)} == {
        ("sum", size, "fast", None) for size in x.chunks[0] if size}
    rounds = [c for c in stand_in.calls if c[0] == "round"]
    assert rounds == [("round", "sum", np.dtype(np.float64), 1000, None)]


def test_means_divide_the_exact_sum_by_the_whole_count(stand_in):
    host = np.array([1.0, np.nan, 2.0, 4.0, np.nan, 8.0], np.float32)
    x = da.from_array(host, chunks=2)
    assert cd.nanmean(x, exact=True).compute() == np.float32(3.75)
    assert np.isnan(cd.mean(x, exact=True).compute())
    x = da.from_array(host[[0, 2, 3, 5]], chunks=3)
    assert cd.mean(x, exact=True, keepdims=True).compute().shape == (1,)
    assert stand_in.calls[-1] == ("round", "mean", np.dtype(np.float32), 4,
                                  None)


def test_what_takes_the_plain_path_and_what_is_refused(stand_in,
                                                       monkeypatch):
    # The plain path's calls by NumPy, as test_dask_offline's.
    monkeypatch.setattr(cd, "reduce_array", numpy_into)
    ints = da.from_array(np.arange(10, dtype=np.int32), chunks=3)
    assert cd.sum(ints, exact=True).compute() == 45
    empty = da.from_array(np.ones(0, np.float32), chunks=1)
    assert cd.sum(empty, exact=True).compute() == 0
    assert stand_in.calls == []       # neither took the exact path
    x = da.from_array(np.ones((4, 4)), chunks=2)
    with pytest.raises(ValueError, match="not along axes"):
        cd.sum(x, axis=0, exact=True)
    for op in ("prod", "max", "argmin"):
        with pytest.raises(TypeError):
            getattr(cd, op)(x, exact=True)


def test_the_extension_rounds_and_adds_states_without_a_gpu():
    zero = _cudareduce.exact_add_states([])
    assert zero.dtype == np.uint8 and zero.shape == (STATE_BYTES,)
    assert not zero.any()
    twice = _cudareduce.exact_add_states([zero, zero])
    assert np.array_equal(twice, zero)
    for op, dtype in (("sum", np.float32), ("nansum", np.float16),
                      ("mean", np.float64), ("nanmean", np.float32)):
        value = _cudareduce.exact_round_state(op, zero, dtype, 5)
        assert value == 0 and np.asarray(value).dtype == dtype, op
    # reduce_dtype as cudareduce.mean's dtype=.
    value = _cudareduce.exact_round_state("mean", zero, np.float16, 5,
                                          np.float64)
    assert np.asarray(value).dtype == np.float64


@pytest.mark.parametrize("args, error, match", [
    (("sum", np.zeros(3, np.uint8), np.float32, 1), TypeError,
     "contiguous uint8 array"),
    (("sum", None, np.float32, 1), TypeError, "contiguous uint8 array"),
    (("sum", "zero", np.float32, 0), ValueError, "n >= 1"),
    (("prod", "zero", np.float32, 1), ValueError, "exact=True is for sum"),
    (("sum", "zero", np.complex64, 1), ValueError, "complex"),
    (("median", "zero", np.float32, 1), ValueError, "unknown operator"),
])
def test_exact_round_state_refuses(args, error, match):
    zero = _cudareduce.exact_add_states([])
    args = tuple(zero if isinstance(a, str) and a == "zero" else a
                 for a in args)
    with pytest.raises(error, match=match):
        _cudareduce.exact_round_state(*args)
    with pytest.raises(TypeError, match="contiguous uint8 array"):
        _cudareduce.exact_add_states([zero, zero[:-1]])
