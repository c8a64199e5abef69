"""gen / ver / sweep (ptxfp.conformance, docs/verify.md).

gen's expected bits are checked against the MPFR oracles (tests/oracle.py for add/sub/mul/fma,
the cvt oracle of tests/test_convert.py), never against ptxfp.  ver and sweep are checked on
implementations written without ptxfp (tests/conformance_impls.py, and a C library compiled
here): a bf16 fma that rounds twice through binary32, one whose NaNs are not canonical, and
correct ones, which must pass.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import conformance_impls as ci
import oracle_minmax
import oracle as mpfr
import ptxfp
from ptxfp import cli
from ptxfp.conformance import CLASSES, Report, forms, generate, source, sweep, verify
from ptxfp.conformance import sweeps, textio, verify_file, write_file
from ptxfp.errors import PtxfpError
from test_convert import oracle as cvt_oracle

WITNESS = (0x3F82, 0x3FA0, 0x0001)       # fma.rn.bf16: 0x3FA3 once, 0x3FA2 through binary32
#: known double-rounding witnesses, always among the vectors of these forms (ptxfp.vectors)
PINNED = {"fma.rn.bf16": [WITNESS, (0xBF82, 0x3FA0, 0x8001)],
          "fma.rn.f16": [(0x3C01, 0x3E00, 0x8001), (0xBC01, 0x3E00, 0x0001)]}


def _oracle(spelling, row):
    if spelling.startswith("cvt."):
        return cvt_oracle(spelling, *row)
    if spelling.split(".")[0] in ("min", "max", "neg", "abs"):
        return oracle_minmax.compute(spelling, *row)
    return mpfr.compute(spelling, *row)


def _read(path):
    """A gen file read plainly (no ptxfp code): header lines, rows of ints."""
    head, rows = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                head.append(line)
            else:
                rows.append([int(t, 16) for t in line.split()])
    return head, rows


# ---- gen -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [s for s in forms.all_spellings()
                                      if not forms.form(s).small])   # small: test_conformance_small
def test_gen_agrees_with_mpfr(spelling, monkeypatch):
    """A sample of every form's level-1 vectors (targeted, own cases, random) against MPFR."""
    monkeypatch.setattr(source, "OWN_POOL", 4096)
    rng = np.random.default_rng(abs(hash(spelling)) % 2**32)
    bad, checked = [], 0
    # every part of the file: the special-value grid, the targeted families and the witnesses
    # found, the random vectors; 25 rows of each (the first ones, the rest at random)
    for cols in generate(spelling, level=1, n=300, seed=3):
        n = cols[0].size
        pinned = [np.nonzero(np.logical_and.reduce([c == x for c, x in zip(cols, row)]))[0]
                  for row in PINNED.get(spelling, ())]
        pick = np.unique(np.concatenate([rng.choice(n, min(n, 22), replace=False),
                                         np.arange(min(n, 3))] + pinned))
        for i in pick:
            row = [int(c[i]) for c in cols]
            want = _oracle(spelling, row[:-1])
            checked += 1
            if want != row[-1]:
                bad.append(f"{' '.join(f'{x:X}' for x in row[:-1])}: gen {row[-1]:X}, "
                           f"MPFR {want:X}")
    assert checked >= 60 + len(PINNED.get(spelling, ())) and not bad, \
        f"{spelling}: {len(bad)} of {checked}: " + "; ".join(bad[:5])


