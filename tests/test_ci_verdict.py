""".ci/verdict_extras.py: what .ci/gpu-check adds to pytest's exit code."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "verdict_extras", ROOT / ".ci" / "verdict_extras.py")
verdict = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdict)

ALLOWED = "tests/test_a.py::test_known"
LOG = f"""
=========================== short test summary info ============================
XFAIL ../../../work/main/{ALLOWED} - why it is known
15802 passed, 29 deselected, 1 xfailed in 220.49s (0:03:40)
"""


def test_a_clean_run_has_no_findings():
    assert verdict.findings([["tests/t.py::a", True]], LOG, {ALLOWED}) == []


def test_a_test_deselected_by_k_or_m_is_a_finding():
    found = verdict.findings([["tests/t.py::a", True],
                              ["tests/t.py::b", False]], LOG, {ALLOWED})
    assert found == ["deselected, not a no_gpu test: tests/t.py::b"]


def test_split_runs_deselect_only_what_no_run_selected():
    # gpu-check's two runs: -m "not whole_gpu", then -m whole_gpu.
    shared = [["tests/t.py::a", True], ["tests/t.py::w", False],
              ["tests/t.py::k", False]]
    whole = [["tests/t.py::a", True], ["tests/t.py::s", False],
             ["tests/t.py::k", False]]
    assert verdict.deselected_by_all([shared, whole]) == [
        ["tests/t.py::a", True], ["tests/t.py::k", False]]
    assert verdict.deselected_by_all([shared]) == shared
    assert verdict.deselected_by_all([]) == []
    # Entries that name their phase too.
    assert verdict.deselected_by_all(
        [[["tests/t.py::w", False, "whole_gpu"]],
         [["tests/t.py::w", False, "whole_gpu"]]]) == [
        ["tests/t.py::w", False, "whole_gpu"]]


def test_a_phase_another_call_runs_is_no_finding():
    # GPU_CHECK_PHASES=shared: the whole_gpu tests are another call's.
    deselected = [["tests/t.py::a", True, "shared"],
                  ["tests/t.py::w", False, "whole_gpu"],
                  ["tests/t.py::k", False, "shared"]]
    assert verdict.findings(deselected, LOG, {ALLOWED}, ("shared",)) == [
        "deselected, not a no_gpu test: tests/t.py::k"]
    assert verdict.findings(deselected, LOG, {ALLOWED}) == [
        "deselected, not a no_gpu test: tests/t.py::w",
        "deselected, not a no_gpu test: tests/t.py::k"]


def test_an_xfail_not_on_the_list_is_a_finding():
    log = LOG + "XFAIL /tmp/x/tests/test_b.py::test_new[p] - crashed\n"
    assert verdict.findings([], log, {ALLOWED}) == [
        "expected failure not on the allow-list: tests/test_b.py::test_new[p]"]


def test_an_unexpected_pass_is_a_finding():
    log = LOG + f"XPASS ../{ALLOWED} - fixed meanwhile\n"
    assert verdict.findings([], log, {ALLOWED}) == [
        f"unexpected pass: {ALLOWED}"]


def test_the_command_line_and_the_allowlist_file(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps([["tests/t.py::b", False]]))
    (tmp_path / "log").write_text(LOG)
    (tmp_path / "allow").write_text(f"# a comment\n{ALLOWED}\n")
    args = ["--deselected", str(tmp_path / "d.json"), "--log",
            str(tmp_path / "log"), "--allowlist", str(tmp_path / "allow")]
    assert verdict.main(args) == 1
    (tmp_path / "d.json").write_text("[]")
    assert verdict.main(args) == 0
    # Two runs' reports: b deselected by the first, run by the second.
    (tmp_path / "d.json").write_text(json.dumps([["tests/t.py::b", False]]))
    (tmp_path / "e.json").write_text(json.dumps([["tests/t.py::c", False]]))
    args[2:2] = [str(tmp_path / "e.json")]
    assert verdict.main(args) == 0


def test_the_projects_allowlist_names_tests_that_exist():
    for node in verdict.read_allowlist(ROOT / ".ci" / "xfail-allowlist"):
        path, name = node.split("::")
        function, _, params = name.partition("[")
        text = (ROOT / path).read_text()
        assert f"def {function}(" in text, node
        # A parametrized case: its parameters are written in the test file.
        for param in params.rstrip("]").split("-") if params else ():
            assert f'"{param}"' in text, node
