"""The instruction table: every form ptxfp models, as complete rows of data (rows.py).

One module of rows per family (arith.py: add/sub/mul/fma; cvt.py: cvt between .f32 and the
half types, cvt_small.py: cvt of the fp8/fp6/fp4/ue8m0 types), the union here with
the lookups every reader uses.  A new form is a new row; a new family is a module of rows and
an entry in ``rows.FAMILIES``.  tests/test_isa.py validates the table itself (no two rows
accept one spelling, every type is in the type table, every requirement is monotone).

Reading order: ``types`` (the PTX types) -> ``isa.rows`` (what a row is) -> ``isa.arith``,
``isa.cvt`` (the rows) -> ``spelling`` (the one parser) -> ``execute``/``cvt`` (computing).
"""

from __future__ import annotations

from typing import Iterator

from . import arith, cvt, cvt_small, minmax
from . import mma_form  # noqa: F401  (the matrix forms: tensor numerics read isa.mma_form)
from .rows import (CLASSES, FAMILIES, MODIFIER_ORDER, REPEATABLE, ROUNDING_TOKENS, ROUNDINGS,
                   Family, Operand, Require, Row, canonical_spelling, min_ptx, min_sm)

__all__ = ["TABLE", "ARITH", "CVT", "MINMAX", "Row", "Operand", "Family", "Require", "FAMILIES",
           "CLASSES", "ROUNDINGS", "ROUNDING_TOKENS", "MODIFIER_ORDER", "REPEATABLE",
           "OPCODES", "rows_for", "forms", "canonical_spelling", "canonical_spellings",
           "min_ptx", "min_sm", "arith", "cvt", "cvt_small", "minmax", "family_rows",
           "all_spellings"]

ARITH: tuple[Row, ...] = arith.ROWS
CVT: tuple[Row, ...] = cvt.ROWS + cvt_small.ROWS
MINMAX: tuple[Row, ...] = minmax.ROWS
#: every row, family by family
TABLE: tuple[Row, ...] = ARITH + CVT + MINMAX

#: opcode -> family name, for every opcode of the table
OPCODES: dict[str, str] = {r.opcode: r.family for r in TABLE}

_BY_SPELLING: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
for _r in TABLE:
    _BY_SPELLING.setdefault((_r.opcode, _r.types), []).append(_r)


def rows_for(opcode: str, type_tokens: tuple[str, ...]) -> list[Row]:
    """The rows of ``opcode`` with these type tokens (destination first), in table order."""
    return list(_BY_SPELLING.get((opcode, tuple(type_tokens)), ()))


def family_rows(family: str) -> tuple[Row, ...]:
    return tuple(r for r in TABLE if r.family == family)


def forms(family: str = "arith", executable: bool = True
          ) -> Iterator[tuple[Row, str | None, frozenset[str]]]:
    """Every (row, rounding, modifier set) of ``family``'s rows (the executable ones unless
    ``executable`` is False); the arithmetic rows always write their rounding."""
    for row in TABLE:
        if row.family != family or (executable and not row.executable):
            continue
        yield from ((row, rnd, mods) for rnd, mods in row.forms())


def canonical_spellings(family: str = "arith", executable: bool = True) -> list[str]:
    """The canonical spelling of every distinct form of ``family`` ('arith' or 'cvt'), in
    table order."""
    seen: dict[str, None] = {}
    for row, rnd, mods in forms(family, executable):
        seen.setdefault(canonical_spelling(row.opcode, rnd, mods, row.types), None)
    return list(seen)


def all_spellings(executable: bool = True) -> list[str]:
    """Every family's canonical spellings, family by family."""
    return [s for fam in FAMILIES for s in canonical_spellings(fam, executable)]

