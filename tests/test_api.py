"""The public API: parse, to_bits/from_bits, execute's operand handling and its errors.

Expected values here come from NumPy's own float16/float32 conversions and from the PTX manual's
text, never from ptxfp.
"""

import dataclasses

import numpy as np
import pytest

import ptxfp
from ptxfp import FormatError, OperandError, PtxfpError, SpellingError


# --- parse ------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling, canonical", [
    ("add.f16", "add.f16"),
    ("add.rn.ftz.sat.f16x2", "add.rn.ftz.sat.f16x2"),
    ("add.sat.ftz.rn.f16", "add.rn.ftz.sat.f16"),          # any modifier order
    ("fma.rn.oob.relu.bf16x2", "fma.rn.oob.relu.bf16x2"),
    ("fma.rp.bf16", "fma.rp.bf16"),
    ("add.rz.f32.bf16.sat", "add.rz.sat.f32.bf16"),        # the manual's own spelling
    ("fma.rz.sat.f32.f16.sat", "fma.rz.sat.f32.f16"),      # .sat twice, as in the manual
    ("sub.f32.f16", "sub.f32.f16"),
])
def test_parse_canonical(spelling, canonical):
    assert str(ptxfp.parse(spelling)) == canonical


def test_parse_fields():
    ins = ptxfp.parse("fma.rm.sat.f32.bf16")
    assert (ins.opcode, ins.dtype, ins.atype, ins.rounding) == ("fma", "f32", "bf16", "rm")
    assert ins.mixed and ins.sat and not (ins.ftz or ins.relu or ins.oob)
    assert ins.operand_formats == ("bf16", "bf16", "f32")
    assert (ins.min_ptx, ins.min_sm) == ((8, 6), 100)
    # PTX ISA 9.7.4.1: add{.rnd}.bf16 needs PTX 7.8 and sm_90; f16 add needs 4.2 / sm_53.
    assert (ptxfp.parse("add.bf16").min_ptx, ptxfp.parse("add.bf16").min_sm) == ((7, 8), 90)
    assert (ptxfp.parse("add.f16").min_ptx, ptxfp.parse("add.f16").min_sm) == ((4, 2), 53)
    # 9.7.4.4: .relu on f16 needs 7.0/sm_80, .oob needs 8.1/sm_90.
    assert ptxfp.parse("fma.rn.relu.f16").min_sm == 80
    assert (ptxfp.parse("fma.rn.oob.f16").min_ptx, ptxfp.parse("fma.rn.oob.f16").min_sm) == ((8, 1), 90)
    no_rnd = ptxfp.parse("add.f16x2")
    assert no_rnd.rounding == "rn" and not no_rnd.rounding_explicit and no_rnd.lanes == 2


@pytest.mark.parametrize("spelling, token, rule", [
    ("add.ftz.bf16", ".ftz", "illegal-modifier"),
    ("add.sat.bf16x2", ".sat", "illegal-modifier"),
    ("fma.rn.relu.f32.f16", ".relu", "illegal-modifier"),
    ("fma.rn.ftz.f32.bf16", ".ftz", "illegal-modifier"),
    ("add.rz.f16", ".rz", "illegal-rounding"),
    ("fma.rz.f16", ".rz", "illegal-rounding"),
    ("fma.f16", None, "rounding-required"),
    ("fma.f32.bf16", None, "rounding-required"),
    ("fma.rn.sat.relu.f16", None, "illegal-combination"),
    ("fma.rn.oob.sat.bf16", ".sat", "illegal-modifier"),
    ("fma.rn.oob.ftz.f16", None, "illegal-combination"),
    ("fma.rn.rz.bf16", ".rz", "multiple-rounding"),
    ("add.rn.rn.f16", ".rn", "multiple-rounding"),
    ("fma.rn.ftz.ftz.f16", ".ftz", "duplicate-modifier"),
    ("fma.rn.oob.oob.bf16", ".oob", "duplicate-modifier"),
    ("frob.rn.f16", "frob", "unknown-instruction"),
    ("div.rn.f16", ".f16", "not-modeled"),          # div is modeled on the integer types
    ("add.rn.tf32", ".tf32", "unknown-modifier"),   # (add.rn.f64 is modeled: the f64 family)
    ("add.rn.fast.f16", ".fast", "unknown-modifier"),
    ("mul.f32.f16", ".f32.f16", "illegal-type"),
    ("add.rn", None, "missing-type"),
    ("add..f16", None, "syntax"),
])
def test_parse_errors_name_token_and_rule(spelling, token, rule):
    with pytest.raises(SpellingError) as exc:
        ptxfp.parse(spelling)
    assert exc.value.rule == rule
    if token:
        assert exc.value.token == token and token in str(exc.value)
    assert isinstance(exc.value, ValueError)


