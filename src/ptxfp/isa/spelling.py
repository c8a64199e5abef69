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

from .. import isa
from ..core import types
from ..errors import SpellingError
from . import mma as _mma
from .mma_form import MmaForm
from .cvt_small import UNDEFINED_NUMERICS
from .rows import MODIFIER_ORDER, REPEATABLE, ROUNDING_TOKENS, Row, canonical_spelling

__all__ = ["Instruction", "parse", "OPCODES", "mma_form", "MATRIX_OPCODES"]

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
    #: the matrix forms: (m, n, k), the (.alayout, .blayout) written (None where the form has
    #: none), and whether tcgen05.mma's descriptor shape and types were written
    shape: tuple[int, int, int] | None = None
    layouts: tuple[str, str] | None = None
    descriptor: bool = True

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
        if self.row.matrix is not None:
            return _mma.min_target(self.row)
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
        if self.row.matrix is not None:
            return _mma.canonical(self.row, self.shape, self.layouts,
                                  self.modifiers - self.row.required,
                                  with_types=self.descriptor)
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
    mods = {t for t in rest if t in MODIFIER_ORDER}
    rows = isa.rows_for(opcode, tys)
    for fam in families:           # the family of a row that takes the modifiers written
        if any(r.family == fam and r.required <= mods <= r.modifiers for r in rows):
            return fam             # ('div.approx.f32': sfu; 'div.rn.f32': f64)
    for fam in families:           # the family whose rows of the opcode take the modifiers
        if mods and mods <= {m for r in isa.family_rows(fam) if r.opcode == opcode
                             for m in r.modifiers}:
            return fam             # ('div.approx.f64': sfu's illegal type)
    for fam in families:
        if any(r.family == fam for r in rows):
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
    if _matrix_opcode(tokens) is not None:
        return parse_matrix(text)
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
              + (" (stochastic rounding takes random bits)" if rnd == "rs" else "")
              + ("".join(f" (the PTX ISA manual does not define the values of .{t})"
                         for t in row.types if t in UNDEFINED_NUMERICS)))
    default = fam.default_rounding if row.roundings else None
    return Instruction(
        opcode=opcode, dtype=row.dtype, atype=row.atype, rounding=rnd or default,
        rounding_explicit=rnd is not None, modifiers=frozenset(mods), spelling=text, row=row)


# ---------------------------------------------------------------------------------------------
# the matrix forms (isa/mma.py): mma.sync, wgmma.mma_async, tcgen05.mma

#: the matrix opcodes, as the rows name them
MATRIX_OPCODES = ("mma", "wgmma.mma_async", "tcgen05.mma")
_MATRIX_ROWS: dict[str, list[Row]] = {}
_MATRIX_BY_TYPES: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
for _row in _mma.ROWS:
    _MATRIX_ROWS.setdefault(_row.opcode, []).append(_row)
    _MATRIX_BY_TYPES.setdefault((_row.opcode, _row.types), []).append(_row)
_MATRIX_TYPES = frozenset(t for r in _mma.ROWS for t in r.types)
_MATRIX_MODS = frozenset(_mma.TOKEN_ORDER) | frozenset(_mma.TAIL_ORDER)
_SHAPE_TOKENS = _mma.shape_tokens()


def _matrix_opcode(tokens: list[str]) -> str | None:
    if tokens[0] == "mma":
        return "mma"
    if tokens[:2] == ["wgmma", "mma_async"]:
        return "wgmma.mma_async"
    if tokens[:2] == ["tcgen05", "mma"]:
        return "tcgen05.mma"
    return None


