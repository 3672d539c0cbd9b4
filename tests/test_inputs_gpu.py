"""Inputs of every kind on the GPU: each protocol x dtype x operator x
method against NumPy on the host copy of fresh random data.

Every test here is marked ``gpu`` (skipped, with the reason, without a
device).  The GPU libraries are imported lazily, by the fixtures ``cupy``,
``torch`` (both in conftest.py), ``numba_cuda`` and ``jax``: collecting
this file needs none of them, and on a GPU machine a missing one is
reported as a skip (which ``.ci/gpu-check`` fails).

Protocols (``to_input`` makes each from a host array)
    cupy          CuPy array, ``__cuda_array_interface__`` (CAI) v3
    torch         PyTorch CUDA tensor, read from its attributes as its CAI
                  (v2, which names no stream) would give them
    torch-cai     the same behind an empty torch.Tensor subclass
                  (``cai_tensor``): through PyTorch's own CAI
    numba         Numba device array (CAI v3)
    torch-dlpack  PyTorch CUDA tensor behind ``DLPackOnly``: DLPack only
    jax-dlpack    JAX GPU array behind ``DLPackOnly``.  Generated only
                  when JAX imports and sees a GPU (``jax_with_gpu``): the
                  project allows no skipped test on the GPU machine, so on
                  one whose JAX is CPU-only these cases do not exist rather
                  than being skipped.
    numpy         the host path

The grids: CuPy gets every method x operator x dtype at the edge sizes
(``EDGE_SIZES``) and a subset at 2^20 + 3; the other protocols every
operator x dtype at a few (method, size) pairs.

What "like NumPy" means here (``check_reduction``):
- the result is a NumPy scalar of NumPy's result dtype (``result_dtype``);
- integer results (sums, and means into an integer ``dtype=``) equal
  NumPy's exactly;
- min and max equal NumPy's exactly;
- float sums and means are within a stated bound of the exact value
  (``float_error_bound``): |got - exact| <= (D + 2) eps_acc sum|x| +
  eps_result |exact| for a sum (over n for a mean, plus one rounding of
  the quotient), D the longest chain of additions of the method's plan
  (``test_sum_gpu.longest_addition_chain``), eps_acc the accumulator's
  epsilon (float32 for float16 input, whose result is float16), the two
  extra additions covering the conversion of each element to the
  accumulator.

The data (``random_values``) is fresh per test from the ``rng`` fixture and
never constant: signed integers of up to 32 bits lean positive and
unsigned ones span their range, so that from 33 elements on their sum
overflows the input type (proving the 64-bit accumulator); int64 and
uint64 span their range, so that their sums wrap, as NumPy's do; floats
are normal with a non-zero mean (float16 scaled so its sum stays finite).
A float bound cannot see one lost element of a long float16 or float32
sum; ``test_sum_gpu``'s integer-valued float sums are exact for that, and
the integer grids here are.

Also here: empty device arrays, NaN in min/max, non-contiguous device
views (CuPy, PyTorch through the CAI and DLPack, and Hypothesis' random
CuPy slices), ``dtype=`` on the device (every method, ``cub`` after the
cast pass where one is needed), pointers that are not device memory, managed memory, DLPack
capsules used twice, and streams: data written on a side stream right
before the call, behind a kernel that spins long enough that a reduction
not ordered after the write reads the zeros that were there.  PyTorch's CAI
(version 2) names no stream, so a PyTorch tensor is read on PyTorch's
current stream (test_torch_streams_gpu.py).
"""
from __future__ import annotations

import ctypes
import functools
import gc
import importlib.util
import math
import os
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudareduce
from support.api_contract import ACCUMULATOR, METHODS
from test_inputs_offline import (CAI, FAKE_POINTER, OPS, REAL_DTYPES,
                                 DLPackOnly, assert_identity,
                                 dtype_argument_allowed, dtype_id, interface,
                                 reduce, result_dtype)
from test_sum_gpu import longest_addition_chain

pytestmark = pytest.mark.gpu

DEFAULT_THREADS = 256
EDGE_SIZES = (1, 33, 1000, 4097)
LARGE_N = 2 ** 20 + 3
# The real dtypes: test_complex_gpu.py checks complex ones.
SUPPORTED_DTYPES = DTYPE_ARGUMENTS = REAL_DTYPES
FLOATS = tuple(d for d in SUPPORTED_DTYPES if d.kind == "f")

