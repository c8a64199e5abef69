"""The scheduler: runs the compiled steps over every thread of the launch, one instruction at
a time for the group of threads at the minimum PC; divergence and reconvergence, ret/exit,
bar.sync/bar.arrive and their release, and the step limit."""

from __future__ import annotations

import numpy as np

from ...errors import InterpError
from .async_proxy import never, wake
from .operands import _Unset, _unset


#: instructions (of a group of threads) a run may execute before it stops (max_steps=)
MAX_STEPS = 1_000_000
#: thread-instructions (each instruction counted once for every thread that runs it) a run may
#: execute before it stops (max_work=): about 2-7 s at the interpreter's 70-230 M a second
#: (docs/performance.md), so that a runaway launch over a big grid stops within seconds
MAX_WORK = 500_000_000


class StepLimit(InterpError):
    """A run executed max_steps instructions, or max_work thread-instructions, without ending
    (a loop that does not exit)."""


def _execute_steps(prog, st, n, max_steps=MAX_STEPS, max_work=MAX_WORK):
    """Run the compiled steps over the threads of `st` as a GPU does, one instruction at a
    time for a group of threads at the same PC.

    The scheduling rule is the minimum PC: every live thread has a PC; the group run next is
    every thread at the smallest PC (``cur``; threads parked at higher PCs wait in
    ``waiting``, a PC -> mask map whose keys are all above ``cur``).  A branch that splits the
    group parks the part with the higher PC; threads meet again where their PCs meet (for
    structured code, the immediate post-dominator of the branch), so a warp's lanes run each
    instruction together whenever the GPU's do, and shfl/vote see the lanes they see there.
    bar.sync parks its threads at the barrier; when no thread can run, each block whose live
    threads are all at the barrier (or whose count is met) passes it.  Exited threads do
    not count.  Results are the GPU's for data-race-free programs."""
    steps = prog.steps
    nsteps = len(steps)
    st.alive = np.ones(n, bool)
    cur = 0
    group = np.ones(n, bool)
    full = True                        # group is every thread (nothing parked or exited)
    waiting = {}                       # pc -> mask
    blocked = {}                       # barrier id -> mask of the threads waiting there
    bpc = np.zeros(n, np.int64)        # the pc a blocked thread waits at
    bcount = {}                        # barrier id -> (count or None, line, col)
    arrived = {}                       # barrier id -> int64 array (blocks,): bar.arrive's
    count = tcount = 0
    loop = None                        # the last backward branch taken: (label, line)
    st.parked = None                   # threads a step put to sleep (async_proxy.sleep)
    st.sleepers = []                   # [(mask, pc, ready, describe)]: asleep on an mbarrier
    while True:
        if waiting and cur in waiting:
            group = group | waiting.pop(cur)
            full = False
        if cur >= nsteps:              # falling off the end: the threads end
            st.alive &= ~group
            group = np.zeros(n, bool)
            full = False
        elif not full and not group.any():
            group = None
        else:
            count += 1
            if count > max_steps:
                raise _step_limit(prog, steps[cur].instr, loop, max_steps)
            step = steps[cur]
            ins = step.instr
            if step.pred is None and step.kind == "op" and full:
                tcount += n
                if tcount > max_work:
                    raise _step_limit(prog, step.instr, loop, max_steps,
                                      max_work, count, tcount)
                st.mask = st.active = group
                st.all_on = True
                try:
                    step.run(st)
                except _Unset as e:
                    raise _unset(st, step, e) from None
                if st.parked is not None:
                    group, full = _asleep(st, group, cur), False
                cur += 1
                continue
            mask = group
            if step.pred is not None:
                st.mask = group
                p = st.read(step.pred, "pred", ins)
                mask = group & (~p if ins.predicate.negated else p)
            kind = step.kind
            tcount += n if (full and mask is group) else int(np.count_nonzero(mask))
            if tcount > max_work:
                raise _step_limit(prog, ins, loop, max_steps, max_work, count, tcount)
            if kind == "op":
                if full or mask.any():
                    st.mask = st.active = mask
                    st.all_on = full and mask is group
                    try:
                        step.run(st)
                    except _Unset as e:
                        raise _unset(st, step, e) from None
                    if st.parked is not None:
                        group, full = _asleep(st, group, cur), False
                cur += 1
                continue
            if kind == "bra":
                tgt = prog.labels[step.target]
                if mask is group:
                    taken_all, none = True, False
                else:
                    nt = group & ~mask
                    none = not mask.any()
                    taken_all = not none and not nt.any()
                if none:
                    cur += 1
                    continue
                if tgt <= cur:
                    loop = (step.target, prog.statements[tgt].line if tgt < nsteps
                            else ins.line)
                if taken_all:
                    cur = tgt
                elif tgt > cur:
                    _park(waiting, tgt, mask)
                    group, full = nt, False
                    cur += 1
                else:
                    _park(waiting, cur + 1, nt)
                    group, full = mask, False
                    cur = tgt
                if waiting:                     # the minimum PC runs first
                    low = min(waiting)
                    if low < cur:
                        _park(waiting, cur, group)
                        cur, group, full = low, waiting.pop(low), False
                continue
            if kind == "ret":
                if mask is group or mask.all():
                    st.alive &= ~mask
                    group = np.zeros(n, bool)
                else:
                    st.alive &= ~mask
                    group = group & ~mask
                full = False
                cur += 1
                continue
            # a barrier
            arrive, ida, cnt = step.extra
            st.mask = mask
            if not mask.any():
                cur += 1
                continue
            bid = ida(st)[mask]
            if bid.min() != bid.max() or int(bid[0]) > 15:
                raise InterpError(f"'{ins.opcode_spelling}': the barrier number must be one "
                                  "value from 0 to 15 for the threads that run it "
                                  f"(got {int(bid.min())}..{int(bid.max())})", ins.line,
                                  ins.col, rule="barrier")
            bid = int(bid[0])
            c = None
            if cnt is not None:
                cv = cnt(st)[mask]
                c = int(cv[0])
                if cv.min() != cv.max() or c <= 0 or c % 32:
                    raise InterpError(f"'{ins.opcode_spelling}': the thread count must be one "
                                      "positive multiple of 32", ins.line, ins.col,
                                      rule="barrier")
            if arrive:
                a = arrived.setdefault(bid, np.zeros(st.geom.nblocks, np.int64))
                a += np.bincount(st.ids("block")[mask], minlength=st.geom.nblocks)
                bcount.setdefault(bid, (c, ins.line, ins.col))
                cur += 1
                continue
            b = blocked.get(bid)
            blocked[bid] = mask if b is None else (b | mask)
            bpc[mask] = cur
            bcount[bid] = (c, ins.line, ins.col)
            group = group & ~mask
            full = False
            cur += 1
            continue
        # the group is empty: the lowest parked PC runs next, else a barrier opens
        if waiting:
            cur = min(waiting)
            group, full = waiting.pop(cur), False
            continue
        if st.sleepers and wake(st, waiting, _park):     # an mbarrier phase completed
            cur = min(waiting)
            group, full = waiting.pop(cur), False
            continue
        if not blocked:
            if st.sleepers:
                raise never(st, prog)
            break
        _release(prog, st, blocked, bpc, bcount, arrived, waiting)
        cur = min(waiting)
        group, full = waiting.pop(cur), False
    st.active = st.alive
    st.mask = st.alive
    st.steps, st.thread_instructions = count, tcount


