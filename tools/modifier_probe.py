#!/usr/bin/env python3
"""Ask ptxas which dotted tokens it knows as modifiers: the source of src/ptxfp/ptx/modifiers.py.

ptxas reads every ``.TOKEN`` after an instruction name as a modifier and reports one it does
not know as "Unknown modifier '.TOKEN'" (and goes on: ``bar.x.y 0;`` draws the message twice),
whatever the instruction; a modifier it knows but the instruction does not take draws other
messages ("Illegal modifier", "No state space qualifier expected", ...).  What it knows
depends on the instruction a little (``.mbarrier`` is unknown after ``membar``,
``.cta_group::1`` is a parse error after ``bar``), and some tokens are read into a longer name
(``bar.arrive``, ``mbarrier.arrive.expect_tx``, ``tcgen05.mma.ws``; ``.arrive`` after
``bar.x`` is an unknown modifier).  So every candidate is written after every instruction name of
src/ptxfp/ptx/opcodes.py (the *hosts*), as the statement ``HOST.CANDIDATE;``.

The candidates:

* ``strings``: every token ``[A-Za-z0-9][A-Za-z0-9_]*`` with its ``::`` parts
  (``L2::cache_hint``) and their ``::`` prefixes, in the printable strings of the ptxas
  binary (opcode_probe.binary_strings), read plainly and ROT13-decoded (ptxas keeps most of
  its PTX keywords so: ``pbyyrpgbe::n::svyy`` is ``collector::a::fill``);
* ``realworld``: every such token of tests/data/realworld/*.ptx;
* ``tables``: every such token of ptxfp's spelling tables (src/ptxfp/isa/, src/ptxfp/types.py).

Two passes per host.  *Screen*: GROUP candidates per statement (``HOST.c1.c2...;``): ptxas
names each unknown one; a statement that stops the parser is split until the candidate that
stops it is alone (its verdict on that host: ``syntax``).  Candidates that do not start with a
lowercase letter or a digit (``NaN``, ``L2``, ``F32``) are screened on GENERIC hosts only.
*Confirm*: every candidate the screen did not call unknown is written alone, ``HOST.C;``:
*known* when the statement draws no "Unknown modifier" and no "Not a name of any known
instruction" (``barrier.cluster``: the host and the candidate read as one name), else its
verdict is that message.  Module batches, the sentinel statement and the restarts after a
parse error are opcode_probe.probe_lines'.  One target (TARGET): the reading of modifiers is
the parser's, before any target is looked at.

Last, :func:`refine` checks each token known after some hosts only again, followed by another
token (a token read into a longer name, ``mul.lofoo`` as ``mul.lo`` and ``foo``, draws no
"Unknown modifier" either).

Outputs ``tests/data/ptxas/modifiers.json``: the ptxas version, the command, the target, the
hosts, the candidate counts per source and a digest of the sorted candidates (the list is
large), the ``realworld`` and ``tables`` candidates ptxas knows on no host (``unknown``), and
``known``: {token: "all" or [hosts where known]}; ``skipped``: the hosts after which even
an unknown token draws no "Unknown modifier" (``call``), with ptxas' verdict; ``other``: {token: {host: verdict}} for the
verdicts that are neither known nor unknown; ``names``: opcode_probe's verdicts on the names
of opcodes.NOT_NAMES continued inside their last token (``barrier.clusterx.arrive``: ptxas
reads ``barrier.cluster``); ``longer_names``: the dotted names ptxas reads whole beyond the
table's (``bar.arrive``, see :func:`longer_names`).  tests/test_modifiers.py compares
src/ptxfp/ptx/modifiers.py with this file.

Usage:  python tools/modifier_probe.py [--ptxas PATH] [--out FILE] [--hosts N]
Exits 0 with a message (doing nothing) if ptxas cannot be found.
"""
from __future__ import annotations

import argparse
import codecs
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

import opcode_probe as op

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "ptxas" / "modifiers.json"
TARGET = "sm_100a"
SENTINEL = "bar.zzprobe_sentinel;"
GROUP = 64
#: the hosts every candidate is screened on (the others take the lowercase ones)
GENERIC = ("bar", "ld", "cvt", "tcgen05.mma")
TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9][A-Za-z0-9_]*(?:::[A-Za-z0-9_]+)*")
LOWER_RE = re.compile(r"[a-z]")
#: the first host, whose syntax verdicts are probed alone on the others
FIRST = "bar"
MODIFIER_RE = re.compile(r"Unknown modifier '\.([^']*)'")
MAX_LEN = 40


