"""The public API without a GPU: names, signatures, argument checking, dtype
rules, empty inputs, and the error a missing device gives.

Every argument error is provoked with a non-empty input, so that a check
made after the first CUDA call would show up here as a CudaError (no GPU)
instead of the expected TypeError or ValueError.
"""
from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import pickle
import pydoc
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudareduce
from support.api_contract import (DEFAULT_METHOD, DEFAULT_THREADS, METHODS,
                                  SUM_RESULT, SUPPORTED_DTYPES, VALID_THREADS,
                                  default_threads, numpy_sum_dtype)

# A CUDA runtime error name, e.g. cudaErrorNoDevice.
CUDA_ERROR_NAME = re.compile(r"\bcudaError[A-Za-z]+\b")

UNSUPPORTED_DTYPES = [
    np.dtype(d) for d in (
        object, "U3", "S3", "datetime64[ns]", "timedelta64[s]",
        [("x", np.int32)])
] + ([np.dtype(np.longdouble), np.dtype(np.clongdouble)]
     if np.dtype(np.longdouble).itemsize not in (4, 8) else [])

BAD_THREAD_VALUES = [0, 3, 32, 63, 65, 100, 2048, 4096, -1, -256, 2 ** 40]
BAD_THREAD_TYPES = [True, False, 256.0, "256", [256]]


def dtype_id(dtype):
    return str(np.dtype(dtype))


def nonempty(dtype=np.float32):
    return np.ones(5, dtype)


# --- names and signatures ---------------------------------------------------

def test_all_lists_the_public_names():
    assert sorted(cudareduce.__all__) == sorted(
        ["CudaError", "Pass", "__version__", "all", "any", "argmax",
         "argmin", "block_sizes", "max", "mean", "methods", "min", "nanargmax", "nanargmin",
         "nanmax", "nanmean", "nanmin", "nanprod", "nansum", "plan", "prod",
         "sum"])
    for name in cudareduce.__all__:
        assert hasattr(cudareduce, name), name


def test_star_import_gives_the_public_names():
    namespace = {}
    exec("from cudareduce import *", namespace)
    assert set(cudareduce.__all__) <= set(namespace)


def test_version_is_the_installed_distributions():
    assert isinstance(cudareduce.__version__, str)
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", cudareduce.__version__)
    try:
        installed = importlib.metadata.version("cudareduce")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("cudareduce is built in place, not installed: "
                    "no distribution metadata to compare with")
    assert cudareduce.__version__ == installed


