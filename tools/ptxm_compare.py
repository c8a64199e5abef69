"""Hold ptxfp's SFU forms to ptx-math's C model (https://github.com/bcarlet/ptx-math, MIT).

ptx-math's ``ptxm_<f>_sm75`` models the PTX ``<f>.approx.f32`` instruction as a sm_75 GPU ran it
(validated there on all 2^32 inputs; sin and cos: ``ptxm_sin_sm70``/``ptxm_cos_sm70``, which
models.h aliases as sm_75's).  This tool compiles ptx-math's C sources with gcc into a
shared library (with a small batch wrapper of ptxfp's own), then compares
``ptxfp.compute(form, x, target="sm_75")`` with it:

    python tools/ptxm_compare.py --src /path/to/ptx-math [--stride 64] [--forms ex2,rcp]
    python tools/ptxm_compare.py --src ... --exhaustive          # all 2^32 inputs per form
    python tools/ptxm_compare.py --src ... --exhaustive --progress --start 128 --forms sin
    python tools/ptxm_compare.py --src ... --record tests/data/sfu_ptxm_sm75.npz

``--stride S`` compares every S-th bit pattern (offset by a per-form odd number) plus the
special ranges: the 2^20 patterns above zero (subnormals), 2^16 either side of
2^-126 and of 2^126, the top 2^16 below inf, every power of two, inf/NaN, and the first and last 2^16 patterns of every
binade.  ``--record`` writes, per form, inputs that cover every table segment (for each M-bit
segment index and exponent parity: random lower significands; sin/cos: also every quadrant and
segment of the reduced angle) with specials and subnormals, and ptx-math's answers, as a
compressed .npz for the default test suite (tests/data/sfu_ptxm_sm75.npz: ex2, rcp, rsqrt,
sqrt, lg2; tests/data/sfu_ptxm_sm75_sincos.npz: sin, cos).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: ptx-math function -> the ptxfp form it models (sm_75 aliases of models.h)
FORMS = {"rcp": ("ptxm_rcp_sm5x", "rcp.approx.f32"),
         "sqrt": ("ptxm_sqrt_sm6x", "sqrt.approx.f32"),
         "rsqrt": ("ptxm_rsqrt_sm5x", "rsqrt.approx.f32"),
         "lg2": ("ptxm_lg2_sm5x", "lg2.approx.f32"),
         "ex2": ("ptxm_ex2_sm5x", "ex2.approx.f32"),
         "sin": ("ptxm_sin_sm70", "sin.approx.f32"),
         "cos": ("ptxm_cos_sm70", "cos.approx.f32")}

_WRAP = r"""
#include <stdint.h>
#include <string.h>
#include <stddef.h>
float ptxm_rcp_sm5x(float);  float ptxm_sqrt_sm6x(float); float ptxm_rsqrt_sm5x(float);
float ptxm_lg2_sm5x(float);  float ptxm_ex2_sm5x(float);  float ptxm_sin_sm70(float);
float ptxm_cos_sm70(float);
#define MAP(name) void map_##name(const uint32_t *in, uint32_t *out, size_t n) { \
  for (size_t i = 0; i < n; i++) { float x, r; memcpy(&x, in + i, 4); r = name(x); \
  memcpy(out + i, &r, 4); } }
