"""The conformance kit for the small-float and stochastic-rounding cvt forms: fp8 (e4m3x2,
e5m2x2), fp6 (e2m3x2, e3m2x2), fp4 (e2m1x2), ue8m0x2, the ``.rs`` x4 forms and the ``.rs``
forms into .f16x2/.bf16x2 (the forms ``smallfloat.handles``).  gen, ver and sweep reach this
module through ``Form.small``; the arithmetic and half-type cvt forms never do.

Vectors (``targeted``, ``random``, ``own_targeted``, ``exhaustive``):

- widening (f16x2 from fp8/fp6/fp4, bf16x2 from ue8m0): every source word (2**16, or 2**8 for
  e2m1x2), in the grid, in random and in an exhaustive sweep.
- narrowing (from f32, f16x2, bf16x2): a grid per destination format, in the source format's
  bits: zeros, every finite destination value, every midpoint between neighbours (the ties of
  rn), half the smallest subnormal, the rn overflow tie above the largest finite value and
  twice it, each of these and its neighbours one source ulp away (level 2: two), the source's
  smallest and largest subnormals and largest finite value, infinities and NaNs, both signs.
  Two f32 sources take the grid and the grid reversed; a packed source takes them as its
  upper and lower lane.
- ``.rs``: sources ``v + t * ulp / 2**K`` (v a destination value, ulp the gap to the next, K
  the random bits per lane: 8 for the x4 forms, 13 for f16, 16 for bf16; t in 0, 1,
  2**(K-1), 2**K - 1) against rbits 0, all ones, and per lane ``2**K - t`` (the carry
  threshold: the discarded bits plus these carry out) and ``2**K - t - 1`` (just below), each
  also as the 16-bit shared layout of ``policy.rs_x4_bits``.
- random: half uniform bits, half values log-uniform over the destination's range; rbits
  uniform.

Mismatch classes, each from an emulation computed here with NumPy on the lane codes: first
the two whole-word emulations (``lanes swapped``, ``result double-rounded``), then per lane
(the class of the first lane that differs, top lane first) the first that fits in this order:

``NaN not canonical``          both NaN, other bits
``NaN/inf where saturated``    expected the largest finite value (.satfinite), got NaN or inf
``saturated where inf/NaN``    expected NaN or inf, got the largest finite value
``NaN where a number`` / ``number where NaN``
``-0 where +0`` / ``+0 where -0``     (.relu: a negative result is +0)
``lanes swapped``              got is ptxfp's result with its lanes in reverse order (the
                               first source in the lowest lane)
``result double-rounded``      got equals ptxfp's result on the f32 sources rounded to f16
                               first (round to nearest even): converted via f16 (rn forms
                               from f32 only)
``off by one ulp``             same sign, neighbouring codes
``other``
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import types
from .common import CLASSES as ALL_CLASSES, SweepError, round_float, to_float

CLASSES = (
    "NaN not canonical",
    "NaN/inf where saturated",
    "saturated where inf/NaN",
    "NaN where a number",
    "number where NaN",
    "-0 where +0",
    "+0 where -0",
    "lanes swapped",
    "result double-rounded",
    "off by one ulp",
    "other",
)

#: (exponent bits, mantissa bits, bias, NaN kind, infinities) of the small lane formats
_FMT = {"e4m3": (4, 3, 7, "ones", False), "e5m2": (5, 2, 15, "ieee", True),
        "e2m3": (2, 3, 1, "none", False), "e3m2": (3, 2, 3, "none", False),
        "e2m1": (2, 1, 1, "none", False)}
_SRC_SPECIALS = {"f32": (1, 0x7FFFFF, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001),
                 "f16": (1, 0x3FF, 0x7BFF, 0x7C00, 0x7E00, 0x7C01),
                 "bf16": (1, 0x7F, 0x7F7F, 0x7F80, 0x7FC0, 0x7F81)}
_SIGN = {"f32": 0x80000000, "f16": 0x8000, "bf16": 0x8000}


def _lane(t: str) -> str:
    return t[:-2] if t[-2:] in ("x2", "x4") else t


def _uint(bits: int) -> type:
    return {8: np.uint8, 16: np.uint16}.get(bits, np.uint32)


@functools.lru_cache(maxsize=None)
def table(fmt: str) -> tuple:
    """(values of every code as float64 (NaN for NaN codes), container bits, sign bit or 0)."""
    if fmt in ("f16", "bf16"):
        return to_float(np.arange(1 << 16), fmt), 16, 0x8000
    if fmt == "ue8m0":
        v = np.ldexp(1.0, np.arange(256) - 127).astype(np.float64)
        v[255] = np.nan
        return v, 8, 0
    eb, mb, bias, nan, inf = _FMT[fmt]
    width = 1 + eb + mb
    c = 4 if width == 4 else 8
    code = np.arange(1 << c)
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    mag = np.where(e == 0, np.ldexp(m.astype(np.float64), 1 - bias - mb),
                   np.ldexp(1.0 + m / (1 << mb), e - bias))
    top = e == (1 << eb) - 1
    if nan == "ieee":
        mag = np.where(top, np.where(m == 0, np.inf, np.nan), mag)
    elif nan == "ones":
        mag = np.where(top & (m == (1 << mb) - 1), np.nan, mag)
    v = np.where((code >> (eb + mb)) & 1, -mag, mag)
    return v, c, 1 << (eb + mb)


def positives(fmt: str) -> np.ndarray:
    v = table(fmt)[0]
    return np.unique(v[np.isfinite(v) & (v > 0)])


def describe(bits: int, fmt: str) -> str:
    """A value reading of a small-float word, top lane first."""
    lane = _lane(fmt)
    v, c, _ = table(lane)
    n = max(1, types.width(fmt) // c)
    vals = [float(v[(int(bits) >> (c * k)) & ((1 << c) - 1)]) for k in reversed(range(n))]
    return "  ".join(f"[{c * k + c - 1}:{c * k}] {'nan' if x != x else repr(x)}"
                     for k, x in zip(reversed(range(n)), vals))


# ---- vectors ---------------------------------------------------------------------------------

def kind(form) -> str:
    ins = form.ins
    if ins.rounding == "rs":
        return "rs"
    return "narrow" if ins.atype in ("f32", "f16x2", "bf16x2") else "widen"


def _src_lane(form) -> str:
    return _lane(form.ins.atype)


def _to_bits(vals: np.ndarray, fmt: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        if fmt == "f32":
            return vals.astype(np.float32).view(np.uint32)
        return round_float(vals, fmt, "rn").astype(np.uint16)


def _with_neighbours(bits: np.ndarray, fmt: str, k: int) -> np.ndarray:
    sign = _SIGN[fmt]
    b = bits.astype(np.int64) & (sign - 1)
    out = [b] + [np.clip(b + d, 0, sign - 1) for j in range(1, k + 1) for d in (j, -j)]
    b = np.unique(np.concatenate(out + [np.array(_SRC_SPECIALS[fmt] + (0,), np.int64)]))
    return np.concatenate([b, b | sign]).astype(np.uint32 if fmt == "f32" else np.uint16)


def _dest_positives(form) -> np.ndarray:
    pos = positives(form.result_lane_small)
    if pos.size > 4096:                       # f16/bf16 destinations of .rs: a sample
        idx = np.unique(np.concatenate([np.arange(16), np.arange(pos.size - 16, pos.size),
                                        np.linspace(0, pos.size - 1, 480).astype(int)]))
        pos = pos[idx]
    return pos


def _grid(form, level: int) -> np.ndarray:
    pos = _dest_positives(form)
    mids = (pos[:-1] + pos[1:]) / 2
    over = pos[-1] + (pos[-1] - pos[-2]) / 2
    vals = np.concatenate([[0.0, pos[0] / 2, over, 2 * pos[-1]], pos, mids])
    sf = _src_lane(form)
    return _with_neighbours(_to_bits(vals, sf), sf, level)


def _rbits_k(form) -> int:
    lane = form.result_lane_small
    return {"f16": 13, "bf16": 16}.get(lane, 8)


def _rs_sources(form, level: int) -> tuple[np.ndarray, np.ndarray]:
    pos = _dest_positives(form)
    K = _rbits_k(form)
    ts = np.array([0, 1, 1 << (K - 1), (1 << K) - 1], np.float64)
    gap = np.diff(pos)
    vals = (pos[:-1, None] + ts[None, :] * gap[:, None] / 2.0 ** K).reshape(-1)
    vals = np.concatenate([vals, [0.0, pos[-1], 2 * pos[-1]]])
    src = _with_neighbours(_to_bits(vals, "f32"), "f32", level - 1)
    rs = [0, 0xFFFFFFFF]
    for t in (1, 1 << (K - 1), (1 << K) - 1):
        for r in ((1 << K) - t, (1 << K) - t - 1):
            if K == 8:
                rs += [r * 0x01010101, (r << 8) * 0x10001,
                       (((r << 8) - 1) & 0xFFFF) * 0x10001]
            else:
                rs += [r * 0x10001]
    return src, np.unique(np.array(rs, np.uint64)).astype(np.uint32)


def _pack(lanes: list, c: int, dt) -> np.ndarray:
    w = np.zeros(lanes[0].shape, np.uint64)
    for x in lanes:                           # top lane first
        w = (w << np.uint64(c)) | x.astype(np.uint64)
    return w.astype(dt)


def _spread(form, L: np.ndarray) -> tuple:
    """One lane list to the source operands of a narrowing form (PTX order)."""
    n = L.size
    cols = [L, L[::-1].copy(), np.roll(L, n // 3), np.roll(L, n // 2)]
    at = form.ins.atype
    if at in ("f16x2", "bf16x2"):
        return (_pack(cols[:2], 16, np.uint32),)
    nsrc = sum(1 for f in form.operand_formats if f == "f32")
    return tuple(np.ascontiguousarray(c) for c in cols[:nsrc])


def targeted(form, level: int = 1) -> tuple:
    k = kind(form)
    if k == "widen":
        w = form.operand_widths[0]
        return (np.arange(1 << w).astype(_uint(w)),)
    if k == "narrow":
        return _spread(form, _grid(form, level))
    src, rs = _rs_sources(form, level)
    ops = _spread(form, src)
    reps = rs.size
    return tuple(np.tile(x, reps) for x in ops) + (np.repeat(rs, src.size),)


def random(form, n: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    k = kind(form)
    if k == "widen":
        w = form.operand_widths[0]
        return (rng.integers(0, 1 << w, n, dtype=np.uint64).astype(_uint(w)),)
    pos = positives(form.result_lane_small)
    sf = _src_lane(form)
    L = []
    for _ in range(4):
        u = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        if sf != "f32":
            u = (u >> np.uint32(16)).astype(np.uint16)
        e = rng.uniform(np.log2(pos[0]) - 2, np.log2(pos[-1]) + 1.5, n)
        v = np.exp2(e) * np.where(rng.integers(0, 2, n) == 1, -1.0, 1.0)
        aimed = _to_bits(v, sf)
        L.append(np.where(rng.integers(0, 2, n) == 1, aimed, u).astype(u.dtype))
    at = form.ins.atype
    if at in ("f16x2", "bf16x2"):
        return (_pack(L[:2], 16, np.uint32),)
    nsrc = sum(1 for f in form.operand_formats if f == "f32")
    ops = tuple(L[:nsrc])
    if k == "rs":
        ops += (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),)
    return ops


def own_targeted(form, level: int, seed: int) -> tuple:
    """Random vectors where rounding via f16 first gives another result: double-rounding
    witnesses (empty for forms that cannot round twice so)."""
    ops = random(form, 1 << 14, seed)
    emu = _via_f16(form, ops)
    if emu is None:
        return tuple(x[:0] for x in ops)
    keep = emu != form.model(*ops)
    return tuple(x[keep] for x in ops)


def exhaustive_size(form) -> int:
    k = kind(form)
    if k == "rs":
        raise SweepError(f"--exhaustive: '{form.spelling}' has f32 sources and 32 random "
                         "bits; sweep it with --random N")
    if k == "widen":
        return 1 << form.operand_widths[0]
    return 1 << 32


def exhaustive(form, start: int, stop: int) -> tuple:
    """Operands of vectors start..stop of an exhaustive sweep: every source word (widening),
    every f32 a with b = ~a, or every packed f16x2/bf16x2 word (narrowing)."""
    i = np.arange(start, stop, dtype=np.uint64)
    if kind(form) == "widen":
        return (i.astype(_uint(form.operand_widths[0])),)
    a = i.astype(np.uint32)
    return (a,) if form.ins.atype != "f32" else (a, ~a)


# ---- classification ---------------------------------------------------------------------------

def _via_f16(form, ops) -> np.ndarray | None:
    ins = form.ins
    if ins.rounding != "rn" or ins.atype != "f32" or kind(form) != "narrow":
        return None
    with np.errstate(all="ignore"):
        twice = tuple(np.asarray(x).view(np.float32).astype(np.float16).astype(np.float32)
                      .view(np.uint32) for x in ops)
    return form.model(*twice)


def _lanes(d: np.ndarray, n: int, c: int) -> list:
    d = d.astype(np.int64)
    return [(d >> (c * (n - 1 - j))) & ((1 << c) - 1) for j in range(n)]


def classify(form, operands, expected, got, pol=None) -> np.ndarray:
    """Class indices (into the conformance CLASSES) of every vector; -1 where they agree."""
    ALL = ALL_CLASSES
    expected = np.asarray(expected)
    got = np.asarray(got)
    out = np.full(expected.shape[0], -1, np.int8)
    bad = np.nonzero(expected != got)[0]
    if not bad.size:
        return out
    ops = tuple(np.asarray(x)[bad] for x in operands)
    e_all = expected[bad].astype(np.int64)
    g_all = got[bad].astype(np.int64)
    fmt = form.result_lane_small
    vals, c, sign = table(fmt)
    n = form.result_width // c
    E, G = _lanes(e_all, n, c), _lanes(g_all, n, c)
    swapped = _pack([x for x in reversed(E)], c, np.uint64).astype(np.int64)
    twice = _via_f16(form, ops)
    finite = np.isfinite(vals)
    maxmag = np.abs(vals[finite]).max()
    lane_cls = []
    for e, g in zip(E, G):
        lc = np.full(bad.size, -1, np.int8)
        ev, gv = vals[e], vals[g]
        en, gn = np.isnan(ev), np.isnan(gv)
        num = ~en & ~gn
        emag, gmag = e & ~sign, g & ~sign
        ok = e == g

        def lput(mask, name):
            lc[mask & ~ok] = ALL.index(name)

        lput(np.ones_like(ok), "other")
        lput(num & ((e & sign) == (g & sign)) & (np.abs(emag - gmag) == 1), "off by one ulp")
        lput((ev == 0) & (g == sign) & (sign != 0), "-0 where +0")
        lput((e == sign) & (gv == 0) & (sign != 0), "+0 where -0")
        lput(~en & gn, "NaN where a number")
        lput(en & ~gn, "number where NaN")
        lput((~np.isfinite(ev)) & (np.abs(gv) == maxmag), "saturated where inf/NaN")
        lput((np.abs(ev) == maxmag) & ~np.isfinite(gv), "NaN/inf where saturated")
        lput(en & gn, "NaN not canonical")
        lane_cls.append(lc)
    first = np.full(bad.size, -1, np.int8)
    for lc in lane_cls:
        first = np.where(first >= 0, first, lc)
    cls = first

    def put(mask, name):
        cls[mask] = ALL.index(name)

    put((g_all == swapped) & (swapped != e_all), "lanes swapped")
    if twice is not None:
        t = np.asarray(twice).astype(np.int64)
        put((g_all == t) & (t != e_all), "result double-rounded")
    out[bad] = cls
    return out
