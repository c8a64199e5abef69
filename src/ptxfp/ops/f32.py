"""add, sub, mul, fma (and mad) on .f32 and .f32x2, bit-exact: the one place their
arithmetic lives.

Each lane goes through the one rounding core, never through a binary32 operation:

- the operands are decoded exactly into float64 (``arith.decode``; .ftz flushes a subnormal
  input to a zero of its sign first);
- a product of two f32 numbers is exact in float64: at most 24 + 24 = 48 significant bits, and
  an exponent between 2**-298 and 2**256, inside float64's normal range, so ``x * y`` is the
  exact product (tests/test_minmax_f32.py checks it against MPFR);
- a sum (add/sub, and fma's product plus c) is formed as its round-to-odd proxy at float64
  (``arith.add_odd``: TwoSum with a sticky last bit), which rounds to any format of at most 51
  bits exactly as the exact sum does (Boldo and Melquiond 2008);
- ``rounding.round_pack`` rounds that once into f32 in the form's mode (.rn/.rz/.rm/.rp), with
  gradual underflow, IEEE overflow per mode and the .ftz tininess of ``policy.ftz_tininess``;
  ``nvidia.finish`` applies .ftz (after rounding), .sat and the canonical NaN
  (``policy.canonical_nan_f32``).

``.f32x2`` (PTX 8.6, sm_100) is two independent f32 lanes of a 64-bit operand, lane 0 in bits
31:0: the kernels run on the operands' uint32 lanes (``kernels.run_with``).  ``mad.rnd.f32`` is
``fma.rnd.f32`` (manual 9.7.3, mad: with a rounding modifier, as sm_20 and later require, mad.f32
is the fused multiply-add).

Kernels are one Numba closure per form (constants frozen, machine code cached on disk as in
kernels.py) and vectorise.  Speed: docs/performance.md ("f32 and min/max").

The fast route (x86, not under ``PTXFP_REFERENCE=1``; docs/semantics.md, "Fast lane") gives
the same bits faster.  By blocks of 4,096 lanes, a plain pass runs the hardware's own binary32
operation (``lane_hw``), which IEEE 754 makes the exact result rounded once in the mode of the
SSE control register, set to the form's, with FTZ set (a tiny result flushed costs no
microcode assist) and, for .ftz, DAZ (subnormal inputs read as zeros of their sign, as .ftz
reads them).  It is right unless the underflow flag rose (a result was flushed: it is redone)
or, for .ftz, a result came out at 2**-126 (the tininess readings differ there only); mul and
fma redo a block that raised the denormal-operand flag too (subnormal factors cost assists when
they are many).  A block to redo, and a run of blocks after it (mul/fma: 15, add/sub: none,
doubling while the flags recur, as the bf16 fma's blocks), runs ``lane_wide`` (binary64, no operation that underflows, see there), or
``lane`` (the float64 route above) for .ftz under the before-rounding tininess reading.
"""

from __future__ import annotations

from typing import Any

from numba import njit

import numpy as np

from ..core import nvidia
from ..core._bitcast import bits_from_f32
from ..core.exact import add_odd, decode, decode32, fma32, zero_sign_fix
from ..core.formats import F32
from ..core._jit import (MXCSR_DEFAULT, MXCSR_RC, X86, fpenv_enter, fpenv_leave, fpenv_set,
                         jit_cached)
from .kernels import (FAST, MXCSR_FTZ, OP_ADD, OP_FMA, OP_MUL, PF_CHUNK, PREFETCH,
                      prefetch_lanes)
from ..core.rounding import (RM, RN, TINY_AFTER, TINY_BEFORE, TINY_UNBOUNDED,
                             below_normal_onto_grid, round_pack)

__all__ = ["handles", "kernel_for", "lane"]

_P, _EMIN, _EMAX, _WIDTH, _ONE = F32.precision, F32.emin, F32.emax, F32.width, F32.one


