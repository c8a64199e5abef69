"""Issue #29: what a new user and a fuzzer hit.  Each mistake is one ptxfp error line (exit
status 2 in the CLI), bounded in time and memory, quoting at most a few dozen characters of
the input.  Expected messages are the rules themselves (PTX's 64-bit addresses, .pred guards),
not ptxfp's output."""

from __future__ import annotations

import time

import numpy as np
import pytest

import ptxfp
from ptxfp.cli import main
from ptxfp.errors import PtxfpError, names, shorten


def cli(capsys, *argv):
    rc = main(list(argv))
    o, e = capsys.readouterr()
    return rc, o, e


# ---- items 1-4, 17: ptxfp.run's tracebacks become one line --------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda: ptxfp.run("ld.global.u32 v, [18446744073709551612];", memory=bytes(4096),
                       block=4), "address 0xfffffffffffffffc (+4 bytes) is outside"),
    (lambda: ptxfp.run("@%laneid bra L;\nL: ret;", block=1),
     "'%laneid' is a special register, not a predicate"),
    (lambda: ptxfp.run("setp.eq.b128 p, a, b;", block=1), "'setp.eq.b128'"),
    (lambda: ptxfp.run(None), "must be PTX text (a str), got NoneType"),
    (lambda: ptxfp.run(b"ret;"), "got bytes (decode it first"),
    (lambda: ptxfp.run(12), "got int"),
    (lambda: ptxfp.run("ret;", entry="x"), "entry='x': the text is a snippet"),
    (lambda: ptxfp.run("oob.ptx"), "'oob.ptx' looks like a file name"),
    (lambda: ptxfp.run("  kernels/a.ptx\n"), "looks like a file name"),
])
def test_run_mistakes_are_one_ptxfp_error(call, words):
    with pytest.raises(PtxfpError) as e:
        call()
    assert words in str(e.value) and "\n" not in str(e.value)


def test_register_plus_offset_past_2_63_wraps_as_64_bit_addresses_do():
    mem = np.arange(16, dtype=np.uint32).tobytes()
    r = ptxfp.run(".reg .u64 a;\nld.global.u32 v, [a+18446744073709551612];",
                  {"a": 12}, memory=mem)
    assert r["v"].tolist() == [2]                     # 12 - 4 = byte 8: the third word


def test_file_name_check_leaves_ptx_alone():
    assert ptxfp.run("ret;") == {}
    assert ptxfp.run("mov.u32 r, 7;")["r"].tolist() == [7]


def test_cli_constant_address_past_2_63_is_one_line(capsys, tmp_path):
    p = tmp_path / "k.ptx"
    p.write_text("ld.global.u32 v, [18446744073709551612];\n")
    rc, o, e = cli(capsys, "run", str(p), "--memory", "4096", "--threads", "4")
    assert rc == 2 and "Traceback" not in e and "outside" in e


# ---- item 10: messages cut what they quote --------------------------------------------------

def test_shorten_and_names():
    assert shorten("abc") == "abc"
    s = shorten("x" * 10_000_000)
    assert len(s) < 120 and "characters" in s
    n = names(f"f{k}" for k in range(100_000))
    assert len(n) < 200 and "(99990 more)" in n


@pytest.mark.parametrize("call", [
    lambda: ptxfp.run("bra " + "L" * 10_000_000 + ";"),
    lambda: ptxfp.compute("add.rn." + "f" * 1_000_000, 1, 2),
    lambda: ptxfp.execute("add." + "q" * 1_000_000, 1, 2),
    lambda: ptxfp.run("".join(f".entry f{k}() {{ ret; }}\n" for k in range(100_000))),
    lambda: ptxfp.run(".entry f() { ret; }", entry="e" * 1_000_000),
])
def test_messages_quote_little_of_huge_input(call):
    with pytest.raises(PtxfpError) as e:
        call()
    assert len(str(e.value)) < 600, str(e.value)[:300]


# ---- item 8: the work (thread-instructions) is bounded --------------------------------------

SPIN = "L: add.u32 x, x, 1;\nbra L;\n"


def test_runaway_launch_over_a_big_grid_stops_within_seconds(capsys, tmp_path):
    p = tmp_path / "spin.ptx"
    p.write_text(SPIN)
    t = time.perf_counter()
    rc, o, e = cli(capsys, "run", str(p), "--set", "x=0", "--grid", "1000000", "--block", "1")
    assert time.perf_counter() - t < 30
    assert rc == 2 and "Traceback" not in e
    assert "work limit reached: more than 500000000 thread-instructions" in e
    assert "--max-work" in e and "loop at label 'L'" in e


