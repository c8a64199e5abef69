"""Targeted operand vectors for every arithmetic and cvt form: ``targeted(form, n, seed)``.

One generator for the oracle tests (``tests/vectors.py`` re-exports it), the GPU conformance
harness (``ptxfp.hw``) and vector files.  NumPy only: no gmpy2, nothing from ``tests/``.
Deterministic: the same form, ``n`` and ``seed`` give the same bits on every machine.

``targeted(spelling_or_instruction, n=20000, seed=0)`` returns the form's source operands in PTX
order (destination excluded), exactly as ``ptxfp.execute``/``ptxfp.convert`` take them: uint16
arrays for .f16/.bf16 operands, uint32 for .f16x2/.bf16x2 and .f32 operands, each of length
``n``.  The families aim at the places where an implementation of one rounding goes wrong:

- every pair (or many triples) of special values: signed zeros, the extreme subnormals, the
  smallest normal and its neighbours, 1 and its neighbours, the largest finite numbers,
  infinities and NaNs with payloads (0x7FF7/0xFFF7 OOB NaN, signalling 0x7C01 / 0x7F81, 0xFFFF);
- ties and near ties: operands whose exponents differ by about the precision (sums), products
  picked so that the exact product is exactly halfway between two neighbours or one unit off;
  fma with such a product and a tiny c (the double-rounding pattern of
  bf16 fma.rn(0x3F82, 0x3FA0, 0x0001) = 0x3FA3, always present with its mirror images:
  ``PINNED``);
- cancellation: c = -a*b exactly and to within a few units, x + (-x);
- exponents far apart (sticky bits for the directed modes);
- results around the smallest normal (ftz tininess), half the smallest subnormal, the largest
  finite number and the overflow threshold of every mode;
- cvt from .f32: every half value exactly, the midpoints between neighbours (ties) and a few
  f32 units either side (near ties, sticky bits), the subnormal boundaries (half the smallest
  subnormal, the smallest normal from below), the overflow threshold of every mode (the largest
  finite value, it plus half a unit, plus a unit), f32 subnormals (.ftz), NaN payloads;
- cvt to .f32: every one of the 65,536 inputs (cycled to ``n``), the specials first.

The rest of each set is random fill (uniform bits, values near 1, subnormal-heavy values).
Counts are checked before anything is allocated: ``n`` above ``MAX_N`` is a ``PtxfpError``.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..errors import PtxfpError

__all__ = ["targeted", "for_instruction", "operands", "lane_operands", "specials",
           "check_count", "Format", "F16", "BF16", "F32", "FORMATS", "PINNED",
           "DOUBLE_ROUNDING_WITNESS", "N_DEFAULT", "MAX_N", "families"]

#: operand arrays in PTX order (uint16 or uint32)
Operands = tuple[NDArray[Any], ...]
Rng = np.random.Generator

#: the most vectors one call builds (2**27 triples of uint32: 1.5 GiB)
MAX_N = 1 << 27


def check_count(n: Any, what: str = "vectors", limit: int = MAX_N) -> int:
    """``n`` as an int in [0, limit], or a one-line PtxfpError (before anything is allocated)."""
    try:
        k = int(n)
    except (TypeError, ValueError):
        raise PtxfpError(f"{what}: expected a count, got {n!r}") from None
    if k != n or k < 0:
        raise PtxfpError(f"{what}: expected a count >= 0, got {n!r}")
    if k > limit:
        raise PtxfpError(f"{what}: {k:,} is more than the {limit:,} one set can hold in memory")
    return k


@dataclass(frozen=True)
class Format:
    """A storage format's fields.  Code here compares formats by ``name``, so the oracle's own
    format objects (tests/oracle.py) work with every function as well."""
    name: str
    width: int      # storage bits
    ebits: int      # exponent field bits
    fbits: int      # stored fraction bits

    @property
    def precision(self) -> int:
        return self.fbits + 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin_normal(self) -> int:        # exponent of the smallest normal, 2**emin_normal
        return 1 - self.bias

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def exp_mask(self) -> int:
        return ((1 << self.ebits) - 1) << self.fbits

    @property
    def frac_mask(self) -> int:
        return (1 << self.fbits) - 1

    @property
    def inf_bits(self) -> int:
        return self.exp_mask

    @property
    def max_bits(self) -> int:
        return self.exp_mask - 1

    @property
    def one_bits(self) -> int:
        return self.bias << self.fbits


F16 = Format("f16", 16, 5, 10)
BF16 = Format("bf16", 16, 8, 7)
F32 = Format("f32", 32, 8, 23)
FORMATS = {f.name: f for f in (F16, BF16, F32)}

N_DEFAULT = 20_000

# ------------------------------------------------------------------------------------------
# Bits <-> float64 (all three formats are exact in float64)


def to_float(bits: Any, fmt: Format) -> NDArray[Any]:
    bits = np.asarray(bits)
    with np.errstate(all="ignore"):
        return _to_float(bits, fmt)


def _to_float(bits: NDArray[Any], fmt: Format) -> NDArray[Any]:
    if fmt.name == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt.name == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def from_float(x: Any, fmt: Format) -> NDArray[Any]:
    """Round float64 values to the nearest format value (ties to even; for bf16 through f32,
    which may round twice: these are constructions, their neighbours are added anyway)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if fmt.name == "f16":
            return np.asarray(x.astype(np.float16).view(np.uint16).astype(np.uint32))
        b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        if fmt.name == "f32":
            return np.asarray(b.astype(np.uint32))
        nan = (b & 0x7FFFFFFF) > 0x7F800000
        r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        return np.where(nan, 0x7FC0, r).astype(np.uint32)


