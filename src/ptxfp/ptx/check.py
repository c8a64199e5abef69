"""``check(text)``: what ptxas 13.5 (or an older release, ``ptxas="13.0"``) would say about
the instructions ptxfp models.

The checker reads PTX text (a bare spelling, a snippet, or a module; see reader.py) and, for
every instruction in ptxfp's model, decides what ptxas decides:

* half-precision and mixed-precision ``add``/``sub``/``mul``/``fma``: the spelling through
  ``ptxfp.parse()`` (the instruction table, isa/) plus the lexical rules ptxas applies before
  it (unknown modifiers, more than one rounding modifier, a repeated ``.ftz``/``.oob``);
* ``cvt`` between .f32 and .f16/.bf16/.f16x2/.bf16x2: the cvt rows (isa/cvt.py), the same rows
  ``ptxfp.convert`` parses and computes;
* for both, the requirements (with ptxas' messages) and the operands' classes are the row's own
  (``Row.requires``, ``Row.operands``);
* the .version/.target pair, unknown versions and targets: per ptxas release, CUDA 12.0-13.5
  (releases.py; 13.0 and 13.5 measured), and the requirements of a row that differ between
  releases (``rows.per_release``: cvt.rn.satfinite.e2m1x2.f16x2 needs PTX 8.6 in 13.0, 9.1
  in 13.5) as that release has them;
* operands (in snippets and modules): count, vector operands, register types and immediates
  per operand (tables below, measured with ptxas), undeclared registers.

Messages carry ptxas' own text (``Diagnostic.ptxas``), with ptxfp's explanation appended
where ptxas' text alone would not say enough.  Every other instruction (ld, st, mov, other
cvt forms, ...) gets one 'info' diagnostic and is counted; it is an error only when PTX has
no instruction of that name at all (``fmaa``, ``ADD``: the opcode vocabulary of opcodes.py) or
a token after the name is no modifier ptxas knows after that name (``bar.syncx``: "Unknown
modifier '.syncx'", the modifier vocabulary of modifiers.py).

All tables were measured with ptxas 13.0 and 13.5 (tools/ptxas_probe.py, tests/data/ptxas and
tests/data/ptxas/13.5; tests/test_check_releases.py holds check() to 13.5's records, with no
spelling differing).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from .. import isa
from ..core import types
from ..errors import SpellingError
from ..isa.rows import IMM_F32, IMM_INT, ROUNDING_TOKENS as _RNDS
from ..isa.arith import (UNDOCUMENTED_BF16_FMA, undocumented_bf16_fma,
                         undocumented_bf16_fma_message)
from ..isa.rows import for_release, only_targets, operand_class, ptx_kind
from ..isa.matrix_moves import OPCODES as MOVE_OPCODES, judge as move_judge
from .mma_check import matrix_opcode, matrix_operand_errors, matrix_verdict
from ..limits import guarded, paused_gc
from ..isa.spelling import parse
from .opcodes import known_opcode, suggest, unknown_modifiers, unknown_name
from .sfu import OPCODES as SFU_OPCODES, verdict as sfu_verdict
from .releases import release as _release, reworded, unread
from .reader import Addr, Imm, PtxSyntaxError, Vec, range_hint, read, undeclared_registers

__all__ = ["check", "check_program", "Diagnostic", "Report", "spelling_verdict",
           "requirement_messages", "KNOWN_VERSIONS", "TARGET_MIN_VERSION", "RULES"]

#: rule id -> what it covers
RULES = {
    "syntax": "the text cannot be read as PTX",
    "unknown-modifier": "a modifier ptxas does not know ('Unknown modifier')",
    "rounding-conflict": "more than one rounding modifier ('Multiple rounding modifiers')",
    "duplicate-modifier": "a repeated .ftz or .oob ('Duplicate .ftz modifier')",
    "illegal-type": "a type combination the instruction does not have",
    "illegal-rounding": "a rounding modifier the form does not take",
    "illegal-modifier": "a modifier the form does not take",
    "illegal-combination": "modifiers that cannot be combined",
    "rounding-required": "a form that needs a rounding modifier has none",
    "min-version": "the .version is below what the instruction needs",
    "min-target": "the .target is below what the instruction needs",
    "target-unsupported": "the instruction exists only on some targets (e.g. sm_100a)",
    "state-space": "a state space the instruction does not take ('State space incorrect')",
    "operand-count": "wrong number of operands",
    "operand-type": "an operand of a register type or immediate kind the form does not take",
    "vector-operand": "a vector operand where none is allowed",
    "undeclared": "a register that is not declared",
    "duplicate-label": "a label defined twice ('Duplicate definition of label')",
    "reg-type": "a register declaration of a type ptxas does not have or needs a newer target",
    "unknown-version": "a .version the ptxas release does not know",
    "unknown-target": "a .target the ptxas release does not know",
    "target-version": "a .target that needs a newer .version",
    "missing-version": "a module without .version",
    "missing-target": "a module without .target",
    "spelling-only": "no .version/.target to check requirements against",
    "unmodeled": "an instruction outside ptxfp's model (only its name and modifiers checked)",
    "unknown-instruction": "an opcode that is no PTX instruction ('Not a name of any known "
                           "instruction')",
    "summary": "how many instructions are modeled and how many not",
    UNDOCUMENTED_BF16_FMA: "fma.{rz,rm,rp} on .bf16/.bf16x2: not in the PTX ISA; ptxas 13.0 "
                           "compiles it as f16 arithmetic (scalar) or as .rn (packed)",
}


#: opcodes.unknown_modifiers once per spelling (a module repeats its spellings; its scan of
#: the longer names cost more than the rest of checking an instruction)
@lru_cache(maxsize=4096)
def _unknown_modifiers(spelling: str, name: str, release: str | None = None
                       ) -> tuple[tuple[int, str], ...]:
    return tuple(unknown_modifiers(spelling, name, release))


# ---------------------------------------------------------------------------------------------
# diagnostics

@dataclass(frozen=True)
class Diagnostic:
    """One finding.  ``line``/``col`` are 1-based; 0 means the text as a whole (or an argument).
    ``ptxas`` is ptxas' own message for the same problem, when there is one."""
    severity: str
    line: int
    col: int
    message: str
    rule: str
    ptxas: str | None = None

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.severity}: {self.message} [{self.rule}]"


