"""The floor every room of the interpreter stands on: register types and their widths and
NumPy dtypes, the special registers' names, bit helpers (widen, wrap, little-endian bytes,
immediates), the spellings' types, and the one-line errors of a statement (unsupported, bad
operand)."""

from __future__ import annotations

import re
import sys
from functools import lru_cache

import numpy as np

from ...core import types
from ...errors import InterpError, UnsupportedInstruction
from ...core.formats import FORMATS
from ...isa.spelling import parse


WIDTH = dict(types.REGISTER_WIDTHS)     #: register type -> bits (the type table's)


# the small-float types of cvt (.e4m3x2, .e2m1x2, .ue8m0x2 ...), operands of the cvt rows
WIDTH.update({t.name: t.width for t in types.TYPES.values()
              if t.fmt is not None and t.fmt.code < 0 and t.width >= 8})


# .f32x2, the operand type of the .f32x2 rows (held in .b64 registers)
WIDTH["f32x2"] = types.width("f32x2")


_DTYPE = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


_SPECIAL = re.compile(r"%(tid|ntid|ctaid|nctaid)\.([xyz])$|%(laneid|warpid|nwarpid|warpsize)$")


def _mask(w):
    return (1 << w) - 1


_specials = {}


def _special(name):
    """Is `name` a special register (%tid.x ...)?  Remembered per name."""
    hit = _specials.get(name)
    if hit is None:
        hit = _SPECIAL.match(name) is not None
        if len(_specials) < 65536:
            _specials[name] = hit
    return hit


def _unsupported(ins, why=None):
    msg = f"'{ins.opcode_spelling}' is not modeled by the interpreter"
    if why:
        msg += f": {why}"
    return UnsupportedInstruction(msg, ins.line, ins.col, rule="unsupported-instruction")


def _bad(ins, message, op=None):
    line = getattr(op, "line", 0) or ins.line
    col = getattr(op, "col", 0) or ins.col
    return InterpError(f"'{ins.opcode_spelling}': {message}", line, col, rule="operand")


def _nops(ins, n):
    if len(ins.operands) != n:
        raise _bad(ins, f"expects {n} operands, got {len(ins.operands)}")


def _narrow_bits(arr, w):
    if w == 1:
        return arr.astype(bool)
    return (arr.astype(np.uint64) & np.uint64(_mask(w))).astype(_DTYPE[w])


def _imm_bits(op, typ, ins):
    """The bits of an immediate for an operand of type `typ`."""
    w = WIDTH[typ]
    if op.value is None:
        raise _bad(ins, f"cannot read the immediate '{op.text}'", op)
    if op.kind == "hexfloat":
        iw = op.width
        if typ in ("f32", "b32", "u32", "s32") and iw == 32:
            return op.value
        if typ in ("f64", "b64", "u64", "s64") and iw == 64:
            return op.value
        raise _bad(ins, f"the {iw}-bit float immediate '{op.text}' does not fit a .{typ} "
                        "operand", op)
    if op.kind == "float":
        if typ in FORMATS:
            from ...ops.kernels import round_f64_array
            from ...policy import current
            x = np.array([op.value], np.uint64).view(np.float64)
            nan = current().canonical_nan(typ)
            return int(round_f64_array(x, FORMATS[typ].code, nan)[0])
        if typ == "f64":
            return op.value
        raise _bad(ins, f"the floating-point immediate '{op.text}' cannot be a .{typ} operand",
                   op)
    v = op.value
    if not -(1 << (w - 1)) <= v < (1 << w):
        raise _bad(ins, f"the immediate '{op.text}' does not fit in {w} bits", op)
    return v & _mask(w)


_HALF = types.HALF_TYPES


def _types_of(ins):
    return list(_spelling_types(ins.opcode_spelling))


@lru_cache(maxsize=4096)
def _spelling_types(spelling):
    return tuple(t for t in spelling.split(".")[1:] if t in types.TYPE_TOKENS)


# one parse per spelling: a program repeats a few spellings many times (and the same
# Instruction object keeps execute's per-form cache warm)
_parse_once = lru_cache(maxsize=4096)(parse)


_LITTLE = sys.byteorder == "little"


_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _ext(bits, t):
    """Bits of type t widened to 64: int64 (sign-extended) for .s types, else uint64."""
    w = WIDTH[t]
    if t[0] == "s":
        return bits.astype(_DTYPE[w]).view(_SIGNED[w]).astype(np.int64)
    return bits.astype(np.uint64)


def _wrap(v, t):
    """A 64-bit integer array back to the bits of type t (mod 2**width)."""
    v = np.asarray(v)
    if v.dtype.kind == "i":
        v = v.view(np.uint64) if v.dtype == np.int64 else v.astype(np.int64).view(np.uint64)
    return v.astype(np.uint64).astype(_DTYPE[WIDTH[t]])


def _u64(v):
    return v.view(np.uint64) if v.dtype == np.int64 else v


def _to_le(bits, w):
    n = max(w // 8, 1)
    b = np.ascontiguousarray(bits.astype(_DTYPE[max(w, 8)]))
    return b.view(np.uint8).reshape(-1, n) if n > 1 else b.reshape(-1, 1).astype(np.uint8)


def _from_le(by, w):
    n = max(w // 8, 1)
    by = np.ascontiguousarray(by, dtype=np.uint8).reshape(-1, n)
    return by.view(_DTYPE[max(w, 8)]).reshape(-1) if n > 1 else by.reshape(-1)
