"""complex64 and complex128 on the GPU: NumPy host arrays, CuPy arrays,
PyTorch tensors (read directly, through ``__cuda_array_interface__`` and
through DLPack), JAX arrays and DLPack alone, with every method and
operator.

The specification is NumPy's whole-array answer on the same data, with
NumPy's semantics for complex numbers:

- sum, prod, mean and their NaN forms keep the input's dtype.  cudareduce
  adds in the input's own precision but in another order than NumPy, so
  the data make every answer exact in any order: real and imaginary parts
  are small integers (sums), or ones with a few factors 2, -1, 1j, 1+1j
  and 1-1j (products, whose every partial product is a Gaussian integer
  far below 2^24).  These are compared exactly with NumPy's answer: type,
  value (NaN equal to NaN; the sign of a zero product's part, which
  depends on the order of the multiplications, is left out) and NumPy's
  warnings.  A mean is NumPy's divide of the sum by the intp count.
  Random normal data are compared with the exactly rounded sum
  (``math.fsum``) within a rounding bound instead.
- An element is NaN when its real or its imaginary part is (``numpy.isnan``
  of a complex number): nansum and nanprod count such an element as 0 and
  1, whole; nanmean divides the sum of the others by their count.
- min, max, argmin and argmax order lexicographically (real part first,
  then the imaginary part); a NaN element wins, the first one in C order;
  ties go to the first index.  min and max return the element itself
  (``complex(nan, 1)`` stays ``nan+1j``).  The NaN forms skip NaN
  elements; where every element is NaN, nanmin and nanmax give the first
  element itself (in memory, as min's first NaN) with "All-NaN slice
  encountered", and nanargmin and nanargmax NumPy's ValueError.
- any and all: an element is true when either part is non-zero (NaN is).
- ``dtype=`` as NumPy's: real inputs summed into complex, complex64 into
  complex128 and back, and a complex input into a real dtype with NumPy's
  ComplexWarning (the imaginary parts discarded).

Sizes: one element, warp and block edges, the fast method's vector head
and tail, and 2^20 + 3 (several passes; the host path's ring); empty
inputs alone.  Layouts: strided, transposed, Fortran-ordered and
negatively strided NumPy and CuPy arrays, whose index operators give the
C-order index of the view and whose min and max the first NaN element in
C order (NumPy's own min and max of a transposed view give the first in
memory order: the reference is NumPy's answer on the C-ordered copy).
Also ``out=`` on the device and numpy.ma masked arrays.
"""
from __future__ import annotations

import functools
import math
import os
import sys
import warnings

import numpy as np
import numpy.ma as ma
import pytest
from numpy.exceptions import ComplexWarning

import cudareduce
from support.api_contract import METHODS, block_sizes
from support.dlpack_capsules import DLPackOnly
from support.outcomes import outcome

pytestmark = pytest.mark.gpu

DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))
# The real dtype of each complex one's parts.
PART = {np.dtype(np.complex64): np.dtype(np.float32),
        np.dtype(np.complex128): np.dtype(np.float64)}

# One element, a partial warp, a warp and its edges, a block and its
# edges, the fast method's 16-byte vectors (one complex128 or two
# complex64) at the head and tail, and a size that takes the ladder's
# first steps several passes; each in both dtypes.  BIG, in one dtype per
# test (alternating), takes the ladder's first steps three passes, and
# in complex128 (16 MiB and more) the host ring more than one chunk.
SIZES = (1, 7, 31, 32, 33, 255, 256, 257, 1023, 1025, 4097)
BIG = 2 ** 20 + 3

VALUE_OPS = ("sum", "prod", "mean", "nansum", "nanprod", "nanmean")
ORDER_OPS = ("min", "max", "argmin", "argmax", "nanmin", "nanmax",
             "nanargmin", "nanargmax")
TRUTH_OPS = ("any", "all")
OPS = VALUE_OPS + ORDER_OPS + TRUTH_OPS
PRODUCT_OPS = ("prod", "nanprod")
# Operators where a NaN element wins (NaN put in every third input).
NAN_WINS = ("min", "max", "argmin", "argmax")

# Device inputs, in rotation beside every host array: each holds the host
# array's elements in the same order, whatever its layout.
DEVICE_KINDS = ("cupy", "torch", "cupy-strided", "torch-cai",
                "cupy-reversed", "torch-dlpack", "cupy-dlpack",
                "torch-view-as-complex", "numpy-dlpack", "numpy-reversed")

