"""Reductions along axes (issue 43) on the GPU, against NumPy.

Every test here is marked ``gpu``.  The catalogue, the data and the
references are ``support.axis_cases``' (its docstring says what is
exact and what is bounded); test_axis.py checks them without a GPU.

- ``test_catalogue``: about 350 cases, each an operator, dtype, shape of
  1 to 4 dimensions, axis (int, negative, NumPy integer, tuple in any
  order, None), keepdims, layout (C, Fortran, transposed, strided,
  backwards, offset, permuted, mixed), input kind (NumPy, CuPy, a
  PyTorch CUDA tensor, an object with DLPack alone) and method (the
  default, fast, cub), held to NumPy's answer on the same values: the
  result's kind (a ``numpy.ndarray`` for a NumPy input; a CuPy array, a
  ``torch.Tensor`` on the input's device with the torch dtype of NumPy's,
  a CUDA DLPack array; a NumPy scalar for a whole-array reduction), dtype,
  shape and values, NumPy's errors, and NumPy's warnings for a NumPy
  input (none for a device input, whose results the host never sees).
- The ladder's steps: a reduction along axes, or a ValueError naming
  'fast'; the whole array (axis None, every axis) by each.
- Batch invariance and determinism: the bits of a row's result depend on
  its elements (in memory order), length, dtype, operator and method
  alone: rows (and columns) of a small array against the same ones in a
  larger array (more before and after them; more than 65,535), a view of
  them and a host copy, a call against itself, and a C-ordered array's
  rows against the same rows of a Fortran-ordered one; and each kernel's
  sums against the documented order's (``support.row_order``), bitwise.
- out=: NumPy, CuPy and PyTorch outs (contiguous, strided, DLPack) filled
  and returned with the bits of the call without out; NumPy's casting
  rule for another dtype; the wrong shape refused.
- Empty reduced and kept axes of device inputs; all-NaN slices (NumPy's
  warnings and errors for a NumPy input; none, NaN and -1 for a device
  one); NumPy's floating-point warnings of host results (overflow,
  invalid, casts into integers; numpy.errstate); axis=(); Numba and JAX results; random views along random axes
  (Hypothesis); a device out captured into a CUDA graph (no host round
  trip).  Streams as users write them (CuPy's ``with stream:``,
  ``torch.cuda.stream``, ``torch.cuda.graph``, JAX's kernels before and
  after): test_axis_streams_gpu.py.

Sizes are moderate (the largest inputs are three rows of 2.1 million
elements, whose partials take the staged kernel) so that the module adds
about a minute to the GPU suite.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudareduce
from support.api_contract import LADDER
from support.axis_cases import (AXIS_METHODS, INDEX_OPS, OPS, case_values,
                                catalogue, device_index_answer, dtype_of,
                                error_class, expect, laid_out, layout,
                                mismatch, normalized_axes, runtime_warnings,
                                same_bits, same_values, single_case)
from support.dlpack_capsules import DLPackOnly
from support.row_order import ROW_CHUNK, STAGED_LENGTH, ordered_sums
from support.outcomes import captured
from test_arg_operators_gpu import prepared
from test_inputs_gpu import jax, jax_with_gpu, numba_cuda  # noqa: F401

pytestmark = pytest.mark.gpu

KDL_CUDA = 2
CATALOGUE = catalogue()
NAN_FORMS = tuple(op for op in OPS if op.startswith("nan"))


# --- inputs and results of each kind -----------------------------------------

def torch_dtype(torch, dtype: np.dtype):
    return torch.bool if dtype == np.bool_ else getattr(torch, dtype.name)


def torch_from_host(torch, host: np.ndarray):
    """`host` as a CUDA tensor (bfloat16 through its bits)."""
    host = np.ascontiguousarray(host)
    if host.dtype.name == "bfloat16":
        return torch.from_numpy(host.view(np.int16)).cuda().view(
            torch.bfloat16)
    return torch.from_numpy(host).cuda()


def torch_laid_out(torch, host: np.ndarray, plan):
    """A view of a fresh CUDA tensor laid out as `plan` (which runs
    forwards: PyTorch has no negative steps), holding `host`'s values."""
    assert not plan.backwards
    buffer = torch.zeros(plan.offset + math.prod(plan.padded(host.shape)),
                         dtype=torch_dtype(torch, host.dtype), device="cuda")
    memory = buffer[plan.offset:].reshape(plan.memory_shape(host.shape))
    view = memory.permute(plan.to_logical())[plan.slices(host.shape)]
    view.copy_(torch_from_host(torch, host))
    return view


def as_input(request, case, host: np.ndarray):
    """The case's input: `host`'s values, of its kind and layout."""
    plan = layout(case.layout, host.ndim)
    if case.kind == "numpy":
        return laid_out(np, host, plan)
    if case.kind == "torch":
        return torch_laid_out(request.getfixturevalue("torch"), host, plan)
    view = laid_out(request.getfixturevalue("cupy"), host, plan)
    return DLPackOnly(view) if case.kind == "dlpack" else view


