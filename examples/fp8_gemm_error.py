"""The error of an fp8 (e4m3) GEMM accumulated by the tensor cores of H100 (sm_90, wgmma) and
B200 (sm_100, tcgen05.mma), against the exact product (float64 of the same fp8 inputs), as K
grows; and the DeepSeek-V3 question: fp8 wgmma on H100 keeps about 14 bits of its f32
accumulator.

    PYTHONPATH=src python examples/fp8_gemm_error.py [--out docs/fp8_gemm_error.png]

The plot needs matplotlib (pip install 'ptxfp[plot]'); without it the table is printed alone.
"""

from __future__ import annotations

import argparse

import ml_dtypes
import numpy as np

import ptxfp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="docs/fp8_gemm_error.png")
    ap.add_argument("--m", type=int, default=64)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    Ks = [2 ** p for p in range(5, 15)]
    m = n = args.m
    rows = []
    for K in Ks:
        # positive inputs (activations after a ReLU times weights of one sign): the sum grows
        # with K, as in DeepSeek's report, so the truncation below 14 bits accumulates
        A = np.abs(rng.standard_normal((m, K))).astype(ml_dtypes.float8_e4m3fn)
        B = np.abs(rng.standard_normal((K, n))).astype(ml_dtypes.float8_e4m3fn)
        exact = A.astype(np.float64) @ B.astype(np.float64)     # exact: < 2**53
        err = {}
        for target in ("sm_90", "sm_100"):
            D = ptxfp.matmul(A, B, target=target).astype(np.float64)
            err[target] = float(np.median(np.abs(D - exact) / exact))
        f32 = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float64)
        err["f32"] = float(np.median(np.abs(f32 - exact) / exact))
        rows.append((K, err["sm_90"], err["sm_100"], err["f32"]))
        print(f"K={K:6d}  median relative error: sm_90 {err['sm_90']:.2e}  "
              f"sm_100 {err['sm_100']:.2e}  float32 matmul {err['f32']:.2e}")

    # The DeepSeek-V3 question in one step: 1 + 2**-14 is lost on H100, kept on B200.
    a = np.zeros((1, 32), ml_dtypes.float8_e4m3fn)
    b = np.zeros((32, 1), ml_dtypes.float8_e4m3fn)
    a[0, 0] = b[0, 0] = 2.0 ** -7
    c = np.ones((1, 1), np.float32)
    print("1 + 2**-14 with fp8 wgmma (sm_90):", float(ptxfp.matmul(a, b, c, target="sm_90")[0, 0]),
          " tcgen05 (sm_100):", float(ptxfp.matmul(a, b, c, target="sm_100")[0, 0]))

    try:
        import matplotlib
    except ImportError:
        print("no plot: matplotlib is not installed (pip install 'ptxfp[plot]', or "
              "pip install matplotlib)")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    K = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.loglog(K, [r[1] for r in rows], "o-", label="H100 sm_90 wgmma (13 fraction bits)")
    ax.loglog(K, [r[2] for r in rows], "s-", label="B200 sm_100 tcgen05.mma (25 bits)")
    ax.loglog(K, [r[3] for r in rows], "^--", label="float32 matmul (NumPy), for scale")
    ax.axhline(2.0 ** -14, color="gray", lw=0.8, ls=":")
    ax.text(K[0], 2.0 ** -14 * 1.2, "2^-14", color="gray")
    ax.set_xlabel("K (inner dimension)")
    ax.set_ylabel("median relative error vs exact")
    ax.set_title(f"fp8 e4m3 GEMM ({m}x{n}xK), accumulated on the tensor cores (ptxfp)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
