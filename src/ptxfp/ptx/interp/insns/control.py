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
    return _Step(ins, None, [], [], kind="bra", target=target.name)


def _c_ret(prog, ins):
    if ins.operands:
        raise _bad(ins, "takes no operands")
    return _Step(ins, None, [], [], kind="ret")


COMPILERS = {"bra": _c_bra, "ret": _c_ret, "exit": _c_ret}
