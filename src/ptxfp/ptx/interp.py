"""Run PTX: ``run(text, inputs, memory=...)`` executes a snippet or one entry body over many
threads at once and returns every register's final bits.

What is modeled
---------------
- the arithmetic forms of the core (``add/sub/mul/fma`` on .f16/.bf16/.f16x2/.bf16x2 and the
  mixed .f32 forms), computed as :func:`ptxfp.execute` computes them (its kernels, called
  without its operand checks: ``dispatch.CORE``);
- ``cvt`` between .f32 and .f16/.bf16/.f16x2/.bf16x2 (:func:`ptxfp.convert`), and integer
  ``cvt`` between .u/.s 8..64-bit types (truncate / zero- or sign-extend);
- ``mov`` of registers, immediates and special registers (``%tid.x`` is the thread index,
  ``%ntid.x`` the thread count, ``%ctaid``/``%laneid``/``%warpid`` follow from one block), the
  pack ``mov.b32 d, {a, b}`` (a in bits [15:0]) and the unpack ``mov.b32 {a, b}, d``;
- ``ld``/``st`` on ``.global`` (and generic addresses) against one flat little-endian byte
  memory, with ``[reg]``, ``[reg+imm]``, ``[imm]`` and per-thread addresses, ``.v2``/``.v4``;
  ``ld.param`` of the entry's parameters (``[name]``, ``[name+imm]``) whose values are inputs;
- the integer glue that compilers emit around them: ``add sub mul.lo mul.wide mad.lo min max
  and or xor not neg shl shr selp setp`` on .b/.u/.s 16/32/64 and ``cvta(.to).global``;
- guards ``@%p``/``@!%p`` and forward branches ``bra`` (threads that take one wait at the label,
  the others go on); ``ret``/``exit`` end a thread.

Anything else (floating-point f32/f64 arithmetic, loops, shared memory, calls ...) raises
:class:`UnsupportedInstruction` naming the opcode and its line and column.

Registers
---------
Each input is an int or a 1-D integer array (one value per thread; arrays and scalars broadcast
together; ``threads=`` sets the count when no input is an array).  Values are bit patterns;
negative ints are taken for .s types.  A register keeps the width of its declaration; an
undeclared one (snippets) takes the width of the type of the first instruction that writes or
reads it.  Reading a register that no input and no earlier instruction set raises
:class:`UninitializedRegister` naming the register, line and column.

The result maps every register that holds a value, named as written in the source, to a NumPy
array of its bits (bool for .pred, else uint8/16/32/64 by width), one element per thread; a lane
a thread never wrote (a guard, a branch) reads 0.  With ``memory`` given, the key ``'__memory__'``
holds the memory after the run: a uint8 copy, the caller's buffer is never modified.  Stores are
done in thread order, so where two threads store to one address the highest thread index wins.
"""

from __future__ import annotations

import numbers
import re
import sys
from bisect import bisect_right
from functools import lru_cache, partial
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import isa
from ..core import types
from .. import dispatch as _dispatch
from ..dispatch import CORE, ENTRY
from ..errors import (InterpError, OperandError, PtxfpError, SpellingError,
                      UninitializedRegister, UnsupportedInstruction)
from ..core.formats import FORMATS
from ..limits import check_bytes, guarded, paused_gc
from ..isa.spelling import parse
from .reader import Addr, Imm, Reg, Vec, read

__all__ = ["run", "run_detailed", "inputs_needed", "prepare", "RunResult", "InputInfo", "InterpError",
           "UnsupportedInstruction", "UninitializedRegister", "MEMORY_KEY"]

#: opcode -> two-result core (setp p|q), where the instruction table has them
_CORE2 = getattr(_dispatch, "CORE2", {})

#: key of the memory after the run in run()'s result
MEMORY_KEY = "__memory__"
#: instructions (of a group of threads) a run may execute before it stops (max_steps=)
MAX_STEPS = 1_000_000


# --- types ------------------------------------------------------------------------------------

WIDTH = dict(types.REGISTER_WIDTHS)     #: register type -> bits (the type table's)
# the small-float types of cvt (.e4m3x2, .e2m1x2, .ue8m0x2 ...), operands of the cvt rows
WIDTH.update({t.name: t.width for t in types.TYPES.values()
              if t.fmt is not None and t.fmt.code < 0 and t.width >= 8})
# .f32x2, the operand type of the .f32x2 rows (held in .b64 registers)
WIDTH["f32x2"] = types.width("f32x2")
_DTYPE = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SPECIAL = re.compile(r"%(tid|ntid|ctaid|nctaid)\.([xyz])$|%(laneid|warpid|nwarpid|warpsize)$")


def _mask(w):
    return (1 << w) - 1


_specials = {}


def _special(name):
    """Is `name` a special register (%tid.x ...)?  Remembered per name."""
    hit = _specials.get(name)
    if hit is None:
        hit = _SPECIAL.match(name) is not None
        if len(_specials) < 65536:
            _specials[name] = hit
    return hit


@dataclass
class InputInfo:
    """One value a program reads before writing it: a register or an entry parameter."""
    name: str
    type: str          #: the type the first instruction reading it reads it as (bf16, u64 ...)
    width: int         #: the register's width (declared, or from its first use)
    kind: str          #: 'register' or 'param'
    line: int
    col: int


@dataclass
class RunResult:
    registers: dict                        #: name -> bits array (one element per thread)
    types: dict                            #: name -> type of the register's value (f16, b32 ...)
    memory: np.ndarray | None              #: the memory after the run (uint8), or None
    threads: int
    declared: dict = field(default_factory=dict)   #: name -> declared type (None: inferred)
    read_as: dict = field(default_factory=dict)    #: name -> float type instructions read it as
    steps: int = 0                         #: instructions executed (each for a group)
    thread_instructions: int = 0           #: the sum over them of the threads that ran it


# --- the program, prepared ------------------------------------------------------------------------

