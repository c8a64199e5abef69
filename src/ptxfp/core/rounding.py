"""The one rounding core.

Every operation hands this routine a float64 that is either its exact result or a round-to-odd
proxy of it (a sticky bit in the last place, see exact.py).  The routine rounds that value once
into a target format (precision P, smallest normal exponent EMIN, largest exponent EMAX) under a
rounding mode, with gradual underflow and IEEE overflow; under .ftz it also flushes a tiny value
by the tininess reading the kernel was built with (TINY_*, policy.ftz_tininess).  Because the proxy carries at least two
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

from ._bitcast import bits_from_f64, f64_from_bits

RN, RZ, RM, RP = 0, 1, 2, 3
MODES = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP}

#: .ftz tininess readings as the kernels see them (policy.TININESS_*), and what ``round_pack``'s
#: ``flush_tiny`` does with each: TINY_AFTER flushes nothing here (nvidia.finish flushes a
#: subnormal rounded result; 0 is also "no .ftz"), TINY_BEFORE flushes an exact value below
#: 2**EMIN, TINY_UNBOUNDED one whose rounding to P bits with an unbounded exponent is below it.
TINY_AFTER, TINY_BEFORE, TINY_UNBOUNDED = 0, 1, 2

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
def _rint(y, mode):
    """``y`` rounded to an integral value in ``mode`` (exact for any float64)."""
    if mode == RN:
        return _roundeven(y)
    if mode == RZ:
        return _trunc(y)
    if mode == RM:
        return _floor(y)
    return _ceil(y)


@njit
def round_pack(x, P, EMIN, EMAX, mode, flush_tiny):
    """Round float64 ``x`` into a format with precision ``P``.

    Returns ``(magnitude_bits, sign, is_nan)``; the caller puts the sign back and chooses the NaN.
    ``flush_tiny`` (TINY_*, a compile-time constant of each kernel) flushes a tiny ``x`` to
    zero: TINY_BEFORE when ``x`` is below the smallest normal 2**EMIN, TINY_UNBOUNDED when ``x``
    rounded in ``mode`` to P bits with an unbounded exponent range is (IEEE's tininess after
    rounding); TINY_AFTER flushes nothing here (the after-rounding reading of .ftz lives in
    nvidia.py, on the rounded bits).
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
    y = _rint(x * f64_from_bits((P - 1 - ee + 1023) << 52), mode)
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
    if flush_tiny == TINY_BEFORE:
        r = 0.0 if e < EMIN else r
    elif flush_tiny == TINY_UNBOUNDED:
        # Scaled so that the last place of P bits in the binade [2**(EMIN-1), 2**EMIN) is 1
        # (exact: a power of two, and x is far from float64's limits): an x in that binade
        # rounds to P bits unbounded below 2**EMIN exactly when the integral value is below
        # 2**P; a smaller x gives at most 2**(P-1), a larger one at least 2**P (and NaN, inf
        # compare false).  A round-to-odd proxy has x's binade and rounds as x does (53 > P+1).
        t = _rint(x * f64_from_bits((P - EMIN + 1023) << 52), mode)
        r = 0.0 if abs(t) < np.float64(1 << P) else r
    is_nan = a > _INF64
    r = np.float64(inf_bits) if a == _INF64 else r
    r = 0.0 if is_nan else r
    return np.int64(r), sign, is_nan


