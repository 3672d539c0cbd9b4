"""cudareduce.bench.sizes: element counts as the command line writes them."""
from __future__ import annotations

import pytest

from cudareduce.bench import sizes


@pytest.mark.parametrize("text, n", [
    ("4194304", 4194304), ("4_194_304", 4194304), ("2^22", 1 << 22),
    ("2**22", 1 << 22), (" 2 ^ 10 ", 1024), ("1", 1), ("10^3", 1000)])
def test_parse_size(text, n):
    assert sizes.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "0", "-5", "2^", "x", "1e6", "4M",
                                  "2^-1", "1_", "1.5"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        sizes.parse_size(text)


def test_parse_sizes_range_is_every_power_of_two():
    assert sizes.parse_sizes("2^10..2^28") == [1 << k for k in range(10, 29)]
    assert sizes.parse_sizes("3..100") == [4, 8, 16, 32, 64]
    assert sizes.parse_sizes("2^4..2^4") == [16]


def test_parse_sizes_list_sorted_unique():
    assert sizes.parse_sizes("1000,4096,2^20") == [1000, 4096, 1 << 20]
    assert sizes.parse_sizes("2^20, 1000 ,2^10..2^12,4096") == \
        [1000, 1024, 2048, 4096, 1 << 20]


@pytest.mark.parametrize("text", ["", "2^12..2^10", "5..7", "1,,2", "a..b",
                                  "2^10..", ","])
def test_parse_sizes_rejects(text):
    with pytest.raises(ValueError):
        sizes.parse_sizes(text)
