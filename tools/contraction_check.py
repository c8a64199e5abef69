"""Hold ptxfp's contraction (ptxfp.ptx.contract) to what ptxas fused in whole modules.

For each PTX module given, compile it with ``ptxas -lineinfo`` for its .target, read which
add/sub lines became an FMA-class instruction (tools/contraction_probe.py's ``sass_by_line``
and ``fused_pairs``) and compare with the pairs ``contract.fusions`` finds.  ``--record FILE``
writes ptxas' pairs (and the SASS of the lines involved) as JSON, which tests/test_contract.py
compares against without ptxas.

    python tools/contraction_check.py tests/data/kernels/*.ptx [--record FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contraction_probe import PTXAS, NVDISASM, fused_pairs, sass_by_line, version  # noqa: E402


def ptxfp_pairs(text: str, target: str) -> list[tuple[int, int]]:
    from ptxfp.ptx.contract import fusions, run_target
    from ptxfp.ptx.reader import read
    prog = read(text)
    t = run_target(None, target)
    out = []
    for f in prog.functions:
        if f.has_body:
            out += [(x.producer.line, x.consumer.line)
                    for x in fusions(f.body, labels=f.labels, target=t)]
    return sorted(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--ptxas", default=PTXAS)
    ap.add_argument("--nvdisasm", default=NVDISASM)
    ap.add_argument("--record", help="write ptxas' pairs per module to this JSON file")
    a = ap.parse_args()
    from ptxfp.ptx.reader import read
    rec, bad = {}, 0
    for path in a.modules:
        text = Path(path).read_text()
        target = read(text).target
        by_line = sass_by_line(text, target, ptxas=a.ptxas, nvdisasm=a.nvdisasm)
        theirs = sorted(fused_pairs(text, by_line))
        ours = ptxfp_pairs(text, target)
        lines = sorted({x for p in theirs for x in p if x})
        rec[Path(path).name] = {"target": target, "fused": theirs,
                                "sass": {str(n): by_line.get(n, []) for n in lines}}
        same = theirs == ours
        bad += not same
        print(f"{path}: {target}: ptxas fused {len(theirs)} pairs, ptxfp {len(ours)}"
              + ("" if same else f"  DIFFER: ptxas-only {sorted(set(theirs) - set(ours))} "
                                 f"ptxfp-only {sorted(set(ours) - set(theirs))}"))
    if a.record:
        Path(a.record).write_text(json.dumps({"ptxas": version(a.ptxas), "modules": rec},
                                             indent=1) + "\n")
        print(f"wrote {a.record}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
