"""The scalar lane kernel, written once, and its array drivers.

``lane`` computes one lane of any form: decode (with .ftz on inputs), exact operation
(arith.py), one rounding (rounding.py), NVIDIA's rules (nvidia.py).  A form's constants (opcode,
formats, rounding mode, modifiers, policy) are frozen into a Numba closure per form, so LLVM sees
straight-line code for exactly that form and can vectorize it; the compiled machine code is
cached on disk, keyed by those constants.  Packed forms run through the same kernel as arrays
of 16-bit lanes; large arrays are split over a thread pool.  Speed: docs/performance.md.
"""

import os
import platform
import sys
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import nvidia
from ._bitcast import bits_from_f32
from .arith import (HAVE_F16C, add_odd, add_odd32, decode, decode32, fma32, fma_bf16_odd32,
                    zero_sign_fix, zero_sign_fix32)
from .formats import BF16, F16, F32
from .rounding import RM, RN, RP, RZ, TINY_AFTER, round_pack, round_pack32

OP_ADD, OP_SUB, OP_MUL, OP_FMA = 0, 1, 2, 3
OPCODES = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "fma": OP_FMA}

#: code -> (EBITS, MBITS, P, EMIN, EMAX, WIDTH, ONE)
_FMT = {f.code: (f.exp_bits, f.man_bits, f.precision, f.emin, f.emax, f.width, f.one)
        for f in (F16, BF16, F32)}

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
#: MXCSR of the IEEE default environment: round to nearest, no FTZ/DAZ, exceptions masked.
_MXCSR_DEFAULT = 0x1F80


def _mxcsr_call(builder, name, slot):
    i8p = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p]),
                                        name)
    builder.call(fn, [builder.bitcast(slot, i8p)])


#: MXCSR rounding-control field (bits 13-14) of each rounding mode.
_MXCSR_RC = {RN: 0, RZ: 3, RM: 1, RP: 2}

#: MXCSR sticky flags of overflow (OE) and underflow (UE, set only for a tiny inexact result
#: while underflow is masked): which the fast lane's bf16 fma reads per block.
_MXCSR_OE_UE = 0x18


