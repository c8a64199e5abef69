"""PTX interpreter cost per instruction: a straight-line snippet of N lines, read, checked and
run on one thread (docs/performance.md, "PTX interpreter").

    PYTHONPATH=src python benchmarks/interp_bench.py [N] [--threads T] [--repeat R] [--parts]

Prints the CPU time (``time.process_time``, the best of R runs; steadier than wall time on a
shared machine, which is printed too) of check() and run() and the cost per line.  With
--parts, also the pieces of run(text): reading (ptxfp.ptx.read), compiling
(ptxfp.ptx.interp.prepare of the read program) and running the compiled program.  The snippet
cycles through half-precision fma/add/mul, a packed form, mov, integer add, cvt and setp/selp
over 8 registers of each kind, so each line reads registers the previous lines wrote.
"""

import argparse
import gc
import time

import numpy as np

import ptxfp
from ptxfp.ptx import read
from ptxfp.ptx.interp import inputs_needed, prepare

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


def timed(fn, repeat):
    """(best CPU seconds, best wall seconds, the last result) of `repeat` calls; the result
    of a call is freed inside its timing (as when a caller drops it)."""
    cpu = wall = float("inf")
    out = None
    for _ in range(repeat):
        out = None
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        c1, w1 = time.process_time(), time.perf_counter()
        cpu, wall = min(cpu, c1 - c0), min(wall, w1 - w0)
    return cpu, wall, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--parts", action="store_true")
    args = ap.parse_args()
    n = args.n
    text = snippet(n)
    ins = inputs(text, args.threads)
    small = snippet(50)
    ptxfp.run(small, inputs(small, args.threads))   # warm the kernels
    rows = []
    cpu, wall, rep = timed(lambda: ptxfp.check(text), args.repeat)
    assert rep.ok, rep.errors[:3]
    rows.append(("check(text)", cpu, wall))
    cpu, wall, res = timed(lambda: ptxfp.run(text, ins), args.repeat)
    assert len(res) >= 40
    rows.append(("run(text)", cpu, wall))
    if args.parts:
        cpu, wall, prog = timed(lambda: read(text), args.repeat)
        rows.append(("  read", cpu, wall))
        cpu, wall, prep = timed(lambda: prepare(prog), args.repeat)
        rows.append(("  compile (prepare)", cpu, wall))
        cpu, wall, _ = timed(lambda: ptxfp.run(prep, ins), args.repeat)
        rows.append(("  run(prepared)", cpu, wall))
    print(f"lines={n} threads={args.threads} repeat={args.repeat} (best; CPU time, wall time)")
    for name, cpu, wall in rows:
        print(f"{name:20s} {cpu:8.3f} s CPU {cpu / n * 1e6:7.2f} us/line   "
              f"({wall:.3f} s wall)")


if __name__ == "__main__":
    main()
