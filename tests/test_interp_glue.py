"""The glue real modules carry, in ptxfp.run: the carry chain (add.cc ... madc), mul.hi,
cvta on every space with generic addresses, match.sync, module .const/.global variables and
their initializers, call with .param arguments, the launch directives, the refusal of names
ptxas rejects, and run(target=).

Expected values are the PTX ISA's definitions written out plainly with Python integers here
(add.cc: d = a + b, carry-out to CC.CF; addc: d = a + b + CC.CF; sub.cc: the borrow-out;
subc: d = a - (b + CC.CF); mad.cc: d = (a*b).lo/.hi + c; match.any: the lanes of the
membermask whose value equals the thread's; match.all: the membermask when all agree, else 0)."""

from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.errors import InterpError, OperandError, PtxfpError

RNG = np.random.default_rng(33)
KERNELS = Path(__file__).parent / "data" / "kernels"


def _vals(w, k=64):
    edge = [0, 1, 2, (1 << w) - 1, (1 << w) - 2, 1 << (w - 1), (1 << (w - 1)) - 1]
    rnd = [int(x) for x in RNG.integers(0, 1 << 62, k - len(edge), dtype=np.int64)]
    rnd = [(x * 0x9E3779B97F4A7C15) % (1 << w) for x in rnd]
    return edge + rnd


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_multiword_add_and_sub_chains_match_python_integers(t):
    """A 2-word add (add.cc, addc.cc, addc into a third word) and subtract (sub.cc, subc.cc,
    subc) are the Python integer sum and difference of the 2w-bit numbers."""
    w = int(t[1:])
    m = (1 << w) - 1
    a0, a1, b0, b1 = (np.roll(np.array(_vals(w), dtype=object), i) for i in range(4))
    b0 = np.roll(b0, 7)
    a1 = np.roll(a1, 3)
    b1 = np.roll(b1, 11)
    src = f"""
.reg .{t} %a0, %a1, %b0, %b1, %s0, %s1, %s2, %d0, %d1, %d2, %z;
mov.{t} %z, 0;
add.cc.{t} %s0, %a0, %b0;
addc.cc.{t} %s1, %a1, %b1;
addc.{t} %s2, %z, %z;
sub.cc.{t} %d0, %a0, %b0;
subc.cc.{t} %d1, %a1, %b1;
subc.{t} %d2, %z, %z;
"""
    ins = {"a0": a0, "a1": a1, "b0": b0, "b1": b1}
    r = ptxfp.run(src, {k: np.array([int(x) for x in v], np.uint64) for k, v in ins.items()})
    for i in range(64):
        A = int(a0[i]) | int(a1[i]) << w
        B = int(b0[i]) | int(b1[i]) << w
        S, D = A + B, (A - B) % (1 << (3 * w))
        got_s = [int(r[f"%s{j}"][i]) for j in range(3)]
        got_d = [int(r[f"%d{j}"][i]) for j in range(3)]
        assert got_s == [S & m, S >> w & m, S >> 2 * w & m], i
        assert got_d == [D & m, D >> w & m, D >> 2 * w & m], i


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_mul_hi_and_the_mad_carry_chain(t):
    """mul.hi: the high half of the exact product (signed for .s); mad.lo.cc + madc.hi: the
    2w-bit a*b + c; madc.hi.cc's carry read back by addc."""
    w = int(t[1:])
    m = (1 << w) - 1
    v = _vals(w)
    a, b, c = v, v[::-1], v[5:] + v[:5]
    sx = (lambda v: v - (1 << w) if t[0] == "s" and v >> (w - 1) else v)
    src = f"""
.reg .{t} %a, %b, %c, %h, %lo, %hi, %k, %z;
mov.{t} %z, 0;
mul.hi.{t} %h, %a, %b;
mad.lo.cc.{t} %lo, %a, %b, %c;
madc.hi.cc.{t} %hi, %a, %b, %z;
addc.{t} %k, %z, %z;
"""
    r = ptxfp.run(src, {"a": np.array(a, np.uint64), "b": np.array(b, np.uint64),
                        "c": np.array([int(x) for x in c], np.uint64)})
    for i in range(64):
        P = sx(a[i]) * sx(b[i])
        assert int(r["%h"][i]) == (P >> w) & m, i
        lo = (P & m) + int(c[i])
        assert int(r["%lo"][i]) == lo & m
        hi = ((P >> w) & m) + (lo >> w)
        assert int(r["%hi"][i]) == hi & m
        assert int(r["%k"][i]) == hi >> w


