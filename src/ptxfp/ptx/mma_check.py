"""What ptxas 13.0 decides about a matrix spelling (mma.sync, wgmma.mma_async, tcgen05.mma):
the rows' requirements (isa/mma.py) where the spelling is legal, else ptxas' own message for
what is wrong (tests/data/ptxas/mma.jsonl, tools/mma_probe.py).  ``check()`` asks
:func:`matrix_verdict` for every instruction whose name is a matrix opcode.
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import SpellingError
from ..isa import mma as _mma
from ..isa.rows import Require, Row
from ..isa.spelling import MATRIX_OPCODES, parse_matrix

__all__ = ["matrix_opcode", "matrix_verdict"]


def matrix_opcode(spelling: str) -> str | None:
    """'mma', 'wgmma.mma_async' or 'tcgen05.mma' when the spelling names one, else None."""
    toks = spelling.split(".")
    for op in MATRIX_OPCODES:
        n = op.count(".") + 1
        if toks[:n] == op.split("."):
            return op
    return None


def _feature(row: Row) -> str:
    """ptxas' name of a wgmma row's instruction ('wgmma.mma_async with FP8 types')."""
    for kind, _, msg in row.requires:
        if kind.startswith("only:") and msg.startswith("Instruction 'wgmma"):
            return msg.split("'")[1]
    return "wgmma.mma_async"


def _ptxas_error(op: str, spelling: str, e: SpellingError) -> str:
    """ptxas' message for a matrix spelling the parser refuses."""
    toks = spelling.split(".")[op.count(".") + 1:]
    tok = (e.token or "").lstrip(".")
    rule = e.rule
    shape = next((t for t in toks if t[:1] == "m" and "n" in t and "k" in t
                  and t.replace("m", "").replace("n", "").replace("k", "").isdigit()), None)
    tys = [t for t in toks if t in _TYPES]
    if rule == "missing-modifier" and "aligned" in str(e) and "required for" in str(e):
        return f".aligned modifier required for instruction '{op}'"
    if rule == "missing-modifier" and "sync" in str(e) and "required for" in str(e):
        return f".sync modifier required for instruction '{op}'"
    if rule == "unknown-modifier":
        return f"Unknown modifier '.{tok}'"
    if rule == "illegal-layout":
        what = "mma with double types" if "f64" in tys else op
        which = "alayout" if "alayout" in str(e) else "blayout"
        return f"Illegal {which} '.{tok}' for instruction '{what}'"
    if op == "mma" and rule in ("illegal-type", "illegal-shape") and shape and len(tys) == 4 \
            and tys[1] == tys[2] == "f16" and tys[0] != tys[3]:
        return (f".dtype must be '.{tys[3]}' when .ctype is '.{tys[3]}' for 'mma' instruction "
                f"with shape '.{shape}'")
    if rule == "illegal-type":
        return f"Unexpected instruction types specified for '{op}'"
    if rule == "illegal-shape":
        if op == "wgmma.mma_async":
            if shape not in _mma.shape_tokens(op):
                return f"Unknown modifier '.{shape}'"
            rows = [r for r in _mma.ROWS if r.opcode == op and r.types == tuple(tys)]
            return (f"Illegal matrix shape '.{shape}' for instruction "
                    f"'{_feature(rows[0]) if rows else op}'")
        return f"Illegal matrix shape '.{shape}' for instruction '{op}'"
    mods = set(toks)
    if "b1" in tys and not ({"xor", "and"} & mods) and op == "mma":
        return f"Unexpected number of operations specified for mma with shape '.{shape}'"
    if "b1" in tys and op == "wgmma.mma_async":
        return (f"Incorrect operations specified for wgmma.mma_async with boolean type with "
                f"shape '.{shape}'")
    kind = next((t for t in toks if t.startswith("kind::")), None)
    sv = next((t for t in toks if t.startswith("scale_vec::")), None)
    if kind == "kind::mxf4nvf4" and sv is None and "block16" not in mods and "block32" not in mods:
        return (".scale_vec_size modifier required for instruction 'mma'" if op == "mma" else
                "Modifier '.kind::mxf4nvf4' requires modifier '.scale_vectorsize' for "
                "instruction 'tcgen05.mma'")
    if kind and sv:
        if op == "tcgen05.mma":
            return f"Modifier '.{kind}' cannot be combined with modifier '.{sv}'"
        if kind == "kind::mxf4":
            return f"Modifier '.{sv}' cannot be combined with modifier '.{kind}'"
        stype = tys[-1] if len(tys) == 5 else None
        if kind == "kind::mxf4nvf4" and stype:
            return f"Illegal modifier '.{kind}' for instruction 'mma' with type '.{stype}'"
        return f"Illegal modifier '.{sv}' for instruction 'mma'"
    return str(e)


