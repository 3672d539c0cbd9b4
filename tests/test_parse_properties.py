"""Property tests of the input parsers (issue 8, reliability): random NumPy
layouts and damaged interface dicts.

NumPy arrays
    Every supported dtype (and its byte-swapped twin), any shape up to 3-D
    with up to 6 entries per dimension, taken from a base buffer by
    ``as_strided`` with arbitrary element strides (backwards, broadcast,
    overlapping), misaligned bases, then a transpose or a slice now and
    then, read-only or not.  Allowed outcomes: NumPy's answer (on an empty
    array: sum 0 and mean NaN with NumPy's RuntimeWarning, of NumPy's
    result dtype; min/max NumPy's ValueError), or, only for a non-empty
    array on a machine without a device, a CudaError.  With a device, the
    non-empty ones are reduced and compared with NumPy (integer-valued data,
    so that every sum is exact).

Interface dicts
    A well-formed ``__cuda_array_interface__`` dict, then one damage drawn
    from a table that says the exact exception type and message; or no
    damage: zero-size dicts give the identity, non-empty ones reach CUDA
    (a CudaError without a device; with one, the fake pointer is refused by
    CUDA's pointer query as not device memory, or, half of the time, the
    dict points into real device memory holding integer values, and the
    result must be NumPy's on the same layout).

``test_inputs_offline.py`` holds a broader random-dict test that allows any
ValueError/TypeError; this one pins each damage to its message.  Both run
in well under a second per hundred examples.
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cudareduce
from support.api_contract import block_sizes
from support.exact_data import integer_values, numpy_answer, same

OPS = ("sum", "mean", "min", "max")
METHODS = tuple(cudareduce.methods())
THREADS = (64, 128, 256, 512, 1024)
SUPPORTED = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.float16, np.float32, np.float64))
# Never dereferenced; away from the 0x7f... range where CUDA and the host
# heap map their memory (on a GPU machine, CUDA's pointer query sees it).
FAKE_POINTER = 0x3C3C_0000_0000

PROPERTY_SETTINGS = settings(
    max_examples=400, deadline=None,
    suppress_health_check=[HealthCheck.too_slow,
                           HealthCheck.function_scoped_fixture])


# --- random NumPy layouts -----------------------------------------------------

@st.composite
def host_arrays(draw):
    dtype = draw(st.sampled_from(SUPPORTED))
    if dtype.itemsize > 1 and draw(st.integers(0, 4)) == 0:
        dtype = dtype.newbyteorder()            # a converted copy
    item = dtype.itemsize
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    base_len = 400
    # A base of base_len items, misaligned by `skew` bytes now and then.
    skew = draw(st.sampled_from([0] * 4 + list(range(1, item))))
    raw = np.zeros(base_len * item + 16, np.uint8)
    base = raw[skew:skew + base_len * item].view(dtype)
    base[...] = integer_values(rng, base_len, dtype)

    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim,
                                max_size=ndim)))
    steps = tuple(draw(st.lists(st.integers(-3, 3), min_size=ndim,
                                max_size=ndim)))
    # The first element's index, so that every element is inside the base.
    low = sum((n - 1) * s for n, s in zip(shape, steps) if s < 0 and n)
    high = sum((n - 1) * s for n, s in zip(shape, steps) if s > 0 and n)
    start = draw(st.integers(-low, base_len - 1 - high))
    a = np.lib.stride_tricks.as_strided(
        base[start:], shape=shape, strides=tuple(s * item for s in steps),
        writeable=False)
    view = draw(st.sampled_from(["none", "none", "transpose", "slice",
                                 "reverse"]))
    if view == "transpose" and a.ndim > 1:
        a = a.T
    elif view == "slice" and a.ndim:
        a = a[tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2])))
                    for _ in range(a.ndim))]
    elif view == "reverse" and a.ndim:
        a = a[::-1]
    if draw(st.booleans()):
        a = a.copy() if draw(st.booleans()) else np.asfortranarray(a)
    return a


@PROPERTY_SETTINGS
@given(a=host_arrays(), op=st.sampled_from(OPS),
       method=st.sampled_from(METHODS), threads=st.sampled_from(THREADS))
def test_random_numpy_layouts(device_error, a, op, method, threads):
    call = lambda: getattr(cudareduce, op)(a, method,  # noqa: E731
                                           threads=threads)
    where = (op, method, threads, a.dtype, a.shape, a.strides)
    empty_error = a.size == 0 and op in ("min", "max")
    if threads not in block_sizes(op, a.dtype, method) and not empty_error:
        with pytest.raises(ValueError, match="cudareduce.block_sizes"):
            call()
        return
    if a.size == 0:
        if empty_error:
            with pytest.raises(ValueError, match="zero-size array"):
                call()
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = call()
        want = numpy_answer(op, a)
        assert type(got) is type(want), where
        if op == "sum":
            assert got == 0, where
        else:
            assert np.isnan(got), where
            assert any("Mean of empty slice" in str(w.message)
                       for w in caught), where
        return
    if device_error is not None:
        with pytest.raises(cudareduce.CudaError):
            call()
        return
    got = call()
    want = numpy_answer(op, a)
    assert same(op, got, want), (where, got, want)


# --- damaged interface dicts --------------------------------------------------

TYPESTRS = {d.str: d for d in SUPPORTED}

# name -> (change to the dict, exception type, message).  A change is a
# function of (dict, itemsize) returning the damaged dict.
DAMAGES = {
    "drop-shape": (lambda d, i: _drop(d, "shape"), ValueError,
                   r"has no 'shape' key"),
    "drop-typestr": (lambda d, i: _drop(d, "typestr"), ValueError,
                     r"has no 'typestr' key"),
    "drop-data": (lambda d, i: _drop(d, "data"), ValueError,
                  r"has no 'data' key"),
    "drop-version": (lambda d, i: _drop(d, "version"), ValueError,
                     r"has no 'version' key"),
    "version-4": (lambda d, i: {**d, "version": 4}, ValueError,
                  r"version 4 is not supported"),
    "version-negative": (lambda d, i: {**d, "version": -2}, ValueError,
                         r"version -2 is not supported"),
    "version-str": (lambda d, i: {**d, "version": "3"}, TypeError,
                    r"version\b.*\bstr\b"),
    "typestr-bad": (lambda d, i: {**d, "typestr": "<f3"}, TypeError,
                    r"typestr '<f3' is not a dtype"),
    "typestr-unsupported": (lambda d, i: {**d, "typestr": "<c32"},
                            TypeError, r"does not support dtype complex256"),
    "typestr-swapped": (lambda d, i: {**d, "typestr": _swapped(d)},
                        TypeError, r"non-native byte order"),
    "shape-negative": (lambda d, i: _shape(d, d["shape"] + (-1,)),
                       ValueError, r"shape entries must be >= 0"),
    "shape-list": (lambda d, i: {**d, "shape": list(d["shape"])}, TypeError,
                   r"shape must be a tuple of ints, not list"),
    "shape-elements-overflow": (lambda d, i: _shape(d, (2 ** 62, 2 ** 62)),
                                ValueError,
                                r"the number of elements overflows"),
    "shape-too-many-elements": (lambda d, i: _shape(d, (2 ** 62 + 1,)),
                                ValueError,
                                r"the array's byte size overflows"),
    "shape-too-many-dims": (lambda d, i: _shape(d, (1,) * 65), ValueError,
                            r"shape has 65 dimensions; at most 64"),
    "strides-length": (lambda d, i: {**d, "strides": (i,) * (
        len(d["shape"]) + 1)}, ValueError, r"strides has \d+ entries for "
        r"\d+ dimensions"),
    "strides-multiple": (lambda d, i: {**d, "shape": (3, 2),
                                       "strides": (2 * i + 1, i)},
                         ValueError, r"multiples of the item size"),
    "strides-span-overflows": (lambda d, i: {**d, "shape": (2, 2),
                                             "strides": (2 ** 62, 2 ** 62)},
                               ValueError, r"strides overflow"),
    "strides-overflow": (lambda d, i: {**d, "shape": (3,),
                                       "strides": (-(2 ** 62) // i * i,)},
                         ValueError, r"strides overflow"),
    "mask": (lambda d, i: {**d, "mask": (FAKE_POINTER, False)}, ValueError,
             r"masked arrays are not supported"),
    "null": (lambda d, i: {**d, "data": (0, False)}, ValueError,
             r"null data pointer for \d+ elements"),
    "misaligned": (lambda d, i: {**d, "data": (FAKE_POINTER + i // 2,
                                               False)},
                   ValueError, r"not aligned to the \d-byte item size"),
    "data-list": (lambda d, i: {**d, "data": list(d["data"])}, TypeError,
                  r"data must be a tuple \(pointer: int, read_only: bool\)"),
    "pointer-negative": (lambda d, i: {**d, "data": (-4096, False)},
                         ValueError, r"is not a pointer"),
    "stream-0": (lambda d, i: {**d, "stream": 0}, ValueError,
                 r"0 is disallowed by the interface"),
    "stream-bool": (lambda d, i: {**d, "stream": True}, TypeError,
                    r"stream\b.*\bbool\b"),
}
# Damages that a one-byte item cannot have.
NEEDS_WIDE_ITEM = {"typestr-swapped", "misaligned", "strides-multiple"}
# Damages that only matter for an array with elements (an empty one never
# touches its pointer).
NEEDS_ELEMENTS = {"null", "misaligned"}


def _drop(d, key):
    return {k: v for k, v in d.items() if k != key}


def _shape(d, shape):
    return {k: v for k, v in {**d, "shape": shape}.items() if k != "strides"}


def _swapped(d):
    return np.dtype(d["typestr"]).newbyteorder().str


class CAI:
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface

    def __repr__(self):
        return f"CAI({self.__cuda_array_interface__!r})"


@st.composite
def cai_dicts(draw, empty: bool):
    typestr = draw(st.sampled_from(sorted(TYPESTRS)))
    item = TYPESTRS[typestr].itemsize
    ndim = draw(st.integers(1 if empty else 0, 3))
    shape = list(draw(st.lists(st.integers(1, 5), min_size=ndim,
                               max_size=ndim)))
    if empty:
        shape[draw(st.integers(0, ndim - 1))] = 0
    d = {"shape": tuple(shape), "typestr": typestr,
         "data": (FAKE_POINTER, draw(st.booleans())),
         "version": draw(st.integers(0, 3))}
    layout = draw(st.sampled_from(["absent", "none", "c", "reversed",
                                   "transposed"]))
    c_strides = [item] * ndim
    for k in range(ndim - 2, -1, -1):
        c_strides[k] = c_strides[k + 1] * max(shape[k + 1], 1)
    if layout == "none":
        d["strides"] = None
    elif layout == "c":
        d["strides"] = tuple(c_strides)
    elif layout == "reversed":
        # Backwards: supported (the layout is reversed), with the pointer
        # on the element at index 0, the highest address.
        d["strides"] = tuple(-s for s in c_strides)
    elif layout == "transposed":
        d["shape"] = tuple(reversed(shape))
        d["strides"] = tuple(reversed(c_strides))
    stream = draw(st.sampled_from(["absent", None, 1, 2, 0x5A5A_0000_1230]))
    if stream != "absent":
        d["stream"] = stream
    if draw(st.booleans()):
        d["mask"] = None
    return d, item


def backed_by_device_memory(d, seed):
    """`d` pointed into a CuPy allocation of its elements, integer values,
    and the NumPy view of the same layout over a host copy; plus the
    allocation, to keep alive while `d` is used."""
    cupy = pytest.importorskip("cupy")
    dtype = TYPESTRS[d["typestr"]]
    n = math.prod(d["shape"])
    host = integer_values(np.random.default_rng(seed), n, dtype)
    device = cupy.asarray(host)
    cupy.cuda.runtime.deviceSynchronize()
    strides = d.get("strides")
    if strides is None:
        strides = np.empty(d["shape"], dtype).strides
    # The element at index 0: the highest address of a reversed layout.
    first = sum((k - 1) * -s for k, s in zip(d["shape"], strides) if s < 0)
    view = np.lib.stride_tricks.as_strided(
        host.view(np.uint8)[first:].view(dtype), shape=d["shape"],
        strides=strides, writeable=False)
    return {**d, "data": (device.data.ptr + first, d["data"][1])}, view, \
        device


@PROPERTY_SETTINGS
@given(case=st.booleans().flatmap(cai_dicts),
       damage=st.sampled_from([None] + sorted(DAMAGES)),
       op=st.sampled_from(OPS), backed=st.booleans(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_damaged_cai_dicts_name_their_damage(device_error, case, damage, op,
                                              backed, seed):
    d, item = case
    n = math.prod(d["shape"])
    if damage in NEEDS_WIDE_ITEM:
        assume(item > 1)
    if damage in NEEDS_ELEMENTS:
        assume(n > 0)
    if device_error is None and damage is None and n > 0:
        # This dict reaches CUDA: no fake stream handle there (CUDA would
        # dereference it); the per-thread default stream instead.
        stream = d.get("stream")
        d = {**d, "stream": 2} if stream is not None and stream > 2 else d
    if damage is not None:
        change, error, message = DAMAGES[damage]
        d = change(d, item)
    fn = getattr(cudareduce, op)
    if damage is not None:
        with pytest.raises(Exception) as info:
            fn(CAI(d))
        assert type(info.value) is error, (damage, d, info.value)
        assert re.search(message, str(info.value)), (damage, d, info.value)
        return
    if n > 0 and device_error is None and backed:
        d, view, keep = backed_by_device_memory(d, seed)
        got = fn(CAI(d))
        want = numpy_answer(op, view)
        assert same(op, got, want), (d, got, want)
        del keep
        return
    if n > 0:
        # Well formed: it reaches CUDA, which is the first to look at the
        # (fake) pointer.
        with pytest.raises((cudareduce.CudaError, ValueError)) as info:
            fn(CAI(d))
        if device_error is not None:
            assert type(info.value) is cudareduce.CudaError, (d, info.value)
        else:
            assert type(info.value) is ValueError, (d, info.value)
            assert re.search(r"not (CUDA|device) memory", str(info.value))
        return
    if op in ("min", "max"):
        with pytest.raises(ValueError, match="zero-size array"):
            fn(CAI(d))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = fn(CAI(d))
    dtype = TYPESTRS[d["typestr"]]
    want = (np.sum if op == "sum" else np.mean)(np.zeros(1, dtype)).dtype
    assert type(got) is want.type, (d, got)
    assert got == 0 if op == "sum" else np.isnan(got), (d, got)