def test_carry_forms_refused_in_one_line():
    with pytest.raises(PtxfpError, match="carry forms take"):
        ptxfp.run(".reg .u16 %a, %b, %d;\nadd.cc.u16 %d, %a, %b;", {"a": 1, "b": 2})


MMA_MODULE = """.version 8.0
.target {target}
.address_size 64
.visible .entry k()
{{
.reg .b32 %a<4>; .reg .b32 %b<2>; .reg .f32 %c<4>; .reg .f32 %d<4>;
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%d0, %d1, %d2, %d3}},
    {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};
}}
"""


def _mma_inputs():
    rng = np.random.default_rng(7)
    h = lambda: ptxfp.to_bits(rng.standard_normal(32).astype(np.float16), "f16").astype(np.uint32)
    ins = {f"%a{i}": h() | h() << 16 for i in range(4)}
    ins.update({f"%b{i}": h() | h() << 16 for i in range(2)})
    ins.update({f"%c{i}": ptxfp.to_bits(rng.standard_normal(32).astype(np.float32), "f32")
                for i in range(4)})
    return ins


def test_target_picks_the_tensor_core_numerics_of_a_sibling_target():
    """An sm_86 module's mma.sync stops with one line naming target=; with target='sm_80' it
    computes what the same module compiled for sm_80 does."""
    ins = _mma_inputs()
    with pytest.raises(InterpError, match=r"target='sm_80'") as e:
        ptxfp.run(MMA_MODULE.format(target="sm_86"), ins, block=32)
    assert "\n" not in str(e.value)
    got = ptxfp.run(MMA_MODULE.format(target="sm_86"), ins, block=32, target="sm_80")
    want = ptxfp.run(MMA_MODULE.format(target="sm_80"), ins, block=32)
    for i in range(4):
        assert (got[f"%d{i}"] == want[f"%d{i}"]).all()
    with pytest.raises(OperandError, match="target='sm_81'"):
        ptxfp.run(MMA_MODULE.format(target="sm_86"), ins, block=32, target="sm_81")


@pytest.mark.parametrize("body, message", [
    (".reg .b32 %r<4>;\nmov.b32 %r4, 1;", "Unknown symbol '%r4'"),
    (".reg .b32 %r<4>;\nL1:\nmov.b32 %r1, 1;\nL1:\nret;", "Duplicate definition of label 'L1'"),
])
def test_names_ptxas_rejects_are_refused(body, message):
    text = f".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n"
    with pytest.raises(InterpError, match=message) as e:
        ptxfp.run(text)
    assert e.value.line >= 6 and "\n" not in str(e.value)


def _match_want(vals, mm):
    """match.any by its definition: for each lane, the lanes of mm holding the same value."""
    return [sum(1 << j for j in range(32) if mm >> j & 1 and vals[j] == vals[i])
            for i in range(32)]


@pytest.mark.parametrize("t", ["b32", "b64"])
def test_match_any_and_all(t):
    w = int(t[1:])
    vals = [(i % 3) << (w - 2) | (i % 5 == 0) for i in range(64)]   # differ in high bits too
    src = f""".reg .{t} %v; .reg .b32 %any, %all, %same, %r0; .reg .pred %p, %q; .reg .{t} %u;
match.any.sync.{t} %any, %v, 0xffffffff;
match.all.sync.{t} %all|%p, %v, 0xffffffff;
mov.{t} %u, 42;
match.all.sync.{t} %same|%q, %u, 0xffffffff;
"""
    r = ptxfp.run(src, {"v": np.array(vals, np.uint64)}, block=64)
    for warp in range(2):
        v = vals[32 * warp:32 * warp + 32]
        assert [int(x) for x in r["%any"][32 * warp:32 * warp + 32]] == _match_want(v, 2**32 - 1)
    assert (r["%all"] == 0).all() and not r["%p"].any()
    assert (r["%same"] == 0xFFFFFFFF).all() and r["%q"].all()


def test_match_membermask_is_checked():
    src = (".reg .b32 %v, %d; .reg .pred %p;\nmov.b32 %v, %tid.x;\nsetp.lt.u32 %p, %v, 16;\n"
           "@%p match.any.sync.b32 %d, %v, 0xffffffff;")
    with pytest.raises(InterpError, match="membermask") as e:
        ptxfp.run(src, block=32)
    assert "\n" not in str(e.value)


