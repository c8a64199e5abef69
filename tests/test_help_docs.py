"""The help texts and the API reference say what the program does (issue #26 item 6).  The
lists are derived from the program itself (the argparse parsers, ``ptxfp.__all__``, the
instruction table, the interpreter), so a command, option or public name added anywhere fails
here until docs/api.md (and, for instructions, the help) names it."""

from __future__ import annotations

import argparse
import importlib
import io
import pathlib
import re
import shlex
import sys

import pytest

import ptxfp
from ptxfp import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.md").read_text()
VERIFY_MD = (ROOT / "docs" / "verify.md").read_text()


def _commands():
    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return p, dict(sub.choices)


def _options(parser):
    """Every option string of a parser but -h/--help."""
    return [o for a in parser._actions if not isinstance(a, argparse._HelpAction)
            for o in a.option_strings]


def _section(name):
    """The text of '### ptxfp NAME' in docs/api.md, up to the next heading."""
    m = re.search(rf"^### ptxfp {re.escape(name)}\n(.*?)(?=^#|\Z)", API, re.M | re.S)
    return m.group(1) if m else None


def _help(parser):
    buf = io.StringIO()
    parser.print_help(buf)
    return buf.getvalue()


def _mentions(text, opt):
    return re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text) is not None


def test_every_command_has_its_section_in_api_md():
    _, cmds = _commands()
    missing = [c for c in cmds if _section(c) is None]
    assert not missing, f"docs/api.md has no '### ptxfp NAME' section for {missing}"


def test_every_option_is_in_its_command_section():
    _, cmds = _commands()
    missing = []
    for name, parser in cmds.items():
        text = _section(name) or ""
        opts = _options(parser)
        if name == "verify":                       # the harness's own parser
            try:
                from ptxfp.hw import command
            except Exception:                      # pragma: no cover (optional harness)
                continue
            opts = _options(command._parser(f"ptxfp {name}"))
        missing += [f"{name} {o}" for o in opts if not _mentions(text, o)]
    assert not missing, f"options missing from docs/api.md: {missing}"


def test_every_public_name_is_in_api_md():
    missing = [n for n in ptxfp.__all__
               if not re.search(rf"`{re.escape(n)}\b|\b{re.escape(n)}\(", API)]
    assert not missing, f"public names missing from docs/api.md: {missing}"


def test_main_help_names_every_command():
    p, cmds = _commands()
    text = _help(p)
    assert all(c in text for c in cmds)


def test_eval_help_lists_every_instruction_it_computes():
    from ptxfp import isa
    _, cmds = _commands()
    text = _help(cmds["eval"])
    missing = [op for op in isa.OPCODES if not _mentions(text, op)]
    assert not missing, missing


def test_run_help_lists_every_instruction_it_runs():
    from ptxfp.ptx import interp
    ops = getattr(interp, "_COMPILERS", None)
    if ops is None:                                # pragma: no cover (interpreter reworked)
        pytest.skip("the interpreter has no table of compilers to compare with")
    _, cmds = _commands()
    text = _help(cmds["run"])
    missing = [op for op in ops if not _mentions(text, op)]
    assert not missing, missing


def test_no_help_points_into_the_source_tree():
    p, cmds = _commands()
    for parser in [p, *cmds.values()]:
        assert "examples/" not in _help(parser), parser.prog


def _example_lines(text):
    block = text.split("examples:", 1)[1]
    for line in block.splitlines():
        line = line.strip()
        if line.startswith(("ptxfp ", "echo ")):
            yield line.split("  #", 1)[0].strip()


def test_main_help_examples_run(capsys, monkeypatch):
    """Every example of 'ptxfp --help' runs from an installed ptxfp: no file of the source
    tree; a snippet comes on standard input."""
    p, _ = _commands()
    lines = list(_example_lines(_help(p)))
    assert len(lines) >= 5
    for line in lines:
        stdin = ""
        if line.startswith("echo "):
            echo, line = line.split("|", 1)
            stdin = shlex.split(echo)[1] + "\n"
        line = line.split("|")[0].strip()           # '| head'
        argv = shlex.split(line)[1:]
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        rc = cli.main(argv)
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "error:" not in err, (line, err)
        assert out, line


def test_cli_says_target_and_version_options(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"add.f16 a, b, c;\n")))
    assert cli.main(["check", "-"]) == 0
    out = capsys.readouterr().out
    assert "--target" in out and "target=" not in out


def test_verify_md_points_at_public_names_only():
    for ref in sorted(set(re.findall(r"ptxfp(?:\.[A-Za-z_]\w*)+", VERIFY_MD))):
        parts = ref.split(".")
        assert not any(p.startswith("_") for p in parts), ref
        obj = importlib.import_module("ptxfp")
        for k, part in enumerate(parts[1:], 1):
            parent = obj
            try:
                obj = importlib.import_module(".".join(parts[:k + 1]))
                continue                            # a public module
            except ImportError:
                pass
            assert hasattr(parent, part), ref
            public = getattr(parent, "__all__", None)
            assert public is None or part in public, f"{ref}: not in {parent.__name__}.__all__"
            obj = getattr(parent, part)
