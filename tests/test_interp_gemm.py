"""The sm_80 GEMM data path in ptxfp.run: cp.async and its groups, ldmatrix / stmatrix /
movmatrix, and Triton's own tl.dot modules end to end.

Expected values come from the PTX ISA's definitions written out plainly here (ldmatrix: lane
``8*i + r`` gives the address of row ``r`` of matrix ``i``; register ``i`` of lane ``l`` holds
row ``l // 4``, columns ``2*(l % 4)`` and ``2*(l % 4) + 1``, the first in bits 0-15; .trans
the transposed matrix.  cp.async: ``src-size`` bytes are read, the rest of ``cp-size``
zero-filled; ``ignore-src`` true writes zeros), and for the matmuls from ``ptxfp.matmul`` with
the instruction the module issues and Triton's K order (increasing k), whose tensor-core
numerics tests/test_tensor*.py hold to MMA-Sim and recorded GPU answers."""

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxfp
from ptxfp.ptx.interp import MEMORY_KEY, InterpError

KERNELS = Path(__file__).parent / "data" / "kernels"

#: 512 bytes of global memory: u16 element e holds 1000 + e
GLOBAL = (1000 + np.arange(256, dtype=np.uint16)).tobytes()

# every lane copies its 16 bytes of GLOBAL into row (5 * lane) % 32 of `sm` (rows of 16 bytes),
# so the row a lane addresses is not its own: %r3 is the lane's row in shared memory
FILL = """
.shared .align 16 .b8 sm[512];
.reg .b32 %r<24>; .reg .b64 %rd<4>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
mul.lo.u32 %r2, %r1, 5;
and.b32 %r2, %r2, 31;
shl.b32 %r2, %r2, 4;
mov.u32 %r3, sm;
add.u32 %r3, %r3, %r2;
shl.b32 %r4, %r1, 4;
cvt.u64.u32 %rd1, %r4;
cp.async.cg.shared.global [%r3], [%rd1], 16;
cp.async.wait_all;
bar.sync 0;
"""


def _shared_u16():
    """The u16 elements of `sm` after FILL: row (5 l) % 32 holds lane l's 16 bytes."""
    g = np.frombuffer(GLOBAL, np.uint16).reshape(32, 8)
    s = np.zeros((32, 8), np.uint16)
    for lane in range(32):
        s[(5 * lane) % 32] = g[lane]
    return s


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_m8n8_b16_is_the_manuals_fragment(num, trans):
    regs = ", ".join(f"%r{10 + i}" for i in range(num))
    src = FILL + (f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16 "
                  f"{{{regs}}}, [%r3];\n")
    r = ptxfp.run(src, memory=GLOBAL, block=32)
    s = _shared_u16()

    def elem(i, row, col):           # matrix i's element: row `row` was addressed by lane 8i+row
        return int(s[(5 * (8 * i + row)) % 32, col])
    for i in range(num):
        for lane in range(32):
            row, col = lane // 4, 2 * (lane % 4)
            if trans:
                lo, hi = elem(i, col, row), elem(i, col + 1, row)
            else:
                lo, hi = elem(i, row, col), elem(i, row, col + 1)
            assert int(r[f"%r{10 + i}"][lane]) == lo | hi << 16, (i, lane)


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_what_ldmatrix_reads(trans):
    """stmatrix of register words w(i, l) = 7000 * i + l puts, by the manual's layout, the
    halves of lane l's word i at row l // 4, columns 2(l % 4), +1 of matrix i (transposed with
    .trans), rows at the addresses lanes 8i + r give."""
    t = ".trans" if trans else ""
    src = FILL + "".join(f"add.u32 %r{10 + i}, %r1, {7000 * i};\n" for i in range(4)) + (
        f"stmatrix.sync.aligned.m8n8.x4{t}.shared.b16 [%r3], {{%r10, %r11, %r12, %r13}};\n"
        "bar.sync 0;\n"
        "ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r3];\n")
    r = ptxfp.run(src, memory=GLOBAL, block=32)
    want = {}                                   # (matrix, row, col) -> u16
    for i in range(4):
        for lane in range(32):
            w = 7000 * i + lane
            row, col = lane // 4, 2 * (lane % 4)
            for j, v in enumerate((w & 0xFFFF, w >> 16)):
                want[(i, col + j, row) if trans else (i, row, col + j)] = v
    for lane in range(32):                      # lane 8i + r addressed row r of matrix i
        i, row = lane // 8, lane % 8
        words = [int(r[f"%r{14 + k}"][lane]) for k in range(4)]
        got = [(w >> (16 * h)) & 0xFFFF for w in words for h in (0, 1)]
        assert got == [want[(i, row, c)] for c in range(8)], lane


