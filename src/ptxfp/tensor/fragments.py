"""The fragment layouts of ``mma.sync``: which element of A, B, C/D each of a warp's 32 threads
holds in which register, as data (PTX ISA 9.0 manual, 9.7.14.5.1-9.7.14.5.13, "Matrix
fragments for mma.mXnYkZ").

For a form (an ``MmaForm`` or a spelling) and an operand ('a', 'b', 'c' or 'd'),
:func:`fragment` gives a :class:`Fragment` whose ``index[lane, reg, elem]`` is the (tile, row,
column) of the matrix element that lane ``lane`` holds in register ``reg`` at element ``elem``
(element 0 in the low bits: the manual's "elements low to high").  ``tile`` is 0 except for
``mma.m8n8k4`` with .f16, where one warp computes four independent MMAs (quad pair g: lanes
4g..4g+3 and 4g+16..4g+19).  :func:`gather` turns a warp's registers (32 x regs) into whole
matrices of element bits, :func:`scatter` the other way; the interpreter and the hardware
harness use them.

Every layout but m8n8k4's follows one rule in 32-bit words (64-bit for .f64): with
groupID = lane >> 2 and threadID_in_group = lane % 4, register r of A holds row
groupID + 8 (r mod 2) (m16 shapes) and the k-word threadID_in_group + 4 (r div 2); register r of
B holds column groupID and the k-word threadID_in_group + 4 r; element j of a word sits at
column (row for B) word * (elements per word) + j.  Accumulators hold pairs:
c_{2r}, c_{2r+1} at row groupID + 8 r (m16), columns threadID_in_group * 2 + {0, 1}.
tests/test_fragments.py holds these to the manual's per-shape formulas, written out there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import PtxfpError
from ..isa.mma_form import MmaForm

__all__ = ["Fragment", "fragment", "fragments", "gather", "scatter", "element_bits",
           "FragmentError"]


class FragmentError(PtxfpError):
    """A form without mma.sync fragments, or registers of the wrong shape."""


#: bits of one element in a fragment register (fp6/fp4 of kind::f8f6f4 in 8-bit containers;
#: the e2m1 of kind::mxf4/mxf4nvf4 packed two to a byte)
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "e4m3": 8,
         "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}


def element_bits(form: MmaForm, operand: str) -> int:
    """Bits of one element of ``operand`` ('a', 'b', 'c', 'd') in its fragment register."""
    ty = {"a": form.atype, "b": form.btype, "c": form.ctype, "d": form.dtype}[operand]
    if ty == "e2m1" and form.kind in ("mxf4", "mxf4nvf4"):
        return 4
    return _BITS[ty]


@dataclass(frozen=True)
class Fragment:
    """One operand's fragment: ``index[lane, reg, elem] = (tile, row, col)``; ``reg_bits`` 32
    (64 for .f64); ``shape`` = (tiles, rows, cols) of the whole matrix (or matrices)."""
    operand: str
    shape: tuple[int, int, int]
    reg_bits: int
    elem_bits: int
    index: NDArray[np.int64]

    @property
    def regs(self) -> int:
        return int(self.index.shape[1])

    @property
    def per_reg(self) -> int:
        return int(self.index.shape[2])


def _form(form: MmaForm | str) -> MmaForm:
    if isinstance(form, MmaForm):
        f = form
    elif isinstance(form, str):
        from ..isa.spelling import mma_form
        f = mma_form(form)
    else:
        raise FragmentError(f"expected an MmaForm or a spelling, got {type(form).__name__}")
    if f.opcode != "mma":
        raise FragmentError(f"'{f.spelling or f.opcode}': fragments are those of mma.sync "
                            f"(a warp's registers); {f.opcode} is not modelled here")
    return f


def _m8n8k4(f: MmaForm, operand: str) -> NDArray[np.int64]:
    """mma.m8n8k4 with .f16: four MMAs per warp (manual 9.7.14.5.1)."""
    lanes = np.arange(32)
    hi = lanes >= 16
    tile = (lanes >> 2) & 3
    if operand == "a":
        n, per = 2, 2
        idx = np.zeros((32, n, per, 3), np.int64)
        for i in range(4):
            r, e = divmod(i, 2)
            if f.alayout == "row":
                row, col = lanes % 4 + 4 * hi, np.full(32, i)
            else:
                row, col = i % 4 + 4 * hi, lanes % 4
            idx[:, r, e] = np.stack([tile, row, col], 1)
        return idx
    if operand == "b":
        idx = np.zeros((32, 2, 2, 3), np.int64)
        for i in range(4):
            r, e = divmod(i, 2)
            if f.blayout == "row":
                row, col = lanes % 4, i + 4 * hi
            else:
                row, col = np.full(32, i), lanes % 4 + 4 * hi
            idx[:, r, e] = np.stack([tile, row, col], 1)
        return idx
    ty = f.ctype if operand == "c" else f.dtype
    if ty == "f16":
        idx = np.zeros((32, 4, 2, 3), np.int64)
        for i in range(8):
            r, e = divmod(i, 2)
            idx[:, r, e] = np.stack([tile, lanes % 4 + 4 * hi, np.full(32, i)], 1)
        return idx
    idx = np.zeros((32, 8, 1, 3), np.int64)
    for i in range(8):
        x = (lanes & 1) + (i & 2)
        col = (i & 4) + (lanes & 2) + (i & 1)
        idx[:, i, 0] = np.stack([tile, x + 4 * hi, col], 1)
    return idx


def _regular(f: MmaForm, operand: str) -> NDArray[np.int64]:
    lanes = np.arange(32)
    gid, tig = lanes >> 2, lanes % 4
    m, n, k = f.m, f.n, f.k
    zero = np.zeros(32, np.int64)
    if operand in ("a", "b"):
        bits = element_bits(f, operand)
        word = 64 if bits == 64 else 32
        per = word // bits
        rows_or_cols = m if operand == "a" else n
        regs = rows_or_cols * k * bits // (32 * word)
        idx = np.zeros((32, regs, per, 3), np.int64)
        for r in range(regs):
            if operand == "a":
                row = gid + 8 * (r % 2) if m == 16 else gid
                kw = tig + 4 * (r // 2 if m == 16 else r)
            else:
                row = gid                          # B's column
                kw = tig + 4 * r
            for j in range(per):
                kk = kw * per + j
                idx[:, r, j] = np.stack([zero, row, kk] if operand == "a" else [zero, kk, row], 1)
        return idx
    ty = f.ctype if operand == "c" else f.dtype
    per = 2 if ty == "f16" else 1
    count = m * n // 32
    idx = np.zeros((32, count // per, per, 3), np.int64)
    for i in range(count):
        r, e = divmod(i, per)
        row = gid + 8 * (i >> 1) if m == 16 else gid
        idx[:, r, e] = np.stack([zero, row, tig * 2 + (i & 1)], 1)
    return idx


@lru_cache(maxsize=512)
def _cached(f: MmaForm, operand: str) -> Fragment:
    eight = (f.m, f.n, f.k) == (8, 8, 4) and f.atype == "f16"
    idx = _m8n8k4(f, operand) if eight else _regular(f, operand)
    idx.setflags(write=False)
    rows, cols = {"a": (f.m, f.k), "b": (f.k, f.n)}.get(operand, (f.m, f.n))
    ty = {"a": f.atype, "b": f.btype, "c": f.ctype, "d": f.dtype}[operand]
    return Fragment(operand, (4 if eight else 1, rows, cols), 64 if ty == "f64" else 32,
                    element_bits(f, operand), idx)


def fragment(form: MmaForm | str, operand: str) -> Fragment:
    """The fragment of ``operand`` ('a', 'b', 'c', 'd') of an mma.sync form.

        >>> fr = fragment("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "a")
        >>> fr.regs, fr.per_reg, tuple(fr.index[5, 2, 1])     # lane 5, a5: row 1, col 11
        (4, 2, (0, 1, 11))
    """
    if operand not in ("a", "b", "c", "d"):
        raise FragmentError(f"operand must be 'a', 'b', 'c' or 'd', got {operand!r}")
    f = _form(form)
    return _cached(MmaForm(f.opcode, f.m, f.n, f.k, f.atype, f.btype, f.ctype, f.dtype,
                           f.alayout, f.blayout, f.kind), operand)


def fragments(form: MmaForm | str) -> dict[str, Fragment]:
    """The four fragments of a form: {'a': ..., 'b': ..., 'c': ..., 'd': ...}."""
    return {o: fragment(form, o) for o in "abcd"}


def _dtype(bits: int) -> Any:
    return np.uint8 if bits <= 8 else np.uint16 if bits == 16 else \
        np.uint32 if bits == 32 else np.uint64


def gather(form: MmaForm | str, operand: str, registers: Any) -> NDArray[Any]:
    """A warp's registers of one operand (shape (..., 32, regs), unsigned integers) as the
    whole matrix of element bits: (..., rows, cols), or (..., 4, rows, cols) for m8n8k4."""
    fr = fragment(form, operand)
    regs = np.asarray(registers)
    if regs.shape[-2:] != (32, fr.regs) or regs.dtype.kind not in "ui":
        raise FragmentError(f"{operand}: expected integer registers of shape (..., 32, "
                            f"{fr.regs}), got {regs.dtype} {regs.shape}")
    lead = regs.shape[:-2]
    words = regs.astype(np.uint64) & np.uint64((1 << fr.reg_bits) - 1)
    shifts = (np.arange(fr.per_reg, dtype=np.uint64) * np.uint64(fr.elem_bits))
    mask = np.uint64((1 << fr.elem_bits) - 1) if fr.elem_bits < 64 else np.uint64(2**64 - 1)
    elems = (words[..., None] >> shifts) & mask                    # (..., 32, regs, per)
    out = np.zeros(lead + fr.shape, _dtype(fr.elem_bits))
    t, r, c = fr.index[..., 0], fr.index[..., 1], fr.index[..., 2]
    out[..., t, r, c] = elems.astype(out.dtype)
    return out if fr.shape[0] > 1 else out[..., 0, :, :]


def scatter(form: MmaForm | str, operand: str, matrix: Any) -> NDArray[Any]:
    """The whole matrix of element bits (..., rows, cols) (m8n8k4: (..., 4, rows, cols)) as
    a warp's registers of one operand: (..., 32, regs), uint32 (uint64 for .f64)."""
    fr = fragment(form, operand)
    mat = np.asarray(matrix)
    want = fr.shape if fr.shape[0] > 1 else fr.shape[1:]
    if mat.shape[mat.ndim - len(want):] != want or mat.dtype.kind not in "ui":
        raise FragmentError(f"{operand}: expected integer element bits of shape (..., "
                            f"{', '.join(map(str, want))}), got {mat.dtype} {mat.shape}")
    if fr.shape[0] == 1:
        mat = mat[..., None, :, :]
    t, r, c = fr.index[..., 0], fr.index[..., 1], fr.index[..., 2]
    mask = np.uint64((1 << fr.elem_bits) - 1) if fr.elem_bits < 64 else np.uint64(2**64 - 1)
    elems = mat.astype(np.uint64)[..., t, r, c] & mask              # (..., 32, regs, per)
    shifts = (np.arange(fr.per_reg, dtype=np.uint64) * np.uint64(fr.elem_bits))
    words: NDArray[Any] = np.bitwise_or.reduce(elems << shifts, axis=-1)
    return words.astype(np.uint64 if fr.reg_bits == 64 else np.uint32)
