"""ptxfp.check against ptxas 13.0 and 13.5 (check(ptxas=R) held to R's records: tests/data/ptxas
for 13.0, tests/data/ptxas/13.5 for 13.5).

1. Recorded decisions (tests/data/ptxas, made by tools/ptxas_probe.py; runs without ptxas):
   for every probed spelling (add/sub/mul/fma on the half types, the mixed forms, cvt between
   .f32 and the half types, and their misspellings) and every (.version 4.0-9.0, .target
   sm_50-sm_121f) pair, check() accepts exactly where ptxas accepts; every message check()
   attributes to ptxas is one ptxas prints for that line; the operand probes and the
   (.version, .target) pairs agree.
2. Live: where ptxas is installed, a seeded sample of lines, every recorded cvt line at
   .versions/.targets below the recorded matrix, and the nvcc modules of tests/data/ptx go
   through ptxas and check() side by side (skips cleanly elsewhere).

The add/sub/mul/fma decisions come from ptxfp.parse() and the instruction table (isa/), so
these tests also hold the table to ptxas.
"""

import collections
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import tempfile

import pytest

import ptxfp
from ptxfp.ptx.check import requirement_messages, spelling_verdict

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "data", "ptxas")
PTX_DIR = os.path.join(HERE, "data", "ptx")
DECLS = [(".b16", "h"), (".b32", "r"), (".f32", "f"), (".f64", "g"), (".b64", "q")]


def _vkey(v):
    return tuple(int(x) for x in v.split("."))


#: where each ptxas release's records are
DATA_OF = {"13.0": DATA, "13.5": os.path.join(DATA, "13.5")}
RELEASES = sorted(DATA_OF)


def load_spellings(release="13.0"):
    path = os.path.join(DATA_OF[release], "spellings.jsonl")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])
    return header, [json.loads(ln) for ln in lines[1:]]


_SP = load_spellings()
_SPS = {r: load_spellings(r) for r in RELEASES}
needs_data = pytest.mark.skipif(_SP is None, reason="tests/data/ptxas/spellings.jsonl missing")


# The record format belongs to the tool that writes it: read it with the tool's own functions.
_spec = importlib.util.spec_from_file_location(
    "ptxas_probe", os.path.join(HERE, os.pardir, "tools", "ptxas_probe.py"))
ptxas_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ptxas_probe)
entry_active = ptxas_probe.entry_active
messages_at = ptxas_probe.messages_at


def ptxas_sets(rec, table, versions, targets):
    """ptxas' accepted versions and targets for a record: accepted(v, t) iff v in V and t in
    T (every condition is on one axis only), both empty when an error is unconditional."""
    ents = [table[i] for i in rec["msgs"]]
    if any(e["kind"] == "error" for e in ents):
        return set(), set()
    vs = {v for v in versions if not any(e["kind"] == "version" and entry_active(e, v, None)
                                         for e in ents)}
    ts = {t for t in targets if not any(e["kind"] == "target" and entry_active(e, None, t)
                                        for e in ents)}
    return vs, ts


def my_sets(verdict, versions, targets, release=None):
    if not verdict.ok:
        return set(), set()
    vs = {v for v in versions if not requirement_messages(verdict, _vkey(v), None, release)}
    ts = {t for t in targets if not requirement_messages(verdict, None, t, release)}
    return vs, ts


def module(v, t, body, decls=DECLS):
    head = [f".version {v}", f".target {t}", ".address_size 64", ".visible .entry probe()", "{"]
    head += [f".reg {ty} {p}<4>;" for ty, p in decls]
    return "\n".join(head + list(body) + ["ret;", "}", ""]), len(head) + 1


def check_lines(v, t, lines, decls=DECLS, ptxas="13.0"):
    """check() of many lines in one module: {index: [error Diagnostics]} (as ptxas release
    ``ptxas`` decides: the records in DATA are 13.0's, those in DATA/13.5 13.5's)."""
    text, first = module(v, t, lines, decls)
    rep = ptxfp.check(text, ptxas=ptxas)
    out = collections.defaultdict(list)
    for d in rep.errors:
        if first <= d.line < first + len(lines):
            out[d.line - first].append(d)
    return out, rep


# --------------------------------------------------------------------------------------------
# 1. recorded decisions

def _records(release):
    if _SPS[release] is None:
        pytest.skip(f"{os.path.relpath(DATA_OF[release], HERE)}/spellings.jsonl missing")
    return _SPS[release]


def _line_errors(release):
    """Errors check() finds in each recorded line that do not depend on .version/.target
    (operands that do not fit the types): one module at a pair that knows every feature."""
    header, recs = _records(release)
    v = "9.0" if release == "13.0" else "9.5"
    found, _ = check_lines(v, "sm_100a", [r["line"] for r in recs], ptxas=release)
    return {k: [d for d in ds if d.rule.startswith(("operand", "vector", "undeclared"))]
            for k, ds in found.items()}


