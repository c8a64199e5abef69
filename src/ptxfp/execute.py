"""``execute(spelling, *operands)``: check the operands, broadcast them, run the form's kernel."""

import numbers

import numpy as np

from . import kernels, policy
from .errors import OperandError
from .formats import FORMATS, F32
from .rounding import MODES
from .spelling import Instruction, parse


def as_bits(x, width, what):
    """``x`` (a Python int or an integer array) as a uint16/uint32 array, range-checked."""
    dtype = np.uint16 if width == 16 else np.uint32
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
        arr = np.asarray(x)
    except (OverflowError, ValueError, TypeError) as exc:
        raise OperandError(f"{what}: cannot read bit patterns from {type(x).__name__}: {exc}") \
            from None
    if arr.dtype.kind not in "iu":
        kind = {"f": "floats", "b": "booleans", "c": "complex numbers"}.get(arr.dtype.kind)
        if kind is None and arr.dtype.kind == "O" and arr.size and all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
            kind = "integers wider than 64 bits"
        raise OperandError(f"{what}: bits must be an integer array, got {kind or arr.dtype}"
                           + (" (encode floats with ptxfp.to_bits)" if kind == "floats" else ""))
    if arr.dtype == dtype:
        return arr
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= (1 << width):
            bad = lo if lo < 0 else hi
            raise OperandError(f"{what}: value {bad:#x} does not fit in {width} bits"
                               if bad >= 0 else f"{what}: negative value {bad}; bit patterns "
                               f"are unsigned {width}-bit integers")
    return arr.astype(dtype)


def _spec(ins, pol):
    lane = FORMATS[ins.lane_format]
    res = FORMATS[ins.result_format]
    return kernels.Spec(
        op=kernels.OPCODES[ins.opcode], lane_fmt=lane.code,
        c_fmt=F32.code if ins.mixed else lane.code, res_fmt=res.code, lanes=ins.lanes,
        mode=MODES[ins.rounding], ftz=ins.ftz, sat=ins.sat, relu=ins.relu, oob=ins.oob,
        tiny_before=pol.ftz_tininess == policy.TININESS_BEFORE,
        sat_mz=pol.sat_minus_zero_to_plus, relu_mz=pol.relu_minus_zero_to_plus,
        oob_sign=pol.oob_ignores_sign, oob_c=pol.oob_tests_c,
        nan_bits=pol.canonical_nan32 if res is F32 else pol.canonical_nan16)


def _width(fmt):
    return 16 if fmt in ("f16", "bf16") else 32


def execute(spelling, *operands):
    """Run one instruction form on bit patterns.

    ``spelling`` is an instruction spelling (``"fma.rn.relu.bf16x2"``) or a parsed Instruction.
    ``operands`` are the source operands in PTX order (destination left out): Python ints or
    integer NumPy arrays, broadcast together; 16 bits wide for .f16/.bf16, 32 for
    .f16x2/.bf16x2 and for the .f32 operand c of the mixed forms.  Returns the destination bits
    as a uint16/uint32 array of the broadcast shape, or a Python int when every operand is a
    scalar.
    """
    ins = spelling if isinstance(spelling, Instruction) else parse(spelling)
    names, fmts = ins.operand_names, ins.operand_formats
    if len(operands) != len(names):
        raise OperandError(
            f"'{ins.spelling}' takes {len(names)} source operands ({', '.join(names)}), "
            f"got {len(operands)}")
    arrays = [as_bits(x, _width(f), f"operand {n} of '{ins.spelling}' (.{f})")
              for x, n, f in zip(operands, names, fmts)]
    scalar = all(a.ndim == 0 for a in arrays)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise OperandError(
            f"operands of '{ins.spelling}' do not broadcast together: shapes "
            + ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))) from None
    n = int(np.prod(shape))
    flat = [np.ascontiguousarray(a).reshape(-1) if a.shape == shape
            else np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in arrays]
    if ins.opcode == "fma":
        a, b, c = flat
    elif ins.mixed:                      # add/sub.f32.atype d, a, c
        a, c = flat
        b = a
    else:
        a, b = flat
        c = a
    out = np.empty(n, np.uint32 if _width(ins.dtype) == 32 else np.uint16)
    if n:
        kernels.run(_spec(ins, policy.current()), a, b, c, out)
    out = out.reshape(shape)
    return int(out) if scalar else out
