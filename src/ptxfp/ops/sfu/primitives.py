"""The SFU primitives: what one ``MUFU`` instruction computes, per architecture, one model each.

Method and tables from ptx-math (Benjamin Carleton, MIT licence,
https://github.com/bcarlet/ptx-math; the numbers in ``tables.py``): the significand's leading M
fraction bits pick a segment, the remaining bits ``xl`` enter a quadratic
``c0 -/+ c1*xl -/+ c2*sq(xl)`` summed in fixed point with each term shifted by its published
alignment, plus a bias; ``sq`` is the hardware's truncated squarer (exact square minus the
partial-product bits it drops: the low 19 columns of the antidiagonal and of its first 9 rows).
The code is ptxfp's own (Numba, one element at a time, integers only).  MUFU.SIN/COS take an
angle in turns (ptxas multiplies by 1/(2 pi) first) and interpolate sin over a quarter turn
from the quadrant and 23-bit fraction of 4|x| (see ``mufu_sin``).

Every primitive takes and gives binary32 bits (int64 holding 32) and is ``.ftz`` on both sides,
as the MUFU unit is: a subnormal input is a zero of its sign, a result below the normal range is
a zero of its sign (the sequences ptxas wraps around MUFU scale such inputs and results into
range for the non-``.ftz`` forms; ptx-math's non-ftz model computes the same through its own
scaling, and ``tools/ptxm_compare.py`` holds the composition to it).  A NaN result is the
canonical NaN ``0x7fffffff``.

Which GPU measured which primitive: ``measured.PRIMITIVES`` (ptx-math's validation table: sm_5x,
sm_6x, sm_70, sm_75 on all 2^32 inputs; sin/cos: its sm_70 model, sm_70 and sm_75); every later
target is assumed to equal sm_75 (``measured.provenance``).
"""

from __future__ import annotations

from types import FunctionType
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

from .measured import PRIMITIVES as _PROVENANCE
from .tables import (EX2_BIAS, EX2_C0_TERM_ALIGNMENT, EX2_C1_TERM_ALIGNMENT, EX2_C2_TERM_ALIGNMENT,
                     EX2_M, EX2_SUM_WEIGHT, EX2_TABLE, LG2_BIAS, LG2_C0_TERM_ALIGNMENT,
                     LG2_C1_TERM_ALIGNMENT, LG2_C2_TERM_ALIGNMENT, LG2_M, LG2_SUM_WEIGHT,
                     LG2_TABLE, RCP_BIAS, RCP_C0_TERM_ALIGNMENT, RCP_C1_TERM_ALIGNMENT,
                     RCP_C2_TERM_ALIGNMENT, RCP_M, RCP_SUM_WEIGHT, RCP_TABLE, RSQRT_BIAS,
                     RSQRT_C0_TERM_ALIGNMENT, RSQRT_C1_TERM_ALIGNMENT, RSQRT_C2_TERM_ALIGNMENT,
                     RSQRT_M, RSQRT_SUM_WEIGHT, RSQRT_TABLE, SIN_BIAS, SIN_C0_TERM_ALIGNMENT,
                     SIN_C1_TERM_ALIGNMENT, SIN_C2_TERM_ALIGNMENT, SIN_M, SIN_SUM_WEIGHT,
                     SIN_TABLE, SQRT_BIAS, SQRT_C0_TERM_ALIGNMENT, SQRT_C1_TERM_ALIGNMENT,
                     SQRT_C2_TERM_ALIGNMENT, SQRT_M, SQRT_SUM_WEIGHT, SQRT_TABLE)

__all__ = ["mufu_rcp", "mufu_rsq", "mufu_sqrt", "mufu_ex2", "mufu_lg2", "mufu_sin", "mufu_cos",
           "MUFU", "MEASURED", "PRIMITIVES", "SQ"]

NAN = 0x7FFFFFFF

#: The decorator of the primitives and their helpers: compiled inline into each kernel (Numba
#: inlines them into the caller's IR), so that a kernel is one loop of straight-line code that
#: LLVM vectorizes; a call into a separately compiled function would stop that.
primitive = njit(cache=True, nogil=True, inline="always")