@pytest.mark.parametrize("release", RELEASES)
def test_every_spelling_version_target_decision(release):
    header, recs = _records(release)
    line_errors = _line_errors(release)
    table, versions, targets = header["messages"], header["versions"], header["targets"]
    cases = agree = 0
    wrong = []
    for k, r in enumerate(recs):
        v = spelling_verdict(r["spelling"])
        if v.family is None:
            continue                  # outside the model (f32 arithmetic, cvt.f16.bf16 ...)
        cases += len(versions) * len(targets)
        want = ptxas_sets(r, table, versions, targets)
        got = (set(), set()) if line_errors.get(k) else my_sets(v, versions, targets, release)
        # accepted(v, t) = v in V and t in T: the products agree iff both are empty or the
        # sets agree
        same = (not want[0] or not want[1]) == (not got[0] or not got[1]) and (
            (not want[0] or not want[1]) or want == got)
        if same:
            agree += len(versions) * len(targets)
        else:
            wrong.append((r["line"], sorted(want[0] ^ got[0], key=_vkey), sorted(want[1] ^ got[1]),
                          v.errors))
    print(f"\n{cases} (spelling, .version, .target) cases, {agree} agree")
    assert cases > 15000 * 1000
    assert not wrong, "\n".join(map(str, wrong[:20]))


@pytest.mark.parametrize("release,v,t", [
    ("13.0", "9.0", "sm_100a"), ("13.0", "6.5", "sm_75"), ("13.0", "8.6", "sm_120"),
    ("13.5", "9.5", "sm_100a"), ("13.5", "6.5", "sm_75"), ("13.5", "8.6", "sm_120"),
    ("13.5", "9.4", "sm_107a")])
def test_messages_are_ptxas_messages(release, v, t):
    """At a few (version, target) pairs, check(ptxas=release) of every recorded line of that
    release: the same decision, and each message check() attributes to ptxas is one ptxas
    prints for the line."""
    header, recs = _records(release)
    table = header["messages"]
    found, _ = check_lines(v, t, [r["line"] for r in recs], ptxas=release)
    n, bad = 0, []
    for k, r in enumerate(recs):
        if spelling_verdict(r["spelling"]).family is None:
            continue
        n += 1
        want = messages_at(r, table, v, t)
        got = found.get(k, [])
        if bool(want) != bool(got) or any(d.ptxas not in want for d in got):
            bad.append((r["line"], want, [str(d) for d in got]))
    assert n > 15000
    assert not bad, "\n".join(map(str, bad[:20]))


@pytest.mark.parametrize("release", RELEASES)
def test_operand_probes(release):
    path = os.path.join(DATA_OF[release], "operands.jsonl")
    if not os.path.exists(path):
        pytest.skip(f"{os.path.relpath(path, HERE)} missing")
    with open(path) as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])
    recs = [json.loads(ln) for ln in lines[1:]]
    decls = [tuple(d.split()[1:3]) for d in header["register_decls"]]
    decls = [(ty, name.split("<")[0]) for ty, name in decls]
    groups = collections.defaultdict(list)
    for r in recs:
        groups[(r["version"], r["target"])].append(r)
    n, bad = 0, []
    for (v, t), rs in groups.items():
        found, _ = check_lines(v, t, [r["line"] for r in rs], decls, ptxas=release)
        for k, r in enumerate(rs):
            n += 1
            got = found.get(k, [])
            if (not got) != r["accepted"] or any(d.ptxas not in r["errors"] for d in got):
                bad.append((r["line"], r["errors"], [str(d) for d in got]))
    assert n > 1000
    assert not bad, "\n".join(map(str, bad[:20]))


@needs_data
def test_version_target_pairs():
    with open(os.path.join(DATA, "targets.json")) as f:
        tj = json.load(f)
    n, bad = 0, []
    for t, per in tj["pairs"].items():
        for v, msgs in per.items():
            n += 1
            text, _ = module(v, t, [])
            got = [d.ptxas for d in ptxfp.check(text, ptxas="13.0").errors]
            if bool(got) != bool(msgs) or any(m not in msgs for m in got):
                bad.append((v, t, msgs, got))
    assert n == len(tj["matrix_versions"]) * len(tj["matrix_targets"])
    assert not bad, bad[:10]


# --------------------------------------------------------------------------------------------
# 2. live ptxas

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
LINE_RE = re.compile(r"^ptxas (?P<file>.+?), line (?P<line>\d+); (?P<sev>\w+)\s*: (?P<msg>.*)$")