# A kernel that keeps its stream busy this many clock cycles (tens of ms at
# an H100's clock) before the producer's write: a reduction not ordered
# after the write reads the zeros that were there before.
SPIN_CYCLES = 100_000_000
CUPY_SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""

# --- the GPU libraries, imported on first use ----------------------------------

@pytest.fixture(scope="session")
def numba_cuda():
    pytest.importorskip("numba")
    from numba import cuda
    return cuda


@functools.lru_cache(maxsize=None)
def jax_with_gpu():
    """JAX, set up for these tests (64-bit types on, no preallocation of
    most of the GPU's memory), if it imports and sees a GPU; else None.
    Called at collection (``pytest_generate_tests``), and only imports JAX
    where it is installed."""
    if importlib.util.find_spec("jax") is None:
        return None
    # Before JAX's first import: its default takes 75% of the GPU memory.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        if not jax.devices("gpu"):
            return None
    except Exception:  # noqa: BLE001 - no GPU backend: no JAX cases
        return None
    return jax


def test_jax_cases_exist_where_jax_is_installed():
    # The jax-dlpack cases are generated only where JAX sees a GPU: on a
    # GPU machine with JAX installed they must not vanish silently.
    pytest.importorskip("jax")
    assert jax_with_gpu() is not None, "JAX is installed but sees no GPU"


@pytest.fixture(scope="session")
def jax():
    jax = jax_with_gpu()
    assert jax is not None, "jax cases are generated only where JAX has a GPU"
    return jax


# --- protocols -------------------------------------------------------------------

def _cupy_array(request, host):
    return request.getfixturevalue("cupy").asarray(host)


def _torch_tensor(request, host):
    torch = request.getfixturevalue("torch")
    return torch.from_numpy(host).to("cuda")


@functools.cache
def cai_tensor(torch):
    """An empty torch.Tensor subclass: cudareduce reads only torch.Tensor
    itself from its attributes, so this one goes through PyTorch's
    ``__cuda_array_interface__``."""
    return type("CaiTensor", (torch.Tensor,), {})


def _torch_cai(request, host):
    tensor = _torch_tensor(request, host)
    return tensor.as_subclass(cai_tensor(request.getfixturevalue("torch")))


def _numba_array(request, host):
    return request.getfixturevalue("numba_cuda").to_device(host)


def _torch_dlpack(request, host):
    return DLPackOnly(_torch_tensor(request, host))


def _jax_dlpack(request, host):
    jax = request.getfixturevalue("jax")
    return DLPackOnly(jax.device_put(host, jax.devices("gpu")[0]))


def _numpy_array(request, host):
    return host


CONVERTERS = {
    "cupy": _cupy_array,
    "torch": _torch_tensor,
    "torch-cai": _torch_cai,
    "numba": _numba_array,
    "torch-dlpack": _torch_dlpack,
    "jax-dlpack": _jax_dlpack,
    "numpy": _numpy_array,
}
DEVICE_PROTOCOLS = ("cupy", "torch", "torch-cai", "numba", "torch-dlpack")
# CuPy has a grid of its own (test_cupy_grid).
OTHER_PROTOCOLS = ("torch", "torch-cai", "numba", "torch-dlpack", "numpy")


def pytest_generate_tests(metafunc):
    """``protocol``: the protocols but CuPy; ``device_protocol``: those
    that reduce device memory in place.  Each with jax-dlpack where JAX
    has a GPU (see the module docstring)."""
    for name, protocols in (("protocol", OTHER_PROTOCOLS),
                            ("device_protocol", DEVICE_PROTOCOLS)):
        if name in metafunc.fixturenames:
            if jax_with_gpu() is not None:
                protocols += ("jax-dlpack",)
            metafunc.parametrize(name, protocols)


@pytest.fixture
def to_input(request):
    """``to_input(protocol, host)``: the input object of `protocol` holding
    a copy of the host array (made C-contiguous first)."""
    def convert(protocol: str, host: np.ndarray):
        return CONVERTERS[protocol](request, np.ascontiguousarray(host))
    return convert


# --- data and the reference ----------------------------------------------------

