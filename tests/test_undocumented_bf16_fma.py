"""The 24 spellings fma.{rz,rm,rp}{.oob}{.relu}.bf16/.bf16x2: not in the PTX ISA (half fma is
.rn only), accepted by ptxas 13.0 and compiled into other arithmetic (docs/ptxas-findings.md).
ptxfp.check and ptxfp eval warn on each (rule undocumented-bf16-fma), as a warning."""

import itertools

import pytest

import ptxfp
from ptxfp.cli import main
from ptxfp.isa.arith import UNDOCUMENTED_BF16_FMA, undocumented_bf16_fma
from ptxfp.ptx.check import check

SPELLINGS = [f"fma.{r}{o}{u}.{t}" for r, o, u, t in itertools.product(
    ("rz", "rm", "rp"), ("", ".oob"), ("", ".relu"), ("bf16", "bf16x2"))]


def _module(lines):
    regs = ".reg .b16 %h<4>;\n .reg .b32 %r<4>;"
    body = "\n".join(lines)
    return f".version 8.1\n.target sm_90\n.visible .entry k() {{\n {regs}\n{body}\n}}\n"


def _line(spelling):
    r = "%h" if spelling.endswith("bf16") else "%r"
    return f" {spelling} {r}0, {r}1, {r}2, {r}3;"


def test_the_predicate_names_exactly_the_24():
    every = ptxfp.isa.canonical_spellings()
    picked = sorted(s for s in every
                    if undocumented_bf16_fma(*(lambda i: (i.opcode, i.rounding, i.types))(
                        ptxfp.parse(s))))
    assert picked == sorted(SPELLINGS)


def test_check_warns_once_per_spelling_with_its_position():
    text = _module([_line(s) for s in SPELLINGS] + [_line("fma.rn.oob.relu.bf16"),
                                                    _line("fma.rn.bf16x2")])
    report = check(text)
    assert not report.errors
    warned = [d for d in report if d.rule == UNDOCUMENTED_BF16_FMA]
    assert [d.severity for d in warned] == ["warning"] * 24
    for i, (d, s) in enumerate(zip(warned, SPELLINGS)):
        assert (d.line, d.col) == (6 + i, 6)            # at the rounding modifier
        assert f"'{s}' is not in the PTX ISA" in d.message and "ptxas 13.0" in d.message
        how = "as fma.rn" if s.endswith("x2") else "as f16 arithmetic"
        assert how in d.message and "\n" not in d.message


def test_check_exit_status_for_the_warning_is_that_of_warnings(tmp_path, capsys):
    p = tmp_path / "k.ptx"
    p.write_text(_module([_line("fma.rz.relu.bf16")]))
    assert main(["check", str(p)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if UNDOCUMENTED_BF16_FMA in x)
    assert line.startswith(f"{p}:6:6: warning: 'fma.rz.relu.bf16' is not in the PTX ISA")


@pytest.mark.parametrize("spelling, how", [("fma.rm.relu.bf16", "as f16 arithmetic"),
                                           ("fma.rp.oob.bf16x2", "as fma.rn")])
def test_eval_warns_on_stderr(spelling, how, capsys):
    ops = ["0x3F80"] * 3 if spelling.endswith("bf16") else ["0x3F803F80"] * 3
    assert main(["eval", spelling, *ops]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"{spelling}:1:5: warning: '{spelling}' is not in the PTX ISA")
    assert how in err[0] and err[0].endswith(f"[{UNDOCUMENTED_BF16_FMA}]")


def test_eval_of_a_documented_form_says_nothing(capsys):
    assert main(["eval", "fma.rn.relu.bf16", "0x3F80", "0x3F80", "0x3F80"]) == 0
    assert capsys.readouterr().err == ""
