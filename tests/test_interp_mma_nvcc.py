"""An sm_80 GEMM compiled by nvcc runs in ptxfp.run bit-exact: tests/data/kernels/mma_sm80.cu
(the CuTe sm80 pattern written with inline PTX: two-stage cp.async.cg global -> shared through
cvta'd shared addresses, ldmatrix.x4 and ldmatrix.x4.trans, mma.sync m16n8k16 with f32 and with
f16 accumulation), PTX made by tools/mma_sm80_ptx.py (nvcc 13.0 -arch=sm_80 -O3 -ptx).

Each result bit-equals ptxfp.matmul with the instruction the kernel issues and its K order
(k16 steps in increasing k, C = 0), whose numerics tests/test_tensor*.py hold to MMA-Sim and
recorded GPU answers, and agrees with the float64 product within the model's bound."""

from pathlib import Path

import numpy as np
import pytest

import ptxfp

PTX = (Path(__file__).parent / "data" / "kernels" / "mma_sm80.ptx").read_text()

FORMS = {"f32acc": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
         "f16acc": "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"}


def _run(kind, A, B):
    M, K = A.shape
    N = B.shape[1]
    out_t = np.float32 if kind == "f32acc" else np.float16
    a0, b0 = 0, A.nbytes
    d0 = b0 + B.nbytes
    mem = np.zeros(d0 + M * N * np.dtype(out_t).itemsize, np.uint8)
    mem[a0:b0] = np.frombuffer(A.tobytes(), np.uint8)
    mem[b0:d0] = np.frombuffer(B.tobytes(), np.uint8)
    name = f"mma_{kind}"
    args = {f"{name}_param_{i}": v for i, v in enumerate((a0, b0, d0, M, N, K))}
    r = ptxfp.run(PTX, args, memory=mem, entry=name, grid=(N // 32, M // 32), block=128)
    return np.frombuffer(r["__memory__"][d0:].tobytes(), out_t).reshape(M, N)


@pytest.mark.parametrize("kind", ["f32acc", "f16acc"])
def test_nvcc_sm80_gemm_is_ptxfp_matmul(kind):
    rng = np.random.default_rng(80)
    M, N, K = 64, 64, 64
    A = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-3, 4, (M, K)))).astype(np.float16)
    B = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-3, 4, (K, N)))).astype(np.float16)
    D = _run(kind, A, B)
    want = np.asarray(ptxfp.matmul(A, B, instruction=FORMS[kind], target="sm_80"), D.dtype)
    bits = np.uint32 if D.dtype == np.float32 else np.uint16
    assert np.array_equal(D.view(bits), want.view(bits))
    exact = A.astype(np.float64) @ B.astype(np.float64)
    mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    steps = K // 16
    if kind == "f32acc":             # 24 fraction bits kept in a step, truncation, each step
        bound = mag * steps * 2.0 ** -22
    else:                            # each step rounds to f16 (2**-11), subnormals 2**-24
        bound = mag * steps * 2.0 ** -10 + steps * 2.0 ** -24
    assert (np.abs(D.astype(np.float64) - exact) <= bound).all()
    # the comparison tells K orders apart: the reversed order gives other bits
    rev = np.asarray(ptxfp.matmul(A[:, ::-1].copy(), B[::-1].copy(), instruction=FORMS[kind],
                                  target="sm_80"), D.dtype)
    assert not np.array_equal(rev.view(bits), D.view(bits))


def test_nvcc_sm80_gemm_keeps_its_launch_bounds():
    """__launch_bounds__(128) is .maxntid 128: a 256-thread block is refused in one line."""
    with pytest.raises(ptxfp.errors.OperandError, match=r"\.maxntid 128") as e:
        ptxfp.run(PTX, {f"mma_f32acc_param_{i}": 0 for i in range(6)}, memory=bytes(64),
                  entry="mma_f32acc", block=256)
    assert "\n" not in str(e.value)
