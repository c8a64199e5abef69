"""Which SFU primitive was measured on which GPU, said per primitive (issue #31): the table
(ops/sfu/measured.py) agrees with ptx-math's published validation table and with
docs/semantics.md; ``note``, ``run_detailed().notes``, ``check``, and the command's ``list``,
``eval``, ``check`` and ``run`` say "assumed" for a target no GPU measured (sm_80 ... sm_100)
and not for sm_75, as notes, never errors.

The expected table is ptx-math's README ("Validation", https://github.com/bcarlet/ptx-math):
rcp, rsqrt, ex2, lg2 (ptxm_*_sm5x) Yes on sm_5x, sm_6x, sm_70, sm_75; ptxm_sqrt_sm6x on sm_6x,
sm_70, sm_75; ptxm_sin_sm70 / ptxm_cos_sm70 on sm_70, sm_75.
"""

import json
import re
from pathlib import Path

import pytest

import ptxfp
from ptxfp.cli import main
from ptxfp.ops import sfu
from ptxfp.ops.sfu import measured
from ptxfp.ptx.interp import run_detailed

ROOT = Path(__file__).resolve().parents[1]
LAYERNORM = ROOT / "tests" / "data" / "kernels" / "triton_norm_layernorm_sm90a.ptx"
ALL = ("sm_5x", "sm_6x", "sm_70", "sm_75")
PTX_MATH = {"rcp": ALL, "rsqrt": ALL, "ex2": ALL, "lg2": ALL,
            "sqrt": ("sm_6x", "sm_70", "sm_75"), "sin": ("sm_70", "sm_75"),
            "cos": ("sm_70", "sm_75")}
ASSUMED = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
SNIPPET = "ex2.approx.f32 d, a;\ndiv.full.f32 e, a, a;\nrsqrt.approx.ftz.f32 f, a;\n"


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_table_is_ptx_math_s():
    assert {p: m.measured for p, m in measured.PRIMITIVES.items()} == PTX_MATH
    assert all(m.source == "ptx-math" and m.source in measured.SOURCES
               for m in measured.PRIMITIVES.values())
    assert measured.BY_MUFU["RSQ"] == "rsqrt" and measured.BY_MUFU["SIN"] == "sin"


def test_docs_table_is_the_data():
    text = (ROOT / "docs" / "semantics.md").read_text()
    rows = re.findall(r"^\| (\w+) \| (\w+) \| [^|]+ \| ([^|(]+) \(([\w-]+): (\w+)\) \|", text,
                      re.M)
    got = {p: (mufu, tuple(t.strip() for t in on.split(",")), src, model)
           for p, mufu, on, src, model in rows if p != "primitive"}
    want = {p: (m.mufu, m.measured, m.source, m.model) for p, m in measured.PRIMITIVES.items()}
    assert got == want


@pytest.mark.parametrize("target", ASSUMED)
def test_note_says_assumed(target):
    for form, prim in (("ex2.approx.f32", "ex2"), ("div.full.f32", "rcp"),
                       ("rsqrt.approx.ftz.f32", "rsqrt"), ("sqrt.approx.f32", "sqrt"),
                       ("lg2.approx.ftz.f32", "lg2"), ("div.approx.f32", "rcp")):
        assert sfu.note(form, target) == \
            f"{prim}: measured on sm_75 (ptx-math); assumed on {target}"
        assert sfu.assumed(form, target)
        assert sfu.note(form, "sm_75") == f"{prim}: measured on sm_75 (ptx-math)"
        assert not sfu.assumed(form, "sm_75")


def test_note_of_a_suffixed_target_names_its_base():
    assert sfu.note("ex2.approx.f32", "sm_90a").endswith("assumed on sm_90")


def test_no_note_for_a_form_without_a_computed_primitive():
    assert not sfu.assumed("tanh.approx.f32", "sm_90")
    assert not sfu.assumed("rcp.approx.ftz.f64", "sm_90")   # MUFU.RCP64H: no model, no claim
    assert sfu.assumed("sin.approx.f32", "sm_90")           # computed since sin/cos landed


def test_run_detailed_notes():
    a = 0x3F000000
    r = run_detailed(SNIPPET, {"a": a}, target="sm_90")
    assert r.notes == ["line 1: ex2.approx.f32: ex2: measured on sm_75 (ptx-math); assumed on "
                       "sm_90",
                       "line 2: div.full.f32: rcp: measured on sm_75 (ptx-math); assumed on "
                       "sm_90",
                       "line 3: rsqrt.approx.ftz.f32: rsqrt: measured on sm_75 (ptx-math); "
                       "assumed on sm_90"]
    assert run_detailed(SNIPPET, {"a": a}, target="sm_75").notes == []


