"""PTX interpreter cost per instruction: a straight-line snippet of N lines, read, checked and
run on one thread (docs/performance.md, "PTX interpreter").

    PYTHONPATH=src python benchmarks/interp_bench.py [N] [--threads T]

Prints seconds for check() and run() and the cost per line.  The snippet cycles through
half-precision fma/add/mul, a packed form, mov, integer add, cvt and setp/selp over 8
registers of each kind, so each line reads registers the previous lines wrote.
"""

import argparse
import time

import numpy as np

import ptxfp
from ptxfp.ptx.interp import inputs_needed

BODY = [
    "fma.rn.f16 %h{a}, %h{b}, %h{c}, %h{d};",
    "add.rn.bf16 %h{a}, %h{b}, %h{c};",
    "mul.rn.ftz.f16 %h{a}, %h{b}, %h{c};",
    "fma.rn.f16x2 %r{a}, %r{b}, %r{c}, %r{d};",
    "mov.b32 %r{a}, {{%h{b}, %h{c}}};",
    "add.s32 %s{a}, %s{b}, %s{c};",
    "cvt.rn.f16.f32 %h{a}, %f{b};",
    "setp.lt.s32 %p{a}, %s{b}, %s{c};",
    "selp.b16 %h{a}, %h{b}, %h{c}, %p{d};",
]
DECL = (".reg .b16 %h<8>;\n.reg .b32 %r<8>;\n.reg .s32 %s<8>;\n.reg .f32 %f<8>;\n"
        ".reg .pred %p<8>;\n")


def snippet(n):
    lines = [DECL]
    for i in range(n):
        a, b, c, d = i % 8, (i + 3) % 8, (i + 5) % 8, (i + 7) % 8
        lines.append(BODY[i % len(BODY)].format(a=a, b=b, c=c, d=d))
    return "\n".join(lines) + "\n"


def inputs(text, threads):
    rng = np.random.default_rng(1)
    out = {}
    for k in range(8):
        out[f"%h{k}"] = rng.integers(0, 1 << 16, threads, dtype=np.uint16)
        out[f"%r{k}"] = rng.integers(0, 1 << 32, threads, dtype=np.uint32)
        out[f"%s{k}"] = rng.integers(0, 1 << 31, threads, dtype=np.uint32)
        out[f"%f{k}"] = rng.integers(0, 1 << 32, threads, dtype=np.uint32)
        out[f"%p{k}"] = rng.integers(0, 2, threads).astype(bool)
    need = inputs_needed(text)
    return {k: v for k, v in out.items() if k in need}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    text = snippet(args.n)
    ins = inputs(text, args.threads)
    small = snippet(50)
    ptxfp.run(small, inputs(small, args.threads))   # warm the kernels
    t0 = time.perf_counter()
    rep = ptxfp.check(text)
    t1 = time.perf_counter()
    assert rep.ok, rep.errors[:3]
    res = ptxfp.run(text, ins)
    t2 = time.perf_counter()
    assert len(res) >= 40
    print(f"lines={args.n} threads={args.threads}")
    print(f"check: {t1 - t0:.3f} s  ({(t1 - t0) / args.n * 1e6:.1f} us/line, "
          f"{(t1 - t0) / args.n * 1e6:.1f} ms per 1,000 lines)")
    print(f"run:   {t2 - t1:.3f} s  ({(t2 - t1) / args.n * 1e6:.1f} us/instruction)")


if __name__ == "__main__":
    main()