# (factor, how many) of a product's data: the product's modulus is at
# most 2^10 * 2^2 * 2 = 2^13, so that every partial product, in any
# order, is a Gaussian integer exact in float32.
PRODUCT_FACTORS = ((2, 10), (-1, 3), (1j, 3), (1 + 1j, 4), (1 - 1j, 2))
# Elements that any and all count as true: a part non-zero, or NaN.
TRUE_ELEMENTS = np.array([1j, -1j, 1 + 0j, -2 + 0.5j, complex(0, np.nan),
                          complex(np.nan, 0)])
# Zeros of either sign: false.
FALSE_ELEMENTS = np.array([0j, complex(-0.0, 0.0), complex(0.0, -0.0),
                           complex(-0.0, -0.0)])


@pytest.fixture(scope="module", autouse=True)
def _free_device_memory():
    """Gives the module's device arrays back to the GPU at its end."""
    yield
    if "cupy" in sys.modules:
        sys.modules["cupy"].get_default_memory_pool().free_all_blocks()
    if "torch" in sys.modules:
        sys.modules["torch"].cuda.empty_cache()


# --- data --------------------------------------------------------------------

def integers(rng, n: int, dtype, low: int = -4, high: int = 4) -> np.ndarray:
    """n elements of `dtype` whose real and imaginary parts are integers in
    [low, high] (each of the 81 values of [-4, 4]^2 about n/81 times: ties
    in the real part, decided by the imaginary one, and exact ties)."""
    real = rng.integers(low, high + 1, n)
    imag = rng.integers(low, high + 1, n)
    return (real + 1j * imag).astype(dtype)


def put_nans(rng, x: np.ndarray, count: int) -> np.ndarray:
    """NaN into `count` random elements of the 1-D array `x` (in place): in
    the real part, the imaginary part or both, the other part kept."""
    where = rng.integers(0, x.size, size=count)
    part = rng.integers(0, 3, size=count)   # 0 real, 1 imaginary, 2 both
    x.real[where[part != 1]] = np.nan
    x.imag[where[part != 0]] = np.nan
    return x


