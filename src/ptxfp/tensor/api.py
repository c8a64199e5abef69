"""``mma`` and ``matmul``: whole matrices through the tensor-core numerics of a target.

Operands are bit patterns (unsigned integer arrays) or typed floats (the element format's
NumPy/ml_dtypes dtype), A of shape (..., m, k), B (..., k, n), C (..., m, n), the leading
dimensions broadcast as in ``numpy.matmul``.  fp4/fp6 elements come one per array element
(the low bits of a uint8, or ml_dtypes' float4/float6 types), not packed.  The integer forms
take integer values.  The result is typed when any operand is typed, else bits.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

from ..core import types
from ..core._jit import threads
from ..errors import OperandError, PtxfpError, SpellingError
from ..isa.mma_form import MmaForm
from ..limits import check_bytes, guarded
from .. import policy as _policy
from .kernel import OUT_F16, OUT_F32, ZERO_FACTOR, fdpa_kernel, fma_rows, group_rows
from .decode import SPEC_NAN, decode, decode_values, scale_exponents
from .params import (ZERO_EXP_2026_01, MmaParams, TargetError, kind_of, params_for,
                     target_family)

__all__ = ["mma", "matmul", "resolve", "default_form"]

_DTYPES: dict[str, Any] = {
    "f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32, "f32": np.float32,
    "f64": np.float64, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
    "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn, "ue8m0": ml_dtypes.float8_e8m0fnu,
    "ue4m3": ml_dtypes.float8_e4m3fn,
}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_INT_RANGE = {"s8": (-128, 127), "u8": (0, 255), "s4": (-8, 7), "u4": (0, 15), "b1": (0, 1),
              "s32": (-(1 << 31), (1 << 31) - 1)}
#: element formats whose products are exact in binary32 with their terms (tensor/kernel.py)
_NARROW = frozenset({"f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"})
#: products at and above this many run over all threads (rows split between them)
PARALLEL_PRODUCTS = 1 << 24


def _fmt(name: str) -> types.FloatFormat:
    if name == "ue4m3":
        return types.FORMATS["e4m3"]
    return types.FORMATS[name]


def _bits_width(name: str) -> int:
    return 32 if name == "tf32" else (8 if name in ("ue4m3", "ue8m0") else _fmt(name).width)


def _container(width: int) -> int:
    return 8 if width <= 8 else (16 if width <= 16 else (32 if width <= 32 else 64))


def _read(x: object, tname: str, what: str) -> tuple[NDArray[Any], bool]:
    """Operand ``x`` of element type ``tname`` as unsigned bits, and whether it was typed."""
    if tname in _INT_RANGE:
        return _read_int(x, tname, what), False
    want = np.dtype(_DTYPES[tname])
    arr = x if isinstance(x, np.ndarray) else None
    if arr is None:
        if isinstance(x, (float, complex)) or (isinstance(x, (list, tuple)) and _has_float(x)):
            raise OperandError(f"{what}: Python floats are not operands; pass bit patterns or "
                               f"an array of dtype {want.name} (ptxfp never rounds an operand)")
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError, OverflowError) as e:
            raise OperandError(f"{what}: not an array of bits or {want.name} values "
                               f"({e})") from None
    width = _bits_width(tname)
    if arr.dtype == want:
        return arr.view(_UINT[want.itemsize * 8]), True
    if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise OperandError(f"{what}: dtype {arr.dtype} is not the operand's: .{tname} takes "
                           f"{want.name} values or unsigned bit patterns (ptxfp never rounds "
                           f"an operand)")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= (1 << width)):
        raise OperandError(f"{what}: bit patterns of .{tname} are {width}-bit unsigned "
                           f"integers; got a value outside [0, 2**{width})")
    return arr.astype(_UINT[_container(width)], copy=False), False


def _has_float(x: Any) -> bool:
    try:
        return np.asarray(x).dtype.kind in "fc"
    except (ValueError, TypeError):
        return False


def _read_int(x: object, tname: str, what: str) -> NDArray[np.int64]:
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, OverflowError) as e:
        raise OperandError(f"{what}: not an integer array ({e})") from None
    if arr.dtype.kind not in "iub":
        raise OperandError(f"{what}: the .{tname} operands are integer values; got dtype "
                           f"{arr.dtype}")
    lo, hi = _INT_RANGE[tname]
    if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
        raise OperandError(f"{what}: .{tname} values lie in [{lo}, {hi}]")
    return arr.astype(np.int64)


def resolve(instruction: object) -> MmaForm:
    """An MmaForm, or a spelling read by ``ptxfp.spelling.mma_form``."""
    if isinstance(instruction, MmaForm):
        return instruction
    if isinstance(instruction, str):
        from ..isa import spelling
        parse = getattr(spelling, "mma_form", None)
        if parse is None:
            raise SpellingError(f"{instruction!r}: matrix spellings are read by "
                                f"ptxfp.spelling.mma_form, which this build lacks; pass an "
                                f"MmaForm", spelling=instruction, rule="mma-spelling")
        form = parse(instruction)
        if not isinstance(form, MmaForm):
            raise SpellingError(f"{instruction!r} is not a matrix instruction",
                                spelling=instruction, rule="mma-spelling")
        return form
    raise PtxfpError(f"instruction: expected a spelling (str) or an MmaForm, got "
                     f"{type(instruction).__name__}")


#: the instruction a kernel on each target uses for each input type, when none is named
_DEFAULT_OPS = {"sm_70": "mma", "sm_75": "mma", "sm_80": "mma", "sm_89": "mma", "sm_90": "wgmma",
                "sm_100": "tcgen05.mma", "sm_120": "mma"}


class _Model:
    """What the policy's ``mma_model`` (and ``mma_f64_nan``) decide for one call."""

    def __init__(self, spelling: str) -> None:
        pol = _policy.current()
        model = pol.value("mma_model", spelling)
        self.v211 = model == _policy.MMA_MMASIM_211
        f64 = pol.value("mma_f64_nan", spelling)
        if f64 is None:
            f64 = _policy.MMA_F64_NAN_PAYLOAD if self.v211 else _policy.MMA_F64_NAN_CANONICAL
        self.f64_payload = f64 == _policy.MMA_F64_NAN_PAYLOAD
        self.nan64 = pol.canonical_nan("f64", spelling)

    def zero_factor(self) -> int:
        """The exponent decode gives a zero factor."""
        return ZERO_FACTOR if self.v211 else ZERO_EXP_2026_01

    def zero_term(self, p: MmaParams, out: str) -> int:
        """The exponent of a zero c (and of a zero product)."""
        return p.zero_exponent(out) if self.v211 else ZERO_EXP_2026_01


