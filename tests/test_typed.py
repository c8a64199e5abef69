"""Typed float operands: np.float16 / ml_dtypes.bfloat16 / np.float32 arrays (and torch
tensors) in, the destination's float dtype out.

Expected values come from NumPy's float16 arithmetic and ml_dtypes' bfloat16 (both round an
exact-in-float32 result once, which for add/sub/mul of f16/bf16 is one correct rounding), from
ml_dtypes' own casts, and from the MPFR oracle (tests/oracle.py); never from ptxfp.
"""

import ml_dtypes
import numpy as np
import pytest

import ptxfp
from ptxfp import OperandError

BF16 = ml_dtypes.bfloat16


def finite(rng, n, dtype, scale=4.0):
    return (rng.standard_normal(n) * scale).astype(dtype)


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(
        x.view(f"u{x.dtype.itemsize}"), y.view(f"u{y.dtype.itemsize}"))


def test_f16_add_and_mul_match_numpy(rng):
    x, y = finite(rng, 5000, np.float16, 100), finite(rng, 5000, np.float16, 100)
    with np.errstate(over="ignore"):
        assert same_bits(ptxfp.execute("add.rn.f16", x, y), x + y)
        assert same_bits(ptxfp.execute("mul.rn.f16", x, y), x * y)
        assert same_bits(ptxfp.execute("sub.f16", x, y), x - y)


def test_bf16_mul_matches_ml_dtypes(rng):
    x, y = finite(rng, 5000, BF16), finite(rng, 5000, BF16)
    expect = (x.astype(np.float32) * y.astype(np.float32)).astype(BF16)
    assert same_bits(ptxfp.execute("mul.rn.bf16", x, y), expect)
    assert same_bits(ptxfp.execute("add.bf16", x, y), x + y)


def test_mixed_fma_against_mpfr(rng, oracle):
    a, b = finite(rng, 2000, BF16), finite(rng, 2000, BF16)
    c = finite(rng, 2000, np.float32)
    d = ptxfp.execute("fma.rn.f32.bf16", a, b, c)
    assert d.dtype == np.float32 and d.shape == (2000,)
    expect = oracle.compute_array("fma.rn.f32.bf16", a.view(np.uint16), b.view(np.uint16),
                                  c.view(np.uint32))
    assert np.array_equal(d.view(np.uint32), expect)


def test_the_double_rounding_witness_typed():
    # 1.015625 * 1.25 + 2**-133 (bf16 0x3F82, 0x3FA0, 0x0001): one rounding gives 1.2734375
    a, b = np.array([1.015625], BF16), np.array([1.25], BF16)
    c = np.array([0x0001], np.uint16).view(BF16)
    assert ptxfp.execute("fma.rn.bf16", a, b, c).astype(np.float64).tolist() == [1.2734375]


def test_packed_lanes_are_the_last_axis_lane_0_first(rng):
    x, y = finite(rng, (300, 2), np.float16), finite(rng, (300, 2), np.float16)
    d = ptxfp.execute("add.rn.f16x2", x, y)
    assert d.dtype == np.float16 and d.shape == (300, 2)
    assert same_bits(d, x + y)
    # lane 0 is bits [15:0] of the packed register: [1.0, 2.0] is 0x4000_3C00
    one_two = np.array([1.0, 2.0], np.float16)
    assert ptxfp.execute("fma.rn.f16x2", one_two, one_two, 0).tolist() == [1.0, 4.0]
    assert ptxfp.execute("add.rn.f16x2", one_two, 0x3C003C00).tolist() == [2.0, 3.0]
    z = finite(rng, (4, 3, 2), BF16)
    assert same_bits(ptxfp.execute("mul.rn.bf16x2", z, z),
                     (z.astype(np.float32) ** 2).astype(BF16))


def test_scalars_ints_and_mixtures():
    h = np.float16
    r = ptxfp.execute("add.rn.f16", h(1.5), h(2.0))
    assert type(r) is np.float16 and r == 3.5
    # ints and integer arrays keep the bits contract
    assert ptxfp.execute("add.rn.f16", 0x3E00, 0x4000) == 0x4300
    assert ptxfp.execute("add.rn.f16", np.array([0x3E00], np.uint16), 0x4000).dtype == np.uint16
    # one typed operand makes the result typed; ints next to it are still bits
    r = ptxfp.execute("fma.rn.f16", np.array([2.0], h), 0x4000, np.uint16(0x3C00))
    assert r.dtype == np.float16 and r.tolist() == [5.0]
    # broadcasting as for bits
    r = ptxfp.execute("mul.rn.bf16", np.ones((3, 1), BF16), np.arange(4).astype(BF16))
    assert r.shape == (3, 4) and r.dtype == BF16
    assert ptxfp.execute("add.f16", np.zeros(0, h), h(1)).shape == (0,)
    # non-contiguous views are read as they are
    big = np.arange(20).astype(h)
    assert same_bits(ptxfp.execute("add.rn.f16", big[::3], big[1::3]), big[::3] + big[1::3])


