"""Triton's layernorm (tests/data/kernels/triton_norm_layernorm_{sm80,sm90a}.ptx, written by
tools/triton_norm.py; Triton is not needed here) run by ptxfp.run, against a NumPy reference of
the machine code ptxas makes of it, bit for bit.

The reference is written from the PTX and from the SASS ptxas 13.5 makes of it (``ptxas -O3``,
``cuobjdump -sass``; the same instructions for sm_80 and sm_90a), not from ptxfp's interpreter.
One warp runs a row: lane l holds x[l] and x[l + 32] (0 where the column is >= n).

- ``s``: add.f32 of the lane's two values, then a butterfly over the 32 lanes
  (shfl.sync.bfly 16, 8, 4, 2, 1, each lane adding its partner's value: FADD).
- ``div.full.f32 s, n`` (n from cvt.rn.f32.s32) is the SASS sequence: P0 = |n| > 2^126,
  P3 = |n| >= 2^-126; n and s are multiplied by 0.25 where P0, by 2^24 where not P3 (FMUL);
  r = MUFU.RCP(n'); the quotient FMUL r * s'.  ptxas fuses that FMUL with the sub.f32 that
  reads the mean (tests/data/contraction/modules.json: lines 110 -> 112, 113):
  ``xc = FFMA(r, -s', x)``, one rounding of x - r*s', the mean never rounded.
- ``selp``: xc = 0 for columns >= n; ``q = fma.rn(xc0, xc0, xc1 * xc1)`` (FMUL, FFMA: the
  PTX's own fma); its butterfly ``s2`` as above.
- ``div.full.f32 s2, n`` reuses r and the predicates (one MUFU.RCP in the SASS); its FMUL is
  fused with ``add.f32 eps, var`` (line 156 -> 158): ``h = FFMA(r, s2', eps)``.
- ``rstd = rsqrt.approx.ftz.f32(h)``: MUFU.RSQ alone.
- ``y = fma.rn(xc * rstd, w, b)``: FMUL, FFMA.

Every FADD/FMUL is NumPy float32 (round to nearest, subnormals kept: no .ftz in the SASS);
every FFMA is one rounding of the exact a*b + c (gmpy2, MPFR); a NaN result is the canonical
0x7fffffff.  The two SFU primitives come from ptxfp.compute on the module's target:
MUFU.RCP = ``rcp.approx.ftz.f32`` and MUFU.RSQ = ``rsqrt.approx.ftz.f32`` (each is that MUFU
alone in the SASS), held to ptx-math's recorded GPU answers by tests/test_sfu*.py.

With the contraction policy ``as_written`` (each PTX instruction rounded as written) the bits
differ on a fraction of the outputs: the test shows it can fail.
"""

import json
from pathlib import Path

import gmpy2
import numpy as np
import pytest

import ptxfp
from ptxfp.policy import using
from ptxfp.ptx.interp import MEMORY_KEY

KERNELS = Path(__file__).parent / "data" / "kernels"
META = json.loads((KERNELS / "triton_norm.json").read_text())
FUSED = json.loads((Path(__file__).parent / "data" / "contraction" / "modules.json")
                   .read_text())["modules"]
MODULES = {"sm_80": "triton_norm_layernorm_sm80.ptx", "sm_90a": "triton_norm_layernorm_sm90a.ptx"}
BLOCK = 64
EPS = np.float32(1e-5)
F32 = np.float32
CANONICAL_NAN = np.uint32(0x7FFFFFFF)

_ROUND32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True,
                         round=gmpy2.RoundToNearest)
_EXACT = gmpy2.context(precision=400)    # a*b + c of binary32 values is exact at 400 bits


def _fma1(a: float, b: float, c: float) -> np.float32:
    """binary32 FFMA: one rounding to nearest of the exact a*b + c."""
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return F32(np.float64(a) * np.float64(b) + np.float64(c))  # inf/NaN: IEEE's rules
    with gmpy2.context(_EXACT):
        exact = gmpy2.mpfr(a) * gmpy2.mpfr(b) + gmpy2.mpfr(c)
    if exact == 0:                              # exact zero: IEEE's sign of a sum of zeros
        return F32(np.float64(a) * np.float64(b) + np.float64(c))
    with gmpy2.context(_ROUND32):
        r = +exact
    return F32(float(r))


