"""The scalar lane kernel, written once, and its array drivers.

``lane`` computes one lane of any form: decode (with .ftz on inputs), exact operation
(arith.py), one rounding (rounding.py), NVIDIA's rules (nvidia.py).  A form's constants (opcode,
formats, rounding mode, modifiers, policy) are frozen into a Numba closure per form, so LLVM sees
straight-line code for exactly that form and can vectorize it; the compiled machine code is
cached on disk, keyed by those constants.
"""

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from . import nvidia
from .arith import add_odd, decode, zero_sign_fix
from .formats import BF16, F16, F32
from .rounding import RM, round_pack

OP_ADD, OP_SUB, OP_MUL, OP_FMA = 0, 1, 2, 3
OPCODES = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "fma": OP_FMA}

#: code -> (EBITS, MBITS, P, EMIN, EMAX, WIDTH, ONE)
_FMT = {f.code: (f.exp_bits, f.man_bits, f.precision, f.emin, f.emax, f.width, f.one)
        for f in (F16, BF16, F32)}


@njit(inline="always", cache=True)
def lane(a, b, c, OP, MIXED, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE, mode, ftz, tiny_before,
         sat, relu, oob, sat_mz, relu_mz, oob_sign, oob_c, nan_bits):
    """One lane: a and b in the (AE, AM) format, c in (CE, CM), result in (P, EMIN, EMAX).

    The mixed add/sub (``MIXED``) take their second operand from c (``add.f32.f16 d, a, c``).
    """
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
        r = zero_sign_fix(add_odd(u, v), u, v, mode == RM)
    mag, sign, is_nan = round_pack(r, P, EMIN, EMAX, mode, ftz and tiny_before)
    bits = nvidia.finish(mag, sign, is_nan, P, WIDTH, ONE, ftz and not tiny_before,
                         sat, relu, sat_mz, relu_mz, nan_bits)
    if oob:
        hit = nvidia.is_oob(a, oob_sign) | nvidia.is_oob(b, oob_sign)
        if oob_c:
            hit = hit | nvidia.is_oob(c, oob_sign)
        bits = 0 if hit else bits
    return bits


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
    tiny_before: bool
    sat_mz: bool
    relu_mz: bool
    oob_sign: bool
    oob_c: bool
    nan_bits: int


def _build(spec):
    OP, mode = spec.op, spec.mode
    MIXED = spec.c_fmt != spec.lane_fmt
    AE, AM = _FMT[spec.lane_fmt][:2]
    CE, CM = _FMT[spec.c_fmt][:2]
    _, _, P, EMIN, EMAX, WIDTH, ONE = _FMT[spec.res_fmt]
    ftz, tiny_before, sat, relu, oob = spec.ftz, spec.tiny_before, spec.sat, spec.relu, spec.oob
    sat_mz, relu_mz, oob_sign, oob_c = spec.sat_mz, spec.relu_mz, spec.oob_sign, spec.oob_c
    nan_bits = spec.nan_bits

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, out, start, stop):
        # Slicing first lets the loop index start at 0, so LLVM drops Numba's negative-index
        # wraparound and the loads become plain vector loads instead of gathers.
        a = a[start:stop]
        b = b[start:stop]
        c = c[start:stop]
        o = out[start:stop]
        for i in range(o.size):
            o[i] = lane(a[i], b[i], c[i], OP, MIXED, AE, AM, CE, CM, P, EMIN, EMAX, WIDTH, ONE,
                        mode, ftz, tiny_before, sat, relu, oob, sat_mz, relu_mz, oob_sign,
                        oob_c, nan_bits)

    return kernel


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
                    k = _kernels[one] = _build(one)
                _kernels[spec] = k
    return k


#: Arrays at least this long are split over threads (the kernels release the GIL).
PARALLEL_MIN = 1 << 18
_pool = None


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
    global _pool
    k = kernel_for(spec)
    res = out
    if spec.lanes == 2:
        a, b, c = _lanes16(a), _lanes16(b), _lanes16(c)
        out = out.view(np.uint16) if _LITTLE else np.empty(2 * out.size, np.uint16)
    n = out.size
    nt = _threads()
    if n < PARALLEL_MIN or nt <= 1:
        k(a, b, c, out, 0, n)
    else:
        if _pool is None:
            with _lock:
                if _pool is None:
                    _pool = ThreadPoolExecutor(max_workers=nt, thread_name_prefix="ptxfp")
        step = -(-n // nt)
        step = (step + 63) & ~63
        futures = [_pool.submit(k, a, b, c, out, s, min(n, s + step)) for s in range(0, n, step)]
        for f in futures:
            f.result()
    if spec.lanes == 2 and not _LITTLE:
        pairs = out.reshape(-1, 2).astype(np.uint32)
        res[...] = pairs[:, 0] | (pairs[:, 1] << 16)
    return res


@njit(cache=True, nogil=True)
def _round_array(x, out, P, EMIN, EMAX, WIDTH, nan_bits):
    for i in range(x.size):
        mag, sign, is_nan = round_pack(x[i], P, EMIN, EMAX, 0, False)
        out[i] = nan_bits if is_nan else ((sign << (WIDTH - 1)) | mag)


def round_f64_array(x, fmt_code, nan_bits=0x7FFF):
    """Round float64 values to a format with round-to-nearest-even (used by formats.to_bits)."""
    _, _, P, EMIN, EMAX, WIDTH, _ = _FMT[fmt_code]
    out = np.empty(x.size, np.uint16 if WIDTH == 16 else np.uint32)
    _round_array(np.ascontiguousarray(x, dtype=np.float64), out, P, EMIN, EMAX, WIDTH, nan_bits)
    return out
