"""Real-world modules (tests/data/realworld: nvcc for sm_80/sm_90a/sm_100a, Triton 3.9, one
hand-written module): every file is read, checked with no error where ptxas accepts it, and
every modelled instruction in it is checked; a misspelled opcode in each is the error ptxas
reports.  Expected verdicts come from ptxas 13.0: live where it is installed, else from
tests/data/realworld/verdicts.json (``python tests/test_realworld.py --record`` rewrites it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).parent
DATA = HERE / "data" / "realworld"
VERDICTS = DATA / "verdicts.json"
FILES = sorted(p.name for p in DATA.glob("*.ptx"))
PTXAS = shutil.which("ptxas")

if __name__ != "__main__":
    import ptxfp
    from ptxfp.ptx import opcodes
    from ptxfp.ptx.check import spelling_verdict
    from ptxfp.ptx.reader import read


# ---------------------------------------------------------------------------------------------
# ptxas

def _target(text):
    return re.search(r"^\s*\.target\s+(\w+)", text, re.M).group(1)


def ptxas_errors(text):
    """[(line, message)] of ptxas' errors on a module (ptxas 13.0)."""
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "m.ptx"
        src.write_text(text)
        r = subprocess.run([PTXAS, "-arch", _target(text), str(src), "-o", str(Path(d) / "m.o")],
                           capture_output=True, text=True, timeout=120)
    out = []
    for ln in (r.stdout + r.stderr).splitlines():
        m = re.match(r"ptxas .*?, line (\d+); (?:error|fatal)\s*: (.*)", ln)
        if m:
            out.append((int(m.group(1)), m.group(2).strip()))
    return out


_HALF = re.compile(r"(?:add|sub|mul|fma)\.[\w.]*(?:f16|bf16)(?:x2)?\s")


def mutant(text, half=False):
    """The module with one instruction misspelled (its first opcode token doubled in its last
    letter: 'mov' -> 'movv'), its line number and the misspelled word: the first instruction
    of the first function body, or with ``half`` the first half-precision add/sub/mul/fma (the
    instructions ptxfp models; nvcc writes them as '{fma.rn.f16 %rs1,...')."""
    lines = text.split("\n")
    inside = False
    for k, ln in enumerate(lines):
        if ln.startswith("{"):
            inside = True
            continue
        m = re.match(r"(\s*\{?\s*(?:@!?%\w+\s+)?)([a-z][a-z0-9_]*)([.\s])", ln)
        if not (inside and m) or ln.strip().startswith((".", "//", "$")):
            continue
        if ln.strip().startswith(("{", "}")) and not half:
            continue
        if half and not _HALF.match(ln[m.start(2):]):
            continue
        word = m.group(2)
        lines[k] = m.group(1) + word + word[-1] + ln[m.end(2):]
        return "\n".join(lines), k + 1, word + word[-1]
    return None, None, None


def record():
    doc = {"ptxas": "13.0 (V13.0.88)", "files": {}}
    for name in FILES:
        text = (DATA / name).read_text()
        entry = {"errors": ptxas_errors(text)}
        for key, half in (("mutant", False), ("mutant_half", True)):
            bad, line, word = mutant(text, half)
            if bad is not None:
                entry[key] = {"line": line, "word": word, "errors": ptxas_errors(bad)}
        doc["files"][name] = entry
    VERDICTS.write_text(json.dumps(doc, indent=1) + "\n")


# ---------------------------------------------------------------------------------------------
# the tests

def _recorded():
    return json.loads(VERDICTS.read_text())


# the opcode probe (tools/opcode_probe.py, recorded in tests/data/ptxas/opcodes.json)

PROBE = HERE / "data" / "ptxas" / "opcodes.json"
#: the recorded probe of each ptxas release (13.5: tools/opcode_probe.py --ptxas 13.5 --out ...)
PROBE_OF = {"13.0": PROBE, "13.5": HERE / "data" / "ptxas" / "13.5" / "opcodes.json"}
sys.path.insert(0, str(HERE.parent / "tools"))


