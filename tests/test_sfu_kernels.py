"""The fused SFU kernels (one vectorized loop per sequence, primitives inlined, large arrays split
over threads) against ptx-math's recorded answers (tests/data/sfu_ptxm_sm75.npz, from ptx-math's C
model, validated on sm_5x-sm_75 GPUs), on every path a kernel fault would show on: the vector
body and the scalar remainder (odd lengths and offsets), the split over threads, the .ftz forms
(where input and result are normal they equal the non-ftz answer) and div (a times ptx-math's
reciprocal, rounded once by NumPy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.core import _jit

DATA = Path(__file__).parent / "data" / "sfu_ptxm_sm75.npz"
FORMS = {"ex2": "ex2.approx", "rcp": "rcp.approx", "rsqrt": "rsqrt.approx", "sqrt": "sqrt.approx",
         "lg2": "lg2.approx"}


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


def _normal(b: np.ndarray) -> np.ndarray:
    """Bits that are neither subnormal nor zero (inf/NaN included)."""
    return (b & 0x7F800000) != 0


@pytest.mark.parametrize("func", sorted(FORMS))
def test_lengths_offsets_and_threads(ref, func, monkeypatch):
    x, want = ref[func + "_x"], ref[func + "_y"]
    form = FORMS[func] + ".f32"
    for lo, hi in ((0, 1), (3, 4), (1, 8), (5, 38), (7, x.size - 3), (0, x.size)):
        got = ptxfp.compute(form, x[lo:hi], target="sm_75")
        assert np.array_equal(got, want[lo:hi]), (form, lo, hi)
    # an array split over the pool (PARALLEL_MIN and more lanes, two threads)
    monkeypatch.setenv("PTXFP_NUM_THREADS", "2")
    reps = _jit.PARALLEL_MIN // x.size + 2
    xs, ws = np.tile(x, reps)[1:], np.tile(want, reps)[1:]
    got = ptxfp.compute(form, xs, target="sm_90")
    bad = np.nonzero(got != ws)[0]
    assert bad.size == 0, [(hex(xs[i]), hex(got[i]), hex(ws[i])) for i in bad[:5]]


@pytest.mark.parametrize("func", sorted(FORMS))
@pytest.mark.parametrize("target", ["sm_75", "sm_90"])
def test_ftz_forms_where_normal(ref, func, target):
    """.ftz differs from the non-ftz form only on subnormal inputs and results: elsewhere it is
    ptx-math's answer; a subnormal input is a zero of its sign."""
    x, want = ref[func + "_x"], ref[func + "_y"]
    got = ptxfp.compute(FORMS[func] + ".ftz.f32", x, target=target)
    keep = _normal(x) & (_normal(want) | (want & 0x7FFFFFFF == 0))
    assert keep.sum() > 40000
    assert np.array_equal(got[keep], want[keep])
    # the PTX manual's values at +-0 (9.7.3.x: rcp, sqrt, rsqrt, lg2, ex2)
    sub = ~_normal(x)
    neg = (x[sub] & 0x80000000) != 0
    at_zero = {"ex2": (0x3F800000, 0x3F800000), "rcp": (0x7F800000, 0xFF800000),
               "rsqrt": (0x7F800000, 0xFF800000), "sqrt": (0, 0x80000000),
               "lg2": (0xFF800000, 0xFF800000)}[func]
    assert sub.sum() > 100
    assert np.array_equal(got[sub], np.where(neg, at_zero[1], at_zero[0]).astype(np.uint32))


@pytest.mark.parametrize("form", ["div.approx.f32", "div.approx.ftz.f32", "div.full.f32",
                                  "div.full.ftz.f32"])
@pytest.mark.parametrize("target", ["sm_75", "sm_90"])
def test_div_is_a_times_reciprocal(ref, form, target):
    """For 2^-126 <= |b| <= 2^126 every div form is a * MUFU.RCP(b) rounded once (to nearest;
    .ftz flushes a subnormal quotient): ptx-math's reciprocal times a, rounded by NumPy."""
    b, r = ref["rcp_x"], ref["rcp_y"]
    mag = b & 0x7FFFFFFF
    keep = (mag >= 0x00800000) & (mag <= 0x7E800000)
    b, r = b[keep], r[keep]
    rng = np.random.default_rng(31)
    # numerators of every exponent: quotients from overflow to subnormal and zero
    a = (rng.integers(0, 1 << 32, b.size, dtype=np.uint64).astype(np.uint32) & 0x807FFFFF) | \
        (rng.integers(1, 255, b.size, dtype=np.uint32) << 23)
    with np.errstate(over="ignore"):
        want = (np.float64(a.view(np.float32)) * np.float64(r.view(np.float32))
                ).astype(np.float32).view(np.uint32)
    if ".ftz" in form:
        want = np.where(_normal(want), want, want & 0x80000000)
    got = ptxfp.compute(form, a, b, target=target)
    bad = np.nonzero(got != want)[0]
    assert ((want & 0x7F800000) == 0).sum() > 100        # subnormal and zero quotients occur
    assert bad.size == 0, [(hex(a[i]), hex(b[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]
