"""The ``ptxfp`` command: evaluate one instruction, check PTX, run PTX, list the forms, verify
against a GPU.  ``main(argv)`` returns the exit status: 0 success, 1 ``check`` found an error,
2 a user error (printed as one line ``ptxfp: error: ...`` on stderr, never a traceback).
With ``PTXFP_DEBUG=1`` in the environment such an error is raised instead, traceback and all:
any ``ValueError`` is reported as a user error (NumPy's on a bad array file, for one), which
would also hide a fault of ptxfp's own behind one line.
"""

from __future__ import annotations

import argparse
import fnmatch
import inspect
import json
import os
import re
import sys
from fractions import Fraction

import numpy as np

from .errors import PtxfpError, ResourceError
from .core.formats import FORMATS
from .limits import check_bytes

PROG = "ptxfp"


class CliError(PtxfpError):
    """A bad command line value (a literal, a register name, a file)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2 (raised, caught in main), and
    values such as -2.0bf16 or -inff16 are operands, not options."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse takes a '-' word for an option unless it looks like a negative number; make
        # negative literals with a format suffix look like one (no option here starts so).
        self._negative_number_matcher = re.compile(r"^-(?:\.?\d|inf|nan)", re.IGNORECASE)

    def error(self, message):
        raise CliError(f"{message} (see '{self.prog} --help')")


# --- literals ---------------------------------------------------------------------------------

#: float literal suffix -> (width, precision, emin, emax), from the type table
_FLOAT_FMTS = {n: (f.width, f.precision, f.emin, f.emax) for n, f in FORMATS.items()}
_FLOAT_FMTS["f64"] = (64, 53, -1022, 1023)          # IEEE binary64
_FLOAT_RE = re.compile(r"^([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan))"
                       r"(bf16|f16|f32|f64)$", re.IGNORECASE)


def _round_exact(q, fmt):
    """The bits of the rational q in `fmt`, rounded once to nearest even (no double rounding
    through a binary64 parse)."""
    width, P, EMIN, EMAX = _FLOAT_FMTS[fmt]
    sign = 1 if q < 0 else 0
    q = abs(q)
    sbit = sign << (width - 1)
    inf = (EMAX - EMIN + 2) << (P - 1)
    if q == 0:
        return sbit
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1                                   # now 2**e <= q < 2**(e+1)
    e = max(e, EMIN)
    scaled = q / Fraction(2) ** (e - P + 1)
    m = scaled.numerator // scaled.denominator
    rem = scaled - m
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m & 1):
        m += 1
    bits = ((e - EMIN) << (P - 1)) + m           # a carry walks into the exponent by itself
    return sbit | min(bits, inf)


def _float_literal(text):
    """'1.5f16' -> (format, bits); None when `text` is not a suffixed float literal."""
    m = _FLOAT_RE.match(text.strip())
    if not m:
        return None
    num, fmt = m.group(1).lower(), m.group(2).lower()
    width, P, EMIN, EMAX = _FLOAT_FMTS[fmt]
    neg = num.startswith("-")
    body = num.lstrip("+-")
    sbit = (1 << (width - 1)) if neg else 0
    if body in ("inf", "infinity"):
        return fmt, sbit | ((EMAX - EMIN + 2) << (P - 1))
    if body == "nan":
        if fmt == "f64":
            return fmt, 0x7FF8000000000000                  # a quiet NaN (an input)
        from .policy import current
        return fmt, current().canonical_nan(fmt)
    q = Fraction(body)
    bits = _round_exact(-q if neg else q, fmt)
    if q == 0 and neg:
        bits = sbit
    return fmt, bits


def parse_value(text, fmt, what):
    """A command-line value for an operand of format `fmt` (f16, bf16, f32, f16x2, bf16x2, or
    an integer register type like u64/b16): hex or decimal bits, a float literal with a suffix
    (1.5f16, 2.0bf16, 1e-3f32, -inff32, nanf16, 2.0f64), a PTX 0fXXXXXXXX, or for .f16x2/.bf16x2 a pair
    'lane0,lane1' of f16/bf16 literals (lane 0 = bits [15:0])."""
    from .ptx.interp import WIDTH
    t = text.strip()
    width = WIDTH.get(fmt)
    if width is None:
        raise CliError(f"{what}: unknown type .{fmt}")
    if "," in t:
        if fmt not in ("f16x2", "bf16x2", "b32"):
            raise CliError(f"{what}: a pair 'x,y' is only for .f16x2/.bf16x2 operands, this one is "
                           f".{fmt}")
        parts = t.split(",")
        if len(parts) != 2:
            raise CliError(f"{what}: a packed value is a pair 'lane0,lane1', got {text!r}")
        lane_fmt = fmt[:-2] if fmt != "b32" else None
        lanes = []
        for p in parts:
            v = parse_value(p, lane_fmt or "b16", what)
            lit = _float_literal(p)
            if lit and lane_fmt and lit[0] != lane_fmt:
                raise CliError(f"{what}: lane value {p!r} is .{lit[0]}, the operand is .{fmt}")
            lanes.append(v)
        return lanes[0] | (lanes[1] << 16)
    lit = _float_literal(t)
    if lit is not None:
        lfmt, bits = lit
        lw = _FLOAT_FMTS[lfmt][0]
        if lw != width:
            raise CliError(f"{what}: {text!r} is a {lw}-bit .{lfmt} literal, the operand is "
                           f"{width}-bit .{fmt}")
        if fmt in ("f16", "bf16", "f32") and lfmt != fmt:
            raise CliError(f"{what}: {text!r} is a .{lfmt} literal, the operand is .{fmt}")
        return bits
    low = t.lower()
    try:
        if re.fullmatch(r"[+-]?0x[0-9a-f]+", low):
            v = int(low, 16)
        elif re.fullmatch(r"0f[0-9a-f]{8}", low):
            v = int(low[2:], 16)
            if width != 32:
                raise CliError(f"{what}: {text!r} is a 32-bit value, the operand is {width}-bit")
        elif re.fullmatch(r"[+-]?\d+", low):
            v = int(low, 10)
        else:
            raise ValueError
    except ValueError:
        raise CliError(f"{what}: cannot read {text!r}: expected hex (0x3c00), decimal bits, or "
                       "a float literal with a suffix (1.5f16, 2.0bf16, 1e-3f32, 2.0f64)") from None
    if v < 0:
        if fmt.startswith("s") and v >= -(1 << (width - 1)):
            return v & ((1 << width) - 1)
        raise CliError(f"{what}: {text!r} is negative; bits are unsigned (write a float "
                       "literal such as -1.5f16 for a negative value)")
    if v >= (1 << width):
        raise CliError(f"{what}: {text!r} does not fit in {width} bits (.{fmt})")
    return v


def _fmt_float(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def decode(bits, typ):
    """A human reading of `bits` of type `typ`: a float, a lane pair, or an integer."""
    from .encode import from_bits
    bits = int(bits)
    if typ in ("f16", "bf16", "f32"):
        return _fmt_float(from_bits(bits, typ))
    if typ in ("f16x2", "bf16x2"):
        lo, hi = from_bits(bits, typ)
        return f"[15:0] {_fmt_float(lo)}  [31:16] {_fmt_float(hi)}"
    if typ == "f32x2":
        lo, hi = from_bits(bits & 0xFFFFFFFF, "f32"), from_bits(bits >> 32, "f32")
        return f"[31:0] {_fmt_float(lo)}  [63:32] {_fmt_float(hi)}"
    if typ == "f64":
        return _fmt_float(np.array([bits], np.uint64).view(np.float64)[0])
    from .core import types
    t = types.TYPES.get(typ)
    if t is not None and t.fmt is not None and t.fmt.code < 0:     # fp8/fp6/fp4/ue8m0 lanes
        c = t.container
        lanes = [(bits >> (c * k)) & ((1 << c) - 1) for k in range(t.lanes)]
        return "  ".join(f"[{c * k + c - 1}:{c * k}] {_fmt_float(t.fmt.value(v))}"
                         for k, v in enumerate(lanes))
    if typ == "pred":
        return "true" if bits else "false"
    if typ and typ[0] == "s" and typ[1:].isdigit():
        w = int(typ[1:])
        return str(bits - (1 << w) if bits >> (w - 1) else bits)
    return str(bits)


def _number(bits, typ):
    """The value of `bits` as a JSON number: a float for float types (None for NaN and the
    infinities, which JSON has no numbers for: see the "text" field), an int otherwise, None
    for the packed types (see "lanes")."""
    from .encode import from_bits
    bits = int(bits)
    if typ in ("f16", "bf16", "f32", "f64"):
        x = float(from_bits(bits, typ)) if typ != "f64" else \
            float(np.array([bits], np.uint64).view(np.float64)[0])
        return x if np.isfinite(x) else None
    if typ in ("f16x2", "bf16x2"):
        return None
    if typ == "pred":
        return bool(bits)
    if typ and typ[0] == "s" and typ[1:].isdigit():
        w = int(typ[1:])
        return bits - (1 << w) if bits >> (w - 1) else bits
    return bits


def _json_value(bits, typ, width):
    """One value for --json: bits as a number and as hex, the value as a number and as text,
    and for .f16x2/.bf16x2 the two lanes (lane 0 = bits [15:0]) the same way."""
    bits = int(bits)
    doc = {"type": typ, "bits": bits, "hex": _hex(bits, width), "value": _number(bits, typ),
           "text": decode(bits, typ)}
    if typ in ("f16x2", "bf16x2"):
        doc["lanes"] = [_json_value((bits >> (16 * k)) & 0xFFFF, typ[:-2], 16) for k in (0, 1)]
        for lane in doc["lanes"]:
            del lane["type"]
    return doc


def _hex(bits, width):
    if width == 1:
        return str(int(bool(bits)))
    return f"0x{int(bits):0{max(width // 4, 1)}x}"


# --- eval -------------------------------------------------------------------------------------

def _parse_form(spelling):
    from .isa.spelling import parse
    return parse(spelling)


def _warn_undocumented(form):
    """One line on stderr for an undocumented bf16 fma spelling (ptxfp.check's warning of the
    same rule; the column is the rounding modifier's in the spelling as written)."""
    from .isa.arith import (UNDOCUMENTED_BF16_FMA, undocumented_bf16_fma,
                            undocumented_bf16_fma_message)
    if undocumented_bf16_fma(form.opcode, form.rounding, form.types):
        col = form.spelling.find("." + form.rounding) + 2
        sys.stderr.write(f"{form.spelling}:1:{col}: warning: "
                         f"{undocumented_bf16_fma_message(str(form), form.lanes == 2)} "
                         f"[{UNDOCUMENTED_BF16_FMA}]\n")


def _nearest_spelling(text):
    """The modeled spelling closest to ``text`` (for "did you mean"), or None."""
    import difflib
    from . import isa
    close = difflib.get_close_matches(text.strip().lower(), isa.all_spellings(), n=1,
                                      cutoff=0.6)
    return close[0] if close and close[0] != text else None


def cmd_eval(args, out):
    from .dispatch import compute
    from .errors import SpellingError
    from .core.types import width
    try:
        form = _parse_form(args.spelling)
    except SpellingError as e:
        hint = _nearest_spelling(args.spelling)
        if hint is None:
            raise
        raise CliError(f"{' '.join(str(e).split())} (did you mean '{hint}'?)") from e
    if form.row.matrix is not None:
        return _eval_matrix(form, args, out)
    sfu = form.family == "sfu"
    if args.seed is not None or args.out is not None or (args.target is not None and not sfu):
        raise CliError("--seed, --target and --out are for the matrix forms (mma, wgmma, "
                       "tcgen05.mma); --target also for the SFU forms (.approx, div.full)")
    names, fmts = form.operand_names, form.operand_formats
    if len(args.operands) != len(names):
        raise CliError(f"'{form.spelling}' takes {len(names)} operand"
                       f"{'s' if len(names) != 1 else ''} ({', '.join(names)}), "
                       f"got {len(args.operands)}")
    ops = [parse_value(t, f, f"operand {n} (.{f})")
           for t, n, f in zip(args.operands, names, fmts)]
    if sfu:
        from .ops.sfu import DEFAULT_TARGET
        from .ops.sfu.model import check_target
        target = check_target(args.target or DEFAULT_TARGET)
        d = compute(form, *ops, target=target)
        note = _sfu_note(str(form), target)
        if note is not None and not args.json:
            print(f"{PROG}: note: {form}: {note}", file=sys.stderr)
    else:
        d = compute(form, *ops)
    _warn_undocumented(form)
    dtype = _dest_type(form)
    dw = width(dtype)
    rows = [(n, f, v, width(f)) for n, f, v in zip(names, fmts, ops)]
    rows.append(("d", dtype, d, dw))
    if args.json:
        doc = {"spelling": str(form), "min_ptx": form.min_ptx_str,
               "min_target": form.min_target,
               "operands": {n: _json_value(v, f, w) for n, f, v, w in rows[:-1]},
               "result": _json_value(d, dtype, dw)}
        if sfu:                        # the GPU it computed for, and whose primitive it is
            doc["target"], doc["note"] = target, note
        json.dump(doc, out, indent=2)
        out.write("\n")
        return 0
    out.write(f"{form}   (PTX {form.min_ptx_str}, {form.min_target})\n")
    tw = max(len(r[1]) for r in rows)
    for n, f, v, w in rows:
        out.write(f"  {n}  {f:<{tw}}  {_hex(v, w):<10}  {decode(v, f)}\n")
    return 0


def _dest_type(form):
    """The type of the destination d: the row's (.pred for setp/testp, .s64 for mul.wide.s32),
    else the form's type."""
    ops = getattr(form.row, "operands", None) or ()
    t = getattr(ops[0], "type", None) if ops else None
    return t or form.dtype


#: the element types of matrix operands drawn at random by ``eval --seed``: (lo, hi) of
#: the integers, else floats in [-2, 2) rounded to the type
_MATRIX_INT = {"s8": (-128, 128), "u8": (0, 256), "s4": (-8, 8), "u4": (0, 16), "b1": (0, 2),
               "s32": (-1000, 1000)}


def _matrix_random(ty, shape, rng):
    """Random operand of element type ``ty``: integers, or float bits of the type."""
    import ml_dtypes
    if ty in _MATRIX_INT:
        lo, hi = _MATRIX_INT[ty]
        return rng.integers(lo, hi, size=shape).astype(np.int64)
    if ty in ("ue8m0",):
        return rng.integers(124, 131, size=shape).astype(np.uint8)
    fl = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "tf32": np.float32, "f64": np.float64, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2, "e3m2": ml_dtypes.float6_e3m2fn,
          "e2m3": ml_dtypes.float6_e2m3fn, "e2m1": ml_dtypes.float4_e2m1fn,
          "ue4m3": ml_dtypes.float8_e4m3fn}[ty]
    v = rng.uniform(0.25 if ty == "ue4m3" else -2, 2, size=shape).astype(fl)
    if ty == "tf32":
        v = (v.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return v


def _matrix_operand(text, what, ty):
    if not text.startswith("@"):
        raise CliError(f"{what}: a matrix operand is @FILE.npy (or use --seed N), got {text!r}")
    path = text[1:]
    try:
        x = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise CliError(f"{what}: {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise CliError(f"{what}: {path}: not a .npy array ({e})") from None
    if x.dtype.kind == "V":
        # NumPy saves the ml_dtypes floats (bfloat16, float8_*) as raw bytes: read them as
        # the operand's type where the width fits, else as its bits
        typed = _matrix_random(ty, (0,), np.random.default_rng(0)).dtype
        x = x.view(typed if typed.itemsize == x.dtype.itemsize
                   else {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
    return x


def _matrix_summary(x):
    a = np.asarray(x)
    if a.dtype.kind == "f" or a.dtype.name in ("bfloat16",) or "float8" in a.dtype.name:
        f = a.astype(np.float64)
        fin = f[np.isfinite(f)]
        rng = (f"min {fin.min():.6g}  max {fin.max():.6g}" if fin.size else "no finite value")
        return (f"{a.dtype.name} {'x'.join(map(str, a.shape))}  {rng}  "
                f"nan {int(np.isnan(f).sum())}  inf {int(np.isinf(f).sum())}")
    return (f"{a.dtype.name} {'x'.join(map(str, a.shape))}  min {a.min()}  max {a.max()}"
            if a.size else f"{a.dtype.name} empty")


def _eval_matrix(ins, args, out):
    """``ptxfp eval`` of a matrix spelling: A, B, C (and the scale factors) from --seed or
    @FILE.npy operands, D through ``ptxfp.mma``."""
    from .isa import spelling
    f = spelling.mma_form(str(ins) if ins.descriptor else args.spelling)
    import ptxfp
    mma = getattr(ptxfp, "mma", None)
    if mma is None:
        raise CliError("this build has no ptxfp.mma (the tensor-core numerics): the matrix "
                       "forms parse and check, but eval needs ptxfp.mma")
    names = ["a", "b", "c"] + (["scale_a", "scale_b"] if f.block_scaled else [])
    blk = f.scale_block or 1
    shapes = {"a": (f.m, f.k), "b": (f.k, f.n), "c": (f.m, f.n),
              "scale_a": (f.m, f.k // blk), "scale_b": (f.k // blk, f.n)}
    tys = {"a": f.atype, "b": f.btype, "c": f.ctype, "scale_a": f.scale_type,
           "scale_b": f.scale_type}
    if args.seed is not None:
        if args.operands:
            raise CliError("--seed draws the operands: give no OPERAND with it")
        rng = np.random.default_rng(args.seed)
        ops = {n: _matrix_random(tys[n], shapes[n], rng) for n in names}
    else:
        if len(args.operands) != len(names):
            raise CliError(f"'{f.spelling}' takes {len(names)} matrix operands "
                           f"({', '.join(names)}) as @FILE.npy, or --seed N; "
                           f"got {len(args.operands)}")
        ops = {n: _matrix_operand(t, n, tys[n]) for n, t in zip(names, args.operands)}
    target = args.target or (ins.min_target.rstrip("af") if ins.min_sm > 90
                             or ins.min_target.endswith(("a", "f")) else "sm_90")
    extra = {k: ops[k] for k in ("scale_a", "scale_b") if k in ops}
    d = np.asarray(mma(f, ops["a"], ops["b"], ops["c"], target=target, **extra))
    arrays = {n: np.asarray(ops[n]) for n in names}
    arrays["d"] = d
    types = {n: tys[n] for n in names}
    types["d"] = f.dtype
    wrote = None
    if args.out is not None:
        from .outputs import write_output
        write_output(args.out, lambda fh: np.savez(fh, **arrays), what="--out")
        wrote = (f"wrote {len(arrays)} arrays to {args.out} ("
                 + ", ".join(f"{n} {a.dtype.name} {'x'.join(map(str, a.shape))}"
                             for n, a in arrays.items()) + ")")
        if args.out == "-":                       # the file went to standard output
            return 0
    if args.json:
        doc = {"spelling": f.spelling, "min_ptx": ins.min_ptx_str,
               "min_target": ins.min_target, "target": target,
               "shape": [f.m, f.n, f.k]}
        if args.seed is not None:
            doc["seed"] = args.seed
        doc["types"] = types
        doc.update({n: _matrix_json(a) for n, a in arrays.items()})
        if wrote is not None:
            doc["out"] = {"path": args.out, "arrays": list(arrays)}
        json.dump(doc, out, indent=None)
        out.write("\n")
        return 0
    out.write(f"{f.spelling}   (PTX {ins.min_ptx_str}, {ins.min_target}; computed for "
              f"{target})\n")
    out.write(f"  m{f.m} n{f.n} k{f.k}: D = A x B + C"
              + (f", scale factors {f.scale_type} per {blk} of k" if f.block_scaled else "")
              + (f"; operands drawn by --seed {args.seed}" if args.seed is not None else "")
              + "\n")
    for n in names:
        out.write(f"  {n:<8} {_matrix_summary(ops[n])}\n")
    out.write(f"  {'d':<8} {_matrix_summary(d)}\n")
    if d.ndim == 2 and d.shape[0] <= _MATRIX_SHOW and d.shape[1] <= _MATRIX_SHOW:
        out.write(f"  d ({d.shape[0]}x{d.shape[1]}):\n")
        out.write(_matrix_text(d, "    "))
    else:
        out.write(f"  d is {'x'.join(map(str, d.shape))}: too large to print whole (more than "
                  f"{_MATRIX_SHOW}x{_MATRIX_SHOW});\n  --json prints every element, "
                  "--out FILE.npz saves A, B, C and D\n")
    if wrote is not None:
        out.write(wrote + "\n")
    return 0


#: the largest matrix (rows and columns) ``eval`` prints whole
_MATRIX_SHOW = 16


def _matrix_floats(a):
    """Is the array a float one (NumPy's or ml_dtypes' bfloat16 / float8 / float6 / float4)?"""
    return a.dtype.kind == "f" or "float" in a.dtype.name


def _matrix_json(a):
    """A matrix as JSON lists: floats as numbers (their exact value as a double), integers and
    scale-factor bits as integers."""
    a = np.asarray(a)
    return a.astype(np.float64).tolist() if _matrix_floats(a) else a.tolist()


def _matrix_text(a, indent):
    """The rows of a small matrix, columns aligned (floats to 6 significant digits)."""
    cells = [[f"{float(x):.6g}" if _matrix_floats(a) else str(int(x)) for x in row]
             for row in a]
    w = max((len(c) for row in cells for c in row), default=1)
    return "".join(indent + " ".join(c.rjust(w) for c in row) + "\n" for row in cells)


# --- check ------------------------------------------------------------------------------------

#: bytes of memory reading and running a module takes per byte of its text, measured on a 50 MB
#: straight-line module (issue #29): about 80 in run, 30 in check
_PER_BYTE = {"run": 80, "check": 30}
#: the most bytes of PTX text read whatever the memory: far past any real module (a 10,000-
#: kernel library is a few tens of MB), so /dev/zero or a wrong file stops at once
_SOURCE_MAX = 256 << 20
_CHUNK = 1 << 20


def _read_bounded(f, name, what):
    """The bytes of the open binary file `f`, read in chunks: refused at once when it holds a
    NUL byte (binary data such as /dev/zero or /dev/urandom is not PTX text) or when it is
    larger than the text `what` ('run' or 'check') can take in the memory this machine has."""
    from .limits import available, human
    per = _PER_BYTE.get(what, 80)
    cap = min(_SOURCE_MAX, max(available() // per, _CHUNK))
    parts, total = [], 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        if isinstance(chunk, bytes):
            nul = chunk.find(b"\0")
            if nul >= 0:
                head = b"".join(parts) + chunk[:nul]
                _decode(head, name)                   # a bad UTF-8 byte before it is named
                line = head.count(b"\n") + 1
                col = len(head) - (head.rfind(b"\n") + 1) + 1
                raise CliError(f"{name}:{line}:{col}: not PTX text: a NUL byte (binary data)")
        total += len(chunk)
        if total > cap:
            raise CliError(f"{name}: more than {human(cap)} of text; '{what}' takes about "
                           f"{per} bytes of memory a byte of text, and ptxfp reads at most "
                           f"{human(cap)} (the smaller of {human(_SOURCE_MAX)} and the free "
                           "memory over that)")
        parts.append(chunk)
    if parts and isinstance(parts[0], str):
        return "".join(parts)
    return b"".join(parts)


def _read_source(path, what="run"):
    """(name, text) of a file or of stdin ('-'), read the same way: bytes, decoded as UTF-8
    (anything else is 'not a UTF-8 text file', with the position of the first bad byte);
    weighed as it is read (:func:`_read_bounded`)."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            stdin = sys.stdin
            data = _read_bounded(stdin.buffer if hasattr(stdin, "buffer") else stdin, name,
                                 what)
        else:
            with open(path, "rb") as f:
                data = _read_bounded(f, name, what)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory") from None
    except OSError as e:
        raise CliError(f"{path}: {e.strerror or e}") from None
    if isinstance(data, str):
        return name, data
    return name, _decode(data, name)


def _decode(data, name):
    """`data` decoded as UTF-8, else 'not a UTF-8 text file' at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CliError(f"{name}:{line}:{col}: not a UTF-8 text file (byte "
                       f"0x{data[e.start]:02x})") from None


def cmd_check(args, out):
    try:
        from .ptx.check import check
    except ImportError as e:                      # pragma: no cover (check.py is part of ptxfp)
        raise CliError(f"the checker is not available: {e}") from None
    _check_target_version(args.target, args.version, args.ptxas)
    name, text = _read_source(args.file, "check")
    report = check(text, target=args.target, version=args.version, ptxas=args.ptxas)
    errors = [d for d in report if d.severity == "error"]
    warnings = [d for d in report if d.severity == "warning"]
    counts = dict(sorted(report.unmodeled_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    if args.json:
        shown = [d for d in report if d.severity == "error"] if args.errors_only else report
        json.dump({"file": name, "ok": not errors,
                   "version": _vstr(getattr(report, "version", None)),
                   "target": getattr(report, "target", None),
                   "errors": len(errors), "warnings": len(warnings),
                   "instructions": report.modeled + report.unmodeled,
                   "modeled": report.modeled, "unmodeled": report.unmodeled,
                   "unmodeled_counts": counts,
                   "diagnostics": [{"line": d.line, "col": d.col, "severity": d.severity,
                                    "message": d.message, "rule": d.rule,
                                    "ptxas": getattr(d, "ptxas", None)} for d in shown]},
                  out, indent=2)
        out.write("\n")
        return 1 if errors else 0
    # default: errors, warnings and the notes about the whole text, then one summary line;
    # one line per unmodelled instruction only with -vv (or for a bare spelling)
    every = args.verbose >= 2 or report.kind == "spelling"
    for d in report:
        if d.rule == "summary" or (args.errors_only and d.severity != "error"):
            continue
        if d.rule == "unmodeled" and not every:
            continue
        if d.rule in ("contract", "sfu-model") and args.verbose < 1:
            continue               # what ptxas fuses, which SFU primitive is assumed: with -v
        where = f"{name}:{d.line}:{d.col}:" if d.line else f"{name}:"
        out.write(f"{where} {d.severity}: {_cli_words(d.message)} [{d.rule}]\n")
    sfu = [d for d in report if d.rule == "sfu-model"]
    if sfu and args.verbose < 1 and not args.errors_only:
        # which SFU primitives are assumed on the target: one line (-v: one per instruction)
        out.write(f"{name}: info: {_sfu_summary(d.message for d in sfu)} (-v: where) "
                  "[sfu-model]\n")
    if args.errors_only:
        return 1 if errors else 0
    if args.verbose >= 1 and counts:
        out.write(f"{name}: info: not modeled: "
                  + ", ".join(f"{k} {v}" for k, v in counts.items()) + " [unmodeled]\n")
    n = report.modeled + report.unmodeled
    plural = lambda k, w: f"{k} {w}{'s' if k != 1 else ''}"      # noqa: E731
    out.write(f"{name}: {plural(len(errors), 'error')}, {plural(len(warnings), 'warning')}; "
              f"{plural(n, 'instruction')}: {report.modeled} modeled by ptxfp and checked, "
              f"{report.unmodeled} not modeled"
              + ("" if args.verbose or not counts else " (-v: which)") + "\n")
    return 1 if errors else 0


_PROVENANCE = re.compile(r"(\w+): (measured on \S+ \([^)]*\)(?:; assumed on \w+)?)")


def _sfu_summary(messages):
    """The SFU-model notes ("'ex2.approx.f32': ex2: measured on sm_75 (ptx-math); assumed on
    sm_90", ...) as one line, the primitives with the same provenance together."""
    groups = {}
    for m in messages:
        for prim, what in _PROVENANCE.findall(m.split("': ", 1)[-1]):
            groups.setdefault(what, {})[prim] = None
    return "; ".join(f"{', '.join(sorted(ps))}: {what}" for what, ps in groups.items())


def _sfu_note(spelling, target):
    """The one-line note of an SFU form whose primitive is assumed on ``target``, else None."""
    from .ops import sfu
    try:
        return sfu.note(spelling, target) if sfu.assumed(spelling, target) else None
    except PtxfpError:
        return None


def _cli_words(message):
    """A library message as the command line says it: --target/--version, not target=."""
    return message.replace("pass target= and version=", "give --target and --version")


def _check_target_version(target, version, ptxas=None):
    """--ptxas, --target and --version name a known release, target and PTX ISA version, or
    the command line is wrong (exit 2; inside a file the same words are findings of check)."""
    import importlib
    chk = importlib.import_module(__package__ + ".ptx.check")   # the module (ptx.check is
    from .ptx import releases                                  # also the function's name)
    try:
        rel = releases.release(ptxas)
    except PtxfpError as e:
        raise CliError(f"--ptxas {ptxas}: {e}") from None
    if target is not None:
        t = chk._norm_target(target)
        if t not in rel.targets:
            raise CliError(f"--target {target}: not a target ptxas {rel.name} knows; --target "
                           f"takes sm_XX with an optional a/f suffix: "
                           f"{', '.join(sorted(rel.targets, key=_target_key))}")
    if version is not None:
        try:
            v = chk._norm_version(version)
        except ValueError:
            v = None
        if v not in rel.versions:
            raise CliError(f"--version {version}: not a PTX ISA version ptxas {rel.name} "
                           f"knows; --version takes X.Y, "
                           f"{'.'.join(map(str, rel.versions[0]))} to "
                           f"{'.'.join(map(str, rel.versions[-1]))} (e.g. 8.6)")


def _target_key(t):
    m = re.match(r"sm_(\d+)(.*)", t)
    return (int(m.group(1)), m.group(2)) if m else (0, t)


def _vstr(v):
    if isinstance(v, tuple):
        return "%d.%d" % v
    return v


# --- run --------------------------------------------------------------------------------------

def _group_sets(items):
    """['a=1', '2', 'b=3'] -> {'a': ['1', '2'], 'b': ['3']}"""
    out, last = {}, None
    for it in items or ():
        if "=" in it:
            k, v = it.split("=", 1)
            k = k.strip()
            if not k:
                raise CliError(f"--set {it!r}: expected REGISTER=VALUE")
            if k in out:
                raise CliError(f"--set: '{k}' is given twice")
            out[k] = [v] if v.strip() else []
            last = k
        elif last is None:
            raise CliError(f"--set {it!r}: expected REGISTER=VALUE")
        else:
            out[last].append(it)
    for k, v in out.items():
        if not v:
            raise CliError(f"--set {k}=: no value")
    return out


def _memory_arg(text):
    if text is None:
        return None
    size = None
    if re.fullmatch(r"\d{1,40}", text):
        size = int(text)
    elif re.fullmatch(r"0x[0-9a-fA-F]{1,32}", text):
        size = int(text, 16)
    elif re.fullmatch(r"\d+|0x[0-9a-fA-F]+", text):
        raise CliError(f"--memory {text[:20]}...: a size of {len(text)} digits is more memory "
                       "than any machine has")
    if size is not None:
        check_bytes(size, "--memory", text)
        return bytes(size)
    try:
        with open(text, "rb") as f:
            return _read_memory(f, text)
    except FileNotFoundError:
        raise CliError(f"--memory {text}: neither a SIZE (a count of bytes, decimal 4096 or hex "
                       "0x1000; no units such as KB or GB) nor a FILE that exists") from None
    except OSError as e:
        raise CliError(f"--memory {text}: {e.strerror or e}") from None


def _read_memory(f, text):
    """The bytes of --memory FILE: a regular file weighed by its size first; anything else
    (a pipe, /dev/zero) read in chunks and stopped where it passes the free memory."""
    import os
    import stat
    st = os.fstat(f.fileno())
    if stat.S_ISREG(st.st_mode):
        check_bytes(st.st_size, "--memory", text, " to hold the file")
        return f.read()
    from .limits import available, human
    cap = available() // 2
    parts, total = [], 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > cap:
            raise CliError(f"--memory {text}: not a regular file, and more than {human(cap)} "
                           "(half the free memory) could be read from it")
        parts.append(chunk)


#: the most lines (threads x registers) the table of 'ptxfp run' prints
_TABLE_MAX = 4096


def _npy_arg(path, typ, key):
    """--set NAME=@FILE.npy: one value a thread from a .npy file: an integer array is bits, a
    float16/float32/float64 array of the register's width is taken as its bits."""
    try:
        arr = np.load(path, allow_pickle=False, mmap_mode="r")
    except (OSError, ValueError) as e:
        raise CliError(f"--set {key}=@{path}: cannot read a .npy file "
                       f"({getattr(e, 'strerror', None) or e})") from None
    if arr.ndim != 1:
        raise CliError(f"--set {key}=@{path}: expected a 1-D array (one value a thread), got "
                       f"shape {arr.shape}")
    from .ptx.interp import WIDTH
    if arr.dtype.kind == "V" and arr.dtype.fields is None and arr.dtype.itemsize in (1, 2, 4, 8):
        # NumPy saves ml_dtypes' floats (bfloat16, float8_*) as raw bytes ('|V2'): their bits
        w = WIDTH.get(typ, 0)
        if arr.dtype.itemsize * 8 != w:
            raise CliError(f"--set {key}=@{path}: {arr.dtype.itemsize}-byte values for a "
                           f"{w}-bit register (.{typ})")
        return np.asarray(arr).view(f"uint{w}")
    if arr.dtype.kind == "f":
        w = WIDTH.get(typ, 0)
        if arr.dtype.itemsize * 8 != w:
            raise CliError(f"--set {key}=@{path}: {arr.dtype} values for a {w}-bit register "
                           f"(.{typ}); give their bits as an integer array")
        return np.asarray(arr).view(f"uint{w}")
    if arr.dtype.kind not in "iub":
        raise CliError(f"--set {key}=@{path}: expected integers (bits) or floats, got "
                       f"{arr.dtype}")
    return np.asarray(arr)


def _dims_arg(text, opt):
    """--grid/--block X[,Y[,Z]]"""
    if text is None:
        return None
    parts = text.split(",")
    if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"\d{1,10}", p.strip()) for p in parts):
        raise CliError(f"{opt} {text}: expected X, X,Y or X,Y,Z (positive integers)")
    dims = tuple(int(p) for p in parts)
    if min(dims) < 1:
        raise CliError(f"{opt} {text}: every dimension must be at least 1")
    return dims


def _mem_range(text):
    """--mem START:LEN (decimal or 0x hex) -> (start, length)"""
    m = re.fullmatch(r"(0x[0-9a-fA-F]{1,16}|\d{1,20}):(0x[0-9a-fA-F]{1,16}|\d{1,20})", text)
    if not m:
        raise CliError(f"--mem {text}: expected START:LEN (bytes, decimal or 0x hex)")
    return int(m.group(1), 0), int(m.group(2), 0)


def _write_npz(args, res, mems, out):
    """--out FILE.npz: the registers asked for (each an array of one value a thread, its
    bits), 'memory@START:LEN' ranges of the memory after the run, and 'threads'."""
    from .outputs import write_output
    arrays = {}
    for r in args.reg or list(res.registers):
        key = r if r in res.registers else ("%" + r if "%" + r in res.registers else None)
        if key is None:
            raise CliError(f"--reg {r}: no register '{r}' holds a value after the run "
                           f"(have: {', '.join(list(res.registers)[:12])})")
        arrays[key] = res.registers[key]
    for start, n in mems:
        size = 0 if res.memory is None else res.memory.size
        if start + n > size:
            raise CliError(f"--mem {start:#x}:{n}: past the end of the {size}-byte memory")
        arrays[f"memory@{start:#x}:{n}"] = res.memory[start:start + n]
    arrays["threads"] = np.array(res.threads)
    write_output(args.out, lambda f: np.savez(f, **arrays), what="--out")
    n = len(arrays)
    out.write(f"{res.threads} threads: wrote {n} array{'s' if n != 1 else ''} to {args.out} "
              f"({', '.join(arrays)})\n")
    return 0


def _show_type(name, res):
    """The type to show a register's bits as: the float type it was written as, else the float
    type an instruction reads it as, else its declared type, else the type written."""
    from .ptx.interp import WIDTH
    written = res.types.get(name)
    declared = res.declared.get(name)
    width = 1 if res.registers[name].dtype == np.bool_ else \
        res.registers[name].dtype.itemsize * 8
    floats = ("f16", "bf16", "f32", "f16x2", "bf16x2", "f64")
    if written in floats:
        return written
    for t in (res.read_as.get(name), declared):
        if t in floats and WIDTH[t] == width:
            return t
    return written or declared or "b" + str(width)


class _in_file:
    """Put the file name in front of a reader/interpreter error, as check's lines have it:
    'k.ptx:2:3: ...' (or 'k.ptx: ...' without a position)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, typ, e, tb):
        if e is None or not isinstance(e, PtxfpError) or isinstance(e, CliError):
            return False
        msg = " ".join(str(e).split())
        sep = "" if re.match(r"\d+:\d+: ", msg) else " "
        raise CliError(f"{self.name}:{sep}{msg}") from e


def cmd_run(args, out):
    from .ptx.interp import WIDTH, inputs_needed, prepare, run_detailed
    name, text = _read_source(args.file)
    if not re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S).strip():
        raise CliError(f"{name}: nothing to run: the file has no instructions")
    if args.entry is not None and not re.search(r"\.entry\b", text):
        raise CliError(f"--entry {args.entry}: {name} is a snippet (it has no .entry); "
                       "--entry picks a function of a module, leave it out")
    with _in_file(name):
        prog = prepare(text, entry=args.entry, target=args.mma_target)
    if "<" in text:                       # a register past a declared range %h<4>: say so
        from .ptx.check import check
        for d in check(text):
            if d.rule == "undeclared" and " declares " in d.message:
                raise CliError(f"{name}:{d.line}:{d.col}: {d.message}")
    needed = inputs_needed(prog)
    sets = _group_sets(args.set)
    types = {n: i.type for n, i in needed.items()}
    types.update({k: v for k, v in prog.types.items() if k not in types})
    inputs = {}
    for key, vals in sets.items():
        reg = key if key in types else ("%" + key if "%" + key in types else None)
        if reg is None:
            hint = f" (it reads: {', '.join(needed)})" if needed else ""
            raise CliError(f"--set {key}: no register or parameter '{key}' in {name}{hint}")
        typ = types[reg]
        if typ not in WIDTH:
            typ = "b64"
        if len(vals) == 1 and vals[0].startswith("@"):
            inputs[reg] = _npy_arg(vals[0][1:], typ, key)
            continue
        parsed = [parse_value(v, typ, f"--set {key}") for v in vals]
        inputs[reg] = parsed[0] if len(parsed) == 1 else np.array(parsed, dtype=np.uint64)
    missing = [n for n in needed if n not in inputs]
    if missing:
        first = needed[missing[0]]
        raise CliError(f"{name}:{first.line}:{first.col}: {first.kind} '{first.name}' is read "
                       f"before it is set: give it with --set {first.name}=VALUE"
                       + (f" (also needed: {', '.join(missing[1:])})" if missing[1:] else ""))
    memory = _memory_arg(args.memory)
    grid, block = _dims_arg(args.grid, "--grid"), _dims_arg(args.block, "--block")
    mems = [_mem_range(m) for m in args.mem]
    if args.out is None and (args.reg or mems):
        raise CliError("--reg and --mem choose what --out FILE.npz holds: give --out")
    if args.out is not None:
        # what the file will hold, checked before the run: each register asked for (all,
        # without --reg) a value per thread, and the memory ranges
        nthreads = args.threads or 1
        if grid or block:
            nthreads = int(np.prod(grid or (1,))) * int(np.prod(block or (1,)))
        for v in inputs.values():
            if isinstance(v, np.ndarray) and v.ndim == 1 and v.size > 1:
                nthreads = max(nthreads, v.size)
        widths = [prog.width[r] for r in (args.reg or prog.width) if r in prog.width]
        need = nthreads * sum(max(w // 8, 1) for w in widths) + sum(n for _, n in mems)
        check_bytes(need, "--out", args.out, " for the results it will hold")
    with _in_file(name):
        try:
            res = run_detailed(prog, inputs, memory=memory, threads=args.threads, grid=grid,
                               block=block, shared_bytes=args.shared_bytes,
                               max_steps=args.max_steps, max_work=args.max_work,
                               target=args.mma_target)
        except ResourceError as e:
            if e.option == "threads" and args.threads is not None:   # say it as the option
                raise CliError(f"--threads {args.threads}: {str(e).split(': ', 1)[1]}") \
                    from None
            raise
    names = list(res.registers)
    sfu_notes = [n for n in res.notes if "assumed on" in n]
    if sfu_notes and not args.json:      # the SFU primitives assumed on the target: one line
        print(f"{PROG}: note: {_sfu_summary(sfu_notes)}", file=sys.stderr)
    if args.out is not None:
        return _write_npz(args, res, mems, out)
    if args.json:
        regs = {}
        for r in names:
            typ = _show_type(r, res)
            w = WIDTH.get(typ, res.registers[r].dtype.itemsize * 8)
            vals = [_json_value(b, typ, w) for b in res.registers[r]]
            regs[r] = {"type": typ, "bits": [v["bits"] for v in vals],
                       "hex": [v["hex"] for v in vals], "values": [v["value"] for v in vals],
                       "texts": [v["text"] for v in vals]}
            if typ in ("f16x2", "bf16x2"):
                regs[r]["lanes"] = [[lane["value"] for lane in v["lanes"]] for v in vals]
        doc = {"file": name, "threads": res.threads, "registers": regs,
               "target": res.target, "notes": list(res.notes)}
        if res.memory is not None:
            doc["memory"] = res.memory.tobytes().hex()
        json.dump(doc, out, indent=2)
        out.write("\n")
        return 0
    rows = []
    for r in names:
        typ = _show_type(r, res)
        w = 1 if res.registers[r].dtype == np.bool_ else res.registers[r].dtype.itemsize * 8
        rows.append((r, typ, w, res.registers[r]))
    nw = max([len(r[0]) for r in rows] + [8])
    tw = max([len(r[1]) for r in rows] + [4])
    if res.threads * max(len(rows), 1) > _TABLE_MAX:
        out.write(f"{res.threads} threads x {len(rows)} registers: too many to print; write "
                  "them with --out FILE.npz (--reg NAME, --mem START:LEN choose what)\n")
        return 0
    for t in range(res.threads):
        if res.threads > 1:
            out.write(f"thread {t}:\n")
        out.write(f"  {'register':<{nw}}  {'type':<{tw}}  {'bits':<18}  value\n")
        for r, typ, w, arr in rows:
            out.write(f"  {r:<{nw}}  {typ:<{tw}}  {_hex(arr[t], w):<18}  {decode(arr[t], typ)}\n")
    if res.memory is not None and memory is not None:
        before = np.frombuffer(memory, np.uint8)
        changed = np.nonzero(before != res.memory)[0]
        if changed.size:
            out.write("memory written (16-byte rows that changed):\n")
            for row in sorted({int(i) // 16 for i in changed}):
                chunk = res.memory[row * 16:row * 16 + 16]
                out.write(f"  {row * 16:#06x}: {' '.join(f'{b:02x}' for b in chunk)}\n")
    return 0


# --- list -------------------------------------------------------------------------------------

def _forms():
    from . import isa
    from .isa.spelling import parse
    rows = []
    # every family's forms, the matrix ones (mma.sync, wgmma.mma_async, tcgen05.mma in
    # ptxfp's notation) included
    for s in isa.all_spellings(every=True):
        ins = parse(s)
        rows.append((s, ins.min_ptx_str, ins.min_target, ins.row.section, _key(ins)))
    return rows


def _key(ins):
    """One name per form: the canonical spelling with the rounding always written (add.f16
    and add.rn.f16 are one form)."""
    from . import isa
    if ins.row.matrix is not None:
        return str(ins)
    return isa.canonical_spelling(ins.opcode, ins.rounding, ins.modifiers, ins.types)


def _form_key(word):
    """The canonical spelling of a legal spelling (``add.f16`` -> its form), else None."""
    if not re.fullmatch(r"[a-z][a-z0-9]*(?:\.[a-z0-9_]+(?:::[a-z0-9]+)?)+", word, re.I):
        return None
    try:
        return _key(_parse_form(word))
    except PtxfpError:
        return None


def _matches(word, row):
    """A list WORD: a legal spelling of a form (any order, defaults written or not: add.f16,
    fma.rn.sat.f32.f16.sat), a glob over the spellings (fma.*.bf16x2, *relu*), or a part of
    the spelling (bf16, .oob)."""
    spelling, key = row[0], row[4]
    w = word.lower()
    if any(c in w for c in "*?["):
        return fnmatch.fnmatchcase(spelling, w)
    k = _form_key(w)
    if k is not None:
        return key == k
    return w in spelling.lower()


_SFU_OPCODES = frozenset(("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh", "div"))


def _sfu_model(spelling):
    """(text, JSON) of where an SFU form's primitive was measured and on which of ptxfp's
    targets it is assumed (ops/sfu/measured.py), or None for a form of no SFU primitive:
    'rcp: measured on sm_75 (ptx-math); assumed on sm_80 sm_86 sm_89 sm_90 sm_100'."""
    from .ops import sfu
    from .ops.sfu import measured
    if spelling.split(".", 1)[0] not in _SFU_OPCODES or _parse_form(spelling).family != "sfu":
        return None
    prims = sfu.primitives_of(spelling)
    tabs = [t for t in sfu.recorded.tables() if t.form == spelling]
    if tabs and not prims:
        return ("; ".join(t.provenance() for t in tabs),
                {"computed": True, "tables": [{"target": t.target, "gpu": t.gpu, "date": t.date}
                                              for t in tabs]})
    if not prims:
        return "not computed: no public model of its primitive", {"computed": False}
    texts, doc = [], {}
    for p in prims:
        m = measured.PRIMITIVES[p]
        if p not in sfu.modeled_primitives(spelling):
            texts.append(f"{p}: not computed yet (measured on {m.measured[-1]} by {m.source})")
            doc[p] = {"computed": False, "measured": list(m.measured), "source": m.source}
            continue
        on = [t for t in sfu.TARGETS if measured.is_measured(p, t)]
        assumed = measured.assumed_on(p, sfu.TARGETS)
        texts.append(f"{p}: measured on {', '.join(on)} ({m.source})"
                     + (f"; assumed on {' '.join(assumed)}" if assumed else ""))
        doc[p] = {"computed": True, "measured": list(m.measured), "source": m.source,
                  "assumed": assumed}
    return "; ".join(texts), doc


_SHAPE = re.compile(r"\.m(\d+)n(\d+)k(\d+)(?=\.|$)")


def _steps(ns):
    """A sorted list of integers as '8' / '{8,16}' / '{8..256 step 8}' /
    '{8,16,24,32..256 step 16}': runs of four or more in steps folded."""
    if len(ns) == 1:
        return str(ns[0])
    parts, i = [], 0
    while i < len(ns):
        j = i + 1
        if j < len(ns):
            step = ns[j] - ns[i]
            while j + 1 < len(ns) and ns[j + 1] - ns[j] == step:
                j += 1
        if j - i >= 3:
            parts.append(f"{ns[i]}..{ns[j]} step {step}")
            i = j + 1
        else:
            parts.append(str(ns[i]))
            i += 1
    return "{" + ",".join(parts) + "}"


def _shapes_summary(shapes):
    """The shapes of one matrix form, N runs folded per (M, K): 'm64n{8..256 step 8}k16'."""
    by = {}
    for m, n, k in shapes:
        by.setdefault((m, k), set()).add(n)
    return ", ".join(f"m{m}n{_steps(sorted(ns))}k{k}" for (m, k), ns in sorted(by.items()))


def _types_summary(types):
    """tcgen05's descriptor types (d.a.b[.scale]) of one form: a product written per position
    ('{f16,f32}.{e4m3,e5m2}.e4m3') where they are one, else each."""
    cols = [list(dict.fromkeys(t[i] for t in types)) for i in range(len(types[0]))]
    n = 1
    for c in cols:
        n *= len(c)
    if n == len(set(types)):
        return ".".join(c[0] if len(c) == 1 else "{" + ",".join(c) + "}" for c in cols)
    return " ".join(".".join(t) for t in types)


def _grouped(rows):
    """The listed forms with the matrix ones folded: one line per matrix spelling less its
    shape (tcgen05.mma: per PTX spelling, its descriptor's shapes and types summarized), each
    (form, PTX, target, section, summary); the other forms as they are, summary ''."""
    out, groups = [], {}
    for s, v, t, sec, _ in rows:
        m = _SHAPE.search(s)
        if m is None:
            out.append((s, v, t, sec, ""))
            continue
        shape = tuple(int(x) for x in m.groups())
        head, tail = s[:m.start()], s[m.end():]
        if s.startswith("tcgen05."):
            key, types = (head, v, t, sec), tuple(tail.lstrip(".").split("."))
        else:
            key, types = (head + ".{shape}" + tail, v, t, sec), None
        g = groups.get(key)
        if g is None:
            g = groups[key] = ([], [], [s])
            out.append(key)
        g[0].append(shape)
        if types is not None and types not in g[1]:
            g[1].append(types)
    lines = []
    for r in out:
        if len(r) == 5:
            lines.append(r)
            continue
        shapes, types, first = groups[r]
        if len(shapes) == 1 and not r[0].startswith("tcgen05."):
            lines.append((first[0],) + r[1:] + ("",))      # one shape: the spelling itself
            continue
        summary = _shapes_summary(shapes)
        if types:
            summary += "; types " + _types_summary(types)
        lines.append(r + (summary,))
    return lines


def cmd_list(args, out):
    rows = _forms()
    if args.pattern:
        rows = [r for r in rows if all(_matches(p, r) for p in args.pattern)]
    if not rows:
        raise CliError(f"no form matches {' '.join(args.pattern)!r}")
    models = {r[0]: _sfu_model(r[0]) for r in rows}
    if args.json:
        json.dump([{"spelling": s, "min_ptx": v, "min_target": t, "section": sec,
                    **({"model": models[s][1]} if models[s] else {})}
                   for s, v, t, sec, _ in rows], out, indent=2)
        out.write("\n")
        return 0
    lines = [r[:4] + ("",) for r in rows] if args.all else _grouped(rows)
    # the last column: a matrix form's shapes (folded), an SFU form's model (where its
    # primitive was measured); no form is both
    shapes = any(r[4] for r in lines)
    model = any(models.get(r[0]) for r in lines)
    lines = [r[:4] + (r[4] or (models.get(r[0]) or ("",))[0],) for r in lines]
    w = max(len(r[0]) for r in lines)
    head = " / ".join(x for x, on in (("shapes", shapes), ("model", model)) if on)
    out.write(f"{'form':<{w}}  PTX   target   section" + (f"      {head}" if head else "")
              + "\n")
    for s, v, t, sec, summary in lines:
        out.write(f"{s:<{w}}  {v:<4}  {t:<7}  {sec:<11}  {summary}".rstrip() + "\n")
    n = len(rows)
    foot = f"{n} form{'s' if n != 1 else ''}"
    if len(lines) != n:
        foot += (f" on {len(lines)} line{'s' if len(lines) != 1 else ''} (the matrix forms' "
                 "shapes folded; --all lists each)")
    out.write(foot + "\n")
    return 0


# --- verify -----------------------------------------------------------------------------------

def cmd_verify(args, out):
    """Hand everything after 'verify' to ptxfp.hw.main (main() routes here before argparse, so
    that the harness's own options and --help reach it untouched)."""
    try:
        from . import hw
        hw_main = hw.main
    except Exception as e:                        # ImportError, or a broken optional dependency
        raise CliError(f"the hardware harness (ptxfp.hw) is not available: {e}") from None
    argv = list(args.args)
    try:
        params = inspect.signature(hw_main).parameters
    except (TypeError, ValueError):
        params = {}
    rc = hw_main(argv, prog=f"{PROG} verify") if "prog" in params else hw_main(argv)
    return int(rc or 0)


# --- gen / ver / sweep: verify another implementation (ptxfp.conformance) ---------------------

_GEN_EPILOG = """\
Writes one vector per line in Berkeley TestFloat's layout: the source operands in PTX order,
then ptxfp's destination bits, as upper-case hex (4 digits for .f16/.bf16, 8 for .f32 and the
packed types) separated by one space; '#' lines are the header (form, ptxfp version, policy).
Level 1: every combination of the special and boundary values, ptxfp's targeted cases (ties,
double-rounding witnesses, cancellation, subnormal and overflow boundaries), then -n random
vectors (default 100,000); level 2: the special values with their neighbours, 5,000,000 random.
Written in chunks to a temporary file renamed at the end (-o - or no -o: standard output).

examples:
  ptxfp gen fma.rn.bf16 -o fma_bf16.txt
  ptxfp gen cvt.rn.f16.f32 --level 2 -n 100000000 -o cvt.txt
  ptxfp gen add.f32.bf16 --seed 7 | head
"""

_VER_EPILOG = """\
Each line: the operands in PTX order, then the implementation's result, in hex ('#' lines and
blank lines are skipped): a gen file whose last column the testbench replaced with its result.
Prints each mismatch class with its first witnesses (line, operands, expected, got), then a
summary.  Exit status: 0 all agree, 1 some differ, 2 a malformed file or command line.

examples:
  ptxfp ver fma.rn.bf16 results.txt
  my_sim < fma_bf16.txt | ptxfp ver fma.rn.bf16 -
"""

_SWEEP_EPILOG = """\
The implementation: --impl MODULE:FUNC, a Python function f(*operands) -> results over NumPy
arrays of bits (operands in PTX order); or --lib PATH.so:SYMBOL, a C function
  void f(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *out, size_t n)
(uint32_t for .f32 and packed operands/results; --lib-kind elementwise: uint16_t f(a, b, c)).
Runs on Dask: a LocalCluster of --workers N processes (default: one per core), or the cluster
at --scheduler tcp://host:8786; without Dask ('pip install ptxfp[sweep]') in this process.
--checkpoint DIR records each finished chunk: the same command resumes an interrupted sweep.
Exit status: 0 all agree, 1 some differ, 2 a user error.

examples:
  ptxfp sweep fma.rn.bf16 --impl mysim:fma_bf16 --random 100000000 --workers 8
  ptxfp sweep add.rn.f16 --lib ./libfpu.so:add_f16 --exhaustive --checkpoint ck/
  ptxfp sweep fma.rn.f16 --lib ./libfpu.so:fma_f16 --lib-kind elementwise --exhaustive \\
        --scheduler tcp://10.0.0.5:8786 --checkpoint /shared/ck_fma_f16
"""


def cmd_gen(args, out):
    from .conformance import write_file
    n = write_file(args.spelling, args.output, level=args.level, n=args.n, seed=args.seed)
    if args.output not in (None, "-"):
        print(f"{PROG}: wrote {n} vectors to {args.output}", file=sys.stderr)
    return 0


def cmd_ver(args, out):
    from .conformance import verify_file
    report = verify_file(args.spelling, args.file)
    out.write(report.format("line", limit=args.witnesses))
    return 0 if report.ok else 1


def cmd_sweep(args, out):
    from .conformance import sweep
    if args.random is None and not args.exhaustive:
        raise CliError("sweep: give --exhaustive or --random N")
    if args.workers is not None and args.workers < 0:
        raise CliError("--workers takes a count >= 0")
    report = sweep(args.spelling, args.impl, lib=args.lib, lib_kind=args.lib_kind,
                   exhaustive=args.exhaustive, random=args.random, seed=args.seed,
                   chunk=args.chunk, workers=args.workers, scheduler=args.scheduler,
                   checkpoint=args.checkpoint, progress=not args.quiet,
                   note=lambda m: print(f"{PROG}: note: {m}", file=sys.stderr))
    out.write(report.format("vector", limit=args.witnesses))
    return 0 if report.ok else 1


def _add_conformance_parsers(sub, fmt):
    g = sub.add_parser("gen", help="write TestFloat-style test vectors for a form",
                       description="Write test vectors (operands and ptxfp's result) for one "
                       "form.", epilog=_GEN_EPILOG, formatter_class=fmt)
    g.add_argument("spelling", metavar="SPELLING", help="e.g. fma.rn.bf16, cvt.rn.f16.f32")
    g.add_argument("--level", type=int, choices=(1, 2), default=1, help="1 (default) or 2")
    g.add_argument("-n", type=int, metavar="N", help="random vectors after the targeted ones")
    g.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    g.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    g.set_defaults(fn=cmd_gen)

    v = sub.add_parser("ver", help="check a file of results against ptxfp",
                       description="Check an implementation's results (operands and result "
                       "per line) against ptxfp.", epilog=_VER_EPILOG, formatter_class=fmt)
    v.add_argument("spelling", metavar="SPELLING")
    v.add_argument("file", metavar="FILE", help="results file, or - for stdin")
    v.add_argument("--witnesses", type=int, default=3, metavar="K",
                   help="witnesses shown per class (default 3)")
    v.set_defaults(fn=cmd_ver)

    s = sub.add_parser("sweep", help="compare an implementation with ptxfp over a sweep",
                       description="Compare a Python function or a C library with ptxfp over "
                       "every vector or N random ones, on Dask.", epilog=_SWEEP_EPILOG,
                       formatter_class=fmt)
    s.add_argument("spelling", metavar="SPELLING")
    who = s.add_mutually_exclusive_group(required=True)
    who.add_argument("--impl", metavar="MODULE:FUNC", help="a Python function over arrays")
    who.add_argument("--lib", metavar="PATH.so:SYMBOL", help="a C function in a library")
    s.add_argument("--lib-kind", choices=("array", "elementwise"), default="array",
                   help="the C function's signature (default array)")
    what = s.add_mutually_exclusive_group()
    what.add_argument("--exhaustive", action="store_true", help="every operand combination")
    what.add_argument("--random", type=int, metavar="N", help="targeted + N random vectors")
    s.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    s.add_argument("--chunk", type=int, metavar="N", help="vectors per task")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="local Dask worker processes (0: this process; default: cores)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler's address")
    s.add_argument("--checkpoint", metavar="DIR", help="record finished chunks; resume")
    s.add_argument("--witnesses", type=int, default=3, metavar="K",
                   help="witnesses shown per class (default 3)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    s.set_defaults(fn=cmd_sweep)


# --- the parser -------------------------------------------------------------------------------

_MAIN_EPILOG = """\
examples:
  ptxfp eval fma.rn.bf16 0x3F82 0x3FA0 0x0001      # the double-rounding witness: 0x3fa3
  ptxfp eval add.f16x2 1.0f16,2.0f16 0.5f16,0.25f16
  ptxfp eval cvt.rn.bf16x2.f32 1.0f32 3.0f32
  echo 'fma.rn.oob.bf16' | ptxfp check - --target sm_80 --version 8.0
  echo 'fma.rn.bf16 d, a, b, c;' | ptxfp run - --set a=0x3F82 b=0x3FA0 c=0x0001
  ptxfp list bf16 fma
  ptxfp gen add.rn.f16 -n 10 | head

'ptxfp COMMAND --help' explains each.
"""

_EVAL_EPILOG = """\
operands, in PTX source order (destination left out):
  0x3c00 / 15360        bits, hex or decimal
  1.5f16 2.0bf16 1e-3f32 -inff16 nanbf16 2.0f64
                        a float literal with its format as suffix (rounded to nearest even)
  0f3F800000            PTX's hex float (32-bit)
  1.0f16,2.0f16         a packed .f16x2/.bf16x2 pair: lane 0 (bits [15:0]) first
mixed forms take the .f32 operand c as 0x... or 1.0f32; cvt's .f32 sources likewise.

examples:
  ptxfp eval add.f16 0x3c00 0x4000
  ptxfp eval fma.rn.bf16 0x3F82 0x3FA0 0x0001
  ptxfp eval fma.rn.relu.f16x2 1.0f16,-2.0f16 1.0f16,1.0f16 0.5f16,0.5f16
  ptxfp eval fma.rz.sat.f32.f16 0.5f16 0.5f16 0.75f32
  ptxfp eval cvt.rn.satfinite.f16.f32 1e6f32
  ptxfp eval cvt.f32.bf16 0x3fc0 --json
SFU forms (.approx, div.full) take --target (default sm_75); where their primitive is assumed
on it, not measured, a note says so on standard error:
  ptxfp eval ex2.approx.f32 0.5f32 --target sm_90
matrix forms take @FILE.npy operands (A, B, C, then the scale factors of the block-scaled
kinds) or --seed N, and --target (sm_80, sm_90, sm_100 ...):
  ptxfp eval mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 --seed 1
  ptxfp eval wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 @a.npy @b.npy @c.npy
"""

_CHECK_EPILOG = """\
prints one line per finding, FILE:LINE:COL: SEVERITY: MESSAGE [RULE], then one summary line:
  FILE: 2 errors, 0 warnings; 23 instructions: 2 modeled by ptxfp and checked, 21 not modeled
-q prints the errors only; -v adds how many instructions of each name are not modeled, -vv one
line per such instruction.  An opcode that is no PTX instruction at all (fmaa, ADD) is an error;
one that PTX has but ptxfp does not model (ld, mma, tcgen05.alloc ...) is only counted.
exit status: 1 when any finding is an error, 0 otherwise (2: the command itself failed).

examples:
  ptxfp check kernel.ptx
  ptxfp check kernel.ptx --target sm_80 --version 7.0
  ptxfp check kernel.ptx --ptxas 13.0   # as CUDA 13.0's ptxas (PTX ISA up to 9.0)
  echo 'fma.rn.oob.relu.bf16x2' | ptxfp check - --target sm_90 --version 8.1
  ptxfp check kernel.ptx -q             # errors only
  ptxfp check kernel.ptx -v             # and the instructions not modeled, per name
  ptxfp check kernel.ptx --json
"""

_RUN_EPILOG = """\
Runs a snippet, or the one .entry of a module (--entry NAME picks one), over --threads
threads.  Every register (or entry parameter) the program reads before writing needs a value:
  --set REG=VALUE [VALUE ...]   one VALUE for all threads, or one per thread
VALUEs are read as for 'ptxfp eval' (0x3c00, 1.5f16, 1.0f16,2.0f16 ...).  ld/st address one flat
little-endian memory: --memory SIZE (that many zero bytes: decimal 4096 or hex 0x1000) or
--memory FILE (its bytes).  --set NAME=@FILE.npy reads one value a thread from a .npy file.
--grid and --block launch a grid (X[,Y[,Z]] each); loops, divergence, bar.sync, .shared/.local
memory, shfl.sync, vote.sync and atomics run as on the GPU (docs/interpreter.md).  Many
threads: --out FILE.npz writes the registers (--reg NAME, default all) and memory ranges
(--mem START:LEN); the table is printed only when it is small.  The instructions it runs
(besides every form 'ptxfp list' shows):
{ops}

examples:
  echo 'fma.rn.bf16 d, a, b, c;' | ptxfp run - --set a=1.015625bf16 b=1.25bf16 c=0x0001
  echo 'cvt.rn.f16.f32 h, f;' | ptxfp run - --set f=1.0f32 2.0f32 3.0f32 --json
  ptxfp run axpy.ptx --grid 4 --block 256 --memory mem.bin --set axpy_param_0=1024 \\
        axpy_param_1=2.0f32 axpy_param_2=256 axpy_param_3=4352 --out y.npz --mem 4352:4096
  ptxfp run kernel.ptx --entry f16_scalar --memory 4096 --threads 4 \\
        --set f16_scalar_param_0=0 f16_scalar_param_1=256 f16_scalar_param_2=512 \\
        --set f16_scalar_param_3=1024 f16_scalar_param_4=4
"""

_LIST_EPILOG = """\
examples:
  ptxfp list                 # every form with the PTX ISA version and target it needs
  ptxfp list bf16 fma        # the forms whose spelling contains every word given
  ptxfp list add.f16         # the form of any legal spelling (here add.rn.f16)
  ptxfp list 'fma.*.relu.*'  # a glob over the spellings
  ptxfp list tcgen05         # one line per tcgen05.mma spelling, its shapes and types folded
  ptxfp list tcgen05 --all   # every shape and type, one spelling a line (as eval takes them)
  ptxfp list cvt --json
the matrix forms (mma.sync, wgmma.mma_async, tcgen05.mma) are listed one line per spelling
less its shape, their shapes summarized ('m64n{8..256 step 8}k16'; tcgen05.mma: per PTX
spelling, with the instruction descriptor's types); --all and --json list every spelling.
"""

_VERIFY_EPILOG = """\
Compares ptxfp with a real GPU (needs an NVIDIA GPU and CuPy); every option is the hardware
harness's own: 'ptxfp verify --help' shows them when the harness is installed.
"""


def _eval_ops():
    """The opcodes eval computes (the instruction table's)."""
    from . import isa
    return ", ".join(sorted(isa.OPCODES))


def _run_ops():
    """The instructions the interpreter runs, wrapped for the epilog."""
    import textwrap
    from .ptx import interp
    ops = getattr(interp, "_COMPILERS", None)
    names = ", ".join(sorted(ops)) if ops else "see docs/interpreter.md"
    return textwrap.fill(names, 94, initial_indent="  ", subsequent_indent="  ")


def build_parser():
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog=PROG, description="ptxfp: a bit-exact model of NVIDIA PTX half- and "
                "mixed-precision floating-point arithmetic.", epilog=_MAIN_EPILOG,
                formatter_class=fmt)
    from . import __version__
    p.add_argument("--version", action="version", version=f"ptxfp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    e = sub.add_parser("eval", help="compute one instruction on operands",
                       description="Compute one instruction and print the result bits and "
                       "value per lane: every form 'ptxfp list' shows (" + _eval_ops() + ").",
                       epilog=_EVAL_EPILOG, formatter_class=fmt)
    e.add_argument("spelling", metavar="SPELLING", help="e.g. fma.rn.relu.bf16x2")
    e.add_argument("operands", metavar="OPERAND", nargs="*", help="source operands")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.add_argument("--seed", type=int, metavar="N",
                   help="matrix forms: draw A, B, C (and scale factors) at random")
    e.add_argument("--target", metavar="sm_XX",
                   help="matrix forms: the architecture whose tensor cores compute D; SFU "
                   "forms (.approx, div.full): the GPU whose sequence and primitive compute "
                   "d (default sm_75)")
    e.add_argument("--out", metavar="FILE.npz",
                   help="matrix forms: save A, B, C, D (and scale factors) to a .npz file")
    e.set_defaults(fn=cmd_eval)

    c = sub.add_parser("check", help="check PTX as ptxas would",
                       description="Check the instructions ptxfp models in a PTX file, snippet "
                       "or spelling as ptxas would (CUDA 13.5 unless --ptxas names another "
                       "release).", epilog=_CHECK_EPILOG,
                       formatter_class=fmt)
    c.add_argument("file", metavar="FILE", help="a PTX file, or - for stdin")
    c.add_argument("--target", metavar="sm_XX", help="override or supply .target")
    c.add_argument("--version", metavar="X.Y", help="override or supply .version")
    c.add_argument("--ptxas", metavar="R", default=None,
                   help="the CUDA release whose .version/.target rules apply, 12.0 to 13.5 "
                        "(default 13.5)")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.add_argument("-q", "--errors-only", action="store_true",
                   help="print the errors only, no summary")
    c.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: the pairs ptxas fuses, the SFU primitives assumed on the target and "
                   "the count of instructions not modeled per name; -vv: one line each")
    c.set_defaults(fn=cmd_check)

    r = sub.add_parser("run", help="run PTX over threads and print the registers",
                       description="Execute PTX over a grid of threads and print (or --out) "
                       "the registers.",
                       epilog=_RUN_EPILOG.replace("{ops}", _run_ops()), formatter_class=fmt)
    r.add_argument("file", metavar="FILE", help="a PTX file, or - for stdin")
    r.add_argument("--set", metavar="REG=VALUE", nargs="+", action="extend", default=[],
                   help="an input register or parameter; more VALUEs give one per thread")
    r.add_argument("--threads", type=int, metavar="N", help="the number of threads")
    r.add_argument("--memory", metavar="SIZE|FILE", help="memory for ld/st")
    r.add_argument("--entry", metavar="NAME", help="the function to run in a module")
    r.add_argument("--grid", metavar="X[,Y[,Z]]", help="blocks in the grid (default 1)")
    r.add_argument("--block", metavar="X[,Y[,Z]]", help="threads in a block")
    r.add_argument("--shared-bytes", type=int, default=0, metavar="N",
                   help="dynamic (extern) .shared bytes a block")
    r.add_argument("--max-steps", type=int, default=1_000_000, metavar="N",
                   help="stop after N instructions, each counted once for its group of "
                   "threads (a loop that never ends)")
    r.add_argument("--max-work", type=int, default=500_000_000, metavar="N",
                   help="stop after N thread-instructions, each instruction counted for every "
                   "thread that runs it (a runaway launch over a big grid stops in seconds)")
    r.add_argument("--target", dest="mma_target", metavar="SM",
                   help="the target whose numerics the run follows: mma.sync's tensor cores, the SFU "
                   "forms and ptxas' contractions (default: the module's .target)")
    r.add_argument("--out", metavar="FILE.npz", help="write the results to a .npz file")
    r.add_argument("--reg", metavar="NAME", action="append", default=[],
                   help="with --out: a register to write (default: all)")
    r.add_argument("--mem", metavar="START:LEN", action="append", default=[],
                   help="with --out: a memory range to write")
    r.add_argument("--json", action="store_true", help="print JSON")
    r.set_defaults(fn=cmd_run)

    ls = sub.add_parser("list", help="list the modeled forms and what they need",
                        description="List every instruction form ptxfp models, with the PTX "
                        "ISA version and target it needs.", epilog=_LIST_EPILOG,
                        formatter_class=fmt)
    ls.add_argument("pattern", metavar="WORD", nargs="*",
                    help="keep the forms WORD names: a spelling, a glob, or a part")
    ls.add_argument("--all", action="store_true",
                    help="one line per spelling: every shape of the matrix forms (and of "
                    "tcgen05.mma every descriptor type) on its own line")
    ls.add_argument("--json", action="store_true",
                    help="print JSON (every spelling, as --all)")
    ls.set_defaults(fn=cmd_list)

    v = sub.add_parser("verify", help="compare ptxfp with a GPU (ptxfp.hw)", add_help=False,
                       description="Run the GPU conformance harness (ptxfp.hw).",
                       epilog=_VERIFY_EPILOG, formatter_class=fmt)
    v.add_argument("args", nargs=argparse.REMAINDER)
    v.set_defaults(fn=cmd_verify)
    _add_conformance_parsers(sub, fmt)
    return p


def _parse(parser, argv):
    """The command line, with options anywhere after the command (``eval SPELLING --json
    OPERANDS``): the top level picks the command, its own parser reads the rest with
    ``parse_intermixed_args``."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    k = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if k != 0 or argv[k] not in sub.choices:
        return parser.parse_args(argv)          # --help, --version, a bad command
    cmd = sub.choices[argv[k]]
    if any(isinstance(a, argparse._SubParsersAction) or a.nargs == argparse.REMAINDER
           for a in cmd._actions):
        return parser.parse_args(argv)
    args = cmd.parse_intermixed_args(argv[k + 1:])
    args.command = argv[k]
    return args


def main(argv=None):
    """The ``ptxfp`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout
    parser = build_parser()
    try:
        if argv[:1] == ["verify"]:
            return cmd_verify(argparse.Namespace(args=argv[1:]), out)
        args = _parse(parser, argv)
        if args.command is None:
            parser.print_help(out)
            return 2
        if getattr(args, "threads", None) is not None and args.threads < 1:
            raise CliError("--threads takes a count >= 1")
        return args.fn(args, out)
    except SystemExit as e:                       # --help / --version
        return e.code if isinstance(e.code, int) else 0
    except (PtxfpError, ValueError) as e:
        if os.environ.get("PTXFP_DEBUG", "") not in ("", "0"):
            raise
        msg = " ".join(str(e).split()) or type(e).__name__
        if "--json" in argv:
            # with --json the failure is JSON too (on stdout, exit status 2)
            src = e.__cause__ if isinstance(e.__cause__, PtxfpError) else e
            doc = {"error": {"message": msg, "kind": type(src).__name__,
                             "rule": getattr(src, "rule", None)}}
            m = re.match(r"(.*?):(\d+):(\d+): (.*)", msg)
            if m and not m.group(1)[:1].isdigit():
                doc["error"].update(file=m.group(1), line=int(m.group(2)), col=int(m.group(3)))
            json.dump(doc, out, indent=2)
            out.write("\n")
            return 2
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:                       # e.g. piped into head
        return 0
    except (MemoryError, RecursionError) as e:    # past every size check: still one line
        what = "out of memory" if isinstance(e, MemoryError) else "input nested too deeply"
        print(f"{PROG}: error: {what} (the input asks for more than this machine can hold)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":                        # pragma: no cover
    sys.exit(main())
