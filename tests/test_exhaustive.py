"""Exhaustive: all 2**32 operand pairs of f16 add/sub/mul .rn against NumPy float16.

NumPy's float16 add/sub/mul are correctly rounded (ties to even, subnormals kept); a NaN result
is compared as the canonical NaN of ptxfp.POLICY (0x7FFF). Runs in chunks of rows of a (all
65,536 values of b per row), over a process pool.

``--fast-vs-reference`` runs the differential sweep instead: all 2**32 pairs of every
two-operand 16-bit scalar form (add/sub/mul on .f16 and .bf16, with .ftz/.sat) through the
binary32 fast lane (kernels._build32) and the float64 reference lane (kernels._build), bit for
bit; the forms with .ftz or .sat once more under the flipped policy (DIFF_FLIP).

    pytest -m slow tests/test_exhaustive.py -s
    python tests/test_exhaustive.py [--ops add,sub,mul] [--workers N] [--rows R]
    python tests/test_exhaustive.py --fast-vs-reference [--forms add.rn.f16,...] [--workers N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

import numpy as np
import pytest

from ptxfp.isa import canonical_spellings
from ptxfp.spelling import parse

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


# --- Fast lane against reference lane ----------------------------------------------------------

#: The policy flips the .ftz/.sat forms are swept under a second time (every field the
#: two-operand 16-bit forms read: tininess of .ftz, -0 under .sat, the canonical NaN).
DIFF_FLIP = dict(ftz_tininess="before_rounding", sat_minus_zero_to_plus=False,
                 canonical_nan16=0x7E00)


def diff_forms():
    """(spelling, flipped) of every canonical two-operand 16-bit scalar form (no x2, no mixed
    .f32), then again flipped=True for those with .ftz or .sat."""
    forms = []
    for s in canonical_spellings():
        ins = parse(s)
        if ins.opcode in ("add", "sub", "mul") and ins.lanes == 1 and not ins.mixed:
            forms.append((s, False))
    return forms + [(s, True) for s, _ in forms if parse(s).ftz or parse(s).sat]


def diff_label(spelling, flipped):
    return spelling + (" (flipped policy)" if flipped else "")


_diff_kernels = {}   # per worker process: (spelling, flipped) -> (fast kernel, reference kernel)
_diff_buffers = {}   # per worker process: rows -> (a, b, fast out, reference out, neq)


def _diff_chunk(job):
    """Rows a0 <= a < a1 against every b, both lanes: (pairs, mismatches, examples)."""
    spelling, flipped, a0, a1 = job
    from ptxfp import kernels, policy
    from ptxfp.execute import _spec

    ks = _diff_kernels.get((spelling, flipped))
    if ks is None:
        with policy.using(**(DIFF_FLIP if flipped else {})) as pol:
            spec = _spec(parse(spelling), pol)
        if not kernels.fast_ok(spec):
            raise RuntimeError(f"{spelling}: no fast lane on this machine (x86 with F16C)")
        ks = _diff_kernels[spelling, flipped] = (kernels._build32(spec), kernels._build(spec))
    rows = a1 - a0
    bufs = _diff_buffers.get(rows)
    if bufs is None:
        n = rows * _B.size
        bufs = _diff_buffers[rows] = (np.empty(n, np.uint16), np.tile(_B, rows),
                                      np.empty(n, np.uint16), np.empty(n, np.uint16),
                                      np.empty(n // 4, np.bool_))
    a, b, fast, ref, neq = bufs
    a.reshape(rows, _B.size)[:] = np.arange(a0, a1, dtype=np.uint16)[:, None]
    k32, k64 = ks
    k32(a, b, a, fast, 0, a.size)          # two-operand forms: c is a (execute's order)
    k64(a, b, a, ref, 0, a.size)
    # Four lanes per comparison; the lane-by-lane one only where some quadruple differs.
    np.not_equal(fast.view(np.uint64), ref.view(np.uint64), out=neq)
    if not neq.any():
        return a.size, 0, []
    bad = np.nonzero(fast != ref)[0]
    examples = [(int(a[i]), int(b[i]), int(fast[i]), int(ref[i])) for i in bad[:4]]
    return a.size, bad.size, examples


def diff_sweep(spelling, flipped=False, workers=None, rows=256, progress=False, pool=None):
    """All 2**32 pairs of one form through both lanes; a dict of counts and the time taken.
    ``pool``: a process pool to run the chunks on (one of its own when None)."""
    if pool is None:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers or os.cpu_count() or 1) as own:
            return diff_sweep(spelling, flipped, rows=rows, progress=progress, pool=own)
    jobs = [(spelling, flipped, a0, min(a0 + rows, 1 << 16)) for a0 in range(0, 1 << 16, rows)]
    totals = dict(pairs=0, mismatches=0)
    examples = []
    t0 = time.perf_counter()
    for k, (n, bad, ex) in enumerate(pool.imap_unordered(_diff_chunk, jobs)):
        totals["pairs"] += n
        totals["mismatches"] += bad
        examples += ex[: max(0, 8 - len(examples))]
        if progress and (k + 1) % 64 == 0:
            print(f"  {diff_label(spelling, flipped)}: {k + 1}/{len(jobs)} chunks",
                  file=sys.stderr, flush=True)
    totals["seconds"] = time.perf_counter() - t0
    totals["examples"] = sorted(examples)
    return totals


def diff_summary(spelling, flipped, t):
    line = (f"{diff_label(spelling, flipped)}: {t['pairs']} pairs, {t['mismatches']} mismatches "
            f"fast lane vs reference lane; {t['seconds']:.1f} s")
    for a, b, f, r in t["examples"]:
        line += f"\n  ({a:#06x}, {b:#06x}) -> fast {f:#06x}, reference {r:#06x}"
    return line


@pytest.mark.slow
@pytest.mark.parametrize("spelling,flipped", diff_forms(),
                         ids=lambda v: {True: "flipped", False: "default"}.get(v, v))
def test_exhaustive_fast_vs_reference(spelling, flipped):
    from ptxfp import kernels
    if not (kernels._X86 and kernels.HAVE_F16C):
        pytest.skip("the fast lane needs x86 with F16C")
    t = diff_sweep(spelling, flipped)
    print(diff_summary(spelling, flipped, t))
    assert t["pairs"] == 1 << 32
    assert t["mismatches"] == 0, diff_summary(spelling, flipped, t)


def main_diff(args):
    forms = diff_forms()
    if args.forms:
        wanted = args.forms.split(",")
        forms = [f for f in forms if f[0] in wanted]
    failed = False
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.workers or os.cpu_count() or 1) as pool:
        for spelling, flipped in forms:
            t = diff_sweep(spelling, flipped, rows=args.rows, progress=True, pool=pool)
            print(diff_summary(spelling, flipped, t), flush=True)
            failed |= t["mismatches"] != 0 or t["pairs"] != 1 << 32
    print(f"{len(forms)} forms, total {time.perf_counter() - t0:.1f} s", flush=True)
    return 1 if failed else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default="add,sub,mul")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--rows", type=int, default=256, help="rows of a per chunk")
    p.add_argument("--fast-vs-reference", action="store_true",
                   help="instead: every two-operand 16-bit scalar form, fast lane vs reference")
    p.add_argument("--forms", default="",
                   help="with --fast-vs-reference: only these spellings (comma-separated)")
    args = p.parse_args(argv)
    import ptxfp
    print(f"ptxfp {ptxfp.__version__}, numpy {np.__version__}, {args.workers or os.cpu_count()} "
          f"workers", flush=True)
    if args.fast_vs_reference:
        return main_diff(args)
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
