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
"""

from __future__ import annotations

from typing import Any

from numba import njit

from ..core import nvidia
from ..core.exact import add_odd, decode, zero_sign_fix
from ..core.formats import F32
from ..core._jit import fpenv_enter, fpenv_leave, jit_cached
from .kernels import OP_ADD, OP_FMA, OP_MUL
from ..core.rounding import RM, TINY_AFTER, round_pack

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

        k = _kernels[key] = jit_cached(kernel, ("f32",) + key, nogil=True)
    return k

