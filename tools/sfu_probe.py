#!/usr/bin/env python3
"""Ask ptxas what it decides about the SFU spellings (tanh, ex2, lg2, rcp, sqrt, rsqrt, sin,
cos) of ``ptxas_probe.gen_sfu_spellings()``, and write the record check() is held to.

Two parts, one file (``--out``, a .jsonl: a header line, then one record a line):

* ``"kind": "grid"``: every spelling of the grid at .version 9.5 (the newest) on sm_100a, where
  every target requirement of the table is met: ptxas' messages for the line (empty: accepted);
* ``"kind": "sweep"``: for each spelling accepted there, the messages at each .target of
  ``TARGETS`` (at the newest .version) and at each .version (at sm_121f, sm_90 below 8.8, sm_75
  below 7.8): what the form needs.

    python tools/sfu_probe.py --ptxas PATH --out tests/data/ptxas/13.5/sfu.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxas_probe as pp  # noqa: E402

TARGETS = ("sm_50", "sm_53", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
           "sm_90a", "sm_100", "sm_100a", "sm_103a", "sm_110a", "sm_120", "sm_120a", "sm_121f")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas", default=None)
    ap.add_argument("--out", default="tests/data/ptxas/13.5/sfu.jsonl")
    args = ap.parse_args(argv)
    exe = args.ptxas or shutil.which("ptxas")
    if not exe:
        print("sfu_probe: ptxas not found; nothing done.", file=sys.stderr)
        return 0
    pp.PTXAS = exe
    w = tempfile.mkdtemp(prefix="sfu_probe_")
    versions = [v for v in pp.list_versions() if pp.vkey(v) >= (4, 0)]
    vmax = versions[-1]
    sp = pp.gen_sfu_spellings()
    lines = [s["line"] for s in sp]
    grid, _, _ = pp.run_batch(lines, vmax, "sm_100a", "sm_100a", workdir=w)
    legal = [i for i, r in enumerate(grid) if not r]
    ll = [lines[i] for i in legal]

    def arch(t):
        return t if t not in ("sm_50", "sm_53", "sm_60", "sm_70") else "sm_75"

    at_t = {t: pp.run_batch(ll, vmax, t, arch(t), workdir=w)[0] for t in TARGETS}

    def ref(v):
        return "sm_121f" if pp.vkey(v) >= (8, 8) else "sm_90" if pp.vkey(v) >= (7, 8) else "sm_75"

    at_v = {v: pp.run_batch(ll, v, ref(v), ref(v), workdir=w)[0] for v in versions}
    ver = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    header = {"kind": "header", "ptxas_version": ver,
              "command": "python tools/sfu_probe.py " + " ".join(argv or sys.argv[1:]),
              "grid_at": [vmax, "sm_100a"], "targets": list(TARGETS), "versions": versions,
              "ptx_template": pp.make_ptx(["<instruction line>"], "<version>", "<target>",
                                          pp.BASE_DECLS)[0],
              "notes": ["grid: messages at grid_at (empty: accepted); sweep: for the accepted "
                        "ones, messages per .target at the newest .version and per .version "
                        "at sm_121f (sm_90 below 8.8, sm_75 below 7.8)"]}
    with open(args.out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for s, r in zip(sp, grid):
            f.write(json.dumps({"kind": "grid", "spelling": s["spelling"], "line": s["line"],
                                "msgs": r}) + "\n")
        for k, i in enumerate(legal):
            f.write(json.dumps({"kind": "sweep", "spelling": sp[i]["spelling"],
                                "line": lines[i],
                                "targets": {t: at_t[t][k] for t in TARGETS},
                                "versions": {v: at_v[v][k] for v in versions}}) + "\n")
    shutil.rmtree(w, ignore_errors=True)
    print(f"wrote {args.out}: {len(sp)} spellings, {len(legal)} accepted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
