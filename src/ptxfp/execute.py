"""``execute(spelling, *operands)``: check the operands, broadcast them, run the form's kernel.

Operands are bit patterns (Python ints, integer arrays) or typed float arrays (``np.float16``,
``ml_dtypes.bfloat16``, ``np.float32``, and torch tensors of those dtypes), which are read as
their bits without a copy; when any operand is typed the result is typed too
(``read_operand``, ``typed_result``; the rules are in docs/api.md, "Operands").
"""

from __future__ import annotations

import numbers
import sys
import threading
from typing import Any, Sequence, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import kernels, policy
from .errors import OperandError
from .formats import (DTYPE_SPELLING, FORMATS, F32, PACKED, is_float_dtype, lane_of)
from .limits import check_bytes
from .rounding import MODES, TINY_AFTER, TINY_BEFORE, TINY_UNBOUNDED
from .spelling import Instruction, parse

#: what execute and convert take as one operand: bits (a Python int, an integer array), typed
#: floats (a float16/bfloat16/float32 array or NumPy scalar), or anything NumPy reads as an array
#: (a torch tensor included)
Operand = Union[int, np.generic, ArrayLike]


def as_bits(x: object, width: int, what: str) -> NDArray[Any]:
    """``x`` (a Python int or an integer array) as a uint16/uint32 array, range-checked."""
    dtype = np.dtype(np.uint16 if width == 16 else np.uint32)
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
                FORMATS["bf16"].float_dtype)
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
        return as_bits(x, width or _width(fmt), what), False
    arr: NDArray[Any] | None = None
    if isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, np.generic):
        if is_float_dtype(x.dtype):
            arr = np.asarray(x)
    elif isinstance(x, float):
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
        return as_bits(x if arr is None else arr, width or _width(fmt), what), False
    lane = lane_of(fmt)
    if arr.dtype != lane.float_dtype:
        got = str(arr.dtype) if arr.dtype.isnative else f"{arr.dtype.str} (non-native byte order)"
        raise OperandError(_dtype_fix(got, fmt, what, arr.dtype.itemsize))
    bits = arr.view(lane.dtype)
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
        return lanes.reshape(bits.shape + (2,)).view(lane.float_dtype)
    out = bits.view(lane.float_dtype)
    return out[()] if scalar else out


def check_typed_out(spelling: str, out: object, fmt: str, shape: Sequence[int]
                    ) -> NDArray[Any]:
    """Raise OperandError unless ``out`` can take a typed result of ``fmt`` and the operands'
    broadcast ``shape`` (plus a last axis of 2 for the packed formats); return its bits as a
    1-D view."""
    lane = lane_of(fmt)
    shape = tuple(shape) + ((2,) if fmt in PACKED else ())
    what = f"out of '{spelling}'"
    if isinstance(out, np.ndarray) and out.dtype != lane.float_dtype \
            and out.dtype.kind in "iu" and not is_float_dtype(out.dtype):
        raise OperandError(f"{what}: the operands are typed floats, so the result is "
                           f"{DTYPE_SPELLING[lane.name]} values: pass an out array of that dtype "
                           f"(or out.view({DTYPE_SPELLING[lane.name]}))")
    flat = check_out(spelling, out, lane.float_dtype, shape).view(lane.dtype)
    if fmt in PACKED:
        if sys.byteorder != "little":
            raise OperandError(f"{what}: a packed typed out= needs a little-endian machine; "
                               "leave out= away")
        flat = flat.view(np.uint32)
    return flat


#: policy.ftz_tininess -> the kernels' constant (rounding.TINY_*)
_TININESS = {policy.TININESS_AFTER: TINY_AFTER, policy.TININESS_BEFORE: TINY_BEFORE,
             policy.TININESS_AFTER_IEEE: TINY_UNBOUNDED}


def _spec(ins: Instruction, pol: policy.Policy) -> Any:
    lane = FORMATS[ins.lane_format]
    res = FORMATS[ins.result_format]
    return kernels.Spec(
        op=kernels.OPCODES[ins.opcode], lane_fmt=lane.code,
        c_fmt=F32.code if ins.mixed else lane.code, res_fmt=res.code, lanes=ins.lanes,
        mode=MODES[ins.rounding], ftz=ins.ftz, sat=ins.sat, relu=ins.relu, oob=ins.oob,
        tininess=_TININESS[pol.ftz_tininess],
        sat_mz=pol.sat_minus_zero_to_plus, relu_mz=pol.relu_minus_zero_to_plus,
        oob_sign=pol.oob_ignores_sign, oob_c=pol.oob_tests_c,
        nan_bits=pol.canonical_nan(ins.result_format))


def _width(fmt: str) -> int:
    return 16 if fmt in ("f16", "bf16") else 32


