"""Independent reference for min, max, neg and abs on .f16/.bf16/.f16x2/.bf16x2.

Written from the PTX ISA manual (9.7.4.5 neg, 9.7.4.6 abs, 9.7.4.7 min, 9.7.4.8 max: the
semantics blocks and their notes) and docs/semantics.md, sharing no code with ptxfp: each lane
is decoded into an exact MPFR value by tests/oracle.py's decoder (itself independent of ptxfp),
compared with MPFR, and the result is the chosen operand's bits (with the sign rules written
out below), never a value re-encoded by ptxfp.

``compute(spelling, *operands, policy=None) -> int`` (Python ints, lanes of 16 bits, lane 0 in
bits 15:0) and ``compute_array`` over integer arrays.
"""

from __future__ import annotations

import gmpy2
import numpy as np

from oracle import FORMATS, INF, NAN, ZERO, decode, is_subnormal


def _policy(policy):
    if policy is not None:
        return policy
    import ptxfp
    return ptxfp.POLICY


def read(spelling: str):
    """(opcode, lane format, lanes, modifiers) of a spelling, read loosely."""
    opcode, *toks = spelling.split(".")
    ty = [t for t in toks if t in ("f16", "bf16", "f16x2", "bf16x2")]
    if opcode not in ("min", "max", "neg", "abs") or len(ty) != 1:
        raise ValueError(f"cannot read {spelling!r}")
    mods = set(toks) - set(ty)
    if mods - {"ftz", "NaN", "xorsign", "abs"}:
        raise ValueError(f"cannot read {spelling!r}")
    return opcode, ty[0].removesuffix("x2"), 2 if ty[0].endswith("x2") else 1, mods


def _less(x, y, fmt) -> bool:
    """x < y for two non-NaN lanes, with -0.0 < +0.0 (manual: "If values of both inputs are
    0.0, then +0.0 > -0.0")."""
    kx, sx, vx = decode(x, fmt)
    ky, sy, vy = decode(y, fmt)
    if kx == ZERO and ky == ZERO:
        return sx == 1 and sy == 0
    def value(k, s, v):
        if k == INF:
            return gmpy2.mpfr("-inf") if s else gmpy2.mpfr("inf")
        if k == ZERO:
            return gmpy2.mpfr(0)
        return v
    return bool(value(kx, sx, vx) < value(ky, sy, vy))


def lane(spelling: str, operands, policy=None) -> int:
    opcode, fname, _, mods = read(spelling)
    fmt = FORMATS[fname]
    pol = _policy(policy)
    nan = {"f16": pol.canonical_nan_f16, "bf16": pol.canonical_nan_bf16}[fname]
    ops = [int(x) for x in operands]
    if "ftz" in mods:           # subnormal inputs -> sign-preserving zero
        ops = [(x & 0x8000) if is_subnormal(x, fmt) else x for x in ops]
    isnan = [decode(x, fmt)[0] == NAN for x in ops]
    if opcode in ("neg", "abs"):
        a = ops[0]
        if isnan[0] and pol.negabs_nan == "canonical":
            return nan
        return a ^ 0x8000 if opcode == "neg" else a & 0x7FFF
    a, b = ops
    xorsign = "xorsign" in mods
    if xorsign:                 # the sign XOR is taken before .abs
        sign = (a ^ b) & 0x8000
        a, b = a & 0x7FFF, b & 0x7FFF
    if isnan[0] and isnan[1]:
        return nan
    if "NaN" in mods and (isnan[0] or isnan[1]):
        return nan
    if isnan[0]:
        d = b
    elif isnan[1]:
        d = a
    elif opcode == "min":
        d = a if _less(a, b, fmt) else b
    else:
        d = b if _less(a, b, fmt) else a
    if xorsign:                 # d is not NaN here
        d = (d & 0x7FFF) | sign
    return d


def compute(spelling: str, *operands, policy=None) -> int:
    _, _, lanes, _ = read(spelling)
    if lanes == 1:
        return lane(spelling, operands, policy)
    lo = lane(spelling, [x & 0xFFFF for x in operands], policy)
    hi = lane(spelling, [(x >> 16) & 0xFFFF for x in operands], policy)
    return lo | (hi << 16)


def compute_array(spelling: str, *operands, policy=None) -> np.ndarray:
    _, _, lanes, _ = read(spelling)
    arrays = np.broadcast_arrays(*[np.asarray(x).astype(np.uint64) for x in operands])
    cols = [a.ravel().tolist() for a in arrays]
    res = np.array([compute(spelling, *t, policy=policy) for t in zip(*cols)], np.uint64)
    return res.astype(np.uint32 if lanes == 2 else np.uint16).reshape(arrays[0].shape)
