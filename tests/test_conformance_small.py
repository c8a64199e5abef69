"""gen / ver / sweep on the small-float and .rs cvt forms (conformance/small.py).

gen's expected bits are checked against tests/oracle_small.py (MPFR, written from the manual,
no ptxfp code).  ver is checked on implementations planted here without ptxfp (the oracle with
its sources swapped; the oracle fed f16-rounded sources) and must name their classes.
"""

from __future__ import annotations

import numpy as np
import pytest

import oracle_small
from ptxfp import policy
from ptxfp.conformance import CLASSES, forms, generate, source, sweep, verify
from ptxfp.conformance import sweeps, verify_file, write_file
from ptxfp.conformance import small

SMALL = [s for s in forms.all_spellings() if forms.form(s).small]


def _oracle(spelling, *ops):
    pol = policy.current()
    return np.array([oracle_small.convert(spelling, *map(int, row), policy=pol)
                     for row in zip(*ops)], np.int64)


def test_every_small_form_is_covered():
    from ptxfp.ops.smallfloat import handles
    from ptxfp.isa.spelling import parse
    from ptxfp import isa
    assert len(SMALL) == sum(bool(handles(parse(s))) for s in isa.all_spellings()) == 117


@pytest.mark.parametrize("spelling", SMALL)
def test_gen_small_agrees_with_oracle(spelling, monkeypatch):
    """A sample of every chunk of a level-1 file (grid, own cases, random) against MPFR."""
    rng = np.random.default_rng(sum(map(ord, spelling)))
    checked = 0
    for cols in generate(spelling, level=1, n=200, seed=5):
        n = cols[0].size
        if not n:
            continue
        pick = np.unique(np.concatenate([rng.choice(n, min(n, 20), replace=False),
                                         np.arange(min(n, 3))]))
        ops = [c[pick] for c in cols[:-1]]
        want = _oracle(spelling, *ops)
        got = cols[-1][pick].astype(np.int64)
        bad = np.nonzero(want != got)[0]
        assert not bad.size, f"{spelling}: {[tuple(int(o[i]) for o in ops) for i in bad[:3]]}"
        checked += pick.size
    assert checked >= 40


def test_gen_widths_and_grids(tmp_path):
    """Hex columns at each operand's width; widening grids hold every source word; the .rs
    grid holds rbits 0, all ones and the carry thresholds."""
    p = tmp_path / "v.txt"
    write_file("cvt.rs.satfinite.e2m1x4.f32", p, n=10)
    row = [ln.split() for ln in p.read_text().splitlines() if not ln.startswith("#")][0]
    assert [len(t) for t in row] == [8, 8, 8, 8, 8, 4]
    write_file("cvt.rn.f16x2.e2m1x2", p, n=0)
    rows = [ln.split() for ln in p.read_text().splitlines() if not ln.startswith("#")]
    assert sorted(int(r[0], 16) for r in rows) == list(range(256)) and len(rows[0][1]) == 8
    f = forms.form("cvt.rn.f16x2.e5m2x2")
    assert np.array_equal(np.sort(source.targeted(f)[0]), np.arange(1 << 16))
    rb = set(source.targeted(forms.form("cvt.rs.satfinite.e4m3x4.f32"))[-1].tolist())
    assert {0, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0x01010101, 0xFFFFFFFF} <= rb
    a = source.targeted(forms.form("cvt.rn.satfinite.e4m3x2.f32"))[0].view(np.float32)
    assert {0.0, 448.0, 464.0, 2.0 ** -10, 1.0625, 1.0} <= set(a.tolist())   # ties, max, over


def _ops(spelling, n=3000):
    return [np.concatenate(x) for x in zip(*[c[:-1] for c in generate(spelling, 1, n=n)])]


def test_ver_catches_lanes_swapped():
    s = "cvt.rn.satfinite.e5m2x2.f32"
    a, b = _ops(s, 500)
    got = _oracle(s, b, a)                  # the first source into the low byte
    r = verify(s, a, b, got=got.astype(np.uint16))
    assert r.mismatches > 100 and set(r.counts) == {"lanes swapped"}, r.counts


