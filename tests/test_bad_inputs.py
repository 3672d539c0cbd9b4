"""A catalogue of malformed and unsupported inputs (issue 8, reliability).

Each entry names one bad input, the exact exception type it must raise (not
a subclass: a CudaError is a RuntimeError, but not the other way round) and
a fragment of the message that tells the user what is wrong or what to do
(a regular expression searched in ``str(exception)``).

Where the entries run
    Everything in ``CATALOGUE`` is refused before any CUDA call, so it runs
    on any machine: non-empty inputs carry a fake device pointer that is
    never dereferenced, and a check that happened after the first CUDA call
    would show up here, without a GPU, as a CudaError instead of the
    expected error.  ``ISOLATED`` entries build DLPack capsules by hand with
    ctypes (``dlpack_capsules.py``); a wrong structure layout there would
    make the library read garbage, so each runs in its own interpreter and
    a crash fails that entry, not the run.  ``GPU_ISOLATED`` entries need a
    device (a host pointer is only told apart from a device pointer by
    asking CUDA) and run in a subprocess as well.

Not refused
    Negative strides (views that run backwards) are supported: the layout
    is reversed (``crpy_plan_layout``), so they are checked as accepted, and
    only an extent that overflows is refused.

Known library bugs are marked ``xfail(strict=True)`` with the reason; the
patch is in the issue 8 report.  Once it is applied the test passes
(XPASS), which strict mode reports as a failure: remove the mark then.

See ``test_inputs_offline.py`` for the broader parameter sweeps of the same
parsers (every typestr, every dtype= pair); this file is the one-per-case
list with the messages.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import cudareduce

TESTS_DIR = Path(__file__).resolve().parent

# 2^16-aligned, so aligned for every item size; never dereferenced.  Away
# from the 0x7f... range where CUDA and the host heap map their memory, so
# that on a GPU machine it is no allocation of this process either.
FAKE_POINTER = 0x3C3C_0000_0000

# Message fragments.  The dtype TypeError ends with the list of supported
# dtypes: it says what is accepted.
SUPPORTED_LIST = r"supported dtypes: bool, int8, .*float64"
METHOD_LIST = r"valid methods: interleaved_divergent, .*fast, cub"
THREADS_RULE = r"threads must be a power of two from 64 to 1024, got "
STREAM_TYPE = (r"stream must be None, an int handle or a CUDA stream object "
               r"\(CuPy, PyTorch, __cuda_stream__\), not ")

DROP = object()     # an interface key left out


class CAI:
    """The smallest CUDA-array-interface object: the dict, as given."""

    def __init__(self, interface):
        self.__cuda_array_interface__ = interface

    def __repr__(self):
        return f"CAI({self.__cuda_array_interface__!r})"


def cai(**changes) -> CAI:
    """A well-formed interface of 5 float32 at a fake pointer, changed:
    a key given as DROP is left out."""
    d = {"shape": (5,), "typestr": "<f4", "data": (FAKE_POINTER, False),
         "version": 3}
    d.update(changes)
    return CAI({k: v for k, v in d.items() if v is not DROP})


class RaisingCAI:
    """A __cuda_array_interface__ property that raises (as PyTorch's does
    for a tensor that requires grad): the producer's error is the user's."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't export a tensor that requires grad; "
                           "use tensor.detach()")


def torch_like(**changes):
    """An object cudareduce takes for a torch.Tensor (a class named Tensor,
    of module torch) and reads from its attributes: 5 float32 on a CUDA
    device at a fake pointer, changed (``data_ptr`` may be an exception to
    raise).  Its ``__cuda_array_interface__`` raises LookupError("asked the
    interface"), so a case that falls back to the interface says so."""
    facts = {"is_cuda": True, "requires_grad": False,
             "layout": "torch.strided", "dtype": "torch.float32",
             "shape": (5,), "contiguous": True, "stride": (1,),
             "data_ptr": FAKE_POINTER}
    facts.update(changes)

    class Tensor:
        __module__ = "torch"
        is_cuda = facts["is_cuda"]
        requires_grad = facts["requires_grad"]
        layout = facts["layout"]
        dtype = facts["dtype"]
        shape = facts["shape"]

        def is_contiguous(self):
            return facts["contiguous"]

        def stride(self):
            return facts["stride"]

        def data_ptr(self):
            if isinstance(facts["data_ptr"], Exception):
                raise facts["data_ptr"]
            return facts["data_ptr"]

        def get_device(self):
            return 0

        @property
        def __cuda_array_interface__(self):
            raise LookupError("asked the interface")

    return Tensor()


