"""bf16 fma on inputs that leave binary32's range: the wide lane (``kernels.wide_run``,
docs/semantics.md "Fast lane") against the float64 reference lane and the MPFR oracle.

The kernel runs a block of 1,024 lanes on the plain binary32 sum and, when the block raised the
underflow or overflow flag, on the wide lane (and the blocks after it too).  These tests give
the wide lane inputs aimed at each of its cases (``hard_mix``: product exponent sums at the
edges of binary32's range, tiny products next to near and far addends, subnormal addends, exact
cancellation, specials; ``wide_edges``: results at the edges of binary32's subnormal, normal
and overflow ranges, the addend's exponent at the edges where the binary64 sum becomes inexact
and where the binary32 truncation keeps or drops it, and the old binary32 frame's edges), run
it on every lane whatever the flags say, and run whole arrays through ``execute`` where clean
and flagged blocks alternate.
"""

import dataclasses
import zlib

import numpy as np
import pytest
from numba import njit

import oracle
import ptxfp
import vectors
from ptxfp import policy
from ptxfp.core import _jit
from ptxfp.ops import kernels
from ptxfp.ops.arith import _form

fast_available = kernels.X86 and kernels.HAVE_F16C
needs_fast = pytest.mark.skipif(not fast_available, reason="the fast lane needs x86 with F16C")


@pytest.fixture(autouse=True)
def _bf16_fma_as_spelled():
    """The directed bf16 fma spellings as their names say: these tests hold the kernels of every
    mode to the float64 lane and MPFR; what ptxas 13.0 makes of those spellings (the default policy, a composition of
    other forms, or the .rn kernel) is held to the GPU's answers in test_gpu_recorded.py."""
    with policy.using(bf16_fma_directed="as_spelled"):
        yield

SPELLINGS = ["fma.rn.bf16", "fma.rz.bf16", "fma.rm.bf16", "fma.rp.bf16", "fma.rn.relu.bf16",
             "fma.rn.oob.bf16", "fma.rn.oob.relu.bf16", "fma.rn.bf16x2", "fma.rm.bf16x2",
             "fma.rn.relu.bf16x2"]
SPECIALS = np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x7FF7, 0xFFF7,
                     0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F], np.uint16)


def _bits(rng, fields):
    fields = np.clip(np.asarray(fields), 0, 255)
    frac = rng.integers(0, 128, fields.size)
    frac = np.where(fields == 255, frac & 0x3F, frac)  # mostly inf / quiet NaN at 255
    return ((rng.integers(0, 2, fields.size) << 15) | (fields << 7) | frac).astype(np.uint16)


def hard_mix(rng, n):
    """bf16 fma operand bits (a, b, c) aimed at binary32's range edges: products with exponent
    sums near its subnormal, normal and overflow edges, tiny products next to near and far
    addends, cancellation, specials (written for an earlier scaled lane)."""
    fa = rng.integers(0, 256, n)
    # the exponent sum max(fa, 1) + max(fb, 1) - 254 near each edge, or anywhere
    target = rng.choice([-136, -135, -134, -128, -127, -126, -160, -252, 124, 125, 126, 127, 128,
                         129, 200, 254],
                        n) + rng.integers(-2, 3, n)
    fb = np.where(rng.integers(0, 4, n) == 0, rng.integers(0, 256, n),
                  target + 254 - np.maximum(fa, 1))
    a, b = _bits(rng, fa), _bits(rng, np.maximum(fb, 0))
    kind = rng.integers(0, 6, n)
    fc = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                   [rng.integers(0, 256, n),               # anywhere
                    rng.integers(0, 6, n),                 # subnormal or tiny
                    rng.integers(248, 256, n),             # near overflow, inf, NaN
                    107 + rng.integers(-2, 3, n)],         # near 2**-20 (near/far addend)
                   rng.integers(0, 256, n))
    c = _bits(rng, fc)
    # kind 4, 5: c = -(a*b) rounded to bf16 (cancellation), or nudged from it
    with np.errstate(all="ignore"):
        prod = vectors.to_float(a, vectors.BF16) * vectors.to_float(b, vectors.BF16)
        cancel = vectors.from_float(np.clip(-prod, -3.3e38, 3.3e38), vectors.BF16)
    cancel = vectors.nudge(cancel, np.where(kind == 5, rng.integers(-2, 3, n), 0), vectors.BF16)
    ok = np.isfinite(prod)
    c = np.where((kind >= 4) & ok, cancel, c).astype(np.uint16)
    # sprinkle the specials over every operand
    for x in (a, b, c):
        hit = rng.integers(0, 40, n) == 0
        x[hit] = rng.choice(SPECIALS, int(hit.sum()))
    return a, b, c


