"""The SFU sequences as kernels: written by tools/sfu_sequences.py --codegen from
sass_data.py (Cuda compilation tools, release 13.5, V13.5.37); do not edit.  One function per distinct
sequence: a loop over the elements whose body is the SASS, one statement per
instruction (sequence.translate), with the primitives and the instructions inlined:
one loop of straight-line code per sequence, which LLVM vectorizes."""

from __future__ import annotations

import numpy as np

from ...core._jit import fpenv_enter, fpenv_leave
from .primitives import MUFU, inlined
from .sass_ops import bits, f32, fadd, fmul, fsetp  # noqa: F401

# every primitive, compiled inline into the kernels that call it
mufu_cos = inlined(MUFU['COS'])
mufu_ex2 = inlined(MUFU['EX2'])
mufu_lg2 = inlined(MUFU['LG2'])
mufu_rcp = inlined(MUFU['RCP'])
mufu_rsq = inlined(MUFU['RSQ'])
mufu_sin = inlined(MUFU['SIN'])
mufu_sqrt = inlined(MUFU['SQRT'])


def seq_022ddeed(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_cos(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_06fb4d23(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        p0 = fsetp(13, abs(x0), f32(0x800000), False)
        if not p0:
            x0 = fmul(x0, f32(0x4b800000), False, False)
        x1 = f32(mufu_rsq(bits(x0)))
        if not p0:
            x1 = fmul(x1, f32(0x45800000), False, False)
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_26870370(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_cos(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_3ae6b1b5(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        p0 = fsetp(13, x0, f32(0xc2fc0000), False)
        if not p0:
            x0 = fmul(x0, f32(0x3f000000), False, False)
        x1 = f32(mufu_ex2(bits(x0)))
        if not p0:
            x1 = fmul(x1, x1, False, False)
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_3b2eac8b(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_sqrt(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_4451b215(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(b[i])
        x1 = f32(a[i])
        p0 = fsetp(3, abs(x0), f32(0x7e800000), False)
        p1 = fsetp(13, abs(x0), f32(0x800000), False)
        if p0:
            x0 = fmul(x0, f32(0x3e800000), False, False)
        if p0:
            x1 = fmul(x1, f32(0x3e800000), False, False)
        if not p1:
            x0 = fmul(x0, f32(0x4b800000), False, False)
        if not p1:
            x1 = fmul(x1, f32(0x4b800000), False, False)
        x2 = f32(mufu_rcp(bits(x0)))
        x2 = fmul(x2, x1, False, False)
        r = bits(x2)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_4d80d625(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = fmul(x0, f32(0x3e22f983), False, True)
        x0 = f32(mufu_sin(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_5e7b2985(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(b[i])
        x1 = f32(a[i])
        p0 = fsetp(13, abs(x0), f32(0x800000), False)
        if not p0:
            x0 = fmul(x0, f32(0x4b800000), False, False)
        if not p0:
            x1 = fmul(x1, f32(0x4b800000), False, False)
        x2 = f32(mufu_rcp(bits(x0)))
        x2 = fmul(x2, x1, False, False)
        r = bits(x2)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_692a0bb8(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = fmul(x0, f32(0x3e22f983), False, True)
        x1 = f32(mufu_sin(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_8161258e(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = fmul(x0, f32(0x3e22f983), False, True)
        x0 = f32(mufu_cos(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_83daa39f(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_rsq(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_909e2acf(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_rcp(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_9dc2833e(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(b[i])
        x1 = f32(a[i])
        x2 = f32(mufu_rcp(bits(x0)))
        x2 = fmul(x1, x2, True, False)
        r = bits(x2)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_a5cbf813(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = fmul(x0, f32(0x3e22f983), False, True)
        x1 = f32(mufu_cos(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_a7707e02(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_rsq(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_ad6db2d9(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_sqrt(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_ae423bc8(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(b[i])
        x1 = f32(a[i])
        p0 = fsetp(3, abs(x0), f32(0x7e800000), True)
        if p0:
            x0 = fmul(x0, f32(0x3e800000), True, False)
        if p0:
            x1 = fmul(x1, f32(0x3e800000), True, False)
        x2 = f32(mufu_rcp(bits(x0)))
        x2 = fmul(x2, x1, True, False)
        r = bits(x2)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_afb7f05b(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        p0 = fsetp(13, abs(x0), f32(0x800000), False)
        if not p0:
            x0 = fmul(x0, f32(0x4b800000), False, False)
        x1 = f32(mufu_lg2(bits(x0)))
        if not p0:
            x1 = fadd(x1, f32(0xc1c00000), False)
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_b434f752(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_rcp(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_b5101703(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(0x4b800000)
        p0 = fsetp(13, abs(x0), f32(0x800000), False)
        p1 = fsetp(3, abs(x0), f32(0x7e800000), False)
        x1 = x1 if not p0 else f32(0x3f800000)
        x2 = x1 if not p1 else f32(0x3e800000)
        x0 = fmul(x0, x2, False, False)
        x0 = f32(mufu_rcp(bits(x0)))
        x2 = fmul(x2, x0, False, False)
        r = bits(x2)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_cecc2d46(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_sin(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_d0fb923e(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        p0 = fsetp(13, abs(x0), f32(0x800000), False)
        if not p0:
            x0 = fmul(x0, f32(0x4b800000), False, False)
        x1 = f32(mufu_sqrt(bits(x0)))
        if not p0:
            x1 = fmul(x1, f32(0x39800000), False, False)
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_d37e0f1b(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_lg2(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_d755459b(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_ex2(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_e1cdfcaf(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(b[i])
        x1 = f32(a[i])
        x2 = f32(mufu_rcp(bits(x0)))
        x1 = fmul(x1, x2, True, False)
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_ea66f0db(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_sin(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_f3ff9806(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x0 = f32(mufu_ex2(bits(x0)))
        r = bits(x0)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


def seq_f7d4d286(a, b, out, nan_bits):  # type: ignore[no-untyped-def]
    saved = fpenv_enter()           # the IEEE default environment
    for i in range(out.size):
        x0 = f32(a[i])
        x1 = f32(mufu_lg2(bits(x0)))
        r = bits(x1)
        if (r & 0x7FFFFFFF) > 0x7F800000:
            r = nan_bits
        out[i] = np.uint32(r)
    fpenv_leave(saved)


#: kernel name -> kernel
FUNCS = {
    'seq_022ddeed': seq_022ddeed,
    'seq_06fb4d23': seq_06fb4d23,
    'seq_26870370': seq_26870370,
    'seq_3ae6b1b5': seq_3ae6b1b5,
    'seq_3b2eac8b': seq_3b2eac8b,
    'seq_4451b215': seq_4451b215,
    'seq_4d80d625': seq_4d80d625,
    'seq_5e7b2985': seq_5e7b2985,
    'seq_692a0bb8': seq_692a0bb8,
    'seq_8161258e': seq_8161258e,
    'seq_83daa39f': seq_83daa39f,
    'seq_909e2acf': seq_909e2acf,
    'seq_9dc2833e': seq_9dc2833e,
    'seq_a5cbf813': seq_a5cbf813,
    'seq_a7707e02': seq_a7707e02,
    'seq_ad6db2d9': seq_ad6db2d9,
    'seq_ae423bc8': seq_ae423bc8,
    'seq_afb7f05b': seq_afb7f05b,
    'seq_b434f752': seq_b434f752,
    'seq_b5101703': seq_b5101703,
    'seq_cecc2d46': seq_cecc2d46,
    'seq_d0fb923e': seq_d0fb923e,
    'seq_d37e0f1b': seq_d37e0f1b,
    'seq_d755459b': seq_d755459b,
    'seq_e1cdfcaf': seq_e1cdfcaf,
    'seq_ea66f0db': seq_ea66f0db,
    'seq_f3ff9806': seq_f3ff9806,
    'seq_f7d4d286': seq_f7d4d286,
}
#: (form, target) -> the kernel of its sequence
KERNELS = {
    ('cos.approx.f32', 'sm_100'): 'seq_a5cbf813',
    ('cos.approx.f32', 'sm_75'): 'seq_8161258e',
    ('cos.approx.f32', 'sm_80'): 'seq_a5cbf813',
    ('cos.approx.f32', 'sm_86'): 'seq_a5cbf813',
    ('cos.approx.f32', 'sm_89'): 'seq_a5cbf813',
    ('cos.approx.f32', 'sm_90'): 'seq_a5cbf813',
    ('cos.approx.ftz.2pi.f32', 'sm_100'): 'seq_26870370',
    ('cos.approx.ftz.2pi.f32', 'sm_75'): 'seq_022ddeed',
    ('cos.approx.ftz.2pi.f32', 'sm_80'): 'seq_26870370',
    ('cos.approx.ftz.2pi.f32', 'sm_86'): 'seq_26870370',
    ('cos.approx.ftz.2pi.f32', 'sm_89'): 'seq_26870370',
    ('cos.approx.ftz.2pi.f32', 'sm_90'): 'seq_26870370',
    ('cos.approx.ftz.f32', 'sm_100'): 'seq_a5cbf813',
    ('cos.approx.ftz.f32', 'sm_75'): 'seq_8161258e',
    ('cos.approx.ftz.f32', 'sm_80'): 'seq_a5cbf813',
    ('cos.approx.ftz.f32', 'sm_86'): 'seq_a5cbf813',
    ('cos.approx.ftz.f32', 'sm_89'): 'seq_a5cbf813',
    ('cos.approx.ftz.f32', 'sm_90'): 'seq_a5cbf813',
    ('div.approx.f32', 'sm_100'): 'seq_5e7b2985',
    ('div.approx.f32', 'sm_75'): 'seq_5e7b2985',
    ('div.approx.f32', 'sm_80'): 'seq_5e7b2985',
    ('div.approx.f32', 'sm_86'): 'seq_5e7b2985',
    ('div.approx.f32', 'sm_89'): 'seq_5e7b2985',
    ('div.approx.f32', 'sm_90'): 'seq_5e7b2985',
    ('div.approx.ftz.f32', 'sm_100'): 'seq_9dc2833e',
    ('div.approx.ftz.f32', 'sm_75'): 'seq_e1cdfcaf',
    ('div.approx.ftz.f32', 'sm_80'): 'seq_9dc2833e',
    ('div.approx.ftz.f32', 'sm_86'): 'seq_9dc2833e',
    ('div.approx.ftz.f32', 'sm_89'): 'seq_9dc2833e',
    ('div.approx.ftz.f32', 'sm_90'): 'seq_9dc2833e',
    ('div.full.f32', 'sm_100'): 'seq_4451b215',
    ('div.full.f32', 'sm_75'): 'seq_4451b215',
    ('div.full.f32', 'sm_80'): 'seq_4451b215',
    ('div.full.f32', 'sm_86'): 'seq_4451b215',
    ('div.full.f32', 'sm_89'): 'seq_4451b215',
    ('div.full.f32', 'sm_90'): 'seq_4451b215',
    ('div.full.ftz.f32', 'sm_100'): 'seq_ae423bc8',
    ('div.full.ftz.f32', 'sm_75'): 'seq_ae423bc8',
    ('div.full.ftz.f32', 'sm_80'): 'seq_ae423bc8',
    ('div.full.ftz.f32', 'sm_86'): 'seq_ae423bc8',
    ('div.full.ftz.f32', 'sm_89'): 'seq_ae423bc8',
    ('div.full.ftz.f32', 'sm_90'): 'seq_ae423bc8',
    ('ex2.approx.f32', 'sm_100'): 'seq_3ae6b1b5',
    ('ex2.approx.f32', 'sm_75'): 'seq_3ae6b1b5',
    ('ex2.approx.f32', 'sm_80'): 'seq_3ae6b1b5',
    ('ex2.approx.f32', 'sm_86'): 'seq_3ae6b1b5',
    ('ex2.approx.f32', 'sm_89'): 'seq_3ae6b1b5',
    ('ex2.approx.f32', 'sm_90'): 'seq_3ae6b1b5',
    ('ex2.approx.ftz.f32', 'sm_100'): 'seq_d755459b',
    ('ex2.approx.ftz.f32', 'sm_75'): 'seq_f3ff9806',
    ('ex2.approx.ftz.f32', 'sm_80'): 'seq_d755459b',
    ('ex2.approx.ftz.f32', 'sm_86'): 'seq_d755459b',
    ('ex2.approx.ftz.f32', 'sm_89'): 'seq_d755459b',
    ('ex2.approx.ftz.f32', 'sm_90'): 'seq_d755459b',
    ('lg2.approx.f32', 'sm_100'): 'seq_afb7f05b',
    ('lg2.approx.f32', 'sm_75'): 'seq_afb7f05b',
    ('lg2.approx.f32', 'sm_80'): 'seq_afb7f05b',
    ('lg2.approx.f32', 'sm_86'): 'seq_afb7f05b',
    ('lg2.approx.f32', 'sm_89'): 'seq_afb7f05b',
    ('lg2.approx.f32', 'sm_90'): 'seq_afb7f05b',
    ('lg2.approx.ftz.f32', 'sm_100'): 'seq_f7d4d286',
    ('lg2.approx.ftz.f32', 'sm_75'): 'seq_d37e0f1b',
    ('lg2.approx.ftz.f32', 'sm_80'): 'seq_f7d4d286',
    ('lg2.approx.ftz.f32', 'sm_86'): 'seq_f7d4d286',
    ('lg2.approx.ftz.f32', 'sm_89'): 'seq_f7d4d286',
    ('lg2.approx.ftz.f32', 'sm_90'): 'seq_f7d4d286',
    ('rcp.approx.f32', 'sm_100'): 'seq_b5101703',
    ('rcp.approx.f32', 'sm_75'): 'seq_b5101703',
    ('rcp.approx.f32', 'sm_80'): 'seq_b5101703',
    ('rcp.approx.f32', 'sm_86'): 'seq_b5101703',
    ('rcp.approx.f32', 'sm_89'): 'seq_b5101703',
    ('rcp.approx.f32', 'sm_90'): 'seq_b5101703',
    ('rcp.approx.ftz.f32', 'sm_100'): 'seq_909e2acf',
    ('rcp.approx.ftz.f32', 'sm_75'): 'seq_b434f752',
    ('rcp.approx.ftz.f32', 'sm_80'): 'seq_909e2acf',
    ('rcp.approx.ftz.f32', 'sm_86'): 'seq_909e2acf',
    ('rcp.approx.ftz.f32', 'sm_89'): 'seq_909e2acf',
    ('rcp.approx.ftz.f32', 'sm_90'): 'seq_909e2acf',
    ('rsqrt.approx.f32', 'sm_100'): 'seq_06fb4d23',
    ('rsqrt.approx.f32', 'sm_75'): 'seq_06fb4d23',
    ('rsqrt.approx.f32', 'sm_80'): 'seq_06fb4d23',
    ('rsqrt.approx.f32', 'sm_86'): 'seq_06fb4d23',
    ('rsqrt.approx.f32', 'sm_89'): 'seq_06fb4d23',
    ('rsqrt.approx.f32', 'sm_90'): 'seq_06fb4d23',
    ('rsqrt.approx.ftz.f32', 'sm_100'): 'seq_83daa39f',
    ('rsqrt.approx.ftz.f32', 'sm_75'): 'seq_a7707e02',
    ('rsqrt.approx.ftz.f32', 'sm_80'): 'seq_83daa39f',
    ('rsqrt.approx.ftz.f32', 'sm_86'): 'seq_83daa39f',
    ('rsqrt.approx.ftz.f32', 'sm_89'): 'seq_83daa39f',
    ('rsqrt.approx.ftz.f32', 'sm_90'): 'seq_83daa39f',
    ('sin.approx.f32', 'sm_100'): 'seq_692a0bb8',
    ('sin.approx.f32', 'sm_75'): 'seq_4d80d625',
    ('sin.approx.f32', 'sm_80'): 'seq_692a0bb8',
    ('sin.approx.f32', 'sm_86'): 'seq_692a0bb8',
    ('sin.approx.f32', 'sm_89'): 'seq_692a0bb8',
    ('sin.approx.f32', 'sm_90'): 'seq_692a0bb8',
    ('sin.approx.ftz.2pi.f32', 'sm_100'): 'seq_ea66f0db',
    ('sin.approx.ftz.2pi.f32', 'sm_75'): 'seq_cecc2d46',
    ('sin.approx.ftz.2pi.f32', 'sm_80'): 'seq_ea66f0db',
    ('sin.approx.ftz.2pi.f32', 'sm_86'): 'seq_ea66f0db',
    ('sin.approx.ftz.2pi.f32', 'sm_89'): 'seq_ea66f0db',
    ('sin.approx.ftz.2pi.f32', 'sm_90'): 'seq_ea66f0db',
    ('sin.approx.ftz.f32', 'sm_100'): 'seq_692a0bb8',
    ('sin.approx.ftz.f32', 'sm_75'): 'seq_4d80d625',
    ('sin.approx.ftz.f32', 'sm_80'): 'seq_692a0bb8',
    ('sin.approx.ftz.f32', 'sm_86'): 'seq_692a0bb8',
    ('sin.approx.ftz.f32', 'sm_89'): 'seq_692a0bb8',
    ('sin.approx.ftz.f32', 'sm_90'): 'seq_692a0bb8',
    ('sqrt.approx.f32', 'sm_100'): 'seq_d0fb923e',
    ('sqrt.approx.f32', 'sm_75'): 'seq_d0fb923e',
    ('sqrt.approx.f32', 'sm_80'): 'seq_d0fb923e',
    ('sqrt.approx.f32', 'sm_86'): 'seq_d0fb923e',
    ('sqrt.approx.f32', 'sm_89'): 'seq_d0fb923e',
    ('sqrt.approx.f32', 'sm_90'): 'seq_d0fb923e',
    ('sqrt.approx.ftz.f32', 'sm_100'): 'seq_ad6db2d9',
    ('sqrt.approx.ftz.f32', 'sm_75'): 'seq_3b2eac8b',
    ('sqrt.approx.ftz.f32', 'sm_80'): 'seq_ad6db2d9',
    ('sqrt.approx.ftz.f32', 'sm_86'): 'seq_ad6db2d9',
    ('sqrt.approx.ftz.f32', 'sm_89'): 'seq_ad6db2d9',
    ('sqrt.approx.ftz.f32', 'sm_90'): 'seq_ad6db2d9',
}
#: (form, target) -> why its recorded sequence is not computed
REFUSED = {
    ('rcp.approx.ftz.f64', 'sm_100'): 'MUFU.RCP64H: no public model of the primitive',
    ('rcp.approx.ftz.f64', 'sm_75'): 'MUFU.RCP64H: no public model of the primitive',
    ('rcp.approx.ftz.f64', 'sm_80'): 'MUFU.RCP64H: no public model of the primitive',
    ('rcp.approx.ftz.f64', 'sm_86'): 'MUFU.RCP64H: no public model of the primitive',
    ('rcp.approx.ftz.f64', 'sm_89'): 'MUFU.RCP64H: no public model of the primitive',
    ('rcp.approx.ftz.f64', 'sm_90'): 'MUFU.RCP64H: no public model of the primitive',
    ('rsqrt.approx.f64', 'sm_100'): "'LDG.E.64 R2, desc[UR4][R2.64]': 64-bit operands",
    ('rsqrt.approx.f64', 'sm_75'): "'LDG.E.64.SYS R2, [UR4]': 64-bit operands",
    ('rsqrt.approx.f64', 'sm_80'): "'LDG.E.64 R4, [R2.64]': 64-bit operands",
    ('rsqrt.approx.f64', 'sm_86'): "'LDG.E.64 R4, [R2.64]': 64-bit operands",
    ('rsqrt.approx.f64', 'sm_89'): "'LDG.E.64 R4, [R2.64]': 64-bit operands",
    ('rsqrt.approx.f64', 'sm_90'): "'LDG.E.64 R2, desc[UR4][R2.64]': 64-bit operands",
    ('rsqrt.approx.ftz.f64', 'sm_100'): 'MUFU.RSQ64H: no public model of the primitive',
    ('rsqrt.approx.ftz.f64', 'sm_75'): 'MUFU.RSQ64H: no public model of the primitive',
    ('rsqrt.approx.ftz.f64', 'sm_80'): 'MUFU.RSQ64H: no public model of the primitive',
    ('rsqrt.approx.ftz.f64', 'sm_86'): 'MUFU.RSQ64H: no public model of the primitive',
    ('rsqrt.approx.ftz.f64', 'sm_89'): 'MUFU.RSQ64H: no public model of the primitive',
    ('rsqrt.approx.ftz.f64', 'sm_90'): 'MUFU.RSQ64H: no public model of the primitive',
    ('tanh.approx.f32', 'sm_100'): 'MUFU.TANH: no public model of the primitive',
    ('tanh.approx.f32', 'sm_75'): 'MUFU.TANH: no public model of the primitive',
    ('tanh.approx.f32', 'sm_80'): 'MUFU.TANH: no public model of the primitive',
    ('tanh.approx.f32', 'sm_86'): 'MUFU.TANH: no public model of the primitive',
    ('tanh.approx.f32', 'sm_89'): 'MUFU.TANH: no public model of the primitive',
    ('tanh.approx.f32', 'sm_90'): 'MUFU.TANH: no public model of the primitive',
}
