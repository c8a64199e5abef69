"""Probes: small sets of vectors that settle the open policies of ptxfp (policy.py) on a GPU.

Each probe runs one form on a handful of inputs chosen so that the settings of one policy field
(or a grid of two) predict different bits.  The predictions are ptxfp's own, computed under
``ptxfp.policy.using(...)`` for each setting; the GPU's bits then pick the setting that holds.
A probe whose settings all predict the same bits decides nothing and is not built.

Families (``probes()`` builds them all from the instruction table):

- ``nan/<form>``: NaN inputs with payloads, negative and signalling NaNs, and NaNs made from
  non-NaN inputs (inf - inf, 0 * inf) -> the canonical NaN field of the form's result format:
  ``canonical_nan_f16`` (f16 forms, cvt to f16), ``canonical_nan_bf16`` (bf16 forms, cvt to
  bf16), ``canonical_nan_f32`` (mixed forms).
- ``ftz-tininess/<form>``: products whose exact value is below the smallest normal but round up
  to it -> ``ftz_tininess``; one input (exactly 2**-14 - 2**-25) also tells "after rounding"
  (the result rounded into the format is compared) from IEEE's "after rounding" (rounding to
  the precision with an unbounded exponent, ``after_rounding_unbounded``).
- ``sat-minus-zero/<form>``, ``relu-minus-zero/<form>``: exact -0.0 results (x + -x under .rm,
  -1 * +0, tiny negative products) -> ``sat_minus_zero_to_plus`` / ``relu_minus_zero_to_plus``.
- ``oob-sign-c/<form>``: 0xFFF7 in a or b, 0x7FF7 and 0xFFF7 in c -> the grid of
  ``oob_ignores_sign`` x ``oob_tests_c``.
- ``oob-other-nans/<form>``: other NaNs in a and b (fixed rule: only the OOB-NaN clamps).
- ``widen-nan/cvt.f32.f16``, ``widen-nan/cvt.f32.bf16``: the f16/bf16 -> f32 widening of the
  mixed forms on NaN payloads (what the decomposed kernels feed their .f32 operation) ->
  ``widen_nan``: canonical NaN, the bits widened exactly, or IEEE's quieted payload (the
  signalling NaNs among the inputs tell the last two apart).
- ``negabs-nan/<neg or abs form>``: NaN inputs of neg/abs (quiet, signalling, negative,
  payloads) -> ``negabs_nan``: the canonical NaN, or the input with only its sign bit changed.
- ``cvt-ftz-input/<cvt.*.ftz.*.f32 form>``: f32 subnormal inputs -> ``cvt_ftz_input``:
  flushed, or .ftz ignored.
- ``bf16-fma-directed/<fma.{rz,rm,rp}...bf16 form>``: the 24 undocumented spellings ->
  ``bf16_fma_directed``: what ptxas 13.0 compiles, or what the spelling says.

The f32 ``ftz-tininess`` probes separate all three readings in every mode where they differ
(``_F32_AFTER``, ``_F32_BEFORE``; tests/test_hw_probes.py checks each vector with MPFR).  A
probe answers for its own form: ``policy_answers`` judges it against ``Policy.value(field,
form)`` and maps answers that differ by form onto ``per_form`` entries (``suggested_policy``).
The probes of a form with a known toolchain defect (``defects.py``) decide no policy but
``bf16_fma_directed``, and say so in their verdict.
"""

from dataclasses import asdict, dataclass, field, fields as dc_fields

import numpy as np

from .. import policy
from ..core import types
from ..ops.arith import execute
from .forms import all_spellings, is_cvt, model as form_model, parse_form as parse, result_width
from ..ops import smallfloat as _smallfloat
from .defects import toolchain_defect
from .kernels import kernel_for
from .runner import KernelError

# ---- the model on a few vectors, whatever the policy (one compiled lane, no per-form build) --


def model(spelling, vectors):
    """ptxfp's results for ``vectors`` (a list of operand tuples) under the policy in force."""
    ins = parse(spelling)
    cols = [np.array([v[k] for v in vectors],
                     dtype=f"uint{types.width(f)}")
            for k, f in enumerate(ins.operand_formats)]
    if is_cvt(ins) or ins.family == "minmax":   # through their own entry points
        return np.asarray(form_model(ins, *cols)).reshape(-1)
    if _fast_path_ok() and not toolchain_defect(str(ins)):
        # (a form with a toolchain defect may run as a composition of other forms: execute())
        try:
            return _lane_model(ins, cols)
        except Exception:
            pass
    return _compiled_model(ins, cols)


def _compiled_model(ins, cols):
    return np.asarray(execute(ins, *cols)).reshape(-1)