class _Prog:
    """Everything static: statements, register widths, labels, parameters."""

    def __init__(self, text, entry=None):
        prog = read(text) if isinstance(text, str) else text
        self.prog = prog
        if prog.kind == "module":
            funcs = [f for f in prog.functions if f.has_body]
            if entry is not None:
                funcs = [f for f in funcs if f.name == entry]
                if not funcs:
                    names = ", ".join(f.name for f in prog.functions if f.has_body) or "none"
                    raise InterpError(f"no function named '{entry}' with a body (have: {names})")
            else:
                entries = [f for f in funcs if f.kind == "entry"] or funcs
                if len(entries) != 1:
                    names = ", ".join(f.name for f in entries) or "none"
                    raise InterpError("pick the function to run with entry=NAME "
                                      f"(the module has: {names})" if entries else
                                      "the module has no function with a body to run")
                funcs = entries
            fn = funcs[0]
            self.function = fn
            self.statements = list(fn.body)
            self.declared = _Chain(fn.registers, prog.registers)     # the function's first
            self.params = {p.name: p for p in fn.params}
            labels = fn.labels
        else:
            self.function = None
            self.statements = list(prog.statements)
            self.declared = prog.registers
            self.params = {}
            labels = prog.labels
        # label -> index of the first statement after it (statements are in source order)
        self.labels = {}
        self.labels_at = {}                             # index -> the labels there
        where = [(s.line, s.col) for s in self.statements]
        for name, pos in labels.items():
            idx = bisect_right(where, pos)
            self.labels[name] = idx
            self.labels_at.setdefault(idx, []).append(name)
        self.width = {}                                 # register -> width
        self.rtype = {}                                 # register -> declared / inferred type
        self.param_type = {}                            # params used by ld.param -> type
        self._keys = {}                                 # id(Decl) -> register key
        self.decl_of = {}                               # register key -> Decl
        self._scoped = {}                               # id(scope) -> {name: key}
        self.accessors = {}                             # shared operand readers (_shared)
        self._read_as = None                            # read_as and _needed, once
        self.needed = None
        self.vars = {}                                  # variable -> (space, offset, size)
        self.shared_static = 0                          # bytes of static .shared
        self.extern_align = 0                           # > 0: an extern .shared is used
        self.local_size = 0                             # bytes of .local a thread
        self.steps = [_compile(self, self.rename(s)) for s in self.statements]
        a = max(self.extern_align, 1)
        self.extern_offset = -(-self.shared_static // a) * a   # where extern .shared starts
        self.label_of = {}                              # statement index -> a label there
        for name, idx in self.labels.items():
            self.label_of.setdefault(idx, name)

    def var(self, name, ins):
        """(space, offset) of a .shared/.local variable `name` used at `ins`, laid out at its
        first use (in its .align, else its element size); None if `name` is not one."""
        hit = self.vars.get(name)
        if hit is not None:
            return hit[:2]
        d = self.prog.lookup(name, ins)
        if d is None or d.space not in ("shared", "local"):
            return None
        esize = max(WIDTH.get(d.type, 8) // 8, 1) * d.vector
        align = d.align or esize
        if align & (align - 1) or align <= 0:
            raise InterpError(f"'{name}': .align {align} is not a power of two", d.line, d.col,
                              rule="align")
        count = 1
        for k in d.array:
            count *= k
        if d.space == "shared" and 0 in d.array:       # extern .shared x[]: the dynamic part
            self.extern_align = max(self.extern_align, align)
            self.vars[name] = ("shared", None, 0)
            return ("shared", None)
        size = esize * count
        if d.space == "shared":
            off = -(-self.shared_static // align) * align
            self.shared_static = off + size
            if self.shared_static > SHARED_STATIC_LIMIT:
                raise InterpError(
                    f"'{name}': {self.shared_static} bytes of static .shared data, over the "
                    f"{SHARED_STATIC_LIMIT}-byte limit (ptxas: too much shared data)", d.line,
                    d.col, rule="shared-size")
        else:
            off = -(-self.local_size // align) * align
            self.local_size = off + size
        self.vars[name] = (d.space, off, size)
        return (d.space, off)

    def key(self, name, ins):
        """The register a name means at `ins`: PTX scopes .reg by block, so a name declared
        again in an inner block (nvcc's inline asm) is another register; it is reported as
        'name@line:col' (its declaration) when the plain name is taken."""
        scope = getattr(ins, "scope", None)
        seen = self._scoped.get(id(scope))            # a block's names, looked up once
        if seen is None:
            seen = self._scoped[id(scope)] = {}
        hit = seen.get(name)
        if hit is not None:
            return hit
        d = scope.lookup(name) if scope is not None else None
        if d is None:
            d = self.declared.get(name)
        if d is None or d.space != "reg":
            seen[name] = name
            return name
        k = self._keys.get((id(d), name))             # one Decl serves a whole range %r<N>
        if k is None:
            k = name if name not in self.decl_of else f"{name}@{d.line}:{d.col}"
            self._keys[(id(d), name)] = k
            self.decl_of[k] = d
            if d.type in WIDTH:
                self.width[k] = WIDTH[d.type]
                self.rtype[k] = d.type
        seen[name] = k
        return k

    def rename(self, ins):
        """`ins` with every register operand named by its key (see :meth:`key`)."""
        if ins.predicate is None:
            # the common case first: plain register operands that keep their names
            seen = self._scoped.get(id(getattr(ins, "scope", None)))
            if seen is not None:
                for o in ins.operands:
                    if type(o) is Reg:
                        if seen.get(o.name) != o.name:
                            break
                    elif type(o) is not Vec or not all(
                            type(i) is Reg and seen.get(i.name) == i.name for i in o.items):
                        break
                else:
                    return ins
        ops = [self._ren(o, ins) for o in ins.operands]
        pred = ins.predicate
        if pred is not None:
            k = self.key(pred.name, ins)
            if k != pred.name:
                pred = replace(pred, name=k)
        if pred is ins.predicate and all(a is b for a, b in zip(ops, ins.operands)):
            return ins
        return replace(ins, operands=ops, predicate=pred)

    def _ren(self, op, ins):
        # a method, not a closure in rename(): a recursive closure is a reference cycle that
        # would keep the whole program alive until the garbage collector's next full pass
        if isinstance(op, Reg):
            k = self.key(op.name, ins)
            return op if k == op.name else Reg(k, op.line, op.col)
        if isinstance(op, Vec):
            items = [self._ren(i, ins) for i in op.items]
            if all(a is b for a, b in zip(items, op.items)):
                return op
            return Vec(items, op.line, op.col, op.brackets)
        if isinstance(op, Addr) and op.base is not None:
            base = self._ren(op.base, ins)
            extra = tuple(self._ren(e, ins) for e in op.extra)
            if base is op.base and all(a is b for a, b in zip(extra, op.extra)):
                return op
            return Addr(base, op.offset, op.line, op.col, extra)
        return op

    @property
    def types(self):
        """register -> declared or inferred type"""
        return dict(self.rtype)

    @property
    def read_as(self):
        """register -> the first floating-point type an instruction reads it as (a .b16
        register that fma.rn.bf16 reads: 'bf16'), for showing its bits as a value."""
        if self._read_as is None:
            self.needed, self._read_as = _scan_reads(self)
        return dict(self._read_as)

    # Called by the compilers for every register operand, in program order.
    def use(self, reg, typ, line, col, write):
        """Register `reg` (a Reg) used as type `typ`: fixes the width of an undeclared register
        at its first use and checks later uses fit."""
        w = WIDTH[typ]
        name = reg.name
        if name == "_":
            return w
        if _special(name):
            if write:
                raise InterpError(f"special register '{name}' cannot be written", line, col)
            return w
        have = self.width.get(name)
        if have is None:
            self.width[name] = w
            self.rtype[name] = typ
            return w
        if have == w or (w > 1 and have > w):         # a wider register: its low bits are used
            return w
        if write and have > w:
            return w
        raise InterpError(
            f"register '{name}' is {have}-bit ({'.' + self.rtype.get(name, '?')}), "
            f"used here as .{typ} ({w}-bit)", reg.line or line, reg.col or col)


class _Chain:
    """Look a name up in several tables (reader.Names), the first that has it wins."""
    __slots__ = ("tables",)

    def __init__(self, *tables):
        self.tables = tables

    def get(self, name, default=None):
        for t in self.tables:
            d = t.get(name)
            if d is not None:
                return d
        return default


@dataclass(slots=True)
class _Step:
    instr: object
    run: object                      #: fn(state) -> None, or a control-flow marker
    reads: list                      #: [(Reg or ('param', name), type)] in order
    writes: list                     #: [(Reg, type)]
    kind: str = "op"                 #: 'op', 'bra', 'ret'
    target: str | None = None        #: the label of a bra
    pred: object = None              #: the guard's predicate register (a Reg), if any
    extra: object = None             #: a barrier's (arrive?, id reader, count reader or None)


def _unsupported(ins, why=None):
    msg = f"'{ins.opcode_spelling}' is not modeled by the interpreter"
    if why:
        msg += f": {why}"
    return UnsupportedInstruction(msg, ins.line, ins.col, rule="unsupported-instruction")


def _bad(ins, message, op=None):
    line = getattr(op, "line", 0) or ins.line
    col = getattr(op, "col", 0) or ins.col
    return InterpError(f"'{ins.opcode_spelling}': {message}", line, col, rule="operand")


def _nops(ins, n):
    if len(ins.operands) != n:
        raise _bad(ins, f"expects {n} operands, got {len(ins.operands)}")


# --- operand access at run time ---------------------------------------------------------------

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
        self.shared = np.zeros(nb * self.shared_size, np.uint8)
        self.local = np.zeros(n * prog.local_size, np.uint8)
        self._ids = {}                  # thread numbering arrays (see ids())
        self.regs = {}                  # name -> array (dtype of the register's width)
        self.init = {}                  # name -> bool array: lanes that hold a value ...
        self.full = set()               # ... unless every lane does: the name is here
        self.types = {}                 # name -> type of the last value written
        self.params = {}                # param name -> (bytes array (n, size))
        self.consts = {}                # (bits, dtype) -> array of n copies (immediates)
        self.specials = {}              # (name, width) -> array (%tid.x ...)
        self.mem = memory
        self.active = np.ones(n, bool)
        self.mask = self.active
        self.all_on = True              # every lane of mask is set
        for name, (kind, arr, typ) in inputs.items():
            if kind == "param":
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


def _narrow_bits(arr, w):
    if w == 1:
        return arr.astype(bool)
    return (arr.astype(np.uint64) & np.uint64(_mask(w))).astype(_DTYPE[w])


def _imm_bits(op, typ, ins):
    """The bits of an immediate for an operand of type `typ`."""
    w = WIDTH[typ]
    if op.value is None:
        raise _bad(ins, f"cannot read the immediate '{op.text}'", op)
    if op.kind == "hexfloat":
        iw = op.width
        if typ in ("f32", "b32", "u32", "s32") and iw == 32:
            return op.value
        if typ in ("f64", "b64", "u64", "s64") and iw == 64:
            return op.value
        raise _bad(ins, f"the {iw}-bit float immediate '{op.text}' does not fit a .{typ} "
                        "operand", op)
    if op.kind == "float":
        if typ in FORMATS:
            from ..ops.kernels import round_f64_array
            from ..policy import current
            x = np.array([op.value], np.uint64).view(np.float64)
            nan = current().canonical_nan(typ)
            return int(round_f64_array(x, FORMATS[typ].code, nan)[0])
        if typ == "f64":
            return op.value
        raise _bad(ins, f"the floating-point immediate '{op.text}' cannot be a .{typ} operand",
                   op)
    v = op.value
    if not -(1 << (w - 1)) <= v < (1 << w):
        raise _bad(ins, f"the immediate '{op.text}' does not fit in {w} bits", op)
    return v & _mask(w)


# --- compiling statements to steps ------------------------------------------------------------

_HALF = types.HALF_TYPES


def _types_of(ins):
    return list(_spelling_types(ins.opcode_spelling))


@lru_cache(maxsize=4096)
def _spelling_types(spelling):
    return tuple(t for t in spelling.split(".")[1:] if t in types.TYPE_TOKENS)


# one parse per spelling: a program repeats a few spellings many times (and the same
# Instruction object keeps execute's per-form cache warm)
_parse_once = lru_cache(maxsize=4096)(parse)


def _src(prog, ins, op, typ, reads):
    """Register the use of a source operand; return an accessor fn(state) -> bits."""
    if type(op) is Reg:
        # the common case first: a register read at its width again (use() has nothing to
        # check or fix), no parameter, no special register
        name = op.name
        w = WIDTH[typ]
        if prog.width.get(name) == w and not prog.params and not _special(name):
            reads.append((op, typ))
            hit = prog.accessors.get(("reg", name, w))
            return hit if hit is not None else _reader(prog, name, w)
    if isinstance(op, Reg):
        name = op.name
        if prog.params and prog.params.get(name) is not None:
            raise _bad(ins, f"'{name}' is a parameter: load it with ld.param", op)
        w = WIDTH[typ]
        have = prog.width.get(name)
        if have != w or _special(name):
            prog.use(op, typ, ins.line, ins.col, False)
            if _special(name):
                return _shared(prog, ("special", name, w), lambda st: st.special(name, w))
        reads.append((op, typ))
        return _reader(prog, name, w)
    if isinstance(op, Imm):
        bits = _imm_bits(op, typ, ins)
        dt = _DTYPE[WIDTH[typ]]
        return _shared(prog, ("const", bits, dt), lambda st: st.const(bits, dt))
    raise _bad(ins, f"expected a register or an immediate, got '{op}'", op)


def _shared(prog, key, fn):
    """One accessor per `key` in a program (`fn` the first time)."""
    return prog.accessors.setdefault(key, fn)


class _Unset(Exception):
    """Raised by a register reader: the step that ran it turns it into UninitializedRegister
    at the operand's position (readers are shared by every statement that reads the
    register at one width; see _unset)."""

    def __init__(self, name, arr):
        super().__init__(name)
        self.name = name
        self.arr = arr


def _reader(prog, name, w):
    """fn(state) -> the bits of register `name` as a `w`-bit array (checked to be set; _Unset
    when it is not).  One per register and width in a program."""
    key = ("reg", name, w)
    hit = prog.accessors.get(key)
    if hit is not None:
        return hit
    dt = _DTYPE[w]
    if prog.width.get(name) == w:          # the register's arrays are of this width
        def read(st):
            arr = st.regs.get(name)
            if arr is None or (name not in st.full and not st.init[name][st.mask].all()):
                raise _Unset(name, arr)
            return arr
    else:
        def read(st):
            arr = st.regs.get(name)
            if arr is None or (name not in st.full and not st.init[name][st.mask].all()):
                raise _Unset(name, arr)
            return arr if arr.dtype == dt else _narrow_bits(arr, w)
    prog.accessors[key] = read
    return read


def _unset(st, step, e):
    """The UninitializedRegister of a step whose reader raised _Unset: at the first operand
    that reads the register (readers run in operand order)."""
    ins = step.instr
    reg = next((r for r, _ in step.reads if isinstance(r, Reg) and r.name == e.name),
               Reg(e.name))
    try:
        st.uninitialized(reg, ins, e.arr)
    except UninitializedRegister as err:
        return err
    raise AssertionError("unreachable")


def _dst(prog, ins, op, typ, writes):
    if not isinstance(op, Reg):
        raise _bad(ins, f"the destination must be a register, got '{op}'", op)
    if prog.width.get(op.name) != WIDTH[typ] or _special(op.name):
        prog.use(op, typ, ins.line, ins.col, True)     # (at its width again: nothing to do)
    writes.append((op, typ))
    return op


def _puts(prog, d, dt):
    """Can the step store a new array of dtype `dt` in register `d` with _State.put (it has
    the register's dtype)?  False for '_' and a wider register (write() widens)."""
    w = prog.width.get(d.name)
    if w is None:
        return False
    hit = _PUTS.get((w, dt))
    if hit is None:
        hit = _PUTS[(w, dt)] = _DTYPE[w] == np.dtype(dt)
    return hit


_PUTS = {}


@lru_cache(maxsize=4096)
def _compiler(spelling):
    """The compiler of an opcode spelling (None: not modeled)."""
    opcode = spelling.split(".", 1)[0]
    fn = _COMPILERS.get(opcode)
    if fn in _OWN:
        return fn                  # the engine's own (warp-wide) instructions, never a row
    if opcode in isa.OPCODES and fn not in (_c_arith, _c_cvt) and any(
            t in _HALF for t in _spelling_types(spelling)):
        fn = _c_row                # a modelled opcode (neg.bf16 ...) is never integer work
    tys = _spelling_types(spelling)
    if fn is _c_arith and any(t in _HALF or t in ("f32", "f32x2") for t in tys):
        fn = _c_row                # what _c_arith decides, decided once per spelling
    elif fn is _c_cvt and not (len(tys) == 2 and all(t[0] in "us" and t in WIDTH
                                                     for t in tys)):
        small = tys in _SMALL_PAIRS
        if small or not (len(tys) == 2 and tys[0] in ("b16", "b32", "b64")
                         or not any(t in _HALF for t in tys)):
            fn = _c_row
    return fn


@lru_cache(maxsize=4096)
def _is_row(spelling):
    """Is `spelling` a form of the instruction table (any family)?"""
    try:
        _parse_once(spelling)
    except SpellingError:
        return False
    return True


def _compile(prog, ins):
    fn = _compiler(ins.opcode_spelling)
    if fn is None:
        if not _is_row(ins.opcode_spelling):
            raise _unsupported(ins)
        fn = _c_row
    try:
        step = fn(prog, ins)
    except UnsupportedInstruction:
        # the glue here does not take this form: a row of the table may (every family's
        # rows run through _c_row, whatever helper added them)
        if fn is _c_row or fn in _OWN or not _is_row(ins.opcode_spelling):
            raise
        step = _c_row(prog, ins)
    if ins.predicate is not None:
        pr = Reg(ins.predicate.name, ins.predicate.line, ins.predicate.col)
        prog.use(pr, "pred", ins.line, ins.col, False)
        step.reads.insert(0, (pr, "pred"))
        step.pred = pr
    return step


def _c_row(prog, ins):
    """A form of the instruction table (any family): its row says the operands and their
    types; the family's core (``dispatch.CORE``: execute's, convert's or min/max's kernels
    without their operand checks) runs it, or its entry point (``dispatch.ENTRY``) where the
    family has no core for the form."""
    try:
        form = _parse_once(ins.opcode_spelling)
    except SpellingError as e:
        if e.rule in ("not-modeled", "unknown-instruction", "unknown-modifier", "illegal-type"):
            # a form no family of the table has (ptxfp check says whether PTX has it)
            raise _unsupported(ins, str(e)) from None
        raise InterpError(str(e), ins.line, ins.col, rule=e.rule) from None
    ops = list(ins.operands)
    if form.dtype.endswith("x4") and len(ops) == 3 and isinstance(ops[1], Vec):
        # cvt.rs into four lanes writes its sources as one vector operand {a, b, e, f}
        ops = [ops[0], *ops[1].items, ops[2]]
    fmts, core, out_dt = _row_plan(ins.opcode_spelling)
    if len(ops) != 1 + len(fmts):
        _nops(ins, 1 + len(fmts))
    reads, writes = [], []
    srcs = [_src(prog, ins, o, f, reads) for o, f in zip(ops[1:], fmts)]
    dst0 = ins.operands[0]
    # the destination register's type: a predicate for setp/testp (whose rows name the
    # compared type), else the row's destination type
    typ = "pred" if ins.opcode in _PRED_RESULT else form.dtype
    if isinstance(dst0, Vec) and dst0.brackets == "|" and len(dst0.items) == 2 and \
            typ == "pred":
        # setp's 'p|q': the family's two-result core where it has one (dispatch.CORE2: q =
        # BoolOp(!t, c), or lane 1 of a packed compare), else q = !p (no BoolOp)
        d, q = (_dst(prog, ins, o, "pred", writes) for o in dst0.items)
        core2 = _CORE2.get(ins.opcode)
        two = core2(form) if core2 is not None else None
        if two is None and (len(srcs) > 2 or form.dtype in ("f16x2", "bf16x2") or any(
                t in ("f16x2", "bf16x2") for t in fmts)):
            raise _unsupported(ins, "its second destination needs the family's two-result "
                                    "core (dispatch.CORE2)")
        entry = ENTRY[form.family]

        def run(st):
            args = [s(st) for s in srcs]
            if two is not None:
                r, r2 = two(args, st.n)
            else:
                r = core(args, st.n) if core is not None else entry(form, *args)
                r2 = ~np.asarray(r).astype(bool)
            st.write(d, "pred", np.asarray(r).astype(bool))
            st.write(q, "pred", np.asarray(r2).astype(bool))
        return _Step(ins, run, reads, writes)
    d = _dst(prog, ins, dst0, typ, writes)
    if typ != form.dtype:
        out_dt = np.dtype(_DTYPE[WIDTH[typ]])
    if core is not None and d.name != "_":
        # the operands are the registers' own arrays (1-D, of the operands' widths): the
        # family's kernel runs on them without the entry point's operand checks
        store = _State.put if _puts(prog, d, out_dt) else _State.write
        run = partial(_ROW_RUNS.get(len(srcs), _row_n), core, store, d, typ, *srcs)
        return _Step(ins, run, reads, writes)
    entry = ENTRY[form.family]

    def run(st):
        st.write(d, typ, entry(form, *[s(st) for s in srcs]))
    return _Step(ins, run, reads, writes)


# A row's step: partial(_rowK, core, store, d, typ, *readers)(st).  A partial holds its
# arguments in one tuple, where a closure holds a cell for each: fewer objects per statement.
def _row1(core, store, d, typ, s0, st):
    store(st, d, typ, core((s0(st),), st.n))


def _row2(core, store, d, typ, s0, s1, st):
    store(st, d, typ, core((s0(st), s1(st)), st.n))


def _row3(core, store, d, typ, s0, s1, s2, st):
    store(st, d, typ, core((s0(st), s1(st), s2(st)), st.n))


def _row_n(core, store, d, typ, *args):
    *srcs, st = args
    store(st, d, typ, core([s(st) for s in srcs], st.n))


_ROW_RUNS = {1: _row1, 2: _row2, 3: _row3}
_PRED_RESULT = frozenset(("setp", "testp"))


@lru_cache(maxsize=4096)
def _row_plan(spelling):
    """(operand formats, the family's core or None, its result dtype) of a form's spelling
    (parsed already): the core only where the readers' arrays are the operands' dtypes."""
    form = _parse_once(spelling)
    fmts = tuple(form.operand_formats)
    core = CORE[form.family](form) if form.family in CORE else None

    def plain(f):
        w = WIDTH.get(f)
        return w in (8, 16, 32, 64) and _DTYPE[w] == np.dtype(f"uint{w}")
    if not all(plain(f) for f in fmts):
        core = None
    w = WIDTH.get(form.dtype, 0)
    return fmts, core, np.dtype(_DTYPE[w]) if w in _DTYPE else np.dtype(np.uint64)


def _c_arith(prog, ins):
    """add/sub/mul/fma (and mad): the half, mixed, .f32 and .f32x2 forms are rows of the table,
    integer ones here."""
    tys = _types_of(ins)
    if not any(t in _HALF or t in ("f32", "f32x2") for t in tys):
        if ins.opcode in ("add", "sub", "mul", "mad") and tys and all(
                t[0] in "bsu" and t != "bf16" for t in tys):
            return _c_int(prog, ins)
        raise _unsupported(ins, "ptxfp models .f16/.bf16/.f16x2/.bf16x2, .f32, .f32x2 and the "
                                "mixed .f32.f16/.f32.bf16 forms")
    return _c_row(prog, ins)


def _c_cvt(prog, ins):
    tys = _types_of(ins)
    if len(tys) == 2 and all(t[0] in "us" and t in WIDTH for t in tys):
        return _c_cvt_int(prog, ins, tys)
    small = tuple(tys) in _SMALL_PAIRS            # fp8/fp6/fp4/ue8m0 (isa/cvt_small.py)
    if not small and (len(tys) == 2 and tys[0] in ("b16", "b32", "b64")
                      or not any(t in _HALF for t in tys)):
        raise _unsupported(ins, "ptxfp models cvt between .f32 and .f16/.bf16/.f16x2/.bf16x2, "
                                "the fp8/fp6/fp4/ue8m0 forms, and between integer types")
    return _c_row(prog, ins)


_SMALL_PAIRS = frozenset(isa.cvt_small.PAIRS)


def _c_cvt_int(prog, ins, types):
    dt, at = types
    _nops(ins, 2)
    if set(ins.suffixes) - {dt, at, "sat"}:
        raise _unsupported(ins, "an integer-to-integer cvt takes only .sat")
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], at, reads)
    d = _dst(prog, ins, ins.operands[0], dt, writes)
    sat = "sat" in ins.suffixes

    def run(st):
        v = _ext(a(st), at)
        if sat:
            lo, hi = _range(dt)
            v = np.array([min(max(int(x), lo), hi) for x in v], dtype=object)
            v = np.array([x & _mask(WIDTH[dt]) for x in v], dtype=np.uint64)
        st.write(d, dt, _wrap(v, dt))
    return _Step(ins, run, reads, writes)


def _range(t):
    w = WIDTH[t]
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, _mask(w))


_LITTLE = sys.byteorder == "little"
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _ext(bits, t):
    """Bits of type t widened to 64: int64 (sign-extended) for .s types, else uint64."""
    w = WIDTH[t]
    if t[0] == "s":
        return bits.astype(_DTYPE[w]).view(_SIGNED[w]).astype(np.int64)
    return bits.astype(np.uint64)


def _wrap(v, t):
    """A 64-bit integer array back to the bits of type t (mod 2**width)."""
    v = np.asarray(v)
    if v.dtype.kind == "i":
        v = v.view(np.uint64) if v.dtype == np.int64 else v.astype(np.int64).view(np.uint64)
    return v.astype(np.uint64).astype(_DTYPE[WIDTH[t]])


def _u64(v):
    return v.view(np.uint64) if v.dtype == np.int64 else v


_INT_OPS = {
    "add": lambda a, b: _u64(a) + _u64(b), "sub": lambda a, b: _u64(a) - _u64(b),
    "mul": lambda a, b: a * b,
    "min": np.minimum, "max": np.maximum,
    "and": lambda a, b: _u64(a) & _u64(b), "or": lambda a, b: _u64(a) | _u64(b),
    "xor": lambda a, b: _u64(a) ^ _u64(b),
}


_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor, "min": np.minimum, "max": np.maximum}