def wide_edges(rng, n):
    """bf16 fma operand bits (a, b, c) at the edges of the wide lane's cases: a*b near 2**L
    for L at binary32's subnormal, normal and overflow edges, bf16's subnormal edge and 1, and
    c with its exponent field d away from the product's, or c = -(a*b) rounded to bf16 and
    nudged.  d: where the binary64 sum s = a*b + c turns inexact (a 16-bit product and an
    8-bit addend need more than 53 bits from about d = -45, and from about d = 37 with the
    addend above), where the binary32 truncation of s keeps or drops the smaller term (about
    -24 .. -8 and 8 .. 24), and the edges of the binary32 frame this lane replaced (+-40, 16,
    0)."""
    fa = rng.integers(0, 256, n)
    L = rng.choice([-300, -266, -160, -151, -150, -149, -148, -134, -133, -132, -127, -126,
                    -125, 0, 126, 127, 128, 129, 200], n) + rng.integers(-1, 2, n)
    fb = np.where(rng.integers(0, 8, n) == 0, rng.integers(0, 3, n),      # subnormal b
                  L + 254 - np.maximum(fa, 1))
    fa = np.where(rng.integers(0, 8, n) == 0, rng.integers(0, 3, n), fa)  # subnormal a
    a, b = _bits(rng, fa), _bits(rng, np.maximum(fb, 0))
    fp = np.clip(L + 127, -200, 400)                         # the product's field, unclipped
    d = rng.choice([-80, -60, -54, -53, -52, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39,
                    -38, -32, -25, -24, -23, -16, -9, -8, -1, 0, 1, 8, 9, 15, 16, 17, 23, 24,
                    25, 35, 36, 37, 38, 39, 40, 41, 42, 48, 60, 80], n)
    fc = np.where(rng.integers(0, 10, n) == 0, rng.integers(0, 2, n), fp + d)
    c = _bits(rng, np.clip(fc, 0, 254))
    kind = rng.integers(0, 6, n)
    with np.errstate(all="ignore"):
        prod = vectors.to_float(a, vectors.BF16) * vectors.to_float(b, vectors.BF16)
        cancel = vectors.from_float(np.clip(-prod, -3.3e38, 3.3e38), vectors.BF16)
    cancel = vectors.nudge(cancel, np.where(kind == 5, rng.integers(-2, 3, n), 0), vectors.BF16)
    c = np.where((kind >= 4) & np.isfinite(prod), cancel, c).astype(np.uint16)
    for x in (a, b, c):
        hit = rng.integers(0, 60, n) == 0
        x[hit] = rng.choice(SPECIALS, int(hit.sum()))
    return a, b, c


def _pack(ops, lanes):
    if lanes == 1:
        return ops
    return [(x[0::2].astype(np.uint32) | (x[1::2].astype(np.uint32) << 16)) for x in ops]


def _wide_kernel(spec):
    """A loop running the wide lane on every lane of ``spec`` (lanes=1), as kernel32 runs
    a block it cannot trust to the plain pass."""
    K = kernels.lane_consts(spec)
    wide_run, fpenv_set = kernels.wide_run, _jit.fpenv_set
    CSR = np.int32(kernels.MXCSR_WIDE)
    CHUNK = kernels.WIDE_CHUNK

    @njit
    def run(a, b, c, out):
        env = fpenv_set(CSR)
        wide_run(a, b, c, out, K, np.empty(CHUNK, np.int32))
        fpenv_set(env)
    return run


def _reference(spelling, ops):
    form = _form(spelling)
    spec, _ = form.kernel()
    one = dataclasses.replace(spec, lanes=1)
    exp = np.empty_like(ops[0])
    kernels.run_with(kernels._build(one), spec, ops[0], ops[1], ops[2], exp, exp.size)
    return exp


def _first_difference(spelling, ops, got, exp, what):
    bad = np.nonzero(got != exp)[0]
    if bad.size:
        i = bad[0]
        pytest.fail(f"{spelling}: {bad.size} of {got.size} differ from {what}; first: operands "
                    + ", ".join(hex(int(x[i])) for x in ops)
                    + f" got {int(got[i]):#x} expected {int(exp[i]):#x}")