def data(rng, n: int, op: str, dtype, nan: bool) -> np.ndarray:
    """Data of `op` whose answer is exact in any order (see the module's
    doc), with NaN elements where `nan`: a few where a NaN wins (so that
    the first one may sit anywhere), about one in 1000 for the NaN forms."""
    if op in PRODUCT_OPS:
        x = np.ones(n, dtype)
        for factor, count in PRODUCT_FACTORS:
            x[rng.integers(0, n, size=count)] = factor
    elif op == "any":
        # Zeros (of either sign), and none, one or two true elements.
        x = rng.choice(FALSE_ELEMENTS, n).astype(dtype)
        where = rng.integers(0, n, size=rng.integers(0, 3))
        x[where] = rng.choice(TRUE_ELEMENTS, where.size)
        return x
    elif op == "all":
        # True elements, and none, one or two zeros.
        x = rng.choice(TRUE_ELEMENTS, n).astype(dtype)
        where = rng.integers(0, n, size=rng.integers(0, 3))
        x[where] = rng.choice(FALSE_ELEMENTS, where.size)
        return x
    else:
        x = integers(rng, n, dtype)
    if nan:
        put_nans(rng, x, int(rng.integers(1, 4)) if op in NAN_WINS
                 else max(1, n // 1000))
    return x


# --- answers -----------------------------------------------------------------

def unsigned_zeros(value):
    """A complex `value` with +0.0 for a zero part, else `value` itself."""
    if isinstance(value, np.complexfloating):
        return type(value)(complex(value.real + 0.0, value.imag + 0.0))
    return value


def result(call, op: str):
    """outcome() of call(): its type, value (repr) or exception, and its
    warnings; of a product without the sign of a zero part."""
    if op in PRODUCT_OPS:
        return outcome(lambda: unsigned_zeros(call()))
    return outcome(call)


def numpy_answer(host: np.ndarray, op: str, **kwargs):
    """NumPy's result() of `op` on the host data."""
    return result(lambda: getattr(np, op)(host, **kwargs), op)


def our_answer(array, op: str, method: str, **kwargs):
    """cudareduce's result() of `op` on `array`."""
    return result(lambda: getattr(cudareduce, op)(array, method, **kwargs),
                  op)


# --- inputs ------------------------------------------------------------------

@functools.cache
def cai_tensor_type(torch):
    """An empty torch.Tensor subclass: cudareduce reads only torch.Tensor
    itself directly, so this one goes through PyTorch's
    ``__cuda_array_interface__``."""
    return type("CaiTensor", (torch.Tensor,), {})


def on_device(cupy, torch, kind: str, host: np.ndarray):
    """The input `kind` (DEVICE_KINDS) holding the 1-D `host`'s elements in
    the same order."""
    if kind == "cupy":
        return cupy.asarray(host)
    if kind == "cupy-strided":
        return cupy.asarray(np.repeat(host, 2))[::2]
    if kind == "cupy-reversed":
        return cupy.asarray(np.ascontiguousarray(host[::-1]))[::-1]
    if kind == "cupy-dlpack":
        return DLPackOnly(cupy.asarray(host))
    if kind == "torch":
        return torch.from_numpy(host).cuda()
    if kind == "torch-cai":
        return torch.from_numpy(host).cuda().as_subclass(
            cai_tensor_type(torch))
    if kind == "torch-dlpack":
        return DLPackOnly(torch.from_numpy(host).cuda())
    if kind == "torch-view-as-complex":
        pairs = host.view(PART[host.dtype]).reshape(-1, 2)
        tensor = torch.view_as_complex(torch.from_numpy(pairs).cuda())
        assert tensor.is_complex() and tensor.shape == host.shape
        return tensor
    if kind == "numpy-dlpack":
        return DLPackOnly(host)
    if kind == "numpy-reversed":
        return np.ascontiguousarray(host[::-1])[::-1]
    raise ValueError(kind)


# --- NumPy's rules, checked where the tests rely on them ---------------------

def test_numpy_reference_rules():
    """The NumPy behaviour this module's references rest on."""
    nan = np.nan
    x = np.array([1 + 1j, complex(1, nan), 3 + 0j, complex(nan, 0)],
                 np.complex64)
    # The first NaN element wins, itself (NaN in the imaginary part only).
    assert np.argmax(x) == np.argmin(x) == 1
    assert np.max(x).tobytes() == x[1].tobytes()
    # Lexicographic: the real part first.
    assert np.argmax(np.array([5 - 100j, 4 + 100j])) == 0
    # The NaN forms drop a NaN element whole.
    assert np.nansum(np.array([1 + 1j, complex(5, nan)])) == 1 + 1j
    # A complex mean divides by NumPy's complex divide, which is not the
    # exactly rounded quotient of each part.
    total = np.complex128(7679 + 7679j)
    assert (total / np.intp(1999)).real != 7679 / 1999
    with pytest.warns(ComplexWarning, match="discards the imaginary part"):
        assert np.sum(np.array([1 + 2j, 3 + 4j]), dtype=np.float64) == 4.0
    # Why test_layouts compares with the C-ordered copy: NumPy's max of a
    # transposed view returns the first NaN element in memory order.
    grid = np.zeros((3, 4), np.complex64)
    grid[0, 2] = complex(1, nan)            # first in memory
    grid[1, 0] = complex(nan, 2)            # first in the view's C order
    assert repr(np.max(grid.T)) == repr(grid[0, 2])
    assert repr(np.max(np.ascontiguousarray(grid.T))) == repr(grid[1, 0])
    assert np.argmax(grid.T) == 1           # grid.T[0, 1] is grid[1, 0]


# --- every method and operator -----------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPS)
def test_every_method_and_operator(cupy, torch, rng, seed_note, op, method):
    """Both dtypes at every size, NaN or not, as NumPy host arrays and as
    one of the device inputs (in rotation), against NumPy exactly."""
    m = METHODS.index(method)
    big_dtype = DTYPES[(m + OPS.index(op)) % 2]
    cases = [(n, dtype) for n in SIZES for dtype in DTYPES]
    cases.append((BIG, big_dtype))
    wrong = []
    for k, (n, dtype) in enumerate(cases):
        # The NaN forms: NaN in every other input of each dtype; min, max,
        # argmin and argmax: in every third, and at BIG for every other
        # method.
        nan = (op.startswith("nan") and k % 4 in (1, 2)
               or op in NAN_WINS and (k % 3 == 2
                                      or n == BIG and m % 2 == 1))
        host = data(rng, n, op, dtype, nan)
        # The smallest and largest block size the method takes for op.
        taken = block_sizes(op, dtype, method)
        threads = (None, taken[0], taken[-1])[k % 3] if method != "cub" \
            else None
        kind = DEVICE_KINDS[(k + m) % len(DEVICE_KINDS)]
        for name, array in (("numpy", host),
                            (kind, on_device(cupy, torch, kind, host))):
            # min and max: of several NaN elements the first in memory,
            # which a reversed view holds last (test_layouts).
            reversed_view = op in ("min", "max") and name.endswith("reversed")
            want = numpy_answer(host[::-1] if reversed_view else host, op)
            got = our_answer(array, op, method, threads=threads)
            if got != want:
                wrong.append(f"{dtype} n={n} {name} threads={threads}: "
                             f"got {got}, NumPy {want}")
    assert not wrong, f"{op} ({method}): {wrong[:4]} {seed_note}"


@pytest.mark.parametrize("method", METHODS)
def test_all_nan_inputs(cupy, method):
    """Every element NaN (in one part or both): nansum 0, nanprod 1,
    nanmean NaN with "Mean of empty slice", nanmin and nanmax the first
    element itself with "All-NaN slice encountered", nanargmin and
    nanargmax NumPy's ValueError."""
    wrong = []
    for dtype in DTYPES:
        for n in (1, 2, 33, 257, 4097):
            host = np.empty(n, dtype)
            host[0::3] = complex(np.nan, 1)
            host[1::3] = complex(-2, np.nan)
            host[2::3] = complex(np.nan, np.nan)
            device = cupy.asarray(host)
            for op in ("nansum", "nanprod", "nanmean", "nanmin", "nanmax",
                       "nanargmin", "nanargmax"):
                want = numpy_answer(host, op)
                for array in (host, device):
                    got = our_answer(array, op, method)
                    if got != want:
                        wrong.append(f"{op} {dtype} n={n} "
                                     f"{type(array).__module__}: got {got}, "
                                     f"NumPy {want}")
    assert not wrong, f"{method}: {wrong[:4]}"


@pytest.mark.parametrize("method", METHODS)
def test_first_nan_and_first_tie(cupy, rng, seed_note, method):
    """min, max, argmin and argmax where only the rule decides: ties in the
    real part (decided by the imaginary one) and exact ties (the first
    index), NaN in the imaginary part only before NaN in the real part
    (the first NaN element, whatever its other part), far apart in the
    array."""
    wrong = []
    for n, dtype in ((1025, DTYPES[0]), (4097, DTYPES[1]),
                     (BIG, DTYPES[METHODS.index(method) % 2])):
        ties = integers(rng, n, dtype)
        ties.real = 3                      # the imaginary part decides
        first, second = np.sort(rng.choice(n, size=2, replace=False))
        nans = integers(rng, n, dtype)
        nans[first] = complex(-4, np.nan)      # would be the least number
        nans[second] = complex(np.nan, 4)
        nans[rng.integers(second, n)] = complex(np.nan, np.nan)
        for name, host in (("ties", ties), ("nan", nans)):
            device = cupy.asarray(host)
            for op in ("min", "max", "argmin", "argmax", "nanargmin",
                       "nanargmax"):
                want = numpy_answer(host, op)
                for array in (host, device):
                    got = our_answer(array, op, method)
                    if got != want:
                        wrong.append(f"{op} {name} {dtype} n={n}: got {got},"
                                     f" NumPy {want}")
    assert not wrong, f"{method}: {wrong[:4]} {seed_note}"


# (name, data, operator): NumPy's rules one at a time, answered by NumPy on
# the same data (cast to each complex dtype).
NAN = np.nan
RULES = [
    ("max: the real part first", [5 - 100j, 4 + 100j], "max"),
    ("argmin: the real part first", [5 - 100j, 4 + 100j], "argmin"),
    ("argmax: a tie in the real part, the imaginary part decides",
     [2 + 1j, 2 + 3j, 2 + 3j, 2 - 5j], "argmax"),
    ("argmin: the imaginary part decides",
     [2 + 1j, 2 + 3j, 2 - 5j, 2 - 5j], "argmin"),
    ("max: NaN in the imaginary part wins", [9 + 9j, complex(1, NAN), 3],
     "max"),
    ("min: the first NaN element, itself",
     [9 + 9j, complex(1, NAN), complex(NAN, -7)], "min"),
    ("argmax: the first NaN element",
     [9 + 9j, 0j, complex(NAN, 5), complex(2, NAN)], "argmax"),
    ("argmin: NaN in the imaginary part only",
     [-9 - 9j, 0j, complex(2, NAN), complex(NAN, 5)], "argmin"),
    ("nanmin skips NaN elements whatever their other part",
     [complex(NAN, -9), 1 + 1j, 5j, complex(-9, NAN)], "nanmin"),
    ("nanmax skips NaN elements",
     [complex(NAN, 9), 1 + 1j, 1 + 2j, complex(9, NAN)], "nanmax"),
    ("nanargmax skips NaN in the real part", [complex(NAN, 100), 1 + 0j],
     "nanargmax"),
    ("nanargmin skips NaN in the imaginary part",
     [1 + 0j, complex(-100, NAN), 1 - 1j], "nanargmin"),
    ("sum adds the parts apart", [1 + 0j, complex(2, NAN), 3 + 1j], "sum"),
    ("mean of NaN in one part: NumPy's complex divide",
     [1 + 0j, complex(NAN, 2)], "mean"),
    ("nansum drops an element with NaN in the imaginary part",
     [1 + 1j, complex(5, NAN), 2 - 3j], "nansum"),
    ("nanprod counts a NaN element as 1", [2 + 0j, complex(NAN, 3), 1j],
     "nanprod"),
    ("nanmean: the count of the others",
     [1 + 1j, complex(NAN, 7), 3 + 3j, complex(8, NAN)], "nanmean"),
    ("prod: the plain complex multiply", [1 + 2j, 3 - 1j, -2 + 5j, 1j],
     "prod"),
    ("any of an imaginary part", [0j, 0j, 0.5j], "any"),
    ("any of zeros of either sign",
     [0j, complex(-0.0, 0), complex(0, -0.0)], "any"),
    ("any of NaN in the imaginary part", [0j, complex(0, NAN)], "any"),
    ("all of imaginary and real parts", [1j, 1 + 0j, -1j], "all"),
    ("all with a zero", [1j, 1 + 0j, complex(0, -0.0)], "all"),
    ("all of NaN", [complex(NAN, 0), complex(0, NAN)], "all"),
]


@pytest.mark.parametrize("name, values, op", RULES,
                         ids=[rule[0] for rule in RULES])
def test_numpy_rules(cupy, name, values, op):
    """Each rule alone, every method, both dtypes, host and device."""
    wrong = []
    for dtype in DTYPES:
        host = np.array(values, dtype)
        want = numpy_answer(host, op)
        for method in METHODS:
            for array in (host, cupy.asarray(host)):
                got = our_answer(array, op, method)
                if got != want:
                    wrong.append(f"{dtype} {method} "
                                 f"{type(array).__module__}: got {got}, "
                                 f"NumPy {want}")
    assert not wrong, f"{name}: {wrong[:4]}"


# --- values that are not exact -----------------------------------------------

# A sum's error bound in units of Σ|part|: the dtype's unit roundoff times
# a tree depth (sequential runs of a thread, then the block's tree, then
# the passes) that no method reaches at these sizes.
ROUNDING_BOUND = {np.dtype(np.complex64): 1024 * 2.0 ** -24,
                  np.dtype(np.complex128): 1024 * 2.0 ** -53}


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_values_within_rounding(cupy, rng, seed_note, dtype):
    """Normal random values: sum, mean, nansum and nanmean of every method
    within a rounding bound of the exactly rounded answer (``math.fsum``
    of each part), in the input's dtype."""
    wrong = []
    for n in (4097, BIG):
        host = (rng.normal(0.5, 1.0, n)
                + 1j * rng.normal(-0.25, 1.0, n)).astype(dtype)
        with_nan = put_nans(rng, host.copy(), max(1, n // 1000))
        for source, ops in ((host, ("sum", "mean")),
                            (with_nan, ("nansum", "nanmean"))):
            kept = source[~np.isnan(source)]
            exact = complex(math.fsum(kept.real.tolist()),
                            math.fsum(kept.imag.tolist()))
            bound = ROUNDING_BOUND[dtype] * (np.abs(kept.real).sum()
                                             + np.abs(kept.imag).sum())
            device = cupy.asarray(source)
            for op in ops:
                want, tolerance = exact, bound
                if op.endswith("mean"):
                    want, tolerance = exact / kept.size, bound / kept.size
                for method in METHODS:
                    got = getattr(cudareduce, op)(device, method)
                    if (type(got) is not dtype.type
                            or not abs(got.real - want.real) <= tolerance
                            or not abs(got.imag - want.imag) <= tolerance):
                        wrong.append(f"{op} n={n} {method}: got {got!r}, "
                                     f"exact {want} +- {tolerance:.3g}")
    assert not wrong, f"{dtype}: {wrong[:4]} {seed_note}"


# --- layouts -----------------------------------------------------------------

LAYOUT_OPS = ("sum", "mean", "min", "max", "argmin", "argmax", "any", "all")
NAN_LAYOUT_OPS = ("min", "max", "argmin", "argmax", "nanmin", "nanmax",
                  "nanargmin", "nanargmax", "nansum", "nanmean")


def views_of(base):
    """The views test_layouts reduces, of a 2-D `base` (NumPy's or
    CuPy's)."""
    flat = base.reshape(-1)
    return {
        "strided": flat[::3],
        "strided 2-D": base[::3, 1::2],
        "transposed": base.T,
        "transposed strided": base[1::2].T,
        "fortran": base.T.copy().T,
        "reversed": flat[::-1],
        "reversed 2-D": base[::-1, ::-2],
        "reversed transposed": base[::-1].T,
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ("fast", "first_add", "cub"))
def test_layouts(cupy, rng, seed_note, method, dtype):
    """Strided, transposed, Fortran-ordered and negatively strided NumPy
    and CuPy views: NumPy's answer on the view's C-ordered copy, the index
    operators' the C-order index of the view; min and max, of several NaN
    elements, the first in memory order (with NaN elements whose first one
    in the view is not the first in memory).

    NumPy's own min and max walk memory too (a transposed or Fortran view
    gives the first NaN element in memory), but a view with negative
    strides in its own direction: there the two may give different NaN
    elements (docs/usage.md, differences from NumPy)."""
    clean = integers(rng, 257 * 130, dtype).reshape(257, 130)
    nans = clean.copy()
    put_nans(rng, nans.reshape(-1), 6)
    # In memory (C order of the base) [0, 5] comes first; in the
    # transposed view, [3, 0].
    nans[0, 5] = complex(-3, np.nan)
    nans[3, 0] = complex(np.nan, 2)
    # Where each view's elements lie in the base, to put them in memory
    # order (the Fortran view is a copy: order="K" is its memory's).
    place_views = views_of(np.arange(clean.size).reshape(clean.shape))
    wrong = []
    for base, ops in ((clean, LAYOUT_OPS), (nans, NAN_LAYOUT_OPS)):
        device = cupy.asarray(base)
        host_views, device_views = views_of(base), views_of(device)
        for view, host in host_views.items():
            contiguous = np.ascontiguousarray(host)
            in_memory = np.ravel(host, order="K") if view == "fortran" \
                else base.reshape(-1)[np.sort(place_views[view], axis=None)]
            for op in ops:
                reference = in_memory if op in ("min", "max") else contiguous
                want = numpy_answer(reference, op)
                for kind, candidate in (("numpy", host),
                                        ("cupy", device_views[view])):
                    got = our_answer(candidate, op, method)
                    if got != want:
                        wrong.append(f"{op} {view} {kind}: got {got}, "
                                     f"NumPy {want}")
    assert not wrong, f"{method} {dtype}: {wrong[:4]} {seed_note}"


# --- input kinds -------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_tensors(torch, rng, seed_note, dtype):
    """PyTorch complex tensors read directly, through their CUDA array
    interface and through DLPack, made by torch.view_as_complex, strided,
    and drawn by torch.randn (any values: the order operators exactly,
    the sum within a rounding bound)."""
    torch_dtype = {np.complex64: torch.complex64,
                   np.complex128: torch.complex128}[dtype.type]
    wrong = []
    for k, op in enumerate(OPS):
        nan = op.startswith("nan") or op in NAN_WINS and k % 2 == 1
        host = data(rng, 10_007, op, dtype, nan)
        tensor = torch.from_numpy(host).cuda()
        assert tensor.dtype == torch_dtype
        pairs = torch.from_numpy(host.view(PART[dtype]).reshape(-1, 2))
        inputs = {
            "torch": tensor,
            "torch-cai": tensor.as_subclass(cai_tensor_type(torch)),
            "torch-dlpack": DLPackOnly(tensor),
            "view_as_complex": torch.view_as_complex(pairs.cuda()),
            "strided": torch.from_numpy(np.repeat(host, 3)).cuda()[1::3],
            "strided-dlpack": DLPackOnly(
                torch.from_numpy(np.repeat(host, 2)).cuda()[::2]),
        }
        want = numpy_answer(host, op)
        for j, (name, array) in enumerate(inputs.items()):
            method = METHODS[(k + j) % len(METHODS)]
            got = our_answer(array, op, method)
            if got != want:
                wrong.append(f"{op} {name} ({method}): got {got}, "
                             f"NumPy {want}")
    generator = torch.Generator(device="cuda").manual_seed(
        int(rng.integers(2 ** 62)))
    drawn = torch.randn(100_003, dtype=torch_dtype, device="cuda",
                        generator=generator)
    host = drawn.cpu().numpy()
    assert host.dtype == dtype
    for op in ORDER_OPS + TRUTH_OPS:
        for method in ("fast", "cub"):
            got = our_answer(drawn, op, method)
            want = numpy_answer(host, op)
            if got != want:
                wrong.append(f"{op} randn ({method}): got {got}, "
                             f"NumPy {want}")
    exact = complex(math.fsum(host.real.tolist()),
                    math.fsum(host.imag.tolist()))
    bound = ROUNDING_BOUND[dtype] * (np.abs(host.real).sum()
                                     + np.abs(host.imag).sum())
    for method in ("fast", "multi_element", "cub"):
        got = cudareduce.sum(drawn, method)
        if (type(got) is not dtype.type or abs(got.real - exact.real) > bound
                or abs(got.imag - exact.imag) > bound):
            wrong.append(f"sum randn ({method}): got {got!r}, exact {exact}")
    assert not wrong, f"{dtype}: {wrong[:4]} {seed_note}"


def test_dlpack_and_jax(cupy, rng, seed_note):
    """DLPack alone: JAX's complex64 (and JAX's array as it is), CuPy's and
    NumPy's (a CPU capsule) of both dtypes."""
    # Before JAX's first import: by default it takes 75% of the GPU's
    # memory.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jnp = pytest.importorskip("jax.numpy")
    import jax
    gpus = jax.devices("gpu")
    assert gpus, "JAX sees no GPU"
    wrong = []
    for k, op in enumerate(OPS):
        for dtype in DTYPES:
            host = data(rng, 30_011, op, dtype,
                        nan=op.startswith("nan") or op in NAN_WINS)
            inputs = {"cupy-dlpack": DLPackOnly(cupy.asarray(host)),
                      "numpy-dlpack": DLPackOnly(host)}
            if dtype == np.complex64:
                jax_array = jax.device_put(host, gpus[0])
                assert jax_array.dtype == jnp.complex64
                inputs["jax"] = jax_array
                inputs["jax-dlpack"] = DLPackOnly(jax_array)
            want = numpy_answer(host, op)
            for j, (name, array) in enumerate(inputs.items()):
                method = METHODS[(k + j) % len(METHODS)]
                got = our_answer(array, op, method)
                if got != want:
                    wrong.append(f"{op} {dtype} {name} ({method}): got "
                                 f"{got}, NumPy {want}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


def test_torch_conjugate_and_negative_views(torch, rng, seed_note):
    """x.conj() and x.conj().imag are lazy: a bit says to conjugate or
    negate, over memory that holds x.  cudareduce resolves them first, as
    torch.sum reads them."""
    host = integers(rng, 1001, np.complex64)
    conj = torch.from_numpy(host).cuda().conj()
    imag = conj.imag
    assert conj.is_conj() and imag.is_neg()
    for method in METHODS:
        assert cudareduce.sum(conj, method) == np.sum(np.conj(host)), \
            (method, seed_note)
        assert cudareduce.argmax(conj, method) == np.argmax(np.conj(host))
        assert cudareduce.sum(imag, method) == np.sum(-host.imag), method
    assert torch.equal(conj.resolve_conj().cpu(),
                       torch.from_numpy(np.conj(host)))


# --- dtype= ------------------------------------------------------------------

def test_dtype_argument(rng, seed_note):
    """dtype= as NumPy's: real and integer inputs into complex, complex64
    into complex128 and complex128 into complex64; exactly NumPy's answer
    (each element cast, then summed in the dtype)."""
    ints = rng.integers(-4, 5, 10_007)
    c64 = integers(rng, 10_007, np.complex64)
    c64_nan = put_nans(rng, c64.copy(), 20)
    c128 = integers(rng, 10_007, np.complex128)
    products = data(rng, 10_007, "prod", np.complex64, False)
    cases = [
        ("sum", ints.astype(np.float32), np.complex64),
        ("sum", ints.astype(np.float64), np.complex128),
        ("sum", ints.astype(np.int32), np.complex64),
        ("sum", ints.astype(np.float16), np.complex128),
        ("mean", ints.astype(np.float32), np.complex64),
        ("prod", np.ones(100, np.float32), np.complex64),
        ("sum", c64, np.complex128),
        ("mean", c64, np.complex128),
        ("prod", products, np.complex128),
        ("nansum", c64_nan, np.complex128),
        ("nanmean", c64_nan, np.complex128),
        ("nanprod", put_nans(rng, products.copy(), 5), np.complex128),
        ("sum", c128, np.complex64),
        ("mean", c128, np.complex64),
    ]
    wrong = []
    for op, host, dtype in cases:
        want = result(lambda: getattr(np, op)(host, dtype=dtype), op)
        assert want[0][0] is np.dtype(dtype).type, want
        for method in ("fast", "multi_element", "cub"):
            got = result(lambda: getattr(cudareduce, op)(
                host, method, dtype=dtype), op)
            if got != want:
                wrong.append(f"{op} {host.dtype} dtype={np.dtype(dtype)} "
                             f"({method}): got {got}, NumPy {want}")
    assert not wrong, f"{wrong[:4]} {seed_note}"


def test_dtype_complex128_adds_in_complex128():
    """complex64 data whose complex64 sum rounds and whose complex128 sum
    is exact: dtype=complex128 casts each element and adds in
    complex128."""
    n = BIG
    host = np.full(n, complex(1 + 2.0 ** -20, -(1 + 2.0 ** -19)),
                   np.complex64)
    want = np.sum(host, dtype=np.complex128)
    assert want == complex(n + n * 2.0 ** -20, -(n + n * 2.0 ** -19))
    assert np.complex128(np.sum(host)) != want    # the data discriminate
    for method in METHODS:
        got = cudareduce.sum(host, method, dtype=np.complex128)
        assert type(got) is np.complex128 and got == want, (method, got)
        got = cudareduce.mean(host, method, dtype=np.complex128)
        assert repr(got) == repr(np.mean(host, dtype=np.complex128)), (
            method, got)


@pytest.mark.parametrize("op, target", [
    ("sum", np.float64), ("sum", np.float32), ("prod", np.float64),
    ("mean", np.float64), ("nansum", np.float64), ("nanmean", np.float64),
    ("nanprod", np.float64)])
def test_real_dtype_of_complex_input(rng, seed_note, op, target):
    """A real dtype= of a complex input: NumPy's ComplexWarning, the
    imaginary parts discarded (the NaN forms drop an element with NaN in
    either part first, as NumPy replaces it before the cast)."""
    for dtype in DTYPES:
        host = data(rng, 4099, op, dtype, nan=op.startswith("nan"))
        if op.startswith("nan"):
            host[7] = complex(5, np.nan)     # cast first, it would count
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ComplexWarning)
            want = getattr(np, op)(host, dtype=target)
        assert type(want) is np.dtype(target).type
        for method in ("fast", "unroll_warp", "cub"):
            with pytest.warns(ComplexWarning,
                              match="discards the imaginary part"):
                got = getattr(cudareduce, op)(host, method, dtype=target)
            assert type(got) is type(want) and got == want, (
                op, dtype, method, got, want, seed_note)


# --- empty inputs, out=, masked arrays ---------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_inputs(cupy, dtype):
    """sum 0j, prod 1+0j, mean NaN with NumPy's warnings, min, max and the
    index operators NumPy's ValueError: every operator and method, NumPy
    and CuPy, 1-D and 2-D."""
    wrong = []
    for shape in ((0,), (3, 0)):
        host = np.zeros(shape, dtype)
        for op in OPS:
            want = outcome(lambda: getattr(np, op)(host))
            for array in (host, cupy.asarray(host)):
                for method in METHODS:
                    got = outcome(
                        lambda: getattr(cudareduce, op)(array, method))
                    if got != want:
                        wrong.append(f"{op} {shape} {method} "
                                     f"{type(array).__module__}: got {got}, "
                                     f"NumPy {want}")
    assert not wrong, f"{dtype}: {wrong[:4]}"


@pytest.mark.parametrize("method", METHODS)
def test_device_out(cupy, rng, seed_note, method):
    """A complex CuPy `out` (0-d or one element) receives NumPy's answer,
    from a CuPy or a NumPy input; an index goes into an int64 `out`."""
    c64 = integers(rng, 100_003, np.complex64)
    c128 = integers(rng, 100_003, np.complex128)
    cases = [("sum", c64, (), np.complex64), ("mean", c64, (), np.complex64),
             ("sum", c64, (1,), np.complex64),
             ("mean", c64, (1,), np.complex64),
             ("sum", c128, (), np.complex128),
             ("max", c64, (), np.complex64),
             ("nansum", put_nans(rng, c64.copy(), 50), (), np.complex64),
             ("argmax", c128, (), np.int64)]
    for op, host, shape, out_dtype in cases:
        want = getattr(np, op)(host)
        assert type(want) is np.dtype(out_dtype).type
        for array in (cupy.asarray(host), host):
            out = cupy.full(shape, 7, out_dtype)
            got = getattr(cudareduce, op)(array, method, out=out)
            assert got is out, (op, type(got))
            stored = out.get().reshape(())[()]
            assert out.dtype == out_dtype and repr(stored) == repr(want), (
                op, host.dtype, shape, type(array).__module__, stored, want,
                seed_note)


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_arrays(rng, seed_note, dtype):
    """numpy.ma: masked elements do not count; each answer is numpy.ma's
    own (its complex64 mean of a masked array is a complex128)."""
    host = integers(rng, 3001, dtype)
    mask = rng.random(host.size) < 0.3
    arrays = {"masked": ma.masked_array(host, mask=mask),
              "nomask": ma.masked_array(host),
              "all masked": ma.masked_array(host, mask=True)}
    wrong = []
    for name, masked in arrays.items():
        for op, kwargs in (("sum", {}), ("mean", {}),
                           ("sum", {"dtype": np.complex128}),
                           ("mean", {"dtype": np.complex128}),
                           ("min", {}), ("max", {}), ("argmin", {}),
                           ("argmax", {})):
            want = outcome(lambda: getattr(masked, op)(**kwargs))
            for method in ("fast", "cub"):
                got = outcome(lambda: getattr(cudareduce, op)(
                    masked, method, **kwargs))
                if got != want:
                    wrong.append(f"{op} {kwargs} {name} ({method}): got "
                                 f"{got}, numpy.ma {want}")
    assert not wrong, f"{dtype}: {wrong[:4]} {seed_note}"
    # The sum's value is the unmasked elements' (not a tautology of the
    # comparison above).
    assert cudareduce.sum(arrays["masked"]) == host[~mask].sum()
