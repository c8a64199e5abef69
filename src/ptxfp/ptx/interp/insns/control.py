"""Control flow: bra (its target label), ret/exit; the scheduler (schedule.py) runs them."""

from __future__ import annotations

from ....errors import InterpError
from ...reader import Reg
from ..base import _bad, _nops, _unsupported
from ..program import _Step


def _c_bra(prog, ins):
    if set(ins.suffixes) - {"uni"}:
        raise _unsupported(ins)
    _nops(ins, 1)
    target = ins.operands[0]
    if not isinstance(target, Reg) or target.name not in prog.labels:
        raise InterpError(f"'bra': no label '{target}' in this program", ins.line, ins.col,
                          rule="label")
    return _Step(ins, None, [], [], kind="bra", target=_scoped(prog, ins, target.name))


def _scoped(prog, ins, name):
    """The label a bra at `ins` means: where the name is defined in several blocks, the
    definition in the bra's block or the nearest block around it (PTX scopes labels by
    block, as nvcc's inline asm relies on)."""
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
    return _Step(ins, None, [], [], kind="ret")


COMPILERS = {"bra": _c_bra, "ret": _c_ret, "exit": _c_ret}
