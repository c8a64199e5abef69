"""min, max, abs, neg, copysign and testp on .f32 and .f64: the one place they live (rows:
isa/fops.py; rules: docs/semantics.md, "f32/f64 min, max, abs, neg, copysign, testp").

Nothing rounds: a result is an operand (its sign possibly changed), a flushed zero or the
canonical NaN.  min/max follow the half rows' rules (minmax.py, PTX ISA 9.7.3): ``.ftz`` (.f32)
makes a subnormal operand a zero of its sign; both operands NaN -> canonical NaN, ``.NaN``
either NaN -> canonical NaN, else a NaN operand gives the other; -0.0 is below +0.0;
``.xorsign.abs`` compares magnitudes and gives the result the XOR of the operands' signs.
abs/neg clear/flip the sign (``.ftz`` first); a NaN gives ``policy.negabs_nan``'s result.
copysign d, a, b is b with a's sign (bits).  testp's tests read the encoding: normal excludes
zero, subnormal excludes zero, number is "not NaN", finite "neither inf nor NaN".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import policy
from ..core import types
from ..core._jit import jit_cached
from ..isa.spelling import Instruction
from .common import Plan, dtype_of, entry

__all__ = ["compute", "core", "plan"]


def _minmax_py(a, b, out, is_max, S, M, E, ftz, nan_mode, xorsign, nan_bits):  # type: ignore[no-untyped-def]  # noqa: E501
    """min/max of the bit patterns a, b (one element at a time; the rules of the module
    docstring), into out."""
    for i in range(out.size):
        x = a[i]
        y = b[i]
        if ftz:
            if (x & E) == 0:
                x = x & S
            if (y & E) == 0:
                y = y & S
        xn = (x & M) > E
        yn = (y & M) > E
        xs = (x ^ y) & S
        if xorsign:
            x = x & M
            y = y & M
        # order keys: -0.0 just below +0.0 (magnitudes as signed 64-bit integers)
        kx = np.int64(x & M)
        ky = np.int64(y & M)
        if x & S:
            kx = -kx - 1
        if y & S:
            ky = -ky - 1
        r = x if ((kx > ky) if is_max else (kx < ky)) else y
        if xn:
            r = y
        if yn:
            r = x
        if xorsign:
            r = (r & M) | xs
        if (xn and yn) or (nan_mode and (xn or yn)):
            r = nan_bits
        out[i] = r


_minmax_kernel: Any = None


def plan(ins: Instruction) -> Plan:
    t = ins.atype
    fmt = types.lane_format(t)
    dt = dtype_of(t)
    S = dt.type(fmt.sign_bit)
    M = dt.type(fmt.sign_bit - 1)
    E = dt.type(fmt.exp_mask)
    op = ins.opcode

    def flush(x: NDArray[Any]) -> NDArray[Any]:
        return np.where((x & E) == 0, x & S, x) if ins.ftz else x

    def is_nan(x: NDArray[Any]) -> NDArray[Any]:
        return (x & M) > E

    if op == "testp":
        k = next(iter(ins.row.required))

        def testp(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            a = ops[0]
            e = a & E
            m = a & M
            return {"finite": e != E, "infinite": m == E, "number": m <= E,
                    "notanumber": m > E, "normal": (e != 0) & (e != E),
                    "subnormal": (e == 0) & (m != 0)}[k]
        return testp
    if op == "copysign":
        def copysign(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            return ((ops[1] & M) | (ops[0] & S)).astype(dt)
        return copysign

    def nan_bits() -> Any:
        return dt.type(policy.current().canonical_nan(t))

    if op in ("abs", "neg"):
        def absneg(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            a = flush(ops[0])
            r = (a & M) if op == "abs" else (a ^ S)
            if policy.current().negabs_nan == policy.NEGABS_CANONICAL:
                r = np.where(is_nan(a), nan_bits(), r)
            return r.astype(dt)
        return absneg

    xorsign = "xorsign" in ins.modifiers
    nan_mode = "NaN" in ins.modifiers

    def minmax(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        global _minmax_kernel
        if _minmax_kernel is None:
            _minmax_kernel = jit_cached(_minmax_py, ("ops.fops.minmax",), nogil=True)
        a = np.ascontiguousarray(ops[0], dt)
        b = np.ascontiguousarray(ops[1], dt)
        res = np.empty(n, dt)
        if n:
            _minmax_kernel(a, b, res, op == "max", S, M, E, ins.ftz, nan_mode, xorsign,
                           nan_bits())
        return res
    return minmax


compute, core = entry("fops", plan, doc="""Run an f32/f64 min, max, abs, neg, copysign or testp
form on bit patterns:

    >>> hex(compute("min.f32", 0x80000000, 0x00000000)), compute("testp.subnormal.f64", 1)
    ('0x80000000', 1)
    >>> hex(compute("neg.ftz.f32", 0x00000001)), hex(compute("copysign.f64", 1 << 63, 0x3FF0000000000000))
    ('0x80000000', '0xbff0000000000000')
""")