class Report(list[Diagnostic]):
    """The list of Diagnostics of one ``check()``, with counts."""

    def __init__(self, diags: Iterable[Diagnostic] = (), *, modeled: int = 0,
                 unmodeled: int = 0, version: tuple[int, int] | None = None,
                 target: str | None = None, kind: str | None = None,
                 unmodeled_counts: dict[str, int] | None = None) -> None:
        super().__init__(diags)
        self.modeled = modeled
        self.unmodeled = unmodeled
        #: instruction name (opcodes.py) -> how many instructions of it were not modeled
        self.unmodeled_counts = dict(unmodeled_counts or {})
        self.version = version
        self.target = target
        self.kind = kind

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self if d.severity == "warning"]

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error."""
        return not self.errors

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self)


# ---------------------------------------------------------------------------------------------
# versions and targets: per ptxas release (releases.py); these names are the default release's

_DEFAULT = _release()
KNOWN_VERSIONS = _DEFAULT.versions
CURRENT_VERSION = _DEFAULT.current
TARGET_MIN_VERSION = _DEFAULT.targets
#: other entries a .target list may carry
TARGET_OPTIONS = ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32")

_TARGET_RE = re.compile(r"sm_(\d+)([af]?)$")


def target_sm(target):
    """The SM number of a target name ('sm_90a' -> 90); a/f variants count as their number."""
    m = _TARGET_RE.match(target)
    return int(m.group(1)) if m else None


def _vstr(v):
    return "%d.%d" % v


def _norm_version(version):
    if version is None:
        return None
    if isinstance(version, tuple):
        return tuple(int(x) for x in version)
    s = str(version).strip()
    m = re.fullmatch(r"(\d+)\.(\d+)", s)
    if not m:
        raise ValueError(f"version must look like '8.6' or (8, 6), got {version!r}")
    return int(m.group(1)), int(m.group(2))


def _norm_target(target):
    if target is None:
        return None
    if isinstance(target, int):
        return f"sm_{target}"
    s = str(target).strip()
    return f"sm_{s}" if re.fullmatch(r"\d+[af]?", s) else s


# ---------------------------------------------------------------------------------------------
# spellings

HALF_TYPES = types.HALF_TYPES
ARITH_OPCODES = tuple(op for op, fam in isa.OPCODES.items() if fam == "arith")
MINMAX_OPCODES = tuple(op for op, fam in isa.OPCODES.items() if fam == "minmax")
#: the float types of the arithmetic rows beyond the half types
F32_TYPES = ("f32", "f32x2")
#: every PTX type name (a token of these is a type, not a modifier): the type table's
PTX_TYPES = types.TYPE_TOKENS
#: rounding-modifier tokens ("Multiple rounding modifiers specified" counts them all)
ROUNDING_TOKENS = frozenset(_RNDS)
#: modifiers ptxas knows on these instructions: illegal ones are "Illegal modifier '.x' for
#: instruction 'op'"; any other token is "Unknown modifier '.x'" (measured: .full, .foo)
KNOWN_MODIFIERS = frozenset("ftz sat relu oob satfinite approx NaN xorsign abs 2pi".split()) \
    | ROUNDING_TOKENS
#: repeating these is an error ("Duplicate .ftz modifier"); .sat and .relu may repeat
NO_REPEAT = ("ftz", "oob")


@dataclass(frozen=True)
class Verdict:
    """What ptxas decides about one spelling, independent of .version/.target.

    ``family``: 'arith', 'cvt', or None (not modeled); ``errors``: ((rule, message), ...)
    that hold everywhere; ``requires``: ((kind, threshold, message), ...) with kind 'version'
    or 'target'; ``targets``: when not empty, the only targets accepted (``targets_message``
    otherwise); ``slots``: per operand (name, operand class); ``form``: the parsed Instruction
    (arith) or Row (cvt)."""
    spelling: str
    family: str | None
    errors: tuple = ()
    requires: tuple = ()
    targets: tuple = ()
    targets_message: str = ""
    slots: tuple = ()
    form: object = None
    #: False: judged as ptxas judges it (ptx/sfu.py) but not computed by ptxfp
    modeled: bool = True

    @property
    def ok(self):
        return not self.errors

    @property
    def min_ptx(self):
        return isa.min_ptx(self.requires)

    @property
    def min_sm(self):
        return isa.min_sm(self.requires)

    def accepts(self, version, target):
        """ptxas' decision at (version, target): True when the spelling assembles there."""
        return not self.errors and not requirement_messages(self, version, target)


#: the (dst, src) type pairs of the small-float cvt rows (isa/cvt_small.py)
_SMALL_PAIRS = frozenset(isa.cvt_small.PAIRS)
#: the small-float types of those rows: a cvt naming one is judged here whatever the other
#: type (ptxas: "Unexpected instruction types" for .s2f6x2.f16x2)
_SMALL_TYPES = frozenset(t for p in _SMALL_PAIRS for t in p) - {"f32", "f16x2", "bf16x2"}


def _family(toks):
    """'arith', 'cvt' or None (outside the model) for a spelling split on '.'.

    add/sub/mul/fma belong to the model when a type is a half type, when there is no type at
    all, or when there are two or more types (the mixed forms, or a mistake); cvt when its types
    are .f32 and half types, or missing.  Plain .f32 arithmetic, integer forms and cvt between
    two half types or other types stay outside."""
    op, rest = toks[0], toks[1:]
    types = [t for t in rest if t in PTX_TYPES]
    if op in ARITH_OPCODES:
        if op == "mad":      # mad.lo.s32 ...: the integer forms stay outside
            return "arith" if any(t in F32_TYPES for t in types) else None
        return "arith" if any(t in HALF_TYPES or t in F32_TYPES for t in types) \
            or len(types) != 1 else None
    if op in MINMAX_OPCODES:
        return "minmax" if any(t in HALF_TYPES for t in types) else None
    if op == "cvt":
        if not types or tuple(types) in _SMALL_PAIRS or _SMALL_TYPES & set(types):
            return "cvt"
        if not all(t in HALF_TYPES or t == "f32" for t in types):
            return None
        if not any(t in HALF_TYPES for t in types):
            return None
        if len(types) == 2 and all(t in HALF_TYPES for t in types):
            return None
        return "cvt"
    return None


