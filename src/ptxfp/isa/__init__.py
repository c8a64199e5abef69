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

from . import arith, compare, cvt, cvt_small, cvtx, f64, fops, intops, minmax, mma, sfu
from .. import policy as _policy
from . import mma_form  # noqa: F401  (the matrix forms: tensor numerics read isa.mma_form)
from .rows import (CLASSES, FAMILIES, MODIFIER_ORDER, REPEATABLE, ROUNDING_TOKENS, ROUNDINGS,
                   Family, Operand, Require, Row, canonical_spelling, min_ptx, min_sm)

__all__ = ["TABLE", "ARITH", "CVT", "MINMAX", "Row", "Operand", "Family", "Require", "FAMILIES",
           "CLASSES", "ROUNDINGS", "ROUNDING_TOKENS", "MODIFIER_ORDER", "REPEATABLE",
           "OPCODES", "OPCODE_FAMILIES", "rows_for", "forms", "canonical_spelling",
           "canonical_spellings", "min_ptx", "min_sm", "arith", "cvt", "cvt_small", "cvtx",
           "compare", "fops", "f64", "intops", "minmax", "mma", "sfu", "MMA", "OPS", "family_rows",
           "all_spellings"]

ARITH: tuple[Row, ...] = arith.ROWS
CVT: tuple[Row, ...] = cvt.ROWS + cvt_small.ROWS
MINMAX: tuple[Row, ...] = minmax.ROWS
#: the per-thread instruction families of the interpreter (ptxfp/ops/); int before f64, so that
#: 'div' (of both) is read by the int family where no row has the types written ('div.rn.f16':
#: legal PTX, not modeled)
OPS: tuple[Row, ...] = (cvtx.ROWS + compare.ROWS + fops.ROWS + intops.ROWS + f64.ROWS
                         + sfu.ROWS)
#: the matrix forms (mma.sync, wgmma.mma_async, tcgen05.mma): computed by ptxfp.mma
MMA: tuple[Row, ...] = mma.ROWS
#: every row, family by family
TABLE: tuple[Row, ...] = ARITH + CVT + MINMAX + OPS + MMA

#: opcode -> family name, for every opcode of the table (the first family of the opcode)
OPCODES: dict[str, str] = {}
#: opcode -> every family with rows of that opcode, in table order (``cvt`` is the half-type
#: conversions of 'cvt' and the integer/f64 ones of 'cvtx'); the parser picks one by the types
OPCODE_FAMILIES: dict[str, tuple[str, ...]] = {}
for _r in TABLE:
    OPCODES.setdefault(_r.opcode, _r.family)
    if _r.family not in OPCODE_FAMILIES.get(_r.opcode, ()):
        OPCODE_FAMILIES[_r.opcode] = OPCODE_FAMILIES.get(_r.opcode, ()) + (_r.family,)

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
    table order (the matrix family: every shape, layout and optional token, isa.mma)."""
    seen: dict[str, None] = {}
    if family == "mma":
        return list(dict.fromkeys(s for _, s in mma.spellings()))
    for row, rnd, mods in forms(family, executable):
        seen.setdefault(canonical_spelling(row.opcode, rnd, mods, row.types), None)
    return list(seen)


def all_spellings(executable: bool = True, every: bool = False) -> list[str]:
    """Every family's canonical spellings, family by family: the float harness's families
    (``Family.harness``), or with ``every`` all of them (``ptxfp list``)."""
    return [s for fam, f in FAMILIES.items() if every or f.harness
            for s in canonical_spellings(fam, executable)]



def _every_spelling() -> list[str]:
    """Every spelling of the table, once (what policy's per_form globs are checked against)."""
    global _EVERY
    if _EVERY is None:
        _EVERY = all_spellings(executable=False, every=True)
    return _EVERY


_EVERY: list[str] | None = None
_policy._spellings = _every_spelling
