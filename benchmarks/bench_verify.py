"""Speed of the conformance tools (docs/verify.md): gen and ver in lines/s, sweep in vectors/s
per worker.

    PYTHONPATH=src python benchmarks/bench_verify.py ver --lines 10000000
    PYTHONPATH=src python benchmarks/bench_verify.py sweep --workers 0 1 2 --chunks 8

``ver``: gen writes a file of fma.rn.bf16 vectors (targeted + N random), ver reads it back
(ptxfp against itself: every line read, decoded, recomputed and compared).  ``sweep``: chunks
of the exhaustive fma.rn.bf16 sweep (2^48 triples, 2^22 vectors a chunk) against the C
double-rounding simulator of examples/sim_fma_bf16.c (array calling convention), in this
process (workers 0) and on LocalClusters of N single-threaded workers; the per-chunk seconds
come from the chunks themselves, the wall clock from the whole run (cluster start excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def bench_ver(lines: int) -> dict:
    from ptxfp.conformance import verify_file, write_file
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fma.txt")
        t = time.perf_counter()
        n = write_file("fma.rn.bf16", path, n=lines)
        tg = time.perf_counter() - t
        size = os.path.getsize(path)
        t = time.perf_counter()
        rep = verify_file("fma.rn.bf16", path)
        tv = time.perf_counter() - t
    assert rep.ok and rep.total == n
    return {"lines": n, "bytes": size, "gen_s": tg, "gen_lines_per_s": n / tg,
            "ver_s": tv, "ver_lines_per_s": n / tv}


def _lib(d):
    so = os.path.join(d, "libsim.so")
    subprocess.run(["cc", "-O2", "-ffp-contract=off", "-shared", "-fPIC",
                    os.path.join(HERE, "..", "examples", "sim_fma_bf16.c"), "-o", so],
                   check=True)
    return so + ":sim_fma_bf16_array"


def bench_sweep(workers: list, chunks: int, chunk: int) -> list:
    from ptxfp.conformance import sweeps
    out = []
    with tempfile.TemporaryDirectory() as d:
        lib = _lib(d)
        for w in workers:
            n = chunks * max(w, 1)
            per = []

            # a plan of exactly n chunks: the first n chunks of the exhaustive sweep
            plan = sweeps.make_plan("fma.rn.bf16", exhaustive=True, chunk=chunk)
            todo = list(range(n))
            impl = sweeps.LibImpl(lib.rsplit(":", 1)[0], "sim_fma_bf16_array", "array",
                                  "fma.rn.bf16")
            from ptxfp import policy
            pol = policy.current()
            sweeps.run_chunk(plan, 10**6, impl, pol)        # warm: Numba cache, library
            if w == 0:
                t = time.perf_counter()
                for cid in todo:
                    per.append(sweeps.run_chunk(plan, cid, impl, pol)["seconds"])
                wall = time.perf_counter() - t
            else:
                import logging

                from distributed import Client, LocalCluster
                with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.CRITICAL) as c, \
                        Client(c) as client:
                    client.gather(client.map(sweeps.run_chunk, [plan] * w, [10**6 + k for k in
                                                                           range(w)],
                                             [impl] * w, [pol] * w, pure=False))
                    t = time.perf_counter()
                    futs = client.map(sweeps.run_chunk, [plan] * n, todo, [impl] * n, [pol] * n,
                                      pure=False)
                    res = client.gather(futs)
                    wall = time.perf_counter() - t
                    per = [r["seconds"] for r in res]
            vec = n * chunk
            row = {"workers": w, "chunks": n, "chunk": chunk, "vectors": vec, "wall_s": wall,
                   "vectors_per_s": vec / wall,
                   "per_worker_vectors_per_s": vec / wall / max(w, 1),
                   "chunk_s_median": sorted(per)[len(per) // 2],
                   "chunk_vectors_per_s": chunk / sorted(per)[len(per) // 2]}
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("ver")
    v.add_argument("--lines", type=int, default=10_000_000)
    s = sub.add_parser("sweep")
    s.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    s.add_argument("--chunks", type=int, default=8, help="chunks per worker")
    s.add_argument("--chunk", type=int, default=1 << 22)
    a = p.parse_args(argv)
    if a.cmd == "ver":
        print(json.dumps(bench_ver(a.lines)))
    else:
        bench_sweep(a.workers, a.chunks, a.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
