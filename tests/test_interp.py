"""The PTX interpreter: every example block of the spec pages runs, and its results agree with
independent sources; mov/ld/st/param plumbing; integer glue; guards and branches; errors.

Expected bits come from NumPy float16 (.rn add/mul), tests/oracle.py (MPFR; the forms it covers
are oracle-tested there), plain bit arithmetic written here (pack/unpack, little-endian memory,
integer ops with Python ints, round-to-nearest-even of f32 to bf16 and NumPy's correctly rounded
float32 -> float16 cast for cvt.rn), never from ptxfp itself.
"""

import pathlib

import numpy as np
import oracle as O
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NumPy float16 overflow
import ptxfp
from ptxfp.ptx.interp import (MEMORY_KEY, InterpError, UninitializedRegister,
                              UnsupportedInstruction, inputs_needed, run_detailed)

SPEC = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "spec"
if not SPEC.exists():
    SPEC = pathlib.Path("/work/shared/spec")
DATA = pathlib.Path(__file__).resolve().parent / "data"
EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
N = 64


def example_blocks():
    """(file, line, text) of every 'Examples' code block of the spec pages (``` fences in the
    markdown pages, a 'ptx' line up to the next blank line in the plain-text one)."""
    out = []
    for p in sorted(SPEC.glob("0*.txt")):
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "Examples":
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j < len(lines) and lines[j].strip() in ("```", "ptx"):
                    fence = lines[j].strip() == "```"
                    k, body = j + 1, []
                    while k < len(lines) and (lines[k].strip() != "```" if fence
                                              else lines[k].strip()):
                        body.append(lines[k])
                        k += 1
                    out.append((p.name, i + 1, "\n".join(body)))
                    i = k
            i += 1
    return out


BLOCKS = example_blocks()


def f16_add_np(a, b):
    """NumPy float16 addition (correctly rounded), NaN as the policy's canonical NaN."""
    r = (a.view(np.float16) + b.view(np.float16))
    bits = r.view(np.uint16).copy()
    bits[np.isnan(r)] = ptxfp.POLICY.canonical_nan_f16
    return bits


def f16_mul_np(a, b):
    r = (a.view(np.float16) * b.view(np.float16))
    bits = r.view(np.uint16).copy()
    bits[np.isnan(r)] = ptxfp.POLICY.canonical_nan_f16
    return bits


def f32_to_f16_np(x):
    """cvt.rn.f16.f32 by NumPy's correctly rounded cast."""
    r = x.view(np.float32).astype(np.float16)
    bits = r.view(np.uint16).copy()
    bits[np.isnan(r)] = ptxfp.POLICY.canonical_nan_f16
    return bits


def f32_to_bf16_rn(x):
    """cvt.rn.bf16.f32 by integer round-to-nearest-even on the bits (finite inputs)."""
    x = x.astype(np.uint64)
    r = (x + 0x7FFF + ((x >> 16) & 1)) >> 16
    nan = (x & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ptxfp.POLICY.canonical_nan_bf16, r).astype(np.uint16)


def random_inputs(text, rng, n=N):
    """Random bits for every input of `text`; 'addr' gets per-thread 16-byte-aligned
    addresses into a 64*16-byte memory."""
    out = {}
    for name, info in inputs_needed(text).items():
        if name == "addr":
            out[name] = np.arange(n, dtype=np.uint64) * 16
        else:
            out[name] = rng.integers(0, 1 << info.width, size=n, dtype=np.uint64)
    return out


def test_spec_has_example_blocks():
    assert len(BLOCKS) >= 9
    assert any("add.rz.f32.bf16.sat" in b for _, _, b in BLOCKS)


@pytest.mark.parametrize("name, line, text", BLOCKS, ids=[f"{n}:{ln}" for n, ln, _ in BLOCKS])
def test_spec_example_runs(name, line, text):
    rng = np.random.default_rng(line)
    inputs = random_inputs(text, rng)
    mem = rng.integers(0, 256, size=N * 16, dtype=np.uint8) if "addr" in inputs else None
    res = ptxfp.run(text, inputs, memory=mem)
    written = {i.operands[0].name for i in ptxfp.ptx.read(text).statements
               if i.operands and hasattr(i.operands[0], "name")}
    assert written <= set(res), written - set(res)
    for k, v in res.items():
        if k != MEMORY_KEY:
            assert v.shape == (N,), k
    if mem is not None:
        assert np.array_equal(res[MEMORY_KEY], mem)          # loads only; memory unchanged


