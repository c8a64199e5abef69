"""The kernel's parameters as a state space with addresses: ``mov.b64 %rd, param`` (a
parameter's address), ``cvta.param`` / ``cvta.to.param``, ``ld.param`` through a register and
generic loads of a parameter's bytes (CuTe reads its parameter struct and its tensor maps
that way).

Layout: the entry's parameters in declaration order, each at the next multiple of its
``.align`` (else its element size), as the CUDA ABI lays out a kernel's parameter buffer.
A parameter's address is ``PARAM_BASE + offset``, the same number in the .param space and
as a generic address (``cvta.param`` is the identity, as ``cvta.global`` is here), so a
generic ``ld`` or a tensor-map operand at such an address reads the parameter buffer."""

from __future__ import annotations

import numpy as np

from ...errors import InterpError, UninitializedRegister
from .base import WIDTH

#: generic (and .param) address of the first byte of the kernel's parameter buffer
PARAM_BASE = 0x7F00_0000_0000


def param_size(p) -> int:
    """Bytes of one parameter declaration (`reader.Param`)."""
    n = 1
    for k in p.array or ():
        n *= k
    return max(WIDTH.get(p.type, 8) // 8, 1) * n


def layout(prog):
    """{name: (offset, size)} and the buffer's size, computed once per program."""
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


def window(st):
    """The parameter buffer of every thread: uint8 array (n, size), made once a run from the
    parameters given as inputs (the others read as zero bytes)."""
    w = getattr(st, "param_window", None)
    if w is not None:
        return w
    lay, total = layout(st.prog)
    w = np.zeros((st.n, total), np.uint8)
    for name, (off, size) in lay.items():
        b = st.params.get(name)
        if b is not None:
            k = min(size, b.shape[1])
            w[:, off:off + k] = b[:, :k]
    st.param_window = w
    return w


def check_given(st, name, where):
    if name not in st.params:
        raise UninitializedRegister(
            f"parameter '{name}' has no value (give it as an input, e.g. "
            f"inputs={{'{name}': ...}}; bytes for one wider than 8 bytes)", *where,
            rule="uninitialized")


def locate(st, a, m, total, spelling, where):
    """(flat buffer, index) of parameter-space addresses `a` (int64, PARAM_BASE-based) for
    the threads of `m`, checked to lie inside the buffer and be aligned to `total`."""
    w = window(st)
    size = w.shape[1]
    live = a[m]
    if live.size:
        lo, hi = int(live.min()), int(live.max())
        if lo < PARAM_BASE or hi + total > PARAM_BASE + size:
            bad = lo if lo < PARAM_BASE else hi
            raise InterpError(f"'{spelling}': address {bad:#x} (+{total} bytes) is outside "
                              f"the {size}-byte parameter buffer (at {PARAM_BASE:#x})", *where,
                              rule="address")
        if (live & (total - 1)).any():
            raise InterpError(f"'{spelling}': address {int(live[(live & (total - 1)) != 0][0]):#x}"
                              f" is not {total}-byte aligned", *where, rule="address")
    idx = np.where(m, a - PARAM_BASE, 0) + np.arange(st.n, dtype=np.int64) * size
    return w.reshape(-1), idx


def read_bytes(st, tid, address, count, what, where):
    """`count` bytes at generic address `address` as thread `tid` sees them: the parameter
    buffer at PARAM_BASE, else global memory (uint8 array)."""
    if address >= PARAM_BASE:
        w = window(st)
        off = address - PARAM_BASE
        if off + count > w.shape[1]:
            raise InterpError(f"{what} at {address:#x} (+{count} bytes) is outside the "
                              f"{w.shape[1]}-byte parameter buffer", *where, rule="address")
        return w[tid, off:off + count]
    mem = st.mem
    if mem is None or address < 0 or address + count > mem.size:
        raise InterpError(f"{what} at {address:#x} (+{count} bytes) is outside the "
                          f"{0 if mem is None else mem.size}-byte memory", *where,
                          rule="address")
    return mem[address:address + count]
