"""The 12 scalar spellings fma.{rz,rm,rp}{.oob}{.relu}.bf16 under the default policy
(bf16_fma_directed="as_compiled": what ptxas 13.0 compiles them to, docs/ptxas-findings.md):

    cvt.rn.f16.f32(fma.<mode>.f32(cvt.f32.f16(a), cvt.f32.f16(b), cvt.f32.f16(c)))

run by one fused kernel (kernels.as_f16_kernel).  It must give the bits of that composition of
the three forms (arith._f16_composition, each form's own kernel) on every input: uniform random
bits, the bits of normally distributed values (bf16 and f16), hard mixes (the bf16 one of
test_bf16_fma_wide.py, an f16 one aimed at f16's edges, cancellation and the double rounding
f32 -> f16), and a grid of special values; a sample of each against MPFR (tests/oracle.py), and
every recorded vector of the GPU (tests/test_gpu_recorded.py runs those).  The slow test runs
millions of vectors per spelling, and arrays big enough to be split over threads.
"""

import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest

from ptxfp.errors import PolicyError

import oracle
import ptxfp
import vectors
from ptxfp import policy
from ptxfp.ops import arith, kernels
from test_bf16_fma_wide import hard_mix

SPELLINGS = [f"fma.{r}{o}{u}.bf16" for r, o, u in itertools.product(
    ("rz", "rm", "rp"), ("", ".oob"), ("", ".relu"))]
needs_fused = pytest.mark.skipif(not kernels.as_f16_ok(),
                                 reason="the fused kernel needs x86 with F16C")

#: f16 specials (as the fused kernel reads the bits): zeros, subnormals, the smallest and
#: largest normals, 1, infinities, NaNs (0x7FF7: the OOB NaN, ignored here as .oob is dropped)
F16_SPECIALS = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400,
                         0x3C00, 0xBC00, 0x3BFF, 0x3C01, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                         0x7C01, 0x7E00, 0xFE00, 0x7FFF, 0x7FF7, 0x1000, 0x5800, 0x2000,
                         0x3F80, 0xBF80, 0x7F80, 0x0080, 0x7F7F], np.uint16)


def composition(spelling, a, b, c):
    """The bits of the three forms in turn (the code the fused kernel replaced)."""
    out = np.empty(a.size, np.uint16)
    arith._f16_composition(ptxfp.parse(spelling))(a, b, c, out, a.size)
    return out


def _f16_bits(rng, fields, n):
    frac = rng.integers(0, 1024, n)
    return ((rng.integers(0, 2, n) << 15) | (np.clip(fields, 0, 31) << 10) | frac).astype(
        np.uint16)


def f16_hard_mix(rng, n):
    """Operand bits aimed at what the f16 reading does: products near f16's subnormal and
    overflow edges, f16 subnormal and special operands, c = -(a*b) rounded to f16 (exact
    cancellation) or nudged from it, and c far below a*b so that the f32 rounding in the
    directed mode decides the f16 rounding to nearest (a*b on or next to an f16 midpoint)."""
    fa = rng.integers(0, 32, n)
    target = rng.choice([-24, -20, -14, -12, 0, 14, 15, 16, 20], n) + rng.integers(-2, 3, n)
    fb = np.where(rng.integers(0, 4, n) == 0, rng.integers(0, 32, n),
                  target + 30 - np.maximum(fa, 1))
    a, b = _f16_bits(rng, fa, n), _f16_bits(rng, fb, n)
    # kind 0..2: b a short significand (1, 1.5, 1.25, ... times a power of two) so that a*b
    # has 12 or 13 bits: often an f16 midpoint
    short = rng.choice([0x000, 0x200, 0x100, 0x300, 0x080], n)
    kind = rng.integers(0, 8, n)
    b = np.where(kind <= 2, (b & 0xFC00) | short, b).astype(np.uint16)
    with np.errstate(all="ignore"):
        prod = (a.view(np.float16).astype(np.float64) * b.view(np.float16).astype(np.float64))
        tiny = np.abs(prod) * rng.choice([2.0 ** -26, 2.0 ** -30, 2.0 ** -24, 2.0 ** -40], n)
        tiny = np.where(rng.integers(0, 2, n) == 0, tiny, -tiny)
        small = tiny.astype(np.float16).view(np.uint16)
        cancel = (-prod).astype(np.float16).view(np.uint16)
    cancel = vectors.nudge(cancel, np.where(kind == 4, rng.integers(-2, 3, n), 0), vectors.F16)
    anywhere = _f16_bits(rng, rng.integers(0, 32, n), n)
    c = np.select([kind <= 2, kind <= 4, kind == 5], [small, cancel, rng.choice(
        F16_SPECIALS, n)], anywhere).astype(np.uint16)
    for x in (a, b, c):
        hit = rng.integers(0, 40, n) == 0
        x[hit] = rng.choice(F16_SPECIALS, int(hit.sum()))
    return a, b, c