def binade(x: Any) -> NDArray[Any]:
    """floor(log2(|x|)) for finite nonzero x."""
    return np.asarray(np.frexp(x)[1].astype(np.int64) - 1)


def nudge(bits: Any, k: Any, fmt: Format) -> NDArray[Any]:
    """Move the magnitude by k units in the last place (sign kept), staying finite."""
    bits = np.asarray(bits, dtype=np.int64)
    sign = bits & fmt.sign_bit
    mag = np.clip((bits & (fmt.sign_bit - 1)) + np.asarray(k, dtype=np.int64), 0, fmt.max_bits)
    return np.asarray((sign | mag).astype(np.uint32))


def compose(sign: Any, e: Any, f: Any, fmt: Format) -> NDArray[Any]:
    sign = np.asarray(sign, dtype=np.uint64)
    e = np.asarray(e, dtype=np.uint64)
    f = np.asarray(f, dtype=np.uint64)
    return np.asarray(((sign << (fmt.width - 1)) | (e << fmt.fbits) | f).astype(np.uint32))


# ------------------------------------------------------------------------------------------
# Special values


def specials(fmt: Format) -> NDArray[Any]:
    """Signed special and boundary values of fmt (bits)."""
    f = fmt.fbits
    one = fmt.one_bits
    mags = [
        0, 1, 2, 3, fmt.frac_mask >> 1, fmt.frac_mask,                # zero, subnormals
        1 << f, (1 << f) + 1, (2 << f) - 1, 2 << f,                     # smallest normals
        one - (1 << f), one - 1, one, one + 1, one + (1 << f),          # 0.5, 1-, 1, 1+, 2
        one + (1 << (f - 1)),                                           # 1.5
        fmt.max_bits - (1 << f), fmt.max_bits - 1, fmt.max_bits,        # largest finite
        fmt.inf_bits,                                                   # infinity
        fmt.inf_bits | 1, fmt.inf_bits | (1 << (f - 1)), fmt.exp_mask | fmt.frac_mask,  # NaNs
    ]
    # The value half an ulp of the largest finite number (its sum with max is the rn overflow
    # threshold): 2**(emax - p) where emax = bias.
    mags.append((fmt.bias - fmt.precision + fmt.bias) << f)
    mags.append(((fmt.bias - fmt.precision + fmt.bias) << f) - 1)
    out = set()
    for m in mags:
        out.add(m)
        out.add(m | fmt.sign_bit)
    if fmt.width == 16:
        out.update({0x7FF7, 0xFFF7})                                    # OOB NaN, both signs
    if fmt.name == "f32":
        # f16/bf16 boundaries seen from f32: 65504, 65520, 2**-14, 2**-24, 2**-133.
        for v in (65504.0, 65520.0, 2.0**-14, 2.0**-24, 2.0**-133, 2.0**-126):
            b = int(from_float(v, F32))
            out.update({b, b | fmt.sign_bit})
    return np.array(sorted(out), dtype=np.uint32)