def test_ftz_bf16_message():
    with pytest.raises(SpellingError, match=r"\.ftz is not allowed with 'add\.bf16'"):
        ptxfp.parse("add.ftz.bf16")


def test_every_table_form_parses_back():
    for s in ptxfp.isa.canonical_spellings():
        assert str(ptxfp.parse(s)) == s


# --- to_bits / from_bits ----------------------------------------------------------------------

def test_f16_roundtrip_matches_numpy():
    bits = np.arange(1 << 16, dtype=np.uint16)
    vals = bits.view(np.float16).astype(np.float64)
    got = ptxfp.from_bits(bits, "f16")
    finite = np.isfinite(vals)
    assert np.array_equal(got[finite], vals[finite])
    assert np.array_equal(ptxfp.to_bits(vals[finite], "f16"), bits[finite])


def test_bf16_roundtrip_and_rounding():
    bits = np.arange(1 << 16, dtype=np.uint16)
    vals = ptxfp.from_bits(bits, "bf16")
    with np.errstate(invalid="ignore"):
        expect = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    finite = np.isfinite(expect)
    assert np.array_equal(vals[finite], expect[finite])
    assert np.array_equal(ptxfp.to_bits(vals[finite], "bf16"), bits[finite])
    # Ties to even, straight from float64 (an f32 step first would double-round).
    assert ptxfp.to_bits(1 + 2**-8, "bf16") == 0x3F80        # tie -> even
    assert ptxfp.to_bits(1 + 3 * 2**-8, "bf16") == 0x3F82     # tie -> even (up)
    assert ptxfp.to_bits(1 + 2**-8 + 2**-40, "bf16") == 0x3F81  # just above the tie
    assert ptxfp.to_bits(float("nan"), "bf16") == ptxfp.POLICY.canonical_nan_bf16


def test_f32_and_packed():
    x = np.array([1.0, -2.5, 3.0e38, 1e-45], dtype=np.float64)
    assert np.array_equal(ptxfp.to_bits(x, "f32"), x.astype(np.float32).view(np.uint32))
    pair = ptxfp.to_bits([1.0, -2.0], "f16x2")
    assert pair == (0xC000 << 16) | 0x3C00                     # lane 0 in bits [15:0]
    assert ptxfp.from_bits(pair, "f16x2").tolist() == [1.0, -2.0]
    arr = ptxfp.to_bits(np.ones((3, 4, 2)), "bf16x2")
    assert arr.shape == (3, 4) and arr.dtype == np.uint32


@pytest.mark.parametrize("call", [
    lambda: ptxfp.to_bits(1.0, "f8"),
    lambda: ptxfp.from_bits(1, "fp16"),
    lambda: ptxfp.to_bits([1.0, 2.0, 3.0], "f16x2"),
    lambda: ptxfp.to_bits("x", "f16"),
])
def test_format_errors(call):
    with pytest.raises(FormatError):
        call()


# --- execute: operands ------------------------------------------------------------------------

