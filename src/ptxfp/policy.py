"""Open questions of the semantics, each one named switch.

The PTX manual leaves these bits open (see docs/semantics.md, "Policies").  Each field below is
the single place that decides one of them; the kernels read the policy in force at call time, so
a hardware measurement (ptxfp.hw) can flip one field without touching anything else, and the
oracle tests read the same object.

The canonical NaN is one field per result format (``canonical_nan_f16``, ``canonical_nan_bf16``,
``canonical_nan_f32``); every reader picks the field of its result's format
(``Policy.canonical_nan(fmt)``).  The older names stay accepted as shorthands:
``using(canonical_nan16=x)`` sets both 16-bit fields, ``using(canonical_nan32=x)`` the f32 one,
and reading ``canonical_nan16`` / ``canonical_nan32`` gives the value while it is unambiguous.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Iterator

#: .ftz tininess, the three readings (docs/semantics.md, "Policies"): a result is tiny when ...
#: ... rounded into the format (with its subnormals) it is below the smallest normal 2**EMIN;
TININESS_AFTER = "after_rounding"
#: ... the exact result is below 2**EMIN;
TININESS_BEFORE = "before_rounding"
#: ... rounded to the format's precision with an unbounded exponent range (in the form's
#: rounding mode) it is below 2**EMIN (IEEE 754-2019 §7.5, "after rounding").
TININESS_AFTER_IEEE = "after_rounding_unbounded"
TININESS = (TININESS_AFTER, TININESS_BEFORE, TININESS_AFTER_IEEE)

#: widening cvt.f32.f16 / cvt.f32.bf16 of a NaN, the three readings (docs/semantics.md,
#: "Policies").  Layouts: f16 is s|5-bit exponent|10-bit fraction, bf16 s|8|7, f32 s|8|23; a
#: NaN has an all-ones exponent and a nonzero fraction; by IEEE 754-2019 §6.2.1 the first
#: (most significant) fraction bit is the quiet bit (1 quiet, 0 signalling), the other fraction
#: bits are the payload.  With s the sign and F the source fraction (AM = 10 or 7 bits):
#: ... the f32 result is canonical_nan_f32, whatever the input NaN;
WIDEN_CANONICAL = "canonical"
#: ... s << 31 | 0x7F800000 | F << (23 - AM): the bits widened exactly, quiet bit included (a
#: signalling NaN stays signalling; bf16 gives its bits << 16);
WIDEN_PAYLOAD = "payload"
#: ... s << 31 | 0x7F800000 | F << (23 - AM) | 0x00400000: IEEE 754-2019's conversion.
#: convertFormat is a general-computational operation (§5.4.2); on a signalling NaN it signals
#: invalid and delivers a quiet NaN (§6.2, §7.2); and an operation with one NaN input should
#: give a NaN with that input's payload where the destination can hold it (§6.2.3; f32's 22
#: payload bits hold f16's 9 and bf16's 6).  The payload keeps its place at the top of the
#: fraction (so that converting back finds it, §6.2.3's narrow-wide-narrow rule; x86's
#: VCVTPH2PS does the same, and for bf16 it is the bits << 16).  So sign and payload are kept
#: and the quiet bit, f32 bit 22, is set: f16 0x7C01 -> 0x7FC02000, 0xFC01 -> 0xFFC02000,
#: 0x7E00 -> 0x7FC00000; bf16 0x7F81 -> 0x7FC10000, 0xFFC1 -> 0xFFC10000.  A quiet input
#: gives the same bits as WIDEN_PAYLOAD; a signalling one differs by bit 22.
WIDEN_QUIET = "quiet"
WIDEN_NAN = (WIDEN_CANONICAL, WIDEN_PAYLOAD, WIDEN_QUIET)

#: cvt.rs into four 8-bit lanes (.e4m3x4, .e5m2x4, .e2m3x4, .e3m2x4): which bits of rbits
#: each lane adds.  The manual: "lower 16-bits are used for operands e, f and upper 16 bits are
#: used for operands a, b" (9.7.9.21), and no more.  RS_X4_SHARED: a and b both add the upper
#: 16 bits, e and f the lower 16; RS_X4_BYTES: one byte each, a rbits[31:24], b [23:16],
#: e [15:8], f [7:0].
RS_X4_SHARED, RS_X4_BYTES = "shared16", "bytes"
RS_X4_BITS = (RS_X4_SHARED, RS_X4_BYTES)
#: neg/abs on .f16/.bf16 (and x2) of a NaN, two readings (docs/semantics.md, "Policies"; the
#: manual: NaN inputs yield an unspecified NaN): the canonical NaN of the format ...
NEGABS_CANONICAL = "canonical"
#: ... or the input with its sign bit flipped (neg) or cleared (abs), payload kept (IEEE 754's
#: negate and abs, which the manual says future implementations may follow)
NEGABS_SIGN = "sign"
NEGABS_NAN = (NEGABS_CANONICAL, NEGABS_SIGN)

#: the canonical-NaN field of each result format
NAN_FIELDS = {"f16": "canonical_nan_f16", "bf16": "canonical_nan_bf16", "f32": "canonical_nan_f32",
              "f64": "canonical_nan_f64",
              "e4m3": "canonical_nan_e4m3", "e5m2": "canonical_nan_e5m2",
              "ue8m0": "canonical_nan_ue8m0", "e2m3": "nan_to_e2m3", "e3m2": "nan_to_e3m2",
              "e2m1": "nan_to_e2m1"}
#: old names accepted by ``using``/``changed``: shorthand -> the fields it sets
SHORTHANDS = {"canonical_nan16": ("canonical_nan_f16", "canonical_nan_bf16"),
              "canonical_nan32": ("canonical_nan_f32",)}


@dataclass(frozen=True)
class Policy:
    #: Result NaN of .f16/.f16x2 lanes (and of cvt to f16); NaN payloads are never propagated.
    canonical_nan_f16: int = 0x7FFF
    #: Result NaN of .bf16/.bf16x2 lanes (and of cvt to bf16).
    canonical_nan_bf16: int = 0x7FFF
    #: Result NaN of .f32 results (mixed-precision forms, widening cvt).
    canonical_nan_f32: int = 0x7FFFFFFF
    #: .ftz: when is a result tiny, and so flushed to a zero of its sign?  TININESS_AFTER: the
    #: result rounded into the format is subnormal; TININESS_BEFORE: the exact result is below
    #: the smallest normal (flushed even when it rounds up to it); TININESS_AFTER_IEEE: the
    #: exact result rounded to the format's precision with an unbounded exponent is below the
    #: smallest normal (between the two: the f16 product 2**-14 - 2**-25 = 0x3BFF * 0x0400
    #: rounds to 2**-14 in the format, so it is kept after rounding, but stays below 2**-14
    #: at 11 bits unbounded, so IEEE flushes it).
    ftz_tininess: str = TININESS_AFTER
    #: .sat: does a -0.0 result become +0.0?
    sat_minus_zero_to_plus: bool = True
    #: .relu: does a -0.0 result become +0.0?
    relu_minus_zero_to_plus: bool = True
    #: .oob: is 0xFFF7 (OOB-NaN with the sign bit set) also the OOB-NaN?
    oob_ignores_sign: bool = True
    #: .oob: is operand c tested for the OOB-NaN as well as a and b?
    oob_tests_c: bool = False
    #: cvt.f32.f16 / cvt.f32.bf16 of a NaN (WIDEN_NAN above): WIDEN_CANONICAL gives
    #: canonical_nan_f32; WIDEN_PAYLOAD widens the bits exactly (sign and fraction shifted into
    #: place; for bf16 that is bits << 16; a signalling NaN stays signalling); WIDEN_QUIET is
    #: IEEE's conversion (sign and payload kept, shifted into place, the quiet bit set).  The
    #: manual: "For cvt.f32.bf16, NaN input yields unspecified NaN".
    widen_nan: str = WIDEN_CANONICAL
    #: Result NaN of cvt into .e4m3 / .e5m2 / .ue8m0 lanes.  e4m3 and ue8m0 have one NaN
    #: magnitude (0x7F, 0xFF); for e5m2 0x7F is the NaN that NVIDIA's host conversion
    #: (cuda_fp8.hpp, __nv_cvt_float_to_fp8) gives for every f32 NaN.
    canonical_nan_e4m3: int = 0x7F
    canonical_nan_e5m2: int = 0x7F
    canonical_nan_ue8m0: int = 0xFF
    #: What a NaN source becomes in the formats without NaN (cvt.rn.satfinite into .e2m3x2,
    #: .e3m2x2, .e2m1x2): +MAX_NORM, as NVIDIA's host conversion code does ("NaN converts to
    #: positive FP6_MAXNORM", cuda_fp6.hpp; FP4 likewise, cuda_fp4.hpp); the manual does not say.
    nan_to_e2m3: int = 0x1F
    nan_to_e3m2: int = 0x1F
    nan_to_e2m1: int = 0x7
    #: cvt.rs into four 8-bit lanes: which rbits each lane adds (RS_X4_BITS above).
    rs_x4_bits: str = RS_X4_SHARED
    #: neg/abs of a NaN (NEGABS_NAN above): NEGABS_CANONICAL gives canonical_nan_f16/_bf16,
    #: NEGABS_SIGN changes only the sign bit (payload kept).
    negabs_nan: str = NEGABS_CANONICAL
    #: Result NaN of .f64 results (f64 add/sub/mul/fma, cvt to .f64, the f64 min/max/abs/neg):
    #: all ones but the sign, as f32's; the manual leaves f64 NaN results unspecified (added by
    #: the ops families of issue 25; not measured on a GPU yet).
    canonical_nan_f64: int = 0x7FFFFFFFFFFFFFFF

    def __post_init__(self) -> None:
        if self.ftz_tininess not in TININESS:
            raise ValueError("ftz_tininess must be one of " + ", ".join(map(repr, TININESS)))
        if self.rs_x4_bits not in RS_X4_BITS:
            raise ValueError("rs_x4_bits must be one of " + ", ".join(map(repr, RS_X4_BITS)))
        if self.widen_nan not in WIDEN_NAN:
            raise ValueError("widen_nan must be one of " + ", ".join(map(repr, WIDEN_NAN)))
        if self.negabs_nan not in NEGABS_NAN:
            raise ValueError("negabs_nan must be one of " + ", ".join(map(repr, NEGABS_NAN)))

    def canonical_nan(self, fmt: str) -> int:
        """The canonical NaN of results in format ``fmt`` ('f16', 'bf16' or 'f32'; the packed
        names 'f16x2'/'bf16x2' give their lanes')."""
        nan: int = getattr(self, NAN_FIELDS[fmt.removesuffix("x2").removesuffix("x4")])
        return nan

    @property
    def canonical_nan16(self) -> int:
        """Old name: the canonical NaN of f16 and bf16, while the two fields agree."""
        if self.canonical_nan_f16 != self.canonical_nan_bf16:
            raise ValueError("canonical_nan16 is ambiguous when canonical_nan_f16 "
                                 f"({self.canonical_nan_f16:#06x}) and canonical_nan_bf16 "
                                 f"({self.canonical_nan_bf16:#06x}) differ: read one of those")
        return self.canonical_nan_f16

    @property
    def canonical_nan32(self) -> int:
        """Old name of ``canonical_nan_f32``."""
        return self.canonical_nan_f32


#: The default policy, in force wherever no ``using(...)`` block is active.  ``using`` never
#: rebinds this name: the policy in force is per thread and per asyncio task (a ContextVar),
#: read with :func:`current` (``ptxfp.POLICY`` and ``ptxfp.policy.POLICY`` resolve to it).
DEFAULT = Policy()

_current: ContextVar[Policy] = ContextVar("ptxfp_policy", default=DEFAULT)


def current() -> Policy:
    """The policy in force now, in this thread / asyncio task."""
    return _current.get()


def __getattr__(name: str) -> Policy:
    # ptxfp.policy.POLICY is read live, like ptxfp.POLICY: the policy of the current context.
    if name == "POLICY":
        return _current.get()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def changed(pol: Policy, **changes: Any) -> Policy:
    """``pol`` with some fields changed; the shorthands of SHORTHANDS set all their fields
    (a field named explicitly wins over a shorthand)."""
    expanded: dict[str, Any] = {}
    for k, v in changes.items():
        for f in SHORTHANDS.get(k, ()):
            expanded[f] = v
    expanded.update({k: v for k, v in changes.items() if k not in SHORTHANDS})
    return replace(pol, **expanded)


@contextmanager
def using(**changes: Any) -> Iterator[Policy]:
    """Run a block under a policy with some fields changed (for probes and experiments).

    The change is seen only in the thread or asyncio task that runs the block (and in tasks
    it starts inside it), so two threads can use different policies at once."""
    pol = changed(_current.get(), **changes)
    token = _current.set(pol)
    try:
        yield pol
    finally:
        _current.reset(token)
