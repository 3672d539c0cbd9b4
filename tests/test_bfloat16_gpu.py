"""bfloat16 on the GPU: ml_dtypes' NumPy arrays, PyTorch tensors (read
directly and through DLPack) and JAX arrays, with every method and
operator.

NumPy adds ml_dtypes' bfloat16 in bfloat16 (``numpy.sum`` of 1000 ones is
256), so its answer is not the one promised here: cudareduce sums bfloat16
in float32, as float16, and rounds the result to bfloat16 once.  The
reference is that: the float64 sum of the same elements, rounded to
bfloat16 (through float32, as ml_dtypes casts).  The data are small
integers, whose float32 sums at these sizes are exact in any order, so
every result is compared exactly: value, type (``ml_dtypes.bfloat16``) and
NumPy's warnings.  min, max, the index operators and any/all are NumPy's
own on the float32 copy of the data (which holds every bfloat16).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cudareduce
from support.api_contract import METHODS, block_sizes
from support.dlpack_capsules import DLPackOnly
from support.outcomes import outcome

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

pytestmark = pytest.mark.gpu

# One element, a warp and its edges, a block and its edges, the fast
# method's 16-byte vectors (8 bfloat16) and a size that takes the ladder's
# first steps several passes and the host ring several chunks.
SIZES = (1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1023, 1025, 4097,
         2 ** 20 + 3, 2 ** 23 + 5)
VALUE_OPS = ("sum", "prod", "mean", "nansum", "nanprod", "nanmean")
ORDER_OPS = ("min", "max", "nanmin", "nanmax", "argmin", "argmax",
             "nanargmin", "nanargmax", "any", "all")


def as_bfloat16(x) -> np.ndarray:
    """float64 values rounded to bfloat16 as ml_dtypes casts (through
    float32)."""
    return np.asarray(x, np.float64).astype(np.float32).astype(BF16)


def data(rng, n: int, op: str, nan: bool) -> np.ndarray:
    """Small integers (products: mostly ones, a few 2 and -1, so the
    product stays in range), NaN at a few places where `nan`."""
    if op in ("prod", "nanprod"):
        x = np.ones(n)
        x[rng.integers(0, n, size=min(n, 20))] = 2.0
        x[rng.integers(0, n, size=min(n, 3))] = -1.0
    else:
        x = rng.integers(-4, 5, size=n).astype(np.float64)
    if nan:
        x[rng.integers(0, n, size=max(1, n // 1000))] = np.nan
    return as_bfloat16(x)


def expected(host: np.ndarray, op: str):
    """The promised outcome of `op` on the bfloat16 array `host`."""
    wide = host.astype(np.float32)
    if op in ORDER_OPS:
        def call():
            value = getattr(np, op)(wide)
            return BF16.type(value) if isinstance(value, np.floating) \
                else value
        return outcome(call)
    exact = wide.astype(np.float64)
    finite = exact[~np.isnan(exact)] if op.startswith("nan") else exact

    def call():
        if op in ("sum", "nansum"):
            return as_bfloat16(np.sum(finite))[()]
        if op in ("prod", "nanprod"):
            return as_bfloat16(np.prod(finite))[()]
        if finite.size == 0:                    # nanmean of all NaN
            warnings.warn("Mean of empty slice", RuntimeWarning)
            return as_bfloat16(np.nan)[()]
        count = np.intp(finite.size)
        if op == "mean":
            # The float32 sum (exact here) over the count, as numpy.mean
            # divides a float16 array's float32 sum.
            return BF16.type(np.float32(np.sum(finite)) / count)
        # numpy.nanmean divides the sum in the array's dtype, as for
        # float16: rounded to bfloat16 first.
        return BF16.type(as_bfloat16(np.sum(finite))[()] / count)
    return outcome(call)


def test_numpy_adds_bfloat16_in_bfloat16():
    """Why the reference is not numpy.sum: it rounds at every step."""
    ones = np.ones(1000, BF16)
    assert float(np.sum(ones)) == 256.0
    assert float(as_bfloat16(1000.0)) == 1000.0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", VALUE_OPS + ORDER_OPS)
def test_every_method_and_operator(rng, seed_note, op, method):
    """NumPy host arrays and PyTorch tensors at every size, NaN or not."""
    torch = pytest.importorskip("torch")
    wrong = []
    for k, n in enumerate(SIZES):
        # NaN in every other input of the NaN forms, in every third of
        # min, max, argmin and argmax (where it wins).
        nan = (op.startswith("nan") and k % 2 == 1
               or op in ORDER_OPS[:2] + ORDER_OPS[4:6] and k % 3 == 2)
        host = data(rng, n, op, nan)
        want = expected(host, op)
        device = torch.from_numpy(host.view(np.int16)).cuda().view(
            torch.bfloat16)
        # The smallest and largest block size the method takes for op.
        taken = block_sizes(op, host.dtype, method)
        threads = (None, taken[0], taken[-1])[k % 3] if method != "cub" \
            else None
        for kind, array in (("numpy", host), ("torch", device)):
            got = outcome(lambda: getattr(cudareduce, op)(
                array, method, threads=threads))
            if got != want:
                wrong.append(f"n={n} {kind}: got {got}, want {want}")
    assert not wrong, f"{op} ({method}): {wrong[:4]} {seed_note}"


@pytest.mark.parametrize("method", ("fast", "first_add", "cub"))
def test_layouts(rng, seed_note, method):
    """Strided, reversed, transposed and Fortran views: NumPy's and
    PyTorch's, and the C-order index of the index operators."""
    torch = pytest.importorskip("torch")
    base = data(rng, 257 * 130, "sum", False).reshape(257, 130)
    base[3, 5] = as_bfloat16(-9.0)[()]
    base[200, 100] = as_bfloat16(9.0)[()]
    device = torch.from_numpy(base.view(np.int16)).cuda().view(
        torch.bfloat16)
    views = {
        "strided": (base[::3, 1::2], device[::3, 1::2]),
        "reversed": (base[::-1, ::-2], device.flip(0).flip(1)[:, ::2]),
        "transposed": (base.T, device.T),
        "fortran": (np.asfortranarray(base), None),
    }
    wrong = []
    for name, (host, tensor) in views.items():
        for op in ("sum", "mean", "min", "max", "argmin", "argmax"):
            want = expected(np.ascontiguousarray(host), op)
            for kind, array in (("numpy", host), ("torch", tensor)):
                if array is None:
                    continue
                got = outcome(lambda: getattr(cudareduce, op)(array, method))
                if got != want:
                    wrong.append(f"{op} {name} {kind}: got {got}, "
                                 f"want {want}")
    assert not wrong, f"{method}: {wrong[:4]} {seed_note}"