_TYPES = frozenset(t for r in _mma.ROWS for t in r.types)


def matrix_verdict(spelling: str) -> tuple[tuple[tuple[str, str], ...], tuple[Require, ...],
                                           Row | None] | None:
    """(errors as (rule, ptxas' message), requirements, row) of one matrix spelling, or None
    where it has a token the rows do not model (tcgen05.mma.ws, mma.sp, .collector_usage:
    check() then treats it as an instruction ptxfp does not model)."""
    op = matrix_opcode(spelling)
    if op is None:
        return None
    try:
        ins = parse_matrix(spelling)
    except SpellingError as e:
        if e.rule == "unknown-modifier":
            return None
        return ((e.rule or "illegal-spelling", _ptxas_error(op, spelling, e)),), (), None
    return (), ins.row.requires, ins.row


#: the vector sizes ptxas takes in an mma.sync operand ("Illegal vector size: 3")
_MMA_VECTOR_SIZES = (1, 2, 4, 8)


@lru_cache(maxsize=4096)
def _operand_plan(spelling: str) -> tuple[str, tuple[int, ...], object, int, int, str]:
    """What the operands of a legal matrix spelling must be: (opcode, the accepted operand
    counts, the fragment vector sizes (mma: d, a, b, c) or the wgmma feature name, the wgmma
    D vector size, its A-in-registers size, the element type of A)."""
    from ..isa.spelling import mma_form
    from ..tensor.fragments import fragment

    ins = parse_matrix(spelling)
    row, op = ins.row, ins.opcode
    mx = row.matrix
    assert mx is not None and ins.shape is not None
    if op == "tcgen05.mma":
        return op, ((7,) if mx.scale_default is not None else (5, 6, 7)), None, 0, 0, ""
    if op == "mma":
        f = mma_form(str(ins))
        sizes = tuple(fragment(f, o).regs for o in "dabc")
        return op, (8 if f.block_scaled else 4,), sizes, 0, 0, f.atype
    m, n, k = ins.shape
    d, a = row.types[0], row.types[1]
    bits = {"f16": 16, "bf16": 16, "tf32": 32}.get(a, 8 if a != "b1" else 1)
    return (op, (), _feature(row), m * n * (16 if d == "f16" else 32) // (128 * 32),
            m * k * bits // (128 * 32), a)


def matrix_operand_errors(spelling: str, operands: list[object]) -> list[tuple[str, str]]:
    """ptxas' complaints about the operands of a legal matrix instruction: their count
    ("Arguments mismatch"), a scalar where a fragment vector belongs ("Vector expected for
    argument N"), a vector of the wrong size ("Argument vector size mismatch", and for mma
    "Illegal vector size: N" past 1, 2, 4, 8).  Register types are not checked (ptxas 13.0
    takes .b32 registers for .f32 fragments)."""
    from .reader import Vec

    op, counts, sizes, want_d, want_a, a = _operand_plan(spelling)

    def vec(o: object) -> int | None:
        return len(o.items) if isinstance(o, Vec) and o.brackets == "{}" else None

    out: list[tuple[str, str]] = []
    if op == "tcgen05.mma":
        if len(operands) not in counts:
            out.append(("operand-count", "Arguments mismatch for instruction 'tcgen05.mma'"))
        return out
    if op == "mma":
        assert isinstance(sizes, tuple)
        if len(operands) not in counts:
            return [("operand-count", "Arguments mismatch for instruction 'mma'")]
        for i, want in enumerate(sizes):
            n = vec(operands[i])
            if n is None:
                out.append(("vector-operand", f"Vector expected for argument {i}"))
                continue
            if n not in _MMA_VECTOR_SIZES:
                out.append(("vector-size", f"Illegal vector size: {n}"))
            if n != want:
                out.append(("vector-size", "Argument vector size mismatch for instruction 'mma'"))
        return list(dict.fromkeys(out))
    # wgmma.mma_async: d {regs}, a-desc or {a regs}, b-desc, scale-d, then the immediates
    a_regs = len(operands) > 1 and vec(operands[1]) is not None
    count = 4 + (2 if a in ("f16", "bf16", "tf32", "e4m3", "e5m2") else 0) \
        + ((1 if a_regs else 2) if a in ("f16", "bf16") else 0)
    if len(operands) != count:
        return [("operand-count", "Arguments mismatch for instruction 'wgmma.mma_async'")]
    nd = vec(operands[0])
    if nd is None:
        out.append(("vector-operand", "Vector expected for argument 0"))
    elif nd != want_d:
        out.append(("vector-size", f"Argument vector size mismatch for instruction '{sizes}'"))
    if a_regs and vec(operands[1]) != want_a:
        out.append(("vector-size", f"Argument vector size mismatch for instruction '{sizes}'"))
    return list(dict.fromkeys(out))
