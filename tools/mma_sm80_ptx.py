"""Compile tests/data/kernels/mma_sm80.cu (an sm_80 GEMM: cp.async + ldmatrix + mma.sync, f16
inputs with f32 and with f16 accumulation) to the PTX the interpreter tests run.

The exact command (nvcc 13.0, V13.0.88):

    nvcc -arch=sm_80 -O3 -ptx tests/data/kernels/mma_sm80.cu -o tests/data/kernels/mma_sm80.ptx

Run from the repository root: python tools/mma_sm80_ptx.py
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "data" / "kernels"


def main() -> int:
    cmd = ["nvcc", "-arch=sm_80", "-O3", "-ptx", str(KERNELS / "mma_sm80.cu"), "-o",
           str(KERNELS / "mma_sm80.ptx")]
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
