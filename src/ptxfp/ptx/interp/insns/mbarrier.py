"""mbarrier (init, inval, arrive, arrive_drop, arrive.expect_tx, expect_tx, complete_tx,
test_wait, try_wait, .parity, pending_count), and the small sm_90 instructions around it:
elect.sync, setmaxnreg (checked, no effect), griddepcontrol (no effect).  The objects and
their phase rules live in ``async_proxy``; a wait that does not succeed puts its threads to
sleep until the phase completes (``async_proxy.sleep``)."""

from __future__ import annotations

import numpy as np

from ....errors import InterpError
from ...reader import Addr, Imm, Reg
from ..async_proxy import mbarriers, sleep
from ..base import _bad, _nops, _unsupported
from ..operands import _dst, _src
from ..program import _Step
from ..state import _locate
from .mem import _address, _space_of

_QUAL = frozenset(("release", "acquire", "relaxed", "cta", "cluster", "shared", "shared::cta",
                   "shared::cluster", "b64", "sync", "aligned"))


def _mb_address(prog, ins, addr, reads):
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an mbarrier address '[...]', got '{addr}'", addr)
    space = _space_of(ins.suffixes)
    if space not in ("shared", "shared::cluster"):
        raise _unsupported(ins, "mbarriers are modeled in .shared (.shared::cta, and "
                                ".shared::cluster of a cluster of one); generic addresses are "
                                "not")
    base = _address(prog, ins, addr, "shared", reads)
    off = addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    spelling = ins.opcode_spelling

    def locate(st):
        """(thread ids, blocks, addresses) of the running threads' mbarriers."""
        m = st.mask
        a = base(st) + off
        _locate(st, "shared", a, m, 8, spelling, where, (ins.line, ins.col))
        tids = np.nonzero(m)[0]
        return tids, st.ids("block")[tids], a[tids]
    return locate


def _count(prog, ins, op, reads, what):
    if op is None:
        return None
    return _src(prog, ins, op, "u32", reads)


def _c_mbarrier(prog, ins):
    sfx = ins.suffixes
    if not sfx:
        raise _unsupported(ins)
    op = sfx[0]
    rest = set(sfx[1:]) - _QUAL
    if op in ("arrive", "arrive_drop") and rest <= {"expect_tx", "noComplete"}:
        return _c_arrive(prog, ins, op == "arrive_drop", "expect_tx" in rest,
                         "noComplete" in rest)
    if rest - {"parity"} or (rest and op not in ("test_wait", "try_wait")):
        raise _unsupported(ins, f"mbarrier.{op} with .{', .'.join(sorted(rest))}")
    reads, writes = [], []
    where = (ins.line, ins.col)
    spelling = ins.opcode_spelling
    if op == "init":
        _nops(ins, 2)
        loc = _mb_address(prog, ins, ins.operands[0], reads)
        cnt = _count(prog, ins, ins.operands[1], reads, "count")

        def run(st):
            tids, blocks, addrs = loc(st)
            c = cnt(st)[tids]
            bad = (c < 1) | (c > (1 << 20) - 1)
            if bad.any():
                raise InterpError(f"'{spelling}': count {int(c[bad][0])} is outside 1 .. "
                                  "2^20 - 1", *where, rule="mbarrier")
            mb = mbarriers(st)
            for b, a, k in zip(blocks.tolist(), addrs.tolist(), c.tolist()):
                mb.init(b, a, k, ins.line)
        return _Step(ins, run, reads, writes)
    if op == "inval":
        _nops(ins, 1)
        loc = _mb_address(prog, ins, ins.operands[0], reads)

        def run(st):
            tids, blocks, addrs = loc(st)
            mb = mbarriers(st)
            for b, a in set(zip(blocks.tolist(), addrs.tolist())):
                mb.inval(b, a)
        return _Step(ins, run, reads, writes)
    if op in ("expect_tx", "complete_tx"):
        _nops(ins, 2)
        loc = _mb_address(prog, ins, ins.operands[0], reads)
        cnt = _count(prog, ins, ins.operands[1], reads, "txCount")
        complete = op == "complete_tx"

        def run(st):
            tids, blocks, addrs = loc(st)
            c = cnt(st)[tids]
            mb = mbarriers(st)
            for b, a, k in zip(blocks.tolist(), addrs.tolist(), c.tolist()):
                o = mb.get(b, a, spelling, where)
                mb.complete_tx(o, k) if complete else mb.expect_tx(o, k)
        return _Step(ins, run, reads, writes)
    if op in ("test_wait", "try_wait"):
        return _c_wait(prog, ins, "parity" in rest)
    if op == "pending_count":
        _nops(ins, 2)
        raise _unsupported(ins, "mbarrier.pending_count reads an opaque state: not modeled")
    raise _unsupported(ins)


