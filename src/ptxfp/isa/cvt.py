"""The cvt rows: every ``cvt`` form between .f32 and .f16/.bf16/.f16x2/.bf16x2, as rows of data.

The one description of these forms: ``ptxfp.convert``'s parser and dispatcher (cvt.py), the
checker (ptx/check.py), the CLI listing, the hardware harness and the test generators all read
``ROWS``.  isa/arith.py is the same for add/sub/mul/fma.

One row is one family of spellings: destination and source type, the rounding modes it takes
(and whether one is required), the modifiers it may carry (and those it must carry), the number
of operands, and what it needs: every requirement is a (kind, threshold, message) triple whose
message is ptxas' own text for it, so that ``check()`` can say what ptxas says; ``min_ptx`` and
``min_sm`` are the highest thresholds.  Rows with ``targets`` exist only on those targets.
The stochastic-rounding rows (``.rs``, a fourth operand of random bits) are computed by
smallfloat.py, as a deterministic function of the random bits.

Source: ptxas 13.0.  From .version 4.0 / sm_50 up, the recorded decisions in tests/data/ptxas
(tools/ptxas_probe.py; docs/ptxas-findings.md) hold every row to ptxas (tests/test_isa_cvt.py,
tests/test_check_vs_ptxas.py).  Below that, where the recorded matrix stops, ptxas 13.0 still
takes ``.target sm_10`` ... ``sm_37`` and ``.version 1.0`` ... ``3.2`` (compiled for sm_75): it
accepts ``cvt.rnd{.sat}.f16.f32`` and ``cvt{.sat}.f32.f16`` at PTX 1.0 / sm_10 and wants PTX 1.4
for ``.ftz`` ("Feature '.ftz' requires PTX ISA .version 1.4 or later"), which
tests/test_cvt.py::test_ptxas_requirements re-checks wherever ptxas is installed.

Found with ptxas (and not all in the manual's syntax blocks, PTX ISA 9.7.9.21):

- modifiers may come in any order; ``.relu``/``.sat``/``.satfinite`` may repeat, ``.ftz`` may not,
  and two rounding modifiers are always an error ("Multiple rounding modifiers specified");
- ``.relu`` and ``.satfinite`` take only .rn/.rz; neither combines with ``.ftz`` or ``.sat``;
- ``.sat`` is f16-only (and f32.f16); ``.relu`` needs PTX 7.0 / sm_80, ``.satfinite`` PTX 8.1
  and sm_80 for every destination but .f16, which ptxas takes on sm_70;
- bf16.f32 takes .rm/.rp too (the manual's syntax lists .rn/.rz) from 7.0 / sm_80;
- cvt.f32.f16 takes no rounding modifier; cvt.f32.bf16 accepts one (it changes nothing), needs
  7.1 / sm_80, and its ``.ftz`` 7.8 / sm_90;
- ``.rs`` (f16x2/bf16x2 from f32, a fourth operand rbits) needs 8.7 and sm_100a or sm_103a
  (ptxas 13.5 also sm_107a, a target 13.0 does not know).

The requirements are legality only: the bits ptxfp computes are those of sm_20 and later (sm_1x
flushed f32 subnormals by default, which is not modeled).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

from ..core import types
from .rows import (MODIFIER_ORDER as _ALL_MODIFIERS, REPEATABLE, ROUNDING_TOKENS, ROUNDINGS,
                   Operand, Require, Row, canonical_spelling as _spelling, min_ptx, min_sm)

__all__ = ["ROWS", "SECTION", "ROUNDINGS", "ROUNDING_TOKENS", "MODIFIER_ORDER", "REPEATABLE",
           "TYPES", "RS_TARGETS", "PAIRS", "rows_for", "canonical_spelling", "forms",
           "canonical_spellings", "min_ptx", "min_sm", "Require"]

SECTION = "9.7.9.21"
#: the cvt modifiers, in the order of a canonical spelling (manual syntax blocks:
#: ``cvt{.frnd}{.ftz}{.sat}`` and ``cvt.frnd2{.relu}{.satfinite}``)
MODIFIER_ORDER = tuple(m for m in _ALL_MODIFIERS if m != "oob")
#: the types of the rows (the other side is always .f32)
TYPES = types.MODELED_TYPES
#: the only targets of the .rs rows
RS_TARGETS = ("sm_100a", "sm_103a", "sm_107a")


def _v(feature: str, v: tuple[int, int], modifier_on: str | None = None) -> Require:
    if modifier_on:
        return ("version", v, f"Modifier '{feature}' on '{modifier_on}' requires PTX ISA "
                              f".version {v[0]}.{v[1]} or later")
    return ("version", v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


def _t(feature: str, sm: int, kind: str = "Feature") -> Require:
    return ("target", sm, f"{kind} '{feature}' requires .target sm_{sm} or higher")


_ALL4 = ROUNDINGS
_RNZ = ("rn", "rz")
_FTZ = (_v(".ftz", (1, 4)),)
_RELU = (_v(".relu", (7, 0)), _t(".relu", 80, "Modifier"))


def _satf(spelling: str) -> tuple[Require, ...]:
    return (_v(".satfinite", (8, 1), spelling), _t(".satfinite", 70))


def _operands(d: str, s: str, rnd: Sequence[str]) -> tuple[Operand, ...]:
    """The operands of cvt.d.s and their classes (ptxas 13.0, operands.jsonl): narrowing takes
    a (and b for a packed destination: a lands in the upper half), .rs adds rbits."""
    if s == "f32":
        src = "cvt.f32.to_bf16" if d.startswith("bf16") else "cvt.f32.to_f16"
        ops = [Operand("d", d, f"cvt.{d}.d"), Operand("a", "f32", src)]
        if types.get(d).packed:
            ops.append(Operand("b", "f32", src))
            if "rs" in rnd:
                ops.append(Operand("rbits", "b32", "cvt.rbits"))
        return tuple(ops)
    return (Operand("d", d, f"cvt.f32.from_{s}"), Operand("a", s, f"cvt.{s}.a"))


def _rows() -> tuple[Row, ...]:
    rows: list[Row] = []

    def row(d: str, s: str, rnd: Iterable[str], req_rnd: bool, mods: Iterable[str],
            required: Iterable[str], requires: Iterable[Require], **kw: Any) -> None:
        rnd = tuple(rnd)
        rows.append(Row("cvt", "cvt", (d, s), rnd, req_rnd, frozenset(mods),
                        frozenset(required), _operands(d, s, rnd), tuple(requires), SECTION,
                        **kw))
    # f32 -> f16: any IEEE rounding (required) and .sat on every target and version; .ftz from
    # PTX 1.4; .relu (7.0, sm_80) and .satfinite (8.1, sm_70) with .rn/.rz only, without
    # .ftz/.sat.
    row("f16", "f32", _ALL4, True, {"sat"}, (), ())
    row("f16", "f32", _ALL4, True, {"ftz", "sat"}, {"ftz"}, _FTZ)
    row("f16", "f32", _RNZ, True, {"relu"}, {"relu"}, _RELU)
    row("f16", "f32", _RNZ, True, {"satfinite"}, {"satfinite"}, _satf("cvt.f16.f32"))
    row("f16", "f32", _RNZ, True, {"relu", "satfinite"}, {"relu", "satfinite"},
        _satf("cvt.f16.f32") + _RELU)
    # f32 -> bf16 (7.0, sm_80): any IEEE rounding with optional .ftz; .relu / .satfinite
    # with .rn/.rz.
    base = (_v("cvt.bf16.f32", (7, 0)), _t("cvt.bf16.f32", 80))
    row("bf16", "f32", _ALL4, True, {"ftz"}, (), base)
    row("bf16", "f32", _RNZ, True, {"relu"}, {"relu"}, base + _RELU)
    row("bf16", "f32", _RNZ, True, {"relu", "satfinite"}, {"satfinite"},
        base + _satf("cvt.bf16.f32"))
    # two f32 -> f16x2 / bf16x2 (7.0, sm_80): .rn/.rz, optional .relu, .satfinite (8.1);
    # .rs (stochastic rounding, 8.7) with a fourth operand (rbits), on sm_100a/sm_103a only.
    for d in ("f16x2", "bf16x2"):
        base = (_v(f"cvt.{d}.f32", (7, 0)), _t(f"cvt.{d}.f32", 80))
        row(d, "f32", _RNZ, True, {"relu"}, (), base)
        row(d, "f32", _RNZ, True, {"relu", "satfinite"}, {"satfinite"},
            base + _satf(f"cvt.{d}.f32"))
        row(d, "f32", ("rs",), True, {"relu", "satfinite"}, (), base + (_v(".rs", (8, 7)),),
            targets=RS_TARGETS, targets_message="Feature '.rs' not supported on .target "
                                                "'{target}'")
    # f16 -> f32: exact, so no rounding modifier; .sat everywhere, .ftz from PTX 1.4.
    row("f32", "f16", (), False, {"sat"}, (), ())
    row("f32", "f16", (), False, {"ftz", "sat"}, {"ftz"}, _FTZ)
    # bf16 -> f32 (7.1, sm_80): a rounding modifier is allowed (and changes nothing); .ftz
    # needs 7.8 / sm_90.
    base = (_v("cvt with .f32.bf16", (7, 1)), _t("cvt with .f32.bf16", 80))
    row("f32", "bf16", _ALL4, False, (), (), base)
    row("f32", "bf16", _ALL4, False, {"ftz"}, {"ftz"},
        (_v("cvt with .f32.bf16.ftz", (7, 8)), _t("cvt with .f32.bf16.ftz", 90)))
    return tuple(rows)


ROWS = _rows()

#: the (dst, src) pairs of the rows
PAIRS = tuple(dict.fromkeys(r.types for r in ROWS))


def rows_for(dst: str, src: str) -> list[Row]:
    return [r for r in ROWS if r.types == (dst, src)]


def canonical_spelling(rounding: str | None, mods: Iterable[str],
                       type_tokens: Sequence[str]) -> str:
    return _spelling("cvt", rounding, mods, type_tokens)


def forms(executable: bool = True) -> Iterator[tuple[Row, str | None, frozenset[str]]]:
    """Every (row, rounding or None, modifier set) of the cvt rows; only the executable rows
    unless ``executable`` is False."""
    for row in ROWS:
        if executable and not row.executable:
            continue
        for rnd, mods in row.forms():
            yield row, rnd, mods


def canonical_spellings(executable: bool = True) -> list[str]:
    """The canonical spelling of every cvt form (the executable ones unless ``executable`` is
    False), in table order."""
    seen: dict[str, None] = {}
    for row, rnd, mods in forms(executable):
        seen.setdefault(canonical_spelling(rnd, mods, row.types), None)
    return list(seen)
