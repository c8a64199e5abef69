"""Bit patterns of the matrix element formats decoded for the block-step kernels (NumPy).

A finite value is ``sig * 2**(exp - man_bits)`` with ``sig`` a signed integer (the significand
with its implicit bit, below ``2**man_bits`` for a subnormal) and ``exp`` the exponent its
encoding gives (a subnormal has the format's smallest normal exponent).  A zero has ``sig`` 0
and the exponent ``zero_exp`` (params.MmaParams).  ``spec`` marks the non-finite values (their
``sig`` is 0): SPEC_NAN, SPEC_PINF, SPEC_NINF.  tf32 operands are 32-bit containers whose low
13 bits the hardware ignores: they are dropped here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.types import NAN_ALL_ONES, NAN_IEEE, FloatFormat

SPEC_FINITE, SPEC_NAN, SPEC_PINF, SPEC_NINF = 0, 1, 2, 3


#: formats up to this many bits are decoded through a table of every encoding
TABLE_BITS = 19


def decode(bits: NDArray[Any], fmt: FloatFormat, zero_exp: int,
           container_shift: int = 0) -> tuple[NDArray[np.int32], NDArray[np.int32],
                                              NDArray[np.int8]]:
    """(sig, exp, spec) of every element of ``bits`` in format ``fmt``; ``container_shift``
    drops low container bits first (13 for tf32 in an f32 container)."""
    if fmt.width <= TABLE_BITS:
        sig_t, exp_t, spec_t, _ = _tables(fmt, zero_exp)
        idx = _index(bits, container_shift)
        return sig_t[idx], exp_t[idx], spec_t[idx]
    return _decode(bits.astype(np.int64, copy=False) >> container_shift, fmt, zero_exp)


def decode_values(bits: NDArray[Any], fmt: FloatFormat, zero_exp: int,
                  container_shift: int = 0) -> tuple[NDArray[np.float64], NDArray[np.int16],
                                                     NDArray[np.int8]]:
    """(value, exp, spec) of every element: the value ``sig * 2**(exp - man_bits)`` as a
    float64 (exact; 0 for a NaN or an infinity), the exponent as int16."""
    if fmt.width <= TABLE_BITS:
        _, exp_t, spec_t, val_t = _tables(fmt, zero_exp)
        idx = _index(bits, container_shift)
        return val_t[idx], exp_t[idx].astype(np.int16), spec_t[idx]
    sig, exp, spec = decode(bits, fmt, zero_exp, container_shift)
    return np.ldexp(sig.astype(np.float64), exp - fmt.man_bits), exp.astype(np.int16), spec


def _index(bits: NDArray[Any], container_shift: int) -> NDArray[Any]:
    if not container_shift:
        return bits
    out: NDArray[Any] = bits.astype(np.uint32, copy=False) >> np.uint32(container_shift)
    return out


@lru_cache(maxsize=64)
def _tables(fmt: FloatFormat, zero_exp: int) -> tuple[NDArray[np.int32], NDArray[np.int32],
                                                       NDArray[np.int8], NDArray[np.float64]]:
    """``decode`` of every encoding of ``fmt`` (and the values), indexed by the bits."""
    sig, exp, spec = _decode(np.arange(1 << fmt.width, dtype=np.int64), fmt, zero_exp)
    val = np.ldexp(sig.astype(np.float64), exp - fmt.man_bits)
    for t in (sig, exp, spec, val):
        t.setflags(write=False)
    return sig, exp, spec, val


def _decode(b: NDArray[np.int64], fmt: FloatFormat, zero_exp: int) -> tuple[
        NDArray[np.int32], NDArray[np.int32], NDArray[np.int8]]:
    man = fmt.man_bits
    emask = (1 << fmt.exp_bits) - 1
    E = (b >> man) & emask
    M = b & ((1 << man) - 1)
    neg = ((b >> (fmt.width - 1)) & 1).astype(bool) if fmt.signed else np.zeros(b.shape, bool)
    normal = E != 0
    sig = np.where(normal, M | (1 << man), M)
    exp = np.where(normal, E - fmt.bias, fmt.emin)
    spec = np.zeros(b.shape, np.int8)
    if fmt.nan_encoding == NAN_IEEE:
        top = E == emask
        spec[top & (M != 0)] = SPEC_NAN
        if fmt.has_inf:
            inf = top & (M == 0)
            spec[inf & ~neg] = SPEC_PINF
            spec[inf & neg] = SPEC_NINF
    elif fmt.nan_encoding == NAN_ALL_ONES:
        spec[(E == emask) & (M == (1 << man) - 1)] = SPEC_NAN
    sig = np.where(spec != 0, 0, sig)
    exp = np.where(sig == 0, zero_exp, exp)
    sig = np.where(neg, -sig, sig)
    return sig.astype(np.int32), exp.astype(np.int32), spec


def scale_exponents(bits: NDArray[Any], fmt: FloatFormat, zero_exp: int) -> tuple[
        NDArray[np.int32], NDArray[np.int32], NDArray[np.bool_]]:
    """Scale factors (ue8m0, or ue4m3: e4m3 with the sign bit ignored): (sig, exp, is_nan)
    with the value ``sig * 2**(exp - man_bits)``; ue8m0 has no fraction (sig 1) and no zero."""
    b = bits.astype(np.int64, copy=False)
    if fmt.name == "ue8m0":
        nan = b == 0xFF
        return (np.ones(b.shape, np.int32), (b - 127).astype(np.int32), nan)
    sig, exp, spec = decode(b & 0x7F, fmt, zero_exp)
    return sig, exp, spec == SPEC_NAN
