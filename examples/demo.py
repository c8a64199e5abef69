"""A tour of ptxfp: single forms on bit patterns, the double-rounding witness, cvt, typed
arrays with fp8, min and f32 fma, and a PTX kernel (examples/axpy.ptx) run over threads against
a byte memory.

    python examples/demo.py
"""

import pathlib

import numpy as np

import ptxfp
from ptxfp.ops.cvt import parse_cvt

HERE = pathlib.Path(__file__).resolve().parent


def show(spelling, *operands):
    """Compute one form and print operands and result as bits and values."""
    run = ptxfp.convert if spelling.startswith("cvt") else ptxfp.execute
    d = run(spelling, *operands)
    ins = parse_cvt(spelling) if spelling.startswith("cvt") else ptxfp.parse(spelling)
    fmt = ins.dtype
    value = ptxfp.from_bits(d, fmt)
    if fmt.endswith("x2"):                            # lane 0 = bits [15:0]
        value = f"(lane0 {value[0]}, lane1 {value[1]})"
    digits = 8 if fmt in ("f32", "f16x2", "bf16x2") else 4
    ops = ", ".join(f"{x:#06x}" for x in operands)
    print(f"  {spelling:<28} ({ops}) -> {d:#0{2 + digits}x}  {value}")
    return d


print("One instruction, bits in, bits out:")
show("add.f16", 0x3C00, 0x4000)                       # 1 + 2 = 3
show("mul.rn.bf16x2", 0x40003F80, 0x40404000)         # lanes: (1*2, 2*3)
show("fma.rn.relu.f16", 0xBC00, 0x4000, 0x3C00)       # -1*2 + 1 = -1 -> relu -> +0
show("fma.rn.oob.f16", 0x7FF7, 0x3C00, 0x3C00)        # OOB-NaN operand -> +0
show("add.rz.f32.bf16", 0x3F00, 0x3E800000)          # mixed precision: 0.5 + 0.25 in f32

print("\nThe double-rounding witness: one rounding of a*b+c, not two")
fused = show("fma.rn.bf16", 0x3F82, 0x3FA0, 0x0001)
via_f32 = show("cvt.rn.bf16.f32", ptxfp.execute("fma.rn.f32.bf16", 0x3F82, 0x3FA0,
                                                 ptxfp.convert("cvt.f32.bf16", 0x0001)))
print(f"  fused 0x{fused:04x} != through f32 0x{via_f32:04x}")

print("\ncvt: rounding modes, .satfinite, and the packed order (a -> upper half)")
third = ptxfp.to_bits(1 / 3, "f32")
for m in ("rn", "rz", "rm", "rp"):
    show(f"cvt.{m}.f16.f32", third)
show("cvt.rn.f16.f32", ptxfp.to_bits(1e6, "f32"))               # overflow -> inf
show("cvt.rn.satfinite.f16.f32", ptxfp.to_bits(1e6, "f32"))     # -> 65504
show("cvt.rn.bf16x2.f32", ptxfp.to_bits(1.0, "f32"), ptxfp.to_bits(2.0, "f32"))

print("\nTyped arrays in and out, and the newer families")
f = np.array([0.3, 500.0, -1e-3], np.float32)
g = np.array([1.0, np.nan, 3.0], np.float32)
e4 = ptxfp.convert("cvt.rn.satfinite.e4m3x2.f32", f, g)        # fp8 pairs, lane 0 = g
print(f"  cvt.rn.satfinite.e4m3x2.f32  lanes {e4.tolist()}  (500 -> 448, NaN stays NaN)")
h = np.array([1.0, -0.0, np.nan], np.float16)
k = np.array([2.0, 0.0, 5.0], np.float16)
print(f"  min.f16                      {ptxfp.execute('min.f16', h, k).tolist()}"
      "  (-0 < +0; a NaN and a number give the number)")
print(f"  min.NaN.f16                  {ptxfp.execute('min.NaN.f16', h, k).tolist()}")
x = np.float32(1 + 2 ** -12)
fused = float(ptxfp.execute("fma.rn.f32", x, x, np.float32(-1)))
print(f"  fma.rn.f32 x*x-1             {fused!r}  (one rounding; in float32 arithmetic, "
      f"rounded twice: {float(np.float32(x * x) - np.float32(1))!r})")

print("\nA kernel: examples/axpy.ptx, y = a*x + y on bf16, 6 threads for n = 5 elements")
n, threads = 5, 6
x = ptxfp.to_bits(np.array([1.0, 2.0, 3.0, -4.0, 1.25]), "bf16")
y = ptxfp.to_bits(np.array([0.5, 0.25, -6.0, 8.0, 2.0 ** -133]), "bf16")
memory = np.zeros(128, np.uint8)
memory[0:2 * n] = x.view(np.uint8)
memory[64:64 + 2 * n] = y.view(np.uint8)
a = 0x3F82                                            # 1.015625
out = ptxfp.run((HERE / "axpy.ptx").read_text(),
                {"axpy_x": 0, "axpy_y": 64, "axpy_a": a, "axpy_n": n},
                memory=memory, threads=threads)
new_y = out["__memory__"][64:64 + 2 * n].view(np.uint16)
for i in range(n):
    print(f"  thread {i}: a*x+y = {ptxfp.from_bits(int(new_y[i]), 'bf16')!r:<12} "
          f"(0x{int(new_y[i]):04x}; execute() says 0x"
          f"{ptxfp.execute('fma.rn.bf16', a, int(x[i]), int(y[i])):04x})")
print(f"  thread {threads - 1} (past n) stored nothing; its %r2 = {int(out['%r2'][-1])}")
