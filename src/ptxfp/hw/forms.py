"""The forms the harness verifies: every executable row of the instruction table (ptxfp.isa),
behind one interface: parse, model, widths (all read from the rows and the type table)."""

from __future__ import annotations

from typing import Any

from .. import isa
from ..core import types
from ..isa.spelling import parse


def is_cvt(ins):
    return ins.family == "cvt"


def parse_form(spelling):
    """The parsed Instruction of a spelling (any family)."""
    if not isinstance(spelling, str):
        return spelling
    return parse(spelling)


def model(ins: Any, *operands: Any, sm: int | None = None) -> Any:
    """ptxfp's result bits for a form (execute() or convert(), as its family says); the SFU
    forms (``.approx``, ``div.full``) as ``sm_<sm>`` computes them (the GPU the harness runs
    on), the others the same on every target."""
    from ..dispatch import compute
    ins = parse_form(ins)
    if sm is not None and ins.family == "sfu":
        return compute(ins, *operands, target=f"sm_{int(sm)}")
    return compute(ins, *operands)


def all_spellings():
    """Every canonical spelling: the arithmetic rows, then the cvt rows."""
    return isa.all_spellings()


def sfu_spellings() -> list[str]:
    """Every canonical SFU spelling (``.approx``, ``div.full``): the forms ``--forms sfu``
    verifies on the GPU against the model of its own target."""
    return isa.canonical_spellings("sfu", True)


def width(fmt):
    return types.width(fmt)


def operand_widths(ins):
    return tuple(width(f) for f in ins.operand_formats)


def result_width(ins):
    return ins.result_width


def is_mixed(ins):
    return ins.mixed
