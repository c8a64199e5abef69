"""Open questions of the semantics, each one named switch.

The PTX manual leaves these bits open (see docs/semantics.md, "Policies").  Each field below is
the single place that decides one of them; the kernels read the policy in force at call time, so
a hardware measurement (ptxfp.hw) can flip one field without touching anything else, and the
oracle tests read the same object.
"""

from contextlib import contextmanager
from dataclasses import dataclass, replace

TININESS_AFTER = "after_rounding"
TININESS_BEFORE = "before_rounding"


@dataclass(frozen=True)
class Policy:
    #: Result NaN of .f16/.bf16 lanes (NaN payloads are never propagated).
    canonical_nan16: int = 0x7FFF
    #: Result NaN of .f32 results (mixed-precision forms).
    canonical_nan32: int = 0x7FFFFFFF
    #: .ftz: is a result flushed when it is tiny after rounding (only a rounded result below the
    #: smallest normal is flushed) or before rounding (an exact result below the smallest normal
    #: is flushed even when it rounds up to it)?
    ftz_tininess: str = TININESS_AFTER
    #: .sat: does a -0.0 result become +0.0?
    sat_minus_zero_to_plus: bool = True
    #: .relu: does a -0.0 result become +0.0?
    relu_minus_zero_to_plus: bool = True
    #: .oob: is 0xFFF7 (OOB-NaN with the sign bit set) also the OOB-NaN?
    oob_ignores_sign: bool = True
    #: .oob: is operand c tested for the OOB-NaN as well as a and b?
    oob_tests_c: bool = False
    #: cvt.f32.f16 / cvt.f32.bf16 of a NaN: "canonical" gives canonical_nan32; "payload" widens
    #: the bits exactly (sign and payload kept, shifted into place; for bf16 that is bits << 16).
    #: The manual: "For cvt.f32.bf16, NaN input yields unspecified NaN".
    widen_nan: str = "canonical"

    def __post_init__(self):
        if self.ftz_tininess not in (TININESS_AFTER, TININESS_BEFORE):
            raise ValueError(f"ftz_tininess must be {TININESS_AFTER!r} or {TININESS_BEFORE!r}")


POLICY = Policy()


def current():
    """The policy in force now."""
    return POLICY


@contextmanager
def using(**changes):
    """Run a block under a policy with some fields changed (for probes and experiments)."""
    global POLICY
    saved = POLICY
    POLICY = replace(saved, **changes)
    try:
        yield POLICY
    finally:
        POLICY = saved
