"""The SFU forms without a published model, computed from a GPU's recorded answers (issue #31):
``python -m ptxfp.hw --record`` writes every 2^16 input of the 16-bit ``tanh``/``ex2``
``.approx`` forms (``gpu_approx.npz``); ``ptxfp.ops.sfu.load_tables`` computes them from it.

No GPU has recorded them yet, so a stand-in GPU plays one here: its answer for each input is a
fixed scramble of the input's bits (``_gpu``), nothing ptxfp computes.  The recording goes
through the harness's own recorder, so the test covers the whole path a real run takes: the
kernels' inputs (every pattern in each lane of a packed form), the file, the loader, compute,
run, the notes, and the refusals.
"""

import json

import numpy as np
import pytest

import ptxfp
from ptxfp.errors import FormatError, NoModelError
from ptxfp.hw import record as R
from ptxfp.hw.runner import Runner
from ptxfp.ops import sfu
from ptxfp.ops.sfu import recorded

FORMS = ["ex2.approx.f16", "tanh.approx.f16x2", "ex2.approx.ftz.bf16",
         "tanh.approx.bf16x2"]


def _gpu(form, x, lane):
    """The stand-in GPU's answer: a bijective scramble of the 16 input bits per form and lane."""
    k = (sum(map(ord, form)) * 2 + 1 + 6 * lane) & 0xFFFF
    y = (x.astype(np.uint32) * np.uint32(0x9E37 | 1) + np.uint32(k)) & np.uint32(0xFFFF)
    return (y ^ (y >> np.uint32(7))).astype(np.uint16)


class StandIn(Runner):
    """A 'GPU' of sm_90 that answers the .approx kernels with ``_gpu``."""
    name = "stand-in"
    hardware = True

    def __init__(self, sm=90, gpu="Stand-in GPU"):
        self._sm, self._gpu = sm, gpu

    def device(self):
        return {"gpu": self._gpu, "sm": self._sm, "driver": None, "backend": "test"}

    def run(self, kernel, operands):
        s, a = kernel.spelling, np.asarray(operands["a"])
        if s.endswith("x2"):
            a = a.astype(np.uint32)
            lo = _gpu(s, a & np.uint32(0xFFFF), 0).astype(np.uint32)
            hi = _gpu(s, a >> np.uint32(16), 1).astype(np.uint32)
            return lo | (hi << np.uint32(16))
        return _gpu(s, a.astype(np.uint16), 0)


@pytest.fixture
def tables(tmp_path, monkeypatch):
    """A recording of the stand-in on sm_90, loaded into a fresh registry."""
    monkeypatch.setattr(recorded, "_TABLES", None)
    monkeypatch.setattr(recorded, "FOLDER", tmp_path / "none")
    R.record(StandIn(), tmp_path, [], with_approx=FORMS, f32_sample=64, say=lambda *_: None)
    path = tmp_path / "gpu_approx.npz"
    assert path.exists()
    yield path
    # tables are only ever added in use; here they go away with the test, so the interpreter's
    # per-spelling plans made while they were loaded go too
    from ptxfp.ptx.interp.insns import row
    row._row_plan.cache_clear()


def test_before_a_recording_the_forms_refuse_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(recorded, "_TABLES", None)
    monkeypatch.setattr(recorded, "FOLDER", tmp_path / "none")
    with pytest.raises(NoModelError) as e:
        ptxfp.compute("tanh.approx.f16", 0x3C00, target="sm_90")
    msg = str(e.value)
    assert "tanh.approx.f16" in msg and "sm_90" in msg and "--record" in msg and "\n" not in msg


def test_a_recording_computes_every_input_of_every_lane(tables):
    got = sfu.load_tables(tables)
    assert sorted(t.form for t in got) == sorted(FORMS)
    every = np.arange(1 << 16, dtype=np.uint32)
    for form in FORMS:
        if form.endswith("x2"):
            x = every | ((every[::-1] ^ np.uint32(0x1234)) << np.uint32(16))
            want = _gpu(form, x & 0xFFFF, 0).astype(np.uint32) | (
                _gpu(form, x >> 16, 1).astype(np.uint32) << np.uint32(16))
        else:
            x = every.astype(np.uint16)
            want = _gpu(form, x, 0)
        res = ptxfp.compute(form, x, target="sm_90")
        assert res.dtype == want.dtype and np.array_equal(res, want), form
        # only the GPU's own target: sm_80 is another GPU
        with pytest.raises(NoModelError, match="loaded for sm_90"):
            ptxfp.compute(form, x[:3], target="sm_80")


def test_note_list_and_run_name_the_gpu(tables, capsys):
    sfu.load_tables(tables)
    note = sfu.note("tanh.approx.bf16x2", "sm_90")
    assert note.startswith("tanh.approx.bf16x2: measured on sm_90 (GPU table: Stand-in GPU, ")
    x = np.array([0x3C00, 0xBC00, 0x7C00], np.uint16)
    r = ptxfp.run("ex2.approx.f16 %h2, %h1;", {"h1": x}, target="sm_90")
    assert np.array_equal(r["%h2"], _gpu("ex2.approx.f16", x, 0))
    from ptxfp.cli import main
    assert main(["list", "tanh.approx.f16x2", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["model"]["computed"] and row["model"]["tables"][0]["gpu"] == "Stand-in GPU"


def test_a_model_of_its_own_is_never_replaced(tables):
    # a recording that also holds ex2.approx.f32's answers leaves the computed form alone
    with np.load(tables) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["ex2.approx.f32/a"] = np.arange(1 << 16, dtype=np.uint32)
    arrays["ex2.approx.f32/d"] = np.zeros(1 << 16, np.uint32)
    path = tables.parent / "more.npz"
    np.savez(path, **arrays)
    assert "ex2.approx.f32" not in {t.form for t in sfu.load_tables(path)}
    assert ptxfp.compute("ex2.approx.f32", 0x3F800000, target="sm_90") == 0x40000000


def _rewrite(src, dst, **change):
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    meta.update(change.pop("meta", {}))
    arrays["meta"] = np.array(json.dumps(meta))
    for k, v in change.items():
        arrays[k.replace("__", "/").replace("_approx_", ".approx.")] = v
    np.savez(dst, **arrays)
    return dst


def test_bad_recordings_are_one_line(tables, tmp_path):
    cases = {
        "dry": dict(meta={"hardware": False}),
        "sm": dict(meta={"sm": 61}),
    }
    for name, change in cases.items():
        with pytest.raises(FormatError) as e:
            sfu.load_tables(_rewrite(tables, tmp_path / f"{name}.npz", **change))
        assert "\n" not in str(e.value)
    with np.load(tables) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["ex2.approx.f16/a"] = arrays["ex2.approx.f16/a"][:-1]
    arrays["ex2.approx.f16/d"] = arrays["ex2.approx.f16/d"][:-1]
    np.savez(tmp_path / "short.npz", **arrays)
    with pytest.raises(FormatError, match="lacks 1 of the 65,536 inputs"):
        sfu.load_tables(tmp_path / "short.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(FormatError, match="not a recording"):
        sfu.load_tables(tmp_path / "junk.npz")
