"""add, sub, mul, fma and mad on .f64 (PTX ISA 9.7.3.1-9.7.3.5), and the IEEE-rounded div, rcp
and sqrt on .f32 and .f64 (9.7.3.8, 9.7.3.9, 9.7.3.11).

Measured with ptxas 13.0: add/sub/mul take ``.rn .rz .rm .rp`` or none (= .rn); fma and mad
need one ("Rounding modifier required for instruction 'fma'"); no ``.ftz``/``.sat`` ("Illegal
modifier"), no ``.rna``.  Subnormals are kept (.f64 has no flush).

div, rcp, sqrt (ptxas 13.0, sm_90, PTX 9.0): ``.rn .rz .rm .rp`` on .f32 (with or without
``.ftz``) and .f64 (no ``.ftz``: "Illegal modifier '.ftz'", except rcp: ptxas takes
``rcp.rnd.ftz.f64``), one of them or ``.approx`` required ("Rounding modifier or '.approx'
modifier required for instruction 'div'"; .f64: "Rounding modifier required"), no ``.rna``
("Illegal rounding modifier"), no ``.sat``.  The ``.approx`` and ``div.full``
forms are the SFU family's (isa/sfu.py, ops/sfu/); ``rcp.rnd.ftz.f64`` is a legal row that
ptxfp does not compute (its flush is undocumented).
"""

from __future__ import annotations

from .rows import ROUNDINGS, Operand, Row

SECTION = {"add": "9.7.3.1", "sub": "9.7.3.2", "mul": "9.7.3.3", "fma": "9.7.3.4",
           "mad": "9.7.3.5", "div": "9.7.3.8", "rcp": "9.7.3.9", "sqrt": "9.7.3.11"}


def _rows() -> tuple[Row, ...]:
    rows = []
    F = frozenset
    for op in ("add", "sub", "mul", "fma", "mad"):
        names = "dabc" if op in ("fma", "mad") else "dab"
        rows.append(Row("f64", op, ("f64",), ROUNDINGS, op in ("fma", "mad"), F(), F(),
                        tuple(Operand(n, "f64", "f64") for n in names), (), SECTION[op]))
    for op in ("div", "rcp", "sqrt"):
        names = "dab" if op == "div" else "da"
        for t in ("f32", "f64"):
            ops = tuple(Operand(n, t, t) for n in names)
            rows.append(Row("f64", op, (t,), ROUNDINGS, True, F({"ftz"}) if t == "f32" else F(),
                            F(), ops, (), SECTION[op]))
    f64_1 = (Operand("d", "f64", "f64"), Operand("a", "f64", "f64"))
    rows.append(Row("f64", "rcp", ("f64",), ROUNDINGS, True, F({"ftz"}), F({"ftz"}), f64_1, (),
                    SECTION["rcp"], executable=False))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