def _lane_model(ins, cols):
    """The form's lane function called from Python with the constants ptxfp's kernel for this
    (form, policy) would freeze in: one compilation of ``kernels.lane`` serves every form and
    policy, where execute() compiles a kernel per (form, policy) at seconds each, and a probe
    needs every setting of a policy for a few dozen vectors.  The constants are
    ``kernels.lane_consts``, the ones the reference kernel freezes in; ``_fast_path_ok`` checks
    the result against execute() before it is trusted."""
    import dataclasses
    from ..ops import kernels
    from ..ops.arith import kernel_spec
    spec = kernel_spec(ins, policy.current())
    if any(f.name == "lanes" for f in dataclasses.fields(spec)):
        spec = dataclasses.replace(spec, lanes=1)
    consts = kernels.lane_consts(spec)
    lane = kernels.lane
    a, b, c = (cols[k] for k in ins.row.positions("abc"))
    n = a.size
    out = np.empty(n, np.uint32 if (ins.result_format == "f32" or ins.lanes == 2) else np.uint16)
    for i in range(n):
        x, y, z = int(a[i]), int(b[i]), int(c[i])
        if ins.lanes == 1:
            out[i] = lane(x, y, z, consts)
        else:
            lo = lane(x & 0xFFFF, y & 0xFFFF, z & 0xFFFF, consts)
            hi = lane(x >> 16, y >> 16, z >> 16, consts)
            out[i] = int(lo) | (int(hi) << 16)
    return out


#: the form the fast path is checked on (fma, packed, .ftz, .relu: most of the lane's branches)
CANARY_FORMS = ("fma.rn.ftz.relu.f16x2",)
_fast_ok = None


def _fast_path_ok():
    """Does the fast path give execute()'s bits?  Checked once per process on random vectors of
    CANARY_FORMS under the policy in force; if not, probes use execute() (slower, same bits)."""
    global _fast_ok
    if _fast_ok is None:
        from ..vectors.harness import random_vectors
        try:
            ok = True
            for s in CANARY_FORMS:
                ins = parse(s)
                cols = random_vectors(ins, 512, seed=11)
                ok &= bool(np.array_equal(_lane_model(ins, list(cols)),
                                          _compiled_model(ins, list(cols))))
            _fast_ok = ok
        except Exception:
            _fast_ok = False
    return _fast_ok


# ---- probe definitions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    label: str
    changes: tuple = ()          #: policy changes as ((field, value), ...); () = policy in force
    predictor: object = None     #: optional f(probe) -> bits, for readings the Policy lacks

    @property
    def policy_changes(self):
        return dict(self.changes)


@dataclass(frozen=True)
class Probe:
    name: str
    fields: tuple                #: Policy fields this probe decides (() = a fixed rule's check)
    question: str
    spelling: str                #: the form run (or cvt.f32.{f16,bf16} for widening probes)
    vectors: tuple               #: operand tuples in PTX order
    settings: tuple              #: Setting, ...
    def operands(self):
        ins = parse(self.spelling)
        return {n: np.array([v[k] for v in self.vectors],
                            dtype=f"uint{types.width(f)}")
                for k, (n, f) in enumerate(zip(ins.operand_names, ins.operand_formats))}

    def kernel(self, sm):
        return kernel_for(self.spelling, sm)

    def predict(self, setting):
        if setting.predictor is not None:
            return np.asarray(setting.predictor(self))
        with policy.using(**setting.policy_changes):
            return model(self.spelling, self.vectors)

    def predictions(self):
        return {s.label: self.predict(s) for s in self.settings}

    def current(self):
        """The prediction of the policy in force (what ptxfp says today)."""
        return model(self.spelling, self.vectors)

    def informative(self):
        preds = list(self.predictions().values())
        return any(not np.array_equal(preds[0], p) for p in preds[1:])


def _ins(s):
    return parse(s)


_ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000}
_NEG_ONE = {"f16": 0xBC00, "bf16": 0xBF80, "f32": 0xBF800000}
_INF = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000}
_MZERO = {"f16": 0x8000, "bf16": 0x8000, "f32": 0x80000000}
#: NaN inputs per format: payloads (quiet), negative, signalling, the format's default NaN, and
#: the OOB-NaN 0x7FF7 / 0xFFF7 (left out of the .oob forms' NaN probes: those are OOB there)
_NANS = {
    "f16": (0x7FF6, 0xFFF6, 0x7C01, 0xFC01, 0x7E00, 0x7E55, 0x7FF7, 0xFFF7),
    "bf16": (0x7FF6, 0xFFF6, 0x7F81, 0xFF81, 0x7FC0, 0x7FD5, 0x7FF7, 0xFFF7),
    "f32": (0x7FC00123, 0xFFC00123, 0x7F800001, 0xFF800001, 0x7FC00000, 0x7FFFE000),
}
_OOB = (0x7FF7, 0xFFF7)
_NAN_FMT_VALUES = {"f16": (0x7E00, 0xFFFF), "bf16": (0x7FC0, 0xFFFF),
                   "f32": (0x7FC00000, 0xFFFFFFFF)}


def _fmts(ins):
    """Lane format of each operand in PTX order ('f32' for a mixed form's c)."""
    return tuple("f32" if (ins.mixed and n == "c") else ins.lane_format
                 for n in ins.operand_names)


