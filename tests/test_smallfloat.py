"""The small-float cvt forms (smallfloat.py, isa/cvt_small.py) against two independent oracles.

1. MPFR (tests/oracle_small.py, written from the manual, no ptxfp code): every widening form
   on all of its inputs; every narrowing form (and .relu) on a seeded random sample of f32
   bit patterns plus targeted values (every value of the destination and the midpoints
   between neighbours, one f32 ulp either side, the specials); .rs with random bits.
2. NVIDIA's host-side conversion code (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h), compiled with nvcc
   into a shared library at test time (tests/data/cuda/smallfloat_host.cu, cached in the temp
   directory) and called through ctypes: the widening forms on all 2**16 inputs, f16x2 ->
   fp8x2 on every f16 in each lane, the f32 narrowings on a large random + targeted sample;
   ``-m slow`` runs every one of the 2**32 f32 inputs.  Skips where nvcc is missing.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import ptxfp
from ptxfp import policy

import oracle_small

HERE = os.path.dirname(__file__)
SRC = os.path.join(HERE, "data", "cuda", "smallfloat_host.cu")
RNG = np.random.default_rng(20261124)

FP8 = {"e4m3x2": 0, "e5m2x2": 1}
FP6 = {"e2m3x2": 0, "e3m2x2": 1}
SMALL_VALUES = {"e4m3x2": 256, "e5m2x2": 256, "e2m3x2": 64, "e3m2x2": 64, "e2m1x2": 16}


def f32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def _targeted_f32(dst):
    """Every value of the destination lane format, the midpoints between neighbours, one f32
    ulp either side of each, the largest finite +- an ulp, zeros, infinities, NaNs, f32
    subnormals."""
    if dst == "ue8m0x2":
        vals = [np.float32(2.0) ** k for k in range(-127, 128)]
    else:
        n = SMALL_VALUES[dst]
        lanes = np.arange(n, dtype=np.uint32)
        packed = lanes if dst == "e2m1x2" else lanes
        h = np.array([oracle_small.convert(f"cvt.rn.f16x2.{dst}", int(v),
                                           policy=policy.current()) & 0xFFFF
                      for v in packed], np.uint16)
        vals = h.view(np.float16).astype(np.float32)
        vals = vals[np.isfinite(vals)]
    vals = np.unique(np.abs(np.asarray(vals, np.float32)))
    mids = ((vals[1:].astype(np.float64) + vals[:-1]) / 2).astype(np.float32)
    with np.errstate(over="ignore"):
        pts = np.concatenate([vals, mids, vals * 2, vals / 2])
    b = f32(pts)
    b = np.concatenate([b, b + 1, b - 1, b | 0x80000000, (b + 1) | 0x80000000,
                        (b - 1) | 0x80000000])
    specials = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                         0x7F800001, 0x7FFFFFFF, 0x00000001, 0x807FFFFF, 0x7F7FFFFF,
                         0xFF7FFFFF], np.uint32)
    return np.unique(np.concatenate([b, specials]).astype(np.uint32))


def _sample_f32(n, dst):
    rnd = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # also values in the destination's range, where the rounding happens
    near = f32((RNG.standard_normal(n) * 4).astype(np.float32))
    return np.concatenate([_targeted_f32(dst), rnd, near])


def _oracle(spelling, *cols):
    pol = policy.current()
    return np.array([oracle_small.convert(spelling, *map(int, ops), policy=pol)
                     for ops in zip(*cols)], np.uint64)


# --------------------------------------------------------------------------------------------
# 1. MPFR

WIDEN = [f"cvt.rn{r}.f16x2.{t}" for t in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2")
         for r in ("", ".relu")] + ["cvt.rn.bf16x2.ue8m0x2"]


@pytest.mark.parametrize("spelling", WIDEN)
def test_widening_exhaustive_vs_mpfr(spelling):
    src = spelling.split(".")[-1]
    n = 1 << (8 if src == "e2m1x2" else 16)
    a = np.arange(n, dtype=np.uint32)
    got = ptxfp.convert(spelling, a)
    want = _oracle(spelling, a)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(a[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


NARROW = ([f"cvt.rn.satfinite{r}.{d}.f32" for d in ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2",
                                                      "e2m1x2") for r in ("", ".relu")]
          + [f"cvt.{r}{s}.ue8m0x2.f32" for r in ("rz", "rp") for s in ("", ".satfinite")])


@pytest.mark.parametrize("spelling", NARROW)
def test_narrowing_f32_vs_mpfr(spelling):
    x = _sample_f32(3000, spelling.split(".")[-2])
    y = np.roll(x, 1)
    got = ptxfp.convert(spelling, x, y)
    want = _oracle(spelling, x, y)
    bad = np.flatnonzero(got != want)
    assert x.size > 3000 and not bad.size, \
        [(hex(x[i]), hex(y[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("spelling", [
    "cvt.rn.satfinite.e4m3x2.f16x2", "cvt.rn.satfinite.relu.e5m2x2.f16x2",
    "cvt.rz.ue8m0x2.bf16x2", "cvt.rp.satfinite.ue8m0x2.bf16x2"])
def test_narrowing_packed_vs_mpfr(spelling):
    lo = np.arange(1 << 16, dtype=np.uint32)
    a = lo | (RNG.permutation(lo) << 16)                   # every 16-bit lane in both halves
    got = ptxfp.convert(spelling, a)
    want = _oracle(spelling, a)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(a[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


# PTX 9.1/9.2 (ptxas 13.5): fp8/fp6/fp4 from .bf16x2, fp6/fp4 from .f16x2, .rz on the
# narrowings (sm_107a/f), .bf16x2 from fp8/fp6/fp4
X2 = ("e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2")
NARROW_9_1 = [f"cvt.{rnd}.satfinite{r}.{d}.{s}" for s in ("bf16x2", "f16x2") for d in X2
              for rnd in ("rn", "rz") for r in ("", ".relu")
              if not (s == "f16x2" and rnd == "rn" and d in ("e4m3x2", "e5m2x2"))]


#: in the default run: one of each source, rounding and destination kind; -m slow: all
QUICK_9_1 = {"cvt.rn.satfinite.e4m3x2.bf16x2", "cvt.rz.satfinite.e2m1x2.bf16x2",
             "cvt.rn.satfinite.e2m3x2.f16x2", "cvt.rz.satfinite.relu.e5m2x2.f16x2",
             "cvt.rn.satfinite.relu.e3m2x2.bf16x2", "cvt.rn.satfinite.e2m1x2.f16x2"}


def _slow_unless(quick, spellings):
    return [s if s in quick else pytest.param(s, marks=pytest.mark.slow) for s in spellings]


@pytest.mark.parametrize("spelling", _slow_unless(QUICK_9_1, NARROW_9_1))
def test_narrowing_9_1_packed_vs_mpfr(spelling):
    """Every 16-bit pattern in the upper lane (the lower a permutation of them) for one form
    of each kind, a 6000-word sample for the others."""
    lo = np.arange(1 << 16, dtype=np.uint32)
    a = lo | (RNG.permutation(lo) << 16)
    full = spelling in ("cvt.rn.satfinite.e4m3x2.bf16x2", "cvt.rz.satfinite.e2m1x2.bf16x2",
                        "cvt.rn.satfinite.e2m3x2.f16x2")
    if not full:
        a = np.concatenate([a[::4096], RNG.choice(a, 6000, replace=False)])
    got = ptxfp.convert(spelling, a)
    want = _oracle(spelling, a)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(a[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("spelling", _slow_unless(
    {"cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.relu.e2m1x2.f32"}, NARROW[:10]))
def test_rz_narrowing_f32_vs_mpfr(spelling):
    rz = spelling.replace("cvt.rn.", "cvt.rz.")
    x = _sample_f32(2000, spelling.split(".")[-2])
    y = np.roll(x, 1)
    got = ptxfp.convert(rz, x, y)
    want = _oracle(rz, x, y)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(x[i]), hex(y[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("spelling", _slow_unless(
    {"cvt.rn.satfinite.bf16x2.e5m2x2", "cvt.rn.bf16x2.e4m3x2", "cvt.rn.relu.bf16x2.e2m1x2",
     "cvt.rn.bf16x2.e3m2x2"},
    [f"cvt.rn{m}.bf16x2.{t}" for t in X2 for m in ("", ".relu", ".satfinite", ".relu.satfinite")]))
def test_widening_to_bf16x2_exhaustive_vs_mpfr(spelling):
    src = spelling.split(".")[-1]
    a = np.arange(1 << (8 if src == "e2m1x2" else 16), dtype=np.uint32)
    got = ptxfp.convert(spelling, a)
    want = _oracle(spelling, a)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(a[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_bf16x2_sources_vs_ml_dtypes():
    """A second oracle: the bf16 lanes as float32, rounded by ml_dtypes (round to nearest even;
    ml_dtypes' float8_e4m3fn overflows to NaN, so only finite in-range values are compared)."""
    import ml_dtypes
    vals = RNG.standard_normal(4000).astype(np.float32) * 2
    bf = vals.astype(ml_dtypes.bfloat16)
    lanes = bf.view(np.uint16).astype(np.uint32).reshape(-1, 2)
    words = (lanes[:, 0] << 16) | lanes[:, 1]
    for d, dt in (("e4m3x2", ml_dtypes.float8_e4m3fn), ("e5m2x2", ml_dtypes.float8_e5m2),
                  ("e2m3x2", ml_dtypes.float6_e2m3fn), ("e3m2x2", ml_dtypes.float6_e3m2fn),
                  ("e2m1x2", ml_dtypes.float4_e2m1fn)):
        c = 4 if d == "e2m1x2" else 8
        got = np.asarray(ptxfp.convert(f"cvt.rn.satfinite.{d}.bf16x2", words), np.uint32)
        f = bf.astype(np.float32).reshape(-1, 2)
        big = float(ml_dtypes.finfo(dt).max)
        ok = (np.abs(f) <= big).all(axis=1)
        want = [(f[:, j].astype(dt).view(np.uint8).astype(np.uint32)) & ((1 << c) - 1)
                for j in (0, 1)]
        want = (want[0] << c) | want[1]
        assert ok.sum() > 500
        assert np.array_equal(got[ok], want[ok]), d


RS = [f"cvt.rs{r}.satfinite.{d}.f32" for d in ("e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4",
                                                "e2m1x4") for r in ("", ".relu")] + \
     [f"cvt.rs{r}{s}.{d}.f32" for d in ("f16x2", "bf16x2") for r in ("", ".relu")
      for s in ("", ".satfinite")]


@pytest.mark.parametrize("bits", [policy.RS_X4_SHARED, policy.RS_X4_BYTES])
@pytest.mark.parametrize("spelling", RS)
def test_stochastic_rounding_vs_oracle(spelling, bits):
    if bits != policy.RS_X4_SHARED and not spelling.split(".")[-2].endswith("x4"):
        pytest.skip("the policy touches the x4 forms only")
    d = spelling.split(".")[-2]
    n = 4 if d.endswith("x4") else 2
    near = {"f16x2": 60000.0, "bf16x2": 1e38}.get(d, 8.0)
    with np.errstate(over="ignore"):
        cols = [np.concatenate([f32((RNG.standard_normal(3000) * near).astype(np.float32)),
                                RNG.integers(0, 1 << 32, 500, dtype=np.uint64).astype(np.uint32),
                                _targeted_f32("e2m1x2")[:200]]) for _ in range(n)]
    m = min(c.size for c in cols)
    cols = [c[:m] for c in cols]
    rbits = RNG.integers(0, 1 << 32, m, dtype=np.uint64).astype(np.uint32)
    with policy.using(rs_x4_bits=bits):
        got = ptxfp.convert(spelling, *cols, rbits)
        want = _oracle(spelling, *cols, rbits)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [([hex(c[i]) for c in cols], hex(rbits[i]), hex(got[i]),
                           hex(want[i])) for i in bad[:5]]


def test_stochastic_rounding_is_unbiased_and_uses_the_carry():
    # 1 + 2**-12 to f16 (last place 2**-10): the discarded bits are 0x800 of 13; a carry
    # out needs rbits >= 0x1800, so the result rounds up for 1/4 of all random values
    x = int(f32(1 + 2.0 ** -12))
    r = np.arange(1 << 13, dtype=np.uint32)
    got = ptxfp.convert("cvt.rs.f16x2.f32", x, x, r | (r << 16))
    up = (got & 0xFFFF) == 0x3C01
    assert np.array_equal(up, r >= 0x1800) and up.mean() == 0.25
    assert np.array_equal(got >> 16, got & 0xFFFF)         # a's bits are rbits[28:16]


def test_packing_and_operand_order():
    one, two = int(f32(1.0)), int(f32(2.0))
    assert ptxfp.convert("cvt.rn.satfinite.e4m3x2.f32", one, two) == 0x3840   # a on top
    assert ptxfp.convert("cvt.rn.satfinite.e2m1x2.f32", one, two) == 0x24
    assert ptxfp.convert("cvt.rn.satfinite.e2m3x2.f32", one, two) == 0x0810   # 6 bits a byte
    assert ptxfp.convert("cvt.rn.f16x2.e4m3x2", 0x3840) == 0x3C004000
    assert ptxfp.convert("cvt.rn.f16x2.e2m3x2", 0xC8D0) == 0x3C004000    # padding not read
    assert ptxfp.convert("cvt.rz.ue8m0x2.f32", one, two) == 0x7F80
    assert ptxfp.convert("cvt.rs.satfinite.e4m3x4.f32", one, two, one, two, 0) == 0x38403840
    assert ptxfp.convert("cvt.rs.satfinite.e2m1x4.f32", one, two, one, two, 0) == 0x2424


def test_satfinite_nan_and_relu_rules():
    nan, inf = 0x7FC00000, 0x7F800000
    c = ptxfp.convert
    assert c("cvt.rn.satfinite.e4m3x2.f32", nan, inf) == 0x7F7E
    assert c("cvt.rn.satfinite.e5m2x2.f32", nan, inf | 0x80000000) == 0x7FFB
    assert c("cvt.rn.satfinite.e2m1x2.f32", nan, inf) == 0x77        # no NaN: +MAX_NORM
    with policy.using(nan_to_e2m1=0x0):
        assert c("cvt.rn.satfinite.e2m1x2.f32", nan, inf) == 0x07
    assert c("cvt.rn.satfinite.relu.e4m3x2.f32", nan, int(f32(-1.0))) == 0x7F00
    assert c("cvt.rz.ue8m0x2.f32", nan, inf) == 0xFFFF
    assert c("cvt.rz.satfinite.ue8m0x2.f32", nan, inf) == 0xFFFE


def test_arrays_scalars_and_dtypes():
    x = f32(np.linspace(-10, 10, 101, dtype=np.float32))
    r = ptxfp.convert("cvt.rn.satfinite.e2m1x2.f32", x, x)
    assert r.dtype == np.uint8 and r.shape == (101,)
    r = ptxfp.convert("cvt.rs.satfinite.e4m3x4.f32", x, x, x, x, np.uint32(7))
    assert r.dtype == np.uint32
    assert ptxfp.convert("cvt.rn.f16x2.e2m1x2", np.arange(256).reshape(16, 16)).shape == (16, 16)
    with pytest.raises(ptxfp.OperandError):
        ptxfp.convert("cvt.rn.f16x2.e2m1x2", 256)


# --------------------------------------------------------------------------------------------
# 2. NVIDIA's host code


@pytest.fixture(scope="module")
def nv():
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc is None:
        pytest.skip("nvcc not found: NVIDIA's host conversion code cannot be compiled")
    with open(SRC, "rb") as f:
        src = f.read()
    ver = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(src + ver.encode()).hexdigest()[:16]
    cache = os.path.join(tempfile.gettempdir(), f"ptxfp-nvhost-{os.getuid()}")
    os.makedirs(cache, exist_ok=True)
    lib = os.path.join(cache, f"smallfloat_host-{key}.so")
    if not os.path.exists(lib):
        tmp = lib + f".{os.getpid()}.tmp"
        r = subprocess.run([nvcc, "-O2", "-shared", "-Xcompiler", "-fPIC", "-o", tmp, SRC],
                           capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"nvcc could not build the host library: {r.stderr[-300:]}")
        os.replace(tmp, lib)
    return ctypes.CDLL(lib)


def _p(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def _host(nv, name, out_dtype, *arrays, extra=()):
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out = np.empty(arrays[0].size, out_dtype)
    getattr(nv, name)(*[_p(a) for a in arrays], _p(out), ctypes.c_long(out.size),
                      *[ctypes.c_int(e) for e in extra])
    return out


def _same(got, want, *ins):
    bad = np.flatnonzero(got.astype(np.uint64) != want.astype(np.uint64))
    assert not bad.size, (bad.size, [tuple(hex(int(a[i])) for a in ins) + (hex(int(got[i])),
                                                                          hex(int(want[i])))
                                     for i in bad[:5]])


@pytest.mark.parametrize("t", list(FP8) + list(FP6) + ["e2m1x2"])
def test_widening_exhaustive_vs_nvidia(nv, t):
    n = 1 << (8 if t == "e2m1x2" else 16)
    a = np.arange(n, dtype=np.uint8 if t == "e2m1x2" else np.uint16)
    if t in FP8:
        want = _host(nv, "fp8x2_to_f16x2", np.uint32, a, extra=(FP8[t],))
    elif t in FP6:
        want = _host(nv, "fp6x2_to_f16x2", np.uint32, a, extra=(FP6[t],))
    else:
        want = _host(nv, "fp4x2_to_f16x2", np.uint32, a)
    _same(ptxfp.convert(f"cvt.rn.f16x2.{t}", a.astype(np.uint32)), want, a)


def test_ue8m0_widening_exhaustive_vs_nvidia(nv):
    a = np.arange(1 << 16, dtype=np.uint16)
    _same(ptxfp.convert("cvt.rn.bf16x2.ue8m0x2", a.astype(np.uint32)),
          _host(nv, "e8m0x2_to_bf16x2", np.uint32, a), a)


@pytest.mark.parametrize("t", list(FP8))
def test_f16x2_to_fp8_every_f16_vs_nvidia(nv, t):
    lo = np.arange(1 << 16, dtype=np.uint32)
    a = lo | (RNG.permutation(lo) << 16)
    _same(ptxfp.convert(f"cvt.rn.satfinite.{t}.f16x2", a),
          _host(nv, "f16x2_to_fp8x2", np.uint16, a, extra=(FP8[t],)), a)


@pytest.mark.parametrize("rp", [0, 1])
@pytest.mark.parametrize("sat", [0, 1])
def test_bf16x2_to_ue8m0_every_bf16_vs_nvidia(nv, sat, rp):
    lo = np.arange(1 << 16, dtype=np.uint32)
    a = lo | (RNG.permutation(lo) << 16)
    sp = f"cvt.{'rp' if rp else 'rz'}{'.satfinite' if sat else ''}.ue8m0x2.bf16x2"
    _same(ptxfp.convert(sp, a), _host(nv, "bf16x2_to_e8m0x2", np.uint16, a, extra=(sat, rp)), a)


def _f32_narrow_vs_nvidia(nv, spelling, a, b):
    d = spelling.split(".")[-2]
    if d in FP8:
        want = _host(nv, "f32_to_fp8x2", np.uint16, a, b, extra=(FP8[d],))
    elif d in FP6:
        want = _host(nv, "f32_to_fp6x2", np.uint16, a, b, extra=(FP6[d],))
    elif d == "e2m1x2":
        want = _host(nv, "f32_to_fp4x2", np.uint8, a, b)
    else:
        want = _host(nv, "f32_to_e8m0x2", np.uint16, a, b,
                     extra=("satfinite" in spelling, spelling.split(".")[1] == "rp"))
    _same(ptxfp.convert(spelling, a, b), want, a, b)


NV_NARROW = [s for s in NARROW if ".relu" not in s]


@pytest.mark.parametrize("spelling", NV_NARROW)
def test_f32_narrowing_sample_vs_nvidia(nv, spelling):
    x = np.concatenate([_sample_f32(200_000, spelling.split(".")[-2]),
                        RNG.integers(0, 1 << 32, 1_000_000, dtype=np.uint64).astype(np.uint32)])
    _f32_narrow_vs_nvidia(nv, spelling, x, np.roll(x, 7))


@pytest.mark.slow
@pytest.mark.parametrize("spelling", NV_NARROW)
def test_f32_narrowing_all_2_32_vs_nvidia(nv, spelling):
    step = 1 << 26
    for start in range(0, 1 << 32, step):
        x = np.arange(start, start + step, dtype=np.uint64).astype(np.uint32)
        _f32_narrow_vs_nvidia(nv, spelling, x, x[::-1].copy())


def test_nvcc_puts_the_upper_lane_first(tmp_path):
    """nvcc's PTX for NVIDIA's own pair conversions: a float2 {x, y} is loaded as {%f1, %f2}
    and converted as ``cvt... d, %f2, %f1``: the first source a is y, the lane NVIDIA's
    headers (and the manual) put in the upper half, as ptxfp does."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("nvcc not found")
    out = tmp_path / "order.ptx"
    r = subprocess.run([nvcc, "-arch=sm_100a", "-ptx", "-o", str(out),
                        os.path.join(HERE, "data", "cuda", "smallfloat_order.cu")],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"nvcc -arch=sm_100a failed: {r.stderr[-200:]}")
    text = out.read_text()
    import re
    pairs = re.findall(r"ld\.global\.v2\.f32\s+\{(%f\d+), (%f\d+)\}", text)
    cvts = re.findall(r"cvt\.(\w+(?:\.\w+)*)\.f32\s+\S+, (%f\d+), (%f\d+);", text)
    assert {c[0] for c in cvts} == {"rn.satfinite.e4m3x2", "rn.satfinite.e2m3x2",
                                    "rn.satfinite.e2m1x2", "rp.satfinite.ue8m0x2"}
    for (x, y), (_, a, b) in zip(pairs, cvts):
        assert (a, b) == (y, x)
    one, two = int(f32(1.0)), int(f32(2.0))       # so x = 1.0 (b) lands low, y = 2.0 (a) high
    assert ptxfp.convert("cvt.rn.satfinite.e4m3x2.f32", two, one) == 0x4038


def test_typed_arrays_are_the_bits():
    import ml_dtypes
    x = (RNG.standard_normal(1000) * 4).astype(np.float32)
    y = np.roll(x, 3)
    for d, dt in (("e4m3x2", ml_dtypes.float8_e4m3fn), ("e5m2x2", ml_dtypes.float8_e5m2),
                  ("e2m3x2", ml_dtypes.float6_e2m3fn), ("e3m2x2", ml_dtypes.float6_e3m2fn),
                  ("e2m1x2", ml_dtypes.float4_e2m1fn)):
        s = f"cvt.rn.satfinite.{d}.f32"
        typed = ptxfp.convert(s, x, y)
        bits = ptxfp.convert(s, f32(x), f32(y))
        c = 4 if d == "e2m1x2" else 8
        assert typed.dtype == dt and typed.shape == (1000, 2)
        lanes = typed.view(np.uint8).astype(np.uint32)
        assert np.array_equal(lanes[:, 0] | (lanes[:, 1] << c), bits)   # lane 0 = b, low
        # ml_dtypes reads the same values (finite results are exact in both)
        assert np.array_equal(typed.astype(np.float32)[:, 1],
                              ptxfp.convert(s, x, y).astype(np.float32)[:, 1])
        back = ptxfp.convert(f"cvt.rn.f16x2.{d}", typed)
        assert back.dtype == np.float16 and np.array_equal(
            back.astype(np.float32), typed.astype(np.float32))       # widening is exact
    e = ptxfp.convert("cvt.rp.ue8m0x2.f32", x, y)
    assert e.dtype == ml_dtypes.float8_e8m0fnu
    with pytest.raises(ptxfp.OperandError):
        ptxfp.convert("cvt.rn.f16x2.e4m3x2", np.zeros(4, ml_dtypes.float8_e5m2).reshape(2, 2))
    with pytest.raises(ptxfp.OperandError):
        ptxfp.convert("cvt.rn.f16x2.e4m3x2", np.zeros(4, ml_dtypes.float8_e4m3fn))
