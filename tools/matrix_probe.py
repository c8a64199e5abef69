"""Record which ldmatrix / stmatrix spellings ptxas accepts on which .target and .version, for
tests/test_interp_matrix.py (the interpreter accepts and refuses the same ones).

    python tools/matrix_probe.py --ptxas /work/tools/cuda135/nvidia/cu13/bin/ptxas \\
        --out tests/data/ptxas/13.5/matrix_moves.jsonl

Each record compiles one module (:func:`module`: the spelling once, on a .shared address,
then its registers stored) with ``ptxas -arch TARGET``; ``accepted`` is ptxas' exit status 0,
``error`` its first error line (the file name dropped).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

#: targets ptxas 13.5 assembles, with the .version each is probed at
TARGETS = {"sm_75": "9.0", "sm_80": "9.0", "sm_89": "9.0", "sm_90": "9.0", "sm_90a": "9.0",
           "sm_100": "9.0", "sm_100a": "9.0", "sm_100f": "9.0", "sm_103": "9.0",
           "sm_103a": "9.0", "sm_103f": "9.0", "sm_107a": "9.4", "sm_107f": "9.4",
           "sm_110": "9.0", "sm_110a": "9.0", "sm_110f": "9.0", "sm_120": "9.0",
           "sm_120a": "9.0", "sm_120f": "9.0", "sm_121a": "9.0", "sm_121f": "9.0"}
REGS = {"x1": 1, "x2": 2, "x4": 4}


def spellings() -> list[tuple[str, int]]:
    """(instruction spelling, registers it names): every shape x .num x .trans x type, legal
    or not, and a few qualifier orders and state spaces."""
    out = []
    for shape, per in (("m8n8", 1), ("m16n16", 2), ("m8n16", 1)):
        for num in REGS:
            for trans in ("", ".trans"):
                for ty in (".b16", ".b8", ".b8x16.b6x16_p32", ".b8x16.b4x16_p64"):
                    n = REGS[num] * (2 if shape == "m16n16" and ty != ".b16" else per)
                    out.append((f"ldmatrix.sync.aligned.{shape}.{num}{trans}.shared{ty}", n))
    for shape in ("m8n8", "m16n8"):
        for num in REGS:
            for trans in ("", ".trans"):
                for ty in (".b16", ".b8"):
                    out.append((f"stmatrix.sync.aligned.{shape}.{num}{trans}.shared{ty}",
                                REGS[num]))
    out += [("ldmatrix.sync.aligned.m16n16.x1.trans.shared::cta.b8", 2),
            ("ldmatrix.sync.aligned.x2.trans.m16n16.shared.b8x16.b4x16_p64", 4),
            ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b4x16_p64.b8x16", 2),
            ("ldmatrix.sync.aligned.m8n16.x4.shared::cta.b8x16.b6x16_p32", 4),
            ("ldmatrix.sync.aligned.m8n8.x4.global.b16", 4),
            ("stmatrix.sync.aligned.trans.m16n8.x4.shared::cta.b8", 4)]
    return out


def module(spelling: str, nregs: int, target: str, version: str) -> str:
    regs = "{" + ", ".join(f"%r{1 + i}" for i in range(nregs)) + "}"
    if spelling.startswith("ldmatrix"):
        body = f"{spelling} {regs}, [%r0];\n" + "".join(
            f"st.shared.b32 [%r0+{4 * i}], %r{1 + i};\n" for i in range(nregs))
    else:
        body = "".join(f"mov.u32 %r{1 + i}, {i};\n" for i in range(nregs)) + \
            f"{spelling} [%r0], {regs};\n"
    return (f".version {version}\n.target {target}\n.address_size 64\n\n"
            ".visible .entry k()\n{\n.reg .b32 %r<12>;\n.shared .align 16 .b8 sm[512];\n"
            f"mov.u32 %r0, sm;\n{body}ret;\n}}\n")


def probe(ptxas: str, spelling: str, nregs: int, target: str, version: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.ptx")
        with open(path, "w") as f:
            f.write(module(spelling, nregs, target, version))
        p = subprocess.run([ptxas, "-arch", target, path, "-o", os.devnull],
                           capture_output=True, text=True)
    errs = [ln.split("error", 1)[1].lstrip(" :") for ln in p.stderr.splitlines()
            if "error" in ln]
    return {"spelling": spelling, "regs": nregs, "target": target, "version": version,
            "accepted": p.returncode == 0, "error": errs[0] if errs else ""}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    jobs = [(s, n, t, v) for s, n in spellings() for t, v in TARGETS.items()]
    # the PTX ISA versions the 8-bit shapes and stmatrix need
    jobs += [(s, n, "sm_100a", v) for s, n in
             (("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8", 2),
              ("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64", 1),
              ("stmatrix.sync.aligned.m16n8.x1.trans.shared.b8", 1)) for v in ("8.5", "8.6")]
    jobs += [(s, 1, "sm_90", v) for s in ("stmatrix.sync.aligned.m8n8.x1.shared.b16",)
             for v in ("7.7", "7.8")]
    with ThreadPoolExecutor(a.jobs) as ex:
        recs = list(ex.map(lambda j: probe(a.ptxas, *j), jobs))
    version = subprocess.run([a.ptxas, "--version"], capture_output=True, text=True).stdout
    with open(a.out, "w") as f:
        f.write(json.dumps({"kind": "header", "ptxas_version": version.strip(),
                            "command": "python tools/matrix_probe.py --ptxas PTXAS --out "
                                       + a.out}) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    print(f"{sum(r['accepted'] for r in recs)} of {len(recs)} accepted -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
