"""Exact arithmetic on decoded values.

Operands of every form are f16, bf16 or f32 numbers, which float64 holds exactly.  Products of
two f16 or bf16 numbers (at most 22 significant bits, exponents within 2**±300) are exact in
float64.  Sums are not always exact (a bf16 and an f32 can be 2**250 apart), so they are formed
as round-to-odd at float64: the round-to-nearest sum plus its exact error (Knuth's TwoSum), with
the last bit forced odd when the error is not zero.  That proxy rounds to any narrower format
exactly as the exact sum would (rounding.py).
"""

import os

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ._bitcast import bits_from_f32, bits_from_f64, f32_from_bits, f64_from_bits

_EXP64 = 0x7FF0000000000000


def _host_has_f16c():
    """Does the code Numba generates here have F16C (hardware half -> float conversion)?

    Without it LLVM lowers a half conversion to a runtime-library call that Numba's JIT may not
    link, so the f16 decoder then takes the integer route below (same values, more work).
    """
    try:
        from numba.core import config
        feats = config.CPU_FEATURES
        if feats is None and config.CPU_NAME in (None, "host"):
            from llvmlite import binding
            return bool(binding.get_host_cpu_features().get("f16c", False))
        return feats is not None and "+f16c" in feats
    except Exception:                      # pragma: no cover - unusual LLVM builds
        return False


HAVE_F16C = _host_has_f16c()


def _host_has_avx512fp16():
    """Does the code Numba generates here have AVX512-FP16 (IEEE binary16 arithmetic, one
    rounding per operation, subnormals at full speed)?  Without it LLVM would compute a half
    operation in binary32 and round twice, so the half kernels (kernels.lane16) are used only
    with it.  ``PTXFP_NO_FP16=1`` turns them off (the binary32 fast lane runs instead)."""
    if os.environ.get("PTXFP_NO_FP16", "") not in ("", "0"):
        return False
    try:
        from numba.core import config
        feats = config.CPU_FEATURES
        if feats is None and config.CPU_NAME in (None, "host"):
            from llvmlite import binding
            return bool(binding.get_host_cpu_features().get("avx512fp16", False))
        return feats is not None and "+avx512fp16" in feats
    except Exception:                      # pragma: no cover - unusual LLVM builds
        return False


HAVE_AVX512FP16 = _host_has_avx512fp16()


def _narrow_int(builder, v, width):
    t = ir.IntType(width)
    if v.type.width > width:
        return builder.trunc(v, t)
    if v.type.width < width:
        return builder.zext(v, t)
    return v


def _widening(src_bits, src_type, dst_type, numba_dst):
    """An intrinsic: the low ``src_bits`` bits of an integer as an IEEE number of ``src_type``,
    widened exactly to ``dst_type`` (one bitcast and one hardware conversion: F16C for half)."""
    @intrinsic
    def widen(typingctx, h):
        if isinstance(h, types.Integer):
            def codegen(context, builder, signature, args):
                x = builder.bitcast(_narrow_int(builder, args[0], src_bits), src_type)
                return builder.fpext(x, dst_type)
            return numba_dst(h), codegen
        return None
    return widen


_f64_from_f16_bits = _widening(16, ir.HalfType(), ir.DoubleType(), types.float64)
_f64_from_f32_bits = _widening(32, ir.FloatType(), ir.DoubleType(), types.float64)
_f32_from_f16_bits = _widening(16, ir.HalfType(), ir.FloatType(), types.float32)


