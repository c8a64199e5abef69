"""Operand checking, shared by every entry point (``execute``, ``convert``, the interpreter).

Operands are bit patterns (Python ints, integer arrays) or typed float arrays (``np.float16``,
``ml_dtypes.bfloat16``, ``np.float32``, and torch tensors of those dtypes), which are read as
their bits without a copy; when any operand is typed the result is typed too
(``read_operand``, ``typed_result``; the rules are in docs/api.md, "Operands").  Counting,
broadcasting, ``out=`` arrays and aliasing are checked here too.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import types
from ..errors import OperandError
from .formats import DTYPE_SPELLING, FLOAT_DTYPES, PACKED, bits_dtype, is_float_dtype, lane_of
from ..limits import check_bytes

#: what execute and convert take as one operand: bits (a Python int, an integer array), typed
#: floats (a float16/bfloat16/float32 array or NumPy scalar), or anything NumPy reads as an array
#: (a torch tensor included)
Operand = Union[int, np.generic, ArrayLike]


def as_bits(x: object, width: int, what: str) -> NDArray[Any]:
    """``x`` (a Python int or an integer array) as an array of the narrowest unsigned dtype of
    ``width`` bits (uint8 for .e2m1x2, uint16, uint32, uint64 for .f32x2), range-checked."""
    dtype = np.dtype(f"uint{max(8, 1 << (width - 1).bit_length())}")
    if type(x) is np.ndarray and x.dtype == dtype:
        return x
    if isinstance(x, (bool, np.bool_)):
        raise OperandError(f"{what}: bits must be integers, got a boolean")
    if isinstance(x, numbers.Integral):
        v = int(x)
        if not 0 <= v < (1 << width):
            raise OperandError(
                f"{what}: {v:#x} does not fit in {width} bits" if v >= 0 else
                f"{what}: {v} is negative; bit patterns are unsigned {width}-bit integers")
        return np.asarray(v, dtype=dtype)
    if isinstance(x, float):
        raise OperandError(f"{what}: bits must be integers, got the float {x!r} "
                           "(encode floats with ptxfp.to_bits)")
    try:
        arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (OverflowError, ValueError, TypeError) as exc:
        raise OperandError(f"{what}: cannot read bit patterns from {type(x).__name__}: {exc}") \
            from None
    if arr.dtype.kind not in "iu":
        kind = "floats" if is_float_dtype(arr.dtype) else {
            "b": "booleans", "c": "complex numbers"}.get(arr.dtype.kind)
        if kind is None and arr.dtype.kind == "O" and arr.size and all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
            kind = "integers wider than 64 bits"
        raise OperandError(f"{what}: bits must be an integer array, got "
                           + (f"{arr.dtype} floats (encode floats with ptxfp.to_bits, or "
                              f"reinterpret stored bit patterns with .view(np.uint{width}))"
                              if kind == "floats" else f"{kind or arr.dtype}"))
    if arr.dtype == dtype:
        return arr
    # the range scan and the copy below visit every element, even of a broadcast view
    check_bytes(arr.size * dtype.itemsize, what, f"(shape {arr.shape}, {arr.size} elements)")
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= (1 << width):
            bad = lo if lo < 0 else hi
            raise OperandError(f"{what}: value {bad:#x} does not fit in {width} bits"
                               if bad >= 0 else f"{what}: negative value {bad}; bit patterns "
                               f"are unsigned {width}-bit integers")
    return arr.astype(dtype)


def natural_pairs(spelling: str, names: Sequence[str], operands: tuple[Any, ...]
                  ) -> tuple[Any, ...]:
    """convert's element-wise view of the pair-making cvt forms (sources ``a, b``, where the
    manual's order puts ``a`` in the upper lane of ``d``): one typed operand ``x`` of shape
    (..., 2) stands for the pairs in their natural order, element 0 first, and becomes
    ``(a, b) = (x[..., 1], x[..., 0])``, so that the typed result (..., 2) is ``x``'s elements
    converted in place.  Anything else is returned as it is."""
    if len(operands) != 1 or tuple(names) != ("a", "b"):
        return operands
    x = operands[0]
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "__dlpack__"):
        x = _from_torch(x, f"operand of '{spelling}'")
    if not isinstance(x, np.ndarray) or not is_float_dtype(x.dtype):
        return operands
    if x.ndim == 0 or x.shape[-1] != 2:
        raise OperandError(f"operand of '{spelling}': one typed operand holds the pairs, shape "
                           f"(..., 2), element 0 first; got shape {x.shape} (or pass a and b, "
                           "a landing in the upper lane)")
    return (x[..., 1], x[..., 0])


def scalar_types(fmts: Sequence[str]) -> tuple[type | None, ...]:
    """The NumPy scalar type a typed scalar operand of each format in ``fmts`` has
    (np.float16 for .f16, ml_dtypes.bfloat16 for .bf16, np.float32 for .f32; None for the packed
    formats, which take arrays of shape (..., 2)): what the one-scalar fast path of execute
    recognises by ``type(x) is t``, before any of the general checks."""
    return tuple(None if f in PACKED or f not in FLOAT_DTYPES else FLOAT_DTYPES[f].type
                 for f in fmts)


def _dtype_fix(got: str, fmt: str, what: str, itemsize: int) -> str:
    """The message for float values whose dtype does not match the operand's format."""
    lane = lane_of(fmt)
    want = DTYPE_SPELLING[lane.name]
    shape = " of shape (..., 2), lane 0 first," if fmt in PACKED else ""
    uint = f"np.uint{lane.width}"
    msg = (f"{what}: got {got} values; a .{fmt} operand takes {want} values{shape} or "
           f"{'uint32' if fmt in PACKED or lane.width == 32 else 'uint16'} bit patterns. "
           f"To compute on these values, round them first (x.astype({want}), or "
           f"ptxfp.to_bits(x, '{fmt}') for one correct rounding)")
    if itemsize * 8 == lane.width:
        msg += f"; if they are {lane.name} bit patterns stored as {got}, reinterpret them " \
               f"with x.view({uint})"
    return msg


