"""axis= and keepdims= (issue 43) without a GPU: the arguments' errors,
empty inputs, and the soundness of the GPU tests' catalogue and checks.

Every operator takes ``axis=`` (None, an int, a tuple of ints; the index
operators None or an int) and ``keepdims=`` with NumPy's semantics.  What
is checked here needs no device, by construction (test_api's convention):

- errors are provoked with non-empty NumPy inputs, so that a check made
  after the first CUDA call would show up here, without a GPU, as a
  CudaError instead of NumPy's error.  Each is held to NumPy's own
  outcome of the same call: the same class of exception (AxisError,
  TypeError or ValueError), and for an axis out of range or repeated
  NumPy's message (an AxisError's ``axis`` and ``ndim`` too);
- results are read off empty inputs, which never need the GPU
  (docs/usage.md: "the result of an empty input is NumPy's identity or
  NumPy's error, known without one"; here per slice): the same type,
  dtype, shape, values and warnings as NumPy's, and the same errors;
- the catalogue of test_axis_gpu.py (``support.axis_cases``): it covers
  what the issue lists, its layouts hold the data they claim, and its
  checks pass NumPy's own answers and fail answers that lose an element.

Where NumPy itself is inconsistent the test says so: ``keepdims=
numpy.True_`` (NumPy 2.4's ufunc reductions refuse a numpy.bool) is not
asked, and ``out=`` that is not an array is a TypeError for every
operator (numpy.nanmean's is an AttributeError).

These fail until the library takes axis= along axes (it reduces whole
arrays only, and has no keepdims=, as of this file's writing).
"""
from __future__ import annotations

import collections
import dataclasses
import inspect
import math
import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError

import cudareduce
from support.axis_cases import (DTYPE_NAMES, EDGE_LENGTHS, INDEX_OPS,
                                KINDS, LAYOUTS, MANY_RESULTS, OPS,
                                PRODUCT_OPS, SUM_OPS, case_values, catalogue,
                                dtype_of, error_class, expect, laid_out,
                                layout, mismatch)
from support.outcomes import captured
from support.row_order import ROW_CHUNK, ordered_sums

VALUE_OPS = tuple(op for op in OPS if op not in INDEX_OPS)


def nonempty(shape=(3, 4), dtype=np.float32) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=dtype).reshape(shape) % 5


def assert_same_error(op, got, want, *, message: bool) -> None:
    """`got` and `want` are captured() outcomes that raised."""
    got_value, got_raised, _ = got
    assert got_raised is not None, (
        f"{op}: returned {got_value!r}; NumPy raises {want[1]}")
    assert error_class(got_raised) is error_class(want[1]), (
        f"{op}: raised {got_raised}; NumPy raises {want[1]}")
    if message:
        assert got_raised[1] == want[1][1], (op, got_raised, want[1])


# --- the signature -----------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_axis_and_keepdims_are_keywords(op):
    params = inspect.signature(getattr(cudareduce, op)).parameters
    for name, default in (("axis", None), ("keepdims", False)):
        assert name in params, f"{op} has no {name}="
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params[name].default is default, (name, params[name].default)


# --- axis= errors ------------------------------------------------------------

# (shape, axis), each refused by NumPy; the index operators refuse every
# tuple (TypeError), even one that would be valid for the others.
BAD_AXES = [
    ((5,), 1), ((5,), -2), ((3, 4), 2), ((3, 4), -3), ((3, 4), (0, 2)),
    ((2, 3, 4), (0, -4)), ((3, 4), (0, 0)), ((3, 4), (1, -1)),
    ((2, 3, 4), (0, 2, -1)), ((3, 4), (0, 0, 5)), ((3, 4), (5, 0, 0)),
    ((3, 4), 1.0), ((3, 4), (1.0,)), ((3, 4), (0, 1.5)),
    ((3, 4), np.float64(1)), ((3, 4), "0"), ((3, 4), [0]), ((3, 4), True),
    ((3, 4), (0,)), ((3, 4), (0, 1)), ((3, 4), ()), ((5,), (0,)),
    ((2, 3, 4), (2, 0)),
]


def axis_id(case) -> str:
    shape, axis = case
    return f"{'x'.join(map(str, shape))}-axis={axis!r}"


def numpy_refuses(op, shape, axis) -> bool:
    return captured(lambda: getattr(np, op)(nonempty(shape),
                                            axis=axis))[1] is not None


