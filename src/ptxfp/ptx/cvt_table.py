"""The ``cvt`` forms between .f32 and .f16/.bf16/.f16x2/.bf16x2, as rows of data.

One row is one family of spellings: destination and source type, the rounding modes it takes
(and whether one is required), the modifiers it may carry (and those it must carry), the number
of operands, and what it needs: every requirement is a (kind, threshold, message) triple whose
message is ptxas' own text for it, so that ``check()`` can say what ptxas says.

Derived from ptxas 13.0 (tests/data/ptxas, made by tools/ptxas_probe.py): the accepted
spellings, their lowest accepting .version and .target, and the messages printed below them.
Modifiers may come in any order; ``.relu``/``.sat``/``.satfinite`` may repeat, ``.ftz`` may not,
and two rounding modifiers are always an error ("Multiple rounding modifiers specified").
"""

from dataclasses import dataclass

#: rounding-modifier tokens ptxas recognises on cvt
ROUNDING_TOKENS = ("rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi")
#: cvt modifiers this table knows of
MODIFIER_TOKENS = ("ftz", "sat", "relu", "satfinite")
#: the types of the forms modeled: one side .f32, the other a half type
HALF_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
#: rows with ``targets`` are accepted only on those targets, else ptxas says this
RS_TARGETS = ("sm_100a", "sm_103a")

_ALL4 = ("rn", "rz", "rm", "rp")
_RNZ = ("rn", "rz")


@dataclass(frozen=True)
class CvtRow:
    dst: str
    src: str
    roundings: tuple             #: accepted rounding modes
    rounding_required: bool
    modifiers: frozenset         #: modifiers that may appear
    required: frozenset          #: modifiers that must appear
    requires: tuple              #: ((kind 'version'|'target', (major, minor)|sm, message), ...)
    targets: tuple = ()          #: when not empty: the only targets accepted (else message below)
    targets_message: str = ""    #: ptxas' message on other targets ('{target}' = the target)
    operands: int = 2            #: d, a (x2 from f32: d, a, b; .rs adds rbits)

    @property
    def types(self):
        return (self.dst, self.src)

    @property
    def min_ptx(self):
        return max([t for k, t, _ in self.requires if k == "version"], default=(1, 0))

    @property
    def min_sm(self):
        return max([t for k, t, _ in self.requires if k == "target"], default=10)

    @property
    def spelling(self):
        return "cvt." + self.dst + "." + self.src


def _v(feature, v, modifier_on=None):
    if modifier_on:
        return ("version", v, f"Modifier '{feature}' on '{modifier_on}' requires PTX ISA "
                              f".version {v[0]}.{v[1]} or later")
    return ("version", v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


def _t(feature, sm, kind="Feature"):
    return ("target", sm, f"{kind} '{feature}' requires .target sm_{sm} or higher")


_RELU = (_v(".relu", (7, 0)), _t(".relu", 80, "Modifier"))


def _satf(spelling):
    return (_v(".satfinite", (8, 1), spelling), _t(".satfinite", 70))


def _rows():
    rows = []

    def row(d, s, rnd, req_rnd, mods, required, requires, **kw):
        rows.append(CvtRow(d, s, tuple(rnd), req_rnd, frozenset(mods), frozenset(required),
                           tuple(requires), **kw))

    # f32 -> f16: any IEEE rounding (required), .ftz/.sat from PTX 4.0 on every target;
    # .relu (7.0, sm_80) and .satfinite (8.1, sm_70) with .rn/.rz only, without .ftz/.sat.
    row("f16", "f32", _ALL4, True, {"ftz", "sat"}, (), ())
    row("f16", "f32", _RNZ, True, {"relu"}, {"relu"}, _RELU)
    row("f16", "f32", _RNZ, True, {"satfinite"}, {"satfinite"}, _satf("cvt.f16.f32"))
    row("f16", "f32", _RNZ, True, {"relu", "satfinite"}, {"relu", "satfinite"},
        _satf("cvt.f16.f32") + _RELU)
    # f32 -> bf16 (7.0, sm_80): any IEEE rounding with optional .ftz; .relu / .satfinite
    # with .rn/.rz.
    base = (_v("cvt.bf16.f32", (7, 0)), _t("cvt.bf16.f32", 80))
    row("bf16", "f32", _ALL4, True, {"ftz"}, (), base)
    row("bf16", "f32", _RNZ, True, {"relu"}, {"relu"}, base + _RELU)
    row("bf16", "f32", _RNZ, True, {"relu", "satfinite"}, {"satfinite"},
        base + _satf("cvt.bf16.f32"))
    # two f32 -> f16x2 / bf16x2 (7.0, sm_80): .rn/.rz, optional .relu, .satfinite (8.1);
    # .rs (stochastic rounding, 8.7) with a fourth operand (rbits), on sm_100a/sm_103a only.
    for d in ("f16x2", "bf16x2"):
        base = (_v(f"cvt.{d}.f32", (7, 0)), _t(f"cvt.{d}.f32", 80))
        row(d, "f32", _RNZ, True, {"relu"}, (), base, operands=3)
        row(d, "f32", _RNZ, True, {"relu", "satfinite"}, {"satfinite"},
            base + _satf(f"cvt.{d}.f32"), operands=3)
        row(d, "f32", ("rs",), True, {"relu", "satfinite"}, (), base + (_v(".rs", (8, 7)),),
            targets=RS_TARGETS, targets_message="Feature '.rs' not supported on .target "
                                                "'{target}'", operands=4)
    # f16 -> f32: exact, so no rounding modifier; .ftz/.sat from PTX 4.0.
    row("f32", "f16", (), False, {"ftz", "sat"}, (), ())
    # bf16 -> f32 (7.1, sm_80): a rounding modifier is allowed (and changes nothing); .ftz
    # needs 7.8 / sm_90.
    base = (_v("cvt with .f32.bf16", (7, 1)), _t("cvt with .f32.bf16", 80))
    row("f32", "bf16", _ALL4, False, (), (), base)
    row("f32", "bf16", _ALL4, False, {"ftz"}, {"ftz"},
        (_v("cvt with .f32.bf16.ftz", (7, 8)), _t("cvt with .f32.bf16.ftz", 90)))
    return tuple(rows)


TABLE = _rows()

#: the (dst, src) pairs of the table
PAIRS = tuple(dict.fromkeys(r.types for r in TABLE))


def rows_for(dst, src):
    return [r for r in TABLE if r.types == (dst, src)]
