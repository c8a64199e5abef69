"""The machine state while a program runs: registers (one array a register, one element a
thread), the launch geometry and thread numbering, special registers, and the memory spaces
(global, shared per block, local per thread, param) with their bounds and alignment checks."""

from __future__ import annotations

import numpy as np

from ...errors import InterpError, UninitializedRegister
from ...limits import check_bytes
from ..reader import Imm, Reg
from .base import WIDTH, _DTYPE, _SPECIAL, _bad, _imm_bits, _narrow_bits
from .param_space import PARAM_BASE, layout as _param_layout


class _State:
    """The registers while a program runs.  Arrays held here are never changed in place (a
    write puts a new array in), so a register may share its array with another (mov)."""

    def __init__(self, prog, n, inputs, memory, geom=None, shared_bytes=0):
        self.prog = prog
        self.n = n
        self.geom = geom if geom is not None else _Geometry((1, 1, 1), (n, 1, 1))
        self.shared_size = prog.extern_offset + shared_bytes if (
            prog.extern_align or shared_bytes) else prog.shared_static
        nb = self.geom.nblocks
        check_bytes(nb * self.shared_size + n * prog.local_size, "shared/local memory",
                    f"({self.shared_size} bytes a block, {prog.local_size} a thread)")
        # the entry's parameter buffer (param_space.layout), one copy a thread
        play, self.param_size = _param_layout(prog) if getattr(prog, "params", None) else \
            ({}, 0)
        # a thread's copy starts at a multiple of 16 bytes (the widest access): mem.py reads
        # the bytes as words of the access size
        self.param_stride = -(-self.param_size // 16) * 16
        # every space lives in one byte array (so that one generic access may reach several
        # spaces): [memory= | .global variables | .const variables | .shared a block | .local
        # a thread | the parameter buffer a thread], each part starting at a multiple of 128;
        # the spaces are views of it
        msize = 0 if memory is None else memory.size
        sizes = (("global", msize), ("gvars", prog.gvar_size), ("const", prog.const_size),
                 ("shared", nb * self.shared_size), ("local", n * prog.local_size),
                 ("param", n * self.param_stride))
        self.start, at = {}, 0
        for name, size in sizes:
            self.start[name] = at
            at += -(-size // 128) * 128
        self.flat = np.zeros(at, np.uint8)
        view = {name: self.flat[self.start[name]:self.start[name] + size]
                for name, size in sizes}
        if memory is not None:
            view["global"][:] = memory
        self.mem = view["global"] if memory is not None else None
        self.shared, self.local = view["shared"], view["local"]
        for space, off, data in prog.initial:         # the variables' initializers
            view["gvars" if space == "global" else "const"][off:off + len(data)] = \
                np.frombuffer(data, np.uint8)
        self.copies = None              # the async proxy of cp.async (_AsyncCopies), once used
        self.mma_target = None          # run(target=): the tensor-core numerics' target
        self.cc = None                  # the carry flag CC.CF a thread (uint64 0/1), once set
        self._ids = {}                  # thread numbering arrays (see ids())
        self.regs = {}                  # name -> array (dtype of the register's width)
        self.init = {}                  # name -> bool array: lanes that hold a value ...
        self.full = set()               # ... unless every lane does: the name is here
        self.types = {}                 # name -> type of the last value written
        self.params = {}                # param name -> (bytes array (n, size))
        self.consts = {}                # (bits, dtype) -> array of n copies (immediates)
        self.specials = {}              # (name, width) -> array (%tid.x ...)
        self.active = np.ones(n, bool)
        self.mask = self.active
        self.all_on = True              # every lane of mask is set
        pbuf = view["param"].reshape(n, self.param_stride) if self.param_size else None
        for name, (kind, arr, typ) in inputs.items():
            if kind == "param":
                at = play.get(name)
                if at is not None:         # an entry parameter: its bytes in the buffer
                    off, size = at
                    k = min(size, arr.shape[1])
                    pbuf[:, off:off + k] = arr[:, :k]
                    arr = pbuf[:, off:off + size]
                self.params[name] = arr
            else:
                self.regs[name] = arr
                self.full.add(name)
                self.types[name] = typ

    # registers
    def read(self, reg, typ, ins):
        name = reg.name
        w = WIDTH[typ]
        if _SPECIAL.match(name):
            return self.special(name, w)
        arr = self.regs.get(name)
        if arr is None or (name not in self.full and not self.init[name][self.mask].all()):
            self.uninitialized(reg, ins, arr)
        return arr if arr.dtype == _DTYPE[w] else _narrow_bits(arr, w)

    def uninitialized(self, reg, ins, arr):
        name = reg.name
        given = "" if arr is None else " on some threads"
        raise UninitializedRegister(
            f"register '{name}' is read before it is set{given} (give it as an input, "
            f"e.g. inputs={{'{name}': ...}})", reg.line or ins.line, reg.col or ins.col,
            rule="uninitialized")

    def const(self, bits, dtype):
        key = (bits, dtype)
        arr = self.consts.get(key)
        if arr is None:
            arr = self.consts[key] = np.full(self.n, bits, dtype)
        return arr

    def write(self, reg, typ, values):
        name = reg.name
        if name == "_":
            return
        dt = _DTYPE[self.prog.width[name]]
        if type(values) is not np.ndarray or values.dtype != dt:
            values = np.asarray(values)
            if values.dtype != dt:
                values = values.astype(dt)
        if values.shape != (self.n,):
            values = np.broadcast_to(values, (self.n,)).copy()
        if self.all_on:
            self.regs[name] = values
            self.full.add(name)
            self.init.pop(name, None)
        else:
            old = self.regs.get(name)
            if old is None:
                old = np.zeros(self.n, dt)
                self.init[name] = np.zeros(self.n, bool)
            self.regs[name] = np.where(self.mask, values, old).astype(dt, copy=False)
            if name not in self.full:
                self.init[name] = self.init[name] | self.mask
        self.types[name] = typ

    def put(self, reg, typ, values):
        """write() of a new array of the register's dtype and shape (n,) (the compilers know
        when it is one): with every lane on, it only takes its place."""
        if self.all_on:
            name = reg.name
            self.regs[name] = values
            self.full.add(name)
            if self.init:
                self.init.pop(name, None)
            self.types[name] = typ
        else:
            self.write(reg, typ, values)

    def async_copies(self):
        """The async proxy (cp.async's copies in flight), made at its first use."""
        if self.copies is None:
            self.copies = _AsyncCopies(self.n)
        return self.copies

    def special(self, name, w):
        v = self.specials.get((name, w))
        if v is None:
            v = self.specials[(name, w)] = self._special(name, w)
        return v

    def ids(self, what):
        """Thread numbering, int64 arrays (n,) made once: 'block' (the linear block index),
        'tib' (the linear thread index in its block), 'lane', 'warp' (a warp's index in the
        grid: block * warps a block + tib // 32).  Threads are numbered x fastest, blocks too."""
        v = self._ids.get(what)
        if v is None:
            g = self.geom
            i = np.arange(self.n, dtype=np.int64)
            v = {"block": lambda: i // g.bsize, "tib": lambda: i % g.bsize,
                 "lane": lambda: self.ids("tib") % 32,
                 "warp": lambda: self.ids("block") * g.wpb + self.ids("tib") // 32}[what]()
            self._ids[what] = v
        return v

    def _special(self, name, w):
        g = self.geom
        m = _SPECIAL.match(name)
        reg, dim, single = m.group(1), m.group(2), m.group(3)
        k = "xyz".index(dim) if dim else 0
        if reg in ("tid", "ctaid"):
            shape = g.block if reg == "tid" else g.grid
            lin = self.ids("tib" if reg == "tid" else "block")
            div = 1
            for j in range(k):
                div *= shape[j]
            v = (lin // div) % shape[k]
        elif reg == "ntid":
            v = np.full(self.n, g.block[k], np.int64)
        elif reg == "nctaid":
            v = np.full(self.n, g.grid[k], np.int64)
        elif single == "laneid":
            v = self.ids("lane")
        elif single == "warpid":
            v = self.ids("tib") // 32
        elif single == "nwarpid":
            v = np.full(self.n, g.wpb, np.int64)
        else:
            v = np.full(self.n, 32, np.int64)
        return v.astype(_DTYPE[w])

    def value(self, op, typ, ins):
        """A source operand (register or immediate) as bits of `typ`."""
        if isinstance(op, Reg):
            return self.read(op, typ, ins)
        if isinstance(op, Imm):
            return np.full(self.n, _imm_bits(op, typ, ins), _DTYPE[WIDTH[typ]])
        raise _bad(ins, f"expected a register or an immediate, got '{op}'", op)


class _Geometry:
    """A launch: grid and block dimensions (x, y, z); threads are numbered x fastest within
    a block, blocks x fastest within the grid; a warp is 32 consecutive threads of a block."""

    def __init__(self, grid, block):
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.bsize = block[0] * block[1] * block[2]
        self.n = self.nblocks * self.bsize
        self.wpb = -(-self.bsize // 32)             #: warps a block


#: bytes of static .shared data a kernel may declare (ptxas' limit, every target)
SHARED_STATIC_LIMIT = 48 * 1024


#: bytes of .shared a block may use (static + dynamic), by target: the CUDA programming guide's
#: "maximum amount of shared memory per thread block" of each compute capability
SHARED_LIMIT = {"sm_70": 96 * 1024, "sm_72": 96 * 1024, "sm_75": 64 * 1024,
                "sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_87": 163 * 1024,
                "sm_89": 99 * 1024, "sm_90": 227 * 1024, "sm_100": 227 * 1024,
                "sm_101": 227 * 1024, "sm_103": 227 * 1024, "sm_110": 227 * 1024,
                "sm_120": 99 * 1024, "sm_121": 99 * 1024}


#: the generic address space: memory= from 0 (global addresses are generic addresses), then
#: windows at fixed addresses (each below 2**32, so that .u32 generic addresses work too):
#: the module's .global variables, and the generic views of .const, .shared (each block sees
#: its own) and .local (each thread its own); cvta adds or takes off a window's base
GLOBAL_VARS = 0xC000_0000
WINDOW = {"const": 0xD000_0000, "shared": 0xE000_0000, "local": 0xF000_0000}
#: the size of each window (and the most memory= may hold below the first)
WINDOW_SIZE = 0x1000_0000
#: the entry's parameters have one more window, param_space.PARAM_BASE (above 2**32: a
#: parameter's address is 64-bit): .param and generic addresses there are the same numbers


def in_params(a):
    """bool array: which of the int64 addresses `a` lie in the parameter window."""
    return (a >= PARAM_BASE) & (a < PARAM_BASE + WINDOW_SIZE)


def _space_size(st, space):
    """(bytes, what) of a space as one thread addresses it."""
    if space == "shared":
        return st.shared_size, ".shared memory of the block"
    if space == "local":
        return st.prog.local_size, ".local memory of the thread"
    if space == "const":
        return st.prog.const_size, ".const variables of the module"
    if space == "gvars":
        return st.prog.gvar_size, ".global variables of the module"
    if space == "param":
        return st.param_size, "parameter buffer"
    return (st.mem.size if st.mem is not None else 0), "memory"


def _check(st, space, a, sel, total, spelling, where, extent, shown):
    """Bounds and alignment of the addresses `a` (offsets in `space`) of the threads of `sel`
    (an index array or a mask), `shown` added back to an address in the message."""
    size, what = _space_size(st, space)
    live = a[sel]
    if not live.size:
        return
    lo, hi = int(live.min()), int(live.max())
    if extent is not None:
        ends = live + extent[sel]
        over = int(ends.max()) > size
        if over:
            k = int(np.argmax(ends > size))
            hi, total = int(live[k]), int(ends[k] - live[k])
    else:
        over = hi + total > size
    if lo < 0 or over:
        bad = (lo if lo < 0 else hi) + shown
        raise InterpError(f"'{spelling}': address {bad % (1 << 64):#x} (+{total} bytes) is outside "
                          f"the {size}-byte {what}", *where, rule="address")
    mis = live % total if total & (total - 1) else live & (total - 1)
    if mis.any():
        raise InterpError(f"'{spelling}': address {int(live[mis != 0][0]) + shown:#x} is not "
                          f"{total}-byte aligned", *where, rule="address")


def _index(st, space, a):
    """Index in st.flat of offsets `a` of `space` (per block / per thread where it is)."""
    base = st.start[space]
    if space == "shared":
        return a + (base + st.ids("block") * st.shared_size if st.shared_size else base)
    if space == "local":
        return a + base + np.arange(st.n, dtype=np.int64) * st.prog.local_size
    if space == "param":
        return a + base + np.arange(st.n, dtype=np.int64) * st.param_stride
    return a + base if base else a


def _locate(st, space, a, m, total, spelling, where, at=None, extent=None):
    """(st.flat, the index in it of each thread's address `a` in `space`): checked to lie
    inside the space and to be aligned to the access size `total`, for the threads of mask `m`
    (the others get index 0).  `space`: 'shared', 'local', 'const', 'global' (memory= and the
    module's .global variables) or 'generic' (any window, see WINDOW).  `extent` (an int64
    array (n,), optional): the bytes each thread accesses where that is not `total`
    (cp.async's src-size).  'param': the entry's parameter buffer, at its .param (= generic)
    addresses from PARAM_BASE."""
    whole = st.all_on and m is st.mask
    sel = slice(None) if whole else m
    if space == "param":
        off = a - PARAM_BASE
        _check(st, "param", off, sel, total, spelling, where, extent, PARAM_BASE)
        return st.flat, _index(st, "param", off if whole else np.where(m, off, 0))
    if space in ("global", "generic"):
        live = a[sel]
        if live.size and int(live.max()) >= GLOBAL_VARS:
            return st.flat, _windows(st, space, a, m, total, spelling, where, extent)
        if st.mem is None:
            raise InterpError(f"'{spelling}' needs memory: pass memory=... (bytes)",
                              *(at or where), rule="no-memory")
        space = "global"
    _check(st, space, a, sel, total, spelling, where, extent, 0)
    if not whole:
        a = np.where(m, a, 0)
    return st.flat, _index(st, space, a)


def _windows(st, space, a, m, total, spelling, where, extent):
    """_locate's indices where some address lies above memory=: each thread's address is
    sorted into its window (generic) or the .global variables (both) and checked there."""
    idx = np.zeros(st.n, np.int64)
    rest = m.copy()
    parts = [("gvars", GLOBAL_VARS)]
    if space == "generic":
        parts += [(k, v) for k, v in WINDOW.items()] + [("param", PARAM_BASE)]
    for part, base in parts:
        inside = rest & (a >= base) & (a < base + WINDOW_SIZE)
        if inside.any():
            off = a - base
            _check(st, part, off, inside, total, spelling, where, extent, base)
            idx = np.where(inside, _index(st, part, np.where(inside, off, 0)), idx)
            rest &= ~inside
    if rest.any():
        if st.mem is None:
            k = int(np.nonzero(rest)[0][0])
            raise InterpError(f"'{spelling}': address {int(a[k]):#x} is in no state space "
                              "(no memory= was given)", *where, rule="address")
        _check(st, "global", a, rest, total, spelling, where, extent, 0)
        idx = np.where(rest, a, idx)
    return idx


class _AsyncCopies:
    """The async proxy of cp.async: copies a thread issued and that have not landed.  A copy
    reads its source when it is issued and writes its destination (the block's .shared) only
    when a cp.async.wait_group / wait_all of the issuing thread waits for it, so a kernel that
    reads the destination before waiting sees the old bytes (the GPU gives no guarantee there).
    Groups are per thread: commit_group closes the thread's open copies into its next group
    (an empty group when it has none, as PTX says)."""

    def __init__(self, n):
        self.records = []                      # [tids, dst index, bytes (k, size), group]
        self.committed = np.zeros(n, np.int64)  # groups each thread has committed

    def issue(self, tids, dst, data):
        self.records.append([tids, dst, data, np.full(tids.size, -1, np.int64)])

    def commit(self, m):
        for r in self.records:
            open_ = (r[3] < 0) & m[r[0]]
            if open_.any():
                r[3][open_] = self.committed[r[0][open_]]
        self.committed[m] += 1

    def wait(self, m, pending, shared):
        """Land the copies of the threads of mask `m` in all but their `pending` most recent
        groups, in the order they were issued (thread order within one instruction)."""
        keep = []
        for r in self.records:
            tids, dst, data, group = r
            done = (group >= 0) & m[tids] & (group < self.committed[tids] - pending)
            if done.any():
                size = data.shape[1]
                idx = dst[done][:, None] + np.arange(size)
                shared[idx.reshape(-1)] = data[done].reshape(-1)
                if done.all():
                    continue
                r[:] = [tids[~done], dst[~done], data[~done], group[~done]]
            keep.append(r)
        self.records = keep
