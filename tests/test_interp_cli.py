"""`ptxfp run` over a grid: --grid/--block, --set NAME=@FILE.npy, --out FILE.npz with --reg and
--mem, the table only when small, user errors as one line with exit status 2.  Expected values:
plain float32 arithmetic written here (y = 2*x + 1 is exact for these small integers)."""

import pathlib

import numpy as np
import pytest

from ptxfp.cli import main

AXPY = str(pathlib.Path(__file__).resolve().parent / "data" / "kernels" / "axpy.ptx")


def cli(capsys, *argv):
    rc = main(list(argv))
    o, e = capsys.readouterr()
    return rc, o, e


@pytest.fixture
def mem(tmp_path):
    x = np.arange(1024, dtype=np.float32)
    y = np.ones(1024, np.float32)
    p = tmp_path / "mem.bin"
    p.write_bytes(bytes(256) + x.tobytes() + y.tobytes())
    return str(p)


ARGS = ["--grid", "4", "--block", "256"]
SETS = ["axpy_param_1=2.0f32", "axpy_param_2=256", "axpy_param_3=4352"]


def test_run_grid_out_npz(capsys, tmp_path, mem):
    out = tmp_path / "y.npz"
    rc, o, e = cli(capsys, "run", AXPY, *ARGS, "--memory", mem, "--set", "axpy_param_0=1024",
                   *SETS, "--out", str(out), "--mem", "4352:4096", "--reg", "%r1")
    assert rc == 0 and "1024 threads" in o
    z = np.load(out)
    y = z["memory@0x1100:4096"].view(np.float32)
    assert y.tolist() == [2.0 * k + 1.0 for k in range(1024)]
    assert z["%r1"].tolist() == [256] * 1024          # %ntid.x
    assert int(z["threads"]) == 1024


def test_run_set_from_npy_and_big_table_is_not_printed(capsys, tmp_path, mem):
    np.save(tmp_path / "n.npy", np.full(1024, 1000, np.int32))
    rc, o, e = cli(capsys, "run", AXPY, *ARGS, "--memory", mem,
                   "--set", f"axpy_param_0=@{tmp_path / 'n.npy'}", *SETS)
    assert rc == 0 and "too many to print" in o and "--out" in o


@pytest.mark.parametrize("extra, words", [
    (["--grid", "0"], "--grid 0"),
    (["--block", "2,x"], "--block 2,x"),
    (["--mem", "0:4"], "give --out"),
    (["--max-steps", "5"], "step limit reached"),
    (["--set", "axpy_param_3=4350"], "address 0x10fe is not 4-byte aligned"),
])
def test_run_user_errors_one_line(capsys, mem, extra, words):
    sets = [s for s in SETS if not (s.startswith("axpy_param_3") and "axpy_param_3" in
                                    " ".join(extra))]
    argv = ["run", AXPY, *ARGS, "--memory", mem, "--set", "axpy_param_0=1024", *sets]
    if extra[0] == "--set":
        argv += extra
    else:
        argv = argv[:3] + argv[3:] + extra
    rc, o, e = cli(capsys, *argv)
    assert rc == 2 and words in e and len(e.strip().splitlines()) == 1, e
