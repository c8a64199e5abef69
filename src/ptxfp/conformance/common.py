"""The lowest layer of the conformance kit: the mismatch class names, exact bits <-> float64 for
the 16- and 32-bit lane formats, a NumPy rounding emulation, and the kit's error.  Every other
module of the kit (classify, small, source, sweeps) imports from here, and this module imports
nothing of the kit, so the kit has no import cycle."""

from __future__ import annotations

import numpy as np

from .. import vectors
from ..errors import PtxfpError

CLASSES = (
    "NaN not canonical",
    "NaN where a number",
    "number where NaN",
    "-0 where +0",
    "+0 where -0",
    "result double-rounded",
    "fma not fused",
    "subnormal flushed",
    "overflow handling",
    "off by one ulp",
    # the small-float and .rs cvt forms (conformance/small.py)
    "NaN/inf where saturated",
    "saturated where inf/NaN",
    "lanes swapped",
    "other",
)

#: (precision, emin, emax) per lane format
_PARAMS = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127)}


def to_float(bits, fmt: str) -> np.ndarray:
    """Lane bits (f16, bf16, f32) to float64, exactly."""
    return vectors.to_float(bits, vectors.FORMATS[fmt])


def round_float(x, fmt: str, mode: str, unbounded: bool = False) -> np.ndarray:
    """Round float64 values into a lane format in mode rn/rz/rm/rp, with subnormals and IEEE
    overflow (``unbounded``: to the format's precision only, float64 out).  NaN stays a NaN
    (the quiet NaN of the format); returns bits as uint32."""
    p, emin, emax = _PARAMS[fmt]
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    live = np.isfinite(x) & (ax > 0)
    _, e = np.frexp(np.where(live, ax, 1.0))
    q = e - p if unbounded else np.maximum(e - p, emin - p + 1)
    s = np.ldexp(np.where(live, ax, 0.0), -q)
    neg = np.signbit(x)
    if mode == "rn":
        r = np.rint(s)
    elif mode == "rz":
        r = np.floor(s)
    elif mode == "rp":
        r = np.where(neg, np.floor(s), np.ceil(s))
    else:
        r = np.where(neg, np.ceil(s), np.floor(s))
    v = np.where(live, np.ldexp(r, q), ax)
    if unbounded:
        return np.copysign(v, x)
    maxf = (2.0 - 2.0 ** (1 - p)) * 2.0 ** emax
    to_inf = {"rn": np.ones_like(neg), "rz": np.zeros_like(neg), "rp": ~neg, "rm": neg}[mode]
    over = live & (v > maxf)
    v = np.where(over, np.where(to_inf, np.inf, maxf), v)
    v = np.copysign(v, x)
    with np.errstate(all="ignore"):
        if fmt == "f16":
            return v.astype(np.float16).view(np.uint16).astype(np.uint32)
        b = v.astype(np.float32).view(np.uint32)
        return (b >> np.uint32(16)) if fmt == "bf16" else b


class SweepError(PtxfpError):
    """A sweep that cannot be run as asked (names the option and the rule)."""
