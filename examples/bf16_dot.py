"""A bf16 dot product accumulated in f32 with ``fma.rn.f32.bf16``, as a GPU kernel computes it,
against the exact value (float64) and against two emulations that round twice.

    python examples/bf16_dot.py [--plot docs/bf16_dot_error.png]

Each step is ``acc = fma.rn.f32.bf16(a[i], b[i], acc)``: the product of two bf16 values is
exact and the sum is rounded once into f32.  The emulations:

- **bf16 products**: ``acc += float32(a[i] * b[i])`` with ml_dtypes arrays, which rounds each
  product to bf16 before the f32 sum (two roundings per step): what ``a * b`` on two bfloat16
  arrays gives;
- **bf16 accumulator**: ``acc = fma.rn.bf16(a[i], b[i], acc)``, the accumulator itself in bf16.

The float64 sum of the exact products is the reference (its own error, about n * 2**-53 of the
sum, is far below every error shown).  The script checks on the way that the fused f32 result
equals float64 arithmetic rounded to f32 at every step, which for bf16 inputs is one rounding
too; ptxfp computes it from bits, exactly as the instruction does, at any length.
"""

from __future__ import annotations

import argparse

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

import ptxfp

BF16 = ml_dtypes.bfloat16


def dot_errors(n: int = 4096, trials: int = 256, seed: int = 1
               ) -> tuple[NDArray[np.int64], dict[str, NDArray[np.float64]]]:
    """Median relative error of each method against float64 after 16, 32, ... n terms."""
    rng = np.random.default_rng(seed)
    # positive values, so that the sum grows and the relative error means something
    a = rng.uniform(0.0, 1.0, (n, trials)).astype(BF16)
    b = rng.uniform(0.0, 1.0, (n, trials)).astype(BF16)
    exact = np.zeros(trials)                       # float64: each product exact, sum to 53 bits
    fused = np.zeros(trials, np.float32)           # fma.rn.f32.bf16, computed by ptxfp
    via64 = np.zeros(trials, np.float32)           # float64 step rounded to f32: the same
    bf16_products = np.zeros(trials, np.float32)   # the product rounded to bf16 first
    bf16_acc = np.zeros(trials, BF16)              # fma.rn.bf16: a bf16 accumulator
    checkpoints = 2 ** np.arange(4, int(np.log2(n)) + 1)
    errors: dict[str, list[NDArray[np.float64]]] = {
        "fma.rn.f32.bf16 (ptxfp)": [], "bf16 products, f32 sum": [],
        "fma.rn.bf16 (bf16 accumulator)": []}
    for i in range(n):
        ai, bi = a[i], b[i]
        p64 = ai.astype(np.float64) * bi.astype(np.float64)
        exact += p64
        ptxfp.execute("fma.rn.f32.bf16", ai, bi, fused, out=fused)   # typed in, typed out
        via64 = (p64 + via64).astype(np.float32)
        bf16_products += (ai * bi).astype(np.float32)
        bf16_acc = ptxfp.execute("fma.rn.bf16", ai, bi, bf16_acc)
        if i + 1 in checkpoints:
            for name, got in zip(errors, (fused, bf16_products, bf16_acc)):
                errors[name].append(np.median(np.abs(got.astype(np.float64) - exact) / exact))
    assert np.array_equal(fused, via64), "fma.rn.f32.bf16 is one rounding of the exact sum"
    return checkpoints, {k: np.array(v) for k, v in errors.items()}


def plot(checkpoints: NDArray[np.int64], errors: dict[str, NDArray[np.float64]],
         path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=90)
    for (name, err), marker in zip(errors.items(), "os^"):
        ax.loglog(checkpoints, err, marker=marker, ms=4, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("terms n (uniform [0, 1) bf16 values)")
    ax.set_ylabel("median relative error vs float64")
    ax.set_title("bf16 dot product: one rounding per step or two", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4096, help="the longest dot product")
    ap.add_argument("--trials", type=int, default=256, help="dot products per length")
    ap.add_argument("--plot", metavar="PNG", help="save the error plot (needs matplotlib)")
    args = ap.parse_args()
    checkpoints, errors = dot_errors(args.n, args.trials)
    print("terms  " + "  ".join(f"{name:>30}" for name in errors))
    for k, n in enumerate(checkpoints):
        print(f"{n:5d}  " + "  ".join(f"{err[k]:30.3e}" for err in errors.values()))
    if args.plot:
        plot(checkpoints, errors, args.plot)
        print("plot:", args.plot)


if __name__ == "__main__":
    main()
