""".f64 add, sub, mul, fma and mad, and .f32/.f64 div, rcp and sqrt, in the four IEEE rounding
modes: the one place they live (rows: isa/f64.py; rules: docs/semantics.md, "f64 arithmetic" and
"div, rcp, sqrt").

Computed by the host's own IEEE binary64 unit with its rounding mode set for the kernel's loop
(``_jit.fpenv_set``: MXCSR with the mode's rounding-control field, FTZ and DAZ off, exceptions
masked): an x86-64 SSE2/AVX add, subtract, multiply and fused multiply-add are IEEE 754
operations correctly rounded in the current mode, subnormals included, so each result is the
exact result rounded once.  fma/mad use LLVM's ``llvm.fma.f64`` (a fused instruction, or libm's
correctly rounded fma).  div, rcp and sqrt are the host's divide and square root (IEEE
operations, correctly rounded in the mode).  The .f32 forms compute the quotient or root of the
(exact) binary64 values of their operands in binary64 to nearest, then round that once into
binary32 in the form's mode by ``rounding.round_pack``: correct in every mode because a binary32
quotient or root that is not representable lies more than binary64's half unit away from every
binary32 number and midpoint (docs/semantics.md, "div, rcp, sqrt").  ``.ftz`` flushes subnormal
inputs to zeros of their sign and a tiny result by ``policy.ftz_tininess``.  A NaN result is ``policy.canonical_nan('f64')`` (the host's would carry
an input's payload).  The tests hold every mode to MPFR (tests/test_ops_f64.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types as nbtypes
from numba.extending import intrinsic
from numpy.typing import NDArray

from .. import policy
from ..core import rounding
from ..core._bitcast import f32_from_bits
from ..core.nvidia import finish
from ..core._jit import MXCSR_DEFAULT, MXCSR_RC, X86, fpenv_leave, fpenv_set, jit_cached
from ..isa.spelling import Instruction
from .common import Plan, entry

__all__ = ["compute", "core", "plan", "OPS"]

OPS = {"add": 0, "sub": 1, "mul": 2, "fma": 3, "mad": 3, "div": 4, "rcp": 5, "sqrt": 6}
#: policy.ftz_tininess -> rounding.TINY_* (as execute.py reads it)
_TININESS = {policy.TININESS_AFTER: rounding.TINY_AFTER,
             policy.TININESS_BEFORE: rounding.TINY_BEFORE,
             policy.TININESS_AFTER_IEEE: rounding.TINY_UNBOUNDED}


@intrinsic
def _fma(typingctx, x, y, z):  # type: ignore[no-untyped-def]
    """``llvm.fma.f64``: x*y+z with one rounding in the current rounding mode."""
    if all(isinstance(v, nbtypes.Float) and v.bitwidth == 64 for v in (x, y, z)):
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            d = ir.DoubleType()
            f = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
            return builder.call(f, list(args))
        return nbtypes.float64(x, y, z), codegen
    return None


def _kernel_py(a, b, c, out, op, csr):  # type: ignore[no-untyped-def]
    saved = fpenv_set(csr)
    for i in range(out.size):
        x = a[i]
        y = b[i]
        if op == 0:
            r = x + y
        elif op == 1:
            r = x - y
        elif op == 2:
            r = x * y
        elif op == 3:
            r = _fma(x, y, c[i])
        elif op == 4:
            r = x / y
        elif op == 5:
            r = 1.0 / x
        else:
            r = np.sqrt(x)
        out[i] = r
    fpenv_leave(saved)


def _kernel32_py(a, b, out, op, mode, ftz, tiny, nan_bits):  # type: ignore[no-untyped-def]
    """div/rcp/sqrt.f32 on bits: binary64 to nearest, then one rounding into binary32."""
    saved = fpenv_set(np.int32(MXCSR_DEFAULT))
    for i in range(out.size):
        x = a[i]
        y = b[i]
        if ftz:
            if (x & 0x7F800000) == 0:
                x = x & 0x80000000
            if (y & 0x7F800000) == 0:
                y = y & 0x80000000
        u = np.float64(f32_from_bits(x))
        v = np.float64(f32_from_bits(y))
        if op == 4:
            w = u / v
        elif op == 5:
            w = 1.0 / u
        else:
            w = np.sqrt(u)
        r, sign, is_nan = rounding.round_pack(w, 24, -126, 127, mode,
                                              tiny if ftz else rounding.TINY_AFTER)
        out[i] = np.uint32(finish(r, sign, is_nan, 24, 32, 0x3F800000,
                                  ftz and tiny == rounding.TINY_AFTER, False, False, False,
                                  False, nan_bits))
    fpenv_leave(saved)


_kernel: Any = None
_kernel32: Any = None


def _plan32(ins: Instruction) -> Plan:
    global _kernel32
    if _kernel32 is None:
        _kernel32 = jit_cached(_kernel32_py, ("ops.f64.f32",), nogil=True, error_model="numpy")
    op = OPS[ins.opcode]
    mode = rounding.MODES[ins.rounding or "rn"]
    sp = str(ins)

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        pol = policy.current()
        tiny = _TININESS[pol.value("ftz_tininess", sp)]
        a = np.ascontiguousarray(ops[0], np.uint32)
        b = np.ascontiguousarray(ops[1], np.uint32) if len(ops) > 1 else a
        out = np.empty(n, np.uint32)
        if n:
            _kernel32(a, b, out, op, mode, ins.ftz, tiny,
                      np.uint32(pol.canonical_nan("f32", sp)))
        return out
    return run


def plan(ins: Instruction) -> Plan:
    global _kernel
    if ins.atype == "f32":
        return _plan32(ins)
    if _kernel is None:
        _kernel = jit_cached(_kernel_py, ("ops.f64",), nogil=True, error_model="numpy")
    op = OPS[ins.opcode]
    mode = rounding.MODES[ins.rounding or "rn"]
    csr = np.int32(MXCSR_DEFAULT | (MXCSR_RC[mode] << 13))
    if not X86 and mode != rounding.RN:
        raise NotImplementedError("directed .f64 rounding needs an x86-64 host")

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        a = np.ascontiguousarray(ops[0]).view(np.float64)
        b = np.ascontiguousarray(ops[1]).view(np.float64) if len(ops) > 1 else a
        c = np.ascontiguousarray(ops[2]).view(np.float64) if len(ops) > 2 else a
        out = np.empty(n, np.float64)
        if n:
            _kernel(a, b, c, out, op, csr)
        bits = out.view(np.uint64)
        nan = np.isnan(out)
        if nan.any():
            bits = np.where(nan, np.uint64(policy.current().canonical_nan("f64")), bits)
        return bits
    return run


compute, core = entry("f64", plan, doc="""Run an .f64 add/sub/mul/fma/mad form, or a .f32/.f64
div/rcp/sqrt form, on bit patterns (or float64 values):

    >>> hex(compute("add.rz.f64", 0x3FF0000000000000, 0x3CA0000000000001))
    '0x3ff0000000000000'
    >>> hex(compute("add.rp.f64", 0x3FF0000000000000, 0x3CA0000000000001))
    '0x3ff0000000000001'
    >>> hex(compute("div.rn.f32", 0x3F800000, 0x40400000)), hex(compute("div.rz.f32", 0x3F800000, 0x40400000))
    ('0x3eaaaaab', '0x3eaaaaaa')
    >>> hex(compute("sqrt.rm.f64", 0x4000000000000000)), hex(compute("rcp.rn.ftz.f32", 0x7F000000))
    ('0x3ff6a09e667f3bcc', '0x0')
""")