def _from_torch(x: Any, what: str) -> NDArray[Any]:
    """A CPU torch tensor as a NumPy array over the same memory (through DLPack)."""
    torch = sys.modules["torch"]
    if x.device.type != "cpu":
        raise OperandError(f"{what}: the torch tensor is on {x.device}; ptxfp computes on the "
                           "CPU (pass x.cpu())")
    x = x.detach()                        # a view, no copy
    try:
        if x.dtype == torch.bfloat16:     # DLPack has no bfloat16 that NumPy reads: by its bits
            arr: NDArray[Any] = np.from_dlpack(x.view(torch.int16)).view(
                FLOAT_DTYPES["bf16"])
            return arr
        return np.from_dlpack(x)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        raise OperandError(f"{what}: cannot read a torch {x.dtype} tensor without a copy "
                           f"({exc}); pass a float16/bfloat16/float32 or integer tensor") \
            from None


def read_operand(x: object, fmt: str, what: str, width: int = 0) -> tuple[NDArray[Any], bool]:
    """Operand ``x`` of format ``fmt`` as its bit patterns, and whether it came as typed floats.

    Integers (Python ints, integer arrays) are bits, range-checked (``as_bits``).  Float arrays
    and NumPy float scalars must have the format's float dtype (np.float16 for .f16,
    ml_dtypes.bfloat16 for .bf16, np.float32 for .f32; for .f16x2/.bf16x2 the lane dtype with a
    last axis of 2, lane 0 first); they are reinterpreted, not rounded.  CPU torch tensors are
    read through DLPack without a copy.  Python floats and floats of another dtype are refused
    with the fix in the message: ptxfp never rounds an operand silently.  ``width``: the
    operand's bit width, when the caller knows it (else worked out from ``fmt``)."""
    if type(x) is np.ndarray and x.dtype.kind in "iu":          # bits: the common case first
        return as_bits(x, width or types.width(fmt), what), False
    arr: NDArray[Any] | None = None
    if isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, np.generic):
        if is_float_dtype(x.dtype):
            arr = np.asarray(x)
    elif isinstance(x, float):
        if fmt not in FLOAT_DTYPES and fmt not in PACKED:
            raise OperandError(f"{what}: got the Python float {x!r}; this operand takes "
                               "integers (bit patterns, or values of its integer type)")
        lane = lane_of(fmt)
        raise OperandError(
            f"{what}: got the Python float {x!r}; operands are bit patterns (ints) or "
            f"{DTYPE_SPELLING[lane.name]} values, and ptxfp does not round an operand silently: "
            f"pass {DTYPE_SPELLING[lane.name]}({x!r}) (rounds to nearest even) or "
            f"ptxfp.to_bits({x!r}, '{fmt}')")
    elif type(x).__module__.split(".")[0] == "torch" and hasattr(x, "__dlpack__"):
        arr = _from_torch(x, what)
    elif isinstance(x, (list, tuple)):
        try:                              # floats in a list get the typed-operand message
            listed = np.asarray(x)
        except (OverflowError, ValueError, TypeError):
            listed = None
        if listed is not None and is_float_dtype(listed.dtype):
            arr = listed
    if arr is None or not is_float_dtype(arr.dtype):
        return as_bits(x if arr is None else arr, width or types.width(fmt), what), False
    lane = lane_of(fmt)
    if arr.dtype != FLOAT_DTYPES[lane.name]:
        got = str(arr.dtype) if arr.dtype.isnative else f"{arr.dtype.str} (non-native byte order)"
        raise OperandError(_dtype_fix(got, fmt, what, arr.dtype.itemsize))
    bits = arr.view(bits_dtype(lane))
    if fmt not in PACKED:
        return bits, True
    if bits.ndim == 0 or bits.shape[-1] != 2:
        raise OperandError(f"{what}: {DTYPE_SPELLING[lane.name]} values of a .{fmt} operand have "
                           f"shape (..., 2), lane 0 first; got shape {bits.shape}")
    wide = bits.astype(np.uint32)
    return wide[..., 0] | (wide[..., 1] << np.uint32(16)), True