# --- generic addresses, cvta, module variables, calls ------------------------------------------

MOD = """.version 8.0
.target sm_80
.address_size 64
{decls}
.visible .entry k(.param .u64 k_out)
{{
.reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %p<4>; .reg .f32 %f<4>;
.shared .align 8 .b8 sm[64];
{body}
}}
"""


def _mod(body, decls=""):
    return MOD.format(decls=decls, body=body)


def test_cvta_shared_gives_a_generic_pointer_that_ld_st_atom_follow():
    """cvta.shared puts a .shared address in the generic space; a generic st, atom and ld
    through it reach the block's own shared memory (each block sees its own), and cvta.to
    brings it back; cvta.global is the identity."""
    body = """mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
mov.u64 %rd1, sm;
cvta.shared.u64 %rd2, %rd1;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
add.u32 %r3, %r1, %r2;
st.u32 [%rd4], %r3;
bar.sync 0;
atom.add.u32 %r4, [%rd2+60], %r1;
bar.sync 0;
ld.u32 %r5, [%rd2+60];
cvta.to.shared.u64 %rd5, %rd4;
ld.shared.u32 %r6, [%rd5];
isspacep.shared %p1, %rd4;
isspacep.global %p2, %rd4;
cvta.shared.u32 %r7, sm;
cvta.to.shared.u32 %r8, %r7;
"""
    r = ptxfp.run(_mod(body), grid=2, block=8)
    tid, blk = np.tile(np.arange(8), 2), np.repeat(np.arange(2), 8)
    assert (r["%r6"] == tid + blk).all()
    assert (r["%r5"] == sum(range(8))).all()         # word 15 starts at 0 in each block
    assert r["%p1"].all() and not r["%p2"].any()
    assert (r["%r8"] == 0).all() and (r["%r7"] != 0).all()


def test_const_and_global_variables_take_their_initializers():
    decls = """.const .align 4 .b8 tab[8] = {1, 2, 3, 4, 255};
.const .align 4 .f32 fl[3] = {1.5, 0f40400000, -2};
.global .align 8 .u64 g = -5;
.global .align 2 .u16 arr[] = {{1, 2}, {3}};
.global .align 8 .u64 ptr = generic(tab);
.global .f16 h = 0.1;"""
    body = """ld.const.u32 %r1, [tab];
ld.const.u32 %r2, [tab+4];
ld.const.f32 %f1, [fl+4];
ld.const.f32 %f2, [fl+8];
ld.global.u64 %rd1, [g];
mov.u64 %rd2, arr;
ld.global.u16 %r3, [%rd2+4];
ld.global.u64 %rd3, [ptr];
ld.u32 %r4, [%rd3];
mov.u64 %rd4, g;
atom.global.add.u64 %rd5, [%rd4], 6;
ld.global.u64 %rd6, [g];
ld.global.b16 %r5, [h];
"""
    r = ptxfp.run(_mod(body, decls))
    assert int(r["%r1"][0]) == 0x04030201 and int(r["%r2"][0]) == 0xFF
    assert int(r["%f1"][0]) == 0x40400000 and int(r["%f2"][0]) == 0xC0000000
    assert int(r["%rd1"][0]) == 2**64 - 5 and int(r["%rd6"][0]) == 1
    assert int(r["%r3"][0]) == 3
    assert int(r["%r4"][0]) == 0x04030201                # through the generic pointer
    assert int(r["%r5"][0]) == int(np.float16(0.1).view(np.uint16))


