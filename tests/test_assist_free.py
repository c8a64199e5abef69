"""Forms computed so that no binary32 operation underflows inexactly (on this project's Intel
core each such vector costs a microcode assist: docs/performance.md), held to the MPFR oracle.

The mixed fma forms (``fma.rnd{.sat}.f32.f16/bf16``) in binary64 (``kernels.lane32``, its
MIXED branch): the exact product plus c rounded to binary64 and then to binary32, both in the
form's mode, on operands aimed at where two roundings could differ from one and where binary32
arithmetic would meet subnormals:

- near ties: sums that lie on, or within a few units of the last place of, a binary32
  midpoint or a binary32 number (c and a product of half an ulp of c, nudged);
- wide gaps: terms 25 to 160 binades apart, either one the larger, so that the binary64 sum is
  inexact (its last bit then decides nothing, which is what the lane's argument says);
- the bottom: subnormal c, bf16 products below binary32's subnormal range (down to 2**-266)
  next to subnormal and small normal c, exact cancellation to zero in every mode;
- the top: products beyond binary32's range brought back by c or not, overflow in each mode.
"""

import zlib

import numpy as np
import pytest

import oracle
import ptxfp
from numba import njit
from ptxfp.core._jit import fpenv_set
from ptxfp.ops import f32, kernels
from ptxfp.ops.arith import _form

needs_fast = pytest.mark.skipif(not (kernels.X86 and kernels.HAVE_F16C),
                                reason="the fast lane needs x86 with F16C")

MODES = ("rn", "rz", "rm", "rp")
SPELLINGS = [f"fma.{m}{s}.f32.{t}" for t in ("f16", "bf16") for m in MODES for s in ("", ".sat")]
N = 3_000


def _f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def _bits32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def _half(rng, n, lo, hi, t):
    """Bits of n f16/bf16 values with unbiased exponents in [lo, hi] (clipped to the
    format's normal range), random signs and fractions."""
    if t == "f16":
        e = np.clip(rng.integers(lo, hi + 1, n), -14, 15) + 15
        return ((rng.integers(0, 2, n) << 15) | (e << 10) | rng.integers(0, 1 << 10, n))
    e = np.clip(rng.integers(lo, hi + 1, n), -126, 127) + 127
    return ((rng.integers(0, 2, n) << 15) | (e << 7) | rng.integers(0, 1 << 7, n))


def _value(bits, t):
    bits = np.asarray(bits, np.uint16)
    if t == "f16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _operands(t, rng):
    n = N
    a = _half(rng, n, -8, 8, t)
    b = _half(rng, n, -8, 8, t)
    p = _value(a, t) * _value(b, t)                       # exact
    groups = []
    # near ties: c whose binary32 ulp is twice |p| (p then sits half an ulp from c), nudged by
    # a few units of c's last place and of binary64's
    e = np.floor(np.log2(np.abs(p))) + 24
    c = np.ldexp(1.0 + rng.integers(0, 1 << 23, n) / 2.0 ** 23, e.astype(int))
    c = np.where(rng.integers(0, 2, n) == 1, -c, c).astype(np.float32)
    c = _bits32(c).astype(np.int64) + rng.integers(-3, 4, n)
    groups.append((a, b, c))
    # wide gaps, each side the larger
    for side in (1, -1):
        g = rng.integers(25, 160, n)
        ce = np.clip(np.floor(np.log2(np.abs(p))).astype(int) + side * g, -149, 127)
        cv = np.ldexp(1.0 + rng.integers(0, 1 << 23, n) / 2.0 ** 23, ce)
        cv = np.where(rng.integers(0, 2, n) == 1, -cv, cv).astype(np.float32)
        groups.append((a, b, _bits32(cv).astype(np.int64)))
    # the bottom: subnormal and small c against tiny products (bf16: down to 2**-266)
    lo = -133 if t == "bf16" else -24
    a2 = _half(rng, n, lo, lo + 20, t)
    b2 = _half(rng, n, lo, lo + 20, t)
    if t == "bf16":                                        # subnormal bf16 operands too
        a2 = np.where(rng.integers(0, 4, n) == 0, rng.integers(0, 128, n)
                      | (rng.integers(0, 2, n) << 15), a2)
    c2 = np.where(rng.integers(0, 2, n) == 1, rng.integers(0, 1 << 23, n),
                  (rng.integers(1, 12, n) << 23) | rng.integers(0, 1 << 23, n))
    c2 = c2 | (rng.integers(0, 2, n) << 31)
    groups.append((a2, b2, c2))
    # exact cancellation: c = -p where p is a binary32 number
    pc = _bits32((-p).astype(np.float32)).astype(np.int64)
    groups.append((a, b, pc))
    # the top: products near and beyond binary32's overflow, c near the largest
    hi = 127 if t == "bf16" else 15
    a3 = _half(rng, n, hi - 8, hi, t)
    b3 = _half(rng, n, hi - 8, hi, t)
    c3 = ((rng.integers(0, 2, n) << 31) | (rng.integers(240, 255, n) << 23)
          | rng.integers(0, 1 << 23, n))
    groups.append((a3, b3, c3))
    cols = [np.concatenate([g[i] for g in groups]) for i in range(3)]
    return (cols[0].astype(np.uint16), cols[1].astype(np.uint16),
            (cols[2] & 0xFFFFFFFF).astype(np.uint32))