def _lanes(ins, lane_vectors, filler=None):
    """Lane-level operand tuples -> form operand tuples.  Packed forms put each lane vector in
    lane 0 with ``filler`` (default 1.0 op 1.0 ...) in lane 1, and again the other way round."""
    if ins.lanes == 1:
        return list(lane_vectors)
    fill = filler or tuple(_ONE[f] for f in _fmts(ins))
    k = types.lane_format(ins.atype).width          # 16, or 32 for .f32x2
    out = []
    for v in lane_vectors:
        out.append(tuple(x | (y << k) for x, y in zip(v, fill)))
        out.append(tuple(y | (x << k) for x, y in zip(v, fill)))
    return out


def _nan_probe(s):
    ins = _ins(s)
    fmts = _fmts(ins)
    one = [_ONE[f] for f in fmts]
    vecs = []
    for k, f in enumerate(fmts):
        for nan in _NANS[f]:
            if ins.oob and nan in _OOB:
                continue
            v = list(one)
            v[k] = nan
            vecs.append(tuple(v))
    # two NaNs with different payloads (which one wins, if any)
    if len(fmts) >= 2:
        v = list(one)
        v[0], v[1] = _NANS[fmts[0]][0], _NANS[fmts[1]][2]
        vecs.append(tuple(v))
        v[0], v[1] = _NANS[fmts[0]][2], _NANS[fmts[1]][0]
        vecs.append(tuple(v))
    # NaNs from non-NaN operands
    inf, ninf = _INF[fmts[0]], _INF[fmts[0]] | _MZERO[fmts[0]]
    last = fmts[-1]
    if ins.opcode == "add":
        vecs.append((inf, _INF[last] | _MZERO[last]))
    elif ins.opcode == "sub":
        vecs.append((inf, _INF[last]))
    elif ins.opcode == "mul":
        vecs += [(0, inf), (ninf, 0)]
    else:
        vecs += [(0, inf, _ONE[last]), (inf, _ONE[fmts[1]], _INF[last] | _MZERO[last])]
    vecs = _lanes(ins, vecs)
    fld = policy.NAN_FIELDS[ins.result_format]
    cur = getattr(policy.current(), fld)
    values = [cur] + [v for v in _NAN_FMT_VALUES[ins.result_format] if v != cur]
    width = 8 if ins.result_format == "f32" else 4
    settings = tuple(Setting("0x%0*X" % (width, v), ((fld, v),)) for v in values)
    return Probe(f"nan/{ins}", (fld,),
                 f"Which NaN does {ins} return for NaN inputs (payloads, negative, signalling) "
                 "and for NaNs it makes itself?", str(ins), tuple(vecs), settings)


def _words(vs):
    return tuple(tuple(v) for v in vs)


#: f16 products whose exact value lies in [2**-14 - 2**-26, 2**-14): below the smallest normal,
#: rounding up to it under every reading of "after rounding"
_FTZ_UP = ((0x21A8, 0x1DA8), (0x1DA8, 0x21A8))
#: exactly 2**-14 - 2**-25: rounds (ties-to-even on the subnormal grid) to 2**-14, but is tiny
#: under IEEE's "after rounding" (it fits in 11 bits with an unbounded exponent, so it stays
#: below 2**-14): only TININESS_AFTER keeps it
_FTZ_IEEE = (0x3BFF, 0x0400)

#: f32 products that tell the three readings of .ftz tininess apart, each for the modes that
#: round its sign toward 2**-126 (.rn both signs, .rp positive, .rm negative; under .rz, and
#: .rm with .sat, the three readings agree on every input: nothing tiny rounds up to 2**-126).
#: tests/test_hw_probes.py checks every claim with MPFR (gmpy2).
#: after: (1 - 2**-24) * 2**-126 = 2**-126 - 2**-150 exactly.  Into f32 (subnormal grid 2**-149)
#: it rounds to 2**-126 (.rn: a tie to even; .rp/.rm: away from zero): not tiny "after
#: rounding"; with 24 bits and an unbounded exponent it is exact, below 2**-126: tiny for the
#: other two readings.
_F32_AFTER = ((0x3F7FFFFF, 0x00800000), (0xBF7FFFFF, 0x00800000), (0x00800000, 0x3F7FFFFF))
#: before: (1 + 2**-23) * 2**-63 * (1 - 2**-23) * 2**-63 = 2**-126 * (1 - 2**-46): below
#: 2**-126 exactly (tiny "before rounding"), but within 2**-151 of it, so it rounds to 2**-126
#: under both "after" readings: not tiny for them.
_F32_BEFORE = ((0x20000001, 0x1FFFFFFE), (0xA0000001, 0x1FFFFFFE))
#: the H100's own witness (tests/data/gpu, gpu_addsubmul.npz): mul.rm.ftz.f32 of these is
#: 0x80800000 there; "before rounding" says -0
_F32_H100 = ((0x327BA6D0, 0x8D823636),)


