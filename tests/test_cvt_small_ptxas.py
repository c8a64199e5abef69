"""The small-float cvt rows (isa/cvt_small.py) and check() against ptxas' recorded decisions,
13.0's and 13.5's.

tests/data/ptxas/spellings_cvt-small.jsonl (ptxas 13.0) and
tests/data/ptxas/13.5/spellings_cvt-small.jsonl (ptxas 13.5; ``tools/ptxas_probe.py --groups
cvt-small``): the spellings of the fp8/fp6/fp4/ue8m0/s2f6 and .rs x4 cvt forms (every modifier
order up to two tokens, three-token permutations, misspellings) over every (.version 4.0-9.0 or
9.5, .target sm_50-sm_121f) pair, the model checked against ptxas on the full cross product.
Here, per release: the table's forms that release can assemble are exactly its legal recorded
spellings; parse() accepts exactly those (parse() knows the newest release: a form 13.0 cannot
assemble anywhere is left out for 13.0); and at every (version, target) pair ptxas accepts,
check(ptxas=release) accepts a spelling exactly where ptxas does, with ptxas' messages where it
names one (for a form that release cannot assemble anywhere, check() names the version or
target that brings it, where ptxas 13.0 says "Unexpected instruction types").
"""

import json
import os

import pytest
from ptxas_records import load_records

import ptxfp
from ptxfp import isa
from ptxfp.errors import SpellingError
from ptxfp.isa import cvt_small
from ptxfp.ptx.check import requirement_messages, spelling_verdict

HERE = os.path.dirname(__file__)
DIRS = {"13.0": os.path.join(HERE, "data", "ptxas"),
        "13.5": os.path.join(HERE, "data", "ptxas", "13.5")}
#: the table's forms each release assembles somewhere
FORMS = {"13.0": 43, "13.5": 121}


def _records(release):
    rec = load_records(os.path.join(DIRS[release], "spellings_cvt-small.jsonl"))
    if rec is None:
        pytest.skip(f"no cvt-small records of ptxas {release}")
    return rec


def _configs(release, header):
    """The (.version, .target) pairs of the record that ptxas accepts as a pair."""
    with open(os.path.join(DIRS[release], "targets.json")) as f:
        pair_min = json.load(f)["pair_min_version"]
    return [(v, t) for t in header["targets"] for v in header["versions"]
            if pair_min.get(t) and _vkey(v) >= _vkey(pair_min[t])]


def _operand_refused(rec, table):
    """A line ptxas refuses for its operands (the .b16 destination of .e2m1x2.f16x2): a
    spelling verdict does not see operands; test_operand_refusals_are_check_findings does."""
    errs = [table[i]["text"] for i in rec["msgs"] if table[i]["kind"] == "error"]
    return errs == ["Arguments mismatch for instruction 'cvt'"]


def _table_forms():
    return {isa.canonical_spelling("cvt", rnd, mods, row.types)
            for row in cvt_small.ROWS for rnd, mods in row.forms()}


def _legal_in(release, header):
    """The table's forms check(ptxas=release) accepts at some pair of the record."""
    configs = [(_vkey(v), t) for v, t in _configs(release, header)]
    return {sp for sp in _table_forms()
            if any(not requirement_messages(spelling_verdict(sp), v, t, release)
                   for v, t in configs)}

RELEASES = pytest.mark.parametrize("release", ["13.0", "13.5"])
#: forms 13.0's probe did not generate (its pairs had no .e2m1x2.f16x2): 13.0 takes them from
#: PTX 8.6, test_e2m1x2_f16x2_bound_per_release below asks ptxas itself
UNRECORDED = {"13.0": {"cvt.rn.satfinite.e2m1x2.f16x2", "cvt.rn.relu.satfinite.e2m1x2.f16x2"},
              "13.5": set()}


