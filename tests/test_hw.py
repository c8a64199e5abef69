"""CPU-side tests of the hardware harness (ptxfp.hw); the GPU test is marked ``gpu``.

Expected bits here come from outside ptxfp: ptxas for the kernels, gmpy2 (MPFR) for the meaning
of the decomposed kernels, hand-worked arithmetic for the probe inputs.  Where ptxfp's own
results appear (the fake runner, the probes' predictions) the test is of the harness's logic:
that it reports a flipped bit, that a policy's settings predict different bits.
"""

import json
import os
import re
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

import ptxfp
from ptxfp import isa, policy
from ptxfp.core import types
from ptxfp.hw import command, forms as F, kernels as K, probes as P, report
from ptxfp.vectors import harness as V
from ptxfp.hw.runner import HardwareUnavailable, InterpRunner, ModelRunner, get_runner
from ptxfp.hw.verify import FormResult, compare, verify_form
from ptxfp.hw.defects import toolchain_defect

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORMS = isa.canonical_spellings()
ALL = F.all_spellings()                     # the arithmetic table, then the cvt table
CVT = [s for s in ALL if s.startswith("cvt.")]
PTXAS = shutil.which("ptxas")

#: policy fields of the forms the GPU harness does not run yet (families with harness=False:
#: the .f64 arithmetic of the interpreter's instruction set); the harness probes every other
#: the tensor-core readings (mma_model, mma_f64_nan), which gpu_mma.npz's vectors settle, and
#: ``contract``, a property of whole programs (ptxas' SASS decides it: tests/test_contract.py)
NOT_IN_HARNESS = frozenset({"canonical_nan_f64", "mma_model", "mma_f64_nan", "contract"})


def _all_kernels():
    ks = [K.kernel_for(s) for s in ALL]
    ks += [K.native_kernel(s, 100) for s in FORMS if ptxfp.parse(s).mixed]
    return ks


# ---- kernel text ----------------------------------------------------------------------------


MINMAX = [s for s in ALL if s.split(".")[0] in ("min", "max", "neg", "abs")]


def test_every_form_gets_a_kernel_with_its_instruction_loads_and_store():
    for s in FORMS + MINMAX:
        ins = ptxfp.parse(s)
        k = K.kernel_for(s, 90)
        # sm_100 forms sm_90 cannot run: the mixed forms and .f32x2, decomposed
        decomposed = ins.mixed or ins.dtype == "f32x2"
        lines = k.ptx.splitlines()
        version = tuple(int(x) for x in lines[1].split()[1].split("."))
        assert lines[1].startswith(".version ") and version >= ins.min_ptx or decomposed, s
        assert version >= (7, 8), s                     # sm_90 needs PTX ISA 7.8
        assert lines[2] == f".target sm_{max(90, ins.min_sm) if not decomposed else 90}", s
        assert ".address_size 64" in lines
        assert f".visible .entry {K.ENTRY}(" in k.ptx
        for p in ("param_a", "param_b", "param_c", "param_d", "param_n"):
            assert f"[{p}]" in k.ptx
        assert "mad.lo.u32 %i, %bid, %bdim, %tx;" in k.ptx       # the global thread index
        assert "setp.ge.u32 %done, %i, %n;" in k.ptx
        widths = dict(zip(k.names, k.widths))
        for n, f in zip(ins.operand_names, ins.operand_formats):
            w = types.width(f)
            assert widths[n] == w, (s, n)
            assert f"ld.global.b{w} %{n}, [%ptr];" in k.ptx, (s, n)
        assert sum(1 for ln in lines if "ld.global" in ln) == len(ins.operand_names), s
        dw = types.width(ins.dtype)
        assert f"st.global.b{dw} [%ptr], %d;" in k.ptx, s
        if decomposed:
            assert k.mode == "decomposed", s
        else:
            assert k.mode == "native", s
            ops = ", ".join(["%d"] + ["%" + n for n in ins.operand_names])
            assert f"    {s} {ops};" in lines, s


def test_every_cvt_form_gets_a_native_kernel():
    assert len(CVT) > 50 and ALL[:len(FORMS)] == FORMS and ALL[-len(MINMAX):] == MINMAX
    for s in CVT:
        ins = F.parse_form(s)
        k = K.kernel_for(s, 90)
        if ins.row.targets:      # fp6/fp4/ue8m0, .rs: written for their target, not run here
            assert k.mode == K.NOT_RUNNABLE and k.target == ins.row.targets[0], s
        else:
            assert k.mode == "native" and k.target == f"sm_{max(90, ins.min_sm)}", s
        assert k.version >= ins.min_ptx and k.version >= (7, 8), s
        srcs = ["%" + n for n in ins.operand_names]
        if ins.dtype.endswith("x4"):
            srcs = ["{" + ", ".join(srcs[:4]) + "}", srcs[4]]
        ops = ", ".join(["%d"] + srcs)
        assert f"    {s} {ops};" in k.ptx.splitlines(), s
        for n, w in zip(ins.operand_names, F.operand_widths(ins)):
            assert f"ld.global.b{w} %{n}, [%ptr];" in k.ptx, s
        assert f"st.global.b{ins.result_width} [%ptr], %d;" in k.ptx, s


@pytest.mark.parametrize("spelling", [
    "fma.rn.ftz.relu.f16x2",              # three 32-bit loads, a 32-bit store
    "cvt.rz.ftz.bf16.f32",                # 32-bit load, 16-bit store
    "cvt.sat.f32.f16",                    # 16-bit load, 32-bit store
    "cvt.rn.relu.satfinite.f16x2.f32",    # a and b, no c
])
def test_kernels_run_in_ptxfps_ptx_interpreter(spelling):
    # The generated text itself (thread index, bound check, loads, stores) on the CPU: more
    # threads than vectors, a and b and c and d side by side in one memory.
    r = verify_form(InterpRunner(), spelling, n_random=300, seed=4)
    assert r.error is None and r.ok and r.vectors > 300, r.to_dict()


