"""Independent reference for the PTX half and mixed precision arithmetic ptxfp models.

Written from the PTX ISA manual (9.7.4, 9.7.5) and docs/semantics.md, sharing no code with
ptxfp: operands are decoded from their bit fields into exact MPFR values, the exact result
(a+b, a-b, a*b, a*b+c) is rounded once by MPFR into the result format, and the bits are encoded
here again. The IEEE special cases (NaN, infinities, signs of exact zeros, overflow per rounding
mode) and NVIDIA's layer (canonical NaN, .ftz, .sat, .relu, .oob, lanes) are written out below
rather than left to MPFR.

Entry points
------------
``compute(ins, *operands, policy=None) -> int``
    One instruction on Python ints. ``operands`` are in PTX source order, destination excluded,
    exactly as ``ptxfp.execute`` takes them: ``add/sub/mul (a, b)``, ``fma (a, b, c)``, mixed
    ``add/sub (a, c)``, mixed ``fma (a, b, c)``. Packed (``lanes == 2``) operands are 32-bit:
    lane 0 = bits [15:0], lane 1 = bits [31:16]; each lane is computed on its own.
``compute_array(ins, *operands, policy=None) -> numpy array``
    The same, element-wise over broadcast integer arrays (uint16 or uint32 result).

``ins`` is anything with the attributes of ``ptxfp.Instruction`` (opcode, mixed, lanes,
lane_format, result_format, rounding, ftz, sat, relu, oob) or a spelling, which ``parse_form``
reads on its own. ``policy`` defaults to ``ptxfp.POLICY``, read at each call, so that one flip
of a policy moves the model and this oracle together.
"""

from __future__ import annotations

from dataclasses import dataclass

import gmpy2
import numpy as np

# --------------------------------------------------------------------------------------------
# Formats


@dataclass(frozen=True)
class Format:
    name: str
    width: int      # storage bits
    ebits: int      # exponent field bits
    fbits: int      # stored fraction bits

    @property
    def precision(self) -> int:
        return self.fbits + 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin_normal(self) -> int:        # exponent of the smallest normal, 2**emin_normal
        return 1 - self.bias

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def exp_mask(self) -> int:
        return ((1 << self.ebits) - 1) << self.fbits

    @property
    def frac_mask(self) -> int:
        return (1 << self.fbits) - 1

    @property
    def inf_bits(self) -> int:
        return self.exp_mask

    @property
    def max_bits(self) -> int:
        return self.exp_mask - 1

    @property
    def one_bits(self) -> int:
        return self.bias << self.fbits

    # MPFR writes a value as m * 2**E with m in [0.5, 1): its emin is one above the exponent of
    # the least significant bit of the smallest subnormal, its emax one above the largest
    # binade's exponent.
    @property
    def mpfr_emin(self) -> int:
        return self.emin_normal - self.fbits + 1

    @property
    def mpfr_emax(self) -> int:
        return self.bias + 1


F16 = Format("f16", 16, 5, 10)
BF16 = Format("bf16", 16, 8, 7)
F32 = Format("f32", 32, 8, 23)
FORMATS = {f.name: f for f in (F16, BF16, F32)}

OOB_NAN = 0x7FF7

# --------------------------------------------------------------------------------------------
# Decoding: bits -> (kind, value)

ZERO, FINITE, INF, NAN = 0, 1, 2, 3
# Exact arithmetic on decoded values (any value or product of two fits), independent of
# whatever gmpy2's global context is.
_EXACT = gmpy2.context(precision=256)


def decode(bits: int, fmt: Format):
    """Return (kind, sign, value): value is an exact mpfr for FINITE, else None."""
    sign = (bits >> (fmt.width - 1)) & 1
    e = (bits & fmt.exp_mask) >> fmt.fbits
    f = bits & fmt.frac_mask
    if e == (1 << fmt.ebits) - 1:
        return (NAN, sign, None) if f else (INF, sign, None)
    if e == 0:
        if f == 0:
            return (ZERO, sign, None)
        m, x = f, fmt.emin_normal - fmt.fbits                   # subnormal: 0.f * 2**emin
    else:
        m, x = f | (1 << fmt.fbits), e - fmt.bias - fmt.fbits   # normal: 1.f * 2**(e-bias)
    v = _EXACT.mul_2exp(-m if sign else m, x)
    return (FINITE, sign, v)


