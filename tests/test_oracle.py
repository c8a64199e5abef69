"""ptxfp against the independent oracle (tests/oracle.py), and the oracle against other references.

Expected bits come from the oracle (gmpy2/MPFR, one rounding of the exact result), from NumPy
(float16 add/sub/mul, float64 for the mixed add/sub), from exact rationals, or from the facts
of the PTX ISA manual and docs/semantics.md worked out by hand below; never from ptxfp.
"""

from fractions import Fraction

import numpy as np
import pytest

import oracle as O
import ptxfp
import vectors as V
from ptxfp import policy as ptxfp_policy

SPELLINGS = ptxfp.isa.canonical_spellings()

# --------------------------------------------------------------------------------------------
# The instruction table


def test_table_has_exactly_the_spec_forms():
    """Every form of the spec pages and of ptxas 13.0 (and no other) is in the table."""
    spec = {str(ptxfp.parse(s)) for s in O.SPEC_FORMS}
    assert len(spec) == len(O.SPEC_FORMS)
    assert set(SPELLINGS) == spec
    assert len(SPELLINGS) == len(set(SPELLINGS))


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_parse_agrees_with_oracle_reading(spelling):
    ins, mine = ptxfp.parse(spelling), O.parse_form(spelling)
    for field in ("opcode", "mixed", "lanes", "lane_format", "result_format", "rounding",
                  "ftz", "sat", "relu", "oob"):
        assert getattr(ins, field) == getattr(mine, field), field


# --------------------------------------------------------------------------------------------
# Every form, 20,000 vectors each


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_form_matches_oracle(spelling, check):
    ins = ptxfp.parse(spelling)
    ops = V.for_instruction(ins)
    assert ops[0].size >= 20_000
    got = ptxfp.execute(spelling, *ops)
    want = O.compute_array(ins, *ops)
    check(spelling, ops, got, want)


# Each policy flipped, on a few forms it affects: the model and the oracle must move together,
# and the vectors must contain cases the flip changes. (ptxfp compiles a kernel per form and
# policy, a few seconds each: the forms are few, and the same as in FACTS below.)
NAN_FLIP = dict(canonical_nan_f16=0x7E00, canonical_nan_bf16=0x7FC0,
                canonical_nan_f32=0x7FC00000)
#: one 16-bit format's NaN flipped alone: the other format's results must keep theirs
NAN_BF16_FLIP = dict(canonical_nan_bf16=0x7FC0)
NAN_F16_FLIP = dict(canonical_nan_f16=0x7E00)
IEEE_TININESS = dict(ftz_tininess="after_rounding_unbounded")
#: the undocumented fma.{rz,rm,rp}...bf16 spellings read as their names say (not the default)
SPELLED = dict(bf16_fma_directed="as_spelled")
POLICY_FLIPS = [
    (dict(ftz_tininess="before_rounding"), ["mul.rn.ftz.f16", "fma.rn.ftz.f16x2"]),
    (dict(sat_minus_zero_to_plus=False), ["mul.rn.sat.f16", "sub.rm.sat.f32.f16"]),
    (dict(relu_minus_zero_to_plus=False), ["fma.rn.relu.f16", "fma.rn.relu.bf16x2"]),
    (dict(oob_ignores_sign=False), ["fma.rn.oob.bf16", "fma.rn.oob.relu.f16x2"]),
    (dict(oob_tests_c=True), ["fma.rn.oob.f16", "fma.rn.oob.relu.bf16x2"]),
    (NAN_FLIP, ["add.rn.f16", "fma.rz.f32.bf16", "mul.rn.bf16x2"]),
    (NAN_BF16_FLIP, ["fma.rn.relu.bf16x2", "add.rn.f16", "fma.rn.f16x2", "add.rn.f32.bf16"]),
    (NAN_F16_FLIP, ["mul.rn.ftz.f16x2", "mul.rn.bf16", "fma.rm.bf16x2", "fma.rn.f32.f16"]),
]


@pytest.mark.parametrize("changes, spellings", POLICY_FLIPS,
                         ids=[",".join(c) for c, _ in POLICY_FLIPS])
def test_policy_flip_moves_model_and_oracle(changes, spellings, check):
    assert spellings
    changed_somewhere = False
    for spelling in spellings:
        ins = ptxfp.parse(spelling)
        ops = V.for_instruction(ins)
        before = O.compute_array(ins, *ops)
        with ptxfp_policy.using(**changes):
            got = ptxfp.execute(spelling, *ops)
            want = O.compute_array(ins, *ops)
        check(f"{spelling} under {changes}", ops, got, want)
        changed_somewhere |= bool((want != before).any())
    assert changed_somewhere, f"no vector is affected by {changes}"


