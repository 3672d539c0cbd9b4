"""argmin, argmax, nanargmin and nanargmax against NumPy, on the GPU.

Every answer is NumPy's on the same host data, compared exactly: the type
(numpy.int64), the index (the first one of the extreme in C order, whatever
the layout), NumPy's exception and message where it raises, and its
warnings (none).  The data put the extremes where an index reduction goes
wrong:

- ties: values 1..4 (bool: either), so that each extreme occurs about n/4
  times and only the first index may win, across threads, blocks, passes
  and host chunks;
- the extremes at index 0 and at the last index, at both ends at once,
  and the dtype's own limits (integer min and max, the unsigned top bit,
  +-inf, the largest finite floats), also as the whole array (the
  reduction's identity everywhere);
- NaN (of either sign) at random places and last, for which argmin and
  argmax return the first NaN; NaN mixed with +inf (nanargmin) or -inf
  (nanargmax), where NumPy's NaN-as-inf makes a NaN's index the answer;
  all NaN ("All-NaN slice encountered" for the NaN forms);
- +0.0 and -0.0, which compare equal.

Coverage is structured, not crossed in full, to stay within the GPU
suite's time: every method x every dtype at a few sizes; every edge size
(warp, block, vector head and tail, several passes) with fast, cub and two
ladder steps; every layout (CuPy and NumPy views, transposed, reversed,
strided, Fortran, permuted, broadcast) with fast, one ladder step and cub;
PyTorch tensors and DLPack; host arrays over several chunks of the ring;
more than 2^31 elements; out=; numpy.ma masked arrays; empty inputs.
Threads per block and the input kind (CuPy, NumPy, DLPack) rotate over
the cases.
"""
from __future__ import annotations

import os
import sys
import warnings
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import numpy.ma as ma
import pytest

import cudareduce
from support.api_contract import METHODS, SUPPORTED_DTYPES, block_sizes
from support.dlpack_capsules import DLPackOnly
from support.outcomes import outcome

pytestmark = pytest.mark.gpu

OPS = ("argmin", "argmax", "nanargmin", "nanargmax")
KINDS = ("cupy", "numpy", "dlpack")

# Every method and dtype: one element, a partial warp, a block and one,
# and three passes of the ladder's first steps.
DTYPE_SIZES = (1, 33, 1025, 300_001)
# Every edge, with fast, cub and two ladder steps (one element per thread,
# and the grid-stride loop of two): warps, blocks, the fast method's
# 16-byte vectors, a pass's blocks +-1, and a size that takes the ladder
# four passes (at 64 threads) and the host ring more than two 16 MiB
# chunks (float64).
EDGE_SIZES = (1, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4097, 65_535,
              2 ** 20 + 7, 2 ** 22 + 3)
EDGE_METHODS = ("fast", "cub", "interleaved_divergent", "multi_element")
EDGE_DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.uint16, np.int64, np.uint64, np.float16,
    np.float32, np.float64))
# Layouts and PyTorch: the view handling is the method's input, not its
# kernel, so three methods suffice.
LAYOUT_METHODS = ("fast", "first_add", "cub")


# --- NumPy's answer and ours -------------------------------------------------

def numpy_outcomes(host) -> dict:
    """NumPy's outcome of every operator on the host data `host`."""
    return {op: outcome(lambda: getattr(np, op)(host)) for op in OPS}


@dataclass
class Case:
    what: str                 # the data, its dtype, size and input kind
    data: Any                 # what cudareduce gets
    dtype: np.dtype
    rotation: int             # which threads= (0: None, then the method's)
    want: dict                # op -> NumPy's outcome on the same elements

    def __repr__(self) -> str:
        return self.what

    def threads(self, op: str, method: str) -> int | None:
        """The threads= this case runs `op` with `method` at: None (the
        default) or one of the block sizes the method takes, rotating."""
        sizes = (None,) + block_sizes(op, self.dtype, method)
        return sizes[self.rotation % len(sizes)]


