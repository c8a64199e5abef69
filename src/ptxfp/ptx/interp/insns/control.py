"""Control flow: bra (its target label), ret/exit, and call (a call site's two halves around
the inlined callee, program._expand); the scheduler (schedule.py) runs bra and ret."""

from __future__ import annotations

import numpy as np

from ....errors import InterpError
from ...reader import Imm, Reg, Vec
from ..base import WIDTH, _bad, _nops, _to_le, _unsupported
from ..operands import _src
from ..param_space import param_size
from ..program import _Step


def _c_bra(prog, ins):
    if set(ins.suffixes) - {"uni"}:
        raise _unsupported(ins)
    _nops(ins, 1)
    target = ins.operands[0]
    ctx = getattr(prog, "cur", None)
    name = (ctx.prefix if ctx is not None else "") + (
        _scoped(prog, ins, target.name) if isinstance(target, Reg) else "")
    if not isinstance(target, Reg) or name not in prog.labels:
        raise InterpError(f"'bra': no label '{target}' in this program", ins.line, ins.col,
                          rule="label")
    return _Step(ins, None, [], [], kind="bra", target=name)


def _scoped(prog, ins, name):
    """The label a bra at `ins` means: where the name is defined in several blocks of one
    function, the definition in the bra's block or the nearest block around it (PTX scopes
    labels by block, as nvcc's inline asm relies on): 'name@line:col' (program._Prog)."""
    defs = prog.label_defs.get(name)
    if not defs:
        return name
    scope = getattr(ins, "scope", None)
    while True:
        for s, key in defs:
            if s is scope:
                return key
        if scope is None:
            return name
        scope = scope.parent


def _c_ret(prog, ins):
    if ins.operands:
        raise _bad(ins, "takes no operands")
    ctx = getattr(prog, "cur", None)
    if ins.opcode == "ret" and ctx is not None and ctx.ret is not None:
        return _Step(ins, None, [], [], kind="bra", target=ctx.ret)   # back to the caller
    return _Step(ins, None, [], [], kind="ret")


def param_key(d, name):
    """The storage (state.params) of a .param variable or parameter that is not an entry
    parameter: one per declaration."""
    return f"{name}@{d.line}:{d.col}"


def _c_call(prog, ins):
    """call{.uni} (rets), f, (args): its 'in' half copies each argument (a .param variable's
    bytes, or a register's or constant's bits) into the callee's .param parameter; its 'out'
    half, where the inlined body ends, copies the callee's return parameters into the
    caller's .param variables."""
    if set(ins.suffixes) - {"uni"}:
        raise _unsupported(ins)
    ctx = getattr(prog, "cur", None)
    if ctx is None or ctx.callee is None:
        raise _bad(ins, "a call needs a module whose functions it names")
    callee = ctx.callee
    ops = list(ins.operands)
    rets = list(ops.pop(0).items) if ops and isinstance(ops[0], Vec) else []
    args = list(ops[1].items) if len(ops) > 1 and isinstance(ops[1], Vec) else []
    for what, have, formal in (("arguments", args, callee.params),
                               ("return values", rets, callee.returns)):
        if len(have) != len(formal):
            raise _bad(ins, f"'{callee.name}' takes {len(formal)} {what}, the call gives "
                            f"{len(have)}")
    scope = callee.body[0].scope if callee.body else None
    reads = []
    pairs = []                     # (source accessor or param key, size, formal key)
    if ctx.phase == "in":
        for a, q in zip(args, callee.params):
            if q.space != "param":
                raise _unsupported(ins, f"'{callee.name}''s .reg parameter '{q.name}' is not "
                                        "modeled (only .param parameters)")
            fkey = f"{q.name}@{q.line}:{q.col}"
            fsize = param_size(q)
            pairs.append((_arg(prog, ins, a, q, fsize, reads), fsize, fkey))
    else:
        for r, q in zip(rets, callee.returns):
            if q.space != "param":
                raise _unsupported(ins, f"'{callee.name}''s .reg return value '{q.name}' is "
                                        "not modeled (only .param)")
            d = prog.prog.lookup(r.name, ins) if isinstance(r, Reg) else None
            if d is None or d.space != "param":
                raise _bad(ins, f"the return value '{r}' must be a .param variable", r)
            pairs.append((f"{q.name}@{q.line}:{q.col}", param_size(q), param_key(d, r.name)))
    del scope

    def run(st):
        m = st.mask
        for src, size, key in pairs:
            if isinstance(src, str):                   # a .param's bytes (the 'out' half)
                data = st.params.get(src)
                if data is None:
                    continue                           # the callee never set it
            else:
                data = src(st)
                if data is None:
                    continue
            dst = st.params.get(key)
            if dst is None:
                dst = st.params[key] = np.zeros((st.n, size), np.uint8)
            k = min(size, data.shape[1])
            dst[m, :k] = data[m, :k]
    return _Step(ins, run, reads, [])


def _arg(prog, ins, a, q, size, reads):
    """fn(state) -> the bytes (n, k) of an argument (None: a .param variable never set)."""
    d = prog.prog.lookup(a.name, ins) if isinstance(a, Reg) else None
    if d is not None and d.space == "param":
        key = param_key(d, a.name)
        return lambda st: st.params.get(key)
    if not isinstance(a, (Reg, Imm)):
        raise _bad(ins, f"cannot pass '{a}'", a)
    t = q.type if q.type in WIDTH and WIDTH[q.type] >= 8 else "b" + str(min(size * 8, 64))
    v = _src(prog, ins, a, t, reads)
    w = WIDTH[t]
    return lambda st: _to_le(np.asarray(v(st)), w)


COMPILERS = {"bra": _c_bra, "ret": _c_ret, "exit": _c_ret, "call": _c_call}
