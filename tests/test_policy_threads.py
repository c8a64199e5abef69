"""policy.using(...) is per thread and per asyncio task (issue #10).

Expected bits are worked by hand from the PTX manual and IEEE 754, not from ptxfp:

* f16 0x3BFF is 1 - 2**-11 and 0x0400 is 2**-14 (the smallest normal), so their product is
  2**-14 - 2**-25: halfway between the subnormal 0x03FF (2**-14 - 2**-24) and 0x0400; round to
  nearest even gives 0x0400.  mul.rn.ftz.f16 keeps it when tininess is read after rounding (the
  rounded result is normal) and flushes it to +0 (0x0000) when read before rounding (the exact
  product is below 2**-14).
* a NaN operand gives the canonical NaN of the policy in force (PTX manual, "NaN results are
  canonical"), here 0x7E00 in one thread and 0x7FFF (ptxfp's default) in the other.
"""

import asyncio
import threading

import ptxfp
from ptxfp import policy

ROUNDS = 300


def _worker(changes, want_mul, want_nan, barrier, errors):
    try:
        with policy.using(**changes):
            barrier.wait()                       # both threads are inside their using() now
            for _ in range(ROUNDS):
                got = ptxfp.execute("mul.rn.ftz.f16", 0x3BFF, 0x0400)
                if got != want_mul:
                    errors.append((changes, "mul", hex(got)))
                got = ptxfp.execute("add.rn.f16", 0x7E01, 0x3C00)
                if got != want_nan:
                    errors.append((changes, "nan", hex(got)))
                if ptxfp.POLICY.canonical_nan_f16 != want_nan:
                    errors.append((changes, "POLICY", hex(ptxfp.POLICY.canonical_nan_f16)))
            barrier.wait()                       # neither leaves before the other is done
    except Exception as e:                      # pragma: no cover - reported below
        errors.append((changes, "raised", repr(e)))


def test_two_threads_two_policies():
    before = policy.current()
    barrier = threading.Barrier(2)
    errors = []
    a = threading.Thread(target=_worker, args=(
        dict(ftz_tininess="after_rounding", canonical_nan_f16=0x7E00), 0x0400, 0x7E00,
        barrier, errors))
    b = threading.Thread(target=_worker, args=(
        dict(ftz_tininess="before_rounding", canonical_nan_f16=0x7FFF), 0x0000, 0x7FFF,
        barrier, errors))
    a.start()
    b.start()
    a.join(60)
    b.join(60)
    assert not a.is_alive() and not b.is_alive()
    assert errors == []
    assert policy.current() is before            # this thread never saw either change
    assert ptxfp.execute("mul.rn.ftz.f16", 0x3BFF, 0x0400) == (
        0x0400 if before.ftz_tininess == "after_rounding" else 0x0000)


def test_asyncio_tasks_keep_their_policies():
    async def task(changes, want):
        with policy.using(**changes):
            out = []
            for _ in range(50):
                await asyncio.sleep(0)           # let the other task run in between
                out.append(ptxfp.execute("mul.rn.ftz.f16", 0x3BFF, 0x0400))
            return out == [want] * 50

    async def main():
        return await asyncio.gather(
            task(dict(ftz_tininess="after_rounding"), 0x0400),
            task(dict(ftz_tininess="before_rounding"), 0x0000))

    assert asyncio.run(main()) == [True, True]


def test_policy_module_attribute_reads_the_current_policy():
    with policy.using(canonical_nan_f16=0x7E00):
        assert policy.POLICY.canonical_nan_f16 == 0x7E00
        assert ptxfp.POLICY.canonical_nan_f16 == 0x7E00
    assert policy.POLICY is policy.current() is ptxfp.POLICY
