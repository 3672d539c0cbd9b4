"""Inputs of every kind, without a GPU: dtype rules, dtype=, the CUDA array
interface and DLPack as parsed, and argument errors of sum/mean/min/max.

Nothing here needs a device, by construction:

- Result dtypes are read off empty inputs.  An empty input never touches the
  GPU (``test_api`` checks that for ``sum`` in a process that sees no
  device), so sum gives 0, mean NaN (with NumPy's RuntimeWarning) and
  min/max NumPy's ValueError, all without a device.  (min/max of an empty
  array has no value, so their result dtype is checked in
  ``test_inputs_gpu``.)
- A ``__cuda_array_interface__`` (CAI) dict of zero size is reduced without
  touching its pointer; a malformed one is refused before any CUDA call.  A
  dict of non-zero size appears here only malformed (with a fake pointer
  that is never dereferenced), so that a check made after the first CUDA
  call shows up here as a ``CudaError`` instead of the expected error.
- Argument errors are provoked with non-empty NumPy input, for the same
  reason (the convention of ``test_api``).
- DLPack objects here are CPU ones (NumPy's capsule) of zero size, or claim
  a device type that is refused before any CUDA call; those that claim
  CUDA (kDLCUDA, kDLCUDAManaged) stop in their own ``__dlpack__``, or hand
  over a CPU capsule that contradicts the claim.

``test_random_cai_dicts_never_escape_value_or_type_error`` (Hypothesis)
throws random dicts at the parser: zero-size or malformed, the only
outcomes allowed are the identity or ValueError/TypeError.

The helpers at the top (``CAI``, ``DLPackOnly`` from ``dlpack_capsules``,
``result_dtype``, ``dtype_argument_allowed``, ``assert_identity``, the dtype
lists) are shared with ``test_inputs_gpu``, which also sends
``interface()``'s ``FAKE_POINTER`` to a device.
"""
from __future__ import annotations

import inspect
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudareduce
from support.api_contract import DEFAULT_METHOD, METHODS
from support.dlpack_capsules import DLPackOnly

# --- shared with test_inputs_gpu ---------------------------------------------

OPS = ("sum", "mean", "min", "max")

# The real dtypes (test_inputs_gpu's grids: test_complex_gpu.py checks
# complex ones on the GPU), and every NumPy dtype the library takes.
REAL_DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.float16, np.float32, np.float64))
SUPPORTED_DTYPES = REAL_DTYPES + (np.dtype(np.complex64),
                                  np.dtype(np.complex128))

# The dtypes `dtype=` may name: every supported one, bool included (a
# logical or), cast to unsafely, as NumPy does.
DTYPE_ARGUMENTS = SUPPORTED_DTYPES

UNSUPPORTED_DTYPES = [np.dtype(d) for d in (
    object, "U3", "S3", "datetime64[ns]", "timedelta64[s]", "V4",
    [("x", np.int32)])] + (
    [np.dtype(np.longdouble), np.dtype(np.clongdouble)]
    if np.dtype(np.longdouble).itemsize not in (4, 8) else [])

# kDLCPU, kDLCUDA and kDLCUDAManaged; every other DLPack device type is
# refused.
KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13


def dtype_id(dtype) -> str:
    return str(np.dtype(dtype))


def result_dtype(op: str, dtype, override=None) -> np.dtype:
    """The dtype of cudareduce.<op> over an array of `dtype` (with
    ``dtype=override`` for sum and mean): NumPy's."""
    if op in ("min", "max"):
        return np.dtype(dtype)
    if override is not None:
        return np.dtype(override)
    numpy_op = np.sum if op == "sum" else np.mean
    return numpy_op(np.zeros(1, dtype)).dtype


def dtype_argument_allowed(source, target) -> bool:
    """The spec's rule: any supported dtype, whatever the source (NumPy
    casts to it unsafely)."""
    return np.dtype(target) in DTYPE_ARGUMENTS


def reduce(op: str, a, *args, **kwargs):
    return getattr(cudareduce, op)(a, *args, **kwargs)


class CAI:
    """The smallest CUDA-array-interface object: the dict, as given."""

    def __init__(self, interface):
        self.__cuda_array_interface__ = interface

    def __repr__(self):
        return f"CAI({self.__cuda_array_interface__!r})"


def assert_identity(op: str, dtype, call, override=None):
    """`call()` reduces an empty input of `dtype` with `op`: sum gives 0 and
    mean NaN (with NumPy's RuntimeWarning), of NumPy's result dtype; min and
    max raise NumPy's ValueError."""
    want = result_dtype(op, dtype, override)
    if op in ("min", "max"):
        name = {"min": "minimum", "max": "maximum"}[op]
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert "zero-size array" in message and name in message, message
        return
    if op == "sum":
        got = call()
        assert type(got) is want.type, (type(got), want)
        assert got == 0
        return
    # NumPy's two: "Mean of empty slice", then the 0/0's "invalid value
    # encountered in (scalar) divide"; nothing else.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
    messages = [str(w.message) for w in caught]
    assert all(w.category is RuntimeWarning for w in caught), messages
    assert messages[:1] == ["Mean of empty slice"], messages
    assert all(m.startswith("invalid value encountered in")
               for m in messages[1:]), messages
    assert type(got) is want.type, (type(got), want)
    if want.kind == "f":
        assert np.isnan(got), got


