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
sweeps.  ptxas 13.0 decides these the same way (PTX ISA 9.0 adds none of them), except
``.2pi`` (sin/cos ``.approx.ftz.2pi.f32``, PTX ISA 9.5: isa/sfu.py ``TWO_PI``), a token 13.0
cannot parse (releases.UNREAD).
"""

from __future__ import annotations

from ..isa.sfu import (FORMS, FTZ_REQUIRED, OPCODES, REQUIRES, ROUNDING_MESSAGE, SFU_ROUNDINGS,
                       TWO_PI, TWO_PI_FTZ, Require)

__all__ = ["OPCODES", "FORMS", "REQUIRES", "ROUNDING_MESSAGE", "FTZ_REQUIRED", "verdict"]

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
    for m in ("ftz", "2pi"):
        if rest.count(m) > 1:
            errs.append(("duplicate-modifier", f"Duplicate .{m} modifier"))
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
    two_pi = "2pi" in mods and (op, ty) in TWO_PI
    bad = [m for m in mods if m not in _MODIFIERS and not (m == "2pi" and two_pi)]
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
        elif any(m in SFU_ROUNDINGS for m in modes):
            msg = f"Rounding modifier or '.approx' modifier required for instruction '{op}'"
        else:
            msg = f".approx modifier required for instruction '{op}'"
        return (("rounding-required", msg),), ()
    policy = modes[mode]
    if ftz and policy == "no":
        return (("illegal-modifier", f"Illegal modifier '.ftz' for instruction '{op}'"),), ()
    if not ftz and policy == "req":
        return (("illegal-modifier", FTZ_REQUIRED[(op, ty)]),), ()
    if two_pi:
        if not ftz:
            return (("illegal-modifier", TWO_PI_FTZ.format(op=op)),), ()
        return (), REQUIRES.get((op, ty), ()) + TWO_PI[(op, ty)]
    return (), REQUIRES.get((op, ty), ())
