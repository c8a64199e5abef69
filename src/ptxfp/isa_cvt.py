"""The cvt table: every ``cvt`` form between .f32 and .f16/.bf16/.f16x2/.bf16x2, as rows of data.

The one description of these forms: ``ptxfp.convert``'s parser and dispatcher (cvt.py), the
checker (ptx/check.py), the CLI listing, the hardware harness and the test generators all read
``TABLE``.  isa.py is the same for add/sub/mul/fma.

One row is one family of spellings: destination and source type, the rounding modes it takes
(and whether one is required), the modifiers it may carry (and those it must carry), the number
of operands, and what it needs: every requirement is a (kind, threshold, message) triple whose
message is ptxas' own text for it, so that ``check()`` can say what ptxas says; ``min_ptx`` and
``min_sm`` are the highest thresholds.  Rows with ``targets`` exist only on those targets.
Rows that are not ``executable`` (stochastic rounding ``.rs``, which takes random bits) are
checked by ``check()`` and not computed by ``ptxfp.convert``.

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
- ``.rs`` (f16x2/bf16x2 from f32, a fourth operand rbits) needs 8.7 and sm_100a or sm_103a.

The requirements are legality only: the bits ptxfp computes are those of sm_20 and later (sm_1x
flushed f32 subnormals by default, which is not modeled).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from typing import Any, Iterable, Iterator, Sequence

#: one requirement: ('version', (major, minor), message) or ('target', sm, message)
Require = tuple[str, Any, str]

SECTION = "9.7.9.21"
#: the IEEE rounding modes of the executable rows
ROUNDINGS = ("rn", "rz", "rm", "rp")
#: rounding-modifier tokens ptxas recognises on cvt
ROUNDING_TOKENS = ("rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi")
#: cvt modifiers of the table, in the order of a canonical spelling (manual syntax blocks:
#: ``cvt{.frnd}{.ftz}{.sat}`` and ``cvt.frnd2{.relu}{.satfinite}``)
MODIFIER_ORDER = ("ftz", "sat", "relu", "satfinite")
#: modifiers ptxas takes more than once in one spelling
REPEATABLE = frozenset({"sat", "relu", "satfinite"})
#: the half types of the table (the other side is always .f32)
HALF_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
TYPES = HALF_TYPES + ("f32",)
#: cvt types of the manual that the table does not hold (named in parse errors)
OTHER_TYPES = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f64", "tf32",
               "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "e4m3x4", "e5m2x4", "e2m1x4",
               "e2m3x4", "e3m2x4", "ue8m0x2", "s2f6x2")
#: the only targets of the .rs rows
RS_TARGETS = ("sm_100a", "sm_103a")


def min_ptx(requires: Iterable[Require]) -> tuple[int, int]:
    """The PTX ISA version a list of ((kind, threshold, message), ...) requirements needs."""
    out: tuple[int, int] = max([t for k, t, _ in requires if k == "version"], default=(1, 0))
    return out


def min_sm(requires: Iterable[Require]) -> int:
    """The sm target such requirements need."""
    out: int = max([t for k, t, _ in requires if k == "target"], default=10)
    return out


@dataclass(frozen=True)
class CvtRow:
    """One family of cvt spellings: types, roundings, modifiers and what they need."""
    dst: str
    src: str
    roundings: tuple[str, ...]   #: accepted rounding modes
    rounding_required: bool
    modifiers: frozenset[str]    #: modifiers that may appear
    required: frozenset[str]     #: modifiers that must appear
    requires: tuple[Require, ...]  #: ((kind 'version'|'target', (major, minor)|sm, message), ...)
    targets: tuple[str, ...] = ()  #: when not empty: the only targets accepted (else message below)
    targets_message: str = ""    #: ptxas' message on other targets ('{target}' = the target)
    operands: int = 2            #: d, a (x2 from f32: d, a, b; .rs adds rbits)
    executable: bool = True      #: computed by ptxfp.convert (False: checked only)
    section: str = SECTION       #: PTX ISA manual section
    opcode: str = "cvt"

    @property
    def types(self) -> tuple[str, str]:
        return (self.dst, self.src)

    type_tokens = types

    @property
    def mixed(self) -> bool:
        return False

    @property
    def min_ptx(self) -> tuple[int, int]:
        return min_ptx(self.requires)

    @property
    def min_sm(self) -> int:
        return min_sm(self.requires)

    @property
    def spelling(self) -> str:
        return "cvt." + self.dst + "." + self.src

    def modifier_sets(self) -> Iterator[frozenset[str]]:
        """Every modifier combination this row accepts."""
        free = sorted(self.modifiers - self.required, key=MODIFIER_ORDER.index)
        for k in range(len(free) + 1):
            for extra in combinations(free, k):
                yield frozenset(self.required | set(extra))


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


def _rows() -> tuple[CvtRow, ...]:
    rows: list[CvtRow] = []

    def row(d: str, s: str, rnd: Iterable[str], req_rnd: bool, mods: Iterable[str],
            required: Iterable[str], requires: Iterable[Require], **kw: Any) -> None:
        rows.append(CvtRow(d, s, tuple(rnd), req_rnd, frozenset(mods), frozenset(required),
                           tuple(requires), **kw))

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
        row(d, "f32", _RNZ, True, {"relu"}, (), base, operands=3)
        row(d, "f32", _RNZ, True, {"relu", "satfinite"}, {"satfinite"},
            base + _satf(f"cvt.{d}.f32"), operands=3)
        row(d, "f32", ("rs",), True, {"relu", "satfinite"}, (), base + (_v(".rs", (8, 7)),),
            targets=RS_TARGETS, targets_message="Feature '.rs' not supported on .target "
                                                "'{target}'", operands=4, executable=False)
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


TABLE = _rows()

#: the (dst, src) pairs of the table
PAIRS = tuple(dict.fromkeys(r.types for r in TABLE))


def rows_for(dst: str, src: str) -> list[CvtRow]:
    return [r for r in TABLE if r.types == (dst, src)]


def canonical_spelling(rounding: str | None, mods: Iterable[str],
                       type_tokens: Sequence[str]) -> str:
    parts = ["cvt"] + ([rounding] if rounding else [])
    parts += [m for m in MODIFIER_ORDER if m in mods] + list(type_tokens)
    return ".".join(parts)


def forms(executable: bool = True) -> Iterator[tuple[CvtRow, str | None, frozenset[str]]]:
    """Every (row, rounding or None, modifier set) the table accepts; only the executable rows
    unless ``executable`` is False."""
    for row in TABLE:
        if executable and not row.executable:
            continue
        rnds: tuple[str | None, ...] = row.roundings if row.rounding_required \
            else (None,) + row.roundings
        for rnd, mods in product(rnds, row.modifier_sets()):
            yield row, rnd, mods


def canonical_spellings(executable: bool = True) -> list[str]:
    """The canonical spelling of every cvt form (the executable ones unless ``executable`` is
    False), in table order."""
    seen: dict[str, None] = {}
    for row, rnd, mods in forms(executable):
        seen.setdefault(canonical_spelling(rnd, mods, row.types), None)
    return list(seen)
