"""``cvt`` between .f32 and the half formats, bit-exact: ``convert(spelling, *operands)``.

The forms, their spellings and their requirements are the rows of the cvt table (isa_cvt.py,
PTX ISA 9.7.9.21 as ptxas 13.0 decides it); this module parses a spelling against that table
(``parse_cvt``) and computes the executable forms:

- narrowing ``cvt.rnd{.ftz}{.sat}{.relu}{.satfinite}.{f16,bf16}.f32 d, a``
- packed ``cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: a goes to the
  **upper** half d[31:16], b to the lower half d[15:0] (manual, cvt semantics)
- widening ``cvt{.ftz}{.sat}.f32.f16 d, a`` and ``cvt{.rnd}{.ftz}.f32.bf16 d, a`` (exact)

The stochastic-rounding rows (``cvt.rs...``) are checked by ``ptxfp.check`` and not computed.
The rules, with their sources, are in docs/semantics.md ("cvt"); in short:

- one rounding of the exact f32 value into the destination (``rounding.round_pack``), IEEE
  overflow per mode, subnormal results kept;
- ``.ftz`` "applies only to single precision (.f32) inputs and results" (manual): narrowing
  flushes a subnormal f32 input to a zero of its sign, f16/bf16 results are not flushed; widening
  .bf16 flushes a bf16 subnormal (it is an f32 subnormal result); widening .f16 is unchanged
  (every f16 is an f32 normal or zero);
- ``.sat`` (f16 and the f32 result of f32.f16 only): clamp to [0.0, 1.0], NaN -> +0.0
  (-0.0 per ``policy.sat_minus_zero_to_plus``);
- ``.relu``: negative -> +0.0, NaN -> canonical NaN (-0.0 per ``policy.relu_minus_zero_to_plus``);
- ``.satfinite``: NaN -> NaN (the canonical NaN), |x| > MAX_NORM (infinities included) ->
  sign-preserved MAX_NORM. Since rounding is monotonic this is "an overflowed or infinite
  rounded result becomes the largest finite of its sign";
- NaN results are the canonical NaN of the destination format (``policy.canonical_nan_f16``
  or ``canonical_nan_bf16``); a widened NaN follows ``policy.widen_nan`` ("canonical" ->
  ``canonical_nan_f32``, "payload" -> sign and fraction shifted into place, "quiet" -> the
  same with the quiet bit set, IEEE 754's conversion; policy.py defines the three).

Like every other form, the work is done on bit patterns in Numba kernels that call the one
rounding core; no NumPy float cast rounds anything here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, overload

import numpy as np
from numba import njit
from numpy.typing import NDArray

from . import isa, kernels, nvidia, policy
from .arith import decode
from .errors import SpellingError
from .formats import BF16, F16, F32
from .rounding import MODES, RN, TINY_AFTER, round_pack
if TYPE_CHECKING:
    from .execute import Operand
from .isa_cvt import (MODIFIER_ORDER, OTHER_TYPES, REPEATABLE, ROUNDING_TOKENS, ROUNDINGS,
                      TABLE, TYPES, CvtRow, canonical_spelling, canonical_spellings, forms)

__all__ = ["convert", "parse_cvt", "CvtInstruction", "CvtRow", "TABLE", "canonical_spellings",
           "canonical_spelling", "forms"]

_LANE = {"f16": F16, "f16x2": F16, "bf16": BF16, "bf16x2": BF16, "f32": F32}


@dataclass(frozen=True)
class CvtInstruction(isa.Requirement):
    """One parsed cvt spelling, with everything the table says about it."""
    dtype: str
    atype: str
    rounding: str | None              #: 'rn'/'rz'/'rm'/'rp', or None (widening, none written)
    rounding_explicit: bool
    ftz: bool
    sat: bool
    relu: bool
    satfinite: bool
    min_ptx: tuple[int, int]
    min_sm: int
    spelling: str = field(compare=False)
    row: CvtRow = field(compare=False, repr=False)
    opcode: str = "cvt"

    @property
    def types(self) -> tuple[str, str]:
        return (self.dtype, self.atype)

    @property
    def narrowing(self) -> bool:
        return self.atype == "f32"

    @property
    def lanes(self) -> int:
        return 2 if self.dtype.endswith("x2") else 1

    @property
    def result_format(self) -> str:
        return _LANE[self.dtype].name

    @property
    def result_type(self) -> str:
        return self.dtype

    @property
    def modifiers(self) -> frozenset[str]:
        return frozenset(m for m in MODIFIER_ORDER if getattr(self, m))

    @property
    def operand_names(self) -> tuple[str, ...]:
        """Source operand names in PTX order (destination excluded)."""
        return ("a", "b") if self.lanes == 2 else ("a",)

    @property
    def operand_formats(self) -> tuple[str, ...]:
        return ("f32",) * len(self.operand_names) if self.narrowing else (self.atype,)

    @property
    def result_width(self) -> int:
        return 16 if self.dtype in ("f16", "bf16") else 32

    def __str__(self) -> str:
        return canonical_spelling(self.rounding if self.rounding_explicit else None,
                                  self.modifiers, self.types)


def _fail(spelling: str, token: str | None, rule: str, message: str) -> NoReturn:
    raise SpellingError(f"{message} in '{spelling}'", spelling=spelling, token=token, rule=rule)


def _dotted(names: Iterable[str]) -> str:
    return ", ".join("." + n for n in names)


def parse_cvt(spelling: str) -> CvtInstruction:
    """Parse and validate a cvt spelling against the cvt table (isa_cvt.py); raise
    SpellingError naming the bad token.

    As in ptxas, modifiers may come in any order and ``.sat``/``.relu``/``.satfinite`` may
    repeat (``cvt.rn.f16.f32.relu``, ``cvt.satfinite.rn.f16.f32``); a second ``.ftz`` or a second
    rounding modifier is an error; the two type tokens are destination then source.
    """
    if not isinstance(spelling, str):
        raise SpellingError("an instruction spelling must be a string, got "
                            f"{type(spelling).__name__}", rule="syntax")
    text = spelling.strip()
    tokens = text.split(".")
    if not text or any(t == "" for t in tokens):
        _fail(text, None, "syntax", "empty token (misplaced '.')")
    if tokens[0] != "cvt":
        _fail(text, tokens[0], "unknown-instruction", f"'{tokens[0]}' is not a cvt spelling")
    roundings: list[str] = []
    mods: set[str] = set()
    types: list[str] = []
    for t in tokens[1:]:
        if t in ROUNDING_TOKENS:
            if roundings:
                _fail(text, "." + t, "rounding-conflict",
                      f"multiple rounding modifiers specified ('.{roundings[0]}' and '.{t}')")
            roundings.append(t)
        elif t in MODIFIER_ORDER:
            if t in mods and t not in REPEATABLE:
                _fail(text, "." + t, "duplicate-modifier", f"duplicate .{t} modifier")
            mods.add(t)
        elif t in TYPES or t in OTHER_TYPES:
            types.append(t)
        else:
            _fail(text, "." + t, "unknown-modifier", f"unknown modifier '.{t}' for 'cvt'")
    if len(types) != 2:
        _fail(text, None, "missing-type" if len(types) < 2 else "illegal-type",
              "cvt needs two types, destination then source"
              + (f" (got {_dotted(types)})" if types else ""))
    tname = "." + ".".join(types)
    rows = [r for r in TABLE if r.types == tuple(types)]
    if not rows:
        other = [t for t in types if t in OTHER_TYPES]
        if other or types[0] == types[1]:
            _fail(text, tname, "not-modeled",
                  f"'cvt{tname}' is not modeled by ptxfp (it models cvt between .f32 and "
                  ".f16/.bf16/.f16x2/.bf16x2)")
        ok = sorted("." + ".".join(r.types) for r in TABLE)
        _fail(text, tname, "illegal-type",
              f"illegal types '{tname}' for 'cvt' (modeled: {', '.join(dict.fromkeys(ok))})")
    rnd = roundings[0] if roundings else None
    if rnd is not None and not any(rnd in r.roundings for r in rows):
        allowed = sorted({m for r in rows if r.executable for m in r.roundings},
                         key=ROUNDINGS.index)
        _fail(text, "." + rnd, "illegal-rounding",
              f"illegal rounding modifier '.{rnd}' for 'cvt{tname}'"
              + (f" (allowed: {_dotted(allowed)})" if allowed
                 else " (an exact widening takes none)"))
    allowed_mods: set[str] = set().union(*(r.modifiers for r in rows))
    for m in sorted(mods, key=MODIFIER_ORDER.index):
        if m not in allowed_mods:
            _fail(text, "." + m, "illegal-modifier",
                  f".{m} is not allowed with 'cvt{tname}'"
                  + (f" (allowed: {_dotted(sorted(allowed_mods, key=MODIFIER_ORDER.index))})"
                     if allowed_mods else ""))
    by_mods = [r for r in rows if mods <= r.modifiers and r.required <= mods]
    if not by_mods:
        _fail(text, _dotted(sorted(mods, key=MODIFIER_ORDER.index)), "illegal-combination",
              f"modifiers {_dotted(sorted(mods, key=MODIFIER_ORDER.index))} cannot be combined "
              f"on 'cvt{tname}'")
    fits = [r for r in by_mods if rnd is None or rnd in r.roundings]
    if not fits:
        allowed = sorted({m for r in by_mods for m in r.roundings}, key=ROUNDINGS.index)
        _fail(text, f".{rnd}", "illegal-rounding",
              f"illegal rounding modifier '.{rnd}' for 'cvt{tname}' with "
              f"{_dotted(sorted(mods, key=MODIFIER_ORDER.index))} (allowed: {_dotted(allowed)})")
    # Several rows can fit (cvt.rn.f16.f32 is in the rows with and without .ftz): take the
    # least demanding.
    row = min(fits, key=lambda r: (r.min_ptx, r.min_sm))
    if rnd is None and row.rounding_required:
        _fail(text, None, "rounding-required",
              f"rounding modifier required for 'cvt{tname}' (one of {_dotted(row.roundings)})")
    if not row.executable:
        _fail(text, "." + rnd if rnd else tname, "not-modeled",
              f"'{canonical_spelling(rnd, mods, row.types)}' is legal PTX (ptxfp.check knows it, "
              f"{row.min_ptx[0]}.{row.min_ptx[1]}, {', '.join(row.targets) or 'sm_%d' % row.min_sm}) "
              "but ptxfp does not compute it"
              + (" (stochastic rounding takes random bits)" if rnd == "rs" else ""))
    return CvtInstruction(
        dtype=types[0], atype=types[1], rounding=rnd, rounding_explicit=rnd is not None,
        ftz="ftz" in mods, sat="sat" in mods, relu="relu" in mods,
        satfinite="satfinite" in mods, min_ptx=row.min_ptx, min_sm=row.min_sm, spelling=text,
        row=row)


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


def _make_kernels(SOURCE_KEY: int) -> dict[str, Any]:
    """The cvt array kernels, disk-cached under the checksum of their inlined callees and run
    in the default floating-point environment, like the arithmetic kernels (kernels.py)."""

    def narrow_kernel(a, b, out, start, stop, lanes, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat,  # type: ignore[no-untyped-def]  # noqa: E501
                      relu, satfinite, sat_mz, relu_mz, nan_bits):
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return
        env = kernels._fpenv_enter()
        for i in range(start, stop):
            r = _narrow(np.int64(a[i]), P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat, relu,
                        satfinite, sat_mz, relu_mz, nan_bits)
            if lanes == 2:
                lo = _narrow(np.int64(b[i]), P, EMIN, EMAX, WIDTH, ONE, mode, ftz, sat, relu,
                             satfinite, sat_mz, relu_mz, nan_bits)
                r = (r << 16) | lo                  # a -> d[31:16], b -> d[15:0]
            out[i] = r
        kernels._fpenv_leave(env)  # type: ignore[call-arg]

    def widen_kernel(a, b, out, start, stop, AE, AM, ftz, sat, sat_mz, nan_mode, nan_bits):  # type: ignore[no-untyped-def]  # noqa: E501
        # nan_mode: the index of policy.widen_nan in policy.WIDEN_NAN (0 canonical, 1 payload,
        # 2 quiet)
        if SOURCE_KEY < 0:
            return
        env = kernels._fpenv_enter()
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
        kernels._fpenv_leave(env)  # type: ignore[call-arg]

    return {"narrow": narrow_kernel, "widen": widen_kernel}


#: (kind, argument types) -> its compiled kernel.  Each signature gets a disk-cache name of its
#: own (kernels.jit_cached): one cached name with two signatures (uint16 and uint32 results)
#: shares one index, the race jit_cached exists to prevent.
_compiled: dict[tuple[str, tuple[str, ...]], Any] = {}


def _kernel(kind: str, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any]) -> Any:
    import numba
    types = tuple(str(numba.typeof(x)) for x in (a, b, out))  # type: ignore[no-untyped-call]
    key = (kind, types)
    k = _compiled.get(key)
    if k is None:
        fn = _make_kernels(kernels._SOURCE_KEY)[kind]       # a fresh closure per signature
        k = _compiled[key] = kernels.jit_cached(fn, ("cvt-" + kind, types, kernels._SOURCE_KEY),
                                                nogil=True)
    return k


def _run(kind: str, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any],
         args: tuple[Any, ...]) -> NDArray[Any]:
    kernel = _kernel(kind, a, b, out)
    kernels.split(lambda start, stop: kernel(a, b, out, start, stop, *args), out.size)
    return out


def _width(fmt: str) -> int:
    return 16 if fmt in ("f16", "bf16") else 32


@overload
def convert(spelling: str | CvtInstruction, *operands: int, out: None = None) -> int: ...


@overload
def convert(spelling: str | CvtInstruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any: ...


def convert(spelling: str | CvtInstruction, *operands: Operand,
            out: NDArray[Any] | None = None) -> Any:
    """Run one cvt form on bit patterns or on typed float arrays.

    ``spelling`` is a cvt spelling (``"cvt.rn.relu.bf16x2.f32"``) or a parsed CvtInstruction.
    ``operands`` are the source operands in PTX order, destination left out: ``(a,)`` for the
    scalar forms, ``(a, b)`` for .f16x2/.bf16x2 (a lands in d[31:16], b in d[15:0]), broadcast
    together.  As in ``ptxfp.execute``, each is bits (Python ints or integer arrays: 32 bits
    for .f32 sources, 16 for .f16/.bf16 sources) or typed floats of the source's dtype
    (``np.float32`` for .f32, ``np.float16``, ``ml_dtypes.bfloat16``).  Returns uint16
    (.f16/.bf16) or uint32 arrays, or a Python int when every operand is a scalar; when any
    operand is typed, the result is typed: an array of the destination's float dtype (for
    .f16x2/.bf16x2 of shape (..., 2), lane 0 first, so ``[b, a]`` converted), or a NumPy
    scalar.  ``out``: an array to write the result into, as in ``ptxfp.execute``; it is
    returned.

        >>> import numpy as np
        >>> convert("cvt.rn.bf16.f32", np.array([1.0, 1 + 2**-8, 3.4e38], np.float32))
        array([1, 1, inf], dtype=bfloat16)
    """
    from .execute import (broadcast, check_count, check_out, check_typed_out, read_operand,
                          typed_result, unalias)
    ins = spelling if isinstance(spelling, CvtInstruction) else parse_cvt(spelling)
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
    pol = policy.current()
    if a.size:
        if ins.narrowing:
            f = _LANE[ins.dtype]
            args: tuple[Any, ...] = (ins.lanes, f.precision, f.emin, f.emax, f.width, f.one,
                    MODES[ins.rounding or "rn"], ins.ftz, ins.sat, ins.relu, ins.satfinite,
                    pol.sat_minus_zero_to_plus, pol.relu_minus_zero_to_plus,
                    pol.canonical_nan(ins.dtype))
            _run("narrow", a, b, out, args)
        else:
            f = _LANE[ins.atype]
            # .ftz touches only f32 subnormal results: bf16 subnormals; every f16 is an f32
            # normal (or zero), so cvt.ftz.f32.f16 equals cvt.f32.f16.
            args = (f.exp_bits, f.man_bits, ins.ftz and f is BF16, ins.sat,
                    pol.sat_minus_zero_to_plus,
                    policy.WIDEN_NAN.index(pol.widen_nan), pol.canonical_nan_f32)
            _run("widen", a, b, out, args)
    if given is not None:
        return given
    out = out.reshape(shape)
    if typed:
        return typed_result(out, ins.dtype, scalar)
    return int(out) if scalar else out
