"""cvt between .f32 and .f16/.bf16/.f16x2/.bf16x2, against an MPFR oracle written here.

The oracle below shares no code with ptxfp: bit fields are decoded into exact MPFR values,
rounded once by MPFR (subnormalized, exponent range open above so that overflow is decided here
per IEEE 754), and encoded again; NVIDIA's modifiers are written out from the manual's cvt page
(9.7.9.21). Policies are read from ptxfp.POLICY so that a flip moves model and oracle together.
The legal spellings and their PTX/target requirements are checked against ptxas when installed.
"""

import os
import re
import shutil
import subprocess
import tempfile

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr

import ptxfp
from ptxfp import OperandError, SpellingError, policy
from ptxfp.ops.cvt import canonical_spellings, convert, parse_cvt

# --- the oracle -------------------------------------------------------------------------------

FMT = {  # name: (width, exponent bits, fraction bits)
    "f16": (16, 5, 10), "bf16": (16, 8, 7), "f32": (32, 8, 23)}


def _params(name):
    width, eb, fb = FMT[name]
    bias = (1 << (eb - 1)) - 1
    return width, eb, fb, bias, 1 - bias          # ..., exponent of the smallest normal


def o_decode(bits, name):
    """(kind, sign, exact mpfr or None); kind in 'zero', 'sub', 'fin', 'inf', 'nan'."""
    width, eb, fb, bias, emin = _params(name)
    s = (bits >> (width - 1)) & 1
    e = (bits >> fb) & ((1 << eb) - 1)
    f = bits & ((1 << fb) - 1)
    if e == (1 << eb) - 1:
        return ("nan" if f else "inf"), s, None
    if e == 0 and f == 0:
        return "zero", s, None
    m, x = (f, emin - fb) if e == 0 else (f | (1 << fb), e - bias - fb)
    v = gmpy2.mul_2exp(mpfr(-m if s else m, 64), x)
    return ("sub" if e == 0 else "fin"), s, v


def o_encode(v, name):
    """An mpfr already on the format's grid (and in range) to bits."""
    width, eb, fb, bias, emin = _params(name)
    if v == 0:
        return (1 << (width - 1)) if gmpy2.is_signed(v) else 0
    s = 1 if v < 0 else 0
    m, x = abs(v).as_mantissa_exp()
    m, x = int(m), int(x)
    top = x + m.bit_length() - 1
    if top >= emin:
        shift = x - (top - fb)
        sig = m << shift if shift >= 0 else m >> -shift
        assert shift >= 0 or m & ((1 << -shift) - 1) == 0
        return (s << (width - 1)) | ((top + bias) << fb) | (sig & ((1 << fb) - 1))
    shift = x - (emin - fb)
    sig = m << shift if shift >= 0 else m >> -shift
    assert shift >= 0 or m & ((1 << -shift) - 1) == 0
    return (s << (width - 1)) | sig


_MODES = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
          "rp": gmpy2.RoundUp}


def o_round(v, name, mode):
    """Round the exact nonzero v once into `name`, IEEE overflow per mode: bits."""
    width, eb, fb, bias, emin = _params(name)
    ctx = gmpy2.context(precision=fb + 1, emin=emin - fb + 1, emax=1 << 20, subnormalize=True,
                        round=_MODES[mode])
    r = ctx.plus(v)
    maxf = gmpy2.mul_2exp(mpfr((1 << (fb + 1)) - 1, 64), bias - fb)
    neg = r < 0
    if abs(r) > maxf:
        to_inf = {"rn": True, "rz": False, "rm": neg, "rp": not neg}[mode]
        inf = ((1 << eb) - 1) << fb
        return (int(neg) << (width - 1)) | (inf if to_inf else inf - 1)
    if r == 0:        # MPFR gives the zero the sign of v
        return int(neg or v < 0) << (width - 1)
    return o_encode(r, name)


