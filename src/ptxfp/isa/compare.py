"""The comparison and selection rows: setp, set and selp (PTX ISA 9.7.6.1-3, and 9.7.7.2 for
setp on the half types).

One row per comparison and Boolean operator (exactly one of each is written; the table's rows
say "may" and "must", so a choice of one is a row each).  Measured with ptxas 13.0
(tests/data/ptxas/ops_spellings.jsonl, tools/ops_probe.py):

- .b16/.b32/.b64 compare with ``.eq .ne`` only, .s types with ``.eq .ne .lt .le .gt .ge``, .u
  types with those and ``.lo .ls .hi .hs``, float types with ``.eq .ne .lt .le .gt .ge`` and the
  unordered ``.equ .neu .ltu .leu .gtu .geu .num .nan`` ("Mismatch between instruction type and
  comparison qualifier"); no 8-bit types ("Unexpected instruction types");
- ``.ftz`` on .f32 and .f16/.f16x2 only; ``.and .or .xor`` take a fourth operand c (.pred);
- setp on .f16x2/.bf16x2 writes two predicates ``p|q`` (lane 0 to p, lane 1 to q): the rows
  name p only, ``dispatch.CORE2`` computes both;
- set writes ``.u32``/``.s32`` (all ones for true) or ``.f32`` (1.0) from any compared type but
  the 8-bit and half ones (9.7.6.1); 9.7.7.1 adds an .f16/.bf16 result (1.0) from any of those
  or .f16, and .u16/.s16/.u32/.s32 (all ones) or .f16x2/.bf16x2 results (per lane) from the half
  types; ``.ftz`` goes with an .f16/.f16x2/.f32 compared type; selp takes the 16/32/64-bit
  integer types, .f32 and .f64.
"""

from __future__ import annotations

from .rows import Operand, Require, Row, target, version

SECTION = {"set": "9.7.6.1", "setp": "9.7.6.2", "selp": "9.7.6.3", "set.half": "9.7.7.1",
           "setp.half": "9.7.7.2"}
ORDERED = ("eq", "ne", "lt", "le", "gt", "ge")
UNORDERED = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
UNSIGNED = ("lo", "ls", "hi", "hs")
BOOL = ("and", "or", "xor")
INT_TYPES = tuple(f"{k}{w}" for k in "bus" for w in (16, 32, 64))
HALF = ("f16", "f16x2", "bf16", "bf16x2")

#: the comparison whose result is the negation of each (NaN included): !(a lt b) == (a geu b)
NEGATION = {"eq": "neu", "ne": "equ", "lt": "geu", "le": "gtu", "gt": "leu", "ge": "ltu",
            "equ": "ne", "neu": "eq", "ltu": "ge", "leu": "gt", "gtu": "le", "geu": "lt",
            "num": "nan", "nan": "num", "lo": "hs", "ls": "hi", "hi": "ls", "hs": "lo"}


def cmps(t: str) -> tuple[str, ...]:
    """The comparison operators ptxas takes on type ``t``."""
    if t[0] == "b" and t != "bf16" and not t.startswith("bf16"):
        return ("eq", "ne")
    if t[0] == "s":
        return ORDERED
    if t[0] == "u":
        return ORDERED + UNSIGNED
    return ORDERED + UNORDERED


def _half_needs(t: str) -> tuple[Require, ...]:
    if t.startswith("bf16"):
        return (version(f"Feature 'setp.{t}' requires PTX ISA .version 7.8 or later", (7, 8)),
                target(f"Feature 'setp.{t}' requires .target sm_90 or higher", 90))
    f = "f16 arithemetic and compare instructions"
    return (version(f"Feature '{f}' requires PTX ISA .version 4.2 or later", (4, 2)),
            target(f"Feature '{f}' requires .target sm_53 or higher", 53))