def check(cases, method: str, seed_note: str, ops=OPS) -> None:
    """Each case's operators with `method`, against NumPy's outcome."""
    wrong = []
    for case in cases:
        for op in ops:
            threads = case.threads(op, method)
            got = outcome(lambda: getattr(cudareduce, op)(
                case.data, method, threads=threads))
            if got != case.want[op]:
                wrong.append(f"{op} of {case}, threads={threads}: got "
                             f"{got}, NumPy {case.want[op]}")
    assert not wrong, (f"{method}: {len(wrong)} wrong, the first: "
                       f"{wrong[:6]} {seed_note}")


# Data shared by the tests of one parametrization's key (a dtype, a size,
# a layout), built once from the session seed and the key, so that a test
# replays alone with the same data.  Only the latest key's data are kept.
_latest: dict = {}


def prepared(key, session_seed: int, build: Callable):
    if key not in _latest:
        _latest.clear()
        _latest[key] = build(np.random.default_rng(
            [session_seed, zlib.crc32(repr(key).encode())]))
    return _latest[key]


@pytest.fixture(scope="module", autouse=True)
def _forget_prepared():
    yield
    _latest.clear()
    if "cupy" in sys.modules:
        sys.modules["cupy"].get_default_memory_pool().free_all_blocks()


# --- data --------------------------------------------------------------------

def extremes(dtype: np.dtype, finite: bool = False):
    """(lowest, highest) value of `dtype`: False and True, the integer
    limits, -inf and inf (the finite limits with finite=True)."""
    if dtype.kind == "b":
        return False, True
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if dtype.kind == "f" and not finite:
        return -np.inf, np.inf
    return info.min, info.max


def ties(rng, dtype: np.dtype, n: int) -> np.ndarray:
    """Values 1..4 (bool: either): each extreme about n/4 times."""
    if dtype.kind == "b":
        return rng.integers(0, 2, n, dtype=np.int8).astype(bool)
    return rng.integers(1, 5, n, dtype=np.int8).astype(dtype)


