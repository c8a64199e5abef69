"""min/max/neg/abs on the half types and the .f32/.f32x2 (and mad.f32) arithmetic against
independent references (issue #15, families 1 and 2).

Expected bits come from tests/oracle_minmax.py (min/max/neg/abs, written from the manual's
semantics blocks, values compared with MPFR) and tests/oracle.py (add/sub/mul/fma: the exact
result rounded once by MPFR), never from ptxfp.  Every spelling of the instruction table is run
on targeted vectors (signed zeros, subnormal boundaries, largest finite, infinities, NaNs with
payloads and signs, ties, overflow in every mode) and seeded random ones.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import oracle
import oracle_minmax
import ptxfp
from ptxfp import isa, policy
from ptxfp.dispatch import compute

RNG_SEED = 15

HALF_TARGETED = {
    "f16": [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400, 0x3C00, 0xBC00,
            0x3C01, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7C01, 0xFC01, 0x7E00, 0xFE00, 0x7FFF,
            0xFFFF, 0x4000, 0xC000, 0x0200, 0x8200],
    "bf16": [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F, 0x0080, 0x8080, 0x3F80, 0xBF80,
             0x3F81, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7F81, 0xFF81, 0x7FC0, 0xFFC0, 0x7FFF,
             0xFFFF, 0x4000, 0xC000, 0x0040, 0x8040],
}

MINMAX = isa.canonical_spellings("minmax")
F32 = [s for s in isa.canonical_spellings("arith")
       if isa.rows_for(s.split(".")[0], (s.split(".")[-1],))
       and s.split(".")[-1] in ("f32", "f32x2") and ptxfp.parse(s).atype != "f16"]


def _half_vectors(spelling, n_random=3000):
    """Operand arrays for a min/max/neg/abs spelling: every pair (or value) of the targeted
    list, then random bit patterns; packed types pair them up into lanes."""
    ins = ptxfp.parse(spelling)
    lane_t = ins.lane_format
    t = np.array(HALF_TARGETED[lane_t], np.uint64)
    rng = np.random.default_rng(RNG_SEED)
    k = len(ins.operand_names)
    if k == 2:
        a, b = np.meshgrid(t, t)
        a, b = a.ravel(), b.ravel()
        ra = rng.integers(0, 1 << 16, n_random, dtype=np.uint64)
        rb = rng.integers(0, 1 << 16, n_random, dtype=np.uint64)
        # near-equal pairs: same exponent, signs and low bits differ
        rb[: n_random // 3] = ra[: n_random // 3] ^ rng.integers(0, 4, n_random // 3,
                                                                  dtype=np.uint64)
        ops = [np.concatenate([a, ra]), np.concatenate([b, rb])]
    else:
        ops = [np.arange(1 << 16, dtype=np.uint64)]           # every 16-bit pattern
    if ins.lanes == 2:
        ops = [x | (np.roll(x, 7) << np.uint64(16)) for x in ops]
        return [x.astype(np.uint32) for x in ops]
    return [x.astype(np.uint16) for x in ops]


@pytest.mark.parametrize("spelling", MINMAX)
def test_minmax_negabs_against_oracle(spelling):
    ops = _half_vectors(spelling)
    got = compute(spelling, *ops)
    want = oracle_minmax.compute_array(spelling, *ops)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(spelling, [hex(int(o[i])) for o in ops], hex(int(got[i])),
                            hex(int(want[i]))) for i in bad[:5]]


def test_minmax_spelling_count():
    # 4 types x (min, max) x {.ftz}{.NaN}{.xorsign.abs} (no .ftz on bf16) + neg/abs {.ftz}
    assert len([s for s in MINMAX if s.startswith(("min", "max"))]) == 2 * (8 + 8 + 4 + 4)
    assert len([s for s in MINMAX if s.startswith(("neg", "abs"))]) == 2 * (2 + 2 + 1 + 1)


@pytest.mark.parametrize("rule", ["canonical", "sign"])
def test_negabs_nan_policy(rule):
    """neg/abs of a NaN follow policy.negabs_nan, in the model and the oracle alike."""
    nans = np.array([0x7C01, 0xFE00, 0x7FFF, 0x7E12], np.uint16)
    with policy.using(negabs_nan=rule):
        for sp in ("neg.f16", "abs.ftz.f16", "neg.bf16x2", "abs.bf16"):
            ops = nans if not sp.endswith("x2") else (nans.astype(np.uint32) * 0x10001)
            got = compute(sp, ops)
            want = oracle_minmax.compute_array(sp, ops)
            assert (got == want).all(), sp
        assert compute("neg.f16", 0x7C01) == (0x7FFF if rule == "canonical" else 0xFC01)


def test_minmax_manual_examples():
    """The rules of the manual's notes, one by one (expected bits written out by hand)."""
    c = compute
    assert c("min.f16", 0x8000, 0x0000) == 0x8000            # min(-0, +0) = -0
    assert c("max.f16", 0x8000, 0x0000) == 0x0000            # +0.0 > -0.0
    assert c("min.f16", 0x7E00, 0x3C00) == 0x3C00            # NaN and a number: the number
    assert c("max.bf16", 0x3F80, 0xFFC1) == 0x3F80
    assert c("min.f16", 0x7E01, 0xFE02) == 0x7FFF            # both NaN: canonical NaN
    assert c("min.NaN.f16", 0x7E00, 0x3C00) == 0x7FFF        # .NaN propagates (canonical)
    assert c("min.xorsign.abs.f16", 0xC000, 0x3C00) == 0xBC00  # |min| 1.0, sign - ^ + = -
    assert c("max.xorsign.abs.f16", 0xC000, 0xBC00) == 0x4000  # - ^ - = +
    assert c("min.NaN.xorsign.abs.f16", 0xFE00, 0x3C00) == 0x7FFF  # NaN result: no xorsign
    assert c("min.xorsign.abs.f16", 0xFE00, 0x3C00) == 0xBC00  # sign XOR taken from the NaN
    assert c("min.ftz.f16", 0x0001, 0x8002) == 0x8000        # subnormals flushed (signed)
    assert c("min.f16", 0x0001, 0x8002) == 0x8002
    assert c("neg.ftz.f16", 0x0001) == 0x8000
    assert c("abs.f16x2", 0xBC00BC00) == 0x3C003C00


