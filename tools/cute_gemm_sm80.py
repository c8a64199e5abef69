"""Write the CuTe sm_80 GEMM of tests/data/kernels (nvcc 13.0, no GPU).

    /work/main/.venv/bin/python tools/cute_gemm_sm80.py tests/data/kernels

compiles tests/data/kernels/cute_gemm_sm80.cu (our own kernel, written with CuTe from the
`nvidia-cutlass` wheel's headers after the CuTe sm80 tutorial's pattern: SM80_CP_ASYNC_
CACHEGLOBAL copy atoms into a swizzled two-stage shared tile, SM75_U32x4_LDSM_N retiled to the
MMA fragments, SM80_16x8x16 mma atoms on a 2x2-warp TiledMMA) into cute_gemm_sm80.ptx with

    nvcc -std=c++17 -arch=sm_80 -O3 -I<cutlass_library>/source/include \\
        --expt-relaxed-constexpr -ptx cute_gemm_sm80.cu -o cute_gemm_sm80.ptx

Two entries: cute_gemm_bf16 (bf16 in, f32 accumulate) and cute_gemm_f16 (f16 in, f16
accumulate); C = A * B^T with A: M x K and B: N x K both K-major, C row-major.
"""
import subprocess
import sys
from pathlib import Path

import cutlass_library

INCLUDE = Path(cutlass_library.__file__).parent / "source" / "include"


def main(out: str) -> int:
    d = Path(out)
    cmd = ["nvcc", "-std=c++17", "-arch=sm_80", "-O3", f"-I{INCLUDE}",
           "--expt-relaxed-constexpr", "-ptx", str(d / "cute_gemm_sm80.cu"),
           "-o", str(d / "cute_gemm_sm80.ptx")]
    rc = subprocess.run(cmd, check=False).returncode
    if rc == 0:
        print(d / "cute_gemm_sm80.ptx", (d / "cute_gemm_sm80.ptx").stat().st_size, "bytes")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels"))
