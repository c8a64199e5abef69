"""ptxfp.check on spellings, snippets, modules and nvcc's output, with the expected rule ids.

Expected decisions and message texts are ptxas 13.0's (see tests/test_check_vs_ptxas.py for the
comparison with every recorded ptxas decision, and docs of tests/data/ptxas).
"""

import glob
import os
import re

import pytest

import ptxfp
from ptxfp import isa
from ptxfp.ptx import read
from ptxfp.ptx.check import KNOWN_VERSIONS, RULES, TARGET_MIN_VERSION, Diagnostic, Report

from test_ptx_reader import spec_examples

HERE = os.path.dirname(__file__)
PTX_FILES = sorted(glob.glob(os.path.join(HERE, "data", "ptx", "*.ptx")))


def errors(report):
    return [d for d in report if d.severity == "error"]


def rules(report, severity="error"):
    return [d.rule for d in report if d.severity == severity]


# --------------------------------------------------------------------------------------------
# spellings

@pytest.mark.parametrize("spelling", isa.canonical_spellings())
def test_every_table_form_is_accepted_as_spelling(spelling):
    rep = ptxfp.check(spelling)
    assert rep.ok, rep
    assert rep.kind == "spelling" and rep.modeled == 1 and rep.unmodeled == 0
    assert "spelling-only" in rules(rep, "info")


@pytest.mark.parametrize("spelling", isa.canonical_spellings()
                         + isa.canonical_spellings("minmax"))
def test_every_table_form_at_its_own_minimum(spelling):
    ins = ptxfp.parse(spelling)
    if not ins.row.requires:          # .f32: accepted on every .version/.target of ptxas
        assert ptxfp.check(spelling, version="4.0", target="sm_50").ok
        return
    v = "%d.%d" % ins.min_ptx
    t = "sm_%d" % ins.min_sm
    if t not in TARGET_MIN_VERSION:
        pytest.skip(f"{t} is not a target of ptxas 13.0")
    assert ptxfp.check(spelling, version=v, target=t).ok
    # one step below on either axis is an error naming the rule
    lower_v = max(x for x in KNOWN_VERSIONS if x < ins.min_ptx)
    rep = ptxfp.check(spelling, version="%d.%d" % lower_v, target=t)
    errs = [d for d in rep.errors if d.rule != "target-version"]
    # one error, or one per feature that needs this version (.xorsign and .abs: ptxas names both)
    assert errs and {e.rule for e in errs} == {"min-version"}
    # ptxas' own words (neg.f16 is accepted from 5.1, and below it ptxas says 6.0)
    said = "6.0" if spelling.startswith("neg.") and ins.atype.startswith("f16") else v
    assert all(f"requires PTX ISA .version {said} or later" in e.message for e in errs)
    assert len(errs) == 1 or "xorsign" in spelling
    lower_t = max((k for k in TARGET_MIN_VERSION if int(k[3:].rstrip("af")) < ins.min_sm),
                  key=lambda k: int(k[3:].rstrip("af")))
    rep = ptxfp.check(spelling, version="9.0", target=lower_t)
    assert set(rules(rep)) == {"min-target"} and (len(rep.errors) == 1 or "xorsign" in spelling)
    assert all(f"requires .target {t} or higher" in e.message for e in rep.errors)


