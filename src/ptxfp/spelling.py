"""Instruction spellings: the one table-driven parser for every row of the instruction table.

``parse("fma.rn.oob.relu.bf16x2")`` and ``parse("cvt.rn.satfinite.bf16.f32")`` go through the same
steps, reading only the rows (isa/) and their family's vocabulary (``isa.FAMILIES``): the
opcode names the family, each token is a rounding modifier, a modifier or a type, and the rows
with those types decide what is legal.  Modifiers may come in any order and some may repeat, as
ptxas takes them (the manual itself writes ``fma.rz.sat.f32.f16.sat``); type tokens keep their
order, destination first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NoReturn

from . import isa, types
from .errors import SpellingError
from .isa.rows import MODIFIER_ORDER, REPEATABLE, ROUNDING_TOKENS, Row, canonical_spelling

__all__ = ["Instruction", "parse", "OPCODES"]

#: every opcode the table models
OPCODES = tuple(isa.OPCODES)


@dataclass(frozen=True)
class Instruction:
    """One parsed instruction spelling, with everything its row says about it."""
    opcode: str
    dtype: str                        #: destination type
    atype: str                        #: type of the first source (equal to dtype unless mixed)
    rounding: str | None              #: effective rounding ('rn' for add when none is written;
    #                                   None where none is written and there is no default)
    rounding_explicit: bool
    modifiers: frozenset[str]
    spelling: str = field(compare=False)
    row: Row = field(compare=False, repr=False)

    # -- modifiers: one flag per modifier of the table, e.g. ins.relu
    ftz = property(lambda self: "ftz" in self.modifiers, doc="whether .ftz is written")
    sat = property(lambda self: "sat" in self.modifiers, doc="whether .sat is written")
    relu = property(lambda self: "relu" in self.modifiers, doc="whether .relu is written")
    oob = property(lambda self: "oob" in self.modifiers, doc="whether .oob is written")
    satfinite = property(lambda self: "satfinite" in self.modifiers,
                         doc="whether .satfinite is written")

    # -- what the row says
    @property
    def family(self) -> str:
        return self.row.family

    @property
    def min_ptx(self) -> tuple[int, int]:
        return self.row.min_ptx

    @property
    def min_sm(self) -> int:
        return self.row.min_sm

    @property
    def min_ptx_str(self) -> str:
        return "%d.%d" % self.min_ptx

    @property
    def min_target(self) -> str:
        """The lowest target: the first of the row's only targets where it has a list."""
        return self.row.targets[0] if self.row.targets else "sm_%d" % self.min_sm

    @property
    def mixed(self) -> bool:
        return self.row.mixed

    @property
    def narrowing(self) -> bool:
        """A cvt from .f32 to a narrower type."""
        return self.family == "cvt" and self.atype == "f32"

    @property
    def types(self) -> tuple[str, ...]:
        return self.row.types

    @property
    def lanes(self) -> int:
        return types.get(self.dtype).lanes

    @property
    def lane_format(self) -> str:
        """Format of the a (and b) lanes: 'f16', 'bf16' or 'f32'."""
        return types.lane_format(self.atype).name

    @property
    def result_format(self) -> str:
        """Format of the destination's lanes."""
        return types.lane_format(self.dtype).name

    @property
    def result_width(self) -> int:
        return types.width(self.dtype)

    @property
    def operand_names(self) -> tuple[str, ...]:
        """Source operand names in PTX order (destination excluded)."""
        return self.row.operand_names

    @property
    def operand_formats(self) -> tuple[str, ...]:
        """Type of each source operand in PTX order, e.g. ('f16', 'f32') for add.f32.f16."""
        return self.row.operand_formats

    def __str__(self) -> str:
        rnd = self.rounding if self.rounding_explicit else None
        return canonical_spelling(self.opcode, rnd, self.modifiers, self.types)


def _fail(spelling: str, token: str | None, rule: str, message: str) -> NoReturn:
    raise SpellingError(f"{message} in '{spelling}'", spelling=spelling, token=token, rule=rule)


