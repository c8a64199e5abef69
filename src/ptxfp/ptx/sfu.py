"""What ptxas takes of the SFU instructions, as data: tanh, ex2, lg2, rcp, sqrt, rsqrt, sin, cos.

ptxfp computes some of these forms (rcp/sqrt .rn on .f32/.f64, the interpreter's .approx
functions) and not others; either way ``check()`` judges every spelling of them as ptxas does:
its types, its modes (``.approx`` or a rounding modifier), whether ``.ftz`` is illegal,
optional or required with that mode, and what the form needs of .version/.target, with ptxas'
messages.

Measured with ptxas 13.5 (V13.5.37): ``python tools/ptxas_probe.py --groups sfu`` (every op x
{f16, f16x2, bf16, bf16x2, f32, f64} x rounding or none x {.approx, .ftz, .full, .sat, .relu}
subsets, and misorders, repeats and foreign tokens; tests/data/ptxas/13.5/spellings_sfu.jsonl,
held by tests/test_check_sfu.py), the requirements from the legal forms' version and target
sweeps.  ptxas 13.0 decides these the same way (PTX ISA 9.0 adds none of them).
"""

from __future__ import annotations

from typing import Union

__all__ = ["OPCODES", "FORMS", "REQUIRES", "ROUNDING_MESSAGE", "FTZ_REQUIRED", "verdict"]

Require = tuple[str, Union[tuple[int, int], int], str]