def typed_result(bits: NDArray[Any], fmt: str, scalar: bool) -> Any:
    """Result ``bits`` of format ``fmt`` as floats of its dtype: shape (..., 2), lane 0 first,
    for .f16x2/.bf16x2; a NumPy scalar when ``scalar``."""
    lane = lane_of(fmt)
    if fmt in PACKED:
        if sys.byteorder == "little":
            lanes = np.ascontiguousarray(bits).reshape(-1).view(np.uint16)
        else:
            lanes = np.stack([(bits & np.uint32(0xFFFF)).astype(np.uint16),
                              (bits >> np.uint32(16)).astype(np.uint16)], axis=-1)
        return lanes.reshape(bits.shape + (2,)).view(FLOAT_DTYPES[lane.name])
    out = bits.view(FLOAT_DTYPES[lane.name])
    return out[()] if scalar else out


def deliver(bits: NDArray[Any], shape: Sequence[int], given: Any, scalar: bool,
            typed_as: str | None = None, to_typed: Any = typed_result) -> Any:
    """What an entry point returns: the caller's ``out`` array when it gave one (``given``);
    otherwise the result ``bits`` in the operands' broadcast ``shape``, as floats of the result
    type ``typed_as`` when an operand was typed (``to_typed``), an int when every operand was a
    scalar int, else the bits array."""
    if given is not None:
        return given
    res = bits.reshape(shape)
    if typed_as is not None:
        return to_typed(res, typed_as, scalar)
    return int(res) if scalar else res


