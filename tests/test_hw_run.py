"""The harness's run on the model backend: honest verdicts, budgets, failures, partial reports,
resumable sweeps, preflight, checked counts.

The runner here is ptxfp's model (a dry run) or a subclass of it that fails, flips bits or
records what it is given: these tests are of the harness's bookkeeping (what it claims about a
run), never of ptxfp's arithmetic.
"""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ptxfp
from ptxfp.errors import OutputError
from ptxfp.hw import command, probes as P, report, resume
from ptxfp.vectors import harness as V
from ptxfp.hw.runner import Constant, HardwareUnavailable, ModelRunner
from ptxfp.hw.verify import mismatch_indices, sweep_form

ROOT = pathlib.Path(__file__).resolve().parents[1]
CANARY = P.CANARY_FORMS[0]


@pytest.fixture
def started_now(monkeypatch):
    """--budget counts from the process's start; pytest's process started long ago."""
    t = time.time()
    monkeypatch.setattr(command, "process_start", lambda: t)
    return t


def _main(*args):
    return command.main(["--backend", "model", "--quiet", *args])


# ---- verdicts -------------------------------------------------------------------------------


def test_a_budget_spent_before_anything_ran_is_incomplete_never_agreement(monkeypatch, tmp_path,
                                                                          capsys):
    # the process "started" 100 s ago: a 50 s budget is spent before the first form
    monkeypatch.setattr(command, "process_start", lambda: time.time() - 100)
    js = tmp_path / "r.json"
    rc = _main("--forms", f"{CANARY},cvt.f32.bf16", "--probes", "nan/*", "--budget", "50",
               "--jobs", "1", "--json", str(js))
    assert rc == command.EXIT_INCOMPLETE == 3
    run = json.loads(js.read_text())
    s = run["summary"]
    assert s["verdict_kind"] == "incomplete" and not s["agrees"] and s["vectors"] == 0
    items = {i["item"] for i in s["incomplete"]}
    assert {f"form {CANARY}", "form cvt.f32.bf16", f"probe nan/{CANARY}"} <= items
    assert "agrees" not in s["verdict"] and run["meta"]["partial"] is False
    assert "incomplete: form cvt.f32.bf16" in capsys.readouterr().out


def test_a_run_cut_short_by_the_budget_says_incomplete_one_job(started_now, tmp_path):
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    rc = _main("--forms", "add.rn.f16,mul.rn.bf16", "--vectors", str(10 ** 9), "--budget",
               "2.5", "--jobs", "1", "--probes", "none", "--json", str(js), "--out", str(md))
    assert time.time() - started_now < 2.5 + 3            # within the budget (and one batch)
    assert rc == 3
    s = json.loads(js.read_text())["summary"]
    why = {i["item"]: i["why"] for i in s["incomplete"]}
    assert "random vectors" in why["form add.rn.f16"]
    assert why["form mul.rn.bf16"].startswith("not reached")
    text = md.read_text()
    assert "## Incomplete" in text and "no claim of agreement" in text


def test_a_run_cut_short_by_the_budget_says_incomplete_worker_processes(started_now, tmp_path):
    # the reported defect: --vectors 200000 --budget 2 --jobs 2 verified a fraction of the
    # vectors and said "ptxfp agrees with the GPU", exit 0
    js = tmp_path / "r.json"
    rc = _main("--forms", "add.rn.f16,sub.rn.f16,mul.rn.f16,fma.rn.f16,fma.rn.bf16x2",
               "--vectors", "200000", "--budget", "3", "--jobs", "2", "--probes", "none",
               "--json", str(js))
    assert time.time() - started_now < 3 + 3
    run = json.loads(js.read_text())
    assert rc == 3 and run["summary"]["verdict_kind"] == "incomplete"
    assert run["summary"]["incomplete"]
    assert all(f["complete"] or f["error"] or f["cut"] for f in run["forms"])


