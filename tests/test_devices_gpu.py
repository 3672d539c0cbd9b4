"""Arrays on any GPU of the host: a device array is reduced on its own
device, whichever device the caller has made current, and the caller's
current device is current again after the call, whatever its outcome.

Every test walks all (array's device, current device) pairs that the
machine has: on a one-GPU machine that is (0, 0) with device 0 made
current by the caller, on two GPUs four pairs, two of them across
devices.  A pair is a loop inside the test, not a parameter, so that the
grid is the machine's without a test that exists on one machine and is
skipped on another (``.ci/gpu-check`` fails skips).  The checks across
devices (data on one, ``out`` or ``stream=`` on another) are asserted in
the same loops: refused with ValueError where the devices differ, the
right answer where they are the same.

Concurrent calls: one thread a device (two threads on device 0 where the
machine has one), each reducing arrays on its own device with every
method at once, each its own answers.

A DLPack producer is asked for its tensor with the tensor's device
current (PyTorch refuses otherwise), and a device it names that the
machine lacks is a ValueError.

Host arrays go to the current device.  The fast method's workspaces and
the host rings are kept per device (``cuda/memory/kept_list.cuh``), created
on a device's first use.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

import cudareduce
from support.dlpack_capsules import DLPackOnly

pytestmark = pytest.mark.gpu

# Sizes past one block and past the fast method's one-block grid, with a
# tail: the kernels, the workspaces and (strided) the gather all run.
N = 100_003
OPS = ["sum", "argmax", "nanmean", "min"]
METHODS = ["fast", "cub", "unroll_warp"]


@pytest.fixture(autouse=True)
def keep_current_device(cupy):
    """The device current before each test is current after it: the
    tests make others current, and the suite's other tests run on it."""
    current = cupy.cuda.runtime.getDevice()
    yield
    cupy.cuda.runtime.setDevice(current)


def device_pairs(cupy) -> list[tuple[int, int]]:
    """Every (array's device, current device) pair of this machine."""
    count = cupy.cuda.runtime.getDeviceCount()
    assert count >= 1
    return list(itertools.product(range(count), repeat=2))


def on_device(cupy, torch, kind: str, host: np.ndarray, device: int):
    """`host` on GPU `device`, as input kind `kind`."""
    if kind == "cupy":
        with cupy.cuda.Device(device):
            return cupy.asarray(host)
    tensor = torch.from_numpy(host).to(f"cuda:{device}")
    torch.cuda.synchronize(device)
    return tensor if kind == "torch" else DLPackOnly(tensor)


def expected(op: str, host: np.ndarray):
    return getattr(np, op)(host)


def works_or_is_refused(same_device: bool, call, check, refusal: str):
    """`check(call())` where the devices are the same, else `call()` must
    raise ValueError matching `refusal`."""
    if same_device:
        check(call())
    else:
        with pytest.raises(ValueError, match=refusal):
            call()


@pytest.mark.parametrize("kind", ["cupy", "torch", "torch-dlpack"])
def test_device_array_is_reduced_on_its_own_device(cupy, torch, rng, kind):
    host = rng.normal(1.0, 1.0, N).astype(np.float32)
    host[rng.integers(0, N, 7)] = np.nan
    for data_device, current in device_pairs(cupy):
        x = on_device(cupy, torch, kind, host, data_device)
        cupy.cuda.runtime.setDevice(current)
        for op, method in itertools.product(OPS, METHODS):
            got = getattr(cudareduce, op)(x, method)
            want = expected(op, host)
            assert cupy.cuda.runtime.getDevice() == current, (op, method)
            if op in ("sum", "nanmean"):
                want = getattr(np, op)(host.astype(np.float64))
                np.testing.assert_allclose(got, want, rtol=1e-5,
                                           err_msg=f"{op} {method}")
            else:
                assert got == want or (np.isnan(got) and np.isnan(want)), (
                    op, method, data_device, current, got, want)


class CurrentDeviceRecorder(DLPackOnly):
    """DLPackOnly recording, in each __dlpack__ call, the device that
    `current()` says is current."""

    __slots__ = ("current", "seen")

    def __init__(self, array, current):
        super().__init__(array)
        self.current = current
        self.seen = []

    def __dlpack__(self, *args, **kwargs):
        self.seen.append(self.current())
        return super().__dlpack__(*args, **kwargs)


def test_dlpack_producer_is_called_with_its_device_current(cupy, rng):
    # DLPack's consumer stream is one of the data's device, and PyTorch
    # exports a tensor only with its device current.
    host = rng.integers(-9, 9, N).astype(np.int32)
    for data_device, current in device_pairs(cupy):
        with cupy.cuda.Device(data_device):
            x = CurrentDeviceRecorder(cupy.asarray(host),
                                      cupy.cuda.runtime.getDevice)
        cupy.cuda.runtime.setDevice(current)
        assert cudareduce.sum(x) == host.sum()
        assert x.seen == [data_device]
        assert cupy.cuda.runtime.getDevice() == current
    count = cupy.cuda.runtime.getDeviceCount()
    claims = DLPackOnly(cupy.asarray(host), device=(2, count))
    with pytest.raises(ValueError, match=f"CUDA device {count} does not "
                                         f"exist: this machine has {count}"):
        cudareduce.sum(claims)