@pytest.mark.parametrize("spelling,rule,message", [
    ("add.ftz.bf16", "illegal-modifier", "Illegal modifier '.ftz' for instruction 'add'"),
    ("add.sat.bf16x2", "illegal-modifier", "Illegal modifier '.sat' for instruction 'add'"),
    ("add.rz.f16", "illegal-rounding", "Illegal rounding modifier for instruction 'add'"),
    ("mul.rna.f16x2", "illegal-rounding", "Illegal rounding modifier for instruction 'mul'"),
    ("add.rs.f16", "illegal-modifier", "Illegal modifier '.rs' for instruction 'add'"),
    ("fma.f16", "rounding-required", "Rounding modifier required for instruction 'fma'"),
    ("fma.relu.bf16", "rounding-required", "Rounding modifier required for instruction 'fma'"),
    ("fma.rn.f32.bf16.rn", "rounding-conflict", "Multiple rounding modifiers specified"),
    ("add.rn.rn.f16", "rounding-conflict", "Multiple rounding modifiers specified"),
    ("add.ftz.ftz.f16", "duplicate-modifier", "Duplicate .ftz modifier"),
    ("fma.rn.oob.oob.f16", "duplicate-modifier", "Duplicate .oob modifier"),
    ("fma.rn.relu.sat.f16", "illegal-combination",
     "Modifier '.relu' cannot be combined with modifier '.sat'"),
    ("fma.rn.ftz.oob.f16x2", "illegal-combination",
     "Modifier '.ftz' cannot be combined with modifier '.oob'"),
    ("add.foo.f16", "unknown-modifier", "Unknown modifier '.foo'"),
    ("add.full.f16", "unknown-modifier", "Unknown modifier '.full'"),
    ("add.f16.f32", "illegal-type", "Unexpected instruction types specified for 'add'"),
    ("mul.f32.f16", "illegal-type", "Unexpected instruction types specified for 'mul'"),
    ("fma.rn.relu.f32.f16", "illegal-type", "Unexpected instruction types specified for 'fma'"),
    ("add.ftz.f32.f16", "illegal-modifier", "Illegal modifier '.ftz' for instruction 'add'"),
    ("add", "illegal-type", "Unexpected instruction types specified for 'add'"),
    # cvt
    ("cvt.f16.f32", "rounding-required", "Rounding modifier required for instruction 'cvt'"),
    ("cvt.rn.f32.f16", "illegal-rounding", "Illegal rounding modifier for instruction 'cvt'"),
    ("cvt.rm.relu.f16.f32", "illegal-rounding", "Illegal rounding modifier for instruction 'cvt'"),
    ("cvt.rn.sat.bf16.f32", "illegal-modifier", "Illegal modifier '.sat' for instruction 'cvt'"),
    ("cvt.rn.ftz.f16x2.f32", "illegal-modifier", "Illegal modifier '.ftz' for instruction 'cvt'"),
    ("cvt.rs.f16.f32", "illegal-modifier",
     "Illegal modifier '.rs' for instruction 'cvt' with type '.f16.f32'"),
    ("cvt.rm.satfinite.f16.f32", "illegal-combination",
     "Modifier '.satfinite' cannot be combined with modifier '.rm'"),
    ("cvt.rn.sat.satfinite.f16.f32", "illegal-combination",
     "Modifier '.satfinite' cannot be combined with modifier '.sat'"),
    ("cvt.rn.f32.f16x2", "illegal-type", "Unexpected instruction types specified for 'cvt'"),
    ("cvt.relu.f32.bf16", "illegal-type", "Unexpected instruction types specified for 'cvt'"),
])
def test_bad_spellings(spelling, rule, message):
    rep = ptxfp.check(spelling)
    assert rep.errors, rep
    first = rep.errors[0]
    assert (first.rule, first.message, first.ptxas) == (rule, message, message)
    assert rule in RULES
    assert (first.line, first.col) == (1, 1)


@pytest.mark.parametrize("spelling", [
    "add.f16.rn", "add.sat.ftz.rn.f16", "fma.rz.sat.f32.f16.sat", "fma.f32.f16.rn",
    "add.rz.f32.bf16.sat", "fma.rn.relu.relu.bf16", "cvt.f32.bf16.rn", "cvt.ftz.rn.sat.f16.f32",
    "cvt.satfinite.relu.rz.bf16x2.f32", "cvt.f32.bf16", "cvt.rm.bf16.f32",
])
def test_ptxas_accepts_more_than_the_syntax_blocks(spelling):
    # modifiers in any order, .sat/.relu repeated, rounding on cvt.f32.bf16 (ptxas 13.0)
    assert ptxfp.check(spelling).ok