def test_dlpack_from_torch_and_jax(rng, seed_note):
    """PyTorch's and JAX's bfloat16 by DLPack alone (DLPack's kDLBfloat)."""
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    host = data(rng, 100_003, "sum", False)
    want = {op: expected(host, op) for op in ("sum", "max", "argmin")}
    tensor = torch.from_numpy(host.view(np.int16)).cuda().view(
        torch.bfloat16)
    jax_array = jnp.asarray(host)
    assert jax_array.dtype == jnp.bfloat16
    for name, array in (("torch", DLPackOnly(tensor)),
                        ("jax", jax_array)):
        for op, answer in want.items():
            got = outcome(lambda: getattr(cudareduce, op)(array))
            assert got == answer, (name, op, got, answer, seed_note)


def test_dtype_argument(rng, seed_note):
    """dtype= as for float16: from bfloat16 into float32 and float64, and
    from float32 and integers into bfloat16, each element rounded to
    bfloat16 first (NumPy casts before it adds), the sum in float32."""
    host = data(rng, 10_007, "sum", False)
    exact = host.astype(np.float64)
    assert cudareduce.sum(host, dtype=np.float32) == np.float32(exact.sum())
    got = cudareduce.sum(host, dtype=np.float64)
    assert type(got) is np.float64 and got == exact.sum()
    # 1 + 2^-9 rounds to 1 in bfloat16: cast first, these cancel to 0;
    # summed in float32 and then rounded they would give 4.
    mixed = np.concatenate([np.full(2048, 1 + 2.0 ** -9, np.float32),
                            np.full(2048, -1.0, np.float32)])
    for method in ("fast", "multi_element", "cub"):
        got = cudareduce.sum(mixed, method, dtype=BF16)
        assert type(got) is BF16.type and float(got) == 0.0, (method, got)
        got = cudareduce.sum(np.arange(100, dtype=np.int64), method,
                             dtype=ml_dtypes.bfloat16)
        assert got == as_bfloat16(4950.0)[()], got
    got = cudareduce.mean(host, dtype=np.float64)
    assert got == exact.sum() / host.size, seed_note