def _dotted(names: Iterable[str]) -> str:
    return ", ".join("." + n for n in names)


def _ordered(mods: Iterable[str]) -> list[str]:
    return sorted(mods, key=MODIFIER_ORDER.index)


def _family_vocabulary(family: str) -> tuple[frozenset[str], frozenset[str], int]:
    """The modifiers and type tokens a family reads, and the fewest type tokens of its rows."""
    rows = isa.family_rows(family)
    mods = frozenset().union(*(r.modifiers for r in rows))
    fam = isa.FAMILIES[family]
    row_types = {t for r in rows for t in r.types}
    # a family whose other type combinations are legal PTX reads every data type token
    # (cvt.rn.s32.f32 is then 'not modeled'); the others read their rows' types only
    known = frozenset(t for t, pt in types.TYPES.items() if pt.kind in (types.FLOAT, types.INT)) \
        | types.OTHER_TYPE_TOKENS if fam.foreign_types_not_modeled else frozenset(row_types)
    return mods, known | frozenset(row_types), min(len(r.types) for r in rows)


_VOCABULARY = {fam: _family_vocabulary(fam) for fam in isa.FAMILIES if isa.family_rows(fam)}


def _family_of(opcode: str, families: tuple[str, ...], rest: list[str]) -> str:
    """The family whose rows an opcode's spelling belongs to: an opcode of several families
    (``cvt``, ``add``, ``min`` ...) is decided by the type tokens written; the first family
    (the one whose messages ptxfp gave before the others existed) where no row has them."""
    if len(families) == 1:
        return families[0]
    tys = tuple(t for t in rest if t in types.TYPE_TOKENS)
    for fam in families:
        if any(r.family == fam for r in isa.rows_for(opcode, tys)):
            return fam
    return families[0]