def test_requirements_and_arch_variants():
    ok = lambda s, v, t: ptxfp.check(s, version=v, target=t).ok    # noqa: E731
    assert ok("add.bf16", "7.8", "sm_90") and not ok("add.bf16", "7.8", "sm_89")
    assert ok("fma.rn.bf16", "7.0", "sm_80") and not ok("fma.rn.bf16", "6.5", "sm_80")
    assert ok("fma.rn.oob.relu.bf16x2", "8.1", "sm_90a")
    assert ok("add.rn.f32.f16", "8.6", "sm_100f") is False        # 8.6 does not know sm_100f
    assert ok("add.rn.f32.f16", "8.8", "sm_100f") and ok("add.rn.f32.f16", "8.6", "sm_100a")
    assert not ok("add.rn.f32.f16", "9.0", "sm_90a")
    # cvt .rs: sm_100a / sm_103a only
    assert ok("cvt.rs.relu.f16x2.f32", "8.7", "sm_100a")
    assert ok("cvt.rs.bf16x2.f32", "8.8", "sm_103a")
    rep = ptxfp.check("cvt.rs.bf16x2.f32", version="9.0", target="sm_100")
    assert rules(rep) == ["target-unsupported"]
    assert rep.errors[0].message == "Feature '.rs' not supported on .target 'sm_100'"
    rep = ptxfp.check("cvt.rs.bf16x2.f32", version="8.6", target="sm_100")
    assert sorted(rules(rep)) == ["min-version", "target-unsupported"]
    # satfinite on f16 needs sm_70, on the others sm_80 (ptxas, not the manual)
    assert ok("cvt.rn.satfinite.f16.f32", "8.1", "sm_70")
    assert not ok("cvt.rn.satfinite.bf16.f32", "8.1", "sm_75")


@pytest.mark.parametrize("kwargs,rule,message", [
    ({"target": "sm_73", "version": "8.0"}, "unknown-target", "Unsupported .target 'sm_73'"),
    ({"target": "sm_100", "version": "8.9"}, "unknown-version",
     "Unsupported .version 8.9; current version is '9.5'"),
    ({"target": "sm_100", "version": "8.9", "ptxas": "13.0"}, "unknown-version",
     "Unsupported .version 8.9; current version is '9.0'"),
    ({"target": "sm_90a", "version": "9.6"}, "unknown-version",
     "Unsupported .version 9.6; current version is '9.5'"),
    ({"target": "sm_107a", "version": "9.3"}, "target-version",
     "PTX .version 9.3 does not support .target sm_107a"),
    ({"target": "sm_88", "version": "8.8"}, "target-version",
     "PTX .version 8.8 does not support .target sm_88"),
    ({"target": "sm_107", "version": "9.4", "ptxas": "13.0"}, "unknown-target",
     "Unsupported .target 'sm_107'"),
    ({"target": "sm_100", "version": "8.5"}, "target-version",
     "PTX .version 8.5 does not support .target sm_100"),
    ({"target": "sm_100f", "version": "8.7"}, "target-version",
     "PTX .version 8.7 does not support .target sm_100f"),
])
def test_version_and_target(kwargs, rule, message):
    rep = ptxfp.check("add.f16", **kwargs)
    d = [d for d in rep if d.rule == rule]
    assert d and d[0].ptxas == message and d[0].severity == "error"


def test_target_and_version_arguments_accept_short_forms():
    assert ptxfp.check("add.bf16", target=90, version=(7, 8)).ok
    assert ptxfp.check("add.bf16", target="90", version=7.8).ok
    assert not ptxfp.check("add.bf16", target=80, version="7.8").ok


