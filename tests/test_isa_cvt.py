"""The cvt rows (ptxfp.isa.cvt) against ptxas 13.0's recorded decisions (tests/data/ptxas).

The table is the one description of the cvt forms: ptxfp.convert parses against it and check()
validates against it.  Here the rows themselves are held to ptxas: the forms they accept are
exactly the legal recorded spellings, each form's lowest .version/.target is ptxas' (down to
the recorded matrix' floor, .version 4.0 / sm_50; below it see
test_cvt.py::test_ptxas_requirements, live), every requirement message is a ptxas message with
ptxas' threshold, and parse_cvt accepts exactly what ptxas accepts.  tests/test_check_vs_ptxas.py
holds check() (and with it the table) to the same records at every (.version, .target).
"""

import json
import os

import pytest

import ptxfp
from ptxfp.isa import cvt as isa_cvt
from ptxfp.ops.cvt import parse_cvt
from ptxfp.errors import SpellingError
from ptxfp.ptx.check import KNOWN_VERSIONS, TARGET_MIN_VERSION, spelling_verdict, target_sm

DATA = os.path.join(os.path.dirname(__file__), "data", "ptxas", "spellings.jsonl")
FLOOR_PTX, FLOOR_SM = (4, 0), 50            # the recorded matrix starts here


def _load():
    if not os.path.exists(DATA):
        return None
    with open(DATA) as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])
    return header, [json.loads(ln) for ln in lines[1:]]


_SP = _load()
needs_data = pytest.mark.skipif(_SP is None, reason="tests/data/ptxas/spellings.jsonl missing")


def _vkey(v):
    return tuple(int(x) for x in v.split("."))


def _split(spelling):
    """(rounding tokens, modifier tokens, type tokens) of a cvt spelling, as written."""
    toks = spelling.split(".")[1:]
    return ([t for t in toks if t in isa_cvt.ROUNDING_TOKENS],
            [t for t in toks if t in isa_cvt.MODIFIER_ORDER],
            tuple(t for t in toks if t not in isa_cvt.ROUNDING_TOKENS
                  and t not in isa_cvt.MODIFIER_ORDER))


def _canonical(spelling):
    rnds, mods, types = _split(spelling)
    return isa_cvt.canonical_spelling(rnds[0] if rnds else None, set(mods), types)


def _table_records():
    """The recorded cvt lines whose types are a (dst, src) pair of the table."""
    header, recs = _SP
    return header["messages"], [r for r in recs if r["op"] == "cvt"
                                and _split(r["spelling"])[2] in isa_cvt.PAIRS]


def _row_of(canonical):
    """The least demanding row that accepts a canonical spelling (as parse/check choose)."""
    rnds, mods, types = _split(canonical)
    rnd = rnds[0] if rnds else None
    fits = [r for r in isa_cvt.rows_for(*types)
            if set(mods) <= r.modifiers and r.required <= set(mods)
            and (rnd in r.roundings if rnd else not r.rounding_required)]
    return min(fits, key=lambda r: (r.min_ptx, r.min_sm)) if fits else None


# --------------------------------------------------------------------------------------------
# the rows on their own

def test_rows_are_consistent():
    for row in isa_cvt.ROWS:
        assert row.required <= row.modifiers <= set(isa_cvt.MODIFIER_ORDER)
        assert set(row.roundings) <= set(isa_cvt.ROUNDING_TOKENS)
        assert row.dst in isa_cvt.TYPES and row.src in isa_cvt.TYPES
        assert "f32" in row.types and row.dst != row.src
        assert len(row.operands) == 2 + row.dst.endswith("x2") + ("rs" in row.roundings)
        assert row.executable        # .rs too: smallfloat.py computes it from rbits
        assert bool(row.targets) == bool(row.targets_message) == ("rs" in row.roundings)
        for kind, thr, msg in row.requires:
            assert kind in ("version", "target")
            assert (("%d.%d" % thr) if kind == "version" else ("sm_%d" % thr)) in msg
    assert set(isa_cvt.PAIRS) == {("f16", "f32"), ("bf16", "f32"), ("f16x2", "f32"),
                                  ("bf16x2", "f32"), ("f32", "f16"), ("f32", "bf16")}
    every = isa_cvt.canonical_spellings(executable=False)
    assert len(every) == len(set(every))
    assert isa_cvt.canonical_spellings() == every


def test_ptxfp_reads_this_table():
    # the parser, the checker, the CLI listing and the harness see the same forms
    from ptxfp.cli import _forms
    from ptxfp.hw.forms import all_spellings
    from ptxfp import isa
    cvt = isa.canonical_spellings("cvt")           # these rows and isa/cvt_small.py's
    assert cvt[:len(isa_cvt.canonical_spellings())] == isa_cvt.canonical_spellings()
    # (the listing also has the 'cvtx' family's cvt forms: integers, .f64)
    assert [s for s, *_ in _forms() if s.startswith("cvt.") and ptxfp.parse(s).family == "cvt"] == cvt
    assert [s for s in all_spellings() if s.startswith("cvt.")] == cvt
    for s in isa_cvt.canonical_spellings(executable=False):
        v = spelling_verdict(s)
        assert v.ok and v.form is _row_of(s), s
        ins = parse_cvt(s)
        assert str(ins) == s and ins.row is _row_of(s)


