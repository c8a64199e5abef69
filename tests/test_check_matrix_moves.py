"""check() on ldmatrix / stmatrix / movmatrix decides as ptxas 13.5 does: every record of
tests/data/ptxas/13.5/matrix_moves.jsonl (tools/matrix_probe.py: every shape x .num x .trans x
type on 21 targets, and the .version floors), accept or reject, with ptxas' first message; and
a few cases checked by hand against ptxas 13.5 (the order of its errors, movmatrix, operand
vectors), quoted here as it printed them."""

import json
import re
import sys
from pathlib import Path

import pytest

import ptxfp

sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
from matrix_probe import module as probe_module  # noqa: E402

DATA = Path(__file__).parent / "data" / "ptxas" / "13.5" / "matrix_moves.jsonl"


def _records():
    lines = DATA.read_text().splitlines()
    return [json.loads(ln) for ln in lines[1:]]


def _errors(text):
    return [d for d in ptxfp.check(text) if d.severity == "error"]


def test_check_decides_every_recorded_module_as_ptxas_13_5():
    recs = _records()
    assert len(recs) == 2150
    wrong = []
    for r in recs:
        text = probe_module(r["spelling"], r["regs"], r["target"], r["version"])
        errs = _errors(text)
        if bool(errs) == r["accepted"]:
            wrong.append((r["spelling"], r["target"], r["version"], r["error"], errs[:1]))
        elif errs:
            # ptxas' first error is check()'s on that line, in its words (and the only one
            # there; .version 8.5 on sm_100a is also the module header's error, as for ptxas)
            line = 1 + next(i for i, ln in enumerate(text.splitlines())
                            if ln.startswith(r["spelling"]))
            mine = [d for d in errs if d.line == line]
            assert len(mine) == 1 and mine[0].ptxas == r["error"], (r, errs)
            assert mine[0].message.startswith(r["error"]) and mine[0].col == 1
    assert not wrong, wrong[:5]


def _module(body, target="sm_90", version="9.0"):
    return (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
            f".reg .b32 %r<12>;\n{body}\nret;\n}}\n")


@pytest.mark.parametrize("body, target, version, ptxas", [
    # the issue's example: check() said "0 errors"
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%r0];", "sm_90", "9.0",
     "Feature '.m16n16' not supported on .target 'sm_90'"),
    # ptxas prints the shape's .version before its type and .trans errors
    ("ldmatrix.sync.aligned.m16n16.x1.shared.b16 {%r1, %r2}, [%r0];", "sm_100a", "8.5",
     "Modifier '.m16n16' requires PTX ISA .version 8.6 or later"),
    # .m8n16: its .version before its target
    ("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%r0];", "sm_90", "8.5",
     "Modifier '.m8n16' on 'ldmatrix' requires PTX ISA .version 8.6 or later"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r0];", "sm_75", "6.4",
     "Feature 'ldmatrix' requires PTX ISA .version 6.5 or later"),
    ("ldmatrix.sync.aligned.m16n16.x4.trans.shared.b8 {%r1, %r2, %r3, %r4}, [%r0];", "sm_100a",
     "9.0", "Incorrect no. of matrix: 4 for ldmatrix with shape '.m16n16'"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b8 {%r1, %r2}, [%r0];", "sm_100a", "9.0",
     "Vector of size 1 is expected for argument 0 of instruction 'ldmatrix'"),
    ("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r0], {%r1};", "sm_100a", "9.0",
     "Vector of size 2 is expected for argument 1 of instruction 'stmatrix'"),
    ("ldmatrix.sync.m8n8.x1.shared.b16 {%r1}, [%r0];", "sm_100a", "9.0",
     ".aligned modifier required for instruction 'ldmatrix'"),
    ("ldmatrix.sync.aligned.m8n8.shared.b16 {%r1}, [%r0];", "sm_100a", "9.0",
     ".num modifier required for instruction 'ldmatrix'"),
    ("ldmatrix.sync.aligned.m16n8.x1.shared.b16 {%r1}, [%r0];", "sm_100a", "9.0",
     "Illegal matrix shape '.m16n8' for instruction 'ldmatrix'"),
    ("ldmatrix.sync.aligned.m8n8.x1.trans.trans.shared.b16 {%r1}, [%r0];", "sm_100a", "9.0",
     "Multiple .trans modifiers specified"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b32 {%r1}, [%r0];", "sm_100a", "9.0",
     "Unexpected instruction types specified for 'ldmatrix'"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", "sm_75", "7.7",
     "Feature 'movmatrix' requires PTX ISA .version 7.8 or later"),
    ("movmatrix.sync.aligned.m8n8.b16 %r1, %r2;", "sm_90", "9.0",
     ".trans modifier required for instruction 'movmatrix'"),
    ("movmatrix.sync.aligned.m8n8.x1.trans.b16 %r1, %r2;", "sm_90", "9.0",
     "Illegal modifier '.x1' for instruction 'movmatrix'"),
    ("movmatrix.sync.aligned.m8n8.trans.shared.b16 %r1, %r2;", "sm_90", "9.0",
     "No state space qualifier expected for instruction 'movmatrix'"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 {%r1}, %r2;", "sm_90", "9.0",
     "Vector operand is not allowed for instruction 'movmatrix'"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1;", "sm_90", "9.0",
     "Arguments mismatch for instruction 'movmatrix'"),
])
def test_check_gives_ptxas_first_error(body, target, version, ptxas):
    errs = [d for d in _errors(_module(body, target, version)) if d.line == 7]
    assert [d.ptxas for d in errs] == [ptxas]
    assert (errs[0].line, errs[0].col) == (7, 1) and "\n" not in str(errs[0])


@pytest.mark.parametrize("body, target, version", [
    ("ldmatrix.sync.aligned.m8n8.x1.b16 {%r1}, [%r0];", "sm_100a", "9.0"),      # generic
    ("ldmatrix.aligned.sync.m8n8.x1.shared.b16 {%r1}, [%r0];", "sm_100a", "9.0"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r0];", "sm_60", "6.5"),
    ("movmatrix.sync.aligned.trans.m8n8.b16 %r1, %r2;", "sm_90", "9.0"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", "sm_60", "7.8"),
])
def test_check_takes_what_ptxas_takes(body, target, version):
    assert _errors(_module(body, target, version)) == []


def test_unknown_modifier_and_bare_spelling():
    errs = _errors(_module("ldmatrix.sync.aligned.m8n8.x1.shared.b16.foo {%r1}, [%r0];"))
    assert [d.rule for d in errs] == ["unknown-modifier"]
    # a bare spelling: judged without .target/.version or operands
    assert _errors("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8") == []
    errs = _errors("ldmatrix.sync.aligned.m16n16.x1.shared.b8")
    assert [d.rule for d in errs] == ["illegal-modifier"] and "needs .trans" in errs[0].message
