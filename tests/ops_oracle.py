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
        if ins.opcode == "set":
            # 9.7.7.1: d[i] = BoolOp(t[i], c) ? 1.0 : 0.0 (f16x2/bf16x2), else ? 0xffff : 0
            tv = {"f16x2": 0x3C00, "bf16x2": 0x3F80}.get(ins.dtype, 0xFFFF)
            return sum((tv if _bool(bop, r[i], c) else 0) << (16 * i) for i in range(2)), 0
        return int(_bool(bop, r[0], c)), int(_bool(bop, r[1], c))
    tv = _cmp(cmp, _cmp_value(t, ops[0], ins.ftz), _cmp_value(t, ops[1], ins.ftz))
    if ins.opcode == "setp":
        return int(_bool(bop, tv, c)), int(_bool(bop, not tv, c))
    r = _bool(bop, tv, c)
    # 9.7.6.1 / 9.7.7.1: 1.0 of a float destination, else all ones of the destination
    true = {"f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}.get(
        ins.dtype, (1 << INT_W.get(ins.dtype, 32)) - 1)
    return (true if r else 0), 0


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


# --------------------------------------------------------------------------------------------
# integer instructions (9.7.1, 9.7.8, prmt 9.7.9.7): Python ints, from the manual's pseudocode

def _tw(t: str) -> int:
    return INT_W[t]


def integer(spelling: str, *ops: int) -> int:
    ins = ptxfp.parse(spelling)
    op, t, mods = ins.opcode, ins.atype, set(ins.modifiers)
    w = _tw(t)
    dtype = ins.row.operands[0].type
    dw = _tw(dtype)
    signed = t[0] == "s"

    def v(x: int, width: int = w) -> int:
        return sint(x, width) if signed else x

    def wrap(x: int) -> int:
        return x % (1 << dw)
    lo32, hi32 = -(1 << 31), (1 << 31) - 1
    if op in ("add", "sub"):
        r = v(ops[0]) + v(ops[1]) if op == "add" else v(ops[0]) - v(ops[1])
        if "sat" in mods:
            r = min(max(r, lo32), hi32)
        return wrap(r)
    if op in ("mul", "mad", "mul24", "mad24"):
        a, b = v(ops[0]), v(ops[1])
        if op in ("mul24", "mad24"):
            a, b = a & 0xFFFFFF, b & 0xFFFFFF
            if signed:
                a, b = sint(a, 24), sint(b, 24)
            p = a * b
            p = p >> 16 if "hi" in mods else p
        else:
            p = a * b
            if "hi" in mods:
                p = p >> w
        if op in ("mul", "mul24"):
            return wrap(p)
        c = v(ops[2], dw)
        if "sat" in mods:
            return wrap(min(max(p + c, lo32), hi32))
        return wrap(p + c)
    if op in ("div", "rem"):
        a, b = v(ops[0]), v(ops[1])
        if b == 0:
            return wrap(-1) if op == "div" else wrap(a)
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        return wrap(q) if op == "div" else wrap(a - q * b)
    if op in ("min", "max"):
        a, b = v(ops[0]), v(ops[1])
        r = min(a, b) if op == "min" else max(a, b)
        return wrap(max(r, 0) if "relu" in mods else r)
    if op == "sad":
        return wrap(v(ops[2]) + abs(v(ops[0]) - v(ops[1])))
    if op == "lop3":
        a, b, c, lut = ops
        d = 0
        for i in range(32):
            idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
            d |= ((lut >> idx) & 1) << i
        return d
    if op == "shf":
        a, b, c = ops
        n = min(c, 32) if "clamp" in mods else c & 31
        if "l" in mods:
            return wrap((b << n) | (a >> (32 - n))) if n else b
        return wrap((b << (32 - n)) | (a >> n)) if n < 32 else b
    if op in ("dp4a", "dp2a"):
        ta, tb = ins.types

        def part(x, k, bits, s):
            y = (x >> (k * bits)) & ((1 << bits) - 1)
            return sint(y, bits) if s else y
        cs = "s32" in (ta, tb)
        acc = sint(ops[2], 32) if cs else ops[2]
        if op == "dp4a":
            acc += sum(part(ops[0], k, 8, ta == "s32") * part(ops[1], k, 8, tb == "s32")
                       for k in range(4))
        else:
            off = 2 if "hi" in mods else 0
            acc += sum(part(ops[0], k, 16, ta == "s32") * part(ops[1], k + off, 8, tb == "s32")
                       for k in range(2))
        return acc % (1 << 32)
    if op == "abs":
        return wrap(abs(v(ops[0])))
    if op == "neg":
        return wrap(-v(ops[0]))
    if op in ("and", "or", "xor"):
        a, b = ops
        return {"and": a & b, "or": a | b, "xor": a ^ b}[op]
    if op == "not":
        return wrap(~ops[0])
    if op == "cnot":
        return int(ops[0] == 0)
    if op == "shl":
        return wrap(ops[0] << ops[1]) if ops[1] < w else 0
    if op == "shr":
        a = v(ops[0])
        return wrap(a >> min(ops[1], w))
    if op == "popc":
        return bin(ops[0]).count("1")
    if op == "clz":
        return w - ops[0].bit_length()
    if op == "brev":
        return int(format(ops[0], f"0{w}b")[::-1], 2)
    if op == "bfind":
        a = v(ops[0])
        msb = -1
        for i in range(w - 1, -1, -1):
            bit = (ops[0] >> i) & 1
            want = 0 if (signed and a < 0) else 1
            if signed and i == w - 1:
                continue
            if bit == want:
                msb = i
                break
        if msb >= 0 and "shiftamt" in mods:
            msb = w - 1 - msb
        return 0xFFFFFFFF if msb < 0 else msb
    if op == "bfe":
        # the manual: msb = 31 or 63; pos = b & 0xff; len = c & 0xff;
        # sbit = signed ? (len == 0 ? 0 : a[min(pos+len-1, msb)]) : 0;
        # d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit
        a, msb = ops[0], w - 1
        pos, ln = ops[1] & 0xFF, ops[2] & 0xFF
        sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
        d = 0
        for i in range(w):
            bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
            d |= bit << i
        return d
    if op == "bfi":
        # f = b; for (i = 0; i < len && pos+i <= msb; i++) f[pos+i] = a[i]
        a, f, msb = ops[0], ops[1], w - 1
        pos, ln = ops[2] & 0xFF, ops[3] & 0xFF
        i = 0
        while i < ln and pos + i <= msb:
            f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
            i += 1
        return f
    if op == "prmt":
        a, b, c = ops
        tmp = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF
                                                          for i in range(4)]
        mode = next(iter(mods), None)
        d = 0
        for k in range(4):
            if mode is None:
                s = (c >> (4 * k)) & 0xF
                byte = tmp[s & 7]
                if s & 8:
                    byte = 0xFF if byte & 0x80 else 0
            else:
                table = {"f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
                         "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
                         "rc8": [[0] * 4, [1] * 4, [2] * 4, [3] * 4],
                         "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
                         "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
                         "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]}[mode]
                byte = tmp[table[c & 3][k]]
            d |= byte << (8 * k)
        return d
    raise NotImplementedError(op)
