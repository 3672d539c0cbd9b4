"""The ``--exact`` bench without a GPU: a synthetic document whose figures
come from round parameters, and the fakes ``run_exact`` runs on (the
``--axis`` fake CuPy, ``cudareduce.sum`` into a device out, the harness).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import cudareduce
from support.axis_data import FakeCupy
from support.bench_data import (SYNTHETIC_DATE, SYNTHETIC_DEVICE,
                                SYNTHETIC_VERSION)
from cudareduce.bench import exact
from cudareduce.bench.exact_reference import array_sum, round_exact, value_of
from cudareduce.bench.exact_schema import EXACT_METHODS, make_exact_result
from cudareduce.bench.schema import describe_device

#: Synthetic back-to-back µs of each method at 2^k elements of 4 bytes:
#: a fixed cost and a rate (bytes per µs); float64 reads twice the bytes.
RATES = {"fast": (2.0, 3.0e6), "exact": (3.0, 2.95e6), "cub": (3.0, 2.9e6),
         "cub_gpu_to_gpu": (8.0, 2.0e6)}
READ = (1.5, 3.1e6)
#: How much slower exact is on the synthetic wide data: past every
#: target, which holds normal data alone.
WIDE_SLOWER = 3.0


def read_us(nbytes: int) -> float:
    return READ[0] + nbytes / READ[1]


def method_us(method: str, nbytes: int) -> float:
    fixed, rate = RATES[method]
    return fixed + nbytes / rate


def exact_document(sizes=(1 << 20, 1 << 24, 1 << 28),
                   dtypes=("float32", "float64"),
                   outcome: Callable[[str, str, str, int], dict] | None = None,
                   kinds=("normal", "wide")) -> dict:
    """A valid ``--exact`` document: every method timed by :data:`RATES`
    (on wide data, exact at :data:`WIDE_SLOWER` times its time) unless
    `outcome(method, dtype, kind, n)` gives other keyword arguments of
    make_exact_result."""
    results, probes = [], {}
    for dtype, kind, n in ((d, k, n) for d in dtypes for k in kinds
                           for n in sizes):
        itemsize = np.dtype(dtype).itemsize
        nbytes = n * itemsize
        probes[nbytes] = {"bytes": nbytes,
                          "read_cold_us": 1.2 * read_us(nbytes),
                          "read_batch_us": read_us(nbytes)}
        for method in EXACT_METHODS:
            us = method_us(method, nbytes)
            if kind == "wide" and method == "exact":
                us *= WIDE_SLOWER
            figures = {"cold_us": 1.2 * us, "batch_us": us, "batch": 4,
                       "reps": 20, "correct": True}
            if outcome is not None:
                figures = outcome(method, dtype, kind, n) or figures
            results.append(make_exact_result(
                method, dtype, kind, n,
                floor_cold_us=probes[nbytes]["read_cold_us"],
                floor_batch_us=probes[nbytes]["read_batch_us"],
                **figures))
    return {"kind": "exact", "schema": 1,
            "cudareduce_version": SYNTHETIC_VERSION, "date": SYNTHETIC_DATE,
            "device": describe_device(SYNTHETIC_DEVICE),
            "software": {"numpy": "2.4.6", "cupy": "13.6.0", "torch": None,
                         "gpu_to_gpu_cccl": "3.2.1"},
            "timing": {"method": exact.EXACT_TIMING_METHOD},
            "floor": {"empty_cold_us": 3.0, "empty_batch_us": 2.0},
            "probes": [probes[b] for b in sorted(probes)],
            "results": results}


#: Fake GPU ms of one call of each method.
FAKE_MS = {"fast": 0.5, "exact": 0.52, "cub": 0.55, "cub_gpu_to_gpu": 0.8}


def rounded_exactly(x: np.ndarray) -> np.ndarray:
    """The exact sum of `x` rounded once to its dtype."""
    name = x.dtype.name
    bits, _ = round_exact(array_sum(x), name)
    return np.asarray(float(value_of(bits, name)), x.dtype)


class FakeHarness:
    """:class:`cudareduce.bench.exact.GpuToGpu` on the fake CuPy: a
    float64 sum rounded to the dtype, at FAKE_MS."""

    cccl = "3.2.1"

    def __init__(self, path: str) -> None:
        self.path = path

    def takes(self, dtype: str) -> bool:
        return dtype in ("float32", "float64")

    def sum(self, x: Any, out: Any, stream: Any) -> Any:
        cupy = x.cupy
        assert stream is cupy.stream and cupy.current == [cupy.stream]
        cupy.log.append(("cub_gpu_to_gpu", x.size))
        cupy.clock += FAKE_MS["cub_gpu_to_gpu"]
        out[...] = np.sum(np.asarray(x), dtype=np.float64)
        return out


def fake_sum(cupy: FakeCupy, wrong: str | None = None
             ) -> Callable[..., Any]:
    """``cudareduce.sum`` on the fake device, into a device out: exact
    (the exact sum rounded once) with ``exact=True``, else a float64 sum
    rounded to the dtype, at FAKE_MS; the method `wrong` answers the
    float32 sum of the elements in float32 order instead (wrong for
    ``exact``, and off by the sum's magnitude for the others)."""
    def reduce(x: Any, *, out: Any, exact: bool = False,
               method: str = "fast") -> Any:
        assert cupy.current == [cupy.stream], "not on the one stream"
        name = "exact" if exact else method
        assert type(out).__module__ == "cupy" and out.shape == ()
        cupy.log.append(("cudareduce.sum", name))
        cupy.clock += FAKE_MS[name]
        data = np.asarray(x)
        if name == wrong:
            out[...] = 2 * np.sum(data, dtype=np.float64) + 1 \
                if name != "exact" else np.sum(data.astype(np.float32))
        elif exact:
            out[...] = rounded_exactly(data)
        else:
            out[...] = np.sum(data, dtype=np.float64)
        return out
    return reduce


@pytest.fixture
def fake_exact_device(fake_axis_device: FakeCupy,  # noqa: F811 - a fixture
                      monkeypatch) -> FakeCupy:
    """``run_exact`` on the ``--axis`` fake CuPy: ``cudareduce.sum`` is
    :func:`fake_sum`'s, the harness :class:`FakeHarness`, the device's
    description the synthetic one."""
    monkeypatch.setattr(cudareduce, "sum", fake_sum(fake_axis_device))
    monkeypatch.setattr(exact, "GpuToGpu", FakeHarness)
    monkeypatch.setattr(exact, "device_info",
                        lambda: dict(SYNTHETIC_DEVICE))
    return fake_axis_device