@pytest.mark.parametrize("sm, spelling", [
    (90, "add.rn.f32x2"),                 # 64-bit loads and store (decomposed on sm_90)
    (100, "fma.rz.f32x2"),                # the same, native
    (100, "cvt.rn.f16x2.e2m1x2"),         # an 8-bit load
    (100, "cvt.rn.satfinite.e2m1x2.f32"),  # an 8-bit store
])
def test_every_parameter_width_runs_in_the_interpreter_and_the_model(sm, spelling):
    # host arrays of each parameter's own width: 64-bit operands cut to 32 bits, or 8-bit ones
    # read as 32, gave mismatches on most vectors (and reads past the end on a GPU)
    for runner in (InterpRunner(sm=sm), ModelRunner(sm=sm)):
        r = verify_form(runner, spelling, n_random=300, seed=4)
        assert r.error is None and r.ok and r.vectors > 300, (runner.name, r.to_dict())


RS = [s for s in CVT if F.parse_form(s).rounding == "rs"]


def test_every_rs_kernel_takes_each_source_as_a_parameter_of_its_own():
    # cvt.rs reads e, f and rbits besides a and b: each is a parameter, in the row's operand
    # order, loaded by its own name, and the runner hands each its own array
    assert len(RS) >= 18
    for s in RS:
        ins = F.parse_form(s)
        k = K.kernel_for(s, 100)
        extra = tuple(n for n in ins.operand_names if n not in ("a", "b", "c"))
        assert "rbits" in extra and k.names == ("a", "b", "c") + extra + ("d",), s
        assert dict(k.sources) == {"a": 32, "b": 32, "c": 0,
                                   **{n: 32 for n in extra}}, s
        params = [ln.split()[-1].rstrip(",") for ln in k.ptx.splitlines()
                  if ln.strip().startswith(".param .u64")]
        assert params == [f"param_{n}" for n in k.names], s
        for n in extra:
            assert f"ld.param.u64 %g{n}, [param_{n}];" in k.ptx, s
            assert f"add.s64 %ptr, %g{n}, %off;" in k.ptx, s
    with pytest.raises(ValueError, match="reads operand rbits"):
        ModelRunner(sm=100).run(K.kernel_for(RS[0], 100),
                                {"a": np.zeros(2, np.uint32), "b": np.zeros(2, np.uint32)})


@pytest.mark.parametrize("spelling", ["cvt.rs.f16x2.f32", "cvt.rs.satfinite.e4m3x4.f32"])
def test_rs_kernels_run_in_ptxfps_ptx_interpreter(spelling):
    # The kernel text run as written, every source from its own array: one taken from another
    # parameter (rbits for e, say) gives other bits on the vectors, whose columns all differ
    r = verify_form(InterpRunner(sm=100), spelling, n_random=300, seed=4)
    assert r.error is None and r.ok and r.vectors > 300, r.to_dict()


class _FakeCupy:
    """Just enough of CuPy for CupyRunner, on NumPy arrays; a "launch" runs the PTX file that
    RawModule was given in ptxfp's PTX interpreter, one thread per grid x block slot."""
    __version__ = "fake"
    uint32 = np.uint32

    class cuda:
        class runtime:
            @staticmethod
            def getDeviceCount():
                return 1

            @staticmethod
            def getDeviceProperties(i):
                return {"name": b"Fake H100", "major": 9, "minor": 0}

            driverGetVersion = staticmethod(lambda: 13000)
            runtimeGetVersion = staticmethod(lambda: 13000)

        class Device:
            def __init__(self, i):
                pass

            def use(self):
                pass

            def synchronize(self):
                pass

    zeros = staticmethod(np.zeros)
    empty = staticmethod(np.empty)
    fills = []

    @staticmethod
    def full(n, value, dtype):
        _FakeCupy.fills.append((n, value))
        return np.full(n, value, dtype)
    asarray = staticmethod(lambda x: np.array(x))
    asnumpy = staticmethod(lambda x: np.array(x))

    class RawModule:
        def __init__(self, path):
            self.ptx = pathlib.Path(path).read_text()

        def get_function(self, name):
            from ptxfp.ptx.interp import MEMORY_KEY, run
            assert name == K.ENTRY

            def launch(grid, block, args):
                *arrays, n = args
                assert isinstance(n, np.uint32)
                addr, pos = {}, 0
                for k, x in zip("abcd", arrays):
                    addr[f"param_{k}"] = pos
                    pos += x.nbytes
                mem = np.concatenate([x.view(np.uint8) for x in arrays])
                out = run(self.ptx, {**addr, "param_n": int(n)}, memory=mem,
                          threads=grid[0] * block[0])[MEMORY_KEY]
                d = arrays[3]
                d[...] = out[addr["param_d"]:addr["param_d"] + d.nbytes].view(d.dtype)
            return launch


