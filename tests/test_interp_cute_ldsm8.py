"""The 8-bit matrix moves of sm_100a in a real module: tests/data/kernels/cute_ldsm8_sm100a.cu,
our own one-warp kernel calling CUTLASS 4.2 CuTe's copy atoms (SM100_U8x8_LDSM_T,
SM100_U8x16_LDSM_T, SM100_SU{4,6}_DU8x16_x{1,2,4}_LDSM_N, SM100_U8x{4,8,16}_STSM_T) and asm
ldmatrix.m16n16 .b8x16.b6x16_p32 / .b4x16_p64, compiled by nvcc 13.0 (-arch=sm_100a -O3) with
tools/cute_ldsm8_sm100a.py, run in ptxfp.run on random bytes.

Every word the kernel writes is compared with a reference written plainly from the PTX ISA
manual's fragment layouts (9.7.14.5.15-16; the element unpacking is test_interp_matrix's
``_elements``) and, for the two .m16n16 .b8 atoms, the byte shuffle CuTe's source applies after
the ldmatrix, which nvcc compiles to shifts and masks."""

from pathlib import Path

import numpy as np
import pytest

import ptxfp
from test_interp_matrix import _elements

PTX = (Path(__file__).parent / "data" / "kernels" / "cute_ldsm8_sm100a.ptx").read_text()
ENTRY = "_Z10cute_ldsm8PK5uint4Pj"
SLOTS = 48


def _ldm_m16n16(rows, num, src):
    """ldmatrix.m16n16.x{num}.trans: regs[2 i + h][lane], lane l addressing input row l."""
    regs = []
    for i in range(num):
        M = [_elements(rows[16 * i + r], src) for r in range(16)]
        for h in range(2):
            regs.append([sum(M[4 * (lane % 4) + j][lane // 4 + 8 * h] << (8 * j)
                             for j in range(4)) for lane in range(32)])
    return regs


def _ldm_m8n16(rows, num, src):
    """ldmatrix.m8n16.x{num}: regs[i][lane] = 4 consecutive elements of row lane // 4."""
    regs = []
    for i in range(num):
        M = [_elements(rows[8 * i + r], src) for r in range(8)]
        regs.append([sum(M[lane // 4][4 * (lane % 4) + j] << (8 * j) for j in range(4))
                     for lane in range(32)])
    return regs


def _cute_shuffle(t0, t1):
    """SM100_U8x{8,16}_LDSM_T: dst0 = {t0.x, t0.y, t1.x, t1.y}, dst1 = {t0.z, t0.w, t1.z, t1.w}."""
    return ([(a & 0xFFFF) | ((b & 0xFFFF) << 16) for a, b in zip(t0, t1)],
            [(a >> 16) | (b & 0xFFFF0000) for a, b in zip(t0, t1)])


def _stm_m16n8(regs, addr_row, tile):
    """stmatrix.m16n8.x{len(regs)}.trans.b8 into tile (32 x 16 bytes): lane p < 8 num gives
    the row address of column p % 8 of matrix p // 8; byte k of lane l's register i is element
    (l // 4 + 8 (k // 2), 2 (l % 4) + k % 2) of matrix i."""
    num = len(regs)
    mat = np.zeros((num, 16, 8), np.uint8)
    for i in range(num):
        for lane in range(32):
            for k in range(4):
                mat[i, lane // 4 + 8 * (k // 2), 2 * (lane % 4) + k % 2] = \
                    (regs[i][lane] >> (8 * k)) & 0xFF
    for p in range(8 * num):
        tile[addr_row[p]] = mat[p // 8, :, p % 8]


def _words(tile):
    """The tile copied out: lane l's four words are tile row l."""
    w = tile.reshape(32, 16).view("<u4")
    return [[int(w[lane, k]) for lane in range(32)] for k in range(4)]


def _reference(data):
    rows = data.reshape(32, 16)
    out = []
    x1 = _ldm_m16n16(rows, 1, None)
    out += _cute_shuffle(*x1)
    x2 = _ldm_m16n16(rows, 2, None)
    x2s = [*_cute_shuffle(x2[0], x2[1]), *_cute_shuffle(x2[2], x2[3])]
    out += x2s
    for src in ("b6x16_p32", "b4x16_p64"):
        for num in (1, 2):
            out += _ldm_m16n16(rows, num, src)
    for src in ("b4x16_p64", "b6x16_p32"):
        for num in (1, 2, 4):
            out += _ldm_m8n16(rows, num, src)
    mine = rows.view("<u4")                      # lane l's registers: words 4 l .. 4 l + 3
    for num in (1, 2, 4):
        tile = np.zeros((32, 16), np.uint8)
        _stm_m16n8([[int(mine[lane, i]) for lane in range(32)] for i in range(num)],
                   list(range(32)), tile)
        out += _words(tile)
    tile = np.zeros((32, 16), np.uint8)
    _stm_m16n8(x2s[:2], list(range(32)), tile)
    _stm_m16n8(x2s[2:], [(lane + 16) % 32 for lane in range(32)], tile)
    out += _words(tile)
    assert len(out) == SLOTS
    return np.array(out, np.uint32), tile


def _run(data):
    mem = np.zeros(512 + SLOTS * 32 * 4, np.uint8)
    mem[:512] = data
    r = ptxfp.run(PTX, {f"{ENTRY}_param_0": 0, f"{ENTRY}_param_1": 512}, memory=mem,
                  entry=ENTRY, block=32)
    return np.frombuffer(r["__memory__"][512:].tobytes(), "<u4").reshape(SLOTS, 32)


def test_the_module_is_the_8bit_matrix_moves():
    for spelling in ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 ",
                     "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 ",
                     *(f"ldmatrix.sync.aligned.m16n16.x{n}.trans.shared.b8x16.{s} "
                       for n in (1, 2) for s in ("b6x16_p32", "b4x16_p64")),
                     *(f"ldmatrix.sync.aligned.m8n16.x{n}.shared.b8x16.{s} "
                       for n in (1, 2, 4) for s in ("b6x16_p32", "b4x16_p64")),
                     *(f"stmatrix.sync.aligned.m16n8.x{n}.trans.shared.b8 " for n in (1, 2, 4)),
                     ".target sm_100a"):
        assert spelling in PTX, spelling
    assert ptxfp.check(PTX).ok                  # ptxas 13.5 assembles it (the generator checks)


@pytest.mark.parametrize("seed", [5, 41])
def test_cute_ldsm8_module_is_the_manuals_layouts(seed):
    data = np.random.default_rng(seed).integers(0, 256, 512, dtype=np.uint8)
    got = _run(data)
    want, roundtrip = _reference(data)
    bad = [(s, lane) for s in range(SLOTS) for lane in range(32) if got[s, lane] != want[s, lane]]
    assert not bad, bad[:8]
    # the CuTe LDSM_T -> STSM_T round trip moves whole input rows: its tile is a row permutation
    assert sorted(map(bytes, roundtrip)) == sorted(map(bytes, data.reshape(32, 16)))
