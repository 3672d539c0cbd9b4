"""benchmarks/host_links.py without a GPU: its arguments, the host
memcpy rows (which need no GPU: timed here for real, on small arrays),
the floors and the table on made-up rows, and the H2D rows' sequence and
registration cleanup on a fake CuPy (their figures need the GPU machine;
its output goes to docs/recorded/)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "host_links.py"
_spec = importlib.util.spec_from_file_location("host_links", SCRIPT)
host_links = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host_links)

GIB = 1 << 30


def row(name, gpus, gbps, nbytes=2 * GIB, threads=None):
    """A row of `name` moving `nbytes` at `gbps`."""
    found = {"row": name, "gpus": gpus, "nbytes": nbytes,
             "seconds": nbytes / (gbps * 1e9)}
    if threads is not None:
        found["threads"] = threads
    return found


def test_defaults():
    args = host_links.parse_args([])
    assert (args.gib, args.gpus, args.threads, args.repeats,
            args.json) == (2.0, None, None, 5, None)


@pytest.mark.parametrize("argv", [["--gib", "0"], ["--gpus", "0"],
                                  ["--threads", "-2"], ["--repeats", "0"]])
def test_non_positive_arguments_are_refused(argv):
    with pytest.raises(SystemExit):
        host_links.parse_args(argv)


@pytest.mark.parametrize("most, counts", [(1, [1]), (2, [1, 2]),
                                          (4, [1, 2, 4]),
                                          (6, [1, 2, 4, 6]),
                                          (16, [1, 2, 4, 8, 16])])
def test_doubling_counts_go_up_to_the_most(most, counts):
    assert host_links.doubling_counts(most) == counts


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_host_copy_copies_every_share(threads):
    """Each thread's share lands where it belongs, the bounds included
    (the shares are uneven for 3 and 7 threads)."""
    source = np.arange(1000, dtype=np.uint8)
    target = np.zeros_like(source)
    seconds = host_links.host_copy_seconds(source, target, threads, 3)
    assert seconds > 0
    assert np.array_equal(target, source)


def test_the_floor_is_the_links_where_the_host_feeds_them():
    rows = [row("pinned H2D", 1, 55), row("pinned H2D", 2, 110, 4 * GIB),
            row("host memcpy", 2, 200, 4 * GIB, threads=16)]
    found = host_links.floors(rows)
    assert found[1]["floor_gbps"] == pytest.approx(55)
    assert found[2]["floor_gbps"] == pytest.approx(110)
    assert found[2]["host_gbps"] == pytest.approx(200)


def test_the_floor_is_the_host_where_it_feeds_less():
    """Four GPUs take 171 GB/s; 16 threads copy 68: the staging copy is
    the floor (the issue's figures for four H200s)."""
    rows = [row("pinned H2D", 1, 55), row("pinned H2D", 4, 171, 8 * GIB),
            row("host memcpy", 4, 9, 8 * GIB, threads=1),
            row("host memcpy", 4, 68, 8 * GIB, threads=16)]
    found = host_links.floors(rows)
    assert found[4]["host_gbps"] == pytest.approx(68)
    assert found[4]["floor_gbps"] == pytest.approx(68)


def test_registration_counts_where_it_feeds_more_than_the_copy():
    """Registered memory at 160 GB/s on four GPUs, registering at 20
    GB/s: 1 / (1/160 + 1/20) = 17.8 GB/s, below the copy's 68 (the
    copy's rate is the feed); at 2000 GB/s it is 148.1, above it."""
    base = [row("pinned H2D", 4, 171, 8 * GIB),
            row("host memcpy", 4, 68, 8 * GIB, threads=16),
            row("registered H2D", 4, 160, 8 * GIB)]
    slow = host_links.floors(base + [row("register", 1, 20)])[4]
    assert slow["host_gbps"] == pytest.approx(68)
    fast = host_links.floors(base + [row("register", 1, 2000)])[4]
    assert fast["host_gbps"] == pytest.approx(1 / (1 / 160 + 1 / 2000))
    assert fast["floor_gbps"] == pytest.approx(fast["host_gbps"])


def test_without_host_rows_the_floor_is_the_links():
    found = host_links.floors([row("pinned H2D", 2, 110, 4 * GIB)])
    assert found[2] == {"links_gbps": pytest.approx(110), "host_gbps": None,
                        "floor_gbps": pytest.approx(110)}


def test_report_has_every_row_and_the_floors_against_one_gpu():
    rows = [row("pinned H2D", 1, 55), row("pinned H2D", 2, 110, 4 * GIB),
            row("pageable H2D", 1, 9),
            row("host memcpy", 2, 80, 4 * GIB, threads=8)]
    text = host_links.report(rows)
    lines = text.splitlines()
    assert lines[0].split() == ["row", "GPUs", "threads", "GiB", "ms",
                                "GB/s"]
    assert any(line.split()[:2] == ["pageable", "H2D"]
               and line.split()[-1] == "9.0" for line in lines)
    assert any(line.split()[:3] == ["host", "memcpy", "2"]
               and line.split()[3] == "8" for line in lines)
    floor_two = next(line for line in lines[lines.index(""):]
                     if line.split()[:1] == ["2"])
    # two GPUs: links 110, host 80: the floor 80, 1.45x one GPU's 55
    # (one GPU's links, below the host's 80)
    assert floor_two.split() == ["2", "110.0", "80.0", "80.0", "1.45"]


class _FakeRuntime:
    """CuPy's runtime as _device_rows calls it: copies do nothing,
    registrations are kept, the `fail_at`-th registration raises."""
    memcpyHostToDevice = 1

    def __init__(self, fail_at=None):
        self.fail_at = fail_at
        self.registered = []
        self.registrations = 0

    def memcpyAsync(self, dst, src, nbytes, kind, stream):
        pass

    def hostRegister(self, pointer, nbytes, flags):
        self.registrations += 1
        if self.registrations == self.fail_at:
            raise RuntimeError("cudaErrorHostMemoryAlreadyRegistered")
        self.registered.append(pointer)

    def hostUnregister(self, pointer):
        self.registered.remove(pointer)


def _fake_cupy(runtime):
    """Just enough of CuPy for _device_rows on made-up GPUs."""
    class Stream:
        ptr = 0

        def __init__(self, non_blocking):
            pass

        def synchronize(self):
            pass

    class Pinned:
        ptr = 1

    class Device:
        def __init__(self, ordinal):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Buffer:
        class data:
            ptr = 2

    cuda = type("cuda", (), {"runtime": runtime, "Stream": Stream,
                             "Device": Device,
                             "alloc_pinned_memory": staticmethod(
                                 lambda nbytes: Pinned())})
    return type("cupy", (), {"cuda": cuda,
                             "empty": staticmethod(lambda n, t: Buffer())})


def test_device_rows_on_fake_gpus_unregister_what_they_registered():
    runtime = _FakeRuntime()
    rows = host_links._device_rows(_fake_cupy(runtime), 2, 64, 1)
    assert [(r["row"], r["gpus"]) for r in rows] == [
        ("pinned H2D", 1), ("pageable H2D", 1),
        ("pinned H2D", 2), ("pageable H2D", 2),
        ("registered H2D", 1), ("registered H2D", 2), ("register", 1)]
    assert runtime.registrations == 2 and runtime.registered == []


def test_a_failed_registration_leaves_none_registered():
    runtime = _FakeRuntime(fail_at=3)
    with pytest.raises(RuntimeError, match="AlreadyRegistered"):
        host_links._device_rows(_fake_cupy(runtime), 4, 64, 1)
    assert runtime.registrations == 3 and runtime.registered == []


class _FakeLibrary:
    """cudareduce.sum as reduce_rows calls it: the devices of each call
    kept, the result one GPU's, or another's on `wrong_on` GPUs."""

    def __init__(self, wrong_on=None):
        self.calls = []
        self.wrong_on = wrong_on

    def sum(self, x, devices):
        self.calls.append(devices)
        value = float(x.sum(dtype=np.float64))
        if len(devices) == self.wrong_on:
            value += 1
        return np.float32(value)


def test_reduce_rows_time_each_count_of_gpus_on_the_same_array():
    library = _FakeLibrary()
    x = np.ones(1000, np.float32)
    rows = host_links.reduce_rows(library, x, 4, 2)
    assert [(r["row"], r["gpus"], r["nbytes"]) for r in rows] == [
        ("cudareduce.sum", k, 4000) for k in (1, 2, 4)]
    assert all(r["seconds"] > 0 for r in rows)
    # One untimed call and two timed ones per count.
    assert library.calls == [[0]] * 3 + [[0, 1]] * 3 + [[0, 1, 2, 3]] * 3


def test_reduce_rows_refuse_other_bits_than_one_gpus():
    with pytest.raises(AssertionError, match=r"devices=\[0, 1\]"):
        host_links.reduce_rows(_FakeLibrary(wrong_on=2),
                               np.ones(10, np.float32), 2, 1)


@pytest.mark.parametrize("name, two, share", [
    ("cudareduce.sum", 72, "90%"), ("cudareduce.sum, locked", 99, "90%")])
def test_report_puts_the_sums_under_their_floors(name, two, share):
    """Two GPUs: links 110 GB/s, the host's memcpy 80.  A pageable
    array's floor is the smaller, 80: the sum at 72 is 90% of it, 1.31x
    one GPU's 55 (100% of one link).  Locked pages are copied in place:
    their floor is the links', 110: at 99, 90%, 1.80x.  Each row kind has
    a table of its own."""
    other = "cudareduce.sum" if "locked" in name else \
        "cudareduce.sum, locked"
    rows = [row("pinned H2D", 1, 55), row("pinned H2D", 2, 110, 4 * GIB),
            row("host memcpy", 2, 80, 4 * GIB, threads=8),
            row(name, 1, 55, 4 * GIB), row(name, 2, two, 4 * GIB)]
    lines = host_links.report(rows).splitlines()

    def header(kind):
        return f"GPUs {kind} GB/s % of floor x one GPU".split()

    start = next(i for i, line in enumerate(lines)
                 if line.split() == header(name))
    assert lines[start + 1].split() == ["1", "55.0", "100%", "1.00"]
    assert lines[start + 2].split() == ["2", f"{two:.1f}", share,
                                        f"{two / 55:.2f}"]
    assert not any(line.split() == header(other) for line in lines)


def test_reduce_rows_take_their_name():
    rows = host_links.reduce_rows(_FakeLibrary(), np.ones(10, np.float32),
                                  2, 1, "cudareduce.sum, locked")
    assert [r["row"] for r in rows] == ["cudareduce.sum, locked"] * 2


def test_reduce_is_an_option():
    assert host_links.parse_args([]).reduce is False
    assert host_links.parse_args(["--reduce"]).reduce is True
