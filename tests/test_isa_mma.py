"""The matrix rows (isa/mma.py): mma.sync, wgmma.mma_async and tcgen05.mma.

1. The table as data: every row's tokens and types are known, no two rows accept one
   spelling, every canonical spelling parses back to itself, mma_form() reads it.
2. check() as ptxas 13.0 and 13.5 decide, from recorded data (tests/data/ptxas/mma.jsonl and
   tests/data/ptxas/13.5/mma.jsonl, written by tools/mma_probe.py from spellings it writes
   itself from the manual; check(ptxas=R) for each): for every probed line
   and (.version, .target) pair, check() accepts exactly where ptxas accepts, and the messages
   check() gives are ptxas' messages for that line (all of them where the spelling is legal).
3. Live, where ptxas is installed: a seeded sample of the rows' own canonical spellings goes
   through ptxas and check() side by side.
"""

import collections
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import tempfile

import pytest
from ptxas_records import load_records

import ptxfp
from ptxfp import isa
from ptxfp.errors import SpellingError
from ptxfp.isa import mma_form as mf
from ptxfp.isa.spelling import mma_form, parse

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "data", "ptxas", "mma.jsonl")
#: the recorded decisions of each ptxas release check() is held to
DATA_OF = {"13.0": DATA, "13.5": os.path.join(HERE, "data", "ptxas", "13.5", "mma.jsonl")}

_spec = importlib.util.spec_from_file_location(
    "mma_probe", os.path.join(HERE, os.pardir, "tools", "mma_probe.py"))
mma_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mma_probe)

#: ptxas' messages about the -arch it compiles for, not the .target: check() has no -arch
ARCH_ONLY = re.compile(r"cannot be compiled for architecture")


_REC = load_records(DATA)
needs_data = pytest.mark.skipif(_REC is None, reason="tests/data/ptxas/mma.jsonl missing")
_RECS = {name: load_records(path) for name, path in DATA_OF.items()}


# ---------------------------------------------------------------------------------------------
# 1. the table

def test_rows_are_well_formed():
    counts = collections.Counter(r.opcode for r in isa.MMA)
    assert counts["mma"] > 100 and counts["wgmma.mma_async"] > 400 and counts["tcgen05.mma"] > 200
    for row in isa.MMA:
        assert row.family == "mma" and row.matrix is not None, row
        for t in row.types:
            assert t in mf.ELEMENT_TYPES or t in ("ue8m0", "ue4m3"), (row, t)
        for kind, thr, msg in row.requires:
            while kind.startswith(("ptxas:", "ptx:")):   # per release / per .version
                kind = kind.split(":", 2)[2]
            if kind == "illegal":
                assert msg.startswith("Illegal modifier"), msg
            elif kind == "version":
                assert f".version {thr[0]}.{thr[1]} or later" in msg, msg
            elif kind == "target":
                assert f"sm_{thr} or higher" in msg, msg
            else:
                assert kind.startswith("only:") and "{target}" in msg, (kind, msg)
        assert row.required <= row.modifiers


def test_every_spelling_is_one_row_and_round_trips():
    spellings = isa.canonical_spellings("mma")
    assert len(spellings) == len(set(spellings)) > 1000
    rows_of = collections.defaultdict(set)
    for row, s in isa.mma.spellings():
        rows_of[s].add(id(row))
    assert all(len(v) == 1 for v in rows_of.values())
    for s in spellings:
        ins = parse(s)
        assert str(ins) == s
        f = mma_form(s)
        assert f.spelling == s and f.m * f.n * f.k > 0


def _fragment_regs(f):
    return f


