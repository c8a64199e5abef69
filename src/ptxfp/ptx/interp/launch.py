"""The launch: checks and stages the inputs (registers, parameters, memory, grid and block),
prepares the program, runs the scheduler and returns the registers and memory
(:func:`run`, :func:`run_detailed`, :func:`prepare`, :func:`inputs_needed`)."""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import OperandError, shorten
from ...limits import check_bytes, guarded, paused_gc
from .base import WIDTH, _DTYPE, _mask, _to_le
from .insns import _compile
from ...ops.sfu import using_target
from ..contract import HIDDEN, run_target
from .insns.cluster import launch_rules as cluster_rules
from .program import _Prog, _scan_reads
from ..reader import read
from .schedule import MAX_STEPS, MAX_WORK, _execute_steps
from .state import GLOBAL_VARS, SHARED_LIMIT, _Geometry, _State


#: bytes of memory reading and compiling takes per character of program text (a 50 MB
#: straight-line module measured, issue #29), weighed before reading starts
TEXT_BYTES = 80

#: key of the memory after the run in run()'s result
MEMORY_KEY = "__memory__"


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
    target: str = ""                       #: the architecture the SFU forms ran for
    notes: list = field(default_factory=list)  #: one line each: fused pairs, assumed SFU models


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


@guarded("run")
def prepare(text, *, entry=None, target=None):
    """Read and compile `text` once: the result can be given to :func:`run`,
    :func:`run_detailed` and :func:`inputs_needed` in place of the text.  Its ``types`` maps
    each register to its declared or inferred type; ``target`` is the architecture its SFU
    forms and contractions follow (``run``'s ``target=``)."""
    if isinstance(text, _Prog):
        if target is not None and run_target(target, None) != text.target:
            raise OperandError(f"target={target!r}: this program was prepared for "
                               f"{text.target} (prepare it with target=)")
        return text
    if not isinstance(text, str) and not hasattr(text, "kind"):
        kind = type(text).__name__
        raise OperandError(f"the program must be PTX text (a str), got {kind}"
                           + (" (decode it first: text.decode())"
                              if isinstance(text, (bytes, bytearray)) else ""))
    if isinstance(text, str):
        _looks_like_a_path(text)
        check_bytes(len(text) * TEXT_BYTES, "the program text", f"({len(text)} characters)",
                    f" to read and compile it (about {TEXT_BYTES} bytes a character)")
    with paused_gc():
        parsed = read(text) if isinstance(text, str) else text
        if entry is not None and parsed.kind != "module":
            raise OperandError(f"entry={shorten(entry)!r}: the text is a snippet (it has no "
                               ".entry); entry= picks a function of a module, leave it out")
        return _Prog(parsed, entry, _compile, target)


def _looks_like_a_path(text):
    """One word ending in .ptx (or naming a file that exists) is a file name, not PTX."""
    word = text.strip()
    if not word or len(word) > 4096 or any(c in word for c in " \t\n;{}"):
        return
    import os
    if word.endswith(".ptx") or os.path.isfile(word):
        raise OperandError(f"{shorten(word)!r} looks like a file name: run() takes PTX text; "
                           f"read the file first: ptxfp.run(open({shorten(word)!r}).read(), ...)")


def inputs_needed(text, *, entry=None):
    """The registers and entry parameters `text` reads before writing them, in the order they
    are first read: ``{name: InputInfo(name, type, width, kind, line, col)}``."""
    return _needed(prepare(text, entry=entry))


def _memory(memory):
    if memory is None:
        return None
    if isinstance(memory, (bytes, bytearray, memoryview)):
        mv = memoryview(memory).cast("B") if isinstance(memory, memoryview) else memory
        check_bytes(len(mv), "memory", f"({len(mv)} bytes)", " for its copy")
        return _below_windows(np.frombuffer(mv, np.uint8))
    if isinstance(memory, (str, numbers.Number)):
        raise OperandError("memory must be bytes or a uint8 array, got "
                           f"{type(memory).__name__}")
    arr = np.asarray(memory)
    if arr.dtype != np.uint8:
        raise OperandError(f"memory must be bytes or a uint8 array, got {arr.dtype}")
    check_bytes(arr.size, "memory", f"({arr.size} bytes)", " for its copy")
    return _below_windows(arr.reshape(-1))


