"""ptxfp.mma / ptxfp.matmul (the tensor-core numerics) held against the exact reference written
from the papers (tests/mma_reference.py: Fractions, element by element, no shared code).

The figures of each configuration below (block, fraction bits, result precision) are the
papers', written here again so that the parameter table is checked too: MMA-Sim (Xie et al.,
arXiv:2511.10909) and Khattak & Mikaitis (arXiv:2512.07004), docs/semantics.md "Tensor cores".
The zero exponents (E_ZERO) are MMA-Sim 2.1.1's ``e_zero`` (mmasim/nv_ptx/sim.py); the
January 2026 reading (policy ``mma_model="mmasim-2026-01"``) is held to the reference's
``ze=None``.
"""

from __future__ import annotations

import math
import zlib

import ml_dtypes
import numpy as np
import pytest

import mma_reference as ref
from ptxfp.errors import OperandError, PtxfpError
from ptxfp.isa.mma_form import MmaForm
from ptxfp.policy import using
from ptxfp.tensor import matmul, mma

F32, F16 = "f32", "f16"

#: MMA-Sim 2.1.1's e_zero: (target, result type) -> the exponent of a zero product or c
E_ZERO = {("sm_70", F32): -131, ("sm_70", F16): -19, ("sm_75", F32): -132, ("sm_75", F16): -20,
          ("sm_80", F32): -132, ("sm_80", F16): -20, ("sm_89", F32): -132, ("sm_89", F16): -20,
          ("sm_90", F32): -133, ("sm_90", F16): -21, ("sm_100", F32): -133,
          ("sm_100", F16): -21, ("sm_120", F32): -133, ("sm_120", F16): -21}
E_ZERO_MXF4 = -139


def mf(op, m, n, k, at, bt, d, **kw):
    return MmaForm(op, m, n, k, at, bt, d, d, **kw)


#: (name, target, form, block L, fraction bits F, result precision P)
CONFIGS = [
    ("a100-f16", "sm_80", mf("mma", 16, 8, 16, "f16", "f16", F32), 8, 24, 24),
    ("a100-bf16", "sm_80", mf("mma", 16, 8, 16, "bf16", "bf16", F32), 8, 24, 24),
    ("a100-tf32", "sm_80", mf("mma", 16, 8, 8, "tf32", "tf32", F32), 4, 24, 24),
    ("a100-f16-f16", "sm_80", mf("mma", 16, 8, 16, "f16", "f16", F16), 8, 24, 11),
    ("ada-e4m3", "sm_89", mf("mma", 16, 8, 32, "e4m3", "e4m3", F32), 16, 13, 14),
    ("h100-bf16", "sm_90", mf("wgmma", 64, 8, 16, "bf16", "bf16", F32), 16, 25, 24),
    ("h100-f16-f16", "sm_90", mf("wgmma", 64, 8, 16, "f16", "f16", F16), 16, 25, 11),
    ("h100-tf32", "sm_90", mf("wgmma", 64, 8, 8, "tf32", "tf32", F32), 8, 25, 24),
    ("h100-e4m3-e5m2", "sm_90", mf("wgmma", 64, 8, 32, "e4m3", "e5m2", F32), 32, 13, 14),
    ("h100-e5m2-f16", "sm_90", mf("wgmma", 64, 8, 32, "e5m2", "e5m2", F16), 32, 13, 11),
    ("b200-bf16", "sm_100", mf("tcgen05.mma", 128, 8, 16, "bf16", "bf16", F32, kind="f16"),
     16, 25, 24),
    ("b200-f16", "sm_100", mf("tcgen05.mma", 128, 8, 16, "f16", "f16", F32, kind="f16"),
     16, 25, 24),
    ("b200-tf32", "sm_100", mf("tcgen05.mma", 128, 8, 8, "tf32", "tf32", F32, kind="tf32"),
     8, 25, 24),
    ("b200-e4m3", "sm_100", mf("tcgen05.mma", 128, 8, 32, "e4m3", "e4m3", F32,
                               kind="f8f6f4"), 32, 25, 24),
    ("b200-e2m1-e3m2", "sm_100", mf("tcgen05.mma", 128, 8, 32, "e2m1", "e3m2", F32,
                                    kind="f8f6f4"), 32, 25, 24),
    ("b200-e2m3-e5m2", "sm_100", mf("tcgen05.mma", 128, 8, 32, "e2m3", "e5m2", F32,
                                    kind="f8f6f4"), 32, 25, 24),
    ("v100-f16", "sm_70", mf("mma", 8, 8, 4, "f16", "f16", F32), 4, 23, 24),
    ("v100-f16-f16", "sm_70", mf("mma", 8, 8, 4, "f16", "f16", F16), 4, 23, 11),
    ("t4-f16", "sm_75", mf("mma", 16, 8, 8, "f16", "f16", F32), 8, 24, 24),
    ("t4-m8n8k4-f16", "sm_75", mf("mma", 8, 8, 4, "f16", "f16", F32), 4, 23, 24),
    ("rtx-bf16", "sm_120", mf("mma", 16, 8, 16, "bf16", "bf16", F32), 16, 25, 24),
    ("rtx-e2m1-e4m3", "sm_120", mf("mma", 16, 8, 32, "e2m1", "e4m3", F16, kind="f8f6f4"),
     32, 25, 11),
]
WIDTH = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6,
         "e2m1": 4}
