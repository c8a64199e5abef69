"""The storage formats ptxfp computes in (f16, bf16, f32), as data derived from the type table
(types.py), with their NumPy float dtypes.

Each computed format has a NumPy float dtype of the same width (``float_dtype``: ``np.float16``,
``ml_dtypes.bfloat16``, ``np.float32``), whose arrays ``execute`` and ``convert`` take and give as
reinterpretations of the same bits.  This module imports only ``types`` and ``errors``.
"""

from __future__ import annotations

from typing import Any, Union

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

from . import types
from ..errors import FormatError
from .types import BF16, F16, F32, FloatFormat

#: a storage format (the type table's FloatFormat)
Format = FloatFormat

#: Python-side result of to_bits/from_bits: an int/float for a scalar, else an array
Bits = Union[int, NDArray[np.unsignedinteger[Any]]]

#: the formats the kernels compute in: name -> Format (f16, bf16, f32)
FORMATS: dict[str, Format] = {f.name: f for f in types.FORMATS.values() if f.code >= 0}
#: packed types of the computed half formats: name -> lane format (f16x2, bf16x2)
PACKED: dict[str, Format] = {t.name: t.fmt for t in types.TYPES.values()
                             if t.packed and t.name in types.HALF_TYPES and t.fmt is not None}


def _np_dtype(fmt: Format) -> np.dtype[Any]:
    owner = np if hasattr(np, fmt.dtype_name) else ml_dtypes
    dt: np.dtype[Any] = np.dtype(getattr(owner, fmt.dtype_name))
    return dt


#: each computed format's NumPy float dtype (the same bits, read as floats)
FLOAT_DTYPES: dict[str, np.dtype[Any]] = {n: _np_dtype(f) for n, f in FORMATS.items()}
#: how the messages spell each float dtype
DTYPE_SPELLING = {n: ("np." if hasattr(np, f.dtype_name) else "ml_dtypes.") + f.dtype_name
                  for n, f in FORMATS.items()}


def bits_dtype(fmt: Format) -> np.dtype[Any]:
    """The unsigned integer dtype of ``fmt``'s bit patterns (uint16 or uint32)."""
    return np.dtype(f"uint{max(8, fmt.width)}")


def lane_of(fmt: str) -> Format:
    """The lane Format of ``fmt`` ('f16x2' -> F16, 'f32' -> F32).

        >>> f = lane_of("bf16x2")
        >>> f.name, f.width, f.precision, f.emin, f.emax, hex(f.max_finite)
        ('bf16', 16, 8, -126, 127, '0x7f7f')
    """
    return check_fmt(fmt)[0]


def float_dtype(fmt: str) -> np.dtype[Any]:
    """The NumPy float dtype of ``fmt``'s values (of each lane for 'f16x2'/'bf16x2')."""
    return FLOAT_DTYPES[lane_of(fmt).name]


def is_float_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether ``dtype`` holds floats: NumPy's own, or one of ml_dtypes' (bfloat16, float8...),
    which NumPy files under kind 'V'."""
    return dtype.kind == "f" or (
        dtype.kind == "V" and dtype.fields is None
        and getattr(dtype.type, "__module__", "").startswith("ml_dtypes"))


def get(name: str) -> Format:
    """The Format called ``name`` (``f16``, ``bf16`` or ``f32``)."""
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise FormatError(
            f"unknown format {name!r}: expected one of "
            f"{', '.join(list(FORMATS) + list(PACKED))}") from None


def check_fmt(fmt: str) -> tuple[Format, bool]:
    """(lane Format, packed) of a computed format or packed type name; FormatError otherwise."""
    if fmt in PACKED:
        return PACKED[fmt], True
    return get(fmt), False


__all__ = ["Format", "Bits", "FORMATS", "PACKED", "FLOAT_DTYPES", "DTYPE_SPELLING", "F16", "BF16",
           "F32", "bits_dtype", "lane_of", "float_dtype", "is_float_dtype", "get", "check_fmt"]
