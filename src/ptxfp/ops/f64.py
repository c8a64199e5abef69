""".f64 add, sub, mul, fma and mad in the four IEEE rounding modes: the one place they live
(rows: isa/f64.py; rules: docs/semantics.md, "f64 arithmetic").

Computed by the host's own IEEE binary64 unit with its rounding mode set for the kernel's loop
(``_jit.fpenv_set``: MXCSR with the mode's rounding-control field, FTZ and DAZ off, exceptions
masked): an x86-64 SSE2/AVX add, subtract, multiply and fused multiply-add are IEEE 754
operations correctly rounded in the current mode, subnormals included, so each result is the
exact result rounded once.  fma/mad use LLVM's ``llvm.fma.f64`` (a fused instruction, or libm's
correctly rounded fma).  A NaN result is ``policy.canonical_nan('f64')`` (the host's would carry
an input's payload).  The tests hold every mode to MPFR (tests/test_ops_f64.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types as nbtypes
from numba.extending import intrinsic
from numpy.typing import NDArray

from .. import policy, rounding
from .._jit import MXCSR_DEFAULT, MXCSR_RC, X86, fpenv_leave, fpenv_set, jit_cached
from ..spelling import Instruction
from .common import Plan, entry

__all__ = ["compute", "core", "plan", "OPS"]

OPS = {"add": 0, "sub": 1, "mul": 2, "fma": 3, "mad": 3}


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
        else:
            r = _fma(x, y, c[i])
        out[i] = r
    fpenv_leave(saved)


_kernel: Any = None


def plan(ins: Instruction) -> Plan:
    global _kernel
    if _kernel is None:
        _kernel = jit_cached(_kernel_py, ("ops.f64",), nogil=True)
    op = OPS[ins.opcode]
    mode = rounding.MODES[ins.rounding or "rn"]
    csr = np.int32(MXCSR_DEFAULT | (MXCSR_RC[mode] << 13))
    if not X86 and mode != rounding.RN:
        raise NotImplementedError("directed .f64 rounding needs an x86-64 host")

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        a = np.ascontiguousarray(ops[0]).view(np.float64)
        b = np.ascontiguousarray(ops[1]).view(np.float64)
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


compute, core = entry("f64", plan, doc="""Run an .f64 add/sub/mul/fma/mad form on bit patterns
(or float64 values):

    >>> hex(compute("add.rz.f64", 0x3FF0000000000000, 0x3CA0000000000001))
    '0x3ff0000000000000'
    >>> hex(compute("add.rp.f64", 0x3FF0000000000000, 0x3CA0000000000001))
    '0x3ff0000000000001'
""")
