"""The binary32 fast lane (kernels.lane32) against the float64 reference lane, on every form.

The oracle suites (test_oracle.py, test_lanes.py) hold execute(), which runs the fast lane where
it applies, to MPFR.  This file is the differential check on top: the two lanes of ptxfp must
give the same bits on the oracle's targeted vectors, on uniform random bits and on the places
where the fast lane does something different (bf16 products outside binary32's normal range,
sums that overflow binary32, exact zeros under .rm, ties of f16 fma).  It also checks that the
mixed forms' change of rounding mode does not leak out of a call.
"""

import dataclasses
import zlib

import numpy as np
import pytest

import ptxfp
import vectors
from numba import njit
from ptxfp import policy
from ptxfp.core import _jit, rounding
from ptxfp.ops import kernels
from ptxfp.ops.arith import _form, kernel_spec as _spec
from ptxfp.isa import canonical_spellings

#: the half and mixed forms (the .f32/.f32x2 forms have no binary32 fast lane: f32.py computes
#: them, tests/test_minmax_f32.py holds it to MPFR and to the float64 lane)
FORMS = [s for s in canonical_spellings() if not s.endswith((".f32", ".f32x2"))]
fast_available = kernels.X86 and kernels.HAVE_F16C
needs_fast = pytest.mark.skipif(not fast_available, reason="the fast lane needs x86 with F16C")


@pytest.fixture(autouse=True)
def _bf16_fma_as_spelled():
    """The directed bf16 fma spellings as their names say: these tests hold the kernels of every
    mode to the reference lane; what ptxas 13.0 makes of those spellings (the default policy, a composition of
    other forms, or the .rn kernel) is held to the GPU's answers in test_gpu_recorded.py."""
    with policy.using(bf16_fma_directed="as_spelled"):
        yield


def _bf16_edges(rng, n):
    """bf16 operand bits whose products leave binary32's normal range or overflow it."""
    def bits(e, size):                       # bf16 with biased exponent e, random sign/fraction
        return ((rng.integers(0, 2, size) << 15) | (np.asarray(e) << 7)
                | rng.integers(0, 128, size)).astype(np.uint32)
    ea = rng.integers(1, 255, n)
    eb = np.clip(rng.choice([1, 2, 3, 127, 254], n) + rng.integers(-3, 4, n) - ea + 127 - 126
                 + rng.integers(-30, 30, n), 0, 254)
    return bits(ea, n), bits(eb, n)


def _operands(ins, rng):
    cols = [np.asarray(c) for c in vectors.for_instruction(ins, 8_000)]
    n = 8_000
    rand = []
    for c in cols:
        hi = np.iinfo(c.dtype).max
        rand.append(rng.integers(0, int(hi) + 1, n, dtype=np.uint64).astype(c.dtype))
    cols = [np.concatenate([c, r]) for c, r in zip(cols, rand)]
    if ins.opcode == "fma" and ins.lane_format == "bf16" and not ins.mixed:
        a, b = _bf16_edges(rng, 4_000)
        c = rng.integers(0, 1 << 16, 4_000).astype(np.uint32)
        # c = -(a*b) rounded, for cancellation to zero under each mode
        prod = (vectors.to_float(a, vectors.BF16) * vectors.to_float(b, vectors.BF16))
        c[::2] = vectors.from_float(-prod[::2], vectors.BF16)
        if ins.lanes == 2:
            a, b, c = (x | (x[::-1] << 16) for x in (a, b, c))
        extra = [x.astype(col.dtype) for x, col in zip((a, b, c), cols)]
        cols = [np.concatenate([col, x]) for col, x in zip(cols, extra)]
    return cols


