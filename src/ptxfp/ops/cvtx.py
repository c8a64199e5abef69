"""cvt between integer and float types, to and from .f64, between .f16 and .bf16, and a float
rounded to an integral value: the one place their arithmetic lives (rows: isa/cvtx.py; rules
with the manual's words: docs/semantics.md, "cvt with integers and .f64").

- float to integer (``.rni .rzi .rmi .rpi``): the source's exact value rounded to an integral
  value in the mode, then clamped to the destination's range (the manual: "the result is clamped
  to the destination range by default", so ``.sat`` changes nothing); NaN gives 0, except from an
  .f64 source or into a 64-bit destination, where it gives ``1 << (width - 1)``; ``.ftz`` flushes
  an .f32 subnormal source to zero first;
- integer to float (``.rn .rz .rm .rp``): the integer rounded once into the format.  Into
  .f16/.bf16/.f32 through the rounding core (``rounding.round_pack``) from a round-to-odd float64
  proxy of the integer (exact below 2**53; above, 53 bits with the discarded bits' OR in the
  last place: Boldo and Melquiond's round-to-odd, 53 >= P + 2); into .f64 by rounding the
  integer to 53 bits here (no subnormal and no overflow can occur);
- float to float: a narrowing through ``rounding.round_pack`` from the exact float64 source; a
  widening is exact; the same type with an integer rounding rounds to an integral value;
- ``.ftz`` (only where .f32 is a side): an .f32 subnormal source, or an .f32 subnormal result, is a
  zero of its sign; ``.sat`` on a float destination clamps to [0.0, 1.0] (NaN and -0.0 give
  +0.0); a NaN result is the destination's canonical NaN (``policy.canonical_nan``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import policy
from ..core import rounding, types
from ..core._jit import jit_cached
from ..isa.spelling import Instruction
from .common import Plan, decode, dtype_of, entry, to_signed

__all__ = ["compute", "core", "plan"]

_IMODE = {"rni": rounding.RN, "rzi": rounding.RZ, "rmi": rounding.RM, "rpi": rounding.RP}
_INTEGRAL = {rounding.RN: np.rint, rounding.RZ: np.trunc, rounding.RM: np.floor,
             rounding.RP: np.ceil}


def _pack_py(x, P, EMIN, EMAX, mode, W, nan_bits, out):  # type: ignore[no-untyped-def]
    for i in range(x.size):
        mag, sign, nan = rounding.round_pack(x[i], P, EMIN, EMAX, mode, rounding.TINY_AFTER)
        out[i] = nan_bits if nan else (np.uint64(mag) | (np.uint64(sign) << np.uint64(W - 1)))


_pack_kernel: Any = None


def _to_int_py(x, out, mode, lo, hi, lo_bits, hi_bits, nan_bits, mask):  # type: ignore[no-untyped-def]  # noqa: E501
    """Float64 values (exact sources) to integer bits: rounded to integral in ``mode``,
    clamped to [lo, hi] (as float64: both are powers of two or exact below 2**53, hi + 1 is
    tested as >= hi + 1), NaN -> nan_bits; masked to the width."""
    for i in range(x.size):
        v = x[i]
        if v != v:
            out[i] = nan_bits
            continue
        if mode == 0:
            r = np.rint(v)
        elif mode == 1:
            r = np.trunc(v)
        elif mode == 2:
            r = np.floor(v)
        else:
            r = np.ceil(v)
        if r >= hi:
            out[i] = hi_bits
        elif r < lo:
            out[i] = lo_bits
        elif r >= 9223372036854775808.0:
            out[i] = np.uint64(np.int64(r - 9223372036854775808.0)) + np.uint64(1 << 63)
        else:
            out[i] = np.uint64(np.int64(r)) & mask


_to_int_kernel: Any = None


def _pack(x: NDArray[Any], fmt: types.FloatFormat, mode: int, nan_bits: int = 0
          ) -> NDArray[Any]:
    """The bits of the float64 values ``x`` (exact, or round-to-odd proxies) rounded into
    ``fmt`` in ``mode`` by the rounding core, a NaN as ``nan_bits``."""
    global _pack_kernel
    if _pack_kernel is None:
        _pack_kernel = jit_cached(_pack_py, ("ops.cvtx.pack2",), nogil=True)
    out = np.empty(x.size, np.dtype(f"uint{fmt.width}"))
    if x.size:
        _pack_kernel(np.ascontiguousarray(x, np.float64), fmt.precision, fmt.emin, fmt.emax,
                     mode, fmt.width, nan_bits, out)
    return out


def _bitlen(m: NDArray[Any]) -> NDArray[Any]:
    """Bit length of each uint64 in ``m`` (0 for 0), exactly: the binary exponent of its
    float64 conversion, less one where that conversion rounded up to the next power of two."""
    e = np.minimum(np.frexp(m.astype(np.float64))[1].astype(np.int64), 64)
    sh = np.clip(e - 1, 0, 63).astype(np.uint64)
    return e - (((m >> sh) == 0) & (m > 0))


def _int_source(a: NDArray[Any], t: str) -> tuple[NDArray[Any], NDArray[Any]]:
    """(negative?, magnitude as uint64) of integer bits ``a`` of type ``t``."""
    w = types.width(t)
    if types.get(t).signed:
        v = to_signed(a, w)
        neg = v < 0
        mag = np.where(neg, (~v.view(np.uint64)) + np.uint64(1), v.view(np.uint64))
        return neg, mag.astype(np.uint64)
    return np.zeros(a.shape, bool), a.astype(np.uint64)


def _proxy(mag: NDArray[Any]) -> NDArray[Any]:
    """Round-to-odd float64 proxies of the uint64 magnitudes (exact below 2**53)."""
    L = _bitlen(mag)
    sh = np.maximum(L - 53, 0).astype(np.uint64)
    q = mag >> sh
    sticky = (mag & ((np.uint64(1) << sh) - np.uint64(1))) != 0
    q = q | sticky.astype(np.uint64)
    return np.ldexp(q.astype(np.float64), sh.astype(np.int64))


def _int_to_f64(neg: NDArray[Any], mag: NDArray[Any], mode: int) -> NDArray[Any]:
    """The .f64 bits of the integers (neg, mag) rounded to 53 bits in ``mode``."""
    L = _bitlen(mag)
    sh = np.maximum(L - 53, 0).astype(np.uint64)
    q = mag >> sh
    rem = mag & ((np.uint64(1) << sh) - np.uint64(1))
    half = np.where(sh > 0, np.uint64(1) << np.maximum(sh, np.uint64(1)) - np.uint64(1),
                    np.uint64(0))
    inexact = rem != 0
    if mode == rounding.RN:
        up = (rem > half) | ((rem == half) & inexact & ((q & np.uint64(1)) == 1))
    elif mode == rounding.RZ:
        up = np.zeros(q.shape, bool)
    elif mode == rounding.RM:
        up = inexact & neg
    else:
        up = inexact & ~neg
    q = q + up.astype(np.uint64)          # at most 2**53: exact in float64
    v = np.ldexp(q.astype(np.float64), sh.astype(np.int64))
    v = np.where(neg, -v, v)
    return v.view(np.uint64)


def _encode_exact(v: NDArray[Any], t: str) -> NDArray[Any]:
    """Bits of float64 values that are exactly representable in float type ``t``."""
    if t == "f64":
        return v.view(np.uint64).copy()
    if t == "f32":
        return v.astype(np.float32).view(np.uint32)
    if t == "f16":
        return v.astype(np.float16).view(np.uint16)
    return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def _finish(bits: NDArray[Any], nan: NDArray[Any], t: str, ins: Instruction,
            pol: policy.Policy) -> NDArray[Any]:
    """A float result's .ftz (f32), .sat and NaN."""
    fmt = types.lane_format(t)
    w = fmt.width
    dt = np.dtype(f"uint{w}")
    sign = dt.type(1 << (w - 1))
    if ins.ftz and t == "f32":
        bits = np.where((bits & dt.type(fmt.exp_mask)) == 0, bits & sign, bits)
    if ins.sat:
        one = dt.type(fmt.one)
        neg = (bits & sign) != 0
        bits = np.where(neg, dt.type(0) if pol.sat_minus_zero_to_plus else bits & sign, bits)
        bits = np.where(neg & ((bits & ~sign) != 0), dt.type(0), bits)
        bits = np.where(~neg & (bits > one), one, bits)
        bits = np.where(nan, dt.type(0), bits)
        return bits.astype(dt)
    return np.where(nan, dt.type(pol.canonical_nan(t)), bits).astype(dt)