def operand_sets(spelling, n):
    """(name, (a, b, c)) of each distribution, n triples each, seeded per spelling."""
    rng = np.random.default_rng(zlib.crc32(spelling.encode()))
    uniform = tuple(rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
                    for _ in range(3))
    normal_bf16 = tuple(rng.standard_normal(n).astype(np.float32).astype(ml_dtypes.bfloat16)
                        .view(np.uint16) for _ in range(3))
    normal_f16 = tuple((rng.standard_normal(n) * 8).astype(np.float16).view(np.uint16)
                       for _ in range(3))
    return [("uniform", uniform), ("normal bf16", normal_bf16), ("normal f16", normal_f16),
            ("hard bf16", hard_mix(rng, n)), ("hard f16", f16_hard_mix(rng, n))]


def _assert_same(spelling, what, ops, got, want):
    bad = np.flatnonzero(got != want)
    rows = [f"({', '.join(f'{int(o[i]):#06x}' for o in ops)}) -> fused {int(got[i]):#06x}, "
            f"composition {int(want[i]):#06x}" for i in bad[:5]]
    assert bad.size == 0, (f"{spelling}, {what}: {bad.size} of {got.size} differ\n"
                           + "\n".join(rows))


def test_the_default_policy_runs_the_fused_kernel():
    for sp in SPELLINGS:
        spec, kern = arith._form(sp).kernel()
        if kernels.as_f16_ok():
            assert isinstance(spec, kernels.AsF16)
            assert spec.mode == ptxfp.core.rounding.MODES[ptxfp.parse(sp).rounding]
            assert spec.nan_bits == policy.DEFAULT.canonical_nan_f16
        else:
            assert spec is None


@needs_fused
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_fused_equals_composition(spelling):
    for what, ops in operand_sets(spelling, 40_000):
        _assert_same(spelling, what, ops, ptxfp.execute(spelling, *ops),
                     composition(spelling, *ops))


@needs_fused
@pytest.mark.parametrize("spelling", SPELLINGS[::3])
def test_fused_on_every_triple_of_specials(spelling):
    a, b, c = (g.ravel() for g in np.meshgrid(F16_SPECIALS, F16_SPECIALS, F16_SPECIALS))
    _assert_same(spelling, "specials", (a, b, c), ptxfp.execute(spelling, a, b, c),
                 composition(spelling, a, b, c))


@pytest.mark.parametrize("spelling", SPELLINGS[::2])
def test_fused_against_mpfr(spelling):
    """A sample of every distribution against the MPFR oracle (independent of ptxfp)."""
    for what, ops in operand_sets(spelling, 400):
        got = ptxfp.execute(spelling, *ops)
        want = oracle.compute_array(spelling, *ops)
        _assert_same(spelling, what + " (MPFR)", ops, got, want)


@needs_fused
def test_policy_in_force_is_read():
    """The NaN of cvt.rn.f16.f32 comes from the policy (a per-form entry too); a policy whose
    binary32 NaNs are not NaNs gets the composition (NaN-ness would not carry through)."""
    ops = operand_sets("policy", 4_000)[0][1]
    sp = "fma.rm.relu.bf16"
    cases = [(dict(canonical_nan_f16=0x7E00), True),
             (dict(per_form=(("cvt.rn.f16.f32", "canonical_nan_f16", 0xFE01),)), True),
             (dict(widen_nan="payload"), True)]
    # (a binary32 canonical NaN that is not a NaN would need the composition: the policy
    # refuses such a value, PolicyError)
    for kw in (dict(canonical_nan_f32=0x3F800000),
               dict(per_form=(("fma.rm.f32", "canonical_nan_f32", 0),))):
        with pytest.raises(PolicyError):
            with policy.using(**kw):
                pass
    for kw, fused in cases:
        with policy.using(**kw) as pol:
            assert (arith._as_f16_key(ptxfp.parse(sp), pol) is not None) is fused, kw
            got = ptxfp.execute(sp, *ops)
            _assert_same(sp, str(kw), ops, got, composition(sp, *ops))
            if fused:
                assert ptxfp.execute(sp, 0x7C01, 0x3C00, 0x3C00) == pol.value(
                    "canonical_nan_f16", "cvt.rn.f16.f32")


def test_scalar_entry_points_agree():
    """Python ints, a typed bf16 scalar (the typed path once failed on these forms) and arrays
    give one answer."""
    sp = "fma.rz.bf16"
    a, b, c = 0x3FC0, 0x3FC0, 0x3FC0
    want = int(ptxfp.execute(sp, np.array([a], np.uint16), np.array([b], np.uint16),
                             np.array([c], np.uint16))[0])
    assert ptxfp.execute(sp, a, b, c) == want == oracle.compute(sp, a, b, c)
    x = np.uint16(a).view(ml_dtypes.bfloat16)
    got = ptxfp.execute(sp, x, x, x)
    assert type(got) is ml_dtypes.bfloat16 and int(np.asarray(got).view(np.uint16)) == want


@needs_fused
@pytest.mark.slow
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_fused_equals_composition_millions(spelling):
    """2**22 triples of each distribution (about 21 M per spelling), run as one array each
    (big enough to be split over threads), against the composition."""
    for what, ops in operand_sets(spelling + "/big", 1 << 22):
        _assert_same(spelling, what, ops, ptxfp.execute(spelling, *ops),
                     composition(spelling, *ops))
