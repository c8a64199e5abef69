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

from .rows import Operand, Require, Row

__all__ = ["ROWS", "SECTION", "FAMILY_TARGETS", "RS_TARGETS", "PAIRS"]

SECTION = "9.7.9.21"
#: the targets of the fp6/fp4/ue8m0 forms (ptxas 13.0)
FAMILY_TARGETS = tuple(f"sm_{n}{s}" for n in (100, 101, 103, 110, 120, 121) for s in "af")
#: the targets of the .rs forms
RS_TARGETS = ("sm_100a", "sm_103a")


def _v(feature: str, v: tuple[int, int], kind: str = "version") -> Require:
    return (kind, v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


_FP8 = "cvt with .e4m3x2/.e5m2x2"
FP8_REQUIRES: tuple[Require, ...] = (
    _v(_FP8, (7, 8)),
    ("target", 89, f"Feature '{_FP8}' requires .target sm_89 or higher"),
    _v(_FP8 + " on sm_89", (8, 1), "version@sm_89"),
)


def _family(types: str) -> tuple[tuple[Require, ...], str]:
    feature = f"cvt with {types}"
    return (_v(feature, (8, 6)),), f"Instruction '{feature}' not supported on .target '{{target}}'"


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
    # fp8
    for d in ("e4m3x2", "e5m2x2"):
        row(d, "f32", ("rn",), {"relu", "satfinite"}, {"satfinite"}, two, FP8_REQUIRES)
        row(d, "f16x2", ("rn",), {"relu", "satfinite"}, {"satfinite"}, (("a", "f16x2"),),
            FP8_REQUIRES)
        row("f16x2", d, ("rn",), {"relu"}, (), (("a", d),), FP8_REQUIRES)
    # fp6, fp4
    for ds, label in ((("e2m3x2", "e3m2x2"), ".e2m3x2/.e3m2x2"), (("e2m1x2",), ".e2m1x2")):
        req, msg = _family(label)
        for d in ds:
            row(d, "f32", ("rn",), {"relu", "satfinite"}, {"satfinite"}, two, req,
                FAMILY_TARGETS, msg)
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
    return tuple(rows)


ROWS = _rows()

#: the (dst, src) pairs of the rows
PAIRS = tuple(dict.fromkeys(r.types for r in ROWS))