# ------------------------------------------------------------------------------------------
# Random values


def uniform(rng: Rng, fmt: Format, n: int) -> NDArray[Any]:
    return rng.integers(0, 1 << fmt.width, n, dtype=np.uint64).astype(np.uint32)


def finite(rng: Rng, fmt: Format, n: int, elo: Any = 0, ehi: Any = None) -> NDArray[Any]:
    """Random finite values with exponent field in [elo, ehi] (0 = subnormal or zero)."""
    ehi = (1 << fmt.ebits) - 2 if ehi is None else ehi
    return compose(rng.integers(0, 2, n), rng.integers(elo, ehi + 1, n),
                   rng.integers(0, 1 << fmt.fbits, n, dtype=np.uint64), fmt)


def clustered(rng: Rng, fmt: Format, n: int, spread: int = 6) -> NDArray[Any]:
    """Random finite values within a few binades of 1 (their arithmetic rounds interestingly)."""
    return finite(rng, fmt, n, fmt.bias - spread, fmt.bias + spread)


def frac_pattern(rng: Rng, fmt: Format, n: int) -> NDArray[Any]:
    """Fractions that are zero, one, all ones, a half, or random."""
    choice = rng.integers(0, 5, n)
    pats = np.stack([np.zeros(n, np.uint64), np.ones(n, np.uint64),
                     np.full(n, fmt.frac_mask, np.uint64),
                     np.full(n, 1 << (fmt.fbits - 1), np.uint64),
                     rng.integers(0, 1 << fmt.fbits, n, dtype=np.uint64)])
    return pats[choice, np.arange(n)]


def at_binade(rng: Rng, E: Any, fmt: Format) -> NDArray[Any]:
    """Random-signed values whose binade is E (subnormal or zero below the normal range,
    infinity above: rounded through float64)."""
    E = np.asarray(E, dtype=np.int64)
    n = E.size
    f = frac_pattern(rng, fmt, n).astype(np.float64)
    x = np.ldexp(1.0 + f / (1 << fmt.fbits), np.clip(E, -1100, 1100).astype(np.int32))
    x = np.where(rng.integers(0, 2, n) == 1, -x, x)
    return from_float(x, fmt)


def signs(rng: Rng, n: int) -> NDArray[Any]:
    return np.where(rng.integers(0, 2, n) == 1, -1.0, 1.0)


# ------------------------------------------------------------------------------------------
# Targeted families: each returns a tuple of operand arrays (lane bits, c in c_fmt)


def _pairs_of(xs: NDArray[Any], ys: NDArray[Any], rng: Rng, n: int) -> Operands:
    if xs.size * ys.size <= n:
        return np.repeat(xs, ys.size), np.tile(ys, xs.size)
    return rng.choice(xs, n), rng.choice(ys, n)


def _sum_family(rng: Rng, xf: Format, yf: Format, op: str, n: int) -> list[Operands]:
    """x (in xf) op y (in yf) for add/sub: the mixed forms' y is the f32 c."""
    parts: list[Operands] = []
    sx, sy = specials(xf), specials(yf)
    parts.append(_pairs_of(sx, sy, rng, 4000))
    py = yf.precision
    # Exponent gaps around the precision (ties, near ties) and far apart (sticky bits).
    m = n // 5
    x = finite(rng, xf, m, 1)
    X = to_float(x, xf)
    gap = np.where(rng.integers(0, 3, m) == 0, rng.integers(py + 4, 3 * py + 30, m),
                   rng.integers(-3, py + 4, m))
    y = at_binade(rng, binade(X) - gap, yf)
    parts.append((x, y))
    parts.append((from_float(to_float(y, yf), xf), from_float(X, yf)))   # the other way round
    # Cancellation: exact zeros and a few units off, both signs.
    m = n // 8
    x = np.concatenate([finite(rng, xf, m), clustered(rng, xf, m)])
    X = to_float(x, xf)
    target = X if op == "sub" else -X
    y0 = from_float(target, yf)
    k = rng.integers(-4, 5, 2 * m)
    parts.append((x, nudge(y0, k, yf)))
    # Around the smallest normal of the result and half the smallest subnormal.
    m = n // 20
    x = finite(rng, xf, m, 0, 3)
    parts.append((x, finite(rng, yf, m, 0, 2)))
    for T in (2.0 ** yf.emin_normal, 2.0 ** (yf.emin_normal - yf.fbits - 1)):
        x = finite(rng, xf, m, 0, 6)
        X = to_float(x, xf)
        want = signs(rng, m) * T - X if op == "add" else X - signs(rng, m) * T
        y = nudge(from_float(want, yf), rng.integers(-3, 4, m), yf)
        parts.append((x, y))
    # Near the largest finite result: overflow in some modes, not in others.
    m = n // 20
    big = float(to_float(yf.max_bits, yf)[()])
    x = nudge(from_float(signs(rng, m) * min(big, float(to_float(xf.max_bits, xf)[()])), xf),
              -rng.integers(0, 4, m), xf)
    X = to_float(x, xf)
    with np.errstate(all="ignore"):
        half_ulp = 2.0 ** (int(binade(big)) - py)
        want = np.where(rng.integers(0, 2, m) == 1, np.sign(X) * big - X,
                        np.sign(X) * half_ulp * rng.integers(1, 4, m))
        if op == "sub":
            want = -want
    parts.append((x, nudge(from_float(want, yf), rng.integers(-2, 3, m), yf)))
    return parts