# --- signatures ---------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_signature(op):
    params = inspect.signature(getattr(cudareduce, op)).parameters
    keyword_only = (["threads", "dtype", "stream", "axis", "out"]
                    if op in ("sum", "mean")
                    else ["threads", "stream", "axis", "out"])
    # keepdims= (issue 43, wherever it stands) is test_axis.py's, exact=
    # (issue 44: sum, mean, nansum, nanmean) test_exact.py's, devices=
    # (issue 45) test_several_devices_offline.py's.
    assert [p for p in params
            if p not in ("keepdims", "exact", "devices")] == [
        "a", "method", *keyword_only]
    assert params["method"].default == DEFAULT_METHOD
    assert params["threads"].default is None
    for name in keyword_only:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        if name != "threads":
            assert params[name].default is None, name


@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max_take_no_dtype(op):
    with pytest.raises(TypeError):
        reduce(op, np.ones(3, np.float32), dtype=np.float64)


# --- result dtypes, read off empty inputs -------------------------------------

@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2)], ids=str)
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_empty_numpy_input_gives_numpys_identity(op, dtype, shape):
    assert_identity(op, dtype, lambda: reduce(op, np.zeros(shape, dtype)))


def test_result_dtypes_are_numpys_as_the_spec_lists_them():
    # The spec's words, checked once against NumPy on this platform, so that
    # result_dtype() above is known to say what the spec says.
    for dtype in SUPPORTED_DTYPES:
        if dtype.kind in "bi":
            assert result_dtype("sum", dtype) == np.int64
        elif dtype.kind == "u":
            assert result_dtype("sum", dtype) == np.uint64
        else:
            assert result_dtype("sum", dtype) == dtype
        assert result_dtype("mean", dtype) == (
            dtype if dtype.kind in "fc" else np.float64)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("method", METHODS)
def test_empty_input_accepts_every_method(op, method):
    for threads in (64, 128, 256, 512, 1024):
        assert_identity(op, np.int16, lambda: reduce(
            op, np.zeros(0, np.int16), method, threads=threads))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("empty, dtype", [
    ([], np.float64),
    (np.zeros(0, ">i4"), np.int32),
    (np.zeros(0, ">f8"), np.float64),
    (np.zeros((4, 6), np.uint16)[:, 6:], np.uint16),
    (np.zeros(10, np.int8)[::-1][5:5], np.int8),
], ids=["list", "big-endian-int32", "big-endian-float64", "empty-slice",
        "reversed-empty-slice"])
def test_empty_array_likes(op, empty, dtype):
    assert_identity(op, dtype, lambda: reduce(op, empty))