def _block(word):
    return next(b for _, _, b in BLOCKS if word in b)


def test_spec_add_example_values():
    text = _block("SIMD f16 addition")
    rng = np.random.default_rng(1)
    x = random_inputs(text, rng)
    mem = rng.integers(0, 256, size=N * 16, dtype=np.uint8)
    r = ptxfp.run(text, x, memory=mem)
    u16 = {k: np.asarray(v, dtype=np.uint64).astype(np.uint16) for k, v in x.items()}
    u32 = {k: np.asarray(v, dtype=np.uint64).astype(np.uint32) for k, v in x.items()}
    assert np.array_equal(r["d0"], f16_add_np(u16["a0"], u16["b0"]))
    assert np.array_equal(r["d1"], f16_add_np(u16["a1"], u16["b1"]))
    assert np.array_equal(r["bd0"], O.compute_array("add.bf16", u16["ba0"], u16["bb0"]))
    # SIMD f16: cvt.rn from the input f0..f3 (f0/f1 are overwritten by the loads later)
    h = [f32_to_f16_np(u32[f"f{i}"]) for i in range(4)]
    for i in range(4):
        assert np.array_equal(r[f"h{i}"], h[i])
    p1 = h[0].astype(np.uint32) | (h[1].astype(np.uint32) << 16)    # mov: a -> bits [15:0]
    p2 = h[2].astype(np.uint32) | (h[3].astype(np.uint32) << 16)
    assert np.array_equal(r["p1"], p1) and np.array_equal(r["p2"], p2)
    assert np.array_equal(r["p3"], O.compute_array("add.f16x2", p1, p2))
    # cvt.rn.bf16x2.f32 p4, f4, f5: f4 -> upper half, f5 -> lower half
    p4 = (f32_to_bf16_rn(u32["f4"]).astype(np.uint32) << 16) | f32_to_bf16_rn(u32["f5"])
    assert np.array_equal(r["p4"], p4)
    # the loads: little-endian words at addr, addr+4 ...
    words = mem.view(np.uint32).reshape(N, 4)
    for i, reg in enumerate(("f0", "f1", "f3", "f4")):
        assert np.array_equal(r[reg], words[:, i]), reg
    assert np.array_equal(r["f2"], O.compute_array("add.f16x2", words[:, 0], words[:, 1]))
    assert np.array_equal(r["f5"], O.compute_array("add.bf16x2", words[:, 2], words[:, 3]))


def test_spec_mul_example_values():
    text = _block("SIMD f16 multiplication")
    rng = np.random.default_rng(2)
    x = random_inputs(text, rng)
    r = ptxfp.run(text, x, memory=np.zeros(N * 16, np.uint8))
    u16 = {k: np.asarray(v, dtype=np.uint64).astype(np.uint16) for k, v in x.items()}
    assert np.array_equal(r["d0"], f16_mul_np(u16["a0"], u16["b0"]))
    assert np.array_equal(r["bd1"], O.compute_array("mul.rn.bf16", u16["ba1"], u16["bb1"]))
    assert np.array_equal(r["p6"], O.compute_array("mul.bf16x2", r["p4"], r["p5"]))


def test_spec_fma_example_values():
    text = _block("scalar f16 fused multiply-add")
    rng = np.random.default_rng(3)
    x = random_inputs(text, rng)
    x["a1"][:4] = 0x7FF7                                          # some OOB-NaN operands
    mem = rng.integers(0, 256, size=N * 16, dtype=np.uint8)
    r = ptxfp.run(text, x, memory=mem)
    u16 = {k: np.asarray(v, dtype=np.uint64).astype(np.uint16) for k, v in x.items()}
    abc = (u16["a1"], u16["b1"], u16["c1"])
    assert np.array_equal(r["d0"], O.compute_array("fma.rn.f16", u16["a0"], u16["b0"], u16["c0"]))
    assert np.array_equal(r["d1"], O.compute_array("fma.rn.oob.relu.bf16", *abc))  # last write
    words = mem.view(np.uint32).reshape(N, 4)
    # the block's last write to f2 is the .oob.relu bf16x2 form
    assert np.array_equal(r["f2"], O.compute_array("fma.rn.oob.relu.bf16x2", words[:, 0],
                                                   words[:, 1], words[:, 1]))
    assert np.array_equal(r["p3"], O.compute_array("fma.rn.oob.relu.f16x2", r["p1"], r["p2"],
                                                   r["p2"]))


