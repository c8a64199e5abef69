"""Judge a bf16 fma written the way simulators write it, with ptxfp.sweep.

GPGPU-Sim, gpuocelot, tinygrad's emulator and Triton's interpreter all compute a bf16 fma by
widening the operands to float32, computing a*b + c there and rounding the float32 result to
bf16: two roundings, where PTX's fma.rn.bf16 rounds the exact a*b + c once.  This script sweeps
such an emulator against ptxfp over the targeted vectors and a few million random ones, on a
local Dask cluster when Dask is installed (pip install 'ptxfp[sweep]'), and prints the mismatch
classes with their first witnesses.

    PYTHONPATH=src python examples/sweep_double_rounding.py            # 2 workers, 2M vectors
    WORKERS=0 N=500000 PYTHONPATH=src python examples/sweep_double_rounding.py
"""

import os

import numpy as np

import ptxfp


def simulator_fma_bf16(a, b, c):
    """fma.rn.bf16 as a simulator computes it: float(a) * float(b) + float(c) in binary32,
    then round to nearest even into bf16 (NaN to the canonical 0x7FFF)."""
    def widen(x):
        return (np.asarray(x).astype(np.uint32) << np.uint32(16)).view(np.float32)

    with np.errstate(all="ignore"):
        y = widen(a) * widen(b) + widen(c)               # rounded once, in binary32
    u = y.view(np.uint32).astype(np.uint64)
    d = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)   # ... and again, to bf16
    return np.where(np.isnan(y), np.uint16(0x7FFF), d).astype(np.uint16)


def main():
    workers = int(os.environ.get("WORKERS", "2"))
    n = int(os.environ.get("N", "2000000"))
    report = ptxfp.sweep("fma.rn.bf16", simulator_fma_bf16, random=n, workers=workers,
                         progress=True, note=print)
    print(report.format(limit=2))
    # the witness of docs/semantics.md, decoded
    a, b, c = 0x3F82, 0x3FA0, 0x0001
    print(f"fma.rn.bf16({a:#06x}, {b:#06x}, {c:#06x}): ptxfp "
          f"{ptxfp.execute('fma.rn.bf16', a, b, c):#06x}, the simulator "
          f"{int(simulator_fma_bf16([a], [b], [c])[0]):#06x}")
    return 0 if report.ok else 1


if __name__ == "__main__":        # Dask's worker processes import this file again
    raise SystemExit(main())
