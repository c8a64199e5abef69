"""The reader's fast statement path (reader._Parser.fast: a plain statement line read with one
regular expression, tokens made on demand) against the token path (every token made first,
the reader as it was before the fast path): the same Program, or the same error, on every PTX
file of tests/data, on the interpreter benchmark's snippet, and on mutations of their lines."""

import glob
import os
import sys

import pytest

from ptxfp.ptx import reader

HERE = os.path.dirname(__file__)
FILES = sorted(glob.glob(os.path.join(HERE, "data", "realworld", "*.ptx"))
               + glob.glob(os.path.join(HERE, "data", "ptx", "*.ptx")))


def reference(text, mode="auto"):
    """read() by tokens only: every token made first, the mode from them."""
    if mode == "auto":
        bare = reader._strip_comments(text).strip()
        if reader._SPELLING.fullmatch(bare.rstrip(";").strip()):
            return reader.read(text, mode="spelling")
        toks = reader.tokenize(text)
        mode = "module" if any(t.kind == "dir" and t.text in reader._MODULE_DIRECTIVES
                               for t in toks) else "snippet"
        return reader._Parser(text, mode, toks).parse()
    if mode == "spelling":
        return reader.read(text, mode="spelling")
    return reader._Parser(text, mode, reader.tokenize(text)).parse()


def summary(prog):
    """What a Program says, as comparable values (statements with positions, source text,
    function, label; declarations; labels; directives; header)."""
    def names(table):
        return [(n, c, d.type, d.line, d.col, d.space, d.vector, d.array)
                for n, c, d in table.entries()]
    return {
        "kind": prog.kind,
        "statements": [(s, s.opcode_spelling, s.text, s.label, s.function, s.line, s.col,
                        id(s.scope) and [s.scope.lookup(str(o)) is not None
                                         for o in s.operands])
                       for s in prog.statements],
        "functions": [(f.name, f.kind, f.params, f.returns, len(f.body), f.line, f.col,
                       f.linkage, f.has_body, names(f.registers), f.labels)
                      for f in prog.functions],
        "registers": names(prog.registers), "variables": names(prog.variables),
        "labels": prog.labels, "directives": prog.directives,
        "header": (prog.version, prog.version_pos, prog.target, prog.target_pos,
                   prog.target_options, prog.address_size, prog.address_size_pos),
    }


def outcome(fn, text, mode):
    try:
        return "ok", summary(fn(text, mode=mode))
    except Exception as e:             # the same exception, message and position
        return "error", type(e).__name__, str(e), getattr(e, "line", None), \
            getattr(e, "col", None)


def same(text, mode="auto"):
    got, want = outcome(reader.read, text, mode), outcome(reference, text, mode)
    assert got == want, (text, got, want)
    return got


@pytest.fixture
def counted(monkeypatch):
    """How many statements the fast path read."""
    hits = [0]
    real = reader._Parser.fast

    def fast(self):
        ok = real(self)
        hits[0] += ok
        return ok
    monkeypatch.setattr(reader._Parser, "fast", fast)
    return hits


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_files_read_the_same(path, counted):
    text = open(path, encoding="utf-8", errors="replace").read()
    assert same(text)[0] == "ok"
    if "_sm_" in os.path.basename(path):
        assert counted[0] > 0                   # nvcc's modules: the fast path is taken


def test_benchmark_snippet_reads_the_same(counted):
    sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
    try:
        import interp_bench
    finally:
        sys.path.pop(0)
    text = interp_bench.snippet(300)
    same(text)
    same(text, "snippet")
    assert counted[0] >= 2 * 300               # every line of both reads


