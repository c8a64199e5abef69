"""The SASS float instructions the sequences around MUFU use, one element at a time (Numba):
FMUL/FADD (round to nearest binary32, or ``.RZ``; ``.FTZ`` flushes subnormal operands and
results to zeros of their sign), FSETP's comparisons (``.FTZ`` compares flushed operands; the
``U`` comparisons are true on a NaN), and the bit casts MUFU needs.  The host's binary32
multiply and add are IEEE operations rounded to nearest (the IEEE default environment, FTZ and
DAZ off: the kernels set it), the GPU's FMUL/FADD without a rounding modifier.

FMUL multiplies in binary64, where the product of two binary32 is exact and never subnormal,
and rounds that once: the same bits as a binary32 multiply, without the microcode assist that
an x86 core takes for every binary32 multiply with a subnormal operand or result (ten times the
cost of the multiply, per vector); the conversions to and from binary64 take none."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...core._bitcast import bits_from_f32, f32_from_bits

__all__ = ["flush", "fmul", "fadd", "fsetp", "f32", "bits", "CMP"]

#: FSETP comparison -> code
CMP = {"LT": 0, "EQ": 1, "LE": 2, "GT": 3, "NE": 4, "GE": 5, "LTU": 8, "EQU": 9, "LEU": 10,
       "GTU": 11, "NEU": 12, "GEU": 13}


@njit(cache=True, nogil=True, inline="always")
def f32(b: int) -> np.float32:
    return f32_from_bits(b)


@njit(cache=True, nogil=True, inline="always")
def bits(x: np.float32) -> int:
    return bits_from_f32(x)


@njit(cache=True, nogil=True, inline="always")
def flush(x: np.float32) -> np.float32:
    b = bits_from_f32(x)
    if (b & 0x7F800000) == 0:
        return f32_from_bits(b & 0x80000000)
    return x


@njit(cache=True, nogil=True, inline="always")
def _rz(exact: float) -> np.float32:
    """``exact`` (a binary64 holding the exact result) rounded toward zero to binary32."""
    r = np.float32(exact)
    if np.isnan(exact) or np.isinf(exact):
        return r
    if abs(np.float64(r)) > abs(exact):
        r = f32_from_bits(bits_from_f32(r) - 1)
    return r


@njit(cache=True, nogil=True, inline="always")
def fmul(x: np.float32, y: np.float32, ftz: bool, rz: bool) -> np.float32:
    if ftz:
        x = flush(x)
        y = flush(y)
    # 24 x 24 bits: exact in binary64.  Written as x * (y * 2^-100) * 2^100 (each step exact,
    # every intermediate normal; y * 2^-100 folds into a constant y), because LLVM turns
    # float32(float64(x) * float64(y)) back into a binary32 multiply (the same bits, and the
    # assists).
    p = (np.float64(x) * (np.float64(y) * 2.0 ** -100)) * 2.0 ** 100
    r = _rz(p) if rz else np.float32(p)             # rounded once
    return flush(r) if ftz else r


@njit(cache=True, nogil=True, inline="always")
def fadd(x: np.float32, y: np.float32, ftz: bool) -> np.float32:
    if ftz:
        x = flush(x)
        y = flush(y)
    r = np.float32(x + y)
    return flush(r) if ftz else r


@njit(cache=True, nogil=True, inline="always")
def fsetp(code: int, x: np.float32, y: np.float32, ftz: bool) -> bool:
    if ftz:
        x = flush(x)
        y = flush(y)
    if np.isnan(x) or np.isnan(y):
        return code >= 8
    c = code & 7
    if c == 0:
        return x < y
    if c == 1:
        return x == y
    if c == 2:
        return x <= y
    if c == 3:
        return x > y
    if c == 4:
        return x != y
    return x >= y
