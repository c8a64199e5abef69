"""The integer instructions (PTX ISA 9.7.1 integer arithmetic, 9.7.8 logic and shift, 9.7.9.7
prmt): rows of the 'int' family, computed by ptxfp/ops/intops.py.

Spellings and types as ptxas 13.0 takes them (tests/data/ptxas/ops_spellings.jsonl): add/sub on
.u/.s 16/32/64 (``.sat`` on .s32 only: "Modifier '.sat' does not apply to '.u32' type"); mul and
mad with ``.lo``/``.hi``/``.wide`` (``.wide`` on 16/32-bit, a destination twice as wide; mad.hi
``.sat`` on .s32); mul24/mad24 ``.lo``/``.hi`` on .u32/.s32; div/rem/min/max on .u/.s; abs/neg
on .s; and/or/xor/not/cnot on .b16/.b32/.b64; shl on .b, shr on .b/.u/.s (a .u32 shift amount);
popc/clz (.u32 result), brev on .b32/.b64; bfind{.shiftamt} on .u32/.u64/.s32/.s64 (.u32
result); bfe on .u/.s 32/64; bfi on .b32/.b64; prmt.b32 with its modes.
"""

from __future__ import annotations

from .rows import Operand, Row, target, version

SEC = {"add": "9.7.1.1", "sub": "9.7.1.2", "mul": "9.7.1.3", "mad": "9.7.1.4",
       "mul24": "9.7.1.5", "mad24": "9.7.1.6", "sad": "9.7.1.7", "div": "9.7.1.8",
       "rem": "9.7.1.9", "abs": "9.7.1.10", "neg": "9.7.1.11", "min": "9.7.1.12",
       "max": "9.7.1.13", "popc": "9.7.1.14", "clz": "9.7.1.15", "bfind": "9.7.1.16",
       "brev": "9.7.1.18", "bfe": "9.7.1.19", "bfi": "9.7.1.20", "and": "9.7.8.1",
       "or": "9.7.8.2", "xor": "9.7.8.3", "not": "9.7.8.4", "cnot": "9.7.8.5",
       "shl": "9.7.8.8", "shr": "9.7.8.9", "prmt": "9.7.9.7", "lop3": "9.7.8.6",
       "shf": "9.7.8.7", "dp4a": "9.7.1.23", "dp2a": "9.7.1.24"}
US = tuple(f"{k}{w}" for k in "us" for w in (16, 32, 64))
BITS = ("b16", "b32", "b64")
PRMT_MODES = ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")


def _row(op: str, t: str, names: str, req: frozenset[str] = frozenset(),
         mods: frozenset[str] = frozenset(), types_of: dict[str, str] | None = None) -> Row:
    ty = types_of or {}
    ops = tuple(Operand(n, ty.get(n, t), ty.get(n, t)) for n in names)
    return Row("int", op, (t,), (), False, mods | req, req, ops, (), SEC[op])


def _wide(t: str) -> str:
    return t[0] + str(2 * int(t[1:]))


def _rows() -> tuple[Row, ...]:
    F = frozenset
    rows = []
    for t in US:
        sat = F({"sat"}) if t == "s32" else F()
        for op in ("add", "sub"):
            rows.append(_row(op, t, "dab", mods=sat))
        for sel in ("lo", "hi", "wide"):
            if sel == "wide" and t.endswith("64"):
                continue
            d = {"d": _wide(t)} if sel == "wide" else {}
            rows.append(_row("mul", t, "dab", F({sel}), types_of=d))
            dc = {"d": _wide(t), "c": _wide(t)} if sel == "wide" else {}
            rows.append(_row("mad", t, "dabc", F({sel}),
                             F({"sat"}) if (sel == "hi" and t == "s32") else F(), dc))
        for op in ("div", "rem", "min", "max"):
            rows.append(_row(op, t, "dab"))
        if t[0] == "s":
            rows.append(_row("abs", t, "da"))
            rows.append(_row("neg", t, "da"))
        rows.append(_row("shr", t, "dab", types_of={"b": "u32"}))
    for t in ("u32", "s32"):
        for sel in ("lo", "hi"):
            rows.append(_row("mul24", t, "dab", F({sel})))
            rows.append(_row("mad24", t, "dabc", F({sel})))
    for t in BITS:
        for op in ("and", "or", "xor"):
            rows.append(_row(op, t, "dab"))
        rows.append(_row("not", t, "da"))
        rows.append(_row("cnot", t, "da"))
        rows.append(_row("shl", t, "dab", types_of={"b": "u32"}))
        rows.append(_row("shr", t, "dab", types_of={"b": "u32"}))
    for t in ("b32", "b64"):
        rows.append(_row("popc", t, "da", types_of={"d": "u32"}))
        rows.append(_row("clz", t, "da", types_of={"d": "u32"}))
        rows.append(_row("brev", t, "da"))
        rows.append(_row("bfi", t, "dabce", types_of={"c": "u32", "e": "u32"}))
    for t in ("u32", "u64", "s32", "s64"):
        rows.append(_row("bfind", t, "da", mods=F({"shiftamt"}), types_of={"d": "u32"}))
        rows.append(_row("bfe", t, "dabc", types_of={"b": "u32", "c": "u32"}))
    for t in US:
        rows.append(_row("sad", t, "dabc"))
    relu = (version("Feature 'min.relu' requires PTX ISA .version 8.0 or later", (8, 0)),
            target("Feature 'min.relu' requires .target sm_90 or higher", 90))
    for op in ("min", "max"):
        r = _row(op, "s32", "dab", F({"relu"}))
        rows.append(Row("int", op, ("s32",), (), False, F({"relu"}), F({"relu"}), r.operands,
                        tuple((k, v, m.replace("min.relu", f"{op}.relu")) for k, v, m in relu),
                        SEC[op]))
    # lop3.b32 d, a, b, c, immLut (an immediate: the truth table of ta=0xF0, tb=0xCC, tc=0xAA)
    rows.append(Row(
        "int", "lop3", ("b32",), (), False, F(), F(),
        tuple(Operand(n, "b32", "b32") for n in "dabc") + (Operand("lut", "b32", "imm.b32"),),
        (), SEC["lop3"]))
    for sel in ("l", "r"):
        for mode in ("wrap", "clamp"):
            rows.append(_row("shf", "b32", "dabc", F({sel, mode}), types_of={"c": "u32"}))
    for a in ("u32", "s32"):
        for b in ("u32", "s32"):
            c = "s32" if "s32" in (a, b) else "u32"
            ty = {"d": c, "a": a, "b": b, "c": c}
            ops4 = tuple(Operand(n, ty[n], ty[n]) for n in "dabc")
            rows.append(Row("int", "dp4a", (a, b), (), False, F(), F(), ops4, (), SEC["dp4a"]))
            for sel in ("lo", "hi"):
                rows.append(Row("int", "dp2a", (a, b), (), False, F({sel}), F({sel}), ops4, (),
                                SEC["dp2a"]))
    rows.append(_row("prmt", "b32", "dabc"))
    for m in PRMT_MODES:
        rows.append(_row("prmt", "b32", "dabc", F({m})))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
