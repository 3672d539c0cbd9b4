"""The example notebook's prose against the code it describes: every fact of
the code that ``benchmarks/step_speedups.ipynb`` states in words (how many
loads ``fast`` keeps in flight and how it collects its partials, the extra
to install, the CuPy wheel, the bench's constants) is read here from the
code and looked for in the text, so that a change to the code fails here
until the prose says the new fact.  The README's methods table states the
first two as well and is held to them too."""
from __future__ import annotations

import json
import re
from pathlib import Path

import cudareduce
from cudareduce.bench import floor, policy

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "benchmarks" / "step_speedups.ipynb"
RECORDED = ROOT / "docs" / "figures" / "ladder.json"
README = ROOT / "README.md"
BENCHMARKS_DOC = ROOT / "docs" / "benchmarks.md"
PYPROJECT = ROOT / "pyproject.toml"
TUNING = ROOT / "cuda" / "tuning.h"
FAST = ROOT / "cuda" / "kernels" / "fast.cuh"

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven",
                "eight", "nine", "ten", "eleven", "twelve", "thirteen",
                "fourteen", "fifteen", "sixteen")


def _flat(text: str) -> str:
    """`text` with every run of whitespace one space: a phrase wrapped
    across lines is found as one."""
    return " ".join(text.split())


def _cells(kind: str) -> list[str]:
    with open(NOTEBOOK, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == kind]


def _paragraphs() -> list[str]:
    return [_flat(source) for source in _cells("markdown")]


def _paragraph(start: str) -> str:
    (paragraph,) = [p for p in _paragraphs() if p.startswith(start)]
    return paragraph


def _readme_row(method: str) -> str:
    (row,) = [line for line in README.read_text(encoding="utf-8").splitlines()
              if line.startswith(f"| `{method}` |")]
    return row


def _define(name: str) -> int:
    """The value of ``#define NAME <integer>`` in cuda/tuning.h."""
    (value,) = re.findall(rf"^#define {name} (\d+)\s*$",
                          TUNING.read_text(encoding="utf-8"), re.M)
    return int(value)


def _reduce_fast() -> str:
    """The source of fast.cuh's kernel, reduce_fast, from its name on."""
    text = FAST.read_text(encoding="utf-8")
    return text[text.index("reduce_fast(const T *in"):]


def _extras() -> dict[str, tuple[list[str], str]]:
    """pyproject.toml's extras: name -> (the names of its requirements, the
    comment above it)."""
    text = PYPROJECT.read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]\n", 1)[1]
    section = re.split(r"^\[", section, maxsplit=1, flags=re.M)[0]
    extras = {}
    for comment, name, body in re.findall(
            r"((?:^#[^\n]*\n)*)^(\w+) = \[(.*?)\]", section, re.M | re.S):
        requirements = re.findall(r'"([^"]+)"', body)
        extras[name] = ([re.match(r"[\w.-]+", r).group(0)
                         for r in requirements], comment)
    return extras


# ---------------------------------------------------------------------------
# fast, as the notebook's step 8 and the README's methods table tell it


def test_the_prose_says_how_many_loads_fast_keeps_in_flight():
    """CR_FAST_UNROLL (cuda/tuning.h), the 16-byte loads each thread of
    fast keeps in flight, is the number, in words, that the notebook and
    the README give; no other number of loads in flight is said."""
    unroll = _define("CR_FAST_UNROLL")
    assert "uint4 bits[CR_FAST_UNROLL];" in _reduce_fast()
    said = rf"\b({'|'.join(NUMBER_WORDS)}|\d+) in flight\b"
    for name, text in (("the notebook", " ".join(_paragraphs())),
                       ("README.md", _flat(README.read_text(
                           encoding="utf-8")))):
        numbers = re.findall(said, text)
        assert numbers and set(numbers) == {NUMBER_WORDS[unroll]}, (
            f"{name} says {numbers} in flight; cuda/tuning.h's "
            f"CR_FAST_UNROLL is {unroll}")