class Exporter:
    """A DLPack producer: `capsule()` makes what __dlpack__ returns,
    `device` is what __dlpack_device__ says."""

    def __init__(self, capsule: Callable[[], Any], device):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, *args, **kwargs):
        return self.capsule()

    def __dlpack_device__(self):
        return self.device


def used_capsule():
    """A NumPy DLPack capsule that a consumer has already taken (NumPy
    renames it "used_dltensor")."""
    capsule = np.arange(3.0).__dlpack__()
    np.from_dlpack(Exporter(lambda: capsule, (1, 0)))
    return capsule


class StreamObject:
    """A stream object whose handle is not an int."""

    ptr = "0x1234"


class NegativeCudaStream:
    """__cuda_stream__ protocol returning a negative handle."""

    def __cuda_stream__(self):
        return (0, -3)


def nonempty(dtype=np.float32):
    return np.ones(5, dtype)


OPS = ("sum", "mean", "min", "max")
SUM_MEAN = ("sum", "mean")


@dataclass
class Bad:
    """One bad input: `call(f)` passes it to `f` (cudareduce.sum, mean, min
    or max, each of `ops` in turn)."""

    id: str
    call: Callable[[Callable], Any]
    error: type
    match: str
    ops: tuple = OPS
    marks: tuple = ()

    def params(self):
        return [pytest.param(self, op, id=f"{self.id}-{op}", marks=self.marks)
                for op in self.ops]


