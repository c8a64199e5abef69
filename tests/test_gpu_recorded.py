"""ptxfp against an H100's own answers (tests/data/gpu/h100-2026-11-27/README.md): under the
default policy every recorded result must come out bit for bit, on every form the GPU ran.

The answers are measurements (independent of ptxfp); a divergence names the form and its first
mismatching vectors.  The other readings stay selectable with ``policy.using(...)`` (the tests
at the end: each is checked against the GPU's bits or the MPFR oracle, tests/oracle.py).
"""

import json
import pathlib

import numpy as np
import pytest

import oracle
import ptxfp
from ptxfp import policy
from ptxfp.dispatch import compute

DATA = pathlib.Path(__file__).resolve().parent / "data" / "gpu" / "h100-2026-11-27"
FILES = sorted(DATA.glob("gpu_*.npz"))


def _forms():
    out = []
    for f in FILES:
        with np.load(f) as z:
            out += [(f.name, k[:-2]) for k in z.files if k.endswith("/d")]
    return out


FORMS = _forms()
#: the vectors of the 8 cvt.{rn,rz,rm,rp}.ftz{.sat}.f16.f32 forms in gpu_cvt.npz
TOTAL_CVT_FTZ_F16 = 17_352
_cache = {}


def _load(name):
    z = _cache.get(name)
    if z is None:
        with np.load(DATA / name) as npz:
            z = _cache[name] = {k: npz[k] for k in npz.files}
    return z


def _case(name, spelling):
    """(the operand arrays in PTX order, the GPU's result bits) of one recorded form."""
    z = _load(name)
    ins = ptxfp.parse(spelling)
    return [z[f"{spelling}/{n}"] for n in ins.operand_names], z[f"{spelling}/d"]


def _mismatches(spelling, ops, want, got, k=5):
    bad = np.flatnonzero(got != want)
    rows = [" ".join(f"{n}={int(o[i]):#x}" for n, o in zip(ptxfp.parse(spelling).operand_names,
                                                              ops))
            + f": GPU {int(want[i]):#x}, ptxfp {int(got[i]):#x}" for i in bad[:k]]
    return bad.size, rows


def test_the_recorded_answers_are_all_here():
    """The files hold what their README says: 298 forms, 1,182,831 vectors, from the H100."""
    total = 0
    for f in FILES:
        z = _load(f.name)
        meta = json.loads(str(z["meta"]))
        assert meta["gpu"] == "NVIDIA H100 80GB HBM3" and meta["sm"] == 90
        assert meta["ptxfp_source"] == "b318b5650e7d292e"
        total += sum(v.size for k, v in z.items() if k.endswith("/d"))
    assert (len(FILES), len(FORMS), total) == (4, 298, 1_182_831)


@pytest.mark.parametrize("name, spelling", FORMS, ids=[s for _, s in FORMS])
def test_ptxfp_gives_the_gpus_bits(name, spelling):
    ops, want = _case(name, spelling)
    assert policy.current() == policy.DEFAULT
    got = np.asarray(compute(spelling, *ops))
    assert got.dtype == want.dtype
    n, rows = _mismatches(spelling, ops, want, got)
    assert n == 0, f"{spelling}: {n} of {want.size} recorded vectors differ:\n" + "\n".join(rows)


# --- what the defaults say per form, on the GPU's own bits -------------------------------------

def test_cvt_ftz_f16_f32_is_the_form_without_ftz():
    """On each of the 8 cvt.*.ftz{.sat}.f16.f32 forms the GPU's answers are those of the same
    form without .ftz (the policy's cvt_ftz_input = "ignored" entries), and differ from the
    manual's flush on some of them (.rm/.rp of a subnormal input)."""
    total = flushed_differs = 0
    for mode in ("rn", "rz", "rm", "rp"):
        for sat in ("", ".sat"):
            sp = f"cvt.{mode}.ftz{sat}.f16.f32"
            ops, want = _case("gpu_cvt.npz", sp)
            plain = np.asarray(ptxfp.convert(f"cvt.{mode}{sat}.f16.f32", *ops))
            assert np.array_equal(plain, want), sp
            assert policy.DEFAULT.value("cvt_ftz_input", sp) == policy.CVT_FTZ_IGNORED
            with policy.using(cvt_ftz_input="flush"):
                flushed_differs += int(np.count_nonzero(
                    np.asarray(ptxfp.convert(sp, *ops)) != want))
            total += want.size
    assert total == TOTAL_CVT_FTZ_F16                      # every vector of the 8 forms
    assert flushed_differs > 0


