"""Element counts as the bench's command line writes them: one size
(``4194304``, ``2^22``, ``2**22``) or a sweep (``2^10..2^28,5000``)."""
from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

__all__ = ["PAPER_N", "argument_type", "parse_size", "parse_sizes"]

#: Harris's size, 2^22 (4M elements): the paper's tables and the counters'
#: default.  The bench's own default is chosen per GPU
#: (:func:`cudareduce.bench.floor.default_n`).
PAPER_N = 1 << 22

_POWER = re.compile(r"^\s*(\d+)\s*(?:\^|\*\*)\s*(\d+)\s*$")


def parse_size(text: str) -> int:
    """One element count: ``"4194304"``, ``"4_194_304"``, ``"2^22"`` or
    ``"2**22"``.

    Raises
    ------
    ValueError
        Not one of those forms, or not >= 1.
    """
    s = str(text).strip()
    match = _POWER.match(s)
    if match:
        value = int(match.group(1)) ** int(match.group(2))
    elif re.fullmatch(r"\d[\d_]*", s) and not s.endswith("_"):
        value = int(s)
    else:
        raise ValueError(f"not an element count: {text!r} (use e.g. 4194304, "
                         f"2^22 or 2**22)")
    if value < 1:
        raise ValueError(f"element count must be >= 1, got {text!r}")
    return value


def parse_sizes(text: str) -> list[int]:
    """The sizes of a sweep, sorted, without duplicates.

    A comma-separated list of items; an item is one size (see
    :func:`parse_size`) or a range ``A..B``: every power of two from A to B
    inclusive, e.g. ``"2^10..2^28"`` (19 sizes) or ``"1000,4096,2^20"``.

    Raises
    ------
    ValueError
        An item that does not parse, a range with A > B or without a power of
        two in it, or an empty list.
    """
    sizes: set[int] = set()
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            raise ValueError(f"empty item in size list {text!r}")
        if ".." in item:
            lo_text, _, hi_text = item.partition("..")
            lo, hi = parse_size(lo_text), parse_size(hi_text)
            if lo > hi:
                raise ValueError(f"range {item!r} runs backwards")
            p = 1 << (lo - 1).bit_length()       # smallest power of 2 >= lo
            found = False
            while p <= hi:
                sizes.add(p)
                found = True
                p <<= 1
            if not found:
                raise ValueError(f"range {item!r} holds no power of two")
        else:
            sizes.add(parse_size(item))
    return sorted(sizes)


def argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` as an argparse type: its ValueError becomes an
    ArgumentTypeError with the same text."""
    def wrapped(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    wrapped.__name__ = parse.__name__
    return wrapped
