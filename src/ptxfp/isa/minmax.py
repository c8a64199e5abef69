"""The half comparison and sign rows: min, max, neg and abs on .f16/.f16x2/.bf16/.bf16x2.

Sources: PTX ISA manual 9.7.4.5 (neg), 9.7.4.6 (abs), 9.7.4.7 (min) and 9.7.4.8 (max) of the
half precision instructions; the legal spellings, the requirement thresholds and their messages
measured with ptxas 13.0 (tests/data/ptxas/spellings.jsonl, groups 'minmax' and
'minmax-types').  The messages are ptxas' own, thresholds included where they disagree with
the text (neg.f16 is accepted from PTX 5.1 although the message below it says 6.0).

- min/max: ``{.ftz}{.NaN}{.xorsign.abs}`` on .f16/.f16x2, ``{.NaN}{.xorsign.abs}`` on
  .bf16/.bf16x2 (PTX 7.0, sm_80; .xorsign.abs 7.2, sm_86; .xorsign and .abs only together,
  in either order);
- neg/abs: ``{.ftz}`` on .f16/.f16x2 (sm_53; neg from PTX 5.1, abs from 6.5), none on
  .bf16/.bf16x2 (7.0, sm_80).

No row takes a rounding modifier.
"""

from __future__ import annotations

from .rows import Operand, Require, Row, target, version

SECTION = {"neg": "9.7.4.5", "abs": "9.7.4.6", "min": "9.7.4.7", "max": "9.7.4.8"}
HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")


def _v(feature: str, v: tuple[int, int], says: tuple[int, int] | None = None) -> Require:
    s = says or v
    return version(f"Feature '{feature}' requires PTX ISA .version {s[0]}.{s[1]} or later", v)


def _t(feature: str, sm: int, kind: str = "Feature") -> Require:
    return target(f"{kind} '{feature}' requires .target sm_{sm} or higher", sm)


_F16 = "f16 arithemetic and compare instructions"      # ptxas' spelling (sic)
_XORSIGN = (_v(".abs", (7, 2)), _t(".abs", 86), _v(".xorsign", (7, 2)),
            _t(".xorsign", 86, "Modifier"))


def _type_needs(op: str, ty: str) -> tuple[Require, ...]:
    """What the opcode on the type needs, in ptxas' words."""
    if ty.startswith("bf16"):
        return (_v("." + ty, (7, 0)), _t("." + ty, 80))
    if op in ("min", "max"):
        feat = f"{op}.f16 or {op}.f16x2"
        return (_v(feat, (7, 0)), _t(feat, 80))
    base = (_v(_F16, (4, 2)), _t(_F16, 53))
    if op == "neg":
        return base + (_v("neg.f16 or neg.f16x2", (5, 1), says=(6, 0)),)
    return base + (_v("abs.f16 or abs.f16x2", (6, 5)),)


def _operands(op: str, ty: str) -> tuple[Operand, ...]:
    names = ("d", "a", "b") if op in ("min", "max") else ("d", "a")
    return tuple(Operand(n, ty, ty) for n in names)


def _rows() -> tuple[Row, ...]:
    rows = []
    for op in ("min", "max"):
        for ty in HALF_TYPES:
            ftz = set() if ty.startswith("bf16") else {"ftz"}
            need = _type_needs(op, ty)
            rows.append(Row("minmax", op, (ty,), (), False, frozenset(ftz | {"NaN"}),
                            frozenset(), _operands(op, ty), need, SECTION[op]))
            rows.append(Row("minmax", op, (ty,), (), False,
                            frozenset(ftz | {"NaN", "xorsign", "abs"}),
                            frozenset({"xorsign", "abs"}), _operands(op, ty),
                            need + _XORSIGN, SECTION[op]))
    for op in ("neg", "abs"):
        for ty in HALF_TYPES:
            ftz = set() if ty.startswith("bf16") else {"ftz"}
            rows.append(Row("minmax", op, (ty,), (), False, frozenset(ftz), frozenset(),
                            _operands(op, ty), _type_needs(op, ty), SECTION[op]))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
