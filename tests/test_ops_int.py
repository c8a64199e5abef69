"""The integer instructions against plain Python ints written from the manual's pseudocode
(tests/ops_oracle.py), every form, random and targeted operands (0, 1, -1, MIN, MAX, shift
amounts and bit fields at and past the width)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxfp
from ptxfp import isa
from ptxfp.dispatch import compute

import ops_oracle as oracle

W = oracle.INT_W


def _edge(w: int) -> list[int]:
    m = (1 << w) - 1
    return [0, 1, 2, 3, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1,
            0x80, 0xFF, 0x7F, 0x5A5A5A5A5A5A5A5A & m, 0xF0 & m]


def _column(t: str, name: str, rng, n: int, k: int) -> list[int]:
    w = W[t]
    e = _edge(w)
    if t == "u32" and name in ("b", "c", "e") and k:
        small = [0, 1, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 0x104, 0xFFFFFFFF]
        e = small
    base = [e[(i * (k + 1) + k * 3) % len(e)] for i in range(len(e) ** 2)]
    if k == 1:
        base = [e[i // len(e) % len(e)] for i in range(len(e) ** 2)]
    rnd = [int(x) for x in rng.integers(0, 1 << w, n, dtype=np.uint64)]
    if t == "u32" and name in ("b", "c", "e") and k:
        rnd = [x % 80 for x in rnd[: n // 2]] + rnd[n // 2:]
    return base + rnd


@pytest.mark.parametrize("form", isa.canonical_spellings("int"))
def test_against_python(form):
    ins = ptxfp.parse(form)
    rng = np.random.default_rng(sum(map(ord, form)))
    srcs = ins.row.operands[1:]
    cols = [_column(o.type, o.name, rng, 24, k) for k, o in enumerate(srcs)]
    m = min(map(len, cols))
    cols = [c[:m] for c in cols]
    arrs = [np.array(c, np.uint64).astype(f"uint{W[o.type]}") for c, o in zip(cols, srcs)]
    got = compute(form, *arrs)
    want = [oracle.integer(form, *(c[i] for c in cols)) for i in range(m)]
    bad = [i for i in range(m) if int(got[i]) != want[i]]
    assert not bad, (form, len(bad), [hex(c[bad[0]]) for c in cols], hex(int(got[bad[0]])),
                     hex(want[bad[0]]))


def test_examples():
    assert compute("mul.hi.u32", 0xFFFFFFFF, 0xFFFFFFFF) == 0xFFFFFFFE
    assert compute("mul.wide.s32", -2, 3) == 0xFFFFFFFFFFFFFFFA
    assert compute("div.u32", 5, 0) == 0xFFFFFFFF and compute("rem.u32", 5, 0) == 5
    assert compute("div.s32", -(1 << 31), -1) == 1 << 31
    assert compute("shr.s32", -8, 40) == 0xFFFFFFFF and compute("shl.b32", 1, 32) == 0
    assert compute("add.sat.s32", (1 << 31) - 1, 1) == (1 << 31) - 1
    assert compute("bfind.u32", 0) == 0xFFFFFFFF