def random_values(rng, dtype, n: int) -> np.ndarray:
    """Fresh values of `dtype`, never constant (see the module docstring)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.6
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low = info.min // 4 if dtype.kind == "i" and dtype.itemsize <= 4 \
            else info.min
        x = rng.integers(low, info.max, size=n, dtype=dtype, endpoint=True)
        if dtype.itemsize <= 4 and n >= 33:
            assert abs(exact_sum(x)) > info.max, \
                "test data: the sum must overflow the input type"
        return x
    scale = min(8.0, 32768.0 / n) if dtype == np.float16 else 1000.0
    return ((rng.standard_normal(n) + 0.25) * scale).astype(dtype)


def exact_sum(host: np.ndarray):
    """The exact sum: a Python int for integers and bool (64-bit values
    summed as 32-bit halves, without overflow below 2^21 elements), else
    math.fsum's correctly rounded float."""
    if host.dtype.kind in "biu":
        x = host.reshape(-1)
        if x.dtype.kind == "b" or x.dtype.itemsize < 8:
            x = x.astype(np.int64)
        high = int(np.sum(x >> 32, dtype=np.int64))
        low = int(np.sum(x & 0xFFFF_FFFF, dtype=np.int64))
        return (high << 32) + low
    return math.fsum(host.astype(np.float64).reshape(-1).tolist())


def float_error_bound(op: str, host: np.ndarray, result: np.dtype,
                      method: str, values: np.ndarray | None = None) -> float:
    """The bound of the module docstring for a float `result`; `values`:
    the elements as summed, if not `host` itself (cast to a dtype=)."""
    values = host if values is None else values
    n = host.size
    eps_acc = float(np.finfo(ACCUMULATOR[result]).eps)
    eps_result = float(np.finfo(result).eps)
    depth = longest_addition_chain(method, n, DEFAULT_THREADS,
                                   host.dtype) + 2
    abs_sum = float(np.sum(np.abs(values.astype(np.float64))))
    magnitude = abs(float(exact_sum(values)))
    bound = depth * eps_acc * abs_sum + eps_result * magnitude
    if op == "mean":
        bound = bound / n + (eps_acc + eps_result) * magnitude / n
    return bound


def check_reduction(op: str, host: np.ndarray, got, method: str, *,
                    override=None, note: str = ""):
    """`got` is cudareduce.<op>(the device copy of `host`, method,
    dtype=override) as the module docstring defines "like NumPy"."""
    want_type = result_dtype(op, host.dtype, override)
    assert type(got) is want_type.type, (
        f"{op} of {host.dtype}: {type(got).__name__}, NumPy gives "
        f"{want_type} {note}")
    if op in ("min", "max"):
        want = getattr(np, op)(host)
        assert got == want, f"{op}: got {got!r}, NumPy {want!r} {note}"
        return
    if want_type.kind in "biu":
        # Integers, and bool (a logical or): exactly NumPy's.
        numpy_op = np.sum if op == "sum" else np.mean
        want = numpy_op(host, dtype=override)
        assert int(got) == int(want), (
            f"{op}: got {got!r}, NumPy {want!r} {note}")
        return
    # NumPy casts each element to dtype= before it sums (float16 rounds).
    values = host if override is None else host.astype(override)
    exact = exact_sum(values)
    reference = exact if op == "sum" else exact / host.size
    bound = float_error_bound(op, host, want_type, method, values)
    error = abs(float(got) - float(reference))
    assert error <= bound, (
        f"{op}: |{got!r} - exact {float(reference)!r}| = {error:.3g} > "
        f"bound {bound:.3g} ({method}, n={host.size}) {note}")


def synchronize(cupy):
    cupy.cuda.runtime.deviceSynchronize()


# --- the CuPy grid ------------------------------------------------------------

@pytest.mark.parametrize("n", EDGE_SIZES, ids=lambda n: f"n{n}")
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPS)
def test_cupy_grid(cupy, rng, seed_note, op, method, dtype, n):
    host = random_values(rng, dtype, n)
    got = reduce(op, cupy.asarray(host), method)
    check_reduction(op, host, got, method, note=seed_note)


