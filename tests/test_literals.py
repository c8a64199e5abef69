"""Integer literals as ptxas reads them: octal is ``0[0-7]*``, so ``09`` is the number 0
followed by a stray ``9`` (ptxas: "Parsing error near '9': syntax error"), never a Python
``int(..., 8)`` ValueError.  Values come from the PTX manual's literal rules (section 4.5.1:
hexadecimal ``0[xX]``, octal ``0[0-7]+``, binary ``0[bB]``, decimal ``[1-9][0-9]*``), evaluated
with Python's int and an explicit base; where ptxas is installed, its verdict on each literal is
compared too."""

import shutil
import subprocess

import pytest

import ptxfp

# (literal, value or None where ptxas rejects it)
CASES = [("0", 0), ("00", 0), ("07", 7), ("0777", int("777", 8)), ("017U", int("17", 8)), ("10U", 10), ("0x1FU", 0x1F), ("017u", None), ("0x1Fu", None),
         ("10", 10), ("0x1F", 0x1F), ("0b101", 5), ("09", None), ("08u", None),
         ("0999999999999999999999", None), ("0b102", None), ("019", None)]


@pytest.mark.parametrize("lit, value", CASES)
def test_integer_literals(lit, value):
    text = f"add.u32 %r1, %r2, {lit};"
    rep = ptxfp.check(text)
    if value is None:
        assert [e.rule for e in rep.errors] == ["syntax"], rep
        with pytest.raises(ptxfp.PtxfpError):
            ptxfp.run(text, {"r2": 0})
    else:
        assert not rep.errors, rep
        assert int(ptxfp.run(text, {"r2": 0})["%r1"][0]) == value % 2**32


def test_setp_8bit_is_one_clear_error():
    # ptxas: "Unexpected instruction types specified for 'setp'" (no 8-bit setp)
    for t in ("s8", "u8", "b8"):
        with pytest.raises(ptxfp.PtxfpError, match="setp"):
            ptxfp.run(f"setp.lt.{t} %p, %r1, %r2;", {"r1": 1, "r2": 2})


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_literal_verdicts_match_ptxas(tmp_path):
    for lit, value in CASES:
        body = (".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                f".reg .b32 %r<4>;\nadd.u32 %r1, %r2, {lit};\nret;\n}}\n")
        p = tmp_path / "t.ptx"
        p.write_text(body)
        r = subprocess.run(["ptxas", "-arch=sm_90", str(p), "-o", str(tmp_path / "t.o")],
                           capture_output=True, text=True)
        assert (r.returncode == 0) == (value is not None), (lit, r.stderr)
        assert bool(ptxfp.check(body).errors) == (value is None), lit