def test_the_cupy_runner_plumbing_with_a_fake_cupy(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    runner = get_runner("auto")
    assert runner.name == "cupy" and runner.device()["gpu"] == "Fake H100"
    assert runner.sm == 90 and runner.device()["cuda_driver_api"] == "13.0"
    for s in ("cvt.rn.relu.satfinite.f16x2.f32", "cvt.rz.ftz.bf16.f32"):
        r = verify_form(runner, s, n_random=300, seed=5)
        assert r.ok and r.error is None, r.to_dict()
    # a Constant operand (a sweep's fixed c) is filled on the device once per value and length
    from ptxfp.hw.runner import Constant
    k = K.kernel_for("fma.rn.f16", 90)
    a = np.array([0x3C00, 0x4000, 0xBC00], np.uint16)
    as_array = runner.run(k, {"a": a, "b": a, "c": np.full(3, 0x3C00, np.uint16)})
    _FakeCupy.fills.clear()
    for _ in range(2):
        assert np.array_equal(runner.run(k, {"a": a, "b": a, "c": Constant(0x3C00)}), as_array)
    assert _FakeCupy.fills == [(3, 0x3C00)]
    runner.close()
    js = tmp_path / "r.json"
    assert command.main(["--forms", "cvt.rz.ftz.bf16.f32", "--vectors", "100", "--probes",
                         "none", "--jobs", "1", "--quiet", "--json", str(js)]) == 0
    meta = json.loads(js.read_text())["meta"]
    assert meta["gpu"] == "Fake H100" and meta["hardware"] is True


def test_mixed_forms_need_sm100_so_sm90_runs_their_decomposition():
    for s in FORMS:
        ins = ptxfp.parse(s)
        if not ins.mixed:
            continue
        assert not K.can_run_natively(ins, 90)
        assert K.kernel_for(s, 90).mode == "decomposed"
        native = K.kernel_for(s, 100)
        assert native.mode == "native" and native.target == "sm_100"
        assert native.version >= (8, 6)
        assert f"    {s} %d, " in native.ptx


def test_decomposed_kernel_is_exact_widening_then_the_f32_operation_without_ftz():
    k = K.decomposed_kernel("fma.rz.sat.f32.bf16")
    assert k.body == ("cvt.f32.bf16 %fa, %a;", "cvt.f32.bf16 %fb, %b;", "mov.b32 %fc, %c;",
                      "fma.rz.sat.f32 %fd, %fa, %fb, %fc;", "mov.b32 %d, %fd;")
    k = K.decomposed_kernel("sub.rm.f32.f16")
    assert k.body == ("cvt.f32.f16 %fa, %a;", "mov.b32 %fc, %c;", "sub.rm.f32 %fd, %fa, %fc;",
                      "mov.b32 %d, %fd;")
    assert k.widths == (16, 0, 32, 32)
    for s in FORMS:
        if ptxfp.parse(s).mixed:
            assert ".ftz" not in K.decomposed_kernel(s).ptx, s
    with pytest.raises(ValueError):
        K.decomposed_kernel("add.rn.f16")


def _ptxas_knows(kernel):
    """Whether the installed ptxas reads the kernel's .version (the forms of PTX ISA 9.1 and
    later, ptxas 13.5's small-float cvt, need a newer ptxas than 13.0; the recorded decisions
    of tests/data/ptxas/13.5 hold their rows)."""
    from ptxfp.ptx.releases import release
    out = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    v = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", kernel.ptx, re.M)
    if not (m and v):
        return True
    try:
        cur = release(m.group(1)).current
    except Exception:                      # a ptxas newer than the table knows: it reads it
        return True
    return (int(v.group(1)), int(v.group(2))) <= cur


def _ptxas(kernel, tmp, arch=None):
    path = tmp / f"k{abs(hash(kernel.ptx))}.ptx"
    path.write_text(kernel.ptx)
    r = subprocess.run([PTXAS, f"-arch={arch or kernel.target}", str(path), "-o",
                        str(path.with_suffix(".cubin"))], capture_output=True, text=True)
    return r.returncode, r.stderr


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_ptxas_accepts_every_kernel(tmp_path):
    every = _all_kernels()
    assert len(every) == len(ALL) + sum(ptxfp.parse(s).mixed for s in FORMS)
    ks = [k for k in every if _ptxas_knows(k)]
    assert len(ks) > 0.8 * len(every)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda k: _ptxas(k, tmp_path), ks))
    bad = [(k.spelling, k.mode, k.target, err) for k, (rc, err) in zip(ks, results)
           if rc != 0 or err.strip()]
    assert not bad, bad[:5]


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_ptxas_refuses_a_native_mixed_form_on_sm90(tmp_path):
    # Why the decomposition exists: sm_90 GPUs (H100, H200) cannot run these forms.
    k = K.native_kernel("add.rn.f32.f16", 100)
    rc, err = _ptxas(k, tmp_path, arch="sm_90")
    assert rc != 0


# ---- the decomposition means what ptxfp models (gmpy2 reads the kernel body) ---------------

try:
    import gmpy2
except ImportError:                                   # pragma: no cover
    gmpy2 = None


def _decode(bits, fmt):
    return float(V.decode(np.array([bits]), fmt)[0])


def _emulate_decomposed(kernel, a, b, c):
    """Run a decomposed kernel's body with MPFR: cvt exact, f32 op with its rounding."""
    regs = {}
    for line in kernel.body:
        op, rest = line.split(" ", 1)
        args = [x.strip() for x in rest.rstrip(";").split(",")]
        if op.startswith("cvt.f32."):
            src = {"%a": a, "%b": b}[args[1]]
            regs[args[0]] = gmpy2.mpfr(_decode(src, op.rsplit(".", 1)[1]), 64)
        elif op == "mov.b32" and args[0] == "%fc":
            regs["%fc"] = gmpy2.mpfr(_decode(c, "f32"), 64)
        elif op == "mov.b32":
            pass
        else:
            name, rnd, *mods = op.split(".")
            mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero,
                    "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}[rnd]
            ctx = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True,
                                round=mode)
            x = [regs[r] for r in args[1:]]
            fn = {"add": ctx.add, "sub": ctx.sub, "fma": ctx.fma}[name]
            r = fn(*x)
            v = float(r)
            if "sat" in mods:
                v = 0.0 if v != v or v <= 0 else min(v, 1.0)
            regs["%fd"] = v
    return int(np.float32(regs["%fd"]).view(np.uint32))


@pytest.mark.skipif(gmpy2 is None, reason="gmpy2 not installed")
@pytest.mark.parametrize("spelling", [
    "fma.rn.f32.f16", "fma.rm.sat.f32.bf16", "fma.rp.f32.bf16", "fma.rz.sat.f32.f16",
    "add.rn.f32.f16", "sub.rz.sat.f32.bf16", "add.rm.f32.bf16",
])
def test_decomposed_kernel_computes_what_ptxfp_models(spelling):
    ins = ptxfp.parse(spelling)
    k = K.decomposed_kernel(ins)
    rng = np.random.default_rng(7)
    n = 300
    ops = V._lane_operands(rng, n, ins, "close")
    vecs = list(zip(*[o.tolist() for o in ops]))
    got = P.model(spelling, vecs)
    for v, g in zip(vecs, got):
        a, c = v[0], v[-1]
        b = v[1] if ins.opcode == "fma" else None
        want = _emulate_decomposed(k, a, b, c)
        assert int(g) == want, (spelling, [hex(x) for x in v], hex(int(g)), hex(want))


