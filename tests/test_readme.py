"""The README's opening snippets run as pasted."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def opening_snippets() -> list[str]:
    """The ```python blocks before the README's first section."""
    text = README.read_text(encoding="utf-8")
    opening = text[:text.index("\n## ")]
    return re.findall(r"```python\n(.*?)```", opening, re.S)


def test_the_readme_opens_with_snippets():
    snippets = opening_snippets()
    assert len(snippets) >= 2, snippets
    assert "import numpy as np, cudareduce" in snippets[0]


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(len(opening_snippets())))
def test_opening_snippet_runs_as_pasted(index):
    exec(compile(opening_snippets()[index], f"README snippet {index}",
                 "exec"), {})
