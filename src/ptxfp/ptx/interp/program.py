"""The program, decoded once: the statements of the entry (or snippet) run, register widths
and scopes, labels, parameters, the layout of .shared/.local variables, and each statement
compiled into a :class:`_Step` (by the compiler of ``insns``, given to :class:`_Prog`)."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace

from ...errors import InterpError, names as _names
from ...ops.sfu import using_target
from .. import contract as _contract
from ..reader import Addr, Reg, Vec, name_errors, range_hint, read
from .base import WIDTH, _special
from .state import SHARED_STATIC_LIMIT
from .variables import layout


@dataclass
class InputInfo:
    """One value a program reads before writing it: a register or an entry parameter."""
    name: str
    type: str          #: the type the first instruction reading it reads it as (bf16, u64 ...)
    width: int         #: the register's width (declared, or from its first use)
    kind: str          #: 'register' or 'param'
    line: int
    col: int


class _Prog:
    """Everything static: statements, register widths, labels, parameters."""

    def __init__(self, text, entry=None, compile=None, target=None):
        """`compile(prog, instruction) -> _Step` compiles each statement (insns._compile);
        `target` the architecture the SFU forms and ptxas' contractions follow (None: the
        module's .target where ptxfp has its sequences, else ops.sfu.DEFAULT_TARGET)."""
        prog = read(text) if isinstance(text, str) else text
        self.prog = prog
        errs = name_errors(prog)
        if errs:                          # ptxas refuses the module: so does the interpreter
            line, col, msg = errs[0]
            m = re.fullmatch(r"Unknown symbol '(.*)'", msg)
            if m:                         # %h7 past .reg %h<4>: say the range it declares
                msg += range_hint(prog, m.group(1))
            more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
            raise InterpError(f"{msg}: ptxas rejects this{more}", line, col, rule="name")
        if prog.kind == "module":
            funcs = [f for f in prog.functions if f.has_body]
            if entry is not None:
                funcs = [f for f in funcs if f.name == entry]
                if not funcs:
                    names = _names(f.name for f in prog.functions if f.has_body) or "none"
                    raise InterpError(f"no function named '{entry}' with a body (have: {names})")
            else:
                entries = [f for f in funcs if f.kind == "entry"] or funcs
                if len(entries) != 1:
                    names = _names(f.name for f in entries) or "none"
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
        # a name defined in several blocks (nvcc's inline asm): each definition is also a
        # label 'name@line:col', and a bra takes the one of its own block or the nearest
        # around it (insns/control._scoped); the callees' too, which _expand inlines
        owner = self.function if self.function is not None else prog
        extra, self.label_defs = _block_labels(owner)
        for f in prog.functions if self.function is not None else ():
            if f is not owner:
                for name, defs in _block_labels(f)[1].items():
                    self.label_defs.setdefault(name, []).extend(defs)
        labels = {**labels, **extra}
        # the program as ptxas compiles it: mul + add/sub pairs fused (ptx/contract.py)
        self.target = _contract.run_target(target, prog.target)
        self.statements, self.fusions = _contract.apply(
            self.statements, labels=labels, target=self.target)
        # label -> index of the first statement after it (statements are in source order)
        self.labels = _label_index(self.statements, labels)
        # calls: each call site gets its own copy of the callee's body (see _expand)
        self.ctx = [None] * len(self.statements)        # statement -> _Ctx (inlined code)
        if self.function is not None and any(s.opcode == "call" for s in self.statements):
            self.statements, self.ctx, self.labels = _expand(prog, self.function,
                                                             self.statements, self.labels)
        self.labels_at = {}                             # index -> the labels there
        for name, idx in self.labels.items():
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
        # the module's .global/.const variables, laid out and initialized once
        self.modvars, self.gvar_size, self.const_size, self.initial = layout(prog)
        # the entry's registers keep their plain names: named before an inlined callee's
        named = [self.rename(s) if ctx is None or not ctx.prefix else None
                 for s, ctx in zip(self.statements, self.ctx)]
        self.steps = []
        with using_target(self.target):                 # a refusal names the run's target
            for s, r, ctx in zip(self.statements, named, self.ctx):
                self.cur = ctx                          # read by bra, ret and call
                self.steps.append(compile(self, r if r is not None else self.rename(s)))
        self.cur = None
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
        hit = self.modvars.get(name)
        if hit is not None:                             # a .global / .const variable
            d = self.prog.lookup(name, ins)
            if d is None or d.space in ("global", "const"):
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
        if isinstance(op, Addr):
            if not -(1 << 63) <= op.offset < (1 << 63):    # addresses are 64-bit: they wrap
                op = replace(op, offset=(op.offset + (1 << 63)) % (1 << 64) - (1 << 63))
            if op.base is None:
                return op
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
            if typ == "pred":
                raise InterpError(f"'{name}' is a special register, not a predicate: a guard "
                                  "(or a .pred operand) needs a .pred register", reg.line or line,
                                  reg.col or col)
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


