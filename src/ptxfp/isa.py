"""The instruction table: every arithmetic form ptxfp models, as rows of data.

One row is one family of spellings: an opcode, the destination/source types, the rounding modes
it takes (and whether one is required), the modifiers it may carry (and those it must carry),
and the PTX ISA version and target it needs.  The spelling parser, the validator, the dispatcher,
the CLI listing, the docs and the test generators all read this table; a new form is a new row.

Sources: PTX ISA manual sections 9.7.4.1-9.7.4.4 and 9.7.5, with the legal spellings and
requirements checked against ptxas 13.0 (docs/ptxas-findings.md, tests/data/ptxas).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from typing import Iterable, Iterator

ROUNDINGS = ("rn", "rz", "rm", "rp")
MODIFIERS = ("ftz", "sat", "relu", "oob")
HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")
#: canonical order of the modifier tokens in a printed spelling (PTX manual syntax blocks)
MODIFIER_ORDER = ("oob", "ftz", "sat", "relu")
#: modifiers ptxas takes more than once in one spelling (".sat" twice is in the manual's own
#: example); a second .ftz or .oob, or a second rounding modifier, is an error.
REPEATABLE = frozenset({"sat", "relu"})

#: operand names, destination first, per opcode and kind
OPERANDS = {
    ("add", False): ("d", "a", "b"), ("sub", False): ("d", "a", "b"),
    ("mul", False): ("d", "a", "b"), ("fma", False): ("d", "a", "b", "c"),
    ("add", True): ("d", "a", "c"), ("sub", True): ("d", "a", "c"),
    ("fma", True): ("d", "a", "b", "c"),
}


@dataclass(frozen=True)
class Row:
    opcode: str
    dtype: str                    #: destination type (.f32 for the mixed forms)
    atype: str                    #: type of a (and b); equal to dtype unless mixed
    roundings: tuple[str, ...]    #: rounding modes accepted
    rounding_required: bool
    modifiers: frozenset[str]     #: modifiers that may appear
    required: frozenset[str]      #: modifiers that must appear
    min_ptx: tuple[int, int]      #: (major, minor)
    min_sm: int
    section: str                  #: PTX ISA manual section

    @property
    def mixed(self) -> bool:
        return self.dtype != self.atype

    @property
    def type_tokens(self) -> tuple[str, ...]:
        return (self.dtype, self.atype) if self.mixed else (self.dtype,)

    def modifier_sets(self) -> Iterator[frozenset[str]]:
        """Every modifier combination this row accepts."""
        free = sorted(self.modifiers - self.required, key=MODIFIER_ORDER.index)
        for k in range(len(free) + 1):
            for extra in combinations(free, k):
                yield frozenset(self.required | set(extra))


def _rows(opcodes: Iterable[str], types: Iterable[tuple[str, str]], roundings: Iterable[str],
          required_rnd: bool, modifiers: Iterable[str], required: Iterable[str],
          ptx: tuple[int, int], sm: int, section: str) -> list[Row]:
    return [Row(op, d, a, tuple(roundings), required_rnd, frozenset(modifiers),
                frozenset(required), ptx, sm, section)
            for op in opcodes for (d, a) in types]


_F16: list[tuple[str, str]] = [("f16", "f16"), ("f16x2", "f16x2")]
_BF16 = [("bf16", "bf16"), ("bf16x2", "bf16x2")]
_MIXED = [("f32", "f16"), ("f32", "bf16")]

TABLE = (
    # 9.7.4.1-3 add/sub/mul: .rn or nothing (= .rn); .ftz and .sat on f16 only.
    _rows(("add", "sub", "mul"), _F16, ["rn"], False, {"ftz", "sat"}, (), (4, 2), 53, "9.7.4.1-3")
    + _rows(("add", "sub", "mul"), _BF16, ["rn"], False, (), (), (7, 8), 90, "9.7.4.1-3")
    # 9.7.4.4 fma: a rounding modifier is required.
    + _rows(("fma",), _F16, ["rn"], True, {"ftz", "sat"}, (), (4, 2), 53, "9.7.4.4")
    + _rows(("fma",), _F16, ["rn"], True, {"ftz", "relu"}, {"relu"}, (7, 0), 80, "9.7.4.4")
    + _rows(("fma",), _BF16, ROUNDINGS, True, {"relu"}, (), (7, 0), 80, "9.7.4.4")
    # .oob: ptxas 13.0 also takes .oob.sat on f16 (not in the manual's syntax block) and every
    # rounding mode on bf16 (docs/ptxas-findings.md).
    + _rows(("fma",), _F16, ["rn"], True, {"oob", "relu"}, {"oob"}, (8, 1), 90, "9.7.4.4")
    + _rows(("fma",), _F16, ["rn"], True, {"oob", "sat"}, {"oob", "sat"}, (8, 1), 90, "9.7.4.4")
    + _rows(("fma",), _BF16, ROUNDINGS, True, {"oob", "relu"}, {"oob"}, (8, 1), 90, "9.7.4.4")
    # 9.7.5 mixed precision: .f32 result from .f16/.bf16 a (and b).
    + _rows(("add", "sub"), _MIXED, ROUNDINGS, False, {"sat"}, (), (8, 6), 100, "9.7.5")
    + _rows(("fma",), _MIXED, ROUNDINGS, True, {"sat"}, (), (8, 6), 100, "9.7.5")
)


class Requirement:
    """``min_ptx`` (major, minor) and ``min_sm`` printed as PTX spells them."""

    min_ptx: tuple[int, int]
    min_sm: int

    @property
    def min_ptx_str(self) -> str:
        return "%d.%d" % self.min_ptx

    @property
    def min_target(self) -> str:
        return "sm_%d" % self.min_sm


def forms() -> Iterator[tuple[Row, str, frozenset[str]]]:
    """Every (row, rounding, modifier set) the table accepts, rounding written explicitly."""
    for row in TABLE:
        for rnd, mods in product(row.roundings, row.modifier_sets()):
            yield row, rnd, mods


def canonical_spelling(opcode: str, rounding: str | None, mods: Iterable[str],
                       type_tokens: Iterable[str]) -> str:
    """The spelling with the rounding first, the modifiers in MODIFIER_ORDER, then the types."""
    parts = [opcode]
    if rounding:
        parts.append(rounding)
    parts += [m for m in MODIFIER_ORDER if m in mods]
    parts += list(type_tokens)
    return ".".join(parts)


def canonical_spellings() -> list[str]:
    """The canonical spelling of every semantically distinct form in the table."""
    seen = []
    for row, rnd, mods in forms():
        s = canonical_spelling(row.opcode, rnd, mods, row.type_tokens)
        if s not in seen:
            seen.append(s)
    return seen
