"""Exhaustive: all 2**32 operand pairs of f16 add/sub/mul .rn against NumPy float16.

NumPy's float16 add/sub/mul are correctly rounded (ties to even, subnormals kept); a NaN result
is compared as the canonical NaN of ptxfp.POLICY (0x7FFF). Runs in chunks of rows of a (all
65,536 values of b per row), over a process pool.

    pytest -m slow tests/test_exhaustive.py -s
    python tests/test_exhaustive.py [--ops add,sub,mul] [--workers N] [--rows R]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

import numpy as np
import pytest

SPELLINGS = {"add": "add.rn.f16", "sub": "sub.rn.f16", "mul": "mul.rn.f16"}
_UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_B = np.arange(1 << 16, dtype=np.uint16)


def _chunk(job):
    """Rows a0 <= a < a1 against every b: (pairs, mismatches, nan, inf, subnormal, examples)."""
    op, a0, a1 = job
    import ptxfp

    a = np.repeat(np.arange(a0, a1, dtype=np.uint16), _B.size)
    b = np.tile(_B, a1 - a0)
    got = ptxfp.execute(SPELLINGS[op], a, b)
    with np.errstate(all="ignore"):
        r = _UFUNC[op](a.view(np.float16), b.view(np.float16))
    want = r.view(np.uint16).copy()
    nan = np.isnan(r)
    want[nan] = ptxfp.POLICY.canonical_nan16
    bad = np.nonzero(got != want)[0]
    mag = want & 0x7FFF
    examples = [(int(a[i]), int(b[i]), int(got[i]), int(want[i])) for i in bad[:4]]
    return (a.size, bad.size, int(nan.sum()), int((mag == 0x7C00).sum()),
            int(((mag > 0) & (mag < 0x0400)).sum()), examples)


def sweep(op, workers=None, rows=256, progress=False):
    """All 2**32 pairs of one operation; a dict of counts and the time taken."""
    workers = workers or os.cpu_count() or 1
    jobs = [(op, a0, min(a0 + rows, 1 << 16)) for a0 in range(0, 1 << 16, rows)]
    totals = dict(pairs=0, mismatches=0, nan=0, inf=0, subnormal=0)
    examples = []
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")      # no fork of a process with Numba threads
    with ctx.Pool(workers) as pool:
        for k, (n, bad, nan, inf, sub, ex) in enumerate(pool.imap_unordered(_chunk, jobs)):
            totals["pairs"] += n
            totals["mismatches"] += bad
            totals["nan"] += nan
            totals["inf"] += inf
            totals["subnormal"] += sub
            examples += ex[: max(0, 8 - len(examples))]
            if progress and (k + 1) % 32 == 0:
                print(f"  {op}: {k + 1}/{len(jobs)} chunks", file=sys.stderr, flush=True)
    totals["seconds"] = time.perf_counter() - t0
    totals["examples"] = examples
    return totals


def summary(op, t):
    line = (f"f16 {SPELLINGS[op]}: {t['pairs']} pairs, {t['mismatches']} mismatches vs NumPy "
            f"float16; results: {t['nan']} NaN (compared as canonical), {t['inf']} infinite, "
            f"{t['subnormal']} subnormal; {t['seconds']:.1f} s")
    for a, b, g, w in t["examples"]:
        line += f"\n  ({a:#06x}, {b:#06x}) -> ptxfp {g:#06x}, numpy {w:#06x}"
    return line


@pytest.mark.slow
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_exhaustive_f16(op):
    t = sweep(op)
    print(summary(op, t))
    assert t["pairs"] == 1 << 32
    assert t["mismatches"] == 0, summary(op, t)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default="add,sub,mul")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--rows", type=int, default=256, help="rows of a per chunk")
    args = p.parse_args(argv)
    import ptxfp
    print(f"ptxfp {ptxfp.__version__}, numpy {np.__version__}, {args.workers or os.cpu_count()} "
          f"workers", flush=True)
    failed = False
    t0 = time.perf_counter()
    for op in args.ops.split(","):
        t = sweep(op, args.workers, args.rows, progress=True)
        print(summary(op, t), flush=True)
        failed |= t["mismatches"] != 0 or t["pairs"] != 1 << 32
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
