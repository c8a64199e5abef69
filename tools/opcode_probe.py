#!/usr/bin/env python3
"""Ask ptxas which instruction names it knows: the completeness proof of src/ptxfp/ptx/opcodes.py.

ptxas reports an instruction name it does not know as "Not a name of any known instruction:
'NAME'" on that statement's line.  Every candidate is written as a statement ``CANDIDATE;``
inside an ``.entry`` (thousands per module, one per line) for each target of TARGETS; a
candidate whose line draws that message is *unknown*, one whose line stops the parser
("fatal : Parsing error near ...", the rest of the module is then probed anew) is *syntax* with
ptxas' message (``cctl;``: "unrecognized instruction", ``call;``: "syntax error" at the ``;``),
any other candidate is *known* (it may draw other errors, about its types or operands), unless
it is a *prefix*: ptxas reads a name as the longest one its characters start with and the rest
as an operand (``mul24.load;`` is ``mul24.lo ad;``), seen as a parse error at the operand of
``mul24.load %r1;`` where ``mul24.lo %r1;`` has none.  A
sentinel name closes every module and must be reported unknown, so a module whose errors were
cut short is probed again in halves; a candidate on which ptxas crashes (``_jcall;``
segfaults) is found so, alone, and is *crash*.

The candidates:

* ``strings``: every lowercase identifier-like token (``[a-z_][a-z0-9_]*``, dotted parts
  allowed, 2-48 characters) in the printable strings of the ptxas binary, with every dotted
  prefix of each (``cp.async.bulk.tensor`` gives ``cp``, ``cp.async``, ...), plus the table's
  names and their prefixes and the manual's instruction names;
* ``short``: every identifier ``[a-z][a-z0-9_]{0,3}`` (1-4 characters, about 1.4 million):
  ptxas builds short names in code, not as strings (``add`` is no string of the binary);
* ``qualified``: every single-token ``strings`` candidate that ptxas calls unknown alone
  (``mul24``), with every qualifier of QUALIFIERS appended (``mul24.lo``): a name known only
  with a qualifier (probed on the first target only).

Outputs ``tests/data/ptxas/opcodes.json``: the ptxas version, the targets, for the ``strings``
candidates every verdict (``known``, ``unknown``, ``unknown as 'NAME'`` where ptxas names more
than the first token, ``syntax: MESSAGE``, ``prefix: ...``, ``crash (RC)``), and for ``short``
and ``qualified`` the parameters, the known names and the verdicts other than ``known`` and
``unknown`` (``not_unknown``; every other candidate of those spaces is unknown).  A name is
known when ptxas knows it on any target; ``by_target`` lists the ones not known on every
target.  tests/test_realworld.py compares src/ptxfp/ptx/opcodes.py with this file.

Usage:  python tools/opcode_probe.py [--ptxas PATH] [--out FILE] [--quick]
Exits 0 with a message (doing nothing) if ptxas cannot be found.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "ptxas" / "opcodes.json"
TARGETS = ("sm_100a", "sm_90a", "sm_120a", "sm_121a")
SENTINEL = "zzprobe_sentinel"
HEAD = ".version 9.0\n.target {target}\n.address_size 64\n.entry probe() {{\n.reg .b32 %r<2>;\n"
OPERAND = " %r1"                   # the second statement form: ``NAME %r1;``
LINE_RE = re.compile(r"^ptxas .*?, line (\d+); (error|fatal)\s*: (.*)$")
UNKNOWN_RE = re.compile(r"Not a name of any known instruction: '(.*)'")
TOKEN_RE = re.compile(rb"(?<![A-Za-z0-9_.])[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*")
SHORT_FIRST = string.ascii_lowercase
SHORT_REST = string.ascii_lowercase + string.digits + "_"

#: the manual's names (PTX ISA 9.0, 9.7) that ptxas might build in code; all are also candidates
MANUAL = """add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi
szext bmsk dp4a dp2a addc subc madc testp copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh set
setp selp slct and or xor not cnot lop3 shf shl shr mov shfl prmt ld ldu st prefetch prefetchu
applypriority discard createpolicy isspacep cvta cvt mapa getctarank tex tld4 txq istypep suld
sust sured suq bra brx call ret exit bar barrier membar fence atom red vote match activemask
redux griddepcontrol elect mbarrier wmma mma ldmatrix stmatrix movmatrix wgmma tcgen05
stacksave stackrestore alloca vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2
vavrg2 vabsdiff2 vmin2 vmax2 vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4 brkpt
nanosleep pmevent trap setmaxnreg multimem tensormap clusterlaunchcontrol cp st.async st.bulk
red.async""".split()

#: qualifiers appended to names ptxas calls unknown alone (the second tokens of the table's
#: qualified names, and the manual's common qualifiers)
QUALIFIERS = """lo hi wide l r b p inc dec cvt range fractional load store mma arrive wait sync
async cc cluster try_cancel query_cancel a c d global shared local const param generic f16
f32 f64 b16 b32 b64 u32 s32 full approx rn rz rm rp ftz sat relaxed acquire release aligned
cta gpu sys uni idx pack mask level base grad op red init inval test_wait try_wait warp proxy
alloc dealloc commit fence shift cp ld st""".split()


def ptxas_path(given=None):
    return given or shutil.which("ptxas") or (
        "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


def ptxas_version(ptxas):
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return f"{m.group(1)} ({m.group(2)})" if m else out.strip().splitlines()[-1]


# --------------------------------------------------------------------------------------------
# the probe

def run_module(ptxas, lines, target, head=HEAD):
    """ptxas' diagnostics on a module of ``head`` and ``lines`` (one statement each) closed
    by ``}``: ({index of the line: [(severity, message)]}, ptxas' return code)."""
    text = head.format(target=target) + "".join(f"{s}\n" for s in lines) + "}\n"
    first = head.format(target=target).count("\n") + 1
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "m.ptx"
        src.write_text(text)
        r = subprocess.run([ptxas, "-arch", target, str(src), "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
    out = {}
    for ln in (r.stdout + r.stderr).splitlines():
        m = LINE_RE.match(ln)
        if m and 0 <= int(m.group(1)) - first <= len(lines):
            out.setdefault(int(m.group(1)) - first, []).append((m.group(2), m.group(3)))
    return out, r.returncode


def probe_lines(ptxas, lines, target, sentinel, sentinel_seen, batch=2000, head=HEAD):
    """ptxas' diagnostics on every statement of ``lines``, written ``batch`` to a module and
    closed by the ``sentinel`` statement, whose diagnostics must satisfy ``sentinel_seen``
    (else ptxas cut its errors short: the module is probed again in halves).  A line that
    stops the parser (a ``fatal``) is the last of its module, the rest is probed anew; a line
    on which ptxas crashes is found so, alone.  Returns {index: [(severity, message)]}, or
    {index: return code} for a crash."""
    result = {}
    todo = [(lo, min(lo + batch, len(lines))) for lo in range(0, len(lines), batch)]
    while todo:
        lo, hi = todo.pop()
        if lo >= hi:
            continue
        diags, rc = run_module(ptxas, lines[lo:hi] + [sentinel], target, head)
        n = hi - lo
        stop = next((k for k in sorted(diags) if k < n
                     and any(sev == "fatal" for sev, _ in diags[k])), None)
        if rc < 0 or (stop is None and not sentinel_seen(diags.get(n, []))):
            if n == 1:
                if rc < 0:                         # ptxas crashed (``_jcall;`` segfaults)
                    result[lo] = rc
                    continue
                raise RuntimeError(f"ptxas gave no verdict on {lines[lo]!r} ({target})")
            todo += [(lo, lo + n // 2), (lo + n // 2, hi)]
            continue
        end = n if stop is None else stop + 1
        for k in range(end):
            result[lo + k] = diags.get(k, [])
        todo.append((lo + end, hi))
    return result


def _opcode_verdict(name, diags):
    if isinstance(diags, int):
        return f"crash ({diags})"
    for sev, msg in diags:
        if sev == "fatal":                           # the parser stops here
            return f"syntax: {msg}"
    for sev, msg in diags:
        u = UNKNOWN_RE.match(msg)
        if u:
            first = name.split(".", 1)[0]
            return "unknown" if u.group(1) == first else f"unknown as '{u.group(1)}'"
    return "known"


def _sentinel_unknown(diags):
    return any(UNKNOWN_RE.match(msg) for _, msg in diags)


def probe(ptxas, names, target, batch=2000, operand=""):
    """{name: 'known' | 'unknown' | "unknown as 'NAME'" | 'syntax: MESSAGE' | 'crash (RC)'}
    for one target, each name written as the statement ``NAME;`` (``NAME %r1;`` with
    ``operand``); the known ones checked again by :func:`refine`."""
    names = list(dict.fromkeys(names))
    res = probe_lines(ptxas, [f"{n}{operand};" for n in names], target,
                      f"{SENTINEL}{operand};", _sentinel_unknown, batch)
    verdicts = {n: _opcode_verdict(n, res[k]) for k, n in enumerate(names)}
    if not operand:
        verdicts.update(refine(ptxas, [n for n, v in verdicts.items() if v == "known"], target))
    return verdicts


def refine(ptxas, names, target):
    """The verdicts of names ptxas knows as ``NAME;`` that are no names: ptxas reads
    characters as a name when they start with one (``mul24.load`` as ``mul24.lo`` and an
    operand ``ad``, ``sust.b16`` as ``sust.b`` and ``16``), so ``NAME %r1;`` is a parse error
    at the ``%r1`` ("prefix"), where a name (``mul24.lo %r1;``) draws no parse error."""
    out = {}
    for n, v in probe(ptxas, names, target, operand=OPERAND).items():
        if v.startswith("syntax") and f"near '{OPERAND.strip()}'" in v:
            out[n] = "prefix: ptxas reads a shorter name, the rest as an operand"
    return out


def probe_targets(ptxas, names, targets=TARGETS, **kw):
    """{name: verdict} (known on any target wins) and {name: [targets where known]} for the
    names not known on every target."""
    per = {t: probe(ptxas, names, t, **kw) for t in targets}
    merged, partial = {}, {}
    for n in dict.fromkeys(names):
        vs = [per[t][n] for t in targets]
        merged[n] = "known" if "known" in vs else vs[0]
        known_on = [t for t in targets if per[t][n] == "known"]
        if known_on and len(known_on) < len(targets):
            partial[n] = known_on
    return merged, partial


# --------------------------------------------------------------------------------------------
# the candidates

def _prefixes(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def binary_strings(ptxas):
    """The printable strings (runs of 2 or more characters) of the ptxas binary, as bytes;
    through a wrapper script (``exec /usr/local/cuda-13.0/bin/ptxas "$@"``) to the binary."""
    data = Path(os.path.realpath(ptxas)).read_bytes()
    if len(data) < 1_000_000:                       # a wrapper script: find the binary it runs
        m = re.search(rb"(/\S+/ptxas)\b", data)
        if m:
            data = Path(m.group(1).decode()).read_bytes()
    return [run.group(0) for run in re.finditer(rb"[\x20-\x7e]{2,}", data)]


def string_candidates(ptxas):
    """The identifier-like tokens of the binary's printable strings, with their dotted
    prefixes, plus the table's names and the manual's (sorted)."""
    toks = set()
    for run in binary_strings(ptxas):
        for m in TOKEN_RE.finditer(run):
            t = m.group(0).decode()
            if 2 <= len(t) <= 48 and not t.endswith("."):
                toks.add(t)
    sys.path.insert(0, str(ROOT / "src"))
    from ptxfp.ptx import opcodes
    release = ptxas_version(ptxas).split()[0]       # the table's names as that release has them
    names = opcodes.opcodes_of(release) if re.fullmatch(r"\d+\.\d+", release) \
        else opcodes.OPCODES
    toks |= set(names) | set(MANUAL)
    out = set()
    for t in toks:
        out.update(_prefixes(t))
    out.discard(SENTINEL)
    return sorted(out)


def short_candidates(longest=4):
    for n in range(1, longest + 1):
        for first in SHORT_FIRST:
            for rest in itertools.product(SHORT_REST, repeat=n - 1):
                yield first + "".join(rest)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--quick", action="store_true", help="short names of up to 3 characters")
    args = ap.parse_args(argv)
    ptxas = ptxas_path(args.ptxas)
    if ptxas is None:
        print("ptxas not found: nothing probed")
        return 0
    doc = {"ptxas": ptxas_version(ptxas), "targets": list(TARGETS), "sentinel": SENTINEL}

    cands = string_candidates(ptxas)
    verdicts, partial = probe_targets(ptxas, cands)
    doc["strings"] = {"count": len(cands), "verdicts": verdicts, "by_target": partial}
    print(f"strings: {len(cands)} candidates, "
          f"{sum(v == 'known' for v in verdicts.values())} known", file=sys.stderr)

    longest = 3 if args.quick else 4
    short = list(short_candidates(longest))
    sv, spartial = probe_targets(ptxas, short)
    doc["short"] = {"pattern": f"[a-z][a-z0-9_]{{0,{longest - 1}}}", "count": len(short),
                    "known": sorted(n for n, v in sv.items() if v == "known"),
                    "not_unknown": {n: v for n, v in sorted(sv.items())
                                    if v not in ("known", "unknown")},
                    "by_target": spartial}
    print(f"short: {len(short)} candidates, {len(doc['short']['known'])} known", file=sys.stderr)

    bases = sorted(n for n, v in verdicts.items() if "." not in n and v == "unknown")
    quals = sorted(set(QUALIFIERS))
    qual = [f"{b}.{q}" for b in bases for q in quals]
    qv, qpartial = probe_targets(ptxas, qual, targets=TARGETS[:1], batch=5000)
    doc["qualified"] = {"target": TARGETS[0], "bases": len(bases), "qualifiers": quals,
                        "count": len(qual),
                        "known": sorted(n for n, v in qv.items() if v == "known"),
                        "not_unknown": {n: v for n, v in sorted(qv.items())
                                        if v not in ("known", "unknown")}}
    print(f"qualified: {len(qual)} candidates, {len(doc['qualified']['known'])} known",
          file=sys.stderr)

    Path(args.out).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