# --- f32 ---------------------------------------------------------------------------------------

def _f32(x):
    return int(np.float32(x).view(np.uint32))


F32_TARGETED = [
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
    0x80800000, 0x00800001, 0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x7F7FFFFF,
    0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000,
    0x7FFFFFFF, 0x33800000, 0xB3800000, 0x33C00000, 0x3F800800, 0x3F000000, 0x7F000000,
    0x40000000, 0x34000000, 0x0C800000, 0x1F800000, 0x20000000, 0x00400000,
]


def _f32_random(rng, n):
    """Random f32 bits: a third uniform, a third in [2**-3, 2**3) (rounding in the middle of
    the range), a third with small exponents (products and sums that underflow)."""
    u = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    mid = (rng.integers(0x7C, 0x82, n, dtype=np.uint64) << np.uint64(23)) | \
        rng.integers(0, 1 << 23, n, dtype=np.uint64)
    low = (rng.integers(0x00, 0x48, n, dtype=np.uint64) << np.uint64(23)) | \
        rng.integers(0, 1 << 23, n, dtype=np.uint64)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(31)
    pick = rng.integers(0, 3, n)
    return np.where(pick == 0, u, np.where(pick == 1, mid, low)) | sign


def _f32_vectors(k, n_random=1500):
    rng = np.random.default_rng(RNG_SEED)
    t = np.array(F32_TARGETED, np.uint64)
    if k == 2:
        a, b = np.meshgrid(t, t)
        ops = [a.ravel(), b.ravel()]
        # ties of round-to-nearest: 1 + 2**-24 (even down), (1 + 2**-23) + 2**-24 (even up),
        # (1 + 2**-12)**2 = 1 + 2**-11 + 2**-24
        ops[0] = np.concatenate([ops[0], [0x3F800000, 0x3F800001, 0x3F800800]])
        ops[1] = np.concatenate([ops[1], [0x33800000, 0x33800000, 0x3F800800]])
    else:
        idx = rng.integers(0, len(t), (3, 1200))
        ops = [t[i] for i in idx]
    r = [_f32_random(rng, n_random) for _ in range(k)]
    if k == 3:
        # fma with cancellation: c close to -(a*b)
        with np.errstate(all="ignore"):
            a = r[0][:500].astype(np.uint32).view(np.float32).astype(np.float64)
            b = r[1][:500].astype(np.uint32).view(np.float32).astype(np.float64)
            c = (-(a * b)).astype(np.float32).view(np.uint32).astype(np.uint64)
        r[2][:500] = c ^ rng.integers(0, 3, 500, dtype=np.uint64)
    return [np.concatenate([o, x]).astype(np.uint64) for o, x in zip(ops, r)]