class _Form:
    """What execute needs of one spelling, worked out once: the parsed instruction, operand
    widths, and (per policy object) the kernel spec and compiled kernel."""

    __slots__ = ("ins", "names", "fmts", "widths", "dtypes", "limits", "whats", "out_dtype",
                 "order", "state", "local")

    def __init__(self, ins: Instruction) -> None:
        self.ins = ins
        self.names = ins.operand_names
        self.fmts = ins.operand_formats
        self.whats = tuple(f"operand {n} of '{ins.spelling}' (.{f})"
                           for n, f in zip(self.names, ins.operand_formats))
        self.widths = tuple(_width(f) for f in ins.operand_formats)
        self.dtypes = tuple(np.dtype(np.uint16) if w == 16 else np.dtype(np.uint32)
                            for w in self.widths)
        self.limits = tuple(1 << w for w in self.widths)
        self.out_dtype = np.dtype(np.uint32) if _width(ins.dtype) == 32 else np.dtype(np.uint16)
        # positions of (a, b, c) in the operand list
        if ins.opcode == "fma":
            self.order = (0, 1, 2)
        elif ins.mixed:                  # add/sub.f32.atype d, a, c
            self.order = (0, 0, 1)
        else:
            self.order = (0, 1, 0)
        self.state: tuple[policy.Policy, Any, Any] | None = None   # (policy, spec, kernel)
        self.local = threading.local()   # per-thread 1-element buffers for scalar calls

    def kernel(self) -> tuple[Any, Any]:
        pol = policy.current()
        st = self.state
        if st is None or st[0] is not pol:
            spec = _spec(self.ins, pol)
            st = self.state = (pol, spec, kernels.kernel_for(spec))
        return st[1], st[2]

    def buffers(self) -> tuple[list[NDArray[Any]], NDArray[Any]]:
        bufs: tuple[list[NDArray[Any]], NDArray[Any]] | None = getattr(self.local, "bufs", None)
        if bufs is None:
            ops = [np.zeros(1, dt) for dt in self.dtypes]
            bufs = self.local.bufs = (ops, np.zeros(1, self.out_dtype))
        return bufs


_forms: dict[object, Any] = {}
_forms_lock = threading.Lock()


def _form(spelling: str | Instruction) -> _Form:
    if type(spelling) is str:
        hit: _Form | None = _forms.get(spelling)
        if hit is not None:
            return hit
        key: object = spelling
    elif isinstance(spelling, Instruction):
        # Keyed by identity: hashing a frozen dataclass costs more than the whole scalar call.
        pair = _forms.get(id(spelling))
        if pair is not None and pair[0] is spelling:
            form: _Form = pair[1]
            return form
        key = id(spelling)
    else:
        key = None
    ins = spelling if isinstance(spelling, Instruction) else parse(spelling)
    f = _Form(ins)
    if key is not None:
        with _forms_lock:
            if len(_forms) >= 4096:
                _forms.clear()
            _forms[key] = f if type(key) is str else (spelling, f)
    return f


@overload
def execute(spelling: str | Instruction, *operands: int, out: None = None) -> int: ...


@overload
def execute(spelling: str | Instruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any: ...


def execute(spelling: str | Instruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any:
    """Run one instruction form on bit patterns or on typed float arrays.

    ``spelling`` is an instruction spelling (``"fma.rn.relu.bf16x2"``) or a parsed Instruction.
    ``operands`` are the source operands in PTX order (destination left out), broadcast
    together, each one of:

    - bits: Python ints or integer NumPy arrays, 16 bits wide for .f16/.bf16, 32 for
      .f16x2/.bf16x2 (lane 0 in bits [15:0]) and for .f32 (the operand c of the mixed forms);
    - typed floats: arrays (or NumPy scalars) of the operand's float dtype, ``np.float16`` for
      .f16, ``ml_dtypes.bfloat16`` for .bf16, ``np.float32`` for .f32, and for .f16x2/.bf16x2
      the lane dtype with a last axis of 2 (lane 0 first); CPU torch tensors of those dtypes.
      They are reinterpreted as bits, never rounded.  Python floats and floats of any other
      dtype are refused (OperandError says how to convert them).

    Returns the destination bits as a uint16/uint32 array of the broadcast shape, or a Python
    int when every operand is a scalar.  When any operand is typed, the destination comes back
    typed instead: an array of the result format's float dtype (shape (..., 2) for the packed
    formats), or a NumPy float scalar when every operand is a scalar.

    ``out``, as in NumPy's ufuncs, is an array to write the result into instead of a new one
    (C-contiguous, writeable, of the result's dtype, bits or typed as above, and shape); it is
    returned.  It may be one of the operands; sweeps that call a form many times save the
    allocation.

        >>> import numpy as np, ml_dtypes
        >>> x = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
        >>> execute("fma.rn.bf16", x, x, x)
        array([2, 6, 12], dtype=bfloat16)
    """
    form = _form(spelling)
    ins, names = form.ins, form.names
    check_count(ins.spelling, names, operands)
    # Fast path: Python ints in range (anything else, including errors, takes the full path).
    for x, lim in zip(operands, form.limits):
        if type(x) is not int or not 0 <= x < lim or out is not None:
            break
    else:
        spec, kernel = form.kernel()
        ops, res = form.buffers()
        for buf, x in zip(ops, operands):
            buf[0] = x
        o = form.order
        kernels.run_with(kernel, spec, ops[o[0]], ops[o[1]], ops[o[2]], res, 1)
        return int(res[0])
    arrays = []
    typed = False
    for x, f, what, w in zip(operands, form.fmts, form.whats, form.widths):
        bits, t = read_operand(x, f, what, w)
        arrays.append(bits)
        typed = typed or t
    flat, shape, n, scalar = broadcast(ins.spelling, names, arrays)
    o = form.order
    srcs = [flat[o[0]], flat[o[1]], flat[o[2]]]
    if out is None:
        dst = np.empty(n, form.out_dtype)
    else:
        dst = (check_typed_out(ins.spelling, out, ins.dtype, shape) if typed
               else check_out(ins.spelling, out, form.out_dtype, shape))
        srcs = unalias(srcs, dst)
    if n:
        spec, kernel = form.kernel()
        kernels.run_with(kernel, spec, srcs[0], srcs[1], srcs[2], dst, n)
    if out is not None:
        return out
    res = dst.reshape(shape)
    if typed:
        return typed_result(res, ins.dtype, scalar)
    return int(res) if scalar else res


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