def _ftz_probe(s):
    ins = _ins(s)
    if ins.opcode not in ("mul", "fma", "mad"):
        return None        # sums of normals are exact below the smallest normal: no such input
    lane = ins.lane_format
    if lane == "f32":
        base = list(_F32_AFTER + _F32_BEFORE + _F32_H100)
    else:
        base = list(_FTZ_UP) + [(a | 0x8000, b) for a, b in _FTZ_UP] + [_FTZ_IEEE]
    if ins.opcode in ("fma", "mad"):
        base = [v + (0,) for v in base] + [v + (_MZERO[lane],) for v in base[:2]]
    vecs = _lanes(ins, base)
    settings = tuple(Setting(v, (("ftz_tininess", v),)) for v in policy.TININESS)
    emin = -126 if lane == "f32" else -14
    p = Probe(f"ftz-tininess/{ins}", ("ftz_tininess",),
              f"Does {ins} flush an exact result below 2^{emin} that rounds up to 2^{emin}?",
              str(ins), _words(vecs), settings)
    return p if lane != "f32" or p.informative() else None


def _minus_zero_vectors(ins):
    """Lane vectors with an exact -0.0 result (before .sat/.relu)."""
    f = _fmts(ins)
    one, mone, mz = _ONE[f[0]], _NEG_ONE[f[0]], _MZERO[f[0]]
    lastz = _MZERO[f[-1]]
    tiny = 0x0001
    if ins.opcode == "add":
        v = [(mz, lastz)]
        if ins.rounding == "rm":
            v.append((one, _NEG_ONE[f[-1]]))
    elif ins.opcode == "sub":
        v = [(mz, 0)]
        if ins.rounding == "rm":
            v.append((one, _ONE[f[-1]]))
    elif ins.opcode == "mul":
        v = [(mone, 0), (0, mone)]
        if not ins.ftz:
            v.append((tiny | 0x8000, tiny))      # underflows to -0 under .rn
    else:
        v = [(mone, 0, lastz), (0, mone, lastz)]
        if ins.rounding == "rm":
            v.append((one, one, _NEG_ONE[f[-1]]))
        if not ins.mixed and not ins.ftz and ins.rounding in ("rn", "rz", "rp"):
            v.append((tiny | 0x8000, tiny, mz))  # a tiny negative product rounds to -0
    return v


def _zero_probe(s, mod):
    ins = _ins(s)
    fld = {"sat": "sat_minus_zero_to_plus", "relu": "relu_minus_zero_to_plus"}[mod]
    vecs = _lanes(ins, _minus_zero_vectors(ins))
    settings = (Setting("-0.0 -> +0.0", ((fld, True),)), Setting("-0.0 stays -0.0", ((fld, False),)))
    return Probe(f"{mod}-minus-zero/{ins}", (fld,),
                 f"Does .{mod} turn a -0.0 result of {ins} into +0.0?", str(ins),
                 _words(vecs), settings)


def _oob_probe(s):
    ins = _ins(s)
    f = ins.lane_format
    one = _ONE[f]
    base = [(0x7FF7, one, one), (0xFFF7, one, one), (one, 0xFFF7, one), (one, one, 0x7FF7),
            (one, one, 0xFFF7)]
    vecs = _lanes(ins, base)
    grid = []
    for sign in (True, False):
        for c in (False, True):
            grid.append(Setting(f"ignores_sign={sign}, tests_c={c}",
                                (("oob_ignores_sign", sign), ("oob_tests_c", c))))
    return Probe(f"oob-sign-c/{ins}", ("oob_ignores_sign", "oob_tests_c"),
                 f"Is 0xFFF7 an OOB-NaN for {ins}, and is c tested?", str(ins), _words(vecs),
                 tuple(grid))


_OTHER_NANS = {"f16": (0x7FF6, 0x7FFF, 0x7E00, 0x7C01, 0x7DF7, 0xFE00, 0x7FF5),
               "bf16": (0x7FF6, 0x7FFF, 0x7FC0, 0x7F81, 0x7FB7, 0xFFC0, 0x7FF5)}


def _oob_other_probe(s):
    ins = _ins(s)
    f = ins.lane_format
    one = _ONE[f]
    base = [(n, one, one) for n in _OTHER_NANS[f]] + [(one, n, one) for n in _OTHER_NANS[f][:3]]
    vecs = _lanes(ins, base)

    def every_nan(probe):
        out = probe.predict(probe.settings[0]).copy()
        for i, v in enumerate(probe.vectors):
            for lane in range(ins.lanes):
                sh = 16 * lane
                x, y = (v[0] >> sh) & 0xFFFF, (v[1] >> sh) & 0xFFFF
                if _is_nan16(x, f) or _is_nan16(y, f):
                    out[i] &= ~np.array(0xFFFF << sh, out.dtype)
        return out

    settings = (Setting("only 0x7FF7 (and 0xFFF7 per policy) clamps (model)"),
                Setting("every NaN in a or b clamps to +0", (), every_nan))
    return Probe(f"oob-other-nans/{ins}", (),
                 f"Does {ins} clamp NaNs other than the OOB-NaN?", str(ins), _words(vecs),
                 settings)


def _is_nan16(h, fmt):
    return (h & 0x7FFF) > (0x7C00 if fmt == "f16" else 0x7F80)