def o_cvt(form, a):
    """One lane of cvt (form = the parsed instruction's fields), a = source bits."""
    pol = ptxfp.POLICY
    sp = str(form)                       # the canonical spelling: the policy's per-form entries
    widen_nan = pol.value("widen_nan", sp)
    src = form.atype if not form.narrowing else "f32"
    dst = "f32" if not form.narrowing else form.dtype.removesuffix("x2")
    width, eb, fb, bias, _ = _params(dst)
    sign_bit = 1 << (width - 1)
    one = bias << fb
    inf = ((1 << eb) - 1) << fb
    kind, s, v = o_decode(a, src)
    # .ftz: only single-precision inputs and results: an f32 subnormal input (narrowing), a
    # bf16 subnormal input, which is an f32 subnormal result (widening).
    # cvt_ftz_input "ignored" (the H100 on cvt.*.ftz{.sat}.f16.f32): no flush of the input.
    flush = not form.narrowing or pol.value("cvt_ftz_input", sp) == "flush"
    if form.ftz and flush and kind == "sub" and (form.narrowing or src == "bf16"):
        kind = "zero"
    if kind == "nan":
        if form.sat:
            return 0
        if not form.narrowing and widen_nan == "payload":
            _, seb, sfb = FMT[src]
            return (s << 31) | 0x7F800000 | ((a & ((1 << sfb) - 1)) << (23 - sfb))
        if not form.narrowing and widen_nan == "quiet":
            # IEEE 754-2019: the fraction's first bit is the quiet bit (§6.2.1), the rest is
            # the payload; the conversion delivers a quiet NaN (§6.2, §7.2) with the input's
            # payload (§6.2.3), the payload's bits staying at the top of the fraction.
            _, seb, sfb = FMT[src]
            dwidth, deb, dfb = FMT["f32"]
            payload = a & ((1 << (sfb - 1)) - 1)          # below the quiet bit
            return ((s << (dwidth - 1)) | (((1 << deb) - 1) << dfb) | (1 << (dfb - 1))
                    | (payload << (dfb - sfb)))
        # one canonical NaN per result format
        return pol.value({"f16": "canonical_nan_f16", "bf16": "canonical_nan_bf16",
                          "f32": "canonical_nan_f32"}[dst], sp)
    if kind == "zero":
        bits = s << (width - 1)
    elif kind == "inf":
        bits = (s << (width - 1)) | inf
    elif form.narrowing:
        bits = o_round(v, dst, form.rounding)
    else:
        bits = o_encode(v, "f32")                     # exact widening
    if form.satfinite and (bits & ~sign_bit) == inf:
        bits = (bits & sign_bit) | (inf - 1)          # sign-preserved MAX_NORM
    if form.sat:
        if bits == sign_bit:
            return 0 if pol.sat_minus_zero_to_plus else bits
        if bits & sign_bit:
            return 0
        return min(bits, one)
    if form.relu and bits & sign_bit:
        return 0 if (bits != sign_bit or pol.relu_minus_zero_to_plus) else bits
    return bits


def oracle(spelling, *ops):
    form = parse_cvt(spelling)
    if form.lanes == 2:
        return (o_cvt(form, ops[0]) << 16) | o_cvt(form, ops[1])
    return o_cvt(form, ops[0])


# --- inputs -----------------------------------------------------------------------------------

def _f32_bits(v):
    return o_encode(gmpy2.context(precision=24).plus(v), "f32")


def _specials32():
    out = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
           0x7FBFFFFF, 0xFFFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
           0x3F800000, 0xBF800000, 0x3F7FFFFF, 0x3F800001, 0x7F7FFFFF, 0xFF7FFFFF]
    # f16 overflow edges: 65504 (max), 65519.99, 65520 (the rn tie to inf), 65536
    out += [_f32_bits(mpfr(x)) for x in (65504, 65519.99609375, 65520, 65536, -65520, -65504)]
    out += [_f32_bits(mpfr(x)) for x in (0.5, 1.0, 1.5, 2.0, -0.25, 0.999, 1.0009765625)]
    return out


def _midpoints(dst, rng, n):
    """f32 bit patterns at and next to the midpoint of two neighbouring `dst` values."""
    width, eb, fb, bias, emin = _params(dst)
    out = []
    for h in rng.integers(0, ((1 << eb) - 1) << fb, size=n):   # finite positive dst values
        h = int(h)
        lo = o_decode(h, dst)[2] if h else mpfr(0)
        hi = o_decode(h + 1, dst)[2] if h + 1 < ((1 << eb) - 1) << fb else None
        if hi is None:
            continue
        mid = gmpy2.context(precision=64).add(lo, hi) / 2
        m = _f32_bits(mid)
        sgn = int(rng.integers(0, 2)) << 31
        for d in (-1, 0, 1):
            out.append(sgn | (m + d))
    return out