def test_mma_form_fields_from_the_manual():
    f = mma_form("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16")
    assert (f.opcode, f.m, f.n, f.k, f.alayout, f.blayout, f.ctype, f.dtype) == \
        ("mma", 8, 8, 4, "col", "row", "f16", "f32")
    f = mma_form("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0")
    assert (f.kind, f.scale_type, f.scale_vec, f.scale_block) == ("mxf4", "ue8m0", 2, 32)
    f = mma_form("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e3m2.e2m1.f32.ue8m0")
    assert (f.atype, f.btype, f.scale_vec, f.scale_block) == ("e3m2", "e2m1", 1, 32)
    f = mma_form("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc")
    assert (f.bitop, f.atype, f.dtype) == ("and", "b1", "s32")
    f = mma_form("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32")
    assert f.satfinite and (f.atype, f.btype) == ("u8", "s8")
    f = mma_form("wgmma.mma_async.sync.aligned.m64n136k16.f32.bf16.bf16")
    assert (f.opcode, f.m, f.n, f.k, f.ctype) == ("wgmma", 64, 136, 16, "f32")
    f = mma_form("wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3")
    assert (f.atype, f.btype, f.ctype, f.dtype) == ("e5m2", "e4m3", "f16", "f16")
    f = mma_form("tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16.m256n64k64"
                 ".f32.e2m1.e2m1.ue4m3")
    assert (f.opcode, f.m, f.kind, f.scale_type, f.scale_vec, f.scale_block) == \
        ("tcgen05.mma", 256, "mxf4nvf4", "ue4m3", 4, 16)
    f = mma_form("tcgen05.mma.cta_group::1.kind::tf32.m64n8k8.f32.tf32.tf32")
    assert (f.kind, f.k, f.block_scaled) == ("tf32", 8, False)


@pytest.mark.parametrize("spelling, rule, token", [
    ("mma.sync.aligned.m16n8k16.col.col.f32.bf16.bf16.f32", "illegal-layout", ".col"),
    ("mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32", "missing-modifier", None),
    ("mma.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", "illegal-shape", ".m16n8k32"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f16", "illegal-type", ".f32.bf16.bf16.f16"),
    ("mma.sync.aligned.m16n8k16.row.col.rn.f32.bf16.bf16.f32", "unknown-modifier", ".rn"),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32", "missing-modifier", None),
    ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16", "illegal-shape", ".m64n12k16"),
    ("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8", "illegal-shape", ".m64n40k32"),
    ("tcgen05.mma.cta_group::1.kind::f16.m128n12k16.f32.f16.f16", "illegal-shape",
     ".m128n12k16"),
    ("tcgen05.mma.cta_group::1.kind::f16.f32.f16.f16", "missing-type", None),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::4X.m128n8k64.f32.e2m1.e2m1.ue8m0",
     "illegal-combination", ".cta_group::1, .kind::mxf4, .block_scale, .scale_vec::4X"),
])
def test_bad_spellings_name_token_and_rule(spelling, rule, token):
    with pytest.raises(SpellingError) as e:
        mma_form(spelling)
    assert e.value.rule == rule and e.value.token == token, (e.value.rule, e.value.token, str(e.value))


def test_tcgen05_ptx_spelling_parses_but_needs_its_descriptor_for_mma_form():
    ins = parse("tcgen05.mma.cta_group::1.kind::f16")
    assert str(ins) == "tcgen05.mma.cta_group::1.kind::f16" and ins.min_ptx == (8, 6)
    with pytest.raises(SpellingError, match="instruction descriptor"):
        mma_form("tcgen05.mma.cta_group::1.kind::f16")
    with pytest.raises(SpellingError) as e:
        mma_form("add.f16")
    assert e.value.rule == "not-matrix"


# ---------------------------------------------------------------------------------------------
# 2. recorded ptxas decisions

def _module(header, v, t, lines):
    head = [f".version {v}", f".target {t}", ".address_size 64", ".visible .entry probe()", "{"]
    head += [f".reg {ty} {p}<{n}>;" for ty, p, n in header["decls"]]
    return "\n".join(head + lines + ["ret;", "}", ""]), len(head) + 1


def _check_messages(header, v, t, lines, ptxas=None):
    text, first = _module(header, v, t, lines)
    rep = ptxfp.check(text, ptxas=ptxas)
    out = collections.defaultdict(set)
    for d in rep.errors:
        if first <= d.line < first + len(lines):
            out[d.line - first].add(d.ptxas or d.message)
    return out