@njit(inline="always")
def rs_away(x, P, EMIN, R, K):
    """Does stochastic rounding (PTX ``.rs``) with random bits ``R`` (``K`` bits) take the
    exact value ``x`` away from zero?  Otherwise it truncates: the result is ``round_pack``'s
    toward zero, plus one unit in the magnitude's last place when this is true (the
    magnitude's encoding carries into the exponent, and past the largest finite value into
    the format's overflow encoding, as rounding away from zero does).

    PTX 9.7.9.21: the random bits are added to the bits of the magnitude that the rounding
    discards; a carry out of that addition rounds away from zero, none truncates.  The
    discarded bits are those below the last place that ``round_pack`` rounds to (the same
    scaling, so subnormal results discard more); the K random bits are added to the top K of
    them (the rest are dropped: they cannot carry past K bits of R + their top K bits).  An
    exact ``x`` (nothing discarded), an infinity or a NaN never carries.
    """
    a = abs(x)
    e = ((bits_from_f64(x) & _ABS) >> 52) - 1023
    ee = max(e, EMIN)
    y = a * f64_from_bits((P - 1 - ee + 1023) << 52)        # the last place is 1
    frac = y - _trunc(y)
    top = np.int64(_trunc(frac * f64_from_bits((K + 1023) << 52)))
    # frac is NaN for an infinite or NaN x: both compares are then false
    return (frac == frac) & (top + R >= (np.int64(1) << K))


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
        r = _bf16_round_i32(builder, *args)
        h = builder.trunc(builder.lshr(r, ir.Constant(ir.IntType(32), 16)), ir.IntType(16))
        return builder.zext(h, ir.IntType(64))
    return types.int64(x, mode), codegen


def _bf16_round_i32(builder, v, m):
    """LLVM IR of ``_bf16_bits_from_f32``: the binary32 bits of ``v`` with the rounding
    increment of ``m`` added (the bf16 result is the upper half)."""
    i32 = ir.IntType(32)
    m = builder.trunc(m, i32) if m.type.width > 32 else m
    b = builder.bitcast(v, i32)

    def c(k):
        return ir.Constant(i32, k)
    neg = builder.icmp_signed("<", b, c(0))
    rn = builder.add(b, builder.add(c(0x7FFF), builder.and_(builder.lshr(b, c(16)), c(1))))
    down = builder.add(b, builder.select(neg, c(0xFFFF), c(0)))     # toward -inf
    up = builder.add(b, builder.select(neg, c(0), c(0xFFFF)))       # toward +inf
    return builder.select(builder.icmp_signed("==", m, c(RN)), rn,
                          builder.select(builder.icmp_signed("==", m, c(RZ)), b,
                                         builder.select(builder.icmp_signed("==", m, c(RM)),
                                                        down, up)))


@intrinsic
def _f16_round_f32(typingctx, x):
    """binary32 ``x`` rounded to binary16 (F16C, nearest-even) and back: a binary32 value."""
    if isinstance(x, types.Float) and x.bitwidth == 32:
        def codegen(context, builder, signature, args):
            return builder.fpext(builder.fptrunc(args[0], ir.HalfType()), ir.FloatType())
        return types.float32(x), codegen
    return None


