"""The module's .global and .const variables: laid out once, in declaration order at their
.align, with their initializers encoded into bytes as ptxas takes them: a scalar, or a
``{...}`` list (nested lists for arrays of arrays, read row by row; fewer values than elements
leave the rest zero; ``x[] = {...}`` sized by its list), integer and floating-point constants
(rounded to nearest even into a float type), and the address of another variable (``x`` its
address in its own space, ``generic(x)`` its generic one)."""

from __future__ import annotations

import numpy as np

from ...errors import InterpError
from ..reader import parse_number
from .base import WIDTH
from .state import GLOBAL_VARS, WINDOW

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}   # (f16: see _number)


def layout(prog):
    """(name -> (space, address in the space, bytes), .global bytes, .const bytes,
    [(space, offset, bytes data)]) of the module `prog` (a reader.Program)."""
    where, size, decls = {}, {"global": 0, "const": 0}, []
    if prog.kind != "module":
        return where, 0, 0, []
    for name, count, d in prog.variables.entries():
        if count is not None or d.space not in ("global", "const"):
            continue
        esize = max(WIDTH.get(d.type, 8) // 8, 1) * d.vector
        n = 1
        for k in d.array:
            n *= k
        if 0 in d.array:
            if d.init is None:
                raise InterpError(f"'{name}': an array of unknown size needs an initializer",
                                  d.line, d.col, rule="variable")
            n = max(1, sum(1 for t in d.init if t[0] in ("num", "word")))
            inner = 1
            for k in d.array:
                inner *= k or 1
            n = -(-n // inner) * inner
        align = d.align or esize
        if align <= 0 or align & (align - 1):
            raise InterpError(f"'{name}': .align {align} is not a power of two", d.line, d.col,
                              rule="align")
        off = -(-size[d.space] // align) * align
        size[d.space] = off + esize * n
        if size[d.space] > (1 << 28):
            raise InterpError(f"'{name}': the module's .{d.space} variables take over 256 MiB",
                              d.line, d.col, rule="variable")
        addr = off + (GLOBAL_VARS if d.space == "global" else 0)
        where[name] = (d.space, addr, esize * n)
        decls.append((name, d, off, esize, n))
    initial = []
    for name, d, off, esize, n in decls:
        if d.init is not None:
            initial.append((d.space, off, _encode(name, d, esize, n, where)))
    return where, size["global"], size["const"], initial


def _bad(d, tok, why):
    line, col = (tok[2], tok[3]) if tok is not None else (d.line, d.col)
    return InterpError(f"initializer of '{why[0]}': {why[1]}", line, col, rule="initializer")


def _encode(name, d, esize, n, where):
    """The bytes of a variable's initializer (see the module docstring)."""
    t = d.type
    w = WIDTH.get(t, 8)
    ew = esize // d.vector
    vals, i, toks = [], 0, d.init
    while i < len(toks):
        kind, text = toks[i][0], toks[i][1]
        if text in ("{", "}", ","):
            i += 1
            continue
        neg = False
        if text in ("-", "+"):
            neg = text == "-"
            i += 1
            if i >= len(toks) or toks[i][0] != "num":
                raise _bad(d, toks[i - 1], (name, "a sign needs a number after it"))
            kind, text = toks[i][0], toks[i][1]
        tok = toks[i]
        if kind == "num":
            vals.append(_number(d, tok, ("-" if neg else "") + text, t, w, name))
            i += 1
        elif kind == "word":
            if text == "generic" and i + 3 < len(toks) and toks[i + 1][1] == "(":
                target, gen = toks[i + 2], True
                if toks[i + 3][1] != ")":
                    raise _bad(d, tok, (name, "write generic(variable)"))
                i += 4
            else:
                target, gen = tok, False
                i += 1
            hit = where.get(target[1])
            if hit is None:
                raise _bad(d, target, (name, f"'{target[1]}' is not a .global or .const "
                                             "variable of the module"))
            space, addr, _ = hit
            if gen and space == "const":
                addr += WINDOW["const"]
            vals.append(addr & ((1 << w) - 1))
        else:
            raise _bad(d, tok, (name, f"cannot read '{text}' (numbers, {{...}} lists and "
                                      "variable names are taken)"))
    count = n * d.vector
    if len(vals) > count:
        raise _bad(d, toks[0] if toks else None,
                   (name, f"{len(vals)} values for {count} elements"))
    out = np.zeros(count, dtype=f"<u{max(ew, 1)}" if ew in (1, 2, 4, 8) else "<u1")
    out[:len(vals)] = vals
    return out.tobytes()


def _number(d, tok, text, t, w, name):
    kind, v = parse_number(text)
    if v is None:
        raise _bad(d, tok, (name, f"cannot read the number '{text}'"))
    if t in _FLOATS or t == "bf16":
        if kind == "hexfloat":
            bits = 32 if text.lstrip("-")[1] in "fF" else 64
            x = np.array([v], f"<u{bits // 8}").view("<f4" if bits == 32 else "<f8")[0]
        elif kind == "float":
            x = np.array([v], "<u8").view("<f8")[0]
        else:
            x = float(v)
        if t in ("f16", "bf16"):                  # one rounding, f64 -> the type (RNE)
            from ...core.formats import FORMATS
            from ...ops.kernels import round_f64_array
            from ...policy import current
            b = np.array([x], np.float64)
            return int(round_f64_array(b, FORMATS[t].code, current().canonical_nan(t))[0])
        return int(np.array([x], _FLOATS[t]).view(f"<u{w // 8}")[0])
    if kind in ("hexfloat", "float"):
        raise _bad(d, tok, (name, f"the floating-point constant '{text}' cannot initialize a "
                                  f".{t} variable"))
    return v & ((1 << w) - 1)
