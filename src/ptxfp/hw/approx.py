"""The ``.approx`` forms ptxfp does not model yet, for ``--record``: which spellings exist on
which target (ptxas 13.0's decisions, kept in ``approx_targets``), their kernels, and the
inputs recorded for them.

The candidates are every ``{ex2,lg2,rcp,rsqrt,sqrt,sin,cos,tanh}.approx{.ftz}`` on ``.f16``,
``.f16x2``, ``.bf16``, ``.bf16x2`` and ``.f32``; ``tools/approx_probe.py`` asks ptxas which of
them it compiles for each target and writes ``approx_targets.py``.  A GPU machine need not have
ptxas: ``--record`` reads that table.

Inputs (``approx_inputs``): every one of the 2^16 bit patterns for ``.f16``/``.bf16``; for the
packed forms every pattern in each lane (lane 0 = i, lane 1 = i XOR 0x8000: both lanes see all
2^16, no vector has equal lanes of one sign); for ``.f32`` a sample: the special values, every
power of two, and random bit patterns (seeded).

The kernel is the harness's (``kernels._module``): one source ``a``, the result ``d``.
"""

from __future__ import annotations

import numpy as np

from .kernels import Kernel, _module, _target_ptx

OPS = ("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh")
TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32")
#: the targets tools/approx_probe.py asks ptxas about (CUDA 13 names: sm_101 became sm_110)
TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120",
           "sm_121")
#: the .version every approx kernel declares at least (bf16 ex2/tanh need 7.8)
MIN_PTX = (7, 8)
#: f32 vectors recorded per f32 form by default (specials and powers of two included)
F32_SAMPLE = 16384


def candidates():
    """Every spelling tools/approx_probe.py asks ptxas about, in a fixed order."""
    return [f"{op}.approx{ftz}.{t}" for op in OPS for t in TYPES for ftz in ("", ".ftz")]


def type_of(spelling):
    return spelling.rsplit(".", 1)[1]


def width(spelling):
    """Bits of the operand and the result (16, or 32 for the packed and .f32 forms)."""
    return 16 if type_of(spelling) in ("f16", "bf16") else 32


def _sm(target):
    return int(target[3:].rstrip("af"))


def approx_kernel(spelling, target):
    """The PTX module that runs ``spelling`` on ``a`` into ``d`` for ``target`` ('sm_90')."""
    if spelling not in candidates():
        raise ValueError(f"'{spelling}' is not an approx form of the candidates")
    sm = _sm(target)
    version = max(MIN_PTX, _target_ptx(sm))
    w = width(spelling)
    names, widths = ("a", "b", "c", "d"), (w, 0, 0, w)
    body = (f"{spelling} %d, %a;",)
    tname = target if target != f"sm_{sm}" else None
    return Kernel(spelling, "native", sm, version,
                  _module(spelling, "native", sm, version, names, widths, body, tname),
                  widths, body, tname, names)


def accepted(sm):
    """The spellings ptxas 13.0 compiles for ``sm_<sm>`` (from approx_targets), in candidate
    order; a target tools/approx_probe.py did not ask about gives the spellings of the nearest
    lower target it did (none below sm_80)."""
    import ptxfp.hw.approx_targets as T
    asked = sorted(_sm(t) for t in T.TARGETS)
    lower = [s for s in asked if s <= sm]
    if not lower:
        return []
    target = f"sm_{lower[-1]}"
    return [s for s in candidates() if target in T.ACCEPTS.get(s, ())]


def _f32_sample(n, seed=2026):
    specials = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
                0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
                0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x3F800000, 0xBF800000,
                0x40490FDB, 0xC0490FDB, 0x3FC90FDB, 0x3F000000]
    powers = [(e << 23) | s for e in range(1, 255) for s in (0, 0x80000000)]
    fixed = np.array(specials + powers, np.uint32)
    if n <= fixed.size:
        return fixed[:n].copy()
    rng = np.random.default_rng(seed)
    rand = rng.integers(0, 1 << 32, n - fixed.size, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([fixed, rand])


def approx_inputs(spelling, f32_sample=F32_SAMPLE):
    """The recorded inputs of ``spelling`` (``a``; see the module docstring)."""
    t = type_of(spelling)
    i = np.arange(1 << 16, dtype=np.uint32)
    if t in ("f16", "bf16"):
        return i.astype(np.uint16)
    if t in ("f16x2", "bf16x2"):
        return (i | ((i ^ 0x8000) << 16)).astype(np.uint32)
    return _f32_sample(f32_sample)


def input_count(spelling, f32_sample=F32_SAMPLE):
    return (1 << 16) if type_of(spelling) != "f32" else max(0, f32_sample)