def test_only_target_or_only_version():
    rep = ptxfp.check("add.bf16", target="sm_80")
    assert rules(rep) == ["min-target"]
    assert any(d.rule == "spelling-only" and "version" in d.message for d in rep)
    rep = ptxfp.check("add.bf16", version="7.0")
    assert rules(rep) == ["min-version"]


# --------------------------------------------------------------------------------------------
# diagnostics

def test_diagnostic_format():
    d = Diagnostic("error", 3, 5, "Illegal modifier '.ftz' for instruction 'add'",
                   "illegal-modifier")
    assert str(d) == "3:5: error: Illegal modifier '.ftz' for instruction 'add' [illegal-modifier]"
    rep = ptxfp.check("add.ftz.bf16")
    assert isinstance(rep, Report) and isinstance(rep, list)
    assert str(rep).splitlines()[0].startswith("0:0: info: ")   # file-level first
    assert str(rep.errors[0]) == \
        "1:1: error: Illegal modifier '.ftz' for instruction 'add' [illegal-modifier]"
    assert rep[-1].rule == "summary"


def test_syntax_errors_are_diagnostics():
    rep = ptxfp.check("add.f16 d, , b;")
    assert rules(rep) == ["syntax"] and not rep.ok
    assert (rep[0].line, rep[0].col) == (1, 12) and "','" in rep[0].message


# --------------------------------------------------------------------------------------------
# snippets and modules

MANUAL_MIXED_ADD = ".reg .f32 fc, fd;\n\n.reg .b16 ba;\n\nadd.rz.f32.bf16.sat   fd, fa, fc;"


def test_manual_mixed_add_example_undeclared_fa():
    # snippet: registers may be undeclared, but this one declares others: a warning
    rep = ptxfp.check(MANUAL_MIXED_ADD)
    assert rep.ok
    (w,) = rep.warnings
    assert (w.rule, w.line, w.col) == ("undeclared", 5, 27)
    assert "'fa'" in w.message and "did you mean 'ba'?" in w.message
    # strict (and in a module): an error naming fa and suggesting ba
    rep = ptxfp.check(MANUAL_MIXED_ADD, strict=True, target="sm_100", version="8.6")
    (e,) = rep.errors
    assert e.rule == "undeclared" and e.ptxas == "Unknown symbol 'fa'"
    assert "did you mean 'ba'?" in e.message
    module = (".version 8.6\n.target sm_100\n.address_size 64\n.visible .entry k()\n{\n"
              + MANUAL_MIXED_ADD + "\nret;\n}\n")
    rep = ptxfp.check(module)
    assert [(d.rule, d.line) for d in rep.errors] == [("undeclared", 10)]
    assert rep.modeled == 1 and rep.unmodeled == 1


def test_snippet_without_declarations_may_use_any_name():
    rep = ptxfp.check("add.f16 d0, a0, b0;\nfma.rn.relu.bf16 d1, a1, b1, c1;")
    assert rep.ok and not rep.warnings and rep.modeled == 2


MODULE = """\
.version 8.6
.target sm_90a, texmode_independent
.address_size 64

.visible .entry k(.param .u64 k_param_0)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<8>;
    .reg .f16 %h<2>;
    .reg .b32 %r<4>;
    .reg .f16x2 %x<2>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [k_param_0];
    add.f16 %rs1, %rs2, %h1;
    add.bf16 %rs1, %rs2, %rs3;
    add.bf16 %rs1, %h0, %rs3;
    add.f16x2 %r1, %x0, %r2;
    add.f16x2 %r1, %f0, %r2;
    fma.rn.bf16 %rs1, %rs2, %rs3;
    add.f16 %rs1, %rs2, 0x3C00;
    add.f16 {%rs1, %rs2}, %rs2, %rs3;
    @%p1 mul.rn.f16 %rs1, %rs2, %rs3;
    add.f16 %rs1, %rs2, %rs9;
    cvt.rn.f16.f32 %rs1, %f1;
    cvt.rn.f16x2.f32 %r1, %f1, 0f3F800000;
    cvt.rn.bf16.f32 %r1, %f1;
    ret;
}
"""


