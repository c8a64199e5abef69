"""bf16 fma through ``execute`` against MPFR (tests/oracle.py) at scale: for each spelling, N
triples at the wide lane's edges, N of the hard mix and N uniform random ones (the generators
of test_bf16_fma_wide.py; the packed spellings take them two lanes to a word), seeded per
spelling.  Prints the mismatches per spelling; exits 1 if there are any (docs/verification.md).

    PYTHONPATH=src python tests/bf16_fma_oracle_sweep.py [N]      # N = 2,000,000 there
"""

import os
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
import ptxfp  # noqa: E402
from test_bf16_fma_wide import _pack, wide_edges, hard_mix  # noqa: E402

SPELLINGS = ["fma.rn.bf16", "fma.rz.bf16", "fma.rm.bf16", "fma.rp.bf16", "fma.rn.relu.bf16",
             "fma.rz.oob.bf16", "fma.rm.oob.relu.bf16", "fma.rn.bf16x2", "fma.rp.relu.bf16x2"]


def main(n: int = 2_000_000) -> int:
    """Run the sweep with ``n`` triples of each kind per spelling; the number of mismatches."""
    lanes = bad = 0
    # the directed modes as spelled: this sweep holds the bf16 fma kernel of every mode to MPFR
    # (by default those spellings compute what ptxas 13.0 makes of them: test_gpu_recorded.py)
    for spelling in SPELLINGS:
        rng = np.random.default_rng(zlib.crc32(b"big" + spelling.encode()))
        uniform = [rng.integers(0, 1 << 16, n).astype(np.uint16) for _ in range(3)]
        ops = [np.concatenate(x) for x in zip(wide_edges(rng, n), hard_mix(rng, n), uniform)]
        ops = _pack(ops, ptxfp.parse(spelling).lanes)
        t = time.time()
        with ptxfp.policy.using(bf16_fma_directed="as_spelled"):
            got = ptxfp.execute(spelling, *ops)
            miss = int(np.count_nonzero(got != oracle.compute_array(spelling, *ops)))
        lanes += 3 * n
        bad += miss
        print(f"{spelling}: {3 * n} lanes, {miss} mismatches against MPFR, "
              f"{time.time() - t:.0f} s", flush=True)
    print(f"{lanes} lanes, {bad} mismatches")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(*(int(float(x)) for x in sys.argv[1:])) else 0)
