"""ptxfp.triton speed: Triton 3.8 modules compiled for sm_80 and run by ptxfp.run on one core
(docs/performance.md, "Triton kernels").

    PYTHONPATH=src python benchmarks/triton_bench.py [--repeat R] [--log2n 20] [--gemm 256]
    PYTHONPATH=src python benchmarks/triton_bench.py --profile axpy    # cProfile's top 25

Elementwise kernels over 2**log2n elements (BLOCK=1024, 4 warps): thread-instructions (the
sum over executed instructions of the threads running each) per CPU second; a bf16 GEMM
(M = N = K = --gemm, 32 x 32 x 32 tiles, num_stages=3, mma.sync m16n8k16): CPU seconds.
Times are time.process_time (CPU time of this process: steadier than wall time on a shared
machine), the best of R runs, each after a first run that compiles (Triton) and warms the
caches (Numba, the interpreter's per-module compile).
"""

import argparse
import cProfile
import gc
import pstats
import time

import ml_dtypes
import numpy as np
import triton
import triton.language as tl

import ptxfp.triton as pt


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * alpha + tl.load(y_ptr + i, mask=m), mask=m)


@triton.jit
def gelu_f16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.sigmoid(1.702 * x) * 2.0 - 1.0)
    tl.store(out_ptr + i, y.to(tl.float16), mask=m)


@triton.jit
def exp_bf16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m).to(tl.float32)
    tl.store(out_ptr + i, tl.exp(x).to(tl.bfloat16), mask=m)


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def cases(log2n, g):
    n = 1 << log2n
    rng = np.random.default_rng(0)
    x32, y32 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    o32 = np.zeros(n, np.float32)
    x16 = x32.astype(np.float16)
    xb = x32.astype(ml_dtypes.bfloat16)
    grid = (n // 1024,)
    A = rng.standard_normal((g, g)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((g, g)).astype(ml_dtypes.bfloat16)
    C = np.zeros((g, g), np.float32)
    return {
        "axpy": lambda: pt.launch(axpy, grid, x32, y32, o32, n, 0.5, BLOCK=1024),
        "gelu_f16": lambda: pt.launch(gelu_f16, grid, x16, np.zeros(n, np.float16), n,
                                      BLOCK=1024),
        "exp_bf16": lambda: pt.launch(exp_bf16, grid, xb, np.zeros(n, ml_dtypes.bfloat16), n,
                                      BLOCK=1024),
        f"gemm_bf16_{g}": lambda: pt.launch(mm, (g // 32, g // 32), A, B, C, g, g, g, BM=32,
                                            BN=32, BK=32, num_stages=3),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--gemm", type=int, default=256)
    ap.add_argument("--only", default=None)
    ap.add_argument("--profile", default=None)
    a = ap.parse_args()
    cs = cases(a.log2n, a.gemm)
    if a.profile:
        cs[a.profile]()
        cProfile.runctx("cs[a.profile]()", globals(), locals(), "/tmp/triton_bench.prof")
        pstats.Stats("/tmp/triton_bench.prof").sort_stats("tottime").print_stats(25)
        return
    for name, fn in cs.items():
        if a.only and a.only not in name:
            continue
        r = fn()                                   # compile, warm
        cpu = wall = float("inf")
        for _ in range(a.repeat):
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            r = fn()
            c1, w1 = time.process_time(), time.perf_counter()
            cpu, wall = min(cpu, c1 - c0), min(wall, w1 - w0)
        ti = r.thread_instructions
        print(f"{name:14s} steps {r.steps:7d}  thread-instr {ti:12,d}  cpu {cpu:7.3f} s  "
              f"wall {wall:7.3f} s  {ti / cpu / 1e6:7.1f} M thread-instr/s")


if __name__ == "__main__":
    main()