def test_a_mismatch_wins_over_incomplete_and_both_are_reported(started_now, tmp_path,
                                                               monkeypatch):
    runner = ModelRunner(flip={"add.rn.f16": (0, 0)})
    monkeypatch.setattr(command, "get_runner", lambda *a, **k: runner)
    js = tmp_path / "r.json"
    rc = _main("--forms", "add.rn.f16,mul.rn.bf16", "--vectors", str(10 ** 9), "--budget",
               "2", "--jobs", "1", "--probes", "none", "--json", str(js))
    s = json.loads(js.read_text())["summary"]
    assert rc == 1 and s["verdict_kind"] == "differs" and s["incomplete"]
    assert "incomplete" in s["verdict"]


# ---- failures -------------------------------------------------------------------------------


class _FailingRunner(ModelRunner):
    """The model, except that some forms fail the way a GPU run can."""

    def __init__(self, failures):
        super().__init__()
        self.failures = failures

    def launch(self, kernel, arrays, n):
        exc = self.failures.get(kernel.spelling)
        if exc is not None:
            raise exc
        return super().launch(kernel, arrays, n)


def test_gpu_errors_become_per_form_could_not_run_and_the_report_survives(tmp_path):
    runner = _FailingRunner({
        "mul.rn.f16": MemoryError("cudaErrorMemoryAllocation: out of memory"),
        "cvt.rn.f16.f32": HardwareUnavailable("GPU unavailable"),
        CANARY: RuntimeError("copy failed"),           # also the nan/ probe's form
    })
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    forms = ["add.rn.f16", "mul.rn.f16", "cvt.rn.f16.f32", "cvt.f32.bf16"]
    probe_list = P.informative(P.probes([CANARY, "add.rn.f16"]))
    probe_list = [p for p in probe_list if p.name.startswith("nan/")]
    run = command.run(runner, forms, probe_list, {"vectors": 300, "targeted": 200, "seed": 0,
                                                  "examples": 5}, md=md, js=js)
    byname = {f["spelling"]: f for f in run["forms"]}
    assert byname["mul.rn.f16"]["error"].startswith("could not run: MemoryError: cudaError")
    assert "GPU unavailable" in byname["cvt.rn.f16.f32"]["error"]
    assert byname["add.rn.f16"]["error"] is None and byname["add.rn.f16"]["complete"]
    assert byname["cvt.f32.bf16"]["vectors"] > 65536
    probes = {p["name"]: p for p in run["probes"]}
    assert "copy failed" in probes[f"nan/{CANARY}"]["error"]
    assert probes["nan/add.rn.f16"]["error"] is None
    s = run["summary"]
    assert s["verdict_kind"] == "incomplete" and s["exit_status"] == 3
    assert {"form mul.rn.f16", "form cvt.rn.f16.f32", f"probe nan/{CANARY}"} <= \
        {i["item"] for i in s["incomplete"]}
    assert json.loads(js.read_text())["summary"] == json.loads(json.dumps(s))
    assert "could not run: MemoryError" in md.read_text()