FTZ_FORMS = [s for s in SPELLINGS if ptxfp.parse(s).ftz]


@pytest.mark.parametrize("spelling", FTZ_FORMS)
def test_ieee_tininess_on_every_ftz_form(spelling, check):
    """ftz_tininess = IEEE's "after rounding" (unbounded exponent) on every .ftz form: ptxfp
    and the oracle move together, and on products (mul, fma) the vectors hold results that
    this reading flushes and the format's after-rounding keeps (sums of f16 values below
    2**-14 are exact, so add/sub cannot tell the readings apart)."""
    assert len([s for s in FTZ_FORMS if "f32" not in s]) == 18
    ins = ptxfp.parse(spelling)
    ops = V.for_instruction(ins)
    with ptxfp_policy.using(ftz_tininess="after_rounding"):
        after = O.compute_array(ins, *ops)
    with ptxfp_policy.using(ftz_tininess="before_rounding"):
        before = O.compute_array(ins, *ops)
    with ptxfp_policy.using(**IEEE_TININESS):
        got = ptxfp.execute(spelling, *ops)
        want = O.compute_array(ins, *ops)
    check(f"{spelling} under {IEEE_TININESS}", ops, got, want)
    if ins.lane_format == "f32":
        pass            # .f32/.f32x2: the readings are held to the oracle, not to the vectors
    elif ins.opcode in ("mul", "fma"):
        assert (want != after).any() and (want != before).any(), "the flip is not exercised"
    else:
        assert (want == after).all() and (want == before).all()


def test_nan_flip_of_one_16_bit_format_leaves_the_other():
    """canonical_nan_bf16 and canonical_nan_f16 are separate switches: NaN results of one
    format follow only their own field (f16 and mixed .f32 results keep 0x7FFF / 0x7FFFFFFF
    under a bf16 flip, and the other way round)."""
    cases = [("add.rn.f16", (0x7C00, 0xFC00)), ("add.rn.bf16", (0x7F80, 0xFF80)),
             ("fma.rn.f16x2", (0x7C007C00, 0x3C003C00, 0xFC00FC00)),
             ("fma.rn.bf16x2", (0x7F807F80, 0x3F803F80, 0xFF80FF80)),
             ("add.rn.f32.bf16", (0xFFC0, 0x3F800000))]
    expect = {
        "bf16": [0x7FFF, 0x7FC0, 0x7FFF7FFF, 0x7FC07FC0, 0x7FFFFFFF],
        "f16": [0x7E00, 0x7FFF, 0x7E007E00, 0x7FFF7FFF, 0x7FFFFFFF],
    }
    for which, changes in (("bf16", NAN_BF16_FLIP), ("f16", NAN_F16_FLIP)):
        with ptxfp_policy.using(**changes):
            assert [O.compute(s, *ops) for s, ops in cases] == expect[which], "oracle"
            assert [ptxfp.execute(s, *ops) for s, ops in cases] == expect[which], "ptxfp"


# --------------------------------------------------------------------------------------------
# Facts worked out by hand from the manual and docs/semantics.md; checked on the oracle and ptxfp

