"""An all-integer bf16 fma.rn lane (int32 lanes, no FP, no range split) against the fast
lane's kernel (kernels.kernel_for): bits compared on every lane, Ge/s of the kernel loop alone
on uniform bits, normal values and bench.py's hard mix.  Single thread, thread CPU time, best
of 7, 4M lanes (docs/performance.md, issue 30).

    PYTHONPATH=src python benchmarks/bf16_fma_int_probe.py [spelling]
    PYTHONPATH=src python benchmarks/bf16_fma_int_probe.py --check [spelling]   # 50M a distribution
"""

import dataclasses
import os
import sys
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ptxfp import parse
from ptxfp.ops import kernels
from ptxfp.ops.arith import _form

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

N = 1 << 22


@intrinsic
def clz32(typingctx, x):
    """Leading zero bits of the low 32 bits of an integer (32 for 0): one ``llvm.ctlz``."""
    if isinstance(x, types.Integer):
        def codegen(context, builder, signature, args):
            v = args[0]
            if x.bitwidth > 32:
                v = builder.trunc(v, ir.IntType(32))
            elif x.bitwidth < 32:
                v = builder.zext(v, ir.IntType(32))
            return builder.ctlz(v, ir.Constant(ir.IntType(1), 0))
        return types.int32(x), codegen
    return None