@intrinsic
def _fpenv_set(typingctx, csr):
    """Load ``csr`` into the thread's SSE control register; return the old value (with the
    exception flags raised since the last load).

    An empty inline-assembly statement that clobbers memory comes first, so that the compiler
    keeps the computations and stores written before the call before it: their flags are
    then in the value returned."""
    if not isinstance(csr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once(builder, ir.IntType(32))
        if not _X86:
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


@njit
def _fpenv_enter():
    """Put the thread's SSE control register in the default environment; return the old one.

    TwoSum needs round-to-nearest, and the hardware conversions of bf16/f32 subnormals need
    DAZ off; a library built with -ffast-math (or torch.set_flush_denormal) may have changed
    either in this thread.
    """
    return _fpenv_set(np.int32(_MXCSR_DEFAULT))


@intrinsic
def _fpenv_leave(typingctx, saved):
    """Restore the control register saved by _fpenv_enter."""
    if not isinstance(saved, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        if _X86:
            slot = cgutils.alloca_once(builder, ir.IntType(32))
            builder.store(args[0], slot)
            _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)
        return context.get_dummy_value()
    return types.none(saved), codegen


def jit_cached(py_func, key, **options):
    """``njit(cache=True)`` for a closure specialised by ``key``, under cache files of its own.

    Numba names a closure's cache files after its ``__qualname__`` and numbers the machine-code
    files of one index "first unused number": two processes compiling two specialisations of one
    closure at the same time can both take number N, and an index entry then points at the other
    form's code (silently wrong bits).  A qualname per specialisation gives each its own index
    and data files; two processes compiling the same one write the same code.
    """
    tag = "%08x" % (zlib.crc32(repr(key).encode()) & 0xFFFFFFFF)
    py_func.__qualname__ = f"{py_func.__qualname__}_{tag}"
    py_func.__name__ = f"{py_func.__name__}_{tag}"
    return njit(cache=True, **options)(py_func)


def _make_lane(SOURCE_KEY):
    """The lane function, specialised per form by the kernels that call it (LLVM inlines it
    and its callees into each kernel's cached machine code)."""

    def lane(a, b, c, OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz,
             tininess, sat, relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits):
        """One lane: a and b in the (AE, AM) format, c in (CE, CM), result in (P, EMIN, EMAX).
        ``tininess`` is the .ftz reading of policy.ftz_tininess (rounding.TINY_*).

        The mixed add/sub (``MIXED``) take their second operand from c (``add.f32.f16 d, a, c``).
        ``EXACT`` says that the float64 sum u + v is always exact (see _sum_is_exact), so that it
        is its own round-to-odd proxy.
        """
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return np.int64(0)
        x = decode(a, AE, AM, ftz)
        z = decode(c, CE, CM, ftz) if (OP == OP_FMA or MIXED) else 0.0
        y = decode(b, AE, AM, ftz) if not (MIXED and OP != OP_FMA) else z
        if OP == OP_MUL:
            r = x * y                      # exact: at most 22 significant bits
            u = x
            v = y
        else:
            if OP == OP_FMA:
                u = x * y                  # exact product
                v = z
            elif OP == OP_ADD:
                u = x
                v = y
            else:
                u = x
                v = -y
            r = zero_sign_fix(u + v if EXACT else add_odd(u, v), u, v, mode == RM)
        flush = tininess if ftz else TINY_AFTER
        mag, sign, is_nan = round_pack(r, P, EMIN, EMAX, mode, flush)
        bits = nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, ftz and tininess == TINY_AFTER,
                             sat, relu, sat_mz, relu_mz, nan_bits)
        if oob:
            hit = nvidia.is_oob(a, oob_sign) | nvidia.is_oob(b, oob_sign)
            if oob_c:
                hit = hit | nvidia.is_oob(c, oob_sign)
            bits = 0 if hit else bits
        return bits

    # Not disk-cached itself: its code is linked into each cached kernel, and a cached function
    # with several signatures shares one index between them (see jit_cached).
    return njit(lane)


def _make_lane32(SOURCE_KEY):
    """The fast lane: ``lane`` computed at binary32 where that is provably the same single
    rounding (docs/semantics.md, "Fast lane"; used for the forms ``fast_ok`` admits).

    - mixed .f32 forms: the result is one IEEE binary32 add/sub/fma of exact binary32 operands,
      so the hardware operation, run with the FP environment's rounding control set to the
      form's mode (``_fpenv_set``), is the correctly rounded result;
    - f16 and bf16 add/sub/mul (.rn only): the binary32 result rounded to nearest again is the
      correctly rounded one (products are exact; a sum of two p-bit numbers rounded first to
      24 >= 2p + 2 bits rounds to nearest innocuously, Figueroa 1995);
    - f16 fma (.rn only): the exact product plus c, rounded to odd at binary32 (TwoSum);
    - bf16 fma (any mode): the product plus c rounded to odd at binary32, with the product
      scaled by a power of two where it may leave binary32's range (``arith.fma_bf16_odd32``),
      branch-free, so every input takes the same vector path.
    Every rounding to the 16-bit result is ``rounding.round_pack32``.
    """

    def lane32(a, b, c, OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode, ftz, tininess,
               sat, relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits, WIDE):
        """One lane, as ``lane``.  bf16 fma: ``WIDE`` takes ``arith.fma_bf16_odd32`` (any
        input); without it the plain binary32 sum (kernel32 checks the flags)."""
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return np.int64(0)
        if MIXED:
            x = decode32(a, AE, AM, False)
            z = decode32(c, CE, CM, False)
            if OP == OP_FMA:
                v = fma32(x, decode32(b, AE, AM, False), z)
            elif OP == OP_ADD:
                v = x + z
            else:
                v = x - z
            vb = bits_from_f32(v)
            sign = (vb >> 31) & 1
            mag = vb & 0x7FFFFFFF
            is_nan = mag > 0x7F800000
        else:
            flush = tininess if ftz else TINY_AFTER
            x = decode32(a, AE, AM, ftz)
            y = decode32(b, AE, AM, ftz)
            if OP == OP_FMA and AE == 8 and WIDE:
                # bf16 products can leave binary32's range: scaled where they may.
                v = fma_bf16_odd32(x, y, decode32(c, CE, CM, ftz), mode == RM)
            elif OP == OP_FMA:
                # exact for f16; for bf16 unless the flags say otherwise (kernel32)
                p32 = x * y
                z32 = decode32(c, CE, CM, ftz)
                v = zero_sign_fix32(add_odd32(p32, z32), p32, z32, mode == RM)
            elif OP == OP_MUL:
                v = x * y
            elif OP == OP_ADD:
                v = x + y
            else:
                v = x - y
            mag, sign, is_nan = round_pack32(v, AE, mode, flush)
        bits = nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, ftz and tininess == TINY_AFTER,
                             sat, relu, sat_mz, relu_mz, nan_bits)
        if oob:
            hit = nvidia.is_oob(a, oob_sign) | nvidia.is_oob(b, oob_sign)
            if oob_c:
                hit = hit | nvidia.is_oob(c, oob_sign)
            bits = 0 if hit else bits
        return bits

    return njit(lane32, inline="always")


