#!/usr/bin/env python3
"""Ask ptxas which half-precision instruction spellings are legal, where, and with which messages.

Generates PTX files with thousands of instruction lines each (one spelling per line inside one
.entry), runs them through ptxas for every (.version, .target) of interest, parses ptxas' per-line
diagnostics (``ptxas FILE, line N; error   : MSG``) and condenses the results per spelling into

  * the messages that do not depend on .version/.target ("errors": syntax, modifiers, operands),
  * the messages that appear only below some .version ("version_msgs", each with "below"),
  * the messages that appear only on some .targets ("target_msgs", each with "below" when the
    rejected targets are exactly those with a lower SM number, else an explicit "rejects" list),
  * and, for spellings legal somewhere, the minimum .version / .target (and accepting targets).

The condensed model (messages(v, t) = `sequence` with the version/target messages whose
condition does not hold at (v, t) left out) is then checked against ptxas on the full (.version x .target) cross product for every spelling
that is legal somewhere plus a seeded sample of the others; mismatches are recorded.

Outputs (in --out):
  spellings.jsonl  header record + one record per spelling
  operands.jsonl   header record + one record per operand-kind probe (register types, immediates,
                   operand counts)
  targets.json     ptxas version, known .versions/.targets, -arch used per .target, which
                   (.version, .target) pairs ptxas accepts, and the file-level messages.

Usage:  python tools/ptxas_probe.py --out tests/data/ptxas [--ptxas PATH] [--jobs N] [--quick]
Exits 0 with a message (doing nothing) if ptxas cannot be found.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool

PTXAS = "ptxas"  # replaced by main()

# --------------------------------------------------------------------------------------------
# ptxas driver
# --------------------------------------------------------------------------------------------

LINE_RE = re.compile(r"^ptxas (?P<file>.+?), line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")
GLOBAL_RE = re.compile(r"^ptxas (?P<sev>\w+)\s*: (?P<msg>.*)$")

# Register declarations.  Only plain 16/32/64-bit kinds are declared in spelling batches so that
# no declaration itself needs a newer .version/.target (".reg .f16x2" needs 4.2 / sm_53).
BASE_DECLS = [
    (".b16", "h"), (".b32", "r"), (".f32", "f"), (".f64", "g"), (".b64", "q"),
]
OPERAND_DECLS = BASE_DECLS + [
    (".f16", "x"), (".f16x2", "y"), (".u16", "uh"), (".s16", "sh"), (".u32", "ur"),
    (".s32", "sr"), (".u64", "uq"), (".pred", "p"), (".b8", "bb"),
]


def make_ptx(lines, version, target, decls):
    head = [f".version {version}", f".target {target}", ".address_size 64",
            ".visible .entry probe()", "{"]
    head += [f".reg {ty} {pfx}<4>;" for ty, pfx in decls]
    first = len(head) + 1  # 1-based line number of the first instruction
    return "\n".join(head + list(lines) + ["ret;", "}", ""]), first


def run_ptxas(src, arch, workdir):
    fd, path = tempfile.mkstemp(suffix=".ptx", dir=workdir)
    with os.fdopen(fd, "w") as f:
        f.write(src)
    cmd = [PTXAS] + (["-arch", arch] if arch else []) + [path, "-o", os.devnull]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    return r.returncode, (r.stdout + r.stderr).replace(path, "FILE.ptx")


def parse_output(out):
    """-> (per_line: {lineno: [(sev, msg)]}, global_msgs: [(sev, msg)])"""
    per, glob = {}, []
    for raw in out.splitlines():
        raw = raw.rstrip()
        m = LINE_RE.match(raw)
        if m:
            per.setdefault(int(m.group("line")), []).append((m.group("sev"), m.group("msg")))
            continue
        m = GLOBAL_RE.match(raw)
        if m:
            if m.group("msg") == "Ptx assembly aborted due to errors":
                continue
            glob.append((m.group("sev"), m.group("msg")))
        elif raw.strip():
            glob.append(("other", raw.strip()))
    return per, glob


def run_batch(lines, version, target, arch, decls=BASE_DECLS, workdir=None):
    """Run many instruction lines in one file.

    Returns (results, file_msgs, anomalies): results[i] = list of "sev: msg"-less message
    strings (errors) with non-error severities prefixed ("warning: ..."); file_msgs = messages on
    header lines or without a line.  A line with a *fatal* message stops ptxas, so such a line is
    taken out, run on its own, and the batch is run again without it.
    """
    n = len(lines)
    results = [None] * n
    todo = list(range(n))
    lone = []
    file_msgs = []
    anomalies = []
    while todo:
        src, first = make_ptx([lines[i] for i in todo], version, target, decls)
        rc, out = run_ptxas(src, arch, workdir)
        per, glob = parse_output(out)
        fatal_at = [ln for ln, ms in per.items()
                    if first <= ln < first + len(todo) and any(s == "fatal" for s, _ in ms)]
        if fatal_at:
            bad = {todo[ln - first] for ln in fatal_at}
            lone.extend(sorted(bad))
            todo = [i for i in todo if i not in bad]
            continue
        for k, i in enumerate(todo):
            results[i] = [fmt(s, m) for s, m in per.get(first + k, [])]
        file_msgs = sorted({fmt(s, m) for ln, ms in per.items()
                            if not (first <= ln < first + len(todo)) for s, m in ms}
                           | {fmt(s, m) for s, m in glob})
        clean = [i for i in todo if not results[i]]
        if rc != 0 and not any(results[i] for i in todo) and not file_msgs:
            anomalies.append(f"rc={rc} without messages")
        # Confirm pass: a batch with errors never reaches code generation, so the clean lines
        # are compiled again on their own and must produce nothing.
        if clean and len(clean) < len(todo):
            src2, first2 = make_ptx([lines[i] for i in clean], version, target, decls)
            rc2, out2 = run_ptxas(src2, arch, workdir)
            per2, glob2 = parse_output(out2)
            for k, i in enumerate(clean):
                extra = [fmt(s, m) for s, m in per2.get(first2 + k, [])]
                if extra:
                    results[i] = extra
                    anomalies.append(f"confirm pass added messages to line {lines[i]!r}")
            g2 = {fmt(s, m) for ln, ms in per2.items()
                  if not (first2 <= ln < first2 + len(clean)) for s, m in ms} | \
                 {fmt(s, m) for s, m in glob2}
            if rc2 != 0 and not g2 - set(file_msgs) and not any(per2.values()):
                anomalies.append(f"confirm pass rc={rc2} without messages")
        break
    for i in lone:
        src, first = make_ptx([lines[i]], version, target, decls)
        rc, out = run_ptxas(src, arch, workdir)
        per, glob = parse_output(out)
        results[i] = [fmt(s, m) for s, m in per.get(first, [])]
    return results, file_msgs, anomalies


def fmt(sev, msg):
    return msg if sev == "error" else f"{sev}: {msg}"


# --------------------------------------------------------------------------------------------
# versions and targets
# --------------------------------------------------------------------------------------------

def vkey(v):
    a, b = v.split(".")
    return (int(a), int(b))


TARGET_RE = re.compile(r"^sm_(\d+)([af]?)$")


def tkey(t):
    m = TARGET_RE.match(t)
    return (int(m.group(1)), m.group(2))


def tnum(t):
    return tkey(t)[0]


def list_versions():
    r = subprocess.run([PTXAS, "--list-version"], capture_output=True, text=True)
    return [v.strip() for v in r.stdout.split() if re.match(r"^\d+\.\d+$", v.strip())]


def allowed_archs():
    r = subprocess.run([PTXAS, "--help"], capture_output=True, text=True)
    txt = r.stdout
    m = re.search(r"--gpu-name.*?Allowed values for this option:(.*?)Default value:\s*'([^']+)'",
                  txt, re.S)
    if not m:
        return [], None
    vals = re.findall(r"'([^']+)'", m.group(1))
    return vals, m.group(2)


TRIVIAL = ["mov.b32 r0, 0;"]

CANDIDATE_TARGETS = [f"sm_{n}{s}" for n in
                     (10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 73,
                      75, 80, 82, 86, 87, 88, 89, 90, 100, 101, 102, 103, 107, 110, 120, 121, 122,
                      130)
                     for s in ("", "a", "f")]
CANDIDATE_VERSIONS_EXTRA = ["3.2", "4.4", "5.2", "6.6", "7.9", "8.9", "9.1", "9.6", "10.0"]


def probe_environment(workdir, log):
    env = {}
    vr = subprocess.run([PTXAS, "--version"], capture_output=True, text=True)
    env["ptxas_version"] = vr.stdout.strip()
    env["ptxas_path"] = PTXAS
    versions = list_versions()
    env["list_version"] = versions
    archs, default_arch = allowed_archs()
    env["gpu_name_allowed"] = archs
    env["gpu_name_default"] = default_arch
    vmax = max(versions, key=vkey)
    sm_archs = sorted([a for a in archs if TARGET_RE.match(a)], key=tkey)

    # -arch values that are not allowed: the message
    env["arch_rejected_examples"] = {}
    for a in ("sm_50", "sm_53", "sm_70", "sm_101", "sm_99"):
        if a in archs:
            continue
        src, _ = make_ptx(TRIVIAL, vmax, "sm_75", BASE_DECLS)
        rc, out = run_ptxas(src, a, workdir)
        env["arch_rejected_examples"][a] = out.strip().splitlines()

    # which .target names are known, and which -arch can compile each
    targets = {}
    for t in CANDIDATE_TARGETS:
        info = {}
        cands = []
        if t in archs:
            cands.append(t)
        n, suf = tkey(t)
        # same-suffix archs at or above, then plain archs at or above (help text rules)
        cands += [a for a in sm_archs if tkey(a)[0] >= n and tkey(a)[1] == suf and a not in cands]
        cands += [a for a in sm_archs if tkey(a)[0] >= n and a not in cands]
        tried = []
        for a in cands[:6]:
            src, _ = make_ptx(TRIVIAL, vmax, t, BASE_DECLS)
            rc, out = run_ptxas(src, a, workdir)
            msgs = [fmt(s, m) for s, m in sum(parse_output(out)[0].values(), [])] + \
                   [fmt(s, m) for s, m in parse_output(out)[1]]
            tried.append({"arch": a, "rc": rc, "msgs": msgs})
            if rc == 0:
                info["arch"] = a
                break
            if any("Unsupported .target" in m for m in msgs):
                break
        info["known"] = "arch" in info
        if not info["known"]:
            info["tried"] = tried
        # what the default -arch (no option) says
        src, _ = make_ptx(TRIVIAL, vmax, t, BASE_DECLS)
        rc, out = run_ptxas(src, None, workdir)
        per, glob = parse_output(out)
        info["no_arch_option"] = {"rc": rc, "msgs": [fmt(s, m) for s, m in
                                                     sum(per.values(), []) + glob]}
        targets[t] = info
        log(f"  target {t}: {'arch ' + info['arch'] if info['known'] else 'unknown'}")
    env["targets"] = targets
    # a compile to a *lower* -arch than .target, and across families / 'a' targets
    env["arch_mismatch_examples"] = []
    for t, a in (("sm_90", "sm_80"), ("sm_90a", "sm_100"), ("sm_100f", "sm_110"),
                 ("sm_100a", "sm_103a"), ("sm_100f", "sm_103"), ("sm_100", "sm_120a")):
        src, _ = make_ptx(TRIVIAL, vmax, t, BASE_DECLS)
        rc, out = run_ptxas(src, a, workdir)
        per, glob = parse_output(out)
        env["arch_mismatch_examples"].append(
            {"target": t, "arch": a, "rc": rc,
             "msgs": [fmt(s, m) for s, m in sum(per.values(), []) + glob]})

    # unknown versions
    env["version_unknown_examples"] = {}
    for v in CANDIDATE_VERSIONS_EXTRA:
        if v in versions:
            continue
        src, _ = make_ptx(TRIVIAL, v, "sm_75", BASE_DECLS)
        rc, out = run_ptxas(src, "sm_75", workdir)
        per, glob = parse_output(out)
        env["version_unknown_examples"][v] = [fmt(s, m) for s, m in sum(per.values(), []) + glob]

    # declarations of half registers
    env["reg_decls"] = {}
    for ty in (".f16", ".f16x2", ".bf16", ".bf16x2", ".b16", ".b32", ".f32"):
        for v, t in ((vmax, "sm_100"), ("4.1", "sm_52"), ("4.2", "sm_53")):
            src = "\n".join([f".version {v}", f".target {t}", ".address_size 64",
                             ".visible .entry probe()", "{", f".reg {ty} z;", "ret;", "}", ""])
            rc, out = run_ptxas(src, targets[t]["arch"], workdir)
            per, glob = parse_output(out)
            env["reg_decls"][f"{ty} @ {v}/{t}"] = [fmt(s, m) for s, m in
                                                   sum(per.values(), []) + glob]
    return env


# --------------------------------------------------------------------------------------------
# spellings
# --------------------------------------------------------------------------------------------

HALF = ["f16", "f16x2", "bf16", "bf16x2"]
REG_OF = {"f16": "h", "bf16": "h", "f16x2": "r", "bf16x2": "r", "f32": "f", "f64": "g",
          "b16": "h", "b32": "r"}


def ops_line(op, toks, operands):
    return f"{op}.{'.'.join(toks)}" if toks else op, \
        f"{op}{''.join('.' + t for t in toks)} {', '.join(operands)};"


def half_operands(op, ty):
    reg = REG_OF.get(ty, "h")
    n = 4 if op == "fma" else 3
    return [f"{reg}{i}" for i in range(n)]


def gen_spellings():
    """-> list of dicts {group, op, spelling, line} (deduplicated, in generation order)."""
    out, seen = [], set()

    def add(group, op, toks, operands):
        sp, line = ops_line(op, toks, operands)
        if line in seen:
            return
        seen.add(line)
        out.append({"group": group, "op": op, "spelling": sp, "line": line})

    def placements(seq, ty_toks, positions):
        for p in positions:
            yield list(seq[:p]) + list(ty_toks) + list(seq[p:])

    # A. half add/sub/mul ------------------------------------------------------------------
    pool = ["rn", "rz", "rm", "rp", "ftz", "sat"]
    intruders = ["rna", "rni", "rzi", "rs", "relu", "oob", "satfinite", "approx", "full", "foo"]
    for op in ("add", "sub", "mul"):
        for ty in HALF:
            opnds = half_operands(op, ty)
            for k in range(0, 3):
                for seq in itertools.product(pool, repeat=k):
                    for toks in placements(seq, [ty], range(k + 1)):
                        add("half", op, toks, opnds)
            for seq in itertools.product(pool, repeat=3):
                for toks in placements(seq, [ty], (0, 3)):
                    add("half", op, toks, opnds)
            for x in intruders:
                add("half", op, [x, ty], opnds)
                add("half", op, ["rn", x, ty], opnds)
        # type-token variants
        for toks, opnds in (([], ["h0", "h1", "h2"]), (["rn"], ["h0", "h1", "h2"]),
                            (["f16", "f16"], ["h0", "h1", "h2"]),
                            (["f16", "f16x2"], ["h0", "h1", "h2"]),
                            (["bf16", "f16"], ["h0", "h1", "h2"]),
                            (["f16x2", "f16x2"], ["r0", "r1", "r2"]),
                            (["f32", "f16"], ["f0", "h1", "f2"]),
                            (["f32", "bf16"], ["f0", "h1", "f2"]),
                            (["rn", "f32", "f16"], ["f0", "h1", "f2"]),
                            (["f16", "f32"], ["f0", "h1", "f2"]),
                            (["F16"], ["h0", "h1", "h2"]), (["rn", "F16"], ["h0", "h1", "h2"])):
            add("half-types", op, toks, opnds)

    # B. half fma --------------------------------------------------------------------------
    pool = ["rn", "rz", "rm", "rp", "ftz", "sat", "relu", "oob"]
    for ty in HALF:
        opnds = half_operands("fma", ty)
        for k in range(0, 3):
            for seq in itertools.product(pool, repeat=k):
                for toks in placements(seq, [ty], range(k + 1)):
                    add("fma", "fma", toks, opnds)
        for seq in itertools.product(pool, repeat=3):
            add("fma", "fma", list(seq) + [ty], opnds)
        for rnd in ("rn", "rz"):
            for sub in itertools.combinations(["ftz", "sat", "relu", "oob"], 3):
                for perm in itertools.permutations((rnd,) + sub):
                    add("fma", "fma", list(perm) + [ty], opnds)
        for seq in (["rn", "ftz", "sat", "relu", "oob"], ["oob", "relu", "sat", "ftz", "rn"],
                    ["rz", "ftz", "sat", "relu", "oob"]):
            add("fma", "fma", seq + [ty], opnds)
        for x in ["rna", "rni", "rzi", "rs", "satfinite", "approx", "foo"]:
            add("fma", "fma", [x, ty], opnds)
            add("fma", "fma", ["rn", x, ty], opnds)
    for toks, opnds in ((["rn"], ["h0", "h1", "h2", "h3"]), ([], ["h0", "h1", "h2", "h3"]),
                        (["rn", "f16", "f16"], ["h0", "h1", "h2", "h3"]),
                        (["rn", "bf16", "f16"], ["h0", "h1", "h2", "h3"]),
                        (["rn", "f16", "f32"], ["f0", "h1", "h2", "f3"]),
                        (["rn", "f16x2", "f32"], ["f0", "r1", "r2", "f3"])):
        add("fma-types", "fma", toks, opnds)

    # C. mixed precision -------------------------------------------------------------------
    pool = ["rn", "rz", "rm", "rp", "sat", "ftz", "relu", "oob"]
    pool3 = ["rn", "rz", "sat", "ftz", "relu", "oob"]
    for op in ("add", "sub", "fma"):
        for at in ("f16", "bf16"):
            opnds = ["f0", "h1", "h2", "f3"] if op == "fma" else ["f0", "h1", "f2"]
            tt = ["f32", at]
            for k in range(0, 3):
                for seq in itertools.product(pool, repeat=k):
                    for toks in placements(seq, tt, range(k + 1)):
                        add("mixed", op, toks, opnds)
            for m in pool:
                add("mixed", op, ["f32", m, at], opnds)
                add("mixed", op, ["rn", "f32", m, at], opnds)
            for seq in itertools.product(pool3, repeat=3):
                for toks in placements(seq, tt, (1, 3)):
                    add("mixed", op, toks, opnds)
            for x in ["rna", "rni", "rzi", "rs", "satfinite", "approx", "foo"]:
                add("mixed", op, [x] + tt, opnds)
                add("mixed", op, ["rn", x] + tt, opnds)
            # manual spellings
            add("mixed", op, ["rz"] + tt + ["sat"], opnds)
            add("mixed", op, ["rz", "sat"] + tt + ["sat"], opnds)
            # type-order / other-type variants
            for mods in ([], ["rn"], ["rz", "sat"]):
                for tv, ops_ in (([at, "f32"], opnds), (["f32"], opnds), ([at], opnds),
                                 (["f32", "f32"], opnds), (["f32", at, at], opnds),
                                 (["f32", at + "x2"], [o.replace("h", "r") for o in opnds]),
                                 ([at + "x2", "f32"], [o.replace("h", "r") for o in opnds]),
                                 (["f64", at], [o.replace("f", "g") for o in opnds]),
                                 (["f32", "f64"], [o.replace("h", "g") for o in opnds]),
                                 (["f16", "bf16"] if at == "f16" else ["bf16", "f16"], opnds)):
                    add("mixed-types", op, mods + tv, ops_)
    for at in ("f16", "bf16"):
        for mods in ([], ["rn"], ["rz", "sat"]):
            add("mixed-types", "mul", mods + ["f32", at], ["f0", "h1", "f2"])

    # D. cvt -------------------------------------------------------------------------------
    pool = ["rn", "rz", "rm", "rp", "rna", "rs", "ftz", "sat", "relu", "satfinite"]
    pairs = [("f16", "f32"), ("bf16", "f32"), ("f16x2", "f32"), ("bf16x2", "f32"),
             ("f32", "f16"), ("f32", "bf16"), ("f32", "f16x2"), ("f32", "bf16x2")]

    def cvt_operands(d, s, toks):
        if s == "f32" and d.endswith("x2"):
            o = ["r0", "f1", "f2"]
            if "rs" in toks:
                o.append("r3")
            return o
        return [REG_OF[d] + "0", REG_OF[s] + "1"]

    for d, s in pairs:
        tt = [d, s]
        for k in range(0, 3):
            for seq in itertools.product(pool, repeat=k):
                for toks in placements(seq, tt, (0, k)):
                    add("cvt", "cvt", toks, cvt_operands(d, s, toks))
        if s == "f32":
            for seq in itertools.permutations(pool, 3):
                toks = list(seq) + tt
                add("cvt", "cvt", toks, cvt_operands(d, s, toks))
        else:
            for seq in itertools.permutations(["rn", "rz", "ftz", "sat", "relu", "satfinite"], 3):
                toks = list(seq) + tt
                add("cvt", "cvt", toks, cvt_operands(d, s, toks))
        for r in ("rn", "rz"):  # duplicated non-rounding modifiers next to a rounding
            for x in ("ftz", "sat", "relu", "satfinite"):
                for seq in ([r, x, x], [x, r, x]):
                    toks = seq + tt
                    add("cvt", "cvt", toks, cvt_operands(d, s, toks))
        for x in ["rni", "rzi", "rmi", "rpi", "oob", "approx", "foo"]:
            for toks in ([x] + tt, ["rn", x] + tt):
                add("cvt", "cvt", toks, cvt_operands(d, s, toks))
        # the .rs forms without / with the rbits operand
        if s == "f32" and d.endswith("x2"):
            add("cvt", "cvt", ["rs"] + tt, ["r0", "f1", "f2"])
            add("cvt", "cvt", ["rs", "relu", "satfinite"] + tt, ["r0", "f1", "f2"])
            add("cvt", "cvt", ["rn"] + tt, ["r0", "f1", "f2", "r3"])
    for toks, opnds in ((["rn", "f16", "bf16"], ["h0", "h1"]), (["rn", "bf16", "f16"], ["h0", "h1"]),
                        (["f32", "f32"], ["f0", "f1"]), (["rn", "f16"], ["h0", "f1"]),
                        (["rn", "f32", "f16", "f16"], ["f0", "h1"]), ([], ["h0", "f1"])):
        add("cvt-types", "cvt", toks, opnds)

    # E. half min/max/neg/abs (issue #15) --------------------------------------------------
    pool = ["ftz", "NaN", "xorsign", "abs", "rn", "sat", "relu"]
    for op in ("min", "max"):
        for ty in HALF:
            opnds = half_operands(op, ty)
            for k in range(0, 3):
                for seq in itertools.product(pool, repeat=k):
                    for toks in placements(seq, [ty], (0, k)):
                        add("minmax", op, toks, opnds)
            for seq in itertools.permutations(["ftz", "NaN", "xorsign", "abs"], 3):
                add("minmax", op, list(seq) + [ty], opnds)
            for seq in itertools.permutations(["ftz", "NaN", "xorsign", "abs"]):
                add("minmax", op, list(seq) + [ty], opnds)
            for seq in (["NaN", "NaN"], ["ftz", "ftz"], ["xorsign", "abs", "abs"],
                        ["approx"], ["foo"], ["rz"]):
                add("minmax", op, seq + [ty], opnds)
    for op in ("neg", "abs"):
        for ty in HALF:
            opnds = half_operands(op, ty)[:2]
            for k in range(0, 3):
                for seq in itertools.product(["ftz", "rn", "sat", "NaN", "abs", "relu"],
                                             repeat=k):
                    for toks in placements(seq, [ty], (0, k)):
                        add("minmax", op, toks, opnds)
            add("minmax", op, ["foo", ty], opnds)
    for toks, opnds in ((["f16", "f16"], ["h0", "h1", "h2"]), ([], ["h0", "h1", "h2"]),
                        (["bf16", "f16"], ["h0", "h1", "h2"]), (["f16x2"], ["h0", "h1", "h2"]),
                        (["f16"], ["r0", "r1", "r2"]), (["f16"], ["h0", "h1"])):
        add("minmax-types", "min", toks, opnds)
    for toks, opnds in ((["f16", "f16"], ["h0", "h1"]), ([], ["h0", "h1"]),
                        (["f16"], ["h0", "h1", "h2"])):
        add("minmax-types", "neg", toks, opnds)

    # F. f32 and f32x2 add/sub/mul/fma/mad (issue #15) -------------------------------------
    pool = ["rn", "rz", "rm", "rp", "ftz", "sat"]
    for op in ("add", "sub", "mul", "fma", "mad"):
        for ty, reg in (("f32", "f"), ("f32x2", "q")):
            n = 4 if op in ("fma", "mad") else 3
            opnds = [f"{reg}{i}" for i in range(n)]
            for k in range(0, 3):
                for seq in itertools.product(pool, repeat=k):
                    for toks in placements(seq, [ty], (0, k)):
                        add("f32", op, toks, opnds)
            for rnd in ("rn", "rz", "rm", "rp"):
                for perm in itertools.permutations((rnd, "ftz", "sat")):
                    add("f32", op, list(perm) + [ty], opnds)
            for x in ("rna", "rs", "relu", "oob", "satfinite", "approx", "full", "foo"):
                add("f32", op, [x, ty], opnds)
                add("f32", op, ["rn", x, ty], opnds)
    return out


def gen_small_spellings():
    """The small-float cvt group ('cvt-small', ``--groups cvt-small``): every (dst, src) pair
    of the fp8/fp6/fp4/ue8m0 forms and the .rs forms into four lanes (PTX ISA 9.0, 9.7.9.21),
    with the rounding/modifier tokens in every order up to two, three-token permutations, and
    misspellings; the operands are the manual's (``{a, b, e, f}, rbits`` for x4)."""
    out, seen = [], set()
    regs = {"e4m3x2": "h", "e5m2x2": "h", "e2m3x2": "h", "e3m2x2": "h", "ue8m0x2": "h",
            "e2m1x2": "bb", "f16x2": "r", "bf16x2": "r", "e4m3x4": "r", "e5m2x4": "r",
            "e2m3x4": "r", "e3m2x4": "r", "e2m1x4": "h", "s2f6x2": "h"}
    pairs = [(d, "f32") for d in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2")]
    pairs += [(d, "f16x2") for d in ("e4m3x2", "e5m2x2")] + [("ue8m0x2", "bf16x2")]
    pairs += [("f16x2", s) for s in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2")]
    pairs += [("bf16x2", "ue8m0x2")]
    pairs += [(d, "f32") for d in ("e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4")]
    # ptxas 13.5 (PTX 9.1-9.5): fp8/fp6/fp4 to and from .bf16x2, fp6/fp4 from .f16x2, and
    # .s2f6x2 (from .f32 and .bf16x2, widening to .bf16x2; .f16x2 asked to see it refused)
    small = ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2")
    pairs += [(d, "bf16x2") for d in small] + [("bf16x2", s) for s in small]
    pairs += [(d, "f16x2") for d in ("e2m3x2", "e3m2x2", "e2m1x2")]
    pairs += [("s2f6x2", "f32"), ("s2f6x2", "bf16x2"), ("bf16x2", "s2f6x2"),
              ("s2f6x2", "f16x2"), ("f16x2", "s2f6x2")]

    def operands(d, s):
        if d.endswith("x4"):
            return [regs[d] + "0", "{f0, f1, f2, f3}", "r1"]
        if s == "f32":
            return [regs[d] + "0", "f1", "f2"]
        return [regs[d] + "0", regs[s] + "1"]

    def add(toks, opnds):
        sp, line = ops_line("cvt", toks, opnds)
        if line not in seen:
            seen.add(line)
            out.append({"group": "cvt-small", "op": "cvt", "spelling": sp, "line": line})

    pool = ["rn", "rz", "rp", "rm", "rs", "relu", "satfinite", "ftz", "sat"]
    for d, s in pairs:
        tt, opnds = [d, s], operands(d, s)
        for k in range(0, 3):
            for seq in itertools.product(pool, repeat=k):
                for p in (0, k):
                    add(list(seq[:p]) + tt + list(seq[p:]), opnds)
        for seq in itertools.permutations(["rn", "rz", "rp", "rs", "relu", "satfinite", "ftz"],
                                          3):
            add(list(seq) + tt, opnds)
        for x in ("rna", "rni", "oob", "foo"):
            add(["rn", "satfinite", x] + tt, opnds)
    # the .e2m1x2 destination from .f16x2 in a .b16 register (ptxas: a .b8 one)
    add(["rn", "satfinite", "e2m1x2", "f16x2"], ["h0", "r1"])
    return out


SFU_OPS = ("tanh", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos")
SFU_TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64")
SFU_REG = {"f16": "h", "bf16": "h", "f16x2": "r", "bf16x2": "r", "f32": "f", "f64": "g"}


def gen_sfu_spellings():
    """The SFU group ('sfu', ``--groups sfu``): tanh, ex2, lg2, rcp, sqrt, rsqrt, sin and cos
    on every float type, with each subset of {.approx, .ftz} and each one rounding modifier
    (or none), in the manual's order, and a few misorders, repeats and foreign modifiers: the
    grid check() is held to for the instructions ptxfp does not compute."""
    out, seen = [], set()

    def add(op, toks, ty):
        r = SFU_REG[ty]
        sp, line = ops_line(op, toks, [r + "0", r + "1"])
        if line not in seen:
            seen.add(line)
            out.append({"group": "sfu", "op": op, "spelling": sp, "line": line})

    for op in SFU_OPS:
        for ty in SFU_TYPES:
            for rnd in (None, "rn", "rz", "rm", "rp"):
                for mods in ((), ("approx",), ("ftz",), ("approx", "ftz"), ("full",),
                             ("full", "ftz"), ("sat",), ("approx", "sat"), ("relu",)):
                    add(op, ([rnd] if rnd else []) + list(mods) + [ty], ty)
            add(op, ["ftz", "approx", ty], ty)                 # order
            add(op, ["approx", "approx", ty], ty)              # repeats
            add(op, ["approx", "ftz", "ftz", ty], ty)
            add(op, ["rn", "rz", ty], ty)
            add(op, ["approx", "ftz", "foo", ty], ty)          # unknown token
            if ty != "f32":
                add(op, ["approx", "ftz", "f32", ty], ty)          # two types
        add(op, ["approx", "ftz"], "f32")                      # no type
        add(op, ["approx", "f8"], "f32")
    return out


# --------------------------------------------------------------------------------------------
# operand-kind probes
# --------------------------------------------------------------------------------------------

OPERAND_KINDS = {
    # register kinds: declared as ".reg <type> <prefix><4>;", used as <prefix><slot index>
    "b16": "%h", "f16": "%x", "u16": "%uh", "s16": "%sh", "b32": "%r", "f32": "%f",
    "f16x2": "%y", "u32": "%ur", "s32": "%sr", "b64": "%q", "f64": "%g", "u64": "%uq",
    "pred": "%p", "b8": "%bb",
    # immediates (used verbatim)
    "imm_f32hex": "0f3F800000", "imm_f64hex": "0d3FF0000000000000", "imm_float": "1.0",
    "imm_int": "1", "imm_hex": "0x3C00",
}


def operand_text(kind, slot_index):
    v = OPERAND_KINDS[kind]
    return v[1:] + str(slot_index) if v.startswith("%") else v


def operand_families():
    """(family name, op, toks, [(slot name, default operand)])"""
    fams = []
    for op in ("add", "sub", "mul"):
        for ty in HALF:
            reg = REG_OF[ty]
            fams.append((f"{op}.{ty}", op, [ty], [("d", reg + "0"), ("a", reg + "1"),
                                                  ("b", reg + "2")]))
    for ty in HALF:
        reg = REG_OF[ty]
        fams.append((f"fma.rn.{ty}", "fma", ["rn", ty],
                     [("d", reg + "0"), ("a", reg + "1"), ("b", reg + "2"), ("c", reg + "3")]))
    for op in ("add", "sub"):
        for at in ("f16", "bf16"):
            fams.append((f"{op}.f32.{at}", op, ["f32", at],
                         [("d", "f0"), ("a", "h1"), ("c", "f2")]))
    for at in ("f16", "bf16"):
        fams.append((f"fma.rn.f32.{at}", "fma", ["rn", "f32", at],
                     [("d", "f0"), ("a", "h1"), ("b", "h2"), ("c", "f3")]))
    for d in ("f16", "bf16"):
        fams.append((f"cvt.rn.{d}.f32", "cvt", ["rn", d, "f32"], [("d", "h0"), ("a", "f1")]))
        fams.append((f"cvt.rn.{d}x2.f32", "cvt", ["rn", d + "x2", "f32"],
                     [("d", "r0"), ("a", "f1"), ("b", "f2")]))
        fams.append((f"cvt.rs.{d}x2.f32", "cvt", ["rs", d + "x2", "f32"],
                     [("d", "r0"), ("a", "f1"), ("b", "f2"), ("rbits", "r3")]))
        fams.append((f"cvt.f32.{d}", "cvt", ["f32", d], [("d", "f0"), ("a", "h1")]))
    return fams


def gen_operand_probes():
    probes = []
    for fam, op, toks, slots in operand_families():
        base = [o for _, o in slots]
        mk = lambda ops_: f"{op}.{'.'.join(toks)} {', '.join(ops_)};"
        probes.append({"family": fam, "slot": None, "kind": "canonical", "line": mk(base)})
        for si, (sname, _) in enumerate(slots):
            for kind in OPERAND_KINDS:
                o = list(base)
                o[si] = operand_text(kind, si)
                probes.append({"family": fam, "slot": sname, "kind": kind, "line": mk(o),
                               "default": o[si] == base[si]})
        probes.append({"family": fam, "slot": None, "kind": "one_operand_fewer",
                       "line": mk(base[:-1])})
        probes.append({"family": fam, "slot": None, "kind": "one_operand_more",
                       "line": mk(base + [base[-1]])})
    return probes


# --------------------------------------------------------------------------------------------
# model building
# --------------------------------------------------------------------------------------------

def templ(msg, v, t):
    """Replace the config's own quoted target/version by placeholders."""
    return msg.replace(f"'{t}'", "'{target}'").replace(f"'{v}'", "'{version}'")


def untempl(msg, v, t):
    return msg.replace("'{target}'", f"'{t}'").replace("'{version}'", f"'{v}'")


def build_model(tsweep_hi, tsweep_lo, vsweep, tref, versions, targets):
    """Condense the sweeps of one spelling.

    tsweep_hi[t] = messages at (highest version, t); tsweep_lo[t] = at (lowest version, t);
    vsweep[v] = at (v, tref).  Messages are templated ('{target}', '{version}').
    Model: ptxas prints `sequence` filtered by the conditions of its version/target messages.
    """
    vmin, vmax = versions[0], versions[-1]
    T_hi = {t: [templ(m, vmax, t) for m in tsweep_hi[t]] for t in targets}
    T_lo = {t: [templ(m, vmin, t) for m in tsweep_lo[t]] for t in targets}
    V = {v: [templ(m, v, tref) for m in vsweep[v]] for v in versions}
    base = T_hi[tref]
    cnt = lambda L, m: sum(1 for x in L if x == m)
    problems = []
    tconds, vconds = {}, {}
    for t in targets:
        for m in set(T_hi[t]):
            if cnt(T_hi[t], m) > cnt(base, m):
                tconds.setdefault(m, []).append(t)
    for v in versions:
        for m in set(V[v]):
            if cnt(V[v], m) > cnt(base, m):
                vconds.setdefault(m, []).append(v)
    for m in set(tconds) & set(vconds):
        problems.append(f"message depends on both version and target: {m}")
    rec = {"errors": base}
    vreq, treq = [], []
    for m in sorted(vconds, key=lambda m: next(i for i, v in enumerate(versions)
                                              if m in V[v])):
        vs = vconds[m]
        below = next((v for v in versions if v not in vs), None)
        d = {"msg": m}
        if below is None or all((vkey(v) < vkey(below)) == (v in vs) for v in versions):
            d["below"] = below  # None: present at every version of the matrix
        else:
            d["versions"] = vs
        vreq.append(d)
    for m in tconds:
        ts = tconds[m]
        lowest_ok = next((t for t in targets if t not in ts), None)
        d = {"msg": m}
        if lowest_ok is not None and all((tnum(t) < tnum(lowest_ok)) == (t in ts)
                                         for t in targets):
            d["below"] = lowest_ok
        else:
            d["rejects"] = ts
        treq.append(d)
    if vreq:
        rec["version_msgs"] = vreq
    if treq:
        rec["target_msgs"] = treq
    if vreq or treq:
        tstar = max(targets, key=lambda t: (len(T_lo[t]), -targets.index(t)))
        rec["sequence"] = T_lo[tstar]
        rec["sequence_at"] = [vmin, tstar]
    # self-check on the sweeps
    for t in targets:
        if predict(rec, vmax, t, versions, targets, raw=True) != T_hi[t]:
            problems.append(f"sweep mismatch at {vmax}/{t}")
        if predict(rec, vmin, t, versions, targets, raw=True) != T_lo[t]:
            problems.append(f"sweep mismatch at {vmin}/{t}")
    for v in versions:
        if predict(rec, v, tref, versions, targets, raw=True) != V[v]:
            problems.append(f"sweep mismatch at {v}/{tref}")
    # legality facts
    ok_targets = [t for t in targets if not T_hi[t]]
    ok_versions = [v for v in versions if not V[v]]
    rec["legal"] = bool(ok_targets) and bool(ok_versions)
    if rec["legal"]:
        rec["min_version"] = ok_versions[0]
        rec["min_target"] = ok_targets[0]
        thr = [t for t in targets if tnum(t) >= tnum(rec["min_target"])]
        if ok_targets != thr:
            rec["targets_ok"] = ok_targets
        if ok_versions != [v for v in versions if vkey(v) >= vkey(ok_versions[0])]:
            problems.append("accepting versions not an upper set")
    rec["ref_target"] = tref
    if problems:
        rec["model_problems"] = problems
    return rec


def msg_active(rec, m, v, t):
    """None: m is unconditional; else whether its condition holds at (v, t)."""
    for d in rec.get("version_msgs", []):
        if d["msg"] == m:
            if "below" in d:
                return d["below"] is None or vkey(v) < vkey(d["below"])
            return v in d["versions"]
    for d in rec.get("target_msgs", []):
        if d["msg"] == m:
            if "below" in d:
                return tnum(t) < tnum(d["below"])
            return t in d["rejects"]
    return None


def predict(rec, v, t, versions=None, targets=None, raw=False):
    """The messages ptxas prints for this spelling at (.version v, .target t), in order."""
    seq = rec.get("sequence", rec["errors"])
    out = [m for m in seq if msg_active(rec, m, v, t) is not False]
    return out if raw else [untempl(m, v, t) for m in out]


def finalize(records):
    """Internal per-spelling models -> (message table, compact records).

    Each table entry is one message text with its condition:
      {"text", "kind": "error"}                       printed at every (version, target)
      {"text", "kind": "version", "below": V}          printed iff .version < V
      {"text", "kind": "target", "below": T}           printed iff SM number(.target) < SM(T)
      {"text", "kind": "target", "rejects": [T...]}    printed iff .target is listed
    Texts may hold the placeholder '{target}' for the config's own (quoted) .target name.
    A record's "msgs" lists table indices in ptxas' printing order, every condition assumed true.
    """
    table, index = [], {}
    finals = []
    for r in records:
        conds = {}
        for d in r.get("version_msgs", []):
            e = {"text": d["msg"], "kind": "version"}
            if "below" in d:
                e["below"] = d["below"]
            else:
                e["versions"] = d["versions"]
            conds[d["msg"]] = e
        for d in r.get("target_msgs", []):
            e = {"text": d["msg"], "kind": "target"}
            if "below" in d:
                e["below"] = d["below"]
            else:
                e["rejects"] = d["rejects"]
            conds[d["msg"]] = e
        ids = []
        for m in r.get("sequence", r["errors"]):
            e = conds.get(m, {"text": m, "kind": "error"})
            key = json.dumps(e, sort_keys=True)
            if key not in index:
                index[key] = len(table)
                table.append(e)
            ids.append(index[key])
        f = {k: r[k] for k in ("id", "group", "op", "spelling", "line")}
        f["msgs"] = ids
        f["syntax_ok"] = not r["errors"]
        f["legal"] = r["legal"]
        for k in ("min_version", "min_target", "targets_ok", "model_problems"):
            if k in r:
                f[k] = r[k]
        finals.append(f)
    return table, finals


def entry_active(e, v, t):
    k = e["kind"]
    if k == "error":
        return True
    if k == "version":
        if "below" in e:
            return e["below"] is None or vkey(v) < vkey(e["below"])
        return v in e["versions"]
    if k == "both":
        return v in e["versions"] and t in e["targets"]
    if "below" in e:
        return tnum(t) < tnum(e["below"])
    return t in e["rejects"]


def messages_at(rec, table, v, t):
    """What ptxas prints for a record's line at (.version v, .target t), in order
    (file-level messages about the (v, t) pair itself not included)."""
    return [table[i]["text"].replace("'{target}'", f"'{t}'")
            for i in rec["msgs"] if entry_active(table[i], v, t)]


# --------------------------------------------------------------------------------------------
# worker
# --------------------------------------------------------------------------------------------

_WORKDIR = None


def _init(workdir, ptxas):
    global _WORKDIR, PTXAS
    _WORKDIR = workdir
    PTXAS = ptxas


def _task(args):
    key, lines, v, t, arch, decls = args
    res, fmsgs, anom = run_batch(lines, v, t, arch, decls, _WORKDIR)
    return key, res, fmsgs, anom


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

SMALL_DECLS = BASE_DECLS + [(".b8", "bb")]


def sweep_spellings(sp, versions, targets, arch_of, run_many, decls, rng, sample, log):
    """Steps 1-3 of main for a list of spellings: target and version sweeps, the condensed
    model per spelling, and its check on the full (.version x .target) cross product.
    Returns (message table, records, mismatches, observations)."""
    lines = [s["line"] for s in sp]
    n = len(lines)
    vmin, vmax = versions[0], versions[-1]
    tres = run_many([((v, t), lines, v, t, arch_of[t], decls)
                     for t in targets for v in (vmin, vmax)])
    tsweep = {t: tres[(vmax, t)][0] for t in targets}
    tsweep_lo = {t: tres[(vmin, t)][0] for t in targets}
    tref = [min(targets, key=lambda t: (len(tsweep[t][i]), tkey(t))) for i in range(n)]
    groups = {}
    for i, t in enumerate(tref):
        groups.setdefault(t, []).append(i)
    vres = run_many([((t, v), [lines[i] for i in idxs], v, t, arch_of[t], decls)
                     for t, idxs in groups.items() for v in versions])
    vsweep = [dict() for _ in range(n)]
    for t, idxs in groups.items():
        for v in versions:
            for k, i in enumerate(idxs):
                vsweep[i][v] = vres[(t, v)][0][k]
    records = []
    for i, s in enumerate(sp):
        m = build_model({t: tsweep[t][i] for t in targets},
                        {t: tsweep_lo[t][i] for t in targets}, vsweep[i], tref[i],
                        versions, targets)
        rec = {"id": i}
        rec.update(s)
        rec.update(m)
        records.append(rec)
    table, finals = finalize(records)
    chk = [i for i, r in enumerate(finals) if r["legal"] or r.get("model_problems")]
    rest = [i for i, r in enumerate(finals) if not (r["legal"] or r.get("model_problems"))]
    chk += rng.sample(rest, int(len(rest) * sample))
    chk.sort()
    configs = [(v, t) for v in versions for t in targets]
    log(f"cross-product check: {len(chk)} spellings x {len(configs)} configs")
    xres = run_many([((v, t), [lines[i] for i in chk], v, t, arch_of[t], decls)
                     for v, t in configs])
    mism, observations = [], 0
    for (v, t), (res, fmsgs) in sorted(xres.items(), key=lambda kv: (vkey(kv[0][0]),
                                                                      tkey(kv[0][1]))):
        for k, i in enumerate(chk):
            observations += 1
            pred = messages_at(finals[i], table, v, t)
            if pred != res[k]:
                mism.append({"id": i, "line": lines[i], "version": v, "target": t})
                finals[i].setdefault("matrix_exceptions", []).append(
                    {"version": v, "target": t, "observed": res[k]})
    for i in chk:
        finals[i]["matrix_checked"] = True
    return table, finals, mism, observations


def condense_two_axis(finals, table, versions, targets):
    """Records whose messages depend on both axes at once (fp8 cvt: 'requires .target sm_90'
    below PTX 8.1, 'sm_89 or higher' from 8.1, '... on sm_89 requires PTX 8.1'), which the
    one-axis model leaves as thousands of matrix_exceptions: rewrite each with 'both' entries
    ({"text", "kind": "both", "versions": [...], "targets": [...]}: printed iff .version and
    .target are both listed), when every message's (version, target) set is such a product
    and one order of the messages fits every observation.  Checked against the observations;
    a record that does not fit keeps its exceptions.  Returns how many were rewritten."""
    index = {json.dumps(e, sort_keys=True): i for i, e in enumerate(table)}
    done = 0
    configs = [(v, t) for v in versions for t in targets]
    for r in finals:
        if not r.get("matrix_exceptions"):
            continue
        exc = {(e["version"], e["target"]): e["observed"] for e in r["matrix_exceptions"]}
        # a message printed twice on one line (".relu" needing 7.0, for the modifier and for
        # the form) is two messages: (text, occurrence)
        def numbered(ms):
            seen = {}
            out = []
            for m in ms:
                seen[m] = seen.get(m, 0) + 1
                out.append((m, seen[m]))
            return out
        obs = {(v, t): numbered([templ(m, v, t)
                                 for m in exc.get((v, t), messages_at(r, table, v, t))])
               for v, t in configs}
        where = {}
        for (v, t), ms in obs.items():
            for m in ms:
                where.setdefault(m, set()).add((v, t))
        # one order of the messages that every observation follows
        order, ok = [], True
        pending = set(where)
        while pending and ok:
            firsts = {ms[0] for ms in ([m for m in o if m in pending] for o in obs.values())
                      if ms}
            cand = [m for m in firsts if not any(m in o and m2 in o and o.index(m2) < o.index(m)
                                                  for o in obs.values() for m2 in pending
                                                  if m2 != m)]
            if not cand:
                ok = False
                break
            m = min(cand)
            order.append(m)
            pending.discard(m)
        entries = []
        for m in order:
            vs = sorted({v for v, _ in where[m]}, key=vkey)
            ts = sorted({t for _, t in where[m]}, key=tkey)
            if len(vs) * len(ts) != len(where[m]):
                ok = False
                break
            if len(where[m]) == len(configs):
                entries.append({"text": m[0], "kind": "error"})
            else:
                entries.append({"text": m[0], "kind": "both", "versions": vs, "targets": ts})
        if not ok:
            continue
        ids = []
        for e in entries:
            key = json.dumps(e, sort_keys=True)
            if key not in index:
                index[key] = len(table)
                table.append(e)
            ids.append(index[key])
        new = dict(r, msgs=ids)
        if any(messages_at(new, table, v, t) != [untempl(m, v, t) for m, _ in obs[(v, t)]]
               for v, t in configs):
            continue
        r["msgs"] = ids
        del r["matrix_exceptions"]
        r.pop("model_problems", None)
        r["two_axis"] = True
        done += 1
    return done


def recondense(path, log=print):
    """Run condense_two_axis on an existing group file again (its observations are the model
    plus matrix_exceptions, so nothing is lost), in place."""
    with open(path) as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])
    finals = [json.loads(ln) for ln in lines[1:]]
    n2 = condense_two_axis(finals, header["messages"], header["versions"], header["targets"])
    header["counts"]["matrix_mismatches"] = sum(len(r.get("matrix_exceptions", ()))
                                                for r in finals)
    header["counts"]["model_problems"] = sum(bool(r.get("model_problems")) for r in finals)
    header.setdefault("recondensed", []).append(f"{n2} records (tools/ptxas_probe.py recondense)")
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in finals:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    log(f"{path}: {n2} more records rewritten; {header['counts']}")


def probe_group(args, workdir, cmdline, log):
    """``--groups``: probe one group of spellings over the recorded matrix, into its own file."""
    with open(os.path.join(args.out, "spellings.jsonl")) as f:
        base = json.loads(f.readline())
    versions, targets, arch_of = base["versions"], base["targets"], base["arch_of_target"]
    if args.groups not in GROUPS:
        raise SystemExit(f"unknown group {args.groups!r} (known: {', '.join(GROUPS)})")
    gen, decls = GROUPS[args.groups]
    sp = gen()
    log(f"{len(sp)} spellings of group {args.groups}; versions {versions[0]}..{versions[-1]}, "
        f"{len(targets)} targets")
    pool = Pool(args.jobs, initializer=_init, initargs=(workdir, PTXAS))
    _init(workdir, PTXAS)
    anomalies = []

    def run_many(tasks):
        out = {}
        for key, res, fmsgs, anom in pool.imap_unordered(_task, tasks):
            out[key] = (res, fmsgs)
            anomalies.extend(f"{key}: {a}" for a in anom)
        return out

    table, finals, mism, obs = sweep_spellings(sp, versions, targets, arch_of, run_many,
                                               decls, random.Random(args.seed),
                                               args.sample, log)
    pool.close()
    pool.join()
    n2 = condense_two_axis(finals, table, versions, targets)
    left = sum(len(r.get("matrix_exceptions", ())) for r in finals)
    log(f"{n2} records rewritten with two-axis messages; {left} matrix exceptions left")
    header = {
        "kind": "header", "group": args.groups, "ptxas_version": base["ptxas_version"],
        "command": cmdline, "versions": versions, "targets": targets,
        "arch_of_target": arch_of,
        "ptx_template": make_ptx(["<instruction line>"], "<version>", "<target>",
                                 decls)[0],
        "ptxas_command": "ptxas -arch <arch_of_target[target]> FILE.ptx -o /dev/null",
        "messages": table,
        "notes": base["notes"] + [
            "This file: one group of spellings (the header's 'group'), the same record format "
            "as spellings.jsonl; registers: bb = .b8. A message whose condition is on both "
            "axes (fp8 cvt: 'requires .target sm_90' below PTX 8.1, 'on sm_89 requires PTX "
            "8.1') is a table entry of kind 'both': printed iff the .version is in its "
            "'versions' and the .target in its 'targets' (records with 'two_axis': rewritten "
            "so from the full cross product, condense_two_axis()); for such records "
            "min_version/min_target are those at the reference target only: the matrix is "
            "the truth."],
        "matrix_mismatches_before_two_axis": len(mism),
        "counts": {"spellings": len(sp), "legal": sum(r["legal"] for r in finals),
                   "syntax_ok": sum(r["syntax_ok"] for r in finals),
                   "matrix_checked_spellings": sum(bool(r.get("matrix_checked"))
                                                   for r in finals),
                   "matrix_configs": len(versions) * len(targets),
                   "matrix_observations": obs,
                   "matrix_mismatches": sum(len(r.get("matrix_exceptions", ())) for r in finals),
                   "model_problems": sum(bool(r.get("model_problems")) for r in finals),
                   "anomalies": len(anomalies)},
        "anomalies": anomalies[:200],
    }
    path = os.path.join(args.out, f"spellings_{args.groups}.jsonl")
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in finals:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    log(f"wrote {path}: {header['counts']}")
    return 0


#: --groups NAME: (generator, register declarations) of the groups written to their own file
GROUPS = {"cvt-small": (gen_small_spellings, SMALL_DECLS), "sfu": (gen_sfu_spellings, BASE_DECLS)}


def read_records(out):
    """The header and records of spellings.jsonl in ``out``."""
    with open(os.path.join(out, "spellings.jsonl")) as f:
        lines = f.read().splitlines()
    return json.loads(lines[0]), [json.loads(ln) for ln in lines[1:]]


def probe_merge(args, workdir, cmdline, log):
    """``--groups G1,G2 --merge``: probe groups of gen_spellings() over the recorded matrix and
    add them to spellings.jsonl (merge_records)."""
    header, recs = read_records(args.out)
    versions, targets, arch_of = header["versions"], header["targets"], header["arch_of_target"]
    wanted = set(args.groups.split(","))
    sp = [s for s in gen_spellings() if s["group"] in wanted]
    log(f"{len(sp)} spellings of groups {sorted(wanted)}")
    pool = Pool(args.jobs, initializer=_init, initargs=(workdir, PTXAS))
    _init(workdir, PTXAS)
    anomalies = []

    def run_many(tasks):
        out = {}
        for key, res, fmsgs, anom in pool.imap_unordered(_task, tasks):
            out[key] = (res, fmsgs)
            anomalies.extend(f"{key}: {a}" for a in anom)
        return out

    table, finals, mism, obs = sweep_spellings(sp, versions, targets, arch_of, run_many,
                                               BASE_DECLS, random.Random(args.seed),
                                               args.sample, log)
    pool.close()
    pool.join()
    merge_records(args.out, header, recs, table, finals, mism, cmdline,
                  {"matrix_checked_spellings": sum(bool(r.get("matrix_checked"))
                                                   for r in finals),
                   "matrix_observations": obs, "matrix_mismatches": len(mism),
                   "anomalies": len(anomalies)})
    shutil.rmtree(workdir, ignore_errors=True)
    log(f"merged {len(finals)} records")
    return 0


def merge_records(out, header, recs, table, finals, mism, cmdline, counts):
    """Add ``finals`` (with their message ``table``) to the records of ``out``: the records of
    the same groups are replaced, the others keep their ids; message indices are remapped into
    the existing table (new entries appended); the counts and the mismatch list grow."""
    groups = {f["group"] for f in finals}
    kept = [r for r in recs if r["group"] not in groups]
    old_table = header["messages"]
    index = {json.dumps(e, sort_keys=True): i for i, e in enumerate(old_table)}
    remap = []
    for e in table:
        key = json.dumps(e, sort_keys=True)
        if key not in index:
            index[key] = len(old_table)
            old_table.append(e)
        remap.append(index[key])
    first = max((r["id"] for r in kept), default=-1) + 1
    for k, f in enumerate(finals):
        f["id"] = first + k
        f["msgs"] = [remap[i] for i in f["msgs"]]
    merged = kept + finals
    c = header["counts"]
    c["spellings"] = len(merged)
    c["legal"] = sum(r["legal"] for r in merged)
    c["syntax_ok"] = sum(r["syntax_ok"] for r in merged)
    c["matrix_checked_spellings"] = sum(bool(r.get("matrix_checked")) for r in merged)
    for k in ("matrix_observations", "matrix_mismatches", "anomalies"):
        c[k] = c.get(k, 0) + counts[k]
    header.setdefault("merged", []).append({"command": cmdline, "groups": sorted(groups),
                                            "counts": counts})
    with open(os.path.join(out, "spellings.jsonl"), "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in merged:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    if mism:
        path = os.path.join(out, "targets.json")
        with open(path) as f:
            tj = json.load(f)
        tj["matrix_mismatches"] = (tj["matrix_mismatches"] + mism)[:500]
        with open(path, "w") as f:
            json.dump(tj, f, indent=1)
            f.write("\n")


def main(argv=None):
    global PTXAS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/data/ptxas")
    ap.add_argument("--ptxas", default=None, help="ptxas binary (default: from PATH)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--min-target", default="sm_50", help="lowest .target of the matrix")
    ap.add_argument("--min-version", default="4.0", help="lowest .version of the matrix")
    ap.add_argument("--sample", type=float, default=0.15,
                    help="fraction of never-legal spellings also checked on the full matrix")
    ap.add_argument("--quick", action="store_true",
                    help="check the full matrix only on a sample of (version, target) pairs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--subset", type=int, default=0,
                    help="(development) probe only a random subset of this many spellings")
    ap.add_argument("--groups", default="",
                    help="probe only this group of spellings ('cvt-small': the fp8/fp6/fp4/"
                         "ue8m0 and .rs x4 cvt forms) and write spellings_<group>.jsonl, "
                         "taking the versions, targets and -arch of each target from the "
                         "existing spellings.jsonl (no environment, pair or operand probes); with --merge, "
                         "comma-separated groups of gen_spellings() ('minmax,minmax-types,f32')")
    ap.add_argument("--merge", action="store_true",
                    help="with --groups: add the probed groups to the records of spellings.jsonl "
                         "in --out (its .versions/.targets/-arch, message table and ids kept; "
                         "records of the probed groups replaced)")
    args = ap.parse_args(argv)

    exe = args.ptxas or shutil.which("ptxas")
    if not exe or not os.path.exists(exe):
        print("ptxas_probe: ptxas not found (looked for --ptxas / PATH); nothing done.",
              file=sys.stderr)
        return 0
    PTXAS = exe
    t0 = time.time()

    def log(s):
        print(f"[{time.time() - t0:7.1f}s] {s}", file=sys.stderr, flush=True)

    workdir = tempfile.mkdtemp(prefix="ptxas_probe_")
    os.makedirs(args.out, exist_ok=True)
    cmdline = "python tools/ptxas_probe.py " + " ".join(argv if argv is not None else sys.argv[1:])

    if args.groups and args.merge:
        return probe_merge(args, workdir, cmdline, log)
    if args.groups:
        return probe_group(args, workdir, cmdline, log)
    log("probing environment (versions, targets, -arch)")
    env = probe_environment(workdir, log)
    versions = sorted([v for v in env["list_version"] if vkey(v) >= vkey(args.min_version)],
                      key=vkey)
    vmax = versions[-1]
    targets = sorted([t for t, i in env["targets"].items()
                      if i["known"] and tnum(t) >= tnum(args.min_target)], key=tkey)
    arch_of = {t: env["targets"][t]["arch"] for t in env["targets"] if env["targets"][t]["known"]}
    log(f"versions {versions[0]}..{vmax} ({len(versions)}), targets {len(targets)}: {targets}")

    pool = Pool(args.jobs, initializer=_init, initargs=(workdir, PTXAS))
    _init(workdir, PTXAS)
    anomalies = []

    def run_many(tasks):
        out = {}
        for key, res, fmsgs, anom in pool.imap_unordered(_task, tasks):
            out[key] = (res, fmsgs)
            anomalies.extend(f"{key}: {a}" for a in anom)
        return out

    log("(.version, .target) pair table")
    pres = run_many([((v, t), TRIVIAL, v, t, arch_of[t], BASE_DECLS)
                     for t in targets for v in versions])
    pairs = {t: {v: pres[(v, t)][1] + pres[(v, t)][0][0] for v in versions} for t in targets}

    sp = gen_spellings()
    if args.subset:
        sp = random.Random(args.seed).sample(sp, min(args.subset, len(sp)))
    lines = [s["line"] for s in sp]
    n = len(lines)
    log(f"{n} spellings")

    # 1. target sweep at the highest version
    log("target sweep")
    vmin = versions[0]
    tres = run_many([((v, t), lines, v, t, arch_of[t], BASE_DECLS)
                     for t in targets for v in (vmin, vmax)])
    tsweep = {t: tres[(vmax, t)][0] for t in targets}
    tsweep_lo = {t: tres[(vmin, t)][0] for t in targets}
    # reference target per spelling: the lowest target with the fewest messages at vmax
    tref = []
    for i in range(n):
        best = min(targets, key=lambda t: (len(tsweep[t][i]), tkey(t)))
        tref.append(best)
    # 2. version sweep at each spelling's reference target
    log("version sweep")
    groups = {}
    for i, t in enumerate(tref):
        groups.setdefault(t, []).append(i)
    vtasks = [((t, v), [lines[i] for i in idxs], v, t, arch_of[t], BASE_DECLS)
              for t, idxs in groups.items() for v in versions]
    vres = run_many(vtasks)
    vsweep = [dict() for _ in range(n)]
    for t, idxs in groups.items():
        for v in versions:
            res = vres[(t, v)][0]
            for k, i in enumerate(idxs):
                vsweep[i][v] = res[k]

    log("building per-spelling models")
    records = []
    for i, s in enumerate(sp):
        m = build_model({t: tsweep[t][i] for t in targets},
                        {t: tsweep_lo[t][i] for t in targets}, vsweep[i], tref[i],
                        versions, targets)
        rec = {"id": i}
        rec.update(s)
        rec.update(m)
        records.append(rec)

    table, finals = finalize(records)
    for f, r in zip(finals, records):  # the compact form must reproduce the sweeps
        for t in targets:
            if messages_at(f, table, vmax, t) != tsweep[t][r["id"]] or \
                    messages_at(f, table, vmin, t) != tsweep_lo[t][r["id"]]:
                f.setdefault("model_problems", []).append(f"compact form differs at {t}")
                break
        for v in versions:
            if messages_at(f, table, v, tref[r["id"]]) != vsweep[r["id"]][v]:
                f.setdefault("model_problems", []).append(f"compact form differs at {v}")
                break

    # 3. full cross-product check of the model
    rng = random.Random(args.seed)
    chk = [i for i, r in enumerate(finals) if r["legal"] or r.get("model_problems")]
    rest = [i for i, r in enumerate(finals) if not (r["legal"] or r.get("model_problems"))]
    chk += rng.sample(rest, int(len(rest) * args.sample))
    chk.sort()
    configs = [(v, t) for v in versions for t in targets]
    if args.quick:
        configs = rng.sample(configs, min(len(configs), 120))
    log(f"cross-product check: {len(chk)} spellings x {len(configs)} configs")
    chk_lines = [lines[i] for i in chk]
    xres = run_many([((v, t), chk_lines, v, t, arch_of[t], BASE_DECLS) for v, t in configs])
    mism = []
    observations = 0
    for (v, t), (res, fmsgs) in sorted(xres.items(), key=lambda kv: (vkey(kv[0][0]),
                                                                      tkey(kv[0][1]))):
        for k, i in enumerate(chk):
            observations += 1
            pred = messages_at(finals[i], table, v, t)
            if pred != res[k]:
                kind = "order" if sorted(pred) == sorted(res[k]) else "set"
                mism.append({"id": i, "line": lines[i], "version": v, "target": t,
                             "kind": kind, "predicted": pred, "observed": res[k]})
                finals[i].setdefault("matrix_exceptions", []).append(
                    {"version": v, "target": t, "observed": res[k]})
    for i in chk:
        finals[i]["matrix_checked"] = True
    log(f"cross-product: {observations} observations, {len(mism)} mismatches")

    # 4. operand probes, at the highest version and at the lowest and the highest .target that
    #    accept the family's canonical line
    log("operand probes")
    probes = gen_operand_probes()
    canon = {}
    for p in probes:
        if p["kind"] == "canonical":
            canon[p["family"]] = p["line"]
    fam_lines = list(canon.values())
    ftres = run_many([(("fam", t), fam_lines, vmax, t, arch_of[t], OPERAND_DECLS)
                      for t in targets])
    fam_cfg = {}
    for k, fam in enumerate(canon):
        ok = [t for t in targets if not ftres[("fam", t)][0][k]]
        fam_cfg[fam] = (ok[0], ok[-1]) if ok else (targets[-1], targets[-1])
    cfg_groups = {}
    for j, p in enumerate(probes):
        for which in (0, 1):
            cfg_groups.setdefault(fam_cfg[p["family"]][which], set()).add(j)
    ores = run_many([(("ops", t), [probes[j]["line"] for j in sorted(js)], vmax, t, arch_of[t],
                      OPERAND_DECLS) for t, js in cfg_groups.items()])
    got = {}
    for t, js in cfg_groups.items():
        res = ores[("ops", t)][0]
        for k, j in enumerate(sorted(js)):
            got[(j, t)] = res[k]
    op_records = []
    for j, p in enumerate(probes):
        lo, hi = fam_cfg[p["family"]]
        r = {"id": j}
        r.update(p)
        r["version"] = vmax
        r["target"] = lo
        r["errors"] = got[(j, lo)]
        r["accepted"] = not r["errors"]
        if got[(j, hi)] != got[(j, lo)]:
            r["errors_at_" + hi] = got[(j, hi)]
        r["also_checked_at"] = hi
        op_records.append(r)
    pool.close()
    pool.join()

    # ---------------------------------------------------------------------------------------
    elapsed = round(time.time() - t0, 1)
    header = {
        "kind": "header",
        "ptxas_version": env["ptxas_version"],
        "command": cmdline,
        "versions": versions,
        "targets": targets,
        "arch_of_target": {t: arch_of[t] for t in targets},
        "ptx_template": make_ptx(["<instruction line>"], "<version>", "<target>", BASE_DECLS)[0],
        "ptxas_command": "ptxas -arch <arch_of_target[target]> FILE.ptx -o /dev/null",
        "messages": table,
        "notes": [
            "One record per spelling; 'line' is the exact instruction line probed (operands: "
            "h = .b16, r = .b32, f = .f32, g = .f64 registers), put into ptx_template.",
            "msgs: indices into 'messages', in the order ptxas prints them when every "
            "condition holds. At a given (.version v, .target t) ptxas prints exactly the "
            "entries whose condition holds, in this order (messages_at() in "
            "tools/ptxas_probe.py): kind 'error': always; 'version': iff v < below; "
            "'target' with below: iff SM number of t < SM number of below (a/f variants count "
            "as their number); 'target' with rejects: iff t is listed. '{target}' in a text "
            "stands for t. Empty at (v, t) = ptxas accepts the line.",
            "syntax_ok: no unconditional message. legal: accepted at some (v, t) of the "
            "matrix; then min_version (at the lowest accepting target) and min_target (at the "
            "highest version) are the lowest accepting ones, and every higher .version / "
            "every .target with a higher SM number is accepted too, unless targets_ok lists "
            "the accepting targets explicitly.",
            "The (.version, .target) pair must itself be legal: targets.json pair_min_version "
            "(message 'PTX .version V does not support .target T', on the .target line).",
            "matrix_checked: the model was compared with ptxas on the whole version x target "
            "cross product (matrix_exceptions: where it did not agree).",
        ],
        "counts": {
            "spellings": n,
            "legal": sum(r["legal"] for r in finals),
            "syntax_ok": sum(r["syntax_ok"] for r in finals),
            "matrix_checked_spellings": len(chk),
            "matrix_configs": len(configs),
            "matrix_observations": observations,
            "matrix_mismatches": len(mism),
            "model_problems": sum(bool(r.get("model_problems")) for r in finals),
            "anomalies": len(anomalies),
        },
        "anomalies": anomalies[:200],
    }
    with open(os.path.join(args.out, "spellings.jsonl"), "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in finals:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    oheader = {"kind": "header", "ptxas_version": env["ptxas_version"], "command": cmdline,
               "operand_kinds": OPERAND_KINDS,
               "register_decls": [f".reg {ty} {p}<4>;" for ty, p in OPERAND_DECLS],
               "notes": ["Each probe replaces one operand slot of a family's canonical line "
                         "by one operand kind (registers: '%x' = prefix x + slot index; "
                         "immediates verbatim); 'default' marks the canonical operand.",
                         "errors: ptxas' messages at (version, target) of the record (the "
                         "lowest target accepting the canonical line, highest version); "
                         "also_checked_at: the highest such target; errors_at_<t> is present "
                         "only where the messages differ there.",
                         "PTX header: ptx_template of spellings.jsonl with register_decls."]}
    with open(os.path.join(args.out, "operands.jsonl"), "w") as f:
        f.write(json.dumps(oheader) + "\n")
        for r in op_records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    tj = {"ptxas_version": env["ptxas_version"], "command": cmdline,
          "environment": env,
          "matrix_versions": versions, "matrix_targets": targets,
          "pair_min_version": {t: next((v for v in versions if not pairs[t][v]), None)
                               for t in targets},
          "pairs": {t: {v: pairs[t][v] for v in versions} for t in targets},
          "matrix_mismatches": mism[:500]}
    with open(os.path.join(args.out, "targets.json"), "w") as f:
        json.dump(tj, f, indent=1)
        f.write("\n")
    shutil.rmtree(workdir, ignore_errors=True)
    log(f"done in {elapsed}s: {header['counts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