def _c_pred(prog, ins):
    """and/or/xor/not on .pred."""
    op = ins.opcode
    n = 2 if op == "not" else 3
    _nops(ins, n)
    reads, writes = [], []
    srcs = [_src(prog, ins, o, "pred", reads) for o in ins.operands[1:]]
    d = _dst(prog, ins, ins.operands[0], "pred", writes)
    f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
         "not": np.logical_not}[op]
    return _Step(ins, lambda st: st.write(d, "pred", f(*[x(st) for x in srcs])), reads, writes)


@lru_cache(maxsize=4096)
def _int_plan(spelling):
    """What _c_int decides from an opcode spelling alone, once per spelling: ('pred',),
    ('ok', type, opcode, .wide, destination type), or ('unsupported' | 'bad', message)."""
    types = list(_spelling_types(spelling))
    op, *suffixes = spelling.split(".")
    if types == ["pred"] and op in ("and", "or", "xor", "not") and suffixes == ["pred"]:
        return ("pred",)
    if len(types) != 1 or types[0] not in WIDTH or types[0][0] not in "bsu" or \
            types[0] in ("bf16", "b8", "u8", "s8"):
        return ("unsupported", "integer forms take one .b/.u/.s 16/32/64 type")
    t = types[0]
    sfx = set(suffixes) - {t}
    wide = "wide" in sfx
    if op in ("mul", "mad"):
        if "hi" in sfx:
            return ("unsupported", ".hi is not modeled")
        if not (wide or "lo" in sfx):
            return ("bad", f"{op} on integers needs .lo, .hi or .wide")
        sfx -= {"lo", "wide"}
    if sfx:
        return ("unsupported", f"modifiers {', '.join('.' + x for x in sorted(sfx))} are not "
                               "modeled")
    dt = t
    if wide:
        if WIDTH[t] == 64:
            return ("bad", ".wide needs a 16- or 32-bit type")
        dt = t[0] + str(2 * WIDTH[t])
    return ("ok", t, op, wide, dt)


