"""``execute(spelling, *operands)``: check the operands, broadcast them, run the form's kernel."""

import numbers
import threading

import numpy as np

from . import kernels, policy
from .errors import OperandError
from .formats import FORMATS, F32
from .rounding import MODES, TINY_AFTER, TINY_BEFORE, TINY_UNBOUNDED
from .spelling import Instruction, parse


def as_bits(x, width, what):
    """``x`` (a Python int or an integer array) as a uint16/uint32 array, range-checked."""
    dtype = np.uint16 if width == 16 else np.uint32
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


#: policy.ftz_tininess -> the kernels' constant (rounding.TINY_*)
_TININESS = {policy.TININESS_AFTER: TINY_AFTER, policy.TININESS_BEFORE: TINY_BEFORE,
             policy.TININESS_AFTER_IEEE: TINY_UNBOUNDED}


def _spec(ins, pol):
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


def _width(fmt):
    return 16 if fmt in ("f16", "bf16") else 32


class _Form:
    """What execute needs of one spelling, worked out once: the parsed instruction, operand
    widths, and (per policy object) the kernel spec and compiled kernel."""

    __slots__ = ("ins", "names", "widths", "dtypes", "limits", "whats", "out_dtype", "order",
                 "state", "local")

    def __init__(self, ins):
        self.ins = ins
        self.names = ins.operand_names
        self.whats = tuple(f"operand {n} of '{ins.spelling}' (.{f})"
                           for n, f in zip(self.names, ins.operand_formats))
        self.widths = tuple(_width(f) for f in ins.operand_formats)
        self.dtypes = tuple(np.dtype(np.uint16 if w == 16 else np.uint32) for w in self.widths)
        self.limits = tuple(1 << w for w in self.widths)
        self.out_dtype = np.dtype(np.uint32 if _width(ins.dtype) == 32 else np.uint16)
        # positions of (a, b, c) in the operand list
        if ins.opcode == "fma":
            self.order = (0, 1, 2)
        elif ins.mixed:                  # add/sub.f32.atype d, a, c
            self.order = (0, 0, 1)
        else:
            self.order = (0, 1, 0)
        self.state = None                # (policy, spec, kernel)
        self.local = threading.local()   # per-thread 1-element buffers for scalar calls

    def kernel(self):
        pol = policy.current()
        st = self.state
        if st is None or st[0] is not pol:
            spec = _spec(self.ins, pol)
            st = self.state = (pol, spec, kernels.kernel_for(spec))
        return st[1], st[2]

    def buffers(self):
        bufs = getattr(self.local, "bufs", None)
        if bufs is None:
            ops = [np.zeros(1, dt) for dt in self.dtypes]
            bufs = self.local.bufs = (ops, np.zeros(1, self.out_dtype))
        return bufs


_forms = {}
_forms_lock = threading.Lock()


def _form(spelling):
    if type(spelling) is str:
        f = _forms.get(spelling)
        if f is not None:
            return f
        key = spelling
    elif isinstance(spelling, Instruction):
        # Keyed by identity: hashing a frozen dataclass costs more than the whole scalar call.
        hit = _forms.get(id(spelling))
        if hit is not None and hit[0] is spelling:
            return hit[1]
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


def execute(spelling, *operands, out=None):
    """Run one instruction form on bit patterns.

    ``spelling`` is an instruction spelling (``"fma.rn.relu.bf16x2"``) or a parsed Instruction.
    ``operands`` are the source operands in PTX order (destination left out): Python ints or
    integer NumPy arrays, broadcast together; 16 bits wide for .f16/.bf16, 32 for
    .f16x2/.bf16x2 and for the .f32 operand c of the mixed forms.  Returns the destination bits
    as a uint16/uint32 array of the broadcast shape, or a Python int when every operand is a
    scalar.

    ``out``, as in NumPy's ufuncs, is an array to write the result into instead of a new one
    (C-contiguous, writeable, of the result's dtype and the broadcast shape); it is returned.
    It may be one of the operands; sweeps that call a form many times save the allocation.
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
    arrays = [as_bits(x, w, what) for x, w, what in zip(operands, form.widths, form.whats)]
    flat, shape, n, scalar = broadcast(ins.spelling, names, arrays)
    o = form.order
    srcs = [flat[o[0]], flat[o[1]], flat[o[2]]]
    if out is None:
        dst = np.empty(n, form.out_dtype)
    else:
        dst = check_out(ins.spelling, out, form.out_dtype, shape)
        srcs = unalias(srcs, dst)
    if n:
        spec, kernel = form.kernel()
        kernels.run_with(kernel, spec, srcs[0], srcs[1], srcs[2], dst, n)
    if out is not None:
        return out
    dst = dst.reshape(shape)
    return int(dst) if scalar else dst


def check_out(spelling, out, dtype, shape):
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


def unalias(srcs, dst):
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


def check_count(spelling, names, operands):
    """Raise OperandError unless there is one operand per source operand name."""
    if len(operands) != len(names):
        raise OperandError(
            f"'{spelling}' takes {len(names)} source operand{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}), got {len(operands)}")


def broadcast(spelling, names, arrays):
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
    return [_flat(a, shape, n) for a in arrays], shape, n, scalar


def _flat(a, shape, n):
    """``a`` broadcast to ``shape`` as a contiguous 1-D array."""
    if a.shape == shape:
        return np.ascontiguousarray(a).reshape(-1)
    if a.size == 1:
        return np.full(n, a.reshape(-1)[0], a.dtype)
    return np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
