# Triton kernels for tests/data/realworld: `python triton_gen.py axpy|mm CC` writes
# triton_<which>_sm<CC>.ptx (Triton 3.9.0, offline compile, no GPU needed).
import sys, triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def f16_axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, (x * a.to(tl.float16) + y), mask=m)

@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    pm = tl.program_id(0); pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pm * BM, k]); b = b_desc.load([pn * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))

which, cc = sys.argv[1], int(sys.argv[2])
if which == "axpy":
    src = ASTSource(fn=f16_axpy, signature={"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "a": "fp32", "n": "i32"}, constexprs={"BLOCK": 256})
else:
    src = ASTSource(fn=matmul, signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}, constexprs={"BM": 128, "BN": 128, "BK": 64})
k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"ptx_version": 90})
open(f"triton_{which}_sm{cc}.ptx", "w").write(k.asm["ptx"])
print("ok", which, cc, len(k.asm["ptx"]))
