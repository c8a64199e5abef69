"""The matrix forms' hardware harness (ptxfp.hw.mma): ptxas 13.0 accepts every generated kernel
for its target, ptxfp.check finds nothing wrong in them, the offset tables the kernels carry
put every element where the manual's fragment layout says (read back from the PTX text and
replayed here), the vectors have their families, and record() returns the '<spelling>/a'..'/d'
arrays."""

import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import ptxfp
from ptxfp.hw import mma as H
from ptxfp.tensor.fragments import fragment, scatter

PTXAS = shutil.which("ptxas")


@pytest.fixture(scope="module")
def kernels():
    return {s: H.kernel_for(s) for s in H.HARNESS_FORMS}


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_ptxas_accepts_every_kernel(kernels):
    with tempfile.TemporaryDirectory() as wd:
        for s, k in kernels.items():
            path = os.path.join(wd, "k.ptx")
            with open(path, "w") as f:
                f.write(k.ptx)
            r = subprocess.run([PTXAS, "-arch", k.target, path, "-o", os.devnull],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, (s, k.target, r.stderr[:2000])


def test_targets_and_threads(kernels):
    for s, k in kernels.items():
        if s.startswith("wgmma"):
            assert (k.target, k.threads) == ("sm_90a", 128)
        else:
            assert k.target == "sm_90" and k.threads == 32
    assert kernels["mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32"].version == (8, 7)


def test_check_finds_no_error_in_the_kernels(kernels):
    for s, k in kernels.items():
        rep = ptxfp.check(k.ptx)
        assert not rep.errors, (s, [str(e) for e in rep.errors][:5])


def _table(ptx, name):
    m = re.search(r"\.u32 " + name + r"\[(\d+)\] = \{([^}]*)\}", ptx)
    return np.array([int(x) for x in m.group(2).replace("\n", " ").split(",")], np.int64)


@pytest.mark.parametrize("spelling", [s for s in H.HARNESS_FORMS if s.startswith("mma")])
def test_kernel_tables_place_elements_as_the_fragments(spelling, kernels):
    """Replay the kernel's loads: register r of lane l packs, low to high, the elements at
    tab[l, r, j] of the instance's row-major array; that must be scatter() of the matrix."""
    k = kernels[spelling]
    rng = np.random.default_rng(1)
    for o in "abcd":
        fr = fragment(k.form, o)
        tab = _table(k.ptx, f"tab_{o}").reshape(32, fr.regs, fr.per_reg)
        shape = k.shapes[o]
        mat = rng.integers(0, 1 << min(fr.elem_bits, 62), size=shape, dtype=np.uint64)
        flat = mat.reshape(-1)
        regs = np.zeros((32, fr.regs), np.uint64)
        for j in range(fr.per_reg):
            regs |= flat[tab[:, :, j]] << np.uint64(j * fr.elem_bits)
        assert (regs == scatter(k.form, o, mat).astype(np.uint64)).all(), (spelling, o)


def test_wgmma_tables_cover_the_matrices(kernels):
    for s, k in kernels.items():
        if not s.startswith("wgmma"):
            continue
        f = k.form
        a = _table(k.ptx, "tab_a")
        d = _table(k.ptx, "tab_d")
        b = _table(k.ptx, "tab_b")
        assert sorted(a) == list(range(f.m * f.k)), s
        assert sorted(d) == list(range(f.m * f.n)), s
        eb = k.widths["b"] // 8
        assert len(set(b)) == f.k * f.n and all(x % eb == 0 for x in b), s
        # row r of warp w: the m16 A fragment of that warp, rows offset 16 w
        assert (a.reshape(4, -1) // f.k).min(axis=1).tolist() == [0, 16, 32, 48], s


def test_vectors_have_their_families():
    s = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    v = H.vectors(s, n=14, seed=3)
    assert v["a"].shape == (14, 16, 16) and v["a"].dtype == np.uint16
    assert v["b"].shape == (14, 16, 8) and v["c"].shape == (14, 16, 8)
    assert v["c"].dtype == np.uint32
    fams = [H.FAMILIES[i] for i in v["family"]]
    assert set(fams) == set(H.FAMILIES)
    sp = fams.index("special")
    a = v["a"][sp]
    assert ((a & 0x7F80) == 0x7F80).sum() >= 2          # a NaN and an inf among A's bf16
    sub = fams.index("subnormal")
    assert ((v["a"][sub] & 0x7F80) == 0).mean() > 0.9   # (mostly) subnormal bf16
    t = H.vectors("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", n=4, seed=0)
    assert (t["a"] & 0x1FFF).any()                      # tf32: the ignored low bits are set
    e = H.vectors("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", n=2)
    assert e["a"].shape == (2, 4, 8, 4)


def test_record_returns_the_arrays():
    s = "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"
    seen = {}

    def launch(kernel, arrays):
        seen.update(arrays)
        return np.zeros((5,) + kernel.shapes["d"], np.uint32)

    out = H.record(s, launch, n=5, seed=2)
    assert sorted(out) == sorted(f"{s}/{x}" for x in ("a", "b", "c", "d", "family"))
    assert out[f"{s}/a"].shape == (5, 64, 16) and out[f"{s}/d"].shape == (5, 64, 8)
    assert out[f"{s}/d"].dtype == np.uint32 and (seen["a"] == out[f"{s}/a"]).all()


def test_forms_without_a_kernel_say_so():
    with pytest.raises(H.MmaHarnessError):
        H.kernel_for("tcgen05.mma.cta_group::1.kind::f16.m128n16k16.f32.bf16.bf16")
    with pytest.raises(H.MmaHarnessError):
        H.kernel_for("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0")


def test_open_questions_are_vectors():
    """The three open tensor-core questions (docs/semantics.md) are families of --record's
    vectors: a zero's sign, C at the largest finite value, a zero factor beside 2^100."""
    import ml_dtypes
    s = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    v = H.vectors(s, 60, 0)
    fams = [H.FAMILIES[i] for i in v["family"]]
    assert {"zero_sign", "c_overflow", "zero_exponent"} <= set(fams)
    i = fams.index("zero_exponent")
    a = v["a"][i].view(ml_dtypes.bfloat16).astype(np.float64)
    b = v["b"][i].view(ml_dtypes.bfloat16).astype(np.float64)
    assert (a[:, 0] == 0).all() and (b[0, :] == 2.0 ** 100).all()
    i = fams.index("c_overflow")
    assert set(np.unique(v["c"][i] & 0x7FFFFFFF)) == {0x7F7FFFFF}
    i = fams.index("zero_sign")
    assert (v["c"][i][0] == 0x80000000).all() and (v["c"][i][1] == 0x80000000).all()
