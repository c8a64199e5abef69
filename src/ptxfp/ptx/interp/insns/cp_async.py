"""The async copies of sm_80: cp.async (.ca/.cg, 4/8/16 bytes, src-size zero fill, ignore-src,
cache hints), cp.async.commit_group, cp.async.wait_group N and cp.async.wait_all.

A copy reads its global source when it is issued and lands in .shared only when its thread
waits for its group (state._AsyncCopies): PTX promises the bytes only after the wait, so a
kernel that reads them earlier sees the old bytes here.  A wait_group with no group pending
returns at once, as PTX defines it ("wait till only N or fewer of the most recent
cp.async-groups are pending"): Triton emits ``cp.async.wait_group 0`` after its last copy and
in loop epilogues where nothing may be in flight.
"""

from __future__ import annotations

import numpy as np

from ....errors import InterpError
from ...reader import Addr, Imm, Reg
from ..base import _bad, _nops, _unsupported
from ..operands import _src
from ..program import _Step
from ..state import _locate
from .mem import _address, _space_of

#: the qualifiers cp.async takes besides its cache level (PTX ISA, "cp.async")
_HINTS = frozenset(("L2::cache_hint", "L2::64B", "L2::128B", "L2::256B"))


def _c_cp(prog, ins):
    sfx = ins.suffixes
    if not sfx or sfx[0] != "async":
        raise _unsupported(ins, "of the cp instructions, cp.async (sm_80) is modeled")
    rest = sfx[1:]
    if rest == ("commit_group",):
        _nops(ins, 0)
        return _Step(ins, lambda st: st.async_copies().commit(st.mask), [], [])
    if rest in (("wait_group",), ("wait_all",)):
        if rest == ("wait_all",):
            _nops(ins, 0)
            pending = 0
        else:
            _nops(ins, 1)
            n = ins.operands[0]
            if not isinstance(n, Imm) or n.kind not in ("dec", "hex") or not 0 <= n.value < 8:
                raise _bad(ins, f"the group count must be an integer constant 0..7, got '{n}'",
                           n)
            pending = n.value
        wait_all = rest == ("wait_all",)

        def run(st):
            if st.copies is None:
                return                        # nothing was ever issued: nothing to wait for
            if wait_all:
                st.copies.commit(st.mask)
            st.copies.wait(st.mask, pending, st.flat)
        return _Step(ins, run, [], [])
    if rest and rest[0] in ("bulk", "mbarrier"):
        raise _unsupported(ins, "the bulk copies and cp.async.mbarrier.arrive (sm_90 data "
                                "path) are not modeled yet")
    level = [x for x in rest if x in ("ca", "cg")]
    spaces = [_space_of((x,)) for x in rest if x not in ("ca", "cg") and x not in _HINTS]
    if len(level) != 1 or spaces != ["shared", "global"]:
        raise _unsupported(ins, "cp.async takes .ca or .cg, .shared{::cta}.global and the "
                                ".L2 cache hints")
    hint = "L2::cache_hint" in rest
    ops = list(ins.operands)
    if len(ops) < 3:
        raise _bad(ins, f"expects [dst], [src], cp-size, got {len(ops)} operands")
    dst, src, size = ops[:3]
    for a in (dst, src):
        if not isinstance(a, Addr):
            raise _bad(ins, f"expected an address '[...]', got '{a}'", a)
    if not isinstance(size, Imm) or size.value not in (4, 8, 16):
        raise _bad(ins, f"cp-size must be 4, 8 or 16, got '{size}'", size)
    cp = size.value
    if level[0] == "cg" and cp != 16:
        raise _bad(ins, f"cp.async.cg copies 16 bytes, got cp-size {cp}", size)
    extra = ops[3:]
    policy = None
    if hint:
        if not extra:
            raise _bad(ins, ".L2::cache_hint needs a cache-policy operand")
        policy, extra = extra[-1], extra[:-1]
    if len(extra) > 1:
        raise _bad(ins, f"expects at most 5 operands, got {len(ops)}")
    reads = []
    dbase = _address(prog, ins, dst, "shared", reads)
    sbase = _address(prog, ins, src, "global", reads)
    srcsize = ignore = None
    neg = False
    if extra:
        e = extra[0]
        name = e.name if isinstance(e, Reg) else ""
        if name.startswith("!"):
            neg, e = True, Reg(name[1:], e.line, e.col)
            name = e.name
        d = prog.decl_of.get(prog.key(name, ins)) if name else None
        if (d is not None and d.type == "pred") or prog.width.get(name) == 1 or neg:
            ignore = _src(prog, ins, e, "pred", reads)
        else:
            if isinstance(e, Imm) and not 0 <= (e.value or 0) <= cp:
                raise _bad(ins, f"src-size {e.text} is over the cp-size {cp}", e)
            srcsize = _src(prog, ins, e, "u32", reads)
    if policy is not None:
        _src(prog, ins, policy, "b64", reads)      # read (it must be set), not modeled
    spelling = ins.opcode_spelling
    dwhere = (dst.line or ins.line, dst.col or ins.col)
    swhere = (src.line or ins.line, src.col or ins.col)
    ipos = (ins.line, ins.col)
    doff, soff = dst.offset, src.offset
    span = np.arange(cp)

    def run(st):
        m = st.mask
        if srcsize is not None:
            ss = srcsize(st).astype(np.int64)
            big = m & (ss > cp)
            if big.any():
                t = int(np.nonzero(big)[0][0])
                raise InterpError(f"'{spelling}': thread {t}'s src-size {int(ss[t])} is over "
                                  f"the cp-size {cp}", *ipos, rule="operand")
        elif ignore is not None:
            p = ignore(st)
            ss = np.where(~p if neg else p, 0, cp).astype(np.int64)
        else:
            ss = np.full(st.n, cp, np.int64)
        _, didx = _locate(st, "shared", dbase(st) + doff, m, cp, spelling, dwhere, ipos)
        reading = m & (ss > 0)
        tids = np.nonzero(m)[0]
        if reading.any():
            gbuf, sidx = _locate(st, "global", sbase(st) + soff, reading, cp, spelling,
                                 swhere, ipos, extent=ss)
            valid = span < ss[tids][:, None]
            at = np.where(valid, sidx[tids][:, None] + span, 0)
            data = np.where(valid, gbuf[at], np.uint8(0)).astype(np.uint8)
        else:
            data = np.zeros((tids.size, cp), np.uint8)
        st.async_copies().issue(tids, didx[tids], data)
    return _Step(ins, run, reads, [])


COMPILERS = {"cp": _c_cp}
