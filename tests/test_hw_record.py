"""``python -m ptxfp.hw --record DIR`` and ``--replay DIR`` (ptxfp.hw.record, ptxfp.hw.approx).

Expected bits come from outside the code under test: the H100's recorded inputs
(../shared/gpu/h100-2026-11-27, or their copy in tests/data/gpu) for the layout, ptxas for the
.approx decisions and kernels, ``ptxfp.execute`` against the PTX interpreter running the
recorded kernels for the dry run.
"""

import json
import os
import pathlib
import shutil
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ptxfp
from ptxfp.hw import approx as A, command, record as R
from ptxfp.hw.runner import InterpRunner, ModelRunner

ROOT = pathlib.Path(__file__).resolve().parents[1]
PTXAS = shutil.which("ptxas")
H100 = next((p for p in (ROOT / "tests" / "data" / "gpu" / "h100-2026-11-27",
                         ROOT / "tests" / "data" / "gpu",
                         ROOT.parent.parent / "shared" / "gpu" / "h100-2026-11-27",
                         pathlib.Path("/work/shared/gpu/h100-2026-11-27"))
             if (p / "gpu_fma.npz").is_file()), None)
FEW = "add.rn.f16,fma.rn.ftz.f16x2,cvt.rn.f16.f32,min.NaN.bf16,mul.rm.ftz.f32," \
      "cvt.rn.satfinite.e4m3x2.f32"


def _main(*argv):
    return command.main(list(argv))


class FakeGpu(ModelRunner):
    """Plays every form, the .approx ones too (with bits no model makes: random ones, the worst
    case for the size bound), so that the recording's plumbing can be checked without a GPU."""
    plays_unmodelled = True

    def launch(self, kernel, arrays, n):
        if ".approx" not in kernel.spelling:
            return super().launch(kernel, arrays, n)
        rng = np.random.default_rng(n)
        return rng.integers(0, 1 << kernel.result_width, n, dtype=np.uint64).astype(
            f"uint{kernel.result_width}")


# ---- the .approx forms ----------------------------------------------------------------------


def test_approx_decisions_cover_the_candidates_and_name_the_ptxas_that_made_them():
    from ptxfp.hw import approx_targets as T
    assert "13.0" in T.PTXAS
    assert set(T.ACCEPTS) | set(T.REFUSED) == set(A.candidates())
    assert not set(T.ACCEPTS) & set(T.REFUSED)
    on90 = A.accepted(90)
    # the manual's 16-bit forms: ex2 on f16/f16x2 (no .ftz) and bf16/bf16x2 (.ftz required),
    # tanh on all four (no .ftz); bf16 needs sm_90
    sixteen = {s for s in on90 if A.type_of(s) != "f32"}
    assert sixteen == {"ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16",
                       "ex2.approx.ftz.bf16x2", "tanh.approx.f16", "tanh.approx.f16x2",
                       "tanh.approx.bf16", "tanh.approx.bf16x2"}
    assert not any("bf16" in s for s in A.accepted(80))
    assert A.accepted(70) == [] and A.accepted(100) == A.accepted(90)
    assert "tanh.approx.ftz.f32" not in on90 and "sin.approx.ftz.f32" in on90


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_ptxas_decides_the_approx_table_as_stored(tmp_path):
    """The stored decisions are ptxas': every accepted (spelling, target) compiles cleanly, and
    a refused spelling is refused on sm_90 and sm_100 with the stored message's text."""
    from ptxfp.hw import approx_targets as T
    jobs = [(s, t) for s, ts in T.ACCEPTS.items() for t in ts if t in ("sm_80", "sm_90",
                                                                       "sm_100", "sm_120")]
    refused = list(T.REFUSED)[::5]
    jobs += [(s, t) for s in refused for t in ("sm_90", "sm_100")]

    def one(st):
        s, t = st
        k = A.approx_kernel(s, t)
        path = tmp_path / f"{s}-{t}.ptx"
        path.write_text(k.ptx)
        r = subprocess.run([PTXAS, "-arch", t, str(path), "-o", os.devnull],
                           capture_output=True, text=True)
        return r.returncode == 0 and not r.stderr.strip(), r.stderr

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, jobs))
    for (s, t), (ok, err) in zip(jobs, results):
        if s in T.ACCEPTS:
            assert ok, (s, t, err)
        else:
            assert not ok and T.REFUSED[s].split(": ", 1)[1] in err, (s, t, err)


