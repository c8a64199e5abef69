"""The ptxfp command: eval, check, run, list, verify; one-line errors with exit status 2.

Expected bits are the manual's and SEMANTICS.md's witnesses, NumPy float16/float32 encodings,
and values worked out by hand in the comments, never ptxfp's own output.
"""

import io
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from ptxfp.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(err):
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("ptxfp: error: ") and "Traceback" not in err


# --- eval -------------------------------------------------------------------------------------

def test_eval_double_rounding_witness(capsys):
    rc, out, _ = cli(capsys, "eval", "fma.rn.bf16", "0x3F82", "0x3FA0", "0x0001")
    assert rc == 0
    d = [ln for ln in out.splitlines() if ln.strip().startswith("d ")][0]
    assert "0x3fa3" in d and "1.2734375" in d                 # SEMANTICS.md: not 0x3fa2
    assert "PTX 7.0, sm_80" in out


def test_eval_literals_and_lanes(capsys):
    # 1.0 + 0.5 = 1.5 (0x3e00) in lane 0, 2.0 + 0.25 = 2.25 (0x4080) in lane 1
    rc, out, _ = cli(capsys, "eval", "add.f16x2", "1.0f16,2.0f16", "0.5f16,0.25f16", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["result"]["hex"] == "0x40803e00"
    assert doc["result"]["bits"] == 0x40803E00 and doc["operands"]["a"]["bits"] == 0x40003C00
    assert "[15:0] 1.5" in doc["result"]["text"]
    # JSON numbers, lane by lane (lane 0 = bits [15:0])
    assert [(ln["bits"], ln["value"]) for ln in doc["result"]["lanes"]] == [(0x3E00, 1.5),
                                                                           (0x4080, 2.25)]


@pytest.mark.parametrize("literal, fmt, bits", [
    ("1.5f16", "f16", 0x3E00), ("-2.0bf16", "bf16", 0xC000), ("1e-3f32", "f32",
                                                               int(np.float32(1e-3).view(np.uint32))),
    ("0.1f16", "f16", int(np.float16(0.1).view(np.uint16))), ("-inff16", "f16", 0xFC00),
    ("-0.0bf16", "bf16", 0x8000), ("65520f16", "f16", 0x7C00), ("6e-8f16", "f16", 0x0001),
    # exactly halfway between 1.0 and 1 + 2**-10 plus a hair: a binary64 parse would land on
    # the midpoint and tie to even (0x3c00); one exact rounding goes up
    ("1.00048828125000000000000001f16", "f16", 0x3C01),
    ("0x3c00", "f16", 0x3C00), ("15360", "f16", 0x3C00), ("0f3F800000", "f32", 0x3F800000),
])
def test_eval_literal_encoding(capsys, literal, fmt, bits):
    spelling = {"f16": "add.f16", "bf16": "add.bf16", "f32": "cvt.rn.f16.f32"}[fmt]
    args = [literal] if fmt == "f32" else [literal, "0x8000" if fmt == "f16" else "0x8000"]
    rc, out, _ = cli(capsys, "eval", spelling, *args, "--json")
    assert rc == 0
    assert json.loads(out)["operands"]["a"]["bits"] == bits


def test_eval_cvt(capsys):
    rc, out, _ = cli(capsys, "eval", "cvt.rn.bf16x2.f32", "1.0f32", "3.0f32", "--json")
    assert rc == 0 and json.loads(out)["result"]["hex"] == "0x3f804040"    # a -> upper half
    rc, out, _ = cli(capsys, "eval", "cvt.rn.satfinite.f16.f32", "1e6f32", "--json")
    doc = json.loads(out)["result"]
    assert (doc["bits"], doc["value"]) == (0x7BFF, 65504.0)


@pytest.mark.parametrize("argv, words", [
    (["eval", "add.f16", "zz", "1"], "cannot read 'zz'"),
    (["eval", "add.f16", "1.5f32", "1"], ".f32 literal"),
    (["eval", "add.bf16", "1.5f16", "1"], ".f16 literal"),
    (["eval", "add.f16", "0x10000", "1"], "does not fit in 16 bits"),
    (["eval", "add.f16", "-1", "1"], "negative"),
    (["eval", "fma.rn.f16", "1", "2"], "takes 3 operands"),
    (["eval", "fma.f16", "1", "2", "3"], "rounding modifier required"),
    (["eval", "frob.rn.f16", "1", "2"], "unknown instruction"),
    (["eval", "add.f16", "1.0f16,2.0f16", "1"], "pair"),
    (["bogus"], "invalid choice"),
    (["eval"], "required"),
])
def test_user_errors_are_one_line(capsys, argv, words):
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and one_line_error(err), err
    assert words in err



def test_debug_shows_the_traceback(capsys, monkeypatch):
    """PTXFP_DEBUG=1: a user error is raised, not turned into one line (so that a ValueError
    of ptxfp's own is not mistaken for a bad input)."""
    monkeypatch.setenv("PTXFP_DEBUG", "1")
    with pytest.raises(ValueError, match="unknown instruction"):
        main(["eval", "frob.rn.f16", "1", "2"])
    monkeypatch.setenv("PTXFP_DEBUG", "0")
    rc, out, err = cli(capsys, "eval", "frob.rn.f16", "1", "2")
    assert rc == 2 and one_line_error(err), err

# --- check ------------------------------------------------------------------------------------

def test_check_reports_errors_with_positions(tmp_path, capsys):
    f = tmp_path / "k.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                 ".visible .entry k() {\n.reg .b16 %h<4>;\n"
                 "fma.rn.oob.f16 %h0, %h1, %h2, %h3;\nret;\n}\n")
    rc, out, _ = cli(capsys, "check", str(f))
    assert rc == 1
    err = [ln for ln in out.splitlines() if ": error: " in ln]
    assert err and err[0].startswith(f"{f}:6:1: error: ") and err[0].endswith("]")
    rc, out, _ = cli(capsys, "check", str(f), "--version", "8.1")
    assert rc == 0 and ": error: " not in out
    rc, out, _ = cli(capsys, "check", str(f), "--json")
    doc = json.loads(out)
    assert rc == 1 and not doc["ok"] and doc["diagnostics"][0]["line"] == 6


def test_check_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("fma.rz.f16\n"))
    rc, out, _ = cli(capsys, "check", "-")
    assert rc == 1 and "<stdin>:1:" in out and "[illegal-rounding]" in out


