"""``python -m cudareduce``: a quick check of this GPU and build: every
method's sum of one random array, beside NumPy's sum in the widest type of
its kind.  ``python -m cudareduce --help`` lists the options; the bench
(``python -m cudareduce.bench``) times the methods."""
from __future__ import annotations

import argparse
import sys

import numpy as np

import cudareduce
from cudareduce import _cudareduce

#: NumPy's reference sums each kind in its widest type.
_WIDEST = {"b": np.int64, "i": np.int64, "u": np.uint64, "f": np.float64,
           "V": np.float64, "c": np.complex128}


def _count(text: str) -> int:
    """An element count: an int >= 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} elements: need >= 0")
    return value


def _threads(text: str) -> int:
    """Threads per block: a power of two from 64 to 1024."""
    value = int(text)
    if value < 64 or value > 1024 or value & (value - 1):
        raise argparse.ArgumentTypeError(
            f"{value}: need a power of two from 64 to 1024")
    return value


def random_array(n: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """n random elements of `dtype` (one of ``_cudareduce.DTYPES``)."""
    if dtype == "bool":
        return rng.random(n) < 0.5
    kind = np.dtype(dtype).kind if dtype != "bfloat16" else "f"
    if kind in "iu":
        return rng.integers(0 if kind == "u" else -100, 100, n).astype(dtype)
    values = rng.random(n)
    if kind == "c":
        values = values + 1j * rng.random(n)
    if dtype == "bfloat16":
        import ml_dtypes  # noqa: PLC0415 - only for this dtype
        return values.astype(ml_dtypes.bfloat16)
    return values.astype(dtype)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cudareduce",
        description="Check this GPU and build: sum one random array with "
                    "every method (the ladder's steps, fast, cub) and show "
                    "NumPy's sum beside them.")
    parser.add_argument("--n", type=_count, default=1 << 22,
                        help="number of elements (default 2^22)")
    parser.add_argument("--dtype", default="float32",
                        choices=_cudareduce.DTYPES,
                        help="element type (default float32; bfloat16 "
                             "needs ml_dtypes)")
    parser.add_argument("--threads", type=_threads, default=None,
                        help="threads per block (default: each method's "
                             "own)")
    args = parser.parse_args(argv)
    try:
        a = random_array(args.n, args.dtype, np.random.default_rng())
    except ImportError as error:
        parser.error(f"--dtype {args.dtype}: {error}")
    kind = a.dtype.kind     # "V" for ml_dtypes' bfloat16
    reference = np.sum(a.astype(_WIDEST[kind]))
    print(f"{args.n} random {args.dtype} elements, threads="
          f"{args.threads or 'each method’s own'}; NumPy's sum in "
          f"{np.dtype(_WIDEST[kind]).name}: {reference!r}")
    for name, description in cudareduce.methods().items():
        try:
            got = repr(cudareduce.sum(a, method=name, threads=args.threads))
        except ValueError as error:
            got = f"refused: {error}"
        except cudareduce.CudaError as error:
            print(f"cudareduce: {error}", file=sys.stderr)
            return 1
        print(f"  {name:26} {got:>28}   {description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