def test_gen_file_layout(tmp_path):
    path = tmp_path / "fma.txt"
    n = write_file("fma.rn.bf16", path, n=500, seed=2)
    head, rows = _read(path)
    assert head[0].startswith(f"# ptxfp {ptxfp.__version__} gen fma.rn.bf16 level 1")
    assert any("policy:" in h and "canonical_nan_bf16=0x7fff" in h for h in head)
    assert len(rows) == n and all(len(r) == 4 for r in rows)
    text = path.read_text().splitlines()
    assert "3F82 3FA0 0001 3FA3" in text                     # the pinned witness
    body = [t for t in text if not t.startswith("#")]
    assert all(len(t) == 19 and t == t.upper() for t in body)
    # every combination of the special values is there (TestFloat level 1's idea)
    sp = [int(x) for x in source.specials("bf16")]
    triples = {tuple(r[:3]) for r in rows}
    assert all((a, b, c) in triples for a in sp[:5] for b in sp for c in sp[-5:])
    # the widths of the mixed and packed forms
    p2 = tmp_path / "m.txt"
    write_file("fma.rn.f32.bf16", p2, n=10)
    body = [t for t in p2.read_text().splitlines() if not t.startswith("#")]
    assert body and all(len(t) == 4 + 1 + 4 + 1 + 8 + 1 + 8 for t in body)


def test_gen_levels_and_determinism():
    one = sum(c[0].size for c in generate("mul.rn.f16", level=1, n=0))
    two = sum(c[0].size for c in generate("mul.rn.f16", level=2, n=0))
    assert two > 2 * one
    a = [c for c in generate("add.rn.bf16x2", n=3000, seed=9)]
    b = [c for c in generate("add.rn.bf16x2", n=3000, seed=9)]
    assert all((x == y).all() for ca, cb in zip(a, b) for x, y in zip(ca, cb))


def test_gen_streams_in_chunks(monkeypatch):
    """A large request never builds more than one chunk of random vectors at a time."""
    monkeypatch.setattr(source, "CHUNK", 1000)
    sizes = [c[0].size for c in source.vectors(forms.form("add.rn.f16"), 1, 10_500, 1,
                                               max_chunk=1000)]
    assert max(sizes) <= 1000 and sum(sizes) >= 10_500
    assert len(source.plan(forms.form("add.rn.f16"), 1, 10**8, 1)) == 2 + 10**5


def test_gen_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    real = source.build
    calls = []

    def failing(form, chunk):
        calls.append(chunk)
        if len(calls) == 3:
            raise RuntimeError("disk on fire")
        return real(form, chunk)

    monkeypatch.setattr(source, "build", failing)
    with pytest.raises(RuntimeError):
        write_file("add.rn.f16", path, n=5000)
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_gen_cli(tmp_path, capsys):
    out = tmp_path / "v.txt"
    assert cli.main(["gen", "cvt.rn.f16.f32", "-n", "100", "-o", str(out)]) == 0
    assert _read(out)[1]
    assert cli.main(["gen", "fma.rn.bf1"]) == 2
    assert cli.main(["gen", "fma.rn.bf16", "--level", "3"]) == 2
    err = capsys.readouterr().err
    assert "'.bf1'" in err and "Traceback" not in err


# ---- ver -------------------------------------------------------------------------------------

def _results_file(path, spelling, impl, n=20_000, seed=5):
    """gen's file with the last column replaced by an implementation's results."""
    with open(path, "wb") as f:
        for cols in generate(spelling, n=n, seed=seed):
            ops = cols[:-1]
            got = np.asarray(impl(*ops))
            f.write(textio.format_lines(ops + (got,), forms.form(spelling).operand_widths
                                        + (forms.form(spelling).result_width,)))


def test_ver_catches_double_rounding(tmp_path):
    path = tmp_path / "dr.txt"
    _results_file(path, "fma.rn.bf16", ci.fma_bf16_via_f32)
    rep = verify_file("fma.rn.bf16", path)
    assert not rep.ok and rep.counts.get("result double-rounded", 0) > 0
    lines = path.read_text().splitlines()
    wline = lines.index("3F82 3FA0 0001 3FA2") + 1
    # the pinned witness sits early in the file: among the first witnesses of its class
    assert any(w[0] == wline for w in rep.witnesses["result double-rounded"]) or \
        rep.counts["result double-rounded"] > 5
    one = verify("fma.rn.bf16", *[np.array([x], np.uint16) for x in WITNESS],
                 got=np.array([0x3FA2], np.uint16))
    assert one.counts == {"result double-rounded": 1}