def test_check_missing_file(capsys, tmp_path):
    rc, _, err = cli(capsys, "check", str(tmp_path / "nope.ptx"))
    assert rc == 2 and one_line_error(err) and "no such file" in err


# --- run --------------------------------------------------------------------------------------

def test_run_double_rounding_example(capsys):
    rc, out, _ = cli(capsys, "run", str(EXAMPLES / "double_rounding.ptx"),
                     "--set", "a=1.015625bf16", "b=1.25bf16", "c=0x0001")
    assert rc == 0
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()[1:]}
    assert rows["fused"][1:3] == ["bf16", "0x3fa3"] and rows["twice"][1:3] == ["bf16", "0x3fa2"]
    assert rows["a"][2] == "0x3f82"


def test_run_threads_and_json(tmp_path, capsys):
    f = tmp_path / "s.ptx"
    f.write_text("cvt.rn.f16.f32 h, x;\nadd.f16 d, h, h;\nmov.u32 t, %tid.x;\n")
    rc, out, _ = cli(capsys, "run", str(f), "--set", "x=1.0f32", "2.0f32", "0x7f800000",
                     "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["threads"] == 3
    assert doc["registers"]["d"]["hex"] == ["0x4000", "0x4400", "0x7c00"]  # 2, 4, inf
    assert doc["registers"]["d"]["bits"] == [0x4000, 0x4400, 0x7C00]
    # numbers; JSON has no infinity: null, with the text alongside
    assert doc["registers"]["d"]["values"] == [2.0, 4.0, None]
    assert doc["registers"]["d"]["texts"] == ["2.0", "4.0", "inf"]
    assert doc["registers"]["t"]["bits"] == [0, 1, 2]
    rc, out, _ = cli(capsys, "run", str(f), "--set", "x=1.0f32", "--threads", "2")
    assert rc == 0 and "thread 1:" in out


def test_run_axpy_with_memory_file(capsys):
    rc, out, _ = cli(capsys, "run", str(EXAMPLES / "axpy.ptx"), "--memory",
                     str(EXAMPLES / "axpy.bin"), "--threads", "4", "--set", "axpy_x=0",
                     "axpy_y=64", "axpy_a=2.0bf16", "axpy_n=4")
    assert rc == 0
    # y = 2*x + y: 2*1+0.5 = 2.5 (0x4020), 2*2+0.25 = 4.25 (0x4088), 2*3-6 = 0, 2*-4+8 = 0
    row = [ln for ln in out.splitlines() if ln.strip().startswith("0x0040:")][0]
    assert row.split()[1:9] == ["20", "40", "88", "40", "00", "00", "00", "00"]


@pytest.mark.parametrize("text, argv, words", [
    ("add.f16 d, a, b;", ["--set", "a=1.0f16"], "register 'b' is read before it is set"),
    ("add.f16 d, a, a;", ["--set", "q=1"], "no register or parameter 'q'"),
    ("add.f16 d, a, a;", ["--set", "a=1.0f32"], "32-bit .f32 literal"),
    ("tanh.approx.f32 d, a;", ["--set", "a=1.0f32"], "'tanh.approx.f32' on sm_75 is not computed"),
    ("add.f16 d, a, ;", [], "syntax error"),
    ("add.f16 d, a, a;", ["--set", "a=1", "--threads", "0"], "--threads"),
])
def test_run_user_errors(tmp_path, capsys, text, argv, words):
    f = tmp_path / "e.ptx"
    f.write_text(text)
    rc, _, err = cli(capsys, "run", str(f), *argv)
    assert rc == 2 and one_line_error(err), err
    assert words in err


def test_run_error_names_position(tmp_path, capsys):
    f = tmp_path / "e.ptx"
    f.write_text("add.f16 d, a, a;\n  bar.red.and.pred p, 0, q;\n")
    rc, _, err = cli(capsys, "run", str(f), "--set", "a=1")
    assert rc == 2 and "2:3:" in err and "'bar.red.and.pred'" in err


# --- list, verify, help -------------------------------------------------------------------------

def test_list(capsys):
    rc, out, _ = cli(capsys, "list")
    assert rc == 0
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()[1:-1]}
    # manual 9.7.4.4: .oob needs PTX 8.1 and sm_90; 9.7.5: mixed forms 8.6 / sm_100
    assert rows["fma.rn.oob.relu.bf16x2"][1:3] == ["8.1", "sm_90"]
    assert rows["add.rn.f32.bf16"][1:3] == ["8.6", "sm_100"]
    assert rows["cvt.rn.relu.bf16x2.f32"][1:3] == ["7.0", "sm_80"]
    assert rows["cvt.rn.satfinite.f16.f32"][1:3] == ["8.1", "sm_70"]     # ptxas, not 8.1/sm_80
    assert rows["cvt.rn.f16.f32"][1:3] == ["1.0", "sm_10"]
    assert rows["cvt.rn.ftz.f16.f32"][1:3] == ["1.4", "sm_10"]
    # ptxas 13.0 also takes .oob.sat on f16 (isa.py since 4a128ea): the filter lists exactly
    # the table's forms that match
    rc, out, _ = cli(capsys, "list", "oob", ".f16x2", "--json")
    got = [d["spelling"] for d in json.loads(out)]
    assert rc == 0 and got == ["fma.rn.oob.f16x2", "fma.rn.oob.relu.f16x2",
                               "fma.rn.oob.sat.f16x2"]
    rc, _, err = cli(capsys, "list", "nothing-like-this")
    assert rc == 2 and one_line_error(err)


