"""The float helpers at the edge: ``to_bits`` (real numbers to bit patterns, one rounding to
nearest even) and ``from_bits`` (bit patterns to float64, exactly).

Inside ptxfp values are bit patterns; these two are for the user's side of the boundary.  They
sit above the kernels (bf16 is rounded by the one rounding core) and the operand checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import FormatError
from .formats import BF16, F16, F32, Bits, Format, bits_dtype, check_fmt as _check_fmt, \
    is_float_dtype
from .kernels import round_f64_array
from .limits import check_bytes
from .operands import as_bits
from .policy import current

__all__ = ["to_bits", "from_bits", "Bits"]


def _round_f64_to(fmt: Format, x: NDArray[np.float64]) -> NDArray[Any]:
    """Round a float64 array to ``fmt`` bits, round-to-nearest-even (one rounding; overflow
    gives an infinity, as IEEE's round-to-nearest does)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if fmt is F16:
            # NumPy's float64 -> float16 cast is a single correctly rounded conversion.
            return x.astype(np.float16).view(np.uint16)
        if fmt is F32:
            return x.astype(np.float32).view(np.uint32)
    # bf16: round the float64 value directly (rounding to f32 first would double-round).
    out: NDArray[Any] = round_f64_array(x.ravel(), fmt.code).reshape(x.shape)
    return out


def _round_to_odd(hi: NDArray[np.float64], above: NDArray[np.int8]) -> NDArray[np.float64]:
    """The float64 round-to-odd of exact values x given as ``hi``, x rounded to nearest float64,
    and ``above``, the sign of x - hi (-1, 0, +1).

    Round-to-odd at 53 bits followed by round-to-nearest into a format of at most 51 bits is
    one correct rounding of x (Boldo and Melquiond, "Emulation of FMA and correctly rounded
    sums: proved algorithms using rounding to odd", 2008), so every format here is reached
    with one rounding."""
    inexact = above != 0
    # x truncated toward zero: one step toward zero from hi where x lies between hi and zero
    inward = inexact & ((hi > 0) == (above < 0))
    t = np.where(inward, np.nextafter(hi, 0.0), hi)
    # inexact with an even last bit: the odd neighbour away from zero (where x lies)
    even = (t.view(np.int64) & 1) == 0
    away = np.where(t == 0, np.where(above < 0, -np.inf, np.inf), np.copysign(np.inf, t))
    return np.where(inexact & even & np.isfinite(t), np.nextafter(t, away), t)


def _exact_read(values: object) -> tuple[NDArray[np.float64], NDArray[np.int8] | None]:
    """``values`` as (float64 array rounded to nearest, sign of what that rounding lost, or None
    when nothing was lost): long double and integers wider than 53 bits are read exactly."""
    try:
        arr = np.asarray(values)
        if arr.dtype.kind == "O":
            return _exact_read_objects(arr)
        if arr.dtype.kind not in "biuf" and not is_float_dtype(arr.dtype):
            raise TypeError(arr.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            hi = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise FormatError("to_bits: values must be real numbers") from None
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 8 and np.finfo(arr.dtype).nmant > 52:
        # long double: x - hi is exact in long double (hi is x rounded to fewer bits)
        with np.errstate(invalid="ignore", over="ignore"):
            lost = np.where(np.isfinite(hi), arr - hi.astype(arr.dtype), 0)
        return hi, ((lost > 0).astype(np.int8) - (lost < 0).astype(np.int8))
    if arr.dtype.kind in "iu" and arr.dtype.itemsize > 4:
        return hi, _int_lost(arr, hi)
    return hi, None


def _int_lost(arr: NDArray[Any], hi: NDArray[np.float64]) -> NDArray[np.int8] | None:
    """The sign of n - hi for integers n of ``arr`` (hi: n rounded to float64); only
    magnitudes beyond 2**53 can differ, and only those are compared, exactly."""
    big = np.flatnonzero(np.abs(hi) > 2.0**53)
    if big.size == 0:
        return None
    lost = np.zeros(arr.shape, np.int8)
    flat_n, flat_hi, flat_lost = arr.reshape(-1), hi.reshape(-1), lost.reshape(-1)
    for k in big:
        d = int(flat_n[k]) - int(flat_hi[k])
        flat_lost[k] = (d > 0) - (d < 0)
    return lost


def _exact_read_objects(arr: NDArray[Any]) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """An object array (Python ints of any size, floats): element by element, exactly."""
    hi = np.empty(arr.shape, np.float64)
    lost = np.zeros(arr.shape, np.int8)
    for k, v in enumerate(arr.flat):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                   np.floating)):
            raise FormatError(f"to_bits: values must be real numbers, got {type(v).__name__}")
        if isinstance(v, (int, np.integer)):
            n = int(v)
            try:
                h = float(n)
            except OverflowError:
                h = float("inf") if n > 0 else float("-inf")
            d = 0 if h in (float("inf"), float("-inf")) else n - int(h)
            hi.flat[k], lost.flat[k] = h, (d > 0) - (d < 0)
        else:
            sub_hi, sub_lost = _exact_read(v)
            hi.flat[k] = sub_hi
            lost.flat[k] = 0 if sub_lost is None else sub_lost
    return hi, lost


