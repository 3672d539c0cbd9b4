"""PyTorch's streams and graphs as PyTorch users write them: no ``stream=``.

Inside ``torch.cuda.stream(s)`` every PyTorch operation runs on ``s``, and
so does a reduction called there without ``stream=``: of a torch.Tensor
(read directly, or a subclass through DLPack), and of any other device
array (a CuPy view of the tensor), after that array's own stream.  The
tensor is written on ``s`` behind a kernel that keeps ``s`` busy for tens
of milliseconds, so a reduction not ordered after the write reads the
zeros that were there before and gives another answer.

Graph capture: ``torch.cuda.graph(g)`` and CuPy's ``stream.begin_capture()``
capture every method into a device ``out`` without ``stream=``, at sizes
that need scratch (a multi-block grid, CUB's temporary storage), with a
cast pass and a strided view's gather; three replays on new data give
NumPy's answers exactly (small integers, whose float sums are exact).  A
call that cannot be captured (a result to the host, host data) raises
CudaError before it queues anything, and the next capture in the process
works.
"""
from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import numpy as np
import numpy.ma as ma
import pytest

import cudareduce

pytestmark = pytest.mark.gpu

METHODS = list(cudareduce.methods())
# Methods of the side-stream cases that vary the input kind: the first
# ladder step, the fast path and CUB (the matrix of a plain tensor has
# every method).
SOME_METHODS = [METHODS[0], "fast", "cub"]
# Clock cycles torch.cuda._sleep keeps the stream busy (tens of ms on an
# H100) before the write.
SPIN_CYCLES = 100_000_000
N = 2 ** 22
# Multi-block for every method (the ladder's steps, and fast's grid), and
# not a multiple of a vector or a block.
CAPTURE_N = 2 ** 20 + 5
REFUSED = "cudaErrorStreamCaptureUnsupported"


def side_values(rng, op: str) -> np.ndarray:
    """int64 values with no zero (a sum that read the zeros there before
    is another number) and, for argmin, one smallest element away from
    index 0 (the zeros' argmin)."""
    values = rng.integers(2, 2 ** 40, size=N, dtype=np.int64)
    if op == "argmin":
        values[rng.integers(1, N)] = 1
    return values


@functools.cache
def tensor_subclass(torch):
    """An empty subclass of torch.Tensor, made once."""
    return type("Subclass", (torch.Tensor,), {})


def view_of(kind: str, tensor, torch, cupy):
    """The tensor as a user of `kind` hands it over."""
    if kind == "tensor":
        return tensor
    if kind == "subclass":
        return tensor.as_subclass(tensor_subclass(torch))
    if kind == "cupy-view":
        return cupy.asarray(tensor)
    assert kind == "cupy-dlpack-view", kind
    return cupy.from_dlpack(tensor)


def reduce_into(op: str, x, method: str, out_kind: str, torch):
    """cudareduce's `op` of `x` with no stream=: its result to the host,
    into a 0-d int64 tensor (device out) or into a NumPy out; returns
    something int() reads after a synchronisation."""
    function = getattr(cudareduce, op)
    if out_kind == "host":
        return function(x, method)
    if out_kind == "device":
        out = torch.zeros((), dtype=torch.int64, device="cuda")
        function(x, method, out=out)
        return out
    out = np.zeros((), np.int64)
    function(x, method, out=out)
    return out


def side_stream_case(torch, rng, op, method, out_kind, kind, cupy=None):
    """The issue's case: written on a side stream and reduced there."""
    host = side_values(rng, op)
    values = torch.from_numpy(host).cuda()
    x = torch.zeros_like(values)
    # One call first, so that nothing the call under test sets up (a
    # kept workspace) synchronises the device and hides a missing wait.
    getattr(cudareduce, op)(values, method)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN_CYCLES)
        x.copy_(values)
        got = reduce_into(op, view_of(kind, x, torch, cupy), method,
                          out_kind, torch)
    torch.cuda.synchronize()
    want = int(getattr(np, op)(host))
    return int(got), want


@pytest.mark.parametrize("out_kind", ["host", "device", "numpy"])
@pytest.mark.parametrize("op", ["sum", "argmin"])
@pytest.mark.parametrize("method", METHODS)
def test_tensor_written_on_the_current_side_stream(torch, rng, seed_note,
                                                   method, op, out_kind):
    got, want = side_stream_case(torch, rng, op, method, out_kind, "tensor")
    assert got == want, (f"got {got}, want {want}: not ordered after the "
                         f"write on PyTorch's current stream {seed_note}")