@pytest.mark.parametrize("spelling", F32)
def test_f32_against_mpfr(spelling):
    ins = ptxfp.parse(spelling)
    k = len(ins.operand_names)
    ops = _f32_vectors(k)
    if ins.lanes == 2:
        ops = [(x | (np.roll(x, 5) << np.uint64(32))).astype(np.uint64) for x in ops]
    else:
        ops = [x.astype(np.uint32) for x in ops]
    got = ptxfp.execute(spelling, *ops)
    want = oracle.compute_array(ins, *ops)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(spelling, [hex(int(o[i])) for o in ops], hex(int(got[i])),
                            hex(int(want[i]))) for i in bad[:5]]


def test_f32_spelling_count():
    # add/sub/mul: 4 roundings x {.ftz}{.sat} = 16 each; fma, mad 16 each; .f32x2 add/sub/mul/
    # fma: 4 roundings x {.ftz} = 8 each
    assert len([s for s in F32 if s.endswith(".f32")]) == 5 * 16
    assert len([s for s in F32 if s.endswith(".f32x2")]) == 4 * 8


def test_f32_manual_cases():
    """Cases written out by hand (IEEE 754 single precision, expected bits from the
    standard's rules, not from any code)."""
    e = ptxfp.execute
    assert e("add.f32", 0x3F800000, 0x33800000) == 0x3F800000        # tie to even (down)
    assert e("add.f32", 0x3F800001, 0x33800000) == 0x3F800002        # tie to even (up)
    assert e("add.rp.f32", 0x3F800000, 0x00000001) == 0x3F800001
    assert e("add.rm.f32", 0xBF800000, 0x80000001) == 0xBF800001
    assert e("mul.rn.f32", 0x3F800800, 0x3F800800) == 0x3F801000     # (1+2^-12)^2: tie, even
    assert e("mul.rz.f32", 0x7F7FFFFF, 0x40000000) == 0x7F7FFFFF     # overflow per mode
    assert e("mul.rn.f32", 0x7F7FFFFF, 0x40000000) == 0x7F800000
    assert e("mul.rm.f32", 0x7F7FFFFF, 0xC0000000) == 0xFF800000
    assert e("mul.rp.f32", 0x7F7FFFFF, 0xC0000000) == 0xFF7FFFFF
    assert e("mul.rn.f32", 0x00800000, 0x3F000000) == 0x00400000     # exact subnormal
    assert e("mul.rn.ftz.f32", 0x00800000, 0x3F000000) == 0x00000000  # .ftz result
    assert e("add.ftz.f32", 0x00000001, 0x00000000) == 0x00000000    # .ftz input
    assert e("sub.rm.f32", 0x3F800000, 0x3F800000) == 0x80000000     # x - x = -0 under .rm
    assert e("add.f32", 0x7F800000, 0xFF800000) == 0x7FFFFFFF        # canonical NaN
    assert e("add.f32", 0x7FC00001, 0x3F800000) == 0x7FFFFFFF        # payload not kept
    assert e("add.sat.f32", 0x7FC00001, 0x3F800000) == 0x00000000    # .sat: NaN -> +0
    assert e("add.sat.f32", 0x3F800000, 0x3F800000) == 0x3F800000    # clamp to 1.0
    assert e("fma.rn.f32", _f32(3.0), _f32(1 / 3), _f32(-1.0)) == 0x33000000  # one rounding
    assert e("mad.rn.f32", _f32(3.0), _f32(1 / 3), _f32(-1.0)) == 0x33000000
    two = (0x40000000 << 32) | 0x3F800000                            # lanes (1.0, 2.0)
    assert e("add.rn.f32x2", two, two) == (0x40800000 << 32) | 0x40000000
    with policy.using(canonical_nan_f32=0x7FC00000):
        assert e("mul.f32", 0x00000000, 0x7F800000) == 0x7FC00000


