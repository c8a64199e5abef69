"""Integer glue: add/sub/mul(.lo/.wide)/mad/min/max/and/or/xor/not/neg/shl/shr, .pred logic,
integer setp and selp, integer-to-integer cvt."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...reader import Vec
from ..base import (WIDTH, _DTYPE, _SIGNED, _bad, _ext, _mask, _nops, _spelling_types,
                    _types_of, _u64, _unsupported, _wrap)
from ..operands import _dst, _puts, _src
from ..program import _Step
from .carry import mul_hi


def _c_cvt_int(prog, ins, types):
    dt, at = types
    _nops(ins, 2)
    if set(ins.suffixes) - {dt, at, "sat"}:
        raise _unsupported(ins, "an integer-to-integer cvt takes only .sat")
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], at, reads)
    d = _dst(prog, ins, ins.operands[0], dt, writes)
    sat = "sat" in ins.suffixes

    def run(st):
        v = _ext(a(st), at)
        if sat:
            lo, hi = _range(dt)
            v = np.array([min(max(int(x), lo), hi) for x in v], dtype=object)
            v = np.array([x & _mask(WIDTH[dt]) for x in v], dtype=np.uint64)
        st.write(d, dt, _wrap(v, dt))
    return _Step(ins, run, reads, writes)


def _range(t):
    w = WIDTH[t]
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, _mask(w))


_INT_OPS = {
    "add": lambda a, b: _u64(a) + _u64(b), "sub": lambda a, b: _u64(a) - _u64(b),
    "mul": lambda a, b: a * b,
    "min": np.minimum, "max": np.maximum,
    "and": lambda a, b: _u64(a) & _u64(b), "or": lambda a, b: _u64(a) | _u64(b),
    "xor": lambda a, b: _u64(a) ^ _u64(b),
}


_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor, "min": np.minimum, "max": np.maximum}


def _c_pred(prog, ins):
    """and/or/xor/not on .pred."""
    op = ins.opcode
    n = 2 if op == "not" else 3
    _nops(ins, n)
    reads, writes = [], []
    srcs = [_src(prog, ins, o, "pred", reads) for o in ins.operands[1:]]
    d = _dst(prog, ins, ins.operands[0], "pred", writes)
    f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
         "not": np.logical_not}[op]
    return _Step(ins, lambda st: st.write(d, "pred", f(*[x(st) for x in srcs])), reads, writes)


@lru_cache(maxsize=4096)
def _int_plan(spelling):
    """What _c_int decides from an opcode spelling alone, once per spelling: ('pred',),
    ('ok', type, opcode, .wide, destination type), or ('unsupported' | 'bad', message)."""
    types = list(_spelling_types(spelling))
    op, *suffixes = spelling.split(".")
    if types == ["pred"] and op in ("and", "or", "xor", "not") and suffixes == ["pred"]:
        return ("pred",)
    if len(types) != 1 or types[0] not in WIDTH or types[0][0] not in "bsu" or \
            types[0] in ("bf16", "b8", "u8", "s8"):
        return ("unsupported", "integer forms take one .b/.u/.s 16/32/64 type")
    t = types[0]
    sfx = set(suffixes) - {t}
    wide = "wide" in sfx
    hi = False
    if op in ("mul", "mad"):
        if sum(x in sfx for x in ("lo", "hi", "wide")) != 1:
            return ("bad", f"{op} on integers needs one of .lo, .hi or .wide")
        hi = "hi" in sfx
        sfx -= {"lo", "hi", "wide"}
    if sfx:
        return ("unsupported", f"modifiers {', '.join('.' + x for x in sorted(sfx))} are not "
                               "modeled")
    dt = t
    if wide:
        if WIDTH[t] == 64:
            return ("bad", ".wide needs a 16- or 32-bit type")
        dt = t[0] + str(2 * WIDTH[t])
    return ("ok", t, op, wide, dt, hi)


def _c_int(prog, ins):
    """Integer add/sub/mul(.lo/.wide)/mad(.lo/.wide)/min/max/and/or/xor/not/neg/shl/shr."""
    plan = _int_plan(ins.opcode_spelling)
    if plan[0] == "pred":
        return _c_pred(prog, ins)
    if plan[0] == "unsupported":
        raise _unsupported(ins, plan[1])
    if plan[0] == "bad":
        raise _bad(ins, plan[1])
    _, t, op, wide, dt, hi = plan
    w = WIDTH[t]
    reads, writes = [], []
    if op in ("not", "neg"):
        _nops(ins, 2)
        a = _src(prog, ins, ins.operands[1], t, reads)
        d = _dst(prog, ins, ins.operands[0], t, writes)

        def run(st):
            v = _u64(_ext(a(st), t))
            st.write(d, t, _wrap(~v if op == "not" else np.uint64(0) - v, t))
        return _Step(ins, run, reads, writes)
    if op in ("shl", "shr"):
        _nops(ins, 3)
        a = _src(prog, ins, ins.operands[1], t, reads)
        b = _src(prog, ins, ins.operands[2], "u32", reads)
        d = _dst(prog, ins, ins.operands[0], t, writes)

        def run(st):
            n = np.minimum(b(st).astype(np.uint64), np.uint64(w))
            if op == "shl":
                v = _ext(a(st), "b" + str(w))
                r = np.where(n >= w, np.uint64(0), v << np.minimum(n, np.uint64(w - 1)))
            elif t[0] == "s":                          # arithmetic shift: sign fill
                v = _ext(a(st), t)
                r = v >> np.minimum(n, np.uint64(w - 1)).astype(np.int64)
            else:
                v = _ext(a(st), "u" + str(w))
                r = np.where(n >= w, np.uint64(0), v >> np.minimum(n, np.uint64(w - 1)))
            st.write(d, t, _wrap(r, t))
        return _Step(ins, run, reads, writes)
    _nops(ins, 4 if op == "mad" else 3)
    srcs = [_src(prog, ins, o, t, reads) for o in ins.operands[1:3]]
    if op == "mad":
        srcs.append(_src(prog, ins, ins.operands[3], dt, reads))
    d = _dst(prog, ins, ins.operands[0], dt, writes)
    f = _INT_OPS["mul" if op == "mad" else op]
    ext_t = t if (wide or op in ("min", "max")) else "u" + str(w)
    if hi:                                 # mul.hi / mad.hi: the high half of the product
        def run(st):
            r = mul_hi(srcs[0](st), srcs[1](st), t)
            if op == "mad":
                r = r + _u64(_ext(srcs[2](st), dt))
            st.write(d, dt, _wrap(r, dt))
        return _Step(ins, run, reads, writes)

    if op != "mad" and not wide and w > 1:
        # same width in and out: NumPy's w-bit unsigned arithmetic wraps mod 2**w as the
        # 64-bit path does after its truncation; min/max of .s types compare the bits signed
        put = _puts(prog, d, _DTYPE[w])
        s0, s1 = srcs
        view = _SIGNED[w] if (op in ("min", "max") and t[0] == "s") else None
        uf = _UFUNCS[op]
        if view is None:
            def run(st):
                r = uf(s0(st), s1(st))
                st.put(d, dt, r) if put else st.write(d, dt, r)
        else:
            udt = _DTYPE[w]

            def run(st):
                r = uf(s0(st).view(view), s1(st).view(view)).view(udt)
                st.put(d, dt, r) if put else st.write(d, dt, r)
        return _Step(ins, run, reads, writes)

    def run(st):
        a, b = (_ext(s(st), ext_t) for s in srcs[:2])
        r = f(a, b)
        if op == "mad":
            r = _u64(r) + _u64(_ext(srcs[2](st), dt))
        st.write(d, dt, _wrap(r, dt))
    return _Step(ins, run, reads, writes)


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


_SETP_SIGNED = {16: np.int16, 32: np.int32, 64: np.int64}


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal}


def _c_setp(prog, ins):
    types = _types_of(ins)
    cmps = [s for s in ins.suffixes if s in _CMP]
    if len(types) != 1 or types[0][0] not in "bsu" or types[0] == "bf16" or len(cmps) != 1:
        raise _unsupported(ins, "only integer setp (.eq .ne .lt .le .gt .ge .lo .ls .hi .hs on "
                                ".b/.u/.s types) is modeled")
    if set(ins.suffixes) - {types[0], cmps[0]}:
        raise _unsupported(ins, "setp with a boolean combination (.and/.or/.xor) is not modeled")
    t, c = types[0], cmps[0]
    if WIDTH.get(t) not in _SETP_SIGNED:                # ptxas: no 8-bit (or 128-bit) setp
        raise _unsupported(ins, "Unexpected instruction types specified for 'setp' (ptxas "
                                "takes 16-, 32- and 64-bit integer types)")
    _nops(ins, 3)
    reads, writes = [], []
    dst = ins.operands[0]
    dests = dst.items if isinstance(dst, Vec) and dst.brackets == "|" else [dst]
    a = _src(prog, ins, ins.operands[1], t, reads)
    b = _src(prog, ins, ins.operands[2], t, reads)
    ds = [_dst(prog, ins, o, "pred", writes) for o in dests]
    signed = t[0] == "s"
    w = WIDTH[t]
    cmp = _COMPARE[_CMP[c]]
    puts = [_puts(prog, o, np.bool_) for o in ds]

    def run(st):
        x, y = a(st), b(st)                  # arrays of the type's width (the readers')
        if signed:
            v = _SETP_SIGNED[w]
            x, y = x.view(v), y.view(v)
        r = cmp(x, y)
        st.put(ds[0], "pred", r) if puts[0] else st.write(ds[0], "pred", r)
        if len(ds) > 1:
            st.put(ds[1], "pred", ~r) if puts[1] else st.write(ds[1], "pred", ~r)
    return _Step(ins, run, reads, writes)


def _c_selp(prog, ins):
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH or types[0] == "pred":
        raise _unsupported(ins, "selp needs one type")
    t = types[0]
    _nops(ins, 4)
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    b = _src(prog, ins, ins.operands[2], t, reads)
    p = _src(prog, ins, ins.operands[3], "pred", reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    if _puts(prog, d, _DTYPE[WIDTH[t]]):             # a and b are arrays of t's width
        return _Step(ins, lambda st: st.put(d, t, np.where(p(st), a(st), b(st))), reads,
                     writes)
    return _Step(ins, lambda st: st.write(d, t, np.where(p(st), a(st), b(st))), reads, writes)


COMPILERS = {
    "min": _c_int, "max": _c_int, "and": _c_int, "or": _c_int, "xor": _c_int,
    "not": _c_int, "neg": _c_int, "shl": _c_int, "shr": _c_int,
    "setp": _c_setp, "selp": _c_selp,
}
