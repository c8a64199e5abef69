"""``execute(spelling, *operands)``: check the operands (operands.py), broadcast them, run the
arithmetic row's kernel.

The operands' names, order and types come from the row (isa/arith.py); the kernel takes
(a, b, c), and a row without one of them gets its first operand there (unused).
"""

from __future__ import annotations

import threading
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from . import cvt, f32, kernels, minmax
from .. import policy
from ..core import types
from ..errors import SpellingError
from ..core.formats import FORMATS, F32
from ..isa.arith import undocumented_bf16_fma
from ..core.formats import FLOAT_DTYPES, PACKED
from ..core.operands import (Operand, broadcast, check_count, check_out, check_typed_out, deliver,
                             read_operand, scalar_types, unalias)
from ..core.rounding import MODES, TINY_AFTER, TINY_BEFORE, TINY_UNBOUNDED
from ..isa.spelling import Instruction, parse

__all__ = ["execute", "Operand", "kernel_spec", "core"]


#: policy.ftz_tininess -> the kernels' constant (rounding.TINY_*)
_TININESS = {policy.TININESS_AFTER: TINY_AFTER, policy.TININESS_BEFORE: TINY_BEFORE,
             policy.TININESS_AFTER_IEEE: TINY_UNBOUNDED}


def _as_compiled(ins: Instruction, pol: policy.Policy, sp: str) -> bool:
    """Is ``ins`` an undocumented bf16 fma spelling (isa.arith.undocumented_bf16_fma) that the
    policy computes as ptxas 13.0 compiles it?"""
    return (undocumented_bf16_fma(ins.opcode, ins.rounding, ins.types)
            and pol.value("bf16_fma_directed", sp) == policy.BF16_FMA_AS_COMPILED)


def kernel_spec(ins: Instruction, pol: policy.Policy) -> Any:
    """The kernels' Spec of an arithmetic instruction under a policy.  For the scalar
    undocumented bf16 fma spellings computed as compiled, that of the spelling (the form
    itself runs as a composition of other forms: ``_Form.kernel``)."""
    lane = FORMATS[ins.lane_format]
    res = FORMATS[ins.result_format]
    sp = str(ins)                        # the canonical spelling: per-form policy entries
    mode = MODES[ins.rounding or "rn"]
    if ins.lanes == 2 and _as_compiled(ins, pol, sp):
        mode = MODES["rn"]               # fma.{rz,rm,rp}...bf16x2: ptxas emits fma.rn...bf16x2
    return kernels.Spec(
        op=kernels.OPCODES[ins.opcode], lane_fmt=lane.code,
        c_fmt=F32.code if ins.mixed else lane.code, res_fmt=res.code, lanes=ins.lanes,
        mode=mode, ftz=ins.ftz, sat=ins.sat, relu=ins.relu, oob=ins.oob,
        tininess=_TININESS[pol.value("ftz_tininess", sp)],
        sat_mz=pol.value("sat_minus_zero_to_plus", sp),
        relu_mz=pol.value("relu_minus_zero_to_plus", sp),
        oob_sign=pol.value("oob_ignores_sign", sp), oob_c=pol.value("oob_tests_c", sp),
        nan_bits=pol.canonical_nan(ins.result_format, sp))


def _f16_composition(ins: Instruction) -> Any:
    """``fn(a, b, c, out, n)``: the scalar ``fma.<mode>{.oob}{.relu}.bf16`` as ptxas 13.0
    compiles it (docs/ptxas-findings.md; SASS HADD2.F32, FFMA.<mode>, F2FP.F16.F32.PACK_AB):
    ``cvt.rn.f16.f32(fma.<mode>.f32(cvt.f32.f16(a), cvt.f32.f16(b), cvt.f32.f16(c)))``, each
    step the form of that spelling (its kernel, under the policy in force)."""
    widen = cvt.core(parse("cvt.f32.f16"))
    fma = core(parse(f"fma.{ins.rounding}.f32"))
    narrow = cvt.core(parse("cvt.rn.f16.f32"))

    def run(a: NDArray[Any], b: NDArray[Any], c: NDArray[Any], out: NDArray[Any],
            n: int) -> None:
        wide = [widen([x[:n]], n) for x in (a, b, c)]
        out[:n] = narrow([fma(wide, n)], n)
    return run


