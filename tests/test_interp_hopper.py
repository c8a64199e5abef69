"""The sm_90a data path of ptxfp.run: parameters through addresses, mbarrier, wgmma, TMA,
clusters.  Expected values come from the PTX ISA's definitions written out plainly here (the
parameter buffer's layout, the mbarrier phase rules, the shared-memory matrix layouts of
wgmma and the tensor-map box copies as plain index arithmetic), and for the matrix products
from ``ptxfp.matmul`` with the instruction the kernel issues and its K order (whose numerics
tests/test_tensor*.py hold to MMA-Sim)."""

import json
from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.ptx.interp import MEMORY_KEY, InterpError, prepare

PARAMS = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u32 k_n, .param .align 64 .b8 k_tmap[128], .param .align 8 .b8 k_s[24])
{
 .reg .b64 %rd<8>; .reg .b32 %r<8>;
 mov.b64 %rd1, k_tmap;
 cvta.param.u64 %rd2, %rd1;
 ld.u32 %r1, [%rd2+4];
 mov.b64 %rd3, k_s;
 ld.param.u64 %rd4, [%rd3+16];
 ld.param.u32 %r2, [k_n];
 ld.param.v2.u32 {%r3, %r4}, [%rd3+8];
 cvta.to.param.u64 %rd5, %rd2;
 ld.param.u8 %r5, [%rd5+127];
}
"""


def test_parameters_through_addresses():
    """The buffer: k_n at 0 (4 bytes), k_tmap at 64 (.align 64), k_s at 192 (.align 8)."""
    tm = bytes(range(128))
    s = np.array([10, 11, 12], np.uint64).tobytes()
    r = ptxfp.run(PARAMS, {"k_n": 7, "k_tmap": tm, "k_s": s}, threads=2)
    assert int(r["%rd3"][0]) - int(r["%rd1"][0]) == 128
    assert int(r["%rd2"][0]) == int(r["%rd1"][0]) == int(r["%rd5"][1])
    assert int(r["%r1"][1]) == int.from_bytes(tm[4:8], "little")
    assert int(r["%rd4"][0]) == 12 and int(r["%r2"][0]) == 7
    assert int(r["%r3"][0]) == 11 and int(r["%r4"][0]) == 0
    assert int(r["%r5"][0]) == 127


def test_parameter_bytes_are_checked():
    with pytest.raises(ptxfp.errors.OperandError, match="100 bytes for the 128-byte"):
        ptxfp.run(PARAMS, {"k_n": 7, "k_tmap": bytes(100), "k_s": bytes(24)})
    with pytest.raises(InterpError, match="parameter 'k_tmap' has no value"):
        ptxfp.run(PARAMS, {"k_n": 7, "k_s": bytes(24)})


def test_parameter_address_out_of_the_buffer():
    bad = PARAMS.replace("[%rd3+16]", "[%rd3+24]")
    with pytest.raises(InterpError, match="outside the 216-byte parameter buffer"):
        ptxfp.run(bad, {"k_n": 7, "k_tmap": bytes(128), "k_s": bytes(24)})
    st = PARAMS.replace("ld.u32 %r1, [%rd2+4];", "st.u32 [%rd2+4], %r1;")
    with pytest.raises(InterpError, match="read-only"):
        ptxfp.run(st, {"k_n": 7, "k_tmap": bytes(128), "k_s": bytes(24), "%r1": 0})


# ---------------------------------------------------------------------------------------------
# wgmma: the manual's canonical layouts (9.7.15.5.1.2.1.3) evaluated as CuTe layouts here

#: (major, swizzle bytes) -> (the manual's canonical layout, Swizzle<B, 4, 3>'s B)
CANONICAL = {
    ("MN", 0): ("((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))", 0),
    ("MN", 32): ("((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))", 1),
    ("MN", 64): ("((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))", 2),
    ("MN", 128): ("((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))", 3),
    ("K", 0): ("((8,m),(T,2k)):((1T,SBO),(1,LBO))", 0),
    ("K", 32): ("((8,m),(T,2k)):((2T,SBO),(1,T))", 1),
    ("K", 64): ("((8,m),(T,2k)):((4T,SBO),(1,T))", 2),
    ("K", 128): ("((8,m),(T,2k)):((8T,SBO),(1,T))", 3),
}
LAYOUT_TYPE = {0: 0, 128: 1, 64: 2, 32: 3}         # descriptor bits 62-63 (the manual)


def _cute(text, env):
    """A CuTe layout 'shape:stride' with the names of `env` -> fn(coord per top mode)."""
    import re
    py = re.sub(r"(\d)([A-Za-z])", r"\1*\2", text)
    shape, stride = (eval(p, {}, dict(env)) for p in py.split(":"))

    def at(mode_shape, mode_stride, c):
        if isinstance(mode_shape, tuple):              # colexicographic: first mode fastest
            off = 0
            for s, d in zip(mode_shape, mode_stride):
                size = int(np.prod([s] if not isinstance(s, tuple) else s))
                off += at(s, d, c % size)
                c //= size
            return off
        return c * mode_stride
    return lambda *coord: sum(at(s, d, c) for s, d, c in zip(shape, stride, coord))


def _smem_matrix(smem, start, major, swz, eb, rows, cols, lbo, sbo):
    """The rows x cols (MN x K) element bits the manual's layout puts at `start`."""
    text, b = CANONICAL[(major, swz)]
    T = 16 // eb
    f = _cute(text, {"T": T, "m": 64, "k": 64, "SBO": sbo // eb, "LBO": lbo // eb})
    out = np.zeros((rows, cols), {1: np.uint8, 2: np.uint16, 4: np.uint32}[eb])
    for r in range(rows):
        for c in range(cols):
            a = start + f(r, c) * eb
            a ^= ((a >> 7) & ((1 << b) - 1)) << 4           # Swizzle<b, 4, 3> on the bytes
            out[r, c] = int.from_bytes(smem[a:a + eb].tobytes(), "little")
    return out


def _desc(start, lbo, sbo, swz):
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | LAYOUT_TYPE[swz] << 62


SMEM = 16384


def _wgmma_kernel(spelling, ndregs, a_regs, imms):
    """One warpgroup: global bytes 0..SMEM -> .shared sm, then the wgmma with descriptors
    %rd1 (A) and %rd2 (B), scale-d from %r10, d registers %d0.. given as inputs."""
    lines = [".version 8.0", ".target sm_90a", ".address_size 64",
             f".shared .align 1024 .b8 sm[{SMEM}];", ".visible .entry t()", "{",
             ".reg .b32 %r<40>; .reg .b64 %rd<10>; .reg .pred %p<3>;",
             f".reg .b32 %d<{ndregs}>;", ".reg .b32 %a<4>;",
             "mov.u32 %r1, %tid.x;", "shl.b32 %r2, %r1, 4;", "mov.u32 %r3, sm;"]
    for p in range(SMEM // 2048):
        lines += [f"add.u32 %r4, %r2, {p * 2048};", "cvt.u64.u32 %rd3, %r4;",
                  "ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd3];", "add.u32 %r9, %r3, %r4;",
                  "st.shared.v4.u32 [%r9], {%r5, %r6, %r7, %r8};"]
    d = ", ".join(f"%d{i}" for i in range(ndregs))
    a = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd1"
    lines += ["bar.sync 0;", "fence.proxy.async.shared::cta;", "setp.ne.u32 %p1, %r10, 0;",
              "wgmma.fence.sync.aligned;",
              f"{spelling} {{{d}}}, {a}, %rd2, %p1, {', '.join(map(str, imms))};",
              "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", "}"]
    return "\n".join(lines)


def _d_of_thread(t, i):
    """The manual's wgmma D fragment: thread t of the warpgroup, element i -> (row, col)."""
    w, lane = divmod(t, 32)
    return 16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + (lane % 4) * 2 + i % 2


def _a_of_thread(t, i, k):
    """A in registers (mma.m16n8k16's A, by warp): element i (of 8, two per register)."""
    w, lane = divmod(t, 32)
    g, q = lane // 4, lane % 4
    per = k // 8                           # elements a register: 2 (16-bit), 4 (8-bit), 1 (tf32)
    r, e = divmod(i, per)
    row = g + 8 * (r % 2)
    col = (q + 4 * (r // 2)) * per + e
    return 16 * w + row, col


WG_CASES = [
    # (types, a major, a swizzle, b major, b swizzle)
    ("f16", "K", 0, "K", 0), ("f16", "K", 32, "K", 64), ("f16", "K", 128, "MN", 128),
    ("bf16", "MN", 64, "MN", 32), ("bf16", "MN", 0, "MN", 0), ("bf16", "K", 64, "MN", 64),
    ("tf32", "K", 0, "K", 128), ("e4m3", "K", 128, "K", 32), ("e5m2", "K", 64, "K", 0),
]


def _fill(ty, rng):
    import ml_dtypes
    if ty in ("f16", "bf16"):
        dt = np.float16 if ty == "f16" else ml_dtypes.bfloat16
        return rng.standard_normal(SMEM // 2).astype(dt).tobytes()
    if ty == "tf32":
        return (rng.standard_normal(SMEM // 4).astype(np.float32).view(np.uint32)
                & np.uint32(0xFFFFE000)).tobytes()
    dt = ml_dtypes.float8_e4m3fn if ty == "e4m3" else ml_dtypes.float8_e5m2
    return rng.standard_normal(SMEM).astype(dt).tobytes()


def _layout_bytes(major, swz, eb, mn):
    """(LBO, SBO) for a compact tile of `mn` rows (K-major) / columns (MN-major)."""
    if major == "K":
        return (128, 256) if swz == 0 else (0, 8 * swz)
    if swz == 0:                 # core matrices of T x 8 at SBO along MN, k groups at LBO
        return (2048, 128)
    return (8 * swz, 8 * swz * 2) if mn > swz // eb else (0, 8 * swz)


@pytest.mark.parametrize("case", WG_CASES, ids=lambda c: "-".join(map(str, c)))
def test_wgmma_reads_the_manuals_shared_memory_layouts(case):
    ty, amaj, asw, bmaj, bsw = case
    eb = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}[ty]
    k = 32 // eb
    n = 16
    spelling = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ty}.{ty}"
    rng = np.random.default_rng(len(ty) * 100 + asw + bsw)
    smem = np.frombuffer(_fill(ty, rng), np.uint8)
    alb, asb = _layout_bytes(amaj, asw, eb, 64)
    blb, bsb = _layout_bytes(bmaj, bsw, eb, n)
    a0, b0 = 0, 8192
    half = ty in ("f16", "bf16")
    imms = [1, 1] + ([int(amaj == "MN"), int(bmaj == "MN")] if half else [])
    text = _wgmma_kernel(spelling, n // 2, False, imms)
    C = rng.standard_normal((64, n)).astype(np.float32)
    dregs = {f"%d{i}": np.array([C[_d_of_thread(t, i)].view(np.uint32) for t in range(128)])
             for i in range(n // 2)}
    r = ptxfp.run(text, {"%rd1": _desc(a0, alb, asb, asw), "%rd2": _desc(b0, blb, bsb, bsw),
                         "%r10": 1, **dregs}, memory=smem.tobytes(), block=128)
    A = _smem_matrix(smem, a0, amaj, asw, eb, 64, k, alb, asb)
    B = _smem_matrix(smem, b0, bmaj, bsw, eb, n, k, blb, bsb).T
    D = np.asarray(ptxfp.mma(spelling, A, B, C.view(np.uint32), target="sm_90a"))
    for i in range(n // 2):
        want = np.array([D[_d_of_thread(t, i)] for t in range(128)], np.uint32)
        assert np.array_equal(r[f"%d{i}"], want), i


@pytest.mark.parametrize("ty", ["bf16", "e4m3"])
def test_wgmma_a_in_registers_scales_and_scale_d(ty):
    """A from the registers (mma.m16n8k's A fragment of rows 16 w ..), imm-scale-a = -1 and
    imm-scale-b = -1 (each negates its matrix), scale-d false (D = A B, C ignored)."""
    eb = 2 if ty == "bf16" else 1
    k, n = 32 // eb, 16
    spelling = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ty}.{ty}"
    rng = np.random.default_rng(7)
    smem = np.frombuffer(_fill(ty, rng), np.uint8)
    imms = [-1, -1] + ([0] if eb == 2 else [])
    text = _wgmma_kernel(spelling, n // 2, True, imms)
    Abits = np.frombuffer(_fill(ty, rng), {1: np.uint8, 2: np.uint16}[eb])[:64 * k]
    A = Abits.reshape(64, k)
    per = 4 // eb
    aregs = {}
    for reg in range(4):
        words = []
        for t in range(128):
            w = 0
            for e in range(per):
                w |= int(A[_a_of_thread(t, reg * per + e, k)]) << (8 * eb * e)
            words.append(w)
        aregs[f"%a{reg}"] = np.array(words, np.uint32)
    dregs = {f"%d{i}": np.full(128, 0x3F800000, np.uint32) for i in range(n // 2)}
    r = ptxfp.run(text, {"%rd2": _desc(8192, 128, 256, 0), "%r10": 0, **aregs,
                         **dregs}, memory=smem.tobytes(), block=128)
    B = _smem_matrix(smem, 8192, "K", 0, eb, n, k, 128, 256).T
    sign = np.uint16(0x8000) if eb == 2 else np.uint8(0x80)
    D = np.asarray(ptxfp.mma(spelling, A ^ sign, B ^ sign, np.zeros((64, n), np.uint32),
                             target="sm_90a"))
    for i in range(n // 2):
        want = np.array([D[_d_of_thread(t, i)] for t in range(128)], np.uint32)
        assert np.array_equal(r[f"%d{i}"], want), i


def test_wgmma_errors_are_one_line():
    spelling = "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16"
    text = _wgmma_kernel(spelling, 8, False, [1, 1, 0, 0])
    dregs = {f"%d{i}": 0 for i in range(8)}
    mem = bytes(SMEM)
    with pytest.raises(InterpError, match=r"descriptor of B .* outside the 16384-byte "
                                          r"\.shared memory"):
        ptxfp.run(text, {"%rd1": 0, "%rd2": _desc(16000, 128, 256, 0), "%r10": 0, **dregs},
                  memory=mem, block=128)
    with pytest.raises(InterpError, match="runs it with 64 of its threads; wgmma needs all"):
        ptxfp.run(text, {"%rd1": 0, "%rd2": 0, "%r10": 0, **dregs}, memory=mem, block=64)
    with pytest.raises(InterpError, match="descriptor of A differs between the threads"):
        ptxfp.run(text, {"%rd1": np.arange(128) * 16, "%rd2": 0, "%r10": 0, **dregs},
                  memory=mem, block=128)
    # a wait with nothing committed returns at once (the manual: "until only N or fewer of the
    # most recent wgmma-groups are pending")
    r = ptxfp.run("wgmma.fence.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
                  "mov.u32 %r1, 5;", block=128)
    assert int(r["%r1"][0]) == 5


# ---------------------------------------------------------------------------------------------
# Triton 3.8's sm_90a matmuls (tools/triton_mm_sm90a.py)

KERNELS = Path(__file__).parent / "data" / "kernels"


def _triton_mm(name, M, N, K, seed=0):
    import ml_dtypes
    meta = json.loads((KERNELS / "triton_mm_sm90a.json").read_text())[name]
    npdt = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16,
            "fp8e4nv": ml_dtypes.float8_e4m3fn}[meta["dtype"]]
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)).astype(npdt)
    B = rng.standard_normal((K, N)).astype(npdt)
    b0, c0 = A.nbytes, A.nbytes + B.nbytes
    text = (KERNELS / name).read_text()
    inst = next(ln.split()[0] for ln in text.splitlines() if "wgmma.mma_async" in ln)
    r = ptxfp.run(text, {"mm_param_0": 0, "mm_param_1": b0, "mm_param_2": c0,
                         "mm_param_3": M, "mm_param_4": N, "mm_param_5": K, "mm_param_6": 0,
                         "mm_param_7": 0}, memory=A.tobytes() + B.tobytes() + bytes(M * N * 4),
                  grid=(M // meta["BM"], N // meta["BN"]), block=128,
                  shared_bytes=meta["shared_bytes"])
    C = np.frombuffer(r[MEMORY_KEY][c0:c0 + M * N * 4].tobytes(), np.uint32).reshape(M, N)
    return C, A, B, inst


@pytest.mark.parametrize("name, K", [("triton_mm_f16_sm90a.ptx", 96),
                                     ("triton_mm_bf16_sm90a.ptx", 128),
                                     ("triton_mm_e4m3_sm90a.ptx", 256)])
def test_triton_sm90a_matmul_is_ptxfp_matmul(name, K):
    C, A, B, inst = _triton_mm(name, 128, 64, K)
    want = np.asarray(ptxfp.matmul(A, B, instruction=inst, target="sm_90a"), np.float32)
    assert np.array_equal(C, want.view(np.uint32))


# ---------------------------------------------------------------------------------------------
# mbarrier: the manual's phase rules (9.7.13.15)

PRODUCER_CONSUMER = """
.shared .align 8 .b64 bar;
.reg .b32 %r<10>; .reg .b64 %rd<4>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
mov.u32 %r2, bar;
setp.eq.u32 %p1, %r1, 0;
@%p1 mbarrier.init.shared::cta.b64 [%r2], 32;
bar.sync 0;
setp.lt.u32 %p2, %r1, 32;
@%p2 bra CONSUMER;
mov.u32 %r5, 77;
mbarrier.arrive.shared::cta.b64 %rd1, [%r2];
bra DONE;
CONSUMER:
mov.u32 %r6, 0;
WAIT:
mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r6;
@!%p3 bra WAIT;
mov.u32 %r5, 11;
DONE:
elect.sync %r7|%p3, 0xffffffff;
"""


def test_mbarrier_consumer_sleeps_until_the_producer_arrives():
    r = ptxfp.run(PRODUCER_CONSUMER, block=64)
    assert list(r["%r5"][:32]) == [11] * 32 and list(r["%r5"][32:]) == [77] * 32
    assert list(r["%rd1"][32:34]) == [0, 0]                  # the phase they arrived in
    assert int(r["%r7"][40]) == 0 and bool(r["%p3"][32]) and not r["%p3"][33]


def test_mbarrier_that_never_completes_is_one_line():
    with pytest.raises(InterpError, match=r"mbarrier at \.shared 0x0 of block \(0, 0, 0\) "
                                          r"never completes \(parity 0 .* phase 0 with 1 of 33 "
                                          r"arrivals pending .*: 32 threads wait here"):
        ptxfp.run(PRODUCER_CONSUMER.replace("], 32;", "], 33;"), block=64)


PHASES = """
.shared .align 8 .b64 bar;
.reg .b32 %r<10>; .reg .b64 %rd<8>; .reg .pred %p<12>;
mov.u32 %r2, bar;
mbarrier.init.shared.b64 [%r2], 2;
mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r2], 64;
mbarrier.test_wait.shared.b64 %p1, [%r2], %rd1;
mbarrier.arrive.shared.b64 %rd2, [%r2];
mbarrier.test_wait.shared.b64 %p2, [%r2], %rd1;
mbarrier.complete_tx.shared.b64 [%r2], 48;
mbarrier.test_wait.parity.shared.b64 %p3, [%r2], 0;
mbarrier.complete_tx.shared.b64 [%r2], 16;
mbarrier.test_wait.shared.b64 %p4, [%r2], %rd1;
mbarrier.test_wait.parity.shared.b64 %p5, [%r2], 0;
mbarrier.test_wait.parity.shared.b64 %p6, [%r2], 1;
mbarrier.expect_tx.shared.b64 [%r2], 8;
mbarrier.arrive.shared.b64 %rd3, [%r2], 2;
mbarrier.complete_tx.shared.b64 [%r2], 8;
mbarrier.try_wait.shared.b64 %p7, [%r2], %rd3;
mbarrier.test_wait.parity.shared.b64 %p8, [%r2], 1;
mbarrier.inval.shared.b64 [%r2];
"""


def test_mbarrier_phase_and_tx_count():
    """Phase 0 needs 2 arrivals and 64 bytes: after both arrivals it is still open (tx 16
    left), complete once the last 16 bytes land; phase 1 takes an arrive of count 2."""
    r = ptxfp.run(PHASES, threads=1)
    got = [bool(r[f"%p{i}"][0]) for i in range(1, 9)]
    assert got == [False, False, False, True, True, False, True, True]
    assert int(r["%rd1"][0]) == int(r["%rd2"][0]) == 0 and int(r["%rd3"][0]) == 1


def test_mbarrier_errors():
    with pytest.raises(InterpError, match="3 arrivals on an mbarrier with 2 pending"):
        ptxfp.run(PHASES.replace("[%r2], 2;\nmbarrier.complete_tx", "[%r2], 3;\n"
                                 "mbarrier.complete_tx"), threads=1)
    with pytest.raises(InterpError, match="no mbarrier at .shared address 0x0"):
        ptxfp.run(PHASES.replace("mbarrier.init.shared.b64 [%r2], 2;", ""), threads=1)
    with pytest.raises(InterpError, match="register count must be a constant 24..256"):
        ptxfp.run("setmaxnreg.inc.sync.aligned.u32 20;", threads=1)
    r = ptxfp.run("setmaxnreg.dec.sync.aligned.u32 40;\ngriddepcontrol.wait;\n"
                  "griddepcontrol.launch_dependents;\nfence.proxy.async.shared::cta;\n"
                  "fence.mbarrier_init.release.cluster;\nmov.u32 %r1, 1;", threads=32)
    assert int(r["%r1"][0]) == 1


# ---------------------------------------------------------------------------------------------
# TMA: ptxfp.tensor_map and cp.async.bulk.tensor (tile mode), written out plainly

TMA = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_tm[128], .param .u32 k_x, .param .u32 k_y,
                  .param .u32 k_x2, .param .u32 k_y2)
{
.shared .align 1024 .b8 sm[2048];
.shared .align 8 .b64 bar;
.reg .b32 %r<40>; .reg .b64 %rd<10>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
mov.u32 %r2, bar;
mov.u32 %r3, sm;
ld.param.u32 %r4, [k_x];
ld.param.u32 %r5, [k_y];
setp.eq.u32 %p1, %r1, 0;
@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
fence.mbarrier_init.release.cluster;
bar.sync 0;
mov.b64 %rd1, k_tm;
@%p1 prefetch.tensormap [%rd1];
@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 2048;
@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r4, %r5}], [%r2];
mov.u32 %r6, 0;
WAIT:
mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r6;
@!%p2 bra WAIT;
""" + "".join(f"""shl.b32 %r10, %r1, 4;
add.u32 %r10, %r10, {p * 512};
add.u32 %r11, %r3, %r10;
ld.shared.v4.u32 {{%r12, %r13, %r14, %r15}}, [%r11];
cvt.u64.u32 %rd2, %r10;
st.global.v4.u32 [%rd2], {{%r12, %r13, %r14, %r15}};
""" for p in range(4)) + """
ld.param.u32 %r7, [k_x2];
ld.param.u32 %r8, [k_y2];
fence.proxy.async.shared::cta;
@%p1 cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [k_tm, {%r7, %r8}], [%r3];
cp.async.bulk.commit_group;
cp.async.bulk.wait_group.read 0;
}
"""

ROWS, COLS, PITCH, GBASE = 40, 100, 208, 8192


def _tma_run(x, y, x2, y2, swizzle):
    rng = np.random.default_rng(3)
    T = rng.integers(1, 65535, (ROWS, PITCH // 2), dtype=np.uint16)
    mem = bytearray(GBASE) + bytearray(T.tobytes())
    tm = ptxfp.tensor_map("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 2, GBASE, [COLS, ROWS], [PITCH],
                          [64, 16], [1, 1], "CU_TENSOR_MAP_INTERLEAVE_NONE", swizzle, 0, 0)
    sx = lambda v: v & 0xFFFFFFFF                                   # noqa: E731
    r = ptxfp.run(TMA, {"k_tm": tm, "k_x": sx(x), "k_y": sx(y), "k_x2": sx(x2),
                        "k_y2": sx(y2)}, memory=bytes(mem), block=32)
    return T, np.asarray(r[MEMORY_KEY])


@pytest.mark.parametrize("swizzle", [0, 3])
def test_tma_load_box_swizzle_zero_fill_and_store(swizzle):
    x, y, x2, y2 = 40, 30, -20, 1
    T, out = _tma_run(x, y, x2, y2, swizzle)
    box = np.zeros((16, 64), np.uint16)
    for j1 in range(16):
        for j0 in range(64):
            if 0 <= y + j1 < ROWS and 0 <= x + j0 < COLS:
                box[j1, j0] = T[y + j1, x + j0]
    smem = np.zeros(2048, np.uint8)
    for j1 in range(16):
        for j0 in range(64):
            o = (j1 * 64 + j0) * 2
            if swizzle == 3:                                       # 128B: bits 4-6 ^= 7-9
                o ^= ((o >> 7) & 7) << 4
            smem[o:o + 2] = np.frombuffer(box[j1, j0].tobytes(), np.uint8)
    assert np.array_equal(out[:2048], smem)
    # the store puts the box back at (x2, y2), skipping elements outside the tensor
    want = T.copy()
    for j1 in range(16):
        for j0 in range(64):
            if 0 <= y2 + j1 < ROWS and 0 <= x2 + j0 < COLS:
                want[y2 + j1, x2 + j0] = box[j1, j0]
    got = out[GBASE:GBASE + T.nbytes].view(np.uint16).reshape(T.shape)
    assert np.array_equal(got, want)


def test_tensor_map_encoding_and_its_checks():
    tm = ptxfp.tensor_map(9, 2, 0x1000, [64, 32], [128], [64, 16], [1, 1], 0, "128B", 2, 0)
    assert len(tm) == 128 and tm[:4] == b"PXTM" and tm[5:11] == bytes([9, 2, 0, 3, 2, 0])
    assert int.from_bytes(tm[16:24], "little") == 0x1000
    with pytest.raises(ptxfp.errors.OperandError, match=r"box_dim\[0\]=128: the inner box "
                                                        r"\(256 bytes\) is over the 128-byte"):
        ptxfp.tensor_map("BFLOAT16", 2, 0, [256, 32], [512], [128, 16], [1, 1], 0, 3, 0, 0)
    with pytest.raises(ptxfp.errors.OperandError, match=r"global_strides\[0\]=200"):
        ptxfp.tensor_map("BFLOAT16", 2, 0, [100, 32], [200], [64, 16], [1, 1])
    with pytest.raises(ptxfp.errors.OperandError, match="swizzle='96B'"):
        ptxfp.tensor_map("BFLOAT16", 2, 0, [64, 32], [128], [64, 16], [1, 1], 0, "96B")


def test_tma_errors_are_one_line():
    bad = TMA.replace("[%r3], [%rd1, {%r4, %r5}]", "[%r3], [%rd1, {%r4}]")
    with pytest.raises(InterpError, match=r"a \.2d copy takes 2 coordinates, got 1"):
        prepare(bad)
    tm = ptxfp.tensor_map("BFLOAT16", 2, 1 << 20, [COLS, ROWS], [PITCH], [64, 16], [1, 1])
    with pytest.raises(InterpError, match=r"tensor map's element at .* is outside the"):
        ptxfp.run(TMA, {"k_tm": tm, "k_x": 0, "k_y": 0, "k_x2": 0, "k_y2": 0},
                  memory=bytes(4096), block=32)
    with pytest.raises(InterpError, match="not a tensor map made by ptxfp.tensor_map"):
        ptxfp.run(TMA, {"k_tm": bytes(128), "k_x": 0, "k_y": 0, "k_x2": 0, "k_y2": 0},
                  memory=bytes(4096), block=32)


# ---------------------------------------------------------------------------------------------
# clusters of one block

CLUSTER = """
.shared .align 4 .b32 s[64];
.reg .b32 %r<20>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
mov.u32 %r2, %cluster_ctarank;
mov.u32 %r3, %cluster_nctarank;
mov.u32 %r4, %cluster_ctaid.x;
mov.u32 %r5, %cluster_nctaid.x;
mov.u32 %r6, %clusterid.x;
mov.u32 %r7, s;
shl.b32 %r8, %r1, 2;
add.u32 %r8, %r7, %r8;
mapa.shared::cluster.u32 %r9, %r8, %r2;
setp.lt.u32 %p1, %r1, 32;
@%p1 bra LATE;
st.shared::cluster.u32 [%r9], %r1;
barrier.cluster.arrive.release.aligned;
barrier.cluster.wait.acquire.aligned;
bra READ;
LATE:
st.shared::cluster.u32 [%r9], %r1;
barrier.cluster.arrive.release.aligned;
barrier.cluster.wait.acquire.aligned;
READ:
xor.b32 %r10, %r1, 63;
shl.b32 %r10, %r10, 2;
add.u32 %r10, %r7, %r10;
ld.shared.u32 %r11, [%r10];
"""


def test_cluster_of_one():
    r = ptxfp.run(CLUSTER, grid=3, block=64)
    assert set(r["%r2"]) == {0} and set(r["%r3"]) == {1} and set(r["%r4"]) == {0}
    assert set(r["%r5"]) == {1} and list(r["%r6"][::64]) == [0, 1, 2]
    assert np.array_equal(r["%r9"], r["%r8"])
    assert np.array_equal(r["%r11"], np.tile(63 - np.arange(64), 3))   # after the barrier


def test_cluster_errors():
    with pytest.raises(InterpError, match="rank 1: a cluster of one block has only rank 0"):
        ptxfp.run(CLUSTER.replace("%r8, %r2;", "%r8, 1;"), grid=1, block=64)
    with pytest.raises(InterpError, match="waits on the cluster barrier without arriving"):
        ptxfp.run(CLUSTER.replace("st.shared::cluster.u32 [%r9], %r1;\n"
                                  "barrier.cluster.arrive.release.aligned;\n", "", 1),
                  block=64)
    # larger clusters are refused where the kernel works across its cluster (a kernel that
    # only asks for them runs: test_interp_glue's launch directives)
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() "
            ".reqnctapercluster 2, 1, 1\n{\n" + CLUSTER + "}\n")
    with pytest.raises(ptxfp.errors.OperandError, match=r"clusters of 2 x 1 x 1 blocks .* "
                                                        r"\('mov.u32', line"):
        ptxfp.run(text, grid=2, block=64)
    assert (ptxfp.run(text.replace(".reqnctapercluster 2, 1, 1", ".reqnctapercluster 1"),
                      grid=2, block=64)["%r2"] == 0).all()


def test_triton_sm90a_tma_matmul_is_ptxfp_matmul():
    """Triton's tensor-descriptor matmul: TMA loads with the 64B / 128B swizzles the kernel's
    wgmma descriptors read, mbarrier expect_tx and try_wait.parity, three stages."""
    import ml_dtypes
    name = "triton_mm_bf16_tma_sm90a.ptx"
    meta = json.loads((KERNELS / "triton_mm_sm90a.json").read_text())[name]
    M, N, K = 128, 64, 160
    rng = np.random.default_rng(5)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    b0, c0 = A.nbytes, A.nbytes + B.nbytes
    ta = ptxfp.tensor_map("BFLOAT16", 2, 0, [K, M], [K * 2], meta["tma"]["a"]["box"], [1, 1],
                          0, meta["tma"]["a"]["swizzle"], 0, 0)
    tb = ptxfp.tensor_map("BFLOAT16", 2, b0, [N, K], [N * 2], meta["tma"]["b"]["box"], [1, 1],
                          0, meta["tma"]["b"]["swizzle"], 0, 0)
    text = (KERNELS / name).read_text()
    r = ptxfp.run(text, {"mm_tma_param_0": ta, "mm_tma_param_1": M, "mm_tma_param_2": K, "mm_tma_param_3": K,
                         "mm_tma_param_4": 1, "mm_tma_param_5": tb, "mm_tma_param_6": K, "mm_tma_param_7": N,
                         "mm_tma_param_8": N, "mm_tma_param_9": 1, "mm_tma_param_10": c0,
                         "mm_tma_param_11": M, "mm_tma_param_12": N, "mm_tma_param_13": K,
                         "mm_tma_param_14": 0, "mm_tma_param_15": 0},
                  memory=A.tobytes() + B.tobytes() + bytes(M * N * 4), grid=(M // 64, N // 64),
                  block=128, shared_bytes=meta["shared_bytes"])
    C = np.frombuffer(r[MEMORY_KEY][c0:c0 + M * N * 4].tobytes(), np.uint32).reshape(M, N)
    inst = next(ln.split()[0] for ln in text.splitlines() if "wgmma.mma_async" in ln)
    want = np.asarray(ptxfp.matmul(A, B, instruction=inst, target="sm_90a"), np.float32)
    assert np.array_equal(C, want.view(np.uint32))


def test_triton_sm90a_bf16_256_cubed_speed():
    """The speed goal: a 256^3 bf16 wgmma GEMM (128 x 128 tiles, 4 blocks) under 10 s."""
    import time
    t = time.perf_counter()
    C, A, B, inst = _triton_mm("triton_mm_bf16_128_sm90a.ptx", 256, 256, 256)
    took = time.perf_counter() - t
    want = np.asarray(ptxfp.matmul(A, B, instruction=inst, target="sm_90a"), np.float32)
    assert np.array_equal(C, want.view(np.uint32)) and took < 10, took


# ---------------------------------------------------------------------------------------------
# our CuTe TMA + mbarrier + wgmma GEMM, compiled by nvcc 13.0 with CUTLASS's headers
# (tools/cute_gemm_sm90a.py): the tensor maps are rebuilt with ptxfp.tensor_map from the
# parameters CuTe gave cuTensorMapEncodeTiled

@pytest.mark.parametrize("ty", ["bf16", "e4m3"])
def test_cute_tma_wgmma_gemm_is_ptxfp_matmul(ty):
    import ml_dtypes
    text = (KERNELS / f"cute_gemm_{ty}_sm90a.ptx").read_text()
    recs = [json.loads(ln) for ln in
            (KERNELS / f"cute_gemm_{ty}_sm90a.jsonl").read_text().splitlines()]
    maps = [r for r in recs if "map" in r]
    args = {r["arg"]: bytes.fromhex(r["bytes"]) for r in recs if "arg" in r}
    info = next(r for r in recs if "shared_bytes" in r)
    M, N, K = info["M"], info["N"], info["K"]
    dt = ml_dtypes.bfloat16 if ty == "bf16" else ml_dtypes.float8_e4m3fn
    rng = np.random.default_rng(11)
    A = rng.standard_normal((M, K)).astype(dt)
    B = rng.standard_normal((N, K)).astype(dt)
    at = {info["A"]: 0, info["B"]: A.nbytes}
    c0 = A.nbytes + B.nbytes

    def atom(name):                       # the Copy_Atom's bytes with our map in its place
        raw = bytearray(args[name])
        i = raw.index(b"MAP#")
        m = maps[raw[i + 4]]
        raw[i:i + 128] = ptxfp.tensor_map(
            m["data_type"], m["rank"], at[m["global_address"]], m["global_dim"],
            m["global_strides"], m["box_dim"], m["element_strides"], m["interleave"],
            m["swizzle"], m["l2_promotion"], m["oob_fill"])
        return bytes(raw)
    prog = prepare(text)
    p = list(prog.params)
    r = ptxfp.run(prog, {p[0]: M, p[1]: N, p[2]: K, p[3]: atom("tma_a"), p[4]: atom("tma_b"),
                         p[5]: c0, p[6]: N},
                  memory=A.tobytes() + B.tobytes() + bytes(M * N * 4), grid=(M // 64, N // 64),
                  block=128, shared_bytes=info["shared_bytes"])
    C = np.frombuffer(r[MEMORY_KEY][c0:c0 + M * N * 4].tobytes(), np.uint32).reshape(M, N)
    inst = next(ln.split()[0] for ln in text.splitlines() if "wgmma.mma_async" in ln)
    want = np.asarray(ptxfp.matmul(A, B.T, instruction=inst, target="sm_90a"), np.float32)
    assert np.array_equal(C, want.view(np.uint32))


def test_labels_are_scoped_by_block():
    """nvcc inlines the same asm block twice: each 'bra DONE' goes to its own block's DONE."""
    src = """
.reg .b32 %r<4>;
mov.u32 %r1, 0;
{
bra DONE;
add.u32 %r1, %r1, 100;
DONE:
add.u32 %r1, %r1, 1;
}
{
bra DONE;
add.u32 %r1, %r1, 1000;
DONE:
add.u32 %r1, %r1, 10;
}
"""
    assert int(ptxfp.run(src, threads=1)["%r1"][0]) == 11


def test_cutlass3_warp_specialized_gemm_is_ptxfp_matmul():
    """CUTLASS 3's KernelTmaWarpSpecializedCooperative (384 threads: a producer warpgroup,
    two consumer warpgroups, mbarrier pipelines, setmaxnreg, a TMA-store epilogue), its
    1,792-byte Params given as bytes: the maps rebuilt from what CUTLASS gave
    cuTensorMapEncodeTiled, D's plain pointer moved to where D is here."""
    import ml_dtypes
    name = "cutlass_ws_gemm_bf16_sm90a"
    text = (KERNELS / f"{name}.ptx").read_text()
    recs = [json.loads(ln) for ln in (KERNELS / f"{name}.jsonl").read_text().splitlines()]
    maps = [r for r in recs if "map" in r]
    info = next(r for r in recs if "shared_bytes" in r)
    raw = bytearray(bytes.fromhex(next(r["bytes"] for r in recs if r.get("arg") == "params")))
    M, N, K = info["M"], info["N"], info["K"]
    rng = np.random.default_rng(13)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c0 = A.nbytes + B.nbytes
    d0 = c0 + M * N * 4
    at = {info["A"]: 0, info["B"]: A.nbytes, info["C"]: c0, info["D"]: d0}
    i = raw.find(b"MAP#")
    while i >= 0:
        m = maps[raw[i + 4]]
        raw[i:i + 128] = ptxfp.tensor_map(
            m["data_type"], m["rank"], at[m["global_address"]], m["global_dim"],
            m["global_strides"], m["box_dim"], m["element_strides"], m["interleave"],
            m["swizzle"], m["l2_promotion"], m["oob_fill"])
        i = raw.find(b"MAP#", i + 128)
    for host, here in at.items():
        j = raw.find(host.to_bytes(8, "little"))
        while j >= 0:
            raw[j:j + 8] = here.to_bytes(8, "little")
            j = raw.find(host.to_bytes(8, "little"))
    prog = prepare(text)
    (param,) = prog.params
    r = ptxfp.run(prog, {param: bytes(raw)}, memory=A.tobytes() + B.tobytes() +
                  bytes(2 * M * N * 4), grid=tuple(info["grid"]), block=info["threads"],
                  shared_bytes=info["shared_bytes"])
    D = np.frombuffer(r[MEMORY_KEY][d0:d0 + M * N * 4].tobytes(), np.uint32).reshape(M, N)
    inst = next(ln.split()[0] for ln in text.splitlines() if "wgmma.mma_async" in ln)
    want = np.asarray(ptxfp.matmul(A, B.T, instruction=inst, target="sm_90a"), np.float32)
    assert np.array_equal(D, want.view(np.uint32))


def test_trap_stops_the_run():
    src = "mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 3;\n@%p1 trap;\nmov.u32 %r2, 1;"
    with pytest.raises(InterpError, match="'trap' reached by thread 3"):
        ptxfp.run(src, threads=8)
    assert int(ptxfp.run(src, threads=3)["%r2"][0]) == 1


BULK = """
.shared .align 128 .b8 sm[256];
.shared .align 8 .b64 bar;
.reg .b32 %r<10>; .reg .b64 %rd<4>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
mov.u32 %r2, bar;
mov.u32 %r3, sm;
setp.eq.u32 %p1, %r1, 0;
@%p1 mbarrier.init.shared.b64 [%r2], 1;
bar.sync 0;
mov.u64 %rd1, 64;
@%p1 mbarrier.arrive.expect_tx.shared.b64 %rd2, [%r2], 128;
@%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 128, [%r2];
mov.u32 %r4, 0;
W:
mbarrier.try_wait.parity.shared.b64 %p2, [%r2], %r4;
@!%p2 bra W;
mov.u64 %rd3, 512;
@%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd3], [%r3+16], 96;
cp.async.bulk.commit_group;
cp.async.bulk.wait_group 0;
"""


def test_cp_async_bulk_copies():
    """128 bytes from global 64 land at sm (the mbarrier's phase completes with them); then
    96 bytes of sm from byte 16 go to global 512."""
    mem = np.arange(1024, dtype=np.uint32).astype(np.uint8)
    out = np.asarray(ptxfp.run(BULK, memory=mem.tobytes(), block=32)[MEMORY_KEY])
    want = mem.copy()
    want[512:608] = mem[64 + 16:64 + 112]
    assert np.array_equal(out, want)
    with pytest.raises(InterpError, match="size 100 must be a positive multiple of 16"):
        ptxfp.run(BULK.replace("], 96;", "], 100;"), memory=mem.tobytes(), block=32)


def test_tma_multicast_and_cache_hint_operands():
    """ctaMask (.multicast::cluster: the cluster of one's CTA 0) and the policy are read."""
    text = TMA.replace(
        "mbarrier::complete_tx::bytes [%r3], [%rd1, {%r4, %r5}], [%r2];",
        "mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%r3], "
        "[%rd1, {%r4, %r5}], [%r2], %rs1, %rd9;")
    text = text.replace(".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .b16 %rs<2>;")
    text = text.replace("@%p1 prefetch.tensormap [%rd1];", "@%p1 prefetch.tensormap [%rd1];\n"
                        "mov.u16 %rs1, 1;\ncreatepolicy.fractional.L2::evict_last.b64 %rd9, "
                        "1.0;")
    rng = np.random.default_rng(3)
    T = rng.integers(1, 65535, (ROWS, PITCH // 2), dtype=np.uint16)
    tm = ptxfp.tensor_map("BFLOAT16", 2, GBASE, [COLS, ROWS], [PITCH], [64, 16], [1, 1])
    r = ptxfp.run(text, {"k_tm": tm, "k_x": 0, "k_y": 0, "k_x2": 0, "k_y2": 0},
                  memory=bytes(GBASE) + T.tobytes(), block=32)
    got = np.asarray(r[MEMORY_KEY])[:2048].view(np.uint16).reshape(16, 64)
    assert np.array_equal(got, T[:16, :64])


# ---------------------------------------------------------------------------------------------
# the parameter window inside the generic address space, with calls and block-scoped labels

BOTH = """
.version 8.0
.target sm_90a
.address_size 64
.func (.param .b32 f_r) f(.param .b32 f_a)
{
 .reg .b32 %r<4>; .reg .pred %p;
 ld.param.u32 %r1, [f_a];
 {
  setp.eq.u32 %p, %r1, 0;
  @%p bra DONE;
  add.u32 %r1, %r1, 100;
 DONE:
 }
 {
  setp.ne.u32 %p, %r1, 0;
  @%p bra DONE;
  add.u32 %r1, %r1, 1000;
 DONE:
 }
 st.param.u32 [f_r], %r1;
 ret;
}
.visible .entry k(.param .u32 k_n, .param .align 8 .b8 k_s[16])
{
 .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .pred %q<3>;
 mov.b64 %rd1, k_s;
 ld.param.u32 %r1, [%rd1+8];
 cvta.param.u64 %rd2, %rd1;
 ld.u32 %r2, [%rd2+12];
 ld.param.u32 %r3, [k_n];
 isspacep.param %q1, %rd2;
 isspacep.global %q2, %rd2;
 {
  .param .b32 pa; .param .b32 pr;
  st.param.b32 [pa], %r1;
  call (pr), f, (pa);
  ld.param.b32 %r4, [pr];
 }
 {
  .param .b32 pa; .param .b32 pr;
  st.param.b32 [pa], %r3;
  call (pr), f, (pa);
  ld.param.b32 %r5, [pr];
 }
}
"""


def test_parameter_window_with_calls_and_scoped_labels():
    """k_n at 0, k_s at 8: [%rd1+8] is k_s's third word, [%rd2+12] its fourth, through the
    parameter window; f(x) = x + 100 for x != 0, 1000 for 0, its two 'DONE' labels each in
    its own block of each inlined copy."""
    s = np.array([1, 2, 5, 9], np.uint32).tobytes()
    r = ptxfp.run(BOTH, {"k_n": 0, "k_s": s}, threads=2)
    assert int(r["%r1"][0]) == 5 and int(r["%r2"][1]) == 9 and int(r["%r3"][0]) == 0
    assert bool(r["%q1"][0]) and not bool(r["%q2"][0])
    assert int(r["%r4"][0]) == 105 and int(r["%r5"][1]) == 1000
