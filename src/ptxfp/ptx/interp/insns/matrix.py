"""Warp-collective matrix moves that feed and drain mma.sync: ldmatrix (.m8n8 .x1/.x2/.x4
{.trans} .b16 from .shared), stmatrix (the same shapes into .shared) and movmatrix
(.m8n8.trans.b16, a transpose across the warp's registers).

The PTX ISA's layout of an 8x8 matrix of 16-bit elements: lane ``8*i + r`` gives the address of
row ``r`` of matrix ``i`` (16 bytes, 16-byte aligned); register ``i`` of lane ``l`` holds row
``l // 4``, columns ``2*(l % 4)`` (bits 0-15) and ``2*(l % 4) + 1`` (bits 16-31) of matrix ``i``
(with .trans: those of the transposed matrix).  Every lane of each warp must execute it
(.sync.aligned).
"""

from __future__ import annotations

import numpy as np

from ....errors import InterpError
from ...reader import Addr, Reg, Vec
from ..base import _bad, _nops, _unsupported
from ..operands import _dst, _src
from ..program import _Step
from ..state import _locate
from .mem import _address, _space_of

_NUM = {"x1": 1, "x2": 2, "x4": 4}
_ROW = np.arange(16)


def _warps(st, ins):
    """The threads that run a warp-collective instruction, as an int64 array (warps, 32) of
    their linear ids: every lane of each warp present must run it."""
    m = st.mask
    idx = np.nonzero(m)[0]
    warp = st.ids("warp")[idx]
    counts = np.bincount(warp)
    ws = np.unique(warp)
    if (counts[ws] != 32).any():
        w = int(ws[np.nonzero(counts[ws] != 32)[0][0]])
        raise InterpError(f"'{ins.opcode_spelling}': warp {w} runs it with {int(counts[w])} of "
                          "its threads; it needs all 32 (.sync.aligned)", ins.line, ins.col,
                          rule="membermask")
    return idx.reshape(-1, 32)


def _regs(ins, op, num, what):
    items = list(op.items) if isinstance(op, Vec) else [op]
    if len(items) != num or not all(isinstance(o, Reg) for o in items):
        raise _bad(ins, f"{what} needs {num} .b32 register{'s' * (num > 1)} for "
                        f".x{num}", op)
    return items


def _form(ins, store):
    """(matrices, transposed) of an ldmatrix / stmatrix spelling."""
    sfx = list(ins.suffixes)
    name = ins.opcode
    if sfx[:2] != ["sync", "aligned"]:
        raise _bad(ins, f"{name} needs .sync.aligned")
    rest = sfx[2:]
    nums = [x for x in rest if x in _NUM]
    space = _space_of(rest)
    shape = rest[0] if rest else ""
    known = {"m8n8", "trans", "b16", "shared", "shared::cta", *_NUM}
    if shape != "m8n8" or "b16" not in rest or set(rest) - known or len(nums) != 1:
        raise _unsupported(ins, f"{name} is modeled for .m8n8 .x1/.x2/.x4 {{.trans}} .b16 (the "
                                ".m16n16/.m8n16/.m16n8 8-bit shapes of sm_100 are not)")
    if space != "shared":
        raise _unsupported(ins, f"{name} with a generic address is not modeled: write "
                                f"{name}...shared with a .shared address")
    return _NUM[nums[0]], "trans" in rest


def _c_ldmatrix(prog, ins):
    num, trans = _form(ins, False)
    _nops(ins, 2)
    dst, addr = ins.operands
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    reads, writes = [], []
    base = _address(prog, ins, addr, "shared", reads)
    dests = [_dst(prog, ins, o, "b32", writes) for o in _regs(ins, dst, num, "the destination")]
    spelling, off = ins.opcode_spelling, addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)

    def run(st):
        T = _warps(st, ins)                       # (W, 32)
        providers = np.zeros(st.n, bool)
        providers[T[:, :8 * num].reshape(-1)] = True
        buf, at = _locate(st, "shared", base(st) + off, providers, 16, spelling, where, ipos)
        rows = at[T[:, :8 * num]]                 # (W, 8 num): row r of matrix i at 8 i + r
        mat = buf[rows[..., None] + _ROW].reshape(T.shape[0], num, 8, 16)
        mat = np.ascontiguousarray(mat).view("<u2")         # (W, num, 8 rows, 8 columns)
        if trans:
            mat = mat.transpose(0, 1, 3, 2)
        pairs = np.ascontiguousarray(mat).reshape(T.shape[0], num, 32, 2).astype(np.uint32)
        words = pairs[..., 0] | (pairs[..., 1] << np.uint32(16))   # (W, num, lanes)
        for i, d in enumerate(dests):
            full = np.zeros(st.n, np.uint32)
            full[T.reshape(-1)] = words[:, i, :].reshape(-1)
            st.write(d, "b32", full)
    return _Step(ins, run, reads, writes)


def _c_stmatrix(prog, ins):
    num, trans = _form(ins, True)
    _nops(ins, 2)
    addr, data = ins.operands
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    reads = []
    base = _address(prog, ins, addr, "shared", reads)
    srcs = [_src(prog, ins, o, "b32", reads) for o in _regs(ins, data, num, "the source")]
    spelling, off = ins.opcode_spelling, addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)

    def run(st):
        T = _warps(st, ins)
        W = T.shape[0]
        providers = np.zeros(st.n, bool)
        providers[T[:, :8 * num].reshape(-1)] = True
        buf, at = _locate(st, "shared", base(st) + off, providers, 16, spelling, where, ipos)
        words = np.stack([s(st)[T] for s in srcs], axis=1).astype(np.uint32)   # (W, num, 32)
        pairs = np.stack([words & np.uint32(0xFFFF), words >> np.uint32(16)], axis=-1)
        mat = pairs.astype("<u2").reshape(W, num, 8, 8)
        if trans:
            mat = mat.transpose(0, 1, 3, 2)
        rows = np.ascontiguousarray(mat).view(np.uint8).reshape(W, num * 8, 16)
        idx = at[T[:, :8 * num]][..., None] + _ROW            # (W, 8 num, 16)
        buf[idx.reshape(-1)] = rows.reshape(-1)               # in thread order: the last wins
    return _Step(ins, run, reads, [])


def _c_movmatrix(prog, ins):
    sfx = list(ins.suffixes)
    if sfx != ["sync", "aligned", "m8n8", "trans", "b16"]:
        raise _unsupported(ins, "movmatrix is modeled as movmatrix.sync.aligned.m8n8.trans.b16")
    _nops(ins, 2)
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], "b32", reads)
    d = _dst(prog, ins, ins.operands[0], "b32", writes)

    def run(st):
        T = _warps(st, ins)
        W = T.shape[0]
        words = a(st)[T].astype(np.uint32)                    # (W, 32)
        mat = np.stack([words & np.uint32(0xFFFF), words >> np.uint32(16)], axis=-1)
        mat = mat.reshape(W, 8, 8).transpose(0, 2, 1).reshape(W, 32, 2)
        full = np.zeros(st.n, np.uint32)
        full[T.reshape(-1)] = (mat[..., 0] | (mat[..., 1] << np.uint32(16))).reshape(-1)
        st.write(d, "b32", full)
    return _Step(ins, run, reads, writes)


COMPILERS = {"ldmatrix": _c_ldmatrix, "stmatrix": _c_stmatrix, "movmatrix": _c_movmatrix}
