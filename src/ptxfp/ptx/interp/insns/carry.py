"""Extended-precision integer arithmetic: add.cc, addc{.cc}, sub.cc, subc{.cc}, mad{.lo,.hi}.cc
and madc{.lo,.hi}{.cc} on .u32/.s32/.u64/.s64, with the condition code's carry flag CC.CF
kept per thread (``state.cc``), and the high half of a product (mul.hi / mad.hi).

The PTX ISA's definitions: ``add.cc`` d = a + b, the carry-out into CC.CF; ``addc`` d = a + b +
CC.CF; ``sub.cc`` d = a - b, the borrow-out into CC.CF; ``subc`` d = a - (b + CC.CF);
``mad.cc`` d = (a*b).lo or .hi + c, the carry-out of the addition into CC.CF; ``madc`` d =
(a*b).lo/.hi + c + CC.CF.  The carry of a signed type is that of the same bits added as
unsigned (the flag is for multi-word arithmetic).  A flag read before any instruction set it
is 0 (PTX leaves it undefined)."""

from __future__ import annotations

import numpy as np

from ..base import WIDTH, _DTYPE, _bad, _nops, _types_of, _unsupported
from ..operands import _dst, _src
from ..program import _Step

_TYPES = ("u32", "s32", "u64", "s64")
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def mul_hi(a, b, t):
    """The high `w` bits of the 2w-bit product of a and b (uint arrays of t's width), as uint64."""
    w = WIDTH[t]
    signed = t[0] == "s"
    if w <= 32:
        if signed:
            sd = {16: np.int16, 32: np.int32}[w]
            p = a.view(sd).astype(np.int64) * b.view(sd).astype(np.int64)
            return (p >> w).view(np.uint64) & np.uint64((1 << w) - 1)
        p = a.astype(np.uint64) * b.astype(np.uint64)
        return p >> np.uint64(w)
    a = a.astype(np.uint64)
    b = b.astype(np.uint64)
    al, ah, bl, bh = a & _M32, a >> _S32, b & _M32, b >> _S32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> _S32) + (lh & _M32) + (hl & _M32)
    hi = hh + (lh >> _S32) + (hl >> _S32) + (mid >> _S32)
    if signed:                      # (a - 2^64 [a<0]) (b - 2^64 [b<0]) mod 2^128, high half
        hi = hi - np.where(a >> np.uint64(63), b, np.uint64(0)) \
            - np.where(b >> np.uint64(63), a, np.uint64(0))
    return hi


def _cc(st):
    """The carry flags (uint64 0/1 array (n,)), made at their first use."""
    if st.cc is None:
        st.cc = np.zeros(st.n, np.uint64)
    return st.cc


def _set_cc(st, carry):
    c = carry.astype(np.uint64)
    st.cc = c if st.all_on else np.where(st.mask, c, _cc(st))


def _c_carry(prog, ins):
    """add.cc addc sub.cc subc mad.cc madc (see the module docstring)."""
    op = ins.opcode
    sfx = list(ins.suffixes)
    tys = _types_of(ins)
    if len(tys) != 1 or tys[0] not in _TYPES:
        raise _unsupported(ins, "the carry forms take .u32, .s32, .u64 or .s64")
    t = tys[0]
    cin = op in ("addc", "subc", "madc")
    cout = "cc" in sfx
    half = None
    if op in ("mad", "madc"):
        halves = [x for x in sfx if x in ("lo", "hi")]
        if len(halves) != 1:
            raise _bad(ins, f"{op} needs .lo or .hi")
        half = halves[0]
    allowed = {t, "cc"} | ({half} if half else set())
    if set(sfx) - allowed or (not cin and not cout):
        raise _unsupported(ins, f"'{ins.opcode_spelling}': the carry forms are add.cc, "
                                "addc{.cc}, sub.cc, subc{.cc}, mad{.lo,.hi}.cc, "
                                "madc{.lo,.hi}{.cc}")
    n_in = 3 if half else 2
    _nops(ins, n_in + 1)
    reads, writes = [], []
    srcs = [_src(prog, ins, o, t, reads) for o in ins.operands[1:]]
    d = _dst(prog, ins, ins.operands[0], t, writes)
    w = WIDTH[t]
    mask = np.uint64((1 << w) - 1)
    sub = op in ("sub", "subc")

    def run(st):
        if half:
            a, b = srcs[0](st), srcs[1](st)
            x = (a.astype(np.uint64) * b.astype(np.uint64)) & mask if half == "lo" \
                else mul_hi(a, b, t) & mask
            y = srcs[2](st).astype(np.uint64)
        else:
            x, y = (s(st).astype(np.uint64) for s in srcs)
        c = _cc(st) if cin else np.uint64(0)
        if sub:
            r = (x - y - c) & mask
            carry = (x < y) | ((x - y) & mask < c)          # a borrow out of either step
        else:
            s1 = (x + y) & mask
            r = (s1 + c) & mask
            carry = (s1 < x) | (r < s1)                    # a carry out of either step
        if cout:
            _set_cc(st, carry)
        st.write(d, t, r.astype(_DTYPE[w]))
    return _Step(ins, run, reads, writes)


COMPILERS = {"addc": _c_carry, "subc": _c_carry, "madc": _c_carry}