@dataclass(frozen=True)
class Spec:
    """Everything that selects one compiled kernel."""
    op: int
    lane_fmt: int       # format code of a and b lanes
    c_fmt: int          # format code of c (f32 for the mixed forms)
    res_fmt: int        # format code of the result lanes
    lanes: int          # 1, or 2 for .f16x2/.bf16x2
    mode: int
    ftz: bool
    sat: bool
    relu: bool
    oob: bool
    tininess: int       # .ftz tininess reading, rounding.TINY_* (policy.ftz_tininess)
    sat_mz: bool
    relu_mz: bool
    oob_sign: bool
    oob_c: bool
    nan_bits: int


def _sum_is_exact(op, mixed, lane_fmt):
    """Is every float64 sum the form makes exact?  For add/sub of two numbers of one format,
    both are multiples of the smallest subnormal 2**(EMIN-P+1) below 2**(EMAX+1), so the sum
    spans at most EMAX + 2 - (EMIN - P + 1) bits: 41 for f16, which float64 holds (not so for
    bf16, nor for the products of fma, nor for the mixed forms' f32 operand)."""
    if op not in (OP_ADD, OP_SUB) or mixed:
        return False
    _, _, P, EMIN, EMAX, _, _ = _FMT[lane_fmt]
    return EMAX + 2 - (EMIN - P + 1) <= 53


def _source_key():
    """A checksum of the modules inlined into the kernels.

    Numba's disk cache notices a change of kernels.py only; the lane's callees (decode, the
    rounding core, NVIDIA's rules) are inlined into each kernel's machine code, so a changed
    callee must change the key of the cached kernels too: the kernels capture this value."""
    key = 0
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("arith.py", "rounding.py", "nvidia.py", "_bitcast.py", "formats.py",
                 "kernels.py"):
        try:
            with open(os.path.join(here, name), "rb") as f:
                key = zlib.crc32(f.read(), key)
        except OSError:
            pass
    return key


_SOURCE_KEY = _source_key()
lane = _make_lane(_SOURCE_KEY)
lane32 = _make_lane32(_SOURCE_KEY)

#: Use the binary32 fast lane where it applies (``PTXFP_REFERENCE=1`` turns it off: every
#: form then runs the float64 lane; same bits, tests compare the two).
FAST = os.environ.get("PTXFP_REFERENCE", "") in ("", "0")


