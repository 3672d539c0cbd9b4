"""The exact accumulator of issue 44's exact sums (cuda/exact/kulisch.h),
without a GPU.

tests/support/c/kulisch_check.c sums each case three ways -- in order,
reversed, and cut into chunks whose accumulators (and special values) are
merged -- and prints each result's bits in float64, float32, float16 and
bfloat16 with its overflow flag.  All three must be the bits of the exact
sum rounded once to nearest even, the same for every order and chunking:
math.fsum for float64 where it does not overflow, else the exact fractions
of support/exact_reference.py, whose rounding is held to fsum and to
NumPy's own correctly rounded casts (test_reference_*).  The program also
checks its capacity (2^62 times the largest double) itself.

Zeros: an exactly zero sum is +0.0, -0.0 inputs or not, as NumPy's sum
gives (test_negative_zero holds NumPy to that too).  The random data
comes from fixed seeds.
"""
from __future__ import annotations

import math
import random
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from support.c_build import c_compiler
from support.exact_reference import (FORMATS, TINIEST, binade, exact_sum,
                                     expected, limits, round_exact,
                                     value_of)

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "support" / "c" / "kulisch_check.c"
# setup.py's include directories: the public headers, then cuda/.
INCLUDES = [f"-I{ROOT / 'cuda' / 'include'}", f"-I{ROOT / 'cuda'}"]
SEED = 44
DBL_MAX = sys.float_info.max
FLT_MAX = float(np.finfo(np.float32).max)
WAYS = ("in order", "reversed", "in chunks")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("kulisch") / "kulisch_check"
    built = subprocess.run(
        [c_compiler(), "-std=gnu11", "-O2", "-Wall", "-Werror", *INCLUDES,
         str(SOURCE), "-o", str(path)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return path


def random_cuts(rng, n: int) -> list[int]:
    """Up to 8 cuts at random places, empty chunks too."""
    return sorted(int(c) for c in rng.integers(0, n + 1, rng.integers(9)))


class Case:
    """Values to sum (doubles, or floats where as_float), and where to cut
    them into chunks."""

    def __init__(self, values, cuts=(), as_float=False):
        self.values = [float(x) for x in values]
        self.cuts = list(cuts)
        self.as_float = as_float

    def line(self) -> str:
        return " ".join(["f" if self.as_float else "d", str(len(self.cuts)),
                         *map(str, self.cuts), str(len(self.values)),
                         *map(float.hex, self.values)])

    def __repr__(self):
        shown = ", ".join(map(float.hex, self.values[:6]))
        more = f", ... ({len(self.values)} values)" if len(
            self.values) > 6 else ""
        return f"Case([{shown}{more}], cuts={self.cuts})"


def sums(program, tmp_path, cases):
    """The program's answers: for each case, whether its accumulator is
    zero and, for each way of summing, a (bits, overflow) per format."""
    path = tmp_path / "cases.txt"
    path.write_text("\n".join(case.line() for case in cases) + "\n")
    ran = subprocess.run([str(program), str(path)], capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    answers = []
    for line in ran.stdout.splitlines():
        fields = line.split()
        pairs = [(int(fields[k], 16), bool(int(fields[k + 1])))
                 for k in range(1, len(fields), 2)]
        answers.append((bool(int(fields[0])),
                        [pairs[4 * w:4 * w + 4] for w in range(3)]))
    assert len(answers) == len(cases)
    return answers


def float64_bits(x: float) -> int:
    return int(np.float64(x).view(np.uint64))


def wanted(values) -> list[tuple[int, bool]]:
    """The exact sum's (bits, overflow) in each format; for float64,
    math.fsum's where it gives one (it raises on an intermediate
    overflow), and the fractions' rounding is held to it."""
    want = [expected(values, fmt) for fmt in FORMATS]
    if all(math.isfinite(x) for x in values):
        try:
            fsum = math.fsum(values)
        except OverflowError:
            return want
        assert want[0] == (float64_bits(fsum), False)
    return want


def check(program, tmp_path, cases):
    """Every way of summing every case gives the exact sum's bits; the
    program's answers."""
    answers = sums(program, tmp_path, cases)
    for case, (zero, ways) in zip(cases, answers):
        finite = [x for x in case.values if math.isfinite(x)]
        assert zero == (exact_sum(finite) == 0), case
        want = wanted(case.values)
        for way, got in zip(WAYS, ways):
            assert got == want, (f"{way}: got {[hex(b) for b, _ in got]}, "
                                 f"want {[hex(b) for b, _ in want]}: {case}")
    return answers


def doubles_summing_to(q: Fraction, rng, noise: int = 3) -> list[float]:
    """Doubles whose exact sum is q (a multiple of 2^-1074), with `noise`
    pairs x, -x among them, shuffled."""
    assert (q / TINIEST).denominator == 1
    values = []
    while q:
        x = float(q) if abs(q) <= DBL_MAX else DBL_MAX if q > 0 else -DBL_MAX
        values.append(x)
        q -= Fraction(x)
    for _ in range(noise):
        x = float(rng.standard_normal() * 2.0 ** int(rng.integers(-900,
                                                                  900)))
        values += [x, -x]
    rng.shuffle(values)
    return values


def naive(values, fmt: str) -> int:
    """The double rounding that kulisch.h avoids: the sum rounded to
    float64 (math.fsum), then cast to `fmt`."""
    fsum = math.fsum(values)
    with np.errstate(over="ignore"):
        if fmt == "float32":
            return int(np.float32(fsum).view(np.uint32))
        if fmt == "float16":
            return int(np.float16(fsum).view(np.uint16))
    return round_exact(Fraction(fsum), fmt)[0]


def tiny_below(q: Fraction) -> Fraction:
    """A power of two 60 binades below |q| (at least 2^-1074): far below
    half a double's last place there."""
    return max(Fraction(2) ** (binade(q) - 60), TINIEST)


def test_capacity(program, tmp_path):
    # The program's own checks: 2^62 DBL_MAX of either sign rounds to
    # infinity, their sum is zero, and 2^62 DBL_MAX - (2^62 - 1) DBL_MAX
    # is DBL_MAX (no bit lost at the top).
    assert sums(program, tmp_path, []) == []


def test_random_normal(program, tmp_path):
    rng = np.random.default_rng([SEED, 1])
    cases = []
    for n in (1, 2, 3, 5, 10, 100, 1000, 10 ** 4, 10 ** 5):
        for scale in (1.0, 10.0 ** rng.uniform(-30, 30)):
            values = rng.standard_normal(n) * scale + rng.normal() * scale
            cases.append(Case(values, random_cuts(rng, n)))
    check(program, tmp_path, cases)


def test_wide_range(program, tmp_path):
    # 1e-300 .. 1e300, random signs.
    rng = np.random.default_rng([SEED, 2])
    cases = []
    for n in (2, 10, 1000, 10 ** 4, 10 ** 5):
        values = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-300, 300,
                                                                    n)
        cases.append(Case(values, random_cuts(rng, n)))
    check(program, tmp_path, cases)


def test_cancellation(program, tmp_path):
    rng = np.random.default_rng([SEED, 3])
    shuffle = random.Random(SEED)
    cases = []
    for triple in ([1e308, 1.0, -1e308], [1e308, 1e-308, -1e308],
                   [-1e308, -1e-308, 1e308], [1e308, 5e-324, -1e308],
                   [-DBL_MAX, 1.0, DBL_MAX]):
        for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1),
                      (2, 1, 0)):
            cases.append(Case([triple[k] for k in order], [1]))
    # Big values cancelled by their negatives, around a few small ones.
    big = list(rng.standard_normal(1000) * 2.0 ** rng.integers(900, 1000,
                                                               1000))
    values = big + [-x for x in big] + list(rng.standard_normal(10))
    shuffle.shuffle(values)
    cases.append(Case(values, random_cuts(rng, len(values))))
    check(program, tmp_path, cases)
    # The negative sum that rounds to a narrower format's zero keeps its
    # sign, as a cast does.
    assert wanted([-1e308, -1e-308, 1e308])[1] == (0x80000000, False)


