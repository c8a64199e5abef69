"""Write the CuTe 8-bit matrix-move kernel of tests/data/kernels (nvcc 13.0, no GPU).

    /work/main/.venv/bin/python tools/cute_ldsm8_sm100a.py tests/data/kernels

compiles tests/data/kernels/cute_ldsm8_sm100a.cu (our own one-warp kernel calling CUTLASS 4.2
CuTe's sm_100 copy atoms SM100_U8x8_LDSM_T, SM100_U8x16_LDSM_T, SM100_SU{4,6}_DU8x16_x{1,2,4}_
LDSM_N and SM100_U8x{4,8,16}_STSM_T, plus asm ldmatrix.m16n16 .b8x16.b6x16_p32/.b4x16_p64,
which CuTe has no atom for) into cute_ldsm8_sm100a.ptx with

    nvcc -std=c++17 -arch=sm_100a -O3 -I<cutlass_library>/source/include \\
        --expt-relaxed-constexpr -ptx cute_ldsm8_sm100a.cu -o cute_ldsm8_sm100a.ptx

and, where ptxas 13.5 is installed (/work/tools/cuda135), checks that it assembles the module
for sm_100a.
"""
import subprocess
import sys
from pathlib import Path

import cutlass_library

INCLUDE = Path(cutlass_library.__file__).parent / "source" / "include"
PTXAS135 = Path("/work/tools/cuda135/nvidia/cu13/bin/ptxas")


def main(out: str) -> int:
    d = Path(out)
    ptx = d / "cute_ldsm8_sm100a.ptx"
    cmd = ["nvcc", "-std=c++17", "-arch=sm_100a", "-O3", f"-I{INCLUDE}",
           "--expt-relaxed-constexpr", "-ptx", str(d / "cute_ldsm8_sm100a.cu"), "-o", str(ptx)]
    rc = subprocess.run(cmd, check=False).returncode
    if rc != 0:
        return rc
    print(ptx, ptx.stat().st_size, "bytes")
    if PTXAS135.exists():
        rc = subprocess.run([str(PTXAS135), "-arch", "sm_100a", str(ptx), "-o", "/dev/null"],
                            check=False).returncode
        print("ptxas 13.5 -arch sm_100a:", "ok" if rc == 0 else f"rc {rc}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels"))