CATALOGUE = [
    # --- a torch.Tensor read from its attributes (csrc/cuda_array_interface.c)
    Bad("torch-misaligned", lambda f: f(torch_like(data_ptr=FAKE_POINTER + 2)),
        ValueError, r"torch.Tensor: data pointer .* is not aligned to the "
        r"4-byte item size"),
    Bad("torch-shape-not-ints", lambda f: f(torch_like(shape=(5.0,))),
        TypeError, r"torch.Tensor shape must be ints, not float"),
    Bad("torch-strides-not-matching",
        lambda f: f(torch_like(shape=(5, 1), contiguous=False, stride=(1,))),
        ValueError, r"stride\(\) does not match its shape"),
    Bad("torch-data-ptr-raises",
        lambda f: f(torch_like(data_ptr=RuntimeError("no storage"))),
        RuntimeError, r"no storage"),
    # What PyTorch's interface refuses goes to it, for PyTorch's error.
    Bad("torch-requires-grad-asks-the-interface",
        lambda f: f(torch_like(requires_grad=True)), LookupError,
        r"asked the interface"),
    Bad("torch-float8-asks-the-interface",
        lambda f: f(torch_like(dtype="torch.float8_e4m3fn")), LookupError,
        r"asked the interface"),
    Bad("torch-sparse-asks-the-interface",
        lambda f: f(torch_like(layout="torch.sparse_coo")), LookupError,
        r"asked the interface"),
    # --- dtypes NumPy arrays (and array-likes) cannot be reduced in -------
    Bad("object-array", lambda f: f(np.array([1, "a", None], object)),
        TypeError, r"does not support dtype object; " + SUPPORTED_LIST),
    Bad("object-array-empty", lambda f: f(np.zeros(0, object)),
        TypeError, r"does not support dtype object"),
    Bad("none", lambda f: f(None), TypeError, r"does not support dtype object"),
    Bad("string", lambda f: f("abc"), TypeError,
        r"does not support dtype <U3; " + SUPPORTED_LIST),
    Bad("list-of-mixed-str", lambda f: f([1, "a"]), TypeError,
        r"does not support dtype <U\d+"),
    Bad("bytes-array", lambda f: f(np.zeros(3, "S3")), TypeError,
        r"does not support dtype \|S3"),
    Bad("structured", lambda f: f(np.zeros(3, [("x", "<i4"), ("y", "<f4")])),
        TypeError, r"does not support dtype \[\('x', '<i4'\), \('y', '<f4'\)\]"),
    Bad("void", lambda f: f(np.zeros(3, "V4")), TypeError,
        r"does not support dtype \|V4"),
    Bad("clongdouble", lambda f: f(np.ones(3, np.clongdouble)), TypeError,
        r"does not support dtype complex256; " + SUPPORTED_LIST),
    Bad("datetime64", lambda f: f(np.zeros(3, "datetime64[s]")), TypeError,
        r"does not support dtype datetime64\[s\]"),
    Bad("timedelta64", lambda f: f(np.zeros(3, "m8[ns]")),
        TypeError, r"does not support dtype timedelta64\[ns\]"),
    Bad("ragged-list", lambda f: f([[1], [1, 2]]), ValueError,
        r"inhomogeneous"),
    Bad("broadcast-view-of-2^62+1-int8",
        lambda f: f(as_strided(np.zeros(1, np.int8), shape=(2 ** 62 + 1,),
                             strides=(0,))),
        ValueError, r"2\^62", ops=("sum",)),

    # --- method and threads ----------------------------------------------
    Bad("unknown-method", lambda f: f(nonempty(), "fastest"), ValueError,
        r"unknown method 'fastest'; " + METHOD_LIST),
    Bad("method-wrong-case", lambda f: f(nonempty(), "FAST"), ValueError,
        r"unknown method 'FAST'; " + METHOD_LIST),
    Bad("method-none", lambda f: f(nonempty(), None), TypeError,
        r"method must be a str \(a name from cudareduce.methods\(\)\), "
        r"not NoneType"),
    Bad("axis-where-the-method-goes", lambda f: f(nonempty(), 0), TypeError,
        r"not int: the second argument of cudareduce's functions is the "
        r"method, not NumPy's axis"),
    # (A partial axis is a reduction along it since issue 43:
    # test_axis.py and test_axis_gpu.py.)
    Bad("axis-out-of-range", lambda f: f(nonempty(), axis=1),
        np.exceptions.AxisError,
        r"axis 1 is out of bounds for array of dimension 1"),
    Bad("axis-repeated", lambda f: f(np.ones((2, 3), np.float32),
                                     axis=(1, -1)),
        ValueError, r"duplicate value in 'axis'"),
    Bad("axis-float", lambda f: f(nonempty(), axis=0.0), TypeError,
        r"'float' object cannot be interpreted as an integer"),
    Bad("threads-0", lambda f: f(nonempty(), threads=0), ValueError,
        THREADS_RULE + "0"),
    Bad("threads-3", lambda f: f(nonempty(), threads=3), ValueError,
        THREADS_RULE + "3"),
    Bad("threads-2048", lambda f: f(nonempty(), threads=2048), ValueError,
        THREADS_RULE + "2048"),
    Bad("threads-minus-1", lambda f: f(nonempty(), threads=-1), ValueError,
        THREADS_RULE + "-1"),
    Bad("threads-2^70", lambda f: f(nonempty(), threads=2 ** 70), ValueError,
        THREADS_RULE + str(2 ** 70)),
    Bad("threads-True", lambda f: f(nonempty(), threads=True), TypeError,
        r"threads must be None or an int, not bool"),
    Bad("threads-256.0", lambda f: f(nonempty(), threads=256.0), TypeError,
        r"threads must be None or an int, not float"),
    Bad("threads-str", lambda f: f(nonempty(), threads="256"), TypeError,
        r"threads must be None or an int, not str"),

    # --- dtype= -----------------------------------------------------------
    Bad("dtype-clongdouble", lambda f: f(nonempty(), dtype=np.clongdouble),
        TypeError, r"does not support dtype complex256; " + SUPPORTED_LIST,
        ops=SUM_MEAN),
    Bad("dtype-not-a-dtype", lambda f: f(nonempty(), dtype="not a dtype"),
        TypeError, r"dtype must be a NumPy dtype, not 'not a dtype'",
        ops=SUM_MEAN),
    Bad("dtype-float-number", lambda f: f(nonempty(), dtype=3.5), TypeError,
        r"dtype must be a NumPy dtype, not 3\.5", ops=SUM_MEAN),
    Bad("max-takes-no-dtype",
        lambda f: f(nonempty(), dtype=np.float64),
        TypeError, r"unexpected keyword argument 'dtype'",
        ops=("min", "max")),

    # --- stream= ----------------------------------------------------------
    Bad("stream-str", lambda f: f(nonempty(), stream="default"), TypeError,
        STREAM_TYPE + "str"),
    Bad("stream-bool", lambda f: f(nonempty(), stream=True), TypeError,
        STREAM_TYPE + "bool"),
    Bad("stream-object-ptr-not-int", lambda f: f(nonempty(),
                                               stream=StreamObject()),
        TypeError, STREAM_TYPE + "StreamObject"),
    Bad("stream-negative", lambda f: f(nonempty(), stream=-1), ValueError,
        r"stream handle must be an int >= 0"),
    Bad("stream-2^64", lambda f: f(nonempty(), stream=2 ** 64), ValueError,
        r"stream handle must be an int >= 0"),
    Bad("stream-protocol-negative",
        lambda f: f(nonempty(), stream=NegativeCudaStream()), ValueError,
        r"stream handle must be an int >= 0"),

    # --- __cuda_array_interface__: structure ------------------------------
    Bad("cai-not-a-dict", lambda f: f(CAI([FAKE_POINTER, 5])), TypeError,
        r"__cuda_array_interface__ must be a dict, not list"),
    Bad("cai-property-raises", lambda f: f(RaisingCAI()), RuntimeError,
        r"requires grad; use tensor\.detach\(\)"),
    Bad("cai-no-shape", lambda f: f(cai(shape=DROP)), ValueError,
        r"__cuda_array_interface__ has no 'shape' key"),
    Bad("cai-no-typestr", lambda f: f(cai(typestr=DROP)), ValueError,
        r"has no 'typestr' key"),
    Bad("cai-no-data", lambda f: f(cai(data=DROP)), ValueError,
        r"has no 'data' key"),
    Bad("cai-no-version", lambda f: f(cai(version=DROP)), ValueError,
        r"has no 'version' key"),
    Bad("cai-version-4", lambda f: f(cai(version=4)), ValueError,
        r"version 4 is not supported \(cudareduce reads versions 0 to 3\)"),
    Bad("cai-version-minus-1", lambda f: f(cai(version=-1)), ValueError,
        r"version -1 is not supported \(cudareduce reads versions 0 to 3\)"),
    Bad("cai-version-str", lambda f: f(cai(version="3")), TypeError,
        r"version\b.*\bstr\b"),

    # --- __cuda_array_interface__: shape ----------------------------------
    Bad("cai-shape-negative", lambda f: f(cai(shape=(5, -1))), ValueError,
        r"shape entries must be >= 0"),
    Bad("cai-shape-negative-empty", lambda f: f(cai(shape=(0, -1))),
        ValueError, r"shape entries must be >= 0"),
    Bad("cai-shape-entry-2^64", lambda f: f(cai(shape=(2 ** 64,))), ValueError,
        r"shape entry 18446744073709551616 does not fit in 64 bits"),
    Bad("cai-shape-list", lambda f: f(cai(shape=[5])), TypeError,
        r"shape must be a tuple of ints, not list"),
    Bad("cai-shape-float", lambda f: f(cai(shape=(5.0,))), TypeError,
        r"shape\b.*\bfloat\b"),
    Bad("cai-65-dimensions", lambda f: f(cai(shape=(1,) * 65)), ValueError,
        r"shape has 65 dimensions; at most 64"),
    Bad("cai-element-count-overflows", lambda f: f(cai(shape=(2 ** 40,
                                                           2 ** 40))),
        ValueError, r"the number of elements overflows"),
    Bad("cai-byte-size-overflows-f8", lambda f: f(cai(shape=(2 ** 61,),
                                                    typestr="<f8")),
        ValueError, r"the array's byte size overflows"),
    Bad("cai-more-than-2^62-int8", lambda f: f(cai(shape=(2 ** 62 + 1,),
                                                 typestr="|i1")),
        ValueError, r"the array's byte size overflows"),

    # --- __cuda_array_interface__: strides --------------------------------
    # Strides under which positions share memory are a valid view (each
    # position counts, as in NumPy: tests/test_inputs_gpu.py reduces one);
    # a span past the address space is not.
    Bad("cai-strides-span-overflows",
        lambda f: f(cai(shape=(2, 2), strides=(2 ** 62, 2 ** 62),
                        typestr="|i1")),
        ValueError, r"strides overflow"),
    Bad("cai-strides-span-overflows-backwards",
        lambda f: f(cai(shape=(2, 2), strides=(-(2 ** 62), 2 ** 62),
                        typestr="|i1")),
        ValueError, r"strides overflow"),
    Bad("cai-strides-not-item-multiple", lambda f: f(cai(strides=(6,))),
        ValueError, r"strides must be multiples of the item size"),
    Bad("cai-strides-wrong-length", lambda f: f(cai(strides=(4, 4))),
        ValueError, r"strides has 2 entries for 1 dimensions"),
    Bad("cai-strides-backwards-extent-overflows",
        lambda f: f(cai(strides=(-2 ** 62,))), ValueError,
        r"strides overflow"),
    Bad("cai-strides-forward-extent-overflows",
        lambda f: f(cai(strides=(2 ** 62,))), ValueError, r"strides overflow"),
    Bad("cai-strides-list", lambda f: f(cai(strides=[4])), TypeError,
        r"strides must be a tuple of ints, not list"),

    # --- __cuda_array_interface__: typestr, data, mask, stream ------------
    Bad("cai-typestr-garbage", lambda f: f(cai(typestr="<f3")), TypeError,
        r"typestr '<f3' is not a dtype"),
    Bad("cai-typestr-clongdouble", lambda f: f(cai(typestr="<c32")),
        TypeError, r"does not support dtype complex256; " + SUPPORTED_LIST),
    Bad("cai-typestr-object", lambda f: f(cai(typestr="|O")), TypeError,
        r"does not support dtype object"),
    Bad("cai-typestr-big-endian", lambda f: f(cai(typestr=">f4")), TypeError,
        r"typestr '>f4': non-native byte order is not supported"),
    Bad("cai-typestr-not-str", lambda f: f(cai(typestr=4)), TypeError,
        r"typestr must be a str, not int"),
    Bad("cai-mask", lambda f: f(cai(mask=(FAKE_POINTER, False))), ValueError,
        r"mask: masked arrays are not supported"),
    Bad("cai-null-pointer", lambda f: f(cai(data=(0, False))), ValueError,
        r"null data pointer for 5 elements"),
    Bad("cai-misaligned-pointer", lambda f: f(cai(data=(FAKE_POINTER + 2,
                                                      False))),
        ValueError, r"is not aligned to the 4-byte item size"),
    Bad("cai-negative-pointer", lambda f: f(cai(data=(-1, False))), ValueError,
        r"data pointer -1 is not a pointer"),
    Bad("cai-pointer-2^64", lambda f: f(cai(data=(2 ** 64, False))),
        ValueError, r"data pointer 18446744073709551616 is not a pointer"),
    Bad("cai-data-not-a-tuple", lambda f: f(cai(data=[FAKE_POINTER, False])),
        TypeError, r"data must be a tuple \(pointer: int, read_only: bool\)"),
    Bad("cai-stream-0", lambda f: f(cai(stream=0)), ValueError,
        r"stream must be None or a positive int \(0 is disallowed by the "
        r"interface\), got 0"),
    Bad("cai-stream-negative", lambda f: f(cai(stream=-5)), ValueError,
        r"stream must be None or a positive int .*got -5"),
    Bad("cai-stream-2^63", lambda f: f(cai(stream=2 ** 63)), ValueError,
        r"stream entry 9223372036854775808 does not fit in 64 bits"),
    Bad("cai-stream-bool", lambda f: f(cai(stream=True)), TypeError,
        r"stream\b.*\bbool\b"),
    Bad("cai-stream-str", lambda f: f(cai(stream="1")), TypeError,
        r"stream\b.*\bstr\b"),

    # --- DLPack (NumPy's own capsules; no ctypes) -------------------------
    Bad("dlpack-device-vulkan",
        lambda f: f(Exporter(np.ones(3).__dlpack__, (7, 0))), TypeError,
        r"reads DLPack tensors on CUDA \(2\) or CPU \(1\) devices, not "
        r"device type 7"),
    Bad("dlpack-device-unknown",
        lambda f: f(Exporter(np.ones(3).__dlpack__, (99, 0))), TypeError,
        r"not device type 99"),
    Bad("dlpack-device-not-a-tuple",
        lambda f: f(Exporter(np.ones(3).__dlpack__, "cuda:0")), TypeError,
        r"__dlpack_device__\(\) must return a tuple \(device_type: int, "
        r"device_id: int\)"),
    Bad("dlpack-says-cuda-but-is-cpu",
        lambda f: f(Exporter(np.ones(3).__dlpack__, (2, 0))), ValueError,
        r"the DLPack tensor is on device type 1, not CUDA as "
        r"__dlpack_device__ said"),
    Bad("dlpack-capsule-already-used",
        lambda f: f(Exporter(used_capsule, (2, 0))), ValueError,
        r"__dlpack__ did not return an unused DLPack capsule "
        r"\(named 'dltensor'\)"),
    Bad("dlpack-not-a-capsule", lambda f: f(Exporter(lambda: 42, (2, 0))),
        ValueError, r"did not return an unused DLPack capsule"),
]