def _lexical(op, rest):
    """The errors ptxas finds in the tokens themselves, before matching any form, and the
    rounding modifier it goes on with (the last one written)."""
    for t in rest:
        if t not in PTX_TYPES and t not in KNOWN_MODIFIERS:
            return [("unknown-modifier", f"Unknown modifier '.{t}'")], None
    errs = []
    rnds = [t for t in rest if t in ROUNDING_TOKENS]
    if len(rnds) > 1:
        errs.append(("rounding-conflict", "Multiple rounding modifiers specified"))
    for m in NO_REPEAT:
        if rest.count(m) > 1:
            errs.append(("duplicate-modifier", f"Duplicate .{m} modifier"))
    return errs, (rnds[-1] if rnds else None)


def _conflicts(pairs, mods):
    """ptxas' "cannot be combined" errors for the modifiers in written order: each new
    modifier is tested against the earlier ones, the pairs in ``pairs`` order; a modifier is
    named in one conflict at most."""
    out, used, seen = [], set(), []
    for m in mods:
        if m in seen:
            continue
        if m not in used:
            pair = next((p for p in pairs if m in p and (set(p) - {m}) <= set(seen) - used
                         and len(set(p)) == 2), None)
            if pair:
                out.append(("illegal-combination",
                            f"Modifier '.{pair[0]}' cannot be combined with modifier "
                            f"'.{pair[1]}'"))
                used |= set(pair)
        seen.append(m)
    return out


#: which illegal modifier ptxas names first when there are several
ILLEGAL_ORDER = ("relu", "ftz", "oob", "sat", "satfinite", "approx", "rs", "2pi")
#: modifier pairs ptxas reports as conflicts on add/sub/mul/fma, before any other check
ARITH_CONFLICTS = (("relu", "sat"), ("ftz", "oob"))


def _arith_slots(op, types):
    """(name, operand class) per operand of add/sub/mul/fma with these type tokens, or ()
    when the table has no such types: the row's own operands."""
    rows = isa.rows_for(op, tuple(types))
    return rows[0].slots if rows else ()


def _cvt_slots(types, rnd):
    """(name, operand class) per operand of cvt with these types (and rounding), or ()."""
    rows = isa.rows_for("cvt", tuple(types))
    if not rows:
        return ()
    return next((r for r in rows if rnd in r.roundings), rows[0]).slots


def _check_arith(spelling, toks):
    op, rest = toks[0], toks[1:]
    errs, rnd = _lexical(op, rest)
    if errs and errs[0][0] == "unknown-modifier":
        return Verdict(spelling, "arith", tuple(errs))
    types = tuple(t for t in rest if t in PTX_TYPES)
    mods = [t for t in rest if t not in PTX_TYPES and t not in ROUNDING_TOKENS]
    mixed_relu = "f32" in types and "relu" in mods
    # on the mixed forms ptxas rejects .relu before it looks at .ftz with .oob
    errs += _conflicts(ARITH_CONFLICTS[:1] if mixed_relu else ARITH_CONFLICTS, mods)
    # What ptxfp's parser sees: the types, the rounding ptxas goes on with, each modifier once.
    canon = ".".join([op] + ([rnd] if rnd else []) + list(dict.fromkeys(mods)) + list(types))
    ins = None
    try:
        ins = parse(canon)
    except SpellingError as e:
        if not errs:
            errs.append(_arith_error(op, types, rnd, mods, e))
    slots = _arith_slots(op, types)
    if errs:
        return Verdict(spelling, "arith", tuple(dict.fromkeys(errs)), slots=slots, form=ins)
    return Verdict(spelling, "arith", (), ins.row.requires, slots=slots, form=ins)


def _arith_error(op, types, rnd, mods, e):
    """ptxas' message for a spelling ptxfp's parser rejects (``e``): the table decides, the
    wording and the choice among several problems follow ptxas."""
    rows = isa.rows_for(op, types)
    if op == "mad":
        # mad knows no .relu/.satfinite on any type: ptxas says so before it reads the types
        bad = [m for m in ILLEGAL_ORDER if m in mods and m in ("relu", "satfinite")]
        if bad:
            return "illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction '{op}'"
    if not rows or e.rule in ("illegal-type", "missing-type"):
        return "illegal-type", f"Unexpected instruction types specified for '{op}'"
    allowed = set().union(*(r.modifiers for r in rows))
    bad = [m for m in ILLEGAL_ORDER if m in mods and m not in allowed]
    if op == "fma" and (rows[0].mixed or rows[0].dtype in F32_TYPES) and "relu" in mods:
        # fma.relu exists for half types only: ptxas looks for such a form and finds the types
        return "illegal-type", f"Unexpected instruction types specified for '{op}'"
    if bad:
        return "illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction '{op}'"
    if rnd == "rs":
        return "illegal-modifier", f"Illegal modifier '.rs' for instruction '{op}'"
    if rnd is not None and not any(rnd in r.roundings for r in rows):
        return "illegal-rounding", f"Illegal rounding modifier for instruction '{op}'"
    return _spelling_error(op, e)


def _spelling_error(op, e):
    rule, tok = e.rule, e.token or ""
    if rule == "rounding-conflict":
        return rule, "Multiple rounding modifiers specified"
    if rule == "illegal-rounding":
        return rule, f"Illegal rounding modifier for instruction '{op}'"
    if rule == "illegal-modifier":
        return rule, f"Illegal modifier '{tok}' for instruction '{op}'"
    if rule == "illegal-combination":
        mods = sorted({m.strip(" .") for m in tok.split(",")},
                      key=lambda m: ILLEGAL_ORDER.index(m) if m in ILLEGAL_ORDER else 99)
        return rule, (f"Modifier '.{mods[0]}' cannot be combined with modifier '.{mods[-1]}'"
                      if mods else "Illegal modifier combination")
    if rule == "rounding-required":
        return rule, f"Rounding modifier required for instruction '{op}'"
    if rule in ("illegal-type", "missing-type"):
        return "illegal-type", f"Unexpected instruction types specified for '{op}'"
    if rule == "unknown-modifier":
        return rule, f"Unknown modifier '{tok}'"
    return rule or "syntax", str(e)