def _product_ties(rng: Rng, fmt: Format, out: Format, n: int,
                  tries: int = 400_000) -> Operands:
    """Pairs (a, b) whose exact product is halfway between two neighbours in out, or within
    a unit of the product's last bit of halfway."""
    a = clustered(rng, fmt, tries, 8)
    b = clustered(rng, fmt, tries, 8)
    P = to_float(a, fmt) * to_float(b, fmt)              # exact in float64
    E = np.maximum(binade(P), out.emin_normal)
    q = np.ldexp(np.abs(P), (out.precision - E).astype(np.int32))  # in half units of the lsb
    frac2 = np.mod(q, 2.0)
    tie = frac2 == 1.0
    near = (np.abs(frac2 - 1.0) < 2.0 ** -(fmt.precision - 1)) & ~tie
    idx = np.concatenate([np.nonzero(tie)[0][: n // 2], np.nonzero(near)[0][: n // 2]])
    return a[idx], b[idx]


def _product_targets(rng: Rng, fmt: Format, out: Format, n: int) -> Operands:
    """Pairs (a, b) in fmt with a*b near the smallest normal, half the smallest subnormal, the
    largest finite value and the rn overflow threshold of out (b solved for, then nudged)."""
    out_a, out_b = [], []
    mn = 2.0 ** out.emin_normal
    big = float(to_float(out.max_bits, out)[()])
    half_ulp_big = 2.0 ** (int(binade(big)) - out.precision)
    targets = (mn, mn * (1 - 2.0 ** -(out.precision + 1)), 2.0 ** (out.emin_normal - out.fbits - 1),
               2.0 ** (out.emin_normal - out.fbits), big, big + half_ulp_big)
    m = max(1, n // len(targets))
    for T in targets:
        lo = max(1, fmt.bias - (fmt.bias // 2))
        a = finite(rng, fmt, m, lo, fmt.bias + fmt.bias // 2)
        want = signs(rng, m) * T / np.abs(to_float(a, fmt))
        b = nudge(from_float(want, fmt), rng.integers(-3, 4, m), fmt)
        out_a.append(a)
        out_b.append(b)
    return np.concatenate(out_a), np.concatenate(out_b)


def _mul_family(rng: Rng, fmt: Format, n: int) -> list[Operands]:
    parts: list[Operands] = []
    s = specials(fmt)
    parts.append(_pairs_of(s, s, rng, 4000))
    parts.append(_product_ties(rng, fmt, fmt, n // 5))
    parts.append(_product_targets(rng, fmt, fmt, n // 4))
    m = n // 20                                              # scaling by powers of two
    a = finite(rng, fmt, m)
    b = compose(rng.integers(0, 2, m), rng.integers(0, (1 << fmt.ebits) - 1, m), 0, fmt)
    parts.append((a, b))
    return parts


def _fma_family(rng: Rng, fmt: Format, cf: Format, n: int) -> list[Operands]:
    """fma(a, b, c) with a, b in fmt and c (and the result) in cf."""
    parts: list[Operands] = []
    s, sc = specials(fmt), specials(cf)
    m = 3000
    parts.append((rng.choice(s, m), rng.choice(s, m), rng.choice(sc, m)))
    parts.append((rng.choice(s, m // 3), rng.choice(s, m // 3), uniform(rng, cf, m // 3)))
    parts.append((clustered(rng, fmt, m // 3), clustered(rng, fmt, m // 3), rng.choice(sc, m // 3)))

    def with_c(a: NDArray[Any], b: NDArray[Any],
               fn: Callable[[NDArray[Any], int], NDArray[Any]]) -> Operands:
        P = to_float(a, fmt) * to_float(b, fmt)
        return a, b, fn(P, a.size)

    # Products exactly at or near a tie of the result format, plus a tiny c of either sign:
    # the double-rounding pattern.
    a, b = _product_ties(rng, fmt, cf, n // 8)
    tiny = sc[(sc & cf.exp_mask) == 0]                  # signed zeros and subnormals
    parts.append((a, b, rng.choice(tiny, a.size)))
    parts.append(with_c(a, b, lambda P, k: from_float(-P * 2.0 ** -rng.integers(cf.precision - 2,
                                                                            cf.precision + 40, k), cf)))
    # Cancellation: c = -round(a*b) + a few units (the residual is the rounding error).
    m = n // 8
    a, b = clustered(rng, fmt, m, 10), clustered(rng, fmt, m, 10)
    parts.append(with_c(a, b, lambda P, k: nudge(from_float(-P, cf), rng.integers(-3, 4, k), cf)))
    # Exact cancellation: a product that fits, c its negation (zero with a sign to decide).
    a = finite(rng, fmt, m // 4, 1)
    b = compose(rng.integers(0, 2, m // 4), rng.integers(fmt.bias - 4, fmt.bias + 5, m // 4), 0, fmt)
    parts.append(with_c(a, b, lambda P, k: from_float(-P, cf)))
    # c at exponent gaps from the product (ties through c, sticky bits) and the reverse.
    m = n // 8
    a, b = clustered(rng, fmt, m, 12), clustered(rng, fmt, m, 12)
    gap = np.where(rng.integers(0, 3, m) == 0, rng.integers(cf.precision + 4, 80, m),
                   rng.integers(-3, cf.precision + 4, m))
    parts.append(with_c(a, b, lambda P, k: at_binade(rng, binade(P) + gap, cf)))
    parts.append(with_c(a, b, lambda P, k: at_binade(rng, binade(P) - gap, cf)))
    # Results around the smallest normal / half the smallest subnormal of the result format,
    # and around its largest finite value.
    a, b = _product_targets(rng, fmt, cf, n // 6)
    parts.append(with_c(a, b, lambda P, k: rng.choice(tiny, k)))
    mn = 2.0 ** cf.emin_normal
    m = n // 10
    a, b = clustered(rng, fmt, m, fmt.bias // 2), clustered(rng, fmt, m, fmt.bias // 2)
    T = signs(rng, m) * np.where(rng.integers(0, 2, m) == 1, mn, 2.0 ** (cf.emin_normal - cf.fbits - 1))
    parts.append(with_c(a, b, lambda P, k: nudge(from_float(T - P, cf), rng.integers(-2, 3, k), cf)))
    big = float(to_float(cf.max_bits, cf)[()])
    a, b = clustered(rng, fmt, m // 2, fmt.bias), clustered(rng, fmt, m // 2, fmt.bias)
    parts.append(with_c(a, b, lambda P, k: nudge(from_float(np.sign(P) * big - P * rng.integers(0, 2, k), cf),
                                                rng.integers(-2, 3, k), cf)))
    return parts


# ------------------------------------------------------------------------------------------
# Public entry points


def _seed(*key: Any) -> int:
    return zlib.crc32(repr(key).encode())


@functools.lru_cache(maxsize=128)
def lane_operands(opcode: str, lane_format: str, mixed: bool, n: int = N_DEFAULT,
                  seed: int = 0) -> Operands:
    """n operand tuples for one lane of a form (PTX operand order): a tuple of arrays, 16-bit
    lane operands as uint32 values < 2**16, the mixed forms' c as uint32 f32 bits.

    add/sub/mul get the same vectors whatever the modifiers, so the oracle's cache of exact
    results is shared across the forms of one operation."""
    n = check_count(n)
    key = (opcode, lane_format, mixed, n) + ((seed,) if seed else ())
    rng = np.random.default_rng(_seed(*key))
    fmt = FORMATS[lane_format]
    cf = F32 if mixed else fmt
    if opcode in ("add", "sub"):
        parts = _sum_family(rng, fmt, cf, opcode, n)
    elif opcode in ("min", "max"):       # pairs of close values and of specials
        parts = _sum_family(rng, fmt, fmt, "sub", n)
    elif opcode in ("neg", "abs"):
        parts = [(specials(fmt).astype(np.uint32),)]
    elif opcode == "mul":
        parts = _mul_family(rng, fmt, n)
    elif opcode in ("fma", "mad"):
        parts = _fma_family(rng, fmt, cf, n)
    else:       # a new opcode needs its own families here (DEVELOPERS.md, "Adding a form")
        raise PtxfpError(f"no targeted vector families for '{opcode}' yet")
    arity = len(parts[0])
    fmts = [fmt] * (arity - 1) + [cf]
    cols = [np.concatenate([p[i].astype(np.uint32) for p in parts]) for i in range(arity)]
    targeted = cols[0].size
    # Fill with random operands: uniform bits, clustered values, subnormal-heavy values.
    budget = max(n - min(targeted, (3 * n) // 4), 0)
    thirds = [budget - 2 * (budget // 3), budget // 3, budget // 3]
    rand_cols = []
    for f in fmts:
        rand_cols.append(np.concatenate([uniform(rng, f, thirds[0]),
                                         clustered(rng, f, thirds[1], 8 if f.name != "f32" else 20),
                                         finite(rng, f, thirds[2], 0, 3)]))
    if targeted > n - budget:
        keep = np.sort(rng.choice(targeted, n - budget, replace=False))
        cols = [c[keep] for c in cols]
    cols = [np.concatenate([c, r]) for c, r in zip(cols, rand_cols)]
    pinned = PINNED.get((opcode, lane_format, mixed), ())
    for i, row in enumerate(pinned[:n]):             # in place of random rows, never dropped
        for col, x in zip(cols, row):
            col[n - 1 - i] = x
    order = rng.permutation(n)
    out = tuple(c[order] for c in cols)
    for c in out:
        c.setflags(write=False)
    return out


@functools.lru_cache(maxsize=128)
def operands(opcode: str, lane_format: str, mixed: bool, lanes: int, n: int = N_DEFAULT,
             seed: int = 0) -> Operands:
    """Operand arrays for a form, in PTX order: uint16 for scalar half operands, uint32 for
    packed (.f16x2/.bf16x2) operands, .f32 operands and f32 c, uint64 for .f32x2. Packed lanes draw independent tuples from the
    scalar pool (lane 1 is a permutation of lane 0), so every lane mixes specials."""
    cols = lane_operands(opcode, lane_format, mixed, n, seed)
    k = FORMATS[lane_format].width                   # bits of a lane: 16, or 32 (.f32x2)
    if lanes == 2:
        key = ("lanes", opcode, lane_format, n) + ((seed,) if seed else ())
        perm = np.random.default_rng(_seed(*key)).permutation(n)
        wide = np.dtype(f"uint{2 * k}")
        out = tuple((c.astype(wide) | (c[perm].astype(wide) << wide.type(k))) for c in cols)
    elif mixed:
        out = tuple(c.astype(np.uint16) for c in cols[:-1]) + (cols[-1].astype(np.uint32),)
    else:
        out = tuple(c.astype(f"uint{k}") for c in cols)
    for c in out:
        c.setflags(write=False)
    return out


def for_instruction(ins: Any, n: int = N_DEFAULT, seed: int = 0) -> Operands:
    """Operands for an arithmetic instruction object (anything with opcode, lane_format, mixed,
    lanes)."""
    return operands(ins.opcode, ins.lane_format, bool(ins.mixed), int(ins.lanes), n, seed)


# The known double-rounding witness (docs/semantics.md): one rounding of the exact result gives
# 0x3FA3, rounding a*b+c in f32 first gives 0x3FA2.
DOUBLE_ROUNDING_WITNESS = ("fma.rn.bf16", (0x3F82, 0x3FA0, 0x0001), 0x3FA3)

# Operand rows always present in a form's vectors: the witness, its mirror images, and the same
# pattern in f16 (a*b = 1.5 + 2**-10 + 2**-11 is a tie, c = -2**-24 breaks it downward).
PINNED = {
    ("fma", "bf16", False): [(0x3F82, 0x3FA0, 0x0001), (0xBF82, 0x3FA0, 0x8001),
                             (0x3FA0, 0x3F82, 0x0001), (0x3F82, 0x3FA0, 0x8001)],
    ("fma", "f16", False): [(0x3C01, 0x3E00, 0x8001), (0xBC01, 0x3E00, 0x0001),
                            (0x3C01, 0x3E00, 0x0001)],
}


# ------------------------------------------------------------------------------------------
# cvt


def _halves_as_f32(h: Any, fmt: Format) -> NDArray[Any]:
    """16-bit patterns of fmt widened exactly to f32 bits (NaNs keep their payload bits)."""
    h = np.asarray(h, dtype=np.uint32)
    if fmt.name == "bf16":
        return np.asarray((h << 16).astype(np.uint32))
    with np.errstate(all="ignore"):
        return np.asarray(h.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32))


def _f32_nudge(bits: Any, k: Any) -> NDArray[Any]:
    """Move f32 bit patterns by k units (the sign bit kept; finite magnitudes stay finite)."""
    return nudge(bits, k, F32)


def _cvt_narrow_lane(rng: Rng, fmt: Format, n: int) -> NDArray[Any]:
    """f32 inputs for a cvt to fmt (one lane's worth)."""
    parts = [specials(F32), _halves_as_f32(specials(fmt), fmt)]
    # every value exact, the tie to its upper neighbour, both nudged by 0..3 f32 units
    m = max(1, n // 6)
    h = np.concatenate([finite(rng, fmt, m), specials(fmt)[: m]])
    h = h[(h & fmt.exp_mask) != fmt.exp_mask]
    lo, hi = to_float(h, fmt), to_float(nudge(h, 1, fmt), fmt)
    exact = _halves_as_f32(h, fmt)
    tie = from_float((lo + hi) / 2, F32)                 # exact: a half has < 24 bits
    k = rng.integers(-3, 4, h.size)
    parts += [exact, tie, _f32_nudge(exact, k), _f32_nudge(tie, k)]
    # subnormal boundaries and the smallest normal, from both sides
    mn = 2.0 ** fmt.emin_normal
    sub = 2.0 ** (fmt.emin_normal - fmt.fbits)
    m = max(1, n // 12)
    for T in (mn, sub / 2, sub, 1.5 * sub, mn - sub / 2):
        b = from_float(signs(rng, m) * T, F32)
        parts.append(_f32_nudge(b, rng.integers(-3, 4, m)))
    # the overflow thresholds: max finite, max + half a unit (rn), max + a unit (directed)
    big = float(to_float(fmt.max_bits, fmt)[()])
    unit = 2.0 ** (int(binade(big)) - fmt.fbits)
    for T in (big, big + unit / 2, big + unit, 2 * big):
        b = from_float(signs(rng, m) * T, F32)
        parts.append(_f32_nudge(b, rng.integers(-3, 4, m)))
    # f32 subnormals (.ftz flushes them), NaNs with every kind of payload
    parts.append(finite(rng, F32, m, 0, 0))
    nan = compose(rng.integers(0, 2, m), 0xFF, rng.integers(1, 1 << 23, m, dtype=np.uint64), F32)
    parts.append(nan)
    pool = np.concatenate([p.astype(np.uint32) for p in parts])
    fill = max(0, n - pool.size)
    if pool.size > n:
        keep = np.concatenate([np.arange(len(parts[0]) + len(parts[1])),
                               np.sort(rng.choice(np.arange(len(parts[0]) + len(parts[1]),
                                                            pool.size),
                                                  max(0, n - len(parts[0]) - len(parts[1])),
                                                  replace=False))])[:n]
        pool = pool[keep]
    rand = np.concatenate([uniform(rng, F32, fill - 2 * (fill // 3)),
                           clustered(rng, F32, fill // 3, 20),
                           _halves_as_f32(finite(rng, fmt, fill // 3), fmt)])
    out = np.concatenate([pool, rand]).astype(np.uint32)
    return out[rng.permutation(out.size)]


@functools.lru_cache(maxsize=32)
def cvt_operands(atype: str, dtype: str, n: int = N_DEFAULT, seed: int = 0) -> Operands:
    """Operands of a cvt form (``dtype`` the destination type, ``atype`` the source type)."""
    n = check_count(n)
    rng = np.random.default_rng(_seed("cvt", atype, dtype, n, seed))
    if atype != "f32":                                   # widening: every input, cycled
        fmt = FORMATS[atype]
        every = rng.permutation(1 << 16).astype(np.uint16)
        out: Operands = (np.resize(np.concatenate([specials(fmt).astype(np.uint16), every]),
                                   n),)
    else:
        fmt = FORMATS[dtype.replace("x2", "")]
        a = _cvt_narrow_lane(rng, fmt, n)
        if dtype.endswith("x2"):                         # b: the same pool, another order
            out = (a, _cvt_narrow_lane(rng, fmt, n))
        else:
            out = (a,)
    for c in out:
        c.setflags(write=False)
    return out


# ------------------------------------------------------------------------------------------
# The one public entry point over every form


def families() -> tuple[str, ...]:
    """The names of the families every targeted set draws from (for reports and docs)."""
    return ("specials", "ties and near ties", "double rounding", "cancellation",
            "far exponents", "subnormal boundaries", "overflow thresholds per mode", "random fill")


def _instruction(form: Any) -> Any:
    if not isinstance(form, str):
        return form
    from ..isa.spelling import parse
    return parse(form)


def targeted(form: Any, n: int = N_DEFAULT, seed: int = 0) -> Operands:
    """``n`` targeted vectors of one arithmetic or cvt form: a tuple of operand arrays in PTX
    order, each of length ``n`` (read-only; copy before writing), dtypes as ``ptxfp.execute``
    and ``ptxfp.convert`` take them.  ``form``: a spelling or a parsed instruction."""
    n = check_count(n)
    seed = int(seed)
    ins = _instruction(form)
    if ins.family == "cvt" and _small_cvt(ins):
        return small_cvt_operands(ins, n, seed)
    if ins.family == "cvt":
        return cvt_operands(ins.atype, ins.dtype, n, seed)
    return for_instruction(ins, n, seed)


def _small_cvt(ins: Any) -> bool:
    from ..ops.smallfloat import handles
    return bool(handles(ins))


def small_cvt_operands(ins: Any, n: int, seed: int = 0) -> Operands:
    """Targeted operands of a small-float cvt form (fp8/fp6/fp4/ue8m0, .rs): for each .f32
    source a mix of the destination's values, the midpoints between them, one f32 ulp either
    side, values past its largest finite, specials and uniform patterns; every other source
    (a packed source, rbits) uniform bit patterns of its width."""
    from ..core import types
    rng = np.random.default_rng([seed, zlib.crc32(str(ins).encode())])
    fmt = types.get(ins.dtype).fmt
    out = []
    for f in ins.operand_formats:
        w = types.width(f)
        if f != "f32" or fmt is None:
            dt = np.dtype(types.get(f).dtype_name)
            out.append(rng.integers(0, 1 << w, n, dtype=np.uint64).astype(dt))
            continue
        if fmt.name == "ue8m0":
            vals = 2.0 ** np.arange(-127, 128, dtype=np.float64)
        else:
            mags = np.array([fmt.value(b) for b in range(fmt.max_finite + 1)])
            vals = np.unique(mags[np.isfinite(mags)])
        mids = (vals[1:] + vals[:-1]) / 2
        with np.errstate(over="ignore"):     # ue8m0: 2**127 * 4 is an f32 infinity
            pool = np.concatenate([vals, mids, vals[-1:] * 1.5, vals[-1:] * 4]) \
                .astype(np.float32)
        k = rng.integers(0, pool.size, n)
        x = pool[k].view(np.uint32) + rng.integers(-1, 2, n).astype(np.uint32)
        x |= rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)
        special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001,
                            0x00000001, 0x7F7FFFFF], np.uint32)
        pick = rng.random(n)
        x = np.where(pick < 0.05, special[rng.integers(0, special.size, n)], x)
        x = np.where(pick > 0.85, rng.integers(0, 1 << 32, n, dtype=np.uint64)
                     .astype(np.uint32), x)
        out.append(x.astype(np.uint32))
    for a in out:
        a.setflags(write=False)
    return tuple(out)
