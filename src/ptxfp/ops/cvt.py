"""``cvt`` between .f32 and the half formats, bit-exact: ``convert(spelling, *operands)``.

The forms, their spellings and their requirements are the cvt rows of the instruction table
(isa/cvt.py, PTX ISA 9.7.9.21 as ptxas 13.0 decides it), parsed by the one spelling parser
(``ptxfp.parse``; ``parse_cvt`` insists on a cvt); this module computes the executable forms:

- narrowing ``cvt.rnd{.ftz}{.sat}{.relu}{.satfinite}.{f16,bf16}.f32 d, a``
- packed ``cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: a goes to the
  **upper** half d[31:16], b to the lower half d[15:0] (manual, cvt semantics)
- widening ``cvt{.ftz}{.sat}.f32.f16 d, a`` and ``cvt{.rnd}{.ftz}.f32.bf16 d, a`` (exact)

The stochastic-rounding rows (``cvt.rs...``) are checked by ``ptxfp.check`` and not computed.
The rules, with their sources, are in docs/semantics.md ("cvt"); in short:

- one rounding of the exact f32 value into the destination (``rounding.round_pack``), IEEE
  overflow per mode, subnormal results kept;
- ``.ftz`` "applies only to single precision (.f32) inputs and results" (manual): narrowing
  flushes a subnormal f32 input to a zero of its sign (per ``policy.cvt_ftz_input``: by default
  not on ``cvt.*.ftz{.sat}.f16.f32``, which an H100 computes as without .ftz), f16/bf16 results are not flushed; widening
  .bf16 flushes a bf16 subnormal (it is an f32 subnormal result); widening .f16 is unchanged
  (every f16 is an f32 normal or zero);
- ``.sat`` (f16 and the f32 result of f32.f16 only): clamp to [0.0, 1.0], NaN -> +0.0
  (-0.0 per ``policy.sat_minus_zero_to_plus``);
- ``.relu``: negative -> +0.0, NaN -> canonical NaN (-0.0 per ``policy.relu_minus_zero_to_plus``);
- ``.satfinite``: NaN -> NaN (the canonical NaN), |x| > MAX_NORM (infinities included) ->
  sign-preserved MAX_NORM. Since rounding is monotonic this is "an overflowed or infinite
  rounded result becomes the largest finite of its sign";
- NaN results are the canonical NaN of the destination format (``policy.canonical_nan_f16``
  or ``canonical_nan_bf16``); a widened NaN follows ``policy.widen_nan`` for the form (by
  default "payload" on ``cvt{.rnd}.f32.bf16``, "canonical" elsewhere; "canonical" ->
  ``canonical_nan_f32``, "payload" -> sign and fraction shifted into place, "quiet" -> the
  same with the quiet bit set, IEEE 754's conversion; policy.py defines the three).

Like every other form, the work is done on bit patterns in Numba kernels that call the one
rounding core; no NumPy float cast rounds anything here.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..core import nvidia
from .. import policy
from . import smallfloat
from ..core._jit import fpenv_enter, fpenv_leave, jit_cached, split
from ..core.exact import decode
from ..errors import SpellingError
from ..core.formats import BF16, F32, lane_of
from ..isa.cvt import canonical_spelling, canonical_spellings, forms
from ..core.operands import (Operand, broadcast, check_count, check_out, check_typed_out, deliver,
                             natural_pairs, read_operand, unalias)
from ..core.rounding import MODES, RN, TINY_AFTER, round_pack
from ..isa.spelling import Instruction, parse

__all__ = ["convert", "core", "parse_cvt", "canonical_spellings", "canonical_spelling", "forms"]


def parse_cvt(spelling: str) -> Instruction:
    """``ptxfp.parse`` for a spelling that must be a cvt (SpellingError otherwise).

    As in ptxas, modifiers may come in any order and ``.sat``/``.relu``/``.satfinite`` may
    repeat (``cvt.rn.f16.f32.relu``, ``cvt.satfinite.rn.f16.f32``); a second ``.ftz`` or a second
    rounding modifier is an error; the two type tokens are destination then source.
    """
    if isinstance(spelling, str) and spelling.strip().split(".")[0] != "cvt":
        text = spelling.strip()
        raise SpellingError(f"'{text.split('.')[0]}' is not a cvt spelling in '{text}'",
                            spelling=text, token=text.split(".")[0], rule="unknown-instruction")
    return parse(spelling)


# --- kernels ----------------------------------------------------------------------------------

_F32_ONE = F32.one


@njit(inline="always")
def _narrow(a, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat, relu, satfinite, sat_mz, relu_mz,  # type: ignore[no-untyped-def]  # noqa: E501
            nan_bits):
    """One f32 bit pattern to an f16/bf16 bit pattern."""
    x = decode(a, 8, 23, ftz)                       # .ftz: f32 subnormal input -> signed zero
    mag, sign, is_nan = round_pack(x, P, EMIN, EMAX, mode, TINY_AFTER)
    if satfinite:
        inf_bits = np.int64(EMAX - EMIN + 2) << (P - 1)
        mag = inf_bits - 1 if mag >= inf_bits else mag
    return nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, False, sat, relu, sat_mz, relu_mz,
                         nan_bits)


def _make_kernels() -> dict[str, Any]:
    """Fresh closures of the cvt array kernels (one per compiled signature, see ``_kernel``),
    run in the default floating-point environment like the arithmetic kernels."""

    def narrow_kernel(a, b, out, start, stop, lanes, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat,  # type: ignore[no-untyped-def]  # noqa: E501
                      relu, satfinite, sat_mz, relu_mz, nan_bits):
        env = fpenv_enter()
        for i in range(start, stop):
            r = _narrow(np.int64(a[i]), P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat, relu,
                        satfinite, sat_mz, relu_mz, nan_bits)
            if lanes == 2:
                lo = _narrow(np.int64(b[i]), P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat, relu,
                             satfinite, sat_mz, relu_mz, nan_bits)
                r = (r << 16) | lo                  # a -> d[31:16], b -> d[15:0]
            out[i] = r
        fpenv_leave(env)  # type: ignore[call-arg]

    def widen_kernel(a, b, out, start, stop, AE, AM, ftz, sat, sat_mz, nan_mode, nan_bits):  # type: ignore[no-untyped-def]  # noqa: E501
        # nan_mode: the index of policy.widen_nan in policy.WIDEN_NAN (0 canonical, 1 payload,
        # 2 quiet)
        env = fpenv_enter()
        for i in range(start, stop):
            h = np.int64(a[i])
            x = decode(h, AE, AM, ftz)              # exact; .ftz flushes bf16 subnormals
            mag, sign, is_nan = round_pack(x, 24, -126, 127, RN, TINY_AFTER)
            bits = nvidia.finish(mag, sign, is_nan, 24, 32, _F32_ONE, False, sat, False, sat_mz,
                                 False, nan_bits)
            if nan_mode != 0 and is_nan and not sat:
                s = (h >> (AE + AM)) & 1
                bits = (s << 31) | 0x7F800000 | ((h & ((np.int64(1) << AM) - 1)) << (23 - AM))
                if nan_mode == 2:
                    bits |= 0x00400000              # the quiet bit (f32 fraction bit 22)
            out[i] = bits
        fpenv_leave(env)  # type: ignore[call-arg]

    return {"narrow": narrow_kernel, "widen": widen_kernel}


#: (kind, argument types) -> its compiled kernel.  Each signature gets a disk-cache name of its
#: own (_jit.jit_cached): one cached name with two signatures (uint16 and uint32 results)
#: shares one index, the race jit_cached exists to prevent.
_compiled: dict[tuple[str, tuple[str, ...]], Any] = {}


#: (kind, each array's dtype, ndim and flags) -> its kernel: numba.typeof costs several
#: microseconds an array, more than converting one element
_by_layout: dict[tuple[Any, ...], Any] = {}


def _kernel(kind: str, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any]) -> Any:
    fast = (kind, a.dtype, a.ndim, a.flags.num, b.dtype, b.ndim, b.flags.num, out.dtype,
            out.ndim, out.flags.num)
    k = _by_layout.get(fast)
    if k is not None:
        return k
    import numba
    types = tuple(str(numba.typeof(x)) for x in (a, b, out))  # type: ignore[no-untyped-call]
    key = (kind, types)
    k = _compiled.get(key)
    if k is None:
        fn = _make_kernels()[kind]                          # a fresh closure per signature
        k = _compiled[key] = jit_cached(fn, ("cvt-" + kind, types), nogil=True)
    if len(_by_layout) < 4096:
        _by_layout[fast] = k
    return k


def _run(kind: str, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any],
         args: tuple[Any, ...]) -> NDArray[Any]:
    kernel = _kernel(kind, a, b, out)
    split(lambda start, stop: kernel(a, b, out, start, stop, *args), out.size)
    return out


@overload
def convert(spelling: str | Instruction, *operands: int, out: None = None) -> int: ...


@overload
def convert(spelling: str | Instruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any: ...


def convert(spelling: str | Instruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any:
    """Run one cvt form on bit patterns or on typed float arrays.

    ``spelling`` is a cvt spelling (``"cvt.rn.relu.bf16x2.f32"``) or a parsed Instruction.
    ``operands`` are the source operands in PTX order, destination left out: ``(a,)`` for the
    scalar forms, ``(a, b)`` for .f16x2/.bf16x2 (a lands in d[31:16], b in d[15:0]), broadcast
    together.  As in ``ptxfp.execute``, each is bits (Python ints or integer arrays: 32 bits
    for .f32 sources, 16 for .f16/.bf16 sources) or typed floats of the source's dtype
    (``np.float32`` for .f32, ``np.float16``, ``ml_dtypes.bfloat16``).  Returns uint16
    (.f16/.bf16) or uint32 arrays, or a Python int when every operand is a scalar; when any
    operand is typed, the result is typed: an array of the destination's float dtype (for
    .f16x2/.bf16x2 of shape (..., 2), lane 0 first, so ``[b, a]`` converted), or a NumPy
    scalar.  The element-wise view of the pair-making forms (sources a, b): one typed operand
    ``x`` of shape (..., 2) gives the pairs in their natural order, ``x[..., 0]`` converted
    into element 0 of the result (``b = x[..., 0]``, ``a = x[..., 1]``).  ``out``: an array to
    write the result into, as in ``ptxfp.execute``; it is returned.

        >>> import numpy as np
        >>> convert("cvt.rn.bf16.f32", np.array([1.0, 1 + 2**-8, 3.4e38], np.float32))
        array([1, 1, inf], dtype=bfloat16)
    """
    ins = spelling if isinstance(spelling, Instruction) else parse_cvt(spelling)
    if ins.family == "cvtx":                  # cvt with integers or .f64: the same answer
        from . import cvtx                    # as ptxfp.compute gives
        return cvtx.compute(ins, *operands, out=out)
    operands = natural_pairs(ins.spelling, ins.operand_names, operands)   # x (..., 2): pairs
    if smallfloat.handles(ins):               # fp8/fp6/fp4/ue8m0 and .rs: smallfloat.py
        return smallfloat.convert(ins, *operands, out=out)
    names, fmts = ins.operand_names, ins.operand_formats
    check_count(ins.spelling, names, operands)
    arrays = []
    typed = False
    for x, n, fm in zip(operands, names, fmts):
        bits, t = read_operand(x, fm, f"operand {n} of '{ins.spelling}' (.{fm})")
        arrays.append(bits)
        typed = typed or t
    flat, shape, _, scalar = broadcast(ins.spelling, names, arrays)
    a = flat[0]
    b = flat[1] if len(flat) > 1 else a
    dtype = np.uint16 if ins.result_width == 16 else np.uint32
    given = out
    if given is not None:
        out = (check_typed_out(ins.spelling, given, ins.dtype, shape) if typed
               else check_out(ins.spelling, given, dtype, shape))
        a, b = unalias([a, b], out)
    else:
        out = np.empty(a.size, dtype)
    if a.size:
        kind, args = _args_for(ins, policy.current())
        _run(kind, a, b, out, args)
    return deliver(out, shape, given, scalar, ins.dtype if typed else None)


#: (the spelling as written, id(pol)) -> (pol, kind, args): _kernel_args once per form and
#: policy object (reading the policy per form costs more than a scalar conversion)
_args_memo: dict[tuple[str, int], tuple[Any, str, tuple[Any, ...]]] = {}


def _args_for(ins: Instruction, pol: policy.Policy) -> tuple[str, tuple[Any, ...]]:
    key = (ins.spelling, id(pol))
    hit = _args_memo.get(key)
    if hit is not None and hit[0] is pol:
        return hit[1], hit[2]
    kind, args = _kernel_args(ins, pol)
    if len(_args_memo) >= 4096:
        _args_memo.clear()
    _args_memo[key] = (pol, kind, args)
    return kind, args


def _kernel_args(ins: Instruction, pol: policy.Policy) -> tuple[str, tuple[Any, ...]]:
    """The kernel ('narrow' or 'widen') of a cvt form and its constant arguments."""
    sp = str(ins)                        # the canonical spelling: per-form policy entries
    if ins.narrowing:
        f = lane_of(ins.dtype)
        ftz = ins.ftz and pol.value("cvt_ftz_input", sp) == policy.CVT_FTZ_FLUSH
        return "narrow", (ins.lanes, f.precision, f.emin, f.emax, f.width, f.one,
                          MODES[ins.rounding or "rn"], ftz, ins.sat, ins.relu,
                          ins.satfinite, pol.value("sat_minus_zero_to_plus", sp),
                          pol.value("relu_minus_zero_to_plus", sp),
                          pol.canonical_nan(ins.dtype, sp))
    f = lane_of(ins.atype)
    # .ftz touches only f32 subnormal results: bf16 subnormals; every f16 is an f32
    # normal (or zero), so cvt.ftz.f32.f16 equals cvt.f32.f16.
    return "widen", (f.exp_bits, f.man_bits, ins.ftz and f is BF16, ins.sat,
                     pol.value("sat_minus_zero_to_plus", sp),
                     policy.WIDEN_NAN.index(pol.value("widen_nan", sp)),
                     pol.canonical_nan("f32", sp))


def core(ins: Instruction) -> Any:
    """``fn(ops, n) -> bits``: the cvt form ``ins`` on operands that are checked already
    (1-D, C-contiguous, of the dtypes of the operands' widths, ``n`` elements, in PTX order),
    without convert's operand checks (the interpreter's path); None for the forms of
    smallfloat.py."""
    if smallfloat.handles(ins):
        return None
    dtype = np.dtype(np.uint16 if ins.result_width == 16 else np.uint32)
    memo: list[Any] = [None]                 # (policy, kind, args) of the last call

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        a = ops[0]
        b = ops[1] if len(ops) > 1 else a
        out = np.empty(n, dtype)
        if n:
            pol = policy.current()
            last = memo[0]
            if last is None or last[0] is not pol:
                last = memo[0] = (pol, *_kernel_args(ins, pol))
            _run(last[1], a, b, out, last[2])
        return out
    return run
