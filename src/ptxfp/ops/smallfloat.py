"""The small-float conversions, bit-exact: fp8 (e4m3, e5m2), fp6 (e2m3, e3m2), fp4 (e2m1), ue8m0,
and stochastic rounding (``.rs``), for the rows of isa/cvt_small.py and the ``.rs`` rows of
isa/cvt.py.  ``ptxfp.convert`` hands these forms here.

Every narrowing is one call of the rounding core, ``rounding.round_pack``, on the exact source
value (f32, f16 and bf16 values are exact in float64), into the destination's precision and
exponent range as the type table (types.py) gives them; then the PTX rules (manual 9.7.9.21,
docs/semantics.md "Small-float cvt"):

- ``.satfinite`` (required on fp8/fp6/fp4): a rounded magnitude past the largest finite value,
  infinities included, becomes the largest finite value of its sign.  round_pack rounds with
  the format's exponent range and IEEE overflow, so this is one ``min`` on the magnitude (e4m3's
  S.1111.111 is NaN, not a value: its largest finite is S.1111.110, 448).
- NaN gives the destination's canonical NaN (``policy.canonical_nan``): e4m3/e5m2 0x7F, ue8m0
  0xFF; the formats without NaN (e2m3, e3m2, e2m1) give what the policy says a NaN becomes
  there (default +MAX_NORM, NVIDIA's host conversion code in cuda_fp6.hpp/cuda_fp4.hpp).
- ``.relu``: a negative result is +0 (a NaN stays NaN), by ``nvidia.finish``.
- ue8m0 (unsigned, 2**(k-127), no zero, 0xFF NaN): the magnitude of the source is rounded
  (.rz/.rp) as a precision-1 format whose smallest exponent is 2**-127; the core's encoding
  then is the ue8m0 code plus one (its code 0 is the core's "zero", which ue8m0 does not have:
  values below 2**-127 give code 0 = 2**-127, as the exponent field of the source does).  A
  rounded overflow (or an infinity) is 0xFF (NaN) unless .satfinite clamps it to 0xFE (2**127).
- widening (f16x2 from fp8/fp6/fp4, bf16x2 from fp8/fp6/fp4 and ue8m0) is exact: the value
  decoded and packed by the same core.  The two high bits of a 6-bit lane's byte are not read.
  ``.satfinite`` on a widening into .bf16x2 (PTX 9.2) is the manual's rule for it: an infinity
  (e5m2's) becomes the largest finite bf16 of its sign, a NaN stays the canonical NaN.
- a .bf16x2 source (PTX 9.1) is two bf16 lanes, each exact in float64, narrowed as an .f16x2
  source is; ``.rz`` (sm_107a/f) is the rounding core's round toward zero, ``.satfinite``
  then clamping as with .rn.
- ``.rs``: the random bits are added to the discarded bits of the magnitude, aligned to the
  top of them; a carry out rounds away from zero, no carry truncates (``rounding.rs_away``:
  the magnitude rounded toward zero, plus one unit on a carry).  Which bits of ``rbits`` feed
  which lane: the manual's words for f16x2/bf16x2/e2m1x4, ``policy.rs_x4_bits`` where it is
  silent (fp8/fp6 x4).

Packing (manual, cvt "Semantics"): the first source (a) goes to the top lane: d[15:8] for
x2 bytes, d[7:4] for e2m1x2, d[31:24] a, d[23:16] b, d[15:8] e, d[7:0] f for x4.  A packed
source is read the same way: its upper half gives the upper lane.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..core import nvidia, types
from .. import policy
from ..core._bitcast import f64_from_bits
from ..core._jit import jit_cached, split
from ..core.exact import decode
from ..errors import OperandError
from ..core.formats import is_float_dtype
from ..core.operands import broadcast, check_count, check_out, deliver, read_operand, typed_result
from ..core.rounding import MODES, RN, RZ, TINY_AFTER, round_pack, rs_away
from ..isa.spelling import Instruction

__all__ = ["convert", "handles", "RS"]

#: the kernels' code of stochastic rounding (after rounding.RN..RP)
RS = 4

#: how each source lane is read: (exponent bits, fraction bits) of decode's formats
_SRC = {"f32": (8, 23), "f16": (5, 10), "bf16": (8, 7)}


def handles(ins: Instruction) -> bool:
    """Is ``ins`` a form computed here (a small-float type, or stochastic rounding)?"""
    fmts = [types.get(t).fmt for t in ins.types]
    return ins.rounding == "rs" or any(f is not None and f.code < 0 for f in fmts)


# --- scalar conversions -----------------------------------------------------------------------


@njit(inline="always")
def decode_small(h, EBITS, MBITS, BIAS, NAN_KIND, HAS_INF, SIGNED):  # type: ignore[no-untyped-def]
    """The exact float64 value of small-format bits ``h`` (NaN for its NaN encodings).

    NAN_KIND: 0 none, 1 IEEE (all-ones exponent, non-zero fraction), 2 the all-ones magnitude
    (e4m3, ue8m0).  Subnormals for the signed formats; ue8m0 (unsigned, no fraction) reads
    its field k as 2**(k - BIAS)."""
    h = np.int64(h)
    width = EBITS + MBITS + SIGNED
    mag = h & ((np.int64(1) << (EBITS + MBITS)) - 1)
    s = (h >> (width - 1)) & 1 if SIGNED else 0
    e = mag >> MBITS
    m = mag & ((np.int64(1) << MBITS) - 1)
    emask = (np.int64(1) << EBITS) - 1
    if SIGNED:
        sig = m | (np.int64(e != 0) << MBITS)
        k = max(e, np.int64(1)) - BIAS - MBITS
        v = np.float64(sig) * f64_from_bits((k + 1023) << 52)  # type: ignore[call-arg]
    else:
        v = f64_from_bits((e - BIAS + 1023) << 52)  # type: ignore[call-arg]  # 2**(e - BIAS)
    if HAS_INF and e == emask and m == 0:
        v = np.inf
    if NAN_KIND == 1 and e == emask and m != 0:
        v = np.nan
    if NAN_KIND == 2 and mag == (np.int64(1) << (EBITS + MBITS)) - 1:
        v = np.nan
    return -v if s == 1 else v


@njit(inline="always")
def narrow_one(x, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, mode, satfinite, relu, relu_mz,  # type: ignore[no-untyped-def]  # noqa: E501
               nan_bits, away=False):
    """The exact value ``x`` rounded into a small format (``mode``: RN/RZ/RM/RP; with
    ``away``, RZ's magnitude one unit further from zero: stochastic rounding's carry,
    rounding.rs_away)."""
    if UE8M0:
        mag, sign, is_nan = round_pack(abs(x), 1, EMIN, EMAX, mode, TINY_AFTER)
        code = max(mag - 1, np.int64(0))
        code = min(code, MAXF) if satfinite else min(code, MAXF + 1)
        return nan_bits if is_nan else code
    mag, sign, is_nan = round_pack(x, P, EMIN, EMAX, mode, TINY_AFTER)
    mag += np.int64(away)
    mag = min(mag, MAXF) if satfinite else mag    # (required on fp8/fp6/fp4, not on .rs)
    return nvidia.finish(mag, sign, is_nan, P, WIDTH, 0, False, False, relu, False, relu_mz,
                         nan_bits)


# --- kernels ----------------------------------------------------------------------------------
#
# One kernel per shape of conversion (source and destination formats, lanes, mode), built with
# those as compile-time constants and cached on disk (``_jit.jit_cached``): LLVM then folds the
# format's constants into the rounding core and vectorises the loop (one generic kernel taking
# them as arguments ran 30x slower, docs/performance.md "Small-float cvt").  The modifiers and
# the policy's values (.satfinite, .relu, the NaN, the sign of a relu'd zero) stay arguments:
# they cost nothing measurable and would multiply the kernels to compile.

_kernels: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def _kernel(key: tuple[Any, ...], build: Any) -> Any:
    k = _kernels.get(key)
    if k is None:
        with _lock:
            k = _kernels.get(key)
            if k is None:
                k = _kernels[key] = build(*key[1:])
    return k


@njit(inline="always")
def _narrow_lane(w0, w1, w2, w3, j, rbi, sh, satfinite, relu, relu_mz, nan_bits, K):  # type: ignore[no-untyped-def]  # noqa: E501
    """Lane ``j`` (0 is the top lane) of one element of ``_build_narrow``'s kernel, from the
    element's source words: values, not arrays (loads behind a choice of array kept LLVM from
    vectorising the loop, 20x slower).  ``j`` and ``K``, the kernel's shape, are constants of
    the kernel (a module-level function, not a closure: a closure's cells are part of Numba's
    cache key, and a jitted function in one is pickled differently in every process, so
    nothing would be found in the disk cache)."""
    NSRC, SE, SM, SLANES, SC, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, C, mode, rs_k = K
    if SLANES == 1:
        v = w0 if j == 0 else w1 if j == 1 else w2 if j == 2 else w3
    else:
        w = w0 if j // SLANES == 0 else w1
        v = (w >> (SC * (SLANES - 1 - j % SLANES))) & ((np.int64(1) << SC) - 1)
    x = decode(v, SE, SM, False)
    if mode == RS:
        away = rs_away(x, P, EMIN, (rbi >> sh) & ((np.int64(1) << rs_k) - 1), rs_k)
        return narrow_one(x, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, RZ, satfinite, relu, relu_mz,
                          nan_bits, away)
    return narrow_one(x, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, mode, satfinite, relu, relu_mz,
                      nan_bits)


def _build_narrow(NSRC, SE, SM, SLANES, SC, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, C, mode, rs_k):  # type: ignore[no-untyped-def]  # noqa: E501
    """The kernel narrowing ``NSRC`` source rows (f32 values, or packed f16x2/bf16x2 when
    SLANES is 2) into one packed destination per element, the first source lane in the top
    container: ``kernel(s0, s1, s2, s3, rbits, out, start, stop, rs_shift, satfinite, relu,
    relu_mz, nan_bits)`` (the sources past NSRC are not read).  Mode RS: lane j's random bits
    are ``(rbits >> rs_shift[j])`` masked to ``rs_k`` bits."""
    LANES = NSRC * SLANES
    K = (NSRC, SE, SM, SLANES, SC, P, EMIN, EMAX, MAXF, WIDTH, UE8M0, C, mode, rs_k)

    def kernel(s0, s1, s2, s3, rbits, out, start, stop, rs_shift, satfinite, relu, relu_mz,  # type: ignore[no-untyped-def]  # noqa: E501
               nan_bits):
        # sliced first, so that the loop index starts at 0 and the loads are plain vector loads
        s0 = s0[start:stop]
        s1 = s1[start:stop]
        s2 = s2[start:stop]
        s3 = s3[start:stop]
        rb = rbits[start:stop]
        o = out[start:stop]
        # the shifts as scalars: read from the array inside the loop, they would be loads
        # that the stores to o might alias, and the loop would not be vectorised
        sh0, sh1, sh2, sh3 = rs_shift[0], rs_shift[1], rs_shift[2], rs_shift[3]
        for i in range(o.size):
            w0 = np.int64(s0[i])
            w1 = np.int64(s1[i]) if NSRC > 1 else np.int64(0)
            w2 = np.int64(s2[i]) if NSRC > 2 else np.int64(0)
            w3 = np.int64(s3[i]) if NSRC > 3 else np.int64(0)
            rbi = np.int64(rb[i]) if mode == RS else np.int64(0)
            # the lanes written out (LANES is 2 or 4)
            f = (satfinite, relu, relu_mz, nan_bits)
            r = _narrow_lane(w0, w1, w2, w3, 0, rbi, sh0, f[0], f[1], f[2], f[3], K)
            if LANES > 1:
                r = (r << C) | _narrow_lane(w0, w1, w2, w3, 1, rbi, sh1, f[0], f[1], f[2], f[3], K)
            if LANES > 2:
                r = (r << C) | _narrow_lane(w0, w1, w2, w3, 2, rbi, sh2, f[0], f[1], f[2], f[3], K)
            if LANES > 3:
                r = (r << C) | _narrow_lane(w0, w1, w2, w3, 3, rbi, sh3, f[0], f[1], f[2], f[3], K)
            o[i] = r

    return jit_cached(kernel, ("narrow",) + K, nogil=True)


def _fill_widen_table_py(T, EBITS, MBITS, BIAS, NAN_KIND, HAS_INF, SIGNED, P, EMIN, EMAX,  # type: ignore[no-untyped-def]  # noqa: E501
                         DWIDTH, relu, relu_mz, nan_bits, satfinite, MAXF):
    """``T[h]``: small-format code ``h`` widened exactly into an f16/bf16 lane (DWIDTH bits);
    ``satfinite``: an infinity becomes the largest finite value ``MAXF`` of its sign."""
    for h in range(T.size):
        x = decode_small(h, EBITS, MBITS, BIAS, NAN_KIND, HAS_INF, SIGNED)
        mag, sign, is_nan = round_pack(x, P, EMIN, EMAX, RN, TINY_AFTER)
        if satfinite and not is_nan:
            mag = min(mag, MAXF)
        T[h] = nvidia.finish(mag, sign, is_nan, P, DWIDTH, 0, False, False, relu, False,
                             relu_mz, nan_bits)


def _lookup_py(a, hi, lo, out, start, stop):  # type: ignore[no-untyped-def]
    """``out[i] = hi[a[i] >> 8] | lo[a[i] & 0xFF]``, or ``lo[a[i]]`` for one-byte words."""
    a = a[start:stop]
    o = out[start:stop]
    if hi.size == 1:
        for i in range(o.size):
            o[i] = lo[a[i]]
    else:
        for i in range(o.size):
            w = a[i]
            o[i] = hi[w >> 8] | lo[w & 0xFF]


# A widening has at most 2**8 source codes a lane, so each is a table of its results, filled
# once per format, destination and policy by the rounding core (the same decode and rounding
# as the narrowings), and every array goes through one lookup kernel, by bytes of the source
# word: tables of 256 entries stay in L1, where one table of all 2**16 words of an fp8 pair
# (256 KB) ran at 0.55x.  One kernel to compile for every widening, and faster than the
# per-format kernels that decoded and rounded every lane (docs/performance.md).
_fill_widen_table: Any = jit_cached(_fill_widen_table_py, "widen_table", nogil=True)
_lookup: Any = jit_cached(_lookup_py, "lookup", nogil=True)
_tables: dict[tuple[Any, ...], tuple[NDArray[np.uint32], NDArray[np.uint32]]] = {}


def _widen_tables(key: tuple[Any, ...]) -> tuple[NDArray[np.uint32], NDArray[np.uint32]]:
    """The (high byte, low byte) tables of ``_lookup`` for ``key`` = (container bits C, the
    source format's decode constants, the destination's P, EMIN, EMAX, width, relu, relu_mz,
    nan_bits, satfinite, its largest finite value): the f16x2/bf16x2 result of an x2 word of
    2C bits is hi[w >> 8] | lo[w & 0xFF]."""
    t = _tables.get(key)
    if t is not None:
        return t
    C = key[0]
    lane = np.empty(1 << C, np.uint16)
    _fill_widen_table(lane, *key[1:])
    lane32: NDArray[np.uint32] = lane.astype(np.uint32)
    hi: NDArray[np.uint32]
    lo: NDArray[np.uint32]
    if C == 8:                                  # a byte a lane
        hi, lo = lane32 << np.uint32(16), lane32
    else:                                       # both lanes in one byte (C = 4)
        assert 2 * C == 8, key
        w = np.arange(256, dtype=np.uint32)
        hi = np.zeros(1, np.uint32)
        lo = (lane32[w >> np.uint32(C)] << np.uint32(16)) | lane32[w & np.uint32((1 << C) - 1)]
    _tables[key] = (hi, lo)                     # same contents whichever thread wins
    return hi, lo


# --- the entry point --------------------------------------------------------------------------


def _rs_lanes(ins: Instruction, pol: policy.Policy) -> tuple[NDArray[np.int64], int]:
    """(shift of each lane's random bits in rbits, top lane first, four entries whatever the
    lanes; how many bits)."""
    d = ins.dtype
    if d in ("f16x2", "bf16x2"):
        # manual: the upper 16 bits for a, the lower for b; 13 LSBs of each for f16
        return np.array([16, 0, 0, 0], np.int64), 13 if d == "f16x2" else 16
    if d == "e2m1x4":
        # manual: the upper 8 bits of both halves for a, b; the lower 8 bits for e, f
        return np.array([24, 8, 16, 0], np.int64), 8
    if pol.value("rs_x4_bits", str(ins)) == policy.RS_X4_SHARED:
        # the upper 16 bits for a and for b, the lower 16 for e and for f
        return np.array([16, 16, 0, 0], np.int64), 16
    return np.array([24, 16, 8, 0], np.int64), 8           # RS_X4_BYTES


def convert(ins: Instruction, *operands: Any, out: NDArray[Any] | None = None) -> Any:
    """``ptxfp.convert`` of a small-float or ``.rs`` form (operands are bit patterns)."""
    names, fmts = ins.operand_names, ins.operand_formats
    check_count(ins.spelling, names, operands)
    arrays = []
    any_typed = False
    for x, n, fm in zip(operands, names, fmts):
        what = f"operand {n} of '{ins.spelling}' (.{fm})"
        small = _small_typed(x, fm, what)
        if small is not None:
            bits, typed = small, True
        else:
            bits, typed = read_operand(x, fm, what)
        any_typed = any_typed or typed
        arrays.append(bits)
    flat, shape, size, scalar = broadcast(ins.spelling, names, arrays)
    dt = types.get(ins.dtype)
    dtype = np.dtype(dt.dtype_name)
    given = out
    if given is not None:
        if any_typed:
            raise OperandError(f"out of '{ins.spelling}': out= takes bit patterns; with typed "
                               "operands leave out= away")
        res = check_out(ins.spelling, given, dtype, shape)
    else:
        res = np.empty(size, dtype)
    pol = policy.current()
    dfmt = dt.fmt
    assert dfmt is not None
    st = types.get(ins.atype)
    if size:
        if st.fmt is not None and st.fmt.code < 0:
            # widening: small x2 -> f16x2 / bf16x2
            f = st.fmt
            assert st.lanes == 2, ins.spelling
            nan_kind = {types.NAN_NONE: 0, types.NAN_IEEE: 1, types.NAN_ALL_ONES: 2}[
                f.nan_encoding]
            hi, lo = _widen_tables((st.container, f.exp_bits, f.man_bits, f.bias, nan_kind,
                                  bool(f.has_inf), int(f.signed), dfmt.precision, dfmt.emin,
                                  dfmt.emax, dfmt.width, bool(ins.relu),
                                  bool(pol.value("relu_minus_zero_to_plus", str(ins))),
                                  pol.canonical_nan(dfmt.name, str(ins)),
                                  bool(ins.satfinite), dfmt.max_finite))
            a = flat[0]
            split(lambda i, j: _lookup(a, hi, lo, res, i, j), size)
        else:
            ue8m0 = dfmt.name == "ue8m0"
            rs_shift, rs_k = np.zeros(4, np.int64), 1
            srcs_list = flat
            rbits = flat[0]
            if ins.rounding == "rs":
                rbits = flat[-1]
                srcs_list = flat[:-1]
                rs_shift, rs_k = _rs_lanes(ins, pol)
            srcs = [np.asarray(s, np.uint32) for s in srcs_list]
            nsrc = len(srcs)
            srcs += [srcs[0]] * (4 - nsrc)              # not read past nsrc
            se, sm = _SRC[st.lane_type]
            mode = RS if ins.rounding == "rs" else MODES[ins.rounding or "rn"]
            if ue8m0:
                P, emin, emax, maxf = 1, -127, 127, 0xFE
            else:
                P, emin, emax, maxf = dfmt.precision, dfmt.emin, dfmt.emax, dfmt.max_finite
            narrow = _kernel(("narrow", nsrc, se, sm, st.lanes, st.container, P, emin, emax,
                              maxf, dfmt.width, ue8m0, dt.container, mode, rs_k), _build_narrow)
            rb = np.asarray(rbits, np.uint32)
            tail = (rs_shift, bool(ins.satfinite), bool(ins.relu),
                    bool(pol.value("relu_minus_zero_to_plus", str(ins))), pol.canonical_nan(dfmt.name, str(ins)))
            split(lambda i, j: narrow(srcs[0], srcs[1], srcs[2], srcs[3], rb, res, i, j, *tail),
                  size)
    return deliver(res, shape, given, scalar, ins.dtype if any_typed else None, _typed_result)


def _small_dtype(fmt: types.FloatFormat) -> np.dtype[Any]:
    import ml_dtypes
    dt: np.dtype[Any] = np.dtype(getattr(ml_dtypes, fmt.dtype_name))
    return dt


def _small_typed(x: Any, fm: str, what: str) -> NDArray[Any] | None:
    """An operand of a small-float type given as ml_dtypes values (float8_e4m3fn, float8_e5m2,
    float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, float8_e8m0fnu; packed types as shape
    (..., lanes), lane 0 first) as its packed bits; None for anything else."""
    t = types.get(fm)
    if t.fmt is None or t.fmt.code >= 0 or not isinstance(x, (np.ndarray, np.generic)):
        return None
    arr = np.asarray(x)
    if not is_float_dtype(arr.dtype):
        return None
    want = _small_dtype(t.fmt)
    if arr.dtype != want:
        raise OperandError(f"{what}: got {arr.dtype} values; a .{fm} operand takes "
                           f"ml_dtypes.{t.fmt.dtype_name} values of shape (..., {t.lanes}), "
                           "lane 0 first, or its bit patterns")
    if arr.ndim == 0 or arr.shape[-1] != t.lanes:
        raise OperandError(f"{what}: ml_dtypes.{t.fmt.dtype_name} values of a .{fm} operand "
                           f"have shape (..., {t.lanes}), lane 0 first; got shape {arr.shape}")
    lanes = arr.view(np.uint8).astype(np.uint32) & np.uint32((1 << t.container) - 1)
    bits = np.zeros(arr.shape[:-1], np.uint32)
    for k in range(t.lanes):
        bits |= lanes[..., k] << np.uint32(t.container * k)
    return bits


def _typed_result(bits: NDArray[Any], dtype: str, scalar: bool) -> Any:
    """Result bits as typed values: .f16x2/.bf16x2 as float16/bfloat16 (..., 2); the small
    types as their ml_dtypes values (..., lanes), lane 0 first."""
    t = types.get(dtype)
    if t.fmt is not None and t.fmt.code >= 0:
        return typed_result(bits, dtype, scalar)
    assert t.fmt is not None
    c = t.container
    lanes = np.stack([(bits.astype(np.uint32) >> np.uint32(c * k)) & np.uint32((1 << c) - 1)
                      for k in range(t.lanes)], axis=-1).astype(np.uint8)
    return lanes.view(_small_dtype(t.fmt))