def test_masked_arrays(rng):
    """numpy.ma: masked elements do not count, the mean sums in float32."""
    host = data(rng, 3001, "sum", False)
    mask = rng.random(host.size) < 0.3
    masked = np.ma.array(host, mask=mask)
    kept = host[~mask].astype(np.float64)
    got = cudareduce.sum(masked)
    assert type(got) is BF16.type and got == as_bfloat16(kept.sum())[()]
    got = cudareduce.mean(masked)
    assert type(got) is BF16.type
    assert got == BF16.type(np.float32(kept.sum()) * 1. / kept.size), got
    # numpy.ma has no fill value for bfloat16: its own TypeError, as
    # MaskedArray.max raises it.
    with pytest.raises(TypeError, match="Unsuitable type bfloat16"):
        masked.max()
    with pytest.raises(TypeError, match="Unsuitable type bfloat16"):
        cudareduce.max(masked)
    assert cudareduce.sum(np.ma.array(host, mask=True)) is np.ma.masked


def test_empty_and_errors():
    empty = np.zeros(0, BF16)
    assert outcome(lambda: cudareduce.sum(empty)) == outcome(
        lambda: as_bfloat16(0.0)[()])
    assert outcome(lambda: cudareduce.prod(empty)) == outcome(
        lambda: as_bfloat16(1.0)[()])
    for op in ("min", "argmax"):
        got = outcome(lambda: getattr(cudareduce, op)(empty))
        assert got == outcome(
            lambda: getattr(np, op)(np.zeros(0, np.float32))), (op, got)
    assert outcome(lambda: cudareduce.nanargmin(
        as_bfloat16([np.nan, np.nan]))) == outcome(
        lambda: np.nanargmin(np.array([np.nan, np.nan])))


def test_device_out(rng):
    """A bfloat16 `out` on the device receives the rounded result."""
    torch = pytest.importorskip("torch")
    host = data(rng, 5000, "sum", False)
    device = torch.from_numpy(host.view(np.int16)).cuda().view(
        torch.bfloat16)
    out = torch.zeros(1, dtype=torch.bfloat16, device="cuda")
    for op in ("sum", "mean", "max"):
        getattr(cudareduce, op)(device, out=out)
        got = out.view(torch.int16).cpu().numpy().view(BF16)[0]
        (want_type, want_repr), _ = expected(host, op)
        assert want_type is BF16.type and repr(got) == want_repr, (op, got)


def test_without_ml_dtypes_the_result_is_float32():
    """A PyTorch bfloat16 tensor needs no ml_dtypes: its result is then a
    float32 (the documented fallback), the same number."""
    code = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None     # import ml_dtypes fails
        import numpy as np, torch, cudareduce
        x = torch.arange(-50, 51, dtype=torch.bfloat16, device="cuda")
        x[7] = 100
        got = [cudareduce.sum(x), cudareduce.max(x), cudareduce.mean(x),
               cudareduce.argmax(x)]
        print(repr(got))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # -50..50 sum to 0; x[7] was -43.
    want = [np.float32(143), np.float32(100),
            np.float32(np.float32(143) / np.intp(101)), np.int64(7)]
    assert done.stdout.strip() == repr(want), done.stdout
