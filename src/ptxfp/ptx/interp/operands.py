"""Operands bound at compile time: a source operand becomes an accessor fn(state) -> bits
(one shared per register and width, or per immediate), a destination a checked register; a
register read before it is set raises :class:`_Unset`, turned into the error line by the
step that ran it."""

from __future__ import annotations

import numpy as np

from ...errors import UninitializedRegister
from ..reader import Imm, Reg
from .base import WIDTH, _DTYPE, _bad, _imm_bits, _narrow_bits, _special


def _src(prog, ins, op, typ, reads):
    """Register the use of a source operand; return an accessor fn(state) -> bits."""
    if type(op) is Reg:
        # the common case first: a register read at its width again (use() has nothing to
        # check or fix), no parameter, no special register
        name = op.name
        w = WIDTH[typ]
        if prog.width.get(name) == w and not prog.params and not _special(name):
            reads.append((op, typ))
            hit = prog.accessors.get(("reg", name, w))
            return hit if hit is not None else _reader(prog, name, w)
    if isinstance(op, Reg):
        name = op.name
        if prog.params and prog.params.get(name) is not None:
            raise _bad(ins, f"'{name}' is a parameter: load it with ld.param", op)
        w = WIDTH[typ]
        have = prog.width.get(name)
        if have != w or _special(name):
            prog.use(op, typ, ins.line, ins.col, False)
            if _special(name):
                return _shared(prog, ("special", name, w), lambda st: st.special(name, w))
        reads.append((op, typ))
        return _reader(prog, name, w)
    if isinstance(op, Imm):
        bits = _imm_bits(op, typ, ins)
        dt = _DTYPE[WIDTH[typ]]
        return _shared(prog, ("const", bits, dt), lambda st: st.const(bits, dt))
    raise _bad(ins, f"expected a register or an immediate, got '{op}'", op)


def _shared(prog, key, fn):
    """One accessor per `key` in a program (`fn` the first time)."""
    return prog.accessors.setdefault(key, fn)


class _Unset(Exception):
    """Raised by a register reader: the step that ran it turns it into UninitializedRegister
    at the operand's position (readers are shared by every statement that reads the
    register at one width; see _unset)."""

    def __init__(self, name, arr):
        super().__init__(name)
        self.name = name
        self.arr = arr


def _reader(prog, name, w):
    """fn(state) -> the bits of register `name` as a `w`-bit array (checked to be set; _Unset
    when it is not).  One per register and width in a program."""
    key = ("reg", name, w)
    hit = prog.accessors.get(key)
    if hit is not None:
        return hit
    dt = _DTYPE[w]
    if prog.width.get(name) == w:          # the register's arrays are of this width
        def read(st):
            arr = st.regs.get(name)
            if arr is None or (name not in st.full and not st.init[name][st.mask].all()):
                raise _Unset(name, arr)
            return arr
    else:
        def read(st):
            arr = st.regs.get(name)
            if arr is None or (name not in st.full and not st.init[name][st.mask].all()):
                raise _Unset(name, arr)
            return arr if arr.dtype == dt else _narrow_bits(arr, w)
    prog.accessors[key] = read
    return read


def _unset(st, step, e):
    """The UninitializedRegister of a step whose reader raised _Unset: at the first operand
    that reads the register (readers run in operand order)."""
    ins = step.instr
    reg = next((r for r, _ in step.reads if isinstance(r, Reg) and r.name == e.name),
               Reg(e.name))
    try:
        st.uninitialized(reg, ins, e.arr)
    except UninitializedRegister as err:
        return err
    raise AssertionError("unreachable")


def _dst(prog, ins, op, typ, writes):
    if not isinstance(op, Reg):
        raise _bad(ins, f"the destination must be a register, got '{op}'", op)
    if prog.width.get(op.name) != WIDTH[typ] or _special(op.name):
        prog.use(op, typ, ins.line, ins.col, True)     # (at its width again: nothing to do)
    writes.append((op, typ))
    return op


def _puts(prog, d, dt):
    """Can the step store a new array of dtype `dt` in register `d` with _State.put (it has
    the register's dtype)?  False for '_' and a wider register (write() widens)."""
    w = prog.width.get(d.name)
    if w is None:
        return False
    hit = _PUTS.get((w, dt))
    if hit is None:
        hit = _PUTS[(w, dt)] = _DTYPE[w] == np.dtype(dt)
    return hit


_PUTS = {}
