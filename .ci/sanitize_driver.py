"""The work that .ci/sanitize runs under each compute-sanitizer tool.

Usage: python3 .ci/sanitize_driver.py --tool TOOL [--sizes N,N,...]
       python3 .ci/sanitize_driver.py --preflight

Reduces integer-valued data (exact_data.py: small integers, for products
ones with a few factors of -1, 2, 0.5) with every method x operator x
dtype (9 x 15 x 12 = 1620 combinations), over the sizes and input kinds
of the tool's profile below, and checks every result against NumPy's
(exact; mean to a relative 1e-6, 2e-3 for float16: one float16 ulp).  For each combination
the size runs through the profile's list, while the input kind and the
threads per block (those the method takes: cudareduce.block_sizes) rotate
with it, so that every combination meets several kinds and block sizes
(unroll_complete is a template per block size).

Input kinds
    device           a CuPy array of exactly n elements, in an allocation of
                     its own (CuPy's pool is off: each array is one
                     cudaMalloc of its size, so that memcheck sees a read
                     past the end as out of bounds, and initcheck a read of
                     bytes never written);
    device-offset    elements 1..n of an allocation of n + 1: a start off
                     the 16-byte boundary (the fast method's head), the end
                     at the end of the allocation;
    device-strided   every other element, backwards, of 2n - 1 (the first
                     one read is the allocation's last): the gather kernel,
                     negative strides;
    dlpack           a "device" array handed over only by DLPack (an object
                     with __dlpack__ and __dlpack_device__, no CAI);
    host             a NumPy array (through the pinned host ring);
    host-strided     a backwards strided NumPy view (the ring's gather);
    host-locked      a NumPy array in pinned memory (CuPy's), copied from
                     where it is, not staged.

Device inputs are made with cupy.asarray from host data (a copy: every
byte initialized), never by a CuPy kernel.

Then, under every tool: empty inputs (every operator of zero elements,
device and host, every dtype, NumPy's value and type; min, max and their
NaN forms refuse them), every operator along axes (check_axes), and
the host ring's failure path (a fault injected at each chunk of a host
array of two chunks and a tail, each a MemoryError, then the same call
right).  At the end every array is freed and CuPy's pools emptied, so
that memcheck's leak check must find nothing at all alive at exit.

Prints one line starting with "sanitize_driver:" and exits 0 when every
result was right, 1 otherwise.
"""
from __future__ import annotations

import argparse
import gc
import itertools
import math
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

# The exact data and NumPy's answers of the GPU tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.dlpack_capsules import DLPackOnly  # noqa: E402
from support.exact_data import (integer_values, numpy_answer,  # noqa: E402
                                same, values_for)

from cudareduce.bench.exact_reference import round_exact  # noqa: E402

ALL_SIZES = (1, 31, 33, 1000, 4097, (1 << 20) + 3)
DEVICE_KINDS = ("device", "device-offset", "device-strided", "dlpack")
ALL_KINDS = DEVICE_KINDS + ("host", "host-strided", "host-locked")
DTYPES = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
    np.complex128))

# What each tool checks, and the work it gets (see .ci/sanitize):
PROFILES = {
    # Out-of-bounds and misaligned global/shared accesses, API misuse,
    # device-side leaks: every size, every kind (host ones included: the
    # ring's copies, staged or from locked pages, and chunk reductions).
    # Each run prints the calls it made.
    "memcheck": {"sizes": ALL_SIZES, "kinds": ALL_KINDS},
    # Reads of device memory never written: every size, every kind.
    "initcheck": {"sizes": ALL_SIZES, "kinds": ALL_KINDS},
    # Shared-memory hazards inside a block, and between the fast method's
    # blocks and its last block: sizes that give one block, a few, and
    # many at every block size; device kinds (the host path launches the
    # same kernels).  Racecheck is the slowest tool, and a race does not
    # need a million elements to show.
    "racecheck": {"sizes": (33, 4097, 70_001), "kinds": DEVICE_KINDS},
    # __syncthreads/__syncwarp misuse (divergent barriers): as racecheck.
    "synccheck": {"sizes": (33, 4097, 70_001), "kinds": DEVICE_KINDS},
}