@pytest.mark.parametrize("release", sorted(DATA_OF))
def test_check_decides_every_recorded_line_as_ptxas(release):
    if _RECS[release] is None:
        pytest.skip(f"{os.path.relpath(DATA_OF[release], HERE)} missing")
    header, recs = _RECS[release]
    table = header["messages"]
    lines = [r["line"] for r in recs]
    pairs = sorted({k for r in recs for k in r["at"]})
    cases = accept_agree = msg_agree = 0
    bad = []
    for key in pairs:
        v, t = key.split("|")
        mine = _check_messages(header, v, t, lines, ptxas=release)
        for i, r in enumerate(recs):
            theirs = {table[j] for j in r["at"][key] if not ARCH_ONLY.search(table[j])}
            got = mine.get(i, set())
            cases += 1
            accept_agree += (not theirs) == (not got)
            if (not theirs) != (not got):
                bad.append((key, r["spelling"], sorted(theirs), sorted(got)))
                continue
            if got <= theirs and (got == theirs or not _legal(r["spelling"])):
                msg_agree += 1
            else:
                bad.append((key, r["spelling"], sorted(theirs - got), sorted(got - theirs)))
    print(f"mma check vs ptxas {release}: {len(bad)} disagreements; {cases} (line, pair) cases, {accept_agree} decisions agree, "
          f"{msg_agree} message sets agree")
    for b in bad[:40]: print(b)
    assert not bad, bad[:5]


def _legal(spelling):
    try:
        parse(spelling)
        return True
    except SpellingError:
        return False


# ---------------------------------------------------------------------------------------------
# 3. live ptxas

