"""Memory: ld/st on every modelled space (.global/generic, .shared, .local, .param), vectors,
address operands, cvta, and atom/red (applied in thread order)."""

from __future__ import annotations

import numpy as np

from ....errors import InterpError, UninitializedRegister
from ...reader import Addr, Reg, Vec
from ..base import (WIDTH, _DTYPE, _SIGNED, _bad, _from_le, _nops, _to_le, _types_of,
                    _unsupported)
from ..operands import _dst, _src
from ..program import _Step
from ..state import GLOBAL_VARS, WINDOW, WINDOW_SIZE, _locate, in_params
from .control import param_key
from ..param_space import PARAM_BASE, param_size
from .row import _row_fn


_SPACES = ("global", "param", "shared", "local", "const", "generic")
#: a state-space qualifier as spelled -> the space modeled (.shared::cta is the block's
#: .shared; so is .shared::cluster, the window of a cluster of one block: insns/cluster.py)
_SPACE_OF = {**{s: s for s in _SPACES}, "shared::cta": "shared",
             "shared::cluster": "shared", "param::entry": "param",
             "param::func": "param"}


def _space_of(sfx):
    """The state space a list of suffixes names ('generic' when none)."""
    return next((_SPACE_OF[s] for s in sfx if s in _SPACE_OF), "generic")


