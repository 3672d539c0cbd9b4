"""Checks that a source distribution builds and tests like the repository.

Usage: check_sdist.py SDIST [--repo DIR] [--wheel WHEEL]

- Every file git tracks is in the sdist (the build's sources and headers,
  and everything the test suite reads: helpers, C checks, data, the
  recordings the tests read, the notebook, .ci's scripts, the README),
  but for what only the repository keeps (:data:`REPOSITORY_ONLY`: the
  recorded runs of docs/recorded/, the rendered figures), which the sdist
  must not hold.
- Every ``#include "..."`` of every C, CUDA and header file in the sdist
  resolves inside it: next to the including file (also by a path that
  climbs out of its folder: tests/support/c/ includes csrc/layout.h), or
  in one of the include directories setup.py gives the compilers (its
  ``INCLUDE_DIRS``, read from the sdist's setup.py: cuda/include, then
  cuda/, whose subfolders' headers are named from there,
  "memory/pool.cuh").
- Every import of a sibling module by a file in tests/ resolves in tests/.
- With ``--wheel``: the wheel built from the sdist holds every module of
  the package (``cudareduce/**/*.py``), subpackages included, which
  pyproject.toml must list one by one.

Prints each problem and exits 1 if there is any, else prints a summary.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import posixpath
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_SUFFIXES = {".c", ".h", ".cu", ".cuh", ".def"}
PACKAGE = "cudareduce"


def sdist_files(path: Path) -> dict[str, bytes]:
    """{path relative to the sdist's top folder: content} of its files."""
    files = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            if member.isfile():
                relative = PurePosixPath(*PurePosixPath(member.name).parts[1:])
                files[str(relative)] = archive.extractfile(member).read()
    return files


# Tracked files that only the repository keeps (fnmatch patterns): what git
# needs, the recorded runs and the rendered figures (MANIFEST.in).
REPOSITORY_ONLY = (".gitignore", "docs/recorded/*", "docs/figures/*.png",
                   "docs/figures/*.md")


def repository_only(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in REPOSITORY_ONLY)


def missing_tracked(files: dict, tracked: list[str]) -> list[str]:
    return [f"not in the sdist: {name}" for name in tracked
            if name not in files and not repository_only(name)] + \
        [f"in the sdist, but the repository's only: {name}"
         for name in sorted(files) if repository_only(name)]


def include_dirs(files: dict) -> tuple[str, ...]:
    """setup.py's INCLUDE_DIRS, the -I folders of every compile, as the
    sdist's setup.py assigns them (a tuple or list of strings)."""
    source = files.get("setup.py")
    if source is not None:
        for node in ast.parse(source).body:
            if (isinstance(node, ast.Assign)
                    and any(isinstance(target, ast.Name)
                            and target.id == "INCLUDE_DIRS"
                            for target in node.targets)):
                dirs = ast.literal_eval(node.value)
                if (isinstance(dirs, (tuple, list)) and dirs
                        and all(isinstance(d, str) for d in dirs)):
                    return tuple(dirs)
    raise ValueError("the sdist's setup.py assigns no INCLUDE_DIRS = "
                     "(\"dir\", ...), the include directories its #includes "
                     "are resolved in")


def unresolved_includes(files: dict) -> list[str]:
    try:
        dirs = include_dirs(files)
    except ValueError as error:
        return [str(error)]
    problems = []
    for name, content in sorted(files.items()):
        if PurePosixPath(name).suffix not in SOURCE_SUFFIXES:
            continue
        here = PurePosixPath(name).parent
        for header in INCLUDE.findall(content.decode(errors="replace")):
            # "../../../csrc/layout.h" as the compiler resolves it.
            candidates = [here / header] + [PurePosixPath(d) / header
                                            for d in dirs]
            if not any(posixpath.normpath(c) in files for c in candidates):
                problems.append(f"{name}: #include \"{header}\" is not in "
                                f"the sdist")
    return problems


def unresolved_test_imports(files: dict, tracked: list[str]) -> list[str]:
    """Imports, by the sdist's tests/ files, of the repository's test
    modules that the sdist lacks: tests/*.py imported as siblings, and the
    helpers of tests/support/ as ``support.<module>`` (tests/ is on
    sys.path)."""
    def test_modules(names):
        found = set()
        for n in names:
            if not (n.startswith("tests/") and n.endswith(".py")):
                continue
            parts = list(PurePosixPath(n).with_suffix("").parts[1:])
            if parts[-1] == "__init__":
                parts.pop()
            if len(parts) == 1 or parts[0] == "support":
                found.add(".".join(parts))
        return found
    ours, shipped = test_modules(tracked), test_modules(files)
    problems = []
    for name, content in sorted(files.items()):
        if not (name.startswith("tests/") and name.endswith(".py")):
            continue
        for node in ast.walk(ast.parse(content)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""] + [
                    f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for module in modules:
                if module in ours and module not in shipped:
                    problems.append(f"{name}: imports {module}, not in the "
                                    f"sdist's tests/")
    return problems


def missing_from_wheel(files: dict, wheel: set[str]) -> list[str]:
    """The package's Python modules in the sdist that the wheel lacks."""
    return [f"not in the wheel: {name}" for name in sorted(files)
            if name.startswith(f"{PACKAGE}/") and name.endswith(".py")
            and name not in wheel]


def wheel_files(path: Path) -> set[str]:
    """The paths of the files a wheel holds."""
    with zipfile.ZipFile(path) as archive:
        return set(archive.namelist())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("--repo", type=Path, default=Path.cwd())
    parser.add_argument("--wheel", type=Path, default=None,
                        help="a wheel built from SDIST, to check that it "
                             "holds every module of the package")
    args = parser.parse_args(argv)
    tracked = subprocess.run(["git", "ls-files"], cwd=args.repo, check=True,
                             capture_output=True, text=True).stdout.split()
    files = sdist_files(args.sdist)
    problems = (missing_tracked(files, tracked) + unresolved_includes(files)
                + unresolved_test_imports(files, tracked))
    if args.wheel is not None:
        problems += missing_from_wheel(files, wheel_files(args.wheel))
    for problem in problems:
        print(f"check_sdist: {problem}")
    if problems:
        return 1
    wheel = "" if args.wheel is None else \
        f"; {args.wheel.name} holds every module of {PACKAGE}"
    shipped = [name for name in tracked if not repository_only(name)]
    print(f"check_sdist: OK: {args.sdist.name}: {len(files)} files, every "
          f"one of the {len(shipped)} that git tracks and the repository "
          f"does not keep to itself, every #include and test import "
          f"resolved{wheel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
