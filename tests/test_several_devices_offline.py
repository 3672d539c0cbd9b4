"""devices= (issue 45) without a GPU: every operator takes it, last and
keyword-only, and a list that no machine could run is refused before any
CUDA call, as NumPy-style errors: TypeError for what is not a list of
device ids, ValueError for a list no call may take (empty, too long, an id
below 0 or twice) and for devices= with an axis.  Whether the devices
exist, and the reductions themselves, are test_several_devices_gpu.py's."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import cudareduce

OPS = list(cudareduce._cudareduce.OPERATORS)
X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("op", OPS)
def test_every_operator_takes_devices_last(op):
    params = inspect.signature(getattr(cudareduce, op)).parameters
    assert list(params)[-1] == "devices"
    assert params["devices"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["devices"].default is None
    assert "devices : None, \"all\"" in getattr(cudareduce, op).__doc__


@pytest.mark.parametrize("devices", ["some", "0", b"all", 1.0, True,
                                     [0, 1.0], [False], [None], {"a": 1}])
def test_what_is_not_device_ids_is_a_type_error(devices):
    with pytest.raises(TypeError, match="devices must"):
        cudareduce.sum(X, devices=devices)


@pytest.mark.parametrize("devices, message", [
    ([], "lists 1 to 64 devices, not 0"),
    (list(range(65)), "lists 1 to 64 devices, not 65"),
    ([-1], "lists device -1: CUDA devices count from 0"),
    ([0, -2], "lists device -2"),
    ([1, 0, 1], "lists device 1 twice"),
    ((0, 0), "lists device 0 twice"),
])
def test_a_list_no_call_may_take_is_a_value_error(devices, message):
    with pytest.raises(ValueError, match=message):
        cudareduce.sum(X, devices=devices)


# The index operators take one int axis (NumPy's), the others a tuple too.
@pytest.mark.parametrize("op, axis", [
    *[(op, axis) for op in ("sum", "argmax", "mean") for axis in (0, 1, -1)],
    ("sum", (0,)), ("mean", (1,))])
def test_devices_with_an_axis_is_a_value_error(op, axis):
    with pytest.raises(ValueError, match="over every axis"):
        getattr(cudareduce, op)(X, axis=axis, devices=[0])