def test_sum_signature():
    params = inspect.signature(cudareduce.sum).parameters
    # keepdims= (issue 43, wherever it stands) is test_axis.py's, exact=
    # (issue 44) test_exact.py's, devices= (issue 45)
    # test_several_devices_offline.py's.
    assert [p for p in params
            if p not in ("keepdims", "exact", "devices")] == [
        "a", "method", "threads", "dtype", "stream", "axis", "out"]
    assert params["method"].default == DEFAULT_METHOD
    assert params["threads"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["threads"].default is None


def test_default_threads_are_the_specs():
    # The module's constant is the ladder's default; fast has its own.
    assert cudareduce.DEFAULT_THREADS == DEFAULT_THREADS
    for method in METHODS:
        if method == "cub":
            continue    # plans its own launches
        for dtype in ("int8", "float32", "float64"):
            itemsize = np.dtype(dtype).itemsize
            # Both sides of each of fast's byte thresholds.
            for n in (1, (4 << 20) // itemsize - 1, (4 << 20) // itemsize,
                      (16 << 20) // itemsize - 1, (16 << 20) // itemsize,
                      1 << 30):
                got = cudareduce.plan(n, method, dtype=dtype,
                                      sm_count=132)[0].threads
                assert got == default_threads(method, n, itemsize), (
                    method, dtype, n, got)


def test_threads_is_keyword_only():
    with pytest.raises(TypeError):
        cudareduce.sum(np.zeros(0, np.float32), "sequential", 256)


def test_plan_signature():
    params = inspect.signature(cudareduce.plan).parameters
    assert list(params) == ["n", "method", "threads", "dtype", "sm_count"]
    assert params["method"].default == DEFAULT_METHOD
    for name in ("threads", "dtype", "sm_count"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert params["threads"].default is None
    assert np.dtype(params["dtype"].default) == np.float32
    assert params["sm_count"].default is None


def test_pass_fields():
    assert cudareduce.Pass._fields == (
        "n_in", "blocks", "threads", "items_per_thread", "shared_bytes")
    assert issubclass(cudareduce.Pass, tuple)


def test_cuda_error_is_a_runtime_error():
    assert issubclass(cudareduce.CudaError, RuntimeError)
    assert cudareduce.CudaError.__module__ == "cudareduce"
    assert cudareduce.CudaError.__name__ == "CudaError"


# --- methods() --------------------------------------------------------------

def test_methods_in_ladder_order():
    methods = cudareduce.methods()
    assert isinstance(methods, dict)
    assert list(methods) == list(METHODS)


@pytest.mark.parametrize("method", METHODS)
def test_method_description_is_one_nonempty_line(method):
    description = cudareduce.methods()[method]
    assert isinstance(description, str)
    assert description.strip() and "\n" not in description


def test_methods_returns_a_fresh_dict():
    cudareduce.methods().clear()
    assert list(cudareduce.methods()) == list(METHODS)


# --- argument errors of sum -------------------------------------------------

@pytest.mark.parametrize("method", [
    "bogus", "", "MULTI_ELEMENT", "multi-element", " sequential", "sum"])
def test_unknown_method_is_a_value_error_listing_the_methods(method):
    with pytest.raises(ValueError) as info:
        cudareduce.sum(nonempty(), method)
    message = str(info.value)
    assert repr(method) in message
    for name in METHODS:
        assert name in message, f"{name!r} missing from {message!r}"


@pytest.mark.parametrize("method", [None, 3, b"sequential", ["sequential"]],
                         ids=repr)
def test_method_not_a_str_is_a_type_error(method):
    with pytest.raises(TypeError, match="method"):
        cudareduce.sum(nonempty(), method)


@pytest.mark.parametrize("threads", BAD_THREAD_VALUES)
def test_threads_out_of_range_is_a_value_error(threads):
    with pytest.raises(ValueError) as info:
        cudareduce.sum(nonempty(), threads=threads)
    message = str(info.value)
    for part in ("threads", "64", "1024", str(threads)):
        assert part in message, f"{part!r} missing from {message!r}"


@pytest.mark.parametrize("threads", BAD_THREAD_TYPES, ids=repr)
def test_threads_of_wrong_type_is_a_type_error(threads):
    with pytest.raises(TypeError) as info:
        cudareduce.sum(nonempty(), threads=threads)
    message = str(info.value)
    assert "threads" in message and type(threads).__name__ in message


@pytest.mark.parametrize("dtype", UNSUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("size", [5, 0])
def test_unsupported_dtype_is_a_type_error_naming_it(dtype, size):
    with pytest.raises(TypeError) as info:
        cudareduce.sum(np.zeros(size, dtype))
    message = str(info.value)
    assert str(dtype) in message or repr(dtype) in message, message


@pytest.mark.parametrize("values", [
    ["a", "b"], [2 ** 70], [None, 1]], ids=repr)
def test_unsupported_array_like_is_a_type_error(values):
    with pytest.raises(TypeError) as info:
        cudareduce.sum(values)
    dtype = np.asarray(values).dtype
    assert str(dtype) in str(info.value) or repr(dtype) in str(info.value)


# --- empty inputs: the identity, no GPU touched -----------------------------

@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 5)], ids=str)
def test_empty_sum_is_zero_of_numpys_result_dtype(dtype, shape):
    result = cudareduce.sum(np.zeros(shape, dtype))
    assert isinstance(result, np.generic)
    assert result.dtype == numpy_sum_dtype(dtype) == SUM_RESULT[dtype]
    assert result == 0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("threads", VALID_THREADS)
def test_empty_sum_accepts_every_method_and_thread_count(method, threads):
    result = cudareduce.sum(np.zeros(0, np.int32), method, threads=threads)
    assert result.dtype == np.int64 and result == 0


@pytest.mark.parametrize("empty, dtype", [
    ([], np.float64),
    (np.zeros(0, ">i4"), np.int64),
    (np.zeros(0, ">f8"), np.float64),
    (np.zeros((4, 6), np.float32)[:, 6:], np.float32),
], ids=["list", "big-endian-int32", "big-endian-float64", "empty-slice"])
def test_empty_array_likes_sum_to_zero(empty, dtype):
    result = cudareduce.sum(empty)
    assert result.dtype == dtype and result == 0


# --- no device --------------------------------------------------------------

def assert_names_a_cuda_error(error):
    assert isinstance(error, cudareduce.CudaError)
    assert isinstance(error, RuntimeError)
    assert CUDA_ERROR_NAME.search(str(error)), (
        f"no CUDA error name in {str(error)!r}")


@pytest.mark.no_gpu
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("a", [
    np.ones(3, np.float32), np.arange(10, dtype=np.int32), [1.5, 2.5]],
    ids=["float32", "int32", "list"])
def test_sum_without_device_is_a_cuda_error(device_error, method, a):
    with pytest.raises(cudareduce.CudaError) as info:
        cudareduce.sum(a, method)
    assert_names_a_cuda_error(info.value)
    assert str(info.value) == device_error