@pytest.mark.parametrize("entry, op",
                         [p for b in CATALOGUE for p in b.params()])
def test_refused_with_a_helpful_message(entry, op):
    with warnings.catch_warnings():
        # NumPy warns about some of these inputs (ragged lists) before
        # refusing them; the error is what is checked.
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            entry.call(getattr(cudareduce, op))
    assert type(info.value) is entry.error, (
        f"{entry.id}: cudareduce.{op} raised {type(info.value).__name__}: "
        f"{info.value}; expected {entry.error.__name__}")
    info.match(entry.match)


def test_the_catalogue_is_long_enough():
    ids = [b.id for b in CATALOGUE] + [e.id for e in ISOLATED + GPU_ISOLATED]
    assert len(ids) == len(set(ids)), "duplicate ids"
    assert len(ids) >= 40, len(ids)


# --- accepted: backwards strides, zero-size inputs with odd layouts ----------

@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("strides", [(-12, -4), (-4, 12), (0, -4)], ids=str)
def test_zero_size_backwards_strides_are_accepted(op, strides):
    # A zero-size array never touches its pointer: any strides that are
    # multiples of the item size are fine, backwards ones included.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = getattr(cudareduce, op)(cai(shape=(0, 3), strides=strides))
    assert type(got) is np.float32
    assert got == 0 if op == "sum" else np.isnan(got)


