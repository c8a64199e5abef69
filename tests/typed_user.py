"""A user's script, type-checked by ``mypy --strict`` in tests/test_typing.py (and run there, so
that what mypy accepts also works)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

import ptxfp
from ptxfp import policy


def dot_bf16(x: NDArray[np.float32], y: NDArray[np.float32]) -> float:
    """A bf16 dot product accumulated in f32 with fma.rn.f32.bf16."""
    a = x.astype(ml_dtypes.bfloat16)
    b = y.astype(ml_dtypes.bfloat16)
    acc = np.zeros((), np.float32)
    for i in range(a.size):
        acc = ptxfp.execute("fma.rn.f32.bf16", a[i], b[i], acc)
    return float(acc)


def bits_api() -> list[int]:
    one: int = ptxfp.execute("fma.rn.bf16", 0x3F82, 0x3FA0, 0x0001)
    ins: ptxfp.Instruction = ptxfp.parse("fma.rz.sat.f32.f16.sat")
    fmts: tuple[str, ...] = ins.operand_formats
    bits = ptxfp.to_bits(np.linspace(-2.0, 2.0, 5), "bf16")
    back = ptxfp.from_bits(bits, "bf16")
    half: int = ptxfp.convert("cvt.rn.f16.f32", 0x3F800000)
    return [one, len(fmts), int(np.size(back)), half]


def checks() -> tuple[bool, int]:
    report: ptxfp.Report = ptxfp.check("add.ftz.bf16 %rs1, %rs2, %rs3;", target="sm_90")
    diag: ptxfp.Diagnostic
    for diag in report.errors:
        assert diag.rule and diag.message
    return report.ok, len(report)


def runs() -> object:
    result = ptxfp.run(".reg .b16 a, b, d;\nadd.rn.f16 d, a, b;", {"a": [0x3C00], "b": 0x3C00})
    return result["d"]


def policies() -> int:
    with policy.using(canonical_nan_bf16=0x7FC0) as pol:
        nan: int = pol.canonical_nan("bf16")
        assert ptxfp.POLICY.canonical_nan_bf16 == nan
    return nan


def errors() -> str:
    try:
        ptxfp.execute("add.ftz.bf16", 1, 2)
    except ptxfp.SpellingError as e:
        return f"{e.token} {e.rule}"
    return ""


if __name__ == "__main__":
    x = np.linspace(0.1, 1.0, 8).astype(np.float32)
    print(dot_bf16(x, x), bits_api(), checks(), runs(), policies(), errors())
