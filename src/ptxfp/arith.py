"""Exact arithmetic on decoded values.

Operands of every form are f16, bf16 or f32 numbers, which float64 holds exactly.  Products of
two f16 or bf16 numbers (at most 22 significant bits, exponents within 2**±300) are exact in
float64.  Sums are not always exact (a bf16 and an f32 can be 2**250 apart), so they are formed
as round-to-odd at float64: the round-to-nearest sum plus its exact error (Knuth's TwoSum), with
the last bit forced odd when the error is not zero.  That proxy rounds to any narrower format
exactly as the exact sum would (rounding.py).
"""

import numpy as np
from numba import njit

from ._bitcast import bits_from_f64, f64_from_bits

_EXP64 = 0x7FF0000000000000


@njit(inline="always", cache=True)
def decode(h, EBITS, MBITS, flush_subnormal):
    """Bits of a format with ``EBITS``/``MBITS`` to the exact float64 value (NaNs stay NaN).

    With ``flush_subnormal`` a subnormal input decodes as a zero of the same sign (.ftz).
    """
    h = np.int64(h)
    emask = (np.int64(1) << EBITS) - 1
    bias = (np.int64(1) << (EBITS - 1)) - 1
    s = (h >> (EBITS + MBITS)) & 1
    e = (h >> MBITS) & emask
    m = h & ((np.int64(1) << MBITS) - 1)
    if flush_subnormal:
        m = 0 if e == 0 else m
    sig = m | (np.int64(e != 0) << MBITS)
    # value = sig * 2**(max(e, 1) - bias - MBITS); the power of two is built from its bits.
    scale = f64_from_bits((max(e, np.int64(1)) - bias - MBITS + 1023) << 52)
    v = np.float64(sig) * scale
    special = f64_from_bits(np.int64(_EXP64) | (m << (52 - MBITS)))
    v = special if e == emask else v
    return -v if s == 1 else v


@njit(inline="always", cache=True)
def add_odd(x, y):
    """x + y rounded to odd at float64 (exact when the sum fits, sticky last bit otherwise)."""
    s = x + y
    bb = s - x
    err = (x - (s - bb)) + (y - bb)
    sb = bits_from_f64(s)
    # Only finite, inexact sums with an even last bit move: one step toward the exact value.
    fix = (err != 0.0) & ((sb & 1) == 0) & ((sb & _EXP64) != _EXP64)
    step = np.int64(1) if (err > 0.0) == (s > 0.0) else np.int64(-1)
    return f64_from_bits(sb + step) if fix else s


@njit(inline="always", cache=True)
def zero_sign_fix(r, x, y, round_down):
    """IEEE sign of an exact zero sum x + y: +0 unless both are -0, but -0 under .rm.

    Round-to-nearest float64 addition already gives the first; under .rm the sign is the OR of
    the operand signs.
    """
    if round_down and r == 0.0:
        neg = ((bits_from_f64(x) | bits_from_f64(y)) >> 63) & 1
        return -0.0 if neg == 1 else 0.0
    return r
