"""The element-wise typed view of the small formats (issue #26 item 3): pairs in natural order
through ``convert``, and ``to_bits``/``from_bits`` for e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0.
The oracle is ml_dtypes' own conversion (``astype``) and reading (``view``) of each type."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptxfp
from ptxfp.errors import FormatError, OperandError

ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
      "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
      "e2m1": ml_dtypes.float4_e2m1fn, "ue8m0": ml_dtypes.float8_e8m0fnu}
WIDTH = {"e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4, "ue8m0": 8}
NO_NAN = ("e2m3", "e3m2", "e2m1")


def _codes(fmt):
    return np.arange(1 << WIDTH[fmt], dtype=np.uint8)


def _values(fmt):
    """The finite values of the format, ascending, with the code of each."""
    c = _codes(fmt)
    v = c.view(ML[fmt]).astype(np.float64)
    keep = np.isfinite(v) & ~((v == 0) & np.signbit(v))
    order = np.argsort(v[keep], kind="stable")
    return v[keep][order], c[keep][order]


def _probe_values(fmt):
    """float32 values (ml_dtypes converts float32 with one rounding, float64 through float32):
    every code's value, the midpoints between neighbours and one float32 step either side of
    each (the ties and the edges of every rounding interval), the range's ends, every f16 value
    and random values over float32's exponent range."""
    vals = _values(fmt)[0]
    mids = (vals[1:] + vals[:-1]) / 2
    f = np.float32
    m32 = mids.astype(f)
    edges = np.concatenate([vals.astype(f), m32, np.nextafter(m32, f(np.inf)),
                            np.nextafter(m32, f(-np.inf))])
    top = vals.max()
    tiny = vals[vals > 0].min()
    with np.errstate(over="ignore"):                    # ue8m0's top * 4 is past float32
        extra = np.array([top * 1.0625, top * 1.125, top * 1.5, top * 4, 3e38, np.inf, -np.inf,
                          0.0, -0.0, tiny / 2, tiny / 4, 1e-40], f)
    f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(f)
    rng = np.random.default_rng(26)
    rnd = (rng.standard_normal(20000) * np.exp2(rng.integers(-126, 126, 20000))).astype(f)
    x = np.concatenate([edges, -edges, extra, f16, rnd])
    return x[~np.isnan(x)]


@pytest.mark.parametrize("fmt", list(ML))
def test_to_bits_matches_ml_dtypes(fmt):
    x = _probe_values(fmt)
    got = ptxfp.to_bits(x, fmt)
    assert got.dtype == np.uint8 and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = x.astype(ML[fmt])
    wnan = np.isnan(want.astype(np.float64))
    nan = ptxfp.POLICY.canonical_nan(fmt)
    assert (got[wnan] == nan).all()
    # ml_dtypes 0.6 rounds float32 subnormals into float8_e8m0fnu to the wrong neighbour
    # (just below 1.5 * 2**-127 -> 2**-126); that region is test_to_bits_rounds_float64_once's
    judged = ~wnan & ((np.abs(x) >= np.float32(2.0**-126)) if fmt == "ue8m0" else True)
    bad = np.nonzero((got != want.view(np.uint8)) & judged)[0]
    assert bad.size == 0, [(x[i], int(got[i]), int(want.view(np.uint8)[i])) for i in bad[:5]]


@pytest.mark.parametrize("fmt", list(ML))
def test_to_bits_rounds_float64_once(fmt):
    """float64 values one step off each midpoint (where a float32 stop on the way would make a
    tie of them): the nearest value, found plainly with exact fractions."""
    from fractions import Fraction
    vals, codes = _values(fmt)
    mids = (vals[1:] + vals[:-1]) / 2
    x = np.concatenate([np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    x = x[(x > vals[0]) & (x < vals[-1])]
    got = ptxfp.to_bits(x, fmt)
    for xi, g in zip(x, got):
        q = Fraction(float(xi))
        d = [abs(Fraction(float(v)) - q) for v in vals]
        k = int(np.argmin(d))
        assert sorted(d)[0] < sorted(d)[1], xi             # off the midpoint: no tie
        want = int(codes[k]) | (ptxfp.to_bits(-0.0, fmt) if vals[k] == 0 and xi < 0 else 0)
        assert int(g) == want, (fmt, xi, int(g), want)


@pytest.mark.parametrize("fmt", list(ML))
def test_from_bits_matches_ml_dtypes(fmt):
    c = _codes(fmt)
    got = ptxfp.from_bits(c, fmt)
    want = c.view(ML[fmt]).astype(np.float64)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))
    assert isinstance(ptxfp.from_bits(int(c[1]), fmt), float)
    with pytest.raises(OperandError):
        ptxfp.from_bits(1 << WIDTH[fmt], fmt)


