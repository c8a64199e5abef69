"""Rows of the instruction table (every family's floating-point forms): the row says the
operands and their types, the family's core (``dispatch.CORE``, as :func:`ptxfp.compute` runs
it, without its operand checks) or entry point (``dispatch.ENTRY``) computes them."""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from .... import dispatch as _dispatch
from ....dispatch import CORE, ENTRY
from ....errors import InterpError, NoModelError, SpellingError
from ...reader import Vec
from ..base import WIDTH, _DTYPE, _nops, _parse_once, _unsupported
from ..operands import _dst, _puts, _src
from ..program import _Step
from ..state import _State


#: opcode -> two-result core (setp p|q), where the instruction table has them
_CORE2 = getattr(_dispatch, "CORE2", {})


@lru_cache(maxsize=4096)
def _is_row(spelling):
    """Is `spelling` a form of the instruction table (any family)?"""
    try:
        _parse_once(spelling)
    except SpellingError:
        return False
    return True


def _c_row(prog, ins):
    """A form of the instruction table (any family): its row says the operands and their
    types; the family's core (``dispatch.CORE``: execute's, convert's or min/max's kernels
    without their operand checks) runs it, or its entry point (``dispatch.ENTRY``) where the
    family has no core for the form."""
    try:
        form = _parse_once(ins.opcode_spelling)
    except SpellingError as e:
        if e.rule in ("not-modeled", "unknown-instruction", "unknown-modifier", "illegal-type"):
            # a form no family of the table has (ptxfp check says whether PTX has it)
            raise _unsupported(ins, str(e)) from None
        raise InterpError(str(e), ins.line, ins.col, rule=e.rule) from None
    ops = list(ins.operands)
    if form.dtype.endswith("x4") and len(ops) == 3 and isinstance(ops[1], Vec):
        # cvt.rs into four lanes writes its sources as one vector operand {a, b, e, f}
        ops = [ops[0], *ops[1].items, ops[2]]
    try:
        fmts, core, out_dt = _row_plan(ins.opcode_spelling)
    except NoModelError as e:          # a row of the table that no model computes (tanh ...)
        raise _unsupported(ins, str(e)) from None
    if len(ops) != 1 + len(fmts):
        _nops(ins, 1 + len(fmts))
    reads, writes = [], []
    srcs = [_src(prog, ins, o, f, reads) for o, f in zip(ops[1:], fmts)]
    dst0 = ins.operands[0]
    # the destination register's type: a predicate for setp/testp (whose rows name the
    # compared type), else the row's destination type
    typ = "pred" if ins.opcode in _PRED_RESULT else form.dtype
    if isinstance(dst0, Vec) and dst0.brackets == "|" and len(dst0.items) == 2 and \
            typ == "pred":
        # setp's 'p|q': the family's two-result core where it has one (dispatch.CORE2: q =
        # BoolOp(!t, c), or lane 1 of a packed compare), else q = !p (no BoolOp)
        d, q = (_dst(prog, ins, o, "pred", writes) for o in dst0.items)
        core2 = _CORE2.get(ins.opcode)
        two = core2(form) if core2 is not None else None
        if two is None and (len(srcs) > 2 or form.dtype in ("f16x2", "bf16x2") or any(
                t in ("f16x2", "bf16x2") for t in fmts)):
            raise _unsupported(ins, "its second destination needs the family's two-result "
                                    "core (dispatch.CORE2)")
        entry = ENTRY[form.family]

        def run(st):
            args = [s(st) for s in srcs]
            if two is not None:
                r, r2 = two(args, st.n)
            else:
                r = core(args, st.n) if core is not None else entry(form, *args)
                r2 = ~np.asarray(r).astype(bool)
            st.write(d, "pred", np.asarray(r).astype(bool))
            st.write(q, "pred", np.asarray(r2).astype(bool))
        return _Step(ins, run, reads, writes)
    d = _dst(prog, ins, dst0, typ, writes)
    if typ != form.dtype:
        out_dt = np.dtype(_DTYPE[WIDTH[typ]])
    if core is not None and d.name != "_":
        # the operands are the registers' own arrays (1-D, of the operands' widths): the
        # family's kernel runs on them without the entry point's operand checks
        store = _State.put if _puts(prog, d, out_dt) else _State.write
        run = partial(_ROW_RUNS.get(len(srcs), _row_n), core, store, d, typ, *srcs)
        return _Step(ins, run, reads, writes)
    entry = ENTRY[form.family]

    def run(st):
        st.write(d, typ, entry(form, *[s(st) for s in srcs]))
    return _Step(ins, run, reads, writes)


# A row's step: partial(_rowK, core, store, d, typ, *readers)(st).  A partial holds its
# arguments in one tuple, where a closure holds a cell for each: fewer objects per statement.
def _row1(core, store, d, typ, s0, st):
    store(st, d, typ, core((s0(st),), st.n))


def _row2(core, store, d, typ, s0, s1, st):
    store(st, d, typ, core((s0(st), s1(st)), st.n))


def _row3(core, store, d, typ, s0, s1, s2, st):
    store(st, d, typ, core((s0(st), s1(st), s2(st)), st.n))


def _row_n(core, store, d, typ, *args):
    *srcs, st = args
    store(st, d, typ, core([s(st) for s in srcs], st.n))


_ROW_RUNS = {1: _row1, 2: _row2, 3: _row3}


_PRED_RESULT = frozenset(("setp", "testp"))


@lru_cache(maxsize=4096)
def _row_plan(spelling):
    """(operand formats, the family's core or None, its result dtype) of a form's spelling
    (parsed already): the core only where the readers' arrays are the operands' dtypes."""
    form = _parse_once(spelling)
    fmts = tuple(form.operand_formats)
    core = CORE[form.family](form) if form.family in CORE else None

    def plain(f):
        w = WIDTH.get(f)
        return w in (8, 16, 32, 64) and _DTYPE[w] == np.dtype(f"uint{w}")
    if not all(plain(f) for f in fmts):
        core = None
    w = WIDTH.get(form.dtype, 0)
    return fmts, core, np.dtype(_DTYPE[w]) if w in _DTYPE else np.dtype(np.uint64)


def _row_fn(spelling, ins):
    """fn(a_bits, b_bits) -> bits of a two-operand row of the table (its core, else its
    entry point)."""
    if not _is_row(spelling):
        raise _unsupported(ins, f"it needs '{spelling}', which the instruction table lacks")
    form = _parse_once(spelling)
    fmts, core, _ = _row_plan(spelling)
    if core is not None:
        return lambda x, y: core((x, y), x.size)
    entry = ENTRY[form.family]
    return lambda x, y: np.asarray(entry(form, x, y))