def test_ver_catches_nan_not_canonical(tmp_path):
    path = tmp_path / "nan.txt"
    impl = ci.fma_bf16_nan_quiet(ci.fma_bf16_correct)
    _results_file(path, "fma.rn.bf16", impl)
    rep = verify_file("fma.rn.bf16", path)
    _, rows = _read(path)
    nans = sum(1 for r in rows if r[-1] == 0x7FC0)
    assert nans > 100
    assert rep.counts == {"NaN not canonical": nans}


def test_ver_passes_correct_implementations(tmp_path):
    path = tmp_path / "ok.txt"
    _results_file(path, "fma.rn.bf16", ci.fma_bf16_correct)
    assert verify_file("fma.rn.bf16", path).ok
    path2 = tmp_path / "self.txt"
    write_file("fma.rn.relu.f16x2", path2, n=2000)     # ptxfp against itself
    assert verify_file("fma.rn.relu.f16x2", path2).ok
    assert cli.main(["ver", "fma.rn.relu.f16x2", str(path2)]) == 0


def test_ver_fast_and_line_by_line_readers_agree(tmp_path):
    plain = tmp_path / "plain.txt"
    _results_file(plain, "add.rn.bf16", lambda a, b: ci.add_f16_numpy(a, b), n=3000)
    lines = plain.read_text().splitlines()
    ragged = ["# a comment", ""]
    for i, t in enumerate(lines):
        toks = t.split()
        if i % 3 == 0:
            toks = ["0x" + x.lower() for x in toks]
        elif i % 3 == 1:
            toks = [x.lstrip("0") or "0" for x in toks]
        ragged.append("\t".join(toks) if i % 2 else "  ".join(toks))
        if i == 1000:
            ragged.append("# mid-file comment")
    (tmp_path / "ragged.txt").write_text("\r\n".join(ragged) + "\r\n")
    a = verify_file("add.rn.bf16", plain)
    b = verify_file("add.rn.bf16", tmp_path / "ragged.txt")
    assert a.total == b.total == len(lines) and a.counts == b.counts and a.mismatches > 0
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(plain.read_bytes().replace(b"\n", b"\r\n"))
    assert verify_file("add.rn.bf16", crlf).counts == a.counts


def test_ver_ragged_reader():
    """The vectorized reader of ragged lines agrees with the line-by-line one, and leaves
    every line it cannot place to it (which names the line)."""
    block = b"0x3f82\t0x3fa0 0x1  0x3fa3\r\n\n3F82 3FA0 0001 3FA2\n0x0 0 0 0x8000\n"
    names = ("a", "b", "c", "result")
    got = textio._ragged(block, (16, 16, 16, 16), 7)
    want = textio._slow(block, (16, 16, 16, 16), 7, names)
    assert got[0].tolist() == want[0].tolist() == [7, 9, 10]
    assert all((x == y).all() for x, y in zip(got[1], want[1]))
    for bad in (b"1 2 3 4 5\n1 2 3\n", b"1 2 3 4\n# c\n", b"1 2 3 10000\n",
                b"1 2 3 4g\n", b"1 2 3 0x\n", b"30x1 2 3 4\n", b"1 2 3 0x0x1\n"):
        assert textio._ragged(bad, (16, 16, 16, 16), 1) is None, bad
    with pytest.raises(textio.VectorFileError, match="line 1: expected 4 hex tokens"):
        textio._slow(b"1 2 3 4 5\n1 2 3\n", (16, 16, 16, 16), 1, names)


@pytest.mark.parametrize("text, token", [
    ("3F82 3FA0 0001 3FA3\n3F82 3FA0 0001 3FZ2\n", "line 2: token '3FZ2'"),
    ("# h\n3F82 3FA0 0001\n", "line 2: expected 4 hex tokens"),
    ("3F82 3FA0 0001 3FA3 77\n", "first extra token '77'"),
    ("3F82 3FA0 10001 3FA3\n", "line 1: token '10001' (c) does not fit in 16 bits"),
])
def test_ver_malformed_line_is_exit_2(tmp_path, capsys, text, token):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    assert cli.main(["ver", "fma.rn.bf16", str(p)]) == 2
    err = capsys.readouterr().err
    assert token in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_ver_reads_stdin(monkeypatch, capsys):
    data = b"# from a testbench\n3F82 3FA0 0001 3FA3\n0000 0000 0000 0000\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main(["ver", "fma.rn.bf16", "-"]) == 0
    assert "2 lines, 2 agree with ptxfp, 0 differ (pass)" in capsys.readouterr().out