def _asleep(st, group, pc):
    """Threads the step at `pc` put to sleep leave the group; they run that step again (or,
    asleep softly, the next) when they wake (async_proxy.wake)."""
    mask, ready, describe, soft = st.parked
    st.parked = None
    st.sleepers.append((mask, pc + 1 if soft else pc, ready, describe, soft))
    return group & ~mask


def _park(waiting, pc, mask):
    old = waiting.get(pc)
    waiting[pc] = mask if old is None else (old | mask)


def _release(prog, st, blocked, bpc, bcount, arrived, waiting):
    """No thread can run: open each barrier for the blocks whose threads have all arrived
    (every live thread of the block, or the barrier's count); none: one error naming it."""
    blk = st.ids("block")
    nb = st.geom.nblocks
    live = np.bincount(blk[st.alive], minlength=nb)
    opened = False
    for bid in sorted(blocked):
        m = blocked[bid]
        at = np.bincount(blk[m], minlength=nb)
        c = bcount[bid][0]
        extra = arrived.get(bid)
        have = at + (extra if extra is not None else 0)
        need = live if c is None else np.full(nb, c)
        done = (at > 0) & (have >= need)
        if not done.any():
            continue
        go = m & done[blk]
        for pc in np.unique(bpc[go]):
            _park(waiting, int(pc) + 1, go & (bpc == pc))
        blocked[bid] = m & ~go
        if extra is not None:
            extra[done] = 0
        if not blocked[bid].any():
            del blocked[bid]
        opened = True
    if opened:
        return
    bid = min(blocked)
    m = blocked[bid]
    c, line, col = bcount[bid]
    b = int(blk[m][0])
    inb = blk == b
    here = int((m & inb).sum())
    # the line where this block's threads wait (another block may have reached barrier `bid`
    # at another bar.sync since, and bcount keeps the last one)
    mine = prog.statements[int(bpc[int(np.argmax(m & inb))])]
    line, col = mine.line, mine.col
    need = int(live[b]) if c is None else c
    others = np.nonzero(inb & st.alive & ~m)[0]
    where = ""
    if others.size:
        t = int(others[0])
        other_bid = next((k for k, v in blocked.items() if v[t]), None)
        at = prog.statements[int(bpc[t])] if other_bid is not None else None
        where = (f"; thread {t - b * st.geom.bsize} of the block waits at "
                 f"{'the barrier at line ' + str(at.line) if at is not None else '?'}"
                 f" ({others.size} threads elsewhere)")
    raise InterpError(f"barrier {bid} never opens: in block {_block_xyz(st.geom, b)}, "
                      f"{here} of the {need} threads it waits for reach it{where}",
                      line, col, rule="barrier")


def _block_xyz(g, b):
    x = b % g.grid[0]
    y = b // g.grid[0] % g.grid[1]
    z = b // (g.grid[0] * g.grid[1])
    return f"({x}, {y}, {z})"


def _step_limit(prog, ins, loop, max_steps, max_work=None, count=0, tcount=0):
    where = (f"the loop at label '{loop[0]}' (line {loop[1]}) is still running" if loop
             else "still running")
    if max_work is not None:
        return StepLimit(f"work limit reached: more than {max_work} thread-instructions executed "
                         f"({count} instructions, each counted for every thread that ran it) "
                         f"and {where}; raise max_work= (--max-work) if the kernel needs more",
                         ins.line, ins.col, rule="step-limit")
    return StepLimit(f"step limit reached: {max_steps} instructions executed and {where}; "
                     "raise max_steps= (--max-steps) if the kernel needs more",
                     ins.line, ins.col, rule="step-limit")
