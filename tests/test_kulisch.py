"""The exact accumulator of issue 44's exact sums (cuda/exact/kulisch.h)
and the per-thread window flushed into it (cuda/exact/window.h), without a
GPU.

tests/support/c/kulisch_check.c sums each case five ways -- in order,
reversed, cut into chunks whose accumulators (and special values) are
merged, through one window, and through a window a "thread", each thread
taking a strided share and flushing into its own accumulator, merged last
(the GPU's shape) -- and prints each result's bits in float64, float32,
float16 and bfloat16 with its overflow flag.  All five must be the bits of
the exact sum rounded once to nearest even, the same for every order,
chunking and number of threads: math.fsum for float64 where it does not
overflow, else the exact fractions of cudareduce/bench/exact_reference.py,
whose rounding is held to fsum and to NumPy's own correctly rounded casts
(test_reference_*).  The program also checks its capacity (2^62 times the
largest double) itself, and says what the one window did (its flushes at
the count's bound, its re-basings), which the window's own tests
(test_window_*) hold to the design in window.h's header comment.

Zeros: an exactly zero sum is +0.0, -0.0 inputs or not, as NumPy's sum
gives (test_negative_zero holds NumPy to that too).  The random data
comes from fixed seeds.
"""
from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from support.c_build import c_compiler
from cudareduce.bench.exact_reference import (FORMATS, TINIEST, binade,
                                              exact_sum, expected,
                                              infinity_bits, limits,
                                              nan_bits, round_exact,
                                              value_of)

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "support" / "c" / "kulisch_check.c"
# setup.py's include directories: the public headers, then cuda/.
INCLUDES = [f"-I{ROOT / 'cuda' / 'include'}", f"-I{ROOT / 'cuda'}"]
SEED = 44
DBL_MAX = sys.float_info.max
FLT_MAX = float(np.finfo(np.float32).max)
WAYS = ("in order", "reversed", "in chunks", "one window", "windows")
# window.h's constants: additions between flushes, the span of exponents,
# and where an element above the span (or the first) is put in it.
WINDOW_ADDS = {"float32": 256, "float64": 2048}
SPAN, ROOM = 32, 8
# Each kind's significand bits, its exponent bias and largest exponent.
KINDS = {"float32": (24, 127, 254), "float64": (53, 1023, 2046)}


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("kulisch") / "kulisch_check"
    built = subprocess.run(
        [c_compiler(), "-std=gnu11", "-O2", "-Wall", "-Werror", *INCLUDES,
         str(SOURCE), "-o", str(path), "-lm"], capture_output=True,
        text=True)
    assert built.returncode == 0, built.stderr
    return path


def random_cuts(rng, n: int) -> list[int]:
    """Up to 8 cuts at random places, empty chunks too."""
    return sorted(int(c) for c in rng.integers(0, n + 1, rng.integers(9)))


def is_float32(x: float) -> bool:
    """Whether x is a float32 value (NaN included)."""
    with np.errstate(over="ignore"):
        return math.isnan(x) or float(np.float32(x)) == x


class Case:
    """Values to sum (doubles, or floats where as_float), where to cut
    them into chunks, and how many threads (windows) share them: 32 by
    default, a warp."""

    def __init__(self, values, cuts=(), as_float=False, threads=32):
        self.values = [float(x) for x in values]
        assert not as_float or all(is_float32(x) for x in self.values)
        self.cuts = list(cuts)
        self.as_float = as_float
        self.threads = threads

    def line(self) -> str:
        return " ".join(["f" if self.as_float else "d", str(self.threads),
                         str(len(self.cuts)), *map(str, self.cuts),
                         str(len(self.values)),
                         *map(float.hex, self.values)])

    def __repr__(self):
        shown = ", ".join(map(float.hex, self.values[:6]))
        more = f", ... ({len(self.values)} values)" if len(
            self.values) > 6 else ""
        return (f"Case([{shown}{more}], cuts={self.cuts}, "
                f"as_float={self.as_float}, threads={self.threads})")