def check_typed_out(spelling: str, out: object, fmt: str, shape: Sequence[int]
                    ) -> NDArray[Any]:
    """Raise OperandError unless ``out`` can take a typed result of ``fmt`` and the operands'
    broadcast ``shape`` (plus a last axis of 2 for the packed formats); return its bits as a
    1-D view."""
    lane = lane_of(fmt)
    shape = tuple(shape) + ((2,) if fmt in PACKED else ())
    what = f"out of '{spelling}'"
    if isinstance(out, np.ndarray) and out.dtype != FLOAT_DTYPES[lane.name] \
            and out.dtype.kind in "iu" and not is_float_dtype(out.dtype):
        raise OperandError(f"{what}: the operands are typed floats, so the result is "
                           f"{DTYPE_SPELLING[lane.name]} values: pass an out array of that dtype "
                           f"(or out.view({DTYPE_SPELLING[lane.name]}))")
    flat = check_out(spelling, out, FLOAT_DTYPES[lane.name], shape).view(bits_dtype(lane))
    if fmt in PACKED:
        if sys.byteorder != "little":
            raise OperandError(f"{what}: a packed typed out= needs a little-endian machine; "
                               "leave out= away")
        flat = flat.view(np.uint32)
    return flat


def check_out(spelling: str, out: object, dtype: np.dtype[Any] | type[Any],
              shape: Sequence[int]) -> NDArray[Any]:
    """Raise OperandError unless ``out`` can take a result of ``dtype`` and ``shape``; return
    it as a 1-D view."""
    what = f"out of '{spelling}'"
    if not isinstance(out, np.ndarray):
        raise OperandError(f"{what}: must be a NumPy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise OperandError(f"{what}: dtype must be {np.dtype(dtype)}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise OperandError(f"{what}: shape must be the operands' broadcast shape "
                           f"{tuple(shape)}, got {out.shape}")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise OperandError(f"{what}: must be C-contiguous and writeable")
    return out.reshape(-1)


def unalias(srcs: Sequence[NDArray[Any]], dst: NDArray[Any]) -> list[NDArray[Any]]:
    """The 1-D operand arrays, with any that overlaps ``dst`` other than as ``dst`` itself
    copied first (each lane reads its operands before its result is written, so an operand
    that is the destination is fine; a shifted overlap is not)."""
    d0 = dst.__array_interface__["data"][0]
    out = []
    for x in srcs:
        if np.may_share_memory(x, dst) and not (
                x.__array_interface__["data"][0] == d0 and x.itemsize == dst.itemsize
                and x.size == dst.size):
            x = x.copy()
        out.append(x)
    return out


def check_count(spelling: str, names: Sequence[str], operands: Sequence[object]) -> None:
    """Raise OperandError unless there is one operand per source operand name."""
    if len(operands) != len(names):
        raise OperandError(
            f"'{spelling}' takes {len(names)} source operand{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}), got {len(operands)}")


def broadcast(spelling: str, names: Sequence[str], arrays: Sequence[NDArray[Any]]
              ) -> tuple[list[NDArray[Any]], tuple[int, ...], int, bool]:
    """Broadcast checked operand arrays together.

    Returns (contiguous 1-D arrays, shape, element count, all operands were scalars)."""
    shape = arrays[0].shape
    if all(a.shape == shape for a in arrays):
        scalar = shape == ()
        n = arrays[0].size
    else:
        scalar = False
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            raise OperandError(
                f"operands of '{spelling}' do not broadcast together: shapes "
                + ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))) from None
        n = 1
        for d in shape:
            n *= d
    # the broadcast copies and the result, weighed before they are made
    check_bytes(n * 4 * (len(arrays) + 1), f"operands of '{spelling}'",
                f"(broadcast shape {tuple(shape)}, {n} elements)")
    return [_flat(a, shape, n) for a in arrays], shape, n, scalar


def _flat(a: NDArray[Any], shape: tuple[int, ...], n: int) -> NDArray[Any]:
    """``a`` broadcast to ``shape`` as a contiguous 1-D array."""
    if a.shape == shape:
        return np.ascontiguousarray(a).reshape(-1)
    if a.size == 1:
        return np.full(n, a.reshape(-1)[0], a.dtype)
    return np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