DTYPE = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
         "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
         "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
         "e2m1": ml_dtypes.float4_e2m1fn}
UBITS = {4: np.uint8, 6: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32}


def rand_bits(t, shape, rng):
    """Bits of type ``t``: a mix of all encodings (subnormals, NaN, infinities), values of
    one scale (normal products, cancellation), and zeros."""
    w = WIDTH[t]
    mode = rng.integers(4)
    if mode == 0:                                   # every encoding
        return rng.integers(0, 1 << w, size=shape, dtype=np.uint64).astype(UBITS[w])
    if mode == 1:                                   # finite values around one scale
        x = rng.standard_normal(shape) * 2.0 ** int(rng.integers(-3, 4))
        x = x if t in ("f16", "bf16", "tf32") else np.clip(x, -4, 4)
        arr = x.astype(DTYPE[t])
        return arr.view(UBITS[np.dtype(DTYPE[t]).itemsize * 8]).astype(UBITS[w])
    if mode == 2:                                   # a few bits each: ties, carries
        x = rng.integers(-4, 5, size=shape) * 2.0 ** rng.integers(-2, 3, size=shape)
        arr = x.astype(DTYPE[t])
        return arr.view(UBITS[np.dtype(DTYPE[t]).itemsize * 8]).astype(UBITS[w])
    bits = rng.integers(0, 1 << w, size=shape, dtype=np.uint64).astype(UBITS[w])
    bits[rng.random(shape) < 0.6] = 0               # sparse: zeros in the alignment
    return bits


def rand_c(out, shape, rng):
    mode = rng.integers(4)
    if out == F16:
        if mode == 0:
            return rng.integers(0, 1 << 16, size=shape, dtype=np.uint64).astype(np.uint16)
        x = rng.standard_normal(shape) * 2.0 ** int(rng.integers(-20, 8))
        return x.astype(np.float16).view(np.uint16)
    if mode == 0:
        return rng.integers(0, 1 << 32, size=shape, dtype=np.uint64).astype(np.uint32)
    if mode == 1:
        return np.zeros(shape, np.uint32)
    x = rng.standard_normal(shape) * 2.0 ** int(rng.integers(-30, 12))
    return x.astype(np.float32).view(np.uint32)