@pytest.mark.parametrize("word, form, ops", [
    ("add.rz.f32.bf16.sat", "add.rz.sat.f32.bf16", ("fa", "fc")),
    ("sub.rz.f32.f16.sat", "sub.rz.sat.f32.f16", ("ha", "fc")),
    ("fma.rz.sat.f32.f16.sat", "fma.rz.sat.f32.f16", ("ha", "hb", "fc")),
])
def test_spec_mixed_examples_values(word, form, ops):
    # The mixed add example uses the undeclared 'fa' next to '.reg .b16 ba': snippet mode.
    for text in [b for _, _, b in BLOCKS if word in b]:
        rng = np.random.default_rng(4)
        need = inputs_needed(text)
        assert set(need) == set(ops)
        assert need[ops[0]].type in ("f16", "bf16") and need["fc"].type == "f32"
        x = random_inputs(text, rng)
        # interesting values too: 0.5 + 0.25, 1 - 2, NaN
        r = ptxfp.run(text, x)
        args = [np.asarray(x[o], np.uint64).astype(np.uint32 if o == "fc" else np.uint16)
                for o in ops]
        assert np.array_equal(r["fd"], O.compute_array(form, *args))


def test_mixed_add_reads_c():
    # 0.5 (bf16) + 0.25 (f32) = 0.75; and 0.5 - 1.0 saturates to 0
    text = ".reg .f32 fc, fd;\n.reg .b16 ba;\nadd.rz.f32.bf16.sat fd, fa, fc;"
    r = ptxfp.run(text, {"fa": 0x3F00, "fc": np.array([0x3E800000, 0xBF800000], np.uint32)})
    assert list(r["fd"]) == [0x3F400000, 0]


def test_nan_switch_per_format_in_programs():
    """A program's NaN results follow the field of each instruction's result format: a flip
    of canonical_nan_bf16 alone leaves the f16 and f32 results at 0x7FFF / 0x7FFFFFFF, and a
    flip of canonical_nan_f16 alone leaves the bf16 ones."""
    text = """
    add.rn.bf16 bd, ba, bb;
    add.rn.f16 hd, ha, hb;
    fma.rn.bf16x2 pd, pa, pb, pc;
    cvt.rn.bf16.f32 bc, f;
    cvt.rn.f16.f32 hc, f;
    add.rn.f32.bf16 fd, ba, f;
    """
    inputs = {"ba": 0x7F80, "bb": 0xFF80, "ha": 0x7C00, "hb": 0xFC00, "f": 0x7FC00001,
              "pa": 0x7F803F80, "pb": 0x3F803F80, "pc": 0xFF803F80}
    regs = ("bd", "hd", "pd", "bc", "hc", "fd")
    for changes, want in (
            (dict(canonical_nan_bf16=0x7FC0),
             [0x7FC0, 0x7FFF, 0x7FC04000, 0x7FC0, 0x7FFF, 0x7FFFFFFF]),
            (dict(canonical_nan_f16=0x7E00),
             [0x7FFF, 0x7E00, 0x7FFF4000, 0x7FFF, 0x7E00, 0x7FFFFFFF])):
        with ptxfp.policy.using(**changes):
            r = ptxfp.run(text, inputs)
        assert [int(r[k][0]) for k in regs] == want, changes


