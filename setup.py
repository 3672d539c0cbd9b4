"""Build of cudareduce: one extension, ``cudareduce._cudareduce``.

The C sources (``csrc/*.c`` and ``cuda/**/*.c``) go through the ordinary C
compiler; the CUDA sources (``cuda/**/*.cu``, ``cuda/instances/instances.cu``
once per unit of ``cuda/instances/instances.def``) go through nvcc, in
parallel, into object files that are linked into the extension as extra
objects.  Those are kept under ``build/cuda-objects/<key>/`` in the source
tree (the key a hash of nvcc's flags and version), not in ``build_temp``,
which pip's builds (``pip install -e .`` too) make afresh each time: a
rebuild compiles only the sources whose object is older than the source or
than a header nvcc's dependency file lists for it.  The CUDA runtime is
linked statically (``libcudart_static.a``), so the extension imports on a
machine without a GPU or a driver: cudart opens ``libcuda.so`` itself, on
the first CUDA call.

Environment:

``CUDA_HOME``
    The CUDA toolkit (``$CUDA_HOME/bin/nvcc``).  Without it, the toolkit of
    the ``nvcc`` on ``PATH``, else ``/usr/local/cuda``.
``CUDAREDUCE_CUDA_ARCHS``
    Compute capabilities to compile for, separated by ``;``, ``,`` or spaces,
    e.g. ``"90"`` or ``"80;90"`` (default ``"80;90"``).  Each gets SASS; the
    highest also gets PTX, which the driver compiles for newer GPUs.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:  # setuptools >= 59 vendors distutils; its errors live here.
    from setuptools.errors import CompileError, PlatformError
except ImportError:  # pragma: no cover - very old setuptools
    from distutils.errors import CompileError
    from distutils.errors import DistutilsPlatformError as PlatformError

ROOT = Path(__file__).resolve().parent
CUDA_DIR = "cuda"
# The include directories of every C and CUDA compile besides NumPy's and
# the toolkit's: cuda/include holds the public C headers (csrc/ includes
# "cudareduce.h"), cuda/ the rest, named from there ("memory/pool.cuh").
# .ci/check_sdist.py resolves #includes through this list, read from here.
INCLUDE_DIRS = ("cuda/include", "cuda")
HEADER_SUFFIXES = ("h", "cuh", "def")
# Compiled once per unit that INSTANCES_DEF #defines (CR_UNIT_<NAME> k).
INSTANCES_SOURCE = "cuda/instances/instances.cu"
INSTANCES_DEF = "cuda/instances/instances.def"
OBJECTS_DIR = "build/cuda-objects"
DEFAULT_ARCHS = "80;90"


def read_version() -> str:
    """``__version__`` of cudareduce/__init__.py, the one place it is set.

    Read with a regex, not by import: the package imports its extension,
    which does not exist before the build."""
    text = (ROOT / "cudareduce" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not match:
        raise RuntimeError("cudareduce/__init__.py sets no __version__ = \"...\"")
    return match.group(1)


def rel_sources(pattern: str) -> list[str]:
    """Sorted paths relative to the project root (setuptools wants those)."""
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern))


def header_files() -> list[str]:
    """Every header of csrc/ and cuda/ (its subfolders too)."""
    return rel_sources("csrc/*.h") + [
        name for suffix in HEADER_SUFFIXES
        for name in rel_sources(f"{CUDA_DIR}/**/*.{suffix}")]


def instance_units() -> list[tuple[str, int]]:
    """(name, k) of each ``#define CR_UNIT_<NAME> k`` of instances.def, the
    one list of the units instances.cu is compiled for."""
    text = (ROOT / INSTANCES_DEF).read_text(encoding="utf-8")
    units = [(name.lower(), int(k)) for name, k in re.findall(
        r"^#define CR_UNIT_(\w+) (\d+)\s*$", text, re.M)]
    numbers = [k for _, k in units]
    if not units or sorted(numbers) != list(range(1, len(units) + 1)):
        raise CompileError(
            f"{INSTANCES_DEF} must #define its units CR_UNIT_<NAME> 1..n, "
            f"one each; found {units}")
    return units


def dependencies(depfile: Path) -> list[Path] | None:
    """The prerequisites a make rule of nvcc's -MD lists, or None if the
    file is missing or holds no rule."""
    try:
        text = depfile.read_text(encoding="utf-8")
    except OSError:
        return None
    _, colon, rest = text.replace("\\\n", " ").partition(": ")
    if not colon:
        return None
    return [ROOT / name.replace("\\ ", " ")
            for name in re.split(r"(?<!\\)\s+", rest.strip()) if name]


def up_to_date(obj: Path, depfile: Path) -> bool:
    """Whether obj is newer than every file its dependency file lists."""
    deps = dependencies(depfile)
    if not deps or not obj.exists():
        return False
    built = obj.stat().st_mtime
    try:
        return all(dep.stat().st_mtime < built for dep in deps)
    except OSError:  # a header gone: compile again
        return False


# ---------------------------------------------------------------------------
# Locating the CUDA toolkit


def find_cuda_home() -> Path:
    """The toolkit: $CUDA_HOME, else the one of `nvcc` on PATH, else
    /usr/local/cuda; each must hold bin/nvcc."""
    env = os.environ.get("CUDA_HOME")
    if env:
        home = Path(env)
        if not (home / "bin" / "nvcc").is_file():
            raise PlatformError(
                f"CUDA_HOME={env!r} has no bin/nvcc.  Set CUDA_HOME to the "
                f"CUDA toolkit directory (the one holding bin/nvcc and "
                f"include/cuda_runtime.h), e.g. CUDA_HOME=/usr/local/cuda, "
                f"or unset it to use the nvcc on PATH.")
        return home
    tried = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        home = Path(nvcc).resolve().parent.parent
        if (home / "bin" / "nvcc").is_file():
            return home
        tried.append(f"{home} (from nvcc on PATH: {nvcc})")
    else:
        tried.append("nvcc on PATH (none)")
    home = Path("/usr/local/cuda")
    if (home / "bin" / "nvcc").is_file():
        return home
    tried.append(str(home))
    raise PlatformError(
        "cudareduce needs the CUDA toolkit (nvcc) to build, and found none; "
        "tried: " + "; ".join(tried) + ".  Install the CUDA toolkit and set "
        "CUDA_HOME to its directory (the one holding bin/nvcc), e.g. "
        "`CUDA_HOME=/usr/local/cuda-13.0 pip install .`.")


def find_cudart_static(home: Path) -> Path:
    """The directory holding libcudart_static.a: lib64, else
    targets/<arch>-linux/lib, else lib."""
    candidates = [home / "lib64"]
    candidates += sorted((home / "targets").glob("*/lib"))
    candidates.append(home / "lib")
    for directory in candidates:
        if (directory / "libcudart_static.a").is_file():
            return directory
    raise PlatformError(
        f"The CUDA toolkit at {home} has no libcudart_static.a (looked in "
        + ", ".join(str(c) for c in candidates)
        + ").  Point CUDA_HOME at a complete toolkit.")


def parse_archs(value: str | None) -> list[int]:
    """Compute capabilities from CUDAREDUCE_CUDA_ARCHS, sorted, unique."""
    raw = DEFAULT_ARCHS if value is None or not value.strip() else value
    parts = [p for p in re.split(r"[;,\s]+", raw.strip()) if p]
    bad = [p for p in parts if not p.isdigit()]
    if bad or not parts:
        raise PlatformError(
            f"CUDAREDUCE_CUDA_ARCHS={value!r} is not a list of compute "
            f"capabilities: each entry must be digits only, like 80 or 90 "
            f"(for sm_80, sm_90), separated by ';', ',' or spaces, e.g. "
            f"CUDAREDUCE_CUDA_ARCHS=\"80;90\".  Offending: {bad or [raw]}")
    return sorted({int(p) for p in parts})


def gencode_flags(archs: list[int]) -> list[str]:
    flags = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    top = archs[-1]
    flags.append(f"-gencode=arch=compute_{top},code=compute_{top}")
    return flags


def spill_flags() -> list[str]:
    """ptxas's warning for each kernel that spills registers, where
    CUDAREDUCE_WARN_SPILLS is set: .ci/run builds its sm_90 wheel so and
    fails on one.  fast's complex128 NaN-skipping index operators once
    spilled 72 bytes there and ran at 0.66x their sum's speed (H100,
    2026-11-26).  Off by default: for sm_80, which no GPU of the project's
    can time, ptxas reports 8 to 24 bytes in fast's float and double
    argmin and argmax (nvcc 13.0)."""
    if os.environ.get("CUDAREDUCE_WARN_SPILLS"):
        return ["-Xptxas", "-warn-spills"]
    return []


# ---------------------------------------------------------------------------
# The build


class CudaBuildExt(build_ext):
    """build_ext that first compiles cuda/**/*.cu with nvcc."""

    def build_extensions(self) -> None:
        import numpy

        self.cuda_home = find_cuda_home()
        self.nvcc = self.cuda_home / "bin" / "nvcc"
        self.archs = parse_archs(os.environ.get("CUDAREDUCE_CUDA_ARCHS"))
        cudart_dir = find_cudart_static(self.cuda_home)
        print(f"cudareduce: CUDA toolkit {self.cuda_home}, archs "
              f"{';'.join(map(str, self.archs))}, cudart static from "
              f"{cudart_dir}", flush=True)
        for ext in self.extensions:
            ext.include_dirs = [numpy.get_include()] \
                + [str(ROOT / d) for d in INCLUDE_DIRS] \
                + [str(self.cuda_home / "include")] + list(ext.include_dirs)
            ext.library_dirs = [str(cudart_dir)] + list(ext.library_dirs)
        super().build_extensions()

    def build_extension(self, ext: Extension) -> None:
        objects = self.compile_cuda()
        ext.extra_objects = list(ext.extra_objects) + objects
        # build_ext relinks only where a source or a dependency is newer
        # than the built extension: without the CUDA objects and the C
        # headers among them, a change to cuda/ or to a header alone left
        # the last build's extension in place (2026-11-26).
        ext.depends = list(ext.depends) + objects + header_files()
        super().build_extension(ext)

    def nvcc_command(self) -> list[str]:
        # -compress-all: nvcc otherwise compresses an object's device code
        # only where its own heuristic says so, which left some instance
        # units 10x larger than others (instances_min.o for sm_90,
        # 2026-11-25: 7.65 MB as it chose, 0.66 MB compressed).
        return [str(self.nvcc), "-O3", "-std=c++17",
                "-Xcompiler", "-fPIC", "-Xcompiler", "-Wall",
                "-Xfatbin", "-compress-all",
                "--expt-relaxed-constexpr", "-lineinfo",
                *[f"-I{ROOT / d}" for d in INCLUDE_DIRS],
                *gencode_flags(self.archs), *spill_flags()]

    def cuda_jobs(self, out_dir: Path) -> list[tuple[str, Path, list[str]]]:
        """(what, object, the source and its own flags) of each object:
        cuda/**/*.cu each, instances.cu once per unit."""
        jobs = []
        for src in sorted((ROOT / CUDA_DIR).glob("**/*.cu")):
            rel = src.relative_to(ROOT).as_posix()
            stem = out_dir / src.relative_to(ROOT / CUDA_DIR).with_suffix("")
            if rel != INSTANCES_SOURCE:
                jobs.append((rel, stem.with_suffix(".o"), [str(src)]))
                continue
            for name, k in instance_units():
                jobs.append((f"{rel} (CR_UNIT={k}, {name})",
                             stem.parent / f"instances_{name}.o",
                             [f"-DCR_UNIT={k}", str(src)]))
        return jobs

    def objects_key(self, base: list[str]) -> str:
        """A hash of nvcc's flags and version: a change of either (of
        CUDAREDUCE_CUDA_ARCHS, CUDAREDUCE_WARN_SPILLS or the toolkit)
        compiles into a folder of its own."""
        version = subprocess.run([str(self.nvcc), "--version"],
                                 stdout=subprocess.PIPE, text=True).stdout
        return hashlib.sha256("\0".join(base + [version]).encode()) \
            .hexdigest()[:12]

    def compile_cuda(self) -> list[str]:
        """Compiles each CUDA object into build/cuda-objects/<key>/ (in
        the source tree, so that it outlives pip's temporary build_temp),
        in parallel, printing a line as each starts; skips one that is
        newer than its source and every header its dependency file (nvcc
        -MD) lists.  Returns the object paths."""
        base = self.nvcc_command()
        out_dir = ROOT / OBJECTS_DIR / self.objects_key(base)
        jobs = self.cuda_jobs(out_dir)
        if not jobs:
            return []
        objects = [str(obj) for _, obj, _ in jobs]
        todo = [(what, obj, args) for what, obj, args in jobs
                if self.force or not up_to_date(obj, obj.with_suffix(".d"))]
        if not todo:
            print(f"cudareduce: CUDA objects up to date ({len(jobs)} in "
                  f"{out_dir.relative_to(ROOT)})", flush=True)
            return objects
        workers = max(1, min(len(todo), os.cpu_count() or 1))
        print(f"cudareduce: nvcc compiling {len(todo)} of {len(jobs)} CUDA "
              f"objects into {out_dir.relative_to(ROOT)}, {workers} at a "
              f"time: " + shlex.join(base), flush=True)
        started = iter(range(1, len(todo) + 1))

        def run(job):
            what, obj, args = job
            obj.parent.mkdir(parents=True, exist_ok=True)
            # Written under temporary names, then renamed: an object cut
            # short (a killed build) never looks up to date.
            tmp_obj = obj.with_name(f"{obj.name}.{os.getpid()}.tmp")
            tmp_dep = obj.with_name(f"{obj.stem}.d.{os.getpid()}.tmp")
            cmd = base + ["-MD", "-MF", str(tmp_dep), "-c", *args,
                          "-o", str(tmp_obj)]
            print(f"cudareduce: compiling [{next(started)}/{len(todo)}] "
                  f"{what}", flush=True)
            proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if proc.returncode == 0:
                os.replace(tmp_dep, obj.with_suffix(".d"))
                os.replace(tmp_obj, obj)
            else:
                tmp_obj.unlink(missing_ok=True)
                tmp_dep.unlink(missing_ok=True)
            return what, proc.returncode, proc.stdout

        failed = []
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for what, rc, output in pool.map(run, todo):
                if output.strip():
                    sys.stdout.write(output if output.endswith("\n")
                                     else output + "\n")
                    sys.stdout.flush()
                if rc != 0:
                    failed.append(f"{what} (exit {rc})")
        if failed:
            raise CompileError("nvcc failed on " + ", ".join(failed))
        return objects


ext = Extension(
    "cudareduce._cudareduce",
    sources=rel_sources("csrc/*.c") + rel_sources(f"{CUDA_DIR}/**/*.c"),
    extra_compile_args=["-std=c11", "-Wall", "-Wextra",
                        "-Wno-unused-parameter"],
    # cudart static, then what it needs; the C++ runtime for the nvcc objects.
    libraries=["cudart_static", "rt", "pthread", "dl", "stdc++"],
    # Keep the static cudart's symbols private to this .so: a process that
    # also holds another CUDA runtime (torch, cupy) must not have our calls
    # bound to its copy, nor its calls to ours.
    extra_link_args=["-Wl,--exclude-libs,ALL"],
    language="c",
)

setup(
    version=read_version(),
    ext_modules=[ext],
    cmdclass={"build_ext": CudaBuildExt},
)