def run(program, tmp_path, lines: list[str]) -> list[str]:
    """The program's output lines for the case lines given."""
    path = tmp_path / "cases.txt"
    path.write_text("".join(line + "\n" for line in lines))
    ran = subprocess.run([str(program), str(path)], capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def sums(program, tmp_path, cases):
    """The program's answers: for each case, whether its accumulator is
    zero; for each way of summing, a (bits, overflow) per format; and the
    one window's (flushes at the bound, re-basings)."""
    answers = []
    for line in run(program, tmp_path, [case.line() for case in cases]):
        fields = line.split()
        assert len(fields) == 1 + 8 * len(WAYS) + 2, line
        pairs = [(int(fields[k], 16), bool(int(fields[k + 1])))
                 for k in range(1, len(fields) - 2, 2)]
        answers.append((bool(int(fields[0])),
                        [pairs[4 * w:4 * w + 4] for w in range(len(WAYS))],
                        (int(fields[-2]), int(fields[-1]))))
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
    for case, (zero, ways, _) in zip(cases, answers):
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
    assert all(zero and ways == [[(0, False)] * 4] * len(WAYS)
               for zero, ways, _ in check(program, tmp_path, cases))


def test_negative_zero(program, tmp_path):
    # Only -0.0 (or nothing) to sum: +0.0 here, as NumPy's sum gives.
    lists = [[-0.0], [-0.0] * 5, [-0.0] * 100, [-0.0, 0.0], [], [0.0],
             [1.0, -1.0, -0.0]]
    cases = [Case(v, [len(v) // 2], as_float) for v in lists
             for as_float in (False, True)]
    assert all(ways == [[(0, False)] * 4] * len(WAYS)
               for _, ways, _ in check(program, tmp_path, cases))
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
        if all(map(is_float32, values)):
            cases.append(Case(values, [1], as_float=True))
    # The same as floats, where the finite part overflows float32.
    flt_max = float(np.finfo(np.float32).max)
    for values in ([inf, flt_max, flt_max], [-inf, -flt_max, -flt_max],
                   [inf, -flt_max, -flt_max], [nan, flt_max, -inf]):
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
    assert len({str(ways) for _, ways, _ in check(program, tmp_path,
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


# --- the window (cuda/exact/window.h) ------------------------------------


def window_moves(program, tmp_path, cases) -> list[tuple[int, int]]:
    """Every way exact (check), and the one window's (flushes at the
    count's bound, re-basings) for each case."""
    return [moves for _, _, moves in check(program, tmp_path, cases)]


def element(kind: str, e: int, significand: int, sign: int = 1) -> float:
    """sign * significand * 2^(e - bias - (p - 1)): for a significand with
    its leading one, the value of biased exponent e; e = 1 with one below
    2^(p - 1), a subnormal."""
    p, bias, _ = KINDS[kind]
    return sign * math.ldexp(significand, e - bias - (p - 1))


def random_element(rng, kind: str, e: int) -> float:
    """A random value of biased exponent e, either sign; e = 0, a random
    subnormal (nonzero)."""
    p, _, _ = KINDS[kind]
    sign = int(rng.choice([-1, 1]))
    if e == 0:
        return element(kind, 1, int(rng.integers(1, 2 ** (p - 1))), sign)
    return element(kind, e, int(rng.integers(2 ** (p - 1), 2 ** p)), sign)


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_headroom(program, tmp_path, kind):
    # The first element puts the span's top ROOM exponents above it; then
    # the largest significand at that top, all of one sign.  With the
    # first, adds - 1 of them are the bound's additions exactly (no flush
    # at the bound), one more is one past it (one flush), and so on; a
    # run of 10 bounds holds windows of nothing but the largest, whose
    # float64 `high` reaches -2^63 exactly where they are negative.
    p, bias, _ = KINDS[kind]
    adds = WINDOW_ADDS[kind]
    # One past the bound would overflow the window's word (float32) or
    # its `high` (float64): a window that missed its flush would be wrong.
    first_units = 2 ** (p - 1) * 2 ** (SPAN - 1 - ROOM)
    if kind == "float32":
        assert adds * (2 ** p - 1) * 2 ** 31 + first_units >= 2 ** 63
    else:
        assert adds * (2 ** 52 - 1) + first_units // 2 ** 32 >= 2 ** 63
    e = bias + 3
    cases, want = [], []
    for sign in (1, -1):
        first = element(kind, e - ROOM, 2 ** (p - 1), sign)
        top = element(kind, e, 2 ** p - 1, sign)
        for k in (adds - 1, adds, adds + 1, 2 * adds - 1, 2 * adds,
                  10 * adds + 3):
            cases.append(Case([first] + [top] * k,
                              as_float=kind == "float32"))
            want.append((k // adds, 1))
    assert window_moves(program, tmp_path, cases) == want


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_span_edges(program, tmp_path, kind):
    # Sequences of exponents (0: a subnormal), random significands and
    # signs, and the re-basings each must make.  The first element's
    # span is bottom .. top; one below a span re-bases it to start there,
    # one above (or the first) to end ROOM exponents above it; the span
    # stays within exponents 1 .. emax.
    p, bias, emax = KINDS[kind]
    rng = np.random.default_rng([SEED, 13, p])
    e = bias
    top, bottom = e + ROOM, e - (SPAN - 1 - ROOM)
    sequences = [
        ([e, top], 1), ([e, top + 1], 2), ([e, bottom], 1),
        ([e, bottom - 1], 2), ([e, bottom, top, bottom, top, e], 1),
        # Re-based down to the element: the span reaches 31 above it.
        ([e, bottom - 1, bottom + 30], 2), ([e, bottom - 1, bottom + 31], 3),
        # Up, then down to the bottom: two spans 31 apart share one.
        ([e, e + 31] * 50, 3),
        # 32 apart: every element re-bases.
        ([e, e + 32] * 50, 100),
        # The top of the exponents: the span is emax - 31 .. emax.
        ([emax, emax - 31, emax], 1), ([emax, emax - 32], 2),
        ([emax - 31, emax, emax - 31], 2),
        # The bottom: 1 .. 32, subnormals in it.
        ([1, 32, 1, 0, 0], 1), ([1, 33], 2), ([0, 32, 0], 1),
        ([33, 0], 2), ([0, 33, 0], 3),
    ]
    cases = []
    for exponents, _ in sequences:
        values = [random_element(rng, kind, x) for x in exponents]
        cases.append(Case(values, as_float=kind == "float32", threads=3))
    assert [r for _, r in window_moves(program, tmp_path, cases)] == [
        r for _, r in sequences]


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_far_apart(program, tmp_path, kind):
    # Elements alternating between exponents far apart re-base every
    # element; so nearly does data spread over the whole range (all but
    # about 32 in 254 float32 elements, 32 in 2046 float64 ones).
    p, bias, emax = KINDS[kind]
    rng = np.random.default_rng([SEED, 14, p])
    far = 60 if kind == "float32" else 500
    alternating = [random_element(rng, kind, bias + (far if k % 2 else -far))
                   for k in range(1000)]
    subnormal_or_huge = [random_element(rng, kind, 0 if k % 2 else emax)
                         for k in range(1000)]
    wide = [random_element(rng, kind, int(x))
            for x in rng.integers(1, emax + 1, 3000)]
    cases = [Case(v, random_cuts(rng, len(v)), as_float=kind == "float32")
             for v in (alternating, subnormal_or_huge, wide)]
    moves = window_moves(program, tmp_path, cases)
    assert [r for _, r in moves[:2]] == [1000, 1000]
    assert moves[2][1] > (0.8 if kind == "float32" else 0.95) * 3000


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_subnormals(program, tmp_path, kind):
    # Subnormals alone sit in the bottom span (exponent 1 with no leading
    # one) and never re-base it; beside normals of the bottom span too;
    # sums that cross into the normals; subnormals beside 1.0 re-base.
    p, bias, _ = KINDS[kind]
    rng = np.random.default_rng([SEED, 15, p])
    adds = WINDOW_ADDS[kind]
    tiny = [random_element(rng, kind, 0) for _ in range(3 * adds)]
    positive = [abs(x) for x in tiny]
    # (the first a subnormal: one of exponent above 24 would put the
    # span's bottom above 1)
    bottom = [random_element(rng, kind, int(x))
              for x in [0, *rng.integers(0, 33, 3 * adds - 1)]]
    largest = element(kind, 1, 2 ** (p - 1) - 1)
    crossing = [largest] * 5 + [-largest] * 2
    beside_one = [random_element(rng, kind, 0 if k % 2 else bias)
                  for k in range(200)]
    cases = [Case(v, random_cuts(rng, len(v)), as_float=kind == "float32")
             for v in (tiny, positive, bottom, crossing, beside_one)]
    moves = window_moves(program, tmp_path, cases)
    assert moves[:4] == [(2, 1), (2, 1), (2, 1), (0, 1)]
    assert moves[4][1] == 200


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_first_element(program, tmp_path, kind):
    # A first element far above or below the rest: the second re-bases
    # the window once, and the rest stay in it.
    p, bias, _ = KINDS[kind]
    rng = np.random.default_rng([SEED, 16, p])
    rest = [random_element(rng, kind, bias) for _ in range(3000)]
    cases = [Case([first] + rest, as_float=kind == "float32")
             for first in (element(kind, bias + 100, 2 ** p - 1),
                           element(kind, bias - 100, 2 ** (p - 1), -1),
                           random_element(rng, kind, 0))]
    adds = WINDOW_ADDS[kind]
    assert window_moves(program, tmp_path, cases) == [
        ((3000 - 1) // adds, 2)] * 3


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_typical_data(program, tmp_path, kind):
    # Normal data and data spread over 6 orders of magnitude, random
    # signs: the window re-bases once or twice and is flushed at its
    # bound otherwise (10^5 additions: 390 float32 windows, 48 float64).
    p, _, _ = KINDS[kind]
    rng = np.random.default_rng([SEED, 17, p])
    dtype = np.float32 if kind == "float32" else np.float64
    n = 10 ** 5
    normal = rng.standard_normal(n).astype(dtype)
    spread = (rng.choice([-1.0, 1.0], n)
              * 10.0 ** rng.uniform(-3, 3, n)).astype(dtype)
    cases = [Case(v, random_cuts(rng, n), as_float=kind == "float32")
             for v in (normal, spread)]
    adds = WINDOW_ADDS[kind]
    for flushes, rebasings in window_moves(program, tmp_path, cases):
        assert rebasings <= 2
        assert flushes + rebasings >= n // adds


@pytest.mark.parametrize("kind", list(KINDS))
def test_window_zeros(program, tmp_path, kind):
    # Zeros of either sign neither count as additions nor place or
    # re-base the window; zeros alone leave it empty and sum to +0.0.
    as_float = kind == "float32"
    cases = [Case([1.0, 0.0, -0.0] * 300, as_float=as_float),
             Case([0.0, -0.0] * 10, as_float=as_float),
             Case([-0.0] * 5 + [1.5, -0.0, 2.0 ** -60], as_float=as_float)]
    answers = check(program, tmp_path, cases)
    ones = 1 if kind == "float32" else 0
    assert [moves for _, _, moves in answers] == [(ones, 1), (0, 0), (0, 2)]
    assert answers[1][1] == [[(0, False)] * 4] * len(WAYS)


def test_window_threads(program, tmp_path):
    # One sum of wide-ranged doubles, and one of floats, through 1 to
    # 5000 threads (more threads than values: empty windows): identical
    # bits, the exact sum's.
    rng = np.random.default_rng([SEED, 18])
    values = rng.choice([-1.0, 1.0], 2000) * 10.0 ** rng.uniform(-300, 300,
                                                                  2000)
    floats = (rng.standard_normal(2000)
              * 2.0 ** rng.integers(-140, 120, 2000)).astype(np.float32)
    cases = [Case(v, as_float=as_float, threads=t)
             for v, as_float in ((values, False), (floats, True))
             for t in (1, 2, 3, 7, 32, 33, 256, 1999, 5000)]
    answers = check(program, tmp_path, cases)
    assert len({str(ways) for _, ways, _ in answers[:9]}) == 1
    assert len({str(ways) for _, ways, _ in answers[9:]}) == 1


def test_headers_compile_as_cpp17(tmp_path):
    # kulisch.h and window.h are C99 and C++17 (nvcc compiles them as
    # the latter): the C++ compiler takes both, warnings as errors.
    compiler = shutil.which("c++") or shutil.which("g++")
    assert compiler, "no C++ compiler (nvcc needs one too)"
    source = tmp_path / "headers.cpp"
    source.write_text('#include "exact/window.h"\n'
                      "int main() { cr_window32 w; cr_window32_clear(&w);"
                      " return (int)w.count; }\n")
    built = subprocess.run(
        [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror",
         "-fsyntax-only", *INCLUDES, str(source)],
        capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


def means(program, tmp_path, cases) -> list[list[tuple[int, bool]]]:
    """The program's means: for each (count, values), a (bits, overflow)
    per format."""
    answers = []
    for line in run(program, tmp_path, [
            f"q {count} {len(values)} {' '.join(map(float.hex, values))}"
            for count, values in cases]):
        fields = line.split()
        assert len(fields) == 8, line
        answers.append([(int(fields[k], 16), bool(int(fields[k + 1])))
                        for k in range(0, 8, 2)])
    assert len(answers) == len(cases)
    return answers


def test_mean_is_the_exact_quotient_rounded_once(program, tmp_path):
    # The exact sum over the count, rounded once: random data, counts of
    # 1 to beyond 2^32 (the 128-bit division), quotients that are ties of
    # each format (to even) or a hair beside one, and quotients below the
    # least float64 subnormal (a half and more of it rounds up).
    rng = np.random.default_rng([SEED, 20])
    cases = []
    for n in (1, 2, 3, 7, 1000):
        values = list(rng.standard_normal(n) * 10.0 ** rng.integers(-300,
                                                                    300, n))
        for count in (n, 3, 10 ** 6 + 1, 2 ** 32 - 1, 2 ** 32 + 15,
                      2 ** 63 - 25):
            cases.append((count, values))
    for fmt in FORMATS:
        for bits, tie in ties(rng, fmt, 10):
            for count in (3, 2 ** 33 + 1):
                for hair in (0, 1, -1):
                    q = tie * count + hair * TINIEST
                    if abs(q) < DBL_MAX * 2 ** 40:
                        cases.append((count, doubles_summing_to(q, rng, 1)))
    tiny = float(TINIEST)
    for k in range(6):
        cases.append((4, [k * tiny]))
        cases.append((2, [k * tiny, -0.0]))
    answers = means(program, tmp_path, cases)
    for (count, values), got in zip(cases, answers):
        quotient = exact_sum(values) / count
        want = [round_exact(quotient, fmt) for fmt in FORMATS]
        assert got == want, (count, values[:4])


def test_mean_of_specials(program, tmp_path):
    answers = means(program, tmp_path, [(2, [1.0, math.nan]),
                                        (5, [math.inf, 1e308]),
                                        (3, [-math.inf, 1.0]),
                                        (2, [math.inf, -math.inf])])
    for got, want in zip(answers, (nan_bits("float64"),
                                   infinity_bits("float64"),
                                   infinity_bits("float64", True),
                                   nan_bits("float64"))):
        assert got[0] == (want, False)
