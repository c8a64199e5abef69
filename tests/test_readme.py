"""The README's API tour is real output: run it as a doctest."""

import doctest
import os
import pathlib

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tour():
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5
    assert result.failed == 0


# --- the shell examples (issue #29, "Docs") ----------------------------------------------------

import io
import re
import shlex
import contextlib

ROOT = README.parent
TEXT = README.read_text()


def _command_block():
    """The lines of the README's "## The command" text block."""
    sec = TEXT.split("## The command", 1)[1]
    return sec.split("```text\n", 1)[1].split("```", 1)[0].splitlines()


def test_readme_says_how_the_command_is_found():
    # `ptxfp` is on PATH only inside the virtual environment the README makes
    before = TEXT.split("$ ptxfp", 1)[0]
    assert ". .venv/bin/activate" in before or "$ .venv/bin/ptxfp" in TEXT


def test_readme_command_examples_name_files_that_exist():
    for line in _command_block():
        if line.startswith("$ ptxfp check") or line.startswith("$ ptxfp run"):
            path = shlex.split(line[2:])[2]
            assert (ROOT / path).is_file(), f"README runs {path}, which the repository lacks"


def test_readme_command_examples_print_what_the_readme_shows():
    from ptxfp.cli import main
    lines = _command_block()
    cmds = [i for i, ln in enumerate(lines) if ln.startswith("$ ")] + [len(lines)]
    ran = 0
    for i, j in zip(cmds, cmds[1:]):
        argv = shlex.split(lines[i][2:], comments=True)
        shown = lines[i + 1:j]
        if not shown or argv[1] not in ("eval", "check", "run"):
            continue
        buf = io.StringIO()
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            with contextlib.redirect_stdout(buf):
                main(argv[1:])
        finally:
            os.chdir(cwd)
        assert buf.getvalue().splitlines() == shown, lines[i]
        ran += 1
    assert ran >= 4


def test_readme_sweep_line_is_one_a_user_can_run():
    line = next(ln for ln in _command_block() if ln.startswith("$ ptxfp sweep"))
    argv = shlex.split(line[2:], comments=True)
    lib = argv[argv.index("--lib") + 1]
    symbol = lib.rsplit(":", 1)[1]
    # the symbols examples/sim_fma_bf16.c exports (its functions not `static`)
    src = (ROOT / "examples" / "sim_fma_bf16.c").read_text()
    exported = set(re.findall(r"^(?:uint16_t|void|int|float)\s+(\w+)\(", src, re.M))
    assert symbol in exported, (symbol, exported)
    # fma.rn.bf16 has three 16-bit operands: --exhaustive is 2^48 vectors (docs/verify.md)
    assert not ("--exhaustive" in argv and argv[1].startswith("fma")), line


def test_readme_check_outputs_of_the_real_modules():
    """Every other ```text block of `$ ptxfp check` lines: the real modules (run where they are,
    tests/data/realworld) and examples/broken.ptx print what the README shows."""
    from ptxfp.cli import main
    ran = 0
    for block in TEXT.split("```text\n")[1:]:
        lines = block.split("```", 1)[0].splitlines()
        if lines == _command_block() or not lines or not lines[0].startswith("$ ptxfp check"):
            continue
        cmds = [i for i, ln in enumerate(lines) if ln.startswith("$ ")] + [len(lines)]
        for i, j in zip(cmds, cmds[1:]):
            argv = shlex.split(lines[i][2:], comments=True)
            where = ROOT if (ROOT / argv[2]).is_file() else ROOT / "tests" / "data" / "realworld"
            buf = io.StringIO()
            cwd = os.getcwd()
            os.chdir(where)
            try:
                with contextlib.redirect_stdout(buf):
                    main(argv[1:])
            finally:
                os.chdir(cwd)
            assert buf.getvalue().splitlines() == lines[i + 1:j], lines[i]
            ran += 1
    assert ran >= 4
