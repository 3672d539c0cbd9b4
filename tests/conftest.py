"""Test set-up shared by every module: the device probe and the random seeds.

Device
    Whether a CUDA device is usable is decided once per session, by the
    library itself: a one-element ``cudareduce.sum``.  A ``CudaError`` means
    no device; its message becomes the skip reason of every test marked
    ``gpu`` ("no CUDA device: <message>").  Tests marked ``no_gpu`` check the
    in-process behaviour without a device; where a device is present they
    are deselected rather than skipped, because ``.ci/gpu-check`` fails on
    any skipped test (their subject is covered there by a subprocess that
    hides the device).

Random data
    Fresh every session, reproducible from a failure report: the session
    seed is printed in the report header and named in failure messages, and
    ``CUDAREDUCE_TEST_SEED=<seed>`` replays a session.  The ``rng`` fixture
    derives each test's generator from the session seed and the test's name,
    so one test replays alone as well.

Output
    A skipped test prints no progress letter (a run without a GPU skips
    most of the suite); the reasons are summed up once, a line each, at
    the end.
"""
from __future__ import annotations

import collections
import json
import os
import secrets
import zlib

import numpy as np
import pytest

import cudareduce

SEED_VARIABLE = "CUDAREDUCE_TEST_SEED"

_session_seed_key = pytest.StashKey[int]()
_device_error_key = pytest.StashKey["str | None"]()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "no_gpu: checks the behaviour without a CUDA device (deselected "
        "where one is present)")
    value = os.environ.get(SEED_VARIABLE)
    config.stash[_session_seed_key] = (int(value, 0) if value
                                       else secrets.randbits(64))


def _device_error(config) -> str | None:
    """The probe's CudaError message, or None when a device is usable."""
    if _device_error_key not in config.stash:
        try:
            cudareduce.sum(np.ones(1, np.float32))
            error = None
        except cudareduce.CudaError as exc:
            error = str(exc)
        config.stash[_device_error_key] = error
    return config.stash[_device_error_key]


def _device_name() -> str:
    # Informational only: the report header names the GPU the suite ran on.
    try:
        return cudareduce._cudareduce.device_info()["name"]
    except Exception as exc:  # noqa: BLE001 - a header must not fail
        return f"(name unknown: {exc})"


def pytest_report_header(config):
    seed = config.stash[_session_seed_key]
    error = _device_error(config)
    device = (f"none, gpu tests skipped: {error}" if error
              else _device_name())
    return [
        f"cudareduce {cudareduce.__version__} from "
        f"{os.path.dirname(cudareduce.__file__)}",
        f"CUDA device: {device}",
        f"random seed: {seed} (replay: {SEED_VARIABLE}={seed})",
    ]


def pytest_collection_modifyitems(config, items):
    error = _device_error(config)
    if error is not None:
        skip = pytest.mark.skip(reason=f"no CUDA device: {error}")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
        return
    deselected = [item for item in items if "no_gpu" in item.keywords]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if "no_gpu" not in item.keywords]


# Every deselected test, for .ci/gpu-check, which allows only the no_gpu
# ones (a -k or -m that shrinks the run must not pass as a green one).
_deselected_key = pytest.StashKey[list]()
DESELECTED_REPORT_VARIABLE = "CUDAREDUCE_DESELECTED_REPORT"


def pytest_deselected(items):
    config = items[0].config if items else None
    if config is not None:
        config.stash.setdefault(_deselected_key, []).extend(
            [item.nodeid, "no_gpu" in item.keywords,
             "whole_gpu" if "whole_gpu" in item.keywords else "shared"]
            for item in items)


def pytest_sessionfinish(session):
    """Writes the report where the tests were collected: in this process,
    or in each pytest-xdist worker (all collect the same tests; the
    controller collects none and writes nothing).  Each writer replaces
    the file whole, so none reads or leaves a half-written one."""
    config = session.config
    path = os.environ.get(DESELECTED_REPORT_VARIABLE)
    controller = (config.pluginmanager.hasplugin("dsession")
                  and not hasattr(config, "workerinput"))
    if path and not controller:
        partial = f"{path}.{os.getpid()}"
        with open(partial, "w", encoding="utf-8") as report:
            json.dump(config.stash.get(_deselected_key, []), report)
        os.replace(partial, path)


def pytest_report_teststatus(report, config):
    """No progress letter for a skipped test (its reason is summed up in
    pytest_terminal_summary); an expected failure keeps its own."""
    if report.skipped and not hasattr(report, "wasxfail"):
        return "skipped", "", "SKIPPED"
    return None


def pytest_terminal_summary(terminalreporter):
    """Each skip reason once, with how many tests it skipped."""
    reasons = collections.Counter(
        report.longrepr[2] if isinstance(report.longrepr, tuple)
        else str(report.longrepr)
        for report in terminalreporter.stats.get("skipped", [])
        if not hasattr(report, "wasxfail"))
    if reasons:
        terminalreporter.section("skip reasons", sep="-")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count:6d} skipped: {reason}")


@pytest.fixture(autouse=True)
def first_device_current(request):
    """Every GPU test starts with device 0 current in its thread, as on a
    machine of one GPU.  An earlier test may leave another current: on two
    GPUs, a test found device 1 current, made its data there and its
    threads' streams on device 0 (H100 x2, 2026-11-26).  A test whose
    subject is another current device makes it current itself
    (tests/test_devices_gpu.py)."""
    if request.node.get_closest_marker("gpu") is not None:
        try:
            import cupy  # noqa: PLC0415 - only where GPU tests run
        except ImportError:
            cupy = None
        if cupy is not None and cupy.cuda.runtime.getDevice() != 0:
            cupy.cuda.runtime.setDevice(0)
    yield


@pytest.fixture(scope="session")
def session_seed(pytestconfig) -> int:
    """The session's random seed (see the module docstring)."""
    return pytestconfig.stash[_session_seed_key]


@pytest.fixture(scope="session")
def seed_note(session_seed) -> str:
    """The words a failure message needs to replay the random data."""
    return f"[random data: {SEED_VARIABLE}={session_seed}]"


@pytest.fixture(scope="session")
def device_error(pytestconfig) -> str | None:
    """The device probe's CudaError message; None when a device is usable."""
    return _device_error(pytestconfig)


@pytest.fixture(scope="session")
def cupy():
    """CuPy, imported on first use (a skip where it is missing, which
    ``.ci/gpu-check`` fails)."""
    return pytest.importorskip("cupy")


@pytest.fixture(scope="session")
def torch():
    """PyTorch, imported on first use, with a CUDA device."""
    torch = pytest.importorskip("torch")
    assert torch.cuda.is_available(), "torch sees no CUDA device"
    return torch


@pytest.fixture
def rng(request, session_seed) -> np.random.Generator:
    """A generator seeded from the session seed and this test's name; the
    seed is printed (shown with a failure) and recorded as a property."""
    name = f"{request.node.path.name}::{request.node.name}"
    entropy = [session_seed, zlib.crc32(name.encode())]
    request.node.user_properties.append(("rng_entropy", str(entropy)))
    print(f"rng: default_rng({entropy}) "
          f"({SEED_VARIABLE}={session_seed} replays it)")
    return np.random.default_rng(entropy)
