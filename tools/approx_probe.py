#!/usr/bin/env python3
"""Ask ptxas which ``.approx`` spellings it compiles for which target, and write the decisions
into src/ptxfp/hw/approx_targets.py (read by ``python -m ptxfp.hw --record`` on a GPU machine
that may have no ptxas).

Every candidate of ``ptxfp.hw.approx.candidates()`` (ex2, lg2, rcp, rsqrt, sqrt, sin, cos,
tanh; .approx with and without .ftz; .f16, .f16x2, .bf16, .bf16x2, .f32) is put into the very
kernel ``--record`` would run (``approx.approx_kernel``) for every target of
``approx.TARGETS``, and compiled with ``ptxas -arch <target>``.  Accepted: exit status 0 and
nothing on stderr.  For a refused spelling the first message of the first target is kept.

    PYTHONPATH=src python3 tools/approx_probe.py [--ptxas PATH] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from ptxfp.hw import approx  # noqa: E402

OUT = os.path.join(HERE, "..", "src", "ptxfp", "hw", "approx_targets.py")


def compile_one(ptxas, spelling, target, tmp):
    k = approx.approx_kernel(spelling, target)
    path = os.path.join(tmp, f"{spelling}-{target}.ptx")
    with open(path, "w") as f:
        f.write(k.ptx)
    r = subprocess.run([ptxas, "-arch", target, path, "-o", os.devnull], capture_output=True,
                       text=True, timeout=120)
    msg = r.stderr.strip().splitlines()
    ok = r.returncode == 0 and not msg
    first = msg[0].split(": ", 1)[-1].strip() if msg else ""
    return ok, first


def _dict(name, d):
    return f"{name} = {{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in d.items()) + "}\n"


def version(ptxas):
    r = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60)
    lines = [x for x in r.stdout.splitlines() if "release" in x]
    return lines[0].strip() if lines else r.stdout.strip()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptxas", default=shutil.which("ptxas"))
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if not args.ptxas:
        print("approx_probe: no ptxas found; nothing written")
        return 0
    cands = approx.candidates()
    jobs = [(s, t) for s in cands for t in approx.TARGETS]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda st: compile_one(args.ptxas, st[0], st[1], tmp), jobs))
    accepts, refused = {}, {}
    for (s, t), (ok, msg) in zip(jobs, results):
        if ok:
            accepts.setdefault(s, []).append(t)
        else:
            refused[s] = f"{t}: {msg}"          # the newest target's message is kept
    accepts = {s: tuple(v) for s, v in accepts.items()}
    refused = {s: m for s, m in refused.items() if s not in accepts}
    text = (
        '"""Which .approx spellings ptxas compiles for which target: written by\n'
        "tools/approx_probe.py (do not edit by hand; rerun it with a newer ptxas).  ACCEPTS maps\n"
        "each spelling ptxas compiled (exit 0, no message) for at least one target to those\n"
        "targets; REFUSED keeps, for each spelling refused everywhere, the newest target's first\n"
        'message."""\n\n'
        f"PTXAS = {version(args.ptxas)!r}\n"
        f"TARGETS = {tuple(approx.TARGETS)!r}\n"
        + _dict("ACCEPTS", accepts) + _dict("REFUSED", refused))
    with open(args.out, "w") as f:
        f.write(text)
    print(f"{len(accepts)} of {len(cands)} spellings accepted somewhere; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