SEEDS = [
    "add.s32 %r1, %r2, 4;", "@%p1 bra LBB0_2;", "@!%p2 fma.rn.f16 %h1, %h2, %h3, %h4;",
    "mov.b32 %r1, {%h1, %h2};", "mov.b32 {%h1, %h2}, %r1;", "ld.global.v2.f32 {%f1, %f2}, "
    "[%rd1+8];", "st.global.b32 [%rd2-0x10], %r3;", "ld.param.u64 %rd1, [p];",
    "cvt.rn.f16.f32 %h1, 0f3F800000;", "mov.f64 %fd1, 0d3FF0000000000000;",
    "add.f32 %f1, %f2, 1.5e3;", "add.s32 %r1, %r2, -7;", "and.pred %p1, !%p2, %p3;",
    "setp.lt.s32 %p1|%p2, %r1, %r2;", "ret;", "L1: add.u32 %r1, %r1, 0b101u;",
    "shl.b32 %r1, %r2, 017;", "ld.global.b32 %r1, [1024];", "mov.u64 %rd1, g+4;",
    "mul.wide.s32 %rd1, %r1, 4; // a comment", "exit ;",
]


def mutations(line):
    """Deletions, insertions of the characters PTX gives meaning to, and truncations."""
    chars = ",;{}[]+-!@%.0xf|:\"/*\n \t\u00e9"
    seen = {line}
    for i in range(len(line) + 1):
        cands = [line[:i], line[:i] + line[i + 1:]]
        cands += [line[:i] + c + line[i:] for c in chars]
        for c in cands:
            if c not in seen:
                seen.add(c)
                yield c


def test_mutated_lines_read_the_same():
    for line in SEEDS:
        for m in mutations(line):
            same(m + "\n")
            same("\t" + m + "\n  ret;\n", "snippet")
            same(f".reg .b32 %r<4>;\n{m}")
            same(f".version 8.0\n.target sm_90\n.entry k()\n{{\n{m}\n}}\n")
            same(f".version 8.0\n.target sm_90\n.entry k()\n{{\n.loc 1 2 3\n{m}\n}}\n")


def test_mutated_module_lines_read_the_same():
    """Lines of an nvcc module's body, each mutated in place, in a module of its header, its
    declarations and those lines."""
    path = next(p for p in FILES if p.endswith("triton_mm_sm_90a.ptx"))
    lines = open(path, encoding="utf-8").read().split("\n")
    head = [ln for ln in lines if ln.startswith((".version", ".target", ".address_size"))]
    decls = [ln for ln in lines if ln.strip().startswith(".reg")]
    body = [ln for ln in lines if ln.strip().endswith(";") and not ln.strip().startswith(".")
            or ln.strip().endswith(":")][:30]
    for i, line in enumerate(body):
        for k, m in enumerate(mutations(line)):
            if k % 5 == 0:
                same("\n".join(head + [".visible .entry k()", "{"] + decls + body[:i] + [m]
                               + body[i + 1:] + ["}", ""]))


@pytest.mark.parametrize("after", [
    "\n  add.s32 %r1, %r2, 1;", "\n;\nret;", " ;\nret;", "\n/* c */ ;\nret;", "\n/* c\n */ ;ret;",
    " // c\n\n ret;", "", "\n", " 4 5\nret;", "\n.loc 1 2 3\n@%p1 bra L;\nL: ret;",
    "/* c */ ret;", "\n\tmov.b32 %r1, {%h1, %h2};\n"])
def test_line_directives_read_the_same(after):
    """After '.loc' the next token is made only when it may be a ';' on the next line."""
    same(f".version 8.0\n.target sm_90\n.entry k()\n{{\n.loc 1 2 3{after}\n}}\n")


def test_errors_after_the_first_statement_keep_their_order():
    """A character the lexer refuses wins over a parse error before it, as when every token
    was made first; a parse error with nothing unreadable after it is itself."""
    same("add.s32 %r1, %r2;\nadd.s32 %r1 %r2;\nadd.s32 %r1, %r2, \u00e9;\n")
    same("add.s32 %r1, %r2;\nadd.s32 %r1 %r2;\nadd.s32 %r1, %r2, 4;\n")
    same("add.s32 %r1, %r2;\n/* open\nadd.s32 %r1, %r2;\n")
    same("add.s32 %r1, %r2, 09;\nmov.b32 %r1, 1" + "0" * 1200 + ";\n")