def to_host(value) -> np.ndarray:
    """A result (or out) of any kind, as a NumPy array."""
    if isinstance(value, DLPackOnly):
        value = value.array
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    library = type(value).__module__.split(".")[0]
    if library == "cupy":
        return value.get()
    if library == "torch":
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            import torch  # noqa: PLC0415 - a torch result: torch is there
            return value.view(torch.int16).numpy().view(
                dtype_of("bfloat16"))
        try:
            return value.numpy()
        except TypeError:       # a PyTorch without NumPy's uint16-uint64
            return np.from_dlpack(value)
    if library.startswith("numba"):
        return value.copy_to_host()
    if library in ("jax", "jaxlib"):
        return np.asarray(value)
    import cupy  # noqa: PLC0415 - another CUDA array: read through DLPack
    return cupy.from_dlpack(value).get()


def assert_kind(request, case, data, got, expected) -> None:
    """The result lives where the issue says (see the module docstring)."""
    what = f"{case.id}: a {type(got).__module__}.{type(got).__name__}"
    if expected.scalar:
        assert isinstance(got, np.generic), f"{what}, not a NumPy scalar"
        return
    if case.kind == "numpy":
        assert type(got) is np.ndarray, f"{what}, not a numpy.ndarray"
        return
    if case.whole and type(got) is np.ndarray:
        return      # a whole array's keepdims result: the host's is fine
    assert type(got) is not np.ndarray and not isinstance(got, np.generic), (
        f"{what}: a device input's result came to the host")
    if case.kind == "cupy":
        cupy = request.getfixturevalue("cupy")
        assert isinstance(got, cupy.ndarray), f"{what}, not a cupy.ndarray"
    elif case.kind == "torch":
        torch = request.getfixturevalue("torch")
        assert isinstance(got, torch.Tensor), f"{what}, not a torch.Tensor"
        assert got.device == data.device, (what, got.device, data.device)
        assert got.dtype == torch_dtype(torch, expected.dtype), (
            what, got.dtype, expected.dtype)
    else:
        assert got.__dlpack_device__()[0] == KDL_CUDA, (
            what, got.__dlpack_device__())


def check_case(request, case, host: np.ndarray, note: str = "", *,
               may_refuse: bool = False) -> bool:
    """cudareduce's answer to `case` on the data `host` is NumPy's (the
    module docstring); with `may_refuse` (a ladder step) a ValueError
    naming 'fast' is allowed instead, for a reduction along axes.
    Whether it answered."""
    data = as_input(request, case, host)
    expected = expect(case, host)
    got, raised, caught = captured(lambda: getattr(cudareduce, case.op)(
        data, *case.args(), **case.kwargs()))
    what = f"{case.id} {note}"
    if may_refuse and raised is not None and not case.whole:
        assert raised[0] is ValueError and "fast" in raised[1], (what,
                                                                 raised)
        return False
    if expected.raised is not None:
        assert raised is not None, (
            f"{what}: gave {got!r}; NumPy raises {expected.raised}")
        assert error_class(raised) is error_class(expected.raised) and (
            error_class(raised) is TypeError
            or raised[1] == expected.raised[1]), (what, raised,
                                                  expected.raised)
        return True
    assert raised is None, f"{what}: raised {raised}"
    assert_kind(request, case, data, got, expected)
    problem = mismatch(to_host(got), expected)
    assert problem is None, f"{what}: {problem}"
    runtime = runtime_warnings(caught)
    assert runtime == runtime_warnings(expected.warnings) or (
        expected.or_warnings is not None
        and runtime == runtime_warnings(expected.or_warnings)), (
        what, runtime, expected.warnings)
    return True


# --- the catalogue -----------------------------------------------------------

@pytest.mark.parametrize("case", CATALOGUE, ids=[c.id for c in CATALOGUE])
def test_catalogue(request, rng, seed_note, case):
    check_case(request, case, case_values(rng, case), seed_note)


# --- the ladder's steps ------------------------------------------------------

LADDER_GEOMETRIES = [((33, 257), 1), ((257, 33), 0), ((4, 33, 31), (0, 2)),
                     ((5, 8193), -1), ((40, 50), None), ((6, 7, 8),
                                                         (2, 0, 1))]


@pytest.mark.parametrize("method", LADDER)
def test_ladder_steps_reduce_along_axes_or_name_fast(request, rng,
                                                     seed_note, method):
    answered = 0
    for k, (shape, axis) in enumerate(LADDER_GEOMETRIES):
        for op, dtype in (("sum", "float32"), ("max", "int16"),
                          ("argmin", "float64"), ("nanmean", "float16")):
            if op in INDEX_OPS and isinstance(axis, tuple):
                axis = None
            case = single_case(op, dtype, shape, axis, method=method,
                               kind=("numpy", "cupy")[k % 2],
                               keepdims=k % 3 == 0)
            answered += check_case(request, case, case_values(rng, case),
                                   seed_note, may_refuse=True)
    assert answered >= 8, "the whole-array cases must all answer"


# --- batch invariance and determinism ----------------------------------------

# Short, medium and long rows (more than ROW_CHUNK: several chunks); rows
# enough to fill about 2.5 million elements (more than 65,535 rows of the
# short ones).
BATCH_LENGTHS = (7, 33, 1000, 4097, 3 * 8192 + 5, 50_001)


