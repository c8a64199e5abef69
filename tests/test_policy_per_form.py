"""policy.per_form / Policy.value: the per-form mechanism (policy.py's docstring)."""

import pytest

from ptxfp import convert, policy
from ptxfp.policy import Policy

TABLE = (("cvt.f32.bf16", "widen_nan", "payload"),
         ("cvt.r[nzmp].f32.bf16", "widen_nan", "quiet"),
         ("cvt.*.bf16", "widen_nan", "canonical"))


def test_value_first_match_then_global():
    p = Policy(widen_nan="quiet", per_form=TABLE)
    assert p.value("widen_nan", "cvt.f32.bf16") == "payload"
    assert p.value("widen_nan", "cvt.rz.f32.bf16") == "quiet"
    assert p.value("widen_nan", "cvt.rz.ftz.f32.bf16") == "canonical"   # third entry
    assert p.value("widen_nan", "cvt.f32.f16") == "quiet"               # no entry: global
    assert p.value("ftz_tininess", "cvt.f32.bf16") == p.ftz_tininess    # other field


def test_values_are_validated_like_the_fields():
    with pytest.raises(ValueError, match="widen_nan must be one of"):
        Policy(per_form=(("cvt.f32.bf16", "widen_nan", "ieee"),))
    with pytest.raises(ValueError, match="not a policy field"):
        Policy(per_form=(("cvt.f32.bf16", "widen", "payload"),))
    with pytest.raises(ValueError, match="glob, field, value"):
        Policy(per_form=(("cvt.f32.bf16", "widen_nan"),))
    with pytest.raises(ValueError, match="bf16_fma_directed"):
        Policy(bf16_fma_directed="rounded")


def test_using_a_field_drops_its_entries_and_per_form_replaces_the_table():
    with policy.using(per_form=TABLE + (("add.*", "sat_minus_zero_to_plus", False),)) as p:
        assert p.value("widen_nan", "cvt.f32.bf16") == "payload"
        with policy.using(widen_nan="quiet") as q:
            assert q.per_form == (("add.*", "sat_minus_zero_to_plus", False),)
            assert q.value("widen_nan", "cvt.f32.bf16") == "quiet"
        with policy.using(per_form=()) as r:
            assert r.per_form == ()
            assert r.value("sat_minus_zero_to_plus", "add.rn.sat.f16") is True


def test_convert_reads_the_per_form_value():
    # bf16 0x7F81, a signalling NaN, widened: the three readings picked per form
    with policy.using(widen_nan="canonical", canonical_nan_f32=0x7FFFFFFF):
        with policy.using(per_form=TABLE):
            assert convert("cvt.f32.bf16", 0x7F81) == 0x7F810000            # payload
            assert convert("cvt.rz.f32.bf16", 0x7F81) == 0x7FC10000         # quiet
            assert convert("cvt.ftz.rz.f32.bf16", 0x7F81) == 0x7FFFFFFF     # canonical
            assert convert("cvt.f32.f16", 0x7C01) == 0x7FFFFFFF             # global
