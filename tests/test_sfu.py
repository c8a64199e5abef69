"""The SFU forms (ptxfp.ops.sfu): ptxfp's composition of the recorded SASS sequences and the MUFU
primitives against ptx-math's answers (recorded by tools/ptxm_compare.py --record from
ptx-math's C model, which was validated on sm_5x-sm_75 GPUs over all 2^32 inputs), the
generated kernels against the recorded SASS, and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.errors import NoModelError, SpellingError
from ptxfp.ops import sfu
from ptxfp.ops.sfu import kernels_gen, primitives, sass_data, sequence

DATA = Path(__file__).parent / "data" / "sfu_ptxm_sm75.npz"
#: sin and cos (ptx-math's sm_70 models, which it names sm_75's): every quadrant and table
#: segment of the reduced angle besides the spread of exponents
DATA_SINCOS = Path(__file__).parent / "data" / "sfu_ptxm_sm75_sincos.npz"
FORMS = {"ex2": "ex2.approx.f32", "rcp": "rcp.approx.f32", "rsqrt": "rsqrt.approx.f32",
         "sqrt": "sqrt.approx.f32", "lg2": "lg2.approx.f32", "sin": "sin.approx.f32",
         "cos": "cos.approx.f32"}
TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100")


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    out = {}
    for path in (DATA, DATA_SINCOS):
        with np.load(path) as z:
            out.update({k: z[k] for k in z.files})
    return out


@pytest.mark.parametrize("func", sorted(FORMS))
@pytest.mark.parametrize("target", ["sm_75", "sm_90"])
def test_equals_ptx_math(ref, func, target):
    x, want = ref[func + "_x"], ref[func + "_y"]
    assert x.size > 40000
    got = ptxfp.compute(FORMS[func], x, target=target)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(x[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("func", ["sin", "cos"])
def test_sincos_ftz_equals_ptx_math(ref, func):
    """sin/cos.approx.ftz.f32 is the same machine code as the non-.ftz form on every target
    (FMUL.RZ, then MUFU, which flushes), so ptx-math's answers hold for it too."""
    for t in TARGETS:
        assert [s for s in sass_data.SASS[(FORMS[func].replace(".f32", ".ftz.f32"), t)]
                if s.startswith(("FMUL", "MUFU"))] == \
            [s for s in sass_data.SASS[(FORMS[func], t)] if s.startswith(("FMUL", "MUFU"))]
    x, want = ref[func + "_x"], ref[func + "_y"]
    got = ptxfp.compute(FORMS[func].replace(".f32", ".ftz.f32"), x, target="sm_90")
    assert np.array_equal(got, want)


def test_kernels_match_recorded_sass():
    """kernels_gen.py is what sequence.generate makes of the recorded SASS (rerun
    tools/sfu_sequences.py --codegen after recording)."""
    src = Path(kernels_gen.__file__).read_text()
    assert src == sequence.generate(sass_data.SASS, sass_data.PTXAS)


def test_every_f32_form_and_target_recorded():
    for form in list(FORMS.values()) + ["div.approx.f32", "div.full.f32", "div.full.ftz.f32",
                                        "ex2.approx.ftz.f32", "rcp.approx.ftz.f32",
                                        "sin.approx.ftz.f32", "cos.approx.ftz.f32"]:
        for t in TARGETS:
            assert (form, t) in kernels_gen.KERNELS, (form, t)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sincos_sequence_is_the_recorded_one(op):
    """ptxas 13.5 (tools/sfu_sequences.py): FMUL.RZ by binary32 1/(2 pi) = 0x3e22f983, then
    MUFU.SIN/COS of the product, on every target; the kernel computes exactly that."""
    for ftz in ("", ".ftz"):
        for t in TARGETS:
            seq = [s for s in sass_data.SASS[(f"{op}.approx{ftz}.f32", t)]
                   if not s.startswith(("LDG", "STG"))]
            assert [s.split()[0] for s in seq] == ["FMUL.RZ", f"MUFU.{op.upper()}"], (t, seq)
            assert float(seq[0].split(", ")[-1]) == float(np.uint32(0x3E22F983).view(np.float32))
            body = sequence.translate(sass_data.SASS[(f"{op}.approx{ftz}.f32", t)])
            assert "fmul(x0, f32(0x3e22f983), False, True)" in body[1], body
            assert f"mufu_{op}(" in body[2], body


def test_ex2_sequence_is_the_recorded_one():
    seq = [s for s in sass_data.SASS[("ex2.approx.f32", "sm_90")] if "LDG" not in s]
    ops = [s.split()[1] if s.startswith("@") else s.split()[0] for s in seq]
    assert ops[:4] == ["FSETP.GEU.AND", "FMUL", "MUFU.EX2", "FMUL"]


def test_square_matches_table():
    x = np.arange(0, 1 << 17, 97)
    got = np.array([primitives.square(int(v)) for v in x])
    assert np.array_equal(got, primitives.SQ[x])


def test_ftz_forms_flush():
    # the PTX manual (9.7.3): .ftz flushes subnormal inputs and results to sign-preserving zero
    assert ptxfp.compute("rcp.approx.ftz.f32", 0x00000001) == 0x7F800000
    assert ptxfp.compute("rcp.approx.ftz.f32", 0x80000001) == 0xFF800000
    assert ptxfp.compute("ex2.approx.ftz.f32", 0xC2FE0000) == 0           # 2^-127
    assert 0 < ptxfp.compute("ex2.approx.f32", 0xC2FE0000) < 0x00800000   # kept: subnormal
    assert ptxfp.compute("lg2.approx.ftz.f32", 0x00000001) == 0xFF800000


