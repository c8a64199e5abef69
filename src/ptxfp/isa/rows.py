"""What a row of the instruction table is: one family of spellings, complete.

A row carries everything ptxfp and ptxas know about a family of spellings: the opcode and type
tokens, the rounding modes it takes (possibly none) and whether one is required, the modifiers it
may carry and those it must, its operands (name, PTX type, operand class: the register types and
immediates ptxas takes there), and what it needs: requirements as (kind, threshold, message)
triples whose message is ptxas' own text.  The spelling parser (spelling.py), ``check()``, the
interpreter, the CLI listing, the hardware harness and the test generators all read rows; none
of them has an if-chain of its own about a form's shape.

The vocabulary of the spellings (rounding tokens, modifier order) is here too, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from typing import Iterable, Iterator, Union

from ..core import types

#: one requirement: ('version', (major, minor), message) or ('target', sm, message), or
#: ('version@sm_89', (major, minor), message): a version that one target (and its a/f variants)
#: needs, or ('illegal', 0, message): a spelling refused wherever it is written (only with
#: per_release: the form is new in a later release); any of them as 'ptxas:13.1-:version' holds for some ptxas
#: releases only (:func:`per_release`), as 'ptx:8.8-:only:...' for some .versions of the
#: module only (:func:`per_ptx`)
Require = tuple[str, Union[tuple[int, int], int], str]

#: the IEEE rounding modes ptxfp computes
ROUNDINGS = ("rn", "rz", "rm", "rp")
#: every rounding-modifier token ptxas recognises ("Multiple rounding modifiers" counts them)
ROUNDING_TOKENS = ("rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi")
#: the canonical order of modifier tokens in a printed spelling (the manual's syntax blocks:
#: ``fma.rnd{.oob}{.ftz}{.sat}{.relu}``, ``cvt.frnd{.ftz}{.sat}{.relu}{.satfinite}``,
#: ``min{.ftz}{.NaN}{.xorsign.abs}``)
MODIFIER_ORDER = (
    # the selectors of the integer and comparison rows (one of each group per spelling, written
    # first as in the manual: ``setp.lt.and.ftz.f32``, ``mul.wide.u32``, ``shf.l.wrap.b32``,
    # ``prmt.b32.f4e``, ``testp.finite.f32``; the prmt modes and .shiftamt follow .sat)
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
    "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    "and", "or", "xor",
    "wide", "l", "r", "wrap", "clamp", "cc",
    "finite", "infinite", "number", "notanumber", "normal", "subnormal",
    # the float modifiers (``div.approx.ftz.f32``, ``div.full.ftz.f32``)
    "approx", "full", "oob", "ftz", "2pi", "NaN", "xorsign", "abs", "sat", "relu", "satfinite",
    "shiftamt", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16")
#: modifiers ptxas takes more than once in one spelling (the manual's own example writes
#: ``.sat`` twice); a second .ftz or .oob, or a second rounding modifier, is an error
REPEATABLE = frozenset({"sat", "relu", "satfinite"})

#: immediates by kind, as operand classes name them
IMM_F32 = frozenset({"imm_f32hex", "imm_f64hex", "imm_float"})
IMM_INT = frozenset({"imm_int", "imm_hex"})


def _classes() -> dict[str, frozenset[str]]:
    """Operand classes: the register types and immediate kinds ptxas 13.0 takes for one operand
    (tests/data/ptxas/operands.jsonl).  A type's own class (its name) is the type table's
    register list; the others are where ptxas takes more or less than that."""
    reg = {n: t.registers for n, t in types.TYPES.items()}
    out = dict(reg)
    out.update({
        # the mixed forms: a bf16 a/b also takes .u16/.s16 registers and integer immediates
        "mixed.bf16": reg["bf16"] | {"u16", "s16"} | IMM_INT,
        "f32.src": reg["f32"] | IMM_F32,
        # cvt: wider registers where ptxas takes them (the value sits in the low bits)
        "cvt.f16.d": reg["f16"] | {"b32", "b64"},
        "cvt.bf16.d": reg["bf16"],
        "cvt.f16x2.d": reg["f16x2"] | {"b64"},
        "cvt.bf16x2.d": reg["bf16x2"],
        "cvt.f32.to_f16": reg["f32"] | {"b64"} | IMM_F32,
        "cvt.f32.to_bf16": reg["f32"] | IMM_F32,
        "cvt.rbits": frozenset({"b32"}),
        "cvt.f32.from_f16": reg["f32"] | {"b64"},
        "cvt.f16.a": reg["f16"] | {"b32", "b64"},
        "cvt.f32.from_bf16": reg["f32"],
        "cvt.bf16.a": reg["bf16"],
        # lop3's truth table: an immediate only (ptxas: "Arguments mismatch" for a register)
        "imm.b32": IMM_INT,
    })
    return out


#: operand class name -> the register types and immediate kinds ptxas takes there
CLASSES: dict[str, frozenset[str]] = _classes()

#: operand classes that changed between ptxas releases: class -> ((first release, what that
#: release and the later ones take), ...).  ptxas 13.5 takes only .b16/.bf16 registers at a
#: .bf16 source of the mixed forms (add.f32.bf16 f, h, f), no .u16/.s16 register and no
#: integer immediate ("Arguments mismatch"; tests/data/ptxas/13.5/operands.jsonl); so do
#: 13.1-13.4 (tests/data/ptxas/releases_13x.json)
CLASSES_SINCE: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "mixed.bf16": (("13.1", CLASSES["bf16"]),),
}


def operand_class(cls: str, release: str | None = None) -> frozenset[str]:
    """What ptxas ``release`` ('13.0'; None: the newest) takes in an operand of class
    ``cls``."""
    out = CLASSES[cls]
    for since, allowed in CLASSES_SINCE.get(cls, ()):
        if release is None or _rkey(release) >= _rkey(since):
            out = allowed
    return out


@dataclass(frozen=True)
class Operand:
    """One operand of a row: its name in the manual, the PTX type of its bits, its class."""
    name: str
    type: str
    cls: str

    @property
    def allowed(self) -> frozenset[str]:
        return CLASSES[self.cls]


def version(message: str, v: tuple[int, int]) -> Require:
    return ("version", v, message)


def target(message: str, sm: int) -> Require:
    return ("target", sm, message)


def only(message: str, targets: Iterable[str]) -> Require:
    """A feature ptxas takes on these targets only (``message`` names '{target}'): the kind
    'only:sm_100a,sm_100f,...' (threshold 0), as the matrix forms need."""
    return ("only:" + ",".join(targets), 0, message)


def only_targets(kind: str) -> tuple[str, ...]:
    """The targets of an 'only:...' requirement kind."""
    return tuple(kind.split(":", 1)[1].split(","))


def per_release(req: Require, since: str = "", until: str = "") -> Require:
    """``req`` as a requirement of the ptxas releases from ``since`` to ``until`` only (CUDA
    release names, both ends included, either open): the kind 'ptxas:13.1-:version'.  Where
    two releases judge one form differently (ptxas 13.0 takes ``cvt.rn.satfinite.e2m1x2.f16x2``
    from PTX 8.6, 13.5 from 9.1), the row carries both, each for its releases."""
    kind, thr, msg = req
    return (f"ptxas:{since}-{until}:{kind}", thr, msg)


def illegal(message: str) -> Require:
    """A spelling ptxas refuses with ``message`` (beside what the .version and .target lack),
    whatever the .version and .target: with :func:`per_release`, for the releases before a
    form was added (ptxas 13.0: "Illegal modifier '.kind::mxf4nvf4' for instruction 'mma'
    with type '.ue8m0'")."""
    return ("illegal", 0, message)


def unknown_form(message: str) -> Require:
    """A spelling an older ptxas does not have at all and refuses with ``message`` alone,
    whatever else the form lacks (with :func:`per_release`: ptxas 13.1 says "Unexpected
    instruction types specified for 'cvt'" for ``cvt.rn.bf16x2.e4m3x2``, a PTX 9.2 form; 13.1-13.3
    "Illegal rounding modifier for instruction 'cvt'" for ``.rz`` on the narrowing small-float
    forms)."""
    return ("illegal-alone", 0, message)


def per_ptx(req: Require, since: tuple[int, int] | None = None,
            until: tuple[int, int] | None = None) -> Require:
    """``req`` as a requirement of the modules whose .version is from ``since`` to ``until``
    (both included, either open): the kind 'ptx:8.8-:only:...'.  ptxas 13.5 names the default
    scale vector of tcgen05.mma's kind::mxf4 '.scale_vec::2X' below PTX 8.8 and '.block32'
    from 8.8 on, each with its own targets."""
    kind, thr, msg = req
    lo = "%d.%d" % since if since else ""
    hi = "%d.%d" % until if until else ""
    return (f"ptx:{lo}-{hi}:{kind}", thr, msg)


def ptx_kind(kind: str, version: tuple[int, int] | None) -> str | None:
    """The kind of a requirement for a module of PTX ``version`` (None: unchecked, read as
    the newest), or None where it does not hold there."""
    if not kind.startswith("ptx:"):
        return kind
    _, span, inner = kind.split(":", 2)
    lo, hi = span.split("-")
    if version is None:
        return None if hi else inner
    if (lo and version < _pkey(lo)) or (hi and version > _pkey(hi)):
        return None
    return inner


def _pkey(v: str) -> tuple[int, int]:
    major, minor = v.split(".")
    return int(major), int(minor)


def _rkey(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.split("."))


def release_kind(kind: str, release: str | None = None) -> str | None:
    """The kind of a requirement as ptxas release ``release`` ('13.0') has it, or None where
    it is not one of that release's; ``release`` None: the newest release."""
    if not kind.startswith("ptxas:"):
        return kind
    _, span, inner = kind.split(":", 2)
    lo, hi = span.split("-")
    if release is None:
        return None if hi else inner
    r = _rkey(release)
    if (lo and r < _rkey(lo)) or (hi and r > _rkey(hi)):
        return None
    return inner


def for_release(requires: Iterable[Require], release: str | None = None
                ) -> tuple[Require, ...]:
    """The requirements of ``requires`` that hold for ptxas ``release`` (None: the newest),
    with plain kinds."""
    out = []
    for k, t, m in requires:
        kind = release_kind(k, release)
        if kind is not None:
            out.append((kind, t, m))
    return tuple(out)


def min_ptx(requires: Iterable[Require], release: str | None = None) -> tuple[int, int]:
    """The PTX ISA version a list of requirements needs ((1, 0) when none), as ptxas
    ``release`` (None: the newest) has them (those of some .versions only: as the newest
    .version has them)."""
    return max([t for k, t, _ in for_release(requires, release)
                if ptx_kind(k, None) == "version" and isinstance(t, tuple)], default=(1, 0))


def min_sm(requires: Iterable[Require], release: str | None = None) -> int:
    """The sm target a list of requirements needs (10 when none; fp8 cvt: sm_89, which
    PTX 8.1 and later allow)."""
    return max([t for k, t, _ in for_release(requires, release)
                if ptx_kind(k, None) == "target" and isinstance(t, int)], default=10)


@dataclass(frozen=True)
class Matrix:
    """What a matrix multiply-accumulate row (family 'mma': mma.sync, wgmma.mma_async,
    tcgen05.mma) has beyond a scalar row's tokens (isa/mma.py).

    ``shapes``: the (m, n, k) it takes (wgmma: one per N; tcgen05: those the instruction
    descriptor may name).  ``layouts``: the (.alayout, .blayout) pairs written in the spelling
    (empty where the spelling has none).  ``kind``: the ``.kind::`` (None where none is written).
    ``scale_vecs``: the scale-vector tokens accepted ('' = written without one) and
    ``scale_default``: the factors per row of A over one k when none is written.  ``stype``:
    the scale factors' type; ``bitop``: 'xor' or 'and' (b1, with .popc); ``cta_group``: 1 or 2
    (tcgen05); ``types_written``: whether the type tokens are part of the PTX spelling (not for
    tcgen05.mma, whose types and shape the instruction descriptor holds: ptxfp writes them
    after the spelling)."""
    shapes: tuple[tuple[int, int, int], ...]
    layouts: tuple[tuple[str, str], ...] = ()
    kind: str | None = None
    scale_vecs: tuple[str, ...] = ()
    scale_default: int | None = None
    stype: str | None = None
    bitop: str | None = None
    cta_group: int | None = None
    types_written: bool = True


@dataclass(frozen=True)
class Row:
    """One family of spellings: opcode, types, roundings, modifiers, operands, requirements."""
    family: str                   #: 'arith', 'cvt': the parser's vocabulary (isa.FAMILIES)
    opcode: str
    types: tuple[str, ...]        #: the type tokens as written: destination first
    roundings: tuple[str, ...]    #: rounding modes accepted (possibly none)
    rounding_required: bool
    modifiers: frozenset[str]     #: modifiers that may appear
    required: frozenset[str]      #: modifiers that must appear
    operands: tuple[Operand, ...]  #: destination first, in PTX order
    requires: tuple[Require, ...]  #: (kind, threshold, ptxas' message)
    section: str                  #: PTX ISA manual section
    targets: tuple[str, ...] = ()  #: when not empty: the only targets accepted
    targets_message: str = ""     #: ptxas' message on other targets ('{target}' = the target)
    executable: bool = True       #: computed by ptxfp (False: checked only)
    matrix: Matrix | None = None  #: the matrix forms' shapes, layouts, kinds (family 'mma')

    # -- the types
    @property
    def dtype(self) -> str:
        """The destination type."""
        return self.types[0]

    @property
    def atype(self) -> str:
        """The type of the first source (a): the last type token."""
        return self.types[-1]

    dst = dtype
    src = atype

    @property
    def mixed(self) -> bool:
        """An arithmetic row whose result type differs from its sources' (add.f32.f16)."""
        return self.family == "arith" and len(self.types) == 2

    # -- the operands
    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[1:]

    @property
    def operand_names(self) -> tuple[str, ...]:
        """Source operand names in PTX order (destination excluded)."""
        return tuple(o.name for o in self.sources)

    @property
    def operand_formats(self) -> tuple[str, ...]:
        """The PTX type of each source operand, in PTX order."""
        return tuple(o.type for o in self.sources)

    def positions(self, names: str | Iterable[str]) -> tuple[int, ...]:
        """For each of ``names``, its position among the sources, or 0 (the first source) where
        the row has no such operand: a lane function that takes (a, b, c) reads the operands
        of ``add d, a, b`` at (0, 1, 0) and of ``add.f32.f16 d, a, c`` at (0, 0, 1)."""
        own = self.operand_names
        return tuple(own.index(n) if n in own else 0 for n in names)

    @property
    def slots(self) -> tuple[tuple[str, str], ...]:
        """(name, operand class) of every operand, destination first."""
        return tuple((o.name, o.cls) for o in self.operands)

    # -- requirements
    @property
    def min_ptx(self) -> tuple[int, int]:
        return min_ptx(self.requires)

    @property
    def min_sm(self) -> int:
        return min_sm(self.requires)

    @property
    def spelling(self) -> str:
        return ".".join((self.opcode,) + self.types)

    def modifier_sets(self) -> Iterator[frozenset[str]]:
        """Every modifier combination this row accepts."""
        # (a matrix row's tokens, .satfinite aside, are not in MODIFIER_ORDER: after it)
        free = sorted(self.modifiers - self.required,
                      key=lambda m: (MODIFIER_ORDER.index(m), "") if m in MODIFIER_ORDER
                      else (len(MODIFIER_ORDER), m))
        for k in range(len(free) + 1):
            for extra in combinations(free, k):
                yield frozenset(self.required | set(extra))

    def forms(self) -> Iterator[tuple[str | None, frozenset[str]]]:
        """Every (rounding or None, modifier set) this row accepts; None when the row takes no
        rounding or may be written without one and has no default (cvt.f32.bf16)."""
        rnds: tuple[str | None, ...] = self.roundings
        if not self.rounding_required and FAMILIES[self.family].default_rounding is None:
            rnds = (None,) + rnds
        elif not self.roundings:
            rnds = (None,)
        yield from product(rnds, self.modifier_sets())


@dataclass(frozen=True)
class Family:
    """What the spelling parser needs to know of a family of rows beyond the rows themselves.

    ``default_rounding``: the rounding of a spelling written without one ('rn' for add/sub/mul,
    whose .rn may be left out; None for cvt, where a widening has none).
    ``rounding_tokens``: the tokens read as rounding modifiers.
    ``conflict_rule``: the rule id of a second rounding modifier.
    ``foreign_types_not_modeled``: a type combination outside the rows is legal PTX that ptxfp
    does not model (cvt between other types), not an illegal one.
    ``modeled``: one line for messages: what ptxfp models of the family."""
    name: str
    default_rounding: str | None
    rounding_tokens: tuple[str, ...]
    conflict_rule: str
    foreign_types_not_modeled: bool
    modeled: str
    #: whether the float harness and conformance tools (hw/, conformance/) take the family's
    #: forms (``isa.all_spellings()``); the integer, comparison and f64 families of the PTX
    #: interpreter's instruction set are listed with ``all_spellings(every=True)``
    harness: bool = True


#: the families of rows; a new family (min/max, say) adds an entry here and a module of rows
FAMILIES: dict[str, Family] = {
    "arith": Family("arith", "rn", ROUNDINGS + ("rna", "rs"), "multiple-rounding", False,
                    "add, sub, mul and fma on .f16/.bf16/.f16x2/.bf16x2, .f32 and .f32x2, "
                    "mad.f32, and the mixed .f32 forms"),
    "cvt": Family("cvt", None, ROUNDING_TOKENS, "rounding-conflict", True,
                  "cvt between .f32 and .f16/.bf16/.f16x2/.bf16x2"),
    "minmax": Family("minmax", None, ROUNDING_TOKENS, "multiple-rounding", False,
                     "min, max, neg and abs on .f16/.bf16/.f16x2/.bf16x2"),
    # the matrix forms: their own parser (spelling.parse_matrix) reads Row.matrix; no
    # rounding token (the f64 forms' .rn is implicit), computed by ptxfp.mma
    "mma": Family("mma", None, (), "multiple-rounding", False,
                  "mma.sync, wgmma.mma_async and tcgen05.mma (isa/mma.py)", harness=False),
    # the per-thread instruction semantics of the interpreter (issue 25): rows in isa/cvtx.py,
    # isa/compare.py, isa/fops.py, isa/f64.py, isa/intops.py; arithmetic in ptxfp/ops/
    "cvtx": Family("cvtx", None, ROUNDING_TOKENS, "rounding-conflict", False,
                   "cvt between integer and float types, to and from .f64, between .f16 and "
                   ".bf16, and float rounding to integral values", harness=False),
    "compare": Family("compare", None, ROUNDING_TOKENS, "multiple-rounding", False,
                      "setp, set and selp on integer and float types", harness=False),
    "fops": Family("fops", None, ROUNDING_TOKENS, "multiple-rounding", False,
                   "min, max, abs, neg, copysign and testp on .f32/.f64", harness=False),
    "f64": Family("f64", "rn", ROUNDINGS, "multiple-rounding", False,
                  "add, sub, mul, fma and mad on .f64; div, rcp and sqrt .rn/.rz/.rm/.rp on "
                  ".f32 and .f64", harness=False),
    "int": Family("int", None, ROUNDING_TOKENS, "multiple-rounding", True,
                  "the integer instructions on .b/.u/.s 16/32/64", harness=False),
    # the SFU forms (issue 31): rows in isa/sfu.py, computed per target by ptxfp/ops/sfu/
    "sfu": Family("sfu", None, ROUNDING_TOKENS, "multiple-rounding", True,
                  "ex2, lg2, rcp, rsqrt, sqrt, sin, cos, tanh .approx and div .approx/.full",
                  harness=False),
}


def canonical_spelling(opcode: str, rounding: str | None, mods: Iterable[str],
                       type_tokens: Iterable[str]) -> str:
    """The spelling with the rounding first, the modifiers in MODIFIER_ORDER, then the types."""
    mods = set(mods)
    parts = [opcode] + ([rounding] if rounding else [])
    parts += [m for m in MODIFIER_ORDER if m in mods] + list(type_tokens)
    return ".".join(parts)


def requirement_text(v: tuple[int, int]) -> str:
    return f"requires PTX ISA .version {v[0]}.{v[1]} or later"
