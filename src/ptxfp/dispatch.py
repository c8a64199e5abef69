"""``compute(spelling, *operands)``: run any modelled row, whichever its family.

The entry point of each family (``execute`` for add/sub/mul/fma, ``convert`` for cvt,
``minmax.compute`` for min/max/neg/abs, and ``ptxfp.ops``' families: ``cvtx`` cvt with integers
and .f64, ``compare`` setp/set/selp, ``fops`` f32/f64 min/max/abs/neg/copysign/testp, ``f64``
.f64 add/sub/mul/fma/mad, ``int`` the integer instructions) is one line of ``ENTRY``; the CLI,
the interpreter and the hardware harness call ``compute`` and never branch on the opcode.

``CORE[family](ins)`` is ``fn(ops, n) -> array``: ``ops`` are the source operands in PTX order
(``ins.row.operands[1:]``), 1-D and ``n`` long, each of its type's register dtype (uint8/16/32/64
by width; ``bool`` for ``.pred``); the result has the destination's (``ins.row.operands[0]``:
``.pred`` for setp/testp, twice the width for ``mul.wide``).  A ``{!}c`` negation is the
caller's.  ``CORE2["setp"](ins)`` gives both predicates of ``setp ... p|q, a, b{, c}``.
"""

from __future__ import annotations

from typing import Any, Callable

from .ops.cvt import convert, core as _cvt_core
from .ops.arith import execute, core as _arith_core
from .ops.minmax import compute as minmax, core as _minmax_core
from .core.operands import Operand
from .ops import compare as _compare, cvtx as _cvtx, f64 as _f64, fops as _fops, intops as _int
from .ops import sfu as _sfu
from .isa.spelling import Instruction, parse
from .errors import SpellingError

__all__ = ["compute", "ENTRY", "CORE", "CORE2"]

#: family -> the function that computes its rows
ENTRY: dict[str, Callable[..., Any]] = {"arith": execute, "cvt": convert, "minmax": minmax,
                                        "cvtx": _cvtx.compute, "compare": _compare.compute,
                                        "fops": _fops.compute, "f64": _f64.compute,
                                        "int": _int.compute, "sfu": _sfu.compute}

#: family -> ``core(ins)``: the entry point's computation without its operand checks, as
#: ``fn(ops, n) -> bits`` on checked 1-D operands (or None where the family has none for the
#: form); the interpreter, which has checked its registers already, calls it per instruction
CORE: dict[str, Callable[[Instruction], Any]] = {"arith": _arith_core, "cvt": _cvt_core,
                                                 "minmax": _minmax_core, "cvtx": _cvtx.core,
                                                 "compare": _compare.core, "fops": _fops.core,
                                                 "f64": _f64.core, "int": _int.core,
                                                 "sfu": _sfu.core}

#: opcode -> ``core2(ins)``: ``fn(ops, n) -> (first, second)`` for the forms that write two
#: destinations (``setp ... p|q, a, b``: q = BoolOp(!t, c), or lane 1 of .f16x2/.bf16x2)
CORE2: dict[str, Callable[[Instruction], Any]] = {"setp": _compare.core2}


def compute(spelling: str | Instruction, *operands: Operand, out: Any = None,
            target: str | None = None) -> Any:
    """``execute`` or ``convert``, as the row's family says (same operands, same results).
    ``target`` ('sm_75' ... 'sm_100') picks the GPU of the SFU forms (``.approx``,
    ``div.full``: default sm_75); the other forms compute the same on every target."""
    ins = spelling if isinstance(spelling, Instruction) else parse(spelling)
    if ins.family not in ENTRY:
        raise SpellingError(_elsewhere(ins), spelling=ins.spelling, token=ins.opcode,
                            rule="wrong-entry-point")
    if ins.family == "sfu":
        return _sfu.compute(ins, *operands, out=out, target=target)
    if target is not None:
        _sfu.model.check_target(target)
    return ENTRY[ins.family](ins, *operands, out=out)


def _elsewhere(ins: Instruction) -> str:
    """The message for a spelling no elementwise family computes (the tensor-core forms)."""
    if ins.family in ("mma", "wmma", "wgmma") or ins.opcode in ("mma", "wmma", "wgmma"):
        return (f"'{ins.spelling}' is a tensor-core (matrix) form: compute it with "
                "ptxfp.mma(form, A, B, C) on whole matrices (docs/tensor.md)")
    return f"'{ins.spelling}' is a {ins.family} spelling, which ptxfp.compute does not run"
