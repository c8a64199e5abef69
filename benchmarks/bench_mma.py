"""Speed of ptxfp.matmul (the tensor-core numerics) beside NumPy's float64 matmul.

    PYTHONPATH=src python benchmarks/bench_mma.py [--size 1024] [--threads 1] [--json out.json]
        [--dist normal|bits|hard] [--cases bf16:sm_90,e4m3:sm_90]

On one thread by default (PTXFP_NUM_THREADS and the BLAS thread variables are set before
NumPy is imported).  Times are the calling thread's CPU time (``time.thread_time``: on one
thread every kernel runs in the caller; a shared machine's other load does not count).  Each
line: the instruction and target, seconds (best of --repeat after one warm-up call, which
compiles), G products/s (M*N*K / time), and NumPy's float64 matmul of
the same shape in the same run with its ratio.  Figures go to docs/performance.md.

``--dist`` picks the operands: ``normal`` (standard normal values rounded to the input type,
passed typed), ``bits`` (uniform random bit patterns of the input type: NaN, infinity,
subnormals and the whole exponent range as often as their encodings) or ``hard`` (a mix:
subnormals, zeros, the largest finite values, exponents spread over the whole range, about 1%
NaN/infinity, and normal values); ``bits`` and ``hard`` are passed as unsigned bit patterns
with ``instruction=default_form(type, target)``, the form matmul picks for typed operands.
NumPy's peer multiplies the same values in float64.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

#: the share of each kind of value in ``--dist hard`` (the rest: standard normal values)
HARD_MIX = {"subnormal": 0.15, "zero": 0.10, "max": 0.10, "min_normal": 0.04,
            "any_exponent": 0.20, "special": 0.01}


def operand_bits(dist: str, dt, shape, rng):
    """Bit patterns (unsigned) of an operand of ml_dtypes/NumPy type ``dt``: see --dist."""
    import ml_dtypes
    import numpy as np

    width = np.dtype(dt).itemsize * 8
    ut = {8: np.uint8, 16: np.uint16}[width]
    if dist == "bits":
        return rng.integers(0, 1 << width, size=shape, dtype=ut)
    normal = rng.standard_normal(shape).astype(dt).view(ut)
    if dist == "normal":
        return normal
    fi = ml_dtypes.finfo(dt)
    man = int(fi.nmant)
    maxb = int(np.array(fi.max, dtype=dt).view(ut))
    top = maxb >> man                          # the largest finite value's exponent field
    sign = rng.integers(0, 2, size=shape, dtype=ut) << ut(width - 1)
    frac = rng.integers(0, 1 << man, size=shape, dtype=ut)
    kinds = {
        "subnormal": np.maximum(frac, ut(1)),
        "zero": np.zeros(shape, ut),
        "max": np.full(shape, maxb, ut) - (frac & ut(1)),      # the largest, or next below
        "min_normal": (ut(1) << ut(man)) | (frac & ut(1)),
        # exponent fields 1 .. top, any fraction; a NaN where top's field has one (e4m3's
        # S.1111.111) becomes the largest finite value
        "any_exponent": np.minimum((rng.integers(1, top + 1, size=shape).astype(ut) << ut(man))
                                   | frac, ut(maxb)),
    }
    if not np.isinf(float(np.array(np.inf).astype(dt))):
        special = np.full(shape, maxb | ((1 << man) - 1), ut)   # no infinity: NaN only
    else:
        inf = int(np.array(np.inf, dtype=dt).view(ut))
        special = np.where(rng.random(shape) < 0.5, ut(inf), ut(inf | 1))   # inf or NaN
    kinds["special"] = special
    out = normal.copy()
    u = rng.random(shape)
    lo = 0.0
    for name, share in HARD_MIX.items():       # each kind with a random sign
        pick = (u >= lo) & (u < lo + share)
        out[pick] = (kinds[name] | sign)[pick]
        lo += share
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--dist", choices=("normal", "bits", "hard"), default="normal",
                    help="operand values (see the module's docstring)")
    ap.add_argument("--cases", default="",
                    help="comma-separated TYPE:TARGET (e.g. bf16:sm_90,e4m3:sm_90); "
                         "default: all five")
    args = ap.parse_args()
    for v in ("PTXFP_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(args.threads)
    import ml_dtypes
    import numpy as np

    import ptxfp

    n = args.size
    rng = np.random.default_rng(0)

    def best(fn):
        fn()
        ts = []
        for _ in range(args.repeat):
            t = time.thread_time()
            fn()
            ts.append(time.thread_time() - t)
        return min(ts)

    rows = []
    cases = [("bf16", ml_dtypes.bfloat16, "sm_90"), ("bf16", ml_dtypes.bfloat16, "sm_100"),
             ("bf16", ml_dtypes.bfloat16, "sm_80"),
             ("e4m3", ml_dtypes.float8_e4m3fn, "sm_90"), ("e4m3", ml_dtypes.float8_e4m3fn, "sm_100")]
    if args.cases:
        want = [c.strip() for c in args.cases.split(",") if c.strip()]
        known = {f"{name}:{target}" for name, _, target in cases}
        bad = [c for c in want if c not in known]
        if bad:
            ap.error(f"--cases: unknown {', '.join(bad)} (known: {', '.join(sorted(known))})")
        cases = [c for c in cases if f"{c[0]}:{c[2]}" in want]
    print(f"{n}x{n}x{n}, --dist {args.dist}, threads={args.threads}, "
          f"load average {os.getloadavg()[0]:.2f}")
    operands = {}
    for name, dt, target in cases:
        if name not in operands:
            a = operand_bits(args.dist, dt, (n, n), rng)
            b = operand_bits(args.dist, dt, (n, n), rng)
            if args.dist == "normal":           # typed, as before --dist
                a, b = a.view(dt), b.view(dt)
            with np.errstate(all="ignore"):
                xa = a.view(dt).astype(np.float64)
                xb = b.view(dt).astype(np.float64)
                operands[name] = (a, b, best(lambda: xa @ xb))
        A, B, t_np = operands[name]
        form = ptxfp.tensor.default_form(name, target)
        # bit patterns carry no type: name the instruction (the one matmul picks for typed)
        ins = None if args.dist == "normal" else form
        t = best(lambda: ptxfp.matmul(A, B, instruction=ins, target=target))
        gp = n ** 3 / t / 1e9
        rows.append({"case": f"{name} {form.opcode} k{form.k} {target}", "dist": args.dist,
                     "seconds": t, "gproducts_per_s": gp, "numpy_f64_seconds": t_np,
                     "ratio_to_numpy": t / t_np})
        print(f"{name:5s} {form.opcode:12s} k{form.k:<3d} {target:7s} {t:8.3f} s  "
              f"{gp:6.3f} G products/s  ({t / t_np:6.1f}x NumPy f64 {t_np:.4f} s)")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": n, "threads": args.threads, "dist": args.dist, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
