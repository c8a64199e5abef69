#!/usr/bin/env python
"""Speed of the SFU forms (ptxfp.ops.sfu, issue 31: each .f32 form >= 200 M elements/s on one
core), one thread, against a roofline and a torch peer in the same process.

    python benchmarks/bench_sfu.py [--n 4194304] [--repeat 5] [--target sm_90] [--json F]

Never part of the test suite.  Per form and input distribution (``bits``: uniform random bit
patterns; ``normal``: float32 values of N(0, 1), their magnitude for the forms defined on x >= 0
only; ``hard``: a random interleaving of subnormals, zeros, inf/NaN, values beside the scaling
thresholds 2^-126 and 2^126 (and, for ex2, beside -126), and ordinary values), the rate of a whole
``ptxfp.compute(form, x, target=...)`` call (result allocated, operands checked) in M
elements/s, timed with the calling thread's CPU time (best of ``--repeat``; one thread:
``PTXFP_NUM_THREADS=1``); the roofline is a trivial Numba kernel reading the same operand arrays
and writing a uint32 result (``out[i] = a[i] ^ b[i]``); the peer is torch's function of the same
float32 values with ``torch.set_num_threads(1)`` (``torch.exp2``, ``torch.log2``,
``torch.reciprocal``, ``torch.rsqrt``, ``torch.sqrt``, ``torch.div``: IEEE-accurate functions,
not the SFU's approximations, so a reference of what a plain float32 pass costs).
"""

from __future__ import annotations

import os

os.environ.setdefault("PTXFP_NUM_THREADS", "1")       # before ptxfp: thread CPU time is one thread

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

import ptxfp  # noqa: E402

from ptxfp.ops.sfu.kernels_gen import KERNELS  # noqa: E402

#: every .f32 form computed on sm_90 (a primitive added later is timed too)
FORMS = tuple(sorted({f for f, t in KERNELS if t == "sm_90" and f.endswith(".f32")}))
DISTRIBUTIONS = ("bits", "normal", "hard")
#: torch peer per operation
PEERS = {"ex2": "exp2", "lg2": "log2", "rcp": "reciprocal", "rsqrt": "rsqrt", "sqrt": "sqrt",
         "div": "div", "sin": "sin", "cos": "cos"}


def operand(dist: str, op: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` binary32 bit patterns of distribution ``dist`` for operation ``op``."""
    if dist == "bits":
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if dist == "normal":
        v = rng.standard_normal(n).astype(np.float32)
        if op in ("lg2", "sqrt", "rsqrt"):
            v = np.abs(v)
        return v.view(np.uint32)
    low = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    exp = np.select([low % 8 < 2, low % 8 < 4, low % 8 < 6],
                    [rng.integers(0, 2, n, dtype=np.uint32),            # subnormal / 2^-126
                     rng.integers(252, 256, n, dtype=np.uint32),        # near 2^126, inf/NaN
                     rng.integers(100, 150, n, dtype=np.uint32)],       # ordinary
                    rng.integers(0, 256, n, dtype=np.uint32))
    if op == "ex2":                                                     # around -126 and 0
        exp = np.where(low % 8 < 4, np.uint32(133), exp)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << 31
    if op in ("lg2", "sqrt", "rsqrt"):
        sign = np.where(low % 16 == 15, sign, 0).astype(np.uint32)
    return (sign | (exp.astype(np.uint32) << 23) | low).astype(np.uint32)


def best(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    t = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        t = min(t, time.thread_time() - t0)
    return t


def roofline(arity: int) -> Callable[..., Any]:
    from numba import njit

    @njit(nogil=True, cache=False)
    def move(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(a.size, np.uint32)
        for i in range(a.size):
            out[i] = a[i] ^ b[i]
        return out
    return move


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--forms", default=",".join(FORMS))
    ap.add_argument("--dists", default=",".join(DISTRIBUTIONS))
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--json", help="write the rates here")
    a = ap.parse_args(argv)
    torch: Any = None
    if not a.no_peer:
        try:
            import torch
            torch.set_num_threads(1)
        except ImportError:
            pass
    rng = np.random.default_rng(31)
    move = roofline(2)
    rows: list[dict[str, Any]] = []
    print(f"n = {a.n}, target {a.target}, one thread, thread CPU time, best of {a.repeat}")
    print(f"{'form':22s} {'dist':7s} {'M/s':>8s} {'roofline':>9s} {'peer':>8s}  peer")
    for form in a.forms.split(","):
        op = form.split(".")[0]
        for dist in a.dists.split(","):
            x = operand(dist, op, a.n, rng)
            ops = (x, operand(dist, "div", a.n, rng)) if op == "div" else (x,)
            t = best(lambda: ptxfp.compute(form, *ops, target=a.target), a.repeat)
            tr = best(lambda: move(ops[0], ops[-1]), a.repeat)
            row: dict[str, Any] = {"form": form, "dist": dist, "n": a.n, "target": a.target,
                   "meps": a.n / t / 1e6, "roofline_meps": a.n / tr / 1e6}
            peer = ""
            if torch is not None and op in PEERS:
                fn = getattr(torch, PEERS[op])
                tv = [torch.from_numpy(o.view(np.float32)) for o in ops]
                tp = best(lambda: fn(*tv), a.repeat)
                row["peer"] = "torch." + PEERS[op]
                row["peer_meps"] = a.n / tp / 1e6
                peer = f"{row['peer_meps']:8.1f}  {row['peer']}"
            rows.append(row)
            print(f"{form:22s} {dist:7s} {row['meps']:8.1f} {row['roofline_meps']:9.1f} {peer}",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