# ---- vectors ----------------------------------------------------------------------------------


def test_vectors_have_the_operand_widths_of_every_form():
    for s in ALL:
        ins = F.parse_form(s)
        for name, ops in V.vector_sets(s, 257, seed=3, n_targeted=97):
            assert len(ops) == len(ins.operand_names), s
            sizes = {o.size for o in ops}
            assert len(sizes) == 1, (s, name)
            for o, f in zip(ops, ins.operand_formats):
                assert o.dtype == np.dtype(ptxfp.core.types.get(f).dtype_name), (s, f)
        r1 = V.random_vectors(s, 100, seed=5)
        r2 = V.random_vectors(s, 100, seed=5)
        assert all(np.array_equal(x, y) for x, y in zip(r1, r2))


def test_special_values_include_the_required_patterns():
    f16 = set(V.special_values("f16").tolist())
    assert {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7FF7, 0xFFF7,
            0x7C01} <= f16
    bf16 = set(V.special_values("bf16").tolist())
    assert {0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FF7, 0xFFF7,
            0x7F81} <= bf16
    f32 = set(V.special_values("f32").tolist())
    assert {0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0x7F800001} <= f32


def test_the_special_grid_covers_every_pair_of_special_values():
    a, b = V.special_grid("mul.rn.bf16")
    sp = V.special_values("bf16")
    assert a.size == sp.size ** 2
    assert len(set(zip(a.tolist(), b.tolist()))) == sp.size ** 2
    a, b = V.special_grid("mul.rn.bf16x2")
    lo = set(zip((a & 0xFFFF).tolist(), (b & 0xFFFF).tolist()))
    assert len(lo) == sp.size ** 2                  # every pair in lane 0 ...
    hi = set(zip((a >> 16).tolist(), (b >> 16).tolist()))
    assert len(hi) == sp.size ** 2                  # ... and in lane 1


def test_exhaustive_chunks_cover_every_pair_once():
    assert V.exhaustive_size("add.rn.f16") == 1 << 32
    assert V.exhaustive_size("add.rn.f16x2") == 1 << 31
    a, b = V.exhaustive_chunk("add.rn.f16", (5 << 16) + 7, (5 << 16) + 10)
    assert a.tolist() == [5, 5, 5] and b.tolist() == [7, 8, 9]
    assert a.dtype == np.uint16
    a, b = V.exhaustive_chunk("mul.rn.bf16x2", 3, 4)
    j = 3 + (1 << 31)
    assert int(a[0]) == 0 | ((j >> 16) << 16) and int(b[0]) == 3 | ((j & 0xFFFF) << 16)
    a, b, c = V.exhaustive_chunk("fma.rn.f32.bf16", 0, 2, 0x3F800000)
    assert c.dtype == np.uint32 and c.tolist() == [0x3F800000] * 2
    a, b, c = V.exhaustive_chunk("fma.rn.f16x2", 0, 2, 0x8000)
    assert c.tolist() == [0x80008000] * 2
    ranges = list(V.exhaustive_ranges("sub.rn.f16", chunk=1 << 30))
    assert ranges == [(None, i << 30, (i + 1) << 30) for i in range(4)]
    ranges = list(V.exhaustive_ranges("fma.rn.f16x2", chunk=1 << 30, c_values=(1, 2)))
    assert ranges == [(c, i << 30, (i + 1) << 30) for c in (1, 2) for i in range(2)]
    c, s, e, ops = next(V.exhaustive_chunks("mul.rn.f16", chunk=1 << 10))
    assert (c, s, e) == (None, 0, 1 << 10) and ops[1].tolist() == list(range(1 << 10))
    assert V.exhaustive_eligible("fma.rn.f32.f16")
    assert not V.exhaustive_eligible("add.rn.f32.f16")
    assert V.exhaustive_c_values("fma.rn.bf16") == (0x8000, 0x3F80)
    assert V.exhaustive_c_values("add.rn.bf16") == (None,)
    # cvt: every f32 input (packed: b = ~a, so each half sees every f32), every half input
    assert V.exhaustive_size("cvt.rn.f16.f32") == 1 << 32
    assert V.exhaustive_size("cvt.rz.relu.bf16x2.f32") == 1 << 32
    assert V.exhaustive_size("cvt.f32.bf16") == 1 << 16
    a, b = V.exhaustive_chunk("cvt.rn.bf16x2.f32", 5, 7)
    assert a.tolist() == [5, 6] and b.tolist() == [0xFFFFFFFA, 0xFFFFFFF9]
    (a,) = V.exhaustive_chunk("cvt.f32.f16", 0, 1 << 16)
    assert a.dtype == np.uint16 and a.size == 1 << 16
    (a,) = V.special_grid("cvt.sat.f32.f16")
    assert sorted(a.tolist()) == list(range(1 << 16))


# ---- comparison and reporting --------------------------------------------------------------------


def test_cvt_forms_are_verified_like_the_others():
    s = "cvt.rn.relu.satfinite.f16x2.f32"
    r = verify_form(ModelRunner(flip={s: (0, 31)}), s, n_random=500, seed=2)
    assert r.mismatches == 2 and r.examples[0]["gpu"] != r.examples[0]["model"]
    assert set(r.examples[0]) == {"a", "b", "gpu", "model"}
    assert verify_form(ModelRunner(), "cvt.f32.bf16", n_random=500).ok


