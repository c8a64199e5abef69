"""The arithmetic rows: every add/sub/mul/fma form ptxfp models.

Sources: PTX ISA manual sections 9.7.4.1-9.7.4.4 and 9.7.5, with the legal spellings, operand
classes and requirement messages checked against ptxas 13.0 (docs/ptxas-findings.md,
tests/data/ptxas).  The messages are ptxas' own (its "arithemetic" included).
"""

from __future__ import annotations

from typing import Iterable

from .rows import ROUNDINGS, Operand, Require, Row, requirement_text, target, version

SECTION_HALF = "9.7.4.1-3"
SECTION_FMA = "9.7.4.4"
SECTION_MIXED = "9.7.5"
SECTION_F32 = "9.7.3"


def _needs(feature: str, v: tuple[int, int], sm: int, target_kind: str = "Feature"
           ) -> tuple[Require, ...]:
    """ptxas' pair of messages for a feature that needs PTX ``v`` and ``sm_<sm>``."""
    return (version(f"Feature '{feature}' {requirement_text(v)}", v),
            target(f"{target_kind} '{feature}' requires .target sm_{sm} or higher", sm))


def _operands(opcode: str, dtype: str, atype: str) -> tuple[Operand, ...]:
    """d, a, b (and c for fma); the mixed add/sub are ``d, a, c``: a of the half type, c .f32."""
    if dtype == atype:
        names = ("d", "a", "b", "c") if opcode == "fma" else ("d", "a", "b")
        return tuple(Operand(n, dtype, dtype) for n in names)
    half = "mixed.bf16" if atype == "bf16" else atype
    srcs = (Operand("a", atype, half), Operand("b", atype, half)) if opcode == "fma" else (
        Operand("a", atype, half),)
    return (Operand("d", dtype, dtype),) + srcs + (Operand("c", "f32", "f32.src"),)


def _rows(opcodes: Iterable[str], types: Iterable[tuple[str, str]], roundings: Iterable[str],
          required_rnd: bool, modifiers: Iterable[str], required: Iterable[str],
          ptx: tuple[int, int], sm: int, section: str, feature: str | None = None,
          target_kind: str = "Feature") -> list[Row]:
    """One row per opcode and (dtype, atype); ``feature`` names ptxas' messages ('{op}',
    '{d}', '{a}' filled in)."""
    out = []
    for op in opcodes:
        for d, a in types:
            feat = (feature or "").format(op=op, d=d, a=a)
            out.append(Row("arith", op, (d,) if d == a else (d, a), tuple(roundings),
                           required_rnd, frozenset(modifiers), frozenset(required),
                           _operands(op, d, a), _needs(feat, ptx, sm, target_kind), section))
    return out


def _f32_rows(opcodes: Iterable[str], required_rnd: bool) -> list[Row]:
    """.f32 rows: no requirement inside the matrix (PTX 4.0 / sm_50 take them all).  Sources
    take .f32/.b32 registers and f32 immediates (0f..., 0d..., 1.5; ptxas 13.0: an integer
    immediate is "Arguments mismatch")."""
    def ops(op: str) -> tuple[Operand, ...]:
        names = ("a", "b", "c") if op in ("fma", "mad") else ("a", "b")
        return (Operand("d", "f32", "f32"),) + tuple(Operand(n, "f32", "f32.src") for n in names)
    return [Row("arith", op, ("f32",), ROUNDINGS, required_rnd, frozenset({"ftz", "sat"}),
                frozenset(), ops(op), (), SECTION_F32) for op in opcodes]


_F16 = [("f16", "f16"), ("f16x2", "f16x2")]
_BF16 = [("bf16", "bf16"), ("bf16x2", "bf16x2")]
_MIXED = [("f32", "f16"), ("f32", "bf16")]
#: ptxas' name for the f16 feature (sic)
_F16_FEATURE = "f16 arithemetic and compare instructions"