_DECODED = {}


def _decoded(fmt: Format, bits: int):
    key = (fmt.name, bits)
    d = _DECODED.get(key)
    if d is None:
        d = _DECODED[key] = decode(bits, fmt)
    return d


def is_subnormal(bits: int, fmt: Format) -> bool:
    return (bits & fmt.exp_mask) == 0 and (bits & fmt.frac_mask) != 0


# --------------------------------------------------------------------------------------------
# Encoding: an already rounded, in-range finite mpfr -> bits


def _scale(m: int, shift: int) -> int:
    """m * 2**shift, which must be an integer (the value lies on the format's grid)."""
    if shift >= 0:
        return m << shift
    assert m & ((1 << -shift) - 1) == 0, "value is not on the format's grid"
    return m >> -shift


def encode(v, fmt: Format) -> int:
    if v == 0:
        return fmt.sign_bit if gmpy2.is_signed(v) else 0
    m, x = v.as_mantissa_exp()
    m, x = int(m), int(x)
    sign = fmt.sign_bit if m < 0 else 0
    m = abs(m)
    top = x + m.bit_length() - 1                 # v in [2**top, 2**(top+1))
    if top >= fmt.emin_normal:
        sig = _scale(m, x - (top - fmt.fbits))  # leading bit at bit fbits
        e = top + fmt.bias
        assert 1 <= e < (1 << fmt.ebits) - 1, "value out of range"
        return sign | (e << fmt.fbits) | (sig & fmt.frac_mask)
    sig = _scale(m, x - (fmt.emin_normal - fmt.fbits))  # subnormal: units of the least one
    assert sig < (1 << fmt.fbits)
    return sign | sig


# --------------------------------------------------------------------------------------------
# One rounding with MPFR

_MODES = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero,
          "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}

# Format precision, the format's emin with subnormals, but an exponent range unbounded above:
# overflow is then decided here, per IEEE 754 ("the result rounded as if the exponent range
# were unbounded exceeds the largest finite number"), and its result chosen per mode below.
_ROUND_CTX = {(f.name, r): gmpy2.context(precision=f.precision, emin=f.mpfr_emin,
                                         emax=1 << 20, subnormalize=True, round=m)
              for f in FORMATS.values() for r, m in _MODES.items()}
# Same precision, no subnormals, round toward zero: |RZ(x)| < 2**emin_normal iff |x| is.
_TINY_CTX = {f.name: gmpy2.context(precision=f.precision, round=gmpy2.RoundToZero)
             for f in FORMATS.values()}
# Same precision and mode, no subnormals and MPFR's (practically unbounded) exponent range:
# IEEE 754's tininess "after rounding" is |this rounding| < 2**emin_normal (IEEE 754-2019 §7.5).
_UNBOUNDED_CTX = {(f.name, r): gmpy2.context(precision=f.precision, round=m)
                  for f in FORMATS.values() for r, m in _MODES.items()}
_MAXF = {f.name: decode(f.max_bits, f)[2] for f in FORMATS.values()}
_MINN = {f.name: _EXACT.mul_2exp(1, f.emin_normal) for f in FORMATS.values()}


def _overflow(negative: bool, fmt: Format, rounding: str) -> int:
    s = fmt.sign_bit if negative else 0
    to_inf = {"rn": True, "rz": False, "rm": negative, "rp": not negative}[rounding]
    return s | (fmt.inf_bits if to_inf else fmt.max_bits)


def _round(op: str, x, y, fmt: Format, rounding: str):
    """Round x+y or x*y (exact finite mpfr values, nonzero exact result) once into fmt:
    (bits, tiny_before_rounding, tiny_after_rounding_unbounded)."""
    ctx = _ROUND_CTX[fmt.name, rounding]
    r = ctx.add(x, y) if op == "add" else ctx.mul(x, y)
    a = _EXACT.abs(r)
    if a > _MAXF[fmt.name]:
        return _overflow(r < 0, fmt, rounding), False, False
    minn = _MINN[fmt.name]
    if a < minn:
        tiny = True                  # rounding is monotonic and 2**emin_normal representable
    elif a > minn:
        tiny = False
    else:                            # rounded to the smallest normal: was the exact value below?
        t = _TINY_CTX[fmt.name]
        e = t.add(x, y) if op == "add" else t.mul(x, y)
        tiny = _EXACT.abs(e) < minn
    u = _UNBOUNDED_CTX[fmt.name, rounding]
    unbounded = _EXACT.abs(u.add(x, y) if op == "add" else u.mul(x, y)) < minn
    return encode(r, fmt), tiny, unbounded