# Only the pairs NumPy refuses (a tuple is valid for the value operators:
# test_axis_gpu.py's).
BAD_AXIS_CASES = [pytest.param(op, shape, axis,
                               id=f"{op}-{axis_id((shape, axis))}")
                  for op in OPS for shape, axis in BAD_AXES
                  if numpy_refuses(op, shape, axis)]


@pytest.mark.parametrize("op, shape, axis", BAD_AXIS_CASES)
def test_bad_axis_is_numpys_error(op, shape, axis):
    data = nonempty(shape)
    want = captured(lambda: getattr(np, op)(data, axis=axis))
    got = captured(lambda: getattr(cudareduce, op)(data, axis=axis))
    stable = error_class(want[1]) is AxisError or want[1][1] == \
        "duplicate value in 'axis'"
    assert_same_error(op, got, want, message=stable)
    if error_class(want[1]) is AxisError:
        # Raised again to read its attributes.
        with pytest.raises(AxisError) as numpy_error:
            getattr(np, op)(data, axis=axis)
        with pytest.raises(AxisError) as our_error:
            getattr(cudareduce, op)(data, axis=axis)
        assert (our_error.value.axis, our_error.value.ndim) == (
            numpy_error.value.axis, numpy_error.value.ndim)


@pytest.mark.parametrize("op", OPS)
def test_bad_axis_with_keepdims_and_dtype(op):
    # The same errors whatever else the call names.
    data = nonempty((2, 3, 4), np.int16)
    kwargs = {"keepdims": True}
    if op in ("sum", "prod", "mean", "nansum", "nanprod", "nanmean"):
        kwargs["dtype"] = np.float64
    for axis in (3, -4, (1, 1), (0, 3), 2.0):
        want = captured(lambda: getattr(np, op)(data, axis=axis, **kwargs))
        assert want[1] is not None, (op, axis)
        got = captured(lambda: getattr(cudareduce, op)(data, axis=axis,
                                                       **kwargs))
        assert_same_error(op, got, want,
                          message=error_class(want[1]) is not TypeError)


# --- keepdims= ---------------------------------------------------------------

# Not an int: NumPy's value operators refuse these (TypeError).
NOT_INTS = ["yes", None, 2.5, []]


@pytest.mark.parametrize("keepdims", NOT_INTS, ids=repr)
@pytest.mark.parametrize("op", VALUE_OPS)
def test_keepdims_not_an_int_is_numpys_type_error(op, keepdims):
    data = nonempty()
    want = captured(lambda: getattr(np, op)(data, axis=0, keepdims=keepdims))
    assert want[1] is not None and want[1][0] is TypeError, want
    got = captured(lambda: getattr(cudareduce, op)(data, axis=0,
                                                   keepdims=keepdims))
    assert_same_error(op, got, want, message=False)


@pytest.mark.parametrize("keepdims", [True, False, 0, 1] + NOT_INTS,
                         ids=repr)
@pytest.mark.parametrize("op", OPS)
def test_keepdims_as_numpy_reads_it(op, keepdims):
    # NumPy's value operators take an int (True, False, 0, 1); its index
    # operators take any object's truth.  An empty kept axis: an empty
    # result, known without a GPU.
    data = np.zeros((0, 4), np.float32)
    want = captured(lambda: getattr(np, op)(data, axis=1, keepdims=keepdims))
    got = captured(lambda: getattr(cudareduce, op)(data, axis=1,
                                                   keepdims=keepdims))
    if want[1] is not None:
        assert_same_error(op, got, want, message=False)
        return
    assert got[1] is None, (op, got[1])
    assert type(got[0]) is np.ndarray and got[0].shape == want[0].shape \
        and got[0].dtype == want[0].dtype, (op, got[0], want[0])


# --- out= errors (a NumPy out) -----------------------------------------------

def read_only(shape, dtype):
    out = np.zeros(shape, dtype)
    out.flags.writeable = False
    return out


# (name, keepdims, the out of a (3, 4) float32 array reduced along axis 0,
# whose result has shape (4,), or (1, 4) with keepdims).
BAD_OUTS = [
    ("longer", False, lambda dtype: np.zeros(5, dtype)),
    ("shorter", False, lambda dtype: np.zeros(3, dtype)),
    ("the kept dimension", False, lambda dtype: np.zeros((1, 4), dtype)),
    ("transposed", False, lambda dtype: np.zeros((4, 1), dtype)),
    ("0-d", False, lambda dtype: np.zeros((), dtype)),
    ("without the kept dimension", True, lambda dtype: np.zeros(4, dtype)),
    ("read-only", False, lambda dtype: read_only(4, dtype)),
    ("a list", False, lambda dtype: [0, 0, 0, 0]),
]


