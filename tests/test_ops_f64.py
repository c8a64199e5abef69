""".f64 add/sub/mul/fma/mad in every rounding mode against MPFR (and NumPy float64 for .rn
add/sub/mul), random and targeted operands (ties, cancellation, subnormals, overflow)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxfp
from ptxfp import isa
from ptxfp.dispatch import compute

import ops_oracle as oracle

SPECIAL = [0, 1 << 63, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
           0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
           0x7FF8000000000001, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF0000000000001,
           0x3CA0000000000000, 0x3CA0000000000001, 0xBCA0000000000000, 0x4340000000000000,
           0x3FE0000000000000, 0x0000000000000003]


def _operands(rng, n, k):
    cols = []
    for j in range(k):
        r = rng.integers(0, 1 << 64, n, dtype=np.uint64)
        # exponents near each other (cancellation, ties) for a third of them
        e = rng.integers(0x3C0, 0x440, n, dtype=np.uint64) << np.uint64(52)
        near = (r & np.uint64(0x800FFFFFFFFFFFFF)) | e
        r = np.where(np.arange(n) % 3 == 0, near, r)
        sp = np.array([SPECIAL[(i * (j + 1) + j) % len(SPECIAL)] for i in range(len(SPECIAL) ** 2)],
                      np.uint64)
        if j == 1:
            sp = np.array([SPECIAL[i // len(SPECIAL)] for i in range(len(SPECIAL) ** 2)],
                          np.uint64)
        cols.append(np.concatenate([np.array([SPECIAL[i % len(SPECIAL)]
                                              for i in range(len(SPECIAL) ** 2)], np.uint64)
                                    if j == 0 else sp, r]))
    return cols


@pytest.mark.parametrize("form", [s for s in isa.canonical_spellings("f64")
                                  if s.split(".")[0] in ("add", "sub", "mul", "fma", "mad")])
def test_against_mpfr(form):
    ins = ptxfp.parse(form)
    k = len(ins.operand_names)
    rng = np.random.default_rng(len(form) * 7 + k)
    ops = _operands(rng, 600, k)
    got = compute(form, *ops)
    want = [oracle.f64(form, *(int(c[i]) for c in ops)) for i in range(len(ops[0]))]
    bad = [i for i in range(len(want)) if int(got[i]) != want[i]]
    assert not bad, (form, len(bad), [(hex(int(c[bad[0]])) for c in ops), hex(int(got[bad[0]])),
                                      hex(want[bad[0]])])


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_rn_against_numpy(op):
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 1 << 64, 20000, dtype=np.uint64) for _ in range(2))
    x, y = a.view(np.float64), b.view(np.float64)
    with np.errstate(all="ignore"):
        r = {"add": x + y, "sub": x - y, "mul": x * y}[op]
    want = np.where(np.isnan(r), np.uint64(ptxfp.POLICY.canonical_nan("f64")), r.view(np.uint64))
    assert np.array_equal(compute(f"{op}.f64", a, b), want)


def test_typed_float64():
    r = compute("fma.rn.f64", np.float64(2.0), np.float64(3.0), np.float64(1.0))
    assert r == 7.0 and isinstance(r, np.float64)