_INLINED: dict[Any, Any] = {}


def inlined(fn: Any) -> Any:
    """``fn`` (a Numba function) as one compiled inline into its callers, with every Numba
    function it calls (through its module's globals) likewise, recursively: itself where it is
    already (``primitive``) and so are its callees, else a copy of its Python function so
    decorated.  The kernels reach every primitive through this, so that a primitive and its
    helpers, however decorated, are inlined all the same."""
    done = _INLINED.get(fn)
    if done is not None:
        return done
    _INLINED[fn] = fn                       # a recursive helper stays a call
    py = fn.py_func
    glb = dict(py.__globals__)
    changed = False
    for name in py.__code__.co_names:
        g = glb.get(name)
        if isinstance(g, Dispatcher) and g is not fn:
            new = inlined(g)
            changed |= new is not g
            glb[name] = new
    if not changed and fn.targetoptions.get("inline") == "always":
        return fn
    copy = FunctionType(py.__code__, glb, py.__name__, py.__defaults__, py.__closure__)
    copy.__qualname__ = py.__qualname__
    out = njit(nogil=True, inline="always")(copy)
    _INLINED[fn] = out
    return out


def _square_table(bits: int) -> np.ndarray:
    """sq(x) for every ``bits``-bit x: x*x less the truncated partial-product bits (the low 19
    columns of the antidiagonal x_i*x_i at column 2i, and of rows i < 9: x_i times the bits of
    x above i, at columns i + j + 1 for j > i)."""
    x = np.arange(1 << bits, dtype=np.int64)
    mask = (1 << 19) - 1
    err = np.zeros_like(x)
    for i in range(10):                                   # the antidiagonal, columns 2i < 19
        err |= ((x >> i) & 1) << (2 * i)
    err &= mask
    for i in range(9):
        row = (x << (i + 1)) & ~np.int64((1 << (2 * i + 2)) - 1)
        err += np.where((x >> i) & 1, row & mask, 0)
    return x * x - err


#: sq(xl) for every 17-bit xl (the widest lower significand of the tables): the tests' check of
#: ``square``
SQ = _square_table(17)