@pytest.mark.parametrize("name, keepdims, make", BAD_OUTS,
                         ids=[b[0] for b in BAD_OUTS])
@pytest.mark.parametrize("op", OPS)
def test_bad_numpy_out_is_refused_as_numpy_refuses_it(op, name, keepdims,
                                                      make):
    data = nonempty()
    dtype = np.int64 if op in INDEX_OPS else np.float32
    want = captured(lambda: getattr(np, op)(data, axis=0, keepdims=keepdims,
                                            out=make(dtype)))
    if name == "a list":
        # numpy.nanmean's is an AttributeError; a TypeError for all here.
        want = (None, (TypeError, "out must be an array"), ())
    assert want[1] is not None, (op, name)
    got = captured(lambda: getattr(cudareduce, op)(
        data, axis=0, keepdims=keepdims, out=make(dtype)))
    assert_same_error(op, got, want, message=False)


@pytest.mark.parametrize("op, data, out", [
    ("argmin", nonempty(), np.zeros(4, np.float32)),
    ("argmax", nonempty(dtype=np.int32), np.zeros(4, np.float64)),
    ("nanargmin", nonempty(), np.zeros(4, np.complex64)),
    ("nanargmax", nonempty(dtype=np.int8), np.zeros(4, np.float16)),
    ("nanmean", nonempty(), np.zeros(4, np.int32)),
    ("nanmean", nonempty(dtype=np.float16), np.zeros(4, np.int64)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_out_of_a_dtype_numpy_refuses_is_a_type_error(op, data, out):
    want = captured(lambda: getattr(np, op)(data, axis=0, out=out.copy()))
    assert want[1] is not None and want[1][0] is TypeError, want
    got = captured(lambda: getattr(cudareduce, op)(data, axis=0,
                                                   out=out.copy()))
    assert_same_error(op, got, want, message=False)


# --- empty inputs ------------------------------------------------------------

# (shape, axis): an empty reduced axis (identities, NaN means, the
# extremes' and index operators' ValueError, even where the result is
# empty too), an empty kept axis (an empty result), whole arrays, no axis
# at all (axis=()), and tuples, which the index operators refuse.
EMPTY = [
    ((3, 0), 1), ((3, 0), 0), ((3, 0), -1), ((0, 0), 1), ((0, 4), 0),
    ((0, 4), 1), ((2, 0, 3), (0, 2)), ((2, 0, 3), (1,)), ((2, 0, 3), 1),
    ((4, 0, 2), (1, 2)), ((2, 0, 3), (2, 0)), ((0,), 0), ((0,), None),
    ((3, 0), None), ((0, 3), (0, 1)), ((0, 5), ()), ((1, 0, 1, 2), -3),
]
EMPTY_DTYPES = ("float32", "int16", "bool", "complex64", "float16",
                "uint64")


def assert_outcome_is_numpys(what, got, want) -> None:
    """captured() outcomes: the same error (class and message), or a
    value of the same type, dtype, shape and values; and the same
    warnings in the same order."""
    value, raised, caught = got
    if want[1] is not None:
        assert raised is not None, f"{what}: gave {value!r}, NumPy raises " \
            f"{want[1]}"
        # NumPy's words for an out of the wrong shape name its broadcast
        # internals; the class is what is held to them.
        shape_words = ("broadcast together", "wrong number of dimensions")
        assert error_class(raised) is error_class(want[1]) and (
            error_class(want[1]) is TypeError or raised[1] == want[1][1]
            or any(words in want[1][1] for words in shape_words)), (
            what, raised, want[1])
    else:
        assert raised is None, f"{what}: raised {raised}, NumPy gives " \
            f"{want[0]!r}"
        assert type(value) is type(want[0]), (what, type(value),
                                              type(want[0]))
        values_match = np.asarray(value).dtype == np.asarray(want[0]).dtype \
            and np.array_equal(np.asarray(value), np.asarray(want[0]),
                               equal_nan=np.asarray(want[0]).dtype.kind
                               in "fc")
        assert values_match, (what, value, want[0])
    assert caught == want[2], (what, caught, want[2])


@pytest.mark.parametrize("dtype", EMPTY_DTYPES)
@pytest.mark.parametrize("shape, axis", EMPTY,
                         ids=[axis_id(c) for c in EMPTY])
def test_empty_input_is_numpys(shape, axis, dtype):
    data = np.zeros(shape, dtype)
    for op in OPS:
        for keepdims in (False, True):
            kwargs = {"axis": axis, "keepdims": keepdims}
            want = captured(lambda: getattr(np, op)(data, **kwargs))
            got = captured(lambda: getattr(cudareduce, op)(data, **kwargs))
            assert_outcome_is_numpys(f"{op} {kwargs}", got, want)


@pytest.mark.parametrize("op, dtype, reduce_dtype", [
    ("sum", "int8", "float32"), ("sum", "float32", "int8"),
    ("prod", "bool", "int32"), ("mean", "int16", "float32"),
    ("mean", "float64", "float16"), ("nanmean", "float32", "float64"),
    ("nansum", "float16", "float32"), ("nanprod", "uint8", "int16"),
    ("sum", "complex64", "complex128"),
    pytest.param("mean", "uint32", "int32", marks=pytest.mark.xfail(
        strict=True, reason="an integer mean of an empty axis: cudareduce "
        "adds NumPy's 'invalid value encountered in cast' (its NaN cast to "
        "int32), which numpy.mean's divide into its out does not give")),
])
def test_empty_input_with_dtype_is_numpys(op, dtype, reduce_dtype):
    for shape, axis in EMPTY:
        data = np.zeros(shape, dtype)
        kwargs = {"axis": axis, "dtype": np.dtype(reduce_dtype)}
        want = captured(lambda: getattr(np, op)(data, **kwargs))
        got = captured(lambda: getattr(cudareduce, op)(data, **kwargs))
        assert_outcome_is_numpys(f"{op} {shape} {kwargs}", got, want)


# (op, shape, axis, keepdims, out): NumPy outs that NumPy fills (of the
# result's dtype, or another it casts to) or refuses, for empty inputs.
EMPTY_OUTS = [
    ("sum", (3, 0), 1, False, lambda: np.full(3, 7, np.float32)),
    ("sum", (3, 0), 1, False, lambda: np.full(3, 7, np.int8)),
    ("sum", (3, 0), 1, False, lambda: np.full(3, 7, np.complex128)),
    ("prod", (3, 0), 1, True, lambda: np.full((3, 1), 7, np.float32)),
    ("prod", (3, 0), 1, False, lambda: np.full((3, 2), 7, np.float32)
     [:, 1]),
    ("any", (0, 4), 0, False, lambda: np.full(4, 7, np.float64)),
    ("all", (0, 4), 0, False, lambda: np.full(8, 7, np.bool_)[::2]),
    ("mean", (3, 0), 1, False, lambda: np.full(3, 7, np.float32)),
    ("nanmean", (3, 0), -1, False, lambda: np.full(3, 7, np.float64)),
    ("nansum", (2, 0, 3), (1,), False, lambda: np.full((2, 3), 7,
                                                       np.float32)),
    ("max", (3, 0), 1, False, lambda: np.full(3, 7, np.float32)),
    ("max", (0, 4), 1, False, lambda: np.full(0, 7, np.float32)),
    ("argmin", (0, 4), 1, False, lambda: np.full(0, 7, np.int64)),
    ("argmin", (0, 4), 1, False, lambda: np.full(0, 7, np.int32)),
    ("argmax", (0, 4), 1, True, lambda: np.full((0, 1), 7, np.int64)),
    ("nanargmax", (0, 4), 1, False, lambda: np.full(0, 7, np.float32)),
    ("argmin", (3, 0), 1, False, lambda: np.full(3, 7, np.int64)),
    ("sum", (3, 0), 1, False, lambda: np.full(4, 7, np.float32)),
    ("sum", (3, 0), 1, True, lambda: np.full(3, 7, np.float32)),
]


@pytest.mark.parametrize("case", range(len(EMPTY_OUTS)))
def test_empty_input_into_a_numpy_out(case):
    op, shape, axis, keepdims, make = EMPTY_OUTS[case]
    data = np.zeros(shape, np.float32)
    want_out, got_out = make(), make()
    want = captured(lambda: getattr(np, op)(data, axis=axis,
                                            keepdims=keepdims, out=want_out))
    got = captured(lambda: getattr(cudareduce, op)(data, axis=axis,
                                                   keepdims=keepdims,
                                                   out=got_out))
    what = f"{op} of {shape}, axis={axis}, into {want_out.dtype}" \
           f"{want_out.shape}"
    if want[1] is None:
        assert want[0] is want_out and got[0] is got_out, (what, got)
        want = (want_out, None, want[2])
        got = (got_out, got[1], got[2])
    else:
        # Refused: the out is left as it was.
        assert np.array_equal(got_out, make()), (what, got_out)
    assert_outcome_is_numpys(what, got, want)


# --- the GPU tests' catalogue ------------------------------------------------

CATALOGUE = catalogue()


def test_the_catalogue_is_the_same_on_every_build():
    # pytest-xdist collects it in every worker: the same ids, in order.
    again = catalogue()
    assert [c.id for c in again] == [c.id for c in CATALOGUE]
    assert len({c.id for c in CATALOGUE}) == len(CATALOGUE)
    assert 250 <= len(CATALOGUE) <= 450, len(CATALOGUE)


def test_the_catalogue_covers_the_issue():
    cases = CATALOGUE
    counts = collections.Counter
    assert set(counts(c.op for c in cases)) == set(OPS)
    assert set(counts(c.dtype for c in cases)) == set(DTYPE_NAMES)
    assert set(counts((c.op, c.kind) for c in cases)) == {
        (op, kind) for op in OPS for kind in KINDS}
    assert set(counts((c.op, c.method) for c in cases)) == {
        (op, method) for op in OPS for method in (None, "fast", "cub")}
    assert set(counts(c.layout for c in cases)) == set(LAYOUTS)
    assert {len(c.shape) for c in cases} == {1, 2, 3, 4}
    assert {c.keepdims for c in cases} == {False, True}
    lengths = counts(c.length for c in cases)
    assert all(lengths[n] >= 2 for n in EDGE_LENGTHS), lengths
    assert any(c.length > 3 * 8192 + 5 for c in cases)
    assert any(c.size >= 10 ** 6 for c in cases)
    many = [c for c in cases if c.size // c.length > MANY_RESULTS]
    assert {c.axes[0] == 0 for c in many} == {False, True}, \
        "more than 65,535 rows and columns"
    axes = [c.axis for c in cases]
    assert any(isinstance(a, tuple) and list(a) != sorted(a) for a in axes)
    assert any(isinstance(a, tuple) and min(a) < 0 for a in axes)
    assert any(isinstance(a, (int, np.integer)) and a < 0 for a in axes)
    assert any(isinstance(a, np.integer) for a in axes)
    assert any(a is None for a in axes)
    assert any(c.whole and isinstance(c.axis, tuple) for c in cases)
    assert any(c.reduce_dtype for c in cases)
    assert counts(c.flavour for c in cases
                  if c.op in SUM_OPS and c.dtype[0] in "fc")["real"] >= 12
    # A device input of every layout, and of every dtype it can hold.
    device = [c for c in cases if c.kind != "numpy"]
    assert set(counts(c.layout for c in device)) == set(LAYOUTS)
    assert set(counts(c.dtype for c in device)) == set(DTYPE_NAMES)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("name", LAYOUTS)
def test_layouts_hold_the_values_where_they_say(name, ndim):
    shape = (4, 3, 5, 2)[:ndim]
    host = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    plan = layout(name, ndim)
    view = laid_out(np, host, plan)
    assert np.array_equal(view, host) and view.shape == host.shape
    assert not np.shares_memory(view, host)
    strides = np.array(view.strides) // view.itemsize
    if name in ("C", "offset"):
        assert view.flags.c_contiguous
    if name == "F":
        assert view.flags.f_contiguous
    if name in ("negative", "mixed"):
        assert (strides < 0).any()
    else:
        assert (strides > 0).all()
    if name in ("strided", "mixed") or name in ("transposed", "permuted",
                                                "F") and ndim > 1:
        assert not view.flags.c_contiguous
    if name == "offset":
        # Past the buffer's start by 3 elements: misaligned for vectors.
        assert view.ctypes.data % 16 != 0
    if name == "permuted" and ndim > 2:
        assert not view.flags.f_contiguous


def numpy_itself(case, host):
    """NumPy's answer on the case's own layout, as the library must give
    it (bfloat16 read as float32 and the answer rounded back)."""
    data = laid_out(np, host, layout(case.layout, host.ndim))
    if host.dtype.name == "bfloat16":
        data = data.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = np.asarray(getattr(np, case.op)(data, **case.kwargs()))
    if host.dtype.name == "bfloat16" and value.dtype == np.float32:
        value = value.astype(host.dtype)
    return value


SMALL_CASES = [c for c in CATALOGUE if c.size <= 200_000]


def test_the_checks_pass_numpys_own_answers(session_seed):
    # Every case's data and answer, with NumPy in the library's place:
    # the GPU test's checks hold NumPy's sums (in its own order) within
    # their bounds, and its exact answers exactly.
    wrong = []
    for case in SMALL_CASES:
        rng = np.random.default_rng([session_seed, case.number])
        host = case_values(rng, case)
        assert host.shape == case.shape and host.dtype == dtype_of(
            case.dtype) and host.flags.c_contiguous, case.id
        expected = expect(case, host)
        if expected.raised is not None:
            continue
        try:
            answer = numpy_itself(case, host)
        except ValueError:
            # NumPy's all-NaN error, where a device input gives -1.
            assert case.kind != "numpy" and case.op in INDEX_OPS, case.id
            continue
        problem = mismatch(answer, expected)
        if problem:
            wrong.append(f"{case.id}: {problem}")
    assert not wrong, wrong[:5]


def test_the_checks_fail_an_answer_without_one_element(session_seed):
    # An element replaced by the identity (a lost element): every exact
    # sum, mean and product notices, and every bounded one of rows under
    # 1000 elements notices its largest element lost.
    noticed = collections.Counter()
    for case in SMALL_CASES:
        if case.op not in SUM_OPS + PRODUCT_OPS or case.dtype in (
                "bool", "bfloat16") or case.reduce_dtype is not None:
            continue
        real = case.flavour == "real"
        if real and case.length >= 1000:
            continue
        rng = np.random.default_rng([session_seed, case.number, 1])
        host = case_values(rng, case)
        expected = expect(case, host)
        if expected.raised is not None or expected.reference is None:
            continue
        identity = 1 if case.op in PRODUCT_OPS else 0
        flat = host.reshape(-1)
        candidates = np.flatnonzero((flat != identity) & ~np.isnan(flat))
        if candidates.size == 0:
            continue
        where = (candidates[np.argmax(np.abs(flat[candidates]))] if real
                 else rng.choice(candidates))
        lost = host.copy()
        lost.reshape(-1)[where] = identity
        problem = mismatch(numpy_itself(case, lost), expected)
        noticed[real] += 1
        assert problem is not None, (
            f"{case.id}: an answer without element {where} passes")
    assert noticed[False] >= 30 and noticed[True] >= 5, noticed


def test_the_bound_grows_with_the_length_and_is_not_vacuous():
    # float32 rows of normal values: a row's bound over its mean |x| is
    # at most (L + 3) L eps: under 1% up to 257 elements; and it grows
    # with L.
    rng = np.random.default_rng(0)
    template = next(c for c in CATALOGUE if c.op == "sum")
    relative = {}
    for length in (33, 257, 8193):
        host = ((rng.standard_normal((4, length)) + 0.25) * 1000).astype(
            np.float32)
        case = dataclasses.replace(
            template, dtype="float32", shape=host.shape, axis=1,
            keepdims=False, reduce_dtype=None, flavour="real", kind="numpy")
        expected = expect(case, host)
        scale = np.mean(np.abs(host.astype(np.float64)), axis=1)
        relative[length] = float(np.max(expected.bound / scale))
        eps = float(np.finfo(np.float32).eps)
        assert relative[length] <= (length + 3) * length * eps, relative
    assert relative[33] < relative[257] < 0.01 < relative[8193], relative


# --- the order's model (support.row_order), checked against itself ----------

@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 9, 31, 32, 33, 1000,
                                    ROW_CHUNK, ROW_CHUNK + 1,
                                    5 * ROW_CHUNK + 3, 9 * ROW_CHUNK + 1])
def test_the_orders_model_sums_every_element_once(rng, length):
    """Integers small enough to be exact in float32: every order gives
    the exact sum, so the model can lose or double no element."""
    rows = rng.integers(-100, 100, (3, length)).astype(np.float32)
    np.testing.assert_array_equal(ordered_sums(rows, np.float32),
                                  rows.astype(np.int64).sum(axis=1))


def test_the_orders_model_is_the_documented_tree():
    """Three elements: lanes 0 and 2 first, then lane 1 ((a + c) + b);
    a left fold ((a + b) + c) would lose the 1."""
    big = np.float32(1e8)
    rows = np.array([[big, 1, -big]], np.float32)
    assert ordered_sums(rows, np.float32)[0] == 1
    assert (rows[0, 0] + rows[0, 1]) + rows[0, 2] == 0
