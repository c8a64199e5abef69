#!/usr/bin/env python3
"""Ask ptxas (13.0, 13.5) which matrix multiply-accumulate spellings it takes, where, and what it says.

The spellings are written here from the PTX ISA 9.0 manual's syntax blocks (mma 9.7.14.5.14,
wgmma.mma_async 9.7.15.5.2, tcgen05.mma 9.7.16.10.9), independently of ptxfp's rows, with
operands of the right fragment sizes, plus misspellings (a layout or a type the form does not
take, a missing .aligned, a wrong wgmma N).  Each spelling is one line of a minimal kernel;
one file per (.version, .target) holds every line, and ptxas' per-line messages are recorded.

Output: tests/data/ptxas/mma.jsonl: a header (ptxas version, versions, targets, message
table), then one record per spelling: its line and, per (version, target) pair probed, the
indices of the messages ptxas printed for that line (deduplicated, sorted); the pairs where a
.version does not know the .target are left out.

Usage: python tools/mma_probe.py --out tests/data/ptxas [--jobs 2]
       python tools/mma_probe.py --out tests/data/ptxas/13.5 --ptxas .../13.5/ptxas
(13.5 and later: PTX 9.1-9.5 and the targets sm_103f/107a/107f/110f/121f are probed too)
(about 200 ptxas runs; a few minutes on two cores).  Exits 0 doing nothing without ptxas.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

VERSIONS = ["6.3", "6.4", "6.5", "7.0", "7.1", "7.8", "8.0", "8.4", "8.6", "8.7", "8.8", "9.0"]
#: target -> the -arch ptxas 13.0 is run with (it has no sm_70 back end)
TARGETS = {"sm_70": "sm_75", "sm_75": "sm_75", "sm_80": "sm_80", "sm_86": "sm_86",
           "sm_89": "sm_89", "sm_90": "sm_90", "sm_90a": "sm_90a", "sm_100": "sm_100",
           "sm_100a": "sm_100a", "sm_100f": "sm_100f", "sm_103a": "sm_103a",
           "sm_110a": "sm_110a", "sm_120": "sm_120", "sm_120a": "sm_120a", "sm_120f": "sm_120f",
           "sm_121a": "sm_121a"}
#: the lowest .version that knows each target (ptxas 13.0; tests/data/ptxas/targets.json)
TARGET_MIN = {"sm_70": "6.0", "sm_75": "6.3", "sm_80": "7.0", "sm_86": "7.1", "sm_89": "7.8",
              "sm_90": "7.8", "sm_90a": "8.0", "sm_100": "8.6", "sm_100a": "8.6",
              "sm_100f": "8.8", "sm_103a": "8.8", "sm_110a": "9.0", "sm_120": "8.7",
              "sm_120a": "8.7", "sm_120f": "8.8", "sm_121a": "8.8"}
#: what ptxas 13.5 adds (PTX ISA 9.1-9.5; tests/data/ptxas/13.5/targets.json): the versions
#: probed and the targets it knows beyond 13.0's (sm_107 from 9.4)
VERSIONS_13_5 = ["9.1", "9.2", "9.3", "9.4", "9.5"]
TARGETS_13_5 = {"sm_103f": "sm_103f", "sm_107a": "sm_107a", "sm_107f": "sm_107f",
                "sm_110f": "sm_110f", "sm_121f": "sm_121f"}
TARGET_MIN_13_5 = {"sm_103f": "8.8", "sm_107a": "9.4", "sm_107f": "9.4", "sm_110f": "9.0",
                   "sm_121f": "8.8"}

LINE_RE = re.compile(r"^ptxas (?P<file>.+?), line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")

DECLS = [(".b32", "r", 300), (".f32", "f", 300), (".f64", "g", 40), (".b64", "q", 8),
         (".pred", "p", 4), (".b16", "h", 8)]

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8,
        "e3m2": 8, "e2m3": 8, "e2m1": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1, "s32": 32}


class Regs:
    """Fresh register names per line (no register is read and written by one instruction)."""

    def __init__(self):
        self.n = {"r": 0, "f": 0, "g": 0}

    def take(self, kind, count):
        out = []
        for _ in range(count):
            out.append(f"{kind}{self.n[kind]}")
            self.n[kind] += 1
        return "{" + ", ".join(out) + "}"


def regs_of(ty, elems_per_thread, packed_bits=None):
    """(register kind, count) holding elems_per_thread elements of ty in one thread."""
    if ty == "f64":
        return "g", max(1, elems_per_thread)
    if ty == "f32":
        return "f", max(1, elems_per_thread)
    bits = packed_bits or BITS[ty]
    return "r", max(1, elems_per_thread * bits // 32)


def mma_line(shape, layouts, mods, types, stype=None, tail=""):
    m, n, k = shape
    d, a, b, c = types
    regs = Regs()
    mult = 4 if (m, n, k) == (8, 8, 4) and a == "f16" else 1
    abits = 4 if "kind::mxf4" in mods or "kind::mxf4nvf4" in mods else None
    da = regs.take(*regs_of(d, m * n * mult // 32))
    aa = regs.take(*regs_of(a, m * k * mult // 32, abits))
    bb = regs.take(*regs_of(b, k * n * mult // 32, abits))
    cc = regs.take(*regs_of(c, m * n * mult // 32))
    toks = ["mma", "sync", "aligned", f"m{m}n{n}k{k}"] + list(layouts) + list(mods) \
        + list(types) + ([stype] if stype else []) + ([tail] if tail else [])
    ops = [da, aa, bb, cc]
    if stype:
        ops += ["r290", "{0, 0}", "r291", "{0, 0}"]
    return ".".join(toks), ".".join(toks) + " " + ", ".join(ops) + ";"


def gen_mma():
    out = []
    F16 = ["f16", "f32"]
    for d in F16:
        for c in F16:
            for lay in [("row", "col"), ("col", "row"), ("row", "row"), ("col", "col")]:
                out.append(mma_line((8, 8, 4), lay, [], (d, "f16", "f16", c)))
            for shape in [(16, 8, 8), (16, 8, 16)]:
                out.append(mma_line(shape, ("row", "col"), [], (d, "f16", "f16", c)))
            out.append(mma_line((16, 8, 16), ("col", "col"), [], (d, "f16", "f16", c)))
    for shape in [(16, 8, 8), (16, 8, 16)]:
        out.append(mma_line(shape, ("row", "col"), [], ("f32", "bf16", "bf16", "f32")))
    out.append(mma_line((16, 8, 16), ("row", "col"), [], ("f16", "bf16", "bf16", "f16")))
    for shape in [(16, 8, 4), (16, 8, 8)]:
        out.append(mma_line(shape, ("row", "col"), [], ("f32", "tf32", "tf32", "f32")))
    for shape in [(16, 8, 16), (16, 8, 32)]:
        for a in ["e4m3", "e5m2"]:
            for b in ["e4m3", "e5m2"]:
                for d in F16:
                    for c in F16:
                        if d == "f32" or c == "f16":
                            out.append(mma_line(shape, ("row", "col"), [], (d, a, b, c)))
    out.append(mma_line((16, 8, 32), ("row", "col"), [], ("f16", "e4m3", "e4m3", "f32")))
    f8f6f4 = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]
    for a in f8f6f4:
        for b in f8f6f4:
            out.append(mma_line((16, 8, 32), ("row", "col"), ["kind::f8f6f4"],
                                ("f32", a, b, "f32")))
    out.append(mma_line((16, 8, 32), ("row", "col"), ["kind::f8f6f4"], ("f16", "e2m1", "e2m1", "f16")))
    for a in ["e4m3", "e2m1", "e3m2"]:
        for sv in [[], ["scale_vec::1X"]]:
            out.append(mma_line((16, 8, 32), ("row", "col"), ["kind::mxf8f6f4", "block_scale"] + sv,
                                ("f32", a, "e4m3", "f32"), "ue8m0"))
    out.append(mma_line((16, 8, 32), ("row", "col"), ["kind::mxf8f6f4", "block_scale", "scale_vec::2X"],
                        ("f32", "e4m3", "e4m3", "f32"), "ue8m0"))
    for sv in [[], ["scale_vec::2X"], ["scale_vec::4X"]]:
        out.append(mma_line((16, 8, 64), ("row", "col"), ["kind::mxf4", "block_scale"] + sv,
                            ("f32", "e2m1", "e2m1", "f32"), "ue8m0"))
        for st in ["ue8m0", "ue4m3"]:
            out.append(mma_line((16, 8, 64), ("row", "col"), ["kind::mxf4nvf4", "block_scale"] + sv,
                                ("f32", "e2m1", "e2m1", "f32"), st))
    for shape in [(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)]:
        out.append(mma_line(shape, ("row", "col"), [], ("f64", "f64", "f64", "f64")))
    out.append(mma_line((8, 8, 4), ("col", "row"), [], ("f64", "f64", "f64", "f64")))
    for shapes, tys in [([(8, 8, 16), (16, 8, 16), (16, 8, 32)], ["s8", "u8"]),
                        ([(8, 8, 32), (16, 8, 32), (16, 8, 64)], ["s4", "u4"])]:
        for shape in shapes:
            for a in tys:
                for b in tys:
                    for sat in [[], ["satfinite"]]:
                        out.append(mma_line(shape, ("row", "col"), sat, ("s32", a, b, "s32")))
    out.append(mma_line((16, 8, 16), ("row", "col"), [], ("s32", "s8", "s4", "s32")))
    for shape in [(8, 8, 128), (16, 8, 128), (16, 8, 256)]:
        for op in ["xor", "and"]:
            out.append(mma_line(shape, ("row", "col"), [], ("s32", "b1", "b1", "s32"), tail=f"{op}.popc"))
    out.append(mma_line((8, 8, 128), ("row", "col"), [], ("s32", "b1", "b1", "s32")))
    # misspellings: a missing .aligned, a shape the type lacks
    name, line = mma_line((16, 8, 16), ("row", "col"), [], ("f32", "bf16", "bf16", "f32"))
    out.append((name.replace(".aligned", ""), line.replace(".aligned", "")))
    out.append(mma_line((16, 8, 32), ("row", "col"), [], ("f32", "bf16", "bf16", "f32")))
    return out


def wgmma_line(n, k, dtype, atype, btype, mods=(), a_regs=False, tail=""):
    regs = Regs()
    kind = {"f32": "f", "f16": "r", "s32": "r"}[dtype]
    count = 64 * n * BITS[dtype] // 128 // 32
    d = regs.take(kind, count)
    a = regs.take("r", 64 * k * BITS[atype] // 128 // 32) if a_regs else "q0"
    toks = ["wgmma", "mma_async", "sync", "aligned", f"m64n{n}k{k}"] + list(mods) \
        + [dtype, atype, btype] + ([tail] if tail else [])
    ops = [d, a, "q1", "p0"]
    if atype in ("f16", "bf16"):
        ops += ["1", "1"] + ([] if a_regs else ["0"]) + ["0"]
    elif atype in ("tf32", "e4m3", "e5m2"):
        ops += ["1", "-1"]
    return ".".join(toks), ".".join(toks) + " " + ", ".join(ops) + ";"


WG_N = [8, 16, 24, 32, 40, 64, 72, 128, 136, 200, 256]


def gen_wgmma():
    out = []
    for n in WG_N:
        for d in ["f16", "f32"]:
            out.append(wgmma_line(n, 16, d, "f16", "f16"))
        out.append(wgmma_line(n, 16, "f32", "bf16", "bf16"))
        out.append(wgmma_line(n, 8, "f32", "tf32", "tf32"))
        out.append(wgmma_line(n, 32, "f32", "e4m3", "e5m2"))
        out.append(wgmma_line(n, 32, "s32", "s8", "u8"))
        out.append(wgmma_line(n, 256, "s32", "b1", "b1", tail="and.popc"))
    for a in ["e4m3", "e5m2"]:
        for b in ["e4m3", "e5m2"]:
            out.append(wgmma_line(8, 32, "f16", a, b))
    for a in ["s8", "u8"]:
        for b in ["s8", "u8"]:
            out.append(wgmma_line(16, 32, "s32", a, b, mods=["satfinite"]))
    out.append(wgmma_line(8, 16, "f16", "f16", "f16", a_regs=True))
    out.append(wgmma_line(64, 16, "f32", "bf16", "bf16", a_regs=True))
    out.append(wgmma_line(8, 8, "f32", "tf32", "tf32", a_regs=True))
    out.append(wgmma_line(8, 32, "f32", "e4m3", "e4m3", a_regs=True))
    out.append(wgmma_line(8, 32, "s32", "s8", "s8", a_regs=True))
    # misspellings: N not a multiple of 8, a bf16 result, b1 with .xor
    out.append(wgmma_line(12, 16, "f32", "f16", "f16"))
    out.append(wgmma_line(264, 16, "f32", "f16", "f16"))
    out.append(wgmma_line(8, 16, "f16", "bf16", "bf16"))
    out.append(wgmma_line(8, 256, "s32", "b1", "b1", tail="xor.popc"))
    return out


def tcgen05_lines():
    out = []
    for cg in (1, 2):
        lanes = "{r200, r201, r202, r203}" if cg == 1 else \
            "{r200, r201, r202, r203, r204, r205, r206, r207}"
        for kind in ["f16", "tf32", "f8f6f4", "i8"]:
            name = f"tcgen05.mma.cta_group::{cg}.kind::{kind}"
            out.append((name, f"{name} [r0], q0, q1, r1, p0;"))
            out.append((name + " (a-tmem, lanes)", f"{name} [r0], [r2], q1, r1, {lanes}, p0;"))
        for kind, svs in [("mxf8f6f4", ["", "scale_vec::1X", "scale_vec::2X"]),
                          ("mxf4", ["", "scale_vec::2X", "scale_vec::4X"]),
                          ("mxf4nvf4", ["", "scale_vec::2X", "scale_vec::4X", "block16", "block32"])]:
            for sv in svs:
                name = f"tcgen05.mma.cta_group::{cg}.kind::{kind}.block_scale" + (f".{sv}" if sv else "")
                out.append((name, f"{name} [r0], q0, q1, r1, [r2], [r3], p0;"))
    return out


def line_for(spelling):
    """A probe line (operands of the right sizes) for any matrix spelling: mma.sync and
    wgmma as written, tcgen05.mma without ptxfp's descriptor shape and types."""
    toks = spelling.split(".")
    shape = next((t for t in toks if re.fullmatch(r"m\d+n\d+k\d+", t)), None)
    if toks[0] == "tcgen05":
        if shape:
            toks = toks[:toks.index(shape)]
        name = ".".join(toks)
        scaled = "block_scale" in toks
        return f"{name} [r0], q0, q1, r1, " + ("[r2], [r3], " if scaled else "") + "p0;"
    m, n, k = (int(x) for x in re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape).groups())
    i = toks.index(shape)
    rest = toks[i + 1:]
    if toks[0] == "wgmma":
        mods = [t for t in rest if t not in BITS]
        tys = [t for t in rest if t in BITS]
        tail = ".".join(t for t in mods if t in ("xor", "and", "popc"))
        mods = [t for t in mods if t not in ("xor", "and", "popc")]
        return wgmma_line(n, k, tys[0], tys[1], tys[2], mods=mods, tail=tail)[1]
    lays = [t for t in rest if t in ("row", "col")]
    tys = [t for t in rest if t in BITS]
    stype = next((t for t in rest if t in ("ue8m0", "ue4m3")), None)
    tail = ".".join(t for t in rest if t in ("xor", "and", "popc"))
    mods = [t for t in rest if t not in BITS and t not in ("row", "col", "ue8m0", "ue4m3",
                                                           "xor", "and", "popc")]
    return mma_line((m, n, k), lays, mods, tuple(tys), stype, tail)[1]


