"""Whole kernels in the interpreter: nvcc 13.0 output (tests/data/kernels, sources and command
in its README) and Triton output (tests/data/realworld), run over grids of blocks, checked
against an independent computation of the same operations in the same order: NumPy float32
for add (IEEE, correctly rounded, no subnormals in these data), tests/oracle.py (MPFR) for
fma.rn.f32, plain Python for the integer and bit work.

Kernels that need instructions the table does not have yet are skipped with the instruction's
name (the instruction-semantics helper's rows enable them)."""

import pathlib

import numpy as np
import oracle as O
import pytest

import ptxfp
from ptxfp.ptx.interp import MEMORY_KEY, InterpError, UnsupportedInstruction, prepare

KERNELS = pathlib.Path(__file__).resolve().parent / "data" / "kernels"
REAL = pathlib.Path(__file__).resolve().parent / "data" / "realworld"


def text(name):
    return (KERNELS / name).read_text()


def needs(spelling_text, *what):
    """Skip unless the interpreter compiles this kernel (naming what it lacks)."""
    try:
        prepare(spelling_text)
    except UnsupportedInstruction as e:
        pytest.skip(f"needs {', '.join(what)} (interpreter: {e})")


class Mem:
    """A flat memory with arrays placed at aligned addresses."""

    def __init__(self):
        self.buf = bytearray(256)          # address 0 stays unused

    def put(self, arr):
        arr = np.ascontiguousarray(arr)
        at = -(-len(self.buf) // 256) * 256
        self.buf.extend(b"\0" * (at - len(self.buf)))
        self.buf.extend(arr.tobytes())
        return at

    def zeros(self, n, dtype):
        return self.put(np.zeros(n, dtype))

    @staticmethod
    def get(mem, at, n, dtype):
        return np.frombuffer(mem[at:at + n * np.dtype(dtype).itemsize].tobytes(), dtype)


def f32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def fma32(a, b, c):
    return O.compute_array("fma.rn.f32", a, b, c).astype(np.uint32)


def test_grid_stride_axpy():
    rng = np.random.default_rng(1)
    n, grid, block = 1000, 4, 64
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    a = np.float32(1.7)
    m = Mem()
    px, py = m.put(x), m.put(y)
    r = ptxfp.run(text("axpy.ptx"), {"axpy_param_0": n, "axpy_param_1": int(f32(a)),
                                     "axpy_param_2": px, "axpy_param_3": py},
                  memory=bytes(m.buf), grid=grid, block=block)
    got = Mem.get(r[MEMORY_KEY], py, n, np.uint32)
    want = fma32(np.full(n, f32(a)), f32(x), f32(y))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("block", [32, 128])
def test_block_reduction_shared_memory_and_bar_sync(block):
    rng = np.random.default_rng(2)
    grid = 3
    n = 2 * block * grid - 37                       # the last block's tail reads nothing
    x = rng.uniform(-1, 1, n).astype(np.float32)
    m = Mem()
    px, po = m.put(x), m.zeros(grid, np.float32)
    r = ptxfp.run(text("block_reduce.ptx"), {"block_reduce_param_0": px,
                                             "block_reduce_param_1": po,
                                             "block_reduce_param_2": n},
                  memory=bytes(m.buf), grid=grid, block=block)
    got = Mem.get(r[MEMORY_KEY], po, grid, np.uint32)
    want = []
    for b in range(grid):                            # the kernel's order, in float32
        s = np.zeros(block, np.float32)
        for t in range(block):
            i = b * block * 2 + t
            v = x[i] if i < n else np.float32(0)
            if i + block < n:
                v = np.float32(v + x[i + block])
            s[t] = v
        k = block // 2
        while k:
            s[:k] = s[:k] + s[k:2 * k]
            k //= 2
        want.append(s[0])
    assert np.array_equal(got, f32(want))


def test_warp_reduction_shfl_and_ballot():
    src = text("warp_reduce.ptx")
    needs(src, "setp.gt.f32")
    rng = np.random.default_rng(3)
    grid, block = 2, 96
    n = grid * block
    x = rng.uniform(-1, 1, n).astype(np.float32)
    m = Mem()
    px, po, pb = m.put(x), m.zeros(n // 32, np.float32), m.zeros(n // 32, np.uint32)
    r = ptxfp.run(src, {"warp_reduce_param_0": px, "warp_reduce_param_1": po,
                        "warp_reduce_param_2": pb}, memory=bytes(m.buf), grid=grid,
                  block=block)
    got = Mem.get(r[MEMORY_KEY], po, n // 32, np.uint32)
    ballots = Mem.get(r[MEMORY_KEY], pb, n // 32, np.uint32)
    want, wb = [], []
    for w in range(n // 32):
        v = x[w * 32:(w + 1) * 32].copy()
        wb.append(sum(1 << k for k in range(32) if v[k] > 0))
        off = 16
        while off:                                  # lanes past 31 read their own value
            v = np.array([v[k] + v[k + off] if k + off <= 31 else v[k] + v[k]
                          for k in range(32)], np.float32)
            off //= 2
        want.append(v[0])
    assert np.array_equal(got, f32(want))
    assert ballots.tolist() == wb


def test_dot_product_loop_and_atomic_add():
    rng = np.random.default_rng(4)
    n, grid, block = 777, 3, 64
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    nt = grid * block
    m = Mem()
    px, py, pp, po = m.put(x), m.put(y), m.zeros(nt, np.float32), m.zeros(1, np.float32)
    r = ptxfp.run(text("dot.ptx"), {"dot_param_0": n, "dot_param_1": px, "dot_param_2": py,
                                    "dot_param_3": pp, "dot_param_4": po},
                  memory=bytes(m.buf), grid=grid, block=block)
    part = Mem.get(r[MEMORY_KEY], pp, nt, np.uint32)
    total = Mem.get(r[MEMORY_KEY], po, 1, np.uint32)
    acc = np.zeros(nt, np.uint32)                      # +0.0
    for k0 in range(0, n, nt):                         # the loop, every thread at once
        idx = np.arange(k0, min(k0 + nt, n))
        t = idx - k0
        acc[t] = fma32(f32(x[idx]), f32(y[idx]), acc[t])
    assert np.array_equal(part, acc)
    s = np.float32(0)                                  # atomics: thread order
    for v in acc.view(np.float32):
        s = np.float32(s + v)
    assert total[0] == f32(s)


def test_tiled_f16_gemm_shared_tiles():
    rng = np.random.default_rng(5)
    M, N, K, T = 32, 48, 32, 16
    A = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    m = Mem()
    pa, pb, pc = m.put(A), m.put(B), m.zeros(M * N, np.float32)
    r = ptxfp.run(text("gemm_f16.ptx"), {"gemm_f16_param_0": pa, "gemm_f16_param_1": pb,
                                         "gemm_f16_param_2": pc, "gemm_f16_param_3": M,
                                         "gemm_f16_param_4": N, "gemm_f16_param_5": K},
                  memory=bytes(m.buf), grid=(N // T, M // T), block=(T, T))
    got = Mem.get(r[MEMORY_KEY], pc, M * N, np.uint32).reshape(M, N)
    a32 = f32(A.astype(np.float32))                    # f16 -> f32 is exact
    b32 = f32(B.astype(np.float32))
    acc = np.zeros((M, N), np.uint32)
    for k in range(K):
        acc = fma32(a32[:, k:k + 1], b32[k:k + 1, :], acc)
    assert np.array_equal(got, acc)


def test_softmax_ex2_approx_is_modeled():
    """ex2.approx.f32 is the SFU family's now (ptxfp.ops.sfu): softmax's ex2 no longer stops
    the interpreter there."""
    src = text("softmax.ptx")
    try:
        prepare(src)
    except UnsupportedInstruction as e:
        assert "ex2.approx" not in str(e)


def test_softmax_with_ex2_replaced_runs():
    """ex2.approx.f32 d, a replaced by mul.rn.f32 d, a, a (a modelled form): the rest of the
    kernel (max, shuffles, sums, division) runs; the reference does the same."""
    src = text("softmax.ptx")
    import re
    src = re.sub(r"ex2\.approx\.f32(\s+)(%f\d+), (%f\d+);", r"mul.rn.f32\1\2, \3, \3;", src)
    prepare(src)                                       # every instruction is modeled now
    import gmpy2
    rng = np.random.default_rng(7)
    rows, n = 3, 200                                   # 6 or 7 per thread: both loops run
    x = rng.uniform(-4, 4, (rows, n)).astype(np.float32)
    m = Mem()
    px, py = m.put(x), m.zeros(rows * n, np.float32)
    r = ptxfp.run(src, {"softmax_param_0": px, "softmax_param_1": py, "softmax_param_2": n},
                  memory=bytes(m.buf), grid=rows, block=32)
    got = Mem.get(r[MEMORY_KEY], py, rows * n, np.uint32).reshape(rows, n)
    # the reference: NumPy float32 (IEEE, to nearest) for max, sub, mul, add in the kernel's
    # order (per thread j = t, t+32, ...; then the xor butterfly 16, 8, 4, 2, 1), MPFR
    # (24 bits, subnormals, to nearest) for the quotient
    ctx = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True,
                        round=gmpy2.RoundToNearest)
    log2e = np.uint32(0x3FB8AA3B).view(np.float32)
    want = np.zeros((rows, n), np.uint32)
    for b in range(rows):
        mx = x[b].max()
        e = (x[b] - mx) * log2e
        e = e * e                                      # ex2.approx replaced by mul.rn a, a
        s = np.zeros(32, np.float32)
        for t in range(32):
            for j in range(t, n, 32):
                s[t] = s[t] + e[j]
        for off in (16, 8, 4, 2, 1):
            s = s + s[np.arange(32) ^ off]
        for j in range(n):
            q = ctx.div(gmpy2.mpfr(float(e[j])), gmpy2.mpfr(float(s[j % 32])))
            want[b, j] = np.float32(float(q)).view(np.uint32)
    assert np.array_equal(got, want)


def test_triton_axpy_f16():
    src = (REAL / "triton_axpy_sm_100a.ptx").read_text()
    rng = np.random.default_rng(6)
    n = 600                                            # 3 programs of 256, the last partial
    x = rng.uniform(-2, 2, n).astype(np.float16)
    y = rng.uniform(-2, 2, n).astype(np.float16)
    a = np.float32(0.75)
    m = Mem()
    px, py, po = m.put(x), m.put(y), m.zeros(n, np.float16)
    r = ptxfp.run(src, {"f16_axpy_param_0": px, "f16_axpy_param_1": py,
                        "f16_axpy_param_2": po, "f16_axpy_param_3": int(f32(a)),
                        "f16_axpy_param_4": n}, memory=bytes(m.buf), grid=3, block=128)
    got = Mem.get(r[MEMORY_KEY], po, n, np.uint16)
    a16 = np.float16(a).view(np.uint16)                 # cvt.rn.f16.f32 of 0.75: exact
    want = O.compute_array("fma.rn.f16", np.full(n, a16), x.view(np.uint16),
                           y.view(np.uint16))
    assert np.array_equal(got, want)


# --- the execution model on small programs ---------------------------------------------------

def test_special_registers_in_a_grid():
    src = """
    mov.u32 tx, %tid.x; mov.u32 ty, %tid.y; mov.u32 tz, %tid.z;
    mov.u32 cx, %ctaid.x; mov.u32 cy, %ctaid.y; mov.u32 nx, %ntid.x; mov.u32 ny, %nctaid.y;
    mov.u32 lane, %laneid; mov.u32 warp, %warpid;
    """
    r = ptxfp.run(src, grid=(2, 3), block=(5, 4, 2))
    bx, by, bz, gx, gy = 5, 4, 2, 2, 3
    i = np.arange(gx * gy * bx * by * bz)
    t, b = i % (bx * by * bz), i // (bx * by * bz)
    assert r["tx"].tolist() == (t % bx).tolist()
    assert r["ty"].tolist() == (t // bx % by).tolist()
    assert r["tz"].tolist() == (t // (bx * by)).tolist()
    assert r["cx"].tolist() == (b % gx).tolist() and r["cy"].tolist() == (b // gx).tolist()
    assert set(r["nx"].tolist()) == {5} and set(r["ny"].tolist()) == {3}
    assert r["lane"].tolist() == (t % 32).tolist() and r["warp"].tolist() == (t // 32).tolist()


def test_divergent_loop_reconverges():
    # each thread loops tid times; after the loop every thread adds once more
    src = """
    mov.u32 i, %tid.x; mov.u32 s, 0;
    L: setp.eq.u32 p, i, 0;
    @p bra DONE;
    add.u32 s, s, i; sub.u32 i, i, 1;
    bra L;
    DONE: add.u32 s, s, 1000;
    """
    r = ptxfp.run(src, threads=40)
    t = np.arange(40)
    assert r["s"].tolist() == (t * (t + 1) // 2 + 1000).tolist()


def test_shared_memory_neighbour_exchange_and_barrier():
    src = """
    .shared .align 4 .b8 buf[256];
    mov.u32 t, %tid.x; shl.b32 a, t, 2; mov.u32 base, buf;
    add.u32 a, a, base; st.shared.u32 [a], t;
    bar.sync 0;
    add.u32 t1, t, 1; and.b32 t1, t1, 63; shl.b32 a1, t1, 2;
    ld.shared.u32 v, [a1+0];
    """
    r = ptxfp.run(src, grid=2, block=64)
    assert r["v"].tolist() == [(k + 1) % 64 for k in range(64)] * 2


def test_barrier_not_reached_by_every_thread():
    src = """
    mov.u32 t, %tid.x; setp.lt.u32 p, t, 16;
    @p bra SKIP;
    bar.sync 0;
    SKIP: bar.sync 1;
    """
    with pytest.raises(InterpError, match=r"barrier 0 never opens: in block \(0, 0, 0\), 16 of "
                                          r"the 32 threads") as e:
        ptxfp.run(src, block=32)
    assert e.value.line == 4


def test_shfl_modes_against_the_definition():
    src = """
    mov.u32 l, %laneid; mul.lo.u32 v, l, 10;
    shfl.sync.up.b32 u|pu, v, 3, 0, 0xffffffff;
    shfl.sync.down.b32 d|pd, v, 5, 31, 0xffffffff;
    shfl.sync.bfly.b32 x, v, 6, 31, 0xffffffff;
    shfl.sync.idx.b32 y, v, 7, 0x181f, 0xffffffff;
    """
    r = ptxfp.run(src, block=64)
    lane = np.arange(64) % 32
    v = lane * 10
    assert r["u"].tolist() == [v[k] if l < 3 else v[k - 3] for k, l in enumerate(lane)]
    assert r["pu"].tolist() == [bool(l >= 3) for l in lane]
    assert r["d"].tolist() == [v[k] if l > 26 else v[k + 5] for k, l in enumerate(lane)]
    assert r["x"].tolist() == [(l ^ 6) * 10 for l in lane]
    # segment mask 0x18: segments of 8 lanes; lane (l & 0x18) | 7
    assert r["y"].tolist() == [((l & 0x18) | 7) * 10 for l in lane]


def test_shfl_with_a_lane_missing_is_an_error():
    src = """
    mov.u32 l, %laneid; setp.lt.u32 p, l, 8;
    @p bra X;
    shfl.sync.bfly.b32 x, l, 1, 31, 0xffffffff;
    X: ret;
    """
    with pytest.raises(InterpError, match="membermask"):
        ptxfp.run(src, block=32)


def test_vote_sync_modes():
    src = """
    mov.u32 l, %laneid; and.b32 b, l, 1; setp.eq.u32 p, b, 1; setp.lt.u32 q, l, 40;
    vote.sync.ballot.b32 bal, p, 0xffffffff;
    vote.sync.any.pred an, p, 0xffffffff; vote.sync.all.pred al, p, 0xffffffff;
    vote.sync.all.pred aq, q, 0xffffffff; vote.sync.uni.pred un, p, 0xffffffff;
    """
    r = ptxfp.run(src, block=32)
    assert set(r["bal"].tolist()) == {0xAAAAAAAA}
    assert r["an"].all() and not r["al"].any() and r["aq"].all() and not r["un"].any()


def test_atomics_in_thread_order():
    # every thread: atom.add.u32 on one word (old values 0, 1, 2 ...), exch on another (the
    # last thread's value stays), cas chain, and red.max on shared memory
    src = """
    .shared .align 4 .b8 sm[4];
    mov.u32 t, %tid.x; mov.u32 one, 1; mov.u64 base, 0;
    atom.global.add.u32 old, [base+0], one;
    atom.global.exch.b32 ex, [base+4], t;
    atom.global.cas.b32 cs, [base+8], t, t;
    add.u32 t1, t, 1; atom.global.cas.b32 c2, [base+12], t, t1;
    mov.u32 sa, sm; red.shared.max.u32 [sa], t;
    bar.sync 0;
    ld.shared.u32 mx, [sa];
    """
    r = ptxfp.run(src, memory=bytes(16), block=8)
    mem = np.frombuffer(r[MEMORY_KEY].tobytes(), np.uint32)
    assert r["old"].tolist() == list(range(8))
    assert mem[0] == 8 and mem[1] == 7
    assert r["ex"].tolist() == [0] + list(range(7))
    # cas [8]: only thread 0 matches (0 == 0), stores 0; cas [12]: thread k sees k, stores k+1
    assert r["c2"].tolist() == list(range(8)) and mem[3] == 8
    assert set(r["mx"].tolist()) == {7}


def test_misaligned_and_out_of_range_addresses():
    with pytest.raises(InterpError, match=r"address 0x2 is not 4-byte aligned") as e:
        ptxfp.run("mov.u64 a, 2;\nld.global.u32 v, [a];", memory=bytes(16))
    assert (e.value.line, e.value.col) == (2, 18)
    with pytest.raises(InterpError, match=r"outside the 8-byte \.shared"):
        ptxfp.run(".shared .align 4 .b8 s[8];\nmov.u32 a, s;\nld.shared.u32 v, [a+8];",
                  block=4)


def test_extern_shared_size_and_limit():
    src = """.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry k() {
  .shared .align 4 .b8 st[12];
  .reg .b32 %r<8>;
  mov.u32 %r1, dyn; mov.u32 %r2, st; mov.u32 %r3, %tid.x; shl.b32 %r4, %r3, 2;
  add.u32 %r4, %r4, %r1; st.shared.u32 [%r4], %r3; ld.shared.u32 %r5, [%r4];
  ret;
}
"""
    r = ptxfp.run(src, block=32, shared_bytes=128)
    assert r["%r1"][0] == 16 and r["%r2"][0] == 0 and r["%r5"].tolist() == list(range(32))
    with pytest.raises(InterpError, match=r"outside the 48-byte \.shared"):
        ptxfp.run(src, block=32, shared_bytes=32)
    with pytest.raises(ptxfp.PtxfpError, match=r"over the 166912 bytes sm_80 allows"):
        ptxfp.run(src, block=32, shared_bytes=163 * 1024)


def test_local_memory_is_per_thread():
    src = (".local .align 8 .b8 loc[16];\nmov.u32 t, %tid.x; mov.u32 a, loc;\n"
           "st.local.u32 [a+4], t; add.u32 t2, t, 100; st.local.u32 [a+8], t2;\n"
           "ld.local.v2.u32 {x, y}, [a+0];\nld.local.u32 z, [a+8];")
    r = ptxfp.run(src, block=5)
    assert r["y"].tolist() == list(range(5)) and r["z"].tolist() == list(range(100, 105))


def test_entry_by_name_and_missing_instruction():
    src = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry one(.param .u32 p) { .reg .b32 %r<3>; ld.param.u32 %r1, [p];
  add.u32 %r2, %r1, 1; ret; }
.visible .entry two(.param .u32 q) { .reg .b32 %r<3>; ld.param.u32 %r1, [q];
  mul.lo.u32 %r2, %r1, 3; ret; }
"""
    assert ptxfp.run(src, {"p": 4}, entry="one")["%r2"].tolist() == [5]
    assert ptxfp.run(src, {"q": 4}, entry="two", grid=2, block=2)["%r2"].tolist() == [12] * 4
    # tanh.approx.f32 is an SFU row without a model: one line naming it (the interpreter's
    # wiring of the SFU family will give it a position)
    with pytest.raises(ptxfp.PtxfpError, match=r"'tanh\.approx\.f32'") as e:
        ptxfp.run("mov.u32 a, 1;\ntanh.approx.f32 b, a;")
    if isinstance(e.value, UnsupportedInstruction):
        assert (e.value.line, e.value.col) == (2, 1)


def test_mma_sync_without_the_tensor_package_is_one_clear_line():
    import importlib
    try:
        importlib.import_module("ptxfp.tensor.fragments")
        pytest.skip("ptxfp.tensor is here: test_mma_sync_m16n8k16 runs mma.sync")
    except ImportError:
        pass
    with pytest.raises(UnsupportedInstruction, match=r"'mma\.sync\.aligned\.m16n8k16.*ptxfp\.tensor"):
        ptxfp.run("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {a,b,c,d}, {e,f,g,h}, "
                  "{i,j}, {k,l,m,n};")


def test_mma_sync_m16n8k16():
    """Registers filled by the PTX manual's fragment formulas for m16n8k16 (.f16 A/B, .f32
    C/D), written out here; D compared with ptxfp.mma on the whole matrices."""
    import importlib
    try:
        importlib.import_module("ptxfp.tensor.fragments")
        mma = importlib.import_module("ptxfp").mma
    except (ImportError, AttributeError):
        pytest.skip("needs ptxfp.tensor (fragments and mma)")
    rng = np.random.default_rng(7)
    W = 2                                                  # two warps, each its own matrices
    A = rng.uniform(-1, 1, (W, 16, 16)).astype(np.float16).view(np.uint16)
    B = rng.uniform(-1, 1, (W, 16, 8)).astype(np.float16).view(np.uint16)
    C = rng.uniform(-1, 1, (W, 16, 8)).astype(np.float32).view(np.uint32)
    lane = np.arange(32)
    g, t = lane >> 2, lane % 4
    ins = {}

    def per_thread(f):
        return np.concatenate([f(w) for w in range(W)])
    for r in range(4):                                     # A: row g + 8 (r%2), k-word t + 4 (r//2)
        row = g + 8 * (r % 2)
        col = 2 * (t + 4 * (r // 2))
        ins[f"a{r}"] = per_thread(lambda w: A[w, row, col].astype(np.uint32)
                                  | (A[w, row, col + 1].astype(np.uint32) << 16))
    for r in range(2):                                     # B: column g, k-word t + 4 r
        k = 2 * (t + 4 * r)
        ins[f"b{r}"] = per_thread(lambda w: B[w, k, g].astype(np.uint32)
                                  | (B[w, k + 1, g].astype(np.uint32) << 16))
    for r in range(4):                                     # C: row g + 8 (r//2), col 2t + r%2
        ins[f"c{r}"] = per_thread(lambda w: C[w, g + 8 * (r // 2), 2 * t + r % 2])
    src = (".reg .b32 a<4>, b<2>;\n.reg .f32 c<4>, d<4>;\n"
           "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d0,d1,d2,d3}, {a0,a1,a2,a3}, "
           "{b0,b1}, {c0,c1,c2,c3};")
    r = ptxfp.run(src, ins, block=32 * W)
    want = np.asarray(mma("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", A, B, C,
                          target="sm_90"))
    for q in range(4):
        got = r[f"d{q}"].reshape(W, 32)
        assert np.array_equal(got, want[:, g + 8 * (q // 2), 2 * t + q % 2])


def test_exited_threads_do_not_hold_a_barrier():
    src = """
    .shared .align 4 .b8 s[64];
    mov.u32 t, %tid.x; mov.u32 b, s; setp.ge.u32 p, t, 10;
    @p exit;
    mad.lo.u32 a, t, 4, b; st.shared.u32 [a], t;
    bar.sync 0;
    sub.u32 u, 9, t; mad.lo.u32 a2, u, 4, b; ld.shared.u32 v, [a2];
    """
    r = ptxfp.run(src, grid=2, block=16)
    assert r["v"].tolist()[:10] == list(range(9, -1, -1))
    assert r["v"].tolist()[16:26] == list(range(9, -1, -1))


@pytest.mark.parametrize("target", ["sm_75", "sm_90"])
def test_fast_math_intrinsics_are_ptx_math(target):
    """nvcc's output for __sinf, __cosf, __log2f, rsqrtf and sqrtf (-prec-sqrt=false):
    fast_math.cu, one .approx.f32 instruction each; run over the inputs of ptx-math's recorded
    answers (tests/data/sfu_ptxm_sm75*.npz: every table segment, specials, subnormals), each
    output equals ptx-math's answer (sm_75's model; the module's own .target is sm_80, the
    run's target= names the GPU)."""
    data = pathlib.Path(__file__).resolve().parent / "data"
    d = dict(np.load(data / "sfu_ptxm_sm75.npz"))
    d.update(np.load(data / "sfu_ptxm_sm75_sincos.npz"))
    src = text("fast_math.ptx")
    entry = "_Z9fast_mathPKfPfS1_S1_S1_S1_i"
    outputs = ("sin", "cos", "lg2", "rsqrt", "sqrt")          # params 1..5
    for form in outputs:
        x = d[f"{form}_x"][::4].astype(np.uint32)             # a quarter: ~23-36 k threads
        n = x.size
        m = Mem()
        ptrs = [m.put(x)] + [m.zeros(n, np.uint32) for _ in outputs]
        params = {f"{entry}_param_{k}": p for k, p in enumerate(ptrs)}
        params[f"{entry}_param_6"] = n
        block = 256
        r = ptxfp.run(src, params, memory=bytes(m.buf), grid=-(-n // block), block=block,
                      target=target)
        got = Mem.get(r[MEMORY_KEY], ptrs[1 + outputs.index(form)], n, np.uint32)
        want = d[f"{form}_y"][::4].astype(np.uint32)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (form, [hex(int(v)) for v in x[bad[:3]]])


def test_syncwarp_rotates_through_shared_memory():
    """nvcc's __syncwarp (warp_sync.cu: bar.warp.sync -1 and 0x55555555 in the even lanes'
    branch): a warp publishes, syncs and reads its neighbours' values; the reference is the
    same rotation written with NumPy."""
    src = text("warp_sync.ptx")
    e = "_Z11warp_rotatePKfPfS1_"
    rng = np.random.default_rng(3)
    x = rng.standard_normal(32).astype(np.float32)
    m = Mem()
    px, py, pz = m.put(x), m.zeros(32, np.float32), m.zeros(32, np.float32)
    r = ptxfp.run(src, {f"{e}_param_0": px, f"{e}_param_1": py, f"{e}_param_2": pz},
                  memory=bytes(m.buf), grid=1, block=32)
    y = Mem.get(r[MEMORY_KEY], py, 32, np.float32)
    z = Mem.get(r[MEMORY_KEY], pz, 32, np.float32)
    want_y = np.roll(x, -1)
    want_z = np.zeros(32, np.float32)
    want_z[0::2] = np.roll(want_y * np.float32(2), -2)[0::2]
    assert np.array_equal(y, want_y)
    assert np.array_equal(z, want_z)
