"""The scalar lane kernel, written once, and its array drivers.

``lane`` computes one lane of any form: decode (with .ftz on inputs), exact operation
(core/exact.py), one rounding (rounding.py), NVIDIA's rules (nvidia.py).  A form's constants (opcode,
formats, rounding mode, modifiers, policy) travel as one frozen structure (``Lane``, built from
the form's Spec by ``lane_consts``) that a Numba closure per form captures as a constant, so
LLVM sees straight-line code for exactly that form and can vectorize it; the compiled machine
code is cached on disk (_jit.jit_cached), keyed by those constants and the sources.  Packed
forms run through the same kernel as arrays of 16-bit lanes; large arrays are split over a
thread pool.  Speed: docs/performance.md.
"""

import os
import sys
import threading
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numba import njit

from ..core import nvidia
from ..core._bitcast import bits_from_f32, f32_from_bits
from ..core._jit import (MXCSR_DEFAULT, MXCSR_OE_UE, MXCSR_RC, PARALLEL_MIN, X86, fpenv_enter,
                         prefetch,
                         fpenv_leave, fpenv_set, jit_cached, split)
from ..core.exact import (HAVE_AVX512FP16, HAVE_F16C, add_odd, add_odd32, decode, decode32, fma32,
                          fma_bf16_wide, half_add, half_fma, half_is_nan, half_min_normal,
                          half_mul, half_sub, half_subnormal, zero_sign_fix, zero_sign_fix32)
from ..core.formats import BF16, F16, FORMATS
from ..core.rounding import (F16_TINY_AFTER_RN, RM, RN, RZ, TINY_AFTER,
                             below_normal_onto_grid, round_pack, round_pack32)

#: the operations the lane computes, by opcode: a row's opcode selects its branch of ``lane``
OP_ADD, OP_SUB, OP_MUL, OP_FMA = 0, 1, 2, 3
OPCODES = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "fma": OP_FMA, "mad": OP_FMA}

#: format code -> Format (the kernels name formats by code: f16 0, bf16 1, f32 2)
_BY_CODE = {f.code: f for f in FORMATS.values()}


class Lane(NamedTuple):
    """A form's constants as the lane functions see them: one frozen structure, built from
    the form's Spec (its row and the policy) by ``lane_consts``.  Each kernel closes over its
    values (a plain tuple, unpacked in this field order by the lane functions, which are
    inlined into it), so Numba compiles them as constants and LLVM folds every test away."""
    OP: int             #: OP_ADD ... OP_FMA
    MIXED: bool         #: the mixed .f32 forms (c is .f32; add/sub take their 2nd operand from c)
    EXACT: bool         #: the float64 sum u + v is always exact (_sum_is_exact)
    AE: int             #: exponent and fraction bits of a and b
    AM: int
    CE: int             #: ... of c
    CM: int
    P: int              #: precision, smallest normal exponent, largest exponent of the result
    EMIN: int
    EMAX: int
    WIDTH: int          #: bits of a result lane
    ONE: int            #: the bits of 1.0 in the result format (.sat's clamp)
    mode: int           #: rounding.RN ... RP
    ftz: bool
    tininess: int       #: the .ftz tininess reading, rounding.TINY_* (policy.ftz_tininess)
    sat: bool
    relu: bool
    oob: bool
    sat_mz: bool        #: policy.sat_minus_zero_to_plus
    relu_mz: bool       #: policy.relu_minus_zero_to_plus
    oob_sign: bool      #: policy.oob_ignores_sign
    oob_c: bool         #: policy.oob_tests_c
    nan_bits: int       #: the canonical NaN of the result format (policy)