def _check_minmax(spelling, toks):
    """min/max/neg/abs on the half types: ptxfp's parser decides, the message is one ptxas
    prints for the spelling (measured, tests/data/ptxas: 'minmax' group)."""
    op, rest = toks[0], toks[1:]
    errs, rnd = _lexical(op, rest)
    types = tuple(t for t in rest if t in PTX_TYPES)
    slots = _arith_slots(op, types)
    if errs:
        return Verdict(spelling, "minmax", tuple(errs[:1]), slots=slots)
    mods = [t for t in rest if t not in PTX_TYPES and t not in ROUNDING_TOKENS]
    for m in ("xorsign", "abs"):
        if mods.count(m) > 1:
            return Verdict(spelling, "minmax", (
                ("duplicate-modifier", f"Multiple .{m} modifiers specified"),), slots=slots)
    conflict = _conflicts(ARITH_CONFLICTS[:1], mods)
    if conflict:
        return Verdict(spelling, "minmax", tuple(conflict[:1]), slots=slots)
    canon = ".".join([op] + ([rnd] if rnd else []) + list(dict.fromkeys(mods)) + list(types))
    try:
        ins = parse(canon)
    except SpellingError as e:
        rows = isa.rows_for(op, types)
        if not rows or e.rule in ("illegal-type", "missing-type") or (
                "relu" in mods and op in ("min", "max")):
            # .relu is a modifier of the integer min/max: ptxas blames the types
            err = ("illegal-type", f"Unexpected instruction types specified for '{op}'")
        else:
            allowed = set().union(*(r.modifiers for r in rows))
            bad = [m for m in mods if m not in allowed]
            bad.sort(key=lambda m: m != "relu")     # ptxas names an illegal .relu alone
            if bad:
                err = ("illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction '{op}'")
            elif rnd is not None:
                err = ("illegal-rounding", f"Illegal rounding modifier for instruction '{op}'")
            else:
                have, need = ("xorsign", "abs") if "xorsign" in mods else ("abs", "xorsign")
                err = ("illegal-combination", f"Modifier '.{have}' requires modifier '.{need}'")
        return Verdict(spelling, "minmax", (err,), slots=slots)
    return Verdict(spelling, "minmax", (), ins.row.requires, slots=slots, form=ins)


def _cvt_conflicts(types, rnd, mods):
    """The modifier pairs ptxas rejects on cvt before matching a form (measured)."""
    pairs = [("satfinite", "sat"), ("relu", "sat")]
    narrowing = len(types) == 2 and types[1] == "f32" and types[0] in HALF_TYPES
    if narrowing:
        pairs.append(("satfinite", "ftz"))
        if types[0].startswith("bf16"):
            pairs.append(("relu", "ftz"))
    errs = _conflicts(pairs, mods)
    used = {m for m in ("relu", "sat", "satfinite", "ftz") if any(f"'.{m}'" in e for _, e in errs)}
    if narrowing and "satfinite" in mods and "satfinite" not in used and rnd not in ("rn", "rz"):
        if rnd is not None and (rnd != "rs" or types[0] == "f16"):
            errs.append(("illegal-combination",
                         f"Modifier '.satfinite' cannot be combined with modifier '.{rnd}'"))
        elif rnd is None and types[0] != "f16x2":
            errs.append(("illegal-combination",
                         "Modifier '.satfinite' cannot be combined with modifier ''"))
    return errs


def _check_cvt(spelling, toks):
    v = _check_cvt_spelling(spelling, toks)
    if v.slots:
        return v
    rest = toks[1:]
    types = tuple(t for t in rest if t in PTX_TYPES)
    rnds = [t for t in rest if t in ROUNDING_TOKENS]
    return dataclasses.replace(v, slots=_cvt_slots(types, rnds[-1] if rnds else None))


def _check_cvt_spelling(spelling, toks):
    rest = toks[1:]
    errs, rnd = _lexical("cvt", rest)
    if errs and errs[0][0] == "unknown-modifier":
        return Verdict(spelling, "cvt", tuple(errs))
    types = tuple(t for t in rest if t in PTX_TYPES)
    mods = [t for t in rest if t not in PTX_TYPES and t not in ROUNDING_TOKENS]
    errs += _cvt_conflicts(types, rnd, mods)
    if errs:
        return Verdict(spelling, "cvt", tuple(dict.fromkeys(errs)))
    rows = isa.rows_for("cvt", types)
    widening = len(types) == 2 and types[0] == "f32"
    if not rows or (widening and ("relu" in mods or "satfinite" in mods)):
        # .relu/.satfinite exist on narrowing cvt only: ptxas then blames the types
        return Verdict(spelling, "cvt",
                       (("illegal-type", "Unexpected instruction types specified for 'cvt'"),))
    tname = "." + ".".join(types)
    all_rnd = {r for row in rows for r in row.roundings}
    all_mod = set().union(*(row.modifiers for row in rows))
    if rnd is not None and rnd not in all_rnd:
        if rnd == "rs":
            errs.append(("illegal-modifier",
                         f"Illegal modifier '.rs' for instruction 'cvt' with type '{tname}'"))
        else:
            errs.append(("illegal-rounding", "Illegal rounding modifier for instruction 'cvt'"))
    bad = [m for m in ILLEGAL_ORDER if m in mods and m not in all_mod]
    if bad:
        errs.append(("illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction 'cvt'"))
    if errs:
        return Verdict(spelling, "cvt", tuple(errs[:1]))
    mset = set(mods)
    fits = [r for r in rows if mset <= r.modifiers and r.required <= mset
            and (rnd is None or rnd in r.roundings)]
    if not fits:
        if any(mset <= r.modifiers and r.required <= mset for r in rows):
            return Verdict(spelling, "cvt", (
                ("illegal-rounding", "Illegal rounding modifier for instruction 'cvt'"),))
        # .relu/.satfinite select the forms without .ftz/.sat: ptxas names those illegal
        strong = [r for r in rows if r.required & mset & {"relu", "satfinite"}] or rows
        allowed = set().union(*(r.modifiers for r in strong))
        bad = [m for m in ILLEGAL_ORDER if m in mset and m not in allowed]
        if bad:
            return Verdict(spelling, "cvt", (
                ("illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction 'cvt'"),))
        return Verdict(spelling, "cvt", (
            ("illegal-rounding", "Illegal rounding modifier for instruction 'cvt'"),))
    row = min(fits, key=lambda r: (r.min_ptx, r.min_sm))
    if rnd is None and row.rounding_required:
        return Verdict(spelling, "cvt",
                       (("rounding-required", "Rounding modifier required for instruction 'cvt'"),))
    return Verdict(spelling, "cvt", (), row.requires, row.targets, row.targets_message,
                   _cvt_slots(types, rnd), row)


