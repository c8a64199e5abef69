"""``ptxfp.triton.launch``: compile a ``@triton.jit`` kernel with Triton for a target and run
its PTX with :func:`ptxfp.run` over NumPy arrays / torch CPU tensors.

What a launch does, as Triton's CUDA launcher does it on a GPU:

- **Arguments.** Arrays (``numpy.ndarray``, torch CPU tensors) are pointers: each is laid out
  in one flat global memory at a 256-byte aligned address (a CUDA allocation's alignment; a
  view keeps its offset from the start of its base array, mod 256), so Triton's pointer
  specialisation (``tt.divisibility`` 16 when the address is a multiple of 16) sees what it
  would see for the same tensors on a GPU.  Python ints and floats are scalars, specialised
  by Triton's own binder (``create_function_from_signature``): an int is ``i32`` when it fits,
  else ``i64``/``u64``, the int 1 becomes a constant, a multiple of 16 gets the divisibility
  hint; a float is ``fp32``.  Scalars are packed as Triton's launcher (driver.c) packs them:
  ``fp32`` the double rounded to float, ``fp16`` rounded to half, ``bf16`` the float's top 16
  bits (truncated), ``fp64`` as is.
- **Compiling.** ``triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32),
  options=...)`` with Triton's option parsing (``num_warps``, ``num_stages`` and any other
  option a Triton launch takes).  What ``compile`` takes is computed here from public pieces
  only (no private ``JITFunction`` method, so it survives Triton versions): the binder's types
  and specialisations of ``kernel.arg_names``, the backend's ``parse_options`` and
  ``parse_attr``.  The launch parameters are laid onto the compiled ``.entry``'s own
  parameter list: the non-constexpr arguments in order, each checked against its PTX width,
  then the scratch pointers on the parameters the entry declares after them.  The PTX is cached per (kernel source, specialisation,
  options, target) in this process (Triton also caches on disk).
- **Running.** ``grid`` is an int, a tuple, or a function of the arguments (Triton's
  ``lambda meta: (...)``); the block is ``num_warps * 32`` threads; dynamic shared memory is
  the compiled metadata's ``shared``; the global and profile scratch pointers Triton appends
  point at ``grid * size`` zeroed bytes when the kernel asks for any, else are 0.
- **Results.** The bytes of every array argument after the run are copied back into it (in
  place, as a GPU writes into its tensors); :class:`TritonRun` has the PTX and counts.
"""

from __future__ import annotations

import numbers
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import OperandError, PtxfpError
from ..ptx.interp import prepare, run_detailed
from ..ptx.interp.schedule import MAX_STEPS


#: the target a launch compiles for when none is named
DEFAULT_TARGET = "sm_80"

#: what to install when Triton is missing
INSTALL_HINT = "pip install 'ptxfp[triton]'"

#: a CUDA allocation's alignment: where each array starts (mod its view's offset)
ALIGN = 256


class TritonMissing(PtxfpError, ImportError):
    """Triton is not installed (``pip install 'ptxfp[triton]'``)."""


def _triton():
    """The Triton modules a launch needs, imported on first use."""
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource, make_backend
        from triton.runtime.jit import JITFunction, create_function_from_signature
    except ImportError as e:
        raise TritonMissing(f"ptxfp.triton needs Triton: {INSTALL_HINT} ({e})") from None
    return triton, GPUTarget, ASTSource, make_backend, JITFunction, create_function_from_signature


@dataclass
class Compiled:
    """One compiled specialisation of a kernel."""
    ptx: str                       #: the PTX Triton wrote
    name: str                      #: the entry's name
    target: str                    #: 'sm_80' ...
    num_warps: int
    shared: int                    #: bytes of dynamic shared memory a block (metadata.shared)
    signature: dict                #: parameter -> Triton type ('*fp16', 'i32', 'constexpr' ...)
    constexprs: dict               #: constant parameters (by path) and their values
    attrs: dict                    #: Triton's specialisation attributes (tt.divisibility ...)
    global_scratch: tuple          #: (bytes a program, alignment) of the global scratch
    profile_scratch: tuple         #: (bytes a program, alignment) of the profile scratch
    metadata: Any = field(default=None, repr=False)
    _prog: Any = field(default=None, repr=False)     #: the PTX read and compiled once

    def program(self) -> Any:
        """The PTX prepared for ptxfp.run (read and compiled at the first launch)."""
        if self._prog is None:
            self._prog = prepare(self.ptx, entry=self.name)
        return self._prog