def test_f32_products_are_exact_in_float64():
    """The reason the f32 forms share the float64 lane: a product of two f32 numbers has at
    most 48 significant bits and an exponent in [-298, 256], so float64 holds it exactly
    (checked here with MPFR on the extreme and random operands)."""
    import gmpy2
    rng = np.random.default_rng(RNG_SEED)
    xs = np.concatenate([_f32_random(rng, 2000), np.array(F32_TARGETED, np.uint64)])
    ys = np.roll(xs, 1)
    fx = xs.astype(np.uint32).view(np.float32)
    fy = ys.astype(np.uint32).view(np.float32)
    ctx = gmpy2.context(precision=200)
    for x, y in zip(fx, fy):
        if not (np.isfinite(x) and np.isfinite(y)):
            continue
        assert ctx.mul(gmpy2.mpfr(float(x)), gmpy2.mpfr(float(y))) == \
            gmpy2.mpfr(float(np.float64(x) * np.float64(y)), 200)


def test_run_sends_the_forms_to_the_model():
    """ptxfp.run: min/max/neg/abs on half registers and the .f32/.f32x2/mad forms give the
    model's bits (compared with the oracles), the integer min/neg stay integer."""
    text = "\n".join([
        ".reg .b16 h<4>;", ".reg .b32 r<4>;", ".reg .f32 f<4>;", ".reg .b64 q<4>;",
        ".reg .s32 s<3>;",
        "min.NaN.f16 h2, h0, h1;", "max.xorsign.abs.bf16x2 r2, r0, r1;", "neg.f16 h3, h0;",
        "add.rz.ftz.sat.f32 f2, f0, f1;", "mad.rn.f32 f3, f0, f1, f2;",
        "fma.rm.f32x2 q2, q0, q1, q0;", "min.s32 s2, s0, s1;", "neg.s32 s2, s2;"])
    h0, h1 = [0x3C00, 0x7E01, 0x8000], [0x8000, 0x3C00, 0x0000]
    r0, r1 = [0x3F80BF80, 0x7FC00000, 1], [0x4000C000, 0x3F800000, 0x80008000]
    f0, f1 = [0x3F800000, 0x00000001, 0x7F7FFFFF], [0x33800000, 0x80000001, 0x7F7FFFFF]
    q0 = [0x3F80000040000000, 0x7F7FFFFF00800000, 0]
    q1 = [0x4000000040000000, 0x400000003F000000, 0x8000000080000000]
    u64 = lambda v: np.array(v, np.uint64)
    out = ptxfp.run(text, {"h0": h0, "h1": h1, "r0": r0, "r1": r1, "f0": f0, "f1": f1,
                           "q0": u64(q0), "q1": u64(q1), "s0": [3, -1, 0], "s1": [-5, 2, 0]})
    reg = lambda k: [int(x) for x in out.get("%" + k, out.get(k))]
    assert reg("h2") == [oracle_minmax.compute("min.NaN.f16", a, b) for a, b in zip(h0, h1)]
    assert reg("r2") == [oracle_minmax.compute("max.xorsign.abs.bf16x2", a, b)
                         for a, b in zip(r0, r1)]
    assert reg("h3") == [oracle_minmax.compute("neg.f16", a) for a in h0]
    f2 = [oracle.compute("add.rz.ftz.sat.f32", a, b) for a, b in zip(f0, f1)]
    assert reg("f2") == f2
    assert reg("f3") == [oracle.compute("fma.rn.f32", a, b, c) for a, b, c in zip(f0, f1, f2)]
    assert reg("q2") == [oracle.compute("fma.rm.f32x2", a, b, a) for a, b in zip(q0, q1)]
    assert [x - (1 << 32) if x >> 31 else x for x in reg("s2")] == [5, 1, 0]