def _probe_record(release="13.0"):
    path = PROBE_OF[release]
    if not path.exists():
        pytest.skip(f"{path.relative_to(HERE)} missing")
    return json.loads(path.read_text())


def _by_first(names):
    out = {}
    for n in names:
        out.setdefault(n.split(".", 1)[0], []).append(tuple(n.split(".")))
    return out


def _mismatches(verdicts, release=None):
    """[(name, ptxas' verdict, the table's)] where they disagree: a name ptxas knows must be
    known, one it calls unknown ("unknown as 'NAME'" where it names more than the first
    token) must be unknown under that name; a statement ptxas cannot parse (``call;``, a
    ``syntax`` verdict) or crashes on asks nothing."""
    out = []
    for n, v in verdicts.items():
        known = opcodes.known_opcode(n, release)
        if v == "known" and not known:
            out.append((n, v, "unknown"))
        elif v.startswith("unknown"):
            m = re.fullmatch(r"unknown as '(.*)'", v)
            name = m.group(1) if m else n.split(".", 1)[0]
            if known or opcodes.unknown_name(n) != name:
                out.append((n, v, known or f"unknown as '{opcodes.unknown_name(n)}'"))
    return out


def opcode_probe_mismatches(doc, release=None):
    """The disagreements of opcodes.py with a recorded probe: the ``strings`` candidates one
    by one; the ``short`` space (every name of up to 4 characters) as the set of names known
    in it; the ``qualified`` space (unknown single names with a qualifier) likewise."""
    out = _mismatches(doc["strings"]["verdicts"], release)
    names = opcodes.opcodes_of(release)
    out += [(n, doc["strings"]["verdicts"].get(n, "not probed"), "in the table")
            for n in names
            if doc["strings"]["verdicts"].get(n, "unknown").startswith("unknown")]
    short = doc["short"]
    table = {n for n in names if re.fullmatch(short["pattern"], n)}
    out += [(n, "known", "unknown") for n in sorted(set(short["known"]) - table)]
    out += [(n, "unknown", "known")
            for n in sorted(table - set(short["known"]) - set(short["not_unknown"]))]
    q = doc["qualified"]
    bases = {n for n, v in doc["strings"]["verdicts"].items() if "." not in n and v == "unknown"}
    heads = {n.split(".", 1)[0] for n in names}
    table = {f"{b}.{x}" for b in bases & heads for x in q["qualifiers"]
             if opcodes.known_opcode(f"{b}.{x}", release)}
    assert q["bases"] == len(bases)
    out += [(n, "known", "unknown") for n in sorted(set(q["known"]) - table)]
    out += [(n, "unknown", "known") for n in sorted(table - set(q["known"]))]
    return out


@pytest.fixture(scope="module")
def verdicts():
    return _recorded()


def _ptxas(name, verdicts, which="errors", text=None):
    if PTXAS is not None and text is not None:
        return [tuple(e) for e in ptxas_errors(text)]
    entry = verdicts["files"][name]
    entry = entry if which == "errors" else entry[which]
    return [tuple(e) for e in entry["errors"]]


def test_every_file_is_recorded(verdicts):
    assert sorted(verdicts["files"]) == FILES and len(FILES) >= 10
    assert sum(p.stat().st_size for p in DATA.iterdir()) < 2_000_000


@pytest.mark.parametrize("name", FILES)
def test_module_reads_and_checks_as_ptxas(name, verdicts):
    text = (DATA / name).read_text()
    expected = _ptxas(name, verdicts, text=text)
    assert expected == []                                 # ptxas 13.0 accepts every file
    rep = ptxfp.check(text)
    assert rep.errors == [], [str(d) for d in rep.errors]
    assert not [d for d in rep if d.rule == "syntax"]
    # every instruction is read, and every one the model covers is checked
    prog = read(text)
    assert rep.modeled + rep.unmodeled == len(prog.statements) > 0
    modelled = [s for s in prog.statements if spelling_verdict(s.opcode_spelling).family]
    assert rep.modeled == len(modelled)
    assert sum(rep.unmodeled_counts.values()) == rep.unmodeled