@njit(inline="always")
def lane(a, b, c, OP, mode, ftz, tininess, sat, sat_mz, nan_bits):  # type: ignore[no-untyped-def]
    """One f32 lane of add/sub (a, b), mul (a, b) or fma (a, b, c)."""
    x = decode(a, 8, 23, ftz)
    y = decode(b, 8, 23, ftz)
    if OP == OP_MUL:
        r = x * y                                  # exact: 48 bits, no overflow in float64
    else:
        if OP == OP_FMA:
            u = x * y                              # exact product
            v = decode(c, 8, 23, ftz)
        elif OP == OP_ADD:
            u = x
            v = y
        else:
            u = x
            v = -y
        r = zero_sign_fix(add_odd(u, v), u, v, mode == RM)
    flush = tininess if ftz else TINY_AFTER
    mag, sign, is_nan = round_pack(r, _P, _EMIN, _EMAX, mode, flush)
    return nvidia.finish(mag, sign, is_nan, _P, _WIDTH, _ONE, ftz and tininess == TINY_AFTER,
                         sat, False, sat_mz, False, nan_bits)


#: The SSE control register's DAZ bit, and its underflow and denormal-operand flags.
MXCSR_DAZ = 0x40
_UE = 0x10
_DE = 0x02
#: binary32's smallest normal, its bits, and the binary64 addend whose last place is binary32's
#: subnormal step 2**-149 (lane_wide)
_MIN_NORMAL = 2.0 ** -126
_MIN_NORMAL_BITS = 0x00800000
_SUB_GRID = 1.5 * 2.0 ** -97
#: lane_wide's IEEE tininess test: 2**64, 2**-64, 2**-127, and 2**-126 scaled by 2**64
_TWO64 = 2.0 ** 64
_TWO_M64 = 2.0 ** -64
_HALF_MIN_NORMAL = 2.0 ** -127
_MIN_NORMAL_SCALED = np.float32(2.0 ** -62)
#: Blocks of the fast route, and the runs of redone blocks (as kernels' bf16 fma blocks).
_BLOCK = 4096
_RUN = 15
_RUN_MAX = 255


@njit(inline="always")
def _bits_out(v, sat, sat_mz, nan_bits):  # type: ignore[no-untyped-def]
    """A binary32 result (read on its bits: it may be subnormal) through nvidia.finish."""
    vb: int = bits_from_f32(v)  # type: ignore[call-arg]
    mag = vb & 0x7FFFFFFF
    return nvidia.finish(mag, (vb >> 31) & 1, mag > 0x7F800000, _P, _WIDTH, _ONE, False, sat,
                         False, sat_mz, False, nan_bits), mag


@njit(inline="always")
def lane_hw(a, b, c, OP, sat, sat_mz, nan_bits):  # type: ignore[no-untyped-def]
    """One lane as the hardware's binary32 operation in the control register's mode (the
    fast route's plain pass): (its bits, is its magnitude 2**-126)."""
    x = decode32(a, 8, 23, False)
    y = decode32(b, 8, 23, False)
    if OP == OP_MUL:
        v = x * y
    elif OP == OP_FMA:
        v = fma32(x, y, decode32(c, 8, 23, False))  # type: ignore[call-arg]
    elif OP == OP_ADD:
        v = x + y
    else:
        v = x - y
    bits, mag = _bits_out(v, sat, sat_mz, nan_bits)
    return bits, mag == _MIN_NORMAL_BITS


