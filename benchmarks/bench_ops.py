"""Throughput of the ops families (cvtx, compare, fops, f64, int) on 2**20 elements, beside the
plain NumPy operation closest to each form in the same process (which is not bit-exact PTX:
it is the floor ptxfp's NumPy formulation is measured against).

    PYTHONPATH=src python benchmarks/bench_ops.py
"""

from __future__ import annotations

import time

import numpy as np

from ptxfp.dispatch import CORE
from ptxfp.isa.spelling import parse

N = 1 << 20


def _best(fn, reps=5):
    fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main() -> None:
    rng = np.random.default_rng(1)
    u32 = [rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
    f32 = [rng.standard_normal(N).astype(np.float32).view(np.uint32) for _ in range(2)]
    f64 = [rng.standard_normal(N).view(np.uint64) for _ in range(3)]
    cases = [
        ("cvt.rni.s32.f32", [f32[0]], lambda: np.rint(f32[0].view(np.float32)).astype(np.int32)),
        ("cvt.rn.f32.s32", [u32[0]], lambda: u32[0].view(np.int32).astype(np.float32)),
        ("cvt.rn.f32.f64", [f64[0]], lambda: f64[0].view(np.float64).astype(np.float32)),
        ("setp.lt.f32", f32, lambda: f32[0].view(np.float32) < f32[1].view(np.float32)),
        ("min.f32", f32, lambda: np.minimum(f32[0].view(np.float32), f32[1].view(np.float32))),
        ("add.rz.f64", f64[:2], lambda: f64[0].view(np.float64) + f64[1].view(np.float64)),
        ("fma.rn.f64", f64, lambda: f64[0].view(np.float64) * f64[1].view(np.float64)
         + f64[2].view(np.float64)),
        ("add.s32", u32[:2], lambda: u32[0] + u32[1]),
        ("mul.hi.u32", u32[:2], lambda: (u32[0].astype(np.uint64) * u32[1]) >> np.uint64(32)),
        ("bfe.u32", [u32[0], u32[1] & np.uint32(31), u32[2] & np.uint32(31)],
         lambda: u32[0] >> (u32[1] & np.uint32(31))),
        ("prmt.b32", u32, lambda: u32[0] ^ u32[1]),
    ]
    print(f"{'form':<18} {'ptxfp ns/elem':>14} {'NumPy ns/elem':>14} {'ratio':>7}")
    for spelling, ops, ref in cases:
        ins = parse(spelling)
        run = CORE[ins.family](ins)
        t = _best(lambda: run(ops, N))
        r = _best(ref)
        print(f"{spelling:<18} {t / N * 1e9:14.2f} {r / N * 1e9:14.2f} {t / r:7.1f}")


if __name__ == "__main__":
    main()