@needs_fast
@pytest.mark.parametrize("spelling", FORMS)
def test_fast_lane_equals_reference(spelling):
    form = _form(spelling)
    spec, _ = form.kernel()
    one = dataclasses.replace(spec, lanes=1)
    assert kernels.fast_ok(one), "every form has a fast lane on x86 with F16C"
    ops = _operands(form.ins, np.random.default_rng(zlib.crc32(spelling.encode())))
    got = ptxfp.execute(spelling, *ops)
    ref_kernel = kernels._build(one)
    o = form.order
    exp = np.empty_like(got)
    kernels.run_with(ref_kernel, spec, ops[o[0]], ops[o[1]], ops[o[2]], exp, exp.size)
    bad = np.nonzero(got != exp)[0]
    if bad.size:
        i = bad[0]
        pytest.fail(f"{spelling}: {bad.size} of {got.size} differ; first: operands "
                    + ", ".join(hex(int(x[i])) for x in ops)
                    + f" fast {int(got[i]):#x} reference {int(exp[i]):#x}")


def _tininess_window(rng, ins, n):
    """f16 operands whose exact result lies within a few units of the smallest normal 2**-14
    (products solved for, and for fma a normal c that brings a larger product down to it),
    both signs: where the three .ftz tininess readings differ."""
    f16 = vectors.F16
    a = vectors.finite(rng, f16, n, 8, 22)               # about 2**-7 .. 2**7, normal
    T = vectors.signs(rng, n) * 2.0 ** -14 * (1 - rng.integers(-40, 40, n) * 2.0 ** -13)
    if ins.opcode == "mul":
        b = vectors.nudge(vectors.from_float(T / vectors.to_float(a, f16), f16),
                          rng.integers(-4, 5, n), f16)
        cols = [a, b]
    else:
        # half the lanes: a*b itself near T and c = -0; the other half: a*b near 3 T, c near
        # -2 T (normal, so .ftz keeps it), nudged
        k = np.where(rng.integers(0, 2, n) == 1, 1.0, 3.0)
        b = vectors.nudge(vectors.from_float(k * T / vectors.to_float(a, f16), f16),
                          rng.integers(-4, 5, n), f16)
        P = vectors.to_float(a, f16) * vectors.to_float(b, f16)
        c = np.where(k == 1.0, 0x8000,
                     vectors.nudge(vectors.from_float(T - P, f16), rng.integers(-3, 4, n), f16))
        cols = [a, b, c]
    if ins.lanes == 2:
        cols = [x | (x[::-1] << 16) for x in cols]
    return [x.astype(np.uint32 if ins.lanes == 2 else np.uint16) for x in cols]


FTZ_FORMS = [s for s in FORMS if ptxfp.parse(s).ftz]


@needs_fast
@pytest.mark.parametrize("tininess", [policy.TININESS_AFTER_IEEE, policy.TININESS_BEFORE])
@pytest.mark.parametrize("spelling", FTZ_FORMS)
def test_fast_lane_equals_reference_under_flipped_tininess(spelling, tininess):
    """Every .ftz form with ftz_tininess flipped: the fast lane's tininess tests (binary32
    compares, F16C rounding of the scaled proxy) give the reference lane's bits, on the usual
    operands and on results packed around 2**-14."""
    ins = ptxfp.parse(spelling)
    with policy.using(ftz_tininess=tininess) as pol:
        spec = dataclasses.replace(_spec(ins, pol), lanes=1)
    assert kernels.fast_ok(spec)
    rng = np.random.default_rng(zlib.crc32((spelling + tininess).encode()))
    ops = [np.concatenate([x, w]) for x, w in zip(_operands(ins, rng),
                                                  _tininess_window(rng, ins, 20_000))]
    o = _form(spelling).order
    packed = dataclasses.replace(spec, lanes=ins.lanes)
    got, ref = np.empty_like(ops[0]), np.empty_like(ops[0])
    for k, out in ((kernels._build32(spec), got), (kernels._build(spec), ref)):
        kernels.run_with(k, packed, ops[o[0]], ops[o[1]], ops[o[2]], out, out.size)
    bad = np.nonzero(got != ref)[0]
    if bad.size:
        i = bad[0]
        pytest.fail(f"{spelling} ({tininess}): {bad.size} of {got.size} differ; first: "
                    + ", ".join(hex(int(x[i])) for x in ops)
                    + f" fast {int(got[i]):#x} reference {int(ref[i]):#x}")


@needs_fast
@pytest.mark.parametrize("spelling", ["fma.rn.f16", "fma.rn.ftz.sat.f16x2", "mul.rn.ftz.f16",
                                      "sub.rn.ftz.sat.f16"])
