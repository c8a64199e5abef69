"""The Numba plumbing every kernel module shares, in one place.

- ``jit_cached``: ``njit(cache=True)`` for a closure specialised by a key, under cache files of
  its own, keyed by ``SOURCE_KEY`` too;
- ``SOURCE_KEY``: a checksum of every module of the package that a kernel's machine code can
  contain (the kernel modules and everything they import from the package, found by reading
  their imports, ``kernel_modules``), so that a changed callee never runs stale machine code;
- the floating-point environment intrinsics (``fpenv_set``, ``fpenv_enter``, ``fpenv_leave``):
  kernels run in the IEEE default environment (or the mode a mixed form rounds in);
- ``split``: running a nogil kernel over an array in pieces on a thread pool.

Nothing here knows a form; kernels.py and cvt.py build their kernels with it.
"""

from __future__ import annotations

import ast
import os
import platform
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["jit_cached", "SOURCE_KEY", "kernel_modules", "KERNEL_ROOTS", "X86", "MXCSR_DEFAULT",
           "MXCSR_RC", "MXCSR_OE_UE", "fpenv_set", "fpenv_enter", "fpenv_leave", "split",
           "threads", "PARALLEL_MIN", "CHUNKS_PER_THREAD", "PIECE_MIN"]

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the package root
_PACKAGE = __name__.split(".", 1)[0]             # 'ptxfp'

#: the modules that define cached kernels: their package imports are followed from here
KERNEL_ROOTS = ("ops.kernels", "ops.cvt", "ops.f32", "ops.minmax", "core._jit")


def _module_path(name: str) -> str | None:
    """The source file of package module ``name`` ('rounding', 'ptx.check'), or None."""
    base = os.path.join(_HERE, *name.split("."))
    for p in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(p):
            return p
    return None


def _package_imports(name: str, path: str) -> set[str]:
    """The package modules ``name`` imports (at module level or inside functions)."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read())
    pkg = name.split(".")[:-1] if not path.endswith("__init__.py") else name.split(".")
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                mod = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith(_PACKAGE + "."):
                mod = node.module[len(_PACKAGE) + 1:]
            else:
                continue
            subs = [f"{mod}.{a.name}" if mod else a.name for a in node.names]
            found = [c for c in subs if _module_path(c) is not None]
            # ``from . import a, b`` of submodules takes nothing from the package itself
            if len(found) < len(subs) and mod and _module_path(mod) is not None:
                out.add(mod)
            out.update(found)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(_PACKAGE + "."):
                    cand = a.name[len(_PACKAGE) + 1:]
                    if _module_path(cand) is not None:
                        out.add(cand)
    return out


def kernel_modules(roots: tuple[str, ...] = KERNEL_ROOTS) -> list[str]:
    """Every package module reachable by imports from ``roots``, sorted: what the machine code
    of a cached kernel may contain."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        path = _module_path(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        todo.extend(_package_imports(name, path) - seen)
    # a module's parent packages run when it is imported: their __init__ files are keyed too
    seen |= {".".join(n.split(".")[:i]) for n in seen for i in range(1, n.count(".") + 1)}
    return sorted(seen)


def _source_key() -> int:
    key = 0
    for name in kernel_modules():
        path = _module_path(name)
        assert path is not None
        with open(path, "rb") as f:
            key = zlib.crc32(name.encode() + b"\0" + f.read(), key)
    return key


#: checksum of every module a kernel's machine code may contain
SOURCE_KEY = _source_key()


def jit_cached(py_func: Callable[..., Any], key: object, **options: Any) -> Any:
    """``njit(cache=True)`` for a closure specialised by ``key``, under cache files of its own.

    Numba names a closure's cache files after its ``__qualname__`` and numbers the machine-code
    files of one index "first unused number": two processes compiling two specialisations of one
    closure at the same time can both take number N, and an index entry then points at the other
    form's code (silently wrong bits).  A qualname per specialisation gives each its own index
    and data files; two processes compiling the same one write the same code.  The qualname
    carries ``SOURCE_KEY`` too: Numba's own check sees only the file that defines the kernel,
    not the callees inlined into it.
    """
    tag = "%08x" % (zlib.crc32(repr((key, SOURCE_KEY)).encode()) & 0xFFFFFFFF)
    py_func.__qualname__ = f"{py_func.__qualname__}_{tag}"
    py_func.__name__ = f"{py_func.__name__}_{tag}"
    return njit(cache=True, **options)(py_func)


# --- the floating-point environment ----------------------------------------------------------

X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
#: MXCSR of the IEEE default environment: round to nearest, no FTZ/DAZ, exceptions masked.
MXCSR_DEFAULT = 0x1F80
#: MXCSR rounding-control field (bits 13-14) of each rounding mode (rounding.RN, RZ, RM, RP).
MXCSR_RC = {0: 0, 1: 3, 2: 1, 3: 2}
#: MXCSR sticky flags of overflow (OE) and underflow (UE, set only for a tiny inexact result
#: while underflow is masked): which the fast lane's bf16 fma reads per block.
MXCSR_OE_UE = 0x18