MAX32, INF32 = 0x7F7FFFFF, 0x7F800000
FACTS = [
    # overflow per mode (bf16 max + f32 max, both signs); f32 max + 1 only overflows upward
    *[(f"add.{r}.f32.bf16", (0x7F7F, MAX32), v, {}) for r, v in
      [("rn", INF32), ("rz", MAX32), ("rm", MAX32), ("rp", INF32)]],
    *[(f"add.{r}.f32.bf16", (0xFF7F, MAX32 | 1 << 31), v | 1 << 31, {}) for r, v in
      [("rn", INF32), ("rz", MAX32), ("rm", INF32), ("rp", MAX32)]],
    *[(f"add.{r}.f32.f16", (0x3C00, MAX32), v, {}) for r, v in
      [("rn", MAX32), ("rz", MAX32), ("rm", MAX32), ("rp", INF32)]],
    ("add.rn.f16", (0x7BFF, 0x4C00), 0x7C00, {}),        # 65504 + 16 = 65520: tie -> inf
    ("add.rn.f16", (0x7BFF, 0x4BFF), 0x7BFF, {}),        # just below the threshold
    # one rounding, ties to even and directed (1 + 2**-24 in f32)
    *[(f"add.{r}.f32.f16", (0x3C00, 0x33800000), v, {}) for r, v in
      [("rn", 0x3F800000), ("rz", 0x3F800000), ("rm", 0x3F800000), ("rp", 0x3F800001)]],
    *[(f"add.{r}.f32.f16", (0xBC00, 0xB3800000), v, {}) for r, v in
      [("rn", 0xBF800000), ("rz", 0xBF800000), ("rm", 0xBF800001), ("rp", 0xBF800000)]],
    *[(f"add.{r}.f32.bf16", (0x3F80, 0xA0000000), v, {}) for r, v in      # 1 - 2**-63
      [("rn", 0x3F800000), ("rz", 0x3F7FFFFF), ("rm", 0x3F7FFFFF), ("rp", 0x3F800000)]],
    ("fma.rn.bf16", (0x3F82, 0x3FA0, 0x0001), 0x3FA3, {}),  # the double-rounding witness
    ("fma.rn.bf16", (0x3F82, 0x3FA0, 0x0000), 0x3FA2, {}),  # the bare tie goes to even
    ("fma.rn.bf16", (0x3F82, 0x3FA0, 0x8001), 0x3FA2, {}),
    ("fma.rn.f16", (0x3C01, 0x3E00, 0x8001), 0x3E01, {}),   # the same in f16 (f32 first: 0x3E02)
    ("fma.rn.f32.bf16", (0x0080, 0x3F00, 0x00000000), 0x00400000, {}),  # f32 subnormal kept
    # exact zeros: +0, but -0 in .rm; (-0) + (-0) = -0 in every mode
    ("add.rn.f16", (0x3C00, 0xBC00), 0x0000, {}),
    ("sub.rn.f16", (0x3C00, 0x3C00), 0x0000, {}),
    ("add.rn.f16", (0x8000, 0x8000), 0x8000, {}),
    ("add.rn.f16", (0x8000, 0x0000), 0x0000, {}),
    ("sub.rn.f16", (0x8000, 0x0000), 0x8000, {}),
    ("mul.rn.f16", (0x8000, 0x3C00), 0x8000, {}),
    ("fma.rn.f16", (0x8000, 0x3C00, 0x8000), 0x8000, {}),
    ("fma.rn.f16", (0x8000, 0x3C00, 0x0000), 0x0000, {}),
    ("fma.rn.bf16", (0x3F80, 0x3F80, 0xBF80), 0x0000, {}),
    ("fma.rm.bf16", (0x3F80, 0x3F80, 0xBF80), 0x8000, SPELLED),
    ("fma.rp.bf16", (0x3F80, 0x3F80, 0xBF80), 0x0000, SPELLED),
    # ... and as ptxas 13.0 compiles them (the default): the bits read as f16,
    # 1.875 * 1.875 - 1.875 = 1.640625 = f16 0x3E90; .relu dropped: -1.875 * 1.875 = -3.515625 =
    # f16 0xC308; packed: .rn, so 1 * 1 - 1 is +0 in each lane
    ("fma.rm.bf16", (0x3F80, 0x3F80, 0xBF80), 0x3E90, {}),
    ("fma.rm.relu.bf16", (0xBF80, 0x3F80, 0x0000), 0xC308, {}),
    ("fma.rm.bf16x2", (0x3F803F80, 0x3F803F80, 0xBF80BF80), 0x00000000, {}),
    ("fma.rm.bf16x2", (0x3F803F80, 0x3F803F80, 0xBF80BF80), 0x80008000, SPELLED),
    ("add.rm.f32.f16", (0x3C00, 0xBF800000), 0x80000000, {}),
    ("add.rz.f32.f16", (0x3C00, 0xBF800000), 0x00000000, {}),
    ("add.rp.f32.f16", (0x3C00, 0xBF800000), 0x00000000, {}),
    ("sub.rm.f32.bf16", (0x3F80, 0x3F800000), 0x80000000, {}),
    ("add.rp.f32.f16", (0x8000, 0x80000000), 0x80000000, {}),
    ("fma.rz.f32.f16", (0x8000, 0x3C00, 0x80000000), 0x80000000, {}),
    # underflow keeps the sign: -2**-25 is a tie between -0 and -2**-24: even is -0
    ("mul.rn.f16", (0x0001, 0xB800), 0x8000, {}),
    ("mul.rn.f16", (0x0001, 0x3A00), 0x0001, {}),
    # NaN results are canonical whatever the payload and sign; infinities
    ("add.rn.f16", (0x7C00, 0xFC00), 0x7FFF, {}),
    ("sub.rn.f16", (0x7C00, 0x7C00), 0x7FFF, {}),
    ("mul.rn.bf16", (0x0000, 0xFF80), 0x7FFF, {}),
    ("fma.rn.f16", (0x7C00, 0x0000, 0x3C00), 0x7FFF, {}),
    ("fma.rn.f16", (0x3C00, 0x7C00, 0xFC00), 0x7FFF, {}),
    ("fma.rn.bf16", (0x7F81, 0x3F80, 0x0000), 0x7FFF, {}),
    ("add.rn.f16", (0xFC01, 0x3C00), 0x7FFF, {}),
    ("add.rn.f16", (0x7C01, 0x7E00), 0x7FFF, {}),
    ("add.rn.f32.bf16", (0xFFC0, 0x3F800000), 0x7FFFFFFF, {}),
    ("fma.rn.f32.f16", (0x3C00, 0x3C00, 0x7F800001), 0x7FFFFFFF, {}),
    ("fma.rn.f32.f16", (0x7C00, 0x0000, 0x3F800000), 0x7FFFFFFF, {}),
    ("add.rn.f16", (0x7C00, 0x7BFF), 0x7C00, {}),
    ("fma.rn.bf16", (0x7F80, 0xBF80, 0x3F80), 0xFF80, {}),
    ("add.rn.f16", (0x7C01, 0x3C00), 0x7E00, NAN_FLIP),
    ("fma.rz.f32.bf16", (0x7F81, 0x3F80, 0), 0x7FC00000, NAN_FLIP),
    ("mul.rn.bf16", (0x0000, 0xFF80), 0x7FC0, NAN_FLIP),
    # one NaN switch per result format: a bf16 flip leaves f16 and f32 results alone, and
    # the other way round
    ("mul.rn.bf16", (0x0000, 0xFF80), 0x7FC0, NAN_BF16_FLIP),
    ("add.rn.f16", (0x7C01, 0x3C00), 0x7FFF, NAN_BF16_FLIP),
    ("add.rn.f32.bf16", (0xFFC0, 0x3F800000), 0x7FFFFFFF, NAN_BF16_FLIP),
    ("add.rn.f16", (0x7C01, 0x3C00), 0x7E00, NAN_F16_FLIP),
    ("mul.rn.bf16", (0x0000, 0xFF80), 0x7FFF, NAN_F16_FLIP),
    ("fma.rn.relu.bf16", (0x7F81, 0x3F80, 0x0000), 0x7FFF, NAN_F16_FLIP),
    # the old shorthand sets both 16-bit fields
    ("mul.rn.bf16", (0x0000, 0xFF80), 0x7FC0, dict(canonical_nan16=0x7FC0)),
    # .sat: clamp to [0, 1], NaN -> +0, -0 -> +0 (policy)
    ("add.rn.sat.f16", (0x3C00, 0x3C00), 0x3C00, {}),
    ("add.rn.sat.f16", (0x3800, 0x3400), 0x3A00, {}),
    ("add.rn.sat.f16", (0xBC00, 0x3800), 0x0000, {}),
    ("add.rn.sat.f16", (0x7C00, 0xFC00), 0x0000, {}),
    ("add.rn.sat.f16", (0x0001, 0x0000), 0x0001, {}),
    ("mul.rn.sat.f16", (0x7C00, 0x3C00), 0x3C00, {}),
    ("mul.rn.sat.f16", (0x8000, 0x3C00), 0x0000, {}),
    ("mul.rn.sat.f16", (0x8000, 0x3C00), 0x8000, dict(sat_minus_zero_to_plus=False)),
    ("fma.rn.sat.f16", (0xFC00, 0x3C00, 0x0000), 0x0000, {}),
    ("add.rn.sat.f32.bf16", (0x4000, 0x3F800000), 0x3F800000, {}),
    ("sub.rm.sat.f32.f16", (0x3C00, 0x3F800000), 0x00000000, {}),
    ("sub.rm.sat.f32.f16", (0x3C00, 0x3F800000), 0x80000000, dict(sat_minus_zero_to_plus=False)),
    ("fma.rn.sat.f32.f16", (0x7E00, 0x3C00, 0x00000000), 0x00000000, {}),
    # .relu: negative -> +0, NaN -> canonical NaN, -0 -> +0 (policy), the rest unchanged
    ("fma.rn.relu.bf16", (0xBF80, 0x3F80, 0x0000), 0x0000, {}),
    ("fma.rn.relu.bf16", (0x3F80, 0x3F80, 0x3F80), 0x4000, {}),
    ("fma.rn.relu.f16", (0x4000, 0x4000, 0x0000), 0x4400, {}),
    ("fma.rn.relu.f16", (0x7C00, 0x0000, 0x0000), 0x7FFF, {}),
    ("fma.rn.relu.f16", (0x7C01, 0x3C00, 0x0000), 0x7FFF, {}),
    ("fma.rn.relu.f16", (0xFC00, 0x3C00, 0x0000), 0x0000, {}),
    ("fma.rn.relu.f16", (0x7C00, 0x3C00, 0x0000), 0x7C00, {}),
    ("fma.rn.relu.f16", (0x8000, 0x3C00, 0x8000), 0x0000, {}),
    ("fma.rn.relu.f16", (0x8000, 0x3C00, 0x8000), 0x8000, dict(relu_minus_zero_to_plus=False)),
    # .oob: OOB-NaN in a or b -> +0 (relu changes nothing); 0xFFF7 and c per policy
    ("fma.rn.oob.f16", (0x7FF7, 0x3C00, 0x3C00), 0x0000, {}),
    ("fma.rn.oob.f16", (0x3C00, 0x7FF7, 0x3C00), 0x0000, {}),
    ("fma.rn.oob.relu.f16", (0x7FF7, 0xBC00, 0x3C00), 0x0000, {}),
    ("fma.rn.oob.f16", (0x7FFF, 0x3C00, 0x0000), 0x7FFF, {}),
    ("fma.rn.oob.bf16", (0xFFF7, 0x3F80, 0x0000), 0x0000, {}),
    ("fma.rn.oob.bf16", (0xFFF7, 0x3F80, 0x0000), 0x7FFF, dict(oob_ignores_sign=False)),
    ("fma.rn.oob.f16", (0x3C00, 0x3C00, 0x7FF7), 0x7FFF, {}),
    ("fma.rn.oob.f16", (0x3C00, 0x3C00, 0x7FF7), 0x0000, dict(oob_tests_c=True)),
    ("fma.rn.f16", (0x7FF7, 0x3C00, 0x3C00), 0x7FFF, {}),                 # no .oob: a NaN
    ("fma.rn.oob.sat.f16", (0x7FF7, 0x3C00, 0x3C00), 0x0000, {}),
    ("fma.rn.oob.sat.f16", (0x3C00, 0x4000, 0x3C00), 0x3C00, {}),
    ("fma.rn.oob.sat.f16", (0x3C00, 0x7C01, 0x3C00), 0x0000, {}),         # NaN, not OOB: sat
    ("fma.rz.oob.bf16", (0x3F80, 0xFFF7, 0x3F80), 0x0000, SPELLED),
    ("fma.rm.oob.relu.bf16", (0x3F80, 0x3F80, 0xBF80), 0x0000, SPELLED),  # -0 from .rm, relu
    # as compiled, .oob is dropped: 0xFFF7 read as f16 is a NaN
    ("fma.rz.oob.bf16", (0x3F80, 0xFFF7, 0x3F80), 0x7FFF, {}),
    ("fma.rn.oob.relu.bf16x2", (0x3F807FF7, 0x3F803F80, 0x3F800000), 0x40000000, {}),
    ("fma.rn.oob.relu.bf16x2", (0x7FF73F80, 0x3F803F80, 0x00003F80), 0x00004000, {}),
    # .ftz: subnormal inputs and results -> signed zero
    ("mul.rn.f16", (0x03FF, 0x3C00), 0x03FF, {}),
    ("mul.rn.ftz.f16", (0x03FF, 0x3C00), 0x0000, {}),
    ("mul.rn.ftz.f16", (0x83FF, 0x3C00), 0x8000, {}),
    ("mul.rn.ftz.f16", (0x0400, 0x3800), 0x0000, {}),
    ("mul.rn.ftz.f16", (0x8400, 0x3800), 0x8000, {}),
    ("add.rn.f16", (0x0001, 0x0400), 0x0401, {}),
    ("add.rn.ftz.f16", (0x0001, 0x0400), 0x0400, {}),
    ("add.rn.ftz.f16", (0x8001, 0x0000), 0x0000, {}),
    ("sub.rn.ftz.f16", (0x8001, 0x0000), 0x8000, {}),
    ("fma.rn.f16", (0x0001, 0x7C00, 0x3C00), 0x7C00, {}),
    ("fma.rn.ftz.f16", (0x0001, 0x7C00, 0x3C00), 0x7FFF, {}),             # 0 * inf after ftz
    # tininess: (1 + 2**-10) 2**-7 * (1 - 2**-10) 2**-7 = (1 - 2**-20) 2**-14 rounds up to 2**-14
    ("mul.rn.f16", (0x2001, 0x1FFE), 0x0400, {}),
    ("mul.rn.ftz.f16", (0x2001, 0x1FFE), 0x0400, dict(ftz_tininess="after_rounding")),
    ("mul.rn.ftz.f16", (0x2001, 0x1FFE), 0x0000, dict(ftz_tininess="before_rounding")),
    ("mul.rn.ftz.f16", (0xA001, 0x1FFE), 0x8000, dict(ftz_tininess="before_rounding")),
    ("fma.rn.ftz.f16x2", (0xA001, 0x1FFE, 0x8000), 0x8000, dict(ftz_tininess="before_rounding")),
    ("mul.rn.ftz.sat.f16", (0xA001, 0x1FFE), 0x0000, {}),
    # IEEE's tininess (rounded to 11 bits with an unbounded exponent) keeps that product: in
    # the binade [2**-15, 2**-14) the 11-bit grid is 2**-25, and (1 - 2**-20) 2**-14 is within
    # half of it (2**-26) of 2**-14, so it rounds to 2**-14, not tiny.
    ("mul.rn.ftz.f16", (0x2001, 0x1FFE), 0x0400, IEEE_TININESS),
    ("mul.rn.ftz.f16", (0xA001, 0x1FFE), 0x8400, IEEE_TININESS),
    # The three readings apart: 0x3BFF = (1 + 1023/1024) 2**-1 = 1 - 2**-11 and
    # 0x0400 = 2**-14 (exponent field 1, fraction 0), so the product is exactly
    # 2**-14 - 2**-25.  Into f16 (subnormal grid 2**-24) it is halfway between
    # 2**-14 - 2**-24 (0x03FF, odd) and 2**-14 (0x0400, even): ties to even gives the normal
    # 0x0400, so "after_rounding" keeps it.  At 11 bits unbounded it is on the grid
    # ((2**11 - 1) 2**-25), stays below 2**-14, so IEEE's reading flushes it to +0, as does
    # "before_rounding" (the exact value is below 2**-14).  The mirror 0xBBFF = -(1 - 2**-11)
    # gives the same with the sign: 0x8400 kept, 0x8000 flushed.
    ("mul.rn.ftz.f16", (0x3BFF, 0x0400), 0x0400, dict(ftz_tininess="after_rounding")),
    ("mul.rn.ftz.f16", (0x3BFF, 0x0400), 0x0000, IEEE_TININESS),
    ("mul.rn.ftz.f16", (0x3BFF, 0x0400), 0x0000, dict(ftz_tininess="before_rounding")),
    ("mul.rn.ftz.f16", (0xBBFF, 0x0400), 0x8400, dict(ftz_tininess="after_rounding")),
    ("mul.rn.ftz.f16", (0xBBFF, 0x0400), 0x8000, IEEE_TININESS),
    ("mul.rn.ftz.f16", (0xBBFF, 0x0400), 0x8000, dict(ftz_tininess="before_rounding")),
    ("mul.rn.f16", (0x3BFF, 0x0400), 0x0400, IEEE_TININESS),            # no .ftz: kept
    # the same product in fma (c = -0 adds nothing) and in lane 1 of the packed form
    ("fma.rn.ftz.f16", (0x3BFF, 0x0400, 0x8000), 0x0000, IEEE_TININESS),
    ("fma.rn.ftz.f16", (0xBBFF, 0x0400, 0x8000), 0x8000, IEEE_TININESS),
    ("fma.rn.ftz.f16", (0x3BFF, 0x0400, 0x8000), 0x0400, dict(ftz_tininess="after_rounding")),
    ("fma.rn.ftz.f16x2", (0xBBFF3C00, 0x04003C00, 0x80000000), 0x80003C00, IEEE_TININESS),
    ("fma.rn.ftz.f16x2", (0xBBFF3C00, 0x04003C00, 0x80000000), 0x84003C00,
     dict(ftz_tininess="after_rounding")),
    # lanes: lane 0 = bits [15:0]
    ("add.rn.f16x2", (0x3C004000, 0x3C003C00), 0x40004200, {}),
    ("add.rn.ftz.f16x2", (0x00010001, 0x04000400), 0x04000400, {}),
    ("mul.rn.bf16x2", (0x7FC03F80, 0x3F804000), 0x7FFF4000, {}),
    # defaults: no rounding modifier means .rn
    ("add.f16", (0x3C00, 0x1000), 0x3C00, {}),        # 1 + 2**-11: tie to even
    ("sub.f32.f16", (0x3C00, 0xB3800000), 0x3F800000, {}),
]


