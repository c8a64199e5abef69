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
from .core.formats import (BF16, F16, F32, Bits, Format, bits_dtype, check_fmt as _check_fmt,
                           is_float_dtype)
from .ops.kernels import _round_array, round_f64_array   # the one rounding core, over arrays
from .limits import check_bytes
from .core.operands import as_bits
from .policy import current
from .core.types import (E2M1, E2M3, E3M2, E4M3, E5M2, NAN_NONE, OVERFLOW_INF, OVERFLOW_NAN, UE8M0,
                         FloatFormat)

__all__ = ["to_bits", "from_bits", "Bits", "SMALL_FORMATS"]

#: the small formats to_bits and from_bits take (one value each, in the low bits of a uint8)
SMALL_FORMATS: dict[str, FloatFormat] = {f.name: f for f in (E4M3, E5M2, E2M3, E3M2, E2M1, UE8M0)}


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


def _to_bits_small(values: ArrayLike, f: FloatFormat) -> Bits:
    """to_bits into one of SMALL_FORMATS: the rounding core's round-to-nearest-even (with a
    16-bit frame, so that its overflow and sign never collide with a code), then the
    format's rules for what it cannot hold."""
    if isinstance(values, np.ndarray):
        check_bytes(values.size * 40, f"to_bits({f.name})", f"({values.size} values)")
    hi, lost = _exact_read(values)
    x = np.asarray(hi if lost is None else _round_to_odd(hi, lost), np.float64)
    ue8m0 = f is UE8M0
    P, emin = (1, -127) if ue8m0 else (f.precision, f.emin)
    frame = np.empty(x.size, np.uint16)
    _round_array(np.ascontiguousarray(x.reshape(-1)), frame, P, emin, f.emax, 16, 0xFFFF)
    nan = frame == 0xFFFF
    neg = (frame >> np.uint16(15)).astype(bool) & ~nan
    mag = (frame & np.uint16(0x7FFF)).astype(np.int64)
    maxf = f.max_finite
    if ue8m0:
        # 2**(k - 127) is code k; no zero, no sign, no infinity: those are NaN (0xFF)
        code = mag - 1
        code = np.where((code < 0) & (x.reshape(-1) > 0), 0, code)   # below 2**-127: the least
        bad = nan | neg | (code < 0) | (code > maxf)
        out = np.where(bad, 0xFF, code)
    else:
        over = mag > maxf
        if f.overflow == OVERFLOW_INF:
            mag = np.where(over, f.inf, mag)
        elif f.overflow == OVERFLOW_NAN:
            nan = nan | over
        else:                                          # OVERFLOW_SATURATE
            mag = np.minimum(mag, maxf)
        if nan.any() and f.nan_encoding == NAN_NONE:
            raise FormatError(f"to_bits: .{f.name} has no NaN, and {int(nan.sum())} of the "
                              "values are NaN")
        out = np.where(neg, f.sign_bit, 0) | mag
        if nan.any():
            out = np.where(nan, current().canonical_nan(f.name), out)
    bits = out.astype(np.uint8).reshape(x.shape)
    return bits if bits.ndim else int(bits)


_SMALL_VALUES: dict[str, NDArray[np.float64]] = {}


def _from_bits_small(bits: ArrayLike, f: FloatFormat) -> float | NDArray[np.float64]:
    """from_bits of one of SMALL_FORMATS: a lookup in the table of every code's value (the
    type table's reading, FloatFormat.value)."""
    b = as_bits(bits, f.width, f"from_bits({f.name})")
    table = _SMALL_VALUES.get(f.name)
    if table is None:
        table = _SMALL_VALUES[f.name] = np.array([f.value(k) for k in range(1 << f.width)],
                                                 np.float64)
    out = table[b]
    return out if out.ndim else float(out)


def to_bits(values: ArrayLike, fmt: str) -> Bits:
    """Encode real numbers as ``fmt`` bit patterns with one rounding to nearest, ties to even.

    ``fmt`` is 'f16', 'bf16', 'f32', or a packed 'f16x2'/'bf16x2', for which ``values`` has
    shape (..., 2) with lane 0 first (lane 0 lands in bits [15:0]); or one of the small
    formats 'e4m3', 'e5m2', 'e2m3', 'e3m2', 'e2m1', 'ue8m0' (one value per uint8, in its low
    bits), rounded the same way, with what each format cannot hold decided by the format
    (the OCP 8-bit and MX formats' rules, as ml_dtypes' conversions have them):

    - e5m2 has infinities: a value beyond its range rounds to an infinity, as for f16;
    - e4m3 has no infinity: a value whose rounding passes 448 (from 464 up), and an
      infinity, become its NaN 0x7F;
    - e2m3, e3m2, e2m1 have neither: a value beyond the largest finite (7.5, 28, 6) and an
      infinity saturate to it, with its sign; a NaN is a FormatError (they have no NaN);
    - ue8m0 (the MX scale, 2**(k - 127) for k = 0..254) has no sign, zero or infinity: a
      value rounds to the nearest power of two (a tie, 1.5 * 2**k, to the larger one: the
      even significand of a 1-bit format); a positive value below 2**-127 gives 2**-127 (0x00:
      there is no zero to round to); zero, a negative value, a value that rounds above
      2**127, an infinity and NaN are its NaN 0xFF.

    A NaN value gives the canonical NaN of e4m3, e5m2 (``ptxfp.POLICY.canonical_nan(fmt)``)
    and ue8m0.

    ``values``: Python floats and ints, or arrays of any real dtype.  Every value is rounded
    once, exactly: ``np.longdouble`` and integers beyond 2**53 are not rounded to float64 on the
    way.  For f16/bf16/f32, a value beyond the format's range rounds to an infinity of its
    sign (round-to-nearest overflow); one below half the smallest subnormal rounds to a zero of
    its sign.  NaN becomes the canonical NaN of the format
    (``ptxfp.POLICY.canonical_nan(fmt)``).  No NumPy warning is raised.  Returns a Python
    int for a scalar, else a uint16 (f16, bf16), uint32 (f32, f16x2, bf16x2) or uint8 (the
    small formats) array.

        >>> hex(to_bits(1.0, "bf16")), hex(to_bits(70000.0, "f16"))
        ('0x3f80', '0x7c00')
        >>> to_bits([1.0, 0.3, 1000.0], "e4m3"), hex(to_bits(3.0, "ue8m0"))
        (array([ 56,  42, 127], dtype=uint8), '0x81')
    """
    small = SMALL_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if small is not None:
        return _to_bits_small(values, small)
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
    first).  A float for one scalar bit pattern, else a float64 array.  ``fmt`` as for
    ``to_bits``: the small formats take codes of their width (8 bits for e4m3, e5m2, ue8m0;
    6 for e2m3, e3m2; 4 for e2m1).

        >>> from_bits(0x3F80, "bf16"), from_bits([0x3C00, 0xC000], "f16")
        (1.0, array([ 1., -2.]))
        >>> from_bits([0x38, 0x7E, 0x7F], "e4m3"), from_bits(0x7F, "ue8m0")
        (array([  1., 448.,  nan]), 1.0)
    """
    small = SMALL_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if small is not None:
        return _from_bits_small(bits, small)
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
