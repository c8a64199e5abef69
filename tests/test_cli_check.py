"""`ptxfp check` (and run, list) as a user meets it on real modules (issue #11): a summary line
instead of a page of [unmodeled] notes, -q/-v, misspelled opcodes, the version argument, file
names in run's errors, bytes that are no text, JSON for programs."""

import io
import json
import pathlib
import sys

import pytest

from ptxfp.cli import main

DATA = pathlib.Path(__file__).resolve().parent / "data" / "realworld"

MODULE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) {
.reg .b16 %h<4>;
.reg .b64 %rd<3>;
ld.param.u64 %rd1, [p];
ld.global.b16 %h1, [%rd1];
mov.b16 %h2, %h1;
fma.rn.oob.f16 %h3, %h1, %h2, %h2;
fmaa.rn.f16 %h3, %h1, %h2, %h2;
st.global.b16 [%rd1], %h3;
ret;
}
"""


def cli(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def module(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    return f


def test_default_output_is_findings_and_one_summary(capsys, module):
    rc, out, _ = cli(capsys, "check", module)
    lines = out.splitlines()
    assert rc == 1 and "[unmodeled]" not in out
    assert [ln.split(": ")[1] for ln in lines[:-1]] == ["error", "error"]
    assert lines[0].startswith(f"{module}:10:1: error: Feature '.oob' requires PTX ISA")
    assert lines[1].startswith(f"{module}:11:1: error: Not a name of any known instruction: "
                               "'fmaa' (did you mean 'fma'?)")
    assert lines[-1] == (f"{module}: 2 errors, 0 warnings; 7 instructions: 1 modeled by ptxfp "
                         "and checked, 6 not modeled (-v: which)")


def test_errors_only_and_verbose(capsys, module, monkeypatch):
    rc, out, _ = cli(capsys, "check", module, "-q")
    assert rc == 1 and len(out.splitlines()) == 2 and all(": error: " in ln for ln in
                                                           out.splitlines())
    rc, out, _ = cli(capsys, "check", module, "--errors-only", "--version", "8.1")
    assert out.splitlines() == [f"{module}:11:1: error: Not a name of any known instruction: "
                                "'fmaa' (did you mean 'fma'?) [unknown-instruction]"]
    rc, out, _ = cli(capsys, "check", module, "-v")
    assert f"{module}: info: not modeled: ld 2, fmaa 1, mov 1, ret 1, st 1 [unmodeled]" in out
    rc, out, _ = cli(capsys, "check", module, "-vv")
    assert out.count("is not modeled by ptxfp") == 5        # one per instruction
    rc, out, _ = cli(capsys, "check", "-", stdin=b"ld.global.f64", monkeypatch=monkeypatch)
    assert rc == 0 and "'ld.global.f64' is not modeled" in out   # a bare spelling: say it


def test_real_module_is_quiet(capsys):
    rc, out, _ = cli(capsys, "check", DATA / "tma_mbarrier_sm_90a.ptx")
    assert rc == 0 and len(out.splitlines()) == 1 and " 0 errors, 0 warnings; " in out


@pytest.mark.parametrize("word", ["fmaa.rn.f16", "ADD.F16"])
def test_misspelled_spelling_fails(capsys, word, monkeypatch):
    rc, out, _ = cli(capsys, "check", "-", stdin=word.encode(), monkeypatch=monkeypatch)
    assert rc == 1 and "[unknown-instruction]" in out


def test_unknown_version_is_one_error(capsys, tmp_path):
    f = tmp_path / "v.ptx"
    f.write_text(".version 99.9\n.target sm_90\n.address_size 64\n")
    rc, out, _ = cli(capsys, "check", f)
    assert rc == 1 and "no .version given" not in out
    assert out.count("Unsupported .version 99.9") == 1


def test_bad_version_and_target_arguments_are_usage_errors(capsys, module):
    """On the command line they are the user's typo, not the file's finding (issue #26): one
    line, exit 2, naming the forms accepted."""
    rc, out, err = cli(capsys, "check", module, "--version", "abc")
    assert rc == 2 and out == "" and "--version abc" in err and "X.Y" in err
    rc, out, err = cli(capsys, "check", module, "--target", "sm_xx")
    assert rc == 2 and out == "" and "--target sm_xx" in err and "sm_90a" in err


@pytest.mark.parametrize("text,argv,where", [
    ("add.f16 d, a, a;\n  bar.red.and.pred p, 0, q;\n", ["--set", "a=1"],
     ":2:3: 'bar.red.and.pred'"),
    ("ld.global.b16 d, [a];\n", ["--set", "a=0"], ":1:1: 'ld.global.b16' needs memory"),
    ("add.f16 d, a, ;", [], ":1:15: syntax error"),
])
def test_run_errors_name_the_file(capsys, tmp_path, text, argv, where):
    f = tmp_path / "r.ptx"
    f.write_text(text)
    rc, _, err = cli(capsys, "run", f, *argv)
    assert rc == 2 and err.startswith(f"ptxfp: error: {f}{where}"), err


JUNK = b".version 8.0\n.target sm_90\n\xff\xfe\x00junk\n"


def test_binary_junk_same_from_file_and_stdin(capsys, tmp_path, monkeypatch):
    f = tmp_path / "j.ptx"
    f.write_bytes(JUNK)
    rc1, _, err1 = cli(capsys, "check", f)
    rc2, _, err2 = cli(capsys, "check", "-", stdin=JUNK, monkeypatch=monkeypatch)
    assert rc1 == rc2 == 2
    assert err1 == f"ptxfp: error: {f}:3:1: not a UTF-8 text file (byte 0xff)\n"
    assert err2 == "ptxfp: error: <stdin>:3:1: not a UTF-8 text file (byte 0xff)\n"


def test_bom_is_named(capsys, tmp_path, monkeypatch):
    # ptxas 13.0 rejects a BOM ("Unexpected non-ASCII character encountered on line 1"), so
    # check does too, naming the invisible character, from a file and from stdin alike
    data = b"\xef\xbb\xbf.version 8.0\n.target sm_90\n.address_size 64\n"
    f = tmp_path / "b.ptx"
    f.write_bytes(data)
    rc1, out1, _ = cli(capsys, "check", f)
    rc2, out2, _ = cli(capsys, "check", "-", stdin=data, monkeypatch=monkeypatch)
    assert rc1 == rc2 == 1
    assert "1:1: error: unexpected non-ASCII character U+FEFF (byte order mark)" in out1
    assert out1.replace(str(f), "<stdin>") == out2


def test_check_json(capsys, module):
    rc, out, _ = cli(capsys, "check", module, "--json")
    doc = json.loads(out)
    assert rc == 1 and doc["errors"] == 2 and doc["instructions"] == 7
    assert doc["modeled"] == 1 and doc["unmodeled_counts"] == {"ld": 2, "mov": 1, "ret": 1,
                                                               "st": 1, "fmaa": 1}
    assert {d["rule"] for d in doc["diagnostics"] if d["severity"] == "error"} == {
        "min-version", "unknown-instruction"}


@pytest.mark.parametrize("argv,kind,line", [
    (["check", "nope.ptx", "--json"], "CliError", None),
    (["eval", "fma.rz.f16", "1", "2", "3", "--json"], "SpellingError", None),
])
def test_errors_are_json_with_json(capsys, argv, kind, line):
    rc, out, err = cli(capsys, *argv)
    doc = json.loads(out)
    assert rc == 2 and err == "" and doc["error"]["kind"] == kind and doc["error"]["message"]


def test_run_error_is_json_with_position(capsys, tmp_path):
    f = tmp_path / "r.ptx"
    f.write_text("add.f16 d, a, a;\n  bar.red.and.pred p, 0, q;\n")
    rc, out, _ = cli(capsys, "run", f, "--set", "a=1", "--json")
    e = json.loads(out)["error"]
    assert rc == 2 and (e["file"], e["line"], e["col"]) == (str(f), 2, 3)


@pytest.mark.parametrize("word,expected", [
    ("add.f16", ["add.rn.f16"]),                            # rn written or not: one form
    ("fma.rn.sat.f32.f16.sat", ["fma.rn.sat.f32.f16"]),     # the manual's spelling
    ("cvt.rn.f16.f32", ["cvt.rn.f16.f32"]),
    ("fma.r[nz].oob.relu.bf16x2", ["fma.rn.oob.relu.bf16x2", "fma.rz.oob.relu.bf16x2"]),
])
def test_list_takes_any_spelling_or_glob(capsys, word, expected):
    rc, out, _ = cli(capsys, "list", word, "--json")
    assert rc == 0 and [d["spelling"] for d in json.loads(out)] == expected
