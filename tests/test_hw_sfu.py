"""The SFU forms in the hardware harness (issue #31): ``--forms sfu`` verifies every ``.approx``
and ``div.full`` form on the GPU against the model of the GPU's own target, and
``--exhaustive`` sweeps all 2^32 (or 2^16) inputs of the one-operand forms in resumable chunks.

The runners here are ptxfp's own (no GPU): the tests are of the harness's logic — which inputs
a sweep covers, that a flipped bit is reported, that the model is asked for the GPU's target,
that a resumed sweep adds up — not of the SFU model (tests/test_sfu*.py hold that to ptx-math).
"""

import json

import numpy as np
import pytest

from ptxfp import isa
from ptxfp.errors import PtxfpError
from ptxfp.hw import command, forms as F
from ptxfp.hw.resume import SweepState
from ptxfp.hw.runner import InterpRunner, ModelRunner
from ptxfp.hw.verify import sweep_form, verify_form
from ptxfp.vectors import harness as V

SFU = isa.canonical_spellings("sfu", True)


def test_sfu_selection_all_stays_the_elementwise_table():
    assert command.select_forms("sfu") == SFU
    assert not set(SFU) & set(command.select_forms("all"))
    got = command.select_forms("*.approx.f32")
    assert "rsqrt.approx.f32" in got and "div.approx.f32" in got
    assert all(".approx." in s and s.endswith(".f32") for s in got)
    assert command.select_forms("sin.approx.ftz.f32") == ["sin.approx.ftz.f32"]


@pytest.mark.parametrize("spelling, size", [("ex2.approx.f32", 1 << 32),
                                            ("rsqrt.approx.ftz.f32", 1 << 32),
                                            ("ex2.approx.f16x2", 1 << 32),
                                            ("tanh.approx.bf16", 1 << 16),
                                            ("div.full.f32", None), ("div.approx.f32", None),
                                            ("rsqrt.approx.f64", None)])
def test_which_sfu_forms_are_swept_and_over_what(spelling, size):
    assert V.exhaustive_eligible(spelling) == (size is not None)
    if size is None:
        return
    assert V.exhaustive_size(spelling) == size
    # the chunks are every bit pattern in order, each once
    (a,) = V.exhaustive_chunk(spelling, size - 5, size)
    assert a.dtype == np.dtype(f"uint{16 if size == 1 << 16 else 32}")
    assert a.tolist() == list(range(size - 5, size))
    (b,) = V.exhaustive_operands(spelling, 1 << 12, 3 << 12, threads=2)
    assert b.tolist() == list(range(1 << 12, 3 << 12))


def test_sfu_vector_sets_have_the_operand_widths():
    for s in ("ex2.approx.f32", "ex2.approx.f16x2", "tanh.approx.bf16", "div.full.f32",
              "rsqrt.approx.f64"):
        ins = F.parse_form(s)
        for name, ops in V.vector_sets(s, n_random=300, seed=4, n_targeted=200):
            assert len(ops) == len(ins.operand_names), (s, name)
            for op, fmt in zip(ops, ins.operand_formats):
                assert op.dtype.itemsize * 8 == F.width(fmt), (s, name)
    # the targeted set reaches the subnormals, the powers of two and both signs
    (t,) = V.targeted("rcp.approx.f32", 4000, seed=1)
    mag = t & np.uint32(0x7FFFFFFF)
    assert (mag < 0x00800000).any() and (mag & 0x7FFFFF == 0).any()
    assert (t >> 31).any() and not (t >> 31).all()


def test_the_model_is_asked_for_the_gpus_target():
    x = np.array([0x3F800000, 0x00000001, 0x7F7FFFFF], np.uint32)
    assert F.model("ex2.approx.f32", x, sm=90).shape == (3,)
    with pytest.raises(PtxfpError, match="sm_120"):     # no SFU model there: it was asked
        F.model("ex2.approx.f32", x, sm=120)
    # forms of the other families compute the same on every target: no target passed
    assert F.model("add.rn.f32", x, x, sm=120).shape == (3,)


def test_a_flipped_bit_in_an_sfu_form_is_reported():
    s = "rsqrt.approx.f32"
    r = verify_form(ModelRunner(flip={s: (7, 3)}), s, n_random=600, seed=3)
    assert r.mismatches >= 1 and r.examples and r.examples[0]["gpu"] != r.examples[0]["model"]
    assert verify_form(ModelRunner(), s, n_random=600, seed=3).ok


def test_the_kernels_run_through_the_interpreter_agree():
    # the generated PTX (loads, the instruction, the store) run by ptxfp.run for the module's
    # .target, against compute(..., target=): the kernel text is right for each target
    for sm in (75, 90):
        for s in ("ex2.approx.ftz.f32", "div.full.f32"):
            r = verify_form(InterpRunner(sm=sm), s, n_random=256, seed=sm)
            assert r.ok and r.vectors > 256, (sm, s, r.error, r.examples)


def test_an_exhaustive_sfu_sweep_resumes_and_reports_a_flip(tmp_path):
    s = "ex2.approx.ftz.f32"
    path = tmp_path / "state.json"
    ident = {"hardware": False, "gpu": "dry", "backend": "model", "chunk": 1 << 16}
    runner = ModelRunner(flip={s: (5, 0)})          # vector 5 of every launch: one per chunk
    r = sweep_form(runner, s, chunk=1 << 16, state=SweepState(path, ident), max_chunks=2)
    assert not r.complete and r.chunks == 2 and r.vectors == 2 << 16 and r.mismatches == 2
    assert r.detail == "all 2^32 inputs"
    assert int(r.examples[0]["a"], 16) == 5
    again = sweep_form(runner, s, chunk=1 << 16, state=SweepState(path, ident), max_chunks=1)
    assert again.vectors == 3 << 16 and again.resumed == 2 << 16 and again.mismatches == 3
    done = json.loads(path.read_text())["sweeps"][s]["done"]
    assert sorted(x for v in done.values() for x in v) == [0, 1 << 16, 2 << 16]


def test_an_unmodeled_sfu_form_is_one_line_not_a_crash():
    r = sweep_form(ModelRunner(), "tanh.approx.bf16", chunk=1 << 16)
    assert r.error and "\n" not in r.error and "tanh.approx.bf16" in r.error and not r.complete