def _c_arrive(prog, ins, drop, expect, nocomplete):
    """mbarrier.arrive{_drop}{.expect_tx}{.noComplete} state, [addr]{, count | txCount}."""
    reads, writes = [], []
    ops = list(ins.operands)
    if len(ops) not in (2, 3):
        raise _bad(ins, f"expects state, [addr]{{, count}}, got {len(ops)} operands")
    if expect and len(ops) != 3:
        raise _bad(ins, ".expect_tx needs a txCount operand")
    if nocomplete:
        raise _unsupported(ins, ".noComplete (cp.async's mbarrier arrivals) is not modeled")
    loc = _mb_address(prog, ins, ops[1], reads)
    extra = _count(prog, ins, ops[2], reads, "count") if len(ops) == 3 else None
    d = ops[0]
    dest = None if isinstance(d, Reg) and d.name == "_" else _dst(prog, ins, d, "b64", writes)
    where = (ins.line, ins.col)
    spelling = ins.opcode_spelling

    def run(st):
        tids, blocks, addrs = loc(st)
        mb = mbarriers(st)
        c = extra(st)[tids].tolist() if extra is not None else None
        phases = np.zeros(tids.size, np.uint64)
        for i, (b, a) in enumerate(zip(blocks.tolist(), addrs.tolist())):
            o = mb.get(b, a, spelling, where)
            if expect:
                mb.expect_tx(o, c[i])
            phases[i] = mb.arrive(o, 1 if (c is None or expect) else c[i], drop, spelling,
                                  where)
        if dest is not None:
            full = np.zeros(st.n, np.uint64)
            full[tids] = phases
            st.write(dest, "b64", full)
    return _Step(ins, run, reads, writes)