def test_ver_catches_double_rounding_via_f16():
    s = "cvt.rn.satfinite.e4m3x2.f32"
    a, b = _ops(s, 1000)
    with np.errstate(all="ignore"):
        h = [x.view(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
             for x in (a, b)]
    got = _oracle("cvt.rn.satfinite.e4m3x2.f16x2", (h[0] << 16) | h[1])
    r = verify(s, a, b, got=got.astype(np.uint16))
    assert r.mismatches > 20 and set(r.counts) == {"result double-rounded"}, r.counts


@pytest.mark.parametrize("spelling, ops, got, cls", [
    ("cvt.rn.satfinite.e4m3x2.f32", (0x7F800000, 0), 0x7F00, "NaN/inf where saturated"),
    ("cvt.rn.satfinite.e5m2x2.f32", (0x7F800000, 0), 0x7C00, "NaN/inf where saturated"),
    ("cvt.rn.satfinite.e4m3x2.f32", (0x7FC00000, 0), 0x7E00, "saturated where inf/NaN"),
    ("cvt.rn.f16x2.e5m2x2", (0x7C00,), 0x7BFF0000, "saturated where inf/NaN"),
    ("cvt.rn.relu.satfinite.e4m3x2.f32", (0x80000001, 0), 0x8000, "-0 where +0"),
    ("cvt.rn.satfinite.e2m1x2.f32", (0x3F400000, 0), 0x10, "off by one ulp"),   # 0.75 -> 1.0
    ("cvt.rn.satfinite.e4m3x2.f32", (0x3F800000, 0), 0x4000, "other"),   # 2.0 for 1.0
    ("cvt.rs.satfinite.e4m3x4.f32", (0x3F800000, 0x3F800000, 0x3F800000, 0x7FC00000, 0),
     0x383838FF, "NaN not canonical"),
    ("cvt.rz.ue8m0x2.f32", (0x3F800000, 0x40000000), 0x807F, "lanes swapped"),
])
def test_small_classes(spelling, ops, got, cls):
    f = forms.form(spelling)
    arrs = [np.array([x], dtype=forms.dtype(w)) for x, w in zip(ops, f.operand_widths)]
    r = verify(spelling, *arrs, got=np.array([got], forms.dtype(f.result_width)))
    assert cls in CLASSES and r.counts == {cls: 1}, r.format()


def test_ver_file_round_trip(tmp_path):
    s = "cvt.rs.relu.satfinite.e3m2x4.f32"
    p = tmp_path / "rs.txt"
    n = write_file(s, p, n=100)
    assert verify_file(s, p).ok and verify_file(s, p).total == n
    lines = p.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if not ln.startswith("#"))
    t = lines[i].split()
    t[-1] = f"{int(t[-1], 16) ^ 0x3F:08X}"
    lines[i] = " ".join(t)
    p.write_text("\n".join(lines) + "\n")
    r = verify_file(s, p)
    assert r.mismatches == 1 and "#" not in r.format(what="line").split("line")[0]


def test_sweep_widening_exhaustive_against_ptxfp():
    for s, size in (("cvt.rn.relu.f16x2.e4m3x2", 1 << 16), ("cvt.rn.f16x2.e2m1x2", 256),
                    ("cvt.rn.bf16x2.ue8m0x2", 1 << 16)):
        f = forms.form(s)
        r = sweep(s, lambda *ops, f=f: f.model(*ops), exhaustive=True, workers=0)
        assert r.ok and r.total == size, r.format()


def test_sweep_plans():
    f = forms.form("cvt.rn.satfinite.e2m3x2.f32")
    plan = sweeps.make_plan(f.spelling, exhaustive=True)
    assert plan.size == 1 << 32
    (a, b), start = sweeps.chunk_operands(f, plan, 100)
    assert start == 100 * plan.chunk and int(a[0]) == start and int(b[0]) == ~start & 0xFFFFFFFF
    with pytest.raises(sweeps.SweepError, match="--random"):
        sweeps.make_plan("cvt.rs.satfinite.e4m3x4.f32", exhaustive=True)
    s = "cvt.rs.satfinite.bf16x2.f32"
    f = forms.form(s)
    r = sweep(s, lambda *ops: f.model(*ops), random=2000, workers=0)
    assert r.ok and r.total > 2000
    assert small.exhaustive_size(forms.form("cvt.rz.ue8m0x2.bf16x2")) == 1 << 32