PTXAS = shutil.which("ptxas")


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_sampled_canonical_spellings_against_live_ptxas():
    rng = random.Random(24)
    spellings = isa.canonical_spellings("mma")
    sample = rng.sample(spellings, 120) + [
        "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.mma.cta_group::2.kind::i8",
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"]
    lines = [mma_probe.line_for(s) for s in sample]
    header = {"decls": mma_probe.DECLS}
    ver = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    release = re.search(r"release (\d+\.\d+)", ver)[1]   # check() as the live ptxas
    agree = 0
    with tempfile.TemporaryDirectory() as wd:
        for v, t in [("9.0", "sm_90a"), ("8.7", "sm_120a"), ("8.6", "sm_100a"), ("8.4", "sm_89")]:
            ptx = mma_probe.run(PTXAS, lines, v, t, wd)
            mine = _check_messages(header, v, t, lines, ptxas=release)
            for i, s in enumerate(sample):
                theirs = {m for m in ptx.get(i, ()) if not ARCH_ONLY.search(m)}
                assert mine.get(i, set()) == theirs, (v, t, s, sorted(theirs), sorted(mine.get(i, ())))
                agree += 1
    print(f"live: {agree} (spelling, pair) cases agree with ptxas")


# ---------------------------------------------------------------------------------------------
# 4. the CLI: list and eval

def _cli(capsys, *argv):
    from ptxfp.cli import main
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_lists_the_matrix_forms(capsys):
    rc, out, _ = _cli(capsys, "list", "wgmma*", "--json")
    rows = json.loads(out)
    assert rc == 0 and len(rows) == sum(1 for s in isa.canonical_spellings("mma")
                                        if s.startswith("wgmma"))
    assert all(r["min_target"] == "sm_90a" for r in rows)
    rc, out, _ = _cli(capsys, "list", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
    lines = out.splitlines()
    assert rc == 0 and lines[1].split()[1:3] == ["7.0", "sm_80"] and lines[-1] == "1 form"
    rc, out, _ = _cli(capsys, "list", "tcgen05*kind::mxf4nvf4*", "--json")
    assert rc == 0 and {r["min_target"] for r in json.loads(out)} == {"sm_100a"}
    rc, out, _ = _cli(capsys, "list", "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32", "--json")
    assert [(r["min_ptx"], r["min_target"]) for r in json.loads(out)] == [("6.4", "sm_70")]


def test_cli_eval_of_a_matrix_form(capsys, monkeypatch, tmp_path):
    import numpy as np
    s = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    if getattr(ptxfp, "mma", None) is None:
        rc, out, err = _cli(capsys, "eval", s, "--seed", 1)
        assert rc == 2 and "ptxfp.mma" in err and len(err.strip().splitlines()) == 1
        calls = []

        def fake(form, a, b, c, *, target, **kw):
            calls.append((form, target))
            return (np.asarray(a, np.float64) @ np.asarray(b, np.float64)
                    + np.asarray(c, np.float64)).astype(np.float32)
        monkeypatch.setattr(ptxfp, "mma", fake, raising=False)
    rc, out, err = _cli(capsys, "eval", s, "--seed", 1, "--target", "sm_90")
    assert rc == 0, err
    assert out.splitlines()[0].startswith(s) and "d (16x8):" in out
    import ml_dtypes
    a = np.ones((16, 16), ml_dtypes.bfloat16)
    b = np.ones((16, 8), ml_dtypes.bfloat16)
    c = np.zeros((16, 8), np.float32)
    for n, x in zip("abc", (a, b, c)):
        np.save(tmp_path / f"{n}.npy", x)
    rc, out, err = _cli(capsys, "eval", s, f"@{tmp_path / 'a.npy'}", f"@{tmp_path / 'b.npy'}",
                        f"@{tmp_path / 'c.npy'}", "--json")
    assert rc == 0, err
    d = json.loads(out)["d"]
    assert d[0][0] == 16.0 and len(d) == 16 and len(d[0]) == 8
    rc, _, err = _cli(capsys, "eval", s, "@nope.npy", "@nope.npy", "@nope.npy")
    assert rc == 2 and "no such file" in err
    rc, _, err = _cli(capsys, "eval", s, "1.0f32")
    assert rc == 2 and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# 5. operands: fragment vector sizes and operand counts (ptxas 13.0's messages, recorded here
#    from `ptxas -arch sm_90a` and compared live where ptxas is installed)

OPERAND_LINES = [
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0}, {r0,r1,r2,r3}, {r4,r5}, {f4,f5,f6,f7};",
     ["Argument vector size mismatch for instruction 'mma'"]),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0,f1,f2}, {r0,r1,r2,r3}, {r4,r5}, {f4,f5,f6,f7};",
     ["Illegal vector size: 3", "Argument vector size mismatch for instruction 'mma'"]),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0,f1,f2,f3,f4,f5,f6,f7}, {r0,r1,r2,r3}, {r4,r5}, {f4,f5,f6,f7};",
     ["Argument vector size mismatch for instruction 'mma'"]),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0,f1,f2,f3}, {r0,r1,r2,r3}, r4, {f4,f5,f6,f7};",
     ["Vector expected for argument 2"]),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0,f1,f2,f3}, {r0,r1,r2,r3}, {r4,r5};",
     ["Arguments mismatch for instruction 'mma'"]),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {f0,f1,f2,f3}, {r0,r1,r2,r3}, {r4,r5}, {f4,f5,f6,f7};", []),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {f0,f1,f2}, q0, q1, p0, 1, 1, 0, 0;",
     ["Argument vector size mismatch for instruction 'wgmma.mma_async with floating point types'"]),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {f0,f1,f2,f3}, {r0,r1,r2}, q1, p0, 1, 1, 0;",
     ["Argument vector size mismatch for instruction 'wgmma.mma_async with floating point types'"]),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {f0,f1,f2,f3}, {r0,r1,r2,r3}, q1, p0, 1, 1, 0;", []),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {f0,f1,f2,f3}, q0, q1, p0, 1, 1, 0;",
     ["Arguments mismatch for instruction 'wgmma.mma_async'"]),
    ("tcgen05.mma.cta_group::1.kind::f16 [r0], q0, q1, r1;",
     ["Arguments mismatch for instruction 'tcgen05.mma'"]),
]
_OP_HEAD = {"decls": [(".b32", "r", 40), (".f32", "f", 40), (".b64", "q", 4), (".pred", "p", 2)]}


