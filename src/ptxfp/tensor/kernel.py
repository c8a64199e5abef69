"""The block-step kernels (Numba): the one place the tensor-core arithmetic lives.

``fdpa_rows``: the fused dot product-add of params.py on decoded operands (decode.py), for a
range of rows of A, chained along K in steps of ``L`` products, the accumulator held as the
result format's bits in ``out`` (C on entry).  Tiles of rows by columns are walked step by
step; per tile row and step, passes over the tile's columns (contiguous, so every pass
vectorizes, in 512-bit lanes): the largest product exponent (int16 lanes, 8 products a
pass); c read, the step's largest exponent ``maxe`` and scale 2**(F - maxe), c's term; every
product's term (8 a pass): the product of the two elements' values (exact in float64: at
most 22 significant bits) times the scale (exact: a power of two, far from float64's
limits), truncated toward zero to an int64 (``fptosi``: one ``vcvttpd2qq``), the terms summed
exactly in int64 (below 2**40); the sum is rounded once (f32: toward zero by clearing the low
bits of its float64 significand, then an exact conversion; f16: ``rounding.round_pack``).
f16/fp8/fp6/fp4 operands run those passes in float32 / int32 lanes (their products and terms
are exact in binary32); a step of 8 products in float64 lanes is one pass (c, products,
rounding).

``group_rows``: the mxf4/mxf4nvf4 kinds (exact 16-element sub-dots scaled by the two scale
factors, aligned by the scale exponents).  ``fma_rows``: f64, a chain of IEEE fmas in k order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..core._bitcast import bits_from_f32, bits_from_f64, f32_from_bits, f64_from_bits
from ..core._jit import jit_cached
from ..core.rounding import RN, RZ, round_pack

SPEC_NAN, SPEC_PINF, SPEC_NINF = 1, 2, 3
#: the exponent decode gives a zero factor under MMA-Sim 2.1.1's model: far below every real
#: exponent, so that a product with a zero factor never holds the step's largest exponent (its
#: own, the zero exponent ZE, is below every nonzero c's, and c is a term of every step); in
#: int16 lanes the sum of two of them stays above the lanes' floor
ZERO_FACTOR = -4096
#: an invalid f64 operation's NaN under the "payload" rule (x86-64's default NaN)
F64_DEFAULT_NAN = np.int64(-0x8000000000000)          # 0xFFF8000000000000
#: result formats: f32 rounded toward zero (keeping ``P - 1`` fraction bits), f16 to nearest
OUT_F32, OUT_F16 = 0, 1
#: ``fdpa_rows``'s tiles: rows of A by columns of B walked together step by step (a step's
#: slice of B, its exponents and the tile row's working arrays stay in the L1/L2 caches; wider
#: tiles spread each row's fixed costs over more products: 128 columns ran at 0.7x)
TILE_ROWS, TILE_COLS = 16, 512


@intrinsic
def _fma64(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
    """IEEE fused multiply-add on float64 (llvm.fma: one rounding, to nearest even)."""
    if all(isinstance(x, types.Float) and x.bitwidth == 64 for x in (a, b, c)):
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            d = ir.DoubleType()
            f = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
            return builder.call(f, list(args))
        return types.float64(a, b, c), codegen
    return None


@intrinsic
def _vectors_512(typingctx: Any) -> Any:
    """Let the vectorizer of the calling kernel use 512-bit vectors (an LLVM function attribute
    of the function being compiled; LLVM's tuning for recent Intel cores prefers 256 bits,
    which halves the lanes of the tensor kernel's passes).  A no-op elsewhere."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        # llvmlite's attribute set lists the flag attributes only: a string attribute goes in
        # through the set itself and is printed as written
        set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        set.add(builder.function.attributes, '"min-legal-vector-width"="512"')
        return context.get_dummy_value()
    return types.none(), codegen


def _decode_c(cb, out_kind):
    """(sig, exp, spec) of an accumulator's bits (f32 or f16); zero (and a non-finite c) has
    exponent -126 (the caller puts the step's zero exponent in its place)."""
    if out_kind == OUT_F32:
        e = (cb >> 23) & 0xFF
        m = cb & 0x7FFFFF
        neg = (cb >> 31) & 1
        top = 0xFF
        sig = (m | 0x800000) if e != 0 else m
        ex = e - 127 if e != 0 else -126
    else:
        e = (cb >> 10) & 0x1F
        m = cb & 0x3FF
        neg = (cb >> 15) & 1
        top = 0x1F
        sig = (m | 0x400) if e != 0 else m
        ex = e - 15 if e != 0 else -14
    spec = 0
    if e == top:
        spec = SPEC_NAN if m != 0 else (SPEC_NINF if neg else SPEC_PINF)
        sig = 0
    if sig == 0:
        ex = -126
    if neg:
        sig = -sig
    return np.int64(sig), np.int64(ex), spec


def _finish(S, maxe, F, out_kind, P, PZ):
    """The exact sum ``S * 2**(maxe - F)`` rounded into the result format's bits: toward zero
    into f32 keeping P - 1 fraction bits (overflow: infinity), or to nearest even into f16; a
    zero result is +0 when PZ (MMA-Sim 2.1.1), else keeps the sum's sign."""
    x = np.float64(S) * f64_from_bits(np.int64(maxe - F + 1023) << 52)
    if out_kind == OUT_F32:
        mag, sign, _ = round_pack(x, P, -126, 127, RZ, 0)
        q = P - 1
        bits = ((mag >> q) << 23) | ((mag & ((np.int64(1) << q) - 1)) << (23 - q))
        if abs(x) >= 2.0 ** 128:
            bits = np.int64(0x7F800000)
        if PZ and bits == 0:
            sign = 0
        return bits | (np.int64(sign) << 31)
    mag, sign, _ = round_pack(x, 11, -14, 15, RN, 0)
    if PZ and mag == 0:
        sign = 0
    return mag | (np.int64(sign) << 15)


def _special(nan, pinf, ninf, out_kind):
    """The bits of a step with a NaN or infinite term (MMA-Sim's rule: the float64 sum of the
    products and c, its NaN made canonical)."""
    if out_kind == OUT_F32:
        if nan or (pinf and ninf):
            return np.int64(0x7FFFFFFF)
        return np.int64(0x7F800000) if pinf else np.int64(0xFF800000)
    if nan or (pinf and ninf):
        return np.int64(0x7FFF)
    return np.int64(0x7C00) if pinf else np.int64(0xFC00)


def _c_read(cb, mxj, s, ZE, CMIN, F, F32):
    """c of a step from its bits (f32 or f16): (the step's exponent maxe, given the products'
    largest ``mxj``; the scale 2**(F - maxe); c's term, truncated toward zero; whether c is
    a NaN or an infinity).  A zero c has the exponent ZE, a subnormal its format's smallest
    (-126, f16's -14); an f32 c in the first step (s == 0) at least CMIN."""
    if F32:
        E = (cb >> 23) & 0xFF
        v = np.float64(f32_from_bits(np.int32(cb)))
        ex = E - 127 if E != 0 else -126
        ex = ex if (cb & 0x7FFFFFFF) != 0 else ZE
        ex = max(ex, CMIN) if s == 0 and v != 0.0 else ex
        isspec = E == 0xFF
    else:
        E = (cb >> 10) & 0x1F
        mm = cb & 0x3FF
        sg = (mm | 0x400) if E != 0 else mm
        ex = E - 15 if E != 0 else (-14 if mm != 0 else ZE)
        v = np.float64(sg) * f64_from_bits(np.int64(ex - 10 + 1023) << 52)
        v = -v if (cb >> 15) & 1 else v
        isspec = E == 0x1F
    v = 0.0 if isspec else v
    m = max(np.int64(mxj), ex)
    sc = f64_from_bits(np.int64(F + 1023 - m) << 52)
    return m, sc, np.int64(v * sc), isspec


def _round_out(t, m, F, q, PZ, F32):
    """The bits of the exact sum ``t * 2**(m - F)`` rounded into the result format: f32
    toward zero to ``q`` fraction bits (f32's subnormal quantum below 2**-126: the low bits
    of the float64 significand cleared; the conversion to binary32 is then exact, or
    infinity), f16 to nearest even; a zero result is +0 when PZ."""
    x = np.float64(t) * f64_from_bits(np.int64(m - F + 1023) << 52)
    if F32:
        xb = bits_from_f64(x)
        sign = (xb >> 63) & 1
        xa = xb & 0x7FFFFFFFFFFFFFFF
        e = (xa >> 52) - 1023
        sh = min(52 - q + max(0, -126 - e), 63)
        y = f64_from_bits(xa & (np.int64(-1) << sh))
        b = bits_from_f32(np.float32(y))
        sg = sign * ((b != 0) | (PZ == 0))
        return b | (sg << 31)
    mag, sign, _ = round_pack(x, 11, -14, 15, RN, 0)
    sg = np.int64(sign) * ((mag != 0) | (PZ == 0))
    return mag | (sg << 15)


def _make_fdpa(out_kind: int, P: int, W32: bool) -> Any:
    """The block-step kernel for one result format (``out_kind``, f32 precision ``P``), with
    those as compile-time constants so that the per-output loops vectorize.  ``W32``: the
    operands' values come as float32 and every product of two of them, and its term, is
    exact in binary32 (formats of at most 11 significant bits and exponents within +-16:
    f16, fp8, fp6, fp4): the passes of 8 products then run 16 float32 / int32 lanes."""
    F32 = out_kind == OUT_F32
    q = P - 1
    FUSE8 = not W32                           # a step of 8 products in one pass
    NT = TILE_COLS
    RB = TILE_ROWS

    def fdpa_rows(aval, aexp, arow, bval, bexp, bcol, aspec, bspec, out, r0, r1, L, F, ZE,
                  PZ, CMIN):
        """Rows [r0, r1) of the flattened (batch, M) rows: every output of the row chained
        along K in steps of L (a multiple of 4: every min(k, block) is; the products are
        summed 8 at a time, or 4 where L is not a multiple of 8).  ``ZE``: the exponent of
        a zero c (MMA-Sim 2.1.1 gives a product with a zero factor that exponent too; it is
        below every nonzero c's, -126 or f16's -14, and c is always a term: so it is the
        largest only where c is zero, and the kernel never needs it for a product); ``PZ``:
        a zero result is +0; ``CMIN``: the smallest exponent of C's own format in the first
        step (an f16 C of an f32 form: -14; else -126).  ``aval``/``bval``: the elements'
        values (float64, or float32 under W32; 0 for NaN/inf); ``aexp``/``bexp``: their
        alignment exponents (int16; a zero factor's is ZERO_FACTOR under MMA-Sim 2.1.1, far
        below every real one); ``arow``/``bcol``: whether a step's slice of the row/column
        holds a NaN or an infinity (``bcol`` has one more column: any column of the step);
        ``aspec``/``bspec``: SPEC_* of each element."""
        _vectors_512()
        CH = 8 if L % 8 == 0 else 4
        M = aval.shape[1]
        K = aval.shape[2]
        N = bval.shape[2]
        nsteps = K // L
        mx = np.empty(NT, np.int16)
        acc = np.empty(NT, np.int64)
        scl = np.empty(NT, np.float64)
        scl32 = np.empty(NT, np.float32)
        part = np.empty(NT, np.int32)
        cold = np.empty(NT, np.int64)
        # Tiles of RB rows by NT columns, each walked step by step (k in order) and row by
        # row: a step's slice of B (L rows of NT columns) and the tile's accumulators stay in
        # the L1/L2 caches while the tile's rows use them.  Per tile row and step, passes over
        # the NT columns (each vectorizes): the largest product exponent (int16 lanes, CH
        # products a pass); c read, the step's exponent and scale, c's truncated term; the
        # products' truncated terms (CH a pass); the rounding into the result's bits.
        for rb in range(r0, r1, RB):
            re_ = min(r1, rb + RB)
            for j0 in range(0, N, NT):
                nt = min(N, j0 + NT) - j0
                for s in range(nsteps):
                    k0 = s * L
                    for r in range(rb, re_):
                        bt = r // M
                        i = r - bt * M
                        orow = out[bt, i, j0:j0 + nt]
                        for j in range(nt):
                            mx[j] = -32768
                        for kc in range(0, L, CH):
                            k = k0 + kc
                            if CH == 8:
                                e0 = aexp[bt, i, k]
                                e1 = aexp[bt, i, k + 1]
                                e2 = aexp[bt, i, k + 2]
                                e3 = aexp[bt, i, k + 3]
                                e4 = aexp[bt, i, k + 4]
                                e5 = aexp[bt, i, k + 5]
                                e6 = aexp[bt, i, k + 6]
                                e7 = aexp[bt, i, k + 7]
                                b0 = bexp[bt, k, j0:j0 + nt]
                                b1 = bexp[bt, k + 1, j0:j0 + nt]
                                b2 = bexp[bt, k + 2, j0:j0 + nt]
                                b3 = bexp[bt, k + 3, j0:j0 + nt]
                                b4 = bexp[bt, k + 4, j0:j0 + nt]
                                b5 = bexp[bt, k + 5, j0:j0 + nt]
                                b6 = bexp[bt, k + 6, j0:j0 + nt]
                                b7 = bexp[bt, k + 7, j0:j0 + nt]
                                for j in range(nt):
                                    t0 = max(np.int16(e0 + b0[j]), np.int16(e1 + b1[j]))
                                    t1 = max(np.int16(e2 + b2[j]), np.int16(e3 + b3[j]))
                                    t2 = max(np.int16(e4 + b4[j]), np.int16(e5 + b5[j]))
                                    t3 = max(np.int16(e6 + b6[j]), np.int16(e7 + b7[j]))
                                    mx[j] = max(mx[j], max(max(t0, t1), max(t2, t3)))
                            else:
                                e0 = aexp[bt, i, k]
                                e1 = aexp[bt, i, k + 1]
                                e2 = aexp[bt, i, k + 2]
                                e3 = aexp[bt, i, k + 3]
                                b0 = bexp[bt, k, j0:j0 + nt]
                                b1 = bexp[bt, k + 1, j0:j0 + nt]
                                b2 = bexp[bt, k + 2, j0:j0 + nt]
                                b3 = bexp[bt, k + 3, j0:j0 + nt]
                                for j in range(nt):
                                    t0 = max(np.int16(e0 + b0[j]), np.int16(e1 + b1[j]))
                                    t1 = max(np.int16(e2 + b2[j]), np.int16(e3 + b3[j]))
                                    mx[j] = max(mx[j], max(t0, t1))
                        # c: its value and exponent (a zero has ZE; an f16 subnormal -14);
                        # the step's exponent; c's term truncated toward zero (fptosi)
                        cspecial = 0
                        if FUSE8 and L == 8:
                            # a step of 8 products (two per k16 on sm_75/sm_80/sm_89, tf32
                            # k8 on sm_90+): c, the products and the rounding in one pass
                            a0 = aval[bt, i, k0]
                            a1 = aval[bt, i, k0 + 1]
                            a2 = aval[bt, i, k0 + 2]
                            a3 = aval[bt, i, k0 + 3]
                            a4 = aval[bt, i, k0 + 4]
                            a5 = aval[bt, i, k0 + 5]
                            a6 = aval[bt, i, k0 + 6]
                            a7 = aval[bt, i, k0 + 7]
                            v0 = bval[bt, k0, j0:j0 + nt]
                            v1 = bval[bt, k0 + 1, j0:j0 + nt]
                            v2 = bval[bt, k0 + 2, j0:j0 + nt]
                            v3 = bval[bt, k0 + 3, j0:j0 + nt]
                            v4 = bval[bt, k0 + 4, j0:j0 + nt]
                            v5 = bval[bt, k0 + 5, j0:j0 + nt]
                            v6 = bval[bt, k0 + 6, j0:j0 + nt]
                            v7 = bval[bt, k0 + 7, j0:j0 + nt]
                            for j in range(nt):
                                cb = np.int64(orow[j])
                                cold[j] = cb
                                m, sc, c0, isspec = _c_read(cb, mx[j], s, ZE, CMIN, F, F32)
                                cspecial += isspec
                                t = c0 + (((np.int64(a0 * v0[j] * sc)
                                            + np.int64(a1 * v1[j] * sc))
                                           + (np.int64(a2 * v2[j] * sc)
                                              + np.int64(a3 * v3[j] * sc)))
                                          + ((np.int64(a4 * v4[j] * sc)
                                              + np.int64(a5 * v5[j] * sc))
                                             + (np.int64(a6 * v6[j] * sc)
                                                + np.int64(a7 * v7[j] * sc))))
                                orow[j] = _round_out(t, m, F, q, PZ, F32)
                            if arow[bt, i, s] or bcol[bt, s, N] or cspecial:
                                _specials(aval, aspec, bval, bspec, cold, orow, bt, i, k0, L,
                                          j0, nt, out_kind, arow[bt, i, s], bcol[bt, s])
                            continue
                        for j in range(nt):
                            cb = np.int64(orow[j])
                            cold[j] = cb
                            m, sc, c0, isspec = _c_read(cb, mx[j], s, ZE, CMIN, F, F32)
                            cspecial += isspec
                            mx[j] = np.int16(m)
                            scl[j] = sc
                            if W32:
                                # 2**(F - maxe) as a binary32 (maxe is at least a nonzero
                                # product's exponent, so F - maxe <= 25 + 48; where every
                                # product is zero, any finite scale does: capped at 2**120)
                                scl32[j] = f32_from_bits(np.int32((min(F - m, 120) + 127) << 23))
                            acc[j] = c0
                        # every product times 2**(F - maxe) (exact), truncated toward zero
                        # to an integer (fptosi), summed exactly in int64
                        for kc in range(0, L, CH):
                            k = k0 + kc
                            if W32 and CH == 8:
                                # binary32: the product and its scaling exact (a term below
                                # 1 may underflow: it truncates to 0 all the same), truncated
                                # to an int32 (below 2**27), 8 summed in int32 (below 2**30)
                                a0 = aval[bt, i, k]
                                a1 = aval[bt, i, k + 1]
                                a2 = aval[bt, i, k + 2]
                                a3 = aval[bt, i, k + 3]
                                a4 = aval[bt, i, k + 4]
                                a5 = aval[bt, i, k + 5]
                                a6 = aval[bt, i, k + 6]
                                a7 = aval[bt, i, k + 7]
                                v0 = bval[bt, k, j0:j0 + nt]
                                v1 = bval[bt, k + 1, j0:j0 + nt]
                                v2 = bval[bt, k + 2, j0:j0 + nt]
                                v3 = bval[bt, k + 3, j0:j0 + nt]
                                v4 = bval[bt, k + 4, j0:j0 + nt]
                                v5 = bval[bt, k + 5, j0:j0 + nt]
                                v6 = bval[bt, k + 6, j0:j0 + nt]
                                v7 = bval[bt, k + 7, j0:j0 + nt]
                                for j in range(nt):
                                    sc32 = scl32[j]
                                    t01 = np.int32(np.int32(a0 * v0[j] * sc32)
                                                   + np.int32(a1 * v1[j] * sc32))
                                    t23 = np.int32(np.int32(a2 * v2[j] * sc32)
                                                   + np.int32(a3 * v3[j] * sc32))
                                    t45 = np.int32(np.int32(a4 * v4[j] * sc32)
                                                   + np.int32(a5 * v5[j] * sc32))
                                    t67 = np.int32(np.int32(a6 * v6[j] * sc32)
                                                   + np.int32(a7 * v7[j] * sc32))
                                    part[j] = np.int32(np.int32(t01 + t23)
                                                       + np.int32(t45 + t67))
                                # (a pass of its own: 32-bit lanes only above, 16 a vector)
                                for j in range(nt):
                                    acc[j] += part[j]
                            elif CH == 8:
                                a0 = aval[bt, i, k]
                                a1 = aval[bt, i, k + 1]
                                a2 = aval[bt, i, k + 2]
                                a3 = aval[bt, i, k + 3]
                                a4 = aval[bt, i, k + 4]
                                a5 = aval[bt, i, k + 5]
                                a6 = aval[bt, i, k + 6]
                                a7 = aval[bt, i, k + 7]
                                v0 = bval[bt, k, j0:j0 + nt]
                                v1 = bval[bt, k + 1, j0:j0 + nt]
                                v2 = bval[bt, k + 2, j0:j0 + nt]
                                v3 = bval[bt, k + 3, j0:j0 + nt]
                                v4 = bval[bt, k + 4, j0:j0 + nt]
                                v5 = bval[bt, k + 5, j0:j0 + nt]
                                v6 = bval[bt, k + 6, j0:j0 + nt]
                                v7 = bval[bt, k + 7, j0:j0 + nt]
                                for j in range(nt):
                                    sc = scl[j]
                                    acc[j] += (((np.int64(a0 * v0[j] * sc)
                                                 + np.int64(a1 * v1[j] * sc))
                                                + (np.int64(a2 * v2[j] * sc)
                                                   + np.int64(a3 * v3[j] * sc)))
                                               + ((np.int64(a4 * v4[j] * sc)
                                                   + np.int64(a5 * v5[j] * sc))
                                                  + (np.int64(a6 * v6[j] * sc)
                                                     + np.int64(a7 * v7[j] * sc))))
                            else:
                                a0 = aval[bt, i, k]
                                a1 = aval[bt, i, k + 1]
                                a2 = aval[bt, i, k + 2]
                                a3 = aval[bt, i, k + 3]
                                v0 = bval[bt, k, j0:j0 + nt]
                                v1 = bval[bt, k + 1, j0:j0 + nt]
                                v2 = bval[bt, k + 2, j0:j0 + nt]
                                v3 = bval[bt, k + 3, j0:j0 + nt]
                                for j in range(nt):
                                    sc = scl[j]
                                    acc[j] += ((np.int64(a0 * v0[j] * sc)
                                                + np.int64(a1 * v1[j] * sc))
                                               + (np.int64(a2 * v2[j] * sc)
                                                  + np.int64(a3 * v3[j] * sc)))
                        # one rounding into the result format
                        for j in range(nt):
                            orow[j] = _round_out(acc[j], np.int64(mx[j]), F, q, PZ, F32)
                        if arow[bt, i, s] or bcol[bt, s, N] or cspecial:
                            _specials(aval, aspec, bval, bspec, cold, orow, bt, i, k0, L, j0,
                                      nt, out_kind, arow[bt, i, s], bcol[bt, s])

    return fdpa_rows


def _specials(aval, aspec, bval, bspec, cold, orow, bt, i, k0, L, j0, nt,
              out_kind, arow_hit, bcol_s):
    """Redo the outputs of a step whose terms hold a NaN or an infinity (MMA-Sim's rule: the
    float64 sum of the products and c; a NaN becomes the canonical NaN).  ``cold``: c's bits
    as read before the step; ``orow``/``cold`` hold the columns j0 .. j0 + nt.  ``arow_hit``:
    the step's slice of A's row holds one; ``bcol_s[j]``: the step's slice of B's column j
    does.  A column where neither does has no special product: only its c can be special, so
    its products are not read; a NaN found ends the scan (the result is NaN whatever follows)."""
    for jj in range(nt):
        j = j0 + jj
        cb = cold[jj]
        if out_kind == OUT_F32:
            E, frac, neg, top = (cb >> 23) & 0xFF, cb & 0x7FFFFF, (cb >> 31) & 1, 0xFF
        else:
            E, frac, neg, top = (cb >> 10) & 0x1F, cb & 0x3FF, (cb >> 15) & 1, 0x1F
        hit = E == top
        nan = hit and frac != 0
        pinf = hit and frac == 0 and neg == 0
        ninf = hit and frac == 0 and neg == 1
        for kk in range(L if (arow_hit or bcol_s[j]) and not nan else 0):
            k = k0 + kk
            xa = aspec[bt, i, k]
            xb = bspec[bt, k, j]
            if xa == SPEC_NAN or xb == SPEC_NAN:
                nan = True
                hit = True
                break
            elif xa != 0 or xb != 0:
                hit = True
                if (xa == 0 and aval[bt, i, k] == 0) or (xb == 0 and bval[bt, k, j] == 0):
                    nan = True                          # inf * 0
                    break
                else:
                    na = xa == SPEC_NINF or (xa == 0 and aval[bt, i, k] < 0)
                    nb = xb == SPEC_NINF or (xb == 0 and bval[bt, k, j] < 0)
                    if na != nb:
                        ninf = True
                    else:
                        pinf = True
        if hit:
            orow[jj] = _special(nan, pinf, ninf, out_kind)


def _group_rows(asig, aexp, bsig, bexp, ssa, sea, sna, ssb, seb, snb, out, r0, r1, L, G, SB,
                F, SHIFT, ZE, GZ, PZ):
    """mxf4/mxf4nvf4: fp4 operands (decoded, man 1), scales (sig, exp, nan) per row of A and
    column of B for every SB elements of K; each step fuses c with L // G scaled sub-dots.
    SHIFT = F - 2 - (scale man bits of A + of B): a sub-dot's integer sum is in units of
    2**-2.  A zero c has the exponent ZE; with GZ, so has a sub-dot whose G products are all
    zero or whose scale factors multiply to zero (MMA-Sim 2.1.1; a sub-dot of nonzero
    products that sums to zero keeps its scale exponent); PZ: a zero result is +0."""
    M = asig.shape[1]
    K = asig.shape[2]
    N = bsig.shape[2]
    nsteps = K // L
    ng = L // G
    tsum = np.empty(ng, np.int64)
    texp = np.empty(ng, np.int64)
    for r in range(r0, r1):
        bt = r // M
        i = r - bt * M
        for j in range(N):
            cb = np.int64(out[bt, i, j])
            for s in range(nsteps):
                k0 = s * L
                csg, cex, csp = _decode_c(cb, OUT_F32)
                cex = ZE if csg == 0 else cex
                nan = csp == SPEC_NAN
                maxe = cex
                for g in range(ng):
                    kg = k0 + g * G
                    q = kg // SB
                    nan |= sna[bt, i, q] or snb[bt, q, j]
                    tot = np.int64(0)
                    nz = 0
                    for kk in range(G):
                        pa = np.int64(asig[bt, i, kg + kk]) << (aexp[bt, i, kg + kk])
                        pb = np.int64(bsig[bt, kg + kk, j]) << (bexp[bt, kg + kk, j])
                        tot += pa * pb
                        nz += pa * pb != 0
                    ss = np.int64(ssa[bt, i, q]) * np.int64(ssb[bt, q, j])
                    tsum[g] = tot * ss
                    texp[g] = np.int64(sea[bt, i, q]) + np.int64(seb[bt, q, j])
                    if GZ and (nz == 0 or ss == 0):
                        texp[g] = ZE
                    maxe = max(maxe, texp[g])
                if nan:
                    cb = np.int64(0x7FFFFFFF)
                    continue
                if csp != 0:                   # an infinite c stays (fp4 has no infinity)
                    continue
                sh = F - 23 - (maxe - cex)
                m = abs(csg)
                t = (m << sh) if sh >= 0 else (m >> min(-sh, 63))
                S = -t if csg < 0 else t
                for g in range(ng):
                    d = maxe - texp[g]
                    sh = SHIFT - d
                    m = abs(tsum[g])
                    t = (m << sh) if sh >= 0 else (m >> min(-sh, 63))
                    S += -t if tsum[g] < 0 else t
                cb = _finish(S, maxe, F, OUT_F32, 24, PZ)
            out[bt, i, j] = cb


def _fma_rows(a, b, out, r0, r1, payload):
    """f64: d = fma(a[k], b[k], d) for k = 0, 1, ... (IEEE, to nearest even).  With
    ``payload``, a NaN result is the first NaN of a[k], b[k], d quieted, or F64_DEFAULT_NAN
    when none is (inf * 0, inf - inf): MMA-Sim 2.1.1's fma (its C++ fma on x86-64)."""
    M = a.shape[1]
    K = a.shape[2]
    N = b.shape[2]
    for r in range(r0, r1):
        bt = r // M
        i = r - bt * M
        for j in range(N):
            d = out[bt, i, j]
            for k in range(K):
                x = a[bt, i, k]
                y = b[bt, k, j]
                r = _fma64(x, y, d)
                if payload and np.isnan(r):
                    q = np.int64(0x8000000000000)
                    if np.isnan(x):
                        r = f64_from_bits(bits_from_f64(x) | q)
                    elif np.isnan(y):
                        r = f64_from_bits(bits_from_f64(y) | q)
                    elif np.isnan(d):
                        r = f64_from_bits(bits_from_f64(d) | q)
                    else:
                        r = f64_from_bits(F64_DEFAULT_NAN)
                d = r
            out[bt, i, j] = d


_KEY = ("ptxfp.tensor.kernel", 10)
_decode_c = jit_cached(_decode_c, _KEY, inline="always")
_finish = jit_cached(_finish, _KEY, inline="always")
_special = jit_cached(_special, _KEY)
_specials = jit_cached(_specials, _KEY)
_c_read = jit_cached(_c_read, _KEY, inline="always")
_round_out = jit_cached(_round_out, _KEY, inline="always")
_FDPA: dict[tuple[int, int, int], Any] = {}


def fdpa_kernel(out_kind: int, P: int, w32: bool = False) -> Any:
    """The compiled block-step kernel for a result format, its products in float64 or (w32)
    float32 lanes (cached per process and on disk)."""
    key = (out_kind, P, int(w32))
    if key not in _FDPA:
        _FDPA[key] = jit_cached(_make_fdpa(out_kind, P, w32), _KEY + key, nogil=True,
                                error_model="numpy")
    return _FDPA[key]
group_rows = jit_cached(_group_rows, _KEY, nogil=True, error_model="numpy")
fma_rows = jit_cached(_fma_rows, _KEY, nogil=True)