@dataclass
class TritonRun:
    """What :func:`launch` returns: the arguments (the arrays now hold what the kernel wrote),
    the compiled kernel, and the interpreter's counts."""
    args: tuple                    #: the arguments as given (arrays updated in place)
    compiled: Compiled
    grid: tuple                    #: (x, y, z)
    block: int                     #: threads a program (num_warps * 32)
    steps: int                     #: instructions executed (each counted once a group)
    thread_instructions: int       #: the sum over them of the threads that ran each
    memory: np.ndarray = field(repr=False, default=None)   #: the flat global memory after

    @property
    def ptx(self) -> str:
        return self.compiled.ptx


# --- arguments --------------------------------------------------------------------------------

def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "data_ptr")


#: torch dtypes NumPy has no name for: viewed as bytes of the same width (Triton's name is kept)
_TORCH_RAW = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8",
              "float8_e4m3fnuz": "uint8", "float8_e5m2fnuz": "uint8"}


class _Buffer:
    """An array argument: its bytes (a writable uint8 view of the span it covers), the element
    type's name as Triton reads it, and where it sits in the launch's memory."""

    def __init__(self, arg, what):
        self.arg = arg
        if _is_torch(arg):
            if str(arg.device) != "cpu":
                raise OperandError(f"{what}: a torch tensor on {arg.device}; ptxfp.triton runs "
                                   "CPU tensors (move it with .cpu())")
            tname = str(arg.dtype).split(".")[-1]
            raw = _TORCH_RAW.get(tname)
            if raw is not None:
                import torch
                arr = arg.detach().view(getattr(torch, raw)).numpy()
            else:
                arr = arg.detach().numpy()
            self.dtype = tname
        else:
            arr = arg
            self.dtype = arr.dtype.name
        if arr.dtype.kind not in "biufV" and arr.dtype.name not in _TORCH_RAW:
            raise OperandError(f"{what}: an array of {arr.dtype} cannot be a kernel pointer")
        if any(s < 0 for s in arr.strides):
            raise OperandError(f"{what}: negative strides {arr.strides}: pass a copy "
                               "(np.ascontiguousarray)")
        size = arr.itemsize
        if arr.size:
            size += sum((n - 1) * s for n, s in zip(arr.shape, arr.strides))
        # a byte view of the span [first element, last element + itemsize)
        flat = np.lib.stride_tricks.as_strided(arr, shape=(size // arr.itemsize,) if
                                               size % arr.itemsize == 0 else (0,),
                                               strides=(arr.itemsize,))
        if size % arr.itemsize:
            raise OperandError(f"{what}: strides {arr.strides} are not multiples of the "
                               f"element size {arr.itemsize}")
        self.bytes = flat.view(np.uint8) if flat.size else np.zeros(0, np.uint8)
        self.writeable = bool(arr.flags.writeable)
        root = arr
        while isinstance(getattr(root, "base", None), np.ndarray):
            root = root.base
        self.skew = (_addr(arr) - _addr(root)) % ALIGN if root is not arr else 0
        self.addr = 0


def _addr(a):
    return a.__array_interface__["data"][0]


class _Ptr:
    """What Triton's binder sees of an array: data_ptr() and dtype (as torch spells it)."""
    __slots__ = ("_p", "dtype")

    def __init__(self, p, dtype):
        self._p, self.dtype = p, dtype

    def data_ptr(self):
        return self._p


def _plain(x):
    """NumPy scalars as the Python int/float/bool a Triton launch takes."""
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


# --- compiling --------------------------------------------------------------------------------

_CACHE: dict = {}
_LOCK = threading.Lock()
_BACKENDS: dict = {}


def _cc(target):
    m = re.fullmatch(r"sm_(\d+)([af]?)", str(target))
    if not m:
        raise OperandError(f"target={target!r}: expected 'sm_80', 'sm_90a', 'sm_100a' ...")
    return int(m.group(1))


def _backend(target):
    hit = _BACKENDS.get(target)
    if hit is None:
        _, GPUTarget, _, make_backend, _, _ = _triton()
        gt = GPUTarget("cuda", _cc(target), 32)
        hit = _BACKENDS[target] = (gt, make_backend(gt))
    return hit


def _binder(kernel, target):
    key = ("binder", id(kernel), target)
    hit = _CACHE.get(key)
    if hit is None:
        *_, create = _triton()
        _, backend = _backend(target)
        hit = _CACHE[key] = (kernel, create(kernel.signature, kernel.params, backend))
    return hit[1]


def _check_kernel(kernel):
    JITFunction = _triton()[4]
    if not isinstance(kernel, JITFunction):
        raise OperandError(f"kernel: expected a @triton.jit function, got "
                           f"{type(kernel).__name__} (an @triton.autotune / heuristics wrapper: "
                           "pass its .fn)")


def _paths(values, pred, path=()):
    """The index paths (tuples) of the leaves of nested lists / tuples `values` that satisfy
    `pred`, in order (a tuple argument's members are leaves one level down)."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (list, tuple)):
            out += _paths(v, pred, (*path, i))
        elif pred(v):
            out.append((*path, i))
    return out


def _at(values, path):
    for i in path:
        values = values[i]
    return values


def _compile_args(kernel, backend, opts, bound, spec):
    """What ``triton.compile`` takes for this specialisation, from public information: the
    backend's ``parse_options`` over the launch options, the signature (each parameter of
    ``kernel.arg_names`` with the type the binder gave it), the constexpr values (by path) and
    the backend's ``parse_attr`` of each other parameter's specialisation ('D' divisible by
    16 ...)."""
    names = list(kernel.arg_names)
    for k in ("device_type", "device", "stream"):
        if k in opts:
            raise OperandError(f"{kernel.fn.__name__}: the {k}= option is not taken (the "
                               "target is target=)")
    options = backend.parse_options(dict(opts))
    for k in opts:
        if k not in options.__dict__ and k not in names:
            raise OperandError(f"{kernel.fn.__name__}: keyword argument '{k}' is neither a "
                               "parameter of the kernel nor a Triton option")
    types = [s[0] for s in spec]
    signature = dict(zip(names, types))
    values = list(bound.values())
    constexprs = {path: _at(values, path)
                  for path in _paths(types, lambda t: isinstance(t, str) and t == "constexpr")}
    attrvals = ["" if s[0] == "constexpr" else s[1] for s in spec]
    attrs = {path: backend.parse_attr(_at(attrvals, path))
             for path in _paths(attrvals, lambda a: isinstance(a, str))}
    return options, signature, constexprs, attrs


def _specialise(kernel, target, args, kwargs):
    """Triton's binder over the arguments: (bound arguments, options, signature, constexprs,
    attrs, the cache key)."""
    _, backend = _backend(target)
    binder = _binder(kernel, target)
    try:
        bound, spec, opts = binder(*args, **kwargs)
    except TypeError as e:
        raise OperandError(f"{kernel.fn.__name__}: {e}") from None
    options, signature, constexprs, attrs = _compile_args(kernel, backend, opts, bound, spec)
    key = (kernel.cache_key, target, str(spec), str(options))
    return bound, options, signature, constexprs, attrs, key


def _compile(kernel, target, options, signature, constexprs, attrs, key):
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    triton, _, ASTSource, _, _, _ = _triton()
    gt, _ = _backend(target)
    src = ASTSource(fn=kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=gt, options=options.__dict__)
    md = k.metadata
    out = Compiled(ptx=k.asm["ptx"], name=md.name, target=target, num_warps=md.num_warps,
                   shared=int(md.shared), signature=dict(signature),
                   constexprs=dict(constexprs), attrs=dict(attrs),
                   global_scratch=(int(getattr(md, "global_scratch_size", 0) or 0),
                                   int(getattr(md, "global_scratch_align", 1) or 1)),
                   profile_scratch=(int(getattr(md, "profile_scratch_size", 0) or 0),
                                    int(getattr(md, "profile_scratch_align", 1) or 1)),
                   metadata=md)
    if getattr(md, "num_ctas", 1) != 1:
        raise OperandError(f"{out.name}: num_ctas={md.num_ctas} (thread-block clusters) is "
                           "not run by ptxfp.triton")
    with _LOCK:
        _CACHE[key] = out
    return out


# --- scalars as bits --------------------------------------------------------------------------

def _scalar_bits(value, ty, name):
    """A scalar argument as the bits Triton's launcher passes for type `ty`."""
    if ty in ("fp32", "f32"):
        return int(np.float32(value).view(np.uint32))
    if ty == "fp64":
        return int(np.float64(value).view(np.uint64))
    if ty == "fp16":
        return int(np.float16(value).view(np.uint16))
    if ty == "bf16":                   # driver.c extractBF16: (float)x, then the top 16 bits
        return int(np.float32(value).view(np.uint32)) >> 16
    m = re.fullmatch(r"([iu])(\d+)", ty)
    if m:
        w = int(m.group(2))
        if not isinstance(value, numbers.Integral):
            raise OperandError(f"argument '{name}': {ty} takes an int, got {value!r}")
        return int(value) & ((1 << w) - 1)
    raise OperandError(f"argument '{name}': Triton type {ty!r} is not run by ptxfp.triton")