def test_ver_cli_mismatch_report(tmp_path, capsys):
    p = tmp_path / "r.txt"
    p.write_text("3F82 3FA0 0001 3FA2\n3F82 3FA0 0001 3FA3\n0000 0000 0000 8000\n")
    assert cli.main(["ver", "fma.rn.bf16", str(p)]) == 1
    out = capsys.readouterr().out
    assert "result double-rounded: 1 line" in out and "-0 where +0: 1 line" in out
    assert "expected 3FA3  1.2734375" in out and "got      3FA2  1.265625" in out
    assert "3 lines, 1 agree with ptxfp, 2 differ" in out
    assert cli.main(["ver", "fma.rn.bf16", str(tmp_path / "missing.txt")]) == 2


@pytest.mark.parametrize("spelling, ops, got, cls", [
    ("add.rn.f16", (0x3C00, 0x7C01), 0x7E01, "NaN not canonical"),
    ("add.rn.f16", (0x3C00, 0x3C00), 0x7FFF, "NaN where a number"),
    ("add.rn.f16", (0x7C00, 0xFC00), 0x7C00, "number where NaN"),
    ("sub.rn.f16", (0x3C00, 0x3C00), 0x8000, "-0 where +0"),
    ("add.rn.f16", (0x8000, 0x8000), 0x0000, "+0 where -0"),
    ("fma.rn.f16", (0x3C01, 0x3E00, 0x8001), 0x3E02, "result double-rounded"),
    ("mul.rn.f16", (0x0200, 0x3C00), 0x0000, "subnormal flushed"),
    ("add.rn.f16", (0x03FF, 0x0400), 0x0400, "subnormal flushed"),    # the input flushed
    ("add.rn.f16", (0x3C00, 0x3C00), 0x4001, "off by one ulp"),
    ("mul.rn.f16", (0x7BFF, 0x4000), 0x7BFF, "overflow handling"),
    ("mul.rn.f16", (0x3C00, 0x4000), 0x4400, "other"),
    ("cvt.rn.bf16x2.f32", (0x3F800000, 0x7FC00001), 0x3F807FC0, "NaN not canonical"),
    ("add.rn.f32.bf16", (0x3F80, 0x3F800000), 0x40000001, "off by one ulp"),
])
def test_classes(spelling, ops, got, cls):
    f = forms.form(spelling)
    arrs = [np.array([x], forms.dtype(w)) for x, w in zip(ops, f.operand_widths)]
    want = _oracle(spelling, list(ops))
    assert want != got
    rep = Report(f.spelling).add(f, arrs, np.array([want]), np.array([got]))
    assert rep.counts == {cls: 1}, (rep.counts, hex(want))


def test_fma_not_fused_class():
    # bf16: a*b = 1 + 2**-8 (a tie) rounds to 1.0 alone; c = 2**-8 * small pushes it up once
    rep = verify("fma.rn.bf16", np.array([0x3F81], np.uint16), np.array([0x3F7F], np.uint16),
                 np.array([0x3300], np.uint16), got=np.array([0x3F80], np.uint16))
    assert set(rep.counts) <= {"fma not fused", "result double-rounded", "off by one ulp"}


# ---- sweep -----------------------------------------------------------------------------------