def _shape_of(tok: str) -> tuple[int, int, int] | None:
    import re
    m = re.fullmatch(r"m(\d{1,4})n(\d{1,4})k(\d{1,4})", tok)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def parse_matrix(spelling: str) -> Instruction:
    """Parse a matrix spelling (``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32``,
    ``wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16``,
    ``tcgen05.mma.cta_group::1.kind::f16`` with, in ptxfp's notation, the descriptor's shape
    and types after it) against the matrix rows; SpellingError names the token and rule."""
    text = spelling.strip()
    tokens = text.split(".")
    opcode = _matrix_opcode(tokens)
    if opcode is None or any(t == "" for t in tokens):
        _fail(text, tokens[0], "unknown-instruction", f"not a matrix instruction: '{text}'")
    rest = tokens[opcode.count(".") + 1:]
    shape: tuple[int, int, int] | None = None
    shape_tok: str | None = None
    lays: list[str] = []
    mods: list[str] = []
    tys: list[str] = []
    for t in rest:
        if t in LAYOUT_TOKENS:
            lays.append(t)
        elif _shape_of(t) is not None:
            if shape is not None:
                _fail(text, "." + t, "duplicate-modifier", f"a second shape '.{t}'")
            shape, shape_tok = _shape_of(t), t
        elif t in _MATRIX_MODS:
            if t in mods:
                _fail(text, "." + t, "duplicate-modifier", f"duplicate .{t} modifier")
            mods.append(t)
        elif t in _MATRIX_TYPES:
            tys.append(t)
        else:
            _fail(text, "." + t, "unknown-modifier",
                  f"unknown modifier '.{t}' for instruction '{opcode}'")
    rows = _MATRIX_ROWS[opcode]
    descriptor = bool(tys) or opcode != "tcgen05.mma"
    if opcode == "tcgen05.mma" and (tys or shape):
        if not (tys and shape):
            _fail(text, None, "missing-type", "tcgen05.mma's descriptor: write both its shape "
                  "and its types after the spelling (ptxfp's notation), e.g. "
                  "'tcgen05.mma.cta_group::1.kind::f16.m128n256k16.f32.bf16.bf16'")
    if shape_tok is not None and shape_tok not in _mma.shape_tokens(opcode):
        _fail(text, "." + shape_tok, "illegal-shape",
              f"illegal matrix shape '.{shape_tok}' for instruction '{opcode}'")
    mset = frozenset(mods)
    if opcode != "tcgen05.mma":
        for need in ("sync", "aligned"):
            if need not in mset:
                _fail(text, None, "missing-modifier",
                      f".{need} modifier required for instruction '{opcode}'")
        if shape is None:
            _fail(text, None, "missing-shape",
                  f"shape modifier required for instruction '{opcode}'")
        if not tys:
            _fail(text, None, "missing-type", f"instruction '{opcode}' needs its types")
    if tys:
        rows = _MATRIX_BY_TYPES.get((opcode, tuple(tys)), [])
        if not rows:
            ok = dict.fromkeys(
                "." + ".".join(r.types) for r in _MATRIX_ROWS[opcode]
                if shape is None or shape in r.matrix.shapes)  # type: ignore[union-attr]
            _fail(text, "." + ".".join(tys), "illegal-type",
                  f"illegal types '.{'.'.join(tys)}' for '{opcode}'"
                  + (f" with shape '.{shape_tok}'" if shape_tok else "")
                  + f" (allowed: {', '.join(list(ok)[:12])}{' ...' if len(ok) > 12 else ''})")
    if shape is not None:
        fit = [r for r in rows if shape in r.matrix.shapes]  # type: ignore[union-attr]
        if not fit:
            ok = dict.fromkeys(_mma._shape_token(s) for r in rows
                               for s in r.matrix.shapes)  # type: ignore[union-attr]
            _fail(text, "." + str(shape_tok), "illegal-shape",
                  f"illegal matrix shape '.{shape_tok}' for '{opcode}"
                  + (f".{'.'.join(tys)}'" if tys else "'")
                  + f" (allowed: {', '.join('.' + s for s in list(ok)[:12])}"
                  + f"{' ...' if len(ok) > 12 else ''})")
        rows = fit
    by_mods = [r for r in rows if r.required <= mset <= r.modifiers]
    if not by_mods:
        allowed = set().union(*(r.modifiers for r in rows))
        extra = [m for m in mods if m not in allowed]
        if extra:
            _fail(text, "." + extra[0], "illegal-modifier",
                  f".{extra[0]} is not allowed with this '{opcode}' form")
        missing = sorted(set.intersection(*(set(r.required) for r in rows)) - mset) \
            if rows else []
        if missing:
            _fail(text, None, "missing-modifier",
                  f"'{opcode}' needs {_dotted(missing)} here")
        _fail(text, _dotted(mods), "illegal-combination",
              f"modifiers {_dotted(mods)} cannot be combined on this '{opcode}' form")
    row = by_mods[0]
    mx = row.matrix
    assert mx is not None
    layouts: tuple[str, str] | None = None
    if mx.layouts:
        if len(lays) != 2:
            _fail(text, _dotted(lays) or None, "missing-layout",
                  f"'{opcode}' needs two layouts, .alayout then .blayout (got {len(lays)})")
        layouts = (lays[0], lays[1])
        if layouts not in mx.layouts:
            bad = "alayout" if lays[0] not in {p[0] for p in mx.layouts} else "blayout"
            tok = lays[0] if bad == "alayout" else lays[1]
            _fail(text, "." + tok, "illegal-layout",
                  f"illegal {bad} '.{tok}' for this '{opcode}' form (it takes "
                  f"{', '.join('.' + '.'.join(p) for p in mx.layouts)})")
    elif lays:
        _fail(text, "." + lays[0], "illegal-layout", f"'{opcode}' takes no layout tokens")
    return Instruction(opcode=opcode, dtype=row.types[0], atype=row.types[1],
                       rounding=None, rounding_explicit=False, modifiers=mset, spelling=text,
                       row=row, shape=shape or mx.shapes[0], layouts=layouts,
                       descriptor=descriptor)