# --- the launch -------------------------------------------------------------------------------

def _grid(grid, bound):
    if callable(grid):
        grid = grid(dict(bound))
    if isinstance(grid, numbers.Integral):
        grid = (int(grid),)
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise OperandError(f"grid={grid!r}: expected 1 to 3 dimensions")
    return grid + (1,) * (3 - len(grid))


def launch(kernel: Any, grid: Any, *args: Any, target: str = DEFAULT_TARGET,
           num_warps: int = 4, num_stages: int = 3, max_steps: int | None = None,
           **kwargs: Any) -> TritonRun:
    """Run ``kernel[grid](*args, **kwargs)`` as Triton's code for ``target`` runs on that GPU.

    ``args``: NumPy arrays / torch CPU tensors for pointer parameters (written back in place),
    Python ints / floats / bools for scalars; ``kwargs``: the kernel's constexprs and other
    parameters by name, and Triton launch options (``enable_fp_fusion`` ...).  ``grid``: an int,
    a tuple, or a function of the arguments by name.  ``max_steps``: the interpreter's step
    limit (default: enough for the grid, 10**6 instructions a program)."""
    _check_kernel(kernel)
    names = list(kernel.arg_names)
    # the arguments by position in the kernel's parameter list (kwargs that are parameters too)
    given = list(args)
    for k in list(kwargs):
        if k in names:
            i = names.index(k)
            if i < len(given):
                raise OperandError(f"{kernel.fn.__name__}: argument '{k}' given twice")
    bufs: list = []

    def wrap(x, what):
        x = _plain(x)
        if isinstance(x, np.ndarray) or _is_torch(x):
            b = _Buffer(x, what)
            bufs.append(b)
            return b
        if isinstance(x, (list, tuple)) and any(isinstance(v, np.ndarray) or _is_torch(v)
                                                for v in x):
            raise OperandError(f"{what}: tuples of tensors are not run by ptxfp.triton")
        return x

    wrapped = [wrap(a, f"argument '{names[i]}'" if i < len(names) else f"argument {i}")
               for i, a in enumerate(given)]
    kw = {k: wrap(v, f"argument '{k}'") if k in names else v for k, v in kwargs.items()}
    # lay the arrays out: each at a 256-byte boundary (plus its view's skew), from 256 up
    at = ALIGN
    for b in bufs:
        b.addr = at + b.skew
        at = -(-(b.addr + b.bytes.size) // ALIGN) * ALIGN + ALIGN
    originals = {}

    def proxy(x):
        if not isinstance(x, _Buffer):
            return x
        p = _Ptr(x.addr, x.dtype)
        originals[id(p)] = x.arg
        return p
    bound, options, signature, constexprs, attrs, key = _specialise(
        kernel, target, [proxy(x) for x in wrapped],
        {k: proxy(v) for k, v in kw.items()} | {"num_warps": num_warps,
                                                 "num_stages": num_stages})
    comp = _compile(kernel, target, options, signature, constexprs, attrs, key)
    g = _grid(grid, {k: originals.get(id(v), v) for k, v in bound.items()})
    nprog = g[0] * g[1] * g[2]
    # scratch buffers Triton's launcher allocates (grid * size bytes each), else null
    scratch = []
    for size, align in (comp.global_scratch, comp.profile_scratch):
        if size > 0:
            a = max(align, ALIGN)
            start = -(-at // a) * a
            scratch.append(start)
            at = start + nprog * size
        else:
            scratch.append(0)
    mem = np.zeros(at, np.uint8)
    for b in bufs:
        mem[b.addr:b.addr + b.bytes.size] = b.bytes
    # parameters: the non-constexpr arguments in signature order, then the scratch pointers,
    # laid onto the .entry's parameter list (its names, count and widths)
    values = []
    for name, ty in comp.signature.items():
        if ty == "constexpr":
            continue
        v = bound[name]
        if not isinstance(ty, str):
            raise OperandError(f"argument '{name}': Triton type {ty!r} is not run by "
                               "ptxfp.triton")
        if ty.startswith("*"):
            bits = v.data_ptr() if isinstance(v, _Ptr) else (0 if v is None else None)
            if bits is None:
                raise OperandError(f"argument '{name}': a pointer parameter ({ty}) takes an "
                                   f"array, got {type(v).__name__}")
        else:
            bits = _scalar_bits(v, ty, name)
        values.append((name, ty, bits))
    params = _pack(comp, values, scratch)
    block = 32 * comp.num_warps
    steps = max_steps if max_steps is not None else max(MAX_STEPS, 10**6 * nprog)
    r = run_detailed(comp.program(), params, memory=mem, grid=g, block=block,
                     shared_bytes=comp.shared, max_steps=steps)
    out = r.memory
    for b in bufs:
        new = out[b.addr:b.addr + b.bytes.size]
        if b.bytes.size and not np.array_equal(new, b.bytes):
            if not b.writeable:
                raise OperandError("the kernel wrote into a read-only array argument")
            b.bytes[...] = new
    return TritonRun(args=tuple(args), compiled=comp, grid=g, block=block, steps=r.steps,
                     thread_instructions=r.thread_instructions, memory=out)


#: bits of a Triton scalar type (pointers: 64)
_TY_BITS = {"fp16": 16, "bf16": 16, "fp32": 32, "f32": 32, "fp64": 64}


def _entry_params(comp):
    """The .entry's parameters in order: (name, PTX type), read once per compiled kernel."""
    hit = getattr(comp, "_entry", None)
    if hit is None:
        fn = comp.program().function
        hit = comp._entry = [(p.name, p.type) for p in fn.params]
    return hit


def _pack(comp, values, scratch):
    """Parameter name -> bits: the arguments (name, Triton type, bits) onto the first .entry
    parameters, each checked against its PTX width, then Triton's scratch pointers (global,
    then profile) onto as many parameters as the entry declares after them."""
    entry = _entry_params(comp)
    if len(entry) < len(values) or len(entry) > len(values) + len(scratch):
        raise OperandError(f"{comp.name}: the .entry declares {len(entry)} parameters for "
                           f"{len(values)} non-constexpr arguments (and {len(scratch)} scratch "
                           "pointers): Triton's calling convention is not the one ptxfp knows")
    out = {}
    for (pname, ptype), (name, ty, bits) in zip(entry, values):
        m = re.fullmatch(r"[iu](\d+)", ty)
        want = 64 if ty.startswith("*") else int(m.group(1)) if m else _TY_BITS.get(ty)
        have = int(re.sub(r"\D", "", ptype) or 0)
        if want is not None and max(want, 8) != have and not (want == 1 and have in (8, 32)):
            raise OperandError(f"argument '{name}' ({ty}) meets .entry parameter {pname} "
                               f"(.{ptype}): Triton's calling convention is not the one "
                               "ptxfp knows")
        out[pname] = bits
    for (pname, _), s in zip(entry[len(values):], scratch):
        out[pname] = s
    return out


def compile_kernel(kernel: Any, *args: Any, target: str = DEFAULT_TARGET, num_warps: int = 4,
                   num_stages: int = 3, **kwargs: Any) -> Compiled:
    """The :class:`Compiled` kernel (PTX, shared memory, signature) :func:`launch` would run
    for these arguments, without running it."""
    _check_kernel(kernel)
    bufs = []
    at = ALIGN

    def proxy(x):
        nonlocal at
        x = _plain(x)
        if isinstance(x, np.ndarray) or _is_torch(x):
            b = _Buffer(x, "argument")
            p = _Ptr(at + b.skew, b.dtype)
            at = -(-(at + b.skew + b.bytes.size) // ALIGN) * ALIGN + ALIGN
            bufs.append(b)
            return p
        return x
    names = set(kernel.arg_names)
    _, options, signature, constexprs, attrs, key = _specialise(
        kernel, target, [proxy(a) for a in args],
        {k: proxy(v) if k in names else v for k, v in kwargs.items()}
        | {"num_warps": num_warps, "num_stages": num_stages})
    return _compile(kernel, target, options, signature, constexprs, attrs, key)


class _Runner:
    def __init__(self, kernel, defaults):
        self.kernel, self.defaults = kernel, defaults

    def __getitem__(self, grid) -> Callable[..., TritonRun]:
        def go(*args: Any, **kwargs: Any) -> TritonRun:
            return launch(self.kernel, grid, *args, **(self.defaults | kwargs))
        return go


def jit_runner(kernel: Any, **defaults: Any) -> _Runner:
    """``jit_runner(kernel)[grid](*args, **kwargs)``: :func:`launch` in Triton's
    ``kernel[grid](...)`` spelling; ``defaults`` (``target=``, ``num_warps=`` ...) apply to
    every launch."""
    _check_kernel(kernel)
    return _Runner(kernel, defaults)
