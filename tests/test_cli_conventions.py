"""Command-line conventions a new user expects (issue #26 item 4)."""

from __future__ import annotations

import json

import pytest

from ptxfp import cli

MODULE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
  .reg .f16 %h<4>;
  add.f16 %h7, %h1, %h2;
  ret;
}
"""


def run(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.mark.parametrize("argv", [
    ["eval", "add.rn.f16", "--json", "0x3c00", "0x4000"],
    ["eval", "--json", "add.rn.f16", "0x3c00", "0x4000"],
    ["eval", "add.rn.f16", "0x3c00", "--json", "0x4000"],
])
def test_options_anywhere_on_the_line(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    assert json.loads(out)["result"]["hex"] == "0x4200"


def test_negative_operands_are_not_options(capsys):
    rc, out, err = run(capsys, "eval", "add.rn.f16", "-1.5f16", "--json", "-inff16")
    assert rc == 0, err
    assert json.loads(out)["result"]["text"] == "-inf"


def test_options_after_positionals_of_check_and_list(capsys, tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    rc, out, _ = run(capsys, "check", f, "--json", "--target", "sm_90")
    assert rc == 1 and json.loads(out)["errors"] == 1
    rc, out, _ = run(capsys, "list", "add.f16", "--json", "bf16")
    assert rc == 2                                  # both words must match: none does
    rc, out, _ = run(capsys, "list", "fma", "--json", "relu.bf16")
    assert rc == 0 and all("relu" in r["spelling"] for r in json.loads(out))


def test_list_json_with_no_match_fails_like_text(capsys):
    rc, out, err = run(capsys, "list", "zzz")
    assert rc == 2 and "no form matches 'zzz'" in err
    rc, out, err = run(capsys, "list", "zzz", "--json")
    assert rc == 2 and "no form matches 'zzz'" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("opt,value,says", [("--target", "sm_9x", "sm_90a"),
                                            ("--target", "sm_999", "sm_90a"),
                                            ("--version", "abc", "X.Y"),
                                            ("--version", "99.9", "X.Y")])
def test_bad_target_and_version_are_usage_errors(capsys, tmp_path, opt, value, says):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    rc, out, err = run(capsys, "check", f, opt, value)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert f"{opt} {value}" in err and says in err


def test_memory_error_names_the_size_forms(capsys, tmp_path):
    f = tmp_path / "s.ptx"
    f.write_text("add.f16 d, a, b;\n")
    rc, _, err = run(capsys, "run", f, "--memory", "10GB", "--set", "a=0x3c00", "b=0x3c00")
    assert rc == 2 and "--memory 10GB" in err and "SIZE" in err and "0x1000" in err


def test_entry_on_a_snippet_is_an_error(capsys, tmp_path):
    f = tmp_path / "s.ptx"
    f.write_text("add.f16 d, a, b;\n")
    rc, _, err = run(capsys, "run", f, "--entry", "main", "--set", "a=0x3c00", "b=0x3c00")
    assert rc == 2 and "--entry main" in err and "snippet" in err


@pytest.mark.parametrize("text", ["", "\n\n", "// only a comment\n", "/* nothing */\n"])
def test_run_on_an_empty_file_says_nothing_to_run(capsys, tmp_path, text):
    f = tmp_path / "e.ptx"
    f.write_text(text)
    rc, out, err = run(capsys, "run", f)
    assert rc == 2 and "nothing to run" in err and out == ""


@pytest.mark.parametrize("typo,hint", [("fmaa.rn.bf16", "fma.rn.bf16"),
                                       ("fma.rn.relux.bf16", "fma.rn.relu.bf16"),
                                       ("fma.rn.bf61", "fma.rn.bf16")])
def test_eval_suggests_the_nearest_spelling(capsys, typo, hint):
    rc, _, err = run(capsys, "eval", typo, "1", "2", "3")
    assert rc == 2 and f"did you mean '{hint}'?" in err


def test_register_past_the_declared_range_names_the_range(capsys, tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    rc, out, _ = run(capsys, "check", f)
    assert rc == 1 and "'%h7'" in out and "%h<4> declares %h0 to %h3" in out


def test_run_names_the_range_of_a_register_past_it(capsys, tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    rc, out, err = run(capsys, "run", f, "--set", "h1=1.0f16", "h2=1.0f16")
    assert rc == 2 and ":7:11:" in err and "%h<4> declares %h0 to %h3" in err
