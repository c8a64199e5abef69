"""What every family of ``ptxfp.ops`` shares: reading operands, running a form's plan, the
entry point built from a plan.

A family module defines ``plan(ins) -> fn(ops, n)``: ``ops`` are the checked 1-D operands in PTX
order (``uint8/16/32/64`` by the operand type's width, ``bool`` for ``.pred``), ``n`` their
length; ``fn`` returns the destination's array (the same dtypes).  ``entry(family, plan)`` makes
the family's ``compute`` (operand checks, broadcasting, scalars back as ints) and ``core``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..core import types
from ..errors import OperandError, SpellingError
from ..core.formats import FLOAT_DTYPES
from ..core.operands import broadcast, check_count, read_operand
from ..isa.spelling import Instruction, parse

__all__ = ["Plan", "entry", "dtype_of", "is_pred", "signed", "width", "to_signed", "F64",
           "decode", "FLOAT_DECODE"]

Plan = Callable[[list[NDArray[Any]], int], NDArray[Any]]

F64 = np.dtype(np.float64)


def is_pred(t: str) -> bool:
    return t == "pred"


def width(t: str) -> int:
    return types.width(t)


def signed(t: str) -> bool:
    return bool(types.get(t).signed)


def dtype_of(t: str) -> np.dtype[Any]:
    """The array dtype of a register of PTX type ``t``."""
    if is_pred(t):
        return np.dtype(np.bool_)
    w = types.width(t)
    return np.dtype(f"uint{max(8, 1 << (w - 1).bit_length())}")


def to_signed(x: NDArray[Any], w: int) -> NDArray[Any]:
    """The ``w``-bit patterns ``x`` (unsigned) as signed int64 values."""
    if x.dtype == np.dtype(f"uint{w}"):                 # the register's own dtype: one pass
        v: NDArray[Any] = x.view(f"int{w}").astype(np.int64)
        return v
    v = x.astype(np.int64) if w < 64 else x.view(np.int64)
    if w < 64:
        v = np.where(v >= (1 << (w - 1)), v - (1 << w), v)
    return v


def _bf16_to_f64(b: NDArray[Any]) -> NDArray[Any]:
    wide: NDArray[Any] = b.astype(np.uint32) << np.uint32(16)
    return wide.view(np.float32).astype(np.float64)


#: float type -> its bits (1-D) to the exact float64 values
FLOAT_DECODE: dict[str, Callable[[NDArray[Any]], NDArray[Any]]] = {
    "f16": lambda b: b.astype(np.uint16).view(np.float16).astype(np.float64),
    "bf16": _bf16_to_f64,
    "f32": lambda b: b.astype(np.uint32).view(np.float32).astype(np.float64),
    "f64": lambda b: b.astype(np.uint64).view(np.float64),
}


def decode(t: str, b: NDArray[Any]) -> NDArray[Any]:
    """The exact float64 values of the bits ``b`` of float type ``t``."""
    return FLOAT_DECODE[t](b)


def _read(x: object, t: str, what: str) -> tuple[NDArray[Any], bool]:
    """One source operand: bits of ``t``'s width (negative ints taken for .s types, float64
    values for .f64, the float dtypes for .f16/.bf16/.f32 as read_operand reads them), or
    booleans/0/1 for .pred."""
    if is_pred(t):
        arr = np.asarray(x)
        if arr.dtype == np.bool_:
            return arr, False
        if arr.dtype.kind in "iu" and arr.size and (arr.min() < 0 or arr.max() > 1):
            raise OperandError(f"{what}: a predicate is 0 or 1 (or a boolean)")
        if arr.dtype.kind not in "iu":
            raise OperandError(f"{what}: a predicate is a boolean or 0/1, got {arr.dtype}")
        return arr.astype(np.bool_), False
    w = types.width(t)
    pt = types.get(t)
    if t == "f64" and isinstance(x, (np.ndarray, np.floating)) and np.asarray(x).dtype == F64:
        return np.asarray(x).view(np.uint64), True
    if t == "f64" and (isinstance(x, float) or isinstance(x, (list, tuple)) and x and all(
            isinstance(v, float) for v in x)):
        return np.asarray(x, F64).view(np.uint64), True     # a Python float is an f64: exact
    if pt.signed and not isinstance(x, bool):
        if isinstance(x, int) and -(1 << (w - 1)) <= x < 0:
            x = x + (1 << w)
        elif isinstance(x, np.ndarray) and x.dtype.kind == "i":
            if x.size and (int(x.min()) < -(1 << (w - 1)) or int(x.max()) >= (1 << w)):
                raise OperandError(f"{what}: values outside the {w}-bit range")
            x = (x.astype(np.int64) & np.int64(-1 if w == 64 else (1 << w) - 1)).astype(
                dtype_of(t)) if w < 64 else x.astype(np.int64).view(np.uint64)
    if pt.kind == types.FLOAT and t in ("f16", "bf16", "f32", "f16x2", "bf16x2"):
        return read_operand(x, t, what, w)
    return read_operand(x, "b%d" % w if w in (8, 16, 32, 64) else t, what, w)


def entry(family: str, plan: Callable[[Instruction], Plan],
          doc: str = "") -> tuple[Callable[..., Any], Callable[[Instruction], Plan]]:
    """(compute, core) of a family from its ``plan``."""
    def quiet(ins: Instruction) -> Plan:
        fn = plan(ins)

        def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            with np.errstate(all="ignore"):      # NaN casts and overflow are intended here
                return fn(ops, n)
        return run

    cached = lru_cache(maxsize=4096)(quiet)

    def parse_own(spelling: str | Instruction) -> Instruction:
        ins = spelling if isinstance(spelling, Instruction) else parse(spelling)
        if ins.family != family:
            raise SpellingError(f"'{ins.spelling}' is a {ins.family} spelling: run it with "
                                f"ptxfp.compute", spelling=ins.spelling, token=ins.opcode,
                                rule="wrong-entry-point")
        return ins

    def compute(spelling: str | Instruction, *operands: Any, out: Any = None) -> Any:
        ins = parse_own(spelling)
        names, fmts = ins.operand_names, ins.operand_formats
        check_count(ins.spelling, names, operands)
        arrays: list[NDArray[Any]] = []
        typed = False
        for x, f, nm in zip(operands, fmts, names):
            a, t = _read(x, f, f"operand {nm} of '{ins.spelling}' (.{f})")
            arrays.append(a)
            typed = typed or t
        flat, shape, n, scalar = broadcast(ins.spelling, names, arrays)
        flat = [a.astype(dtype_of(f), copy=False) for a, f in zip(flat, fmts)]
        res = cached(ins)(flat, n)
        return _deliver(ins, res, shape, scalar, typed, out)

    def core(ins: Instruction) -> Plan:
        return cached(parse_own(ins))

    compute.__doc__ = doc
    return compute, core


def _deliver(ins: Instruction, res: NDArray[Any], shape: Sequence[int], scalar: bool,
             typed: bool, out: Any) -> Any:
    dt = ins.row.operands[0].type          # the destination's type (.pred for setp/testp)
    if is_pred(dt):
        res = res.astype(np.uint8)
    res = res.reshape(shape)
    if out is not None:
        if not isinstance(out, np.ndarray) or out.shape != tuple(shape) or out.dtype != res.dtype:
            raise OperandError(f"out of '{ins.spelling}': must be a NumPy {res.dtype} array of "
                               f"shape {tuple(shape)}")
        out[...] = res
        return out
    if typed and dt in ("f16", "bf16", "f32", "f64"):
        fd = F64 if dt == "f64" else FLOAT_DTYPES[dt]
        v = res.view(fd)
        return v[()] if scalar else v
    return int(res) if scalar else res