def parse(spelling: str) -> Instruction:
    """Parse and validate an instruction spelling against the instruction table (``ptxfp.isa``),
    arithmetic and cvt alike; raise SpellingError naming the bad token and the rule it breaks.

        >>> ins = parse("fma.rz.sat.f32.f16.sat")
        >>> str(ins), ins.operand_names, ins.operand_formats, ins.min_target
        ('fma.rz.sat.f32.f16', ('a', 'b', 'c'), ('f16', 'f16', 'f32'), 'sm_100')
        >>> parse("cvt.rn.relu.bf16x2.f32").operand_names
        ('a', 'b')
    """
    if not isinstance(spelling, str):
        raise SpellingError("an instruction spelling must be a string, got "
                            f"{type(spelling).__name__}",
                            rule="syntax")
    text = spelling.strip()
    tokens = text.split(".")
    if not text or any(t == "" for t in tokens):
        _fail(text, None, "syntax", "empty token (misplaced '.')")
    opcode, rest = tokens[0], tokens[1:]
    families = isa.OPCODE_FAMILIES.get(opcode)
    if families is None:
        _fail(text, opcode, "unknown-instruction",
              f"unknown instruction '{opcode}' (ptxfp models {', '.join(OPCODES)})")
    family = _family_of(opcode, families, rest)
    fam = isa.FAMILIES[family]
    known_mods, known_types, fewest_types = _VOCABULARY[family]
    roundings: list[str] = []
    mods: set[str] = set()
    tys: list[str] = []
    for t in rest:
        if t in fam.rounding_tokens:
            if roundings:
                _fail(text, "." + t, fam.conflict_rule,
                      f"multiple rounding modifiers specified ('.{roundings[0]}' and '.{t}')")
            roundings.append(t)
        elif t in known_mods:
            if t in mods and t not in REPEATABLE:
                _fail(text, "." + t, "duplicate-modifier", f"duplicate .{t} modifier")
            mods.add(t)
        elif t in known_types:
            tys.append(t)
        else:
            _fail(text, "." + t, "unknown-modifier",
                  f"unknown modifier '.{t}' for instruction '{opcode}'")
    tname = "." + ".".join(tys)
    if len(tys) < fewest_types:
        _fail(text, None, "missing-type",
              f"instruction '{opcode}' needs {'a type' if fewest_types == 1 else 'types'}"
              + (", destination then source" if fewest_types > 1 else "")
              + (f" (got {_dotted(tys)})" if tys else ""))
    rows = [r for r in isa.rows_for(opcode, tuple(tys)) if r.family == family]
    if not rows:
        family_rows = isa.family_rows(family)
        row_types = {t for r in family_rows for t in r.types}
        if fam.foreign_types_not_modeled and (
                any(t not in row_types for t in tys) or len(set(tys)) < len(tys)):
            _fail(text, tname, "not-modeled",
                  f"'{opcode}{tname}' is not modeled by ptxfp (it models {fam.modeled})")
        ok = dict.fromkeys("." + ".".join(r.types) for r in family_rows if r.opcode == opcode)
        _fail(text, tname, "illegal-type",
              f"illegal type '{tname}' for instruction '{opcode}' (allowed: {', '.join(ok)})")
    rnd = roundings[0] if roundings else None
    if rnd is not None and not any(rnd in r.roundings for r in rows):
        allowed = sorted({m for r in rows if r.executable for m in r.roundings},
                         key=ROUNDING_TOKENS.index)
        _fail(text, "." + rnd, "illegal-rounding",
              f"illegal rounding modifier '.{rnd}' for '{opcode}{tname}'"
              + (f" (allowed: {_dotted(allowed)})" if allowed else " (it takes none)"))
    allowed_mods: set[str] = set().union(*(r.modifiers for r in rows))
    for m in _ordered(mods):
        if m not in allowed_mods:
            _fail(text, "." + m, "illegal-modifier",
                  f".{m} is not allowed with '{opcode}{tname}'"
                  + (f" (allowed: {_dotted(_ordered(allowed_mods))})" if allowed_mods else ""))
    by_mods = [r for r in rows if mods <= r.modifiers and r.required <= mods]
    if not by_mods:
        _fail(text, _dotted(_ordered(mods)), "illegal-combination",
              f"modifiers {_dotted(_ordered(mods))} cannot be combined on '{opcode}{tname}'")
    fits = [r for r in by_mods if rnd is None or rnd in r.roundings]
    if not fits:
        allowed = sorted({m for r in by_mods for m in r.roundings}, key=ROUNDING_TOKENS.index)
        _fail(text, f".{rnd}", "illegal-rounding",
              f"illegal rounding modifier '.{rnd}' for '{opcode}{tname}' with "
              f"{_dotted(_ordered(mods))} (allowed: {_dotted(allowed)})")
    # Several rows can fit (fma.rn.relu.f16x2 is in no other row, cvt.rn.f16.f32 is in the
    # rows with and without .ftz): take the least demanding.
    row = min(fits, key=lambda r: (r.min_ptx, r.min_sm))
    if rnd is None and row.rounding_required:
        _fail(text, None, "rounding-required",
              f"rounding modifier required for '{opcode}{tname}' (one of {_dotted(row.roundings)})")
    if not row.executable:
        _fail(text, "." + rnd if rnd else tname, "not-modeled",
              f"'{canonical_spelling(opcode, rnd, mods, row.types)}' is legal PTX (ptxfp.check "
              f"knows it, {row.min_ptx[0]}.{row.min_ptx[1]}, "
              f"{', '.join(row.targets) or 'sm_%d' % row.min_sm}) but ptxfp does not compute it"
              + (" (stochastic rounding takes random bits)" if rnd == "rs" else ""))
    default = fam.default_rounding if row.roundings else None
    return Instruction(
        opcode=opcode, dtype=row.dtype, atype=row.atype, rounding=rnd or default,
        rounding_explicit=rnd is not None, modifiers=frozenset(mods), spelling=text, row=row)
