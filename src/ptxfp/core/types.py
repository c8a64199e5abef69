"""PTX types and the storage formats behind them: one table, the bottom of the package.

Every other description of a type is derived from this one: the formats the kernels round into
(formats.py), the widths of operands and registers, the type tokens of spellings (the parser,
the checker, the PTX reader and interpreter), the register types ptxas takes for an operand of
a type, and the float helpers of the CLI.  This module imports nothing of ptxfp.

Two tables:

- ``FORMATS``: the floating-point storage formats, with their encoding facts (exponent and
  fraction bits, bias, infinity and NaN encodings, largest finite value, what a rounded
  overflow becomes).  Sources: IEEE 754-2019 (f16, f32, f64); the PTX ISA manual, section
  5.2.5 "Alternate Floating-Point Data Formats" (bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1,
  ue8m0); the OCP Microscaling Formats (MX) v1.0 specification, which those follow; ml_dtypes'
  float8.h/mxfloat.h (``float8_e4m3fn``, ``float8_e5m2``, ``float6_e2m3fn``, ``float6_e3m2fn``,
  ``float4_e2m1fn``, ``float8_e8m0fnu``), which tests/test_types.py reads as an independent
  check of every fact here.
- ``TYPES``: the PTX type names (``.f16x2``, ``.e4m3x2``, ``.b32``, ``.pred`` ...): register
  width, lanes, lane format, and the register types ptxas 13.0 takes for an operand of the type
  in the arithmetic instructions (measured, tests/data/ptxas/operands.jsonl; for the types
  ptxfp does not compute yet, the manual's cvt section: ``.e4m3x2`` and ``.e5m2x2`` "has .b16
  type", ``.e2m1x2`` ".b8", the x4 types of ``cvt.rs`` ``.b32`` (``.e2m1x4`` ``.b16``)).

Packed types hold their lanes in equal containers, lane 0 in the low bits: an ``.e2m3x2`` is
two 6-bit values in the low 6 bits of each byte of a ``.b16``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: what a finite result beyond the largest finite value rounds to (round to nearest), when no
#: .satfinite clamps it: an infinity (IEEE formats), the NaN (e4m3 and ue8m0: their only
#: non-finite encoding), or nothing at all (e2m1, e2m3, e3m2 have neither: a conversion into
#: them must saturate, and PTX requires .satfinite on it)
OVERFLOW_INF, OVERFLOW_NAN, OVERFLOW_SATURATE = "inf", "nan", "saturate"

#: how NaN is encoded: IEEE (all-ones exponent, non-zero fraction: many patterns), the one
#: all-ones pattern of the magnitude (e4m3: S.1111.111; ue8m0: 0xFF), or not at all
NAN_IEEE, NAN_ALL_ONES, NAN_NONE = "ieee", "all-ones", "none"


@dataclass(frozen=True)
class FloatFormat:
    """One floating-point storage format and the facts of its encoding.

    Bit patterns are unsigned integers of ``width`` bits: the sign (when ``signed``) at the top,
    then ``exp_bits`` of biased exponent and ``man_bits`` of fraction.  An exponent field of 0
    holds the subnormals (when ``subnormals``; ue8m0 has no fraction and reads 0 as 2**-127)."""
    name: str
    exp_bits: int
    man_bits: int
    bias: int
    has_inf: bool
    nan_encoding: str         #: NAN_IEEE, NAN_ALL_ONES or NAN_NONE
    overflow: str             #: OVERFLOW_INF, OVERFLOW_NAN or OVERFLOW_SATURATE
    signed: bool = True
    subnormals: bool = True
    code: int = -1            #: the kernels' id of the format (-1: not computed yet)
    dtype_name: str = ""      #: the NumPy/ml_dtypes float dtype with these bits

    @property
    def width(self) -> int:
        """Bits of one value (the storage of the format, without container padding)."""
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def precision(self) -> int:
        return self.man_bits + 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.bias if self.subnormals else -self.bias

    @property
    def sign_bit(self) -> int:
        return (1 << (self.width - 1)) if self.signed else 0

    @property
    def exp_mask(self) -> int:
        return ((1 << self.exp_bits) - 1) << self.man_bits

    @property
    def inf(self) -> int | None:
        """The bits of +infinity, or None."""
        return self.exp_mask if self.has_inf else None

    @property
    def nan(self) -> int | None:
        """The smallest magnitude (sign bit clear) that encodes NaN, or None."""
        if self.nan_encoding == NAN_IEEE:
            return self.exp_mask + 1
        if self.nan_encoding == NAN_ALL_ONES:
            return (1 << (self.exp_bits + self.man_bits)) - 1
        return None

    def is_nan(self, bits: int) -> bool:
        """Does ``bits`` encode NaN?"""
        mag = bits & ~self.sign_bit & ((1 << self.width) - 1)
        if self.nan_encoding == NAN_IEEE:
            return mag > self.exp_mask
        return mag == self.nan

    @property
    def max_finite(self) -> int:
        """The bits of the largest finite value."""
        if self.has_inf or self.nan_encoding == NAN_IEEE:
            return self.exp_mask - 1
        top = (1 << (self.exp_bits + self.man_bits)) - 1
        return top - 1 if self.nan_encoding == NAN_ALL_ONES else top

    @property
    def emax(self) -> int:
        """Exponent of the largest finite value."""
        return (self.max_finite >> self.man_bits) - self.bias

    @property
    def one(self) -> int:
        return self.bias << self.man_bits

    def value(self, bits: int) -> float:
        """The value of ``bits`` (exact as a Python float for every format here; NaN for NaNs).
        A reading of the facts above, for tests and messages; kernels never call it."""
        sign = -1.0 if self.signed and bits & self.sign_bit else 1.0
        mag = bits & ~self.sign_bit & ((1 << self.width) - 1)
        if self.is_nan(mag):
            return float("nan")
        if self.inf is not None and mag == self.inf:
            return sign * float("inf")
        e, f = mag >> self.man_bits, mag & ((1 << self.man_bits) - 1)
        if e == 0 and self.subnormals:
            return sign * f * 2.0 ** (self.emin - self.man_bits)
        return sign * (1 + f / (1 << self.man_bits)) * 2.0 ** (e - self.bias)


F16 = FloatFormat("f16", 5, 10, 15, True, NAN_IEEE, OVERFLOW_INF, code=0, dtype_name="float16")
BF16 = FloatFormat("bf16", 8, 7, 127, True, NAN_IEEE, OVERFLOW_INF, code=1,
                   dtype_name="bfloat16")
F32 = FloatFormat("f32", 8, 23, 127, True, NAN_IEEE, OVERFLOW_INF, code=2, dtype_name="float32")
F64 = FloatFormat("f64", 11, 52, 1023, True, NAN_IEEE, OVERFLOW_INF, dtype_name="float64")
#: TensorFloat-32: f32's range with bf16-like 10-bit fraction, held in 32 bits (manual 5.2.5)
TF32 = FloatFormat("tf32", 8, 10, 127, True, NAN_IEEE, OVERFLOW_INF)
E4M3 = FloatFormat("e4m3", 4, 3, 7, False, NAN_ALL_ONES, OVERFLOW_NAN,
                   dtype_name="float8_e4m3fn")
E5M2 = FloatFormat("e5m2", 5, 2, 15, True, NAN_IEEE, OVERFLOW_INF, dtype_name="float8_e5m2")
E2M3 = FloatFormat("e2m3", 2, 3, 1, False, NAN_NONE, OVERFLOW_SATURATE,
                   dtype_name="float6_e2m3fn")
E3M2 = FloatFormat("e3m2", 3, 2, 3, False, NAN_NONE, OVERFLOW_SATURATE,
                   dtype_name="float6_e3m2fn")
E2M1 = FloatFormat("e2m1", 2, 1, 1, False, NAN_NONE, OVERFLOW_SATURATE,
                   dtype_name="float4_e2m1fn")
#: unsigned, exponent only: 2**(e - 127), 0xFF is NaN, no zero (the MX scale format)
UE8M0 = FloatFormat("ue8m0", 8, 0, 127, False, NAN_ALL_ONES, OVERFLOW_NAN, signed=False,
                    subnormals=False, dtype_name="float8_e8m0fnu")

FORMATS: dict[str, FloatFormat] = {
    f.name: f for f in (F16, BF16, F32, F64, TF32, E4M3, E5M2, E2M3, E3M2, E2M1, UE8M0)}

#: type kinds
FLOAT, INT, BITS, PRED = "float", "int", "bits", "pred"


@dataclass(frozen=True)
class PtxType:
    """One PTX type name: its register width, lanes, lane format and register classes."""
    name: str
    kind: str                          #: FLOAT, INT, BITS or PRED
    width: int                         #: bits of a value (a register) of the type
    lanes: int = 1
    fmt: FloatFormat | None = None     #: the format of each lane (floats)
    registers: frozenset[str] = frozenset()  #: register types ptxas takes for an operand
    signed: bool = False               #: integers: .s types

    @property
    def packed(self) -> bool:
        return self.lanes > 1

    @property
    def container(self) -> int:
        """Bits each lane occupies (a 6-bit e2m3 lane sits in 8)."""
        return self.width // self.lanes

    @property
    def lane_type(self) -> str:
        """The scalar type of one lane: 'f16' for .f16x2, itself for a scalar."""
        return self.fmt.name if self.fmt is not None and self.packed else self.name

    @property
    def dtype_name(self) -> str:
        """The unsigned NumPy dtype of the bits: 'uint16' for .f16 and .e4m3x2, 'bool' for
        .pred."""
        return "bool" if self.kind == PRED else f"uint{max(8, self.width)}"


def _float(name: str, fmt: FloatFormat, width: int, lanes: int, regs: str) -> PtxType:
    return PtxType(name, FLOAT, width, lanes, fmt, frozenset(regs.split()))


def _ints() -> list[PtxType]:
    out = [PtxType("pred", PRED, 1, registers=frozenset({"pred"}))]
    for w in (8, 16, 32, 64):
        out += [PtxType(f"b{w}", BITS, w, registers=frozenset({f"b{w}"})),
                PtxType(f"u{w}", INT, w, registers=frozenset({f"u{w}"})),
                PtxType(f"s{w}", INT, w, registers=frozenset({f"s{w}"}), signed=True)]
    out.append(PtxType("b128", BITS, 128, registers=frozenset({"b128"})))
    # the packed integer types of add/sub/min/max (PTX 8.0)
    out += [PtxType("u16x2", INT, 32, 2, registers=frozenset({"b32"})),
            PtxType("s16x2", INT, 32, 2, registers=frozenset({"b32"}), signed=True)]
    return out


TYPES: dict[str, PtxType] = {t.name: t for t in [
    # the types ptxfp computes (registers measured with ptxas 13.0)
    _float("f16", F16, 16, 1, "b16 f16"),
    _float("f16x2", F16, 32, 2, "b32 f16x2"),
    _float("bf16", BF16, 16, 1, "b16"),
    _float("bf16x2", BF16, 32, 2, "b32"),
    _float("f32", F32, 32, 1, "f32 b32"),
    # the other float types of PTX (registers from the manual)
    _float("f64", F64, 64, 1, "f64 b64"),
    _float("f32x2", F32, 64, 2, "b64"),
    _float("tf32", TF32, 32, 1, "b32"),
    _float("e4m3", E4M3, 8, 1, "b8"),
    _float("e5m2", E5M2, 8, 1, "b8"),
    _float("e2m3", E2M3, 8, 1, "b8"),
    _float("e3m2", E3M2, 8, 1, "b8"),
    _float("e2m1", E2M1, 4, 1, "b8"),
    _float("ue8m0", UE8M0, 8, 1, "b8"),
    _float("e4m3x2", E4M3, 16, 2, "b16"),
    _float("e5m2x2", E5M2, 16, 2, "b16"),
    _float("e2m3x2", E2M3, 16, 2, "b16"),
    _float("e3m2x2", E3M2, 16, 2, "b16"),
    _float("e2m1x2", E2M1, 8, 2, "b8"),
    _float("ue8m0x2", UE8M0, 16, 2, "b16"),
    _float("e4m3x4", E4M3, 32, 4, "b32"),
    _float("e5m2x4", E5M2, 32, 4, "b32"),
    _float("e2m3x4", E2M3, 32, 4, "b32"),
    _float("e3m2x4", E3M2, 32, 4, "b32"),
    _float("e2m1x4", E2M1, 16, 4, "b16"),
    # PTX 9.1's .s2f6x2 (cvt only, 'a' targets): two 8-bit lanes in a .b16 whose value
    # encoding the PTX ISA manual does not define; bits only, no lane format, not computed
    PtxType("s2f6x2", BITS, 16, 2, registers=frozenset({"b16"})),
] + _ints()}

#: the type tokens of the manual that are no data type of the table
OTHER_TYPE_TOKENS: frozenset[str] = frozenset()
#: every type token of PTX: a spelling token of these is a type, not a modifier
TYPE_TOKENS = frozenset(TYPES) | OTHER_TYPE_TOKENS

#: the half types (f16 and bf16 lanes) and every type ptxfp computes
HALF_TYPES = tuple(t.name for t in TYPES.values() if t.fmt in (F16, BF16))
MODELED_TYPES = HALF_TYPES + ("f32",)


def get(name: str) -> PtxType:
    """The PtxType called ``name`` (KeyError when there is none)."""
    return TYPES[name]


def width(name: str) -> int:
    """Bits of a value of type ``name``: 16 for .f16/.bf16, 32 for .f16x2/.bf16x2/.f32."""
    return TYPES[name].width


def lane_format(name: str) -> FloatFormat:
    """The format of each lane of the float type ``name``."""
    fmt = TYPES[name].fmt
    if fmt is None:
        raise KeyError(name)
    return fmt


def is_half(name: str) -> bool:
    """A type with f16 or bf16 lanes (.f16, .f16x2, .bf16, .bf16x2)."""
    return name in HALF_TYPES


#: register widths of the register types the interpreter holds (every scalar .b/.u/.s/.pred
#: type up to 64 bits, and the float types a register may be declared with)
REGISTER_WIDTHS: dict[str, int] = {
    t.name: t.width for t in TYPES.values()
    if t.width <= 64 and (t.kind != FLOAT and t.lanes == 1
                          or t.name in ("f16", "bf16", "f32", "f64", "tf32", "f16x2", "bf16x2"))}