def test_widen_nan_policy_reaches_cvt_in_programs():
    """The interpreter's widening cvt follows policy.widen_nan (hand-worked bits: policy.py);
    the mixed forms' NaN result stays canonical_nan_f32 under every reading."""
    text = """
    cvt.f32.f16 w, h;
    cvt.f32.bf16 v, b;
    add.rn.f32.f16 m, h, f;
    """
    inputs = {"h": np.array([0x7C01, 0xFC01, 0x7E00], np.uint16),
              "b": np.array([0x7F81, 0xFFC1, 0x7F81], np.uint16), "f": 0x3F800000}
    canon = ptxfp.POLICY.canonical_nan_f32
    for setting, w, v in (
            ("canonical", [canon] * 3, [canon] * 3),
            ("payload", [0x7F802000, 0xFF802000, 0x7FC00000],
             [0x7F810000, 0xFFC10000, 0x7F810000]),
            ("quiet", [0x7FC02000, 0xFFC02000, 0x7FC00000],
             [0x7FC10000, 0xFFC10000, 0x7FC10000])):
        with ptxfp.policy.using(widen_nan=setting):
            r = ptxfp.run(text, inputs)
        assert [int(x) for x in r["w"]] == w, setting
        assert [int(x) for x in r["v"]] == v, setting
        assert [int(x) for x in r["m"]] == [canon] * 3, setting


# --- plumbing ---------------------------------------------------------------------------------

def test_mov_pack_unpack_and_immediates():
    text = """
    mov.b16 h0, 0x3C00;
    mov.b16 h1, -1;
    mov.b32 p, {h0, h1};          // h0 -> bits [15:0]
    mov.b32 {lo, hi}, q;
    mov.b64 w, {p, q};
    mov.b64 {w0, _}, w;
    mov.f32 f, 0f3F800000;
    mov.f32 g, 1.5;
    mov.f32 t, 0.1;               // a decimal literal, rounded to nearest f32
    mov.b32 r, p;
    mov.u32 tid, %tid.x;
    mov.u32 nt, %ntid.x;
    """
    r = ptxfp.run(text, {"q": np.array([0x12345678, 0x9ABCDEF0], np.uint32)})
    assert list(r["p"]) == [0xFFFF3C00] * 2 and list(r["r"]) == [0xFFFF3C00] * 2
    assert list(r["lo"]) == [0x5678, 0xDEF0] and list(r["hi"]) == [0x1234, 0x9ABC]
    assert [int(v) for v in r["w"]] == [0x12345678FFFF3C00, 0x9ABCDEF0FFFF3C00]
    assert r["w"].dtype == np.uint64 and list(r["w0"]) == [0xFFFF3C00] * 2
    assert list(r["f"]) == [0x3F800000] * 2 and list(r["g"]) == [0x3FC00000] * 2
    assert list(r["t"]) == [np.float32(0.1).view(np.uint32)] * 2
    assert list(r["tid"]) == [0, 1] and list(r["nt"]) == [2, 2]
    assert r["h0"].dtype == np.uint16 and r["p"].dtype == np.uint32


def test_cvt_in_programs():
    text = """
    cvt.rn.f16x2.f32 p, a, b;
    cvt.f32.f16 w, h;
    cvt.rz.relu.satfinite.bf16.f32 s, a;
    cvt.u64.u32 z, u;
    cvt.s64.s32 sx, u;
    cvt.u16.u32 tr, u;
    """
    a = np.array([0x3F800000, 0xC7800000], np.uint32)           # 1.0, -65536
    r = ptxfp.run(text, {"a": a, "b": 0x40000000, "h": 0x3C00, "u": 0xFFFFFFFE})
    assert list(r["p"]) == [(0x3C00 << 16) | 0x4000, (0xFC00 << 16) | 0x4000]
    assert list(r["w"]) == [0x3F800000] * 2
    assert list(r["s"]) == [0x3F80, 0]
    assert int(r["z"][0]) == 0xFFFFFFFE and int(r["sx"][0]) == 0xFFFFFFFFFFFFFFFE
    assert int(r["tr"][0]) == 0xFFFE