def inputs32(dst, seed=1):
    rng = np.random.default_rng(seed)
    vals = _specials32() + [int(x) for x in rng.integers(0, 1 << 32, size=1500)]
    vals += _midpoints(dst, rng, 400)
    # f32 subnormals and tiny normals (the .ftz / .rp-to-smallest-subnormal cases)
    vals += [int(x) | (int(s) << 31) for x, s in zip(rng.integers(1, 0x00900000, size=200),
                                                     rng.integers(0, 2, size=200))]
    return np.array(vals, dtype=np.uint32)


def inputs16():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)    # every pattern


def _spellings():
    """The cvt forms between .f32 and the half types that round in an IEEE mode (the .rs
    forms, which take random bits, are tested in test_smallfloat.py)."""
    return [s for s in canonical_spellings() if ".rs." not in s]


NARROW = [s for s in _spellings() if parse_cvt(s).narrowing]
WIDEN = [s for s in _spellings() if not parse_cvt(s).narrowing]


def _check(spelling, ops, got):
    ops = [np.asarray(o).reshape(-1) for o in ops]
    want = [oracle(spelling, *map(int, row)) for row in zip(*ops)]
    bad = [(tuple(hex(int(x)) for x in row), hex(int(g)), hex(w))
           for row, g, w in zip(zip(*ops), np.asarray(got).reshape(-1), want) if int(g) != w]
    assert not bad, f"{spelling}: {len(bad)} mismatches, e.g. {bad[:5]}"


# --- value tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [s for s in NARROW if parse_cvt(s).lanes == 1])
def test_narrow_against_mpfr(spelling):
    dst = parse_cvt(spelling).dtype
    a = inputs32(dst)
    got = convert(spelling, a)
    assert got.dtype == np.uint16 and got.shape == a.shape
    _check(spelling, [a], got)


@pytest.mark.parametrize("spelling", [s for s in NARROW if parse_cvt(s).lanes == 2])
def test_packed_against_mpfr(spelling):
    dst = parse_cvt(spelling).dtype.removesuffix("x2")
    a = inputs32(dst, seed=2)
    b = np.random.default_rng(3).permutation(a)
    got = convert(spelling, a, b)
    assert got.dtype == np.uint32
    _check(spelling, [a, b], got)


@pytest.mark.parametrize("spelling", WIDEN)
def test_widen(spelling):
    # every pattern for the forms without a rounding modifier, a sample for the others (on
    # cvt.f32.bf16 a rounding modifier is accepted and changes nothing)
    a = inputs16()
    if parse_cvt(spelling).rounding is not None:
        a = np.random.default_rng(4).choice(a, 3000)
    got = convert(spelling, a)
    assert got.dtype == np.uint32
    _check(spelling, [a], got)


def test_packed_order_a_is_upper():
    # manual: "the value converted from input a is stored in the upper half of d"
    assert convert("cvt.rn.f16x2.f32", 0x3F800000, 0x40000000) == 0x3C004000
    assert convert("cvt.rz.bf16x2.f32", 0x3F800000, 0x40000000) == 0x3F804000


def test_known_values():
    # 1/3 in f32 (0x3EAAAAAB): f16 rn 0x3555, rz 0x3555, rp 0x3556; bf16 rn 0x3EAB, rz 0x3EAA
    assert convert("cvt.rn.f16.f32", 0x3EAAAAAB) == 0x3555
    assert convert("cvt.rp.f16.f32", 0x3EAAAAAB) == 0x3556
    assert convert("cvt.rn.bf16.f32", 0x3EAAAAAB) == 0x3EAB
    assert convert("cvt.rz.bf16.f32", 0x3EAAAAAB) == 0x3EAA
    # 65520 ties to inf under rn; .satfinite keeps MAX_NORM; rz stays at max
    assert convert("cvt.rn.f16.f32", 0x477FF000) == 0x7C00
    assert convert("cvt.rn.satfinite.f16.f32", 0x477FF000) == 0x7BFF
    assert convert("cvt.rz.f16.f32", 0x477FF000) == 0x7BFF
    assert convert("cvt.rn.satfinite.bf16.f32", 0xFF800000) == 0xFF7F
    # smallest f32 subnormal: .rp rounds it up to the smallest f16 subnormal; .ftz flushes it
    # on bf16, and on f16 only under the manual's reading (the H100 does not: the default)
    assert convert("cvt.rp.f16.f32", 0x00000001) == 0x0001
    assert convert("cvt.rp.ftz.f16.f32", 0x00000001) == 0x0001
    with policy.using(cvt_ftz_input="flush"):
        assert convert("cvt.rp.ftz.f16.f32", 0x00000001) == 0x0000
    assert convert("cvt.rm.ftz.bf16.f32", 0x80000001) == 0x8000
    # but an f16 subnormal result is kept under .ftz (it is not single precision)
    assert convert("cvt.rn.ftz.f16.f32", 0x33800000) == 0x0001        # 2**-24
    # widening is exact; .ftz flushes a bf16 subnormal (an f32 subnormal result)
    assert convert("cvt.f32.f16", 0x0001) == 0x33800000
    assert convert("cvt.f32.bf16", 0x0001) == 0x00010000
    assert convert("cvt.ftz.f32.bf16", 0x8001) == 0x80000000
    assert convert("cvt.ftz.f32.f16", 0x0001) == 0x33800000


