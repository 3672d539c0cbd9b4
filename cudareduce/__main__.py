"""``python -m cudareduce``: each method's sum of one random array, beside
NumPy's float64 reference."""
from __future__ import annotations

import argparse
import sys

import numpy as np

import cudareduce


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cudareduce",
        description="Sum one random array with every method of the ladder.")
    parser.add_argument("--n", type=int, default=1 << 22,
                        help="number of elements (default 2^22)")
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float64", "int32", "int64"])
    parser.add_argument("--threads", type=int, default=256)
    args = parser.parse_args(argv)

    rng = np.random.default_rng()
    dtype = np.dtype(args.dtype)
    if dtype.kind == "f":
        a = rng.random(args.n, dtype=dtype)
    else:
        a = rng.integers(-1000, 1000, args.n, dtype=dtype)
    reference = np.sum(a, dtype=np.float64 if dtype.kind == "f" else np.int64)
    print(f"{args.n} random {dtype} elements, threads={args.threads}; "
          f"NumPy reference (float64/int64): {reference!r}")
    try:
        for name, description in cudareduce.methods().items():
            got = cudareduce.sum(a, method=name, threads=args.threads)
            print(f"  {name:26} {got!r:>28}   {description}")
    except cudareduce.CudaError as error:
        print(f"cudareduce: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
