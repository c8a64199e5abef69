"""Independent references for the ops families (cvt with integers and .f64, setp/set/selp,
f32/f64 min/max/abs/neg/copysign/testp, f64 arithmetic, the integer instructions).

Written from the PTX ISA manual's words and pseudocode in plain Python, sharing no code with
ptxfp: floats are decoded with ``struct`` into Python floats / Fractions (exact), rounded by
MPFR (gmpy2) where a rounding happens, and encoded with ``struct`` again; integers are Python
ints.  Only the policy values (canonical NaNs) are read from ``ptxfp.POLICY`` so that one flip
moves model and oracle together.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import gmpy2

import ptxfp

# precision, gmpy2 emin, emax (MPFR's exponent convention: 0.5 <= m < 1), width
FMT = {"f16": (11, -23, 16, 16), "bf16": (8, -132, 128, 16), "f32": (24, -148, 128, 32),
       "f64": (53, -1073, 1024, 64)}
MODE = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
        "rp": gmpy2.RoundUp}
INT_W = {f"{k}{w}": w for k in "usb" for w in (8, 16, 32, 64)}


def fdecode(t: str, bits: int) -> float:
    """The value of float bits (a Python float: exact for all four formats)."""
    if t == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if t == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if t == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def fencode(t: str, v: float) -> int:
    """Bits of a float exactly representable in ``t`` (inf included)."""
    if t == "f64":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "f16":
        return struct.unpack("<H", struct.pack("<e", v))[0]
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    assert b & 0xFFFF == 0
    return b >> 16


def is_subnormal(t: str, bits: int) -> bool:
    ebits = {"f16": 5, "bf16": 8, "f32": 8, "f64": 11}[t]
    w = FMT[t][3]
    man = w - 1 - ebits
    return (bits >> man) & ((1 << ebits) - 1) == 0 and bits & ((1 << man) - 1) != 0


def sint(bits: int, w: int) -> int:
    return bits - (1 << w) if bits >> (w - 1) else bits


def round_mpfr(t: str, x: gmpy2.mpfr, mode: str) -> int:
    """MPFR's rounding of the exact nonzero ``x`` into format ``t`` (subnormals, overflow)."""
    p, emin, emax, _ = FMT[t]
    ctx = gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True,
                        round=MODE[mode])
    r = ctx.add(x, gmpy2.mpfr(0))
    return fencode(t, float(r))


def canon(t: str) -> int:
    return ptxfp.POLICY.canonical_nan(t)


def sat_float(t: str, bits: int | None, value: float) -> int:
    """.sat on a float result: [0.0, 1.0], NaN and -0.0 -> +0.0."""
    if value != value or value <= 0:
        return 0
    if value >= 1:
        return fencode(t, 1.0)
    return bits


def cvt(spelling: str, a: int) -> int:
    """One cvt of the cvtx family, written from 9.7.9.21."""
    ins = ptxfp.parse(spelling)
    d, s, rnd = ins.dtype, ins.atype, ins.rounding
    ftz, sat = ins.ftz, ins.sat
    if d in INT_W:                                        # float -> integer
        w = INT_W[d]
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if d[0] == "s" else (0, (1 << w) - 1)
        if ftz and s == "f32" and is_subnormal(s, a):
            return 0
        x = fdecode(s, a)
        if x != x:
            return 0 if (s != "f64" and w != 64) else 1 << (w - 1)
        if math.isinf(x):
            r = hi if x > 0 else lo
        else:
            f = Fraction(x)
            r = {"rni": round(f), "rzi": math.trunc(f), "rmi": math.floor(f),
                 "rpi": math.ceil(f)}[rnd]
            r = min(max(r, lo), hi)
        return r & ((1 << w) - 1)
    if s in INT_W:                                        # integer -> float
        w = INT_W[s]
        v = sint(a, w) if s[0] == "s" else a
        if v == 0:
            bits = 0
        else:
            bits = round_mpfr(d, gmpy2.mpfr(v, 64), rnd)
        return sat_float(d, bits, fdecode(d, bits)) if sat else bits
    # float -> float
    if ftz and s == "f32" and is_subnormal(s, a):
        a &= 0x80000000
    x = fdecode(s, a)
    if x != x:
        return 0 if sat else canon(d)
    if d == s and rnd is not None:
        if math.isinf(x) or x == 0:
            r = x
        else:
            f = Fraction(x)
            i = {"rni": round(f), "rzi": math.trunc(f), "rmi": math.floor(f),
                 "rpi": math.ceil(f)}[rnd]
            r = float(i) if i != 0 else math.copysign(0.0, x)
        bits = fencode(d, r)
    elif x == 0 or math.isinf(x):
        bits = fencode(d, x)
    elif FMT[d][0] >= FMT[s][0] and FMT[d][2] >= FMT[s][2]:
        bits = fencode(d, x)                              # widening: exact
    else:
        bits = round_mpfr(d, gmpy2.mpfr(x, 53), rnd or "rn")
    if ftz and d == "f32" and is_subnormal(d, bits):
        bits &= 0x80000000
    return sat_float(d, bits, fdecode(d, bits)) if sat else bits


# --------------------------------------------------------------------------------------------
# setp / set / selp (9.7.6.1-3, 9.7.7.2)