@needs_fast
@pytest.mark.parametrize("spelling", [s for s in SPELLINGS if "x2" not in s])
def test_wide_lane_on_every_lane_equals_reference(spelling):
    """The wide lane alone (also on lanes the plain sum would take), on the hard mix, its
    edges, uniform bits and normal values, against the float64 lane."""
    rng = np.random.default_rng(zlib.crc32(spelling.encode()))
    n = 30_000
    h = hard_mix(rng, n)
    e = wide_edges(rng, n)
    u = [rng.integers(0, 1 << 16, n).astype(np.uint16) for _ in range(3)]
    g = [vectors.from_float(rng.standard_normal(n), vectors.BF16).astype(np.uint16)
         for _ in range(3)]
    ops = [np.concatenate(x) for x in zip(h, e, u, g)]
    spec = dataclasses.replace(_form(spelling).kernel()[0], lanes=1)
    got = np.empty_like(ops[0])
    _wide_kernel(spec)(ops[0], ops[1], ops[2], got)
    _first_difference(spelling, ops, got, _reference(spelling, ops), "the float64 lane")


@needs_fast
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_execute_on_mixed_blocks_equals_reference(spelling):
    """Whole arrays through execute: runs of clean blocks (normal values), single flagged
    lanes among them, whole flagged stretches (uniform bits, hard mix), so that plain blocks,
    redone blocks and the wide runs after them all occur, against the float64 lane."""
    ins = ptxfp.parse(spelling)
    rng = np.random.default_rng(zlib.crc32(b"blocks" + spelling.encode()))
    parts = []
    for kind in ["normal", "one", "normal", "uniform", "normal", "hard", "normal", "one"] * 2:
        m = int(rng.integers(1, 40)) * 512
        if kind in ("normal", "one"):
            ops = [vectors.from_float(rng.standard_normal(m), vectors.BF16).astype(np.uint16)
                   for _ in range(3)]
            if kind == "one":                  # one lane that overflows binary32
                i = int(rng.integers(0, m))
                ops[0][i], ops[1][i] = 0x7E00 | int(rng.integers(0, 128)), 0x7E10
        elif kind == "uniform":
            ops = [rng.integers(0, 1 << 16, m).astype(np.uint16) for _ in range(3)]
        else:
            ops = list(hard_mix(rng, m))
        parts.append(ops)
    ops = [np.concatenate(x) for x in zip(*parts)]
    ops = _pack(ops, ins.lanes)
    got = ptxfp.execute(spelling, *ops)
    _first_difference(spelling, ops, got, _reference(spelling, ops), "the float64 lane")


@needs_fast
@pytest.mark.parametrize("spelling", ["fma.rn.bf16", "fma.rz.bf16", "fma.rm.bf16",
                                      "fma.rp.bf16", "fma.rn.oob.relu.bf16", "fma.rz.oob.bf16",
                                      "fma.rn.relu.bf16x2", "fma.rp.bf16x2"])
def test_hard_mix_against_oracle(spelling):
    """execute on the hard mix and the wide lane's edges (all of it flagged, so the wide
    lane) against MPFR."""
    ins = ptxfp.parse(spelling)
    rng = np.random.default_rng(zlib.crc32(b"oracle" + spelling.encode()))
    ops = [np.concatenate(x) for x in zip(hard_mix(rng, 4_000), wide_edges(rng, 4_000))]
    ops = _pack(ops, ins.lanes)
    got = ptxfp.execute(spelling, *ops)
    exp = oracle.compute_array(spelling, *ops)
    _first_difference(spelling, ops, got, exp, "the oracle")


@pytest.mark.slow
@needs_fast
@pytest.mark.parametrize("spelling", SPELLINGS[:7])
def test_random_sweep_wide_lane(spelling):
    """The slow sweep: 2**24 uniform random triples, 2**24 triples of normally distributed
    values (the plain binary32 pass, in blocks that raise no flag), 2**24 hard-mix triples and
    2**24 triples at the wide lane's edges per spelling through execute, against the float64
    lane (in pieces of 2**22)."""
    rng = np.random.default_rng(zlib.crc32(b"sweep" + spelling.encode()))
    for piece in range(16):
        m = 1 << 22
        if piece % 4 == 1:
            ops = list(hard_mix(rng, m))
        elif piece % 4 == 3:
            ops = list(wide_edges(rng, m))
        elif piece % 4 == 2:
            ops = [(rng.standard_normal(m).astype(np.float32).view(np.uint32) >> 16)
                   .astype(np.uint16) for _ in range(3)]
        else:
            ops = [rng.integers(0, 1 << 16, m).astype(np.uint16) for _ in range(3)]
        got = ptxfp.execute(spelling, *ops)
        _first_difference(spelling, ops, got, _reference(spelling, ops), "the float64 lane")