@njit(inline="always")
def lane_wide(a, b, c, OP, mode, ftz, tininess, sat, sat_mz,  # type: ignore[no-untyped-def]
              nan_bits):
    """One lane in binary64, right on any input, with the control register's mode set to the
    form's and FTZ/DAZ off (.ftz: tininess after rounding, IEEE's or on the subnormal result,
    not before rounding, which ``lane`` keeps).  The binary32 operands are exact
    binary64 values, products exact (48 bits).  s is the result rounded to binary64 in the
    mode: for .rn fma the product plus c rounded to odd instead (add_odd; 53 >= 24 + 2), for
    .rn add/sub the nearest sum (rounding a sum to 53 and then to 24 bits is innocuous,
    53 >= 2 * 24 + 2: Figueroa 1995), for the directed modes s rounded again in the same mode
    is the exact result's rounding (nested grids).  At or above 2**-126 s is converted to
    binary32 in the mode; below, rounding.below_normal_onto_grid puts it on binary32's
    subnormal grid in the mode first (the last place of 1.5 * 2**-97), and the conversion is
    exact.  No operation here underflows inexactly: on the Intel core of
    docs/performance.md each such vector costs a microcode assist.  .ftz: subnormal
    inputs read as zeros of their sign (on the bits); a result is tiny under IEEE's reading
    when s, rounded to 24 bits in the mode with an unbounded exponent, is below 2**-126: s
    times 2**64 converted (a normal binary32 for |s| >= 2**-127, below which s is tiny
    anyway), and s's rounding is the exact result's (as above); tiny results become zeros of
    their sign, subnormal ones under the after-rounding reading (nvidia.finish)."""
    x = np.float64(decode32(a, 8, 23, ftz))
    y = np.float64(decode32(b, 8, 23, ftz))
    if OP == OP_MUL:
        s = x * y
    elif OP == OP_FMA:
        p = x * y
        z = np.float64(decode32(c, 8, 23, ftz))
        s = add_odd(p, z) if mode == RN else p + z
    elif OP == OP_ADD:
        s = x + y
    else:
        s = x - y
    v = np.float32(below_normal_onto_grid(s, _SUB_GRID, mode))
    vb: int = bits_from_f32(v)  # type: ignore[call-arg]
    mag = vb & 0x7FFFFFFF
    if ftz and tininess == TINY_UNBOUNDED:
        t = s * _TWO64 if _HALF_MIN_NORMAL <= abs(s) < _MIN_NORMAL else _TWO_M64
        tiny = abs(s) < _MIN_NORMAL and (abs(s) < _HALF_MIN_NORMAL
                                         or abs(np.float32(t)) < _MIN_NORMAL_SCALED)
        mag = 0 if tiny else mag
    return nvidia.finish(mag, (vb >> 31) & 1, mag > 0x7F800000, _P, _WIDTH, _ONE,
                         ftz and tininess == TINY_AFTER, sat, False, sat_mz, False, nan_bits)


def handles(spec: Any) -> bool:
    """Is ``spec`` (a kernels.Spec) an .f32/.f32x2 form of this module?"""
    return bool(spec.lane_fmt == F32.code and spec.c_fmt == F32.code
                and spec.res_fmt == F32.code)


_kernels: dict[Any, Any] = {}


def kernel_for(spec: Any) -> Any:
    """The compiled kernel ``kernel(a, b, c, out, start, stop)`` of an f32 form (packed forms
    use the kernel of one lane)."""
    key = (spec.op, spec.mode, spec.ftz, spec.tininess, spec.sat, spec.sat_mz, spec.nan_bits)
    k = _kernels.get(key)
    if k is None:
        OP, MODE, FTZ, TINY, SAT, SAT_MZ, NAN_BITS = key

        def kernel(a, b, c, out, start, stop):  # type: ignore[no-untyped-def]
            a = a[start:stop]
            b = b[start:stop]
            c = c[start:stop]
            o = out[start:stop]
            env = fpenv_enter()
            for i in range(o.size):
                o[i] = lane(a[i], b[i], c[i], OP, MODE, FTZ, TINY, SAT, SAT_MZ, NAN_BITS)
            fpenv_leave(env)  # type: ignore[call-arg]

        k = _kernels[key] = (_fast_kernel(key) if FAST and X86 else
                             jit_cached(kernel, ("f32",) + key, nogil=True))
    return k


_fast_inner: dict[Any, Any] = {}


