"""The small-float cvt rows: fp8 (e4m3, e5m2), fp6 (e2m3, e3m2), fp4 (e2m1), ue8m0, and the
stochastic-rounding (``.rs``) forms, as rows of data.

The forms of PTX ISA 9.0, section 9.7.9.21 (cvt), syntax block:

- ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`` and ``... .f16x2 d, a``
- ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a``
- ``cvt.rn.satfinite{.relu}.{e2m3x2,e3m2x2}.f32 d, a, b``,
  ``cvt.rn{.relu}.f16x2.{e2m3x2,e3m2x2} d, a``
- ``cvt.rn.satfinite{.relu}.e2m1x2.f32 d, a, b``, ``cvt.rn{.relu}.f16x2.e2m1x2 d, a``
- ``cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32,bf16x2}``, ``cvt.rn.bf16x2.ue8m0x2 d, a``
- ``cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4,e2m1x4}.f32 d, {a, b, e, f}, rbits``

(the ``.rs`` forms into .f16x2/.bf16x2 are rows of isa/cvt.py).  ptxfp.convert computes every
row here (smallfloat.py); the x4 forms take their four sources as four operands a, b, e, f.

Requirements, measured with ptxas 13.0 over .version 4.0-9.0 x sm_50-sm_121f
(tools/ptxas_probe.py --groups cvt-small, tests/data/ptxas/spellings_small.jsonl):

- fp8 (``cvt with .e4m3x2/.e5m2x2``): PTX 7.8 and sm_89, and on sm_89 itself PTX 8.1
  ("Feature 'cvt with .e4m3x2/.e5m2x2 on sm_89' requires PTX ISA .version 8.1 or later"); a
  requirement that holds on one target only, the ``version@sm_89`` kind of requirement.
  Below PTX 8.1 ptxas names sm_90 as the target needed, from 8.1 sm_89 (``rows.per_ptx``).
- fp6, fp4 and ue8m0: PTX 8.6, and only the family/architecture targets sm_100a/f, sm_101a/f,
  sm_103a/f, sm_110a/f, sm_120a/f, sm_121a/f ("Instruction 'cvt with .e2m1x2' not supported
  on .target 'sm_100'").
- ``.rs``: PTX 8.7, sm_100a and sm_103a only.

Found with ptxas: a rounding modifier is required everywhere (also on the widening forms);
``.satfinite`` is required on the fp8/fp6/fp4 destinations ("'.satfinite' modifier required for
instruction 'cvt' with destination type '.e4m3x2'"), optional on ue8m0; ``.relu`` is illegal
with .ue8m0x2 ("Illegal modifier '.relu' for instruction 'cvt' with type '.ue8m0x2'"); .ftz
and .sat are illegal on every form here.
"""

from __future__ import annotations

from typing import Iterable

from .rows import Operand, Require, Row, only, per_ptx, per_release, unknown_form

__all__ = ["ROWS", "SECTION", "FAMILY_TARGETS", "RS_TARGETS", "PAIRS", "A_TARGETS",
           "RZ_TARGETS", "SMALL_X2", "UNDEFINED_NUMERICS"]

SECTION = "9.7.9.21"
#: the targets of the fp6/fp4/ue8m0 forms (ptxas 13.0; 13.5 adds sm_107a/f, a target 13.0
#: does not know)
FAMILY_TARGETS = tuple(f"sm_{n}{s}" for n in (100, 101, 103, 107, 110, 120, 121) for s in "af")
#: the targets of the .rs forms (13.5 adds sm_107a)
RS_TARGETS = ("sm_100a", "sm_103a", "sm_107a")
#: the 'a' targets only: the .s2f6x2 forms (ptxas 13.5)
A_TARGETS = tuple(t for t in FAMILY_TARGETS if t.endswith("a"))
#: the targets of .rz on the narrowing fp8/fp6/fp4/s2f6 forms (ptxas 13.5)
RZ_TARGETS = ("sm_107a", "sm_107f")
#: the packed small-float types of the x2 forms
SMALL_X2 = ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2")
#: the types whose numerics the PTX ISA manual does not define: rows checked, not computed
UNDEFINED_NUMERICS = frozenset({"s2f6x2"})