def run_ptxas(text, arch):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.ptx")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([PTXAS, "-arch", arch, path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
    per = collections.defaultdict(list)
    for ln in (r.stdout + r.stderr).splitlines():
        m = LINE_RE.match(ln.strip())
        if m:
            per[int(m.group("line"))].append((m.group("sev"), m.group("msg")))
    return r.returncode, per


def _sample_lines(n=240, seed=7):
    if _SP is not None:
        header, recs = _SP
        table = header["messages"]
        pool = [r for r in recs if spelling_verdict(r["spelling"]).family is not None
                and not any(table[i]["text"].startswith("fatal") for i in r["msgs"])]
        rng = random.Random(seed)
        legal = [r["line"] for r in pool if r["legal"]]
        other = [r["line"] for r in pool if not r["legal"]]
        return rng.sample(legal, min(n // 2, len(legal))) + rng.sample(other, min(n // 2,
                                                                                len(other)))
    # no recorded data: the table's own forms
    from ptxfp import isa
    return [f"{s} {'f0' if '.f32.' in s else ('r0' if 'x2' in s else 'h0')}, "
            + ("h1, h2, f3;" if s.startswith("fma") and ".f32." in s else
               "h1, f2;" if ".f32." in s else
               ("r1, r2, r3;" if "x2" in s else "h1, h2, h3;") if s.startswith("fma") else
               ("r1, r2;" if "x2" in s else "h1, h2;"))
            for s in isa.canonical_spellings()]


ARCH = {"sm_100a": "sm_100a", "sm_75": "sm_75", "sm_80": "sm_80", "sm_90": "sm_90",
        "sm_52": "sm_75", "sm_120": "sm_120", "sm_13": "sm_75", "sm_20": "sm_75",
        "sm_37": "sm_75"}


def live_disagreements(v, t, lines):
    """Lines where check() and a live ptxas differ at (.version v, .target t): accepted by one
    and not the other, or a message check() attributes to ptxas that ptxas did not print."""
    text, first = module(v, t, lines)
    rc, per = run_ptxas(text, ARCH[t])
    found, _ = check_lines(v, t, lines)
    bad = []
    for k, line in enumerate(lines):
        want = [m for sev, m in per.get(first + k, []) if sev == "error"]
        got = found.get(k, [])
        if bool(want) != bool(got) or any(d.ptxas not in want for d in got):
            bad.append((line, want, [str(d) for d in got]))
    return bad


@needs_ptxas
@pytest.mark.parametrize("v,t", [("9.0", "sm_100a"), ("7.0", "sm_80"), ("8.1", "sm_90"),
                                 ("4.3", "sm_52"), ("8.7", "sm_120")])
def test_live_sample_against_ptxas(v, t):
    lines = _sample_lines()
    bad = live_disagreements(v, t, lines)
    assert not bad, "\n".join(map(str, bad[:20]))


@needs_ptxas
@pytest.mark.parametrize("v,t", [("1.0", "sm_13"), ("1.3", "sm_20"), ("1.4", "sm_13"),
                                 ("3.2", "sm_37")])
def test_live_cvt_below_the_recorded_matrix(v, t):
    """The recorded matrix starts at .version 4.0 / sm_50; ptxas 13.0 knows older ones (.ftz
    needs 1.4, plain f16<->f32 cvt nothing).  Every recorded cvt line, side by side."""
    if _SP is None:
        pytest.skip("tests/data/ptxas/spellings.jsonl missing")
    header, recs = _SP
    lines = [r["line"] for r in recs if r["op"] == "cvt"
             and spelling_verdict(r["spelling"]).family is not None]
    bad = live_disagreements(v, t, lines)
    assert len(lines) > 4000
    assert not bad, "\n".join(map(str, bad[:20]))


@needs_ptxas
@pytest.mark.parametrize("path", sorted(
    os.path.join(PTX_DIR, p) for p in (os.listdir(PTX_DIR) if os.path.isdir(PTX_DIR) else [])
    if p.endswith(".ptx")), ids=os.path.basename)
def test_live_nvcc_modules_against_ptxas(path):
    text = open(path).read()
    prog = ptxfp.ptx.read(text)
    rc, per = run_ptxas(text, prog.target)
    assert rc == 0 and not per
    assert ptxfp.check(text).ok
    # and a target below what the file needs: both reject the same lines
    low = {"sm_80": "sm_75", "sm_90": "sm_80", "sm_100": "sm_90"}[prog.target]
    text2 = text.replace(f".target {prog.target}", f".target {low}", 1)
    rc, per = run_ptxas(text2, low)
    want = {ln for ln, ms in per.items() if any(s == "error" for s, _ in ms)}
    got = {d.line for d in ptxfp.check(text2).errors}
    assert got == want