def tokens(text):
    """The candidate tokens of a text: each token with the ``::`` prefixes of its parts."""
    out = set()
    for m in TOKEN_RE.finditer(text):
        parts = m.group(0).split("::")
        for k in range(1, len(parts) + 1):
            t = "::".join(parts[:k])
            if len(t) <= MAX_LEN and all(parts[:k]):
                out.add(t)
    return out


def candidates(ptxas):
    """{source: set of tokens} (see the module's docstring)."""
    strings = set()
    for run in op.binary_strings(ptxas):
        for s in (run.decode("ascii"), codecs.encode(run.decode("ascii"), "rot13")):
            # no token starting with a digit: in the strings they are mostly numbers and
            # junk that stops the parser (``.9st`` is ``.9`` and ``st``), each a module run
            strings |= {t for t in tokens(s) if not t[0].isdigit()}
    realworld = set()
    for p in sorted((ROOT / "tests" / "data" / "realworld").glob("*.ptx")):
        realworld |= tokens(p.read_text())
    tables = set()
    src = ROOT / "src" / "ptxfp"
    for p in sorted((src / "isa").glob("*.py")) + [src / "core" / "types.py"]:
        tables |= tokens(p.read_text())
    return {"strings": strings, "realworld": realworld, "tables": tables}


def digest(names):
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()


def _sentinel_seen(diags):
    return any(MODIFIER_RE.match(m) for _, m in diags)


