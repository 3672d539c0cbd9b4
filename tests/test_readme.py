"""The README's opening snippets run as pasted; the README stays a short
front door whose links (and the docs pages' links) all resolve."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The pages the README's sections moved to; each must be linked from it.
PAGES = ["usage.md", "host-arrays.md", "dask.md", "benchmarks.md",
         "build.md", "contributing.md", "ARCHITECTURE.md",
         "recorded/README.md"]


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


def test_the_readme_is_a_short_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, (
        f"README.md has {len(lines)} lines: details belong in docs/")


def test_the_ci_test_command_is_one_line():
    """What .ci/run's awk reads: the marker, a fence, exactly one command
    line, a fence."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- ci-test-command -->\n\s*```\w*\n(.*?)\n\s*```",
                      text, re.S)
    assert match, "no fenced block after <!-- ci-test-command -->"
    command = match.group(1).strip()
    assert command and "\n" not in command, command
    assert "pytest" in command
    begin = text.index("<!-- setup-commands:begin -->")
    end = text.index("<!-- setup-commands:end -->")
    assert begin < match.start() < end


def _without_code(text: str) -> str:
    """The text with fenced blocks and code spans blanked out."""
    text = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(path: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", _without_code(
        path.read_text(encoding="utf-8")))


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", _without_code(
            path.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
        anchors.add(slug.replace(" ", "-"))
    return anchors


MARKDOWN = [README] + sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", MARKDOWN,
                         ids=[str(p.relative_to(ROOT)) for p in MARKDOWN])
def test_relative_links_resolve(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue                       # https:, mailto:
        target, _, anchor = link.partition("#")
        resolved = (page.parent / target).resolve() if target else page
        if not resolved.exists():
            broken.append(f"{link}: no {resolved}")
        elif anchor and resolved.suffix == ".md" \
                and anchor not in _anchors(resolved):
            broken.append(f"{link}: no heading #{anchor} in {resolved.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(README.parent / link.partition("#")[0]).resolve()
              for link in _links(README)}
    unlinked = [page for page in PAGES
                if (DOCS / page).resolve() not in linked]
    assert not unlinked, f"README.md does not link {unlinked}"
    for page in PAGES:
        assert (DOCS / page).is_file(), page


def test_the_axis_table_is_its_records():
    """The README's table of reductions along an axis is what
    ``cudareduce.bench.figures.axis_markdown`` makes of the record its
    opening marker names."""
    from cudareduce.bench.figures import axis_markdown
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- axis-table: (\S+) -->\n(.*?)\n"
                      r"<!-- axis-table: end -->", text, re.S)
    assert found, "the README has no axis table between its markers"
    record = json.loads((ROOT / found.group(1)).read_text(encoding="utf-8"))
    assert found.group(2) == axis_markdown(record)


def test_the_exact_table_is_its_record():
    """The README's table of exact sums is what
    ``cudareduce.bench.figures.exact_markdown`` makes of the record its
    opening marker names, normal data at 2^20, 2^24 and 2^28."""
    from cudareduce.bench.figures import exact_markdown
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- exact-table: (\S+) -->\n(.*?)\n"
                      r"<!-- exact-table: end -->", text, re.S)
    assert found, "the README has no exact table between its markers"
    record = json.loads((ROOT / found.group(1)).read_text(encoding="utf-8"))
    assert found.group(2) == exact_markdown(
        record, sizes=(1 << 20, 1 << 24, 1 << 28))


def test_the_several_gpus_table_is_its_record():
    """The README's table of several GPUs is what
    ``benchmarks/several_gpus.py``'s ``table`` makes of the gathered
    document its opening marker names."""
    spec = importlib.util.spec_from_file_location(
        "several_gpus", ROOT / "benchmarks" / "several_gpus.py")
    several_gpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(several_gpus)
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- several-table: (\S+) -->\n(.*?)\n"
                      r"<!-- several-table: end -->", text, re.S)
    assert found, "the README has no several-GPU table between its markers"
    record = json.loads((ROOT / found.group(1)).read_text(encoding="utf-8"))
    assert found.group(2) == several_gpus.table(record)
