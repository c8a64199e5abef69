"""div, rcp and sqrt .rn/.rz/.rm/.rp on .f32 (with and without .ftz) and .f64 against MPFR
(gmpy2: the format's precision, emin/emax, subnormalize, the form's rounding mode), on random
bits and targeted operands: exact quotients and roots, subnormal ties, subnormal results,
overflow, zeros, infinities, NaNs.  .ftz: subnormal inputs are zeros of their sign, a result
tiny by the default ``ftz_tininess`` (IEEE's after rounding: rounded to 24 bits with an
unbounded exponent, below 2**-126) a zero of its sign; a NaN result is the policy's canonical
NaN.  The .approx/.full spellings are legal PTX that ptxfp does not compute."""

from __future__ import annotations

import gmpy2
import numpy as np
import pytest

import ptxfp
from ptxfp.dispatch import compute
from ptxfp.errors import SpellingError

N = 20000                                              # vectors per form
MODE = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
        "rp": gmpy2.RoundUp}
#: precision, emin, emax (MPFR's convention), width
FMT = {"f32": (24, -148, 128, 32), "f64": (53, -1073, 1024, 64)}
FORMS = [f"{op}.{r}{ftz}.{t}" for op in ("div", "rcp", "sqrt") for t in ("f32", "f64")
         for ftz in (("", ".ftz") if t == "f32" else ("",)) for r in MODE]

SPECIAL32 = [0, 0x80000000, 1, 0x80000001, 3, 0x007FFFFF, 0x00800000, 0x80800000, 0x00800001,
             0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001, 0x3F800000,
             0xBF800000, 0x40000000, 0x3F000000, 0x40400000, 0x3F800001, 0x3E800000,
             0x00400000, 0x7E800000, 0x01000000]
SPECIAL64 = [0, 1 << 63, 1, (1 << 63) | 1, 3, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
             0x8010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000,
             0xFFF0000000000000, 0x7FF8000000000000, 0xFFF0000000000001, 0x3FF0000000000000,
             0xBFF0000000000000, 0x4000000000000000, 0x3FE0000000000000, 0x4008000000000000,
             0x3FF0000000000001, 0x0008000000000000, 0x7FD0000000000000, 0x0020000000000000]


def _bits(t, x):
    return np.asarray(x, np.float32 if t == "f32" else np.float64).view(
        np.uint32 if t == "f32" else np.uint64)


