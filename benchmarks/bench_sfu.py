"""Speed of the SFU forms (ptxfp.ops.sfu) on one core: elements per second per .f32 form
(target 200 M/s, issue 31).  python benchmarks/bench_sfu.py [N]"""

from __future__ import annotations

import sys
import time

import numpy as np

import ptxfp

FORMS = ("ex2.approx.f32", "ex2.approx.ftz.f32", "rcp.approx.f32", "rcp.approx.ftz.f32",
         "rsqrt.approx.f32", "sqrt.approx.f32", "lg2.approx.f32", "div.approx.f32",
         "div.full.f32", "div.full.ftz.f32")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    rng = np.random.default_rng(0)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    for form in FORMS:
        ops = (x, y) if form.startswith("div") else (x,)
        ptxfp.compute(form, *(o[:16] for o in ops))                 # compile
        best = min(_time(form, ops) for _ in range(3))
        print(f"{form:22s} {n / best / 1e6:8.1f} M elements/s")


def _time(form: str, ops: tuple[np.ndarray, ...]) -> float:
    t0 = time.perf_counter()
    ptxfp.compute(form, *ops)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
