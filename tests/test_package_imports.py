"""The Python package's modules, its subpackages' included, import one
another without a circle (counting imports inside functions too), so that
each has one job and the results model sits below the bench, the plots and
the reference tables."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cudareduce"
#: The name of a package's own __init__.py at its top (``cudareduce``).
TOP = "__init__"
#: The compiled extension: a module of the package (built, not in the
#: tree) that imports none of its Python.
EXTENSION = "_cudareduce"


def module_name(package: Path, path: Path) -> str:
    """``bench/cli.py`` -> ``bench.cli``, ``bench/__init__.py`` ->
    ``bench``, the top ``__init__.py`` -> ``__init__``."""
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or TOP


def package_imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports, anywhere in its code.

    An import names the module it names, not the packages above it: a
    package's ``__init__`` is already running when it imports its own
    submodules, so ``bench`` importing ``bench.cli`` which imports
    ``bench.ladder`` is no circle, while ``bench.cli`` importing a name from
    ``bench`` itself is.  A name that is not a module of the package (a
    function) stands for the module it is taken from; the compiled
    extension is a module of its own (:data:`EXTENSION`), which imports
    none.
    """
    paths = {module_name(package, p): p for p in package.rglob("*.py")}
    modules = set(paths) | {EXTENSION}

    def known(dotted: str) -> str:
        """The package's module for a dotted name below it: the name's own,
        else the nearest package above it."""
        parts = dotted.split(".") if dotted else []
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or TOP

    graph = {}
    for name, path in paths.items():
        # The package a relative import starts from: a package's __init__
        # is its own, a module's is the one it stands in.
        here = [] if name == TOP else name.split(".")
        if path.name != "__init__.py":
            here = here[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 > len(here):
                        continue                   # above the package
                    base = here[:len(here) - node.level + 1]
                    if node.module:
                        base += node.module.split(".")
                elif (node.module or "").split(".")[0] == package.name:
                    base = node.module.split(".")[1:]
                else:
                    continue
                stem = ".".join(base)
                for alias in node.names:
                    below = f"{stem}.{alias.name}" if stem else alias.name
                    found.add(below if below in modules else known(stem))
            elif isinstance(node, ast.Import):
                found |= {known(".".join(a.name.split(".")[1:]))
                          for a in node.names
                          if a.name.split(".")[0] == package.name}
        graph[name] = found - {name}
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (circle := visit(nxt)):
                return circle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)):
            return circle
    return None


def test_no_import_circle():
    graph = package_imports()
    assert {"bench", "bench.cli", "bench.ladder", "bench.results"} <= \
        set(graph)
    assert graph["bench.cli"] >= {"bench.ladder", "bench.peers",
                                  "bench.host"}
    # The document model needs none of the bench's timers (nor, so, their
    # compiled extension); of the package's face only its version (schema's
    # make_document).
    model = ("bench.names", "bench.schema", "bench.axis_schema",
             "bench.exact_schema", "bench.figures", "bench.results",
             "bench.plot", "bench.reference")
    for below in model:
        assert graph[below] <= {*model, TOP}, (below, graph[below])
    assert [m for m in model if TOP in graph[m]] == ["bench.schema"]
    assert graph["bench.plot"] >= {"bench.figures"}
    # The library's modules that reduce by the operators' facts read them
    # from the extension, below them all.
    assert {"_masked", "dask", "bench.data"} <= {
        m for m, imports in graph.items() if EXTENSION in imports}
    assert find_circle(graph) is None, find_circle(graph)


def test_a_circle_is_found():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == \
        ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def planted_imports(root: Path, files: dict[str, str]
                    ) -> dict[str, set[str]]:
    """:func:`package_imports` of a package ``pkg`` written under `root`,
    with `files` ({path inside it: source}); every package has an
    ``__init__.py``, empty unless `files` gives one."""
    package = root / "pkg"
    for name, source in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    for folder in [package, *(p for p in package.rglob("*") if p.is_dir())]:
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    return package_imports(package)


def test_a_planted_circle_through_a_subpackage_is_found(tmp_path):
    # top -> sub.low (absolute), sub.low -> top inside a function
    # (relative, two levels up): the circle the bench must never have.
    graph = planted_imports(tmp_path, {
        "top.py": "from pkg.sub.low import f\n",
        "sub/low.py": "def f():\n    from .. import top\n    return top\n"})
    assert graph["top"] == {"sub.low"} and graph["sub.low"] == {"top"}
    assert find_circle(graph) == ["sub.low", "top", "sub.low"]


@pytest.mark.parametrize("b, circle", [
    ("import pkg.sub\ny = 1\n", ["sub", "sub.a", "sub.b", "sub"]),
    # a package's __init__ importing its own submodules is no circle
    ("y = 1\n", None)])
def test_a_circle_through_a_subpackage_face(tmp_path, b, circle):
    graph = planted_imports(tmp_path, {"sub/__init__.py": "from .a import x\n",
                                       "sub/a.py": "from .b import y\nx = y\n",
                                       "sub/b.py": b})
    assert graph["sub"] == {"sub.a"} and graph["sub.a"] == {"sub.b"}
    assert find_circle(graph) == circle