MAP(ptxm_rcp_sm5x) MAP(ptxm_sqrt_sm6x) MAP(ptxm_rsqrt_sm5x) MAP(ptxm_lg2_sm5x)
MAP(ptxm_ex2_sm5x) MAP(ptxm_sin_sm70) MAP(ptxm_cos_sm70)
"""


def build(src: Path, out_dir: Path) -> ctypes.CDLL:
    """Compile ptx-math (its src/ptxm C files) and the batch wrapper into one shared library."""
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / "libptxm_map.so"
    wrap = out_dir / "ptxm_map.c"
    wrap.write_text(_WRAP)
    files = sorted(str(p) for p in (src / "src/ptxm").rglob("*.c"))
    if not lib.exists() or lib.stat().st_mtime < max(os.path.getmtime(f) for f in files):
        subprocess.run(["gcc", "-O2", "-std=c11", "-mbmi2", "-shared", "-fPIC",
                        "-ffp-contract=off", "-I", str(src / "src"), *files, str(wrap),
                        "-o", str(lib), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    for name, _ in FORMS.values():
        fn = getattr(so, "map_" + name)
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return so


def reference(so: ctypes.CDLL, func: str, x: np.ndarray) -> np.ndarray:
    """ptx-math's answers for ``x``, on every CPU this process may use for large arrays (ctypes
    releases the GIL during the call)."""
    x = np.ascontiguousarray(x, np.uint32)
    out = np.empty_like(x)
    fn = getattr(so, "map_" + FORMS[func][0])
    nt = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if x.size < (1 << 20) or nt < 2:
        fn(x.ctypes.data, out.ctypes.data, x.size)
        return out
    from concurrent.futures import ThreadPoolExecutor
    step = -(-x.size // (4 * nt))
    with ThreadPoolExecutor(nt) as pool:
        list(pool.map(lambda lo: fn(x[lo:].ctypes.data, out[lo:].ctypes.data,
                                    min(step, x.size - lo)), range(0, x.size, step)))
    return out


def special_inputs() -> np.ndarray:
    """The special ranges (see the module docstring), both signs."""
    parts = [np.arange(0, 1 << 20, dtype=np.uint32),                      # 0 and subnormals
             np.arange(0x007F0000, 0x00810000, dtype=np.uint32),          # around 2^-126
             np.arange(0x7E7F0000, 0x7E810000, dtype=np.uint32),          # around 2^126
             np.arange(0x7F7F0000, 0x7F800000, dtype=np.uint32),          # up to max
             np.arange(0x7F800000, 0x7F800010, dtype=np.uint32),          # inf, NaNs
             np.array([0x7FFFFFFF, 0x7FC00000], dtype=np.uint32),
             (np.arange(1, 255, dtype=np.uint32) << 23)]                  # powers of two
    e = np.arange(1, 255, dtype=np.uint32) << 23
    k = np.arange(1 << 10, dtype=np.uint32)
    parts.append((e[:, None] | k[None, :]).ravel())                       # binade ends
    parts.append((e[:, None] | (0x7FFFFF - k)[None, :]).ravel())
    x = np.concatenate(parts)
    return np.unique(np.concatenate([x, x | np.uint32(0x80000000)]))


def segment_inputs(func: str, per: int, seed: int = 31) -> np.ndarray:
    """Inputs covering every table segment of ``func`` (both exponent parities, random lower
    bits, random exponents in the normal range), plus special_inputs() thinned."""
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(128, dtype=np.uint32), per)
    low = rng.integers(0, 1 << 16, seg.size, dtype=np.uint32)
    exp = rng.integers(1, 255, seg.size, dtype=np.uint32)
    sign = rng.integers(0, 2, seg.size, dtype=np.uint32) << 31
    if func in ("sqrt", "rsqrt", "lg2"):
        sign[:] = 0
    if func == "ex2":                                   # |x| < 2^8 where ex2 is not 0/inf
        exp = rng.integers(100, 135, seg.size, dtype=np.uint32)
    if func in ("sin", "cos"):
        exp = rng.integers(90, 160, seg.size, dtype=np.uint32)
    x = sign | (exp << 23) | (seg << 16) | low
    sp = special_inputs()
    sp = sp[rng.choice(sp.size, min(sp.size, 40000), replace=False)]
    parts = [x, sp]
    if func in ("sin", "cos"):
        parts.append(angle_inputs(rng, per))
    return np.unique(np.concatenate(parts))


def angle_inputs(rng: np.random.Generator, per: int) -> np.ndarray:
    """sin/cos: angles in every quadrant q and every one of the 64 table segments j of the
    reduced quarter turn (MUFU.SIN/COS index their table by the angle, not by x's significand):
    x = (4n + q + (j + u)/64) * pi/2 in binary32, u random in [0, 1), n = 0 for half of them and
    up to 2^20 turns (log-uniform) for the rest, both signs."""
    qj = np.repeat(np.arange(256), per // 2)
    u = rng.random(qj.size)
    n = np.where(rng.random(qj.size) < 0.5, 0, np.floor(2.0 ** rng.uniform(0, 20, qj.size)))
    turns = 4 * n + (qj >> 6) + ((qj & 63) + u) / 64
    x = (turns * (np.pi / 2)).astype(np.float32).view(np.uint32)
    return x | (rng.integers(0, 2, x.size, dtype=np.uint32) << 31)


def compare(so: ctypes.CDLL, func: str, x: np.ndarray, target: str = "sm_75"
            ) -> tuple[int, int, np.ndarray]:
    import ptxfp
    want = reference(so, func, x)
    got = np.asarray(ptxfp.compute(FORMS[func][1], x, target=target), np.uint32)
    bad = np.nonzero(got != want)[0]
    return x.size, bad.size, x[bad[:10]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, type=Path, help="a ptx-math checkout")
    ap.add_argument("--build", type=Path, default=Path("/tmp/ptxm_build"))
    ap.add_argument("--forms", default=",".join(FORMS))
    ap.add_argument("--stride", type=int, default=1 << 26)
    ap.add_argument("--exhaustive", action="store_true")
    ap.add_argument("--start", type=int, default=0,
                    help="--exhaustive: begin at chunk START (of 256 chunks of 2^24 inputs)")
    ap.add_argument("--progress", action="store_true",
                    help="--exhaustive: a line every 16 chunks")
    ap.add_argument("--record", type=Path)
    ap.add_argument("--per-segment", type=int, default=400)
    a = ap.parse_args(argv)
    so = build(a.src, a.build)
    funcs = [f for f in a.forms.split(",") if f]
    if a.record:
        out = {}
        for f in funcs:
            x = segment_inputs(f, a.per_segment)
            out[f + "_x"] = x
            out[f + "_y"] = reference(so, f, x)
        np.savez_compressed(a.record, **out)
        print(f"wrote {a.record}: " + ", ".join(f"{f} {out[f + '_x'].size}" for f in funcs))
        return 0
    bad_total = 0
    for i, f in enumerate(funcs):
        t0 = time.time()
        n = bad = 0
        examples: list[int] = []
        if a.exhaustive:
            step = 1 << 24
            for lo in range(a.start << 24, 1 << 32, step):
                x = np.arange(lo, lo + step, dtype=np.uint64).astype(np.uint32)
                k, b, ex = compare(so, f, x)
                n, bad = n + k, bad + b
                examples += [int(v) for v in ex][:10 - len(examples)]
                if a.progress and ((lo >> 24) + 1) % 16 == 0:
                    print(f"  {FORMS[f][1]}: chunks {a.start}..{lo >> 24} of 0..255 done, "
                          f"{n} inputs, {bad} differ ({time.time() - t0:.0f} s)", flush=True)
        else:
            off = (2 * i + 1) * 7919 % a.stride
            x = np.arange(off, 1 << 32, a.stride, dtype=np.uint64).astype(np.uint32)
            for xs in (x, special_inputs()):
                k, b, ex = compare(so, f, xs)
                n, bad = n + k, bad + b
                examples += [int(v) for v in ex][:10 - len(examples)]
        bad_total += bad
        print(f"{FORMS[f][1]:18s} sm_75: {n} inputs, {bad} differ from ptx-math "
              f"({time.time() - t0:.1f} s)" + (": " + " ".join(hex(v) for v in examples)
                                               if examples else ""))
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