def fma32(a, b, c):
    a, b, c = np.broadcast_arrays(F32(a), F32(b), F32(c))
    out = np.empty(a.shape, F32)
    for i in np.ndindex(a.shape):
        out[i] = _fma1(float(a[i]), float(b[i]), float(c[i]))
    return out


def _butterfly(v):
    """Lane 0's value after v += v[lane ^ o] for o = 16, 8, 4, 2, 1 (shfl.sync.bfly, FADD)."""
    lane = np.arange(v.shape[-1])
    o = v.shape[-1] // 2
    while o:
        v = (v + v[..., lane ^ o]).astype(F32)
        o //= 2
    return v[..., 0]


def _scaled(v, big, small):
    """div.full's operand scaling: @P0 FMUL v, v, 0.25; @!P3 FMUL v, v, 16777216."""
    v = np.where(big, (v * F32(0.25)).astype(F32), v).astype(F32)
    return np.where(small, (v * F32(16777216.0)).astype(F32), v).astype(F32)


def reference(x, w, b, n, eps, target, contract=True):
    """The outputs [rows, n] as the SASS computes them (module docstring); contract=False:
    the div.full's FMUL rounded, then the sub.f32 / add.f32."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _reference(x, w, b, n, eps, target, contract)


def _reference(x, w, b, n, eps, target, contract):
    rows = x.shape[0]
    xs = np.zeros((rows, BLOCK), F32)
    xs[:, :n] = x
    ws = np.zeros(BLOCK, F32)
    bs = np.zeros(BLOCK, F32)
    ws[:n], bs[:n] = w, b
    lane = np.arange(32)
    m0, m1 = lane < n, lane + 32 < n
    x0, x1 = xs[:, :32], xs[:, 32:]
    s = _butterfly((x0 + x1).astype(F32))[:, None]                # add.f32, then the warp's
    nf = F32(n)                                                   # cvt.rn.f32.s32
    big, small = abs(nf) > F32(2.0 ** 126), abs(nf) < F32(2.0 ** -126)
    r = np.asarray(ptxfp.compute("rcp.approx.ftz.f32", _scaled(nf, big, small),   # MUFU.RCP
                                 target=target), F32)
    s_ = _scaled(s, big, small)
    if contract:
        xc0, xc1 = fma32(r, -s_, x0), fma32(r, -s_, x1)           # FFMA r, -s', x
    else:
        mean = (r * s_).astype(F32)                               # FMUL, then sub.f32
        xc0, xc1 = (x0 - mean).astype(F32), (x1 - mean).astype(F32)
    xc0 = np.where(m0, xc0, F32(0)).astype(F32)                   # selp
    xc1 = np.where(m1, xc1, F32(0)).astype(F32)
    q = fma32(xc0, xc0, (xc1 * xc1).astype(F32))                  # mul.f32, fma.rn.f32
    s2_ = _scaled(_butterfly(q)[:, None], big, small)
    if contract:
        h = fma32(r, s2_, eps)                                    # FFMA r, s2', eps
    else:
        h = (F32(eps) + (r * s2_).astype(F32)).astype(F32)
    rstd = np.asarray(ptxfp.compute("rsqrt.approx.ftz.f32", h, target=target), F32)  # MUFU.RSQ
    y0 = fma32((xc0 * rstd).astype(F32), ws[:32], bs[:32])        # mul.f32, fma.rn.f32
    y1 = fma32((xc1 * rstd).astype(F32), ws[32:], bs[32:])
    y = np.concatenate([y0, y1], axis=1)[:, :n].view(np.uint32).copy()
    y[np.isnan(y.view(F32))] = CANONICAL_NAN
    return y


def run_layernorm(x, w, b, n, eps, target):
    rows = x.shape[0]
    xb, wb, bb = x.astype(F32).tobytes(), w.astype(F32).tobytes(), b.astype(F32).tobytes()
    x0 = 256
    w0 = x0 + len(xb)
    b0 = w0 + len(wb)
    y0 = b0 + len(bb)
    mem = np.zeros(y0 + len(xb), np.uint8)
    for at, by in ((x0, xb), (w0, wb), (b0, bb)):
        mem[at:at + len(by)] = np.frombuffer(by, np.uint8)
    args = {"layernorm_param_0": x0, "layernorm_param_1": w0, "layernorm_param_2": b0,
            "layernorm_param_3": y0, "layernorm_param_4": n, "layernorm_param_5": n,
            "layernorm_param_6": int(F32(eps).view(np.uint32)),
            "layernorm_param_7": 0, "layernorm_param_8": 0}
    name = MODULES[target]
    r = ptxfp.run((KERNELS / name).read_text(), args, memory=mem, grid=rows, block=32,
                  shared_bytes=META[name]["shared_bytes"])
    return np.frombuffer(r[MEMORY_KEY][y0:].tobytes(), np.uint32).reshape(rows, n)


def inputs(n, seed=5):
    """Rows of several kinds: standard normal, scaled, a large offset over small spread (the
    mean's rounding matters: cancellation), subnormal values, huge values (1e18, and 3e19
    whose variance overflows to inf), a constant row, mixed magnitudes, zeros (with eps = 0:
    rstd = inf and 0 * inf, a NaN)."""
    rng = np.random.default_rng(seed)
    g = lambda scale=1.0: rng.standard_normal(n) * scale  # noqa: E731
    tiny = np.float32(1e-40)
    rows = [
        g(), g(), g(30.0), g(1e-3),
        1000.0 + g(), 1000.0 + g(), 1e4 + g(0.5), -3e5 + g(2.0), 77.0 + g(1e-3),
        g() * tiny, (rng.integers(-3, 4, n) * tiny),
        g(1e18), 1e19 + g(1e18), g(3e19),
        np.full(n, 3.25),
        g() * 10.0 ** rng.integers(-20, 20, n),
        np.zeros(n),
    ]
    x = np.array(rows).astype(F32)
    w = (1.0 + 0.1 * rng.standard_normal(n)).astype(F32)
    b = (0.1 * rng.standard_normal(n)).astype(F32)
    return x, w, b


def test_the_fused_pairs_are_ptxas_own():
    """The pairs the reference fuses are the pairs ptxas 13.5 fused in the recorded machine
    code: div.full (mean) -> both sub.f32, div.full (variance) -> add.f32 eps."""
    for target, name in MODULES.items():
        lines = (KERNELS / name).read_text().splitlines()
        rec = FUSED[name]
        assert rec["target"] == target
        ops = [(lines[p - 1].split()[0], lines[c - 1].split()[0]) for p, c in rec["fused"]]
        assert ops == [("div.full.f32", "sub.f32")] * 2 + [("div.full.f32", "add.f32")]
        assert all("FFMA" in " ".join(rec["sass"][str(c)]) for _, c in rec["fused"])


@pytest.mark.parametrize("n, eps", [(64, EPS), (50, EPS), (37, EPS), (50, F32(0))])
@pytest.mark.parametrize("target", list(MODULES))
def test_triton_layernorm_is_the_sass_written_out(target, n, eps):
    """n = 64 (a power of two: r*s exact), 50 and 37 (r*s rounded; masked lanes); eps = 0:
    the subnormal rows' variance is flushed by MUFU.RSQ (rstd = inf, 0 * inf a NaN)."""
    x, w, b = inputs(n)
    got = run_layernorm(x, w, b, n, eps, target)
    want = reference(x, w, b, n, eps, target)
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} outputs differ, first at {bad[0]}: "
                           f"{got[tuple(bad[0])]:#010x} != {want[tuple(bad[0])]:#010x}")
    # and it is a layernorm where float32 can hold one: close to float64's (normal rows)
    x64 = x[:4].astype(np.float64)
    xc = x64 - x64.mean(axis=1, keepdims=True)
    y64 = xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + float(eps)) * w + b
    assert np.allclose(got[:4].view(F32), y64, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", list(MODULES))
def test_as_written_gives_other_bits(target):
    """Each instruction rounded as the PTX writes it (the mean and the variance rounded before
    the sub/add) gives other bits: n = 50, where r*s is rounded (with n = 64 it is exact and
    the two agree).  The run equals the reference with its FFMAs unfused, and differs from the
    GPU's on some outputs of the normal rows (a few ulp, more near zero) and on every output of
    the rows with a large offset (the mean's rounding is the cancellation's error)."""
    n = 50
    x, w, b = inputs(n, seed=8)
    want = reference(x, w, b, n, EPS, target)
    with using(contract="as_written"):
        got = run_layernorm(x, w, b, n, EPS, target)
    assert np.array_equal(got, reference(x, w, b, n, EPS, target, contract=False))
    diff = got != want
    assert 0.01 < diff[:4].mean() < 0.5                 # normal rows: some outputs
    assert diff[4:9].all()                              # large offsets: all of them