def _widen_probe(s):
    ins = parse(s)
    atype = ins.operand_formats[0]
    vals = (_NANS[atype][:6] + (0x7FF7, 0xFFF7, 0x7FFF, 0xFFFF) +
            (0x0001, 0x8001, _ONE[atype], _INF[atype], 0))
    settings = tuple(Setting(v, (("widen_nan", v),)) for v in policy.WIDEN_NAN)
    return Probe(f"widen-nan/{ins}", ("widen_nan",),
                 f"What does the exact widening {ins} (as in the mixed forms' decomposition) "
                 "do to NaN payloads?", str(ins), tuple((v,) for v in vals), settings)


_F32_TINY_NEG = 0xB2800000          #: -2**-26: rounds to -0.0 in f16 and bf16 (.rn, .rz)


def _cvt_nan_probe(s):
    ins = parse(s)
    one = _ONE["f32"]
    vecs = []
    for nan in _NANS["f32"]:
        vecs += [(nan,)] if ins.lanes == 1 else [(nan, one), (one, nan)]
    fld = policy.NAN_FIELDS[ins.result_format]
    cur = getattr(policy.current(), fld)
    values = [cur] + [v for v in _NAN_FMT_VALUES[ins.result_format] if v != cur]
    return Probe(f"nan/{ins}", (fld,),
                 f"Which NaN does {ins} return for NaN inputs (payloads, negative, "
                 "signalling)?", str(ins), tuple(vecs),
                 tuple(Setting("0x%04X" % v, ((fld, v),)) for v in values))


#: the NaN candidates of the small formats: the policy's value first, then the other
#: readings (the sign set, the other quiet pattern, zero, the largest finite)
_SMALL_NAN_VALUES = {"e4m3": (0x7F, 0xFF), "e5m2": (0x7F, 0x7E, 0xFF, 0xFE),
                     "ue8m0": (0xFF, 0xFE, 0x00), "e2m3": (0x1F, 0x3F, 0x00),
                     "e3m2": (0x1F, 0x3F, 0x00), "e2m1": (0x7, 0xF, 0x0)}


def _small_probes(ins):
    """The probes of a small-float cvt form: the NaN it gives for f32 NaNs (the narrowing
    forms from .f32 without .relu), and which rbits each lane adds (cvt.rs into four 8-bit
    lanes)."""
    d = ins.result_format
    if ins.rounding == "rs":
        if ins.dtype in ("e2m1x4", "f16x2", "bf16x2") or ins.relu:
            return []
        # 1 + half a last place: 1.0625 (3 fraction bits), 1.125 (2)
        x = 0x3F880000 if d in ("e4m3", "e2m3") else 0x3F900000
        # a value halfway between two neighbours of the format: a carry iff the lane's random
        # bits reach half their range
        vecs = tuple((x, x, x, x, r) for r in (0x80000000, 0x00800000, 0x00008000, 0x00000080,
                                               0x80808080, 0x7F7F7F7F, 0x80008000))
        settings = tuple(Setting(v, (("rs_x4_bits", v),)) for v in policy.RS_X4_BITS)
        return [Probe(f"rs-x4-bits/{ins}", ("rs_x4_bits",),
                      f"Which bits of rbits does each lane of {ins} add?", str(ins), vecs,
                      settings)]
    if not ins.narrowing or ins.relu or ins.atype != "f32":
        return []
    one = _ONE["f32"]
    vecs = tuple(v for nan in _NANS["f32"] for v in ((nan, one), (one, nan)))
    fld = policy.NAN_FIELDS[d]
    cur = getattr(policy.current(), fld)
    values = [cur] + [v for v in _SMALL_NAN_VALUES[d] if v != cur]
    return [Probe(f"nan/{ins}", (fld,), f"Which bits does {ins} give for NaN inputs?",
                  str(ins), vecs, tuple(Setting("0x%02X" % v, ((fld, v),)) for v in values))]


def _cvt_zero_probe(s, mod):
    ins = parse(s)
    fld = {"sat": "sat_minus_zero_to_plus", "relu": "relu_minus_zero_to_plus"}[mod]
    if ins.narrowing:
        base = [0x80000000, _F32_TINY_NEG, 0x80000001]
        vecs = [(x,) for x in base] if ins.lanes == 1 else \
            [(x, _ONE["f32"]) for x in base] + [(_ONE["f32"], x) for x in base]
    else:
        vecs = [(_MZERO[ins.operand_formats[0]],)]
    settings = (Setting("-0.0 -> +0.0", ((fld, True),)), Setting("-0.0 stays -0.0", ((fld, False),)))
    return Probe(f"{mod}-minus-zero/{ins}", (fld,),
                 f"Does .{mod} turn a -0.0 result of {ins} into +0.0?", str(ins), tuple(vecs),
                 settings)


def _negabs_probe(s):
    """neg/abs of NaNs (quiet, signalling, negative, payloads): canonical or sign-only."""
    ins = parse(s)
    lane = ins.lane_format
    vecs = _lanes(ins, [(v,) for v in _NANS[lane][:6] + (0x7FFF, 0xFFFF)])
    settings = tuple(Setting(v, (("negabs_nan", v),)) for v in policy.NEGABS_NAN)
    return Probe(f"negabs-nan/{ins}", ("negabs_nan",),
                 f"What does {ins} give for a NaN input: the canonical NaN, or the input with "
                 "only its sign bit changed?", str(ins), tuple(vecs), settings)


