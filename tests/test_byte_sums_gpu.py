"""Sums and means of int8 and uint8 on the GPU, exactly NumPy's.

The fast method adds the bytes of a thread's 16-byte loads four at a time
by __dp4a into a 32-bit lane, widened to the accumulator once a turn
(cuda/kernels/byte_sums.cuh); the head before the first 16-byte boundary
and the tail after the last vector it reads element by element.  So:

- values over the type's whole range, its extremes every third element,
  and arrays of one extreme throughout (a lane's largest magnitude);
- arrays starting at byte 0 to 3 of a larger buffer, so that the head is
  0, 15, 14 or 13 elements;
- sizes of one element, under a vector, just past 4,096, 2^20 + 3, and
  one where every thread of the fast grid takes many turns;
- sum, nansum, mean and nanmean (of integers NumPy's nan forms are the
  plain ones), by ``method="fast"`` and by default, of device and of host
  arrays.

Sums are compared exactly (int64 or uint64), and so are means: every
partial sum here is an integer below 2^53, exact in float64 in any order.
"""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce
from support.api_contract import FAST_UNROLL

pytestmark = pytest.mark.gpu

DTYPES = (np.int8, np.uint8)
PHASES = (0, 1, 2, 3)
# "long" is a size where each thread of the fast grid takes LONG_TURNS
# turns of FAST_UNROLL 16-byte loads (long_size).
SIZES = (1, 15, 4097, 2 ** 20 + 3, "long")
LONG_TURNS = 16
OPS = {"sum": np.sum, "nansum": np.nansum, "mean": np.mean,
       "nanmean": np.nanmean}
METHOD_CALLS = {"fast": {"method": "fast"}, "default": {}}


def long_size() -> int:
    """LONG_TURNS turns of every thread of the fast grid, plus a tail."""
    sm_count = cudareduce._cudareduce.device_info()["sm_count"]
    grid = cudareduce.plan(2 ** 40, "fast", dtype=np.int8,
                           sm_count=sm_count)[0]
    return grid.blocks * grid.threads * FAST_UNROLL * 16 * LONG_TURNS + 5


def extremes(dtype) -> tuple[int, int]:
    """The type's lowest and highest value."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


CASES = [pytest.param((dtype, n), id=f"{np.dtype(dtype)}-n{n}")
         for dtype in DTYPES for n in SIZES]


@pytest.fixture(scope="module", params=CASES)
def buffer(request, session_seed, cupy):
    """(dtype, n, host buffer, device buffer): n + 3 elements, so that an
    array of n starts at each phase; values over the whole range, the
    low and the high extreme in turn every third element."""
    dtype, n = request.param
    if n == "long":
        n = long_size()
    rng = np.random.default_rng([session_seed, np.dtype(dtype).num, n])
    low, high = extremes(dtype)
    host = rng.integers(low, high, size=n + 3, dtype=dtype, endpoint=True)
    host[0::6] = low
    host[3::6] = high
    host.flags.writeable = False
    device = cupy.asarray(host)
    yield dtype, n, host, device
    del device
    cupy.get_default_memory_pool().free_all_blocks()


def check_ops(array, host, what: str, seed_note: str = "") -> None:
    """Each of OPS on `array` by each of METHOD_CALLS, exactly NumPy's on
    `host`, in value and type."""
    for op, numpy_op in OPS.items():
        want = numpy_op(host)
        for method, kwargs in METHOD_CALLS.items():
            got = getattr(cudareduce, op)(array, **kwargs)
            assert type(got) is type(want) and got == want, (
                f"{op} of {what}, {method}: got {got!r}, want {want!r} "
                f"{seed_note}")


@pytest.mark.parametrize("source", ["device", "host"])
@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"byte{p}")
def test_byte_sums_and_means_are_numpys(buffer, seed_note, phase, source):
    dtype, n, host, device = buffer
    whole = device if source == "device" else host
    check_ops(whole[phase:phase + n], host[phase:phase + n],
              f"{n} {np.dtype(dtype)} from byte {phase} ({source})",
              seed_note)


@pytest.mark.parametrize("case", CASES)
def test_byte_sums_and_means_of_one_extreme_are_numpys(cupy, case):
    dtype, n = case
    if n == "long":
        n = long_size()
    for value in extremes(dtype):
        whole = cupy.full(n + 3, value, dtype=dtype)
        host = np.full(n, value, dtype=dtype)
        for phase in PHASES:
            check_ops(whole[phase:phase + n], host,
                      f"{n} {np.dtype(dtype)} of {value} from byte {phase}")
