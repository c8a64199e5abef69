"""The kernel's parameters as a state space with addresses: ``mov.b64 %rd, param`` (a
parameter's address), ``cvta.param`` / ``cvta.to.param``, ``ld.param`` through a register and
generic loads of a parameter's bytes (CuTe reads its parameter struct and its tensor maps
that way).

Layout: the entry's parameters in declaration order, each at the next multiple of its
``.align`` (else its element size), as the CUDA ABI lays out a kernel's parameter buffer.
The buffer is one more window of the generic address space (state.py): each thread's copy
lives in the state's flat byte array beside the other spaces, and the entry parameters'
values (``state.params``) are views of it, so ``ld.param [name+imm]``, ``ld.param
[%rd+imm]`` and a generic ``ld`` read the same bytes.  A parameter's address is
``PARAM_BASE + offset``, the same number in the .param space and as a generic address
(``cvta.param`` is the identity, as ``cvta.global`` is)."""

from __future__ import annotations

from ...errors import UninitializedRegister
from .base import WIDTH

#: generic (and .param) address of the first byte of the kernel's parameter buffer
PARAM_BASE = 0x7F00_0000_0000


def param_size(d) -> int:
    """Bytes of one parameter or .param variable declaration (`reader.Param` / `Decl`)."""
    n = 1
    for k in getattr(d, "array", None) or ():
        n *= k
    return max(WIDTH.get(d.type, 8) // 8, 1) * max(n, 1) * getattr(d, "vector", 1)


def layout(prog):
    """{name: (offset, size)} of the entry's parameters and the buffer's size, computed once
    per program."""
    hit = getattr(prog, "_param_layout", None)
    if hit is not None:
        return hit
    off, out = 0, {}
    for name, p in prog.params.items():
        size = param_size(p)
        align = p.align or max(WIDTH.get(p.type, 8) // 8, 1)
        off = -(-off // align) * align
        out[name] = (off, size)
        off += size
    prog._param_layout = (out, max(off, 1))
    return prog._param_layout


def check_given(st, name, where):
    if name not in st.params:
        raise UninitializedRegister(
            f"parameter '{name}' has no value (give it as an input, e.g. "
            f"inputs={{'{name}': ...}}; bytes for one wider than 8 bytes)", *where,
            rule="uninitialized")