def test_subnormals(program, tmp_path):
    rng = np.random.default_rng([SEED, 4])
    tiniest = float(TINIEST)
    least_normal = 2.0 ** -1022
    subnormals = (rng.choice([-1, 1], 1000) * rng.integers(1, 2 ** 52, 1000)
                  * tiniest)
    cases = [Case(subnormals, random_cuts(rng, 1000)),
             Case([least_normal - tiniest, tiniest]),
             Case([least_normal, -tiniest]),
             Case([tiniest] * 3),
             Case([tiniest, -tiniest, tiniest], [1, 2])]
    # Each format's least subnormal and least normal, the largest
    # subnormal, the ties beside them (to even: 0, the least normal, twice
    # the least subnormal) and a hair either side, of either sign.
    for fmt in FORMATS:
        least, normal, _ = limits(fmt)
        for target in (least, normal, normal - least, normal - least / 2,
                       least / 2, 3 * least / 2):
            for nudge in (0, tiny_below(target), -tiny_below(target)):
                for sign in (1, -1):
                    q = sign * (target + nudge)
                    if (q / TINIEST).denominator == 1:
                        cases.append(Case(doubles_summing_to(q, rng)))
    check(program, tmp_path, cases)


def random_bits(rng, fmt: str, parity: int) -> int:
    """A finite value of `fmt` (subnormal or normal, either sign) below its
    largest, with a significand of this parity."""
    p, w = FORMATS[fmt]
    field = int(rng.integers(0, 2 ** w - 1))
    fraction = int(rng.integers(0, 2 ** (p - 1)))
    bits = (field << (p - 1)) | (fraction & ~1) | parity
    if bits + 1 >= (2 ** w - 1) << (p - 1):
        bits -= 2
    return bits | int(rng.integers(2)) << (p - 1 + w)