def test_operand_vectors_and_counts_as_ptxas():
    lines = [ln for ln, _ in OPERAND_LINES]
    mine = _check_messages(_OP_HEAD, "9.0", "sm_90a", lines)
    for i, (ln, want) in enumerate(OPERAND_LINES):
        got = mine.get(i, set())
        # tcgen05.mma on sm_90a also lacks its target: only the operand message is asked for
        if ln.startswith("tcgen05"):
            assert set(want) <= got, (ln, got)
        else:
            assert got == set(want), (ln, got)
    if PTXAS is None:
        return
    with tempfile.TemporaryDirectory() as wd:
        orig = mma_probe.DECLS
        try:
            mma_probe.DECLS = _OP_HEAD["decls"]
            ptx = mma_probe.run(PTXAS, lines, "9.0", "sm_90a", wd)
        finally:
            mma_probe.DECLS = orig
    for i, (ln, want) in enumerate(OPERAND_LINES):
        theirs = set(ptx.get(i, ()))
        if ln.startswith("tcgen05"):
            assert set(want) <= theirs and mine.get(i, set()) == theirs, (ln, theirs)
        else:
            assert theirs == set(want), (ln, theirs)


@pytest.mark.parametrize("kind, k, types", [("f16", 16, "f32.bf16.bf16"), ("tf32", 8, "f32.tf32.tf32"),
                                            ("f8f6f4", 32, "f16.e2m1.e4m3")])
def test_tcgen05_takes_m128n8(kind, k, types):
    """One CTA, M 128: N from 8 in steps of 8 (the manual's table; MMA-Sim 2.1.1 lists it)."""
    from ptxfp.isa.spelling import mma_form
    f = mma_form(f"tcgen05.mma.cta_group::1.kind::{kind}.m128n8k{k}.{types}")
    assert (f.m, f.n, f.k) == (128, 8, k)


def test_mma_sync_needs_sm_70():
    """Below sm_70 ptxas (13.0 and 13.5, .target sm_50/sm_60 under -arch sm_75) refuses every
    mma.sync, m8n8k4 included: "Feature 'mma' requires .target sm_70 or higher", and for
    m8n8k4 also "Feature '.m8n8k4' requires .target sm_70 or higher"."""
    text = (".version 9.0\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n"
            ".reg .f32 f<8>;\n.reg .b32 r<4>;\nmma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 "
            "{{f0,f1,f2,f3,f4,f5,f6,f7}}, {{r0,r1}}, {{r2,r3}}, {{f0,f1,f2,f3,f4,f5,f6,f7}};\n"
            "ret;\n}}\n")
    for release in ("13.0", "13.5"):
        rep = ptxfp.check(text.format(t="sm_60"), ptxas=release)
        assert [d.ptxas for d in rep.errors] == [
            "Feature 'mma' requires .target sm_70 or higher",
            "Feature '.m8n8k4' requires .target sm_70 or higher"], rep.errors
        assert ptxfp.check(text.format(t="sm_70"), ptxas=release).ok


