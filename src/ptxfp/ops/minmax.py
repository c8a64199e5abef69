"""min, max, neg and abs on the half types, bit-exact: the one place their arithmetic lives.

The forms are the rows of ``isa/minmax.py`` (PTX ISA 9.7.4.5-9.7.4.8); every rule below is
cited in docs/semantics.md ("min, max, neg, abs").  Nothing here rounds: a result is one of the
operands (possibly with its sign changed), a flushed zero, or the canonical NaN, so the lanes
are integer operations on the 16-bit patterns (vectorised by LLVM, 16 or 32 lanes per vector).

min/max (per lane; .f16x2/.bf16x2 lane by lane, lane 0 in bits 15:0), following the manual's
semantics block:

1. ``.ftz`` (f16 only): a subnormal input is a zero of its sign;
2. ``.xorsign.abs``: the result's sign is the XOR of the two input signs (taken before
   ``.abs``), and the inputs are compared by magnitude;
3. both inputs NaN -> canonical NaN; with ``.NaN`` either input NaN -> canonical NaN;
   otherwise one NaN input -> the other input;
4. otherwise the smaller (min) / larger (max) input, -0.0 below +0.0;
5. ``.xorsign``: the sign bit of a non-NaN result is set to the XOR (a NaN result keeps the
   canonical NaN: "the .xorsign and .abs modifiers will be ignored").

neg/abs: ``.ftz`` flushes a subnormal input to a zero of its sign, then the sign bit is flipped
(neg) or cleared (abs); a NaN input gives ``policy.negabs_nan``'s result (the manual: an
unspecified NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .. import policy
from ..core._jit import jit_cached, split
from ..errors import SpellingError
from ..core.operands import (Operand, broadcast, check_count, check_out, check_typed_out, deliver,
                             read_operand, unalias)
from ..isa.spelling import Instruction, parse

__all__ = ["compute", "core", "OPS"]

OP_MIN, OP_MAX, OP_NEG, OP_ABS = 0, 1, 2, 3
OPS = {"min": OP_MIN, "max": OP_MAX, "neg": OP_NEG, "abs": OP_ABS}
#: exponent field of each lane format (its NaNs are the magnitudes above it)
_EXP_MASK = {"f16": 0x7C00, "bf16": 0x7F80}


@njit(inline="always")
def _flush(h, EXP):  # type: ignore[no-untyped-def]
    """``h`` with a subnormal (exponent field 0) replaced by the zero of its sign."""
    return (h & 0x8000) if (h & EXP) == 0 else h


@njit(inline="always")
def _key(h):  # type: ignore[no-untyped-def]
    """An integer in the order of the non-NaN values: -0.0 just below +0.0."""
    m = h & 0x7FFF
    return m if h < 0x8000 else -m - 1


@njit(inline="always")
def lane(a, b, OP, EXP, ftz, nan_mode, xorsign, nan_bits, canon_negabs):  # type: ignore[no-untyped-def]  # noqa: E501
    """One 16-bit lane of min/max (a, b) or neg/abs (a)."""
    a = np.int32(a)
    if ftz:
        a = _flush(a, EXP)
    a_nan = (a & 0x7FFF) > EXP
    if OP == OP_NEG or OP == OP_ABS:
        r = (a ^ 0x8000) if OP == OP_NEG else (a & 0x7FFF)
        return nan_bits if (canon_negabs and a_nan) else r
    b = np.int32(b)
    if ftz:
        b = _flush(b, EXP)
    b_nan = (b & 0x7FFF) > EXP
    xs = (a ^ b) & 0x8000
    if xorsign:
        a = a & 0x7FFF
        b = b & 0x7FFF
    ka = _key(a)
    kb = _key(b)
    r = a if ((ka > kb) if OP == OP_MAX else (ka < kb)) else b
    r = b if a_nan else r
    r = a if b_nan else r
    is_nan = (a_nan & b_nan) | (nan_mode & (a_nan | b_nan))
    if xorsign:
        r = (r & 0x7FFF) | xs
    return nan_bits if is_nan else r


_kernels: dict[tuple[Any, ...], Any] = {}


def kernel_for(key: tuple[Any, ...]) -> Any:
    """The compiled array kernel of one form: key = (OP, EXP, ftz, NaN, xorsign, nan bits,
    canonical neg/abs NaN)."""
    k = _kernels.get(key)
    if k is None:
        OP, EXP, FTZ, NAN, XOR, NAN_BITS, CANON = key

        def kernel(a, b, out, start, stop):  # type: ignore[no-untyped-def]
            a = a[start:stop]
            b = b[start:stop]
            o = out[start:stop]
            for i in range(o.size):
                o[i] = lane(a[i], b[i], OP, EXP, FTZ, NAN, XOR, NAN_BITS, CANON)

        k = _kernels[key] = jit_cached(kernel, ("minmax",) + key, nogil=True)
    return k


#: (the spelling as written, id(pol)) -> (pol, key): the policy read once per form and policy
_key_memo: dict[tuple[str, int], tuple[Any, tuple[Any, ...]]] = {}


def _key_of(ins: Instruction, pol: policy.Policy) -> tuple[Any, ...]:
    memo = (ins.spelling, id(pol))
    hit = _key_memo.get(memo)
    if hit is not None and hit[0] is pol:
        return hit[1]
    key = _make_key(ins, pol)
    if len(_key_memo) >= 4096:
        _key_memo.clear()
    _key_memo[memo] = (pol, key)
    return key


def _make_key(ins: Instruction, pol: policy.Policy) -> tuple[Any, ...]:
    lane_fmt = ins.lane_format
    sp = str(ins)                        # the canonical spelling: per-form policy entries
    return (OPS[ins.opcode], _EXP_MASK[lane_fmt], ins.ftz, "NaN" in ins.modifiers,
            "xorsign" in ins.modifiers, pol.canonical_nan(lane_fmt, sp),
            pol.value("negabs_nan", sp) == policy.NEGABS_CANONICAL)


def _parse(spelling: str | Instruction) -> Instruction:
    ins = spelling if isinstance(spelling, Instruction) else parse(spelling)
    if ins.family != "minmax":
        raise SpellingError(f"'{ins.spelling}' is a {ins.family} spelling: run it with "
                            f"ptxfp.compute", spelling=ins.spelling, token=ins.opcode,
                            rule="wrong-entry-point")
    return ins


def _run(k: Any, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any], n: int) -> None:
    split(lambda start, stop: k(a, b, out, start, stop), n)


def compute(spelling: str | Instruction, *operands: Operand, out: Any = None) -> Any:
    """Run a min/max/neg/abs form on bit patterns or typed float arrays (as ``execute``:
    operands in PTX order, broadcast together; a Python int back when every operand is an
    int, an array otherwise, typed when an operand is typed).

        >>> compute("min.f16", 0x8000, 0x0000), compute("max.NaN.bf16", 0x3F80, 0x7FC0)
        (32768, 32767)
        >>> hex(compute("min.xorsign.abs.f16", 0xC000, 0x3C00))
        '0xbc00'
    """
    ins = _parse(spelling)
    names, fmts = ins.operand_names, ins.operand_formats
    check_count(ins.spelling, names, operands)
    width = ins.result_width
    arrays, typed = [], False
    for x, f, nm in zip(operands, fmts, names):
        bits, t = read_operand(x, f, f"operand {nm} of '{ins.spelling}' (.{f})", width)
        arrays.append(bits)
        typed = typed or t
    flat, shape, n, scalar = broadcast(ins.spelling, names, arrays)
    a = flat[0]
    b = flat[1] if len(flat) > 1 else flat[0]
    out_dtype = np.dtype(f"uint{width}")
    if out is None:
        dst = np.empty(n, out_dtype)
    else:
        dst = (check_typed_out(ins.spelling, out, ins.dtype, shape) if typed
               else check_out(ins.spelling, out, out_dtype, shape))
        a, b = unalias([a, b], dst)
    if n:
        _lanes(ins, a, b, dst, n)
    return deliver(dst, shape, out, scalar, ins.dtype if typed else None)


def _lanes(ins: Instruction, a: NDArray[Any], b: NDArray[Any], dst: NDArray[Any],
           n: int) -> None:
    """Fill ``dst`` from the checked 1-D operands (packed forms as their 16-bit lanes)."""
    k = kernel_for(_key_of(ins, policy.current()))
    if ins.lanes == 2:
        a16, b16, o16 = (np.ascontiguousarray(x).view(np.uint16) for x in (a, b, dst))
        _run(k, a16, b16, o16, 2 * n)
    else:
        _run(k, a, b, dst, n)


def core(ins: Instruction) -> Any:
    """``fn(ops, n) -> bits``: the min/max/neg/abs form ``ins`` on operands that are checked
    already (1-D, C-contiguous, of the operands' dtypes, ``n`` elements, in PTX order),
    without compute's operand checks (the interpreter's path)."""
    ins = _parse(ins)
    out_dtype = np.dtype(f"uint{ins.result_width}")

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        dst = np.empty(n, out_dtype)
        if n:
            _lanes(ins, ops[0], ops[1] if len(ops) > 1 else ops[0], dst, n)
        return dst
    return run