def ties(rng, fmt: str, count: int):
    """(bits, tie): `count` values of `fmt` and the point halfway from each
    to its neighbour away from zero (the bits plus one), each a multiple
    of 2^-1074; half of them of even significand, half odd."""
    found = []
    while len(found) < count:
        bits = random_bits(rng, fmt, len(found) % 2)
        tie = (value_of(bits, fmt) + value_of(bits + 1, fmt)) / 2
        if (tie / TINIEST).denominator == 1:
            found.append((bits, tie))
    return found


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_exact_ties(program, tmp_path, fmt):
    # Exactly halfway between two values of fmt: to the even one, whether
    # that is the lower or the higher.
    rng = np.random.default_rng([SEED, 5, list(FORMATS).index(fmt)])
    cases = []
    for bits, tie in ties(rng, fmt, 40):
        even = bits if bits % 2 == 0 else bits + 1
        assert round_exact(tie, fmt) == (even, False)
        cases.append(Case(doubles_summing_to(tie, rng)))
    check(program, tmp_path, cases)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_near_ties(program, tmp_path, fmt):
    # A hair beside a tie, either way: a quarter of fmt's last place (the
    # bit below the guard bit), or 60 binades down, far below a double's
    # half place, where rounding to float64 first lands on the tie and
    # then on the even value (np.float32(math.fsum(x)) for float32):
    # wrong for one way of each tie.
    index = list(FORMATS).index(fmt)
    rng = np.random.default_rng([SEED, 6, index])
    cases, naive_wrong = [], 0
    for bits, tie in ties(rng, fmt, 40):
        quarter = abs(value_of(bits + 1, fmt) - value_of(bits, fmt)) / 4
        for hair in (quarter, tiny_below(tie)):
            for away in (True, False):
                q = tie + (hair if away else -hair) * (1 if tie > 0 else -1)
                if (q / TINIEST).denominator != 1:
                    continue
                values = doubles_summing_to(q, rng)
                right = bits + 1 if away else bits
                assert wanted(values)[index] == (right, False)
                if fmt != "float64" and hair != quarter:
                    even = bits if bits % 2 == 0 else bits + 1
                    assert naive(values, fmt) == even
                    naive_wrong += even != right
                cases.append(Case(values))
    check(program, tmp_path, cases)
    if fmt != "float64":
        assert naive_wrong == 40


def test_overflow(program, tmp_path):
    rng = np.random.default_rng([SEED, 7])
    shuffle = random.Random(SEED)
    many = [DBL_MAX] * 1000 + [-DBL_MAX] * 999
    shuffle.shuffle(many)
    cases = [Case([DBL_MAX, DBL_MAX]), Case([-DBL_MAX] * 3, [1]),
             Case([1e308] * 3 + [-1e308] * 2, [2]),
             Case(many, random_cuts(rng, len(many))),
             Case([DBL_MAX] * 10 ** 4, random_cuts(rng, 10 ** 4)),
             Case([FLT_MAX, FLT_MAX], as_float=True)]
    # Each format's largest value; halfway from it to the next power of
    # two (a tie: to even, infinity) and a hair either side; twice it.
    for fmt in FORMATS:
        _, _, largest = limits(fmt)
        tie = (largest + Fraction(2) ** (binade(largest) + 1)) / 2
        hair = tiny_below(largest)
        for q in (largest, tie, tie - hair, tie + hair, 2 * largest):
            for sign in (1, -1):
                cases.append(Case(doubles_summing_to(sign * q, rng)))
        assert round_exact(tie, fmt)[1]
        assert not round_exact(tie - hair, fmt)[1]
        if fmt != "float64":
            # Rounded to float64 first, it is the tie: infinity.
            just_below = doubles_summing_to(tie - hair, rng, noise=0)
            assert naive(just_below, fmt) == round_exact(tie, fmt)[0]
    check(program, tmp_path, cases)


def test_exact_zero(program, tmp_path):
    rng = np.random.default_rng([SEED, 8])
    shuffle = random.Random(SEED)
    values = list(rng.standard_normal(1000)
                  * 2.0 ** rng.integers(-1000, 1000, 1000))
    values += [-x for x in values] + [-0.0, 0.0, -0.0]
    shuffle.shuffle(values)
    cases = [Case(values, random_cuts(rng, len(values))),
             Case([1e308, -1e308]), Case([5e-324, -5e-324], [1]),
             Case([1.5, -0.5, -1.0])]
    assert all(zero and ways == [[(0, False)] * 4] * 3
               for zero, ways in check(program, tmp_path, cases))