def test_nan_policies():
    p = ptxfp.POLICY
    assert convert("cvt.rn.f16.f32", 0x7FC00001) == p.canonical_nan_f16
    assert convert("cvt.rn.satfinite.bf16.f32", 0xFFC00000) == p.canonical_nan_bf16
    assert convert("cvt.rn.relu.f16.f32", 0xFFC00000) == p.canonical_nan_f16
    assert convert("cvt.rn.sat.f16.f32", 0x7FC00000) == 0
    # the measured defaults (an H100): cvt.f32.bf16 keeps the bits (<< 16), its .ftz form and
    # cvt.f32.f16 give the canonical NaN
    assert convert("cvt.f32.bf16", 0xFFC1) == 0xFFC10000
    assert convert("cvt.rz.f32.bf16", 0x7F81) == 0x7F810000
    assert convert("cvt.ftz.f32.bf16", 0xFFC1) == p.canonical_nan_f32
    assert convert("cvt.f32.f16", 0x7E01) == p.canonical_nan_f32
    with policy.using(widen_nan="payload"):
        assert convert("cvt.f32.bf16", 0xFFC1) == 0xFFC10000
        assert convert("cvt.f32.f16", 0x7E01) == 0x7FC02000
        assert convert("cvt.f32.f16", 0xFC01) == 0xFF802000    # signaling stays signaling
        _check("cvt.f32.bf16", [inputs16()], convert("cvt.f32.bf16", inputs16()))
    with policy.using(canonical_nan16=0x7FC0, canonical_nan32=0x7FC00000):   # old names
        assert convert("cvt.rn.f16.f32", 0x7F800001) == 0x7FC0
        assert convert("cvt.rn.bf16.f32", 0x7F800001) == 0x7FC0
        assert convert("cvt.f32.f16", 0x7C01) == 0x7FC00000
    # one switch per destination format
    with policy.using(canonical_nan_bf16=0x7FC0):
        assert convert("cvt.rn.bf16.f32", 0x7F800001) == 0x7FC0
        assert convert("cvt.rz.relu.bf16x2.f32", 0x7F800001, 0x3F800000) == 0x7FC03F80
        assert convert("cvt.rn.f16.f32", 0x7F800001) == 0x7FFF
        assert convert("cvt.rn.f16x2.f32", 0x3F800000, 0xFFC00000) == 0x3C007FFF
        assert convert("cvt.f32.f16", 0xFE01) == 0x7FFFFFFF
    with policy.using(canonical_nan_f16=0x7E00):
        assert convert("cvt.rn.f16.f32", 0x7F800001) == 0x7E00
        assert convert("cvt.rn.bf16.f32", 0x7F800001) == 0x7FFF


@pytest.mark.parametrize("flip", [dict(canonical_nan_bf16=0x7FC0), dict(canonical_nan_f16=0x7E00),
                                  dict(canonical_nan_f32=0x7FC00000, widen_nan="canonical")],
                         ids=lambda f: next(iter(f)))
def test_nan_policy_flips_against_mpfr(flip):
    """Each canonical-NaN field flipped alone, every cvt form against the oracle here (which
    picks the field by the destination format on its own)."""
    with policy.using(**flip):
        for s in NARROW:
            ins = parse_cvt(s)
            a = inputs32(ins.dtype.removesuffix("x2"), seed=5)[:400]
            ops = [a] if ins.lanes == 1 else [a, a[::-1]]
            _check(s, ops, convert(s, *ops))
        for s in WIDEN:
            a = inputs16()[0x7F00:0x8100]
            _check(s, [a], convert(s, a))


