"""Parameters through addresses: ``mov.b64 %rd, param`` (the parameter's address in the
parameter buffer, ``param_space.PARAM_BASE``-based: the parameter window of the generic
address space, state.py), ``cvta.param`` / ``cvta.to.param`` (the identity), and ``ld.param
[%rd+imm]`` through a register (mem.py's ld.param hands it here)."""

from __future__ import annotations

import numpy as np

from ..base import WIDTH, _DTYPE, _bad, _from_le
from ..operands import _dst, _src
from ..param_space import PARAM_BASE, check_given, layout
from ..program import _Step
from ..state import _locate


def _c_mov_param(prog, ins, dst, name, t):
    """mov.{b64,u64} d, param: the parameter's address."""
    if WIDTH[t] != 64:
        raise _bad(ins, f"the address of parameter '{name}' is 64-bit: use mov.b64/.u64")
    p = prog.params[name]
    lay, _ = layout(prog)
    off, size = lay[name]
    prog.param_type.setdefault(name, (p.type, size, ins.line, ins.col))
    reads, writes = [(("param", name), p.type)], []
    d = _dst(prog, ins, dst, t, writes)
    addr = PARAM_BASE + off
    where = (ins.line, ins.col)

    def run(st):
        check_given(st, name, where)
        st.write(d, t, st.const(addr, np.uint64))
    return _Step(ins, run, reads, writes)


def _c_cvta_param(prog, ins, t):
    """cvta.param / cvta.to.param: parameter and generic addresses are the same numbers."""
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    return _Step(ins, lambda st: st.write(d, t, a(st)), reads, writes)


def _c_ld_param_reg(prog, ins, addr, items, t, vec):
    """ld.param{.v2,.v4}.T d, [%rd+imm]: from the parameter buffer at a register's address."""
    reads, writes = [], []
    for p in prog.params:                         # every parameter may be read through it
        off, size = layout(prog)[0][p]
        prog.param_type.setdefault(p, (prog.params[p].type, size, ins.line, ins.col))
    b = addr.base
    r = _src(prog, ins, b, "u64" if prog.width.get(b.name, 64) == 64 else "u32", reads)

    def base(st):
        return r(st).astype(np.int64)
    outs = [_dst(prog, ins, o, t, writes) for o in items]
    w = WIDTH[t]
    nbytes = max(w // 8, 1)
    total = nbytes * vec
    off = addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    spelling = ins.opcode_spelling

    def run(st):
        m = st.mask
        buf, idx = _locate(st, "param", base(st) + off, m, total, spelling, where)
        for k, o in enumerate(outs):
            at = idx[:, None] + (k * nbytes + np.arange(nbytes))
            st.write(o, t, _from_le(buf[at], w).astype(_DTYPE[max(w, 8)], copy=False))
    return _Step(ins, run, reads, writes)
