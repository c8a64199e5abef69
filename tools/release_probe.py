#!/usr/bin/env python3
"""Run one small PTX module per 13.0 -> 13.5 difference under every ptxas 13.x release, and
write what each release says: tests/data/ptxas/releases_13x.json.

docs/ptxas-findings.md ("ptxas 13.5") lists what ptxas 13.5 decides differently from 13.0;
each difference is modeled as data tagged with the first release that decides the new way
(ptx/releases.py, ptx/opcodes.py ``SINCE``/``MODIFIERS_SINCE``/``AFTER_SINCE``, rows'
``per_release``/``CLASSES_SINCE``, isa/sfu.py ``TWO_PI``, isa/cvt_small.py, isa/mma.py).  The
probes here are one module per difference (and per side of it: the .version just below and at
a bound), so that the record says in which release each one changed.

    python tools/release_probe.py --ptxas 13.0=/usr/local/bin/ptxas \\
        --ptxas 13.1=/tmp/nvcc13x/13.1/nvidia/cu13/bin/ptxas ... \\
        --out tests/data/ptxas/releases_13x.json

The ptxas binaries come from the ``nvidia-cuda-nvcc`` wheels on PyPI (13.1.115, 13.2.86,
13.3.73, 13.4.92, 13.5.37; ``pip download --no-deps``, the wheel is a zip with
``nvidia/cu13/bin/ptxas``).  Each module is assembled with ``-arch <its .target>`` where the
release's ``--help`` lists that value, else with no ``-arch`` (a release that does not know
the target then says so about the ``.target`` line).  The record keeps each module's text and,
per release, ptxas' exit status and its messages as ``[line, severity, text]`` (line 0: none),
the file name and the "aborted" line left out.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DECLS = ((".b32", "r"), (".f32", "f"), (".f64", "g"), (".b64", "q"), (".pred", "p"),
         (".b16", "h"), (".u16", "uh"), (".b8", "bb"))

LINE_RE = re.compile(r"^ptxas (?P<file>.+?), line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")
GLOBAL_RE = re.compile(r"^ptxas (?P<sev>\w+)\s*: (?P<msg>.*)$")


def module(version: str, target: str, lines: tuple[str, ...] = ()) -> str:
    head = [f".version {version}", f".target {target}", ".address_size 64",
            ".visible .entry probe()", "{"]
    if lines:
        head += [f".reg {ty} {p}<8>;" for ty, p in DECLS]
    return "\n".join(head + list(lines) + ["ret;", "}", ""])


#: the instruction names ptxas 13.5 knows and 13.0 does not (ptx/opcodes.py "ptxas-13.5")
NAMES = """clmad.hi clmad.lo fabric.submit fabric.submit.commit_group fabric.try_atom.async
fabric.try_get.async fabric.try_get.async.tensor fabric.try_pullred.async fabric.try_put.async
fabric.try_put.async.tensor fabric.try_red.async fabric.try_red.async.tensor fabric.wait
mbarrier.check_layout multimem.cp.async.bulk multimem.cp.reduce.async.bulk spdecompress
tensormap.query.alloc_class_large trace.mark""".split()


def probes() -> list[dict]:
    """(name, what it shows, key, module text), one per side of each difference.  ``key``: a
    regular expression where only one fact of the messages is the difference (a name ptxas
    does not know, a modifier token it does not know, a token it cannot parse): the test holds
    check() to whether some message matches it; None: to the messages themselves."""
    out: list[dict] = []

    def add(name: str, what: str, version: str, target: str, *lines: str,
            key: str | None = None) -> None:
        out.append({"name": name, "what": what, "key": key,
                    "ptx": module(version, target, lines)})

    # the newest .version each release takes
    for v in ("9.0", "9.1", "9.2", "9.3", "9.4", "9.5"):
        add(f"version {v}", "newest PTX ISA version", v, "sm_90")
    # targets: 13.5's lowest .version and the one below it
    below = {"7.3": "7.2", "8.6": "8.5", "8.7": "8.6", "8.8": "8.7", "9.0": "8.8", "9.4": "9.3"}
    for t, lo in (("sm_88", "9.0"), ("sm_100f", "8.8"), ("sm_103", "8.8"),
                  ("sm_103a", "8.8"), ("sm_103f", "8.8"), ("sm_107", "9.4"), ("sm_107a", "9.4"),
                  ("sm_107f", "9.4"), ("sm_110", "9.0"), ("sm_110a", "9.0"), ("sm_110f", "9.0"),
                  ("sm_120f", "8.8"), ("sm_121", "8.8"), ("sm_121a", "8.8"), ("sm_121f", "8.8")):
        add(f"target {t} at {below[lo]}", "lowest .version of a target", below[lo], t)
        add(f"target {t} at {lo}", "lowest .version of a target", lo, t)
    add("target sm_88 at 7.3", "lowest .version of a target (13.0: 7.3)", "7.3", "sm_88")
    add("target sm_88 at 8.8", "lowest .version of a target (13.0: 7.3)", "8.8", "sm_88")
    # instruction names (opcodes.SINCE): each name bare
    for n in NAMES:
        add(f"name {n}", "instruction name (opcodes.SINCE)", "9.0", "sm_100a", f"{n};",
            key="Not a name of any known instruction")
    # modifier tokens (opcodes.MODIFIERS_SINCE), each after membar (which check() does not
    # compute: opcodes.known_modifier decides; nanosleep for .proxy::readonly, which membar
    # reads as its own .proxy); .bulk_group after
    # applypriority (AFTER_SINCE)
    for t in ("multimem", "fabric", "exclusive", "s2f6x2", "L1::32B", "proxy::readonly",
              "alloc_small", "alloc_same", "alloc_large", "ignore_oob", "b4"):
        add(f"modifier .{t}", "modifier token (opcodes.MODIFIERS_SINCE)", "9.0", "sm_100a",
            f"membar.{t}.gl;" if t != "proxy::readonly" else f"nanosleep.{t}.u32 r0;", key=f"Unknown modifier '\\.{t}'")
    add("modifier .bulk_group after applypriority", "opcodes.AFTER_SINCE", "9.0", "sm_100a",
        "applypriority.bulk_group.global.L2::evict_normal [q0], 128;",
        key="Unknown modifier '\\.bulk_group'|Parsing error")
    # .2pi (isa/sfu.py TWO_PI, releases.UNREAD)
    for v in ("9.0", "9.4", "9.5"):
        add(f".2pi at {v}", "sin/cos .2pi (TWO_PI, UNREAD)", v, "sm_90",
            "sin.approx.ftz.2pi.f32 f0, f1;", key="Parsing error near 'pi'")
    add(".2pi without .ftz at 9.0", "sin/cos .2pi (TWO_PI, UNREAD)", "9.0", "sm_90",
        "cos.approx.2pi.f32 f0, f1;", key="Parsing error near 'pi'")
    # words: cvt's fp8/fp6/fp4 forms per form (isa/cvt_small.py _worded)
    add("cvt e2m1x2.f32 at 8.5", "cvt_small per-form words", "8.5", "sm_100a",
        "cvt.rn.satfinite.e2m1x2.f32 bb0, f0, f1;")
    add("cvt f16x2.e2m1x2 on sm_90", "cvt_small per-form words", "9.0", "sm_90",
        "cvt.rn.f16x2.e2m1x2 r0, bb0;")
    add("cvt e4m3x2.f32 at 7.7", "cvt_small per-form words", "7.7", "sm_90",
        "cvt.rn.satfinite.e4m3x2.f32 h0, f0, f1;")
    add("cvt e4m3x2.f32 on sm_80", "cvt_small per-form words", "8.0", "sm_80",
        "cvt.rn.satfinite.e4m3x2.f32 h0, f0, f1;")
    add("cvt e3m2x2.f32 at 8.5", "cvt_small per-form words", "8.5", "sm_100a",
        "cvt.rn.satfinite.e3m2x2.f32 h0, f0, f1;")
    # cvt.rn.satfinite.e2m1x2.f16x2: 13.0 from 8.6, 13.5 from 9.1
    for v in ("9.0", "9.1"):
        add(f"cvt e2m1x2.f16x2 at {v}", "cvt e2m1x2.f16x2 bound", v, "sm_100a",
            "cvt.rn.satfinite.e2m1x2.f16x2 bb0, r0;")
    # the new small-float cvt forms
    for sm in ("e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "s2f6x2", "ue8m0x2"):
        reg = "bb0" if sm == "e2m1x2" else "h0"
        add(f"cvt bf16x2.{sm} at 9.1", "new cvt forms (.bf16x2)", "9.1", "sm_100a",
            f"cvt.rn.bf16x2.{sm} r0, {reg};")
    add("cvt bf16x2.e4m3x2 at 9.0", "new cvt forms (.bf16x2)", "9.0", "sm_100a",
        "cvt.rn.bf16x2.e4m3x2 r0, h0;")
    add("cvt .rz e4m3x2.f32 at 9.0", "cvt .rz on sm_107a/f", "9.0", "sm_100a",
        "cvt.rz.satfinite.e4m3x2.f32 h0, f0, f1;")
    for v in ("9.1", "9.2"):
        add(f"cvt e4m3x2.bf16x2 at {v}", "new cvt forms (.bf16x2)", v, "sm_100a",
            "cvt.rn.satfinite.e4m3x2.bf16x2 h0, r0;")
        add(f"cvt bf16x2.e4m3x2 at {v}", "new cvt forms (.bf16x2)", v, "sm_100a",
            "cvt.rn.bf16x2.e4m3x2 r0, h0;")
        add(f"cvt s2f6x2.f32 at {v}", "new cvt forms (.s2f6x2)", v, "sm_100a",
            "cvt.rn.satfinite.s2f6x2.f32 h0, f0, f1;")
    add("cvt .rz e4m3x2.f32 on sm_107a", "cvt .rz on sm_107a/f", "9.4", "sm_107a",
        "cvt.rz.satfinite.e4m3x2.f32 h0, f0, f1;")
    add("cvt .rz e2m1x2.f32 on sm_100a", "cvt .rz on sm_107a/f", "9.1", "sm_100a",
        "cvt.rz.satfinite.e2m1x2.f32 bb0, f0, f1;")
    add("cvt .rz s2f6x2.f32 on sm_100a", "cvt .rz on sm_107a/f", "9.1", "sm_100a",
        "cvt.rz.satfinite.s2f6x2.f32 h0, f0, f1;")
    add("cvt .rz e4m3x2.f32 on sm_100a", "cvt .rz on sm_107a/f", "9.1", "sm_100a",
        "cvt.rz.satfinite.e4m3x2.f32 h0, f0, f1;")
    # .satfinite on add/mul (releases.REWORDED)
    add("add.satfinite.f16", "words (REWORDED)", "9.0", "sm_90", "add.satfinite.f16 h0, h1, h2;")
    add("mul.satfinite.f16", "words (REWORDED)", "9.0", "sm_90", "mul.satfinite.f16 h0, h1, h2;")
    # the .bf16 source of the mixed forms (rows.CLASSES_SINCE)
    add("add.f32.bf16 .u16 register", "mixed .bf16 operand (CLASSES_SINCE)", "9.0", "sm_100",
        "add.f32.bf16 f0, uh0, f1;")
    add("add.f32.bf16 immediate", "mixed .bf16 operand (CLASSES_SINCE)", "9.0", "sm_100",
        "add.f32.bf16 f0, 1, f1;")
    # mma.sync mxf4nvf4 .scale_vec::4X with .ue8m0 (isa/mma.py)
    mma = ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1"
           ".e2m1.f32.ue8m0 {f0, f1, f2, f3}, {r0, r1, r2, r3}, {r4, r5}, {f4, f5, f6, f7}, r6, "
           "{0, 0}, r7, {0, 0};")
    for v in ("9.0", "9.1"):
        add(f"mma scale_vec::4X ue8m0 at {v}", "mma ue8m0 scale_vec::4X (rows.illegal)", v,
            "sm_120a", mma)
    # tcgen05.mma's default scale vector (rows.per_ptx)
    for kind in ("mxf4", "mxf8f6f4"):
        for v in ("8.6", "8.7", "8.8"):
            add(f"tcgen05.mma kind::{kind} default scale_vec at {v}",
                "tcgen05 default scale vector (per_ptx)", v, "sm_100",
                f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale [r0], q0, q1, r1, [r2], [r3],"
                " p0;")
    return out


def allowed_archs(ptxas: str) -> set[str]:
    r = subprocess.run([ptxas, "--help"], capture_output=True, text=True)
    m = re.search(r"--gpu-name.*?Allowed values for this option:(.*?)Default value", r.stdout,
                  re.S)
    return set(re.findall(r"'([^']+)'", m.group(1))) if m else set()


def run(ptxas: str, text: str, archs: set[str], tmp: str) -> dict:
    target = re.search(r"^\.target (\S+)", text, re.M).group(1)
    path = os.path.join(tmp, "probe.ptx")
    with open(path, "w") as f:
        f.write(text)
    arch = target if target in archs else None
    cmd = [ptxas] + (["-arch", arch] if arch else []) + [path, "-o", os.devnull]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    msgs = []
    for raw in (r.stdout + r.stderr).splitlines():
        m = LINE_RE.match(raw.rstrip())
        if m:
            msgs.append([int(m.group("line")), m.group("sev"), m.group("msg")])
            continue
        m = GLOBAL_RE.match(raw.rstrip())
        if m and m.group("msg") != "Ptx assembly aborted due to errors":
            msgs.append([0, m.group("sev"), m.group("msg")])
    return {"rc": r.returncode, "arch": arch, "messages": msgs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptxas", action="append", required=True, metavar="RELEASE=PATH")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    rels = dict(a.split("=", 1) for a in args.ptxas)
    env = {}
    for name, path in rels.items():
        ver = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        lv = subprocess.run([path, "--list-version"], capture_output=True, text=True).stdout
        env[name] = {"version": ver.strip().splitlines()[-2:],
                     "list_version": lv.split(), "archs": sorted(allowed_archs(path))}
    ps = probes()
    with tempfile.TemporaryDirectory() as tmp:
        for p in ps:
            p["ptxas"] = {}
            for name, path in rels.items():
                p["ptxas"][name] = run(path, p["ptx"], set(env[name]["archs"]), tmp)
            print(p["name"], {n: (r["rc"], r["messages"][:1]) for n, r in p["ptxas"].items()},
                  file=sys.stderr)
    for e in env.values():
        e["archs"] = [a for a in e["archs"] if a.startswith("sm_")]
    with open(args.out, "w") as f:
        json.dump({"command": "python tools/release_probe.py " + " ".join(
            f"--ptxas {n}=ptxas-{n}" for n in rels) + f" --out {args.out}",
            "releases": env, "probes": ps}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
