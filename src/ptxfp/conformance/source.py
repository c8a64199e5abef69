"""Where gen and sweep take their vectors from, chunk by chunk.

TestFloat's idea: every combination of the format's special and boundary values, then random
operands; level 2 more of both.  In between, ptxfp's own targeted cases: the families of
``ptxfp.vectors.targeted`` (ties and near ties, double-rounding patterns, cancellation, far
exponents, subnormal boundaries, overflow thresholds per mode, NaN payloads, the pinned
witnesses), and the double-rounding witnesses found here (vectors where rounding twice through
binary32/binary64 gives another result than rounding once).

The targeted generator is reached through ``_source()`` (``ptxfp.vectors``: ``specials``,
``FORMATS``, ``targeted``); the random vectors come from the hardware harness's generator
(``ptxfp.vectors.harness.random_vectors``: uniform bits, close exponents, results aimed at zero by
cancellation, the subnormal range, the smallest normal, 1.0 and overflow).
"""

from __future__ import annotations

import zlib
from typing import Any, Iterator

import numpy as np

from ..errors import PtxfpError
from .classify import emulations
from .common import to_float
from .forms import Form

#: random vectors per chunk
CHUNK = 1 << 20
#: random vectors per level when -n is not given
LEVEL_N = {1: 100_000, 2: 5_000_000}
#: vectors of ptxfp.vectors.targeted per level
TARGETED_N = {1: 20_000, 2: 400_000}
#: random vectors searched for double-rounding witnesses
OWN_POOL = 1 << 16


def _source() -> Any:
    """The targeted generator (specials, FORMATS, targeted)."""
    from .. import vectors
    return vectors


def seed_of(*key: Any) -> int:
    return zlib.crc32(repr(key).encode())


def specials(fmt: str, level: int = 1) -> np.ndarray:
    """The special values of a lane format; level 2 adds each one's neighbours (±1 ulp)."""
    src = _source()
    v = np.asarray(src.specials(src.FORMATS[fmt])).astype(np.int64)
    if level >= 2:
        sign = 0x80000000 if fmt == "f32" else 0x8000
        mag, s = v & (sign - 1), v & sign
        v = np.concatenate([v, s | np.clip(mag + 1, 0, sign - 1),
                            s | np.clip(mag - 1, 0, sign - 1)])
    return np.unique(v).astype(np.uint32 if fmt == "f32" else np.uint16)


def _pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))


def targeted(form: Form, level: int = 1) -> tuple:
    """Every combination of the special values over the operands (packed forms: the
    combination in lane 0 with the reversed list in lane 1, and swapped); cvt from a half
    type: all 65,536 inputs; the small-float and .rs cvt forms: conformance/small.py."""
    if form.small:
        from .small import targeted as small_targeted
        return small_targeted(form, level)
    if form.cvt and form.ins.atype != "f32":
        return (np.arange(1 << 16, dtype=np.uint32).astype(np.uint16),)
    lists = [specials(f, level) for f in form.lane_formats()]
    grid = [g.reshape(-1) for g in np.meshgrid(*lists, indexing="ij")]
    if form.cvt:
        vals = grid[0]
        return (vals,) if form.lanes == 1 else (vals, vals[::-1].copy())
    if form.lanes == 1:
        return tuple(grid)
    rev = [g[::-1] for g in grid]
    return tuple(np.concatenate([_pack(g, r), _pack(r, g)]) for g, r in zip(grid, rev))


def random(form: Form, n: int, seed: int) -> tuple:
    """n random vectors (uniform, close exponents, aimed results) for a form."""
    if form.small:
        from .small import random as small_random
        return small_random(form, n, seed)
    from ..vectors import harness
    return tuple(np.ascontiguousarray(x) for x in harness.random_vectors(form.spelling, n, seed))


def _ties(form: Form, ops: tuple) -> np.ndarray:
    """Vectors whose binary64 result (exact for most) is a tie, or one binary64 ulp off a tie,
    at the result's precision: where round to nearest has to decide."""
    if form.cvt and form.ins.atype != "f32" or form.ins.family == "minmax":
        return np.zeros(np.shape(ops[0]), bool)      # exact, or no rounding at all
    hit = np.zeros(np.shape(ops[0]), bool)
    p = {"f16": 11, "bf16": 8, "f32": 24}[form.result_lane]
    for lops in form.split_lanes(ops):
        xs = [to_float(x, f) for x, f in zip(lops, form.lane_formats())]
        with np.errstate(all="ignore"):
            op = form.ins.opcode
            if form.cvt:
                y = xs[0]
            elif op in ("fma", "mad"):
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


def own_targeted(form: Form, level: int, seed: int) -> tuple:
    """ptxfp's own cases for a form: the targeted families of ``ptxfp.vectors``, then, from
    ``OWN_POOL`` random vectors, those at a tie and those where rounding twice or rounding the
    product first differs from rounding once."""
    if form.small:
        from .small import own_targeted
        return own_targeted(form, level, seed)
    fam = tuple(np.array(x) for x in _source().targeted(form.ins, TARGETED_N[level], seed))
    ops = random(form, OWN_POOL, seed)
    expected = form.model(*ops)
    keep = _ties(form, ops)
    for lops, e in zip(form.split_lanes(ops), form.split_result(expected)):
        for v in emulations(form, lops).values():
            keep |= (v >= 0) & (v != e.astype(np.int64))
    return tuple(np.concatenate([f, x[keep].astype(f.dtype)]) for f, x in zip(fam, ops))


def plan(form: Form, level: int = 1, n: int | None = None, seed: int = 1) -> list:
    """The chunks of a generated file, without building them: [(kind, size_or_None, seed)]."""
    if level not in (1, 2):
        raise PtxfpError(f"--level {level}: the levels are 1 and 2")
    n = LEVEL_N[level] if n is None else n
    if n < 0:
        raise PtxfpError(f"-n {n}: a count >= 0")
    chunks: list = [("targeted", level, level),
                    ("own", level, seed_of("own", form.spelling, seed))]
    k = 0
    for start in range(0, n, CHUNK):
        chunks.append(("random", min(CHUNK, n - start), seed_of(form.spelling, seed, k)))
        k += 1
    return chunks


def size(form: Form, level: int = 1, n: int | None = None, seed: int = 1) -> int:
    """How many vectors ``gen`` writes for these arguments (the targeted chunks are built,
    the random ones counted: well under a second)."""
    total = 0
    for c in plan(form, level, n, seed):
        total += c[1] if c[0] == "random" else int(np.shape(build(form, c)[0])[0])
    return total


def build(form: Form, chunk: tuple) -> tuple:
    kind, size, s = chunk
    if kind == "targeted":
        return targeted(form, s)
    if kind == "own":
        return own_targeted(form, size, s)
    return random(form, size, s)


def vectors(form: Form, level: int = 1, n: int | None = None, seed: int = 1,
            max_chunk: int = CHUNK) -> Iterator[tuple]:
    """The operand chunks (tuples of arrays, PTX order) of a level, none over ``max_chunk``."""
    for c in plan(form, level, n, seed):
        ops = build(form, c)
        size = int(np.shape(ops[0])[0])
        for start in range(0, size, max_chunk):
            yield tuple(np.ascontiguousarray(x[start:start + max_chunk]) for x in ops)
