"""Reductions along axes as stream users write them: no ``stream=``.

The calls: ``sum(x, axis=1)``, ``argmax(x, axis=0)``, ``mean(x, axis=1,
keepdims=True)`` and ``sum(x, axis=1, out=out)``, whose rule is
docs/usage.md's "Streams" and "Along axes": a call runs on the stream the
user's library would run its own operation on, after the stream the data
is ready on, and returns its device result (of the input's library) without
waiting for the GPU.

- CuPy: inside ``with cupy.cuda.Stream(non_blocking=True) as s:`` the input
  is written on ``s`` behind a kernel that keeps ``s`` busy for tens of
  milliseconds, reduced, and the results read with CuPy's ``.get()`` alone,
  which copies on ``s``.  A call on another stream would read the zeros
  there before the write (the negative control shows that this set-up
  sees it), and one that waited for the GPU would leave ``s`` idle.
- PyTorch: the same inside ``torch.cuda.stream(side)``, the results torch
  tensors that PyTorch's own kernels then read on ``side``; and
  ``torch.cuda.graph`` capturing the calls with a static input, into
  static ``out=`` tensors and into results allocated inside the capture by
  PyTorch's allocator (a device result needs the host for nothing),
  replayed after the input changes in place.  A call that needs the host
  is refused with CudaError (cudaErrorStreamCaptureUnsupported) before it
  queues anything, and the capture goes on.  A replayed call has the
  eager call's bits (normal data: sums, a float16 mean, argmax, columns,
  nanmean, complex64, each of two passes), and NumPy's answer within a
  float sum's bound.
- JAX: an input that JAX's last kernel writes after a matrix product
  (milliseconds) is read only after it (a call that did not wait would
  read its memory unwritten), and the results are jax.Arrays that JAX's
  next kernels read after the call: also inside ``torch.cuda.stream(side)``,
  where the call runs on ``side``, and inside CuPy's ``with stream:``,
  where it runs on the legacy default stream, each behind a spin.

The values are small integers, every sum exact; a mean is within two
float32 ulps of NumPy's.
"""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce
from support.axis_cases import AXIS_METHODS, same_bits, same_values
from test_inputs_gpu import SPIN_CYCLES, cupy_spin, jax_with_gpu  # noqa: F401
from test_inputs_offline import CAI

pytestmark = pytest.mark.gpu

SHAPE = (1024, 1000)
REFUSED = "cudaErrorStreamCaptureUnsupported"


def fresh_values(rng) -> np.ndarray:
    """float32 integers 1 to 100 but row 0, all 0: the zeros there before
    a write sum and average to 0 and have their argmax along axis 0 at
    row 0, where these never have it."""
    values = rng.integers(1, 101, SHAPE).astype(np.float32)
    values[0] = 0
    return values


def reductions(x, out=None) -> dict:
    """The calls under test, as a user writes them (with `out`, the sum
    into it besides)."""
    results = {"sum": cudareduce.sum(x, axis=1),
               "argmax": cudareduce.argmax(x, axis=0),
               "mean": cudareduce.mean(x, axis=1, keepdims=True)}
    if out is not None:
        results["sum into out"] = cudareduce.sum(x, axis=1, out=out)
    return results


def numpy_answer(name: str, host: np.ndarray) -> np.ndarray:
    if name == "argmax":
        return np.argmax(host, axis=0)
    if name == "mean":
        return np.mean(host, axis=1, keepdims=True)
    return np.sum(host, axis=1)


def check(read: dict, host: np.ndarray, note: str) -> None:
    """Each result read back (NumPy arrays) is NumPy's on `host`."""
    for name, got in read.items():
        want = numpy_answer(name, host)
        if name == "mean":
            assert got.dtype == want.dtype and got.shape == want.shape \
                and np.allclose(got, want, rtol=2 * np.finfo(np.float32).eps,
                                atol=0), (name, got[:4], want[:4], note)
        else:
            assert same_values(got, want), (name, got[:8], want[:8], note)


# --- CuPy: with stream: ------------------------------------------------------