def _probe():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "ptxas_probe", os.path.join(HERE, os.pardir, "tools", "ptxas_probe.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _vkey(v):
    return tuple(int(x) for x in v.split("."))


def _canonical(spelling):
    toks = spelling.split(".")[1:]
    rnd = [t for t in toks if t in isa.ROUNDING_TOKENS]
    mods = {t for t in toks if t in isa.MODIFIER_ORDER}
    tys = tuple(t for t in toks if t not in isa.ROUNDING_TOKENS and t not in isa.MODIFIER_ORDER)
    return isa.canonical_spelling("cvt", rnd[0] if rnd else None, mods, tys)


@RELEASES
def test_table_forms_are_the_legal_recorded_spellings(release):
    header, recs = _records(release)
    assert header["counts"]["spellings"] == len(recs) > 7000
    legal = {_canonical(r["spelling"]) for r in recs if r["legal"]}
    table = _legal_in(release, header) - UNRECORDED[release]
    assert legal == table, (sorted(legal - table), sorted(table - legal))
    assert len(table) == FORMS[release]


PTXAS = {"13.0": "/usr/local/bin/ptxas",
         "13.5": "/work/tools/cuda135/nvidia/cu13/bin/ptxas"}


@RELEASES
def test_e2m1x2_f16x2_bound_per_release(release, tmp_path):
    """cvt.rn.satfinite.e2m1x2.f16x2 (a .b8 destination): ptxas 13.0 takes it from PTX 8.6,
    13.5 from 9.1, and check(ptxas=release) says so (live: skipped without that ptxas)."""
    import shutil
    import subprocess
    exe = PTXAS[release]
    if release == "13.0":
        exe = exe if os.path.exists(exe) else shutil.which("ptxas")
    if not exe or not os.path.exists(exe):
        pytest.skip(f"ptxas {release} not installed")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    if f"release {release}" not in out:
        pytest.skip(f"{exe} is not ptxas {release}")
    for v in ("8.6", "9.0", "9.1"):
        if _vkey(v) > {"13.0": (9, 0), "13.5": (9, 5)}[release]:
            continue
        text = (f".version {v}\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{{\n"
                ".reg .b8 c;\n.reg .b32 r;\ncvt.rn.satfinite.e2m1x2.f16x2 c, r;\nret;\n}\n")
        path = tmp_path / f"k{v}.ptx"
        path.write_text(text)
        res = subprocess.run([exe, "-arch", "sm_100a", str(path), "-o", os.devnull],
                             capture_output=True, text=True)
        ok = res.returncode == 0
        assert ptxfp.check(text, ptxas=release).ok == ok, (release, v, res.stderr)
        assert ok == (_vkey(v) >= {"13.0": (8, 6), "13.5": (9, 1)}[release])


@RELEASES
def test_parse_accepts_what_ptxas_accepts(release):
    header, recs = _records(release)
    newer = _table_forms() - _legal_in(release, header)   # forms of later releases
    bad = []
    for r in recs:
        if _operand_refused(r, header["messages"]):
            continue
        try:
            ptxfp.parse(r["spelling"])
            got = True
        except SpellingError as e:
            got = "not compute it" in str(e)          # legal, not computed (.s2f6x2)
        if got != r["legal"] and not (got and _canonical(r["spelling"]) in newer):
            bad.append((r["spelling"], r["legal"]))
    assert not bad, bad[:20]


def _sampled(configs):
    """The pairs the default suite takes: each target's lowest and highest .version, and every
    fifth pair besides (the whole set, 3.4 M / 8.6 M cases a release, runs with -m slow)."""
    ends = set()
    for t in dict.fromkeys(t for _, t in configs):
        vs = [v for v, tt in configs if tt == t]
        ends |= {(vs[0], t), (vs[-1], t)}
    return [c for i, c in enumerate(configs) if i % 5 == 0 or c in ends]


@pytest.mark.parametrize("release, every", [
    ("13.0", False), ("13.5", False),
    pytest.param("13.0", True, marks=pytest.mark.slow),
    pytest.param("13.5", True, marks=pytest.mark.slow)])
def test_every_spelling_version_target_decision(release, every):
    """At every (.version, .target) pair ptxas accepts as a pair, check()'s decision for the
    spelling is ptxas' decision for the line, and each requirement message check() gives is
    one ptxas prints there, in that release's words (13.0: 'cvt with .e2m1x2', 13.5:
    'cvt.e2m1x2.f32'; the fp8 target sm_90 below PTX 8.1, sm_89 from 8.1), the forms the
    release cannot assemble anywhere excepted (module docstring).  The default suite takes a
    sample of the pairs (``_sampled``), -m slow every pair."""
    header, recs = _records(release)
    probe = _probe()
    table = header["messages"]
    configs = _configs(release, header)
    assert len(configs) == {"13.0": 409, "13.5": 575}[release]   # targets.json's pairs
    if not every:
        configs = _sampled(configs)
    newer = _table_forms() - _legal_in(release, header)
    cases = 0
    wrong, wrong_msgs = [], []
    for r in recs:
        assert "matrix_exceptions" not in r, r["line"]     # the model is ptxas' matrix
        if _operand_refused(r, table):
            continue
        verdict = spelling_verdict(r["spelling"])
        later = verdict.ok and _canonical(r["spelling"]) in newer
        for v, t in configs:
            cases += 1
            want = probe.messages_at(r, table, v, t)
            if not verdict.ok:
                got_ok, msgs = False, []
            else:
                msgs = [m for _, m in requirement_messages(verdict, _vkey(v), t, release)]
                got_ok = not msgs
            if got_ok != (not want):
                wrong.append((r["line"], v, t, want, msgs))
            for m in msgs:
                if m not in want and not later:
                    wrong_msgs.append((r["line"], v, t, m, want))
    print(f"\n{cases} (spelling, .version, .target) cases")
    skipped = sum(_operand_refused(r, table) for r in recs)
    assert skipped <= 1 and cases == (len(recs) - skipped) * len(configs) > \
        (3_000_000 if every else 500_000)
    assert not wrong, wrong[:10]
    assert not wrong_msgs, wrong_msgs[:10]


@RELEASES
def test_operand_refusals_are_check_findings(release):
    """The recorded lines ptxas refuses for their operands: check() of the line in a module
    (.b16 h, .b32 r, .f32 f, .b8 bb registers) finds 'Arguments mismatch' too."""
    header, recs = _records(release)
    lines = [r["line"] for r in recs if _operand_refused(r, header["messages"])]
    for line in lines:
        text = (".version 9.0\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n"
                ".reg .b16 h<4>;\n.reg .b32 r<4>;\n.reg .f32 f<4>;\n.reg .b8 bb<4>;\n"
                f"{line}\nret;\n}}\n")
        assert "Arguments mismatch for instruction 'cvt'" in [
            d.ptxas for d in ptxfp.check(text, ptxas=release).errors], line