def test_binary32_f16_lane_where_fp16_runs(spelling):
    """On a machine with AVX512-FP16 the .rn f16 forms run lane16 (binary16 instructions), so
    the tests above no longer reach lane32's f16 path there, which other machines run: it is
    held to the reference lane here on the usual operands and the tininess window, and so
    (with ``half=True``, where the machine has it) is lane16 with its edge blocks."""
    ins = ptxfp.parse(spelling)
    spec = dataclasses.replace(_form(spelling).kernel()[0], lanes=1)
    rng = np.random.default_rng(zlib.crc32(spelling.encode()) + 1)
    ops = _operands(ins, rng)
    if ins.ftz:
        ops = [np.concatenate([x, w]) for x, w in zip(ops, _tininess_window(rng, ins, 20_000))]
    o = _form(spelling).order
    packed = dataclasses.replace(spec, lanes=ins.lanes)
    ref = np.empty_like(ops[0])
    kernels.run_with(kernels._build(spec), packed, ops[o[0]], ops[o[1]], ops[o[2]], ref, ref.size)
    for half in [False] + ([True] if kernels.HAVE_AVX512FP16 else []):
        got = np.empty_like(ref)
        kernels.run_with(kernels._build32(spec, half), packed, ops[o[0]], ops[o[1]], ops[o[2]],
                         got, got.size)
        bad = np.nonzero(got != ref)[0]
        assert bad.size == 0, (f"{spelling} (half={half}): {bad.size} of {got.size} differ; "
                               "first: " + ", ".join(hex(int(x[bad[0]])) for x in ops))


@njit
def _both_roundings(v, P, EMIN, EMAX, EBITS, mode, flush, out64, out32):
    for i in range(v.size):
        m, s, n = rounding.round_pack(np.float64(v[i]), P, EMIN, EMAX, mode, flush)
        out64[i] = -1 if n else (s << 15) | m
        m, s, n = rounding.round_pack32(v[i], EBITS, mode, flush)
        out32[i] = -1 if n else (s << 15) | m


@needs_fast
@pytest.mark.parametrize("flush", [rounding.TINY_AFTER, rounding.TINY_BEFORE,
                                   rounding.TINY_UNBOUNDED])
@pytest.mark.parametrize("fmt, modes", [("f16", ["rn"]), ("bf16", ["rn", "rz", "rm", "rp"])])
def test_round_pack32_tininess_equals_round_pack(fmt, modes, flush):
    """``round_pack32`` against ``round_pack`` on binary32 values around the smallest normal of
    f16 (to nearest, its only mode) and bf16 (every mode; no bf16 form has .ftz today, but
    the core must be right for one), under each tininess reading."""
    f = vectors.FORMATS[fmt]
    rng = np.random.default_rng(7 + flush)
    lo = (127 + f.emin_normal) << 23                     # binary32 bits of 2**EMIN
    near = lo + rng.integers(-(1 << 18), 1 << 18, 200_000)
    bits = np.concatenate([near, rng.integers(0, 1 << 31, 50_000)]).astype(np.uint32)
    bits |= (rng.integers(0, 2, bits.size) << 31).astype(np.uint32)
    v = bits.view(np.float32)
    P, EMIN, EMAX = f.precision, f.emin_normal, f.bias
    for mode in modes:
        r64, r32 = np.empty(v.size, np.int64), np.empty(v.size, np.int64)
        _both_roundings(v, P, EMIN, EMAX, f.ebits, rounding.MODES[mode], flush, r64, r32)
        bad = np.nonzero(r64 != r32)[0]
        assert not bad.size, (f"{fmt} {mode}: {bad.size} differ, first {int(bits[bad[0]]):#x}: "
                              f"{int(r64[bad[0]]):#x} vs {int(r32[bad[0]]):#x}")


@needs_fast
@pytest.mark.parametrize("spelling", ["add.rz.f32.f16", "fma.rp.sat.f32.bf16",
                                      "sub.rm.f32.bf16"])