# --------------------------------------------------------------------------------------------
# IEEE arithmetic on decoded operands (NaN results come back as None)

_CORE = {}
_ZERO = _EXACT.plus(0)


def _zero(sign) -> tuple:
    return (ZERO, sign, None)


def _sum_zero_sign(sx: int, sy: int, rounding: str) -> int:
    # x + y == 0 exactly: equal signed zeros keep their sign, otherwise +0 (-0 rounding down).
    if sx == sy:
        return sx
    return 1 if rounding == "rm" else 0


def _product(a, b):
    """Exact product of two decoded values as a decoded value; None for NaN (0 * inf)."""
    ka, sa, va = a
    kb, sb, vb = b
    s = sa ^ sb
    if ka == INF or kb == INF:
        if ka == ZERO or kb == ZERO:
            return None
        return (INF, s, None)
    if ka == ZERO or kb == ZERO:
        return _zero(s)
    return (FINITE, s, _EXACT.mul(va, vb))


def _sum(x, y, out: Format, rounding: str):
    """x + y of decoded values (the fma's x an exact product) rounded once into out:
    (bits, or None for NaN; tiny_before_rounding; tiny_after_rounding_unbounded)."""
    kx, sx, vx = x
    ky, sy, vy = y
    if kx == INF or ky == INF:
        if kx == INF and ky == INF and sx != sy:
            return None, False, False
        s = sx if kx == INF else sy
        return (out.sign_bit if s else 0) | out.inf_bits, False, False
    if kx == ZERO and ky == ZERO:
        return (out.sign_bit if _sum_zero_sign(sx, sy, rounding) else 0), False, False
    if kx == ZERO:
        return _round("add", vy, _ZERO, out, rounding)
    if ky == ZERO:
        return _round("add", vx, _ZERO, out, rounding)
    if vx == _EXACT.minus(vy):
        return (out.sign_bit if _sum_zero_sign(sx, sy, rounding) else 0), False, False
    return _round("add", vx, vy, out, rounding)


def ieee(op: str, in_fmt: Format, c_fmt: Format, out: Format, rounding: str, operands):
    """IEEE result of op on operand bits (after any .ftz input flush): (bits|None, tiny before
    rounding, tiny after rounding to the precision with an unbounded exponent).

    op is 'add', 'sub', 'mul' (operands x, y) or 'fma' (a, b, c). For add/sub the first
    operand is in in_fmt and the second in c_fmt (the mixed forms' c is f32). Results are
    memoized per (op, formats, rounding), keyed by the operand tuple."""
    memo = _memo(op, in_fmt, c_fmt, out, rounding)
    hit = memo.get(operands)
    if hit is None:
        hit = memo[operands] = _ieee(op, in_fmt, c_fmt, out, rounding, operands)
    return hit


def _memo(op, in_fmt, c_fmt, out, rounding) -> dict:
    return _CORE.setdefault((op, in_fmt.name, c_fmt.name, out.name, rounding), {})


def _ieee(op, in_fmt, c_fmt, out, rounding, operands):
    if op == "fma":
        a, b, c = (_decoded(in_fmt, operands[0]), _decoded(in_fmt, operands[1]),
                   _decoded(c_fmt, operands[2]))
        if a[0] == NAN or b[0] == NAN or c[0] == NAN:
            return None, False, False
        p = _product(a, b)
        if p is None:
            return None, False, False
        return _sum(p, c, out, rounding)
    x, y = _decoded(in_fmt, operands[0]), _decoded(c_fmt, operands[1])
    if x[0] == NAN or y[0] == NAN:
        return None, False, False
    if op == "mul":
        p = _product(x, y)
        if p is None:
            return None, False, False
        if p[0] == FINITE:
            return _round("mul", x[2], y[2], out, rounding)
        return ((out.sign_bit if p[1] else 0) | (out.inf_bits if p[0] == INF else 0),
                False, False)
    if op == "sub":
        k, s, v = y
        y = (k, s ^ 1, None if v is None else _EXACT.minus(v))
    return _sum(x, y, out, rounding)


