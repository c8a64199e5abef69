"""The PTX reader: the manual's example blocks, nvcc's modules, operands, positions, errors."""

import glob
import os
import re
import struct

import pytest

from ptxfp.errors import PtxfpError
from ptxfp.ptx import Addr, Imm, PtxSyntaxError, Reg, Vec, read

HERE = os.path.dirname(__file__)
SPEC_DIRS = [os.environ.get("PTXFP_SPEC_DIR", ""), "/work/shared/spec",
             os.path.join(HERE, "..", "..", "shared", "spec")]
SPEC = next((d for d in SPEC_DIRS if d and glob.glob(os.path.join(d, "*.txt"))), None)
PTX_FILES = sorted(glob.glob(os.path.join(HERE, "data", "ptx", "*.ptx")))


def example_blocks(path):
    """The code blocks that follow an 'Examples' heading in one manual page (markdown fences,
    or the plain-text form where the block starts with a line 'ptx' and ends at a blank line)."""
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "Examples":
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and lines[j].strip().startswith("```"):
                k = j + 1
                while k < len(lines) and not lines[k].strip().startswith("```"):
                    k += 1
                blocks.append("\n".join(lines[j + 1:k]))
                i = k
            elif j < len(lines) and lines[j].strip() == "ptx":
                k = j + 1
                while k < len(lines) and lines[k].strip():
                    k += 1
                blocks.append("\n".join(lines[j + 1:k]))
                i = k
        i += 1
    return blocks


def spec_examples():
    if SPEC is None:
        return []
    return [(os.path.basename(p), n, b) for p in sorted(glob.glob(os.path.join(SPEC, "*.txt")))
            for n, b in enumerate(example_blocks(p))]


@pytest.mark.skipif(SPEC is None, reason="the manual pages (shared/spec) are not available")
def test_every_spec_page_with_instructions_has_examples():
    pages = {name for name, _, _ in spec_examples()}
    assert len(pages) == 5
    assert len(spec_examples()) == 3 + 3 + 1 + 1 + 1


@pytest.mark.parametrize("page,n,block", spec_examples(),
                         ids=[f"{p}#{n}" for p, n, _ in spec_examples()])
def test_spec_example_blocks_read(page, n, block):
    prog = read(block)
    assert prog.kind == "snippet"
    code = [ln.split("//")[0].strip() for ln in block.splitlines()]
    code = [c for c in code if c and not c.startswith(".reg")]
    assert len(prog.statements) == len(code)
    for ins, src in zip(prog.statements, code):
        assert src.startswith(ins.opcode_spelling)
        assert ins.text == src.rstrip(";").strip()
        # positions are 1-based and point at the opcode
        line = block.splitlines()[ins.line - 1]
        assert line[ins.col - 1:].startswith(ins.opcode_spelling)


def test_manual_mixed_add_example():
    prog = read(".reg .f32 fc, fd;\n\n.reg .b16 ba;\n\nadd.rz.f32.bf16.sat   fd, fa, fc;")
    assert set(prog.registers) == {"fc", "fd", "ba"}
    assert prog.registers["ba"].type == "b16" and prog.registers["ba"].line == 3
    (ins,) = prog.statements
    assert ins.opcode_spelling == "add.rz.f32.bf16.sat" and ins.opcode == "add"
    assert [o.name for o in ins.operands] == ["fd", "fa", "fc"]
    assert (ins.line, ins.col) == (5, 1)
    assert (ins.operands[1].line, ins.operands[1].col) == (5, 27)


def test_operand_kinds():
    prog = read("""
        mov.b32  p1, {h0, h1};
        ld.global.b32 f1, [addr + 4];
        ld.global.b32 f1, [addr+-8];
        ld.param.u64 %rd1, [foo_param_0];
        fma.rn.f16 d, a, 0x3C00, c;
        add.f32 f, 0f3F800000, 1.5;
        add.s32 r, r, -12;
        mov.f64 x, 0d3FF0000000000000;
        mov.u32 %r3, %ntid.x;
        @!%p1 bra $L__BB0_2;
    """)
    s = prog.statements
    assert isinstance(s[0].operands[1], Vec) and [str(i) for i in s[0].operands[1].items] == \
        ["h0", "h1"]
    a = s[1].operands[1]
    assert isinstance(a, Addr) and a.base.name == "addr" and a.offset == 4
    assert s[2].operands[1].offset == -8
    assert s[3].operands[1].base.name == "foo_param_0" and s[3].operands[1].offset == 0
    imm = s[4].operands[2]
    assert isinstance(imm, Imm) and imm.kind == "hex" and imm.value == 0x3C00
    f = s[5].operands
    assert f[1].kind == "hexfloat" and f[1].value == 0x3F800000 and f[1].width == 32
    assert f[2].kind == "float" and f[2].value == struct.unpack("<Q", struct.pack("<d", 1.5))[0]
    assert s[6].operands[2].kind == "dec" and s[6].operands[2].value == -12
    assert s[7].operands[1].value == 0x3FF0000000000000 and s[7].operands[1].width == 64
    assert s[8].operands[1].name == "%ntid.x"
    assert s[9].predicate.name == "%p1" and s[9].predicate.negated
    assert s[9].operands == [Reg("$L__BB0_2", s[9].operands[0].line, s[9].operands[0].col)]