@pytest.mark.parametrize("spelling", ["add.rn.f32", "sub.rm.ftz.sat.f32", "mul.rp.ftz.f32",
                                      "fma.rz.sat.f32", "mad.rn.ftz.f32", "fma.rm.ftz.f32x2"])
def test_f32_kernel_equals_the_float64_lane(spelling):
    """f32.py's kernels against kernels.py's float64 lane built for the same Spec (a second
    implementation of the same rounding, on 40k random and targeted operands)."""
    from ptxfp.ops import kernels
    from ptxfp.ops.arith import _form
    form = _form(spelling)
    spec, _ = form.kernel()
    rng = np.random.default_rng(RNG_SEED)
    k = len(form.ins.operand_names)
    ops = [np.concatenate([_f32_random(rng, 40_000), np.array(F32_TARGETED * 3, np.uint64)
                           [rng.permutation(3 * len(F32_TARGETED))]]) for _ in range(k)]
    if form.ins.lanes == 2:
        ops = [(x | (np.roll(x, 3) << np.uint64(32))).astype(np.uint64) for x in ops]
    else:
        ops = [x.astype(np.uint32) for x in ops]
    got = ptxfp.execute(spelling, *ops)
    ref = kernels._build(dataclasses.replace(spec, lanes=1))
    o = form.order
    exp = np.empty_like(got)
    kernels.run_with(ref, spec, ops[o[0]], ops[o[1]], ops[o[2]], exp, exp.size)
    assert np.array_equal(got, exp)


def test_f32_sources_take_f32_immediates():
    """ptxas 13.0 takes 0f/0d/decimal immediates as .f32 sources and refuses integer ones
    (measured on sm_90); check() agrees."""
    text = ("\n".join([".version 8.0", ".target sm_90", ".address_size 64",
                       ".visible .entry k()", "{", ".reg .f32 f<3>;",
                       "add.f32 f0, f1, 0f3F800000;", "fma.rn.f32 f0, f1, 1.5, f2;",
                       "mad.rn.f32 f0, 0d3FF0000000000000, f1, f2;", "mul.f32 f0, 2, f1;",
                       "ret;", "}"]) + "\n")
    errs = ptxfp.check(text).errors
    assert [(e.line, e.rule) for e in errs] == [(10, "operand-type")]


@pytest.mark.parametrize("spelling", ["min.f16", "max.NaN.bf16x2", "min.xorsign.abs.f16",
                                      "neg.bf16", "abs.ftz.f16x2"])
def test_execute_takes_the_minmax_forms(spelling):
    """ptxfp.execute is the arithmetic entry point users call: min/max/neg/abs go through it
    too (bits and typed arrays), with the oracle's bits."""
    rng = np.random.default_rng(11)
    width = 32 if spelling.endswith("x2") else 16
    n_ops = 1 if spelling.split(".")[0] in ("neg", "abs") else 2
    ops = [rng.integers(0, 1 << width, 500, dtype=np.uint64).astype(f"uint{width}")
           for _ in range(n_ops)]
    got = ptxfp.execute(spelling, *ops)
    want = oracle_minmax.compute_array(spelling, *ops)
    assert np.array_equal(got, want)
    assert ptxfp.execute(spelling, *(int(x[0]) for x in ops)) == int(want[0])
    if spelling == "min.f16":
        h = np.array([1.0, -0.0, np.nan], np.float16)
        k = np.array([2.0, 0.0, 5.0], np.float16)
        typed = ptxfp.execute(spelling, h, k)
        assert typed.dtype == np.float16
        assert np.array_equal(typed.view(np.uint16),
                              oracle_minmax.compute_array(spelling, h.view(np.uint16),
                                                          k.view(np.uint16)))
