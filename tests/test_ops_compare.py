"""setp/set/selp and f32/f64 min/max/abs/neg/copysign/testp against the independent oracle
(tests/ops_oracle.py), every form, random and targeted operands."""

from __future__ import annotations

import numpy as np
import pytest

import ptxfp
from ptxfp import isa
from ptxfp.dispatch import CORE2, compute

import ops_oracle as oracle

W = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f16x2": 32, "bf16x2": 32}
W.update(oracle.INT_W)


def _specials(t: str) -> list[int]:
    w = W[t]
    if t in ("f16x2", "bf16x2"):
        lane = _specials(t[:-2])
        return [x | (y << 16) for x in lane[::3] for y in lane[1::4]]
    if t in oracle.FTYPES:
        mant = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}[t]
        S = 1 << (w - 1)
        E = ((1 << (w - 1 - mant)) - 1) << mant
        one = oracle.fencode(t, 1.0)
        v = [0, S, 1, S | 1, E, S | E, E | 1, E | (1 << (mant - 1)), S | E | 5, one, one + 1,
             S | one, (1 << mant) - 1, 1 << mant, E - 1, S | (E - 1)]
        return v
    m = (1 << w) - 1
    return [0, 1, 2, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1]


def _pairs(t: str, rng: np.random.Generator, n: int) -> tuple[list[int], list[int]]:
    sp = _specials(t)
    a = [x for x in sp for _ in sp]
    b = [y for _ in sp for y in sp]
    w = W[t]
    ra = [int(x) for x in rng.integers(0, 1 << w, n, dtype=np.uint64)]
    rb = [int(x) for x in rng.integers(0, 1 << w, n, dtype=np.uint64)]
    # equal values and near neighbours
    rb[: n // 4] = ra[: n // 4]
    rb[n // 4: n // 2] = [(x + 1) & ((1 << w) - 1) for x in ra[n // 4: n // 2]]
    return a + ra, b + rb


def _arr(v, t):
    return np.array(v, np.uint64).astype(f"uint{max(8, W[t])}")


TYPES = ["f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "b16", "u16", "s16", "b32", "u32",
         "s32", "b64", "u64", "s64"]


@pytest.mark.parametrize("t", TYPES)
def test_setp_set_against_oracle(t):
    """Every comparison alone, and each Boolean operator with .lt/.equ (the whole product:
    test_setp_set_every_form, slow)."""
    _check(t, lambda ins: (not (ins.modifiers & {"and", "or", "xor"})
                           or ins.modifiers & {"lt", "equ"})
           and (ins.opcode == "setp" or not ins.modifiers & {"and", "or", "xor"}), 8, 3)


@pytest.mark.slow
@pytest.mark.parametrize("t", TYPES)
def test_setp_set_every_form(t):
    _check(t, lambda ins: True, 200, 1)


def _check(t, keep, n_random, stride):
    rng = np.random.default_rng(W[t] + len(t))
    a, b = _pairs(t, rng, n_random)
    a, b = a[::stride], b[::stride]
    c = [int(x) for x in rng.integers(0, 2, len(a))]
    A, B, C = _arr(a, t), _arr(b, t), np.array(c, bool)
    forms = [f for f in isa.canonical_spellings("compare")
             if (i := ptxfp.parse(f)).atype == t and i.opcode != "selp" and keep(i)
             and (i.opcode == "setp" or i.dtype in ("u32", "f16", "f16x2", "bf16x2", "u16")
                  or t == "f32")]
    assert forms
    n = 0
    for f in forms:
        ins = ptxfp.parse(f)
        ops = (A, B, C) if len(ins.operand_names) == 3 else (A, B)
        got = compute(f, *ops)
        want = [oracle.compare(f, x, y, z)[0] for x, y, z in zip(a, b, c)]
        bad = [(hex(x), hex(y), z, int(g), e) for x, y, z, g, e in zip(a, b, c, got, want)
               if int(g) != e]
        assert not bad, (f, len(bad), bad[:4])
        if ins.opcode == "setp":
            p, q = CORE2["setp"](ins)([A, B, C][:len(ops)], len(a))
            wq = [oracle.compare(f, x, y, z)[1] for x, y, z in zip(a, b, c)]
            assert [int(x) for x in p] == want and [int(x) for x in q] == wq, f
        n += len(a)
    assert n > 90


def test_selp_every_type():
    rng = np.random.default_rng(3)
    for f in (s for s in isa.canonical_spellings("compare") if s.startswith("selp")):
        t = ptxfp.parse(f).atype
        a, b = _pairs(t, rng, 16)
        c = [int(x) for x in rng.integers(0, 2, len(a))]
        got = compute(f, _arr(a, t), _arr(b, t), np.array(c, bool))
        assert [int(g) for g in got] == [oracle.compare(f, x, y, z)[0]
                                         for x, y, z in zip(a, b, c)], f


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_fops_against_oracle(t):
    rng = np.random.default_rng(W[t])
    a, b = _pairs(t, rng, 200)
    A, B = _arr(a, t), _arr(b, t)
    forms = [f for f in isa.canonical_spellings("fops") if ptxfp.parse(f).atype == t]
    assert len(forms) >= 10
    for f in forms:
        ins = ptxfp.parse(f)
        two = len(ins.operand_names) == 2
        got = compute(f, A, B) if two else compute(f, A)
        want = [oracle.fops(f, x, y) if two else oracle.fops(f, x) for x, y in zip(a, b)]
        bad = [(hex(x), hex(y), hex(int(g)), hex(e)) for x, y, g, e in zip(a, b, got, want)
               if int(g) != e]
        assert not bad, (f, len(bad), bad[:4])


def test_examples():
    assert compute("setp.lt.f32", 0x3F800000, 0x7FC00000) == 0
    assert compute("setp.ltu.f32", 0x3F800000, 0x7FC00000) == 1
    assert compute("setp.lt.s32", -1, 0) == 1 and compute("setp.lo.u32", 0xFFFFFFFF, 0) == 0
    assert compute("set.eq.f32.f64", 0x8000000000000000, 0) == 0x3F800000   # -0 == +0
    assert compute("min.NaN.f32", 0x7FC00001, 0) == ptxfp.POLICY.canonical_nan("f32")
    assert compute("max.f64", 0x7FF8000000000000, 0x4000000000000000) == 0x4000000000000000