def test_module_operands():
    rep = ptxfp.check(MODULE)
    got = [(d.line, d.rule) for d in rep.errors]
    assert got == [
        (13, "undeclared"),        # %rd1 of ld (not modeled, its names checked: issue 29/22)
        (16, "operand-type"),      # .f16 register for a bf16 operand
        (18, "operand-type"),      # .f32 register for an f16x2 operand
        (19, "operand-count"),     # fma with three operands
        (20, "operand-type"),      # f16 operand from an immediate
        (21, "vector-operand"),
        (23, "undeclared"),        # %rs9: %rs<8> declares %rs0..%rs7
        (26, "operand-type"),      # cvt.bf16.f32 writes a .b16 register only
    ]
    by_line = {d.line: d for d in rep.errors}
    assert by_line[16].ptxas == "Arguments mismatch for instruction 'add'"
    assert "'%h0' is a .f16 register" in by_line[16].message
    assert "takes .b16 registers" in by_line[16].message
    assert by_line[21].ptxas == "Vector operand is not allowed for instruction 'add'"
    assert by_line[23].ptxas == "Unknown symbol '%rs9'"
    assert rep.version == (8, 6) and rep.target == "sm_90a"
    assert rep.modeled == 13 and rep.unmodeled == 2
    assert rules(rep, "info").count("unmodeled") == 2
    summary = rep[-1]
    assert summary.rule == "summary" and summary.message == \
        "15 instructions: 13 modeled by ptxfp, 2 not modeled"


def test_names_ptxas_rejects_in_any_instruction():
    """issue 29 item 22: undeclared registers, %r64 past %r<64>, a label defined twice in one
    block are ptxas errors (messages measured with ptxas 13.5), whatever the instruction."""
    text = (".version 9.5\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            ".reg .b32 %r<64>;\nmov.b32 %r64, 1;\nmov.b32 %x, %r1;\nL1:\n"
            "add.s32 %r1, %r1, %q;\nmov.u32 %r2, %tid.x;\nL1:\nret;\n}\n")
    rep = ptxfp.check(text)
    assert [(d.line, d.ptxas) for d in rep.errors] == [
        (7, "Unknown symbol '%r64'"), (8, "Unknown symbol '%x'"), (10, "Unknown symbol '%q'"),
        (12, "Duplicate definition of label 'L1'")]
    from ptxfp.ptx.reader import name_errors
    assert [m for _, _, m in name_errors(read(text))] == [d.ptxas for d in rep.errors]
    # the same label in two blocks (nvcc's inline asm) is legal
    assert ptxfp.check("{\nL: ret;\n}\n{\nL: ret;\n}\n").ok


def test_module_target_argument_overrides():
    rep = ptxfp.check(MODULE, target="sm_80")
    assert rep.target == "sm_80"
    # add.bf16 needs sm_90; lines with operand errors report those instead
    assert {d.line for d in rep.errors if d.rule == "min-target"} == {15}


def test_module_needs_version_and_target():
    rep = ptxfp.check(".address_size 64\n.visible .entry k()\n{\nret;\n}\n")
    assert sorted(rules(rep)) == ["missing-target", "missing-version"]
    rep = ptxfp.check(".address_size 64\n.visible .entry k()\n{\nret;\n}\n",
                      version="8.0", target="sm_90")
    assert rep.ok


def test_module_header_positions():
    rep = ptxfp.check(".version 8.5\n.target sm_100\n.visible .entry k()\n{\nret;\n}\n")
    (e,) = rep.errors
    assert (e.rule, e.line, e.col) == ("target-version", 2, 9)
    rep = ptxfp.check(".version 4.4\n.target sm_50\n.visible .entry k()\n{\nret;\n}\n")
    (e,) = rep.errors
    assert (e.rule, e.line, e.col) == ("unknown-version", 1, 10)