def test_check_diagnostics_are_infos():
    rep = ptxfp.check(LAYERNORM.read_text())
    notes = [d for d in rep if d.rule == "sfu-model"]
    assert [(d.line, d.severity, d.message) for d in notes] == [
        (110, "info", "'div.full.f32': rcp: measured on sm_75 (ptx-math); assumed on sm_90"),
        (160, "info", "'rsqrt.approx.ftz.f32': rsqrt: measured on sm_75 (ptx-math); assumed "
                      "on sm_90")]
    assert not [d for d in ptxfp.check(LAYERNORM.read_text(), target="sm_75")
                if d.rule == "sfu-model"]


# --- the command ------------------------------------------------------------------------------

def test_cli_list_model_column(capsys):
    rc, out, _ = cli(capsys, "list", "div.full.f32")
    head, row = out.splitlines()[:2]
    assert rc == 0 and head.split()[-1] == "model"
    assert row.endswith("rcp: measured on sm_75 (ptx-math); assumed on sm_80 sm_86 sm_89 sm_90 "
                        "sm_100")
    rc, out, _ = cli(capsys, "list", "tanh.approx.f32")
    assert out.splitlines()[1].endswith("not computed: no public model of its primitive")
    rc, out, _ = cli(capsys, "list", "add.rn.f16")              # no SFU form: no column
    assert out.splitlines()[0].split() == ["form", "PTX", "target", "section"]
    rc, out, _ = cli(capsys, "list", "sqrt.approx.ftz.f32", "--json")
    model = json.loads(out)[0]["model"]["sqrt"]
    assert model == {"computed": True, "measured": ["sm_6x", "sm_70", "sm_75"],
                     "source": "ptx-math", "assumed": list(ASSUMED)}


def test_cli_eval_note_on_an_assumed_target(capsys):
    rc, out, err = cli(capsys, "eval", "ex2.approx.f32", "0.5f32", "--target", "sm_90")
    assert rc == 0 and "0x3fb504f3" in out                   # 2^0.5, as on sm_75
    assert err == ("ptxfp: note: ex2.approx.f32: ex2: measured on sm_75 (ptx-math); "
                   "assumed on sm_90\n")
    rc, out, err = cli(capsys, "eval", "ex2.approx.f32", "0.5f32", "--target", "sm_75")
    assert rc == 0 and err == ""
    rc, out, err = cli(capsys, "eval", "ex2.approx.f32", "0.5f32")     # sm_75, the default
    assert rc == 0 and err == ""
    rc, out, err = cli(capsys, "eval", "div.full.f32", "1.0f32", "3.0f32", "--target",
                       "sm_100", "--json")
    doc = json.loads(out)
    assert rc == 0 and err == "" and doc["target"] == "sm_100"
    assert doc["note"] == "rcp: measured on sm_75 (ptx-math); assumed on sm_100"


def test_cli_eval_target_errors_stay_one_line(capsys):
    rc, _, err = cli(capsys, "eval", "ex2.approx.f32", "0.5f32", "--target", "sm_61")
    assert rc == 2 and err.count("\n") == 1 and "sm_61" in err
    rc, _, err = cli(capsys, "eval", "add.f32", "1.0f32", "1.0f32", "--target", "sm_90")
    assert rc == 2 and err.count("\n") == 1 and "--target" in err


def test_cli_check_one_line_note(capsys):
    rc, out, _ = cli(capsys, "check", str(LAYERNORM))
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 2
    assert lines[0] == (f"{LAYERNORM}: info: rcp, rsqrt: measured on sm_75 (ptx-math); "
                        "assumed on sm_90 (-v: where) [sfu-model]")
    rc, out, _ = cli(capsys, "check", str(LAYERNORM), "-v")
    assert [ln.split(": info: ")[0] for ln in out.splitlines() if "[sfu-model]" in ln] == \
        [f"{LAYERNORM}:110:2", f"{LAYERNORM}:160:2"]
    rc, out, _ = cli(capsys, "check", str(LAYERNORM), "--target", "sm_75")
    assert rc == 0 and "assumed" not in out and len(out.splitlines()) == 1


def test_cli_run_note(capsys, tmp_path):
    f = tmp_path / "s.ptx"
    f.write_text(SNIPPET)
    rc, out, err = cli(capsys, "run", str(f), "--set", "a=0.5f32", "--target", "sm_89")
    assert rc == 0 and "0x3fb504f3" in out
    assert err == ("ptxfp: note: ex2, rcp, rsqrt: measured on sm_75 (ptx-math); assumed on "
                   "sm_89\n")
    rc, out, err = cli(capsys, "run", str(f), "--set", "a=0.5f32", "--target", "sm_75")
    assert rc == 0 and err == ""
    rc, out, err = cli(capsys, "run", str(f), "--set", "a=0.5f32", "--target", "sm_80",
                       "--json")
    doc = json.loads(out)
    assert err == "" and doc["target"] == "sm_80" and len(doc["notes"]) == 3