def fast_ok(spec):
    """Does ``lane32`` compute ``spec``'s form (see _make_lane32 for why each one may)?

    It needs the x86 SSE control register (the mixed forms' rounding mode) and F16C (f16).
    """
    if not (_X86 and HAVE_F16C):
        return False
    if spec.c_fmt != spec.lane_fmt:                      # mixed .f32 forms: every mode
        return True
    if spec.lane_fmt == BF16.code and spec.op == OP_FMA:  # bf16 fma: every mode
        return True
    return spec.mode == RN and spec.lane_fmt in (F16.code, BF16.code)


def lane_args(spec):
    """The constants ``lane`` takes after (a, b, c) for the form of ``spec``, in order."""
    MIXED = spec.c_fmt != spec.lane_fmt
    AE, AM = _FMT[spec.lane_fmt][:2]
    CE, CM = _FMT[spec.c_fmt][:2]
    _, _, P, EMIN, EMAX, WIDTH, ONE = _FMT[spec.res_fmt]
    return (spec.op, MIXED, _sum_is_exact(spec.op, MIXED, spec.lane_fmt), AE, AM, CE, CM, P,
            EMIN, EMAX, WIDTH, ONE, spec.mode, spec.ftz, spec.tininess, spec.sat, spec.relu,
            spec.oob, spec.sat_mz, spec.relu_mz, spec.oob_sign, spec.oob_c, spec.nan_bits)


def _lane32_args(spec):
    """The constants ``lane32`` takes after (a, b, c)."""
    (OP, MIXED, _, AE, AM, CE, CM, P, _, _, WIDTH, ONE, mode, *rest) = lane_args(spec)
    return (OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode, *rest)


def _build(spec):
    K = lane_args(spec)
    SOURCE_KEY = _SOURCE_KEY

    def kernel(a, b, c, out, start, stop):
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return
        # Slicing first lets the loop index start at 0, so LLVM drops Numba's negative-index
        # wraparound and the loads become plain vector loads instead of gathers.
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        # Unpacked by name, not passed as ``*K``: with ``*K`` Numba hands ``lane`` run-time
        # values, and the loop (not specialised to the form's constants) ran 20x slower.
        (OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tininess, sat,
         relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits) = K
        env = _fpenv_enter()
        for i in range(o.size):
            o[i] = lane(a[i], b[i], c[i], OP, MIXED, EXACT, AE, AM, CE, CM, P, EMIN, EMAX,
                        WIDTH, ONE, mode, ftz, tininess, sat, relu, oob, sat_mz, relu_mz,
                        oob_sign, oob_c, nan_bits)
        _fpenv_leave(env)

    return jit_cached(kernel, (spec, SOURCE_KEY), nogil=True)