def test_sweep_catches_planted_implementations():
    r = sweep("fma.rn.bf16", ci.fma_bf16_via_f32, random=100_000, workers=0, chunk=40_000)
    assert r.counts.get("result double-rounded", 0) > 20
    assert r.total == sweeps.make_plan("fma.rn.bf16", random=100_000).size
    r = sweep("fma.rn.bf16", ci.fma_bf16_nan_quiet(ci.fma_bf16_correct), random=100_000,
              workers=0)
    assert list(r.counts) == ["NaN not canonical"]
    r = sweep("fma.rn.bf16", ci.fma_bf16_correct, random=100_000, workers=0)
    assert r.ok and r.total > 100_000
    # ptxfp against itself, a packed form and a cvt form
    for s in ("fma.rn.oob.relu.bf16x2", "cvt.rz.relu.bf16x2.f32"):
        f = forms.form(s)
        assert sweep(s, lambda *ops, f=f: f.model(*ops), random=20_000, workers=0).ok


def test_sweep_exhaustive_index_space():
    f = forms.form("fma.rn.f16")
    p = sweeps.make_plan("fma.rn.f16", exhaustive=True, chunk=1000)
    assert p.size == 2**48
    (a, b, c), base = sweeps.chunk_operands(f, p, 123_456_789)
    i = 123_456_789 * 1000 + 7
    assert base == i - 7 and (int(a[7]), int(b[7]), int(c[7])) == \
        (i >> 32, (i >> 16) & 0xFFFF, i & 0xFFFF)
    p2 = sweeps.make_plan("add.rn.f16x2", exhaustive=True)
    (a, b), _ = sweeps.chunk_operands(forms.form("add.rn.f16x2"), p2, 0)
    assert p2.size == 2**32 and int(a[5]) == 0x80000000 and int(b[5]) == 0x00050005
    assert sweeps.make_plan("add.f32.f16", exhaustive=True).size == 2**48
    with pytest.raises(PtxfpError, match="--random"):
        sweeps.make_plan("fma.rn.f32.f16", exhaustive=True)
    # every f16 input once: cvt.f32.f16 against NumPy's float16 widening
    def widen(a):
        x = a.view(np.float16).astype(np.float32).view(np.uint32)
        return np.where(np.isnan(a.view(np.float16)), np.uint32(0x7FFFFFFF), x)
    r = sweep("cvt.f32.f16", widen, exhaustive=True, workers=0, chunk=10_000)
    assert r.ok and r.total == 65536


@pytest.mark.parametrize("spelling", ["sub.rn.f16", "fma.rn.bf16x2", "add.rz.f32.f16",
                                      "mul.rn.bf16x2"])
