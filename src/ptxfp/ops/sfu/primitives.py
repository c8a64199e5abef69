"""The SFU primitives: what one ``MUFU`` instruction computes, per architecture, one model each.

Method and tables from ptx-math (Benjamin Carleton, MIT licence,
https://github.com/bcarlet/ptx-math; the numbers in ``tables.py``): the significand's leading M
fraction bits pick a segment, the remaining bits ``xl`` enter a quadratic
``c0 -/+ c1*xl -/+ c2*sq(xl)`` summed in fixed point with each term shifted by its published
alignment, plus a bias; ``sq`` is the hardware's truncated squarer (exact square minus the
partial-product bits it drops: the low 19 columns of the antidiagonal and of its first 9 rows).
The code is ptxfp's own (Numba, one element at a time, integers only).  MUFU.SIN/COS take an
angle in turns (ptxas multiplies by 1/(2 pi) first) and interpolate sin over a quarter turn
from the quadrant and 23-bit fraction of 4|x| (see ``mufu_sin``).

Every primitive takes and gives binary32 bits (int64 holding 32) and is ``.ftz`` on both sides,
as the MUFU unit is: a subnormal input is a zero of its sign, a result below the normal range is
a zero of its sign (the sequences ptxas wraps around MUFU scale such inputs and results into
range for the non-``.ftz`` forms; ptx-math's non-ftz model computes the same through its own
scaling, and ``tools/ptxm_compare.py`` holds the composition to it).  A NaN result is the
canonical NaN ``0x7fffffff``.

Which GPU measured which primitive: ``measured.PRIMITIVES`` (ptx-math's validation table: sm_5x,
sm_6x, sm_70, sm_75 on all 2^32 inputs; sin/cos: its sm_70 model, sm_70 and sm_75); every later
target is assumed to equal sm_75 (``measured.provenance``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .measured import PRIMITIVES as _PROVENANCE
from .tables import (EX2_BIAS, EX2_C0_TERM_ALIGNMENT, EX2_C1_TERM_ALIGNMENT, EX2_C2_TERM_ALIGNMENT,
                     EX2_M, EX2_SUM_WEIGHT, EX2_TABLE, LG2_BIAS, LG2_C0_TERM_ALIGNMENT,
                     LG2_C1_TERM_ALIGNMENT, LG2_C2_TERM_ALIGNMENT, LG2_M, LG2_SUM_WEIGHT,
                     LG2_TABLE, RCP_BIAS, RCP_C0_TERM_ALIGNMENT, RCP_C1_TERM_ALIGNMENT,
                     RCP_C2_TERM_ALIGNMENT, RCP_M, RCP_SUM_WEIGHT, RCP_TABLE, RSQRT_BIAS,
                     RSQRT_C0_TERM_ALIGNMENT, RSQRT_C1_TERM_ALIGNMENT, RSQRT_C2_TERM_ALIGNMENT,
                     RSQRT_M, RSQRT_SUM_WEIGHT, RSQRT_TABLE, SIN_BIAS, SIN_C0_TERM_ALIGNMENT,
                     SIN_C1_TERM_ALIGNMENT, SIN_C2_TERM_ALIGNMENT, SIN_M, SIN_SUM_WEIGHT,
                     SIN_TABLE, SQRT_BIAS, SQRT_C0_TERM_ALIGNMENT, SQRT_C1_TERM_ALIGNMENT,
                     SQRT_C2_TERM_ALIGNMENT, SQRT_M, SQRT_SUM_WEIGHT, SQRT_TABLE)

__all__ = ["mufu_rcp", "mufu_rsq", "mufu_sqrt", "mufu_ex2", "mufu_lg2", "mufu_sin", "mufu_cos",
           "MUFU", "MEASURED", "PRIMITIVES", "SQ"]

NAN = 0x7FFFFFFF


def _square_table(bits: int) -> np.ndarray:
    """sq(x) for every ``bits``-bit x: x*x less the truncated partial-product bits (the low 19
    columns of the antidiagonal x_i*x_i at column 2i, and of rows i < 9: x_i times the bits of
    x above i, at columns i + j + 1 for j > i)."""
    x = np.arange(1 << bits, dtype=np.int64)
    mask = (1 << 19) - 1
    err = np.zeros_like(x)
    for i in range(10):                                   # the antidiagonal, columns 2i < 19
        err |= ((x >> i) & 1) << (2 * i)
    err &= mask
    for i in range(9):
        row = (x << (i + 1)) & ~np.int64((1 << (2 * i + 2)) - 1)
        err += np.where((x >> i) & 1, row & mask, 0)
    return x * x - err


#: sq(xl) for every 17-bit xl (the widest lower significand of the tables): the tests' check of
#: ``square``
SQ = _square_table(17)


@njit(cache=True, nogil=True)
def square(x: int) -> int:
    """The truncated squarer's x*x (as ``_square_table``), one value."""
    err = 0
    for i in range(10):
        err |= ((x >> i) & 1) << (2 * i)
    err &= (1 << 19) - 1
    for i in range(9):
        if (x >> i) & 1:
            err += ((x << (i + 1)) & ~((1 << (2 * i + 2)) - 1)) & ((1 << 19) - 1)
    return x * x - err