@pytest.mark.parametrize("kind", ["subclass", "cupy-view",
                                  "cupy-dlpack-view"])
@pytest.mark.parametrize("op", ["sum", "argmin"])
@pytest.mark.parametrize("method", SOME_METHODS)
def test_other_views_on_the_current_side_stream(torch, cupy, rng, seed_note,
                                                method, op, kind):
    """A torch.Tensor subclass (through DLPack) and CuPy views of the
    tensor (through its interface, which names CuPy's stream, and through
    DLPack), inside torch.cuda.stream(side): ordered after the write."""
    for out_kind in ("host", "device"):
        got, want = side_stream_case(torch, rng, op, method, out_kind, kind,
                                     cupy)
        assert got == want, (f"{kind} into {out_kind}: got {got}, want "
                             f"{want} {seed_note}")


def test_cupy_view_result_comes_before_cupy_s_later_work(torch, cupy, rng,
                                                         seed_note):
    """A CuPy view reduced inside torch.cuda.stream(side) runs on `side`;
    CuPy's own stream (the one its interface names) then waits for the
    result: CuPy's read of a CuPy out, with no other synchronisation, sees
    it."""
    host = side_values(rng, "sum")
    values = torch.from_numpy(host).cuda()
    x = torch.zeros_like(values)
    cudareduce.sum(values)
    torch.cuda.synchronize()
    out = cupy.zeros((), np.int64)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN_CYCLES)
        x.copy_(values)
        cudareduce.sum(cupy.asarray(x), out=out)
    got = int(out.get())
    torch.cuda.synchronize()
    assert got == int(np.sum(host)), (
        f"got {got}: CuPy's stream did not wait for the result {seed_note}")


def test_tensor_written_on_the_default_stream(torch, rng, seed_note):
    """Outside torch.cuda.stream a tensor is reduced on PyTorch's default
    stream (the legacy one), after PyTorch's work there."""
    host = side_values(rng, "sum")
    values = torch.from_numpy(host).cuda()
    x = torch.zeros_like(values)
    cudareduce.sum(values)
    torch.cuda.synchronize()
    torch.cuda._sleep(SPIN_CYCLES)
    x.copy_(values)
    assert int(cudareduce.sum(x)) == int(np.sum(host)), seed_note


# --- graph capture ---------------------------------------------------------------

def small_integers(rng, n: int = CAPTURE_N) -> np.ndarray:
    """float32 integers in [-8, 8]: every sum of them is exact, and argmin
    has ties (its first index is the answer)."""
    return rng.integers(-8, 9, size=n).astype(np.float32)


# Each captured call: (name, the call, NumPy's answer, the out's dtype).
CAPTURED = [
    ("sum", lambda x, m, out: cudareduce.sum(x, m, out=out),
     lambda h: np.sum(h), np.float32),
    ("argmin", lambda x, m, out: cudareduce.argmin(x, m, out=out),
     lambda h: np.argmin(h), np.int64),
    ("strided max", lambda x, m, out: cudareduce.max(x[::3], m, out=out),
     lambda h: np.max(h[::3]), np.float32),
    ("cast", lambda x, m, out: cudareduce.sum(x, m, dtype=np.int32,
                                              out=out),
     lambda h: np.sum(h, dtype=np.int32), np.int32),
]


def check_replays(rng, method, write, replay, read_outs, seed_note):
    """Three replays on new data, each out exactly NumPy's answer."""
    for _ in range(3):
        fresh = small_integers(rng)
        write(fresh)
        replay()
        for (name, _, numpy_answer, dtype), got in zip(CAPTURED,
                                                       read_outs()):
            want = numpy_answer(fresh).astype(dtype)
            assert got == want and got.dtype == want.dtype, (
                f"{method} {name}: replay gave {got!r}, NumPy {want!r} "
                f"{seed_note}")


@pytest.mark.parametrize("method", METHODS)
def test_torch_graph_captures_without_a_stream(torch, rng, seed_note,
                                               method):
    x = torch.from_numpy(small_integers(rng)).cuda()
    torch_dtypes = {np.float32: torch.float32, np.int64: torch.int64,
                    np.int32: torch.int32}
    outs = [torch.zeros((), dtype=torch_dtypes[dtype], device="cuda")
            for *_, dtype in CAPTURED]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for (_, call, _, _), out in zip(CAPTURED, outs):
            call(x, method, out)
    check_replays(
        rng, method, lambda fresh: x.copy_(torch.from_numpy(fresh)),
        graph.replay,
        lambda: (torch.cuda.synchronize(),
                 [out.cpu().numpy() for out in outs])[1], seed_note)