def test_movmatrix_transposes_the_warps_fragment():
    src = ("mov.u32 %r1, %laneid;\nmad.lo.u32 %r2, %r1, 65537, 65536;\n"   # lo = l, hi = l + 1
           "movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;\n")
    r = ptxfp.run(src, block=64)
    m = {}
    for lane in range(32):                      # the source: row l // 4, columns 2(l % 4), +1
        m[(lane // 4, 2 * (lane % 4))] = lane
        m[(lane // 4, 2 * (lane % 4) + 1)] = lane + 1
    for t in range(64):
        lane = t % 32
        row, col = lane // 4, 2 * (lane % 4)     # of the transpose: m[col][row], m[col+1][row]
        assert int(r["%r3"][t]) == m[(col, row)] | m[(col + 1, row)] << 16, t


CP = """
.shared .align 16 .b8 sm[512];
.reg .b32 %r<16>; .reg .b64 %rd<4>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 4;
mov.u32 %r3, sm;
add.u32 %r3, %r3, %r2;
cvt.u64.u32 %rd1, %r2;
st.shared.v4.u32 [%r3], {%r1, %r1, %r1, %r1};
"""


def _words(r, first):
    return np.stack([r[f"%r{first + k}"] for k in range(4)], axis=1).astype(np.uint32)


def test_cp_async_src_size_zero_fills_and_lands_only_when_waited_for():
    src = CP + """
and.b32 %r4, %r1, 15;
cp.async.ca.shared.global.L2::128B [%r3], [%rd1], 16, %r4;
cp.async.commit_group;
ld.shared.v4.u32 {%r12, %r13, %r14, %r15}, [%r3];
cp.async.wait_group 0;
ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [%r3];
"""
    r = ptxfp.run(src, memory=GLOBAL, block=32)
    g = np.frombuffer(GLOBAL, np.uint8).reshape(32, 16)
    before, after = _words(r, 12), _words(r, 8)
    assert (before == np.arange(32, dtype=np.uint32)[:, None]).all()   # not landed yet
    for t in range(32):
        size = t & 15                            # src-size: the rest of the 16 bytes is zero
        want = np.concatenate([g[t, :size], np.zeros(16 - size, np.uint8)])
        assert after[t].tobytes() == want.tobytes(), t


def test_cp_async_ignore_src_and_groups():
    """ignore-src true writes zeros; wait_group 1 lands all but the newest group."""
    src = CP + """
setp.ge.u32 %p1, %r1, 16;
cp.async.ca.shared.global [%r3], [%rd1], 8, %p1;
cp.async.commit_group;
cp.async.ca.shared.global [%r3+8], [%rd1+8], 8;
cp.async.commit_group;
cp.async.wait_group 1;
ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3];
cp.async.wait_group 0;
ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [%r3];
"""
    r = ptxfp.run(src, memory=GLOBAL, block=32)
    g = np.frombuffer(GLOBAL, np.uint32).reshape(32, 4)
    first, second = _words(r, 4), _words(r, 8)
    tid = np.arange(32, dtype=np.uint32)
    low = np.where(tid[:, None] < 16, g[:, :2], 0)
    assert (first[:, :2] == low).all() and (first[:, 2:] == tid[:, None]).all()
    assert (second[:, :2] == low).all() and (second[:, 2:] == g[:, 2:]).all()


def test_cp_async_wait_with_nothing_pending_returns():
    # PTX: wait "till only N or fewer of the most recent cp.async-groups are pending"
    r = ptxfp.run("cp.async.wait_group 0;\ncp.async.wait_all;\nmov.u32 %r1, 7;", block=4)
    assert (r["%r1"] == 7).all()


@pytest.mark.parametrize("text, words", [
    ("cp.async.ca.shared.global [%r3+4], [%rd1], 8;", "is not 8-byte aligned"),
    ("cp.async.ca.shared.global [%r3], [%rd1+4], 8;", "is not 8-byte aligned"),
    ("cp.async.cg.shared.global [%r3], [%rd1], 8;", "cp.async.cg copies 16 bytes"),
    ("cp.async.ca.shared.global [%r3], [%rd1], 12;", "cp-size must be 4, 8 or 16"),
    ("cp.async.ca.shared.global [%r3+512], [%rd1], 4;", "outside the 512-byte .shared"),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r4, %r5, %r6, %r7}, [%r3+16];",
     "outside the 512-byte .shared"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r4}, [%r3+8];", "is not 16-byte aligned"),
    ("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r4}, [%r3];", "needs 2 .b32 registers"),
])
def test_bad_data_path_input_is_one_line(text, words):
    with pytest.raises(InterpError) as e:
        ptxfp.run(CP + text, memory=GLOBAL, block=32)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_ldmatrix_needs_the_whole_warp():
    src = CP + "setp.lt.u32 %p1, %r1, 16;\n@%p1 ldmatrix.sync.aligned.m8n8.x1.shared.b16 " \
               "{%r4}, [%r3];\n"
    with pytest.raises(InterpError, match="16 of its threads; it needs all 32"):
        ptxfp.run(src, memory=GLOBAL, block=32)


# --- Triton's tl.dot modules (tools/triton_mm_sm80.py) -----------------------------------------

#: input type -> (the compiled modules' metadata, the mma.sync they issue, the arrays' dtype)
MMA = {"f16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
       "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
       "tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"}
DTYPE = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32}
MM = {t: json.loads((KERNELS / f"triton_mm_{t}_sm80.json").read_text()) for t in MMA}
#: |C - exact| <= this * (|A| @ |B|): K / 4 = 24 accumulation steps of the A100 model (four
#: products a step, 24-bit truncated alignment: under 2^-23 each); f16 keeps its measured 2^-20
BOUND = {"f16": 2.0 ** -20, "bf16": 2.0 ** -18, "tf32": 2.0 ** -18}


def _run_mm(t, name, A, B):
    M, K = A.shape
    N = B.shape[1]
    a0 = 256
    b0 = a0 + A.nbytes
    c0 = b0 + B.nbytes
    mem = np.zeros(c0 + M * N * 4, np.uint8)
    mem[a0:b0] = np.frombuffer(A.tobytes(), np.uint8)
    mem[b0:c0] = np.frombuffer(B.tobytes(), np.uint8)
    meta = MM[t][name]
    args = {f"mm_param_{i}": v for i, v in enumerate((a0, b0, c0, M, N, K, 0, 0))}
    r = ptxfp.run((KERNELS / name).read_text(), args, memory=mem,
                  grid=(M // meta["BM"], N // meta["BN"]), block=32 * meta["num_warps"],
                  shared_bytes=meta["shared_bytes"])
    return np.frombuffer(r[MEMORY_KEY][c0:].tobytes(), np.float32).reshape(M, N)


def _tf32(x):
    """The f32 values an sm_80 tensor core reads as tf32: the low 13 fraction bits dropped."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("t, name", [(t, n) for t in MMA for n in sorted(MM[t])])
def test_triton_sm80_matmul_is_ptxfp_matmul(t, name):
    """Triton 3.8's tl.dot for sm_80 with f16, bf16 and tf32 (f32 arrays) inputs (ld.global/
    st.shared or cp.async pipelines, ldmatrix, mma.sync m16n8k16 / m16n8k8) bit-equals
    ptxfp.matmul with that instruction (K chained in increasing k), and float64 within the
    accumulations' rounding."""
    rng = np.random.default_rng(7)
    M, N, K = 64, 64, 96
    dt = DTYPE[t]
    A = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-6, 7, (M, K)))).astype(dt)
    B = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-6, 7, (K, N)))).astype(dt)
    C = _run_mm(t, name, A, B)
    D = np.asarray(ptxfp.matmul(A, B, instruction=MMA[t], target="sm_80"), np.float32)
    assert np.array_equal(C.view(np.uint32), D.view(np.uint32))
    a64, b64 = (_tf32(A), _tf32(B)) if t == "tf32" else (A, B)
    a64, b64 = np.asarray(a64, np.float64), np.asarray(b64, np.float64)
    exact = a64 @ b64
    bound = np.abs(a64) @ np.abs(b64) * BOUND[t]
    assert (np.abs(C - exact) <= bound).all()
    # the test tells K orders apart: the same product summed in another order differs
    rev = np.asarray(ptxfp.matmul(A[:, ::-1].copy(), B[::-1].copy(), instruction=MMA[t],
                                  target="sm_80"), np.float32)
    assert not np.array_equal(rev.view(np.uint32), C.view(np.uint32))