def test_verify_delegates(capsys, monkeypatch):
    import ptxfp.hw
    seen = {}

    def fake(argv, prog=None):
        seen["argv"], seen["prog"] = argv, prog
        return 1
    monkeypatch.setattr(ptxfp.hw, "main", fake)
    assert main(["verify", "--forms", "fma.rn.bf16", "--help"]) == 1
    assert seen == {"argv": ["--forms", "fma.rn.bf16", "--help"], "prog": "ptxfp verify"}


def test_verify_without_harness(capsys, monkeypatch):
    import ptxfp
    monkeypatch.delattr(ptxfp, "hw", raising=False)
    monkeypatch.setitem(sys.modules, "ptxfp.hw", None)           # makes the import fail
    rc, _, err = cli(capsys, "verify", "--list")
    assert rc == 2 and one_line_error(err) and "ptxfp.hw" in err


@pytest.mark.parametrize("cmd", [[], ["eval"], ["check"], ["run"], ["list"]])
def test_help_has_examples(capsys, cmd):
    rc, out, _ = cli(capsys, *cmd, "--help")
    assert rc == 0 and "examples:" in out and "usage: ptxfp" in out


def test_subprocess_entry_point():
    """Once through a real process: the console entry point's module, exit codes, stderr."""
    ok = subprocess.run([sys.executable, "-m", "ptxfp.cli", "eval", "fma.rn.bf16", "0x3F82",
                         "0x3FA0", "0x0001"], capture_output=True, text=True)
    assert ok.returncode == 0 and "0x3fa3" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "ptxfp.cli", "eval", "add.f16", "1.5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and one_line_error(bad.stderr), bad.stderr