def test_scalar_returns_int_and_arrays_broadcast():
    one = 0x3C00
    assert ptxfp.execute("add.f16", one, one) == 0x4000 and isinstance(
        ptxfp.execute("add.f16", one, one), int)
    a = np.full((3, 1), one, dtype=np.uint16)
    b = np.full((1, 4), one, dtype=np.int64)
    out = ptxfp.execute("mul.rn.f16", a, b)
    assert out.shape == (3, 4) and out.dtype == np.uint16 and (out == one).all()
    d = ptxfp.execute("fma.rn.f32.f16", [one, one], one, np.uint32(0x3F800000))
    assert d.dtype == np.uint32 and d.tolist() == [0x40000000, 0x40000000]
    assert ptxfp.execute("add.f16", np.zeros(0, np.uint16), 1).shape == (0,)


def test_mixed_operand_widths():
    # add.f32.f16 d, a, c: a is 16-bit, c is 32-bit.
    assert ptxfp.execute("add.f32.f16", 0x3C00, 0x3F800000) == 0x40000000
    with pytest.raises(OperandError, match=r"operand a .* does not fit in 16 bits"):
        ptxfp.execute("add.f32.f16", 0x3F800000, 0x3F800000)


@pytest.mark.parametrize("args, pattern", [
    (("add.f16", 1), r"takes 2 source operands \(a, b\), got 1"),
    (("fma.rn.f16", 1, 2), r"takes 3 source operands \(a, b, c\), got 2"),
    (("add.f16", 1 << 16, 0), r"operand a .* 0x10000 does not fit in 16 bits"),
    (("add.f16", -1, 0), r"operand a .* negative"),
    (("add.f16x2", 0, 1 << 32), r"operand b .* does not fit in 32 bits"),
    (("add.f16", 1.5, 0), r"operand a .* float"),
    (("add.f16", np.array([1.0]), 0), r"operand a .* float64 values.*np.float16"),
    (("add.f16", np.array([True]), 0), r"operand a .* boolean"),
    (("add.f16", [1, 2], [1, 2, 3]), r"do not broadcast"),
    (("add.f16", np.array([70000]), 0), r"operand a .* 0x11170 does not fit"),
    (("add.f16", 2**70, 0), r"does not fit in 16 bits"),
    (("add.f16", "0x3c00", 0), r"operand a"),
])
def test_operand_errors(args, pattern):
    with pytest.raises(OperandError, match=pattern):
        ptxfp.execute(*args)


def test_errors_are_one_hierarchy():
    for exc in (SpellingError, OperandError, FormatError):
        assert issubclass(exc, PtxfpError) and issubclass(exc, ValueError)


# --- execute(..., out=) -------------------------------------------------------------------

def _f16(x):
    return np.asarray(x, np.float16).view(np.uint16)


def test_out_receives_the_result():
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    a, b = _f16(x), _f16(y)
    out = np.full(a.shape, 0xABCD, np.uint16)
    r = ptxfp.execute("add.rn.f16", a, b, out=out)
    assert r is out
    # NumPy's float16 add rounds once to nearest-even, as add.rn.f16 does (finite inputs)
    expect = (a.view(np.float16) + b.view(np.float16)).view(np.uint16)
    assert np.array_equal(out, expect)


def test_out_may_be_an_operand_and_other_overlap_is_safe():
    a = _f16(np.arange(1, 9, dtype=np.float64))
    b = _f16(np.full(8, 0.5))
    expect = _f16(np.arange(1, 9) + 0.5)
    x = a.copy()
    ptxfp.execute("add.rn.f16", x, b, out=x)
    assert np.array_equal(x, expect)
    # out overlapping an operand shifted by one element: the operand is read as it was
    buf = np.concatenate([a, _f16([0.0])])
    ptxfp.execute("add.rn.f16", buf[:8], b, out=buf[1:])
    assert np.array_equal(buf[1:], expect)


def test_out_packed_broadcast_and_scalar_operands():
    one = int(_f16(1.0)[()])
    two = int(_f16(2.0)[()])
    packed = np.full((3, 2), one | (two << 16), np.uint32)
    out = np.zeros((3, 2), np.uint32)
    ptxfp.execute("mul.rn.f16x2", packed, two | (two << 16), out=out)
    four = int(_f16(4.0)[()])
    assert (out == (two | (four << 16))).all()


