"""The forms the harness verifies: the arithmetic table (ptxfp.isa) and the cvt table
(ptxfp.isa_cvt, computed by ptxfp.cvt), behind one interface: parse, model, widths."""

from .. import cvt as _cvt_module
from .. import isa
from ..spelling import parse


def _cvt():
    return _cvt_module


def is_cvt(ins):
    return getattr(ins, "opcode", None) == "cvt"


def parse_form(spelling):
    """An arithmetic Instruction or a CvtInstruction (``cvt.*``)."""
    if not isinstance(spelling, str):
        return spelling
    if spelling.strip().startswith("cvt."):
        return _cvt().parse_cvt(spelling)
    return parse(spelling)


def model(ins, *operands):
    """ptxfp's result bits for a form (execute() or convert())."""
    if is_cvt(ins):
        return _cvt().convert(ins, *operands)
    from ..execute import execute
    return execute(ins, *operands)


def all_spellings():
    """Every canonical spelling: the arithmetic table, then the cvt table."""
    return list(isa.canonical_spellings()) + list(_cvt().canonical_spellings())


def width(fmt):
    return 16 if fmt in ("f16", "bf16") else 32


def operand_widths(ins):
    return tuple(width(f) for f in ins.operand_formats)


def result_width(ins):
    if is_cvt(ins):
        return ins.result_width
    return width(ins.dtype)


def is_mixed(ins):
    return bool(getattr(ins, "mixed", False)) and not is_cvt(ins)
