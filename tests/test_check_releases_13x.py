"""check(..., ptxas=R) for R = 13.0 ... 13.5, held to what each ptxas release said about one
small module per 13.0 -> 13.5 difference (tests/data/ptxas/releases_13x.json,
tools/release_probe.py; ptxas V13.0.88, V13.1.115, V13.2.86, V13.3.73, V13.4.92, V13.5.37).

A probe with a ``key`` (a regular expression) is compared on that one fact (whether some
message matches it: a name or modifier token the release does not know, a token it cannot
parse); the others on the messages: where ptxas stops at a fatal error, check() must report
it (it may go on past it), else the two sets of error messages are equal.  Where the binaries
are installed (PTXFP_PTXAS_13X="13.1=PATH,13.2=PATH,..." or /tmp/nvcc13x/13.x/nvidia/cu13/bin),
each probe is also run live and must say what the record says."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import ptxfp
from ptxfp.ptx import releases

HERE = os.path.dirname(__file__)
RECORD = os.path.join(HERE, "data", "ptxas", "releases_13x.json")
RELEASES = ("13.0", "13.1", "13.2", "13.3", "13.4", "13.5")

with open(RECORD) as _f:
    REC = json.load(_f)
PROBES = {p["name"]: p for p in REC["probes"]}


def _errors(messages):
    return [(line, sev, msg) for line, sev, msg in messages if sev in ("error", "fatal")]


def agrees(probe, release):
    """(agrees, what ptxas said, what check() said)"""
    want = _errors(probe["ptxas"][release]["messages"])
    got = [(d.line, d.ptxas or d.message) for d in ptxfp.check(probe["ptx"], ptxas=release).errors]
    key = probe.get("key")
    header = any(sev == "fatal" and line <= 2 for line, sev, _ in want)
    if key and not header:
        ok = (any(re.search(key, m) for _, _, m in want)
              == any(re.search(key, m) for _, m in got))
    elif any(sev == "fatal" for _, sev, _ in want):
        ok = {(ln, m) for ln, _, m in want} <= set(got)
    else:
        ok = {(ln, m) for ln, _, m in want} == set(got)
    return ok, want, got


@pytest.mark.parametrize("release", RELEASES)
def test_check_equals_each_release_on_every_probe(release):
    bad = []
    for p in REC["probes"]:
        ok, want, got = agrees(p, release)
        if not ok:
            bad.append(f"{p['name']}: ptxas {want}; check {got}")
    assert not bad, "\n".join(bad)


def test_record_covers_six_releases():
    assert sorted(REC["releases"]) == list(RELEASES)
    for name, env in REC["releases"].items():
        assert f"release {name}," in env["version"][0], env["version"]
        rel = releases.release(name)
        assert rel.measured
        assert [f"{a}.{b}" for a, b in rel.versions] == env["list_version"]
    assert len(REC["probes"]) >= 100


def test_each_difference_has_one_release_where_it_changed():
    # the release tags of the data (spot checks of the record's verdicts)
    def said(name, release):
        return [m for _, _, m in _errors(PROBES[name]["ptxas"][release]["messages"])]

    assert said("version 9.3", "13.2") and not said("version 9.3", "13.3")
    assert said("name spdecompress", "13.3") and not any(
        "Not a name" in m for m in said("name spdecompress", "13.4"))
    assert said("modifier .alloc_small", "13.4") == ["Unknown modifier '.alloc_small'"]
    assert said(".2pi at 9.4", "13.4") == ["Parsing error near 'pi': syntax error"]
    assert said("add.satfinite.f16", "13.3") == ["Illegal modifier '.satfinite' for "
                                                 "instruction 'add'"]
    assert said("add.satfinite.f16", "13.4") == ["Unexpected instruction types specified "
                                                 "for 'add'"]


def _binaries():
    spec = os.environ.get("PTXFP_PTXAS_13X")
    out = {}
    if spec:
        out = dict(item.split("=", 1) for item in spec.split(",") if "=" in item)
    for r in RELEASES:
        for cand in (f"/tmp/nvcc13x/{r}/nvidia/cu13/bin/ptxas",):
            if r not in out and os.path.exists(cand):
                out[r] = cand
    if "13.0" not in out and shutil.which("ptxas"):
        out["13.0"] = shutil.which("ptxas")
    if "13.5" not in out and os.path.exists("/work/tools/cuda135/nvidia/cu13/bin/ptxas"):
        out["13.5"] = "/work/tools/cuda135/nvidia/cu13/bin/ptxas"
    return {r: p for r, p in out.items() if os.access(p, os.X_OK)}


@pytest.mark.parametrize("release", RELEASES)
def test_record_equals_live_ptxas(release, tmp_path):
    path = _binaries().get(release)
    if path is None:
        pytest.skip(f"ptxas {release} not installed (PTXFP_PTXAS_13X or /tmp/nvcc13x)")
    sys.path.insert(0, os.path.join(HERE, "..", "tools"))
    try:
        import release_probe as rp
    finally:
        sys.path.pop(0)
    ver = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    if f"release {release}," not in ver:
        pytest.skip(f"{path} is not ptxas {release}")
    archs = rp.allowed_archs(path)
    for p in REC["probes"]:
        live = rp.run(path, p["ptx"], archs, str(tmp_path))
        assert live["messages"] == p["ptxas"][release]["messages"], p["name"]
