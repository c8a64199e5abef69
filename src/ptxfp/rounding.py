"""The one rounding core.

Every operation hands this routine a float64 that is either its exact result or a round-to-odd
proxy of it (a sticky bit in the last place, see arith.py).  The routine rounds that value once
into a target format (precision P, smallest normal exponent EMIN, largest exponent EMAX) under a
rounding mode, with gradual underflow and IEEE overflow.  Because the proxy carries at least two
more bits than any target (53 against 24 at most), rounding it gives the same bits as rounding
the exact value (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
algorithms using rounding to odd", IEEE TC 2008).

Written as straight-line code (a power-of-two scaling, one rounding to an integral value in the
mode, selects) so that Numba/LLVM can vectorize the loops that call it.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ._bitcast import bits_from_f32, bits_from_f64, f64_from_bits

RN, RZ, RM, RP = 0, 1, 2, 3
MODES = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP}

_ABS = 0x7FFFFFFFFFFFFFFF
_INF64 = 0x7FF0000000000000


def _integral(name):
    """An LLVM rounding-to-integral intrinsic on float64 (vrndscalepd/roundpd on x86; exact,
    independent of the FP environment's rounding mode)."""
    @intrinsic
    def fn(typingctx, x):
        if isinstance(x, types.Float) and x.bitwidth == 64:
            def codegen(context, builder, signature, args):
                f = builder.module.declare_intrinsic(name, [ir.DoubleType()])
                return builder.call(f, [args[0]])
            return types.float64(x), codegen
        return None
    return fn


_roundeven = _integral("llvm.roundeven")
_trunc = _integral("llvm.trunc")
_floor = _integral("llvm.floor")
_ceil = _integral("llvm.ceil")


@njit
def round_pack(x, P, EMIN, EMAX, mode, flush_tiny):
    """Round float64 ``x`` into a format with precision ``P``.

    Returns ``(magnitude_bits, sign, is_nan)``; the caller puts the sign back and chooses the NaN.
    ``flush_tiny`` flushes an ``x`` below the smallest normal to zero before rounding (the
    before-rounding reading of .ftz); the after-rounding reading lives in nvidia.py.
    """
    b = bits_from_f64(x)
    sign = (b >> 63) & 1
    a = b & _ABS
    e = (a >> 52) - 1023
    # The target's last place is 2**(ee - P + 1), with ee = max(e, EMIN) (subnormals below).
    # Scaling x by a power of two so that place becomes 1 is exact (x is never an f64
    # subnormal here, nor is the scaled value), so rounding the scaled value to an integral
    # value in the mode rounds x in the target format, and q is the significand (for a
    # subnormal result, the fraction) of the result, up to 2**P.
    ee = max(e, EMIN)
    y = x * f64_from_bits((P - 1 - ee + 1023) << 52)
    if mode == RN:
        y = _roundeven(y)
    elif mode == RZ:
        y = _trunc(y)
    elif mode == RM:
        y = _floor(y)
    else:
        y = _ceil(y)
    # The exponent field is (ee - EMIN) plus the carry of the implicit bit in q, so a rounding
    # carry walks into the exponent (and from subnormal into normal) by itself.  Formed in
    # float64, where it is exact (below 2**40), so that overflow and the specials are selected
    # before one conversion to an integer.
    r = np.float64((ee - EMIN) << (P - 1)) + abs(y)
    inf_bits = np.int64(EMAX - EMIN + 2) << (P - 1)
    if mode == RN:
        over = inf_bits
    elif mode == RZ:
        over = inf_bits - 1
    elif mode == RM:
        over = inf_bits - 1 + sign
    else:
        over = inf_bits - sign
    r = np.float64(over) if r >= inf_bits else r
    if flush_tiny:
        r = 0.0 if e < EMIN else r
    is_nan = a > _INF64
    r = np.float64(inf_bits) if a == _INF64 else r
    r = 0.0 if is_nan else r
    return np.int64(r), sign, is_nan


# --- the same rounding from a binary32 proxy (the fast lane, kernels.lane32) ---------------


@intrinsic
def _f16_bits_from_f32(typingctx, x):
    """binary32 -> binary16 bits with the hardware conversion (F16C vcvtps2ph; rounds to
    nearest-even in the default FP environment, with IEEE subnormals and overflow)."""
    if isinstance(x, types.Float) and x.bitwidth == 32:
        def codegen(context, builder, signature, args):
            h = builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
            return builder.zext(h, ir.IntType(64))
        return types.int64(x), codegen
    return None


@intrinsic
def _bf16_bits_from_f32(typingctx, x, mode):
    """binary32 -> bf16 bits (sign included) rounded in ``mode``, with 32-bit integer
    operations: nearest-even adds 0x7FFF plus the kept last bit, toward zero drops the low
    half, toward an infinity adds 0xFFFF when the sign points that way; a carry walks into the
    exponent, and past the largest finite into infinity.  (LLVM IR because Numba would widen
    the arithmetic to 64 bits.)  NaNs give unspecified bits: the caller tests for them."""
    if not (isinstance(x, types.Float) and x.bitwidth == 32 and isinstance(mode, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        v, m = args
        m = builder.trunc(m, i32) if m.type.width > 32 else m
        b = builder.bitcast(v, i32)

        def c(k):
            return ir.Constant(i32, k)
        neg = builder.icmp_signed("<", b, c(0))
        rn = builder.add(b, builder.add(c(0x7FFF), builder.and_(builder.lshr(b, c(16)), c(1))))
        down = builder.add(b, builder.select(neg, c(0xFFFF), c(0)))     # toward -inf
        up = builder.add(b, builder.select(neg, c(0), c(0xFFFF)))       # toward +inf
        r = builder.select(builder.icmp_signed("==", m, c(RN)), rn,
                           builder.select(builder.icmp_signed("==", m, c(RZ)), b,
                                          builder.select(builder.icmp_signed("==", m, c(RM)),
                                                         down, up)))
        h = builder.trunc(builder.lshr(r, c(16)), ir.IntType(16))
        return builder.zext(h, ir.IntType(64))
    return types.int64(x, mode), codegen


@njit
def round_pack32(v, EBITS, mode, flush_tiny):
    """``round_pack`` for a binary32 ``v`` (exact result or round-to-odd proxy at 24 bits)
    into f16 (``EBITS`` 5: round-to-nearest only, by F16C) or bf16 (``EBITS`` 8: any mode).

    24 bits are at least two more than either target has, so this is the same single rounding
    of the exact value as ``round_pack`` (same reference).  bf16 is binary32 with the low 16
    bits dropped, so its rounding is integer arithmetic on the bits (``_bf16_bits_from_f32``).
    The sign and the magnitude are read off the 16-bit result, the NaN and tininess tests are
    float comparisons: everything stays in 32-bit or narrower vector lanes.
    Returns ``(magnitude_bits, sign, is_nan)``.
    """
    if EBITS == 5:
        h = _f16_bits_from_f32(v)
        tiny = abs(v) < np.float32(6.103515625e-05)          # 2**-14, smallest normal f16
    else:
        h = _bf16_bits_from_f32(v, mode)
        tiny = abs(v) < np.float32(1.1754943508222875e-38)   # 2**-126
    sign = (h >> 15) & 1
    r = h & 0x7FFF
    is_nan = v != v
    if flush_tiny:
        r = 0 if tiny else r
    r = 0 if is_nan else r
    return r, sign, is_nan