def _tab(t: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    return np.array(t, dtype=np.int64)


RCP_T = _tab(RCP_TABLE)
SQRT_T = _tab(SQRT_TABLE)
RSQRT_T = _tab(RSQRT_TABLE)
LG2_T = _tab(LG2_TABLE)
EX2_T = _tab(EX2_TABLE)
SIN_T = _tab(SIN_TABLE)
RCP_B = RCP_BIAS >> ((64 - RCP_SUM_WEIGHT) + 23)
SQRT_B = SQRT_BIAS >> ((64 - SQRT_SUM_WEIGHT) + 23)
RSQRT_B = RSQRT_BIAS >> ((64 - RSQRT_SUM_WEIGHT) + 23)
LG2_B = LG2_BIAS >> ((64 - LG2_SUM_WEIGHT) + 23)
EX2_B = EX2_BIAS >> ((64 - EX2_SUM_WEIGHT) + 23)
SIN_B = SIN_BIAS >> ((64 - SIN_SUM_WEIGHT) + 23)
F23 = (1 << 23) - 1


@njit(cache=True, nogil=True)
def mufu_rcp(x: int) -> int:
    """MUFU.RCP: 1/x."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    if e == 0xFF:
        return NAN if f else s                       # 1/inf = zero of its sign
    if e == 0:
        return s | 0x7F800000                        # 0 (or a flushed subnormal): inf
    lo = 23 - RCP_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    c0 = RCP_T[xh, 0]
    c1 = RCP_T[xh, 1]
    c2 = RCP_T[xh, 2]
    acc = ((c0 << RCP_C0_TERM_ALIGNMENT) - ((c1 * xl) << RCP_C1_TERM_ALIGNMENT)
           + ((c2 * (square(xl << 1) >> 2)) << RCP_C2_TERM_ALIGNMENT) + RCP_B)
    re = 127
    if (acc >> RCP_SUM_WEIGHT) == 0:
        re = 126
        acc <<= 1
    frac = (acc >> (RCP_SUM_WEIGHT - 23)) & F23
    ne = re - (e - 127)
    if ne <= 0:
        return s                                     # below the normal range: flushed
    return s | (ne << 23) | frac


@njit(cache=True, nogil=True)
def mufu_rsq(x: int) -> int:
    """MUFU.RSQ: 1/sqrt(x)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    if e == 0xFF:
        if f or s:
            return NAN
        return 0
    if e == 0:
        return s | 0x7F800000
    if s:
        return NAN
    k = e - 127
    lo = 23 - RSQRT_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    idx = xh
    if k & 1:
        k -= 1
        idx += 1 << RSQRT_M
    elif f == 0:
        return (127 - k // 2) << 23                  # an even power of two: exact
    c0 = RSQRT_T[idx, 0]
    c1 = RSQRT_T[idx, 1]
    c2 = RSQRT_T[idx, 2]
    acc = ((c0 << RSQRT_C0_TERM_ALIGNMENT) - ((c1 * xl) << RSQRT_C1_TERM_ALIGNMENT)
           + ((c2 * square(xl)) << RSQRT_C2_TERM_ALIGNMENT) + RSQRT_B)
    acc <<= 1
    frac = (acc >> (RSQRT_SUM_WEIGHT - 23)) & F23
    return ((126 - k // 2) << 23) | frac


@njit(cache=True, nogil=True)
def mufu_sqrt(x: int) -> int:
    """MUFU.SQRT: sqrt(x) (the sm_6x+ table of its own; sm_5x computed rcp(rsq(x)))."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    if e == 0xFF:
        if f or s:
            return NAN
        return 0x7F800000
    if e == 0:
        return s                                     # sqrt(-0) = -0
    if s:
        return NAN
    k = e - 127
    lo = 23 - SQRT_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    idx = xh
    if k & 1:
        k -= 1
        idx += 1 << SQRT_M
    c0 = SQRT_T[idx, 0]
    c1 = SQRT_T[idx, 1]
    c2 = SQRT_T[idx, 2]
    acc = ((c0 << SQRT_C0_TERM_ALIGNMENT) + ((c1 * xl) << SQRT_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << SQRT_C2_TERM_ALIGNMENT) + SQRT_B)
    frac = (acc >> (SQRT_SUM_WEIGHT - 23)) & F23
    return ((127 + k // 2) << 23) | frac


@njit(cache=True, nogil=True)
def mufu_lg2(x: int) -> int:
    """MUFU.LG2: log2(x)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    if e == 0xFF:
        if f or s:
            return NAN
        return 0x7F800000
    if e == 0:
        return 0xFF800000                            # log2(+-0) = -inf
    if s:
        return NAN
    if x == 0x3F800000:
        return 0
    lo = 23 - LG2_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    c0 = LG2_T[xh, 0]
    c1 = LG2_T[xh, 1]
    c2 = LG2_T[xh, 2]
    acc = ((c0 << LG2_C0_TERM_ALIGNMENT) + ((c1 * xl) << LG2_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << LG2_C2_TERM_ALIGNMENT) + LG2_B)
    acc += (e - 127) << LG2_SUM_WEIGHT
    if acc < 0:
        acc = -acc
    acc &= ~((1 << 20) - 1)                          # the sum is truncated below bit 20
    if acc == 0:
        return 0
    re = 127
    W = LG2_SUM_WEIGHT
    while (acc >> W) == 0:
        re -= 1
        acc <<= 1
    while (acc >> (W + 1)) != 0:
        re += 1
        acc >>= 1
    frac = (acc >> (W - 23)) & F23
    sign = 0x80000000 if e < 127 else 0
    return sign | (re << 23) | frac


@njit(cache=True, nogil=True)
def mufu_ex2(x: int) -> int:
    """MUFU.EX2: 2^x (a result below 2^-126 is zero)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    if e == 0xFF:
        if f:
            return NAN
        return 0 if s else 0x7F800000
    if e == 0:
        return 0x3F800000
    k = e - 127
    m = f | (1 << 23)
    # |x| = m * 2^(k-23): its integral part n and its fraction, truncated to 23 bits (fx)
    if k >= 23:
        n = m << (k - 23) if k < 31 else 1 << 20
        fx = 0
    elif k >= 0:
        n = m >> (23 - k)
        fx = (m << k) & F23
    else:
        n = 0
        fx = m >> min(-k, 24)
    if s:
        n = -n
        if fx != 0:
            fx = ~fx
            n -= 1
    lo = 23 - EX2_M
    xh = (fx >> lo) & ((1 << EX2_M) - 1)
    xl = fx & ((1 << lo) - 1)
    c0 = EX2_T[xh, 0]
    c1 = EX2_T[xh, 1]
    c2 = EX2_T[xh, 2]
    acc = ((c0 << EX2_C0_TERM_ALIGNMENT) + ((c1 * xl) << EX2_C1_TERM_ALIGNMENT)
           + ((c2 * square(xl)) << EX2_C2_TERM_ALIGNMENT) + EX2_B)
    frac = (acc >> (EX2_SUM_WEIGHT - 23)) & F23
    if n > 127:
        return 0x7F800000
    if n < -126:
        return 0
    return ((n + 127) << 23) | frac


# MUFU.SIN / MUFU.COS.  On sm_70 and later ptxas computes sin/cos.approx.f32 as
# FMUL.RZ x * f32(1/(2 pi)) then MUFU.SIN/COS of that product y, an angle in turns (sm_5x/6x had
# a separate range-reduction instruction, RRO, instead).  ptx-math models the two together as
# its sm_70 "RRO" (a quadrant q and a 23-bit fraction r of a quarter turn) followed by the
# quadratic over 64 segments of r (sin_table); ptxfp splits them at the FMUL: the primitive reads
# 4|y| in fixed point, its bits 23-24 (mod 4) being q and its 23 fraction bits r, truncated (the
# low bits of r that y does not carry are zeros, which is ptx-math's sm_70 masking by the
# exponent of x*2/pi).  sin: an odd quadrant reflects r (~r), quadrants 2-3 negate; cos: an even
# quadrant reflects, quadrants 1-2 are negative.  A subnormal y is a zero, inf and NaN give NaN.


@njit(cache=True, nogil=True)
def _quarter_turns(x: int) -> tuple[int, int]:
    """(q, r) of binary32 bits ``x`` (finite): q = floor(4|x|) mod 4, r = the first 23 bits of
    the fraction of 4|x| (a subnormal x reads as zero)."""
    e = (x >> 23) & 0xFF
    if e == 0:
        return 0, 0
    m = (x & F23) | (1 << 23)
    sh = e - 125                         # 4|x| * 2^23 = m * 2^(e - 127 - 23 + 2 + 23)
    if sh >= 25:
        t = 0                            # a multiple of 4 turns: q = 0, r = 0
    elif sh >= 0:
        t = m << sh
    else:
        t = m >> min(-sh, 31)
    return (t >> 23) & 3, t & F23


@njit(cache=True, nogil=True)
def _sin_poly(r: int, neg: int) -> int:
    """sin(r/2^23 * pi/2) from the table: c0 + c1*xl - c2*sq(xl) at the published alignments,
    normalized (a zero sum is a zero of sign ``neg``)."""
    lo = 23 - SIN_M
    xh = r >> lo
    xl = r & ((1 << lo) - 1)
    c0 = SIN_T[xh, 0]
    c1 = SIN_T[xh, 1]
    c2 = SIN_T[xh, 2]
    acc = ((c0 << SIN_C0_TERM_ALIGNMENT) + ((c1 * xl) << SIN_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << SIN_C2_TERM_ALIGNMENT) + SIN_B)
    sign = 0x80000000 if neg else 0
    if acc == 0:
        return sign
    re = 127
    while (acc >> SIN_SUM_WEIGHT) == 0:
        re -= 1
        acc <<= 1
    return sign | (re << 23) | ((acc >> (SIN_SUM_WEIGHT - 23)) & F23)


@njit(cache=True, nogil=True)
def mufu_sin(x: int) -> int:
    """MUFU.SIN: sin(2 pi x), x in turns."""
    if ((x >> 23) & 0xFF) == 0xFF:
        return NAN
    q, r = _quarter_turns(x)
    neg = (x >> 31) & 1
    if q & 1:
        r = ~r & F23
    if q & 2:
        neg ^= 1
    return _sin_poly(r, neg)


@njit(cache=True, nogil=True)
def mufu_cos(x: int) -> int:
    """MUFU.COS: cos(2 pi x), x in turns."""
    if ((x >> 23) & 0xFF) == 0xFF:
        return NAN
    q, r = _quarter_turns(x)
    if not q & 1:
        r = ~r & F23
    return _sin_poly(r, 1 if (q + 1) & 2 else 0)


#: MUFU opcode (as SASS writes it) -> its primitive
MUFU = {"RCP": mufu_rcp, "RSQ": mufu_rsq, "SQRT": mufu_sqrt, "EX2": mufu_ex2, "LG2": mufu_lg2,
        "SIN": mufu_sin, "COS": mufu_cos}

#: MUFU opcode -> the targets on which its model was measured (a view of measured.PRIMITIVES,
#: the one table of who measured what)
MEASURED: dict[str, tuple[str, ...]] = {m.mufu: m.measured for m in _PROVENANCE.values()
                                        if m.mufu in MUFU}
#: the primitives ptxfp has a model of
PRIMITIVES = tuple(MUFU)

