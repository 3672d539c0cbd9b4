"""cudareduce.bench, the package: its face re-exports the names users and
the notebook know, each the very object of the module that defines it, and
its docstring names what is there."""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from cudareduce.bench import names, schema
from support.bench_data import run_python
from cudareduce import _cudareduce, bench
from cudareduce.bench import host, peers
from cudareduce.bench.results import Results

#: The modules of the package; counters is imported only by --counters (ncu
#: runs it as a program), plot only by the plots (it needs matplotlib).
MODULES = ("axes", "axis_schema", "cli", "data", "devices", "exact",
           "exact_reference", "exact_schema", "figures", "floor", "host",
           "ladder", "names", "peers", "plot", "policy", "progress",
           "reference", "results", "schema", "sizes", "timers")
#: The package's own names: the entry points users call.
ENTRY_POINTS = ("Results", "compare", "device_info", "format_axes",
                "format_comparison", "format_exact", "format_host",
                "format_table", "main", "run", "run_axes", "run_exact",
                "run_host", "validate_document")
PACKAGE = Path(bench.__file__).parent


def _defined() -> dict[str, object]:
    """Every public name of the package's modules: its object."""
    defined = {}
    for module in MODULES:
        module = importlib.import_module(f"cudareduce.bench.{module}")
        assert set(module.__all__) <= set(vars(module)), module.__name__
        defined.update({name: getattr(module, name)
                        for name in module.__all__})
    return defined


def test_the_package_exports_its_entry_points_only():
    assert sorted(bench.__all__) == sorted(ENTRY_POINTS)
    for name in bench.__all__:
        assert hasattr(bench, name), name


def test_names_are_their_modules_objects():
    assert bench.Results is Results
    defined = _defined()
    for name in bench.__all__:
        assert getattr(bench, name) is defined[name], name


def test_type_checkers_see_the_entry_points_run_time_imports():
    # The package imports each entry point from its module on first use;
    # type checkers read the same imports under TYPE_CHECKING.
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    imported = {alias.name: node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level == 1
                for alias in node.names}
    assert imported == bench._ENTRY_POINTS

def test_every_module_is_named_in_the_docstring():
    modules = sorted(p.stem for p in PACKAGE.glob("*.py")
                     if not p.stem.startswith("__"))
    assert modules == sorted(MODULES + ("counters",))
    for module in modules:
        assert f":mod:`~cudareduce.bench.{module}`" in bench.__doc__, module


def _resolve(target: str) -> object:
    """The object a docstring reference names: a dotted path from a module,
    or a name of the package."""
    if "." not in target:
        return getattr(bench, target)
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(target)


def test_the_docstrings_references_resolve():
    doc = bench.__doc__
    targets = re.findall(r":(?:func|class|mod|data):`~?([^`]*)`", doc)
    assert len(targets) > 20
    for target in targets:
        assert re.fullmatch(r"[\w.]+", target), f"broken reference {target!r}"
        _resolve(target)
    constants = set(re.findall(r"``([A-Z][A-Z_]+)``", doc))
    assert {"TARGET_SECONDS", "MIN_REPS", "MAX_REPS", "WARMUP",
            "MAX_BUFFERS", "LATENCY_N"} <= constants
    defined = _defined()
    for name in constants:
        assert name in defined, name
    for name in re.findall(r"``_cudareduce\.(\w+)``", doc):
        assert callable(getattr(_cudareduce, name)), name


def test_the_docstring_names_the_documents_keys_and_calls():
    doc = bench.__doc__
    for key in schema.RESULT_KEYS:
        if key not in ("method", "dtype", "n", "threads"):
            assert f"``{key}``" in doc, key
    for call in (peers.TORCH_ITEM, peers.OURS_ON_TORCH, peers.CUPY_FLOAT,
                 peers.OURS_ON_CUPY, host.CUDAREDUCE_CALL, host.NUMPY_CALL,
                 host.TORCH_CALL, host.CUPY_CALL):
        assert f'``"{call}"``' in doc, call


def test_importing_the_package_leaves_counters_out():
    """ncu runs ``python -m cudareduce.bench.counters``: runpy warns where
    importing the package has imported it already."""
    proc = run_python("import sys, cudareduce.bench\n"
                      "print('cudareduce.bench.counters' in sys.modules)")
    assert proc.stdout.strip() == "False"
