"""docs/ARCHITECTURE.md stays true to the tree: every file of cuda/ (its
floors too) is named by its path there, and every file it names exists;
every module of cudareduce/ is in its Python table; and the modules that
name operators one by one are those its recipe for an operator names."""
from __future__ import annotations

import ast
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


# --- the Python side ---------------------------------------------------------

PACKAGE = ROOT / "cudareduce"
#: The operators' names, from their rows (the C source, so that no build
#: is needed).
OPERATORS = set(re.findall(r'\.name = "(\w+)"',
                           (ROOT / "csrc" / "operators.c").read_text(
                               encoding="utf-8")))


def python_table() -> set[str]:
    """The modules the "cudareduce/, module by module" table names in its
    first column, as paths under cudareduce/."""
    section = DOC.read_text(encoding="utf-8").split(
        "## cudareduce/, module by module", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w/]+\.py)` \|", section, flags=re.M))


def test_every_python_module_is_in_the_table():
    modules = {p.relative_to(PACKAGE).as_posix()
               for p in PACKAGE.rglob("*.py")}
    assert python_table() == modules


def recipe(what: str) -> str:
    """The "edit" and "and write" cells of the recipe's row `what`."""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {what} |"):
            return line
    raise AssertionError(f"no recipe row {what!r}")


def by_name(path: Path) -> list[str]:
    """Where the module at `path` lists operators by name (a tuple, list,
    set or dict of two or more of them) or decides by one (``op ==
    "mean"``, ``op in (...)``): the lines, with what is there."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = []
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None]
        named = [i for i in items if isinstance(i, ast.Constant)
                 and i.value in OPERATORS]
        sides = (node.left, *node.comparators) \
            if isinstance(node, ast.Compare) else ()
        decides = any(isinstance(s, ast.Name) and s.id == "op"
                      for s in sides) and any(
            isinstance(c, ast.Constant) and c.value in OPERATORS
            for s in sides for c in ast.walk(s))
        if len(named) >= 2 or decides:
            found.append(f"{node.lineno}: {ast.unparse(node)[:60]}")
    return found


def test_only_the_recipes_python_places_name_operators():
    # Python reads every other fact of an operator from the extension
    # (_cudareduce.OPERATOR_FACTS): a module that lists operators by name
    # is one the recipe of an operator names, so that a new one is added
    # there and nowhere else.
    assert len(OPERATORS) >= 16
    places = recipe("an operator (as Python calls it)")
    listing = {p.relative_to(ROOT).as_posix(): by_name(p)
               for p in PACKAGE.rglob("*.py") if by_name(p)}
    assert "cudareduce/bench/names.py" in listing
    unnamed = {path: lines for path, lines in listing.items()
               if f"`{path}`" not in places
               and f"`{path.removeprefix('cudareduce/')}`" not in places}
    assert unnamed == {}
