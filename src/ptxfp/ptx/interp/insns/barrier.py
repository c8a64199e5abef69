"""Barriers and memory ordering: bar/barrier .sync/.arrive (released by the scheduler),
membar/fence (nothing to compute)."""

from __future__ import annotations

from ..base import _bad, _unsupported
from ..operands import _src
from ..program import _Step


def _c_bar(prog, ins):
    """bar.sync / bar.cta.sync / barrier.sync(.aligned) a{, b} and bar.arrive / barrier.arrive
    a, b (a: the barrier, 0..15; b: the thread count, default every thread of the block)."""
    if ins.opcode == "bar" and tuple(ins.suffixes) == ("warp", "sync"):
        from .warp import _c_bar_warp
        return _c_bar_warp(prog, ins)
    sfx = set(ins.suffixes) - {"cta", "aligned"}
    if sfx not in ({"sync"}, {"arrive"}) and not (ins.opcode == "barrier" and not sfx):
        raise _unsupported(ins, "only bar.sync, barrier.sync, bar.arrive, barrier.arrive "
                                "and bar.warp.sync are modeled")
    arrive = "arrive" in sfx
    ops = ins.operands
    if not 1 <= len(ops) <= 2 or (arrive and len(ops) != 2):
        raise _bad(ins, "expects a barrier number" + (" and a thread count" if arrive else
                                                      " and an optional thread count"))
    reads = []
    ida = _src(prog, ins, ops[0], "u32", reads)
    cnt = _src(prog, ins, ops[1], "u32", reads) if len(ops) == 2 else None
    return _Step(ins, None, reads, [], kind="bar", extra=(arrive, ida, cnt))


def _c_nop(prog, ins):
    """membar / fence: memory ordering, nothing to compute (the interpreter runs one
    instruction at a time over the threads, every access seen by the next)."""
    return _Step(ins, lambda st: None, [], [])


COMPILERS = {"bar": _c_bar, "barrier": _c_bar, "membar": _c_nop, "fence": _c_nop}
