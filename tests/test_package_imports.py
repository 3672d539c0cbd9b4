"""The Python package's modules import one another without a circle
(counting imports inside functions too), so that each has one job and the
results model sits below the bench, the plots and the reference tables."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cudareduce"


def package_imports() -> dict[str, set[str]]:
    """module -> the package's modules it imports, anywhere in its code."""
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph = {}
    for path in PACKAGE.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 1 or base.startswith("cudareduce"):
                    tail = base.removeprefix("cudareduce").lstrip(".")
                    found |= ({tail.split(".")[0]} if tail else
                              {a.name for a in node.names})
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names
                          if a.name.startswith("cudareduce.")}
        graph[path.stem] = (found & modules) - {path.stem, "__init__"}
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
    assert graph["plot"] >= {"results"} and "bench" not in graph["plot"]
    assert find_circle(graph) is None, find_circle(graph)


def test_a_circle_is_found():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == \
        ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None
