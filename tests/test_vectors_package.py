"""ptxfp.vectors, the package's targeted generator: every form, its families present, no gmpy2.

Whether a vector is a tie, an overflow threshold or a cancellation is decided here from the bit
fields and exact rational arithmetic (fractions), not by ptxfp's model.
"""

import json
import os
import pathlib
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import ptxfp
from ptxfp import vectors as PV
from ptxfp.hw import forms as F

ROOT = pathlib.Path(__file__).resolve().parents[1]
ALL = F.all_spellings()


def _f16(bits):
    return Fraction(float(np.array(bits, np.uint16).view(np.float16)))


def _bf16(bits):
    return Fraction(float(np.array(int(bits) << 16, np.uint32).view(np.float32)))


def test_every_form_gets_n_vectors_of_its_operand_widths_deterministically():
    for s in ALL:
        ins = F.parse_form(s)
        for n in (0, 1, 5, 3000):
            ops = PV.targeted(s, n, seed=7)
            assert len(ops) == len(ins.operand_names), s
            for o, f in zip(ops, ins.operand_formats):
                assert o.size == n and o.dtype == ptxfp.core.types.get(f).dtype_name, (s, n, f)
        again = PV.targeted(ptxfp.parse(s) if not s.startswith("cvt.") else s, 3000, seed=7)
        assert all(np.array_equal(x, y) for x, y in zip(PV.targeted(s, 3000, 7), again)), s
    a = PV.targeted("cvt.rn.f16.f32", 3000, seed=1)[0]
    b = PV.targeted("cvt.rn.f16.f32", 3000, seed=2)[0]
    assert not np.array_equal(a, b)


def test_counts_are_checked_before_anything_is_allocated():
    for bad in (-1, 10 ** 15, 2.5, "many"):
        with pytest.raises(ptxfp.PtxfpError) as e:
            PV.targeted("fma.rn.bf16", bad)
        assert "\n" not in str(e.value)


def test_the_double_rounding_witnesses_are_always_there():
    # bf16 fma.rn(0x3F82, 0x3FA0, 0x0001): a*b = 1.015625 * 1.25 = 1.26953125, halfway between
    # the bf16 neighbours 0x3FA2 and 0x3FA3; the tiny c breaks the tie upward.
    a, b, c = (x.tolist() for x in PV.targeted("fma.rn.bf16", 20000))
    rows = set(zip(a, b, c))
    assert (0x3F82, 0x3FA0, 0x0001) in rows and (0xBF82, 0x3FA0, 0x8001) in rows
    p = _bf16(0x3F82) * _bf16(0x3FA0)
    assert p == (_bf16(0x3FA2) + _bf16(0x3FA3)) / 2
    a, b, c = (x.tolist() for x in PV.targeted("fma.rn.f16", 20000))
    assert (0x3C01, 0x3E00, 0x8001) in set(zip(a, b, c))
    assert _f16(0x3C01) * _f16(0x3E00) == (_f16(0x3E01) + _f16(0x3E02)) / 2


def test_products_at_ties_and_sums_that_cancel():
    a, b = PV.targeted("mul.rn.bf16", 20000)
    ties = 0
    for x, y in zip(a.tolist()[:6000], b.tolist()[:6000]):
        if (x & 0x7F80) in (0, 0x7F80) or (y & 0x7F80) in (0, 0x7F80):
            continue
        p = abs(_bf16(x) * _bf16(y))
        e = p.numerator.bit_length() - p.denominator.bit_length()
        e -= (Fraction(2) ** e > p)                       # 2**e <= p < 2**(e+1)
        q = p / Fraction(2) ** (e - 8)                    # in half units of the last bit
        ties += q.denominator == 1 and q.numerator % 2 == 1
    assert ties > 100
    a, c = PV.targeted("add.rn.f32.f16", 20000)
    zero = sum(1 for x, y in zip(a.tolist(), c.tolist())
               if (x & 0x7C00) != 0x7C00 and (y & 0x7F800000) != 0x7F800000 and x & 0x7FFF
               and _f16(x) + Fraction(float(np.array(y, np.uint32).view(np.float32))) == 0)
    assert zero > 100


def test_cvt_vectors_hit_ties_thresholds_and_boundaries():
    (a,) = PV.targeted("cvt.rn.f16.f32", 20000)
    e = (a >> 23) & 0xFF
    low = a & 0x1FFF                                    # the 13 bits below f16 precision
    normal = (e >= 113) & (e <= 142)                    # f16 normal binades
    assert np.sum(normal & (low == 0x1000)) > 500       # exactly halfway: ties
    assert np.sum(normal & (low != 0x1000) & (np.abs(low.astype(np.int64) - 0x1000) <= 3)) > 500
    vals = set(a.tolist())
    # 65504 (max finite), 65520 (max + half a unit: the rn overflow threshold),
    # 2**-25 (half the smallest subnormal), 2**-14 (the smallest normal), both signs
    for v in (0x477FE000, 0x477FF000, 0x33000000, 0x38800000):
        assert v in vals and v | 0x80000000 in vals, hex(v)
    assert np.sum(((a & 0x7F800000) == 0) & ((a & 0x7FFFFF) != 0)) > 50      # f32 subnormals
    nan = (a & 0x7FFFFFFF) > 0x7F800000
    assert len(set((a[nan] & 0x7FFFFF).tolist())) > 50                      # NaN payloads
    a, b = PV.targeted("cvt.rz.relu.bf16x2.f32", 5000)
    assert not np.array_equal(a, b) and 0x7F7FFFFF in set(a.tolist())
    (h,) = PV.targeted("cvt.f32.f16", 70000)
    assert len(set(h.tolist())) == 1 << 16                                   # every input


_SHIM = "import sys\nsys.modules['gmpy2'] = None\n"


def test_the_harness_runs_the_targeted_set_without_gmpy2(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(_SHIM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT / "src")])}
    probe = subprocess.run([sys.executable, "-c", "import gmpy2"], env=env, capture_output=True,
                           text=True)
    assert probe.returncode != 0 and "gmpy2" in probe.stderr     # the shim works
    js = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "ptxfp.hw", "--backend", "model", "--forms",
                        "fma.rn.bf16,cvt.f32.bf16", "--vectors", "0", "--targeted", "3000",
                        "--probes", "none", "--jobs", "1", "--quiet", "--json", str(js)],
                       env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    run = json.loads(js.read_text())
    for f in run["forms"]:
        assert f["sets"]["targeted"] == 3000, f
    assert run["summary"]["sets"]["targeted"] == {"vectors": 6000, "forms": 2}
    assert run["meta"]["targeted"] == 3000
