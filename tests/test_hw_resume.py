"""--resume files across ptxfp source changes: the hardware identity must match, the source
is recorded per chunk, and a sweep judged under several sources says so."""

import json
import pathlib
import shutil

import pytest

from ptxfp.hw import command, report, resume
from ptxfp.hw.runner import ModelRunner
from ptxfp.hw.verify import sweep_form

H100_STATE = pathlib.Path("/work/shared/gpu/h100-2026-11-27/sweeps-state.json")


def _dry_identity(chunk):
    runner = ModelRunner()
    dev = runner.device()
    return {"hardware": runner.hardware, "gpu": dev.get("gpu"), "backend": dev.get("backend"),
            "chunk": chunk}


def _v1_file(path, chunk=4096, starts=(0, 4096), key="cvt.f32.f16", mismatches=0):
    """A version 1 file as the H100 run wrote it: one source in the identity, 'done' a list."""
    ident = {"source": "oldsource", **_dry_identity(chunk)}
    path.write_text(json.dumps({"version": 1, "identity": ident, "sweeps": {key: {
        "done": list(starts), "vectors": chunk * len(starts), "mismatches": mismatches,
        "nan_only": 0, "examples": []}}}))
    return ident


def test_a_version_1_file_resumes_under_another_source(tmp_path):
    path = tmp_path / "state.json"
    ident = _v1_file(path)
    state = resume.SweepState(path, {**ident, "source": "newsource"})
    assert state.done("cvt.f32.f16") == [0, 4096]
    assert state.sources("cvt.f32.f16") == {"oldsource": 2}
    r = sweep_form(ModelRunner(), "cvt.f32.f16", chunk=4096, state=state)
    assert r.complete and r.vectors == 1 << 16 and r.resumed == 2 * 4096 and r.chunks == 14
    assert r.sources == {"oldsource": 2, "newsource": 14}
    data = json.loads(path.read_text())
    assert data["version"] == resume.VERSION == 2 and "source" not in data["identity"]
    done = data["sweeps"]["cvt.f32.f16"]["done"]
    assert done["oldsource"] == [0, 4096] and sorted(done["newsource"]) == list(
        range(8192, 1 << 16, 4096))
    # the version 2 file reads back the same, and a later call runs nothing more
    again = resume.SweepState(path, {**ident, "source": "third"})
    r2 = sweep_form(ModelRunner(), "cvt.f32.f16", chunk=4096, state=again)
    assert r2.complete and r2.chunks == 0 and r2.sources == {"oldsource": 2, "newsource": 14}
    # both sources named, in the summary line and in the report's sweep status
    d = r.to_dict()
    line = command._form_line(d)
    assert "oldsource (2)" in line and "newsource (14)" in line
    text = resume.judged_under(d["sources"])
    assert "oldsource (2)" in text and "newsource (14)" in text
    assert resume.judged_under({"oldsource": 16}) == "" and resume.judged_under({}) == ""


def test_another_gpu_backend_or_chunk_is_still_refused(tmp_path):
    path = tmp_path / "state.json"
    ident = _v1_file(path)
    for k, v in (("gpu", "NVIDIA H100 80GB HBM3"), ("backend", "CuPy 14.2.0"),
                 ("chunk", 8192), ("hardware", True)):
        with pytest.raises(resume.ResumeError, match=f"{k} = "):
            resume.SweepState(path, {**ident, "source": "newsource", k: v})
    path.write_text(json.dumps({"version": 7, "identity": {}, "sweeps": {}}))
    with pytest.raises(resume.ResumeError, match="version"):
        resume.SweepState(path, {**ident, "source": "x"})
    path.write_text(json.dumps({"version": 2, "identity": {}, "sweeps": {"a": {"done": [1]}}}))
    with pytest.raises(resume.ResumeError, match="not a resume file"):
        resume.SweepState(path, {**ident, "source": "x"})


def test_the_command_line_records_new_chunks_under_its_source_and_reports_both(
        tmp_path, monkeypatch):
    monkeypatch.setattr(command, "get_runner", lambda *a, **k: ModelRunner())
    monkeypatch.setattr(command, "source_checksum", lambda: "todaysource")
    state, js, md = tmp_path / "s.json", tmp_path / "r.json", tmp_path / "r.md"
    _v1_file(state, chunk=1 << 16, starts=(0, 1 << 16, 2 << 16), key="add.rn.f16")
    assert command.main(["--backend", "model", "--quiet", "--forms", "add.rn.f16",
                         "--exhaustive-only", "--chunk", "65536", "--chunks-per-call", "2",
                         "--resume", str(state), "--json", str(js), "--out", str(md)]) == 3
    sw = json.loads(js.read_text())["exhaustive"][0]
    assert not sw["complete"] and sw["vectors"] == 5 << 16 and sw["resumed"] == 3 << 16
    assert sw["sources"] == {"oldsource": 3, "todaysource": 2}
    done = json.loads(state.read_text())["sweeps"]["add.rn.f16"]["done"]
    assert done == {"oldsource": [0, 1 << 16, 2 << 16], "todaysource": [3 << 16, 4 << 16]}
    text = md.read_text()
    assert "oldsource (3)" in text and "todaysource (2)" in text
    assert "oldsource (3)" in report.render(json.loads(js.read_text()))


@pytest.mark.skipif(not H100_STATE.exists(), reason="no /work/shared/gpu H100 state file")
def test_the_h100_state_file_loads_under_todays_source(tmp_path):
    path = tmp_path / "sweeps-state.json"
    shutil.copy(H100_STATE, path)
    data = json.loads(path.read_text())
    ident = {k: data["identity"][k] for k in resume.HARDWARE_KEYS}
    assert data["version"] == 1 and data["identity"]["source"] == "b318b5650e7d292e"
    state = resume.SweepState(path, {**ident, "source": "todaysource"})
    forms = list(dict.fromkeys(k.split(" c=")[0] for k in state.sweeps))
    complete = 0
    for form in forms:                                   # max_chunks=0: judge nothing new
        r = sweep_form(ModelRunner(), form, chunk=ident["chunk"], state=state, max_chunks=0)
        assert r.chunks == 0 and set(r.sources) == {"b318b5650e7d292e"}
        complete += r.complete                           # a sweep: a form, every c
    assert complete == 31 and len(state.sweeps) == 40
    assert path.read_bytes() == H100_STATE.read_bytes()     # loading writes nothing
    with pytest.raises(resume.ResumeError, match="gpu = "):
        resume.SweepState(path, {**ident, "gpu": "NVIDIA H200", "source": "todaysource"})
