#!/usr/bin/env python3
"""Record ptxas' decisions on the spellings of the ops families (cvtx, compare, fops, f64, int).

For every canonical spelling of those families (a seeded sample of the setp/set product), and
for a set of near-miss spellings (each legal spelling with one modifier or rounding of another
row added, or its rounding dropped), one instruction line per spelling goes into batch PTX files
with registers of the operands' types; ptxas' per-line errors say which lines it rejects and
why.  Each spelling is run at (.version 9.0, .target sm_90) and, for rows with requirements,
at (7.0, sm_80) too.  Output: tests/data/ptxas/ops_spellings.jsonl, one record per spelling:
{"spelling", "at": [version, target], "ok": bool, "errors": [ptxas' messages]}.

tests/test_ops_ptxas.py holds ptxfp.parse (and the rows' requirement messages) to it.

Usage: python tools/ops_probe.py [--out tests/data/ptxas/ops_spellings.jsonl] [--ptxas PATH]
Takes about a minute; exits 0 doing nothing when ptxas is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import ptxfp  # noqa: E402
from ptxfp import isa  # noqa: E402
from ptxfp.errors import SpellingError  # noqa: E402

FAMILIES = ("cvtx", "compare", "fops", "f64", "int")
LINE_RE = re.compile(r"^ptxas .+?, line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")
#: register declaration of each operand type (ptxas has no .f16/.bf16 registers before 4.2)
DECL = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}


def _reg_types() -> list[str]:
    return ["pred", "b8", "u8", "s8", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32",
            "s64", "f32", "f64"]


def _line(spelling: str, operand_types: list[str]) -> str:
    regs = [f"%r_{DECL.get(t, t)}_{i}" for i, t in enumerate(operand_types)]
    if spelling.split(".")[0] == "lop3" and len(regs) == 5:
        regs[4] = "0x96"                       # the truth table is an immediate
    return f"{spelling} {', '.join(regs)};"


PTXAS = "ptxas"


def _run(items: list[tuple[str, list[str]]], version: str, target: str) -> dict[str, list[str]]:
    head = [f".version {version}", f".target {target}", ".address_size 64",
            ".visible .entry k() {"]
    for t in _reg_types():
        head.append(f".reg .{t} %r_{t}_<8>;")
    lines = head + [_line(s, ts) for s, ts in items] + ["ret;", "}"]
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        r = subprocess.run([PTXAS, f"-arch={target}", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    errs: dict[str, list[str]] = {s: [] for s, _ in items}
    first = len(head) + 1
    for ln in r.stderr.splitlines():
        m = LINE_RE.match(ln)
        if m and m.group("sev") == "error":
            k = int(m.group("line")) - first
            if 0 <= k < len(items):
                errs[items[k][0]].append(m.group("msg").strip())
    return errs


def _types_of(spelling: str) -> list[str] | None:
    try:
        ins = ptxfp.parse(spelling)
        return [o.type for o in ins.row.operands]
    except SpellingError:
        return None


def spellings(seed: int = 25) -> tuple[list[str], list[tuple[str, list[str]]]]:
    rng = random.Random(seed)
    legal: list[str] = []
    for fam in FAMILIES:
        sp = isa.canonical_spellings(fam)
        if fam == "compare":
            sp = [s for s in sp if s.startswith(("setp", "selp"))] + rng.sample(
                [s for s in sp if s.startswith("set.")], 500)
        legal += sp
    # near misses: a legal spelling with a foreign modifier or rounding, or without its rounding
    extra = ["ftz", "sat", "rn", "rni", "rz", "NaN", "lo", "hi", "wide", "shiftamt", "and",
             "equ", "relu"]
    misses: list[tuple[str, list[str]]] = []
    for s in rng.sample(legal, 300):
        ins = ptxfp.parse(s)
        ts = [o.type for o in ins.row.operands]
        tok = rng.choice(extra)
        op, rest = s.split(".", 1)
        cand = f"{op}.{tok}.{rest}"
        if cand.split(".")[1:].count(tok) == 1:
            misses.append((cand, _types_of(cand) or ts))
        if ins.rounding_explicit:
            misses.append((".".join(t for t in s.split(".") if t != ins.rounding), ts))
    return legal, misses


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join("tests", "data", "ptxas", "ops_spellings.jsonl"))
    ap.add_argument("--ptxas", default="ptxas", help="the ptxas binary (default: from PATH)")
    a = ap.parse_args()
    global PTXAS
    PTXAS = a.ptxas
    if shutil.which(PTXAS) is None:
        print("ptxas not found: nothing recorded")
        return 0
    legal, misses = spellings()
    items = [(s, [o.type for o in ptxfp.parse(s).row.operands]) for s in legal] + misses
    items = list(dict(items).items())
    records = []
    for version, target in (("9.0", "sm_90"), ("7.0", "sm_80")):
        batch = items if version == "9.0" else [
            (s, t) for s, t in items if _types_of(s) is not None and ptxfp.parse(s).row.requires]
        res: dict[str, list[str]] = {}
        for i in range(0, len(batch), 400):
            res.update(_run(batch[i:i + 400], version, target))
        for s, _ in batch:
            records.append({"spelling": s, "at": [version, target], "ok": not res[s],
                            "errors": res[s]})
    ver = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    with open(a.out, "w") as f:
        f.write(json.dumps({"ptxas": ver.strip().splitlines()[-1], "tool": "tools/ops_probe.py",
                            "records": len(records)}) + "\n")
        for r in records:
            f.write(json.dumps(r) + "\n")
    bad = sum(1 for r in records if not r["ok"] and r["at"][0] == "9.0"
              and _types_of(r["spelling"]) is not None)
    print(f"{len(records)} records, {bad} legal-by-ptxfp spellings that ptxas rejects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