def _make_lane():
    """The lane function, specialised per form by the kernels that call it (inlined with its
    callees into each kernel's cached machine code)."""

    def lane(a, b, c, K):
        """One lane: a and b in the (AE, AM) format, c in (CE, CM), result in (P, EMIN, EMAX),
        the form's constants in ``K`` (a ``Lane``).

        The mixed add/sub (``MIXED``) take their second operand from c (``add.f32.f16 d, a, c``).
        ``EXACT`` says that the float64 sum u + v is always exact (see _sum_is_exact), so that it
        is its own round-to-odd proxy.
        """
        # K is a Lane's values by position (see _build); the names are the Lane's fields.
        (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
         relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
        x = decode(a, AE, AM, ftz)
        z = decode(c, CE, CM, ftz) if (OP == OP_FMA or MIXED) else 0.0
        y = decode(b, AE, AM, ftz) if not (MIXED and OP != OP_FMA) else z
        if OP == OP_MUL:
            r = x * y                      # exact: at most 22 significant bits
            u = x
            v = y
        else:
            if OP == OP_FMA:
                u = x * y                  # exact product
                v = z
            elif OP == OP_ADD:
                u = x
                v = y
            else:
                u = x
                v = -y
            r = zero_sign_fix(u + v if EXACT else add_odd(u, v), u, v, mode == RM)
        flush = tininess if ftz else TINY_AFTER
        mag, sign, is_nan = round_pack(r, P, EMIN, EMAX, mode, flush)
        return _finish(a, b, c, mag, sign, is_nan, K)

    # Not disk-cached itself: its code is inlined into each cached kernel, and a cached
    # function with several signatures shares one index between them (see jit_cached).
    return njit(lane, inline="always")


@njit(inline="always")
def _finish(a, b, c, mag, sign, is_nan, K, ftz_after_done=False):
    """NVIDIA's rules on a rounded lane (nvidia.finish), then .oob on its operands.
    ``ftz_after_done``: the caller has flushed results tiny after rounding already."""
    (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
     relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
    ftz_after = ftz and tininess == TINY_AFTER and not ftz_after_done
    bits = nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, ftz_after, sat, relu, sat_mz,
                         relu_mz, nan_bits)
    if oob:
        hit = nvidia.is_oob(a, oob_sign) | nvidia.is_oob(b, oob_sign)
        if oob_c:
            hit = hit | nvidia.is_oob(c, oob_sign)
        bits = 0 if hit else bits
    return bits


#: The SSE control register's FTZ bit (flush tiny results to zero) and its denormal-operand
#: and underflow flags: the bf16 mul's plain pass runs with FTZ and reads the flags (kernel32).
MXCSR_FTZ = 0x8000
MXCSR_DE_UE = 0x12
#: mul_wide's binary64 addend whose last place is bf16's subnormal step 2**-133.
_BF16_SUB_GRID = 1.5 * 2.0 ** -81


@njit(inline="always")
def mul_wide(a, b, K):
    """One lane of the bf16 mul (.rn) in binary64, right on any input (kernel32 runs it on
    the blocks whose plain binary32 pass raised the underflow or denormal-operand flag).
    The exact binary64 product p is converted to binary32 as it is where |p| >= 2**-126
    (binary32's rounding of it, then bf16's, as the plain pass does), and below that it is
    first rounded onto bf16's subnormal grid (multiples of 2**-133, nearest even, by
    rounding.below_normal_onto_grid with 1.5 * 2**-81), which binary32 holds exactly; the
    sign is p's, zeros included.  Only exact conversions produce subnormal binary32 values:
    an inexact one, like a binary32 multiply that underflows, costs this Intel core a
    microcode assist per vector.  The result is read on its bits (round_pack32)."""
    (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
     relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
    p = np.float64(decode32(a, AE, AM, False)) * np.float64(decode32(b, AE, AM, False))
    v = np.float32(below_normal_onto_grid(p, _BF16_SUB_GRID, RN))
    mag, sign, is_nan = round_pack32(v, AE, mode, TINY_AFTER, True)
    return _finish(a, b, a, mag, sign, is_nan, K)


def _make_lane32():
    """The fast lane: ``lane`` computed at binary32 where that is provably the same single
    rounding (docs/semantics.md, "Fast lane"; used for the forms ``fast_ok`` admits).

    - mixed .f32 forms: the result is one IEEE binary32 add/sub of exact binary32 operands,
      so the hardware operation, run with the FP environment's rounding control set to the
      form's mode (``_jit.fpenv_set``), is the correctly rounded result; the fma is the exact
      binary64 product plus c, rounded to binary64 and then to binary32 in that mode, which
      is the same single rounding (see the lane);
    - f16 and bf16 add/sub/mul (.rn only): the binary32 result rounded to nearest again is the
      correctly rounded one (products are exact; a sum of two p-bit numbers rounded first to
      24 >= 2p + 2 bits rounds to nearest innocuously, Figueroa 1995);
    - f16 fma (.rn only): the exact product plus c, rounded to odd at binary32 (TwoSum);
    - bf16 fma (any mode): the product plus c rounded to odd at binary32: by the plain sum
      where the hardware's flags say it was exact (kernel32 checks them), else in binary64
      rounded toward zero and then to binary32's grid (``wide_run``), branch-free, so every
      input takes the same vector path.
    Every rounding to the 16-bit result is ``rounding.round_pack32``.  Where the machine has
    AVX512-FP16 the .rn f16 forms run ``lane16`` instead (``_build32``).
    """

    def lane32(a, b, c, K):
        """One lane, as ``lane`` (bf16 fma: the plain binary32 sum)."""
        (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
         relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
        if MIXED:
            x = decode32(a, AE, AM, False)
            z = decode32(c, CE, CM, False)
            if OP == OP_FMA:
                # In binary64, never binary32's fma: a subnormal binary32 operand or result
                # costs this Intel core a microcode assist per vector (the hard mix ran at 0.2x
                # to 0.3x the roofline), and binary64 sees none (conversions run at full
                # speed).  The product p of two f16/bf16 values is exact in binary64 (at most
                # 22 bits).  The sum s = p + c is rounded twice, in the form's mode (CSR):
                # to binary64, then to binary32.  In a directed mode that is the exact sum's
                # rounding (directed roundings onto nested grids compose).  To nearest, s is
                # inexact only when the span of the two terms' bits exceeds 53, so the smaller
                # term is below 2**-29 of the larger (it has at most 24 bits); the larger is a
                # binary32 value, or a p below binary32's normal range and then the span is at
                # most 16 + 23 bits; s is then closer to the larger term than a quarter of its
                # binary32 ulp, never a binary32 midpoint, and the second rounding is the
                # exact sum's.  (tests/test_assist_free.py)
                p = np.float64(x) * np.float64(decode32(b, AE, AM, False))
                v = np.float32(p + np.float64(z))
            elif OP == OP_ADD:
                v = x + z
            else:
                v = x - z
            vb = bits_from_f32(v)
            sign = (vb >> 31) & 1
            mag = vb & 0x7FFFFFFF
            is_nan = mag > 0x7F800000
        else:
            flush = tininess if ftz else TINY_AFTER
            x = decode32(a, AE, AM, ftz)
            y = decode32(b, AE, AM, ftz)
            if OP == OP_FMA:
                # exact for f16; for bf16 unless the flags say otherwise (kernel32)
                p32 = x * y
                z32 = decode32(c, CE, CM, ftz)
                v = zero_sign_fix32(add_odd32(p32, z32), p32, z32, mode == RM)
            elif OP == OP_MUL:
                v = x * y
            elif OP == OP_ADD:
                v = x + y
            else:
                v = x - y
            mag, sign, is_nan = round_pack32(v, AE, mode, flush, OP == OP_MUL and AE == 8)
            if ftz and tininess == TINY_AFTER and AE == 5:
                # .ftz, tininess after rounding (nvidia.finish tests the rounded bits): read
                # off the binary32 value instead, the same test for f16's nearest-even
                # rounding (docs/semantics.md, "Fast lane"); an integer compare of the 16-bit
                # result made LLVM widen the lane's integer work to 64 bits (4x the vectors)
                mag = 0 if abs(v) < F16_TINY_AFTER_RN else mag
                return _finish(a, b, c, mag, sign, is_nan, K, True)
        return _finish(a, b, c, mag, sign, is_nan, K)

    return njit(lane32, inline="always")


def _make_lane16():
    """The f16 lane on AVX512-FP16 (``HAVE_AVX512FP16``; docs/semantics.md, "Fast lane"): the
    .rn f16 forms' add, sub, mul and fma as one binary16 instruction each, which rounds the
    exact result once to nearest with IEEE's subnormals, overflow and zeros, 32 lanes per
    512-bit vector and no conversion.  Then .ftz and NVIDIA's rules on the 16-bit result.

    .ftz flushes a result that rounded to a subnormal (every tininess reading calls it tiny:
    it is below 2**-14 - 2**-25, so below 2**-14 and rounded to 11 bits unbounded below it
    too).  A result of magnitude 2**-14 is tiny or not by the exact value under the before and
    unbounded readings; an add or sub that lands there is exact (f16 sums near 2**-14 are
    multiples of 2**-24, so f16 numbers), a mul or fma may not be: ``lane16`` says so, and the
    kernel recomputes such a block on ``lane32`` (kernel32)."""

    def lane16(a, b, c, K):
        """One lane of an f16 .rn form: (its bits, is the rounded magnitude 2**-14)."""
        (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
         relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
        x = np.int64(a) & 0xFFFF
        y = np.int64(b) & 0xFFFF
        z = np.int64(c) & 0xFFFF
        if ftz:                         # subnormal inputs to signed zeros, on the bits
            x = (x & 0x8000) if (x & 0x7C00) == 0 else x
            y = (y & 0x8000) if (y & 0x7C00) == 0 else y
            z = (z & 0x8000) if (z & 0x7C00) == 0 else z
        if OP == OP_FMA:
            h = half_fma(x, y, z)
        elif OP == OP_MUL:
            h = half_mul(x, y)
        elif OP == OP_ADD:
            h = half_add(x, y)
        else:
            h = half_sub(x, y)
        # the tests as float compares (integer compares of the bits widen the lanes to 64 bits)
        r = h & 0x7FFF
        sign = (h >> 15) & 1
        is_nan = half_is_nan(h)
        if ftz:
            r = 0 if half_subnormal(h) else r
        return _finish(a, b, c, r, sign, is_nan, K, True), half_min_normal(h)

    return njit(lane16, inline="always")


lane16 = _make_lane16()


#: The FP environment of the wide lane: round-toward-zero (its rounded operations, the binary64
#: sum and its conversion to binary32, are made round-to-odd from it; arith.fma_bf16_wide),
#: exceptions masked, no flushing.
MXCSR_WIDE = MXCSR_DEFAULT | (MXCSR_RC[RZ] << 13)
#: Lanes per chunk of ``wide_run`` (its buffer, 1 KB, stays in L1).
WIDE_CHUNK = 256


#: Software prefetch in the fast lane's kernels (docs/performance.md, issue 30): the loops run
#: by chunks of PF_CHUNK lanes, and before each chunk ask for the operands PF_AHEAD lanes
#: further on.  On arrays beyond the last-level cache the hardware's own prefetchers left the
#: bf16 fma loop at 2.1 G lanes/s where it computes 3.3 in cache; asked ahead, it runs at the
#: memory's pace.  Chunks of 256 16-bit lanes are 8 cache lines of each operand.
#: ``PTXFP_NO_PREFETCH=1`` keeps the chunks and asks for nothing.
PF_CHUNK = 256
PF_AHEAD = 2048
PREFETCH = os.environ.get("PTXFP_NO_PREFETCH", "") in ("", "0")


@njit(inline="always")
def prefetch_lanes(a, b, c, s, n, STEP, B, C, C_STEP):
    """Prefetch the lanes ``[s, s + n)`` of a (and of b where ``B``, of c where ``C``),
    PF_AHEAD lanes on, one request per 64-byte line: ``STEP`` lanes of a and b, ``C_STEP`` of
    c (a hint: past the end of an array it does nothing).  The steps must be constants: one
    computed from the arrays' itemsize halved the speed of the loop after it."""
    if PREFETCH:
        q = s + PF_AHEAD
        for j in range(q, q + n, STEP):
            prefetch(a, j)
            if B:
                prefetch(b, j)
            if C and C_STEP == STEP:
                prefetch(c, j)
        if C and C_STEP != STEP:
            for j in range(q, q + n, C_STEP):
                prefetch(c, j)


@njit(inline="always")
def ahead(a, b, c, s, n, K):
    """``prefetch_lanes`` for the operands that the form of ``K`` reads, all of 16-bit lanes
    (32 to a line; the mixed forms do not prefetch): add d, a, b reads no c."""
    (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
     relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
    prefetch_lanes(a, b, c, s, n, 32, True, OP == OP_FMA, 32)


@njit(inline="always")
def wide_run(a, b, c, o, K, v):
    """bf16 fma on the wide lane, right on any input (docs/semantics.md, "Fast lane"):
    ``o[i]`` for the bf16 lanes ``a[i], b[i], c[i]`` of the form ``K``, by chunks of
    ``v.size`` lanes (each asking for the operands of a later one first, ``ahead``), two
    loops a chunk: the first writes arith.fma_bf16_wide's binary32 bits
    to ``v``, the second rounds them to bf16 and applies NVIDIA's rules (one loop with both
    ran 0.92x as fast).  The FP environment must be ``MXCSR_WIDE``.  bf16 fma has no .ftz, so
    the operands are the bits' values."""
    (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
     relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
    for s in range(0, o.size, v.size):
        n = min(v.size, o.size - s)
        ab = a[s:s + n]
        bb = b[s:s + n]
        cb = c[s:s + n]
        ob = o[s:s + n]
        vb = v[:n]
        ahead(ab, bb, cb, 0, n, K)
        for i in range(n):
            vb[i] = bits_from_f32(fma_bf16_wide(ab[i], bb[i], cb[i], mode == RM))
        for i in range(n):
            # a subnormal binary32 is read on its bits (its NaN test too)
            mag, sign, is_nan = round_pack32(f32_from_bits(vb[i]), AE, mode, TINY_AFTER, True)
            ob[i] = _finish(ab[i], bb[i], cb[i], mag, sign, is_nan, K)


@dataclass(frozen=True)
class Spec:
    """Everything that selects one compiled kernel."""
    op: int
    lane_fmt: int       # format code of a and b lanes
    c_fmt: int          # format code of c (f32 for the mixed forms)
    res_fmt: int        # format code of the result lanes
    lanes: int          # 1, or 2 for .f16x2/.bf16x2
    mode: int
    ftz: bool
    sat: bool
    relu: bool
    oob: bool
    tininess: int       # .ftz tininess reading, rounding.TINY_* (policy.ftz_tininess)
    sat_mz: bool
    relu_mz: bool
    oob_sign: bool
    oob_c: bool
    nan_bits: int


def _sum_is_exact(op, mixed, lane_fmt):
    """Is every float64 sum the form makes exact?  For add/sub of two numbers of one format,
    both are multiples of the smallest subnormal 2**(EMIN-P+1) below 2**(EMAX+1), so the sum
    spans at most EMAX + 2 - (EMIN - P + 1) bits: 41 for f16, which float64 holds (not so for
    bf16, nor for the products of fma, nor for the mixed forms' f32 operand)."""
    if op not in (OP_ADD, OP_SUB) or mixed:
        return False
    f = _BY_CODE[lane_fmt]
    return f.emax + 2 - (f.emin - f.precision + 1) <= 53


lane = _make_lane()
lane32 = _make_lane32()

#: Use the binary32 fast lane where it applies (``PTXFP_REFERENCE=1`` turns it off: every
#: form then runs the float64 lane; same bits, tests compare the two).
FAST = os.environ.get("PTXFP_REFERENCE", "") in ("", "0")


def fast_ok(spec):
    """Does ``lane32`` compute ``spec``'s form (see _make_lane32 for why each one may)?

    It needs the x86 SSE control register (the mixed forms' rounding mode) and F16C (f16).
    """
    if not (X86 and HAVE_F16C):
        return False
    if spec.c_fmt != spec.lane_fmt:                      # mixed .f32 forms: every mode
        return True
    if spec.lane_fmt == BF16.code and spec.op == OP_FMA:  # bf16 fma: every mode (no .ftz:
        return not spec.ftz                              # the wide lane reads the bits)
    return spec.mode == RN and spec.lane_fmt in (F16.code, BF16.code)


def lane_consts(spec):
    """The ``Lane`` constants of the form of ``spec``."""
    MIXED = spec.c_fmt != spec.lane_fmt
    ab, c, res = _BY_CODE[spec.lane_fmt], _BY_CODE[spec.c_fmt], _BY_CODE[spec.res_fmt]
    return Lane(
        OP=spec.op, MIXED=MIXED, EXACT=_sum_is_exact(spec.op, MIXED, spec.lane_fmt),
        AE=ab.exp_bits, AM=ab.man_bits, CE=c.exp_bits, CM=c.man_bits,
        P=res.precision, EMIN=res.emin, EMAX=res.emax, WIDTH=res.width, ONE=res.one,
        mode=spec.mode, ftz=spec.ftz, tininess=spec.tininess, sat=spec.sat, relu=spec.relu,
        oob=spec.oob, sat_mz=spec.sat_mz, relu_mz=spec.relu_mz, oob_sign=spec.oob_sign,
        oob_c=spec.oob_c, nan_bits=spec.nan_bits)


def _build(spec):
    # The kernel closes over the Lane's values as a plain tuple: Numba then compiles the same
    # loop as for 23 separate constants, where a NamedTuple constant gave slower code for the
    # mixed and packed forms (benchmarks/reference_lane.py: 0.6x to 0.9x).
    K = tuple(lane_consts(spec))

    def kernel(a, b, c, out, start, stop):
        # Slicing first lets the loop index start at 0, so LLVM drops Numba's negative-index
        # wraparound and the loads become plain vector loads instead of gathers.
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        env = fpenv_enter()
        for i in range(o.size):
            o[i] = lane(a[i], b[i], c[i], K)
        fpenv_leave(env)

    return jit_cached(kernel, spec, nogil=True)


def _build32(spec, half=None):
    """The kernel of ``spec`` on the fast lane (``fast_ok(spec)`` must hold).  ``half``: use
    lane16 for the .rn f16 forms (default: where the machine has AVX512-FP16; False for the
    binary32 lane, as on a machine without it)."""
    K = tuple(lane_consts(spec))     # by position: see _build
    MIXED = spec.c_fmt != spec.lane_fmt
    # Only the mixed forms round in the environment's mode; the others need round-to-nearest.
    CSR = MXCSR_DEFAULT | (MXCSR_RC[spec.mode] << 13 if MIXED else 0)
    BLOCKS = spec.op == OP_FMA and not MIXED and spec.lane_fmt == BF16.code
    # the bf16 mul by blocks too: the plain pass with FTZ set (an inexact underflow then costs
    # no microcode assist), exact unless the underflow flag rose; a block that raised it, or
    # the denormal-operand flag (subnormal factors cost assists when they are many), runs on
    # mul_wide in the default environment
    MUL_BLOCKS = spec.op == OP_MUL and not MIXED and spec.lane_fmt == BF16.code
    if MUL_BLOCKS:
        CSR |= MXCSR_FTZ
    FLAGS = MXCSR_DE_UE if MUL_BLOCKS else MXCSR_OE_UE
    WIDE_CSR = MXCSR_DEFAULT if MUL_BLOCKS else MXCSR_WIDE
    # bf16 fma's blocks: each costs two loads of the SSE control register, which on this
    # Intel core (Sapphire Rapids) held normal values 20% to 30% below 4,096-lane blocks'
    # rate at 1,024 (docs/performance.md, issue 30)
    BLOCK = 4096
    HALF_BLOCK = 1024
    WIDE_RUN = 15
    WIDE_RUN_MAX = 255
    # f16 forms on AVX512-FP16 (lane16); HALF_CHECK: a .ftz mul or fma whose tininess reading
    # is not "after rounding" recomputes a block with a result of magnitude 2**-14 on lane32
    HALF = ((HAVE_AVX512FP16 if half is None else half) and not MIXED
            and spec.lane_fmt == F16.code and spec.mode == RN)
    HALF_CHECK = (HALF and spec.ftz and spec.tininess != TINY_AFTER
                  and spec.op in (OP_MUL, OP_FMA))
    CH = PF_CHUNK

    def kernel32(a, b, c, out, start, stop):
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        env = fpenv_set(np.int32(CSR))
        if HALF and not HALF_CHECK:
            # no prefetch: this loop keeps up with the memory as it is (0.9x to 1.0x the
            # roofline) and by chunks it ran 5% to 8% slower
            for i in range(o.size):
                o[i] = lane16(a[i], b[i], c[i], K)[0]
        elif HALF_CHECK:
            for s in range(0, o.size, HALF_BLOCK):
                n = min(HALF_BLOCK, o.size - s)
                ab = a[s:s + n]
                bb = b[s:s + n]
                cb = c[s:s + n]
                ob = o[s:s + n]
                ahead(ab, bb, cb, 0, n, K)
                edge = False
                for i in range(n):
                    bits, at_min = lane16(ab[i], bb[i], cb[i], K)
                    ob[i] = bits
                    edge = edge | at_min
                if edge:
                    for i in range(n):
                        ob[i] = lane32(ab[i], bb[i], cb[i], K)
        elif MIXED:
            # no chunks and no prefetch: the mixed forms keep up with the memory without
            # them (by chunks they ran 0.95x as fast)
            for i in range(o.size):
                o[i] = lane32(a[i], b[i], c[i], K)
        elif not (BLOCKS or MUL_BLOCKS):
            for s in range(0, o.size, CH):
                n = min(CH, o.size - s)
                ab = a[s:s + n]
                bb = b[s:s + n]
                cb = c[s:s + n]
                ob = o[s:s + n]
                ahead(ab, bb, cb, 0, n, K)
                for i in range(n):
                    ob[i] = lane32(ab[i], bb[i], cb[i], K)
        else:
            # bf16 fma, by blocks of BLOCK lanes.  The plain binary32 pass is exact unless a
            # product is tiny and inexact or overflows, or a sum overflows; exactly those raise
            # the hardware's sticky underflow/overflow flags, and nothing else in the pass can
            # (TwoSum's steps are exact, the rest is integer work).  A block that raised one is
            # recomputed on the wide lane (right on any input, about 0.65x as fast), and so
            # are the next WIDE_RUN blocks without trying the plain pass first: inputs that
            # leave binary32's range (random bits) are usually spread over the whole array.
            # Each time the plain pass right after such a run raises a flag again, the next
            # run is twice as long (up to WIDE_RUN_MAX blocks); a clean block resets it.
            # The wide lane runs under its own FP environment (MXCSR_WIDE); the next plain
            # pass loads CSR again.  v: the wide lane's buffer (wide_run).
            v = np.empty(WIDE_CHUNK, np.int32)
            run_left = 0
            run_len = WIDE_RUN
            for s in range(0, o.size, BLOCK):
                n = min(BLOCK, o.size - s)
                ab = a[s:s + n]
                bb = b[s:s + n]
                cb = c[s:s + n]
                ob = o[s:s + n]
                redo = run_left > 0
                if not redo:
                    fpenv_set(np.int32(CSR))              # clears the flags
                    for u in range(0, n, CH):
                        m = min(CH, n - u)
                        ab2 = ab[u:u + m]
                        bb2 = bb[u:u + m]
                        cb2 = cb[u:u + m]
                        ob2 = ob[u:u + m]
                        ahead(ab2, bb2, cb2, 0, m, K)
                        for i in range(m):
                            ob2[i] = lane32(ab2[i], bb2[i], cb2[i], K)
                    if fpenv_set(np.int32(CSR)) & FLAGS:
                        redo = True
                        run_left = run_len + 1
                        run_len = min(2 * run_len + 1, WIDE_RUN_MAX)
                    else:
                        run_len = WIDE_RUN
                if redo:
                    run_left -= 1
                    fpenv_set(np.int32(WIDE_CSR))
                    if MUL_BLOCKS:
                        for u in range(0, n, CH):
                            m = min(CH, n - u)
                            ab2 = ab[u:u + m]
                            bb2 = bb[u:u + m]
                            ob2 = ob[u:u + m]
                            ahead(ab2, bb2, bb2, 0, m, K)
                            for i in range(m):
                                ob2[i] = mul_wide(ab2[i], bb2[i], K)
                    else:
                        wide_run(ab, bb, cb, ob, K, v)
        fpenv_leave(env)

    return jit_cached(kernel32, ("lane32", spec) + (("half",) if HALF else ())
                      + ("pf", PREFETCH, PF_CHUNK, PF_AHEAD), nogil=True)


_kernels = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class AsF16:
    """What selects the kernel of a scalar ``fma.<mode>{.oob}{.relu}.bf16`` as ptxas 13.0
    compiles it (``as_f16_kernel``); ``lanes`` as a Spec's, for ``run_with``."""
    mode: int           # the spelling's rounding mode (the f32 fma's)
    nan_bits: int       # the canonical NaN of cvt.rn.f16.f32 (policy)
    lanes: int = 1


#: Lanes per chunk of the ``as_f16_kernel`` (its binary32 buffer, 4 KB, stays in L1).
AS_F16_CHUNK = 1024


def as_f16_ok():
    """Can ``as_f16_kernel`` run here?  It needs the SSE control register (the fma's mode)
    and F16C (the f16 conversions); ``PTXFP_REFERENCE=1`` turns it off too (the composition
    of the three forms runs instead: arith._f16_composition)."""
    return FAST and X86 and HAVE_F16C


def as_f16_kernel(key):
    """The kernel of the scalar undocumented bf16 fma as ptxas 13.0 compiles it, fused:
    ``cvt.rn.f16.f32(fma.<mode>.f32(cvt.f32.f16(a), cvt.f32.f16(b), cvt.f32.f16(c)))``
    (docs/ptxas-findings.md, docs/semantics.md), ``key`` an ``AsF16``.

    The three widenings are exact (F16C), and every f16 product is an exact binary32 of at
    least 2**-48 in magnitude, so every value the fma sees or makes is a binary32 normal, zero,
    infinity or NaN: the hardware's binary32 fma, with the SSE control register's rounding
    control set to the mode, is ``fma.<mode>.f32``'s one rounding (IEEE 754's sign of an exact
    zero included), and no flag or subnormal arises.  Its result is rounded to f16 to nearest
    (F16C, in the default environment) and a NaN becomes ``nan_bits``.  ``.oob`` and ``.relu``
    are dropped, as ptxas drops them.  Two loops a chunk, each under its own control register,
    the first writing the binary32 sums to a buffer.  The caller (arith._Form.kernel) uses it
    only where the policy's binary32 NaNs of the two inner forms are NaNs, so that a NaN stays a
    NaN through them, as in the composition."""
    k = _kernels.get(key)
    if k is not None:
        return k
    CSR = MXCSR_DEFAULT | (MXCSR_RC[key.mode] << 13)
    NAN_BITS = key.nan_bits
    CHUNK = AS_F16_CHUNK
    P, WIDTH, ONE = F16.precision, F16.width, F16.one

    def as_f16(a, b, c, out, start, stop):
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        v = np.empty(CHUNK, np.float32)
        env = fpenv_set(np.int32(MXCSR_DEFAULT))
        for s in range(0, o.size, CHUNK):
            n = min(CHUNK, o.size - s)
            ab = a[s:s + n]
            bb = b[s:s + n]
            cb = c[s:s + n]
            ob = o[s:s + n]
            vb = v[:n]
            fpenv_set(np.int32(CSR))
            for u in range(0, n, PF_CHUNK):
                m = min(PF_CHUNK, n - u)
                ab2 = ab[u:u + m]
                bb2 = bb[u:u + m]
                cb2 = cb[u:u + m]
                vb2 = vb[u:u + m]
                prefetch_lanes(ab2, bb2, cb2, 0, m, 32, True, True, 32)
                for i in range(m):
                    vb2[i] = fma32(decode32(ab2[i], 5, 10, False),
                                   decode32(bb2[i], 5, 10, False),
                                   decode32(cb2[i], 5, 10, False))
            fpenv_set(np.int32(MXCSR_DEFAULT))
            for i in range(n):
                mag, sign, is_nan = round_pack32(vb[i], 5, RN, TINY_AFTER)
                ob[i] = nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, False, False, False,
                                      False, False, NAN_BITS)
        fpenv_leave(env)

    with _lock:
        k = _kernels.get(key)
        if k is None:
            k = _kernels[key] = jit_cached(as_f16, ("as_f16", key, PREFETCH), nogil=True)
            _parallel_min[key] = PARALLEL_MIN_FAST
    return k


_LITTLE = sys.byteorder == "little"


def kernel_for(spec):
    """The compiled kernel of ``spec`` (built once per process, machine code cached on disk).

    Packed and scalar forms share one kernel: a packed operand is run as its array of 16-bit
    lanes (see ``run``).
    """
    k = _kernels.get(spec)
    if k is None:
        with _lock:
            k = _kernels.get(spec)
            if k is None:
                one = replace(spec, lanes=1)
                k = _kernels.get(one)
                if k is None:
                    fast = FAST and fast_ok(one)
                    k = _kernels[one] = _build32(one) if fast else _build(one)
                    if fast:
                        light = one.op != OP_FMA and one.c_fmt == one.lane_fmt
                        _parallel_min[one] = PARALLEL_MIN_LIGHT if light else PARALLEL_MIN_FAST
                _kernels[spec] = k
                _parallel_min[spec] = _parallel_min.get(one, PARALLEL_MIN)
    return k


#: Arrays of at least this many lanes are split over threads: _jit.PARALLEL_MIN for the float64
#: lane; for the fast lane's kernels, which do a million lanes in 0.2 to 0.5 ms, more.
#: The same for the fast lane's kernels, which do a million lanes in 0.2 to 0.5 ms: split at
#: 1M elements they ran 0.76x to 0.89x of one thread when calls alternate with other work.
PARALLEL_MIN_FAST = 1 << 22
#: The same for the lightest of them (add/sub/mul, ~10 G lanes/s in cache here, and bound by
#: memory bandwidth beyond it): split at 3M elements they ran 0.88x.
PARALLEL_MIN_LIGHT = 1 << 23
#: spec -> its threshold (PARALLEL_MIN unless set by kernel_for)
_parallel_min = {}
_HALF_OF = {4: np.dtype(np.uint16), 8: np.dtype(np.uint32)}


def _lanes16(x):
    """A uint32 array of packed lanes as its uint16 lanes (a uint64 .f32x2 array as its
    uint32 lanes), lane 0 first, without a copy."""
    half = _HALF_OF[x.dtype.itemsize]
    if _LITTLE:
        return x.view(half)
    k = 8 * half.itemsize
    return np.stack([x & ((1 << k) - 1), x >> k], axis=-1).astype(half).reshape(-1)


def run_with(k, spec, a, b, c, out, n):
    """Fill ``out`` (1-D, ``n`` elements) from the 1-D operand arrays with the kernel ``k``
    of ``spec`` (packed forms run as their arrays of 16-bit lanes)."""
    if spec.lanes == 2:
        res = out
        a, b, c = _lanes16(a), _lanes16(b), _lanes16(c)
        out = out.view(a.dtype) if _LITTLE else np.empty(2 * n, a.dtype)
        n *= 2
    if n < PARALLEL_MIN or n < _parallel_min.get(spec, PARALLEL_MIN):
        k(a, b, c, out, 0, n)
    else:
        _run_parallel(k, a, b, c, out, n)
    if spec.lanes == 2:
        if not _LITTLE:
            pairs = out.reshape(-1, 2).astype(res.dtype)
            res[...] = pairs[:, 0] | (pairs[:, 1] << (8 * a.itemsize))
        return res
    return out


def _run_parallel(k, a, b, c, out, n):
    split(lambda start, stop: k(a, b, c, out, start, stop), n)


def _make_round_array():
    def round_array(x, out, P, EMIN, EMAX, WIDTH, nan_bits):
        env = fpenv_enter()
        for i in range(x.size):
            mag, sign, is_nan = round_pack(x[i], P, EMIN, EMAX, RN, TINY_AFTER)
            out[i] = nan_bits if is_nan else ((sign << (WIDTH - 1)) | mag)
        fpenv_leave(env)

    return jit_cached(round_array, "round_array", nogil=True)


_round_array = _make_round_array()


def round_f64_array(x, fmt_code, nan_bits=0x7FFF):
    """Round float64 values to a format with round-to-nearest-even (used by encode.to_bits)."""
    f = _BY_CODE[fmt_code]
    out = np.empty(x.size, np.dtype(f"uint{f.width}"))
    _round_array(np.ascontiguousarray(x, dtype=np.float64), out, f.precision, f.emin, f.emax,
                 f.width, nan_bits)
    return out