# --------------------------------------------------------------------------------------------
# the rows against ptxas

@needs_data
def test_table_forms_are_the_legal_recorded_spellings():
    _, recs = _table_records()
    legal = {_canonical(r["spelling"]) for r in recs if r["legal"]}
    table = set(isa_cvt.canonical_spellings(executable=False))
    assert legal == table, (sorted(legal - table), sorted(table - legal))


@needs_data
def test_requirements_are_ptxas_thresholds():
    """Every legal recorded spelling: the lowest .version/.target ptxas accepts is the row's
    (clamped to the matrix' floor), and the targets of the .rs rows are ptxas' only ones."""
    _, recs = _table_records()
    n, bad = 0, []
    for r in recs:
        if not r["legal"]:
            continue
        n += 1
        row = _row_of(_canonical(r["spelling"]))
        want = (_vkey(r["min_version"]), target_sm(r["min_target"]),
                tuple(r.get("targets_ok", ())))
        sm = target_sm(row.targets[0]) if row.targets else row.min_sm    # (.rs: sm_100a)
        # targets the recording ptxas knows (13.0: no sm_107a, which 13.5 adds to .rs)
        got = (max(row.min_ptx, FLOOR_PTX), max(sm, FLOOR_SM),
               tuple(t for t in row.targets if t in _SP[0]["targets"]))
        if got != want:
            bad.append((r["spelling"], want, got))
    assert n > 100
    assert not bad, bad[:10]


@needs_data
def test_requirement_messages_are_ptxas_messages():
    """Each requirement of a row is a message ptxas prints for the row's spellings, with the
    same threshold (requirements below the matrix' floor are checked live, test_cvt.py)."""
    table, recs = _table_records()
    seen = {}
    for r in recs:
        if r["legal"]:
            row = _row_of(_canonical(r["spelling"]))
            seen.setdefault(row, []).append(r)
    assert set(seen) == set(isa_cvt.ROWS)
    for row, rs in seen.items():
        for kind, thr, msg in row.requires:
            if (kind == "version" and thr <= FLOOR_PTX) or (kind == "target" and thr <= FLOOR_SM):
                continue
            below = "%d.%d" % thr if kind == "version" else "sm_%d" % thr
            for r in rs:
                entries = [table[i] for i in r["msgs"]]
                assert {"text": msg, "kind": kind, "below": below} in entries, (r["line"], msg)
        if row.targets:
            for r in rs:
                entries = [table[i] for i in r["msgs"] if table[i]["kind"] == "target"
                           and "rejects" in table[i]]
                assert [e["text"] for e in entries] == [row.targets_message]
                assert not set(row.targets) & set(entries[0]["rejects"])


@needs_data
def test_parse_cvt_accepts_what_ptxas_accepts():
    """parse_cvt on every recorded spelling of the table's types: accepted exactly where
    ptxas accepts the line somewhere, with ptxas' minimum (a row with a target list: its
    first target)."""
    table, recs = _table_records()
    n, bad = 0, []
    for r in recs:
        # a line ptxas rejects for its operands only (e.g. .rs without rbits) says nothing
        # about the spelling; parse_cvt does not see operands
        errs = [table[i]["text"] for i in r["msgs"] if table[i]["kind"] == "error"]
        if errs and all(e.startswith("Arguments mismatch") for e in errs):
            continue
        n += 1
        try:
            ins = parse_cvt(r["spelling"])
            sm = target_sm(ins.row.targets[0]) if ins.row.targets else ins.min_sm
            got = (_vkey("%d.%d" % max(ins.min_ptx, FLOOR_PTX)), max(sm, FLOOR_SM))
        except SpellingError:
            got = None
        if not r["legal"]:
            want = None
        else:
            want = (_vkey(r["min_version"]), target_sm(r["min_target"]))
        if got != want:
            bad.append((r["spelling"], want, got))
    assert n > 4000
    assert not bad, bad[:20]


# --------------------------------------------------------------------------------------------
# check() at each form's own minimum, down to what ptxas 13.0 knows (.version 1.0, sm_10)

@pytest.mark.parametrize("spelling", isa_cvt.canonical_spellings(executable=False))
def test_every_cvt_form_at_its_own_minimum(spelling):
    row = _row_of(spelling)
    v = row.min_ptx
    t = row.targets[0] if row.targets else "sm_%d" % row.min_sm
    v = max(v, TARGET_MIN_VERSION[t])
    assert ptxfp.check(spelling, version="%d.%d" % v, target=t).ok
    if row.min_ptx > (1, 0):
        lower = max(x for x in KNOWN_VERSIONS if x < row.min_ptx)
        rep = ptxfp.check(spelling, version="%d.%d" % lower, target=t)
        assert "min-version" in [d.rule for d in rep.errors]
    if row.min_sm > 10:
        lower_t = max((k for k in TARGET_MIN_VERSION if target_sm(k) < row.min_sm),
                      key=target_sm)
        rep = ptxfp.check(spelling, version="9.0", target=lower_t)
        assert {d.rule for d in rep.errors} - {"target-unsupported"} == {"min-target"}