def test_negative_zero(program, tmp_path):
    # Only -0.0 (or nothing) to sum: +0.0 here, as NumPy's sum gives.
    lists = [[-0.0], [-0.0] * 5, [-0.0] * 100, [-0.0, 0.0], [], [0.0],
             [1.0, -1.0, -0.0]]
    cases = [Case(v, [len(v) // 2], as_float) for v in lists
             for as_float in (False, True)]
    assert all(ways == [[(0, False)] * 4] * 3
               for _, ways in check(program, tmp_path, cases))
    for v in lists:
        for dtype in (np.float64, np.float32, np.float16):
            assert not np.signbit(np.sum(np.array(v, dtype))), (v, dtype)


def test_specials(program, tmp_path):
    # NaN where NumPy gives NaN (a NaN, or both infinities), else the
    # infinity; never an overflow, even where the finite part overflows.
    rng = np.random.default_rng([SEED, 9])
    inf, nan = math.inf, math.nan
    lists = [[nan], [inf], [-inf], [inf, -inf], [1.0, inf, 2.0, inf],
             [-inf, 5.0], [nan, inf], [nan, 1.0, -inf], [1.0, 2.0, nan],
             [inf, DBL_MAX, DBL_MAX], [-inf, -DBL_MAX, -DBL_MAX],
             [inf, -DBL_MAX, -DBL_MAX]]
    cases = []
    for values in lists:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            numpy_sum = float(np.sum(np.array(values)))
        want = expected(values, "float64")
        assert float64_bits(numpy_sum) == want[0] or (
            math.isnan(numpy_sum) and want[0] == 0x7ff8000000000000)
        for _ in range(3):
            cases.append(Case(values, random_cuts(rng, len(values))))
        cases.append(Case(values, [1], as_float=True))
    check(program, tmp_path, cases)


def test_float32_inputs(program, tmp_path):
    rng = np.random.default_rng([SEED, 10])
    normal = rng.standard_normal(10 ** 4).astype(np.float32)
    # float32's whole range, subnormals too, random signs.
    wide = (rng.choice([-1.0, 1.0], 10 ** 4)
            * 2.0 ** rng.uniform(-149, 127.99, 10 ** 4)).astype(np.float32)
    tiny = (rng.integers(-2 ** 23, 2 ** 23, 1000) * 2.0 ** -149).astype(
        np.float32)
    cases = [Case(a, random_cuts(rng, len(a)), as_float=True)
             for a in (normal, wide, tiny)]
    check(program, tmp_path, cases)


def test_chunking(program, tmp_path):
    # One wide-ranged sum, cut in twenty ways, down to a chunk a value.
    rng = np.random.default_rng([SEED, 11])
    values = rng.choice([-1.0, 1.0], 2000) * 10.0 ** rng.uniform(-300, 300,
                                                                  2000)
    cuts = [random_cuts(rng, 2000) for _ in range(18)]
    cuts += [list(range(1, 2000)), sorted(rng.integers(0, 2001, 500))]
    cases = [Case(values, c) for c in cuts]
    assert len({str(ways) for _, ways in check(program, tmp_path,
                                                cases)}) == 1


def test_reference_matches_numpy():
    # Doubles of every binade, and next to float32 and float16 ties:
    # NumPy's casts from float64 round correctly, as does fsum; bfloat16
    # (no NumPy dtype) is held to the float32 bits' round half to even.
    rng = np.random.default_rng([SEED, 12])
    doubles = list(rng.standard_normal(3000)
                   * 2.0 ** rng.integers(-1080, 1025, 3000))
    for fmt in ("float32", "float16"):
        for bits, tie in ties(rng, fmt, 300):
            ulp = Fraction(2) ** (binade(tie) - 52)
            doubles += [float(tie + k * ulp) for k in (-1, 0, 1)]
    with np.errstate(over="ignore"):
        for x in doubles:
            if x == 0 or not math.isfinite(x):
                continue
            q = Fraction(x)
            assert round_exact(q, "float64") == (float64_bits(x), False)
            for fmt, dtype, word in (("float32", np.float32, np.uint32),
                                     ("float16", np.float16, np.uint16)):
                cast = dtype(x)
                assert round_exact(q, fmt) == (int(cast.view(word)),
                                               bool(np.isinf(cast))), x
        floats = np.concatenate([np.array(doubles).astype(np.float32),
                                 rng.integers(0, 2 ** 32, 3000).astype(
                                     np.uint32).view(np.float32)])
    for x in floats[np.isfinite(floats) & (floats != 0)]:
        word = int(x.view(np.uint32))
        rounded = (word + 0x7fff + (word >> 16 & 1)) >> 16
        assert round_exact(Fraction(float(x)), "bfloat16")[0] == rounded, x