def test_max_work_counts_every_thread():
    from ptxfp.ptx.interp import MAX_WORK, StepLimit
    assert MAX_WORK == 500_000_000
    with pytest.raises(StepLimit, match="more than 1000 thread-instructions"):
        ptxfp.run(SPIN, {"x": 0}, threads=100, max_work=1000)
    from ptxfp.ptx.interp import run_detailed
    ok = run_detailed("add.u32 x, x, 1;", {"x": 0}, threads=100, max_work=100)
    assert ok.thread_instructions == 100
    with pytest.raises(PtxfpError, match="max_work=0"):
        ptxfp.run("ret;", max_work=0)


# ---- items 5, 13: compute / convert / execute point at the right entry -----------------------

def test_compute_of_an_mma_spelling_points_at_ptxfp_mma():
    with pytest.raises(ptxfp.SpellingError, match=r"tensor-core .*ptxfp\.mma\(form, A, B, C\)"):
        ptxfp.compute("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 1, 2, 3)
    with pytest.raises(ptxfp.SpellingError, match=r"ptxfp\.mma"):
        ptxfp.execute("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 1, 2, 3)


def test_execute_of_another_family_names_ptxfp_compute():
    with pytest.raises(ptxfp.SpellingError) as e:
        ptxfp.execute("add.s32", 1, 2)
    assert "an int spelling: run it with ptxfp.compute" in str(e.value)
    assert "dispatch" not in str(e.value)


def test_f64_takes_python_floats():
    # a Python float is a binary64: exact, no rounding; 1 + 2 = 3 and 0.1 + 0.2 as IEEE says
    assert ptxfp.compute("add.rn.f64", 1.0, 2.0) == 3.0
    assert ptxfp.compute("add.rn.f64", 0.1, 0.2) == 0.30000000000000004
    assert ptxfp.compute("mul.rn.f64", [1.5, -2.0], 2.0).tolist() == [3.0, -4.0]
    with pytest.raises(ptxfp.OperandError, match="Python float 1.5; this operand takes integers"):
        ptxfp.compute("add.s32", 1.5, 2)


def test_convert_of_an_integer_cvt_gives_the_answer():
    assert ptxfp.convert("cvt.rn.f32.s32", 5) == 0x40A00000          # 5.0f
    assert ptxfp.convert("cvt.rn.f32.s32", -1) == 0xBF800000         # -1.0f
    assert ptxfp.convert("cvt.rn.f32.s32", 5) == ptxfp.compute("cvt.rn.f32.s32", 5)


def test_eval_takes_decimal_f64_literals(capsys):
    rc, o, e = cli(capsys, "eval", "sqrt.rn.f64", "2.0f64")
    assert rc == 0 and "0x4000000000000000" in o and "0x3ff6a09e667f3bcd" in o   # sqrt(2), RN
    rc, o, e = cli(capsys, "eval", "add.rn.f64", "0.1f64", "0.2f64")
    assert rc == 0 and "0.30000000000000004" in o


# ---- items 6, 21: policy mistakes are PolicyErrors, values are checked ----------------------

@pytest.mark.parametrize("changes, words", [
    (dict(no_such=1), "'no_such' is not a policy field"),
    (dict(widen_nan="x"), "must be one of 'canonical', 'payload', 'quiet'"),
    (dict(ftz_tininess="after_rounding_unbonded"), "must be one of"),
    (dict(per_form=(("x",),)), "is not a (glob, field, value) tuple"),
    (dict(per_form=(("cvt.f32.bf16", "widen_nann", "payload"),)), "did you mean 'widen_nan'"),
    (dict(per_form=(("cvt.f32.bf16", "widen_nan", "paylod"),)), "must be one of"),
    (dict(per_form=(("cvt.f32.bf17", "widen_nan", "payload"),)), "matches no instruction"),
    (dict(canonical_nan_bf16=0x3F80), "0x3f80 is not a NaN"),     # 1.0 in bf16
    (dict(canonical_nan_bf16=0x17FFF), "does not fit in the format's 16 bits"),
    (dict(canonical_nan_f32=0x7F800000), "is not a NaN"),          # +inf
    (dict(canonical_nan_e4m3=0x7E), "is not a NaN"),               # 448
    (dict(canonical_nan_f16="0x7e00"), "expected the bits as an int"),
    (dict(oob_tests_c=1), "expected True or False"),
])
def test_policy_mistakes_are_policy_errors(changes, words):
    from ptxfp.errors import PolicyError
    with pytest.raises(PolicyError) as e:
        with ptxfp.policy.using(**changes):
            pass
    assert words in str(e.value)


def test_policy_value_of_an_unknown_field():
    from ptxfp.errors import PolicyError
    with pytest.raises(PolicyError, match="'nope' is not a policy field"):
        ptxfp.POLICY.value("nope", "add.rn.f16")


def test_valid_policy_values_still_pass():
    with ptxfp.policy.using(canonical_nan_bf16=0x7FC0, canonical_nan_f64=0x7FF8000000000000,
                            canonical_nan_e4m3=0xFF, nan_to_e2m1=0x7,
                            per_form=(("cvt.r[nz].f32.bf16", "widen_nan", "payload"),)) as p:
        assert p.value("widen_nan", "cvt.rz.f32.bf16") == "payload"


# ---- item 12: eval labels the destination by its own type -----------------------------------

@pytest.mark.parametrize("argv, line", [
    (["setp.lt.f32", "1.0f32", "2.0f32"], "  d  pred  1           true"),
    (["testp.finite.f32", "1.0f32"], "  d  pred  1           true"),
    (["mul.wide.s32", "-2", "3"], "  d  s64  0xfffffffffffffffa  -6"),   # -2 * 3 in 64 bits
])
def test_eval_labels_the_destination(capsys, argv, line):
    rc, o, e = cli(capsys, "eval", *argv)
    assert rc == 0 and line in o.splitlines()


# ---- items 14, 15: run names illegal mma spellings illegal; --help lists what runs ----------

MMA_MODULE = """.version 8.0
.target sm_90
.entry k() {
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f64 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3},
      {%r4,%r5}, {%f4,%f5,%f6,%f7};
  ret;
}
"""


def test_run_calls_an_illegal_mma_spelling_illegal():
    with pytest.raises(PtxfpError) as e:
        ptxfp.run(MMA_MODULE, threads=32)
    assert "is not a legal mma spelling: illegal types '.f32.f16.f16.f64'" in str(e.value)
    assert "not modeled" not in str(e.value)


def test_run_help_lists_only_what_the_interpreter_runs(capsys):
    from ptxfp.ptx.interp import _COMPILERS
    try:
        main(["run", "--help"])
    except SystemExit:
        pass
    o = capsys.readouterr().out
    listed = o.split("(besides every form 'ptxfp list' shows):", 1)[1].split("examples:")[0]
    names = {w.strip(",") for w in listed.split()}
    assert names == set(_COMPILERS)
    # wgmma runs (the sm_90a data path, tests/test_interp_hopper.py); wmma does not
    assert "wgmma" in names and "wmma" not in names
    with pytest.raises(PtxfpError, match="'wmma.load.a.sync.aligned.row.m16n16k16.f16' is not "
                                         "modeled by the interpreter: wmma is not wired"):
        ptxfp.run("wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1, %r2}, [%rd1];")


# ---- item 16: --set NAME=@FILE.npy takes a bfloat16 array saved by np.save -------------------

def test_set_reads_a_saved_bfloat16_array(capsys, tmp_path):
    import ml_dtypes
    av = np.array([1.0, -2.5, 3.0], ml_dtypes.bfloat16)
    np.save(tmp_path / "av.npy", av)
    assert np.load(tmp_path / "av.npy").dtype.str == "|V2"       # what NumPy writes
    p = tmp_path / "k.ptx"
    p.write_text("add.rn.bf16 d, a, a;\n")
    rc, o, e = cli(capsys, "run", str(p), "--set", f"a=@{tmp_path / 'av.npy'}", "--json")
    assert rc == 0, e
    import json
    d = json.loads(o)
    text = json.dumps(d)
    for bits in (0x4000, 0xC0A0, 0x40C0):                        # 2.0, -5.0, 6.0 in bf16
        assert str(bits) in text or hex(bits) in text


# ---- item 18: a deadlock names the line where the stuck block waits -------------------------

def test_deadlock_names_the_stuck_blocks_barrier_line():
    # block 0 passes 'bar.sync 0' at line 11; in block 1, threads 0-31 wait at 'bar.sync 0'
    # on line 9 and threads 32-63 at 'bar.sync 1' on line 7: barrier 0 of block 1 never opens
    src = ("mov.u32 c, %ctaid.x;\nmov.u32 t, %tid.x;\nsetp.eq.u32 q, c, 0;\n@q bra B;\n"
           "setp.lt.u32 p, t, 32;\n@p bra A;\nbar.sync 1;\nbra E;\nA: bar.sync 0;\nbra E;\n"
           "B: bar.sync 0;\nE: ret;")
    with pytest.raises(PtxfpError) as e:
        ptxfp.run(src, grid=2, block=64)
    msg = str(e.value)
    assert msg.startswith("9:4: barrier 0 never opens: in block (1, 0, 0)"), msg
    assert "waits at the barrier at line 7" in msg


# ---- item 9: input and work weighed before starting ----------------------------------------

@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("cmd", ["run", "check"])
def test_binary_devices_are_refused_at_once(capsys, dev, cmd):
    t = time.perf_counter()
    rc, o, e = cli(capsys, cmd, dev)
    assert time.perf_counter() - t < 5
    assert rc == 2 and ("NUL byte" in e or "not a UTF-8 text file" in e)


def test_text_past_the_memory_is_refused_before_reading(capsys, tmp_path, monkeypatch):
    from ptxfp import limits
    p = tmp_path / "big.ptx"
    p.write_text("add.rn.f16 d, a, b;\n" * 200_000)                   # 4 MB
    monkeypatch.setattr(limits, "available", lambda: 64 << 20)
    rc, o, e = cli(capsys, "run", str(p))
    assert rc == 2 and "of text" in e and "80 bytes of memory a byte" in e
    with pytest.raises(ptxfp.ResourceError, match="the program text"):
        ptxfp.run(p.read_text())


def test_matmul_past_the_memory_is_refused_at_once(monkeypatch):
    t = time.perf_counter()
    with pytest.raises(ptxfp.ResourceError, match=r"^matmul \(A 100000x16, B 16x100000\)"):
        ptxfp.matmul(np.zeros((100_000, 16), np.float16), np.zeros((16, 100_000), np.float16))
    from ptxfp import limits
    monkeypatch.setattr(limits, "available", lambda: 1 << 30)
    a = np.zeros((1, 10**8), np.float16)
    with pytest.raises(ptxfp.ResourceError, match=r"A 1x100000000, B 100000000x1"):
        ptxfp.matmul(a, a.reshape(-1, 1))
    assert time.perf_counter() - t < 5


def test_matmul_errors_name_matmul_not_a_form_the_user_never_wrote():
    with pytest.raises(ptxfp.OperandError) as e:
        ptxfp.matmul(np.zeros((4, 5), np.float16), np.zeros((6, 3), np.float16))
    assert str(e.value).startswith("matmul: A is 4x5 and B is 6x3") and "wgmma" not in str(e.value)
    with pytest.raises(ptxfp.OperandError, match="^A of matmul: a matrix has at least 2"):
        ptxfp.matmul(np.zeros(4, np.float16), np.zeros((4, 3), np.float16))


# ---- item 20: --record --backend model draws its vectors without NumPy warnings -------------

def test_mma_vectors_draw_without_runtime_warnings():
    import warnings
    from ptxfp.hw import mma as hw_mma
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hw_mma._bits(np.array([1e300, -1e300]), "e4m3").tolist() == [0x7F, 0xFF]
        assert hw_mma._bits(np.array([1e300]), "f16").tolist() == [0x7C00]     # +inf
        for s in ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
                  "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                  "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"):
            hw_mma.vectors(s, n=16, seed=1)


# ---- docs paragraph: counts say what they count ---------------------------------------------

def test_out_counts_every_key_and_list_says_one_form(capsys, tmp_path):
    p = tmp_path / "k.ptx"
    p.write_text("mov.u32 r, 7;\nmov.u32 s, 8;\n")
    out = tmp_path / "o.npz"
    rc, o, e = cli(capsys, "run", str(p), "--out", str(out))
    keys = np.load(out).files
    assert rc == 0 and len(keys) == 3
    assert f"wrote 3 arrays to {out} (r, s, threads)" in o
    rc, o, e = cli(capsys, "list", "add.rn.f16")
    assert rc == 0 and o.splitlines()[-1] == "1 form"