LARGE_METHODS = ("interleaved_divergent", "multi_element", "fast", "cub")


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("method", LARGE_METHODS)
@pytest.mark.parametrize("op", OPS)
def test_cupy_large(cupy, rng, seed_note, op, method, dtype):
    host = random_values(rng, dtype, LARGE_N)
    got = reduce(op, cupy.asarray(host), method)
    check_reduction(op, host, got, method, note=seed_note)


# --- the other protocols --------------------------------------------------------

# A protocol's parser hands the same (pointer, layout, dtype) to every
# operator and method, so each dtype meets each protocol once per operator,
# the operators paired with methods and sizes (4 cases, not 4 x 4).
PROTOCOL_CASES = [pytest.param(op, method, n, id=f"{op}-{method}-n{n}")
                  for op, (method, n) in zip(OPS, [
                      ("fast", 1), ("interleaved_divergent", 33),
                      ("multi_element", 1000), ("cub", 4097)])]


@pytest.mark.parametrize("op, method, n", PROTOCOL_CASES)
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
def test_protocol_grid(to_input, rng, seed_note, protocol, op, dtype, method,
                       n):
    host = random_values(rng, dtype, n)
    got = reduce(op, to_input(protocol, host), method)
    check_reduction(op, host, got, method, note=f"({protocol}) {seed_note}")


# One operator per dtype, in turn: every operator meets every protocol.
PROTOCOL_LARGE_CASES = [
    pytest.param(OPS[k % len(OPS)], dtype,
                 id=f"{OPS[k % len(OPS)]}-{dtype_id(dtype)}")
    for k, dtype in enumerate(SUPPORTED_DTYPES)]


@pytest.mark.parametrize("op, dtype", PROTOCOL_LARGE_CASES)
def test_protocol_large(to_input, rng, seed_note, protocol, op, dtype):
    host = random_values(rng, dtype, LARGE_N)
    got = reduce(op, to_input(protocol, host))
    check_reduction(op, host, got, "fast", note=f"({protocol}) {seed_note}")


# --- empty device arrays ----------------------------------------------------------

