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


# --- bf16 fma in a frame at the product's scale (kernels.frame_run; docs/semantics.md,
# "Fast lane") ---------------------------------------------------------------------------------
#
# A bf16 product has at most 16 significant bits but can lie anywhere from 2**-266 to 2**256,
# far outside binary32's range, so the plain binary32 sum (kernels.kernel32) is exact only
# where the hardware's underflow and overflow flags stay clear; elsewhere this lane runs.
#
# No binary32 value that this lane forms is subnormal (nor overflows, but for infinite or NaN
# operands): each operand's significand is an integer below 2**8 converted to binary32, the
# product of two is an integer below 2**16, and the addend is brought to the product's scale
# within 2**-40 .. 2**48 (a term too small to matter, the addend below or the product when the
# addend is far above, is replaced by a stand-in of the same sign).  The exponent goes back on
# with integer operations.
# An x86 vector operation with a subnormal operand or result is slow for the whole vector
# (docs/performance.md), and random bf16 operands make such values in most vectors.


def _f32c(v):
    return ir.Constant(ir.FloatType(), float(v))


_FRAME_LO = -40                       # the addend's scale is held within -40 .. 40 of the frame
_ZERO_FIELD = -1000                   # the exponent given to a zero term


class _Lanes:
    """Builds 32-bit-lane LLVM IR for the frame lane (Numba's booleans and integers are wider
    and would halve the lanes per vector)."""

    def __init__(self, builder):
        self.b = builder
        self.f32, self.i32 = ir.FloatType(), ir.IntType(32)

    def c(self, k):
        return ir.Constant(self.i32, k)

    def bits(self, v):
        return self.b.bitcast(v, self.i32)

    def flt(self, v):
        return self.b.bitcast(v, self.f32)

    def smax(self, x, y):
        return self.b.select(self.b.icmp_signed(">", x, y), x, y)

    def smin(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def umin(self, x, y):
        return self.b.select(self.b.icmp_unsigned("<", x, y), x, y)


def _frame_sum_ir(builder, ha, hb, hc, rd):
    """The frame lane's first part: ``(vb, T)``, the bits of (a * b + c) / 2**T rounded to
    odd (normal or zero, or the infinity or NaN of IEEE's fma) and the frame's scale T."""
    x = _Lanes(builder)
    c, bits, flt, smax, sel = x.c, x.bits, x.flt, x.smax, builder.select
    zero = _f32c(0.0)

    def decode(h):
        # value = m * 2**(e - 134): m the significand as an integer below 2**8 (exactly
        # converted: a normal binary32 or 0) with the operand's sign, e = max(field, 1),
        # returned as e * 2**7, where the field sits in the bits (shifts are among the
        # scarce vector operations here, docs/performance.md).  Field 255: m is the
        # infinity or NaN itself.
        mag = builder.and_(h, c(0x7FFF))
        hs = builder.shl(h, c(16))
        e7 = smax(builder.and_(h, c(0x7F80)), c(0x80))
        # mag less the field's bits plus a normal's leading bit: once e = max(field, 1),
        # one subtraction for normals and subnormals alike
        m = bits(builder.sitofp(builder.sub(builder.add(mag, c(0x80)), e7), x.f32))
        m = builder.or_(m, builder.and_(hs, c(-0x80000000)))
        m = sel(builder.icmp_unsigned(">=", mag, c(0x7F80)), hs, m)
        return flt(m), e7, builder.icmp_unsigned("==", mag, c(0))

    ma, ea, za = decode(ha)
    mb, eb, zb = decode(hb)
    mc, ec, zc = decode(hc)
    # exact: a*b = p * 2**sp, p an integer below 2**16 in magnitude (or inf/NaN), and
    # c = mc * 2**sc.  The frame is the product's scale: pu = p, and zu = mc * 2**(sc - sp)
    # with the exponent held within -40 .. 40.  Below -40, zu is a stand-in for c, of its
    # sign, below p's last bit at 24 bits; above 40 the frame moves up with c, to
    # T = sc - 40, where p (below 2**16) is the stand-in for the product, below zu's last
    # bit (zu >= 2**40).  A zero term's scale is _ZERO_FIELD, so the other term sets the
    # frame.  The scales are held times 2**7 (as the decoded exponents) until T is put
    # back.  (docs/semantics.md, "Fast lane", bf16 fma.)
    pu = builder.fmul(ma, mb)
    sp = sel(builder.or_(za, zb), c(_ZERO_FIELD << 7),
             builder.add(builder.add(ea, eb), c(-268 << 7)))
    sc = sel(zc, c(_ZERO_FIELD << 7), builder.add(ec, c(-134 << 7)))
    k7 = builder.sub(sc, sp)
    k7 = smax(x.smin(k7, c(-_FRAME_LO << 7)), c(_FRAME_LO << 7))
    zu = builder.fmul(mc, flt(builder.shl(builder.add(k7, c(127 << 7)), c(16))))
    T7 = smax(sp, builder.add(sc, c(_FRAME_LO << 7)))
    # The sum rounded to odd: s = pu + zu rounded toward zero (the FP environment's mode,
    # see fma_bf16_frame_sum) with its last bit set when it is inexact.  Every value here is
    # a multiple of 2**-40 below 2**49, so normal or zero, and then s is exact exactly when
    # s - pu, rounded toward zero, is zu (docs/semantics.md, "Fast lane").  An ordered
    # compare: with an infinite or NaN term, s - pu is that term or NaN, so an IEEE special
    # is left as it is.
    s = builder.fadd(pu, zu)
    inexact = builder.fcmp_ordered("!=", builder.fsub(s, pu), zu)
    vb = builder.or_(bits(s), builder.zext(inexact, x.i32))
    # exact zero sum under .rm: -0 when an operand is negative (zero_sign_fix32)
    neg0 = builder.and_(builder.or_(bits(pu), bits(zu)), c(-0x80000000))
    vb = sel(builder.and_(rd, builder.fcmp_ordered("==", s, zero)), neg0, vb)
    return vb, builder.ashr(T7, c(7))


def _frame_back_ir(builder, vb, T):
    """The frame lane's second part: the frame's sum ``vb`` (bits) times 2**T, as the bits
    of the binary32 that fma_bf16_frame_back returns."""
    x = _Lanes(builder)
    c, umin, sel = x.c, x.umin, builder.select
    sign = builder.and_(vb, c(-0x80000000))
    vmag = builder.and_(vb, c(0x7FFFFFFF))
    fv = builder.lshr(vmag, c(23))
    F = builder.add(fv, T)
    # F > 0: T added to the exponent; from F = 255 on (the exact result at least 2**128)
    # the largest binary32: an unsigned minimum (F < 512, so the sum does not wrap)
    normal = builder.or_(sign, umin(builder.add(vmag, builder.shl(T, c(23))), c(0x7F7FFFFF)))
    # F <= 0: RO on the grid 2**-149 from the 24-bit significand (the bits shifted out
    # are the sticky bit); a binary32 subnormal's bits are its multiple of 2**-149
    sig24 = builder.or_(builder.and_(vmag, c(0x7FFFFF)), c(0x800000))
    sh = umin(builder.sub(c(1), F), c(31))
    kept = builder.lshr(sig24, sh)
    kept = sel(builder.icmp_unsigned("!=", builder.shl(kept, sh), sig24),
               builder.or_(kept, c(1)), kept)
    r = sel(builder.icmp_signed("<=", F, c(0)), builder.or_(sign, kept), normal)
    # zero, infinity, NaN: as they are
    keep = builder.icmp_unsigned(">=", builder.sub(fv, c(1)), c(254))
    return sel(keep, vb, r)


@intrinsic
def fma_bf16_frame_sum(typingctx, a, b, c, round_down):
    """a * b + c for the bf16 bit patterns a, b, c, in two parts: ``(v, T)``, 32-bit
    integers, where v holds the bits of (a * b + c) / 2**T rounded to odd (a normal binary32
    or zero; or the infinity or NaN that IEEE's fma gives, with T of no meaning), and
    ``fma_bf16_frame_back(v, T)`` is the whole result.  An exact zero gets IEEE's sign
    (under ``round_down``, -0 when an operand is negative).  No binary32 operand or result
    of a float operation here is subnormal (docs/semantics.md, "Fast lane", bf16 fma).

    Needs the FP environment's rounding mode set to round-toward-zero
    (``kernels.MXCSR_FRAME``).  Branch-free, in 32-bit lanes.  Two parts so that a block
    runs them as two loops (kernels.frame_run): one loop with both ran 0.78x as fast, its
    chain of dependent operations being too long for the vector unit to overlap enough
    lanes (docs/performance.md)."""
    if not (all(isinstance(t, types.Integer) for t in (a, b, c))
            and isinstance(round_down, types.Boolean)):
        return None
    ret = types.UniTuple(types.int32, 2)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        ha, hb, hc = (builder.and_(_narrow_int(builder, v, 32), ir.Constant(i32, 0xFFFF))
                      for v in args[:3])
        rd = args[3]
        if rd.type != ir.IntType(1):
            rd = builder.trunc(rd, ir.IntType(1))
        return context.make_tuple(builder, ret, _frame_sum_ir(builder, ha, hb, hc, rd))
    return ret(a, b, c, round_down), codegen


@intrinsic
def fma_bf16_frame_back(typingctx, v, T):
    """The second part of ``fma_bf16_frame_sum``: from its ``(v, T)``, a binary32 holding
    the exact a * b + c rounded to odd on binary32's grid (subnormals included), or the
    largest binary32 of its sign when the exact result is finite and at least 2**128 in
    magnitude, or the infinity or NaN of IEEE's fma.  Every rounding of it to bf16
    (``rounding.round_pack32``) is that of the exact a * b + c.  Only integer operations
    should read it (it can be a subnormal binary32); integer operations only."""
    if not (isinstance(v, types.Integer) and isinstance(T, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        vb, t = (_narrow_int(builder, x, 32) for x in args)
        return builder.bitcast(_frame_back_ir(builder, vb, t), ir.FloatType())
    return types.float32(v, T), codegen
