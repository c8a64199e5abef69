"""Input vectors for the hardware harness: random, targeted, and exhaustive.

Every generator returns the source operands of a form in PTX order (``ins.operand_names``), as
NumPy arrays of the operand's storage width: uint16 for .f16/.bf16, uint32 for .f16x2/.bf16x2
and for the .f32 operand c of the mixed forms.  Generators are deterministic in their seed.

- ``special_values(fmt)``: ±0, subnormals (smallest, largest), the smallest normal and its
  neighbours, ±1 and its neighbours, max finite, ±inf, quiet and signalling NaNs with payloads
  (0x7FF7 and 0xFFF7, the OOB-NaN and its negative, among them).
- ``special_grid(ins)``: every combination of special values over the operands, and for packed
  forms the same again with the lanes swapped.
- ``targeted(ins, n, seed)``: ``ptxfp.vectors.targeted``, the package's targeted families (ties,
  near ties, double-rounding witnesses, cancellation, far exponents, subnormal boundaries,
  overflow thresholds per mode, specials); no gmpy2 needed.
- ``random_vectors(ins, n, seed)``: a mix of uniform bit patterns and "aimed" vectors whose last
  operand is chosen so that the exact result lands on an interesting magnitude (zero by
  cancellation, the subnormal range, the smallest normal, 1.0 for .sat, max finite); aimed
  vectors exercise rounding, underflow and overflow far more than uniform bits do.
- ``exhaustive_chunks(ins, ...)``: all 2**32 pairs (a, b) of a 16-bit binary form, chunked; fma
  forms once per fixed c; packed forms cover every pair once across their two lanes.
"""

from __future__ import annotations

from typing import Any

import concurrent.futures as _cf

import numpy as np

from ..core import types
from .. import vectors as _package_vectors
from ..isa.spelling import parse


def is_cvt(ins):
    return ins.family == "cvt"


def is_sfu(ins: Any) -> bool:
    """The SFU forms (``.approx``, ``div.full``): unary but for div; computed per target."""
    return ins.family == "sfu"


def parse_form(spelling):
    """The parsed Instruction of a spelling (any family); an Instruction as it is."""
    return parse(spelling) if isinstance(spelling, str) else spelling

#: interesting bit patterns per lane format
SPECIALS = {
    "f16": (
        0x0000, 0x8000,                  # ±0
        0x0001, 0x8001, 0x0200, 0x03FF, 0x83FF,   # subnormals: smallest, middle, largest
        0x0400, 0x8400, 0x0401,          # smallest normal and its neighbour
        0x3800, 0x3BFF, 0x3C00, 0xBC00, 0x3C01, 0x4000,   # around 1.0 (the .sat bound)
        0x7BFF, 0xFBFF,                  # max finite
        0x7C00, 0xFC00,                  # ±inf
        0x7E00, 0xFE00, 0x7FFF, 0xFFFF,  # quiet NaNs
        0x7FF7, 0xFFF7,                  # the OOB-NaN, and with the sign bit
        0x7C01, 0xFC01, 0x7DFF,          # signalling NaNs (payloads)
    ),
    "bf16": (
        0x0000, 0x8000,
        0x0001, 0x8001, 0x0040, 0x007F, 0x807F,
        0x0080, 0x8080, 0x0081,
        0x3F00, 0x3F7F, 0x3F80, 0xBF80, 0x3F81, 0x4000,
        0x7F7F, 0xFF7F,
        0x7F80, 0xFF80,
        0x7FC0, 0xFFC0, 0x7FFF, 0xFFFF,
        0x7FF7, 0xFFF7,
        0x7F81, 0xFF81, 0x7FBF,
    ),
    "f32": (
        0x00000000, 0x80000000,
        0x00000001, 0x80000001, 0x00400000, 0x007FFFFF, 0x807FFFFF,
        0x00800000, 0x80800000, 0x00800001,
        0x3F000000, 0x3F7FFFFF, 0x3F800000, 0xBF800000, 0x3F800001, 0x40000000,
        0x33800000, 0x38800000, 0x387FE000,     # f16 smallest subnormal / normal, near them
        0x7F7FFFFF, 0xFF7FFFFF,
        0x7F800000, 0xFF800000,
        0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0xFFFFFFFF,
        0x7FFEE000, 0x7FC00123,                  # NaNs with payloads
        0x7F800001, 0xFF800001, 0x7FBFFFFF,      # signalling NaNs
    ),
    "f64": (
        0x0000000000000000, 0x8000000000000000,
        0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFF,
        0x0010000000000000, 0x8010000000000000,
        0x3FE0000000000000, 0x3FEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000,
        0x3FF0000000000001, 0x4000000000000000,
        0x3810000000000000, 0x380FFFFFFFFFFFFF,     # the f32 normal bound
        0x36A0000000000000,                         # the f32 subnormal bound
        0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
        0x7FF0000000000000, 0xFFF0000000000000,
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF,
        0x7FF0000000000001, 0x7FF4000000000000,    # signalling NaNs
    ),
}


