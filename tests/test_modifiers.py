"""The modifier vocabulary (src/ptxfp/ptx/modifiers.py, with opcodes.py's per-release additions)
against ptxas 13.0 and 13.5: the recorded probes (tools/modifier_probe.py,
tests/data/ptxas/modifiers.json and tests/data/ptxas/13.5/modifiers.json), the checker's "Unknown modifier"
on instructions ptxfp does not model, and, where ptxas is installed, ptxas itself on
real-world modules with one modifier misspelled."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

import ptxfp
from ptxfp.ptx import modifiers, opcodes
from ptxfp.ptx.check import spelling_verdict
from ptxfp.ptx.reader import read

HERE = Path(__file__).parent
PROBE = HERE / "data" / "ptxas" / "modifiers.json"
#: the recorded probe of each ptxas release
PROBE_OF = {"13.0": PROBE, "13.5": HERE / "data" / "ptxas" / "13.5" / "modifiers.json"}
REALWORLD = HERE / "data" / "realworld"
PTXAS = shutil.which("ptxas")
sys.path.insert(0, str(HERE.parent / "tools"))


def _doc(release="13.0"):
    if not PROBE_OF[release].exists():
        pytest.skip(f"{PROBE_OF[release].relative_to(HERE)} missing")
    return json.loads(PROBE_OF[release].read_text())


def probe_mismatches(doc, release=None):
    """[(token, name, ptxas' verdict)] where opcodes.known_modifier disagrees with the
    record: a token ptxas knows after a name must be known there; one starting with a
    lowercase letter that it knows only after some names must be unknown after the others
    (those written after the generic hosts only excepted);
    the real-world and table tokens it knows after no name must be unknown after every
    name."""
    hosts = doc["hosts"]
    # written after the generic hosts only: known after every name when known after one
    alone = {t for t, o in doc["other"].items() if o.get(hosts[0], "").startswith("syntax")}
    out = []
    for tok, where in doc["known"].items():
        known_on = hosts if where == "all" else where
        out += [(tok, h, "known") for h in known_on
                if not opcodes.known_modifier(h, tok, release)]
        if where != "all" and re.match("[a-z]", tok) and tok not in alone:
            out += [(tok, h, "unknown") for h in hosts
                    if h not in where and h not in doc["other"].get(tok, {})
                    and opcodes.known_modifier(h, tok, release)]
    for tok in {t for ts in doc["unknown"].values() for t in ts}:
        if re.match("[a-z]", tok) and tok not in doc["other"]:
            out += [(tok, h, "unknown") for h in hosts
                    if opcodes.known_modifier(h, tok, release)]
    if set(hosts) != modifiers.HOSTS:
        out.append(("", "", "hosts differ"))
    return out


@pytest.mark.parametrize("release", sorted(PROBE_OF))
def test_vocabulary_is_what_ptxas_knows(release):
    doc = _doc(release)
    assert doc["ptxas"].startswith(release) and len(doc["hosts"]) >= 8
    assert probe_mismatches(doc, release) == []
    # the size of what was asked and found
    assert doc["candidates"]["count"] > 50_000 and len(modifiers.EVERYWHERE) > 300


def test_vocabulary_check_can_fail(monkeypatch):
    """Without '.sync' (known after every name), with a real-world token ptxas knows after
    no name, or with a token ptxas knows after some names only known after every name, the
    record disagrees."""
    doc = _doc()
    unknown = next(t for t in sorted(doc["unknown"]["realworld"])
                   if re.match("[a-z]", t) and t not in doc["other"])
    some = next(t for t, h in sorted(modifiers.NOT_AFTER.items())
                if set(h) - set(doc["other"].get(t, {})))
    for every in (modifiers.EVERYWHERE - {"sync"}, modifiers.EVERYWHERE | {unknown},
                  modifiers.EVERYWHERE | {some}):
        with monkeypatch.context() as m:
            m.setattr(opcodes, "EVERYWHERE", every)
            assert probe_mismatches(doc, "13.0")
    assert probe_mismatches(doc, "13.0") == []
    # and per release: 13.0 calls .multimem unknown (its record), 13.5 knows it everywhere
    assert probe_mismatches(doc, "13.5")
    assert not opcodes.known_modifier("bar", "multimem", "13.0")
    assert opcodes.known_modifier("bar", "multimem", "13.5")


def test_module_is_written_from_the_record(tmp_path):
    import modifier_probe
    out = tmp_path / "modifiers.py"
    modifier_probe.emit(_doc(), out)
    assert out.read_text() == Path(modifiers.__file__).read_text()


# ---------------------------------------------------------------------------------------------
# the checker

HEAD = (".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k(){\n"
        ".reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<4>;\n")


@pytest.mark.parametrize("stmt,col,msg", [
    ("bar.syncx 0;", 4, "Unknown modifier '.syncx'"),
    ("membar.glx;", 7, "Unknown modifier '.glx'"),
    ("ld.globalx.f32 %f1, [%rd1];", 3, "Unknown modifier '.globalx'"),
    ("ld.global.f32.L2::foo %f1, [%rd1];", 14, "Unknown modifier '.L2::foo'"),
    ("st.global.arrive.b32 [%rd1], %r1;", 10, "Unknown modifier '.arrive'"),
    ("barrier.clusterx.arrive;", 1, "Not a name of any known instruction: 'barrier.cluster'"),
    ("elect.onex.sync %r1;", 1, "Not a name of any known instruction: 'elect.one'"),
])
def test_unknown_modifier_of_unmodeled_instruction(stmt, col, msg):
    rep = ptxfp.check(HEAD + "  " + stmt + "\nret;\n}\n")
    assert [(e.line, e.col, e.ptxas) for e in rep.errors] == [(8, 2 + col, msg)]
    assert rep.errors[0].rule in ("unknown-modifier", "unknown-instruction")


@pytest.mark.parametrize("stmt", [
    "bar.sync 0;", "bar.arrive 0, 32;", "membar.gl;", "ld.global.nc.L1::no_allocate.v4.f32 "
    "{%f0, %f1, %f2, %f3}, [%rd1];", "mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r1], 8;",
    "tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, 0;",
    "barrier.cluster.arrive.aligned;", "fence.proxy.async.shared::cta;",
])
def test_known_modifiers_are_no_error(stmt):
    rep = ptxfp.check(HEAD + ".reg .b32 %f0;\n" + stmt + "\nret;\n}\n")
    assert not [e for e in rep.errors if e.rule in ("unknown-modifier", "unknown-instruction")]


# ---------------------------------------------------------------------------------------------
# ptxas on real-world modules with modifiers misspelled

def mutants(text, per_module=6):
    """The module with up to ``per_module`` modifiers of instructions ptxfp does not model
    misspelled (a letter 'q' appended: ``.global`` -> ``.globalq``), one per line, and the
    [(line, token)] misspelled."""
    lines = text.split("\n")
    done = []
    for s in read(text).statements:
        name = opcodes.known_opcode(s.opcode_spelling)
        if spelling_verdict(s.opcode_spelling).family or name not in modifiers.HOSTS \
                or any(ln == s.line for ln, _ in done):
            continue
        bad = [(off, t) for off, t in _tokens_after(s.opcode_spelling, name)
               if re.match("[a-z]", t)]
        if not bad:
            continue
        off, tok = bad[len(done) % len(bad)]
        ln = lines[s.line - 1]
        at = s.col - 1 + off + 1 + len(tok)
        assert ln[at - len(tok):at] == tok
        lines[s.line - 1] = ln[:at] + "q" + ln[at:]
        done.append((s.line, tok + "q"))
        if len(done) == per_module:
            break
    return "\n".join(lines), done


def _tokens_after(spelling, name):
    parts = spelling.split(".")
    k = name.count(".") + 1
    pos = sum(len(p) + 1 for p in parts[:k]) - 1
    out = []
    for t in parts[k:]:
        out.append((pos, t))
        pos += len(t) + 1
    return out


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name", sorted(p.name for p in REALWORLD.glob("*.ptx")))
def test_misspelled_modifiers_as_ptxas(name):
    from test_realworld import ptxas_errors
    text, done = mutants((REALWORLD / name).read_text())
    if not done:
        pytest.skip("no modifier of an unmodeled instruction")
    errors = ptxas_errors(text)
    # ptxas stops at a parse error: a misspelling that extends a longer name ptxas reads
    # by its characters (``cvta.toq.global``: ``cvta.to`` and ``q``) is one; check says
    # "Unknown modifier" there, and nothing after it is compared
    stop = min([ln for ln, m in errors if m.startswith("Parsing error")], default=10**9)
    theirs = {(ln, m) for ln, m in errors if m.startswith("Unknown modifier") and ln < stop}
    rep = ptxfp.check(text)
    ours = {(e.line, e.ptxas) for e in rep.errors if e.rule == "unknown-modifier"}
    assert {d for d in ours if d[0] < stop} == theirs
    assert {(ln, f"Unknown modifier '.{t}'") for ln, t in done if ln <= stop} <= ours
    assert len([d for d in theirs]) >= 1


def test_unknown_modifier_per_release():
    """.exclusive is new in ptxas 13.5: 13.0 says "Unknown modifier '.exclusive'" for
    ``bar.sync.exclusive 0;``, 13.5 knows the token (and calls it illegal after bar, which
    check() does not model for an instruction it does not model)."""
    text = HEAD + "bar.sync.exclusive 0;\nret;\n}\n"
    assert [d.ptxas for d in ptxfp.check(text, ptxas="13.0").errors] == [
        "Unknown modifier '.exclusive'"]
    assert not [d for d in ptxfp.check(text, ptxas="13.5").errors
                if d.rule == "unknown-modifier"]
