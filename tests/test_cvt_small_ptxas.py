"""The small-float cvt rows (isa/cvt_small.py) and check() against ptxas 13.0's recorded decisions.

tests/data/ptxas/spellings_cvt-small.jsonl (``tools/ptxas_probe.py --groups cvt-small``): 7,900
spellings of the fp8/fp6/fp4/ue8m0 and .rs x4 cvt forms (every modifier order up to two tokens,
three-token permutations, misspellings) over every (.version 4.0-9.0, .target sm_50-sm_121f)
pair, the model checked against ptxas on the full cross product.  Here: the table's forms are
exactly the legal recorded spellings; parse() accepts exactly those; and at every (version,
target) pair ptxas accepts, check() accepts a spelling exactly where ptxas does, with ptxas'
messages where it names one.
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
DATA = os.path.join(HERE, "data", "ptxas", "spellings_cvt-small.jsonl")
TARGETS = os.path.join(HERE, "data", "ptxas", "targets.json")


_SP = load_records(DATA)
needs_data = pytest.mark.skipif(_SP is None, reason=f"{DATA} missing")


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


@needs_data
def test_table_forms_are_the_legal_recorded_spellings():
    header, recs = _SP
    assert header["counts"]["spellings"] == len(recs) > 7000
    legal = {_canonical(r["spelling"]) for r in recs if r["legal"]}
    table = {isa.canonical_spelling("cvt", rnd, mods, row.types)
             for row in cvt_small.ROWS for rnd, mods in row.forms()}
    assert legal == table, (sorted(legal - table), sorted(table - legal))
    assert len(table) == 43


@needs_data
def test_parse_accepts_what_ptxas_accepts():
    _, recs = _SP
    bad = []
    for r in recs:
        try:
            ptxfp.parse(r["spelling"])
            got = True
        except SpellingError:
            got = False
        if got != r["legal"]:
            bad.append((r["spelling"], r["legal"]))
    assert not bad, bad[:20]


@needs_data
def test_every_spelling_version_target_decision():
    """At every (.version, .target) pair ptxas accepts as a pair, check()'s decision for the
    spelling is ptxas' decision for the line, and each requirement message check() gives is
    one ptxas prints there (the fp8 target message excepted below PTX 8.1: ptxas then names
    sm_90, check() the lowest target, sm_89, that some version accepts)."""
    header, recs = _SP
    probe = _probe()
    table, versions, targets = header["messages"], header["versions"], header["targets"]
    with open(TARGETS) as f:
        pair_min = json.load(f)["pair_min_version"]
    configs = [(v, t) for t in targets for v in versions
               if pair_min.get(t) and _vkey(v) >= _vkey(pair_min[t])]
    assert len(configs) == 409           # the pairs ptxas 13.0 accepts (targets.json)
    cases = 0
    wrong, wrong_msgs = [], []
    for r in recs:
        assert "matrix_exceptions" not in r, r["line"]     # the model is ptxas' matrix
        verdict = spelling_verdict(r["spelling"])
        for v, t in configs:
            cases += 1
            want = probe.messages_at(r, table, v, t)
            if not verdict.ok:
                got_ok, msgs = False, []
            else:
                msgs = [m for _, m in requirement_messages(verdict, _vkey(v), t)]
                got_ok = not msgs
            if got_ok != (not want):
                wrong.append((r["line"], v, t, want, msgs))
            for m in msgs:
                if m not in want and not ("requires .target sm_89" in m and _vkey(v) < (8, 1)):
                    wrong_msgs.append((r["line"], v, t, m, want))
    print(f"\n{cases} (spelling, .version, .target) cases")
    assert cases == len(recs) * len(configs) > 3_000_000
    assert not wrong, wrong[:10]
    assert not wrong_msgs, wrong_msgs[:10]
