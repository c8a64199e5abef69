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

from .. import policy, types
from ..spelling import Instruction
from .common import Plan, dtype_of, entry

__all__ = ["compute", "core", "plan"]


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
    signed_dt = np.dtype(f"int{fmt.width}")

    def key(x: NDArray[Any]) -> NDArray[Any]:
        """Integers in the order of the non-NaN values, -0.0 just below +0.0."""
        m = (x & M).astype(signed_dt)
        return np.where((x & S) != 0, -m - 1, m)

    def minmax(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        a, b = flush(ops[0]), flush(ops[1])
        an, bn = is_nan(a), is_nan(b)
        xs = (a ^ b) & S
        if xorsign:
            a, b = a & M, b & M
        ka, kb = key(a), key(b)
        r = np.where((ka > kb) if op == "max" else (ka < kb), a, b)
        r = np.where(an, b, r)
        r = np.where(bn, a, r)
        if xorsign:
            r = (r & M) | xs
        nan = (an & bn) | ((an | bn) if nan_mode else False)
        return np.where(nan, nan_bits(), r).astype(dt)
    return minmax


compute, core = entry("fops", plan, doc="""Run an f32/f64 min, max, abs, neg, copysign or testp
form on bit patterns:

    >>> hex(compute("min.f32", 0x80000000, 0x00000000)), compute("testp.subnormal.f64", 1)
    ('0x80000000', 1)
    >>> hex(compute("neg.ftz.f32", 0x00000001)), hex(compute("copysign.f64", 1 << 63, 0x3FF0000000000000))
    ('0x80000000', '0xbff0000000000000')
""")