def test_reg_declarations():
    rep = ptxfp.check(".reg .bf16 x;\nadd.bf16 x, x, x;")
    assert rules(rep)[0] == "reg-type" and "declare .b16" in rep.errors[0].message
    rep = ptxfp.check(".reg .f16x2 y;", target="sm_52", version="4.1")
    assert rules(rep) == ["reg-type", "reg-type"]


def test_block_scoped_registers():
    # nvcc's inline asm declares the same name with different types in different blocks
    text = ("{ .reg .b16 c; fma.rn.bf16 c, c, c, c; }\n"
            "{ .reg .b32 c; fma.rn.bf16x2 c, c, c, c; }\n")
    assert ptxfp.check(text).ok
    assert not ptxfp.check("{ .reg .b32 c; fma.rn.bf16 c, c, c, c; }").ok


def test_unmodeled_instructions_are_info_only():
    rep = ptxfp.check("ld.global.b32 f0, [addr];\nmov.b32 p1, {h0, h1};\nret;\n"
                      "popc.b32 a, a;\nadd.s32 r, r, 1;\nadd.f64 g, g, g;\ncvt.rn.f16.bf16 h, b;",
                      target="sm_90", version="7.8")
    # popc, add.s32, add.f64 and cvt.f16.bf16 are computed by ptxfp.compute and run: modeled
    # (issue 29, item 14), and checked; ld, mov, ret are not
    assert rep.ok and rep.modeled == 4 and rep.unmodeled == 3
    assert rules(rep, "info").count("unmodeled") == 3
    assert rep.unmodeled_counts == {"ld": 1, "mov": 1, "ret": 1}


def test_computed_families_are_modeled_and_checked():
    """issue 29 item 14: what ptxfp.compute/run model, check counts as modeled and checks
    against the row's requirements (cvt.f16.bf16: PTX 7.8, sm_90)."""
    for sp in ("add.s32", "setp.lt.f32", "cvt.rni.s32.f32", "rcp.rn.f64", "mul.wide.s32"):
        rep = ptxfp.check(sp, target="sm_90", version="8.0")
        assert rep.ok and rep.modeled == 1, sp
    rep = ptxfp.check("cvt.rn.f16.bf16", target="sm_80", version="7.0")
    assert sorted(rules(rep)) == ["min-target", "min-version"]


@pytest.mark.parametrize("text,name,hint", [
    ("frob.x.y a;", "frob", None),
    ("fmaa.rn.f16 h, h, h, h;", "fmaa", "fma"),
    ("ADD.F16 h, h, h;", "ADD", "add"),
    ("tcgen05.allocc.cta_group::1.sync.aligned.shared::cta.b32 [r], 32;", "tcgen05",
     "tcgen05.alloc"),
    ("mul24 r, r, r;", "mul24", "mul24."),        # ptxas knows mul24.lo / mul24.hi only
    # ptxas reads these whole and calls them unknown, though barrier / elect are known
    ("barrier.cluster.aligned;", "barrier.cluster", "barrier.cluster."),
    ("elect.one r|p, 0xffffffff;", "elect.one", "elect.sync"),
])
def test_unknown_opcode_is_an_error(text, name, hint):
    """ptxas: "Not a name of any known instruction: 'fmaa'" (ptxas 13.0); not modeled and not
    an instruction of PTX is an error, with the name ptxas gives and a close known one."""
    rep = ptxfp.check(text)
    (e,) = rep.errors
    assert (e.rule, e.ptxas) == ("unknown-instruction",
                                 f"Not a name of any known instruction: '{name}'")
    assert (f"did you mean '{hint}" in e.message) if hint else "did you mean" not in e.message


@pytest.mark.parametrize("text", ["elect r|p, 0xffffffff;", "match.any.b32 r, r, 0xffffffff;",
                                  "redux.add.s32 r, r, 0xffffffff;"])
