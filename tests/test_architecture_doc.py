"""docs/ARCHITECTURE.md stays true to the tree: every file of cuda/ (its
floors too) is named by its path there, and every file it names exists."""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
CUDA = ROOT / "cuda"
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".def")


def named_files() -> set[str]:
    """Every `name.ext` or `folder/name.ext` in backquotes, as written,
    `a`, `.b` pairs expanded."""
    text = re.sub(r"```.*?```", "", DOC.read_text(encoding="utf-8"),
                  flags=re.S)
    names = set()
    for cell in re.findall(r"`([^`]+)`", text):
        if (cell.endswith(SUFFIXES) and " " not in cell
                and not cell.startswith(".")):
            names.add(cell)
    # "`memory/pool.cu`, `.cuh`": the second is the first's stem.
    for stem, suffix in re.findall(r"`([\w/]+)\.\w+`, `(\.\w+)`", text):
        names.add(stem + suffix)
    return names


def cuda_files() -> set[str]:
    """The paths under cuda/ of its source files, every floor's."""
    return {p.relative_to(CUDA).as_posix() for p in CUDA.rglob("*")
            if p.is_file() and p.suffix in SUFFIXES}


def test_every_cuda_file_is_named():
    # By its path under cuda/ ("memory/pool.cu") or from the root
    # ("cuda/memory/pool.cu"): a bare name does not say the floor.
    named = {n.removeprefix("cuda/") for n in named_files()}
    assert cuda_files() - named == set(), "cuda/ files the document leaves out"
    assert any("/" in f for f in cuda_files())


def test_every_named_file_exists():
    # A name with a folder is a path from the root or under cuda/; a bare
    # name, a file of cuda/ (on any floor) or of csrc/.
    bare = {PurePosixPath(f).name for f in cuda_files()} \
        | {p.name for p in (ROOT / "csrc").iterdir()}
    missing = {n for n in named_files() if "*" not in n and not (
        (ROOT / n).is_file() or (CUDA / n).is_file() if "/" in n
        else n in bare)}
    assert missing == set(), "named files that do not exist"