def test_the_prose_says_how_fast_collects_its_partials():
    """fast.cuh: each block takes its ticket as it starts (the atomicAdd
    on the tickets comes before its first load), stores its partial as
    flagged words with no device fence, and the block whose ticket is the
    last collects them.  Step 8 and the README's row say so, and neither
    tells the kernel before commit 4504588 (the last block to finish,
    counted by an atomic after a fence)."""
    kernel = _reduce_fast()
    assert kernel.index("atomicAdd(tickets") < kernel.index("__ldg(")
    assert "__threadfence()" not in kernel
    assert "cr_store_flagged(block_value" in kernel
    assert "collects = ticket == gridDim.x - 1" in kernel
    for name, text in (("step 8", _paragraph("**Step 8, `fast`")),
                       ("README's fast row", _readme_row("fast"))):
        for phrase in ("flag", "with no fence", "the block that started "
                       "last"):
            assert phrase in text, (name, phrase)
        for phrase in ("last block to finish", "after a fence",
                       "atomic counter"):
            assert phrase not in text, (name, phrase)


# ---------------------------------------------------------------------------
# What the notebook needs installed


def test_the_notebook_names_its_extra_and_what_it_holds():
    """The extra whose comment in pyproject.toml names this notebook is
    the one its introduction and the benchmarks page install, and the
    introduction lists exactly that extra's packages."""
    extras = _extras()
    assert {"test", "bench", "notebook"} <= set(extras)
    (extra,) = [name for name, (_, comment) in extras.items()
                if NOTEBOOK.name in comment]
    intro = _paragraphs()[0]
    match = re.search(r'pip install -e "\.\[([\w,]+)\]"[^(]*\(([^)]*)\)',
                      intro)
    assert match, "the introduction gives no pip install -e command"
    assert match.group(1).split(",") == [extra]
    assert re.findall(r"`([\w.-]+)`", match.group(2)) == extras[extra][0]
    doc = BENCHMARKS_DOC.read_text(encoding="utf-8")
    (named,) = re.findall(r'pip install -e "\.\[([\w,]+)\]"\s*\n'
                          rf"jupyter lab benchmarks/{NOTEBOOK.name}", doc)
    assert extra in named.split(",")


def test_the_notebook_names_the_cupy_wheel_of_the_cuda_it_is_built_for():
    """CuPy's wheels are per CUDA major version: the notebook (prose and
    code) names the one of pyproject.toml's CUDA classifier."""
    (major,) = re.findall(r'"Environment :: GPU :: NVIDIA CUDA :: (\d+)"',
                          PYPROJECT.read_text(encoding="utf-8"))
    wheels = re.findall(r"cupy-cuda\w+", NOTEBOOK.read_text(encoding="utf-8"))
    assert wheels and set(wheels) == {f"cupy-cuda{major}x"}, wheels
    assert f"CUDA {major}" in _paragraphs()[0]


# ---------------------------------------------------------------------------
# The bench's facts


def test_the_notebook_quotes_the_benchs_rules():
    """The default-size rule's ratio (floor.DEFAULT_RULE_RATIO), the input
    size below which back-to-back runs rotate among copies
    (policy.rotation_buffers: 4x L2), the variable that asks for recorded
    mode (the one its first cell reads), and multi_element's grid for the
    recorded GPU (cudareduce.plan), as the notebook gives them."""
    text = " ".join(_paragraphs())
    assert f"at least {floor.DEFAULT_RULE_RATIO} empty kernels" in text
    l2 = 50 << 20
    multiple = next(k for k in range(1, 65)
                    if policy.rotation_buffers(k * l2, l2) == 1)
    assert policy.rotation_buffers(multiple * l2 - 1, l2) > 1
    assert f"inputs smaller than {multiple}× L2" in text
    (variable,) = re.findall(r'os\.environ\.get\("(\w+)"\)',
                             "".join(_cells("code")))
    assert f"`{variable}=" in text
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    sms = recorded["device"]["sm_count"]
    (first, _) = cudareduce.plan(1 << 22, method="multi_element",
                                 threads=256, sm_count=sms)
    assert (f"sized from the SM count ({sms} here)" in text
            and f"a grid of {first.blocks:,} blocks "
                f"({first.blocks // sms} per SM)" in text)