def _v(feature: str, v: tuple[int, int], kind: str = "version") -> Require:
    return (kind, v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


_FP8 = "cvt with .e4m3x2/.e5m2x2"


def _fp8(feature: str) -> tuple[Require, ...]:
    """What an fp8 form needs, in ptxas' words for ``feature``: PTX 7.8; sm_90 below PTX 8.1
    and sm_89 from 8.1 (the message names the target the module's .version allows), and on
    sm_89 itself PTX 8.1."""
    return (_v(feature, (7, 8)),
            per_ptx(("target", 90, f"Feature '{feature}' requires .target sm_90 or higher"),
                    until=(8, 0)),
            per_ptx(("target", 89, f"Feature '{feature}' requires .target sm_89 or higher"),
                    since=(8, 1)),
            _v(feature + " on sm_89", (8, 1), "version@sm_89"))


FP8_REQUIRES: tuple[Require, ...] = _fp8(_FP8)


def _worded(old: tuple[Require, ...], new: tuple[Require, ...]) -> tuple[Require, ...]:
    """Requirements worded per release: ptxas 13.0's ``old``, 13.5's ``new`` (13.5 names the
    form, 'cvt.e4m3x2.f32', where 13.0 named its family, 'cvt with .e4m3x2/.e5m2x2'; so do
    13.1-13.4: tests/data/ptxas/releases_13x.json)."""
    return tuple(per_release(r, until="13.0") for r in old) + tuple(
        per_release(r, since="13.1") for r in new)


def _family(types: str) -> tuple[tuple[Require, ...], str]:
    feature = f"cvt with {types}"
    return (_v(feature, (8, 6)),), f"Instruction '{feature}' not supported on .target '{{target}}'"


def _family_of(types: str, d: str, s: str) -> tuple[tuple[Require, ...], str]:
    """The fp6/fp4 forms: PTX 8.6 and the family targets, worded per release (13.0:
    "Instruction 'cvt with .e2m1x2' not supported on .target 'sm_90'", 13.5: "Feature
    'cvt.e2m1x2.f32' not supported on .target 'sm_90'")."""
    (old,), msg = _family(types)
    name = f"cvt.{d}.{s}"
    new = (_v(name, (8, 6)),
           only(f"Feature '{name}' not supported on .target '{{target}}'", FAMILY_TARGETS))
    return _worded((old, only(msg, FAMILY_TARGETS)), new), msg


def _ops(d: str, sources: Iterable[tuple[str, str]]) -> tuple[Operand, ...]:
    return (Operand("d", d, d),) + tuple(Operand(n, t, t) for n, t in sources)


def _rows() -> tuple[Row, ...]:
    rows: list[Row] = []

    def row(d: str, s: str, rnd: tuple[str, ...], mods: Iterable[str], required: Iterable[str],
            sources: Iterable[tuple[str, str]], requires: tuple[Require, ...],
            targets: tuple[str, ...] = (), targets_message: str = "") -> None:
        rows.append(Row("cvt", "cvt", (d, s), rnd, True, frozenset(mods), frozenset(required),
                        _ops(d, sources), requires, SECTION, targets, targets_message))

    two = (("a", "f32"), ("b", "f32"))

    def fp8(d: str, s: str) -> tuple[Require, ...]:
        return _worded(FP8_REQUIRES, _fp8(f"cvt.{d}.{s}"))

    # fp8
    for d in ("e4m3x2", "e5m2x2"):
        row(d, "f32", ("rn",), {"relu", "satfinite"}, {"satfinite"}, two, fp8(d, "f32"))
        row(d, "f16x2", ("rn",), {"relu", "satfinite"}, {"satfinite"}, (("a", "f16x2"),),
            fp8(d, "f16x2"))
        row("f16x2", d, ("rn",), {"relu"}, (), (("a", d),), fp8("f16x2", d))
    # fp6, fp4
    for ds, label in ((("e2m3x2", "e3m2x2"), ".e2m3x2/.e3m2x2"), (("e2m1x2",), ".e2m1x2")):
        for d in ds:
            req, msg = _family_of(label, d, "f32")
            row(d, "f32", ("rn",), {"relu", "satfinite"}, {"satfinite"}, two, req,
                FAMILY_TARGETS, msg)
            req, msg = _family_of(label, "f16x2", d)
            row("f16x2", d, ("rn",), {"relu"}, (), (("a", d),), req, FAMILY_TARGETS, msg)
    # ue8m0
    req, msg = _family(".ue8m0x2")
    row("ue8m0x2", "f32", ("rz", "rp"), {"satfinite"}, (), two, req, FAMILY_TARGETS, msg)
    row("ue8m0x2", "bf16x2", ("rz", "rp"), {"satfinite"}, (), (("a", "bf16x2"),), req,
        FAMILY_TARGETS, msg)
    row("bf16x2", "ue8m0x2", ("rn",), (), (), (("a", "ue8m0x2"),), req, FAMILY_TARGETS, msg)
    # stochastic rounding into four lanes
    rs = (_v(".rs", (8, 7)),)
    four = (("a", "f32"), ("b", "f32"), ("e", "f32"), ("f", "f32"), ("rbits", "b32"))
    for d in ("e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4"):
        row(d, "f32", ("rs",), {"relu", "satfinite"}, {"satfinite"}, four, rs, RS_TARGETS,
            "Feature '.rs' not supported on .target '{target}'")
    rows.extend(_rows_9_1(rows))
    return tuple(rows)


def _feature(name: str, v: tuple[int, int]) -> tuple[tuple[Require, ...], str]:
    """ptxas 13.5's words for the forms of PTX 9.1/9.2: 'cvt.e4m3x2.bf16x2' needs a version
    and one of the family targets."""
    return (_v(name, v),), f"Feature '{name}' not supported on .target '{{target}}'"


def _rows_9_1(base: list[Row]) -> list[Row]:
    """The forms ptxas 13.5 (PTX ISA 9.1-9.5) adds, measured with ptxas V13.5.37
    (tools/ptxas_probe.py --groups cvt-small, tests/data/ptxas/13.5/spellings_cvt-small.jsonl):

    - fp8/fp6/fp4 from ``.bf16x2`` (PTX 9.1) and fp6/fp4 from ``.f16x2`` (9.1): ``.rn``,
      ``.satfinite`` required, ``.relu`` optional, on the family targets;
    - ``.bf16x2`` from fp8/fp6/fp4 (9.2): ``.rn``, ``.relu`` and ``.satfinite`` optional;
    - ``.s2f6x2`` (9.1, the 'a' targets only): from .f32 (a, b) and .bf16x2, ``.satfinite``
      required; to .bf16x2 (``.satfinite`` optional); never with .f16x2 ("Unexpected
      instruction types");
    - ``.rz`` on every narrowing form above and the .f32/.f16x2 ones, on sm_107a/sm_107f only
      ("Instruction 'cvt with .e4m3x2.f32.rz' not supported on .target 'sm_100a'"), PTX 9.4;
    - ``cvt.rn.satfinite.e2m1x2.f16x2`` (a .b8 destination): ptxas 13.0 took it from PTX 8.6
      as one of the .e2m1x2 forms; 13.5 asks for 9.1 (the version that documents it): a
      requirement per release.

    ptxas 13.5 words the requirements of the PTX 7.8-8.7 fp8/fp6/fp4 forms above per form
    ("Feature 'cvt.e2m1x2.f32' requires PTX ISA .version 8.6", "Feature 'cvt.f16x2.e2m1x2' not
    supported on .target 'sm_90'") where 13.0 said "cvt with .e2m1x2" (and "Instruction ...
    not supported"); the rows carry both wordings, each for its releases (:func:`_worded`),
    and check(ptxas=R) says R's (tests/test_cvt_small_ptxas.py: every message, both releases).
    """
    rows: list[Row] = []

    def row(d: str, s: str, rnd: tuple[str, ...], mods: Iterable[str],
            required: Iterable[str], sources: Iterable[tuple[str, str]],
            requires: tuple[Require, ...], targets: tuple[str, ...], message: str) -> None:
        rows.append(Row("cvt", "cvt", (d, s), rnd, True, frozenset(mods), frozenset(required),
                        _ops(d, sources), requires, SECTION, targets, message,
                        executable=not ({d, s} & UNDEFINED_NUMERICS)))

    narrow = {"relu", "satfinite"}
    two = (("a", "f32"), ("b", "f32"))
    # narrowing from the packed halves
    for s in ("bf16x2", "f16x2"):
        for d in SMALL_X2:
            if s == "f16x2" and d in ("e4m3x2", "e5m2x2"):
                continue                       # PTX 7.8 forms (rows above)
            req, msg = _feature(f"cvt.{d}.{s}", (9, 1))
            if (d, s) == ("e2m1x2", "f16x2"):
                req = (per_release(_v("cvt with .e2m1x2", (8, 6)), until="13.0"),
                       per_release(req[0], since="13.1"))
            row(d, s, ("rn",), narrow, {"satfinite"}, (("a", s),), req, FAMILY_TARGETS, msg)
    # widening into .bf16x2
    for s in SMALL_X2:
        req, msg = _feature(f"cvt.bf16x2.{s}", (9, 2))
        # ptxas 13.1 (PTX 9.1) does not have these forms (tools/release_probe.py)
        req = req + (per_release(unknown_form("Unexpected instruction types specified for "
                                              "'cvt'"), until="13.1"),)
        row("bf16x2", s, ("rn",), narrow, (), (("a", s),), req, FAMILY_TARGETS, msg)
    # .s2f6x2
    s2 = (_v("cvt with .s2f6x2", (9, 1)),)
    s2msg = "Instruction 'cvt with .s2f6x2' not supported on .target '{target}'"
    row("s2f6x2", "f32", ("rn",), narrow, {"satfinite"}, two, s2, A_TARGETS, s2msg)
    row("s2f6x2", "bf16x2", ("rn",), narrow, {"satfinite"}, (("a", "bf16x2"),), s2,
        A_TARGETS, s2msg)
    row("bf16x2", "s2f6x2", ("rn",), narrow, (), (("a", "s2f6x2"),), s2, A_TARGETS, s2msg)
    # .rz on the narrowing forms: sm_107a/f
    for r in base + list(rows):
        d, s = r.types
        if d not in SMALL_X2 + ("s2f6x2",) or r.roundings != ("rn",):
            continue
        targets = tuple(t for t in RZ_TARGETS if t in r.targets or not r.targets)
        # off its targets ptxas names the form's own targets too (sm_107f for .s2f6x2)
        # (the row's targets are where both hold: the harness reads them)
        rz_msg = f"Instruction 'cvt with .{d}.{s}.rz' not supported on .target '{{target}}'"
        own = (only(r.targets_message, r.targets),) if r.targets and not any(
            "only:" in k for k, _, _ in r.requires) else ()     # (fp6/fp4: worded per release)
        row(d, s, ("rz",), r.modifiers, r.required, [(o.name, o.type) for o in r.operands[1:]],
            r.requires + own + (only(rz_msg, RZ_TARGETS), _v(f"cvt with .{d}.{s}.rz", (9, 4)),
                                 # ptxas 13.1-13.3 know no .rz here (tools/release_probe.py)
                                 per_release(unknown_form("Illegal rounding modifier for "
                                                          "instruction 'cvt'"), until="13.3")),
            targets, rz_msg)
    return rows


ROWS = _rows()

#: the (dst, src) pairs of the rows
PAIRS = tuple(dict.fromkeys(r.types for r in ROWS))