def make_ptx(lines, version, target):
    head = [f".version {version}", f".target {target}", ".address_size 64",
            ".visible .entry probe()", "{"]
    head += [f".reg {ty} {p}<{n}>;" for ty, p, n in DECLS]
    return "\n".join(head + lines + ["ret;", "}", ""]), len(head) + 1


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def run(ptxas, lines, version, target, workdir):
    text, first = make_ptx(lines, version, target)
    fd, path = tempfile.mkstemp(suffix=".ptx", dir=workdir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        r = subprocess.run([ptxas, "-arch", TARGETS[target], path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)
    per = {}
    for ln in (r.stdout + r.stderr).splitlines():
        m = LINE_RE.match(ln)
        if m and m["sev"] == "error":
            i = int(m["line"]) - first
            if 0 <= i < len(lines):
                per.setdefault(i, set()).add(m["msg"].strip())
    return per


def all_lines():
    return gen_mma() + gen_wgmma() + tcgen05_lines()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/data/ptxas")
    ap.add_argument("--ptxas", default=shutil.which("ptxas"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if not args.ptxas:
        print("ptxas not found: nothing recorded")
        return 0
    ver = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.strip()
    rel = re.search(r"release (\d+)\.(\d+)", ver)
    if rel and (int(rel[1]), int(rel[2])) >= (13, 5):     # the grid of the newer release
        VERSIONS.extend(VERSIONS_13_5)
        TARGETS.update(TARGETS_13_5)
        TARGET_MIN.update(TARGET_MIN_13_5)
    probes = all_lines()
    lines = [ln for _, ln in probes]
    pairs = [(v, t) for t in TARGETS for v in VERSIONS if vkey(v) >= vkey(TARGET_MIN[t])]
    with tempfile.TemporaryDirectory() as wd, ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(lambda p: run(args.ptxas, lines, p[0], p[1], wd), pairs))
    table: dict[str, int] = {}
    recs = []
    for i, (name, line) in enumerate(probes):
        res = {}
        for (v, t), per in zip(pairs, results):
            res[f"{v}|{t}"] = sorted(table.setdefault(m, len(table)) for m in per.get(i, ()))
        recs.append({"spelling": name.split(" ")[0], "line": line, "at": res})
    header = {"kind": "header", "ptxas_version": ver, "command": "python tools/mma_probe.py",
              "versions": VERSIONS, "targets": list(TARGETS), "arch_of_target": TARGETS,
              "decls": DECLS, "messages": list(table)}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "mma.jsonl")
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"{len(recs)} spellings x {len(pairs)} (.version, .target) pairs -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