def _is_nan32(bits: int) -> bool:
    return (bits & 0x7FFFFFFF) > 0x7F800000


def _as_f16_key(ins: Instruction, pol: policy.Policy) -> Any:
    """The ``kernels.AsF16`` of the scalar undocumented bf16 fma ``ins`` computed as compiled,
    whose fused kernel gives the bits of ``_f16_composition`` under ``pol``; None where the
    composition must run: the fused kernel is off (``kernels.as_f16_ok``), or a NaN could stop
    being a NaN inside it (a policy whose canonical binary32 NaN of ``cvt.f32.f16`` or of
    ``fma.<mode>.f32`` is not a NaN: the fused kernel keeps NaNs as NaNs)."""
    if not kernels.as_f16_ok():
        return None
    widen_sp = str(parse("cvt.f32.f16"))
    fma_sp = str(parse(f"fma.{ins.rounding}.f32"))
    widen_nan = pol.value("widen_nan", widen_sp)
    if ((widen_nan == policy.WIDEN_CANONICAL
         and not _is_nan32(pol.canonical_nan("f32", widen_sp)))
            or not _is_nan32(pol.canonical_nan("f32", fma_sp))):
        return None
    narrow_sp = str(parse("cvt.rn.f16.f32"))
    return kernels.AsF16(mode=MODES[ins.rounding or "rn"],
                         nan_bits=pol.canonical_nan("f16", narrow_sp))


def _launch(spec: Any, kernel: Any, a: NDArray[Any], b: NDArray[Any], c: NDArray[Any],
            out: NDArray[Any], n: int) -> None:
    """Run a form's kernel (``spec`` None: a composition, ``_f16_composition``; a
    ``kernels.AsF16``: its fused kernel)."""
    if spec is None:
        kernel(a, b, c, out, n)
    else:
        kernels.run_with(kernel, spec, a, b, c, out, n)