#: widening a NaN, worked by hand from the layouts (f16 s|5|10, bf16 s|8|7, f32 s|8|23; the
#: first fraction bit is the quiet bit, IEEE 754-2019 §6.2.1) as policy.py defines the readings:
#: "payload" = s << 31 | 0x7F800000 | F << (23 - AM), "quiet" = the same | 0x00400000.
#:   f16 0x7C01: s 0, F 0x001 (signalling, payload 1); F << 13 = 0x00002000
#:   f16 0xFC01: s 1, F 0x001 (signalling, payload 1); 0x80000000 | 0x7F800000 | 0x00002000
#:   f16 0x7E00: s 0, F 0x200 (quiet, payload 0);      F << 13 = 0x00400000, the quiet bit
#:   bf16 0x7F81: s 0, F 0x01 (signalling, payload 1); F << 16 = 0x00010000
#:   bf16 0xFFC1: s 1, F 0x41 (quiet, payload 1);      F << 16 = 0x00410000
WIDEN_NAN_TABLE = [  # (source type, input, "payload" bits, "quiet" bits)
    ("f16", 0x7C01, 0x7F802000, 0x7FC02000),
    ("f16", 0xFC01, 0xFF802000, 0xFFC02000),
    ("f16", 0x7E00, 0x7FC00000, 0x7FC00000),
    ("bf16", 0x7F81, 0x7F810000, 0x7FC10000),
    ("bf16", 0xFFC1, 0xFFC10000, 0xFFC10000),
]


def _nans16(atype):
    """Every NaN pattern of the 16-bit format, both signs, signalling and quiet."""
    inf = 0x7C00 if atype == "f16" else 0x7F80
    pos = np.arange(inf + 1, 0x8000, dtype=np.uint32)
    return np.concatenate([pos, pos | 0x8000]).astype(np.uint16)


@pytest.mark.parametrize("spelling", WIDEN)
def test_widen_nan_quiet_against_mpfr(spelling):
    """widen_nan="quiet" (IEEE's conversion) on every widening form: the hand-worked table,
    then every NaN of the source format (signalling and quiet, both signs) and its
    neighbours against the oracle here, which builds the quiet NaN with its own code."""
    ins = parse_cvt(spelling)
    with policy.using(widen_nan="quiet"):
        for atype, h, payload_bits, quiet_bits in WIDEN_NAN_TABLE:
            if atype != ins.atype:
                continue
            want = 0 if ins.sat else quiet_bits              # .sat: NaN -> +0.0
            assert convert(spelling, h) == want, (spelling, hex(h))
            assert oracle(spelling, h) == want, (spelling, hex(h))
        a = _nans16(ins.atype)
        got = convert(spelling, a)
        _check(spelling, [a], got)
        nan = ((got & 0x7FFFFFFF) > 0x7F800000)
        if ins.sat:
            assert not nan.any() and not got.any()
        else:
            assert nan.all() and (got & 0x00400000).all()    # every one quiet
            # the payload survives: back to the 16-bit fraction below the quiet bit
            am = 10 if ins.atype == "f16" else 7
            assert np.array_equal((got >> (23 - am)) & ((1 << (am - 1)) - 1),
                                  a & ((1 << (am - 1)) - 1))
            assert np.array_equal(got >> 31, a >> 15)
        edges = inputs16()[0x7B00:0x8100]
        edges = np.concatenate([edges, edges | 0x8000]).astype(np.uint16)
        _check(spelling, [edges], convert(spelling, edges))


def test_widen_nan_three_readings_by_hand():
    """The table above under each reading; a signalling NaN tells all three apart."""
    for atype, h, payload_bits, quiet_bits in WIDEN_NAN_TABLE:
        s = f"cvt.f32.{atype}"
        for setting, want in (("canonical", ptxfp.POLICY.canonical_nan_f32),
                              ("payload", payload_bits), ("quiet", quiet_bits)):
            with policy.using(widen_nan=setting):
                assert convert(s, h) == want, (s, hex(h), setting)
                assert oracle(s, h) == want, (s, hex(h), setting)


