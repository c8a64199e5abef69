"""Warp-wide instructions: shfl.sync and vote.sync, with the membermask checks."""

from __future__ import annotations

import numpy as np

from ....errors import InterpError
from ...reader import Reg, Vec
from ..operands import _dst, _src
from ..base import _nops, _unsupported
from ..program import _Step


def _warp_bits(st, m, warp, lane):
    """uint64 array (warps,): bit `lane` set for each thread of mask `m`."""
    w = np.bincount(warp[m], weights=np.ldexp(1.0, lane[m]), minlength=st.geom.nblocks *
                    st.geom.wpb)
    return w.astype(np.uint64)


def _member_check(st, ins, mm, m):
    """The threads of `m` and their membermask `mm` (uint64 array): each executing thread
    is in its mask, and every live lane the mask names executes this instruction."""
    lane, warp = st.ids("lane"), st.ids("warp")
    me = np.uint64(1) << lane.astype(np.uint64)
    if ((mm & me) == 0)[m].any():
        t = int(np.nonzero(m & ((mm & me) == 0))[0][0])
        raise InterpError(f"'{ins.opcode_spelling}': thread {t} (lane {int(lane[t])}) runs it "
                          f"but its membermask {int(mm[t]):#010x} leaves its lane out",
                          ins.line, ins.col, rule="membermask")
    execu = _warp_bits(st, m, warp, lane)[warp]
    live = _warp_bits(st, st.alive, warp, lane)[warp]
    missing = mm & live & ~execu & np.uint64(0xFFFFFFFF)
    bad = m & (missing != 0)
    if bad.any():
        t = int(np.nonzero(bad)[0][0])
        miss = int(missing[t])
        lanes = [k for k in range(32) if miss >> k & 1]
        raise InterpError(f"'{ins.opcode_spelling}': thread {t}'s membermask {int(mm[t]):#010x}"
                          f" names lanes {lanes[:8]}{' ...' if len(lanes) > 8 else ''} of its "
                          "warp that do not execute it here (diverged, or at another "
                          "instruction)", ins.line, ins.col, rule="membermask")


def _c_shfl(prog, ins):
    """shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask (PTX's definition: the
    lane read, j, from b, c's clamp and segment mask; out of range: the thread's own a)."""
    modes = [x for x in ins.suffixes if x in ("up", "down", "bfly", "idx")]
    if "sync" not in ins.suffixes or len(modes) != 1 or "b32" not in ins.suffixes:
        raise _unsupported(ins, "only shfl.sync.{up,down,bfly,idx}.b32 is modeled")
    mode = modes[0]
    _nops(ins, 5)
    reads, writes = [], []
    dst = ins.operands[0]
    dests = list(dst.items) if isinstance(dst, Vec) and dst.brackets == "|" else [dst]
    a, b, c, mmask = (_src(prog, ins, o, "b32", reads) for o in ins.operands[1:])
    d = _dst(prog, ins, dests[0], "b32", writes)
    p = _dst(prog, ins, dests[1], "pred", writes) if len(dests) > 1 else None

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        lane = st.ids("lane")
        bv = (b(st) & 31).astype(np.int64)
        cv = c(st).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        maxl = (lane & seg) | (cval & ~seg)
        minl = lane & seg
        if mode == "up":
            j = lane - bv
            ok = j >= maxl
        elif mode == "down":
            j = lane + bv
            ok = j <= maxl
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= maxl
        else:
            j = minl | (bv & ~seg)
            ok = j <= maxl
        j = np.where(ok, j, lane)
        src = np.arange(st.n, dtype=np.int64) - lane + j
        src = np.where(m, src, np.arange(st.n))
        # the lane read must execute this shfl (else the GPU's value is unpredictable)
        src_c = np.clip(src, 0, st.n - 1)
        same_warp = (st.ids("warp")[src_c] == st.ids("warp")) & (src == src_c)
        bad = m & ok & ~(same_warp & m[src_c])
        if bad.any():
            t = int(np.nonzero(bad)[0][0])
            raise InterpError(f"'{ins.opcode_spelling}': thread {t} reads lane {int(j[t])}, "
                              "which does not execute this shfl (the GPU's value is "
                              "unpredictable)", ins.line, ins.col, rule="shfl-source")
        av = a(st)
        st.write(d, "b32", av[src_c])
        if p is not None:
            st.write(p, "pred", ok)
    return _Step(ins, run, reads, writes)


def _c_vote(prog, ins):
    """vote.sync.{all,any,uni}.pred d, {!}a, membermask and vote.sync.ballot.b32."""
    modes = [x for x in ins.suffixes if x in ("all", "any", "uni", "ballot")]
    if "sync" not in ins.suffixes or len(modes) != 1:
        raise _unsupported(ins, "only vote.sync.{all,any,uni}.pred and vote.sync.ballot.b32 "
                                "are modeled")
    mode = modes[0]
    _nops(ins, 3)
    reads, writes = [], []
    src = ins.operands[1]
    neg = False
    if isinstance(src, Reg) and src.name.startswith("!"):
        neg, src = True, Reg(src.name[1:], src.line, src.col)
    a = _src(prog, ins, src, "pred", reads)
    mmask = _src(prog, ins, ins.operands[2], "b32", reads)
    dt = "b32" if mode == "ballot" else "pred"
    d = _dst(prog, ins, ins.operands[0], dt, writes)

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        lane, warp = st.ids("lane"), st.ids("warp")
        pv = a(st)
        pv = ~pv if neg else pv
        ones = _warp_bits(st, m & pv, warp, lane)[warp] & mm
        if mode == "ballot":
            st.write(d, dt, ones.astype(np.uint32))
            return
        voters = _warp_bits(st, m, warp, lane)[warp] & mm
        if mode == "all":
            r = ones == voters
        elif mode == "any":
            r = ones != 0
        else:
            r = (ones == voters) | (ones == 0)
        st.write(d, dt, r)
    return _Step(ins, run, reads, writes)