@pytest.mark.parametrize("shape, strides", [
    ((5,), (-4,)),
    ((2, 3), (-12, -4)),
    ((2, 3), (12, -4)),
    ((3, 2), (-4, -12)),
], ids=str)
def test_backwards_strides_in_range_are_accepted(device_error, shape,
                                                 strides):
    # Supported, not refused: the parser lets these through to CUDA.
    # Without a device that is a CudaError; with one, the fake pointer is
    # refused by CUDA's pointer query (a ValueError about device memory),
    # never by the layout checks.
    with pytest.raises((cudareduce.CudaError, ValueError)) as info:
        cudareduce.sum(cai(shape=shape, strides=strides))
    if device_error is not None:
        assert type(info.value) is cudareduce.CudaError, info.value
    else:
        assert type(info.value) is ValueError
        info.match(r"not (CUDA|device) memory")


def test_backwards_numpy_views_take_the_host_path(device_error):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, ::-2]
    if device_error is not None:
        with pytest.raises(cudareduce.CudaError):
            cudareduce.sum(a)
    else:
        assert cudareduce.sum(a) == a.sum()


# --- DLPack capsules made with ctypes, in a subprocess -----------------------

def run_isolated(body: str, timeout: float = 120) -> dict:
    """Runs `body` in a fresh interpreter; it must assign `call` (a
    zero-argument callable) and may assign `producer` (a
    dlpack_capsules.Producer).  Returns what happened: result or exception
    type, module and message, and the producer's deleter count."""
    code = textwrap.dedent("""
        import json, sys, warnings
        sys.path.insert(0, {tests!r})
        import numpy as np
        import cudareduce
        from support.dlpack_capsules import *
        producer = None
    """).format(tests=str(TESTS_DIR)) + textwrap.dedent(body) + \
        textwrap.dedent("""
        out = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["result"] = repr(call())
        except BaseException as error:
            out["type"] = type(error).__name__
            out["module"] = type(error).__module__
            out["message"] = str(error)
        if producer is not None:
            out["deleted"] = producer.deleted
            out["calls"] = producer.calls
        print("RESULT " + json.dumps(out))
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"the interpreter died (exit {done.returncode}: a negative code is "
        f"a signal)\nstdout:\n{done.stdout[-3000:]}\nstderr:\n"
        f"{done.stderr[-3000:]}")
    lines = [line for line in done.stdout.splitlines()
             if line.startswith("RESULT ")]
    assert lines, f"no result\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    out = json.loads(lines[-1][len("RESULT "):])
    out["stderr"] = done.stderr
    return out


@dataclass
class Isolated:
    id: str
    body: str
    error: str          # exception type name
    match: str
    marks: tuple = ()

    def param(self):
        return pytest.param(self, id=self.id, marks=self.marks)


def producer(op="sum", **kwargs) -> str:
    """A body that reduces a hand-made capsule (with a NULL deleter unless
    given) with `op`."""
    kwargs.setdefault("deleter", False)
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return (f"producer = Producer({args})\n"
            f"call = lambda: cudareduce.{op}(producer)\n")


DLPACK_DTYPE = r"cudareduce does not support the DLPack dtype "

ISOLATED = [
    Isolated("dlpack-bfloat32", producer(code=4, bits=32), "TypeError",
             DLPACK_DTYPE + r"\(code 4, 32 bits, 1 lanes\)"),
    Isolated("dlpack-complex32", producer(code=5, bits=32), "TypeError",
             DLPACK_DTYPE + r"\(code 5, 32 bits, 1 lanes\)"),
    Isolated("dlpack-float32x4-lanes", producer(lanes=4), "TypeError",
             DLPACK_DTYPE + r"\(code 2, 32 bits, 4 lanes\)"),
    Isolated("dlpack-bool-1-bit", producer(code=6, bits=1), "TypeError",
             DLPACK_DTYPE + r"\(code 6, 1 bits, 1 lanes\)"),
    Isolated("dlpack-int128", producer(code=0, bits=128), "TypeError",
             DLPACK_DTYPE + r"\(code 0, 128 bits, 1 lanes\)"),
    Isolated("dlpack-versioned-lanes", producer(lanes=2, versioned=True),
             "TypeError", DLPACK_DTYPE + r"\(code 2, 32 bits, 2 lanes\)"),
    Isolated("dlpack-tensor-on-vulkan", producer(tensor_device=(7, 0)),
             "ValueError", r"the DLPack tensor is on device type 7, not CUDA "
             r"as __dlpack_device__ said"),
    Isolated("dlpack-byte-size-overflows", producer(shape=(2 ** 61,),
                                                    bits=64),
             "ValueError", r"DLPack: the array's byte size overflows"),
    Isolated("dlpack-element-count-overflows",
             producer(shape=(2 ** 40, 2 ** 40)), "ValueError",
             r"DLPack: the number of elements overflows"),
    Isolated("dlpack-65-dimensions", producer(shape=(1,) * 65), "ValueError",
             r"DLPack tensor of 65 dimensions; at most 64"),
    Isolated("dlpack-negative-ndim", producer(ndim=-1), "ValueError",
             r"DLPack tensor of -1 dimensions; at most 64"),
    Isolated("dlpack-negative-shape", producer(shape=(-3,)), "ValueError",
             r"DLPack: shape entries must be >= 0"),
    Isolated("dlpack-null-data", producer(data=0), "ValueError",
             r"DLPack: null data pointer for 4 elements"),
    Isolated("dlpack-misaligned", producer(data=FAKE_POINTER + 2),
             "ValueError", r"is not aligned to the 4-byte item size"),
    Isolated("dlpack-strides-overflow", producer(strides=(2 ** 62,)),
             "ValueError", r"DLPack strides overflow"),
    Isolated("dlpack-strides-span-overflows",
             producer(shape=(2, 2), strides=(2 ** 61, 2 ** 61)),
             "ValueError", r"DLPack strides overflow"),
    Isolated("dlpack-min-of-empty", producer(op="min", shape=(0,)),
             "ValueError", r"zero-size array to reduction operation minimum "
             r"which has no identity"),
]


@pytest.mark.parametrize("entry", [e.param() for e in ISOLATED])
def test_dlpack_capsule_refused_with_a_helpful_message(entry):
    out = run_isolated(entry.body)
    assert out.get("type") == entry.error, out
    assert re.search(entry.match, out["message"]), out
    assert out["calls"] == 1, out


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("kind", ["dltensor", "versioned", "managed-memory"])
def test_dlpack_zero_size_cuda_capsule_is_accepted(op, kind):
    # kDLCUDA (2) or kDLCUDAManaged (13), zero size: never touches the
    # (null) pointer, gives NumPy's identity, and hands the tensor back
    # (the deleter runs once; no exception is pending then).
    body = producer(op=op, shape=(3, 0), data=0, deleter=True,
                    versioned=kind == "versioned",
                    device=(13, 0) if kind == "managed-memory" else (2, 0))
    out = run_isolated(body)
    assert "type" not in out, out
    assert out["result"] == ("np.float32(0.0)" if op == "sum"
                             else "np.float32(nan)"), out
    assert out["deleted"] == 1, out


@pytest.mark.parametrize("body, error, match", [
    pytest.param(producer(code=5, bits=32, deleter=True), "TypeError",
                 DLPACK_DTYPE, id="unsupported-dtype"),
    pytest.param(producer(lanes=2, versioned=True, deleter=True),
                 "TypeError", DLPACK_DTYPE, id="versioned-lanes"),
    pytest.param(producer(data=0, deleter=True), "ValueError",
                 r"null data pointer", id="null-data"),
    pytest.param(producer(op="max", shape=(0,), deleter=True), "ValueError",
                 r"zero-size array", id="max-of-empty"),
])
def test_dlpack_error_keeps_its_message_and_runs_the_deleter_once(
        body, error, match):
    # The library takes the capsule (renames it), so it must hand the
    # tensor back exactly once on every path, and the user must see the
    # error the library raised, whatever the producer's deleter does.
    out = run_isolated(body)
    assert out.get("type") == error, out
    assert re.search(match, out["message"]), out
    assert out["deleted"] == 1, out
    assert "SystemError" not in out["stderr"], out["stderr"]


def test_dlpack_used_capsule_is_not_deleted_by_the_library():
    # A capsule that is not ours to take must be left alone: no deleter
    # call (the consumer that took it will make that one).
    body = ("producer = Producer(deleter=True)\n"
            "capsule = producer.__dlpack__()\n"
            "producer.calls = 0\n"
            "class Used:\n"
            "    def __dlpack__(self, *a, **k):\n"
            "        producer.calls += 1\n"
            "        return capsule\n"
            "    def __dlpack_device__(self):\n"
            "        return (2, 0)\n"
            "import ctypes\n"
            "ctypes.pythonapi.PyCapsule_SetName.argtypes = "
            "[ctypes.py_object, ctypes.c_char_p]\n"
            "ctypes.pythonapi.PyCapsule_SetName(capsule, b'used_dltensor')\n"
            "call = lambda: cudareduce.sum(Used())\n")
    out = run_isolated(body)
    assert out.get("type") == "ValueError", out
    assert "unused DLPack capsule" in out["message"], out
    assert out["deleted"] == 0, out


# --- entries that need a device, in a subprocess -----------------------------

GPU_ISOLATED = [
    Isolated("cai-host-pointer",
             "host = np.ones(5, np.float32)\n"
             "class C:\n"
             "    __cuda_array_interface__ = {'shape': (5,), 'typestr': '<f4',"
             " 'data': (host.ctypes.data, False), 'version': 3}\n"
             "call = lambda: cudareduce.sum(C())\n",
             "ValueError", r"is host memory, not device memory"),
    Isolated("cai-pinned-host-pointer",
             "import cupy\n"
             "pinned = cupy.cuda.alloc_pinned_memory(64)\n"
             "class C:\n"
             "    __cuda_array_interface__ = {'shape': (5,), 'typestr': '<f4',"
             " 'data': (pinned.ptr, False), 'version': 3}\n"
             "call = lambda: cudareduce.sum(C())\n",
             "ValueError", r"is pinned host memory, not device memory"),
    Isolated("cai-unmapped-pointer",
             f"class C:\n"
             f"    __cuda_array_interface__ = {{'shape': (5,), 'typestr': "
             f"'<f4', 'data': ({FAKE_POINTER}, False), 'version': 3}}\n"
             f"call = lambda: cudareduce.sum(C())\n",
             "ValueError", r"not (CUDA|device) memory"),
    Isolated("dlpack-cuda-capsule-host-pointer",
             "host = np.ones(4, np.float32)\n"
             "producer = Producer(data=host.ctypes.data, deleter=False)\n"
             "call = lambda: cudareduce.sum(producer)\n",
             "ValueError", r"is host memory, not device memory"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("entry", [e.param() for e in GPU_ISOLATED])
def test_pointer_refused_with_a_helpful_message(entry):
    out = run_isolated(entry.body + textwrap.dedent("""
        first = call
        def call():
            try:
                first()
            finally:
                # The refusal must leave the library usable.
                ok = cudareduce.sum(np.arange(1000, dtype=np.int64))
                assert ok == 499500, ok
        """))
    assert out.get("type") == entry.error, out
    assert re.search(entry.match, out["message"]), out