def test_sweep_exhaustive_chunks_by_formula(spelling):
    """The compiled chunk builder against the index formula written out here."""
    f = forms.form(spelling)
    p = sweeps.make_plan(spelling, exhaustive=True, chunk=997)
    bits = [16 if x in ("f16", "bf16") else 32 for x in f.lane_formats()]
    for cid in (0, 5, p.chunks // 2, p.chunks - 1):
        ops, base = sweeps.chunk_operands(f, p, cid)
        for j in (0, 1, ops[0].size - 1):
            i = base + j
            want = []
            for lane in range(f.lanes):
                x = (i + lane * p.size // 2) % p.size
                fields, shift = [], sum(bits)
                for w in bits:
                    shift -= w
                    fields.append((x >> shift) & ((1 << w) - 1))
                want.append(fields)
            got = [int(o[j]) for o in ops]
            if f.lanes == 1:
                assert got == want[0]
            else:
                assert got == [lo | (hi << 16) for lo, hi in zip(*want)]


C_SOURCE = r"""
#include <stdint.h>
#include <stddef.h>
#include <string.h>
static float bf(uint16_t x) {
    uint32_t u = (uint32_t)x << 16; float f; memcpy(&f, &u, 4); return f;
}
static uint16_t rne(float f) {
    uint32_t u; memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
/* fma.rn.bf16 the way simulators write it: binary32, then rounded again */
uint16_t fma_bf16_elem(uint16_t a, uint16_t b, uint16_t c) {
    volatile float p = bf(a) * bf(b);
    volatile float s = p + bf(c);
    return rne(s);
}
void fma_bf16_array(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *d,
                    size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = fma_bf16_elem(a[i], b[i], c[i]);
}
"""


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("clib")
    src = d / "fpu.c"
    src.write_text(C_SOURCE)
    so = d / "libfpu.so"
    r = subprocess.run([cc, "-O2", "-ffp-contract=off", "-shared", "-fPIC", str(src), "-o",
                        str(so)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot compile: {r.stderr[:200]}")
    return str(so)


def test_sweep_c_library(clib, capsys):
    py = sweep("fma.rn.bf16", ci.fma_bf16_via_f32, random=50_000, workers=0)
    arr = sweep("fma.rn.bf16", lib=f"{clib}:fma_bf16_array", random=50_000, workers=0)
    ew = sweep("fma.rn.bf16", lib=f"{clib}:fma_bf16_elem", lib_kind="elementwise",
               random=50_000, workers=0)
    assert py.counts == arr.counts == ew.counts and "result double-rounded" in py.counts
    assert cli.main(["sweep", "fma.rn.bf16", "--lib", f"{clib}:nosuch", "--random", "10",
                     "--workers", "0"]) == 2
    assert "no symbol 'nosuch'" in capsys.readouterr().err


def test_sweep_cli(capsys):
    here = os.path.dirname(os.path.abspath(__file__))
    rc = cli.main(["sweep", "fma.rn.bf16", "--impl",
                   os.path.join(here, "conformance_impls.py") + ":fma_bf16_via_f32",
                   "--random", "20000", "--workers", "0", "-q"])
    out, err = capsys.readouterr()
    assert rc == 1 and "result double-rounded:" in out and "differ" in out
    assert cli.main(["sweep", "fma.rn.bf16", "--impl", "nosuchmodule:f", "--random",
                     "10", "--workers", "0"]) == 2
    assert cli.main(["sweep", "fma.rn.f32.f16", "--impl", "conformance_impls:fma_bf16_correct",
                     "--exhaustive", "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "cannot import 'nosuchmodule'" in err and "2^64" in err and "Traceback" not in err


def test_sweep_without_dask_runs_in_process(monkeypatch):
    monkeypatch.setattr(sweeps, "have_dask", lambda: False)
    notes = []
    r = sweep("add.rn.f16", ci.add_f16_numpy, random=1000, workers=2, note=notes.append)
    assert r.ok and notes and "in this process" in notes[0]


class _Stop(Exception):
    pass


def test_sweep_resumes_from_checkpoint(tmp_path):
    ck = tmp_path / "ck"
    full = sweep("fma.rn.bf16", ci.fma_bf16_via_f32, random=90_000, chunk=10_000, workers=0)
    seen = []

    def dies_on_fourth(a, b, c):
        seen.append(a.size)
        if len(seen) == 4:
            raise _Stop
        return ci.fma_bf16_via_f32(a, b, c)

    with pytest.raises(sweeps.SweepError, match="failed on chunk 3") as info:
        sweep("fma.rn.bf16", dies_on_fourth, random=90_000, chunk=10_000, workers=0,
              checkpoint=ck)
    assert isinstance(info.value.__cause__, _Stop)
    logged = (ck / "done.jsonl").read_text().splitlines()
    assert len(logged) == 3
    with open(ck / "done.jsonl", "a") as f:        # a line torn by a kill while writing
        f.write('{"cid": 7, "n": 10')
    calls = []

    def counting(a, b, c):
        calls.append(a.size)
        return ci.fma_bf16_via_f32(a, b, c)

    plan = sweeps.make_plan("fma.rn.bf16", random=90_000, chunk=10_000)
    r = sweep("fma.rn.bf16", counting, random=90_000, chunk=10_000, workers=0, checkpoint=ck)
    assert len(calls) == plan.chunks - 3                       # finished chunks not redone
    assert r.to_json() == full.to_json()                       # nothing lost, nothing twice
    r2 = sweep("fma.rn.bf16", counting, random=90_000, chunk=10_000, workers=0, checkpoint=ck)
    assert len(calls) == plan.chunks - 3 and r2.to_json() == full.to_json()
    with pytest.raises(PtxfpError, match="another sweep"):
        sweep("fma.rn.bf16", counting, random=50_000, chunk=10_000, workers=0, checkpoint=ck)


def test_sweep_dask_survives_a_killed_worker(tmp_path):
    pytest.importorskip("distributed")
    from distributed import default_client
    kw = dict(random=240_000, chunk=20_000)
    want = sweep("fma.rn.bf16", ci.fma_bf16_via_f32, workers=0, **kw)
    killed = []

    def kill_one(res):
        if not killed:
            pids = default_client().run(os.getpid)
            killed.append(sorted(pids.values())[0])
            os.kill(killed[0], signal.SIGKILL)

    got = sweep("fma.rn.bf16", ci.slowed(ci.fma_bf16_via_f32, 0.3), workers=2,
                on_chunk=kill_one,
                checkpoint=tmp_path / "ck", **kw)
    assert killed and got.to_json() == want.to_json()
    logged = [line for line in (tmp_path / "ck" / "done.jsonl").read_text().splitlines()]
    assert len(logged) == sweeps.make_plan("fma.rn.bf16", **kw).chunks


def test_sweep_on_a_cluster_without_workers_stops_with_an_error(monkeypatch):
    """A scheduler that no worker joins (or whose workers are all gone) ends the sweep with
    a SweepError after WORKER_WAIT, not a wait for ever."""
    pytest.importorskip("distributed")
    import logging

    from distributed import LocalCluster
    monkeypatch.setattr(sweeps, "WORKER_WAIT", 1.0)
    monkeypatch.setattr(sweeps, "_POLL", 0.2)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster:
        t = time.monotonic()
        with pytest.raises(sweeps.SweepError, match=r"no Dask worker for 1 s; \d+ chunk"):
            sweep("add.rn.f16", lambda a, b: a, random=30_000, chunk=10_000,
                  scheduler=cluster.scheduler_address)
        assert time.monotonic() - t < 30


def test_report_merge_keeps_lowest_witnesses():
    a = Report("add.rn.f16", 10, 1, {"other": 1}, {"other": [(9, (1, 2), 3, 4)]})
    b = Report("add.rn.f16", 10, 6, {"other": 6},
               {"other": [(i, (1, 2), 3, 4) for i in range(10, 16)]})
    m = Report.from_json(b.to_json()).merge(a)
    assert m.total == 20 and m.counts == {"other": 7}
    assert [w[0] for w in m.witnesses["other"]] == [9, 10, 11, 12, 13]
    assert set(CLASSES) >= set(m.counts)


def test_sweep_on_a_scheduler_ships_a_script_by_value(tmp_path):
    """--scheduler ADDRESS with --impl path/to/file.py:func: the function is sent to the
    workers by value (its module is not importable there)."""
    pytest.importorskip("distributed")
    import logging

    from distributed import LocalCluster
    script = tmp_path / "my_sim.py"
    script.write_text(
        "import numpy as np\n"
        "def add(a, b):\n"
        "    x, y = a.view(np.float16), b.view(np.float16)\n"
        "    with np.errstate(all='ignore'):\n"
        "        s = x + y\n"
        "    return np.where(np.isnan(s), np.uint16(0x7E00), s.view(np.uint16))\n")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster:
        r = sweep("add.rn.f16", f"{script}:add", random=30_000, chunk=10_000,
                  scheduler=cluster.scheduler_address)
    want = sweep("add.rn.f16", f"{script}:add", random=30_000, chunk=10_000, workers=0)
    assert list(r.counts) == ["NaN not canonical"] and r.to_json() == want.to_json()
    assert r.mismatches > 1000


def test_example_sweep_double_rounding(monkeypatch, capsys):
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                        "sweep_double_rounding.py")
    spec = importlib.util.spec_from_file_location("sweep_double_rounding", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("WORKERS", "0")
    monkeypatch.setenv("N", "20000")
    assert mod.main() == 1
    out = capsys.readouterr().out
    assert "result double-rounded:" in out
    assert "ptxfp 0x3fa3, the simulator 0x3fa2" in out