def _c_int(prog, ins):
    """Integer add/sub/mul(.lo/.wide)/mad(.lo/.wide)/min/max/and/or/xor/not/neg/shl/shr."""
    plan = _int_plan(ins.opcode_spelling)
    if plan[0] == "pred":
        return _c_pred(prog, ins)
    if plan[0] == "unsupported":
        raise _unsupported(ins, plan[1])
    if plan[0] == "bad":
        raise _bad(ins, plan[1])
    _, t, op, wide, dt = plan
    w = WIDTH[t]
    reads, writes = [], []
    if op in ("not", "neg"):
        _nops(ins, 2)
        a = _src(prog, ins, ins.operands[1], t, reads)
        d = _dst(prog, ins, ins.operands[0], t, writes)

        def run(st):
            v = _u64(_ext(a(st), t))
            st.write(d, t, _wrap(~v if op == "not" else np.uint64(0) - v, t))
        return _Step(ins, run, reads, writes)
    if op in ("shl", "shr"):
        _nops(ins, 3)
        a = _src(prog, ins, ins.operands[1], t, reads)
        b = _src(prog, ins, ins.operands[2], "u32", reads)
        d = _dst(prog, ins, ins.operands[0], t, writes)

        def run(st):
            n = np.minimum(b(st).astype(np.uint64), np.uint64(w))
            if op == "shl":
                v = _ext(a(st), "b" + str(w))
                r = np.where(n >= w, np.uint64(0), v << np.minimum(n, np.uint64(w - 1)))
            elif t[0] == "s":                          # arithmetic shift: sign fill
                v = _ext(a(st), t)
                r = v >> np.minimum(n, np.uint64(w - 1)).astype(np.int64)
            else:
                v = _ext(a(st), "u" + str(w))
                r = np.where(n >= w, np.uint64(0), v >> np.minimum(n, np.uint64(w - 1)))
            st.write(d, t, _wrap(r, t))
        return _Step(ins, run, reads, writes)
    _nops(ins, 4 if op == "mad" else 3)
    srcs = [_src(prog, ins, o, t, reads) for o in ins.operands[1:3]]
    if op == "mad":
        srcs.append(_src(prog, ins, ins.operands[3], dt, reads))
    d = _dst(prog, ins, ins.operands[0], dt, writes)
    f = _INT_OPS["mul" if op == "mad" else op]
    ext_t = t if (wide or op in ("min", "max")) else "u" + str(w)
    if op != "mad" and not wide and w > 1:
        # same width in and out: NumPy's w-bit unsigned arithmetic wraps mod 2**w as the
        # 64-bit path does after its truncation; min/max of .s types compare the bits signed
        put = _puts(prog, d, _DTYPE[w])
        s0, s1 = srcs
        view = _SIGNED[w] if (op in ("min", "max") and t[0] == "s") else None
        uf = _UFUNCS[op]
        if view is None:
            def run(st):
                r = uf(s0(st), s1(st))
                st.put(d, dt, r) if put else st.write(d, dt, r)
        else:
            udt = _DTYPE[w]

            def run(st):
                r = uf(s0(st).view(view), s1(st).view(view)).view(udt)
                st.put(d, dt, r) if put else st.write(d, dt, r)
        return _Step(ins, run, reads, writes)

    def run(st):
        a, b = (_ext(s(st), ext_t) for s in srcs[:2])
        r = f(a, b)
        if op == "mad":
            r = _u64(r) + _u64(_ext(srcs[2](st), dt))
        st.write(d, dt, _wrap(r, dt))
    return _Step(ins, run, reads, writes)


def _c_mov(prog, ins):
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH:
        raise _unsupported(ins, "mov needs one type (.b16, .b32, .u64, .f32 ...)")
    t = types[0]
    _nops(ins, 2)
    dst, src = ins.operands
    w = WIDTH[t]
    reads, writes = [], []
    if isinstance(dst, Vec) or isinstance(src, Vec):
        vec, other = (dst, src) if isinstance(dst, Vec) else (src, dst)
        if isinstance(dst, Vec) and isinstance(src, Vec):
            raise _bad(ins, "mov cannot have vectors on both sides")
        k = len(vec.items)
        if k not in (2, 4) or w % k or w // k < 8:
            raise _bad(ins, f"cannot split .{t} into {k} parts", vec)
        iw = w // k
        it = "b" + str(iw)
        if isinstance(src, Vec):                      # pack: item 0 -> the lowest bits
            parts = [_src(prog, ins, o, it, reads) for o in src.items]
            d = _dst(prog, ins, dst, t, writes)

            wdt = _DTYPE[w]
            shifts = [wdt(i * iw) for i in range(k)]
            put = _puts(prog, d, wdt)

            idt = _DTYPE[iw]

            def run(st):
                if _LITTLE:                          # item i is element i of the word
                    acc = np.empty(st.n, wdt)
                    lanes = acc.view(idt)
                    for i, p in enumerate(parts):
                        lanes[i::k] = p(st)
                else:
                    acc = parts[0](st).astype(wdt)
                    for p, sh in zip(parts[1:], shifts[1:]):
                        acc |= p(st).astype(wdt) << sh
                st.put(d, t, acc) if put else st.write(d, t, acc)
            return _Step(ins, run, reads, writes)
        a = _src(prog, ins, src, t, reads)             # unpack
        outs = [(_dst(prog, ins, o, it, writes) if not (isinstance(o, Reg) and o.name == "_")
                 else None) for o in dst.items]

        def run(st):
            v = a(st).astype(np.uint64)
            for i, o in enumerate(outs):
                if o is not None:
                    st.write(o, it, (v >> np.uint64(i * iw)) & np.uint64(_mask(iw)))
        return _Step(ins, run, reads, writes)
    if isinstance(src, Reg) and src.name in prog.params:
        raise _unsupported(ins, "taking the address of a parameter is not modeled; "
                                "load it with ld.param")
    if isinstance(src, Addr):
        raise _unsupported(ins, "taking the address of a variable is not modeled")
    if isinstance(src, Reg) and not _special(src.name) and src.name not in prog.width:
        v = prog.var(src.name, ins)
        if v is not None:                              # mov r, smem: its .shared address
            d = _dst(prog, ins, dst, t, writes)
            dt = _DTYPE[w]
            if v[1] is None:
                return _Step(ins, lambda st: st.write(d, t, np.full(
                    st.n, prog.extern_offset, dt)), reads, writes)
            off = v[1]
            return _Step(ins, lambda st: st.write(d, t, np.full(st.n, off, dt)), reads, writes)
        if src.name in prog.prog.variables:
            raise _unsupported(ins, f"taking the address of the "
                                    f".{prog.prog.variables[src.name].space} variable "
                                    f"'{src.name}' is not modeled")
    a = _src(prog, ins, src, t, reads)
    d = _dst(prog, ins, dst, t, writes)

    def run(st):
        st.write(d, t, a(st))
    return _Step(ins, run, reads, writes)


_SPACES = ("global", "param", "shared", "local", "const", "generic")


