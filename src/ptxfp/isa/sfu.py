"""The SFU forms (PTX ISA 9.7.3.8-9.7.3.22): ``.approx`` ex2, lg2, rcp, rsqrt, sqrt, sin, cos,
tanh and div, ``div.full``, on .f32 (and rcp/rsqrt .approx on .f64, ex2/tanh on the half types).
Computed by ``ptxfp.ops.sfu`` per target (the MUFU primitives and the sequences ptxas wraps
around them); the forms without a model (tanh, the half-type and .f64 primitives) parse and
are refused by ``compute`` with one line naming the form and target.

Which modifiers ptxas takes (ptxas 13.0, hw/approx_targets.py): ``.ftz`` optional on the .f32
forms except tanh (illegal there and on the .f16 forms), required on the .bf16 ex2 forms and on
``rcp.approx.f64``.
"""

from __future__ import annotations

from .rows import Operand, Row, target

SECTION = {"div": "9.7.3.8", "rcp": "9.7.3.9", "sqrt": "9.7.3.11", "rsqrt": "9.7.3.12",
           "sin": "9.7.3.14", "cos": "9.7.3.15", "lg2": "9.7.3.16", "ex2": "9.7.3.17",
           "tanh": "9.7.3.18"}


def _rows() -> tuple[Row, ...]:
    F = frozenset
    rows = []

    def ops(t: str, n: str = "da") -> tuple[Operand, ...]:
        return tuple(Operand(x, t, t) for x in n)
    for op in ("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos"):
        rows.append(Row("sfu", op, ("f32",), (), False, F({"approx", "ftz"}), F({"approx"}),
                        ops("f32"), (), SECTION[op]))
    for mod in ("approx", "full"):
        rows.append(Row("sfu", "div", ("f32",), (), False, F({mod, "ftz"}), F({mod}),
                        ops("f32", "dab"), (), SECTION["div"]))
    rows.append(Row("sfu", "rcp", ("f64",), (), False, F({"approx", "ftz"}), F({"approx", "ftz"}),
                    ops("f64"), (), SECTION["rcp"]))
    rows.append(Row("sfu", "rsqrt", ("f64",), (), False, F({"approx", "ftz"}), F({"approx"}),
                    ops("f64"), (), SECTION["rsqrt"]))
    rows.append(Row("sfu", "tanh", ("f32",), (), False, F({"approx"}), F({"approx"}), ops("f32"),
                    (target("tanh.approx requires .target sm_75 or higher", 75),),
                    SECTION["tanh"]))
    for t in ("f16", "f16x2"):
        for op in ("ex2", "tanh"):
            rows.append(Row("sfu", op, (t,), (), False, F({"approx"}), F({"approx"}), ops(t),
                            (target(f"{op}.approx.{t} requires .target sm_75 or higher", 75),),
                            SECTION[op]))
    for t in ("bf16", "bf16x2"):
        rows.append(Row("sfu", "ex2", (t,), (), False, F({"approx", "ftz"}), F({"approx", "ftz"}),
                        ops(t), (target(f"ex2.approx.ftz.{t} requires .target sm_90 or higher",
                                        90),), SECTION["ex2"]))
        rows.append(Row("sfu", "tanh", (t,), (), False, F({"approx"}), F({"approx"}), ops(t),
                        (target(f"tanh.approx.{t} requires .target sm_90 or higher", 90),),
                        SECTION["tanh"]))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
