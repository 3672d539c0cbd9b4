""".ci/check_sdist.py, on small made-up source distributions; .ci/run runs
it on the real one (and builds the wheel from it)."""
from __future__ import annotations

import importlib.util
import io
import re
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "check_sdist", ROOT / ".ci" / "check_sdist.py")
check_sdist = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_sdist)

COMPLETE = {
    "setup.py": b'INCLUDE_DIRS = ("cuda/include", "cuda")\n',
    "csrc/module.c": b'#include "extension.h"\n#include <Python.h>\n',
    "csrc/extension.h": b'#include "cudareduce.h"\n',
    "cuda/include/cudareduce.h": b'#include "types.def"\n',
    "cuda/include/types.def": b"",
    "cuda/reduce.cu": b'#include "instances/instances.def"\n',
    "cuda/instances/instances.def": b"",
    "cuda/kernels/fast.cuh": b'#include "kernels/ladder.cuh"\n'
                             b'#include "cudareduce.h"\n',
    "cuda/kernels/ladder.cuh": b"",
    "tests/test_a.py": b"import numpy\nfrom support.api_contract import X\n",
    "tests/support/api_contract.py": b"X = 1\n",
}
TRACKED = sorted(COMPLETE) + [".gitignore"]


def sdist(tmp_path: Path, files: dict) -> Path:
    path = tmp_path / "cudareduce-0.1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(f"cudareduce-0.1.0/{name}")
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return path


def problems(tmp_path, files):
    read = check_sdist.sdist_files(sdist(tmp_path, files))
    return (check_sdist.missing_tracked(read, TRACKED)
            + check_sdist.unresolved_includes(read)
            + check_sdist.unresolved_test_imports(read, TRACKED))


def test_a_complete_sdist_passes(tmp_path):
    assert problems(tmp_path, COMPLETE) == []


def test_a_missing_header_is_reported_twice(tmp_path):
    files = {k: v for k, v in COMPLETE.items() if k != "csrc/extension.h"}
    assert problems(tmp_path, files) == [
        "not in the sdist: csrc/extension.h",
        'csrc/module.c: #include "extension.h" is not in the sdist']


def test_a_missing_test_helper_is_reported(tmp_path):
    files = {k: v for k, v in COMPLETE.items()
             if k != "tests/support/api_contract.py"}
    assert problems(tmp_path, files) == [
        "not in the sdist: tests/support/api_contract.py",
        "tests/test_a.py: imports support.api_contract, not in the sdist's "
        "tests/"]


def test_an_include_found_in_an_include_directory_resolves(tmp_path):
    # csrc/extension.h includes cuda/include/cudareduce.h through
    # -I cuda/include, cuda/kernels/fast.cuh kernels/ladder.cuh through
    # -I cuda.
    assert check_sdist.unresolved_includes(
        check_sdist.sdist_files(sdist(tmp_path, COMPLETE))) == []


def test_an_include_outside_the_include_directories_is_reported(tmp_path):
    # Without -I cuda, "kernels/ladder.cuh" from cuda/kernels/ is not found
    # (cuda/kernels/kernels/ladder.cuh); cuda/reduce.cu's
    # "instances/instances.def" still is, next to it.
    files = {**COMPLETE, "setup.py": b'INCLUDE_DIRS = ("cuda/include",)\n'}
    assert check_sdist.unresolved_includes(
        check_sdist.sdist_files(sdist(tmp_path, files))) == [
        'cuda/kernels/fast.cuh: #include "kernels/ladder.cuh" is not in the '
        'sdist']


def test_an_include_that_climbs_out_of_its_folder_resolves(tmp_path):
    # tests/support/c/stage_check.c compiles csrc/layout.c, and includes
    # its header from there; a path that climbs to no file is reported.
    files = {**COMPLETE, "csrc/layout.h": b"",
             "tests/support/c/check.c": b'#include "../../../csrc/layout.h"\n'
                                        b'#include "../../../csrc/gone.h"\n'}
    assert check_sdist.unresolved_includes(
        check_sdist.sdist_files(sdist(tmp_path, files))) == [
        'tests/support/c/check.c: #include "../../../csrc/gone.h" is not in '
        'the sdist']


def test_a_setup_py_without_include_dirs_is_reported(tmp_path):
    files = {**COMPLETE, "setup.py": b"ROOT = 1\n"}
    [problem] = check_sdist.unresolved_includes(
        check_sdist.sdist_files(sdist(tmp_path, files)))
    assert "assigns no INCLUDE_DIRS" in problem


def test_the_include_directories_are_setup_pys():
    setup = (ROOT / "setup.py").read_bytes()
    assert check_sdist.include_dirs({"setup.py": setup}) == (
        "cuda/include", "cuda")


def test_a_subpackage_missing_from_the_wheel_is_reported(tmp_path):
    files = {**COMPLETE, "cudareduce/__init__.py": b"",
             "cudareduce/bench/__init__.py": b"",
             "cudareduce/bench/cli.py": b""}
    read = check_sdist.sdist_files(sdist(tmp_path, files))
    wheel = {"cudareduce/__init__.py", "cudareduce/_cudareduce.so"}
    assert check_sdist.missing_from_wheel(read, wheel) == [
        "not in the wheel: cudareduce/bench/__init__.py",
        "not in the wheel: cudareduce/bench/cli.py"]
    wheel |= {"cudareduce/bench/__init__.py", "cudareduce/bench/cli.py"}
    assert check_sdist.missing_from_wheel(read, wheel) == []


def test_the_package_list_names_every_package():
    """pyproject.toml's packages (setuptools lists no subpackage by itself)
    are every folder of cudareduce/ that holds Python modules."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    line = re.search(r"^packages = \[(.*)\]$", text, re.M).group(1)
    listed = set(re.findall(r'"([^"]+)"', line))
    folders = {".".join(p.parent.relative_to(ROOT).parts)
               for p in (ROOT / "cudareduce").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert folders == listed