@lru_cache(maxsize=65536)
def spelling_verdict(spelling):
    """The :class:`Verdict` of one instruction spelling (``fma.rn.relu.bf16``)."""
    toks = spelling.split(".")
    if any(t == "" for t in toks):
        return Verdict(spelling, None)
    mv = matrix_verdict(spelling) if matrix_opcode(spelling) else None
    if mv is not None:                            # mma, wgmma.mma_async, tcgen05.mma
        return Verdict(spelling, "mma", mv[0], mv[1], (), "", (), mv[2])
    fam = _family(toks)
    if fam == "arith":
        return _check_arith(spelling, toks)
    if fam == "cvt":
        return _check_cvt(spelling, toks)
    if fam == "minmax":
        return _check_minmax(spelling, toks)
    if toks[0] in SFU_OPCODES:
        return _check_sfu(spelling, toks)
    if toks[0] in MOVE_OPCODES:
        if _unknown_modifiers(spelling, toks[0]):
            return Verdict(spelling, None)   # reported as for any instruction: Unknown modifier
        # ldmatrix/stmatrix/movmatrix: judged per .target/.version (isa/matrix_moves.py), in
        # _Checker.matrix_move; the interpreter computes them (ldmatrix/stmatrix on .shared)
        return Verdict(spelling, "matrix-move",
                       modeled=toks[0] == "movmatrix" or any(t in ("shared", "shared::cta")
                                                             for t in toks[1:]))
    return _check_parsed(spelling)


def _check_sfu(spelling, toks):
    """tanh/ex2/lg2/rcp/sqrt/rsqrt/sin/cos: judged by the table of ptx/sfu.py whether or not
    ptxfp computes the form (rcp/sqrt .rn on .f32/.f64 it does)."""
    op, rest = toks[0], toks[1:]
    if _unknown_modifiers(spelling, op):
        return Verdict(spelling, None)       # reported as for any instruction: Unknown modifier
    errs, requires = sfu_verdict(op, rest, PTX_TYPES, ROUNDING_TOKENS)
    parsed = _check_parsed(spelling) if not errs else None
    if parsed is not None and parsed.family is not None:
        return dataclasses.replace(parsed, requires=tuple(requires) + tuple(parsed.requires))
    return Verdict(spelling, "sfu", tuple(errs), tuple(requires), modeled=False)


def _check_parsed(spelling):
    """A spelling of the families ptxfp.compute and the interpreter compute beyond those above
    (cvt with integers and .f64, setp/set/selp, .f32/.f64 min/max/abs/neg/copysign/testp, .f64
    arithmetic, div/rcp/sqrt, the integer instructions): modeled when ptxfp's parser takes it,
    with the row's requirements; their operands are not checked here (the rows' operand classes
    are the computed types, narrower than what ptxas takes).  Otherwise not modeled."""
    try:
        ins = parse(spelling)
    except SpellingError:
        return Verdict(spelling, None)
    if ins.family in ("arith", "cvt", "minmax", "mma"):
        return Verdict(spelling, None)       # their own checks above decided not to model it
    return Verdict(spelling, ins.family, (), tuple(ins.row.requires), ins.row.targets,
                   ins.row.targets_message, (), ins)


def requirement_messages(verdict, version, target, release=None):
    """[(rule, message)] for what (version, target) lacks; either may be None (unchecked);
    ``release``: the ptxas release whose requirements count ('13.0'; None: the newest, as
    check() defaults to)."""
    out = []
    sm = target_sm(target) if target else None
    for kind, thr, msg in for_release(verdict.requires, release):
        kind = ptx_kind(kind, version)
        if kind is None:
            continue
        if kind == "illegal-alone":
            # a form this release does not know at all: its one message, nothing else
            return [("illegal-rounding" if "rounding" in msg else "illegal-type", msg)]
        if kind == "illegal":
            # a form this release does not have (it came later): ptxas' message, always
            out.append(("illegal-modifier", msg))
        elif kind == "version" and version is not None and version < thr:
            out.append(("min-version", msg))
        elif kind == "target" and sm is not None and sm < thr:
            out.append(("min-target", msg))
        elif kind.startswith("only:") and target is not None \
                and target not in only_targets(kind):
            # a feature ptxas takes on these targets only (the matrix forms)
            out.append(("target-unsupported", msg.format(target=target)))
        elif kind.startswith("version@") and version is not None and sm is not None \
                and sm == target_sm(kind.split("@")[1]) and version < thr:
            # a version that one target needs (fp8 cvt on sm_89: PTX 8.1)
            out.append(("min-version", msg))
    if verdict.targets and target is not None and target not in verdict.targets and not any(
            rule == "target-unsupported" for rule, _ in out):
        # (a row whose 'only:' requirements already said it: cvt .rz, its targets theirs)
        out.append(("target-unsupported", verdict.targets_message.format(target=target)))
    return out


# ---------------------------------------------------------------------------------------------
# the checker

def _imm_kind(imm):
    if imm.kind == "hexfloat":
        return "imm_f32hex" if imm.width == 32 else "imm_f64hex"
    return {"float": "imm_float", "dec": "imm_int", "hex": "imm_hex"}[imm.kind]


_IMM_WORDS = {"imm_f32hex": "a 0f... immediate", "imm_f64hex": "a 0d... immediate",
              "imm_float": "a decimal floating-point immediate", "imm_int": "an integer immediate",
              "imm_hex": "a hexadecimal integer immediate"}


