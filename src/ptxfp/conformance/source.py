"""Where gen and sweep take their vectors from, chunk by chunk.

TestFloat's idea: every combination of the format's special and boundary values, then random
operands; level 2 more of both.  On top, ptxfp's own targeted cases: ties and near ties at the
result's precision, the double-rounding witnesses (vectors where rounding twice through
binary32/binary64 gives another result than rounding once), and the known witnesses by hand.

All vector generation goes through ``_source()``: today the hardware harness's generators
(``ptxfp.hw.vectors``: specials, ``targeted``, ``random_vectors`` with aimed vectors for
cancellation, subnormal results, the smallest normal, 1.0 and overflow); switching to another
generator module with the same three functions is a change of that one line.
"""

from __future__ import annotations

import zlib
from typing import Iterator

import numpy as np

from .classify import emulations, to_float
from .forms import Form, dtype

#: random vectors per chunk
CHUNK = 1 << 20
#: random vectors searched for ptxfp's own targeted cases (ties, double-rounding witnesses)
OWN_POOL = 1 << 16
#: random vectors per level when -n is not given
LEVEL_N = {1: 100_000, 2: 5_000_000}

#: known witnesses (PTX order) always written for these forms
PINNED = {
    "fma.rn.bf16": [(0x3F82, 0x3FA0, 0x0001), (0xBF82, 0x3FA0, 0x8001),
                    (0x3FA0, 0x3F82, 0x0001), (0x3F82, 0x3FA0, 0x8001)],
    "fma.rn.f16": [(0x3C01, 0x3E00, 0x8001), (0xBC01, 0x3E00, 0x0001),
                   (0x3C01, 0x3E00, 0x0001)],
}


def _source():
    """The vector generator module (special_values, targeted, random_vectors)."""
    from ..hw import vectors
    return vectors


def seed_of(*key) -> int:
    return zlib.crc32(repr(key).encode())


def specials(fmt: str, level: int = 1) -> np.ndarray:
    """The special values of a lane format; level 2 adds each one's neighbours (±1 ulp)."""
    v = _source().special_values(fmt).astype(np.int64)
    if level >= 2:
        sign = 0x80000000 if fmt == "f32" else 0x8000
        mag, s = v & (sign - 1), v & sign
        v = np.concatenate([v, s | np.clip(mag + 1, 0, sign - 1),
                            s | np.clip(mag - 1, 0, sign - 1)])
    return np.unique(v).astype(np.uint32 if fmt == "f32" else np.uint16)


def _pack(lo, hi):
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))


def targeted(form: Form, level: int = 1) -> tuple:
    """Every combination of the special values over the operands (packed forms: the
    combination in lane 0 with the reversed list in lane 1, and swapped)."""
    if level <= 1 or form.cvt:
        ops = _source().targeted(form.spelling)
        if form.cvt and level >= 2 and form.ins.atype == "f32":
            extra = specials("f32", 2)
            extra = (extra,) if form.lanes == 1 else (extra, extra[::-1].copy())
            ops = tuple(np.concatenate([a, b.astype(a.dtype)]) for a, b in zip(ops, extra))
        return ops
    lists = [specials(f, level) for f in form.lane_formats()]
    grid = [g.reshape(-1) for g in np.meshgrid(*lists, indexing="ij")]
    if form.lanes == 1:
        return tuple(grid)
    rev = [g[::-1] for g in grid]
    return tuple(np.concatenate([_pack(g, r), _pack(r, g)]) for g, r in zip(grid, rev))


def random(form: Form, n: int, seed: int) -> tuple:
    """n random vectors (uniform, close exponents, aimed results) for a form."""
    return _source().random_vectors(form.spelling, n, seed)


def _ties(form: Form, ops: tuple) -> np.ndarray:
    """Vectors whose binary64 result (exact for most) is a tie, or one binary64 ulp off a tie,
    at the result's precision: where round to nearest has to decide."""
    if form.cvt and form.ins.atype != "f32":
        return np.zeros(np.shape(ops[0]), bool)
    hit = np.zeros(np.shape(ops[0]), bool)
    p = {"f16": 11, "bf16": 8, "f32": 24}[form.result_lane]
    for lops in form.split_lanes(ops):
        xs = [to_float(x, f) for x, f in zip(lops, form.lane_formats())]
        with np.errstate(all="ignore"):
            op = form.ins.opcode
            if form.cvt:
                y = xs[0]
            elif op == "fma":
                y = xs[0] * xs[1] + xs[2]
            elif op == "mul":
                y = xs[0] * xs[1]
            else:
                y = xs[0] + xs[1] if op == "add" else xs[0] - xs[1]
            m, _ = np.frexp(np.where(np.isfinite(y), y, 0.0))
            frac = np.abs(m) * 2.0 ** p
            frac = frac - np.floor(frac)
            hit |= (frac == 0.5) | (np.abs(frac - 0.5) < 2.0 ** (p - 52))
    return hit & np.isfinite(y) & (y != 0)


def own_targeted(form: Form, pool: int, seed: int) -> tuple:
    """ptxfp's own cases for a form: from ``pool`` random vectors, those at a tie and those
    where rounding twice differs from rounding once; then the pinned witnesses."""
    ops = random(form, pool, seed)
    expected = form.model(*ops)
    keep = _ties(form, ops)
    for lops, e in zip(form.split_lanes(ops), form.split_result(expected)):
        for v in emulations(form, lops).values():
            keep |= (v >= 0) & (v != e.astype(np.int64))
    picked = tuple(x[keep] for x in ops)
    pinned = PINNED.get(form.spelling)
    if pinned:
        cols = list(zip(*pinned))
        picked = tuple(np.concatenate([np.array(c, dtype=dtype(w)), x])
                       for c, w, x in zip(cols, form.operand_widths, picked))
    return picked


def plan(form: Form, level: int = 1, n: int | None = None, seed: int = 1) -> list:
    """The chunks of a generated file, without building them: [(kind, size_or_None, seed)]."""
    if level not in (1, 2):
        from ..errors import PtxfpError
        raise PtxfpError(f"--level {level}: the levels are 1 and 2")
    n = LEVEL_N[level] if n is None else n
    if n < 0:
        from ..errors import PtxfpError
        raise PtxfpError(f"-n {n}: a count >= 0")
    chunks = [("targeted", None, level), ("own", None, seed_of("own", form.spelling, seed))]
    k = 0
    for start in range(0, n, CHUNK):
        chunks.append(("random", min(CHUNK, n - start), seed_of(form.spelling, seed, k)))
        k += 1
    return chunks


def build(form: Form, chunk: tuple) -> tuple:
    kind, size, s = chunk
    if kind == "targeted":
        return targeted(form, s)
    if kind == "own":
        return own_targeted(form, OWN_POOL, s)
    return random(form, size, s)


def vectors(form: Form, level: int = 1, n: int | None = None, seed: int = 1,
            max_chunk: int = CHUNK) -> Iterator[tuple]:
    """The operand chunks (tuples of arrays, PTX order) of a level, none over ``max_chunk``."""
    for c in plan(form, level, n, seed):
        ops = build(form, c)
        size = int(np.shape(ops[0])[0])
        for start in range(0, size, max_chunk):
            yield tuple(np.ascontiguousarray(x[start:start + max_chunk]) for x in ops)
