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
is aligned by ea+eb whatever its significand.  A zero product, and a zero c, have a fixed
exponent per architecture and result type (``zero_exp`` for an f32 result, ``zero_exp_f16``
for an f16 one: MMA-Sim 2.1.1's ``e_zero``, -132 on Ampere/Ada and -133 on Hopper/Blackwell for
f32, so 0 * 2**100 in bf16 beside 1e-10 leaves 1e-10 whole).  Under the policy
``mma_model="mmasim-2026-01"`` (ptxfp.policy) a zero *factor* has the exponent -126 instead
(MMA-Sim's January 2026 source: 0 * 2**100 is a term of exponent -26).
The block-scaled kinds add the scale factors' exponents to the product exponents
(``mxf8f6f4``); ``mxf4``/``mxf4nvf4`` sum each ``group`` (16) of products exactly first, scale
that sub-dot by the two scale factors and align it by the scale exponents alone.

Sources, checked for every figure below (docs/semantics.md, "Tensor cores", has the details):

- [MMA-Sim] P. Xie, Y. Wang, F. Yang, M. Yang, "MMA-Sim: Bit-accurate reference model of
  tensor cores and matrix cores", arXiv:2511.10909 (2025), and its released model
  (github.com/microsoft/MMA-Sim, ``mmasim/simulator/{nv_ptx,arithmetic}.py``): fraction bits
  per architecture (Volta 23, Turing/Ampere/Ada 24, Hopper/Blackwell 25, fp8 on Ada and Hopper
  13 with the f32 result cut to 13 fraction bits, Blackwell mxf4/nvf4 35), the block sizes
  (``_mma_L_max_bytes``: 8, 16, 32 bytes of A per step), NaN/inf rules, the canonical NaN,
  overflow to infinity.  The zero exponents are MMA-Sim 2.1.1's (``mmasim/nv_ptx/sim.py``,
  ``_mma_e_zero_for_fp32`` / ``_mma_e_zero_for_fp16``, and the block-scaled classes' ``e_zero``):
  f32 result -131 Volta, -132 Turing/Ampere/Ada, -133 Hopper/Blackwell/RTX Blackwell, -139
  mxf4/mxf4nvf4; f16 result -19, -20, -21; Turing's m8n8k4 takes Volta's figures.
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
from functools import lru_cache

from ..errors import PtxfpError
from ..isa import mma as _table

__all__ = ["MmaParams", "ARCH", "TARGETS", "OPCODE_TARGETS", "kind_of", "params_for",
           "target_family", "TargetError", "ZERO_EXP_2026_01"]

#: the exponent of a zero factor in MMA-Sim's January 2026 source (policy mma_model
#: "mmasim-2026-01"), whatever the architecture and result type
ZERO_EXP_2026_01 = -126


class TargetError(PtxfpError):
    """A target that does not have the instruction, or does not take its types."""


@dataclass(frozen=True)
class MmaParams:
    """The numerics of one input kind on one architecture."""
    block: int              #: most products fused in one step (a form's step is min(k, block))
    frac_bits: int          #: fraction bits kept below the largest term exponent
    f32_frac: int = 23      #: fraction bits of an f32 result (rounded toward zero)
    group: int = 0          #: mxf4/nvf4: products summed exactly per sub-dot (0: none)
    zero_exp: int = -133    #: the exponent of a zero product (or a zero c), f32 result
    zero_exp_f16: int = -21  #: the same for an f16 result
    source: str = ""        #: where the figures come from

    def zero_exponent(self, out: str) -> int:
        """The alignment exponent of a zero term for a result of type ``out`` (f32, f16)."""
        return self.zero_exp_f16 if out == "f16" else self.zero_exp


_V = "[MMA-Sim] Volta: 23 bits, 4 f16 per step, e_zero -131 / -19"
_T = "[MMA-Sim] Turing: 24 bits, 8 f16 per step, e_zero -132 / -20"
_T4 = "[MMA-Sim] Turing m8n8k4: Volta's figures (23 bits, 4 per step, e_zero -131 / -19)"
_A = ("[FHMP] A100; [KM] A100TC.m (fma 8, neab 1); [MMA-Sim] Ampere 24 bits, split k, "
      "e_zero -132 / -20")
_A_TF = "[KM] A100TC.m (tf32 fma 4); [MMA-Sim] Ampere 24 bits, k8 split in halves, e_zero -132"
_ADA = "[MMA-Sim] Ada Lovelace 24 bits, split k, e_zero -132 / -20"
_ADA8 = ("[MMA-Sim] Ada Lovelace fp8: 13 bits, f32 result cut to 13 fraction bits, split k32, "
         "e_zero -132 / -20")
_H = "[KM] H100TC.m (fma 16, neab 2); [MMA-Sim] Hopper 25 bits, e_zero -133 / -21"
_H_TF = "[KM] H100TC.m (tf32 fma 8); [MMA-Sim] Hopper 25 bits, e_zero -133"
_H8 = ("[KM] H100TC.m (fp8 fma 32, neab -10); [MMA-Sim] Hopper wgmma fp8: 13 bits, f32 "
       "result cut to 13 fraction bits, e_zero -133 / -21")
_B = "[KM] B200TC.m (fma 16, neab 2); [MMA-Sim] Blackwell 25 bits, e_zero -133 / -21"
_B_TF = "[KM] B200TC.m (tf32 fma 8); [MMA-Sim] Blackwell 25 bits, e_zero -133"
_B8 = "[KM] B200TC.m (fp8 fma 32, neab 2); [MMA-Sim] Blackwell f8f6f4 25 bits, e_zero -133 / -21"
_BMX = ("[MMA-Sim] Blackwell mxf8f6f4: scale exponents added to the product exponents, 25 bits, "
        "e_zero -133")
_BNV = "[MMA-Sim] Blackwell mxf4nvf4: exact 16-element sub-dots, scaled, 35 bits, e_zero -139"
_R = "[MMA-Sim] RTX Blackwell mma.sync: 25 bits, 32 bytes of A per step, e_zero -133 / -21"
_RMX = "[MMA-Sim] RTX Blackwell mma.sync mxf8f6f4: as Blackwell's, e_zero -133"
_RNV = "[MMA-Sim] RTX Blackwell mma.sync mxf4/mxf4nvf4: as Blackwell's, e_zero -139"

#: the zero exponents (f32 result, f16 result) of each generation (MMA-Sim 2.1.1)
_Z_VOLTA = dict(zero_exp=-131, zero_exp_f16=-19)
_Z_AMPERE = dict(zero_exp=-132, zero_exp_f16=-20)
_Z_HOPPER = dict(zero_exp=-133, zero_exp_f16=-21)
_Z_MXF4 = dict(zero_exp=-139, zero_exp_f16=-139)

#: target -> input kind -> numerics.  Input kinds: f16, bf16, tf32, fp8 (e4m3/e5m2, mixed),
#: f6f4 (kind::f8f6f4 with an fp6/fp4 operand: the fp8 figures), mxf8f6f4, mxf4 (the mxf4 and
#: mxf4nvf4 kinds).  A key ``kind@mMnNkK`` holds the numerics of one shape where they differ
#: from the kind's (Turing's m8n8k4).  f64 (an IEEE fma chain) and the integer forms (exact)
#: are the same on every target and need no row.
ARCH: dict[str, dict[str, MmaParams]] = {
    "sm_70": {
        "f16": MmaParams(4, 23, **_Z_VOLTA, source=_V),
    },
    "sm_75": {
        "f16": MmaParams(8, 24, **_Z_AMPERE, source=_T),
        "f16@m8n8k4": MmaParams(4, 23, **_Z_VOLTA, source=_T4),
    },
    "sm_80": {
        "f16": MmaParams(8, 24, **_Z_AMPERE, source=_A),
        "bf16": MmaParams(8, 24, **_Z_AMPERE, source=_A),
        "tf32": MmaParams(4, 24, **_Z_AMPERE, source=_A_TF),
    },
    "sm_89": {
        "f16": MmaParams(8, 24, **_Z_AMPERE, source=_ADA),
        "bf16": MmaParams(8, 24, **_Z_AMPERE, source=_ADA),
        "tf32": MmaParams(4, 24, **_Z_AMPERE, source=_ADA),
        "fp8": MmaParams(16, 13, f32_frac=13, **_Z_AMPERE, source=_ADA8),
    },
    "sm_90": {
        "f16": MmaParams(16, 25, **_Z_HOPPER, source=_H),
        "bf16": MmaParams(16, 25, **_Z_HOPPER, source=_H),
        "tf32": MmaParams(8, 25, **_Z_HOPPER, source=_H_TF),
        "fp8": MmaParams(32, 13, f32_frac=13, **_Z_HOPPER, source=_H8),
    },
    "sm_100": {
        "f16": MmaParams(16, 25, **_Z_HOPPER, source=_B),
        "bf16": MmaParams(16, 25, **_Z_HOPPER, source=_B),
        "tf32": MmaParams(8, 25, **_Z_HOPPER, source=_B_TF),
        "fp8": MmaParams(32, 25, **_Z_HOPPER, source=_B8),
        "f6f4": MmaParams(32, 25, **_Z_HOPPER, source=_B8),
        "mxf8f6f4": MmaParams(32, 25, **_Z_HOPPER, source=_BMX),
        "mxf4": MmaParams(64, 35, group=16, **_Z_MXF4, source=_BNV),
    },
    "sm_120": {
        "f16": MmaParams(16, 25, **_Z_HOPPER, source=_R),
        "bf16": MmaParams(16, 25, **_Z_HOPPER, source=_R),
        "tf32": MmaParams(8, 25, **_Z_HOPPER, source=_R),
        "fp8": MmaParams(32, 25, **_Z_HOPPER, source=_R),
        "f6f4": MmaParams(32, 25, **_Z_HOPPER, source=_R),
        "mxf8f6f4": MmaParams(32, 25, **_Z_HOPPER, source=_RMX),
        "mxf4": MmaParams(64, 35, group=16, **_Z_MXF4, source=_RNV),
    },
}

#: the targets the numerics know (an 'a' suffix, sm_90a, names the same numerics)
TARGETS = tuple(ARCH)

#: which targets have each matrix instruction (PTX ISA 9.0: mma.sync sm_70+ (m8n8k4 f16; the
#: other shapes and types from sm_75, sm_80, sm_89, sm_90, sm_120: the instruction table's
#: requirements, checked per (shape, types) by ``params_for``); wgmma.mma_async sm_90a only;
#: tcgen05.mma sm_100a)
OPCODE_TARGETS: dict[str, tuple[str, ...]] = {
    "mma": ("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"),
    "wgmma": ("sm_90",),
    "tcgen05.mma": ("sm_100",),
}
_SM = {t: int(t[3:]) for t in ARCH}

#: input kinds mma.sync has on sm_120 only (tcgen05.mma has them on sm_100)
_F8F6F4_KINDS = frozenset({"f6f4", "mxf8f6f4", "mxf4"})

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
    if kind in _F8F6F4_KINDS and opcode == "mma" and fam != "sm_120":
        raise TargetError(f"{_name(form)}: mma.sync takes the {kind} operand types on sm_120 "
                          f"only (tcgen05.mma on sm_100 takes them too); not on {fam}")
    _check_shape(form, fam, target)
    if kind in ("f64", "int"):
        return None
    row = ARCH[fam].get(f"{kind}@m{getattr(form, 'm')}n{getattr(form, 'n')}k{getattr(form, 'k')}")
    row = row or ARCH[fam].get(kind)
    if row is None:
        raise TargetError(f"{_name(form)}: {target} has no {opcode} with .{getattr(form, 'atype')}"
                          f" inputs ({_kind_targets(kind, opcode)})")
    return row


def _kind_targets(kind: str, opcode: str) -> str:
    have = [t for t in OPCODE_TARGETS[opcode] if kind in ARCH[t]]
    return "on " + ", ".join(have) if have else "on no target"


def _check_shape(form: object, fam: str, target: str) -> None:
    """The instruction table's target requirement of this (shape, types) of mma.sync
    (e.g. the f64 m16n8k16 is sm_90's; bf16 and tf32 sm_80's; m8n8k4 f16 sm_70's)."""
    if getattr(form, "opcode") != "mma":
        return
    shape = (getattr(form, "m"), getattr(form, "n"), getattr(form, "k"))
    types = (getattr(form, "dtype"), getattr(form, "atype"), getattr(form, "btype"),
             getattr(form, "ctype"))
    need = _mma_targets(shape, types, getattr(form, "kind", None))
    if need is None:
        return
    sm, lists, first = need
    if lists and not all(any(t.rstrip("af") == fam for t in lst) for lst in lists):
        raise TargetError(f"{_name(form)}: {first} and its family have this shape and types;"
                          f" not {target}")
    if sm > _SM[fam]:
        raise TargetError(f"{_name(form)}: this shape and types need sm_{sm} or later; not "
                          f"{target}")


@lru_cache(maxsize=None)
def _mma_targets(shape: tuple[int, int, int], types: tuple[str, ...], kind: str | None
                 ) -> tuple[int, tuple[tuple[str, ...], ...], str] | None:
    """(least sm, 'only:' target lists, the first target) of the mma.sync row with this
    shape and types (None: no row has them)."""
    for row in _table.ROWS:
        mx = row.matrix
        if (row.opcode == "mma" and mx is not None and shape in mx.shapes
                and row.types[:4] == types and mx.kind == kind):
            lists = tuple(tuple(k.split(":", 1)[1].split(",")) for k, _, _ in row.requires
                          if k.startswith("only:"))
            return row.min_sm, lists, _table.min_target(row)
    return None
