"""min, max, abs, neg, copysign and testp on .f32 and .f64 (PTX ISA 9.7.3: the single and double
precision floating-point instructions; the half-type min/max/neg/abs are isa/minmax.py).

Measured with ptxas 13.0 (tests/data/ptxas/ops_spellings.jsonl): ``.ftz`` on .f32 only (min, max,
abs, neg); ``.NaN`` on min/max.f32 needs PTX 7.0 / sm_80, ``.xorsign.abs`` 7.2 / sm_86 (the
half rows' messages); .f64 min/max take no modifier; copysign and testp take none.
"""

from __future__ import annotations

from .rows import Operand, Row, target, version

SECTION = "9.7.3"
TESTS = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
_NAN = (version("Feature '.NaN' requires PTX ISA .version 7.0 or later", (7, 0)),
        target("Modifier '.NaN' requires .target sm_80 or higher", 80))
_XORSIGN = (version("Feature '.abs' requires PTX ISA .version 7.2 or later", (7, 2)),
            target("Feature '.abs' requires .target sm_86 or higher", 86),
            version("Feature '.xorsign' requires PTX ISA .version 7.2 or later", (7, 2)),
            target("Modifier '.xorsign' requires .target sm_86 or higher", 86))


def _ops(t: str, names: str) -> tuple[Operand, ...]:
    return tuple(Operand(n, t, t) for n in names)


def _rows() -> tuple[Row, ...]:
    rows = []
    F = frozenset
    for op in ("min", "max"):
        rows.append(Row("fops", op, ("f32",), (), False, F({"ftz"}), F(), _ops("f32", "dab"),
                        (), SECTION))
        rows.append(Row("fops", op, ("f32",), (), False, F({"ftz", "NaN"}), F({"NaN"}),
                        _ops("f32", "dab"), _NAN, SECTION))
        rows.append(Row("fops", op, ("f32",), (), False, F({"ftz", "NaN", "xorsign", "abs"}),
                        F({"xorsign", "abs"}), _ops("f32", "dab"), _XORSIGN, SECTION))
        rows.append(Row("fops", op, ("f64",), (), False, F(), F(), _ops("f64", "dab"), (),
                        SECTION))
    for op in ("abs", "neg"):
        rows.append(Row("fops", op, ("f32",), (), False, F({"ftz"}), F(), _ops("f32", "da"), (),
                        SECTION))
        rows.append(Row("fops", op, ("f64",), (), False, F(), F(), _ops("f64", "da"), (),
                        SECTION))
    for t in ("f32", "f64"):
        rows.append(Row("fops", "copysign", (t,), (), False, F(), F(), _ops(t, "dab"), (),
                        SECTION))
        for k in TESTS:
            rows.append(Row("fops", "testp", (t,), (), False, F({k}), F({k}),
                            (Operand("p", "pred", "pred"), Operand("a", t, t)), (), SECTION))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