@intrinsic
def _bf16_round_f32(typingctx, x, mode):
    """binary32 ``x`` rounded to bf16 in ``mode`` (as ``_bf16_bits_from_f32``), as a binary32
    value (the low 16 bits cleared), in 32-bit integer operations."""
    if not (isinstance(x, types.Float) and x.bitwidth == 32 and isinstance(mode, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        r = _bf16_round_i32(builder, *args)
        r = builder.and_(r, ir.Constant(ir.IntType(32), 0xFFFF0000 - (1 << 32)))
        return builder.bitcast(r, ir.FloatType())
    return types.float32(x, mode), codegen


@intrinsic
def _is_nan32(typingctx, x):
    """Is the binary32 ``x`` a NaN?  Read off its bits (an integer compare): a float compare
    with a subnormal operand is slow on x86 vector units, for the whole vector."""
    if isinstance(x, types.Float) and x.bitwidth == 32:
        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            m = builder.and_(builder.bitcast(args[0], i32), ir.Constant(i32, 0x7FFFFFFF))
            return builder.icmp_unsigned(">", m, ir.Constant(i32, 0x7F800000))
        return types.boolean(x), codegen
    return None


_F16_MIN_NORMAL = np.float32(2.0 ** -14)
#: below this a binary32 rounds to nearest-even to an f16 below 2**-14 (the midpoint
#: 2**-14 - 2**-25 between the largest subnormal and 2**-14 rounds up, to the even 2**-14)
F16_TINY_AFTER_RN = np.float32(2.0 ** -14 - 2.0 ** -25)
_BF16_MIN_NORMAL = np.float32(2.0 ** -126)
#: the smallest normals scaled by the exact powers of two that the unbounded tininess test
#: multiplies with (2**10 for f16, 2**64 for bf16)
_F16_SCALE, _F16_MIN_SCALED = np.float32(2.0 ** 10), np.float32(2.0 ** -4)
_BF16_SCALE, _BF16_MIN_SCALED = np.float32(2.0 ** 64), np.float32(2.0 ** -62)


#: binary32's smallest normal (below_normal_onto_grid)
_F32_MIN_NORMAL = 2.0 ** -126


@njit(inline="always")
def below_normal_onto_grid(s, magic, mode):
    """A binary64 ``s`` below binary32's smallest normal in magnitude rounded, in ``mode``
    (that of the FP environment, which must be the same), onto the grid of the last place of
    ``magic`` (1.5 times a power of two far above 2**-126: ``s + magic`` stays in magic's
    binade, its rounding is the one onto that grid, and the difference is exact); ``s``
    itself elsewhere.  The sign is s's, zeros included.  For a subnormal grid (binary32's,
    bf16's) the result then converts to binary32 exactly: the assist-free rounding of the
    kernels that may not produce a subnormal by an inexact binary32 operation (a microcode
    assist per vector on this project's Intel core).  Toward +-inf the addition rounds s
    itself; to nearest and toward zero, whose roundings are symmetric, |s| (s + magic would
    round a negative s away from zero under RZ)."""
    if abs(s) >= _F32_MIN_NORMAL:
        return s
    w = s if mode == RM or mode == RP else abs(s)
    return np.copysign((w + magic) - magic, s)


@njit
def round_pack32(v, EBITS, mode, flush_tiny, nan_from_bits=False):
    """``round_pack`` for a binary32 ``v`` (exact result or round-to-odd proxy at 24 bits)
    into f16 (``EBITS`` 5: round-to-nearest only, by F16C) or bf16 (``EBITS`` 8: any mode).

    24 bits are at least two more than either target has, so this is the same single rounding
    of the exact value as ``round_pack`` (same reference).  bf16 is binary32 with the low 16
    bits dropped, so its rounding is integer arithmetic on the bits (``_bf16_bits_from_f32``).
    The sign and the magnitude are read off the 16-bit result, the NaN and tininess tests are
    float comparisons: everything stays in 32-bit or narrower vector lanes.
    ``flush_tiny`` is ``round_pack``'s (TINY_*).  Unbounded tininess: ``v`` times 2**10 (f16)
    or 2**64 (bf16) is exact and puts the binade below the smallest normal inside the normal
    range of the target, where rounding it to the target is rounding to P bits unbounded; ``v``
    is tiny when that is below the smallest normal times the same power.  (Rounding a
    round-to-odd proxy at 24 bits again to 11 or 8 is the exact value's rounding.)  The f16
    case rounds to nearest, as the whole f16 path does: kernels.fast_ok admits only .rn f16.
    ``nan_from_bits`` (a compile-time constant) tests for a NaN on the bits instead of with a
    float compare, for a ``v`` that may be a subnormal binary32 (the bf16 fma wide lane: a
    float compare with a subnormal operand is slow); otherwise the float compare (one
    instruction fewer).
    Returns ``(magnitude_bits, sign, is_nan)``.
    """
    if EBITS == 5:
        h = _f16_bits_from_f32(v)
        if flush_tiny == TINY_UNBOUNDED:
            tiny = abs(_f16_round_f32(v * _F16_SCALE)) < _F16_MIN_SCALED
        else:
            tiny = abs(v) < _F16_MIN_NORMAL
    else:
        h = _bf16_bits_from_f32(v, mode)
        if flush_tiny == TINY_UNBOUNDED:
            tiny = abs(_bf16_round_f32(v * _BF16_SCALE, mode)) < _BF16_MIN_SCALED
        else:
            tiny = abs(v) < _BF16_MIN_NORMAL
    sign = (h >> 15) & 1
    r = h & 0x7FFF
    is_nan = _is_nan32(v) if nan_from_bits else v != v
    if flush_tiny != TINY_AFTER:
        r = 0 if tiny else r
    r = 0 if is_nan else r
    return r, sign, is_nan
