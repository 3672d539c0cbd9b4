"""What the README promises and no other test ran, on the GPU.

- NaN, +inf, -inf and overflow in sum and mean, placed at the first
  element, in a vector lane, at a block edge, in the tail and at the last
  element: NumPy's value and warnings (a NaN element warns nothing, inf -
  inf "invalid value", a float16 sum past its range "overflow").
- DLPack: a non-empty CPU tensor (the host path), and a CUDA tensor whose
  data starts at a byte_offset from its pointer.
- Streams: a Numba stream and an object with ``__cuda_stream__``.
- The stream-ordering tests can fail: a negative control, an interface
  that names no stream reduced on another stream, reads the zeros that
  the producer had not yet overwritten.
- mean divides by exactly n: equal to NumPy's mean, bit for bit, on data
  whose sum is exact, at sizes where n - 1 or n + 1 gives another value.
"""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce
from support.api_contract import METHODS
from support.dlpack_capsules import KDL_CUDA, KDL_INT, Producer
from test_inputs_gpu import (cupy_spin, numba_cuda,  # noqa: F401
                             side_stream_write, synchronize)
from test_inputs_offline import CAI, DLPackOnly, numpy_outcome, same_value

pytestmark = pytest.mark.gpu

N = 5000     # several blocks and vectors at every block size, and a tail


def positions(n: int) -> dict:
    return {"first": 0, "vector-lane": 5, "block-edge": 256,
            "tail": n - 3, "last": n - 1}


SPECIALS = {
    "nan": [np.nan],
    "inf": [np.inf],
    "minus-inf": [-np.inf],
    "inf-and-minus-inf": [np.inf, -np.inf],
}


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("where", list(positions(N)))
@pytest.mark.parametrize("method", METHODS)
def test_nan_and_inf_anywhere_as_numpy(cupy, rng, method, where, special,  # noqa: F811
                                       dtype, op):
    host = rng.integers(-3, 4, size=N).astype(dtype)
    place = positions(N)[where]
    for k, value in enumerate(SPECIALS[special]):
        host[(place + k * 7) % N] = value
    want = numpy_outcome(lambda: getattr(np, op)(host))
    for data in (host, cupy.asarray(host)):
        got = numpy_outcome(lambda: getattr(cudareduce, op)(data, method))
        assert got[1] is want[1] and same_value(got[0], want[0]), (got, want)
        assert got[2] == want[2], (got, want)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("where", list(positions(N)))
@pytest.mark.parametrize("method", METHODS)
def test_float16_overflow_anywhere_warns_as_numpy(cupy, method, where, op):  # noqa: F811
    # Every partial sum stays finite in float32: the float16 sum is what
    # overflows (NumPy's mean sums float16 in float32 and does not).
    host = np.full(N, 20.0, np.float16)
    host[positions(N)[where]] = 60000.0
    want = numpy_outcome(lambda: getattr(np, op)(host))
    got = numpy_outcome(lambda: getattr(cudareduce, op)(cupy.asarray(host),
                                                        method))
    assert got[1] is want[1] and same_value(got[0], want[0]), (got, want)
    assert got[2] == want[2], (got, want)


@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("method", METHODS)
def test_non_empty_cpu_dlpack(rng, method, op):
    host = rng.integers(-1000, 1000, size=N).astype(np.int32)
    got = getattr(cudareduce, op)(DLPackOnly(host), method)
    want = getattr(np, op)(host)
    assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.parametrize("method", METHODS)
def test_dlpack_byte_offset(cupy, method):  # noqa: F811
    x = cupy.arange(1000, dtype=cupy.int32)
    skip = 10
    tensor = Producer(device=(KDL_CUDA, 0), code=KDL_INT, bits=32,
                      shape=(1000 - skip,), data=x.data.ptr,
                      byte_offset=skip * 4)
    got = cudareduce.sum(tensor, method)
    assert int(got) == sum(range(skip, 1000)), got
    assert tensor.deleted == 1


def test_numba_stream(numba_cuda, rng):  # noqa: F811
    host = rng.integers(-1000, 1000, size=N)
    stream = numba_cuda.stream()
    x = numba_cuda.to_device(host, stream=stream)
    got = cudareduce.sum(x, stream=stream)
    assert int(got) == int(np.sum(host))


class CudaStreamProtocol:
    """Any object with ``__cuda_stream__``: (version, cudaStream_t)."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_cuda_stream_protocol_orders_after_the_producer(  # noqa: F811
        cupy, cupy_spin, rng, seed_note):
    case = side_stream_write(cupy, cupy_spin, rng)
    with case.side:
        case.write()
        got = cudareduce.sum(case.x,
                             stream=CudaStreamProtocol(case.other.ptr))
    assert int(got) == int(np.sum(case.host)), seed_note


def test_negative_control_an_unordered_reduction_reads_the_zeros(
        cupy, cupy_spin, rng, seed_note):  # noqa: F811
    # The stream tests' set-up can see a missing wait: an interface that
    # names no stream, reduced on another non-blocking stream while the
    # side stream still spins, runs before the write and sums the zeros.
    case = side_stream_write(cupy, cupy_spin, rng)
    bare = CAI({key: value for key, value in
                case.x.__cuda_array_interface__.items() if key != "stream"})
    with case.side:
        case.write()
        got = cudareduce.sum(bare, stream=case.other.ptr)
    synchronize(cupy)
    want = int(np.sum(case.host))
    assert int(got) != want, (
        f"unordered, yet it saw the write: the spin is too short to show "
        f"a missing wait {seed_note}")
    assert int(cudareduce.sum(case.x)) == want


@pytest.mark.parametrize("n", [1000, 4097, 2 ** 20 + 3])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32,
                                   np.float64], ids=str)
@pytest.mark.parametrize("method", METHODS)
def test_mean_divides_by_exactly_n(cupy, rng, seed_note, method, dtype, n):
    """Integers in [1, 16]: every sum is exact, so the mean is the exact
    sum over n rounded once, as NumPy's is; a tolerance (the other tests'
    relative 1e-6) would accept n +- 1 at 2^20 elements.  float16 is left
    out: its ulp (2^-10 relative) is coarser than 1/n at these sizes."""
    host = rng.integers(1, 16, size=n, endpoint=True).astype(dtype)
    want = np.mean(host)
    total = int(np.sum(host.astype(np.int64)))
    assert all(want != want.dtype.type(total / (n + k)) for k in (-1, 1)), \
        "the data cannot tell n from n +- 1"
    got = cudareduce.mean(cupy.asarray(host), method)
    assert type(got) is type(want) and got == want, (
        f"got {got!r}, NumPy {want!r} (sum {total}, n {n}) {seed_note}")