def _float_in(a: NDArray[Any], t: str, ins: Instruction) -> NDArray[Any]:
    """The exact float64 values of a float source (an .f32 subnormal flushed under .ftz)."""
    x = decode(t, a)
    if ins.ftz and t == "f32":
        x = np.where((a & np.uint32(0x7F800000)) == 0, np.copysign(0.0, x), x)
    return x


def plan(ins: Instruction) -> Plan:
    d, s = ins.dtype, ins.atype
    dk, sk = types.get(d).kind, types.get(s).kind
    out_dt = dtype_of(d)

    if dk == types.INT:                                   # float -> integer
        w = types.width(d)
        sgn = bool(types.get(d).signed)
        lo = -(1 << (w - 1)) if sgn else 0
        hi = (1 << (w - 1)) - 1 if sgn else (1 << w) - 1
        nan_val = 0 if (s != "f64" and w != 64) else 1 << (w - 1)

        mode_code = _IMODE[ins.rounding or "rzi"]

        def to_int(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            global _to_int_kernel
            if _to_int_kernel is None:
                _to_int_kernel = jit_cached(_to_int_py, ("ops.cvtx.to_int",), nogil=True)
            x = np.ascontiguousarray(_float_in(ops[0], s, ins))
            res = np.empty(n, np.uint64)
            if n:
                _to_int_kernel(x, res, mode_code, float(lo), float(hi + 1),
                               np.uint64(lo & ((1 << w) - 1)), np.uint64(hi),
                               np.uint64(nan_val), np.uint64((1 << w) - 1))
            return res.astype(out_dt)

        return to_int

    fmt = types.lane_format(d)
    if sk == types.INT:                                   # integer -> float
        mode = rounding.MODES[ins.rounding or "rn"]

        def from_int(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            if types.width(s) <= 32 and d != "f64":
                # the integer is exact in float64: the rounding core rounds it directly
                v = to_signed(ops[0], types.width(s)) if types.get(s).signed else ops[0]
                bits = _pack(v.astype(np.float64), fmt, mode)
                if not (ins.ftz or ins.sat):
                    return bits
                return _finish(bits, np.zeros(n, bool), d, ins, policy.current())
            neg, mag = _int_source(ops[0], s)
            if d == "f64":
                bits = _int_to_f64(neg, mag, mode)
            else:
                px = _proxy(mag)
                bits = _pack(np.where(neg, -px, px), fmt, mode)
            return _finish(bits, np.zeros(n, bool), d, ins, policy.current())
        return from_int

    def f2f(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        x = _float_in(ops[0], s, ins)
        nan = np.isnan(x)
        if d == s:
            if ins.rounding is not None:
                x = _INTEGRAL[_IMODE[ins.rounding]](x)
            bits = _encode_exact(np.where(nan, 0.0, x), d)
        elif types.width(d) > types.width(s) or (d == "f32" and s in ("f16", "bf16")):
            bits = _encode_exact(np.where(nan, 0.0, x), d)          # widening: exact
        else:
            mode = rounding.MODES[ins.rounding or "rn"]
            pol = policy.current()
            bits = _pack(x, fmt, mode, pol.canonical_nan(d))
            if not (ins.ftz or ins.sat):
                return bits
        return _finish(bits, nan, d, ins, policy.current())
    return f2f


compute, core = entry("cvtx", plan, doc="""Run a cvt form of the 'cvtx' family (integer <-> float,
.f64, .f16 <-> .bf16, round to integral) on bit patterns (negative ints taken for .s types):

    >>> compute("cvt.rni.s32.f32", 0x3FC00000), compute("cvt.rzi.u8.f32", 0x43800000)
    (2, 255)
    >>> hex(compute("cvt.rn.f32.s64", (1 << 62) + 1)), hex(compute("cvt.rz.f16.u32", 70000))
    ('0x5e800000', '0x7bff')
""")