def default_form(atype: str, target: str, btype: str | None = None) -> MmaForm:
    """The matrix form a GEMM kernel on ``target`` issues for A of ``atype`` (and B of
    ``btype``): mma.sync m8n8k4 on sm_70 (f16), m16n8k8 on sm_75 (f16), m16n8k{16,8,32} on
    sm_80/sm_89/sm_120 (sm_120: kind::f8f6f4 for fp6/fp4), wgmma m64n256k{16,8,32} on sm_90,
    tcgen05.mma m128n256k{16,8,32} on sm_100; f32 accumulation."""
    fam = target_family(target)
    bt = btype or atype
    op = _DEFAULT_OPS[fam]
    if fam in ("sm_70", "sm_75"):
        if atype != "f16" or bt != "f16":
            raise TargetError(f"no tensor-core instruction on {target} takes .{atype} (only "
                              f".f16 before sm_80)")
        if fam == "sm_70":
            return MmaForm("mma", 8, 8, 4, "f16", "f16", "f32", "f32")
        return MmaForm("mma", 16, 8, 8, "f16", "f16", "f32", "f32")
    if atype == "f64":
        k = 4 if fam in ("sm_80", "sm_89") else 16
        return MmaForm("mma", 8 if k == 4 else 16, 8, k, "f64", "f64", "f64", "f64")
    if atype in ("f16", "bf16"):
        k, kind = 16, "f16"
    elif atype == "tf32":
        k, kind = 8, "tf32"
    elif atype in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"):
        k, kind = 32, "f8f6f4"
        if fam in ("sm_80",):
            raise TargetError(f"no tensor-core instruction on {target} takes .{atype} (fp8 "
                              f"needs sm_89 or later)")
    else:
        raise TargetError(f"no default matrix instruction for .{atype} inputs; name one")
    if op == "mma":
        f6f4 = kind == "f8f6f4" and not (atype in ("e4m3", "e5m2") and bt in ("e4m3", "e5m2"))
        if f6f4 and fam != "sm_120":
            raise TargetError(f"no mma.sync on {target} takes .{atype} with .{bt} (fp6/fp4 "
                              f"need sm_120's kind::f8f6f4 or sm_100's tcgen05.mma)")
        return MmaForm("mma", 16, 8, k, atype, bt, "f32", "f32",
                       kind="f8f6f4" if f6f4 else None)
    if op == "wgmma":
        return MmaForm("wgmma", 64, 256, k, atype, bt, "f32", "f32", alayout="row",
                       blayout="col")
    return MmaForm("tcgen05.mma", 128, 256, k, atype, bt, "f32", "f32", kind=kind)