def test_list_names_every_shape_of_each_kind():
    """`ptxfp list` (isa.canonical_spellings('mma')) names every shape a row takes, tcgen05's
    included, each with its own target check (m128n8 of kind::f16 among them)."""
    spellings = set(isa.canonical_spellings("mma"))
    for row in isa.mma.ROWS:
        if row.opcode != "tcgen05.mma":
            continue
        for shape in row.matrix.shapes:
            assert isa.mma.canonical(row, shape, with_types=True) in spellings
    assert "tcgen05.mma.cta_group::1.kind::f16.m128n8k16.f32.f16.f16" in spellings
    f64 = ptxfp.parse("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64")
    assert (f64.min_target, ptxfp.parse(
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64").min_target) == ("sm_90", "sm_80")


def _expand(text):
    """Every spelling one folded `ptxfp list` line names: its shape braces
    ('m64n{8..32 step 8,48..256 step 16}k32') and tcgen05's type products expanded."""
    import itertools

    def nums(part):
        if not part.startswith("{"):
            return [int(part)]
        out = []
        for p in part[1:-1].split(","):
            m = re.fullmatch(r"(\d+)\.\.(\d+) step (\d+)", p)
            out += list(range(int(m[1]), int(m[2]) + 1, int(m[3]))) if m else [int(p)]
        return out

    def alts(tok):
        return tok[1:-1].split(",") if tok.startswith("{") else [tok]

    cols = re.split(r"\s{2,}", text.strip())
    form, summary = cols[0], cols[4] if len(cols) > 4 else ""
    shapes_txt, _, types_txt = summary.partition("; types ")
    shapes = []
    for sh in re.split(r",\s(?=m)", shapes_txt):
        m = re.fullmatch(r"m(\d+)n(\{[^}]*\}|\d+)k(\d+)", sh)
        shapes += [f"m{m[1]}n{n}k{m[3]}" for n in nums(m[2])]
    if form.startswith("tcgen05"):
        types = []
        for t in types_txt.split(" "):
            types += [".".join(p) for p in itertools.product(
                *(alts(x) for x in re.findall(r"\{[^}]*\}|[^.{}]+", t)))]
        return {f"{form}.{s}.{t}" for s in shapes for t in types}
    return {form.replace("{shape}", s) for s in shapes}


def test_list_folds_the_matrix_shapes_and_all_expands(capsys):
    """`ptxfp list` prints one line per matrix spelling less its shape (tcgen05.mma: per PTX
    spelling, with the descriptor's types), its shapes summarized; the summaries name exactly
    the spellings --all (and --json) lists, and eval takes them."""
    rc, out, _ = _cli(capsys, "list", "tcgen05")
    lines = out.splitlines()
    every = {s for s in isa.canonical_spellings("mma") if s.startswith("tcgen05")}
    assert rc == 0 and len(lines) == 2 + 28, out
    assert lines[-1] == f"{len(every)} forms on 28 lines (the matrix forms' shapes folded; " \
                        "--all lists each)"
    f16 = next(ln for ln in lines if ln.startswith("tcgen05.mma.cta_group::1.kind::f16 "))
    assert "m64n{8..256 step 8}k16, m128n{8..256 step 8}k16; types f16.f16.f16 f32.f16.f16 " \
           "f32.bf16.bf16" in f16
    got = set()
    for ln in lines[1:-1]:
        got |= _expand(ln)
    assert got == every
    rc, out, _ = _cli(capsys, "list", "tcgen05", "--all")
    assert [ln.split()[0] for ln in out.splitlines()[1:-1]] == sorted(
        every, key=[s for s in isa.canonical_spellings("mma")].index)
    assert out.splitlines()[-1] == f"{len(every)} forms"
    rc, out, _ = _cli(capsys, "list", "wgmma")
    folded = [ln for ln in out.splitlines()[1:-1]]
    assert len(folded) == 21 and set().union(*map(_expand, folded)) == {
        s for s in isa.canonical_spellings("mma") if s.startswith("wgmma")}
    assert "m64n{8..32 step 8,48..256 step 16}k32" in out
    # eval takes the spellings a summary names (the widest shape of one kind here)
    rc, out, _ = _cli(capsys, "eval", "tcgen05.mma.cta_group::2.kind::tf32.m256n256k8.f32.tf32.tf32",
                      "--seed", "1")
    assert rc == 0 and "256" in out


def test_api_md_list_example_is_real_output(capsys):
    """docs/api.md's `ptxfp list tcgen05 kind::i8` block is what the command prints."""
    text = open(os.path.join(HERE, os.pardir, "docs", "api.md")).read()
    block = text.split("$ ptxfp list tcgen05 kind::i8\n", 1)[1].split("```", 1)[0]
    rc, out, _ = _cli(capsys, "list", "tcgen05", "kind::i8")
    assert rc == 0 and out == block
