"""setp, set and selp: the one place their semantics live (rows: isa/compare.py; rules:
docs/semantics.md, "setp, set, selp").

- float comparisons on the exact values (.f16/.bf16 lanes, .f32, .f64; ``.ftz`` makes an .f32 or
  .f16 subnormal operand a zero first): ``.eq .ne .lt .le .gt .ge`` are false when either
  operand is NaN, the unordered ``.equ .neu .ltu .leu .gtu .geu`` true, ``.num`` is "neither is
  NaN", ``.nan`` "either is NaN"; -0.0 equals +0.0;
- integer comparisons on the values of the type: .s signed, .u unsigned (``.lo .ls .hi .hs``
  are the unsigned lt le gt ge), .b as bits (eq, ne);
- ``setp.CmpOp.BoolOp p|q, a, b, c``: p = BoolOp(t, c), q = BoolOp(!t, c); on .f16x2/.bf16x2
  p = BoolOp(t[lane 0], c), q = BoolOp(t[lane 1], c) (manual's semantics);
- ``set``: BoolOp(t, c) ? 1.0 (.f32/.f16/.bf16) or all ones (.u32/.s32/.u16/.s16) : 0; from
  .f16x2/.bf16x2 per lane: 1.0 of the lane (.f16x2/.bf16x2 results) or 0xffff (.u32/.s32);
- ``selp d, a, b, c``: c ? a : b.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..core import types
from ..isa.spelling import Instruction, parse
from .common import Plan, decode, dtype_of, entry, to_signed

__all__ = ["compute", "core", "core2", "plan"]

_B = NDArray[Any]
_CMP: dict[str, Callable[[_B, _B], _B]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b,
    "hs": lambda a, b: a >= b}
_BOOL: dict[str, Callable[[_B, _B], _B]] = {"and": np.logical_and, "or": np.logical_or,
                                            "xor": np.logical_xor}
_SUBNORMAL = {"f16": (0x7C00, 0x8000), "f32": (0x7F800000, 0x80000000)}
#: formats NumPy compares natively (exactly, IEEE: -0 == +0, NaN unordered): bits dtype, floats
_VIEW = {"f16": (np.dtype(np.uint16), np.float16), "f32": (np.dtype(np.uint32), np.float32),
         "f64": (np.dtype(np.uint64), np.float64)}


def _values(t: str, x: NDArray[Any], ftz: bool) -> NDArray[Any]:
    """What the comparison reads of one lane's bits: exact floats, or the integer values."""
    if types.get(t).kind == types.FLOAT:
        lane = types.lane_format(t).name
        if ftz and lane in _SUBNORMAL:
            e, s = _SUBNORMAL[lane]
            x = np.where((x & e) == 0, x & s, x)
        if lane in _VIEW and x.dtype == _VIEW[lane][0]:
            return x.view(_VIEW[lane][1])   # IEEE comparisons of the format itself: no copy
        return decode(lane, x)
    w = types.width(t)
    if types.get(t).signed:
        return to_signed(x, w)
    return x.astype(np.uint64)


def _compare(op: str, a: NDArray[Any], b: NDArray[Any], is_float: bool) -> NDArray[Any]:
    if not is_float:
        return _CMP[op](a, b)
    nan = np.isnan(a) | np.isnan(b)
    if op == "num":
        return ~nan
    if op == "nan":
        return nan
    if op == "ne":
        return (a != b) & ~nan
    if op.endswith("u"):
        return _CMP[op[:-1]](a, b) | nan
    return _CMP[op](a, b)


def _parts(ins: Instruction) -> tuple[str, str | None, str]:
    mods = ins.modifiers
    cmp = next(m for m in ins.row.required if m in _CMP or m in ("equ", "neu", "ltu", "leu",
                                                                   "gtu", "geu", "num", "nan"))
    boolop = next((m for m in mods if m in _BOOL), None)
    return cmp, boolop, ins.atype