def test_approx_inputs_are_every_16_bit_pattern_in_every_lane():
    every = np.arange(1 << 16)
    for s in ("ex2.approx.f16", "tanh.approx.bf16"):
        a = A.approx_inputs(s)
        assert a.dtype == np.uint16 and np.array_equal(np.sort(a), every)
    for s in ("ex2.approx.f16x2", "tanh.approx.bf16x2"):
        a = A.approx_inputs(s)
        assert a.dtype == np.uint32 and a.size == 1 << 16
        for lane in (a & 0xFFFF, a >> 16):
            assert np.array_equal(np.sort(lane), every)
    f = A.approx_inputs("sin.approx.f32", 1000)
    assert f.dtype == np.uint32 and f.size == 1000
    assert {0x7F800000, 0x80000000, 0x00000001, 0x7FC00000} <= set(f.tolist())


def test_approx_kernels_run_a_on_d_with_the_spelling():
    k = A.approx_kernel("tanh.approx.bf16x2", "sm_90")
    assert "tanh.approx.bf16x2 %d, %a;" in k.ptx and ".target sm_90" in k.ptx
    assert k.operands == ("a",) and k.result_width == 32
    assert ".version 7.8" in k.ptx
    assert ".version 9.0" in A.approx_kernel("ex2.approx.f16", "sm_110").ptx
    with pytest.raises(ValueError):
        A.approx_kernel("ex2.approx.f64", "sm_90")


# ---- the plan and its size ------------------------------------------------------------------


@pytest.mark.skipif(H100 is None, reason="the H100 recording is not here")
def test_the_sm90_plan_is_the_h100_recordings_layout_input_for_input():
    """Same forms, keys, dtypes and inputs as the answers recorded on the H100 (its script was
    this logic): a later recording on another sm_90 GPU compares vector for vector."""
    rec, metas = R.load(H100)
    assert {m["sm"] for m in metas.values()} == {90}
    p = R.plan(90, command.select_forms("all"), with_approx=False)
    mine = {it.spelling: it for it in p.items}
    assert set(mine) == set(rec) and len(rec) == 298
    for s, cols in rec.items():
        it = mine[s]
        assert set(cols) == set(it.operands) | {"d"}, s
        for n, a in it.operands.items():
            assert a.dtype == cols[n].dtype and np.array_equal(a, cols[n]), (s, n)
        assert cols["d"].dtype == np.dtype(f"uint{it.kernel.result_width}"), s


def test_default_sizes_keep_every_targets_files_under_16_mb():
    forms = command.select_forms("all")
    p90, b90 = R.sized_plan(90, forms)
    assert p90.sizes == R.LADDER[0] and b90 <= R.MAX_BYTES      # the H100 recording's sizes
    p100, b100 = R.sized_plan(100, forms)
    assert b100 <= R.MAX_BYTES and len(p100.items) > len(p90.items)
    # sm_100 runs the mixed forms natively: they are recorded there
    assert "add.rn.f32.f16" in {it.spelling for it in p100.items}
    assert "add.rn.f32.f16" in p90.skipped
    with pytest.raises(R.RecordError):
        R.sized_plan(90, ["add.rn.f16"], 4096, 2048, 0, 16384, with_approx=False,
                     max_bytes=10_000)


def test_the_size_bound_holds_for_incompressible_answers(tmp_path):
    """Written files never exceed the bound, even when every result bit is random (FakeGpu's
    .approx answers)."""
    runner = FakeGpu(90)
    forms = command.select_forms("fma.rn.*.f16x2,cvt.rn.*")
    meta = R.record(runner, tmp_path, forms, with_approx={"ex2.approx.f16x2", "sin.approx.f32"},
                    f32_sample=4096, say=lambda *a: None)
    written = sum(f.stat().st_size for f in tmp_path.glob("gpu_*.npz"))
    assert written == sum(meta["files"].values())
    assert written <= meta["estimate_bytes"]
    assert meta["estimate_bytes"] < 1.6 * written + 100_000     # a bound, not a guess


# ---- --record end to end (dry runs) ------------------------------------------------------------


