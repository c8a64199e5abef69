"""mov: registers, immediates, special registers, pack/unpack of vectors, and the address of a
.shared/.local variable."""

from __future__ import annotations

import numpy as np

from ...reader import Addr, Reg, Vec
from ..base import (WIDTH, _DTYPE, _LITTLE, _bad, _mask, _nops, _special, _types_of,
                    _unsupported)
from ..operands import _dst, _puts, _src
from ..program import _Step


def _c_mov(prog, ins):
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH:
        raise _unsupported(ins, "mov needs one type (.b16, .b32, .u64, .f32 ...)")
    t = types[0]
    _nops(ins, 2)
    dst, src = ins.operands
    w = WIDTH[t]
    reads, writes = [], []
    if isinstance(dst, Vec) or isinstance(src, Vec):
        vec, other = (dst, src) if isinstance(dst, Vec) else (src, dst)
        if isinstance(dst, Vec) and isinstance(src, Vec):
            raise _bad(ins, "mov cannot have vectors on both sides")
        k = len(vec.items)
        if k not in (2, 4) or w % k or w // k < 8:
            raise _bad(ins, f"cannot split .{t} into {k} parts", vec)
        iw = w // k
        it = "b" + str(iw)
        if isinstance(src, Vec):                      # pack: item 0 -> the lowest bits
            parts = [_src(prog, ins, o, it, reads) for o in src.items]
            d = _dst(prog, ins, dst, t, writes)

            wdt = _DTYPE[w]
            shifts = [wdt(i * iw) for i in range(k)]
            put = _puts(prog, d, wdt)

            idt = _DTYPE[iw]

            def run(st):
                if _LITTLE:                          # item i is element i of the word
                    acc = np.empty(st.n, wdt)
                    lanes = acc.view(idt)
                    for i, p in enumerate(parts):
                        lanes[i::k] = p(st)
                else:
                    acc = parts[0](st).astype(wdt)
                    for p, sh in zip(parts[1:], shifts[1:]):
                        acc |= p(st).astype(wdt) << sh
                st.put(d, t, acc) if put else st.write(d, t, acc)
            return _Step(ins, run, reads, writes)
        a = _src(prog, ins, src, t, reads)             # unpack
        outs = [(_dst(prog, ins, o, it, writes) if not (isinstance(o, Reg) and o.name == "_")
                 else None) for o in dst.items]

        def run(st):
            v = a(st).astype(np.uint64)
            for i, o in enumerate(outs):
                if o is not None:
                    st.write(o, it, (v >> np.uint64(i * iw)) & np.uint64(_mask(iw)))
        return _Step(ins, run, reads, writes)
    if isinstance(src, Reg) and src.name in prog.params:
        from .params import _c_mov_param
        return _c_mov_param(prog, ins, dst, src.name, t)
    if isinstance(src, Addr):
        raise _unsupported(ins, "taking the address of a variable is not modeled")
    if isinstance(src, Reg) and not _special(src.name) and src.name not in prog.width:
        v = prog.var(src.name, ins)
        if v is not None:                              # mov r, smem: its .shared address
            d = _dst(prog, ins, dst, t, writes)
            dt = _DTYPE[w]
            if v[1] is None:
                return _Step(ins, lambda st: st.write(d, t, np.full(
                    st.n, prog.extern_offset, dt)), reads, writes)
            off = v[1]
            return _Step(ins, lambda st: st.write(d, t, np.full(st.n, off, dt)), reads, writes)
        if src.name in prog.prog.variables:
            raise _unsupported(ins, f"taking the address of the "
                                    f".{prog.prog.variables[src.name].space} variable "
                                    f"'{src.name}' is not modeled")
    a = _src(prog, ins, src, t, reads)
    d = _dst(prog, ins, dst, t, writes)

    def run(st):
        st.write(d, t, a(st))
    return _Step(ins, run, reads, writes)


COMPILERS = {"mov": _c_mov}
