"""Bit casts between int64 and float64 inside Numba kernels (one LLVM bitcast each)."""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def f64_from_bits(typingctx, x):
    if isinstance(x, types.Integer) and x.bitwidth == 64:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())
        return types.float64(x), codegen
    return None


@intrinsic
def bits_from_f64(typingctx, x):
    if isinstance(x, types.Float) and x.bitwidth == 64:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(64))
        return types.int64(x), codegen
    return None
