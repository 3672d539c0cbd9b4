"""docs/recorded/README.md stays true to the folder: every recorded run
has a row in its index, and every row names a file that is there.
No GPU needed."""
from __future__ import annotations

import re
from pathlib import Path

RECORDED = Path(__file__).resolve().parents[1] / "docs" / "recorded"
INDEX = RECORDED / "README.md"
HEADER = "| file | date | GPU / machine | what it measured | cited by | status |"


def index_rows() -> list[list[str]]:
    """The cells of each row of the index's table (header and rule left
    out)."""
    lines = INDEX.read_text(encoding="utf-8").splitlines()
    assert HEADER in lines, f"{INDEX}: no table headed {HEADER!r}"
    start = lines.index(HEADER) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append(cells)
    return rows


def row_file(cells: list[str]) -> str:
    """The file a row names: its first cell, [`name`](name)."""
    match = re.fullmatch(r"\[`([^`]+)`\]\(([^)]+)\)", cells[0])
    assert match, f"first cell is not [`name`](name): {cells[0]!r}"
    assert match.group(1) == match.group(2), cells[0]
    return match.group(1)


def test_every_row_is_complete_and_names_an_existing_file():
    rows = index_rows()
    assert rows, "the index has no rows"
    width = HEADER.count("|") - 1
    for cells in rows:
        assert len(cells) == width, cells
        assert all(cells), f"an empty cell: {cells}"
        name = row_file(cells)
        assert name != "README.md"
        assert (RECORDED / name).is_file(), f"row for a missing file: {name}"
        assert re.match(r"\d{4}-\d{2}-\d{2}", cells[1]), cells[1]


def test_every_recorded_file_has_exactly_one_row():
    named = [row_file(cells) for cells in index_rows()]
    files = sorted(p.name for p in RECORDED.iterdir()
                   if p.is_file() and p.name != "README.md")
    assert files, "docs/recorded/ holds no records"
    missing = [f for f in files if f not in named]
    assert not missing, f"no row in docs/recorded/README.md for: {missing}"
    twice = sorted({n for n in named if named.count(n) > 1})
    assert not twice, f"more than one row for: {twice}"
    assert sorted(named) == files
