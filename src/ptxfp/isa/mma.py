"""The matrix multiply-accumulate rows: ``mma.sync.aligned``, ``wgmma.mma_async.sync.aligned``
and ``tcgen05.mma`` (family 'mma').

Sources: PTX ISA 9.0 manual, 9.7.14.5.14 (mma), 9.7.15.5.2 (wgmma.mma_async), 9.7.16.10.9
(tcgen05.mma) for the spellings, shapes and types; ptxas 13.0 for the requirements and their
messages (tools/mma_probe.py, tests/data/ptxas/mma.jsonl): every row's ``requires`` is the
list of features its tokens name, each with the .version ptxas asks for and the targets it
takes ('target': sm_N or higher; 'only:...': the listed targets, "not supported on .target").

One row is one spelling class: one (shape, types) of mma.sync with its layout pairs and
optional .satfinite; one (N, types) of wgmma; one (.cta_group, .kind, scale variant, types)
of tcgen05.mma.  tcgen05.mma's PTX spelling has no types and no shape (the instruction
descriptor, a runtime operand, holds them): its rows carry them for ptxfp
(``Matrix.types_written`` is False) and ptxfp's notation writes them after the spelling,
``tcgen05.mma.cta_group::1.kind::f16.m128n256k16.f32.bf16.bf16`` (spelling.mma_form).  The
tcgen05 shapes follow the manual's table of valid shapes (dense, no .ws); ptxas cannot
check them (they are in the descriptor).

The rows are computed by ``ptxfp.mma`` (the tensor package), not by ``execute``: the family
stays out of ``isa.all_spellings()`` (the scalar forms) and its spellings are listed by
``spellings()`` here.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import Iterator

from .rows import Matrix, Operand, Require, Row, illegal, only, per_ptx, per_release, target, version

SECTION = {"mma": "9.7.14.5.14", "wgmma.mma_async": "9.7.15.5.2", "tcgen05.mma": "9.7.16.10.9"}

#: the targets of the sm_100 family ('a': this chip; 'f': the family), and of sm_120;
#: sm_107a/sm_107f (ptxas 13.5, PTX 9.4) take what the family takes (tests/data/ptxas/13.5/
#: mma.jsonl), tcgen05's kind::i8 excepted
SM100_A = ("sm_100a", "sm_101a", "sm_103a", "sm_107a", "sm_110a")
SM100_F = ("sm_100f", "sm_101f", "sm_103f", "sm_107f", "sm_110f")
SM120 = ("sm_120a", "sm_120f", "sm_121a", "sm_121f")

F16C = ("f16", "f32")
F8 = ("e4m3", "e5m2")
F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
I8 = ("s8", "u8")
I4 = ("s4", "u4")

#: bits of one element in its fragment register (fp6/fp4 of kind::f8f6f4 sit in 8-bit
#: containers; mxf4/mxf4nvf4 pack e2m1 two to a byte: MX4 below)
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "e4m3": 8,
        "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}

#: every token of a matrix spelling that is not a type, in canonical order
LAYOUTS = ("row", "col")


def _shape_token(s: tuple[int, int, int]) -> str:
    return "m%dn%dk%d" % s


def _v(feature: str, v: tuple[int, int]) -> Require:
    return version(f"Feature '{feature}' requires PTX ISA .version {v[0]}.{v[1]} or later", v)


def _t(feature: str, sm: int, kind: str = "Feature") -> Require:
    return target(f"{kind} '{feature}' requires .target sm_{sm} or higher", sm)


def _only(feature: str, targets: tuple[str, ...], kind: str = "Feature") -> Require:
    return only(f"{kind} '{feature}' not supported on .target '{{target}}'", targets)


# ---------------------------------------------------------------------------------------------
# mma.sync.aligned

def _shape_need(shape: tuple[int, int, int], v: tuple[int, int], sm: int | None,
                what: str = "") -> tuple[Require, ...]:
    name = "." + _shape_token(shape) + what
    return (_v(name, v),) + ((_t(name, sm),) if sm is not None else ())


#: the shape features of mma and what ptxas asks for them (the f16 m16n8k8 needs less than
#: the bf16/tf32 one: 6.5/sm_75 against 7.0/sm_80)
_MMA_SHAPE = {(8, 8, 4): ((6, 4), 70), (16, 8, 8): ((7, 0), 80), (16, 8, 16): ((7, 0), 80),
              (16, 8, 4): ((7, 0), 80), (16, 8, 32): ((7, 0), 80), (16, 8, 64): ((7, 0), 80),
              (8, 8, 16): ((6, 5), 75), (8, 8, 32): ((6, 5), 75), (8, 8, 128): ((7, 0), 75),
              (16, 8, 128): ((7, 0), 80), (16, 8, 256): ((7, 0), 80)}
_MMA = _v("mma", (6, 4))
#: mma.sync came with sm_70: below it ptxas 13.0 and 13.5 say so for every form (measured with
#: .target sm_50/sm_60 under -arch sm_75), besides the shape's own target
_MMA_T = _t("mma", 70)
_BF16 = (_v(".bf16", (7, 0)), _t(".bf16", 80))
_TF32 = (_v(".tf32", (7, 0)), _t(".tf32", 80))
_FP8 = (_v("mma with FP8 floating point type", (8, 4)), _t("mma with FP8 floating point type", 89))
_FP6 = (_v("mma with with FP6/FP4 floating point type", (8, 7)),        # ptxas' words (sic)
        _only("mma with with FP6/FP4 floating point type", SM120, "Instruction"))
_BLOCK = (_v("mma with block scale", (8, 7)), _only("mma with block scale", SM120, "Instruction"),
          _v(".block_scale", (8, 6)), _only(".block_scale", SM100_A + SM100_F + SM120))


def _kind(kind: str) -> tuple[Require, ...]:
    v = (8, 7) if kind == "mxf4nvf4" else (8, 6)
    return (_v(".kind::" + kind, v), _only(".kind::" + kind, SM100_A + SM100_F + SM120))


def _scale_vec(n: int) -> tuple[Require, ...]:
    name = f".scale_vec::{n}X"
    return (_v(name, (8, 7) if n == 4 else (8, 6)), _only(name, SM100_A + SM120))


def _mma_operands(shape: tuple[int, int, int], types: tuple[str, ...],
                  block: bool) -> tuple[Operand, ...]:
    d, a, b, c = types[:4]
    ops: tuple[Operand, ...] = (Operand("d", d, _cls(d)), Operand("a", a, _cls(a)),
                                Operand("b", b, _cls(b)), Operand("c", c, _cls(c)))
    if block:
        ops += (Operand("scale-a-data", "b32", "b32"), Operand("selector-a", "u16", "u16"),
                Operand("scale-b-data", "b32", "b32"), Operand("selector-b", "u16", "u16"))
    return ops


def _cls(ty: str) -> str:
    """The operand class of one fragment register of elements of ``ty``."""
    return {"f32": "f32", "f64": "f64", "f16": "f16x2", "s32": "b32"}.get(ty, "b32")


def _mma_row(shape: tuple[int, int, int], types: tuple[str, ...], requires: tuple[Require, ...],
             layouts: tuple[tuple[str, str], ...] = (("row", "col"),),
             mods: frozenset[str] = frozenset(),
             required: frozenset[str] = frozenset(), kind: str | None = None,
             scale_vecs: tuple[str, ...] = (), scale_default: int | None = None,
             stype: str | None = None, bitop: str | None = None) -> Row:
    base = frozenset({"sync", "aligned"})
    return Row("mma", "mma", types, (), False, base | mods | required, base | required,
               _mma_operands(shape, types, stype is not None), requires, SECTION["mma"],
               matrix=Matrix((shape,), layouts, kind, scale_vecs, scale_default, stype, bitop))


def _mma_rows() -> list[Row]:
    rows: list[Row] = []
    need = {s: _shape_need(s, *vt) for s, vt in _MMA_SHAPE.items()}
    need16 = _shape_need((16, 8, 8), (6, 5), 75)          # m16n8k8 on f16
    four = tuple(product(LAYOUTS, LAYOUTS))
    # f16: m8n8k4 takes every layout and an f32 result from f16 accumulators
    for d, c in (("f16", "f16"), ("f32", "f16"), ("f32", "f32")):
        rows.append(_mma_row((8, 8, 4), (d, "f16", "f16", c), (_MMA, _MMA_T) + need[(8, 8, 4)],
                             layouts=four))
    for shape in ((16, 8, 8), (16, 8, 16)):
        for d in F16C:
            rows.append(_mma_row(shape, (d, "f16", "f16", d), (_MMA, _MMA_T) + (
                need16 if shape == (16, 8, 8) else need[shape])))
    for shape in ((16, 8, 8), (16, 8, 16)):
        rows.append(_mma_row(shape, ("f32", "bf16", "bf16", "f32"),
                             (_MMA, _MMA_T) + need[shape] + _BF16))
    for shape in ((16, 8, 4), (16, 8, 8)):
        rows.append(_mma_row(shape, ("f32", "tf32", "tf32", "f32"),
                             (_MMA, _MMA_T) + need[shape] + _TF32))
    # fp8 (sm_89): an f16 accumulator and the k16 shape came with PTX 8.7
    for shape in ((16, 8, 16), (16, 8, 32)):
        for a, b, d in product(F8, F8, F16C):
            req: tuple[Require, ...] = _FP8
            if shape == (16, 8, 16):
                req += (_v("mma with FP8 floating point type and .m16n8k16 shape", (8, 7)),)
            if d == "f16":
                req += (_v("mma with FP8 floating point type and FP16 accumulation", (8, 7)),)
            rows.append(_mma_row(shape, (d, a, b, d), req))
    # sm_120: kind::f8f6f4, and the block-scaled kinds
    for a, b, d in product(F8F6F4, F8F6F4, F16C):
        # ptxas names the FP8 feature when both are fp8, the FP6/FP4 one otherwise
        req = _kind("f8f6f4") + (_FP8 if a in F8 and b in F8 else _FP6)
        rows.append(_mma_row((16, 8, 32), (d, a, b, d), req, required=frozenset({"kind::f8f6f4"}),
                             kind="f8f6f4"))
    for a, b in product(F8F6F4, F8F6F4):
        rows.append(_mma_row((16, 8, 32), ("f32", a, b, "f32", "ue8m0"),
                             _BLOCK + _kind("mxf8f6f4") + _scale_vec(1),
                             mods=frozenset({"scale_vec::1X"}),
                             required=frozenset({"kind::mxf8f6f4", "block_scale"}),
                             kind="mxf8f6f4", scale_vecs=("", "scale_vec::1X"), scale_default=1,
                             stype="ue8m0"))
    rows.append(_mma_row((16, 8, 64), ("f32", "e2m1", "e2m1", "f32", "ue8m0"),
                         _BLOCK + _kind("mxf4") + _scale_vec(2), mods=frozenset({"scale_vec::2X"}),
                         required=frozenset({"kind::mxf4", "block_scale"}), kind="mxf4",
                         scale_vecs=("", "scale_vec::2X"), scale_default=2, stype="ue8m0"))
    for st, n in (("ue8m0", 2), ("ue4m3", 4), ("ue8m0", 4)):
        new: tuple[Require, ...] = ()
        if (st, n) == ("ue8m0", 4):
            # ptxas 13.5 takes .scale_vec::4X with .ue8m0 from PTX 9.1; 13.0 refuses it
            new = (per_release(_v("mma with .scale_vec::4X and .ue8m0 scale type", (9, 1)),
                               since="13.1"),) + tuple(
                per_release(illegal(f"Illegal modifier '.{t}' for instruction 'mma' with type "
                                    "'.ue8m0'"), until="13.0")
                for t in ("kind::mxf4nvf4", "scale_vec::4X"))
        rows.append(_mma_row((16, 8, 64), ("f32", "e2m1", "e2m1", "f32", st),
                             _BLOCK + _kind("mxf4nvf4") + _scale_vec(n) + new,
                             required=frozenset({"kind::mxf4nvf4", "block_scale",
                                                 f"scale_vec::{n}X"}),
                             kind="mxf4nvf4", scale_vecs=(f"scale_vec::{n}X",), scale_default=n,
                             stype=st))
    # f64
    for shape in ((8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)):
        v, sm = ((7, 0), 80) if shape == (8, 8, 4) else ((7, 8), 90)
        rows.append(_mma_row(shape, ("f64",) * 4, (_MMA, _MMA_T) + _shape_need(shape, v, sm,
                                                                         " with double types")))
    # integers (exact; .satfinite clamps the s32 result)
    for shapes, tys in ((((8, 8, 16), (16, 8, 16), (16, 8, 32)), I8),
                        (((8, 8, 32), (16, 8, 32), (16, 8, 64)), I4)):
        for shape, a, b in product(shapes, tys, tys):
            req = (_MMA, _MMA_T) + tuple(need[shape])
            for t in dict.fromkeys((a, b)):
                if t in I4:
                    req += (_t("." + t, 75),)
            rows.append(_mma_row(shape, ("s32", a, b, "s32"), req, mods=frozenset({"satfinite"})))
    for shape, op in product(((8, 8, 128), (16, 8, 128), (16, 8, 256)), ("xor", "and")):
        req = (_MMA, _MMA_T) + need[shape] + (_t(".b1", 75),)
        if op == "and":
            req += (version("Modifier '.and' on 'mma' requires PTX ISA .version 7.1 or later",
                            (7, 1)),
                    target("Modifier '.and' on 'mma' requires .target sm_80 or higher", 80))
        rows.append(_mma_row(shape, ("s32", "b1", "b1", "s32"), req,
                             required=frozenset({op, "popc"}), bitop=op))
    return rows


def min_target(row: Row) -> str:
    """The lowest target a matrix row assembles for: the first of its 'only:' targets (all
    of them agree, at sm_N or higher where a 'target' requirement says so), else sm_N."""
    sm = row.min_sm
    lists = [set(k.split(":", 1)[1].split(",")) for k, _, _ in row.requires
             if k.startswith("only:")]
    if not lists:
        # mma.sync came with sm_70 (manual 9.7.14.5.14; every row's requirement _MMA_T)
        return "sm_%d" % max(sm, 70 if row.opcode == "mma" else sm)
    ok = set.intersection(*lists)
    order = [t for t in SM100_A + SM100_F + SM120 + ("sm_90a",) if t in ok]
    best = sorted(order, key=lambda t: (int(t[3:].rstrip("af")), t[-1] != "a"))
    return best[0] if best else sorted(ok)[0]


# ---------------------------------------------------------------------------------------------
# wgmma.mma_async.sync.aligned (sm_90a)

#: N of the float forms: 8 to 256 in steps of 8; of the integer and b1 forms: 8, 16, 24,
#: then steps of 16 (ptxas: "Illegal matrix shape '.m64n40k32'")
WGMMA_N = tuple(range(8, 257, 8))
WGMMA_N_INT = (8, 16, 24) + tuple(range(32, 257, 16))


def _wgmma_req(what: str, v: tuple[int, int] = (8, 0)) -> tuple[Require, ...]:
    return (_v("WGMMA with " + what, v),
            _only("wgmma.mma_async with " + what, ("sm_90a",), "Instruction"))


def _wgmma_row(n: int, k: int, types: tuple[str, str, str], req: tuple[Require, ...],
               mods: frozenset[str] = frozenset(), required: frozenset[str] = frozenset(),
               bitop: str | None = None) -> Row:
    d, a, b = types
    base = frozenset({"sync", "aligned"})
    ops: tuple[Operand, ...] = (Operand("d", d, _cls(d)), Operand("a", a, "b64"),
                                Operand("b", b, "b64"), Operand("scale-d", "pred", "pred"))
    if a in ("f16", "bf16", "tf32", "e4m3", "e5m2"):
        ops += (Operand("imm-scale-a", "s32", "s32"), Operand("imm-scale-b", "s32", "s32"))
    if a in ("f16", "bf16"):
        ops += (Operand("imm-trans-a", "s32", "s32"), Operand("imm-trans-b", "s32", "s32"))
    return Row("mma", "wgmma.mma_async", types, (), False, base | mods | required,
               base | required, ops, req, SECTION["wgmma.mma_async"],
               matrix=Matrix(((64, n, k),), (), None, (), None, None, bitop))


def _wgmma_rows() -> list[Row]:
    rows: list[Row] = []
    fl = _wgmma_req("floating point types")
    for n in WGMMA_N:
        for d in F16C:
            rows.append(_wgmma_row(n, 16, (d, "f16", "f16"), fl))
        rows.append(_wgmma_row(n, 16, ("f32", "bf16", "bf16"), fl + _BF16))
        rows.append(_wgmma_row(n, 8, ("f32", "tf32", "tf32"), fl + _TF32))
        for d, a, b in product(F16C, F8, F8):
            rows.append(_wgmma_row(n, 32, (d, a, b), _wgmma_req("FP8 types")))
    for n in WGMMA_N_INT:
        for a, b in product(I8, I8):
            req = _wgmma_req("integer types") if a == b \
                else _wgmma_req("mixed integer types", (8, 4))
            rows.append(_wgmma_row(n, 32, ("s32", a, b), req, mods=frozenset({"satfinite"})))
        rows.append(_wgmma_row(n, 256, ("s32", "b1", "b1"), _wgmma_req("boolean type")
                               + (_t(".b1", 75),), required=frozenset({"and", "popc"}),
                               bitop="and"))
    return rows


# ---------------------------------------------------------------------------------------------
# tcgen05.mma (sm_100a)

#: the element types a kind takes (the instruction descriptor picks them): (d, a, b)
TCGEN05_TYPES = {
    "f16": (("f16", "f16", "f16"), ("f32", "f16", "f16"), ("f32", "bf16", "bf16")),
    "tf32": (("f32", "tf32", "tf32"),),
    "f8f6f4": tuple((d, a, b) for d, a, b in product(F16C, F8F6F4, F8F6F4)),
    "i8": tuple(("s32", a, b) for a, b in product(I8, I8)),
    "mxf8f6f4": tuple(("f32", a, b) for a, b in product(F8F6F4, F8F6F4)),
    "mxf4": (("f32", "e2m1", "e2m1"),),
    "mxf4nvf4": (("f32", "e2m1", "e2m1"),),
}
#: K of one tcgen05.mma by kind (dense)
TCGEN05_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64,
             "mxf4nvf4": 64}


def tcgen05_shapes(cta_group: int, kind: str) -> tuple[tuple[int, int, int], ...]:
    """The valid (M, N, K) of a dense tcgen05.mma (the manual's table of shapes): one CTA:
    M 64 and M 128 with N 8..256 step 8 (MMA-Sim 2.1.1 lists the same for kind::f16, tf32,
    f8f6f4: ``isa_tcgen05mma._tcgen05_mn``); a CTA pair: M 128 with N 32..256 step 32, M 256
    with N 16..256 step 16.  The block-scaled kinds take M 128 (one CTA) or 128/256 (a
    pair) with N step 8 / 16."""
    k = TCGEN05_K[kind]
    if cta_group == 1:
        mn = ([(64, n) for n in range(8, 257, 8)] if not kind.startswith("mx") else []) \
            + [(128, n) for n in range(8, 257, 8)]
    else:
        mn = [(128, n) for n in range(32, 257, 32)] + [(256, n) for n in range(16, 257, 16)]
    return tuple((m, n, k) for m, n in mn)


def _tcgen05_rows() -> list[Row]:
    rows: list[Row] = []
    af = SM100_A + SM100_F
    for cg in (1, 2):
        cta = f"cta_group::{cg}"
        common = (_v("tcgen05.mma", (8, 6)), _only("tcgen05.mma", af, "Instruction"),
                  _v("." + cta, (8, 6)), _only("." + cta, af))
        variants: list[tuple[str, str, tuple[Require, ...], int | None, str | None]] = []
        for kind in ("f16", "tf32", "f8f6f4", "i8"):
            kreq: tuple[Require, ...] = (_v(".kind::" + kind, (8, 6)),
                    _only(".kind::" + kind, ("sm_100a", "sm_101a", "sm_110a") if kind == "i8"
                          else af + SM120 if kind == "f8f6f4" else af))
            variants.append((kind, "", kreq, None, None))
        blk = (_v(".block_scale", (8, 6)), _only(".block_scale", af + SM120))
        b16 = (_v(".block16", (8, 8)), _only(".block16", af))
        b32 = (_v(".block32", (8, 8)), _only(".block32", af))
        svs: tuple[tuple[str, int, tuple[Require, ...]], ...]
        for kind, svs in (("mxf8f6f4", (("", 1, b32), ("scale_vec::1X", 1, _scale_vec(1)),
                                        ("block32", 1, b32))),
                          ("mxf4", (("", 2, b32), ("scale_vec::2X", 2, _scale_vec(2)),
                                    ("block32", 2, b32))),
                          ("mxf4nvf4", (("scale_vec::2X", 2, _scale_vec(2)),
                                        ("scale_vec::4X", 4, _scale_vec(4)),
                                        ("block32", 2, b32), ("block16", 4, b16)))):
            for sv, n, sreq in svs:
                if not sv:
                    # the default scale vector: .block32 to ptxas 13.0; ptxas 13.5 names it
                    # '.scale_vec::NX' below PTX 8.8 and '.block32' from 8.8 on
                    sreq = tuple(per_release(r, until="13.0") for r in b32) + tuple(
                        per_release(r, since="13.1") for r in (
                            _scale_vec(n)[0], per_ptx(_scale_vec(n)[1], until=(8, 7)),
                            per_ptx(b32[1], since=(8, 8))))
                for scale in (("ue8m0", "ue4m3") if kind == "mxf4nvf4" and n == 4 else ("ue8m0",)):
                    variants.append((kind, sv, _kind(kind) + blk + sreq, n, scale))
        for kind, sv, kreq, nv, st in variants:
            n = nv or 0
            required = {"kind::" + kind} | ({"block_scale"} if n else set()) \
                | ({sv} if sv else set())
            ops: tuple[Operand, ...] = (Operand("d", "b32", "b32"), Operand("a", "b64", "b64"),
                                        Operand("b", "b64", "b64"), Operand("idesc", "b32", "b32"))
            if n:
                ops += (Operand("scale-a", "b32", "b32"), Operand("scale-b", "b32", "b32"))
            ops += (Operand("enable-input-d", "pred", "pred"),)
            for tys in TCGEN05_TYPES[kind]:
                types = tys + ((st,) if st else ())
                rows.append(Row("mma", "tcgen05.mma", types, (), False,
                                frozenset(required | {cta}), frozenset(required | {cta}),
                                (Operand("d", types[0], "b32"),) + ops[1:],
                                common + kreq, SECTION["tcgen05.mma"],
                                matrix=Matrix(tcgen05_shapes(cg, kind), (), kind,
                                              (sv,), nv, st, None, cg, types_written=False)))
    return rows


ROWS: tuple[Row, ...] = tuple(_mma_rows()) + tuple(_wgmma_rows()) \
    + tuple(_tcgen05_rows())

#: the modifier tokens of the matrix spellings, in canonical order (the manual's syntax:
#: ``mma.sync.aligned.shape.alayout.blayout.kind.block_scale.scale_vec.satfinite`` types
#: ``.bitOp.popc``; ``tcgen05.mma.cta_group.kind.block_scale.scale_vec``)
TOKEN_ORDER: tuple[str, ...] = ("mma_async", "sync", "aligned", "cta_group::1", "cta_group::2") \
    + tuple(dict.fromkeys(r.matrix.kind and "kind::" + r.matrix.kind for r in ROWS
                          if r.matrix and r.matrix.kind)) \
    + ("block_scale", "scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32",
       "satfinite")
#: the tokens written after the types (b1)
TAIL_ORDER = ("xor", "and", "popc")


@lru_cache(maxsize=None)
def shape_tokens(opcode: str | None = None) -> frozenset[str]:
    """Every shape token of the rows (of one opcode)."""
    return frozenset(_shape_token(s) for r in ROWS if opcode in (None, r.opcode)
                     for s in (r.matrix.shapes if r.matrix else ()))


def canonical(row: Row, shape: tuple[int, int, int] | None = None,
              layouts: tuple[str, str] | None = None, mods: frozenset[str] = frozenset(),
              with_types: bool | None = None) -> str:
    """The canonical spelling of a row's form: ``mods`` are the optional tokens written
    (.satfinite, a scale vector); ``with_types`` writes tcgen05's descriptor shape and types
    (ptxfp's notation; default: only where the PTX spelling has them)."""
    assert row.matrix is not None
    mx = row.matrix
    written = (row.required | mods)
    head = [t for t in TOKEN_ORDER if t in written]
    toks = [row.opcode] + (head[:2] if row.opcode != "tcgen05.mma" else [])
    if row.opcode == "tcgen05.mma":
        toks += head
        if with_types:
            toks += [_shape_token(shape or mx.shapes[0])] + list(row.types)
        return ".".join(toks)
    toks += [_shape_token(shape or mx.shapes[0])]
    if mx.layouts:
        toks += list(layouts or mx.layouts[0])
    toks += head[2:] + list(row.types) + [t for t in TAIL_ORDER if t in written]
    return ".".join(toks)


def spellings(opcode: str | None = None) -> Iterator[tuple[Row, str]]:
    """(row, canonical spelling) of every matrix form: every shape, layout pair and optional
    token (tcgen05.mma: every shape its descriptor may name, in ptxfp's notation)."""
    for row in ROWS:
        if opcode is not None and row.opcode != opcode:
            continue
        mx = row.matrix
        assert mx is not None
        opt = sorted(row.modifiers - row.required)
        optional: list[frozenset[str]] = [frozenset()] + [frozenset({o}) for o in opt]
        if row.opcode == "tcgen05.mma":
            for shape in mx.shapes:
                yield row, canonical(row, shape, with_types=True)
            continue
        for shape in mx.shapes:
            for lay in (mx.layouts or (None,)):
                for o in optional:
                    yield row, canonical(row, shape, lay, o)
