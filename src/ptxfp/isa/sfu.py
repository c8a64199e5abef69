"""The SFU forms (PTX ISA 9.7.3.8-9.7.3.22): ``.approx`` ex2, lg2, rcp, rsqrt, sqrt, sin, cos,
tanh and div, ``div.full``, on .f32 (and rcp/rsqrt .approx on .f64, ex2/tanh on the half types).
Computed by ``ptxfp.ops.sfu`` per target (the MUFU primitives and the sequences ptxas wraps
around them); the forms without a model (tanh, the half-type and .f64 primitives) parse and
are refused by ``compute`` with one line naming the form and target.

What ptxas takes of these instructions is data here too (measured with ptxas 13.5 V13.5.37,
``python tools/ptxas_probe.py --groups sfu``; tests/data/ptxas/13.5/spellings_sfu.jsonl, held by
tests/test_check_sfu.py): per (opcode, type) the modes (``.approx`` or a rounding modifier) with
``.ftz`` illegal, optional or required (``FORMS``), and the .version/.target requirements with
ptxas' messages (``REQUIRES``), which the rows below carry and ``check()`` reads
(ptx/sfu.py's ``verdict``) for every spelling, computed or not.  ptxas 13.0 decides the same.
"""

from __future__ import annotations

from typing import Union

from .rows import Operand, Row

Require = tuple[str, Union[tuple[int, int], int], str]