def test_rounding_mode_does_not_leak(spelling):
    """The mixed forms run with the SSE rounding control set to their mode; afterwards this
    thread must round to nearest again (NumPy's float32 add is the witness)."""
    ops = [np.arange(1000, dtype=np.uint16 if f != "f32" else np.uint32)
           for f in ptxfp.parse(spelling).operand_formats]
    ptxfp.execute(spelling, *ops)
    ptxfp.execute(spelling, *(int(x[1]) for x in ops))
    one, tiny = np.float32(1.0), np.float32(1.5 * 2.0 ** -24)
    assert np.add(one, tiny) == np.float32(1.0 + 2.0 ** -23)       # nearest, not toward 0
    assert np.add(-one, -tiny) == np.float32(-1.0 - 2.0 ** -23)


@pytest.mark.parametrize("spelling", ["add.rn.f16", "fma.rn.relu.bf16x2", "fma.rm.sat.f32.f16"])
def test_parallel_path_matches_one_call(monkeypatch, spelling):
    """Arrays split over threads give the bits of one kernel call over the whole array."""
    ins = ptxfp.parse(spelling)
    cols = [np.asarray(c) for c in vectors.for_instruction(ins, 20_000)]
    expect = ptxfp.execute(spelling, *cols)
    monkeypatch.setattr(kernels, "PARALLEL_MIN", 64)
    monkeypatch.setattr(_jit, "PARALLEL_MIN", 64)
    monkeypatch.setattr(_jit, "PIECE_MIN", 64)
    monkeypatch.setattr(kernels, "_parallel_min", {})
    monkeypatch.setenv("PTXFP_NUM_THREADS", "3")
    _form(spelling).state = None
    assert np.array_equal(ptxfp.execute(spelling, *cols), expect)


def _f16_sweep_bits(rng, dist, n):
    """n f16 bit patterns: ``uniform`` bits, the bits of ``normal`` values, or a ``hard`` mix
    (exponent fields spread evenly, a third of them at 0 to 2 or 28 to 31: subnormals, the
    binades around 2**-14, near overflow, infinities and NaNs)."""
    if dist == "uniform":
        return rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    if dist == "normal":
        return rng.standard_normal(n).astype(np.float16).view(np.uint16)
    e = np.where(rng.integers(0, 3, n) == 0, rng.choice([0, 1, 2, 28, 29, 30, 31], n),
                 rng.integers(0, 32, n))
    bits = (rng.integers(0, 2, n) << 15) | (e << 10) | rng.integers(0, 1 << 10, n)
    return bits.astype(np.uint16)


@pytest.mark.slow
@pytest.mark.skipif(not kernels.HAVE_AVX512FP16, reason="lane16 needs AVX512-FP16")
@pytest.mark.parametrize("dist", ["uniform", "normal", "hard"])
@pytest.mark.parametrize("spelling", ["fma.rn.f16", "fma.rn.ftz.sat.f16", "fma.rn.oob.relu.f16",
                                      "mul.rn.ftz.f16", "mul.rn.sat.f16", "add.rn.ftz.f16",
                                      "sub.rn.sat.f16"])
def test_lane16_sweep(spelling, dist):
    """lane16 against the reference lane on 24M random operand tuples per distribution and
    form, under the default tininess reading and the before-rounding one."""
    ins = ptxfp.parse(spelling)
    rng = np.random.default_rng(zlib.crc32((spelling + dist).encode()))
    for tininess in (policy.TININESS_AFTER_IEEE, policy.TININESS_BEFORE):
        with policy.using(ftz_tininess=tininess) as pol:
            spec = dataclasses.replace(_spec(ins, pol), lanes=1)
        fast, ref = kernels._build32(spec, True), kernels._build(spec)
        for _ in range(6):
            n = 2_000_000
            ops = [_f16_sweep_bits(rng, dist, n) for _ in range(3)]
            got, exp = np.empty(n, np.uint16), np.empty(n, np.uint16)
            fast(*ops, got, 0, n)
            ref(*ops, exp, 0, n)
            bad = np.nonzero(got != exp)[0]
            assert bad.size == 0, (f"{spelling} {dist} {tininess}: {bad.size} differ; first: "
                                   + ", ".join(hex(int(x[bad[0]])) for x in ops))