def reference(A, B, C, at, bt, out, L, F, P, ze=None):
    M, K = A.shape
    N = B.shape[1]
    D = np.zeros((M, N), np.uint32 if out == F32 else np.uint16)
    for i in range(M):
        for j in range(N):
            d = int(C[i, j])
            for s in range(K // L):
                ks = range(s * L, (s + 1) * L)
                d = ref.step([int(A[i, k]) for k in ks], [int(B[k, j]) for k in ks], d,
                             at, bt, out, F, out, P, ze=ze)
            D[i, j] = d
    return D


def _diff(D, R):
    bad = np.argwhere(D != R)
    return len(bad), [(tuple(x), hex(int(D[tuple(x)])), hex(int(R[tuple(x)]))) for x in bad[:3]]


def run_random(cfg, trials, rng, M=4, N=4, steps=3, january=False):
    name, target, form, L, F, P = cfg
    out = form.dtype
    ze = None if january else E_ZERO[target, out]
    if target == "sm_75" and form.m == 8 and not january:
        ze = E_ZERO["sm_70", out]                       # Turing's m8n8k4: Volta's figures
    nsteps = 0
    for _ in range(trials):
        K = L * steps
        A = rand_bits(form.atype, (M, K), rng)
        B = rand_bits(form.btype, (K, N), rng)
        C = rand_c(out, (M, N), rng)
        with using(mma_model="mmasim-2026-01" if january else "mmasim-2.1.1"):
            D = matmul(A, B, C, instruction=form, target=target)
        R = reference(A, B, C, form.atype, form.btype, out, L, F, P, ze)
        n, ex = _diff(D, R)
        assert n == 0, f"{name}: {n} mismatches, e.g. {ex}"
        nsteps += M * N * steps
    return nsteps


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_random_steps_match_reference(cfg):
    rng = np.random.default_rng(zlib.crc32(cfg[0].encode()))
    assert run_random(cfg, 20, rng) == 20 * 48


@pytest.mark.parametrize("cfg", CONFIGS[::3], ids=[c[0] for c in CONFIGS[::3]])
def test_january_reading_matches_reference(cfg):
    """The policy's other reading, MMA-Sim's January 2026 source (a zero factor's exponent
    -126, a zero result keeps its sign), held to the reference's ``ze=None``."""
    rng = np.random.default_rng(3 + zlib.crc32(cfg[0].encode()))
    assert run_random(cfg, 10, rng, january=True) == 10 * 48


@pytest.mark.slow
@pytest.mark.parametrize("cfg", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_random_steps_match_reference_long(cfg):
    rng = np.random.default_rng(7 + zlib.crc32(cfg[0].encode()))
    assert run_random(cfg, 250, rng, M=8, N=8, steps=4) == 250 * 256   # 1.02 million in all


# --- targeted steps: alignment and truncation boundaries, carries, cancellation, specials -----

def _bf(x):
    return int(np.array([x], ml_dtypes.bfloat16).view(np.uint16)[0])


def _f32(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


H100_BF16 = CONFIGS[5]


@pytest.mark.parametrize("c, prods, note", [
    (1.0, [(2.0 ** -25, 1.0)], "a product at the last kept place survives"),
    (1.0, [(2.0 ** -26, 1.0)], "one place below it is truncated away"),
    (1.0, [(-2.0 ** -26, 1.0)], "a negative one too: toward zero, not down"),
    (1.0, [(2.0 ** -26, 1.0)] * 16, "sixteen of them are all lost (no sticky bits)"),
    (1.0, [(1.5, 1.5)] * 16, "carries above the largest exponent are kept"),
    (-36.0, [(1.5, 1.5)] * 16, "exact cancellation gives +0"),
    (-0.0, [(-2.0 ** -40, 1.0), (0.0, -1.0)], "-0 plus products truncated to zero gives +0"),
    (-0.0, [(-0.0, 1.0)], "-0 plus -0 gives +0"),
    (0.0, [(-2.0 ** -100, 2.0 ** -60)], "a negative sum rounded to zero gives +0"),
    (2.0 ** -130, [(2.0 ** -70, 2.0 ** -70)], "subnormal c, tiny products"),
    (0.0, [(0.0, 2.0 ** 100), (2.0 ** -40, 1.0 + 2.0 ** -7)], "a zero factor's exponent"),
    (1e-10, [(0.0, 2.0 ** 100)], "0 * 2**100 beside 1e-10 (issue 32)"),
    (0.0, [(0.0, 2.0 ** 100), (2.0 ** -120, 1.0 + 2.0 ** -7)], "a zero product at -133"),
    (3.0e38, [(2.0 ** 127, 1.5)], "overflow toward zero gives infinity"),
    (1.0, [(math.inf, 0.0)], "inf * 0 is NaN"),
    (1.0, [(math.inf, 1.0), (-math.inf, 1.0)], "inf - inf is NaN"),
    (-math.inf, [(1.0, 1.0)], "an infinite c passes"),
])
def test_targeted_bf16_steps(c, prods, note):
    name, target, form, L, F, P = H100_BF16
    a = np.zeros((1, 16), np.uint16)
    b = np.zeros((16, 1), np.uint16)
    for k, (x, y) in enumerate(prods):
        a[0, k] = _bf(x)
        b[k, 0] = _bf(y)
    C = np.array([[_f32(c)]], np.uint32)
    D = matmul(a, b, C, instruction=form, target=target)
    R = ref.step([int(v) for v in a[0]], [int(v) for v in b[:, 0]], int(C[0, 0]), "bf16",
                 "bf16", F32, F, F32, P, ze=-133)
    assert int(D[0, 0]) == R, note
    with using(mma_model="mmasim-2026-01"):
        D = matmul(a, b, C, instruction=form, target=target)
    R = ref.step([int(v) for v in a[0]], [int(v) for v in b[:, 0]], int(C[0, 0]), "bf16",
                 "bf16", F32, F, F32, P)
    assert int(D[0, 0]) == R, note + " (January 2026 reading)"


def test_issue_32_examples():
    """The issue's two examples, by hand: bf16 0 * 2**100 + 1e-10 on sm_80 is 1e-10 (f32)
    under MMA-Sim 2.1.1 (the zero product at -132 leaves c whole) and 9.99991e-11 under the
    January reading (the zero product at -126 + 100 cuts c to 24 bits below 2**-26; the
    issue's 9.999956e-11 is Hopper's, 25 bits);
    wgmma m64n8k16.f16 on sm_90 with A[0,0] = -2**-14, B[0,0] = 2**-12 gives +0 (-0 in
    January)."""
    form = CONFIGS[1][2]
    a = np.zeros((16, 16), ml_dtypes.bfloat16)
    b = np.zeros((16, 8), ml_dtypes.bfloat16)
    b[0, 0] = 2.0 ** 100
    c = np.full((16, 8), 1e-10, np.float32)
    assert mma(form, a, b, c, target="sm_80")[0, 0] == np.float32(1e-10)
    with using(mma_model="mmasim-2026-01"):
        old = mma(form, a, b, c, target="sm_80")[0, 0]
    c32 = float(np.float32(1e-10))                     # 24 bits below 2**-26 on sm_80
    assert old == np.float32(math.floor(c32 * 2.0 ** 50) * 2.0 ** -50) != np.float32(1e-10)
    form = mf("wgmma", 64, 8, 16, "f16", "f16", F16)
    a = np.zeros((64, 16), np.float16)
    b = np.zeros((16, 8), np.float16)
    a[0, 0] = -2.0 ** -14
    b[0, 0] = 2.0 ** -12
    c = np.zeros((64, 8), np.float16)
    assert mma(form, a, b, c, target="sm_90a").view(np.uint16)[0, 0] == 0x0000
    with using(mma_model="mmasim-2026-01"):
        assert mma(form, a, b, c, target="sm_90a").view(np.uint16)[0, 0] == 0x8000


def test_targeted_values():
    """A few steps whose results are known by hand (not from either implementation)."""
    name, target, form, L, F, P = H100_BF16
    one = np.ones((1, 1), np.float32)

    def run(c, xs, ys):
        a = np.zeros((1, 16), ml_dtypes.bfloat16)
        b = np.zeros((16, 1), ml_dtypes.bfloat16)
        a[0, :len(xs)] = xs
        b[:len(ys), 0] = ys
        return float(matmul(a, b, np.array([[c]], np.float32), instruction=form,
                            target=target)[0, 0])
    assert run(1.0, [2.0 ** -25], [1.0]) == 1.0          # 1 + 2**-25 rounds toward zero
    assert run(1.0, [2.0 ** -23], [1.0]) == 1.0 + 2.0 ** -23
    assert run(1.0, [2.0 ** -24] * 2, [1.0] * 2) == 1.0 + 2.0 ** -23   # both kept, summed
    assert run(1.0, [2.0 ** -26] * 16, [1.0] * 16) == 1.0  # each truncated away
    assert run(1.0, [-2.0 ** -24], [1.0]) == 1.0 - 2.0 ** -24
    assert run(1.0, [-2.0 ** -26], [1.0]) == 1.0           # not 1 - 2**-24
    assert one.dtype == np.float32


def test_deepseek_fp8_keeps_14_bits():
    """H100 fp8 wgmma: the f32 accumulator keeps 13 fraction bits (14 significant), B200 keeps
    24: 1 + 2**-13 survives on both, 1 + 2**-14 only on sm_100 (DeepGEMM#37)."""
    a = np.zeros((1, 32), ml_dtypes.float8_e4m3fn)
    b = np.zeros((32, 1), ml_dtypes.float8_e4m3fn)
    a[0, 0] = 2.0 ** -7
    b[0, 0] = 2.0 ** -7                                  # the product 2**-14
    c = np.ones((1, 1), np.float32)
    h = float(matmul(a, b, c, target="sm_90")[0, 0])
    bw = float(matmul(a, b, c, target="sm_100")[0, 0])
    assert h == 1.0 and bw == 1.0 + 2.0 ** -14
    b[0, 0] = 2.0 ** -6
    assert float(matmul(a, b, c, target="sm_90")[0, 0]) == 1.0 + 2.0 ** -13


# --- the kernel's tiles, pass widths and final rounding (tensor/kernel.py) -----------------

#: step lengths of 4 (a pass of 4 products), 8 (float64 lanes: one fused pass; float32
#: lanes), 16, 32 (passes of 8), both result formats
TILE_CONFIGS = [c for c in CONFIGS
                if c[0] in ("a100-tf32", "a100-bf16", "t4-f16", "h100-bf16", "h100-e4m3-e5m2",
                            "h100-f16-f16")]


def _reference_at(A, B, C, cfg, i, j, ze):
    name, target, form, L, F, P = cfg
    d = int(C[i, j])
    for s in range(A.shape[1] // L):
        ks = range(s * L, (s + 1) * L)
        d = ref.step([int(A[i, k]) for k in ks], [int(B[k, j]) for k in ks], d, form.atype,
                     form.btype, form.dtype, F, form.dtype, P, ze=ze)
    return d


@pytest.mark.parametrize("cfg", TILE_CONFIGS, ids=[c[0] for c in TILE_CONFIGS])
def test_tile_edges_match_reference(cfg):
    """A product taller and wider than one of the kernel's tiles, with ragged last tiles:
    the outputs on every tile edge and a random sample match the reference."""
    from ptxfp.tensor.kernel import TILE_COLS, TILE_ROWS
    name, target, form, L, F, P = cfg
    rng = np.random.default_rng(zlib.crc32(b"tiles" + name.encode()))
    M, N, K = TILE_ROWS + 3, TILE_COLS + 9, 2 * L
    A = rand_bits(form.atype, (M, K), rng)
    B = rand_bits(form.btype, (K, N), rng)
    C = rand_c(form.dtype, (M, N), rng)
    D = matmul(A, B, C, instruction=form, target=target)
    rows = [0, 1, TILE_ROWS - 1, TILE_ROWS, M - 1]
    cols = [0, 7, 8, 9, TILE_COLS - 1, TILE_COLS, N - 1]
    pairs = [(i, j) for i in rows for j in cols]
    pairs += [(int(rng.integers(M)), int(rng.integers(N))) for _ in range(30)]
    for i, j in pairs:
        R = _reference_at(A, B, C, cfg, i, j, E_ZERO[target, form.dtype])
        assert int(D[i, j]) == R, f"{name}: D[{i}, {j}] = {int(D[i, j]):#x}, not {R:#x}"


NEAR_MIN = [c for c in CONFIGS if c[0] in ("h100-bf16", "a100-bf16", "ada-e4m3", "b200-e4m3")]


@pytest.mark.parametrize("cfg", NEAR_MIN, ids=[c[0] for c in NEAR_MIN])
def test_results_near_the_smallest_normal(cfg):
    """f32 results in the lowest normal binades and the subnormals, where the final rounding
    (toward zero to P bits, f32's subnormal quantum below 2**-126) changes its quantum: c
    there, and (bf16) products of about 2**-126 beside it."""
    name, target, form, L, F, P = cfg
    rng = np.random.default_rng(zlib.crc32(b"nearmin" + name.encode()))
    M, N, K = 8, 16, 2 * L
    for _ in range(6):
        C = ((rng.integers(0, 2, (M, N)) << 31) | (rng.integers(0, 4, (M, N)) << 23)
             | rng.integers(0, 1 << 23, (M, N))).astype(np.uint32)
        if form.atype == "bf16":
            x = (rng.choice([-1.0, 1.0], (M, K)) * (1 + rng.integers(0, 128, (M, K)) / 128)
                 * 2.0 ** rng.integers(-67, -58, (M, K)))
            y = (rng.choice([-1.0, 1.0], (K, N)) * (1 + rng.integers(0, 128, (K, N)) / 128)
                 * 2.0 ** rng.integers(-67, -58, (K, N)))
            A = x.astype(ml_dtypes.bfloat16).view(np.uint16)
            B = y.astype(ml_dtypes.bfloat16).view(np.uint16)
            A[rng.random((M, K)) < 0.3] = 0
        else:
            A = np.zeros((M, K), np.uint8)                  # the result is c, cut to P bits
            B = rand_bits(form.btype, (K, N), rng)
        D = matmul(A, B, C, instruction=form, target=target)
        R = reference(A, B, C, form.atype, form.btype, F32, L, F, P, E_ZERO[target, F32])
        n, ex = _diff(D, R)
        assert n == 0, f"{name}: {n} mismatches, e.g. {ex}"


SMALL = [c for c in CONFIGS if c[0] in ("t4-f16", "b200-f16", "h100-f16-f16", "h100-e5m2-f16",
                                        "v100-f16")]


@pytest.mark.parametrize("cfg", SMALL, ids=[c[0] for c in SMALL])
def test_small_products_beside_a_zero_c(cfg):
    """Steps whose largest exponent is a tiny product's (f16 and e5m2 values of 2**-24 to
    2**-8, c zero or far below): the scale 2**(F - maxe) is then large (up to 2**53; the
    kernel's float32 lanes hold it as a binary32)."""
    name, target, form, L, F, P = cfg
    rng = np.random.default_rng(zlib.crc32(b"small" + name.encode()))
    M, N, K = 8, 16, 2 * L
    dt = DTYPE[form.atype]
    for _ in range(4):
        x = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-24, -8, (M, K))
        y = rng.standard_normal((K, N)) * 2.0 ** rng.integers(-24, -8, (K, N))
        A = x.astype(dt).view(UBITS[np.dtype(dt).itemsize * 8])
        B = y.astype(dt).view(UBITS[np.dtype(dt).itemsize * 8])
        if form.dtype == F32:
            C = (rng.standard_normal((M, N)) * 2.0 ** -100).astype(np.float32).view(np.uint32)
        else:
            C = (rng.standard_normal((M, N)) * 2.0 ** -24).astype(np.float16).view(np.uint16)
        C[rng.random((M, N)) < 0.5] = 0
        D = matmul(A, B, C, instruction=form, target=target)
        R = reference(A, B, C, form.atype, form.btype, form.dtype, L, F, P,
                      E_ZERO[target, form.dtype])
        n, ex = _diff(D, R)
        assert n == 0, f"{name}: {n} mismatches, e.g. {ex}"


def test_zero_exponents_are_below_every_c():
    """The kernel takes no term for a product with a zero factor (tensor/kernel.py,
    ZERO_FACTOR): that holds while every zero exponent is below the exponent of every nonzero
    c (-126 for an f32 result, -14 for f16)."""
    from ptxfp.tensor.params import ARCH, ZERO_EXP_2026_01
    for rows in ARCH.values():
        for p in rows.values():
            assert p.zero_exp < -126 and p.zero_exp_f16 < -14
    assert ZERO_EXP_2026_01 <= -126          # (that reading gives zero factors -126 instead)


# --- block-scaled kinds, f64, integers ----------------------------------------------------

def test_mxf8f6f4_matches_reference():
    rng = np.random.default_rng(11)
    form = MmaForm("tcgen05.mma", 128, 8, 32, "e4m3", "e5m2", "f32", "f32", kind="mxf8f6f4",
                   scale_type="ue8m0", scale_vec=1)
    n = 0
    for _ in range(20):
        A = rand_bits("e4m3", (4, 64), rng)
        B = rand_bits("e5m2", (64, 4), rng)
        C = rand_c(F32, (4, 4), rng)
        SA = rng.integers(100, 156, size=(4, 2)).astype(np.uint8)
        SB = rng.integers(100, 156, size=(2, 4)).astype(np.uint8)
        SA[0, 0] = 0xFF if rng.random() < 0.2 else SA[0, 0]
        D = matmul(A, B, C, instruction=form, target="sm_100", scale_a=SA, scale_b=SB)
        for i in range(4):
            for j in range(4):
                d = int(C[i, j])
                for s in range(2):
                    ks = range(32 * s, 32 * s + 32)
                    d = ref.step([int(A[i, k]) for k in ks], [int(B[k, j]) for k in ks], d,
                                 "e4m3", "e5m2", F32, 25, F32, 24, int(SA[i, s]), int(SB[s, j]),
                                 ze=-133)
                    n += 1
                assert int(D[i, j]) == d, (i, j, hex(int(D[i, j])), hex(d))
    assert n == 20 * 32


@pytest.mark.parametrize("st, vec", [("ue8m0", 2), ("ue4m3", 4)])
def test_mxf4nvf4_matches_reference(st, vec):
    rng = np.random.default_rng(12 + vec)
    form = MmaForm("tcgen05.mma", 128, 8, 64, "e2m1", "e2m1", "f32", "f32",
                   kind="mxf4nvf4", scale_type=st, scale_vec=vec)
    blk = 64 // vec
    for _ in range(10):
        A = rand_bits("e2m1", (4, 128), rng)
        B = rand_bits("e2m1", (128, 4), rng)
        C = rand_c(F32, (4, 4), rng)
        if st == "ue8m0":
            SA = rng.integers(110, 145, size=(4, 128 // blk)).astype(np.uint8)
            SB = rng.integers(110, 145, size=(128 // blk, 4)).astype(np.uint8)
        else:
            SA = rng.integers(0, 0x7F, size=(4, 128 // blk)).astype(np.uint8)
            SB = rng.integers(0, 0x7F, size=(128 // blk, 4)).astype(np.uint8)
        D = matmul(A, B, C, instruction=form, target="sm_100", scale_a=SA, scale_b=SB)
        for i in range(4):
            for j in range(4):
                d = int(C[i, j])
                for s in range(2):
                    ks = range(64 * s, 64 * s + 64)
                    qs = range(64 * s // blk, (64 * s + 64) // blk)
                    sa = [int(SA[i, q]) for q in qs for _ in range(blk // 16)]
                    sb = [int(SB[q, j]) for q in qs for _ in range(blk // 16)]
                    d = ref.group_step([int(A[i, k]) for k in ks], [int(B[k, j]) for k in ks],
                                       d, sa, sb, st, ze=E_ZERO_MXF4)
                assert int(D[i, j]) == d, (i, j, hex(int(D[i, j])), hex(d))


def test_f16_c_of_an_f32_form_keeps_its_exponent():
    """m8n8k4.f32.f16.f16.f16 (sm_70): an f16 subnormal C has f16's exponent -14 in the
    alignment (MMA-Sim 2.1.1 reads C in its own format), so a product 2**-40 is cut to
    F = 23 bits below 2**-14; the reference reads C as f16 too."""
    form = MmaForm("mma", 8, 8, 4, "f16", "f16", "f16", "f32")
    a = np.zeros((8, 4), np.float16)
    b = np.zeros((4, 8), np.float16)
    a[0, 0] = 2.0 ** -20
    b[0, 0] = 2.0 ** -20 * 1.5                               # 1.5 * 2**-40: below 2**-37
    c = np.full((8, 8), 2.0 ** -24, np.float16)              # the smallest f16 subnormal
    D = mma(form, a, b, c, target="sm_70")
    R = ref.step([int(x) for x in a[0].view(np.uint16)], [int(x) for x in b[:, 0].view(np.uint16)],
                 int(c.view(np.uint16)[0, 0]), "f16", "f16", "f16", 23, F32, 24, ze=-131)
    assert int(D.view(np.uint32)[0, 0]) == R == _f32(2.0 ** -24)


def test_f64_is_an_fma_chain():
    rng = np.random.default_rng(5)
    form = MmaForm("mma", 8, 8, 4, "f64", "f64", "f64", "f64")
    A = rng.standard_normal((8, 4)) * 2.0 ** rng.integers(-30, 30, size=(8, 4))
    B = rng.standard_normal((4, 8))
    C = rng.standard_normal((8, 8))
    D = mma(form, A, B, C, target="sm_80")
    for i in range(8):
        for j in range(8):
            assert D[i, j] == ref.fma_chain(list(A[i]), list(B[:, j]), C[i, j])


@pytest.mark.parametrize("model, payload", [("mmasim-2.1.1", True), ("mmasim-2026-01", False)])
def test_f64_nan(model, payload):
    """f64 NaN: MMA-Sim 2.1.1 passes an operand's payload through (the first NaN of a, b, c,
    quieted; inf * 0 gives 0xFFF8000000000000); the January reading gives the canonical NaN."""
    rng = np.random.default_rng(15)
    form = MmaForm("mma", 8, 8, 4, "f64", "f64", "f64", "f64")
    A = (rng.standard_normal((8, 4))).view(np.uint64).copy()
    B = (rng.standard_normal((4, 8))).view(np.uint64).copy()
    C = (rng.standard_normal((8, 8))).view(np.uint64).copy()
    A[0, 1] = 0x7FF0000000000123                   # signalling, payload 0x123
    B[1, 0] = 0xFFF8000000000456                   # quiet, negative
    B[2, 1] = 0x7FF0000000000000                   # inf, times A[0, 2] ...
    A[0, 2] = 0
    A[1, 3] = 0xFFF0000000000789
    C[2, 2] = 0x7FF8000000000ABC
    with using(mma_model=model):
        D = mma(form, A, B, C, target="sm_80")
    for i in range(8):
        for j in range(8):
            want = ref.fma_chain_bits([int(x) for x in A[i]], [int(x) for x in B[:, j]],
                                      int(C[i, j]), payload)
            assert int(D[i, j]) == want, (i, j, hex(int(D[i, j])), hex(want))
    if payload:
        assert int(D[0, 0]) == 0x7FF8000000000123 and int(D[0, 1]) == 0x7FF8000000000123
        assert int(D[2, 2]) == 0x7FF8000000000ABC
    with using(mma_f64_nan="canonical"):
        assert int(mma(form, A, B, C, target="sm_80")[0, 0]) == 0x7FFFFFFFFFFFFFFF


def test_integer_forms_exact():
    rng = np.random.default_rng(6)
    A = rng.integers(-128, 128, size=(16, 32))
    B = rng.integers(-128, 128, size=(32, 8))
    C = rng.integers(-(1 << 31), 1 << 31, size=(16, 8))
    exact = C + A @ B
    form = MmaForm("mma", 16, 8, 32, "s8", "s8", "s32", "s32")
    D = mma(form, A, B, C, target="sm_80")
    assert np.array_equal(D, ((exact + (1 << 31)) % (1 << 32)) - (1 << 31))
    sat = MmaForm("mma", 16, 8, 32, "s8", "s8", "s32", "s32", satfinite=True)
    D = mma(sat, A, B, C, target="sm_80")
    assert np.array_equal(D, np.clip(exact, -(1 << 31), (1 << 31) - 1))


# --- the API: shapes, batches, types, errors ------------------------------------------------

def test_batched_like_numpy_matmul():
    rng = np.random.default_rng(8)
    form = CONFIGS[5][2]
    A = rng.standard_normal((3, 1, 64, 16)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((2, 16, 8)).astype(ml_dtypes.bfloat16)
    C = np.zeros((64, 8), np.float32)
    D = mma(form, A, B, C, target="sm_90")
    assert D.shape == (3, 2, 64, 8) and D.dtype == np.float32
    assert np.array_equal(D[2, 1], mma(form, A[2, 0], B[1], C, target="sm_90"))
    bits = mma(form, A.view(np.uint16), B.view(np.uint16), C.view(np.uint32), target="sm_90")
    assert bits.dtype == np.uint32 and np.array_equal(bits, D.view(np.uint32))


def test_matmul_pads_k_with_zeros():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((5, 20)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((20, 3)).astype(ml_dtypes.bfloat16)
    Ap = np.zeros((5, 32), ml_dtypes.bfloat16)
    Bp = np.zeros((32, 3), ml_dtypes.bfloat16)
    Ap[:, :20] = A
    Bp[:20] = B
    assert np.array_equal(matmul(A, B, target="sm_90"), matmul(Ap, Bp, target="sm_90"))


@pytest.mark.parametrize("call, msg", [
    (lambda: mma(CONFIGS[5][2], np.zeros((64, 8), np.uint16), np.zeros((8, 8), np.uint16),
                 np.zeros((64, 8), np.uint32)), "m64n8k16"),
    (lambda: mma(CONFIGS[5][2], np.zeros((64, 16), np.float16), np.zeros((16, 8), np.uint16),
                 np.zeros((64, 8), np.uint32)), "float16"),
    (lambda: mma(CONFIGS[5][2], np.zeros((64, 16), np.uint16), np.zeros((16, 8), np.uint16),
                 np.zeros((64, 8), np.uint32), target="sm_80"), "no wgmma"),
    (lambda: mma(CONFIGS[10][2], np.zeros((128, 16), np.uint16), np.zeros((16, 8), np.uint16),
                 np.zeros((128, 8), np.uint32), target="sm_90"), "no tcgen05.mma"),
    (lambda: matmul(np.zeros((4, 32), ml_dtypes.float8_e4m3fn),
                    np.zeros((32, 4), ml_dtypes.float8_e4m3fn), target="sm_80"), "sm_89"),
    (lambda: matmul(np.zeros((4, 8), np.float16), np.zeros((9, 4), np.float16)), "inner"),
    (lambda: matmul(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16),
                    target="sm_60"), "sm_80"),
    (lambda: mma(MmaForm("mma", 16, 8, 16, "f64", "f64", "f64", "f64"),
                 np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8)), target="sm_80"),
     "sm_90"),
    (lambda: matmul(np.zeros((4, 8), ml_dtypes.bfloat16), np.zeros((8, 4), ml_dtypes.bfloat16),
                    target="sm_75"), ".f16 before sm_80"),
    (lambda: mma(MmaForm("mma", 16, 8, 32, "e2m1", "e4m3", "f32", "f32", kind="f8f6f4"),
                 np.zeros((16, 32), np.uint8), np.zeros((32, 8), np.uint8),
                 np.zeros((16, 8), np.uint32), target="sm_100a"), "sm_120"),
    (lambda: matmul(np.zeros((4, 8), np.uint16), np.zeros((8, 4), np.uint16)), "typed"),
    (lambda: mma(CONFIGS[5][2], np.full((64, 16), 70000), np.zeros((16, 8), np.uint16),
                 np.zeros((64, 8), np.uint32)), "16-bit"),
])
def test_errors_are_one_line(call, msg):
    with pytest.raises(PtxfpError) as e:
        call()
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_spellings():
    """Spellings are read by ptxfp.isa.spelling.mma_form (the tensorisa branch); enabled at merge."""
    from ptxfp.isa import spelling
    if not hasattr(spelling, "mma_form"):
        pytest.skip("ptxfp.isa.spelling.mma_form comes with the tensorisa branch (issue 24)")
    rng = np.random.default_rng(10)
    A = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((16, 8)).astype(ml_dtypes.bfloat16)
    C = np.zeros((64, 8), np.float32)
    D = mma("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", A, B, C, target="sm_90a")
    assert np.array_equal(D, mma(CONFIGS[5][2], A, B, C, target="sm_90"))
    D = mma("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", A[:16], B, C[:16],
            target="sm_80")
    assert np.array_equal(D, matmul(A[:16], B, C[:16], instruction=CONFIGS[1][2],
                                    target="sm_80"))


# --- fuzz: only a PtxfpError or a result comes out of the new doors ---------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_ARRAYS = st.one_of(
    st.integers(-3, 70000),
    st.lists(st.integers(-2, 300), max_size=6),
    st.tuples(st.integers(0, 5), st.integers(0, 40), st.sampled_from(
        ["uint8", "uint16", "uint32", "int64", "float16", "float32", "float64", "bfloat16",
         "float8_e4m3fn", "bool"])).map(
        lambda t: np.zeros((t[0], t[1]), dtype=getattr(ml_dtypes, t[2], None) or t[2])),
    st.just(None), st.just(1.5), st.text(max_size=3))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(a=_ARRAYS, b=_ARRAYS, c=_ARRAYS,
       cfg=st.sampled_from([c[1:3] for c in CONFIGS]),
       target=st.sampled_from(["sm_80", "sm_90", "sm_100a", "sm_75", "x", ""]),
       which=st.sampled_from(["mma", "matmul"]))
def test_fuzz_mma_and_matmul(a, b, c, cfg, target, which):
    form = cfg[1]
    try:
        if which == "mma":
            mma(form, a, b, c, target=target)
        else:
            matmul(a, b, c, instruction=form if target != "" else None, target=target or "sm_90")
    except PtxfpError as e:
        assert "\n" not in str(e)


def test_threads_give_the_same_bits(monkeypatch):
    from ptxfp.tensor import api
    rng = np.random.default_rng(13)
    A = rng.standard_normal((2, 40, 64)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((64, 24)).astype(ml_dtypes.bfloat16)
    one = matmul(A, B, target="sm_90")
    monkeypatch.setattr(api, "PARALLEL_PRODUCTS", 1)
    monkeypatch.setenv("PTXFP_NUM_THREADS", "3")
    assert np.array_equal(matmul(A, B, target="sm_90"), one)


def test_mma_model_policy_is_validated():
    from ptxfp.policy import MMA_MODELS, Policy
    assert MMA_MODELS == ("mmasim-2.1.1", "mmasim-2026-01")
    assert Policy().mma_model == "mmasim-2.1.1" and Policy().mma_f64_nan is None
    with pytest.raises(ValueError, match="mmasim-2026-01"):
        Policy(mma_model="mmasim-2025")
    with pytest.raises(ValueError, match="payload"):
        Policy(mma_f64_nan="quiet")