def test_compare_counts_mismatches_and_keeps_the_first_in_hex():
    ins = ptxfp.parse("fma.rn.bf16x2")
    ops = tuple(np.arange(10, dtype=np.uint32) + k for k in range(3))
    expected = np.arange(10, dtype=np.uint32) * 3
    got = expected.copy()
    got[[2, 7]] ^= np.uint32(1 << 31)
    r = FormResult(str(ins))
    assert compare(ins, ops, got, expected, r, limit=1) == 2
    assert (r.vectors, r.mismatches) == (10, 2)
    assert r.examples == [{"a": "0x00000002", "b": "0x00000003", "c": "0x00000004",
                           "gpu": "0x80000006", "model": "0x00000006"}]
    assert not r.ok and r.nan_only == 0
    # NaN-bits-only mismatches are counted apart and shown after the others
    expected = np.full(4, 0x7FFF3F80, np.uint32)          # bf16x2 lanes: NaN, 1.0
    got = expected.copy()
    got[0] = 0x7FC03F80                   # lane 1 NaN vs NaN: NaN bits only
    got[3] = 0x7FFF3F81                   # lane 0 differs: a real mismatch
    r = FormResult(str(ins))
    assert compare(ins, tuple(np.arange(4, dtype=np.uint32) for _ in range(3)), got, expected,
                   r, limit=1) == 2
    assert r.nan_only == 1 and r.examples[0]["gpu"] == "0x7FFF3F81"


def test_a_flipped_bit_from_the_runner_is_reported_with_its_inputs():
    s = P.CANARY_FORMS[0]        # compiled once for the probes' check already
    runner = ModelRunner(flip={s: (3, 17)})
    r = verify_form(runner, s, n_random=1000, seed=1)
    assert r.mode == "native" and r.target == "sm_90"
    assert r.vectors == 2 * V.special_values("f16").size ** 3 + 1000
    assert r.mismatches == 2                      # one launch of targeted, one of random
    ex = r.examples[0]
    a, b, c = V.special_grid(s)
    assert (ex["a"], ex["b"], ex["c"]) == tuple("0x%08X" % x[3] for x in (a, b, c))
    assert int(ex["gpu"], 16) == int(ex["model"], 16) ^ (1 << 17)
    clean = verify_form(ModelRunner(), s, n_random=1000, seed=1)
    assert clean.ok and clean.vectors == r.vectors
    run = {"meta": {**runner.device(), "hardware": True, "date": "today", "ptxfp": "0",
                    "git": None, "command": "x", "vectors": 1000, "seed": 1, "elapsed_s": 1.0},
           "summary": {"forms": 1, "decomposed": 0, "vectors": r.vectors, "mismatches": 2,
                       "forms_with_mismatches": 1, "errors": 0, "probes": 0,
                       "probes_disagree": 0, "verdict": "ptxfp and the GPU differ"},
           "forms": [r.to_dict()], "exhaustive": [], "probes": [], "policies": []}
    md = report.render(run)
    assert "**MISMATCH**" in md and "DRY RUN" not in md
    assert f"| {ex['a']} | {ex['b']} | {ex['c']} | {ex['gpu']} | {ex['model']} |" in md
    json.dumps(run)


# ---- probes --------------------------------------------------------------------------------------


def test_probe_inputs_hit_the_intended_exact_results():
    def f16(h):
        return Fraction(_decode(h, "f16"))
    lo, tiny = Fraction(1, 2 ** 14) - Fraction(1, 2 ** 26), Fraction(1, 2 ** 14)
    for a, b in P._FTZ_UP:
        x = f16(a) * f16(b)
        assert lo <= x < tiny and f16(a) >= tiny and f16(b) >= tiny   # normal inputs
    a, b = P._FTZ_IEEE
    assert f16(a) * f16(b) == tiny - Fraction(1, 2 ** 25)


def test_probe_predictions_take_the_fast_path_and_it_agrees_with_execute():
    # Probes call the lane function directly (one compilation for all forms and policies);
    # the check compares it with execute() on random vectors.  If kernels.py moves on, probes
    # fall back to execute() (correct, but one compilation per form and policy).
    assert P._fast_path_ok(), "probes.py's fast path no longer fits kernels.py"


def test_every_probe_is_well_formed():
    ps = P.probes()
    names = [p.name for p in ps]
    assert len(names) == len(set(names))
    fields = set(P.POLICY_FIELDS)
    for p in ps:
        assert set(p.fields) <= fields, p.name
        assert len(p.settings) >= 2, p.name
        ops = p.operands()
        ins = F.parse_form(p.spelling)
        assert list(ops) == list(ins.operand_names), p.name
        for n, f in zip(ins.operand_names, ins.operand_formats):
            assert ops[n].dtype == np.dtype(f"uint{types.width(f)}"), p.name
    fams = {n.split("/")[0] for n in names}
    assert fams == {"nan", "ftz-tininess", "sat-minus-zero", "relu-minus-zero", "oob-sign-c",
                    "oob-other-nans", "widen-nan", "rs-x4-bits",
                    "negabs-nan", "cvt-ftz-input", "bf16-fma-directed"}
    decided = {f for p in ps for f in p.fields}
    # every Policy field has probes, but those of families the GPU harness does not run yet
    # (Family.harness is False: the .f64 forms of the interpreter's instruction set)
    assert decided == fields - NOT_IN_HARNESS, fields - decided