@njit
def decode(h, EBITS, MBITS, flush_subnormal):
    """Bits of a format with ``EBITS``/``MBITS`` to the exact float64 value (NaNs stay NaN).

    With ``flush_subnormal`` a subnormal input decodes as a zero of the same sign (.ftz).

    f16 (with F16C), bf16 and f32 are widened by the hardware conversions (exact, and one
    vector instruction per 8 or 16 lanes); the kernels run them with the default FP environment
    (no DAZ, see kernels.py).  The .ftz flush works on the narrow bits before widening (one
    test and one masked move per 32 lanes).  Any other format takes the integer route.
    """
    if EBITS == 5 and MBITS == 10 and HAVE_F16C:
        w = np.int64(h) & 0xFFFF
        if flush_subnormal:                  # exponent field 0: a subnormal, to a signed zero
            w = (w & 0x8000) if (w & 0x7C00) == 0 else w
        return _f64_from_f16_bits(w)
    if EBITS == 8 and (MBITS == 7 or MBITS == 23):
        w = (np.int64(h) << (23 - MBITS)) & 0xFFFFFFFF
        if flush_subnormal:                  # exponent field 0: a subnormal, to a signed zero
            w = (w & 0x80000000) if (w & 0x7F800000) == 0 else w
        return _f64_from_f32_bits(w)
    h = np.int64(h)
    emask = (np.int64(1) << EBITS) - 1
    bias = (np.int64(1) << (EBITS - 1)) - 1
    s = (h >> (EBITS + MBITS)) & 1
    e = (h >> MBITS) & emask
    m = h & ((np.int64(1) << MBITS) - 1)
    if flush_subnormal:
        m = 0 if e == 0 else m
    sig = m | (np.int64(e != 0) << MBITS)
    # value = sig * 2**(max(e, 1) - bias - MBITS); the power of two is built from its bits.
    scale = f64_from_bits((max(e, np.int64(1)) - bias - MBITS + 1023) << 52)
    v = np.float64(sig) * scale
    special = f64_from_bits(np.int64(_EXP64) | (m << (52 - MBITS)))
    v = special if e == emask else v
    return -v if s == 1 else v


@njit
def add_odd(x, y):
    """x + y rounded to odd at float64 (exact when the sum fits, sticky last bit otherwise)."""
    s = x + y
    bb = s - x
    err = (x - (s - bb)) + (y - bb)
    sb = bits_from_f64(s)
    # Round to odd = the sum truncated toward zero with its last bit set when inexact.  The
    # nearest sum s is that truncation when the error has its sign, and one step above it in
    # magnitude otherwise; s is never 0 when inexact.  An infinite or NaN s has a NaN error,
    # which the ordered comparison leaves alone.
    inexact = np.int64(abs(err) > 0.0)
    above = inexact & (((bits_from_f64(err) ^ sb) >> 63) & 1)
    return f64_from_bits((sb - above) | inexact)


@njit
def zero_sign_fix(r, x, y, round_down):
    """IEEE sign of an exact zero sum x + y: +0 unless both are -0, but -0 under .rm.

    Round-to-nearest float64 addition already gives the first; under .rm the sign is the OR of
    the operand signs.
    """
    if round_down and r == 0.0:
        neg = ((bits_from_f64(x) | bits_from_f64(y)) >> 63) & 1
        return -0.0 if neg == 1 else 0.0
    return r


# --- binary32 helpers of the fast lane (kernels.lane32) ------------------------------------
#
# f16 and bf16 numbers are binary32 numbers too, and a product of two f16 numbers (22 bits,
# exponents within 2**-48 .. 2**32) is an exact binary32.  So on x86 the lane can work at
# binary32, 16 lanes per AVX-512 vector instead of 8; docs/semantics.md ("Fast lane") proves
# which forms may and how each keeps the single rounding.


@intrinsic
def fma32(typingctx, x, y, z):
    """x * y + z in binary32 with one rounding in the FP environment's mode (llvm.fma)."""
    if all(isinstance(t, types.Float) and t.bitwidth == 32 for t in (x, y, z)):
        def codegen(context, builder, signature, args):
            f32 = ir.FloatType()
            f = builder.module.declare_intrinsic("llvm.fma", [f32],
                                                 ir.FunctionType(f32, [f32, f32, f32]))
            return builder.call(f, list(args))
        return types.float32(x, y, z), codegen
    return None


@njit
def decode32(h, EBITS, MBITS, flush_subnormal):
    """Bits of an f16 (with F16C), bf16 or f32 to the same value as a binary32 (exact).

    Only for those three formats; ``flush_subnormal`` as in ``decode``.
    """
    if EBITS == 5:
        w = np.int64(h) & 0xFFFF
        if flush_subnormal:
            w = (w & 0x8000) if (w & 0x7C00) == 0 else w
        return _f32_from_f16_bits(w)
    w = (np.int64(h) << (23 - MBITS)) & 0xFFFFFFFF
    if flush_subnormal:
        w = (w & 0x80000000) if (w & 0x7F800000) == 0 else w
    return f32_from_bits(w)


