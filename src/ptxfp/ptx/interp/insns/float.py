"""The arithmetic opcodes shared by integers and floats (add/sub/mul/fma/mad, cvt): the
half, mixed, .f32, .f32x2 and small-float forms are rows of the instruction table (row.py),
the integer ones integer glue (int.py)."""

from __future__ import annotations

from .... import isa
from ..base import WIDTH, _HALF, _types_of, _unsupported
from .carry import _c_carry
from .int import _c_cvt_int, _c_int
from .row import _c_row


def _c_arith(prog, ins):
    """add/sub/mul/fma (and mad): the half, mixed, .f32 and .f32x2 forms are rows of the table,
    integer ones here."""
    tys = _types_of(ins)
    if "cc" in ins.suffixes and ins.opcode in ("add", "sub", "mad"):
        return _c_carry(prog, ins)
    if not any(t in _HALF or t in ("f32", "f32x2") for t in tys):
        if ins.opcode in ("add", "sub", "mul", "mad") and tys and all(
                t[0] in "bsu" and t != "bf16" for t in tys):
            return _c_int(prog, ins)
        raise _unsupported(ins, "ptxfp models .f16/.bf16/.f16x2/.bf16x2, .f32, .f32x2 and the "
                                "mixed .f32.f16/.f32.bf16 forms")
    return _c_row(prog, ins)


def _c_cvt(prog, ins):
    tys = _types_of(ins)
    if len(tys) == 2 and all(t[0] in "us" and t in WIDTH for t in tys):
        return _c_cvt_int(prog, ins, tys)
    small = tuple(tys) in _SMALL_PAIRS            # fp8/fp6/fp4/ue8m0 (isa/cvt_small.py)
    if not small and (len(tys) == 2 and tys[0] in ("b16", "b32", "b64")
                      or not any(t in _HALF for t in tys)):
        raise _unsupported(ins, "ptxfp models cvt between .f32 and .f16/.bf16/.f16x2/.bf16x2, "
                                "the fp8/fp6/fp4/ue8m0 forms, and between integer types")
    return _c_row(prog, ins)


_SMALL_PAIRS = frozenset(isa.cvt_small.PAIRS)


COMPILERS = {
    "add": _c_arith, "sub": _c_arith, "mul": _c_arith, "fma": _c_arith, "mad": _c_arith,
    "cvt": _c_cvt,
}