def test_convert_typed(rng):
    x = np.concatenate([finite(rng, 3000, np.float32, 1e3),
                        np.array([3.4e38, -3.4e38, 1e-40, np.inf], np.float32)])
    assert same_bits(ptxfp.convert("cvt.rn.bf16.f32", x), x.astype(BF16))
    with np.errstate(over="ignore"):
        assert same_bits(ptxfp.convert("cvt.rn.f16.f32", x), x.astype(np.float16))
    h = finite(rng, 100, np.float16)
    assert same_bits(ptxfp.convert("cvt.f32.f16", h), h.astype(np.float32))
    assert same_bits(ptxfp.convert("cvt.f32.bf16", h.astype(BF16)),
                     h.astype(BF16).astype(np.float32))
    # packed: a goes to d[31:16] (lane 1), b to d[15:0] (lane 0)
    a, b = x[:100], x[100:200]
    d = ptxfp.convert("cvt.rn.bf16x2.f32", a, b)
    assert d.shape == (100, 2) and same_bits(d[:, 0], b.astype(BF16)) \
        and same_bits(d[:, 1], a.astype(BF16))
    r = ptxfp.convert("cvt.rn.f16.f32", np.float32(1.0))
    assert type(r) is np.float16 and r == 1.0
    assert ptxfp.convert("cvt.rn.f16.f32", 0x3F800000) == 0x3C00


def test_out_typed():
    x = np.array([1.0, 2.0, 3.0], np.float16)
    out = np.empty(3, np.float16)
    assert ptxfp.execute("add.rn.f16", x, x, out=out) is out and out.tolist() == [2, 4, 6]
    assert ptxfp.execute("add.rn.f16", x, x, out=x) is x and x.tolist() == [2, 4, 6]
    p = np.array([[1.0, 2.0], [3.0, 4.0]], BF16)
    pout = np.empty((2, 2), BF16)
    assert ptxfp.execute("add.bf16x2", p, p, out=pout) is pout
    assert pout.astype(float).tolist() == [[2, 4], [6, 8]]
    f = np.empty(2, np.float32)
    assert ptxfp.convert("cvt.f32.bf16", p[0], out=f) is f and f.tolist() == [1.0, 2.0]
    with pytest.raises(OperandError, match=r"typed floats.*np.float16"):
        ptxfp.execute("add.rn.f16", x, x, out=np.empty(3, np.uint16))
    with pytest.raises(OperandError, match="dtype must be float16"):
        ptxfp.execute("add.rn.f16", x, x, out=np.empty(3, np.float32))
    with pytest.raises(OperandError, match=r"shape .*\(2, 2\)"):
        ptxfp.execute("add.bf16x2", p, p, out=np.empty(2, BF16))


@pytest.mark.parametrize("spelling, operand, pattern", [
    ("add.rn.f16", np.ones(2, np.float32),
     r"got float32 values; a \.f16 operand takes np\.float16 values or uint16 bit patterns.*"
     r"x\.astype\(np\.float16\)"),
    ("add.rn.f16", np.ones(2, BF16),
     r"got bfloat16 values.*np\.float16.*x\.view\(np\.uint16\)"),
    ("add.rn.bf16", np.ones(2, np.float16),
     r"got float16 values.*ml_dtypes\.bfloat16.*x\.astype\(ml_dtypes\.bfloat16\).*"
     r"x\.view\(np\.uint16\)"),
    ("add.rn.bf16", np.ones(2), r"got float64 values.*ml_dtypes\.bfloat16.*to_bits"),
    ("add.rn.f16", np.float64(1.0), r"got float64 values"),
    ("add.rn.f16", 1.5, r"Python float 1\.5.*np\.float16\(1\.5\).*to_bits\(1\.5, 'f16'\)"),
    ("add.rn.f16", [1.0, 2.0], r"got float64 values; a \.f16 operand takes np\.float16"),
    ("add.rn.f16x2", np.ones(3, np.float16), r"shape \(\.\.\., 2\), lane 0 first; got shape"),
    ("add.rn.f16", np.ones(2, np.dtype(">f2")), r"non-native byte order"),
    ("add.rn.f16", np.ones(2, ml_dtypes.float8_e4m3fn), r"got float8_e4m3fn values"),
])
def test_wrong_float_operands_say_how_to_fix(spelling, operand, pattern):
    with pytest.raises(OperandError, match=pattern):
        ptxfp.execute(spelling, operand, 0)


def test_mixed_form_checks_each_operand_format():
    a = np.ones(2, BF16)
    with pytest.raises(OperandError, match=r"operand c .*\.f32.*got bfloat16"):
        ptxfp.execute("add.f32.bf16", a, a)
    assert ptxfp.execute("add.f32.bf16", a, np.ones(2, np.float32)).tolist() == [2.0, 2.0]
    with pytest.raises(OperandError, match=r"operand a of 'cvt.rn.f16.f32' \(\.f32\).*float16"):
        ptxfp.convert("cvt.rn.f16.f32", np.ones(2, np.float16))


# --- torch ------------------------------------------------------------------------------------

def test_torch_tensors():
    torch = pytest.importorskip("torch")
    from ptxfp.ops.arith import read_operand
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
    bits, typed = read_operand(t, "bf16", "a")
    assert typed and bits.__array_interface__["data"][0] == t.data_ptr()    # no copy
    r = ptxfp.execute("mul.rn.bf16", t, t)
    assert r.dtype == BF16 and r.astype(float).tolist() == [1.0, 4.0, 9.0]
    h = torch.tensor([0.5, 1.5], dtype=torch.float16, requires_grad=True)
    assert ptxfp.execute("add.rn.f16", h, h).tolist() == [1.0, 3.0]
    f = torch.tensor([1.0, 2.0], dtype=torch.float32)
    assert ptxfp.convert("cvt.rn.bf16.f32", f).dtype == BF16
    assert ptxfp.execute("add.f16", torch.tensor([0x3C00], dtype=torch.int32), 0x3C00).tolist() \
        == [0x4000]
    with pytest.raises(OperandError, match=r"got float32 values.*np\.float16"):
        ptxfp.execute("add.rn.f16", f, f)
    with pytest.raises(OperandError, match="got float64 values"):
        ptxfp.execute("add.rn.f16", torch.ones(2, dtype=torch.float64), 0)
