"""The warp-collective matrix moves (ldmatrix, stmatrix, movmatrix) as ptxas 13.5 takes them:
their legal (name, shape, .num, types, .trans) combinations, what each needs of .target and
.version, and one judging function, :func:`judge`, that gives ptxas' first error (its own words,
with ptxfp's explanation beside them) for a spelling on a module's .target and .version.

Both ``ptxfp.check`` (ptx/check.py) and the interpreter (ptx/interp/insns/matrix.py) judge these
instructions here.

Measured with ptxas 13.5 (V13.5.37): every shape x .num x .trans x type on 21 targets from
sm_75 to sm_121f and the .version floors (tools/matrix_probe.py,
tests/data/ptxas/13.5/matrix_moves.jsonl, held by tests/test_check_matrix_moves.py and
tests/test_interp_matrix.py), and by hand: the order in which ptxas prints its errors where a
spelling breaks several rules (it prints them all; the first decides), the required modifiers,
state spaces, repeated modifiers, operand vectors, and movmatrix.  ptxas 13.5 takes ldmatrix
.m8n8 and movmatrix on any target it knows (sm_60 included), stmatrix from sm_90, the 8-bit
forms (.m16n16, .m8n16, stmatrix .m16n8) on the arch- and family-specific Blackwell targets
(sm_100a/f and up) only, .m8n16's shape alone also on sm_90a (which then refuses its format
conversion).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

__all__ = ["OPCODES", "FORMS", "MoveForm", "MoveError", "judge", "NUMS", "TYPE_TOKENS",
           "blackwell_specific"]

OPCODES = ("ldmatrix", "stmatrix", "movmatrix")

#: .num -> matrices
NUMS = {"x1": 1, "x2": 2, "x4": 4}
#: the type tokens of these instructions (two of them spell a decompressing load's format)
TYPE_TOKENS = ("b16", "b8", "b8x16", "b6x16_p32", "b4x16_p64")
#: the state spaces ptxas reads after the name (ldmatrix/stmatrix: .shared or .shared::cta)
_SPACES = ("shared", "shared::cta", "shared::cluster", "global", "local", "const", "param")
_LEGAL_SPACES = ("shared", "shared::cta")
_SHAPE = re.compile(r"m\d+n\d+$")


@dataclass(frozen=True)
class MoveForm:
    """One shape of one instruction: the .num it takes, its types (as written after the other
    qualifiers, '.'-joined), whether .trans is 'optional', 'required' or 'none', and what it
    needs: ``blackwell`` (an sm_1xxa/f target), ``min_sm`` and PTX ISA ``version``."""
    name: str
    shape: str
    nums: tuple[str, ...]
    types: tuple[str, ...]
    trans: str
    version: tuple[int, int]
    blackwell: bool = False
    min_sm: int = 0


_F8 = ("b8x16.b6x16_p32", "b8x16.b4x16_p64")

#: (name, shape) -> its form (PTX ISA 9.0, 9.7.14.5.15-17, as ptxas 13.5 takes them)
FORMS: dict[tuple[str, str], MoveForm] = {(f_.name, f_.shape): f_ for f_ in (
    MoveForm("ldmatrix", "m8n8", ("x1", "x2", "x4"), ("b16",), "optional", (6, 5)),
    MoveForm("ldmatrix", "m16n16", ("x1", "x2"), ("b8",) + _F8, "required", (8, 6), True),
    MoveForm("ldmatrix", "m8n16", ("x1", "x2", "x4"), _F8, "none", (8, 6), True),
    MoveForm("stmatrix", "m8n8", ("x1", "x2", "x4"), ("b16",), "optional", (7, 8), min_sm=90),
    MoveForm("stmatrix", "m16n8", ("x1", "x2", "x4"), ("b8",), "required", (8, 6), True),
    MoveForm("movmatrix", "m8n8", (), ("b16",), "required", (7, 8)),
)}

#: what each instruction needs of .version whatever its shape (ptxas' 'Feature' wording)
_OPCODE_VERSION = {"ldmatrix": (6, 5), "stmatrix": (7, 8), "movmatrix": (7, 8)}
#: the targets of the 8-bit shapes: arch- or family-specific Blackwell (sm_100 and up, a/f)
_BLACKWELL = re.compile(r"sm_1\d\d[af]$")
_BLACKWELL_WORDS = "an sm_100a/f, sm_103a/f, sm_107a/f, sm_110a/f, sm_120a/f or sm_121a/f target"


def blackwell_specific(target: str) -> bool:
    """True for the targets the 8-bit matrix moves run on (sm_100a, sm_121f, ...)."""
    return _BLACKWELL.match(target) is not None


class MoveError(NamedTuple):
    """ptxas' first error about a matrix move: ``rule`` (check()'s rule id), ``ptxas`` (its
    message) and ``note`` (ptxfp's explanation, '' where ptxas' words say it all)."""
    rule: str
    ptxas: str
    note: str = ""

    @property
    def message(self) -> str:
        return f"{self.ptxas} ({self.note})" if self.note else self.ptxas


def _sm(target: str) -> Optional[int]:
    m = re.match(r"sm_(\d+)[af]?$", target)
    return int(m.group(1)) if m else None


def _v(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def judge(name: str, tokens: list[str] | tuple[str, ...], target: Optional[str] = None,
          version: Optional[tuple[int, int]] = None,
          vectors: Optional[tuple[Optional[int], ...]] = None) -> Optional[MoveError]:
    """ptxas' first error about ``name`` (ldmatrix/stmatrix/movmatrix) with the qualifier
    ``tokens`` after its name, on ``target``/``version`` (None: not checked), or None where
    ptxas takes it.  ``vectors``: per operand, the length of a braced register vector or None
    for any other operand (None as a whole: operands not checked).  Unknown tokens are the
    caller's ("Unknown modifier")."""
    rest = list(tokens)
    shapes = [t for t in rest if _SHAPE.match(t)]
    shape = shapes[0] if len(shapes) == 1 else None
    sm = _sm(target) if target else None
    # 1. what the shape and the instruction need of the target and .version, in ptxas' order
    if sm is not None and shape in ("m16n16", "m16n8") and not blackwell_specific(target or ""):
        return MoveError("target-unsupported",
                         f"Feature '.{shape}' not supported on .target '{target}'",
                         f"{name}.{shape} needs {_BLACKWELL_WORDS}")
    if sm is not None and name == "stmatrix" and sm < 90:
        return MoveError("min-target", "Feature 'stmatrix' requires .target sm_90 or higher")
    need = _OPCODE_VERSION[name]
    if version is not None and version < need:
        return MoveError("min-version",
                         f"Feature '{name}' requires PTX ISA .version {_v(need)} or later")
    if version is not None and version < (8, 6) and shape in ("m16n16", "m16n8", "m8n16"):
        on = " on 'ldmatrix'" if shape == "m8n16" else ""
        return MoveError("min-version",
                         f"Modifier '.{shape}'{on} requires PTX ISA .version 8.6 or later")
    if sm is not None and shape == "m8n16" and not blackwell_specific(target or "") \
            and target != "sm_90a":
        return MoveError("target-unsupported",
                         f"Feature '.m8n16' not supported on .target '{target}'",
                         f"ldmatrix.m8n16 needs {_BLACKWELL_WORDS}")
    # 2. a register vector PTX does not have
    for n in vectors or ():
        if n is not None and n not in (1, 2, 4):
            return MoveError("vector-operand", f"Illegal vector size: {n}")
    # 3. the spelling
    if "sync" not in rest:
        return MoveError("illegal-modifier", f".sync modifier required for instruction '{name}'")
    if "aligned" not in rest:
        return MoveError("illegal-modifier",
                         f".aligned modifier required for instruction '{name}'")
    if not shapes:
        return MoveError("illegal-modifier", f"Shape modifier required for instruction '{name}'")
    nums = [t for t in rest if t in NUMS]
    if name == "movmatrix":
        bad = [t for t in rest if t in NUMS]
        if bad:
            return MoveError("illegal-modifier",
                             f"Illegal modifier '.{bad[0]}' for instruction 'movmatrix'")
    elif not nums:
        return MoveError("illegal-modifier", f".num modifier required for instruction '{name}'")
    if len(nums) > 1 and name != "movmatrix":
        return MoveError("duplicate-modifier", "Multiple .num modifiers specified")
    if rest.count("trans") > 1:
        return MoveError("duplicate-modifier", "Multiple .trans modifiers specified")
    form = FORMS.get((name, shape)) if shape else None
    if form is None:
        return MoveError("illegal-modifier",
                         f"Illegal matrix shape '.{shapes[0]}' for instruction '{name}'",
                         f"{name} has " + ", ".join(
                             "." + s for (n, s) in FORMS if n == name))
    spaces = [t for t in rest if t in _SPACES]
    if name == "movmatrix" and spaces:
        return MoveError("state-space",
                         "No state space qualifier expected for instruction 'movmatrix'")
    if spaces and (len(spaces) > 1 or spaces[0] not in _LEGAL_SPACES):
        return MoveError("state-space", f"State space incorrect for instruction '{name}'",
                         f"{name} takes .shared or .shared::cta (or a generic address)")
    tys = [t for t in rest if t in TYPE_TOKENS]
    others = [t for t in rest if t not in tys and t not in NUMS and t not in spaces
              and t not in ("sync", "aligned", "trans", shape)]
    if others or len(tys) != len(set(tys)):
        # a type token of no matrix move (.b32), or one written twice
        return MoveError("illegal-type", f"Unexpected instruction types specified for '{name}'",
                         f"{name}.{shape} takes " + " or ".join("." + t for t in form.types))
    if len(tys) == 2 and tys[0] != "b8x16" and "b8x16" in tys:
        ty = ".".join(tys)
        return MoveError("illegal-modifier",
                         f"Illegal modifier '.{ty}' for instruction '{name}'",
                         "write the destination format first: .b8x16." + tys[0])
    if name == "movmatrix":
        if ".".join(tys) not in form.types:
            return MoveError("illegal-type", "Unexpected instruction types specified for "
                             "'movmatrix'", "movmatrix takes .b16")
        if "trans" not in rest:
            return MoveError("illegal-modifier",
                             ".trans modifier required for instruction 'movmatrix'")
        return _operands(name, form, None, vectors)
    num = nums[0]
    if num not in form.nums:
        return MoveError("illegal-modifier", f"Incorrect no. of matrix: {NUMS[num]} for {name} "
                         f"with shape '.{shape}'", f"{name}.{shape} takes "
                         + " or ".join("." + x for x in form.nums) + f", not .{num}")
    err = _operands(name, form, num, vectors)
    if err is not None:
        return err
    ty = ".".join(tys)
    takes = " or ".join("." + t for t in form.types)
    if len(tys) not in {len(t.split(".")) for t in form.types}:
        return MoveError("illegal-type", f"Unexpected number of instruction types specified "
                         f"for {name} with shape '.{shape}'", f"{name}.{shape} takes {takes}"
                         + (f", not '.{ty}'" if ty else ""))
    if ty not in form.types:
        return MoveError("illegal-type", f"Incorrect instruction type specified for {name} "
                         f"with shape '.{shape}'", f"{name}.{shape} takes {takes}, not '.{ty}'")
    trans = "trans" in rest
    if form.trans == "required" and not trans:
        return MoveError("illegal-modifier", f"Modifier '.trans' require for instruction "
                         f"{name} with shape '.{shape}'",
                         f"{name}.{shape} needs .trans (mandatory for this shape)")
    if form.trans == "none" and trans:
        return MoveError("illegal-modifier", f"Modifier .trans not allowed for shape '.{shape}'",
                         f"{name}.{shape} has no .trans")
    if sm is not None and "." in ty and not blackwell_specific(target or ""):
        return MoveError("target-unsupported", "Feature 'ldmatrix with format conversion' not "
                         f"supported on .target '{target}'",
                         f"the .b8x16 loads need {_BLACKWELL_WORDS}")
    return None


def _operands(name: str, form: MoveForm, num: Optional[str],
              vectors: Optional[tuple[Optional[int], ...]]) -> Optional[MoveError]:
    """The register vector's length (ldmatrix: operand 0, stmatrix: operand 1), movmatrix's
    two plain registers."""
    if vectors is None:
        return None
    if name == "movmatrix":
        if any(n is not None for n in vectors):
            return MoveError("vector-operand",
                             "Vector operand is not allowed for instruction 'movmatrix'")
        if len(vectors) != 2:
            return MoveError("operand-count", "Arguments mismatch for instruction 'movmatrix'",
                             "movmatrix d, a")
        return None
    if len(vectors) != 2:
        return MoveError("operand-count", f"Arguments mismatch for instruction '{name}'",
                         f"{name} takes 2 operands")
    at = 0 if name == "ldmatrix" else 1
    if num is None:                        # the spelling's own error comes first
        return None
    want = NUMS[num] * (2 if form.shape == "m16n16" else 1)
    if vectors[at] != want:
        return MoveError("vector-operand", f"Vector of size {want} is expected for argument "
                         f"{at} of instruction '{name}'")
    return None