def patterns(rng, dtype, n: int) -> list:
    """[(name, n elements of dtype)]: the module doc's data."""
    dtype = np.dtype(dtype)
    low, high = extremes(dtype)
    finite_low, finite_high = extremes(dtype, finite=True)
    boolean = dtype.kind == "b"
    base = ties(rng, dtype, n)
    out = [("ties", base)]
    a = np.ones(n, bool) if boolean else base.copy()
    a[0], a[-1] = high, low
    out.append(("high first, low last", a))
    a = np.zeros(n, bool) if boolean else base.copy()
    a[0], a[-1] = finite_low, finite_high
    out.append(("finite low first, high last", a))
    a = base.copy()
    a[0] = a[-1] = low
    a[n // 2] = high
    out.append(("low at both ends", a))
    out.append(("all low", np.full(n, low, dtype)))
    out.append(("all high", np.full(n, high, dtype)))
    if dtype.kind != "f":
        return out
    nans = np.array([np.nan, -np.nan], dtype)       # both signs
    a = base.copy()
    a[rng.integers(0, n, 3)] = low
    a[rng.integers(0, n, 3)] = high
    where = rng.integers(0, n, 1 + n // 97)
    a[where] = nans[rng.integers(0, 2, where.size)]
    out.append(("NaN at random", a))
    a = base.copy()
    a[0], a[n // 2], a[-1] = low, high, np.nan
    out.append(("-inf first, NaN last", a))
    for inf in (np.inf, -np.inf):
        a = np.where(rng.random(n) < 0.5, np.nan, inf).astype(dtype)
        a[0] = np.nan
        out.append((f"NaN first, NaN or {inf}", a))
    out.append(("all NaN", nans[rng.integers(0, 2, n)]))
    for first, rest in ((0.0, -0.0), (-0.0, 0.0)):
        a = np.full(n, rest, dtype)
        a[rng.integers(0, n, 1 + n // 50)] = first
        a[0] = first
        out.append((f"{first} first, then +-0", a))
    return out


def as_input(cupy, kind: str, host: np.ndarray):
    """`host`'s elements as an input of `kind`."""
    if kind == "numpy":
        return host
    device = cupy.asarray(host)
    return DLPackOnly(device) if kind == "dlpack" else device


def make_cases(cupy, rng, dtype, n: int, salt: int) -> list:
    """Every pattern of n elements of dtype, with the input kind and the
    threads per block rotating (`salt` shifts the rotation)."""
    cases = []
    for p, (name, host) in enumerate(patterns(rng, dtype, n)):
        kind = KINDS[(p + salt) % len(KINDS)]
        cases.append(Case(f"{name} ({np.dtype(dtype)}, n={n}, {kind})",
                          as_input(cupy, kind, host), np.dtype(dtype),
                          p + 2 * salt, numpy_outcomes(host)))
    return cases


# --- every method, dtype and edge size ---------------------------------------

@pytest.mark.parametrize("dtype, method", [
    pytest.param(np.dtype(d), m, id=f"{np.dtype(d)}-{m}")
    for d in SUPPORTED_DTYPES for m in METHODS])
def test_every_method_and_dtype(cupy, session_seed, seed_note, dtype,
                                method):
    cases = prepared(("dtype", dtype), session_seed, lambda rng: [
        case for s, n in enumerate(DTYPE_SIZES)
        for case in make_cases(cupy, rng, dtype, n, s)])
    check(cases, method, seed_note)


@pytest.mark.parametrize("n, method", [
    pytest.param(n, m, id=f"n={n}-{m}")
    for n in EDGE_SIZES for m in EDGE_METHODS])
def test_edge_sizes(cupy, session_seed, seed_note, n, method):
    cases = prepared(("size", n), session_seed, lambda rng: [
        case for d, dtype in enumerate(EDGE_DTYPES)
        for case in make_cases(cupy, rng, dtype, n, d + n % 7)])
    check(cases, method, seed_note)


@pytest.mark.parametrize("op", OPS)
def test_empty_inputs(cupy, op):
    # NumPy's ValueError and message (the NaN forms name argmin and argmax,
    # as NumPy's do), for every dtype, method and input kind.
    wrong = []
    for dtype in SUPPORTED_DTYPES:
        host = np.zeros((2, 0), dtype)
        want = outcome(lambda: getattr(np, op)(host))
        assert want[0][0] is ValueError, want
        for data in (host, np.zeros(0, dtype), cupy.zeros(0, dtype),
                     cupy.zeros((3, 0), dtype).T,
                     DLPackOnly(cupy.zeros(0, dtype))):
            for method in METHODS:
                got = outcome(lambda: getattr(cudareduce, op)(data, method))
                if got != want:
                    wrong.append(f"{dtype} {type(data).__name__} {method}: "
                                 f"{got}")
    assert not wrong, f"{op}: want {want}, got {wrong[:5]}"


# (name, host data): NumPy's rules one at a time, each operator answered
# by NumPy on the same data.
RULES = [
    ("first NaN after -inf", np.array([-np.inf, np.nan, 3.0, np.nan])),
    ("NaN after inf", np.array([np.inf, 1.0, np.nan], np.float32)),
    ("NaN ties inf in nanargmin", np.array([np.nan, np.inf, np.inf])),
    ("NaN ties -inf in nanargmax", np.array([np.nan, -np.inf], np.float32)),
    ("NaN and -inf", np.array([np.nan, -np.inf, np.nan, np.inf],
                              np.float16)),
    ("negative NaN", np.array([1.0, -np.nan, np.nan])),
    ("all NaN", np.array([np.nan, -np.nan, np.nan], np.float16)),
    ("+0.0 ties -0.0", np.array([0.0, -0.0, -0.0, 0.0])),
    ("-0.0 ties +0.0", np.array([-0.0, 0.0, 0.0], np.float32)),
    ("float16 largest finite and inf",
     np.array([65504.0, np.inf, -65504.0, -np.inf, np.inf], np.float16)),
    ("float32 subnormal", np.array([1e-45, 0.0, -1e-45, -1e-45],
                                   np.float32)),
    ("bool: first True, first False", np.array([True, False, True,
                                                False])),
    ("bool all True", np.ones(5, bool)),
    ("bool bytes other than 1", np.array([0, 2, 255, 0], np.uint8)
     .view(bool)),
    ("uint64 top bit", np.array([2 ** 63, 1, 2 ** 64 - 1, 0, 2 ** 64 - 1],
                                np.uint64)),
    ("uint32 top bit", np.array([2 ** 31, 2 ** 32 - 1, 5], np.uint32)),
    ("int64 limits", np.array([0, 2 ** 63 - 1, -2 ** 63, -2 ** 63,
                               2 ** 63 - 1], np.int64)),
    ("int8 limits", np.array([-128, 127, 0, -128], np.int8)),
    ("uint8 wraps nowhere", np.array([200, 7, 255, 0, 0], np.uint8)),
    ("0-d", np.array(2.5)),
    ("0-d NaN", np.array(np.nan)),
    ("2-D: C order", np.array([[3, 1, 4], [1, 5, 9]], np.int16)),
    ("2-D transposed view", np.array([[3, 1, 4], [1, 0, 0]], np.int32).T),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", range(len(RULES)),
                         ids=[name for name, _ in RULES])
def test_numpy_rule(cupy, method, case):
    name, host = RULES[case]
    want = numpy_outcomes(host)
    for data in (host, cupy.asarray(host)):
        for op in OPS:
            got = outcome(lambda: getattr(cudareduce, op)(data, method))
            assert got == want[op], (name, op, type(data), got, want[op])


# --- layouts -----------------------------------------------------------------

# Views of a 210,000-element base (xp: numpy or cupy), whose C-order index
# is not the memory order.
LAYOUTS = {
    "contiguous": lambda xp, x: x,
    "transposed": lambda xp, x: x.reshape(300, 700).T,
    "reversed": lambda xp, x: x[::-1],
    "step 3": lambda xp, x: x[::3],
    "offset": lambda xp, x: x[7:],
    "fortran": lambda xp, x: xp.asfortranarray(x.reshape(300, 700)),
    "negative 2-d": lambda xp, x: x.reshape(300, 700)[::-2, ::-3],
    "3-d permuted": lambda xp, x: x.reshape(30, 70, 100).transpose(2, 0, 1),
    "3-d permuted and stepped": lambda xp, x: x.reshape(30, 70, 100)
    .transpose(1, 2, 0)[::2, 3:, ::-1],
    "broadcast rows": lambda xp, x: xp.broadcast_to(x[:700], (300, 700)),
    "broadcast columns": lambda xp, x: xp.broadcast_to(x[:300, None],
                                                       (300, 700)),
    "one column": lambda xp, x: x.reshape(300, 700)[:, 5:6],
    "0-d": lambda xp, x: x[5:6].reshape(()),
}
LAYOUT_N = 210_000
LAYOUT_DATA = [
    (np.float32, ("ties", "NaN at random", "-inf first, NaN last")),
    (np.int16, ("ties", "high first, low last")),
    (np.uint8, ("low at both ends",)),
    (np.bool_, ("ties",)),
    (np.float64, ("NaN first, NaN or inf", "NaN first, NaN or -inf")),
    (np.float16, ("finite low first, high last", "0.0 first, then +-0")),
    (np.uint64, ("ties",)),
]


def layout_cases(cupy, rng, layout: str) -> list:
    view = LAYOUTS[layout]
    cases = []
    for dtype, names in LAYOUT_DATA:
        for name, base in patterns(rng, dtype, LAYOUT_N):
            if name not in names:
                continue
            twin = view(np, base)
            assert np.shares_memory(twin, base) or layout == "fortran"
            for kind, data in (("numpy", twin),
                               ("cupy", view(cupy, cupy.asarray(base)))):
                cases.append(Case(f"{name} ({np.dtype(dtype)}, {layout}, "
                                  f"{kind})", data, np.dtype(dtype),
                                  len(cases), numpy_outcomes(twin)))
    return cases


@pytest.mark.parametrize("layout, method", [
    pytest.param(layout, m, id=f"{layout}-{m}")
    for layout in LAYOUTS for m in LAYOUT_METHODS])
def test_layouts(cupy, session_seed, seed_note, layout, method):
    cases = prepared(("layout", layout), session_seed,
                     lambda rng: layout_cases(cupy, rng, layout))
    check(cases, method, seed_note)


# (tensor's view, the host twin's): PyTorch's own views, read in place
# through the CUDA array interface, or through DLPack alone.
TORCH_VIEWS = {
    "tensor": (lambda t: t, lambda h: h),
    "transposed": (lambda t: t.reshape(300, 700).T,
                   lambda h: h.reshape(300, 700).T),
    "step 3": (lambda t: t[::3], lambda h: h[::3]),
    "3-d permuted": (lambda t: t.reshape(30, 70, 100).permute(2, 0, 1),
                     lambda h: h.reshape(30, 70, 100).transpose(2, 0, 1)),
    "expanded": (lambda t: t[:700].expand(300, 700),
                 lambda h: np.broadcast_to(h[:700], (300, 700))),
    "dlpack": (lambda t: DLPackOnly(t), lambda h: h),
    "dlpack transposed": (lambda t: DLPackOnly(t.reshape(300, 700).T),
                          lambda h: h.reshape(300, 700).T),
}
TORCH_DATA = [(np.bool_, "ties"), (np.int8, "high first, low last"),
              (np.uint8, "ties"), (np.int16, "low at both ends"),
              (np.int32, "ties"), (np.int64, "finite low first, high last"),
              (np.float16, "NaN at random"), (np.float32, "ties"),
              (np.float32, "NaN first, NaN or inf"),
              (np.float64, "-inf first, NaN last")]


@pytest.mark.parametrize("method", LAYOUT_METHODS)
def test_torch_tensors(torch, session_seed, seed_note, method):
    def build(rng):
        cases = []
        for dtype, wanted in TORCH_DATA:
            host = dict(patterns(rng, dtype, LAYOUT_N))[wanted]
            tensor = torch.from_numpy(host).cuda()
            for view, (of_tensor, of_host) in TORCH_VIEWS.items():
                twin = of_host(host)
                cases.append(Case(f"{wanted} ({np.dtype(dtype)}, {view})",
                                  of_tensor(tensor), np.dtype(dtype), 0,
                                  numpy_outcomes(twin)))
        return cases

    check(prepared(("torch",), session_seed, build), method, seed_note)


# --- host arrays over several chunks -----------------------------------------

def host_chunk_bytes() -> int:
    """The host ring's chunk (CUDAREDUCE_HOST_CHUNK_MB, default 16 MiB),
    as this process's ring reads it, if it was set before the first host
    reduction.  The cases put extremes in several chunks whatever it is."""
    value = os.environ.get("CUDAREDUCE_HOST_CHUNK_MB", "")
    return max(1, int(value) if value.isdigit() else 16) << 20


def host_chunk_cases(rng) -> list:
    """float64 over three chunks (48 MiB by default) and int8 over two and
    a bit: the extreme in the last chunk, ties across chunks and across a
    chunk's edge, NaN in the last chunk, host views over every chunk."""
    c = host_chunk_bytes() // 8
    n = 3 * c - 1024
    base = rng.integers(2, 4, n).astype(np.float64)
    named = []

    def planted(name, plants, fill=None):
        a = base.copy() if fill is None else np.full(n, fill)
        for where, value in plants.items():
            a[where] = value
        named.append((name, a))
        return a

    last = planted("low only in the last chunk", {n - 5: 1.0})
    tied = planted("low in chunk 1 and at the end", {c + 3: 1.0, n - 1: 1.0})
    planted("low and high on both sides of chunk edges",
            {c - 1: 1.0, c: 1.0, 2 * c - 1: 9.0, 2 * c: 9.0})
    planted("low first in the last chunk, tied at the end",
            {2 * c: 1.0, n - 1: 1.0})
    planted("-inf in the first chunk, NaN and inf in the last",
            {5: -np.inf, n - 2: np.nan, n - 1: np.inf})
    planted("NaN, then inf at the end", {n - 1: np.inf}, fill=np.nan)
    planted("NaN, then -inf at the end", {n - 1: -np.inf}, fill=np.nan)
    planted("NaN, then one number in the last chunk", {n - 3: 2.5},
            fill=np.nan)
    planted("all NaN", {}, fill=np.nan)
    named.append(("transposed view of the tie", tied.reshape(1024, -1).T))
    named.append(("reversed view of the last-chunk low", last[::-1]))
    c8 = host_chunk_bytes()
    n8 = 2 * c8 + 12_345
    small = rng.integers(-5, 6, n8, dtype=np.int8)
    a = small.copy()
    a[[7, n8 - 2]] = -128
    a[[c8 + 1, n8 - 1]] = 127
    named.append(("int8 limits tied in the first and last chunks", a))
    a = small.copy()
    a[n8 - 9] = -128
    a[2 * c8] = 127
    named.append(("int8 limits only in the last chunk", a))
    return [Case(f"{name} (host, n={a.size})", a, a.dtype, 0,
                 numpy_outcomes(a)) for name, a in named]


@pytest.mark.parametrize("method", ["fast", "multi_element", "cub"])
def test_host_arrays_over_several_chunks(session_seed, seed_note, method):
    check(prepared(("host chunks",), session_seed, host_chunk_cases),
          method, seed_note)


# --- out= --------------------------------------------------------------------

def out_data(rng, n=100_003) -> np.ndarray:
    host = rng.integers(-3, 4, n).astype(np.float32)
    host[rng.integers(0, n, 50)] = np.nan
    return host


@pytest.mark.parametrize("method", METHODS)
def test_device_out(cupy, rng, method):
    host = out_data(rng)
    x = cupy.asarray(host)
    for op in OPS:
        want = getattr(np, op)(host)
        for shape in ((), (1,), (1, 1)):
            out = cupy.full(shape, 7, np.int64)
            got = getattr(cudareduce, op)(x, method, out=out)
            assert got is out, (op, shape)
            assert int(out.get().reshape(())) == want, (op, shape, out, want)
        out = cupy.full((), 7, np.int64)
        getattr(cudareduce, op)(host, method, out=out)
        assert int(out.get()) == want, (op, "host input", out, want)


@pytest.mark.parametrize("method", ["fast", "first_add", "cub"])
def test_numpy_out(cupy, rng, method):
    host = out_data(rng)
    for op in OPS:
        want = getattr(np, op)(host)
        for data in (host, cupy.asarray(host)):
            for shape in ((), (1,)):
                out = np.full(shape, 7, np.int64)
                got = getattr(cudareduce, op)(data, method, out=out)
                assert got is out and out.reshape(())[()] == want, (
                    op, type(data), shape, out, want)


def test_torch_out_by_cai_and_by_dlpack(torch, rng):
    host = out_data(rng, 4099)
    x = torch.from_numpy(host).cuda()
    for op in OPS:
        for make in (lambda o: o, DLPackOnly):
            out = torch.full((), 7, dtype=torch.int64, device="cuda")
            getattr(cudareduce, op)(x, out=make(out))
            assert out.item() == getattr(np, op)(host), op


@pytest.mark.parametrize("method", METHODS)
def test_all_nan_device_out(cupy, method):
    # The host never sees the index: -1 for the NaN forms (as CuPy's),
    # without an exception or a warning; argmin and argmax give 0.
    for dtype in (np.float16, np.float32, np.float64):
        for n in (1, 1025, 2 ** 20 + 7):
            x = cupy.full(n, np.nan, dtype)
            for op, want in (("argmin", 0), ("argmax", 0),
                             ("nanargmin", -1), ("nanargmax", -1)):
                out = cupy.full((), 7, np.int64)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    getattr(cudareduce, op)(x, method, out=out)
                assert int(out.get()) == want, (op, dtype, n, out)


def test_all_nan_numpy_out_raises_as_numpy(cupy):
    # A NumPy out is written after the host has waited and seen the
    # answer: NumPy's ValueError, as without out=.
    host = np.full(300, np.nan, np.float32)
    for op in ("nanargmin", "nanargmax"):
        want = outcome(lambda: getattr(np, op)(
            host, out=np.zeros((), np.int64)))
        for data in (host, cupy.asarray(host)):
            got = outcome(lambda: getattr(cudareduce, op)(
                data, out=np.zeros((), np.int64)))
            assert got == want, (op, type(data), got, want)


def test_empty_input_with_out(cupy):
    for op in OPS:
        want = outcome(lambda: getattr(np, op)(np.zeros(0)))
        for out in (cupy.zeros((), np.int64), np.zeros((), np.int64)):
            for data in (np.zeros(0), cupy.zeros(0)):
                got = outcome(lambda: getattr(cudareduce, op)(data, out=out))
                assert got == want, (op, type(data), type(out), got)


@pytest.mark.parametrize("op", OPS)
def test_bad_out(cupy, op):
    x = cupy.arange(10, dtype=np.float32)
    with pytest.raises(TypeError):
        getattr(cudareduce, op)(x, out=cupy.zeros((), np.float64))
    with pytest.raises(ValueError):
        getattr(cudareduce, op)(x, out=cupy.zeros(2, np.int64))
    with pytest.raises(TypeError, match="masked"):
        getattr(cudareduce, op)(ma.masked_array([1.0, 2.0], mask=[0, 1]),
                                out=np.zeros((), np.int64))


def test_out_orders_later_work_on_the_stream(cupy, rng):
    """No host wait: the next CuPy kernel on the stream reads the index."""
    host = rng.integers(0, 100, 2 ** 22, dtype=np.int64)
    x = cupy.asarray(host)
    out = cupy.zeros((), np.int64)
    total = cupy.zeros((), np.int64)
    want = 0
    for where in (2 ** 22 - 1, 5, 2 ** 21 + 1, 2 ** 21):
        x[where] = -1
        host[where] = -1
        cudareduce.argmin(x, out=out)
        total += out
        want += int(np.argmin(host))
    assert int(total.get()) == want


def test_stream_argument(cupy, rng):
    host = out_data(rng, 70_001)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(host)
        for op in OPS:
            want = getattr(np, op)(host)
            assert getattr(cudareduce, op)(x, stream=stream) == want, op
            assert getattr(cudareduce, op)(x, stream=stream.ptr) == want, op
    stream.synchronize()


# --- numpy.ma ----------------------------------------------------------------

def masked_cases() -> list:
    nan, inf = np.nan, np.inf
    rng = np.random.default_rng(0)
    big = rng.integers(-50, 50, 100_003).astype(np.float32)
    big[rng.integers(0, big.size, 200)] = nan
    big_mask = rng.random(big.size) < 0.3
    big[np.argmin(np.where(big_mask, 99, big))] = -50      # unmasked ties
    return [
        ("random float32 with NaN", ma.masked_array(big, mask=big_mask)),
        ("random float32, NaN only masked",
         ma.masked_array(big, mask=big_mask | np.isnan(big))),
        ("random int16", ma.masked_array(big_mask.astype(np.int16) * 3
                                         - rng.integers(0, 3, big.size),
                                         mask=rng.random(big.size) < 0.5)),
        ("fully masked", ma.masked_array([1., 2., -3.], mask=[1, 1, 1])),
        ("fully masked int8", ma.masked_array(np.array([4, -4], np.int8),
                                              mask=[1, 1])),
        ("NaN masked", ma.masked_array([1., nan, 0.5], mask=[0, 1, 0])),
        ("NaN unmasked", ma.masked_array([1., nan, 0.5], mask=[1, 0, 0])),
        ("every unmasked NaN", ma.masked_array([1., nan, nan],
                                               mask=[1, 0, 0])),
        ("every unmasked NaN, float16", ma.masked_array(
            np.array([nan, 2, nan, 3], np.float16), mask=[0, 1, 0, 1])),
        ("all NaN nomask", ma.masked_array([nan, nan])),
        ("NaN then inf", ma.masked_array([nan, inf, 0., -inf],
                                         mask=[0, 0, 1, 1])),
        ("masked element ties inf", ma.masked_array([0., inf, inf],
                                                    mask=[1, 0, 0])),
        ("int8 masked element ties the fill", ma.masked_array(
            np.array([0, 127, 127, -128], np.int8), mask=[1, 0, 0, 1])),
        ("uint64 top bit", ma.masked_array(
            np.array([7, 2 ** 64 - 1, 0, 2 ** 63], np.uint64),
            mask=[0, 1, 1, 0])),
        ("bool", ma.masked_array([True, False, False, True],
                                 mask=[0, 1, 0, 0])),
        ("bool all masked", ma.masked_array([True, False], mask=[1, 1])),
        ("2-D transposed", ma.masked_array(
            np.arange(12.).reshape(3, 4) % 5,
            mask=np.arange(12) % 4 == 0).T),
        ("empty", ma.masked_array([], dtype=np.float64)),
        ("empty with a mask", ma.masked_array([], mask=[],
                                              dtype=np.float32)),
    ]


MASKED = masked_cases()


@pytest.mark.parametrize("method", ["fast", "first_add"])
@pytest.mark.parametrize("op", OPS)
def test_masked_arrays_as_numpy(op, method):
    # MaskedArray.argmin/argmax, np.nanargmin/np.nanargmax of the masked
    # array: an index (never numpy.ma.masked), NumPy's errors, no warning.
    wrong = []
    for name, a in MASKED:
        want = outcome(lambda: getattr(np, op)(a) if op.startswith("nan")
                       else getattr(a, op)())
        got = outcome(lambda: getattr(cudareduce, op)(a, method))
        if got != want:
            wrong.append(f"{name}: got {got}, NumPy {want}")
    assert not wrong, f"{op} ({method}): {wrong}"


# --- more than 2^31 elements -------------------------------------------------

HUGE_N = (1 << 31) + 5


@pytest.fixture(scope="module")
def huge_ones(cupy):
    """2^31 + 5 int8 ones on the device (2 GiB), the other tests' data
    dropped first; a test that changes elements puts the ones back."""
    _latest.clear()
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free = cupy.cuda.runtime.memGetInfo()[0]
    if free < HUGE_N + (1 << 30):
        pytest.skip(f"needs {(HUGE_N >> 30) + 1} GiB free on the device, "
                    f"{free / 2 ** 30:.1f} GiB are")
    x = cupy.ones(HUGE_N, cupy.int8)
    yield x
    del x
    pool.free_all_blocks()


@pytest.mark.parametrize("method", ["fast", "cub", "multi_element"])
def test_over_two_to_the_31_elements(huge_ones, method):
    # Each step plants values (cumulatively) past 2^31 and around it; the
    # expected indices follow from the pattern (NumPy would agree: ones
    # elsewhere, so argmax with no planted max is 0, a tie of all).
    x, past = huge_ones, 1 << 31
    steps = [
        ({HUGE_N - 3: -1}, HUGE_N - 3, 0),        # unique min near the end
        ({past + 1: -1}, past + 1, 0),            # tie past 2^31
        ({past - 1: -1}, past - 1, 0),            # tie across 2^31
        ({HUGE_N - 1: 5}, past - 1, HUGE_N - 1),  # unique max, last
        ({past: 5}, past - 1, past),              # tie at 2^31 itself
    ]
    try:
        for plants, low, high in steps:
            for where, value in plants.items():
                x[where] = value
            for largest in (False, True):
                got = [getattr(cudareduce, op)(
                    x, method, threads=max(block_sizes(op, x.dtype, method))
                    if largest else None) for op in OPS]
                assert [type(g) for g in got] == [np.int64] * 4, got
                assert [int(g) for g in got] == [low, high, low, high], (
                    plants, largest, got)
    finally:
        x.fill(1)
