"""Instructions that only guide the hardware and compute nothing a program can read:
nanosleep (a thread sleeps; the interpreter's order is unchanged), prefetch/prefetchu (a cache
fill), discard (PTX leaves the discarded bytes unpredictable: they keep their value here), and
createpolicy (an opaque cache policy, 0 here, that ld/st/cp.async take and ignore)."""

from __future__ import annotations

import numpy as np

from ...reader import Addr
from ..base import _bad, _nops, _unsupported
from ..operands import _dst, _src
from ..program import _Step


def _c_nanosleep(prog, ins):
    if ins.suffixes != ("u32",):
        raise _unsupported(ins, "nanosleep takes .u32")
    _nops(ins, 1)
    reads = []
    _src(prog, ins, ins.operands[0], "u32", reads)
    return _Step(ins, lambda st: None, reads, [])


def _c_touch(prog, ins):
    """prefetch{.space}{.level} [a] / prefetchu.L1 [a] / discard.global.L2 [a], 128: the
    address is read (it must be set), nothing changes."""
    n = 2 if ins.opcode == "discard" else 1
    _nops(ins, n)
    addr = ins.operands[0]
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    if ins.opcode == "prefetch" and "tensormap" in ins.suffixes:
        raise _unsupported(ins, "prefetch.tensormap (TMA) is not modeled yet")
    if n == 2 and getattr(ins.operands[1], "value", None) != 128:
        raise _bad(ins, "discard's size must be 128", ins.operands[1])
    reads = []
    if addr.base is not None and addr.base.name in prog.width:
        _src(prog, ins, addr.base, "u64" if prog.width[addr.base.name] == 64 else "u32", reads)
    return _Step(ins, lambda st: None, reads, [])


def _c_createpolicy(prog, ins):
    if "b64" not in ins.suffixes:
        raise _unsupported(ins, "createpolicy writes a .b64 policy")
    reads, writes = [], []
    for o in ins.operands[1:]:
        if not hasattr(o, "value"):
            _src(prog, ins, o, "b64" if prog.width.get(getattr(o, "name", "")) == 64 else
                 "u32", reads)
    d = _dst(prog, ins, ins.operands[0], "b64", writes)
    return _Step(ins, lambda st: st.write(d, "b64", st.const(0, np.uint64)),
                 reads, writes)


COMPILERS = {"nanosleep": _c_nanosleep, "prefetch": _c_touch, "prefetchu": _c_touch,
             "discard": _c_touch, "createpolicy": _c_createpolicy}
