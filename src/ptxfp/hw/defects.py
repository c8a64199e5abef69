"""Known toolchain defects: forms whose GPU answers say what ptxas compiled, not what the
spelling means.  The harness labels them as such (probes, forms, report) instead of "the GPU
does something the model cannot express", and keeps their probes out of the policy answers.

Today: the 24 ``fma.{rz,rm,rp}{.oob}{.relu}.bf16`` and ``.bf16x2`` spellings, which the PTX ISA
does not have (half-precision fma takes .rn only) and ptxas 13.0 compiles as other arithmetic
(docs/ptxas-findings.md; ``isa.arith.undocumented_bf16_fma`` says which spellings).
"""

from __future__ import annotations

from .forms import parse_form

DOC = "docs/ptxas-findings.md"


def toolchain_defect(spelling):
    """The label of a form with a known toolchain defect ("toolchain defect: ptxas 13.0
    compiles ... see docs/ptxas-findings.md"), or None."""
    from ..isa.arith import undocumented_bf16_fma
    try:
        ins = parse_form(spelling)
    except ValueError:
        return None
    if ins.family != "arith" or not undocumented_bf16_fma(ins.opcode, ins.rounding,
                                                          (ins.dtype,)):
        return None
    if ins.lanes == 2:
        how = (f"as fma.rn{'.oob' if ins.oob else ''}{'.relu' if ins.relu else ''}.bf16x2 "
               "(the rounding mode dropped)")
    else:
        how = (f"as f16 arithmetic: cvt.rn.f16.f32(fma.{ins.rounding}.f32 of a, b, c read as "
               ".f16)" + (", .relu/.oob dropped" if ins.relu or ins.oob else ""))
    return f"toolchain defect: ptxas 13.0 compiles {ins} {how}, see {DOC}"


def defect_forms(spellings):
    """The spellings among ``spellings`` with a known toolchain defect."""
    return [s for s in spellings if toolchain_defect(s)]