def test_ld_st_global_memory():
    text = """
    ld.global.b32 x, [addr];
    ld.global.b16 h, [addr+6];
    ld.global.v2.b16 {v0, v1}, [addr+4];
    add.rn.f16 s, h, h;
    st.global.b16 [addr+2], s;
    st.global.b32 [addr+8], x;
    """
    mem = bytes(range(32))
    addr = np.array([0, 16], np.uint64)
    r = ptxfp.run(text, {"addr": addr}, memory=mem)
    assert mem == bytes(range(32))                              # the caller's bytes untouched
    out = r[MEMORY_KEY]
    assert list(r["x"]) == [0x03020100, 0x13121110]
    assert list(r["h"]) == [0x0706, 0x1716]
    assert list(r["v0"]) == [0x0504, 0x1514] and list(r["v1"]) == [0x0706, 0x1716]
    s = O.compute_array("add.f16", np.array([0x0706, 0x1716]), np.array([0x0706, 0x1716]))
    assert list(out[2:4]) == [int(s[0]) & 0xFF, int(s[0]) >> 8]
    assert list(out[18:20]) == [int(s[1]) & 0xFF, int(s[1]) >> 8]
    assert bytes(out[8:12]) == bytes([0, 1, 2, 3]) and bytes(out[24:28]) == bytes(range(16, 20))


def test_st_same_address_highest_thread_wins():
    r = ptxfp.run("mov.u32 t, %tid.x;\nst.global.u32 [0], t;", threads=5, memory=bytes(8))
    assert bytes(r[MEMORY_KEY][:4]) == (4).to_bytes(4, "little")


def test_memory_errors():
    with pytest.raises(InterpError, match="outside the 8-byte memory") as e:
        ptxfp.run("ld.global.b32 x, [a+8];", {"a": 0}, memory=bytes(8))
    assert (e.value.line, e.value.col) == (1, 18)
    with pytest.raises(InterpError, match="not 4-byte aligned"):
        ptxfp.run("ld.global.b32 x, [a];", {"a": 2}, memory=bytes(8))
    with pytest.raises(InterpError, match="needs memory"):
        ptxfp.run("ld.global.b32 x, [a];", {"a": 0})


def test_module_params_and_axpy():
    text = (EXAMPLES / "axpy.ptx").read_text()
    need = inputs_needed(text)
    assert [(k, v.kind) for k, v in need.items()] == [
        ("axpy_x", "param"), ("axpy_y", "param"), ("axpy_a", "param"), ("axpy_n", "param")]
    n, threads = 37, 40
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    y = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    mem = np.zeros(256, np.uint8)
    mem[:2 * n] = x.view(np.uint8)
    mem[128:128 + 2 * n] = y.view(np.uint8)
    a = 0x3F82
    r = ptxfp.run(text, {"axpy_x": 0, "axpy_y": 128, "axpy_a": a, "axpy_n": n},
                  memory=mem, threads=threads)
    got = r[MEMORY_KEY][128:128 + 2 * n].view(np.uint16)
    assert np.array_equal(got, O.compute_array("fma.rn.bf16", np.full(n, a), x, y))
    assert not r[MEMORY_KEY][128 + 2 * n:].any()                 # threads past n stored nothing
    assert list(r["%p1"][n - 1:n + 1]) == [False, True]
    # registers set only by threads that did not branch read 0 elsewhere
    assert r["%h4"][threads - 1] == 0


def test_nvcc_output_runs():
    """Real nvcc output (tests/data/ptx): params, %tid, address arithmetic, the bounds-check
    branch, and the inline-asm braces."""
    text = (DATA / "ptx" / "half_arith_sm90.ptx").read_text()
    n, threads = 20, 24
    rng = np.random.default_rng(6)
    a, b, c = (rng.integers(0, 1 << 16, threads, dtype=np.uint16) for _ in range(3))
    mem = np.zeros(2048, np.uint8)
    for base, v in ((0, a), (256, b), (512, c)):
        mem[base:base + 2 * threads] = v.view(np.uint8)
    r = ptxfp.run(text, {"f16_scalar_param_0": 0, "f16_scalar_param_1": 256,
                         "f16_scalar_param_2": 512, "f16_scalar_param_3": 1024,
                         "f16_scalar_param_4": n}, memory=mem, threads=threads,
                  entry="f16_scalar")
    out = r[MEMORY_KEY][1024:1024 + 16 * n].view(np.uint16).reshape(n, 8)
    forms = ["add.f16", "sub.f16", "mul.f16", "mul.rn.f16", "fma.rn.f16", "add.sat.f16",
             "fma.rn.sat.f16", "add.rn.f16"]
    for k, f in enumerate(forms):
        ops = (a[:n], b[:n], c[:n]) if f.startswith("fma") else (a[:n], b[:n])
        assert np.array_equal(out[:, k], O.compute_array(f, *ops)), f