#: f32 subnormals: the smallest and largest of each sign (their f16/bf16 roundings differ
#: from a zero under .rm/.rp, and the largest is 2**-126 under .rn to bf16)
_F32_SUBNORMALS = (0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80400000)


def _cvt_ftz_probe(s):
    """A narrowing cvt from .f32 with .ftz on subnormal inputs: flushed to a zero of their sign
    (the manual), or computed as without .ftz (what the H100 does on the f16 forms)."""
    ins = parse(s)
    one = _ONE["f32"]
    vecs = [(x,) for x in _F32_SUBNORMALS] if ins.lanes == 1 else \
        [(x, one) for x in _F32_SUBNORMALS] + [(one, x) for x in _F32_SUBNORMALS]
    settings = tuple(Setting(v, (("cvt_ftz_input", v),)) for v in policy.CVT_FTZ)
    return Probe(f"cvt-ftz-input/{ins}", ("cvt_ftz_input",),
                 f"Does {ins} flush a subnormal .f32 input?", str(ins), tuple(vecs), settings)


#: lane vectors where the readings of the undocumented bf16 fma differ: 1.0 read as f16 is
#: 1.875; 1.4140625**2 = 1.99957... rounds to 2.0 (.rn) or 1.9921875 (toward zero) in bf16;
#: 1.0078125**2 = 1.01568... rounds to 1.015625 (.rn) or 1.0234375 (.rp)
_BF16_FMA = ((0x3F80, 0x3F80, 0x3F80), (0x3FB5, 0x3FB5, 0x0000), (0xBFB5, 0x3FB5, 0x8000),
             (0x4000, 0x3FC0, 0xBF80), (0x3F81, 0x3F81, 0x0000))


def _bf16_fma_probe(s):
    """fma.{rz,rm,rp}{.oob}{.relu}.bf16(x2): what ptxas 13.0 compiles, or what the spelling
    says (policy.bf16_fma_directed)?"""
    ins = parse(s)
    vecs = _lanes(ins, _BF16_FMA)
    settings = tuple(Setting(v, (("bf16_fma_directed", v),)) for v in policy.BF16_FMA_DIRECTED)
    return Probe(f"bf16-fma-directed/{ins}", ("bf16_fma_directed",),
                 f"Does {ins} compute what ptxas 13.0 compiles it to, or what its spelling "
                 "says?", str(ins), _words(vecs), settings)


def _cvt_probes(s):
    ins = parse(s)
    if ins.narrowing:
        out = [_cvt_nan_probe(s)]
        if ins.ftz and ins.atype == "f32":
            out.append(_cvt_ftz_probe(s))
    else:
        out = [] if ins.sat else [_widen_probe(s)]     # .sat: every NaN becomes +0.0
    if ins.sat:
        out.append(_cvt_zero_probe(s, "sat"))
    if ins.relu:
        out.append(_cvt_zero_probe(s, "relu"))
    return out


def probes(spellings=None):
    """Every probe for the forms in ``spellings`` (default: both tables), informative or not
    (see ``informative``)."""
    forms = spellings if spellings is not None else all_spellings()
    out = []
    for s in forms:
        ins = _ins(s)
        if is_cvt(ins) and _smallfloat.handles(ins):
            out += _small_probes(ins)
            continue
        if is_cvt(ins):
            out += _cvt_probes(s)
            continue
        if ins.family == "sfu":
            continue        # no policy fields: the model per target is measured by its sweep
        if ins.family == "minmax":
            # min/max return an operand or the canonical NaN (the nan/ probes of the
            # arithmetic measure those fields); neg/abs of a NaN is a policy of its own
            if ins.opcode in ("neg", "abs"):
                out.append(_negabs_probe(s))
            continue
        cands = [_nan_probe(s)]
        if ins.ftz:
            cands.append(_ftz_probe(s))
        if ins.sat:
            cands.append(_zero_probe(s, "sat"))
        if ins.relu:
            cands.append(_zero_probe(s, "relu"))
        if ins.oob:
            cands += [_oob_probe(s), _oob_other_probe(s)]
        if toolchain_defect(s):
            cands.append(_bf16_fma_probe(s))
        out += [p for p in cands if p is not None]
    return out


def informative(probe_list):
    return [p for p in probe_list if p.informative()]


# ---- running and judging ----------------------------------------------------------------------


@dataclass
class ProbeResult:
    name: str
    fields: tuple
    question: str
    spelling: str
    mode: str = ""
    target: str = ""
    vectors: list = field(default_factory=list)      #: [{'a': '0x..', ...}]
    measured: list = field(default_factory=list)     #: hex
    predictions: dict = field(default_factory=dict)  #: label -> hex list
    current: list = None                             #: the policy in force's prediction (hex)
    matches: list = field(default_factory=list)      #: labels matching bit for bit
    nan_matches: list = field(default_factory=list)  #: labels matching up to NaN bits
    verdict: str = ""
    decided: dict = field(default_factory=dict)      #: field -> measured value
    agrees: bool = None                              #: measured == the current prediction
    error: str = None
    #: the label of a known toolchain defect of the form (defects.py): its answers say what
    #: ptxas compiled, so the probe decides no policy
    defect: str = None

    def to_dict(self):
        return asdict(self)


