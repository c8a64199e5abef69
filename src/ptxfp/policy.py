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

Per form.  Where the hardware answers one question differently for different forms, the policy
says so per form: ``per_form`` is a table of ``(glob, field, value)`` entries, ``glob`` an
``fnmatch`` pattern (case-sensitive) over the form's canonical spelling (``str(ptxfp.parse(s))``:
the modifiers in the manual's order, e.g. ``"cvt.rn.ftz.f32.bf16"``, ``"mul.rn.ftz.f16"``).  ``Policy.value(field, spelling)`` is the value in force for one
form: the value of the first entry whose field is ``field`` and whose glob matches, else the
field's global value.  Every reader that decides a question for a form reads it this way (the
kernels pick their constants when a form's kernel is built, so a policy object fixes them).
``using(widen_nan="payload")`` sets the field for every form: it drops the table's entries of
that field; ``using(per_form=...)`` replaces the whole table.  Entry values are checked as the
fields' are.

The defaults are what an NVIDIA H100 (sm_90, driver 580.159.04, CUDA 13.0) computed, 1,182,831
recorded answers over 298 forms in tests/data/gpu/h100-2026-11-27/, which ptxfp reproduces bit
for bit (tests/test_gpu_recorded.py; docs/semantics.md, "Policies"):

- ``ftz_tininess``: ``after_rounding_unbounded`` (IEEE's tininess after rounding) on every .ftz
  form (f16, f16x2, f32, f32x2);
- ``widen_nan``: ``payload`` on ``cvt.f32.bf16`` and ``cvt.{rn,rz,rm,rp}.f32.bf16`` (the bits
  << 16), ``canonical`` on the .ftz bf16 forms and every ``cvt.f32.f16`` (DEFAULT_PER_FORM);
- ``cvt_ftz_input``: ``ignored`` on ``cvt.{rn,rz,rm,rp}.ftz{.sat}.f16.f32`` (the form computes as
  without .ftz), the manual's ``flush`` elsewhere (the bf16 forms do flush);
- ``bf16_fma_directed``: ``as_compiled``, what ptxas 13.0 makes of the undocumented
  ``fma.{rz,rm,rp}{.oob}{.relu}.bf16/.bf16x2`` (docs/ptxas-findings.md);
- the canonical NaNs, ``.sat``/``.relu`` -0 -> +0 and ``.oob`` (a, b; sign ignored) as before,
  confirmed; ``oob_tests_c``, ``negabs_nan``, ``rs_x4_bits`` and the small-float NaNs were not
  measured.

The tensor cores (``mma_model``, ``mma_f64_nan``) follow MMA-Sim 2.1.1 by default, which its
authors check bit for bit on GPUs; ptxfp has not measured them on a GPU yet.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from fnmatch import fnmatchcase
from typing import Any, Callable, Iterator

from .errors import PolicyError, shorten

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

#: .ftz on a narrowing cvt from .f32 (docs/semantics.md, "Policies"): the manual's reading, a
#: subnormal f32 input is flushed to a zero of its sign ...
CVT_FTZ_FLUSH = "flush"
#: ... or the .ftz changes nothing (the form computes as its spelling without .ftz): what the
#: H100 does on cvt.{rn,rz,rm,rp}.ftz{.sat}.f16.f32 (0x80000001 .rm -> 0x8001)
CVT_FTZ_IGNORED = "ignored"
CVT_FTZ = (CVT_FTZ_FLUSH, CVT_FTZ_IGNORED)

#: fma.{rz,rm,rp}{.oob}{.relu}.bf16 and .bf16x2, spellings the manual does not have (half fma
#: is .rn only) that ptxas 13.0 accepts (docs/ptxas-findings.md): what ptxas compiles them to
#: (scalar: the bits read as f16, fma.<mode>.f32 of the three, cvt.rn.f16.f32, .relu/.oob
#: dropped; packed: fma.rn{.oob}{.relu}.bf16x2) ...
BF16_FMA_AS_COMPILED = "as_compiled"
#: ... or what the spelling says (one rounding of the exact a*b+c into bf16 in the named mode).
BF16_FMA_AS_SPELLED = "as_spelled"
BF16_FMA_DIRECTED = (BF16_FMA_AS_COMPILED, BF16_FMA_AS_SPELLED)

#: The tensor-core model (ptxfp.mma / matmul; docs/semantics.md, "Tensor cores"): which
#: release of MMA-Sim (Xie et al., arXiv:2511.10909) the numerics follow where its readings
#: differ.  MMA-Sim 2.1.1 (PyPI, 2026): a zero product or a zero c is aligned by a fixed
#: exponent per architecture and result type (params.MmaParams.zero_exp / zero_exp_f16), a
#: zero result is +0, an f64 NaN operand's payload passes through ...
MMA_MMASIM_211 = "mmasim-2.1.1"
#: ... or MMA-Sim's January 2026 source: a zero factor has the exponent -126 (so 0 * 2**100 is
#: a term of exponent -26), a nonzero sum that rounds to zero keeps its sign, every f64 NaN
#: result is canonical_nan_f64.
MMA_MMASIM_2026_01 = "mmasim-2026-01"
MMA_MODELS = (MMA_MMASIM_211, MMA_MMASIM_2026_01)
#: The NaN of an f64 matrix form (mma.sync .f64), when ``mma_f64_nan`` names one: ...
#: ... the first NaN operand of the step's fma, in the order a, b, c, quieted (payload and
#: sign kept, the quiet bit set); a NaN an invalid operation makes (inf * 0, inf - inf) is
#: 0xFFF8000000000000: what MMA-Sim 2.1.1's fma (std::fma on x86-64, its CPU path) gives ...
MMA_F64_NAN_PAYLOAD = "payload"
#: ... or canonical_nan_f64 for every NaN result.
MMA_F64_NAN_CANONICAL = "canonical"
MMA_F64_NAN = (MMA_F64_NAN_PAYLOAD, MMA_F64_NAN_CANONICAL)

#: Contraction (docs/semantics.md, "Contraction"): mul and add/sub without a rounding modifier
#: fused into one fma exactly where ptxas 13.5 fuses them (ptx/contract.py, learned from its
#: machine code) ...
CONTRACT_PTXAS = "ptxas"
#: ... or every instruction computed as written (what ptxas -O0 or --fmad=false compiles).
CONTRACT_AS_WRITTEN = "as_written"
CONTRACT = (CONTRACT_PTXAS, CONTRACT_AS_WRITTEN)

#: the canonical-NaN field of each result format
NAN_FIELDS = {"f16": "canonical_nan_f16", "bf16": "canonical_nan_bf16", "f32": "canonical_nan_f32",
              "f64": "canonical_nan_f64",
              "e4m3": "canonical_nan_e4m3", "e5m2": "canonical_nan_e5m2",
              "ue8m0": "canonical_nan_ue8m0", "e2m3": "nan_to_e2m3", "e3m2": "nan_to_e3m2",
              "e2m1": "nan_to_e2m1"}

#: field -> its allowed values (the fields with a closed set of readings)
CHOICES: dict[str, tuple[str, ...]] = {
    "ftz_tininess": TININESS, "rs_x4_bits": RS_X4_BITS, "widen_nan": WIDEN_NAN,
    "negabs_nan": NEGABS_NAN, "cvt_ftz_input": CVT_FTZ, "bf16_fma_directed": BF16_FMA_DIRECTED,
    "mma_model": MMA_MODELS, "contract": CONTRACT}

#: The measured per-form entries of the default policy (an H100, sm_90, driver 580.159.04, CUDA
#: 13.0: tests/data/gpu/h100-2026-11-27/).  First match wins.
DEFAULT_PER_FORM: tuple[tuple[str, str, Any], ...] = (
    # cvt.f32.bf16 without .ftz is a shift (SASS SHF.L.U32): the NaN's bits << 16
    ("cvt.f32.bf16", "widen_nan", WIDEN_PAYLOAD),
    ("cvt.r[nzmp].f32.bf16", "widen_nan", WIDEN_PAYLOAD),
    # cvt.*.ftz{.sat}.f16.f32: the answers equal the form's without .ftz (F2F.F16.F32.RM, no FTZ)
    ("cvt.r[nzmp].ftz.f16.f32", "cvt_ftz_input", CVT_FTZ_IGNORED),
    ("cvt.r[nzmp].ftz.sat.f16.f32", "cvt_ftz_input", CVT_FTZ_IGNORED),
)


#: NaN field -> (width, exponent bits, fraction bits) of its format; the fields of the formats
#: without NaN (nan_to_*) -> (width, None, None): any value of the width
_NAN_FORMATS: dict[str, tuple[int, int | None, int | None]] = {
    "canonical_nan_f16": (16, 5, 10), "canonical_nan_bf16": (16, 8, 7),
    "canonical_nan_f32": (32, 8, 23), "canonical_nan_f64": (64, 11, 52),
    "canonical_nan_e5m2": (8, 5, 2), "canonical_nan_e4m3": (8, 4, 3),
    "canonical_nan_ue8m0": (8, 8, 0), "nan_to_e2m3": (6, None, None),
    "nan_to_e3m2": (6, None, None), "nan_to_e2m1": (4, None, None)}


def _is_nan(bits: int, e: int, f: int, field: str) -> bool:
    if field == "canonical_nan_e4m3":                 # e4m3: S.1111.111 is its only NaN
        return bits & 0x7F == 0x7F
    if field == "canonical_nan_ue8m0":                # ue8m0: 0xFF, no sign
        return bits == 0xFF
    return (bits >> f) & ((1 << e) - 1) == (1 << e) - 1 and bits & ((1 << f) - 1) != 0


def _check_value(name: str, value: Any) -> None:
    choices = MMA_F64_NAN if name == "mma_f64_nan" and value is not None else CHOICES.get(name)
    if choices is not None and value not in choices:
        raise PolicyError(f"{name} must be one of " + ", ".join(map(repr, choices))
                          + f" (got {shorten(repr(value))})")
    if name in _NAN_FORMATS:
        width, e, f = _NAN_FORMATS[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise PolicyError(f"{name}={shorten(repr(value))}: expected the bits as an int")
        if not 0 <= value < (1 << width):
            raise PolicyError(f"{name}={value:#x}: does not fit in the format's {width} bits")
        # a canonical NaN must be a NaN; ue8m0 (one NaN, 0xFF) excepted: whether a NaN input
        # saturates (0xFE) or flushes (0x00) there is a reading the GPU harness probes
        if name != "canonical_nan_ue8m0" and e is not None and f is not None and \
                not _is_nan(value, e, f, name):
            raise PolicyError(f"{name}={value:#x} is not a NaN of its format (a result NaN "
                              "must be one)")
    elif name in _BOOLS and not isinstance(value, bool):
        raise PolicyError(f"{name}={shorten(repr(value))}: expected True or False")


#: the fields that are yes/no questions
_BOOLS = ("sat_minus_zero_to_plus", "relu_minus_zero_to_plus", "oob_ignores_sign",
          "oob_tests_c")

#: every instruction spelling, for per_form globs: set by ptxfp.isa when it is imported (the
#: table sits above this module, which may not import it)
_spellings: Callable[[], list[str]] | None = None
_matched: set[str] = set()


def _glob_matches(glob: str) -> bool:
    """Does ``glob`` match some spelling of the instruction table?  (True when the table is
    not loaded: nothing to check against.)"""
    if glob in _matched or _spellings is None:
        return True
    if any(fnmatchcase(s, glob) for s in _spellings()):
        if len(_matched) < 4096:
            _matched.add(glob)
        return True
    return False


def _check_table(table: Any) -> None:
    names = {f.name for f in fields(Policy)} - {"per_form"}
    if not isinstance(table, tuple):
        raise PolicyError("per_form must be a tuple of (glob, field, value) entries, got "
                          f"{type(table).__name__}")
    for entry in table:
        if not (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], str)):
            raise PolicyError(f"per_form entry {shorten(repr(entry))} is not a (glob, field, "
                              "value) tuple")
        if entry[1] not in names:
            raise PolicyError(f"per_form entry {shorten(repr(entry))}: {_unknown(entry[1])}")
        try:
            _check_value(entry[1], entry[2])
        except PolicyError as exc:
            raise PolicyError(f"per_form entry {shorten(repr(entry))}: {exc}") from None
        if entry not in DEFAULT_PER_FORM and not _glob_matches(entry[0]):
            raise PolicyError(f"per_form entry {shorten(repr(entry))}: the glob "
                              f"{shorten(repr(entry[0]))} matches no instruction spelling "
                              "(globs are over canonical spellings, str(ptxfp.parse(s)))")