@pytest.mark.parametrize("half", [False, True], ids=["first", "half"])
@pytest.mark.parametrize("name", FILES)
def test_misspelled_opcode_is_ptxas_error(name, half, verdicts):
    text = (DATA / name).read_text()
    bad, line, word = mutant(text, half)
    key = "mutant_half" if half else "mutant"
    if bad is None:
        assert key not in verdicts["files"][name]
        pytest.skip("no half-precision arithmetic in this module")
    rec = verdicts["files"][name][key]
    assert (rec["line"], rec["word"]) == (line, word)
    expected = _ptxas(name, verdicts, key, bad if PTXAS else None)
    msg = f"Not a name of any known instruction: '{word}'"
    assert (line, msg) in expected
    rep = ptxfp.check(bad)
    assert [(e.line, e.ptxas) for e in rep.errors] == [(line, msg)]


@pytest.mark.parametrize("release", sorted(PROBE_OF))
def test_opcode_table_is_what_ptxas_knows(release):
    """opcodes.py, as each release knows it (opcodes.SINCE), against ptxas 13.0's and 13.5's
    verdicts on every candidate name of tools/opcode_probe.py (tests/data/ptxas/opcodes.json,
    tests/data/ptxas/13.5/opcodes.json): the table knows each name ptxas knows, calls each
    name ptxas calls unknown unknown, with the name ptxas gives."""
    assert opcode_probe_mismatches(_probe_record(release), release) == []


def test_check_knows_the_names_of_its_release():
    """A name new in ptxas 13.5 (fabric.wait) is an unknown instruction to check(ptxas='13.0')
    and only not modeled to 13.5's."""
    text = ".version 9.0\n.target sm_100a\n.address_size 64\n.entry k() {\nfabric.wait;\nret;\n}\n"
    assert [d.ptxas for d in ptxfp.check(text, ptxas="13.0").errors] == [
        "Not a name of any known instruction: 'fabric'"]
    assert not [d for d in ptxfp.check(text, ptxas="13.5").errors
                if d.rule == "unknown-instruction"]


def test_opcode_table_check_can_fail(monkeypatch):
    """Without 'redux' (known to ptxas alone) or with 'setsmemsize' (unknown to it), the
    recorded verdicts disagree with the table."""
    doc = _probe_record()
    for names in ([n for n in opcodes.OPCODES if n != "redux"], [*opcodes.OPCODES, "setsmemsize"]):
        with monkeypatch.context() as m:
            m.setattr(opcodes, "_BY_FIRST", _by_first(names))
            m.setattr(opcodes, "OPCODES", tuple(sorted(names)))
            opcodes.known_opcode.cache_clear()
            assert opcode_probe_mismatches(doc, "13.0")
        opcodes.known_opcode.cache_clear()
    assert opcode_probe_mismatches(doc, "13.0") == []


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_opcode_table_live():
    """The same, asked of the ptxas installed: its strings give the recorded candidates, and
    its verdicts on them (sm_100a) and on the table's names agree with the table."""
    import opcode_probe as op
    doc = _probe_record()
    cands = op.string_candidates(PTXAS)
    assert cands == sorted(doc["strings"]["verdicts"])
    live = op.probe(PTXAS, cands + list(opcodes.NOT_NAMES), "sm_100a")
    assert _mismatches(live, op.ptxas_version(PTXAS).split()[0]) == []
    # and the probe can fail: names outside the table are unknown to ptxas too
    assert op.probe(PTXAS, ["fmaa", "tcgen05", "mul24", "barrier.cluster.aligned"], "sm_100a") \
        == {"fmaa": "unknown", "tcgen05": "unknown", "mul24": "unknown",
            "barrier.cluster.aligned": "unknown as 'barrier.cluster'"}


def test_every_instruction_name_in_the_modules_is_known():
    for name in FILES:
        for s in read((DATA / name).read_text()).statements:
            assert opcodes.known_opcode(s.opcode_spelling), (name, s.line, s.opcode_spelling)


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        record()
    else:
        print(__doc__)