@needs_fast
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_mixed_fma_double_rounding(spelling):
    t = spelling.rsplit(".", 1)[1]
    a, b, c = _operands(t, np.random.default_rng(zlib.crc32(spelling.encode())))
    got = ptxfp.execute(spelling, a, b, c)
    exp = oracle.compute_array(spelling, a, b, c)
    bad = np.nonzero(got != exp)[0]
    if bad.size:
        i = bad[0]
        pytest.fail(f"{spelling}: {bad.size} of {got.size} differ; first: "
                    f"{int(a[i]):#06x} {int(b[i]):#06x} {int(c[i]):#010x}: "
                    f"got {int(got[i]):#010x}, MPFR {int(exp[i]):#010x}")


# --- the bf16 mul (``mul.rn.bf16{x2}``): a plain binary32 pass with FTZ set, exact unless the
# underflow flag rose, and ``kernels.mul_wide`` for the blocks that raised it or the
# denormal-operand flag


def _bf16_bits(rng, fields):
    fields = np.asarray(fields)
    return ((rng.integers(0, 2, fields.size) << 15) | (fields << 7)
            | rng.integers(0, 128, fields.size)).astype(np.uint16)


def _mul_operands(rng):
    """Every pair of exponent fields (subnormals, zeros, infinities and NaNs among them), and
    products at bf16's subnormal steps: exact multiples of 2**-133 and halfway between two
    (ties to even), as 2**i * 2**j * fractions."""
    ea = np.repeat(np.arange(256), 256)
    eb = np.tile(np.arange(256), 256)
    a, b = _bf16_bits(rng, ea), _bf16_bits(rng, eb)
    n = 20_000
    fa = rng.integers(1, 128, n)                         # subnormal-range products, a fraction
    k = rng.integers(-150, -118, n)                      # of a power of two
    a2 = ((rng.integers(0, 2, n) << 15) | (np.clip(k + 127, 0, 254) << 7) | fa)
    b2 = ((rng.integers(0, 2, n) << 15) | (np.clip(-133 - k + 127 + rng.integers(-2, 3, n),
                                                    1, 254) << 7))
    return (np.concatenate([a, a2.astype(np.uint16)]), np.concatenate([b, b2.astype(np.uint16)]))