ROWS: tuple[Row, ...] = tuple(
    # 9.7.4.1-3 add/sub/mul: .rn or nothing (= .rn); .ftz and .sat on f16 only.
    _rows(("add", "sub", "mul"), _F16, ["rn"], False, {"ftz", "sat"}, (), (4, 2), 53,
          SECTION_HALF, _F16_FEATURE)
    + _rows(("add", "sub", "mul"), _BF16, ["rn"], False, (), (), (7, 8), 90, SECTION_HALF,
            "{op}.{d}")
    # 9.7.4.4 fma: a rounding modifier is required.
    + _rows(("fma",), _F16, ["rn"], True, {"ftz", "sat"}, (), (4, 2), 53, SECTION_FMA,
            _F16_FEATURE)
    + _rows(("fma",), _F16, ["rn"], True, {"ftz", "relu"}, {"relu"}, (7, 0), 80, SECTION_FMA,
            ".relu", "Modifier")
    + _rows(("fma",), _BF16, ROUNDINGS, True, (), (), (7, 0), 80, SECTION_FMA, ".{d}")
    + _rows(("fma",), _BF16, ROUNDINGS, True, {"relu"}, {"relu"}, (7, 0), 80, SECTION_FMA,
            ".relu", "Modifier")
    # .oob: ptxas 13.0 also takes .oob.sat on f16 (not in the manual's syntax block) and every
    # rounding mode on bf16 (docs/ptxas-findings.md).
    + _rows(("fma",), _F16, ["rn"], True, {"oob", "relu"}, {"oob"}, (8, 1), 90, SECTION_FMA,
            ".oob", "Modifier")
    + _rows(("fma",), _F16, ["rn"], True, {"oob", "sat"}, {"oob", "sat"}, (8, 1), 90,
            SECTION_FMA, ".oob", "Modifier")
    + _rows(("fma",), _BF16, ROUNDINGS, True, {"oob", "relu"}, {"oob"}, (8, 1), 90, SECTION_FMA,
            ".oob", "Modifier")
    # 9.7.5 mixed precision: .f32 result from .f16/.bf16 a (and b).
    + _rows(("add", "sub"), _MIXED, ROUNDINGS, False, {"sat"}, (), (8, 6), 100, SECTION_MIXED,
            "{op}.f32.{a}")
    + _rows(("fma",), _MIXED, ROUNDINGS, True, {"sat"}, (), (8, 6), 100, SECTION_MIXED,
            "{op}.f32.{a}")
    # 9.7.3 single precision: every rounding (add/sub/mul default .rn; fma and mad need
    # one), .ftz and .sat, on every target of the matrix (PTX 4.0, sm_50 and up).
    + _f32_rows(("add", "sub", "mul"), False)
    + _f32_rows(("fma", "mad"), True)
    # .f32x2 (PTX 8.6, sm_100): 64-bit operands, lane 0 in bits 31:0; .ftz, no .sat (ptxas:
    # "Illegal modifier '.sat'"), no mad.
    + _rows(("add", "sub", "mul"), [("f32x2", "f32x2")], ROUNDINGS, False, {"ftz"}, (),
            (8, 6), 100, SECTION_F32, "{op}.f32x2")
    + _rows(("fma",), [("f32x2", "f32x2")], ROUNDINGS, True, {"ftz"}, (), (8, 6), 100,
            SECTION_F32, "{op}.f32x2")
)


#: the rule name of the warning on the undocumented bf16 fma spellings (ptxfp.check, eval)
UNDOCUMENTED_BF16_FMA = "undocumented-bf16-fma"


def undocumented_bf16_fma(opcode: str, rounding: str | None, types: tuple[str, ...]) -> bool:
    """Is this ``fma.{rz,rm,rp}{.oob}{.relu}.bf16`` or ``.bf16x2``?  The manual gives half fma
    the rounding .rn only (9.7.4.4); ptxas 13.0 accepts the other three on bf16 without a word
    and compiles them into other arithmetic (docs/ptxas-findings.md): the scalar form in f16
    (``cvt.rn.f16.f32(fma.<mode>.f32(f16 a, f16 b, f16 c))``, .relu and .oob dropped), the
    packed form as ``fma.rn{.oob}{.relu}.bf16x2``.  policy.bf16_fma_directed picks which
    ptxfp computes."""
    return opcode == "fma" and types in (("bf16",), ("bf16x2",)) and rounding in ("rz", "rm", "rp")


def undocumented_bf16_fma_message(spelling: str, packed: bool) -> str:
    """The one-line warning text of an undocumented bf16 fma spelling."""
    how = ("as fma.rn on .bf16x2 (the rounding mode is dropped)" if packed else
           "as f16 arithmetic (the bits read as .f16, fma in .f32 under the mode, cvt.rn.f16.f32; "
           ".relu/.oob dropped)")
    return (f"'{spelling}' is not in the PTX ISA (half-precision fma takes .rn only); ptxas 13.0 "
            f"compiles it {how}, so its result is not the rounding its name promises")