# ---------------------------------------------------------------------------------------------
# the constructs one by one (each was a syntax error or an error before issue #11)

@pytest.mark.parametrize("stmt,opcode", [
    ("cp.async.cg.shared.global.L2::128B [r1], [rd1], 16;", "cp.async.cg.shared.global.L2::128B"),
    ("mbarrier.init.shared::cta.b64 [r1], 1;", "mbarrier.init.shared::cta.b64"),
    ("mbarrier.try_wait.parity.shared::cta.b64 p, [r1], r2;",
     "mbarrier.try_wait.parity.shared::cta.b64"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r1], 32;",
     "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"),
    ("tcgen05.fence::before_thread_sync;", "tcgen05.fence::before_thread_sync"),
])
def test_double_colon_sub_qualifiers(stmt, opcode):
    (s,) = read(stmt, mode="snippet").statements
    assert s.opcode_spelling == opcode and opcodes.known_opcode(opcode)
    rep = ptxfp.check(stmt)
    assert rep.ok and rep.unmodeled == 1


def test_tensor_coordinate_address():
    stmt = ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[r1], [rd1, {r2, r3}], [r4];")
    (s,) = read(stmt, mode="snippet").statements
    a = s.operands[1]
    assert a.base.name == "rd1" and [str(i) for i in a.extra[0].items] == ["r2", "r3"]
    assert str(a) == "[rd1, {r2, r3}]" and not s.operands[0].extra
    assert ptxfp.check(stmt).ok


@pytest.mark.parametrize("spelling", ["add.s16x2", "add.u16x2"])
def test_packed_non_half_types_are_info(spelling):
    rep = ptxfp.check(spelling, target="sm_100a", version="8.6")
    assert rep.ok and rep.unmodeled == 1 and rep.modeled == 0


@pytest.mark.parametrize("spelling", ["mul.f32x2", "mul.rn.f32x2", "add.rz.ftz.f32x2",
                                      "fma.rn.f32x2"])
def test_packed_f32x2_is_modeled(spelling):
    rep = ptxfp.check(spelling, target="sm_100a", version="8.6")
    assert rep.ok and rep.unmodeled == 0 and rep.modeled == 1


def test_run_takes_one_element_braces():
    text = (".reg .b16 %rs<4>;\n.reg .b64 %rd<3>;\nld.global.b16 { %rs1 }, [%rd1];\n"
            "ld.global.b16 %rs2, [%rd1+2];\nadd.f16 %rs3, %rs1, %rs2;\n"
            "st.global.b16 [%rd2], { %rs3 };\n")
    mem = bytes([0x00, 0x3C, 0x00, 0x40]) + bytes(4)               # 1.0, 2.0 (f16)
    res = ptxfp.run(text, {"%rd1": 0, "%rd2": 4}, memory=mem)
    assert int(res["%rs3"][0]) == 0x4200                            # 3.0



def test_run_triton_module():
    """Triton's axpy (predicated one-element braces, .loc, debug sections) runs as written:
    out = a*x + y over n = 4 elements, the values exact in f16 (NumPy float16 encodes them)."""
    import numpy as np
    x = np.array([1, 2, 3, 4], np.float16)
    y = np.array([0.5, 0.25, -6, 8], np.float16)
    mem = np.zeros(2048, np.uint8)
    mem[0:8], mem[512:520] = x.view(np.uint8), y.view(np.uint8)
    res = ptxfp.run((DATA / "triton_axpy_sm_100a.ptx").read_text(), {
        "f16_axpy_param_0": 0, "f16_axpy_param_1": 512, "f16_axpy_param_2": 1024,
        "f16_axpy_param_3": 0x40000000, "f16_axpy_param_4": 4}, memory=mem.tobytes(),
        block=128)                       # the module's .reqntid 128; its mask keeps 4 lanes
    out = np.asarray(res["__memory__"], np.uint8)[1024:1032].view(np.uint16)
    assert list(out) == list((np.float16(2) * x + y).view(np.uint16))   # 2.5 4.25 0 16
