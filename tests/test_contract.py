"""Contraction as ptxas does it (ptxfp.ptx.contract): the pairs found equal the pairs ptxas 13.5
fused in its machine code (tests/data/contraction/, recorded by tools/contraction_probe.py and
tools/contraction_check.py), and ``run`` computes a fused pair as one rounding of the exact
a*b+c (gmpy2 the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import gmpy2
import numpy as np
import pytest

import ptxfp
from ptxfp.policy import using
from ptxfp.ptx.contract import fusions, run_target
from ptxfp.ptx.interp import run_detailed
from ptxfp.ptx.reader import read

DATA = Path(__file__).parent / "data"
PROBE = json.loads((DATA / "contraction/ptxas_13.5.json").read_text())
MODULES = json.loads((DATA / "contraction/modules.json").read_text())

_RUNS = [r for r in PROBE["runs"] if r["opt"] == 3 and r["fmad"] and "error" not in r]


def _pairs(text: str, target: str) -> list[list[int]]:
    prog = read(text)
    out = []
    for f in prog.functions:
        if f.has_body:
            out += [[x.producer.line, x.consumer.line]
                    for x in fusions(f.body, labels=f.labels,
                                     target=run_target(None, target))]
    return sorted(out)


@pytest.mark.parametrize("r", _RUNS, ids=[f"{r['pattern']}@{r['target']}" for r in _RUNS])
def test_pattern_pairs_equal_ptxas(r):
    pat = PROBE["patterns"][r["pattern"]]
    text = pat["ptx"].replace(".target TARGET", f".target {r['target']}")
    first = pat["first"]
    mine = [[m - first, a - first] for m, a in _pairs(text, r["target"])]
    assert mine == sorted(map(list, r["fused"])), pat["body"]


def test_no_fusion_at_O0_or_without_fmad():
    """-O0 and --fmad=false fuse nothing: the policy 'as_written'."""
    other = [r for r in PROBE["runs"] if r["opt"] == 0 or not r["fmad"]]
    assert other and all(r["fused"] == [] for r in other)


@pytest.mark.parametrize("name", sorted(MODULES["modules"]))
def test_module_pairs_equal_ptxas(name):
    rec = MODULES["modules"][name]
    text = (DATA / "kernels" / name).read_text()
    assert _pairs(text, rec["target"]) == sorted(map(list, rec["fused"]))


_CTX = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True,
                     round=gmpy2.RoundToNearest)


def _f(b: int) -> gmpy2.mpfr:
    return gmpy2.mpfr(float(np.uint32(b).view(np.float32)), 24)


def _fma_bits(a: int, b: int, c: int) -> int:
    """binary32 fma.rn of the three (finite) values: one rounding of the exact a*b+c."""
    with gmpy2.context(precision=1200):
        exact = _f(a) * _f(b) + _f(c)            # exact at this precision
    with gmpy2.context(_CTX):
        r = +exact
    return int(np.float32(float(r)).view(np.uint32))


def _finite(rng, n):
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x &= np.uint32(0xBFFFFFFF)              # exponents below 128: no infinities or NaNs
    return x


def test_run_fuses_mul_add_as_one_rounding():
    rng = np.random.default_rng(1)
    n = 2000
    a, b = _finite(rng, n), _finite(rng, n)
    c = (a.view(np.float32) * b.view(np.float32)).view(np.uint32) ^ np.uint32(0x80000000)
    c = np.where(rng.integers(0, 2, n) == 1, c, _finite(rng, n)).astype(np.uint32)
    src = "mul.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f5;\nsub.f32 %f6, %f5, %f7;\n" \
          "mul.f32 %f7, %f1, %f1;"
    out = ptxfp.run(src.rsplit("\n", 1)[0], {"%f1": a, "%f2": b, "%f5": c, "%f7": a})
    want = [_fma_bits(int(x), int(y), int(z)) for x, y, z in zip(a, b, c)]
    assert [int(v) for v in out["%f4"]] == want
    assert not any(k.startswith("%__ct") for k in out)
    with using(contract="as_written"):
        plain = ptxfp.run(src.rsplit("\n", 1)[0], {"%f1": a, "%f2": b, "%f5": c, "%f7": a})
    rounded = (a.view(np.float32) * b.view(np.float32) + c.view(np.float32)).view(np.uint32)
    assert np.array_equal(plain["%f4"], rounded)
    assert not np.array_equal(plain["%f4"], out["%f4"])


def test_div_full_then_sub_fuses_the_final_multiply():
    """div.full's last FMUL (rcp(b) * a) fused with the sub: one rounding of c - rcp(b) * a,
    rcp(b) MUFU.RCP (rcp.approx.ftz.f32) for b in the normal range where nothing is scaled."""
    rng = np.random.default_rng(2)
    n = 500
    a = (rng.uniform(-4, 4, n).astype(np.float32)).view(np.uint32)
    b = (rng.uniform(0.5, 64, n).astype(np.float32)).view(np.uint32)
    c = (rng.uniform(-4, 4, n).astype(np.float32)).view(np.uint32)
    src = "div.full.f32 %f3, %f1, %f2;\nsub.f32 %f4, %f5, %f3;"
    r = run_detailed(src, {"%f1": a, "%f2": b, "%f5": c}, target="sm_90")
    rcp = np.asarray(ptxfp.compute("rcp.approx.ftz.f32", b, target="sm_90"), np.uint32)
    neg_rcp = rcp ^ np.uint32(0x80000000)
    want = [_fma_bits(int(x), int(y), int(z)) for x, y, z in zip(neg_rcp, a, c)]
    assert [int(v) for v in r.registers["%f4"]] == want
    assert any("line 2: ptxas fuses 'sub.f32'" in s for s in r.notes)
    assert "line 1: div.full.f32: rcp: measured on sm_75 (ptx-math); assumed on sm_90" in r.notes


def test_check_notes_each_fused_pair():
    rep = ptxfp.check("mul.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f5;\n"
                      "mul.rn.f32 %f6, %f1, %f2;\nadd.f32 %f7, %f6, %f5;",
                      target="sm_90", version="8.7")
    notes = [d for d in rep if d.rule == "contract"]
    assert [(d.line, d.severity) for d in notes] == [(2, "info")]
    with using(contract="as_written"):
        rep = ptxfp.check("mul.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f5;",
                          target="sm_90", version="8.7")
    assert not [d for d in rep if d.rule == "contract"]


def test_policy_refuses_unknown_value():
    with pytest.raises(ValueError, match="contract must be one of"):
        with using(contract="always"):
            pass