class ArrayLike:
    """Only __array__: the last rule, numpy.asarray, applies."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)


@pytest.mark.parametrize("op", OPS)
def test_object_with_only_array_goes_through_numpy_asarray(op):
    assert_identity(op, np.int16,
                    lambda: reduce(op, ArrayLike(np.zeros(0, np.int16))))


# --- unsupported dtypes -------------------------------------------------------

@pytest.mark.parametrize("size", [5, 0])
@pytest.mark.parametrize("dtype", UNSUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_unsupported_dtype_is_a_type_error_naming_it(op, dtype, size):
    with pytest.raises(TypeError) as info:
        reduce(op, np.zeros(size, dtype))
    message = str(info.value)
    assert str(dtype) in message or repr(dtype) in message, message


# --- dtype= -------------------------------------------------------------------

DTYPE_ARGUMENT_TABLE = [
    pytest.param(op, source, target,
                 id=f"{op}-{source}-to-{target}")
    for op in ("sum", "mean")
    for source in SUPPORTED_DTYPES
    for target in SUPPORTED_DTYPES]


def numpy_outcome(call):
    """(value, its type, the warnings' (category, message) in order) of
    call(), or the exception's type when it raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            return type(exc)
    return (value, type(value),
            [(w.category, str(w.message)) for w in caught])


def same_value(got, want) -> bool:
    return (got == want) or (np.isnan(got) and np.isnan(want))


@pytest.mark.parametrize("op, source, target", DTYPE_ARGUMENT_TABLE)
def test_dtype_argument_table(op, source, target):
    # Without a GPU an empty input never reaches one, so the finishing
    # steps (dtype rules, mean's divide, their casts and warnings) are
    # checked here against NumPy's own answer: same type, value and
    # warnings, in order.
    empty = np.zeros(0, source)
    want = numpy_outcome(lambda: getattr(np, op)(empty, dtype=target))
    got = numpy_outcome(lambda: reduce(op, empty, dtype=target))
    assert got[1:] == want[1:] and same_value(got[0], want[0]), (got, want)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("target", [
    np.clongdouble, object, "U3", "datetime64[s]",
    [("x", np.int32)], "not a dtype", 3.5],
    ids=lambda t: t if isinstance(t, str) else repr(t))
def test_dtype_argument_unsupported_or_not_a_dtype_is_a_type_error(op, target):
    for size in (5, 0):
        with pytest.raises(TypeError):
            reduce(op, np.zeros(size, np.int32), dtype=target)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("spelling", [
    np.int16, "int16", "i2", np.dtype("<i2")], ids=repr)
def test_dtype_argument_spellings(op, spelling):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = reduce(op, np.zeros(0, np.int8), dtype=spelling)
    assert type(got) is np.int16


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_dtype_none_is_the_default(op):
    assert_identity(op, np.uint8,
                    lambda: reduce(op, np.zeros(0, np.uint8), dtype=None))


# --- argument errors ----------------------------------------------------------

def nonempty():
    return np.ones(5, np.float32)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("method", ["bogus", "", "MULTI_ELEMENT", "sum"])
def test_unknown_method_is_a_value_error_listing_the_methods(op, method):
    with pytest.raises(ValueError) as info:
        reduce(op, nonempty(), method)
    for name in METHODS:
        assert name in str(info.value), str(info.value)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("method", [None, 3, b"sequential"], ids=repr)
def test_method_not_a_str_is_a_type_error(op, method):
    with pytest.raises(TypeError):
        reduce(op, nonempty(), method)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("threads", [0, 32, 63, 100, 2048, -256, 2 ** 40])
def test_threads_out_of_range_is_a_value_error(op, threads):
    with pytest.raises(ValueError, match="threads"):
        reduce(op, nonempty(), threads=threads)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("threads", [True, 256.0, "256"], ids=repr)
def test_threads_not_an_int_is_a_type_error(op, threads):
    with pytest.raises(TypeError, match="threads"):
        reduce(op, nonempty(), threads=threads)


@pytest.mark.parametrize("op", OPS)
def test_threads_is_keyword_only(op):
    with pytest.raises(TypeError):
        reduce(op, np.zeros(0, np.float32), "sequential", 256)


# --- the CUDA array interface: typestr ----------------------------------------

# Never dereferenced: every dict of non-zero size that carries it is refused
# before any CUDA call.  2^16-aligned, so aligned for every item size.
FAKE_POINTER = 0x7F12_3456_0000
FAKE_STREAM = 0x5A5A_0000_1230


def interface(shape=(0,), typestr="<f4", data=(FAKE_POINTER, False),
              version=3, **extra):
    """A CAI dict; an entry given as DROP is left out."""
    d = {"shape": shape, "typestr": typestr, "data": data, "version": version}
    d.update(extra)
    return {key: value for key, value in d.items() if value is not DROP}


DROP = object()

CANONICAL_TYPESTRS = {dtype.str: dtype for dtype in SUPPORTED_DTYPES}
# One-byte types: the byte order character is irrelevant, so any is taken.
ONE_BYTE_TYPESTRS = {
    "<i1": np.dtype(np.int8), ">i1": np.dtype(np.int8),
    "<u1": np.dtype(np.uint8), ">u1": np.dtype(np.uint8),
    "<b1": np.dtype(np.bool_), ">b1": np.dtype(np.bool_),
}
# NumPy's shorthand spellings: the typestr is read as ``numpy.dtype`` reads
# it, as NumPy's own ``__array_interface__`` consumer (and CuPy's and
# Numba's CAI consumers) do, so a spelling without the item size that NumPy
# understands names NumPy's dtype ("<f" is float32, "<d" float64).
NUMPY_SHORTHAND_TYPESTRS = {
    "<f": np.dtype(np.float32), "<d": np.dtype(np.float64),
    "<e": np.dtype(np.float16), "<h": np.dtype(np.int16),
    "|?": np.dtype(np.bool_),
}
REFUSED_TYPESTRS = [
    "<c32", "|O8", "<M8[s]", "<M8[ns]", "<m8[s]", "V4", "|V4", "<V2",
    "<U3", "|S3", "<f16", "<i3", "<f3", "<u16", "|b2", "",
    "garbage", "<u", "<x4",
    # big-endian, item size > 1
    ">f2", ">f4", ">f8", ">i2", ">i4", ">i8", ">u2", ">u4", ">u8",
]


@pytest.mark.parametrize("typestr, dtype", [
    *CANONICAL_TYPESTRS.items(), *ONE_BYTE_TYPESTRS.items(),
    *NUMPY_SHORTHAND_TYPESTRS.items()],
    ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("op", OPS)
def test_cai_typestr_accepted_gives_numpys_identity(op, typestr, dtype):
    assert np.dtype(typestr) == dtype       # the table says what NumPy says
    obj = CAI(interface(typestr=typestr))
    assert_identity(op, dtype, lambda: reduce(op, obj))


@pytest.mark.parametrize("size", [5, 0])
@pytest.mark.parametrize("typestr", REFUSED_TYPESTRS)
@pytest.mark.parametrize("op", OPS)
def test_cai_typestr_refused_is_a_type_error(op, typestr, size):
    with pytest.raises(TypeError):
        reduce(op, CAI(interface(shape=(size,), typestr=typestr)))


@pytest.mark.parametrize("size", [5, 0])
@pytest.mark.parametrize("typestr", [None, 4, b"<f4", np.dtype("<f4")],
                         ids=repr)
def test_cai_typestr_not_a_str_is_a_type_error(typestr, size):
    with pytest.raises(TypeError):
        cudareduce.sum(CAI(interface(shape=(size,), typestr=typestr)))


def typestr_outcome(typestr: str):
    """What cudareduce makes of a CAI typestr: (sum's result dtype, the
    item size a misaligned pointer is refused for; None for one byte,
    which no pointer misaligns), or the exception's type."""
    try:
        got = cudareduce.sum(CAI(interface(typestr=typestr)))
    except (TypeError, ValueError) as error:
        return type(error)
    itemsize = None
    misaligned = CAI(interface(shape=(5,), typestr=typestr,
                               data=(FAKE_POINTER + 1, False)))
    try:
        cudareduce.sum(misaligned)
    except ValueError as error:     # not device memory, on a GPU
        found = re.search(r"(\d+)-byte item size", str(error))
        itemsize = found and found.group(1)
    except cudareduce.CudaError:    # one byte: on to the device
        pass
    return got.dtype, itemsize


def numpys_typestr_outcome(typestr: str):
    """typestr_outcome as NumPy's reading of the typestr decides it."""
    try:
        dtype = np.dtype(typestr)
    except (TypeError, ValueError):
        return TypeError
    if dtype not in SUPPORTED_DTYPES or (dtype.itemsize > 1
                                         and not dtype.isnative):
        return TypeError
    itemsize = str(dtype.itemsize) if dtype.itemsize > 1 else None
    return result_dtype("sum", dtype), itemsize


# The spellings the extension reads without NumPy (a byte order, a kind,
# an item size: dtype.str's) and their near misses: leading zeros, other
# byte orders and kinds, sizes NumPy reads as another type.
TYPESTR_GRID = [order + kind + size
                for order in "<>|=!" for kind in "biufcV?"
                for size in ("0", "1", "2", "3", "4", "8", "12", "16",
                             "01", "02", "04", "08", "016")]


@pytest.mark.parametrize("typestr", TYPESTR_GRID)
def test_cai_typestr_read_as_numpy_reads_it(typestr):
    assert typestr_outcome(typestr) == numpys_typestr_outcome(typestr)


def test_cai_typestrs_alternating_keep_their_dtypes():
    for typestr in ["<f2", "|b1", "<f8", "|b1", "<f2", "<f", "<i8", "<f2"]:
        assert typestr_outcome(typestr) == numpys_typestr_outcome(typestr)


# --- reduce()'s arguments: positional, as the library passes them, or not ---

def test_reduce_arguments_by_keyword_as_by_position():
    from cudareduce import _cudareduce
    x = np.zeros(0, np.float32)
    by_position = _cudareduce.reduce("sum", x, "fast", None, None, None,
                                     None, None, False, None, False)
    by_keyword = _cudareduce.reduce(op="sum", a=x, method="fast",
                                    threads=None, exact=False)
    assert type(by_position) is type(by_keyword) is np.float32
    assert _cudareduce.reduce("sum", x, "fast", None, None, None, None,
                              None, True, None).shape == (1,)


@pytest.mark.parametrize("args, kwargs, message", [
    (("sum", np.zeros(1)), {}, r"missing required argument 'method'"),
    (("sum",) * 13, {}, r"at most 12 arguments \(13 given\)"),
    (("sum", np.zeros(1), "fast", None), {"a": 1},
     r"given by name \('a'\) and position \(2\)"),
    (("sum", np.zeros(1), "fast", None), {"axes": 0},
     r"'axes' is an invalid keyword argument for reduce\(\)"),
], ids=["too-few", "too-many", "twice", "unknown-keyword"])
def test_reduce_argument_mistakes_worded_as_cpython_words_them(args, kwargs,
                                                               message):
    from cudareduce import _cudareduce
    with pytest.raises(TypeError, match=message):
        _cudareduce.reduce(*args, **kwargs)


class NoTruth:
    def __bool__(self):
        raise ZeroDivisionError("no truth")


@pytest.mark.parametrize("by_keyword", [False, True])
def test_reduce_exact_without_a_truth_raises_its_error(by_keyword):
    from cudareduce import _cudareduce
    args = ["sum", np.zeros(1), "fast", None, None, None, None, None, False,
            None]
    with pytest.raises(ZeroDivisionError, match="no truth"):
        if by_keyword:
            _cudareduce.reduce(*args, exact=NoTruth())
        else:
            _cudareduce.reduce(*args, NoTruth())


# --- the CUDA array interface: zero-size dicts that are fine -----------------

ZERO_SIZE_ACCEPTED = {
    "null-pointer": interface(data=(0, False)),
    "fake-pointer": interface(),
    "high-pointer": interface(data=(2 ** 64 - 256, False)),
    "read-only": interface(data=(FAKE_POINTER, True)),
    "version-0": interface(version=0),
    "version-1": interface(version=1),
    "version-2": interface(version=2),
    "shape-3x0": interface(shape=(3, 0)),
    "shape-0x0x7": interface(shape=(0, 0, 7)),
    "shape-2^40x0": interface(shape=(2 ** 40, 0)),
    "strides-none": interface(strides=None),
    "strides-c": interface(shape=(0, 3), strides=(12, 4)),
    "strides-reversed": interface(shape=(0, 3), strides=(-12, -4)),
    "strides-broadcast": interface(shape=(0, 3), strides=(0, 0)),
    "stream-absent": interface(),
    "stream-none": interface(stream=None),
    "stream-legacy": interface(stream=1),
    "stream-per-thread": interface(stream=2),
    "stream-handle": interface(stream=FAKE_STREAM),
    "mask-none": interface(mask=None),
    "descr": interface(descr=[("", "<f4")]),
    "unknown-key": interface(extra_key="ignored"),
}


@pytest.mark.parametrize("case", ZERO_SIZE_ACCEPTED)
@pytest.mark.parametrize("op", OPS)
def test_cai_zero_size_never_touches_the_pointer(op, case):
    obj = CAI(ZERO_SIZE_ACCEPTED[case])
    assert_identity(op, np.float32, lambda: reduce(op, obj))
    # The caller's stream= is not used either: nothing is launched.
    assert_identity(op, np.float32,
                    lambda: reduce(op, obj, stream=FAKE_STREAM))


# --- the CUDA array interface: malformed dicts --------------------------------

class NotAMask:
    pass


def malformed(size: int):
    """(id, dict, expected exception) for malformed dicts of `size`
    elements (5 or 0) that are refused whatever the size."""
    shape = (size,)
    cases = [
        ("no-shape", interface(shape=DROP), ValueError),
        ("no-typestr", interface(shape=shape, typestr=DROP), ValueError),
        ("no-data", interface(shape=shape, data=DROP), ValueError),
        ("no-version", interface(shape=shape, version=DROP), ValueError),
        ("version-minus-1", interface(shape=shape, version=-1), ValueError),
        ("version-4", interface(shape=shape, version=4), ValueError),
        ("version-99", interface(shape=shape, version=99), ValueError),
        ("shape-negative", interface(shape=(size, -1)), ValueError),
        ("shape-all-negative", interface(shape=(-5, -5)), ValueError),
        ("strides-too-long", interface(shape=shape, strides=(4, 4)),
         ValueError),
        ("strides-too-short", interface(shape=(2, size), strides=(4,)),
         ValueError),
        ("strides-empty", interface(shape=shape, strides=()), ValueError),
        ("mask-object", interface(shape=shape, mask=NotAMask()), ValueError),
        ("mask-tuple", interface(shape=shape, mask=(FAKE_POINTER, False)),
         ValueError),
        ("stream-0", interface(shape=shape, stream=0), ValueError),
        ("shape-int", interface(shape=size), TypeError),
        ("shape-list", interface(shape=[size]), TypeError),
        ("shape-none", interface(shape=None), TypeError),
        ("shape-float", interface(shape=(float(size),)), TypeError),
        ("shape-str", interface(shape=(str(size),)), TypeError),
        ("strides-int", interface(shape=shape, strides=4), TypeError),
        ("strides-list", interface(shape=shape, strides=[4]), TypeError),
        ("strides-float", interface(shape=shape, strides=(4.0,)), TypeError),
        ("data-int", interface(shape=shape, data=FAKE_POINTER), TypeError),
        ("data-none", interface(shape=shape, data=None), TypeError),
        ("data-1-tuple", interface(shape=shape, data=(FAKE_POINTER,)),
         TypeError),
        ("data-3-tuple", interface(shape=shape,
                                   data=(FAKE_POINTER, False, 0)), TypeError),
        ("data-str-pointer", interface(shape=shape,
                                       data=(hex(FAKE_POINTER), False)),
         TypeError),
        ("data-float-pointer", interface(shape=shape, data=(4096.0, False)),
         TypeError),
        ("data-str-flag", interface(shape=shape, data=(FAKE_POINTER, "no")),
         TypeError),
        ("data-none-flag", interface(shape=shape, data=(FAKE_POINTER, None)),
         TypeError),
    ]
    return [pytest.param(d, error, id=f"{name}-size{size}")
            for name, d, error in cases]


# Refused only for a non-zero size (an empty array has no elements to
# read and its pointer is never used).  Strides under which positions share
# memory are a valid view (every position counts, as in NumPy), but not a
# span past the address space.
MALFORMED_NONZERO = [
    pytest.param(d, ValueError, id=name) for name, d in [
        ("shape-overflow-2^32x2^32", interface(shape=(2 ** 32, 2 ** 32))),
        ("shape-overflow-2^62x2^62", interface(shape=(2 ** 62, 2 ** 62))),
        ("shape-overflow-(2^63-1)x2", interface(shape=(2 ** 63 - 1, 2))),
        ("shape-overflow-3x2^62x5", interface(shape=(3, 2 ** 62, 5))),
        ("null-pointer", interface(shape=(5,), data=(0, False))),
        ("misaligned-f4", interface(shape=(5,), data=(FAKE_POINTER + 2,
                                                      False))),
        ("misaligned-f8", interface(shape=(5,), typestr="<f8",
                                    data=(FAKE_POINTER + 4, False))),
        ("misaligned-i2", interface(shape=(5,), typestr="<i2",
                                    data=(FAKE_POINTER + 1, False))),
        ("stride-not-multiple", interface(shape=(5,), strides=(6,))),
        ("stride-half-item", interface(shape=(5,), strides=(2,))),
        ("stride-not-multiple-2d", interface(shape=(2, 3), strides=(12, 3))),
        ("stride-f8-by-4", interface(shape=(5,), typestr="<f8",
                                     strides=(4,))),
        ("span-overflow", interface(shape=(2, 2),
                                    strides=(2 ** 62, 2 ** 62))),
        ("span-overflow-reversed", interface(shape=(2, 2),
                                             strides=(-(2 ** 62), 2 ** 62))),
    ]]


@pytest.mark.parametrize("d, error", [*malformed(5), *malformed(0),
                                      *MALFORMED_NONZERO])
@pytest.mark.parametrize("op", OPS)
def test_cai_malformed_is_refused_before_any_cuda_call(op, d, error):
    with pytest.raises(error):
        reduce(op, CAI(d))


@pytest.mark.parametrize("size", [5, 0])
@pytest.mark.parametrize("version", ["3", 3.0, None, b"3"], ids=repr)
def test_cai_version_not_an_int_is_refused(version, size):
    # Listed under ValueError ("version not an int in 0..3"), though a type
    # error is as fair: either is accepted.
    with pytest.raises((ValueError, TypeError)):
        cudareduce.sum(CAI(interface(shape=(size,), version=version)))


@pytest.mark.parametrize("value", [None, [], "dict", 3], ids=repr)
def test_cai_attribute_not_a_dict_is_refused(value):
    # Not in the spec; any error but a crash or a CudaError is fine.
    with pytest.raises((ValueError, TypeError)):
        cudareduce.sum(CAI(value))


@pytest.mark.no_gpu
def test_cai_well_formed_nonempty_reaches_the_device(device_error):
    # The counterpart of the refusals above: a dict that is not malformed
    # gets as far as CUDA (no device here; test_inputs_gpu sends the same
    # fake pointer to a device, which must refuse it with a ValueError).
    with pytest.raises(cudareduce.CudaError):
        cudareduce.sum(CAI(interface(shape=(5,))))


# --- which protocol is used ---------------------------------------------------

class Raises:
    """An attribute that must not be looked at."""

    def __get__(self, obj, objtype=None):
        raise AssertionError("this protocol must not be used")


class CAIAndDLPack:
    """A zero-size CAI and a DLPack that must not be used."""

    __dlpack__ = Raises()
    __dlpack_device__ = Raises()

    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


class CAIMissingDLPackCPU(DLPackOnly):
    """A CAI attribute that is absent (AttributeError, as PyTorch's CPU
    tensors raise), and a CPU DLPack."""

    __slots__ = ()

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("no CUDA array interface on a CPU tensor")


@pytest.mark.parametrize("op", OPS)
def test_cai_comes_before_dlpack(op):
    obj = CAIAndDLPack(interface(typestr="<i2"))
    assert_identity(op, np.int16, lambda: reduce(op, obj))


@pytest.mark.parametrize("op", OPS)
def test_absent_cai_attribute_falls_through_to_dlpack(op):
    obj = CAIMissingDLPackCPU(np.zeros(0, np.uint16))
    assert_identity(op, np.uint16, lambda: reduce(op, obj))


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_dlpack_cpu_takes_the_host_path(op, dtype):
    obj = DLPackOnly(np.zeros((0, 3), dtype))
    assert obj.__dlpack_device__() == (KDL_CPU, 0)
    assert_identity(op, dtype, lambda: reduce(op, obj))


# kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLROCM, kDLOneAPI, and an
# unknown number.  (kDLCUDAManaged, 13, is memory the device reads as its
# own: it takes the device path with kDLCUDA, below.)
OTHER_DEVICE_TYPES = [3, 4, 7, 8, 10, 14, 99]


@pytest.mark.parametrize("size", [5, 0])
@pytest.mark.parametrize("device_type", OTHER_DEVICE_TYPES)
@pytest.mark.parametrize("op", OPS)
def test_dlpack_other_device_type_is_a_type_error(op, device_type, size):
    obj = DLPackOnly(np.zeros(size, np.float32), device=(device_type, 0))
    with pytest.raises(TypeError):
        reduce(op, obj)


class ProducerCalled(Exception):
    """Raised by RecordingDLPack.__dlpack__: the device path reached it."""


class RecordingDLPack:
    """Claims a CUDA device type; ``__dlpack__`` records its arguments and
    raises ProducerCalled, so that no capsule (and no pointer) is ever
    used."""

    def __init__(self, device_type):
        self.device_type = device_type
        self.calls = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        raise ProducerCalled


@pytest.mark.parametrize("stream, asked", [
    (None, 1),                  # no stream=: the legacy default stream
    (0, 1),                     # DLPack numbers the legacy stream 1, not 0
    (FAKE_STREAM, FAKE_STREAM),
], ids=["no-stream", "stream-0", "stream-handle"])
@pytest.mark.parametrize("device_type", [KDL_CUDA, KDL_CUDA_MANAGED],
                         ids=["kDLCUDA", "kDLCUDAManaged"])
@pytest.mark.parametrize("size", [5, 0])
def test_dlpack_cuda_and_managed_ask_the_producer_for_a_stream(
        device_type, stream, asked, size):
    # The device path: the capsule is asked for with the consumer's stream
    # (DLPack's stream= argument), whatever the size, before any reduction
    # (without a GPU, with no device to make current for the producer).
    obj = RecordingDLPack(device_type)
    with pytest.raises(ProducerCalled):
        cudareduce.sum(obj, stream=stream)
    assert obj.calls == [((), {"stream": asked})], obj.calls


@pytest.mark.parametrize("device_id", [-1, 2 ** 31])
def test_dlpack_cuda_device_id_out_of_range_is_a_value_error(device_id):
    # Refused before the producer is asked (no device to make current).
    obj = RecordingDLPack(KDL_CUDA)
    obj.__dlpack_device__ = lambda: (KDL_CUDA, device_id)
    with pytest.raises(ValueError, match=f"names CUDA device {device_id}"):
        cudareduce.sum(obj)
    assert obj.calls == []


class StreamlessDLPack(DLPackOnly):
    """A producer that takes no stream argument, and whose capsule is on
    another device than its ``__dlpack_device__`` claims."""

    __slots__ = ()

    def __dlpack__(self):
        return self.array.__dlpack__()


@pytest.mark.parametrize("device_type", [KDL_CUDA, KDL_CUDA_MANAGED],
                         ids=["kDLCUDA", "kDLCUDAManaged"])
@pytest.mark.parametrize("op", OPS)
def test_dlpack_capsule_not_on_the_claimed_device_is_a_value_error(
        op, device_type):
    # A TypeError from __dlpack__(stream=...) retries without a stream; the
    # CPU capsule that comes back contradicts __dlpack_device__.
    obj = StreamlessDLPack(np.zeros(5, np.float32), device=(device_type, 0))
    with pytest.raises(ValueError, match="not CUDA"):
        reduce(op, obj)


class DLPackWithoutDevice:
    """__dlpack__ alone is not the protocol: numpy.asarray sees an object."""

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("must not be called without __dlpack_device__")


def test_dlpack_without_dlpack_device_is_not_dlpack():
    with pytest.raises(TypeError) as info:
        cudareduce.sum(DLPackWithoutDevice())
    assert "object" in str(info.value)


# --- random dicts -------------------------------------------------------------

GOOD_TYPESTRS = sorted(CANONICAL_TYPESTRS)
GARBAGE = object()          # stands for "some malformed value" below


def _is_int(value) -> bool:
    return type(value) is int


def _product(values) -> int:
    return math.prod(values) if values else 1


def cai_outcome(d) -> str:
    """What the spec allows for the dict `d`:

    "error"   malformed: ValueError or TypeError;
    "ok"      zero size, well formed: the identity;
    "either"  zero size with something the spec words only for arrays
              that have elements (stride values, alignment, a shape whose
              non-zero entries overflow): the identity or an error;
    "device"  well formed, non-zero size: it reaches CUDA (CudaError
              without a device; with one, the fake pointer is refused
              with a ValueError).
    """
    if any(key not in d for key in ("shape", "typestr", "data", "version")):
        return "error"
    version, shape, typestr, data = (d["version"], d["shape"], d["typestr"],
                                     d["data"])
    if not _is_int(version) or not 0 <= version <= 3:
        return "error"
    if type(shape) is not tuple or not all(map(_is_int, shape)):
        return "error"
    if any(n < 0 for n in shape):
        return "error"
    if type(typestr) is not str or typestr not in CANONICAL_TYPESTRS:
        return "error"
    itemsize = CANONICAL_TYPESTRS[typestr].itemsize
    if (type(data) is not tuple or len(data) != 2 or not _is_int(data[0])
            or type(data[1]) is not bool):
        return "error"
    if d.get("mask") is not None:
        return "error"
    if d.get("stream", None) == 0:
        return "error"
    strides = d.get("strides")
    if strides is not None:
        if type(strides) is not tuple or not all(map(_is_int, strides)):
            return "error"
        if len(strides) != len(shape):
            return "error"
    size = _product(shape)
    pointer = data[0]
    if size == 0:
        if _product([n for n in shape if n]) >= 2 ** 62:
            return "either"
        if pointer % itemsize:
            return "either"
        if strides is not None and any(
                s % itemsize or abs(s) >= 2 ** 40 for s in strides):
            return "either"
        return "ok"
    if size >= 2 ** 63:
        return "error"
    if pointer == 0 or pointer % itemsize:
        return "error"
    if strides is not None:
        if any(s % itemsize for s in strides):
            return "error"
        span = itemsize + sum((n - 1) * abs(s)
                              for n, s in zip(shape, strides) if n > 1)
        if span >= 2 ** 63:
            return "error"
    return "device"


SHAPE_ENTRIES = st.one_of(
    st.integers(0, 6),
    st.sampled_from([-1, -7, 2 ** 31, 2 ** 62, 2 ** 63 - 1, -2 ** 63]))
STRIDES = st.one_of(
    st.integers(-48, 48),
    st.sampled_from([2 ** 40, 2 ** 62, -2 ** 62, 2 ** 63 - 1, -2 ** 63]))
POINTERS = st.one_of(
    st.sampled_from([0, FAKE_POINTER, FAKE_POINTER + 1, FAKE_POINTER + 2,
                     FAKE_POINTER + 4, FAKE_POINTER + 8, 2 ** 63,
                     2 ** 64 - 256]),
    st.integers(0, 2 ** 64 - 1))
TYPESTRS = st.sampled_from(GOOD_TYPESTRS * 3 + REFUSED_TYPESTRS
                           + [None, 4, b"<f4"])
VERSIONS = st.sampled_from([3] * 6 + [2, 2, 1, 0] + [-1, 4, "3", None, 3.0])
STREAMS = st.sampled_from([DROP] * 4 + [None, 1, 2, FAKE_STREAM, 0])
MASKS = st.sampled_from([DROP] * 6 + [None, None, NotAMask()])

# Malformations that refuse a dict of any non-zero size, applied last.
INJECTIONS = ["drop-shape", "drop-typestr", "drop-data", "drop-version",
              "version", "typestr", "negative", "overflow", "strides-length",
              "strides-multiple", "span-overflow", "mask", "null", "misaligned",
              "stream-0", "shape-type", "data-type", "strides-type"]


@st.composite
def cai_dicts(draw):
    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(SHAPE_ENTRIES, min_size=ndim, max_size=ndim))
    zero_size = draw(st.booleans())
    if zero_size:
        if not shape:
            shape = [0]
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    typestr = draw(TYPESTRS)
    itemsize = (CANONICAL_TYPESTRS[typestr].itemsize
                if typestr in CANONICAL_TYPESTRS else None)
    d = {"shape": tuple(shape), "typestr": typestr,
         "data": (draw(POINTERS), draw(st.booleans())),
         "version": draw(VERSIONS)}
    strides = draw(st.sampled_from(["absent", "none", "c", "random"]))
    if strides == "none":
        d["strides"] = None
    elif strides == "c" and itemsize is not None:
        d["strides"] = tuple(int(s) for s in np.cumprod(
            [itemsize] + [max(n, 1) for n in shape[:0:-1]])[::-1]) \
            if shape else ()
    elif strides == "random":
        d["strides"] = tuple(draw(st.lists(STRIDES, min_size=0,
                                           max_size=5)))
    for key, values in (("stream", STREAMS), ("mask", MASKS)):
        value = draw(values)
        if value is not DROP:
            d[key] = value
    # Structural damage, now and then, whatever the size.
    damage = draw(st.sampled_from([None] * 12 + INJECTIONS))
    if not zero_size:
        damage = damage or draw(st.sampled_from(INJECTIONS))
    if damage is not None:
        inject(d, damage, itemsize, draw)
    return d


def inject(d, damage, itemsize, draw):
    ndim = len(d["shape"]) if type(d["shape"]) is tuple else 1
    if damage.startswith("drop-"):
        d.pop(damage[5:], None)
    elif damage == "version":
        d["version"] = draw(st.sampled_from([-1, 4, 99, "3", None]))
    elif damage == "typestr":
        d["typestr"] = draw(st.sampled_from(REFUSED_TYPESTRS))
    elif damage == "negative":
        d["shape"] = tuple(d["shape"]) + (-1,)
        d.pop("strides", None)
    elif damage == "overflow":
        d["shape"] = (2 ** 62, 2 ** 62) + tuple(
            n for n in d["shape"] if n != 0)
        d.pop("strides", None)
    elif damage == "strides-length":
        d["strides"] = (itemsize or 4,) * (ndim + 1)
    elif damage == "strides-multiple" and itemsize and itemsize > 1:
        d["strides"] = (itemsize + 1,) * ndim if ndim else (itemsize + 1,)
        if not ndim:
            d["shape"] = (3,)
    elif damage == "span-overflow" and itemsize:
        d["shape"], d["strides"] = (2, 2), (2 ** 62, 2 ** 62)
    elif damage == "mask":
        d["mask"] = NotAMask()
    elif damage == "misaligned" and itemsize and itemsize > 1:
        d["data"] = (FAKE_POINTER + 1, False)
    elif damage == "stream-0":
        d["stream"] = 0
    elif damage == "shape-type":
        d["shape"] = draw(st.sampled_from([None, 5, [5], (5.0,), ("5",)]))
    elif damage == "data-type":
        d["data"] = draw(st.sampled_from([
            None, FAKE_POINTER, (FAKE_POINTER,), (FAKE_POINTER, False, 0),
            (str(FAKE_POINTER), False), (FAKE_POINTER, None)]))
    elif damage == "strides-type":
        d["strides"] = draw(st.sampled_from([4, [4], (4.0,), ("4",)]))
    else:
        # null pointer, and the fallback where the chosen damage does not
        # apply (one-byte items cannot be misaligned, for one)
        d["data"] = (0, False)


@settings(max_examples=600, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(d=cai_dicts(), op=st.sampled_from(OPS))
def test_random_cai_dicts_never_escape_value_or_type_error(device_error, d,
                                                          op):
    expected = cai_outcome(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = reduce(op, CAI(d))
        except (ValueError, TypeError) as exc:
            if expected == "ok":
                # Only min/max of an empty array may raise, and only that.
                assert op in ("min", "max") and isinstance(
                    exc, ValueError) and "zero-size array" in str(exc), (
                    f"{type(exc).__name__}: {exc} for a well-formed "
                    f"empty {d!r}")
            return
        except cudareduce.CudaError as exc:
            assert expected == "device" and device_error is not None, (
                f"CudaError {exc} for {expected!r} dict {d!r}: malformed "
                "dicts must be refused before any CUDA call")
            return
    assert expected in ("ok", "either"), (
        f"returned {got!r} for a {expected!r} dict {d!r}")
    assert op in ("sum", "mean"), f"{op} of an empty array returned {got!r}"
    dtype = CANONICAL_TYPESTRS[d["typestr"]]
    want = result_dtype(op, dtype)
    assert type(got) is want.type, (got, want, d)
    if op == "sum":
        assert got == 0, (got, d)
    else:
        assert np.isnan(got), (got, d)
        assert any(issubclass(w.category, RuntimeWarning)
                   and "Mean of empty slice" in str(w.message)
                   for w in caught), (caught, d)


def test_the_oracle_of_the_random_dicts():
    # cai_outcome() decides what the property test allows: check it on
    # dicts whose verdict the spec states.
    assert cai_outcome(interface()) == "ok"
    assert cai_outcome(interface(shape=(5,))) == "device"
    assert cai_outcome(interface(shape=(5,), strides=(4,))) == "device"
    assert cai_outcome(interface(shape=(3, 2), strides=(4, 12))) == "device"
    assert cai_outcome(interface(shape=(4,), strides=(0,))) == "device"
    for case in ZERO_SIZE_ACCEPTED.values():
        if "descr" not in case and "extra_key" not in case:
            assert cai_outcome(case) in ("ok", "either"), case
    for param in [*malformed(5), *malformed(0), *MALFORMED_NONZERO]:
        d = param.values[0]
        if d.get("typestr") not in REFUSED_TYPESTRS:
            assert cai_outcome(d) == "error", d
    for typestr in REFUSED_TYPESTRS:
        assert cai_outcome(interface(typestr=typestr)) == "error"
    assert cai_outcome(interface(shape=(0,), data=(FAKE_POINTER + 1,
                                                   False))) == "either"
    assert cai_outcome(interface(shape=(2 ** 62, 2 ** 62, 0))) == "either"