def test_div_approx_large_divisor_is_zero():
    # PTX ISA div.approx.f32: for 2^126 < |b| < 2^128 the result is zero; div.full scales
    b = np.uint32(0x7F000000)                                             # 2^127
    assert ptxfp.compute("div.approx.f32", 0x3F800000, b) == 0
    assert ptxfp.compute("div.full.f32", 0x3F800000, b) == 0x00400000     # 2^-127


def test_typed_and_target():
    x = np.float32([0.5, 2.0])
    r = ptxfp.compute("ex2.approx.f32", x, target="sm_100")
    assert r.dtype == np.float32 and r[1] == 4.0
    with pytest.raises(SpellingError, match="sm_61"):
        ptxfp.compute("ex2.approx.f32", 1, target="sm_61")


@pytest.mark.parametrize("form", ["tanh.approx.f32", "ex2.approx.f16", "tanh.approx.bf16",
                                  "rcp.approx.ftz.f64", "rsqrt.approx.f64"])
def test_no_model_is_one_line(form):
    with pytest.raises(NoModelError) as e:
        ptxfp.compute(form, 0x3C00, target="sm_90")
    assert form in str(e.value) and "sm_90" in str(e.value) and "\n" not in str(e.value)


def test_note():
    assert sfu.note("ex2.approx.f32", "sm_90") == \
        "ex2: measured on sm_75 (ptx-math); assumed on sm_90"
    assert sfu.note("div.full.f32", "sm_75") == "rcp: measured on sm_75 (ptx-math)"
    assert sfu.note("sin.approx.f32", "sm_75") == "sin: measured on sm_75 (ptx-math)"
    assert sfu.note("cos.approx.ftz.f32", "sm_100") == \
        "cos: measured on sm_75 (ptx-math); assumed on sm_100"


def test_sincos_in_the_interpreter():
    """run: sin/cos.approx.f32 as compute computes them, on the run's target."""
    x = np.float32([0.5, -2.0, 100.0, 0.0]).view(np.uint32)
    r = ptxfp.run("sin.approx.f32 %f2, %f1;\ncos.approx.ftz.f32 %f3, %f1;", {"f1": x},
                  target="sm_90")
    assert np.array_equal(r["%f2"], ptxfp.compute("sin.approx.f32", x, target="sm_90"))
    assert np.array_equal(r["%f3"], ptxfp.compute("cos.approx.ftz.f32", x, target="sm_90"))


# ---- sin/cos .approx.ftz.2pi.f32 (PTX ISA 9.5): the argument in turns ------------------------

@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("target", ["sm_75", "sm_90"])
def test_2pi_is_mufu_of_the_argument_itself(op, target):
    """ptxas 13.5 compiles ``<op>.approx.ftz.2pi.f32`` to MUFU alone, and ``<op>.approx.f32`` to
    FMUL.RZ by binary32 1/(2 pi) then the same MUFU (sass_data, both recorded from the machine
    code).  So for y = RZ(x * 0x3e22f983), written here with NumPy (the float64 product of two
    binary32 values is exact; truncating it to binary32 is the RZ rounding), .2pi(y) must be
    ptx-math's answer for x, recorded in tests/data (every quadrant and table segment)."""
    form = f"{op}.approx.ftz.2pi.f32"
    seq = sass_data.SASS[(form, target)]
    assert [s.split()[0] for s in seq if "MUFU" in s or "FMUL" in s] == [f"MUFU.{op.upper()}"]
    d = np.load(DATA_SINCOS)
    x, want = d[f"{op}_x"], d[f"{op}_y"]
    c = np.float64(np.uint32(0x3E22F983).view(np.float32))
    p = x.view(np.float32).astype(np.float64) * c
    finite = np.isfinite(p) & (np.abs(p) >= 2.0 ** -126)   # normal products: the .ftz form
    mag = np.abs(p[finite])
    t = mag.astype(np.float32)                              # to nearest: step back if above
    t = np.where(t.astype(np.float64) > mag, np.nextafter(t, np.float32(0)), t)
    y = np.where(p[finite] < 0, -t, t).astype(np.float32).view(np.uint32)
    got = ptxfp.compute(form, y, target=target)
    assert finite.sum() > 100_000
    assert np.array_equal(got, want[finite]), np.flatnonzero(got != want[finite])[:5]


def test_2pi_needs_ftz_and_is_in_the_interpreter():
    with pytest.raises(SpellingError, match=r"\.2pi"):
        ptxfp.parse("sin.approx.2pi.f32")
    y = np.float32([0.25, -0.125, 3.5, 0.0]).view(np.uint32)
    r = ptxfp.run("sin.approx.ftz.2pi.f32 %f2, %f1;\ncos.ftz.approx.2pi.f32 %f3, %f1;",
                  {"f1": y}, target="sm_90")
    assert np.array_equal(r["%f2"], ptxfp.compute("sin.approx.ftz.2pi.f32", y, target="sm_90"))
    assert np.array_equal(r["%f3"], ptxfp.compute("cos.approx.ftz.2pi.f32", y, target="sm_90"))
    assert r["%f2"][0] == 0x3F800000                        # sin of a quarter turn: 1.0