@pytest.mark.parametrize("method", METHODS)
def test_cupy_graph_captures_without_a_stream(cupy, rng, seed_note, method):
    x = cupy.asarray(small_integers(rng))
    outs = [cupy.zeros((), dtype) for *_, dtype in CAPTURED]
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for (_, call, _, _), out in zip(CAPTURED, outs):
            call(x, method, out)
        graph = stream.end_capture()

    def write(fresh):
        x.set(fresh, stream=stream)

    def replay():
        graph.launch(stream)
        stream.synchronize()
    check_replays(rng, method, write, replay,
                  lambda: [out.get() for out in outs], seed_note)


@pytest.mark.parametrize("kind", ["subclass", "cupy-view"])
def test_torch_graph_captures_other_views(torch, cupy, rng, seed_note,
                                          kind):
    """A torch.Tensor subclass and a CuPy view of the tensor, captured by
    torch.cuda.graph: the capture's stream, whatever the view's own."""
    x = torch.from_numpy(small_integers(rng)).cuda()
    out = torch.zeros((), dtype=torch.float32, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cudareduce.sum(view_of(kind, x, torch, cupy), out=out)
    for _ in range(3):
        fresh = small_integers(rng)
        x.copy_(torch.from_numpy(fresh))
        graph.replay()
        torch.cuda.synchronize()
        assert out.item() == np.sum(fresh), seed_note


# Calls a capture cannot hold, each as a user would write it.
UNCAPTURABLE = {
    "host result": lambda x, host, out: cudareduce.sum(x),
    "numpy out": lambda x, host, out: cudareduce.sum(
        x, out=np.zeros((), np.float32)),
    "host data": lambda x, host, out: cudareduce.sum(host, out=out),
    "masked array": lambda x, host, out: cudareduce.sum(
        ma.masked_array(host, mask=host < 0)),
}


@pytest.mark.parametrize("case", UNCAPTURABLE)
def test_uncapturable_call_leaves_torch_capture_usable(torch, rng, seed_note,
                                                       case):
    host = small_integers(rng)
    x = torch.from_numpy(host).cuda()
    out = torch.zeros((), dtype=torch.float32, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(cudareduce.CudaError, match=REFUSED):
        with torch.cuda.graph(graph):
            UNCAPTURABLE[case](x, host, out)
    # The next capture in the process, of PyTorch's operations and a
    # reduction of their result, works and replays.
    again = torch.cuda.CUDAGraph()
    with torch.cuda.graph(again):
        doubled = x * 2
        cudareduce.sum(doubled, out=out)
    again.replay()
    torch.cuda.synchronize()
    assert out.item() == 2 * np.sum(host), seed_note
    # And PyTorch's own random numbers, which an ended capture breaks.
    assert torch.randn(4, device="cuda").isfinite().all()


@pytest.mark.parametrize("case", UNCAPTURABLE)
def test_uncapturable_call_leaves_cupy_capture_usable(cupy, rng, seed_note,
                                                      case):
    host = small_integers(rng)
    x = cupy.asarray(host)
    out = cupy.zeros((), np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        with pytest.raises(cudareduce.CudaError, match=REFUSED):
            UNCAPTURABLE[case](x, host, out)
        stream.end_capture()
        stream.begin_capture()
        cudareduce.sum(x * 2, out=out)
        graph = stream.end_capture()
    graph.launch(stream)
    stream.synchronize()
    assert out.get() == 2 * np.sum(host), seed_note


def test_first_call_of_a_process_inside_a_torch_capture():
    """Nothing cudareduce sets up on its first call (its memory pool)
    breaks a capture: a fresh process whose first reduction is captured."""
    code = textwrap.dedent("""
        import numpy as np, torch, cudareduce
        x = torch.arange(1, 2 ** 20 + 6, dtype=torch.float64, device="cuda")
        out = torch.zeros((), dtype=torch.float64, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            cudareduce.sum(x, out=out)
        x.mul_(2)
        graph.replay()
        torch.cuda.synchronize()
        n = 2 ** 20 + 5
        assert out.item() == n * (n + 1), out.item()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (
        done.stdout + done.stderr)
