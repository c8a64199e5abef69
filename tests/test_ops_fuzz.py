"""Fuzz ptxfp.compute's new doors (the ops families): random spellings of their rows, mutated
spellings and odd operands give a result or a PtxfpError, never another exception."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings, strategies as st

import ptxfp
from ptxfp import isa

SPELLINGS = [s for fam in ("cvtx", "compare", "fops", "f64", "int")
             for s in isa.canonical_spellings(fam)]
N = int(os.environ.get("PTXFP_FUZZ_EXAMPLES", "40"))

operand = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.booleans(),
    st.floats(allow_nan=True),
    st.lists(st.integers(0, (1 << 64) - 1), max_size=4).map(lambda v: np.array(v, np.uint64)),
    st.lists(st.integers(-(1 << 31), (1 << 31) - 1), max_size=4).map(
        lambda v: np.array(v, np.int32)),
    st.just(np.zeros((2, 3), np.uint16)),
    st.just("x"),
)


def _mutate(s: str, k: int, tok: str) -> str:
    parts = s.split(".")
    k %= len(parts) + 1
    return ".".join(parts[:k] + [tok] + parts[k:])


@settings(max_examples=N, deadline=2000)
@given(st.sampled_from(SPELLINGS), st.lists(operand, max_size=5), st.integers(0, 8),
       st.sampled_from(["", "sat", "ftz", "rn", "rni", "lo", "wide", "and", "s32", "f64", "x"]))
def test_compute_only_raises_ours(spelling, ops, k, tok):
    s = _mutate(spelling, k, tok) if tok else spelling
    try:
        ptxfp.compute(s, *ops)
    except ptxfp.PtxfpError:
        pass
