"""Time ptxfp.run on Triton 3.8's 256^3 bf16 sm_90a matmul (wgmma m64n128k16, 128 x 128 tiles,
BK=64, three cp.async stages: tests/data/kernels/triton_mm_bf16_128_sm90a.ptx), first call
(reading and compiling the module) and again, and check it bit-equals ptxfp.matmul.

    taskset -c 0 python benchmarks/bench_hopper_gemm.py
"""
import json
import os
import time
from pathlib import Path

import ml_dtypes
import numpy as np

import ptxfp

KERNELS = Path(__file__).resolve().parents[1] / "tests" / "data" / "kernels"


def main(M=256, N=256, K=256):
    name = "triton_mm_bf16_128_sm90a.ptx"
    meta = json.loads((KERNELS / "triton_mm_sm90a.json").read_text())[name]
    text = (KERNELS / name).read_text()
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    b0, c0 = A.nbytes, A.nbytes + B.nbytes
    mem = A.tobytes() + B.tobytes() + bytes(M * N * 4)
    inputs = {"mm_param_0": 0, "mm_param_1": b0, "mm_param_2": c0, "mm_param_3": M,
              "mm_param_4": N, "mm_param_5": K, "mm_param_6": 0, "mm_param_7": 0}
    inst = next(ln.split()[0] for ln in text.splitlines() if "wgmma.mma_async" in ln)
    want = np.asarray(ptxfp.matmul(A, B, instruction=inst, target="sm_90a"), np.float32)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        r = ptxfp.run(text, inputs, memory=mem, grid=(M // meta["BM"], N // meta["BN"]),
                      block=128, shared_bytes=meta["shared_bytes"])
        times.append(time.perf_counter() - t)
        C = np.frombuffer(r["__memory__"][c0:c0 + M * N * 4].tobytes(), np.uint32)
        assert np.array_equal(C, want.view(np.uint32).reshape(-1))
    print(f"{M}x{N}x{K} bf16 {inst}: first {times[0]:.2f} s, then "
          f"{', '.join(f'{t:.2f}' for t in times[1:])} s; bit-equal ptxfp.matmul; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