def test_nvcc_module_with_generic_shared_const_global_call_and_match():
    """tests/data/kernels/glue.cu (nvcc 13.0 -arch=sm_80 -ptx): a generic pointer that is
    .shared on odd lanes and global on even ones, a __constant__ table, a __device__ global, a
    __noinline__ device function called with .param arguments (an fma, a*a + b), a 64-bit add,
    __match_any_sync.  Expected: NumPy float32, the fma done once in float64 (exact for these
    small values) and rounded."""
    text = (KERNELS / "glue.ptx").read_text()
    mem = np.zeros(4096, np.uint8)
    inp = np.arange(64, dtype=np.float32) + 0.5
    mem[1024:1280] = np.frombuffer(inp.tobytes(), np.uint8)
    mem[2048:2304] = np.frombuffer(np.arange(32, dtype=np.uint64).tobytes(), np.uint8)
    r = ptxfp.run(text, {"k_param_0": 0, "k_param_1": 1024, "k_param_2": 2048}, memory=mem,
                  block=32)
    out = np.frombuffer(r["__memory__"][:512].tobytes(), np.float32)
    t = np.arange(32)
    v = inp[t ^ 1] + np.array([1, 2, 3, 4.5], np.float32)[t & 3]   # s[] holds in[] too
    want = (v.astype(np.float64) ** 2 + 7).astype(np.float32)
    assert (out[:32] == want).all()
    assert (out[64:96] == np.array([sum(1 << j for j in range(32) if j % 4 == i % 4)
                                    for i in range(32)], np.float32)).all()
    o64 = np.frombuffer(r["__memory__"][2048:2304].tobytes(), np.uint64)
    assert (o64 == np.arange(32, dtype=np.uint64) + 0xFFFFFFFF).all()


CALLS = """.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 ret) twice(.param .b32 x)
{{
.reg .b32 %r<4>; .reg .pred %p;
ld.param.b32 %r1, [x];
setp.gt.u32 %p, %r1, 100;
@%p bra BIG;
add.u32 %r2, %r1, %r1;
st.param.b32 [ret], %r2;
ret;
BIG:
st.param.b32 [ret], 7;
ret;
}}
.visible .entry k()
{{
.reg .b32 %r<8>;
mov.u32 %r1, %tid.x;
mul.lo.u32 %r1, %r1, 60;
{{
.param .b32 a;
.param .b32 b;
st.param.b32 [a], %r1;
call.uni (b), {callee}, (a);
ld.param.b32 %r2, [b];
}}
{{
.param .b32 c;
call (c), twice, ({arg});
ld.param.b32 %r3, [c];
}}
}}
"""


def test_call_with_param_arguments_divergent_inside_the_callee():
    r = ptxfp.run(CALLS.format(callee="twice", arg="%r1"), block=4)
    x = np.arange(4) * 60
    assert (r["%r2"] == np.where(x > 100, 7, 2 * x)).all()
    assert (r["%r3"] == r["%r2"]).all()


@pytest.mark.parametrize("text, words", [
    (CALLS.format(callee="nosuch", arg="%r1"), "no function named 'nosuch'"),
    (_mod("mov.u64 %rd1, sm;\ncvta.shared.u64 %rd2, %rd1;\nld.u32 %r1, [%rd2+2];"),
     "not 4-byte aligned"),
    (_mod("mov.u64 %rd1, sm;\ncvta.shared.u64 %rd2, %rd1;\nld.u32 %r1, [%rd2+64];"),
     "outside the 64-byte .shared"),
    (_mod("mov.u64 %rd1, 0xD0000000;\nld.u32 %r1, [%rd1];"), "outside the 0-byte .const"),
    (_mod("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];\n",
          "").replace("mov", "mov") .replace("{%r1}, [%r2]", "{%r1}, [%r2+4096]")
     .replace(".reg .b32 %r<16>;", ".reg .b32 %r<16>;\nmov.u32 %r2, 0;"),
     "outside the 0-byte .shared"),
])
def test_bad_glue_input_is_one_line(text, words):
    with pytest.raises(PtxfpError, match=words) as e:
        ptxfp.run(text, block=32)
    assert "\n" not in str(e.value)


def _directives(d):
    return (f".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {d}\n{{\n"
            ".reg .b32 %r<2>;\nmov.u32 %r1, %ctaid.x;\n}\n")


def test_cluster_directives_are_checked_at_launch_and_the_others_kept():
    text = _directives(".reqnctapercluster 2, 1, 1 .maxclusterrank 4 .maxnreg 32 "
                       ".minnctapersm 2")
    assert (ptxfp.run(text, grid=4, block=1)["%r1"] == np.arange(4)).all()
    with pytest.raises(OperandError, match=r"\.reqnctapercluster 2, 1, 1") as e:
        ptxfp.run(text, grid=3, block=1)
    assert "\n" not in str(e.value)
    with pytest.raises(OperandError, match=r"\.maxclusterrank 2"):
        ptxfp.run(_directives(".reqnctapercluster 4 .maxclusterrank 2"), grid=4)
    from ptxfp.ptx.reader import read
    launch = read(text).functions[0].launch
    assert launch["maxnreg"][0] == (32,) and launch["minnctapersm"][0] == (2,)
