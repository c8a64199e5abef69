"""Packed forms: each lane of an .f16x2/.bf16x2 result is the scalar form applied to that lane
(lane 0 = bits [15:0], lane 1 = bits [31:16]), with .ftz/.sat/.relu/.oob tested per lane."""

import numpy as np
import pytest

import ptxfp
import vectors as V
from ptxfp import policy
from ptxfp.isa.arith import undocumented_bf16_fma

#: the packed half forms (.f32x2 lanes are 32-bit: tests/test_minmax_f32.py checks them)
PACKED = [s for s in ptxfp.isa.canonical_spellings() if s.endswith(("f16x2", "bf16x2"))]


def scalar_of(spelling):
    """The scalar form each lane of a packed form computes: the spelling without x2, but .rn
    for the undocumented fma.{rz,rm,rp}...bf16x2 under the default policy (ptxas 13.0 drops
    their mode on .bf16x2, while it computes the scalar spellings in f16: both measured on an
    H100, tests/test_gpu_recorded.py)."""
    ins = ptxfp.parse(spelling)
    scalar = spelling[: -len("x2")]
    if (undocumented_bf16_fma(ins.opcode, ins.rounding, ins.types)
            and ptxfp.POLICY.value("bf16_fma_directed", str(ins)) == "as_compiled"):
        scalar = scalar.replace(f"fma.{ins.rounding}.", "fma.rn.", 1)
    return scalar


def _lanes(x):
    x = np.asarray(x).astype(np.uint32)
    return (x & 0xFFFF).astype(np.uint16), (x >> 16).astype(np.uint16)


def _specials_mixed(ins, fmt, rng, n=6000):
    """Both lanes drawn from the special values (and random bits), independently."""
    s = V.specials(fmt)
    arity = len(ins.operand_names)
    cols = []
    for _ in range(arity):
        lo = np.where(rng.random(n) < 0.7, rng.choice(s, n), rng.integers(0, 1 << 16, n))
        hi = np.where(rng.random(n) < 0.7, rng.choice(s, n), rng.integers(0, 1 << 16, n))
        cols.append((lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)))
    return tuple(cols)


def test_packed_forms_listed():
    assert len(PACKED) >= 19
    for s in PACKED:
        assert scalar_of(s) in ptxfp.isa.canonical_spellings()


@pytest.mark.parametrize("spelling", PACKED)
def test_each_lane_is_the_scalar_form(spelling, rng, check):
    ins = ptxfp.parse(spelling)
    scalar = scalar_of(spelling)
    for ops in (V.for_instruction(ins), _specials_mixed(ins, V.FORMATS[ins.lane_format], rng)):
        got = ptxfp.execute(spelling, *ops)
        assert got.dtype == np.uint32
        got_lo, got_hi = _lanes(got)
        lanes = list(zip(*(_lanes(x) for x in ops)))
        check(f"{spelling} lane 0 vs {scalar}", lanes[0], got_lo, ptxfp.execute(scalar, *lanes[0]))
        check(f"{spelling} lane 1 vs {scalar}", lanes[1], got_hi, ptxfp.execute(scalar, *lanes[1]))


@pytest.mark.parametrize("spelling", PACKED)
def test_lanes_do_not_leak(spelling):
    """A NaN, an infinity or an OOB-NaN in one lane leaves the other lane's result alone."""
    ins = ptxfp.parse(spelling)
    one = 0x3C00 if ins.lane_format == "f16" else 0x3F80
    arity = len(ins.operand_names)
    base = ptxfp.execute(scalar_of(spelling), *([one] * arity))
    for poison in (0x7FF7, 0xFFF7, 0x7FFF, 0x7C00 if ins.lane_format == "f16" else 0x7F80, 0x0001):
        for k in range(arity):
            for lane in (0, 1):
                ops = [one | one << 16] * arity
                ops[k] = (one << 16 | poison) if lane == 0 else (poison << 16 | one)
                r = ptxfp.execute(spelling, *ops)
                other = (r >> 16) if lane == 0 else (r & 0xFFFF)
                assert other == base, (spelling, hex(poison), k, lane, hex(r))


@pytest.mark.parametrize("spelling", ["fma.rm.bf16x2", "fma.rz.oob.relu.bf16x2"])
def test_directed_bf16x2_lanes_as_spelled(spelling, rng, check):
    """bf16_fma_directed="as_spelled": each lane is the scalar spelling in the named mode."""
    with policy.using(bf16_fma_directed="as_spelled"):
        assert scalar_of(spelling) == spelling[:-2]
        test_each_lane_is_the_scalar_form(spelling, rng, check)