@pytest.mark.parametrize("fmt", NO_NAN)
def test_nan_into_a_format_without_one_is_refused(fmt):
    with pytest.raises(FormatError, match="no NaN"):
        ptxfp.to_bits([1.0, float("nan")], fmt)


def test_to_bits_rules_stated_in_the_docstring():
    assert ptxfp.to_bits(464.0, "e4m3") == 0x7E and ptxfp.to_bits(465.0, "e4m3") == 0x7F
    assert ptxfp.to_bits(-np.inf, "e4m3") == 0x7F
    assert ptxfp.to_bits(1e6, "e5m2") == 0x7C
    assert ptxfp.to_bits(-1e6, "e2m1") == 0xF and ptxfp.to_bits(np.inf, "e3m2") == 0x1F
    assert ptxfp.to_bits(1.5, "ue8m0") == 0x80 and ptxfp.to_bits(1.4, "ue8m0") == 0x7F
    for bad in (0.0, -0.0, -1.0, 2.0**128, 1.5 * 2.0**127, np.inf, np.nan):
        assert ptxfp.to_bits(bad, "ue8m0") == 0xFF
    for least in (2.0**-129, 2.0**-127, 1e-300):
        assert ptxfp.to_bits(least, "ue8m0") == 0x00
    assert isinstance(ptxfp.to_bits(1.0, "e2m1"), int)


# --- convert: typed pairs in natural order ---------------------------------------------------

@pytest.mark.parametrize("dst", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
def test_pairs_from_f32_in_natural_order(dst):
    rng = np.random.default_rng(3)
    top = min(float(_values(dst)[0].max()), 1e4)
    x = (rng.uniform(-top, top, (50, 2))).astype(np.float32)
    spelling = f"cvt.rn.satfinite.{dst}x2.f32"
    got = ptxfp.convert(spelling, x)
    assert got.dtype == ML[dst] and got.shape == x.shape
    assert np.array_equal(got.view(np.uint8), x.astype(ML[dst]).view(np.uint8))
    # the manual's operand order, a in the upper lane: the same pairs from (x1, x0)
    again = ptxfp.convert(spelling, x[:, 1], x[:, 0])
    assert np.array_equal(again.view(np.uint8), got.view(np.uint8))
    # and the bit-pattern API is unchanged: a in bits [15:8] of the result
    bits = ptxfp.convert(spelling, x[:, 1].view(np.uint32), x[:, 0].view(np.uint32))
    c = 8 if dst[1:] in ("4m3", "5m2") else (6 if dst in ("e2m3", "e3m2") else 4)
    lo = bits & ((1 << c) - 1)
    assert np.array_equal(lo.astype(np.uint8), got.view(np.uint8)[:, 0] & ((1 << c) - 1))


def test_pairs_into_f16x2_and_bf16x2_in_natural_order():
    x = np.array([[1.0, 2.0], [3.0, -0.5], [65504.0, 1e-8]], np.float32)
    h = ptxfp.convert("cvt.rn.f16x2.f32", x)
    assert h.dtype == np.float16 and np.array_equal(h, x.astype(np.float16))
    b = ptxfp.convert("cvt.rn.bf16x2.f32", x)
    assert b.dtype == ml_dtypes.bfloat16 and np.array_equal(b.view(np.uint16),
                                                             x.astype(ml_dtypes.bfloat16)
                                                             .view(np.uint16))


@pytest.mark.parametrize("src", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
def test_widening_pairs_keep_their_order(src):
    c = _codes(src)
    pairs = np.stack([c, c[::-1]], axis=-1).view(ML[src])
    got = ptxfp.convert(f"cvt.rn.f16x2.{src}x2", pairs)
    assert got.shape == pairs.shape and got.dtype == np.float16
    assert np.array_equal(got, pairs.astype(np.float16), equal_nan=True)


def test_one_operand_of_the_wrong_shape_says_so():
    with pytest.raises(OperandError, match=r"shape \(\.\.\., 2\)"):
        ptxfp.convert("cvt.rn.satfinite.e4m3x2.f32", np.zeros(3, np.float32))