def test_bare_spelling_and_single_instruction():
    p = read("fma.rn.oob.relu.bf16x2")
    assert p.kind == "spelling" and p.statements[0].opcode_spelling == "fma.rn.oob.relu.bf16x2"
    assert p.statements[0].operands == []
    p = read("  add.f16 d, a, b  ")
    assert p.kind == "snippet" and len(p.statements[0].operands) == 3
    assert read("ret;").kind == "spelling"
    assert read("add.f16", mode="snippet").statements[0].operands == []


MODULE = """
.version 8.6
.target sm_100a, texmode_independent
.address_size 64

.visible .entry k(
    .param .u64 k_param_0,
    .param .align 8 .b8 k_param_1[16]
)
.maxntid 128, 1, 1
{
    .reg .pred %p<2>;
    .reg .b16 %rs<8>;
    .reg .f32 a, b;
    /* a block
       comment */
    ld.param.u64 %rd1, [k_param_0];
    @%p1 bra DONE;
    {
        .reg .b32 t;
        add.rn.f16 %rs1, %rs2, %rs3;   // inner
    }
DONE:
    ret;
}

.func (.param .b32 r) helper(.param .b32 x)
{
    ret;
}
"""


def test_module():
    p = read(MODULE)
    assert p.kind == "module"
    assert p.version == (8, 6) and p.version_pos == (2, 10)
    assert p.target == "sm_100a" and p.target_pos == (3, 9)
    assert [t for t, _, _ in p.target_options] == ["sm_100a", "texmode_independent"]
    assert p.address_size == 64
    k, h = p.functions
    assert (k.name, k.kind, k.linkage) == ("k", "entry", "visible")
    assert [(q.name, q.type, q.array) for q in k.params] == \
        [("k_param_0", "u64", ()), ("k_param_1", "b8", (16,))]
    assert [i.opcode_spelling for i in k.body] == ["ld.param.u64", "bra", "add.rn.f16", "ret"]
    assert k.body[3].label == "DONE" and p.labels["DONE"] == (23, 1)
    assert (h.name, h.kind, [r.name for r in h.returns], [q.name for q in h.params]) == \
        ("helper", "func", ["r"], ["x"])
    assert [i.function for i in p.statements] == ["k"] * 4 + ["helper"]
    assert set(p.registers) >= {"%p0", "%p1", "%rs0", "%rs7", "a", "b", "t"}
    assert "%rs8" not in p.registers
    assert p.registers["%rs3"].type == "b16" and p.registers["%rs3"].line == 13
    add = p.statements[2]
    assert (add.line, add.col) == (21, 9)


@pytest.mark.parametrize("path", PTX_FILES, ids=[os.path.basename(p) for p in PTX_FILES])
def test_nvcc_modules(path):
    text = open(path).read()
    p = read(text)
    assert p.kind == "module" and p.version is not None and p.target.startswith("sm_")
    assert p.functions and all(f.body for f in p.functions)
    # every instruction line of the file became one statement
    n = sum(1 for ln in text.splitlines()
            if re.match(r"\s*(\{\s*)?(@!?%p\d+\s+)?[a-z][\w.]*(\s|;)", ln))
    assert len(p.statements) == n


@pytest.mark.parametrize("text,line,col,token", [
    ("add.f16 d, , b;", 1, 12, ","),
    ("add.f16 d, a b;", 1, 14, "b"),
    ("add.f16 d, a, b;\nmul.f16 d a;", 2, 11, "a"),
    ("ld.global.b32 f, [addr + x];", 1, 26, "x"),
    ("mov.b32 p, {a, b;", 1, 17, ";"),
    ("/* open", 1, 1, "/*"),
    ("add.f16 d, a, #;", 1, 15, "#"),
    (".version 8.6\n.target sm_90\nadd.f16 d, a, b;", 3, 1, "add.f16"),
    (".version 8.6\n.target sm_90\n.entry k() {\n add.f16 d, a, b\n}", 5, 1, "}"),
    (".version x", 1, 10, "x"),
    (".reg .b16 %r<x>;", 1, 14, "x"),
    ("}", 1, 1, "}"),
    # octal numbers take the digits 0-7: '09' is the number 0 and then a stray 9 (found by the
    # fuzzer before the lexer read it so: a ValueError from int('0810', 8))
    ("add.s32 %r1, %r2, 09;", 1, 20, "9"),
    ("add.s32 %r1, %r2, -0810;", 1, 21, "810"),
    ("ld.param.u64 %rd1, [p0+0810];", 1, 25, "810"),
    ("ld.param.u64 %rd1, [08u];", 1, 22, "8"),
])
def test_syntax_errors(text, line, col, token):
    with pytest.raises(PtxSyntaxError) as e:
        read(text)
    err = e.value
    assert isinstance(err, PtxfpError) and isinstance(err, ValueError)
    assert (err.line, err.col) == (line, col)
    assert f"'{token}'" in str(err)


def test_spelling_mode_rejects_operands():
    with pytest.raises(PtxSyntaxError, match="'d'"):
        read("add.f16 d", mode="spelling")


def test_unknown_instructions_are_statements():
    p = read("frobnicate.x.y a, [b], {c, d};\ncall.uni (r), f, (a, b);\n"
             "setp.lt.f32 %p|%q, a, b;")
    assert [i.opcode for i in p.statements] == ["frobnicate", "call.uni".split(".")[0], "setp"]
    assert p.statements[1].operands[0].brackets == "()"
    assert p.statements[2].operands[0].brackets == "|"
