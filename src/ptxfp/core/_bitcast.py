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


@intrinsic
def f32_from_bits(typingctx, x):
    """The low 32 bits of an integer as an IEEE binary32."""
    if isinstance(x, types.Integer):
        def codegen(context, builder, signature, args):
            v = args[0]
            if v.type.width > 32:
                v = builder.trunc(v, ir.IntType(32))
            elif v.type.width < 32:
                v = builder.zext(v, ir.IntType(32))
            return builder.bitcast(v, ir.FloatType())
        return types.float32(x), codegen
    return None


@intrinsic
def bits_from_f32(typingctx, x):
    """The bits of a binary32, zero-extended to int64."""
    if isinstance(x, types.Float) and x.bitwidth == 32:
        def codegen(context, builder, signature, args):
            return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))
        return types.int64(x), codegen
    return None