def batch_rows(length: int) -> int:
    return max(5, min(70_000, 2_500_000 // length))


def batch_data(cupy, session_seed, dtype: str, length: int,
               orientation: str):
    """(host, device) C-ordered normal values: `length` elements a row
    ("rows", reduced along the last axis) or a column ("columns", along
    the first)."""
    def build(rng):
        count = batch_rows(length)
        shape = (count, length) if orientation == "rows" else (length, count)
        # float16's sums stay finite.
        scale = min(8.0, 32768.0 / length) if dtype == "float16" else 1000.0
        host = ((rng.standard_normal(shape) + 0.25) * scale).astype(dtype)
        return host, cupy.asarray(host)
    return prepared(("batch", dtype, length, orientation), session_seed,
                    build)


@pytest.mark.parametrize("method", AXIS_METHODS)
@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("length", BATCH_LENGTHS)
@pytest.mark.parametrize("orientation", ["rows", "columns"])
def test_batch_invariance(cupy, session_seed, seed_note, orientation, length,
                          dtype, op, method):
    host, x = batch_data(cupy, session_seed, dtype, length, orientation)
    axis = -1 if orientation == "rows" else 0
    reduce = functools.partial(getattr(cudareduce, op), method=method,
                               axis=axis)
    full = to_host(reduce(x))
    assert same_bits(to_host(reduce(x)), full), (
        f"two calls differ {seed_note}")
    count = batch_rows(length)
    for start, stop in ((0, 1), (0, 3), (count // 2, count // 2 + 5),
                        (count - 2, count), (1, count - 1)):
        def part(a):
            return a[start:stop] if orientation == "rows" \
                else a[:, start:stop]
        alone = cupy.ascontiguousarray(part(x))
        for what, data in (("alone", alone), ("a view", part(x)),
                           ("from the host", np.ascontiguousarray(
                               part(host)))):
            got = to_host(reduce(data))
            assert same_bits(got, full[start:stop]), (
                f"{orientation} {start}:{stop} of {count}, {what}: "
                f"{got[:4]} in the batch {full[start:start + 4]} "
                f"{seed_note}")


@pytest.mark.parametrize("method", AXIS_METHODS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("length", [7, 33, 1000, 3 * 8192 + 5])
def test_rows_read_in_either_order_give_the_same_bits(cupy, session_seed,
                                                      seed_note, length,
                                                      dtype, method):
    host, x = batch_data(cupy, session_seed, dtype, length, "rows")
    host, x = host[:300], x[:300]
    fortran = cupy.asfortranarray(x)
    assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
    for op in ("sum", "mean"):
        reduce = getattr(cudareduce, op)
        want = to_host(reduce(x, method, axis=1))
        for what, data, axis in (
                ("Fortran-ordered", fortran, 1),
                ("the transposed view's columns", x.T, 0),
                ("a C-ordered transpose's columns",
                 cupy.ascontiguousarray(x.T), 0),
                ("from the host, Fortran-ordered",
                 np.asfortranarray(host), 1)):
            got = to_host(reduce(data, method, axis=axis))
            assert same_bits(got, want), (
                f"{op} {what}: {got[:4]} for {want[:4]} {seed_note}")


# Rows of more than STAGED_LENGTH chunks: their later pass, over a few
# rows, is the staged kernel's, a block a chunk.
LONG_ROW = (STAGED_LENGTH + 1) * ROW_CHUNK + 7
ORDER_LENGTHS = (1, 2, 3, 5, 8, 9, 16, 17, 31, 32, 33, 100, 1000,
                 ROW_CHUNK + 1, 5 * ROW_CHUNK + 3, 9 * ROW_CHUNK + 1,
                 LONG_ROW)


@pytest.mark.parametrize("dtype, accumulator", [("float32", np.float32),
                                                ("float16", np.float32),
                                                ("float64", np.float64)])
@pytest.mark.parametrize("length", ORDER_LENGTHS)
def test_a_rows_sum_is_the_documented_order(cupy, rng, seed_note, length,
                                            dtype, accumulator):
    """The bits of each kernel's sums (rows, columns, short rows; their
    later passes over chunk partials, by the row kernel or the staged
    one) are the order's, as support.row_order models it in the
    accumulator's dtype."""
    count = 40 if length < 10_000 else 3
    scale = min(8.0, 32768.0 / length) if dtype == "float16" else 1000.0
    host = ((rng.standard_normal((count, length)) + 0.25)
            * scale).astype(dtype)
    want = ordered_sums(host, accumulator).astype(dtype)
    x = cupy.asarray(host)
    cases = [("rows", x, 1, 1),
             ("columns", cupy.ascontiguousarray(x.T), 0, 1),
             ("Fortran-ordered rows", cupy.asfortranarray(x), 1, 1)]
    if length <= 4:
        # A view of 39 of 44 columns: 16-byte aligned columns, read in
        # gangs of adjacent ones, and the rows past the last whole gang.
        wide = cupy.zeros((length, 44), dtype=dtype)
        wide[:, :count] = x.T
        cases.append(("39 columns of 44", wide[:, :39], 0, None))
    if 8 < length < 10_000:
        # 16,400 columns: 513 tiles of 32, which the column kernel reads
        # with CR_COLUMN_THREADS threads a column, not a thread a lane.
        cases.append(("columns, 16,400 of them",
                      cupy.ascontiguousarray(cupy.tile(x.T, (1, 410))), 0,
                      410))
    for what, data, axis, copies in cases:
        got = to_host(cudareduce.sum(data, axis=axis))
        expected = want[:39] if copies is None else np.tile(want, copies)
        assert same_bits(got, expected), (
            f"{what}: {got[:4]} for {want[:4]} {seed_note}")


@pytest.mark.parametrize("op, dtype", [
    ("sum", "float32"), ("mean", "float64"), ("sum", "int64"),
    ("max", "int16"), ("argmax", "float32"), ("argmin", "complex64"),
    ("nanmean", "float16"), ("nanargmax", "float64"), ("any", "uint8")])
@pytest.mark.parametrize("orientation", ["rows", "columns"])
def test_few_long_rows_are_numpys(request, rng, seed_note, orientation, op,
                                  dtype):
    """Three rows (or columns) of LONG_ROW by fast: the later pass
    over their partials is the staged kernel's, for every kind of
    accumulator (a float's, an integer's of any order, an index beside a
    value, a count beside a sum), with a few NaN where the operator
    looks at them (case number 3: no slice all NaN)."""
    shape, axis = (((3, LONG_ROW), 1) if orientation == "rows"
                   else ((LONG_ROW, 3), 0))
    case = single_case(op, dtype, shape, axis, method="fast", kind="cupy",
                       number=3)
    check_case(request, case, case_values(rng, case), seed_note)


@pytest.mark.parametrize("method", AXIS_METHODS)
@pytest.mark.parametrize("op", ["sum", "mean", "nansum", "nanmean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16",
                                   "complex64"])
def test_a_row_of_negative_zeros_sums_to_positive_zero(cupy, op, dtype,
                                                       method):
    """NumPy's sums start from +0.0: numpy.sum([-0.0, -0.0]) is +0.0, in
    every kernel's layout and length (short rows, gangs, lanes, chunks,
    columns), beside rows whose sums keep their sign."""
    complex_ = np.dtype(dtype).kind == "c"
    zero = complex(-0.0, -0.0) if complex_ else -0.0
    for shape in ((6, 3), (8, 4), (8, 40), (8, 3 * ROW_CHUNK + 5),
                  (40, 16400), (16400, 9)):
        host = np.full(shape, zero, dtype=dtype)
        host[0] = complex(-1.5, -1.5) if complex_ else -1.5
        want = getattr(np, op)(host, axis=1)
        for data, axis in ((cupy.asarray(host), 1),
                           (cupy.ascontiguousarray(cupy.asarray(host).T),
                            0)):
            got = to_host(getattr(cudareduce, op)(data, axis=axis,
                                                  method=method))
            for part in ((np.real, np.imag) if complex_ else (np.real,)):
                assert np.array_equal(np.signbit(part(got)),
                                      np.signbit(part(want))), (
                    f"{op} of {shape} along {axis}: {got[:3]} for "
                    f"{want[:3]}")
            assert np.array_equal(got, want)


# The last pass of each kernel, with a shape that reaches it: short rows
# of at most 4 and of 8, gangs of side-by-side rows (and, 4,099 of 4,104
# columns, the rows past the last whole gang), lanes a row, columns, and
# the later passes over chunk partials (short rows of them, lanes of them).
FINISH_SHAPES = [((4099, 3), 1), ((4099, 7), 1), ((3, 4104), 0),
                 ((3, 4099), 0), ((1000, 100), 1), ((100, 1000), 0),
                 ((3, 3 * ROW_CHUNK + 5), 1), ((2, 33 * ROW_CHUNK + 1), 1),
                 ((3 * ROW_CHUNK + 5, 64), 0)]


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32",
                                   "float64"])
def test_a_device_result_is_finished_as_a_host_one(torch, rng, seed_note,
                                                   dtype, op):
    """A float sum or mean into a device result is finished (cast to its
    dtype, a mean divided by its row's length) by the last pass that
    writes it; a host result by the store pass after it: the same bits,
    into a fresh result, a strided out and an offset one, with rows whose
    float16 sums overflow to inf and rows of -0.0."""
    for shape, axis in FINISH_SHAPES:
        host = (rng.standard_normal(shape) * 4 + 1).astype(dtype_of(dtype))
        if shape[0] > 2 and shape[1] > 2:
            host[1] = 3e4 if axis == 1 else host[1]
            host[:, 1] = 3e4 if axis == 0 else host[:, 1]
            host[2] = -0.0 if axis == 1 else host[2]
            host[:, 2] = -0.0 if axis == 0 else host[:, 2]
        if shape == (3, 4099):
            wide = torch.zeros((3, 4104), dtype=torch_dtype(
                torch, host.dtype), device="cuda")
            wide[:, :4099] = torch_from_host(torch, host)
            x = wide[:, :4099]
        else:
            x = torch_from_host(torch, host)
        reduce = getattr(cudareduce, op)
        want = reduce(host, axis=axis)
        what = f"{op} of {dtype} {shape} along {axis} {seed_note}"
        assert same_bits(to_host(reduce(x, axis=axis)), want), what
        for start, step in ((1, 2), (3, 1)):
            buffer = torch.full((start + step * want.size,), 7.0,
                                dtype=x.dtype, device="cuda")
            out = buffer[start::step]
            assert reduce(x, axis=axis, out=out) is out
            assert same_bits(to_host(out), want), (
                f"{what}, into an out of step {step} from {start}")
            assert same_bits(to_host(buffer[:start]),
                             np.full(start, 7, dtype=want.dtype)), (
                f"{what}: the out's buffer written before it")


# Rows of any length an index operator's plan cuts into shorter chunks
# (few rows: argmax over (32, 2^17) in chunks of 1,024) or not, and the
# other kernels' last passes.
INDEX_SHAPES = [((32, 1 << 17), 1), ((3, 40_000), 1), ((1, 1 << 20), 1),
                ((4099, 3), 1), ((3, 4104), 0), ((100, 1000), 0),
                ((2, 33 * ROW_CHUNK + 1), 1)]


@pytest.mark.parametrize("op", ["argmin", "argmax"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float16"])
def test_an_index_into_a_device_result_is_numpys(cupy, rng, seed_note, dtype,
                                                 op):
    """argmin and argmax along an axis into a device result (the index
    written as int64 by the last pass, its rows' chunks as short as the
    shape asks) and into a strided int64 out: NumPy's first index of the
    extreme, among many ties across every chunk, and a NaN's where a row
    has one."""
    for shape, axis in INDEX_SHAPES:
        host = rng.integers(0, 4, shape).astype(dtype)
        if host.dtype.kind == "f" and host.shape[1 - axis] > 1:
            # Line 1 of those reduced, a view: three NaNs in it.
            index = [slice(None)] * 2
            index[1 - axis] = 1
            line = host[tuple(index)]
            line[rng.integers(0, line.size, 3)] = np.nan
        want = getattr(np, op)(host, axis=axis)
        x = cupy.asarray(host)
        what = f"{op} of {dtype} {shape} along {axis} {seed_note}"
        got = getattr(cudareduce, op)(x, axis=axis)
        assert same_bits(to_host(got), want), what
        buffer = cupy.full(2 * want.size + 1, 7, dtype=np.int64)
        out = buffer[1::2]
        assert getattr(cudareduce, op)(x, axis=axis, out=out) is out
        assert same_bits(to_host(out), want), f"{what}, into a strided out"
        assert (buffer[::2] == 7).all(), f"{what}: the out's gaps written"


# --- out= --------------------------------------------------------------------

OUT_KINDS = ("numpy", "numpy-strided", "cupy", "cupy-strided", "torch",
             "torch-strided", "torch-dlpack")
OUT_GEOMETRIES = [((33, 257), 1, False), ((257, 33), 0, True),
                  ((4, 33, 31), (0, 2), False), ((5, 8193), -1, True),
                  ((3, 4, 5, 6), (3, 1), True)]
OUT_OPS = (("sum", "float32"), ("mean", "int16"), ("max", "float64"),
           ("argmin", "int32"), ("nanmean", "float32"), ("any", "uint8"),
           ("prod", "int64"), ("nanargmax", "float16"))


def make_out(request, kind: str, shape: tuple, dtype: np.dtype):
    """An out of `kind`, `shape` and `dtype`, filled with 7s: strided
    ones every other element of a buffer twice as large."""
    library = kind.split("-")[0]
    full = tuple(shape) + ((2,) if kind.endswith("-strided") else ())
    if library == "numpy":
        out = np.full(full, 7, dtype)
    elif library == "cupy":
        out = request.getfixturevalue("cupy").full(full, 7, dtype)
    else:
        torch = request.getfixturevalue("torch")
        out = torch.full(full, 7, dtype=torch_dtype(torch, dtype),
                         device="cuda")
    if kind.endswith("-strided"):
        out = out[..., 1]
    return DLPackOnly(out) if kind.endswith("-dlpack") else out


@pytest.mark.parametrize("out_kind", OUT_KINDS)
@pytest.mark.parametrize("input_kind", ["numpy", "cupy"])
def test_out_is_filled_and_returned(request, rng, seed_note, input_kind,
                                    out_kind):
    for shape, axis, keepdims in OUT_GEOMETRIES:
        for op, dtype in OUT_OPS:
            if op in INDEX_OPS and isinstance(axis, tuple):
                continue
            # (number 2: no all-NaN slice, which a NumPy input's
            # nanargmax refuses)
            case = single_case(op, dtype, shape, axis, keepdims=keepdims,
                               kind=input_kind, number=2)
            data = as_input(request, case, case_values(rng, case))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = to_host(getattr(cudareduce, op)(data, axis=axis,
                                                       keepdims=keepdims))
                out = make_out(request, out_kind, want.shape, want.dtype)
                got = getattr(cudareduce, op)(data, axis=axis,
                                              keepdims=keepdims, out=out)
            assert got is out, (case.id, out_kind, type(got))
            assert same_bits(to_host(out), want), (
                f"{case.id} into {out_kind}: {to_host(out)} for {want} "
                f"{seed_note}")


# (op, input dtype, out dtype): NumPy fills an out of another dtype by its
# casting rule (all of these but two, which it refuses with TypeError).
OUT_CASTS = [("sum", "float64", "float32"), ("sum", "int32", "int8"),
             ("prod", "int16", "float64"), ("any", "int16", "float32"),
             ("max", "float32", "float64"), ("argmin", "float32", "int32"),
             ("argmax", "float64", "float32"),
             ("nanmean", "float32", "int32"), ("min", "uint8", "bool")]


@pytest.mark.parametrize("out_kind", ["numpy", "cupy"])
@pytest.mark.parametrize("input_kind", ["numpy", "cupy"])
@pytest.mark.parametrize("op, dtype, out_dtype", OUT_CASTS)
def test_out_of_another_dtype_follows_numpys_casting(request, rng, op, dtype,
                                                     out_dtype, input_kind,
                                                     out_kind):
    case = single_case(op, dtype, (37, 300), 1, kind=input_kind, number=2)
    host = case_values(rng, case)
    data = as_input(request, case, host)
    numpy_out = np.full(37, 7, out_dtype)
    want = captured(lambda: getattr(np, op)(host, axis=1, out=numpy_out))
    out = make_out(request, out_kind, (37,), np.dtype(out_dtype))
    got = captured(lambda: getattr(cudareduce, op)(data, axis=1, out=out))
    if want[1] is not None:
        assert got[1] is not None and error_class(got[1]) is error_class(
            want[1]), (got, want[1])
        return
    assert got[1] is None and got[0] is out, got
    # Exact data: NumPy's accumulation in either dtype gives these values.
    assert same_values(to_host(out), numpy_out), (to_host(out), numpy_out)


@pytest.mark.parametrize("out_kind", ["numpy", "cupy", "torch"])
def test_out_of_the_wrong_shape_is_a_value_error(request, out_kind):
    cupy = request.getfixturevalue("cupy")
    x = cupy.ones((6, 5), np.float32)
    for op in OPS:
        dtype = np.dtype(np.int64 if op in INDEX_OPS else
                         "bool" if op in ("any", "all") else np.float32)
        for shape, keepdims in (((6,), False), ((5, 1), False),
                                ((1, 5), False), ((5,), True), ((),
                                                                False)):
            out = make_out(request, out_kind, shape, dtype)
            with pytest.raises(ValueError):
                getattr(cudareduce, op)(x, axis=0, keepdims=keepdims,
                                        out=out)


# --- empty axes and all-NaN slices -------------------------------------------

EMPTY_DEVICE = [((3, 0), 1), ((3, 0), 0), ((0, 0), 1), ((0, 4), 0),
                ((0, 4), -1), ((2, 0, 3), (0, 2)), ((2, 0, 3), 1),
                ((4, 0, 2), (1, 2))]


@pytest.mark.parametrize("kind", ["cupy", "torch", "dlpack"])
@pytest.mark.parametrize("dtype", ["float32", "int16", "complex64"])
def test_empty_axes_of_device_inputs(request, kind, dtype):
    if kind == "torch" and dtype == "complex64":
        dtype = "bool"
    for shape, axis in EMPTY_DEVICE:
        for op in OPS:
            for keepdims in (False, True):
                case_axis = axis[0] if op in INDEX_OPS and isinstance(
                    axis, tuple) else axis
                case = single_case(op, dtype, shape, case_axis,
                                   keepdims=keepdims, kind=kind)
                check_case(request, case, np.zeros(shape, dtype))


# (op, host data, keyword arguments): NumPy's floating-point warnings of
# a reduction along an axis, each from the rows that set it.
FP_CASES = [
    ("sum", np.full((3, 5), 3e38, np.float32), {"axis": 1}),
    ("sum", np.array([[3e38, 3e38], [1.0, 2.0]], np.float32), {"axis": 1}),
    ("sum", np.array([[np.inf, 1.0], [1.0, 2.0]], np.float32), {"axis": 1}),
    ("sum", np.array([[np.inf, -np.inf], [1.0, 2.0]]), {"axis": 1}),
    ("sum", np.array([[np.nan, 1.0], [1.7e308, 1.7e308]]), {"axis": 1}),
    ("nansum", np.array([[np.nan, 3e38, 3e38]], np.float32), {"axis": -1}),
    ("mean", np.full((4, 3), 1e308), {"axis": 0}),
    ("sum", np.array([[1e10, 1.0], [1.0, 2.0]]),
     {"axis": 1, "dtype": np.int32}),
    ("sum", np.array([[np.nan, 1.0]]), {"axis": 1, "dtype": np.int64}),
    ("prod", np.full((2, 40), 1e10, np.float32), {"axis": 1}),
    ("nanmean", np.array([[np.inf, -np.inf, np.nan], [1, 2, 3]]),
     {"axis": 1}),
    ("nanmean", np.array([[np.inf, -np.inf, np.nan], [np.nan] * 3]),
     {"axis": 1}),
    ("nanmean", np.array([[np.nan, np.nan], [1, 2]], np.float32),
     {"axis": 1}),
    ("nansum", np.array([[np.inf, -np.inf], [1, 2]]), {"axis": 1}),
    ("nanmax", np.array([[np.nan, np.nan], [1, 2]], np.float32),
     {"axis": 1}),
    ("sum", np.full((3, 4), 1.0, np.float32), {"axis": 0}),
]


def runtime_messages(call):
    """(the call's value, the messages of the RuntimeWarnings it gave)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    return value, [str(w.message) for w in caught
                   if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("method", AXIS_METHODS)
@pytest.mark.parametrize("case", range(len(FP_CASES)),
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(FP_CASES)])
def test_floating_point_warnings_of_host_results_are_numpys(case, method):
    op, host, kwargs = FP_CASES[case]
    want, theirs = runtime_messages(
        lambda: getattr(np, op)(host, **kwargs))
    got, ours = runtime_messages(
        lambda: getattr(cudareduce, op)(host, method=method, **kwargs))
    assert ours == theirs, (op, kwargs)
    assert same_values(got, want), (got, want)


def test_errstate_applies_along_axes():
    host = np.full((3, 5), 3e38, np.float32)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            np.sum(host, axis=1)
        with pytest.raises(FloatingPointError):
            cudareduce.sum(host, axis=1)
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(cudareduce.sum(host, axis=1)).all()


def nan_slices(rng, dtype: str, op: str) -> np.ndarray:
    """37 x 6 values 1..4 (a product's: ones and a few twos) with NaN at
    random, rows 3 and 20 and column 4 all NaN (complex: NaN in either
    part)."""
    if op == "nanprod":
        host = np.where(rng.random((37, 6)) < 0.1, 2, 1).astype(dtype)
    else:
        host = rng.integers(1, 5, (37, 6)).astype(dtype)
    nan = complex(np.nan, 1) if dtype.startswith("complex") else np.nan
    host[rng.random(host.shape) < 0.2] = nan
    host[[3, 20]] = nan
    host[:, 4] = nan
    if dtype.startswith("complex"):
        host[5, :] = complex(2, np.nan)
    return host


@pytest.mark.parametrize("method", AXIS_METHODS)
@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64",
                                   "complex64"])
def test_all_nan_slices(request, rng, seed_note, dtype, kind, method):
    """A NumPy input: NumPy's warnings ("All-NaN slice encountered", "Mean
    of empty slice") and nanargmin's ValueError; a device input: no
    warning, NaN, and -1 for nanargmin and nanargmax."""
    for axis in (-1, 0):
        for k, op in enumerate(NAN_FORMS):
            case = single_case(op, dtype, (37, 6), axis, kind=kind,
                               method=method, keepdims=k % 2 == 1)
            check_case(request, case, nan_slices(rng, dtype, op), seed_note)
    host = nan_slices(rng, dtype, "nanargmax")
    if kind != "numpy":
        # As CuPy's answer, spelled out once.
        data = as_input(request, single_case("sum", dtype, host.shape, 1,
                                             kind=kind), host)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = to_host(cudareduce.nanargmax(data, method, axis=1))
        assert same_values(got, device_index_answer("nanargmax", host, 1,
                                                    False))
        assert (got[[3, 20]] == -1).all() and (got >= -1).all(), got


@pytest.mark.parametrize("kind", ["numpy", "cupy"])
def test_an_empty_tuple_reduces_no_axis(request, rng, kind):
    # NumPy's axis=(): each element its own result, in the result dtype
    # (NaN forms of a NaN element as of an all-NaN slice); the index
    # operators refuse a tuple.
    host = rng.integers(-3, 4, (5, 7)).astype(np.float32)
    host[1, 2] = np.nan
    for op in OPS:
        for keepdims in (False, True):
            case = single_case(op, "float32", host.shape, (),
                               keepdims=keepdims, kind=kind)
            if op not in INDEX_OPS:
                check_case(request, case, host)
                continue
            # (numpy.nanargmin raises its all-NaN ValueError first, for
            # the NaN element: the issue asks the TypeError of a tuple.)
            data = as_input(request, case, host)
            with pytest.raises(TypeError):
                getattr(cudareduce, op)(data, axis=(), keepdims=keepdims)


# --- other libraries' results ------------------------------------------------

RESULT_LIBRARIES = ["numba"] + (["jax"] if jax_with_gpu() is not None
                                else [])


@pytest.mark.parametrize("library", RESULT_LIBRARIES)
def test_numba_and_jax_results_stay_theirs(request, rng, library):
    host = rng.integers(-50, 51, (300, 37)).astype(np.float32)
    if library == "numba":
        cuda = request.getfixturevalue("numba_cuda")
        x = cuda.to_device(host)
    else:
        jax_ = request.getfixturevalue("jax")
        x = jax_.device_put(host, jax_.devices("gpu")[0])
    for op, axis, keepdims in (("sum", 1, False), ("argmax", 0, False),
                               ("max", (0,), True), ("mean", -1, False),
                               ("nanmin", 0, True)):
        got = getattr(cudareduce, op)(x, axis=axis, keepdims=keepdims)
        if library == "numba":
            assert cuda.is_cuda_array(got) and type(got).__module__ \
                .startswith("numba"), (op, type(got))
        else:
            assert isinstance(got, jax_.Array), (op, type(got))
            assert got.devices() == x.devices(), (op, got.devices())
        want = getattr(np, op)(host, axis=axis, keepdims=keepdims)
        got = to_host(got)
        if op == "mean":
            assert got.dtype == want.dtype and np.allclose(
                got, want, rtol=2 * np.finfo(np.float32).eps, atol=0), op
        else:
            assert same_values(got, want), (op, got, want)


# --- random views, random axes -----------------------------------------------

@st.composite
def views_and_axes(draw):
    """A shape of 1 to 4 dimensions (0 to 9 each), a slice per dimension
    (any start, stop and step, negative ones included), an order of the
    axes, and an axis: None, an int, a tuple of distinct ones (any order,
    empty included), or for some a tuple with a repeat."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(0, 9)) for _ in range(ndim))
    bounds = st.one_of(st.none(), st.integers(-12, 12))
    index = tuple(slice(draw(bounds), draw(bounds),
                        draw(st.sampled_from([None, 1, 2, 3, -1, -2])))
                  for _ in range(ndim))
    order = tuple(draw(st.permutations(range(ndim))))
    axis = draw(st.one_of(
        st.none(), st.integers(-ndim, ndim - 1),
        st.lists(st.integers(-ndim, ndim - 1), max_size=ndim).map(tuple)))
    return shape, index, order, axis, draw(st.booleans())


@settings(max_examples=100, deadline=None)
@given(case=views_and_axes(), seed=st.integers(0, 2 ** 32 - 1),
       op=st.sampled_from(["sum", "prod", "max", "argmin", "any", "nanmax",
                           "mean"]))
def test_random_views_along_random_axes(cupy, session_seed, case, seed, op):
    shape, index, order, axis, keepdims = case
    rng = np.random.default_rng([session_seed, seed])
    host = rng.integers(-3, 4, size=shape, dtype=np.int64)
    host_view = host[index].transpose(order)
    device_view = cupy.asarray(host)[index].transpose(order)
    note = (f"(shape {shape}, index {index}, axes {order}, axis={axis}, "
            f"keepdims={keepdims}, seed {seed})")
    want = captured(lambda: getattr(np, op)(host_view, axis=axis,
                                            keepdims=keepdims))
    got = captured(lambda: getattr(cudareduce, op)(device_view, axis=axis,
                                                   keepdims=keepdims))
    if want[1] is not None:
        assert got[1] is not None and error_class(got[1]) is error_class(
            want[1]), (got, want[1], note)
        return
    assert got[1] is None, (got[1], note)
    whole = len(normalized_axes(axis, host_view.ndim)) == host_view.ndim
    if isinstance(want[0], np.generic):
        assert isinstance(got[0], np.generic), (type(got[0]), note)
    else:
        kinds = (cupy.ndarray, np.ndarray) if whole else cupy.ndarray
        assert isinstance(got[0], kinds), (type(got[0]), note)
    value = to_host(got[0])
    if op == "mean":
        assert value.dtype == want[0].dtype and value.shape == np.shape(
            want[0]) and np.allclose(value, want[0], rtol=1e-12,
                                     equal_nan=True), note
    else:
        assert same_values(value, np.asarray(want[0])), (value, want[0],
                                                         note)
    assert not runtime_warnings(got[2]) or op == "mean", (got[2], note)


# --- no host round trip: a device out in a CUDA graph ------------------------

@pytest.mark.parametrize("method", AXIS_METHODS)
def test_a_device_out_is_captured_into_a_graph(cupy, rng, method):
    """A reduction along axes into a device out queues its work on the
    stream and needs the host for nothing: a CUDA graph captures it, and
    each replay reduces the data there then."""
    shape = (300, 1001)
    x = cupy.zeros(shape, np.float32)
    sums = cupy.zeros(300, np.float32)
    indices = cupy.zeros((1, 1001), np.int64)
    stream = cupy.cuda.Stream(non_blocking=True)

    def calls():
        cudareduce.sum(x, method, axis=1, out=sums)
        cudareduce.argmax(x, method, axis=0, keepdims=True, out=indices)

    with stream:
        calls()                 # outside the capture first: the set-up
        stream.synchronize()
        stream.begin_capture()
        calls()
        graph = stream.end_capture()
    for _ in range(2):
        fresh = rng.integers(-50, 51, shape).astype(np.float32)
        x.set(fresh, stream=stream)
        graph.launch(stream)
        stream.synchronize()
        y = cupy.asarray(fresh)
        assert same_bits(sums.get(), to_host(cudareduce.sum(y, method,
                                                            axis=1)))
        assert same_values(indices.get(), np.argmax(fresh, axis=0,
                                                    keepdims=True))
