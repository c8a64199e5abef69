"""The storage formats ptxfp works on, as data, and the float helpers at the edge.

Values inside ptxfp are bit patterns.  ``to_bits``/``from_bits`` are the only places where
floats appear: from floats with round-to-nearest-even, back to floats exactly.
"""

from dataclasses import dataclass

import numpy as np

from .errors import FormatError


@dataclass(frozen=True)
class Format:
    name: str
    code: int          #: small integer id used by the kernels
    width: int         #: storage bits
    exp_bits: int
    man_bits: int      #: stored fraction bits (precision is man_bits + 1)

    @property
    def precision(self):
        return self.man_bits + 1

    @property
    def bias(self):
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emin(self):
        """Exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def emax(self):
        return self.bias

    @property
    def dtype(self):
        return np.dtype(np.uint16 if self.width == 16 else np.uint32)

    @property
    def inf(self):
        return ((1 << self.exp_bits) - 1) << self.man_bits

    @property
    def max_finite(self):
        return self.inf - 1

    @property
    def one(self):
        return self.bias << self.man_bits

    @property
    def sign_bit(self):
        return 1 << (self.width - 1)


F16 = Format("f16", 0, 16, 5, 10)
BF16 = Format("bf16", 1, 16, 8, 7)
F32 = Format("f32", 2, 32, 8, 23)

FORMATS = {f.name: f for f in (F16, BF16, F32)}
#: packed formats: name -> lane format
PACKED = {"f16x2": F16, "bf16x2": BF16}


def get(name):
    """The Format called ``name`` (``f16``, ``bf16`` or ``f32``)."""
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise FormatError(
            f"unknown format {name!r}: expected one of f16, bf16, f32, f16x2, bf16x2") from None


def _check_fmt(fmt):
    if fmt in PACKED:
        return PACKED[fmt], True
    return get(fmt), False


def _round_f64_to(fmt, x):
    """Round a float64 array to ``fmt`` bits, round-to-nearest-even (one rounding)."""
    x = np.asarray(x, dtype=np.float64)
    if fmt is F16:
        # NumPy's float64 -> float16 cast is a single correctly rounded conversion.
        return x.astype(np.float16).view(np.uint16)
    if fmt is F32:
        return x.astype(np.float32).view(np.uint32)
    # bf16: round the float64 value directly (rounding to f32 first would double-round).
    from .kernels import round_f64_array
    return round_f64_array(x.ravel(), fmt.code).reshape(x.shape)


def to_bits(values, fmt):
    """Encode floats as ``fmt`` bit patterns, rounding to nearest even.

    ``fmt`` is 'f16', 'bf16', 'f32', or a packed 'f16x2'/'bf16x2', for which ``values`` has
    shape (..., 2) with lane 0 first.  NaN becomes the canonical NaN of the format.
    """
    lane, packed = _check_fmt(fmt)
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise FormatError(f"to_bits: values for {fmt} must be real numbers") from None
    if packed:
        if x.ndim == 0 or x.shape[-1] != 2:
            raise FormatError(
                f"to_bits: values for {fmt} must have shape (..., 2), lane 0 first; got {x.shape}")
        lanes = to_bits(x, lane.name).astype(np.uint32)
        out = lanes[..., 0] | (lanes[..., 1] << np.uint32(16))
        return out if out.ndim else int(out)
    bits = _round_f64_to(lane, x)
    nan = np.isnan(x)
    if nan.any():
        from .policy import current
        p = current()
        bits = np.where(nan, p.canonical_nan(lane.name), bits)
    bits = np.asarray(bits).astype(lane.dtype)
    return bits if bits.ndim else int(bits)


def from_bits(bits, fmt):
    """Decode ``fmt`` bit patterns to float64 exactly (packed formats give shape (..., 2))."""
    lane, packed = _check_fmt(fmt)
    from .execute import as_bits
    width = 32 if packed else lane.width
    b = as_bits(bits, width, f"from_bits({fmt})")
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
