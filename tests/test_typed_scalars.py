"""The one-typed-scalar path of execute (issue #26 item 5): np.float16 / bfloat16 / float32
scalars go straight to the kernel through float views of the scalar buffers.  It must give the
bits the general path gives (NaN payloads, signalling NaNs and signed zeros untouched) and the
same scalar type, and hand anything else to the general path."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptxfp
from ptxfp.ops.arith import _form

F = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
U = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32}


def _typed(bits, fmt):
    return U[fmt](bits).view(F[fmt])


@pytest.mark.parametrize("spelling", ["add.rn.f16", "fma.rn.bf16", "mul.rn.ftz.sat.f16",
                                      "fma.rn.f32.bf16", "add.rm.f32.f16"])
def test_typed_scalars_take_the_fast_path_and_agree_with_bits(spelling):
    form = _form(spelling)
    fmts = form.fmts
    rng = np.random.default_rng(26)
    specials = {"f16": [0x7C01, 0xFE00, 0x8000, 0x0001, 0x7BFF],
                "bf16": [0x7F81, 0xFFC1, 0x8000, 0x0001, 0x7F7F],
                "f32": [0x7F800001, 0xFFA00001, 0x80000000, 0x00000001, 0x7F7FFFFF]}
    for k in range(300):
        bits = [int(specials[f][k % 5]) if k < 25 else
                int(rng.integers(0, 1 << (32 if f == "f32" else 16))) for f in fmts]
        typed = [_typed(b, f) for b, f in zip(bits, fmts)]
        assert form.typed_scalar(tuple(typed)) is not None
        want = ptxfp.execute(spelling, *bits)
        got = ptxfp.execute(spelling, *typed)
        rf = form.ins.dtype
        assert type(got) is F[rf]
        assert int(np.asarray(got).view(U[rf])) == want, (spelling, [hex(b) for b in bits])


def test_other_operands_leave_the_fast_path():
    form = _form("add.rn.f16")
    h = np.float16(1)
    assert form.typed_scalar((h, 0x3C00)) is None            # a mixture: the general path
    assert form.typed_scalar((h, np.float32(1))) is None      # wrong dtype: general path's error
    assert ptxfp.execute("add.rn.f16", h, 0x3C00) == np.float16(2)
    with pytest.raises(ptxfp.OperandError, match="float32"):
        ptxfp.execute("add.rn.f16", h, np.float32(1))
    assert _form("add.rn.f16x2").typed_scalar((h, h)) is None  # packed: arrays of (..., 2)