@pytest.mark.parametrize("flip", [dict(sat_minus_zero_to_plus=False),
                                  dict(relu_minus_zero_to_plus=False)])
def test_minus_zero_policies(flip):
    with policy.using(**flip):
        for s in ("cvt.rn.sat.f16.f32", "cvt.rz.relu.bf16.f32", "cvt.rn.relu.f16x2.f32",
                  "cvt.sat.f32.f16"):
            src = parse_cvt(s)
            ops = [np.array([0x80000000, 0x80000001, 0xBF800000, 0], np.uint32)] * src.lanes
            if not src.narrowing:
                ops = [np.array([0x8000, 0x8001, 0xBC00, 0], np.uint16)]
            _check(s, ops, convert(s, *ops))


def test_broadcast_and_scalars():
    a = np.array([[0x3F800000], [0x40000000]], np.uint32)
    b = np.array([0x3F800000, 0x40400000, 0x40800000], np.uint32)
    got = convert("cvt.rn.f16x2.f32", a, b)
    assert got.shape == (2, 3) and got.dtype == np.uint32
    assert int(got[1, 2]) == 0x40004400
    assert isinstance(convert("cvt.rn.f16.f32", 0x3F800000), int)
    assert convert("cvt.rn.f16.f32", np.array([], np.uint32)).shape == (0,)
    assert ptxfp.convert is convert


def test_parallel_path_matches_serial(monkeypatch):
    from ptxfp.core import _jit
    a = np.random.default_rng(9).integers(0, 1 << 32, size=5000, dtype=np.uint32)
    want = convert("cvt.rn.bf16.f32", a)
    monkeypatch.setattr(_jit, "PARALLEL_MIN", 100)
    monkeypatch.setenv("PTXFP_NUM_THREADS", "4")
    assert np.array_equal(convert("cvt.rn.bf16.f32", a), want)


# --- spellings --------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling, canonical", [
    ("cvt.rn.f16.f32", "cvt.rn.f16.f32"),
    ("cvt.rn.f16.f32.relu.satfinite", "cvt.rn.relu.satfinite.f16.f32"),
    ("cvt.satfinite.rz.bf16x2.f32", "cvt.rz.satfinite.bf16x2.f32"),
    ("cvt.sat.ftz.rm.f16.f32", "cvt.rm.ftz.sat.f16.f32"),
    ("cvt.f32.bf16", "cvt.f32.bf16"),
    ("cvt.rn.f32.bf16", "cvt.rn.f32.bf16"),
])
def test_parse_canonical(spelling, canonical):
    assert str(parse_cvt(spelling)) == canonical


def test_parse_fields():
    ins = parse_cvt("cvt.rn.relu.satfinite.bf16x2.f32")
    assert (ins.dtype, ins.atype, ins.rounding, ins.lanes) == ("bf16x2", "f32", "rn", 2)
    assert ins.relu and ins.satfinite and not (ins.ftz or ins.sat)
    assert ins.operand_names == ("a", "b") and ins.operand_formats == ("f32", "f32")
    assert (ins.min_ptx, ins.min_sm) == ((8, 1), 80)
    w = parse_cvt("cvt.ftz.f32.bf16")
    assert w.operand_formats == ("bf16",) and (w.min_ptx, w.min_sm) == ((7, 8), 90)
    assert w.rounding is None and not w.narrowing


@pytest.mark.parametrize("spelling, rule", [
    ("cvt.f16.f32", "rounding-required"),
    ("cvt.rna.f16.f32", "illegal-rounding"),
    ("cvt.rna.bf16.f32", "illegal-rounding"),
    ("cvt.rm.f16x2.f32", "illegal-rounding"),
    ("cvt.rm.relu.f16.f32", "illegal-rounding"),
    ("cvt.rp.satfinite.bf16.f32", "illegal-rounding"),
    ("cvt.rn.f32.f16", "illegal-rounding"),
    ("cvt.rn.sat.bf16.f32", "illegal-modifier"),
    ("cvt.rn.ftz.f16x2.f32", "illegal-modifier"),
    ("cvt.relu.f32.f16", "illegal-modifier"),
    ("cvt.sat.f32.bf16", "illegal-modifier"),
    ("cvt.rn.ftz.relu.f16.f32", "illegal-combination"),
    ("cvt.rn.sat.relu.f16.f32", "illegal-combination"),
    ("cvt.rn.sat.satfinite.f16.f32", "illegal-combination"),
    ("cvt.rn.ftz.satfinite.bf16.f32", "illegal-combination"),
    ("cvt.rn.rz.f16.f32", "rounding-conflict"),
    ("cvt.rn.s32.s16", "not-modeled"),     # (cvt.rni.s32.f32 is modeled: the cvtx family)
    ("cvt.rn.s32.f32", "illegal-rounding"),
    ("cvt.rn.f16", "missing-type"),
    ("cvt.rn.fast.f16.f32", "unknown-modifier"),
    ("cvt.rn.f16.f16x2", "illegal-type"),
])
def test_parse_errors(spelling, rule):
    with pytest.raises(SpellingError) as e:
        parse_cvt(spelling)
    assert e.value.rule == rule
    assert spelling in str(e.value)