# --------------------------------------------------------------------------------------------
# NVIDIA's layer


def _policy(policy):
    if policy is not None:
        return policy
    import ptxfp
    return ptxfp.POLICY


def spelling_of(ins) -> str:
    """The canonical spelling of ``ins`` (the policy's per-form entries match it): written
    here again from the manual's order (rounding, .oob, .ftz, .sat, .relu, then the types)."""
    if not isinstance(ins, Form):
        return str(ins)
    mods = [ins.rounding] if ins.rounding else []
    mods += [m for m in ("oob", "ftz", "sat", "relu") if getattr(ins, m)]
    packed = ins.lane_format + ("x2" if ins.lanes == 2 else "")
    types = ["f32", ins.lane_format] if ins.mixed else [packed]
    return ".".join([ins.opcode] + mods + types)


def _undocumented_bf16_fma(ins) -> bool:
    """fma.{rz,rm,rp}{.oob}{.relu}.bf16/.bf16x2: half fma is .rn only in the manual (9.7.4.4)."""
    return (ins.opcode == "fma" and not ins.mixed and ins.lane_format == "bf16"
            and ins.rounding in ("rz", "rm", "rp"))


_F32_ONE, _F32_MINUS_ZERO = 0x3F800000, 0x80000000


def _as_compiled_f16(ins, pol):
    """The scalar undocumented bf16 fma as ptxas 13.0 compiles it (docs/ptxas-findings.md):
    the bits read as f16, their exact a*b+c rounded to f32 in the form's mode (fma.<mode>.f32
    of exactly widened operands), that rounded to f16 to nearest; .relu/.oob dropped; a NaN
    anywhere gives the f16 canonical NaN of cvt.rn.f16.f32."""
    nan = pol.value("canonical_nan_f16", "cvt.rn.f16.f32")

    def run(operands) -> int:
        bits, _, _ = ieee("fma", F16, F16, F32, ins.rounding, tuple(operands))
        if bits is None:
            return nan
        # x * 1 + (-0) is x, a -0 too: the exact f32 value, rounded once into f16
        bits, _, _ = ieee("fma", F32, F32, F16, "rn", (bits, _F32_ONE, _F32_MINUS_ZERO))
        return nan if bits is None else bits
    return run


def lane_function(ins, policy=None):
    """A function from one lane's operand tuple (16-bit lanes, the mixed forms' c 32-bit) to
    its result bits, with the instruction's modifiers and the policy bound in.  Each policy
    question is read for this form (``policy.value(field, spelling)``)."""
    pol = _policy(policy)
    sp = spelling_of(ins)
    in_fmt = FORMATS[ins.lane_format]
    out = FORMATS[ins.result_format]
    c_fmt = out if ins.mixed else in_fmt
    op = "fma" if ins.opcode == "mad" else ins.opcode
    rounding = ins.rounding or "rn"
    if _undocumented_bf16_fma(ins) and pol.value("bf16_fma_directed", sp) == "as_compiled":
        if ins.lanes == 1:
            return _as_compiled_f16(ins, pol)
        rounding = "rn"                     # the packed form: fma.rn{.oob}{.relu}.bf16x2
    memo = _memo(op, in_fmt, c_fmt, out, rounding)
    # the canonical NaN of the result format, one policy field per format
    nan = pol.value({"f16": "canonical_nan_f16", "bf16": "canonical_nan_bf16",
                     "f32": "canonical_nan_f32"}[out.name], sp)
    sign = out.sign_bit
    one = out.one_bits

    oob = None
    if ins.oob:
        oob = {OOB_NAN, OOB_NAN | 0x8000} if pol.value("oob_ignores_sign", sp) else {OOB_NAN}
        n_tested = 3 if pol.value("oob_tests_c", sp) else 2
    ftz = bool(ins.ftz)
    if ftz:
        fmts = (in_fmt, in_fmt, in_fmt) if op == "fma" else (in_fmt, c_fmt)
        # tiny: the exact result is below 2**emin ("before_rounding"); the result rounded into
        # the format is subnormal ("after_rounding"); the exact result rounded to the format's
        # precision with an unbounded exponent is below 2**emin ("after_rounding_unbounded")
        readings = ("after_rounding", "before_rounding", "after_rounding_unbounded")
        reading = pol.value("ftz_tininess", sp)
        if reading not in readings:
            raise ValueError(f"unknown ftz_tininess policy {reading!r}")
        tininess = readings.index(reading)
    sat, relu = bool(ins.sat), bool(ins.relu)
    sat_m0 = 0 if pol.value("sat_minus_zero_to_plus", sp) else sign
    relu_m0 = 0 if pol.value("relu_minus_zero_to_plus", sp) else sign

    def run(operands) -> int:
        if oob is not None and any(x in oob for x in operands[:n_tested]):
            return 0                                    # +0.0; .relu/.sat change nothing
        if ftz:                                         # subnormal inputs -> signed zero
            operands = tuple((x & f.sign_bit) if is_subnormal(x, f) else x
                             for x, f in zip(operands, fmts))
        hit = memo.get(operands)
        if hit is None:
            hit = memo[operands] = _ieee(op, in_fmt, c_fmt, out, rounding, operands)
        bits, tiny_before, tiny_unbounded = hit
        if ftz and bits is not None:                    # tiny results -> signed zero
            tiny = (is_subnormal(bits, out), tiny_before, tiny_unbounded)[tininess]
            if tiny:
                bits &= sign
        if sat:                                         # clamp to [0, 1], NaN -> +0
            if bits is None:
                return 0
            if bits == sign:
                return sat_m0
            if bits & sign:
                return 0
            return one if bits > one else bits          # (1, +inf] -> 1
        if relu:                                        # negative -> +0, NaN -> canonical
            if bits is None:
                return nan
            if bits == sign:
                return relu_m0
            return 0 if bits & sign else bits
        return nan if bits is None else bits

    return run