def test_widen_nan_per_form_on_the_gpus_bits():
    """cvt{.rnd}.f32.bf16 keeps a NaN's bits (<< 16, a signalling NaN stays signalling); the
    .ftz bf16 forms and every cvt.f32.f16 give the canonical NaN: read off the recorded NaNs."""
    z = _load("gpu_cvt.npz")
    seen = 0
    for sp in [k[:-2] for k in z if (k.endswith(".f32.bf16/d") or k.endswith(".f32.f16/d"))
               and ".sat." not in k]:                 # .sat: a NaN gives +0
        a, d = z[f"{sp}/a"].astype(np.uint32), z[f"{sp}/d"]
        bf16 = sp.endswith("bf16")
        nan = ((a & 0x7C00) == 0x7C00) & ((a & 0x3FF) != 0) if not bf16 else \
              ((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)
        payload = bf16 and ".ftz" not in sp
        want = (a[nan] << 16) if payload else np.full(int(nan.sum()), 0x7FFFFFFF, np.uint32)
        assert np.array_equal(d[nan], want), sp
        expect = policy.WIDEN_PAYLOAD if payload else policy.WIDEN_CANONICAL
        assert policy.DEFAULT.value("widen_nan", sp) == expect, sp
        seen += int(nan.sum())
    assert seen > 100


# --- the other readings stay selectable ---------------------------------------------------------

def test_tininess_readings_stay_selectable():
    # 0x0400 * 0x3BFF = 2**-14 * (1 - 2**-11): below 2**-14 exactly and at 11 bits unbounded,
    # 2**-14 once rounded into f16 (the GPU: +0)
    assert compute("mul.rn.ftz.f16", 0x0400, 0x3BFF) == 0x0000
    with policy.using(ftz_tininess="after_rounding"):
        assert compute("mul.rn.ftz.f16", 0x0400, 0x3BFF) == 0x0400
    with policy.using(ftz_tininess="before_rounding"):
        assert compute("mul.rn.ftz.f16", 0x0400, 0x3BFF) == 0x0000
    # a recorded f32 vector that rules out "before rounding": the exact product is
    # 0.99999999 * 2**-126, the GPU gives 2**-126 (rounded up, .rp, at 24 bits unbounded)
    ops, want = _case("gpu_addsubmul.npz", "mul.rp.ftz.f32")
    i = int(np.flatnonzero((ops[0] == 0x239BD33E) & (ops[1] == 0x1C524976))[0])
    assert int(want[i]) == 0x00800000
    assert compute("mul.rp.ftz.f32", 0x239BD33E, 0x1C524976) == 0x00800000
    for reading in policy.TININESS:
        with policy.using(ftz_tininess=reading) as pol:
            got = compute("mul.rp.ftz.f32", 0x239BD33E, 0x1C524976)
            assert got == oracle.compute("mul.rp.ftz.f32", 0x239BD33E, 0x1C524976, policy=pol)
            assert (got == 0) is (reading == "before_rounding")


def test_widen_nan_and_cvt_ftz_stay_selectable():
    assert ptxfp.convert("cvt.f32.bf16", 0x7F81) == 0x7F810000
    assert ptxfp.convert("cvt.ftz.f32.bf16", 0x7F81) == 0x7FFFFFFF
    with policy.using(widen_nan="canonical"):
        assert ptxfp.convert("cvt.f32.bf16", 0x7F81) == 0x7FFFFFFF
    with policy.using(widen_nan="quiet"):
        assert ptxfp.convert("cvt.ftz.f32.bf16", 0x7F81) == 0x7FC10000
    assert ptxfp.convert("cvt.rm.ftz.f16.f32", 0x80000001) == 0x8001
    with policy.using(cvt_ftz_input="flush"):
        assert ptxfp.convert("cvt.rm.ftz.f16.f32", 0x80000001) == 0x8000


BF16_DIRECTED = [s for _, s in FORMS if s.startswith(("fma.rz", "fma.rm", "fma.rp"))
                 and s.endswith(("bf16", "bf16x2"))]


def test_the_24_undocumented_bf16_fma_spellings_are_recorded():
    assert len(BF16_DIRECTED) == 24


@pytest.mark.parametrize("spelling", BF16_DIRECTED[::5])
def test_bf16_fma_as_spelled_is_the_directed_rounding(spelling):
    """bf16_fma_directed="as_spelled": the rounding the spelling names, as the MPFR oracle
    computes it, which is not what the GPU gives."""
    ops, want = _case("gpu_fma.npz", spelling)
    ops = [o[:600] for o in ops]
    with policy.using(bf16_fma_directed="as_spelled") as pol:
        got = np.asarray(compute(spelling, *ops))
        ref = oracle.compute_array(spelling, *ops, policy=pol)
    assert np.array_equal(got, ref)
    assert np.count_nonzero(got != want[:600]) > 0
