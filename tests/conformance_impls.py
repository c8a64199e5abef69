"""Implementations under test for tests/test_conformance.py, written the way others write them
(no ptxfp inside): bf16 fma computed in binary32 and rounded again, a bf16 fma whose NaNs keep
an input's payload, and an add.rn.f16 through NumPy float16 (correct for .rn)."""

import numpy as np


def _bf16_to_f32(x):
    return (np.asarray(x).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _f32_to_bf16_rne(y):
    """binary32 to bf16, round to nearest even; NaN to 0x7FFF."""
    b = np.asarray(y, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(y), np.uint16(0x7FFF), r).astype(np.uint16)


def fma_bf16_via_f32(a, b, c):
    """fma.rn.bf16 as simulators write it: float(a) * float(b) + float(c) in binary32, then
    rounded to bf16: two roundings."""
    with np.errstate(all="ignore"):
        y = _bf16_to_f32(a) * _bf16_to_f32(b) + _bf16_to_f32(c)
    return _f32_to_bf16_rne(y)


def _round_bf16_rne(x):
    """float64 to bf16 bits, round to nearest even, once (subnormals, overflow to inf); a NaN
    becomes 0x7FFF."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    live = np.isfinite(x) & (ax > 0)
    _, e = np.frexp(np.where(live, ax, 1.0))
    q = np.maximum(e - 8, -133)
    v = np.where(live, np.ldexp(np.rint(np.ldexp(np.where(live, ax, 0.0), -q)), q), ax)
    v = np.where(v > (2 - 2.0 ** -7) * 2.0 ** 127, np.inf, v)
    with np.errstate(all="ignore"):
        bits = (np.copysign(v, x).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits).astype(np.uint16)


def fma_bf16_correct(a, b, c):
    """fma.rn.bf16 rounded once: a*b is exact in binary64; the sum a*b + c is made
    round-to-odd with TwoSum (sticky bit in the last place), then rounded once to bf16
    (53 >= 2*8 + 2 bits, so rounding to odd first is harmless)."""
    with np.errstate(all="ignore"):
        x, y, z = (_bf16_to_f32(v).astype(np.float64) for v in (a, b, c))
        p = x * y
        s = p + z
        bp = s - z
        err = (p - bp) + (z - (s - bp))
        inexact = np.isfinite(s) & (err != 0) & np.isfinite(err)
        # round to odd = truncate toward zero, then set the last bit when inexact; s was
        # rounded to nearest, so where it overshot (err of the other sign) step back one ulp
        over = inexact & (np.signbit(err) != np.signbit(s))
        bits = s.view(np.uint64) - over.astype(np.uint64)
        s = np.where(inexact, (bits | np.uint64(1)).view(np.float64), s)
    return _round_bf16_rne(s)


def fma_bf16_nan_quiet(correct):
    """Wrap a correct implementation: every NaN result becomes 0x7FC0 (the quiet NaN most
    software produces) instead of the canonical 0x7FFF."""
    def impl(a, b, c):
        d = np.asarray(correct(a, b, c)).astype(np.uint16)
        nan = (d & 0x7FFF) > 0x7F80
        return np.where(nan, np.uint16(0x7FC0), d).astype(np.uint16)
    return impl


def add_f16_numpy(a, b):
    """add.rn.f16 through NumPy's float16 (IEEE binary16, round to nearest even); NaN results
    made canonical (0x7FFF)."""
    x = np.asarray(a).astype(np.uint16).view(np.float16)
    y = np.asarray(b).astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        s = x + y
    return np.where(np.isnan(s), np.uint16(0x7FFF), s.view(np.uint16)).astype(np.uint16)


def add_f16_numpy_nan_quiet(a, b):
    """The same with NumPy's own NaN bits kept (0x7E00 and payloads): 'NaN not canonical'."""
    x = np.asarray(a).astype(np.uint16).view(np.float16)
    y = np.asarray(b).astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        return (x + y).view(np.uint16)


def slowed(fn, seconds):
    """fn, taking at least ``seconds`` per call (so that a worker is busy when it is killed)."""
    import time

    def impl(*ops):
        time.sleep(seconds)
        return fn(*ops)
    return impl
