"""Write the Triton sm_80 row softmax of tests/data/kernels (offline compile, no GPU).

    /work/main/.venv/bin/python tools/triton_softmax_sm80.py tests/data/kernels

writes triton_softmax_sm80.ptx and triton_softmax_sm80.json: the kernel `softmax` below (the
Triton tutorial's pattern, written here) compiled for GPUTarget("cuda", 80, 32) with BLOCK=512
and 4 warps (each thread holds 4 consecutive columns), every pointer and n_cols 16-divisible.
Triton lowers tl.exp(z) to mul.f32 z, log2(e) then ex2.approx.f32, the row's max and sum to a
per-thread tree, shfl.sync.bfly over the warp and a second butterfly over the 4 warps' partials
in shared memory, and `/` to div.full.f32.
"""
import json
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def softmax(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=m, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * n_cols + cols, num / den, mask=m)


SIG = {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32"}
BLOCK, WARPS = 512, 4


def main(out):
    out = Path(out)
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    src = ASTSource(fn=softmax, signature=SIG, constexprs={"BLOCK": BLOCK}, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 80, 32), options={"num_warps": WARPS})
    path = out / "triton_softmax_sm80.ptx"
    path.write_text(k.asm["ptx"])
    meta = {"shared_bytes": k.metadata.shared, "num_warps": WARPS, "BLOCK": BLOCK,
            "triton": triton.__version__}
    (out / "triton_softmax_sm80.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(path, len(k.asm["ptx"]), "bytes,", k.metadata.shared, "bytes of shared memory")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels")