@intrinsic
def _odd32(typingctx, s, err):
    """The round-to-nearest binary32 sum ``s`` with its exact error ``err`` as the sum rounded
    to odd: ``(bits(s) - above) | inexact`` as in ``add_odd``, in 32-bit integer operations
    (written in LLVM IR because Numba widens integer arithmetic to 64 bits, which halves the
    lanes per vector)."""
    if not all(isinstance(t, types.Float) and t.bitwidth == 32 for t in (s, err)):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        sv, ev = args
        sb = builder.bitcast(sv, i32)
        eb = builder.bitcast(ev, i32)
        inexact = builder.zext(builder.fcmp_ordered("!=", ev, ir.Constant(ir.FloatType(), 0.0)),
                               i32)
        above = builder.and_(inexact, builder.lshr(builder.xor(eb, sb), ir.Constant(i32, 31)))
        r = builder.or_(builder.sub(sb, above), inexact)
        return builder.bitcast(r, ir.FloatType())
    return types.float32(s, err), codegen


@njit
def add_odd32(x, y):
    """x + y rounded to odd at binary32 (``add_odd`` at 24 bits; needs round-to-nearest).

    TwoSum is exact in binary32 as in binary64 when nothing overflows; an overflowing or
    infinite sum has a NaN error, which leaves the sum alone.
    """
    s = x + y
    bb = s - x
    err = (x - (s - bb)) + (y - bb)
    return _odd32(s, err)


@njit
def zero_sign_fix32(r, x, y, round_down):
    """``zero_sign_fix`` for binary32 operands."""
    if round_down and r == np.float32(0.0):
        neg = ((bits_from_f32(x) | bits_from_f32(y)) >> 31) & 1
        return np.float32(-0.0) if neg == 1 else np.float32(0.0)
    return r


# --- bf16 fma in binary64 (kernels.wide_run; docs/semantics.md, "Fast lane") ---------------
#
# A bf16 product has at most 16 significant bits but can lie anywhere from 2**-266 to 2**256,
# far outside binary32's range, so the plain binary32 sum (kernels.kernel32) is exact only
# where the hardware's underflow and overflow flags stay clear; elsewhere this lane runs.
# Binary64 holds every such product exactly, and no sum with a bf16 addend (8 bits, 2**-133 ..
# 2**128) is subnormal in binary64 or overflows it.  The sum is rounded toward zero (the FP
# environment's mode), then toward zero again onto binary32's grid, subnormals included; with
# its last bit set when either step was inexact, that is the exact sum rounded to odd, and any
# rounding of it to bf16 is the exact sum's.  Binary64 vectors hold half the lanes of binary32
# ones, yet the lane takes 57 vector instructions per 16 lanes where the binary32 frame it
# replaced (the exponent kept aside and put back by integer operations) took 121.
# On this path subnormal binary32 values are the operands and results of conversions only,
# which this machine runs at full speed (benchmarks/bf16_fma_probe.py: the lane runs as fast
# with FTZ/DAZ set); its float operations see no subnormal.


def _wide_ir(builder, ha, hb, hc, rd):
    """The IR of ``fma_bf16_wide`` (32-bit integer lanes in, binary32 out)."""
    f32, f64, i32 = ir.FloatType(), ir.DoubleType(), ir.IntType(32)

    def wide(h):      # a bf16's bits as a binary64 (exact: via its binary32)
        return builder.fpext(builder.bitcast(builder.shl(h, ir.Constant(i32, 16)), f32), f64)

    fa, fb, fc = wide(ha), wide(hb), wide(hc)
    p = builder.fmul(fa, fb)                                  # exact
    s = builder.fadd(p, fc)                                   # toward zero
    t = builder.fptrunc(s, f32)                               # toward zero
    # t is the exact sum rounded toward zero on binary32's grid (two truncations are one).
    # It is inexact when s is (s is exact exactly when s - p, rounded toward zero, is c:
    # docs/semantics.md) or when t is not s.  Ordered compares: an infinite or NaN s is
    # left as it is.
    inexact = builder.or_(builder.fcmp_ordered("!=", builder.fsub(s, p), fc),
                          builder.fcmp_ordered("!=", builder.fpext(t, f64), s))
    r = builder.or_(builder.bitcast(t, i32), builder.zext(inexact, i32))
    # exact zero sum under .rm: -0 when a term is negative (IEEE 754 6.3)
    neg0 = builder.and_(builder.or_(builder.xor(ha, hb), hc), ir.Constant(i32, 0x8000))
    r = builder.select(builder.and_(rd, builder.fcmp_ordered("==", s, ir.Constant(f64, 0.0))),
                       builder.shl(neg0, ir.Constant(i32, 16)), r)
    return builder.bitcast(r, f32)