def _low_product(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """sum of u_i v_j 2^(i+j) over i + j <= 5: the partial products of u*v in columns 0..5."""
    t = np.zeros(np.broadcast(u, v).shape, dtype=np.int64)
    for i in range(6):
        for j in range(6 - i):
            t += (((u >> i) & 1) * ((v >> j) & 1)) << (i + j)
    return t


_SIX = np.arange(64, dtype=np.int64)
#: _low_product(b, b) by b, and _low_product(a, c) by a * 64 + c (``square``)
SQ_BB = _low_product(_SIX, _SIX)
SQ_AC = _low_product(_SIX[:, None], _SIX[None, :]).ravel()


@primitive
def square(x: int) -> int:
    """The truncated squarer's x*x (as ``_square_table``), one value, without branches.

    The dropped bits are the partial products of x*x (each x_i x_j, i != j, twice) in columns
    0..17, and x_9 at column 18.  With x = a + b 2^6 + c 2^12 (6-bit pieces; bits above 17 drop
    nothing): a*a and a*b lie wholly below column 18, b*b and a*c only in their columns 0..5
    (``SQ_BB``, ``SQ_AC``), b*c and c*c wholly above."""
    a = x & 63
    b = (x >> 6) & 63
    c = (x >> 12) & 63
    err = (a * a + ((a * b) << 7) + ((SQ_BB[b] + 2 * SQ_AC[(a << 6) | c]) << 12)
           + (((x >> 9) & 1) << 18))
    return x * x - err


def _tab(t: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    return np.array(t, dtype=np.int64)


RCP_T = _tab(RCP_TABLE)
SQRT_T = _tab(SQRT_TABLE)
RSQRT_T = _tab(RSQRT_TABLE)
LG2_T = _tab(LG2_TABLE)
EX2_T = _tab(EX2_TABLE)
SIN_T = _tab(SIN_TABLE)
RCP_B = RCP_BIAS >> ((64 - RCP_SUM_WEIGHT) + 23)
SQRT_B = SQRT_BIAS >> ((64 - SQRT_SUM_WEIGHT) + 23)
RSQRT_B = RSQRT_BIAS >> ((64 - RSQRT_SUM_WEIGHT) + 23)
LG2_B = LG2_BIAS >> ((64 - LG2_SUM_WEIGHT) + 23)
EX2_B = EX2_BIAS >> ((64 - EX2_SUM_WEIGHT) + 23)
SIN_B = SIN_BIAS >> ((64 - SIN_SUM_WEIGHT) + 23)
F23 = (1 << 23) - 1
#: a segment's (c0, c1, c2) packed in one int64 (c0 | c1 << 27 | c2 << 45; ``coeffs``): one
#: table load per element instead of three (a vector gather each)
PACK = (27, 18, 18)


def packed(t: np.ndarray) -> np.ndarray:
    """A (segments, 3) coefficient table as one int64 per segment (``PACK``)."""
    for j, w in enumerate(PACK):
        if t[:, j].min() < 0 or int(t[:, j].max()).bit_length() > w:
            raise ValueError(f"coefficient {j} does not fit {w} bits")
    return t[:, 0] | (t[:, 1] << PACK[0]) | (t[:, 2] << (PACK[0] + PACK[1]))


RCP_P = packed(RCP_T)
SQRT_P = packed(SQRT_T)
RSQRT_P = packed(RSQRT_T)
LG2_P = packed(LG2_T)
EX2_P = packed(EX2_T)


@primitive
def coeffs(w: int) -> tuple[int, int, int]:
    """(c0, c1, c2) of a packed segment."""
    return (w & ((1 << PACK[0]) - 1), (w >> PACK[0]) & ((1 << PACK[1]) - 1),
            w >> (PACK[0] + PACK[1]))


@intrinsic
def clz64(typingctx: Any, x: Any) -> Any:
    """Leading zero bits of a 64-bit integer (64 for 0): one ``llvm.ctlz``."""
    if isinstance(x, types.Integer) and x.bitwidth == 64:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
        return types.int64(x), codegen
    return None


# Each primitive computes its general path for every input (a table index is always inside its
# table), then selects the special cases' results: straight-line code that the kernels inline
# and LLVM vectorizes (see ``primitive``).

@primitive
def mufu_rcp(x: int) -> int:
    """MUFU.RCP: 1/x."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    lo = 23 - RCP_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(RCP_P[xh])
    acc = ((c0 << RCP_C0_TERM_ALIGNMENT) - ((c1 * xl) << RCP_C1_TERM_ALIGNMENT)
           + ((c2 * (square(xl << 1) >> 2)) << RCP_C2_TERM_ALIGNMENT) + RCP_B)
    low = 1 if (acc >> RCP_SUM_WEIGHT) == 0 else 0  # below 1: one more bit
    acc = acc << low
    frac = (acc >> (RCP_SUM_WEIGHT - 23)) & F23
    ne = 127 - low - (e - 127)
    r = s | (ne << 23) | frac
    r = s if ne <= 0 else r                          # below the normal range: flushed
    r = (s | 0x7F800000) if e == 0 else r            # 0 (or a flushed subnormal): inf
    if e == 0xFF:
        r = NAN if f != 0 else s                     # 1/inf = zero of its sign
    return r


@primitive
def mufu_rsq(x: int) -> int:
    """MUFU.RSQ: 1/sqrt(x)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    k = e - 127
    odd = k & 1
    lo = 23 - RSQRT_M
    idx = (f >> lo) + (odd << RSQRT_M)
    xl = f & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(RSQRT_P[idx])
    acc = ((c0 << RSQRT_C0_TERM_ALIGNMENT)
           - ((c1 * xl) << RSQRT_C1_TERM_ALIGNMENT)
           + ((c2 * square(xl)) << RSQRT_C2_TERM_ALIGNMENT) + RSQRT_B)
    acc <<= 1
    frac = (acc >> (RSQRT_SUM_WEIGHT - 23)) & F23
    h = (k - odd) >> 1
    r = ((126 - h) << 23) | frac
    r = ((127 - h) << 23) if (odd | f) == 0 else r   # an even power of two: exact
    r = NAN if s != 0 else r
    r = (s | 0x7F800000) if e == 0 else r
    if e == 0xFF:
        r = NAN if (f | s) != 0 else 0
    return r


@primitive
def mufu_sqrt(x: int) -> int:
    """MUFU.SQRT: sqrt(x) (the sm_6x+ table of its own; sm_5x computed rcp(rsq(x)))."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    k = e - 127
    odd = k & 1
    lo = 23 - SQRT_M
    idx = (f >> lo) + (odd << SQRT_M)
    xl = f & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(SQRT_P[idx])
    acc = ((c0 << SQRT_C0_TERM_ALIGNMENT)
           + ((c1 * xl) << SQRT_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << SQRT_C2_TERM_ALIGNMENT) + SQRT_B)
    frac = (acc >> (SQRT_SUM_WEIGHT - 23)) & F23
    r = ((127 + ((k - odd) >> 1)) << 23) | frac
    r = NAN if s != 0 else r
    r = s if e == 0 else r                           # sqrt(-0) = -0
    if e == 0xFF:
        r = NAN if (f | s) != 0 else 0x7F800000
    return r


@primitive
def mufu_lg2(x: int) -> int:
    """MUFU.LG2: log2(x)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    lo = 23 - LG2_M
    xh = f >> lo
    xl = f & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(LG2_P[xh])
    acc = ((c0 << LG2_C0_TERM_ALIGNMENT) + ((c1 * xl) << LG2_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << LG2_C2_TERM_ALIGNMENT) + LG2_B)
    acc += (e - 127) << LG2_SUM_WEIGHT
    acc = -acc if acc < 0 else acc
    acc &= ~((1 << 20) - 1)                          # the sum is truncated below bit 20
    lead = 63 - clz64(acc)                           # its leading bit becomes the implicit 1
    sh = lead - 23
    frac = ((acc >> max(sh, 0)) << max(-sh, 0)) & F23
    r = (0x80000000 if e < 127 else 0) | ((127 + lead - LG2_SUM_WEIGHT) << 23) | frac
    r = 0 if acc == 0 or x == 0x3F800000 else r
    r = NAN if s != 0 else r
    r = 0xFF800000 if e == 0 else r                  # log2(+-0) = -inf
    if e == 0xFF:
        r = NAN if (f | s) != 0 else 0x7F800000
    return r


@primitive
def mufu_ex2(x: int) -> int:
    """MUFU.EX2: 2^x (a result below 2^-126 is zero)."""
    s = x & 0x80000000
    e = (x >> 23) & 0xFF
    f = x & F23
    k = e - 127
    m = f | (1 << 23)
    # |x| = m * 2^(k-23): its integral part n and its fraction, truncated to 23 bits (fx)
    kp = min(max(k, 0), 23)
    n = m >> (23 - kp)
    fx = (m << kp) & F23
    if k >= 23:
        n = m << min(k - 23, 7) if k < 31 else 1 << 20
    if k < 0:
        n = 0
        fx = m >> min(-k, 24)
    neg = s != 0
    borrow = neg and fx != 0
    n = -n if neg else n
    n = n - 1 if borrow else n
    fx = ~fx if borrow else fx
    lo = 23 - EX2_M
    xh = (fx >> lo) & ((1 << EX2_M) - 1)
    xl = fx & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(EX2_P[xh])
    acc = ((c0 << EX2_C0_TERM_ALIGNMENT) + ((c1 * xl) << EX2_C1_TERM_ALIGNMENT)
           + ((c2 * square(xl)) << EX2_C2_TERM_ALIGNMENT) + EX2_B)
    frac = (acc >> (EX2_SUM_WEIGHT - 23)) & F23
    r = ((n + 127) << 23) | frac
    r = 0 if n < -126 else r
    r = 0x7F800000 if n > 127 else r
    r = 0x3F800000 if e == 0 else r
    if e == 0xFF:
        r = NAN if f != 0 else (0 if neg else 0x7F800000)
    return r


# MUFU.SIN / MUFU.COS.  On sm_70 and later ptxas computes sin/cos.approx.f32 as
# FMUL.RZ x * f32(1/(2 pi)) then MUFU.SIN/COS of that product y, an angle in turns (sm_5x/6x had
# a separate range-reduction instruction, RRO, instead).  ptx-math models the two together as
# its sm_70 "RRO" (a quadrant q and a 23-bit fraction r of a quarter turn) followed by the
# quadratic over 64 segments of r (sin_table); ptxfp splits them at the FMUL: the primitive reads
# 4|y| in fixed point, its bits 23-24 (mod 4) being q and its 23 fraction bits r, truncated (the
# low bits of r that y does not carry are zeros, which is ptx-math's sm_70 masking by the
# exponent of x*2/pi).  sin: an odd quadrant reflects r (~r), quadrants 2-3 negate; cos: an even
# quadrant reflects, quadrants 1-2 are negative.  A subnormal y is a zero, inf and NaN give NaN.


SIN_P = packed(SIN_T)


@primitive
def _quarter_turns(x: int) -> tuple[int, int]:
    """(q, r) of binary32 bits ``x`` (finite): q = floor(4|x|) mod 4, r = the first 23 bits of
    the fraction of 4|x| (a subnormal x reads as zero)."""
    e = (x >> 23) & 0xFF
    m = (x & F23) | (1 << 23)
    sh = e - 125                         # 4|x| * 2^23 = m * 2^(e - 127 - 23 + 2 + 23)
    t = m << min(max(sh, 0), 24)
    t = (m >> min(-sh, 31)) if sh < 0 else t
    t = 0 if sh >= 25 or e == 0 else t   # a multiple of 4 turns, or a zero: q = 0, r = 0
    return (t >> 23) & 3, t & F23


@primitive
def _sin_poly(r: int, neg: int) -> int:
    """sin(r/2^23 * pi/2) from the table: c0 + c1*xl - c2*sq(xl) at the published alignments,
    normalized (a zero sum is a zero of sign ``neg``)."""
    lo = 23 - SIN_M
    xh = r >> lo
    xl = r & ((1 << lo) - 1)
    c0, c1, c2 = coeffs(SIN_P[xh])
    acc = ((c0 << SIN_C0_TERM_ALIGNMENT) + ((c1 * xl) << SIN_C1_TERM_ALIGNMENT)
           - ((c2 * square(xl)) << SIN_C2_TERM_ALIGNMENT) + SIN_B)
    sign = 0x80000000 if neg else 0
    shift = max(SIN_SUM_WEIGHT - (63 - clz64(acc)), 0)   # up to the leading bit at the weight
    res = sign | ((127 - shift) << 23) | (((acc << shift) >> (SIN_SUM_WEIGHT - 23)) & F23)
    return sign if acc == 0 else res


@primitive
def mufu_sin(x: int) -> int:
    """MUFU.SIN: sin(2 pi x), x in turns."""
    q, r = _quarter_turns(x)
    r = (~r & F23) if q & 1 else r
    res = _sin_poly(r, ((x >> 31) & 1) ^ ((q >> 1) & 1))
    return NAN if ((x >> 23) & 0xFF) == 0xFF else res


@primitive
def mufu_cos(x: int) -> int:
    """MUFU.COS: cos(2 pi x), x in turns."""
    q, r = _quarter_turns(x)
    r = r if q & 1 else (~r & F23)
    res = _sin_poly(r, ((q + 1) >> 1) & 1)
    return NAN if ((x >> 23) & 0xFF) == 0xFF else res


#: MUFU opcode (as SASS writes it) -> its primitive
MUFU = {"RCP": mufu_rcp, "RSQ": mufu_rsq, "SQRT": mufu_sqrt, "EX2": mufu_ex2, "LG2": mufu_lg2,
        "SIN": mufu_sin, "COS": mufu_cos}

#: MUFU opcode -> the targets on which its model was measured (a view of measured.PRIMITIVES,
#: the one table of who measured what)
MEASURED: dict[str, tuple[str, ...]] = {m.mufu: m.measured for m in _PROVENANCE.values()
                                        if m.mufu in MUFU}
#: the primitives ptxfp has a model of
PRIMITIVES = tuple(MUFU)