# --- launch rules -----------------------------------------------------------------------------

def test_reqntid_is_checked_at_launch():
    """Triton's module declares .reqntid 128: the driver refuses any other block."""
    text = (KERNELS / "triton_mm_f16_sm80_s3k32.ptx").read_text()
    assert ".reqntid 128" in text
    with pytest.raises(ptxfp.errors.OperandError) as e:
        ptxfp.run(text, {f"mm_param_{i}": 0 for i in range(8)}, memory=bytes(64), grid=1,
                  block=64, shared_bytes=8192)
    msg = str(e.value)
    assert ".reqntid 128" in msg and "block=(128, 1, 1)" in msg and "\n" not in msg


MAXNTID = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k() .maxntid 64, 1, 1
{
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    ret;
}
"""


def test_maxntid_is_checked_at_launch():
    assert (ptxfp.run(MAXNTID, block=64)["%r1"] == np.arange(64)).all()
    with pytest.raises(ptxfp.errors.OperandError, match=r"over 'k''s \.maxntid 64, 1, 1"):
        ptxfp.run(MAXNTID, block=(32, 4))


# --- glue of real modules ----------------------------------------------------------------------

@pytest.mark.parametrize("op, t, fold", [
    ("add", "u32", lambda xs: sum(xs) & 0xFFFFFFFF),
    ("min", "s32", min), ("max", "s32", max), ("min", "u32", min), ("max", "u32", max),
    ("and", "b32", lambda xs: np.bitwise_and.reduce(np.array(xs, np.int64)) & 0xFFFFFFFF),
    ("or", "b32", lambda xs: np.bitwise_or.reduce(np.array(xs, np.int64)) & 0xFFFFFFFF),
    ("xor", "b32", lambda xs: np.bitwise_xor.reduce(np.array(xs, np.int64)) & 0xFFFFFFFF),
])
def test_redux_sync_reduces_over_the_warp(op, t, fold):
    rng = np.random.default_rng(3)
    a = rng.integers(-2**31, 2**31, 64)
    r = ptxfp.run(f"redux.sync.{op}.{t} %r1, %r2, 0xffffffff;",
                  {"%r2": a & 0xFFFFFFFF}, block=64)
    vals = a if t == "s32" else a & 0xFFFFFFFF
    for w in range(2):
        want = int(fold([int(x) for x in vals[32 * w:32 * w + 32]])) & 0xFFFFFFFF
        assert (r["%r1"][32 * w:32 * w + 32] == want).all(), w


def test_activemask_names_the_lanes_executing_it():
    src = """
    mov.u32 %r1, %laneid;
    setp.lt.u32 %p1, %r1, 5;
    @%p1 bra L;
    activemask.b32 %r2;
    bra.uni E;
L:  activemask.b32 %r2;
E:  ret;
"""
    r = ptxfp.run(src, block=32)
    assert (r["%r2"][:5] == 0x1F).all() and (r["%r2"][5:] == 0xFFFFFFE0).all()


def test_hints_run_and_change_nothing():
    src = """
    .reg .b64 %rd<4>; .reg .b32 %r<4>;
    mov.u64 %rd1, 128;
    createpolicy.fractional.L2::evict_last.b64 %rd2, 1.0;
    prefetch.global.L2 [%rd1];
    discard.global.L2 [%rd1], 128;
    nanosleep.u32 100;
    ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %r1, [%rd1], %rd2;
    ld.global.L1::evict_last.u32 %r2, [%rd1+4];
"""
    mem = np.arange(64, dtype=np.uint32).tobytes()
    r = ptxfp.run(src, memory=mem, block=2)
    assert (r["%r1"] == 32).all() and (r["%r2"] == 33).all()
