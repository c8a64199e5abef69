"""What one matrix multiply-accumulate form is, as data: the interface between the instruction
table (rows of ``mma.sync``, ``wgmma.mma_async``, ``tcgen05.mma``; ``isa.mma``) and the
tensor-core numerics (``ptxfp.tensor``).

The rows say which spellings exist and what ptxas requires of them; an ``MmaForm`` says what a
parsed spelling computes: the shape, the element types of A, B, C and D, the layouts and, for
the block-scaled kinds, the scale factors.  The numerics read only this structure, so a new
form is a new row whose ``MmaForm`` the numerics already know how to compute.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the matrix instructions
OPCODES = ("mma", "wgmma", "tcgen05.mma")
#: element types, as PTX names them (without the dot); tf32 operands are 32-bit containers
#: whose low 13 bits the hardware ignores
ELEMENT_TYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "f32", "f64",
                 "s8", "u8", "s4", "u4", "b1", "s32")
#: tcgen05.mma kinds
KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")


@dataclass(frozen=True)
class MmaForm:
    """One matrix form: D (m x n) = A (m x k) * B (k x n) + C (m x n).

    ``alayout``/``blayout`` say how A and B are laid out in the instruction's fragments or
    shared-memory descriptors ('row' or 'col'; the numerics take whole matrices, A as m x k
    and B as k x n, whatever the layout).  ``kind`` is tcgen05's ``.kind::`` (None for mma and
    wgmma).  The block-scaled kinds carry ``scale_type`` ('ue8m0' or 'ue4m3') and
    ``scale_vec`` (1, 2 or 4: scale factors per row of A and per column of B over one k;
    the block along K is ``k // scale_vec``).  ``bitop`` is the b1 form's 'xor' or 'and'
    (with .popc).  ``satfinite`` clamps integer (and, where allowed, float) results.
    """

    opcode: str
    m: int
    n: int
    k: int
    atype: str
    btype: str
    ctype: str
    dtype: str
    alayout: str = "row"
    blayout: str = "col"
    kind: str | None = None
    scale_type: str | None = None
    scale_vec: int | None = None
    bitop: str | None = None
    satfinite: bool = False
    #: the canonical spelling this form was parsed from ('' when built by hand)
    spelling: str = ""

    @property
    def block_scaled(self) -> bool:
        return self.scale_type is not None

    @property
    def scale_block(self) -> int | None:
        """Elements of K that share one scale factor (None when not block-scaled)."""
        return None if self.scale_vec is None else self.k // self.scale_vec