def test_operand_errors():
    with pytest.raises(OperandError, match="takes 2 source operands"):
        convert("cvt.rn.f16x2.f32", 0)
    with pytest.raises(OperandError, match="does not fit in 16 bits"):
        convert("cvt.f32.f16", 0x10000)
    with pytest.raises(OperandError, match=r"float64 values.*np.float32"):
        convert("cvt.rn.f16.f32", np.array([1.0]))


# --- ptxas agrees on the spellings and their requirements --------------------------------------

PTXAS = shutil.which("ptxas") or ("/usr/local/bin/ptxas" if os.path.exists("/usr/local/bin/ptxas")
                                  else None)
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")


def _line(spelling):
    ins = parse_cvt(spelling)
    d = {"f16": "%h0", "bf16": "%h0", "f32": "%f0"}.get(ins.dtype, "%r0")
    srcs = ["%f1", "%f2"][:ins.lanes] if ins.narrowing else ["%h1"]
    return f"{spelling} {d}, {', '.join(srcs)};"


def _arch(sm):
    # ptxas 13.0 compiles only for sm_75 and up; an older .target is compiled for sm_75
    return f"sm_{max(sm, 75)}"


def _ptxas_errors(lines, version, sm):
    """ptxas on one entry holding `lines`: the set of line indexes it reports an error for."""
    head = (f".version {version[0]}.{version[1]}\n.target sm_{sm}\n"
            + (".address_size 64\n" if version >= (2, 3) else "")
            + ".visible .entry k() {\n.reg .f32 %f<4>;\n.reg .b16 %h<4>;\n.reg .b32 %r<4>;\n")
    first = head.count("\n") + 1
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.ptx")
        with open(path, "w") as f:
            f.write(head + "\n".join(lines) + "\nret;\n}\n")
        p = subprocess.run([PTXAS, f"-arch={_arch(sm)}", path, "-o", os.path.join(d, "t.cubin")],
                           capture_output=True, text=True)
    bad = {int(m.group(1)) - first for m in re.finditer(r"line (\d+); error", p.stderr)}
    assert p.returncode == 0 or bad, p.stderr
    return bad


@needs_ptxas
def test_ptxas_accepts_every_modeled_form():
    forms = _spellings()
    bad = _ptxas_errors([_line(s) for s in forms], (8, 6), 100)
    assert not bad, [forms[i] for i in sorted(bad)]


REJECTED = ["cvt.f16.f32", "cvt.rna.f16.f32", "cvt.rna.bf16.f32", "cvt.rm.f16x2.f32",
            "cvt.rm.relu.f16.f32", "cvt.rp.satfinite.bf16.f32", "cvt.rn.f32.f16",
            "cvt.rn.sat.bf16.f32", "cvt.rn.ftz.f16x2.f32", "cvt.relu.f32.f16",
            "cvt.sat.f32.bf16", "cvt.rn.ftz.relu.f16.f32", "cvt.rn.sat.relu.f16.f32",
            "cvt.rn.sat.satfinite.f16.f32", "cvt.rn.ftz.satfinite.bf16.f32",
            "cvt.rn.sat.f16x2.f32", "cvt.rz.ftz.relu.bf16.f32", "cvt.satfinite.f32.f16",
            "cvt.rn.ftz.ftz.f16.f32", "cvt.rn.rn.f16.f32"]


