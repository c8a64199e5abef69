"""An exact reference of the tensor-core block step, written plainly from the papers'
description (Fasi et al. 2021; Khattak & Mikaitis 2025; MMA-Sim, Xie et al. 2025), in Python
Fractions, element by element.  It shares no code with ptxfp.tensor: values are read with
ml_dtypes, exponents worked out from the values, the rounding done here on rationals.

One step (``step``): D = c + sum_k a_k*b_k where every product is exact; every term (c too)
has an exponent: the sum of its factors' exponents, each the exponent of the factor's leading
bit but at least its format's smallest normal exponent; a zero product and a zero c have the
fixed exponent ``ze`` (MMA-Sim 2.1.1's e_zero: for an f32 result -131 on Volta, -132 on
Turing/Ampere/Ada, -133 on Hopper/Blackwell, -139 for the mxf4 kinds; for an f16 result -19,
-20, -21); every term is truncated toward zero to a multiple of 2**(E - F) for E the largest
term exponent; the truncated terms are summed exactly and the sum rounded once: toward zero
into f32 with P - 1 fraction bits (P = 24, or 14 on the fp8 path of sm_89/sm_90), an overflow
giving infinity; or to nearest even into f16; a zero result is +0.  A NaN factor or c, an
infinity times zero, or infinities of both signs give the canonical NaN (0x7FFFFFFF, 0x7FFF);
other infinities pass through.

``ze=None`` is MMA-Sim's January 2026 reading instead (ptxfp's policy
``mma_model="mmasim-2026-01"``): a zero *factor* has the exponent -126 (so a zero product's
exponent is -126 plus the other factor's), and a nonzero sum that rounds to zero keeps its sign.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np

ZERO_EXP = -126
DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
      "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
      "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
      "e2m1": ml_dtypes.float4_e2m1fn}
#: smallest normal exponent of each element format
EMIN = {"f16": -14, "bf16": -126, "tf32": -126, "f32": -126, "e4m3": -6, "e5m2": -14,
        "e2m3": 0, "e3m2": -2, "e2m1": 0, "ue4m3": -6, "ue8m0": -127}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "e4m3": 8, "e5m2": 8, "e2m3": 8, "e3m2": 8,
         "e2m1": 8}


def value(bits: int, t: str) -> float:
    """The value of one element's bits (a Python float: exact for all these formats)."""
    if t == "tf32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFE000))[0]
    if t == "ue8m0":
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    if t == "ue4m3":
        return float(np.array([bits & 0x7F], np.uint8).view(ml_dtypes.float8_e4m3fn)[0])
    arr = np.array([bits], UINT[WIDTH[t]]).view(DT[t])
    return float(arr[0])


def exponent(x: float, t: str) -> int:
    """The exponent a factor brings to the alignment (a zero: the January reading's -126)."""
    if x == 0:
        return ZERO_EXP
    e = math.frexp(abs(x))[1] - 1
    return max(e, EMIN[t])


def _nan(out: str) -> int:
    return 0x7FFFFFFF if out == "f32" else 0x7FFF


def _inf(neg: bool, out: str) -> int:
    if out == "f32":
        return 0xFF800000 if neg else 0x7F800000
    return 0xFC00 if neg else 0x7C00


def round_out(v: Fraction, out: str, P: int = 24, plus_zero: bool = True) -> int:
    """Round the exact value into the result format's bits (a zero result: +0 when
    ``plus_zero``, else the sign of ``v``)."""
    if v == 0:
        return 0
    bits = _round_out(v, out, P)
    if plus_zero and bits == (0x80000000 if out == "f32" else 0x8000):
        return 0
    return bits


def _round_out(v: Fraction, out: str, P: int) -> int:
    neg = v < 0
    a = -v if neg else v
    e = math.floor(math.log2(a))                      # then correct for float error
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    if out == "f32":
        q = Fraction(2) ** (max(e, -126) - (P - 1))
        r = math.floor(a / q) * q                     # toward zero
        if r >= Fraction(2) ** 128:
            return _inf(neg, out)
        bits = struct.unpack("<I", struct.pack("<f", float(r)))[0]
        return bits | (0x80000000 if neg else 0)
    q = Fraction(2) ** (max(e, -14) - 10)
    r = round(a / q) * q                              # half to even
    if r >= 65536:
        return _inf(neg, out)
    bits = int(np.array([float(r)], np.float16).view(np.uint16)[0])
    return bits | (0x8000 if neg else 0)