@intrinsic
def fma_bf16_wide(typingctx, a, b, c, round_down):
    """a * b + c for the bf16 bit patterns a, b, c: a binary32 holding the exact sum rounded
    to odd on binary32's grid (subnormals included), or the largest binary32 of its sign when
    the exact sum is finite and beyond it, or the infinity or NaN of IEEE's fma.  An exact zero
    gets IEEE's sign (under ``round_down``, -0 when a term is negative).  Every rounding of it
    to bf16 (``rounding.round_pack32``) is that of the exact a * b + c.

    Needs the FP environment's rounding mode set to round-toward-zero, without flushing
    (``kernels.MXCSR_WIDE``).  Branch-free.  The result can be a subnormal binary32: read it
    with integer operations (a float operation on it would be slow)."""
    if not (all(isinstance(t, types.Integer) for t in (a, b, c))
            and isinstance(round_down, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        ha, hb, hc = (builder.and_(_narrow_int(builder, v, 32), ir.Constant(i32, 0xFFFF))
                      for v in args[:3])
        rd = args[3]
        if rd.type != ir.IntType(1):
            rd = builder.trunc(rd, ir.IntType(1))
        return _wide_ir(builder, ha, hb, hc, rd)
    return types.float32(a, b, c, round_down), codegen


# --- binary16 arithmetic in hardware (kernels.lane16; docs/semantics.md, "Fast lane") ------
#
# With AVX512-FP16 an f16 add, sub, mul or fma is one instruction that rounds the exact result
# once into binary16 in the FP environment's mode, with IEEE's subnormals, overflow and
# signed zeros: the operation that the f16 forms' rounding (before NVIDIA's rules) is.


def _half_codegen(build):
    def codegen(context, builder, signature, values):
        h, i16 = ir.HalfType(), ir.IntType(16)
        xs = [builder.bitcast(_narrow_int(builder, v, 16), h) for v in values]
        return builder.zext(builder.bitcast(build(builder, *xs), i16), ir.IntType(64))
    return codegen


def _half_op2(build):
    """An intrinsic: the f16 bit patterns of its two integer arguments, one binary16
    operation ``build(builder, x, y)``, the result's bits as an int64."""
    @intrinsic
    def op(typingctx, a, b):
        if isinstance(a, types.Integer) and isinstance(b, types.Integer):
            return types.int64(a, b), _half_codegen(build)
        return None
    return op


def _fma16(builder, x, y, z):
    h = ir.HalfType()
    f = builder.module.declare_intrinsic("llvm.fma", [h], ir.FunctionType(h, [h, h, h]))
    return builder.call(f, [x, y, z])


@intrinsic
def half_fma(typingctx, a, b, c):
    """a * b + c for the f16 bit patterns a, b, c with one rounding (AVX512-FP16 only)."""
    if all(isinstance(t, types.Integer) for t in (a, b, c)):
        return types.int64(a, b, c), _half_codegen(_fma16)
    return None


half_mul = _half_op2(lambda b, x, y: b.fmul(x, y))
half_add = _half_op2(lambda b, x, y: b.fadd(x, y))
half_sub = _half_op2(lambda b, x, y: b.fsub(x, y))


_F16_MIN = ir.Constant(ir.HalfType(), 2.0 ** -14)


def _half_test(build):
    """An intrinsic: a test of the binary16 whose bits are its integer argument, as a float
    compare (an integer compare of the bits made LLVM widen the lanes' integer work to 64
    bits, see docs/performance.md)."""
    @intrinsic
    def test(typingctx, a):
        if not isinstance(a, types.Integer):
            return None

        def codegen(context, builder, signature, values):
            h = ir.HalfType()
            x = builder.bitcast(_narrow_int(builder, values[0], 16), h)
            fabs = builder.module.declare_intrinsic("llvm.fabs", [h], ir.FunctionType(h, [h]))
            return build(builder, x, builder.call(fabs, [x]))
        return types.boolean(a), codegen
    return test


#: is the f16 a NaN; below the smallest normal 2**-14 in magnitude; exactly 2**-14 in magnitude
half_is_nan = _half_test(lambda b, x, ax: b.fcmp_unordered("uno", x, x))
half_subnormal = _half_test(lambda b, x, ax: b.fcmp_ordered("<", ax, _F16_MIN))
half_min_normal = _half_test(lambda b, x, ax: b.fcmp_ordered("==", ax, _F16_MIN))
