"""check(..., ptxas=R): the .version/.target rules of each CUDA release 12.0-13.5.

13.0 and 13.5 are held to ptxas' recorded decisions (tests/data/ptxas/targets.json and
tests/data/ptxas/13.5/targets.json, tools/ptxas_probe.py: the lowest .version ptxas accepts
with each .target); the derived releases to the PTX ISA manual's release notes (newest PTX ISA
version per CUDA release) as ptx/releases.py cites them."""

import json
import os

import pytest

import ptxfp
from ptxfp.errors import PtxfpError
from ptxfp.ptx import releases

HERE = os.path.dirname(__file__)
TARGETS = {"13.0": os.path.join(HERE, "data", "ptxas", "targets.json"),
           "13.5": os.path.join(HERE, "data", "ptxas", "13.5", "targets.json")}


def _v(s):
    return tuple(int(x) for x in s.split("."))


def module(version, target):
    return (f".version {version}\n.target {target}\n.address_size 64\n"
            ".visible .entry k()\n{\nret;\n}\n")


@pytest.mark.parametrize("name", ["13.0", "13.5"])
def test_measured_release_equals_ptxas_record(name):
    path = TARGETS[name]
    if not os.path.exists(path):
        pytest.skip(f"{path} missing")
    with open(path) as f:
        rec = json.load(f)
    rel = releases.release(name)
    assert rel.measured
    assert rel.versions == tuple(_v(v) for v in rec["environment"]["list_version"])
    assert rel.current == _v(rec["matrix_versions"][-1])
    for t, v in rec["pair_min_version"].items():
        assert rel.targets[t] == _v(v), t
    known = {t for t, i in rec["environment"]["targets"].items() if i["known"]}
    assert set(rel.targets) == known


@pytest.mark.parametrize("name", ["13.0", "13.5"])
def test_measured_release_pairs(name):
    """Every (.version, .target) pair of the record: check() accepts where ptxas accepts."""
    path = TARGETS[name]
    if not os.path.exists(path):
        pytest.skip(f"{path} missing")
    with open(path) as f:
        rec = json.load(f)
    for t, per in rec["pairs"].items():
        for v, msgs in per.items():
            rep = ptxfp.check(module(v, t), ptxas=name)
            got = [d.ptxas for d in rep.errors]
            want = [m for m in msgs if not m.startswith("warning")]
            assert got == want, (name, v, t, got, want)


def test_release_table_follows_the_manual():
    # PTX ISA release notes: 8.0 with CUDA 12.0 ... 8.8 with 12.9, 9.0 with 13.0
    assert releases.release("12.0").current == (8, 0)
    assert releases.release("12.4").current == (8, 4)
    assert releases.release("12.8").current == (8, 7)
    assert releases.release("12.9").current == (8, 8)
    assert releases.release("13.0").current == (9, 0)
    assert releases.release("13.5").current == (9, 5)
    # a target comes with the PTX ISA version that introduces it
    assert "sm_90a" in releases.release("12.0").targets
    assert "sm_100" not in releases.release("12.6").targets
    assert "sm_120" in releases.release("12.8").targets
    assert "sm_103" not in releases.release("12.8").targets
    assert "sm_110" not in releases.release("12.9").targets
    assert "sm_107a" not in releases.release("13.3").targets
    assert releases.release("13.4").targets["sm_107a"] == (9, 4)
    assert releases.release("V13.0.88") is releases.release("13.0")
    assert releases.release(None).name == releases.DEFAULT == "13.5"


def test_triton_sm90a_module_at_9_4():
    """Triton 3.9 writes .version 9.4 for sm_90a: ptxas 13.5 takes it, 13.0 does not."""
    text = module("9.4", "sm_90a")
    assert ptxfp.check(text).ok
    rep = ptxfp.check(text, ptxas="13.0")
    assert [d.ptxas for d in rep.errors] == ["Unsupported .version 9.4; current version is '9.0'"]
    assert "(ptxas 13.0)" in rep.errors[0].message
    rep = ptxfp.check(text, ptxas="12.8")
    assert [d.ptxas for d in rep.errors] == ["Unsupported .version 9.4; current version is '8.7'"]


def test_sm88_needs_9_0_from_13_5():
    assert ptxfp.check(module("7.3", "sm_88"), ptxas="13.0").ok
    rep = ptxfp.check(module("7.3", "sm_88"))
    assert [d.ptxas for d in rep.errors] == ["PTX .version 7.3 does not support .target sm_88"]


def test_unknown_release_is_one_line():
    with pytest.raises(PtxfpError, match="ptxas release '14.0' is not one ptxfp knows"):
        ptxfp.check("add.f16", ptxas="14.0")
    with pytest.raises(PtxfpError):
        ptxfp.check("add.f16", ptxas="11.8")


def test_spelling_decisions_of_ptxas_13_5():
    """Every recorded spelling of ptxas 13.5 (tests/data/ptxas/13.5/spellings.jsonl, the probe
    of tools/ptxas_probe.py run against V13.5.37): check() accepts its line at the (.version,
    .target) pairs ptxas accepts it at, and only there (a line whose operands check() refuses
    is accepted nowhere, as in test_check_vs_ptxas for 13.0)."""
    from ptxas_records import load_records
    from test_check_vs_ptxas import check_lines, my_sets, ptxas_sets
    from ptxfp.ptx.check import spelling_verdict
    rec = load_records(os.path.join(HERE, "data", "ptxas", "13.5", "spellings.jsonl"))
    if rec is None:
        pytest.skip("13.5/spellings.jsonl missing")
    header, recs = rec
    table, versions, targets = header["messages"], header["versions"], header["targets"]
    found, _ = check_lines("9.5", "sm_100a", [r["line"] for r in recs], ptxas="13.5")
    bad = []
    for k, r in enumerate(recs):
        verdict = spelling_verdict(r["spelling"])
        if verdict.family is None:
            continue                  # outside the model: test_check_vs_ptxas' rule
        want = ptxas_sets(r, table, versions, targets)
        line_bad = any(d.rule.startswith(("operand", "vector", "undeclared"))
                       for d in found.get(k, ()))
        got = (set(), set()) if line_bad else my_sets(verdict, versions, targets)
        if (not want[0] or not want[1]) != (not got[0] or not got[1]) or (
                want[0] and want[1] and want != got):
            bad.append(r["line"])
    assert not bad, f"{len(bad)} of {len(recs)} differ, e.g. {bad[:5]}"