def step(a: list[int], b: list[int], c: int, at: str, bt: str, ct: str, F: int, out: str,
         P: int = 24, sa: int | None = None, sb: int | None = None, st: str = "ue8m0",
         ze: int | None = None) -> int:
    """One block step on bits: returns the result's bits (``ct`` is the accumulator's type,
    which is ``out``).  ``sa``/``sb``: the scale factors' bits (mxf8f6f4), one each.  ``ze``:
    the zero exponent (None: the January 2026 reading; module docstring)."""
    av = [value(x, at) for x in a]
    bv = [value(x, bt) for x in b]
    cv = value(c, ct)
    sav = value(sa, st) if sa is not None else 1.0
    sbv = value(sb, st) if sb is not None else 1.0
    vals = av + bv + [cv, sav, sbv]
    if any(math.isnan(x) or math.isinf(x) for x in vals):
        total = cv
        for x, y in zip(av, bv):
            total += x * y * sav * sbv                # float: inf*0 = nan, inf-inf = nan
        if math.isnan(total):
            return _nan(out)
        return _inf(total < 0, out)
    es = exponent(sav, st) + exponent(sbv, st) if sa is not None else 0
    terms = [(Fraction(cv), exponent(cv, ct) if cv != 0 or ze is None else ze)]
    for x, y in zip(av, bv):
        p = Fraction(x) * Fraction(y) * Fraction(sav) * Fraction(sbv)
        e = exponent(x, at) + exponent(y, bt) + es
        terms.append((p, ze if p == 0 and ze is not None else e))
    E = max(e for _, e in terms)
    unit = Fraction(2) ** (E - F)
    total = sum((int(v / unit) for v, _ in terms), 0)   # int(): truncation toward zero
    return round_out(total * unit, out, P, plus_zero=ze is not None)


def group_step(a: list[int], b: list[int], c: int, sa: list[int], sb: list[int], st: str,
               F: int = 35, G: int = 16, ze: int | None = None) -> int:
    """mxf4/mxf4nvf4: c + sum over groups g of (exact sum of G fp4 products) * sa_g * sb_g,
    a group's exponent being the sum of its scale factors' exponents; f32, toward zero.
    With ``ze`` (MMA-Sim 2.1.1: -139), a zero c and a group whose G products are all zero
    or whose scale factors multiply to zero have the exponent ``ze`` (a group of nonzero
    products summing to zero keeps its scale exponent), and a zero result is +0."""
    cv = value(c, "f32")
    sav = [value(x, st) for x in sa]
    sbv = [value(x, st) for x in sb]
    if any(math.isnan(x) for x in sav + sbv + [cv]):
        return _nan("f32")
    if math.isinf(cv):
        return _inf(cv < 0, "f32")
    terms = [(Fraction(cv), exponent(cv, "f32") if cv != 0 or ze is None else ze)]
    for g in range(len(a) // G):
        prods = [Fraction(value(a[g * G + k], "e2m1")) * Fraction(value(b[g * G + k], "e2m1"))
                 for k in range(G)]
        e = exponent(sav[g], st) + exponent(sbv[g], st)
        if ze is not None and (all(p == 0 for p in prods) or sav[g] * sbv[g] == 0):
            e = ze
        terms.append((sum(prods, Fraction(0)) * Fraction(sav[g]) * Fraction(sbv[g]), e))
    E = max(e for _, e in terms)
    unit = Fraction(2) ** (E - F)
    total = sum((int(v / unit) for v, _ in terms), 0)
    return round_out(total * unit, "f32", plus_zero=ze is not None)


def _bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def fma_chain_bits(a: list[int], b: list[int], c: int, payload: bool = True) -> int:
    """f64 on bits: ``fma_chain`` with MMA-Sim 2.1.1's NaN (``payload``): a step with a NaN
    operand gives the first NaN of a_k, b_k, d with its quiet bit set; one that makes a NaN
    (inf * 0, inf - inf) gives 0xFFF8000000000000.  Else every NaN is 0x7FFFFFFFFFFFFFFF."""
    d = c
    for x, y in zip(a, b):
        nans = [v for v in (x, y, d) if math.isnan(_f64(v))]
        r = _bits64(fma_chain([_f64(x)], [_f64(y)], _f64(d)))
        if math.isnan(_f64(r)):
            r = (nans[0] | 0x8000000000000) if nans else 0xFFF8000000000000
        d = r
    if not payload and math.isnan(_f64(d)):
        return 0x7FFFFFFFFFFFFFFF
    return d


def fma_chain(a: list[float], b: list[float], c: float) -> float:
    """f64: d = fma(a_k, b_k, d) in k order, each rounded once to nearest (Fraction -> float
    is correctly rounded)."""
    d = c
    for x, y in zip(a, b):
        if any(math.isnan(v) or math.isinf(v) for v in (x, y, d)):
            d = x * y + d if not (math.isinf(x * y) and math.isinf(d)) else (x * y + d)
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(d)
        try:
            d = float(exact)
        except OverflowError:
            d = math.inf if exact > 0 else -math.inf
        if d == 0 and exact == 0:
            d = x * y + d                              # the sign of an exact zero: IEEE's
        elif d == 0 and exact < 0:
            d = -0.0                                   # a negative value rounded to zero
    return d