def _c_ldst(prog, ins):
    store = ins.opcode == "st"
    sfx = ins.suffixes
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH or types[0] == "pred":
        raise _unsupported(ins, "ld/st need one type (.b16, .b32, .f32, .u64 ...)")
    t = types[0]
    space = _space_of(sfx)
    if space not in ("global", "generic", "param", "shared", "local", "const"):
        raise _unsupported(ins, f"the .{space} state space is not modeled (only .global, "
                                ".shared, .local, .const, generic addresses and .param)")
    if store and space == "const":
        raise _bad(ins, "the .const space is read-only")
    vec = next((int(s[1:]) for s in sfx if s in ("v2", "v4", "v8")), 1)
    hint = "L2::cache_hint" in sfx                 # a cache-policy operand: read, no effect
    _nops(ins, 3 if hint else 2)
    data, addr = (ins.operands[1], ins.operands[0]) if store else ins.operands[:2]
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    w = WIDTH[t]
    nbytes = max(w // 8, 1)
    reads, writes = [], []
    if hint:
        _src(prog, ins, ins.operands[2], "b64", reads)
    if vec > 1:
        if not isinstance(data, Vec) or len(data.items) != vec:
            raise _bad(ins, f"a .v{vec} access needs a vector of {vec} registers", data)
        items = list(data.items)
    elif isinstance(data, Vec) and data.brackets == "{}" and len(data.items) == 1:
        items = list(data.items)                       # Triton's '{ %rs1 }': one element
    else:
        if isinstance(data, Vec):
            raise _bad(ins, "a vector operand needs .v2 or .v4", data)
        items = [data]
    if space == "param":
        return _param(prog, ins, addr, items, t, w, nbytes, vec, store, reads, writes)
    # global / generic, shared, local memory
    base = _address(prog, ins, addr, space, reads)
    off = addr.offset
    total = nbytes * vec
    if store:
        vals = [_src(prog, ins, o, t, reads) for o in items]
    else:
        outs = [_dst(prog, ins, o, t, writes) for o in items]
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)
    spelling = ins.opcode_spelling

    edt = np.dtype(_DTYPE[max(w, 8)]).newbyteorder("<")

    generic = space == "generic"

    def run(st):
        m = st.mask
        a = base(st) + off
        if store and generic and st.param_size and \
                in_params(a if st.all_on else a[m]).any():
            raise InterpError(f"'{spelling}': a kernel's parameters are read-only",
                              *where, rule="address")
        buf, idx = _locate(st, space, a, m, total, spelling, where, ipos)
        # the accesses are aligned: the memory as little-endian words of the element size
        words = buf[:buf.size // nbytes * nbytes].view(edt)
        wi = idx // nbytes
        if store:
            sel = m if not st.all_on else slice(None)
            at = wi[sel]
            if at.size > 1 and not (np.diff(at) > 0).all():
                # two threads store to one place: in thread order the last one's value stays
                rev = at[::-1]
                _, first = np.unique(rev, return_index=True)
                keep = np.zeros(at.size, bool)
                keep[at.size - 1 - first] = True
                at = at[keep]
            else:
                keep = None
            for k, v in enumerate(vals):
                bits = v(st)[sel]
                if keep is not None:
                    bits = bits[keep]
                words[at + k] = bits
        else:
            for k, o in enumerate(outs):
                v = words[wi + k] if words.size else np.zeros(st.n, edt)
                st.write(o, t, v.astype(_DTYPE[max(w, 8)], copy=False) if w > 1 else v)
    return _Step(ins, run, reads, writes)


def _param(prog, ins, addr, items, t, w, nbytes, vec, store, reads, writes):
    """ld.param / st.param: an entry parameter (an input; read-only), a callee's parameter or
    return value, or a call site's .param variable (per thread, state.params)."""
    if addr.base is None:
        raise _bad(ins, "ld.param/st.param need [parameter] or [parameter+offset]", addr)
    pname = addr.base.name
    if pname not in prog.params:
        pd = prog.prog.lookup(pname.split("@")[0], ins)
        if pname in prog.width or (pd is not None and pd.space == "reg"):
            if store:                                  # [%rd+imm]: an address in a register
                raise _bad(ins, "st.param through a register is not modeled (a kernel's "
                                "parameters are read-only)", addr)
            from .params import _c_ld_param_reg
            return _c_ld_param_reg(prog, ins, addr, items, t, vec)
    p = prog.params.get(pname)
    local = None
    if p is None and prog.function is not None:
        d = prog.prog.lookup(pname, ins)
        if d is None or d.space != "param":
            raise _bad(ins, f"'{pname}' is not a parameter of '{prog.function.name}' or a "
                            ".param variable", addr)
        local = param_key(d, pname)
        ptype, psize = d.type, param_size(d)
    elif p is not None:
        if store:
            raise _bad(ins, f"'{pname}' is a kernel parameter: it is read-only", addr)
        ptype = p.type
        psize = max(WIDTH.get(ptype, 8) // 8, 1) * int(np.prod(p.array or (1,)))
    else:                                              # snippet: the load says what it is
        if store:
            raise _unsupported(ins, "st.param needs a module (a call's .param variables)")
        ptype, psize = t, nbytes * vec + max(addr.offset, 0)
    if local is None:
        psize = prog.param_type.setdefault(pname, (ptype, psize, addr.line or ins.line,
                                                   addr.col or ins.col))[1]
    off = addr.offset
    if off < 0 or off + nbytes * vec > psize:
        raise _bad(ins, f"[{pname}+{off}] is past the {psize}-byte parameter", addr)
    if local is None:
        reads.append((("param", pname), ptype))
    key = local or pname
    if store:
        vals = [_src(prog, ins, o, t, reads) for o in items]

        def run(st):
            b = st.params.get(key)
            if b is None:
                b = st.params[key] = np.zeros((st.n, psize), np.uint8)
            m = st.mask
            for k, v in enumerate(vals):
                lo = off + k * nbytes
                b[m, lo:lo + nbytes] = _to_le(v(st), w)[m]
        return _Step(ins, run, reads, [])
    outs = [_dst(prog, ins, o, t, writes) for o in items]

    def run(st):
        b = st.params.get(key)
        if b is None:
            raise UninitializedRegister(
                f"parameter '{pname}' has no value" + (
                    "" if local else f" (give it as an input, e.g. inputs={{'{pname}': ...}})"),
                addr.line or ins.line, addr.col or ins.col, rule="uninitialized")
        for k, o in enumerate(outs):
            lo = off + k * nbytes
            st.write(o, t, _from_le(b[:, lo:lo + nbytes], w))
    return _Step(ins, run, reads, writes)


def _address(prog, ins, addr, space, reads):
    """fn(state) -> int64 array (n,): the base of an address operand [base+offset] (a
    register, a .shared/.local variable, or nothing: 0), the offset not added."""
    b = addr.base
    if b is None:
        return _zeros_of
    if b.name in prog.params:
        raise _bad(ins, f"'{b.name}' is a parameter: load its value with ld.param first", addr)
    v = prog.var(b.name, ins)
    if v is not None:
        vspace, voff = v
        win = 0
        if space == "generic" and vspace != "global":
            win = WINDOW[vspace]                       # the variable's generic address
        elif space != vspace:
            raise _bad(ins, f"'{b.name}' is a .{vspace} variable: address it with "
                            f"ld.{vspace}/st.{vspace} or a generic address", addr)
        if voff is None:                               # extern .shared: after the statics
            return lambda st: np.full(st.n, prog.extern_offset + win, np.int64)
        return lambda st: np.full(st.n, voff + win, np.int64)
    if b.name in prog.prog.variables:
        raise _unsupported(ins, f"addressing the .{prog.prog.variables[b.name].space} variable "
                                f"'{b.name}' is not modeled; pass addresses in registers")
    base_t = "u64" if prog.width.get(b.name, 64) == 64 else "u32"
    r = _src(prog, ins, b, base_t, reads)
    return lambda st: r(st).astype(np.int64)


def _zeros_of(st):
    return np.zeros(st.n, np.int64)


def _c_cvta(prog, ins):
    """cvta.{space}.{u32,u64} d, a (the space's address -> the generic one) and cvta.to.{space}
    (back), on .global and .param (the identity: global addresses are generic ones, and so
    are the entry parameters' addresses, the parameter window of param_space.py), .shared,
    .local, .const (each a window of the generic space: state.WINDOW).  `a` may name a
    variable: its address."""
    types = _types_of(ins)
    sfx = ins.suffixes
    to = "to" in sfx
    spaces = [_SPACE_OF[x] for x in sfx if x in _SPACE_OF]
    if len(types) != 1 or types[0] not in ("u64", "u32") or len(spaces) != 1 or \
            set(sfx) - {"to", types[0], *[x for x in sfx if x in _SPACE_OF]}:
        raise _unsupported(ins, "cvta{.to}.{global,shared,local,const,param}.{u32,u64}")
    space = spaces[0]
    if space == "param":                       # the parameter window (param_space.py)
        _nops(ins, 2)
        from .params import _c_cvta_param
        return _c_cvta_param(prog, ins, types[0])
    if space not in ("global", "shared", "local", "const"):
        raise _unsupported(ins, f"cvta on .{space} is not modeled")
    _nops(ins, 2)
    t = types[0]
    reads, writes = [], []
    src = ins.operands[1]
    v = prog.var(src.name, ins) if isinstance(src, Reg) and src.name not in prog.width \
        and not src.name.startswith("%") else None
    if v is not None:
        if to or v[0] != space:
            raise _bad(ins, f"'{src.name}' is a .{v[0]} variable", src)
        voff = v[1]
        a = (lambda st: np.full(st.n, prog.extern_offset, np.uint64)) if voff is None else \
            (lambda st: np.full(st.n, voff, np.uint64))
    else:
        a = _src(prog, ins, src, t, reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    if space == "global":
        return _Step(ins, lambda st: st.write(d, t, a(st)), reads, writes)
    base = np.uint64(WINDOW[space])
    m = np.uint64((1 << WIDTH[t]) - 1)
    dt = _DTYPE[WIDTH[t]]
    if to:
        return _Step(ins, lambda st: st.write(d, t, ((a(st).astype(np.uint64) - base) & m)
                                             .astype(dt)), reads, writes)
    return _Step(ins, lambda st: st.write(d, t, ((a(st).astype(np.uint64) + base) & m)
                                         .astype(dt)), reads, writes)


def _c_isspacep(prog, ins):
    """isspacep.{global,shared,local,const,param} p, a: is generic address a in that space
    (the windows of state.WINDOW and the parameter window; global: below the windows or a
    .global variable)."""
    sfx = ins.suffixes
    spaces = [_SPACE_OF[x] for x in sfx if x in _SPACE_OF]
    if len(sfx) != 1 or len(spaces) != 1 or spaces[0] not in ("global", "shared", "local",
                                                              "const", "param"):
        raise _unsupported(ins, "isspacep.{global,shared,local,const,param}")
    space = spaces[0]
    _nops(ins, 2)
    reads, writes = [], []
    t = "u64" if prog.width.get(getattr(ins.operands[1], "name", ""), 64) == 64 else "u32"
    a = _src(prog, ins, ins.operands[1], t, reads)
    d = _dst(prog, ins, ins.operands[0], "pred", writes)
    lo = GLOBAL_VARS if space == "global" else PARAM_BASE if space == "param" else \
        WINDOW[space]

    def run(st):
        x = a(st).astype(np.int64)
        r = (x >= lo) & (x < lo + WINDOW_SIZE)
        if space == "global":
            r |= x < GLOBAL_VARS
        st.write(d, "pred", r)
    return _Step(ins, run, reads, writes)


_ATOM_FLOAT = {"f32": "add.rn.ftz.f32", "f16": "add.rn.f16", "bf16": "add.rn.bf16",
               "f64": "add.rn.f64", "f16x2": "add.rn.f16x2", "bf16x2": "add.rn.bf16x2"}


def _atom_op(op, t, ins):
    """fn(old bits, b bits, c bits or None) -> new bits, for one round (see _c_atom)."""
    w = WIDTH[t]
    dt = _DTYPE[w]
    sdt = _SIGNED.get(w)
    if op == "add" and t in _ATOM_FLOAT:
        f = _row_fn(_ATOM_FLOAT[t], ins)
        return lambda o, b, c: f(o, b)
    if t[0] == "f" or t in ("bf16", "bf16x2"):
        raise _unsupported(ins, f"atomic .{op} on .{t} is not modeled")
    if op == "add":
        return lambda o, b, c: (o + b).astype(dt)
    if op in ("min", "max"):
        f = np.minimum if op == "min" else np.maximum
        if t[0] == "s":
            return lambda o, b, c: f(o.view(sdt), b.view(sdt)).view(dt)
        return lambda o, b, c: f(o, b)
    if op in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return lambda o, b, c: f(o, b)
    if op == "exch":
        return lambda o, b, c: b
    if op == "cas":
        return lambda o, b, c: np.where(o == b, c, o)
    if op == "inc":
        return lambda o, b, c: np.where(o >= b, dt(0), o + dt(1)).astype(dt)
    if op == "dec":
        return lambda o, b, c: np.where((o == 0) | (o > b), b, o - dt(1)).astype(dt)
    raise _unsupported(ins)


def _c_atom(prog, ins):
    """atom/red on .global (generic) and .shared: d = old, memory = old op b (cas: c).  Threads
    of one instruction apply in thread order, lowest linear id first, each seeing the one
    before it; atom.add.f32 is add.rn.ftz.f32 (PTX: it flushes subnormals), the .f16/.bf16
    adds add.rn."""
    red = ins.opcode == "red"
    sfx = ins.suffixes
    space = _space_of(sfx)
    if space not in ("global", "generic", "shared"):
        raise _unsupported(ins, f"atomics on .{space} are not modeled")
    ops = [x for x in sfx if x in ("add", "min", "max", "and", "or", "xor", "exch", "cas",
                                   "inc", "dec")]
    tys = _types_of(ins)
    if len(ops) != 1 or len(tys) != 1 or tys[0] not in WIDTH or any(
            x.startswith("v") and x[1:].isdigit() for x in sfx):
        raise _unsupported(ins, "one operation and one type (vector atomics are not modeled)")
    op, t = ops[0], tys[0]
    nsrc = 2 if op == "cas" else 1
    _nops(ins, (0 if red else 1) + 1 + nsrc)
    reads, writes = [], []
    k = 0 if red else 1
    addr = ins.operands[k]
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    base = _address(prog, ins, addr, space, reads)
    b = _src(prog, ins, ins.operands[k + 1], t, reads)
    c = _src(prog, ins, ins.operands[k + 2], t, reads) if op == "cas" else None
    d = None if red else _dst(prog, ins, ins.operands[0], t, writes)
    f = _atom_op(op, t, ins)
    w = WIDTH[t]
    nb = w // 8
    where = (addr.line or ins.line, addr.col or ins.col)
    spelling, off = ins.opcode_spelling, addr.offset

    def run(st):
        m = st.mask
        buf, idx = _locate(st, space, base(st) + off, m, nb, spelling, where,
                           (ins.line, ins.col))
        tids = np.nonzero(m)[0]
        pos = idx[tids]
        bv, cv = b(st)[tids], (c(st)[tids] if c is not None else None)
        order = np.lexsort((tids, pos))            # by address, then thread id
        sp = pos[order]
        first = np.r_[True, sp[1:] != sp[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(sp.size), 0))
        rank = np.empty(sp.size, np.int64)
        rank[order] = np.arange(sp.size) - start
        old_all = np.zeros(tids.size, _DTYPE[w])
        span = np.arange(nb)
        for r in range(int(rank.max()) + 1 if rank.size else 0):
            sel = np.nonzero(rank == r)[0]
            p = pos[sel][:, None] + span
            old = _from_le(buf[p], w)
            new = f(old, bv[sel], cv[sel] if cv is not None else None)
            buf[p] = _to_le(np.asarray(new).astype(_DTYPE[w]), w)
            old_all[sel] = old
        if d is not None:
            full = np.zeros(st.n, _DTYPE[w])
            full[tids] = old_all
            st.write(d, t, full)
    return _Step(ins, run, reads, writes)


COMPILERS = {"ld": _c_ldst, "st": _c_ldst, "cvta": _c_cvta, "isspacep": _c_isspacep, "atom": _c_atom, "red": _c_atom}