@pytest.mark.parametrize("spelling, operands, expected, changes", FACTS,
                         ids=[f"{f[0]}{tuple(hex(x) for x in f[1])}{f[3] or ''}" for f in FACTS])
def test_fact(spelling, operands, expected, changes):
    with ptxfp_policy.using(**changes):
        assert O.compute(spelling, *operands) == expected, "oracle"
        assert O.compute(ptxfp.parse(spelling), *operands) == expected, "oracle (Instruction)"
        assert ptxfp.execute(spelling, *operands) == expected, "ptxfp"


# --------------------------------------------------------------------------------------------
# The double-rounding witness, derived without its answer written in


def _value(bits, fmt):
    """Exact rational value of finite bits, decoded from the fields (independent of oracle)."""
    s = -1 if bits >> (fmt.width - 1) else 1
    e = (bits >> fmt.fbits) & ((1 << fmt.ebits) - 1)
    f = bits & ((1 << fmt.fbits) - 1)
    if e == 0:
        return s * Fraction(f, 1 << fmt.fbits) * Fraction(2) ** fmt.emin_normal
    return s * (1 + Fraction(f, 1 << fmt.fbits)) * Fraction(2) ** (e - fmt.bias)


def test_double_rounding_witness():
    spelling, (a, b, c), documented = V.DOUBLE_ROUNDING_WITNESS
    fmt = O.BF16
    exact = _value(a, fmt) * _value(b, fmt) + _value(c, fmt)
    # the nearest bf16 to the exact value, by search over all positive finite bf16 values
    candidates = sorted(range(0, 0x7F80), key=lambda x: (abs(_value(x, fmt) - exact), x & 1))
    nearest = candidates[0]
    assert abs(_value(candidates[1], fmt) - exact) > abs(_value(nearest, fmt) - exact)
    # rounding a*b + c to f32 first loses c, and the f32 value is a bf16 tie
    f32_first = np.float32(_value(a, fmt) * _value(b, fmt)) + np.float32(_value(c, fmt))
    twice = int(V.from_float(np.float64(f32_first), fmt))
    assert twice != nearest
    assert O.compute(spelling, a, b, c) == nearest == documented
    assert ptxfp.execute(spelling, a, b, c) == nearest