@needs_ptxas
def test_ptxas_rejects_what_ptxfp_rejects():
    lines = []
    reg = {"f32": "%f", "f16": "%h", "bf16": "%h", "f16x2": "%r", "bf16x2": "%r"}
    for s in REJECTED:
        with pytest.raises(SpellingError):
            parse_cvt(s)
        dtype, atype = s.split(".")[-2:]
        srcs = f"{reg[atype]}1, {reg[atype]}2" if dtype.endswith("x2") else f"{reg[atype]}1"
        lines.append(f"{s} {reg[dtype]}0, {srcs};")
    bad = _ptxas_errors(lines, (8, 6), 100)
    assert bad == set(range(len(lines))), [REJECTED[i] for i in range(len(lines)) if i not in bad]


@needs_ptxas
def test_ptxas_requirements():
    """Each form is accepted at its stated minimum and rejected one step below on either axis,
    down to what ptxas 13.0 still knows (.version 1.0, .target sm_10): below the recorded
    matrix (4.0 / sm_50) this is the only check of the table's requirements."""
    from ptxfp.ptx.check import KNOWN_VERSIONS, TARGET_MIN_VERSION, target_sm
    plain = sorted((t for t in TARGET_MIN_VERSION if t[-1].isdigit()), key=target_sm)
    groups = {}
    for s in _spellings():
        ins = parse_cvt(s)
        t = f"sm_{ins.min_sm}"
        v = max(ins.min_ptx, TARGET_MIN_VERSION[t])
        groups.setdefault((v, ins.min_sm, True), []).append(s)
        below = [x for x in plain if target_sm(x) < ins.min_sm]
        if below:                                               # the target just below
            lt = below[-1]
            groups.setdefault((max(v, TARGET_MIN_VERSION[lt]), target_sm(lt), False),
                              []).append(s)
        lower = [x for x in KNOWN_VERSIONS if x < ins.min_ptx]
        if lower and lower[-1] >= TARGET_MIN_VERSION[t]:        # the version just below
            groups.setdefault((lower[-1], ins.min_sm, False), []).append(s)
    assert any(v < (4, 0) and ok for (v, sm, ok) in groups)     # reaches below the matrix
    for (v, sm, ok), ss in sorted(groups.items()):
        bad = _ptxas_errors([_line(s) for s in ss], v, sm)
        if ok:
            assert not bad, (v, sm, [ss[i] for i in sorted(bad)])
        else:
            assert bad == set(range(len(ss))), \
                (v, sm, [ss[i] for i in range(len(ss)) if i not in bad])


# --- convert(..., out=) -------------------------------------------------------------------

def test_convert_out_receives_the_result():
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(1000) * 100).astype(np.float32)
    out = np.full(x.shape, 0x1234, np.uint16)
    r = convert("cvt.rn.f16.f32", x.view(np.uint32), out=out)
    assert r is out
    # NumPy's float32 -> float16 conversion rounds once to nearest-even (finite inputs)
    assert np.array_equal(out, x.astype(np.float16).view(np.uint16))


def test_convert_out_overlapping_operand_is_read_first():
    # f16 operands stored in the same buffer as the f32 destination, shifted by 4 bytes
    buf = np.zeros(6, np.uint32)
    halves = buf.view(np.uint16)[2:6]
    halves[:] = np.array([1.0, -2.0, 0.5, 4.0], np.float16).view(np.uint16)
    convert("cvt.f32.f16", halves, out=buf[0:4])
    assert np.array_equal(buf[0:4].view(np.float32), np.array([1.0, -2.0, 0.5, 4.0], np.float32))
    # packed narrowing from two strided views: a lands in d[31:16], b in d[15:0]
    x = np.arange(1, 9, dtype=np.float32)
    packed = np.zeros(4, np.uint32)
    convert("cvt.rn.bf16x2.f32", x.view(np.uint32)[0::2], x.view(np.uint32)[1::2], out=packed)
    hi = (x[0::2].view(np.uint32) >> 16).astype(np.uint32)  # small integers: bf16 exact
    lo = (x[1::2].view(np.uint32) >> 16).astype(np.uint32)
    assert np.array_equal(packed, (hi << 16) | lo)


def test_convert_out_errors():
    with pytest.raises(ptxfp.OperandError, match="dtype must be uint16"):
        convert("cvt.rn.f16.f32", np.zeros(3, np.uint32), out=np.zeros(3, np.uint32))
    with pytest.raises(ptxfp.OperandError, match="shape must be"):
        convert("cvt.rn.f16.f32", np.zeros(3, np.uint32), out=np.zeros(4, np.uint16))