def test_record_dry_run_writes_the_layout_and_replays_clean(tmp_path, capsys):
    d = tmp_path / "rec"
    assert _main("--record", str(d), "--backend", "model", "--forms", FEW, "--quiet") == 0
    names = sorted(p.name for p in d.iterdir())
    assert names == ["gpu_addsubmul.npz", "gpu_cvt.npz", "gpu_fma.npz", "gpu_minmax.npz"]
    forms = command.select_forms(FEW)
    total = 0
    for p in d.iterdir():
        with np.load(p) as z:
            meta = json.loads(str(z["meta"]))
            for k in ("gpu", "sm", "driver", "cuda_driver_api", "ptxfp_source", "date",
                      "command", "counts", "grid_cap", "targeted", "backend"):
                assert k in meta, k
            assert meta["sm"] == 90 and meta["hardware"] is False
            assert "--record" in meta["command"] and meta["family"] == p.stem[4:]
            for key in z.files:
                if key == "meta":
                    continue
                s, _, op = key.rpartition("/")
                ins = ptxfp.parse(s)
                assert op in ins.operand_names + ("d",)
                assert z[key].shape == (meta["counts"][s],)
            total += meta["family_forms"]
    assert total == len(forms)
    capsys.readouterr()
    assert _main("--replay", str(d)) == 0
    cap = capsys.readouterr()
    out = cap.out
    assert f"{len(forms)} forms" in out and " 0 mismatches" in out
    # issue #29 item 11: the replay says on stderr what it does (the first one compiles)
    assert f"replaying {len(forms)} recorded forms" in cap.err
    assert _main("--replay", str(d), "--quiet") == 0
    assert "replaying" not in capsys.readouterr().err


def test_replay_progress_lines_are_spaced_in_time(capsys):
    ticks = iter([0.0, 1.0, 2.0, 6.0])
    p = command._Progress("verify", every=5.0)
    p.clock = lambda: next(ticks)
    p.t0 = p.last = 0.0
    for k, s in enumerate(["a", "b", "c", "d"]):
        p(k, 4, s)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("verify: replaying 4 recorded forms")
    assert err[1:] == ["verify: 3/4 forms, 6 s (d)"]


def test_record_with_the_interpreter_gives_ptxfps_bits(tmp_path):
    """The interpreter runs the recorded kernels' PTX text; what it records for each modelled
    form equals ptxfp.execute on the recorded inputs (the kernels load, run and store right)."""
    d = tmp_path / "rec"
    forms = "add.rn.ftz.f16x2,fma.rn.relu.bf16,cvt.rz.f16.f32,max.NaN.f16x2"
    assert _main("--record", str(d), "--backend", "interp", "--forms", forms, "--quiet",
                 "--grid-cap", "300", "--targeted", "200") == 0
    rec, _ = R.load(d)
    assert set(rec) == set(command.select_forms(forms))
    for s, cols in rec.items():
        ins = ptxfp.parse(s)
        want = np.asarray(ptxfp.execute(ins, *(cols[n] for n in ins.operand_names))
                          if ins.family != "cvt" else
                          ptxfp.convert(ins, *(cols[n] for n in ins.operand_names))).reshape(-1)
        assert np.array_equal(cols["d"], want), s


def test_record_on_a_gpu_keeps_the_approx_tables(tmp_path):
    meta = R.record(FakeGpu(90), tmp_path, ["add.rn.f16"],
                    with_approx={"ex2.approx.f16", "tanh.approx.bf16x2", "lg2.approx.f32"},
                    f32_sample=2000, say=lambda *a: None)
    assert not meta["not_run"]
    with np.load(tmp_path / "gpu_approx.npz") as z:
        m = json.loads(str(z["meta"]))
        assert m["family_forms"] == 3 and m["approx_ptxas"].startswith("Cuda")
        assert z["ex2.approx.f16/a"].shape == z["ex2.approx.f16/d"].shape == (65536,)
        assert z["tanh.approx.bf16x2/d"].dtype == np.uint32
        assert z["lg2.approx.f32/a"].shape == (2000,)
    # --replay leaves what ptxfp does not model aside, and says so
    results = R.replay(tmp_path)
    notes = {r.spelling: r.note for r in results}
    assert notes["ex2.approx.f16"] == "not modelled by ptxfp" and notes["add.rn.f16"] == ""