def test_names_ptxas_knows_without_sync(text):
    """ptxas 13.0 knows elect, match, redux without .sync (tools/opcode_probe.py): its error is
    ".sync modifier required for instruction 'elect'", not an unknown name; ptxfp does not
    model them (no unknown-instruction error)."""
    rep = ptxfp.check(text)
    assert rep.ok and rep.unmodeled == 1


# --------------------------------------------------------------------------------------------
# the manual's examples and nvcc's output

@pytest.mark.parametrize("page,n,block", spec_examples(),
                         ids=[f"{p}#{n}" for p, n, _ in spec_examples()])
def test_spec_examples_check_clean(page, n, block):
    rep = ptxfp.check(block)
    assert rep.ok, rep
    assert rep.modeled + rep.unmodeled == len(read(block).statements)
    # at the targets the manual names, they pass the requirements too
    rep = ptxfp.check(block, target="sm_100", version="8.6")
    assert rep.ok, rep
    # the bf16 add/mul examples need sm_90: below, each is named
    rep = ptxfp.check(block, target="sm_80", version="8.6")
    bf16 = [s for s in read(block).statements
            if s.opcode in ("add", "sub", "mul") and "bf16" in s.opcode_spelling]
    assert {d.line for d in rep.errors} >= {s.line for s in bf16}


def _count_lines(text):
    """Instruction statements of an nvcc module, counted without the reader."""
    n = 0
    for ln in text.splitlines():
        if re.match(r"\s*(\{\s*)?(@!?%p\d+\s+)?[a-z][\w.]*(\s|;)", ln):
            n += 1
    return n


@pytest.mark.parametrize("path", PTX_FILES, ids=[os.path.basename(p) for p in PTX_FILES])
def test_nvcc_modules_check_clean(path):
    text = open(path).read()
    rep = ptxfp.check(text)
    assert rep.ok, "\n".join(str(d) for d in rep.errors)
    assert not rep.warnings
    assert rep.modeled + rep.unmodeled == _count_lines(text)
    # modeled: the half/mixed and .f32/.f32x2 arithmetic, min/max/neg/abs on the half types,
    # and the f32<->half cvt lines of the file
    expected = sum(1 for ln in text.splitlines() if re.match(
        r"\s*(\{\s*)?(add|sub|mul|fma)(\.\w+)*\.(b?f16(x2)?|f32(x2)?)\b"
        r"|\s*(\{\s*)?mad(\.\w+)*\.f32\b"
        r"|\s*(\{\s*)?(min|max|neg|abs)(\.\w+)*\.b?f16"
        r"|\s*(\{\s*)?cvt(\.\w+)*\.(f32\.b?f16|b?f16(x2)?\.f32)\b",
        ln))
    # and, since issue 29 item 14, every other spelling ptxfp.compute/run compute (add.s32,
    # setp, cvt.rni.s32.f32 ...): the instructions whose spelling ptxfp's parser takes
    prog = ptxfp.ptx.read(text)
    computed = 0
    for ins in prog.statements:
        try:
            ptxfp.parse(ins.opcode_spelling)
            computed += 1
        except ptxfp.errors.PtxfpError:
            pass
    assert rep.modeled == computed >= expected
    summary = rep[-1]
    assert summary.rule == "summary"
    assert summary.message.startswith(f"{rep.modeled + rep.unmodeled} instructions: "
                                      f"{rep.modeled} modeled by ptxfp, {rep.unmodeled} not")


def test_nvcc_modules_have_modeled_instructions():
    total = sum(ptxfp.check(open(p).read()).modeled for p in PTX_FILES)
    assert total > 100
    sm100 = [p for p in PTX_FILES if p.endswith("inline_asm_sm100.ptx")]
    if sm100:
        assert ptxfp.check(open(sm100[0]).read()).modeled >= 6


# --------------------------------------------------------------------------------------------
# the cvt table: tests/test_isa_cvt.py holds its rows to ptxas (and check() to its rows)