def _mxcsr_call(builder: Any, name: str, slot: Any) -> None:
    i8p = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p]),
                                        name)
    builder.call(fn, [builder.bitcast(slot, i8p)])


@intrinsic
def fpenv_set(typingctx: Any, csr: Any) -> Any:
    """Load ``csr`` into the thread's SSE control register; return the old value (with the
    exception flags raised since the last load).

    An empty inline-assembly statement that clobbers memory comes first, so that the compiler
    keeps the computations and stores written before the call before it: their flags are
    then in the value returned."""
    if not isinstance(csr, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        slot = cgutils.alloca_once(builder, ir.IntType(32))
        if not X86:
            return ir.Constant(ir.IntType(32), 0)
        fence = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), "", "~{memory}",
                             side_effect=True)
        builder.call(fence, [])
        _mxcsr_call(builder, "llvm.x86.sse.stmxcsr", slot)
        saved = builder.load(slot)
        v = args[0]
        if v.type.width != 32:
            v = builder.trunc(v, ir.IntType(32))
        builder.store(v, slot)
        _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)
        return saved
    return types.int32(csr), codegen


@intrinsic
def prefetch(typingctx: Any, arr: Any, i: Any) -> Any:
    """Ask the hardware to bring the cache line holding ``arr[i]`` (1-D, contiguous) into the
    cache ahead of its use (``llvm.prefetch``, a read, kept in every level).  A hint only: it
    changes no value and never faults, so ``i`` may lie past either end of the array (the
    address is formed with plain integer arithmetic, never dereferenced)."""
    if not (isinstance(arr, types.Array) and isinstance(i, types.Integer)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        i64 = ir.IntType(64)
        idx = args[1]
        idx = builder.sext(idx, i64) if idx.type.width < 64 else idx
        off = builder.mul(idx, ir.Constant(i64, context.get_abi_sizeof(
            context.get_data_type(aty.dtype))))
        addr = builder.add(builder.ptrtoint(ary.data, i64), off)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        builder.call(fn, [builder.inttoptr(addr, i8p), ir.Constant(i32, 0),
                          ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.none(arr, i), codegen


@njit
def fpenv_enter() -> Any:
    """Put the thread's SSE control register in the default environment; return the old one.

    TwoSum needs round-to-nearest, and the hardware conversions of bf16/f32 subnormals need
    DAZ off; a library built with -ffast-math (or torch.set_flush_denormal) may have changed
    either in this thread.
    """
    return fpenv_set(np.int32(MXCSR_DEFAULT))


@intrinsic
def fpenv_leave(typingctx: Any, saved: Any) -> Any:
    """Restore the control register saved by fpenv_enter."""
    if not isinstance(saved, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        if X86:
            slot = cgutils.alloca_once(builder, ir.IntType(32))
            builder.store(args[0], slot)
            _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)
        return context.get_dummy_value()
    return types.none(saved), codegen


# --- threads -----------------------------------------------------------------------------------

#: Arrays of at least this many lanes are split over threads (the kernels release the GIL).
#: Below it, waking a worker (about 45 us here, more when its core has gone idle) costs more
#: than it saves (see docs/performance.md, "All cores").  This is the float64 lane's threshold.
PARALLEL_MIN = 1 << 19
#: Most pieces per thread when splitting: many, so that the last piece (the time one thread
#: may wait for the other) is short, and a thread slowed by another process on its core holds
#: back one piece, not half the array (pieces are taken from a shared queue).
CHUNKS_PER_THREAD = 16
#: Fewest lanes in a piece (each piece costs a few microseconds to hand out).
PIECE_MIN = 1 << 16

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def threads() -> int:
    """The threads to split over: ``PTXFP_NUM_THREADS``, else the CPUs this process may use."""
    n = os.environ.get("PTXFP_NUM_THREADS")
    if n:
        return max(1, int(n))
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def split(call: Callable[[int, int], Any], n: int) -> None:
    """Run ``call(start, stop)`` over [0, n): on the calling thread below PARALLEL_MIN,
    otherwise in pieces shared between the calling thread and the pool (nogil kernels)."""
    global _pool, _pool_size
    if n < PARALLEL_MIN:                 # before threads(): its system call costs more
        call(0, n)                       # than a small call's work
        return
    nt = threads()
    if nt <= 1:
        call(0, n)
        return
    if _pool is None or _pool_size < nt - 1:
        with _lock:
            if _pool is None or _pool_size < nt - 1:
                _pool = ThreadPoolExecutor(max_workers=nt - 1, thread_name_prefix="ptxfp")
                _pool_size = nt - 1
    pool = _pool
    pieces = min(nt * CHUNKS_PER_THREAD, max(nt, n // PIECE_MIN))
    step = ((-(-n // pieces)) + 63) & ~63
    bounds = [(s, min(n, s + step)) for s in range(0, n, step)]
    # The calling thread works too: it takes pieces from the same queue as the workers.
    it = iter(bounds)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                piece = next(it, None)
            if piece is None:
                return
            call(piece[0], piece[1])

    futures = [pool.submit(work) for _ in range(min(nt - 1, len(bounds) - 1))]
    work()
    for f in futures:
        f.result()
