"""add, sub, mul, fma and mad on .f64 (PTX ISA 9.7.3.1-9.7.3.5).

Measured with ptxas 13.0: add/sub/mul take ``.rn .rz .rm .rp`` or none (= .rn); fma and mad
need one ("Rounding modifier required for instruction 'fma'"); no ``.ftz``/``.sat`` ("Illegal
modifier"), no ``.rna``.  Subnormals are kept (.f64 has no flush).
"""

from __future__ import annotations

from .rows import ROUNDINGS, Operand, Row

SECTION = {"add": "9.7.3.1", "sub": "9.7.3.2", "mul": "9.7.3.3", "fma": "9.7.3.4",
           "mad": "9.7.3.5"}


def _rows() -> tuple[Row, ...]:
    rows = []
    for op in ("add", "sub", "mul", "fma", "mad"):
        names = "dabc" if op in ("fma", "mad") else "dab"
        rows.append(Row("f64", op, ("f64",), ROUNDINGS, op in ("fma", "mad"), frozenset(),
                        frozenset(), tuple(Operand(n, "f64", "f64") for n in names), (),
                        SECTION[op]))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