def lane(ins, operands, policy=None) -> int:
    """One lane: operand bits (16-bit lanes; the mixed forms' c 32-bit) -> result bits."""
    return lane_function(ins, policy)(tuple(operands))


def _n_operands(ins) -> int:
    return 3 if ins.opcode in ("fma", "mad") else 2


def _lane_bits(ins) -> int:
    """Bits of one lane of a packed operand: 16 (.f16x2/.bf16x2), 32 (.f32x2)."""
    return 32 if ins.lane_format == "f32" else 16


def compute(ins, *operands, policy=None) -> int:
    """The result bits of one instruction; operands in PTX order (see the module doc)."""
    if isinstance(ins, str):
        ins = parse_form(ins)
    if len(operands) != _n_operands(ins):
        raise TypeError(f"{ins.opcode} takes {_n_operands(ins)} operands, got {len(operands)}")
    run = lane_function(ins, policy)
    operands = tuple(int(x) for x in operands)
    if ins.lanes == 1:
        return run(operands)
    k = _lane_bits(ins)
    lo = run(tuple(x & ((1 << k) - 1) for x in operands))
    hi = run(tuple((x >> k) & ((1 << k) - 1) for x in operands))
    return lo | (hi << k)


def compute_array(ins, *operands, policy=None) -> np.ndarray:
    """compute() element-wise over broadcast integer arrays."""
    if isinstance(ins, str):
        ins = parse_form(ins)
    if len(operands) != _n_operands(ins):
        raise TypeError(f"{ins.opcode} takes {_n_operands(ins)} operands, got {len(operands)}")
    run = lane_function(ins, policy)
    arrays = np.broadcast_arrays(*[np.asarray(x).astype(np.uint64) for x in operands])
    shape = arrays[0].shape
    if ins.lanes == 1:
        cols = [a.ravel().tolist() for a in arrays]
        res = np.array([run(t) for t in zip(*cols)], dtype=np.uint64)
    else:
        k = np.uint64(_lane_bits(ins))
        mask = np.uint64((1 << int(k)) - 1)
        lo = [(a.ravel() & mask).tolist() for a in arrays]
        hi = [((a.ravel() >> k) & mask).tolist() for a in arrays]
        res = (np.array([run(t) for t in zip(*lo)], dtype=np.uint64)
               | (np.array([run(t) for t in zip(*hi)], dtype=np.uint64) << k))
    width = (ins.lanes * _lane_bits(ins)) if ins.lanes == 2 else (
        32 if ins.result_format == "f32" else 16)
    return res.astype(f"uint{width}").reshape(shape)


# --------------------------------------------------------------------------------------------
# The oracle's own reading of a spelling (to run without ptxfp, and to cross-check its parser)


