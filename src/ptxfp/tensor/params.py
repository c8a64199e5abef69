"""The numerics of the tensor cores, one table per architecture: data, not code per architecture.

Every floating-point matrix form computes D = A*B + C as a chain of *block steps*: a step takes
the accumulator ``c`` (the previous step's rounded result, or C) and ``block`` products
a_k*b_k, and forms ``c + sum a_k*b_k`` as one fused sum: every product exact, every term
(``c`` too: ``c_in_block``) aligned to the largest term exponent and truncated toward zero to
``frac_bits`` fraction bits below it, the terms summed exactly (no normalization inside the
step), the sum normalized once and rounded into the result format: toward zero for an f32
result (keeping ``f32_frac`` fraction bits: 23, or 13 for Hopper's fp8 path), to nearest even
for an f16 result.  Steps run in increasing k; a form with k larger than ``block`` is several
steps (A100's split of k16 into two halves of 8).

The exponent of a term is the sum of its factors' exponents, each read off its encoding (a
subnormal has its format's smallest normal exponent, with a significand below 1), so a product
is aligned by ea+eb whatever its significand; a zero factor has the exponent ``zero_exp``
(-126, for every format: MMA-Sim's rule, so 0 * 2**100 in bf16 is a term of exponent -26).
The block-scaled kinds add the scale factors' exponents to the product exponents
(``mxf8f6f4``); ``mxf4``/``mxf4nvf4`` sum each ``group`` (16) of products exactly first, scale
that sub-dot by the two scale factors and align it by the scale exponents alone.

Sources, checked for every figure below (docs/semantics.md, "Tensor cores", has the details):

- [MMA-Sim] P. Xie, Y. Wang, F. Yang, M. Yang, "MMA-Sim: Bit-accurate reference model of
  tensor cores and matrix cores", arXiv:2511.10909 (2025), and its released model
  (github.com/microsoft/MMA-Sim, ``mmasim/simulator/{nv_ptx,arithmetic}.py``): fraction bits
  per architecture (Ampere/Ada 24, Hopper/Blackwell 25, fp8 on Ada and Hopper 13 with the f32
  result cut to 13 fraction bits, Blackwell mxf4/nvf4 35), Ampere/Ada split-K, zero exponent
  -126, NaN/inf rules, the canonical NaN, overflow to infinity.
- [KM] F. A. Khattak, M. Mikaitis, "Accurate models of NVIDIA tensor cores", arXiv:2512.07004
  (2025), and its models (github.com/north-numerical-computing/MATLAB-tensor-core,
  ``models/{A100,H100,B200}TC.m``): FMA sizes (A100 8, tf32 4; H100/B200 16, tf32 8, fp8 32)
  and extra alignment bits (A100 1, H100/B200 2, H100 fp8 -10), i.e. 24, 25 and 13 fraction
  bits; final rounding toward zero, to nearest even for an f16 result.
- [FHMP] M. Fasi, N. J. Higham, M. Mikaitis, S. Pranesh, "Numerical behavior of NVIDIA tensor
  cores", PeerJ Comput. Sci. 7:e330 (2021): exact products, alignment to the largest exponent
  with truncation, no normalization inside a block, round toward zero, subnormals kept (V100,
  T4, A100).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PtxfpError

__all__ = ["MmaParams", "ARCH", "TARGETS", "OPCODE_TARGETS", "kind_of", "params_for",
           "target_family", "TargetError"]


class TargetError(PtxfpError):
    """A target that does not have the instruction, or does not take its types."""


@dataclass(frozen=True)
class MmaParams:
    """The numerics of one input kind on one architecture."""
    block: int              #: most products fused in one step (a form's step is min(k, block))
    frac_bits: int          #: fraction bits kept below the largest term exponent
    f32_frac: int = 23      #: fraction bits of an f32 result (rounded toward zero)
    group: int = 0          #: mxf4/nvf4: products summed exactly per sub-dot (0: none)
    zero_exp: int = -126    #: the exponent a zero factor (or a zero c) has in the alignment
    source: str = ""        #: where the figures come from


_A = "[FHMP] A100; [KM] A100TC.m (fma 8, neab 1); [MMA-Sim] Ampere 24 bits, split k"
_A_TF = "[KM] A100TC.m (tf32 fma 4); [MMA-Sim] Ampere 24 bits, k8 split in halves"
_ADA = "[MMA-Sim] Ada Lovelace 24 bits, split k"
_ADA8 = "[MMA-Sim] Ada Lovelace fp8: 13 bits, f32 result cut to 13 fraction bits, split k32"
_H = "[KM] H100TC.m (fma 16, neab 2); [MMA-Sim] Hopper 25 bits"
_H_TF = "[KM] H100TC.m (tf32 fma 8); [MMA-Sim] Hopper 25 bits"
_H8 = ("[KM] H100TC.m (fp8 fma 32, neab -10); [MMA-Sim] Hopper wgmma fp8: 13 bits, f32 "
       "result cut to 13 fraction bits")
_B = "[KM] B200TC.m (fma 16, neab 2); [MMA-Sim] Blackwell 25 bits"
_B_TF = "[KM] B200TC.m (tf32 fma 8); [MMA-Sim] Blackwell 25 bits"
_B8 = "[KM] B200TC.m (fp8 fma 32, neab 2); [MMA-Sim] Blackwell f8f6f4 25 bits"
_BMX = "[MMA-Sim] Blackwell mxf8f6f4: scale exponents added to the product exponents, 25 bits"
_BNV = "[MMA-Sim] Blackwell mxf4nvf4: exact 16-element sub-dots, scaled, 35 bits"

#: target -> input kind -> numerics.  Input kinds: f16, bf16, tf32, fp8 (e4m3/e5m2, mixed),
#: f6f4 (tcgen05 kind::f8f6f4 with an fp6/fp4 operand: the fp8 figures), mxf8f6f4, mxf4 (the
#: mxf4 and mxf4nvf4 kinds).  f64 (an IEEE fma chain) and the integer forms (exact) are the same
#: on every target and need no row.
ARCH: dict[str, dict[str, MmaParams]] = {
    "sm_80": {
        "f16": MmaParams(8, 24, source=_A),
        "bf16": MmaParams(8, 24, source=_A),
        "tf32": MmaParams(4, 24, source=_A_TF),
    },
    "sm_89": {
        "f16": MmaParams(8, 24, source=_ADA),
        "bf16": MmaParams(8, 24, source=_ADA),
        "tf32": MmaParams(4, 24, source=_ADA),
        "fp8": MmaParams(16, 13, f32_frac=13, source=_ADA8),
    },
    "sm_90": {
        "f16": MmaParams(16, 25, source=_H),
        "bf16": MmaParams(16, 25, source=_H),
        "tf32": MmaParams(8, 25, source=_H_TF),
        "fp8": MmaParams(32, 13, f32_frac=13, source=_H8),
    },
    "sm_100": {
        "f16": MmaParams(16, 25, source=_B),
        "bf16": MmaParams(16, 25, source=_B),
        "tf32": MmaParams(8, 25, source=_B_TF),
        "fp8": MmaParams(32, 25, source=_B8),
        "f6f4": MmaParams(32, 25, source=_B8),
        "mxf8f6f4": MmaParams(32, 25, source=_BMX),
        "mxf4": MmaParams(64, 35, group=16, source=_BNV),
    },
}

#: the targets the numerics know (an 'a' suffix, sm_90a, names the same numerics)
TARGETS = tuple(ARCH)

#: which targets have each matrix instruction (PTX ISA 9.0: mma.sync sm_80+ with fp8 from
#: sm_89; wgmma.mma_async sm_90a only; tcgen05.mma sm_100a)
OPCODE_TARGETS: dict[str, tuple[str, ...]] = {
    "mma": ("sm_80", "sm_89", "sm_90", "sm_100"),
    "wgmma": ("sm_90",),
    "tcgen05.mma": ("sm_100",),
}

#: input kinds only tcgen05.mma has (mma.sync's f8f6f4 kinds are sm_120a's)
_TCGEN05_ONLY = frozenset({"f6f4", "mxf8f6f4", "mxf4"})

_FP8 = frozenset({"e4m3", "e5m2"})
_F6F4 = frozenset({"e4m3", "e5m2", "e2m3", "e3m2", "e2m1"})
_INTS = frozenset({"s8", "u8", "s4", "u4", "b1"})


def target_family(target: str) -> str:
    """'sm_90a' -> 'sm_90'; an unknown target is a TargetError naming the known ones."""
    t = target.strip().lower() if isinstance(target, str) else target
    if isinstance(t, str) and t.endswith(("a", "f")) and t[:-1] in ARCH:
        t = t[:-1]
    if not isinstance(t, str) or t not in ARCH:
        raise TargetError(f"target {target!r}: the tensor-core numerics know "
                          f"{', '.join(TARGETS)} (an 'a' suffix is accepted)")
    return t


def kind_of(form: object) -> str:
    """The input kind of a form: f16, bf16, tf32, fp8, f6f4, mxf8f6f4, mxf4, f64 or int."""
    at, bt = getattr(form, "atype"), getattr(form, "btype")
    kind = getattr(form, "kind", None)
    if kind in ("mxf4", "mxf4nvf4"):
        return "mxf4"
    if kind == "mxf8f6f4":
        return "mxf8f6f4"
    if at == bt and at in ("f16", "bf16", "tf32", "f64"):
        return str(at)
    if at in _INTS and bt in _INTS:
        return "int"
    if at in _FP8 and bt in _FP8:
        return "fp8"
    if at in _F6F4 and bt in _F6F4:
        return "f6f4"
    raise TargetError(f"{_name(form)}: A of type .{at} with B of type .{bt} is not a matrix "
                      f"form the tensor-core numerics compute")


def _name(form: object) -> str:
    sp = getattr(form, "spelling", "")
    return repr(sp) if sp else getattr(form, "opcode", "mma")


def params_for(form: object, target: str) -> MmaParams | None:
    """The numerics of ``form`` on ``target`` (None for f64 and the integer forms, which are
    the same everywhere); TargetError when the target lacks the instruction or the kind."""
    fam = target_family(target)
    opcode = getattr(form, "opcode")
    if opcode not in OPCODE_TARGETS:
        raise TargetError(f"{_name(form)}: {opcode!r} is not a matrix instruction "
                          f"({', '.join(OPCODE_TARGETS)})")
    if fam not in OPCODE_TARGETS[opcode]:
        have = ", ".join(OPCODE_TARGETS[opcode])
        raise TargetError(f"{_name(form)}: {target} has no {opcode} (it is on {have})")
    kind = kind_of(form)
    if kind in _TCGEN05_ONLY and opcode != "tcgen05.mma":
        raise TargetError(f"{_name(form)}: {opcode} does not take the {kind} operand types "
                          f"on {fam} (tcgen05.mma on sm_100 does)")
    if kind in ("f64", "int"):
        return None
    row = ARCH[fam].get(kind)
    if row is None:
        raise TargetError(f"{_name(form)}: {target} has no {opcode} with .{getattr(form, 'atype')}"
                          f" inputs (fp8 needs sm_89 or later)")
    return row