def _make_int_lane_bits(specials=True):
    @intrinsic
    def int_lane_bits(typingctx, a, b, c):
        """bf16 fma.rn(a, b, c) on int32 lanes, written as LLVM IR so that every operation stays
        32 bits wide (Numba widens int32 arithmetic to 64 bits): returns magnitude | sign << 15 |
        is_nan << 16 (the magnitude as round_pack32 gives it: 0x7F80 for an infinity)."""
        sig = types.int32(a, b, c)

        def codegen(context, bld, signature, args):
            i32 = ir.IntType(32)
            i1 = ir.IntType(1)

            def k(v):
                return ir.Constant(i32, v)

            def ext(v, t):
                return bld.zext(v, i32) if t.bitwidth < 32 else (
                    bld.trunc(v, i32) if t.bitwidth > 32 else v)

            def sel(cond, x, y):
                return bld.select(cond, x, y)

            def smax(x, y):
                return sel(bld.icmp_signed(">", x, y), x, y)

            def smin(x, y):
                return sel(bld.icmp_signed("<", x, y), x, y)

            def clz(x):
                return bld.ctlz(x, ir.Constant(i1, 0))

            def eq(x, y):
                return bld.icmp_signed("==", x, y)

            def ne(x, y):
                return bld.icmp_signed("!=", x, y)

            A, B, C = (ext(v, t) for v, t in zip(args, signature.args))
            sa = bld.and_(bld.lshr(A, k(15)), k(1))
            sb = bld.and_(bld.lshr(B, k(15)), k(1))
            sc = bld.and_(bld.lshr(C, k(15)), k(1))
            sp = bld.xor(sa, sb)
            ea = bld.and_(bld.lshr(A, k(7)), k(0xFF))
            eb = bld.and_(bld.lshr(B, k(7)), k(0xFF))
            ec = bld.and_(bld.lshr(C, k(7)), k(0xFF))
            fa = bld.and_(A, k(0x7F))
            fb = bld.and_(B, k(0x7F))
            fc = bld.and_(C, k(0x7F))
            ma = bld.or_(fa, sel(ne(ea, k(0)), k(0x80), k(0)))
            mb = bld.or_(fb, sel(ne(eb, k(0)), k(0x80), k(0)))
            mc = bld.or_(fc, sel(ne(ec, k(0)), k(0x80), k(0)))
            Ea = smax(ea, k(1))
            Eb = smax(eb, k(1))
            Ec = smax(ec, k(1))
            mp = bld.mul(ma, mb)
            lp = clz(mp)
            lc = clz(mc)
            MP = bld.shl(mp, bld.sub(lp, k(2)))          # leading bit at bit 29
            MC = bld.shl(mc, bld.sub(lc, k(2)))
            # exponent of the leading bit (of a zero: far below everything)
            tp = sel(eq(mp, k(0)), k(-4096), bld.sub(bld.add(Ea, Eb), bld.add(lp, k(237))))
            tc = sel(eq(mc, k(0)), k(-4096), bld.sub(Ec, bld.add(lc, k(103))))
            pbig = bld.icmp_signed(">=", tp, tc)
            big = sel(pbig, MP, MC)
            sml = sel(pbig, MC, MP)
            tb = sel(pbig, tp, tc)
            ts = sel(pbig, tc, tp)
            sbig = sel(pbig, sp, sc)
            d = smin(bld.sub(tb, ts), k(31))
            lost = bld.and_(sml, bld.sub(bld.shl(k(1), d), k(1)))
            al = bld.or_(bld.lshr(sml, d), bld.zext(ne(lost, k(0)), i32))
            R = sel(eq(sp, sc), bld.add(big, al), bld.sub(big, al))
            neg = bld.icmp_signed("<", R, k(0))
            R = sel(neg, bld.sub(k(0), R), R)
            sign = bld.xor(sbig, bld.zext(neg, i32))
            lz = clz(R)
            Rn = bld.shl(R, bld.sub(lz, k(1)))           # leading bit at bit 30
            Er = bld.sub(bld.add(tb, k(129)), lz)        # biased exponent of the leading bit
            Ef = smax(Er, k(1))
            sh = bld.add(k(23), bld.sub(Ef, Er))
            shc = smin(sh, k(31))
            q = bld.lshr(Rn, shc)
            half = bld.shl(k(1), bld.sub(shc, k(1)))
            rem = bld.and_(Rn, bld.sub(bld.shl(half, k(1)), k(1)))
            up = bld.or_(bld.icmp_unsigned(">", rem, half),
                         bld.and_(eq(rem, half), ne(bld.and_(q, k(1)), k(0))))
            mag = bld.add(bld.add(bld.shl(bld.sub(Ef, k(1)), k(7)), q), bld.zext(up, i32))
            mag = sel(bld.or_(bld.icmp_signed(">", sh, k(31)), eq(R, k(0))), k(0), mag)
            mag = smin(mag, k(0x7F80))
            sign = sel(eq(R, k(0)), bld.and_(sp, sc), sign)
            if not specials:      # a probe: what the arithmetic alone costs (not exact)
                return bld.or_(mag, bld.shl(sign, k(15)))
            # infinities and NaNs
            e255a, e255b, e255c = eq(ea, k(255)), eq(eb, k(255)), eq(ec, k(255))
            a_inf = bld.and_(e255a, eq(fa, k(0)))
            b_inf = bld.and_(e255b, eq(fb, k(0)))
            c_inf = bld.and_(e255c, eq(fc, k(0)))
            nan = bld.or_(bld.and_(e255a, ne(fa, k(0))), bld.and_(e255b, ne(fb, k(0))))
            nan = bld.or_(nan, bld.and_(e255c, ne(fc, k(0))))
            p_inf = bld.or_(a_inf, b_inf)
            nan = bld.or_(nan, bld.and_(a_inf, eq(mb, k(0))))
            nan = bld.or_(nan, bld.and_(b_inf, eq(ma, k(0))))
            nan = bld.or_(nan, bld.and_(bld.and_(p_inf, c_inf), ne(sp, sc)))
            inf = bld.or_(p_inf, c_inf)
            mag = sel(inf, k(0x7F80), mag)
            sign = sel(inf, sel(p_inf, sp, sc), sign)
            return bld.or_(bld.or_(mag, bld.shl(sign, k(15))), bld.shl(bld.zext(nan, i32), k(16)))

        return sig, codegen
    return int_lane_bits


int_lane_bits = _make_int_lane_bits()
int_lane_bits_core = _make_int_lane_bits(False)


@njit(inline="always")
def int_lane(a, b, c):
    """(magnitude bits, sign, is_nan) of bf16 fma.rn(a, b, c), as round_pack32 returns them."""
    r = int_lane_bits(a, b, c)
    return r & 0x7FFF, (r >> 15) & 1, (r >> 16) != 0


@njit(inline="always")
def core_lane(a, b, c):
    r = int_lane_bits_core(a, b, c)
    return r & 0x7FFF, (r >> 15) & 1, False


