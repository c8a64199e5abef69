"""Warp-collective matrix moves that feed and drain mma.sync: ldmatrix (from .shared),
stmatrix (into .shared) and movmatrix (.m8n8.trans.b16, a transpose across the warp's
registers), every shape of the PTX ISA manual (9.0, sections 9.7.14.5.15-17):

=================  ==========  ==============================================  ==========
form               .num        element types                                   targets
=================  ==========  ==============================================  ==========
ldmatrix .m8n8     x1, x2, x4  .b16, .trans optional                           any (2)
ldmatrix .m16n16   x1, x2      .b8, .b8x16.b6x16_p32, .b8x16.b4x16_p64; .trans  (1)
                               mandatory
ldmatrix .m8n16    x1, x2, x4  .b8x16.b6x16_p32, .b8x16.b4x16_p64; no .trans    (1)
stmatrix .m8n8     x1, x2, x4  .b16, .trans optional                           sm_90+
stmatrix .m16n8    x1, x2, x4  .b8, .trans mandatory                           (1)
=================  ==========  ==============================================  ==========

(1) an arch- or family-specific Blackwell target: sm_100a/f, sm_101a/f, sm_103a/f,
sm_107a/f, sm_110a/f, sm_120a/f, sm_121a/f (ptxas 13.5 agrees: tests/test_interp_matrix.py).
(2) ptxas 13.5 takes ldmatrix .m8n8 (and movmatrix) on every target it knows, sm_60 included.
The 8-bit forms need PTX ISA 8.6, stmatrix 7.8, ldmatrix 6.5.  The rules, as data, with ptxas'
messages, are isa/matrix_moves.py's (``check()`` judges these instructions there too).

Every matrix row is 16 bytes of .shared (16-byte aligned) whose address one lane gives: lane
``R*i + r`` gives row ``r`` of matrix ``i`` (R = 8 rows a matrix, 16 for .m16n16).  What each
lane's registers hold (the manual's figures 104-108), in the matrix the registers see (the
memory matrix, or its transpose with .trans):

* .m8n8 .b16: register ``i``, lane ``l``: row ``l//4``, columns ``2(l%4)``, ``+1`` (bits 0-15,
  16-31) of matrix ``i``.
* .m16n16 (8-bit): registers ``2i``, ``2i+1``: rows ``l//4`` and ``l//4 + 8``, columns
  ``4(l%4)`` .. ``+3`` (byte 0 = the lowest column) of the transpose of matrix ``i``.
* .m8n16: register ``i``: row ``l//4``, columns ``4(l%4)`` .. ``+3`` of matrix ``i``.
* stmatrix .m16n8 .b8: register ``i``, bytes e0..e3 (e0 the low byte): row ``l//4`` columns
  ``2(l%4)``, ``+1`` (e0, e1) and row ``l//4 + 8`` (e2, e3) of a 16x8 matrix, stored transposed:
  memory row ``c`` (8 rows of 16 bytes) holds its column ``c``.

The .b6x16_p32 / .b4x16_p64 sources hold 16 unsigned 6-bit (4-bit) elements packed from the
row's lowest bit (element ``e`` at bits ``6e`` .. ``6e+5`` of the little-endian 128-bit row),
then 32 (64) bits of padding, which are ignored; each element lands in the low bits of its byte,
the rest zero (the manual's 5.5.1.1.1 for the 6-bit case; for the 4-bit case CUTLASS 4.2,
cute/atom/mma_traits_sm120.hpp: "ld.matrix b4x16_p64 places FP4 data at the first four bits in
each eight-bit container", which is why kind::f8f6f4's e2m1 needs a shift by two).

Every lane of each warp must execute it (.sync.aligned).
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ....errors import InterpError
from ....isa.matrix_moves import NUMS, TYPE_TOKENS, judge
from ...reader import Addr, Reg, Vec
from ..base import _bad, _nops, _unsupported
from ..operands import _dst, _src
from ..program import _Step
from ..state import _locate
from .mem import _address, _space_of

_ROW = np.arange(16)
_SPACES = {"shared", "shared::cta"}
#: source formats of the decompressing loads: bits an element
_SRC_BITS = {"b6x16_p32": 6, "b4x16_p64": 4}


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
        raise _bad(ins, f"{what} needs {num} .b32 register{'s' * (num > 1)} here", op)
    return items


# --- the forms ---------------------------------------------------------------------------------

class _Form:
    """One ldmatrix / stmatrix form: ``rows`` rows a matrix (the lanes that give addresses:
    ``rows * num``), ``elem`` bits an element in a register (16 or 8), ``src`` the source
    format (None, 'b6x16_p32', 'b4x16_p64'), ``regs`` registers, and ``where`` (regs, 32, per
    register) -> (row provider, element of that row) of every element of every register."""

    def __init__(self, shape, num, trans, elem, src, rows, regs, where):
        self.shape, self.num, self.trans, self.elem, self.src = shape, num, trans, elem, src
        self.rows, self.regs = rows, regs
        self.provider = where[..., 0]          # (regs, 32 lanes, per): the row (0 .. rows*num)
        self.column = where[..., 1]            # the element of that row


@lru_cache(maxsize=None)
def _layout(op, shape, num, trans, elem, src):
    """The :class:`_Form` of a legal spelling, its ``where`` table built from the manual's
    fragment figures (module docstring)."""
    if op == "ldmatrix" and shape == "m8n8":         # 8x8 of .b16, a register a matrix
        rows, per_mat = 8, 1
        def cell(i, h, lane, j):                     # -> (row, col) as the registers see it
            return lane // 4, 2 * (lane % 4) + j
    elif op == "ldmatrix" and shape == "m16n16":     # 16x16 of 8 bits, two registers a matrix
        rows, per_mat = 16, 2
        def cell(i, h, lane, j):
            return lane // 4 + 8 * h, 4 * (lane % 4) + j
    elif op == "ldmatrix" and shape == "m8n16":      # 8x16 of 8 bits
        rows, per_mat = 8, 1
        def cell(i, h, lane, j):
            return lane // 4, 4 * (lane % 4) + j
    elif op == "stmatrix" and shape == "m8n8":
        rows, per_mat = 8, 1
        def cell(i, h, lane, j):
            return lane // 4, 2 * (lane % 4) + j
    else:                                            # stmatrix m16n8: a 16x8 register matrix
        rows, per_mat = 8, 1
        def cell(i, h, lane, j):
            return lane // 4 + 8 * (j // 2), 2 * (lane % 4) + j % 2
    per = 32 // elem
    where = np.zeros((num * per_mat, 32, per, 2), np.int64)
    for i in range(num):
        for h in range(per_mat):
            for lane in range(32):
                for j in range(per):
                    r, c = cell(i, h, lane, j)
                    if trans:                        # the registers see the transpose
                        r, c = c, r
                    where[i * per_mat + h, lane, j] = (rows * i + r, c)
    return _Form(shape, num, trans, elem, src, rows, num * per_mat, where)


def _judge(prog, ins):
    """ptxas' verdict on the spelling (isa/matrix_moves.py), on the module's .target and
    .version (a snippet without a module has neither: its spelling alone is judged); its first
    error is a one-line error, rule 'target' for what the .target/.version lack."""
    name = ins.opcode
    target = version = None
    if prog.function is not None:
        target = prog.prog.target or None
        version = tuple(prog.prog.version) if prog.prog.version is not None else None
    err = judge(name, ins.suffixes, target, version)
    if err is None:
        return
    if err.rule in ("min-target", "min-version", "target-unsupported"):
        what = (f", and the module's .target is {target}" if err.rule != "min-version" else
                f", and the module's .version is {version[0]}.{version[1]}")
        raise InterpError(f"'{ins.opcode_spelling}': {err.message}{what}", ins.line, ins.col,
                          rule="target")
    raise _bad(ins, err.message)


def _form(prog, ins):
    """The :class:`_Form` of an ldmatrix / stmatrix spelling, after ptxas' rules (module
    docstring's table; isa/matrix_moves.py); a spelling ptxas rejects is a one-line error.  As
    for ptxas, the qualifiers may come in any order, the two formats of a decompressing load
    excepted."""
    _judge(prog, ins)
    name = ins.opcode
    rest = [x for x in ins.suffixes if x not in ("sync", "aligned")]
    shape = next(x for x in rest if re.fullmatch(r"m\d+n\d+", x))
    num = next(NUMS[x] for x in rest if x in NUMS)
    trans = "trans" in rest
    if not any(x in _SPACES for x in rest):
        raise _unsupported(ins, f"{name} with a generic address is not modeled: write "
                                f"{name}...shared with a .shared address")
    types = ".".join(x for x in rest if x in TYPE_TOKENS)
    src = types.split(".")[1] if "." in types else None
    return _layout(name, shape, num, trans, 16 if types == "b16" else 8, src)


# --- the row bytes <-> elements -----------------------------------------------------------------

def _elements(rows, form):
    """(W, P, 16) row bytes -> (W, P, elements a row) as the registers take them."""
    if form.elem == 16:
        return np.ascontiguousarray(rows).view("<u2").astype(np.uint32)
    if form.src is None:
        return rows.astype(np.uint32)
    b = _SRC_BITS[form.src]
    bits = np.unpackbits(rows, axis=-1, bitorder="little")[..., :16 * b]   # padding dropped
    bits = bits.reshape(*rows.shape[:-1], 16, b).astype(np.uint32)
    return (bits << np.arange(b, dtype=np.uint32)).sum(-1, dtype=np.uint32)


def _c_ldmatrix(prog, ins):
    form = _form(prog, ins)
    _nops(ins, 2)
    dst, addr = ins.operands
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    reads, writes = [], []
    base = _address(prog, ins, addr, "shared", reads)
    dests = [_dst(prog, ins, o, "b32", writes)
             for o in _regs(ins, dst, form.regs, "the destination")]
    spelling, off = ins.opcode_spelling, addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)
    P = form.rows * form.num
    shifts = (np.arange(32 // form.elem, dtype=np.uint32) * np.uint32(form.elem))

    def run(st):
        T = _warps(st, ins)                       # (W, 32)
        providers = np.zeros(st.n, bool)
        providers[T[:, :P].reshape(-1)] = True
        buf, at = _locate(st, "shared", base(st) + off, providers, 16, spelling, where, ipos)
        rows = buf[at[T[:, :P]][..., None] + _ROW]              # (W, P, 16) bytes
        elems = _elements(rows, form)                          # (W, P, E)
        vals = elems[:, form.provider, form.column]            # (W, regs, 32, per)
        words = np.bitwise_or.reduce(vals << shifts, axis=-1)  # (W, regs, 32)
        for i, d in enumerate(dests):
            full = np.zeros(st.n, np.uint32)
            full[T.reshape(-1)] = words[:, i, :].reshape(-1)
            st.write(d, "b32", full)
    return _Step(ins, run, reads, writes)


def _c_stmatrix(prog, ins):
    form = _form(prog, ins)
    _nops(ins, 2)
    addr, data = ins.operands
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    reads = []
    base = _address(prog, ins, addr, "shared", reads)
    srcs = [_src(prog, ins, o, "b32", reads) for o in _regs(ins, data, form.regs, "the source")]
    spelling, off = ins.opcode_spelling, addr.offset
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)
    P = form.rows * form.num
    per = 32 // form.elem
    shifts = np.arange(per, dtype=np.uint32) * np.uint32(form.elem)
    mask = np.uint32((1 << form.elem) - 1)
    dtype = "<u2" if form.elem == 16 else np.uint8

    def run(st):
        T = _warps(st, ins)
        W = T.shape[0]
        providers = np.zeros(st.n, bool)
        providers[T[:, :P].reshape(-1)] = True
        buf, at = _locate(st, "shared", base(st) + off, providers, 16, spelling, where, ipos)
        words = np.stack([s(st)[T] for s in srcs], axis=1).astype(np.uint32)   # (W, regs, 32)
        vals = (words[..., None] >> shifts) & mask                             # (.., per)
        elems = np.zeros((W, P, 128 // form.elem), dtype)
        elems[:, form.provider, form.column] = vals.astype(dtype)
        rows = np.ascontiguousarray(elems).view(np.uint8).reshape(W, P, 16)
        idx = at[T[:, :P]][..., None] + _ROW                  # (W, P, 16)
        buf[idx.reshape(-1)] = rows.reshape(-1)               # in thread order: the last wins
    return _Step(ins, run, reads, [])


def _c_movmatrix(prog, ins):
    _judge(prog, ins)
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
