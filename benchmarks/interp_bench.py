"""PTX interpreter cost per instruction: a straight-line snippet of N lines, read, checked and
run on one thread (docs/performance.md, "PTX interpreter").

    PYTHONPATH=src python benchmarks/interp_bench.py [N] [--threads T] [--repeat R] [--parts]

    PYTHONPATH=src python benchmarks/interp_bench.py --wide [LINES] [--threads T]
    PYTHONPATH=src python benchmarks/interp_bench.py --kernels [--scale S]

Prints the CPU time (``time.process_time``, the best of R runs; steadier than wall time on a
shared machine, which is printed too) of check() and run() and the cost per line.  With
--parts, also the pieces of run(text): reading (ptxfp.ptx.read), compiling
(ptxfp.ptx.interp.prepare of the read program) and running the compiled program.  The snippet
cycles through half-precision fma/add/mul, a packed form, mov, integer add, cvt and setp/selp
over 8 registers of each kind, so each line reads registers the previous lines wrote.

--wide: straight-line integer and f32 code (add/mul.lo/xor/shl .s32, fma.rn/add.rn/mul.rn
.f32) over many threads (default 2**20): thread-instructions per second.
--kernels: the nvcc kernels of tests/data/kernels over large grids: a 2**20-thread grid-stride
axpy, a block reduction of 2**21 floats, the tiled f16 GEMM (256 x 256 x 256): thread-
instructions (the sum over executed instructions of the threads running each) per second.
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


WIDE = [
    "add.s32 %s{a}, %s{b}, %s{c};",
    "fma.rn.f32 %f{a}, %f{b}, %f{c}, %f{d};",
    "mul.lo.s32 %s{a}, %s{b}, %s{c};",
    "add.rn.f32 %f{a}, %f{b}, %f{c};",
    "xor.b32 %s{a}, %s{b}, %s{c};",
    "mul.rn.f32 %f{a}, %f{b}, %f{c};",
    "shl.b32 %s{a}, %s{b}, 3;",
]


def wide(lines, threads, repeat):
    body = [".reg .s32 %s<8>;\n.reg .f32 %f<8>;"]
    for i in range(lines):
        a, b, c, d = i % 8, (i + 3) % 8, (i + 5) % 8, (i + 7) % 8
        body.append(WIDE[i % len(WIDE)].format(a=a, b=b, c=c, d=d))
    text = "\n".join(body) + "\n"
    rng = np.random.default_rng(1)
    need = inputs_needed(text)
    ins = {k: (rng.integers(0, 1 << 31, threads, dtype=np.uint32) if "s" in k else
               rng.uniform(-1, 1, threads).astype(np.float32).view(np.uint32))
           for k in need}
    prep = prepare(text)
    ptxfp.run(prep, {k: v[:64] for k, v in ins.items()})
    cpu, wall, _ = timed(lambda: ptxfp.run(prep, ins), repeat)
    ti = lines * threads
    print(f"straight-line int/f32: lines={lines} threads={threads}: {cpu:.3f} s CPU, "
          f"{ti / cpu / 1e6:.1f} M thread-instructions/s ({wall:.3f} s wall)")


def kernels(scale, repeat):
    import pathlib
    from ptxfp.ptx.interp import run_detailed
    here = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "kernels"

    def mem_of(*arrays):
        buf, at = bytearray(256), []
        for a in arrays:
            p = -(-len(buf) // 256) * 256
            buf.extend(b"\0" * (p - len(buf)))
            at.append(p)
            buf.extend(np.ascontiguousarray(a).tobytes())
        return np.frombuffer(bytes(buf), np.uint8), at

    rng = np.random.default_rng(1)
    cases = []
    n = (1 << 21) // scale
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    mem, (px, py) = mem_of(x, y)
    cases.append(("axpy (grid-stride, 2 iterations)", "axpy.ptx",
                  {"axpy_param_0": n, "axpy_param_1": int(np.float32(1.5).view(np.uint32)),
                   "axpy_param_2": px, "axpy_param_3": py}, mem, (n // 512,), (256,)))
    mem, (px, po) = mem_of(x, np.zeros(n // 512, np.float32))
    cases.append(("block reduction (shared, bar.sync)", "block_reduce.ptx",
                  {"block_reduce_param_0": px, "block_reduce_param_1": po,
                   "block_reduce_param_2": n}, mem, (n // 512,), (256,)))
    m = 256 // (1 if scale == 1 else 4)
    A = rng.uniform(-1, 1, (m, m)).astype(np.float16)
    B = rng.uniform(-1, 1, (m, m)).astype(np.float16)
    mem, (pa, pb, pc) = mem_of(A, B, np.zeros(m * m, np.float32))
    cases.append((f"tiled f16 GEMM {m}x{m}x{m}", "gemm_f16.ptx",
                  {"gemm_f16_param_0": pa, "gemm_f16_param_1": pb, "gemm_f16_param_2": pc,
                   "gemm_f16_param_3": m, "gemm_f16_param_4": m, "gemm_f16_param_5": m},
                  mem, (m // 16, m // 16), (16, 16)))
    for name, f, ins, mem, grid, block in cases:
        prep = prepare((here / f).read_text())
        cpu, wall, r = timed(lambda: run_detailed(prep, ins, memory=mem, grid=grid,
                                                  block=block), repeat)
        print(f"{name:36s} threads={r.threads:8d} steps={r.steps:6d} "
              f"thread-instr={r.thread_instructions:11d}: {cpu:7.3f} s CPU "
              f"{r.thread_instructions / cpu / 1e6:6.1f} M/s ({wall:.3f} s wall)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--parts", action="store_true")
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--scale", type=int, default=1, help="--kernels: sizes divided by S")
    args = ap.parse_args()
    if args.wide:
        wide(args.n if args.n != 200_000 else 70, args.threads if args.threads > 1 else 1 << 20,
             args.repeat)
        return
    if args.kernels:
        kernels(args.scale, args.repeat)
        return
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
