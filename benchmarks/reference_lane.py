#!/usr/bin/env python
"""The float64 reference lane (PTXFP_REFERENCE=1) of two ptxfp source trees, in one run.

    git worktree add /tmp/old 967dc68
    python benchmarks/reference_lane.py /tmp/old/src src --json benchmarks/reference_lane.json

Each form runs in a fresh process per tree (PTXFP_REFERENCE=1, PTXFP_NUM_THREADS=1), the trees
alternating form by form and round by round, on the same normally distributed operands; the
rate is the best over rounds of each process's best-of-``--repeat`` thread CPU time.  Never part
of the test suite.
"""

import argparse
import json
import os
import subprocess
import sys

FORMS = ["add.rn.f16", "add.rn.bf16", "mul.rn.ftz.f16", "fma.rn.f16", "fma.rn.bf16",
         "fma.rp.bf16", "fma.rn.relu.bf16", "fma.rn.ftz.sat.f16x2", "fma.rn.bf16x2",
         "add.rz.f32.bf16", "fma.rm.sat.f32.f16", "sub.rp.sat.f32.f16"]

CHILD = r"""
import sys, time, numpy as np, ptxfp
form, n, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ins = ptxfp.parse(form)
rng = np.random.default_rng(0)
ops = []
for fmt in ins.operand_formats:
    if fmt.endswith("x2"):
        ops.append(np.asarray(ptxfp.to_bits(rng.standard_normal((n, 2)), fmt)).astype(np.uint32))
    else:
        dt = np.uint32 if fmt == "f32" else np.uint16
        ops.append(np.asarray(ptxfp.to_bits(rng.standard_normal(n), fmt)).astype(dt))
ptxfp.execute(form, *[x[:1000] for x in ops])
best = 1e9
for _ in range(repeat):
    t0 = time.thread_time()
    ptxfp.execute(form, *ops)
    best = min(best, time.thread_time() - t0)
print(n / best / 1e6)
"""


def rate(src, form, n, repeat):
    env = dict(os.environ, PYTHONPATH=src, PTXFP_REFERENCE="1", PTXFP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, form, str(n), str(repeat)], env=env,
                         capture_output=True, text=True, cwd="/")
    if out.returncode:
        return None
    return float(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--forms", type=lambda s: s.split(","), default=FORMS)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    print(f"| form | {args.old} Me/s | {args.new} Me/s | new/old |\n|---|---|---|---|")
    for form in args.forms:
        best = {args.old: None, args.new: None}
        for _ in range(args.rounds):
            for src in (args.old, args.new):
                r = rate(os.path.abspath(src), form, args.n, args.repeat)
                if r is not None:
                    best[src] = max(best[src] or 0.0, r)
        o, w = best[args.old], best[args.new]
        rows.append({"form": form, "old Me/s": o, "new Me/s": w})
        ratio = f"{w / o:.2f}" if o and w else ""
        print(f"| `{form}` | {o or 0:.0f} | {w or 0:.0f} | {ratio} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"old": args.old, "new": args.new, "n": args.n, "rows": rows,
                       "loadavg_at_end": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
