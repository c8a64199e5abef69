"""Where bf16 fma's time goes on random inputs (docs/performance.md, "Why bf16 fma is
slower on random bits than on normal values"): the fast lane's kernel loops alone (the plain
binary32 pass and the wide lane on every lane), on uniform bits, normal values and bench.py's hard mix, with
probes that are not exact (FTZ/DAZ set) to show what subnormal binary32 values cost.  Single
thread, thread CPU time, best of 7, 4M lanes.

    PYTHONPATH=src python benchmarks/bf16_fma_probe.py [spelling]
"""

import dataclasses
import os
import sys
import time

import numpy as np
from numba import njit

from ptxfp import parse
from ptxfp.core import _jit
from ptxfp.ops import kernels
from ptxfp.ops.arith import _form

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

N = 1 << 22
DEFAULT, FTZ_DAZ = 0x1F80, 0x9FC0
WIDE, WIDE_FTZ_DAZ = kernels.MXCSR_WIDE, kernels.MXCSR_WIDE | 0x8040


def _loop(K, wide, csr):
    lane32, wide_run, fpenv_set = kernels.lane32, kernels.wide_run, _jit.fpenv_set
    CHUNK = kernels.WIDE_CHUNK

    if wide:                            # the wide lane as kernel32 runs it (any input)
        @njit
        def run(a, b, c, o):
            env = fpenv_set(np.int32(csr))
            wide_run(a, b, c, o, K, np.empty(CHUNK, np.int32))
            fpenv_set(env)
        return run

    @njit
    def run(a, b, c, o):
        env = fpenv_set(np.int32(csr))
        for i in range(o.size):
            o[i] = lane32(a[i], b[i], c[i], K)
        fpenv_set(env)
    return run


def rate(f, ops):
    o = np.empty(N, np.uint16)
    f(*ops, o)
    best = 1e9
    for _ in range(7):
        t = time.thread_time()
        f(*ops, o)
        best = min(best, time.thread_time() - t)
    return N / best / 1e9


def main(spelling="fma.rn.bf16"):
    spec = dataclasses.replace(_form(spelling).kernel()[0], lanes=1)
    K = tuple(kernels.lane_consts(spec))
    rng = np.random.default_rng(1)
    ins = parse(spelling)
    dists = {d: [np.asarray(x).astype(np.uint16) for x in bench.dist_operands(ins, N, rng, d)]
             for d in ("uniform", "normal", "hard")}
    loops = {"plain": _loop(K, False, DEFAULT), "plain+FTZ/DAZ": _loop(K, False, FTZ_DAZ),
             "wide": _loop(K, True, WIDE), "wide+FTZ/DAZ": _loop(K, True, WIDE_FTZ_DAZ)}
    print(f"{spelling}; load average {os.getloadavg()[0]:.1f}; Ge/s, kernel loop only, {N} lanes")
    for d, ops in dists.items():
        print(f"{d:8s} " + "  ".join(f"{k} {rate(f, ops):5.2f}" for k, f in loops.items()),
              flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