def _c_wait(prog, ins, parity):
    """mbarrier.test_wait / try_wait{.parity} p, [addr], state | phaseParity{, hint}."""
    ops = list(ins.operands)
    if len(ops) not in (3, 4) or (ins.suffixes[0] == "test_wait" and len(ops) != 3):
        raise _bad(ins, f"expects waitComplete, [addr], {'phaseParity' if parity else 'state'}"
                        f"{'{, suspendTimeHint}' if ins.suffixes[0] == 'try_wait' else ''}")
    reads, writes = [], []
    loc = _mb_address(prog, ins, ops[1], reads)
    want = _src(prog, ins, ops[2], "u32" if parity else "b64", reads)
    if len(ops) == 4:
        _src(prog, ins, ops[3], "u32", reads)             # the time hint: read, no effect
    p = _dst(prog, ins, ops[0], "pred", writes)
    spelling = ins.opcode_spelling
    where = (ins.line, ins.col)
    test = ins.suffixes[0] == "test_wait"

    def done(st, tids, blocks, addrs):
        mb = mbarriers(st)
        w = want(st)[tids].astype(np.int64)
        ok = np.zeros(tids.size, bool)
        for i, (b, a) in enumerate(zip(blocks.tolist(), addrs.tolist())):
            o = mb.get(b, a, spelling, where)
            ok[i] = (o.phase & 1) != (w[i] & 1) if parity else o.phase > w[i]
        return ok

    def run(st):
        tids, blocks, addrs = loc(st)
        ok = done(st, tids, blocks, addrs)
        if not ok.all():
            waiting = np.zeros(st.n, bool)
            waiting[tids[~ok]] = True
            snapshot = (tids[~ok], blocks[~ok], addrs[~ok])

            def ready(st2):
                r = np.zeros(st2.n, bool)
                t, b, a = snapshot
                saved = st2.mask
                st2.mask = waiting
                try:
                    r[t] = done(st2, t, b, a)
                finally:
                    st2.mask = saved
                return r

            def describe(st2, mask):
                t, b, a = snapshot
                o = mbarriers(st2).get(int(b[0]), int(a[0]), spelling, where)
                saved = st2.mask
                st2.mask = waiting
                w = int(want(st2)[t[0]])
                st2.mask = saved
                what = f"parity {w & 1}" if parity else f"phase {w}"
                g = st2.geom
                bi = int(b[0])
                xyz = (bi % g.grid[0], bi // g.grid[0] % g.grid[1], bi // (g.grid[0] * g.grid[1]))
                return (f"'{spelling}': the mbarrier at .shared {int(a[0]):#x} of block "
                        f"({xyz[0]}, {xyz[1]}, {xyz[2]}) never completes ({what} waited for; it is in phase "
                        f"{o.phase} with {o.pending} of {o.expected} arrivals pending and "
                        f"tx-count {o.tx}): {int(mask.sum())} threads wait here, thread "
                        f"{int(t[0])} first, and no thread is left to arrive")
            sleep(st, waiting, ready, describe, soft=test)
        full = np.zeros(st.n, bool)
        full[tids] = ok
        st.write(p, "pred", full)
    return _Step(ins, run, reads, writes)


def _c_elect(prog, ins):
    """elect.sync d|p, membermask: the lowest executing lane of membermask is the leader;
    d = its lane id, p true on it."""
    if set(ins.suffixes) != {"sync"}:
        raise _unsupported(ins)
    _nops(ins, 2)
    reads, writes = [], []
    out = ins.operands[0]
    items = list(out.items) if hasattr(out, "items") else [out]
    mask_src = _src(prog, ins, ins.operands[1], "b32", reads)
    d = items[0] if len(items) >= 1 else None
    pr = items[1] if len(items) == 2 else None
    dd = None if (isinstance(d, Reg) and d.name == "_") else _dst(prog, ins, d, "b32", writes)
    pp = _dst(prog, ins, pr, "pred", writes) if pr is not None else None

    def run(st):
        m = st.mask
        tids = np.nonzero(m)[0]
        lane = st.ids("lane")[tids]
        warp = st.ids("warp")[tids]
        mm = mask_src(st)[tids].astype(np.int64)
        member = ((mm >> lane) & 1).astype(bool)
        leader = np.full(st.n, -1, np.int64)
        lt = np.full(int(warp.max()) + 1 if warp.size else 0, 99, np.int64)
        np.minimum.at(lt, warp[member], lane[member])
        lead = lt[warp]
        if dd is not None:
            v = np.zeros(st.n, np.uint32)
            v[tids] = np.where(lead == 99, 0, lead).astype(np.uint32)
            st.write(dd, "b32", v)
        if pp is not None:
            v = np.zeros(st.n, bool)
            v[tids] = member & (lane == lead)
            st.write(pp, "pred", v)
        leader[tids] = lead
    return _Step(ins, run, reads, writes)


def _c_setmaxnreg(prog, ins):
    """setmaxnreg.{inc,dec}.sync.aligned.u32 imm: a register-file hint; the count must be
    24 .. 256 in steps of 8 (the PTX manual), nothing else changes."""
    if not (set(ins.suffixes) - {"sync", "aligned", "u32"}) <= {"inc", "dec"} or \
            len(set(ins.suffixes) & {"inc", "dec"}) != 1:
        raise _unsupported(ins)
    _nops(ins, 1)
    n = ins.operands[0]
    if not isinstance(n, Imm) or n.value is None or not 24 <= n.value <= 256 or n.value % 8:
        raise _bad(ins, f"the register count must be a constant 24..256, a multiple of 8, "
                        f"got '{n}'", n)
    return _Step(ins, lambda st: None, [], [])


def _c_griddepcontrol(prog, ins):
    """griddepcontrol.launch_dependents / .wait: one grid runs here, nothing to wait for."""
    if ins.suffixes not in (("launch_dependents",), ("wait",)):
        raise _unsupported(ins)
    _nops(ins, 0)
    return _Step(ins, lambda st: None, [], [])


def _c_trap(prog, ins):
    """trap / brkpt (CUTLASS's device-side asserts): a thread that reaches one stops the run
    with one line, as the kernel would abort (trap) or halt (brkpt) on the GPU."""
    _nops(ins, 0)
    spelling = ins.opcode_spelling

    def run(st):
        hit = np.nonzero(st.mask)[0]
        if not hit.size:
            return
        t = int(hit[0])
        raise InterpError(f"'{spelling}' reached by thread {t} (and {int(st.mask.sum()) - 1} "
                          "others): the kernel aborts here", ins.line, ins.col, rule="trap")
    return _Step(ins, run, [], [])


#: instructions another family may also take: added only where none does
FALLBACK = {"trap": _c_trap, "brkpt": _c_trap}


COMPILERS = {"mbarrier": _c_mbarrier, "elect": _c_elect, "setmaxnreg": _c_setmaxnreg,
             "griddepcontrol": _c_griddepcontrol}
