"""``ptxfp ver`` fails when nothing was judged, or when the file answers fewer vectors than its
gen header names (issue #26 item 2): a testbench that wrote nothing must not look green."""

from __future__ import annotations

import pytest

from ptxfp import cli


def _main(argv, capsys):
    rc = cli.main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_results_fail(tmp_path, capsys, text):
    p = tmp_path / "r.txt"
    p.write_text(text)
    rc, out, err = _main(["ver", "add.rn.f16", str(p)], capsys)
    assert rc == 1 and "no results" in out and "(pass)" not in out, out


def test_a_whole_gen_file_passes_and_a_cut_one_fails(tmp_path, capsys):
    p = tmp_path / "v.txt"
    assert _main(["gen", "add.rn.f16", "-n", "7", "-o", str(p)], capsys)[0] == 0
    rc, out, _ = _main(["ver", "add.rn.f16", str(p)], capsys)
    assert rc == 0 and "(pass)" in out
    lines = p.read_text().splitlines(keepends=True)
    n = sum(1 for ln in lines if not ln.startswith("#"))
    cut = tmp_path / "cut.txt"
    cut.write_text("".join(lines[:-3]))
    rc, out, _ = _main(["ver", "add.rn.f16", str(cut)], capsys)
    assert rc == 1 and "(fail)" in out
    assert f"answers {n - 3} of the {n} vectors" in out and "3 have no result" in out


def test_header_of_another_form_is_refused(tmp_path, capsys):
    p = tmp_path / "v.txt"
    assert _main(["gen", "add.rn.f16", "-n", "1", "-o", str(p)], capsys)[0] == 0
    rc, out, err = _main(["ver", "mul.rn.f16", str(p)], capsys)
    assert rc == 2 and "header is of add.rn.f16" in err


def test_results_without_a_header_are_judged_as_they_are(tmp_path, capsys):
    p = tmp_path / "r.txt"
    p.write_text("3C00 3C00 4000\n")                 # 1 + 1 = 2
    rc, out, _ = _main(["ver", "add.rn.f16", str(p)], capsys)
    assert rc == 0 and "1 lines, 1 agree" in out and "(pass)" in out