def to_bits(values: ArrayLike, fmt: str) -> Bits:
    """Encode real numbers as ``fmt`` bit patterns with one rounding to nearest, ties to even.

    ``fmt`` is 'f16', 'bf16', 'f32', or a packed 'f16x2'/'bf16x2', for which ``values`` has
    shape (..., 2) with lane 0 first (lane 0 lands in bits [15:0]).  ``values``: Python floats
    and ints, or arrays of any real dtype.  Every value is rounded once, exactly: ``np.longdouble``
    and integers beyond 2**53 are not rounded to float64 on the way.  A value beyond the format's
    range rounds to an infinity of its sign (round-to-nearest overflow); one below half the
    smallest subnormal rounds to a zero of its sign.  NaN becomes the canonical NaN of the
    format (``ptxfp.POLICY.canonical_nan(fmt)``).  No NumPy warning is raised.  Returns a Python
    int for a scalar, else a uint16 (f16, bf16) or uint32 (f32, f16x2, bf16x2) array.

        >>> hex(to_bits(1.0, "bf16")), hex(to_bits(70000.0, "f16"))
        ('0x3f80', '0x7c00')
    """
    lane, packed = _check_fmt(fmt)
    if isinstance(values, np.ndarray):            # float64 temporaries per element, weighed
        check_bytes(values.size * 40, f"to_bits({fmt})", f"({values.size} values)")
    hi, lost = _exact_read(values)
    if packed:
        if hi.ndim == 0 or hi.shape[-1] != 2:
            raise FormatError(
                f"to_bits: values for {fmt} must have shape (..., 2), lane 0 first; "
                f"got {hi.shape}")
    x = hi if lost is None else _round_to_odd(hi, lost)
    bits = _round_f64_to(lane, x)
    nan = np.isnan(x)
    if nan.any():
        bits = np.where(nan, current().canonical_nan(lane.name), bits)
    bits = np.asarray(bits).astype(bits_dtype(lane))
    if packed:
        wide = bits.astype(np.uint32)
        bits = wide[..., 0] | (wide[..., 1] << np.uint32(16))
    return bits if bits.ndim else int(bits)


def from_bits(bits: ArrayLike, fmt: str) -> float | NDArray[np.float64]:
    """Decode ``fmt`` bit patterns to float64 exactly (packed formats give shape (..., 2), lane 0
    first).  A float for one scalar bit pattern, else a float64 array.

        >>> from_bits(0x3F80, "bf16"), from_bits([0x3C00, 0xC000], "f16")
        (1.0, array([ 1., -2.]))
    """
    lane, packed = _check_fmt(fmt)
    width = 32 if packed else lane.width
    b = as_bits(bits, width, f"from_bits({fmt})")
    check_bytes(b.size * 24, f"from_bits({fmt})", f"({b.size} values)")
    if packed:
        lo = (b & np.uint32(0xFFFF)).astype(np.uint16)
        hi = (b >> np.uint32(16)).astype(np.uint16)
        return np.stack([from_bits(lo, lane.name), from_bits(hi, lane.name)], axis=-1)
    with np.errstate(invalid="ignore"):          # signalling NaNs quieten on the way
        if lane is F16:
            out = b.astype(np.uint16).view(np.float16).astype(np.float64)
        elif lane is BF16:
            out = (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        else:
            out = b.astype(np.uint32).view(np.float32).astype(np.float64)
    return out if out.ndim else float(out)
