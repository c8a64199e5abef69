"""Write the Triton sm_90a (wgmma) matmul modules of tests/data/kernels (offline, no GPU).

    /work/main/.venv/bin/python tools/triton_mm_sm90a.py tests/data/kernels

writes the kernel `mm` below compiled for GPUTarget("cuda", 90, 32) (Triton names the arch
"90a" itself: `.target sm_90a`), 4 warps (one warpgroup), an f32 accumulator:
  triton_mm_f16_sm90a.ptx        f16, 64 x 64 tiles, BK=32, num_stages=1
  triton_mm_bf16_sm90a.ptx       bf16, 64 x 64 tiles, BK=32, num_stages=3 (cp.async pipelined)
  triton_mm_e4m3_sm90a.ptx       fp8 e4m3 (Triton's fp8e4nv), 64 x 64 tiles, BK=64, num_stages=3
  triton_mm_bf16_128_sm90a.ptx   bf16, 128 x 128 tiles, BK=64, num_stages=3 (the speed case)
  triton_mm_bf16_tma_sm90a.ptx   `mm_tma`: A and B through tensor descriptors (TMA loads into
                                 swizzled .shared, mbarrier expect_tx / try_wait.parity), bf16,
                                 64 x 64 tiles, BK=32, num_stages=3
C = A @ B for row-major A (M x K), B (K x N), C (M x N, f32); one program a BM x BN tile.
Triton keeps A K-major and B N-major in shared memory (64B/128B swizzle) and issues
wgmma.mma_async m64nNk16 (k32 for fp8) with B's imm-trans-b = 1.
"""
import json
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def mm_tma(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pm * BM, k])
        b = b_desc.load([k, pn * BN])
        acc = tl.dot(a, b, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


#: (file, Triton dtype, BM, BN, BK, num_stages)
VARIANTS = (("triton_mm_f16_sm90a.ptx", "fp16", 64, 64, 32, 1),
            ("triton_mm_bf16_sm90a.ptx", "bf16", 64, 64, 32, 3),
            ("triton_mm_e4m3_sm90a.ptx", "fp8e4nv", 64, 64, 64, 3),
            ("triton_mm_bf16_128_sm90a.ptx", "bf16", 128, 128, 64, 3))


def main(out):
    out = Path(out)
    meta = {}
    for name, dt, bm, bn, bk, stages in VARIANTS:
        sig = {"a_ptr": "*" + dt, "b_ptr": "*" + dt, "c_ptr": "*fp32", "M": "i32", "N": "i32",
               "K": "i32"}
        # as a launch with 16-aligned pointers and sizes divisible by 16 specializes them
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
        src = ASTSource(fn=mm, signature=sig, constexprs={"BM": bm, "BN": bn, "BK": bk},
                        attrs=attrs)
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                           options={"num_stages": stages, "num_warps": 4})
        path = out / name
        path.write_text(k.asm["ptx"])
        meta[name] = {"dtype": dt, "shared_bytes": k.metadata.shared, "num_warps": 4,
                      "BM": bm, "BN": bn, "BK": bk, "num_stages": stages,
                      "triton": triton.__version__}
        print(path, len(k.asm["ptx"]), "bytes,", k.metadata.shared, "bytes of shared memory")
    # the TMA kernel: each tensor descriptor is a 128-byte CUtensorMap parameter followed by
    # its shape (i32) and strides (i64); the kernel's wgmma descriptors read A's 64-byte rows
    # with the 64B swizzle and B's 128-byte rows with the 128B swizzle, the modes a host
    # TensorDescriptor encodes for these boxes
    name, bm, bn, bk = "triton_mm_bf16_tma_sm90a.ptx", 64, 64, 32
    sig = {"a_desc": f"tensordesc<bf16[{bm}, {bk}]>", "b_desc": f"tensordesc<bf16[{bk}, {bn}]>",
           "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    src = ASTSource(fn=mm_tma, signature=sig, constexprs={"BM": bm, "BN": bn, "BK": bk})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                       options={"num_stages": 3, "num_warps": 4})
    (out / name).write_text(k.asm["ptx"])
    meta[name] = {"dtype": "bf16", "shared_bytes": k.metadata.shared, "num_warps": 4,
                  "BM": bm, "BN": bn, "BK": bk, "num_stages": 3, "triton": triton.__version__,
                  "tma": {"a": {"box": [bk, bm], "swizzle": "64B"},
                          "b": {"box": [bn, bk], "swizzle": "128B"}}}
    print(out / name, len(k.asm["ptx"]), "bytes,", k.metadata.shared, "bytes of shared memory")
    (out / "triton_mm_sm90a.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels")
