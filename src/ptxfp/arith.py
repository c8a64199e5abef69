"""Exact arithmetic on decoded values.

Operands of every form are f16, bf16 or f32 numbers, which float64 holds exactly.  Products of
two f16 or bf16 numbers (at most 22 significant bits, exponents within 2**±300) are exact in
float64.  Sums are not always exact (a bf16 and an f32 can be 2**250 apart), so they are formed
as round-to-odd at float64: the round-to-nearest sum plus its exact error (Knuth's TwoSum), with
the last bit forced odd when the error is not zero.  That proxy rounds to any narrower format
exactly as the exact sum would (rounding.py).
"""

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


# --- bf16 fma at binary32 on every input (kernels.lane32; docs/semantics.md, "Fast lane") ----
#
# A bf16 product x*y has at most 16 significant bits, is a multiple of 2**(S - 14) and below
# 2**(S + 2), where S = max(ea, 1) + max(eb, 1) - 254 (ea, eb: the exponent fields).  So it is
# an exact binary32 when -135 <= S <= 125.  Above (S >= 126) the lane works at half scale:
# x/2 * y and z/2 are exact there, and doubling the sum's proxy is exact or overflows exactly
# when the exact result overflows.  Below (S <= -127) the product is formed exactly at 2**120
# times its size and brought back rounded to odd on binary32's fixed grid 2**-149 (subnormals
# and the first normal binade); adding z (a multiple of 2**-133) to that commutes with the
# rounding, so the sum is still the exact sum's proxy.  The tiny case starts at -127 rather
# than -136 so that no product is a subnormal binary32: the vector unit runs an operation with
# a subnormal operand or result far more slowly, on the whole vector (docs/performance.md).

_FIELD_MIN_HUGE = 126 + 254          # S >= 126: the product may leave binary32's range
_FIELD_MAX_TINY = -127 + 254         # S <= -127: the product may be below 2**-126 (or subnormal)


def _f32c(v):
    return ir.Constant(ir.FloatType(), float(v))


@intrinsic
def fma_bf16_odd32(typingctx, x, y, z, round_down):
    """x * y + z for bf16 values x, y, z held in binary32, rounded to odd on binary32's grid
    (subnormals included), with a finite result beyond binary32's range given as the largest
    binary32 of its sign.  Needs round-to-nearest and no FTZ/DAZ; an exact zero sum gets
    IEEE's sign (under ``round_down``, -0 when an operand is negative).

    Every rounding of this binary32 proxy to bf16 (``rounding.round_pack32``) is the rounding
    of the exact x * y + z (docs/semantics.md, "Fast lane", bf16 fma).  Branch-free, in LLVM IR
    so that every step stays in 32-bit vector lanes (Numba's booleans and integers are wider).
    """
    if not (all(isinstance(t, types.Float) and t.bitwidth == 32 for t in (x, y, z))
            and isinstance(round_down, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        f32, i32 = ir.FloatType(), ir.IntType(32)
        xv, yv, zv, rd = args
        if rd.type != ir.IntType(1):
            rd = builder.trunc(rd, ir.IntType(1))
        fabs = builder.module.declare_intrinsic("llvm.fabs", [f32])
        sel = builder.select

        def c(k):
            return ir.Constant(i32, k)

        def bits(v):
            return builder.bitcast(v, i32)

        def field(v):
            e = builder.and_(builder.lshr(bits(v), c(23)), c(0xFF))
            return builder.select(builder.icmp_unsigned("<", e, c(1)), c(1), e)
        S = builder.add(field(xv), field(yv))
        huge = builder.icmp_signed(">=", S, c(_FIELD_MIN_HUGE))
        tiny = builder.icmp_signed("<=", S, c(_FIELD_MAX_TINY))
        one = _f32c(1.0)
        half = sel(huge, _f32c(0.5), one)
        up = sel(tiny, _f32c(2.0 ** 60), one)
        # exact: x*y/2 (huge; inf if it is 2**128 or more) or x*y*2**120 (tiny) or x*y
        p = builder.fmul(builder.fmul(builder.fmul(xv, half), up), builder.fmul(yv, up))
        # tiny: back to x*y rounded to odd on the grid 2**-149, by integer operations (a
        # multiply would take subnormal operands, which x86 SIMD units run slowly): with
        # p = M * 2**(e - 23) (M its 24-bit significand), x*y / 2**-149 = M >> (121 - field),
        # the bits shifted out are the sticky bit, and a binary32 subnormal's bits are its
        # multiple of 2**-149 (here below 2**15).
        pb = bits(p)
        fp = builder.and_(builder.lshr(pb, c(23)), c(0xFF))
        m = builder.or_(builder.and_(pb, c(0x7FFFFF)),
                        sel(builder.icmp_unsigned("==", fp, c(0)), c(0), c(0x800000)))
        sh = builder.sub(c(121), sel(builder.icmp_unsigned("<", fp, c(1)), c(1), fp))
        sh = sel(builder.icmp_unsigned(">", sh, c(31)), c(31), sh)   # tiny: sh >= 0
        kept = builder.lshr(m, sh)
        sticky = builder.zext(builder.icmp_unsigned("!=", builder.shl(kept, sh), m), i32)
        odd = builder.or_(builder.and_(pb, c(-0x80000000)), builder.or_(kept, sticky))
        pu = sel(tiny, builder.bitcast(odd, f32), p)
        # x*y/2 overflowed (x, y finite): the largest binary32 of its sign stands in for it
        # (the sum then overflows too, as the exact one does: |x*y| >= 2**129 > 2|z|)
        inf = _f32c(float("inf"))
        fin_xy = builder.and_(builder.fcmp_ordered("<", builder.call(fabs, [xv]), inf),
                              builder.fcmp_ordered("<", builder.call(fabs, [yv]), inf))

        def fmax_of(v):
            return builder.bitcast(builder.or_(builder.and_(bits(v), c(-0x80000000)),
                                               c(0x7F7FFFFF)), f32)
        pu = sel(builder.and_(fin_xy, builder.fcmp_ordered("==", builder.call(fabs, [pu]), inf)),
                 fmax_of(pu), pu)
        zu = builder.fmul(zv, half)                      # exact: z is a multiple of 2**-133
        # TwoSum, then the sum rounded to odd (as add_odd32 / _odd32)
        s = builder.fadd(pu, zu)
        bb = builder.fsub(s, pu)
        err = builder.fadd(builder.fsub(pu, builder.fsub(s, bb)), builder.fsub(zu, bb))
        sb = bits(s)
        inexact = builder.zext(builder.fcmp_ordered("!=", err, _f32c(0.0)), i32)
        above = builder.and_(inexact, builder.lshr(builder.xor(bits(err), sb), c(31)))
        v = builder.bitcast(builder.or_(builder.sub(sb, above), inexact), f32)
        # exact zero sum under .rm: -0 when an operand is negative (zero_sign_fix32)
        neg0 = builder.bitcast(builder.and_(builder.or_(bits(pu), bits(zu)), c(-0x80000000)), f32)
        v = sel(builder.and_(rd, builder.fcmp_ordered("==", v, _f32c(0.0))), neg0, v)
        w = sel(huge, builder.fmul(v, _f32c(2.0)), v)    # exact, or inf past binary32
        # a finite exact result past binary32 (inf above): the largest binary32 of its sign
        w_over = builder.and_(builder.and_(fin_xy, builder.fcmp_ordered(
            "<", builder.call(fabs, [zv]), inf)),
            builder.fcmp_ordered("==", builder.call(fabs, [w]), inf))
        return sel(w_over, fmax_of(w), w)
    return types.float32(x, y, z, round_down), codegen
