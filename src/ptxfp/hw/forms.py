"""The forms the harness verifies: every executable row of the instruction table (ptxfp.isa),
behind one interface: parse, model, widths (all read from the rows and the type table)."""

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


def model(ins, *operands):
    """ptxfp's result bits for a form (execute() or convert(), as its family says)."""
    from ..dispatch import compute
    return compute(ins, *operands)


def all_spellings():
    """Every canonical spelling: the arithmetic rows, then the cvt rows."""
    return isa.all_spellings()


def width(fmt):
    return types.width(fmt)


def operand_widths(ins):
    return tuple(width(f) for f in ins.operand_formats)


def result_width(ins):
    return ins.result_width


def is_mixed(ins):
    return ins.mixed