# dtype= targets that take the cast pass (gather.cu) from some source:
# into float16 (rounding), into float32, float64, complex64 and complex128
# (accumulators other than the default), floats and complex types into
# integers through the 32-bit, 64-bit and uint64 converts, and into bool
# (a logical or, no cast pass).  Every method x every source dtype, summed
# at one size.
CAST_TARGETS = tuple(np.dtype(d) for d in (
    np.bool_, np.float16, np.float32, np.float64, np.int32, np.int64,
    np.uint64, np.complex64, np.complex128))
CAST_SIZE = 4097
# The host ring's chunk (cuda/memory/host_ring.cu) and an int64 array of two
# chunks and a tail: a fault is injected at chunks 0, 1 and 2.
RING_CHUNK_BYTES = 16 << 20
FAULT_ELEMENTS = (2 * RING_CHUNK_BYTES + 4096 + 8) // 8


def numpy_cast_sum(a, target):
    """numpy.sum(a, dtype=target) for integer values, exactly: a float16
    sum rounded once (as cudareduce's float32 accumulation of these values
    is), the others NumPy's own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        if target == np.float16:
            return np.float16(np.sum(a.astype(np.float64)))
        return np.sum(a, dtype=target)


def make_input(cupy, kind, host_wide, n):
    """(the input, its host twin) for `kind`, from max(2n - 1, n + 1) host
    values."""
    if kind == "device":
        return cupy.asarray(host_wide[:n]), host_wide[:n]
    if kind == "dlpack":
        return DLPackOnly(cupy.asarray(host_wide[:n])), host_wide[:n]
    if kind == "device-offset":
        return cupy.asarray(host_wide[:n + 1])[1:], host_wide[1:n + 1]
    if kind == "device-strided":
        return cupy.asarray(host_wide)[::-2], host_wide[::-2]
    if kind == "host":
        return host_wide[:n].copy(), host_wide[:n]
    if kind == "host-strided":
        return host_wide[::-2], host_wide[::-2]
    if kind == "host-locked":
        memory = cupy.cuda.alloc_pinned_memory(max(n, 1)
                                               * host_wide.itemsize)
        locked = np.frombuffer(memory, host_wide.dtype, n)
        locked[...] = host_wide[:n]
        return locked, host_wide[:n]
    raise ValueError(kind)


def check_empty_inputs(cupy, cudareduce, ops, wrong) -> int:
    """Every operator of zero elements, device and host, every dtype:
    NumPy's value and type (mean: NaN, its warning silenced), or its
    ValueError (min, max, argmin, argmax and their NaN forms).  Returns
    the calls made."""
    calls = 0
    for dtype in DTYPES:
        host = np.zeros((3, 0), dtype)
        for obj in (cupy.asarray(host), host):
            for op in ops:
                calls += 1
                where = f"empty {type(obj).__module__} {dtype} {op}"
                try:
                    want = numpy_answer(op, host)
                except ValueError:
                    try:
                        getattr(cudareduce, op)(obj)
                    except ValueError:
                        continue
                    wrong.append(f"{where}: no ValueError")
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = getattr(cudareduce, op)(obj)
                if not same(op, got, want):
                    wrong.append(f"{where}: got {got!r}, NumPy {want!r}")
    return calls


def rotated_threads(cudareduce, op: str, dtype, method: str, k: int,
                    reduce_dtype=None) -> int:
    """The k-th, cyclically, of the block sizes `method` takes for `op` on
    `dtype` into `reduce_dtype` (every one from 64 to 1024, or the default
    alone)."""
    taken = cudareduce.block_sizes(op, dtype, method,
                                   reduce_dtype=reduce_dtype)
    return taken[k % len(taken)]


def check_bfloat16(cupy, cudareduce, methods, ops, sizes, kinds, rng,
                   wrong, seen) -> int:
    """bfloat16, which CuPy has no dtype for: ml_dtypes host arrays, and
    the same bits on the device handed over as a DLPack bfloat16 tensor,
    every method x operator at each size, the kind and threads rotating.
    Each answer is compared with cudareduce's own on the float32 copy of
    the data, rounded to bfloat16: exactly where that is the same
    arithmetic (small integers, exact in float32), to one bfloat16 ulp for
    the means (nanmean rounds its sum to bfloat16 first, as for float16).
    Returns the calls made."""
    import ml_dtypes
    from support.dlpack_capsules import KDL_BFLOAT, Producer
    bf16 = np.dtype(ml_dtypes.bfloat16)
    calls = 0
    for s, n in enumerate(sizes):
        host = rng.integers(-4, 5, size=n).astype(np.float32)
        host[rng.integers(0, n, size=max(1, n // 500))] = np.nan
        bits = cupy.asarray(host.astype(bf16).view(np.uint16))
        device = Producer(code=KDL_BFLOAT, bits=16, shape=(n,),
                          data=bits.data.ptr, deleter=False)
        inputs = {"host": host.astype(bf16), "dlpack": device}
        wide = cupy.asarray(host)
        for m, method in enumerate(methods):
            for o, op in enumerate(ops):
                kind = ("host", "dlpack")[(m + o + s) % 2]
                if kind == "host" and kind not in kinds:
                    kind = "dlpack"
                threads = rotated_threads(cudareduce, op, bf16, method,
                                          m * len(ops) + o + s)
                outcome = {}
                for name, obj in (("bfloat16", inputs[kind]),
                                  ("float32", wide)):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        try:
                            outcome[name] = getattr(cudareduce, op)(
                                obj, method, threads=threads)
                        except ValueError as error:
                            outcome[name] = str(error)
                calls += 1
                seen.add((method, op, "bfloat16"))
                got, want = outcome["bfloat16"], outcome["float32"]
                if isinstance(want, np.floating):
                    want, value = float(bf16.type(want)), float(got)
                    # A mean: two bfloat16 ulps (2^-7 each at most).
                    ulps = 2.0 ** -6 if op.endswith("mean") else 0.0
                    right = (value == want
                             or np.isnan(want) and np.isnan(value)
                             or abs(value - want) <= ulps * abs(want))
                else:
                    right = type(got) is type(want) and got == want
                if not right:
                    wrong.append(f"{method} {op} bfloat16 n={n} {kind} "
                                 f"t{threads}: got {got!r}, float32's "
                                 f"{want!r}")
        del inputs, device, bits, wide
        cupy.cuda.runtime.deviceSynchronize()
    return calls


#: Reductions along axes (issue 43): (shape, axis) of a C-contiguous
#: array, each read as given and as its transposed copy: rows (a warp or
#: lanes a row), columns (a thread a lane; 8 threads a column where there
#: are 513 tiles of 32: (9, 16400)), chunks of more than CR_ROW_CHUNK,
#: reduced axes gathered first (0 and 2), rows of no element, short rows
#: side by side read in gangs ((4, 2000) along axis 0; the rows past the
#: last whole gang: a view of 39 of 44 columns, AXIS_VIEWS), a later pass
#: over rows of 514 partials (the staged kernel, a block a chunk through
#: shared memory: (2, 513 * 4096 + 1)).
AXES = [((33, 257), 1), ((257, 33), 0), ((3, 8193), 1), ((8193, 3), 0),
        ((4, 33, 31), (0, 2)), ((5, 0), 1), ((2000, 4), 1), ((4, 2000), 0),
        ((2, 5 * 4096 + 1), 1), ((9, 16400), 0), ((2, 513 * 4096 + 1), 1)]
AXIS_VIEWS = [((4, 44), (slice(None), slice(0, 39)), 0)]


def check_axes(cupy, cudareduce, ops, rng, wrong) -> int:
    """Every operator along the axes of AXES, device input (an exact
    allocation) and NumPy's, by each method that reduces along axes (fast,
    cub) into a device result, against NumPy (integer-valued data: exact
    answers, but a float16 mean's divide; int8 and float16 for the kernels
    of 1- and 2-byte elements, the gangs' and the finishing last pass's).
    float16's values are -1, 0 and 1: NumPy's float16 product of 257 of
    -3 .. 3 overflowed to inf on the way (inf * 0 is NaN), where the
    library's, in float32, did not (8 wrong results under memcheck and
    racecheck, docs/recorded/axis-finish-2026-11-28-h200.txt)."""
    calls = 0
    cases = [(shape, (), axis) for shape, axis in AXES] + AXIS_VIEWS
    for shape, view, axis in cases:
        for dtype in (np.float32, np.int32, np.int8, np.float16):
            rtol = 1e-2 if dtype == np.float16 else 1e-6
            low = -1 if dtype == np.float16 else -3
            whole = rng.integers(low, 1 - low, shape).astype(dtype)
            host = whole[view]
            for op in ops:
                single = isinstance(axis, tuple) and op.startswith(
                    ("arg", "nanarg"))
                refused = cudareduce._cudareduce.OPERATOR_FACTS[
                    op].empty_error is not None
                if single or (0 in shape and refused):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = getattr(np, op)(host, axis=axis)
                for data, method in itertools.product(
                        (cupy.asarray(whole)[view],
                         cupy.asarray(np.ascontiguousarray(host.T)).T),
                        ("fast", "cub")):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        got = cupy.asnumpy(getattr(cudareduce, op)(
                            data, axis=axis, method=method))
                    calls += 1
                    if not (got.dtype == want.dtype
                            and np.allclose(got, want, rtol=rtol,
                                            equal_nan=True)):
                        wrong.append(f"{op} {method} {dtype.__name__} "
                                     f"{shape} axis={axis}: got {got!r}, "
                                     f"NumPy {want!r}")
    return calls


#: Exact sums (issue 44): the element types the kernel reads, the
#: operators that take exact=, and the sizes: one element, a vector's
#: leftover, a block, several blocks with a misaligned start.
EXACT_DTYPES = (np.float16, np.float32, np.float64)
EXACT_OPS = ("sum", "nansum", "mean", "nanmean")
EXACT_SIZES = (1, 33, 70_001)


def check_exact(cupy, cudareduce, kinds, rng, wrong) -> int:
    """exact=True of each EXACT_OPS over each dtype, size and input kind
    (a NaN among the values where a view holds it), against the values'
    sum (math.fsum, exact for these halves) or mean (nanmean's of the
    non-NaN ones), rounded once to the dtype; and the same call in parts'
    form (cudareduce.dask's), the state taken and rounded on the host, to
    the same bits.  Returns the calls made."""
    from cudareduce import _cudareduce
    calls = 0
    for dtype in EXACT_DTYPES:
        for n in EXACT_SIZES:
            host_wide = (rng.integers(-8, 9, 2 * n + 1) / 2).astype(dtype)
            host_wide[n // 2] = np.nan
            for k, kind in enumerate(kinds):
                obj, twin = make_input(cupy, kind, host_wide, n)
                finite = twin[~np.isnan(twin)].astype(np.float64)
                for op in EXACT_OPS:
                    with warnings.catch_warnings():
                        # nanmean of a lone NaN: "Mean of empty slice".
                        warnings.simplefilter("ignore", RuntimeWarning)
                        got = getattr(cudareduce, op)(obj, exact=True)
                    calls += 1
                    count = {"mean": n, "nanmean": finite.size}.get(op, 1)
                    nan = (op in ("sum", "mean") and np.isnan(twin).any()
                           or count == 0)
                    want = None if nan else round_exact(
                        Fraction(math.fsum(finite)) / count,
                        np.dtype(dtype).name)[0]
                    bits = np.asarray(got).view(f"u{np.dtype(dtype).itemsize}")
                    if not (np.isnan(got) if nan else int(bits) == want):
                        wrong.append(f"exact {op} {np.dtype(dtype)} n={n} "
                                     f"{kind}: got {got!r}, want {want!r}")
                    state = _cudareduce.exact_state(op, obj, "fast")
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        again = _cudareduce.exact_round_state(
                            op, state, dtype, twin.size)
                    calls += 1
                    if (np.asarray(again).tobytes()
                            != np.asarray(got).tobytes()):
                        wrong.append(f"exact {op} {np.dtype(dtype)} n={n} "
                                     f"{kind} by its state: {again!r}, "
                                     f"not {got!r}")
    return calls


def check_injected_faults(cupy, cudareduce, rng, wrong) -> int:
    """A host array of two ring chunks and a tail, failed at each chunk by
    the injection hook (MemoryError), then reduced right.  Returns the
    calls made."""
    host = integer_values(rng, FAULT_ELEMENTS, np.dtype(np.int64))
    want = numpy_answer("sum", host)
    calls = 0
    for chunk in (0, 1, 2):
        cudareduce._cudareduce._inject_host_fault(chunk)
        try:
            cudareduce.sum(host)
        except MemoryError as error:
            if "injected" not in str(error):
                wrong.append(f"fault at chunk {chunk}: {error!r}")
        else:
            wrong.append(f"fault at chunk {chunk}: no MemoryError")
        finally:
            cudareduce._cudareduce._inject_host_fault(-1)
        got = cudareduce.sum(host)
        calls += 2
        if not same("sum", got, want):
            wrong.append(f"after the fault at chunk {chunk}: got {got!r}, "
                         f"NumPy {want!r}")
    return calls


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", choices=sorted(PROFILES))
    parser.add_argument("--sizes", help="comma-separated, replaces the "
                        "profile's sizes")
    parser.add_argument("--preflight", action="store_true",
                        help="check the imports and the device, no work")
    args = parser.parse_args()
    import cudareduce
    import cupy
    if args.preflight:
        info = cudareduce._cudareduce.device_info()
        print(f"sanitize_driver: preflight: cudareduce "
              f"{cudareduce.__version__} from {cudareduce.__file__}; "
              f"CuPy {cupy.__version__}; {info['name']}")
        return 0
    if args.tool is None:
        parser.error("--tool or --preflight")
    profile = PROFILES[args.tool]
    sizes = (tuple(int(s) for s in args.sizes.split(","))
             if args.sizes else profile["sizes"])
    kinds = profile["kinds"]
    # No pool: one cudaMalloc per array, of its exact size (see above).
    cupy.cuda.set_allocator(None)
    methods = tuple(cudareduce.methods())
    ops = cudareduce._cudareduce.OPERATORS
    rng = np.random.default_rng(8)
    wrong = []
    calls = 0
    seen = set()
    seen_casts = set()
    seen_kinds = set()          # (dtype, input kind), both sweeps
    seen_cast_kinds = set()
    start = time.perf_counter()
    for d, dtype in enumerate(DTYPES):
        for s, n in enumerate(sizes):
            # Data of sums and of products, each made into inputs once.
            host_wide = {data: values_for(data, rng, max(2 * n - 1, n + 1),
                                          dtype) for data in ("sum", "prod")}
            made = {}
            for m, method in enumerate(methods):
                for o, op in enumerate(ops):
                    combo = (m * len(ops) + o) * len(DTYPES) + d
                    # (m, o) steps the kind at each (dtype, size), and the
                    # size steps it for each combination.
                    kind = kinds[(m * len(ops) + o + d + s) % len(kinds)]
                    threads = rotated_threads(cudareduce, op, dtype, method,
                                              combo * 3 + s)
                    data = "prod" if op.endswith("prod") else "sum"
                    if (kind, data) not in made:
                        made[kind, data] = make_input(
                            cupy, kind, host_wide[data], n)
                    obj, twin = made[kind, data]
                    want = numpy_answer(op, twin)
                    got = getattr(cudareduce, op)(obj, method,
                                                  threads=threads)
                    calls += 1
                    seen.add((method, op, dtype.name))
                    seen_kinds.add((dtype.name, kind))
                    if not same(op, got, want):
                        wrong.append(f"{method} {op} {dtype} n={n} {kind} "
                                     f"t{threads}: got {got!r}, NumPy "
                                     f"{want!r}")
            del made
            cupy.cuda.runtime.deviceSynchronize()
    for d, dtype in enumerate(DTYPES):
        host_wide = integer_values(rng, 2 * CAST_SIZE - 1, dtype)
        made = {}
        for t, target in enumerate(CAST_TARGETS):
            for m, method in enumerate(methods):
                combo = (m * len(CAST_TARGETS) + t) * len(DTYPES) + d
                kind = kinds[(m * len(CAST_TARGETS) + t + d) % len(kinds)]
                threads = rotated_threads(cudareduce, "sum", dtype, method,
                                          combo * 3, reduce_dtype=target)
                if kind not in made:
                    made[kind] = make_input(cupy, kind, host_wide, CAST_SIZE)
                obj, twin = made[kind]
                want = numpy_cast_sum(twin, target)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    warnings.simplefilter("ignore",
                                          np.exceptions.ComplexWarning)
                    got = cudareduce.sum(obj, method, threads=threads,
                                         dtype=target)
                calls += 1
                seen_casts.add((method, dtype.name, target.name))
                seen_cast_kinds.add((dtype.name, kind))
                if not same("sum", got, want):
                    wrong.append(f"{method} sum {dtype} into {target} "
                                 f"{kind} t{threads}: got {got!r}, NumPy "
                                 f"{want!r}")
        del made
        cupy.cuda.runtime.deviceSynchronize()
    calls += check_bfloat16(cupy, cudareduce, methods, ops, sizes, kinds, rng,
                            wrong, seen)
    calls += check_empty_inputs(cupy, cudareduce, ops, wrong)
    calls += check_axes(cupy, cudareduce, ops, rng, wrong)
    calls += check_exact(cupy, cudareduce, kinds, rng, wrong)
    calls += check_injected_faults(cupy, cudareduce, rng, wrong)
    elapsed = time.perf_counter() - start
    # Free every array and empty CuPy's caches before the interpreter
    # exits: memcheck's leak check then sees only what the library keeps
    # (its host ring and workspaces, freed when the module is torn down),
    # and .ci/sanitize allows no leak at all.
    gc.collect()
    cupy.cuda.runtime.deviceSynchronize()
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()
    expected = len(methods) * len(ops) * (len(DTYPES) + 1)     # bfloat16
    expected_casts = len(methods) * len(DTYPES) * len(CAST_TARGETS)
    expected_kinds = len(DTYPES) * len(kinds)
    status = ("ok" if not wrong and len(seen) == expected
              and len(seen_casts) == expected_casts
              and len(seen_kinds) == len(seen_cast_kinds) == expected_kinds
              else "FAILED")
    print(f"sanitize_driver: {args.tool}: {status}: {calls} calls, "
          f"{len(seen)}/{expected} method x op x dtype combinations, "
          f"{len(seen_casts)}/{expected_casts} method x dtype x dtype= "
          f"casts, {len(seen_kinds)}+{len(seen_cast_kinds)}/"
          f"{expected_kinds} dtype x input kind, sizes "
          f"{list(sizes)}, kinds {list(kinds)}, in {elapsed:.1f} s"
          + (f"; {len(wrong)} wrong, first: {wrong[:3]}" if wrong else ""),
          flush=True)
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
