"""Every ldmatrix / stmatrix shape of the PTX ISA manual in ptxfp.run: the 8-bit forms of
sm_100a and its family (.m16n16 .b8 and the .b8x16.b6x16_p32 / .b8x16.b4x16_p64 decompressing
loads, .m8n16, stmatrix .m16n8), and which spellings, targets and versions are legal.

The expected registers and bytes are written out here plainly from the manual's text and
fragment figures (PTX ISA 9.0, 9.7.14.5.15-16), not from the interpreter's tables: lane ``R*i +
r`` gives the address of row ``r`` (16 bytes) of matrix ``i``; .m16n16 (.trans mandatory): a
lane holds 4 consecutive columns across 2 rows, ``l // 4`` and ``l // 4 + 8``, of the
transposed matrix; .m8n16: 4 consecutive columns of row ``l // 4``; stmatrix .m16n8 (.trans
mandatory): e0, e1 at row ``l // 4``, columns ``2(l % 4)``, +1 and e2, e3 eight rows down, of a
16x8 matrix stored column by column.  A .b6x16_p32 / .b4x16_p64 row is 16 packed 6-bit (4-bit)
unsigned elements from the row's lowest bit, then padding, each element landing in the low bits
of its byte (CUTLASS 4.2's cute/atom/mma_traits_sm120.hpp says so of the 4-bit one).  Which
spellings ptxas 13.5 accepts on which target is recorded by tools/matrix_probe.py in
tests/data/ptxas/13.5/matrix_moves.jsonl."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxfp
from ptxfp.errors import PtxfpError
from ptxfp.ptx.interp import InterpError

sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
from matrix_probe import module as probe_module  # noqa: E402

DATA = Path(__file__).parent / "data" / "ptxas" / "13.5"
PTXAS = "/work/tools/cuda135/nvidia/cu13/bin/ptxas"

#: 32 rows of 16 random bytes: lane p's row (it addresses it in shared memory)
G = np.random.default_rng(33).integers(0, 256, (32, 16), dtype=np.uint8)


def _module(body, target="sm_100a", version="8.6"):
    """Lane l copies G[l] to shared row (5 l) % 32 and keeps that row's address in %r3."""
    return f""".version {version}
.target {target}
.address_size 64

.visible .entry k()
{{
.shared .align 16 .b8 sm[512];
.reg .b32 %r<32>; .reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
mul.lo.u32 %r2, %r1, 5;
and.b32 %r2, %r2, 31;
shl.b32 %r2, %r2, 4;
mov.u32 %r3, sm;
add.u32 %r3, %r3, %r2;
shl.b32 %r4, %r1, 4;
cvt.u64.u32 %rd1, %r4;
ld.global.v4.u32 {{%r20, %r21, %r22, %r23}}, [%rd1];
st.shared.v4.u32 [%r3], {{%r20, %r21, %r23, %r22}};
bar.sync 0;
{body}
ret;
}}
"""


def _row(p):
    """The 16 bytes lane p's address points at (st.shared above swapped words 2 and 3)."""
    w = G[p].view("<u4")
    return np.array([w[0], w[1], w[3], w[2]], "<u4").view(np.uint8)


def _elements(row, src):
    """The 16 elements of a 16-byte row: its bytes, or its packed 6/4-bit fields."""
    if src is None:
        return [int(b) for b in row]
    bits = {"b6x16_p32": 6, "b4x16_p64": 4}[src]
    v = int.from_bytes(bytes(row), "little")
    return [(v >> (bits * c)) & ((1 << bits) - 1) for c in range(16)]


def _run(body, nregs=0, **kw):
    r = ptxfp.run(_module(body, **kw), memory=G.tobytes(), block=32)
    return [[int(x) for x in r[f"%r{10 + i}"]] for i in range(nregs)]


def _regs(n):
    return "{" + ", ".join(f"%r{10 + i}" for i in range(n)) + "}"


@pytest.mark.parametrize("src", [None, "b6x16_p32", "b4x16_p64"])
@pytest.mark.parametrize("num", [1, 2])
def test_ldmatrix_m16n16_is_the_manuals_fragment(num, src):
    ty = ".b8" if src is None else f".b8x16.{src}"
    got = _run(f"ldmatrix.sync.aligned.m16n16.x{num}.trans.shared{ty} {_regs(2 * num)}, [%r3];",
               2 * num)
    for i in range(num):
        M = [_elements(_row(16 * i + r), src) for r in range(16)]     # M[row][col]
        for h in range(2):
            for lane in range(32):
                row, col = lane // 4 + 8 * h, 4 * (lane % 4)     # of the transpose of M
                want = sum(M[col + j][row] << (8 * j) for j in range(4))
                assert got[2 * i + h][lane] == want, (i, h, lane)


@pytest.mark.parametrize("src", ["b6x16_p32", "b4x16_p64"])
@pytest.mark.parametrize("num", [1, 2, 4])
def test_ldmatrix_m8n16_is_the_manuals_fragment(num, src):
    got = _run(f"ldmatrix.sync.aligned.m8n16.x{num}.shared::cta.b8x16.{src} {_regs(num)}, "
               "[%r3];", num)
    for i in range(num):
        M = [_elements(_row(8 * i + r), src) for r in range(8)]
        for lane in range(32):
            row, col = lane // 4, 4 * (lane % 4)
            assert got[i][lane] == sum(M[row][col + j] << (8 * j) for j in range(4)), (i, lane)


def test_decompression_drops_the_padding_and_zero_fills_the_byte():
    """Every element of a 6-bit / 4-bit load fits its field; the padding bits never show."""
    for src, bits in (("b6x16_p32", 6), ("b4x16_p64", 4)):
        got = _run(f"ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.{src} {_regs(4)}, [%r3];", 4)
        for words in got:
            for w in words:
                assert all((w >> (8 * j)) & 0xFF < (1 << bits) for j in range(4))


