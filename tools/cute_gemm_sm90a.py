"""Write the CuTe and CUTLASS 3 sm_90a GEMMs of tests/data/kernels (nvcc, no GPU).

    /work/main/.venv/bin/python tools/cute_gemm_sm90a.py tests/data/kernels

compiles tests/data/kernels/cute_gemm_sm90a.cu (our own kernel, written with CuTe's TMA
atoms, GMMA layouts and ClusterTransactionBarrier from the `nvidia-cutlass` wheel's headers)
for sm_90a twice:
  cute_gemm_bf16_sm90a.ptx   bf16, wgmma m64n64k16, BK=64  (K-major A and B, 128B swizzle)
  cute_gemm_e4m3_sm90a.ptx   e4m3, wgmma m64n64k32, BK=128
with `nvcc -std=c++17 -arch=sm_90a -ptx`, and builds the same file's host `main` against a
stand-in `cuTensorMapEncodeTiled` that prints the parameters CuTe gives the driver and the
kernel's TMA arguments (each a 256-byte Copy_Atom whose first 128 bytes are the CUtensorMap),
saved as cute_gemm_<type>_sm90a.jsonl: the tests rebuild the maps with ptxfp.tensor_map from
those parameters.  C = A * B^T (A: M x K, B: N x K, both K-major), f32 row-major.

It also compiles tests/data/kernels/cutlass_ws_gemm_sm90a.cu (CUTLASS 3's collective builders:
KernelTmaWarpSpecializedCooperative, 128 x 128 x 64 tiles, 384 threads, a TMA-store epilogue;
bf16 in, f32 D) the same way with -DNDEBUG (its device asserts call __assertfail) into
cutlass_ws_gemm_bf16_sm90a.ptx and .jsonl (its 1,792-byte Params, the four maps, the grid).
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import cutlass_library

INCLUDE = Path(cutlass_library.__file__).parent / "source" / "include"
VARIANTS = {"bf16": [], "e4m3": ["-DCUTE_GEMM_E4M3"]}


def main(out):
    out = Path(out)
    src = out / "cute_gemm_sm90a.cu"
    base = ["nvcc", "-std=c++17", "-arch=sm_90a", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL",
            f"-I{INCLUDE}", "--expt-relaxed-constexpr"]
    for name, defs in VARIANTS.items():
        ptx = out / f"cute_gemm_{name}_sm90a.ptx"
        subprocess.run(base + defs + ["-ptx", str(src), "-o", str(ptx)], check=True)
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, "record")
            subprocess.run(base + defs + [str(src), "-o", exe], check=True)
            rec = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
        (out / f"cute_gemm_{name}_sm90a.jsonl").write_text(rec)
        print(ptx, ptx.stat().st_size, "bytes")
    src = out / "cutlass_ws_gemm_sm90a.cu"
    ptx = out / "cutlass_ws_gemm_bf16_sm90a.ptx"
    subprocess.run(base + ["-DNDEBUG", "-ptx", str(src), "-o", str(ptx)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "record")
        subprocess.run(base + ["-DNDEBUG", str(src), "-o", exe], check=True)
        rec = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    (out / "cutlass_ws_gemm_bf16_sm90a.jsonl").write_text(rec)
    print(ptx, ptx.stat().st_size, "bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels")