# --------------------------------------------------------------------------------------------
# The oracle against other references


def _numpy_f16(op, a, b):
    fa, fb = a.astype(np.uint16).view(np.float16), b.astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](fa, fb)
    bits = r.view(np.uint16).copy()
    bits[np.isnan(r)] = ptxfp.POLICY.canonical_nan_f16
    return bits


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_oracle_against_numpy_float16(op, rng, check):
    """NumPy's float16 add/sub/mul are correctly rounded: the oracle's .rn must agree."""
    a, b = V.lane_operands(op, "f16", False)
    ra = rng.integers(0, 1 << 16, 50_000)
    rb = rng.integers(0, 1 << 16, 50_000)
    a, b = np.concatenate([a, ra]).astype(np.uint16), np.concatenate([b, rb]).astype(np.uint16)
    check(f"oracle {op}.rn.f16 vs numpy", (a, b), O.compute_array(f"{op}.rn.f16", a, b),
          _numpy_f16(op, a, b))


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("atype", ["f16", "bf16"])
def test_oracle_mixed_against_float64(op, atype, rng, check):
    """a (f16/bf16) and c (f32) are exact in float64, and float64 (53 >= 2*24 + 2 bits) then
    float32 rounds a sum of f32 values correctly: the oracle's .rn must agree."""
    a, c = V.lane_operands(op, atype, True)
    a = np.concatenate([a, rng.integers(0, 1 << 16, 20_000)]).astype(np.uint16)
    c = np.concatenate([c, rng.integers(0, 1 << 32, 20_000)]).astype(np.uint32)
    fa, fc = V.to_float(a, O.FORMATS[atype]), V.to_float(c, O.F32)
    with np.errstate(all="ignore"):
        r = (fa + fc if op == "add" else fa - fc).astype(np.float32)
    want = r.view(np.uint32).copy()
    want[np.isnan(r)] = ptxfp.POLICY.canonical_nan_f32
    check(f"oracle {op}.rn.f32.{atype} vs float64", (a, c),
          O.compute_array(f"{op}.rn.f32.{atype}", a, c), want)