def _bf16_set(d: str, t: str) -> tuple[Require, ...]:
    f = "set." + (t if t.startswith("bf16") else d)
    return (version(f"Feature '{f}' requires PTX ISA .version 7.8 or later", (7, 8)),
            target(f"Feature '{f}' requires .target sm_90 or higher", 90))


def _v65(d: str, t: str) -> tuple[Require, ...]:
    return (version("Feature 'half precision floating point set instruction with integer "
                    "result' requires PTX ISA .version 6.5 or later", (6, 5)),)


def _rows() -> tuple[Row, ...]:
    rows = []
    for t in INT_TYPES + ("f32", "f64") + HALF:
        ftz = frozenset({"ftz"}) if t in ("f32", "f16", "f16x2") else frozenset()
        needs = _half_needs(t) if t in HALF else ()
        sec = SECTION["setp.half"] if t in HALF else SECTION["setp"]
        for c in cmps(t):
            for b in (None,) + BOOL:
                req = frozenset({c} | ({b} if b else set()))
                ops: tuple[Operand, ...] = (Operand("p", "pred", "pred"), Operand("a", t, t),
                                            Operand("b", t, t))
                if b:
                    ops += (Operand("c", "pred", "pred"),)
                rows.append(Row("compare", "setp", (t,), (), False, req | ftz, req, ops, needs,
                                sec))
    for d in ("u32", "s32", "f32"):
        for t in INT_TYPES + ("f32", "f64"):
            ftz = frozenset({"ftz"}) if t == "f32" else frozenset()
            for c in cmps(t):
                for b in (None,) + BOOL:
                    req = frozenset({c} | ({b} if b else set()))
                    ops2: tuple[Operand, ...] = (Operand("d", d, d), Operand("a", t, t),
                                                 Operand("b", t, t))
                    if b:
                        ops2 += (Operand("c", "pred", "pred"),)
                    rows.append(Row("compare", "set", (d, t), (), False, req | ftz, req, ops2, (),
                                    SECTION["set"]))
    # 9.7.7.1: set with a half-type destination or source
    f16 = _half_needs("f16")
    pairs: list[tuple[str, str, tuple[Require, ...]]] = []
    for st in INT_TYPES + ("f16", "f32", "f64"):
        pairs.append(("f16", st, f16))
        pairs.append(("bf16", st, _bf16_set("bf16", st)))
    for d in ("u16", "s16", "u32", "s32"):
        pairs.append((d, "f16", f16 + _v65(d, "f16")))
        pairs.append((d, "bf16", _bf16_set(d, "bf16")))
    for d in ("f16x2", "u32", "s32"):
        pairs.append((d, "f16x2", f16 + (_v65(d, "f16x2") if d != "f16x2" else ())))
    for d in ("bf16x2", "u32", "s32"):
        pairs.append((d, "bf16x2", _bf16_set(d, "bf16x2")))
    for d, t, needs in pairs:
        # .ftz by the compared type (ptxas: "Illegal modifier '.ftz'" on set.ftz.f16.s32)
        ftz = frozenset({"ftz"}) if t in ("f16", "f16x2", "f32") and not d.startswith("bf16") \
            else frozenset()
        for c in cmps(t):
            for b in (None,) + BOOL:
                req = frozenset({c} | ({b} if b else set()))
                ops3: tuple[Operand, ...] = (Operand("d", d, d), Operand("a", t, t),
                                             Operand("b", t, t))
                if b:
                    ops3 += (Operand("c", "pred", "pred"),)
                rows.append(Row("compare", "set", (d, t), (), False, req | ftz, req, ops3,
                                needs, SECTION["set.half"]))
    for t in INT_TYPES + ("f32", "f64"):
        rows.append(Row("compare", "selp", (t,), (), False, frozenset(), frozenset(),
                        (Operand("d", t, t), Operand("a", t, t), Operand("b", t, t),
                         Operand("c", "pred", "pred")), (), SECTION["selp"]))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