def _hexs(arr, width):
    return ["0x%0*X" % (width // 4, int(x)) for x in np.asarray(arr).reshape(-1)]


def _nan_mask(bits, fmt, lanes):
    from .verify import nan_lanes
    return nan_lanes(bits, fmt, lanes)


def same_up_to_nan(x, y, fmt, lanes):
    """x and y equal, where a NaN lane matches any NaN lane."""
    mx, my = _nan_mask(x, fmt, lanes), _nan_mask(y, fmt, lanes)
    x64, y64 = np.asarray(x).astype(np.uint64), np.asarray(y).astype(np.uint64)
    return bool(np.all((mx == my) & ((x64 & ~mx) == (y64 & ~my))))


def _result_format(probe):
    ins = parse(probe.spelling)
    return ins.result_format, ins.lanes, result_width(ins)


def judge(probe, measured):
    """Compare measured bits with every setting's prediction; a ProbeResult with the verdict."""
    fmt, lanes, width = _result_format(probe)
    measured = np.asarray(measured).reshape(-1)
    preds = probe.predictions()
    settings = list(probe.settings)
    # NaN probes: when every NaN the GPU returned is one pattern, that pattern is a setting too
    if probe.name.startswith("nan/"):
        fld = probe.fields[0]
        seen = set()
        cur = probe.current()
        mask = _nan_mask(cur, fmt, lanes)
        for m, b in zip(mask, measured.astype(np.uint64)):
            for lane in range(lanes if fmt != "f32" else 1):
                lm = (int(m) >> (16 * lane)) & (0xFFFF if fmt != "f32" else 0xFFFFFFFF)
                if lm:
                    seen.add((int(b) >> (16 * lane)) & lm)
        known = {dict(s.changes)[fld] for s in settings}
        if len(seen) == 1 and (v := seen.pop()) not in known \
                and int(_nan_mask(np.array([v]), fmt, 1)[0]):
            s = Setting("0x%0*X" % (8 if fmt == "f32" else 4, v), ((fld, v),))
            settings.append(s)
            preds[s.label] = probe.predict(s)
    r = ProbeResult(probe.name, tuple(probe.fields), probe.question, probe.spelling)
    ops = probe.operands()
    ins_w = {n: (16 if x.dtype == np.uint16 else 32) for n, x in ops.items()}
    r.vectors = [{n: "0x%0*X" % (ins_w[n] // 4, int(ops[n][i])) for n in ops}
                 for i in range(len(probe.vectors))]
    r.measured = _hexs(measured, width)
    r.predictions = {k: _hexs(v, width) for k, v in preds.items()}
    cur = probe.current()
    if cur is not None:
        r.current = _hexs(cur, width)
        r.agrees = bool(np.array_equal(cur, measured))
    r.matches = [s.label for s in settings if np.array_equal(preds[s.label], measured)]
    r.nan_matches = [s.label for s in settings
                     if same_up_to_nan(preds[s.label], measured, fmt, lanes)]
    by_label = {s.label: s for s in settings}
    pick = None
    if len(r.matches) == 1:
        pick = r.matches[0]
        r.verdict = pick
    elif len(r.matches) > 1:
        r.verdict = "undecided: " + " | ".join(r.matches) + " all fit"
    elif len(r.nan_matches) == 1:
        pick = r.nan_matches[0]
        r.verdict = f"{pick} (up to the NaN bits: see the nan/ probes)"
    else:
        r.verdict = "none of the settings: the GPU does something the model cannot express"
    r.defect = toolchain_defect(probe.spelling)
    if r.defect and "bf16_fma_directed" in probe.fields:
        # the one question such a form answers: does ptxfp compute what ptxas compiled?
        r.verdict += f" ({r.defect})"
    elif r.defect:
        # what ptxas compiled answered, not the instruction: said so, whatever matched
        r.verdict = r.defect + (f" (measured: {r.verdict})" if r.matches or r.nan_matches
                                else "")
        return r
    if pick is not None:
        s = by_label[pick]
        if s.changes:
            r.decided = {k: v for k, v in s.changes}
        elif s.predictor is not None and probe.fields:
            r.verdict += " (no Policy value says this)"
    return r


def run_probe(runner, probe):
    """Run one probe on the GPU and judge it.  Never raises for a failure of the GPU or its
    backend: the result's ``error`` says the probe could not run."""
    kernel = None
    try:
        kernel = probe.kernel(runner.sm)
        measured = runner.run(kernel, probe.operands())
        r = judge(probe, measured)
    except Exception as exc:
        from .verify import could_not_run
        r = ProbeResult(probe.name, tuple(probe.fields), probe.question, probe.spelling,
                        error=str(exc) if isinstance(exc, (KernelError, ValueError))
                        else could_not_run(exc))
        r.verdict = "not run"
    if kernel is not None:
        r.mode, r.target = kernel.mode, kernel.target
    return r


def not_run(probe, why):
    """The result of a probe that did not run (the budget was spent first)."""
    r = ProbeResult(probe.name, tuple(probe.fields), probe.question, probe.spelling, error=why)
    r.verdict = "not run"
    return r


def _fmt_value(fld, v):
    if fld in (policy.NAN_FIELDS["f16"], policy.NAN_FIELDS["bf16"]):
        return "0x%04X" % v
    if fld == policy.NAN_FIELDS["f32"]:
        return "0x%08X" % v
    return repr(v)


POLICY_FIELDS = tuple(f.name for f in dc_fields(policy.Policy) if f.name != "per_form")


def _in_force(cur, fld, spelling):
    """The value of ``fld`` the policy in force gives the form (its per-form table first)."""
    value = getattr(cur, "value", None)
    return value(fld, spelling) if value is not None else getattr(cur, fld)


def _current_text(cur, fld):
    """The field's value in force, with its per-form entries (``per_form``) when it has any."""
    text = _fmt_value(fld, getattr(cur, fld))
    entries = [(g, v) for g, f, v in getattr(cur, "per_form", ()) if f == fld]
    if entries:
        text += "; per form: " + ", ".join(f"{g} {_fmt_value(fld, v)}" for g, v in entries)
    return text


def policy_answers(results):
    """One answer per Policy field from the probe results:
    ``[{field, current, measured, status, probes, by_value, undecided, by_form, per_form}]``.

    A probe is judged against the value in force for its own form (``Policy.value``: the
    per-form table first).  *confirmed*: every probe measured that value; *contradicted*: one
    value measured on every form, not the one in force; *differs by form*: the forms measured
    different values and ptxfp does not say so; *confirmed per form*: they did, and ptxfp's
    per-form table says so.  ``per_form`` is what the measurement asks for where it differs by
    form: the value most probes measured as the field's, and ``(spelling, field, value)``
    entries for the forms that measured another (``suggested_policy`` writes the call).

    Only probes that ran the instruction itself (mode 'native') decide a policy: a decomposed
    probe measures the GPU's .f32 unit and cvt, not the mixed instruction (sm_100) whose
    behaviour the field describes.  Those are reported apart (``decomposed_probes``), and so are
    the probes of forms with a known toolchain defect (``defects.py``)."""
    cur = policy.current()
    out = []
    for fld in POLICY_FIELDS:
        rs = [r for r in results if fld in r.fields and r.error is None and r.mode == "native"
              and (not r.defect or fld == "bf16_fma_directed")]
        values, by_form, undecided, wrong = {}, {}, [], []
        for r in rs:
            if fld in r.decided:
                v = r.decided[fld]
                values.setdefault(v, []).append(r.name)
                by_form[r.spelling] = v
                if v != _in_force(cur, fld, r.spelling):
                    wrong.append(r.name)
            else:
                undecided.append(r.name)
        measured, per_form = None, []
        if not rs:
            status = "not probed"
        elif not values:
            status = "undecided"
        elif len(values) == 1:
            (measured, _), = values.items()
            status = "contradicted" if wrong else "confirmed"
        else:
            status = "differs by form" if wrong else "confirmed per form"
        if values:
            main = max(values, key=lambda v: len(values[v]))
            per_form = [(s, fld, v) for s, v in by_form.items() if v != main]
        if undecided and status != "undecided":
            status += f" ({len(undecided)} probe(s) undecided)"
        out.append({
            "field": fld, "current": _current_text(cur, fld),
            "measured": None if measured is None else _fmt_value(fld, measured),
            "status": status, "probes": len(rs),
            "by_value": {_fmt_value(fld, v): names for v, names in values.items()},
            "undecided": undecided, "contradicting": wrong,
            "by_form": {s: _fmt_value(fld, v) for s, v in by_form.items()},
            "global": None if not values else max(values, key=lambda v: len(values[v])),
            "per_form": per_form,
        })
    return out


def suggested_policy(answers):
    """The ``ptxfp.policy.using(...)`` call that gives what the probes measured, where it is not
    what ptxfp does now (None when nothing needs to change): each contradicted field's measured
    value, and for a field that differs by form the most measured value plus a ``per_form``
    entry per form that measured another (the table in force kept for the other fields)."""
    cur = policy.current()
    changes, entries, fields_changed = {}, [], set()
    for a in answers:
        if not a["contradicting"]:
            continue
        fld = a["field"]
        fields_changed.add(fld)
        if a["global"] != getattr(cur, fld):
            changes[fld] = a["global"]
        entries += [(s, f, v) for s, f, v in a["per_form"]]
    if not fields_changed:
        return None
    kept = [e for e in getattr(cur, "per_form", ()) if e[1] not in fields_changed]
    args = [f"{k}={v!r}" for k, v in changes.items()]
    table = tuple(kept) + tuple(entries)
    if table != tuple(getattr(cur, "per_form", ())):
        args.append("per_form=(" + "".join(f"{e!r}, " for e in table).rstrip(", ")
                    + ("," if len(table) == 1 else "") + ")")
    return "ptxfp.policy.using(" + ", ".join(args) + ")"