def _c_ldst(prog, ins):
    store = ins.opcode == "st"
    sfx = ins.suffixes
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH or types[0] == "pred":
        raise _unsupported(ins, "ld/st need one type (.b16, .b32, .f32, .u64 ...)")
    t = types[0]
    space = next((s for s in sfx if s in _SPACES), "generic")
    if space not in ("global", "generic", "param", "shared", "local"):
        raise _unsupported(ins, f"the .{space} state space is not modeled (only .global, "
                                ".shared, .local, generic addresses and .param)")
    if store and space == "param":
        raise _unsupported(ins, "st.param (calls) is not modeled")
    vec = next((int(s[1:]) for s in sfx if s in ("v2", "v4", "v8")), 1)
    _nops(ins, 2)
    data, addr = (ins.operands[1], ins.operands[0]) if store else ins.operands
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    w = WIDTH[t]
    nbytes = max(w // 8, 1)
    reads, writes = [], []
    if vec > 1:
        if not isinstance(data, Vec) or len(data.items) != vec:
            raise _bad(ins, f"a .v{vec} access needs a vector of {vec} registers", data)
        items = list(data.items)
    elif isinstance(data, Vec) and data.brackets == "{}" and len(data.items) == 1:
        items = list(data.items)                       # Triton's '{ %rs1 }': one element
    else:
        if isinstance(data, Vec):
            raise _bad(ins, "a vector operand needs .v2 or .v4", data)
        items = [data]
    if space == "param":
        if addr.base is None:
            raise _bad(ins, "ld.param needs [parameter] or [parameter+offset]", addr)
        pname = addr.base.name
        p = prog.params.get(pname)
        if p is None and prog.function is not None:
            raise _bad(ins, f"'{pname}' is not a parameter of '{prog.function.name}'", addr)
        if p is not None:
            ptype = p.type
            psize = max(WIDTH.get(ptype, 8) // 8, 1) * int(np.prod(p.array or (1,)))
        else:                                          # snippet: the load says what it is
            ptype, psize = t, nbytes * vec + max(addr.offset, 0)
        psize = prog.param_type.setdefault(pname, (ptype, psize, addr.line or ins.line,
                                                   addr.col or ins.col))[1]
        off = addr.offset
        if off < 0 or off + nbytes * vec > psize:
            raise _bad(ins, f"[{pname}+{off}] reads past the {psize}-byte parameter", addr)
        reads.append((("param", pname), ptype))
        outs = [_dst(prog, ins, o, t, writes) for o in items]

        def run(st):
            b = st.params.get(pname)
            if b is None:
                raise UninitializedRegister(
                    f"parameter '{pname}' has no value (give it as an input, e.g. "
                    f"inputs={{'{pname}': ...}})", addr.line or ins.line, addr.col or ins.col,
                    rule="uninitialized")
            for k, o in enumerate(outs):
                lo = off + k * nbytes
                st.write(o, t, _from_le(b[:, lo:lo + nbytes], w))
        return _Step(ins, run, reads, writes)
    # global / generic, shared, local memory
    base = _address(prog, ins, addr, space, reads)
    off = addr.offset
    total = nbytes * vec
    if store:
        vals = [_src(prog, ins, o, t, reads) for o in items]
    else:
        outs = [_dst(prog, ins, o, t, writes) for o in items]
    where = (addr.line or ins.line, addr.col or ins.col)
    ipos = (ins.line, ins.col)
    spelling = ins.opcode_spelling

    edt = np.dtype(_DTYPE[max(w, 8)]).newbyteorder("<")

    def run(st):
        m = st.mask
        buf, idx = _locate(st, space, base(st) + off, m, total, spelling, where, ipos)
        # the accesses are aligned: the memory as little-endian words of the element size
        words = buf[:buf.size // nbytes * nbytes].view(edt)
        wi = idx // nbytes
        if store:
            sel = m if not st.all_on else slice(None)
            at = wi[sel]
            if at.size > 1 and not (np.diff(at) > 0).all():
                # two threads store to one place: in thread order the last one's value stays
                rev = at[::-1]
                _, first = np.unique(rev, return_index=True)
                keep = np.zeros(at.size, bool)
                keep[at.size - 1 - first] = True
                at = at[keep]
            else:
                keep = None
            for k, v in enumerate(vals):
                bits = v(st)[sel]
                if keep is not None:
                    bits = bits[keep]
                words[at + k] = bits
        else:
            for k, o in enumerate(outs):
                v = words[wi + k] if words.size else np.zeros(st.n, edt)
                st.write(o, t, v.astype(_DTYPE[max(w, 8)], copy=False) if w > 1 else v)
    return _Step(ins, run, reads, writes)


def _address(prog, ins, addr, space, reads):
    """fn(state) -> int64 array (n,): the base of an address operand [base+offset] (a
    register, a .shared/.local variable, or nothing: 0), the offset not added."""
    b = addr.base
    if b is None:
        return _zeros_of
    if b.name in prog.params:
        raise _bad(ins, f"'{b.name}' is a parameter: load its value with ld.param first", addr)
    v = prog.var(b.name, ins)
    if v is not None:
        vspace, voff = v
        if space != vspace:
            raise _unsupported(ins, f"'{b.name}' is a .{vspace} variable: address it with "
                                    f"ld.{vspace}/st.{vspace} (generic addresses of .{vspace} "
                                    "variables are not modeled)")
        if voff is None:                               # extern .shared: after the statics
            return lambda st: np.full(st.n, prog.extern_offset, np.int64)
        return lambda st: np.full(st.n, voff, np.int64)
    if b.name in prog.prog.variables:
        raise _unsupported(ins, f"addressing the .{prog.prog.variables[b.name].space} variable "
                                f"'{b.name}' is not modeled; pass addresses in registers")
    base_t = "u64" if prog.width.get(b.name, 64) == 64 else "u32"
    r = _src(prog, ins, b, base_t, reads)
    return lambda st: r(st).astype(np.int64)


def _zeros_of(st):
    return np.zeros(st.n, np.int64)


def _locate(st, space, a, m, total, spelling, where, at=None):
    """(the byte buffer of `space`, the index in it of each thread's address `a`): checked
    to lie inside the space and to be aligned to the access size `total`, for the threads of
    mask `m` (the others get index 0)."""
    if space == "shared":
        buf, size, what = st.shared, st.shared_size, ".shared memory of the block"
    elif space == "local":
        buf, size, what = st.local, st.prog.local_size, ".local memory of the thread"
    else:
        buf = st.mem
        if buf is None:
            raise InterpError(f"'{spelling}' needs memory: pass memory=... (bytes)",
                              *(at or where), rule="no-memory")
        size, what = buf.size, "memory"
    whole = st.all_on and m.size == st.n
    live = a if whole else a[m]
    if live.size:
        lo, hi = int(live.min()), int(live.max())
        if lo < 0 or hi + total > size:
            bad = lo if lo < 0 else hi
            raise InterpError(f"'{spelling}': address {bad:#x} (+{total} bytes) is outside "
                              f"the {size}-byte {what}", *where, rule="address")
        if total & (total - 1):
            mis = live % total
        else:                                          # a power of two (every PTX access)
            mis = live & (total - 1)
        if mis.any():
            raise InterpError(f"'{spelling}': address {int(live[mis != 0][0]):#x} is not "
                              f"{total}-byte aligned", *where, rule="address")
    if not whole:
        a = np.where(m, a, 0)
    if space == "shared":
        a = a + st.ids("block") * size
    elif space == "local":
        a = a + np.arange(st.n, dtype=np.int64) * size
    return buf, a


def _to_le(bits, w):
    n = max(w // 8, 1)
    b = np.ascontiguousarray(bits.astype(_DTYPE[max(w, 8)]))
    return b.view(np.uint8).reshape(-1, n) if n > 1 else b.reshape(-1, 1).astype(np.uint8)


def _from_le(by, w):
    n = max(w // 8, 1)
    by = np.ascontiguousarray(by, dtype=np.uint8).reshape(-1, n)
    return by.view(_DTYPE[max(w, 8)]).reshape(-1) if n > 1 else by.reshape(-1)


def _c_cvta(prog, ins):
    types = _types_of(ins)
    sfx = ins.suffixes
    if "global" not in sfx or len(types) != 1 or types[0] not in ("u64", "u32"):
        raise _unsupported(ins, "only cvta(.to).global.u64/.u32 is modeled (the identity)")
    _nops(ins, 2)
    t = types[0]
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    return _Step(ins, lambda st: st.write(d, t, a(st)), reads, writes)


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


_SETP_SIGNED = {16: np.int16, 32: np.int32, 64: np.int64}
_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal}


def _c_setp(prog, ins):
    types = _types_of(ins)
    cmps = [s for s in ins.suffixes if s in _CMP]
    if len(types) != 1 or types[0][0] not in "bsu" or types[0] == "bf16" or len(cmps) != 1:
        raise _unsupported(ins, "only integer setp (.eq .ne .lt .le .gt .ge .lo .ls .hi .hs on "
                                ".b/.u/.s types) is modeled")
    if set(ins.suffixes) - {types[0], cmps[0]}:
        raise _unsupported(ins, "setp with a boolean combination (.and/.or/.xor) is not modeled")
    t, c = types[0], cmps[0]
    if WIDTH[t] not in _SETP_SIGNED:                # ptxas: no 8-bit (or 128-bit) setp
        raise _unsupported(ins, "Unexpected instruction types specified for 'setp' (ptxas "
                                "takes 16-, 32- and 64-bit integer types)")
    _nops(ins, 3)
    reads, writes = [], []
    dst = ins.operands[0]
    dests = dst.items if isinstance(dst, Vec) and dst.brackets == "|" else [dst]
    a = _src(prog, ins, ins.operands[1], t, reads)
    b = _src(prog, ins, ins.operands[2], t, reads)
    ds = [_dst(prog, ins, o, "pred", writes) for o in dests]
    signed = t[0] == "s"
    w = WIDTH[t]
    cmp = _COMPARE[_CMP[c]]
    puts = [_puts(prog, o, np.bool_) for o in ds]

    def run(st):
        x, y = a(st), b(st)                  # arrays of the type's width (the readers')
        if signed:
            v = _SETP_SIGNED[w]
            x, y = x.view(v), y.view(v)
        r = cmp(x, y)
        st.put(ds[0], "pred", r) if puts[0] else st.write(ds[0], "pred", r)
        if len(ds) > 1:
            st.put(ds[1], "pred", ~r) if puts[1] else st.write(ds[1], "pred", ~r)
    return _Step(ins, run, reads, writes)


def _c_selp(prog, ins):
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH or types[0] == "pred":
        raise _unsupported(ins, "selp needs one type")
    t = types[0]
    _nops(ins, 4)
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    b = _src(prog, ins, ins.operands[2], t, reads)
    p = _src(prog, ins, ins.operands[3], "pred", reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    if _puts(prog, d, _DTYPE[WIDTH[t]]):             # a and b are arrays of t's width
        return _Step(ins, lambda st: st.put(d, t, np.where(p(st), a(st), b(st))), reads,
                     writes)
    return _Step(ins, lambda st: st.write(d, t, np.where(p(st), a(st), b(st))), reads, writes)


def _c_bra(prog, ins):
    if set(ins.suffixes) - {"uni"}:
        raise _unsupported(ins)
    _nops(ins, 1)
    target = ins.operands[0]
    if not isinstance(target, Reg) or target.name not in prog.labels:
        raise InterpError(f"'bra': no label '{target}' in this program", ins.line, ins.col,
                          rule="label")
    return _Step(ins, None, [], [], kind="bra", target=target.name)


def _c_ret(prog, ins):
    if ins.operands:
        raise _bad(ins, "takes no operands")
    return _Step(ins, None, [], [], kind="ret")


def _c_bar(prog, ins):
    """bar.sync / bar.cta.sync / barrier.sync(.aligned) a{, b} and bar.arrive / barrier.arrive
    a, b (a: the barrier, 0..15; b: the thread count, default every thread of the block)."""
    sfx = set(ins.suffixes) - {"cta", "aligned"}
    if sfx not in ({"sync"}, {"arrive"}) and not (ins.opcode == "barrier" and not sfx):
        raise _unsupported(ins, "only bar.sync, barrier.sync, bar.arrive and barrier.arrive "
                                "are modeled")
    arrive = "arrive" in sfx
    ops = ins.operands
    if not 1 <= len(ops) <= 2 or (arrive and len(ops) != 2):
        raise _bad(ins, "expects a barrier number" + (" and a thread count" if arrive else
                                                      " and an optional thread count"))
    reads = []
    ida = _src(prog, ins, ops[0], "u32", reads)
    cnt = _src(prog, ins, ops[1], "u32", reads) if len(ops) == 2 else None
    return _Step(ins, None, reads, [], kind="bar", extra=(arrive, ida, cnt))


def _c_nop(prog, ins):
    """membar / fence: memory ordering, nothing to compute (the interpreter runs one
    instruction at a time over the threads, every access seen by the next)."""
    return _Step(ins, lambda st: None, [], [])


def _warp_bits(st, m, warp, lane):
    """uint64 array (warps,): bit `lane` set for each thread of mask `m`."""
    w = np.bincount(warp[m], weights=np.ldexp(1.0, lane[m]), minlength=st.geom.nblocks *
                    st.geom.wpb)
    return w.astype(np.uint64)


def _member_check(st, ins, mm, m):
    """The threads of `m` and their membermask `mm` (uint64 array): each executing thread
    is in its mask, and every live lane the mask names executes this instruction."""
    lane, warp = st.ids("lane"), st.ids("warp")
    me = np.uint64(1) << lane.astype(np.uint64)
    if ((mm & me) == 0)[m].any():
        t = int(np.nonzero(m & ((mm & me) == 0))[0][0])
        raise InterpError(f"'{ins.opcode_spelling}': thread {t} (lane {int(lane[t])}) runs it "
                          f"but its membermask {int(mm[t]):#010x} leaves its lane out",
                          ins.line, ins.col, rule="membermask")
    execu = _warp_bits(st, m, warp, lane)[warp]
    live = _warp_bits(st, st.alive, warp, lane)[warp]
    missing = mm & live & ~execu & np.uint64(0xFFFFFFFF)
    bad = m & (missing != 0)
    if bad.any():
        t = int(np.nonzero(bad)[0][0])
        miss = int(missing[t])
        lanes = [k for k in range(32) if miss >> k & 1]
        raise InterpError(f"'{ins.opcode_spelling}': thread {t}'s membermask {int(mm[t]):#010x}"
                          f" names lanes {lanes[:8]}{' ...' if len(lanes) > 8 else ''} of its "
                          "warp that do not execute it here (diverged, or at another "
                          "instruction)", ins.line, ins.col, rule="membermask")


def _c_shfl(prog, ins):
    """shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask (PTX's definition: the
    lane read, j, from b, c's clamp and segment mask; out of range: the thread's own a)."""
    modes = [x for x in ins.suffixes if x in ("up", "down", "bfly", "idx")]
    if "sync" not in ins.suffixes or len(modes) != 1 or "b32" not in ins.suffixes:
        raise _unsupported(ins, "only shfl.sync.{up,down,bfly,idx}.b32 is modeled")
    mode = modes[0]
    _nops(ins, 5)
    reads, writes = [], []
    dst = ins.operands[0]
    dests = list(dst.items) if isinstance(dst, Vec) and dst.brackets == "|" else [dst]
    a, b, c, mmask = (_src(prog, ins, o, "b32", reads) for o in ins.operands[1:])
    d = _dst(prog, ins, dests[0], "b32", writes)
    p = _dst(prog, ins, dests[1], "pred", writes) if len(dests) > 1 else None

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        lane = st.ids("lane")
        bv = (b(st) & 31).astype(np.int64)
        cv = c(st).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        maxl = (lane & seg) | (cval & ~seg)
        minl = lane & seg
        if mode == "up":
            j = lane - bv
            ok = j >= maxl
        elif mode == "down":
            j = lane + bv
            ok = j <= maxl
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= maxl
        else:
            j = minl | (bv & ~seg)
            ok = j <= maxl
        j = np.where(ok, j, lane)
        src = np.arange(st.n, dtype=np.int64) - lane + j
        src = np.where(m, src, np.arange(st.n))
        # the lane read must execute this shfl (else the GPU's value is unpredictable)
        src_c = np.clip(src, 0, st.n - 1)
        same_warp = (st.ids("warp")[src_c] == st.ids("warp")) & (src == src_c)
        bad = m & ok & ~(same_warp & m[src_c])
        if bad.any():
            t = int(np.nonzero(bad)[0][0])
            raise InterpError(f"'{ins.opcode_spelling}': thread {t} reads lane {int(j[t])}, "
                              "which does not execute this shfl (the GPU's value is "
                              "unpredictable)", ins.line, ins.col, rule="shfl-source")
        av = a(st)
        st.write(d, "b32", av[src_c])
        if p is not None:
            st.write(p, "pred", ok)
    return _Step(ins, run, reads, writes)


def _c_vote(prog, ins):
    """vote.sync.{all,any,uni}.pred d, {!}a, membermask and vote.sync.ballot.b32."""
    modes = [x for x in ins.suffixes if x in ("all", "any", "uni", "ballot")]
    if "sync" not in ins.suffixes or len(modes) != 1:
        raise _unsupported(ins, "only vote.sync.{all,any,uni}.pred and vote.sync.ballot.b32 "
                                "are modeled")
    mode = modes[0]
    _nops(ins, 3)
    reads, writes = [], []
    src = ins.operands[1]
    neg = False
    if isinstance(src, Reg) and src.name.startswith("!"):
        neg, src = True, Reg(src.name[1:], src.line, src.col)
    a = _src(prog, ins, src, "pred", reads)
    mmask = _src(prog, ins, ins.operands[2], "b32", reads)
    dt = "b32" if mode == "ballot" else "pred"
    d = _dst(prog, ins, ins.operands[0], dt, writes)

    def run(st):
        m = st.mask
        mm = mmask(st).astype(np.uint64)
        _member_check(st, ins, mm, m)
        lane, warp = st.ids("lane"), st.ids("warp")
        pv = a(st)
        pv = ~pv if neg else pv
        ones = _warp_bits(st, m & pv, warp, lane)[warp] & mm
        if mode == "ballot":
            st.write(d, dt, ones.astype(np.uint32))
            return
        voters = _warp_bits(st, m, warp, lane)[warp] & mm
        if mode == "all":
            r = ones == voters
        elif mode == "any":
            r = ones != 0
        else:
            r = (ones == voters) | (ones == 0)
        st.write(d, dt, r)
    return _Step(ins, run, reads, writes)


_ATOM_FLOAT = {"f32": "add.rn.ftz.f32", "f16": "add.rn.f16", "bf16": "add.rn.bf16",
               "f64": "add.rn.f64", "f16x2": "add.rn.f16x2", "bf16x2": "add.rn.bf16x2"}


def _row_fn(spelling, ins):
    """fn(a_bits, b_bits) -> bits of a two-operand row of the table (its core, else its
    entry point)."""
    if not _is_row(spelling):
        raise _unsupported(ins, f"it needs '{spelling}', which the instruction table lacks")
    form = _parse_once(spelling)
    fmts, core, _ = _row_plan(spelling)
    if core is not None:
        return lambda x, y: core((x, y), x.size)
    entry = ENTRY[form.family]
    return lambda x, y: np.asarray(entry(form, x, y))


def _atom_op(op, t, ins):
    """fn(old bits, b bits, c bits or None) -> new bits, for one round (see _c_atom)."""
    w = WIDTH[t]
    dt = _DTYPE[w]
    sdt = _SIGNED.get(w)
    if op == "add" and t in _ATOM_FLOAT:
        f = _row_fn(_ATOM_FLOAT[t], ins)
        return lambda o, b, c: f(o, b)
    if t[0] == "f" or t in ("bf16", "bf16x2"):
        raise _unsupported(ins, f"atomic .{op} on .{t} is not modeled")
    if op == "add":
        return lambda o, b, c: (o + b).astype(dt)
    if op in ("min", "max"):
        f = np.minimum if op == "min" else np.maximum
        if t[0] == "s":
            return lambda o, b, c: f(o.view(sdt), b.view(sdt)).view(dt)
        return lambda o, b, c: f(o, b)
    if op in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return lambda o, b, c: f(o, b)
    if op == "exch":
        return lambda o, b, c: b
    if op == "cas":
        return lambda o, b, c: np.where(o == b, c, o)
    if op == "inc":
        return lambda o, b, c: np.where(o >= b, dt(0), o + dt(1)).astype(dt)
    if op == "dec":
        return lambda o, b, c: np.where((o == 0) | (o > b), b, o - dt(1)).astype(dt)
    raise _unsupported(ins)


def _c_atom(prog, ins):
    """atom/red on .global (generic) and .shared: d = old, memory = old op b (cas: c).  Threads
    of one instruction apply in thread order, lowest linear id first, each seeing the one
    before it; atom.add.f32 is add.rn.ftz.f32 (PTX: it flushes subnormals), the .f16/.bf16
    adds add.rn."""
    red = ins.opcode == "red"
    sfx = ins.suffixes
    space = next((x for x in sfx if x in _SPACES), "generic")
    if space not in ("global", "generic", "shared"):
        raise _unsupported(ins, f"atomics on .{space} are not modeled")
    ops = [x for x in sfx if x in ("add", "min", "max", "and", "or", "xor", "exch", "cas",
                                   "inc", "dec")]
    tys = _types_of(ins)
    if len(ops) != 1 or len(tys) != 1 or tys[0] not in WIDTH or any(
            x.startswith("v") and x[1:].isdigit() for x in sfx):
        raise _unsupported(ins, "one operation and one type (vector atomics are not modeled)")
    op, t = ops[0], tys[0]
    nsrc = 2 if op == "cas" else 1
    _nops(ins, (0 if red else 1) + 1 + nsrc)
    reads, writes = [], []
    k = 0 if red else 1
    addr = ins.operands[k]
    if not isinstance(addr, Addr):
        raise _bad(ins, f"expected an address '[...]', got '{addr}'", addr)
    base = _address(prog, ins, addr, space, reads)
    b = _src(prog, ins, ins.operands[k + 1], t, reads)
    c = _src(prog, ins, ins.operands[k + 2], t, reads) if op == "cas" else None
    d = None if red else _dst(prog, ins, ins.operands[0], t, writes)
    f = _atom_op(op, t, ins)
    w = WIDTH[t]
    nb = w // 8
    where = (addr.line or ins.line, addr.col or ins.col)
    spelling, off = ins.opcode_spelling, addr.offset

    def run(st):
        m = st.mask
        buf, idx = _locate(st, space, base(st) + off, m, nb, spelling, where,
                           (ins.line, ins.col))
        tids = np.nonzero(m)[0]
        pos = idx[tids]
        bv, cv = b(st)[tids], (c(st)[tids] if c is not None else None)
        order = np.lexsort((tids, pos))            # by address, then thread id
        sp = pos[order]
        first = np.r_[True, sp[1:] != sp[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(sp.size), 0))
        rank = np.empty(sp.size, np.int64)
        rank[order] = np.arange(sp.size) - start
        old_all = np.zeros(tids.size, _DTYPE[w])
        span = np.arange(nb)
        for r in range(int(rank.max()) + 1 if rank.size else 0):
            sel = np.nonzero(rank == r)[0]
            p = pos[sel][:, None] + span
            old = _from_le(buf[p], w)
            new = f(old, bv[sel], cv[sel] if cv is not None else None)
            buf[p] = _to_le(np.asarray(new).astype(_DTYPE[w]), w)
            old_all[sel] = old
        if d is not None:
            full = np.zeros(st.n, _DTYPE[w])
            full[tids] = old_all
            st.write(d, t, full)
    return _Step(ins, run, reads, writes)


def _c_mma(prog, ins):
    """mma.sync d, a, b, c over whole warps: each warp's registers gathered into matrices by
    the fragment layouts (ptxfp.tensor.fragments), D = ptxfp.mma(form, A, B, C) at the
    module's target, scattered back into the warp's d registers."""
    if ins.opcode != "mma" or "sync" not in ins.suffixes:
        raise _unsupported(ins, "the warp-group (wgmma) and wmma instructions are not wired "
                                "into the interpreter (ptxfp.mma computes them from whole "
                                "matrices)")
    try:
        import importlib
        fr = importlib.import_module("ptxfp.tensor.fragments")
        tensor = importlib.import_module("ptxfp.tensor")
        form = tensor.resolve(ins.opcode_spelling)
        frags = fr.fragments(form)
    except ImportError:
        raise _unsupported(ins, "mma.sync needs ptxfp.tensor (fragment layouts and ptxfp.mma), "
                                "not installed in this tree") from None
    except (PtxfpError, ValueError, KeyError) as e:
        raise _unsupported(ins, f"no fragment layout or tensor-core model for it ({e})") \
            from None
    if any(k not in frags for k in "abcd") or len(ins.operands) != 4:
        raise _unsupported(ins, "only the d, a, b, c form of mma.sync is wired (no sparse "
                                "or block-scaled operands)")
    reads, writes = [], []
    regs = {}
    for name, op in zip("dabc", ins.operands):
        f = frags[name]
        items = list(op.items) if isinstance(op, Vec) else [op]
        if len(items) != f.regs:
            raise _bad(ins, f"operand {name} needs {f.regs} registers, got {len(items)}", op)
        regs[name] = ("b64" if f.reg_bits == 64 else "b32", items)
    srcs = {k: [_src(prog, ins, o, regs[k][0], reads) for o in regs[k][1]] for k in "abc"}
    dt = regs["d"][0]
    dests = [_dst(prog, ins, o, dt, writes) for o in regs["d"][1]]
    target = (prog.prog.target or "sm_90") if prog.function is not None else "sm_90"

    def run(st):
        m = st.mask
        warp = st.ids("warp")
        idx = np.nonzero(m)[0]
        counts = np.bincount(warp[idx])
        ws = np.unique(warp[idx])
        if (counts[ws] != 32).any():
            w = int(ws[np.nonzero(counts[ws] != 32)[0][0]])
            raise InterpError(f"'{ins.opcode_spelling}': warp {w} runs it with "
                              f"{int(counts[w])} of its threads; mma.sync needs all 32",
                              ins.line, ins.col, rule="membermask")
        W = ws.size
        mats = {}
        for k in "abc":
            R = np.stack([s(st)[idx] for s in srcs[k]], axis=-1).reshape(W, 32, -1)
            mats[k] = fr.gather(form, k, R)
        try:
            D = tensor.mma(form, mats["a"], mats["b"], mats["c"], target=target)
        except PtxfpError as e:
            raise InterpError(f"'{ins.opcode_spelling}': {e}", ins.line, ins.col,
                              rule="mma") from None
        Rd = fr.scatter(form, "d", np.asarray(D)).reshape(W * 32, -1)
        for k, d in enumerate(dests):
            full = np.zeros(st.n, _DTYPE[WIDTH[dt]])
            full[idx] = Rd[:, k]
            st.write(d, dt, full)
    return _Step(ins, run, reads, writes)


_COMPILERS = {
    "mma": _c_mma, "wmma": _c_mma, "wgmma": _c_mma,
    "bar": _c_bar, "barrier": _c_bar, "membar": _c_nop, "fence": _c_nop,
    "shfl": _c_shfl, "vote": _c_vote, "atom": _c_atom, "red": _c_atom,
    "add": _c_arith, "sub": _c_arith, "mul": _c_arith, "fma": _c_arith,
    "mad": _c_arith, "min": _c_int, "max": _c_int, "and": _c_int, "or": _c_int, "xor": _c_int,
    "not": _c_int, "neg": _c_int, "shl": _c_int, "shr": _c_int,
    "cvt": _c_cvt, "mov": _c_mov, "ld": _c_ldst, "st": _c_ldst, "cvta": _c_cvta,
    "setp": _c_setp, "selp": _c_selp, "bra": _c_bra, "ret": _c_ret, "exit": _c_ret,
}


#: compilers of instructions the engine runs itself, whatever rows the table has for them
_OWN = frozenset((_c_mma, _c_bar, _c_shfl, _c_vote, _c_atom, _c_nop, _c_ldst, _c_bra, _c_ret))


# --- inputs -----------------------------------------------------------------------------------

def _input_bits(value, width, signed, what):
    """An input (int or 1-D integer array) as bits of `width`: array (k,) or 0-d."""
    if isinstance(value, (bool, np.bool_)) and width != 1:
        raise OperandError(f"{what}: bits must be integers, got a boolean")
    lo = -(1 << (width - 1)) if (signed or width == 1) else 0
    if isinstance(value, numbers.Integral):
        v = int(value)
        if not lo <= v < (1 << width):
            raise OperandError(f"{what}: {v:#x} does not fit in {width} bits" if v >= 0 else
                               f"{what}: {v} is negative (bits are unsigned {width}-bit integers)")
        return np.asarray(v & _mask(width) if width > 1 else bool(v), _DTYPE[width])
    if isinstance(value, float):
        raise OperandError(f"{what}: inputs are bit patterns, got the float {value!r} "
                           "(encode floats with ptxfp.to_bits)")
    if isinstance(value, (bytes, bytearray, str)):
        raise OperandError(f"{what}: expected an int or an integer array, got "
                           f"{type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:              # ragged lists, objects NumPy refuses
        raise OperandError(f"{what}: expected an int or a 1-D integer array, got a "
                           f"{type(value).__name__} NumPy cannot read as one ({e})") from None
    if arr.dtype.kind == "b" and width == 1:
        return arr.astype(bool)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "O" and all(
            isinstance(x, numbers.Integral) for x in arr.flat)):
        raise OperandError(f"{what}: inputs must be integer bit patterns, got {arr.dtype}"
                           + (" (encode floats with ptxfp.to_bits)" if arr.dtype.kind == "f"
                              else ""))
    if arr.ndim > 1:
        raise OperandError(f"{what}: one value per thread: a 1-D array, got shape {arr.shape}")
    check_bytes(arr.size * 8, what, f"({arr.size} values)")
    if arr.size:
        mn, mx = int(arr.min()), int(arr.max())
        if mn < lo or mx >= (1 << width):
            bad = mn if mn < lo else mx
            raise OperandError(f"{what}: value {bad} does not fit in {width} bits")
    if width == 1:
        return arr.astype(bool)
    return (arr.astype(object) & _mask(width)).astype(np.uint64).astype(_DTYPE[width]) \
        if arr.dtype.kind == "O" or arr.min(initial=0) < 0 else arr.astype(_DTYPE[width])


def _lookup(names, key):
    if key in names:
        return key
    if not key.startswith("%") and "%" + key in names:
        return "%" + key
    return None


def _needed(prog):
    """Registers and params read before any write, in program order: {name: InputInfo}."""
    if prog.needed is None:
        prog.needed, prog._read_as = _scan_reads(prog)
    return {k: replace(v) for k, v in prog.needed.items()}   # the caller's own InputInfos


_FLOAT_READS = frozenset(("f16", "bf16", "f32", "f16x2", "bf16x2", "f64"))


def _scan_reads(prog):
    """One pass over the steps: (the values read before they are written, as InputInfos;
    register -> the first floating-point type an instruction reads it as)."""
    written, out, read_as = set(), {}, {}
    for s in prog.steps:
        for r, t in s.reads:
            if type(r) is tuple:                       # ('param', name)
                name = r[1]
                if name not in out:
                    ptype, psize, line, col = prog.param_type[name]
                    out[name] = InputInfo(name, ptype, psize * 8, "param", line, col)
                continue
            name = r.name
            if t in _FLOAT_READS and name not in read_as:
                read_as[name] = t
            if name not in written and name not in out:
                out[name] = InputInfo(name, t, prog.width[name], "register",
                                      r.line or s.instr.line, r.col or s.instr.col)
        for r, _ in s.writes:
            written.add(r.name)
    return out, read_as


@guarded("run")
def prepare(text, *, entry=None):
    """Read and compile `text` once: the result can be given to :func:`run`,
    :func:`run_detailed` and :func:`inputs_needed` in place of the text.  Its ``types`` maps
    each register to its declared or inferred type."""
    if isinstance(text, _Prog):
        return text
    with paused_gc():
        return _Prog(text, entry)


def inputs_needed(text, *, entry=None):
    """The registers and entry parameters `text` reads before writing them, in the order they
    are first read: ``{name: InputInfo(name, type, width, kind, line, col)}``."""
    return _needed(prepare(text, entry=entry))


# --- running ----------------------------------------------------------------------------------

def _memory(memory):
    if memory is None:
        return None
    if isinstance(memory, (bytes, bytearray, memoryview)):
        mv = memoryview(memory).cast("B") if isinstance(memory, memoryview) else memory
        check_bytes(len(mv), "memory", f"({len(mv)} bytes)", " for its copy")
        return np.frombuffer(mv, np.uint8).copy()
    if isinstance(memory, (str, numbers.Number)):
        raise OperandError("memory must be bytes or a uint8 array, got "
                           f"{type(memory).__name__}")
    arr = np.asarray(memory)
    if arr.dtype != np.uint8:
        raise OperandError(f"memory must be bytes or a uint8 array, got {arr.dtype}")
    check_bytes(arr.size, "memory", f"({arr.size} bytes)", " for its copy")
    return arr.reshape(-1).copy()


def _thread_bytes(prog):
    """Bytes one thread costs: each register's bits and its 'set' flag (and a copy made
    while writing it), the parameters, and the temporaries of one instruction."""
    regs = sum(_DTYPE[w](0).nbytes * 2 + 1 for w in prog.width.values())
    params = sum(t[1] for t in prog.param_type.values())
    return regs + params + 64


Dims = int | tuple[int, ...]


@guarded("run")
def run_detailed(text: str, inputs: Mapping[str, ArrayLike] | None = None, *,
                 memory: bytes | NDArray[np.uint8] | None = None, threads: int | None = None,
                 entry: str | None = None, grid: Dims | None = None,
                 block: Dims | None = None, shared_bytes: int = 0,
                 max_steps: int = MAX_STEPS) -> RunResult:
    """Like :func:`run`, returning a :class:`RunResult` (registers, their types, memory)."""
    with paused_gc():             # reading, compiling and running make no cycles worth a pass
        return _run_detailed(text, inputs, memory, threads, entry, grid, block, shared_bytes,
                             max_steps)


def _dims(v, what):
    """(x, y, z) of a grid= / block= argument: an int or 1 to 3 ints >= 1."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (int(v),)
    if not isinstance(v, (tuple, list)) or not 1 <= len(v) <= 3 or not all(
            isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= 1 for x in v):
        raise OperandError(f"{what}={v!r}: expected an int >= 1 or (x, y, z) of ints >= 1")
    v = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    if what == "block" and v[0] * v[1] * v[2] > 1024:
        raise OperandError(f"block={v}: {v[0] * v[1] * v[2]} threads, over the 1024 a block "
                           "may have")
    if what == "grid" and (v[0] >= 1 << 31 or v[1] >= 1 << 16 or v[2] >= 1 << 16):
        raise OperandError(f"grid={v}: over the GPU's grid limits (2**31-1, 65535, 65535)")
    return v


def _run_detailed(text, inputs, memory, threads, entry, grid=None, block=None,
                  shared_bytes=0, max_steps=MAX_STEPS):
    prog = prepare(text, entry=entry)
    if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) or \
            max_steps < 1:
        raise OperandError(f"max_steps={max_steps!r}: expected an int >= 1")
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, numbers.Integral) or \
            shared_bytes < 0:
        raise OperandError(f"shared_bytes={shared_bytes!r}: expected an int >= 0")
    geom = None
    if grid is not None or block is not None:
        geom = _Geometry(_dims(grid if grid is not None else 1, "grid"),
                         _dims(block if block is not None else 1, "block"))
        if threads is not None and threads != geom.n:
            raise OperandError(f"threads={threads} but grid x block is {geom.n} threads")
        threads = geom.n
    target = getattr(prog.prog, "target", None) or ""
    limit = SHARED_LIMIT.get(target.rstrip("af"), None)
    if shared_bytes or prog.extern_align:
        total = prog.extern_offset + shared_bytes
        cap = limit if limit is not None else max(SHARED_LIMIT.values())
        if total > cap:
            raise OperandError(f"shared_bytes={shared_bytes}: {total} bytes of .shared a block "
                               f"(with {prog.shared_static} static), over the {cap} bytes "
                               f"{target or 'any target'} allows")
    needed = _needed(prog)
    inputs = dict(inputs or {})
    known = set(prog.width) | set(prog.params) | set(prog.param_type)
    staged, n = {}, None
    for key, value in inputs.items():
        name = _lookup(known, key)
        if name is None:
            raise OperandError(f"input '{key}' is not a register or parameter of the program"
                               + (f" (it reads: {', '.join(needed)})" if needed else ""))
        if name in prog.params or name in prog.param_type:
            p = prog.params.get(name)
            ptype = p.type if p is not None else prog.param_type[name][0]
            size = prog.param_type[name][1] if name in prog.param_type else \
                max(WIDTH.get(ptype, 8) // 8, 1) * int(np.prod(p.array or (1,)))
            bits = _input_bits(value, min(size * 8, 64) if size * 8 in _DTYPE else 64,
                               ptype.startswith("s"), f"input '{name}'")
            staged[name] = ("param", bits.astype(np.uint64), size)
        else:
            rt = needed[name].type if name in needed else \
                prog.rtype.get(name, "b" + str(prog.width[name]))
            bits = _input_bits(value, prog.width[name], rt.startswith("s"), f"input '{name}'")
            staged[name] = ("register", bits, rt)
        if bits.ndim == 1 and bits.size != 1:
            if n is not None and n != bits.size:
                raise OperandError(f"inputs do not broadcast: '{name}' has {bits.size} values, "
                                   f"another input {n}")
            n = bits.size
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) \
                or threads < 1:
            raise OperandError(f"threads={threads!r}: the thread count must be an int >= 1")
        if n is not None and n != threads:
            raise OperandError(f"threads={threads} but the inputs have {n} values")
        n = int(threads)
    n = 1 if n is None else n
    per = _thread_bytes(prog)
    check_bytes(n * per, "threads", f"({n})",
                f" ({per} bytes a thread for {len(prog.width)} registers)")
    ready = {}
    for name, (kind, bits, extra) in staged.items():
        full = np.broadcast_to(bits.reshape(-1) if bits.ndim else bits, (n,)).copy()
        if kind == "param":
            by = np.zeros((n, extra), np.uint8)
            k = min(extra, 8)
            by[:, :k] = _to_le(full.astype(np.uint64), 64)[:, :k]
            ready[name] = ("param", by, None)
        else:
            ready[name] = ("register", full, extra)
    if geom is None:
        geom = _Geometry((1, 1, 1), (n, 1, 1))
    st = _State(prog, n, ready, _memory(memory), geom, int(shared_bytes))
    _execute_steps(prog, st, n, int(max_steps))
    regs, seen = {}, set()
    for k, v in st.regs.items():                   # registers that share an array (mov) get
        regs[k] = v.copy() if id(v) in seen else v    # their own, as the caller may change it
        seen.add(id(v))
    return RunResult(registers=regs, types=dict(st.types), memory=st.mem, threads=n,
                     declared={k: d.type for k, d in prog.decl_of.items()},
                     read_as=prog.read_as, steps=st.steps,
                     thread_instructions=st.thread_instructions)


class StepLimit(InterpError):
    """A run executed max_steps instructions without ending (a loop that does not exit)."""


def _execute_steps(prog, st, n, max_steps=MAX_STEPS):
    """Run the compiled steps over the threads of `st` as a GPU does, one instruction at a
    time for a group of threads at the same PC.

    The scheduling rule is the minimum PC: every live thread has a PC; the group run next is
    every thread at the smallest PC (``cur``; threads parked at higher PCs wait in
    ``waiting``, a PC -> mask map whose keys are all above ``cur``).  A branch that splits the
    group parks the part with the higher PC; threads meet again where their PCs meet (for
    structured code, the immediate post-dominator of the branch), so a warp's lanes run each
    instruction together whenever the GPU's do, and shfl/vote see the lanes they see there.
    bar.sync parks its threads at the barrier; when no thread can run, each block whose live
    threads are all at the barrier (or whose count is met) passes it.  Exited threads do
    not count.  Results are the GPU's for data-race-free programs."""
    steps = prog.steps
    nsteps = len(steps)
    st.alive = np.ones(n, bool)
    cur = 0
    group = np.ones(n, bool)
    full = True                        # group is every thread (nothing parked or exited)
    waiting = {}                       # pc -> mask
    blocked = {}                       # barrier id -> mask of the threads waiting there
    bpc = np.zeros(n, np.int64)        # the pc a blocked thread waits at
    bcount = {}                        # barrier id -> (count or None, line, col)
    arrived = {}                       # barrier id -> int64 array (blocks,): bar.arrive's
    count = tcount = 0
    loop = None                        # the last backward branch taken: (label, line)
    while True:
        if waiting and cur in waiting:
            group = group | waiting.pop(cur)
            full = False
        if cur >= nsteps:              # falling off the end: the threads end
            st.alive &= ~group
            group = np.zeros(n, bool)
            full = False
        elif not full and not group.any():
            group = None
        else:
            count += 1
            if count > max_steps:
                raise _step_limit(prog, steps[cur].instr, loop, max_steps)
            step = steps[cur]
            ins = step.instr
            if step.pred is None and step.kind == "op" and full:
                tcount += n
                st.mask = st.active = group
                st.all_on = True
                try:
                    step.run(st)
                except _Unset as e:
                    raise _unset(st, step, e) from None
                cur += 1
                continue
            mask = group
            if step.pred is not None:
                st.mask = group
                p = st.read(step.pred, "pred", ins)
                mask = group & (~p if ins.predicate.negated else p)
            kind = step.kind
            tcount += n if (full and mask is group) else int(np.count_nonzero(mask))
            if kind == "op":
                if full or mask.any():
                    st.mask = st.active = mask
                    st.all_on = full and mask is group
                    try:
                        step.run(st)
                    except _Unset as e:
                        raise _unset(st, step, e) from None
                cur += 1
                continue
            if kind == "bra":
                tgt = prog.labels[step.target]
                if mask is group:
                    taken_all, none = True, False
                else:
                    nt = group & ~mask
                    none = not mask.any()
                    taken_all = not none and not nt.any()
                if none:
                    cur += 1
                    continue
                if tgt <= cur:
                    loop = (step.target, prog.statements[tgt].line if tgt < nsteps
                            else ins.line)
                if taken_all:
                    cur = tgt
                elif tgt > cur:
                    _park(waiting, tgt, mask)
                    group, full = nt, False
                    cur += 1
                else:
                    _park(waiting, cur + 1, nt)
                    group, full = mask, False
                    cur = tgt
                if waiting:                     # the minimum PC runs first
                    low = min(waiting)
                    if low < cur:
                        _park(waiting, cur, group)
                        cur, group, full = low, waiting.pop(low), False
                continue
            if kind == "ret":
                if mask is group or mask.all():
                    st.alive &= ~mask
                    group = np.zeros(n, bool)
                else:
                    st.alive &= ~mask
                    group = group & ~mask
                full = False
                cur += 1
                continue
            # a barrier
            arrive, ida, cnt = step.extra
            st.mask = mask
            if not mask.any():
                cur += 1
                continue
            bid = ida(st)[mask]
            if bid.min() != bid.max() or int(bid[0]) > 15:
                raise InterpError(f"'{ins.opcode_spelling}': the barrier number must be one "
                                  "value from 0 to 15 for the threads that run it "
                                  f"(got {int(bid.min())}..{int(bid.max())})", ins.line,
                                  ins.col, rule="barrier")
            bid = int(bid[0])
            c = None
            if cnt is not None:
                cv = cnt(st)[mask]
                c = int(cv[0])
                if cv.min() != cv.max() or c <= 0 or c % 32:
                    raise InterpError(f"'{ins.opcode_spelling}': the thread count must be one "
                                      "positive multiple of 32", ins.line, ins.col,
                                      rule="barrier")
            if arrive:
                a = arrived.setdefault(bid, np.zeros(st.geom.nblocks, np.int64))
                a += np.bincount(st.ids("block")[mask], minlength=st.geom.nblocks)
                bcount.setdefault(bid, (c, ins.line, ins.col))
                cur += 1
                continue
            b = blocked.get(bid)
            blocked[bid] = mask if b is None else (b | mask)
            bpc[mask] = cur
            bcount[bid] = (c, ins.line, ins.col)
            group = group & ~mask
            full = False
            cur += 1
            continue
        # the group is empty: the lowest parked PC runs next, else a barrier opens
        if waiting:
            cur = min(waiting)
            group, full = waiting.pop(cur), False
            continue
        if not blocked:
            break
        _release(prog, st, blocked, bpc, bcount, arrived, waiting)
        cur = min(waiting)
        group, full = waiting.pop(cur), False
    st.active = st.alive
    st.mask = st.alive
    st.steps, st.thread_instructions = count, tcount


def _park(waiting, pc, mask):
    old = waiting.get(pc)
    waiting[pc] = mask if old is None else (old | mask)


def _release(prog, st, blocked, bpc, bcount, arrived, waiting):
    """No thread can run: open each barrier for the blocks whose threads have all arrived
    (every live thread of the block, or the barrier's count); none: one error naming it."""
    blk = st.ids("block")
    nb = st.geom.nblocks
    live = np.bincount(blk[st.alive], minlength=nb)
    opened = False
    for bid in sorted(blocked):
        m = blocked[bid]
        at = np.bincount(blk[m], minlength=nb)
        c = bcount[bid][0]
        extra = arrived.get(bid)
        have = at + (extra if extra is not None else 0)
        need = live if c is None else np.full(nb, c)
        done = (at > 0) & (have >= need)
        if not done.any():
            continue
        go = m & done[blk]
        for pc in np.unique(bpc[go]):
            _park(waiting, int(pc) + 1, go & (bpc == pc))
        blocked[bid] = m & ~go
        if extra is not None:
            extra[done] = 0
        if not blocked[bid].any():
            del blocked[bid]
        opened = True
    if opened:
        return
    bid = min(blocked)
    m = blocked[bid]
    c, line, col = bcount[bid]
    b = int(blk[m][0])
    inb = blk == b
    here = int((m & inb).sum())
    need = int(live[b]) if c is None else c
    others = np.nonzero(inb & st.alive & ~m)[0]
    where = ""
    if others.size:
        t = int(others[0])
        other_bid = next((k for k, v in blocked.items() if v[t]), None)
        at = prog.statements[int(bpc[t])] if other_bid is not None else None
        where = (f"; thread {t - b * st.geom.bsize} of the block waits at "
                 f"{'the barrier at line ' + str(at.line) if at is not None else '?'}"
                 f" ({others.size} threads elsewhere)")
    raise InterpError(f"barrier {bid} never opens: in block {_block_xyz(st.geom, b)}, "
                      f"{here} of the {need} threads it waits for reach it{where}",
                      line, col, rule="barrier")


def _block_xyz(g, b):
    x = b % g.grid[0]
    y = b // g.grid[0] % g.grid[1]
    z = b // (g.grid[0] * g.grid[1])
    return f"({x}, {y}, {z})"


def _step_limit(prog, ins, loop, max_steps):
    where = (f"the loop at label '{loop[0]}' (line {loop[1]}) is still running" if loop
             else "still running")
    return StepLimit(f"step limit reached: {max_steps} instructions executed and {where}; "
                     "raise max_steps= (--max-steps) if the kernel needs more",
                     ins.line, ins.col, rule="step-limit")


def run(text: str, inputs: Mapping[str, ArrayLike] | None = None, *,
        memory: bytes | NDArray[np.uint8] | None = None, threads: int | None = None,
        entry: str | None = None, grid: Dims | None = None, block: Dims | None = None,
        shared_bytes: int = 0, max_steps: int = MAX_STEPS) -> dict[str, NDArray[Any]]:
    """Execute PTX over many threads; return ``{register name: bits array}``.

    ``text``: a snippet (instructions, optional ``.reg`` lines) or a module (the one ``.entry``
    is run, or the function named by ``entry``).  ``inputs``: ``{name: int or 1-D int array}``
    for registers (``'%f1'`` or ``'f1'``) and entry parameters; one value per thread, arrays and
    scalars broadcast.  ``memory``: bytes or a uint8 array, the flat little-endian memory that
    ``ld``/``st`` address; the memory after the run comes back under ``'__memory__'``.
    See the module docstring for what is modeled.
    """
    r = run_detailed(text, inputs, memory=memory, threads=threads, entry=entry, grid=grid,
                     block=block, shared_bytes=shared_bytes, max_steps=max_steps)
    out = dict(r.registers)
    if r.memory is not None:
        out[MEMORY_KEY] = r.memory
    return out