def int_kernel(K, lane=int_lane):
    finish = kernels._finish

    @njit(nogil=True)
    def run(a, b, c, o):
        for i in range(o.size):
            mag, sign, is_nan = lane(a[i], b[i], c[i])
            o[i] = finish(a[i], b[i], c[i], mag, sign, is_nan, K)
    return run


def rate(f, ops):
    o = np.empty(ops[0].size, np.uint16)
    f(*ops, o)
    best = 1e9
    for _ in range(7):
        t = time.thread_time()
        f(*ops, o)
        best = min(best, time.thread_time() - t)
    return ops[0].size / best / 1e9


def main(spelling="fma.rn.bf16"):
    spec = dataclasses.replace(_form(spelling).kernel()[0], lanes=1)
    K = tuple(kernels.lane_consts(spec))
    cur = kernels.kernel_for(spec)
    new = int_kernel(K)
    core = int_kernel(K, core_lane)

    def old(a, b, c, o):
        cur(a, b, c, o, 0, o.size)
    rng = np.random.default_rng(1)
    ins = parse(spelling)
    print(f"{spelling}; load average {os.getloadavg()[0]:.1f}; Ge/s, kernel loop only, {N} lanes")
    for d in ("uniform", "normal", "hard"):
        ops = [np.asarray(x).astype(np.uint16) for x in bench.dist_operands(ins, N, rng, d)]
        o1 = np.empty(N, np.uint16)
        o2 = np.empty(N, np.uint16)
        old(*ops, o1)
        new(*ops, o2)
        bad = np.flatnonzero(o1 != o2)
        print(f"{d:8s} current {rate(old, ops):5.2f}  int {rate(new, ops):5.2f}  "
              f"differ {bad.size}  (arithmetic alone, not exact: {rate(core, ops):5.2f})", flush=True)
        for i in bad[:5]:
            print(f"   a={ops[0][i]:04x} b={ops[1][i]:04x} c={ops[2][i]:04x} "
                  f"cur={o1[i]:04x} int={o2[i]:04x}")


#: special bf16 values: zeros, the smallest and largest subnormals, normals at the edges of
#: the range, infinities, NaNs (quiet, signalling, 0x7FFF, negative)
SPECIALS = [0x0000, 0x0001, 0x007F, 0x0080, 0x0081, 0x3F80, 0x3F81, 0x3FFF, 0x7F7F, 0x7F7E,
            0x7F80, 0x7FC0, 0x7F81, 0x7FFF, 0x1F80, 0x2000, 0x5F80, 0x6000]
SPECIALS = SPECIALS + [x | 0x8000 for x in SPECIALS]


def check(spelling="fma.rn.bf16", total=50_000_000):
    """The integer lane against kernel_for's kernel on ``total`` triples of each distribution
    (4M at a time) and on every triple of SPECIALS: the number of differing lanes."""
    spec = dataclasses.replace(_form(spelling).kernel()[0], lanes=1)
    K = tuple(kernels.lane_consts(spec))
    cur = kernels.kernel_for(spec)
    new = int_kernel(K)
    rng = np.random.default_rng(2)
    ins = parse(spelling)
    sp = np.array(SPECIALS, np.uint16)
    g = np.meshgrid(sp, sp, sp, indexing="ij")
    trip = [x.reshape(-1).copy() for x in g]
    o1, o2 = np.empty(trip[0].size, np.uint16), np.empty(trip[0].size, np.uint16)
    cur(*trip, o1, 0, o1.size)
    new(*trip, o2)
    print(f"{spelling} specials: {o1.size} triples, {int(np.sum(o1 != o2))} differ", flush=True)
    for d in ("uniform", "normal", "hard"):
        bad = done = 0
        while done < total:
            n = min(N, total - done)
            ops = [np.asarray(x).astype(np.uint16) for x in bench.dist_operands(ins, n, rng, d)]
            o1, o2 = np.empty(n, np.uint16), np.empty(n, np.uint16)
            cur(*ops, o1, 0, n)
            new(*ops, o2)
            bad += int(np.sum(o1 != o2))
            done += n
        print(f"{spelling} {d}: {done} triples, {bad} differ", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        check(*sys.argv[2:3])
    else:
        main(*sys.argv[1:])