class _Form:
    """What execute needs of one spelling, worked out once: the parsed instruction, operand
    widths, and (per policy object) the kernel spec and compiled kernel."""

    __slots__ = ("ins", "names", "fmts", "widths", "dtypes", "limits", "whats", "out_dtype",
                 "order", "state", "local", "scalars")

    def __init__(self, ins: Instruction) -> None:
        self.ins = ins
        self.names = ins.operand_names
        self.fmts = ins.operand_formats
        self.whats = tuple(f"operand {n} of '{ins.spelling}' (.{f})"
                           for n, f in zip(self.names, ins.operand_formats))
        self.widths = tuple(types.width(f) for f in ins.operand_formats)
        self.dtypes = tuple(np.dtype(f"uint{w}") for w in self.widths)
        self.limits = tuple(1 << w for w in self.widths)
        self.out_dtype = np.dtype(f"uint{ins.result_width}")
        # positions of the kernel's (a, b, c) in the operand list (the first where a row has
        # none: add d, a, b leaves c unused, add.f32.f16 d, a, c leaves b)
        self.order = ins.row.positions("abc")
        self.state: tuple[policy.Policy, Any, Any] | None = None   # (policy, spec, kernel)
        self.local = threading.local()   # per-thread 1-element buffers for scalar calls
        # the typed scalar of each operand (None: none, a packed operand), for typed_scalar
        self.scalars = scalar_types(self.fmts) if ins.dtype not in PACKED else (None,)

    def kernel(self) -> tuple[Any, Any]:
        pol = policy.current()
        st = self.state
        if st is None or st[0] is not pol:
            ins = self.ins
            if ins.lanes == 1 and _as_compiled(ins, pol, str(ins)):
                key = _as_f16_key(ins, pol)
                st = self.state = ((pol, None, _f16_composition(ins)) if key is None
                                   else (pol, key, kernels.as_f16_kernel(key)))
            else:
                spec = kernel_spec(ins, pol)
                kern = f32.kernel_for(spec) if f32.handles(spec) else kernels.kernel_for(spec)
                st = self.state = (pol, spec, kern)
        return st[1], st[2]

    def run(self, ops: list[NDArray[Any]] | tuple[NDArray[Any], ...], n: int
            ) -> NDArray[Any]:
        """The result bits of the checked operands ``ops`` (1-D, C-contiguous, of this
        form's operand dtypes, ``n`` elements each, in PTX order) under the policy in force,
        in a new array."""
        dst = np.empty(n, self.out_dtype)
        if n:
            o = self.order
            spec, kernel = self.kernel()
            _launch(spec, kernel, ops[o[0]], ops[o[1]], ops[o[2]], dst, n)
        return dst

    def buffers(self) -> tuple[list[NDArray[Any]], NDArray[Any]]:
        bufs: tuple[list[NDArray[Any]], NDArray[Any]] | None = getattr(self.local, "bufs", None)
        if bufs is None:
            ops = [np.zeros(1, dt) for dt in self.dtypes]
            bufs = self.local.bufs = (ops, np.zeros(1, self.out_dtype))
        return bufs


    def typed_scalar(self, operands: tuple[Any, ...]) -> Any:
        """The typed result of one typed scalar per operand, each exactly its format's NumPy
        scalar type (np.float16 for .f16 ...), through float views of the 1-element
        buffers (bits copied, never converted); None when the operands are anything else."""
        for x, t in zip(operands, self.scalars):
            if type(x) is not t:
                return None
        views = getattr(self.local, "typed", None)
        if views is None:
            ops, res = self.buffers()
            views = self.local.typed = (
                [o.view(FLOAT_DTYPES[f]) for o, f in zip(ops, self.fmts)],
                res.view(FLOAT_DTYPES[self.ins.dtype]))
        fops, fres = views
        for buf, x in zip(fops, operands):
            buf[0] = x
        ops, res = self.buffers()
        spec, kernel = self.kernel()
        o = self.order
        _launch(spec, kernel, ops[o[0]], ops[o[1]], ops[o[2]], res, 1)
        return fres[0]


_forms: dict[object, Any] = {}
_forms_lock = threading.Lock()


def _form(spelling: str | Instruction) -> _Form | None:
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
    if ins.family == "minmax":
        return None                      # min/max/neg/abs: minmax.compute (see execute)
    if ins.family != "arith":
        entry = {"cvt": "ptxfp.convert", "mma": "ptxfp.mma(form, A, B, C)"}.get(
            ins.family, "ptxfp.compute")
        article = "an" if ins.family[0] in "aeiou" else "a"
        raise SpellingError(f"'{ins.spelling}' is {article} {ins.family} spelling: run it with "
                            f"{entry}", spelling=ins.spelling, token=ins.opcode,
                            rule="wrong-entry-point")
    f = _Form(ins)
    if key is not None:
        with _forms_lock:
            if len(_forms) >= 4096:
                _forms.clear()
            _forms[key] = f if type(key) is str else (spelling, f)
    return f


def core(ins: Instruction) -> Any:
    """``fn(ops, n) -> bits``: the arithmetic form ``ins`` on operands that are checked
    already (1-D, C-contiguous, each of the dtype of its operand's width, ``n`` elements, in
    PTX order), without execute's operand checks; the interpreter calls it once per
    instruction.  None for a form execute does not compute itself (min/max/neg/abs)."""
    form = _form(ins)
    return None if form is None else form.run


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
    if form is None:                     # min/max/neg/abs compute in the one place they live
        return minmax.compute(spelling, *operands, out=out)
    ins, names = form.ins, form.names
    check_count(ins.spelling, names, operands)
    if out is None and type(operands[0]) is form.scalars[0]:     # one typed scalar each
        res = form.typed_scalar(operands)
        if res is not None:
            return res
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
        _launch(spec, kernel, ops[o[0]], ops[o[1]], ops[o[2]], res, 1)
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
        _launch(spec, kernel, srcs[0], srcs[1], srcs[2], dst, n)
    return deliver(dst, shape, out, scalar, ins.dtype if typed else None)


