"""docs/ARCHITECTURE.md stays true to the tree: every file of cuda/ and
csrc/ it names exists, and every file of cuda/ is named."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".def")


def named_files() -> set[str]:
    """Every `name.ext` in backquotes, `a`, `.b` pairs expanded."""
    text = re.sub(r"```.*?```", "", DOC.read_text(encoding="utf-8"),
                  flags=re.S)
    names = set()
    for cell in re.findall(r"`([^`]+)`", text):
        if (cell.endswith(SUFFIXES) and " " not in cell
                and not cell.startswith(".")):
            names.add(Path(cell).name)
    # "`dispatch.cu`, `.cuh`": the second is the first's stem.
    for stem, suffix in re.findall(r"`(\w+)\.\w+`, `(\.\w+)`", text):
        names.add(stem + suffix)
    return names


def test_every_cuda_file_is_named():
    named = named_files()
    files = {p.name for p in (ROOT / "cuda").iterdir()
             if p.suffix in SUFFIXES and not p.name.startswith("instances_")}
    assert files - named == set(), "cuda/ files the document leaves out"
    assert any(p.name.startswith("instances_")
               for p in (ROOT / "cuda").iterdir())


def test_every_named_file_exists():
    present = {p.name for d in ("cuda", "csrc") for p in (ROOT / d).iterdir()}
    named = {n for n in named_files() if "*" not in n}
    assert named - present == set(), "named files that do not exist"