def test_the_settings_of_each_probe_predict_different_bits():
    ps = {p.name: p for p in P.probes()}
    for name, p in ps.items():
        ins = F.parse_form(p.spelling)
        fam = name.split("/")[0]
        if fam in ("nan", "oob-sign-c", "oob-other-nans") and ins.sat:
            assert not p.informative(), name         # .sat turns every NaN into +0.0
        elif fam == "cvt-ftz-input":
            # an f32 subnormal is +-0 in f16 under .rn/.rz (and .rm.sat) whatever .ftz does;
            # not in bf16
            assert p.informative() == (ins.rounding == "rp" or ins.result_format == "bf16"
                                       or (ins.rounding == "rm" and not ins.sat)), name
        elif toolchain_defect(p.spelling) and fam != "bf16-fma-directed":
            continue      # computed as ptxas compiles it (f16, .relu/.oob dropped): may not tell
        else:
            assert p.informative(), name
    ftz = ps["ftz-tininess/mul.rn.ftz.f16"].predictions()
    assert ftz["after_rounding"].tolist() == [0x0400, 0x0400, 0x8400, 0x8400, 0x0400]
    assert ftz["before_rounding"].tolist() == [0, 0, 0x8000, 0x8000, 0]
    assert ftz["after_rounding_unbounded"].tolist() == [0x0400, 0x0400, 0x8400, 0x8400, 0]
    assert [s.changes for s in P._ftz_probe("mul.rn.ftz.f16").settings] == [
        (("ftz_tininess", t),) for t in ("after_rounding", "before_rounding",
                                         "after_rounding_unbounded")]
    sat = {k: v.tolist() for k, v in ps["sat-minus-zero/add.rn.sat.f16"].predictions().items()}
    assert sat == {"-0.0 -> +0.0": [0], "-0.0 stays -0.0": [0x8000]}
    relu = {k: v.tolist() for k, v in ps["relu-minus-zero/fma.rn.relu.bf16"].predictions()
            .items()}
    assert relu == {"-0.0 -> +0.0": [0, 0, 0], "-0.0 stays -0.0": [0x8000] * 3}
    with policy.using(bf16_fma_directed="as_spelled"):      # the reading the spelling suggests
        relu = {k: v.tolist() for k, v in P._zero_probe("fma.rm.relu.bf16", "relu")
                .predictions().items()}
    assert relu == {"-0.0 -> +0.0": [0, 0, 0], "-0.0 stays -0.0": [0x8000] * 3}
    oob = {k: v.tolist() for k, v in ps["oob-sign-c/fma.rn.oob.f16"].predictions().items()}
    nan = policy.current().canonical_nan_f16
    # vectors: 0x7FF7 in a, 0xFFF7 in a, 0xFFF7 in b, 0x7FF7 in c, 0xFFF7 in c
    assert oob == {
        "ignores_sign=True, tests_c=False": [0, 0, 0, nan, nan],
        "ignores_sign=True, tests_c=True": [0, 0, 0, 0, 0],
        "ignores_sign=False, tests_c=False": [0, nan, nan, nan, nan],
        "ignores_sign=False, tests_c=True": [0, nan, nan, 0, nan],
    }
    widen = {k: v.tolist() for k, v in ps["widen-nan/cvt.f32.bf16"].predictions().items()}
    assert list(widen) == ["canonical", "payload", "quiet"]
    assert widen["payload"][:4] == [0x7FF60000, 0xFFF60000, 0x7F810000, 0xFF810000]
    assert widen["quiet"][:4] == [0x7FF60000, 0xFFF60000, 0x7FC10000, 0xFFC10000]
    assert widen["canonical"][:4] == [policy.current().canonical_nan_f32] * 4
    fwiden = {k: v.tolist() for k, v in ps["widen-nan/cvt.f32.f16"].predictions().items()}
    assert fwiden["quiet"] == _WIDEN_F16_QUIET
    assert fwiden["payload"][2:4] == [0x7F802000, 0xFF802000]      # signalling stays so
    assert [s.changes for s in P._widen_probe("cvt.ftz.f32.bf16").settings] == [
        (("widen_nan", w),) for w in ("canonical", "payload", "quiet")]
    assert all(s.predictor is None for p in ps.values() if p.name.startswith("widen-nan/")
               for s in p.settings)                  # every reading is a Policy value
    assert "widen-nan/cvt.sat.f32.f16" not in ps        # .sat: NaN -> +0.0, nothing to see
    csat = {k: v.tolist() for k, v in ps["sat-minus-zero/cvt.rn.sat.f16.f32"].predictions()
            .items()}
    assert csat == {"-0.0 -> +0.0": [0, 0, 0], "-0.0 stays -0.0": [0x8000] * 3}
    cnan = ps["nan/cvt.rz.relu.bf16x2.f32"].predictions()
    assert cnan["0x7FC0"].tolist()[0] == 0x7FC03F80     # a -> d[31:16], b -> d[15:0]


#: cvt.f32.f16 of the widen-nan probe's inputs under widen_nan="quiet", worked by hand:
#: s << 31 | 0x7F800000 | 0x00400000 | fraction << 13 for a NaN (f16 0x7FF6: fraction 0x3F6,
#: << 13 = 0x7EC000), the exact f32 value otherwise
_WIDEN_F16_QUIET = [
    0x7FFEC000, 0xFFFEC000,        # 0x7FF6, 0xFFF6 (quiet, payload 0x1F6)
    0x7FC02000, 0xFFC02000,        # 0x7C01, 0xFC01 (signalling, payload 1: quieted)
    0x7FC00000, 0x7FCAA000,        # 0x7E00, 0x7E55 (fraction 0x255 << 13 = 0x4AA000)
    0x7FFEE000, 0xFFFEE000,        # 0x7FF7, 0xFFF7
    0x7FFFE000, 0xFFFFE000,        # 0x7FFF, 0xFFFF
    0x33800000, 0xB3800000,        # +-2**-24
    0x3F800000, 0x7F800000, 0,     # 1.0, +inf, +0
]


def _native(r, mode="native"):
    """A judged result as run_probe returns it from a kernel of ``mode``."""
    r.mode = mode
    return r


def _judge_as(probe, label, mode="native"):
    return _native(P.judge(probe, probe.predictions()[label]), mode)


def test_judge_picks_the_setting_the_gpu_agrees_with():
    p = P._ftz_probe("fma.rn.ftz.f16x2")
    r = _judge_as(p, "before_rounding")
    assert r.verdict == "before_rounding" and r.decided == {"ftz_tininess": "before_rounding"}
    assert r.agrees is (policy.current().ftz_tininess == "before_rounding")
    r = _judge_as(p, "after_rounding_unbounded")
    assert r.matches == ["after_rounding_unbounded"]
    assert r.decided == {"ftz_tininess": "after_rounding_unbounded"}
    assert "no Policy value" not in r.verdict
    r = P.judge(p, np.full(len(p.vectors), 0x12345678, np.uint32))
    assert r.matches == [] and r.verdict.startswith("none of the settings")
    # a NaN the settings do not list: the measurement itself becomes the answer
    q = P._nan_probe("fma.rn.f16")
    measured = q.current().copy()
    measured[measured == policy.current().canonical_nan_f16] = 0x7FFE
    r = P.judge(q, measured)
    assert r.verdict == "0x7FFE" and r.decided == {"canonical_nan_f16": 0x7FFE}
    assert r.agrees is False
    # NaN bits aside, the rest decides: sign/c grid measured with another NaN
    o = P._oob_probe("fma.rn.oob.bf16")
    m = o.predictions()["ignores_sign=False, tests_c=True"].copy()
    m[m == policy.current().canonical_nan_bf16] = 0x7FC0
    r = P.judge(o, m)
    assert r.matches == [] and r.nan_matches == ["ignores_sign=False, tests_c=True"]
    assert r.decided == {"oob_ignores_sign": False, "oob_tests_c": True}