# --- integer glue, guards, branches ------------------------------------------------------------

def test_integer_ops_against_python():
    text = """
    mad.lo.s32 m, a, b, c;
    mul.wide.s32 w, a, b;
    mul.wide.u32 wu, a, b;
    mul.lo.u32 lo, a, b;
    add.s64 s, w, 5;
    sub.u32 d, a, b;
    shl.b32 l, a, 3;
    shr.s32 rs, a, 4;
    shr.u32 ru, a, 4;
    and.b32 an, a, 0xFF;
    or.b32 o, a, b;
    xor.b32 x, a, b;
    not.b32 nt, a;
    neg.s32 ng, a;
    min.s32 mn, a, b;
    max.u32 mx, a, b;
    setp.lt.s32 p|q, a, b;
    selp.b32 sel, a, b, p;
    """
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 32, 50, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, 50, dtype=np.uint64)
    c = rng.integers(0, 1 << 32, 50, dtype=np.uint64)
    r = ptxfp.run(text, {"a": a, "b": b, "c": c})
    M32, M64 = (1 << 32) - 1, (1 << 64) - 1

    def s32(v):
        v = int(v)
        return v - (1 << 32) if v >> 31 else v
    for i in range(50):
        A, B, C = int(a[i]), int(b[i]), int(c[i])
        sA, sB = s32(A), s32(B)
        assert int(r["m"][i]) == (sA * sB + s32(C)) & M32
        assert int(r["w"][i]) == (sA * sB) & M64
        assert int(r["wu"][i]) == A * B
        assert int(r["lo"][i]) == (A * B) & M32
        assert int(r["s"][i]) == (sA * sB + 5) & M64
        assert int(r["d"][i]) == (A - B) & M32
        assert int(r["l"][i]) == (A << 3) & M32
        assert int(r["rs"][i]) == (sA >> 4) & M32
        assert int(r["ru"][i]) == A >> 4
        assert int(r["an"][i]) == A & 0xFF and int(r["o"][i]) == A | B
        assert int(r["x"][i]) == A ^ B and int(r["nt"][i]) == ~A & M32
        assert int(r["ng"][i]) == -sA & M32
        assert int(r["mn"][i]) == min(sA, sB) & M32 and int(r["mx"][i]) == max(A, B)
        assert bool(r["p"][i]) == (sA < sB) and bool(r["q"][i]) == (not sA < sB)
        assert int(r["sel"][i]) == (A if sA < sB else B)


def test_guards_and_forward_branch():
    text = """
    setp.ge.u32 p, t, 2;
    @p bra SKIP;
    add.f16 x, a, a;
    @!p mov.b16 y, 0x1234;
    SKIP:
    mov.b16 z, a;
    @p ret;
    mov.b16 w, 7;
    """
    r = run_detailed(text, {"t": np.arange(4), "a": 0x3C00})
    assert list(r.registers["x"]) == [0x4000, 0x4000, 0, 0]
    assert list(r.registers["y"]) == [0x1234, 0x1234, 0, 0]
    assert list(r.registers["z"]) == [0x3C00] * 4
    assert list(r.registers["w"]) == [7, 7, 0, 0]
    assert r.types["x"] == "f16" and r.threads == 4


def test_block_scoped_registers_and_predicate_logic():
    # PTX scopes .reg by block (nvcc's inline asm reuses names): the second 'lo' is another
    # register, reported under its declaration's position.
    text = """
    .reg .b32 r;
    { .reg .b16 lo, hi;
      mov.b32 {lo, hi}, r;
      add.f16 lo, lo, hi;
      mov.b32 r, {lo, hi};
    }
    { .reg .b32 lo;
      mov.b32 lo, r;
    }
    setp.eq.u32 p, r, 0;
    not.pred np, p;
    and.pred a, p, np;
    or.pred o, p, np;
    """
    r = run_detailed(text, {"r": 0x3C003C00})                 # f16 1.0 in both halves
    regs = r.registers
    assert list(regs["r"]) == [0x3C004000] and list(regs["lo@8:17"]) == [0x3C004000]
    assert list(regs["lo"]) == [0x4000] and r.declared["lo@8:17"] == "b32"
    assert list(regs["a"]) == [False] and list(regs["o"]) == [True]
    with pytest.raises(UninitializedRegister, match="lo@2:13"):
        ptxfp.run("{ .reg .b16 lo; mov.b16 lo, 1; }\n{ .reg .b16 lo; mov.b16 x, lo; }")