FTYPES = ("f16", "bf16", "f32", "f64")


def _cmp_value(t: str, bits: int, ftz: bool):
    if t in FTYPES:
        if ftz and t in ("f16", "f32") and is_subnormal(t, bits):
            return 0.0
        return fdecode(t, bits)
    w = INT_W[t]
    return sint(bits, w) if t[0] == "s" else bits


def _cmp(op: str, x, y) -> bool:
    nan = isinstance(x, float) and (x != x or y != y)
    if op == "num":
        return not nan
    if op == "nan":
        return nan
    if op.endswith("u") and op != "lu":
        return nan or _cmp(op[:-1], x, y)
    if nan:
        return False
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
            "lo": x < y, "ls": x <= y, "hi": x > y, "hs": x >= y}[op]


def _bool(op, t: bool, c: bool) -> bool:
    if op is None:
        return t
    return {"and": t and c, "or": t or c, "xor": t != c}[op]


def compare(spelling: str, *ops: int) -> tuple[int, int]:
    """(first destination, second) of setp/set/selp (second: setp's q; else 0)."""
    ins = ptxfp.parse(spelling)
    mods = set(ins.modifiers)
    if ins.opcode == "selp":
        return (ops[0] if ops[2] else ops[1]), 0
    cmp = next(m for m in mods if m not in ("ftz", "and", "or", "xor"))
    bop = next((m for m in mods if m in ("and", "or", "xor")), None)
    c = bool(ops[2]) if bop else False
    t = ins.atype
    if t in ("f16x2", "bf16x2"):
        lt = t[:-2]
        r = [_cmp(cmp, _cmp_value(lt, (ops[0] >> s) & 0xFFFF, ins.ftz),
                  _cmp_value(lt, (ops[1] >> s) & 0xFFFF, ins.ftz)) for s in (0, 16)]
        return int(_bool(bop, r[0], c)), int(_bool(bop, r[1], c))
    tv = _cmp(cmp, _cmp_value(t, ops[0], ins.ftz), _cmp_value(t, ops[1], ins.ftz))
    if ins.opcode == "setp":
        return int(_bool(bop, tv, c)), int(_bool(bop, not tv, c))
    r = _bool(bop, tv, c)
    return ((0x3F800000 if ins.dtype == "f32" else 0xFFFFFFFF) if r else 0), 0


# --------------------------------------------------------------------------------------------
# f32/f64 min, max, abs, neg, copysign, testp (9.7.3)

def fops(spelling: str, *ops: int) -> int:
    ins = ptxfp.parse(spelling)
    t = ins.atype
    w = FMT[t][3]
    S = 1 << (w - 1)
    mods = set(ins.modifiers)
    if ins.opcode == "testp":
        x = fdecode(t, ops[0])
        k = next(iter(mods))
        sub = is_subnormal(t, ops[0])
        return int({"finite": math.isfinite(x), "infinite": math.isinf(x),
                    "number": x == x, "notanumber": x != x,
                    "normal": math.isfinite(x) and x != 0 and not sub,
                    "subnormal": sub}[k])
    if ins.opcode == "copysign":
        return (ops[1] & (S - 1)) | (ops[0] & S)

    def flush(b):
        return b & S if ins.ftz and is_subnormal(t, b) else b
    if ins.opcode in ("abs", "neg"):
        a = flush(ops[0])
        if fdecode(t, a) != fdecode(t, a) and ptxfp.POLICY.negabs_nan == "canonical":
            return canon(t)
        return a & (S - 1) if ins.opcode == "abs" else a ^ S
    a, b = flush(ops[0]), flush(ops[1])
    x, y = fdecode(t, a), fdecode(t, b)
    an, bn = x != x, y != y
    if (an and bn) or ("NaN" in mods and (an or bn)):
        return canon(t)
    xs = (a ^ b) & S
    if "xorsign" in mods:
        a, b, x, y = a & (S - 1), b & (S - 1), abs(x), abs(y)
    if an:
        r = b
    elif bn:
        r = a
    elif x == y == 0:
        neg_a = bool(a & S)
        if ins.opcode == "min":
            r = a if neg_a else b
        else:
            r = b if neg_a else a
    elif x == y:
        r = a
    else:
        r = a if (x < y) == (ins.opcode == "min") else b
    if "xorsign" in mods:
        r = (r & (S - 1)) | xs
    return r


# --------------------------------------------------------------------------------------------
# .f64 add/sub/mul/fma (9.7.3.1-5): MPFR at 53 bits with subnormals; NaN canonical

def f64(spelling: str, *ops: int) -> int:
    ins = ptxfp.parse(spelling)
    xs = [fdecode("f64", b) for b in ops]
    if any(x != x for x in xs):
        return canon("f64")
    p, emin, emax, _ = FMT["f64"]
    ctx = gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True,
                        round=MODE[ins.rounding])
    m = [gmpy2.mpfr(x, 53) for x in xs]
    op = ins.opcode
    if op == "add":
        r = ctx.add(m[0], m[1])
    elif op == "sub":
        r = ctx.sub(m[0], m[1])
    elif op == "mul":
        r = ctx.mul(m[0], m[1])
    else:
        r = ctx.fma(m[0], m[1], m[2])
    if gmpy2.is_nan(r):
        return canon("f64")
    return fencode("f64", float(r))