def _c_bar_warp(prog, ins):
    """bar.warp.sync membermask (``__syncwarp``): the lanes of the membermask wait for one
    another.  The scheduler runs a warp's converged lanes together, so here that is the
    membermask check of the other .sync instructions: every executing lane is in its mask and
    every live lane the mask names executes it (else one line: diverged lanes)."""
    _nops(ins, 1)
    reads = []
    mmask = _src(prog, ins, ins.operands[0], "b32", reads)

    def run(st):
        _member_check(st, ins, mmask(st).astype(np.uint64), st.mask)
    return _Step(ins, run, reads, [])


def _c_activemask(prog, ins):
    """activemask.b32 d: the lanes of the thread's warp executing it (together, here: the
    lanes at this instruction in the same group)."""
    if ins.suffixes != ("b32",):
        raise _unsupported(ins, "activemask takes .b32")
    _nops(ins, 1)
    writes = []
    d = _dst(prog, ins, ins.operands[0], "b32", writes)

    def run(st):
        lane, warp = st.ids("lane"), st.ids("warp")
        st.write(d, "b32", _warp_bits(st, st.mask, warp, lane)[warp].astype(np.uint32))
    return _Step(ins, run, [], writes)


_REDUX = {"add": (np.add, 0), "min": (np.minimum, None), "max": (np.maximum, None),
          "and": (np.bitwise_and, -1), "or": (np.bitwise_or, 0), "xor": (np.bitwise_xor, 0)}


def _c_redux(prog, ins):
    """redux.sync.{add,min,max}.{u32,s32} / redux.sync.{and,or,xor}.b32 d, a, membermask: the
    reduction over the lanes of the warp that execute it (the membermask's, checked)."""
    sfx = list(ins.suffixes)
    if len(sfx) != 3 or sfx[0] != "sync" or sfx[1] not in _REDUX or \
            sfx[2] not in (("u32", "s32") if sfx[1] in ("add", "min", "max") else ("b32",)):
        raise _unsupported(ins, "redux.sync is modeled for .add/.min/.max on .u32/.s32 and "
                                ".and/.or/.xor on .b32")
    op, t = sfx[1], sfx[2]
    _nops(ins, 3)
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    mmask = _src(prog, ins, ins.operands[2], "b32", reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    uf, ident = _REDUX[op]

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        warp = st.ids("warp")
        v = a(st).astype(np.int64)
        if t == "s32":
            v = a(st).view(np.int32).astype(np.int64)
        nw = st.geom.nblocks * st.geom.wpb
        if ident is None:
            first = np.zeros(nw, np.int64)
            first[warp[m][::-1]] = v[m][::-1]               # any lane's value starts it
            acc = first
        else:
            acc = np.full(nw, ident, np.int64)
        uf.at(acc, warp[m], v[m])
        st.write(d, t, (acc[warp] & 0xFFFFFFFF).astype(np.uint32))
    return _Step(ins, run, reads, writes)


def _c_match(prog, ins):
    """match.any.sync.{b32,b64} d, a, membermask: the lanes of the membermask whose a equals
    the thread's; match.all.sync.{b32,b64} d{|p}, a, membermask: the membermask when every lane
    of it has the same a (p true), else 0 (p false).  The lanes are those executing it (the
    membermask checked as for shfl)."""
    sfx = list(ins.suffixes)
    if len(sfx) != 3 or sfx[0] not in ("any", "all") or sfx[1] != "sync" or \
            sfx[2] not in ("b32", "b64"):
        raise _unsupported(ins, "match is modeled as match.{any,all}.sync.{b32,b64}")
    mode, t = sfx[0], sfx[2]
    _nops(ins, 3)
    reads, writes = [], []
    dst = ins.operands[0]
    dests = list(dst.items) if isinstance(dst, Vec) and dst.brackets == "|" else [dst]
    if len(dests) > 1 and mode == "any":
        raise _unsupported(ins, "match.any has no predicate destination")
    a = _src(prog, ins, ins.operands[1], t, reads)
    mmask = _src(prog, ins, ins.operands[2], "b32", reads)
    d = _dst(prog, ins, dests[0], "b32", writes)
    p = _dst(prog, ins, dests[1], "pred", writes) if len(dests) > 1 else None

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        lane, warp = st.ids("lane"), st.ids("warp")
        v = a(st).astype(np.uint64)
        tids = np.nonzero(m)[0]
        # group the executing threads by (warp, value): each group's lanes as one mask
        key_w, key_v = warp[tids], v[tids]
        order = np.lexsort((key_v, key_w))
        kw, kv = key_w[order], key_v[order]
        start = np.r_[True, (kw[1:] != kw[:-1]) | (kv[1:] != kv[:-1])]
        gid = np.cumsum(start) - 1
        bits = np.ldexp(1.0, lane[tids][order])
        groups = np.bincount(gid, weights=bits).astype(np.uint64)
        same = np.zeros(st.n, np.uint64)
        same[tids[order]] = groups[gid]
        same &= mm
        if mode == "any":
            st.write(d, "b32", same.astype(np.uint32))
            return
        ok = same == (mm & _warp_bits(st, m, warp, lane)[warp])
        st.write(d, "b32", np.where(ok, mm, 0).astype(np.uint32))
        if p is not None:
            st.write(p, "pred", ok)
    return _Step(ins, run, reads, writes)


COMPILERS = {"match": _c_match, "shfl": _c_shfl, "vote": _c_vote, "activemask": _c_activemask, "redux": _c_redux}
