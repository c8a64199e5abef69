"""The sm_90 asynchronous machinery's state while a program runs: mbarrier objects (their
phase, pending arrivals, expected arrivals and transaction count), and the threads asleep
on one.

An mbarrier is kept beside the block's .shared bytes, keyed by (block, address), as the PTX
ISA manual describes the object ("mbarrier", 9.7.13.15: an opaque 64-bit object in shared
memory): ``init`` sets the expected and pending arrival counts to ``count``, the phase to 0
and the tx-count to 0; an arrival decrements the pending count, ``expect_tx`` raises the
tx-count, ``complete_tx`` lowers it, and the current phase completes when the pending count
and the tx-count are both zero: the phase number goes up by one, the pending count is reset
to the expected count.  The state an arrive returns is the phase number it arrived in;
``test_wait``/``try_wait`` with it succeed once that phase completed, ``.parity p`` once the
phase of parity p before the current one did (current phase parity != p).

A thread whose wait does not succeed sleeps (the scheduler takes it out of its group) until
its phase completes; when no thread can run and no sleeper can wake, the run stops with one
line naming the mbarrier, its counts and who waits."""

from __future__ import annotations

import numpy as np

from ...errors import InterpError


class _Barrier:
    __slots__ = ("phase", "pending", "expected", "tx", "line")

    def __init__(self, count, line):
        self.phase = 0
        self.pending = count
        self.expected = count
        self.tx = 0
        self.line = line


class MBarriers:
    """Every mbarrier of a run: {(block, address): _Barrier}."""

    def __init__(self):
        self.objects = {}

    def get(self, block, addr, spelling, where):
        b = self.objects.get((block, addr))
        if b is None:
            raise InterpError(f"'{spelling}': no mbarrier at .shared address {addr:#x} of "
                              f"block {block} (mbarrier.init it first)", *where,
                              rule="mbarrier")
        return b

    def init(self, block, addr, count, line):
        self.objects[(block, addr)] = _Barrier(count, line)

    def inval(self, block, addr):
        self.objects.pop((block, addr), None)

    def _maybe_complete(self, b):
        if b.pending == 0 and b.tx == 0:
            b.phase += 1
            b.pending = b.expected

    def arrive(self, b, count, drop, spelling, where):
        """One arrival of `count`; returns the phase it arrived in."""
        phase = b.phase
        if count > b.pending:
            raise InterpError(f"'{spelling}': {count} arrivals on an mbarrier with "
                              f"{b.pending} pending in phase {b.phase} (of {b.expected} "
                              "expected): more than the phase expects", *where,
                              rule="mbarrier")
        b.pending -= count
        if drop:
            b.expected -= count
        self._maybe_complete(b)
        return phase

    def expect_tx(self, b, n):
        b.tx += n

    def complete_tx(self, b, n):
        b.tx -= n
        self._maybe_complete(b)


def mbarriers(st) -> MBarriers:
    m = getattr(st, "mbarrier_objects", None)
    if m is None:
        m = st.mbarrier_objects = MBarriers()
    return m


def sleep(st, mask, ready, describe, soft=False):
    """Put the threads of `mask` to sleep at the step running now: ``ready(st) -> bool array
    (n,)`` says who may wake, ``describe(st, mask) -> str`` what they wait for.  A hard sleep
    runs the step again on waking (try_wait: it then succeeds); a soft one (test_wait, which
    has returned false) goes on after the step, and wakes also when no other thread can run."""
    st.parked = (mask, ready, describe, soft)


def wake(st, waiting, park):
    """Wake the sleepers whose condition holds (or, when none does, the soft ones): park them
    at their pc in `waiting`.  True if any woke."""
    woke = _wake(st, waiting, park, False)
    return woke or _wake(st, waiting, park, True)


def _wake(st, waiting, park, force):
    woke = False
    keep = []
    for entry in st.sleepers:
        mask, pc, ready, describe, soft = entry
        ok = mask if (force and soft) else mask & ready(st)
        if ok.any():
            park(waiting, pc, ok)
            woke = True
            mask = mask & ~ok
            if not mask.any():
                continue
            entry = (mask, pc, ready, describe, soft)
        keep.append(entry)
    st.sleepers = keep
    return woke


def never(st, prog):
    """The error of sleepers that no thread can wake."""
    mask, pc, ready, describe, soft = st.sleepers[0]
    ins = prog.statements[pc]
    return InterpError(describe(st, mask), ins.line, ins.col, rule="mbarrier")


def any_sleeping(st):
    return bool(getattr(st, "sleepers", None))


__all__ = ["MBarriers", "mbarriers", "sleep", "wake", "never", "any_sleeping", "np"]