def test_widen_nan_probe_decides_the_quiet_reading():
    """A GPU that quiets signalling NaNs and keeps payloads (IEEE) is the Policy value
    widen_nan="quiet", judged from hand-worked bits, not from ptxfp's own prediction."""
    p = P._widen_probe("cvt.f32.f16")
    r = P.judge(p, np.array(_WIDEN_F16_QUIET, np.uint32))
    assert r.matches == ["quiet"] and r.verdict == "quiet"
    assert r.decided == {"widen_nan": "quiet"}
    assert r.agrees is (policy.current().widen_nan == "quiet")
    ans = {x["field"]: x for x in P.policy_answers([_native(r)])}
    assert ans["widen_nan"]["measured"] == repr("quiet")
    assert ans["widen_nan"]["status"] == ("confirmed" if policy.current().widen_nan == "quiet"
                                          else "contradicted")
    # a payload-keeping GPU that leaves signalling NaNs signalling is the other reading
    pay = list(_WIDEN_F16_QUIET)
    pay[2:4] = [0x7F802000, 0xFF802000]
    assert P.judge(p, np.array(pay, np.uint32)).decided == {"widen_nan": "payload"}
    # and under the flipped policy the model agrees with that GPU
    with policy.using(widen_nan="quiet"):
        assert P.judge(p, np.array(_WIDEN_F16_QUIET, np.uint32)).agrees is True


def test_policy_answers_confirm_contradict_or_split():
    a = P._ftz_probe("mul.rn.ftz.f16")
    b = P._ftz_probe("fma.rn.ftz.f16")
    now = policy.current().ftz_tininess
    other = "before_rounding" if now == "after_rounding" else "after_rounding"
    ans = {x["field"]: x for x in P.policy_answers([_judge_as(a, now), _judge_as(b, now)])}
    assert ans["ftz_tininess"]["status"] == "confirmed"
    assert ans["canonical_nan_f16"]["status"] == "not probed"
    ans = {x["field"]: x for x in P.policy_answers([_judge_as(a, other), _judge_as(b, other)])}
    assert ans["ftz_tininess"]["status"] == "contradicted"
    assert ans["ftz_tininess"]["measured"] == repr(other)
    ans = {x["field"]: x for x in P.policy_answers([_judge_as(a, now), _judge_as(b, other)])}
    assert ans["ftz_tininess"]["status"] == "differs by form"
    assert set(ans["ftz_tininess"]["by_value"]) == {repr(now), repr(other)}
    # the third reading is a Policy value like the others
    ieee = "after_rounding_unbounded"
    ans = {x["field"]: x for x in P.policy_answers([_judge_as(a, ieee), _judge_as(b, ieee)])}
    assert ans["ftz_tininess"]["measured"] == repr(ieee)
    assert ans["ftz_tininess"]["status"] == ("confirmed" if now == ieee else "contradicted")
    # a NaN measured on bf16 forms answers canonical_nan_bf16 only
    q = P._nan_probe("fma.rn.bf16")
    m = q.current().copy()
    m[m == policy.current().canonical_nan_bf16] = 0x7FC0
    ans = {x["field"]: x for x in P.policy_answers([_native(P.judge(q, m))])}
    assert ans["canonical_nan_bf16"]["measured"] == "0x7FC0"
    assert ans["canonical_nan_bf16"]["status"] == "contradicted"
    assert ans["canonical_nan_f16"]["status"] == "not probed"


def test_nan_probes_name_the_field_of_their_result_format():
    want = dict(policy.NAN_FIELDS)          # f16/bf16/f32 and the small-float formats
    for fmt in [f for f, fld in want.items() if fld in NOT_IN_HARNESS]:
        del want[fmt]                       # .f64: its forms are not in the harness yet
    seen = set()
    for p in P.probes():
        if not p.name.startswith("nan/"):
            continue
        fmt = F.parse_form(p.spelling).result_format
        assert p.fields == (want[fmt],), p.name
        seen.add(fmt)
        # each setting moves that field, and its prediction follows it alone
        for s in p.settings:
            assert [k for k, _ in s.changes] == [want[fmt]], p.name
    assert seen == set(want)
    for s, fld in (("mul.rn.bf16x2", "canonical_nan_bf16"),
                   ("add.rn.f32.bf16", "canonical_nan_f32"),
                   ("fma.rn.ftz.f16x2", "canonical_nan_f16")):
        assert P._nan_probe(s).fields == (fld,), s
    for s, fld in (("cvt.rn.bf16.f32", "canonical_nan_bf16"),
                   ("cvt.rn.f16.f32", "canonical_nan_f16"),
                   ("cvt.rz.relu.bf16x2.f32", "canonical_nan_bf16")):
        assert P._cvt_nan_probe(s).fields == (fld,), s


# ---- the command -----------------------------------------------------------------------------------


