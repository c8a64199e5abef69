"""Speed of ptxfp.matmul (the tensor-core numerics) beside NumPy's float64 matmul.

    PYTHONPATH=src python benchmarks/bench_mma.py [--size 1024] [--threads 1] [--json out.json]

On one thread by default (PTXFP_NUM_THREADS and the BLAS thread variables are set before
NumPy is imported).  Times are the calling thread's CPU time (``time.thread_time``: on one
thread every kernel runs in the caller; a shared machine's other load does not count).  Each
line: the instruction and target, seconds (best of --repeat after one warm-up call, which
compiles), G products/s (M*N*K / time), and NumPy's float64 matmul of
the same shape in the same run with its ratio.  Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    for v in ("PTXFP_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(args.threads)
    import ml_dtypes
    import numpy as np

    import ptxfp

    n = args.size
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n))
    y = rng.standard_normal((n, n))

    def best(fn):
        fn()
        ts = []
        for _ in range(args.repeat):
            t = time.thread_time()
            fn()
            ts.append(time.thread_time() - t)
        return min(ts)

    t_np = best(lambda: x @ y)
    rows = []
    cases = [("bf16", ml_dtypes.bfloat16, "sm_90"), ("bf16", ml_dtypes.bfloat16, "sm_100"),
             ("bf16", ml_dtypes.bfloat16, "sm_80"),
             ("e4m3", ml_dtypes.float8_e4m3fn, "sm_90"), ("e4m3", ml_dtypes.float8_e4m3fn, "sm_100")]
    print(f"NumPy float64 matmul {n}x{n}x{n}: {t_np:.4f} s "
          f"({n ** 3 / t_np / 1e9:.2f} G products/s), threads={args.threads}")
    for name, dt, target in cases:
        A = x.astype(dt)
        B = y.astype(dt)
        form = ptxfp.tensor.default_form(name, target)
        t = best(lambda: ptxfp.matmul(A, B, target=target))
        gp = n ** 3 / t / 1e9
        rows.append({"case": f"{name} {form.opcode} k{form.k} {target}", "seconds": t,
                     "gproducts_per_s": gp, "numpy_f64_seconds": t_np,
                     "ratio_to_numpy": t / t_np})
        print(f"{name:5s} {form.opcode:12s} k{form.k:<3d} {target:7s} {t:8.3f} s  "
              f"{gp:6.3f} G products/s  ({t / t_np:6.1f}x NumPy f64)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": n, "threads": args.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
