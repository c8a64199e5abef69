"""The bulk copies of sm_90: cp.async.bulk (global <-> shared, shared::cta -> shared::cluster)
and cp.async.bulk.tensor (the TMA, tile mode, 1-5D, loads and stores), their
mbarrier::complete_tx and bulk_group completion, cp.async.bulk.commit_group /
wait_group{.read}, prefetch.tensormap and cp.async.bulk.prefetch (no effect).

A copy is done when it is issued, by each thread that runs the instruction, and a load then
signals its mbarrier's ``complete_tx`` with the bytes it wrote (the whole box, out-of-bounds
elements included): PTX lets the copy finish any time before the mbarrier phase or the bulk
group it belongs to completes, so reading the destination early is undefined, and this is
one of the outcomes.  Tensor maps are ptxfp's encoding (``ptx/tensormap.py``), read at the
operand's generic address: the kernel's parameter buffer (a ``.param .align 64 .b8 [128]``)
or global memory.

Tile mode (PTX ISA "Tensor copy", CUDA's tensor map): the box at coordinates c (int32, may be
negative) holds ceil(box_dim[i] / element_strides[i]) elements along dimension i, element j
from c[i] + j * element_strides[i]; elements outside the tensor read as zero (oob_fill 0) and
are not written by a store; in shared memory the box is dense, dimension 0 fastest, and a
swizzled map XORs the byte address's bits 4.. with its bits 7.. (32B: 1 bit, 64B: 2, 128B:
3), as wgmma's descriptors read it."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ....errors import InterpError, OperandError
from ...reader import Addr, Imm, Vec
from ...tensormap import SWIZZLE_BYTES, decode
from ..async_proxy import mbarriers
from ..base import _bad, _nops, _unsupported
from ..operands import _src
from ..param_space import PARAM_BASE, layout
from ..program import _Step
from ..state import _locate
from .mem import _address

_TILE_QUAL = frozenset(("tile", "L2::cache_hint", "multicast::cluster"))


def _c_bulk(prog, ins):
    """The cp.async.bulk forms (None for the other cp forms: cp_async.py takes them)."""
    sfx = ins.suffixes
    if sfx[:2] != ("async", "bulk"):
        return None
    rest = sfx[2:]
    if rest == ("commit_group",):
        _nops(ins, 0)
        return _Step(ins, lambda st: None, [], [])
    if rest in (("wait_group",), ("wait_group", "read")):
        _nops(ins, 1)
        n = ins.operands[0]
        if not isinstance(n, Imm) or n.kind not in ("dec", "hex") or not 0 <= n.value < 64:
            raise _bad(ins, f"the group count must be an integer constant 0..63, got '{n}'", n)
        return _Step(ins, lambda st: None, [], [])
    if rest[:1] == ("prefetch",):
        return _Step(ins, lambda st: None, _prefetch_reads(prog, ins), [])
    if rest[:1] == ("tensor",):
        return _c_tensor(prog, ins, rest[1:])
    return _c_plain(prog, ins, rest)


def _prefetch_reads(prog, ins):
    reads = []
    for o in ins.operands:
        if isinstance(o, Addr) and o.base is not None and o.base.name in prog.width:
            _src(prog, ins, o.base, "u64" if prog.width[o.base.name] == 64 else "u32", reads)
    return reads


def _c_prefetch_tensormap(prog, ins):
    if ins.opcode != "prefetch" or "tensormap" not in ins.suffixes:
        return None
    _nops(ins, 1)
    return _Step(ins, lambda st: None, _prefetch_reads(prog, ins), [])


def _tmap_address(prog, ins, addr, reads):
    """fn(state) -> int64 (n,): the generic address of a tensor-map operand."""
    b = addr.base
    if b is not None and b.name in prog.params:
        p = prog.params[b.name]
        off, size = layout(prog)[0][b.name]
        prog.param_type.setdefault(b.name, (p.type, size, ins.line, ins.col))
        reads.append((("param", b.name), p.type))
        a = PARAM_BASE + off + addr.offset
        return lambda st: np.full(st.n, a, np.int64)
    base = _address(prog, ins, Addr(b, 0, addr.line, addr.col), "global", reads)
    o = addr.offset
    return lambda st: base(st) + o


@lru_cache(maxsize=256)
def _decoded(raw):
    return decode(raw)


def _extras(prog, ins, ops, qualifiers, reads):
    """The trailing operands: ctaMask (.multicast::cluster, 16-bit; a cluster of one has only
    CTA 0) then the cache policy (.L2::cache_hint, 64-bit): read, no effect."""
    want = (["b16"] if "multicast::cluster" in qualifiers else []) + \
        (["b64"] if "L2::cache_hint" in qualifiers else [])
    if len(ops) != len(want):
        raise _bad(ins, f"expects {len(want)} operand(s) after the addresses (ctaMask with "
                        ".multicast::cluster, a policy with .L2::cache_hint), got {len(ops)}")
    for o, t in zip(ops, want):
        _src(prog, ins, o, t, reads)


def _mbar(prog, ins, op, reads):
    if not isinstance(op, Addr):
        raise _bad(ins, f"expected the mbarrier's address '[...]', got '{op}'", op)
    base = _address(prog, ins, op, "shared", reads)
    o = op.offset
    return lambda st: base(st) + o


def _signal(st, tid, mb_addr, nbytes, spelling, where):
    block = int(st.ids("block")[tid])
    mb = mbarriers(st)
    mb.complete_tx(mb.get(block, int(mb_addr), spelling, where), nbytes)


def _c_plain(prog, ins, rest):
    """cp.async.bulk.{dst}.{src}.{completion} [dst], [src], size{, [mbar]}{, ctaMask}{, policy}"""
    spaces = [x for x in rest if x in ("global", "shared::cluster", "shared::cta", "shared")]
    completion = [x for x in rest if x in ("mbarrier::complete_tx::bytes", "bulk_group")]
    other = set(rest) - set(spaces) - set(completion) - {"L2::cache_hint",
                                                          "multicast::cluster", "cp_mask"}
    if other or len(spaces) != 2 or len(completion) != 1 or "cp_mask" in rest:
        raise _unsupported(ins, "cp.async.bulk takes .shared::cluster.global, "
                                ".shared::cluster.shared::cta (mbarrier::complete_tx::bytes) "
                                "and .global.shared::cta (bulk_group)")
    ops = list(ins.operands)
    if len(ops) < 3:
        raise _bad(ins, "expects [dst], [src], size ...")
    reads = []
    dst_space = "global" if spaces[0] == "global" else "shared"
    src_space = "global" if spaces[1] == "global" else "shared"
    dst = _address(prog, ins, ops[0], dst_space, reads)
    src = _address(prog, ins, ops[1], src_space, reads)
    size = _src(prog, ins, ops[2], "u32", reads)
    mbar = _mbar(prog, ins, ops[3], reads) if completion[0].startswith("mbarrier") else None
    _extras(prog, ins, ops[4 if mbar else 3:], rest, reads)
    doff, soff = ops[0].offset, ops[1].offset
    where = (ins.line, ins.col)
    spelling = ins.opcode_spelling

    def run(st):
        m = st.mask
        n = size(st).astype(np.int64)
        d = dst(st) + doff
        s = src(st) + soff
        mb = mbar(st) if mbar is not None else None
        for t in np.nonzero(m)[0].tolist():
            k = int(n[t])
            if k % 16 or k <= 0:
                raise InterpError(f"'{spelling}': size {k} must be a positive multiple of 16",
                                  *where, rule="operand")
            one = np.zeros(st.n, bool)
            one[t] = True
            saved = st.mask, st.all_on
            st.mask, st.all_on = one, False
            try:
                sb, si = _locate(st, src_space, s, one, 16, spelling, where, extent=n)
                db, di = _locate(st, dst_space, d, one, 16, spelling, where, extent=n)
            finally:
                st.mask, st.all_on = saved
            db[int(di[t]):int(di[t]) + k] = sb[int(si[t]):int(si[t]) + k]
            if mb is not None:
                _signal(st, t, mb[t], k, spelling, where)
    return _Step(ins, run, reads, [])


def _c_tensor(prog, ins, rest):
    dims = [x for x in rest if len(x) == 2 and x[1] == "d" and x[0] in "12345"]
    if len(dims) != 1:
        raise _unsupported(ins, "cp.async.bulk.tensor needs .1d .. .5d")
    rank = int(dims[0][0])
    rest = [x for x in rest if x != dims[0]]
    if "im2col" in rest or "im2col_no_offs" in rest:
        raise _unsupported(ins, "the im2col mode is not modeled (tile mode is)")
    load = rest[:2] in (["shared::cluster", "global"], ["shared::cta", "global"])
    store = rest[:2] == ["global", "shared::cta"]
    comp = rest[2:]
    if load and not (set(comp) - _TILE_QUAL) == {"mbarrier::complete_tx::bytes"}:
        load = False
    if store and not (set(comp) - _TILE_QUAL) == {"bulk_group"}:
        store = False
    if not (load or store):
        raise _unsupported(ins, "cp.async.bulk.tensor takes .shared::{cluster,cta}.global"
                                "(.tile).mbarrier::complete_tx::bytes loads and "
                                ".global.shared::cta(.tile).bulk_group stores")
    ops = list(ins.operands)
    reads = []
    tm_op, sm_op = (ops[1], ops[0]) if load else (ops[0], ops[1])
    if not isinstance(tm_op, Addr) or len(tm_op.extra) != 1 or \
            not isinstance(tm_op.extra[0], Vec):
        raise _bad(ins, "expected [tensorMap, {coordinates}]", tm_op)
    coords = tm_op.extra[0].items
    if len(coords) != rank:
        raise _bad(ins, f"a .{rank}d copy takes {rank} coordinates, got {len(coords)}", tm_op)
    tmap = _tmap_address(prog, ins, tm_op, reads)
    csrc = [_src(prog, ins, c, "s32", reads) for c in coords]
    smem = _address(prog, ins, sm_op, "shared", reads)
    soff = sm_op.offset
    mbar = _mbar(prog, ins, ops[2], reads) if load else None
    _extras(prog, ins, ops[3 if load else 2:], rest, reads)
    where = (ins.line, ins.col)
    spelling = ins.opcode_spelling

    def run(st):
        m = st.mask
        ta = tmap(st)
        sa = smem(st) + soff
        cs = [c(st).astype(np.uint32).view(np.int32).astype(np.int64) for c in csrc]
        mb = mbar(st) if mbar is not None else None
        # the tensor maps, wherever their generic addresses point (the parameter window,
        # memory=, a .global/.const variable): 128 bytes, 64-byte aligned
        buf, at = _locate(st, "generic", ta, m, 64, spelling, where,
                          extent=np.full(st.n, 128, np.int64))
        for t in np.nonzero(m)[0].tolist():
            raw = buf[at[t]:at[t] + 128].tobytes()
            try:
                tm = _decoded(raw)
            except OperandError as e:
                raise InterpError(f"'{spelling}': at {int(ta[t]):#x}: {e}", *where,
                                  rule="tensormap") from None
            if tm.rank != rank:
                raise InterpError(f"'{spelling}': a .{rank}d copy with a rank-{tm.rank} tensor "
                                  "map", *where, rule="tensormap")
            if tm.interleave:
                raise InterpError(f"'{spelling}': interleaved tensor maps are not modeled",
                                  *where, rule="tensormap")
            nbytes = _box(st, t, tm, [int(c[t]) for c in cs], int(sa[t]), load, spelling,
                          where)
            if mb is not None:
                _signal(st, t, mb[t], nbytes, spelling, where)
    return _Step(ins, run, reads, [])


def _box(st, t, tm, coords, saddr, load, spelling, where):
    """Copy one box between global memory and thread t's block's .shared; its bytes."""
    counts = [-(-b // e) for b, e in zip(tm.box_dim, tm.element_strides)]
    eb = tm.esize
    total = int(np.prod(counts)) * eb
    if saddr % 128:
        raise InterpError(f"'{spelling}': the .shared address {saddr:#x} of a tensor copy "
                          "must be 128-byte aligned", *where, rule="address")
    if saddr < 0 or saddr + total > st.shared_size:
        raise InterpError(f"'{spelling}': the {total}-byte box at .shared {saddr:#x} is "
                          f"outside the {st.shared_size}-byte .shared memory of the block",
                          *where, rule="address")
    # element j of the box (dimension 0 fastest): global indices and the in-bounds mask
    grids = np.meshgrid(*[np.arange(c, dtype=np.int64) for c in reversed(counts)],
                        indexing="ij")
    idx = [g.reshape(-1) for g in reversed(grids)]            # dimension i's index
    gaddr = np.full(idx[0].size, tm.global_address, np.int64)
    inb = np.ones(idx[0].size, bool)
    for i in range(tm.rank):
        gi = coords[i] + idx[i] * tm.element_strides[i]
        inb &= (gi >= 0) & (gi < tm.global_dim[i])
        gaddr += gi * tm.global_strides[i]
    sw = SWIZZLE_BYTES[tm.swizzle] // 16
    soffs = saddr + np.arange(idx[0].size, dtype=np.int64) * eb
    if sw:
        soffs = soffs ^ (((soffs >> 7) & (sw - 1)) << 4)
    mem = st.mem
    live = gaddr[inb]
    if live.size:
        if mem is None or int(live.min()) < 0 or int(live.max()) + eb > mem.size:
            bad = int(live.max())
            raise InterpError(f"'{spelling}': the tensor map's element at {bad:#x} (box at "
                              f"{tuple(coords)}, tensor {tm.global_dim} at "
                              f"{tm.global_address:#x}) is outside the "
                              f"{0 if mem is None else mem.size}-byte memory", *where,
                              rule="address")
    block = int(st.ids("block")[t])
    base = block * st.shared_size
    span = np.arange(eb)
    if load:
        data = np.zeros((idx[0].size, eb), np.uint8)
        if live.size:
            data[inb] = mem[live[:, None] + span]
        st.shared[(base + soffs)[:, None] + span] = data
    elif live.size:
        mem[live[:, None] + span] = st.shared[(base + soffs[inb])[:, None] + span]
    return total


__all__ = ["_c_bulk", "_c_prefetch_tensormap"]