def _fast_kernel(key: tuple[Any, ...]) -> Any:
    """The fast route's kernel of the f32 form ``key`` (module doc): the compiled loop of its
    operation, mode, .sat and .ftz reading, with the policy's NaN bits and .sat's -0.0
    reading bound as arguments (loop invariants; .sat as one ran 20% slower on the binary64
    lane), so that the policy's variants of one form share one compilation."""
    OP, MODE, FTZ, TINY, SAT, SAT_MZ, NAN_BITS = key
    inner_key = (OP, MODE, FTZ, TINY, SAT)
    inner = _fast_inner.get(inner_key)
    if inner is None:
        inner = _fast_inner[inner_key] = _fast_loop(inner_key)
    sat_mz, nan_bits = bool(SAT_MZ), int(NAN_BITS)

    def kernel(a: Any, b: Any, c: Any, out: Any, start: int, stop: int) -> None:
        inner(a, b, c, out, start, stop, sat_mz, nan_bits)
    return kernel


def _fast_loop(key: tuple[Any, ...]) -> Any:
    """The compiled loop of ``_fast_kernel`` for (op, mode, .ftz, tininess, .sat)."""
    OP, MODE, FTZ, TINY, SAT = key
    RC = MXCSR_RC[MODE] << 13
    CSR_HW = MXCSR_DEFAULT | RC | MXCSR_FTZ | (MXCSR_DAZ if FTZ else 0)
    CSR_WIDE = MXCSR_DEFAULT | RC
    FLAGS = _UE | (_DE if OP in (OP_MUL, OP_FMA) and not FTZ else 0)
    BLOCK, CH = _BLOCK, PF_CHUNK
    USE_C = OP == OP_FMA
    # the run of blocks redone after a flagged one starts at 15 for mul/fma (a quarter of the
    # products of random bits underflow: every block flags) and at 0 for add/sub (a tiny sum
    # needs two tiny operands: about 6% of blocks of random bits flag, and runs of 15 after
    # each took half of such an array to lane_wide); it doubles (2r + 1) while flags recur
    RUN0 = _RUN if OP in (OP_MUL, OP_FMA) else 0
    # one constant per branch, so that Numba prunes the other route before typing it
    BEFORE = bool(FTZ and TINY == TINY_BEFORE)

    def kernel(a, b, c, out, start, stop, SAT_MZ, NAN_BITS):  # type: ignore[no-untyped-def]
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        env: int = fpenv_set(np.int32(CSR_HW))  # type: ignore[call-arg]
        run_left = 0
        run_len = RUN0
        for s0 in range(0, o.size, BLOCK):
            n = min(BLOCK, o.size - s0)
            ab = a[s0:s0 + n]
            bb = b[s0:s0 + n]
            cb = c[s0:s0 + n]
            ob = o[s0:s0 + n]
            redo = run_left > 0
            if not redo:
                fpenv_set(np.int32(CSR_HW))                 # clears the flags
                edge = False
                for u in range(0, n, CH):
                    m = min(CH, n - u)
                    a2 = ab[u:u + m]
                    b2 = bb[u:u + m]
                    c2 = cb[u:u + m]
                    o2 = ob[u:u + m]
                    prefetch_lanes(a2, b2, c2, 0, m, 16, True, USE_C, 16)   # 16 to a line
                    for i in range(m):
                        bits, at_min = lane_hw(a2[i], b2[i], c2[i], OP, SAT, SAT_MZ, NAN_BITS)
                        o2[i] = bits
                        edge = edge | at_min
                if (fpenv_set(np.int32(CSR_HW)) & FLAGS) or (FTZ and edge):
                    redo = True
                    run_left = run_len + 1
                    run_len = min(2 * run_len + 1, _RUN_MAX)
                else:
                    run_len = RUN0
            if redo:
                run_left -= 1
                if BEFORE:
                    fpenv_set(np.int32(MXCSR_DEFAULT))
                    for i in range(n):
                        ob[i] = lane(ab[i], bb[i], cb[i], OP, MODE, FTZ, TINY, SAT, SAT_MZ,
                                     NAN_BITS)
                else:
                    fpenv_set(np.int32(CSR_WIDE))
                    for i in range(n):
                        ob[i] = lane_wide(ab[i], bb[i], cb[i], OP, MODE, FTZ, TINY, SAT,
                                          SAT_MZ, NAN_BITS)
        fpenv_leave(env)

    return jit_cached(kernel, ("f32-fast",) + key + (PREFETCH,), nogil=True)