def test_many_threads():
    n = 200_000
    rng = np.random.default_rng(8)
    a = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    text = "mov.u32 t, %tid.x;\nmul.wide.u32 o, t, 2;\nadd.f16 d, a, a;\nst.global.b16 [o], d;"
    r = ptxfp.run(text, {"a": a}, memory=bytes(2 * n))
    assert np.array_equal(r[MEMORY_KEY].view(np.uint16), r["d"])
    assert np.array_equal(r["d"][:1000], f16_add_np(a[:1000], a[:1000]))


def test_spinning_loop_stops_at_the_step_limit():
    from ptxfp.ptx.interp import StepLimit
    with pytest.raises(StepLimit, match="loop at label 'L' \\(line 1\\)") as e:
        ptxfp.run("L: add.f16 x, a, a;\nbra L;", {"a": 0}, max_steps=1000)
    assert e.value.line in (1, 2)


# --- errors -------------------------------------------------------------------------------------

def test_uninitialised_register_error():
    with pytest.raises(UninitializedRegister) as e:
        ptxfp.run("add.f16 d, a, b;\nmul.f16 e, d, zz;", {"a": 0, "b": 0})
    assert "'zz'" in str(e.value) and (e.value.line, e.value.col) == (2, 15)
    assert isinstance(e.value, ptxfp.PtxfpError)


@pytest.mark.parametrize("text, inputs, name, pos, some", [
    # readers are shared between statements: the position is still the reading operand's
    ("add.f16 d, a, a;\nadd.f16 e, b, a;", {"b": 0}, "a", (1, 12), False),
    ("add.f16 d, b, b;\nadd.f16 e, b, a;", {"b": 0}, "a", (2, 15), False),
    ("add.f16 d, b, b;\nfma.rn.f16 e, b, b, a;\nfma.rn.f16 e, a, b, b;", {"b": 0}, "a",
     (2, 21), False),
    ("selp.b16 d, a, a, p;", {"p": 1}, "a", (1, 13), False),
    ("selp.b16 d, a, b, p;", {"b": 1}, "p", (1, 19), False),
    ("setp.lt.s32 p, t, 1;\n@p mov.b16 h, 1;\nadd.f16 d, h, h;", {}, "h", (3, 12), True),
])
def test_uninitialised_register_position(text, inputs, name, pos, some):
    text = "mov.u32 t, %tid.x;\n" + text
    with pytest.raises(UninitializedRegister) as e:
        ptxfp.run(text, inputs, threads=2)
    assert f"register '{name}' is read before it is set" in str(e.value)
    assert ("on some threads" in str(e.value)) == some
    assert (e.value.line - 1, e.value.col) == pos


@pytest.mark.parametrize("text, opcode, pos", [
    ("rsqrt.approx.f64 x, y;", "rsqrt.approx.f64", (1, 1)),
    ("mov.b16 h, 1;\n  div.rn.f16 d, h, h;", "div.rn.f16", (2, 3)),
    ("bar.red.and.pred x, 0, p;", "bar.red.and.pred", (1, 1)),
    ("suq.width.b32 x, [a];", "suq.width.b32", (1, 1)),
    ("ex2.approx.f16 x, y;", "ex2.approx.f16", (1, 1)),
    ("tanh.approx.f32 x, a;", "tanh.approx.f32", (1, 1)),
])
def test_unsupported_instruction_error(text, opcode, pos):
    with pytest.raises(UnsupportedInstruction) as e:
        ptxfp.run(text, {})
    assert f"'{opcode}'" in str(e.value) and (e.value.line, e.value.col) == pos
    assert isinstance(e.value, ptxfp.PtxfpError)


