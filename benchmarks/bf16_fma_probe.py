"""Where bf16 fma's time goes on random inputs (docs/performance.md, "Why bf16 fma is not at
half its normal-value rate"): the fast lane's kernel loops alone (the plain binary32 pass and
the scaled lane on every lane), on uniform bits, normal values and bench.py's hard mix, with
probes that are not exact (FTZ/DAZ set, subnormal operands zeroed) to show what subnormal
binary32 values cost.  Single thread, thread CPU time, best of 5, 4M lanes.

    PYTHONPATH=src python benchmarks/bf16_fma_probe.py
"""

import dataclasses
import os
import sys
import time

import numpy as np
from numba import njit

from ptxfp import kernels, parse
from ptxfp.execute import _form

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

N = 1 << 22
SPEC = dataclasses.replace(_form("fma.rn.bf16").kernel()[0], lanes=1)
K = kernels._lane32_args(SPEC)
lane32 = kernels.lane32
_set = kernels._fpenv_set


def _loop(wide, csr):
    @njit
    def run(a, b, c, o):
        (OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode, ftz, tininess, sat, relu, oob, sat_mz,
         relu_mz, oob_sign, oob_c, nan_bits) = K
        env = _set(np.int32(csr))
        for i in range(o.size):
            o[i] = lane32(a[i], b[i], c[i], OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode, ftz,
                          tininess, sat, relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits,
                          wide)
        _set(env)
    return run


def rate(f, ops):
    o = np.empty(N, np.uint16)
    f(*ops, o)
    best = 1e9
    for _ in range(5):
        t = time.thread_time()
        f(*ops, o)
        best = min(best, time.thread_time() - t)
    return N / best / 1e9


def zero_subnormal(x):
    return np.where(((x >> 7) & 0xFF) == 0, x & 0x8000, x).astype(np.uint16)


def main():
    rng = np.random.default_rng(1)
    ins = parse("fma.rn.bf16")
    dists = {d: [np.asarray(x).astype(np.uint16) for x in bench.dist_operands(ins, N, rng, d)]
             for d in ("uniform", "normal", "hard")}
    plain, wide = _loop(False, 0x1F80), _loop(True, 0x1F80)
    plain_daz, wide_daz = _loop(False, 0x9FC0), _loop(True, 0x9FC0)
    print(f"load average {os.getloadavg()[0]:.1f}; Ge/s, kernel loop only, {N} lanes")
    for d, ops in dists.items():
        print(f"{d:8s} plain {rate(plain, ops):5.2f}  plain+FTZ/DAZ {rate(plain_daz, ops):5.2f}  "
              f"scaled {rate(wide, ops):5.2f}  scaled+DAZ {rate(wide_daz, ops):5.2f}  "
              f"scaled, subnormal a b zeroed "
              f"{rate(wide, [zero_subnormal(x) for x in ops[:2]] + ops[2:]):5.2f}  "
              f"a b c zeroed {rate(wide, [zero_subnormal(x) for x in ops]):5.2f}", flush=True)


if __name__ == "__main__":
    main()