def _importable(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.skipif(_importable("cupy"), reason="CuPy is installed: workers would reach it")
def test_a_worker_that_cannot_reach_the_gpu_fails_its_forms_not_the_run(tmp_path):
    # the workers open their own backend: 'cupy' is not installed here, so each worker's
    # HardwareUnavailable must become its forms' "could not run", with the report written
    js = tmp_path / "r.json"
    run = command.run(ModelRunner(), ["add.rn.f16", "cvt.f32.bf16"], [],
                      {"vectors": 100, "seed": 0}, jobs=2, backend="cupy", js=js)
    for f in run["forms"]:
        assert f["error"].startswith("could not run: ") and "CuPy is not installed" in \
            f["error"], f
    assert run["summary"]["verdict_kind"] == "incomplete"
    assert json.loads(js.read_text())["summary"]["exit_status"] == 3


def test_the_report_is_rewritten_after_every_form_and_says_partial_until_the_end(tmp_path,
                                                                                 monkeypatch):
    seen = []
    real = report.write

    def spy(run, md=None, js=None):
        real(run, md, js)
        seen.append((json.loads(pathlib.Path(js).read_text()), pathlib.Path(md).read_text()))

    monkeypatch.setattr(report, "write", spy)
    forms = ["add.rn.f16", "cvt.f32.bf16", "cvt.f32.f16"]
    command.run(ModelRunner(), forms, [], {"vectors": 100, "seed": 0},
                md=tmp_path / "r.md", js=tmp_path / "r.json")
    assert len(seen) >= len(forms) + 1
    for run, text in seen[:-1]:                   # what a run killed at that moment leaves
        assert run["meta"]["partial"] is True
        assert run["summary"]["verdict_kind"] == "incomplete"
        assert "PARTIAL REPORT" in text and "agrees" not in run["summary"]["verdict"]
    done = [sum(f["error"] is None for f in run["forms"]) for run, _ in seen]
    assert done == sorted(done) and done[-1] == len(forms)
    final, text = seen[-1]
    assert final["meta"]["partial"] is False and final["summary"]["verdict_kind"] == "agrees"
    assert "PARTIAL" not in text


def test_reports_are_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old, complete\n")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OutputError, match="disk full"):    # ptxfp.outputs: one line, exit 2
        resume.write_atomic(path, "new" * 1000)
    assert path.read_text() == "old, complete\n"


def test_a_killed_run_leaves_a_valid_partial_report(tmp_path):
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        # the forms and the small sweep finish in seconds; the 2**32 sweep would take hours
        [sys.executable, "-m", "ptxfp.hw", "--backend", "model", "--forms",
         "cvt.f32.bf16,add.rn.f16", "--vectors", "1000", "--targeted", "0", "--exhaustive",
         "--probes", "none", "--jobs", "1", "--quiet", "--json", str(js), "--out", str(md)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t = time.time()
        while time.time() - t < 60:
            if js.exists() and json.loads(js.read_text())["exhaustive"][0]["complete"]:
                break
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    run = json.loads(js.read_text())
    assert run["meta"]["partial"] is True and run["summary"]["verdict_kind"] == "incomplete"
    assert [f["error"] for f in run["forms"]] == [None, None]
    assert run["exhaustive"][0]["complete"] and not run["exhaustive"][1]["complete"]
    assert "sweep add.rn.f16" in {i["item"] for i in run["summary"]["incomplete"]}
    assert "PARTIAL REPORT" in md.read_text()


def test_a_terminated_run_writes_its_final_report_and_exits_incomplete(tmp_path):
    # what `timeout` does at a command's time limit: SIGTERM
    js = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ptxfp.hw", "--backend", "model", "--forms", "add.rn.f16",
         "--vectors", "1000", "--targeted", "0", "--exhaustive", "--probes", "none",
         "--jobs", "1", "--quiet", "--json", str(js)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t = time.time()
        while time.time() - t < 60:
            if js.exists() and json.loads(js.read_text())["forms"][0]["error"] is None:
                break
            time.sleep(0.1)
        time.sleep(0.5)                                  # into the 2**32 sweep
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run = json.loads(js.read_text())
    assert rc == 3
    assert run["meta"]["partial"] is False and run["meta"]["interrupted"].startswith("stopped")
    assert run["summary"]["verdict_kind"] == "incomplete"
    assert run["exhaustive"][0]["complete"] is False


# ---- probes ----------------------------------------------------------------------------------


def test_policies_come_from_native_probes_only():
    # a decomposed probe of a mixed form (canonical_nan_f32) decides nothing
    q = P._nan_probe("add.rn.f32.bf16")
    r = P.judge(q, list(q.predictions().values())[-1])
    r.mode = "decomposed"
    ans = {a["field"]: a for a in P.policy_answers([r])}
    assert ans["canonical_nan_f32"]["status"] == "not probed"
    # a native probe and a decomposed one that disagree: the native one alone answers
    z = [p for p in P.probes(["add.rn.sat.f16"]) if p.name.startswith("sat-minus-zero/")][0]
    now = ptxfp.POLICY.sat_minus_zero_to_plus
    keep = [s.label for s in z.settings if dict(s.changes).get("sat_minus_zero_to_plus") == now]
    flip = [s.label for s in z.settings if dict(s.changes).get("sat_minus_zero_to_plus") != now]
    native = P.judge(z, z.predictions()[keep[0]])
    native.mode = "native"
    decomposed = P.judge(z, z.predictions()[flip[0]])
    decomposed.mode = "decomposed"
    ans = {a["field"]: a for a in P.policy_answers([native, decomposed])}
    assert ans["sat_minus_zero_to_plus"]["status"] == "confirmed"      # not "differs by form"
    assert ans["sat_minus_zero_to_plus"]["probes"] == 1


def test_decomposed_probes_are_reported_apart(tmp_path):
    run = command.run(ModelRunner(), ["fma.rn.f32.f16"],
                      [p for p in P.informative(P.probes(["fma.rn.f32.f16"]))
                       if p.name.startswith("nan/")], {"vectors": 0, "seed": 0},
                      md=tmp_path / "r.md")
    assert run["probes"] == [] and run["decomposed_probes"]
    assert all(p["mode"] == "decomposed" for p in run["decomposed_probes"])
    ans = {a["field"]: a for a in run["policies"]}
    assert ans["canonical_nan_f32"]["status"] == "not probed"
    assert "## Decomposed probes" in (tmp_path / "r.md").read_text()


# ---- exhaustive sweeps in pieces ---------------------------------------------------------------


class _Recorder(ModelRunner):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.launches = []

    def launch(self, kernel, arrays, n):
        self.launches.append([type(x).__name__ for x in arrays])
        return super().launch(kernel, arrays, n)


def test_a_sweep_in_resumable_pieces_adds_up_to_the_whole_sweep(tmp_path):
    s = "cvt.f32.f16"                                   # 2**16 inputs: 16 chunks of 4096
    ident = {"source": "x", "chunk": 4096}
    whole = sweep_form(ModelRunner(flip={s: (7, 3)}), s, chunk=4096)
    assert whole.complete and whole.vectors == 1 << 16 and whole.mismatches == 16
    path = tmp_path / "state.json"
    pieces = []
    for _ in range(10):
        state = resume.SweepState(path, ident)          # a new call: loaded from the file
        r = sweep_form(ModelRunner(flip={s: (7, 3)}), s, chunk=4096, state=state, max_chunks=5)
        pieces.append(r.chunks)
        if r.complete:
            break
        assert "--resume" in r.cut
    assert pieces == [5, 5, 5, 1]
    assert (r.vectors, r.mismatches, r.nan_only) == (whole.vectors, whole.mismatches,
                                                     whole.nan_only)
    assert r.resumed == 15 * 4096 and r.examples == whole.examples
    assert resume.SweepState(path, ident).done(s) == list(range(0, 1 << 16, 4096))
    with pytest.raises(resume.ResumeError):
        resume.SweepState(path, {**ident, "chunk": 8192})


def test_resume_from_the_command_line(tmp_path, monkeypatch):
    runner = ModelRunner(flip={"add.rn.f16": (5, 0)})
    monkeypatch.setattr(command, "get_runner", lambda *a, **k: runner)
    state, js = tmp_path / "sweeps.json", tmp_path / "r.json"
    args = ["--forms", "add.rn.f16", "--exhaustive-only", "--chunk", "65536",
            "--chunks-per-call", "2", "--resume", str(state), "--json", str(js)]
    assert _main(*args) == 1                 # a flipped bit per chunk: differs, and incomplete
    first = json.loads(js.read_text())
    sw = first["exhaustive"][0]
    assert (sw["vectors"], sw["mismatches"], sw["complete"]) == (1 << 17, 2, False)
    assert first["forms"] == [] and first["probes"] == []
    assert _main(*args) == 1
    sw = json.loads(js.read_text())["exhaustive"][0]
    assert (sw["vectors"], sw["mismatches"], sw["resumed"]) == (1 << 18, 4, 1 << 17)
    done = json.loads(state.read_text())["sweeps"]["add.rn.f16"]["done"]
    assert list(done) == [command.source_checksum()]
    assert sorted(done[command.source_checksum()]) == [0, 1 << 16, 2 << 16, 3 << 16]
    assert _main(*args[:-2], "--chunk", "131072") == 2        # another chunk size: refused


def test_a_finished_sweep_agrees_and_a_resumed_one_stays_finished(tmp_path):
    state, js = tmp_path / "s.json", tmp_path / "r.json"
    args = ["--forms", "cvt.f32.bf16", "--exhaustive-only", "--resume", str(state),
            "--json", str(js)]
    assert _main(*args) == 0
    assert _main(*args) == 0
    sw = json.loads(js.read_text())["exhaustive"][0]
    assert sw["complete"] and sw["vectors"] == 1 << 16 and sw["resumed"] == 1 << 16


def test_a_sweeps_fixed_c_goes_to_the_runner_as_a_constant():
    runner = _Recorder()
    r = sweep_form(runner, "fma.rn.bf16x2", c_values=(0x3F80,), chunk=1 << 16, max_chunks=2)
    assert r.chunks == 2 and r.mismatches == 0 and r.vectors == 1 << 17
    assert runner.launches == [["ndarray", "ndarray", "Constant"]] * 2


def test_the_cuda_python_runner_fills_a_constant_once_on_the_gpu():
    from ptxfp.hw.runner import CudaPythonRunner
    calls = []

    class cu:                                        # just enough of cuda.bindings.driver
        @staticmethod
        def cuMemAlloc(n):
            calls.append(("alloc", n))
            return (0, 1000 + len(calls))

        @staticmethod
        def cuMemsetD16(p, v, n):
            calls.append(("set16", v, n))
            return (0,)

        cuMemsetD32 = cuMemsetD16

        @staticmethod
        def cuMemFree(p):
            calls.append(("free", p))
            return (0,)

    r = CudaPythonRunner.__new__(CudaPythonRunner)
    r.cu, r._const = cu, (None, None)
    p1 = r._constant(Constant(0x3C00), 16, 1 << 20)
    assert r._constant(Constant(0x3C00), 16, 1 << 20) == p1
    assert calls == [("alloc", 2 << 20), ("set16", 0x3C00, 1 << 20)]
    r._constant(Constant(0x8000), 16, 1 << 20)
    assert calls[2] == ("free", p1) and calls[-1] == ("set16", 0x8000, 1 << 20)


def test_chunks_and_comparisons_are_built_by_several_threads_with_the_same_result():
    for s in ("fma.rn.f16x2", "cvt.rn.bf16x2.f32", "mul.rn.bf16"):
        start = (1 << 31) - (3 << 20)
        one = V.exhaustive_operands(s, start, start + (6 << 20), threads=1)
        four = V.exhaustive_operands(s, start, start + (6 << 20), threads=4)
        assert all(np.array_equal(x, y) for x, y in zip(one, four)), s
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 1 << 23).astype(np.uint16)
    y = rng.integers(0, 4, 1 << 23).astype(np.uint16)
    assert np.array_equal(mismatch_indices(x, y, 4), np.flatnonzero(x != y))


def test_worker_processes_share_every_core_among_the_forms_they_run():
    assert command.worker_threads(16, 8, 162) == 2
    assert command.worker_threads(16, 8, 2) == 8          # 2 forms: 2 processes, 8 threads each
    assert command.worker_threads(16, 8, 1) == 16
    assert command.worker_threads(2, 8, 5) == 1


def test_sweeps_use_every_core(monkeypatch, tmp_path):
    seen = {}

    def fake(runner, s, *a, threads=1, **k):
        seen[s] = threads
        return sweep_form(runner, "cvt.f32.f16", chunk=1 << 16)

    monkeypatch.setattr(command, "sweep_form", fake)
    monkeypatch.setattr(command, "_cpus", lambda: 16)
    command.run(ModelRunner(), ["cvt.f32.bf16"], [], {"vectors": 0, "exhaustive_only": True,
                                                       "exhaustive": True})
    assert seen == {"cvt.f32.bf16": 16}


# ---- the command's edges -----------------------------------------------------------------------


def test_huge_counts_are_one_line_exit_2_before_any_allocation(capsys):
    for args in (["--vectors", str(10 ** 18)], ["--targeted", str(10 ** 12)],
                 ["--chunk", "1000"], ["--examples", str(10 ** 9)], ["--budget", "0"],
                 ["--out", "/nonexistent-dir/r.md"]):
        assert _main("--forms", "add.rn.f16", *args) == 2, args
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 6
    from ptxfp.cli import main as cli_main
    assert cli_main(["verify", "--backend", "model", "--vectors", str(10 ** 18)]) == 2


def test_cuda_python_without_a_driver_is_one_line_exit_2(monkeypatch, capsys):
    # cuda-bindings installed on a machine without the driver library: its cuInit raises
    # something that is not a CUDA error code
    import types
    driver = types.ModuleType("cuda.bindings.driver")

    def cuInit(flags):
        raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found via '
                           'system search')

    driver.cuInit = cuInit
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    monkeypatch.setitem(sys.modules, "cupy", None)
    for name, mod in (("cuda", cuda), ("cuda.bindings", bindings),
                      ("cuda.bindings.driver", driver)):
        monkeypatch.setitem(sys.modules, name, mod)
    assert command.main(["--forms", "add.rn.f16"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "no NVIDIA GPU available to cuda-python" in err and "driver library" in err


def test_preflight_prints_the_versions_and_tries_one_kernel(capsys, monkeypatch):
    assert _main("--preflight") == 0
    out = capsys.readouterr().out
    for word in ("Python ", "numpy: ", "numba: ", "cupy", "cuda.bindings", "source sha256",
                 "backend model: ", "loads and runs one kernel"):
        assert word in out, word
    for mod in ("cupy", "cuda", "cuda.bindings", "cuda.bindings.driver"):
        monkeypatch.setitem(sys.modules, mod, None)
    assert command.main(["--preflight"]) == 2
    cap = capsys.readouterr()
    assert "backend cupy: unavailable" in cap.out
    assert len(cap.err.strip().splitlines()) == 1 and "preflight: missing" in cap.err


def test_without_git_the_report_names_the_version_and_a_source_checksum(tmp_path):
    pkg = tmp_path / "src" / "ptxfp"
    shutil.copytree(ROOT / "src" / "ptxfp", pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    assert command._git_revision(tmp_path) is None
    same = command.source_checksum(pkg)
    assert same == command.source_checksum() and len(same) == 16
    (pkg / "policy.py").write_text((pkg / "policy.py").read_text() + "\n# changed\n")
    assert command.source_checksum(pkg) != same
    run = command.run(ModelRunner(), ["cvt.f32.bf16"], [], {"vectors": 0})
    run["meta"]["git"] = None
    text = report.render(run)
    assert f"{ptxfp.__version__} (no git checkout; source sha256 {same})" in text
    assert "no git revision" not in text


def test_a_dry_runs_gpu_is_the_same_in_every_worker(tmp_path):
    # --sm 100 on the model backend stands for an sm_100a GPU: the worker processes (--jobs 2)
    # ran their forms on the default sm_90 instead, and the sm_100a-only forms came back "not
    # runnable" in a run whose header said sm_100
    js = tmp_path / "r.json"
    forms = "cvt.rn.f16x2.e2m1x2,cvt.rs.f16x2.f32,cvt.rn.satfinite.e3m2x2.f32"
    rc = _main("--sm", "100", "--forms", forms, "--vectors", "100", "--targeted", "10",
               "--probes", "none", "--jobs", "2", "--json", str(js))
    s = json.loads(js.read_text())["summary"]
    assert rc == 0 and s["agrees"] and not s["incomplete"], s