def _tests(ins: Instruction) -> Callable[[list[NDArray[Any]]], list[NDArray[Any]]]:
    """ops -> [t of lane 0, t of lane 1 (packed types only)]."""
    cmp, _, t = _parts(ins)
    is_float = types.get(t).kind == types.FLOAT
    packed = types.get(t).lanes == 2
    ftz = ins.ftz

    def run(ops: list[NDArray[Any]]) -> list[NDArray[Any]]:
        a, b = ops[0], ops[1]
        if packed:
            out = []
            for sh in (0, 16):
                la = ((a >> np.uint32(sh)) & np.uint32(0xFFFF)).astype(np.uint16)
                lb = ((b >> np.uint32(sh)) & np.uint32(0xFFFF)).astype(np.uint16)
                out.append(_compare(cmp, _values(t, la, ftz), _values(t, lb, ftz), True))
            return out
        return [_compare(cmp, _values(t, a, ftz), _values(t, b, ftz), is_float)]
    return run


def _combine(boolop: str | None, t: NDArray[Any], ops: list[NDArray[Any]]) -> NDArray[Any]:
    return t if boolop is None else _BOOL[boolop](t, ops[2].astype(bool))


def plan(ins: Instruction) -> Plan:
    if ins.opcode == "selp":
        def selp(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            return np.where(ops[2].astype(bool), ops[0], ops[1])
        return selp
    _, boolop, _ = _parts(ins)
    tests = _tests(ins)
    if ins.opcode == "setp":
        def setp(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
            return np.asarray(_combine(boolop, tests(ops)[0], ops), dtype=bool)
        return setp
    dt = dtype_of(ins.dtype)
    packed = types.get(ins.atype).lanes == 2
    # the manual's true values: 1.0 of a float destination (per lane), all ones of an integer
    # one (0xffff per lane from a packed source, whatever the destination's width)
    one = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f16x2": 0x3C00,
           "bf16x2": 0x3F80}
    true = one.get(ins.dtype, 0xFFFF if packed or types.width(ins.dtype) == 16 else 0xFFFFFFFF)

    def set_(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        ts = tests(ops)
        r = np.zeros(n, np.uint64)
        for k, t in enumerate(ts):
            r |= np.where(_combine(boolop, t, ops), np.uint64(true), np.uint64(0)) << np.uint64(
                16 * k)
        return r.astype(dt)
    return set_


def core2(ins: Instruction) -> Callable[[list[NDArray[Any]], int], tuple[NDArray[Any],
                                                                          NDArray[Any]]]:
    """``fn(ops, n) -> (p, q)``: both predicates of ``setp ... p|q, a, b{, c}`` (q = BoolOp(!t,
    c), or lane 1's on .f16x2/.bf16x2)."""
    ins = ins if isinstance(ins, Instruction) else parse(ins)
    if ins.opcode != "setp":
        raise ValueError(f"'{ins.spelling}' writes one destination")
    _, boolop, t = _parts(ins)
    tests = _tests(ins)
    packed = types.get(t).lanes == 2

    def run(ops: list[NDArray[Any]], n: int) -> tuple[NDArray[Any], NDArray[Any]]:
        with np.errstate(all="ignore"):
            ts = tests(ops)
            second = ts[1] if packed else ~ts[0]
            return (np.asarray(_combine(boolop, ts[0], ops), dtype=bool),
                    np.asarray(_combine(boolop, second, ops), dtype=bool))
    return run


compute, core = entry("compare", plan, doc="""Run a setp, set or selp form on bit patterns
(``.pred`` operands as booleans or 0/1; a setp result is 0 or 1):

    >>> compute("setp.lt.f32", 0x3F800000, 0x7FC00000), compute("setp.ltu.f32", 0x3F800000, 0x7FC00000)
    (0, 1)
    >>> hex(compute("set.gt.u32.s32", 1, -1)), compute("selp.b32", 7, 9, 0)
    ('0xffffffff', 9)
""")
