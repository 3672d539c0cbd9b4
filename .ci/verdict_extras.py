"""The parts of .ci/gpu-check's verdict that a pytest exit code and a skip
count miss: tests deselected by -k/-m (only the no_gpu ones may be), and
expected failures (only those on the allow-list may XFAIL; no XPASS).

Usage: verdict_extras.py --deselected FILE... --log FILE --allowlist FILE
                         [--phases PHASE...]

With several reports (one per pytest run of the check, each selecting its
part of the suite with -m), a test counts as deselected only if every run
deselected it.  A report's entry is [node id, is a no_gpu test, its phase
("shared" or "whole_gpu")]; with --phases, a test of a phase this check
did not run (another call's, GPU_CHECK_PHASES) is no finding.
Prints each finding and exits 1 if there is any.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path


def node_id(text: str) -> str:
    """A node id from pytest's -ra line, relative to the repository: the
    part from "tests/" on (the run starts elsewhere, so paths vary)."""
    match = re.search(r"(tests/\S+?)(?: - |$)", text)
    return match.group(1) if match else text.strip()


def read_allowlist(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


def deselected_by_all(reports: list[list]) -> list:
    """The entries ([node, is_no_gpu, phase]) that every report lists."""
    if not reports:
        return []
    common = set.intersection(*({entry[0] for entry in report}
                                for report in reports))
    return [entry for entry in reports[0] if entry[0] in common]


def findings(deselected: list, log: str, allowed: set[str],
             phases: tuple[str, ...] = ("shared", "whole_gpu")) -> list[str]:
    found = [f"deselected, not a no_gpu test: {entry[0]}"
             for entry in deselected
             if not entry[1] and (len(entry) < 3 or entry[2] in phases)]
    for line in log.splitlines():
        kind = line.split(" ", 1)[0]
        if kind == "XPASS":
            found.append(f"unexpected pass: {node_id(line[6:])}")
        elif kind == "XFAIL" and node_id(line[6:]) not in allowed:
            found.append(f"expected failure not on the allow-list: "
                         f"{node_id(line[6:])}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deselected", type=Path, nargs="+", required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--allowlist", type=Path, required=True)
    parser.add_argument("--phases", nargs="+", default=["shared", "whole_gpu"],
                        choices=["shared", "whole_gpu"])
    args = parser.parse_args(argv)
    reports = [json.loads(path.read_text()) if path.exists() else []
               for path in args.deselected]
    found = findings(deselected_by_all(reports), args.log.read_text(errors="replace"),
                     read_allowlist(args.allowlist), tuple(args.phases))
    for finding in found:
        print(f"== gpu-check: FAILED: {finding}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