def special_values(fmt):
    """The special bit patterns of a lane format ('f16', 'bf16', 'f32'), as an array."""
    fmt = types.lane_format(fmt).name
    return np.array(SPECIALS[fmt], dtype=_dtype(fmt))


def _ins(spelling):
    return parse_form(spelling)


def _dtype(fmt):
    return np.dtype(f"uint{types.width(fmt)}")


# ---- float <-> bits, NumPy only (inputs need not be rounded well: any pattern is an input) ---

def decode(bits, fmt):
    """Bit patterns of a lane format (``'f16'``, ``'bf16'``, ``'f32'``) to float64 (exact)."""
    return _package_vectors.to_float(bits, _package_vectors.FORMATS[fmt])


def encode(x, fmt):
    """float64 to bit patterns of a lane format, roughly to nearest (bf16 truncates)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "f16":
            return x.astype(np.float16).view(np.uint16)
        f = x.astype(np.float32).view(np.uint32)
        if fmt == "bf16":
            return (f >> np.uint32(16)).astype(np.uint16)
        return f


def _uniform(rng, n, fmt):
    hi = 1 << types.width(fmt)
    return rng.integers(0, hi, n, dtype=np.uint64).astype(_dtype(fmt))


def _finite(rng, n, fmt, exp_lo=None, exp_hi=None):
    """Random finite values with exponent fields in [exp_lo, exp_hi] (defaults: all finite)."""
    f = types.lane_format(fmt)
    ebits, mbits = f.exp_bits, f.man_bits
    emax = (1 << ebits) - 2
    lo = 0 if exp_lo is None else exp_lo
    hi = emax if exp_hi is None else exp_hi
    e = rng.integers(lo, hi + 1, n, dtype=np.int64).clip(0, emax)
    m = rng.integers(0, 1 << mbits, n, dtype=np.int64)
    s = rng.integers(0, 2, n, dtype=np.int64)
    bits = (s << (ebits + mbits)) | (e << mbits) | m
    return bits.astype(_dtype(fmt))


def _targets(rng, n, fmt):
    """Magnitudes worth landing on: 0, the subnormal range, the smallest normal, 1.0, max."""
    lane = {"f16": (-24, -14, 15), "bf16": (-133, -126, 127), "f32": (-149, -126, 127)}[fmt]
    tiny, emin, emax = lane
    kind = rng.integers(0, 6, n)
    mant = 1.0 + rng.random(n)
    sign = np.where(rng.integers(0, 2, n) == 1, -1.0, 1.0)
    exps = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3, kind == 4],
        [np.full(n, -1000), rng.integers(tiny, emin, n), np.full(n, emin - 1),
         rng.integers(-2, 1, n), np.full(n, emax)],
        rng.integers(tiny, emax + 1, n))
    t = sign * mant * np.exp2(exps.astype(np.float64))
    # near the smallest normal, from just below: exact results that round up to it
    t = np.where(kind == 2, sign * np.exp2(float(emin)) * (1 - np.exp2(-rng.integers(1, 30, n)
                                                                        .astype(float))), t)
    return np.where(kind == 0, 0.0, t)


def _aimed_lane(rng, n, ins, fmt_a, fmt_c):
    """One lane of aimed vectors: random leading operands, the last chosen to hit a target."""
    a = _finite(rng, n, fmt_a)
    xa = decode(a, fmt_a)
    t = _targets(rng, n, ins.result_format)
    wiggle = rng.integers(-3, 4, n)
    with np.errstate(all="ignore"):
        if ins.opcode == "mul":
            b = encode(t / xa, fmt_a)
            return a, (b.astype(np.int64) + wiggle).astype(_dtype(fmt_a)) & _mask(fmt_a)
        if ins.opcode in ("fma", "mad"):
            b = _finite(rng, n, fmt_a)
            c = encode(t - xa * decode(b, fmt_a), fmt_c)
            return a, b, ((c.astype(np.int64) + wiggle) & _mask(fmt_c)).astype(_dtype(fmt_c))
        other = t - xa if ins.opcode == "add" else xa - t
        last_fmt = fmt_c if ins.mixed else fmt_a
        last = encode(other, last_fmt)
        last = ((last.astype(np.int64) + wiggle) & _mask(last_fmt)).astype(_dtype(last_fmt))
        return a, last


def _mask(fmt):
    return (1 << types.width(fmt)) - 1


def _lane_operands(rng, n, ins, how):
    lane = ins.lane_format
    fmts = ["f32" if (ins.mixed and name == "c") else lane for name in ins.operand_names]
    if how == "uniform":
        return tuple(_uniform(rng, n, f) for f in fmts)
    if how == "close":        # exponents within a few binades of each other: real roundings
        e0 = rng.integers(0, {"f16": 31, "bf16": 255, "f32": 255}[lane], n)
        ops = []
        for f in fmts:
            e = e0 + (rng.integers(-4, 5, n) if f == lane else 112 * (lane == "f16") +
                      rng.integers(-12, 13, n))
            ops.append(_finite_exp(rng, f, e))
        return tuple(ops)
    if ins.opcode in ("min", "max", "neg", "abs"):   # no rounding to aim at: close values
        return _lane_operands(rng, n, ins, "close")
    return _aimed_lane(rng, n, ins, lane, "f32" if ins.mixed else lane)


def _finite_exp(rng, fmt, e):
    f = types.lane_format(fmt)
    ebits, mbits = f.exp_bits, f.man_bits
    n = e.size
    e = np.asarray(e, dtype=np.int64).clip(0, (1 << ebits) - 2)
    m = rng.integers(0, 1 << mbits, n, dtype=np.int64)
    s = rng.integers(0, 2, n, dtype=np.int64)
    return ((s << (ebits + mbits)) | (e << mbits) | m).astype(_dtype(fmt))


def _pack(lo, hi):
    """Two lanes in one operand, lane 0 low: 16-bit lanes in a uint32, 32-bit (.f32x2) in a
    uint64."""
    k = 8 * lo.dtype.itemsize
    wide = np.dtype(f"uint{2 * k}")
    return lo.astype(wide) | (hi.astype(wide) << wide.type(k))


def random_vectors(spelling, n, seed=0):
    """``n`` random vectors for a form: half uniform bit patterns, a quarter with operands of
    close exponents, a quarter aimed at interesting results.  Packed forms draw each lane on its
    own (lanes of one vector come from different strategies)."""
    ins = _ins(spelling)
    rng = np.random.default_rng(seed)
    if is_sfu(ins):
        return _sfu_vectors(ins, n, rng)
    if _small(ins):
        return _small_vectors(ins, n, rng)
    if is_cvt(ins):
        return _cvt_random(ins, n, rng)
    parts = [("uniform", n - 2 * (n // 4)), ("close", n // 4), ("aimed", n // 4)]

    def one_lane():
        chunks = [_lane_operands(rng, k, ins, how) for how, k in parts if k]
        if not chunks:
            return tuple(np.zeros(0, _dtype(f)) for f in _formats(ins, lanes=True))
        return tuple(np.concatenate(col) for col in zip(*chunks))

    if ins.lanes == 1:
        return one_lane()
    lo, hi = one_lane(), one_lane()
    perm = rng.permutation(n)
    return tuple(_pack(x, y[perm]) for x, y in zip(lo, hi))


def _formats(ins, lanes=False):
    """Storage format of each operand, in PTX order."""
    if lanes:
        return tuple("f32" if (ins.mixed and n == "c") else ins.lane_format
                     for n in ins.operand_names)
    return ins.operand_formats


def special_grid(spelling):
    """Every combination of special values over the operands (packed forms: the combination in
    lane 0 with the reversed list in lane 1, and the same with the lanes swapped)."""
    ins = _ins(spelling)
    if _small(ins):
        return _small_targeted(ins)
    if is_cvt(ins):
        return _cvt_targeted(ins)
    lists = [special_values(f) for f in _formats(ins, lanes=True)]
    grid = [g.reshape(-1) for g in np.meshgrid(*lists, indexing="ij")]
    if ins.lanes == 1:
        return tuple(grid)
    rev = [g[::-1] for g in grid]
    return tuple(np.concatenate([_pack(g, r), _pack(r, g)]) for g, r in zip(grid, rev))


def targeted(spelling, n, seed=0):
    """``n`` vectors of the package's targeted families (``ptxfp.vectors.targeted``; the SFU
    forms: values near powers of two and their boundaries, ``_sfu_targeted``)."""
    ins = _ins(spelling)
    if is_sfu(ins):
        return _sfu_targeted(ins, n, np.random.default_rng(seed))
    return _package_vectors.targeted(ins, n, seed)


#: the names of the vector sets, in the order they run
SET_GRID, SET_TARGETED, SET_RANDOM = "special grid", "targeted", "random"


def vector_sets(spelling, n_random=0, seed=0, n_targeted=0):
    """The fixed vector sets run for a form: ``[(name, operands), ...]``: the special grid, then
    ``n_targeted`` targeted vectors, then (when asked) ``n_random`` random ones in one set."""
    sets = [(SET_GRID, special_grid(spelling))]
    if n_targeted:
        sets.append((SET_TARGETED, targeted(spelling, n_targeted, seed)))
    if n_random:
        sets.append((SET_RANDOM, random_vectors(spelling, n_random, seed)))
    return sets


# ---- exhaustive sweeps ----------------------------------------------------------------------

#: default fixed c values for exhaustive fma sweeps: -0 (the product alone, exact zero signs)
#: and 1.0 (cancellation near 1, the .sat bound)
EXHAUSTIVE_C = {"f16": (0x8000, 0x3C00), "bf16": (0x8000, 0x3F80), "f32": (0x80000000, 0x3F800000)}

PAIRS = 1 << 32


def exhaustive_eligible(spelling):
    """Whether every (a, b) pair of the form can be swept: 16-bit a and b (add/sub/mul, fma and
    mixed fma with c fixed, packed forms over their two lanes); mixed add/sub (a 16-bit, c 32-bit)
    cannot, nor can the .f32/.f32x2 forms (2^64 pairs); min/max/neg/abs are not swept (bit
    selections: the special grid and random vectors cover them).  Every cvt form can (all 2^32
    f32 inputs, or all 2^16 half inputs), and every one-operand SFU form of 16 or 32 bits (all
    2^32 .f32 or packed inputs, all 2^16 .f16/.bf16 ones); not div (two operands) nor .f64."""
    ins = _ins(spelling)
    if is_sfu(ins):
        return len(ins.operand_names) == 1 and _width(ins.operand_formats[0]) in (16, 32)
    if ins.rounding == "rs":
        return False                      # random bits: not one sweep of the inputs
    if is_cvt(ins):
        return True
    return ins.family == "arith" and "b" in ins.operand_names and \
        types.lane_format(ins.atype).width == 16


def exhaustive_description(spelling):
    ins = _ins(spelling)
    if is_sfu(ins):
        w = _width(ins.operand_formats[0])
        return f"all 2^{w} inputs" + (" (both lanes)" if ins.lanes == 2 else "")
    if not is_cvt(ins):
        return "all 2^32 (a, b) pairs"
    if not ins.narrowing:
        return "all 2^16 inputs"
    return "all 2^32 f32 inputs" + (" in each half (b = ~a)" if ins.lanes == 2 else "")


def exhaustive_c_values(spelling, c_values=None):
    """The fixed c values an exhaustive sweep of the form uses (``(None,)`` when it has no c)."""
    ins = _ins(spelling)
    if ins.opcode != "fma":
        return (None,)  # add/sub/mul and cvt
    fmt = "f32" if ins.mixed else ins.lane_format
    return tuple(c_values) if c_values else EXHAUSTIVE_C[fmt]


def exhaustive_size(spelling):
    """Vectors in one sweep (for one c): 2**32 scalar, 2**31 packed (two pairs a vector);
    cvt: 2**32 f32 inputs (packed: b = ~a), 2**16 half inputs."""
    ins = _ins(spelling)
    if is_sfu(ins):
        return 1 << _width(ins.operand_formats[0])
    if is_cvt(ins):
        if not ins.narrowing and _small(ins):
            return 1 << _width(ins.operand_formats[0])     # 2**16, 2**8 for .e2m1x2
        return PAIRS if ins.narrowing or _small(ins) else 1 << 16
    return PAIRS // ins.lanes


def exhaustive_chunk(spelling, start, stop, c=None):
    """Vectors ``start..stop`` of the sweep of a form, operands in PTX order.

    Scalar forms: vector ``i`` is ``a = i >> 16, b = i & 0xFFFF``.  Packed forms: vector ``i``
    holds pair ``i`` in lane 0 and pair ``i + 2**31`` in lane 1.  ``c`` (fma) is fixed, and
    replicated into both lanes of a packed form.
    """
    ins = _ins(spelling)
    n = stop - start
    if is_sfu(ins):                                     # one source: every pattern in turn
        w = _width(ins.operand_formats[0])
        return (np.arange(start, stop, dtype=np.uint64).astype(_bits_dtype(w)),)
    if is_cvt(ins):
        if _small(ins) and len(ins.operand_names) == 1:     # one packed source: every pattern
            w = _width(ins.operand_formats[0])
            return (np.arange(start, stop, dtype=np.uint64).astype(_bits_dtype(w)),)
        if not ins.narrowing:
            return (np.arange(start, stop, dtype=np.uint32).astype(np.uint16),)
        a = np.arange(start, stop, dtype=np.uint32)
        return (a, ~a) if ins.lanes == 2 else (a,)
    if start % 65536 == 0 and n % 65536 == 0:
        # whole rows of b: a repeats, b counts 0..0xFFFF (fast: no per-element arithmetic)
        rows = n // 65536
        row_b = np.tile(np.arange(65536, dtype=np.uint16), rows)
        a0 = np.repeat(np.arange(start >> 16, (start >> 16) + rows, dtype=np.uint16), 65536)
        if ins.lanes == 1:
            a, b = a0, row_b
        else:
            a1 = a0.astype(np.uint32) + np.uint32(1 << 15)     # pair i + 2**31: a + 0x8000
            a = a0.astype(np.uint32) | (a1 << np.uint32(16))
            b = row_b.astype(np.uint32) * np.uint32(0x10001)
        return _with_c(ins, a, b, n, c)
    i = np.arange(start, stop, dtype=np.uint32)          # every index fits in 32 bits
    sh, lo16 = np.uint32(16), np.uint32(0xFFFF)
    if ins.lanes == 1:
        a = (i >> sh).astype(np.uint16)
        b = (i & lo16).astype(np.uint16)
    else:
        j = i + np.uint32(PAIRS // 2)
        a = (i >> sh) | ((j >> sh) << sh)
        b = (i & lo16) | ((j & lo16) << sh)
    return _with_c(ins, a, b, i.size, c)


def exhaustive_operands(spelling, start, stop, threads=1):
    """Vectors ``start..stop`` of the sweep without c (fma: the fixed c is the caller's
    constant, kept on the GPU): the same a and b as ``exhaustive_chunk``, built by ``threads``
    threads over slices of 65,536 vectors (NumPy releases the GIL for the work)."""
    ins = _ins(spelling)
    n = stop - start
    names = [x for x in ins.operand_names if x != "c"]
    if not (is_cvt(ins) or is_sfu(ins)) and start % 65536 == 0 and n % 65536 == 0 and n:
        return _rows(ins, start >> 16, n >> 16, threads)
    if threads <= 1 or n < (1 << 20):
        return exhaustive_chunk(ins, start, stop)[:len(names)]
    fmts = dict(zip(ins.operand_names, ins.operand_formats))
    outs = [np.empty(n, _dtype(fmts[x])) for x in names]
    step = max(1 << 16, -(-n // (4 * threads)) // 65536 * 65536)

    def fill(lo):
        hi = min(stop, lo + step)
        for o, part in zip(outs, exhaustive_chunk(ins, lo, hi)):
            o[lo - start:hi - start] = part

    with _cf.ThreadPoolExecutor(threads) as pool:
        list(pool.map(fill, range(start, stop, step)))
    return tuple(outs)


#: the b column of whole rows: the same for every aligned chunk of one size (read-only)
_B_ROWS = {}


def _b_rows(lanes, rows):
    key = (lanes, rows)
    b = _B_ROWS.get(key)
    if b is None:
        row = np.arange(65536, dtype=np.uint16)
        b = np.tile(row if lanes == 1 else row.astype(np.uint32) * np.uint32(0x10001), rows)
        b.setflags(write=False)
        _B_ROWS.clear()
        _B_ROWS[key] = b
    return b


def _rows(ins, first, rows, threads):
    """(a, b) of ``rows`` whole rows from row ``first`` (the layout of ``exhaustive_chunk``):
    b comes from a cache, a is each row's value repeated, by ``threads`` threads."""
    a0 = np.arange(first, first + rows, dtype=np.uint32)
    if ins.lanes == 1:
        vals, dt = a0.astype(np.uint16), np.uint16
    else:
        vals, dt = a0 | ((a0 + np.uint32(1 << 15)) << np.uint32(16)), np.uint32
    a = np.empty(rows * 65536, dt)
    per = max(1, -(-rows // max(1, threads)))

    def fill(r0):
        r1 = min(rows, r0 + per)
        a[r0 * 65536:r1 * 65536].reshape(r1 - r0, 65536)[...] = vals[r0:r1, None]

    if threads <= 1 or rows < 2:
        fill(0) if per >= rows else [fill(r) for r in range(0, rows, per)]
    else:
        with _cf.ThreadPoolExecutor(threads) as pool:
            list(pool.map(fill, range(0, rows, per)))
    return a, _b_rows(ins.lanes, rows)


def c_bits(spelling, c):
    """The c operand's bits for a fixed lane value c: replicated into both lanes of a packed
    form."""
    ins = _ins(spelling)
    if ins.lanes == 2:
        return (c & 0xFFFF) | ((c & 0xFFFF) << 16)
    return c


def _with_c(ins, a, b, n, c):
    if ins.opcode != "fma" or c is None:
        return a, b
    cfmt = "f32" if ins.mixed else ins.lane_format
    if ins.lanes == 2:
        cfmt = "f16x2"
    return a, b, np.full(n, c_bits(ins, c), dtype=_dtype(cfmt))


def exhaustive_ranges(spelling, chunk=1 << 26, c_values=None):
    """The chunks of a whole sweep, without building them: ``(c, start, stop)``."""
    size = exhaustive_size(spelling)
    for c in exhaustive_c_values(spelling, c_values):
        for start in range(0, size, chunk):
            yield c, start, min(size, start + chunk)


def exhaustive_chunks(spelling, chunk=1 << 26, c_values=None):
    """Iterate over a whole sweep: ``(c, start, stop, operands)`` per chunk (built lazily)."""
    for c, start, stop in exhaustive_ranges(spelling, chunk, c_values):
        yield c, start, stop, exhaustive_chunk(spelling, start, stop, c)


# ---- SFU -----------------------------------------------------------------------------------------

def _sfu_lane_fmt(ins):
    return types.lane_format(ins.operand_formats[0]).name


def _sfu_targeted_lane(fmt, n, rng):
    """``n`` bit patterns of one lane of ``fmt`` where the SFU sequences branch and the
    primitives' tables turn: every power of two and its neighbours (a few ulps either side),
    the subnormal range and its boundary, the largest finite values, the exponents where ex2's
    result leaves the normal range (x near -126, -149, 128) and sin/cos arguments near
    multiples of pi/2."""
    w, p = _width(fmt), {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}[fmt]
    dt = _bits_dtype(w)
    emax = (1 << (w - p)) - 1                    # the all-ones exponent field
    pick = rng.integers(0, 5, n)
    e = rng.integers(0, emax, n, dtype=np.int64)
    m = rng.integers(-4, 5, n, dtype=np.int64)
    bits = (e << (p - 1)) + m                    # a power of two, a few ulps away
    sub = rng.integers(0, 1 << min(p - 1, 62), n, dtype=np.int64)
    bits = np.where(pick == 1, sub, bits)         # subnormals
    near = np.array([-126.0, -149.0, 128.0, -125.0, -24.0, 1.0, 0.5, np.pi / 2, np.pi,
                     3 * np.pi / 2, 2 * np.pi, 100.0, 1e4])[rng.integers(0, 13, n)]
    vals = near * (1.0 + rng.normal(0, 2.0 ** (1 - p) * 64, n))
    vbits = encode(vals, fmt) if fmt != "f64" else vals.view(np.int64)
    bits = np.where(pick >= 3, vbits.astype(np.int64), bits)
    bits = np.clip(bits, 0, (emax << (p - 1)) - 1)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(w - 1)
    out = bits.astype(np.uint64) | sign
    return out.astype(dt)


def _sfu_pack(ins, make):
    """One operand per PTX operand of an SFU form, packed forms lane by lane."""
    out = []
    for f in ins.operand_formats:
        lane = types.lane_format(f).name
        if ins.lanes == 2:
            out.append(_pack(make(lane), make(lane)))
        else:
            out.append(make(lane))
    return tuple(out)


def _sfu_targeted(ins, n, rng):
    return _sfu_pack(ins, lambda fmt: _sfu_targeted_lane(fmt, n, rng))


def _sfu_vectors(ins, n, rng):
    """Random vectors of an SFU form: half uniform bit patterns, half targeted."""
    def lane(fmt):
        w = _width(fmt)
        half = n // 2
        uni = rng.integers(0, 1 << 64, n - half, dtype=np.uint64, endpoint=False) \
            >> np.uint64(64 - w)
        out = np.concatenate([uni.astype(_bits_dtype(w)), _sfu_targeted_lane(fmt, half, rng)])
        return out[rng.permutation(n)]
    return _sfu_pack(ins, lane)


# ---- cvt ---------------------------------------------------------------------------------------

def _half(ins):
    """The 16-bit format of a cvt form (the destination lanes, or the widened source)."""
    return ins.result_format if ins.narrowing else ins.operand_formats[0]


def _f32_of(h, fmt):
    return encode(decode(h, fmt), "f32")


def _boundaries(h, fmt, rng):
    """f32 values at and around the rounding boundaries of a 16-bit format: the representable
    values themselves, the midpoints to their neighbours, each nudged by 0..2 f32 ulps."""
    h = h.astype(np.int64)
    nxt = ((h & 0x7FFF) + 1) | (h & 0x8000)
    with np.errstate(invalid="ignore", over="ignore"):
        mid = (decode(h.astype(np.uint16), fmt) + decode(nxt.astype(np.uint16), fmt)) / 2
    base = np.where(rng.integers(0, 2, h.size) == 1, encode(mid, "f32"), _f32_of(h, fmt))
    wig = rng.integers(-2, 3, h.size)
    return ((base.astype(np.int64) + wig) & 0xFFFFFFFF).astype(np.uint32)


def _cvt_random(ins, n, rng):
    if not ins.narrowing:
        return (_uniform(rng, n, ins.operand_formats[0]),)
    fmt = _half(ins)
    ebias = {"f16": 112, "bf16": 0}[fmt]          # f32 exponent field of the format's 2**0 - 15
    ops = []
    for _ in ins.operand_names:
        k = n // 4
        parts = [_uniform(rng, n - 2 * k, "f32"),
                 _boundaries(_finite(rng, k, fmt), fmt, rng),
                 _finite_exp(rng, "f32", ebias + rng.integers(-12, 34 if fmt == "f16" else 256,
                                                              k))]
        x = np.concatenate(parts)
        ops.append(x[rng.permutation(n)])
    return tuple(ops)


def _cvt_targeted(ins):
    if not ins.narrowing:                          # every input: 65,536 vectors
        return (np.arange(1 << 16, dtype=np.uint32).astype(np.uint16),)
    fmt = _half(ins)
    rng = np.random.default_rng(1)
    halfs = special_values(fmt)
    vals = np.unique(np.concatenate([
        special_values("f32"), _f32_of(halfs, fmt),
        _boundaries(np.repeat(halfs, 4), fmt, rng),
    ]).astype(np.uint32))
    if ins.lanes == 1:
        return (vals,)
    rev = vals[::-1].copy()
    return (np.concatenate([vals, rev]), np.concatenate([rev, vals]))


# ---- the small-float cvt forms (fp8/fp6/fp4/ue8m0, .rs) ----------------------------------------


def _small(ins):
    from ..ops.smallfloat import handles
    return is_cvt(ins) and handles(ins)


def _width(fmt):
    from ..core import types
    return types.width(fmt)


def _bits_dtype(w):
    return {8: np.uint8, 16: np.uint16, 64: np.uint64}.get(w, np.uint32)


def _small_column(rng, n, fmt, near):
    """``n`` operands of type ``fmt``: f32 half uniform bit patterns, half values of the
    destination's range (``near``); any other type uniform bit patterns."""
    w = _width(fmt)
    if fmt != "f32":
        return rng.integers(0, 1 << w, n, dtype=np.uint64).astype(_bits_dtype(w))
    k = n // 2
    x = (rng.standard_normal(k) * near).astype(np.float32).view(np.uint32)
    u = rng.integers(0, 1 << 32, n - k, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([x, u])[rng.permutation(n)]


def _small_near(ins):
    from ..core import types
    d = types.get(ins.dtype).fmt
    return 1.0 if d is None or d.code >= 0 and d.name != "f16" else d.value(d.max_finite) / 2


def _small_vectors(ins, n, rng):
    near = _small_near(ins)
    return tuple(_small_column(rng, n, f, near) for f in ins.operand_formats)


def _small_targeted(ins):
    """Every input of a one-operand form with 16 bits or fewer; else the f32 specials and the
    destination's values (with their neighbours) in every f32 operand, rbits cycling through
    0, all ones and halves."""
    if len(ins.operand_names) == 1 and _width(ins.operand_formats[0]) <= 16:
        w = _width(ins.operand_formats[0])
        return (np.arange(1 << w, dtype=np.uint64).astype(_bits_dtype(w)),)
    rng = np.random.default_rng(1)
    near = _small_near(ins)
    vals = np.concatenate([special_values("f32"),
                           np.linspace(-2 * near, 2 * near, 257).astype(np.float32)
                           .view(np.uint32)])
    vals = np.unique(np.concatenate([vals, vals + 1, vals - 1]).astype(np.uint32))
    cols = []
    for k, f in enumerate(ins.operand_formats):
        if f == "f32":
            cols.append(np.roll(vals, 7 * k))
        elif ins.operand_names[k] == "rbits":
            r = np.array([0, 0xFFFFFFFF, 0x80008000, 0x7FFF7FFF, 0x12345678], np.uint32)
            cols.append(np.resize(r, vals.size))
        else:
            cols.append(_small_column(rng, vals.size, f, near))
    return tuple(cols)