def _run_rows(fn: Callable[[int, int], None], rows: int, products: int) -> None:
    """Run ``fn(r0, r1)`` over rows, split over threads when the work is large."""
    nt = threads()
    if products < PARALLEL_PRODUCTS or nt <= 1 or rows < 2:
        fn(0, rows)
        return
    pieces = min(rows, nt * 4)
    bounds = [(rows * p // pieces, rows * (p + 1) // pieces) for p in range(pieces)]
    with ThreadPoolExecutor(max_workers=nt) as pool:
        for f in [pool.submit(fn, a, b) for a, b in bounds if b > a]:
            f.result()


def _broadcast(a: NDArray[Any], b: NDArray[Any], c: NDArray[Any], sa: NDArray[Any] | None,
               sb: NDArray[Any] | None) -> tuple[tuple[int, ...], list[NDArray[Any]]]:
    arrays = [a, b, c] + [s for s in (sa, sb) if s is not None]
    try:
        batch = np.broadcast_shapes(*[x.shape[:-2] for x in arrays])
    except ValueError:
        raise OperandError("the leading (batch) dimensions of A, B, C"
                           + (" and the scales" if sa is not None else "")
                           + f" do not broadcast: {', '.join(str(x.shape) for x in arrays)}"
                           ) from None
    nb = int(np.prod(batch)) if batch else 1
    need = sum(nb * x.shape[-2] * x.shape[-1] * 8 for x in arrays)
    check_bytes(need, "operands of the matrix product", tuple(x.shape for x in arrays))
    out = [np.ascontiguousarray(np.broadcast_to(x, batch + x.shape[-2:])).reshape(
        (nb,) + x.shape[-2:]) for x in arrays]
    return batch, out


def _as_matrix(x: NDArray[Any], what: str) -> NDArray[Any]:
    if x.ndim < 2:
        raise OperandError(f"{what}: a matrix has at least 2 dimensions; got shape {x.shape}")
    return x


def _compute(form: MmaForm, target: str, a: object, b: object, c: object,
             scale_a: object, scale_b: object, exact_shape: bool,
             name: str | None = None) -> Any:
    p = params_for(form, target)
    kind = kind_of(form)
    name = name or form.spelling or form.opcode
    model = _Model(form.spelling)
    A, ta = _read(a, form.atype, f"A of {name}")
    B, tb = _read(b, form.btype, f"B of {name}")
    A = _as_matrix(A, f"A of {name}")
    B = _as_matrix(B, f"B of {name}")
    M, K = A.shape[-2:]
    K2, N = B.shape[-2:]
    if K != K2:
        raise OperandError(f"{name}: A is {M}x{K} and B is {K2}x{N}: the inner dimensions "
                           f"differ")
    if exact_shape and (M, N, K) != (form.m, form.n, form.k):
        raise OperandError(f"{name}: the shape is m{form.m}n{form.n}k{form.k}: A must be "
                           f"{form.m}x{form.k} and B {form.k}x{form.n}; got A {M}x{K}, B "
                           f"{K2}x{N}")
    # weighed before anything is made: operands widened to 8-byte words (about three copies
    # on the way) and the result with its accumulator (batches are weighed below)
    check_bytes(24 * (M * K + K * N + M * N), name, f"(A {M}x{K}, B {K}x{N})")
    acc_t = form.dtype
    if c is None:
        tc = False
        C = np.zeros((M, N), dtype=np.int64 if kind == "int" else _UINT[_container(
            _bits_width(acc_t))])
    else:
        C, tc = _read(c, form.ctype, f"C of {name}")
        C = _as_matrix(C, f"C of {name}")
        if C.shape[-2:] != (M, N):
            raise OperandError(f"C of {name}: must be {M}x{N} (A's rows by B's columns); got "
                               f"{C.shape[-2]}x{C.shape[-1]}")
        if form.ctype != acc_t:
            if (form.ctype, acc_t) == ("f16", "f32"):
                C = np.asarray(C.view(np.float16).astype(np.float32)).view(np.uint32)
            else:
                raise TargetError(f"{name}: C of .{form.ctype} with D of .{acc_t} is not "
                                  f"modelled")
    typed = ta or tb or tc
    SA = SB = None
    if form.block_scaled:
        if scale_a is None or scale_b is None:
            raise OperandError(f"{name}: the block-scaled kind::{form.kind} takes scale_a and "
                               f"scale_b")
        st = form.scale_type or "ue8m0"
        SA, tsa = _read(scale_a, st, f"scale_a of {name}")
        SB, tsb = _read(scale_b, st, f"scale_b of {name}")
        SA = _as_matrix(SA, f"scale_a of {name}")
        SB = _as_matrix(SB, f"scale_b of {name}")
        blk = form.scale_block or form.k
        if K % blk:
            raise OperandError(f"{name}: K = {K} is not a multiple of the scale block {blk}")
        if SA.shape[-2:] != (M, K // blk) or SB.shape[-2:] != (K // blk, N):
            raise OperandError(f"{name}: scale_a must be {M}x{K // blk} and scale_b "
                               f"{K // blk}x{N} (one factor per {blk} elements of K); got "
                               f"{SA.shape[-2]}x{SA.shape[-1]} and {SB.shape[-2]}x{SB.shape[-1]}")
    elif scale_a is not None or scale_b is not None:
        raise OperandError(f"{name}: scale factors are for the block-scaled kinds "
                           f"(mxf8f6f4, mxf4, mxf4nvf4)")
    batch, (A3, B3, C3, *S3) = _broadcast(A, B, C, SA, SB)
    SA3, SB3 = (S3[0], S3[1]) if S3 else (None, None)
    # K not a multiple of the instruction's k: zero padding (a kernel pads its tiles)
    step = form.k
    Kp = -(-K // step) * step if K else step
    nb, rows = A3.shape[0], A3.shape[0] * M
    # weighed before any work: the operands widened to 8-byte words (about three copies on
    # the way) and the result with its accumulator
    check_bytes(24 * nb * (M * Kp + Kp * N) + 24 * rows * N, name,
                f"(A {M}x{K}, B {K}x{N}" + (f", {nb} batches" if nb > 1 else "") + ")")
    if Kp != K:
        A3 = np.concatenate([A3, np.zeros(A3.shape[:2] + (Kp - K,), A3.dtype)], axis=2)
        B3 = np.concatenate([B3, np.zeros((B3.shape[0], Kp - K, N), B3.dtype)], axis=1)
        if SA3 is not None and SB3 is not None:
            blk = form.scale_block or form.k
            one = 127 if form.scale_type == "ue8m0" else 0x38
            SA3 = np.concatenate([SA3, np.full(SA3.shape[:2] + ((Kp - K) // blk,), one,
                                               SA3.dtype)], axis=2)
            SB3 = np.concatenate([SB3, np.full((SB3.shape[0], (Kp - K) // blk, N), one,
                                               SB3.dtype)], axis=1)
    nb = A3.shape[0]
    rows = nb * M
    work = rows * N * Kp
    if kind == "int":
        out = _integer(form, A3, B3, C3)
        res = out.reshape(batch + (M, N))
        return res if res.ndim else res
    if kind == "f64":
        av = A3.view(np.float64)
        bv = B3.view(np.float64)
        o = np.array(C3.view(np.float64), copy=True)
        pay = model.f64_payload
        _run_rows(lambda r0, r1: fma_rows(av, bv, o, r0, r1, pay), rows, work)
        bits = o.view(np.uint64)
        if not pay:
            bits[np.isnan(o)] = np.uint64(model.nan64)
        return _result(bits.reshape(batch + (M, N)), "f64", typed)
    assert p is not None
    if acc_t not in ("f32", "f16"):
        raise TargetError(f"{name}: a .{acc_t} result of .{form.atype} inputs is not a "
                          f"tensor-core form")
    out_kind = OUT_F32 if acc_t == "f32" else OUT_F16
    o = np.array(C3, dtype=np.uint32 if acc_t == "f32" else np.uint16, copy=True)
    if kind == "mxf4":
        if acc_t != "f32":
            raise TargetError(f"{name}: kind::{form.kind} accumulates into .f32 only")
        _grouped(form, p, A3, B3, SA3, SB3, o, rows, work, model)
    else:
        # an f16 C of an f32 form keeps f16's smallest exponent, -14, for its subnormals
        # (MMA-Sim 2.1.1 reads C in its own format; the January reading widened it first)
        cmin = -14 if form.ctype == "f16" and acc_t == "f32" and model.v211 else -126
        _fused(form, p, A3, B3, SA3, SB3, o, out_kind, rows, work, model, cmin)
    return _result(o.reshape(batch + (M, N)), acc_t, typed)


def _fused(form: MmaForm, p: MmaParams, A3: NDArray[Any], B3: NDArray[Any],
           SA3: NDArray[Any] | None, SB3: NDArray[Any] | None, o: NDArray[Any], out_kind: int,
           rows: int, work: int, model: _Model, cmin: int) -> None:
    fa, fb = _fmt(form.atype), _fmt(form.btype)
    sh_a = 13 if form.atype == "tf32" else 0
    sh_b = 13 if form.btype == "tf32" else 0
    zf = model.zero_factor()
    aval, aexp, aspec = decode_values(A3, fa, zf, sh_a)
    bval, bexp, bspec = decode_values(B3, fb, zf, sh_b)
    K = A3.shape[2]
    if SA3 is not None and SB3 is not None:
        # kind::mxf8f6f4: a scale factor 2**e multiplies the element and adds e to its
        # exponent (ue8m0 has no fraction)
        blk = form.scale_block or form.k
        _, ea, na = scale_exponents(SA3, _fmt(form.scale_type or "ue8m0"), zf)
        _, eb, nb_ = scale_exponents(SB3, _fmt(form.scale_type or "ue8m0"), zf)
        ea_k = np.repeat(ea, blk, axis=2)
        eb_k = np.repeat(eb, blk, axis=1)
        aexp = aexp + ea_k
        bexp = bexp + eb_k
        aval = np.ldexp(aval, ea_k)
        bval = np.ldexp(bval, eb_k)
        aspec = np.where(np.repeat(na, blk, axis=2), np.int8(SPEC_NAN), aspec)
        bspec = np.where(np.repeat(nb_, blk, axis=1), np.int8(SPEC_NAN), bspec)
        aval = np.where(aspec != 0, 0.0, aval)
        bval = np.where(bspec != 0, 0.0, bval)
    L = min(form.k, p.block)
    nsteps = K // L
    arow = (aspec != 0).reshape(aspec.shape[0], aspec.shape[1], nsteps, L).any(axis=3)
    bcol = (bspec != 0).reshape(bspec.shape[0], nsteps, L, bspec.shape[2]).any(axis=2)
    bcol = np.concatenate([bcol, bcol.any(axis=2, keepdims=True)], axis=2)
    P = p.f32_frac + 1 if out_kind == OUT_F32 else 11
    if L % 4:
        raise TargetError(f"{form.spelling or form.opcode}: a block step of {L} products is "
                          f"not modelled (the steps are multiples of 4)")
    # formats whose products, and their terms, are exact in binary32 (at most 11 significant
    # bits, exponents within +-16, no scale factors): float32 lanes, twice as many
    w32 = (SA3 is None and form.atype in _NARROW and form.btype in _NARROW
           and p.frac_bits <= 25)
    if w32:
        aval = aval.astype(np.float32)
        bval = bval.astype(np.float32)
    fdpa_rows = fdpa_kernel(out_kind, P, w32)
    aexp_f = np.ascontiguousarray(aexp, dtype=np.int16)
    bexp_f = np.ascontiguousarray(bexp, dtype=np.int16)
    ze = model.zero_term(p, "f32" if out_kind == OUT_F32 else "f16")
    pz = 1 if model.v211 else 0
    _run_rows(lambda r0, r1: fdpa_rows(aval, aexp_f, arow, bval, bexp_f, bcol, aspec, bspec, o,
                                       r0, r1, L, p.frac_bits, ze, pz, cmin),
              rows, work)


def _grouped(form: MmaForm, p: MmaParams, A3: NDArray[Any], B3: NDArray[Any],
             SA3: NDArray[Any] | None, SB3: NDArray[Any] | None, o: NDArray[Any], rows: int,
             work: int, model: _Model) -> None:
    assert SA3 is not None and SB3 is not None
    if form.atype != "e2m1" or form.btype != "e2m1":
        raise TargetError(f"{form.spelling or form.opcode}: kind::{form.kind} takes .e2m1 A "
                          f"and B")
    fa = _fmt("e2m1")
    asig, aexp, _ = decode(A3, fa, 0)
    bsig, bexp, _ = decode(B3, fa, 0)
    # e2m1: value = sig * 2**(exp - 1) with exp in {0, 1, 2}: sig << exp is in units of 1/2
    sfmt = _fmt(form.scale_type or "ue8m0")
    ssa, sea, sna = scale_exponents(SA3, sfmt, ZERO_EXP_2026_01)
    ssb, seb, snb = scale_exponents(SB3, sfmt, ZERO_EXP_2026_01)
    sman = 0 if (form.scale_type or "ue8m0") == "ue8m0" else 3
    shift = p.frac_bits - 2 - 2 * sman
    L = min(form.k, p.block)
    SBk = form.scale_block or form.k
    ze = model.zero_term(p, "f32")
    gz = pz = 1 if model.v211 else 0
    _run_rows(lambda r0, r1: group_rows(asig, aexp, bsig, bexp, ssa, sea, sna, ssb, seb,
                                        snb, o, r0, r1, L, p.group, SBk, p.frac_bits,
                                        shift, ze, gz, pz), rows, work)


def _integer(form: MmaForm, A3: NDArray[Any], B3: NDArray[Any],
             C3: NDArray[Any]) -> NDArray[Any]:
    """The integer forms: exact.  b1: popc(a AND/XOR b) summed; .satfinite clamps to s32,
    otherwise the sum wraps modulo 2**32 (two's complement)."""
    if form.atype == "b1":
        if form.bitop == "xor":
            prod = (A3[:, :, :, None] != B3[:, None, :, :]).sum(axis=2)
        else:
            prod = (A3[:, :, :, None] & B3[:, None, :, :]).sum(axis=2)
        d = C3 + prod.astype(np.int64)
    else:
        d = C3 + np.matmul(A3, B3)
    if form.satfinite:
        d = np.clip(d, -(1 << 31), (1 << 31) - 1)
    else:
        d = ((d + (1 << 31)) % (1 << 32)) - (1 << 31)
    res: NDArray[Any] = np.asarray(d, dtype=np.int32)
    return res


def _result(bits: NDArray[Any], tname: str, typed: bool) -> Any:
    if typed:
        return bits.view(_DTYPES[tname])
    return bits


@guarded("mma")
def mma(instruction: MmaForm | str, a: object, b: object, c: object, *, target: str = "sm_90",
        scale_a: object = None, scale_b: object = None) -> Any:
    """D = A*B + C of one matrix instruction, as ``target``'s tensor cores compute it.

    ``instruction``: a spelling (``'wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16'``) or
    an ``MmaForm``.  A is m x k, B k x n, C m x n (leading batch dimensions broadcast);
    bits or typed floats; block-scaled kinds take ``scale_a`` (m x k/block) and ``scale_b``
    (k/block x n).  Returns D, typed when an operand was typed."""
    form = resolve(instruction)
    return _compute(form, target, a, b, c, scale_a, scale_b, exact_shape=True)


@guarded("matmul")
def matmul(A: object, B: object, C: object = None, *, instruction: MmaForm | str | None = None,
           target: str = "sm_90", scale_a: object = None, scale_b: object = None) -> Any:
    """An M x K by K x N product (plus C) as a kernel on ``target`` computes it with one
    matrix instruction: every output tile chained along K in increasing k, one instruction's
    k at a time (each split into the target's block steps), the accumulator rounded to the
    instruction's result format between steps; K not a multiple of the instruction's k is
    padded with zeros.  ``instruction`` defaults to the one a kernel on the target issues for
    A's dtype (``default_form``)."""
    if instruction is None:
        at = _typed_name(A, "A")
        bt = _typed_name(B, "B")
        form = default_form(at, target, bt)
        name = "matmul"                  # the messages name what the user wrote, not the form
    else:
        form = resolve(instruction)
        name = None
    return _compute(form, target, A, B, C, scale_a, scale_b, exact_shape=False, name=name)


_BY_DTYPE = {np.dtype(v): k for k, v in _DTYPES.items()
             if k not in ("tf32", "ue8m0", "ue4m3", "f32")}
_BY_DTYPE[np.dtype(np.float32)] = "tf32"


def _typed_name(x: object, what: str) -> str:
    dt = getattr(x, "dtype", None)
    if dt is None or np.dtype(dt) not in _BY_DTYPE:
        raise OperandError(f"{what}: without an instruction, matmul reads the element type "
                           f"from a typed array (float16, bfloat16, float32 for tf32, float64, "
                           f"the ml_dtypes fp8/fp6/fp4 types); got "
                           f"{dt if dt is not None else type(x).__name__}")
    return _BY_DTYPE[np.dtype(dt)]


