"""benchmarks/targets.py (a script, outside the package) loaded as a
module for the tests that hold documents to its targets, and its rows by
what each measures."""
from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["by_what", "targets"]

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "targets.py"
_spec = importlib.util.spec_from_file_location("targets", _SCRIPT)
targets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(targets)


def by_what(rows):
    """{what: (value, "bound limit", met)} of targets.py's rows."""
    return {t.what: (t.value, f"{t.bound} {t.limit:.2f}x", t.met)
            for t in rows}
