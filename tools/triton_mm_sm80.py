"""Write the Triton sm_80 matmul modules of tests/data/kernels (offline compile, no GPU).

    /work/main/.venv/bin/python tools/triton_mm_sm80.py tests/data/kernels

writes, each the kernel `mm` below compiled for GPUTarget("cuda", 80, 32) with an f32
accumulator, 32 x 32 tiles, 4 warps, for each input type T in f16, bf16 and tf32 (f32 arrays;
tl.dot's default input_precision "tf32" on sm_80):
  triton_mm_T_sm80_s1.ptx     BK=16, num_stages=1: ld.global -> st.shared -> (ldmatrix) -> mma.sync
  triton_mm_T_sm80_s2.ptx     BK=16, num_stages=2: cp.async, pipelined
  triton_mm_T_sm80_s3k32.ptx  BK=32, num_stages=3: 16-byte cp.async.cg, two stages in flight
and triton_mm_T_sm80.json (shared memory, tiles, Triton's version).
C = A @ B for row-major A (M x K), B (K x N), C (M x N, f32); one program a BM x BN tile.
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


#: input type name -> Triton's pointer type of A and B
TYPES = {"f16": "*fp16", "bf16": "*bf16", "tf32": "*fp32"}
#: (file suffix, num_stages, BK)
VARIANTS = (("s1", 1, 16), ("s2", 2, 16), ("s3k32", 3, 32))


def main(out):
    for t in TYPES:
        write(Path(out), t)


def write(out, t):
    sig = {"a_ptr": TYPES[t], "b_ptr": TYPES[t], "c_ptr": "*fp32", "M": "i32", "N": "i32",
           "K": "i32"}
    meta = {}
    for name, stages, bk in VARIANTS:
        # as a launch with 16-aligned pointers and sizes divisible by 16 specializes them
        # (Triton's "tt.divisibility" 16): 16-byte loads, so the pipelined module uses cp.async
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
        src = ASTSource(fn=mm, signature=sig, constexprs={"BM": 32, "BN": 32, "BK": bk}, attrs=attrs)
        k = triton.compile(src, target=GPUTarget("cuda", 80, 32),
                           options={"num_stages": stages, "num_warps": 4})
        path = out / f"triton_mm_{t}_sm80_{name}.ptx"
        path.write_text(k.asm["ptx"])
        meta[path.name] = {"shared_bytes": k.metadata.shared, "num_warps": 4, "BM": 32,
                           "BN": 32, "BK": bk, "num_stages": stages,
                           "triton": triton.__version__}
        print(path, len(k.asm["ptx"]), "bytes,", k.metadata.shared, "bytes of shared memory")
    (out / f"triton_mm_{t}_sm80.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels")