def _below_windows(arr):
    """memory= (the state copies it): it must end below the generic windows."""
    if arr.size > GLOBAL_VARS:
        raise OperandError(f"memory of {arr.size} bytes: at most {GLOBAL_VARS} bytes (the "
                           f"generic address space's windows start at {GLOBAL_VARS:#x})")
    return arr


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
                 max_steps: int = MAX_STEPS, max_work: int = MAX_WORK,
                 target: str | None = None) -> RunResult:
    """Like :func:`run`, returning a :class:`RunResult` (registers, their types, memory, the
    target, notes)."""
    with paused_gc():             # reading, compiling and running make no cycles worth a pass
        return _run_detailed(text, inputs, memory, threads, entry, grid, block, shared_bytes,
                             max_steps, max_work, target)


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


def _launch_rules(prog, geom):
    """The block shape the entry's .reqntid / .maxntid allow, and the grid its
    .reqnctapercluster / .maxclusterrank allow, as the driver checks them at launch
    (.minnctapersm and .maxnreg only guide ptxas: the register count the driver checks is
    ptxas' result, at most .maxnreg, so they refuse no launch here)."""
    fn = prog.function
    rules = getattr(fn, "launch", None) if fn is not None else None
    if not rules:
        return
    b = geom.block
    req = rules.get("reqntid")
    if req is not None:
        want = tuple(req[0]) + (1,) * (3 - len(req[0]))
        if tuple(b) != want[:3]:
            raise OperandError(f"block={tuple(b)} breaks '{fn.name}''s .reqntid "
                               f"{', '.join(map(str, req[0]))} (line {req[1]}): the driver "
                               f"refuses the launch; launch with block={want[:3]}")
    cl = rules.get("reqnctapercluster")
    if cl is not None:
        dims = tuple(cl[0]) + (1,) * (3 - len(cl[0]))
        if any(g % c for g, c in zip(geom.grid, dims)):
            raise OperandError(f"grid={tuple(geom.grid)} is not a whole number of "
                               f"'{fn.name}''s clusters (.reqnctapercluster "
                               f"{', '.join(map(str, cl[0]))}, line {cl[1]}): the driver "
                               "refuses the launch")
        rank = rules.get("maxclusterrank")
        if rank is not None and dims[0] * dims[1] * dims[2] > rank[0][0]:
            raise OperandError(f"'{fn.name}''s clusters of {dims[0] * dims[1] * dims[2]} "
                               f"blocks are over its .maxclusterrank {rank[0][0]} (line "
                               f"{rank[1]}): the driver refuses the launch")
    mx = rules.get("maxntid")
    if mx is not None:
        cap = 1
        for k in mx[0]:
            cap *= k
        if geom.bsize > cap:
            raise OperandError(f"block={tuple(b)} has {geom.bsize} threads, over "
                               f"'{fn.name}''s .maxntid {', '.join(map(str, mx[0]))} "
                               f"(line {mx[1]}: at most {cap}): the driver refuses the launch")
    cluster_rules(prog)                  # larger clusters: only where the kernel needs one


def _mma_target(target):
    """target= of run: a target whose tensor-core numerics ptxfp.tensor knows ('sm_80',
    'sm_90a' ...), or None (the module's .target)."""
    if target is None:
        return None
    if not isinstance(target, str):
        raise OperandError(f"target={target!r}: expected a target name such as 'sm_80'")
    try:
        from ...tensor.params import target_family
    except ImportError:                                # a tree without ptxfp.tensor
        return target
    try:
        target_family(target)
    except ValueError as e:
        from ...ops.sfu import TARGETS as SFU_TARGETS      # the SFU's sequences know it:
        base = re.sub(r"[af]$", "", target.strip().lower())  # mma stops at its instruction
        if base in SFU_TARGETS:
            return target
        raise OperandError(f"target={target!r}: {str(e).split(': ', 1)[-1]}") from None
    return target


