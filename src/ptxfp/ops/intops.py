"""The integer instructions: the one place they live (rows: isa/intops.py; rules, with the
manual's pseudocode where it has one: docs/semantics.md, "Integer instructions").

Everything is computed on uint64/int64 NumPy arrays and wrapped to the type's width.  Choices
the manual leaves open (it calls them unspecified), documented here and in docs/semantics.md:

- ``div`` by zero gives all ones (``DIV_BY_ZERO``: what NVIDIA GPUs return for the unsigned
  division; taken for the signed one too), ``rem`` by zero gives the dividend (``a``);
- the signed ``MIN / -1`` wraps to MIN (and its ``rem`` is 0), as two's complement does.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..core import types
from ..core._jit import jit_cached
from ..isa.spelling import Instruction
from .common import Plan, dtype_of, entry, to_signed

__all__ = ["compute", "core", "plan", "DIV_BY_ZERO"]

#: the quotient of a division by zero (all ones of the width)
DIV_BY_ZERO = "all-ones"

_U = np.uint64
_A = NDArray[Any]


def _bitlen(m: _A) -> _A:
    """Bit length of each value (0 for 0): float64's exponent, corrected where the conversion
    rounded up to the next power of two."""
    v = m.astype(_U)
    e = np.minimum(np.frexp(v.astype(np.float64))[1].astype(np.int64), 64)
    return e - (((v >> np.clip(e - 1, 0, 63).astype(_U)) == 0) & (v > 0))


def _mulhi_u64(a: _A, b: _A) -> _A:
    """The high 64 bits of the unsigned 128-bit product (32-bit limbs)."""
    m32 = _U(0xFFFFFFFF)
    a0, a1, b0, b1 = a & m32, a >> _U(32), b & m32, b >> _U(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U(32)) + (p01 & m32) + (p10 & m32)
    return p11 + (p01 >> _U(32)) + (p10 >> _U(32)) + (mid >> _U(32))


# --- one-pass Numba kernels for the bit-field forms (bfe, bfi, prmt); operands as uint64 ---

K_BFE, K_BFI, K_PRMT = 0, 1, 2
#: prmt mode -> code (0: the default selector nibbles)
_PRMT_CODE = {None: 0, "f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}


def _bits_py(k, a, b, c, e, out, w, sgn, mode, table):  # type: ignore[no-untyped-def]
    ONE = np.uint64(1)
    ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
    for i in range(out.size):
        x = a[i]
        if k == K_BFE:
            # d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit (the manual's pseudocode)
            msb = w - 1
            pos = np.int64(b[i] & np.uint64(0xFF))
            ln = np.int64(c[i] & np.uint64(0xFF))
            sbit = np.uint64(0)
            if sgn and ln > 0:
                top = min(pos + ln - 1, msb)
                sbit = (x >> np.uint64(top)) & ONE
            n = min(ln, msb + 1 - pos) if pos <= msb else 0
            field = (x >> np.uint64(pos)) if pos <= msb else np.uint64(0)
            keep = ALL if n >= 64 else ((ONE << np.uint64(max(n, 0))) - ONE)
            r = field & keep
            if sbit:
                r |= ~keep
            out[i] = r
        elif k == K_BFI:
            pos = np.int64(c[i] & np.uint64(0xFF))
            ln = np.int64(e[i] & np.uint64(0xFF))
            n = min(ln, w - pos) if pos < w else 0
            r = b[i]
            if n > 0:
                keep = ALL if n >= 64 else ((ONE << np.uint64(n)) - ONE)
                fm = keep << np.uint64(pos)
                r = (r & ~fm) | ((x << np.uint64(pos)) & fm)
            out[i] = r
        else:
            sel_word = c[i]
            r = np.uint64(0)
            for j in range(4):
                if mode == 0:
                    sv = (sel_word >> np.uint64(4 * j)) & np.uint64(0xF)
                    src = sv & np.uint64(7)
                else:
                    sv = np.uint64(0)
                    src = np.uint64(table[np.int64(sel_word & np.uint64(3)) * 4 + j])
                byte = ((b[i] >> ((src - np.uint64(4)) * np.uint64(8))) if src >= 4
                        else (x >> (src * np.uint64(8)))) & np.uint64(0xFF)
                if sv & np.uint64(8):
                    byte = np.uint64(0xFF) if byte & np.uint64(0x80) else np.uint64(0)
                r |= byte << np.uint64(8 * j)
            out[i] = r


_bits_kernel: Any = None


def _run_bits(k: int, ops: list[_A], w: int, sgn: bool, mode: int, table: _A) -> _A:
    global _bits_kernel
    if _bits_kernel is None:
        _bits_kernel = jit_cached(_bits_py, ("ops.intops.bits",), nogil=True)
    u = [np.ascontiguousarray(x, _U) for x in ops] + [np.zeros(1, _U)] * (4 - len(ops))
    n = u[0].size
    res = np.empty(n, _U)
    if n:
        _bits_kernel(k, u[0], u[1], u[2], u[3], res, w, sgn, mode, table)
    return res


_BREV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint64)


def plan(ins: Instruction) -> Plan:
    t = ins.atype
    w = types.width(t)
    sgn = bool(types.get(t).signed)
    dt = dtype_of(ins.row.operands[0].type)
    dw = types.width(ins.row.operands[0].type)
    mask = _U((1 << dw) - 1) if dw < 64 else _U(0xFFFFFFFFFFFFFFFF)
    op = ins.opcode
    mods = ins.modifiers

    def val(x: _A) -> _A:
        """Operand values: int64 (signed types) or uint64."""
        return to_signed(x, w) if sgn else x.astype(_U)

    def out(r: _A) -> _A:
        return (r.astype(np.int64).view(_U) if r.dtype.kind == "i" else r.astype(_U)
                ) & mask

    def fin(r: _A) -> _A:
        if r.dtype == dt:                         # computed in the register's own width
            return r
        return out(r).astype(dt)

    same = dt == dtype_of(t) and dw == w

    fn: Callable[[list[_A]], _A]
    if same and (op in ("and", "or", "xor", "not") or (op in ("add", "sub") and "sat" not in mods)
                 or (op == "mul" and "lo" in mods)):
        # wrapping arithmetic and logic in the register's own unsigned dtype (mod 2**w)
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}.get(op)

        def fn(o: list[_A]) -> _A:
            return np.invert(o[0]) if f is None else f(o[0], o[1])
    elif op in ("add", "sub"):
        def fn(o: list[_A]) -> _A:
            a, b = val(o[0]), val(o[1])
            if "sat" in mods:
                r = a + b if op == "add" else a - b
                return np.clip(r, -(1 << 31), (1 << 31) - 1)
            return (a.view(_U) + b.view(_U)) if op == "add" and sgn else (
                (a.view(_U) - b.view(_U)) if sgn else (a + b if op == "add" else a - b))
    elif op in ("mul", "mad", "mul24", "mad24"):
        sel = next(m for m in ("lo", "hi", "wide") if m in mods)

        def product(o: list[_A]) -> tuple[_A, int]:
            a, b = val(o[0]), val(o[1])
            if op in ("mul24", "mad24"):
                # the low 24 bits of each operand (sign-extended for .s32): 48-bit product
                a = a & 0xFFFFFF
                b = b & 0xFFFFFF
                if sgn:
                    a = np.where(a >= 1 << 23, a - (1 << 24), a)
                    b = np.where(b >= 1 << 23, b - (1 << 24), b)
                p = a.astype(np.int64) * b.astype(np.int64)
                return (p >> 16 if sel == "hi" else p), 0
            if w < 64:
                p = a.astype(np.int64) * b.astype(np.int64) if sgn else a * b
                return (p >> w if sel == "hi" else p), 0
            # 64-bit: lo wraps; hi from the unsigned high part with the signed correction
            au, bu = a.view(_U) if sgn else a, b.view(_U) if sgn else b
            if sel == "lo":
                return au * bu, 0
            hi = _mulhi_u64(au, bu)
            if sgn:
                hi = hi - np.where(a < 0, bu, _U(0)) - np.where(b < 0, au, _U(0))
            return hi, 0

        def fn(o: list[_A]) -> _A:
            p, _ = product(o)
            if op in ("mul", "mul24"):
                return p
            cw = dw
            c = to_signed(o[2], cw) if sgn else o[2].astype(_U)
            if "sat" in mods:                      # mad.hi.sat.s32
                return np.clip(p.astype(np.int64) + c, -(1 << 31), (1 << 31) - 1)
            if p.dtype.kind == "i" or c.dtype.kind == "i":
                return p.astype(np.int64).view(_U) + c.astype(np.int64).view(_U)
            return p + c
    elif op in ("div", "rem"):
        def fn(o: list[_A]) -> _A:
            a, b = val(o[0]), val(o[1])
            zero = b == 0
            bb = np.where(zero, 1, b)
            if sgn:
                # on uint64 magnitudes (|MIN| fits there), signs put back mod 2**64: MIN / -1
                # wraps to MIN and its remainder is 0
                def mag(x: _A) -> _A:
                    u = x.astype(np.int64).view(_U)
                    return np.where(x < 0, (~u) + _U(1), u)
                qm = mag(a) // mag(bb)
                rm = mag(a) % mag(bb)
                q = np.where((a < 0) != (bb < 0), (~qm) + _U(1), qm)
                r = np.where(a < 0, (~rm) + _U(1), rm)
            else:
                q = a // bb
                r = a % bb
            if op == "div":
                return np.where(zero, _U(0xFFFFFFFFFFFFFFFF), q.astype(_U))
            return np.where(zero, a.astype(np.int64).view(_U) if sgn else a, r.astype(_U))
    elif op in ("min", "max"):
        def fn(o: list[_A]) -> _A:
            a, b = val(o[0]), val(o[1])
            r = np.minimum(a, b) if op == "min" else np.maximum(a, b)
            return np.maximum(r, 0) if "relu" in mods else r
    elif op == "sad":
        def fn(o: list[_A]) -> _A:
            a, b = val(o[0]), val(o[1])
            if sgn:
                a, b = a.astype(np.int64), b.astype(np.int64)
                diff = np.where(a >= b, a.view(_U) - b.view(_U), b.view(_U) - a.view(_U))
            else:
                diff = np.where(a >= b, a - b, b - a)
            return diff + o[2].astype(_U)
    elif op == "lop3":
        def fn(o: list[_A]) -> _A:
            a, b, c = (x.astype(_U) for x in o[:3])
            lut = o[3].astype(_U)
            r = np.zeros(a.shape, _U)
            for idx in range(8):                      # index = a<<2 | b<<1 | c, per bit
                ma = a if idx & 4 else ~a
                mb = b if idx & 2 else ~b
                mc = c if idx & 1 else ~c
                on = (lut >> _U(idx)) & _U(1)
                r |= np.where(on == 1, ma & mb & mc, _U(0))
            return r
    elif op == "shf":
        left, clamp = "l" in mods, "clamp" in mods

        def fn(o: list[_A]) -> _A:
            a, b = o[0].astype(_U), o[1].astype(_U)
            c = o[2].astype(_U)
            n = np.minimum(c, _U(32)) if clamp else c & _U(31)
            pair = (b << _U(32)) | a
            if left:
                return (pair << n) >> _U(32)             # bits 63..32 of {b, a} << n
            return (pair >> n) & _U(0xFFFFFFFF)
    elif op in ("dp4a", "dp2a"):
        ta, tb = ins.types
        hi = "hi" in mods

        def lanes(x: _A, k: int, bits: int, s: bool) -> _A:
            v = ((x.astype(_U) >> _U(k * bits)) & _U((1 << bits) - 1)).astype(np.int64)
            return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if s else v

        def fn(o: list[_A]) -> _A:
            acc = to_signed(o[2], 32) if "s32" in (ta, tb) else o[2].astype(np.int64)
            sa, sb = ta == "s32", tb == "s32"
            if op == "dp4a":
                for k in range(4):
                    acc = acc + lanes(o[0], k, 8, sa) * lanes(o[1], k, 8, sb)
            else:
                for k in range(2):
                    acc = acc + lanes(o[0], k, 16, sa) * lanes(o[1], k + (2 if hi else 0), 8, sb)
            return acc
    elif op in ("abs", "neg"):
        def fn(o: list[_A]) -> _A:
            a = val(o[0]).view(_U)
            n = (~a) + _U(1)
            return n if op == "neg" else np.where(val(o[0]) < 0, n, a)
    elif op in ("and", "or", "xor"):
        f2 = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

        def fn(o: list[_A]) -> _A:
            return f2(o[0].astype(_U), o[1].astype(_U))
    elif op == "not":
        def fn(o: list[_A]) -> _A:
            return ~o[0].astype(_U)
    elif op == "cnot":
        def fn(o: list[_A]) -> _A:
            return (o[0] == 0).astype(_U)
    elif op in ("shl", "shr"):
        def fn(o: list[_A]) -> _A:
            a = val(o[0])
            n = o[1].astype(_U)                       # unsigned amount; >= width clamps
            big = n >= _U(w)
            s = np.where(big, _U(0), n)
            if op == "shl":
                return np.where(big, _U(0), a.astype(_U) << s)
            if sgn:
                return np.where(big, np.where(a < 0, -1, 0), a >> s.astype(np.int64))
            return np.where(big, _U(0), a >> s)
    elif op == "popc":
        def fn(o: list[_A]) -> _A:
            return np.bitwise_count(o[0].astype(_U)).astype(_U)
    elif op == "clz":
        def fn(o: list[_A]) -> _A:
            return (w - _bitlen(o[0])).astype(_U)
    elif op == "brev":
        def fn(o: list[_A]) -> _A:
            a = o[0].astype(_U)
            r = np.zeros(a.shape, _U)
            for i in range(w // 8):
                byte = (a >> _U(8 * i)) & _U(0xFF)
                r |= _BREV8[byte] << _U(w - 8 - 8 * i)
            return r
    elif op == "bfind":
        def fn(o: list[_A]) -> _A:
            a = val(o[0])
            x = np.where(a < 0, ~a, a).astype(np.int64).view(_U) if sgn else a
            pos = _bitlen(x) - 1                      # -1 where no bit is found
            if "shiftamt" in mods:
                pos = np.where(pos >= 0, w - 1 - pos, -1)
            return np.where(pos < 0, _U(0xFFFFFFFF), pos.astype(np.int64).view(_U))
    elif op in ("bfe", "bfi", "prmt"):
        kind = {"bfe": K_BFE, "bfi": K_BFI, "prmt": K_PRMT}[op]
        pmode = next((m for m in mods), None) if op == "prmt" else None
        table = np.array([v for row in _PRMT[pmode] for v in row] if pmode else [0] * 16,
                         np.int64)

        def fn(o: list[_A]) -> _A:
            return _run_bits(kind, o, w, sgn, _PRMT_CODE[pmode], table)
    else:                                             # pragma: no cover - rows and ops agree
        raise NotImplementedError(op)

    def run(ops: list[_A], n: int) -> _A:
        return fin(fn(ops))
    return run


#: the manual's prmt mode tables: for selector c[1:0] (rows) the source byte of d.b0..d.b3
_PRMT = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


compute, core = entry("int", plan, doc="""Run an integer form on bit patterns (negative ints
taken for .s types):

    >>> hex(compute("mul.hi.u32", 0xFFFFFFFF, 0xFFFFFFFF)), hex(compute("mul.wide.s32", -2, 3))
    ('0xfffffffe', '0xfffffffffffffffa')
    >>> compute("bfe.s32", 0xF0, 4, 4), hex(compute("prmt.b32", 0x03020100, 0x07060504, 0x4321))
    (4294967295, '0x4030201')
""")
