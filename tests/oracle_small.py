"""Independent reference for the small-float cvt forms (fp8, fp6, fp4, ue8m0, and .rs).

Written from the PTX ISA manual (9.7.9.21 cvt; 5.2.5 alternate floating-point formats) and
docs/semantics.md, sharing no code with ptxfp: each format is a handful of field widths
written out below, values are decoded from their bit fields into exact MPFR numbers, a
narrowing is one MPFR rounding (``gmpy2`` context with the format's precision and exponent
range, subnormals by ``subnormalize``), then .satfinite/.relu/NaN as the manual (and, where it
is silent, ptxfp's policy, passed in) says; bits are encoded here again.  Stochastic rounding
is written with exact rationals: the magnitude's discarded bits (below the destination's last
place) are added to the random bits, a carry rounds away from zero.

Entry point: ``convert(spelling, *operands, policy) -> int`` on Python ints, operands in PTX
order as ``ptxfp.convert`` takes them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import gmpy2


@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    mbits: int
    bias: int
    maxbits: int            # the largest finite magnitude's bits
    inf: bool = False       # IEEE infinities (e5m2, f16, bf16)
    nan: str = "none"       # "ieee", "ones" (all-ones magnitude), "none"
    signed: bool = True

    @property
    def width(self):
        return self.ebits + self.mbits + int(self.signed)


FMTS = {
    "e4m3": Fmt("e4m3", 4, 3, 7, 0x7E, nan="ones"),
    "e5m2": Fmt("e5m2", 5, 2, 15, 0x7B, inf=True, nan="ieee"),
    "e2m3": Fmt("e2m3", 2, 3, 1, 0x1F),
    "e3m2": Fmt("e3m2", 3, 2, 3, 0x1F),
    "e2m1": Fmt("e2m1", 2, 1, 1, 0x7),
    "f16": Fmt("f16", 5, 10, 15, 0x7BFF, inf=True, nan="ieee"),
    "bf16": Fmt("bf16", 8, 7, 127, 0x7F7F, inf=True, nan="ieee"),
    "f32": Fmt("f32", 8, 23, 127, 0x7F7FFFFF, inf=True, nan="ieee"),
}
#: container bits of one lane of each packed type
CONTAINER = {"e4m3": 8, "e5m2": 8, "e2m3": 8, "e3m2": 8, "e2m1": 4, "ue8m0": 8,
             "f16": 16, "bf16": 16}
CTX = gmpy2.context(precision=200, emin=-100000, emax=100000)


def _frac(v):
    """The exact rational value of an mpfr."""
    n, d = v.as_integer_ratio()
    return Fraction(int(n), int(d))


def decode(bits, f):
    """Exact value (mpfr), or 'nan', or +-inf, of ``bits`` of format ``f``."""
    s = (bits >> (f.width - 1)) & 1 if f.signed else 0
    mag = bits & ((1 << (f.ebits + f.mbits)) - 1)
    e, m = mag >> f.mbits, mag & ((1 << f.mbits) - 1)
    top = (1 << f.ebits) - 1
    if f.nan == "ieee" and e == top:
        return "nan" if m else (-math.inf if s else math.inf)
    if f.nan == "ones" and mag == (1 << (f.ebits + f.mbits)) - 1:
        return "nan"
    with gmpy2.context(CTX):
        if e == 0:
            v = gmpy2.mpfr(m) * gmpy2.mpfr(2) ** (1 - f.bias - f.mbits)
        else:
            v = gmpy2.mpfr((1 << f.mbits) | m) * gmpy2.mpfr(2) ** (e - f.bias - f.mbits)
        return -v if s else v


def _encode_finite(v, f):
    """Bits of the representable finite value ``v`` (mpfr) in ``f`` (sign of zero kept)."""
    s = 1 if gmpy2.is_signed(v) else 0
    a = abs(v)
    if a == 0:
        return s << (f.width - 1)
    with gmpy2.context(CTX):
        emin = 1 - f.bias
        x = _frac(a)
        e = math.floor(math.log2(x))
        while Fraction(2) ** e > x:
            e -= 1
        while Fraction(2) ** (e + 1) <= x:
            e += 1
        if e < emin:                                       # subnormal
            q = x / Fraction(2) ** (emin - f.mbits)
            assert q.denominator == 1
            field = int(q)
        else:
            q = x / Fraction(2) ** (e - f.mbits)
            assert q.denominator == 1
            field = ((e + f.bias) << f.mbits) | (int(q) - (1 << f.mbits))
    return (s << (f.width - 1)) | field


def _round_exact(v, f, rnd):
    """``v`` rounded once into format ``f`` (an mpfr), underflow to signed zero included."""
    ctx = gmpy2.context(precision=f.mbits + 1, emin=(1 - f.bias) - f.mbits + 1, emax=100000,
                        subnormalize=True,
                        round={"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero,
                               "rp": gmpy2.RoundUp, "rm": gmpy2.RoundDown}[rnd])
    with gmpy2.context(ctx):
        r = gmpy2.mul(v, 1)                       # one rounding in the context
    if r == 0:
        r = -gmpy2.mpfr(0) if gmpy2.is_signed(v) else gmpy2.mpfr(0)
    return r


def narrow(bits_or_value, f_name, rnd, relu, policy, src="f32"):
    """One lane: a source lane's bits (format ``src``) to ``f_name`` bits, .satfinite applied
    (required on every fp8/fp6/fp4 form; .rs with or without it is ``narrow_rs``)."""
    v = decode(bits_or_value, FMTS[src])
    f = FMTS[f_name]
    if v == "nan":
        return policy.canonical_nan(f_name)
    if v in (math.inf, -math.inf):
        r_bits = f.maxbits | ((1 << (f.width - 1)) if v < 0 else 0)
    else:
        r = _round_exact(v, f, rnd)
        maxv = decode(f.maxbits, f)
        if abs(r) > maxv:
            r = -maxv if r < 0 else maxv
        r_bits = _encode_finite(r, f)
    if relu and r_bits >> (f.width - 1):
        r_bits = 0
    return r_bits


def ue8m0(bits, rnd, satfinite, src="f32"):
    """One lane into ue8m0 (2**(k-127), 0xFF NaN), from the magnitude of the source."""
    v = decode(bits, FMTS[src])
    if v == "nan":
        return 0xFF
    if v in (math.inf, -math.inf):
        return 0xFE if satfinite else 0xFF
    a = abs(v)
    if a == 0:
        return 0
    x = _frac(a)
    k = math.floor(math.log2(x))
    while Fraction(2) ** k > x:
        k -= 1
    while Fraction(2) ** (k + 1) <= x:
        k += 1
    if rnd == "rp" and Fraction(2) ** k != x:
        k += 1
    code = max(k + 127, 0)
    if code > 254:
        code = 254 if satfinite else 255
    return code


@functools.lru_cache(maxsize=None)
def widen(bits, f_name, dst, relu, policy):
    """One small-format lane to an f16/bf16 lane (exact)."""
    v = decode(bits, FMTS[f_name]) if f_name != "ue8m0" else (
        "nan" if bits == 0xFF else gmpy2.mpfr(2) ** (bits - 127))
    d = FMTS[dst]
    if v == "nan":
        return policy.canonical_nan(dst)
    if v in (math.inf, -math.inf):
        r = ((1 << (d.width - 1)) if v < 0 else 0) | (((1 << d.ebits) - 1) << d.mbits)
    else:
        r = _encode_finite(_round_exact(v, d, "rn"), d)
    if relu and r >> (d.width - 1):
        r = 0
    return r


def narrow_rs(bits, f_name, R, K, relu, satfinite, policy):
    """One f32 lane to ``f_name`` with stochastic rounding: random bits R (K bits) added to the
    top K discarded bits of the magnitude; a carry rounds away from zero."""
    v = decode(bits, FMTS["f32"])
    f = FMTS[f_name]
    sbit = 1 << (f.width - 1)
    if v == "nan":
        return policy.canonical_nan(f_name)
    neg = v < 0 or (v == 0 and gmpy2.is_signed(v))
    if v in (math.inf, -math.inf):
        mag = f.maxbits if satfinite or not f.inf else ((1 << f.ebits) - 1) << f.mbits
    else:
        x = _frac(abs(v))
        emin = 1 - f.bias
        e = emin
        if x > 0:
            e = math.floor(math.log2(x))
            while Fraction(2) ** e > x:
                e -= 1
            while Fraction(2) ** (e + 1) <= x:
                e += 1
            e = max(e, emin)
        ulp = Fraction(2) ** (e - f.mbits)
        q = math.floor(x / ulp)
        frac = x / ulp - q
        top = math.floor(frac * 2 ** K)
        carry = top + R >= 2 ** K
        q += carry
        with gmpy2.context(CTX):
            val = gmpy2.mpfr(q) * gmpy2.mpfr(2) ** (e - f.mbits)
        maxv = decode(f.maxbits, f)
        if val > maxv:      # past the largest finite: truncated, it is that; carried, inf
            mag = f.maxbits if satfinite or not f.inf or not carry else \
                ((1 << f.ebits) - 1) << f.mbits
        else:
            mag = _encode_finite(val, f) & (sbit - 1)
    r = mag | (sbit if neg else 0)
    if relu and neg:
        r = 0
    return r


# --------------------------------------------------------------------------------------------
# whole instructions

def _lanes(x, n, c):
    """The n lanes of x, top lane first."""
    return [(x >> (c * (n - 1 - j))) & ((1 << c) - 1) for j in range(n)]


def _pack(vals, c):
    r = 0
    for v in vals:
        r = (r << c) | v
    return r


def convert(spelling, *ops, policy):
    toks = spelling.split(".")
    relu, satf = "relu" in toks, "satfinite" in toks
    rnd = next(t for t in toks if t in ("rn", "rz", "rp", "rs"))
    d, s = toks[-2], toks[-1]
    dl = d[:-2]                                        # the lane format
    if rnd == "rs":
        *srcs, rbits = ops
        if d in ("f16x2", "bf16x2"):
            rs = [(rbits >> 16) & 0x1FFF, rbits & 0x1FFF] if d == "f16x2" else \
                [(rbits >> 16) & 0xFFFF, rbits & 0xFFFF]
            K = 13 if d == "f16x2" else 16          # manual: 13 LSBs of each half for f16
        elif d == "e2m1x4":
            rs, K = [(rbits >> 24) & 0xFF, (rbits >> 8) & 0xFF, (rbits >> 16) & 0xFF,
                     rbits & 0xFF], 8
        elif policy.rs_x4_bits == "shared16":
            rs, K = [rbits >> 16, rbits >> 16, rbits & 0xFFFF, rbits & 0xFFFF], 16
        else:
            rs, K = [(rbits >> sh) & 0xFF for sh in (24, 16, 8, 0)], 8
        vals = [narrow_rs(x, dl, r, K, relu, satf, policy) for x, r in zip(srcs, rs)]
        return _pack(vals, CONTAINER[dl])
    if d == "ue8m0x2":
        lanes = list(ops) if s == "f32" else _lanes(ops[0], 2, 16)
        return _pack([ue8m0(x, rnd, satf, "f32" if s == "f32" else "bf16") for x in lanes], 8)
    if s in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2"):
        sl = s[:-2]
        c = CONTAINER[sl]
        lanes = _lanes(ops[0], 2, c)
        if sl in ("e2m3", "e3m2"):
            lanes = [x & 0x3F for x in lanes]          # the two padding bits are not read
        out = [widen(x, sl, d[:-2], relu, policy) for x in lanes]
        if satf:
            # .satfinite (manual, cvt): a value past the largest finite (an infinity) becomes
            # the largest finite of its sign; NaN stays NaN
            df = FMTS[d[:-2]]
            sb = 1 << (df.width - 1)
            inf = ((1 << df.ebits) - 1) << df.mbits
            out = [(r & sb) | df.maxbits if (r & (sb - 1)) == inf else r for r in out]
        return _pack(out, 16)
    # narrowing into fp8/fp6/fp4 (from f32, or the two lanes of f16x2/bf16x2)
    if s == "f32":
        return _pack([narrow(x, dl, rnd, relu, policy) for x in ops], CONTAINER[dl])
    return _pack([narrow(x, dl, rnd, relu, policy, src=s[:-2]) for x in _lanes(ops[0], 2, 16)],
                 CONTAINER[dl])
