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
