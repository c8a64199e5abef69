"""A CuTe sm_80 GEMM compiled by nvcc runs in ptxfp.run bit-exact: tests/data/kernels/
cute_gemm_sm80.cu (CuTe's sm80 tutorial pattern: SM80_CP_ASYNC_CACHEGLOBAL copy atoms into a
swizzled two-stage shared tile, SM75_U32x4_LDSM_N retiled to the MMA fragments, a 2x2-warp
TiledMMA of SM80_16x8x16_F32BF16BF16F32_TN / SM80_16x8x16_F16F16F16F16_TN), PTX made by
tools/cute_gemm_sm80.py (nvcc 13.0 -arch=sm_80 -O3, the nvidia-cutlass 4.2 headers).

Each result bit-equals ptxfp.matmul with the instruction the kernel issues and its K order
(k16 steps in increasing k, C = 0), whose numerics tests/test_tensor*.py hold to MMA-Sim and
recorded GPU answers; it agrees with the float64 product within the model's bound, and the
reversed K order gives other bits (the comparison tells orders apart)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxfp

PTX = (Path(__file__).parent / "data" / "kernels" / "cute_gemm_sm80.ptx").read_text()

#: entry -> (input dtype, output dtype, the mma.sync it issues)
KERNELS = {"cute_gemm_bf16": (ml_dtypes.bfloat16, np.float32,
                              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
           "cute_gemm_f16": (np.float16, np.float16,
                             "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16")}


def _run(name, A, B):
    """C = A @ B.T with A: M x K and B: N x K (K-major), on 64 x 64 CTA tiles of 128 threads."""
    out_t = KERNELS[name][1]
    M, K = A.shape
    N = B.shape[0]
    b0 = A.nbytes
    c0 = b0 + B.nbytes
    mem = np.zeros(c0 + M * N * np.dtype(out_t).itemsize, np.uint8)
    mem[:b0] = np.frombuffer(A.tobytes(), np.uint8)
    mem[b0:c0] = np.frombuffer(B.tobytes(), np.uint8)
    args = {f"{name}_param_{i}": v for i, v in enumerate((0, b0, c0, M, N, K))}
    r = ptxfp.run(PTX, args, memory=mem, entry=name, grid=(M // 64, N // 64), block=128)
    return np.frombuffer(r["__memory__"][c0:].tobytes(), out_t).reshape(M, N)


def test_the_module_is_cute_sm80_data_path():
    for spelling in ("cp.async.cg.shared.global.L2::128B", "cp.async.wait_group 1",
                     "ldmatrix.sync.aligned.x4.m8n8.shared.b16", *(f for *_, f in
                                                                   KERNELS.values())):
        assert spelling in PTX, spelling


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_cute_sm80_gemm_is_ptxfp_matmul(name):
    in_t, out_t, form = KERNELS[name]
    rng = np.random.default_rng(33)
    M, N, K = 64, 128, 96                      # 2 CTAs, 3 K tiles through the two stages
    A = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-3, 4, (M, K)))).astype(in_t)
    B = (rng.standard_normal((N, K)) * np.exp2(rng.integers(-3, 4, (N, K)))).astype(in_t)
    D = _run(name, A, B)
    bits = np.uint32 if out_t == np.float32 else np.uint16
    want = np.asarray(ptxfp.matmul(A, B.T.copy(), instruction=form, target="sm_80"), out_t)
    assert np.array_equal(D.view(bits), want.view(bits))
    a, b = A.astype(np.float64), B.T.astype(np.float64)
    exact, mag = a @ b, np.abs(a) @ np.abs(b)
    steps = K // 16
    if out_t == np.float32:          # 24 fraction bits kept in a step, truncation, each step
        bound = mag * steps * 2.0 ** -22
    else:                            # each step rounds to f16 (2**-11), subnormals 2**-24
        bound = mag * steps * 2.0 ** -10 + steps * 2.0 ** -24
    assert (np.abs(D.astype(np.float64) - exact) <= bound).all()
    rev = np.asarray(ptxfp.matmul(A[:, ::-1].copy(), B.T[::-1].copy(), instruction=form,
                                  target="sm_80"), out_t)
    assert not np.array_equal(rev.view(bits), D.view(bits))


def test_cute_sm80_gemm_keeps_its_launch_bounds():
    """__launch_bounds__(128) is .maxntid 128: a 256-thread block is refused in one line."""
    with pytest.raises(ptxfp.errors.OperandError, match=r"\.maxntid 128") as e:
        ptxfp.run(PTX, {f"cute_gemm_f16_param_{i}": 0 for i in range(6)}, memory=bytes(64),
                  entry="cute_gemm_f16", block=256)
    assert "\n" not in str(e.value)