# --- eval of a matrix form (issue #29 item 19) -------------------------------------------------

MMA_BF16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"


def _matrix_rows(out, name):
    """The rows of matrix `name` printed whole under its '  name (RxC):' heading."""
    lines = out.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith(f"{name} (")
             and ln.rstrip().endswith("):"))
    rows = []
    for ln in lines[i + 1:]:
        if not ln.startswith("    "):
            break
        rows.append([float(x) for x in ln.split()])
    return rows


def test_eval_matrix_prints_a_small_d_whole(capsys, tmp_path):
    import ml_dtypes
    # A all ones, B all ones, C zero: every element of D is the sum over k = 16 of 1 x 1
    np.save(tmp_path / "a.npy", np.ones((16, 16), ml_dtypes.bfloat16))
    np.save(tmp_path / "b.npy", np.ones((16, 8), ml_dtypes.bfloat16))
    np.save(tmp_path / "c.npy", np.zeros((16, 8), np.float32))
    rc, out, err = cli(capsys, "eval", MMA_BF16, f"@{tmp_path / 'a.npy'}",
                       f"@{tmp_path / 'b.npy'}", f"@{tmp_path / 'c.npy'}")
    assert rc == 0, err
    assert _matrix_rows(out, "d") == [[16.0] * 8] * 16


def test_eval_matrix_large_d_is_summarised_with_its_shape(capsys):
    s = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"
    rc, out, err = cli(capsys, "eval", s, "--seed", "1")
    assert rc == 0, err
    assert "64x64" in out and "too large to print whole" in out and "--out" in out
    assert len(out.splitlines()) < 20


def test_eval_matrix_json_has_the_drawn_operands(capsys):
    rc, out, err = cli(capsys, "eval", MMA_BF16, "--seed", "1", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    # the operands --seed 1 draws, drawn again here the same way (NumPy's generator)
    import ml_dtypes
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, size=(16, 16)).astype(ml_dtypes.bfloat16).astype(np.float64)
    b = rng.uniform(-2, 2, size=(16, 8)).astype(ml_dtypes.bfloat16).astype(np.float64)
    c = rng.uniform(-2, 2, size=(16, 8)).astype(np.float32).astype(np.float64)
    assert doc["seed"] == 1
    assert np.array_equal(doc["a"], a) and np.array_equal(doc["b"], b)
    assert np.array_equal(doc["c"], c)
    assert np.asarray(doc["d"]).shape == (16, 8)
    assert doc["types"] == {"a": "bf16", "b": "bf16", "c": "f32", "d": "f32"}


def test_eval_matrix_out_saves_a_b_c_d(capsys, tmp_path):
    import ml_dtypes
    path = tmp_path / "mma.npz"
    rc, out, err = cli(capsys, "eval", MMA_BF16, "--seed", "1", "--out", str(path))
    assert rc == 0, err
    assert f"wrote 4 arrays to {path}" in out
    with np.load(path) as z:
        assert sorted(z.files) == ["a", "b", "c", "d"]
        a = z["a"].view(ml_dtypes.bfloat16).astype(np.float64)
        b = z["b"].view(ml_dtypes.bfloat16).astype(np.float64)
        c, d = z["c"], z["d"]
    rng = np.random.default_rng(1)
    assert np.array_equal(a, rng.uniform(-2, 2, size=(16, 16)).astype(ml_dtypes.bfloat16))
    assert np.array_equal(b, rng.uniform(-2, 2, size=(16, 8)).astype(ml_dtypes.bfloat16))
    assert c.dtype == np.float32 and d.dtype == np.float32 and d.shape == (16, 8)
    # D is within the rounding of f32 accumulation of the exact A x B + C
    exact = a @ b + c.astype(np.float64)
    assert np.allclose(d, exact, rtol=0, atol=1e-4)
    # --out of a scalar form, and a folder that does not exist: one line, exit 2
    rc, _, err = cli(capsys, "eval", "add.f32", "1.0f32", "2.0f32", "--out", str(path))
    assert rc == 2 and one_line_error(err) and "matrix" in err
    rc, _, err = cli(capsys, "eval", MMA_BF16, "--seed", "1", "--out",
                     str(tmp_path / "no" / "x.npz"))
    assert rc == 2 and one_line_error(err)
