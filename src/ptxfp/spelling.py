"""Instruction spellings: parse ``fma.rn.oob.relu.bf16x2`` into an Instruction, checked against
the instruction table (isa.py).  Modifiers may come in any order and may repeat, as ptxas takes
them (the manual itself writes ``fma.rz.sat.f32.f16.sat``); type tokens keep their order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NoReturn

from . import isa
from .errors import SpellingError

OPCODES = ("add", "sub", "mul", "fma")
TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32")
_LANE = {"f16": "f16", "f16x2": "f16", "bf16": "bf16", "bf16x2": "bf16", "f32": "f32"}


@dataclass(frozen=True)
class Instruction(isa.Requirement):
    """One parsed instruction spelling, with everything the table says about it."""
    opcode: str
    dtype: str
    atype: str
    rounding: str                     #: effective rounding mode ('rn' when none is written)
    rounding_explicit: bool
    ftz: bool
    sat: bool
    relu: bool
    oob: bool
    min_ptx: tuple[int, int]
    min_sm: int
    spelling: str = field(compare=False)
    row: isa.Row = field(compare=False, repr=False)

    @property
    def mixed(self) -> bool:
        return self.row.mixed

    @property
    def types(self) -> tuple[str, ...]:
        return self.row.type_tokens

    @property
    def lanes(self) -> int:
        return 2 if self.dtype.endswith("x2") else 1

    @property
    def lane_format(self) -> str:
        """Format of the a and b lanes: 'f16' or 'bf16'."""
        return _LANE[self.atype]

    @property
    def result_format(self) -> str:
        return _LANE[self.dtype]

    @property
    def modifiers(self) -> frozenset[str]:
        return frozenset(m for m in isa.MODIFIERS if getattr(self, m))

    @property
    def operand_names(self) -> tuple[str, ...]:
        """Source operand names in PTX order (destination excluded)."""
        return isa.OPERANDS[(self.opcode, self.mixed)][1:]

    @property
    def operand_formats(self) -> tuple[str, ...]:
        """Format of each source operand in PTX order, e.g. ('f16', 'f32') for add.f32.f16."""
        return tuple("f32" if (self.mixed and n == "c") else self.atype
                     for n in self.operand_names)

    @property
    def result_type(self) -> str:
        return self.dtype

    def __str__(self) -> str:
        rnd = self.rounding if self.rounding_explicit else None
        return isa.canonical_spelling(self.opcode, rnd, self.modifiers, self.types)


def _fail(spelling: str, token: str | None, rule: str, message: str) -> NoReturn:
    raise SpellingError(f"{message} in '{spelling}'", spelling=spelling, token=token, rule=rule)


def _dotted(names: Iterable[str]) -> str:
    return ", ".join("." + n for n in names)


def parse(spelling: str) -> Instruction:
    """Parse and validate an instruction spelling against the instruction table (``ptxfp.isa``);
    raise SpellingError naming the bad token and the rule it breaks.

        >>> ins = parse("fma.rz.sat.f32.f16.sat")
        >>> str(ins), ins.operand_names, ins.operand_formats, ins.min_target
        ('fma.rz.sat.f32.f16', ('a', 'b', 'c'), ('f16', 'f16', 'f32'), 'sm_100')
    """
    if not isinstance(spelling, str):
        raise SpellingError(f"an instruction spelling must be a string, got {type(spelling).__name__}",
                            rule="syntax")
    text = spelling.strip()
    tokens = text.split(".")
    if not text or any(t == "" for t in tokens):
        _fail(text, None, "syntax", "empty token (misplaced '.')")
    opcode, rest = tokens[0], tokens[1:]
    if opcode not in OPCODES:
        _fail(text, opcode, "unknown-instruction",
              f"unknown instruction '{opcode}' (ptxfp models {', '.join(OPCODES)})")
    roundings: list[str] = []
    mods: set[str] = set()
    types: list[str] = []
    for t in rest:
        if t in isa.ROUNDINGS or t in ("rna", "rs"):
            if roundings:
                _fail(text, "." + t, "multiple-rounding",
                      f"multiple rounding modifiers specified ('.{roundings[0]}' and '.{t}')")
            roundings.append(t)
        elif t in isa.MODIFIERS:
            if t in mods and t not in isa.REPEATABLE:
                _fail(text, "." + t, "duplicate-modifier", f"duplicate .{t} modifier")
            mods.add(t)
        elif t in TYPES:
            types.append(t)
        else:
            _fail(text, "." + t, "unknown-modifier",
                  f"unknown modifier '.{t}' for instruction '{opcode}'")
    if not types:
        _fail(text, None, "missing-type", f"instruction '{opcode}' needs a type")
    rows = [r for r in isa.TABLE if r.opcode == opcode and r.type_tokens == tuple(types)]
    if not rows:
        ok = sorted({"." + ".".join(r.type_tokens) for r in isa.TABLE if r.opcode == opcode})
        _fail(text, "." + ".".join(types), "illegal-type",
              f"illegal type '.{'.'.join(types)}' for instruction '{opcode}' "
              f"(allowed: {', '.join(ok)})")
    rnd = roundings[0] if roundings else None
    tname = "." + ".".join(types)
    if rnd is not None and not any(rnd in r.roundings for r in rows):
        allowed = sorted({m for r in rows for m in r.roundings}, key=isa.ROUNDINGS.index)
        _fail(text, "." + rnd, "illegal-rounding",
              f"illegal rounding modifier '.{rnd}' for '{opcode}{tname}' "
              f"(allowed: {_dotted(allowed)})")
    allowed_mods: set[str] = set().union(*(r.modifiers for r in rows))
    for m in sorted(mods, key=isa.MODIFIER_ORDER.index):
        if m not in allowed_mods:
            _fail(text, "." + m, "illegal-modifier",
                  f".{m} is not allowed with '{opcode}{tname}'"
                  + (f" (allowed: {_dotted(sorted(allowed_mods))})" if allowed_mods else ""))
    fits = [r for r in rows if mods <= r.modifiers and r.required <= mods
            and (rnd is None or rnd in r.roundings)]
    if not fits:
        # Every modifier is legal on its own, so it is the combination (or the rounding with it).
        by_mods = [r for r in rows if mods <= r.modifiers and r.required <= mods]
        if by_mods and rnd is not None:
            allowed = sorted({m for r in by_mods for m in r.roundings}, key=isa.ROUNDINGS.index)
            _fail(text, "." + rnd, "illegal-rounding",
                  f"illegal rounding modifier '.{rnd}' for '{opcode}{tname}' with "
                  f"{_dotted(sorted(mods))} (allowed: {_dotted(allowed)})")
        _fail(text, _dotted(sorted(mods)), "illegal-combination",
              f"modifiers {_dotted(sorted(mods, key=isa.MODIFIER_ORDER.index))} "
              f"cannot be combined on '{opcode}{tname}'")
    # Several rows can fit (e.g. fma.rn.relu.f16x2 is in no other row); take the least demanding.
    row = min(fits, key=lambda r: (r.min_ptx, r.min_sm))
    if rnd is None and row.rounding_required:
        _fail(text, None, "rounding-required",
              f"rounding modifier required for '{opcode}{tname}' "
              f"(one of {_dotted(row.roundings)})")
    return Instruction(
        opcode=opcode, dtype=row.dtype, atype=row.atype, rounding=rnd or "rn",
        rounding_explicit=rnd is not None, ftz="ftz" in mods, sat="sat" in mods,
        relu="relu" in mods, oob="oob" in mods, min_ptx=row.min_ptx, min_sm=row.min_sm,
        spelling=text, row=row)