@dataclass(frozen=True)
class Form:
    opcode: str
    mixed: bool
    lanes: int
    lane_format: str
    result_format: str
    rounding: str | None
    ftz: bool = False
    sat: bool = False
    relu: bool = False
    oob: bool = False


def parse_form(spelling: str) -> Form:
    """Read a spelling loosely (modifiers in any order, .sat repeated); no legality checks."""
    opcode, *mods = spelling.strip().split(".")
    types = [m for m in mods if m in ("f16", "bf16", "f16x2", "bf16x2", "f32", "f32x2")]
    rnd = [m for m in mods if m in _MODES]
    flags = set(mods) - set(types) - set(rnd)
    unknown = flags - {"ftz", "sat", "relu", "oob"}
    if unknown or opcode not in ("add", "sub", "mul", "fma", "mad") or not types:
        raise ValueError(f"cannot read {spelling!r}")
    mixed = len(types) == 2
    if mixed:
        lane_t, res = types[1], "f32"
    else:
        lane_t = types[0].removesuffix("x2")
        res = lane_t
    # mad.rnd.f32 is fma.rnd.f32 (manual 9.7.3, mad): lane_function computes it as fma
    rounding = rnd[0] if rnd else ("rn" if opcode not in ("fma", "mad") else None)
    return Form(opcode=opcode, mixed=mixed, lanes=2 if types[0].endswith("x2") else 1,
                lane_format=lane_t, result_format=res, rounding=rounding,
                ftz="ftz" in flags, sat="sat" in flags, relu="relu" in flags,
                oob="oob" in flags)


def _half_forms():
    out = []
    for op in ("add", "sub", "mul"):
        for t in ("f16", "f16x2"):
            for ftz in ("", ".ftz"):
                for sat in ("", ".sat"):
                    out.append(f"{op}.rn{ftz}{sat}.{t}")
        for t in ("bf16", "bf16x2"):
            out.append(f"{op}.rn.{t}")
    for t in ("f16", "f16x2"):
        for ftz in ("", ".ftz"):
            for tail in ("", ".sat", ".relu"):
                out.append(f"fma.rn{ftz}{tail}.{t}")
    for t in ("bf16", "bf16x2"):
        # The manual's syntax block lists .rn only; ptxas 13.0 also takes .rz/.rm/.rp on bf16
        # fma (docs/ptxas-findings.md), so those are forms too.
        for r in _MODES:
            for tail in ("", ".relu"):
                out.append(f"fma.{r}{tail}.{t}")
    # .oob: the manual writes fma.rnd.oob{.relu}; ptxas 13.0 also takes .oob.sat on f16 and
    # every rounding on bf16 (docs/ptxas-findings.md).
    for t in ("f16", "f16x2"):
        for tail in ("", ".relu", ".sat"):
            out.append(f"fma.rn.oob{tail}.{t}")
    for t in ("bf16", "bf16x2"):
        for r in _MODES:
            for tail in ("", ".relu"):
                out.append(f"fma.{r}.oob{tail}.{t}")
    return out


def _mixed_forms():
    out = []
    for op in ("add", "sub", "fma"):
        for t in ("f16", "bf16"):
            for r in _MODES:
                for sat in ("", ".sat"):
                    out.append(f"{op}.{r}{sat}.f32.{t}")
    return out


# Every semantically distinct form: the spec pages' syntax blocks, widened where ptxas 13.0
# accepts more (docs/ptxas-findings.md), in the manual's modifier order.
def _f32_forms():
    """.f32 (manual 9.7.3: add/sub/mul{.rnd}{.ftz}{.sat}, fma/mad.rnd{.ftz}{.sat}) and .f32x2
    (add/sub/mul{.rnd}{.ftz}, fma.rnd{.ftz}; ptxas 13.0 takes no .sat there, no mad.f32x2)."""
    out = []
    for op in ("add", "sub", "mul", "fma", "mad"):
        for r in _MODES:
            for ftz in ("", ".ftz"):
                for sat in ("", ".sat"):
                    out.append(f"{op}.{r}{ftz}{sat}.f32")
    for op in ("add", "sub", "mul", "fma"):
        for r in _MODES:
            for ftz in ("", ".ftz"):
                out.append(f"{op}.{r}{ftz}.f32x2")
    return out


SPEC_FORMS = tuple(_half_forms() + _mixed_forms() + _f32_forms())