def screen(ptxas, host, cands, target=TARGET):
    """{candidate: 'unknown' | 'syntax: MESSAGE' | 'maybe'} for the candidates written
    GROUP to a statement after ``host``."""
    out = {}
    groups = [cands[i:i + GROUP] for i in range(0, len(cands), GROUP)]
    while groups:
        res = op.probe_lines(ptxas, [host + "".join("." + c for c in g) + ";" for g in groups],
                             target, SENTINEL, _sentinel_seen, batch=500)
        again = []
        for k, g in enumerate(groups):
            diags = res[k]
            fatal = [m for sev, m in diags if sev == "fatal"] if not isinstance(diags, int) \
                else [f"crash ({diags})"]
            if fatal:
                if len(g) == 1:
                    out[g[0]] = f"syntax: {fatal[0]}"
                else:
                    again += [g[:len(g) // 2], g[len(g) // 2:]]
                continue
            named = {u.group(1) for _, m in diags for u in [MODIFIER_RE.match(m)] if u}
            for c in g:
                out[c] = "unknown" if c in named else "maybe"
        groups = again
    return out


def verdict(cand, diags):
    """The verdict on ``HOST.CANDIDATE;`` alone."""
    if isinstance(diags, int):
        return f"crash ({diags})"
    for sev, m in diags:
        if sev == "fatal":
            return f"syntax: {m}"
    for _, m in diags:
        u = MODIFIER_RE.match(m)
        if u:
            return "unknown" if u.group(1) == cand else f"unknown as '.{u.group(1)}'"
        if op.UNKNOWN_RE.match(m):
            return f"name: {m}"
    return "known"


def confirm(ptxas, host, cands, target=TARGET):
    """{candidate: verdict} for ``HOST.CANDIDATE;`` one per statement."""
    res = op.probe_lines(ptxas, [f"{host}.{c};" for c in cands], target, SENTINEL,
                         _sentinel_seen)
    return {c: verdict(c, res[k]) for k, c in enumerate(cands)}


def probe_host(ptxas, host, cands, alone=(), target=TARGET):
    """{candidate: verdict} on one host: the screen's, then the confirmation's; the
    candidates ``alone`` (those that stop the parser on the first host: a screen would split
    its statements down to them) are written alone at once."""
    v = screen(ptxas, host, cands, target)
    v.update(confirm(ptxas, host, [c for c, x in v.items() if x == "maybe"] + list(alone),
                     target))
    return v


def names(ptxas, target=TARGET):
    """ptxas' verdicts (opcode_probe.probe) on each name of opcodes.NOT_NAMES continued
    inside its last token (``barrier.clusterx.arrive``, ``elect.one_y``): the name it reads
    is the longest whose characters the statement starts with."""
    sys.path.insert(0, str(ROOT / "src"))
    from ptxfp.ptx import opcodes
    stmts = [n + tail for n in opcodes.NOT_NAMES for tail in ("x", "x.arrive", "_y.sync")]
    return op.probe(ptxas, stmts, target)


def longer_names(ptxas, target=TARGET):
    """{dotted name: verdict} for the dotted strings of the opcode probe that ptxas knows
    (tests/data/ptxas/opcodes.json) and that are longer than their table name: ``name`` where
    the statement ``NAME;`` draws no "Unknown modifier" (``bar.arrive``,
    ``mbarrier.arrive.expect_tx``: ptxas reads these whole, as names; ``.arrive`` after
    ``bar.x`` is an unknown modifier), else ptxas' message (``bar.arri``)."""
    sys.path.insert(0, str(ROOT / "src"))
    from ptxfp.ptx import opcodes
    rec = json.loads((ROOT / "tests" / "data" / "ptxas" / "opcodes.json").read_text())
    cands = sorted(n for n, v in rec["strings"]["verdicts"].items()
                   if v == "known" and "." in n and opcodes.known_opcode(n) not in (None, n))
    res = op.probe_lines(ptxas, [f"{n};" for n in cands], target, SENTINEL, _sentinel_seen)
    out = {}
    for k, n in enumerate(cands):
        bad = [m for sev, m in res[k] if sev == "fatal" or MODIFIER_RE.match(m)] \
            if not isinstance(res[k], int) else [f"crash ({res[k]})"]
        out[n] = bad[0] if bad else "name"
    return out


def refine(ptxas, doc, target=TARGET):
    """Check again each (token, host) the record knows after some hosts only: ptxas reads a
    name as the longest one its characters start with, so ``mul.lofoo;`` is ``mul.lo`` and
    an operand ``foo`` and draws no "Unknown modifier" (nor does ``cvta.toX``).  A modifier
    ends where the next ``.`` starts one, so ``HOST.TOKEN.zzprobe_token;`` must draw "Unknown
    modifier '.zzprobe_token'" and none for the token; a pair that does not (``Unknown field
    '.zzprobe_token'``) moves from ``known`` to ``other`` as ``prefix: MESSAGE``."""
    pairs = [(t, h) for t, hs in doc["known"].items() if hs != "all" for h in hs]
    res = op.probe_lines(ptxas, [f"{h}.{t}.zzprobe_token;" for t, h in pairs], target,
                         SENTINEL, _sentinel_seen)
    for k, (t, h) in enumerate(pairs):
        diags = res[k] if not isinstance(res[k], int) else [("fatal", f"crash ({res[k]})")]
        named = [u.group(1) for _, m in diags for u in [MODIFIER_RE.match(m)] if u]
        if named != ["zzprobe_token"]:
            doc["known"][t].remove(h)
            doc["other"].setdefault(t, {})[h] = "prefix: " + "; ".join(m for _, m in diags)
    doc["known"] = {t: hs for t, hs in doc["known"].items() if hs}
    doc["other"] = {t: doc["other"][t] for t in sorted(doc["other"])}
    doc["refined"] = len(pairs)
    return doc


def hosts():
    sys.path.insert(0, str(ROOT / "src"))
    from ptxfp.ptx import opcodes
    return list(opcodes.OPCODES)


MODULE = ROOT / "src" / "ptxfp" / "ptx" / "modifiers.py"

MODULE_HEAD = '''"""PTX's modifier vocabulary: every dotted token ptxas {version} reads as a modifier, as data.

Source: a probe of ptxas {version} (tools/modifier_probe.py, recorded in
tests/data/ptxas/modifiers.json; this file is written from that record by
``python tools/modifier_probe.py --emit``).  The probe wrote {count} candidate tokens (the
identifier-like strings of the ptxas binary, plain and ROT13-decoded, every token of
tests/data/realworld/*.ptx and of ptxfp's spelling tables) after each of the {hosts}
instruction names of opcodes.py (:data:`HOSTS`; after the others nothing is checked), as
``NAME.TOKEN;``, and kept the tokens for which ptxas did
not say "Unknown modifier '.TOKEN'".  Most are known after every name (:data:`EVERYWHERE`);
a few not after some names (:data:`NOT_AFTER`: ``.mbarrier`` and ``.cc`` not after
``membar`` or ``ret``).  ``.arrive`` after ``bar`` and ``.expect_tx`` after ``mbarrier.arrive``
are no modifiers but longer names ptxas reads whole (:data:`LONGER_NAMES`).  Tokens not starting with a lowercase letter (``L2``, ``NaN``)
were written after a few names only ({generic}) and count as known after every name when
known after one of those; tokens starting with a digit (``16x64b``, ``2d``) only where the
real-world modules or the tables have them, so they are not checked.

Data only: opcodes.known_modifier and opcodes.unknown_modifiers read it.
"""

from __future__ import annotations

__all__ = ["EVERYWHERE", "NOT_AFTER", "HOSTS", "LONGER_NAMES", "SOURCE"]

SOURCE = "a probe of ptxas {version} (tools/modifier_probe.py, tests/data/ptxas/modifiers.json)"

'''

def _wrap(words, indent=""):
    lines, line = [], indent
    for w in words:
        if len(line) + len(w) + 1 > 96:
            lines.append(line.rstrip())
            line = indent
        line += w + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


def emit(doc, path=MODULE):
    """Write src/ptxfp/ptx/modifiers.py from a probe record."""
    # written after GENERIC hosts only: those not starting with a lowercase letter, and those
    # that stop the parser after the first host (``cta_group::1`` after ``bar``)
    alone = {c for c, o in doc["other"].items() if o.get(FIRST, "").startswith("syntax")}
    wide = {c for c in doc["known"] if not LOWER_RE.match(c) or c in alone}
    every = sorted(c for c, h in doc["known"].items() if h == "all" or c in wide)
    # a token known after some hosts only: the hosts after which ptxas calls it unknown
    only = {c: sorted(set(doc["hosts"]) - set(h))
            for c, h in sorted(doc["known"].items()) if h != "all" and c not in wide}
    longer = sorted(n for n, v in doc["longer_names"].items() if v == "name")
    text = MODULE_HEAD.format(version=doc["ptxas"], count=doc["candidates"]["count"],
                              hosts=len(doc["hosts"]), generic=", ".join(doc["generic"]))
    text += ("#: tokens ptxas knows as modifiers after every instruction name\n"
             "EVERYWHERE = frozenset(\"\"\"\n" + _wrap(every) + "\n\"\"\".split())\n\n")
    # a list of hosts that several tokens share is written once, as _NOT_AFTER_<n>
    counts = Counter(tuple(h) for h in only.values())
    shared = {h: f"_NOT_AFTER_{i}" for i, h in
              enumerate(h for h in counts if counts[h] > 1 and len(h) >= 12)}
    for h, name in shared.items():
        text += (f"#: the names after which several tokens of NOT_AFTER are unknown\n"
                 f"{name} = frozenset(\"\"\"\n{_wrap(list(h))}\n\"\"\".split())\n\n")
    text += ("#: tokens ptxas knows as modifiers after every instruction name of HOSTS but these\n"
             "NOT_AFTER = {\n")
    for c, h in only.items():
        if tuple(h) in shared:
            text += f"    {c!r}: {shared[tuple(h)]},\n"
        elif len(h) < 12:
            text += f"    {c!r}: frozenset({_wrap(h)!r}.split()),\n"
        else:
            text += f"    {c!r}: frozenset(\"\"\"\n{_wrap(h, '        ')}\n\"\"\".split()),\n"
    text += "}\n\n#: dotted names ptxas reads whole beyond opcodes.py's (their tokens are no modifiers)\n"
    text += "LONGER_NAMES = tuple(\"\"\"\n" + _wrap(longer) + "\n\"\"\".split())\n"
    text += "\n#: the instruction names the probe wrote tokens after\n"
    text += "HOSTS = frozenset(\"\"\"\n" + _wrap(doc["hosts"]) + "\n\"\"\".split())\n"
    Path(path).write_text(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--hosts", type=int, default=0, help="probe only the first N hosts")
    ap.add_argument("--emit", action="store_true",
                    help="write src/ptxfp/ptx/modifiers.py from the file at --out")
    ap.add_argument("--refine", action="store_true",
                    help="only the refinement (see refine) of the record at --out")
    ap.add_argument("--names", action="store_true",
                    help="probe only the names (NOT_NAMES continued, longer names), into --out")
    args = ap.parse_args(argv)
    if args.emit:
        emit(json.loads(Path(args.out).read_text()))
        return 0
    ptxas = op.ptxas_path(args.ptxas)
    if ptxas is None:
        print("ptxas not found: nothing probed")
        return 0
    if args.names:
        doc = json.loads(Path(args.out).read_text())
        doc["names"] = names(ptxas)
        doc["longer_names"] = longer_names(ptxas)
        Path(args.out).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
        return 0
    if args.refine:
        doc = refine(ptxas, json.loads(Path(args.out).read_text()))
        Path(args.out).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
        return 0
    src = candidates(ptxas)
    every = sorted(set().union(*src.values()))
    lower = [c for c in every if LOWER_RE.match(c)]
    hs = hosts()[:args.hosts] if args.hosts else hosts()
    used = sorted({op_name for p in (ROOT / "tests" / "data" / "realworld").glob("*.ptx")
                   for op_name in _names_used(p.read_text())})
    order = [FIRST, *GENERIC, *used]
    hs = [h for h in dict.fromkeys(order) if h in hs] + [h for h in hs if h not in order]
    # a host after which an unknown token is no "Unknown modifier" cannot be probed so
    # (``call.x;`` is a parse error, as ``call;`` is): left out, with ptxas' verdict
    skipped = {h: v for h in hs for v in [confirm(ptxas, h, ["zzprobe_token"])["zzprobe_token"]]
               if v != "unknown"}
    hs = [h for h in hs if h not in skipped]
    known, other, alone = {}, {}, set()
    for n, host in enumerate(hs):
        pool = every if host in GENERIC else lower
        v = probe_host(ptxas, host, [c for c in pool if c not in alone],
                       [c for c in pool if c in alone] if host in GENERIC else [])
        if not alone:
            alone = {c for c, x in v.items() if x.startswith("syntax")}
        for c, x in v.items():
            if x == "known":
                known.setdefault(c, []).append(host)
            elif x != "unknown":
                other.setdefault(c, {})[host] = x
        print(f"{n + 1}/{len(hs)} {host}: {sum(x == 'known' for x in v.values())} known",
              file=sys.stderr)
        write(args.out, ptxas, src, every, lower, hs[:n + 1], known, other, skipped)
    doc = refine(ptxas, json.loads(Path(args.out).read_text()))
    Path(args.out).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    print(f"{len(every)} candidates, {len(doc['known'])} known on some host", file=sys.stderr)
    return 0


def _names_used(text):
    sys.path.insert(0, str(ROOT / "src"))
    from ptxfp.ptx import opcodes
    from ptxfp.ptx.reader import read
    return {opcodes.known_opcode(s.opcode_spelling) for s in read(text).statements} - {None}


def write(out, ptxas, src, every, lower, hs, known, other, skipped):
    """The record of the hosts probed so far (written after each: the probe is long)."""
    everywhere = [c for c, h in known.items()
                  if len(h) == len(hs) or not LOWER_RE.match(c)
                  and set(h) == set(GENERIC) & set(hs)]
    doc = {
        "ptxas": op.ptxas_version(ptxas),
        "command": f"ptxas -arch {TARGET} m.ptx -o /dev/null (statements HOST.CANDIDATE;)",
        "target": TARGET, "group": GROUP, "hosts": hs, "generic": list(GENERIC),
        "skipped": skipped,
        "candidates": {"count": len(every), "lower": len(lower), "sha256": digest(every),
                       "sources": {k: len(s) for k, s in src.items()}},
        "unknown": {k: sorted(c for c in src[k] if c not in known) for k in ("realworld",
                                                                          "tables")},
        "known": {c: "all" if c in everywhere else sorted(h) for c, h in sorted(known.items())},
        "other": {c: other[c] for c in sorted(other)},
    }
    if len(hs) == 1:
        doc["names"], doc["longer_names"] = names(ptxas), longer_names(ptxas)
    else:
        prev = json.loads(Path(out).read_text())
        doc["names"], doc["longer_names"] = prev["names"], prev.get("longer_names", {})
    Path(out).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
