"""check() on the SFU instructions (tanh, ex2, lg2, rcp, sqrt, rsqrt, sin, cos), held to
ptxas 13.0 and 13.5 (tests/data/ptxas/sfu.jsonl and 13.5/sfu.jsonl, tools/sfu_probe.py):
every spelling of the grid is accepted exactly where ptxas accepts it, each error check()
attributes to ptxas is one ptxas prints for that line, and the accepted forms need the
.version/.target ptxas says they need.  "Not modeled" never means "no error"."""

import os

import pytest

import ptxfp
from ptxas_records import load_records

HERE = os.path.dirname(__file__)
RECORDS = {"13.0": os.path.join(HERE, "data", "ptxas", "sfu.jsonl"),
           "13.5": os.path.join(HERE, "data", "ptxas", "13.5", "sfu.jsonl")}
DECLS = ".reg .b16 h<4>;\n.reg .b32 r<4>;\n.reg .f32 f<4>;\n.reg .f64 g<4>;\n.reg .b64 q<4>;\n"


def module(version, target, lines):
    return (f".version {version}\n.target {target}\n.address_size 64\n"
            ".visible .entry probe()\n{\n" + DECLS + "\n".join(lines) + "\nret;\n}\n"), 11


def errors_per_line(version, target, lines, release):
    text, first = module(version, target, lines)
    rep = ptxfp.check(text, ptxas=release)
    out = {}
    for d in rep.errors:
        out.setdefault(d.line - first, []).append(d.ptxas)
    return out


def _load(release):
    rec = load_records(RECORDS[release])
    if rec is None:
        pytest.skip(f"{RECORDS[release]} missing")
    return rec


@pytest.mark.parametrize("release", ["13.0", "13.5"])
def test_grid_decisions_and_messages(release):
    header, recs = _load(release)
    grid = [r for r in recs if r["kind"] == "grid"]
    v, t = header["grid_at"]
    got = errors_per_line(v, t, [r["line"] for r in grid], release)
    bad = []
    for i, r in enumerate(grid):
        mine = got.get(i, [])
        if bool(mine) != bool(r["msgs"]) or any(m not in r["msgs"] for m in mine):
            bad.append((r["line"], mine, r["msgs"]))
    assert not bad, f"{len(bad)} of {len(grid)} differ, e.g. {bad[:3]}"
    assert len(grid) > 2000


@pytest.mark.parametrize("release", ["13.0", "13.5"])
def test_requirements_of_accepted_forms(release):
    header, recs = _load(release)
    sweep = [r for r in recs if r["kind"] == "sweep"]
    lines = [r["line"] for r in sweep]
    bad = []
    for t in header["targets"]:
        got = errors_per_line(header["versions"][-1], t, lines, release)
        for i, r in enumerate(sweep):
            want, mine = r["targets"][t], got.get(i, [])
            if bool(mine) != bool(want) or any(m not in want for m in mine):
                bad.append((r["line"], t, mine, want))
    for v in header["versions"]:
        key = tuple(int(x) for x in v.split("."))
        ref = "sm_121f" if key >= (8, 8) else "sm_90" if key >= (7, 8) else "sm_75"
        got = errors_per_line(v, ref, lines, release)
        for i, r in enumerate(sweep):
            want, mine = r["versions"][v], got.get(i, [])
            if bool(mine) != bool(want) or any(m not in want for m in mine):
                bad.append((r["line"], v, mine, want))
    assert not bad, f"{len(bad)} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("spelling,message", [
    ("tanh.f16", ".approx modifier required for instruction 'tanh'"),
    ("lg2.approx.f16", "Unexpected instruction types specified for 'lg2'"),
    ("tanh.approx.f64", "Unexpected instruction types specified for 'tanh'"),
    ("sqrt.rn.ftz.f64", "Illegal modifier '.ftz' for instruction 'sqrt'"),
    ("ex2.approx.bf16", ".ftz modifier required for instruction 'ex2.bf16'"),
])
def test_issue_examples_are_errors(spelling, message):
    rep = ptxfp.check(spelling)
    assert [d.ptxas for d in rep.errors] == [message]
