"""The type table (ptxfp.core.types) against an independent source: ml_dtypes' own formats
(ml_dtypes.finfo and its casts), NumPy's float16/float32/float64, and the PTX manual's widths."""

import math

import ml_dtypes
import numpy as np
import pytest

from ptxfp.core import types as T

WITH_DTYPE = [f for f in T.FORMATS.values() if f.dtype_name]


def _dtype(fmt):
    return np.dtype(getattr(ml_dtypes, fmt.dtype_name, None) or getattr(np, fmt.dtype_name))


@pytest.mark.parametrize("fmt", WITH_DTYPE, ids=lambda f: f.name)
def test_format_facts_are_ml_dtypes(fmt):
    dt = _dtype(fmt)
    fi = ml_dtypes.finfo(dt) if dt.type.__module__.startswith("ml_dtypes") else np.finfo(dt)
    assert fi.nmant == fmt.man_bits
    assert fi.nexp == fmt.exp_bits
    assert fi.bits == fmt.width
    assert float(fi.max) == fmt.value(fmt.max_finite)
    assert float(fi.smallest_normal) == 2.0 ** fmt.emin
    assert float(fi.maxexp) == fmt.emax + 1
    assert float(fi.minexp) == fmt.emin
    if fmt.subnormals:
        assert float(fi.smallest_subnormal) == 2.0 ** (fmt.emin - fmt.man_bits)


@pytest.mark.parametrize("fmt", WITH_DTYPE, ids=lambda f: f.name)
def test_every_encoding_decodes_as_ml_dtypes(fmt):
    """Every bit pattern: value, NaN and infinity as the dtype's own cast to float64 reads it."""
    if fmt.width > 16:
        n = 1 << 16
        bits = np.random.default_rng(1).integers(0, 1 << fmt.width, n, dtype=np.uint64)
        bits[:4] = [fmt.max_finite, fmt.inf, fmt.inf | fmt.sign_bit, fmt.exp_mask + 1]
    else:
        bits = np.arange(1 << fmt.width, dtype=np.uint64)
    dt = _dtype(fmt)
    store = np.dtype(f"uint{dt.itemsize * 8}")
    with np.errstate(invalid="ignore"):
        ref = bits.astype(store).view(dt).astype(np.float64)
    for b, r in zip(bits.tolist(), ref.tolist()):
        got = fmt.value(b)
        if math.isnan(r):
            assert math.isnan(got), (fmt.name, hex(b))
        else:
            assert got == r and math.copysign(1, got) == math.copysign(1, r), (fmt.name, hex(b))


@pytest.mark.parametrize("fmt", WITH_DTYPE, ids=lambda f: f.name)
def test_inf_nan_and_overflow_facts(fmt):
    dt = _dtype(fmt)
    store = np.dtype(f"uint{dt.itemsize * 8}")
    big = np.array([fmt.value(fmt.max_finite) * 4], np.float64)
    if fmt.width > 16:
        return                                         # IEEE: NumPy's own formats
    with np.errstate(over="ignore", invalid="ignore"):
        over = big.astype(dt).view(store)[0]
        inf = np.array([np.inf]).astype(dt).astype(np.float64)[0]
    assert np.isinf(inf) == fmt.has_inf
    # what ml_dtypes' round-to-nearest cast makes of an overflow (e2m1 & co saturate)
    expect = {T.OVERFLOW_INF: fmt.inf, T.OVERFLOW_NAN: fmt.nan,
              T.OVERFLOW_SATURATE: fmt.max_finite}[fmt.overflow]
    assert int(over) & ~fmt.sign_bit == expect, (fmt.name, hex(int(over)))


def test_manual_encodings():
    # PTX ISA 5.2.5 and the OCP MX spec: e4m3 has one NaN magnitude, S.1111.111; e2m1, e2m3,
    # e3m2 have neither inf nor NaN; ue8m0's NaN is 0xFF; e5m2 is IEEE-like
    assert T.E4M3.nan == 0x7F and T.E4M3.is_nan(0xFF) and T.E4M3.inf is None
    assert T.E4M3.max_finite == 0x7E
    assert T.E2M1.nan is None and T.E2M1.inf is None and T.E2M1.value(0x7) == 6.0
    assert T.E2M3.value(T.E2M3.max_finite) == 7.5 and T.E3M2.value(T.E3M2.max_finite) == 28.0
    assert T.UE8M0.nan == 0xFF and T.UE8M0.value(0) == 2.0 ** -127
    assert T.E5M2.inf == 0x7C and T.E5M2.value(T.E5M2.max_finite) == 57344.0
    assert T.F16.max_finite == 0x7BFF and T.BF16.max_finite == 0x7F7F


def test_types_widths_and_lanes():
    for name, w, lanes in [("f16", 16, 1), ("f16x2", 32, 2), ("bf16x2", 32, 2), ("f32", 32, 1),
                           ("e4m3x2", 16, 2), ("e2m1x2", 8, 2), ("e2m3x2", 16, 2),
                           ("e4m3x4", 32, 4), ("e2m1x4", 16, 4), ("ue8m0x2", 16, 2)]:
        t = T.get(name)
        assert (t.width, t.lanes) == (w, lanes), name
        assert t.container >= t.fmt.width
    assert T.HALF_TYPES == ("f16", "f16x2", "bf16", "bf16x2")
    for t in T.TYPES.values():
        assert t.registers, t.name
        assert t.kind in (T.FLOAT, T.INT, T.BITS, T.PRED)


def test_float_dtypes_agree():
    from ptxfp.core import formats
    for f in (T.F16, T.BF16, T.F32):
        assert formats.float_dtype(f.name) == _dtype(f)


FLOAT_TYPES = [n for n, t in T.TYPES.items() if t.fmt is not None]


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_bits_in_the_tables_dtype_are_read_without_a_copy(name):
    # An operand array already in its type's dtype (the table's, not one worked out from the
    # width) is the kernels' input as it is: a widening copy (e2m1x2 bits went to uint64) cost
    # more than the conversion itself.
    from ptxfp.core.operands import read_operand
    a = np.arange(7).astype(T.TYPES[name].dtype_name)
    got, typed = read_operand(a, name, "x")
    assert got is a and not typed
    got, _ = read_operand(a.astype(np.int64), name, "x")
    assert got.dtype == a.dtype and (got == a).all()