@needs_fast
@pytest.mark.parametrize("spelling", ["mul.rn.bf16", "mul.rn.bf16x2"])
def test_bf16_mul_blocks(spelling):
    """execute: clean and flagged blocks side by side (the array's first half holds no
    subnormal operand or product, its second half the operands above)."""
    rng = np.random.default_rng(5)
    a, b = _mul_operands(rng)
    m = 40_000
    clean_a = _bf16_bits(rng, rng.integers(100, 150, m))
    clean_b = _bf16_bits(rng, rng.integers(100, 150, m))
    a = np.concatenate([clean_a, a, clean_a])
    b = np.concatenate([clean_b, b, clean_b])
    if spelling.endswith("x2"):
        a = a[: a.size // 2 * 2].view(np.uint32)
        b = b[: b.size // 2 * 2].view(np.uint32)
    got = ptxfp.execute(spelling, a, b)
    exp = oracle.compute_array(spelling, a, b)
    bad = np.nonzero(got != exp)[0]
    assert bad.size == 0, (f"{bad.size} of {got.size} differ; first {int(a[bad[0]]):#x} * "
                           f"{int(b[bad[0]]):#x}: {int(got[bad[0]]):#x}, MPFR "
                           f"{int(exp[bad[0]]):#x}")


@needs_fast
def test_bf16_mul_wide_on_every_lane():
    """kernels.mul_wide alone, whatever a plain pass would have flagged."""
    spec, _ = _form("mul.rn.bf16").kernel()
    K = tuple(kernels.lane_consts(spec))
    mul_wide = kernels.mul_wide

    @njit
    def run(a, b, o):
        for i in range(o.size):
            o[i] = mul_wide(a[i], b[i], K)

    a, b = _mul_operands(np.random.default_rng(6))
    got = np.empty(a.size, np.uint16)
    run(a, b, got)
    exp = oracle.compute_array("mul.rn.bf16", a, b)
    assert np.count_nonzero(got != exp) == 0


# --- the .f32 forms' fast route (ops/f32.py): the hardware's binary32 operation by blocks,
# and ``f32.lane_wide`` (binary64, nothing underflows) on the blocks to redo


def _f32_operands(rng, n, op):
    """Bits of binary32 operands: uniform patterns, exponent fields near the bottom (subnormal
    and tiny products and sums, results at 2**-126 in every mode), near the top, specials."""
    def bits(fields):
        fields = np.clip(fields, 0, 255)
        return ((rng.integers(0, 2, fields.size) << 31) | (fields << 23)
                | rng.integers(0, 1 << 23, fields.size)).astype(np.uint32)
    k = n // 4
    cols = []
    for _ in range(3):
        cols.append(np.concatenate([
            rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(np.uint32),
            bits(rng.integers(0, 8, k)),                         # subnormal and just above
            bits(63 + rng.integers(-4, 5, k)),                   # products near 2**-126
            bits(rng.choice([0, 1, 127, 250, 254, 255], k))]))
    if op != "fma":          # sums landing near 2**-126: b = -a nudged
        cols[1][k:2 * k] = cols[0][k:2 * k] ^ np.uint32(0x80000000)
        cols[1][k:2 * k] += rng.integers(-3, 4, k).astype(np.uint32)
    # products within a few units of 2**-126 at 2**-150's scale, where the tininess readings
    # part: (just below 1) * (2**-126 and a few ulps up), c zero or a few subnormal steps
    m = 600
    edge_a = (0x3F7FFFFF - rng.integers(0, 4, m)) | (rng.integers(0, 2, m) << 31)
    edge_b = 0x00800000 + rng.integers(0, 4, m)
    edge_c = np.where(rng.integers(0, 2, m) == 1, 0, rng.integers(0, 3, m)
                      | (rng.integers(0, 2, m) << 31))
    for col, extra in zip(cols, (edge_a, edge_b, edge_c)):
        col[-m:] = extra.astype(np.uint32)
    return cols


@njit
def _run_f32_wide(a, b, c, o, OP, MODE, FTZ, TINY, SAT, SAT_MZ, NAN_BITS, CSR):
    """f32.lane_wide on every lane, the form's constants as arguments (one compilation for
    every spelling), under the control register CSR."""
    env = fpenv_set(np.int32(CSR))
    for i in range(o.size):
        o[i] = f32.lane_wide(a[i], b[i], c[i], OP, MODE, FTZ, TINY, SAT, SAT_MZ, NAN_BITS)
    fpenv_set(env)


F32_SPELLINGS = [f"{op}.{m}{f}{s}.f32" for op in ("add", "sub", "mul", "fma")
                 for m in MODES for f in ("", ".ftz") for s in ("", ".sat")]


@needs_fast
@pytest.mark.parametrize("tininess", ["after_rounding_unbounded", "after_rounding"])
@pytest.mark.parametrize("spelling", F32_SPELLINGS)
def test_f32_lane_wide_on_every_lane(spelling, tininess):
    """f32.lane_wide alone on every lane (the plain pass decides nothing here), under the two
    .ftz tininess readings it computes; and execute, whose blocks mix both routes."""
    from ptxfp import policy
    from ptxfp.ops.arith import kernel_spec

    if ".ftz" not in spelling and tininess != "after_rounding_unbounded":
        pytest.skip("the reading matters for .ftz only")
    op = spelling.split(".")[0]
    a, b, c = _f32_operands(np.random.default_rng(zlib.crc32(spelling.encode())), 4_000, op)
    ops = (a, b, c) if op == "fma" else (a, b)
    with policy.using(ftz_tininess=tininess):
        spec = kernel_spec(_form(spelling).ins, policy.current())
        wide = np.empty(a.size, np.uint32)
        _run_f32_wide(a, b, c, wide, spec.op, spec.mode, spec.ftz, spec.tininess, spec.sat,
                      spec.sat_mz, spec.nan_bits, 0x1F80 | (kernels.MXCSR_RC[spec.mode] << 13))
        got = ptxfp.execute(spelling, *ops)
        exp = oracle.compute_array(spelling, *ops)
    for name, res in (("lane_wide", wide), ("execute", got)):
        bad = np.nonzero(res != exp)[0]
        assert bad.size == 0, (f"{name}: {bad.size} of {a.size} differ; first "
                               + ", ".join(hex(int(x[bad[0]])) for x in ops)
                               + f": {int(res[bad[0]]):#x}, MPFR {int(exp[bad[0]]):#x}")