def test_cupy_results_come_on_the_current_stream(cupy, cupy_spin, rng,
                                                 seed_note):
    host = fresh_values(rng)
    values = cupy.asarray(host)
    x = cupy.zeros_like(values)
    out = cupy.full(SHAPE[0], -1, np.float32)
    # (s does not wait for the default stream, which made these.)
    cupy.cuda.runtime.deviceSynchronize()
    with cupy.cuda.Stream(non_blocking=True) as s:
        # Once without the spin: CuPy's kernels compiled, the library's
        # kept memory and blocks of CuPy's pool for s there, so that
        # nothing below allocates (an allocation may synchronise the
        # device and hide a missing wait).
        x[...] = values
        reductions(x, out)
        s.synchronize()
        x.fill(0)
        out.fill(-1)
        cupy_spin()
        x[...] = values                 # the input, written on s
        got = reductions(x, out)
        busy = not s.done
        read = {name: value.get() for name, value in got.items()}  # on s
    assert busy, ("s was idle after the calls: one waited for the GPU, "
                  "which a device result does not")
    assert got["sum into out"] is out
    assert all(isinstance(value, cupy.ndarray) for value in got.values())
    check(read, host, f"not ordered after the write on s {seed_note}")


def test_negative_control_another_stream_reads_the_zeros(cupy, cupy_spin,
                                                         rng, seed_note):
    """The set-up above can see a missing wait: an interface that names no
    stream, reduced along an axis on another non-blocking stream while s
    still spins, runs before the write and sums the zeros."""
    host = fresh_values(rng)
    values = cupy.asarray(host)
    x = cupy.zeros_like(values)
    bare = CAI({key: value for key, value in
                x.__cuda_array_interface__.items() if key != "stream"})
    other = cupy.cuda.Stream(non_blocking=True)
    cupy.cuda.runtime.deviceSynchronize()
    with cupy.cuda.Stream(non_blocking=True):
        # Once without the spin, as above.
        x[...] = values
        cudareduce.sum(bare, axis=1, stream=other.ptr)
        x.fill(0)
        # `other` waits for no stream: the zeros must be there before.
        cupy.cuda.runtime.deviceSynchronize()
        cupy_spin()
        x[...] = values
        got = cudareduce.sum(bare, axis=1, stream=other.ptr)
    cupy.cuda.runtime.deviceSynchronize()
    assert not same_values(got.get(), np.sum(host, axis=1)), (
        f"unordered, yet it saw the write: the spin is too short to show a "
        f"missing wait {seed_note}")


# --- PyTorch: torch.cuda.stream ----------------------------------------------

