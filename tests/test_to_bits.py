"""ptxfp.to_bits at the edge: one rounding of the exact value, overflow to infinity, no NumPy
warnings.  Expected bits come from MPFR (gmpy2, through tests/oracle.py's contexts) and from
hand-worked values, never from ptxfp."""

import warnings
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import oracle
import ptxfp

LONG_IS_WIDE = np.finfo(np.longdouble).nmant > 52


def mpfr_bits(value, fmt: str) -> int:
    """The exact rational ``value`` rounded once to nearest-even into ``fmt`` by MPFR."""
    f = oracle.FORMATS[fmt]
    q = Fraction(value)
    if q == 0:
        return f.sign_bit if str(value).startswith("-") else 0
    r = oracle._ROUND_CTX[fmt, "rn"].div(gmpy2.mpz(q.numerator), gmpy2.mpz(q.denominator))
    if abs(r) > oracle._MAXF[fmt]:
        return (f.sign_bit if r < 0 else 0) | f.inf_bits
    return oracle.encode(r, f)


def no_warnings(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


@pytest.mark.parametrize("fmt, value, expect", [
    ("f16", 70000.0, 0x7C00), ("f16", -70000.0, 0xFC00),
    ("f16", 65519.99, 0x7BFF), ("f16", 65520.0, 0x7C00),     # the overflow threshold (a tie)
    ("bf16", 1e39, 0x7F80), ("bf16", -3.4e38, 0xFF80),
    ("f32", 1e39, 0x7F800000), ("f32", -1e300, 0xFF800000),
    ("f32", 1e-50, 0), ("f32", -1e-50, 0x80000000),          # below half the least subnormal
    ("f16", 10**400, 0x7C00), ("f32", -(10**400), 0xFF800000),  # Python ints beyond float64
])
def test_out_of_range_rounds_to_infinity_without_warnings(fmt, value, expect):
    assert no_warnings(lambda: ptxfp.to_bits(value, fmt)) == expect
    assert no_warnings(lambda: ptxfp.to_bits([value, 1.0], fmt)).tolist()[0] == expect


def test_arrays_with_overflow_give_no_warning():
    x = np.array([1.0, 1e39, -1e39, np.inf, np.nan])
    for fmt in ("f16", "bf16", "f32", "f16x2", "bf16x2"):
        vals = x[:4].reshape(2, 2) if fmt.endswith("x2") else x
        no_warnings(lambda: ptxfp.to_bits(vals, fmt))


@pytest.mark.skipif(not LONG_IS_WIDE, reason="np.longdouble is float64 on this platform")
def test_long_double_rounds_once():
    one = np.longdouble(1)
    # The witness: 1 + 2**-11 + 2**-60 lies just above the f16 tie 1 + 2**-11; through
    # float64 it becomes the tie itself and rounds to even (0x3c00).
    assert ptxfp.to_bits(one + np.longdouble(2) ** -11 + np.longdouble(2) ** -60, "f16") == 0x3C01
    assert ptxfp.to_bits(one + np.longdouble(2) ** -8 + np.longdouble(2) ** -62, "bf16") == 0x3F81
    assert ptxfp.to_bits(one + np.longdouble(2) ** -24 + np.longdouble(2) ** -63, "f32") \
        == 0x3F800001
    assert ptxfp.to_bits(-(one + np.longdouble(2) ** -11 + np.longdouble(2) ** -60), "f16") \
        == 0xBC01
    assert ptxfp.to_bits(np.longdouble("1e4000"), "f32") == 0x7F800000
    assert ptxfp.to_bits(-np.longdouble("1e-4000"), "f16") == 0x8000


@pytest.mark.skipif(not LONG_IS_WIDE, reason="np.longdouble is float64 on this platform")
@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
def test_long_double_against_mpfr(fmt, rng):
    f = oracle.FORMATS[fmt]
    # near ties, near subnormal and overflow boundaries, and plain random values
    bits = rng.integers(0, f.inf_bits, 3000)
    def value(b):                                        # the format's value, exactly
        v = oracle.decode(int(b), f)[2]
        return float(Fraction(*(int(t) for t in v.as_integer_ratio()))) if b else 0.0

    lo = np.array([value(b) for b in bits], dtype=np.longdouble)
    ulp = np.array([value(b + 1) for b in bits], dtype=np.longdouble) - lo
    half = lo + ulp / 2                                   # the tie between b and b + 1
    tiny = ulp * np.longdouble(2) ** -rng.integers(40, 64, bits.size)
    x = np.concatenate([half, half + tiny, half - tiny, lo + ulp * rng.random(bits.size)])
    x = np.concatenate([x, -x])
    got = no_warnings(lambda: ptxfp.to_bits(x, fmt))
    expect = [mpfr_bits(Fraction(*v.as_integer_ratio()), fmt) for v in x]
    bad = [(repr(v), hex(g), hex(e)) for v, g, e in zip(x, got.tolist(), expect) if g != e]
    assert not bad, bad[:5]


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
def test_wide_integers_round_once(fmt, rng):
    ints = [2**60 + 2**36 + 1, 2**60 + 2**36, -(2**62 + 2**39 + 3), 2**53 + 1, 2**63 - 1,
            *[int(v) for v in rng.integers(-2**63, 2**63 - 1, 200)]]
    expect = [mpfr_bits(v, fmt) for v in ints]
    assert ptxfp.to_bits(np.array(ints, dtype=np.int64), fmt).tolist() == expect
    assert [ptxfp.to_bits(v, fmt) for v in ints] == expect
    huge = [10**30 + 1, -(2**100 + 2**76 + 1)]          # an object array of Python ints
    assert ptxfp.to_bits(huge, fmt).tolist() == [mpfr_bits(v, fmt) for v in huge]
