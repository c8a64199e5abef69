"""Write src/ptxfp/ops/sfu/tables.py from ptx-math's published tables.

ptx-math (Benjamin Carleton, MIT licence, https://github.com/bcarlet/ptx-math) publishes, per
SFU function, a table of quadratic-interpolation coefficients (c0, c1, c2) per segment of the
significand, the segment width (M leading fraction bits), each term's alignment in the sum, the
sum's weight, and a rounding bias (in the model sources, ``model_params.bias``).  These are
measured facts of the hardware; this tool copies the numbers (not code) into a Python module.

    python tools/sfu_tables.py /path/to/ptx-math [COMMIT]

(the checkout made by ``git archive`` of the commit named in the output's header).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

FUNCS = ("rcp", "sqrt", "rsqrt", "sin", "lg2", "ex2")
#: where each model's bias lives (ptx-math: src/ptxm/<file>.c, ``.bias = UINT64_C(...)``)
BIAS_FILE = {"rcp": "rcp.c", "sqrt": "sqrt.c", "rsqrt": "rsqrt.c", "sin": "sincos.c",
             "lg2": "lg2.c", "ex2": "ex2.c"}
OUT = Path(__file__).resolve().parents[1] / "src/ptxfp/ops/sfu/tables.py"


def read(root: Path, commit: str) -> str:
    lines = ['"""The SFU interpolation tables, from ptx-math (Benjamin Carleton, MIT licence,',
             'https://github.com/bcarlet/ptx-math, commit %s): written by' % commit,
             'tools/sfu_tables.py, do not edit.  Per function: M (leading fraction bits that',
             'index the table), the (c0, c1, c2) coefficients per segment, the left shifts of the',
             'three terms in the fixed-point sum (C0/C1/C2 alignment), the sum\'s weight (the bit',
             'of 1.0) and the rounding bias."""', "", "from __future__ import annotations", ""]
    for f in FUNCS:
        h = (root / f"src/ptxm/tables/{f}_table.h").read_text()
        c = (root / f"src/ptxm/tables/{f}_table.c").read_text()
        defs = dict(re.findall(r"#define\s+%s_(\w+)\s+(\d+)" % f.upper(), h))
        triples = re.findall(r"\{\s*(0x[0-9a-fA-F]+),\s*(0x[0-9a-fA-F]+),\s*(0x[0-9a-fA-F]+)\s*\}",
                             c)
        src = (root / "src/ptxm" / BIAS_FILE[f]).read_text()
        bias = re.search(r"\.bias\s*=\s*UINT64_C\((0x[0-9a-fA-F]+)\)", src)
        assert bias, f
        U = f.upper()
        lines.append(f"{U}_M = {defs['M']}")
        for k in ("C0_TERM_ALIGNMENT", "C1_TERM_ALIGNMENT", "C2_TERM_ALIGNMENT", "SUM_WEIGHT"):
            lines.append(f"{U}_{k} = {defs[k]}")
        lines.append(f"{U}_BIAS = {bias.group(1).lower()}")
        lines.append(f"{U}_TABLE = (")
        for t in triples:
            lines.append("    (%s, %s, %s)," % tuple(x.lower() for x in t))
        lines.append(")")
        n = len(triples)
        assert n in (64, 128), (f, n)
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    root = Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    OUT.write_text(read(root, commit))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
