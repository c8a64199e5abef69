"""Write the Triton softmax and layernorm modules of tests/data/kernels (offline, no GPU).

    /work/main/.venv/bin/python tools/triton_norm.py tests/data/kernels

writes ``triton_norm_{softmax,layernorm}_{sm80,sm90a}.ptx``, each kernel below compiled with Triton
(``triton.__version__`` is recorded in triton_norm.json) for GPUTarget("cuda", 80, 32) and
GPUTarget("cuda", 90, 32) with one warp, one row of N = 64 f32 values a program:

- ``softmax``: y = exp(x - max(x)) / sum(exp(x - max(x))) (tl.exp: ex2.approx.f32 of a
  product by log2(e); the division div.full.f32);
- ``layernorm``: mean, xc = x - mean, var = mean(xc^2), y = xc * rsqrt(var + eps) * w + b
  (the divisions by N div.full.f32, rsqrt.approx.f32).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

N = 64


@triton.jit
def softmax(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + cols, y, mask=mask)


@triton.jit
def layernorm(x_ptr, w_ptr, b_ptr, y_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, xc * rstd * w + b, mask=mask)


KERNELS = {
    "softmax": (softmax, {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32", "n": "i32"}),
    "layernorm": (layernorm, {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32",
                              "y_ptr": "*fp32", "stride": "i32", "n": "i32", "eps": "fp32"}),
}
TARGETS = {"sm80": GPUTarget("cuda", 80, 32), "sm90a": GPUTarget("cuda", 90, 32)}


def main(out: str) -> None:
    dest = Path(out)
    meta = {}
    for name, (fn, sig) in KERNELS.items():
        for tname, target in TARGETS.items():
            src = ASTSource(fn=fn, signature=sig, constexprs={"BLOCK": N})
            k = triton.compile(src, target=target, options={"num_warps": 1})
            path = dest / f"triton_norm_{name}_{tname}.ptx"
            path.write_text(k.asm["ptx"])
            meta[path.name] = {"kernel": name, "num_warps": 1, "BLOCK": N,
                               "shared_bytes": k.metadata.shared, "triton": triton.__version__}
            print(path, len(k.asm["ptx"]), "bytes")
    (dest / "triton_norm.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/kernels")