def _fraction_round(q, fmt, mode, zero_sign):
    """Round a rational once into fmt (bits), written without MPFR: the third reference."""
    if q == 0:
        return fmt.sign_bit if zero_sign else 0
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, fmt.emin_normal)
    ulp = Fraction(2) ** (e - fmt.fbits)
    k, rem = divmod(a, ulp)
    k = int(k)
    if rem:
        up = {"rz": False, "rm": neg, "rp": not neg,
              "rn": rem * 2 > ulp or (rem * 2 == ulp and k & 1)}[mode]
        k += up
    m = k * ulp
    sign = fmt.sign_bit if neg else 0
    if m > _value(fmt.max_bits, fmt):
        to_inf = {"rn": True, "rz": False, "rm": neg, "rp": not neg}[mode]
        return sign | (fmt.inf_bits if to_inf else fmt.max_bits)
    if m == 0:
        return sign
    if m < Fraction(2) ** fmt.emin_normal:
        return sign | int(m / Fraction(2) ** (fmt.emin_normal - fmt.fbits))
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    frac = int((m / Fraction(2) ** e - 1) * (1 << fmt.fbits))
    return sign | ((e + fmt.bias) << fmt.fbits) | frac


def _fraction_round_unbounded(q, fmt, mode):
    """q rounded to fmt's precision in mode with an unbounded exponent range (a rational)."""
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (e - fmt.fbits)
    k, rem = divmod(a, ulp)
    k = int(k)
    if rem:
        k += {"rz": False, "rm": neg, "rp": not neg,
              "rn": rem * 2 > ulp or (rem * 2 == ulp and k & 1)}[mode]
    return -k * ulp if neg else k * ulp


