"""Which GPU measured which SFU primitive, and on whose word: the one table that ``note``,
``ptxfp list``, ``eval``, ``check`` and ``run`` read.

One entry per primitive, keyed by its name (``rcp``, ``rsqrt`` ... as ptx-math names its
models; the SASS opcode is ``MUFU.<mufu>``).  ``measured`` lists the targets on which the model
ptxfp uses was compared with a GPU on every input; a target not listed is *assumed* to compute
what the newest measured one does (``measured[-1]``), until a GPU has measured it (``python -m
ptxfp.hw``).  ``source`` names the measurement (``SOURCES``).

ptx-math's validation table (B. Carleton, https://github.com/bcarlet/ptx-math, README,
"Validation": all 2^32 single-precision inputs of the PTX ``.approx.f32`` form, per GPU family):
rcp, rsqrt, ex2, lg2 one model on sm_5x, sm_6x, sm_70, sm_75; sqrt ptxm_sqrt_sm6x on sm_6x,
sm_70, sm_75 (sm_5x has its own); sin and cos ptxm_*_sm70 on sm_70, sm_75 (sm_5x/6x their own).
An entry names a primitive; whether ptxfp computes it is ``primitives.MUFU``'s business (a note
is given only for a primitive ptxfp computes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

__all__ = ["Measured", "PRIMITIVES", "SOURCES", "BY_MUFU", "is_measured", "provenance",
           "summary", "assumed_on"]


@dataclass(frozen=True)
class Measured:
    mufu: str                     #: the SASS opcode: MUFU.<mufu>
    measured: tuple[str, ...]     #: targets (or families, 'sm_5x') measured on every input
    source: str                   #: the measurement's key in SOURCES
    model: str                    #: the source's name for the model ptxfp follows


#: primitive name -> where its model was measured (one line each)
PRIMITIVES: dict[str, Measured] = {
    "rcp": Measured("RCP", ("sm_5x", "sm_6x", "sm_70", "sm_75"), "ptx-math", "ptxm_rcp_sm5x"),
    "rsqrt": Measured("RSQ", ("sm_5x", "sm_6x", "sm_70", "sm_75"), "ptx-math",
                      "ptxm_rsqrt_sm5x"),
    "sqrt": Measured("SQRT", ("sm_6x", "sm_70", "sm_75"), "ptx-math", "ptxm_sqrt_sm6x"),
    "ex2": Measured("EX2", ("sm_5x", "sm_6x", "sm_70", "sm_75"), "ptx-math", "ptxm_ex2_sm5x"),
    "lg2": Measured("LG2", ("sm_5x", "sm_6x", "sm_70", "sm_75"), "ptx-math", "ptxm_lg2_sm5x"),
    "sin": Measured("SIN", ("sm_70", "sm_75"), "ptx-math", "ptxm_sin_sm70"),
    "cos": Measured("COS", ("sm_70", "sm_75"), "ptx-math", "ptxm_cos_sm70"),
}

#: source key -> where the measurement is published
SOURCES: dict[str, str] = {
    "ptx-math": "B. Carleton, ptx-math (https://github.com/bcarlet/ptx-math, MIT), README "
                "'Validation': every binary32 input compared with the GPU",
}

#: MUFU opcode ('RCP') -> primitive name ('rcp')
BY_MUFU: dict[str, str] = {m.mufu: name for name, m in PRIMITIVES.items()}


def _family(target: str) -> str:
    """'sm_52' -> 'sm_5x', 'sm_61' -> 'sm_6x'; others unchanged ('sm_90a' -> 'sm_90')."""
    base = target.rstrip("af") if target.startswith("sm_") else target
    if len(base) == 5 and base[3] in "56":
        return f"sm_{base[3]}x"
    return base


def is_measured(primitive: str, target: str) -> bool:
    """Whether ``primitive``'s model was measured on ``target``'s GPU family."""
    m = PRIMITIVES[primitive].measured
    return target in m or _family(target) in m


def provenance(primitive: str, target: str) -> str:
    """'rcp: measured on sm_75 (ptx-math)', or for a target not measured
    'rcp: measured on sm_75 (ptx-math); assumed on sm_90'."""
    m = PRIMITIVES[primitive]
    base = _family(target)
    if is_measured(primitive, target):
        return f"{primitive}: measured on {base} ({m.source})"
    return f"{primitive}: measured on {m.measured[-1]} ({m.source}); assumed on {base}"


def summary(primitives: Iterable[str], target: str) -> str:
    """One line for several primitives on ``target``, those with the same provenance together:
    'rcp, rsqrt: measured on sm_75 (ptx-math); assumed on sm_90'."""
    groups: dict[str, list[str]] = {}
    for p in dict.fromkeys(primitives):
        groups.setdefault(provenance(p, target).split(": ", 1)[1], []).append(p)
    return "; ".join(f"{', '.join(ps)}: {what}" for what, ps in groups.items())


def assumed_on(primitive: str, targets: Iterable[str]) -> list[str]:
    """The targets of ``targets`` on which ``primitive`` is assumed, not measured."""
    return [t for t in targets if not is_measured(primitive, t)]