@pytest.mark.parametrize("shape", [(0,), (3, 0)], ids=str)
@pytest.mark.parametrize("dtype", [np.int16, np.uint64, np.float16],
                         ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_empty_device_array_gives_numpys_identity(to_input, device_protocol,
                                                  op, dtype, shape):
    # sum 0, mean NaN with NumPy's RuntimeWarning, min/max NumPy's
    # ValueError (assert_identity), with the result dtypes of NumPy.
    obj = to_input(device_protocol, np.zeros(shape, dtype))
    assert_identity(op, dtype, lambda: reduce(op, obj))


# --- NaN ------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["first", "middle", "last", "all"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max_propagate_nan_on_device(cupy, rng, seed_note, op, dtype,
                                         method, where):
    n = 4097
    host = random_values(rng, dtype, n)
    # Infinities of both signs elsewhere: NaN must win over them too.
    host[[n // 3, 2 * n // 3]] = [-np.inf, np.inf]
    index = {"first": 0, "middle": n // 2, "last": n - 1,
             "all": slice(None)}[where]
    host[index] = np.nan
    assert np.isnan(getattr(np, op)(host))
    got = reduce(op, cupy.asarray(host), method)
    assert type(got) is dtype.type and np.isnan(got), (
        f"{op} with NaN at {where}: {got!r} {seed_note}")


# --- non-contiguous device views --------------------------------------------------

BASE_N = 4800       # = 40 * 120 = 8 * 10 * 60

# name: (view of a NumPy or CuPy array given the module, C-contiguous?)
ARRAY_VIEWS = {
    "step-2": (lambda xp, a: a[::2], False),
    "step-3-from-5": (lambda xp, a: a[5::3], False),
    "reversed": (lambda xp, a: a[::-1], False),
    "offset-slice": (lambda xp, a: a[7:-5], True),
    "transpose-2d": (lambda xp, a: a.reshape(40, 120).T, False),
    "column-block": (lambda xp, a: a.reshape(40, 120)[3:, 2:-3:4], False),
    "negative-2d": (lambda xp, a: a.reshape(40, 120)[::-2, ::-3], False),
    "3d-permuted": (lambda xp, a: a.reshape(8, 10, 60).transpose(2, 0, 1)
                    [::2], False),
    "broadcast": (lambda xp, a: xp.broadcast_to(a[:300], (5, 300)), False),
}
# PyTorch has no negative steps.
TORCH_VIEWS = {
    "step-2": (lambda t: t[::2], False),
    "step-3-from-5": (lambda t: t[5::3], False),
    "offset-slice": (lambda t: t[7:-5], True),
    "transpose-2d": (lambda t: t.reshape(40, 120).T, False),
    "column-block": (lambda t: t.reshape(40, 120)[3:, 2:-3:4], False),
    "3d-permuted": (lambda t: t.reshape(8, 10, 60).permute(2, 0, 1)[::2],
                    False),
    "broadcast": (lambda t: t[:300].expand(5, 300), False),
}
# One per item size the gather handles.
VIEW_DTYPES = tuple(np.dtype(d) for d in (np.int8, np.float16, np.int32,
                                          np.float64))
# CuPy views: every method and operator (the gather feeds each kernel);
# PyTorch's, through two protocols, the fast path and the reference.
VIEW_METHODS = ("fast", "cub")
VIEW_OPS = ("sum", "max")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("view", ARRAY_VIEWS)
def test_cupy_views(cupy, rng, seed_note, view, dtype, op, method):
    make, contiguous = ARRAY_VIEWS[view]
    host = random_values(rng, dtype, BASE_N)
    host_view = make(np, host)
    device_view = make(cupy, cupy.asarray(host))
    assert device_view.flags.c_contiguous == contiguous
    got = reduce(op, device_view, method)
    check_reduction(op, host_view, got, method, note=seed_note)


@pytest.mark.parametrize("method", VIEW_METHODS)
@pytest.mark.parametrize("op", VIEW_OPS)
@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("view", TORCH_VIEWS)
@pytest.mark.parametrize("via", ["attributes", "cai", "dlpack"])
def test_torch_views(torch, rng, seed_note, via, view, dtype, op, method):
    make, contiguous = TORCH_VIEWS[view]
    host = random_values(rng, dtype, BASE_N)
    host_view = make(torch.from_numpy(host)).numpy()
    device_view = make(torch.from_numpy(host).to("cuda"))
    assert device_view.is_contiguous() == contiguous
    obj = {"attributes": device_view,
           "cai": device_view.as_subclass(cai_tensor(torch)),
           "dlpack": DLPackOnly(device_view)}[via]
    got = reduce(op, obj, method)
    check_reduction(op, host_view, got, method, note=f"({via}) {seed_note}")
    if via == "attributes":
        # The same layout as PyTorch's interface gives: the same bits.
        through_cai = reduce(op, device_view.as_subclass(cai_tensor(torch)),
                             method)
        assert got.tobytes() == through_cai.tobytes(), seed_note


TORCH_SHAPES = {
    "empty": lambda t: t[:0],
    "empty-2d": lambda t: t[:0].reshape(0, 4),
    "one": lambda t: t[:1],
    "size-1-dims": lambda t: t[:40].reshape(1, 40, 1),
    "size-1-dim-transposed": lambda t: t[:4].reshape(4, 1).T,
    "scalar": lambda t: t[3],
}


@pytest.mark.parametrize("shape", TORCH_SHAPES)
def test_torch_tensor_read_without_its_interface(torch, rng, monkeypatch,
                                                 shape):
    """A torch.Tensor itself is read from its attributes: with its
    ``__cuda_array_interface__`` broken, it still sums as NumPy does,
    while a subclass, which goes through the interface, meets the break."""
    make = TORCH_SHAPES[shape]
    host = random_values(rng, np.dtype(np.float32), 64)
    tensor = make(torch.from_numpy(host).to("cuda"))
    subclassed = tensor.as_subclass(cai_tensor(torch))

    def broken(self):
        raise LookupError("read through __cuda_array_interface__")

    monkeypatch.setattr(torch.Tensor, "__cuda_array_interface__",
                        property(broken))
    got = cudareduce.sum(tensor)
    check_reduction("sum", make(torch.from_numpy(host)).numpy(), got, "fast")
    with pytest.raises(LookupError, match="read through"):
        cudareduce.sum(subclassed)


def test_torch_tensor_that_requires_grad_raises_pytorch_error(torch):
    """Not read from its attributes: PyTorch's interface refuses it, and
    its error reaches the caller, as before the direct read existed."""
    tensor = torch.ones(8, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        cudareduce.sum(tensor)
    assert cudareduce.sum(tensor.detach()) == np.float32(8)


def test_torch_tensor_on_the_host_takes_the_host_path(torch):
    tensor = torch.arange(10, dtype=torch.int32)
    assert cudareduce.sum(tensor) == 45


@st.composite
def strided_views(draw):
    """A shape of 1 to 3 dimensions, a slice per dimension (any start,
    stop and step, negative ones included) and an order of the axes."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 24)) for _ in range(ndim))
    bounds = st.one_of(st.none(), st.integers(-30, 30))
    index = tuple(slice(draw(bounds), draw(bounds),
                        draw(st.sampled_from([None, 1, 2, 3, -1, -2, -5])))
                  for _ in range(ndim))
    order = tuple(draw(st.permutations(range(ndim))))
    return shape, index, order


@settings(max_examples=150, deadline=None)
@given(case=strided_views(), seed=st.integers(0, 2 ** 32 - 1))
def test_random_cupy_views_reduce_like_numpy(cupy, session_seed, case, seed):
    shape, index, order = case
    rng = np.random.default_rng([session_seed, seed])
    host = rng.integers(-2 ** 40, 2 ** 40, size=shape, dtype=np.int64)
    host_view = host[index].transpose(order)
    device_view = cupy.asarray(host)[index].transpose(order)
    note = f"(shape {shape}, index {index}, axes {order}, seed {seed})"
    got = cudareduce.sum(device_view)
    assert type(got) is np.int64 and got == np.sum(host_view), note
    if host_view.size == 0:
        with pytest.raises(ValueError, match="zero-size array"):
            cudareduce.max(device_view)
    else:
        assert cudareduce.max(device_view) == np.max(host_view), note


def _cupy_windows(request):
    cupy = request.getfixturevalue("cupy")
    base = cupy.asarray(np.arange(64, dtype=np.int32))
    return cupy.lib.stride_tricks.as_strided(base, shape=(15, 8),
                                             strides=(16, 4))


def _torch_windows(request):
    torch = request.getfixturevalue("torch")
    return torch.arange(64, dtype=torch.int32, device="cuda").unfold(0, 8, 4)


OVERLAPPING_VIEWS = {
    "cupy-as-strided": _cupy_windows,
    "torch-unfold": _torch_windows,
    "torch-unfold-dlpack": lambda request: DLPackOnly(_torch_windows(request)),
}


# The same windows on the host, by NumPy: every position counts.
WINDOWS = np.lib.stride_tricks.as_strided(np.arange(64, dtype=np.int32),
                                          shape=(15, 8), strides=(16, 4))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("view", OVERLAPPING_VIEWS)
def test_overlapping_device_view_reduces_like_numpy(request, view, op):
    # Sliding windows, whose positions share memory, are a valid read-only
    # view (docs/usage.md): each position counts, as in NumPy and CuPy.
    obj = OVERLAPPING_VIEWS[view](request)
    got = reduce(op, obj)
    want = getattr(np, op)(WINDOWS)
    assert got.dtype == want.dtype and got == want, (got, want)


# --- streams ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def cupy_spin(cupy):
    """spin(): keeps CuPy's current stream busy for SPIN_CYCLES cycles."""
    kernel = cupy.RawKernel(CUPY_SPIN_SOURCE, "spin")
    return lambda: kernel((1,), (1,), (np.int64(SPIN_CYCLES),))


def stream_values(rng) -> np.ndarray:
    """No zeros: a reduction that runs before the producer's write reads
    the zeros there and returns another sum."""
    return rng.integers(1, 2 ** 40, size=2 ** 22, dtype=np.int64)


class SideStreamWrite(NamedTuple):
    """A CuPy stream-ordering case: `x` holds zeros that `write()` (called
    inside ``with side:``) overwrites with `host`'s values on `side`,
    behind a spin; `other` is a second non-blocking stream."""
    host: np.ndarray
    x: Any
    side: Any
    other: Any
    write: Any


def side_stream_write(cupy, cupy_spin, rng) -> SideStreamWrite:
    host = stream_values(rng)
    values = cupy.asarray(host)
    x = cupy.zeros_like(values)
    synchronize(cupy)
    warm_up(x)
    side = cupy.cuda.Stream(non_blocking=True)

    def write():
        cupy_spin()
        x.data.copy_from_device_async(values.data, values.nbytes, side)
    return SideStreamWrite(host, x, side,
                           cupy.cuda.Stream(non_blocking=True), write)


def warm_up(zeros) -> None:
    """One reduction of the zeros before the side stream's work: the
    library's kept workspace then exists, so that the call under test
    allocates no device or pinned memory (an allocation would synchronize
    the device implicitly and hide a missing wait)."""
    assert int(cudareduce.sum(zeros)) == 0


@pytest.mark.parametrize("argument", ["none", "other-stream", "other-ptr",
                                      "legacy-0", "legacy-1",
                                      "per-thread-2"])
def test_cupy_array_written_on_a_side_stream(cupy, cupy_spin, rng, seed_note,
                                             argument):
    """Written on a non-blocking stream right before the call, inside
    ``with side:``: CuPy's CAI names `side` as its 'stream', which the
    reduction runs on (no stream=) or waits for (stream=)."""
    case = side_stream_write(cupy, cupy_spin, rng)
    other = case.other
    stream = {"none": None, "other-stream": other, "other-ptr": other.ptr,
              "legacy-0": 0, "legacy-1": 1, "per-thread-2": 2}[argument]
    with case.side:
        case.write()
        exported = case.x.__cuda_array_interface__.get("stream")
        got = cudareduce.sum(case.x, stream=stream)
    assert int(got) == int(np.sum(case.host)), (
        f"got {got!r}: not ordered after the write on the side stream "
        f"{case.side.ptr:#x} (CAI 'stream' {exported!r}) {seed_note}")


@pytest.mark.parametrize("argument", ["none", "other-stream"])
def test_cai_stream_key_is_honoured(cupy, cupy_spin, rng, seed_note,
                                    argument):
    # The interface itself, not CuPy's export policy: a v3 dict naming the
    # stream that writes the data.
    case = side_stream_write(cupy, cupy_spin, rng)
    x = case.x
    obj = CAI(interface(shape=x.shape, typestr=x.dtype.str,
                        data=(x.data.ptr, False), stream=case.side.ptr))
    with case.side:
        case.write()
    got = cudareduce.sum(obj,
                         stream=case.other if argument != "none" else None)
    assert int(got) == int(np.sum(case.host)), seed_note


@pytest.mark.parametrize("how", ["current-stream", "stream-object",
                                 "stream-handle", "dlpack",
                                 "dlpack-other-stream"])
def test_torch_tensor_written_on_a_side_stream(torch, rng, seed_note, how):
    """Written on a side stream right before the call.  PyTorch's CAI names
    no stream (version 2): a tensor is read on PyTorch's current stream
    (the side stream), or after it on the caller's stream=; through
    DLPack, PyTorch's __dlpack__(stream=...) orders the consumer's stream
    after its current one (test_torch_streams_gpu.py has every method)."""
    host = stream_values(rng)
    values = torch.from_numpy(host).to("cuda")
    x = torch.zeros_like(values)
    torch.cuda.synchronize()
    warm_up(x)
    side, other = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN_CYCLES)
        x.copy_(values)
        if how == "current-stream":
            got = cudareduce.sum(x)
        elif how == "stream-object":
            got = cudareduce.sum(x, stream=side)
        elif how == "stream-handle":
            got = cudareduce.sum(x, stream=side.cuda_stream)
        elif how == "dlpack":
            got = cudareduce.sum(DLPackOnly(x))
        else:
            got = cudareduce.sum(DLPackOnly(x), stream=other)
    assert int(got) == int(np.sum(host)), (
        f"got {got!r}: not ordered after the write on the side stream "
        f"{seed_note}")


# --- dtype= ----------------------------------------------------------------------------

DTYPE_OVERRIDES = [
    pytest.param(source, target, id=f"{source}-to-{target}")
    for source in SUPPORTED_DTYPES for target in DTYPE_ARGUMENTS
    if dtype_argument_allowed(source, target)]


def override_values(rng, source, target) -> np.ndarray:
    """Values of `source` whose sum|x| fits `target` (and float16), so that
    no partial sum overflows in any accumulator: NumPy accumulates in
    `target` itself, cudareduce in ACCUMULATOR[target]; their results
    agree where nothing overflows."""
    source, target = np.dtype(source), np.dtype(target)
    limit = 10 ** 6
    if target.kind in "iu":
        limit = np.iinfo(target).max
    if np.dtype(np.float16) in (source, target):
        limit = min(limit, 30_000)
    n = min(1000, limit)
    k = limit // n
    if source.kind == "b":
        return rng.random(n) < 0.6
    if source.kind in "iu":
        k = min(k, np.iinfo(source).max)
        low = 0 if source.kind == "u" else -k
        return rng.integers(low, k, size=n, endpoint=True).astype(source)
    return rng.uniform(-k, k, size=n).astype(source)


@pytest.mark.parametrize("method", ["fast", "interleaved_divergent", "cub"])
@pytest.mark.parametrize("source, target", DTYPE_OVERRIDES)
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_dtype_argument_on_device(cupy, rng, seed_note, op, source, target,
                                  method):
    host = override_values(rng, source, target)
    device = cupy.asarray(host)
    got = reduce(op, device, method, dtype=target)
    check_reduction(op, host, got, method, override=target, note=seed_note)


# --- memory that is not the device's --------------------------------------------------

@pytest.mark.parametrize("memory", ["fake-pointer", "numpy-host",
                                    "pinned-host"])
def test_cai_pointer_that_is_not_device_memory_is_a_value_error(cupy, memory):
    # test_inputs_offline sends FAKE_POINTER without a device (CudaError);
    # with one, it and host memory are refused before any kernel reads
    # them (a fault would poison the context).
    host = np.arange(1000, dtype=np.float32)
    pinned = None
    if memory == "fake-pointer":
        pointer = FAKE_POINTER
    elif memory == "numpy-host":
        pointer = host.ctypes.data
    else:
        pinned = cupy.cuda.alloc_pinned_memory(host.nbytes)
        pointer = pinned.ptr
    obj = CAI(interface(shape=host.shape, data=(pointer, False)))
    for op in OPS:
        with pytest.raises(ValueError, match="memory"):
            reduce(op, obj)
    del pinned
    assert cudareduce.sum(cupy.asarray(host)) == np.sum(host)


@pytest.mark.parametrize("via", ["cai", "dlpack"])
def test_managed_memory_is_reduced_in_place(cupy, rng, seed_note, via):
    host = random_values(rng, np.int64, 4097)
    device = cupy.ndarray(host.shape, host.dtype,
                          cupy.cuda.malloc_managed(host.nbytes))
    device.set(host)
    synchronize(cupy)
    obj = device if via == "cai" else DLPackOnly(device)
    where = (f"(DLPack device {device.__dlpack_device__()}) "
             if via == "dlpack" else "")
    for op in OPS:
        check_reduction(op, host, reduce(op, obj), "fast",
                        note=where + seed_note)


# --- DLPack capsules ---------------------------------------------------------------------

def capsule_name(capsule) -> bytes:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return get_name(capsule)


class OneCapsule:
    """DLPack whose ``__dlpack__`` hands out one capsule, made once, every
    time it is called."""

    def __init__(self, array):
        self.device = array.__dlpack_device__()
        self.capsule = array.__dlpack__()

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("producer", ["torch", "cupy"])
def test_dlpack_capsule_is_consumed_once(request, rng, seed_note, producer):
    host = random_values(rng, np.int32, 1000)
    want = np.sum(host)
    if producer == "torch":
        torch = request.getfixturevalue("torch")
        array = torch.from_numpy(host).to("cuda")
        torch.cuda.synchronize()
    else:
        cupy = request.getfixturevalue("cupy")
        array = cupy.asarray(host)
        synchronize(cupy)
    obj = OneCapsule(array)
    assert capsule_name(obj.capsule) == b"dltensor"
    assert cudareduce.sum(obj) == want, seed_note
    # Consumed: renamed, as DLPack asks of a consumer, and refused again.
    assert capsule_name(obj.capsule) == b"used_dltensor"
    with pytest.raises(ValueError, match="unused DLPack capsule"):
        cudareduce.sum(obj)
    # The capsule was handed back once: its destruction frees nothing else,
    # and the producer's array is intact.
    del obj
    gc.collect()
    assert cudareduce.sum(array) == want, seed_note
    assert cudareduce.sum(DLPackOnly(array)) == want, seed_note
