"""tests/support/c/fault_origin.c, without a GPU: a fault in a library named like
the CUDA driver is excused (exit 86), a fault anywhere else still kills the
process.  This is what lets test_reliability_gpu excuse a crash inside the
driver and nothing else."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from support import fault_origin
from support.c_build import c_compiler

FAULTING_LIBRARY = "int fault(void) { return *(volatile int *)0; }\n"


def crash_in(tmp_path, library_name: str):
    """A child process, with the preload library, that calls a faulting
    function of a library built as `library_name`; (its result, the
    library's path)."""
    preload = fault_origin.build(tmp_path)
    source = tmp_path / "fault.c"
    source.write_text(FAULTING_LIBRARY)
    library = tmp_path / library_name
    subprocess.run([c_compiler(), "-shared", "-fPIC", str(source), "-o",
                    str(library)], check=True)
    code = textwrap.dedent(f"""
        import ctypes
        ctypes.CDLL({str(library)!r}).fault()
        """)
    done = subprocess.run([sys.executable, "-c", code],
                          env=fault_origin.environment(preload),
                          capture_output=True, text=True, timeout=60)
    return done, library


def test_a_fault_in_the_driver_is_excused(tmp_path):
    # Named as the driver is: the excuse goes by the object's file name.
    done, driver = crash_in(tmp_path, "libcuda.so.1")
    assert done.returncode == fault_origin.FAULT_IN_DRIVER, done
    assert f"instruction is in {driver}" in done.stderr


def test_a_fault_elsewhere_still_kills(tmp_path):
    done, other = crash_in(tmp_path, "libother.so")
    assert done.returncode == -11, done
    assert f"instruction is in {other}" in done.stderr