def _word(i, lane):
    return (lane * 2654435761 + 40503 * i + 12345) % (1 << 32)


@pytest.mark.parametrize("num", [1, 2, 4])
def test_stmatrix_m16n8_is_the_manuals_fragment(num):
    body = "".join(f"mad.lo.u32 %r{10 + i}, %r1, -1640531535, {40503 * i + 12345};\n"
                   for i in range(num))
    body += (f"stmatrix.sync.aligned.m16n8.x{num}.trans.shared.b8 [%r3], {_regs(num)};\n"
             "bar.sync 0;\nld.shared.v4.u32 {%r24, %r25, %r26, %r27}, [%r3];")
    r = ptxfp.run(_module(body), memory=G.tobytes(), block=32)
    R = {}                                  # (matrix, row, col) of the 16x8 register matrix
    for i in range(num):
        for lane in range(32):
            for k in range(4):
                R[(i, lane // 4 + 8 * (k // 2), 2 * (lane % 4) + k % 2)] = \
                    (_word(i, lane) >> (8 * k)) & 0xFF
    for p in range(32):                     # the row lane p addresses
        got = np.array([int(r[f"%r{24 + k}"][p]) for k in range(4)], "<u4").view(np.uint8)
        if p < 8 * num:                     # column p % 8 of matrix p // 8
            want = [R[(p // 8, row, p % 8)] for row in range(16)]
        else:                               # not an address of this .num: untouched
            want = list(_row(p))
        assert list(got) == want, p


@pytest.mark.parametrize("target", ["sm_103a", "sm_110f", "sm_120a", "sm_121f"])
def test_the_8bit_forms_run_on_the_blackwell_family(target):
    got = _run(f"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {_regs(2)}, [%r3];", 2,
               target=target, version="9.0")
    assert got[0][0] == sum(int(_row(j)[0]) << (8 * j) for j in range(4))


@pytest.mark.parametrize("body, target, words", [
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r10, %r11}, [%r3];", "sm_90a",
     "needs an sm_100a/f"),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r10, %r11}, [%r3];", "sm_100",
     "module's .target is sm_100"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r3], {%r10};", "sm_80", "sm_90 or higher"),
    ("ldmatrix.sync.aligned.m16n16.x1.shared.b8 {%r10, %r11}, [%r3];", "sm_100a",
     "needs .trans"),
    ("ldmatrix.sync.aligned.m8n16.x1.shared.b8 {%r10}, [%r3];", "sm_100a",
     "takes .b8x16.b6x16_p32 or .b8x16.b4x16_p64"),
    ("ldmatrix.sync.aligned.m16n16.x4.trans.shared.b8 {%r10, %r11, %r12, %r13}, [%r3];",
     "sm_100a", "not .x4"),
    ("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%r10, %r11}, [%r3];", "sm_100a",
     "needs 4 .b32 registers"),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r10, %r11}, [%r3+8];", "sm_100a",
     "is not 16-byte aligned"),
    ("ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b4x16_p64 {%r10, %r11, %r12, %r13}, "
     "[%r3+16];", "sm_100a", "outside the 512-byte .shared"),
    ("stmatrix.sync.aligned.m16n8.x4.trans.shared.b8 [%r3+496], {%r10, %r11, %r12, %r13};",
     "sm_100a", "outside the 512-byte .shared"),
])
def test_bad_matrix_moves_are_one_line(body, target, words):
    with pytest.raises(InterpError) as e:
        ptxfp.run(_module(body, target=target, version="9.0"), memory=G.tobytes(), block=32)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_8bit_forms_need_ptx_isa_8_6():
    body = "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r10, %r11}, [%r3];"
    with pytest.raises(InterpError, match=r"requires PTX ISA \.version 8\.6 or later"):
        ptxfp.run(_module(body, target="sm_100a", version="8.5"), memory=G.tobytes(), block=32)


def _records():
    lines = (DATA / "matrix_moves.jsonl").read_text().splitlines()
    return json.loads(lines[0]), [json.loads(ln) for ln in lines[1:]]


def _verdict(rec):
    """(accepted, message) of ptxfp.run on the record's module."""
    try:
        ptxfp.run(probe_module(rec["spelling"], rec["regs"], rec["target"], rec["version"]),
                  block=32)
    except PtxfpError as e:
        assert "\n" not in str(e)
        return False, str(e)
    return True, ""


def test_ptxfp_accepts_the_spellings_and_targets_ptxas_accepts():
    """Every shape x .num x .trans x type (legal or not), on every target ptxas 13.5 knows
    from sm_75 to sm_121f, and the .version floors: ptxfp.run takes a module exactly when
    ptxas does."""
    header, recs = _records()
    assert "V13.5" in header["ptxas_version"] and len(recs) > 2000
    wrong = [(r["spelling"], r["target"], r["version"], r["accepted"], msg)
             for r in recs for ok, msg in [_verdict(r)] if ok != r["accepted"]]
    assert not wrong, wrong[:5]
    accepted = {(r["spelling"].split(".")[3], r["target"]) for r in recs if r["accepted"]}
    assert ("m16n16", "sm_121f") in accepted and ("m16n16", "sm_100") not in accepted


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(PTXAS), reason="ptxas 13.5 is not installed here")
def test_the_recorded_verdicts_are_ptxas_13_5s():
    _, recs = _records()
    sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
    from matrix_probe import probe
    for r in recs[::37]:
        again = probe(PTXAS, r["spelling"], r["regs"], r["target"], r["version"])
        assert again["accepted"] == r["accepted"], r
