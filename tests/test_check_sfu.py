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


#: sin/cos with .2pi (PTX ISA 9.5), as ptxas 13.5 (V13.5.37) answered at .target sm_100a
#: (the same at sm_50, sm_75, sm_90, sm_120): line -> every message it printed at .version
#: 9.5 and at 9.4.  ptxas 13.0 stops at every line: "Parsing error near 'pi': syntax error".
TWO_PI = [
    ("sin.approx.ftz.2pi.f32 f1, f2;", [], [".2pi"]),
    ("cos.approx.ftz.2pi.f32 f1, f2;", [], [".2pi"]),
    ("sin.2pi.approx.ftz.f32 f1, f2;", [], [".2pi"]),
    ("sin.approx.2pi.f32 f1, f2;",
     [".ftz modifier required for instruction 'sin' with modifier '.2pi'"], [".2pi"]),
    ("sin.approx.ftz.2pi.2pi.f32 f1, f2;", ["Duplicate .2pi modifier"], [".2pi"]),
    ("ex2.approx.ftz.2pi.f32 f1, f2;", ["Illegal modifier '.2pi' for instruction 'ex2'"],
     [".2pi"]),
    ("add.2pi.f32 f1, f2, f3;", ["Illegal modifier '.2pi' for instruction 'add'",
                                 ".ftz modifier required for instruction 'add' with modifier "
                                 "'.2pi'"], [".2pi"]),
    ("sin.approx.ftz.2pi.f64 g1, g2;", ["Unexpected instruction types specified for 'sin'"],
     []),
    ("sin.rn.ftz.2pi.f32 f1, f2;", [".approx modifier required for instruction 'sin'",
                                    "Illegal rounding modifier for instruction 'sin'"], [".2pi"]),
]
PTXAS_13_5 = "/work/tools/cuda135/nvidia/cu13/bin/ptxas"


@pytest.mark.parametrize("line, at95, also94", TWO_PI)
def test_two_pi_as_ptxas_13_5(line, at95, also94):
    """.2pi: legal on sin/cos .approx.ftz.f32 from PTX 9.5 (ptxas 13.5), checked not computed;
    check() accepts where ptxas does and each message it gives is one ptxas printed; 13.0
    cannot read the token."""
    v94 = at95 + [f"Feature '{f}' requires PTX ISA .version 9.5 or later" for f in also94]
    for version, want in (("9.5", at95), ("9.4", v94)):
        got = errors_per_line(version, "sm_100a", [line], "13.5").get(0, [])
        assert bool(got) == bool(want) and set(got) <= set(want), (version, got, want)
    got = errors_per_line("9.0", "sm_100a", [line], "13.0").get(0, [])
    assert got == ["Parsing error near 'pi': syntax error"]


@pytest.mark.skipif(not os.path.exists(PTXAS_13_5), reason="ptxas 13.5 not installed here")
def test_two_pi_live():
    """The table above is what the installed ptxas 13.5 prints."""
    import subprocess
    import tempfile
    for version in ("9.5", "9.4"):
        text, first = module(version, "sm_100a", [ln for ln, _, _ in TWO_PI])
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(text)
        try:
            r = subprocess.run([PTXAS_13_5, "-arch", "sm_100a", f.name, "-o", os.devnull],
                               capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(f.name)
        seen = {}
        for ln in r.stderr.splitlines():
            if ", line " in ln and "; error" in ln:
                n = int(ln.split(", line ")[1].split(";")[0]) - first
                seen.setdefault(n, set()).add(ln.split(": ", 1)[1].strip())
        for k, (_, at95, also94) in enumerate(TWO_PI):
            want = set(at95) | ({f"Feature '{f}' requires PTX ISA .version 9.5 or later"
                                 for f in also94} if version == "9.4" else set())
            assert seen.get(k, set()) == want, (version, TWO_PI[k][0], seen.get(k))