def _unknown(name: str) -> str:
    """'x' is not a policy field (did you mean ...?)."""
    import difflib
    known = [f.name for f in fields(Policy)] + list(SHORTHANDS)
    near = difflib.get_close_matches(name, known, n=1) if len(name) < 200 else []
    return (f"{shorten(repr(name))} is not a policy field"
            + (f" (did you mean {near[0]!r}?)" if near else
               f" (the fields: {', '.join(f.name for f in fields(Policy))})"))
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
    #: .ftz: when is a result tiny, and so flushed to a zero of its sign?  Measured on an H100:
    #: TININESS_AFTER_IEEE on every .ftz form (module docstring).  TININESS_AFTER: the
    #: result rounded into the format is subnormal; TININESS_BEFORE: the exact result is below
    #: the smallest normal (flushed even when it rounds up to it); TININESS_AFTER_IEEE: the
    #: exact result rounded to the format's precision with an unbounded exponent is below the
    #: smallest normal (between the two: the f16 product 2**-14 - 2**-25 = 0x3BFF * 0x0400
    #: rounds to 2**-14 in the format, so it is kept after rounding, but stays below 2**-14
    #: at 11 bits unbounded, so IEEE flushes it).
    ftz_tininess: str = TININESS_AFTER_IEEE
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
    #: manual: "For cvt.f32.bf16, NaN input yields unspecified NaN".  Measured on an H100:
    #: WIDEN_PAYLOAD on cvt{.rnd}.f32.bf16, WIDEN_CANONICAL on the rest (per-form entries).
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
    #: .ftz of a narrowing cvt from .f32 (CVT_FTZ above): CVT_FTZ_FLUSH flushes a subnormal
    #: f32 input to a zero of its sign (the manual); CVT_FTZ_IGNORED computes the form as if
    #: it had no .ftz (the H100 on cvt.*.ftz{.sat}.f16.f32, a per-form entry by default).
    cvt_ftz_input: str = CVT_FTZ_FLUSH
    #: fma.{rz,rm,rp}{.oob}{.relu}.bf16/.bf16x2 (BF16_FMA_DIRECTED above): what ptxas 13.0
    #: compiles them to (BF16_FMA_AS_COMPILED) or the rounding their spelling names.
    bf16_fma_directed: str = BF16_FMA_AS_COMPILED
    #: Per-form values, (glob over the canonical spelling, field, value), first match wins
    #: (``value``; module docstring).  The default is the H100's (DEFAULT_PER_FORM).
    per_form: tuple[tuple[str, str, Any], ...] = DEFAULT_PER_FORM
    #: Result NaN of .f64 results (f64 add/sub/mul/fma, cvt to .f64, the f64 min/max/abs/neg):
    #: all ones but the sign, as f32's; the manual leaves f64 NaN results unspecified (added by
    #: the ops families of issue 25; not measured on a GPU yet).
    canonical_nan_f64: int = 0x7FFFFFFFFFFFFFFF

    #: The tensor-core numerics (MMA_MODELS above): MMA_MMASIM_211 (the default: MMA-Sim
    #: 2.1.1, which its authors check bit for bit on GPUs) or MMA_MMASIM_2026_01 (MMA-Sim's
    #: January 2026 source, ptxfp's reading before issue 32).  One switch: the zero exponent,
    #: the sign of a zero result and (unless ``mma_f64_nan`` says) the f64 NaN.
    mma_model: str = MMA_MMASIM_211
    #: The NaN of the f64 matrix forms (MMA_F64_NAN above): None follows ``mma_model``
    #: (MMA_F64_NAN_PAYLOAD under MMA-Sim 2.1.1, MMA_F64_NAN_CANONICAL under 2026-01).
    mma_f64_nan: str | None = None
    #: How ``run`` (and ``check``'s notes) treat a mul feeding an add/sub with no rounding
    #: modifier (CONTRACT above): CONTRACT_PTXAS fuses exactly the pairs ptxas 13.5 fuses
    #: (the GPU's bits); CONTRACT_AS_WRITTEN rounds every instruction as written.
    contract: str = CONTRACT_PTXAS

    def __post_init__(self) -> None:
        for name in (*CHOICES, *_NAN_FORMATS, *_BOOLS):
            _check_value(name, getattr(self, name))
        if self.mma_f64_nan is not None:
            _check_value("mma_f64_nan", self.mma_f64_nan)
        _check_table(self.per_form)

    def value(self, field: str, spelling: str) -> Any:
        """The value of ``field`` in force for the form whose canonical spelling is
        ``spelling``: the first ``per_form`` entry of that field whose glob matches it, else
        the field's global value.

            >>> p = Policy(per_form=(("cvt.f32.bf16", "widen_nan", "payload"),))
            >>> p.value("widen_nan", "cvt.f32.bf16"), p.value("widen_nan", "cvt.f32.f16")
            ('payload', 'canonical')
        """
        for glob, name, v in self.per_form:
            if name == field and fnmatchcase(spelling, glob):
                return v
        try:
            return getattr(self, field)
        except AttributeError:
            raise PolicyError(_unknown(field)) from None

    def canonical_nan(self, fmt: str, spelling: str | None = None) -> int:
        """The canonical NaN of results in format ``fmt`` ('f16', 'bf16' or 'f32'; the packed
        names 'f16x2'/'bf16x2' give their lanes'); with ``spelling``, the one in force for
        that form (``value``)."""
        name = NAN_FIELDS[fmt.removesuffix("x2").removesuffix("x4")]
        nan: int = getattr(self, name) if spelling is None else self.value(name, spelling)
        return nan

    @property
    def canonical_nan16(self) -> int:
        """Old name: the canonical NaN of f16 and bf16, while the two fields agree."""
        if self.canonical_nan_f16 != self.canonical_nan_bf16:
            raise PolicyError("canonical_nan16 is ambiguous when canonical_nan_f16 "
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
    (a field named explicitly wins over a shorthand).  A field set here is set for every form:
    its ``per_form`` entries are dropped, unless ``per_form`` is given too (then that table is
    taken as it is)."""
    expanded: dict[str, Any] = {}
    known = {f.name for f in fields(Policy)}
    for k in changes:
        if k not in known and k not in SHORTHANDS:
            raise PolicyError(_unknown(k))
    for k, v in changes.items():
        for f in SHORTHANDS.get(k, ()):
            expanded[f] = v
    expanded.update({k: v for k, v in changes.items() if k not in SHORTHANDS})
    if "per_form" not in expanded:
        table = tuple(e for e in pol.per_form if e[1] not in expanded)
        if len(table) != len(pol.per_form):
            expanded["per_form"] = table
    elif isinstance(expanded["per_form"], list):
        expanded["per_form"] = tuple(tuple(e) if isinstance(e, list) else e
                                     for e in expanded["per_form"])
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
