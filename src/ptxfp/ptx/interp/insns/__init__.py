"""The instruction compilers: one module per family, each a table ``COMPILERS`` of
{opcode: compile function}; a compile function turns one statement into a step
(``program._Step``) whose ``run(state)`` computes it over the threads of a group.  Floating
point runs through the instruction table's own cores (``row.py``: ``dispatch.CORE``/``ENTRY``,
the same cores as :func:`ptxfp.compute`)."""

from __future__ import annotations

from functools import lru_cache

from .... import isa
from ....errors import UnsupportedInstruction
from ...reader import Reg
from ..base import WIDTH, _HALF, _spelling_types, _unsupported
from . import (barrier, carry, control, cp_async, float as _float, hints, int as _int, matrix, mem,
               mma, move, warp)
from . import hopper as _hopper
from .barrier import _c_bar, _c_nop
from .control import _c_bra, _c_ret
from .cp_async import _c_cp
from .float import _SMALL_PAIRS, _c_arith, _c_cvt
from .matrix import _c_ldmatrix, _c_movmatrix, _c_stmatrix
from .mem import _c_atom, _c_ldst
from .mma import _c_mma
from .row import _c_row, _is_row
from .warp import _c_activemask, _c_match, _c_redux, _c_shfl, _c_vote


@lru_cache(maxsize=4096)
def _compiler(spelling):
    """The compiler of an opcode spelling (None: not modeled)."""
    opcode = spelling.split(".", 1)[0]
    fn = _COMPILERS.get(opcode)
    if fn in _OWN:
        return fn                  # the engine's own (warp-wide) instructions, never a row
    if opcode in isa.OPCODES and fn not in (_c_arith, _c_cvt) and any(
            t in _HALF for t in _spelling_types(spelling)):
        fn = _c_row                # a modelled opcode (neg.bf16 ...) is never integer work
    tys = _spelling_types(spelling)
    if fn is _c_arith and any(t in _HALF or t in ("f32", "f32x2") for t in tys):
        fn = _c_row                # what _c_arith decides, decided once per spelling
    elif fn is _c_cvt and not (len(tys) == 2 and all(t[0] in "us" and t in WIDTH
                                                     for t in tys)):
        small = tys in _SMALL_PAIRS
        if small or not (len(tys) == 2 and tys[0] in ("b16", "b32", "b64")
                         or not any(t in _HALF for t in tys)):
            fn = _c_row
    return fn


def _compile(prog, ins):
    if ins.opcode in mma.NOT_WIRED:
        raise _unsupported(ins, mma.NOT_WIRED[ins.opcode])
    fn = _compiler(ins.opcode_spelling)
    if fn is None:
        if not _is_row(ins.opcode_spelling):
            raise _unsupported(ins)
        fn = _c_row
    try:
        step = fn(prog, ins)
    except UnsupportedInstruction:
        # the glue here does not take this form: a row of the table may (every family's
        # rows run through _c_row, whatever helper added them)
        if fn is _c_row or fn in _OWN or not _is_row(ins.opcode_spelling):
            raise
        step = _c_row(prog, ins)
    if ins.predicate is not None:
        pr = Reg(ins.predicate.name, ins.predicate.line, ins.predicate.col)
        prog.use(pr, "pred", ins.line, ins.col, False)
        step.reads.insert(0, (pr, "pred"))
        step.pred = pr
    return step


#: opcode -> compile function, every family's table
_COMPILERS = {}
for _family in (mma, barrier, warp, mem, _float, _int, move, control, cp_async, matrix,
                hints, carry):
    assert not set(_family.COMPILERS) & set(_COMPILERS), _family.__name__
    _COMPILERS.update(_family.COMPILERS)
# the sm_90a data path (insns/hopper.py): its opcodes, and the forms of shared opcodes (cp,
# fence, prefetch ...) it adds, which it hands to the family's compiler otherwise
assert not set(_hopper.COMPILERS) & set(_COMPILERS)
_COMPILERS.update(_hopper.COMPILERS)
for _op, _fn in _hopper.FALLBACK.items():       # trap / brkpt, unless a family takes them
    _COMPILERS.setdefault(_op, _fn)


#: compilers of instructions the engine runs itself, whatever rows the table has for them
_OWN = frozenset((_c_mma, _c_bar, _c_shfl, _c_vote, _c_atom, _c_nop, _c_ldst, _c_bra, _c_ret,
                  _c_cp, _c_ldmatrix, _c_stmatrix, _c_movmatrix, _c_activemask, _c_redux,
                  _c_match)) | _hopper.OWN
# shared opcodes with sm_90a forms (cp.async.bulk, fence.proxy.async, barrier.cluster ...):
# the sm_90a compiler first, the family's own for every other form
for _op, _fn in _hopper.WRAPS.items():
    _COMPILERS[_op] = _hopper.wrap(_fn, _COMPILERS[_op])
    if _COMPILERS[_op].inner in _OWN or _op not in isa.OPCODES:
        _OWN = _OWN | {_COMPILERS[_op]}