#: the instruction names of this table
OPCODES = ("tanh", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos")
_RND = ("rn", "rz", "rm", "rp")

#: (op, type) -> {mode: .ftz}: the mode is 'approx' or a rounding modifier; .ftz is 'no'
#: (illegal), 'opt' or 'req' with that mode
FORMS: dict[tuple[str, str], dict[str, str]] = {}
for _t in ("f16", "f16x2", "bf16", "bf16x2", "f32"):
    FORMS[("tanh", _t)] = {"approx": "no"}
FORMS[("ex2", "f16")] = FORMS[("ex2", "f16x2")] = {"approx": "no"}
FORMS[("ex2", "bf16")] = FORMS[("ex2", "bf16x2")] = {"approx": "req"}
FORMS[("ex2", "f32")] = {"approx": "opt"}
FORMS[("lg2", "f32")] = {"approx": "opt"}
FORMS[("rcp", "f32")] = {"approx": "opt", **{r: "opt" for r in _RND}}
FORMS[("rcp", "f64")] = {"approx": "req", **{r: "opt" for r in _RND}}
FORMS[("sqrt", "f32")] = {"approx": "opt", **{r: "opt" for r in _RND}}
FORMS[("sqrt", "f64")] = {r: "no" for r in _RND}
FORMS[("rsqrt", "f32")] = FORMS[("rsqrt", "f64")] = {"approx": "opt"}
FORMS[("sin", "f32")] = FORMS[("cos", "f32")] = {"approx": "opt"}


def _v(feature: str, v: tuple[int, int]) -> Require:
    return ("version", v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


def _t(feature: str, sm: int) -> Require:
    return ("target", sm, f"Feature '{feature}' requires .target sm_{sm} or higher")


def _bf(ty: str) -> tuple[Require, ...]:
    """What a .bf16/.bf16x2 operand itself needs (ptxas names the type as a feature)."""
    extra = (_t(".bf16x2", 75),) if ty == "bf16x2" else ()
    return extra + (_t("." + ty, 80), _v("." + ty, (7, 0)))


#: (op, type) -> requirements (kind, threshold, ptxas' message); none for the rest (every
#: .version and .target of the probe)
REQUIRES: dict[tuple[str, str], tuple[Require, ...]] = {
    ("tanh", "f16"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "f16x2"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "f32"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "bf16"): _bf("bf16") + (_t("tanh", 75), _v("tanh", (7, 0)),
                                     _t("tanh.bf16", 90), _v("tanh.bf16", (7, 8))),
    ("tanh", "bf16x2"): _bf("bf16x2") + (_t("tanh", 75), _v("tanh", (7, 0)),
                                         _t("tanh.bf16x2", 90), _v("tanh.bf16x2", (7, 8))),
    ("ex2", "f16"): (_t("ex2.f16/f16x2", 75), _v("ex2.f16/f16x2", (7, 0))),
    ("ex2", "f16x2"): (_t("ex2.f16/f16x2", 75), _v("ex2.f16/f16x2", (7, 0))),
    ("ex2", "bf16"): _bf("bf16") + (_t("ex2.bf16", 90), _v("ex2.bf16", (7, 8))),
    ("ex2", "bf16x2"): _bf("bf16x2") + (_t("ex2.bf16x2", 90), _v("ex2.bf16x2", (7, 8))),
}

#: ptxas' message for a rounding modifier on a form that takes none: it names the rounding
#: 'rounding' on the half types of tanh/ex2, where it reads the half-precision form
ROUNDING_MESSAGE = {("tanh", "f16"), ("tanh", "f16x2"), ("ex2", "f16"), ("ex2", "f16x2")}

#: ptxas' message where a form requires .ftz and the spelling has none
FTZ_REQUIRED = {
    ("ex2", "bf16"): ".ftz modifier required for instruction 'ex2.bf16'",
    ("ex2", "bf16x2"): ".ftz modifier required for instruction 'ex2.bf16x2'",
    ("rcp", "f64"): "'.ftz' modifier required for instruction 'rcp.approx.f64'",
}

#: the modifiers ptxas reads on these instructions (any other known token is illegal)
_MODIFIERS = ("approx", "ftz")


def verdict(op: str, rest: list[str], types: frozenset[str],
            roundings: frozenset[str]) -> tuple[tuple[tuple[str, str], ...],
                                               tuple[Require, ...]]:
    """(errors, requirements) of ``op`` with the tokens ``rest`` (after the name; unknown
    tokens already reported by the caller).  ``types``: the type tokens; ``roundings``: the
    rounding-modifier tokens.  Errors are (rule, ptxas' message), the first ptxas prints that
    decides the spelling."""
    errs: list[tuple[str, str]] = []
    rnds = [t for t in rest if t in roundings]
    if rest.count("ftz") > 1:
        errs.append(("duplicate-modifier", "Duplicate .ftz modifier"))
    if len(rnds) > 1:
        errs.append(("rounding-conflict", "Multiple rounding modifiers specified"))
    tys = [t for t in rest if t in types]
    ty = tys[0] if len(tys) == 1 else None
    modes = FORMS.get((op, ty)) if ty else None
    if errs:
        return tuple(errs[:1]), ()
    if "relu" in rest:                   # ptxas names .relu alone, before it reads the types
        return (("illegal-modifier", f"Illegal modifier '.relu' for instruction '{op}'"),), ()
    if modes is None:
        return (("illegal-type", f"Unexpected instruction types specified for '{op}'"),), ()
    mods = [t for t in rest if t not in types and t not in roundings]
    bad = [m for m in mods if m not in _MODIFIERS]
    if bad:
        return (("illegal-modifier", f"Illegal modifier '.{bad[0]}' for instruction '{op}'"),), ()
    ftz = "ftz" in mods
    if ftz and all(f == "no" for f in modes.values()):
        return (("illegal-modifier", f"Illegal modifier '.ftz' for instruction '{op}'"),), ()
    rnd = rnds[0] if rnds else None
    if rnd is not None and rnd not in modes:
        if (op, ty) in ROUNDING_MESSAGE:
            return (("illegal-rounding", f"Illegal modifier 'rounding' for instruction '{op}'"),), ()
        return (("illegal-rounding", f"Illegal rounding modifier for instruction '{op}'"),), ()
    approx = "approx" in mods
    if approx and "approx" not in modes:
        return (("illegal-modifier", f"Illegal modifier '.approx' for instruction '{op}'"),), ()
    if rnd is not None and approx:
        return (("illegal-combination",
                 f"Rounding modifier or '.approx' modifier required for instruction '{op}'"),), ()
    mode = rnd if rnd is not None else ("approx" if approx else None)
    if mode is None or mode not in modes:
        if "approx" not in modes:
            msg = f"Rounding modifier required for instruction '{op}'"
        elif any(m in _RND for m in modes):
            msg = f"Rounding modifier or '.approx' modifier required for instruction '{op}'"
        else:
            msg = f".approx modifier required for instruction '{op}'"
        return (("rounding-required", msg),), ()
    policy = modes[mode]
    if ftz and policy == "no":
        return (("illegal-modifier", f"Illegal modifier '.ftz' for instruction '{op}'"),), ()
    if not ftz and policy == "req":
        return (("illegal-modifier", FTZ_REQUIRED[(op, ty)]),), ()
    return (), REQUIRES.get((op, ty), ())
