"""Exhaustive: all 2**32 operand pairs of f16 add/sub/mul .rn against NumPy float16.

NumPy's float16 add/sub/mul are correctly rounded (ties to even, subnormals kept); a NaN result
is compared as the canonical NaN of ptxfp.POLICY (0x7FFF). Runs in chunks of rows of a (all
65,536 values of b per row), over a process pool.

``--fast-vs-reference`` runs the differential sweep instead: all 2**32 pairs of every
two-operand 16-bit scalar form (add/sub/mul on .f16 and .bf16, with .ftz/.sat) through the
binary32 fast lane (kernels._build32) and the float64 reference lane (kernels._build), bit for
bit; the forms with .ftz or .sat once more under the flipped policy (DIFF_FLIP).

``--fma-random N`` runs the random differential sweep of the forms no exhaustive sweep can
cover (three operands, or an f32 operand): N operand triples (default 2**28) of every scalar
fma form on .f16/.bf16 and every mixed .f32.f16/.f32.bf16 add/sub/fma form through both lanes,
in chunks (uniform bits mixed with targeted families: exponent gaps, cancellation, ties, the
edges of the result format and of binary32 for bf16 products, special values; see
random_triples), seeded per form and chunk; the forms with .ftz/.sat/.relu/.oob once more under
RANDOM_FLIP.

    pytest -m slow tests/test_exhaustive.py -s
    python tests/test_exhaustive.py [--ops add,sub,mul] [--workers N] [--rows R]
    python tests/test_exhaustive.py --fast-vs-reference [--forms add.rn.f16,...] [--workers N]
    python tests/test_exhaustive.py --fma-random 2^28 [--forms fma.rn.f16,...] [--workers N]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
import zlib

import numpy as np
import pytest
from numba import njit

from ptxfp.isa import canonical_spellings
from ptxfp.isa.spelling import parse

import vectors

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
    want[nan] = ptxfp.POLICY.canonical_nan_f16
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
                 canonical_nan_f16=0x7E00, canonical_nan_bf16=0x7FC0)


def diff_forms():
    """(spelling, flipped) of every canonical two-operand 16-bit scalar form (no x2, no mixed
    .f32), then again flipped=True for those with .ftz or .sat."""
    forms = []
    for s in canonical_spellings():
        ins = parse(s)
        if ins.opcode in ("add", "sub", "mul") and ins.lanes == 1 and not ins.mixed \
                and ins.lane_format != "f32":
            forms.append((s, False))
    return forms + [(s, True) for s, _ in forms if parse(s).ftz or parse(s).sat]


def diff_label(spelling, flipped):
    return spelling + (" (flipped policy)" if flipped else "")


_diff_kernels = {}   # per worker process: (spelling, flipped) -> (fast kernel, reference kernel)
_diff_buffers = {}   # per worker process: rows -> (a, b, fast out, reference out, neq)


def _diff_chunk(job):
    """Rows a0 <= a < a1 against every b, both lanes: (pairs, mismatches, examples)."""
    spelling, flipped, a0, a1 = job
    from ptxfp import policy
    from ptxfp.ops import kernels
    from ptxfp.ops.arith import kernel_spec as _spec

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
    from ptxfp.ops import kernels
    if not (kernels.X86 and kernels.HAVE_F16C):
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


# --- Fast lane against reference lane, random (fma and the mixed .f32 forms) --------------------

#: Triples per form of the random sweep (``--fma-random N``), and per chunk of work.
RANDOM_N = 1 << 28
RANDOM_CHUNK = 1 << 22

#: The policy the forms with .ftz, .sat, .relu or .oob are swept under a second time: every
#: policy field these forms read, flipped.
RANDOM_FLIP = dict(DIFF_FLIP, relu_minus_zero_to_plus=False, canonical_nan_f32=0x7FC00000,
                   oob_ignores_sign=False, oob_tests_c=True)


def random_forms():
    """(spelling, flipped) of every canonical form the exhaustive sweep cannot cover: the
    scalar fma forms on .f16/.bf16 (the x2 spellings run the same scalar lane kernel) and every
    mixed .f32.f16/.f32.bf16 add/sub/fma form; then again flipped=True for those with .ftz,
    .sat, .relu or .oob."""
    forms = []
    for s in canonical_spellings():
        ins = parse(s)
        if ins.mixed or (ins.opcode == "fma" and ins.lanes == 1 and ins.lane_format != "f32"):
            forms.append((s, False))
    flip = [(s, True) for s, _ in forms
            if any(getattr(parse(s), m) for m in ("ftz", "sat", "relu", "oob"))]
    return forms + flip


# The operand generator.  Every triple gets three random 64-bit words from the form's NumPy
# Generator; the Numba function below turns them into operands (the families differ only in
# how they read those bits).  It is still most of the sweep's time, about 20 ns a triple
# against 1-2 ns for both kernels (NumPy array expressions took about 75 ns).  A format is
# (W, EB, FB): storage width, exponent bits, fraction bits.  Exponents E are unbiased.

#: Families, by the top four bits of the third word (sixteenths of the triples); a family
#: holds for a run of _RUN triples (its switch then predicts well), runs of every family mix in
#: every block of the kernels.
FAMILIES = ("uniform",) * 2 + ("gap",) * 3 + ("cancel",) * 3 + ("ties",) * 2 + \
    ("range edges",) * 2 + ("result edges",) * 2 + ("specials",) * 2
_FAMILY_CODE = {f: i for i, f in enumerate(dict.fromkeys(FAMILIES))}
_FAMILY_OF = np.array([_FAMILY_CODE[f] for f in FAMILIES], np.int64)
#: Triples that share one set of cluster centres (_fill_triples).
_CENTRE_BLOCK = 1 << 12
#: 2**k at _POW2[k + 1074], every k of float64 (an exact scaling, cheaper than math.ldexp).
_POW2 = np.ldexp(1.0, np.arange(-1074, 1024))
#: Sums of bf16 exponent fields whose products are near binary32's smallest normal (128), in
#: its subnormals (116), below them (105) and near its overflow (381).
_PRODUCT_EDGES = np.array([105, 116, 128, 381])
#: Triples per run of one family.
_RUN = 64


@njit(cache=True)
def _bias(EB):
    return (1 << (EB - 1)) - 1


@njit(cache=True)
def _frac(r, FB):
    """A fraction field from the low 3 + FB bits of r: half of them uniform, the rest 0, 1,
    all ones or a half (without a branch: random data would mispredict it)."""
    mask = (1 << FB) - 1
    lo, hi, keep = r & 1, -(r >> 1 & 1), -(r >> 2 & 1)     # keep: all ones or zero
    pattern = (hi & (mask ^ (-lo & (mask ^ (1 << (FB - 1)))))) | (~hi & lo)
    return (r >> 3 & mask & keep) | (pattern & ~keep)


@njit(cache=True)
def _compose(sign, E, frac, W, EB, FB):
    """Bits of sign, exponent E (its field clipped to [0, max]: 0 is a subnormal or zero) and
    fraction field frac."""
    field = min(max(E + _bias(EB), 0), (1 << EB) - 2)
    return (sign << (W - 1)) | (field << FB) | frac


@njit(cache=True)
def _random_value(r, E, W, EB, FB):
    """Bits with exponent E, sign and fraction from the low 4 + FB bits of r."""
    return _compose(r & 1, E, _frac(r >> 1, FB), W, EB, FB)


@njit(cache=True)
def _value(bits, W, EB, FB):
    """The float64 value of finite bits (exact)."""
    field = (bits >> FB) & ((1 << EB) - 1)
    frac = bits & ((1 << FB) - 1)
    if field == 0:
        x = float(frac) * _POW2[1 - _bias(EB) - FB + 1074]
    else:
        x = float(frac + (1 << FB)) * _POW2[field - _bias(EB) - FB + 1074]
    return -x if (bits >> (W - 1)) & 1 else x


@njit(cache=True)
def _nearest(x, k, W, EB, FB):
    """Bits of the format value nearest to float64 x (ties either way: operands are only
    constructions), then moved by k units in the last place, staying finite (vectors.nudge)."""
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    ax = abs(x)
    inf = ((1 << EB) - 1) << FB
    if ax == 0.0:
        mag = 0
    elif ax == math.inf or ax != ax:
        mag = inf
    else:
        E = (np.float64(ax).view(np.int64) >> 52) - 1023   # binade (below 2**-1022: E < emin)
        emin = 1 - _bias(EB)
        if E < emin:
            mag = int(round(ax * _POW2[FB - emin + 1074]))
        else:
            mag = ((E + _bias(EB) - 1) << FB) + int(round(ax * _POW2[FB - E + 1074]))
        mag = min(mag, inf)
    mag = min(max(mag + k, 0), inf - 1)
    return (sign << (W - 1)) | mag


@njit(cache=True)
def _below(r, n):
    """A number in [0, n) from the low 16 bits of r (nearly uniform for small n; no division,
    which costs more than the rest of a triple)."""
    return ((r & 0xFFFF) * n) >> 16


@njit(cache=True)
def _k(r, n):
    """A unit count in [-n, n] from the low 16 bits of r."""
    return _below(r, 2 * n + 1) - n


@njit(cache=True)
def _clustered(w0, centres, blk, LE, LF):
    """a and b (bits 0-31 of w0) with exponents within 2 of the centres of block blk (bits
    32-41): (a, b, Ea, Eb)."""
    Ea = centres[blk, (w0 >> 32) & 3] + ((w0 >> 34) & 3) + ((w0 >> 36) & 1) - 2
    Eb = centres[blk, (w0 >> 37) & 3] + ((w0 >> 39) & 3) + ((w0 >> 41) & 1) - 2
    return (_random_value(w0, Ea, 16, LE, LF), _random_value(w0 >> 16, Eb, 16, LE, LF), Ea, Eb)


@njit(cache=True)
def _fill_triples(raw, centres, spec_l, spec_c, a, b, c, LE, LF, CW, CE, CF, FMA, SUB, MIXED):
    """Fill a, b, c (lane format (16, LE, LF), c format (CW, CE, CF)) from raw (m x 3 words).

    uniform: uniform bits.
    gap: a and b clustered (exponents within 2 of a few centres, 4 per block of
      _CENTRE_BLOCK triples, near each other); c at an exponent gap d from the product (from a
      for add/sub): mostly |d| <= p + 4, some far (sticky bits).
    cancel: clustered a, b; c = -(a*b) (add: -a, sub: a) rounded to c's format, moved by up
      to 4 units (cancellation to zero and to a few units).
    ties: non-mixed fma: products exactly halfway between two neighbours of the lane format
      (an odd significand of p + 1 bits, as the product of odd factors of wa and wb bits), or
      a quarter off, or exact; c zero, a tiny subnormal, or tiny at a gap below the product
      (the double-rounding pattern).  Other forms: c at the gaps around +-p from the product
      or a, where a sum lands on a tie of binary32.
    range edges: bf16 lanes: fma products near binary32's smallest normal, its subnormals and
      below, and its overflow (exponent fields of a and b summing near 128, 116, 105, 381,
      and within 30 of them); c uniform, tiny, -(a*b) moved by up to 3 units, or near the
      largest finite value with the product's sign (sums overflowing binary32); mixed bf16
      add/sub: a and c both near the top of the range or both tiny.  f16 lanes: result edges.
    result edges: results near the result format's smallest normal, half and a quarter unit
      below it (tiny before rounding, not after: .ftz tininess), half its smallest subnormal
      and that subnormal, the largest finite value and the overflow threshold T: fma with b
      solved for a*b = T (moved by up to 3 units) and c zero or a tiny subnormal, or a*b
      within a factor 2 of T and c solved for a*b + c = T; add/sub with a near T and c solved
      for a +- c = T.
    specials: each operand a special or boundary value (vectors.specials: +-0, the extreme
      subnormals and normals, 1 and its neighbours, +-inf, NaNs including 0x7FF7/0xFFF7) half
      of the time, else uniform bits.
    """
    LB, CB = _bias(LE), _bias(CE)
    p = CF + 1                                  # precision of c and of the result
    cmask = (1 << CW) - 1
    cmax = (((1 << CE) - 1) << CF) - 1          # largest finite magnitude of c's format
    big = _value(cmax, CW, CE, CF)
    tiny = math.ldexp(1.0, 1 - CB)              # the smallest normal
    edges = np.array([tiny, tiny * (1 - math.ldexp(1.0, -p)), tiny * (1 - math.ldexp(1.0, -p - 1)),
                      math.ldexp(tiny, -p), math.ldexp(tiny, 1 - p), big,
                      big + math.ldexp(1.0, CB - p)])
    for i in range(a.size):
        w0, w1, w2 = raw[i, 0], raw[i, 1], raw[i, 2]
        fam = _FAMILY_OF[(raw[i - i % _RUN, 2] >> 60) & 15]
        x = y = z = 0
        if fam == 0:                                                        # uniform
            x, y, z = w0 & 0xFFFF, (w0 >> 16) & 0xFFFF, w1 & cmask
        elif fam == 1 or (fam == 3 and (MIXED or not FMA)):                 # gap
            x, y, Ea, Eb = _clustered(w0, centres, i // _CENTRE_BLOCK, LE, LF)
            if fam == 3:
                d = (w2 & 3) + (p - 2 if w2 & 4 else -p - 1)     # -p-1..-p+2, p-2..p+1
            elif (w2 >> 8) & 7 == 0:
                d = (p + 4 + _below(w2 >> 20, 2 * p + 26)) * (1 - 2 * (w2 >> 19 & 1))
            else:
                d = _below(w2 >> 36, 2 * p + 9) - p - 4
            z = _random_value(w1, (Ea + Eb if FMA else Ea) + d, CW, CE, CF)
        elif fam == 2:                                                      # cancel
            x, y, Ea, Eb = _clustered(w0, centres, i // _CENTRE_BLOCK, LE, LF)
            X = _value(x, 16, LE, LF)
            t = -X * _value(y, 16, LE, LF) if FMA else (X if SUB else -X)
            z = _nearest(t, _k(w1, 4), CW, CE, CF)
        elif fam == 3:                                                      # ties
            q = LF + 1
            wa = 1 + _below(w2, q)
            wb = max(min(q + 1 - wa + (w2 >> 16 & 1), q), 1)
            fa = ((1 << (wa - 1)) | (w0 >> 1 & ((1 << (wa - 1)) - 1)) | 1) << (q - wa)
            fb = ((1 << (wb - 1)) | (w0 >> 17 & ((1 << (wb - 1)) - 1)) | 1) << (q - wb)
            half = LB // 2
            Ea = _below(w0 >> 32, 2 * half + 1) - half
            Eb = _below(w0 >> 48, 2 * half + 1) - half - (w0 >> 27 & 1) * (q + 2)
            x = _compose(w0 & 1, Ea, fa - (1 << LF), 16, LE, LF)
            y = _compose(w0 >> 16 & 1, Eb, fb - (1 << LF), 16, LE, LF)
            if (w2 >> 17) & 3 < 2:
                z = ((w1 & 1) << (CW - 1)) | (w1 >> 1 & 3)
            else:
                z = _random_value(w1, Ea + Eb - q - (w1 >> 40 & 31), CW, CE, CF)
        elif fam == 4 and LE == 8:                                          # range edges
            if not FMA:
                top = w2 & 1
                x = _random_value(w0, LB - _below(w0 >> 32, 3) if top else -LB, 16, LE, LF)
                z = _random_value(w1, CB - _below(w1 >> 40, 3) if top
                                  else -CB + _below(w1 >> 40, 3), CW, CE, CF)
            else:
                T = _PRODUCT_EDGES[w2 & 3] + (w2 >> 2 & 7) - 4
                if (w2 >> 5) & 3 == 0:
                    T += (w2 >> 7 & 63) - 30
                lo, hi = max(1, T - 254), min(max(T - 1, 1), 254)
                ea = lo + _below(w0 >> 32, hi - lo + 1)
                eb = min(max(T - ea, 0), 254)
                x = _random_value(w0, ea - LB, 16, LE, LF)
                y = _random_value(w0 >> 16, eb - LB, 16, LE, LF)
                P = _value(x, 16, LE, LF) * _value(y, 16, LE, LF)
                kind = (w2 >> 13) & 3
                if kind == 0:
                    z = w1 & cmask
                elif kind == 1:
                    z = _random_value(w1, -CB, CW, CE, CF)
                elif kind == 2:
                    z = _nearest(-P, _k(w1 >> 40, 3), CW, CE, CF)
                else:
                    z = ((1 << (CW - 1)) if P < 0 else 0) | (cmax - (w1 >> 40 & 3))
        elif fam == 4 or fam == 5:                                          # result edges
            Tf = edges[_below(w2 >> 32, edges.size)]
            Tf = -Tf if (w2 >> 8) & 1 else Tf
            ET = math.frexp(Tf)[1] - 1
            if FMA:
                Ea = min(max(_below(w0 >> 32, 2 * LB) - LB + 1, ET - LB), ET + LB - 1)
            else:
                Ea = ET + _below(w0 >> 32, 5) - 3
            x = _random_value(w0, Ea, 16, LE, LF)
            X = _value(x, 16, LE, LF)
            if not FMA:
                z = _nearest(X - Tf if SUB else Tf - X, _k(w1 >> 40, 3), CW, CE, CF)
            else:
                exact = (w2 >> 9) & 1
                f = 1.0 if exact else 0.5 + 1.5 * ((w2 >> 10) & 0xFFFF) / 65536.0
                y = _nearest(Tf / X * f if X != 0.0 else math.inf, _k(w0 >> 48, 3), 16, LE, LF)
                if exact:
                    z = ((w1 & 1) << (CW - 1)) | (w1 >> 1 & 3)
                else:
                    t = Tf - X * _value(y, 16, LE, LF)
                    z = _nearest(t, _k(w1 >> 44, 2), CW, CE, CF)
        else:                                                               # specials
            x = spec_l[_below(w0 >> 8, spec_l.size)] if w0 & 1 else w0 >> 32 & 0xFFFF
            y = spec_l[_below(w2 >> 8, spec_l.size)] if w2 & 1 else w2 >> 24 & 0xFFFF
            z = spec_c[_below(w1 >> 8, spec_c.size)] if w1 & 1 else w1 >> 24 & cmask
        a[i] = x
        b[i] = x if not FMA else y
        c[i] = z


def random_triples(ins, rng, a, b, c):
    """Fill a, b, c (one form's kernel operands; for the mixed add/sub b is a copy of a) with
    random triples drawn from rng: the families of _fill_triples, interleaved."""
    lf = vectors.FORMATS[ins.lane_format]
    cf = vectors.F32 if ins.mixed else lf
    fma = ins.opcode == "fma"
    m = a.size
    half = lf.bias // 2 if fma else lf.bias - 1
    centres = rng.integers(-half, half + 1, (m // _CENTRE_BLOCK + 1, 4))
    spec_l, spec_c = (vectors.specials(f).astype(np.int64) for f in (lf, cf))
    # The random words a block at a time: a block's array is small enough for malloc to reuse
    # the last one's memory (a chunk's worth would be fresh pages every time).
    for s in range(0, m, _CENTRE_BLOCK * 8):
        e = min(s + _CENTRE_BLOCK * 8, m)
        raw = rng.integers(0, 1 << 64, (e - s, 3), dtype=np.uint64).view(np.int64)
        _fill_triples(raw, centres[s // _CENTRE_BLOCK:], spec_l, spec_c, a[s:e], b[s:e],
                      c[s:e], lf.ebits, lf.fbits, cf.width, cf.ebits, cf.fbits, fma,
                      ins.opcode == "sub", bool(ins.mixed))


def random_label(spelling, flipped):
    return spelling + (" (flipped policy)" if flipped else "")


_random_kernels = {}   # per worker process: (spelling, flipped) -> (ins, fast, reference)
_random_buffers = {}   # per worker process: (m, mixed) -> (a, b, c, fast out, reference out)


def _random_chunk(job):
    """Chunk k (m triples) of one form through both lanes:
    (form, triples, mismatches, examples, seconds)."""
    spelling, flipped, k, m = job
    t0 = time.perf_counter()
    from ptxfp import policy
    from ptxfp.ops import kernels
    from ptxfp.ops.arith import kernel_spec as _spec

    ks = _random_kernels.get((spelling, flipped))
    if ks is None:
        ins = parse(spelling)
        with policy.using(**(RANDOM_FLIP if flipped else {})) as pol:
            spec = _spec(ins, pol)
        if not kernels.fast_ok(spec):
            raise RuntimeError(f"{spelling}: no fast lane on this machine (x86 with F16C)")
        ks = _random_kernels[spelling, flipped] = (ins, kernels._build32(spec),
                                                   kernels._build(spec))
    ins, k32, k64 = ks
    bufs = _random_buffers.get((m, ins.mixed))
    if bufs is None:
        wide = np.uint32 if ins.mixed else np.uint16
        bufs = _random_buffers[m, ins.mixed] = (np.empty(m, np.uint16), np.empty(m, np.uint16),
                                                np.empty(m, wide), np.empty(m, wide),
                                                np.empty(m, wide))
    a, b, c, fast, ref = bufs
    rng = np.random.default_rng((zlib.crc32(random_label(spelling, flipped).encode()), k))
    random_triples(ins, rng, a, b, c)
    k32(a, b, c, fast, 0, m)
    k64(a, b, c, ref, 0, m)
    bad = np.flatnonzero(fast != ref)
    examples = {(int(a[i]), int(b[i]), int(c[i]), int(fast[i]), int(ref[i])) for i in bad[:64]}
    return (spelling, flipped), m, bad.size, sorted(examples)[:4], time.perf_counter() - t0


def random_sweep(forms, n=RANDOM_N, chunk=RANDOM_CHUNK, workers=None, pool=None, report=None):
    """n random triples of each (spelling, flipped) through both lanes, the chunks of all forms
    on one process pool (one of its own when ``pool`` is None).  Returns {form: dict of counts,
    seconds (worker time: generating the operands and running both lanes) and examples};
    ``report(form, counts)`` is called as each form completes."""
    if pool is None:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers or os.cpu_count() or 1) as own:
            return random_sweep(forms, n, chunk, pool=own, report=report)
    jobs = [(s, f, k, min(chunk, n - i)) for s, f in forms
            for k, i in enumerate(range(0, n, chunk))]
    left = {form: -(-n // chunk) for form in forms}
    out = {form: dict(triples=0, mismatches=0, seconds=0.0, examples=[]) for form in forms}
    for form, m, bad, ex, sec in pool.imap_unordered(_random_chunk, jobs):
        t = out[form]
        t["triples"] += m
        t["mismatches"] += bad
        t["seconds"] += sec
        t["examples"] = sorted(set(t["examples"] + ex))[:8]
        left[form] -= 1
        if not left[form] and report:
            report(form, t)
    return out


def random_summary(spelling, flipped, t):
    ins = parse(spelling)
    line = (f"{random_label(spelling, flipped)}: {t['triples']} triples, {t['mismatches']} "
            f"mismatches fast lane vs reference lane; {t['seconds']:.1f} s")
    w = 10 if ins.mixed else 6
    for a, b, c, f, r in t["examples"]:
        ops = f"{a:#06x}, {c:#0{w}x}" if ins.mixed and ins.opcode != "fma" else \
            f"{a:#06x}, {b:#06x}, {c:#0{w}x}"
        line += f"\n  ({ops}) -> fast {f:#0{w}x}, reference {r:#0{w}x}"
    return line


@pytest.mark.slow
@pytest.mark.parametrize("spelling,flipped", random_forms(),
                         ids=lambda v: {True: "flipped", False: "default"}.get(v, v))
def test_random_fast_vs_reference(spelling, flipped):
    from ptxfp.ops import kernels
    if not (kernels.X86 and kernels.HAVE_F16C):
        pytest.skip("the fast lane needs x86 with F16C")
    t = random_sweep([(spelling, flipped)])[spelling, flipped]
    print(random_summary(spelling, flipped, t))
    assert t["triples"] == RANDOM_N
    assert t["mismatches"] == 0, random_summary(spelling, flipped, t)


def main_random(args):
    forms = random_forms()
    if args.forms:
        wanted = args.forms.split(",")
        forms = [f for f in forms if f[0] in wanted]
    t0 = time.perf_counter()

    def report(form, t):
        print(random_summary(*form, t), flush=True)

    out = random_sweep(forms, args.fma_random, args.chunk, args.workers, report=report)
    triples = sum(t["triples"] for t in out.values())
    bad = sum(t["mismatches"] for t in out.values())
    work = sum(t["seconds"] for t in out.values())
    print(f"{len(forms)} sweeps, {triples} triples, {bad} mismatches; worker time {work:.1f} s, "
          f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 1 if bad or triples != len(forms) * args.fma_random else 0


def _count(text):
    """A count given as 2^28, 2**28 or 268435456."""
    for sep in ("^", "**"):
        if sep in text:
            base, exp = text.split(sep)
            return int(base) ** int(exp)
    return int(text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default="add,sub,mul")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--rows", type=int, default=256, help="rows of a per chunk")
    p.add_argument("--fast-vs-reference", action="store_true",
                   help="instead: every two-operand 16-bit scalar form, fast lane vs reference")
    p.add_argument("--fma-random", type=_count, default=None, metavar="N",
                   help="instead: N random triples (2^28, 2**28 or a number) of every fma and "
                        "mixed .f32 form, fast lane vs reference")
    p.add_argument("--chunk", type=_count, default=RANDOM_CHUNK,
                   help="with --fma-random: triples per chunk")
    p.add_argument("--forms", default="",
                   help="with --fast-vs-reference or --fma-random: only these spellings "
                        "(comma-separated)")
    args = p.parse_args(argv)
    import ptxfp
    print(f"ptxfp {ptxfp.__version__}, numpy {np.__version__}, {args.workers or os.cpu_count()} "
          f"workers", flush=True)
    if args.fast_vs_reference:
        return main_diff(args)
    if args.fma_random is not None:
        return main_random(args)
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
