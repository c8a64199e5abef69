"""Mismatch classes, the emulations of the usual wrong implementations they are judged by, and
the report that ``ver`` and ``sweep`` print.

A mismatch is a vector whose result from the implementation under test (``got``) differs from
ptxfp's (``expected``).  Each one gets the first class that fits, in this order (packed forms:
the class of the first lane that differs):

``NaN not canonical``       both NaN, other bits than the canonical NaN (POLICY)
``NaN where a number``      got a NaN, expected a number (and the other way round:
``number where NaN``)
``-0 where +0`` / ``+0 where -0``
``result double-rounded``   got equals an emulation that rounds twice: the f16/bf16 forms
                            computed in binary32 (round to nearest even) and rounded again into
                            the format in the form's mode, the mixed .f32 forms computed in
                            binary64 and rounded again into binary32, cvt rounded first to the
                            format's precision with an unbounded exponent and then again onto
                            the subnormal grid
``fma not fused``           got equals round(round(a*b) + c): the product rounded first
``subnormal flushed``       expected a subnormal, got a zero; or got equals ptxfp's result on
                            the operands with their subnormals flushed to zero
``overflow handling``       expected or got is an infinity or the largest finite value
``off by one ulp``          same sign, neighbouring encodings: a rounding direction or tie
                            decided the other way
``other``

The emulations are computed here with NumPy (binary32/binary64 arithmetic and a rounding
routine of its own); they only name a class, the verdict is always ptxfp's result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .. import policy as _policy
from .common import CLASSES, round_float, to_float  # noqa: F401 (re-exported)
from .forms import Form


_SIGN = {"f16": 0x8000, "bf16": 0x8000, "f32": 0x80000000}
_EXP = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000}
_OOB = 0x7FF7
WITNESSES = 5


# ---- bits <-> float64 ------------------------------------------------------------------------

def is_nan(bits, fmt: str) -> np.ndarray:
    bits = np.asarray(bits).astype(np.uint32)
    mag = bits & np.uint32(~_SIGN[fmt] & 0xFFFFFFFF)
    return mag > _EXP[fmt]


def _frac_mask(fmt):
    return {"f16": 0x3FF, "bf16": 0x7F, "f32": 0x7FFFFF}[fmt]


def _subnormal(bits, fmt):
    bits = np.asarray(bits).astype(np.uint32)
    return ((bits & np.uint32(_EXP[fmt])) == 0) & ((bits & np.uint32(_frac_mask(fmt))) != 0)


def _flush(bits, fmt):
    """Subnormal operands to a zero of their sign."""
    bits = np.asarray(bits)
    return np.where(_subnormal(bits, fmt), bits & bits.dtype.type(_SIGN[fmt]), bits) \
        .astype(bits.dtype)


# ---- emulations of the usual wrong implementations --------------------------------------------

def _nvidia(bits, fmt, ins, pol):
    """NVIDIA's layer on an emulated result: canonical NaN, .ftz results, .sat, .relu."""
    bits = np.asarray(bits).astype(np.uint32)
    nan = is_nan(bits, fmt)
    sign = np.uint32(_SIGN[fmt])
    if getattr(ins, "ftz", False):
        bits = np.where(_subnormal(bits, fmt), bits & sign, bits)
    if getattr(ins, "sat", False):
        one = np.uint32({"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000}[fmt])
        mz = np.uint32(0 if pol.sat_minus_zero_to_plus else _SIGN[fmt])
        bits = np.where(bits == sign, mz, np.where((bits & sign) != 0, 0,
                                                   np.where(bits > one, one, bits)))
        return np.where(nan, 0, bits).astype(np.uint32)
    if getattr(ins, "relu", False):
        mz = np.uint32(0 if pol.relu_minus_zero_to_plus else _SIGN[fmt])
        bits = np.where(bits == sign, mz, np.where((bits & sign) != 0, 0, bits))
    if getattr(ins, "satfinite", False):
        inf = np.uint32(_EXP[fmt])
        mx = inf - np.uint32({"f16": 1 << 10, "bf16": 1 << 7, "f32": 1 << 23}[fmt])
        bits = np.where((bits & ~sign) == inf, (bits & sign) | mx, bits)
    return np.where(nan, np.uint32(pol.canonical_nan(fmt)), bits).astype(np.uint32)


def emulations(form: Form, lane_ops: tuple, pol=None) -> dict:
    """The emulated wrong results for one lane: {class: bits (int64; -1 where the emulation
    does not apply)}; empty where a form has no such way of going wrong (mul in binary32 is
    exact, so it cannot round twice)."""
    pol = pol or _policy.current()
    ins = form.ins
    if ins.family == "minmax":       # min/max/neg/abs select bits: nothing rounds twice
        return {}
    out_fmt = form.result_lane
    fmts = form.lane_formats()
    # .f32/.f32x2 (not mixed): binary32 is the result format, so rounding twice does not apply;
    # an unfused fma (product rounded to f32 first) does
    plain_f32 = not form.cvt and out_fmt == "f32" and not getattr(ins, "mixed", False)
    mode = ins.rounding or "rn"
    ops = list(lane_ops)
    if getattr(ins, "ftz", False):
        ops = [_flush(x, f) for x, f in zip(ops, fmts)]
    xs = [to_float(x, f) for x, f in zip(ops, fmts)]
    res, spill = {}, {}
    with np.errstate(all="ignore"):
        if form.cvt:
            if ins.atype == "f32":    # precision first (unbounded), then the subnormal grid
                mid = round_float(xs[0], out_fmt, mode, unbounded=True)
                res["result double-rounded"] = round_float(mid, out_fmt, mode)
        elif ins.opcode != "mul" and not plain_f32:
            if form.operand_formats[-1] == "f32" and out_fmt == "f32":      # mixed: binary64
                if ins.opcode in ("fma", "mad"):
                    y = xs[0] * xs[1] + xs[2]
                else:
                    y = xs[0] + xs[1] if ins.opcode == "add" else xs[0] - xs[1]
            else:                                                           # binary32
                f = [x.astype(np.float32) for x in xs]
                if ins.opcode in ("fma", "mad"):
                    y = (f[0] * f[1] + f[2]).astype(np.float64)
                else:
                    y = (f[0] + f[1] if ins.opcode == "add" else f[0] - f[1]).astype(np.float64)
            res["result double-rounded"] = round_float(y, out_fmt, mode)
            finite_in = np.logical_and.reduce([np.isfinite(x) for x in xs])
            spill["result double-rounded"] = finite_in & ~np.isfinite(y)
            if ins.opcode in ("fma", "mad"):
                prod = to_float(round_float(xs[0] * xs[1], out_fmt, mode), out_fmt)
                res["fma not fused"] = round_float(prod + xs[2], out_fmt, mode)
                spill["fma not fused"] = finite_in & ~np.isfinite(prod)
        elif plain_f32 and ins.opcode in ("fma", "mad"):
            finite_in = np.logical_and.reduce([np.isfinite(x) for x in xs])
            prod = to_float(round_float(xs[0] * xs[1], out_fmt, mode), out_fmt)
            res["fma not fused"] = round_float(prod + xs[2], out_fmt, mode)
            spill["fma not fused"] = finite_in & ~np.isfinite(prod)
        oob = None
        if getattr(ins, "oob", False):
            tested = ops[:3] if pol.oob_tests_c else ops[:2]
            oob = np.zeros(np.shape(ops[0]), bool)
            for x in tested:
                x = np.asarray(x).astype(np.uint32)
                oob |= (x & np.uint32(0x7FFF if pol.oob_ignores_sign else 0xFFFF)) == _OOB
    for k, v in res.items():
        v = _nvidia(v, out_fmt, ins, pol)
        v = (v if oob is None else np.where(oob, 0, v)).astype(np.int64)
        if k in spill:                  # the binary32/binary64 intermediate overflowed: that
            v[spill[k]] = -1            # is overflow handling, not rounding twice
        res[k] = v
    return res


def _flushed_inputs(form: Form, operands) -> np.ndarray | None:
    """ptxfp's result on the operands with every subnormal input lane flushed to zero."""
    fmts = form.operand_formats
    flushed, any_sub = [], None
    for x, f in zip(operands, fmts):
        x = np.asarray(x)
        if f in ("f16x2", "bf16x2"):
            lf = f[:-2]
            lo = (x & np.uint32(0xFFFF)).astype(np.uint16)
            hi = (x >> np.uint32(16)).astype(np.uint16)
            s = _subnormal(lo, lf) | _subnormal(hi, lf)
            y = (_flush(lo, lf).astype(np.uint32) | (_flush(hi, lf).astype(np.uint32) << 16))
        else:
            s = _subnormal(x, f)
            y = _flush(x, f)
        any_sub = s if any_sub is None else (any_sub | s)
        flushed.append(y.astype(x.dtype))
    if any_sub is None or not any_sub.any():
        return None
    return form.model(*flushed)


# ---- classification ---------------------------------------------------------------------------

def classify(form: Form, operands, expected, got, pol=None) -> np.ndarray:
    """The class index (into CLASSES) of every vector; -1 where got equals expected."""
    if form.small:
        from .small import classify as small_classify
        return small_classify(form, operands, expected, got, pol)
    pol = pol or _policy.current()
    expected = np.asarray(expected)
    got = np.asarray(got)
    n = expected.shape[0]
    out = np.full(n, -1, np.int8)
    bad = np.nonzero(expected != got)[0]
    if not bad.size:
        return out
    ops = tuple(np.asarray(x)[bad] for x in operands)
    e_all, g_all = expected[bad], got[bad]
    fl = _flushed_inputs(form, ops)
    fl_lanes = form.split_result(fl) if fl is not None else None
    fmt = form.result_lane
    sign = _SIGN[fmt]
    maxmag = _EXP[fmt] - 1
    lane_cls = []
    for k, (lops, e, g) in enumerate(zip(form.split_lanes(ops), form.split_result(e_all),
                                         form.split_result(g_all))):
        e = e.astype(np.int64)
        g = g.astype(np.int64)
        cls = np.full(e.shape, CLASSES.index("other"), np.int8)
        en, gn = is_nan(e, fmt), is_nan(g, fmt)
        num = ~en & ~gn
        em, gm = e & ~sign, g & ~sign
        emu = emulations(form, lops, pol)

        def put(mask, name):
            cls[mask] = CLASSES.index(name)

        # lowest priority first: later assignments win
        put(num & ((e & sign) == (g & sign)) & (np.abs(em - gm) == 1), "off by one ulp")
        put(num & ((em >= maxmag) | (gm >= maxmag)), "overflow handling")
        flushed = num & _subnormal(e, fmt) & (gm == 0)
        if fl_lanes is not None:
            flushed |= (g == fl_lanes[k].astype(np.int64)) & (fl_lanes[k] != e)
        put(flushed, "subnormal flushed")
        for name in ("fma not fused", "result double-rounded"):
            if name in emu:
                v = emu[name].astype(np.int64)
                put((g == v) & (v != e), name)
        put((e == 0) & (g == sign), "-0 where +0")
        put((e == sign) & (g == 0), "+0 where -0")
        put(~en & gn, "NaN where a number")
        put(en & ~gn, "number where NaN")
        put(en & gn & (e != g), "NaN not canonical")
        cls[e == g] = -1
        lane_cls.append(cls)
    c = lane_cls[0]
    if len(lane_cls) == 2:
        c = np.where(c >= 0, c, lane_cls[1])
    out[bad] = c
    return out


# ---- the report -------------------------------------------------------------------------------

@dataclass
class Report:
    """What ``ver`` and ``sweep`` found: counts per mismatch class and the first witnesses
    (by vector index) of each."""
    spelling: str
    total: int = 0
    mismatches: int = 0
    counts: dict = field(default_factory=dict)
    #: class -> [(index, (operand bits...), expected, got), ...], the lowest indices
    witnesses: dict = field(default_factory=dict)
    #: the fewest vectors that make a verdict (ver: 1, or the count a gen header in the file
    #: names); fewer judged is a failure however many agree
    expected_total: int = 0
    #: the gen header that named expected_total (None: no header)
    claim: str | None = None

    @property
    def missing(self) -> int:
        """Vectors the results leave unanswered (0 when there are enough)."""
        return max(0, self.expected_total - self.total)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.missing

    def add(self, form: Form, operands, expected, got, base: int = 0, pol=None,
            indices=None) -> "Report":
        """Judge one chunk of vectors (``base``: the index of its first vector, or ``indices``
        for each vector) and fold it in."""
        expected = np.asarray(expected)
        self.total += int(expected.shape[0])
        cls = classify(form, operands, expected, got, pol)
        bad = np.nonzero(cls >= 0)[0]
        self.mismatches += int(bad.size)
        if not bad.size:
            return self
        got = np.asarray(got)
        counts = np.bincount(cls[bad], minlength=len(CLASSES))
        for i, name in enumerate(CLASSES):
            if counts[i]:
                self.counts[name] = self.counts.get(name, 0) + int(counts[i])
                rows = bad[cls[bad] == i][:WITNESSES]
                wl = self.witnesses.setdefault(name, [])
                for r in rows:
                    idx = int(indices[r]) if indices is not None else base + int(r)
                    wl.append((idx, tuple(int(np.asarray(x)[r]) for x in operands),
                               int(expected[r]), int(got[r])))
                wl.sort()
                del wl[WITNESSES:]
        return self

    def merge(self, other: "Report") -> "Report":
        self.total += other.total
        self.mismatches += other.mismatches
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        for k, v in other.witnesses.items():
            wl = sorted(self.witnesses.get(k, []) + [tuple(w) for w in v])
            self.witnesses[k] = wl[:WITNESSES]
        return self

    def to_json(self) -> dict:
        return {"spelling": self.spelling, "total": self.total, "mismatches": self.mismatches,
                "counts": self.counts,
                "witnesses": {k: [[i, list(o), e, g] for i, o, e, g in v]
                              for k, v in self.witnesses.items()}}

    @classmethod
    def from_json(cls, doc: dict) -> "Report":
        return cls(doc["spelling"], doc["total"], doc["mismatches"], dict(doc["counts"]),
                   {k: [(i, tuple(o), e, g) for i, o, e, g in v]
                    for k, v in doc["witnesses"].items()})

    def format(self, what: str = "vector", limit: int = 3) -> str:
        """The text ``ptxfp ver``/``sweep`` print."""
        from .forms import form as _form
        f = _form(self.spelling)
        lines = []
        for name in CLASSES:
            n = self.counts.get(name, 0)
            if not n:
                continue
            lines.append(f"{name}: {n} {what}{'s' if n != 1 else ''}")
            for idx, ops, e, g in self.witnesses.get(name, [])[:limit]:
                where = f"line {idx}" if what == "line" else f"#{idx}"
                lines.append(f"  {where}:")
                for nm, fm, x in zip(f.operand_names, f.operand_formats, ops):
                    lines.append(f"    {nm:<8} {_hexw(x, fm)}  {describe(x, fm)}")
                lines.append(f"    expected {_hexw(e, f.result_type)}  "
                             f"{describe(e, f.result_type)}")
                lines.append(f"    got      {_hexw(g, f.result_type)}  "
                             f"{describe(g, f.result_type)}")
        agree = self.total - self.mismatches
        verdict = " (pass)" if self.ok else (" (fail)" if self.missing else "")
        if self.total == 0 and self.missing:
            lines.append(f"no results: not one {what} was judged (a testbench that wrote "
                         "nothing?)")
        elif self.missing:
            lines.append(f"missing results: the file answers {self.total} of the "
                         f"{self.expected_total} vectors its header names ({self.claim}); "
                         f"{self.missing} have no result")
        lines.append(f"{self.spelling}: {self.total} {what}s, {agree} agree with ptxfp, "
                     f"{self.mismatches} differ" + verdict)
        return "\n".join(lines) + "\n"

    def dumps(self) -> str:
        return json.dumps(self.to_json())


def _hexw(bits, fmt):
    from ..core import types
    return f"{int(bits):0{max(1, types.width(fmt) // 4)}X}"


def _val(bits, fmt):
    x = float(to_float(np.array([bits]), fmt)[0])
    if x != x:
        return "nan"
    return repr(x)


def describe(bits: int, fmt: str) -> str:
    """A value reading of bits: '1.5', '-0.0', 'nan', a lane pair '[15:0] 1.0 [31:16] 2.0'."""
    bits = int(bits)
    if fmt not in ("f16", "bf16", "f32", "f16x2", "bf16x2", "b32"):
        from .small import describe as small_describe
        return small_describe(bits, fmt)
    if fmt == "b32":
        return "random bits"
    if fmt in ("f16x2", "bf16x2"):
        lf = fmt[:-2]
        return f"[15:0] {_val(bits & 0xFFFF, lf)}  [31:16] {_val(bits >> 16, lf)}"
    return _val(bits, fmt)