def test_torch_results_come_on_the_current_stream(torch, rng, seed_note):
    host = fresh_values(rng)
    values = torch.from_numpy(host).cuda()
    x = torch.zeros_like(values)
    out = torch.full((SHAPE[0],), -1.0, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # Once without the spin, as for CuPy: blocks of PyTorch's caching
        # allocator for side, and the library's kept memory.
        x.copy_(values)
        reductions(x, out)
        side.synchronize()
        x.zero_()
        out.fill_(-1)
        torch.cuda._sleep(SPIN_CYCLES)
        x.copy_(values)                 # the input, written on side
        got = reductions(x, out)
        busy = not side.query()
        # PyTorch's own kernels read the results on side, and the copies
        # to the host wait for side.
        read = {name: value.clone().cpu().numpy()
                for name, value in got.items()}
    assert busy, ("side was idle after the calls: one waited for the GPU, "
                  "which a device result does not")
    assert got["sum into out"] is out
    for name, value in got.items():
        assert isinstance(value, torch.Tensor) and value.device == x.device, (
            name, type(value))
    check(read, host, f"not ordered after the write on side {seed_note}")


# --- PyTorch: torch.cuda.graph -----------------------------------------------

def warmed_up(torch, step) -> None:
    """PyTorch's recipe before a capture: a few runs on a side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)


def check_replays(torch, rng, x, graph, results: dict, note: str) -> None:
    """Three replays, each after new values are written into `x` in place:
    each result NumPy's on them."""
    for _ in range(3):
        host = fresh_values(rng)
        x.copy_(torch.from_numpy(host))
        graph.replay()
        torch.cuda.synchronize()
        check({name: value.cpu().numpy() for name, value in results.items()},
              host, note)


@pytest.mark.parametrize("method", AXIS_METHODS)
def test_torch_graph_captures_into_static_outs(torch, rng, seed_note,
                                               method):
    x = torch.zeros(SHAPE, dtype=torch.float32, device="cuda")
    outs = {"sum": torch.zeros(SHAPE[0], dtype=torch.float32, device="cuda"),
            "argmax": torch.zeros(SHAPE[1], dtype=torch.int64,
                                  device="cuda"),
            "mean": torch.zeros((SHAPE[0], 1), dtype=torch.float32,
                                device="cuda")}

    def step():
        cudareduce.sum(x, method, axis=1, out=outs["sum"])
        cudareduce.argmax(x, method, axis=0, out=outs["argmax"])
        cudareduce.mean(x, method, axis=1, keepdims=True, out=outs["mean"])
    warmed_up(torch, step)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    check_replays(torch, rng, x, graph, outs, f"{method} {seed_note}")


@pytest.mark.parametrize("method", AXIS_METHODS)
def test_torch_graph_captures_results_it_allocates(torch, rng, seed_note,
                                                   method):
    """Without out=, the result comes from PyTorch's allocator, inside the
    capture from the graph's own pool, as a tensor made there by PyTorch
    would: the graph's static output."""
    x = torch.zeros(SHAPE, dtype=torch.float32, device="cuda")

    def step():
        return {"sum": cudareduce.sum(x, method, axis=1),
                "argmax": cudareduce.argmax(x, method, axis=0),
                "mean": cudareduce.mean(x, method, axis=1, keepdims=True)}
    warmed_up(torch, step)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        results = step()
    for name, value in results.items():
        assert isinstance(value, torch.Tensor) and value.is_cuda, (
            name, type(value))
    check_replays(torch, rng, x, graph, results, f"{method} {seed_note}")


# A graph's replay of a call along an axis gives the eager call's bits,
# for each way a result is stored, rows and columns of two passes (what a
# capture may plan otherwise, it may not answer otherwise).
# (op, dtype, shape, axis)
REPLAYED_CASES = [
    ("sum", "float32", (4, 1 << 20), 1),     # rows; accumulators as results
    ("mean", "float16", (3, 40_000), 1),     # finished into float16
    ("argmax", "float32", (32, 1 << 17), 1),  # int64 indices, short chunks
    ("sum", "int8", (1 << 20, 4), 0),        # columns of int64 sums
    ("sum", "float32", (1 << 16, 8), 0),     # columns, a thread a lane
    ("nanmean", "float32", (5, 9_000), 1),   # counted sums
    ("sum", "complex64", (3, 5_000), 1),
    # a later pass of more than 512 partials a row: the staged kernel's
    ("sum", "float32", (3, 513 * 4096 + 7), 1),
]


@pytest.mark.parametrize(
    "op, dtype, shape, axis", REPLAYED_CASES,
    ids=[f"{op}-{dtype}-{shape[0]}x{shape[1]}-axis{axis}"
         for op, dtype, shape, axis in REPLAYED_CASES])
def test_a_graph_replay_has_the_eager_calls_bits(torch, rng, seed_note, op,
                                                 dtype, shape, axis):
    if dtype == "int8":
        host = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        host = rng.standard_normal(shape).astype(dtype)
        if dtype == "complex64":
            host = host + 1j * rng.standard_normal(shape).astype(np.float32)
        if op == "nanmean":
            host[:, ::7] = np.nan
    x = torch.from_numpy(host).cuda()
    reduce = getattr(cudareduce, op)
    eager = reduce(x, axis=axis)
    out = torch.empty_like(eager)
    warmed_up(torch, lambda: reduce(x, axis=axis, out=out))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        reduce(x, axis=axis, out=out)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    got, want = out.cpu().numpy(), eager.cpu().numpy()
    assert same_bits(got, want), (got[:4], want[:4], seed_note)
    assert want.dtype == getattr(np, op)(host, axis=axis).dtype, want.dtype
    if op == "argmax" or dtype == "int8":
        numpys = getattr(np, op)(host, axis=axis)
        assert np.array_equal(want, numpys), (want[:4], numpys[:4])
        return
    wide = host.astype(np.complex128 if dtype == "complex64" else np.float64)
    numpys = getattr(np, op)(wide, axis=axis)
    # Within a float sum's bound: the dtype's epsilon times the magnitudes
    # summed (a mean's over its count), times a few.
    magnitude = np.nansum(np.abs(wide), axis=axis)
    if op.endswith("mean"):
        magnitude = magnitude / np.sum(~np.isnan(np.abs(wide)), axis=axis)
    bound = 16 * np.finfo(dtype).eps * magnitude
    assert np.all(np.abs(want - numpys) <= bound), (want[:4], numpys[:4])


# Calls along an axis that need the host, each as a user would write it.
UNCAPTURABLE = {
    "numpy out": lambda x, host, out: cudareduce.sum(
        x, axis=1, out=np.zeros(SHAPE[0], np.float32)),
    "host data": lambda x, host, out: cudareduce.sum(host, axis=1),
    "host data into a device out": lambda x, host, out: cudareduce.sum(
        host, axis=1, out=out),
}


@pytest.mark.parametrize("case", UNCAPTURABLE)
def test_torch_capture_refuses_a_call_that_needs_the_host(torch, rng,
                                                          seed_note, case):
    host = fresh_values(rng)
    x = torch.from_numpy(host).cuda()
    out = torch.zeros(SHAPE[0], dtype=torch.float32, device="cuda")
    warmed_up(torch, lambda: cudareduce.sum(x, axis=1, out=out))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(cudareduce.CudaError, match=REFUSED):
            UNCAPTURABLE[case](x, host, out)
        # Nothing was queued: the capture goes on, and ends cleanly.
        out.zero_()
        cudareduce.sum(x, axis=1, out=out)
    graph.replay()
    torch.cuda.synchronize()
    assert same_values(out.cpu().numpy(), np.sum(host, axis=1)), seed_note


# --- JAX ---------------------------------------------------------------------

def jax_and_numpy():
    """JAX set up for the GPU tests (test_inputs_gpu.jax_with_gpu) and
    jax.numpy; a skip where JAX is not installed, as the other JAX
    cases."""
    jax = jax_with_gpu()
    if jax is None:
        pytest.importorskip("jax")
        pytest.fail("JAX is installed but sees no GPU")
    return jax, pytest.importorskip("jax.numpy")


def test_jax_results_are_read_by_jax_next(rng, seed_note):
    jax, jnp = jax_and_numpy()
    host = fresh_values(rng)
    gpu = jax.devices("gpu")[0]
    # The input: JAX's last kernel (exact: + 0) after a matrix product it
    # depends on, both dispatched and not run yet.
    big = jax.device_put(jnp.ones((8192, 8192), np.float32), gpu)
    x = jax.device_put(host, gpu) * 2 + 0 * jnp.sum(big @ big)
    got = reductions(x)
    for name, value in got.items():
        assert isinstance(value, jax.Array), (name, type(value))
        assert value.devices() == x.devices(), (name, value.devices())
    # JAX's own kernel (a negation, exact) reads each result.
    read = {name: -np.asarray(-value) for name, value in got.items()}
    check(read, host * 2, seed_note)


def test_jax_results_of_a_call_on_torch_s_stream_wait_for_it(torch, rng,
                                                             seed_note):
    """Inside torch.cuda.stream(side) a JAX input is reduced on side
    (docs/usage.md's table), here behind a spin: JAX's kernels read the
    jax.Arrays it returns after the call's, not before."""
    jax, _ = jax_and_numpy()
    gpu = jax.devices("gpu")[0]
    host = fresh_values(rng)
    x = jax.device_put(host, gpu)
    # Once on zeros first, as above, so that nothing below allocates: the
    # memory the results come from is then there, with the zeros' answers.
    jax.block_until_ready(reductions(jax.device_put(
        np.zeros(SHAPE, np.float32), gpu)))
    x.block_until_ready()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN_CYCLES)
        got = reductions(x)
    read = {name: -np.asarray(-value) for name, value in got.items()}
    torch.cuda.synchronize()
    check(read, host, f"read before the call on side wrote it {seed_note}")


def test_jax_results_of_a_call_inside_cupy_s_stream_wait_for_it(
        cupy, cupy_spin, rng, seed_note):
    """Inside CuPy's ``with stream:`` a JAX input is reduced on the legacy
    default stream (docs/usage.md's table: CuPy's stream counts for data
    that names none), here behind a spin there: JAX's kernels read the
    jax.Arrays it returns after the call's, not before."""
    jax, _ = jax_and_numpy()
    gpu = jax.devices("gpu")[0]
    host = fresh_values(rng)
    x = jax.device_put(host, gpu)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        # Once on zeros first, as above.
        jax.block_until_ready(reductions(jax.device_put(
            np.zeros(SHAPE, np.float32), gpu)))
    x.block_until_ready()
    cupy.cuda.runtime.deviceSynchronize()
    cupy_spin()                         # on CuPy's default stream: legacy
    with s:
        got = reductions(x)
    read = {name: -np.asarray(-value) for name, value in got.items()}
    cupy.cuda.runtime.deviceSynchronize()
    check(read, host, f"read before the call on the legacy default stream "
                      f"wrote it {seed_note}")