def _run_detailed(text, inputs, memory, threads, entry, grid=None, block=None,
                  shared_bytes=0, max_steps=MAX_STEPS, max_work=MAX_WORK, target=None):
    target_mma = _mma_target(target)
    prog = prepare(text, entry=entry, target=target)
    for what, v in (("max_steps", max_steps), ("max_work", max_work)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise OperandError(f"{what}={v!r}: expected an int >= 1")
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
            if isinstance(value, (bytes, bytearray, memoryview)):
                raw = bytes(value)                   # a struct or a tensor map: its bytes
                if len(raw) != size:
                    raise OperandError(f"input '{name}': {len(raw)} bytes for the {size}-byte "
                                       "parameter")
                staged[name] = ("param-bytes", np.frombuffer(raw, np.uint8), size)
                continue
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
        if kind == "param-bytes":
            ready[name] = ("param", np.broadcast_to(bits, (n, extra)), None)
            continue
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
    _launch_rules(prog, geom)
    st = _State(prog, n, ready, _memory(memory), geom, int(shared_bytes))
    st.mma_target = target_mma
    with using_target(prog.target):
        _execute_steps(prog, st, n, int(max_steps), int(max_work))
    regs, seen = {}, set()
    for k, v in st.regs.items():                   # registers that share an array (mov) get
        if k.startswith(HIDDEN):                   # the contraction's own registers
            continue
        regs[k] = v.copy() if id(v) in seen else v    # their own, as the caller may change it
        seen.add(id(v))
    return RunResult(registers=regs, types=dict(st.types), memory=st.mem, threads=n,
                     declared={k: d.type for k, d in prog.decl_of.items()},
                     read_as=prog.read_as, steps=st.steps,
                     thread_instructions=st.thread_instructions, target=prog.target,
                     notes=run_notes(prog))


def run_notes(prog) -> list[str]:
    """One line per pair ptxas fuses and per SFU form whose primitive is assumed on the
    target ("line 7: ex2.approx.f32: ex2: measured on sm_75 (ptx-math); assumed on sm_90";
    ops/sfu/measured.py)."""
    from ...ops.sfu import assumed, note
    out = [f.note() for f in prog.fusions]
    seen = set()
    for s in prog.statements:
        sp = s.opcode_spelling
        if sp in seen or s.opcode not in _SFU_OPCODES or not s.text:   # not the rewrite's
            continue
        seen.add(sp)
        if assumed(sp, prog.target):
            out.append(f"line {s.line}: {sp}: {note(sp, prog.target)}")
    return out


_SFU_OPCODES = frozenset(("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh", "div"))


def run(text: str, inputs: Mapping[str, ArrayLike] | None = None, *,
        memory: bytes | NDArray[np.uint8] | None = None, threads: int | None = None,
        entry: str | None = None, grid: Dims | None = None, block: Dims | None = None,
        shared_bytes: int = 0, max_steps: int = MAX_STEPS,
        max_work: int = MAX_WORK, target: str | None = None) -> dict[str, NDArray[Any]]:
    """Execute PTX over many threads; return ``{register name: bits array}``.

    ``text``: a snippet (instructions, optional ``.reg`` lines) or a module (the one ``.entry``
    is run, or the function named by ``entry``).  ``inputs``: ``{name: int or 1-D int array}``
    for registers (``'%f1'`` or ``'f1'``) and entry parameters; one value per thread, arrays and
    scalars broadcast.  ``memory``: bytes or a uint8 array, the flat little-endian memory that
    ``ld``/``st`` address; the memory after the run comes back under ``'__memory__'``.
    ``max_steps`` (instructions, each counted once for its group of threads) and ``max_work``
    (thread-instructions: each counted for every thread that runs it) stop a run that does
    not end, with :class:`StepLimit`; the defaults stop any runaway launch within seconds.
    ``target``: the architecture ('sm_90') whose numerics the run follows: the tensor cores
    (``mma.sync``; default the module's ``.target``; give it for a module whose ``.target``,
    sm_86 say, has no tensor-core model of its own), the SFU forms (``ex2.approx.f32`` ...) and
    ptxas' contractions (default the module's .target where ptxfp has its sequences, else
    sm_75).  A mul feeding an add/sub is fused as ptxas fuses it (policy ``contract``).
    See docs/interpreter.md for what is modeled.
    """
    r = run_detailed(text, inputs, memory=memory, threads=threads, entry=entry, grid=grid,
                     block=block, shared_bytes=shared_bytes, max_steps=max_steps,
                     max_work=max_work, target=target)
    out = dict(r.registers)
    if r.memory is not None:
        out[MEMORY_KEY] = r.memory
    return out