@pytest.mark.parametrize("out, message", [
    (np.empty(4, np.uint32), "dtype must be uint16"),
    (np.empty(5, np.uint16), "shape must be"),
    (np.empty(8, np.uint16)[::2], "C-contiguous"),
    ([0, 0, 0, 0], "must be a NumPy array"),
])
def test_out_errors(out, message):
    a = np.zeros(4, np.uint16)
    with pytest.raises(OperandError, match=message):
        ptxfp.execute("add.rn.f16", a, a, out=out)


def test_out_read_only_is_refused():
    a = np.zeros(4, np.uint16)
    ro = np.zeros(4, np.uint16)
    ro.setflags(write=False)
    with pytest.raises(OperandError, match="writeable"):
        ptxfp.execute("add.rn.f16", a, a, out=ro)


# --- the policy object ---------------------------------------------------------------------------

def test_policy_fields_are_one_switch_per_question():
    names = [f.name for f in dataclasses.fields(ptxfp.Policy)]
    assert names[:3] == ["canonical_nan_f16", "canonical_nan_bf16", "canonical_nan_f32"]
    assert "canonical_nan16" not in names and "canonical_nan32" not in names
    p = ptxfp.Policy()
    assert (p.canonical_nan_f16, p.canonical_nan_bf16, p.canonical_nan_f32) == \
        (0x7FFF, 0x7FFF, 0x7FFFFFFF)
    assert ptxfp.policy.TININESS == ("after_rounding", "before_rounding",
                                     "after_rounding_unbounded")
    for t in ptxfp.policy.TININESS:
        assert ptxfp.Policy(ftz_tininess=t).ftz_tininess == t
    with pytest.raises(ValueError, match="after_rounding_unbounded"):
        ptxfp.Policy(ftz_tininess="ieee")
    assert ptxfp.policy.WIDEN_NAN == ("canonical", "payload", "quiet")
    for w in ptxfp.policy.WIDEN_NAN:
        assert ptxfp.Policy(widen_nan=w).widen_nan == w
    with pytest.raises(ValueError, match="'quiet'"):
        ptxfp.Policy(widen_nan="ieee")
    with pytest.raises(ValueError, match="widen_nan"):
        with ptxfp.policy.using(widen_nan="quieted"):
            pass


def test_policy_nan_shorthands_and_per_format_fields():
    with ptxfp.policy.using(canonical_nan16=0x7FC0, canonical_nan32=0x7FC00000) as p:
        assert (p.canonical_nan_f16, p.canonical_nan_bf16, p.canonical_nan_f32) == \
            (0x7FC0, 0x7FC0, 0x7FC00000)            # 0x7FC0: a NaN in both 16-bit formats
        assert p.canonical_nan16 == 0x7FC0 and p.canonical_nan32 == 0x7FC00000
    with ptxfp.policy.using(canonical_nan16=0x7E00, canonical_nan_bf16=0x7FC0) as p:
        assert (p.canonical_nan_f16, p.canonical_nan_bf16) == (0x7E00, 0x7FC0)  # field wins
        with pytest.raises(ValueError, match="ambiguous"):
            p.canonical_nan16
    assert ptxfp.POLICY.canonical_nan16 == 0x7FFF                             # restored
    # to_bits: NaN becomes the canonical NaN of the format asked for (NumPy gives NaN here)
    nan = float("nan")
    with ptxfp.policy.using(canonical_nan_bf16=0x7FC0):
        assert [ptxfp.to_bits(nan, f) for f in ("f16", "bf16", "f32")] == \
            [0x7FFF, 0x7FC0, 0x7FFFFFFF]
        assert ptxfp.to_bits([nan, 1.0], "bf16x2") == 0x3F807FC0
        assert ptxfp.to_bits([nan, 1.0], "f16x2") == 0x3C007FFF
    with ptxfp.policy.using(canonical_nan_f16=0x7E00):
        assert [ptxfp.to_bits(nan, f) for f in ("f16", "bf16")] == [0x7E00, 0x7FFF]