def test_replay_finds_a_changed_answer(tmp_path, capsys):
    d = tmp_path / "rec"
    assert _main("--record", str(d), "--backend", "model", "--forms", "mul.rn.bf16",
                 "--quiet") == 0
    with np.load(d / "gpu_addsubmul.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["mul.rn.bf16/d"] = arrays["mul.rn.bf16/d"].copy()
    arrays["mul.rn.bf16/d"][7] ^= 1
    np.savez_compressed(d / "gpu_addsubmul.npz", **arrays)
    capsys.readouterr()
    assert _main("--replay", str(d)) == 1
    out = capsys.readouterr().out
    assert "mul.rn.bf16: 1 of" in out and "1 mismatches in 1 form(s)" in out


# ---- where and how the files are written ---------------------------------------------------


def _one_line_error(capsys, *argv):
    capsys.readouterr()
    rc = _main(*argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_record_writes_into_a_fifo_and_never_replaces_it(tmp_path, capsys):
    import threading
    fifo = tmp_path / "gpu_addsubmul.npz"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert _main("--record", str(tmp_path), "--backend", "model", "--forms", "add.rn.f16",
                 "--quiet") == 0
    reader.join(60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(os.listdir(tmp_path)) == [fifo.name]
    import io
    with np.load(io.BytesIO(got[0])) as z:
        assert z["add.rn.f16/d"].size == json.loads(str(z["meta"]))["counts"]["add.rn.f16"]


def test_record_refuses_a_folder_where_a_file_goes_before_running(tmp_path, capsys):
    (tmp_path / "gpu_fma.npz").mkdir()
    err = _one_line_error(capsys, "--record", str(tmp_path), "--backend", "model", "--forms",
                          "add.rn.f16")
    assert "gpu_fma.npz" in err and "folder" in err
    assert sorted(os.listdir(tmp_path)) == ["gpu_fma.npz"]


def test_record_bad_directories_and_sizes_are_one_line(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert "not a folder" in _one_line_error(capsys, "--record", str(f), "--backend", "model")
    assert "--max-mb" in _one_line_error(capsys, "--record", str(tmp_path / "r"), "--backend",
                                         "model", "--max-mb", "0.001", "--forms", "add.rn.f16")
    assert not (tmp_path / "r").exists() or not os.listdir(tmp_path / "r")
    assert "not a directory" in _one_line_error(capsys, "--replay", str(f))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "gpu_fma.npz").write_bytes(b"not a zip")
    assert "not a recording" in _one_line_error(capsys, "--replay", str(bad))


def test_a_failed_write_leaves_the_old_file_and_no_debris(tmp_path, monkeypatch, capsys):
    old = tmp_path / "gpu_addsubmul.npz"
    old.write_bytes(b"the previous recording")

    def boom(f, **arrays):
        f.write(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", boom)
    err = _one_line_error(capsys, "--record", str(tmp_path), "--backend", "model", "--forms",
                          "add.rn.f16")
    assert "no space left on device" in err and "gpu_addsubmul.npz" in err
    assert old.read_bytes() == b"the previous recording"
    assert sorted(os.listdir(tmp_path)) == ["gpu_addsubmul.npz"]


def test_a_new_recording_replaces_the_old_file_whole(tmp_path):
    R.write_npz(tmp_path, "gpu_fma.npz", {"x": np.arange(4)})
    R.write_npz(tmp_path, "gpu_fma.npz", {"y": np.arange(2)})
    with np.load(tmp_path / "gpu_fma.npz") as z:
        assert z.files == ["y"]
    assert sorted(os.listdir(tmp_path)) == ["gpu_fma.npz"]
    mode = stat.S_IMODE(os.stat(tmp_path / "gpu_fma.npz").st_mode)
    assert mode & 0o044            # readable by others as a plain file would be (umask 022)


# ---- docs/conformance.md, the H100 report ----------------------------------------------------

STATE = next((p / "sweeps-state.json" for p in (ROOT / "tests" / "data" / "gpu" / "h100-2026-11-27",
                                                pathlib.Path("/work/shared/gpu/h100-2026-11-27"))
              if (p / "sweeps-state.json").is_file()), None)


@pytest.mark.skipif(STATE is None, reason="the H100's sweep state is not here")
def test_the_h100_report_lists_the_sweeps_of_the_state_file():
    from ptxfp.vectors import harness as V
    text = (ROOT / "docs" / "conformance.md").read_text()
    state = json.loads(STATE.read_text())["sweeps"]
    done = {}
    for key, e in state.items():
        s = key.partition(" c=")[0]
        done[s] = done.get(s, 0) + e["vectors"]
    eligible = [s for s in command.select_forms("all") if V.exhaustive_eligible(s)]
    need = {s: V.exhaustive_size(s) * len(V.exhaustive_c_values(s)) for s in eligible}
    complete = [s for s in eligible if done.get(s, 0) == need[s]]
    left = [s for s in eligible if done.get(s, 0) < need[s]]
    assert len(complete) == 31
    assert f"{sum(need[s] for s in complete):,} vectors" in text
    table = text[text.index("## Exhaustive sweeps"):text.index("Begun, to be resumed")]
    import re
    listed = set()
    for cell in re.findall(r"`([^`]+)`", table):
        head, _, rest = cell.partition("{")
        if rest:                              # cvt.{rn,rz,rm,rp}.f16.f32
            opts, _, tail = rest.partition("}")
            listed |= {head + o + tail for o in opts.split(",")}
        else:
            listed.add(cell)
    assert set(complete) <= listed, set(complete) - listed
    assert f"Still to run: {len(left)} of\nthe {len(eligible)} sweeps" in text
    rest = text[text.index("Still to run"):text.index("## Policies")]
    assert all(f"`{s}`" in rest for s in left)
    assert not any(f"`{s}`" in rest for s in complete)


#: the recordings in tests/data/gpu besides the H100's (tests/test_gpu_recorded.py holds that
#: one): a folder written there by --record is test data as it stands
OTHER_RECORDINGS = sorted(p for p in (ROOT / "tests" / "data" / "gpu").glob("*")
                          if p.is_dir() and any(p.glob("gpu_*.npz"))
                          and p.name != "h100-2026-11-27") \
    if (ROOT / "tests" / "data" / "gpu").is_dir() else []


@pytest.mark.parametrize("folder", OTHER_RECORDINGS, ids=lambda p: p.name)
def test_every_recording_in_the_test_data_replays_clean(folder):
    bad = [(r.spelling, r.mismatches, r.examples[:1]) for r in R.replay(folder)
           if r.mismatches]
    assert not bad, bad[:5]


# ---- the matrix forms (gpu_mma.npz) ---------------------------------------------------------

MMA_FEW = {"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
           "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"}


class FlipMma(ModelRunner):
    """ptxfp.mma plays the matrix kernels, with bit 0 of D's element 3 of instance 5 flipped."""

    def run_mma(self, kernel, arrays):
        d = np.array(super().run_mma(kernel, arrays))
        d.reshape(d.shape[0], -1)[5, 3] ^= d.dtype.type(1)
        return d


def test_mma_forms_are_recorded_in_gpu_mma_and_replayed_against_ptxfp_mma(tmp_path):
    meta = R.record(ModelRunner(90), tmp_path / "ok", ["add.rn.f16"], with_approx=False,
                    with_mma=MMA_FEW, say=lambda *a: None)
    assert "gpu_mma.npz" in meta["files"] and not meta["not_run"]
    recorded, metas = R.load(tmp_path / "ok")
    assert metas["gpu_mma.npz"]["family"] == "mma"
    for s in MMA_FEW:
        cols = recorded[s]
        assert {"a", "b", "c", "d"} <= set(cols) and cols["d"].shape[0] == R.MMA_INSTANCES
    got = {r.spelling: r for r in R.replay(tmp_path / "ok")}
    assert all(got[s].vectors == R.MMA_INSTANCES and got[s].mismatches == 0 and not got[s].note
               for s in MMA_FEW)
    # a changed bit in D is found, in that form and instance
    R.record(FlipMma(90), tmp_path / "bad", [], with_approx=False, with_mma=MMA_FEW,
             say=lambda *a: None)
    got = {r.spelling: r for r in R.replay(tmp_path / "bad")}
    for s in MMA_FEW:
        assert got[s].mismatches == 1 and got[s].examples[0]["instance"] == "5"


def test_mma_forms_follow_the_sm_and_are_left_out_where_the_backend_cannot_run_them(tmp_path):
    p = R.plan(80, [], with_approx=False, with_mma=True)
    ran = {it.spelling for it in p.items}
    assert not any(s.startswith("wgmma") for s in ran)
    assert any(s.startswith("wgmma") for s in p.skipped)
    assert all(R.mma_runs_on(it.kernel.target, 80) for it in p.items)
    notes = []
    meta = R.record(InterpRunner(90), tmp_path, [], with_approx=False, with_mma=MMA_FEW,
                    say=notes.append)
    assert "gpu_mma.npz" not in meta["files"]
    assert all("cannot run matrix kernels" in meta["skipped"][s] for s in MMA_FEW)
    assert any("matrix forms are left out" in n for n in notes)
