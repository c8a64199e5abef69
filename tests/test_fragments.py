"""mma.sync fragment layouts (ptxfp.tensor.fragments) against the PTX ISA manual's formulas
(9.7.14.5.x "Matrix fragments for mma.mXnYkZ"), written out here shape by shape as the manual
states them, with the element index i of a0, a1, ... counted across the registers low to high;
and every fragment of every mma.sync row is a bijection onto its matrix."""

import numpy as np
import pytest

from ptxfp import isa
from ptxfp.isa.spelling import mma_form
from ptxfp.tensor.fragments import FragmentError, fragment, gather, scatter

LANES = range(32)


def gid(lane):
    return lane >> 2


def tig(lane):
    return lane % 4


def c_m16(lane, i):
    return (gid(lane) if i < 2 else gid(lane) + 8), tig(lane) * 2 + (i & 0x1)


def c_m8(lane, i):
    return gid(lane), tig(lane) * 2 + i


# (spelling, {operand: (number of elements, position(lane, i) -> (row, col))})
MANUAL = {
    "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32": {
        "a": (4, lambda l, i: (gid(l) if i < 2 else gid(l) + 8, tig(l) * 2 + (i & 0x1))),
        "b": (2, lambda l, i: (tig(l) * 2 + i, gid(l))),
        "c": (4, c_m16)},
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16": {
        "a": (8, lambda l, i: (gid(l) if i in (0, 1, 4, 5) else gid(l) + 8,
                               tig(l) * 2 + (i & 0x1) + (8 if i >= 4 else 0))),
        "b": (4, lambda l, i: (tig(l) * 2 + (i & 0x1) + (8 if i >= 2 else 0), gid(l))),
        "c": (4, c_m16), "d": (4, c_m16)},
    "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32": {
        "a": (2, lambda l, i: (gid(l) if i == 0 else gid(l) + 8, tig(l))),
        "b": (1, lambda l, i: (tig(l), gid(l))),
        "c": (4, c_m16)},
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32": {
        "a": (4, lambda l, i: (gid(l) if i in (0, 2) else gid(l) + 8,
                               tig(l) if i in (0, 1) else tig(l) + 4)),
        "b": (2, lambda l, i: (tig(l) if i == 0 else tig(l) + 4, gid(l)))},
    "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32": {
        "a": (8, lambda l, i: (gid(l) if i < 4 else gid(l) + 8, tig(l) * 4 + (i & 0x3))),
        "b": (4, lambda l, i: (tig(l) * 4 + i, gid(l)))},
    "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32": {
        "a": (8, lambda l, i: (gid(l) if i < 4 else gid(l) + 8, tig(l) * 4 + (i & 0x3))),
        "b": (4, lambda l, i: (tig(l) * 4 + i, gid(l))), "c": (4, c_m16)},
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32": {
        "a": (16, lambda l, i: (gid(l) if (0 <= i < 4 or 8 <= i < 12) else gid(l) + 8,
                                tig(l) * 4 + (i & 0x3) + (16 if i >= 8 else 0))),
        "b": (8, lambda l, i: (tig(l) * 4 + (i & 0x3) + (16 if i >= 4 else 0), gid(l)))},
    "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32": {
        "a": (16, lambda l, i: (gid(l) if (0 <= i < 4 or 8 <= i < 12) else gid(l) + 8,
                                tig(l) * 4 + (i & 0x3) + (16 if i >= 8 else 0))),
        "b": (8, lambda l, i: (tig(l) * 4 + (i & 0x3) + (16 if i >= 4 else 0), gid(l)))},
    "mma.sync.aligned.m8n8k16.row.col.s32.u8.u8.s32": {
        "a": (4, lambda l, i: (gid(l), tig(l) * 4 + i)),
        "b": (4, lambda l, i: (tig(l) * 4 + i, gid(l))), "c": (2, c_m8)},
    "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32": {
        "a": (8, lambda l, i: (gid(l), tig(l) * 8 + i)),
        "b": (8, lambda l, i: (tig(l) * 8 + i, gid(l))), "c": (2, c_m8)},
    "mma.sync.aligned.m16n8k32.row.col.s32.u4.s4.s32": {
        "a": (16, lambda l, i: (gid(l) if i < 8 else gid(l) + 8, tig(l) * 8 + (i & 0x7))),
        "b": (8, lambda l, i: (tig(l) * 8 + (i & 0x7), gid(l)))},
    "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32": {
        "a": (32, lambda l, i: (gid(l) if (0 <= i < 8 or 16 <= i < 24) else gid(l) + 8,
                                tig(l) * 8 + (i & 0x7) + (32 if i >= 16 else 0))),
        "b": (16, lambda l, i: (tig(l) * 8 + (i & 0x7) + (32 if i >= 8 else 0), gid(l)))},
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3": {
        "a": (32, lambda l, i: (gid(l) if (0 <= i < 8 or 16 <= i < 24) else gid(l) + 8,
                                tig(l) * 8 + (i & 0x7) + (32 if i >= 16 else 0))),
        "b": (16, lambda l, i: (tig(l) * 8 + (i & 0x7) + (32 if i >= 8 else 0), gid(l)))},
    "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc": {
        "a": (32, lambda l, i: (gid(l), tig(l) * 32 + i)),
        "b": (32, lambda l, i: (tig(l) * 32 + i, gid(l))), "c": (2, c_m8)},
    "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc": {
        "a": (64, lambda l, i: (gid(l) if i < 32 else gid(l) + 8, tig(l) * 32 + (i & 0x1F))),
        "b": (32, lambda l, i: (tig(l) * 32 + i, gid(l)))},
    "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc": {
        "a": (128, lambda l, i: (gid(l) if (0 <= i < 32 or 64 <= i < 96) else gid(l) + 8,
                                 tig(l) * 32 + (i & 0x1F) + (128 if i >= 64 else 0))),
        "b": (64, lambda l, i: (tig(l) * 32 + (i & 0x1F) + (128 if i >= 32 else 0), gid(l)))},
    "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64": {
        "a": (1, lambda l, i: (gid(l), tig(l))), "b": (1, lambda l, i: (tig(l), gid(l))),
        "c": (2, c_m8)},
    "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64": {
        "a": (2, lambda l, i: (gid(l) if i == 0 else gid(l) + 8, tig(l))),
        "b": (1, lambda l, i: (tig(l), gid(l))), "c": (4, c_m16)},
    "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64": {
        "a": (4, lambda l, i: (gid(l) if i in (0, 2) else gid(l) + 8,
                               tig(l) if i < 2 else tig(l) + 4)),
        "b": (2, lambda l, i: (tig(l) if i == 0 else tig(l) + 4, gid(l)))},
    "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64": {
        "a": (8, lambda l, i: (gid(l) if i % 2 == 0 else gid(l) + 8, tig(l) + 4 * (i // 2))),
        "b": (4, lambda l, i: (tig(l) + 4 * i, gid(l)))},
}


def _m8n8k4(a_layout, b_layout, ctype):
    hi = lambda l: l >= 16                                    # noqa: E731
    a = (lambda l, i: (l % 4 + 4 * hi(l), i)) if a_layout == "row" else \
        (lambda l, i: (i % 4 + 4 * hi(l), l % 4))
    b = (lambda l, i: (l % 4, i + 4 * hi(l))) if b_layout == "row" else \
        (lambda l, i: (i, l % 4 + 4 * hi(l)))
    if ctype == "f16":
        c = lambda l, i: (l % 4 + 4 * hi(l), i)              # noqa: E731
    else:
        def c(l, i):
            x = (l & 0b1) + (i & 0b10)
            return x + 4 * hi(l), (i & 0b100) + (l & 0b10) + (i & 0b1)
    return {"a": (4, a), "b": (4, b), "c": (8, c)}


for _al in ("row", "col"):
    for _bl in ("row", "col"):
        for _c in ("f16", "f32"):
            _d = "f32" if _c == "f32" else "f16"
            MANUAL[f"mma.sync.aligned.m8n8k4.{_al}.{_bl}.{_d}.f16.f16.{_c}"] = _m8n8k4(_al, _bl, _c)


@pytest.mark.parametrize("spelling", sorted(MANUAL))
def test_fragments_follow_the_manual(spelling):
    eight = ".m8n8k4." in spelling and ".f16." in spelling
    for operand, (count, pos) in MANUAL[spelling].items():
        fr = fragment(spelling, operand)
        assert fr.regs * fr.per_reg == count, (operand, fr.regs, fr.per_reg)
        for lane in LANES:
            for i in range(count):
                want = ((lane >> 2) & 3 if eight else 0,) + tuple(pos(lane, i))
                got = tuple(int(x) for x in fr.index[lane, i // fr.per_reg, i % fr.per_reg])
                assert got == want, (spelling, operand, lane, i, got, want)


def _mma_sync_spellings():
    return [s for s in isa.canonical_spellings("mma") if s.startswith("mma.")]


def test_every_fragment_is_a_bijection_and_gather_inverts_scatter():
    rng = np.random.default_rng(24)
    seen = set()
    for s in _mma_sync_spellings():
        f = mma_form(s)
        key = (f.m, f.n, f.k, f.atype, f.btype, f.ctype, f.dtype, f.alayout, f.blayout, f.kind)
        if key in seen:
            continue
        seen.add(key)
        for o in "abcd":
            fr = fragment(f, o)
            tiles, rows, cols = fr.shape
            flat = fr.index.reshape(-1, 3)
            assert len(flat) == tiles * rows * cols, (s, o)
            assert len({tuple(x) for x in flat}) == len(flat), (s, o)
            assert fr.regs * fr.reg_bits * 32 == tiles * rows * cols * fr.elem_bits, (s, o)
            shape = fr.shape if tiles > 1 else fr.shape[1:]
            m = rng.integers(0, 1 << min(fr.elem_bits, 62), size=(2,) + shape, dtype=np.uint64)
            regs = scatter(f, o, m)
            assert regs.shape == (2, 32, fr.regs)
            assert (gather(f, o, regs) == m).all()
    assert len(seen) > 100


def test_register_packing_low_to_high():
    s = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    a = np.arange(16 * 16, dtype=np.uint16).reshape(16, 16)
    regs = scatter(s, "a", a)
    # lane 0: a0 = A[0,0] low half, a1 = A[0,1] high half of register 0
    assert regs[0, 0] == (1 << 16) | 0
    # lane 6 (groupID 1, threadID_in_group 2), register 3: a6, a7 = A[9, 12], A[9, 13]
    assert regs[6, 3] == (int(a[9, 13]) << 16) | int(a[9, 12])


def test_bad_input_is_one_error():
    with pytest.raises(FragmentError):
        fragment("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", "a")
    with pytest.raises(FragmentError):
        fragment("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "e")
    with pytest.raises(FragmentError):
        gather("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "a", np.zeros((32, 3), np.uint32))
