"""Record the machine code ptxas wraps around each SFU (MUFU) instruction, per (form, target).

For every form of FORMS and every target of TARGETS this compiles one tiny kernel

    ld.global a, [p]; ld.global b, [p+W]; <form> d, a{, b}; st.global [p+2W], d

with ptxas, disassembles it with cuobjdump (nvdisasm) and keeps the instructions that carry the
computation (loads, the float arithmetic, selects, constants, MUFU, the store), each line as
SASS prints it without its address and encoding.  The result is written to
src/ptxfp/ops/sfu/sass_data.py with the ptxas version; ptxfp.ops.sfu.sequence reads it.

    python tools/sfu_sequences.py [--ptxas PATH] [--cuobjdump PATH]

Defaults: ptxas and cuobjdump on PATH (cuobjdump needs nvdisasm on PATH too).  Installed here
with ``pip install --target /work/tools/cuda135 nvidia-cuda-nvcc==13.5.37
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/ptxfp/ops/sfu/sass_data.py"
TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
FORMS = tuple(f"{op}.approx{ftz}.f32" for op in ("ex2", "rcp", "rsqrt", "sqrt", "lg2", "sin",
                                                  "cos") for ftz in ("", ".ftz")) + (
    "div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32",
    "tanh.approx.f32", "rcp.approx.ftz.f64", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64",
    "sin.approx.ftz.2pi.f32", "cos.approx.ftz.2pi.f32")
#: the .version of the kernels: 8.7, or 9.5 for the forms that need it (.2pi: ptxas 13.5)
VERSION = {"sin.approx.ftz.2pi.f32": "9.5", "cos.approx.ftz.2pi.f32": "9.5"}
#: the opcodes kept (the rest is addressing, thread ids, control flow)
KEEP = re.compile(r"^(@!?P\d+\s+)?(LDG|STG|FSETP|FSEL|FMUL|FADD|FFMA|MUFU|IMAD\.MOV\.U32|MOV|"
                  r"DSETP|DMUL|DFMA|DADD|FSETP|LOP3|IADD3|ISETP|SEL|SHF|IMAD|FCHK|FRND)\b")
#: the operand lines kept for IMAD only when they load a constant
_ADDR = re.compile(r"IMAD(\.WIDE)?(\.U32)? R\d+, R\d+, 0x|IMAD\.MOV\.U32 R1,|MOV R1,|"
                   r"IMAD.*c\[0x0\]|IADD3.*c\[0x0\]|MOV R\d+, c\[")


def kernel(form: str, target: str) -> str:
    t = form.rsplit(".", 1)[1]
    w = 8 if t == "f64" else 4
    reg = "fd" if t == "f64" else "f"
    two = form.startswith("div.")
    body = f"{form} %{reg}3, %{reg}1" + (f", %{reg}2;" if two else ";")
    return "\n".join([
        f".version {VERSION.get(form, '8.7')}", f".target {target}", ".address_size 64",
        ".visible .entry k(.param .u64 p) {",
        f" .reg .b64 %rd<3>; .reg .{t} %{reg}<4>;",
        " ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;",
        f" ld.global.{t} %{reg}1, [%rd2]; ld.global.{t} %{reg}2, [%rd2+{w}];",
        f" {body}", f" st.global.{t} [%rd2+{2 * w}], %{reg}3;", " ret;", "}", ""])


def sass(ptxas: str, cuobjdump: str, form: str, target: str) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory() as d:
        ptx, cubin = Path(d) / "k.ptx", Path(d) / "k.cubin"
        ptx.write_text(kernel(form, target))
        subprocess.run([ptxas, f"-arch={target}", str(ptx), "-o", str(cubin)], check=True)
        text = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True,
                              capture_output=True, text=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if not m:
            continue
        ins = re.sub(r"\s+", " ", m.group(1).replace(".reuse", "")).strip()
        if KEEP.match(ins) and not _ADDR.search(ins):
            out.append(ins)
    return tuple(out)


def version(ptxas: str) -> str:
    return subprocess.run([ptxas, "--version"], check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-2].strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--codegen", action="store_true",
                    help="only write kernels_gen.py from the recorded sass_data.py")
    a = ap.parse_args()
    if a.codegen:
        codegen()
        return
    lines = ['"""The machine code ptxas wraps around each SFU instruction: written by',
             'tools/sfu_sequences.py (do not edit; rerun it with a newer ptxas).  SASS maps',
             '(form, target) to the instructions of a kernel that loads a (and b) from [p],',
             '[p+W], runs the form and stores d at [p+2W], as cuobjdump prints them (address,',
             'encoding and .reuse dropped; addressing and control flow left out)."""', "",
             "from __future__ import annotations", "",
             f"PTXAS = {version(a.ptxas)!r}", f"TARGETS = {TARGETS!r}", "SASS = {"]
    for form in FORMS:
        for target in TARGETS:
            seq = sass(a.ptxas, a.cuobjdump, form, target)
            lines.append(f"    ({form!r}, {target!r}): (")
            lines += [f"        {s!r}," for s in seq]
            lines.append("    ),")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")
    codegen()


def codegen() -> None:
    """Write kernels_gen.py from sass_data.py (ptxfp.ops.sfu.sequence.generate)."""
    import importlib
    import sys
    sys.path.insert(0, str(OUT.parents[3]))
    data = importlib.import_module("ptxfp.ops.sfu.sass_data")
    seq = importlib.import_module("ptxfp.ops.sfu.sequence")
    gen = OUT.parent / "kernels_gen.py"
    gen.write_text(seq.generate(data.SASS, data.PTXAS))
    print(f"wrote {gen}")


if __name__ == "__main__":
    main()