def _build32(spec):
    """The kernel of ``spec`` on the fast lane (``fast_ok(spec)`` must hold)."""
    K = _lane32_args(spec)
    SOURCE_KEY = _SOURCE_KEY
    MIXED = spec.c_fmt != spec.lane_fmt
    # Only the mixed forms round in the environment's mode; the others need round-to-nearest.
    CSR = _MXCSR_DEFAULT | (_MXCSR_RC[spec.mode] << 13 if MIXED else 0)
    BLOCKS = spec.op == OP_FMA and not MIXED and spec.lane_fmt == BF16.code
    BLOCK = 1024
    WIDE_RUN = 15

    def kernel32(a, b, c, out, start, stop):
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        # Unpacked by name: see _build.
        (OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode, ftz, tininess, sat, relu, oob, sat_mz,
         relu_mz, oob_sign, oob_c, nan_bits) = K
        env = _fpenv_set(np.int32(CSR))
        if not BLOCKS:
            for i in range(o.size):
                o[i] = lane32(a[i], b[i], c[i], OP, MIXED, AE, AM, CE, CM, P, WIDTH, ONE, mode,
                              ftz, tininess, sat, relu, oob, sat_mz, relu_mz, oob_sign, oob_c,
                              nan_bits, False)
        else:
            # bf16 fma, by blocks of BLOCK lanes.  The plain binary32 pass is exact unless a
            # product is tiny and inexact or overflows, or a sum overflows; exactly those raise
            # the hardware's sticky underflow/overflow flags, and nothing else in the pass can
            # (TwoSum's steps are exact, the rest is integer work).  A block that raised one is
            # recomputed on the scaled lane (right on any input, about half as fast), and so
            # are the next WIDE_RUN blocks without trying the plain pass first: inputs that
            # leave binary32's range (random bits) are usually spread over the whole array.
            wide_run = 0
            for s in range(0, o.size, BLOCK):
                n = min(BLOCK, o.size - s)
                ab = a[s:s + n]
                bb = b[s:s + n]
                cb = c[s:s + n]
                ob = o[s:s + n]
                redo = wide_run > 0
                if not redo:
                    _fpenv_set(np.int32(CSR))              # clears the flags
                    for i in range(n):
                        ob[i] = lane32(ab[i], bb[i], cb[i], OP, MIXED, AE, AM, CE, CM, P, WIDTH,
                                       ONE, mode, ftz, tininess, sat, relu, oob, sat_mz,
                                       relu_mz, oob_sign, oob_c, nan_bits, False)
                    if _fpenv_set(np.int32(CSR)) & _MXCSR_OE_UE:
                        redo = True
                        wide_run = WIDE_RUN + 1
                if redo:
                    wide_run -= 1
                    for i in range(n):
                        ob[i] = lane32(ab[i], bb[i], cb[i], OP, MIXED, AE, AM, CE, CM, P, WIDTH,
                                       ONE, mode, ftz, tininess, sat, relu, oob, sat_mz,
                                       relu_mz, oob_sign, oob_c, nan_bits, True)
        _fpenv_leave(env)

    return jit_cached(kernel32, ("lane32", spec, SOURCE_KEY), nogil=True)


_kernels = {}
_lock = threading.Lock()
_LITTLE = sys.byteorder == "little"


def kernel_for(spec):
    """The compiled kernel of ``spec`` (built once per process, machine code cached on disk).

    Packed and scalar forms share one kernel: a packed operand is run as its array of 16-bit
    lanes (see ``run``).
    """
    k = _kernels.get(spec)
    if k is None:
        with _lock:
            k = _kernels.get(spec)
            if k is None:
                one = replace(spec, lanes=1)
                k = _kernels.get(one)
                if k is None:
                    fast = FAST and fast_ok(one)
                    k = _kernels[one] = _build32(one) if fast else _build(one)
                    if fast:
                        light = one.op != OP_FMA and one.c_fmt == one.lane_fmt
                        _parallel_min[one] = PARALLEL_MIN_LIGHT if light else PARALLEL_MIN_FAST
                _kernels[spec] = k
                _parallel_min[spec] = _parallel_min.get(one, PARALLEL_MIN)
    return k


#: Arrays of at least this many lanes are split over threads (the kernels release the GIL).
#: Below it, waking a worker (about 45 us here, more when its core has gone idle) costs more
#: than it saves (see docs/performance.md, "All cores").  This is the float64 lane's threshold.
PARALLEL_MIN = 1 << 19
#: The same for the fast lane's kernels, which do a million lanes in 0.2 to 0.5 ms: split at
#: 1M elements they ran 0.76x to 0.89x of one thread when calls alternate with other work.
PARALLEL_MIN_FAST = 1 << 22
#: The same for the lightest of them (add/sub/mul, ~10 G lanes/s in cache here, and bound by
#: memory bandwidth beyond it): split at 3M elements they ran 0.88x.
PARALLEL_MIN_LIGHT = 1 << 23
#: spec -> its threshold (PARALLEL_MIN unless set by kernel_for)
_parallel_min = {}
#: Most pieces per thread when splitting: many, so that the last piece (the time one thread
#: may wait for the other) is short, and a thread slowed by another process on its core holds
#: back one piece, not half the array (pieces are taken from a shared queue).
CHUNKS_PER_THREAD = 16
#: Fewest lanes in a piece (each piece costs a few microseconds to hand out).
PIECE_MIN = 1 << 16
_pool = None
_pool_size = 0


