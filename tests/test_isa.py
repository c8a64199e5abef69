"""The instruction table validated as data (as riscv-opcodes checks its opcode files): no two
rows accept one spelling, every type and operand class is known, every requirement is a
well-formed triple and monotone, every row's shape is what its readers assume."""

import re
from collections import defaultdict

import pytest

from ptxfp import isa
from ptxfp.core import types
from ptxfp.isa.rows import CLASSES, FAMILIES, MODIFIER_ORDER, REPEATABLE, ROUNDING_TOKENS

#: the scalar rows (the matrix rows, family 'mma', have their own checks: tests/test_isa_mma.py)
SCALAR = tuple(r for r in isa.TABLE if r.matrix is None)


def _accepted():
    """(opcode, types, rounding, modifiers) -> the rows that accept it."""
    seen = defaultdict(list)
    for row in SCALAR:
        for rnd, mods in row.forms():
            seen[(row.opcode, row.types, rnd, mods)].append(row)
    return seen


def test_no_two_rows_accept_one_spelling():
    overlaps = {k: v for k, v in _accepted().items() if len(v) > 1}
    assert not overlaps, sorted(isa.canonical_spelling(k[0], k[2], k[3], k[1])
                                for k in overlaps)


def test_every_type_operand_and_token_is_known():
    for row in SCALAR:
        assert row.family in FAMILIES and row.family in isa.OPCODE_FAMILIES[row.opcode]
        for t in row.types:
            assert t in types.TYPES, (row, t)
        assert set(row.roundings) <= set(ROUNDING_TOKENS), row
        assert set(row.roundings) <= set(FAMILIES[row.family].rounding_tokens), row
        assert row.required <= row.modifiers <= set(MODIFIER_ORDER), row
        # setp and testp write a predicate p (rows typed by what they compare)
        # (and mul/mad.wide, popc/clz/bfind a destination type of their own)
        assert row.operands[0].name in ("d", "p"), row
        assert row.operands[0].type in (row.dtype, "pred") or row.family == "int", row
        names = [o.name for o in row.operands]
        assert len(set(names)) == len(names), row
        for o in row.operands:
            assert o.type in types.TYPES and o.cls in CLASSES, (row, o)
            # the class takes a register of the operand's width (or wider, as cvt's do)
            regs = {r for r in CLASSES[o.cls] if not r.startswith("imm_")}
            assert any(types.width(r) >= types.width(o.type) for r in regs) or (
                o.cls.startswith("imm.") and CLASSES[o.cls]), (row, o)   # lop3's immLut
        if row.rounding_required:
            assert row.roundings, row
    assert REPEATABLE <= set(MODIFIER_ORDER)


#: ptxas messages whose version is not ptxas' threshold (measured: neg.f16 assembles from PTX
#: 5.1, and below it ptxas says 6.0; tests/data/ptxas/spellings.jsonl)
MISSTATED = {("Feature 'neg.f16 or neg.f16x2' requires PTX ISA .version 6.0 or later", (5, 1))}


def test_requirements_are_well_formed():
    for row in SCALAR:
        kinds = [k for k, _, _ in row.requires]
        for kind, thr, msg in row.requires:
            m = re.fullmatch(r"ptxas:(\d+\.\d+)?-(\d+\.\d+)?:(.*)", kind)
            if m:                       # a requirement of some releases only (per_release)
                assert m.group(1) or m.group(2), row
                kind = m.group(3)
            m = re.fullmatch(r"ptx:(\d+\.\d+)?-(\d+\.\d+)?:(.*)", kind)
            if m:                       # of some .versions only (per_ptx: fp8 cvt's sm_90/89)
                assert m.group(1) or m.group(2), row
                kind = m.group(3)
            if kind in ("illegal", "illegal-alone"):
                # a form some releases refuse outright (rows.illegal / rows.unknown_form): only
                # as a per-release requirement, with ptxas' message
                assert msg, row
                assert any(k.startswith("ptxas:") and k.endswith(":" + kind)
                           for k, _, _ in row.requires), row
                continue
            assert kind in ("version", "target") or re.fullmatch(r"version@sm_\d+", kind) or (
                kind.startswith("only:") and "{target}" in msg), row
            if kind.startswith("only:"):
                continue                # the form's own targets, beside a row's (cvt .rz)
            if kind.startswith("version"):
                assert f".version {thr[0]}.{thr[1]} or later" in msg or (msg, thr) in MISSTATED, \
                    (row, msg)
            else:
                assert f"sm_{thr} or higher" in msg, (row, msg)
        assert kinds.count("target") <= kinds.count("version") + 1
        if row.targets:
            assert "{target}" in row.targets_message and all(
                re.fullmatch(r"sm_\d+[af]?", t) for t in row.targets)


def test_requirements_are_monotone():
    """A spelling with more modifiers never needs less than one with fewer (same opcode, types
    and rounding), so adding a modifier can only raise what a form needs."""
    need = {}
    for key, rows in _accepted().items():
        row = min(rows, key=lambda r: (r.min_ptx, r.min_sm))
        need[key] = (row.min_ptx, row.min_sm)
    for (op, tys, rnd, mods), (v, sm) in need.items():
        for m in mods:
            fewer = need.get((op, tys, rnd, mods - {m}))
            if fewer is not None:
                assert fewer[0] <= v and fewer[1] <= sm, (op, tys, rnd, sorted(mods), m)


def test_every_executable_form_parses_to_its_row():
    from ptxfp import parse
    for row in SCALAR:
        for rnd, mods in row.forms():
            s = isa.canonical_spelling(row.opcode, rnd, mods, row.types)
            if not row.executable:
                continue
            ins = parse(s)
            assert str(ins) == s
            assert (ins.min_ptx, ins.min_sm) <= (row.min_ptx, row.min_sm) or ins.row is row


@pytest.mark.parametrize("family", list(FAMILIES))
def test_families_have_rows(family):
    assert isa.family_rows(family)
    assert isa.canonical_spellings(family)
