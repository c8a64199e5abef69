"""One scalar through ``ptxfp.execute``: Python int bits against typed NumPy scalars
(np.float16, ml_dtypes.bfloat16, np.float32 for the mixed forms), in one process.

    PYTHONPATH=src python benchmarks/bench_scalar.py [--number N] [--repeat R]

Prints microseconds per call (the best of R repeats of N calls) and the typed/int ratio per
form; NumPy's own float16 scalar add in the same process is the floor shown for scale.
"""

from __future__ import annotations

import argparse
import timeit

import ml_dtypes
import numpy as np

import ptxfp

CASES = [
    ("add.rn.f16", (0x3C00, 0x4000), (np.float16(1), np.float16(2))),
    ("fma.rn.bf16", (0x3F82, 0x3FA0, 0x0001),
     tuple(np.uint16(b).view(ml_dtypes.bfloat16) for b in (0x3F82, 0x3FA0, 0x0001))),
    ("fma.rn.f32.bf16", (0x3F80, 0x3F80, 0x3F800000),
     (ml_dtypes.bfloat16(1), ml_dtypes.bfloat16(1), np.float32(1))),
]


def best(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    x, y = np.float16(1), np.float16(2)
    floor = best(lambda: x + y, a.number, a.repeat)
    print(f"numpy float16 scalar add (floor): {floor:.2f} us")
    for spelling, bits, typed in CASES:
        ex = ptxfp.execute
        ex(spelling, *bits), ex(spelling, *typed)          # compile, cache
        ti = best(lambda: ex(spelling, *bits), a.number, a.repeat)
        tt = best(lambda: ex(spelling, *typed), a.number, a.repeat)
        print(f"{spelling:<18} int {ti:6.2f} us   typed {tt:6.2f} us   typed/int {tt / ti:4.2f}")


if __name__ == "__main__":
    main()