def _allowed_words(cls, release=None):
    allowed = operand_class(cls, release)
    regs = sorted(r for r in allowed if not r.startswith("imm_"))
    words = " or ".join("." + r for r in regs) + " registers"
    if allowed & IMM_F32:
        words += " or f32 immediates (0f3F800000, 0d..., 1.0)"
    elif allowed & IMM_INT:
        words += " or integer immediates"
    return words


class _Checker:
    def __init__(self, prog, version, target, strict, release=_DEFAULT):
        self.prog = prog
        self.release = release
        self.version = version
        self.target = target
        self.strict = strict
        self.diags = []
        self.modeled = 0
        self.unmodeled = 0
        self.unmodeled_counts = {}
        self.current = None

    def add(self, severity, line, col, message, rule, ptxas=None):
        self.diags.append(Diagnostic(severity, line, col, message, rule, ptxas))

    # -- module-level
    def header(self, arg_version, arg_target):
        p = self.prog
        version, target = self.version, self.target
        vline, vcol = p.version_pos or (0, 0)
        tline, tcol = p.target_pos or (0, 0)
        if arg_version is not None:
            vline, vcol = 0, 0
        if arg_target is not None:
            tline, tcol = 0, 0
        if p.kind == "module":
            if version is None:
                self.add("error", 1, 1, "Missing .version directive at start of file",
                         "missing-version", "Missing .version directive at start of file")
            if target is None:
                self.add("error", 1, 1, "Missing .target directive at start of file",
                         "missing-target", "Missing .target directive at start of file")
        rel = self.release
        if version is not None and version not in rel.versions:
            msg = (f"Unsupported .version {_vstr(version)}; current version is "
                   f"'{_vstr(rel.current)}'")
            self.add("error", vline, vcol, msg + self._release_note(), "unknown-version", msg)
            self.version = None
        if target is not None and target not in rel.targets:
            msg = f"Unsupported .target '{target}'"
            self.add("error", tline, tcol, msg + self._release_note(), "unknown-target", msg)
            self.target = None
        if self.version is not None and self.target is not None:
            need = rel.targets[self.target]
            if self.version < need:
                msg = f"PTX .version {_vstr(self.version)} does not support .target {self.target}"
                self.add("error", tline, tcol,
                         msg + f" (needs .version {_vstr(need)} or later)", "target-version", msg)
        for name, line, col in p.target_options:
            if name != p.target and name not in TARGET_OPTIONS and not _TARGET_RE.match(name):
                self.add("warning", line, col, f"unknown .target option '{name}'", "unknown-target")
        # a .version/.target that was given but is unknown has its error above: no info line
        # that would say it was not given
        if version is not None and self.version is None or \
                target is not None and self.target is None:
            pass
        elif self.version is None and self.target is None:
            what = "spelling" if p.kind == "spelling" else "instructions"
            self.add("info", 0, 0, f"no .version/.target given: {what} checked for spelling "
                     "only (pass target= and version= to check requirements)", "spelling-only")
        elif self.version is None:
            self.add("info", 0, 0, "no .version given: PTX ISA version requirements not checked",
                     "spelling-only")
        elif self.target is None:
            self.add("info", 0, 0, "no .target given: target requirements not checked",
                     "spelling-only")

    def _release_note(self):
        """Which ptxas release said it, where it is not the default one."""
        if self.release is _DEFAULT:
            return ""
        return f" (ptxas {self.release.name})"

    def declarations(self):
        # one finding per declaration: a range %h<N> is one declaration (as ptxas says it)
        for _, _, d in self.prog.registers.entries():
            if d.type in ("bf16", "bf16x2"):
                msg = f"Parsing error near '.{d.type}': syntax error"
                self.add("error", d.line, d.col, msg + f" (ptxas has no .{d.type} registers; "
                         f"declare .b{16 if d.type == 'bf16' else 32})", "reg-type", msg)
            elif d.type == "f16x2":
                sm = target_sm(self.target) if self.target else None
                if sm is not None and sm < 53:
                    msg = "Feature '.f16x2 packed data-type' requires .target sm_53 or higher"
                    self.add("error", d.line, d.col, msg, "reg-type", msg)
                if self.version is not None and self.version < (4, 2):
                    msg = "Feature '.f16x2 packed data-type' requires PTX ISA .version 4.2 or later"
                    self.add("error", d.line, d.col, msg, "reg-type", msg)

    # -- instructions
    def instruction(self, ins):
        self.current = ins
        stop = unread(self.release.name, ins.opcode_spelling)
        if stop is not None:
            # a token this release's parser cannot read (releases.UNREAD: '.2pi' in 13.0)
            self.unmodeled += 1
            self.add("error", ins.line, ins.col, stop, "syntax", stop)
            return
        v = spelling_verdict(ins.opcode_spelling)
        if v.family is None:
            self.unmodeled += 1
            name = known_opcode(ins.opcode_spelling, self.release.name)
            if name is None:
                bad = unknown_name(ins.opcode_spelling)
                msg = f"Not a name of any known instruction: '{bad}'"
                hint = suggest(ins.opcode_spelling)
                self.add("error", ins.line, ins.col,
                         msg + (f" (did you mean '{hint}'?)" if hint else ""),
                         "unknown-instruction", msg)
                name = bad
            else:
                # ptxas reads every token after the name as a modifier, whatever the
                # instruction, and names one it does not know (modifiers.py)
                for off, tok in _unknown_modifiers(ins.opcode_spelling, name,
                                                   self.release.name):
                    msg = f"Unknown modifier '.{tok}'"
                    self.add("error", ins.line, ins.col + off, msg, "unknown-modifier", msg)
                self.add("info", ins.line, ins.col,
                         f"'{ins.opcode_spelling}' is not modeled by ptxfp (only its name and "
                         "modifiers are checked)", "unmodeled")
            self.unmodeled_counts[name] = self.unmodeled_counts.get(name, 0) + 1
            return
        if v.family == "matrix-move":
            self.matrix_move(ins, v)
            return
        if not v.modeled:
            # judged as ptxas judges it (ptx/sfu.py), not computed by ptxfp
            self.unmodeled += 1
            name = known_opcode(ins.opcode_spelling, self.release.name) or ins.opcode
            self.unmodeled_counts[name] = self.unmodeled_counts.get(name, 0) + 1
            for rule, msg in v.errors:
                self.add("error", ins.line, ins.col, msg, rule, msg)
            if v.errors:
                return
            for rule, msg in requirement_messages(v, self.version, self.target, self.release.name):
                self.add("error", ins.line, ins.col, msg, rule, msg)
            self.add("info", ins.line, ins.col,
                     f"'{ins.opcode_spelling}' is not computed by ptxfp (its spelling and "
                     "requirements are checked)", "unmodeled")
            return
        self.modeled += 1
        if self.prog.kind != "spelling" and v.family == "mma" and v.form is not None:
            # the matrix forms: fragment vectors and operand counts (ptx/mma_check.py)
            errs = matrix_operand_errors(ins.opcode_spelling, list(ins.operands))
            for rule, msg in errs:
                self.add("error", ins.line, ins.col, msg, rule, msg)
            if errs:
                return
        if self.prog.kind != "spelling" and v.slots:
            # ptxas matches the operands first: when they do not fit the types written, it
            # says so ("Arguments mismatch") and nothing about the modifiers
            n = len(self.diags)
            self.operands(ins, v)
            if any(d.severity == "error" and d.rule != "undeclared" for d in self.diags[n:]):
                return
        for rule, msg in v.errors:
            # (in the words of the release: releases.REWORDED)
            rule, msg = reworded(self.release.name, rule, msg)
            self.add("error", ins.line, ins.col, msg, rule, msg)
        if v.errors:
            return
        for rule, msg in requirement_messages(v, self.version, self.target, self.release.name):
            self.add("error", ins.line, ins.col, msg, rule, msg)
        form = v.form
        if (v.family == "arith" and form is not None
                and undocumented_bf16_fma(form.opcode, form.rounding, form.types)):
            # a warning, at the rounding modifier: ptxas says nothing (docs/ptxas-findings.md)
            off = ins.opcode_spelling.find("." + form.rounding) + 1
            self.add("warning", ins.line, ins.col + off,
                     undocumented_bf16_fma_message(str(form), form.lanes == 2),
                     UNDOCUMENTED_BF16_FMA)

    def matrix_move(self, ins, v):
        """ldmatrix/stmatrix/movmatrix: ptxas' first error for the spelling, its register
        vectors and the module's .target/.version (isa/matrix_moves.judge)."""
        toks = ins.opcode_spelling.split(".")
        if v.modeled:
            self.modeled += 1
        else:
            self.unmodeled += 1
            self.unmodeled_counts[toks[0]] = self.unmodeled_counts.get(toks[0], 0) + 1
        vectors = None
        if self.prog.kind != "spelling":
            vectors = tuple(len(o.items) if isinstance(o, Vec) and o.brackets == "{}" else None
                            for o in ins.operands)
        err = move_judge(toks[0], toks[1:], self.target, self.version, vectors)
        if err is not None:
            self.add("error", ins.line, ins.col, err.message, err.rule, err.ptxas)
        elif not v.modeled:
            self.add("info", ins.line, ins.col,
                     f"'{ins.opcode_spelling}' is not computed by ptxfp (a generic address; its "
                     "spelling and requirements are checked)", "unmodeled")

    def operands(self, ins, v):
        op = ins.opcode
        slots = v.slots
        mismatch = f"Arguments mismatch for instruction '{op}'"
        operands = list(ins.operands)
        row = v.form
        if row is not None and row.dtype.endswith("x4"):
            # cvt.rs into four lanes: d, {a, b, e, f}, rbits (manual 9.7.9.21)
            if len(operands) == 3 and isinstance(operands[1], Vec) \
                    and operands[1].brackets == "{}" and len(operands[1].items) == 4:
                operands = [operands[0]] + list(operands[1].items) + [operands[2]]
            else:
                self.add("error", ins.line, ins.col,
                         f"{mismatch}: '{ins.opcode_spelling}' takes d, {{a, b, e, f}}, rbits",
                         "operand-count", mismatch)
                return
        if len(operands) != len(slots):
            self.add("error", ins.line, ins.col,
                     f"{mismatch}: '{ins.opcode_spelling}' takes {len(slots)} operands "
                     f"({', '.join(n for n, _ in slots)}), got {len(ins.operands)}",
                     "operand-count", mismatch)
            return
        if ins.predicate is not None:
            self.symbol(ins.predicate.name, ins.predicate.line, ins.predicate.col, None)
        for k, ((name, cls), o) in enumerate(zip(slots, operands)):
            where = f"operand {k + 1} ('{name}')"
            if isinstance(o, Vec):
                msg = f"Vector operand is not allowed for instruction '{op}'"
                self.add("error", o.line, o.col, msg, "vector-operand", msg)
                continue
            if isinstance(o, Addr):
                self.add("error", o.line, o.col, f"{mismatch}: {where} is an address {o}",
                         "operand-type", mismatch)
                continue
            allowed = operand_class(cls, self.release.name)
            if isinstance(o, Imm):
                kind = _imm_kind(o)
                if k == 0:
                    # ptxas: an immediate of the destination's own kind (a float for an .f32
                    # result) "requires a result register"; any other "mismatches"
                    f32_dest = "f32" in allowed and not ({"b16", "f16", "f16x2"} & allowed)
                    ptxmsg = (f"Result register required for instruction '{op}'"
                              if f32_dest and kind in IMM_F32 else mismatch)
                    self.add("error", o.line, o.col, f"{ptxmsg}: the destination must be a "
                             f"register, not the immediate {o.text}", "operand-type", ptxmsg)
                    continue
                if kind not in allowed:
                    self.add("error", o.line, o.col,
                             f"{mismatch}: {where} cannot be {_IMM_WORDS[kind]} ({o.text}); "
                             f"it takes {_allowed_words(cls, self.release.name)}", "operand-type",
                             mismatch)
                continue
            decl = self.symbol(o.name, o.line, o.col, cls)
            if decl is None:
                continue
            if decl.type not in allowed or decl.vector != 1 or decl.space != "reg":
                what = (f"a .{decl.type} register" if decl.space == "reg" and decl.vector == 1
                        else f"a .{decl.space} variable")
                self.add("error", o.line, o.col,
                         f"{mismatch}: {where} '{o.name}' is {what}; it takes "
                         f"{_allowed_words(cls, self.release.name)}", "operand-type", mismatch)

    def names(self):
        """What ptxas rejects in the names of any instruction, modeled or not (issue 29 item
        22): a label defined twice, and (in modules) a % register no declaration names."""
        for name, line, col in self.prog.duplicate_labels:
            msg = f"Duplicate definition of label '{name}'"
            self.add("error", line, col, msg, "duplicate-label", msg)
        if not self.strict:
            return
        seen = {(d.line, d.col) for d in self.diags if d.rule == "undeclared"}
        for ins in self.prog.statements:
            for r in undeclared_registers(self.prog, ins):
                line, col = r.line or ins.line, r.col or ins.col
                if (line, col) in seen:
                    continue
                seen.add((line, col))
                self.current = ins
                self.symbol(r.name.lstrip("!"), line, col, None)

    def symbol(self, name, line, col, cls):
        """The Decl of a name used as an operand, or None (after reporting it if it must be
        declared)."""
        p = self.prog
        d = p.lookup(name, self.current)
        if d is not None:
            return d
        if name.startswith("!"):
            return p.lookup(name[1:], self.current)
        if self.strict:
            severity = "error"
        elif p.registers or p.kind == "module":
            severity = "warning"             # declares registers, but not this one
        else:
            return None
        pool = p.registers.candidates(name)          # bounded, whatever the ranges declare
        if cls is not None:
            fit = [r for r in pool
                   if p.registers[r].type in operand_class(cls, self.release.name)]
            close = difflib.get_close_matches(name, fit, n=1, cutoff=0.4)
        else:
            close = []
        close = close or difflib.get_close_matches(name, pool, n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        hint = range_hint(p, name) or hint          # %h7 past .reg %h<4>: say the range
        msg = f"Unknown symbol '{name}'"
        self.add(severity, line, col, msg + hint, "undeclared", msg)
        return None


def gpu_notes(prog, target):
    """Info diagnostics on what the GPU runs: each pair ptxas fuses into one fma (policy
    ``contract``, ptx/contract.py), and each SFU form whose primitive is assumed on the target
    ("'ex2.approx.f32': ex2: measured on sm_75 (ptx-math); assumed on sm_90";
    ops/sfu/measured.py)."""
    if prog.kind == "spelling":
        return []
    from .. import policy
    from ..ops.sfu import assumed, note
    from .contract import fusions, run_target
    try:
        t = run_target(None, target)
    except ValueError:
        return []
    out = []
    bodies = [(f.body, f.labels) for f in prog.functions if f.has_body] \
        if prog.kind == "module" else [(prog.statements, prog.labels)]
    if policy.current().contract == "ptxas":
        for body, labels in bodies:
            for f in fusions(body, labels=labels, target=t):
                out.append(Diagnostic("info", f.consumer.line, f.consumer.col,
                                      f.note().split(": ", 1)[1] + f" (on {t})", "contract"))
    seen = set()
    for ins in prog.statements:
        sp = ins.opcode_spelling
        if ins.opcode not in SFU_NOTE_OPCODES or sp in seen:
            continue
        seen.add(sp)
        try:
            if not assumed(sp, t):
                continue
            line = note(sp, t)
        except ValueError:
            continue
        out.append(Diagnostic("info", ins.line, ins.col, f"'{sp}': {line}", "sfu-model"))
    return out


SFU_NOTE_OPCODES = frozenset(("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "div"))


def check_program(prog, *, target=None, version=None, strict=None, ptxas=None):
    """:func:`check` on a Program already read."""
    rel = _release(ptxas)
    try:
        arg_v = _norm_version(version)
    except ValueError:
        # as an unknown target is a diagnostic, so is an unreadable version argument
        msg = f"Unsupported .version '{version}'"
        rep = check_program(prog, target=target, version=None, strict=strict, ptxas=ptxas)
        rep.insert(0, Diagnostic("error", 0, 0, msg + " (a PTX ISA version looks like 8.6)",
                                 "unknown-version", msg))
        return rep
    arg_t = _norm_target(target)
    v = arg_v if arg_v is not None else prog.version
    t = arg_t if arg_t is not None else prog.target
    c = _Checker(prog, v, t, strict if strict is not None else prog.kind == "module", rel)
    c.header(arg_v, arg_t)
    c.declarations()
    for ins in prog.statements:
        c.instruction(ins)
    c.names()
    c.diags += gpu_notes(prog, t)
    diags = sorted(c.diags, key=lambda d: (d.line, d.col))
    n = c.modeled + c.unmodeled
    diags.append(Diagnostic("info", 0, 0, f"{n} instruction{'s' if n != 1 else ''}: "
                            f"{c.modeled} modeled by ptxfp, {c.unmodeled} not modeled",
                            "summary"))
    return Report(diags, modeled=c.modeled, unmodeled=c.unmodeled, version=c.version,
                  target=c.target, kind=prog.kind, unmodeled_counts=c.unmodeled_counts)


@guarded("check")
def check(text: str, *, target: str | None = None, version: str | tuple[int, int] | None = None,
          strict: bool | None = None, mode: str = "auto", ptxas: str | None = None) -> Report:
    """Check PTX text as ptxas would; return a :class:`Report` (a list of Diagnostics).

    ``text``: a bare spelling (``fma.rn.relu.bf16``), a snippet of instructions, or a module.
    ``target``/``version`` (``'sm_90a'`` / ``'8.6'``) override or supply the module's
    ``.target``/``.version``; without either, a spelling or snippet is checked for spelling
    only (an 'info' diagnostic says so).  ``strict``: undeclared registers are errors (the
    default in modules; in snippets they are allowed, with a warning when the snippet declares
    other registers).  ``ptxas``: the CUDA release whose .version/.target rules apply ('13.0',
    '12.8'; 12.0 to 13.5, default 13.5: ptx/releases.py); an unknown release raises
    PtxfpError.  A syntax error is returned as an error diagnostic, never raised."""
    _release(ptxas)                   # an unknown release: one line, at once
    with paused_gc():
        try:
            prog = read(text, mode=mode)
        except PtxSyntaxError as e:
            d = Diagnostic("error", e.line or 0, e.col or 0, e.message, "syntax")
            return Report([d], kind=None)
        return check_program(prog, target=target, version=version, strict=strict, ptxas=ptxas)