def _threads():
    n = os.environ.get("PTXFP_NUM_THREADS")
    if n:
        return max(1, int(n))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _lanes16(x):
    """A uint32 array of packed lanes as its uint16 lanes, lane 0 first, without a copy."""
    if _LITTLE:
        return x.view(np.uint16)
    return np.stack([x & 0xFFFF, x >> 16], axis=-1).astype(np.uint16).reshape(-1)


def run(spec, a, b, c, out):
    """Fill ``out`` (1-D) from the 1-D operand arrays with the kernel of ``spec``."""
    return run_with(kernel_for(spec), spec, a, b, c, out, out.size)


def run_with(k, spec, a, b, c, out, n):
    """``run`` with the kernel ``k`` of ``spec`` already looked up and ``n = out.size``."""
    if spec.lanes == 2:
        res = out
        a, b, c = _lanes16(a), _lanes16(b), _lanes16(c)
        out = out.view(np.uint16) if _LITTLE else np.empty(2 * n, np.uint16)
        n *= 2
    if n < PARALLEL_MIN or n < _parallel_min.get(spec, PARALLEL_MIN):
        k(a, b, c, out, 0, n)
    else:
        _run_parallel(k, a, b, c, out, n)
    if spec.lanes == 2:
        if not _LITTLE:
            pairs = out.reshape(-1, 2).astype(np.uint32)
            res[...] = pairs[:, 0] | (pairs[:, 1] << 16)
        return res
    return out


def _run_parallel(k, a, b, c, out, n):
    split(lambda start, stop: k(a, b, c, out, start, stop), n)


def split(call, n):
    """Run ``call(start, stop)`` over [0, n): on the calling thread below PARALLEL_MIN,
    otherwise in pieces shared between the calling thread and the pool (nogil kernels)."""
    global _pool, _pool_size
    nt = _threads()
    if nt <= 1 or n < PARALLEL_MIN:
        call(0, n)
        return
    if _pool is None or _pool_size < nt - 1:
        with _lock:
            if _pool is None or _pool_size < nt - 1:
                _pool = ThreadPoolExecutor(max_workers=nt - 1, thread_name_prefix="ptxfp")
                _pool_size = nt - 1
    pieces = min(nt * CHUNKS_PER_THREAD, max(nt, n // PIECE_MIN))
    step = ((-(-n // pieces)) + 63) & ~63
    bounds = [(s, min(n, s + step)) for s in range(0, n, step)]
    # The calling thread works too: it takes pieces from the same queue as the workers.
    it = iter(bounds)
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                piece = next(it, None)
            if piece is None:
                return
            call(piece[0], piece[1])

    futures = [_pool.submit(work) for _ in range(min(nt - 1, len(bounds) - 1))]
    work()
    for f in futures:
        f.result()


def _make_round_array(SOURCE_KEY):
    def round_array(x, out, P, EMIN, EMAX, WIDTH, nan_bits):
        if SOURCE_KEY < 0:                 # never true: keys the disk cache to the callees
            return
        env = _fpenv_enter()
        for i in range(x.size):
            mag, sign, is_nan = round_pack(x[i], P, EMIN, EMAX, RN, TINY_AFTER)
            out[i] = nan_bits if is_nan else ((sign << (WIDTH - 1)) | mag)
        _fpenv_leave(env)

    return jit_cached(round_array, ("round_array", SOURCE_KEY), nogil=True)


_round_array = _make_round_array(_SOURCE_KEY)


def round_f64_array(x, fmt_code, nan_bits=0x7FFF):
    """Round float64 values to a format with round-to-nearest-even (used by formats.to_bits)."""
    _, _, P, EMIN, EMAX, WIDTH, _ = _FMT[fmt_code]
    out = np.empty(x.size, np.uint16 if WIDTH == 16 else np.uint32)
    _round_array(np.ascontiguousarray(x, dtype=np.float64), out, P, EMIN, EMAX, WIDTH, nan_bits)
    return out
