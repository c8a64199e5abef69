"""Outputs go where the user points them (ptxfp.outputs, issue #26 item 1): an existing regular
file is replaced atomically, a FIFO or a device is written to, a symbolic link is followed, and
every file-system error is one OutputError naming the path (one line, exit 2 on the CLI)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import threading

import pytest

from ptxfp import cli
from ptxfp.errors import OutputError, PtxfpError
from ptxfp.outputs import open_output, output_dir, write_output, write_text


def _leftovers(folder):
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


def test_output_error_is_ours():
    assert issubclass(OutputError, PtxfpError) and issubclass(OutputError, ValueError)


def test_new_and_existing_regular_file(tmp_path):
    p = tmp_path / "a.txt"
    write_text(p, "one\n")
    assert p.read_text() == "one\n"
    os.chmod(p, 0o640)
    ino = os.stat(p).st_ino
    write_output(p, lambda f: f.write(b"two\n"))
    assert p.read_text() == "two\n"
    assert os.stat(p).st_ino != ino                 # replaced, not rewritten in place
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640   # and keeps its mode
    assert not _leftovers(tmp_path)


def test_error_in_the_block_leaves_the_old_file(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("old\n")
    with pytest.raises(RuntimeError):
        with open_output(p) as f:
            f.write(b"half")
            raise RuntimeError("boom")
    assert p.read_text() == "old\n"
    assert not _leftovers(tmp_path)


def test_symlink_stays_a_link(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    os.symlink("target.txt", link)
    write_text(link, "new\n")
    assert os.path.islink(link)
    assert target.read_text() == "new\n"
    assert not _leftovers(tmp_path)


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    os.symlink("made.txt", link)
    write_text(link, "x\n")
    assert os.path.islink(link) and (tmp_path / "made.txt").read_text() == "x\n"


def test_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    t.start()
    write_text(fifo, "through the pipe\n")
    t.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not _leftovers(tmp_path)


def test_dev_null_is_written_not_replaced():
    before = os.stat("/dev/null")
    write_text("/dev/null", "nothing\n")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@pytest.mark.parametrize("case", ["missing", "folder", "proc", "under_file", "empty"])
def test_bad_places_are_one_output_error(tmp_path, case):
    path = {"missing": str(tmp_path / "nope" / "x.txt"), "folder": str(tmp_path),
            "proc": "/proc/version", "under_file": "/proc/version/x", "empty": ""}[case]
    with pytest.raises(OutputError) as ei:
        write_text(path, "x\n", what="-o")
    msg = str(ei.value)
    assert path in msg and "\n" not in msg and ei.value.path == path
    assert ei.value.reason
    assert not _leftovers(tmp_path)


def test_read_only_file_is_refused(tmp_path):
    p = tmp_path / "ro.txt"
    p.write_text("keep\n")
    os.chmod(p, 0o444)
    with pytest.raises(OutputError, match="not writable"):
        write_text(p, "x")
    assert p.read_text() == "keep\n"


def test_enospc_while_writing(tmp_path, monkeypatch):
    """A full disk (simulated: the write fails with ENOSPC): one OutputError, the old file is
    kept and the temporary file removed."""
    p = tmp_path / "a.txt"
    p.write_text("old\n")

    def full(f):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(OutputError, match="no space left on device"):
        write_output(p, full, what="-o")
    assert p.read_text() == "old\n"
    assert not _leftovers(tmp_path)


def test_enospc_on_a_tiny_tmpfs(tmp_path):
    """The real thing, where this process may mount a 64 KiB tmpfs."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True)
    if r.returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with pytest.raises(OutputError, match="no space left on device"):
            write_output(mnt / "big.bin", lambda f: f.write(b"\0" * (1 << 20)))
        assert os.listdir(mnt) == []
    finally:
        subprocess.run(["umount", str(mnt)])


def test_output_dir(tmp_path):
    d = tmp_path / "a" / "b"
    assert output_dir(d) == str(d) and d.is_dir()
    assert output_dir(d) == str(d)                      # an existing folder is fine
    f = tmp_path / "file"
    f.write_text("")
    for bad in (str(f), "/proc/ptxfp-ck", "/proc/version"):
        with pytest.raises(OutputError) as ei:
            output_dir(bad, "--checkpoint")
        assert bad in str(ei.value) and str(ei.value).startswith("--checkpoint")


def test_stdout_dash(capsysbinary):
    write_text("-", "to stdout\n")
    assert capsysbinary.readouterr().out == b"to stdout\n"


# --- the commands that write files -----------------------------------------------------------

def _main(argv, capsys):
    rc = cli.main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_gen_into_a_fifo_and_a_symlink(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    t.start()
    rc, _, err = _main(["gen", "add.rn.f16", "-n", "5", "-o", str(fifo)], capsys)
    t.join(30)
    assert rc == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].startswith(b"# ptxfp") and got[0].count(b"\n") > 100
    target = tmp_path / "t.txt"
    target.write_text("")
    link = tmp_path / "l.txt"
    os.symlink(target, link)
    rc, _, _ = _main(["gen", "add.rn.f16", "-n", "5", "-o", str(link)], capsys)
    assert rc == 0 and os.path.islink(link) and target.read_bytes() == got[0]


def test_gen_onto_dev_null(capsys):
    rc, _, _ = _main(["gen", "add.rn.f16", "-n", "5", "-o", "/dev/null"], capsys)
    assert rc == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("where", ["missing", "folder", "proc"])
def test_gen_bad_output_is_one_line(tmp_path, capsys, where):
    path = {"missing": str(tmp_path / "no" / "x.txt"), "folder": str(tmp_path),
            "proc": "/proc/version"}[where]
    rc, out, err = _main(["gen", "add.rn.f16", "-n", "5", "-o", path], capsys)
    assert rc == 2 and err.count("\n") == 1 and err.startswith("ptxfp: error: -o " + path)
    assert "Traceback" not in err and not _leftovers(tmp_path)


def test_gen_full_disk_is_one_line(tmp_path, capsys, monkeypatch):
    import ptxfp.conformance.gen as gen
    p = tmp_path / "v.txt"
    p.write_text("old\n")

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(gen.textio, "format_lines", full)
    rc, out, err = _main(["gen", "add.rn.f16", "-n", "5", "-o", str(p)], capsys)
    assert rc == 2 and "no space left on device" in err and err.count("\n") == 1
    assert p.read_text() == "old\n" and not _leftovers(tmp_path)


@pytest.mark.parametrize("where", ["file", "proc"])
def test_sweep_checkpoint_bad_place(tmp_path, capsys, where):
    f = tmp_path / "ck"
    f.write_text("x")
    path = str(f) if where == "file" else "/proc/ptxfp-ck"
    rc, out, err = _main(["sweep", "add.rn.f16", "--impl", "numpy:add", "--random", "10",
                          "--workers", "0", "-q", "--checkpoint", path], capsys)
    assert rc == 2 and err.count("\n") == 1 and f"--checkpoint {path}" in err, err


def test_hw_report_and_resume_go_through_outputs(tmp_path):
    """verify --out/--json/--resume write through ptxfp.outputs (the hw harness's writer)."""
    from ptxfp.hw.resume import write_atomic
    with pytest.raises(OutputError, match="--out"):
        write_atomic(str(tmp_path / "no" / "r.md"), "x", "--out")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    t.start()
    write_atomic(str(fifo), "report\n", "--out")
    t.join(10)
    assert got == [b"report\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