def test_dry_run_writes_the_report_and_json(tmp_path, capsys):
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    form = P.CANARY_FORMS[0]
    rc = command.main(["--backend", "model", "--forms", form, "--vectors", "2000",
                       "--test-vectors", "0", "--probes", "nan/*,ftz-*", "--jobs", "1",
                       "--out", str(md), "--json", str(js), "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "dry run (no hardware)" in out
    text = md.read_text()
    assert "DRY RUN" in text and f"| `{form}` | native | sm_90 |" in text
    assert "## Policies" in text and "`canonical_nan_f16`" in text
    run = json.loads(js.read_text())
    assert run["summary"]["mismatches"] == 0
    assert run["meta"]["hardware"] is False
    names = {p["name"] for p in run["probes"]}
    assert names == {f"nan/{form}", f"ftz-tininess/{form}"}
    assert all(p["agrees"] is not False for p in run["probes"])


def test_no_gpu_backend_is_one_line_and_exit_2(monkeypatch, capsys):
    for mod in ("cupy", "cuda", "cuda.bindings", "cuda.bindings.driver"):
        monkeypatch.setitem(sys.modules, mod, None)        # import fails
    rc = command.main(["--forms", "add.rn.f16"])
    assert rc == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    with pytest.raises(HardwareUnavailable):
        get_runner("cupy")


def test_user_errors_are_one_line_and_exit_2(capsys):
    assert command.main(["--forms", "add.rn.f17"]) == 2
    assert command.main(["--forms", "nothing*"]) == 2
    assert command.main(["--forms", "none", "--probes", "none"]) == 2
    assert command.main(["--exhaustive-c", "zero", "--backend", "model"]) == 2
    assert command.main(["--vectors", "-1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 5


def test_list_and_emit_ptx_need_no_gpu(tmp_path, capsys):
    assert command.main(["--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(ALL)
    assert any(ln.startswith("fma.rn.f32.f16 ") and "decomposed" in ln for ln in out)
    assert command.main(["--list", "--sm", "100", "--forms", "fma.rn.f32.f16"]) == 0
    assert "native" in capsys.readouterr().out
    assert command.main(["--emit-ptx", str(tmp_path), "--forms", "fma.*.bf16x2"]) == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    assert "fma.rn.oob.relu.bf16x2.ptx" in files
    assert len(files) == len([s for s in FORMS if s.startswith("fma.") and
                              s.endswith(".bf16x2")])


def test_select_forms_takes_spellings_and_globs():
    assert command.select_forms("add.f16,fma.rn.bf16") == ["add.f16", "fma.rn.bf16"]
    assert command.select_forms("fma.rn.oob.*") == [s for s in FORMS
                                                    if s.startswith("fma.rn.oob.")]
    assert command.select_forms("all") == ALL and command.select_forms("none") == []
    assert command.select_forms("cvt.*") == CVT


def test_conformance_doc_says_how_to_run():
    text = (ROOT / "docs" / "conformance.md").read_text()
    assert "python -m ptxfp.hw" in text
    assert "No GPU run has happened yet" not in text and "| GPU |" in text
    assert report.howto() in text              # the how-to part is the harness's own text
    doc = report.placeholder()
    assert report.howto() in doc and "--record" in doc and "--replay" in doc
    assert report.COMMAND in doc and "--budget 540" in report.COMMAND
    assert "--preflight" in doc and "--resume" in doc and "--exhaustive-only" in doc
    for word in ("lent", "$OUT", "device tool", "session"):
        assert word not in doc, word
    # the sweep plan's numbers are the tables'
    eligible = [s for s in ALL if V.exhaustive_eligible(s)]
    total = sum(V.exhaustive_size(s) * len(V.exhaustive_c_values(s)) for s in eligible)
    assert f"{len(eligible)} sweeps, {total / 1e9:.1f} G vectors" in doc
    # every option the doc names exists (the code blocks of other tools, such as
    # tools/ptxm_compare.py's command, are theirs)
    import re
    theirs = re.compile(r"```\n(?:(?!```).)*?```", re.S)
    text = theirs.sub(lambda m: m.group(0) if "ptxfp.hw" in m.group(0) else "", text)
    names = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", doc + text))
    known = {a for act in command._parser(None)._actions for a in act.option_strings}
    assert names <= known, names - known


def test_main_is_exposed_for_the_cli():
    import ptxfp.hw
    assert ptxfp.hw.main is command.main


# ---- slow and GPU ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_dry_run_over_every_form_in_worker_processes(tmp_path):
    rc = command.main(["--backend", "model", "--vectors", "5000", "--jobs", "2", "--quiet",
                       "--json", str(tmp_path / "r.json")])
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["summary"]["forms"] == len(ALL) and run["summary"]["errors"] == 0
    assert rc == 0


@pytest.mark.gpu
def test_gpu_runs_forms_and_probes():
    try:
        runner = get_runner("auto")
    except HardwareUnavailable as exc:
        pytest.skip(str(exc))
    try:
        for s in ("add.rn.f16", "fma.rn.bf16", "fma.rn.oob.relu.bf16x2", "fma.rn.f32.f16",
                  "mul.rn.ftz.sat.f16x2"):
            r = verify_form(runner, s, n_random=20000, seed=2)
            assert r.error is None, r.error
            assert r.mismatches == 0, r.to_dict()
        for p in P.probes(["fma.rn.oob.relu.f16", "mul.rn.ftz.f16"]):
            r = P.run_probe(runner, p)
            assert r.error is None and r.verdict, r
    finally:
        runner.close()


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_small_float_cvt_kernels_are_accepted_by_ptxas(tmp_path):
    """The harness' kernel of every small-float and .rs cvt form, for an sm_90 GPU (fp8
    native; the others written for their first target and labelled not runnable) and an sm_100
    one (all native, .target sm_100a where the row lists its targets): ptxas 13.0 takes each."""
    from ptxfp.ops.smallfloat import handles
    small = [s for s in CVT if handles(F.parse_form(s))]
    assert len(small) == 117              # ptxas 13.5's forms (tests/data/ptxas/13.5)
    for s in small:
        ins = F.parse_form(s)
        for sm in (90, 100):
            k = K.kernel_for(s, sm)
            if not _ptxas_knows(k):
                continue
            assert k.mode == (K.NOT_RUNNABLE if sm == 90 and ins.row.targets else "native"), s
            path = tmp_path / "k.ptx"
            path.write_text(k.ptx)
            arch = k.target if k.target[-1] in "af" else f"sm_{k.sm}"
            r = subprocess.run(["ptxas", "-arch", arch, str(path), "-o", os.devnull],
                               capture_output=True, text=True)
            assert r.returncode == 0, (s, sm, r.stderr[-300:])