@pytest.mark.no_gpu
def test_plan_asking_the_absent_device_is_a_cuda_error():
    with pytest.raises(cudareduce.CudaError) as info:
        cudareduce.plan(1000, "multi_element")
    assert_names_a_cuda_error(info.value)


# Run with CUDA_VISIBLE_DEVICES="" so that the CUDA runtime finds no device
# even on a GPU machine: the no-device path is tested everywhere.
NO_DEVICE_SCRIPT = """
import json
import numpy as np
import cudareduce            # must work without a device
report = {"imported": True}
def outcome(call):
    try:
        return ["returned", repr(call())]
    except Exception as exc:
        return [type(exc).__name__, str(exc),
                isinstance(exc, cudareduce.CudaError),
                isinstance(exc, RuntimeError)]
report["sum"] = outcome(lambda: cudareduce.sum(np.ones(4, np.float32)))
report["sum_int32"] = outcome(
    lambda: cudareduce.sum(np.ones(4, np.int32), "sequential", threads=64))
report["plan_device"] = outcome(lambda: cudareduce.plan(1000))
report["plan_given_sm"] = outcome(
    lambda: cudareduce.plan(10 ** 6, sm_count=132))
report["empty"] = outcome(lambda: cudareduce.sum(np.zeros(0, np.float32)))
report["bad_threads"] = outcome(
    lambda: cudareduce.sum(np.ones(4, np.float32), threads=3))
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def no_device_report(tmp_path_factory):
    """What the library does in a fresh interpreter that sees no device."""
    package_parent = str(Path(cudareduce.__file__).resolve().parents[1])
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=package_parent)
    done = subprocess.run(
        [sys.executable, "-c", NO_DEVICE_SCRIPT], env=env,
        cwd=tmp_path_factory.mktemp("no_device"), capture_output=True,
        text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_works_without_a_device(no_device_report):
    assert no_device_report["imported"]


@pytest.mark.parametrize("call", ["sum", "sum_int32", "plan_device"])
def test_call_without_a_device_is_a_cuda_error(no_device_report, call):
    name, message, is_cuda_error, is_runtime_error = no_device_report[call]
    assert (name, is_cuda_error, is_runtime_error) == (
        "CudaError", True, True), no_device_report[call]
    assert CUDA_ERROR_NAME.search(message), message


def test_no_device_message_says_what_is_true(no_device_report):
    # Without a driver the CUDA runtime reports an "insufficient" one; the
    # message says instead that none was found, or which CUDA the driver
    # supports and which this build needs.  Where a driver is present and
    # the device is hidden, it is CUDA's own "no device".
    message = no_device_report["sum"][1]
    assert "insufficient for CUDA runtime version" not in message, message
    assert re.search(r"no NVIDIA driver found|the NVIDIA driver supports "
                     r"CUDA up to \d+\.\d+, but this build of cudareduce "
                     r"needs CUDA \d+\.\d+|cudaErrorNoDevice", message), message


def test_plan_without_device_says_to_pass_sm_count(no_device_report):
    message = no_device_report["plan_device"][1]
    assert "sizes its grid from the GPU's SM count" in message, message
    assert message.endswith("pass sm_count= to plan without a GPU"), message


def test_calls_needing_no_device_work_without_one(no_device_report):
    assert no_device_report["plan_given_sm"] == [
        "returned", repr(cudareduce.plan(10 ** 6, sm_count=132))]
    assert no_device_report["empty"] == ["returned", repr(np.float32(0))]
    name, message, *_ = no_device_report["bad_threads"]
    assert name == "ValueError" and "threads" in message


def test_fault_injection_takes_a_chunk_index_only():
    # The tests' aid for a host call failing mid-stream (host_checks.py);
    # setting and cancelling it touches no device.
    inject = cudareduce._cudareduce._inject_host_fault
    assert inject(3) is None and inject(-1) is None
    for bad, error in (("3", TypeError), (3.0, TypeError),
                       (2 ** 70, OverflowError)):
        with pytest.raises(error):
            inject(bad)


def test_dir_shows_the_public_api_only():
    assert dir(cudareduce) == sorted(cudareduce.__all__)
    assert "np" not in dir(cudareduce) and "Any" not in dir(cudareduce)


def test_the_names_are_the_packages():
    # Defined in cudareduce/_library.py, each reads as cudareduce's (as
    # NumPy's set_module makes NumPy's): in reprs, help() and pickles.
    for name in cudareduce.__all__:
        if name != "__version__":
            assert getattr(cudareduce, name).__module__ == "cudareduce", name
    assert pydoc.render_doc(cudareduce.sum).startswith(
        "Python Library Documentation: function sum in module cudareduce\n")
    assert pickle.loads(pickle.dumps(cudareduce.nanargmax)) \
        is cudareduce.nanargmax
    step = cudareduce.Pass(1, 1, 64, 1, 0)
    assert pickle.loads(pickle.dumps(step)) == step