def test_strided_view_is_gathered_on_its_own_device(cupy, rng):
    host = rng.integers(-1000, 1000, (301, 333)).astype(np.int32)
    view = host.T[::-2, 3:]
    for data_device, current in device_pairs(cupy):
        with cupy.cuda.Device(data_device):
            x = cupy.asarray(host).T[::-2, 3:]
        cupy.cuda.runtime.setDevice(current)
        for method in METHODS:
            assert cudareduce.sum(x, method) == view.sum(), method
            assert cudareduce.argmin(x, method) == view.argmin(), method
        assert cupy.cuda.runtime.getDevice() == current


def test_device_out_must_be_on_the_data_device(cupy, rng):
    host = rng.integers(0, 100, N).astype(np.int64)
    count = cupy.cuda.runtime.getDeviceCount()
    for (data_device, current), out_device in itertools.product(
            device_pairs(cupy), range(count)):
        with cupy.cuda.Device(data_device):
            x = cupy.asarray(host)
        with cupy.cuda.Device(out_device):
            out = cupy.zeros((), np.int64)
        cupy.cuda.runtime.setDevice(current)

        def check(result, out=out, out_device=out_device):
            assert result is out
            with cupy.cuda.Device(out_device):
                assert int(out) == host.sum()

        works_or_is_refused(
            out_device == data_device,
            lambda x=x, out=out: cudareduce.sum(x, out=out), check,
            f"out is on CUDA device {out_device} and the data on device "
            f"{data_device}")
        assert cupy.cuda.runtime.getDevice() == current


def test_empty_device_array_into_a_device_out(cupy):
    # No data to locate: the call runs on out's device.
    for out_device, current in device_pairs(cupy):
        with cupy.cuda.Device(out_device):
            x = cupy.zeros(0, np.float32)
            out = cupy.full((), 7, np.float32)
        cupy.cuda.runtime.setDevice(current)
        assert cudareduce.sum(x, out=out) is out
        with cupy.cuda.Device(out_device):
            out_value = float(out)
        assert out_value == 0.0
        assert cupy.cuda.runtime.getDevice() == current


def test_stream_must_be_of_the_data_device(cupy, rng):
    host = rng.normal(size=N).astype(np.float64)
    for data_device, stream_device in device_pairs(cupy):
        with cupy.cuda.Device(data_device):
            x = cupy.asarray(host)
        with cupy.cuda.Device(stream_device):
            stream = cupy.cuda.Stream(non_blocking=True)
        current = cupy.cuda.runtime.getDevice()
        works_or_is_refused(
            stream_device == data_device,
            lambda x=x, stream=stream: cudareduce.sum(x, stream=stream),
            lambda got: np.testing.assert_allclose(got, host.sum(),
                                                   rtol=1e-12),
            f"a stream of CUDA device {stream_device}, but the call runs on "
            f"device {data_device}")
        assert cupy.cuda.runtime.getDevice() == current


def test_host_array_goes_to_the_current_device(cupy, rng):
    host = rng.integers(-50, 50, (1 << 20) + 5).astype(np.int16)
    for current in range(cupy.cuda.runtime.getDeviceCount()):
        cupy.cuda.runtime.setDevice(current)
        for method in METHODS:
            assert cudareduce.sum(host, method) == host.sum(), method
            assert cudareduce.argmax(host[::-3], method) == (
                host[::-3].argmax()), method
        assert cupy.cuda.runtime.getDevice() == current


def test_concurrent_calls_one_thread_a_device(cupy, rng):
    # Each thread makes its device current, as a user's worker thread
    # does; the other threads' calls run meanwhile, on their devices, with
    # their workspaces and host rings (kept per device).
    count = cupy.cuda.runtime.getDeviceCount()
    devices = list(range(count)) if count > 1 else [0, 0]
    hosts = [rng.integers(-1000, 1000, N + k).astype(np.int64)
             for k in range(len(devices))]
    start = threading.Barrier(len(devices))
    wrong: list[tuple] = []
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            cupy.cuda.runtime.setDevice(devices[k])
            x = cupy.asarray(hosts[k])
            cupy.cuda.runtime.deviceSynchronize()
            start.wait()
            for _ in range(20):
                for method in METHODS:
                    for op, got in (("sum", cudareduce.sum(x, method)),
                                    ("argmin", cudareduce.argmin(
                                        x, method)),
                                    ("host sum", cudareduce.sum(
                                        hosts[k], method))):
                        want = (hosts[k].argmin() if op == "argmin"
                                else hosts[k].sum())
                        if got != want:
                            wrong.append((devices[k], op, method, got,
                                          want))
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)
            start.abort()

    threads = [threading.Thread(target=work, args=(k,))
               for k in range(len(devices))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    assert not wrong, wrong[:5]