LAYOUT_TOKENS = frozenset(_mma.LAYOUTS)
_FORM_OPCODE = {"mma": "mma", "wgmma.mma_async": "wgmma", "tcgen05.mma": "tcgen05.mma"}


def mma_form(spelling: str) -> MmaForm:
    """The :class:`~ptxfp.isa.mma_form.MmaForm` of a matrix spelling: what it computes.

        >>> f = mma_form("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
        >>> (f.m, f.n, f.k, f.atype, f.ctype, f.dtype)
        (16, 8, 16, 'bf16', 'f32', 'f32')
        >>> mma_form("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.m128n64k32"
        ...          ".f32.e4m3.e2m1.ue8m0").scale_block
        32
    """
    if not isinstance(spelling, str):
        raise SpellingError("an instruction spelling must be a string, got "
                            f"{type(spelling).__name__}", rule="syntax")
    text = spelling.strip()
    tokens = text.split(".")
    if not text or _matrix_opcode(tokens) is None:
        _fail(text, tokens[0] if text else None, "not-matrix",
              f"'{text}' is not a matrix instruction (mma_form takes "
              f"{', '.join(MATRIX_OPCODES)})")
    ins = parse_matrix(text)
    row, mx = ins.row, ins.row.matrix
    assert mx is not None and ins.shape is not None
    if not ins.descriptor:
        _fail(text, None, "missing-type",
              "tcgen05.mma takes its shape and types from the instruction descriptor: write "
              "them after the spelling (ptxfp's notation), e.g. "
              f"'{_mma.canonical(row, with_types=True)}'")
    m, n, k = ins.shape
    tys = row.types
    d, a, b = tys[0], tys[1], tys[2]
    c = tys[3] if ins.opcode == "mma" else d
    lay = ins.layouts or ("row", "col")
    sv = None
    if mx.scale_default is not None:
        sv = mx.scale_default
        for tok in ins.modifiers:
            if tok.startswith("scale_vec::"):
                sv = int(tok.split("::")[1][0])
            elif tok in ("block16", "block32"):
                sv = k // int(tok[5:])
    return MmaForm(opcode=_FORM_OPCODE[ins.opcode], m=m, n=n, k=k, atype=a, btype=b, ctype=c,
                   dtype=d, alayout=lay[0], blayout=lay[1], kind=mx.kind, scale_type=mx.stype,
                   scale_vec=sv, bitop=mx.bitop, satfinite="satfinite" in ins.modifiers,
                   spelling=str(ins))
