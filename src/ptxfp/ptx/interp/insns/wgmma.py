"""The warpgroup tensor core of sm_90a: wgmma.mma_async, wgmma.fence, wgmma.commit_group,
wgmma.wait_group.

A warpgroup is four consecutive warps of a block (threads 128 g .. 128 g + 127); its 128
threads run ``wgmma.mma_async`` together.  A (m64 x k) comes from the warpgroup's registers or
from shared memory through a matrix descriptor, B (k x n) from shared memory through one; the
descriptors are decoded as the PTX ISA manual's "Matrix Descriptor Format" (9.7.15.5.1.2.2:
start address bits 0-13, leading byte offset 16-29, stride byte offset 32-45, each in units
of 16 bytes; base offset 49-51; swizzle 62-63: 0 none, 1 128B, 2 64B, 3 32B) and laid out by
its "Shared Memory Matrix Layout" canonical layouts (9.7.15.5.1.2.1.3), in bytes, with
T = 16 / element bytes and x = 1, 2, 4, 8 for none/32B/64B/128B:

- K-major, none:      (r, k) -> (r % 8) 16 + (r / 8) SBO + (k % T) e + (k / T) LBO
- K-major, swizzled:  (r, k) -> (r % 8) 16x + (r / 8) SBO + k e
- MN-major, none:     (r, k) -> (r % T) e + (r / T) SBO + (k % 8) 16 + (k / 8) LBO
- MN-major, swizzled: (r, k) -> (r % xT) e + (r / xT) LBO + (k % 8) 16x + (k / 8) SBO

(r: M of A, N of B; MN-major is ``imm-trans`` 1), the swizzle then applied to the address:
bits 4.. 4+log2(x) XOR bits 7.. 7+log2(x) (CuTe's Swizzle<log2 x, 4, 3>).  The accumulator
fragments are the manual's figures for wgmma D (warp w of the group, lane l, element i:
row 16 w + l / 4 + 8 ((i / 2) mod 2), column 8 (i / 4) + 2 (l mod 4) + i mod 2) and A in
registers the mma.m16n8k{16,8,32} A fragment of rows 16 w .. 16 w + 15.
D = ptxfp.mma(form, A, B, scale-d ? D : 0) at the module's target.

The instruction is computed when it is issued (its results are in the registers at once);
PTX makes reading them before the ``wgmma.wait_group`` that covers it undefined, so this is
one of the outcomes a GPU may give.  ``wgmma.wait_group N`` with no group pending returns
at once (the manual: it waits "until only N or fewer of the most recent wgmma-groups are
pending").
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ....errors import InterpError, PtxfpError
from ...reader import Imm, Vec
from ..base import _bad, _nops, _unsupported
from ..operands import _dst, _src
from ..program import _Step

#: element bytes of the wgmma input types
_EBYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}
_SIGN = {1: 0x80, 2: 0x8000, 4: 0x80000000}
_SWIZZLE = {0: 1, 1: 8, 2: 4, 3: 2}           #: descriptor bits 62-63 -> x (16x-byte rows)


def _c_wgmma(prog, ins):
    sfx = ins.suffixes
    if sfx[:1] == ("fence",) and set(sfx[1:]) <= {"sync", "aligned"}:
        _nops(ins, 0)
        return _Step(ins, lambda st: None, [], [])
    if sfx[:1] == ("commit_group",) and set(sfx[1:]) <= {"sync", "aligned"}:
        _nops(ins, 0)

        def commit(st):
            a = _groups(st)
            a["committed"][st.mask] += 1
        return _Step(ins, commit, [], [])
    if sfx[:1] == ("wait_group",) and set(sfx[1:]) <= {"sync", "aligned"}:
        _nops(ins, 1)
        n = ins.operands[0]
        if not isinstance(n, Imm) or n.kind not in ("dec", "hex") or n.value < 0:
            raise _bad(ins, f"the group count must be an integer constant >= 0, got '{n}'", n)
        return _Step(ins, lambda st: None, [], [])
    if sfx[:1] != ("mma_async",):
        raise _unsupported(ins, "of wgmma, fence, commit_group, wait_group and mma_async "
                                "(dense) are modeled")
    return _c_mma_async(prog, ins)


def _groups(st):
    g = getattr(st, "wgmma_groups", None)
    if g is None:
        g = st.wgmma_groups = {"committed": np.zeros(st.n, np.int64)}
    return g


@lru_cache(maxsize=64)
def _tables(form):
    """(A's register table or None, D's table): int64 (128, regs, per, 2) of (row, col)."""
    from ....tensor import fragments as fr
    from ....isa.mma_form import MmaForm
    per_d = 2 if form.dtype == "f16" else 1
    count = form.n // 2
    d = np.zeros((128, count // per_d, per_d, 2), np.int64)
    t = np.arange(128)
    w, lane = t // 32, t % 32
    for i in range(count):
        d[:, i // per_d, i % per_d, 0] = 16 * w + lane // 4 + 8 * ((i >> 1) & 1)
        d[:, i // per_d, i % per_d, 1] = 8 * (i >> 2) + (lane % 4) * 2 + (i & 1)
    m16 = MmaForm("mma", 16, 8, form.k, form.atype, form.btype, "f32", "f32")
    fa = fr.fragment(m16, "a")
    a = np.zeros((128,) + fa.index.shape[1:3] + (2,), np.int64)
    for wi in range(4):
        a[32 * wi:32 * wi + 32, ..., 0] = fa.index[..., 1] + 16 * wi
        a[32 * wi:32 * wi + 32, ..., 1] = fa.index[..., 2]
    return a, fa.elem_bits, d, per_d


def _c_mma_async(prog, ins):
    try:
        from ....tensor import api as tensor
        form = tensor.resolve(ins.opcode_spelling)
    except ImportError:
        raise _unsupported(ins, "wgmma needs ptxfp.tensor, not installed in this tree") \
            from None
    except (PtxfpError, ValueError, KeyError) as e:
        raise _unsupported(ins, f"no tensor-core model for it ({e})") from None
    if form.atype not in _EBYTES or "sp" in ins.suffixes:
        raise _unsupported(ins, "the floating-point dense forms (f16, bf16, tf32, e4m3, e5m2) "
                                "are modeled")
    ops = list(ins.operands)
    a_regs = len(ops) > 1 and isinstance(ops[1], Vec)
    half = form.atype in ("f16", "bf16")
    want = 6 + ((1 if a_regs else 2) if half else 0)
    if len(ops) != want:
        raise _bad(ins, f"expects {want} operands (d, a, b-desc, scale-d, imm-scale-a, "
                        f"imm-scale-b{', imm-trans-a' if half and not a_regs else ''}"
                        f"{', imm-trans-b' if half else ''}), got {len(ops)}")
    imms = []
    for o in ops[4:]:
        if not isinstance(o, Imm) or o.kind not in ("dec", "hex"):
            raise _bad(ins, f"expected an integer constant, got '{o}'", o)
        imms.append(o.value)
    scale_a, scale_b = imms[0], imms[1]
    for v, o in zip((scale_a, scale_b), ops[4:6]):
        if v not in (1, -1):
            raise _bad(ins, f"imm-scale-a/b must be 1 or -1, got {v}", o)
    trans = imms[2:]
    if any(v not in (0, 1) for v in trans):
        raise _bad(ins, f"imm-trans-a/b must be 0 or 1, got {trans}")
    trans_a = trans[0] if half and not a_regs else 0
    trans_b = trans[-1] if half else 0
    atab, abits, dtab, per_d = _tables(form)
    reads, writes = [], []
    dregs = list(ops[0].items) if isinstance(ops[0], Vec) else None
    if dregs is None or len(dregs) != dtab.shape[1]:
        raise _bad(ins, f"d needs {dtab.shape[1]} registers", ops[0])
    dt = "b32"
    if a_regs:
        if len(ops[1].items) != atab.shape[1]:
            raise _bad(ins, f"a needs {atab.shape[1]} registers", ops[1])
        asrc = [_src(prog, ins, o, "b32", reads) for o in ops[1].items]
    else:
        asrc = _src(prog, ins, ops[1], "b64", reads)
    bsrc = _src(prog, ins, ops[2], "b64", reads)
    scale_d = _src(prog, ins, ops[3], "pred", reads)
    dsrc = [_src(prog, ins, o, dt, reads) for o in dregs]
    dests = [_dst(prog, ins, o, dt, writes) for o in dregs]
    target = (prog.prog.target or "sm_90a") if prog.function is not None else "sm_90a"
    eb = _EBYTES[form.atype]
    spelling = ins.opcode_spelling
    where = (ins.line, ins.col)

    def run(st):
        m = st.mask
        idx = np.nonzero(m)[0]
        if not idx.size:
            return
        g = st.geom
        wgpb = -(-g.bsize // 128)
        wg = st.ids("block")[idx] * wgpb + st.ids("tib")[idx] // 128
        counts = np.bincount(wg)
        gs = np.unique(wg)
        if (counts[gs] != 128).any():
            bad = int(gs[np.nonzero(counts[gs] != 128)[0][0]])
            raise InterpError(f"'{spelling}': warpgroup {bad % wgpb} of block {bad // wgpb} runs "
                              f"it with {int(counts[bad])} of its threads; wgmma needs all 128 "
                              "(four whole warps)", *where, rule="membermask")
        G = gs.size
        tids = idx.reshape(G, 128)
        first = tids[:, 0]
        blocks = st.ids("block")[first]
        sd = _uniform(scale_d(st), tids, "scale-d", spelling, where)
        if a_regs:
            R = np.stack([s(st)[idx] for s in asrc], -1).reshape(G, 128, -1)
            A = _from_regs(R, atab, abits, (64, form.k))
        else:
            A = _from_desc(st, _uniform(asrc(st), tids, "the descriptor of A", spelling, where),
                           blocks, 64, form.k, eb, trans_a, "A", spelling, where)
        B = _from_desc(st, _uniform(bsrc(st), tids, "the descriptor of B", spelling, where),
                       blocks, form.n, form.k, eb, trans_b, "B", spelling, where)
        B = np.swapaxes(B, 1, 2)                       # (G, k, n)
        if scale_a == -1:
            A = A ^ A.dtype.type(_SIGN[eb])
        if scale_b == -1:
            B = B ^ B.dtype.type(_SIGN[eb])
        Rd = np.stack([s(st)[idx] for s in dsrc], -1).reshape(G, 128, -1)
        cbits = 16 if per_d == 2 else 32
        C = _from_regs(Rd, dtab, cbits, (64, form.n))
        C[~sd.astype(bool)] = 0
        try:
            D = tensor.mma(form, A, B, C, target=target)
        except PtxfpError as e:
            raise InterpError(f"'{spelling}': {e}", *where, rule="mma") from None
        D = np.asarray(D)
        r, c = dtab[..., 0], dtab[..., 1]
        el = D[:, r, c].astype(np.uint32)               # (G, 128, regs, per)
        if per_d == 2:
            words = el[..., 0] | (el[..., 1] << np.uint32(16))
        else:
            words = el[..., 0]
        words = words.reshape(G * 128, -1)
        for k, d in enumerate(dests):
            full = np.zeros(st.n, np.uint32)
            full[idx] = words[:, k]
            st.write(d, dt, full)
    return _Step(ins, run, reads, writes)


def _uniform(vals, tids, what, spelling, where):
    v = vals[tids]
    if (v != v[:, :1]).any():
        g = int(np.nonzero((v != v[:, :1]).any(1))[0][0])
        raise InterpError(f"'{spelling}': {what} differs between the threads of a warpgroup "
                          f"(thread {int(tids[g, 0])} and others); it must be one value",
                          *where, rule="operand")
    return v[:, 0]


def _from_regs(R, tab, bits, shape):
    """Registers (G, 128, regs) of 32-bit words -> element bits (G, rows, cols)."""
    per = tab.shape[2]
    dt = np.uint8 if bits == 8 else np.uint16 if bits == 16 else np.uint32
    words = R.astype(np.uint32)
    sh = (np.arange(per, dtype=np.uint32) * np.uint32(bits))
    el = (words[..., None] >> sh) & np.uint32((1 << bits) - 1 if bits < 32 else 0xFFFFFFFF)
    out = np.zeros((R.shape[0],) + shape, dt)
    out[:, tab[..., 0], tab[..., 1]] = el.astype(dt)
    return out


def decode_descriptor(desc):
    """(start, LBO, SBO, base offset, x) of a matrix descriptor (bytes; x: 1 none, 2 32B,
    4 64B, 8 128B swizzle)."""
    d = int(desc)
    return ((d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4,
            (d >> 49) & 7, _SWIZZLE[(d >> 62) & 3])


@lru_cache(maxsize=256)
def _layout(rows, kdim, eb, trans, lbo, sbo, x):
    """Byte offsets (rows, kdim) of the canonical layout, before the start and the swizzle."""
    T = 16 // eb
    r = np.arange(rows, dtype=np.int64)[:, None]
    k = np.arange(kdim, dtype=np.int64)[None, :]
    if not trans:
        if x == 1:
            off = (r % 8) * 16 + (r // 8) * sbo + (k % T) * eb + (k // T) * lbo
        else:
            off = (r % 8) * 16 * x + (r // 8) * sbo + k * eb
    elif x == 1:
        off = (r % T) * eb + (r // T) * sbo + (k % 8) * 16 + (k // 8) * lbo
    else:
        off = (r % (x * T)) * eb + (r // (x * T)) * lbo + (k % 8) * 16 * x + (k // 8) * sbo
    off.setflags(write=False)
    return off


def _swizzle(a, x):
    if x == 1:
        return a
    return a ^ (((a >> 7) & (x - 1)) << 4)


def _from_desc(st, descs, blocks, rows, kdim, eb, trans, what, spelling, where):
    """The (G, rows, kdim) element bits a descriptor of each warpgroup points at."""
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[eb]
    out = np.zeros((descs.size, rows, kdim), dt)
    size = st.shared_size
    for gi, (desc, b) in enumerate(zip(descs, blocks)):
        start, lbo, sbo, base, x = decode_descriptor(desc)
        if base:
            raise InterpError(f"'{spelling}': the descriptor of {what} ({int(desc):#x}) has "
                              f"base offset {base}; only 0 is modeled", *where,
                              rule="descriptor")
        if trans and eb != 2:
            raise InterpError(f"'{spelling}': {what} is MN-major (imm-trans 1), which only "
                              ".f16/.bf16 take", *where, rule="descriptor")
        a = _swizzle(start + _layout(rows, kdim, eb, trans, lbo, sbo, x), x)
        hi = int(a.max()) + eb
        if hi > size:
            raise InterpError(f"'{spelling}': the descriptor of {what} ({int(desc):#x}: start "
                              f"{start:#x}, LBO {lbo}, SBO {sbo}) reaches byte {hi:#x}, outside "
                              f"the {size}-byte .shared memory of the block", *where,
                              rule="descriptor")
        raw = st.shared[int(b) * size + a[..., None] + np.arange(eb)]
        out[gi] = raw.view(dt)[..., 0] if eb > 1 else raw[..., 0]
    return out


COMPILERS = {"wgmma": _c_wgmma}
