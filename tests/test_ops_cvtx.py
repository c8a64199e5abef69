"""cvt with integers and .f64 (the 'cvtx' family) against the independent oracle
(tests/ops_oracle.py: Python integers and MPFR), every form, random and targeted vectors."""

from __future__ import annotations

import numpy as np
import pytest

import ptxfp
from ptxfp import isa
from ptxfp.dispatch import compute

import ops_oracle as oracle

INT_W = oracle.INT_W
FW = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _float_vectors(t: str, rng: np.random.Generator, n: int) -> list[int]:
    """Random bits plus the targeted values: zeros, subnormals, infinities, NaNs, ties at .5,
    the integer ranges' edges (2**7 .. 2**64 and their neighbours)."""
    w = FW[t]
    out = [int(x) for x in rng.integers(0, 1 << w, n, dtype=np.uint64)]
    vals = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999, 1.0, -1.0, 3.5, 1e-300,
            float("inf"), float("-inf")]
    for k in (7, 8, 15, 16, 24, 31, 32, 53, 63, 64):
        for base in (2.0 ** k, -(2.0 ** k)):
            vals += [base, base + 1, base - 1, base + 0.5, base - 0.5, base * 1.25]
    for v in vals:
        try:
            b = oracle.fencode(t, v)
        except (OverflowError, AssertionError):
            continue
        if oracle.fdecode(t, b) == v:
            out.append(b)
    mant = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}[t]
    sign = 1 << (w - 1)
    exp_all = ((1 << (w - 1 - mant)) - 1) << mant
    out += [1, sign | 1, (1 << mant) - 1, sign | ((1 << mant) - 1), exp_all | 1,
            exp_all | (1 << (mant - 1)), sign | exp_all | 3]
    # values just around the halves: x.5 +- one ulp for small x
    for x in (0.5, 1.5, 2.5, 127.5, 255.5, 32767.5):
        try:
            b = oracle.fencode(t, x)
        except (OverflowError, AssertionError):
            continue
        if oracle.fdecode(t, b) == x:
            out += [b - 1, b + 1, b | sign]
    return out


def _int_vectors(t: str, rng: np.random.Generator, n: int) -> list[int]:
    w = INT_W[t]
    m = (1 << w) - 1
    out = [int(x) for x in rng.integers(0, 1 << w, n, dtype=np.uint64)]
    for k in range(w):
        for d in (-1, 0, 1):
            out.append(((1 << k) + d) & m)
            out.append((-(1 << k) + d) & m)
    # ties and near-ties at the f16/bf16/f32/f64 precisions: p+1 significant bits
    for p in (8, 11, 24, 53):
        for top in range(p + 1, w + 1):
            base = (1 << (top - 1)) | (1 << (top - 1 - p))          # exactly half an ulp
            for d in (-1, 0, 1, (1 << (top - 1 - p)) * 2):
                out.append((base + d) & m)
                out.append((-(base + d)) & m)
    out += [m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 0, 65504, 65519, 65520, 65536]
    return [x & m for x in out]


def _forms():
    return isa.canonical_spellings("cvtx")


def test_row_count():
    forms = _forms()
    # float->int and int->float: 4 floats x 8 ints x 4 roundings x modifier sets; f <-> f
    assert len(forms) > 400
    assert "cvt.rni.s32.f32" in forms and "cvt.rn.f64.u64" in forms and "cvt.f64.f32" in forms


SOURCES = ["f16", "bf16", "f32", "f64", "u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]


@pytest.mark.parametrize("src", SOURCES)
def test_against_oracle(src):
    """Every rounding of every type pair without modifiers, and each modifier set in one
    rounding (the whole product: test_against_oracle_every_form, slow)."""
    _check(src, lambda ins: not ins.modifiers or ins.rounding in (None, "rn", "rzi"), 60)


@pytest.mark.slow
@pytest.mark.parametrize("src", SOURCES)
def test_against_oracle_every_form(src):
    _check(src, lambda ins: True, 400)


def _check(src, keep, n_random):
    rng = np.random.default_rng(25 + len(src) + FW.get(src, 0) + INT_W.get(src, 0))
    vec = (_float_vectors(src, rng, n_random) if src in FW else _int_vectors(src, rng, n_random))
    if src in INT_W and INT_W[src] == 64 and n_random < 100:
        vec = vec[::3]
    arr = np.array(vec, np.uint64).astype(f"uint{FW.get(src) or max(8, INT_W[src])}")
    forms = [f for f in _forms() if ptxfp.parse(f).atype == src and keep(ptxfp.parse(f))]
    assert forms
    checked = 0
    for f in forms:
        got = compute(f, arr)
        want = [oracle.cvt(f, int(x)) for x in vec]
        bad = [(hex(x), hex(int(g)), hex(e)) for x, g, e in zip(vec, got, want) if int(g) != e]
        assert not bad, (f, len(bad), bad[:5])
        checked += len(vec)
    assert checked >= 1000


def test_scalars_and_signed_ints():
    assert compute("cvt.rn.f32.s32", -5) == 0xC0A00000
    assert compute("cvt.rni.s32.f32", 0xC0200000) == 0xFFFFFFFE          # -2.5 -> -2
    assert compute("cvt.rzi.s32.f64", 0x7FF8000000000000) == 0x80000000  # NaN from .f64
    assert compute("cvt.rzi.s32.f32", 0x7FC00000) == 0                   # NaN from .f32
    assert compute("cvt.rzi.u64.f32", 0x7FC00000) == 1 << 63             # NaN into 64 bits
    x = np.array([-1, 2, -3], np.int32)
    assert list(compute("cvt.rn.f32.s32", x)) == [0xBF800000, 0x40000000, 0xC0400000]


def test_core_matches_compute():
    from ptxfp.dispatch import CORE
    ins = ptxfp.parse("cvt.rmi.s16.f64")
    a = np.array([0x4000000000000000, 0xC004000000000000, 0x7FF0000000000000], np.uint64)
    assert list(CORE["cvtx"](ins)([a], 3)) == [2, 0xFFFD, 0x7FFF]


def test_int64_to_f32_single_rounding():
    # 2**62 + 2**38 + 1: just above a tie at 24 bits; converting to f64 first (2**62 + 2**38,
    # a tie) then to f32 would round to even (down): the exact value rounds up
    v = (1 << 62) + (1 << 38) + 1
    assert compute("cvt.rn.f32.s64", v) == oracle.cvt("cvt.rn.f32.s64", v)
    assert compute("cvt.rn.f32.s64", v) == 0x5E800001