#: the instruction names of this table
OPCODES = ("tanh", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos")
SFU_ROUNDINGS = ("rn", "rz", "rm", "rp")

#: (op, type) -> {mode: .ftz}: the mode is 'approx' or a rounding modifier; .ftz is 'no'
#: (illegal), 'opt' or 'req' with that mode
FORMS: dict[tuple[str, str], dict[str, str]] = {}
for _ty in ("f16", "f16x2", "bf16", "bf16x2", "f32"):
    FORMS[("tanh", _ty)] = {"approx": "no"}
FORMS[("ex2", "f16")] = FORMS[("ex2", "f16x2")] = {"approx": "no"}
FORMS[("ex2", "bf16")] = FORMS[("ex2", "bf16x2")] = {"approx": "req"}
FORMS[("ex2", "f32")] = {"approx": "opt"}
FORMS[("lg2", "f32")] = {"approx": "opt"}
FORMS[("rcp", "f32")] = {"approx": "opt", **{r: "opt" for r in SFU_ROUNDINGS}}
FORMS[("rcp", "f64")] = {"approx": "req", **{r: "opt" for r in SFU_ROUNDINGS}}
FORMS[("sqrt", "f32")] = {"approx": "opt", **{r: "opt" for r in SFU_ROUNDINGS}}
FORMS[("sqrt", "f64")] = {r: "no" for r in SFU_ROUNDINGS}
FORMS[("rsqrt", "f32")] = FORMS[("rsqrt", "f64")] = {"approx": "opt"}
FORMS[("sin", "f32")] = FORMS[("cos", "f32")] = {"approx": "opt"}


def _v(feature: str, v: tuple[int, int]) -> Require:
    return ("version", v, f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later")


def _t(feature: str, sm: int) -> Require:
    return ("target", sm, f"Feature '{feature}' requires .target sm_{sm} or higher")


def _bf(ty: str) -> tuple[Require, ...]:
    """What a .bf16/.bf16x2 operand itself needs (ptxas names the type as a feature)."""
    extra = (_t(".bf16x2", 75),) if ty == "bf16x2" else ()
    return extra + (_t("." + ty, 80), _v("." + ty, (7, 0)))


#: (op, type) -> requirements (kind, threshold, ptxas' message); none for the rest (every
#: .version and .target of the probe)
REQUIRES: dict[tuple[str, str], tuple[Require, ...]] = {
    ("tanh", "f16"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "f16x2"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "f32"): (_t("tanh", 75), _v("tanh", (7, 0))),
    ("tanh", "bf16"): _bf("bf16") + (_t("tanh", 75), _v("tanh", (7, 0)),
                                     _t("tanh.bf16", 90), _v("tanh.bf16", (7, 8))),
    ("tanh", "bf16x2"): _bf("bf16x2") + (_t("tanh", 75), _v("tanh", (7, 0)),
                                         _t("tanh.bf16x2", 90), _v("tanh.bf16x2", (7, 8))),
    ("ex2", "f16"): (_t("ex2.f16/f16x2", 75), _v("ex2.f16/f16x2", (7, 0))),
    ("ex2", "f16x2"): (_t("ex2.f16/f16x2", 75), _v("ex2.f16/f16x2", (7, 0))),
    ("ex2", "bf16"): _bf("bf16") + (_t("ex2.bf16", 90), _v("ex2.bf16", (7, 8))),
    ("ex2", "bf16x2"): _bf("bf16x2") + (_t("ex2.bf16x2", 90), _v("ex2.bf16x2", (7, 8))),
}

#: ptxas' message for a rounding modifier on a form that takes none: it names the rounding
#: 'rounding' on the half types of tanh/ex2, where it reads the half-precision form
ROUNDING_MESSAGE = {("tanh", "f16"), ("tanh", "f16x2"), ("ex2", "f16"), ("ex2", "f16x2")}

#: ptxas' message where a form requires .ftz and the spelling has none
FTZ_REQUIRED = {
    ("ex2", "bf16"): ".ftz modifier required for instruction 'ex2.bf16'",
    ("ex2", "bf16x2"): ".ftz modifier required for instruction 'ex2.bf16x2'",
    ("rcp", "f64"): "'.ftz' modifier required for instruction 'rcp.approx.f64'",
}


#: sin/cos ``.approx.ftz.2pi.f32`` (ptxas 13.5, PTX ISA 9.5; measured with V13.5.37 over
#: sm_50-sm_120): the argument in turns of 2pi, ``.ftz`` required (the message below), any
#: order of the modifiers; ``.2pi`` elsewhere is "Illegal modifier '.2pi' for instruction
#: 'ex2'", twice "Duplicate .2pi modifier".  ptxas 13.0 cannot read the token at all
#: ("Parsing error near 'pi': syntax error": ptx/releases.py UNREAD).  Computed: ptxas 13.5
#: emits MUFU.SIN/COS of the operand itself (tools/sfu_sequences.py).
TWO_PI: dict[tuple[str, str], tuple[Require, ...]] = {
    ("sin", "f32"): (_v(".2pi", (9, 5)),), ("cos", "f32"): (_v(".2pi", (9, 5)),)}
#: ptxas' message where ``.2pi`` is written without ``.ftz``
TWO_PI_FTZ = ".ftz modifier required for instruction '{op}' with modifier '.2pi'"


SECTION = {"div": "9.7.3.8", "rcp": "9.7.3.9", "sqrt": "9.7.3.11", "rsqrt": "9.7.3.12",
           "sin": "9.7.3.14", "cos": "9.7.3.15", "lg2": "9.7.3.16", "ex2": "9.7.3.17",
           "tanh": "9.7.3.18"}


def _rows() -> tuple[Row, ...]:
    F = frozenset
    rows = []

    def ops(t: str, n: str = "da") -> tuple[Operand, ...]:
        return tuple(Operand(x, t, t) for x in n)
    for op in ("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos"):
        rows.append(Row("sfu", op, ("f32",), (), False, F({"approx", "ftz"}), F({"approx"}),
                        ops("f32"), (), SECTION[op]))
    for op in ("sin", "cos"):           # .2pi: the argument in turns (MUFU alone, no FMUL)
        rows.append(Row("sfu", op, ("f32",), (), False, F({"approx", "ftz", "2pi"}),
                        F({"approx", "ftz", "2pi"}), ops("f32"), TWO_PI[(op, "f32")],
                        SECTION[op]))
    for mod in ("approx", "full"):
        rows.append(Row("sfu", "div", ("f32",), (), False, F({mod, "ftz"}), F({mod}),
                        ops("f32", "dab"), (), SECTION["div"]))
    rows.append(Row("sfu", "rcp", ("f64",), (), False, F({"approx", "ftz"}), F({"approx", "ftz"}),
                    ops("f64"), (), SECTION["rcp"]))
    rows.append(Row("sfu", "rsqrt", ("f64",), (), False, F({"approx", "ftz"}), F({"approx"}),
                    ops("f64"), (), SECTION["rsqrt"]))
    rows.append(Row("sfu", "tanh", ("f32",), (), False, F({"approx"}), F({"approx"}), ops("f32"),
                    REQUIRES[("tanh", "f32")], SECTION["tanh"]))
    for t in ("f16", "f16x2"):
        for op in ("ex2", "tanh"):
            rows.append(Row("sfu", op, (t,), (), False, F({"approx"}), F({"approx"}), ops(t),
                            REQUIRES[(op, t)], SECTION[op]))
    for t in ("bf16", "bf16x2"):
        rows.append(Row("sfu", "ex2", (t,), (), False, F({"approx", "ftz"}), F({"approx", "ftz"}),
                        ops(t), REQUIRES[("ex2", t)], SECTION["ex2"]))
        rows.append(Row("sfu", "tanh", (t,), (), False, F({"approx"}), F({"approx"}), ops(t),
                        REQUIRES[("tanh", t)], SECTION["tanh"]))
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