def _finite(bits, fmt):
    return (np.asarray(bits).astype(np.int64) & fmt.exp_mask) != fmt.exp_mask


CORE_CASES = ([(op, t, False, "rn") for op in ("add", "sub", "mul") for t in ("f16", "bf16")]
              + [("fma", t, False, r) for t in ("f16", "bf16") for r in ("rn", "rz", "rm", "rp")]
              + [(op, t, True, r) for op in ("add", "sub", "fma") for t in ("f16", "bf16")
                 for r in ("rn", "rz", "rm", "rp")])


@pytest.mark.parametrize("op, atype, mixed, rounding", CORE_CASES)
def test_oracle_core_against_fractions(op, atype, mixed, rounding):
    """The oracle's one rounding (MPFR contexts, subnormals, overflow, zero signs, tininess)
    against exact rationals on the finite targeted vectors, in every rounding mode."""
    fmt = O.FORMATS[atype]
    out = O.F32 if mixed else fmt
    ops = V.lane_operands(op, atype, mixed)
    fmts = [fmt] * (len(ops) - 1) + [out]
    keep = np.logical_and.reduce([_finite(x, f) for x, f in zip(ops, fmts)])
    rows = list(zip(*[x[keep][:1500].tolist() for x in ops]))
    assert len(rows) >= 1000
    mn = Fraction(2) ** out.emin_normal
    bad = []
    for row in rows:
        vals = [_value(x, f) for x, f in zip(row, fmts)]
        negz = [bool(x >> (f.width - 1)) for x, f in zip(row, fmts)]
        if op == "mul":
            q, zsign = vals[0] * vals[1], negz[0] ^ negz[1]
        else:
            if op == "fma":
                x, y = vals[0] * vals[1], vals[2]
                zx, zy = negz[0] ^ negz[1], negz[2]
            else:
                x, y, zx, zy = vals[0], vals[1], negz[0], negz[1]
                if op == "sub":
                    y, zy = -y, not zy
            q = x + y
            both_zero = x == 0 and y == 0
            zsign = zx if (both_zero and zx == zy) else (rounding == "rm")
        want = _fraction_round(q, out, rounding, zsign)
        got, tiny, tiny_u = O.ieee(op, fmt, out if mixed else fmt, out, rounding, row)
        want_u = q != 0 and abs(_fraction_round_unbounded(q, out, rounding)) < mn
        if got != want or tiny != (q != 0 and abs(q) < mn) or tiny_u != want_u:
            bad.append((tuple(hex(x) for x in row), hex(got), hex(want), tiny, tiny_u))
    assert not bad, f"{len(bad)} differ, first: {bad[:5]}"


def test_oracle_scalar_and_array_agree(rng):
    ins = O.parse_form("fma.rn.ftz.relu.f16x2")
    a, b, c = (rng.integers(0, 1 << 32, 300, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    arr = O.compute_array(ins, a, b, c)
    assert arr.dtype == np.uint32
    assert arr.tolist() == [O.compute(ins, *t) for t in zip(a.tolist(), b.tolist(), c.tolist())]
    lanes = [O.compute("fma.rn.ftz.relu.f16", *(x >> s & 0xFFFF for x in t))
             for t in zip(a.tolist(), b.tolist(), c.tolist()) for s in (0, 16)]
    assert arr.tolist() == [lo | hi << 16 for lo, hi in zip(lanes[::2], lanes[1::2])]