def _block_labels(owner):
    """({'name@line:col': (line, col)}, {name: [(Scope, 'name@line:col')]}) of each label
    `owner` (a Function, or the Program of a snippet) defines in several blocks."""
    extra, defs = {}, {}
    for name, where in (getattr(owner, "label_defs", None) or {}).items():
        if len(where) > 1:
            defs[name] = []
            for line, col, scope in where:
                key = f"{name}@{line}:{col}"
                extra[key] = (line, col)
                defs[name].append((scope, key))
    return extra, defs


def _label_index(statements, labels):
    """label -> index of the first of `statements` after it (they are in source order)."""
    where = [(s.line, s.col) for s in statements]
    return {name: bisect_right(where, pos) for name, pos in labels.items()}


#: statements a program may grow to by inlining its calls
MAX_INLINED = 200_000


@dataclass(slots=True)
class _Ctx:
    """How a statement of inlined code is compiled: its labels are `prefix` + name; a `ret`
    jumps to the label `ret` (the end of this copy); a `call` statement is compiled as its
    'in' half (arguments into the callee's parameters) or its 'out' half (return values back),
    `callee` the Function called."""
    prefix: str = ""
    ret: str | None = None
    phase: str | None = None
    callee: object = None


def _expand(prog, fn, body, labels):
    """(statements, contexts, labels) with every call inlined: the call statement (its 'in'
    half), the callee's body (labels renamed per copy, ret a jump to the copy's end), the call
    statement again (its 'out' half, where the copy ends).  A recursive call, a call of a
    function that is not defined or has no body, and a program over MAX_INLINED statements
    stop with one line."""
    funcs = {f.name: f for f in prog.functions}
    out, ctxs, lab = [], [], {}
    copies = [0]

    def emit(stmts, labs, ctx, stack):
        index = {}
        for name, idx in labs.items():
            index.setdefault(idx, []).append(name)
        for i, s in enumerate(stmts):
            for name in index.get(i, ()):
                lab[ctx.prefix + name] = len(out)
            if len(out) > MAX_INLINED:
                raise InterpError(f"the program grows over {MAX_INLINED} statements as its "
                                  "calls are inlined", s.line, s.col, rule="call")
            if s.opcode != "call":
                out.append(s)
                ctxs.append(ctx if ctx.prefix or ctx.ret else None)
                continue
            callee = _callee(s, funcs)
            if callee.name in stack:
                raise InterpError(f"'call': '{callee.name}' calls itself (recursion is not "
                                  "modeled)", s.line, s.col, rule="call")
            copies[0] += 1
            pre = f"{callee.name}#{copies[0]}:"
            out.append(s)
            ctxs.append(_Ctx(ctx.prefix, ctx.ret, "in", callee))
            emit(callee.body, _label_index(callee.body, {**callee.labels,
                                                          **_block_labels(callee)[0]}),
                 _Ctx(pre, pre + "ret"), stack | {callee.name})
            lab[pre + "ret"] = len(out)
            out.append(s)
            ctxs.append(_Ctx(ctx.prefix, ctx.ret, "out", callee))
        for name in index.get(len(stmts), ()):
            lab[ctx.prefix + name] = len(out)

    emit(body, labels, _Ctx(), frozenset({fn.name}))
    return out, ctxs, lab


def _callee(s, funcs):
    """The Function a call statement names (checked: defined, with a body, called directly)."""
    ops = list(s.operands)
    if ops and isinstance(ops[0], Vec):
        ops = ops[1:]
    f = ops[0] if ops else None
    if not isinstance(f, Reg):
        raise InterpError("'call': expected a function name", s.line, s.col, rule="call")
    name = f.name
    if name.startswith("%") or len(ops) > 2:
        raise InterpError(f"'call': indirect calls (through '{name}' or a prototype) are not "
                          "modeled", f.line or s.line, f.col or s.col, rule="call")
    callee = funcs.get(name)
    if callee is None:
        raise InterpError(f"'call': no function named '{name}' in the module",
                          f.line or s.line, f.col or s.col, rule="call")
    if not callee.has_body:
        raise InterpError(f"'call': '{name}' is declared without a body (an extern function "
                          "cannot run)", f.line or s.line, f.col or s.col, rule="call")
    return callee


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