def _operands(t, op, rng):
    """(a, b) bit columns of N vectors: specials crossed, targeted, random."""
    w = FMT[t][3]
    ut = np.uint32 if w == 32 else np.uint64
    ft = np.float32 if w == 32 else np.float64
    sp = SPECIAL32 if w == 32 else SPECIAL64
    m = len(sp)
    a = [np.array([sp[i % m] for i in range(m * m)], ut)]
    b = [np.array([sp[i // m] for i in range(m * m)], ut)]
    k = 2000
    mant = 12 if w == 32 else 26
    # exact quotients and roots: few-bit significands whose product is exact
    q = (rng.integers(1 << (mant - 1), 1 << mant, k) * 2.0 ** rng.integers(-50, 50, k)
         * rng.choice([-1.0, 1.0], k))
    d = rng.integers(1 << (mant - 1), 1 << mant, k) * 2.0 ** rng.integers(-50, 50, k)
    if op == "sqrt":
        a.append(_bits(t, (np.abs(q) * np.abs(q)).astype(ft)))
        b.append(_bits(t, d.astype(ft)))
    else:
        a.append(_bits(t, (q * d).astype(ft)))
        b.append(_bits(t, d.astype(ft)))
    # subnormal results and ties among them: odd subnormals over 2, 4, 0.5, 3; and big / big
    sub = rng.integers(1, 1 << 20, k).astype(ut) | ut(1)
    a.append(sub)
    b.append(_bits(t, rng.choice([2.0, 4.0, -2.0, 0.5, 3.0, 1.0], k).astype(ft)))
    lo, hi = (0x00800000, 0x7F7FFFFF) if w == 32 else (0x0010000000000000, 0x7FEFFFFFFFFFFFFF)
    big = rng.integers(hi - (hi >> 4), hi, k, dtype=ut)
    small = rng.integers(lo, lo << 3, k, dtype=ut)
    a.append(np.concatenate([small[: k // 2], big[: k // 2]]))      # underflow, overflow
    b.append(np.concatenate([big[k // 2:], small[k // 2:]]))
    rest = N - sum(len(x) for x in a)
    r1 = rng.integers(0, 1 << w, rest, dtype=ut) if w == 32 else \
        rng.integers(0, 1 << 63, rest, dtype=np.uint64) * np.uint64(2) | \
        rng.integers(0, 2, rest, dtype=np.uint64)
    r2 = rng.integers(0, 1 << w, rest, dtype=ut) if w == 32 else \
        rng.integers(0, 1 << 63, rest, dtype=np.uint64) * np.uint64(2) | \
        rng.integers(0, 2, rest, dtype=np.uint64)
    # half of the random pairs with exponents near each other (quotients near 1)
    ebits = ut(0x7F800000) if w == 32 else np.uint64(0x7FF0000000000000)
    r2 = np.where(np.arange(rest) % 2 == 0, (r2 & ~ebits) | (r1 & ebits), r2)
    a.append(r1)
    b.append(r2)
    return np.concatenate(a).astype(ut), np.concatenate(b).astype(ut)


def _oracle(form, t, op, rnd, ftz, x_bits, y_bits):
    p, emin, emax, w = FMT[t]
    ft, ut = (np.float32, np.uint32) if w == 32 else (np.float64, np.uint64)
    nan = ptxfp.policy.current().canonical_nan(t)
    ctx = gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=MODE[rnd])
    unb = gmpy2.context(precision=p, round=MODE[rnd])    # unbounded exponent: the tininess
    out = []
    for xb, yb in zip(x_bits.tolist(), y_bits.tolist()):
        if ftz:
            xb = xb & 0x80000000 if xb & 0x7F800000 == 0 else xb
            yb = yb & 0x80000000 if yb & 0x7F800000 == 0 else yb
        x = float(ut(xb).view(ft))
        y = float(ut(yb).view(ft))
        mx, my = gmpy2.mpfr(x, 53), gmpy2.mpfr(y, 53)
        if op == "div":
            r, ru = ctx.div(mx, my), (unb.div(mx, my) if ftz else None)
        elif op == "rcp":
            r, ru = ctx.div(1, mx), (unb.div(1, mx) if ftz else None)
        else:
            r, ru = ctx.sqrt(mx), (unb.sqrt(mx) if ftz else None)
        if gmpy2.is_nan(r):
            out.append(nan)
            continue
        v = float(r)
        if ftz and ru is not None and ru != 0 and abs(ru) < gmpy2.mpfr(2) ** -126:
            v = -0.0 if gmpy2.is_signed(ru) else 0.0
        out.append(int(ft(v).view(ut)))
    return out


@pytest.mark.parametrize("form", FORMS)
def test_against_mpfr(form):
    op, rnd, *rest = form.split(".")
    t = rest[-1]
    ftz = "ftz" in rest
    rng = np.random.default_rng(sum(map(ord, form)))
    a, b = _operands(t, op, rng)
    assert len(a) == N
    got = compute(form, a, b) if op == "div" else compute(form, a)
    assert ptxfp.policy.current().ftz_tininess == ptxfp.policy.TININESS_AFTER_IEEE
    want = _oracle(form, t, op, rnd, ftz, a, b)        # (b unread by rcp and sqrt)
    bad = [i for i in range(N) if int(got[i]) != want[i]]
    assert not bad, (form, len(bad), hex(int(a[bad[0]])), hex(int(b[bad[0]])),
                     hex(int(got[bad[0]])), hex(want[bad[0]]))


def test_nan_policy_is_read():
    with ptxfp.policy.using(canonical_nan_f32=0x7FC00000, canonical_nan_f64=0x7FF8000000000000):
        assert int(compute("div.rn.f32", 0, 0)) == 0x7FC00000
        assert int(compute("sqrt.rz.f64", 0xBFF0000000000000)) == 0x7FF8000000000000


@pytest.mark.parametrize("spelling", ["rcp.rn.ftz.f64"])
def test_approx_is_not_modeled(spelling):
    with pytest.raises(SpellingError) as e:
        ptxfp.parse(spelling)
    assert e.value.rule == "not-modeled"


@pytest.mark.parametrize("spelling", ["div.approx.f32", "div.approx.ftz.f32", "div.full.f32",
                                      "div.full.ftz.f32", "rcp.approx.f32", "rcp.approx.ftz.f32",
                                      "sqrt.approx.f32", "sqrt.approx.ftz.f32",
                                      "rcp.approx.ftz.f64"])
def test_approx_is_the_sfu_family(spelling):
    # the .approx and div.full forms are computed by ptxfp.ops.sfu (tests/test_sfu.py)
    assert ptxfp.parse(spelling).family == "sfu"


@pytest.mark.parametrize("spelling,rule", [
    ("div.f32", "rounding-required"), ("div.f64", "rounding-required"),
    ("sqrt.rn.ftz.f64", "illegal-modifier"), ("div.approx.f64", "illegal-type"),
    ("div.rn.sat.f32", "unknown-modifier"), ("div.rn.rz.f32", "multiple-rounding"),
    ("div.approx.rn.f32", "illegal-rounding")])
def test_illegal_spellings(spelling, rule):
    """ptxas 13.0 rejects each of these (isa/f64.py's docstring has its messages)."""
    with pytest.raises(SpellingError) as e:
        ptxfp.parse(spelling)
    assert e.value.rule == rule