@pytest.mark.parametrize("text, match", [
    ("fma.f16 d, a, b, c;", "rounding modifier required"),
    ("add.f16 d, a;", "expects 3 operands"),
    (".reg .b16 h;\nmov.b32 h, 5;", "register 'h' is 16-bit"),
    ("add.f16 d, a, 0f3F800000;", "does not fit"),
    ("cvt.rna.f16.f32 h, f;", "illegal rounding"),
])
def test_program_errors_name_the_position(text, match):
    with pytest.raises(InterpError, match=match) as e:
        ptxfp.run(text, {})
    assert e.value.line >= 1 and e.value.col >= 1


def test_input_errors():
    with pytest.raises(ptxfp.OperandError, match="not a register"):
        ptxfp.run("add.f16 d, a, a;", {"a": 0, "nope": 1})
    with pytest.raises(ptxfp.OperandError, match="does not fit in 16 bits"):
        ptxfp.run("add.f16 d, a, a;", {"a": 0x10000})
    with pytest.raises(ptxfp.OperandError, match="float"):
        ptxfp.run("add.f16 d, a, a;", {"a": 1.5})
    with pytest.raises(ptxfp.OperandError, match="broadcast"):
        ptxfp.run("add.f16 d, a, b;", {"a": [1, 2], "b": [1, 2, 3]})
    with pytest.raises(ptxfp.PtxfpError):
        ptxfp.run("add.f16 d, a, ;", {})                         # a syntax error


def test_register_names_with_or_without_percent_and_declared_types():
    text = ".reg .f32 %f<2>;\n.reg .b16 %h<2>;\ncvt.rn.f16.f32 %h0, %f1;\n"
    r = ptxfp.run(text, {"f1": 0x3F800000})
    assert set(r) == {"%f1", "%h0"} and r["%h0"].dtype == np.uint16


# --- every form through the interpreter's kernel path ------------------------------------------

def _form_snippet(spelling):
    """`spelling d, a, b ...;` with its source operands named s0, s1 ... (the four sources
    of a .x4 destination written as one vector, as cvt.rs takes them)."""
    form = ptxfp.parse(spelling)
    names = [f"s{i}" for i in range(len(form.operand_names))]
    if form.dtype.endswith("x4") and len(names) == 5:
        ops = "{" + ", ".join(names[:4]) + "}, " + names[4]
    else:
        ops = ", ".join(names)
    return form, names, f"{spelling} d, {ops};"


@pytest.mark.parametrize("pol", [{}, {"canonical_nan_f16": 0x7E00, "canonical_nan_bf16": 0x7FC0,
                                      "canonical_nan_f32": 0x7FC00000,
                                      "ftz_tininess": "before_rounding",
                                      "widen_nan": "payload", "negabs_nan": "sign",
                                      "sat_minus_zero_to_plus": False,
                                      "oob_tests_c": True}], ids=["default", "other"])
def test_every_form_runs_as_its_entry_point(pol):
    """run() computes each form with the family's kernel (dispatch.CORE) without the entry
    point's operand checks: the same bits as ptxfp.dispatch.compute, under the policy in
    force, for every modelled spelling (random operands, specials included); under another
    policy for one spelling in nine (each is a kernel to compile on a fresh cache)."""
    from ptxfp.core import types as ptypes
    from ptxfp.dispatch import compute
    rng = np.random.default_rng(10)
    specials = {16: [0, 0x8000, 0x7C00, 0x7E00, 0x7FFF, 0x0001, 0x3C00, 0x7F80, 0xFF80],
                32: [0, 0x80000000, 0x7F800000, 0x7FC00000, 0x00000001, 0x3F800000]}
    with ptxfp.policy.using(**pol):
        spellings = ptxfp.isa.all_spellings()
        for spelling in spellings if not pol else spellings[::9]:
            form, names, text = _form_snippet(spelling)
            ins = {}
            for n, f in zip(names, form.operand_formats):
                w = ptypes.width(f)
                v = rng.integers(0, 1 << w, 48, dtype=np.uint64)
                sp = specials.get(w, [])
                v[:len(sp)] = sp
                ins[n] = v.astype(f"uint{w}")
            got = ptxfp.run(text, ins)["d"]
            want = compute(form, *(ins[n] for n in names))
            assert np.array_equal(got.astype(np.uint64), np.asarray(want).astype(np.uint64)), \
                spelling
