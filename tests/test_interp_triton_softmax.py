"""Triton 3.8's row softmax for sm_80 (tests/data/kernels/triton_softmax_sm80.ptx, written by
tools/triton_softmax_sm80.py; Triton is not needed here) run by ptxfp.run, against a NumPy
reference of the kernel's operations in the order the PTX writes them.

The reference is written from the PTX, not from ptxfp's interpreter: thread t of the row's
program holds columns 4t..4t+3 (one ld.global.v4, masked by 4t < n_cols; masked columns are
-inf); the row maximum is a maximum (exact in any order for these inputs); z = x - max
(sub.f32), u = z * 0f3FB8AA3B (mul.f32, log2(e) rounded to f32), e = ex2.approx.f32(u); the
sum is (e0 + e1) + (e2 + e3) in each thread, a butterfly over the warp's 32 lanes (shfl.sync.bfly
16, 8, 4, 2, 1: v + v[lane ^ o]), and a butterfly over the 4 warps' partials (2, 1); the
output is div.full.f32(e, sum).  Every add/sub/mul is an f32 operation rounded to nearest
(NumPy float32); ex2.approx.f32 and div.full.f32 are the SFU sequences of sm_80, taken from
ptxfp.compute(..., target="sm_80") (held to ptx-math's recorded GPU answers by
tests/test_sfu*.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.ptx.interp import MEMORY_KEY

KERNELS = Path(__file__).parent / "data" / "kernels"
META = json.loads((KERNELS / "triton_softmax_sm80.json").read_text())
LOG2E = np.float32(np.uint32(0x3FB8AA3B).view(np.float32))


def _butterfly(v):
    """The value every lane holds after v + v[lane ^ o] for o = n/2, ..., 1 along the last
    axis (n a power of two), as shfl.sync.bfly with add.f32 computes it: lane 0's."""
    n = v.shape[-1]
    lane = np.arange(n)
    o = n // 2
    while o:
        v = (v + v[..., lane ^ o]).astype(np.float32)
        o //= 2
    return v[..., 0]


def reference(x, n_cols):
    rows, block = x.shape[0], META["BLOCK"]
    warps = META["num_warps"]
    xs = np.full((rows, block), -np.inf, np.float32)
    xs[:, :n_cols] = x
    mx = xs.max(axis=1, keepdims=True)
    z = (xs - mx).astype(np.float32)
    u = (z * LOG2E).astype(np.float32)
    e = np.asarray(ptxfp.compute("ex2.approx.f32", u, target="sm_80"), np.float32)
    q = e.reshape(rows, warps, 32, 4)                          # [row, warp, lane, column]
    t = ((q[..., 0] + q[..., 1]).astype(np.float32) + (q[..., 2] + q[..., 3])).astype(np.float32)
    per_warp = _butterfly(t)                                   # [row, warp]
    s = _butterfly(per_warp)                                   # [row]
    out = np.asarray(ptxfp.compute("div.full.f32", e, np.broadcast_to(s[:, None], e.shape),
                                   target="sm_80"), np.float32)
    return out[:, :n_cols]


def run_softmax(x):
    rows, n_cols = x.shape
    i0, o0 = 256, 256 + x.nbytes
    mem = np.zeros(o0 + x.nbytes, np.uint8)
    mem[i0:o0] = np.frombuffer(x.tobytes(), np.uint8)
    args = {"softmax_param_0": o0, "softmax_param_1": i0, "softmax_param_2": n_cols,
            "softmax_param_3": 0, "softmax_param_4": 0}
    r = ptxfp.run((KERNELS / "triton_softmax_sm80.ptx").read_text(), args, memory=mem,
                  grid=rows, block=32 * META["num_warps"], shared_bytes=META["shared_bytes"])
    return np.frombuffer(r[MEMORY_KEY][o0:].tobytes(), np.float32).reshape(rows, n_cols)


def test_the_module_computes_exp_with_ex2_approx():
    text = (KERNELS / "triton_softmax_sm80.ptx").read_text()
    assert "ex2.approx.f32" in text and "div.full.f32" in text and "0f3FB8AA3B" in text


@pytest.mark.parametrize("n_cols", [512, 496])
def test_triton_softmax_is_the_ptx_written_out(n_cols):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((6, n_cols)) * np.array([1, 4, 20, 0.01, 60, 2])[:, None]) \
        .astype(np.float32)
    got = run_softmax(x)
    want = reference(x, n_cols)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # and it is a softmax: within a few ulps-scale of float64's (ex2.approx's 2 ulp, the sum)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    assert np.allclose(got, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)
    # the order is seen: the sum taken in column order gives other bits somewhere
    e32 = np.asarray(ptxfp.compute("ex2.approx.f32", ((x - x.max(axis=1, keepdims=True))
                                                      * LOG2E).astype(np.float32),
                                   target="sm_80"), np.float32)
    seq = np.zeros(x.shape[0], np.float32)
    for c in range(n_cols):
        seq = (seq + e32[:, c]).astype(np.float32)
    other = np.asarray(ptxfp.compute("div.full.f32", e32, np.broadcast_to(seq[:, None], e32.shape),
                                     target="sm_80"), np.float32)
    assert not np.array_equal(other.view(np.uint32), got.view(np.uint32))
